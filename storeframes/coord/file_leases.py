"""Leases as lock files in a folder of this machine, with a heartbeat so that a stopped holder is taken over.

The leases of a cache in a folder (``Capabilities.leases == "files"``): one lock file per
stripe of names' hashes under the cache folder's ``leases/``, which the operating system
drops when its holder dies, and beside it a small generation record per holding that its
holder keeps beating; a holder silent for :attr:`FileLeases.TTL` seconds (stopped, or
asleep) is taken over, and when it resumes it sends nothing (:meth:`FileLeases.confirm`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import CacheUnavailableError, shown_when_half_built
from .leases import digest, machine
from .state import alive

if TYPE_CHECKING:
    import filelock

__all__ = ["FileLeases"]

log = logging.getLogger("storeframes")


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
    beat: float = 0.0  # the monotonic time of the heartbeat last written for it


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
        self._writing = threading.Lock()  # one record written at a time: a heartbeat never over a release
        self._held: dict[int, _FileHold] = {}
        self._seen: dict[int, tuple[Any, float]] = {}  # stripe -> (another host's record, first seen)
        self._keeper: threading.Thread | None = None

    @shown_when_half_built
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

    def _try_lock(self, lock: filelock.BaseFileLock) -> bool:
        """Take the lock file if nobody holds it (True), without waiting."""
        try:
            lock.acquire(timeout=0)
        except _timeout():
            return False
        except OSError as exc:
            raise self._unavailable(exc) from None
        return True

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
        hold.beat = time.monotonic()
        return {
            "pid": os.getpid(),
            "host": machine(),
            "holder": hold.token,
            "lock_file": hold.lock is not None,
            "state": state,
            "beat": hold.beat,
            "wall": round(time.time(), 3),
            "renewal": hold.renewals,
        }

    def _write(self, stripe: int, generation: int, record: dict[str, Any], *, new: bool) -> bool:
        """Write a generation's record whole (``new``: only if no one made that generation first)."""
        folder = self._generations(stripe)
        scratch = folder / f".{generation}.{os.getpid()}.{threading.get_ident()}.{secrets.token_hex(4)}"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            scratch.write_bytes(json.dumps(record).encode())
        except OSError as exc:
            raise self._unavailable(exc) from None
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
            if isinstance(pid, int) and not alive(pid):
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
        if not self._try_lock(lock):
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
            with self._writing:  # never under a heartbeat the keeper is writing for it
                self._write(handle, hold.generation, self._record(hold, "free"), new=False)
        finally:
            if hold.lock is not None:
                hold.lock.release()

    def confirm(self, handle: Any) -> bool:
        """Whether the lease is still this holder's: its heartbeat written, and no newer generation made.

        A heartbeat written within the keeper's period (``TTL / 3``) is not written again: nobody can
        judge it stale (that takes :attr:`TTL`), and a taker that judged an older one stale made its
        newer generation before, which the look finds. A holder that was stopped for longer writes
        first, then looks, as the keeper does.
        """
        with self._lock:
            hold = self._held.get(handle)
            if hold is None or hold.lost:
                return False
            fresh = time.monotonic() - hold.beat < self.TTL / 3
        return self._look(handle, hold) if fresh else self._beat(handle, hold)

    def _beat(self, stripe: int, hold: _FileHold) -> bool:
        with self._writing:  # a heartbeat and a release of one lease are never written over each other
            with self._lock:
                if self._held.get(stripe) is not hold:  # released since the keeper listed it: a "held" record
                    return True  # written now would say a free lease is held, and the look would call it lost
                hold.renewals += 1
                record = self._record(hold, "held")
            self._write(stripe, hold.generation, record, new=False)  # first the heartbeat, then the look
        return self._look(stripe, hold)

    def _look(self, stripe: int, hold: _FileHold) -> bool:
        """Whether no newer generation was made (else the lease is lost, and said so once)."""
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
            free = self._try_lock(lock)
            if free:
                lock.release()
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
