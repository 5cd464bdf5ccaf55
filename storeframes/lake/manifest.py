"""Reproducibility manifests: what an analysis read, and whether another cache or lake still gives it.

:func:`manifest` records, for each table an analysis read from the cache (``"metadata"``,
``"search_history"`` ...), its row count, a content hash and the answers it covers; for each
published table this process read (:func:`storeframes.read_table`), its address and version;
and for each frame the caller passes, its row count and content hash. Written as JSON beside a
notebook, it lets a colleague ask :func:`check_manifest` whether their cache (or the lake)
still gives the same data, and which table does not.

The content hash does not depend on the order of the rows or of the columns: each row is
written as canonical JSON (columns by name, dates and times in ISO form, floats in Python's
shortest exact form), hashed with SHA-256, and the sorted row hashes are hashed again with the
column names. It is the same in every process and with every polars version.

>>> import storeframes as sf
>>> sf.manifest("metadata", "search_history", ranks=ranks, path="analysis-manifest.json")  # doctest: +SKIP
>>> sf.check_manifest("analysis-manifest.json", cache_dir="storeframes-cache").ok  # doctest: +SKIP
True
"""

from __future__ import annotations

import hashlib
import html
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl

from .._tracebacks import user_facing
from .._version import __version__
from ..cache import Cache, open_cache, require_cache
from ..cache.opening import default_cache_dir
from ..cache.stores import is_url
from ..errors import InvalidParameterError, StoreframesError
from ..kept.tables import TABLES, lazy_rows, newest, service_of, spec_of
from ..kept.tables import endpoints_of as _endpoints_of
from .read import LakeRead, opened, reads

__all__ = ["CheckItem", "Manifest", "ManifestCheck", "check_manifest", "content_hash", "manifest"]

FORMAT = 1
"""The version of the manifest's JSON layout."""

NOT_CHECKABLE = "recorded, not checkable"
"""The status of a frame the caller passed: its rows were recorded, and nothing can make them again."""


def _plain(value: Any) -> Any:
    """A value JSON has no form of, in a canonical text (the ``default`` of :func:`json.dumps`)."""
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, timedelta):
        return f"{value // timedelta(microseconds=1)}us"
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    raise TypeError(f"no canonical form for {type(value).__name__}")


def content_hash(frame: pl.DataFrame | pl.LazyFrame) -> str:
    """A SHA-256 of the frame's rows and column names, whatever their order: ``"sha256:<64 hex digits>"``.

    Two frames with the same column names and the same rows (as a multiset, in any order) have the
    same hash, in any process and with any polars version; a changed value, row or column name
    changes it. A lazy frame is collected first.

    >>> import polars as pl
    >>> a = pl.DataFrame({"app_id": ["1", "2"], "rank": [3, 1]})
    >>> b = pl.DataFrame({"rank": [1, 3], "app_id": ["2", "1"]})
    >>> content_hash(a) == content_hash(b)
    True
    >>> content_hash(a)[:15]
    'sha256:6d51488a'
    """
    if isinstance(frame, pl.LazyFrame):
        frame = frame.collect()
    columns = sorted(frame.columns)
    rows = sorted(
        hashlib.sha256(json.dumps(row, default=_plain, sort_keys=True, ensure_ascii=False).encode()).digest()
        for row in frame.select(columns).iter_rows()
    )
    digest = hashlib.sha256(json.dumps(columns, ensure_ascii=False).encode())
    for row in rows:
        digest.update(row)
    return f"sha256:{digest.hexdigest()}"


# -- what a manifest records ------------------------------------------------------------------


@dataclass(frozen=True)
class TableRecord:
    """A table read from the cache: the service whose answers, its rows, their hash, the answers covered."""

    name: str
    service: str
    rows: int
    hash: str
    answers: int
    newest_fetched_at: str | None


@dataclass(frozen=True)
class DeltaRecord:
    """A published table this process read: its address, name and version, its rows and their hash."""

    uri: str
    table: str
    version: int
    rows: int
    hash: str


@dataclass(frozen=True)
class FrameRecord:
    """A frame the caller passed: its name, rows, hash and columns."""

    name: str
    rows: int
    hash: str
    columns: tuple[str, ...]


def _refused(path: Any, why: str) -> InvalidParameterError:
    return InvalidParameterError(
        "path", str(path), f"a manifest written by sf.manifest: {why}", endpoint="check_manifest"
    )


@dataclass(frozen=True)
class Manifest:
    """What an analysis read: tables of the cache, published tables at their versions, frames.

    ``to_json()`` gives the file :func:`manifest` writes (sorted keys, indented);
    ``Manifest.load(path)`` reads one back. ``path`` is where it was written or read, if anywhere.
    """

    created_at: str
    storeframes_version: str
    cache: str | None
    tables: tuple[TableRecord, ...] = ()
    delta: tuple[DeltaRecord, ...] = ()
    frames: tuple[FrameRecord, ...] = ()
    path: str | None = field(default=None, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The manifest as JSON's values (what the file holds)."""
        return {
            "format": FORMAT,
            "created_at": self.created_at,
            "storeframes_version": self.storeframes_version,
            "cache": self.cache,
            "content_hash": "sha256 of each row as canonical JSON, sorted, with the column names: order-independent",
            "tables": {t.name: {k: v for k, v in vars(t).items() if k != "name"} for t in self.tables},
            "delta": [vars(d) for d in self.delta],
            "frames": {f.name: {"rows": f.rows, "hash": f.hash, "columns": list(f.columns)} for f in self.frames},
        }

    def to_json(self) -> str:
        """The manifest's file: JSON with sorted keys, indented, ending with a newline."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    @classmethod
    def from_dict(cls, data: Any, *, path: str | None = None) -> Manifest:
        """The manifest ``data`` (a file's JSON) describes; anything else refused, naming ``path``."""
        try:
            if data.get("format") != FORMAT:
                raise _refused(path, f"format {data.get('format')!r}, where this version reads {FORMAT}")
            tables = tuple(TableRecord(name=n, **v) for n, v in sorted(data["tables"].items()))
            delta = tuple(DeltaRecord(**d) for d in data["delta"])
            frames = tuple(
                FrameRecord(n, v["rows"], v["hash"], tuple(v["columns"])) for n, v in sorted(data["frames"].items())
            )
            return cls(data["created_at"], data["storeframes_version"], data["cache"], tables, delta, frames, path)
        except (AttributeError, KeyError, TypeError) as exc:
            raise _refused(path, f"{type(exc).__name__} {exc}") from None

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Manifest:
        """The manifest in the file at ``path``."""
        where = os.fspath(path)
        try:
            data = json.loads(Path(where).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise _refused(where, f"it could not be read as JSON ({type(exc).__name__})") from None
        return cls.from_dict(data, path=where)

    def __repr__(self) -> str:
        lines = [f"Manifest of {self.created_at} (storeframes {self.storeframes_version}), cache {self.cache}"]
        lines += [
            f"  table {t.name}: {t.rows:,} rows from {t.answers:,} answers, newest {t.newest_fetched_at}, {t.hash[:19]}"
            for t in self.tables
        ]
        lines += [f"  delta {d.uri}/{d.table} version {d.version}: {d.rows:,} rows, {d.hash[:19]}" for d in self.delta]
        lines += [f"  frame {f.name}: {f.rows:,} rows, {f.hash[:19]}" for f in self.frames]
        if self.path is not None:
            lines.append(f"  written to {self.path}")
        return "\n".join(lines)


# -- making one -------------------------------------------------------------------------------


def _open(cache_dir: Any, storage_options: Mapping[str, str] | None, *, what: str) -> Cache:
    """The cache to read: the bucket's options go with a bucket address only (they may be the lake's); a place
    with no cache raises :class:`~storeframes.NoCacheError`, as a read of it would record 0 rows of each table."""
    target = default_cache_dir() if cache_dir is None or cache_dir is True else cache_dir
    options = storage_options if isinstance(target, str) and is_url(target) else None
    cache = open_cache(target, options)
    if cache is None:
        raise InvalidParameterError("cache_dir", cache_dir, "a folder or a bucket address: the tables are read there")
    if not isinstance(target, Cache):
        require_cache(cache, what=what)
    return cache


def _table_record(cache: Cache, name: str, service: str | None) -> TableRecord:
    """What ``cache`` holds of table ``name`` now, of ``service`` (by default as :func:`storeframes.scan` chooses)."""
    spec = TABLES[name]
    entries = [e for ep in _endpoints_of(spec) for e in cache.entries(ep.name)]
    chosen_service = service_of(entries, service, what="manifest")
    chosen = newest([e for e in entries if e.service == chosen_service])
    covered = [e for e in entries if e.id in chosen]
    frame = lazy_rows(cache, spec, chosen_service, newest, what="manifest").collect()
    newest_at = max((e.fetched_at for e in covered), default=None)
    if newest_at is not None and newest_at.tzinfo is not None:
        newest_at = newest_at.astimezone(UTC)
    shown = newest_at.isoformat() if newest_at is not None else None
    return TableRecord(name, chosen_service, frame.height, content_hash(frame), len(covered), shown)


def _delta_rows(read: LakeRead, storage_options: Mapping[str, str] | None) -> pl.DataFrame:
    """The rows of a published table at the version read, as :func:`storeframes.read_table` gives them."""
    return opened(read.uri, read.table, read.version, None, storage_options)[0].collect()


def _frame_record(name: str, frame: Any) -> FrameRecord:
    if not isinstance(frame, (pl.DataFrame, pl.LazyFrame)):
        raise InvalidParameterError(
            name, type(frame).__name__, "a polars DataFrame or LazyFrame (a table's name goes first, unnamed)"
        )
    collected = frame.collect() if isinstance(frame, pl.LazyFrame) else frame
    return FrameRecord(name, collected.height, content_hash(collected), tuple(collected.columns))


@user_facing
def manifest(
    *frames_or_tables: str | pl.DataFrame | pl.LazyFrame,
    path: str | os.PathLike[str] | None = None,
    cache_dir: Any = None,
    storage_options: Mapping[str, str] | None = None,
    service: str | None = None,
    **frames: pl.DataFrame | pl.LazyFrame,
) -> Manifest:
    """Record what an analysis read: tables of the cache, the published tables read, and frames.

    Each text of ``frames_or_tables`` is a table of the cache (``"metadata"``,
    ``"search_history"``; a frame function's name works too), read as :func:`storeframes.scan`
    reads it from ``cache_dir`` (a folder or a bucket address, with ``storage_options``; by
    default the default cache) and ``service`` (by default the one :func:`~storeframes.scan`
    chooses): its row count, content hash (see :func:`content_hash`), the number of answers it
    covers and the newest one's ``fetched_at``. A table the cache holds no answer of is
    refused (a wrong ``cache_dir``?). Every published table this process read with
    :func:`storeframes.read_table` is recorded with its version, rows and hash (read again
    at that version, with ``storage_options``). A polars frame, unnamed among
    ``frames_or_tables`` (called ``frame_1``, ``frame_2`` ...) or named as a keyword
    (``ranks=ranks``), is recorded by its rows, hash and columns.

    With ``path``, the manifest is written there as JSON (sorted keys), with the storeframes
    version, the time it was made and the cache's location (a bucket's address, never a
    credential). Returns the :class:`Manifest`; :func:`check_manifest` checks one.

    >>> import storeframes as sf
    >>> recorded = sf.manifest("metadata", "search_history", ranks=ranks, cache_dir="storeframes-cache",
    ...                        path="analysis-manifest.json")  # doctest: +SKIP
    >>> [t.name for t in recorded.tables]  # doctest: +SKIP
    ['metadata', 'search_history']
    """
    names: list[str] = []
    records: list[FrameRecord] = []
    for item in frames_or_tables:
        if isinstance(item, str):
            names.append(spec_of(item, TABLES, what="manifest").table.name)
        elif isinstance(item, (pl.DataFrame, pl.LazyFrame)):
            records.append(_frame_record(f"frame_{len(records) + 1}", item))
        else:
            allowed = f"a table's name (one of {', '.join(TABLES)}) or a polars DataFrame or LazyFrame"
            raise InvalidParameterError("frames_or_tables", type(item).__name__, allowed, endpoint="manifest")
    taken = {r.name for r in records}
    for name, frame in frames.items():
        if name in taken:
            raise InvalidParameterError(name, name, "a name other than those given to the unnamed frames")
        records.append(_frame_record(name, frame))
    location = None
    tables: list[TableRecord] = []
    if names:
        cache = _open(cache_dir, storage_options, what="manifest")
        location = cache.location
        for name in dict.fromkeys(names):
            record = _table_record(cache, name, service)
            if record.answers == 0:
                raise InvalidParameterError(
                    "frames_or_tables",
                    name,
                    f"a table the cache at {location} holds answers of: it holds none of {name}",
                )
            tables.append(record)
    read_before = reads()
    if not names and not records and not read_before:
        allowed = "a table's name or a frame: nothing was given, and no published table was read (sf.read_table)"
        raise InvalidParameterError("frames_or_tables", (), allowed, endpoint="manifest")
    delta = []
    for read in read_before:
        rows = _delta_rows(read, storage_options)
        delta.append(DeltaRecord(read.uri, read.table, read.version, rows.height, content_hash(rows)))
    made = Manifest(
        datetime.now(UTC).isoformat(timespec="seconds"),
        __version__,
        location,
        tuple(sorted(tables, key=lambda t: t.name)),  # by name, as the file lists them
        tuple(delta),
        tuple(sorted(records, key=lambda f: f.name)),
    )
    if path is None:
        return made
    Path(path).write_text(made.to_json(), encoding="utf-8")
    return Manifest(made.created_at, __version__, location, made.tables, made.delta, made.frames, os.fspath(path))


# -- checking one -----------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckItem:
    """One recorded read, checked: ``status`` is ``"same"``, ``"changed"``, ``"missing"`` or
    :data:`NOT_CHECKABLE` (a frame the caller passed); ``rows_after`` is None where nothing was read."""

    kind: str
    name: str
    status: str
    rows_before: int
    rows_after: int | None
    note: str = ""

    def line(self) -> str:
        """The item in words, on one line."""
        after = "" if self.rows_after is None else f", {self.rows_after:,} now"
        note = f"; {self.note}" if self.note else ""
        return f"{self.kind} {self.name}: {self.status} ({self.rows_before:,} rows recorded{after}{note})"


CHECK_SCHEMA = pl.Schema(
    {
        "kind": pl.String,
        "name": pl.String,
        "status": pl.String,
        "rows_before": pl.Int64,
        "rows_after": pl.Int64,
        "note": pl.String,
    }
)
"""The columns of :meth:`ManifestCheck.to_frame`."""


@dataclass(frozen=True)
class ManifestCheck:
    """A manifest checked against a cache (and the lake): each recorded read, same, changed or missing.

    ``ok`` is True when every table and published table gives the same rows (frames the caller
    passed cannot be made again and do not count); ``changed`` and ``missing`` name the others.
    """

    items: tuple[CheckItem, ...]
    cache: str | None
    manifest: str | None

    @property
    def ok(self) -> bool:
        """Whether every checkable read gives the same data."""
        return all(i.status in ("same", NOT_CHECKABLE) for i in self.items)

    @property
    def changed(self) -> list[str]:
        """The names of the tables (a published one by its address) whose data changed."""
        return [i.name for i in self.items if i.status == "changed"]

    @property
    def missing(self) -> list[str]:
        """The names of the tables the cache (or the lake) no longer gives."""
        return [i.name for i in self.items if i.status == "missing"]

    def to_frame(self) -> pl.DataFrame:
        """One row per recorded read: ``kind`` (table, delta, frame), ``name``, ``status``, ``rows_before``,
        ``rows_after`` (Int64, null where nothing was read) and ``note`` (String)."""
        return pl.DataFrame([vars(i) for i in self.items], schema=CHECK_SCHEMA)

    def _summary(self) -> str:
        verdict = (
            "the same data"
            if self.ok
            else ", ".join(
                f"{len(names)} {what}"
                for what, names in (("changed", self.changed), ("missing", self.missing))
                if names
            )
        )
        source = f" of {self.manifest}" if self.manifest else ""
        return f"ManifestCheck{source} against {self.cache}: {verdict}"

    def __repr__(self) -> str:
        return "\n".join([self._summary(), *(f"  {i.line()}" for i in self.items)])

    def _repr_html_(self) -> str:
        rows = "".join(
            "<tr>"
            + "".join(
                f"<td>{html.escape(str(v))}</td>"
                for v in (i.kind, i.name, i.status, i.rows_before, "" if i.rows_after is None else i.rows_after, i.note)
            )
            + "</tr>"
            for i in self.items
        )
        head = "".join(f"<th>{name}</th>" for name in CHECK_SCHEMA.names())
        return f"<p>{html.escape(self._summary())}</p><table><tr>{head}</tr>{rows}</table>"


def _check_table(cache: Cache, recorded: TableRecord) -> CheckItem:
    now = _table_record(cache, recorded.name, recorded.service)
    if now.answers == 0:
        note = f"the cache holds no answer of {recorded.name} from {recorded.service}"
        return CheckItem("table", recorded.name, "missing", recorded.rows, None, note)
    if (now.rows, now.hash) == (recorded.rows, recorded.hash):
        return CheckItem("table", recorded.name, "same", recorded.rows, now.rows)
    note = "content hash differs" if now.rows == recorded.rows else f"{now.rows - recorded.rows:+,} rows"
    note += (
        f"; {now.answers:,} answers, newest {now.newest_fetched_at} "
        f"(recorded {recorded.answers:,}, newest {recorded.newest_fetched_at})"
    )
    return CheckItem("table", recorded.name, "changed", recorded.rows, now.rows, note)


def _check_delta(recorded: DeltaRecord, storage_options: Mapping[str, str] | None) -> CheckItem:
    name = f"{recorded.uri}/{recorded.table}@{recorded.version}"
    try:
        rows = _delta_rows(LakeRead(recorded.uri, recorded.table, recorded.version), storage_options)
    except StoreframesError as exc:  # said in words, without a credential: a version vacuumed, a bucket gone
        return CheckItem("delta", name, "missing", recorded.rows, None, f"not readable: {exc}")
    except Exception as exc:  # anything else of delta-rs: its text is not repeated
        return CheckItem("delta", name, "missing", recorded.rows, None, f"not readable ({type(exc).__name__})")
    if (rows.height, content_hash(rows)) == (recorded.rows, recorded.hash):
        return CheckItem("delta", name, "same", recorded.rows, rows.height)
    return CheckItem("delta", name, "changed", recorded.rows, rows.height, "content hash differs")


@user_facing
def check_manifest(
    path: str | os.PathLike[str] | Manifest,
    cache_dir: Any = None,
    *,
    storage_options: Mapping[str, str] | None = None,
) -> ManifestCheck:
    """Whether a cache (and the lake) still gives the data a manifest recorded, and which table does not.

    ``path`` is a manifest's file (or a :class:`Manifest`). Each table is read again from
    ``cache_dir`` (a folder or a bucket address, with ``storage_options``; by default the default
    cache) with the service recorded: ``"same"`` when its rows and content hash are those recorded,
    ``"changed"`` (with the rows and answers before and now) when not, ``"missing"`` when the cache
    holds no answer of it; a ``cache_dir`` with no cache there raises :class:`~storeframes.NoCacheError`
    (a mistyped folder is not a cache whose every table went missing). Each published table is read
    again at the version recorded (with
    ``storage_options``). Frames the caller passed are listed as ``"recorded, not checkable"``.
    Nothing is fetched and no token is needed.

    Returns a :class:`ManifestCheck`: ``.ok``, ``.changed`` and ``.missing`` (names),
    ``.to_frame()`` (columns ``kind``, ``name``, ``status``, ``rows_before``, ``rows_after``,
    ``note``), shown as a table in a notebook.

    >>> import storeframes as sf
    >>> checked = sf.check_manifest("analysis-manifest.json", cache_dir="colleague-cache")  # doctest: +SKIP
    >>> checked.changed  # doctest: +SKIP
    ['metrics']
    """
    recorded = path if isinstance(path, Manifest) else Manifest.load(path)
    items: list[CheckItem] = []
    location = None
    if recorded.tables:
        cache = _open(cache_dir, storage_options, what="check_manifest")
        location = cache.location
        items += [_check_table(cache, table) for table in recorded.tables]
    items += [_check_delta(delta, storage_options) for delta in recorded.delta]
    items += [CheckItem("frame", f.name, NOT_CHECKABLE, f.rows, None) for f in recorded.frames]
    return ManifestCheck(tuple(items), location, recorded.path)
