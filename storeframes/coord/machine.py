"""This machine as the place where a token's callers meet: the SQLite window and the lock-file leases.

The default :class:`~storeframes.coord.Coordinator`. The token's window is a table of a
SQLite file in :func:`~storeframes.coord.state_dir` (``window.sqlite3``), which every
process of the user on this machine shares, whatever its cache; see
:mod:`storeframes.coord.window` for the rule it keeps. The leases of a cache follow what
its store declares (``Capabilities.leases``): lock files in a folder on this machine
(:class:`FileLeases`), objects of a bucket (:class:`~storeframes.coord.bucket.ObjectLeases`),
or, for a store that has neither, the process's own with a warning that recommends a
Redis coordinator.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..cache import CacheWarning
from ..errors import warn
from .base import Coordinator
from .bucket import ObjectLeases
from .leases import Leases, Remote, digest, leases_for, machine
from .state import private_folder, state_path
from .window import KEEP, Shared, Unavailable, shared_window, slot_delay

if TYPE_CHECKING:
    import filelock

    from ..cache import Cache

__all__ = ["BUSY_TIMEOUT", "STATE_FILE", "FileLeases", "MachineCoordinator"]

log = logging.getLogger("storeframes")

MACHINE = "machine"

STATE_FILE = "window.sqlite3"
"""The machine's record of slots, in :func:`~storeframes.coord.state_dir`."""

BUSY_TIMEOUT = 60.0
"""Seconds a process waits for another's write to the SQLite record before giving up."""


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
    token TEXT NOT NULL,     -- storeframes.coord.token_id: a hash, never the token
    pid INTEGER,             -- the holder, while in flight
    deadline REAL,           -- in flight: time.time() when taken + hold
    hold REAL,
    done REAL                -- completion time (time.time()), NULL while in flight
);
CREATE INDEX IF NOT EXISTS slots_by_token ON slots (token, done);
"""


class _SqliteSlots:
    """The machine's record of one token's slots: rows of a SQLite table, one write transaction a slot."""

    where = "machine"

    def __init__(self, path: Path, tid: str):
        self.path = path
        self.tid = tid
        self._connection: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    @property
    def place(self) -> str:
        return str(self.path)

    def _open(self) -> sqlite3.Connection:
        if self._connection is None:
            try:
                self._connection = self._connect()
            except (OSError, sqlite3.Error) as exc:
                raise Unavailable(exc) from exc
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

            delay = slot_delay(flying, recent, nth, limit, window, now)
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


def _timeout() -> type[BaseException]:
    import filelock

    return filelock.Timeout


@dataclass
class _FileHold:
    """A stripe this process holds: its lock file (None when taken over from a stopped holder) and generation."""

    lock: filelock.BaseFileLock | None
    generation: int
    token: str
    count: int = 1
    renewals: int = 0
    lost: bool = False


class FileLeases:
    """Leases as lock files in a folder, one of :attr:`STRIPES` files per name's hash, with a heartbeat.

    Two names may share a file: between processes one then waits for the other's
    request, which costs time, never credits; within the process (where the flights keep
    names apart) a file already held is shared. The files stay (empty) and are reused.

    **A holder that dies** loses its lock: the operating system drops it. **A holder that
    is stopped** (Ctrl-Z, a laptop asleep) keeps it, so each holding also has a
    *generation*: a small file ``<stripe>/<n>`` beside the lock file, made exclusively
    (one winner of ``n``) and holding the holder's pid, host, a random token, whether it
    holds the lock file, and its last heartbeat on the machine's monotonic clock (its
    wall clock too, for people). A keeper thread rewrites it every :attr:`TTL`/3, and so
    does :meth:`confirm`, right before each request; a stopped process's threads stop
    too, so its heartbeat ages. A waiter that finds the lock held but the heartbeat older
    than :attr:`TTL` (or its process gone) takes the lease over by making generation
    ``n + 1``, and fetches without the lock file; until it releases, whoever gets the
    lock file finds that generation alive and waits for it. The resumed holder's
    :meth:`confirm` writes its heartbeat, then finds a newer generation, and answers
    False: it sends nothing. (A taker that, after making ``n + 1``, sees generation
    ``n``'s heartbeat moved steps back, so the two never both send.)

    The monotonic clock is the machine's (since boot, on Linux, macOS and Windows alike),
    and it does not run while the machine sleeps, so a laptop waking up does not make
    every holder look stopped. A heartbeat written on another host (a folder shared over
    a network) is not compared with this machine's clock: it is stale once it stayed the
    same for :attr:`TTL` seconds of this one's.
    """

    STRIPES = 4096
    TTL = 15.0
    """Seconds without a heartbeat after which a holder is taken to be stopped and its lease taken over."""
    NOTE_AFTER = 5.0
    """Seconds of waiting for another process's lease before saying which process holds it."""
    POLL = (0.01, 0.1)
    """The first and the longest pause between two looks while waiting (seconds)."""

    def __init__(self, folder: str | os.PathLike[str]):
        self.folder = Path(folder)
        self._lock = threading.Lock()
        self._held: dict[int, _FileHold] = {}
        self._seen: dict[int, tuple[Any, float]] = {}  # stripe -> (another host's record, first seen)
        self._keeper: threading.Thread | None = None

    def __repr__(self) -> str:
        return f"FileLeases({str(self.folder)!r})"

    def _stripe(self, name: str) -> int:
        return int(digest(name)[:8], 16) % self.STRIPES

    def _file(self, stripe: int) -> filelock.BaseFileLock:
        import filelock  # when first needed: importing storeframes stays quick

        self.folder.mkdir(parents=True, exist_ok=True)
        return filelock.FileLock(self.folder / f"{stripe:03x}.lock", thread_local=False)

    def _generations(self, stripe: int) -> Path:
        return self.folder / f"{stripe:03x}"

    def _newest(self, stripe: int) -> int:
        try:
            return max((int(n) for n in os.listdir(self._generations(stripe)) if n.isdigit()), default=0)
        except FileNotFoundError:
            return 0

    def _current(self, stripe: int) -> tuple[int, dict[str, Any] | None]:
        """The newest generation of a stripe and what its holder wrote (None: none, or not readable)."""
        while True:
            generation = self._newest(stripe)
            if not generation:
                return 0, None
            try:
                record = json.loads((self._generations(stripe) / str(generation)).read_bytes())
            except FileNotFoundError:  # pruned meanwhile: a newer one exists
                continue
            except ValueError:
                return generation, None
            return generation, record if isinstance(record, dict) else None

    def _record(self, hold: _FileHold, state: str) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "host": machine(),
            "holder": hold.token,
            "lock_file": hold.lock is not None,
            "state": state,
            "beat": time.monotonic(),
            "wall": round(time.time(), 3),
            "renewal": hold.renewals,
        }

    def _write(self, stripe: int, generation: int, record: dict[str, Any], *, new: bool) -> bool:
        """Write a generation's record whole (``new``: only if no one made that generation first)."""
        folder = self._generations(stripe)
        folder.mkdir(parents=True, exist_ok=True)
        scratch = folder / f".{generation}.{os.getpid()}.{threading.get_ident()}.{secrets.token_hex(4)}"
        scratch.write_bytes(json.dumps(record).encode())
        try:
            if new:
                try:
                    os.link(scratch, folder / str(generation))
                except FileExistsError:
                    return False
            else:
                os.replace(scratch, folder / str(generation))
            return True
        finally:
            scratch.unlink(missing_ok=True)

    def _stale(self, stripe: int, record: dict[str, Any] | None) -> bool:
        """Whether the holder that wrote ``record`` stopped beating for :attr:`TTL` (or is gone)."""
        if record is None:  # a holder of an older version, or one making its generation: not taken over
            return False
        now = time.monotonic()
        # a free one says nothing by its age: the lock file's new holder has yet to write its own
        if record.get("state") == "held" and record.get("host") == machine():
            pid, beat = record.get("pid"), record.get("beat")
            if isinstance(pid, int) and not _alive(pid):
                return True
            if isinstance(beat, (int, float)) and beat <= now + 1:  # (a beat ahead: written before a reboot)
                return now - beat > self.TTL
        with self._lock:  # another host's clock: stale once unchanged for a TTL of this one's
            seen = self._seen.get(stripe)
            if seen is None or seen[0] != record:
                self._seen[stripe] = (record, now)
                return False
            return now - seen[1] > self.TTL

    def _fetching(self, stripe: int, record: dict[str, Any] | None) -> bool:
        """Whether ``record`` is a live holder that took the lease over and fetches without the lock file."""
        return (
            record is not None
            and record.get("lock_file") is False
            and record.get("state") == "held"
            and not self._stale(stripe, record)
        )

    def try_take(self, name: str) -> Any | None:
        stripe = self._stripe(name)
        with self._lock:
            hold = self._held.get(stripe)
            if hold is not None:
                if hold.lost:
                    return None
                hold.count += 1
                return stripe
        lock: filelock.BaseFileLock | None = self._file(stripe)
        assert lock is not None
        try:
            lock.acquire(timeout=0)
        except _timeout():
            lock = None
        try:
            generation, record = self._current(stripe)
            if lock is not None and self._fetching(stripe, record):
                return None
            if lock is None and not self._stale(stripe, record):
                return None
            hold = _FileHold(lock, generation + 1, secrets.token_hex(8))
            if not self._write(stripe, hold.generation, self._record(hold, "held"), new=True):
                return None  # another caller made it first
            if lock is None:
                if self._current_record(stripe, generation) != record:  # the stopped holder resumed meanwhile
                    self._write(stripe, hold.generation, self._record(hold, "free"), new=False)
                    return None
                log.warning(
                    "took over a lease in %s from process %s on %s: it gave no sign of life for %g s "
                    "(stopped, or asleep); when it resumes it sends nothing for it",
                    self.folder,
                    record.get("pid") if record else "?",
                    record.get("host") if record else "?",
                    self.TTL,
                )
            self._prune(stripe, generation)
            with self._lock:
                self._held[stripe] = hold
                if self._keeper is None or not self._keeper.is_alive():
                    self._keeper = threading.Thread(target=self._keep, name="storeframes-file-leases", daemon=True)
                    self._keeper.start()
            lock = None  # held now: released by release()
            return stripe
        finally:
            if lock is not None:
                lock.release()

    def _current_record(self, stripe: int, generation: int) -> dict[str, Any] | None:
        try:
            record = json.loads((self._generations(stripe) / str(generation)).read_bytes())
        except (FileNotFoundError, ValueError):
            return None
        return record if isinstance(record, dict) else None

    def _prune(self, stripe: int, below: int) -> None:
        """Remove the generations older than ``below`` (the one just before the newest stays for its holder)."""
        folder = self._generations(stripe)
        with contextlib.suppress(OSError):
            for entry in os.listdir(folder):
                if entry.isdigit() and int(entry) < below:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(folder / entry)

    def release(self, handle: Any) -> None:
        with self._lock:
            hold = self._held[handle]
            if hold.count > 1:
                hold.count -= 1
                return
            del self._held[handle]
        try:
            self._write(handle, hold.generation, self._record(hold, "free"), new=False)
        finally:
            if hold.lock is not None:
                hold.lock.release()

    def confirm(self, handle: Any) -> bool:
        """Whether the lease is still this holder's: its heartbeat written, and no newer generation made."""
        with self._lock:
            hold = self._held.get(handle)
            if hold is None or hold.lost:
                return False
        return self._beat(handle, hold)

    def _beat(self, stripe: int, hold: _FileHold) -> bool:
        with self._lock:
            hold.renewals += 1
            record = self._record(hold, "held")
        self._write(stripe, hold.generation, record, new=False)  # first the heartbeat, then the look
        if self._newest(stripe) == hold.generation:
            return True
        with self._lock:
            if not hold.lost:
                hold.lost = True
                log.warning("a lease in %s lapsed and was taken over by another caller", self.folder)
        return False

    def _keep(self) -> None:
        """Write the held leases' heartbeats until none is held."""
        while True:
            time.sleep(self.TTL / 3)
            with self._lock:
                held = [(stripe, hold) for stripe, hold in self._held.items() if not hold.lost]
                if not self._held:
                    self._keeper = None
                    return
            for stripe, hold in held:
                try:
                    self._beat(stripe, hold)
                except OSError as exc:  # tried again at the next round
                    log.warning("could not write a lease's heartbeat in %s: %s", self.folder, exc)

    def wait(self, name: str, timeout: float) -> bool:
        stripe = self._stripe(name)
        lock = self._file(stripe)
        started = time.monotonic()
        pause, longest = self.POLL
        noted = False
        while True:
            try:
                lock.acquire(timeout=0)
            except _timeout():
                free = False
            else:
                lock.release()
                free = True
            _, record = self._current(stripe)
            if (free and not self._fetching(stripe, record)) or (not free and self._stale(stripe, record)):
                return True  # free, or its holder stopped: the caller takes it (over)
            waited = time.monotonic() - started
            if not noted and waited >= self.NOTE_AFTER:
                noted = True
                log.warning("%s", self._holder(record, waited))
            if waited >= timeout:
                return False
            time.sleep(min(pause, timeout - waited))
            pause = min(pause * 2, longest)

    def _holder(self, record: dict[str, Any] | None, waited: float) -> str:
        """Who holds a lease waited for, for people."""
        if record is None or record.get("state") != "held":
            who = "another process"
        else:
            who = f"process {record.get('pid')} on {record.get('host')}"
            if record.get("host") == machine() and isinstance(record.get("beat"), (int, float)):
                who += f" (last sign of life {max(0.0, time.monotonic() - record['beat']):.0f} s ago)"
        return (
            f"waited {waited:.0f} s for a lease in {self.folder} held by {who}: it is fetching the same data; "
            f"a holder silent for {self.TTL:g} s (stopped, or asleep) is taken over"
        )


class MachineCoordinator(Coordinator, named_by_url=False):
    """This machine: the token's window in the state folder's SQLite file, leases as the cache's store suits.

    Made by ``Coordinator()``.
    """

    __slots__ = ()

    def __init__(self, url: None = None):
        if url is not None:
            raise ValueError(f"the machine's coordinator has no URL; Coordinator(url) is a Redis server's, got {url!r}")
        super().__init__(None)

    def describe(self) -> str:
        return MACHINE

    def window(self, tid: str) -> Shared:
        path = Path(os.path.abspath(state_path() / STATE_FILE))
        return shared_window(f"machine:{path}", tid, lambda: _SqliteSlots(path, tid))

    def folder_leases(self, folder: str) -> Leases:
        return leases_for(f"folder:{folder}", lambda: FileLeases(Path(folder) / "leases"))

    def store_leases(self, cache: Cache, *, objects: bool) -> Leases:
        def remote() -> Remote | None:
            if objects:  # as objects of the store, through its conditional writes
                return ObjectLeases(cache.storage)
            warn(
                f"the cache at {cache.location} cannot write conditionally, so callers on other machines may fetch "
                "the same answer at once: give the clients a Redis coordinator (coordinator='redis://...') to share "
                "leases",
                CacheWarning,
            )
            return None

        # a bucket: every machine names it alike, so its leases are the same for all of them
        return leases_for(f"store:{cache.location}", remote)
