"""Leases as objects of a bucket, for callers on machines that share the bucket and nothing else.

:class:`ObjectLeases` keeps each lease as a small object ``leases/<hash of the name>`` of
the cache's own store, through the conditional writes of the store contract
(:meth:`~storeframes.cache.stores.base.Store.head`, ``create`` and ``replace``: If-None-Match and
If-Match on S3, GCS and Azure), so it works on any store that declares
``Capabilities.leases == "objects"``. The hash of a name is :func:`~storeframes.coord.leases.digest`'s,
so the objects are named alike by every version that shares a bucket.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any

from ..cache.stores.base import StoreBase, Version, check_key
from ..errors import CacheUnavailableError, StoreframesError, shown_when_half_built
from .leases import digest

__all__ = ["ObjectLeases"]

log = logging.getLogger("storeframes")


@dataclass
class _Lease:
    token: str
    version: Version
    renewals: int = 0


class ObjectLeases:
    """Leases (:class:`~storeframes.coord.leases.Remote`) as objects ``leases/<hash of the name>`` of a store.

    The store is one that declares ``Capabilities.leases == "objects"``: its conditional
    writes (``create``, ``replace``) are atomic for everyone who sees it, as a bucket's are.
    A lease is taken by creating its object (``create``: one winner), holding
    ``{"holder": <random id>, "expires_at": ...}``. While held, a keeper thread rewrites
    it every :attr:`TTL`/3 with ``If-Match`` on the version it wrote last, so its
    version (e_tag) keeps changing. Releasing reads it and deletes it if it still names
    this holder.

    **When a lease has expired.** Not by comparing clocks: a lease is expired when the
    one looking at it has seen the *same version* for :attr:`TTL` seconds of its own
    monotonic clock, which a live holder never lets happen. No clock of any machine (nor
    the server's) matters, only how fast seconds pass. The cost: a newcomer waits up to
    one TTL after it first sees a lease whose holder died. To spare that for leases long
    dead, one whose ``Last-Modified`` (the server's clock) is older than
    :attr:`TTL` + :attr:`CLOCK_MARGIN` by this machine's clock is expired at once; that
    is wrong only if this machine's clock runs ahead of the server's by more than about
    ``CLOCK_MARGIN``. The ``expires_at`` written in the object (the writer's clock) is
    there for people, never used.

    An expired lease is taken over by a conditional overwrite (``If-Match`` on the
    version seen), so of several callers taking it over at once exactly one wins. A
    holder whose keeper could not renew for a TTL (a process stopped with Ctrl-Z, a
    laptop asleep) may lose its lease this way; its release then leaves the new holder's
    lease alone, and :meth:`confirm`, asked right before each request is sent, renews the
    lease with ``If-Match`` on the version this holder wrote last: the version is the
    fence, and a holder whose version was overwritten sends nothing.
    """

    TTL = 15.0
    """Seconds a lease outlives its holder when the holder dies; a live holder renews it every third of that."""
    CLOCK_MARGIN = 60.0
    """How far this machine's clock may run ahead of the server's before a live lease could look long dead."""
    POLL = (0.05, 0.5)
    """The first and the longest pause between two looks while waiting (seconds)."""

    def __init__(self, store: StoreBase, *, prefix: str = "leases/"):
        self.store = store
        self._prefix = check_key(prefix, prefix=True)
        self._lock = threading.Lock()
        self._renewing = threading.Lock()  # one conditional rewrite of a held lease at a time: keeper or confirm
        self._held: dict[str, _Lease] = {}
        self._seen: dict[str, tuple[tuple[str | None, str | None], float]] = {}  # key -> (version, first seen)
        self._keeper: threading.Thread | None = None

    @shown_when_half_built
    def __repr__(self) -> str:
        return f"ObjectLeases({self.store.location!r})"

    def _key(self, name: str) -> str:
        return self._prefix + digest(name)

    def _body(self, token: str, renewals: int) -> bytes:
        return json.dumps(
            {"holder": token, "expires_at": round(time.time() + self.TTL, 3), "renewal": renewals}
        ).encode()

    def try_take(self, name: str) -> Any | None:
        key, token = self._key(name), secrets.token_hex(8)
        try:
            version = self.store.create(key, self._body(token, 0))
            if version is None:
                version = self._take_over(key, token)
        except OSError as exc:
            raise self._unavailable("take a lease", exc) from None
        if version is None:
            return None
        with self._lock:
            self._seen.pop(key, None)
            self._held[key] = _Lease(token, version)
            if self._keeper is None or not self._keeper.is_alive():
                self._keeper = threading.Thread(target=self._keep, name="storeframes-object-leases", daemon=True)
                self._keeper.start()
        return key, token

    def _unavailable(self, operation: str, exc: OSError) -> CacheUnavailableError:
        """The store failed to ``operation`` (its writes refused, the bucket gone): what and the likely cause."""
        return CacheUnavailableError(
            f"the cache at {self.store.location} cannot {operation}: {exc}; likely cause: {self.store.explain(exc)}",
            location=self.store.location,
            operation=operation,
        )

    def _take_over(self, key: str, token: str) -> Version | None:
        """Take ``key`` from a holder that is gone: the new version, or None while it is held."""
        current = self.store.head(key)
        if current is None:  # released meanwhile
            return self.store.create(key, self._body(token, 0))
        if not self._expired(key, current):
            return None
        return self.store.replace(key, self._body(token, 0), current)

    def _expired(self, key: str, current: Version) -> bool:
        """Whether the lease at ``current`` has expired (see the class)."""
        now = time.monotonic()
        version = (current.e_tag, current.version)
        with self._lock:
            seen = self._seen.get(key)
            if seen is None or seen[0] != version:
                if len(self._seen) > 4096:
                    old = now - 2 * (self.TTL + self.CLOCK_MARGIN)
                    self._seen = {k: v for k, v in self._seen.items() if v[1] > old}
                self._seen[key] = (version, now)
                first = now
            else:
                first = seen[1]
        return now - first >= self.TTL or time.time() - current.modified >= self.TTL + self.CLOCK_MARGIN

    def release(self, handle: Any) -> None:
        key, token = handle
        with self._lock:
            self._held.pop(key, None)
        try:
            body = self.store.get(key)
            try:
                holder = json.loads(body).get("holder")
            except (ValueError, AttributeError):
                holder = None
            if holder == token:  # still ours: not taken over after a lapse
                self.store.delete(key)
        except FileNotFoundError:
            return
        except OSError as exc:  # a store that stopped working: the lease lapses after its TTL
            log.warning("could not release a lease in %s (it lapses in %g s): %s", self.store.location, self.TTL, exc)

    def wait(self, name: str, timeout: float) -> bool:
        key = self._key(name)
        deadline = time.monotonic() + timeout
        pause, longest = self.POLL
        while True:
            try:
                current = self.store.head(key)
            except OSError as exc:
                raise self._unavailable("look at a lease", exc) from None
            if current is None:
                with self._lock:
                    self._seen.pop(key, None)
                return True
            if self._expired(key, current):
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(pause, left))
            pause = min(pause * 2, longest)

    def confirm(self, handle: Any) -> bool:
        """Whether the lease is still this holder's: rewritten with ``If-Match`` on the version it wrote last."""
        key, token = handle
        with self._lock:
            lease = self._held.get(key)
            if lease is None or lease.token != token:
                return False
        return self._renew(key, token)

    def _renew(self, key: str, token: str) -> bool:
        """Rewrite a held lease on the version this holder wrote last: False when another caller took it over."""
        with self._renewing:
            with self._lock:
                lease = self._held.get(key)
                if lease is None or lease.token != token:
                    return False
                version, renewals = lease.version, lease.renewals
            failure = None
            try:
                renewed = self.store.replace(key, self._body(token, renewals + 1), version)
            except OSError as exc:  # the store stopped taking writes, or cannot be reached: nothing is sent
                failure = self._unavailable("renew a lease", exc)
            if failure is not None:  # raised outside the except: the store's frames may hold its options
                raise failure
            with self._lock:
                lease = self._held.get(key)
                if lease is None or lease.token != token:
                    return False  # released meanwhile
                if renewed is None:
                    del self._held[key]
                    log.warning("a lease in %s lapsed and was taken over by another caller", self.store.location)
                    return False
                lease.version, lease.renewals = renewed, renewals + 1
                return True

    def _keep(self) -> None:
        """Renew the held leases until none is held."""
        while True:
            time.sleep(self.TTL / 3)
            with self._lock:
                held = {key: lease.token for key, lease in self._held.items()}
                if not held:
                    self._keeper = None
                    return
            for key, token in held.items():
                try:
                    self._renew(key, token)
                except StoreframesError as exc:  # tried again at the next round; the lease may lapse meanwhile
                    log.warning("%s", exc)
