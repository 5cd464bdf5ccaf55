"""What a tracker's run on a day would send, item by item (:class:`TrackPlan`); nothing is sent to make it.

>>> plan = sf.Tracker.from_toml("tracking.toml").plan("2026-11-20")  # doctest: +SKIP
>>> plan.requests, plan.credits, plan.left_out                        # doctest: +SKIP
(9, 514, ())
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

import polars as pl

from ..errors import plural
from .due import DueCall

__all__ = ["PLAN_SCHEMA", "TrackPlan"]

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
