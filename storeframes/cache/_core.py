"""The cache: raw answers, the index of what they cover, Parquet frames and the ledger.

The cache keeps its files in a :class:`~storeframes.store.Store`: a folder
(:class:`~storeframes.store.LocalStore`, the usual case, described here), a dict in
memory (:class:`~storeframes.store.MemoryStore`), a bucket
(:class:`~storeframes.objectstore.ObjectStore`, for ``s3://bucket/prefix``) or anything
else with the same few operations. Every file goes through the store, so the layout and formats below are the
same wherever the cache lives.

Layout (every file is written to a temporary name and renamed, so a reader never
sees half a file, and every name is unique, so processes sharing the folder never
overwrite each other)::

    <cache_dir>/
      storeframes-cache.json                    the marker: this folder is a storeframes cache
                                                (its format number), written with the first file
      answers/endpoint=<name>/<entry>.json.zst  the raw answer: one zstd frame holding a line of JSON
                                                (format, canonical request, service, fetched_at, cost,
                                                max_credit_cost, status, the body's size and CRC-32)
                                                then the body's JSON bytes as they arrived
      answers/endpoint=<name>/<entry>.json.gz   the same, of earlier versions (format 1, still read):
                                                gzip JSON of the entry's fields and the parsed result
      index/endpoint=<name>/<entry>.parquet     one row per cell the answer covers
      index/endpoint=<name>/part-<n>.parquet    the rows of many answers (:meth:`Cache.compact`)
      frames/table=<table>/<entry>.parquet      a flattened frame of one answer, with an ``entry`` column
      frames/table=<table>/part-<n>.parquet     the frames of many answers, a row group per few answers
      ledger/<session>-<n>.parquet              ledger rows of one client session: small files
                                                ``<session>-r<n>`` as requests end, merged into
                                                chunks ``<session>-<chunk>`` (storeframes.credits)

An *entry* is one answer of the service to one request. Its index file is written
last and is what makes the entry visible. ``index``, ``frames`` and ``ledger`` are
plain Parquet datasets: ``pl.scan_parquet(f"{cache_dir}/index/**/*.parquet",
hive_partitioning=True)``, DuckDB's ``read_parquet`` or pandas read them as they are,
and every file carries its provenance (endpoint, canonical params, fetched_at, cost,
storeframes version) in its Parquet key-value metadata.

Nothing in the folder holds the API token: requests are keyed by their canonical
parameters, and answers are scrubbed of the token before they are written.

An answer is kept as the bytes that arrived (a cached answer is then read by the same
:func:`~storeframes.bodies.parse_answer` as a fresh one, and is the same object), compressed
with zstd (a standard frame: ``zstd -dc <entry>.json.zst`` shows it). Its first line says
whose answer it is; the body follows. An answer made or changed by the client (``body`` None)
is kept as ``{"result": ..., "metadata": {"request": {"params": <echo>}}}``, written by orjson
(by the standard library, losslessly, where orjson cannot: a lone surrogate, a key that is not
text). Index files of format 2 name such answers; an older storeframes (format 1) skips them
as files of a newer format. Frame and ledger files keep format 1: their layout did not change,
and an older version reads them as before.

A file that cannot be read (truncated, corrupt) is set aside as ``<name>.corrupt``,
reported once with a :class:`CacheWarning`, and treated as a miss. A file that cannot
be read for another reason (no permission, a folder where the file should be) is
reported and treated as a miss, and left where it is. Files of a newer format (written
by a newer storeframes: an answer's ``format`` above :data:`FORMAT`, or a Parquet
footer's ``storeframes.format``) are skipped: left in place, reported once, treated as
a miss. Nothing the cache fails to write or read ever raises out of a frame call.

Only what the cache recognises is ever removed: :meth:`Cache.clear` and
:meth:`Cache.compact` touch a store only when it holds the marker (or, for caches of
earlier versions, the layout above, when the marker is written), only under
``answers/``, ``index/``, ``frames/`` and ``ledger/``, only endpoints this version knows,
and never through a symbolic link.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import hashlib
import inspect
import io
import json
import os
import re
import secrets
import sys
import threading
import zlib
from collections.abc import Callable, Collection, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import polars as pl

from .. import planning
from .._version import __version__
from ..answers import Entry, Refresh, Response
from ..bodies import parse_answer
from ..catalog import ENDPOINTS, Endpoint, Freshness
from ..errors import carry, warn
from ..ledger import SERVICE, conform_ledger
from ..planning import Cell
from .stores import Store, StoreBase, SweepError, store_for

if TYPE_CHECKING:  # pyarrow is imported when first needed, not with the package
    import pyarrow as pa

__all__ = ["Cache", "CacheWarning"]

FORMAT = 2
"""The format of the answers and index files this version writes; files of a higher one are left alone.

Format 2 keeps an answer as the body's bytes (``<entry>.json.zst``); format 1 (``<entry>.json.gz``,
the parsed result) is still read. Frame and ledger files are written as format 1
(:data:`_TABLE_FORMAT`): their layout did not change, and older versions read them."""
_TABLE_FORMAT = 1
"""The format written in frame and ledger files (unchanged since format 1)."""
MARKER = "storeframes-cache.json"
"""The file at the root of every cache: what makes a folder (or a bucket prefix) one."""
CLOCK_SKEW = timedelta(seconds=5)
"""How far in the future an answer's ``fetched_at`` may lie (another machine's clock slightly
ahead) and still be judged by its time; beyond that the answer is stale, never fresh forever."""
"""What a user may write as ``refresh=``: a mode, or True for ``"always"`` and False for ``"auto"``."""
# an app the service reported as not available is asked again the next UTC day
_UNAVAILABLE_FRESHNESS = Freshness(current="utc_day")

_ZST = ".json.zst"  # an answer of format 2: a zstd frame of a header line and the body
_GZ = ".json.gz"  # an answer of format 1: gzip JSON of the entry's fields and the result
_ANSWERS = (_ZST, _GZ)
_ZSTD_LEVEL = 3  # zstd's default: 23.6 MB of history JSON in 25 ms to 1.6 MB (level 1: 22 ms, the same size)
_MOST_RATIO = 64  # a zstd frame saying it holds more than this many times its size (or 1 MB) is read as a
# stream, as its content comes, never allocated at once on its word

_INDEX_COLUMNS = pl.Schema(
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
_INDEX_POLARS = _INDEX_COLUMNS  # the columns of an index file, as polars reads them


@functools.cache
def _index_schema() -> pa.Schema:
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


def __getattr__(name: str) -> Any:
    if name == "INDEX_SCHEMA":  # the Arrow schema of an index file, without importing pyarrow with the module
        return _index_schema()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class _Part:
    """A compacted frame file: the flattener that wrote it and the row group of each entry it holds."""

    version: str
    groups: dict[str, int]  # -1: the answer has no rows in this table
    columns: pl.Schema | None = None  # the frame's columns (without ``entry``)


def _without_entry(columns: pl.Schema) -> pl.Schema:
    return pl.Schema({name: dtype for name, dtype in columns.items() if name != _ENTRY})


# -- Parquet through polars ----------------------------------------------------------------


@functools.cache
def _polars_writes_arrow_schema() -> bool:
    """Whether this polars's ``write_parquet`` takes ``arrow_schema`` (1.39 and later)."""
    return "arrow_schema" in inspect.signature(pl.DataFrame.write_parquet).parameters


@functools.lru_cache(maxsize=256)
def _arrow_schema(columns: tuple[tuple[str, pl.DataType], ...]) -> pa.Schema:
    """The Arrow schema polars writes for ``columns``, worked out once per set of columns."""
    return pl.DataFrame(schema=dict(columns)).to_arrow().schema


def _parquet_bytes(
    frame: pl.DataFrame, meta: Mapping[str, str], *, statistics: bool = True, arrow: bool = True
) -> bytes:
    """``frame`` as the bytes of a Parquet file (zstd) with the key-value metadata ``meta``.

    Written by polars straight from the frame: on the 1.8 M-row history frame, 0.14 s and
    1.9 MB, where ``to_arrow()`` + ``pq.write_table`` took 0.31 s and 2.6 MB (snappy), and
    polars reads it back in 0.02 s. ``statistics=False`` leaves out column statistics (min
    and max of every text column cost a fifth of the write). The metadata is the file's, and
    also the Arrow schema's (where pyarrow's ``read_table`` looks for it), unless ``arrow`` is
    False (which spares importing pyarrow).
    """
    buffer = io.BytesIO()
    options: dict[str, Any] = {"compression": "zstd", "statistics": statistics, "metadata": dict(meta)}
    if arrow and _polars_writes_arrow_schema():  # the metadata in the Arrow schema too, where pyarrow looks
        with contextlib.suppress(TypeError, ValueError, pl.exceptions.PolarsError):  # a column Arrow cannot name
            options["arrow_schema"] = _arrow_schema(tuple(frame.schema.items())).with_metadata(dict(meta))
    frame.write_parquet(buffer, **options)
    return buffer.getvalue()


def _parquet_meta(source: bytes) -> dict[str, str]:
    """A Parquet file's key-value metadata, from its footer."""
    return pl.read_parquet_metadata(io.BytesIO(source))


def _parquet_columns(source: bytes) -> pl.Schema:
    """A Parquet file's columns as polars reads them, from its footer."""
    return pl.Schema(pl.read_parquet_schema(io.BytesIO(source)))


def _read_parquet(source: bytes) -> pl.DataFrame:
    return pl.read_parquet(io.BytesIO(source), hive_partitioning=False, use_pyarrow=False)


class CacheWarning(UserWarning):
    """A cache file could not be read or written; the call went on without it."""


def _new_id(fetched_at: datetime, endpoint: str, params: Mapping[str, str]) -> str:
    digest = hashlib.sha256(json.dumps([endpoint, dict(params)], sort_keys=True).encode()).hexdigest()[:12]
    return f"{fetched_at.astimezone(UTC):%Y%m%dT%H%M%S%fZ}-{digest}-{secrets.token_hex(3)}"


def _read_many(read: Callable[[str], Any], keys: list[str], *, chunk: int = 256) -> Iterable[tuple[str, Any]]:
    """``(key, read(key))`` in order, a chunk at a time on a few threads (Parquet reads and a store's
    requests release the GIL)."""
    from concurrent.futures import ThreadPoolExecutor

    if len(keys) <= 4:
        yield from ((key, read(key)) for key in keys)
        return
    with ThreadPoolExecutor(max_workers=min(8, (os.cpu_count() or 2) * 2)) as pool:
        for start in range(0, len(keys), chunk):
            batch = keys[start : start + chunk]
            yield from zip(batch, pool.map(carry(read), batch), strict=True)  # its warnings go with the call


def _shares(cost: int, n: int) -> list[int]:
    """``cost`` split over ``n`` cells in whole credits that sum to it exactly (the first cells take the rest)."""
    if n == 0:
        return []
    base, rest = divmod(cost, n)
    return [base + 1] * rest + [base] * (n - rest)


def _index_rows(entries: Iterable[Entry]) -> pl.DataFrame:
    """The index rows of ``entries``: one per cell, cells in order, each with its share of the answer's cost."""
    columns: dict[str, list[Any]] = {name: [] for name in _INDEX_COLUMNS}
    for entry in entries:
        cells = sorted(entry.cells, key=lambda c: (c[0] or "", c[1] or "", c[2] or date.min))
        n = len(cells)
        columns["entry"] += [entry.id] * n
        columns["service"] += [entry.service] * n
        columns["scope"] += [entry.scope] * n
        columns["entity"] += [c[0] for c in cells]
        columns["facet"] += [c[1] for c in cells]
        columns["day"] += [c[2] for c in cells]
        columns["fetched_at"] += [entry.fetched_at] * n
        columns["answer_cost"] += [entry.cost] * n
        columns["cell_cost"] += _shares(entry.cost, n)
        columns["max_credit_cost"] += [entry.max_credit_cost] * n
        columns["available"] += [entry.available] * n
        columns["params"] += [json.dumps(dict(entry.params), sort_keys=True)] * n
    return pl.DataFrame(columns, schema=_INDEX_COLUMNS)


# -- answers --------------------------------------------------------------------------------

_ESCAPED = re.compile(rb"\\(?:/|u00[2-7])")
"""Where a body may write a printable ASCII character (one of the token's) as an escape."""
_ESCAPE = re.compile(r"\\(\\|/|u00[2-7][0-9a-fA-F])")


def _plain(found: re.Match[str]) -> str:
    """An escape of a printable ASCII character as the character (``\\/`` as ``/``); others as they are."""
    code = found.group(1)
    if code == "/":
        return "/"
    if code.startswith("u"):
        char = chr(int(code[1:], 16))
        if 0x20 <= ord(char) < 0x7F and char not in '"\\':
            return char
    return found.group(0)


def _scrubbed(data: bytes, scrub: Callable[[str], str]) -> tuple[bytes, bool]:
    """``data`` (JSON in UTF-8) with the token masked by ``scrub``, and whether it held the token.

    The token is ASCII without control characters, so it is found in the bytes read as
    Latin-1 (each byte one character) and masked there, other bytes untouched. Where the
    body writes a printable ASCII character as an escape (``\\/``, ``\\u0041``), which
    could hide the token, those escapes are written as the characters first (the same JSON).
    """
    text = data.decode("latin-1")
    escaped = _ESCAPED.search(data)
    plain = _ESCAPE.sub(_plain, text) if escaped else text
    masked = scrub(plain)
    if masked is plain or masked == plain:
        return (data if plain is text else plain.encode("latin-1")), False
    return masked.encode("latin-1"), True


def _result_json(response: Response) -> bytes:
    """The JSON of an answer made or changed by the client: its result and echo, in the service's envelope.

    orjson writes it; what orjson refuses (a lone surrogate, a key that is not text, an
    integer beyond 64 bits) the standard library writes, losslessly: text UTF-8 cannot hold
    (a lone surrogate, half an emoji) as a ``\\u`` escape, which reads back as the same string.
    """
    envelope = {"result": response.result, "metadata": {"request": {"params": dict(response.echo)}}}
    try:
        return orjson.dumps(envelope)
    except (orjson.JSONEncodeError, TypeError):
        pass
    try:
        return json.dumps(envelope, separators=(",", ":"), ensure_ascii=False).encode()
    except UnicodeEncodeError:
        return json.dumps(envelope, separators=(",", ":"), ensure_ascii=True).encode()


def _answer_file(head: dict[str, Any], response: Response, scrub: Callable[[str], str]) -> bytes:
    """The bytes of an answer file of format 2: a zstd frame of the header line, then the body.

    The body is the bytes that arrived, scrubbed of the token. An answer without them
    (made or changed by the client), one whose body held the token, or one not in UTF-8, is
    kept as the JSON of its result (:func:`_result_json`), scrubbed as text.
    """
    import pyarrow as pa

    body = response.body
    kind = "answer"
    payload = b""
    if body is not None and json.detect_encoding(body[:4]).startswith("utf-8"):
        payload, held = _scrubbed(body, scrub)
        if held:  # masked inside the body: kept as the parsed result instead, as format 1 did
            body = None
    if body is None or not payload:
        kind = "result"
        payload, _ = _scrubbed(_result_json(response), scrub)
    head = {**head, "body": kind, "bytes": len(payload), "crc32": zlib.crc32(payload)}
    line, _ = _scrubbed(orjson.dumps(head), scrub)
    codec = pa.Codec("zstd", compression_level=_ZSTD_LEVEL)
    return codec.compress(line + b"\n" + payload, asbytes=True)


def _zstd_size(data: bytes) -> int | None:
    """The decompressed size a zstd frame's header states; None when it states none (or not a frame)."""
    if len(data) < 6 or data[:4] != b"\x28\xb5\x2f\xfd":
        return None
    descriptor = data[4]
    single = (descriptor >> 5) & 1
    at = 5 + (0 if single else 1) + (0, 1, 2, 4)[descriptor & 3]
    width = (1 if single else 0, 2, 4, 8)[descriptor >> 6]
    if width == 0 or len(data) < at + width:
        return None
    size = int.from_bytes(data[at : at + width], "little")
    return size + 256 if width == 2 else size


def _unzstd(data: bytes, *, most: int | None = None) -> bytes:
    """The content of a zstd file (``most``: at least its first ``most`` bytes); raises OSError when damaged."""
    import pyarrow as pa

    size = _zstd_size(data)
    if most is None and size is not None and size <= max(_MOST_RATIO * len(data), 1 << 20):
        return pa.Codec("zstd").decompress(data, decompressed_size=size, asbytes=True)
    with pa.CompressedInputStream(pa.BufferReader(data), "zstd") as stream:
        return bytes(stream.read(most) if most is not None else stream.read())


def _answer_parts(data: bytes) -> tuple[Any, bytes]:
    """The header (parsed) and the body of an answer file of format 2; raises OSError or ValueError when damaged."""
    content = _unzstd(data)
    cut = content.find(b"\n")
    if cut < 0:
        raise ValueError("no header line")
    return orjson.loads(content[:cut]), content[cut + 1 :]


def _answer_of(head: Mapping[str, Any], body: bytes) -> tuple[Any, Mapping[str, Any]]:
    """The result and the echo (``metadata.request.params``) of a kept body; raises ValueError when damaged.

    A body that arrived is read as a fresh one is (:func:`~storeframes.bodies.parse_answer`);
    the JSON of a result the client made is read as written (the standard library where
    orjson refuses it: a lone surrogate comes back as it was kept).
    """
    if head.get("bytes") != len(body) or head.get("crc32") != zlib.crc32(body):
        raise ValueError("the body is damaged (its size or CRC-32 is not the header's)")
    kind = head.get("body")
    if kind == "answer":
        parsed = parse_answer(body)
    elif kind == "result":
        try:
            parsed = orjson.loads(body)
        except orjson.JSONDecodeError:
            parsed = json.loads(body)
    else:
        raise ValueError(f"a body of an unknown kind {kind!r}")
    if not isinstance(parsed, dict) or "result" not in parsed:
        raise ValueError("the body is not an answer")
    meta = parsed.get("metadata")
    request = meta.get("request") if isinstance(meta, dict) else None
    echo = request.get("params") if isinstance(request, dict) else None
    return parsed["result"], echo if isinstance(echo, dict) else {}


def _endpoint_of(key: str) -> str:
    """The endpoint of an index key ``index/endpoint=<name>/...``."""
    return key.split("/", 2)[1].removeprefix("endpoint=")


def _name(key: str) -> str:
    """The file name of a key: its last part."""
    return key.rpartition("/")[2]


def _services_in(storage: StoreBase, key: str) -> set[str]:
    """The services named by one index file: its ``service`` column (compacted) or its footer (one answer)."""
    try:
        source = io.BytesIO(storage.get(key))
        service = pl.read_parquet_metadata(source).get("storeframes.service")
        if service is not None:
            return {service}
        source.seek(0)
        return set(pl.read_parquet(source, columns=["service"])["service"].unique().drop_nulls().to_list())
    except Exception:  # a file being written, damaged or of another kind: the cache passes it over too
        return set()


def _provenance(entry: Entry, written: int, **extra: str) -> dict[str, str]:
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


def _by_entry(rows: pl.DataFrame, ids: Iterable[str]) -> dict[str, pl.DataFrame]:
    """The rows of each answer of ``ids`` (without the ``entry`` column), an answer with none empty.

    A compacted file holds an answer's rows together: each answer's frame is a slice of
    ``rows`` (no copy), found from the runs of the ``entry`` column.
    """
    return _slices(rows, _ENTRY, {entry_id: entry_id for entry_id in ids}, together=False)


class _NotInOrder(Exception):
    """Files read together did not give their rows file by file."""


_FILE = "\x00storeframes-file"  # the column naming the file of each row, in a scan of many files


def _by_file(rows: pl.DataFrame, files: Mapping[str, str]) -> dict[str, pl.DataFrame | object | None]:
    """The rows of each file of ``files`` (path: entry id) read in one scan, by entry id, each a slice."""
    return dict(_slices(rows.drop(_ENTRY, strict=False), _FILE, files, together=True))


def _slices(rows: pl.DataFrame, column: str, names: Mapping[str, str], *, together: bool) -> dict[str, pl.DataFrame]:
    """The rows of ``rows`` by the value of ``column`` (named by ``names``: value: id), each a slice (no copy)
    without ``column``; an id with no rows empty. ``together``: each value's rows must be one run
    (raises _NotInOrder if not)."""
    body = rows.drop(column)
    spans: dict[str, list[tuple[int, int]]] = {}
    if rows.height:
        runs = rows.get_column(column).rle()
        offset = 0
        for n, value in zip(runs.struct.field("len").to_list(), runs.struct.field("value").to_list(), strict=True):
            spans.setdefault(str(value), []).append((offset, n))
            offset += n
    if together and (any(len(p) > 1 for p in spans.values()) or not set(spans) <= set(names)):
        raise _NotInOrder
    found: dict[str, pl.DataFrame] = {}
    for value, entry_id in names.items():
        pieces = spans.get(value)
        if not pieces:
            found[entry_id] = body.clear()
        elif len(pieces) == 1:
            found[entry_id] = body.slice(*pieces[0])
        else:  # not together (a file not written by a compaction): gathered
            found[entry_id] = pl.concat([body.slice(at, n) for at, n in pieces])
    return found


def _rows_of(data: bytes, meta: Mapping[str, str]) -> int:
    """The rows of an index file: as its footer's ``storeframes.rows`` says (format 2), else counted
    from the Parquet footer (files of format 1)."""
    given = meta.get("storeframes.rows")
    if given is not None:
        return int(given)
    import pyarrow as pa
    import pyarrow.parquet as pq

    return int(pq.read_metadata(pa.BufferReader(data)).num_rows)


def _footer(metadata: Mapping[bytes, bytes] | None) -> dict[str, str]:
    """A Parquet file's key-value metadata as text."""
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, v in (metadata or {}).items()}


def _version_key(text: str) -> tuple[int, ...]:
    """``"0.12.1rc1"`` as ``(0, 12, 1)``: the numbers a version starts with, for comparing."""
    numbers = []
    for part in text.split("."):
        digits = re.match(r"\d+", part)
        if digits is None:
            break
        numbers.append(int(digits.group()))
    return tuple(numbers)


def _newer_format(meta: Mapping[str, str]) -> bool:
    """Whether a file's footer says it has a format this version does not know."""
    number = meta.get("storeframes.format", "")
    return number.isdigit() and int(number) > FORMAT


def _newer_writer(meta: Mapping[str, str]) -> bool:
    """Whether a newer storeframes wrote a file (its format, or its version, is above this one's)."""
    version = meta.get("storeframes.version", "")
    return _newer_format(meta) or (bool(version) and _version_key(version) > _version_key(__version__))


def _cannot_reach(exc: BaseException) -> bool:
    """Whether reading failed because the store could not be read, not because the bytes are bad
    (no permission, a folder where a file should be, a connection): the file is left where it is."""
    return isinstance(exc, (PermissionError, IsADirectoryError, ConnectionError, TimeoutError))


_ENTRY = "entry"  # the column of a kept frame that names the answer of its rows
_GONE = object()
_PART_ROWS = 1_000_000  # the most rows of one compacted frame file
_GROUP_ROWS = 8_192  # about the rows of one of its row groups (an answer's rows are never split)
_SCAN_FILES = 16
"""Beyond this many files of a folder, frames are read in one scan, not a file per thread (measured:
205 metadata files of 5 rows, 0.11 s against 0.14 s; 10 history files of 182,500 rows, 0.025 s
against 0.019 s)."""
_PART = "part-"  # the name of a compacted file starts so; an entry's name starts with its date
_READ_ERRORS: tuple[type[BaseException], ...] = (
    OSError,
    EOFError,
    zlib.error,
    ValueError,
    KeyError,
    TypeError,
    pl.exceptions.PolarsError,
)


def _unreadable(*also: type[BaseException]) -> tuple[type[BaseException], ...]:
    """What reading a damaged file raises: :data:`_READ_ERRORS`, pyarrow's errors once it is imported, and ``also``."""
    pa = sys.modules.get("pyarrow")
    return (*_READ_ERRORS, *also, *((pa.ArrowException,) if pa is not None else ()))


# a temporary file or an answer without an index younger than this may be a write in progress
_STALE_SECONDS = 3600.0


class Cache:
    """A cache (see the module documentation for its layout), in a folder or another store.

    ``path_or_store`` is a folder (a path, kept in a :class:`~storeframes.store.LocalStore`)
    or any :class:`~storeframes.store.Store`. One :class:`Cache` may serve several
    clients and threads; several processes may share one folder. The index of each
    endpoint is read lazily and kept in memory; files written by other processes are
    picked up at the next lookup.

    >>> cache = Cache("./storeframes-cache")  # doctest: +SKIP
    >>> client = Client(cache_dir=cache)      # doctest: +SKIP
    >>> scratch = Cache(MemoryStore())        # doctest: +SKIP
    """

    WRITE_BEHIND_ROWS = 100_000
    """A frame of at least this many rows is written after the call that built it returns (see
    :meth:`write_frame`); smaller ones are written before."""

    def __init__(
        self, path_or_store: str | os.PathLike[str] | Store, *, storage_options: Mapping[str, str] | None = None
    ):
        self.storage: StoreBase = store_for(path_or_store, storage_options)
        """Where the files are kept."""
        self.path: Path | None = self.storage.capabilities.local_root
        """The folder of a cache kept in a folder; None for another store."""
        self._lock = threading.RLock()
        self._entries: dict[str, Entry] = {}
        self._files: dict[str, dict[str, tuple[str, ...]]] = {}  # endpoint -> index key -> ids of its entries
        self._held: dict[str, int] = {}  # entry id -> how many known index files hold it
        self._parts: dict[str, dict[str, _Part]] = {}  # table -> compacted frame file -> what it holds
        self._pending: dict[str, dict[str, pl.DataFrame]] = {}  # endpoint -> compacted index -> rows not made entries
        self._dead: set[str] = set()  # entries whose answer is gone, still listed by a compacted file
        self._cells: dict[tuple[str, str, str], dict[Cell, list[Entry]]] = {}
        self._marked = False  # the marker is known to be there
        self._warned: set[str] = set()  # what was reported once already
        self._newer: set[str] = set()  # entries of a newer format: left alone
        self._newer_files: set[str] = set()  # index files of a newer format: never merged nor removed
        self._gz: set[str] = set()  # entries whose answer is of format 1 (``.json.gz``)
        self._writer: ThreadPoolExecutor | None = None  # writes large frames behind the calls
        self._writing: dict[tuple[str, str], tuple[str, pl.DataFrame, Future[None]]] = {}  # (entry, table) ->
        # (flattener, frame, its write): frames not yet in their file, served from memory meanwhile

    @property
    def location(self) -> str:
        """Where the cache lives, for people: its folder, ``"memory"``, or the store's repr."""
        return self.storage.location

    def __repr__(self) -> str:
        return f"Cache({self.location!r})" if self.path is not None else f"Cache({self.location})"

    @staticmethod
    def _prefix(kind: str, endpoint: str) -> str:
        return f"{kind}/endpoint={endpoint}/"

    # -- what makes a cache -------------------------------------------------------------

    def _mark(self) -> None:
        """Write the marker (:data:`MARKER`) unless it is there: before the first file this cache writes.

        A :class:`~storeframes.store.MemoryStore` needs none: only this process sees it.
        """
        if self._marked or self.storage.capabilities.shared == "process":
            return
        body = json.dumps({"format": FORMAT, "written_by": f"storeframes {__version__}"}).encode()
        with contextlib.suppress(OSError):  # a store that cannot take it cannot take the file that follows either
            try:
                self.storage.put_if_absent(MARKER, body)
            except OSError:  # a bucket without conditional writes
                try:
                    self.storage.get(MARKER)
                except FileNotFoundError:
                    self.storage.put(MARKER, body)
            self._marked = True

    def is_cache(self, *, mark: bool = False) -> bool:
        """Whether the store holds a storeframes cache: its marker (:data:`MARKER`), or, for a cache of
        an earlier version, cached files where the layout puts them (an ``answers/endpoint=*``,
        ``index/endpoint=*`` or ``ledger/`` folder holding answers or Parquet files). ``mark=True``
        writes the marker into a cache recognised by its layout. Looking creates nothing. A
        :class:`~storeframes.store.MemoryStore` holds nothing but the cache's files: always a cache.

        >>> Cache("/home/me").is_cache()  # doctest: +SKIP
        False
        """
        if self.storage.capabilities.shared == "process":
            return True
        try:
            self.storage.get(MARKER)
            self._marked = True
            return True
        except FileNotFoundError:
            pass
        except OSError:  # there, but unreadable: its name is the cache's
            return True
        if not self._has_layout():
            return False
        if mark:
            self._mark()
        return True

    def _has_layout(self) -> bool:
        for key in self._keys("ledger/"):
            if key.count("/") == 1 and key.endswith(".parquet"):
                return True
        for kind, suffix in (("index", (".parquet",)), ("answers", _ANSWERS)):
            for key in self._keys(f"{kind}/"):
                parts = key.split("/")
                if len(parts) == 3 and parts[1].startswith("endpoint=") and parts[2].endswith(suffix):
                    return True
        return False

    def _warn_once(self, topic: str, message: str) -> None:
        """Report ``message`` with a :class:`CacheWarning`, once per ``topic`` for this cache."""
        with self._lock:
            if topic in self._warned:
                return
            self._warned.add(topic)
        warn(message, CacheWarning)

    def _keys(self, prefix: str) -> list[str]:
        """The store's keys under ``prefix``; none, with a warning, when it cannot be listed."""
        try:
            return self.storage.list(prefix)
        except OSError as exc:
            self._warn_once(
                f"list {prefix}",
                f"cannot list {prefix} in the cache at {self.location} ({exc}); its files are treated as not cached",
            )
            return []

    def _answer_keys(self, entry: Entry) -> tuple[str, str]:
        """The two names the answer of ``entry`` may have (format 2, format 1), the likelier first."""
        stem = f"{self._prefix('answers', entry.endpoint)}{entry.id}"
        return (stem + _GZ, stem + _ZST) if entry.id in self._gz else (stem + _ZST, stem + _GZ)

    def _answer_key(self, entry: Entry) -> str:
        """The name of the answer of ``entry``, as this version writes it or as it was found."""
        return self._answer_keys(entry)[0]

    def _index_key(self, entry: Entry) -> str:
        return f"{self._prefix('index', entry.endpoint)}{entry.id}.parquet"

    # -- writing ------------------------------------------------------------------

    def store(
        self,
        response: Response,
        *,
        service: str,
        scope: str,
        cells: Iterable[Cell],
        available: bool = True,
        scrub: Callable[[str], str] = lambda text: text,
    ) -> Entry | None:
        """Keep one answer; returns its entry, or None (with a :class:`CacheWarning`) when it cannot be kept.

        Never raises: the answer is paid for, and a failure to keep it (the storage, or a
        value JSON cannot hold) must not fail the call. Text is kept as it came, a lone
        surrogate (half an emoji) included: :meth:`load` gives back the same strings.
        """
        entry = Entry(
            id=_new_id(response.fetched_at, response.endpoint, response.params),
            endpoint=response.endpoint,
            service=service,
            scope=scope,
            params=dict(response.params),
            fetched_at=response.fetched_at,
            cost=response.cost,
            max_credit_cost=response.max_credit_cost,
            cells=frozenset(cells),
            available=available,
        )
        head = {
            "format": FORMAT,
            "storeframes": __version__,
            "endpoint": entry.endpoint,
            "service": service,
            "params": entry.params,
            "fetched_at": entry.fetched_at.astimezone(UTC).isoformat(),
            "cost": entry.cost,
            "max_credit_cost": entry.max_credit_cost,
            "status": response.status,
            "attempts": response.attempts,
            "available": available,
        }
        try:
            data = _answer_file(head, response, scrub)
            # one answer's cells: no column statistics (half the write; the compacted index has them)
            meta = _provenance(entry, FORMAT, rows=str(len(entry.cells)))
            index = _parquet_bytes(_index_rows([entry]), meta, statistics=False)
            self._mark()
            self.storage.put(self._answer_key(entry), data)
            self.storage.put(self._index_key(entry), index)
        except Exception as exc:  # the answer is paid for: a failure to keep it never fails the call
            reason = str(exc) if isinstance(exc, OSError) else f"{type(exc).__name__}: {exc}"
            warn(
                f"could not keep a {entry.endpoint} answer in the cache at {self.location}: {reason}",
                CacheWarning,
            )
            return None
        with self._lock:
            self._hold(self._index_key(entry), [entry])
        return entry

    # -- the in-memory index -----------------------------------------------------

    def _add(self, entry: Entry) -> None:
        self._entries[entry.id] = entry
        table = self._cells.setdefault((entry.endpoint, entry.service, entry.scope), {})
        for cell in entry.cells:
            candidates = table.setdefault(cell, [])
            candidates.append(entry)
            if len(candidates) > 1 and candidates[-2].fetched_at > entry.fetched_at:
                candidates.sort(key=lambda e: (e.fetched_at, e.id))

    def _drop(self, entry_id: str) -> None:
        entry = self._entries.pop(entry_id, None)
        if entry is None:
            return
        table = self._cells.get((entry.endpoint, entry.service, entry.scope), {})
        for cell in entry.cells:
            candidates = table.get(cell, [])
            if entry in candidates:
                candidates.remove(entry)

    def _hold(self, key: str, entries: Iterable[Entry]) -> None:
        """Note that the index file ``key`` holds ``entries`` (a file of one answer, or a compacted one of many).

        An entry is known while at least one known index file holds it: a compaction
        writes a file holding entries of others before it removes them, so an entry
        moving between files is never forgotten on the way.
        """
        ids = []
        for entry in entries:
            ids.append(entry.id)
            count = self._held.get(entry.id, 0)
            self._held[entry.id] = count + 1
            if count == 0 and entry.id not in self._dead:
                self._add(entry)
        self._files.setdefault(_endpoint_of(key), {})[key] = tuple(ids)

    def _unhold(self, endpoint: str, key: str) -> None:
        self._pending.get(endpoint, {}).pop(key, None)
        for entry_id in self._files.get(endpoint, {}).pop(key, ()):
            count = self._held.get(entry_id, 0) - 1
            if count > 0:
                self._held[entry_id] = count
                continue
            self._held.pop(entry_id, None)
            self._dead.discard(entry_id)
            self._drop(entry_id)

    def _forget(self, entry: Entry) -> None:
        """Stop serving ``entry`` (its answer is gone); a compacted file may still list it until rewritten."""
        with self._lock:
            self._dead.add(entry.id)
            self._drop(entry.id)

    def sync(self, endpoint: str) -> None:
        """Pick up the index files of ``endpoint`` that other processes wrote, and forget removed ones."""
        with self._lock:
            self._sync(endpoint)

    def _index_files(self, endpoint: str) -> set[str] | None:
        """The index files of ``endpoint``; None, with a warning, when its folder cannot be listed."""
        prefix = self._prefix("index", endpoint)
        try:
            listed = self.storage.list(prefix)
        except OSError as exc:
            self._warn_once(
                f"list {prefix}",
                f"cannot list {prefix} in the cache at {self.location} ({exc}); its answers are treated as not cached",
            )
            return None
        return {key for key in listed if key.endswith(".parquet") and "/" not in key[len(prefix) :]}

    def _sync(self, endpoint: str) -> bool:
        """Pick up the index files of ``endpoint``; False when they cannot be listed (nothing changes)."""
        keys = self._index_files(endpoint)
        if keys is None:
            return False
        known = self._files.setdefault(endpoint, {})
        # new files first, then the removed ones: an entry a compaction moved is held throughout
        for key in sorted(keys - set(known)):
            if _name(key).startswith(_PART):
                frame = self._read_index_part(key, endpoint)
                self._hold_part(key, frame if frame is not None else pl.DataFrame(schema=_INDEX_POLARS))
            else:
                self._hold(key, self._read_index(key, endpoint))
        for gone in set(known) - keys:
            self._unhold(endpoint, gone)
        return True

    def _read_index(self, key: str, endpoint: str) -> list[Entry]:
        """The entry of one answer's index file, from its footer; [] when it is gone or unreadable.

        Only the footer is parsed (the cells follow from the request), which keeps
        opening a cache of small files quick. An unreadable file is set aside with its
        answer. (An unreadable compacted file is set aside alone: the answers it listed
        stay, and the next compaction finds them again from their answers.)
        """
        entry_id = _name(key).removesuffix(".parquet")
        meta: dict[str, str] = {}
        try:
            data = self.storage.get(key)
            meta = _parquet_meta(data)
            if _newer_format(meta):
                self._skip_newer(key, entry_id)
                return []
            if meta["storeframes.endpoint"] != endpoint:
                raise ValueError(f"the file describes {meta['storeframes.endpoint']!r}")
            ep = ENDPOINTS[endpoint]
            params = json.loads(meta["storeframes.params"])
            cells = frozenset(planning.cells_of(ep, params))
            rows = _rows_of(data, meta)
            if rows != len(cells):
                raise ValueError(f"{rows} rows for {len(cells)} cells")
            if meta.get("storeframes.format", "1") == "1":
                with self._lock:
                    self._gz.add(entry_id)  # an index of format 1: its answer is a .json.gz
            return [
                Entry(
                    id=entry_id,
                    endpoint=endpoint,
                    service=meta["storeframes.service"],
                    scope=planning.scope_of(ep, params),
                    params=params,
                    fetched_at=datetime.fromisoformat(meta["storeframes.fetched_at"]),
                    cost=int(meta["storeframes.cost"]),
                    max_credit_cost=int(meta["storeframes.max_credit_cost"]),
                    cells=cells,
                    available=meta["storeframes.available"] == "true",
                )
            ]
        except FileNotFoundError:
            return []
        except _unreadable() as exc:
            if _newer_writer(meta):
                self._skip_newer(key, entry_id)
            else:
                stem = f"{self._prefix('answers', endpoint)}{entry_id}"
                self._set_aside(key, exc, partners=[stem + suffix for suffix in _ANSWERS])
            return []

    def _read_index_part(self, key: str, endpoint: str) -> pl.DataFrame | None:
        """The rows of a compacted index file (one per cell, an answer's rows together); None if unreadable.

        Its answers become entries only when a lookup needs them (:meth:`_materialize`):
        opening a cache of a hundred thousand answers builds the few a call uses.
        """
        meta: dict[str, str] = {}
        try:
            data = self.storage.get(key)
            meta = _parquet_meta(data)
            if _newer_format(meta):
                self._skip_newer(key)
                return None
            if meta.get("storeframes.endpoint") != endpoint or meta.get("storeframes.compacted") != "index":
                raise ValueError("not a compacted index of this endpoint")
            frame = _read_parquet(data)
            if frame.schema != _INDEX_POLARS:
                raise ValueError("its columns are not the index's")
            old = json.loads(meta.get("storeframes.gz", "[]"))  # the answers of format 1 it lists
            if old:
                with self._lock:
                    self._gz.update(old)
            return frame
        except FileNotFoundError:
            return None
        except _unreadable() as exc:
            if _newer_writer(meta):
                self._skip_newer(key)
            else:
                self._set_aside(key, exc)
            return None

    @staticmethod
    def _entries_of(frame: pl.DataFrame, endpoint: str) -> list[Entry]:
        """The entries of rows of a compacted index, grouped by answer."""
        if frame.is_empty():
            return []
        # the rows of an answer are together (as compaction writes them): one answer starts where the id changes
        starts = frame.with_row_index("_at").filter(pl.col("entry").ne_missing(pl.col("entry").shift(1)))
        heads = starts.select(
            "_at", "entry", "service", "scope", "params", "fetched_at", "answer_cost", "max_credit_cost", "available"
        ).rows()
        cells = list(zip(frame["entity"].to_list(), frame["facet"].to_list(), frame["day"].to_list(), strict=True))
        texts = list(dict.fromkeys(head[4] for head in heads))
        parsed = dict(zip(texts, json.loads("[" + ",".join(texts) + "]"), strict=True))  # one parse, not one per answer
        ends = [head[0] for head in heads[1:]] + [frame.height]
        found: dict[str, Entry] = {}
        for (at, entry_id, service, scope, params, fetched_at, cost, most, available), end in zip(
            heads, ends, strict=True
        ):
            held = found.get(entry_id)
            mine = frozenset(cells[at:end])
            found[entry_id] = Entry(
                id=entry_id,
                endpoint=endpoint,
                service=service,
                scope=scope,
                params=parsed[params],
                fetched_at=fetched_at,
                cost=cost,
                max_credit_cost=most,
                cells=mine | held.cells if held else mine,
                available=available,
            )
        return list(found.values())

    def _hold_part(self, key: str, frame: pl.DataFrame) -> None:
        """Note that the compacted index file ``key`` holds the answers of ``frame``, made entries when needed."""
        endpoint = _endpoint_of(key)
        ids = frame["entry"].unique(maintain_order=True).to_list()
        for entry_id in ids:
            self._held[entry_id] = self._held.get(entry_id, 0) + 1
        self._files.setdefault(endpoint, {})[key] = tuple(ids)
        self._pending.setdefault(endpoint, {})[key] = frame

    def _materialize(
        self, endpoint: str, *, service: str | None = None, scope: str | None = None, entities: Collection[Any] = ()
    ) -> None:
        """Make entries of the compacted index rows of ``endpoint``: all of them, or those of answers
        holding one of ``entities`` in ``service`` and ``scope``."""
        pending = self._pending.get(endpoint)
        if not pending:
            return
        whole = service is None
        for key, frame in list(pending.items()):
            rows = frame
            if not whole:
                named = [e for e in entities if e is not None]
                where = pl.col("entity").is_in(named) if named else pl.lit(False)
                if None in entities:
                    where = where | pl.col("entity").is_null()
                ids = frame.filter((pl.col("service") == service) & (pl.col("scope") == scope) & where)["entry"]
                wanted = [i for i in ids.unique().to_list() if i not in self._entries]
                rows = frame.filter(pl.col("entry").is_in(wanted)) if wanted else frame.clear()
            for entry in self._entries_of(rows, endpoint):
                if entry.id in self._held and entry.id not in self._dead and entry.id not in self._entries:
                    self._add(entry)
            if whole:
                del pending[key]

    def _set_aside(self, key: str, reason: BaseException | str | None, *, partners: Iterable[str] = ()) -> None:
        """Set an unreadable file aside as ``<name>.corrupt``, and ``partners`` (the other file
        of the same entry, under each name it may have) with it; warn once, unless ``reason``
        is None or another process set the file aside first.

        A file that could not be reached (no permission, a folder where it should be) is
        not moved: it is reported once and treated as not cached where it is.
        """
        name = _name(key)
        if isinstance(reason, BaseException) and _cannot_reach(reason):
            self._warn_once(
                f"read {key}", f"cannot read cache file {name} ({reason}); treated as not cached and left where it is"
            )
            return
        for partner in partners:
            with contextlib.suppress(OSError):
                self.storage.set_aside(partner)
        try:
            moved = self.storage.set_aside(key)
        except OSError as exc:
            if reason is not None:
                self._warn_once(
                    f"read {key}",
                    f"cache file {name} is unreadable ({reason}) and could not be set aside ({exc}); "
                    "treated as not cached",
                )
            return
        if not moved:
            if reason is not None and self._is_folder(key):
                self._warn_once(
                    f"read {key}", f"cache file {name} is a folder; treated as not cached, left where it is"
                )
            return
        if reason is not None:
            warn(
                f"cache file {name} is unreadable ({reason}); set aside as {name}.corrupt and treated as not cached",
                CacheWarning,
            )

    def _is_folder(self, key: str) -> bool:
        """Whether a folder of the cache's folder stands where the file ``key`` should be."""
        return self.path is not None and os.path.isdir(self.path.joinpath(*key.split("/")))

    def _skip_newer(self, key: str, entry_id: str | None = None) -> None:
        """Leave a file a newer storeframes wrote where it is, as not cached; say so once."""
        with self._lock:
            self._newer_files.add(key)
            if entry_id is not None:
                self._newer.add(entry_id)
        self._warn_once(
            "newer",
            f"cache file {_name(key)} was written by a newer storeframes (this is {__version__}); it is left "
            "where it is and treated as not cached, as are other files of newer versions (not reported again)",
        )

    # -- reading ------------------------------------------------------------------

    def lookup(
        self,
        ep: Endpoint,
        *,
        service: str,
        scope: str,
        cells: Collection[Cell],
        now: datetime,
        refresh: Refresh = "auto",
        sync: bool = True,
    ) -> dict[Cell, Entry]:
        """For each cell the cache can serve, the newest entry holding it.

        ``refresh="auto"`` serves only fresh entries (by ``ep.freshness``), ``"never"``
        any entry, ``"always"`` none. ``sync=False`` skips looking for files other
        processes wrote since the last look (:meth:`sync`).
        """
        if refresh == "always":
            return {}
        with self._lock:
            if sync and not self._sync(ep.name):
                return {}  # the index cannot be listed (a warning said so): nothing is served from it
            self._materialize(ep.name, service=service, scope=scope, entities={cell[0] for cell in cells})
            table = self._cells.get((ep.name, service, scope), {})
            found: dict[Cell, Entry] = {}
            for cell in cells:
                candidates = table.get(cell)
                if not candidates:
                    continue
                newest = candidates[-1]
                if refresh == "never" or self._fresh(ep, newest, cell, now):
                    found[cell] = newest
            return found

    @staticmethod
    def _fresh(ep: Endpoint, entry: Entry, cell: Cell, now: datetime) -> bool:
        """Whether ``entry`` may serve ``cell`` at ``now``, by the endpoint's freshness.

        An entry fetched more than :data:`CLOCK_SKEW` after ``now`` (by a machine whose
        clock is ahead) is stale: judged by its time it would be fresh for as long as that
        clock is ahead, and a recent day of history would look final for ever.
        """
        if entry.fetched_at > now + CLOCK_SKEW:
            return False
        if not entry.available:
            return _UNAVAILABLE_FRESHNESS.is_fresh(entry.fetched_at, None, now=now)
        if ep.daily:
            day = cell[2]
        elif ep.date_ranged:
            day = date.fromisoformat(entry.params["end_date"])
        else:
            day = None
        return ep.freshness.is_fresh(entry.fetched_at, day, now=now)

    def load(self, entry: Entry) -> Response | None:
        """The cached answer of ``entry``; None when its file is gone or unreadable.

        An answer of format 2 is the body as it arrived, read by
        :func:`~storeframes.bodies.parse_answer` as a fresh one is (its result, and its echo:
        the body's ``metadata.request.params``); one of format 1 is the result as it was kept.
        An unreadable answer is set aside with its index file (a warning says so), so
        the cells it held count as not cached from then on, in every process.
        """
        keys = self._answer_keys(entry)
        key = keys[0]
        try:
            data, key = self._get_answer(entry, keys)
            if key.endswith(_ZST):
                head, body = _answer_parts(data)
            else:
                head, body = json.loads(gzip.decompress(data)), None
            if not isinstance(head, dict):
                raise ValueError("not an answer")
            written = head.get("format")
            if isinstance(written, int) and not isinstance(written, bool) and written > FORMAT:
                self._skip_newer(key, entry.id)  # its files stay: the newer version reads them
                self._forget(entry)
                return None
            if written != (FORMAT if body is not None else 1) or head["params"] != dict(entry.params):
                raise ValueError("the answer does not match its index entry")
            if body is None:
                result, echo = head["result"], head.get("echo") or {}
            else:
                result, echo = _answer_of(head, body)
            response = Response(
                endpoint=entry.endpoint,
                params=dict(entry.params),
                result=result,
                cost=int(head["cost"]),
                max_credit_cost=int(head["max_credit_cost"]),
                status=int(head["status"]),
                fetched_at=datetime.fromisoformat(head["fetched_at"]),
                echo=echo,
                attempts=int(head.get("attempts", 1)),
                from_cache=True,
                entry=entry.id,
            )
        except FileNotFoundError:  # an index whose answer is gone: set the index aside quietly
            for name in keys:
                if self._is_folder(name):
                    self._warn_once(
                        f"read {name}",
                        f"cache file {_name(name)} is a folder; treated as not cached, left where it is",
                    )
            self._set_aside(self._index_key(entry), None)
            response = None
        except _unreadable(RecursionError) as exc:
            self._set_aside(key, exc, partners=[self._index_key(entry)])
            response = None
        if response is None:
            self._forget(entry)
        return response

    def _get_answer(self, entry: Entry, keys: tuple[str, str]) -> tuple[bytes, str]:
        """The bytes of the answer of ``entry`` and its name: under the likelier name, else the other."""
        try:
            return self.storage.get(keys[0]), keys[0]
        except FileNotFoundError:
            data = self.storage.get(keys[1])
        with self._lock:
            if keys[1].endswith(_GZ):
                self._gz.add(entry.id)
            else:
                self._gz.discard(entry.id)
        return data, keys[1]

    # -- frames ---------------------------------------------------------------------

    @staticmethod
    def _frames_prefix(table: str) -> str:
        return f"frames/table={table}/"

    def _frame_key(self, entry: Entry, table: str) -> str:
        return f"{self._frames_prefix(table)}{entry.id}.parquet"

    def read_frame(
        self, entry: Entry, table: str, version: str, *, schema: pl.Schema | None = None
    ) -> pl.DataFrame | None:
        """The kept frame ``table`` of ``entry`` if the flattener ``version`` wrote it, else None."""
        return self.read_frames([entry], table, version, schema=schema).get(entry.id)

    def read_frames(
        self,
        entries: Collection[Entry],
        table: str,
        version: str,
        *,
        schema: pl.Schema | None = None,
        map: Callable[[Callable[[Entry], Any], list[Entry]], Iterable[Any]] = map,
    ) -> dict[str, pl.DataFrame]:
        """The kept frames ``table`` of ``entries`` that the flattener ``version`` wrote, by entry id.

        Entries in a compacted file are read from it, a few row groups at a time; the
        others from their own files (through ``map``, which may read them on threads).
        An entry whose frame is not kept, or was kept by another flattener, is left out.
        Unreadable files are set aside (with a warning) and count as absent. With
        ``schema``, a kept frame whose columns are not exactly those (a column dropped,
        renamed or of another type) counts as absent too: the caller builds it again from
        the raw answer, at no cost, and its own file is written over; a compacted file
        whose columns are off is set aside (with a warning).
        """
        found: dict[str, pl.DataFrame] = self._written_later(entries, table, version, schema)
        for attempt in range(2):
            rest = [e for e in entries if e.id not in found]
            if not rest:
                break
            found.update(self._read_from_parts(rest, table, version, relist=attempt > 0, schema=schema))
            rest = [e for e in rest if e.id not in found]
            if not rest:
                break
            if self.path is not None and schema is not None and len(rest) > _SCAN_FILES:
                singles = self._read_singles(rest, table, version, schema)
            else:
                singles = list(map(lambda e: self._read_single(e, table, version, schema), rest))
            missing = False
            for entry, frame in zip(rest, singles, strict=True):
                if isinstance(frame, pl.DataFrame):
                    found[entry.id] = frame
                else:
                    missing = missing or frame is _GONE
            if not missing:
                break  # else a compaction may have moved some: look at the compacted files again
        return found

    def _read_single(
        self, entry: Entry, table: str, version: str, schema: pl.Schema | None = None
    ) -> pl.DataFrame | object | None:
        """The frame of one entry from its own file; None if another flattener wrote it (or its columns
        are not ``schema``), _GONE if there is none.

        Read by polars from the file's bytes: its footer first (the flattener, the columns),
        then the columns, without going through pyarrow.
        """
        key = self._frame_key(entry, table)
        meta: dict[str, str] = {}
        try:
            data = self.storage.get(key)
            meta = _parquet_meta(data)
            if meta.get("storeframes.flattener") != version or _newer_format(meta):
                return None
            if schema is not None and _without_entry(_parquet_columns(data)) != schema:
                return None  # built again from the raw answer, and written over
            return _read_parquet(data).drop(_ENTRY, strict=False)
        except FileNotFoundError:
            if self._is_folder(key):
                self._warn_once(f"read {key}", f"cache file {_name(key)} is a folder; the frame is built again")
                return None
            return _GONE
        except _unreadable() as exc:
            if not _newer_writer(meta):
                self._set_aside(key, exc)
            return None

    def _read_singles(
        self, entries: list[Entry], table: str, version: str, schema: pl.Schema
    ) -> list[pl.DataFrame | object | None]:
        """:meth:`_read_single` of each of ``entries``, from a folder: the footers one by one, then the
        files that hold frames of ``version`` and ``schema`` in one scan (polars reads them side by
        side, without a Python thread per file), each answer's frame a slice of it."""
        out: dict[str, pl.DataFrame | object | None] = {}
        wanted: list[tuple[Entry, Path]] = []
        for entry in entries:
            key = self._frame_key(entry, table)
            meta: dict[str, str] = {}
            try:
                path = self._local(key)
                assert path is not None
                meta = pl.read_parquet_metadata(path)
                if meta.get("storeframes.flattener") != version or _newer_format(meta):
                    out[entry.id] = None
                elif _without_entry(pl.Schema(pl.read_parquet_schema(path))) != schema:
                    out[entry.id] = None  # built again from the raw answer, and written over
                else:
                    wanted.append((entry, path))
            except (FileNotFoundError, IsADirectoryError, AssertionError, AttributeError):
                out[entry.id] = self._read_single(entry, table, version, schema)  # says why, as it does alone
            except _unreadable() as exc:
                if not _newer_writer(meta):
                    self._set_aside(key, exc)
                out[entry.id] = None
        if wanted:
            try:
                rows = pl.scan_parquet(
                    [path for _, path in wanted], hive_partitioning=False, glob=False, include_file_paths=_FILE
                ).collect()
                found = _by_file(rows, {str(path): entry.id for entry, path in wanted})
            except _unreadable(_NotInOrder):  # a file cut short, or not where it was: each alone
                found = {e.id: self._read_single(e, table, version, schema) for e, _ in wanted}
            out.update(found)
        return [out[entry.id] for entry in entries]

    def _frame_parts(self, table: str, *, relist: bool) -> dict[str, _Part]:
        """The compacted files of ``table`` and what each holds; listed once, then again when asked."""
        with self._lock:
            parts = self._parts.get(table)
            if parts is not None and not relist:
                return dict(parts)
        prefix = self._frames_prefix(table)
        keys = [k for k in self._keys(prefix) if _name(k).startswith(_PART) and "/" not in k[len(prefix) :]]
        with self._lock:
            known = self._parts.setdefault(table, {})
            for gone in set(known) - set(keys):
                del known[gone]
            new = [k for k in keys if k not in known]
        for key in new:
            part = self._read_part_footer(key)
            if part is not None:
                with self._lock:
                    self._parts.setdefault(table, {})[key] = part
        with self._lock:
            return dict(self._parts.get(table, {}))

    def _read_part_footer(self, key: str) -> _Part | None:
        meta: dict[str, str] = {}
        try:
            meta, columns = self._footer_of(key)
            if _newer_format(meta):
                self._skip_newer(key)
                return None
            groups = json.loads(meta["storeframes.row_groups"])
            held = {e: i for i, ids in enumerate(groups) for e in ids}
            held.update((e, -1) for e in json.loads(meta.get("storeframes.empty", "[]")))
            return _Part(meta["storeframes.flattener"], held, _without_entry(columns))
        except FileNotFoundError:
            return None
        except _unreadable() as exc:
            if _newer_writer(meta):
                self._skip_newer(key)
            else:
                self._set_aside(key, exc)
            return None

    def _local(self, key: str) -> Path | None:
        """The file of ``key`` in the cache's folder; None for another store. Raises FileNotFoundError
        when there is none."""
        if self.path is None:
            return None
        path = self.path.joinpath(*key.split("/"))
        if not path.is_file():
            if path.exists():
                raise IsADirectoryError(key)
            raise FileNotFoundError(key)
        return path

    def _footer_of(self, key: str) -> tuple[dict[str, str], pl.Schema]:
        """The key-value metadata and the columns (as polars reads them) of a Parquet file of the store,
        from its footer alone: read in place from a folder, in ranges from a store that can (a
        bucket), else from its bytes."""
        path = self._local(key)
        if path is not None:
            return pl.read_parquet_metadata(path), pl.Schema(pl.read_parquet_schema(path))
        opener = getattr(self.storage, "open", None)
        if opener is not None and path is None:
            import pyarrow as pa
            import pyarrow.parquet as pq

            footer = pq.read_metadata(pa.PythonFile(opener(key), mode="r"))
            empty = pa.Table.from_batches([], schema=footer.schema.to_arrow_schema())
            return _footer(footer.metadata), pl.DataFrame(empty).schema
        data = self.storage.get(key)
        return _parquet_meta(data), _parquet_columns(data)

    def _open(self, key: str) -> Any:
        """A file to read ``key`` from with pyarrow, read in ranges where the store can (a folder's file,
        a bucket's object), else its bytes."""
        import pyarrow as pa

        if self.path is not None:
            path = self.path.joinpath(*key.split("/"))
            try:
                return pa.memory_map(str(path))
            except (FileNotFoundError, NotADirectoryError):
                raise FileNotFoundError(key) from None
            except pa.ArrowException as exc:
                raise OSError(str(exc)) from None
        opener = getattr(self.storage, "open", None)
        if opener is not None:
            return pa.PythonFile(opener(key), mode="r")
        return pa.BufferReader(self.storage.get(key))

    def _part_rows(self, key: str, ids: list[str], groups: Collection[int]) -> pl.DataFrame:
        """The rows of the answers ``ids`` in the compacted file ``key`` (row groups ``groups``), in the
        file's order: one scan, the answers a filter the reader pushes down to the row groups."""
        wanted = pl.col(_ENTRY).is_in(ids)
        path = self._local(key)
        if path is not None:
            return pl.scan_parquet(path, hive_partitioning=False, glob=False).filter(wanted).collect()
        opener = getattr(self.storage, "open", None)
        if opener is not None:  # a bucket: only the row groups wanted are fetched
            import pyarrow as pa
            import pyarrow.parquet as pq

            with pq.ParquetFile(pa.PythonFile(opener(key), mode="r")) as handle:
                stored = handle.read_row_groups(sorted(groups))
            return pl.DataFrame(stored).filter(wanted)
        data = self.storage.get(key)
        return pl.scan_parquet(io.BytesIO(data), hive_partitioning=False).filter(wanted).collect()

    def _read_from_parts(
        self, entries: list[Entry], table: str, version: str, *, relist: bool, schema: pl.Schema | None = None
    ) -> dict[str, pl.DataFrame]:
        parts = self._frame_parts(table, relist=relist)
        if schema is not None:
            for key, part in list(parts.items()):
                if part.version == version and part.columns is not None and part.columns != schema:
                    self._set_aside(key, "its columns are not the table's; its frames are built again")
                    with self._lock:
                        self._parts.get(table, {}).pop(key, None)
                    del parts[key]
        wanted: dict[str, dict[int, list[str]]] = {}
        for entry in entries:
            for key, part in parts.items():
                group = part.groups.get(entry.id)
                if group is not None and part.version == version:
                    wanted.setdefault(key, {}).setdefault(group, []).append(entry.id)
                    break
        found: dict[str, pl.DataFrame] = {}
        for key, groups in wanted.items():
            ids = sorted({i for group in groups.values() for i in group})
            try:
                rows = self._part_rows(key, ids, [g for g in groups if g >= 0])
            except FileNotFoundError:  # replaced by a newer compaction: the caller looks again
                continue
            except _unreadable() as exc:
                self._set_aside(key, exc)
                with self._lock:
                    self._parts.get(table, {}).pop(key, None)
                continue
            found.update(_by_entry(rows, ids))
        return found

    def frame_files(
        self, entries: Collection[Entry], table: str, version: str, *, schema: pl.Schema | None = None
    ) -> dict[str, str]:
        """The key of the file holding each entry's kept frame ``table`` of the flattener ``version``.

        Entries whose frame is not kept (or was kept by another flattener, or, with
        ``schema``, has other columns) are left out. Reads the footers of compacted files
        once, and of each entry's own file.
        """
        self.flush()  # the frames still being written first
        located: dict[str, str] = {}
        for relist in (False, True):
            parts = self._frame_parts(table, relist=relist)
            for entry in entries:
                for key, part in parts.items():
                    if entry.id in part.groups and part.version == version:
                        if schema is None or part.columns == schema:
                            located[entry.id] = key
                        break
            rest = [e for e in entries if e.id not in located]
            gone = False
            for entry in rest:
                key = self._frame_key(entry, table)
                try:
                    meta, found = self._footer_of(key)
                    columns = _without_entry(found) if schema is not None else None
                except FileNotFoundError:
                    gone = True
                    continue
                except _unreadable() as exc:
                    self._set_aside(key, exc)
                    continue
                if meta.get("storeframes.flattener") == version and columns == schema:
                    located[entry.id] = key
            if not gone:
                break
        return located

    def write_frame(self, entry: Entry, table: str, version: str, frame: pl.DataFrame, *, later: bool = False) -> None:
        """Keep ``frame`` as the table ``table`` of ``entry``, written by the flattener ``version``.

        The file holds the frame's columns and an ``entry`` column naming the answer its
        rows come from, so the files of a table are one dataset with compacted ones. It is
        written by polars, zstd, without column statistics (a file holds one answer; the
        compacted files, which hold many, have them).

        With ``later``, a frame of at least :attr:`WRITE_BEHIND_ROWS` rows is written on
        the cache's writer thread and this returns at once: a year of search history spends
        no time encoding Parquet before the user has the frame. Until its file is there,
        :meth:`read_frames` serves it from memory; :meth:`flush` waits for it (a client
        does when it is closed), and so does the interpreter at exit. Nothing paid for
        waits: the raw answer is kept before, and a frame whose write never happened (a
        killed process) is built from it again, at no cost.
        """
        if later and frame.height >= self.WRITE_BEHIND_ROWS:
            key = (entry.id, table)
            with self._lock:
                if self._writer is None:
                    self._writer = ThreadPoolExecutor(1, thread_name_prefix="storeframes-cache-writer")
                future = self._writer.submit(self._write_frame, entry, table, version, frame)
                self._writing[key] = (version, frame, future)
            future.add_done_callback(lambda done: self._written(key, done))
            return
        self._write_frame(entry, table, version, frame)

    def _written(self, key: tuple[str, str], done: Future[None]) -> None:
        with self._lock:
            held = self._writing.get(key)
            if held is not None and held[2] is done:
                del self._writing[key]
            if not self._writing and self._writer is not None:  # idle: its thread ends (a later write starts one)
                self._writer.shutdown(wait=False)
                self._writer = None

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every frame :meth:`write_frame` writes behind is in its file; False if ``timeout`` passed first."""
        with self._lock:
            futures = [future for _, _, future in self._writing.values()]
        if not futures:
            return True
        _, not_done = wait_for(futures, timeout=timeout)
        return not not_done

    def _written_later(
        self, entries: Collection[Entry], table: str, version: str, schema: pl.Schema | None
    ) -> dict[str, pl.DataFrame]:
        """The frames of ``entries`` still on their way to their files, by entry id."""
        if not self._writing:
            return {}
        with self._lock:
            held = [(e.id, self._writing.get((e.id, table))) for e in entries]
        return {
            entry_id: item[1]
            for entry_id, item in held
            if item is not None and item[0] == version and (schema is None or item[1].schema == schema)
        }

    def _write_frame(self, entry: Entry, table: str, version: str, frame: pl.DataFrame) -> None:
        meta = _provenance(entry, _TABLE_FORMAT, table=table, flattener=version, entry_id=entry.id)
        try:
            data = _parquet_bytes(frame.with_columns(pl.lit(entry.id, pl.String).alias(_ENTRY)), meta, statistics=False)
            self._mark()
            self.storage.put(self._frame_key(entry, table), data)
        except OSError as exc:
            warn(f"could not write a frame to the cache at {self.location}: {exc}", CacheWarning)

    # -- compaction -------------------------------------------------------------------

    def compact(self, *, frames: Mapping[str, str] | None = None, endpoint: str | None = None) -> dict[str, int]:
        """Merge the small files into a few, so that the cache opens and reads quickly; returns what it did.

        Each endpoint's index files (one per answer) become one compacted index file
        (``index/endpoint=<name>/part-*.parquet``: the same rows, every answer kept).
        With ``frames`` (``{table: flattener version}``, as the frame functions write
        them), each table's kept frames of that version become a few compacted files
        (``frames/table=<name>/part-*.parquet``, rows grouped by answer), leaving out the
        frames of answers that newer answers replaced in every cell, of answers no longer
        in the cache, and of other flatteners (they are rebuilt from the raw answer when
        needed, at no cost). Raw answers are never touched.

        A store that is not a cache (:meth:`is_cache`) is left untouched.

        Safe while other processes read and write the same cache: the merged files are
        written first and the files they replace removed after, and a reader accepts
        either state (an answer held by two files counts once); files written meanwhile
        are left for the next compaction. Two compactions at once waste work, never data.
        """
        self.flush()  # the frames still being written first
        done = {"index_files_merged": 0, "frame_files_merged": 0, "frames_dropped": 0, "files_written": 0}
        if not self.is_cache(mark=True):
            return done  # nothing of a cache to merge: a store that is not one is never touched
        names = [endpoint] if endpoint else list(ENDPOINTS)
        for name in names:
            try:
                merged, written = self._compact_index(name)
            except OSError as exc:  # what was merged stays merged; the rest waits for the next compaction
                self._warn_once(f"compact {name}", f"could not compact the {name} index at {self.location}: {exc}")
                continue
            done["index_files_merged"] += merged
            done["files_written"] += written
        if frames:
            current = self._current_entries()  # the answers whose frames stay, once for every table
            for table, version in frames.items():
                try:
                    merged, dropped, written = self._compact_frames(table, version, current)
                except OSError as exc:
                    self._warn_once(
                        f"compact {table}", f"could not compact the {table} frames at {self.location}: {exc}"
                    )
                    continue
                done["frame_files_merged"] += merged
                done["frames_dropped"] += dropped
                done["files_written"] += written
        return done

    def _answered(self, endpoint: str) -> dict[str, str]:
        """The entries of ``endpoint`` whose raw answer is in the store, each with the suffix of its
        answer's name (``.json.zst``, or ``.json.gz`` of format 1); one listing."""
        prefix = self._prefix("answers", endpoint)
        found: dict[str, str] = {}
        for key in self.storage.list(prefix):
            for suffix in _ANSWERS:
                if key.endswith(suffix) and "/" not in key[len(prefix) :]:
                    found.setdefault(_name(key).removesuffix(suffix), suffix)
        return found

    def _part_key(self, prefix: str) -> str:
        return f"{prefix}{_PART}{datetime.now(UTC):%Y%m%dT%H%M%S%fZ}-{secrets.token_hex(4)}.parquet"

    def _compact_index(self, endpoint: str) -> tuple[int, int]:
        """One compacted index file for ``endpoint``; (files replaced, files written)."""
        with self._lock:
            if not self._sync(endpoint):
                return 0, 0
            self._materialize(endpoint)
            # an index file of a newer format is the newer version's: never merged, never removed
            files = {k: v for k, v in self._files.get(endpoint, {}).items() if k not in self._newer_files}
        if not files:
            return 0, 0
        answered = self._answered(endpoint)
        ids = sorted({i for held in files.values() for i in held if i in answered})
        with self._lock:
            entries = [self._entries[i] for i in ids if i in self._entries]
        (first, held), *others = files.items()
        if not others and _name(first).startswith(_PART) and len(held) == len(entries):
            return 0, 0  # compacted already, every answer it lists still there
        written = 0
        if entries:
            key = self._part_key(self._prefix("index", endpoint))
            meta = {
                "storeframes.version": __version__,
                "storeframes.format": str(FORMAT),
                "storeframes.endpoint": endpoint,
                "storeframes.compacted": "index",
                "storeframes.entries": str(len(entries)),
                # the answers of format 1 (.json.gz), so a reader asks for them by that name
                "storeframes.gz": json.dumps([e.id for e in entries if answered[e.id] == _GZ], separators=(",", ":")),
            }
            with self._lock:
                self._gz.update(e.id for e in entries if answered[e.id] == _GZ)
            self.storage.put(key, _parquet_bytes(_index_rows(entries), meta))
            written = 1
            with self._lock:
                self._hold(key, entries)
        for old, _ in _read_many(self.storage.delete, list(files)):
            with self._lock:
                self._unhold(endpoint, old)
        return len(files), written

    def _compact_frames(self, table: str, version: str, current: set[str]) -> tuple[int, int, int]:
        """A few compacted files of ``table`` holding the frames of the ``current`` answers;
        (files replaced, answers' frames left out, files written)."""
        prefix = self._frames_prefix(table)
        keys = [k for k in self.storage.list(prefix) if k.endswith(".parquet") and "/" not in k[len(prefix) :]]
        parts = [k for k in keys if _name(k).startswith(_PART)]
        if not keys or (len(parts) == len(keys) and len(parts) <= 1 and not self._superseded_in(parts, current)):
            return 0, 0, 0
        import pyarrow as pa
        import pyarrow.compute as pc

        kept: list[pa.Table] = []
        kept_ids: set[str] = set()
        dropped: set[str] = set()
        seen: set[str] = set()
        read: list[str] = []
        written = rows = 0
        for key, stored in _read_many(self._read_whole, keys):
            if stored is None:
                continue
            read.append(key)
            meta = stored.schema.metadata or {}
            if _name(key).startswith(_PART):
                groups = json.loads(meta.get(b"storeframes.row_groups", b"[]"))
                ids = [i for group in groups for i in group] + json.loads(meta.get(b"storeframes.empty", b"[]"))
            else:
                ids = [_name(key).removesuffix(".parquet")]
            if meta.get(b"storeframes.flattener") != version.encode() or _ENTRY not in stored.schema.names:
                dropped.update(ids)
                continue
            keep = [i for i in ids if i in current and i not in seen]
            dropped.update(i for i in ids if i not in current)
            seen.update(keep)
            if len(keep) < len(ids):
                stored = stored.filter(pc.is_in(stored.column(_ENTRY), pa.array(keep, pa.string())))
            kept.append(stored.replace_schema_metadata(None))
            kept_ids.update(keep)
            rows += stored.num_rows
            if len(kept) >= 512:  # copied into one table: each file's table holds on to its read buffers
                kept = [pa.concat_tables(kept, promote_options="permissive").combine_chunks()]
            if rows >= _PART_ROWS:  # a file's worth: written now, so memory stays bounded
                written += self._write_frame_parts(prefix, table, version, kept, kept_ids)
                kept, kept_ids, rows = [], set(), 0
        written += self._write_frame_parts(prefix, table, version, kept, kept_ids)
        for _ in _read_many(self.storage.delete, read):  # on a few threads: a bucket deletes one request each
            pass
        with self._lock:
            self._parts.pop(table, None)  # listed again at the next read
        return len(read), len(dropped - seen), written

    def _read_whole(self, key: str) -> pa.Table | None:
        """A whole Parquet file of the store; None when it is gone (removed by another compaction) or unreadable."""
        import pyarrow.parquet as pq

        try:
            with pq.ParquetFile(self._open(key)) as handle:  # quicker than read_table, and no pyarrow.dataset
                table = handle.read()
                kept = {k: v for k, v in (handle.metadata.metadata or {}).items() if k != b"ARROW:schema"}
            # the file's key-value metadata, where a writer may have put it beside the Arrow schema's
            return table.replace_schema_metadata({**kept, **(table.schema.metadata or {})})
        except FileNotFoundError:
            return None
        except _unreadable() as exc:
            self._set_aside(key, exc)
            return None

    def _superseded_in(self, parts: list[str], current: set[str]) -> bool:
        """Whether compacted frame files hold frames of answers not ``current``."""
        for key in parts:
            part = self._read_part_footer(key)
            if part is not None and any(i not in current for i in part.groups):
                return True
        return False

    def _current_entries(self) -> set[str]:
        """The ids of the entries that are the newest of at least one of their cells."""
        with self._lock:
            for name in ENDPOINTS:
                self._sync(name)
                self._materialize(name)
            current: set[str] = set()
            for table in self._cells.values():
                current.update(candidates[-1].id for candidates in table.values() if candidates)
            return current

    def _write_frame_parts(self, prefix: str, table: str, version: str, tables: list[pa.Table], ids: set[str]) -> int:
        """Write the rows of ``tables`` (of the answers ``ids``) as compacted files; how many files.

        A file holds at most about :data:`_PART_ROWS` rows, in row groups of about
        :data:`_GROUP_ROWS` that never split an answer's rows; its footer lists the
        answers of each row group (and those with no rows), so a reader takes only the
        row groups it needs.
        """
        if not ids:
            return 0
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        merged = pa.concat_tables(tables, promote_options="permissive") if len(tables) > 1 else tables[0]
        merged = merged.sort_by(_ENTRY)
        counted = pc.value_counts(merged.column(_ENTRY))
        counts = dict(zip(counted.field("values").to_pylist(), counted.field("counts").to_pylist(), strict=True))
        files: list[tuple[list[list[str]], list[str]]] = [([], [])]  # per file: row groups, answers with no rows
        rows_in_file = rows_in_group = 0
        for entry_id in sorted(ids):
            n = counts.get(entry_id, 0)
            groups, empty = files[-1]
            if n == 0:
                empty.append(entry_id)
                continue
            if rows_in_file and rows_in_file + n > _PART_ROWS:
                files.append(([], []))
                groups, empty = files[-1]
                rows_in_file = 0
            if not groups or rows_in_group + n > _GROUP_ROWS:
                groups.append([])
                rows_in_group = 0
            groups[-1].append(entry_id)
            rows_in_group += n
            rows_in_file += n
        offset = 0
        for groups, empty in files:
            meta = {
                "storeframes.version": __version__,
                "storeframes.format": str(_TABLE_FORMAT),
                "storeframes.table": table,
                "storeframes.flattener": version,
                "storeframes.compacted": "frames",
                "storeframes.row_groups": json.dumps(groups, separators=(",", ":")),
                "storeframes.empty": json.dumps(empty, separators=(",", ":")),
            }
            buffer = io.BytesIO()
            with pq.ParquetWriter(buffer, merged.schema.with_metadata(meta)) as writer:
                for group in groups:
                    n = sum(counts[i] for i in group)
                    writer.write_table(merged.slice(offset, n).replace_schema_metadata(meta), row_group_size=n)
                    offset += n
            self.storage.put(self._part_key(prefix), buffer.getvalue())
        return len(files)

    # -- the ledger -----------------------------------------------------------------

    @staticmethod
    def _ledger_key(name: str) -> str:
        return f"ledger/{name}.parquet"

    def write_ledger(self, name: str, rows: pl.DataFrame | pa.Table) -> bool:
        """Keep ledger rows (schema :data:`~storeframes.ledger.LEDGER_SCHEMA`) as ``ledger/<name>.parquet``.

        Returns False, with a :class:`CacheWarning`, when the file cannot be written (the
        client keeps the rows and tries again at the end of the call). A session writes
        a small file per request, merged into files of up to 1000 rows now and then
        (see :mod:`storeframes.credits`).
        """
        if rows.is_empty() if isinstance(rows, pl.DataFrame) else rows.num_rows == 0:
            return True
        meta = {"storeframes.version": __version__, "storeframes.format": str(_TABLE_FORMAT)}
        try:
            if isinstance(rows, pl.DataFrame):  # by polars: no pyarrow to import for a call's few rows (the
                data = _parquet_bytes(rows, meta, arrow=False)  # ledger's readers take the file's metadata)
            else:
                import pyarrow.parquet as pq

                buffer = io.BytesIO()
                pq.write_table(rows.replace_schema_metadata(meta), buffer)
                data = buffer.getvalue()
            self._mark()
            self.storage.put(self._ledger_key(name), data)
        except OSError as exc:
            warn(
                f"could not write the ledger to the cache at {self.location}: {exc}",
                CacheWarning,
            )
            return False
        return True

    def remove_ledger(self, name: str) -> None:
        """Remove the ledger file ``ledger/<name>.parquet`` (once its rows are merged into another)."""
        self.storage.delete(self._ledger_key(name))

    def read_ledger(self) -> pl.DataFrame:
        """Every ledger row kept in the cache, oldest first, each once.

        A row is known by its ``row`` id: one found in two files (a session's small file
        and the chunk it was merged into, when a process stopped between writing the one
        and removing the other) is counted once. Files of earlier versions are read with
        ``service`` ``"unknown"`` and ids made of the file's name and the row's position.
        """
        import pyarrow as pa
        import pyarrow.parquet as pq

        from ..ledger import LEDGER_SCHEMA, ledger_arrow

        arrow_schema = ledger_arrow()
        tables: list[pa.Table] = []
        legacy: list[pl.DataFrame] = []
        for key in self._keys("ledger/"):
            name = key.removeprefix("ledger/")
            if not key.endswith(".parquet") or "/" in name:
                continue
            meta: dict[str, str] = {}
            try:
                with pq.ParquetFile(pa.BufferReader(self.storage.get(key))) as handle:  # quicker than read_table
                    meta = _footer(handle.metadata.metadata)  # the file's, whichever writer wrote it
                    if _newer_format(meta):
                        self._skip_newer(key)
                        continue
                    table = handle.read()
                if table.schema.names == arrow_schema.names and not (
                    table.column("service").null_count or table.column("row").null_count
                ):
                    tables.append(table.cast(arrow_schema))
                else:
                    legacy.append(conform_ledger(pl.DataFrame(table), name.removesuffix(".parquet")))
            except FileNotFoundError:  # merged and removed since the listing
                continue
            except _unreadable() as exc:
                if _newer_writer(meta):
                    self._skip_newer(key)
                else:
                    self._set_aside(key, exc)
        frames = legacy
        if tables:
            frames = [pl.DataFrame(pa.concat_tables(tables)).cast(LEDGER_SCHEMA), *legacy]
        if not frames:
            return pl.DataFrame(schema=LEDGER_SCHEMA)
        rows = pl.concat(frames) if len(frames) > 1 else frames[0]
        return rows.unique("row", keep="first", maintain_order=True).sort("time", "row")

    # -- looking around and clearing ----------------------------------------------

    def entry(self, entry_id: str) -> Entry | None:
        """The entry called ``entry_id`` (as in :attr:`Response.entry <storeframes.Response.entry>`), if known."""
        with self._lock:
            found = self._entries.get(entry_id)
            if found is None and entry_id in self._held:  # held by a compacted index, not made an entry yet
                for name in list(self._pending):
                    self._materialize(name)
                found = self._entries.get(entry_id)
            return found

    def entries(self, endpoint: str | None = None) -> list[Entry]:
        """Every entry in the cache (of one endpoint), oldest first."""
        names = [endpoint] if endpoint else list(ENDPOINTS)
        with self._lock:
            for name in names:
                self._sync(name)
                self._materialize(name)
            chosen = [e for e in self._entries.values() if e.endpoint in names]
        return sorted(chosen, key=lambda e: (e.fetched_at, e.id))

    def holds(self, service: str) -> bool:
        """Whether the cache holds answers of ``service`` (``"service"``, ``"sandbox-<seed>"``), without reading them.

        Looks at the index: the ``service`` column of each compacted index file and the
        footer of each answer's index file, the compacted ones first, stopping at the first
        answer of ``service``: a folder of its answers is known by a read or two. A folder
        without them is read to its end, in growing batches on a few threads (10,000 answers
        not compacted: under a second). Unreadable files are passed over.
        """
        if not self.is_cache():
            return False
        keys = [
            key for name in ENDPOINTS for key in self._keys(self._prefix("index", name)) if key.endswith(".parquet")
        ]
        keys.sort(key=lambda k: not _name(k).startswith(_PART))  # each compacted file names many
        read = functools.partial(_services_in, self.storage)
        done, batch = 0, 1
        with ThreadPoolExecutor(max_workers=8) as pool:
            while done < len(keys):
                if any(service in services for services in pool.map(read, keys[done : done + batch])):
                    return True
                done, batch = done + batch, min(batch * 4, 1024)
        return False

    def info(self) -> dict[str, Any]:
        """Location, size in bytes, entries, credits paid, spent and saved, unreadable files.

        Credits are given per service and never summed across services: ``credits_paid``
        (what the cached answers cost), ``credits_spent`` (the ledger's ``cost``: every
        answer charged, failures and answers cleared since included) and ``credits_saved``
        (by cache hits) are the real service's; ``by_service`` maps each service found
        (``"service"``, ``"sandbox-<seed>"``, ``"unknown"`` for ledger rows of earlier
        versions) to its ``entries``, ``paid``, ``spent`` and ``saved``. ``entries`` and
        ``by_endpoint`` count the answers of every service. The size and the count of files
        set aside come from one :meth:`~storeframes.store.Store.usage` of the store. ``files``
        counts the files of each kind (``answers``, ``index``, ``frames``, ``ledger``), the
        ``compacted`` index and frame files and the ``small`` ones (one per answer) that
        :meth:`compact` would merge, and the answers replaced in every cell by newer ones
        (``superseded``) whose frames it would drop.
        """
        self.flush()  # the frames still being written first
        usage = self.storage.usage()
        entries = self.entries()
        files = {"answers": 0, "index": 0, "frames": 0, "ledger": 0, "compacted": 0, "small": 0}
        for key in self._keys(""):
            kind = key.partition("/")[0]
            if kind in files and key.endswith((".parquet", *_ANSWERS)):
                files[kind] += 1
                if kind in ("index", "frames"):
                    files["compacted" if _name(key).startswith(_PART) else "small"] += 1
        current = self._current_entries()
        files["superseded"] = sum(e.id not in current for e in entries)
        ledger = self.read_ledger()
        by_service: dict[str, dict[str, int]] = {}

        def figures(service: str) -> dict[str, int]:
            return by_service.setdefault(service, {"entries": 0, "paid": 0, "spent": 0, "saved": 0})

        figures(SERVICE)
        for e in entries:
            counts = figures(e.service)
            counts["entries"] += 1
            counts["paid"] += e.cost
        for service, spent, saved in ledger.group_by("service").agg(pl.col("cost").sum(), pl.col("saved").sum()).rows():
            counts = figures(service)
            counts["spent"] += int(spent or 0)
            counts["saved"] += int(saved or 0)
        real = by_service[SERVICE]
        return {
            "path": self.location,
            "bytes": usage.size,
            "entries": len(entries),
            "by_endpoint": {name: sum(e.endpoint == name for e in entries) for name in ENDPOINTS},
            "credits_paid": real["paid"],
            "credits_spent": real["spent"],
            "credits_saved": real["saved"],
            "by_service": {name: by_service[name] for name in sorted(by_service, key=lambda n: (n != SERVICE, n))},
            "corrupt_files": usage.set_aside,
            "files": files,
        }

    def clear(
        self,
        *,
        endpoint: str | None = None,
        older_than: timedelta | None = None,
        failed: list[str] | None = None,
    ) -> int:
        """Remove cached answers (and their frames); returns how many entries went.

        ``endpoint`` keeps the others; ``older_than`` removes only what is older than
        that: answers fetched longer ago, files set aside as unreadable longer ago, and
        temporary files and answers without an index left by a stopped process (never
        younger than an hour, which may be a write in progress). The ledger of credits
        spent is kept.

        Only what this version knows is touched: a store that is not a cache
        (:meth:`is_cache`) is left as it is (0 is returned), and so are the files of
        endpoints it does not know, answers of a newer format and anything outside
        ``answers/``, ``index/``, ``frames/`` and ``ledger/``; a folder is never followed
        through a link. A file that cannot be removed (no permission, a folder where it
        should be) is reported with a :class:`CacheWarning` and skipped, and its key is
        added to ``failed`` when a list is given.

        >>> cache.clear(older_than=timedelta(days=30))  # doctest: +SKIP
        12
        """
        self.flush()  # the frames still being written first
        if (endpoint is not None and endpoint not in ENDPOINTS) or not self.is_cache(mark=True):
            return 0
        now = datetime.now(UTC)
        age = older_than.total_seconds() if older_than is not None else 0.0
        problems: list[str] = failed if failed is not None else []

        def problem(name: str, message: str) -> None:
            problems.append(name)
            warn(f"{message} at {self.location}", CacheWarning)

        def remove(key: str) -> bool:
            try:
                self.storage.delete(key)
                return True
            except OSError as exc:
                problem(key, f"could not remove {key} ({exc}) from the cache")
                return False

        frames: dict[str, list[str]] = {}
        parts: list[str] = []
        for key in self._keys("frames/"):
            pieces = key.split("/")
            if len(pieces) == 3 and pieces[2].endswith(".parquet"):
                if pieces[2].startswith(_PART):
                    parts.append(key)
                else:  # frames/table=<name>/<entry>.parquet, or frames/<name>/<entry>.parquet of earlier versions
                    frames.setdefault(pieces[2].removesuffix(".parquet"), []).append(key)
        names = [endpoint] if endpoint else list(ENDPOINTS)
        with self._lock:  # an index that cannot be listed: its answers are not taken for answers without one
            listed = [name for name in names if self._sync(name)]
        removed: set[str] = set()
        rewrite: set[str] = set()
        for entry in self.entries(endpoint):
            if older_than is not None and now - entry.fetched_at <= older_than:
                continue
            if entry.id in self._newer or self._answer_format(entry) > FORMAT:
                continue  # a newer version's answer: left to it
            if not remove(self._index_key(entry)):
                continue  # still listed: its answer stays with it
            answer_gone = all([remove(key) for key in self._answer_keys(entry)])  # under either name
            for key in frames.get(entry.id, ()):
                remove(key)
            with self._lock:
                files = self._files.get(entry.endpoint, {})
                if any(entry.id in held and _name(key).startswith(_PART) for key, held in files.items()):
                    rewrite.add(entry.endpoint)
            self._forget(entry)
            if answer_gone:
                removed.add(entry.id)
        for name in sorted(rewrite):  # a compacted index listing removed answers: write it again without them
            try:
                self._compact_index(name)
            except OSError as exc:
                problem(self._prefix("index", name), f"could not rewrite the {name} index ({exc})")
        for key in parts if removed else ():  # compacted frames of removed answers only; others wait for compaction
            part = self._read_part_footer(key)
            if part is not None and part.groups and set(part.groups) <= removed:
                remove(key)
        with self._lock:
            self._parts.clear()
            known = set(self._held) | self._newer | removed
        stale_age = max(_STALE_SECONDS, age)
        for name in listed:  # answers whose index was never written: their process stopped between the two
            for key in self._keys(self._prefix("answers", name)):
                pieces = key.split("/")
                suffix = next((s for s in _ANSWERS if pieces[-1].endswith(s)), None)
                if len(pieces) != 3 or suffix is None or key in problems:
                    continue
                if pieces[2].removesuffix(suffix) in known:
                    continue
                try:
                    written = self.storage.mtime(key)
                except OSError:
                    continue
                if (
                    written is not None
                    and now.timestamp() - written > stale_age
                    and _format_of(self._head(key)) <= FORMAT
                ):
                    remove(key)
        prefixes = [self._prefix(kind, name) for name in names for kind in ("answers", "index")]
        if endpoint is None:
            prefixes += ["frames/", "ledger/"]
        for prefix in prefixes:  # temporary files of stopped writers, and files set aside
            try:
                self.storage.sweep(stale_age, prefix=prefix, set_aside_older_than_seconds=age)
            except SweepError as exc:
                for name, error in exc.failures:
                    problem(name, f"could not remove {name} ({error}) from the cache")
            except OSError as exc:
                problem(prefix, f"could not sweep {prefix} ({exc})")
        return len(removed)

    def _answer_format(self, entry: Entry) -> int:
        """The format the answer of ``entry`` says it has (:data:`FORMAT` when it cannot tell)."""
        for key in self._answer_keys(entry):
            head = self._head(key)
            if head is not None:
                return _format_of(head)
        return FORMAT

    def _head(self, key: str) -> bytes | None:
        """The first bytes of an answer file, decompressed; None when it is gone, b"" when unreadable."""
        try:
            data = self.storage.get(key)
        except FileNotFoundError:
            return None
        except OSError:
            return b""
        try:
            if key.endswith(_ZST):
                return _unzstd(data, most=4096)
            return zlib.decompressobj(wbits=31).decompress(data, 256)
        except _unreadable():
            return b""


def _format_of(head: bytes | None) -> int:
    """The format an answer file's first bytes say it has (:data:`FORMAT` when they say none)."""
    found = re.match(rb'\s*\{\s*"format"\s*:\s*(\d+)', head or b"")
    return int(found.group(1)) if found else FORMAT
