"""This machine as the place where a token's callers meet: the SQLite window and the lock-file leases.

The default :class:`~storeframes.coord.Coordinator`. The token's window is a table of a
SQLite file in :func:`~storeframes.coord.state_dir` (``window.sqlite3``), which every
process of the user on this machine shares, whatever its cache; see
:mod:`storeframes.coord.window` for the rule it keeps. The leases of a cache follow what
its store declares (``Capabilities.leases``): lock files in a folder on this machine
(:class:`~storeframes.coord.file_leases.FileLeases`), objects of a bucket (:class:`~storeframes.coord.bucket_leases.ObjectLeases`),
or, for a store that has neither, the process's own with a warning that recommends a
Redis coordinator.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..cache.coordination_record import canonical_location
from ..cache.files import CacheWarning
from ..errors import CoordinationError, warn
from .base import Coordinator
from .bucket_leases import ObjectLeases
from .file_leases import FileLeases
from .leases import Leases, Remote, leases_for
from .state import ENV_STATE_DIR, ForkSafeLock, alive, private_folder, state_path
from .window import KEEP, Shared, shared_window, slot_delay

if TYPE_CHECKING:
    from ..cache import Cache

__all__ = ["BUSY_TIMEOUT", "STATE_FILE", "TABLE", "FileLeases", "MachineCoordinator"]

_T = TypeVar("_T")

log = logging.getLogger("storeframes")

MACHINE = "machine"

STATE_FILE = "window.sqlite3"
"""The machine's record of slots, in :func:`~storeframes.coord.state_dir`."""

BUSY_TIMEOUT = 60.0
"""Seconds a process waits for another's write to the SQLite record before giving up."""


TABLE = "monotonic_slots"
"""The table of slots. Its times are ``time.monotonic()`` ones; versions that dated slots by the wall clock kept
theirs in ``slots``, which this one leaves alone."""

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    id INTEGER PRIMARY KEY,  -- random
    token TEXT NOT NULL,     -- storeframes.coord.token_id: a hash, never the token
    pid INTEGER,             -- the holder, while in flight
    deadline REAL,           -- in flight: time.monotonic() when taken + hold
    hold REAL,
    done REAL                -- completion time (time.monotonic()), NULL while in flight
);
CREATE INDEX IF NOT EXISTS {TABLE}_by_token ON {TABLE} (token, done);
"""

_LINKED = ("", "-journal", "-wal", "-shm")
"""The window file and the files SQLite keeps beside it: none of them may be a link."""

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

_DAMAGE = {10, 11, 14, 26}
"""SQLite's primary result codes of a window file that a rebuild can mend: I/O error, corrupt, cannot open,
not a database."""


def _state_error(path: Path, what: str) -> CoordinationError:
    folder = path.parent
    return CoordinationError(
        f"the machine's rate window cannot be kept in {path}: {what}. Every process of this machine that "
        f"shares a token counts its requests there; without it they would exceed the service's limit together. "
        f"Make the state folder {folder} a private folder you can write, or set ${ENV_STATE_DIR} to one"
    )


def _damaged(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in _DAMAGE:
        return True
    return isinstance(exc, sqlite3.OperationalError) and "no such table" in str(exc)


def _refuse_links(path: Path) -> None:
    """Raise CoordinationError if the window file or a file SQLite keeps beside it is a link, or not a file."""
    for suffix in _LINKED:
        name = Path(f"{path}{suffix}")
        try:
            mode = os.lstat(name).st_mode
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise _state_error(path, f"{name} cannot be read ({exc.strerror or exc})") from None
        if stat.S_ISLNK(mode):
            raise _state_error(
                path, f"{name} is a link; the window is never written through a link (remove it, or find who made it)"
            )
        if not stat.S_ISREG(mode):
            raise _state_error(path, f"{name} is not a file")


@contextlib.contextmanager
def _repairing(path: Path) -> Iterator[None]:
    """Hold the machine's lock on rebuilding the window file (a file beside it, never a link)."""
    name = Path(f"{path}.lock")
    fd = os.open(name, os.O_RDWR | os.O_CREAT | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        try:
            import fcntl
        except ImportError:  # Windows: a lock file through filelock
            import filelock

            with filelock.FileLock(f"{name}.win", timeout=BUSY_TIMEOUT):
                yield
            return
        fcntl.flock(fd, fcntl.LOCK_EX)  # the lock of an open file of its own: SQLite's locks are untouched
        yield
    finally:
        os.close(fd)


class _WindowFile:
    """The process's one connection to a window file, which every token and base URL of the process shares.

    Nothing else of the process opens the file: closing any descriptor of it would drop the
    POSIX locks SQLite holds through the connection. The file is created without following a
    link, and a link at it (or at the files SQLite keeps beside it) is refused. Before each
    transaction the file's identity is checked (one ``stat``): a file another process
    rebuilt, or one deleted, is opened anew. A file found damaged (an I/O error, not a
    database, corrupt, its table gone) is set aside as ``window.sqlite3.damaged`` and rebuilt,
    under a lock, by one process, with a warning: it holds nothing but the last minutes' slots.
    A failure a rebuild cannot mend raises :class:`~storeframes.errors.CoordinationError`.

    The journal is a rollback journal kept between transactions (``PERSIST``), not a WAL: closing a
    connection then checkpoints and deletes nothing by name, so a process still connected to a
    file set aside cannot delete the journal of the one that replaced it.
    """

    def __init__(self, path: Path):
        self.path = path
        self.lock = threading.Lock()  # one transaction at a time on the connection
        self._db: sqlite3.Connection | None = None
        self._identity: tuple[int, int] | None = None
        self._warned = False

    def run(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """``work(connection)`` (one transaction), with the file rebuilt once if it is found damaged."""
        with self.lock:
            for attempt in range(2):
                try:
                    return work(self._current())
                except sqlite3.Error as exc:
                    if attempt or not _damaged(exc):
                        raise self._failed(exc) from None
                    self._repair(exc)
            raise AssertionError("unreachable")

    def _failed(self, exc: sqlite3.Error) -> CoordinationError:
        if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
            what = f"another process kept it locked for {BUSY_TIMEOUT:.0f} s (a process stopped while writing?)"
        else:
            what = f"{type(exc).__name__}: {exc}"
        return _state_error(self.path, what)

    def _current(self) -> sqlite3.Connection:
        if self._db is not None:
            try:
                found = os.stat(self.path)
            except OSError:
                found = None
            if found is not None and (found.st_dev, found.st_ino) == self._identity:
                return self._db
            self._drop()  # rebuilt by another process, or deleted: open the file that is there now
        self._db = self._connect()
        return self._db

    def _drop(self) -> None:
        db, self._db, self._identity = self._db, None, None
        if db is not None:
            with contextlib.suppress(sqlite3.Error):
                db.close()

    def _connect(self) -> sqlite3.Connection:
        path = self.path
        try:
            private_folder(path.parent)
        except OSError as exc:
            raise _state_error(path, f"the folder cannot be made ({exc.strerror or exc})") from None
        _refuse_links(path)
        try:  # a new file, private; never through a link. The descriptor of a file just made holds no lock
            os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600))
        except FileExistsError:
            pass
        except OSError as exc:
            raise _state_error(path, f"it cannot be created ({exc.strerror or exc})") from None
        try:
            db = sqlite3.connect(path, timeout=BUSY_TIMEOUT, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise self._failed(exc) from None
        try:
            _refuse_links(path)  # planted between the check and the open: nothing was written yet
            found = os.stat(path)
            self._identity = (found.st_dev, found.st_ino)
            self._prepare(db)
        except BaseException:
            # the identity stays: a repair sets aside this file only, never one another process rebuilt since
            with contextlib.suppress(sqlite3.Error):
                db.close()
            raise
        return db

    @staticmethod
    def _prepare(db: sqlite3.Connection) -> None:
        # a rollback journal (see the class); a process of an earlier version may hold the file in WAL mode,
        # which then stays: asked without waiting
        db.execute("PRAGMA busy_timeout = 0")
        with contextlib.suppress(sqlite3.OperationalError):
            db.execute("PRAGMA journal_mode = PERSIST")
        db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
        # no fsync: the file survives a process killed at any point; what a power cut damages is rebuilt
        db.execute("PRAGMA synchronous = OFF")
        db.execute("BEGIN IMMEDIATE")
        try:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            raise

    def _repair(self, exc: sqlite3.Error) -> None:
        broken = self._identity
        self._drop()
        path = self.path
        try:
            with _repairing(path):
                try:
                    found = os.lstat(path)
                except FileNotFoundError:
                    found = None
                if found is not None and (broken is None or (found.st_dev, found.st_ino) == broken):
                    _refuse_links(path)
                    for suffix in _LINKED:  # its journal too: played into the new file, it would damage it
                        with contextlib.suppress(FileNotFoundError):
                            os.replace(f"{path}{suffix}", f"{path}.damaged{suffix}")
                self._db = self._connect()  # another process that waited here finds it rebuilt
        except OSError as failure:
            raise _state_error(path, f"it is damaged ({exc}) and cannot be rebuilt ({failure})") from None
        if not self._warned:
            self._warned = True
            warn(
                f"the machine's rate window in {path} was damaged ({type(exc).__name__}: {exc}); it was rebuilt "
                f"(the damaged file is kept beside it as {path.name}.damaged). It held only the last minutes' "
                "requests, so this machine may send a window's worth more than the limit once",
                RuntimeWarning,
            )


_FILES: dict[tuple[int, str], _WindowFile] = {}
_FILES_LOCK = ForkSafeLock()


def _window_file(path: Path) -> _WindowFile:
    """The process's one :class:`_WindowFile` of ``path`` (a forked child gets its own)."""
    key = (os.getpid(), str(path))
    with _FILES_LOCK:
        found = _FILES.get(key)
        if found is None:
            found = _FILES[key] = _WindowFile(path)
        return found


class _SqliteSlots:
    """The machine's record of one token's slots: rows of a SQLite table, one write transaction a slot.

    Its times are ``time.monotonic()`` ones: on Linux CLOCK_MONOTONIC, one clock for every
    process of the machine, which a step of the wall clock (NTP, a user, a suspended VM's
    catch-up) never moves. A boot restarts it, so a time beyond now was written before the
    boot: a completion so dated is dropped, a deadline brought back to now and the slot's hold.
    """

    where = "machine"

    def __init__(self, path: Path, tid: str):
        self.path = path
        self.tid = tid
        self._file = _window_file(path)

    @property
    def place(self) -> str:
        return str(self.path)

    def take(self, limit: int, window: float, hold: float) -> tuple[Any, float]:
        return self._file.run(lambda db: self._take(db, limit, window, hold))

    def _take(self, db: sqlite3.Connection, limit: int, window: float, hold: float) -> tuple[Any, float]:
        tid, me = self.tid, os.getpid()
        db.execute("BEGIN IMMEDIATE")
        try:
            now = time.monotonic()  # read holding the write lock: no slot is dated later
            # dated beyond now, so before a boot: completions dropped, deadlines brought back
            db.execute(f"DELETE FROM {TABLE} WHERE token = ? AND done > ?", (tid, now))
            db.execute(
                f"UPDATE {TABLE} SET deadline = ? + hold WHERE token = ? AND done IS NULL AND deadline > ? + hold",
                (now, tid, now),
            )
            # a slot past its deadline completed then; one whose holder is gone completed now (it may have arrived)
            db.execute(
                f"UPDATE {TABLE} SET done = deadline, pid = NULL WHERE token = ? AND done IS NULL AND deadline <= ?",
                (tid, now),
            )
            holders = db.execute(
                f"SELECT DISTINCT pid FROM {TABLE} WHERE token = ? AND done IS NULL AND pid != ?", (tid, me)
            ).fetchall()
            gone = [(now, tid, pid) for (pid,) in holders if not alive(pid)]
            if gone:
                db.executemany(
                    f"UPDATE {TABLE} SET done = ?, pid = NULL WHERE token = ? AND done IS NULL AND pid = ?", gone
                )
            db.execute(f"DELETE FROM {TABLE} WHERE token = ? AND done <= ?", (tid, now - max(window, KEEP)))
            (flying,) = db.execute(f"SELECT COUNT(*) FROM {TABLE} WHERE token = ? AND done IS NULL", (tid,)).fetchone()
            (recent,) = db.execute(
                f"SELECT COUNT(*) FROM {TABLE} WHERE token = ? AND done > ?", (tid, now - window)
            ).fetchone()

            def nth(k: int) -> float:
                row = db.execute(
                    f"SELECT done FROM {TABLE} WHERE token = ? AND done > ? ORDER BY done LIMIT 1 OFFSET ?",
                    (tid, now - window, k - 1),
                ).fetchone()
                return float(row[0])

            delay = slot_delay(flying, recent, nth, limit, window, now)
            handle = None
            if delay is None:
                handle = secrets.randbits(62)
                db.execute(
                    f"INSERT INTO {TABLE} (id, token, pid, deadline, hold, done) VALUES (?, ?, ?, ?, ?, NULL)",
                    (handle, tid, me, now + hold, hold),
                )
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
            raise
        return handle, delay or 0.0

    def give(self, handle: Any) -> None:
        # dated now, even if it was counted complete before (its holder looked gone, or it outlived its deadline);
        # now is read before waiting for the file: the answer's headers are in, and its slot frees no later
        done = time.monotonic()

        def complete(db: sqlite3.Connection) -> None:
            db.execute(
                f"INSERT INTO {TABLE} (id, token, pid, deadline, hold, done) VALUES (?, ?, NULL, NULL, NULL, ?) "
                "ON CONFLICT (id) DO UPDATE SET done = excluded.done, pid = NULL, deadline = NULL",
                (handle, self.tid, done),
            )

        self._file.run(complete)


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
