"""What a tracker's items need on a day: which apps and keywords are due, and the days missed.

An app or keyword of an item (in one country, language and device) is *due* on a day when the
newest answer the cache keeps of it was fetched ``every`` days before or earlier, or never.
A history item's run asks every day since the last *continuous* fetch: from the earliest day
not held final, from its first run's ``lookback`` on, whatever happened in between (a missed
week, a week over budget, a backfill of an older range). Only the due ones are asked for, so a
run on a day that already ran sends nothing, and a run after one that was killed sends what the
killed one had not kept. Only answers fetched on or before the run's day count: a day replayed
before answers the cache keeps of later days is judged as that day saw it. No I/O here but the
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

__all__ = [
    "DueCall",
    "Fetched",
    "History",
    "canonical_calls",
    "days_text",
    "due_calls",
    "fetched_by_endpoint",
    "gap_days",
    "history_start",
    "last_fetched",
    "range_missing",
    "trimmed",
]

_DATES = ("start_date", "end_date")


def _scope(ep: Endpoint, params: Mapping[str, str]) -> str:
    """What an answer shares with a call besides its apps or keyword, metric and dates."""
    drop = {ep.entity, ep.facet, *_DATES}
    return json.dumps({k: v for k, v in params.items() if k not in drop}, sort_keys=True, separators=(",", ":"))


class Fetched:
    """When each app or keyword of an endpoint was fetched, and which days each fetch covered, from the
    cache's index.

    Every question takes the run's day: an answer fetched after it (kept by a later run, or on a
    sandbox's pinned day before an earlier day is replayed) is no answer of that day.
    """

    def __init__(self, entries: Iterable[Entry], service: str):
        self.days: dict[tuple[str, str, str | None], set[date]] = {}
        self.held: dict[tuple[str, str, str | None], dict[date, set[date]]] = {}
        """For each key, the days of history it covers and, for each, the days they were fetched."""
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
                    self.held.setdefault(key, {}).setdefault(cell_day, set()).add(day)

    def last(self, endpoint: str, scope: str, entity: str | None, until: date) -> date | None:
        """The day the newest answer of ``entity`` fetched on or before ``until`` was fetched; None when none."""
        return max((d for d in self.days.get((endpoint, scope, entity), ()) if d <= until), default=None)

    def history(self, key: tuple[str, str, str | None], until: date, settle_days: int) -> History:
        """What the answers fetched on or before ``until`` hold of ``key``'s days of history."""
        fetches = [d for d in self.days.get(key, ()) if d <= until]
        held: set[date] = set()
        final: set[date] = set()
        for day, when in self.held.get(key, {}).items():
            kept = [d for d in when if d <= until]
            if kept:
                held.add(day)
                if (max(kept) - day).days >= settle_days:
                    final.add(day)
        return History(min(fetches, default=None), max(fetches, default=None), held, final)


@dataclass(frozen=True)
class History:
    """The days of history of an app or keyword that a cache holds as of a run's day."""

    first_fetch: date | None
    """The day it was first fetched (by a run or a backfill); None when never."""
    last_fetch: date | None
    held: set[date]
    """The days some answer covers (a day the service recorded nothing for too: it was asked)."""
    final: set[date]
    """The held days that were settled when fetched: never asked again."""

    def anchor(self, today: date, lookback: int) -> date:
        """The first day the runs keep continuous: ``lookback`` days before the first fetch (or ``today``).
        An older range a backfill fetched does not move it; nothing between it and the runs is asked for."""
        return (self.first_fetch or today) - timedelta(days=lookback)

    def missing(self, first: date, last: date) -> list[date]:
        """The days from ``first`` to ``last`` that no answer covers."""
        return [
            first + timedelta(days=n)
            for n in range((last - first).days + 1)
            if first + timedelta(days=n) not in self.held
        ]


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
    seen = fetched.get(endpoint) or Fetched((), "")
    due: list[dict[str, str]] = []
    entities = 0
    for call in calls:
        scope = _scope(ep, call)
        wanted: list[str | None] = []
        first: date | None = None
        for entity in _entity_list(ep, call):
            if item.history:
                start = history_start(item, seen.history((endpoint, scope, entity), today, _settle(ep)), today)
                if start is not None:
                    wanted.append(entity)
                    first = start if first is None else min(first, start)
                continue
            last = seen.last(endpoint, scope, entity, today)
            if last is None or (today - last).days >= item.every_days:
                wanted.append(entity)
        if not wanted:
            continue
        entities += len(wanted)
        request = dict(call)
        if ep.entity is not None:
            request[ep.entity] = ",".join(str(w) for w in wanted)
        if first is not None:
            request["start_date"] = min(first, date.fromisoformat(call["end_date"])).isoformat()
        due.append(request)
    if not due:
        return None
    return DueCall(item, endpoint, tuple(due), "auto" if item.history else "always", entities)


def trimmed(due: DueCall, last: date) -> DueCall | None:
    """``due`` (of a history item) asking its days up to ``last`` only; None when none of its calls
    begins by then. The days after wait for a later run (a budget that cannot pay for them all).

    >>> from storeframes.track.spec import Item
    >>> item = Item(0, "ranks", "search_history", 1, "search_history_frame", ())
    >>> call = {"keyword": "photo editor", "start_date": "2026-10-01", "end_date": "2026-10-20"}
    >>> trimmed(DueCall(item, "search_history", (call,), "auto", 1), date(2026, 10, 5)).calls[0]["end_date"]
    '2026-10-05'
    """
    calls = [
        {**c, "end_date": min(c["end_date"], last.isoformat())}
        for c in due.calls
        if c["start_date"] <= last.isoformat()
    ]
    if not calls:
        return None
    entities = sum(len(_entity_list(ENDPOINTS[due.endpoint], c)) for c in calls)
    return DueCall(due.item, due.endpoint, tuple(calls), due.refresh, entities)


def _settle(ep: Endpoint) -> int:
    return ep.freshness.settle_days


def history_start(item: Item, held: History, today: date) -> date | None:
    """The first day a run of history item ``item`` on ``today`` asks for an app or keyword; None when not due.

    It is due when the newest day held is ``every`` days old or older (a run keeps the days up to
    yesterday), or a day between the first run's ``lookback`` and that day is held by no answer (a
    missed week, a week over budget, a failure). It asks from the earliest day not held final, from
    the first run's ``lookback`` on, whatever happened in between; a backfill of an older range moves
    nothing. The final days the cache holds within are served from it, not asked again.

    >>> held = History(date(2026, 10, 1), date(2026, 10, 2), {date(2026, 9, 28) + timedelta(days=n)
    ...                for n in range(4)}, {date(2026, 9, 28) + timedelta(days=n) for n in range(3)})
    >>> history_start(Item(0, "ranks", "search_history", 1, "search_history_frame", (), lookback_days=3),
    ...               held, date(2026, 10, 10))  # run on the 1st and the 2nd, then on the 10th
    datetime.date(2026, 10, 1)
    """
    anchor = held.anchor(today, item.lookback_days)
    newest = max((d for d in held.held if d < today), default=None)
    if newest is not None and (today - newest).days <= item.every_days and not held.missing(anchor, newest):
        return None
    day = anchor
    while day < today:
        if day not in held.final:
            return day
        day += timedelta(days=1)
    return None


def last_fetched(item: Item, today: date, fetched: Mapping[str, Fetched]) -> date | None:
    """The newest day, on or before ``today``, any app or keyword of ``item`` was fetched; None when never."""
    endpoint, calls = canonical_calls(item, today)
    ep = ENDPOINTS[endpoint]
    seen = fetched.get(endpoint)
    if seen is None:
        return None
    days = [seen.last(endpoint, _scope(ep, call), entity, today) for call in calls for entity in _entity_list(ep, call)]
    return max((d for d in days if d is not None), default=None)


def gap_days(item: Item, today: date, fetched: Mapping[str, Fetched], *, ran: bool = False) -> list[date]:
    """The days before ``today`` that ``item`` should hold and the cache has nothing of (``ran``: also the
    days a run on ``today`` should have fetched).

    For the present, a day is missed when an app or keyword of the item was due (its newest
    snapshot ``every`` days old or older) and none was taken that day, counted from its first
    snapshot. For history, a day from the first run's ``lookback`` on that no answer covers, up to
    the last day the runs due so far keep (for a daily item, the day before yesterday; after a
    run, yesterday): a day the service recorded nothing for was asked, and is not missing. Only
    answers fetched on or before ``today`` count.
    """
    endpoint, calls = canonical_calls(item, today)
    ep = ENDPOINTS[endpoint]
    seen = fetched.get(endpoint) or Fetched((), "")
    missed: set[date] = set()
    for call in calls:
        scope = _scope(ep, call)
        for entity in _entity_list(ep, call):
            key = (endpoint, scope, entity)
            if item.history:
                held = seen.history(key, today, _settle(ep))
                if held.first_fetch is None and not ran:
                    continue
                last = today - timedelta(days=1 if ran else 1 + item.every_days)
                if held.last_fetch is not None:
                    last = max(last, held.last_fetch - timedelta(days=1))
                missed.update(
                    held.missing(held.anchor(today, item.lookback_days), min(last, today - timedelta(days=1)))
                )
                continue
            days = sorted(d for d in seen.days.get(key, ()) if d <= today)
            if not days:
                if ran:
                    missed.add(today)
                continue
            last, day = days[0], days[0] + timedelta(days=1)
            taken = set(days)
            while day < today or (ran and day == today):
                if day in taken:
                    last = day
                elif (day - last).days >= item.every_days:
                    missed.add(day)
                day += timedelta(days=1)
    return sorted(missed)


def days_text(days: Sequence[date], most: int | None = None) -> str:
    """Days as short text: runs of days as ``first..last``, the rest one by one; past ``most`` runs, how
    many more days.

    >>> days_text([date(2026, 10, 3), date(2026, 10, 4), date(2026, 10, 5), date(2026, 10, 9)])
    '2026-10-03..2026-10-05, 2026-10-09'
    >>> days_text([date(2026, 10, 3), date(2026, 10, 5), date(2026, 10, 6)], most=1)
    '2026-10-03 and 2 more days'
    """
    runs: list[list[date]] = []
    for day in sorted(days):
        if runs and day == runs[-1][-1] + timedelta(days=1):
            runs[-1].append(day)
        else:
            runs.append([day])
    shown = runs if most is None else runs[:most]
    text = ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}..{r[-1]}" for r in shown)
    more = sum(len(r) for r in runs[len(shown) :])
    return f"{text} and {more} more day{'s' if more > 1 else ''}" if more else text


def range_missing(item: Item, today: date, fetched: Mapping[str, Fetched], first: date, last: date) -> list[date]:
    """The days from ``first`` to ``last`` that no answer of history item ``item`` fetched on or before
    ``today`` covers, for any of its apps or keywords (a backfill's days left unfetched).

    >>> range_missing(item, day, fetched, date(2026, 10, 1), date(2026, 10, 5))  # doctest: +SKIP
    [datetime.date(2026, 10, 4)]
    """
    endpoint, calls = canonical_calls(item, today)
    ep = ENDPOINTS[endpoint]
    seen = fetched.get(endpoint) or Fetched((), "")
    keys = [(endpoint, _scope(ep, call), entity) for call in calls for entity in _entity_list(ep, call)]
    return sorted({d for key in keys for d in seen.history(key, today, _settle(ep)).missing(first, last)})


def fetched_by_endpoint(entries_of: Any, items: Sequence[Item], service: str) -> dict[str, Fetched]:
    """:class:`Fetched` of every endpoint the items use (``entries_of(endpoint)`` lists the cache's entries)."""
    return {e: Fetched(entries_of(e), service) for e in sorted({i.endpoint for i in items})}
