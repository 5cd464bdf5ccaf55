"""A Redis server as the place where a token's callers meet, on every machine that names it.

``Coordinator("redis://host:6379/0")`` (or ``rediss://``, ``unix://``; ``pip install
"storeframes[redis]"``). The token's window is two sorted sets
``storeframes:window:<token id>:flight`` and ``...:done`` that one Lua script prunes,
counts and extends, dated by the Redis server's clock (see
:mod:`storeframes.coord.window`); a lease is a key ``storeframes:lease:<space>:<name>``
set if absent, with an expiry its holder keeps renewing (:class:`RedisLeases`). Nothing
but hashes and slot times is written to Redis.
"""

from __future__ import annotations

import importlib.util
import logging
import math
import os
import secrets
import threading
import time
from typing import TYPE_CHECKING, Any

from ..cache.team import canonical_location
from ..errors import ConfigurationError, plural
from .base import Coordinator
from .leases import Leases, digest, leases_for, machine
from .state import ForkSafeLock, masked
from .window import KEEP, Shared, shared_window

if TYPE_CHECKING:
    from redis import Redis

    from ..cache import Cache

__all__ = ["INSTALL", "SCHEMES", "RedisCoordinator", "RedisLeases", "redis_installed"]

log = logging.getLogger("storeframes")

SCHEMES = ("redis", "rediss", "unix")
"""The URL schemes of a Redis server."""
INSTALL = 'pip install "storeframes[redis]"'

_CLIENTS: dict[tuple[int, str], Redis] = {}
_CLIENTS_LOCK = ForkSafeLock()


def redis_installed() -> bool:
    """Whether redis-py can be imported (without importing it)."""
    return importlib.util.find_spec("redis") is not None


# Times are whole milliseconds of the Redis server's clock (TIME); a completion is rounded up.
_EXTEND = """
local function extend(key, ttl)
  if redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
end
"""
_TAKE = (
    _EXTEND
    + """
if redis.replicate_commands then pcall(redis.replicate_commands) end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local limit, window, hold, keep = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
-- the clock stepped back (another server took over): drop what is dated beyond reach
redis.call('ZREMRANGEBYSCORE', KEYS[2], '(' .. (now + window), '+inf')
for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. (now + hold + window), '+inf')) do
  redis.call('ZADD', KEYS[1], now + hold, member)
end
-- a slot past its deadline completed then
local lapsed = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES')
for i = 1, #lapsed, 2 do
  redis.call('ZADD', KEYS[2], lapsed[i + 1], lapsed[i])
end
if #lapsed > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now) end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - keep)
local flying = redis.call('ZCARD', KEYS[1])
local recent = redis.call('ZCOUNT', KEYS[2], '(' .. (now - window), '+inf')
local k = flying + recent - limit + 1
local wait = 0
if k <= 0 then
  redis.call('ZADD', KEYS[1], now + hold, ARGV[5])
elseif k <= recent then
  local nth = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. (now - window), '+inf', 'WITHSCORES', 'LIMIT', k - 1, 1)
  wait = tonumber(nth[2]) + window - now
else
  wait = window
end
extend(KEYS[1], hold + keep)
extend(KEYS[2], hold + keep)
if k <= 0 then return {1, 0} end
return {0, wait}
"""
)
_GIVE = (
    _EXTEND
    + """
if redis.replicate_commands then pcall(redis.replicate_commands) end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.ceil(tonumber(clock[2]) / 1000)
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], now, ARGV[1])
extend(KEYS[2], tonumber(ARGV[2]))
return now
"""
)


def _ms(seconds: float) -> int:
    return max(math.ceil(seconds * 1000), 1)


class _RedisSlots:
    """The record of one token's slots in Redis: two sorted sets, one script call to take and one to give."""

    def __init__(self, coordinator: Coordinator, tid: str):
        self.where = coordinator.describe()
        self._coordinator = coordinator
        prefix = f"storeframes:window:{tid}:"
        self.keys = [prefix + "flight", prefix + "done"]
        self._scripts: tuple[Any, Any] | None = None
        self._keep = KEEP

    @property
    def place(self) -> str:
        return self.where

    def _script(self, which: int) -> Any:
        if self._scripts is None:
            redis = self._coordinator.redis()
            self._scripts = (redis.register_script(_TAKE), redis.register_script(_GIVE))
        return self._scripts[which]

    def take(self, limit: int, window: float, hold: float) -> tuple[Any, float]:
        member = secrets.token_hex(8)
        self._keep = max(self._keep, window)
        admitted, wait = self._script(0)(keys=self.keys, args=[limit, _ms(window), _ms(hold), _ms(self._keep), member])
        return (member, 0.0) if admitted else (None, int(wait) / 1000)

    def give(self, handle: Any) -> None:
        self._script(1)(keys=self.keys, args=[handle, _ms(self._keep)])


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
        self._prefix = f"storeframes:lease:{digest(space)}:"
        self._release = redis.register_script(_RELEASE)
        self._renew = redis.register_script(_RENEW)
        self._held: dict[str, str] = {}
        self._lock = threading.Lock()
        self._keeper: threading.Thread | None = None

    def __repr__(self) -> str:
        return "RedisLeases()"

    def _key(self, name: str) -> str:
        return self._prefix + digest(name)

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


class RedisCoordinator(Coordinator, named_by_url=True):
    """A Redis server: the token's window and the leases in it, for every machine that names it.

    Made by ``Coordinator(url)``; :func:`~storeframes.coord.coordinator_for` checks the URL first.
    """

    __slots__ = ()

    def __init__(self, url: str):
        if not isinstance(url, str):
            raise TypeError(f"a Redis coordinator needs a redis:// URL, got {url!r}")
        super().__init__(url)

    @property
    def url(self) -> str:
        """The Redis URL."""
        assert self._url is not None
        return self._url

    def describe(self) -> str:
        return masked(self.url)

    def redis(self) -> Redis:
        """The process's one Redis client for :attr:`url` (made on first use; thread-safe)."""
        key = (os.getpid(), self.url)  # a forked child makes its own connections
        with _CLIENTS_LOCK:
            client = _CLIENTS.get(key)
            if client is None:
                try:
                    import redis
                except ImportError:
                    raise ConfigurationError(
                        f"the Redis coordinator {self.describe()} needs redis-py: {INSTALL}"
                    ) from None
                # the URL's own parameters (?socket_timeout=...) win over these defaults
                client = redis.Redis.from_url(self.url, socket_connect_timeout=10.0, socket_timeout=30.0)
                _CLIENTS[key] = client
            return client

    def window(self, tid: str) -> Shared:
        if not redis_installed():
            raise ConfigurationError(f"the Redis coordinator {self.describe()} needs redis-py: {INSTALL}")
        return shared_window(f"redis:{self.url}", tid, lambda: _RedisSlots(self, tid))

    def folder_leases(self, folder: str) -> Leases:
        # a folder belongs to its machine: the same path on another machine is another folder
        return self._leases(f"folder:{machine()}:{folder}")

    def store_leases(self, cache: Cache, *, objects: bool) -> Leases:
        # a bucket: one name whatever its spelling (s3a://, a trailing slash), as every machine names it
        return self._leases(f"store:{canonical_location(cache.location)}")

    def _leases(self, space: str) -> Leases:
        return leases_for(f"{space}|{self.url}", lambda: RedisLeases(self.redis(), space))
