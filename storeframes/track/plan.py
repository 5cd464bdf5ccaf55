"""What a tracker's run on a day would send, item by item (:class:`TrackPlan`); nothing is sent to make it.

>>> plan = sf.Tracker.from_toml("tracking.toml").plan("2026-11-20")  # doctest: +SKIP
>>> plan.requests, plan.credits, plan.left_out                        # doctest: +SKIP
(9, 514, ())
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

import polars as pl

from ..answers import Entry
from ..client import Client, plan_requests
from ..errors import plural
from .budget import month_spent
from .due import DueCall, due_calls, fetched_by_endpoint, trimmed
from .spec import Item, TrackerSpec

__all__ = ["PLAN_SCHEMA", "TrackPlan", "client_entries", "make_plan", "part_that_fits"]

PLAN_SCHEMA = pl.Schema(
    {
        "item": pl.String(),
        "endpoint": pl.String(),
        "every_days": pl.Int64(),
        "due": pl.Boolean(),
        "entities": pl.Int64(),
        "requests": pl.Int64(),
        "cells": pl.Int64(),
        "cached_cells": pl.Int64(),
        "credits": pl.Int64(),
        "fits": pl.Boolean(),
    }
)


@dataclass(frozen=True)
class TrackPlan:
    """What a run on :attr:`day` would send, item by item (nothing is sent to make it).

    ``items`` has a row per item: whether it is ``due``, its due apps or keywords (``entities``),
    ``requests`` and estimated maximum ``credits``, ``cells`` and ``cached_cells``, and whether it
    ``fits`` the budgets (items that do not are left out, in spec order).
    """

    tracker: str
    day: date
    items: pl.DataFrame
    month_spent: int
    budget_per_run: int | None
    budget_per_month: int | None
    calls: tuple[DueCall, ...] = field(default=(), repr=False)
    cut: dict[str, date] = field(default_factory=dict, repr=False)
    """History items of which only the days up to a date fit the budgets (oldest first, so the next run
    goes on from there): in :attr:`items` with what is sent, and named in :attr:`left_out`."""

    @property
    def requests(self) -> int:
        """Requests the run would send (of the items that fit)."""
        return int(self.items.filter("fits")["requests"].sum())

    @property
    def credits(self) -> int:
        """The estimated maximum credits of those requests."""
        return int(self.items.filter("fits")["credits"].sum())

    @property
    def left_out(self) -> tuple[str, ...]:
        """The due items left out for the budgets, whole or in part (:attr:`cut`), in spec order."""
        return tuple(
            self.items.filter(pl.col("due") & (~pl.col("fits") | pl.col("item").is_in(list(self.cut))))["item"]
        )

    def summary(self) -> str:
        """A few lines for people."""
        due = self.items.filter("due")
        lines = [
            f"{self.tracker} on {self.day}: {plural(due.height, 'item')} due of {self.items.height}, "
            f"{plural(self.requests, 'request')} to send, at most {plural(self.credits, 'credit')}"
        ]
        for row in due.iter_rows(named=True):
            mark = "" if row["fits"] else "  (left out: over the budget)"
            if row["item"] in self.cut:
                mark = f"  (over the budget: its days up to {self.cut[row['item']]} only, the rest at the next run)"
            lines.append(
                f"  {row['item']}: {plural(row['requests'], 'request')}, {row['credits']:,} credits, "
                f"{row['cells'] - row['cached_cells']:,} of {plural(row['cells'], 'cell')} to fetch{mark}"
            )
        if self.budget_per_month is not None:
            lines.append(f"  month: {self.month_spent:,} of {self.budget_per_month:,} credits spent")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"TrackPlan({self.summary().splitlines()[0]})"


def client_entries(client: Client) -> Callable[[str], list[Entry]]:
    """The cache's entries of an endpoint (none without a cache)."""
    cache = client.cache
    return cache.entries if cache is not None else (lambda _: [])


def make_plan(
    spec: TrackerSpec, client: Client, day: date, chosen: Sequence[Item], *, backfill: tuple[date, date] | None = None
) -> TrackPlan:
    fetched = {} if backfill else fetched_by_endpoint(client_entries(client), chosen, client.namespace)
    spent = month_spent(client, day)
    run_left = spec.budget_per_run
    month_left = None if spec.budget_per_month is None else max(0, spec.budget_per_month - spent)
    rows, calls, cut = [], [], {}
    for item in chosen:
        due = due_calls(item, day, fetched, backfill=backfill)
        row = {
            "item": item.name,
            "endpoint": item.endpoint,
            "every_days": item.every_days,
            "due": due is not None,
            "entities": 0,
            "requests": 0,
            "cells": 0,
            "cached_cells": 0,
            "credits": 0,
            "fits": True,
        }
        if due is not None:
            plan = plan_requests(client, due.endpoint, due.calls, refresh=due.refresh)  # type: ignore[arg-type]
            row |= {
                "entities": due.entities,
                "requests": plan.to_send,
                "cells": plan.cells,
                "cached_cells": plan.cached_cells,
                "credits": plan.estimate,
            }
            fits = all(left is None or plan.estimate <= left for left in (run_left, month_left))
            part = None if fits or not item.history else part_that_fits(client, due, run_left, month_left)
            if part is not None:  # a long catch-up of history: its oldest days that fit, the rest next time
                due, plan, cut[item.name] = part
                row |= {"entities": due.entities, "requests": plan.to_send, "cells": plan.cells}
                row |= {"cached_cells": plan.cached_cells, "credits": plan.estimate}
            row["fits"] = fits = fits or part is not None
            if fits:
                calls.append(due)
                run_left = None if run_left is None else run_left - plan.estimate
                month_left = None if month_left is None else month_left - plan.estimate
        rows.append(row)
    frame = pl.DataFrame(rows, schema=PLAN_SCHEMA, orient="row") if rows else pl.DataFrame(schema=PLAN_SCHEMA)
    budgets = (spec.budget_per_run, spec.budget_per_month)
    return TrackPlan(spec.name, day, frame, spent, *budgets, tuple(calls), cut)


def part_that_fits(client: Client, due: DueCall, *lefts: int | None) -> tuple[DueCall, Any, date] | None:
    """The most days of a history item's due calls, from its oldest, whose estimate fits what is left of the
    budgets: the calls, their plan and the last day; None when not even its first day fits."""
    left = min(x for x in lefts if x is not None)
    first = min(date.fromisoformat(c["start_date"]) for c in due.calls)
    low, high, found = 0, (max(date.fromisoformat(c["end_date"]) for c in due.calls) - first).days - 1, None
    while low <= high:  # the estimate grows with the days asked: the last day that fits, found by halving
        middle = (low + high) // 2
        last = first + timedelta(days=middle)
        part = trimmed(due, last)
        if part is not None:
            plan = plan_requests(client, part.endpoint, part.calls, refresh=part.refresh)  # type: ignore[arg-type]
            if plan.estimate <= left:
                found, low = (part, plan, last), middle + 1
                continue
        high = middle - 1
    return found
