"""Cells, request planning and answer merging: pure functions, no I/O.

A call's canonical parameters describe a set of *cells* ``(entity, facet, day)``
(see :mod:`storeframes.catalog`): for change history of 3 apps over 30 days, 90 cells;
for metrics of 2 apps and 4 metrics, 8 cells; for a live search, one cell per keyword.
The cache says which cells it can serve; :func:`requests_for` turns the cells it cannot
into the fewest requests (adjacent missing days merged, up to 5 apps that miss the same
days or metrics packed together); :func:`merge_result` joins the parts of an answer that
came from several requests, keeping only the cells each part is meant to provide.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from datetime import date, timedelta
from itertools import groupby, product
from operator import itemgetter
from typing import Any, TypeVar

from .catalog import Endpoint
from .errors import ResponseShapeError

__all__ = [
    "Cell",
    "cells_of",
    "days_of",
    "entities_of",
    "facets_of",
    "first_cell",
    "merge_result",
    "requests_for",
    "runs",
    "scope_of",
]

Cell = tuple[str | None, str | None, date | None]
"""``(entity, facet, day)``: an app id or keyword, a metric, a day; None where the endpoint has none."""

T = TypeVar("T")

_DATES = ("start_date", "end_date")
# the answer's keys for a requested metric: the service documents "power", clients see "app-power"
_METRIC_KEYS: Mapping[str, tuple[str, ...]] = {"app-power": ("app-power", "power")}


def scope_of(ep: Endpoint, params: Mapping[str, str]) -> str:
    """The part of a request that is not a cell: country, language, device ... as JSON.

    Two requests share cells only when their scopes are equal.
    """
    drop = {ep.entity, ep.facet, *(_DATES if ep.daily else ())}
    return json.dumps({k: v for k, v in params.items() if k not in drop}, sort_keys=True, separators=(",", ":"))


def entities_of(ep: Endpoint, params: Mapping[str, str]) -> list[str | None]:
    """The apps or keyword a request names (in its order), or [None] for an endpoint without them."""
    if ep.entity is None:
        return [None]
    value = params[ep.entity]
    return list(value.split(",")) if ep.entity == "apps" else [value]


def facets_of(ep: Endpoint, params: Mapping[str, str]) -> list[str | None]:
    """The metrics a request names (in its order), or [None] for an endpoint without them."""
    return list(params[ep.facet].split(",")) if ep.facet else [None]


def days_of(params: Mapping[str, str]) -> list[date]:
    """Every day from ``start_date`` to ``end_date``, both included."""
    start, end = date.fromisoformat(params["start_date"]), date.fromisoformat(params["end_date"])
    return [start + timedelta(days=n) for n in range((end - start).days + 1)]


def cells_of(ep: Endpoint, params: Mapping[str, str]) -> list[Cell]:
    """The cells a request (or a call) with these canonical parameters covers."""
    days: list[date | None] = list(days_of(params)) if ep.daily else [None]
    # in C, in the same order as the nested loops: a call of 45,000 day cells is made without a Python frame per cell
    return list(product(entities_of(ep, params), facets_of(ep, params), days))


def runs(cells: Sequence[Cell], held: Mapping[Cell, T]) -> Iterator[tuple[T | None, list[Cell]]]:
    """``cells`` in runs of those ``held`` maps to one value (None: cells it lacks), in order.

    The cells of one app come together, held by one answer or a few: a call of 45,000 day
    cells is a few hundred runs, found in C rather than cell by cell. Where ``held`` holds
    exactly ``cells``, in order (a plan's cached cells, usually), its keys are the same
    objects: they are compared by identity, not hashed again.

    >>> day = date(2026, 1, 1)
    >>> [(value, len(run)) for value, run in runs([("1", None, day), ("2", None, day)], {("1", None, day): "a"})]
    [('a', 1), (None, 1)]
    """
    if len(held) == len(cells) and list(held) == cells:
        pairs: Iterable[tuple[Cell, T | None]] = held.items()
    else:
        pairs = zip(cells, map(held.get, cells), strict=True)
    for value, run in groupby(pairs, key=itemgetter(1)):
        yield value, list(map(itemgetter(0), run))


def first_cell(cells: Collection[Cell]) -> tuple[str, str, date]:
    """The first of ``cells`` by app or keyword, metric and day (a position None in every cell counts as first).

    >>> first_cell({("2", None, date(2026, 1, 1)), ("1", None, date(2026, 1, 3))})
    ('1', '', datetime.date(2026, 1, 3))
    """
    try:
        first = min(cells)  # in C: a position is None in every cell of an endpoint, or in none
    except TypeError:
        return min((c[0] or "", c[1] or "", c[2] or date.min) for c in cells)
    return first[0] or "", first[1] or "", first[2] or date.min


def _runs(days: Iterable[date]) -> list[tuple[date, date]]:
    """Sorted days as runs of consecutive days, ``(first, last)``."""
    runs: list[tuple[date, date]] = []
    for day in sorted(days):
        if runs and day == runs[-1][1] + timedelta(days=1):
            runs[-1] = (runs[-1][0], day)
        else:
            runs.append((day, day))
    return runs


def requests_for(ep: Endpoint, params: Mapping[str, str], missing: Collection[Cell]) -> list[dict[str, str]]:
    """The fewest requests that cover the ``missing`` cells of a call.

    Adjacent missing days of an entity become one date range; entities (apps) that miss
    exactly the same range, or the same metrics, share a request of up to
    ``ep.max_apps``. With nothing missing, no request.

    >>> from storeframes.catalog import ENDPOINTS
    >>> call = {"apps": "1,2", "country": "us", "device": "iphone",
    ...         "start_date": "2026-01-01", "end_date": "2026-01-05"}
    >>> requests_for(ENDPOINTS["changes"], call, [("1", None, date(2026, 1, 4)), ("2", None, date(2026, 1, 5)),
    ...                                           ("1", None, date(2026, 1, 5))])  # doctest: +NORMALIZE_WHITESPACE
    [{'apps': '1', 'country': 'us', 'device': 'iphone', 'start_date': '2026-01-04', 'end_date': '2026-01-05'},
     {'apps': '2', 'country': 'us', 'device': 'iphone', 'start_date': '2026-01-05', 'end_date': '2026-01-05'}]
    """
    if not missing:
        return []
    wanted = set(missing)
    entities = entities_of(ep, params)
    facets = facets_of(ep, params)
    groups: dict[tuple[Any, ...], list[str | None]] = {}  # what is missing -> entities missing exactly that
    missing_days: dict[Any, list[date]] = {}  # per entity, in one pass over the cells (not one per entity)
    if ep.daily:
        for e, _, d in wanted:
            if d is not None:
                missing_days.setdefault(e, []).append(d)
    for entity in entities:
        if ep.daily:
            for run in _runs(missing_days.get(entity, ())):
                groups.setdefault(("days", run), []).append(entity)
        else:
            mine = tuple(f for f in facets if (entity, f, None) in wanted)
            if mine:
                groups.setdefault(("facets", mine), []).append(entity)

    size = ep.max_apps or 1
    requests: list[dict[str, str]] = []
    for (kind, what), members in groups.items():
        changes: dict[str, str] = {}
        if kind == "days":
            changes = {"start_date": what[0].isoformat(), "end_date": what[1].isoformat()}
        elif ep.facet:
            changes = {ep.facet: ",".join(what)}
        for i in range(0, len(members), size):
            chunk = members[i : i + size]
            request = {**params, **changes}
            if ep.entity is not None:
                request[ep.entity] = ",".join(str(e) for e in chunk)
            requests.append({k: request[k] for k in params})
    return requests


# ---------------------------------------------------------------------------
# merging the parts of an answer


def merge_result(ep: Endpoint, parts: Sequence[tuple[Any, Collection[Cell], bool]]) -> Any:
    """The ``result`` of a call answered by several parts.

    ``parts`` holds ``(result, cells, whole)``: a request's ``result``, the cells of the
    call it provides, and whether those are all the cells of that request (then its
    result is taken as it is). App answers are merged by app id (change records and
    metrics kept only for the part's days and metrics); a daily keyword history is
    merged by date in the form the service used.
    """
    if ep.entity == "apps":
        return _merge_apps(ep, parts)
    if ep.daily:
        return _merge_days(ep, parts)
    if len(parts) != 1:  # one request answers a live search or a benchmarks call
        raise ValueError(f"{ep.name}: expected one part, got {len(parts)}")
    return parts[0][0]


def _merge_apps(ep: Endpoint, parts: Sequence[tuple[Any, Collection[Cell], bool]]) -> dict[str, Any]:
    if len(parts) == 1 and parts[0][2] and isinstance(parts[0][0], dict):
        return parts[0][0]
    merged: dict[str, Any] = {}
    for result, cells, whole in parts:
        if not isinstance(result, dict):
            raise ResponseShapeError(
                f"expected an object keyed by app id, got {type(result).__name__}", path="result", endpoint=ep.name
            )
        by_app: dict[str, set[Any]] = {}
        for entity, facet, day in cells:
            by_app.setdefault(str(entity), set()).add(day if ep.daily else facet)
        for app, picks in by_app.items():
            value = result.get(app)
            if value is None:
                continue
            if ep.daily:
                records = ep.records or "records"
                target = merged.setdefault(app, {**value, records: []} if isinstance(value, dict) else {})
                _extend_records(ep, target, value, None if whole else picks, app)
            elif ep.facet:
                if not isinstance(value, dict):
                    raise ResponseShapeError(
                        f"expected an object of metrics, got {type(value).__name__}",
                        path=f"result.{app}",
                        endpoint=ep.name,
                    )
                target = merged.setdefault(app, {})
                if whole:
                    target.update(value)
                    continue
                for metric in picks:
                    for key in _METRIC_KEYS.get(metric, (metric,)):
                        if key in value:
                            target[key] = value[key]
            else:
                merged[app] = value
    if ep.daily:
        for value in merged.values():
            value[ep.records or "records"].sort(
                key=lambda record: str(record.get("date", "")) if isinstance(record, dict) else ""
            )
    return merged


def _extend_records(ep: Endpoint, target: dict[str, Any], value: Any, days: set[Any] | None, app: str) -> None:
    member = ep.records or "records"
    records = value.get(member) if isinstance(value, dict) else None
    if not isinstance(records, list):
        raise ResponseShapeError(
            f"expected a list of dated records, got {type(records).__name__}",
            path=f"result.{app}.{member}",
            endpoint=ep.name,
        )
    target.setdefault(member, [])
    for i, record in enumerate(records):
        if days is not None:
            day = _record_day(record, f"result.{app}.{member}[{i}]", ep.name)
            if day not in days:
                continue
        target[member].append(record)


def _record_day(record: Any, path: str, endpoint: str) -> date:
    raw = record.get("date") if isinstance(record, dict) else None
    try:
        return date.fromisoformat(str(raw)[:10])
    except ValueError:
        raise ResponseShapeError(
            f"expected a date as YYYY-MM-DD, got {raw!r}", path=f"{path}.date", endpoint=endpoint
        ) from None


def _is_day(key: Any) -> bool:
    try:
        date.fromisoformat(str(key)[:10])
    except ValueError:
        return False
    return True


def _merge_days(ep: Endpoint, parts: Sequence[tuple[Any, Collection[Cell], bool]]) -> Any:
    """Merge daily keyword histories: ``{date: ids}`` or ``[{date, ...}]``, with or without a keyword level."""
    if len(parts) == 1 and parts[0][2]:
        return parts[0][0]
    merged: Any = None
    keyword_level: str | None = None
    for result, cells, _ in parts:
        days = {d for (_, _, d) in cells}
        body, key = _strip_keyword(result)
        if key is not None:
            keyword_level = key
        picked = _pick_days(body, days, ep.name)
        if merged is None:
            merged = picked
        elif isinstance(merged, dict) and isinstance(picked, dict):
            merged.update(picked)
        elif isinstance(merged, list) and isinstance(picked, list):
            merged.extend(picked)
        else:
            raise ResponseShapeError(
                f"history answers in different forms ({type(merged).__name__} and {type(picked).__name__})",
                path="result",
                endpoint=ep.name,
            )
    if isinstance(merged, dict):
        merged = dict(sorted(merged.items()))
    elif isinstance(merged, list):
        merged.sort(key=lambda item: str(item.get("date", "")))
    return {keyword_level: merged} if keyword_level is not None else merged


def _strip_keyword(result: Any) -> tuple[Any, str | None]:
    if isinstance(result, dict) and len(result) == 1:
        ((key, value),) = result.items()
        if not _is_day(key) and isinstance(value, (dict, list)):
            return value, key
    return result, None


def _pick_days(body: Any, days: set[Any], endpoint: str) -> Any:
    if isinstance(body, dict):
        return {k: v for k, v in body.items() if not _is_day(k) or date.fromisoformat(str(k)[:10]) in days}
    if isinstance(body, list):
        return [item for i, item in enumerate(body) if _record_day(item, f"result[{i}]", endpoint) in days]
    raise ResponseShapeError(
        f"expected an object keyed by date or a list of days, got {type(body).__name__}",
        path="result",
        endpoint=endpoint,
    )
