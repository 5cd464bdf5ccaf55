"""The machinery of the cache's read side, shared by the wing's datasets: which answers, their files, their rows.

A dataset (:func:`storeframes.scan`, :func:`storeframes.snapshots`, :func:`storeframes.observed_changes`,
the lake's publishing) is a *chooser* of kept answers (:data:`Chooser`: :func:`newest` for a scan,
:func:`daily_chooser` for the days kept) handed to :func:`lazy_rows`, which finds the files of the
chosen answers when the frame is collected, builds the frames never made (:func:`build_missing`) and
reads them (:func:`file_sources`). :data:`TABLES` names the tables, :func:`open_for` opens the cache a
dataset reads, :func:`spec_of`, :func:`service_of` and :func:`as_date` read its parameters.

>>> from storeframes.kept.tables import TABLES, lazy_rows, newest, open_for
>>> lazy_rows(open_for("analysis-cache", None), TABLES["versions"], None, newest, what="scan")  # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from datetime import date, datetime
from typing import Any

import polars as pl
from polars.io.plugins import register_io_source

from ..answers import Entry
from ..cache import RELISTS, Cache, open_cache, relist_pause, require_cache
from ..catalog import ENDPOINTS, Endpoint
from ..errors import CacheUnavailableError, ConfigurationError, InvalidParameterError
from ..fetch.pipeline import FRAMES, FrameSpec, cell_columns
from ..ledger import SERVICE
from ..schemas import LISTS, SEARCH_LIST, read_schema

__all__ = [
    "SCANS_NEST",
    "SNAPSHOT_DATE",
    "TABLES",
    "Cells",
    "Chooser",
    "as_date",
    "build_missing",
    "daily_chooser",
    "endpoints_of",
    "file_sources",
    "flattener_versions",
    "lazy_rows",
    "newest",
    "open_for",
    "service_of",
    "spec_of",
    "with_list",
]

Cells = list[tuple[str | None, str | None, Any]]
"""Cells of an entry whose rows a dataset keeps."""

Chooser = Callable[[list[Entry]], dict[str, Cells]]
"""Given the entries of a table's endpoints (of one service), the cells whose rows to keep, by entry id."""

SNAPSHOT_DATE = "snapshot_date"
"""The column a dated dataset puts first: the UTC day of the answer's ``fetched_at``."""

TABLES: dict[str, FrameSpec] = {spec.table.name: spec for spec in FRAMES.values()}
"""The tables :func:`~storeframes.scan` reads, by name (``"versions"``), with the frame spec that writes each."""


def flattener_versions() -> dict[str, str]:
    """The flattener version of each table, as the frame functions of this version write them."""
    return {name: spec.version for name, spec in TABLES.items()}


def open_for(cache_dir: Any, storage_options: Mapping[str, str] | None, *, what: str = "scan") -> Cache:
    """The cache a dataset reads: a folder or a bucket where a cache is, never none. A place with no cache
    raises :class:`~storeframes.NoCacheError` (see :func:`~storeframes.cache.require_cache`), since its 0 rows
    would not be true; a :class:`~storeframes.cache.Cache` given is read as it is (its opener decided).
    ``what`` names the read in its errors."""
    if cache_dir is False:
        raise ConfigurationError(
            "scan, snapshots and compact need a cache: give cache_dir a folder or a bucket address"
        )
    cache = open_cache(cache_dir, storage_options)
    assert cache is not None
    if not isinstance(cache_dir, Cache):
        require_cache(cache, what=what)
    return cache


def spec_of(table: Any, tables: Mapping[str, FrameSpec], *, what: str, allowed: str | None = None) -> FrameSpec:
    """The frame spec of ``table`` (a table's or a frame function's name) among ``tables``; refused with
    ``allowed`` (by default the names of ``tables``) otherwise."""
    if isinstance(table, str):
        name = table.removesuffix("_frame")
        if name in tables:
            return tables[name]
    raise InvalidParameterError("table", table, allowed or f"one of {', '.join(tables)}", endpoint=what)


def endpoints_of(spec: FrameSpec) -> list[Endpoint]:
    """The endpoints whose answers make ``spec``'s table (two where a frame function switches between them)."""
    names = [spec.endpoint] + ([spec.switch[1]] if spec.switch else [])
    return [ENDPOINTS[name] for name in names]


def service_of(entries: list[Entry], service: str | None, *, what: str) -> str:
    """The service whose answers a dataset reads: the one asked for, else the real service's, else the
    one service the cache holds; several others are refused."""
    services = sorted({e.service for e in entries})
    if service is not None:
        return service
    if SERVICE in services or not services:
        return SERVICE
    if len(services) == 1:
        return services[0]
    raise InvalidParameterError(
        "service", None, f"one of {', '.join(services)}: the cache holds answers of several services", endpoint=what
    )


def newest(entries: list[Entry], *, daily: bool = False) -> dict[str, Cells]:
    """For each entry, the cells it is the newest answer of (within its endpoint and scope; with ``daily``,
    within the UTC day of its ``fetched_at`` too). Cells whose newest answer says the app is unavailable
    are left out."""
    found: dict[tuple[str, str, tuple[Any, ...], Any], Entry] = {}
    for entry in entries:
        day = entry.day if daily else None
        for cell in entry.cells:
            key = (entry.endpoint, entry.scope, cell, day)
            held = found.get(key)
            if held is None or (held.fetched_at, held.id) < (entry.fetched_at, entry.id):
                found[key] = entry
    cells: dict[str, Cells] = {}
    for (_, _, cell, _), entry in found.items():
        if entry.available:
            cells.setdefault(entry.id, []).append(cell)
    return cells


def daily_chooser(endpoints: set[str], start: date | None, end: date | None) -> Chooser:
    """The chooser of a dataset of the days kept: of the answers of ``endpoints`` fetched between ``start``
    and ``end`` (UTC days, inclusive), the newest of each cell on each day."""

    def choose(entries: list[Entry]) -> dict[str, Cells]:
        within = [
            e
            for e in entries
            if e.endpoint in endpoints and (start is None or e.day >= start) and (end is None or e.day <= end)
        ]
        return newest(within, daily=True)

    return choose


def as_date(name: str, value: Any, *, what: str) -> date | None:
    """``value`` as a date (a :class:`~datetime.date` or an ISO text ``"2026-11-20"``); None stays None. Any
    other value is refused as parameter ``name`` of ``what``.

    >>> as_date("start", "2026-11-20", what="snapshots")
    datetime.date(2026, 11, 20)
    """
    if value is None:
        return None
    if isinstance(value, date) and not isinstance(value, datetime):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise InvalidParameterError(
        name, value, "a date: a datetime.date or an ISO date text such as '2026-11-20'", endpoint=what
    )


def lazy_rows(
    cache: Cache, spec: FrameSpec, service: str | None, choose: Chooser, *, what: str, dated: bool = False
) -> pl.LazyFrame:
    """A LazyFrame of the rows of ``spec``'s table in the answers ``choose`` picks (of the service chosen
    now, see :func:`service_of`), found when it is collected, each time it is; with ``dated``, a
    :data:`SNAPSHOT_DATE` column first. ``what`` names the function in its errors (``"scan"``)."""
    eps = endpoints_of(spec)
    chosen = service_of([e for ep in eps for e in cache.entries(ep.name)], service, what=what)  # refused now
    source = _Source(cache, spec, chosen, choose, what=what, dated=dated)
    read = read_schema(spec.table).schema
    schema = pl.Schema([(SNAPSHOT_DATE, pl.Date()), *read.items()]) if dated else read
    return register_io_source(source, schema=schema)


class _Source:
    """What a dataset's LazyFrame calls when it is collected: the rows the cache holds then."""

    def __init__(self, cache: Cache, spec: FrameSpec, service: str, choose: Chooser, *, what: str, dated: bool):
        self._cache = cache
        self._spec = spec
        self._service = service
        self._choose = choose
        self._what = what
        self._dated = dated

    def __call__(
        self, with_columns: list[str] | None, predicate: pl.Expr | None, n_rows: int | None, _batch: int | None
    ) -> Iterator[pl.DataFrame]:
        for attempt in range(RELISTS):
            relist_pause(attempt)
            try:  # the files are read here (pyarrow, polars before 1.35) or when collected
                lazy = _rows(
                    self._cache, self._spec, self._service, self._choose, dated=self._dated, relist=attempt > 0
                )
                if predicate is not None:
                    lazy = lazy.filter(predicate)
                if with_columns is not None:
                    lazy = lazy.select(with_columns)
                if n_rows is not None:
                    lazy = lazy.head(n_rows)
                frame = lazy.collect()
            except FileNotFoundError:  # replaced by a compaction since it was found: the files are found again
                continue
            yield frame
            return
        raise CacheUnavailableError(
            f"the {self._spec.table.name} files of the cache at {self._cache.location} were replaced {RELISTS} times "
            f"while they were read (compactions running one after another); collect the {self._what} again",
            location=self._cache.location,
            operation=self._what,
        )

    def __reduce__(self) -> Any:
        # the cache it reads holds the store's access (a bucket's credentials): never written into a plan
        call = f"sf.{self._what}"
        raise ConfigurationError(
            f"a LazyFrame of {call}({self._spec.table.name!r}) reads the cache when it is collected and is not "
            f"serialised, as it would carry the cache's access: serialise the collected frame, or call {call} "
            "again where the plan is used"
        )


def _rows(cache: Cache, spec: FrameSpec, service: str, choose: Chooser, *, dated: bool, relist: bool) -> pl.LazyFrame:
    """A lazy frame of the files that hold the rows of the answers ``choose`` picks now."""
    eps = endpoints_of(spec)
    entries = [e for ep in eps for e in cache.entries(ep.name) if e.service == service]
    chosen = choose(entries)
    by_id = {e.id: e for e in entries if e.id in chosen}
    kept_columns = spec.table.schema  # a kept frame with other columns is built again
    located = cache.frames.locate(
        list(by_id.values()), spec.table.name, spec.version, schema=kept_columns, relist=relist
    )
    built = build_missing(cache, spec, [e for i, e in by_id.items() if i not in located])
    located |= cache.frames.locate([by_id[i] for i in built], spec.table.name, spec.version, schema=kept_columns)
    frames: list[pl.LazyFrame] = []
    for ep in eps:
        keys = cell_columns(ep)
        keep = _keep_table(chosen, [e for e in by_id.values() if e.endpoint == ep.name], keys, located, dated=dated)
        if keep.is_empty():
            continue
        files = sorted(set(keep["_file"].to_list()) - {""})
        sources = file_sources(cache, files)
        if "" in keep["_file"]:  # frames that could not be kept: from memory
            sources.append(pl.concat([built[i].with_columns(_file=pl.lit(""), entry=pl.lit(i)) for i in built]).lazy())
        rows = pl.concat(sources, how="diagonal_relaxed") if len(sources) > 1 else sources[0]
        # one row of keep per (file, entry, cell): an inner join brings a dated row its day, and repeats none
        joined = rows.join(keep.lazy(), on=["_file", "entry", *keys], how="inner" if dated else "semi")
        frames.append(with_list(joined, spec, ep.name))
    read = read_schema(spec.table)
    columns = [pl.col(name).cast(dtype) for name, dtype in read.schema.items()]
    if dated:
        columns.insert(0, pl.col(SNAPSHOT_DATE))
    if not frames:
        empty = read.empty().with_columns(pl.lit(None, pl.Date).alias(SNAPSHOT_DATE))
        return empty.lazy().select(columns)
    return (pl.concat(frames, how="diagonal_relaxed") if len(frames) > 1 else frames[0]).select(columns)


def with_list(rows: pl.LazyFrame, spec: FrameSpec, endpoint: str) -> pl.LazyFrame:
    """``rows`` of ``endpoint``'s answers with the :data:`~storeframes.schemas.SEARCH_LIST` column where
    ``spec``'s table has it (the live search: ``organic`` or ``with_ads``); as they are otherwise."""
    if SEARCH_LIST.name not in read_schema(spec.table).names:
        return rows
    return rows.with_columns(pl.lit(LISTS[endpoint], pl.String).alias(SEARCH_LIST.name))


def build_missing(cache: Cache, spec: FrameSpec, entries: list[Entry]) -> dict[str, pl.DataFrame]:
    """Flatten the raw answers of ``entries`` into ``spec``'s table and keep the frames; the frames, by entry."""
    responses = [(e, cache.load(e)) for e in entries]
    todo = [(e, r) for e, r in responses if r is not None]
    if not todo:
        return {}
    frames: dict[str, pl.DataFrame] = {}
    for (entry, _), frame in zip(todo, spec.build_each([r for _, r in todo]), strict=True):
        frames[entry.id] = frame
        cache.frames.write(entry, spec.table.name, spec.version, frame)
    return frames


def _keep_table(
    chosen: Mapping[str, Cells],
    entries: list[Entry],
    keys: list[str],
    located: Mapping[str, str],
    *,
    dated: bool = False,
) -> pl.DataFrame:
    """One row per (file, entry, cell) to keep, in the columns the rows are matched on (and, ``dated``,
    the UTC day of the entry's ``fetched_at``)."""
    columns: dict[str, list[Any]] = {"_file": [], "entry": [], **{k: [] for k in keys}}
    days: list[Any] = []
    for entry in entries:
        cells = chosen.get(entry.id, ())
        if dated:
            days += [entry.day] * len(cells)
        for entity, facet, day in cells:
            columns["_file"].append(located.get(entry.id, ""))
            columns["entry"].append(entry.id)
            values = {"app_id": entity, "keyword": entity, "metric": facet, "date": day}
            for k in keys:
                columns[k].append(values[k])
    schema = {"_file": pl.String, "entry": pl.String, **{k: pl.Date if k == "date" else pl.String for k in keys}}
    if dated:
        columns[SNAPSHOT_DATE], schema[SNAPSHOT_DATE] = days, pl.Date
    return pl.DataFrame(columns, schema=schema)


SCANS_NEST = tuple(int(n) for n in pl.__version__.split(".")[:2] if n.isdigit()) >= (1, 35)
"""Whether polars can collect a Parquet scan inside an IO source's callback while it collects another: before
1.35, two of them in one query (a join of two ``sf.scan`` frames) wait on each other for ever with as
few threads as sources (2 CPUs); their files are then read by pyarrow."""


def file_sources(cache: Cache, keys: list[str]) -> list[pl.LazyFrame]:
    """Lazy frames of the files ``keys`` with a ``_file`` column naming each row's file (its key)."""
    if not keys:
        return []
    if not SCANS_NEST:
        import pyarrow as pa
        import pyarrow.parquet as pq

        tables = ((k, pq.read_table(pa.BufferReader(cache.storage.get(k)))) for k in keys)
        return [pl.DataFrame(table).with_columns(_file=pl.lit(k)).lazy() for k, table in tables]
    addresses: list[str] | None
    try:
        addresses, options = cache.storage.locate(keys)  # every store has it; it refuses where polars cannot read
    except NotImplementedError:
        addresses, options = None, None
    if addresses is None:  # a store polars cannot read: the files' bytes
        import io

        return [pl.read_parquet(io.BytesIO(cache.storage.get(k))).with_columns(_file=pl.lit(k)).lazy() for k in keys]
    names = dict(zip((os.fspath(a) for a in addresses), keys, strict=True))
    lazy = pl.scan_parquet(list(names), storage_options=options, include_file_paths="_address", hive_partitioning=False)
    return [lazy.with_columns(_file=pl.col("_address").replace_strict(names, return_dtype=pl.String)).drop("_address")]
