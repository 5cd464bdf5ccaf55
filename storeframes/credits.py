"""Credits: the budget and the ledger, one source of truth for what was spent.

Every request is sent under a :class:`Reservation`: :meth:`Credits.reserve` checks the
budget against the request's estimated maximum cost and holds that much while the
request is in flight; the request path reports each attempt that got an answer, which
becomes a ledger row; :meth:`Reservation.settle` releases the estimate and adds what
the attempts were charged. So :attr:`Credits.spent` is, at every moment, the sum of the
``cost`` column of :attr:`Credits.ledger`. Cache hits are rows too (``from_cache``,
``saved``).

Nothing here sends a request or knows the cache's layout: :meth:`Credits.flush` hands
the session's rows to anything with a ``write_ledger(name, frame)`` method.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

import polars as pl

from .answers import Attempt
from .errors import BudgetExceededError, ConfigurationError
from .ledger import LEDGER_SCHEMA

__all__ = ["Credits", "Reservation"]

log = logging.getLogger("storeframes")

LEDGER_CHUNK = 1000
"""Ledger rows per file a session keeps in the cache folder."""

Watcher = Callable[[Mapping[str, Any]], None]


class LedgerSink(Protocol):
    """Where a session's ledger rows are kept (the cache)."""

    def write_ledger(self, name: str, rows: pl.DataFrame) -> None: ...


def ledger_frame(rows: Sequence[Mapping[str, Any]]) -> pl.DataFrame:
    """Ledger rows as a frame of :data:`~storeframes.LEDGER_SCHEMA`."""
    return pl.DataFrame(rows, schema=LEDGER_SCHEMA, orient="row") if rows else pl.DataFrame(schema=LEDGER_SCHEMA)


class Credits:
    """The budget and the ledger of one client.

    Args:
        budget: the most credits that may be spent, or None for no limit.
        clock: returns the current UTC datetime; dates the ledger rows.
    """

    def __init__(self, budget: int | None = None, *, clock: Callable[[], datetime]):
        self.budget = budget
        self._clock = clock
        self._lock = threading.Lock()
        self._flush_lock = threading.Lock()
        self._rows: list[dict[str, Any]] = []
        self._flushed = 0
        self._spent = 0
        self._saved = 0
        self._reserved = 0
        self._watchers: list[Watcher] = []
        self.session = f"{datetime.now(UTC):%Y%m%dT%H%M%S%fZ}-{os.getpid()}-{os.urandom(3).hex()}"

    @property
    def budget(self) -> int | None:
        """The most credits that may be spent (None: no limit); it may be changed between calls."""
        return self._budget

    @budget.setter
    def budget(self, budget: int | None) -> None:
        if budget is not None and (not isinstance(budget, int) or isinstance(budget, bool) or budget < 0):
            raise ConfigurationError(f"budget must be a whole number of credits >= 0, got {budget!r}")
        self._budget = budget

    @property
    def spent(self) -> int:
        """Credits charged so far, as the service reported them: the sum of the ledger's ``cost``."""
        return self._spent

    @property
    def saved(self) -> int:
        """Credits the cache saved: what the cached answers used originally cost."""
        return self._saved

    @property
    def reserved(self) -> int:
        """Estimated credits of the requests in flight."""
        return self._reserved

    # -- the budget -----------------------------------------------------------------

    def check(self, endpoint: str, estimate: int) -> None:
        """Raise :class:`~storeframes.BudgetExceededError` if ``estimate`` more could pass the budget."""
        with self._lock:
            self._check(endpoint, estimate)

    def _check(self, endpoint: str, estimate: int) -> None:
        budget = self._budget
        if budget is not None and self._spent + self._reserved + estimate > budget:
            raise BudgetExceededError(
                spent=self._spent, reserved=self._reserved, estimate=estimate, budget=budget, endpoint=endpoint
            )

    def reserve(self, endpoint: str, estimate: int) -> Reservation:
        """Hold ``estimate`` credits for one request, or raise if the budget cannot take it."""
        with self._lock:
            self._check(endpoint, estimate)
            self._reserved += estimate
        return Reservation(self, estimate)

    # -- the ledger -----------------------------------------------------------------

    def _row(
        self,
        endpoint: str,
        params: Mapping[str, str],
        *,
        cost: int,
        max_cost: int,
        status: int,
        attempt: int,
        elapsed: float,
        from_cache: bool = False,
        saved: int = 0,
    ) -> dict[str, Any]:
        row = {
            "time": self._clock(),
            "endpoint": endpoint,
            "params": json.dumps(dict(params), sort_keys=True),
            "cost": cost,
            "max_credit_cost": max_cost,
            "status": status,
            "attempt": attempt,
            "elapsed_ms": elapsed * 1000.0,
            "from_cache": from_cache,
            "saved": saved,
        }
        with self._lock:
            self._rows.append(row)
            self._saved += saved
        return row

    def record_hit(self, endpoint: str, params: Mapping[str, str], saved: int) -> None:
        """A cached answer served a call: a row with ``from_cache`` and the credits it ``saved``."""
        row = self._row(
            endpoint, params, cost=0, max_cost=0, status=200, attempt=0, elapsed=0.0, from_cache=True, saved=saved
        )
        self._notify([row])

    def watch(self, callback: Watcher) -> Callable[[], None]:
        """Call ``callback(row)`` with each new ledger row once its credits count; returns a function that stops it."""
        if not callable(callback):
            raise ConfigurationError(f"watch() takes a callable, got {type(callback).__name__}")
        with self._lock:
            self._watchers.append(callback)

        def stop() -> None:
            with self._lock:
                if callback in self._watchers:
                    self._watchers.remove(callback)

        return stop

    def _notify(self, rows: Sequence[Mapping[str, Any]]) -> None:
        with self._lock:
            watchers = list(self._watchers)
        for row in rows:
            for callback in watchers:
                try:
                    callback(row)
                except Exception:  # a display must never break a fetch
                    log.exception("a ledger watcher failed")

    @property
    def ledger(self) -> pl.DataFrame:
        """Every row of this session, oldest first (schema :data:`~storeframes.LEDGER_SCHEMA`)."""
        with self._lock:
            rows = list(self._rows)
        return ledger_frame(rows)

    def flush(self, sink: LedgerSink) -> None:
        """Write the session's rows not yet kept to ``sink``, in files of up to :data:`LEDGER_CHUNK` rows.

        The last file of the session is rewritten as it grows, so a folder holds a few
        files per session, not one per call.
        """
        with self._flush_lock:  # one writer at a time, so a file never goes back to fewer rows
            with self._lock:
                rows = list(self._rows)
                first_chunk = self._flushed // LEDGER_CHUNK
                self._flushed = len(rows)
            for chunk in range(first_chunk, (len(rows) + LEDGER_CHUNK - 1) // LEDGER_CHUNK):
                part = rows[chunk * LEDGER_CHUNK : (chunk + 1) * LEDGER_CHUNK]
                sink.write_ledger(f"{self.session}-{chunk:04d}", ledger_frame(part))


class Reservation:
    """The credits held for one request in flight, and the ledger rows of its attempts.

    Pass :meth:`attempt` to the request path as its report hook; call :meth:`settle`
    once, when the request ends whichever way.
    """

    def __init__(self, credits: Credits, estimate: int):
        self._credits = credits
        self.estimate = estimate
        self.cost = 0
        self._rows: list[Mapping[str, Any]] = []

    def attempt(self, attempt: Attempt) -> None:
        """Record one attempt: a ledger row when it got an answer (its cost counts at :meth:`settle`)."""
        if attempt.status is None:
            return
        self.cost += attempt.cost
        self._rows.append(
            self._credits._row(
                attempt.endpoint,
                attempt.params,
                cost=attempt.cost,
                max_cost=attempt.max_credit_cost,
                status=attempt.status,
                attempt=attempt.attempt,
                elapsed=attempt.elapsed,
            )
        )

    def settle(self) -> None:
        """Release the estimate, count what the attempts were charged, and tell the watchers."""
        credits = self._credits
        with credits._lock:
            credits._reserved -= self.estimate
            credits._spent += self.cost
        rows, self._rows = self._rows, []
        credits._notify(rows)
