"""Team tables: a cached table published to Delta Lake, merged on its cells, and its snapshots appended.

:func:`publish` writes what :func:`storeframes.scan` returns of a table (the newest answer of
each cell) to the Delta Lake table ``<lake>/<table>``, through ``deltalake`` (the extra
``lake``), so that Spark, DuckDB, Trino or polars read the newest rows with no deduplication
query. Only the cells whose newest answer changed since the last publish are written, in one
Delta commit (a MERGE on the cell and the row's place in it); with nothing new, nothing is.
With ``snapshots=True`` the days of :func:`storeframes.snapshots` not yet published are
appended to ``<lake>/<table>_snapshots``, partitioned by ``snapshot_date``.

>>> import storeframes as sf
>>> sf.publish("versions", "s3://team-bucket/lake", cache_dir="s3://team-bucket/storeframes")  # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

import polars as pl

from .._tracebacks import user_facing
from .._version import __version__
from ..answers import Entry
from ..cache import RELISTS, Cache, relist_pause
from ..errors import CacheUnavailableError, InvalidParameterError, LakeError
from ..fetch.pipeline import FrameSpec, cell_columns
from ..kept.snapshots import SNAPSHOT_TABLES
from ..kept.snapshots import snapshots as snapshot_rows
from ..kept.tables import (
    SNAPSHOT_DATE,
    TABLES,
    build_missing,
    endpoints_of,
    file_sources,
    newest,
    open_for,
    service_of,
    spec_of,
    with_list,
)
from ..schemas import read_schema
from ..workspaces import Workspace, workspace
from .read import BOOKKEEPING, Where, failure, is_address, needs_deltalake, scan, where

__all__ = ["ATTEMPTS", "PublishResult", "last_commit", "merge_keys", "publish"]

ATTEMPTS = 6
"""How many times a publish is tried when another publisher committed to the table first (each time after
reading the table again, with a growing random pause)."""

META = "storeframes."
"""The prefix of the keys :func:`publish` writes in each Delta commit's metadata."""

Cell = tuple[Any, Any, Any]


@dataclass(frozen=True)
class PublishResult:
    """What :func:`publish` did: the Delta table's address (credentials never) and version after it, whether a
    version was written, the rows inserted, updated and deleted, and the snapshots appended (if asked)."""

    table: str
    uri: str
    version: int
    written: bool
    inserted: int
    updated: int
    deleted: int
    snapshots_uri: str | None
    snapshots_version: int | None
    snapshot_rows: int
    seconds: float

    def summary(self) -> str:
        """One or two lines saying what was published."""
        if self.written:
            done = (
                f"version {self.version}: {self.inserted} rows inserted, {self.updated} updated, {self.deleted} deleted"
            )
        else:
            done = f"nothing new, version {self.version} unchanged"
        lines = [f"{self.table} -> {self.uri}: {done} ({self.seconds:.1f} s)"]
        if self.snapshots_uri is not None:
            added = f"{self.snapshot_rows} rows appended" if self.snapshot_rows else "no new day"
            lines.append(f"{self.table} snapshots -> {self.snapshots_uri}: {added}, version {self.snapshots_version}")
        return "\n".join(lines)


def merge_keys() -> dict[str, dict[str, list[str]]]:
    """What a published table is merged on, by table: the columns that name a row's cell (``"cell"``) and the
    request parameters of its scope (``"scope"``). The rows of a cell (in its scope) are replaced together
    when a newer answer of it is published.

    >>> merge_keys()["metrics"]
    {'cell': ['app_id', 'metric'], 'scope': ['country', 'device']}
    """
    found: dict[str, dict[str, list[str]]] = {}
    for name, spec in TABLES.items():
        cells: list[str] = []
        scope: list[str] = []
        for ep in endpoints_of(spec):
            cells += [k for k in cell_columns(ep) if k not in cells]
            dropped = {ep.entity, ep.facet, *(("start_date", "end_date") if ep.daily else ())}
            scope += [p for p in ep.param_names if p not in dropped and p not in scope]
        cells += [c for c in read_schema(spec.table).names if c not in spec.table.names]  # the search's list
        found[name] = {"cell": cells, "scope": scope}
    return found


def _cell_id(entry: Entry, cell: Cell) -> str:
    """The id of a cell of ``entry``'s endpoint and scope: a digest of the endpoint, the scope, the app or keyword,
    the metric and the day."""
    entity, facet, day = cell
    parts = [entry.endpoint, entry.scope, "" if entity is None else str(entity), "" if facet is None else str(facet)]
    parts.append("" if day is None else day.isoformat())
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]


@dataclass
class _State:
    """What the cache holds of a table now: each cell's newest answer, the cells it knows, a digest of both."""

    chosen: dict[str, tuple[Entry, Cell]]
    latest: dict[str, tuple[datetime, str]]
    """The newest answer of every cell the cache knows (one that says the app is gone too): when, which."""
    digest: str
    answers: int


def _utc(moment: Any) -> datetime:
    """``moment`` as a UTC datetime (one without a zone is taken as UTC); None as the oldest."""
    if moment is None:
        return datetime.min.replace(tzinfo=UTC)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _state(cache: Cache, spec: FrameSpec, service: str | None) -> tuple[str, _State]:
    entries = [e for ep in endpoints_of(spec) for e in cache.entries(ep.name)]
    chosen_service = service_of(entries, service, what="publish")
    entries = [e for e in entries if e.service == chosen_service]
    by_id = {e.id: e for e in entries}
    chosen = {_cell_id(by_id[i], c): (by_id[i], c) for i, cells in newest(entries).items() for c in cells}
    latest: dict[str, tuple[datetime, str]] = {}
    for e in entries:
        for c in e.cells:
            cid = _cell_id(e, c)
            if cid not in latest or latest[cid] < (_utc(e.fetched_at), e.id):
                latest[cid] = (_utc(e.fetched_at), e.id)
    text = "\n".join(sorted(f"{cid} {entry.id}" for cid, (entry, _) in chosen.items()))
    digest = hashlib.sha256(f"{spec.table.name} {spec.version}\n{text}".encode()).hexdigest()
    return chosen_service, _State(chosen, latest, digest, len({e.id for e, _ in chosen.values()}))


def _keep(
    picked: Mapping[str, list[tuple[str, Cell]]], entries: list[Entry], keys: list[str], located: Mapping[str, str]
) -> pl.DataFrame:
    """One row per (file, entry, cell) to publish, with the cell's id."""
    columns: dict[str, list[Any]] = {"_file": [], "entry": [], "_cell": [], **{k: [] for k in keys}}
    for entry in entries:
        for cid, (entity, facet, day) in picked.get(entry.id, ()):
            columns["_file"].append(located.get(entry.id, ""))
            columns["entry"].append(entry.id)
            columns["_cell"].append(cid)
            values = {"app_id": entity, "keyword": entity, "metric": facet, "date": day}
            for k in keys:
                columns[k].append(values[k])
    schema: dict[str, pl.DataType] = {"_file": pl.String(), "entry": pl.String(), "_cell": pl.String()}
    schema |= {k: pl.Date() if k == "date" else pl.String() for k in keys}
    return pl.DataFrame(columns, schema=schema)


def _rows(cache: Cache, spec: FrameSpec, cells: dict[str, tuple[Entry, Cell]]) -> pl.DataFrame:
    """The rows of ``cells`` (cell id -> its newest answer and cell) with the table's columns, then ``_cell``,
    ``_answer`` and ``_row``; read again should a compaction replace the files meanwhile."""
    picked: dict[str, list[tuple[str, Cell]]] = {}
    entries: dict[str, Entry] = {}
    for cid, (entry, cell) in cells.items():
        picked.setdefault(entry.id, []).append((cid, cell))
        entries[entry.id] = entry
    schema = spec.table.schema  # of the frames kept; the rows published have those of sf.scan (a list for search)
    read = read_schema(spec.table).schema
    columns = [pl.col(n).cast(d) for n, d in read.items()] + [pl.col("_cell"), pl.col("entry").alias("_answer")]
    empty = pl.DataFrame(schema={**read, "_cell": pl.String, "_answer": pl.String})
    for attempt in range(RELISTS):
        relist_pause(attempt)
        try:
            held = list(entries.values())
            located = cache.frames.locate(held, spec.table.name, spec.version, schema=schema, relist=attempt > 0)
            built = build_missing(cache, spec, [e for e in held if e.id not in located])
            located |= cache.frames.locate([entries[i] for i in built], spec.table.name, spec.version, schema=schema)
            frames: list[pl.LazyFrame] = []
            for ep in endpoints_of(spec):
                keys = cell_columns(ep)
                keep = _keep(picked, [e for e in held if e.endpoint == ep.name], keys, located)
                if keep.is_empty():
                    continue
                sources = file_sources(cache, sorted(set(keep["_file"].to_list()) - {""}))
                if "" in keep["_file"]:
                    sources += [f.with_columns(_file=pl.lit(""), entry=pl.lit(i)).lazy() for i, f in built.items()]
                rows = pl.concat(sources, how="diagonal_relaxed") if len(sources) > 1 else sources[0]
                joined = rows.join(keep.lazy(), on=["_file", "entry", *keys], how="inner")
                frames.append(with_list(joined, spec, ep.name).select(columns))
            found = pl.concat(frames).collect() if frames else empty
        except FileNotFoundError:  # replaced by a compaction since it was found
            continue
        found = found.sort("_cell", "_answer", maintain_order=True)
        return found.with_columns(_row=pl.int_range(pl.len(), dtype=pl.Int64).over("_cell"))
    raise CacheUnavailableError(
        f"the {spec.table.name} files of the cache at {cache.location} were replaced {RELISTS} times while they "
        "were read; publish again",
        location=cache.location,
        operation="publish",
    )


def _conflict(exc: BaseException) -> bool:
    """Whether ``exc`` says another publisher committed first (or created the table first)."""
    from deltalake.exceptions import CommitFailedError

    if isinstance(exc, CommitFailedError):
        return True
    text = str(exc).lower()
    return any(word in text for word in ("conflict", "already exists", "concurrent", "version already"))


def _open(place: Where) -> Any:
    """The Delta table at ``place``, or None where there is none yet."""
    from deltalake import DeltaTable
    from deltalake.exceptions import TableNotFoundError

    try:
        return DeltaTable(place.uri, storage_options=place.options)
    except TableNotFoundError:
        return None


def _created(place: Where, rows: pl.DataFrame, partition_by: list[str] | None = None) -> None:
    """The Delta table at ``place`` made empty (version 0) with the columns of ``rows``, where no publisher made it
    meanwhile; the rows are then merged into it, as into any table.

    Writing the rows with the table would be a blind append: two publishers making it at once would
    both commit, the second as version 1, and every row would be there twice. Two merges into the
    empty table conflict instead, and the one refused reads the table again.
    """
    from deltalake import DeltaTable

    schema = rows.head(0).to_arrow().schema
    DeltaTable.create(place.uri, schema=schema, mode="ignore", partition_by=partition_by, storage_options=place.options)


def _new_columns(delta: Any, rows: pl.DataFrame) -> dict[str, bool]:
    """The merge's options for ``rows`` with columns ``delta`` lacks (a table published by an earlier version,
    before ``search`` had its ``list``): the columns added, null in the rows already there."""
    return {"merge_schema": True} if set(rows.columns) - set(delta.schema().to_arrow().names) else {}


def last_commit(place: Where, version: int) -> dict[str, Any]:
    """The commit information of ``version`` of the table at ``place`` (its ``storeframes.*`` metadata among it),
    read from its one log file (``DeltaTable.history`` reads the whole log, and holds the GIL while it does).

    >>> last_commit(where("team-lake", "metrics", None, what="publish"), 0)["storeframes.cells"]  # doctest: +SKIP
    '96'
    """
    for line in place.read(f"_delta_log/{version:020d}.json").decode().splitlines():
        action = json.loads(line) if line.strip() else {}
        if "commitInfo" in action:
            return dict(action["commitInfo"])
    return {}


def _metadata(cache: Cache, spec: FrameSpec, service: str, state: _State, extra: Mapping[str, str]) -> dict[str, str]:
    return {
        f"{META}version": __version__,
        f"{META}table": spec.table.name,
        f"{META}cache": cache.location,
        f"{META}service": service,
        f"{META}answers": str(state.answers),
        f"{META}cells": str(len(state.chosen)),
        f"{META}digest": state.digest,
        f"{META}flattener": spec.version,
        **extra,
    }


def _publish_current(
    cache: Cache, spec: FrameSpec, service: str, state: _State, place: Where
) -> tuple[int, bool, dict[str, int]]:
    """Merge the cells whose newest answer changed into the current table; (version, written, row counts)."""
    from deltalake import CommitProperties

    delta = _open(place)
    last = last_commit(place, delta.version()) if delta is not None else {}
    if last.get(f"{META}digest") == state.digest:
        return delta.version(), False, {}
    if delta is not None and not set(BOOKKEEPING) <= set(delta.schema().to_arrow().names):
        raise InvalidParameterError(
            "lake",
            place.lake,
            f"a lake whose {place.table} table storeframes published ({place.shown} is another's)",
            endpoint="publish",
        )
    held: dict[str, tuple[set[str], tuple[datetime, str]]] = {}  # each cell's answers and newest (when, which)
    if delta is not None:
        pairs = scan(delta).select("_cell", "_answer", "fetched_at").unique().collect()
        for cid, answer, at in pairs.iter_rows():
            answers, newest_held = held.get(cid, (set(), (_utc(None), "")))
            held[cid] = (answers | {answer}, max(newest_held, (_utc(at), answer)))
    rebuilt = last.get(f"{META}flattener", spec.version) != spec.version  # rows made otherwise: all written again
    changed = {
        cid
        for cid, (entry, _) in state.chosen.items()
        if cid not in held
        or ((held[cid][0] != {entry.id} or rebuilt) and (_utc(entry.fetched_at), entry.id) >= held[cid][1])
    }
    gone = {cid for cid in held if cid not in state.chosen and cid in state.latest and state.latest[cid] > held[cid][1]}
    if delta is not None and not changed and not gone:
        return delta.version(), False, {}
    rows = _rows(cache, spec, {cid: state.chosen[cid] for cid in changed})
    commit = CommitProperties(custom_metadata=_metadata(cache, spec, service, state, {}))
    if delta is None:  # made now (or by another publisher meanwhile): what it holds is read again
        _created(place, rows)  # an empty one: "written" says whether rows were (False for a table of no rows)
        return _publish_current(cache, spec, service, state, place)
    if rows.is_empty() and not gone and not changed & held.keys():  # cells of no rows (an app without permissions)
        return delta.version(), False, {}
    cells = ", ".join(f"'{cid}'" for cid in sorted(changed | gone))
    metrics = (
        delta.merge(
            rows.to_arrow(),
            predicate="t._cell = s._cell AND t._row = s._row",
            source_alias="s",
            target_alias="t",
            commit_properties=commit,
            **_new_columns(delta, rows),
        )
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .when_not_matched_by_source_delete(predicate=f"t._cell IN ({cells})")
        .execute()
    )
    counts = {
        "inserted": int(metrics.get("num_target_rows_inserted", 0)),
        "updated": int(metrics.get("num_target_rows_updated", 0)),
        "deleted": int(metrics.get("num_target_rows_deleted", 0)),
    }
    return delta.version(), True, counts


def _publish_snapshots(table: str, cache: Cache, spec: FrameSpec, service: str, place: Where) -> tuple[int | None, int]:
    """Append the days of the table's snapshots not yet in the snapshot table; (its version, rows appended)."""
    from deltalake import CommitProperties

    endpoints = {ep.name for ep in endpoints_of(spec)}
    cached = {e.day for name in endpoints for e in cache.entries(name) if e.service == service}
    delta = _open(place)
    published: set[date] = set()
    if delta is not None:
        published = {date.fromisoformat(str(p[SNAPSHOT_DATE])) for p in delta.partitions()}
    todo = sorted(cached - published)
    if not todo:
        return (delta.version() if delta is not None else None), 0
    lazy = snapshot_rows(table, cache, start=todo[0], service=service)
    rows = lazy.filter(pl.col(SNAPSHOT_DATE).is_in(todo)).collect()
    if rows.is_empty():
        return (delta.version() if delta is not None else None), 0
    days = sorted(rows[SNAPSHOT_DATE].unique().to_list())
    metadata = {
        f"{META}version": __version__,
        f"{META}table": spec.table.name,
        f"{META}cache": cache.location,
        f"{META}service": service,
        f"{META}days": ",".join(d.isoformat() for d in days),
    }
    commit = CommitProperties(custom_metadata=metadata)
    if delta is None:  # made now (or by another publisher meanwhile): the days it holds are read again
        _created(place, rows, [SNAPSHOT_DATE])
        return _publish_snapshots(table, cache, spec, service, place)
    # a day another publisher appended meanwhile matches, and is not appended twice
    merged = (
        delta.merge(
            rows.to_arrow(),
            predicate=f"t.{SNAPSHOT_DATE} = s.{SNAPSHOT_DATE}",
            source_alias="s",
            target_alias="t",
            commit_properties=commit,
            **_new_columns(delta, rows),
        )
        .when_not_matched_insert_all()
        .execute()
    )
    return delta.version(), int(merged.get("num_target_rows_inserted", 0))


def _retrying(place: Where, step: Any) -> Any:
    """``step()``, tried again (it reads the table afresh) when another publisher committed first; a failure of
    delta-rs or of the store is a :class:`~storeframes.LakeError` naming the lake, the table and the cause."""
    from deltalake.exceptions import DeltaError

    failed: LakeError | None = None
    for attempt in range(ATTEMPTS):
        try:
            return step()
        except (DeltaError, OSError) as exc:
            if attempt + 1 < ATTEMPTS and _conflict(exc):
                time.sleep(random.uniform(0.05, 0.2) * 2**attempt)
                continue
            if _conflict(exc):
                failed = LakeError(
                    f"sf.publish could not write the table {place.table!r} of the lake {place.lake}: other "
                    f"publishers committed first {ATTEMPTS} times in a row; publish again",
                    lake=place.lake,
                    table=place.table,
                    operation="publish",
                )
            else:
                failed = failure(place, exc, what="publish", doing="write")
        break
    raise failed or AssertionError("unreachable")  # outside the handling: delta-rs's error is not its context


@user_facing
def publish(
    table: str,
    lake: str | os.PathLike[str] | None = None,
    *,
    cache_dir: Any = None,
    storage_options: Mapping[str, Any] | None = None,
    snapshots: bool = False,
    service: str | None = None,
    workspace: str | Workspace | None = None,
) -> PublishResult:
    """Publish a cached table to the Delta Lake table ``<lake>/<table>``, merged on its cells.

    ``table`` is a table of :func:`storeframes.scan` (``"versions"``, ``"metrics"``,
    ``"search_history"`` ...). ``lake`` is a folder or a bucket address
    (``s3://bucket/prefix``); ``cache_dir`` is the cache read (a folder or a bucket, as for
    :func:`~storeframes.scan`). ``storage_options`` (as for :class:`~storeframes.Client`)
    go with whichever of the two is a bucket address (both, when both are: one team
    bucket). ``service`` is as for :func:`~storeframes.scan`. ``workspace`` (a workspace of ``storeframes.toml``)
    publishes its cache to its ``lake``, either given here instead.

    After it, the Delta table's rows are those of ``sf.scan(table)`` (same columns and
    dtypes), plus three columns kept for the merge: ``_cell`` (an id of the row's cell: its
    endpoint, scope, app or keyword, metric and day), ``_answer`` (the cache answer it
    comes from) and ``_row`` (its place among its cell's rows). Only the cells whose
    newest answer changed are written, in one commit: their rows are updated in place,
    added or deleted (a cell whose newest answer says the app is gone loses its rows).
    Cells this cache never held, and cells whose answer in the table is newer than the
    cache's (both published from another cache), are left as they are: several caches
    may publish to one lake, the newest answer of each cell winning. The first publish
    creates the table. Every commit's metadata holds ``storeframes.version``,
    ``storeframes.cache`` (the cache's location, never a credential), ``storeframes.service``,
    ``storeframes.answers`` and ``storeframes.cells`` (what it covers) and
    ``storeframes.digest`` (of each cell's answer) and ``storeframes.flattener`` (the
    version of the table's flattener: when it changes, every cell is written again); when the last commit's digest is this
    cache's, or no cell changed, nothing is written (``written`` False, the version
    unchanged), which the cache's index alone decides.

    With ``snapshots=True`` (a current-only table: see :func:`~storeframes.snapshots`),
    the days of its snapshots not yet published are appended to
    ``<lake>/<table>_snapshots``, partitioned by ``snapshot_date``: each day once, so
    answers fetched on a day after that day was published are not added.

    Two publishers at once never corrupt the table nor lose a row: Delta commits are
    conditional writes, and a publish that lost the race reads the table again and
    retries (:data:`ATTEMPTS` times). A folder and S3 (which has conditional writes, as
    MinIO and R2 do) need nothing more; an S3-compatible store without ``If-None-Match``
    writes needs a locking provider for delta-rs (or a single publisher).

    Refused before anything is written (:class:`~storeframes.InvalidParameterError`): an
    unknown table, a bad lake address, ``snapshots=True`` for a history table; and
    (:class:`~storeframes.NoCacheError`) a ``cache_dir`` with no cache there, from which no table is made.

    Returns a :class:`PublishResult`: ``table``, ``uri``, ``version``, ``written``,
    ``inserted``, ``updated``, ``deleted``, ``snapshots_uri``, ``snapshots_version``,
    ``snapshot_rows``, ``seconds``.

    >>> import storeframes as sf
    >>> sf.publish("metrics", "team-lake", cache_dir="analysis-cache", snapshots=True)  # doctest: +SKIP
    PublishResult(table='metrics', uri='/home/ana/team-lake/metrics', version=0, written=True, inserted=96, ...)
    """
    started = time.perf_counter()
    lake, cache_dir = _of_workspace(workspace, lake, cache_dir)
    spec = spec_of(table, TABLES, what="publish")
    name = spec.table.name
    if not isinstance(snapshots, bool):
        raise InvalidParameterError("snapshots", snapshots, "True or False", endpoint="publish")
    if snapshots and name not in SNAPSHOT_TABLES:
        raise InvalidParameterError(
            "snapshots",
            snapshots,
            f"False for {name}: a history table, whose answers hold every day already (snapshots are of "
            f"{', '.join(SNAPSHOT_TABLES)})",
            endpoint="publish",
        )
    lake_options = storage_options if is_address(lake) else None
    cache_options = storage_options if is_address(cache_dir) else None
    if storage_options is not None and lake_options is None and cache_options is None:
        raise InvalidParameterError(
            "storage_options", "(given)", "None when neither lake nor cache_dir is a bucket address", endpoint="publish"
        )
    place = where(lake, name, lake_options, what="publish")
    snap_place = where(lake, f"{name}_snapshots", lake_options, what="publish") if snapshots else None
    needs_deltalake("publish")
    cache = open_for(cache_dir, cache_options, what="publish")
    del storage_options, lake_options, cache_options
    chosen_service, state = _state(cache, spec, service)

    version, written, counts = _retrying(place, lambda: _publish_current(cache, spec, chosen_service, state, place))
    snap_version, snap_rows = None, 0
    if snap_place is not None:
        snap_version, snap_rows = _retrying(
            snap_place, lambda: _publish_snapshots(name, cache, spec, chosen_service, snap_place)
        )
    return PublishResult(
        table=name,
        uri=place.shown,
        version=version,
        written=written,
        inserted=counts.get("inserted", 0),
        updated=counts.get("updated", 0),
        deleted=counts.get("deleted", 0),
        snapshots_uri=snap_place.shown if snap_place is not None else None,
        snapshots_version=snap_version,
        snapshot_rows=snap_rows,
        seconds=time.perf_counter() - started,
    )


def _of_workspace(named: str | Workspace | None, lake: Any, cache_dir: Any) -> tuple[Any, Any]:
    """The lake and the cache of a publish: those given, else the workspace's; a publish with no lake is refused."""
    chosen = workspace(named) if named is not None else None
    if chosen is not None and cache_dir is not None and str(cache_dir) != chosen.cache_dir:
        raise InvalidParameterError(
            "cache_dir", cache_dir, f"none: workspace {chosen.name} publishes its own cache", endpoint="publish"
        )
    lake = lake if lake is not None else chosen.lake if chosen is not None else None
    if lake is None:
        said = f"workspace {chosen.name} names no lake" if chosen is not None else "no workspace is given"
        raise InvalidParameterError("lake", None, f"a folder or a bucket address ({said})", endpoint="publish")
    return lake, cache_dir if cache_dir is not None or chosen is None else chosen.cache_dir
