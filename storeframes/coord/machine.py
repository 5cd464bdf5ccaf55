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
import os
import secrets
import sqlite3
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..cache import CacheWarning
from ..cache.team import canonical_location
from ..errors import CacheUnavailableError, warn
from .base import Coordinator
from .bucket import ObjectLeases
from .leases import Leases, Remote, digest, leases_for
from .state import private_folder, state_path
from .window import KEEP, Shared, Unavailable, shared_window, slot_delay

if TYPE_CHECKING:
    import filelock

    from ..cache import Cache

__all__ = ["BUSY_TIMEOUT", "STATE_FILE", "FileLeases", "MachineCoordinator"]

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
        return int(digest(name)[:8], 16) % self.STRIPES

    def _file(self, stripe: int) -> filelock.BaseFileLock:
        import filelock  # when first needed: importing storeframes stays quick

        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise self._unavailable(exc) from None
        return filelock.FileLock(self.folder / f"{stripe:03x}.lock", thread_local=False)

    def _unavailable(self, exc: OSError) -> CacheUnavailableError:
        """A lock file that cannot be made (a read-only cache folder, or one that cannot be created)."""
        return CacheUnavailableError(
            f"cannot make a lease file in {self.folder} ({exc.strerror or type(exc).__name__}): the cache folder "
            f"{self.folder.parent} cannot be written; give cache_dir= (or STOREFRAMES_CACHE_DIR) a folder this "
            "user can write, or use offline=True to read what it holds",
            location=str(self.folder.parent),
            operation="take a lease",
        )

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
            except OSError as exc:
                raise self._unavailable(exc) from None
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

    def confirm(self, handle: Any) -> bool:
        return True  # a lock file is never taken over: the system drops it only when its holder ends

    def wait(self, name: str, timeout: float) -> bool:
        lock = self._file(self._stripe(name))
        try:
            lock.acquire(timeout=timeout, poll_interval=0.01)
        except _timeout():
            return False
        except OSError as exc:
            raise self._unavailable(exc) from None
        lock.release()
        return True


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
        return leases_for(f"store:{canonical_location(cache.location)}", remote)
