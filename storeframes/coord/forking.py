"""Forked processes: storeframes refuses, before anything is sent, to work in a child forked after it was used.

A process forked (``os.fork``, or ``multiprocessing`` with the ``"fork"`` start method, Linux's
default before Python 3.14) gets a copy of its parent's memory but none of its threads. What a
client built there does not survive: the HTTP connections (shared sockets, a TLS session in
the middle of a stream), the worker threads and the thread writing frames behind the calls,
the machine window's SQLite connection, locks that threads which are gone held at the moment of
the fork. Rebuilding those would not be enough: polars' own thread pool, once used in the
parent, is poisoned in the child, and the first polars operation there never returns. A call
sent its request (paid) and then hung in polars before the answer was kept.

So a call is refused with :class:`~storeframes.errors.ForkedProcessError` when its client was
built in another process, or when this process was forked from one that had made storeframes
calls (``ForkGuard.check``, the first step of every call, before anything is read or sent).
A client that is closed in such a child leaves its parts alone: they are the parent's. What
works: the ``"spawn"`` or ``"forkserver"`` start method, or forking before the first call and
building the client in the child. Polars used directly by the parent before a fork (not through
storeframes) is not noticed here; polars' own documentation warns about it.
"""

from __future__ import annotations

import os

from ..errors import ForkedProcessError

__all__ = ["ForkGuard", "built_here"]

_CALLED_IN: int | None = None
"""The process whose calls went through storeframes (inherited by a forked child, unlike a spawned one)."""

_FIX = (
    'Start the worker processes with the "spawn" or "forkserver" method instead: '
    'multiprocessing.get_context("spawn").Pool(...), or '
    'concurrent.futures.ProcessPoolExecutor(mp_context=multiprocessing.get_context("spawn")); '
    "or fork before the first call and build the client (or sf.configure) in the child."
)


def built_here(pid: int) -> bool:
    """Whether this process is ``pid`` (the one that built something), not a child forked from it."""
    return os.getpid() == pid


class ForkGuard:
    """The process that built a client's parts; a call from any other is refused before it sends."""

    def __init__(self) -> None:
        self.pid = os.getpid()

    @property
    def forked(self) -> bool:
        """Whether this is a child forked from the process that built the client."""
        return not built_here(self.pid)

    def check(self) -> None:
        """Refuse the call (:class:`~storeframes.errors.ForkedProcessError`) in a forked child; mark
        this process as one whose calls used storeframes (and so polars' thread pool)."""
        global _CALLED_IN
        here = os.getpid()
        if here != self.pid:
            raise ForkedProcessError(
                f"this storeframes client was built in process {self.pid} and called in process {here}, a child "
                "forked from it (os.fork, or multiprocessing with the 'fork' start method, Linux's default): its "
                "connections, threads and rate window, and polars' thread pool, do not survive a fork, so the "
                f"call could pay for its request and then hang. Nothing was sent. {_FIX}"
            )
        if _CALLED_IN is not None and here != _CALLED_IN:
            raise ForkedProcessError(
                f"process {here} was forked from process {_CALLED_IN} after storeframes was used there (os.fork, "
                "or multiprocessing with the 'fork' start method, Linux's default): polars' thread pool does not "
                "survive a fork, so a call here could pay for its request and then hang, even with a client "
                f"built in this process. Nothing was sent. {_FIX}"
            )
        _CALLED_IN = here
