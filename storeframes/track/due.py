"""What a tracker's items need on a day: which apps and keywords are due, and the days missed.

An app or keyword of an item (in one country, language and device) is *due* on a day when the
newest answer the cache keeps of it was fetched ``every`` days before or earlier, or never.
Only the due ones are asked for, so a run on a day that already ran sends nothing, and a run
after one that was killed sends what the killed one had not kept. No I/O here but the
cache's index, read once per endpoint.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, timedelta
from typing import Any

from ..answers import Entry
from ..catalog import ENDPOINTS, Endpoint, validate
from ..frames.functions import resolve
from .spec import Item, dated

__all__ = ["DueCall", "Fetched", "canonical_calls", "due_calls", "fetched_by_endpoint", "gap_days", "last_fetched"]

_DATES = ("start_date", "end_date")


def _scope(ep: Endpoint, params: Mapping[str, str]) -> str:
    """What an answer shares with a call besides its apps or keyword, metric and dates."""
    drop = {ep.entity, ep.facet, *_DATES}
    return json.dumps({k: v for k, v in params.items() if k not in drop}, sort_keys=True, separators=(",", ":"))


class Fetched:
    """When each app or keyword of an endpoint was last fetched, and on which days, from the cache's index."""

    def __init__(self, entries: Iterable[Entry], service: str):
        self.days: dict[tuple[str, str, str | None], set[date]] = {}
        self.covered: dict[tuple[str, str, str | None], set[date]] = {}
        scopes: dict[tuple[str, str], str] = {}
        for entry in entries:
            if entry.service != service:
                continue
            ep = ENDPOINTS[entry.endpoint]
            if ep.daily or not ep.date_ranged:  # the index's scope already leaves out what a cell says
                scope = entry.scope
            else:  # a range of days that is no cell of its answer (benchmarks): left out too
                scope = scopes.get((entry.endpoint, entry.scope)) or scopes.setdefault(
                    (entry.endpoint, entry.scope), _scope(ep, entry.params)
                )
            day = entry.fetched_at.astimezone(UTC).date()
            for entity, _, cell_day in entry.cells:
                key = (entry.endpoint, scope, entity)
                self.days.setdefault(key, set()).add(day)
                if cell_day is not None:
                    self.covered.setdefault(key, set()).add(cell_day)

    def last(self, endpoint: str, scope: str, entity: str | None) -> date | None:
        """The day the newest answer of ``entity`` was fetched; None when the cache has none."""
        days = self.days.get((endpoint, scope, entity))
        return max(days) if days else None


@dataclass(frozen=True)
class DueCall:
    """The calls of one item that a run sends on a day, by endpoint, with their refresh mode."""

    item: Item
    endpoint: str
    calls: tuple[Mapping[str, str], ...]
    refresh: str
    """``"always"`` for the present (a due snapshot is fetched however fresh), ``"auto"`` for history
    (the final days the cache holds are not fetched again)."""
    entities: int
    """The apps, keywords (or benchmark scopes) due."""


def _entity_list(ep: Endpoint, params: Mapping[str, str]) -> list[str | None]:
    if ep.entity is None:
        return [None]
    value = params[ep.entity]
    return list[str | None](value.split(",")) if ep.entity == "apps" else [value]


def canonical_calls(item: Item, today: date, start: date | None = None) -> tuple[str, list[dict[str, str]]]:
    """The item's calls on ``today`` as canonical requests of its endpoint (its dates resolved)."""
    endpoint, calls = resolve(item.frame, [dated(item, call, today, start) for call in item.calls], today=today)
    ep = ENDPOINTS[endpoint]
    return endpoint, [validate(ep, call, today=today) for call in calls]


def due_calls(
    item: Item, today: date, fetched: Mapping[str, Fetched], *, backfill: tuple[date, date] | None = None
) -> DueCall | None:
    """What ``item`` sends on ``today``; None when nothing of it is due.

    A history item asks its due apps or keywords for the days from the last fetch (less the days
    that were not final then) to yesterday, at most its ``lookback``; a ``backfill`` asks every one
    of them for that range, the days the cache holds final served from it.
    """
    if backfill is not None:
        endpoint, calls = canonical_calls(item, today, backfill[0])
        calls = [{**c, "start_date": backfill[0].isoformat(), "end_date": backfill[1].isoformat()} for c in calls]
        entities = sum(len(_entity_list(ENDPOINTS[endpoint], c)) for c in calls)
        return DueCall(item, endpoint, tuple(calls), "auto", entities)
    endpoint, calls = canonical_calls(item, today)
    ep = ENDPOINTS[endpoint]
    seen = fetched.get(endpoint)
    due: list[dict[str, str]] = []
    entities = 0
    for call in calls:
        scope = _scope(ep, call)
        wanted: list[str | None] = []
        earliest: date | None = today
        for entity in _entity_list(ep, call):
            last = seen.last(endpoint, scope, entity) if seen is not None else None
            if last is not None and (today - last).days < item.every_days:
                continue
            wanted.append(entity)
            if last is None:
                earliest = None
            elif earliest is not None:
                earliest = min(earliest, last)
        if not wanted:
            continue
        entities += len(wanted)
        request = dict(call)
        if ep.entity is not None:
            request[ep.entity] = ",".join(str(w) for w in wanted)
        if item.history and earliest is not None:
            settle = ep.freshness.settle_days
            first = max(date.fromisoformat(call["start_date"]), earliest - timedelta(days=settle + 1))
            request["start_date"] = min(first, date.fromisoformat(call["end_date"])).isoformat()
        due.append(request)
    if not due:
        return None
    return DueCall(item, endpoint, tuple(due), "auto" if item.history else "always", entities)


def last_fetched(item: Item, today: date, fetched: Mapping[str, Fetched]) -> date | None:
    """The newest day any app or keyword of ``item`` was fetched; None when never."""
    endpoint, calls = canonical_calls(item, today)
    ep = ENDPOINTS[endpoint]
    seen = fetched.get(endpoint)
    if seen is None:
        return None
    days = [seen.last(endpoint, _scope(ep, call), entity) for call in calls for entity in _entity_list(ep, call)]
    return max((d for d in days if d is not None), default=None)


def gap_days(item: Item, today: date, fetched: Mapping[str, Fetched]) -> list[date]:
    """The days before ``today`` on which ``item`` was due and the cache has nothing of it.

    For the present, a day is missed when an app or keyword of the item was due (its newest
    snapshot ``every`` days old or older) and none was taken that day; for history, a day from
    the first kept to the day before yesterday that no kept answer covers. Counted from the first
    day the cache holds anything of the item.
    """
    endpoint, calls = canonical_calls(item, today)
    ep = ENDPOINTS[endpoint]
    seen = fetched.get(endpoint)
    if seen is None:
        return []
    missed: set[date] = set()
    for call in calls:
        scope = _scope(ep, call)
        for entity in _entity_list(ep, call):
            key = (endpoint, scope, entity)
            if item.history:
                covered = seen.covered.get(key, set())
                if covered:
                    day = min(covered)
                    while day < today - timedelta(days=1):
                        if day not in covered:
                            missed.add(day)
                        day += timedelta(days=1)
                continue
            days = sorted(seen.days.get(key, ()))
            if not days:
                continue
            last, day = days[0], days[0] + timedelta(days=1)
            taken = set(days)
            while day < today:
                if day in taken:
                    last = day
                elif (day - last).days >= item.every_days:
                    missed.add(day)
                day += timedelta(days=1)
    return sorted(missed)


def fetched_by_endpoint(entries_of: Any, items: Sequence[Item], service: str) -> dict[str, Fetched]:
    """:class:`Fetched` of every endpoint the items use (``entries_of(endpoint)`` lists the cache's entries)."""
    return {e: Fetched(entries_of(e), service) for e in sorted({i.endpoint for i in items})}
