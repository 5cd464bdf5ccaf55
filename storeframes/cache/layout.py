"""The layout of a cache, as text and as code: where each file goes, its name and its format.

The cache keeps its files in a :class:`~storeframes.cache.stores.Store`: a folder
(:class:`~storeframes.cache.stores.local.LocalStore`, the usual case, described here), a dict in
memory (:class:`~storeframes.cache.stores.memory.MemoryStore`), a bucket
(:class:`~storeframes.cache.stores.bucket.ObjectStore`, for ``s3://bucket/prefix``) or anything
else with the same few operations. Every file goes through the store, so the layout and formats below are the
same wherever the cache lives.

Layout (every file is written to a temporary name and renamed, so a reader never
sees half a file, and every name is unique, so processes sharing the folder never
overwrite each other)::

    <cache_dir>/
      storeframes-cache.json                    the marker: this folder is a storeframes cache
                                                (its format number), written with the first file
      storeframes-coordination.json             how the team sharing the cache coordinates (Redis at an
                                                address without password, or none), written by the first
                                                member that fetches into it (storeframes.cache.coordination_record)
      storeframes-address-key.json              the key of the notification addresses' ids in the events
                                                (random, written once by the first judgement that tells one)
      answers/endpoint=<name>/<entry>.json.zst  the raw answer: one zstd frame holding a line of JSON
                                                (format, canonical request, service, fetched_at, cost,
                                                max_credit_cost, status, the body's size and CRC-32)
                                                then the body's JSON bytes as they arrived
      answers/endpoint=<name>/<entry>.json.gz   the same, of earlier versions (format 1, still read):
                                                gzip JSON of the entry's fields and the parsed result
      index/endpoint=<name>/<entry>.parquet     one row per cell the answer covers (its footer records
                                                the rows of the answer's kept frames, once written)
      index/endpoint=<name>/part-<n>.parquet    the rows of many answers (:meth:`Cache.compact`)
      frames/table=<table>/<entry>.parquet      a flattened frame of one answer, with an ``entry`` column
      frames/table=<table>/part-<n>.parquet     the frames of many answers, a row group per few answers
      ledger/<session>-<n>.parquet              ledger rows of one client session: small files
                                                ``<session>-r<n>`` as requests end, merged into
                                                chunks ``<session>-<chunk>`` (storeframes.credits)
      runs/tracker=<name>/<run>.parquet         one tracker run's row of the run log (storeframes.track),
                                                written when it starts and again when it ends
      events/tracker=<name>/day=<day>.parquet   the events a tracker's alerts found on one day
      digests/tracker=<name>/day=<day>.parquet  a tracker's digest of the day (Markdown, HTML, charts),
                                                kept by the run that finished the day's work

An *entry* is one answer of the service to one request. Its index file is written
last and is what makes the entry visible. ``index``, ``frames``, ``ledger``, ``runs``, ``events`` and ``digests`` are
plain Parquet datasets: ``pl.scan_parquet(f"{cache_dir}/index/**/*.parquet",
hive_partitioning=True)``, DuckDB's ``read_parquet`` or pandas read them as they are,
and every file carries its provenance (endpoint, canonical params, fetched_at, cost,
storeframes version) in its Parquet key-value metadata.

Nothing in the folder holds the API token: requests are keyed by their canonical
parameters, and answers are scrubbed of the token before they are written.

An answer is kept as the bytes that arrived (a cached answer is then read by the same
:func:`~storeframes.json_bodies.parse_answer` as a fresh one, and is the same object), compressed
with zstd (a standard frame: ``zstd -dc <entry>.json.zst`` shows it). Its first line says
whose answer it is; the body follows. An answer made or changed by the client (``body`` None)
is kept as ``{"result": ..., "metadata": {"request": {"params": <echo>}}}``, written by orjson
(by the standard library, losslessly, where orjson cannot: a lone surrogate, a key that is not
text). Index files of format 2 name such answers; an older storeframes (format 1) skips them
as files of a newer format. Frame and ledger files keep format 1: their layout did not change,
and an older version reads them as before.

A file that cannot be read (truncated, corrupt) is set aside as ``<name>.corrupt``,
reported once with a :class:`~storeframes.cache.CacheWarning`, and treated as a miss. A file that cannot
be read for another reason (no permission, a folder where the file should be) is
reported and treated as a miss, and left where it is. Files of a newer format (written
by a newer storeframes: an answer's ``format`` above :data:`FORMAT`, or a Parquet
footer's ``storeframes.format``) are skipped: left in place, reported once, treated as
a miss. Nothing the cache fails to write or read ever raises out of a frame call.

Only what the cache recognises is ever removed: :meth:`~storeframes.cache.Cache.clear` and
:meth:`~storeframes.cache.Cache.compact` touch a store only when it holds the marker (or, for caches of
earlier versions, the layout above, when the marker is written), only under
``answers/``, ``index/``, ``frames/`` and ``ledger/``, only endpoints this version knows,
and never through a symbolic link.
"""

from __future__ import annotations

import functools
import hashlib
import json
import random
import re
import secrets
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import polars as pl

from .._version import __version__
from ..answers import Entry

if TYPE_CHECKING:  # pyarrow is imported when first needed, not with the package
    import pyarrow as pa

FORMAT = 2
"""The format of the answers and index files this version writes; files of a higher one are left alone.

Format 2 keeps an answer as the body's bytes (``<entry>.json.zst``); format 1 (``<entry>.json.gz``,
the parsed result) is still read. Frame and ledger files are written as format 1
(:data:`TABLE_FORMAT`): their layout did not change, and older versions read them."""
TABLE_FORMAT = 1
"""The format written in frame and ledger files (unchanged since format 1)."""
MARKER = "storeframes-cache.json"
"""The file at the root of every cache: what makes a folder (or a bucket prefix) one."""

ZST = ".json.zst"  # an answer of format 2: a zstd frame of a header line and the body
GZ = ".json.gz"  # an answer of format 1: gzip JSON of the entry's fields and the result
ANSWERS = (ZST, GZ)
PART = "part-"  # the name of a compacted file starts so; an entry's name starts with its date
ENTRY = "entry"  # the column of a kept frame that names the answer of its rows
RELISTS = 8
"""How many times a read lists a cache's files again when one it listed is gone before it is read (a
compaction in another process replaced it, and the files that replaced it are in the next listing)."""


def relist_pause(attempt: int) -> None:
    """Wait before the ``attempt``-th listing again (none before the first two): a growing, jittered pause
    (5 ms doubling to 320 ms, 0.6 s in all), so that a reader that lost to compactions running one after
    another on a busy machine lists again when one of them has finished rather than in step with the next."""
    if attempt > 1:
        time.sleep(random.uniform(0.5, 1.0) * 0.005 * 2 ** min(attempt - 2, 6))


KINDS = ("answers", "index", "frames", "ledger")
"""The folders of a cache: nothing outside them is ever touched."""

INDEX_COLUMNS = pl.Schema(
    {
        "entry": pl.String(),
        "service": pl.String(),
        "scope": pl.String(),
        "entity": pl.String(),
        "facet": pl.String(),
        "day": pl.Date(),
        "fetched_at": pl.Datetime("us", "UTC"),
        "answer_cost": pl.Int64(),
        "cell_cost": pl.Int64(),
        "max_credit_cost": pl.Int64(),
        "available": pl.Boolean(),
        "params": pl.String(),
    }
)
"""The columns of an index file, as polars reads them."""


@functools.cache
def index_schema() -> pa.Schema:
    """The index's columns as an Arrow schema (``INDEX_SCHEMA``), made when first asked for."""
    import pyarrow as pa

    return pa.schema(
        [
            ("entry", pa.string()),
            ("service", pa.string()),
            ("scope", pa.string()),
            ("entity", pa.string()),
            ("facet", pa.string()),
            ("day", pa.date32()),
            ("fetched_at", pa.timestamp("us", tz="UTC")),
            ("answer_cost", pa.int64()),
            ("cell_cost", pa.int64()),
            ("max_credit_cost", pa.int64()),
            ("available", pa.bool_()),
            ("params", pa.string()),
        ]
    )


# -- names -----------------------------------------------------------------------------------


def prefix(kind: str, endpoint: str) -> str:
    """The folder of ``endpoint``'s files of one kind (``answers``, ``index``)."""
    return f"{kind}/endpoint={endpoint}/"


def answer_stem(entry: Entry) -> str:
    """The name of the answer of ``entry`` without its suffix (:data:`ZST` or :data:`GZ`)."""
    return f"{prefix('answers', entry.endpoint)}{entry.id}"


def index_key(entry: Entry) -> str:
    """The name of the index file of one answer."""
    return f"{prefix('index', entry.endpoint)}{entry.id}.parquet"


def frames_prefix(table: str) -> str:
    """The folder of a table's kept frames."""
    return f"frames/table={table}/"


def frame_key(entry: Entry, table: str) -> str:
    """The name of the frame ``table`` of one answer."""
    return f"{frames_prefix(table)}{entry.id}.parquet"


def ledger_key(name: str) -> str:
    """The name of a ledger file."""
    return f"ledger/{name}.parquet"


def part_key(folder: str) -> str:
    """A new name for a compacted file in ``folder`` (an index's or a table's)."""
    return f"{folder}{PART}{datetime.now(UTC):%Y%m%dT%H%M%S%fZ}-{secrets.token_hex(4)}.parquet"


def new_id(fetched_at: datetime, endpoint: str, params: Mapping[str, str]) -> str:
    """A new entry's id: when it was fetched, a digest of its request, and a few random characters."""
    digest = hashlib.sha256(json.dumps([endpoint, dict(params)], sort_keys=True).encode()).hexdigest()[:12]
    return f"{fetched_at.astimezone(UTC):%Y%m%dT%H%M%S%fZ}-{digest}-{secrets.token_hex(3)}"


def endpoint_of(key: str) -> str:
    """The endpoint of an index key ``index/endpoint=<name>/...``."""
    return key.split("/", 2)[1].removeprefix("endpoint=")


def name(key: str) -> str:
    """The file name of a key: its last part."""
    return key.rpartition("/")[2]


def is_part(key: str) -> bool:
    """Whether ``key`` names a compacted file (of many answers)."""
    return name(key).startswith(PART)


def in_folder(key: str, folder: str) -> bool:
    """Whether ``key`` is a file right in ``folder`` (not in a folder below it)."""
    return key.startswith(folder) and "/" not in key[len(folder) :]


# -- what the cache did not write ------------------------------------------------------------

FOLDERS = ("answers", "index", "frames", "ledger", "runs", "events", "digests", "leases")
"""The folders of a cache whose every name storeframes writes: anything else in them is not its own."""
_NAME = re.compile(r"[A-Za-z0-9_=+-][A-Za-z0-9_.=+-]*")
"""The characters of every part of a name storeframes writes (endpoints, tables, trackers, entry ids, days)."""
_DAY = re.compile(r"day=\d{4}-\d{2}-\d{2}\.parquet")
_SHAPES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    # folder: (what a name looks like, the start of its middle part, the ends of its file name)
    "answers": ("answers/endpoint=<name>/<entry>.json.zst", ("endpoint=",), ANSWERS),
    "index": ("index/endpoint=<name>/<entry>.parquet", ("endpoint=",), (".parquet",)),
    "frames": ("frames/table=<table>/<entry>.parquet", ("",), (".parquet",)),
    "ledger": ("ledger/<session>-<n>.parquet", (), (".parquet",)),
    "runs": ("runs/tracker=<name>/<run>.parquet", ("tracker=",), (".parquet", ".running")),
    "events": ("events/tracker=<name>/day=<day>.parquet", ("tracker=",), (".parquet",)),
    "digests": ("digests/tracker=<name>/day=<day>.parquet", ("tracker=",), (".parquet",)),
}


def foreign(key: str) -> str | None:
    """Why the store's key ``key`` is not a name storeframes writes, in words; None when it may be one (or lies
    outside the cache's :data:`FOLDERS`, which the cache never reads by listing).

    >>> foreign("index/endpoint=metadata/z..parquet")
    "its name holds '..'"
    >>> foreign("index/endpoint=metadata/x.parquet/y.parquet")
    'storeframes keeps no file there (its files are index/endpoint=<name>/<entry>.parquet)'
    >>> foreign("ledger/20261128T120000000000Z-41-a1b2c3-0000.parquet") is None
    True
    """
    parts = key.split("/")
    if parts[0] not in FOLDERS or len(parts) < 2:
        return None
    if any(part in ("", ".", "..") for part in parts):
        return "its name has an empty, '.' or '..' part"
    if ".." in key:
        return "its name holds '..'"
    if not all(_NAME.fullmatch(part) for part in parts):
        return "its name holds characters storeframes never writes (spaces, accents, symbols, control characters)"
    shape = _SHAPES.get(parts[0])
    if shape is None:  # leases: named by their hash, never listed to be read
        return None
    shown, middles, ends = shape
    if len(parts) != 2 + len(middles) or not all(p.startswith(m) for p, m in zip(parts[1:-1], middles, strict=True)):
        return f"storeframes keeps no file there (its files are {shown})"
    if not parts[-1].endswith(ends) or (parts[0] in ("events", "digests") and not _DAY.fullmatch(parts[-1])):
        return f"its name is not one storeframes writes there ({shown})"
    return None


# -- what a file says of itself --------------------------------------------------------------


def provenance(entry: Entry, written: int, **extra: str) -> dict[str, str]:
    """The Parquet key-value metadata that says where a file's rows come from (a file of format ``written``)."""
    meta = {
        "storeframes.version": __version__,
        "storeframes.format": str(written),
        "storeframes.endpoint": entry.endpoint,
        "storeframes.params": json.dumps(dict(entry.params)),  # in the catalog's order
        "storeframes.fetched_at": entry.fetched_at.astimezone(UTC).isoformat(),
        "storeframes.cost": str(entry.cost),
        "storeframes.max_credit_cost": str(entry.max_credit_cost),
        "storeframes.service": entry.service,
        "storeframes.available": str(entry.available).lower(),
    }
    meta.update({f"storeframes.{k}": v for k, v in extra.items()})
    return meta
