"""The engine: which cells the cache serves, which requests to send, how answers compose. No I/O.

The few words the rest of the package speaks:

- a **call** is what a user asks of one endpoint, as canonical parameters
  (:func:`storeframes.catalog.validate`); it may cover any number of apps or days;
- a **cell** is the smallest thing cached, ``(entity, facet, day)``: one app or
  keyword, one metric, one day (:mod:`storeframes.planning`);
- a **request** is one GET to the service, at most 5 apps and one run of days;
- a **response** (:class:`~storeframes.Response`) is the service's answer to one
  request; kept in the cache it is an **entry** (:class:`~storeframes.answers.Entry`);
- a **part** (:class:`~storeframes.Part`) is the cells of a call that one response
  or entry provides;
- an **answer** (:class:`~storeframes.Answer`) is the parts of one call merged.

The engine decides and returns what to do; the client does it and reports back. Given
an endpoint, a call, a view of the cache's index, ``now`` and the refresh mode,
:func:`plan_call` says which cells cached entries serve (the index names the entries
holding each cell; :func:`serving` judges which may serve, by the endpoint's freshness
and the refresh mode) and which requests fetch the rest; :func:`parts_of` says which entry or response provides which cells, and returns
the cache hits for the ledger instead of writing them; :func:`compose` merges the parts
into an answer; :func:`halves` says how to find the apps a country refused. Its unit
tests need no sandbox, no threads and no files.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import cached_property
from operator import itemgetter
from typing import Any, NamedTuple, Protocol

import polars as pl

from . import planning
from .answers import CLOCK_SKEW, Answer, Entry, Part, Refresh, Response, short_params
from .catalog import Endpoint, Freshness
from .errors import html_table, plural
from .planning import Cell

__all__ = [
    "CLOCK_SKEW",
    "PLAN_SCHEMA",
    "UNAVAILABLE_FRESHNESS",
    "CallPlan",
    "Fetched",
    "Hit",
    "Index",
    "Plan",
    "Pool",
    "compose",
    "halves",
    "is_fresh",
    "key",
    "lease_groups",
    "lease_name",
    "lease_names",
    "missing",
    "parts_of",
    "plan_call",
    "request_leases",
    "requests_over",
    "serving",
    "summarize",
    "unique_requests",
]


class Fetched(NamedTuple):
    """What one request gave.

    ``responses``: its responses (several when it had to be split); ``refused``: the apps
    the country refused, each with the parameters of the request that found it refused
    (cached as not available); ``absent``: apps it asked for that a successful answer left
    out, likewise with their request's parameters (not cached: asked for again next time).
    """

    responses: list[Response]
    refused: list[tuple[dict[str, str], str]]
    absent: Sequence[tuple[dict[str, str], str]] = ()


class Pool:
    """The responses a batch of calls got, fetched by it or borrowed from another caller, and the apps refused.

    Each response is filed under the cells it covers, so a call finds the response for
    any missing cell at once, whichever call's request fetched it. ``paid`` responses
    were fetched (and paid for) by this batch; borrowed ones were paid by the caller who
    fetched them.
    """

    def __init__(self, ep: Endpoint):
        self.ep = ep
        self.responses: list[Response] = []
        self.refused: set[tuple[str, str]] = set()  # (scope, app)
        self.absent: set[tuple[str, str]] = set()  # (scope, app) left out of a successful answer
        self._paid: set[int] = set()
        self._cover: dict[tuple[str, Cell], int] = {}

    def add(self, fetched: Fetched, *, paid: bool) -> None:
        """File what one request gave."""
        responses, refused, absent = Fetched(*fetched)
        for response in responses:
            scope = planning.scope_of(self.ep, response.params)
            index = len(self.responses)
            self.responses.append(response)
            if paid:
                self._paid.add(index)
            for cell in planning.cells_of(self.ep, response.params):
                self._cover.setdefault((scope, cell), index)
        for params, app in refused:
            self.refused.add((planning.scope_of(self.ep, params), app))
        for params, app in absent:
            self.absent.add((planning.scope_of(self.ep, params), app))

    def covering(self, scope: str, cell: Cell) -> int | None:
        """The index of the response that covers ``cell`` of ``scope``, if any."""
        return self._cover.get((scope, cell))

    def is_refused(self, scope: str, cell: Cell) -> bool:
        return cell[0] is not None and (scope, cell[0]) in self.refused

    def is_absent(self, scope: str, cell: Cell) -> bool:
        """Whether the answer for ``cell``'s app left it out (this batch asks no more; the next call does)."""
        return cell[0] is not None and (scope, cell[0]) in self.absent

    def paid(self, index: int) -> bool:
        return index in self._paid

    def __len__(self) -> int:
        return len(self.responses)


class Index(Protocol):
    """The cache as the engine sees it: which entries hold each cell, newest first.

    It says nothing of freshness: :func:`serving` judges which entry may serve a cell.
    """

    def candidates(
        self, ep: Endpoint, *, service: str, scope: str, cells: Collection[Cell], sync: bool = True
    ) -> Mapping[Cell, Sequence[Entry]]: ...

    def newest(
        self, ep: Endpoint, *, service: str, scope: str, cells: Collection[Cell], sync: bool = True
    ) -> Mapping[Cell, Entry]: ...


UNAVAILABLE_FRESHNESS = Freshness(current="utc_day")
"""The freshness of an answer saying an app is not available: it is asked again the next UTC day."""


def is_fresh(ep: Endpoint, entry: Entry, cell: Cell, now: datetime) -> bool:
    """Whether ``entry`` may serve ``cell`` at ``now``, by the endpoint's freshness.

    Members of a team date answers by their own clocks. An entry fetched after ``now``
    but at most :data:`CLOCK_SKEW` after it (a colleague's clock ahead of this one, or
    this one behind) is judged as fetched ``now``: fresh, never fresher nor more final
    than an answer fetched now (a UTC day or an hour counts from this clock, not the
    writer's). One fetched further ahead is stale: judged by its time it would be fresh
    for as long as that clock is ahead, and a recent day of history would look final for
    ever; ``refresh="never"`` (and offline) still serves it. An answer saying the app is
    not available is fresh for its UTC day (:data:`UNAVAILABLE_FRESHNESS`).
    """
    return _serves(judge(ep, entry, now), cell)


def judge(ep: Endpoint, entry: Entry, now: datetime) -> tuple[bool, date | None]:
    """What :func:`is_fresh` says of ``entry`` at ``now`` for every cell at once: whether it is fresh
    whatever the cell's day, and the last day it holds as final (None: none), a cell of a later
    day being fresh only when the first is. Judged once per entry, not once per cell."""
    if entry.fetched_at > now + CLOCK_SKEW:
        return False, None
    fetched_at = min(entry.fetched_at, now)
    if not entry.available:
        return UNAVAILABLE_FRESHNESS.is_fresh(fetched_at, None, now=now), None
    freshness = ep.freshness
    if ep.daily:
        recent = now - fetched_at < freshness.recent
        return recent, freshness.last_final(fetched_at)
    day = date.fromisoformat(entry.params["end_date"]) if ep.date_ranged else None
    return freshness.is_fresh(fetched_at, day, now=now), None


def _serves(verdict: tuple[bool, date | None], cell: Cell) -> bool:
    """Whether an entry judged ``verdict`` (:func:`judge`) may serve ``cell``."""
    fresh, final_until = verdict
    return fresh or (final_until is not None and cell[2] is not None and cell[2] <= final_until)


def serving(ep: Endpoint, newest: Mapping[Cell, Entry], *, now: datetime, refresh: Refresh) -> dict[Cell, Entry]:
    """For each cell the cache can serve, the newest entry holding it (``newest``: the newest entry of
    each cell, as :meth:`Index.newest` gives them).

    ``refresh="auto"`` serves the newest entry only while it is fresh (:func:`is_fresh`; an
    older one never stands in for it), ``"never"`` the newest whatever its age, ``"always"``
    none. Each entry is judged once (:func:`judge`), whatever the number of its cells.
    """
    if refresh == "always":
        return {}
    if refresh == "never":
        return dict(newest)
    held = list(newest.values())
    judged = {key: judge(ep, entry, now) for key, entry in dict(zip(map(id, held), held, strict=True)).items()}
    last = max(map(itemgetter(2), newest), default=None) if ep.daily else None
    if all(fresh or (final is not None and last is not None and last <= final) for fresh, final in judged.values()):
        return dict(newest)  # every entry serves every cell it holds: no judgement per cell
    return {cell: entry for cell, entry in newest.items() if _serves(judged[id(entry)], cell)}


def key(params: Mapping[str, str]) -> str:
    """One text per request: its canonical parameters as sorted JSON."""
    return json.dumps(dict(params), sort_keys=True)


@dataclass(frozen=True)
class CallPlan:
    """One call: its cells, the entries that serve some of them, and the requests for the rest."""

    params: dict[str, str]
    cells: list[Cell]
    cached: dict[Cell, Entry]
    scope: str
    """The call's scope (:func:`~storeframes.planning.scope_of`), judged once."""
    missing: list[Cell]
    """The cells no cached entry serves, in order."""
    endpoint: Endpoint = field(repr=False, compare=False)

    @cached_property
    def requests(self) -> list[dict[str, str]]:
        """The fewest requests for the call's missing cells, planned when first asked (a batch plans its
        calls' requests together, :func:`requests_over`)."""
        return planning.requests_for(self.endpoint, self.params, self.missing)

    def entries(self) -> dict[str, Entry]:
        """The available entries the call uses, by id."""
        return {e.id: e for e in self.cached.values() if e.available}


@dataclass(frozen=True)
class Hit:
    """A cached entry served a call: a ledger row to record."""

    endpoint: str
    params: Mapping[str, str]
    saved: int


def plan_call(
    ep: Endpoint,
    params: dict[str, str],
    index: Index | None,
    *,
    service: str,
    now: datetime,
    refresh: Refresh,
    since: datetime | None = None,
    cells: list[Cell] | None = None,
    scope: str | None = None,
) -> CallPlan:
    """Which cells of a call ``index`` serves, and the fewest requests for the others.

    ``since`` serves only entries fetched after it (a call with
    ``refresh="always"`` takes what another caller fetched while it waited, nothing older), and not
    after the UTC day of ``now``: a day replayed before answers the cache keeps of a later day
    takes its own.
    ``cells`` and ``scope`` are the call's when known already (:func:`~storeframes.planning.cells_of`,
    :func:`~storeframes.planning.scope_of`).
    """
    cells = planning.cells_of(ep, params) if cells is None else cells
    cached: dict[Cell, Entry] = {}
    scope = planning.scope_of(ep, params) if scope is None else scope
    if index is not None and refresh != "always":
        held = index.newest(ep, service=service, scope=scope, cells=cells, sync=False)
        cached = serving(ep, held, now=now, refresh=refresh)
        if since is not None:  # fetched while it waited: on the clock's day, not a later one a replay finds kept
            today = now.astimezone(UTC).date()
            cached = {
                cell: entry
                for cell, entry in cached.items()
                if entry.fetched_at > since and entry.fetched_at.astimezone(UTC).date() <= today
            }
    # every cell served (``cached`` holds only cells of ``cells``, each once): nothing missing, found without a pass
    whole = len(cached) == len(cells)
    missing = [] if whole else [cell for cell in cells if cell not in cached] if cached else list(cells)
    return CallPlan(params, cells, cached, scope, missing, ep)


def unique_requests(plans: Sequence[CallPlan]) -> list[dict[str, str]]:
    """The requests of several calls, each once, in order."""
    return list({key(request): request for plan in plans for request in plan.requests}.values())


Missing = dict[str, dict[Cell, None]]
"""Cells no cached entry serves, by scope, in the order the calls name them."""


def missing(ep: Endpoint, plans: Sequence[CallPlan], pool: Pool | None = None) -> Missing:
    """The cells of the calls that neither the cache nor ``pool`` serves (refused apps left out)."""
    out: Missing = {}
    for plan in plans:
        scope = plan.scope
        if pool is None or not (pool.responses or pool.refused or pool.absent):  # the cells the plan found missing
            if plan.missing:
                out.setdefault(scope, {}).update(dict.fromkeys(plan.missing))
            continue
        for cell in plan.cells:
            if cell in plan.cached:
                continue
            if pool.covering(scope, cell) is not None or pool.is_refused(scope, cell) or pool.is_absent(scope, cell):
                continue
            out.setdefault(scope, {})[cell] = None
    return out


def requests_over(ep: Endpoint, plans: Sequence[CallPlan], cells: Missing) -> list[dict[str, str]]:
    """The fewest requests for ``cells``, planned over every call at once.

    Calls that overlap share requests: ``[X]``, ``[X]`` and ``[X, Y]`` need one request
    for X and Y, not three. Apps of one scope are packed together whichever call names
    them; keywords and calls without an entity are planned one entity at a time.
    """
    requests: list[dict[str, str]] = []
    for scope, wanted in cells.items():
        templates: dict[str | None, dict[str, str]] = {}
        for plan in plans:
            if plan.scope != scope:
                continue
            entities = {cell[0]: None for cell in plan.cells if cell in wanted}
            groups = dict.fromkeys([None] if entities and ep.entity in (None, "apps") else entities)
            for group in groups:  # a plan widens each template once, however many apps it names
                template = templates.get(group)
                templates[group] = plan.params if template is None else _widen(ep, template, plan.params)
        by_entity: dict[str | None, list[Cell]] = {}
        if any(group is not None for group in templates):  # the wanted cells of each entity, in one pass
            for cell in wanted:
                by_entity.setdefault(cell[0], []).append(cell)
        for group, template in templates.items():
            mine = list(wanted) if group is None else by_entity.get(group, [])
            requests.extend(planning.requests_for(ep, template, mine))
    return requests


def _widen(ep: Endpoint, template: Mapping[str, str], params: Mapping[str, str]) -> dict[str, str]:
    """``template`` naming also the apps and facets of ``params`` (same scope), in order of first mention."""
    widened = dict(template)
    for name in (ep.entity if ep.entity == "apps" else None, ep.facet):
        if name:
            items = {**dict.fromkeys(template[name].split(",")), **dict.fromkeys(params[name].split(","))}
            widened[name] = ",".join(items)
    if ep.daily:  # the days come from the cells; the template's range only has to hold them all
        widened["start_date"] = min(template["start_date"], params["start_date"])
        widened["end_date"] = max(template["end_date"], params["end_date"])
    return widened


def lease_name(ep: Endpoint, service: str, scope: str, entity: str | None) -> str:
    """What a lease is taken on: one app or keyword (``*`` without one) of one endpoint, scope and service."""
    return f"{ep.name}|{service}|{scope}|{entity if entity is not None else '*'}"


def lease_names(ep: Endpoint, service: str, cells: Missing) -> dict[str, Missing]:
    """The cells by the lease that covers them."""
    out: dict[str, Missing] = {}
    for scope, wanted in cells.items():
        for cell in wanted:
            out.setdefault(lease_name(ep, service, scope, cell[0]), {}).setdefault(scope, {})[cell] = None
    return out


def request_leases(ep: Endpoint, service: str, request: Mapping[str, str]) -> list[str]:
    """The leases a request's cells fall under."""
    scope = planning.scope_of(ep, request)
    return list(dict.fromkeys(lease_name(ep, service, scope, cell[0]) for cell in planning.cells_of(ep, request)))


def lease_groups(
    ep: Endpoint, service: str, requests: Sequence[dict[str, str]]
) -> list[tuple[list[str], list[dict[str, str]]]]:
    """The requests in groups that share no lease, each with the leases it needs.

    Requests of one app or keyword (two runs of days, say) fall in one group, sent one
    after the other under the group's leases; groups are independent of each other.
    """
    owner: dict[str, int] = {}  # lease -> group
    groups: list[tuple[list[str], list[dict[str, str]]] | None] = []
    for request in requests:
        names = request_leases(ep, service, request)
        joined = sorted({owner[n] for n in names if n in owner})
        merged_names: list[str] = []
        merged_requests: list[dict[str, str]] = []
        for index in joined:
            group = groups[index]
            assert group is not None
            merged_names.extend(group[0])
            merged_requests.extend(group[1])
            groups[index] = None
        merged_names.extend(n for n in names if n not in merged_names)
        merged_requests.append(request)
        groups.append((merged_names, merged_requests))
        for name in merged_names:
            owner[name] = len(groups) - 1
    return [group for group in groups if group is not None]


def halves(ep: Endpoint, params: Mapping[str, str]) -> list[dict[str, str]]:
    """A request cut in two by its apps, to find which app a country refused; [] for one app."""
    apps = params["apps"].split(",") if ep.entity == "apps" else []
    if len(apps) <= 1:
        return []
    mid = len(apps) // 2
    return [{**params, "apps": ",".join(apps[:mid])}, {**params, "apps": ",".join(apps[mid:])}]


def parts_of(
    ep: Endpoint,
    plan: CallPlan,
    pool: Pool,
    *,
    loaded: Mapping[str, Response] | None = None,
    counted: set[int] | None = None,
) -> tuple[list[Part], tuple[str, ...], list[Hit]]:
    """Which entry or response provides which cells of a call, the apps refused, and the hits to record.

    ``pool`` holds what the requests gave (this batch's, or borrowed from another caller);
    ``loaded`` the responses read from cached entries, by entry id (parts of entries not
    read carry the entry id only). A response this batch paid for is ``charged`` in the
    first part that uses it; ``counted`` remembers those across the calls of a batch, so
    the answers' costs add up to what was paid. Parts come in the order of their first cell.
    """
    loaded = loaded or {}
    counted = set() if counted is None else counted
    scope = plan.scope
    parts: list[Part] = []
    hits: list[Hit] = []
    unavailable: set[str] = set()
    by_entry: dict[str, list[Cell]] = {}
    by_response: dict[int, list[Cell]] = {}
    fetched = len(pool) > 0
    cached = plan.cached
    # what this batch got comes first (no hits), cell by cell; with nothing got, the cells cached a run at a time
    for held, run in planning.runs(plan.cells, cached) if not fetched else [(None, plan.cells)]:
        if held is not None:
            if held.available:
                by_entry.setdefault(held.id, []).extend(run)
            else:
                unavailable.update(cell[0] for cell in run if cell[0] is not None)
            continue
        for cell in run:
            index = pool.covering(scope, cell) if fetched else None
            if index is not None:
                by_response.setdefault(index, []).append(cell)
                continue
            entry = cached.get(cell)
            if entry is not None:
                if entry.available:
                    by_entry.setdefault(entry.id, []).append(cell)
                elif cell[0] is not None:
                    unavailable.add(cell[0])
                continue
            if pool.is_refused(scope, cell):
                unavailable.add(str(cell[0]))
                continue
            if pool.is_absent(scope, cell):  # the answer left it out: no part, and named by the caller
                continue
            raise LookupError(f"{ep.name}: no answer covers {cell} of {dict(plan.params)}")
    for entry_id, cells in by_entry.items():
        entry = plan.cached[cells[0]]
        saved = entry.share(len(cells))
        parts.append(Part(loaded.get(entry_id), frozenset(cells), len(cells) == len(entry.cells), saved, entry_id))
        hits.append(Hit(ep.name, entry.params, saved))
    for index, cells in by_response.items():
        response = pool.responses[index]
        covered = len(planning.cells_of(ep, response.params))
        whole = len(cells) == covered
        if pool.paid(index):
            charged = index not in counted
            counted.add(index)
            parts.append(Part(response, frozenset(cells), whole, 0, response.entry, charged))
        else:  # another caller paid for it while this one waited: like a cache hit
            saved = round(response.cost * len(cells) / covered) if covered else 0
            parts.append(Part(response, frozenset(cells), whole, saved, response.entry))
            hits.append(Hit(ep.name, response.params, saved))
    parts.sort(key=lambda p: planning.first_cell(p.cells))
    return parts, tuple(sorted(unavailable)), hits


def compose(ep: Endpoint, params: Mapping[str, str], parts: Sequence[Part], unavailable: tuple[str, ...]) -> Answer:
    """One call's answer: the results of its parts merged (every part's response read)."""
    read = [(p, p.response) for p in parts if p.response is not None]
    merged = [(response.result, p.cells, p.whole) for p, response in read]
    result = planning.merge_result(ep, merged) if merged else None
    if result is None and ep.entity == "apps":
        result = {}
    responses = tuple(response for _, response in read)
    return Answer(ep.name, dict(params), result, responses, unavailable, tuple(p for p, _ in read))


PLAN_SCHEMA = pl.Schema(
    {"endpoint": pl.String, "params": pl.String, "source": pl.String, "cells": pl.Int64, "credits": pl.Int64}
)


@dataclass(frozen=True)
class Plan:
    """What a call would do, worked out without sending anything.

    ``requests`` has one row per request to send (``source="send"``, ``credits`` its
    estimated maximum cost) and per cached answer the call would use
    (``source="cache"``, ``credits`` the original cost of the cells it serves).
    """

    endpoint: str
    requests: pl.DataFrame
    cells: int
    cached_cells: int

    @property
    def to_send(self) -> int:
        """How many requests the call would send."""
        return int((self.requests["source"] == "send").sum())

    @property
    def estimate(self) -> int:
        """The estimated maximum credits of the requests to send."""
        return int(self.requests.filter(pl.col("source") == "send")["credits"].sum())

    @property
    def saved(self) -> int:
        """Credits the cached answers stand for."""
        return int(self.requests.filter(pl.col("source") == "cache")["credits"].sum())

    @property
    def cached(self) -> bool:
        """Whether the cache answers the whole call."""
        return self.to_send == 0

    def _said(self) -> str:
        answers = int((self.requests["source"] == "cache").sum())
        return (
            f"{plural(self.to_send, 'request')} to send, at most {plural(self.estimate, 'credit')}; "
            f"{plural(answers, 'cached answer')} used, saving {plural(self.saved, 'credit')}; "
            f"{self.cached_cells:,} of {plural(self.cells, 'cell')} cached"
        )

    def __repr__(self) -> str:
        return f"Plan({self.endpoint}: {self._said()})"

    SHOWN_ROWS = 20
    """The most requests :meth:`_repr_html_` lists (a last line counts the others)."""

    def _repr_html_(self) -> str:
        rows = [
            (short_params(json.loads(params), 90), "send" if source == "send" else "cache", cells, credits)
            for params, source, cells, credits in self.requests.select("params", "source", "cells", "credits")
            .head(self.SHOWN_ROWS)
            .iter_rows()
        ]
        more = max(0, self.requests.height - self.SHOWN_ROWS)
        header = ("request", "source", "cells", "credits")
        return html_table(f"Plan of {self.endpoint}: {self._said()}", header, rows, more=more)


def summarize(ep: Endpoint, plans: Sequence[CallPlan]) -> Plan:
    """The :class:`Plan` of several calls: each request to send once, each cached entry once."""
    rows: list[dict[str, Any]] = [
        {
            "endpoint": ep.name,
            "params": key(request),
            "source": "send",
            "cells": len(planning.cells_of(ep, request)),
            "credits": ep.estimate(request),
        }
        for request in requests_over(ep, plans, missing(ep, plans))
    ]
    entries = {e.id: e for plan in plans for e in plan.cached.values() if e.available}
    used = Counter(e.id for plan in plans for e in plan.cached.values() if e.available)
    for entry_id, count in used.items():
        entry = entries[entry_id]
        rows.append(
            {
                "endpoint": ep.name,
                "params": key(entry.params),
                "source": "cache",
                "cells": count,
                "credits": entry.share(count),
            }
        )
    frame = pl.DataFrame(rows, schema=PLAN_SCHEMA, orient="row") if rows else pl.DataFrame(schema=PLAN_SCHEMA)
    return Plan(
        endpoint=ep.name,
        requests=frame,
        cells=sum(len(p.cells) for p in plans),
        cached_cells=sum(len(p.cached) for p in plans),
    )
