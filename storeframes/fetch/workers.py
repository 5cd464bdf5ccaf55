"""A client's share of the process's threads (:class:`Workers`), which send a call's requests and flatten its
answers, and what a round of them was charged (:class:`Spent`, the progress bar's credits)."""

from __future__ import annotations

import threading
import weakref
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any, TypeVar

from ..coord.forking import ForkGuard
from ..errors import carry

__all__ = ["Spent", "Workers"]

T = TypeVar("T")
R = TypeVar("R")


class Spent:
    """The credits a round of a call's requests was charged: each adds its attempts' cost as it ends.

    A call's progress bar shows this, not the client's total: the credits of earlier calls,
    and of calls other threads make at the same time, are not this call's.

    >>> spent = Spent()
    >>> spent.add(20); spent.add(10); spent.credits
    30
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.credits = 0

    def add(self, credits: int) -> None:
        """Count what one request was charged (from the worker thread that sent it)."""
        with self._lock:
            self.credits += credits


_POOL_THREAD = threading.local()
"""In the process's threads, ``workers`` refers (weakly) to the :class:`Workers` whose task the thread runs."""

_MOST_THREADS = 256
"""The most threads the process's shared pool holds: far above what the clients of one process use at once
(a thread is made only when none is idle), so no client's task ever waits for another client's."""


class _Threads:
    """The process's threads, shared by every client: made on first use, kept idle between calls.

    Starting a thread costs little on an idle machine, but a new client started its threads
    while the first ones were already parsing answers, each start waiting for the running
    threads to give the interpreter up: the first call of a new client cost what ten calls of
    a warm one did not. A forked child has none of its parent's threads: there the pool is
    made afresh.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._guard = ForkGuard()

    def pool(self) -> ThreadPoolExecutor:
        if self._guard.forked:
            self._lock, self._pool, self._guard = threading.Lock(), None, ForkGuard()
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(_MOST_THREADS, thread_name_prefix="storeframes")
            return self._pool


_THREADS = _Threads()


class Workers:
    """A client's share of the process's threads: at most ``max_workers`` of its tasks run at once, the others
    wait their turn in its own queue; closing the client waits for its tasks.

    The threads are the process's (:class:`_Threads`), so a new client starts none. A forked
    child has none of its parent's tasks: there the queue is made afresh (the parent's, with
    its lock, is left alone).
    """

    def __init__(self, max_workers: int):
        self.max_workers = max_workers
        self._lock = threading.Lock()
        self._waiting: deque[tuple[Future[Any], Callable[[], Any]]] = deque()
        self._running = 0
        self._open: set[Future[Any]] = set()
        self._guard = ForkGuard()

    def _forked(self) -> None:
        """In a child forked from the process that ran tasks: forget the parent's tasks and lock."""
        if self._guard.forked:
            self._lock, self._waiting, self._running = threading.Lock(), deque(), 0
            self._open, self._guard = set(), ForkGuard()

    def in_pool(self) -> bool:
        """Whether this thread is running one of these workers' tasks."""
        ref = getattr(_POOL_THREAD, "workers", None)
        return ref is not None and ref() is self

    def submit(self, function: Callable[[T], R], item: T) -> Future[R]:
        """``function(item)`` on the process's threads, in turn with this client's other tasks.

        >>> Workers(2).submit(len, "abc").result()
        3
        """
        self._forked()
        future: Future[R] = Future()
        with self._lock:
            self._waiting.append((future, lambda: function(item)))
            self._open.add(future)
        future.add_done_callback(self._closed)
        self._next()
        return future

    def _closed(self, future: Future[Any]) -> None:
        with self._lock:
            self._open.discard(future)

    def _next(self) -> None:
        """Start waiting tasks while fewer than ``max_workers`` run."""
        while True:
            with self._lock:
                if self._running >= self.max_workers or not self._waiting:
                    return
                task = self._waiting.popleft()
                self._running += 1
            _THREADS.pool().submit(self._run, *task)

    def _run(self, future: Future[Any], task: Callable[[], Any]) -> None:
        before = getattr(_POOL_THREAD, "workers", None)
        _POOL_THREAD.workers = weakref.ref(self)
        try:
            if future.set_running_or_notify_cancel():
                try:
                    result = task()
                except BaseException as exc:
                    future.set_exception(exc)
                else:
                    future.set_result(result)
        finally:
            _POOL_THREAD.workers = before
            with self._lock:
                self._running -= 1
            self._next()

    def shutdown(self) -> None:
        """Wait for every task of these workers (the threads stay the process's)."""
        self._forked()
        with self._lock:
            open_now = list(self._open)
        wait(open_now)

    def map(self, function: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        """``function`` over ``items`` on the threads, results in order; in the caller's thread when it is one
        of them (a pool waiting on itself would never finish)."""
        if self.in_pool():
            return iter([function(item) for item in items])
        working = carry(function)
        return _in_order([self.submit(working, item) for item in items])

    def start(self, function: Callable[[T], R], items: Sequence[T]) -> list[Future[R]]:
        """Run ``function`` over ``items`` on the threads; a lone item (or any, from one of these workers' own
        threads) runs in the caller's thread."""
        if len(items) != 1 and not self.in_pool():
            working = carry(function)  # its warnings are given in the caller's thread when the call ends
            return [self.submit(working, item) for item in items]
        futures: list[Future[R]] = []
        for item in items:
            future: Future[R] = Future()
            try:
                future.set_result(function(item))
            except Exception as exc:
                future.set_exception(exc)
            futures.append(future)
        return futures


def _in_order(futures: list[Future[R]]) -> Iterator[R]:
    """The futures' results in order; those not yet started are cancelled if the caller stops early."""
    try:
        for future in futures:
            yield future.result()
    finally:
        for future in futures:
            future.cancel()
