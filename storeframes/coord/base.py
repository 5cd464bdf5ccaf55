"""The coordinator: a strategy per backend for where the callers of one token meet.

A :class:`Coordinator` gives the two things those callers share: the token's rate window
(:meth:`Coordinator.limiter`) and the leases of a cache (:meth:`Coordinator.leases`).
Each backend is a subclass in a module of its own: this machine
(:mod:`storeframes.coord.machine`) and a Redis server (:mod:`storeframes.coord.redis`).
``Coordinator()`` is this machine's and ``Coordinator(url)`` a Redis server's, the way
``pathlib.Path(...)`` gives the path class of the system; which one a client uses is
decided by :func:`storeframes.coord.coordinator_for`.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar

from ..errors import ConfigurationError, shown_when_half_built
from .leases import Leases, leases_for
from .state import token_id
from .team import agree
from .window import OwnWindow, Shared, SharedLimiter, check_rate, unreachable

if TYPE_CHECKING:
    from redis import Redis

    from ..cache import Cache

__all__ = ["Coordinator", "shared_limiter"]


class Coordinator(ABC):
    """Where the callers of one token meet: ``url=None`` for this machine, else a Redis URL.

    >>> Coordinator()
    Coordinator(machine)
    >>> Coordinator("redis://:secret@cache.internal:6379/0")
    Coordinator('redis://:***@cache.internal:6379/0')
    """

    __slots__ = ("_url",)
    _backends: ClassVar[dict[bool, type[Coordinator]]] = {}
    """The backend of a URL (True) and of this machine (False), as the backends' modules declare them."""

    def __init_subclass__(cls, *, named_by_url: bool, **options: Any) -> None:
        super().__init_subclass__(**options)
        Coordinator._backends[named_by_url] = cls

    def __new__(cls, url: str | None = None) -> Coordinator:
        if cls is Coordinator:
            cls = Coordinator._backends[url is not None]
        return super().__new__(cls)

    def __init__(self, url: str | None = None):
        self._url = url

    @property
    def url(self) -> str | None:
        """The Redis URL, or None for this machine."""
        return self._url

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.url == self.url

    def __hash__(self) -> int:
        return hash((type(self), self.url))

    @shown_when_half_built
    def __repr__(self) -> str:
        return f"Coordinator({self.describe()})" if self.url is None else f"Coordinator({self.describe()!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return Coordinator, (self.url,)

    @abstractmethod
    def describe(self) -> str:
        """Who the coordinator reaches, for people: ``machine``, or the Redis URL with its password masked."""

    def redis(self) -> Redis:
        """The process's one Redis client of a Redis coordinator (the machine's has none)."""
        raise ConfigurationError(f"the {self.describe()} coordinator has no Redis server; pass a redis:// URL")

    # -- the token's window -------------------------------------------------------------------------------

    def limiter(self, api_key: str, base_url: str | None, rate_limit: tuple[int, float], hold: float) -> SharedLimiter:
        """The limiter of ``api_key`` at ``base_url``: one window shared by every caller the coordinator reaches.

        ``hold`` is the longest one attempt may hold a slot (the HTTP timeout and a margin):
        a slot held longer, or by a process that died, counts as completed then. Raises
        ValueError for a malformed ``rate_limit`` or ``hold``. A base URL on a host under
        ``.invalid`` (the in-process sandbox's) reaches nobody else: its limiter has a window
        of its own.

        >>> Coordinator().limiter("token", "https://example.test/api", (60, 10.0), 35.0)
        Limiter(limit=60, window=10.0, shared by token, machine)
        """
        tid = token_id(api_key, base_url)
        del api_key  # no local of a failure below shows the token
        limit, window = rate_limit
        check_rate(limit, window, hold)
        if unreachable(base_url):
            return SharedLimiter(OwnWindow(), limit, window, hold=hold, locate=OwnWindow)
        return SharedLimiter(self.window(tid), limit, window, hold=hold, locate=lambda: self.window(tid))

    @abstractmethod
    def window(self, tid: str) -> Shared:
        """The process's one window of the token named ``tid`` (:func:`~storeframes.coord.token_id`)."""

    # -- the leases of a cache ----------------------------------------------------------------------------

    def leases(self, cache: Cache | None, owner: object) -> Leases:
        """The process-wide leases of ``cache``: one table for every client of the process that uses it.

        The one place that reads which leases suit a cache (its store's ``Capabilities.leases``):
        without a cache, or with a store nothing outside the process sees, the leases are the
        process's flights only (``owner``'s, without a cache); a folder's and another
        store's are the backend's (:meth:`folder_leases`, :meth:`store_leases`), once this
        member agrees with the coordination its team recorded in the cache
        (:func:`~storeframes.coord.team.agree`: a
        :class:`~storeframes.CoordinationMismatchError` otherwise).
        """
        if cache is None:  # nothing to share with other processes: the threads of this client only
            return leases_for(f"client:{id(owner)}", lambda: None)
        capabilities = cache.storage.capabilities
        if capabilities.leases == "process":  # nothing outside the process sees the store
            return leases_for(f"store:{id(cache.storage)}", lambda: None)
        agree(self, cache)  # a member coordinating differently from its team is refused here, before it sends
        if capabilities.leases == "files" and capabilities.local_root is not None:
            return self.folder_leases(os.path.realpath(capabilities.local_root))
        return self.store_leases(cache, objects=capabilities.leases == "objects")

    @abstractmethod
    def folder_leases(self, folder: str) -> Leases:
        """The leases of a cache in ``folder`` (its real path) on this machine."""

    @abstractmethod
    def store_leases(self, cache: Cache, *, objects: bool) -> Leases:
        """The leases of a cache whose store other machines see (a bucket), named by its location;
        ``objects`` when the store can keep leases as its own objects."""


def shared_limiter(
    api_key: str,
    base_url: str | None,
    rate_limit: tuple[int, float] = (60, 10.0),
    *,
    coordinator: Coordinator,
    hold: float,
) -> SharedLimiter:
    """``coordinator.limiter(api_key, base_url, rate_limit, hold)``, by the name the window had before coordinators did.

    >>> shared_limiter("token", "https://example.test/api", coordinator=Coordinator(), hold=35.0)
    Limiter(limit=60, window=10.0, shared by token, machine)
    """
    return coordinator.limiter(api_key, base_url, rate_limit, hold)
