"""The store contract: where a cache keeps its bytes, and what each kind of store declares it can do.

:class:`~storeframes.cache.Cache` knows the layout (answers, index, frames, ledger),
the file formats and the rules of freshness; a store only keeps values under
'/'-separated keys such as ``answers/endpoint=metadata/<entry>.json.zst``. Three stores
ship, one module each in :mod:`storeframes.cache.stores`: a folder
(:class:`~storeframes.cache.stores.local.LocalStore`, a key is a file path under it, so
the folder is the same plain Parquet dataset as ever), a dict in memory
(:class:`~storeframes.cache.stores.memory.MemoryStore`, for tests and throwaway caches)
and a bucket (:class:`~storeframes.cache.stores.bucket.ObjectStore`: S3, Google Cloud
Storage, Azure). Anything else with the same operations can hold a cache too: the
operations are few, and each is one or a few object-store requests (``put_if_absent`` a
conditional PUT, ``set_aside`` a copy and a delete, ``list`` and ``usage`` a paged
listing, ``sweep`` one and its deletes).

What a store can do beyond the operations is **declared** on it, as its
:class:`Capabilities`: whether its files lie in a folder of this machine (read in place),
whether :meth:`Store.open` reads byte ranges, whether its writes can be conditional,
who else sees it, and which leases suit it. The cache and the coordinators read the
declaration; they never test a store's class. :class:`StoreBase` gives a new store the
defaults (nothing special, :meth:`~StoreBase.open` built on ``get``), so a new backend is
one module of the operations plus one line of the registry
(:func:`storeframes.cache.stores.register`).

Every operation reports a failure of the storage as an :class:`OSError` (a missing
value as :class:`FileNotFoundError`), and refuses a malformed key with a
:class:`ValueError`.
"""

from __future__ import annotations

import builtins
import io
import stat
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NamedTuple, Protocol, runtime_checkable

__all__ = ["Capabilities", "NotAFileError", "Store", "StoreBase", "SweepError", "Usage", "Version", "check_key"]

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


class NotAFileError(OSError):
    """What stands under a key of a folder is not a regular file (a named pipe, a device, a socket, a link): it
    is never read nor followed, so it can neither hang a reader nor feed it without end."""

    def __init__(self, key: str, what: str):
        super().__init__(f"{what}, not a regular file: never read")
        self.key = key
        self.what = what

    @classmethod
    def of(cls, key: str, mode: int) -> NotAFileError:
        """The error of ``key`` whose file has ``mode`` (as ``os.lstat`` gives it), naming what the file is."""
        for test, what in (
            (stat.S_ISLNK, "a symbolic link"),
            (stat.S_ISFIFO, "a named pipe"),
            (stat.S_ISCHR, "a character device"),
            (stat.S_ISBLK, "a block device"),
            (stat.S_ISSOCK, "a socket"),
        ):
            if test(mode):
                return cls(key, what)
        return cls(key, "a special file")


class Usage(NamedTuple):
    """What a store holds: its size in bytes (values, set-aside values and temporary
    files alike) and how many values are set aside."""

    size: int
    set_aside: int


class Version(NamedTuple):
    """What a look at one value (a HEAD) or a conditional write tells of it: its key, size, time of writing
    (POSIX seconds, by the store's clock) and the tags a conditional write compares (``e_tag``, ``version``)."""

    key: str
    size: int
    modified: float
    e_tag: str | None
    version: str | None


Sharing = Literal["process", "machine", "everyone"]
LeaseKind = Literal["process", "files", "objects", "coordinator"]


@dataclass(frozen=True)
class Capabilities:
    """What a store can do beyond the operations of :class:`Store`, declared by the store itself.

    >>> from storeframes.cache.stores import MemoryStore
    >>> MemoryStore().capabilities.shared
    'process'
    """

    local_root: Path | None = None
    """The folder of this machine holding the values as files (a key is a path under it): the cache reads
    them in place (memory-mapped, scanned by polars). None when the values are elsewhere."""
    ranged_reads: bool = False
    """:meth:`Store.open` reads only the byte ranges asked for (a file, a bucket's object), so a row group of
    a large Parquet file is read without fetching all of it. Without it ``open`` may fetch the whole value."""
    conditional_writes: bool = False
    """:meth:`StoreBase.head`, :meth:`StoreBase.create` and :meth:`StoreBase.replace` work, atomically for
    everyone who sees the store: of several writers exactly one wins. (:meth:`Store.put_if_absent` has one
    winner on every store; it says nothing of versions.)"""
    shared: Sharing = "everyone"
    """Who else sees the values: this process only, the processes of this machine, or every machine that
    names the store."""
    leases: LeaseKind = "coordinator"
    """The leases (single flight) that suit the store when no Redis coordinator is configured: ``"process"``,
    the threads of this process only (nobody else sees the store); ``"files"``, lock files in
    ``local_root / "leases"``; ``"objects"``, objects of the store itself written conditionally;
    ``"coordinator"``, none of its own: callers elsewhere need a shared coordinator (Redis)."""


@runtime_checkable
class Store(Protocol):
    """The operations the cache needs from the place it keeps its files.

    Keys are relative '/'-separated names (see :func:`check_key`). A value is bytes,
    written whole: no operation ever shows part of one.

    What the store can do beyond these operations is declared in its :attr:`capabilities`;
    :class:`StoreBase` gives the defaults and the operations built on others (:meth:`open`
    on :meth:`get`). :func:`isinstance` checks the operations below, not the declaration:
    a store written for an earlier version (the operations alone) is taken as it is by
    :func:`storeframes.cache.stores.store_for`, which declares nothing special for it.
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


class StoreBase(ABC):
    """What every shipped store inherits, and a new one may: the declaration of a store that can do nothing
    special (:class:`Capabilities` ``()``), :meth:`open` built on ``get``, and conditional writes refused.

    A subclass implements the operations of :class:`Store` and declares what it can do by
    setting :attr:`capabilities` (a class attribute, or a property where it can change).
    """

    capabilities: Capabilities = Capabilities()
    """What the store can do beyond the operations of :class:`Store`."""

    @property
    def location(self) -> str:
        """Where the store keeps its values, for people: a folder, ``"memory"``, ``s3://bucket/prefix``."""
        return repr(self)

    # the operations of :class:`Store` (documented there), which every store implements
    @abstractmethod
    def put(self, key: str, data: bytes) -> None: ...

    @abstractmethod
    def put_if_absent(self, key: str, data: bytes) -> bool: ...

    @abstractmethod
    def get(self, key: str) -> bytes: ...

    @abstractmethod
    def list(self, prefix: str = "") -> builtins.list[str]: ...

    @abstractmethod
    def delete(self, key: str) -> None: ...

    @abstractmethod
    def mtime(self, key: str) -> float | None: ...

    @abstractmethod
    def set_aside(self, key: str) -> bool: ...

    @abstractmethod
    def sweep(
        self, older_than_seconds: float, *, prefix: str = "", set_aside_older_than_seconds: float | None = None
    ) -> int: ...

    @abstractmethod
    def usage(self, prefix: str = "") -> Usage: ...

    def open(self, key: str) -> io.IOBase:
        """A read-only, seekable binary file of the value under ``key``; :class:`FileNotFoundError` when there is
        none. Here the whole value, got at once; a store with :attr:`Capabilities.ranged_reads` reads ranges."""
        return io.BytesIO(self.get(key))

    def locate(self, keys: Iterable[str]) -> tuple[builtins.list[str], dict[str, str] | None]:
        """What :func:`polars.scan_parquet` reads to see the values of ``keys`` in place: their addresses (file
        paths, ``s3://`` URLs) and the ``storage_options`` polars needs (None for files).
        :class:`NotImplementedError` where polars cannot read the values (in this process's memory)."""
        raise NotImplementedError(f"{self.location}: polars cannot read the values of this store in place")

    def odd_keys(self) -> builtins.list[str]:
        """The keys its listings passed over, sorted: what it holds that the cache never writes and the store cannot
        give as a value (names with an empty, ``.`` or ``..`` part in a bucket; links and special files in a
        folder). The cache reports each once. Here none."""
        return []

    def explain(self, error: OSError) -> str:
        """What most likely caused ``error`` of one of this store's operations, and the settings that decide it,
        for people (never a credential). Here what the error says of itself; a store that knows better says more."""
        return error.strerror or type(error).__name__

    def _no_conditional_writes(self, operation: str, key: str) -> OSError:
        return OSError(f"{self.location}: cannot {operation} {key!r}: this store does not write conditionally")

    def head(self, key: str) -> Version | None:
        """What the value under ``key`` is now (its version), or None when there is none. Where the store
        writes conditionally (:attr:`Capabilities.conditional_writes`); else an :class:`OSError`."""
        raise self._no_conditional_writes("look at", key)

    def create(self, key: str, data: bytes) -> Version | None:
        """Write ``data`` under ``key`` unless a value is there: the new version, or None (nothing written)
        when there was one. Of several writers racing on one key exactly one gets a version."""
        raise self._no_conditional_writes("create", key)

    def replace(self, key: str, data: bytes, expected: Version) -> Version | None:
        """Write ``data`` under ``key`` if its value still is ``expected``: the new version, or None (nothing
        written) when it changed or went."""
        raise self._no_conditional_writes("replace", key)


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
