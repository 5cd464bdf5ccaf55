"""One sliding rate window per token, shared by every caller of that token.

The service allows 60 requests in any 10 s *per token*: two clients in a process, or
three processes with one token, must share one window or together they get 429s.
:func:`shared_limiter` returns a :class:`SharedLimiter` over the token's one record of
slots, wherever its callers are:

- **in the process**, every limiter of one token (and coordinator) shares one object of
  the process registry; its threads queue there, so one of them at a time asks the
  record below;
- **on this machine** (the default :class:`~storeframes.coordination.Coordinator`), the
  record is a table of a SQLite file in :func:`~storeframes.coordination.state_dir`
  (``window.sqlite3``, rows filed under :func:`~storeframes.coordination.token_id`).
  An in-flight row carries its holder's pid and a deadline; a slot whose holder is gone
  (a SIGKILLed process) counts as completed when that is noticed, and one that outlived
  its deadline as completed at the deadline, as its request may have reached the service;
- **across machines** (a Redis coordinator), the record is two sorted sets
  ``storeframes:window:<token id>:flight`` (scored by deadline) and ``...:done`` (scored
  by completion), which one Lua script prunes, counts and extends, dated by the Redis
  server's ``TIME`` so machines with skewed clocks agree. Idle keys expire.

Slots are dated by **completion**: a slot is held from :meth:`SharedLimiter.acquire`
until :meth:`SharedLimiter.release` and dated by the release; in-flight slots count
against the limit. A caller is admitted when fewer than *its* ``limit`` slots are in
flight or completed within *its* ``window`` of the shared record (two clients of one
token may be set differently). When the record is full the caller sleeps until the
completion it needs leaves the window. When the slots it needs are still in flight, it
sleeps a whole window: any of them completes (or is counted completed: at its deadline,
or when its holder is found gone) at the earliest now, and then stays in the window that
long, so nothing is free sooner and nothing is missed by not looking sooner. Nothing
spins.

Why this never lets more than ``limit`` requests arrive in any window, whatever the
latency on either way. The service counts a request when it arrives, which is after we
send it (so after its admission ``s``) and before its answer is complete (so before its
release ``c``): ``s <= a <= c``. Suppose some window ``(t - window, t]`` held ``limit +
1`` arrivals, and let ``m`` be the one of them admitted last, at ``s_m <= a_m <= t``.
Each of the other ``limit`` was admitted before ``s_m`` and arrived after ``t - window
>= s_m - window``, so it completed after ``s_m - window`` (or had not completed): at
``s_m`` every one of them was in flight or completed within the window, the record held
``limit`` slots, and ``m`` was not admitted. A slot counted as completed before its
release is no exception: one that outlived its deadline (``hold``, longer than an attempt
can last) had its answer by then, and one whose holder died had its connection closed
with it; a release that still comes dates it again. Only the order of events on one
clock matters, so requests slow on the way in, fast ones overtaking them, random latency
and bursts of slow answers change nothing. A process's monotonic clock
dates the process window, the machine's wall clock the machine record (one clock for
every process of the machine), the Redis server's clock the Redis record.

Why completion, and not the send plus a margin learned from past latencies: no rule that
admits sooner is safe when an arrival can be anywhere between send and completion. Were
a request admitted at ``s`` while ``limit`` others were in flight or completed after ``s -
window``, each of those could have arrived within ``(s - window, s]`` (a completed one
just before its completion, one in flight at any moment up to ``s``) and the new one at
``s`` itself: ``limit + 1`` arrivals within one window. Completion dating
costs one round trip per window (the next ``limit`` go a window after the answers, not
after the arrivals): about 3 % of the time at the service's ratio of latency to window.

Why not a maintained limiter library: ``limits`` (its moving window) and
``pyrate-limiter`` keep a log of timestamps taken *when a request is admitted*
(``hit``/``try_acquire`` adds "now" to the log), with no notion of a request in flight
and no way to re-date an entry when it completes. The service counts *arrivals*, which
happen after the admission by the network latency; dating by admission lets a slow
request arrive inside the next window and draw a 429. Completion dating needs the
in-flight set and a release, which is what this module adds, in a hundred lines a backend.

Costs, measured on a 2-core Linux machine (acquire and release of one slot, never
waiting): a few microseconds in the process; 0.12-0.18 ms on the machine's SQLite file
(one write transaction to acquire, one statement to release; 0.22-0.28 ms a slot with 8
threads); 0.15-0.35 ms against a Redis on loopback (one script call each way). The
service allows six requests a second, so this is noise beside a request.
"""

from __future__ import annotations

import bisect
import contextlib
import logging
import math
import os
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from .coordination import Coordinator, ForkSafeLock, private_folder, redis_installed, state_path, token_id
from .errors import ConfigurationError, StoreframesError, warn

__all__ = ["STATE_FILE", "Limiter", "SharedLimiter", "shared_limiter"]

log = logging.getLogger("storeframes")

STATE_FILE = "window.sqlite3"
"""The machine's record of slots, in :func:`~storeframes.coordination.state_dir`."""

KEEP = 600.0
"""Seconds a completed slot is kept (or the window, when longer): a limiter with a longer window than this
sharing a token with a shorter one may see fewer completions than there were."""

BUSY_TIMEOUT = 60.0
"""Seconds a process waits for another's write to the SQLite record before giving up."""


class Limiter(Protocol):
    """What the request path needs of a rate limiter (:class:`SharedLimiter`, :class:`~storeframes.SlidingWindowLimiter`)."""

    @property
    def limit(self) -> int: ...

    @property
    def window(self) -> float: ...

    @property
    def waited(self) -> float: ...

    def acquire(self) -> None: ...

    def release(self) -> None: ...

    def slot(self) -> AbstractContextManager[None]: ...


def _check(limit: Any, window: Any, hold: Any) -> None:
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ValueError(f"rate limit must be a whole number of requests >= 1, got {limit!r}")
    if isinstance(window, bool) or not isinstance(window, (int, float)) or not window > 0 or math.isinf(window):
        raise ValueError(f"rate window must be a positive number of seconds, got {window!r}")
    if isinstance(hold, bool) or not isinstance(hold, (int, float)) or not hold > 0 or math.isinf(hold):
        raise ValueError(f"hold must be a positive number of seconds, got {hold!r}")


def _delay(
    flying: int, recent: int, nth: Callable[[int], float], limit: int, window: float, now: float
) -> float | None:
    """None when a slot is free; else the seconds to sleep before asking again.

    ``recent`` completions lie within ``window`` of ``now``; ``nth(k)`` is the ``k``-th
    oldest of them (from 1). Freeing a slot takes the ``k`` oldest out of the window; if
    more than those are needed, in-flight slots must complete first, and each then stays
    a whole window: nothing is free before ``now + window`` (a slot counted completed
    because its holder is gone, or at its deadline, is dated ``now`` or later too).
    """
    k = flying + recent - limit + 1
    if k <= 0:
        return None
    if k <= recent:
        return max(nth(k) + window - now, 0.0005)
    return window


def _from(times: list[float], first: int) -> Callable[[int], float]:
    """The ``k``-th (from 1) of ``times`` from index ``first`` on."""
    return lambda k: times[first + k - 1]


class _Shared(Protocol):
    where: str

    def acquire(self, limit: int, window: float, hold: float) -> tuple[Any, float]:
        """Block until admitted; (a handle to :meth:`release`, seconds waited)."""
        ...

    def release(self, handle: Any) -> None: ...


class _ProcessWindow:
    """The record of one token in this process only: completions in memory, threads wait on a Condition."""

    where = "process"

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._done: list[float] = []  # completion times (monotonic), oldest first
        self._flying = 0
        self._next = 0
        self._keep = KEEP

    def acquire(self, limit: int, window: float, hold: float) -> tuple[Any, float]:
        start = time.monotonic()
        with self._cond:
            self._keep = max(self._keep, window)
            while True:
                now = time.monotonic()
                done = self._done
                old = bisect.bisect_right(done, now - self._keep)
                if old:
                    del done[:old]
                first = bisect.bisect_right(done, now - window)
                delay = _delay(self._flying, len(done) - first, _from(done, first), limit, window, now)
                if delay is None:
                    self._flying += 1
                    self._next += 1
                    return self._next, now - start
                self._cond.wait(delay)

    def release(self, handle: Any) -> None:
        with self._cond:
            self._flying -= 1
            self._done.append(time.monotonic())


class _OwnWindow(_ProcessWindow):
    """The window of one limiter, for a service only its caller reaches."""

    where = "own window"


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists (on Windows, where signal 0 would end it, assume it does)."""
    if os.name == "nt":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: another user's process
        return True
    return True


_SCHEMA = """
CREATE TABLE IF NOT EXISTS slots (
    id INTEGER PRIMARY KEY,  -- random
    token TEXT NOT NULL,     -- storeframes.coordination.token_id: a hash, never the token
    pid INTEGER,             -- the holder, while in flight
    deadline REAL,           -- in flight: time.time() when taken + hold
    hold REAL,
    done REAL                -- completion time (time.time()), NULL while in flight
);
CREATE INDEX IF NOT EXISTS slots_by_token ON slots (token, done);
"""


class _Unavailable(Exception):
    """The machine's record cannot be opened (a read-only or missing state folder)."""


class _SqliteSlots:
    """The machine's record of one token's slots: rows of a SQLite table, one write transaction a slot."""

    where = "machine"

    def __init__(self, path: Path, tid: str):
        self.path = path
        self.tid = tid
        self._connection: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _open(self) -> sqlite3.Connection:
        if self._connection is None:
            try:
                self._connection = self._connect()
            except (OSError, sqlite3.Error) as exc:
                raise _Unavailable(exc) from exc
        return self._connection

    def _connect(self) -> sqlite3.Connection:
        private_folder(self.path.parent)
        os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, isolation_level=None, check_same_thread=False)
        try:
            db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
            # writers do not block readers and a commit needs no fsync; if another process is switching the
            # journal right now, the rollback journal works too
            with contextlib.suppress(sqlite3.OperationalError):
                db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute("BEGIN IMMEDIATE")
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute("COMMIT")
        except BaseException:
            db.close()
            raise
        return db

    def take(self, limit: int, window: float, hold: float) -> tuple[Any, float]:
        with self._lock:  # one connection: its transaction must not take in another thread's statements
            return self._take(self._open(), limit, window, hold)

    def _take(self, db: sqlite3.Connection, limit: int, window: float, hold: float) -> tuple[Any, float]:
        tid, me = self.tid, os.getpid()
        db.execute("BEGIN IMMEDIATE")
        try:
            now = time.time()
            # the clock stepped back: completions dated beyond a window ahead are dropped, deadlines brought back
            db.execute("DELETE FROM slots WHERE token = ? AND done > ?", (tid, now + window))
            db.execute(
                "UPDATE slots SET deadline = ? + hold WHERE token = ? AND done IS NULL AND deadline > ? + hold + ?",
                (now, tid, now, window),
            )
            # a slot past its deadline completed then; one whose holder is gone completed now (it may have arrived)
            db.execute(
                "UPDATE slots SET done = deadline, pid = NULL WHERE token = ? AND done IS NULL AND deadline <= ?",
                (tid, now),
            )
            holders = db.execute(
                "SELECT DISTINCT pid FROM slots WHERE token = ? AND done IS NULL AND pid != ?", (tid, me)
            ).fetchall()
            gone = [(now, tid, pid) for (pid,) in holders if not _alive(pid)]
            if gone:
                db.executemany(
                    "UPDATE slots SET done = ?, pid = NULL WHERE token = ? AND done IS NULL AND pid = ?", gone
                )
            db.execute("DELETE FROM slots WHERE token = ? AND done <= ?", (tid, now - max(window, KEEP)))
            (flying,) = db.execute("SELECT COUNT(*) FROM slots WHERE token = ? AND done IS NULL", (tid,)).fetchone()
            (recent,) = db.execute(
                "SELECT COUNT(*) FROM slots WHERE token = ? AND done > ?", (tid, now - window)
            ).fetchone()

            def nth(k: int) -> float:
                row = db.execute(
                    "SELECT done FROM slots WHERE token = ? AND done > ? ORDER BY done LIMIT 1 OFFSET ?",
                    (tid, now - window, k - 1),
                ).fetchone()
                return float(row[0])

            delay = _delay(flying, recent, nth, limit, window, now)
            handle = None
            if delay is None:
                handle = secrets.randbits(62)
                db.execute(
                    "INSERT INTO slots (id, token, pid, deadline, hold, done) VALUES (?, ?, ?, ?, ?, NULL)",
                    (handle, tid, me, now + hold, hold),
                )
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        return handle, delay or 0.0

    def give(self, handle: Any) -> None:
        # dated now, even if it was counted complete before (its holder looked gone, or it outlived its deadline)
        done = time.time()
        with self._lock:
            self._open().execute(
                "INSERT INTO slots (id, token, pid, deadline, hold, done) VALUES (?, ?, NULL, NULL, NULL, ?) "
                "ON CONFLICT (id) DO UPDATE SET done = excluded.done, pid = NULL, deadline = NULL",
                (handle, self.tid, done),
            )


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


class _Slots(Protocol):
    where: str

    def take(self, limit: int, window: float, hold: float) -> tuple[Any, float]: ...

    def give(self, handle: Any) -> None: ...


class _RemoteWindow:
    """The process's layer in front of a record other processes share.

    Callers of one ``(limit, window)`` pass a gate one at a time, so a single thread of
    the process asks the record and sleeps until it may ask again; the others wait at the
    gate. A machine record that cannot be opened (a read-only state folder) falls back,
    with a warning, to the process's own window.
    """

    def __init__(self, slots: _Slots):
        self.slots = slots
        self.where = slots.where
        self._lock = threading.Lock()
        self._gates: dict[tuple[int, float], threading.Lock] = {}
        self._fallback: _ProcessWindow | None = None

    def _gate(self, limit: int, window: float) -> threading.Lock:
        with self._lock:
            return self._gates.setdefault((limit, window), threading.Lock())

    def acquire(self, limit: int, window: float, hold: float) -> tuple[Any, float]:
        fallback = self._fallback
        if fallback is not None:
            handle, waited = fallback.acquire(limit, window, hold)
            return (fallback, handle), waited
        start = time.monotonic()
        with self._gate(limit, window):
            while True:
                try:
                    handle, delay = self.slots.take(limit, window, hold)
                except _Unavailable as exc:
                    fallback = self._fall_back(exc.__cause__ or exc)
                    handle, waited = fallback.acquire(limit, window, hold)
                    return (fallback, handle), time.monotonic() - start
                except StoreframesError:
                    raise
                except Exception as exc:  # sqlite3's or redis-py's errors
                    raise StoreframesError(
                        f"the rate window on {self.where} failed: {type(exc).__name__}: {exc}"
                    ) from exc
                if handle is not None:
                    return (self.slots, handle), time.monotonic() - start
                time.sleep(delay)

    def _fall_back(self, exc: BaseException) -> _ProcessWindow:
        with self._lock:
            if self._fallback is None:
                place = getattr(self.slots, "path", self.where)
                warn(
                    f"cannot keep the rate window in {place} ({exc}); it is shared by this process's clients only",
                    RuntimeWarning,
                )
                self._fallback = _ProcessWindow()
                self.where = "process"
            return self._fallback

    def release(self, handle: Any) -> None:
        where, inner = handle
        if isinstance(where, _ProcessWindow):
            where.release(inner)
            return
        try:
            self.slots.give(inner)
        except Exception:  # the slot stays in flight until its deadline, and counts as completed then
            log.warning("could not release a slot of the rate window on %s", self.where, exc_info=True)


_WINDOWS: dict[tuple[int, str, str], _Shared] = {}
_WINDOWS_LOCK = ForkSafeLock()


def _window_of(coordinator: Coordinator, tid: str) -> _Shared:
    """The process's one shared window of a token at a coordinator."""
    if coordinator.url is None:
        path = Path(os.path.abspath(state_path() / STATE_FILE))
        place = f"machine:{path}"
    else:
        if not redis_installed():
            raise ConfigurationError(
                f'the Redis coordinator {coordinator.describe()} needs redis-py: pip install "storeframes[redis]"'
            )
        place = f"redis:{coordinator.url}"
    key = (os.getpid(), place, tid)  # a forked child gets its own connections
    with _WINDOWS_LOCK:
        shared = _WINDOWS.get(key)
        if shared is None:
            slots: _Slots = _SqliteSlots(path, tid) if coordinator.url is None else _RedisSlots(coordinator, tid)
            shared = _WINDOWS[key] = _RemoteWindow(slots)
        return shared


class SharedLimiter:
    """At most ``limit`` requests in any ``window`` seconds, counted over every caller of the token.

    Made by :func:`shared_limiter`. :meth:`slot` holds a slot for one request;
    :meth:`acquire` and :meth:`release` do the same in two steps (a thread releases the
    slot it acquired last). ``waited`` is the total seconds callers spent waiting.
    """

    def __init__(
        self, shared: _Shared, limit: int, window: float, *, hold: float, locate: Callable[[], _Shared] | None = None
    ):
        _check(limit, window, hold)
        self._shared = shared
        self._locate = locate  # finds the process's window again in a forked child
        self._pid = os.getpid()
        self.limit = limit
        self.window = float(window)
        self.hold = float(hold)
        self.waited = 0.0
        self._lock = threading.Lock()
        self._local = threading.local()

    @property
    def where(self) -> str:
        """Who shares the window: ``machine``, ``process``, the Redis URL (password masked) or ``own window``."""
        return self._shared.where

    def __repr__(self) -> str:
        shared = "" if isinstance(self._shared, _OwnWindow) else "shared by token, "
        return f"Limiter(limit={self.limit}, window={self.window}, {shared}{self.where})"

    def _window(self) -> _Shared:
        if self._pid != os.getpid() and self._locate is not None:  # a forked child: its own connections
            self._shared, self._pid = self._locate(), os.getpid()
        return self._shared

    def _take(self) -> Any:
        handle, waited = self._window().acquire(self.limit, self.window, self.hold)
        with self._lock:
            self.waited += waited
        return handle

    def acquire(self) -> None:
        """Block until a request may be sent, and hold its slot (this thread's, until :meth:`release`)."""
        handle = self._take()
        held = self._local.__dict__.setdefault("held", [])
        held.append(handle)

    def release(self) -> None:
        """Mark the slot this thread acquired last as complete, now."""
        held = self._local.__dict__.get("held")
        if not held:
            raise RuntimeError("release() without a slot acquired by this thread")
        self._window().release(held.pop())

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Hold a slot for the duration of one request."""
        handle = self._take()
        try:
            yield
        finally:
            self._shared.release(handle)  # the window it was taken from


def shared_limiter(
    api_key: str,
    base_url: str | None,
    rate_limit: tuple[int, float] = (60, 10.0),
    *,
    coordinator: Coordinator,
    hold: float,
) -> SharedLimiter:
    """The limiter of ``api_key`` at ``base_url``: one window shared by every caller the coordinator reaches.

    ``hold`` is the longest one attempt may hold a slot (the HTTP timeout and a margin):
    a slot held longer, or by a process that died, counts as completed then. Raises
    ValueError for a malformed ``rate_limit`` or ``hold``. A base URL on a host under
    ``.invalid`` (the in-process sandbox's) reaches nobody else: its limiter has a window
    of its own.

    >>> from storeframes.coordination import Coordinator
    >>> shared_limiter("token", "https://example.test/api", coordinator=Coordinator(), hold=35.0)
    Limiter(limit=60, window=10.0, shared by token, machine)
    """
    limit, window = rate_limit
    _check(limit, window, hold)
    if _unreachable(base_url):
        return SharedLimiter(_OwnWindow(), limit, window, hold=hold, locate=_OwnWindow)
    tid = token_id(api_key, base_url)
    return SharedLimiter(
        _window_of(coordinator, tid), limit, window, hold=hold, locate=lambda: _window_of(coordinator, tid)
    )


def _unreachable(base_url: str | None) -> bool:
    """Whether nobody else can reach ``base_url``: a host under ``.invalid`` (RFC 2606), such as the
    in-process sandbox's, is answered by the caller's own transport, so the window is the caller's own."""
    try:
        host = (urlsplit(base_url).hostname or "") if base_url else ""
    except ValueError:  # the request path refuses it, with its own message
        return False
    return host == "invalid" or host.endswith(".invalid")
