"""A cache in a folder: :class:`LocalStore`, the usual home of a cache.

A :class:`LocalStore` never follows a symbolic link below its folder: a linked file or
folder planted in the cache is not listed, swept, set aside, dated or deleted through (the
cache folder itself may be a link), and a linked file is not read. It reads regular files only: a named pipe, a
device or a socket under a key is never read (it could hang the reader or feed it without
end; a pipe is opened without waiting for a writer) and a read takes no more than the size
the file had when opened; such a value, or a link, raises
:class:`~storeframes.cache.stores.base.NotAFileError`. A folder where a value should be holds no
value; deleting it is refused with :class:`IsADirectoryError` rather than emptying it.
"""

from __future__ import annotations

import builtins
import contextlib
import errno
import io
import os
import secrets
import stat
import threading
import time
from collections.abc import Iterable
from pathlib import Path

from ...errors import shown_when_half_built
from .base import (
    _SET_ASIDE,
    _TMP,
    Capabilities,
    NotAFileError,
    StoreBase,
    SweepError,
    Usage,
    _is_temporary,
    _old,
    check_key,
)

__all__ = ["LocalStore"]

_READ = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
"""How a value is opened: never waiting for a writer (a named pipe), never through a link."""
_READ |= getattr(os, "O_BINARY", 0)
_ODD: dict[Path, set[str]] = {}
"""What the listings of each folder passed over in this process (links, named pipes...), by the folder."""
_ODD_LOCK = threading.Lock()


class LocalStore(StoreBase):
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
        self.capabilities = Capabilities(local_root=self.root, ranged_reads=True, shared="machine", leases="files")

    @property
    def location(self) -> str:
        return str(self.root)

    @shown_when_half_built
    def __repr__(self) -> str:
        return f"LocalStore({str(self.root)!r})"

    def explain(self, error: OSError) -> str:
        """What most likely stopped a write into the folder (see :meth:`StoreBase.explain`)."""
        causes = {
            errno.EACCES: "permission denied: the folder is read-only for this user",
            errno.EPERM: "permission denied: the folder is read-only for this user",
            errno.EROFS: "the folder is on a read-only file system",
            errno.ENOTDIR: "the folder cannot be created: a file stands where one of its folders should be",
            errno.EEXIST: "the folder cannot be created: a file stands where it should be",
            errno.ENOENT: "the folder cannot be created where its path leads",
            errno.ENOSPC: "the disk is full",
            errno.EDQUOT: "the user's disk quota is used up",
        }
        return causes.get(error.errno or 0, error.strerror or type(error).__name__)

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

    def _open_file(self, key: str) -> tuple[int, int]:
        """A descriptor of the regular file of ``key`` and its size. A folder (or a file where one of its
        folders should be) is no value: :class:`FileNotFoundError`; a link, a named pipe, a device or a
        socket is :class:`NotAFileError`: opened without following a link and without waiting for a
        writer, then looked at before a byte is read."""
        path = self._path(key)
        try:
            fd = os.open(path, _READ)
        except (IsADirectoryError, NotADirectoryError):
            raise FileNotFoundError(errno.ENOENT, f"no value under {key!r}", str(path)) from None
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENXIO, errno.EMLINK):  # a link (EMLINK on BSD), a socket
                raise
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                raise exc from None
            raise NotAFileError.of(key, mode) from None
        try:
            found = os.fstat(fd)
            if not stat.S_ISREG(found.st_mode):
                if stat.S_ISDIR(found.st_mode):
                    raise FileNotFoundError(errno.ENOENT, f"no value under {key!r}", str(path))
                raise NotAFileError.of(key, found.st_mode)
        except BaseException:
            os.close(fd)
            raise
        return fd, found.st_size

    def get(self, key: str) -> bytes:
        """As :meth:`Store.get`: the bytes of a regular file, as many as it held when opened."""
        fd, size = self._open_file(key)
        try:
            data = os.read(fd, size) if size else b""
            if len(data) < size:  # a read returns less at times (over 2 GB, some file systems)
                parts = [data]
                got = len(data)
                while got < size and (more := os.read(fd, size - got)):
                    parts.append(more)
                    got += len(more)
                data = b"".join(parts)
            return data
        finally:
            os.close(fd)

    def open(self, key: str) -> io.IOBase:
        """The file of ``key``, opened for reading (the reader seeks and reads the ranges it needs); a regular
        file only, as :meth:`get` reads."""
        fd, _ = self._open_file(key)
        return open(fd, "rb")

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
                            if item.name.endswith(_SET_ASIDE) and (inside or name.startswith(prefix)):
                                found.append((name, item))  # a planted link set aside: removed, never followed
                            continue  # planted, or made by someone else: not the store's
                        if item.is_dir(follow_symlinks=False):
                            if item.name.startswith("."):
                                continue  # no key lives there
                            if inside or (name + "/").startswith(prefix) or prefix.startswith(name + "/"):
                                stack.append(name)
                        elif (item.is_file(follow_symlinks=False) or item.name.endswith(_SET_ASIDE)) and (
                            inside or name.startswith(prefix)
                        ):
                            found.append((name, item))  # a file, or whatever was set aside (a named pipe)
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
                        if name[0] == ".":
                            continue  # a temporary file, or a folder where no key lives
                        if item.is_dir(follow_symlinks=False):
                            folder = base + name
                            if inside or (folder + "/").startswith(prefix) or prefix.startswith(folder + "/"):
                                stack.append(folder)
                        elif name.endswith(_SET_ASIDE) or not (inside or (base + name).startswith(prefix)):
                            continue
                        elif item.is_file(follow_symlinks=False):
                            keys.append(base + name)
                        else:  # a link (never followed), a named pipe, a device or a socket: no value of the store's
                            self._passed_over(base + name)
            except (FileNotFoundError, NotADirectoryError):
                continue
        keys.sort()
        return keys

    def _passed_over(self, key: str) -> None:
        with _ODD_LOCK:
            _ODD.setdefault(self.root, set()).add(key)

    def odd_keys(self) -> builtins.list[str]:
        """The names its listings passed over in this process, sorted: links (never followed), named pipes, devices
        and sockets, which the store never writes (see :meth:`StoreBase.odd_keys`)."""
        with _ODD_LOCK:
            return sorted(_ODD.get(self.root, ()))

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
        if path is None or (os.path.isdir(path) and not os.path.islink(path)):
            return False
        aside = path.with_name(path.name + _SET_ASIDE)
        try:
            os.replace(path, aside)
        except (FileNotFoundError, NotADirectoryError):
            return False
        with contextlib.suppress(OSError):
            os.utime(aside, follow_symlinks=False)  # its age is counted from now (a link's own)
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
