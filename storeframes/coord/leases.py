"""Leases: one caller at a time fetches a missing cell, across threads, clients, processes and machines.

A lease is taken on a *name*: one app or keyword of one endpoint and scope
(``storeframes.engine.lease_name``), whichever cells of it a caller is missing.
Whoever holds the name fetches; the others wait, then read what it fetched. There are
two layers:

- **in the process**, one table of *flights* per cache, shared by every thread and every
  client of the process that uses that cache. A caller that finds a flight waits for it
  to land and borrows its responses from memory (so this works without a cache too);
- **across processes**, a :class:`Remote` lease that the other processes can see: a
  lock file in the cache folder (``leases/``, :class:`~storeframes.coord.file_leases.FileLeases`;
  the operating system drops the lock of a process that dies, so a killed process never
  leaves a lease behind, and one whose heartbeat beside it is older than its TTL, a
  stopped process, is taken over), an object of the cache's bucket
  (:class:`~storeframes.coord.bucket_leases.ObjectLeases`), or, with a Redis coordinator, a Redis
  key with an expiry that its holder keeps renewing
  (:class:`~storeframes.coord.redis.RedisLeases`: a holder that dies lets it expire within
  its TTL). A caller that finds the lease taken waits until it is free and reads the
  answer from the cache. Which of them a cache gets is its coordinator's choice
  (:meth:`storeframes.coord.Coordinator.leases`).

Nobody waits while holding a lease: names are taken without waiting, the free ones
fetched and released, and only then are the busy ones waited for. So there is no
deadlock, whatever order callers name things in. A lease costs one lock-file operation
(or one Redis round trip) per app or keyword; waiting costs at most the time the holder
takes to fetch.
"""

from __future__ import annotations

import contextlib
import hashlib
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..cache.files import CacheWarning
from ..errors import CoordinationError, StoreframesError, shown_when_half_built, warn

__all__ = ["WAIT_LIMIT", "Held", "LeaseLost", "Leases", "Remote", "digest", "holding", "leases_for", "machine"]

WAIT_LIMIT = 900.0
"""Seconds to wait for another caller's lease before giving up with an error."""


class Remote(Protocol):
    """Leases other processes see."""

    def try_take(self, name: str) -> Any | None:
        """Take ``name`` if it is free; a handle to :meth:`release`, or None when another holds it."""
        ...

    def release(self, handle: Any) -> None: ...

    def confirm(self, handle: Any) -> bool:
        """Whether this caller still holds the lease, renewed if so: asked right before each request is sent.

        False when another caller took it over (its holder was stopped past the TTL).
        """
        ...

    def wait(self, name: str, timeout: float) -> bool:
        """Wait until ``name`` is free; False when ``timeout`` passed first."""
        ...


def digest(text: str) -> str:
    """The hash a lease's name is kept under (the file's stripe, the Redis key, the bucket's object): never the name."""
    return hashlib.blake2b(text.encode(), digest_size=16, person=b"storeframes-ls").hexdigest()


class LeaseLost(CoordinationError):
    """A lease was taken over by another caller while its holder was stopped: the holder sends nothing more.

    Raised right before a request would be sent (:meth:`Leases.confirm`); the fetcher then
    waits for the new holder and reads what it kept, as for any lease another caller holds.
    """


@dataclass
class _Flight:
    """A name being fetched in this process: landed with what its holder fetched.

    What was fetched (the engine's ``Fetched`` of each request) is handed on as it is: the
    leases do not look into it.
    """

    done: threading.Event = field(default_factory=threading.Event)
    fetched: list[Any] = field(default_factory=list)


@dataclass
class Held:
    """A lease this caller holds: its flight in the process and its handle across processes."""

    name: str
    flight: _Flight
    handle: Any = None
    released: bool = False


class Leases:
    """The leases of one cache: flights in this process, and ``remote`` leases across processes (or None)."""

    def __init__(self, remote: Remote | None = None):
        self.remote = remote
        self._lock = threading.Lock()
        self._flights: dict[str, _Flight] = {}

    @shown_when_half_built
    def __repr__(self) -> str:
        return f"Leases(remote={self.remote!r})"

    def take(self, names: Sequence[str]) -> tuple[dict[str, Held], dict[str, _Flight | None]]:
        """Take every free name without waiting; returns those held and those busy.

        A busy name maps to the flight to wait for in this process, or None when another
        process holds it.
        """
        held: dict[str, Held] = {}
        busy: dict[str, _Flight | None] = {}
        mine: dict[str, _Flight] = {}
        with self._lock:  # all at once: two threads asking for the same apps do not split them between them
            for name in names:
                flight = self._flights.get(name)
                if flight is not None:
                    busy[name] = flight
                else:
                    mine[name] = self._flights[name] = _Flight()
        for name, flight in mine.items():
            handle = None
            if self.remote is not None:
                try:
                    handle = self.remote.try_take(name)
                except BaseException:
                    for other in [name, *[n for n in mine if n not in held and n not in busy and n != name]]:
                        self._land(other, mine[other])
                    for lease in held.values():
                        self.release(lease)
                    raise
                if handle is None:  # another process fetches it: nobody here does
                    self._land(name, flight)
                    busy[name] = None
                    continue
            held[name] = Held(name, flight, handle)
        return held, busy

    def release(self, held: Held, fetched: Sequence[Any] = ()) -> None:
        """Give up a lease (once), landing its flight with what was fetched under it."""
        if held.released:
            return
        held.released = True
        held.flight.fetched = list(fetched)
        try:
            if self.remote is not None and held.handle is not None:
                self.remote.release(held.handle)
        finally:
            self._land(held.name, held.flight)

    def confirm(self, held: Sequence[Held]) -> None:
        """Raise :class:`LeaseLost` unless every one of ``held`` is still this caller's (renewing them).

        The fence of a request: asked right before it is sent, so that a holder stopped past
        the TTL (Ctrl-Z, a laptop asleep), whose lease another caller took over meanwhile,
        does not pay for the same cells again when it resumes.
        """
        if self.remote is None:
            return
        for lease in held:
            if lease.handle is not None and not lease.released and not self.remote.confirm(lease.handle):
                raise LeaseLost(
                    f"the lease on {lease.name.split('|')[0]} was taken over by another caller while this one was "
                    "stopped or could not renew it: nothing was sent; the other caller's answer is used"
                )

    def _land(self, name: str, flight: _Flight) -> None:
        with self._lock:
            if self._flights.get(name) is flight:
                del self._flights[name]
        flight.done.set()

    def wait(self, name: str, flight: _Flight | None, *, timeout: float = WAIT_LIMIT) -> list[Any]:
        """Wait for a busy name; what its holder in this process fetched ([] for another process's)."""
        if flight is not None:
            landed = flight.done.wait(timeout)
            fetched = flight.fetched
        else:
            assert self.remote is not None
            landed = self.remote.wait(name, timeout)
            fetched = []
        if not landed:
            raise StoreframesError(
                f"waited {timeout:g} s for another caller fetching the same data ({name.split('|')[0]}); "
                "it neither finished nor stopped"
            )
        return fetched


@contextlib.contextmanager
def holding(leases: Leases, name: str, *, timeout: float = WAIT_LIMIT) -> Iterator[Held]:
    """Hold the lease ``name`` for the ``with`` block, waiting (at most ``timeout`` seconds) while another holds it.

    For work longer than a request (a tracker's run): the lease is kept alive by its backend's
    keeper while held, and lapses within its TTL when the holder dies. A release that cannot be
    written (a full disk) is a :class:`~storeframes.cache.CacheWarning`, never an error that would
    hide what the block itself returned or raised: the lease lapses within its TTL all the same.
    """
    deadline = time.monotonic() + timeout
    while True:
        held, busy = leases.take([name])
        if name in held:
            break
        left = deadline - time.monotonic()
        if left <= 0:
            raise StoreframesError(
                f"waited {timeout:g} s for another caller holding {name.split('|')[0]}; it neither finished nor stopped"
            )
        leases.wait(name, busy[name], timeout=left)
    try:
        yield held[name]
    finally:
        try:
            leases.release(held[name])
        except (StoreframesError, OSError) as exc:  # a full disk: what the work itself said is not hidden by it
            warn(
                f"could not release the lease on {name.split('|')[0]} ({exc}); it lapses by itself within its TTL",
                CacheWarning,
            )


_REGISTRY: dict[str, Leases] = {}
_REGISTRY_LOCK = threading.Lock()


def leases_for(identity: str, remote: Callable[[], Remote | None]) -> Leases:
    """The process-wide :class:`Leases` of the cache called ``identity`` (``remote`` makes its cross-process part)."""
    with _REGISTRY_LOCK:
        leases = _REGISTRY.get(identity)
        if leases is None:
            leases = _REGISTRY[identity] = Leases(remote())
        return leases


def machine() -> str:
    """This machine's name, to tell apart folders with the same path on two machines."""
    return socket.gethostname()
