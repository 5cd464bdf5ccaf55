"""One sliding rate window per token, shared by every caller of that token.

The service allows 60 requests in any 10 s *per token*: two clients in a process, or
three processes with one token, must share one window or together they get 429s.
A :class:`~storeframes.coord.Coordinator`'s ``limiter()`` returns a :class:`SharedLimiter` over
the token's one record of slots, wherever its callers are:

- **in the process**, every limiter of one token (and coordinator) shares one object of
  the process registry; its threads queue there, so one of them at a time asks the
  record below;
- **on this machine** (the default :class:`~storeframes.coord.Coordinator`,
  :mod:`storeframes.coord.machine`), the record is a table of a SQLite file in
  :func:`~storeframes.coord.state_dir` (``window.sqlite3``, rows filed under
  :func:`~storeframes.coord.token_id`, dated by ``time.monotonic()``), through one
  connection per process that every token of the process shares; a damaged file is
  rebuilt, and one that cannot be used raises :class:`~storeframes.errors.CoordinationError`.
  An in-flight row carries its holder's pid and a deadline; a slot whose holder is gone
  (a SIGKILLed process) counts as completed when that is noticed, and one that outlived
  its deadline as completed at the deadline, as its request may have reached the service;
- **across machines** (a Redis coordinator, :mod:`storeframes.coord.redis`), the record is two sorted sets
  ``storeframes:window:<token id>:flight`` (scored by deadline) and ``...:done`` (scored
  by completion), which one Lua script prunes, counts and extends, dated by the Redis
  server's ``TIME`` so machines with skewed clocks agree. Idle keys expire.

Slots are dated by **completion**: a slot is held from :meth:`SharedLimiter.acquire`
until :meth:`SharedLimiter.release` and dated by the release; in-flight slots count
against the limit. The request path releases a slot as soon as the answer's headers
arrive (or the attempt ends without them): the service counted the request when it
arrived, before it sent a header, so the body that follows, however large or slow, holds
no slot. A caller is admitted when fewer than *its* ``limit`` slots are in
flight or completed within *its* ``window`` of the shared record (two clients of one
token may be set differently). When the record is full the caller sleeps until the
completion it needs leaves the window. When the slots it needs are still in flight, it
sleeps a whole window: any of them completes (or is counted completed: at its deadline,
or when its holder is found gone) at the earliest now, and then stays in the window that
long, so nothing is free sooner and nothing is missed by not looking sooner. Nothing
spins.

Why this never lets more than ``limit`` requests arrive in any window, whatever the
latency on either way. The service counts a request when it arrives, which is after we
send it (so after its admission ``s``) and before its answer's headers reach us (so before
its release ``c``): ``s <= a <= c``. Suppose some window ``(t - window, t]`` held ``limit +
1`` arrivals, and let ``m`` be the one of them admitted last, at ``s_m <= a_m <= t``.
Each of the other ``limit`` was admitted before ``s_m`` and arrived after ``t - window
>= s_m - window``, so it completed after ``s_m - window`` (or had not completed): at
``s_m`` every one of them was in flight or completed within the window, the record held
``limit`` slots, and ``m`` was not admitted. A slot counted as completed before its
release is no exception: one that outlived its deadline (``hold``, longer than an attempt
can last) had its answer by then, and one whose holder died had its connection closed
with it; a release that still comes dates it again. Only the order of events on one
clock matters, so requests slow on the way in, fast ones overtaking them, random latency
and bursts of slow answers change nothing. A process's monotonic clock
dates the process window, the machine's monotonic clock the machine record (on Linux
``time.monotonic()`` is CLOCK_MONOTONIC, one clock for every process of the machine, which
no step of the wall clock moves: a wall clock set back or forward by more than a window
re-admits nothing), the Redis server's clock the Redis record.

Why completion, and not the send plus a margin learned from past latencies: no rule that
admits sooner is safe when an arrival can be anywhere between send and completion. Were
a request admitted at ``s`` while ``limit`` others were in flight or completed after ``s -
window``, each of those could have arrived within ``(s - window, s]`` (a completed one
just before its completion, one in flight at any moment up to ``s``) and the new one at
``s`` itself: ``limit + 1`` arrivals within one window. Completion dating
costs one round trip per window (the next ``limit`` go a window after the answers, not
after the arrivals): a share ``window / (window + round trip)`` of what the limit allows at
best, 0.97 at 333 ms and 0.95 at 500 ms for the service's 10 s window.

Why not a maintained limiter library: ``limits`` (its moving window) and
``pyrate-limiter`` keep a log of timestamps taken *when a request is admitted*
(``hit``/``try_acquire`` adds "now" to the log), with no notion of a request in flight
and no way to re-date an entry when it completes. The service counts *arrivals*, which
happen after the admission by the network latency; dating by admission lets a slow
request arrive inside the next window and draw a 429. Completion dating needs the
in-flight set and a release, which is what this module adds; each backend's record is a hundred lines.

Costs, measured on a 2-core Linux machine (acquire and release of one slot, never
waiting): a few microseconds in the process; 0.12-0.18 ms on the machine's SQLite file
(one write transaction to acquire, one statement to release; 0.22-0.28 ms a slot with 8
threads); 0.15-0.35 ms against a Redis on loopback (one script call each way). The
service allows six requests a second, so this is noise beside a request.
"""

from __future__ import annotations

import bisect
import logging
import math
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol
from urllib.parse import urlsplit

from ..errors import CoordinationError, StoreframesError, shown_when_half_built
from .state import ForkSafeLock

__all__ = [
    "KEEP",
    "Limiter",
    "OwnWindow",
    "ProcessWindow",
    "Shared",
    "SharedLimiter",
    "Slots",
    "check_rate",
    "shared_window",
    "slot_delay",
    "unreachable",
]

log = logging.getLogger("storeframes")

KEEP = 600.0
"""Seconds a completed slot is kept (or the window, when longer): a limiter with a longer window than this
sharing a token with a shorter one may see fewer completions than there were."""


class Limiter(Protocol):
    """What the request path needs of a rate limiter (:class:`SharedLimiter`, :class:`~storeframes.fetch.limiter.SlidingWindowLimiter`)."""

    @property
    def limit(self) -> int: ...

    @property
    def window(self) -> float: ...

    @property
    def waited(self) -> float: ...

    def acquire(self) -> None: ...

    def release(self) -> None: ...

    def slot(self) -> AbstractContextManager[None]: ...


def check_rate(limit: Any, window: Any, hold: Any) -> None:
    """Raise ValueError for a ``limit``, ``window`` or ``hold`` a window cannot keep."""
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ValueError(f"rate limit must be a whole number of requests >= 1, got {limit!r}")
    if isinstance(window, bool) or not isinstance(window, (int, float)) or not window > 0 or math.isinf(window):
        raise ValueError(f"rate window must be a positive number of seconds, got {window!r}")
    if isinstance(hold, bool) or not isinstance(hold, (int, float)) or not hold > 0 or math.isinf(hold):
        raise ValueError(f"hold must be a positive number of seconds, got {hold!r}")


def slot_delay(
    flying: int, recent: int, nth: Callable[[int], float], limit: int, window: float, now: float
) -> float | None:
    """None when a slot is free; else the seconds to sleep before asking again.

    ``recent`` completions lie within ``window`` of ``now``; ``nth(k)`` is the ``k``-th
    oldest of them (from 1). Freeing a slot takes the ``k`` oldest out of the window; if
    more than those are needed, in-flight slots must complete first, and each then stays
    a whole window: nothing is free before ``now + window`` (a slot counted completed
    because its holder is gone, or at its deadline, is dated ``now`` or later too).
    """
    k = flying + recent - limit + 1
    if k <= 0:
        return None
    if k <= recent:
        return max(nth(k) + window - now, 0.0005)
    return window


def _from(times: list[float], first: int) -> Callable[[int], float]:
    """The ``k``-th (from 1) of ``times`` from index ``first`` on."""
    return lambda k: times[first + k - 1]


class Shared(Protocol):
    where: str

    def acquire(self, limit: int, window: float, hold: float) -> tuple[Any, float]:
        """Block until admitted; (a handle to :meth:`release`, seconds waited)."""
        ...

    def release(self, handle: Any) -> None: ...


class ProcessWindow:
    """The record of one token in this process only: completions in memory, threads wait on a Condition."""

    where = "process"

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._done: list[float] = []  # completion times (monotonic), oldest first
        self._flying = 0
        self._next = 0
        self._keep = KEEP

    def acquire(self, limit: int, window: float, hold: float) -> tuple[Any, float]:
        start = time.monotonic()
        with self._cond:
            self._keep = max(self._keep, window)
            while True:
                now = time.monotonic()
                done = self._done
                old = bisect.bisect_right(done, now - self._keep)
                if old:
                    del done[:old]
                first = bisect.bisect_right(done, now - window)
                delay = slot_delay(self._flying, len(done) - first, _from(done, first), limit, window, now)
                if delay is None:
                    self._flying += 1
                    self._next += 1
                    return self._next, now - start
                self._cond.wait(delay)

    def release(self, handle: Any) -> None:
        with self._cond:
            self._flying -= 1
            self._done.append(time.monotonic())


class OwnWindow(ProcessWindow):
    """The window of one limiter, for a service only its caller reaches."""

    where = "own window"


class Slots(Protocol):
    """A record of one token's slots that other processes share: a backend's part of the window."""

    where: str
    """Who shares it, for people: ``machine`` or the Redis URL (password masked)."""

    @property
    def place(self) -> str:
        """Where it is kept, for a warning that it cannot be: the file, or :attr:`where`."""
        ...

    def take(self, limit: int, window: float, hold: float) -> tuple[Any, float]:
        """Take a slot if one is free: (a handle to :meth:`give`, 0), or (None, seconds to sleep first).

        Raises :class:`~storeframes.errors.CoordinationError` when the record cannot be used.
        """
        ...

    def give(self, handle: Any) -> None:
        """Mark the slot as completed, now."""
        ...


class _RemoteWindow:
    """The process's layer in front of a record other processes share.

    Callers of one ``(limit, window)`` pass a gate one at a time, so a single thread of
    the process asks the record and sleeps until it may ask again; the others wait at the
    gate. A record that cannot be used raises :class:`~storeframes.errors.CoordinationError`:
    never a window of the process's own, which other processes of the token would not count.
    """

    def __init__(self, slots: Slots):
        self.slots = slots
        self.where = slots.where
        self._lock = threading.Lock()
        self._gates: dict[tuple[int, float], threading.Lock] = {}

    def _gate(self, limit: int, window: float) -> threading.Lock:
        with self._lock:
            return self._gates.setdefault((limit, window), threading.Lock())

    def acquire(self, limit: int, window: float, hold: float) -> tuple[Any, float]:
        start = time.monotonic()
        with self._gate(limit, window):
            while True:
                try:
                    handle, delay = self.slots.take(limit, window, hold)
                except StoreframesError:
                    raise
                except Exception as exc:  # sqlite3's or redis-py's errors
                    raise CoordinationError(
                        f"the rate window on {self.where} failed: {type(exc).__name__}: {exc}"
                    ) from exc
                if handle is not None:
                    return handle, time.monotonic() - start
                time.sleep(delay)

    def release(self, handle: Any) -> None:
        try:
            self.slots.give(handle)
        except Exception:  # the slot stays in flight until its deadline, and counts as completed then
            log.warning("could not release a slot of the rate window on %s", self.where, exc_info=True)


class SharedLimiter:
    """At most ``limit`` requests in any ``window`` seconds, counted over every caller of the token.

    Made by a :class:`~storeframes.coord.Coordinator`'s ``limiter()``. :meth:`slot` holds a slot for one request;
    :meth:`acquire` and :meth:`release` do the same in two steps (a thread releases the
    slot it acquired last). ``waited`` is the total seconds callers spent waiting.
    """

    def __init__(
        self, shared: Shared, limit: int, window: float, *, hold: float, locate: Callable[[], Shared] | None = None
    ):
        check_rate(limit, window, hold)
        self._shared = shared
        self._locate = locate  # finds the process's window again in a forked child
        self._pid = os.getpid()
        self.limit = limit
        self.window = float(window)
        self.hold = float(hold)
        self.waited = 0.0
        self._lock = threading.Lock()
        self._local = threading.local()

    @property
    def where(self) -> str:
        """Who shares the window: ``machine``, ``process``, the Redis URL (password masked) or ``own window``."""
        return self._shared.where

    @shown_when_half_built
    def __repr__(self) -> str:
        shared = "" if isinstance(self._shared, OwnWindow) else "shared by token, "
        return f"Limiter(limit={self.limit}, window={self.window}, {shared}{self.where})"

    def _window(self) -> Shared:
        if self._pid != os.getpid() and self._locate is not None:  # a forked child: its own connections
            self._shared, self._pid = self._locate(), os.getpid()
        return self._shared

    def _take(self) -> Any:
        handle, waited = self._window().acquire(self.limit, self.window, self.hold)
        with self._lock:
            self.waited += waited
        return handle

    def acquire(self) -> None:
        """Block until a request may be sent, and hold its slot (this thread's, until :meth:`release`)."""
        handle = self._take()
        held = self._local.__dict__.setdefault("held", [])
        held.append(handle)

    def release(self) -> None:
        """Mark the slot this thread acquired last as complete, now."""
        held = self._local.__dict__.get("held")
        if not held:
            raise RuntimeError("release() without a slot acquired by this thread")
        self._window().release(held.pop())

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Hold a slot for the duration of one request."""
        handle = self._take()
        try:
            yield
        finally:
            self._shared.release(handle)  # the window it was taken from


_WINDOWS: dict[tuple[int, str, str], Shared] = {}
_WINDOWS_LOCK = ForkSafeLock()


def shared_window(place: str, tid: str, slots: Callable[[], Slots]) -> Shared:
    """The process's one window of the token ``tid`` over the record at ``place`` (``slots()`` opens it).

    A forked child gets its own, with its own connections.
    """
    key = (os.getpid(), place, tid)
    with _WINDOWS_LOCK:
        shared = _WINDOWS.get(key)
        if shared is None:
            shared = _WINDOWS[key] = _RemoteWindow(slots())
        return shared


def unreachable(base_url: str | None) -> bool:
    """Whether nobody else can reach ``base_url``: a host under ``.invalid`` (RFC 2606), such as the
    in-process sandbox's, is answered by the caller's own transport, so the window is the caller's own."""
    try:
        host = (urlsplit(base_url).hostname or "") if base_url else ""
    except ValueError:  # the request path refuses it, with its own message
        return False
    return host == "invalid" or host.endswith(".invalid")
