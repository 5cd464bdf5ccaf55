"""What a tracker's run did (:class:`RunResult`, the row it leaves in the cache's run log) and the exit code
of each status (:data:`EXIT_CODES`).

>>> from storeframes.track.result import EXIT_CODES
>>> EXIT_CODES["over_budget"]
4
"""

from __future__ import annotations

import socket
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from ..errors import plural
from .due import days_text

__all__ = ["EXIT_CODES", "RunResult"]

EXIT_CODES = {"ok": 0, "partial": 3, "failed": 3, "interrupted": 3, "over_budget": 4}
"""The exit code of ``storeframes track run`` and ``track backfill`` (and :attr:`RunResult.exit_code`) for
each status: 0 ``ok``, 3 ``partial`` (an item failed, a day was left unfetched, a table not published) or
``failed``, 4 ``over_budget`` (2 is a spec or command line refused). A run that leaves a day unfetched is
never ``ok``: :attr:`RunResult.missing` names the days."""


@dataclass
class RunResult:
    """What a run did (the row it left in the run log, as an object)."""

    run_id: str
    tracker: str
    day: date
    kind: str
    status: str
    requests: int = 0
    cells_new: int = 0
    cells_cached: int = 0
    credits_spent: int = 0
    credits_saved: int = 0
    items_due: int = 0
    left_out: tuple[str, ...] = ()
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    month_spent: int | None = None
    budget_per_month: int | None = None
    interrupted: tuple[str, ...] = ()
    """The runs found killed half-way (marked ``interrupted``) and finished by this one."""
    events: int = 0
    """New events its alerts found (:func:`storeframes.events` lists them)."""
    notified: int = 0
    """Events it sent to the ``[notify]`` addresses (one message an address)."""
    published: dict[str, int] = field(default_factory=dict)
    """The version of each Delta table of the ``[publish]`` lake after the run (``metadata``,
    ``metadata_snapshots`` ...); a table that failed to publish is missing, and named in :attr:`errors`."""
    missing: dict[str, list[date]] = field(default_factory=dict)
    """The days the run left unfetched, by item (over the budget, failed): a run that leaves one is not ``ok``."""
    session: str = ""
    """Its client's ledger session (:mod:`storeframes.track.runs`)."""
    compaction: dict[str, Any] = field(default_factory=dict)
    """The cache's compaction while the run's requests waited (:mod:`storeframes.track.compacting`): the
    ``small_files`` earlier runs left, ``compact_at``, whether it ``compacted``, then what it merged and its
    ``seconds``, or its ``error``; empty when the spec's ``compact_at`` is 0 (or the run kept nothing)."""

    @property
    def exit_code(self) -> int:
        """The command's exit code for :attr:`status` (:data:`EXIT_CODES`)."""
        return EXIT_CODES.get(self.status, 3)

    def summary(self) -> str:
        """A few lines for people."""
        month = (
            f" (month: {self.month_spent:,} of {self.budget_per_month:,})"
            if self.month_spent is not None and self.budget_per_month is not None
            else ""
        )
        lines = [
            f"{self.tracker} {self.kind} on {self.day}: {self.status} in {self.seconds:.1f} s; "
            f"{plural(self.requests, 'request')}, {plural(self.credits_spent, 'credit')} spent{month}, "
            f"{self.credits_saved:,} saved; {self.cells_new:,} cells new, {self.cells_cached:,} cached"
        ]
        if self.events or self.notified:
            lines.append(f"  alerts: {plural(self.events, 'new event')}, {plural(self.notified, 'event')} sent")
        if self.published:
            lines.append("  published: " + ", ".join(f"{t} v{v}" for t, v in self.published.items()))
        if self.compaction.get("compacted") and "error" not in self.compaction:  # an error is in the errors
            lines.append(f"  cache: {self.compaction_line()}")
        if self.interrupted:
            lines.append(f"  finished what the interrupted run(s) {', '.join(self.interrupted)} left")
        if self.left_out:
            lines.append(f"  left out for the budget: {', '.join(self.left_out)}")
        lines += [f"  not fetched: {line}" for line in self.missing_lines()]
        lines += [f"  error: {e}" for e in self.errors]
        return "\n".join(lines)

    def compaction_line(self) -> str:
        """The run's compaction in words: ``612 small files (past 500): compacted in 2.9 s ...``."""
        said = self.compaction
        if not said:
            return "not compacted by the run (compact_at = 0)"
        small = said.get("small_files")
        counted = "small files not counted" if small is None else plural(small, "small file")
        head = f"{counted} (compacted past {said['compact_at']:,})"
        if "error" in said:
            return f"{head}: the compaction failed, nothing kept was lost: {said['error']}"
        if not said.get("compacted"):
            return f"{head}: not compacted"
        merged = said.get("index_files_merged", 0) + said.get("frame_files_merged", 0)
        return f"{head}: compacted in {said['seconds']:.1f} s, {merged:,} files merged into {said['files_written']:,}"

    def missing_lines(self) -> list[str]:
        """A line per item with days left unfetched: ``ranks: 3 days (2026-10-09..2026-10-11)``."""
        return [f"{item}: {plural(len(d), 'day')} ({days_text(d)})" for item, d in self.missing.items()]

    def row(self, started_at: datetime, ended_at: datetime | None, spec_hash: str) -> dict[str, Any]:
        """The run log's row (:data:`~storeframes.cache.RUN_SCHEMA`)."""
        return {
            "run_id": self.run_id,
            "tracker": self.tracker,
            "spec_hash": spec_hash,
            "kind": self.kind,
            "day": self.day,
            "started_at": started_at,
            "ended_at": ended_at,
            "status": self.status,
            "requests": self.requests,
            "cells_new": self.cells_new,
            "cells_cached": self.cells_cached,
            "credits_spent": self.credits_spent,
            "credits_saved": self.credits_saved,
            "items_due": self.items_due,
            "items_left_out": ",".join(self.left_out),
            "errors": "\n".join([*self.errors, *(f"not fetched: {line}" for line in self.missing_lines())]),
            "host": socket.gethostname(),
            "session": self.session or None,
        }
