"""A Redis server as the place where a token's callers meet, on every machine that names it.

``Coordinator("redis://host:6379/0")`` (or ``rediss://``, ``unix://``; the ``redis`` extra,
``pip install ".[redis]"`` from a checkout). The token's window is two sorted sets
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
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from .._version import install_hint
from ..cache.coordination_record import canonical_location
from ..errors import ConfigurationError, CoordinationError, plural
from .base import Coordinator
from .leases import Leases, digest, leases_for, machine
from .state import ENV_COORDINATOR, ForkSafeLock, masked
from .window import KEEP, Shared, shared_window

if TYPE_CHECKING:
    from redis import Redis

    from ..cache import Cache

__all__ = ["SCHEMES", "RedisCoordinator", "RedisLeases", "redis_installed"]

log = logging.getLogger("storeframes")

SCHEMES = ("redis", "rediss", "unix")
"""The URL schemes of a Redis server."""

T = TypeVar("T")

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
# A key of ours that is not a sorted set (someone SET it by hand) is dropped: it is only our window. Its
# slots are lost then, as in a restart, so the record's epoch goes with it and the loss is noticed below.
_TAKE = (
    _EXTEND
    + """
if redis.replicate_commands then pcall(redis.replicate_commands) end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local limit, window, hold, keep = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
for i = 1, 2 do
  local kind = redis.call('TYPE', KEYS[i])['ok']
  if kind ~= 'zset' and kind ~= 'none' then redis.call('DEL', KEYS[i], KEYS[3]) end
end
if redis.call('TYPE', KEYS[3])['ok'] ~= 'string' then redis.call('DEL', KEYS[3]) end
if redis.call('TYPE', KEYS[4])['ok'] ~= 'string' then redis.call('DEL', KEYS[4]) end
-- the epoch names this record: a restarted, flushed or failed-over server has a new one
local epoch = redis.call('GET', KEYS[3])
if not epoch then
  epoch = ARGV[7]
  redis.call('SET', KEYS[3], epoch, 'PX', ARGV[8])
else
  redis.call('PEXPIRE', KEYS[3], ARGV[8])
end
if epoch ~= ARGV[6] and ARGV[6] ~= '' then
  -- the caller sent under an epoch the server no longer has: its recent slots are lost with it
  if #ARGV <= 8 then return {0, 0, epoch, 1} end
  local seeded = 0
  for i = 9, #ARGV, 3 do
    local age = tonumber(ARGV[i + 2])
    if ARGV[i + 1] == 'flight' then
      redis.call('ZADD', KEYS[1], now + age, ARGV[i])
    else
      redis.call('ZADD', KEYS[2], now - age, ARGV[i])
    end
    seeded = seeded + 1
  end
  -- who else sent in the last window is unknown: nobody new is admitted for one window
  if seeded > 0 then redis.call('SET', KEYS[4], now, 'NX', 'PX', window) end
end
local quarantine = redis.call('PTTL', KEYS[4])
if quarantine > 0 then return {0, quarantine, epoch, 0} end
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
if k <= 0 then return {1, 0, epoch, 0} end
return {0, wait, epoch, 0}
"""
)
_GIVE = (
    _EXTEND
    + """
if redis.replicate_commands then pcall(redis.replicate_commands) end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.ceil(tonumber(clock[2]) / 1000)
for i = 1, 2 do
  local kind = redis.call('TYPE', KEYS[i])['ok']
  if kind ~= 'zset' and kind ~= 'none' then redis.call('DEL', KEYS[i], KEYS[3]) end
end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], now, ARGV[1])
extend(KEYS[2], tonumber(ARGV[2]))
return now
"""
)

EPOCH_TTL = 86_400.0
"""Seconds the epoch of an idle window is kept: longer than any window, so that idle keys expiring is not a loss."""


def _ms(seconds: float) -> int:
    return max(math.ceil(seconds * 1000), 1)


class _RedisSlots:
    """The record of one token's slots in Redis: two sorted sets, one script call to take and one to give.

    **A record that is lost** (a restarted server without persistence, ``FLUSHALL``, a failover
    to a replica that had not caught up, a key overwritten by hand) would let a full window through
    again. So the record carries an *epoch*, a random id kept beside it, and every process remembers
    the epoch it sent under and its own slots of the last window (by its monotonic clock). A
    process that finds another epoch than its own, while it has slots within the window, knows the
    record was lost: it writes its own slots back (completions dated by their age on the server's
    clock, slots in flight with their deadline), and the record admits nobody new for one window,
    because who *else* sent in it is unknown. Each other process that sent in that window writes its
    own slots back when it next asks. The cost: a restart pauses the team for one window (10 s).
    What it cannot know: a member that sent before the loss and is silent until the window has
    passed needs no record; one that starts after the loss and asks before anyone who had sent does
    is admitted against what the record then holds (at worst one window's worth before the loss is
    noticed). With Redis persistence (AOF) or a replica, nothing is lost to begin with.
    """

    def __init__(self, coordinator: RedisCoordinator, tid: str):
        self.where = coordinator.describe()
        self._coordinator = coordinator
        prefix = f"storeframes:window:{tid}:"
        self.keys = [prefix + "flight", prefix + "done", prefix + "epoch", prefix + "lost"]
        self._scripts: tuple[Any, Any] | None = None
        self._keep = KEEP
        self._window = 0.0
        self._lock = threading.Lock()
        self._epoch = ""
        self._flying: dict[str, float] = {}  # member -> deadline (monotonic)
        self._done: dict[str, float] = {}  # member -> completion (monotonic), within the last window

    @property
    def place(self) -> str:
        return self.where

    def _script(self, which: int) -> Any:
        if self._scripts is None:
            redis = self._coordinator.redis()
            self._scripts = (redis.register_script(_TAKE), redis.register_script(_GIVE))
        return self._scripts[which]

    def _mine(self, window: float) -> list[Any]:
        """This process's slots of the last ``window``: (member, kind, milliseconds) triples, flattened."""
        now = time.monotonic()
        with self._lock:
            self._done = {m: t for m, t in self._done.items() if t > now - window}
            seeds: list[Any] = []
            for member, deadline in self._flying.items():
                seeds += [member, "flight", max(int((deadline - now) * 1000), 1)]
            for member, done in self._done.items():
                seeds += [member, "done", int((now - done) * 1000)]
            return seeds

    def take(self, limit: int, window: float, hold: float) -> tuple[Any, float]:
        member = secrets.token_hex(8)
        self._keep = max(self._keep, window)
        self._window = max(self._window, window)
        recent = bool(self._flying or self._done) and bool(self._mine(self._window))
        script = self._script(0)

        def run(epoch: str, seeds: list[Any]) -> list[Any]:
            args = [limit, _ms(window), _ms(hold), _ms(self._keep), member, epoch, secrets.token_hex(8)]
            args += [_ms(EPOCH_TTL), *seeds]
            return self._coordinator.call("take a slot of the rate window", lambda: script(keys=self.keys, args=args))

        # an epoch is compared only by a process with slots in the window: nothing of the others' is lost
        admitted, wait, epoch, lost = run(self._epoch if recent else "", [])
        if lost:  # the record was lost: write back what this process sent in the window
            seeds = self._mine(self._window)
            if seeds:
                log.warning(
                    "the rate window on Redis %s was lost (a restart or a flush): wrote back this process's %s; "
                    "nobody new is admitted for one window",
                    self.where,
                    plural(len(seeds) // 3, "recent slot"),
                )
            admitted, wait, epoch, lost = run(self._epoch if seeds else "", seeds)
        self._epoch = epoch.decode() if isinstance(epoch, bytes) else str(epoch)
        if not admitted:
            return None, max(int(wait), 1) / 1000
        with self._lock:
            self._flying[member] = time.monotonic() + hold
        return member, 0.0

    def give(self, handle: Any) -> None:
        with self._lock:
            self._flying.pop(handle, None)
            self._done[handle] = time.monotonic()
        script = self._script(1)
        self._coordinator.call(
            "release a slot of the rate window", lambda: script(keys=self.keys, args=[handle, _ms(self._keep)])
        )


_TAKE_LEASE = """
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind ~= 'string' and kind ~= 'none' then redis.call('DEL', KEYS[1]) end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
if redis.call('PTTL', KEYS[1]) == -1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""
_RELEASE = """
if redis.call('TYPE', KEYS[1])['ok'] == 'string' and redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0
"""
_RENEW = """
local renewed = 0
for i, key in ipairs(KEYS) do
  if redis.call('TYPE', key)['ok'] == 'string' and redis.call('get', key) == ARGV[i + 1] then
    redis.call('pexpire', key, ARGV[1])
    renewed = renewed + 1
  end
end
return renewed
"""


class RedisLeases:
    """Leases as Redis keys (``SET NX`` with an expiry), renewed by their holder while held.

    A lease is a key holding its holder's random token (its *fence*). A holder that was
    stopped (Ctrl-Z, a laptop asleep) past :attr:`TTL` loses the key to another caller;
    :meth:`confirm`, called right before each request is sent, compares the token in a
    script and renews the key when it is still the holder's, so a holder that lost its
    lease sends nothing. A key of ours that holds something else than a token is dropped,
    one without an expiry given one: it is only a lease.
    """

    TTL = 15.0
    """Seconds a lease outlives its holder when the holder dies; a live holder renews it every third of that."""

    def __init__(self, coordinator: RedisCoordinator, space: str):
        self._coordinator = coordinator
        self._prefix = f"storeframes:lease:{digest(space)}:"
        redis = coordinator.redis()
        self._take = redis.register_script(_TAKE_LEASE)
        self._release = redis.register_script(_RELEASE)
        self._renew = redis.register_script(_RENEW)
        self._exists = redis.exists
        self._held: dict[str, str] = {}
        self._lock = threading.Lock()
        self._keeper: threading.Thread | None = None

    def __repr__(self) -> str:
        return "RedisLeases()"

    def _key(self, name: str) -> str:
        return self._prefix + digest(name)

    def try_take(self, name: str) -> Any | None:
        key, token = self._key(name), secrets.token_hex(8)
        ttl = int(self.TTL * 1000)
        if not self._coordinator.call("take a lease", lambda: self._take(keys=[key], args=[token, ttl])):
            return None
        with self._lock:
            self._held[key] = token
            if self._keeper is None or not self._keeper.is_alive():
                self._keeper = threading.Thread(target=self._keep, name="storeframes-leases", daemon=True)
                self._keeper.start()
        return key, token

    def confirm(self, handle: Any) -> bool:
        """Whether the lease is still this holder's (its token in the key); renewed for a full TTL if so."""
        key, token = handle
        ttl = int(self.TTL * 1000)
        return bool(self._coordinator.call("confirm a lease", lambda: self._renew(keys=[key], args=[ttl, token])))

    def release(self, handle: Any) -> None:
        key, token = handle
        with self._lock:
            self._held.pop(key, None)
        self._coordinator.call("release a lease", lambda: self._release(keys=[key], args=[token]))

    def wait(self, name: str, timeout: float) -> bool:
        key = self._key(name)
        deadline = time.monotonic() + timeout
        while self._coordinator.call("wait for a lease", lambda: self._exists(key)):
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
            args: list[Any] = [int(self.TTL * 1000), *held.values()]
            try:
                self._coordinator.call("renew leases", partial(self._renew, keys=list(held), args=args))
            except CoordinationError as exc:  # tried again at the next round; the lease may lapse meanwhile
                log.warning("could not renew %s: %s", plural(len(held), "lease"), exc)


def _failure(exc: Exception, where: str, doing: str) -> str:
    """What a user is told of redis-py's ``exc`` (never its arguments, which may hold the password)."""
    import redis

    setting = f"${ENV_COORDINATOR} (or coordinator=)"
    head = f"the Redis coordinator {where} could not {doing}"
    if isinstance(exc, redis.AuthenticationError) or (
        isinstance(exc, redis.ResponseError) and str(exc).startswith(("NOAUTH", "WRONGPASS", "NOPERM"))
    ):
        return (
            f"{head}: it refused the password or user of the URL (rotated, or never set): put the current one in "
            f"{setting} as redis://:<password>@host:port/db"
        )
    if isinstance(exc, redis.TimeoutError):
        return f"{head}: it did not answer in time (overloaded, or a network between): check it answers, or {setting}"
    if isinstance(exc, redis.ConnectionError):
        return (
            f"{head}: cannot connect, or the connection was lost (is redis-server running there, or was it "
            f"restarted?): check the server, or {setting}; redis-py said {type(exc).__name__}: {_short(exc)}"
        )
    return f"{head}: {type(exc).__name__}: {_short(exc)}; check the server and {setting}"


def _short(exc: Exception) -> str:
    return str(exc).splitlines()[0][:200] if str(exc) else "no detail"


class RedisCoordinator(Coordinator, named_by_url=True):
    """A Redis server: the token's window and the leases in it, for every machine that names it.

    Made by ``Coordinator(url)``; :func:`~storeframes.coord.coordinator_for` checks the URL first.
    Every failure of the server (down, a wrong password, a connection lost mid-call) is a
    :class:`~storeframes.CoordinationError` naming the URL with its password masked; redis-py's
    own error, whose frames hold the password, is dropped from it.
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
        key = (os.getpid(), digest(self.url))  # a forked child makes its own connections
        with _CLIENTS_LOCK:
            client = _CLIENTS.get(key)
            if client is None:
                try:
                    import redis
                except ImportError:
                    raise ConfigurationError(
                        f"the Redis coordinator {self.describe()} needs redis-py: {install_hint('redis')}"
                    ) from None
                # the URL's own parameters (?socket_timeout=...) win over these defaults
                failure = None
                try:
                    made = redis.Redis.from_url(self.url, socket_connect_timeout=10.0, socket_timeout=30.0)
                except ValueError as exc:  # a URL redis-py cannot read
                    failure = f"the Redis coordinator {self.describe()} is not a URL redis-py reads: {_short(exc)}"
                if failure is not None:  # raised outside the except: redis-py's frames hold the URL
                    raise ConfigurationError(f"{failure}; set ${ENV_COORDINATOR} (or coordinator=)")
                client = _CLIENTS[key] = made
            return client

    def call(self, doing: str, function: Callable[[], T]) -> T:
        """``function()``, a call to Redis; its failure is a :class:`~storeframes.CoordinationError`
        without redis-py's error (whose frames hold the password) in its chain."""
        import redis

        try:
            return function()
        except redis.RedisError as exc:
            failure = _failure(exc, self.describe(), doing)
        raise CoordinationError(failure) from None

    def window(self, tid: str) -> Shared:
        if not redis_installed():
            raise ConfigurationError(f"the Redis coordinator {self.describe()} needs redis-py: {install_hint('redis')}")
        return shared_window(f"redis:{digest(self.url)}", tid, lambda: _RedisSlots(self, tid))

    def folder_leases(self, folder: str) -> Leases:
        # a folder belongs to its machine: the same path on another machine is another folder
        return self._leases(f"folder:{machine()}:{folder}")

    def store_leases(self, cache: Cache, *, objects: bool) -> Leases:
        # a bucket: one name whatever its spelling (s3a://, a trailing slash), as every machine names it
        return self._leases(f"store:{canonical_location(cache.location)}")

    def _leases(self, space: str) -> Leases:
        return leases_for(f"{space}|{digest(self.url)}", lambda: RedisLeases(self, space))
