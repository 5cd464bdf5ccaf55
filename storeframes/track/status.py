"""Where a tracker stands on a day (:class:`TrackStatus`), and the days a run left unfetched.

A day an item should hold and the cache has nothing of is *missing*, and is named: in the
status (``3 days missing: 2026-10-09..2026-10-11``, never "up to date" beside it), in a run's
result and in its row of the run log. A day the service recorded nothing for was asked, and is
not missing: "not fetched" and "no data" are two things. ``storeframes track status`` exits 3
when a day is missing.

>>> status = sf.Tracker.from_toml("tracking.toml").status()  # doctest: +SKIP
>>> status.missing                                            # doctest: +SKIP
{'ranks': [datetime.date(2026, 10, 9), datetime.date(2026, 10, 10)]}
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date

import polars as pl

from ..answers import Entry
from ..errors import plural
from .due import Fetched, days_text, due_calls, fetched_by_endpoint, gap_days, last_fetched, range_missing
from .spec import Item

__all__ = ["STATUS_DAYS", "STATUS_SCHEMA", "TrackStatus", "item_rows", "missing_text", "unfetched"]

STATUS_SCHEMA = pl.Schema(
    {
        "item": pl.String(),
        "endpoint": pl.String(),
        "every_days": pl.Int64(),
        "last_fetched": pl.Date(),
        "due": pl.Boolean(),
        "gap_days": pl.List(pl.Date()),
    }
)
"""The columns of :attr:`TrackStatus.items`: ``gap_days`` lists the days missing, oldest first."""

STATUS_DAYS = 30
"""The days up to the status's day whose holes a status counts by default: a day of the present missed
long ago can never be fetched again, and a check that is red for good is a check nobody reads."""

SHOWN = 6
"""Runs of days a line names before it says how many more."""


def missing_text(days: Sequence[date]) -> str:
    """``N days missing: <days>``, the days as runs (at most :data:`SHOWN` of them, then how many more).

    >>> missing_text([date(2026, 10, 9), date(2026, 10, 10), date(2026, 10, 12)])
    '3 days missing: 2026-10-09..2026-10-10, 2026-10-12'
    """
    return f"{plural(len(days), 'day')} missing: {days_text(days, SHOWN)}"


@dataclass(frozen=True)
class TrackStatus:
    """Where a tracker stands on :attr:`day`: each item's last snapshot, whether it is due, the days missing.

    A day is *missing* when an item should hold it and the cache has nothing of it (see
    :func:`~storeframes.track.due.gap_days`); an item with a missing day is never "up to date".
    """

    tracker: str
    day: date
    items: pl.DataFrame
    """A row per item (:data:`STATUS_SCHEMA`)."""
    month_spent: int
    budget_per_month: int | None
    runs: pl.DataFrame
    since: date | None = None
    """The first day whose holes count (None: every day since the first fetch)."""

    @property
    def missing(self) -> dict[str, list[date]]:
        """The days missing, by item (only the items missing some)."""
        return {row["item"]: row["gap_days"] for row in self.items.iter_rows(named=True) if row["gap_days"]}

    @property
    def exit_code(self) -> int:
        """The exit status of ``storeframes track status``: 0 when no day is missing, 3 when one is."""
        return 3 if self.missing else 0

    def summary(self) -> str:
        """A few lines for people."""
        budget = f" of {self.budget_per_month:,}" if self.budget_per_month is not None else ""
        lines = [f"{self.tracker} on {self.day}: {self.month_spent:,}{budget} credits spent this month"]
        if self.runs.height:
            last = self.runs.row(-1, named=True)
            lines.append(f"  last run: {last['day']} {last['status']} ({last['run_id']})")
        for row in self.items.iter_rows(named=True):
            gaps = row["gap_days"]
            state = "due" if row["due"] else "not due" if gaps else "up to date"
            shown = f"; {missing_text(gaps)}" if gaps else ""
            lines.append(f"  {row['item']}: last {row['last_fetched'] or 'never'}, {state}{shown}")
        window = f" since {self.since}" if self.since is not None else ""
        if self.missing:
            days = sum(len(d) for d in self.missing.values())
            items = plural(len(self.missing), "item")
            lines.append(
                f"  missing{window}: {plural(days, 'day')} in {items}, not fetched (which is not a day without data)"
            )
        else:
            lines.append(f"  missing{window}: none")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"TrackStatus({self.summary().splitlines()[0]})"


def item_rows(
    items: Iterable[Item], day: date, fetched: Mapping[str, Fetched], *, since: date | None = None
) -> pl.DataFrame:
    """Each item's last snapshot (on or before ``day``), whether it is due on ``day``, and its missing days
    (from ``since`` on, when given).

    >>> item_rows(tracker.items, date(2026, 11, 6), fetched)["gap_days"].to_list()  # doctest: +SKIP
    [[datetime.date(2026, 11, 3), datetime.date(2026, 11, 4)], []]
    """
    rows = [
        {
            "item": item.name,
            "endpoint": item.endpoint,
            "every_days": item.every_days,
            "last_fetched": last_fetched(item, day, fetched),
            "due": due_calls(item, day, fetched) is not None,
            "gap_days": [d for d in gap_days(item, day, fetched) if since is None or d >= since],
        }
        for item in items
    ]
    return pl.DataFrame(rows, schema=STATUS_SCHEMA, orient="row") if rows else pl.DataFrame(schema=STATUS_SCHEMA)


def unfetched(
    entries_of: Callable[[str], list[Entry]],
    service: str,
    items: Sequence[Item],
    day: date,
    *,
    span: tuple[date, date] | None = None,
) -> dict[str, list[date]]:
    """The days a run on ``day`` of ``items`` (the ones that were due) left unfetched, by item: for history,
    every day from the first run's ``lookback`` to yesterday (a backfill's: of its ``span``) that no
    answer covers; for the present, ``day`` itself when its snapshot is still due.

    >>> unfetched(cache.entries, "sandbox-0", tracker.items, date(2026, 10, 24))  # doctest: +SKIP
    {'ranks': [datetime.date(2026, 10, 17), ...], 'metadata': [datetime.date(2026, 10, 24)]}
    """
    fetched = fetched_by_endpoint(entries_of, items, service)
    left: dict[str, list[date]] = {}
    for item in items:
        if span is not None:
            days = range_missing(item, day, fetched, *span)
        elif item.history:
            days = gap_days(item, day, fetched, ran=True)
        else:
            days = [day] if due_calls(item, day, fetched) is not None else []
        if days:
            left[item.name] = days
    return left
