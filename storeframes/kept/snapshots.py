"""The history a cache kept of what the service answers only for today: one snapshot per cell per day.

The service's metadata, metrics and live search are current-only: it answers with
today's values, and yesterday's are gone unless someone kept them. A cache keeps every
answer it paid for, and :func:`snapshots` reads them all back, the newest of each cell
on each UTC day, as one lazy frame (where :func:`storeframes.scan` shows only the newest
answer of each cell). It reads what :func:`~storeframes.kept.tables.lazy_rows` finds, as a
scan does: offline, with no token, from a folder or a bucket.

>>> import storeframes as sf
>>> sf.snapshots("metrics", "s3://team-bucket/storeframes", start="2026-11-01").collect()  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

import polars as pl

from .._tracebacks import user_facing
from ..errors import InvalidParameterError
from ..fetch.pipeline import FrameSpec
from .tables import TABLES, as_date, daily_chooser, endpoints_of, lazy_rows, open_for, spec_of

__all__ = ["SNAPSHOT_TABLES", "snapshots"]

SNAPSHOT_TABLES: dict[str, FrameSpec] = {
    name: spec for name, spec in TABLES.items() if all(ep.current_only for ep in endpoints_of(spec))
}
"""The tables :func:`snapshots` reads, by name: those whose every endpoint is current-only (metadata and
its child tables, metrics, search)."""

_ONLY: dict[str, tuple[str, str]] = {"search_ads": ("search", "search_ads")}
"""Names that read a table from one of its endpoints only: ``search_ads`` is the search table of the
searches with ads (``search_frame(..., ads=True)``)."""


def _table(table: Any) -> tuple[FrameSpec, set[str]]:
    """The spec of a snapshot table and the endpoints whose answers make it; a history table, or any
    other name, refused with the names allowed."""
    names = [*SNAPSHOT_TABLES, *_ONLY]
    allowed = f"one of {', '.join(names)} (the tables of endpoints that answer only with today's values)"
    if isinstance(table, str) and table.removesuffix("_frame") in _ONLY:
        name, endpoint = _ONLY[table.removesuffix("_frame")]
        return SNAPSHOT_TABLES[name], {endpoint}
    if isinstance(table, str) and table.removesuffix("_frame") in TABLES:
        name = table.removesuffix("_frame")
        if name not in SNAPSHOT_TABLES:
            allowed += (
                f"; {name} is a history table, whose answers hold every day already: read it with sf.scan({name!r})"
            )
    spec = spec_of(table, SNAPSHOT_TABLES, what="snapshots", allowed=allowed)
    return spec, {ep.name for ep in endpoints_of(spec)}


@user_facing
def snapshots(
    table: str,
    cache_dir: Any = None,
    *,
    start: date | str | None = None,
    end: date | str | None = None,
    service: str | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> pl.LazyFrame:
    """Every kept answer of a current-only table: one snapshot of each cell per UTC day, as a lazy frame.

    ``table`` is a table of an endpoint that answers only with today's values:
    ``"metadata"`` and its child tables (``"versions"``, ``"screenshots"``, ``"videos"``,
    ``"in_app_purchases"``, ``"related_apps"``, ``"permissions"``), ``"metrics"`` and
    ``"search"`` (the live search, with and without ads, as ``search_frame`` gives it);
    ``"search_ads"`` is the search table of the searches with ads alone. A frame
    function's name works too (``"metrics_frame"``). A history table (``"changes"``,
    ``"search_history"``, ``"benchmarks"`` ...) is refused: its answers hold every day
    already, and :func:`~storeframes.scan` reads them. ``cache_dir``, ``service`` and
    ``storage_options`` are as for :func:`~storeframes.scan`. ``start`` and ``end``
    (a :class:`~datetime.date` or an ISO text) bound ``snapshot_date``, both included;
    a bad one, or ``start`` after ``end``, is refused before the cache is opened. A place with no
    cache raises :class:`~storeframes.NoCacheError`, as :func:`~storeframes.scan` says.

    A cell is an app (with its metric, for metrics) or a keyword, in a scope (country,
    language, device). Of every answer the cache holds (not only the newest), the
    newest of each cell on the UTC day of its ``fetched_at`` is that day's snapshot of
    the cell: fetched twice in a day, the later answer stands for the day. A cell whose
    snapshot says the app is unavailable has no rows that day. The rows are those the
    frame function gave (or would have given) with that answer, so a day's snapshot
    without its ``snapshot_date`` column is the frame of that day's call.

    Output columns: ``snapshot_date`` (``pl.Date``, the UTC day of ``fetched_at``), then
    the frame function's columns with its dtypes (``sf.snapshots("metrics")`` has those
    of ``sf.metrics_frame``: ``app_id``, ``country``, ``device``, ``fetched_at``,
    ``metric``, ``value`` ...); ``search`` and ``search_ads`` have a ``list`` column last
    (``organic`` or ``with_ads``: :data:`~storeframes.schemas.SEARCH_LIST`), since a keyword
    followed both ways has two rank lists a day. The rows are in no set order: sort them, for example by
    ``snapshot_date`` and the cell's columns, when the order matters.

    Nothing is sent and no token is needed; answers whose frame of this table was never
    made are flattened from the raw answer first (and kept, where the cache may be
    written), and a compaction keeps the frames of every snapshot. The files are found
    when the frame is collected, each time it is (a compaction in between is read
    through), and read by polars with filters and column choices pushed down; its plan
    is not serialised, as it would carry the cache's access. ``start`` and ``end`` leave
    the other days' files unread, which a filter on ``snapshot_date`` does not.

    >>> import storeframes as sf
    >>> ratings = (
    ...     sf.snapshots("metrics", cache_dir="analysis-cache", start="2026-11-01")
    ...     .filter(pl.col("metric") == "ratings")
    ...     .select("snapshot_date", "app_id", "value")
    ...     .sort("snapshot_date", "app_id")
    ...     .collect()
    ... )  # doctest: +SKIP
    """
    spec, endpoints = _table(table)
    first, last = as_date("start", start, what="snapshots"), as_date("end", end, what="snapshots")
    if first is not None and last is not None and first > last:
        raise InvalidParameterError("start", start, f"a date on or before end={last.isoformat()}", endpoint="snapshots")
    cache = open_for(cache_dir, storage_options, what="snapshots")
    return lazy_rows(cache, spec, service, daily_chooser(endpoints, first, last), what="snapshots", dated=True)
