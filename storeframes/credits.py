"""Credits: the budget and the ledger, one source of truth for what was spent.

Every request is sent under a :class:`Reservation`: :meth:`Credits.reserve` checks the
budget against the request's estimated maximum cost and holds that much while the
request is in flight; the request path reports each attempt, which becomes a ledger
row (with ``status`` null when no answer came back); :meth:`Reservation.settle`
releases the estimate, adds what the attempts were charged and puts their rows in the
ledger, in one step. So :attr:`Credits.spent` is, at every moment, the sum of the
``cost`` column of :attr:`Credits.ledger`, failed but billed answers included. Cache
hits are rows too (``from_cache``, ``saved``).

An answer whose reported cost cannot be trusted (``metadata.request.cost`` negative,
fractional, not a number or past :data:`~storeframes.ledger.MOST_CREDITS`), and a 200 whose
body never arrived whole (cut by the deadline or a dropped connection, not JSON, JSON cut
short), is reported with ``cost_unknown``: the service may have charged it. It counts the
request's *estimate* as charged: its row has the estimate as ``cost``, ``cost_estimated``
True and a null ``max_credit_cost``. Such an attempt that is tried again is checked
against the budget first, as a charged 429 or 5xx is, so retries of answers that keep
arriving cut short stop before they could spend past the budget. So a hostile or broken
answer can neither hide a charge nor turn the budget off.

The rows are kept in a sink (the cache), which knows nothing of sessions: it writes and
removes named files of rows. The layout is this module's:

- before a request that may cost anything is sent, :meth:`Credits.reserve` writes its
  *reservation*, a row of its estimate (``reserved``, ``cost_estimated``), as one small file
  ``<session>-r<n>``; when that write fails (a full disk, a read-only folder) the request is
  not sent: :class:`~storeframes.CacheUnavailableError` names the file and the cause. So
  every request the service may charge is in the cache's ledger before it goes out, and a
  process killed while it waits for the answer leaves its reservation, counted at its
  estimate (budgets stay on the safe side);
- when the request ends, :meth:`Reservation.settle` writes its attempts' rows over that
  file, before the client keeps the answer in the cache: a request's rows are durable no
  later than its answer. When that write fails the reservation stays (counted at its
  estimate) and the rows are written over it again at the next flush;
- cache hits, and rows whose write failed, wait for :meth:`Credits.flush` (the end of a
  call), which writes them as one small file; a failed write is retried at the next
  flush, never dropped;
- once a session has more than :data:`MERGE_AFTER` small files, and at
  :meth:`Credits.close`, they are merged into the session's chunk files
  ``<session>-<chunk>`` (up to :data:`LEDGER_CHUNK` rows each, the last one rewritten as
  it grows), and removed once the merged files are written.

Every row has a unique ``row`` id (``<session>-<n>``): a reader that sees a row in a
small file and in a chunk (a process stopped between the two steps) counts it once.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

import polars as pl

from .answers import Attempt
from .coord.forking import built_here
from .errors import BudgetExceededError, CacheUnavailableError, ConfigurationError
from .ledger import LEDGER_SCHEMA, SERVICE, ledger_table

__all__ = ["Ceiling", "Credits", "Reservation"]

log = logging.getLogger("storeframes")

LEDGER_CHUNK = 1000
"""Ledger rows per chunk file a session keeps in the cache folder."""

MERGE_AFTER = 64
"""Small ledger files a session leaves before they are merged into its chunk files."""

Watcher = Callable[[Mapping[str, Any]], None]


class LedgerSink(Protocol):
    """Where ledger rows are kept (the cache's ``cache.ledger``): named files of rows."""

    def write(self, name: str, rows: pl.DataFrame, *, must: bool = False) -> bool:
        """Keep ``rows`` as the file ``name`` (replacing it); False, with a warning, when it cannot (with
        ``must``, a :class:`~storeframes.CacheUnavailableError` instead)."""
        ...

    def remove(self, name: str) -> None:
        """Remove the file ``name``, if there is one (a failure is ignored: the rows are counted once anyway)."""
        ...


def ledger_frame(rows: Sequence[Mapping[str, Any]]) -> pl.DataFrame:
    """Ledger rows as a frame of :data:`~storeframes.LEDGER_SCHEMA`."""
    return pl.DataFrame(rows, schema=LEDGER_SCHEMA, orient="row") if rows else pl.DataFrame(schema=LEDGER_SCHEMA)


_OPEN: weakref.WeakSet[Credits] = weakref.WeakSet()
"""Sessions with ledger files not yet merged: merged when the interpreter exits, if nobody closed them."""


@atexit.register
def _merge_at_exit() -> None:
    """Merge the open sessions' small files, on a daemon thread waited for until the exit's deadline
    (:func:`~storeframes.cache.behind.exit_wait`): a cache that stopped answering holds the exit no longer.
    A forked child's exit leaves its parent's sessions alone: they are the parent's to tidy."""
    sessions = [credits for credits in _OPEN if built_here(credits.pid)]
    if not sessions:
        return
    from .cache.behind import at_exit, exit_deadline, exit_wait

    def merge() -> None:
        for credits in sessions:
            try:
                credits.close()
            except Exception:  # the small files stay, and read as they are
                log.warning("could not tidy the ledger of session %s", credits.session, exc_info=True)

    worker = threading.Thread(target=merge, name="storeframes-ledger-merge", daemon=True)
    worker.start()
    worker.join(max(0.0, exit_deadline() - time.monotonic()))
    if worker.is_alive():
        at_exit(
            f"the ledger's files were not merged: the cache did not answer within {exit_wait():g} s of the exit. "
            "Each request's rows were written as it ended, and read the same unmerged."
        )


@dataclass(frozen=True)
class Ceiling:
    """A budget beside the client's own, held while a call runs under it (a workspace's month budget).

    ``at`` is the most the session's ``spent`` (with what is reserved) may reach; ``budget`` and ``spent``
    are that budget and what it had spent when the call began (the session's ``spent`` then was ``base``),
    and ``whose`` names it in words for :class:`~storeframes.BudgetExceededError`.
    """

    at: int
    whose: str
    budget: int
    spent: int
    base: int

    def refuse(self, spent: int, reserved: int, estimate: int, endpoint: str, attempts: int = 0) -> None:
        """Raise when ``estimate`` more, beside the session's ``spent`` and ``reserved``, would pass it."""
        if spent + reserved + estimate > self.at:
            raise BudgetExceededError(
                spent=self.spent + spent - self.base,
                reserved=reserved,
                estimate=estimate,
                budget=self.budget,
                endpoint=endpoint,
                attempts=attempts,
                whose=self.whose,
            )


class Credits:
    """The budget and the ledger of one client session.

    Args:
        budget: the most credits that may be spent, or None for no limit.
        clock: returns the current UTC datetime; dates the ledger rows.
        service: which service the rows belong to (the client's ``namespace``), or a
            function returning it when a row is made.
        sink: where the rows are kept as they count (the cache), or None.
    """

    def __init__(
        self,
        budget: int | None = None,
        *,
        clock: Callable[[], datetime],
        service: str | Callable[[], str] = SERVICE,
        sink: LedgerSink | None = None,
    ):
        self.budget = budget
        self.pid = os.getpid()
        """The process of the session (its files are tidied at that process's exit, never a forked child's)."""
        self._clock = clock
        self._service = service
        self.sink = sink
        """Where the rows are kept (the cache), or None; it may be changed between calls."""
        self._lock = threading.Lock()
        self._merge_lock = threading.Lock()
        self._rows: list[dict[str, Any]] = []  # the ledger: every row counted, in the order it counted
        self._pending: list[dict[str, Any]] = []  # counted, not yet written (cache hits, failed writes)
        self._unsettled: list[tuple[str, list[dict[str, Any]]]] = []  # rows to write over their reservations
        self._written: list[dict[str, Any]] = []  # in small files, not yet merged into chunks
        self._small: list[str] = []  # the small files not yet merged
        self._merged: list[dict[str, Any]] = []  # in the chunk files, in their order
        self._numbers = 0  # rows made
        self._files = 0  # small files named
        self._spent = 0
        self._saved = 0
        self._reserved = 0
        self._watchers: list[Watcher] = []
        self.ceiling: Ceiling | None = None
        """A budget beside :attr:`budget` while a call runs under it (a workspace's month), else None."""
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
    def service(self) -> str:
        """The service the rows made now belong to; a name, or a function saying it, may be set."""
        return self._service() if callable(self._service) else self._service

    @service.setter
    def service(self, service: str | Callable[[], str]) -> None:
        self._service = service

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
        if self.ceiling is not None:
            self.ceiling.refuse(self._spent, self._reserved, estimate, endpoint)

    def reserve(
        self, endpoint: str, estimate: int, *, tries: int = 1, params: Mapping[str, str] | None = None
    ) -> Reservation:
        """Hold ``estimate`` credits for one request of at most ``tries`` attempts, or raise if the budget cannot take it.

        With a sink, a request that may cost anything has its reservation written to the ledger
        first (a row of ``estimate``, marked ``reserved``); when it cannot be, the sink's
        :class:`~storeframes.CacheUnavailableError` is raised and nothing is held: the request
        must not be sent.
        """
        with self._lock:
            self._check(endpoint, estimate)
            self._reserved += estimate
        reservation = Reservation(self, estimate, tries=tries)
        sink = self.sink
        if sink is not None and estimate > 0:
            try:
                reservation.name = self._hold(sink, endpoint, params or {}, estimate)
            except BaseException:
                with self._lock:
                    self._reserved -= estimate
                raise
        return reservation

    def _hold(self, sink: LedgerSink, endpoint: str, params: Mapping[str, str], estimate: int) -> str:
        """Write a request's reservation as a small file of its own; its name."""
        name = self._name()
        row = self._row(  # the estimate held, before any attempt
            endpoint,
            params,
            cost=estimate,
            max_cost=None,
            status=None,
            attempt=0,
            elapsed=0.0,
            estimated=True,
            reserved=True,
        )
        if not sink.write(name, ledger_table([row]), must=True):  # a sink that does not raise
            raise CacheUnavailableError(
                f"cannot write the ledger file {name}; nothing was sent: a request goes out only once its "
                "ledger row is kept"
            )
        return name

    def _name(self) -> str:
        """The name of a new small file of the session."""
        with self._lock:
            name = f"{self.session}-r{self._files:06d}"
            self._files += 1
        return name

    def _unhold(self, name: str) -> None:
        """Remove the reservation of a request that was not sent; when it cannot be, it stays counted."""
        sink = self.sink
        if sink is None:
            return
        try:
            sink.remove(name)
        except Exception as exc:  # counted at its estimate: on the safe side
            log.info("could not remove the reservation %s: %s", name, exc)

    # -- the ledger -----------------------------------------------------------------

    def _row(
        self,
        endpoint: str,
        params: Mapping[str, str],
        *,
        cost: int,
        max_cost: int | None,
        status: int | None,
        attempt: int,
        elapsed: float,
        from_cache: bool = False,
        saved: int = 0,
        estimated: bool = False,
        reserved: bool = False,
    ) -> dict[str, Any]:
        """A new row (in the order of :data:`~storeframes.LEDGER_SCHEMA`), not yet counted."""
        with self._lock:
            number = self._numbers
            self._numbers += 1
        return {
            "time": self._clock(),
            "service": self.service,
            "endpoint": endpoint,
            "params": json.dumps(dict(params), sort_keys=True),
            "cost": cost,
            "max_credit_cost": max_cost,
            "status": status,
            "attempt": attempt,
            "elapsed_ms": elapsed * 1000.0,
            "from_cache": from_cache,
            "saved": saved,
            "row": f"{self.session}-{number:07d}",
            "cost_estimated": estimated,
            "reserved": reserved,
        }

    def record_hit(self, endpoint: str, params: Mapping[str, str], saved: int) -> None:
        """A cached answer served a call: a row with ``from_cache`` and the credits it ``saved``.

        It is written at the next :meth:`flush` (the end of the call).
        """
        row = self._row(
            endpoint, params, cost=0, max_cost=0, status=200, attempt=0, elapsed=0.0, from_cache=True, saved=saved
        )
        with self._lock:
            self._rows.append(row)
            self._pending.append(row)
            self._saved += saved
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
        """Every row of this session, in the order they counted (schema :data:`~storeframes.LEDGER_SCHEMA`)."""
        with self._lock:
            rows = list(self._rows)
        return ledger_frame(rows)

    # -- keeping the rows -------------------------------------------------------------

    def _write(self, rows: Sequence[dict[str, Any]], name: str | None = None) -> bool:
        """Write ``rows`` as one small file of the session (``name``: over a reservation); on a failure
        they wait for the next flush (over that reservation still)."""
        sink = self.sink
        written = False
        if sink is not None:
            if name is None:
                name = self._name()
            try:
                written = sink.write(name, ledger_table(rows))
            except Exception as exc:  # a sink that raises rather than warns: the rows wait, the request goes on
                log.warning("could not write ledger rows: %s", exc)
        with self._lock:
            if written:
                assert name is not None
                self._written.extend(rows)
                self._small.append(name)
                _OPEN.add(self)
            elif name is not None and sink is not None:  # the reservation stays, counted at its estimate
                self._unsettled.append((name, list(rows)))
            else:
                self._pending.extend(rows)
            many = len(self._small) > MERGE_AFTER
        if many:
            self._merge(wait=False)
        return written

    def flush(self) -> None:
        """Write the rows still waiting (cache hits, rows whose write failed) as one small file.

        Called at the end of each call; the rows stay waiting when the write fails. The rows of a
        request whose reservation is still in the ledger are written over it.
        """
        with self._lock:
            rows, self._pending = self._pending, []
            unsettled, self._unsettled = self._unsettled, []
        for name, settled in unsettled:
            self._write(settled, name)
        if rows:
            self._write(rows)

    def close(self) -> None:
        """Flush, then merge the session's small files into its chunk files.

        A session nobody closes is merged when the interpreter exits (a notebook kernel
        that shuts down); one that is killed leaves its small files, which read the same.
        """
        self.flush()
        self._merge(wait=True)
        with self._lock:
            if not self._small:
                _OPEN.discard(self)

    def _merge(self, *, wait: bool) -> None:
        """Merge the small files written so far into the session's chunks, then remove them.

        The rows merged are appended to the chunks in row order; only the chunks from
        the first that changes on are rewritten. A small file is removed only once every
        chunk is written; when one cannot be, the small files stay and the merge is
        tried again later.
        """
        sink = self.sink
        if sink is None or not self._merge_lock.acquire(blocking=wait):
            return
        try:
            with self._lock:
                rows, names = list(self._written), list(self._small)
            if not names:
                return
            base = len(self._merged)
            merged = self._merged + sorted(rows, key=lambda row: str(row["row"]))
            for chunk in range(base // LEDGER_CHUNK, (len(merged) + LEDGER_CHUNK - 1) // LEDGER_CHUNK):
                part = merged[chunk * LEDGER_CHUNK : (chunk + 1) * LEDGER_CHUNK]
                try:
                    if not sink.write(f"{self.session}-{chunk:04d}", ledger_table(part)):
                        return
                except Exception as exc:  # a sink that raises rather than warns: merged another time
                    log.warning("could not merge ledger rows: %s", exc)
                    return
            self._merged = merged
            with self._lock:
                del self._written[: len(rows)]
                del self._small[: len(names)]
            for name in names:
                try:
                    sink.remove(name)
                except OSError as exc:  # its rows are in the chunks too: a reader counts them once
                    log.info("could not remove ledger file %s: %s", name, exc)
        finally:
            self._merge_lock.release()


class Reservation:
    """The credits held for one request in flight, and the ledger rows of its attempts.

    Pass :meth:`attempt` to the request path as its report hook; call :meth:`settle`
    once, when the request ends whichever way.
    """

    def __init__(self, credits: Credits, estimate: int, *, tries: int = 1):
        self._credits = credits
        self.estimate = estimate
        self.tries = tries
        self.cost = 0
        self.name: str | None = None
        """The ledger file of its reservation (None when none was written: no sink, nothing to cost)."""
        self.maybe_sent = False
        """Set when the request was stopped where it may have been sent unreported (an interrupt):
        a reservation with no attempt then stays in the ledger, counted at its estimate."""
        self._rows: list[dict[str, Any]] = []

    def attempt(self, attempt: Attempt) -> None:
        """Record one attempt: a ledger row (``status`` None without an answer); it counts at :meth:`settle`.

        An attempt with ``cost_unknown`` (an answer whose cost could not be read, or a
        200 whose body never arrived whole) counts the request's estimate, on a row with
        ``cost_estimated`` and a null ``max_credit_cost``. When a charged answer will be
        tried again (a 429 or a 5xx that carried a cost, a 200 cut short) and another
        attempt could pass the budget, raises :class:`~storeframes.BudgetExceededError`,
        so the retries stop there.
        """
        cost: int = attempt.cost
        max_cost: int | None = attempt.max_credit_cost
        estimated = attempt.cost_unknown
        if estimated:  # never trust what could not be read: count what it could have cost
            cost, max_cost = self.estimate, None
        self.cost += cost
        self._rows.append(
            self._credits._row(
                attempt.endpoint,
                attempt.params,
                cost=cost,
                max_cost=max_cost,
                status=attempt.status,
                attempt=attempt.attempt,
                elapsed=attempt.elapsed,
                estimated=estimated,
            )
        )
        retryable = attempt.retried or (attempt.status is not None and (attempt.status == 429 or attempt.status >= 500))
        if cost and retryable and attempt.attempt < self.tries:
            credits = self._credits
            with credits._lock:  # the reservation still holds an estimate for the next attempt
                budget = credits.budget
                spent = credits._spent + self.cost  # what it will be once this request settles
                others = credits._reserved - self.estimate
                if budget is not None and spent + others + self.estimate > budget:
                    raise BudgetExceededError(
                        spent=spent,
                        reserved=others,
                        estimate=self.estimate,
                        budget=budget,
                        endpoint=attempt.endpoint,
                        attempts=attempt.attempt,
                    )
                if credits.ceiling is not None:
                    credits.ceiling.refuse(spent, others, self.estimate, attempt.endpoint, attempt.attempt)

    def settle(self) -> None:
        """Release the estimate, count what the attempts were charged, write their rows, tell the watchers.

        The rows join the ledger in the same step as their cost joins ``spent``, and
        are written to the sink over the reservation before this returns (before the answer is
        cached). A request that sent no attempt has its reservation removed.
        """
        credits = self._credits
        rows, self._rows = self._rows, []
        name, self.name = self.name, None
        with credits._lock:
            credits._reserved -= self.estimate
            credits._spent += self.cost
            credits._rows.extend(rows)
        if rows:
            credits._write(rows, name)
        elif name is not None and not self.maybe_sent:
            credits._unhold(name)
        credits._notify(rows)
