"""What a run does while its requests wait on the rate limit: the cache's compaction when it is due, then the
kept ranks of the days before its own, and the charts' drawing library, so that what follows its last answer is
the day's own work.

A day's run spends most of its time waiting for the rate window, the process idle. The small files earlier runs
left are compacted first, when they pass the spec's ``compact_at`` (:func:`~storeframes.track.compacting.compact_kept`),
so what follows reads the compacted cache. The rank rules judge three weeks of kept live searches
(:func:`~storeframes.track.judging.rank_frame`), of which only the run's day is new; the days before it are read
next. The read is used only if it is still the cache's: the live searches kept for those days (the answers' ids)
are the same once the run has fetched, else the days are read again after it (another machine may have kept a
snapshot of yesterday meanwhile). A read that fails is dropped, and the judgement reads every day as it would
have. The run waits for the thread (:meth:`ReadAhead.wait`) before it judges, its tracker's lease held.

>>> ahead = ReadAhead(cache, "sandbox-0", date(2026, 11, 20), date(2026, 10, 29), {("photo editor", "us")}).start()  # doctest: +SKIP
>>> ahead.ranks(date(2026, 10, 29))  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

import polars as pl

from ..cache import Cache
from ..kept.search_ranks import kept_ranks
from .compacting import compact_kept

__all__ = ["EarlyRanks", "ReadAhead", "live_kept"]

LIVE = ("search", "search_ads")
"""The endpoints whose daily snapshots the rank rules read."""
CHART_MODULES = ("matplotlib.figure", "matplotlib.backends.backend_agg", "matplotlib.dates")
"""What the digest's charts draw with (:mod:`storeframes.track.digest_charts`)."""


def live_kept(cache: Cache, service: str, before: date) -> frozenset[str]:
    """The ids of the live searches ``cache`` keeps from ``service`` fetched before the day ``before``.

    >>> live_kept(cache, "sandbox-0", date(2026, 11, 20))  # doctest: +SKIP
    frozenset({'9f2c...', ...})
    """
    return frozenset(e.id for ep in LIVE for e in cache.entries(ep) if e.service == service and e.day < before)


@dataclass(frozen=True)
class EarlyRanks:
    """The organic ranks of the live searches kept from ``start`` to ``end`` (the days before a run's day), as
    :func:`~storeframes.kept.kept_ranks` read them, and the ids of the live searches kept before the run's
    day when they were read."""

    start: date
    end: date
    frame: pl.DataFrame
    kept: frozenset[str]


class ReadAhead:
    """A run's work while it waits, on a thread of its own (:meth:`start`); :meth:`wait` and :meth:`ranks` wait
    for it."""

    def __init__(
        self,
        cache: Cache,
        service: str,
        day: date,
        first: date,
        live: set[tuple[str, str]],
        *,
        compact: dict[str, Any] | None = None,
    ) -> None:
        self.cache, self.service, self.day, self.first, self.live = cache, service, day, first, live
        self._compact = compact
        self.compaction: tuple[dict[str, Any], list[str]] | None = None
        """What the compaction did and the problems it met (:func:`~storeframes.track.compacting.compact_kept`),
        once it has compacted."""
        self._failed: BaseException | None = None
        self._early: EarlyRanks | None = None
        # not a daemon: a run that ends early (an error, a lost lease) leaves the process only once the read is done,
        # never with polars reading on a thread the interpreter is tearing down
        self._thread = threading.Thread(target=self._read, name="storeframes-read-ahead")

    def start(self) -> ReadAhead:
        """Begin compacting the cache when given its small files ``compact`` (counted, and due: see
        :mod:`storeframes.track.compacting`), then reading the ranks of the ``live`` pairs (keyword in lower
        case, country) kept from ``first`` to the day before ``day`` and importing the charts' library
        (neither with no pairs); this reading ahead."""
        self._thread.start()
        return self

    def _read(self) -> None:
        if self._compact is not None:
            try:
                self.compaction = compact_kept(self._compact, self.cache)
            except BaseException as exc:  # raised on the run's thread by wait(): a bug is never lost on this one
                self._failed = exc
        if self.live:
            self._read_ranks()

    def wait(self) -> BaseException | None:
        """Wait for the work to end; what the compaction raised and did not say itself (a bug), for the run's
        thread to raise."""
        self._thread.join()
        failed, self._failed = self._failed, None
        return failed

    def _read_ranks(self) -> None:
        try:
            kept = live_kept(self.cache, self.service, self.day)
            end = self.day - timedelta(days=1)
            frame = kept_ranks(self.cache, self.service, self.first, end, live=self.live, history=set())[0]
            self._early = EarlyRanks(self.first, end, frame, kept)
        except Exception:  # read again after the run, where a failure is said
            self._early = None
        for module in CHART_MODULES:  # imported now, not after the last answer
            try:
                importlib.import_module(module)
            except ImportError:  # said where a chart is drawn
                break

    def ranks(self, start: date) -> EarlyRanks | None:
        """The ranks read ahead from ``start`` to the day before the run's, when still what the cache keeps (no
        live search of those days was kept since); else None."""
        self._thread.join()
        early = self._early
        if early is None or early.start != start:
            return None
        try:
            if live_kept(self.cache, self.service, self.day) != early.kept:
                return None
        except Exception:  # the judgement reads every day, and says what failed
            return None
        return early
