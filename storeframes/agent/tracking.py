"""The tools of the tracker and the spending: ``events`` (what the alerts found), ``track_status`` (the
tracker's items, last runs and the month's spend) and ``spend`` (credits spent and saved, from the ledger).

>>> print(surface.spend(by="day").text)  # doctest: +SKIP
spend since ...
"""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from typing import Any

import polars as pl

from ..ledger import spend_summary
from ..track import events
from .tables import MOST_ROWS, Shown, show
from .tools import Tools, day_of, refused, texts

__all__ = ["TrackerTools"]


class TrackerTools(Tools):
    """``events``, ``track_status`` and ``spend``: the tracker's findings and the token's spending."""

    def events(self, since: Any = None, until: Any = None, rule: Any = None, limit: int = 20) -> Shown:
        """The events the tracker's alerts found, newest day first."""
        first = day_of(since, "since", "events") or self.today() - timedelta(days=7)
        tracker = self.tracker.spec.name if self.tracker is not None else None
        found = events(self.cache, tracker=tracker, since=first, until=day_of(until, "until", "events"))
        rules = texts(rule, "rule", "events")
        if rules:
            found = found.filter(pl.col("rule").is_in(rules))
        found = found.sort("day", descending=True, maintain_order=True)
        columns = ["day", "since", "rule", "app_id", "keyword", "target", "before", "after", "detail"]
        return show(
            found,
            title=f"events since {first}",
            limit=limit,
            columns=columns,
            provenance={"requests sent": 0, "from": "the cache"},
            hint="name a rule or a later since",
        )

    def track_status(self) -> Shown:
        """The tracker's items (last snapshot, due, days missing), its last runs and the month's spend; ``missing``
        names the days not fetched, by item."""
        if self.tracker is None:
            raise refused(
                "tracker", None, "a server started with --tracker SPEC (the tracker's TOML spec)", "track_status"
            )
        status = self.tracker.status(self.today())
        lines = status.summary().splitlines()  # the first line, and the days missing said, not left to the rows
        notes = [lines[0], *(line.strip() for line in lines[1:] if "missing" in line)]
        shown = show(status.items, title=f"tracker {status.tracker} on {status.day}", limit=MOST_ROWS, notes=notes)
        runs = status.runs.select("day", "kind", "status", "requests", "credits_spent", "cells_new").tail(5)
        shown.text += "\n\n" + show(runs, title="last runs", limit=5).text
        missing = {item: [d.isoformat() for d in days] for item, days in status.missing.items()}
        shown.data.update(
            missing=missing,
            month_spent=status.month_spent,
            budget_per_month=status.budget_per_month,
            runs=status.runs.height,
            last_runs=show(runs, title="", limit=5).data["rows"],
        )
        return shown

    def spend(self, since: Any = None, by: str = "endpoint") -> Shown:
        """Credits spent and saved per endpoint (``by="day"``: per day and endpoint), from the cache's ledger."""
        if by not in ("endpoint", "day"):
            raise refused("by", by, "endpoint or day", "spend")
        first = day_of(since, "since", "spend") or self.today().replace(day=1)
        ledger = self.cache.ledger.read().filter(pl.col("service") == self.service)
        ledger = ledger.filter(pl.col("time") >= datetime.combine(first, time(), UTC))
        summary = spend_summary(ledger)
        month = self.gate.month()
        provenance: dict[str, Any] = {
            "credits spent": int(ledger["cost"].sum() or 0),
            "requests": int((~ledger["from_cache"]).sum()),
            "credits saved": int(ledger["saved"].sum() or 0),
            "this session": f"{self.gate.spent:,} credits",
        }
        left, limit = self.gate.left(month)
        provenance["left"] = "no limit" if left is None else f"{left:,} ({limit})"
        if month is not None:
            provenance["month"] = f"{month[0]:,} of {month[1]:,} credits"
        columns = ["day", "endpoint", "requests", "credits_spent", "cache_hits", "credits_saved"]
        if by != "day":
            sums = [pl.col(c).sum() for c in columns[2:]]
            summary, columns = summary.group_by("endpoint").agg(sums).sort("endpoint"), columns[1:]
        shown = show(
            summary,
            title=f"spend since {first} ({self.service}), per {by}",
            limit=MOST_ROWS,
            columns=columns,
            provenance=provenance,
        )
        shown.data.update(
            credits_spent=provenance["credits spent"], session_spent=self.gate.spent, since=first.isoformat()
        )
        return shown
