"""The engine: which cells the cache serves, which requests to send, how answers compose. No I/O.

The few words the rest of the package speaks:

- a **call** is what a user asks of one endpoint, as canonical parameters
  (:func:`storeframes.catalog.validate`); it may cover any number of apps or days;
- a **cell** is the smallest thing cached, ``(entity, facet, day)``: one app or
  keyword, one metric, one day (:mod:`storeframes.planning`);
- a **request** is one GET to the service, at most 5 apps and one run of days;
- a **response** (:class:`~storeframes.Response`) is the service's answer to one
  request; kept in the cache it is an **entry** (:class:`~storeframes.cache.Entry`);
- a **part** (:class:`~storeframes.Part`) is the cells of a call that one response
  or entry provides;
- an **answer** (:class:`~storeframes.Answer`) is the parts of one call merged.

The engine decides and returns what to do; the client does it and reports back. Given
an endpoint, a call, a view of the cache's index, ``now`` and the refresh mode,
:func:`plan_call` says which cells cached entries serve and which requests fetch the
rest; :func:`parts_of` says which entry or response provides which cells, and returns
the cache hits for the ledger instead of writing them; :func:`compose` merges the parts
into an answer; :func:`halves` says how to find the apps a country refused. Its unit
tests need no sandbox, no threads and no files.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Protocol

import polars as pl

from . import planning
from .answers import Answer, Part, Response
from .cache import Entry, Refresh
from .catalog import Endpoint
from .planning import Cell

__all__ = [
    "PLAN_SCHEMA",
    "CallPlan",
    "Fetched",
    "Hit",
    "Index",
    "Plan",
    "compose",
    "halves",
    "key",
    "parts_of",
    "plan_call",
    "summarize",
    "unique_requests",
]

Fetched = tuple[list[Response], list[str]]
"""What one request gave: its responses (several when it had to be split) and the apps refused."""


class Index(Protocol):
    """The cache as the engine sees it: which entry serves each cell."""

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
    ) -> dict[Cell, Entry]: ...


def key(params: Mapping[str, str]) -> str:
    """One text per request: its canonical parameters as sorted JSON."""
    return json.dumps(dict(params), sort_keys=True)


@dataclass(frozen=True)
class CallPlan:
    """One call: its cells, the entries that serve some of them, and the requests for the rest."""

    params: dict[str, str]
    cells: list[Cell]
    cached: dict[Cell, Entry]
    requests: list[dict[str, str]]

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
    ep: Endpoint, params: dict[str, str], index: Index | None, *, service: str, now: datetime, refresh: Refresh
) -> CallPlan:
    """Which cells of a call ``index`` serves, and the fewest requests for the others."""
    cells = planning.cells_of(ep, params)
    cached: dict[Cell, Entry] = {}
    if index is not None:
        scope = planning.scope_of(ep, params)
        cached = index.lookup(ep, service=service, scope=scope, cells=cells, now=now, refresh=refresh, sync=False)
    missing = [cell for cell in cells if cell not in cached]
    return CallPlan(params, cells, cached, planning.requests_for(ep, params, missing))


def unique_requests(plans: Sequence[CallPlan]) -> list[dict[str, str]]:
    """The requests of several calls, each once, in order."""
    return list({key(request): request for plan in plans for request in plan.requests}.values())


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
    fetched: Mapping[str, Fetched],
    *,
    loaded: Mapping[str, Response] | None = None,
) -> tuple[list[Part], tuple[str, ...], list[Hit]]:
    """Which entry or response provides which cells of a call, the apps refused, and the hits to record.

    ``fetched`` holds what each of the plan's requests gave (by :func:`key`);
    ``loaded`` the responses read from cached entries, by entry id (parts of entries
    not read carry the entry id only). Parts come in the order of their first cell.
    """
    loaded = loaded or {}
    wanted = set(plan.cells)
    parts: list[Part] = []
    hits: list[Hit] = []
    unavailable: set[str] = set()
    by_entry: dict[str, list[Cell]] = {}
    for cell, entry in plan.cached.items():
        if entry.available:
            by_entry.setdefault(entry.id, []).append(cell)
        elif cell[0] is not None:
            unavailable.add(cell[0])
    for entry_id, cells in by_entry.items():
        entry = plan.cached[cells[0]]
        saved = entry.share(len(cells))
        parts.append(Part(loaded.get(entry_id), frozenset(cells), len(cells) == len(entry.cells), saved, entry_id))
        hits.append(Hit(ep.name, entry.params, saved))
    for request in plan.requests:
        responses, refused = fetched[key(request)]
        unavailable.update(refused)
        for response in responses:
            covered = set(planning.cells_of(ep, response.params))
            mine = covered & wanted
            parts.append(Part(response, frozenset(mine), len(mine) == len(covered), 0, response.entry))
    parts.sort(key=lambda p: min((c[0] or "", c[1] or "", c[2] or date.min) for c in p.cells))
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

    def __repr__(self) -> str:
        answers = int((self.requests["source"] == "cache").sum())
        return (
            f"Plan({self.endpoint}: {self.to_send} request(s) to send, at most {self.estimate} credits; "
            f"{answers} cached answer(s) used, saving {self.saved} credits; "
            f"{self.cached_cells} of {self.cells} cells cached)"
        )


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
        for request in unique_requests(plans)
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
