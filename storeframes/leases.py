"""Leases: one caller at a time fetches a missing cell, across threads, clients, processes and machines.

A lease is taken on a *name*: one app or keyword of one endpoint and scope
(:func:`storeframes.engine.lease_name`), whichever cells of it a caller is missing.
Whoever holds the name fetches; the others wait, then read what it fetched. There are
two layers:

- **in the process**, one table of *flights* per cache, shared by every thread and every
  client of the process that uses that cache. A caller that finds a flight waits for it
  to land and borrows its responses from memory (so this works without a cache too);
- **across processes**, a lease that the other processes can see: a lock file in the
  cache folder (``leases/``, through :mod:`filelock`; the operating system drops the lock
  of a process that dies, so a killed process never leaves a lease behind), or, with a
  Redis coordinator, a Redis key with an expiry that its holder keeps renewing (a
  holder that dies lets it expire within :attr:`RedisLeases.TTL`). A caller that finds
  the lease taken waits until it is free and reads the answer from the cache.

Nobody waits while holding a lease: names are taken without waiting, the free ones
fetched and released, and only then are the busy ones waited for. So there is no
deadlock, whatever order callers name things in. A lease costs one lock-file operation
(or one Redis round trip) per app or keyword; waiting costs at most the time the holder
takes to fetch.
"""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .engine import Fetched
from .errors import StoreframesError, plural

if TYPE_CHECKING:
    import filelock

__all__ = ["FileLeases", "Held", "Leases", "RedisLeases", "Remote", "leases_for"]

log = logging.getLogger("storeframes")

WAIT_LIMIT = 900.0
"""Seconds to wait for another caller's lease before giving up with an error."""


class Remote(Protocol):
    """Leases other processes see."""

    def try_take(self, name: str) -> Any | None:
        """Take ``name`` if it is free; a handle to :meth:`release`, or None when another holds it."""
        ...

    def release(self, handle: Any) -> None: ...

    def wait(self, name: str, timeout: float) -> bool:
        """Wait until ``name`` is free; False when ``timeout`` passed first."""
        ...


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=16, person=b"storeframes-ls").hexdigest()


def _timeout() -> type[BaseException]:
    import filelock

    return filelock.Timeout


class FileLeases:
    """Leases as lock files in a folder, one of :attr:`STRIPES` files per name's hash.

    Two names may share a file: between processes one then waits for the other's
    request, which costs time, never credits; within the process (where the flights keep
    names apart) a file already held is shared. The files stay (empty) and are reused.
    """

    STRIPES = 4096

    def __init__(self, folder: str | os.PathLike[str]):
        self.folder = Path(folder)
        self._lock = threading.Lock()
        self._held: dict[int, tuple[filelock.BaseFileLock, int]] = {}  # stripe -> (lock, names held on it)

    def __repr__(self) -> str:
        return f"FileLeases({str(self.folder)!r})"

    def _stripe(self, name: str) -> int:
        return int(_digest(name)[:8], 16) % self.STRIPES

    def _file(self, stripe: int) -> filelock.BaseFileLock:
        import filelock  # when first needed: importing storeframes stays quick

        self.folder.mkdir(parents=True, exist_ok=True)
        return filelock.FileLock(self.folder / f"{stripe:03x}.lock", thread_local=False)

    def try_take(self, name: str) -> Any | None:
        stripe = self._stripe(name)
        with self._lock:
            if stripe in self._held:
                lock, count = self._held[stripe]
                self._held[stripe] = (lock, count + 1)
                return stripe
            lock = self._file(stripe)
            try:
                lock.acquire(timeout=0)
            except _timeout():
                return None
            self._held[stripe] = (lock, 1)
            return stripe

    def release(self, handle: Any) -> None:
        with self._lock:
            lock, count = self._held[handle]
            if count > 1:
                self._held[handle] = (lock, count - 1)
                return
            del self._held[handle]
            lock.release()

    def wait(self, name: str, timeout: float) -> bool:
        lock = self._file(self._stripe(name))
        try:
            lock.acquire(timeout=timeout, poll_interval=0.01)
        except _timeout():
            return False
        lock.release()
        return True


_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""
_RENEW = """
local renewed = 0
for i, key in ipairs(KEYS) do
  if redis.call('get', key) == ARGV[i + 1] then
    redis.call('pexpire', key, ARGV[1])
    renewed = renewed + 1
  end
end
return renewed
"""


class RedisLeases:
    """Leases as Redis keys (``SET NX`` with an expiry), renewed by their holder while held."""

    TTL = 15.0
    """Seconds a lease outlives its holder when the holder dies; a live holder renews it every third of that."""

    def __init__(self, redis: Any, space: str):
        self._redis = redis
        self._prefix = f"storeframes:lease:{_digest(space)}:"
        self._release = redis.register_script(_RELEASE)
        self._renew = redis.register_script(_RENEW)
        self._held: dict[str, str] = {}
        self._lock = threading.Lock()
        self._keeper: threading.Thread | None = None

    def __repr__(self) -> str:
        return "RedisLeases()"

    def _key(self, name: str) -> str:
        return self._prefix + _digest(name)

    def try_take(self, name: str) -> Any | None:
        key, token = self._key(name), secrets.token_hex(8)
        if not self._redis.set(key, token, nx=True, px=int(self.TTL * 1000)):
            return None
        with self._lock:
            self._held[key] = token
            if self._keeper is None or not self._keeper.is_alive():
                self._keeper = threading.Thread(target=self._keep, name="storeframes-leases", daemon=True)
                self._keeper.start()
        return key, token

    def release(self, handle: Any) -> None:
        key, token = handle
        with self._lock:
            self._held.pop(key, None)
        self._release(keys=[key], args=[token])

    def wait(self, name: str, timeout: float) -> bool:
        key = self._key(name)
        deadline = time.monotonic() + timeout
        while self._redis.exists(key):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return True

    def _keep(self) -> None:
        """Renew the held leases until none is held."""
        while True:
            time.sleep(self.TTL / 3)
            with self._lock:
                held = dict(self._held)
                if not held:
                    self._keeper = None
                    return
            try:
                self._renew(keys=list(held), args=[int(self.TTL * 1000), *held.values()])
            except Exception:  # a renewal that fails is tried again; the lease may lapse meanwhile
                log.warning("could not renew %s in Redis", plural(len(held), "lease"), exc_info=True)


@dataclass
class _Flight:
    """A name being fetched in this process: landed with what its holder fetched."""

    done: threading.Event = field(default_factory=threading.Event)
    fetched: list[Fetched] = field(default_factory=list)


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

    def release(self, held: Held, fetched: Sequence[Fetched] = ()) -> None:
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

    def _land(self, name: str, flight: _Flight) -> None:
        with self._lock:
            if self._flights.get(name) is flight:
                del self._flights[name]
        flight.done.set()

    def wait(self, name: str, flight: _Flight | None, *, timeout: float = WAIT_LIMIT) -> list[Fetched]:
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
