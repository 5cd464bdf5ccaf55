"""Everything a cache holds, as datasets: lazy scans of a table, and compaction.

:func:`scan` is a question asked of every answer the cache (a folder or a team's
bucket) holds, without a frame call, a request or a token: the rows of one table
(``"versions"``, ``"search_history"``, ``"changes"`` ...), the newest answer of each
cell, with the schema of the frame function's frame. :func:`compact` merges the small
files a cache grows, one or two per answer, into a few (see
:meth:`storeframes.Cache.compact`).

>>> import storeframes as sf
>>> sf.scan("versions", cache_dir="analysis-cache").filter(pl.col("position") == 1).collect()  # doctest: +SKIP
>>> sf.compact(cache_dir="s3://team-bucket/storeframes")  # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any

import polars as pl
from polars.io.plugins import register_io_source

from .answers import Entry
from .cache import RELISTS, Cache, open_cache
from .catalog import ENDPOINTS, Endpoint
from .errors import CacheUnavailableError, ConfigurationError, InvalidParameterError
from .ledger import SERVICE
from .pipeline import FRAMES, FrameSpec, cell_columns

__all__ = ["TABLES", "compact", "flattener_versions", "scan"]

TABLES: dict[str, FrameSpec] = {spec.table.name: spec for spec in FRAMES.values()}
"""The tables :func:`scan` reads, by name (``"versions"``), with the frame spec that writes each."""


def flattener_versions() -> dict[str, str]:
    """The flattener version of each table, as the frame functions of this version write them."""
    return {name: spec.version for name, spec in TABLES.items()}


def _cache(cache_dir: Any, storage_options: Mapping[str, str] | None) -> Cache:

    if cache_dir is False:
        raise ConfigurationError("scan and compact need a cache: give cache_dir a folder or a bucket address")
    cache = open_cache(cache_dir, storage_options)
    assert cache is not None
    return cache


def _spec(table: str) -> FrameSpec:
    if isinstance(table, str):
        name = table.removesuffix("_frame")
        if name in TABLES:
            return TABLES[name]
    raise InvalidParameterError("table", table, f"one of {', '.join(TABLES)}", endpoint="scan")


def _endpoints(spec: FrameSpec) -> list[Endpoint]:
    names = [spec.endpoint] + ([spec.switch[1]] if spec.switch else [])
    return [ENDPOINTS[name] for name in names]


def _service(entries: list[Entry], service: str | None) -> str:
    services = sorted({e.service for e in entries})
    if service is not None:
        return service
    if SERVICE in services or not services:
        return SERVICE
    if len(services) == 1:
        return services[0]
    raise InvalidParameterError(
        "service", None, f"one of {', '.join(services)}: the cache holds answers of several services", endpoint="scan"
    )


def _newest(entries: list[Entry]) -> dict[str, list[tuple[str | None, str | None, Any]]]:
    """For each entry, the cells it is the newest answer of (within its endpoint and scope)."""
    newest: dict[tuple[str, str, tuple[Any, ...]], Entry] = {}
    for entry in entries:
        for cell in entry.cells:
            key = (entry.endpoint, entry.scope, cell)
            held = newest.get(key)
            if held is None or (held.fetched_at, held.id) < (entry.fetched_at, entry.id):
                newest[key] = entry
    cells: dict[str, list[tuple[str | None, str | None, Any]]] = {}
    for (_, _, cell), entry in newest.items():
        if entry.available:
            cells.setdefault(entry.id, []).append(cell)
    return cells


def scan(
    table: str,
    cache_dir: Any = None,
    *,
    service: str | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> pl.LazyFrame:
    """Every row of ``table`` the cache holds, the newest answer of each cell, as a lazy frame.

    ``table`` is a table name (``"metadata"``, ``"versions"``, ``"search_history"``,
    ``"changes"`` ...; a frame function's name works too). ``cache_dir`` is a folder or
    a bucket address (``s3://bucket/prefix``, with ``storage_options`` as for
    :class:`~storeframes.Client`), by default ``$STOREFRAMES_CACHE_DIR`` or the user's
    cache. ``service`` chooses whose answers: by default the real service's, or the one
    service a cache holds (a sandbox's is ``"sandbox-<seed>"``).

    A cell is an app (and metric, and day, for daily histories) in a scope (country,
    language, device, and the date range of change history): of each, only the newest
    answer's rows are kept, so an app fetched again shows its rows once. The schema is
    the frame function's. Nothing is sent and no token is needed; answers whose frame
    of this table was never made are flattened from the raw answer first (and kept,
    where the cache may be written). The files are read by polars when the frame is
    collected, so filters and column choices are pushed down into the Parquet reads. A kept
    frame whose columns are not the table's (an edited or damaged file) is built again from
    its raw answer.

    The files are found when the frame is collected, each time it is: a frame made before a
    compaction (in this process or another) gives the same rows after it, and one collected
    while a compaction replaces its files finds the new ones. Should they be replaced
    :data:`~storeframes.cache.RELISTS` times in a row while they are read, collecting raises
    :class:`~storeframes.CacheUnavailableError`; collect again.
    """
    spec = _spec(table)
    cache = _cache(cache_dir, storage_options)
    eps = _endpoints(spec)
    chosen = _service([e for ep in eps for e in cache.entries(ep.name)], service)  # refused now, not when collected

    source = _Scan(cache, spec, chosen)
    return register_io_source(source, schema=spec.table.schema)


class _Scan:
    """What a scan's LazyFrame calls when it is collected: the rows the cache holds then."""

    def __init__(self, cache: Cache, spec: FrameSpec, service: str):
        self._cache = cache
        self._spec = spec
        self._service = service

    def __call__(
        self, with_columns: list[str] | None, predicate: pl.Expr | None, n_rows: int | None, _batch: int | None
    ) -> Iterator[pl.DataFrame]:
        yield _collect(self._cache, self._spec, self._service, with_columns, predicate, n_rows)

    def __reduce__(self) -> Any:
        # the cache it reads holds the store's access (a bucket's credentials): never written into a plan
        raise ConfigurationError(
            f"a LazyFrame of sf.scan({self._spec.table.name!r}) reads the cache when it is collected and is not "
            "serialised, as it would carry the cache's access: serialise the collected frame, or call sf.scan "
            "again where the plan is used"
        )


def _collect(
    cache: Cache,
    spec: FrameSpec,
    service: str,
    with_columns: list[str] | None,
    predicate: pl.Expr | None,
    n_rows: int | None,
) -> pl.DataFrame:
    """The rows of a scan as the cache holds them now: its files found, then read by polars with the
    columns and filter pushed down; found again when a compaction replaced one in between (at most
    :data:`~storeframes.cache.RELISTS` times)."""
    for attempt in range(RELISTS):
        lazy = _rows(cache, spec, service, relist=attempt > 0)
        if predicate is not None:
            lazy = lazy.filter(predicate)
        if with_columns is not None:
            lazy = lazy.select(with_columns)
        if n_rows is not None:
            lazy = lazy.head(n_rows)
        try:
            return lazy.collect()
        except FileNotFoundError:  # replaced by a compaction since it was found: the files are found again
            continue
    raise CacheUnavailableError(
        f"the {spec.table.name} files of the cache at {cache.location} were replaced {RELISTS} times while "
        "they were read (compactions running one after another); collect the scan again",
        location=cache.location,
        operation="scan",
    )


def _rows(cache: Cache, spec: FrameSpec, service: str, *, relist: bool) -> pl.LazyFrame:
    """A lazy frame of the files that hold the rows of a scan now, the newest answer of each cell."""
    eps = _endpoints(spec)
    entries = [e for ep in eps for e in cache.entries(ep.name) if e.service == service]
    newest = _newest(entries)
    by_id = {e.id: e for e in entries if e.id in newest}
    kept_columns = spec.table.schema  # a kept frame with other columns is built again
    located = cache.frame_files(list(by_id.values()), spec.table.name, spec.version, schema=kept_columns, relist=relist)
    built = _build_missing(cache, spec, [e for i, e in by_id.items() if i not in located])
    located |= cache.frame_files([by_id[i] for i in built], spec.table.name, spec.version, schema=kept_columns)
    frames: list[pl.LazyFrame] = []
    for ep in eps:
        keys = cell_columns(ep)
        keep = _keep_table(newest, [e for e in by_id.values() if e.endpoint == ep.name], keys, located)
        if keep.is_empty():
            continue
        files = sorted(set(keep["_file"].to_list()) - {""})
        sources = _sources(cache, files)
        if "" in keep["_file"]:  # frames that could not be kept: from memory
            sources.append(pl.concat([built[i].with_columns(_file=pl.lit(""), entry=pl.lit(i)) for i in built]).lazy())
        rows = pl.concat(sources, how="diagonal_relaxed") if len(sources) > 1 else sources[0]
        frames.append(rows.join(keep.lazy(), on=["_file", "entry", *keys], how="semi"))
    if not frames:
        return spec.table.empty().lazy()
    columns = [pl.col(name).cast(dtype) for name, dtype in spec.table.schema.items()]
    return (pl.concat(frames, how="diagonal_relaxed") if len(frames) > 1 else frames[0]).select(columns)


def _build_missing(cache: Cache, spec: FrameSpec, entries: list[Entry]) -> dict[str, pl.DataFrame]:
    """Flatten the raw answers of ``entries`` into ``spec``'s table and keep the frames; the frames, by entry."""
    responses = [(e, cache.load(e)) for e in entries]
    todo = [(e, r) for e, r in responses if r is not None]
    if not todo:
        return {}
    frames: dict[str, pl.DataFrame] = {}
    for (entry, _), frame in zip(todo, spec.build_each([r for _, r in todo]), strict=True):
        frames[entry.id] = frame
        cache.write_frame(entry, spec.table.name, spec.version, frame)
    return frames


def _keep_table(
    newest: Mapping[str, list[tuple[str | None, str | None, Any]]],
    entries: list[Entry],
    keys: list[str],
    located: Mapping[str, str],
) -> pl.DataFrame:
    """One row per (file, entry, cell) to keep, in the columns the rows are matched on."""
    columns: dict[str, list[Any]] = {"_file": [], "entry": [], **{k: [] for k in keys}}
    for entry in entries:
        for entity, facet, day in newest.get(entry.id, ()):
            columns["_file"].append(located.get(entry.id, ""))
            columns["entry"].append(entry.id)
            values = {"app_id": entity, "keyword": entity, "metric": facet, "date": day}
            for k in keys:
                columns[k].append(values[k])
    schema = {"_file": pl.String, "entry": pl.String, **{k: pl.Date if k == "date" else pl.String for k in keys}}
    return pl.DataFrame(columns, schema=schema)


def _sources(cache: Cache, keys: list[str]) -> list[pl.LazyFrame]:
    """Lazy frames of the files ``keys`` with a ``_file`` column naming each row's file (its key)."""
    if not keys:
        return []
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


def compact(cache_dir: Any = None, *, storage_options: Mapping[str, str] | None = None) -> dict[str, int]:
    """Compact the cache (a folder or a bucket): see :meth:`storeframes.Cache.compact`.

    The frames of this version's flatteners are merged, others left out (they are
    rebuilt from the raw answers when a frame function needs them).
    """
    return _cache(cache_dir, storage_options).compact(frames=flattener_versions())
