"""A strict sliding-window rate limiter shared by every thread of a client.

The service allows 60 requests in any 10 seconds. A leaky bucket with a burst of 60
lets 120 through in the first 10 s; a fixed window lets 120 through across a window
boundary. This limiter keeps the time of each request and admits a new one only when
fewer than ``limit`` requests lie within the last ``window`` seconds.

What "the time of a request" means matters: the service counts arrivals, which happen
somewhere between the moment we send and the moment the answer's headers arrive. A slot
is therefore held from :meth:`acquire` until :meth:`release`, and dated by the release
(the request path releases it when the headers arrive, or the attempt ends without
them). The next request past the limit waits until ``window`` seconds after the
completion that frees its slot, so its arrival is at least ``window`` after the arrival
it replaces, whatever the network latency. Off-the-shelf limiters date a request
by its start, which a slow request can defeat.

Why no window ever holds more than ``limit`` arrivals: every arrival ``a`` lies between
its admission ``s`` and its completion ``c``. Take any ``limit + 1`` arrivals within one
window and the one of them admitted last, at ``s_m <= a_m``: the others arrived after
``a_m - window >= s_m - window``, so each was in flight or had completed within the
window at ``s_m``, and ``m`` would not have been admitted. No earlier date is safe: a
request admitted while ``limit`` others completed within the window could arrive at once,
and each of those just before it completed. :mod:`storeframes.coord.window` keeps the same
rule over a record shared by processes and machines.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..errors import shown_when_half_built

__all__ = ["SlidingWindowLimiter"]


class SlidingWindowLimiter:
    """At most ``limit`` requests in any ``window`` seconds, across threads.

    >>> limiter = SlidingWindowLimiter(60, 10.0)
    >>> with limiter.slot():
    ...     pass  # send one request here
    """

    def __init__(
        self,
        limit: int,
        window: float,
        *,
        clock: Callable[[], float] = time.monotonic,
    ):
        if not isinstance(limit, int) or limit < 1:
            raise ValueError(f"rate limit must be a whole number of requests >= 1, got {limit!r}")
        if not window > 0:
            raise ValueError(f"rate window must be a positive number of seconds, got {window!r}")
        self.limit = limit
        self.window = float(window)
        self._clock = clock
        self._done: deque[float] = deque()  # completion times within the window, oldest first
        self._in_flight = 0
        self._cond = threading.Condition()
        self.waited = 0.0  # total seconds threads spent waiting for a slot

    @shown_when_half_built
    def __repr__(self) -> str:
        return f"SlidingWindowLimiter(limit={self.limit}, window={self.window})"

    def _prune(self, now: float) -> None:
        while self._done and self._done[0] <= now - self.window:
            self._done.popleft()

    def acquire(self) -> None:
        """Block until a request may be sent, and hold its slot."""
        start = self._clock()
        with self._cond:
            while True:
                now = self._clock()
                self._prune(now)
                k = self._in_flight + len(self._done) - self.limit + 1  # completions that must leave
                if k <= 0:
                    self._in_flight += 1
                    self.waited += now - start
                    return
                # until the k-th oldest completion leaves the window; if in-flight slots must complete
                # first, each then stays a whole window
                delay = self._done[k - 1] + self.window - now if k <= len(self._done) else self.window
                self._cond.wait(timeout=max(delay, 0.0005))

    def release(self) -> None:
        """Mark the held slot's request as complete, now."""
        with self._cond:
            self._in_flight -= 1
            self._done.append(self._clock())
            self._cond.notify_all()  # the waiters date their wait anew (a clock= given may not be real time)

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Hold a slot for the duration of one request."""
        self.acquire()
        try:
            yield
        finally:
            self.release()
