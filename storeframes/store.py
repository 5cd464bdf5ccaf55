"""Where the cache keeps its bytes: a small key-value :class:`Store`.

:class:`~storeframes.cache.Cache` knows the layout (answers, index, frames, ledger),
the file formats and the rules of freshness; a store only keeps values under
'/'-separated keys such as ``answers/endpoint=metadata/<entry>.json.zst``. Two stores
ship: :class:`LocalStore`, a folder (a key is a file path under it, so the folder is
the same plain Parquet dataset as ever), and :class:`MemoryStore`, a dict for tests
and throwaway caches; :class:`~storeframes.objectstore.ObjectStore` keeps them in an S3
bucket (or Google Cloud Storage, Azure). Anything else with the same operations can
hold a cache too: the operations are few, and each is one or a few object-store
requests (``put_if_absent`` a conditional PUT, ``set_aside`` a copy and a delete,
``list`` and ``usage`` a paged listing, ``sweep`` one and its deletes).

Every operation reports a failure of the storage as an :class:`OSError` (a missing
value as :class:`FileNotFoundError`), and refuses a malformed key with a
:class:`ValueError`.

A :class:`LocalStore` never follows a symbolic link below its folder: a linked file or
folder planted in the cache is not listed, swept, set aside, dated or deleted through
(the cache folder itself may be a link). A folder where a value should be holds no
value; deleting it is refused with :class:`IsADirectoryError` rather than emptying it.
"""

from __future__ import annotations

import builtins
import contextlib
import errno
import os
import secrets
import stat
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import NamedTuple, Protocol, runtime_checkable

__all__ = ["LocalStore", "MemoryStore", "Store", "SweepError", "Usage", "check_key"]

_SET_ASIDE = ".corrupt"
_TMP = ".tmp"


class SweepError(OSError):
    """:meth:`Store.sweep` removed what it could, but not some files: ``failures`` holds
    ``(key or file name, the error)`` of each, ``removed`` how many went."""

    def __init__(self, failures: builtins.list[tuple[str, OSError]], removed: int):
        self.failures = failures
        self.removed = removed
        shown = "; ".join(f"{name}: {exc.strerror or exc}" for name, exc in failures[:5])
        files = "1 file" if len(failures) == 1 else f"{len(failures):,} files"
        super().__init__(f"could not remove {files} ({shown})")


class Usage(NamedTuple):
    """What a store holds: its size in bytes (values, set-aside values and temporary
    files alike) and how many values are set aside."""

    size: int
    set_aside: int


@runtime_checkable
class Store(Protocol):
    """The operations the cache needs from the place it keeps its files.

    Keys are relative '/'-separated names (see :func:`check_key`). A value is bytes,
    written whole: no operation ever shows part of one.

    A store may also have ``locate(keys) -> (addresses, storage_options)``: what
    :func:`polars.scan_parquet` reads to see those values in place (file paths and
    None for a folder, ``s3://`` URLs and the options polars needs for a bucket). It is
    optional, and not one of the methods :func:`isinstance` checks: a store without it
    is still a Store, and its values are read with :meth:`get`. A store that has it but
    nothing polars can read (:class:`MemoryStore`) raises :class:`NotImplementedError`.
    Likewise optional, ``open(key)`` gives a seekable binary file that reads only the
    ranges asked for (a bucket's object), so the cache reads a row group of a large
    compacted file without fetching all of it.
    """

    def put(self, key: str, data: bytes) -> None:
        """Keep ``data`` under ``key``, replacing any value there.

        Atomic: a reader sees the old value or the new one, never part of either.
        """

    def put_if_absent(self, key: str, data: bytes) -> bool:
        """Keep ``data`` under ``key`` unless a value is there already.

        True if written; False, writing nothing, if ``key`` holds a value. When several
        writers (threads or processes) race on one key, exactly one gets True.
        """

    def get(self, key: str) -> bytes:
        """The value under ``key``; raises :class:`FileNotFoundError` when there is none."""

    def list(self, prefix: str = "") -> builtins.list[str]:
        """Every key starting with ``prefix`` (``"index/"``, ``"answers/endpoint=search/"``), sorted.

        Keys at any depth below the prefix are listed; temporary files of writes in
        progress and set-aside values never are.
        """

    def delete(self, key: str) -> None:
        """Remove the value under ``key``; nothing happens when there is none."""

    def mtime(self, key: str) -> float | None:
        """When the value under ``key`` was written (POSIX seconds), or None when there is none."""

    def set_aside(self, key: str) -> bool:
        """Move an unreadable value out of the way, to ``key + ".corrupt"``.

        It is no longer listed nor got under ``key``, but kept for a look (until
        :meth:`sweep`). Its time becomes the time it was set aside. Returns True if
        this call set it aside, False if there was no value under ``key`` (another
        process may have set it aside first).
        """

    def sweep(
        self, older_than_seconds: float, *, prefix: str = "", set_aside_older_than_seconds: float | None = None
    ) -> int:
        """Remove the temporary files left by stopped writers that are at least
        ``older_than_seconds`` old, and the values set aside at least
        ``set_aside_older_than_seconds`` ago (by default the same age); returns how many.

        Only what lies under ``prefix`` is looked at. An age of 0 removes every one,
        whatever its time says; a younger temporary file may be a write in progress.
        A file that cannot be removed is skipped; when there were some, a
        :class:`SweepError` naming each is raised once the others are removed.
        """

    def usage(self, prefix: str = "") -> Usage:
        """The bytes kept under ``prefix`` and how many values there are set aside.

        One listing (one walk of a folder, one paged list of a bucket), where a size
        per key would cost a request per key on an object store.
        """


def check_key(key: str, *, prefix: bool = False) -> str:
    """``key`` if it is a well-formed relative key, else a :class:`ValueError`.

    A key is '/'-separated, relative (no leading '/'), without '..', backslashes or
    empty parts; no part starts with '.' (those names are the store's temporary
    files) and the key does not end in ``.corrupt`` (the names of set-aside values).
    With ``prefix=True`` the empty string and a trailing '/' are allowed as well.
    """
    if not isinstance(key, str):
        raise ValueError(f"a store key must be a string, got {key!r}")
    if prefix and key == "":
        return key
    problem = None
    if not key:
        problem = "it is empty"
    elif key.startswith("/") or (len(key) > 1 and key[1] == ":"):
        problem = "it is absolute"
    elif ".." in key:
        problem = "it contains '..'"
    elif "\\" in key or "\0" in key:
        problem = "it contains a backslash or a NUL"
    else:
        parts = key.split("/")
        if prefix and parts[-1] == "":
            parts.pop()
        if any(part == "" for part in parts):
            problem = "it has an empty part"
        elif any(part.startswith(".") for part in parts):
            problem = "a part starts with '.'"
        elif not prefix and key.endswith(_SET_ASIDE):
            problem = f"it ends in {_SET_ASIDE!r}"
    if problem:
        raise ValueError(f"not a store key: {key!r} ({problem})")
    return key


def _is_temporary(name: str) -> bool:
    return name.startswith(".") and name.endswith(_TMP)


def _old(mtime: float, age: float, now: float) -> bool:
    return age <= 0 or now - mtime >= age


class LocalStore:
    """A folder: the value of ``a/b/c.parquet`` is the file ``root/a/b/c.parquet``.

    A value is written to ``.{name}.{random}.tmp`` in its own folder and renamed into
    place (``os.replace``), so a reader never sees half a file and a stopped writer
    leaves only a temporary file behind, which :meth:`sweep` removes. Folders are
    created as values are put; looking never creates anything. Several processes may
    share one folder. No fsync: a file cut short by a power failure is detected when
    read (the cache sets it aside and fetches it again).
    """

    def __init__(self, root: str | os.PathLike[str]):
        self.root = Path(root).expanduser()

    def __repr__(self) -> str:
        return f"LocalStore({str(self.root)!r})"

    def _path(self, key: str) -> Path:
        return self.root.joinpath(*check_key(key).split("/"))

    def _within(self, folders: builtins.list[str]) -> bool:
        """Whether the folders ``folders`` (names below the root, outermost first) are real folders, not
        links: what lies under a linked folder is not the store's."""
        path = self.root
        for name in folders:
            path = path / name
            try:
                if not stat.S_ISDIR(os.lstat(path).st_mode):  # a link, a file, or anything else
                    return False
            except OSError:
                return False
        return True

    def _own_path(self, key: str) -> Path | None:
        """The file of ``key``, or None when one of its folders is a link (the store never follows one)."""
        parts = check_key(key).split("/")
        return self.root.joinpath(*parts) if self._within(parts[:-1]) else None

    def _write_temporary(self, path: Path, data: bytes) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}{_TMP}")
        try:
            with open(tmp, "wb") as handle:
                handle.write(data)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return tmp

    def put(self, key: str, data: bytes) -> None:
        path = self._path(key)
        tmp = self._write_temporary(path, data)
        try:
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise

    def put_if_absent(self, key: str, data: bytes) -> bool:
        """As :meth:`Store.put_if_absent`: the whole value is written to a temporary file,
        then hard-linked to its name, which fails if the name exists, atomically across
        processes. On a file system without hard links the file is created with
        ``O_EXCL`` instead (still one winner; a reader may then see it being written).
        """
        path = self._path(key)
        if path.exists():
            return False
        tmp = self._write_temporary(path, data)
        try:
            os.link(tmp, path)
            return True
        except FileExistsError:
            return False
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.ENOSYS, errno.EMLINK):
                raise
        finally:
            tmp.unlink(missing_ok=True)
        return self._create_exclusive(path, data)

    @staticmethod
    def _create_exclusive(path: Path, data: bytes) -> bool:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
        except FileExistsError:
            return False
        try:
            with open(fd, "wb") as handle:
                handle.write(data)
        except BaseException:
            path.unlink(missing_ok=True)
            raise
        return True

    def get(self, key: str) -> bytes:
        path = self._path(key)
        try:
            return path.read_bytes()
        except (IsADirectoryError, NotADirectoryError) as exc:  # a folder, or a file where a folder should be
            raise FileNotFoundError(errno.ENOENT, f"no value under {key!r}", str(path)) from exc

    def _walk(self, prefix: str) -> builtins.list[tuple[str, os.DirEntry[str]]]:
        """``(relative name, entry)`` of every file whose name starts with ``prefix``; links are never
        followed nor listed."""
        folder = check_key(prefix, prefix=True).rpartition("/")[0]
        if folder and not self._within(folder.split("/")):
            return []
        found = []
        stack = [folder]
        while stack:
            relative = stack.pop()
            base = f"{relative}/" if relative else ""
            inside = base.startswith(prefix)  # every name in this folder starts with the prefix
            try:
                with os.scandir(self.root / relative if relative else self.root) as scan:
                    for item in scan:
                        name = base + item.name
                        if item.is_symlink():
                            continue  # planted, or made by someone else: not the store's
                        if item.is_dir(follow_symlinks=False):
                            if item.name.startswith("."):
                                continue  # no key lives there
                            if inside or (name + "/").startswith(prefix) or prefix.startswith(name + "/"):
                                stack.append(name)
                        elif item.is_file(follow_symlinks=False) and (inside or name.startswith(prefix)):
                            found.append((name, item))
            except (FileNotFoundError, NotADirectoryError):
                continue
        return found

    def list(self, prefix: str = "") -> builtins.list[str]:
        # the loop of _walk, kept tight: the cache lists an index folder at every call
        keys: builtins.list[str] = []
        start = check_key(prefix, prefix=True).rpartition("/")[0]
        if start and not self._within(start.split("/")):
            return keys  # a linked folder (or none): nothing of the store's lies there
        stack = [start]
        while stack:
            relative = stack.pop()
            base = f"{relative}/" if relative else ""
            inside = base.startswith(prefix)
            try:
                with os.scandir(self.root / relative if relative else self.root) as scan:
                    for item in scan:
                        name = item.name
                        if name[0] == "." or item.is_symlink():
                            continue  # a temporary file, a folder where no key lives, or a link (never followed)
                        if item.is_dir(follow_symlinks=False):
                            folder = base + name
                            if inside or (folder + "/").startswith(prefix) or prefix.startswith(folder + "/"):
                                stack.append(folder)
                        elif not name.endswith(_SET_ASIDE) and (inside or (base + name).startswith(prefix)):
                            keys.append(base + name)
            except (FileNotFoundError, NotADirectoryError):
                continue
        keys.sort()
        return keys

    def delete(self, key: str) -> None:
        """As :meth:`Store.delete`; a key under a linked folder has no value here (nothing is removed through
        the link), and a folder where the value should be raises :class:`IsADirectoryError`."""
        path = self._own_path(key)
        if path is None:
            return
        try:
            os.unlink(path)
        except (FileNotFoundError, NotADirectoryError):
            return
        except PermissionError:
            if os.path.isdir(path) and not os.path.islink(path):  # unlink says so for a folder on some systems
                raise IsADirectoryError(errno.EISDIR, "a folder, not a value: not removed", str(path)) from None
            raise

    def mtime(self, key: str) -> float | None:
        path = self._own_path(key)
        try:
            found = os.lstat(path) if path is not None else None
        except (FileNotFoundError, NotADirectoryError):
            return None
        return found.st_mtime if found is not None and stat.S_ISREG(found.st_mode) else None

    def set_aside(self, key: str) -> bool:
        """As :meth:`Store.set_aside`; a folder where the value should be is not a value, and is left where it is."""
        path = self._own_path(key)
        if path is None or os.path.isdir(path):
            return False
        aside = path.with_name(path.name + _SET_ASIDE)
        try:
            os.replace(path, aside)
        except (FileNotFoundError, NotADirectoryError):
            return False
        with contextlib.suppress(OSError):
            os.utime(aside)  # its age is counted from now
        return True

    def sweep(
        self, older_than_seconds: float, *, prefix: str = "", set_aside_older_than_seconds: float | None = None
    ) -> int:
        aside_age = older_than_seconds if set_aside_older_than_seconds is None else set_aside_older_than_seconds
        now = time.time()
        removed = 0
        failures: builtins.list[tuple[str, OSError]] = []
        for name, item in self._walk(prefix):
            if _is_temporary(item.name):
                age = older_than_seconds
            elif item.name.endswith(_SET_ASIDE):
                age = aside_age
            else:
                continue
            try:
                if _old(item.stat(follow_symlinks=False).st_mtime, age, now):
                    os.unlink(item.path)
                    removed += 1
            except FileNotFoundError:  # renamed into place, or removed by another sweep
                continue
            except OSError as exc:  # one file that cannot go does not stop the others
                failures.append((name, exc))
        if failures:
            raise SweepError(failures, removed)
        return removed

    def locate(self, keys: Iterable[str]) -> tuple[builtins.list[str], None]:
        """The file paths of ``keys``, for :func:`polars.scan_parquet` (which needs no storage options here)."""
        return [str(self._path(key)) for key in keys], None

    def usage(self, prefix: str = "") -> Usage:
        size = aside = 0
        for _, item in self._walk(prefix):
            try:
                size += item.stat(follow_symlinks=False).st_size
            except FileNotFoundError:
                continue
            aside += item.name.endswith(_SET_ASIDE)
        return Usage(size, aside)


class MemoryStore:
    """A dict under a lock: for tests and caches that need not outlive the process.

    Writes are atomic by the lock, so there are never temporary files. ``clock``
    (POSIX seconds, :func:`time.time` by default) dates what is written and set aside.
    """

    def __init__(self, *, clock: Callable[[], float] = time.time):
        self._clock = clock
        self._lock = threading.Lock()
        self._values: dict[str, tuple[bytes, float]] = {}
        self._aside: dict[str, tuple[bytes, float]] = {}  # by the key the value had

    def __repr__(self) -> str:
        return f"MemoryStore({len(self._values)} values)"

    def put(self, key: str, data: bytes) -> None:
        check_key(key)
        value = (bytes(data), self._clock())
        with self._lock:
            self._values[key] = value

    def put_if_absent(self, key: str, data: bytes) -> bool:
        check_key(key)
        value = (bytes(data), self._clock())
        with self._lock:
            if key in self._values:
                return False
            self._values[key] = value
            return True

    def get(self, key: str) -> bytes:
        with self._lock:
            value = self._values.get(check_key(key))
        if value is None:
            raise FileNotFoundError(errno.ENOENT, f"no value under {key!r}", key)
        return value[0]

    def list(self, prefix: str = "") -> builtins.list[str]:
        check_key(prefix, prefix=True)
        with self._lock:
            return sorted(k for k in self._values if k.startswith(prefix))

    def delete(self, key: str) -> None:
        with self._lock:
            self._values.pop(check_key(key), None)

    def mtime(self, key: str) -> float | None:
        with self._lock:
            value = self._values.get(check_key(key))
        return None if value is None else value[1]

    def set_aside(self, key: str) -> bool:
        check_key(key)
        with self._lock:
            value = self._values.pop(key, None)
            if value is None:
                return False
            self._aside[key] = (value[0], self._clock())
            return True

    def sweep(
        self, older_than_seconds: float, *, prefix: str = "", set_aside_older_than_seconds: float | None = None
    ) -> int:
        check_key(prefix, prefix=True)
        age = older_than_seconds if set_aside_older_than_seconds is None else set_aside_older_than_seconds
        now = self._clock()
        with self._lock:
            old = [k for k, (_, at) in self._aside.items() if k.startswith(prefix) and _old(at, age, now)]
            for key in old:
                del self._aside[key]
        return len(old)

    def locate(self, keys: Iterable[str]) -> tuple[builtins.list[str], None]:
        """Never: the values live in this process's memory, where polars cannot read them (use :meth:`get`)."""
        raise NotImplementedError("a MemoryStore keeps its values in this process: there is nothing polars can read")

    def usage(self, prefix: str = "") -> Usage:
        check_key(prefix, prefix=True)
        with self._lock:
            size = sum(len(v) for k, (v, _) in self._values.items() if k.startswith(prefix))
            aside = [len(v) for k, (v, _) in self._aside.items() if k.startswith(prefix)]
        return Usage(size + sum(aside), len(aside))
