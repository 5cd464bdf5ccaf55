"""A client's threads (:class:`Workers`), which send a call's requests and flatten its answers, and what a
round of them was charged (:class:`Spent`, the progress bar's credits)."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

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
"""In a pool's threads, ``workers`` refers (weakly) to the :class:`Workers` that owns the thread."""


def _mark_pool_thread(workers: Workers) -> None:
    _POOL_THREAD.workers = weakref.ref(workers)


class Workers:
    """A client's threads: made on first use, ``max_workers`` of them, shut down with the client.

    A forked child has none of its parent's threads: there the pool is made afresh (the
    parent's, with its lock, is left alone).
    """

    def __init__(self, max_workers: int):
        self.max_workers = max_workers
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._guard = ForkGuard()

    def _forked(self) -> None:
        """In a child forked from the process that made the pool: forget the parent's threads and lock."""
        if self._guard.forked:
            self._lock, self._pool, self._guard = threading.Lock(), None, ForkGuard()

    def in_pool(self) -> bool:
        """Whether this thread is one of these workers."""
        ref = getattr(_POOL_THREAD, "workers", None)
        return ref is not None and ref() is self

    def executor(self) -> ThreadPoolExecutor:
        self._forked()
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    self.max_workers, thread_name_prefix="storeframes", initializer=_mark_pool_thread, initargs=(self,)
                )
            return self._pool

    def shutdown(self) -> None:
        self._forked()
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)

    def map(self, function: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        """``function`` over ``items`` on the threads, results in order; in the caller's thread when it is one
        of them (a pool waiting on itself would never finish)."""
        if self.in_pool():
            return iter([function(item) for item in items])
        return self.executor().map(carry(function), items)

    def start(self, function: Callable[[T], R], items: Sequence[T]) -> list[Future[R]]:
        """Run ``function`` over ``items`` on the thread pool; a lone item (or any, from one of the pool's
        own threads) runs in the caller's thread."""
        if len(items) != 1 and not self.in_pool():
            pool = self.executor()
            working = carry(function)  # its warnings are given in the caller's thread when the call ends
            return [pool.submit(working, item) for item in items]
        futures: list[Future[R]] = []
        for item in items:
            future: Future[R] = Future()
            try:
                future.set_result(function(item))
            except Exception as exc:
                future.set_exception(exc)
            futures.append(future)
        return futures
