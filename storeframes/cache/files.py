"""The store as the cache's parts use it: one lock, listing, reading footers and files, the marker,
setting an unreadable file aside, and reporting each trouble once.

There is one way to read part of a file, by what the store declares
(:class:`~storeframes.cache.stores.Capabilities`): in place where its files lie in a folder of
this machine (``local_root``: memory-mapped, or scanned by polars), else through the store's
``open`` (in byte ranges where the store reads them so, else the whole value).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import secrets
import stat
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import polars as pl

from .._version import __version__
from ..errors import CacheUnavailableError, warn
from .layout import ANSWERS, FORMAT, MARKER, foreign, name
from .parquet import cannot_reach, footer, newer_format, unreadable
from .stores import NotAFileError, StoreBase


class CacheWarning(UserWarning):
    """A cache file could not be read or written; the call went on without it."""


PROBE = "leases/probe-"
"""Where :meth:`Files.probe` writes (and removes) its small object: beside the leases, under the cache's prefix."""
_WRITABLE: set[str] = set()
"""The stores this process found writable (by their location): each is probed once."""
_PASSED: dict[str, set[str]] = {}
"""The objects each cache (by its location) was found to hold that storeframes did not write, reported once
per process each."""
_PASSED_LOCK = threading.Lock()
_NAMED = 20
"""How many such objects of one cache are named in a warning each; beyond them, one warning says there are more."""
_HINT = (
    "nothing was sent. Give cache_dir= (or STOREFRAMES_CACHE_DIR) a cache this process can write, "
    "cache_dir=False to fetch without one, or offline=True to read what it holds"
)


class Files:
    """The files of one cache in its store, and what the cache's parts share about them.

    ``lock`` guards the state every part keeps in memory (one lock for the whole cache,
    taken again by the thread that holds it); ``newer`` and ``newer_files`` are the
    entries and index files a newer storeframes wrote, left alone by every part.
    """

    def __init__(self, storage: StoreBase):
        self.storage = storage
        self.path: Path | None = storage.capabilities.local_root
        """The folder of this machine holding the store's files (read in place); None for another store."""
        self.lock = threading.RLock()
        self.newer: set[str] = set()  # entries of a newer format: left alone
        self.newer_files: set[str] = set()  # index files of a newer format: never merged nor removed
        self._marked = False  # the marker is known to be there
        self._warned: set[str] = set()  # what was reported once already
        self._unlisted: dict[str, OSError] = {}  # the prefixes whose last listing failed, with the error

    @property
    def location(self) -> str:
        """Where the cache lives, for people: its folder, ``"memory"``, or the store's address."""
        return self.storage.location

    @property
    def private(self) -> bool:
        """Whether only this process sees the store (it holds nothing but the cache's files)."""
        return self.storage.capabilities.shared == "process"

    def warn_once(self, topic: str, message: str) -> None:
        """Report ``message`` with a :class:`CacheWarning`, once per ``topic`` for this cache."""
        with self.lock:
            if topic in self._warned:
                return
            self._warned.add(topic)
        warn(message, CacheWarning)

    def keys(self, prefix: str) -> list[str]:
        """The store's keys under ``prefix``; none, with a warning, when it cannot be listed."""
        listed = self.listing(prefix)
        return listed if listed is not None else []

    def listing(self, prefix: str, *, what: str = "files") -> list[str] | None:
        """The store's keys under ``prefix``; None, with a warning, when it cannot be listed (its ``what``
        cannot be read then: an index that cannot be listed stops a call that would pay, see
        :meth:`cannot_list`)."""
        try:
            listed = self.storage.list(prefix)
        except OSError as exc:
            with self.lock:
                self._unlisted[prefix] = exc
            self.warn_once(
                f"list {prefix}",
                f"cannot list {prefix} in the cache at {self.location} ({exc}); its {what} cannot be read until it can",
            )
            return None
        with self.lock:
            self._unlisted.pop(prefix, None)
        for key in self.storage.odd_keys():
            reason = foreign(key)
            if reason is not None:
                self.pass_over(key, reason)
            else:  # a link, a named pipe...: never read, never followed
                self.pass_over(
                    key,
                    f"cache file {key} is unreadable ({self._what(key)}, not a regular file: never read); storeframes "
                    "did not write it: it is passed over, and set aside where the cache reads a file of that name",
                    said=True,
                )
        return self.ours(listed)

    def _what(self, key: str) -> str:
        """What stands under ``key`` in the cache's folder that is not a regular file (a symbolic link...)."""
        if self.path is None:
            return "not a value"
        try:
            return NotAFileError.of(key, os.lstat(self.path.joinpath(*key.split("/"))).st_mode).what
        except OSError:
            return "gone since"

    def ours(self, keys: list[str]) -> list[str]:
        """``keys`` (of a listing) without those storeframes never writes (see
        :func:`~storeframes.cache.layout.foreign`): each of those is passed over, reported once."""
        kept = []
        for key in keys:
            reason = foreign(key)
            if reason is None:
                kept.append(key)
            else:
                self.pass_over(key, reason)
        return kept

    def pass_over(self, key: str, reason: str, *, said: bool = False) -> None:
        """Report once per process that the store holds ``key``, which storeframes did not write (``reason``, or
        the whole message when ``said``): it is never read, moved nor removed. The first :data:`_NAMED` of a
        cache are named, then one says there are more."""
        with _PASSED_LOCK:
            seen = _PASSED.setdefault(self.location, set())
            if key in seen:
                return
            seen.add(key)
            count = len(seen)
        if count <= _NAMED:
            message = (
                reason
                if said
                else (
                    f"the cache at {self.location} holds {key!r}, which storeframes did not write ({reason}): it was "
                    "passed over and left where it is; remove it"
                )
            )
        elif count == _NAMED + 1:
            message = (
                f"the cache at {self.location} holds more objects storeframes did not write than the {_NAMED} named: "
                "they are passed over and left where they are, and not reported one by one"
            )
        else:
            return
        warn(message, CacheWarning)

    def listed(self, prefix: str) -> bool:
        """Whether the last listing of ``prefix`` (if any) succeeded."""
        with self.lock:
            return prefix not in self._unlisted

    def cannot_list(self, prefix: str) -> CacheUnavailableError:
        """The error of a call that would pay for what ``prefix`` may hold, which could not be listed."""
        with self.lock:
            error = self._unlisted.get(prefix)
        cause = f" ({error}); likely cause: {self.storage.explain(error)}" if error is not None else ""
        return CacheUnavailableError(
            f"cannot list {prefix} in the cache at {self.location}{cause}; nothing was sent: what it holds "
            "cannot be told, and fetching would pay again for it. Fix the access, or give cache_dir=False to "
            "fetch without the cache",
            location=self.location,
            operation="list",
        )

    # -- whether answers can be kept ------------------------------------------------------

    def probe(self) -> None:
        """Check that the store takes a write, before the first request a call would pay for: a small object
        written under the cache's prefix and removed, once per store and process. A
        :class:`~storeframes.CacheUnavailableError` when it cannot be written; a store only this process
        sees needs no look."""
        if self.private or self.location in _WRITABLE:
            return
        key = PROBE + secrets.token_hex(8)
        try:
            self.storage.put(key, b"storeframes checks that it can keep answers here; this object is removed\n")
            failure = None
        except OSError as exc:
            failure = self.unavailable("write", exc, before=True)
        if failure is not None:
            raise failure  # outside the except: the store's error is in the message, its frames are not kept
        with contextlib.suppress(OSError):  # a store that takes writes but no deletes still keeps answers
            self.storage.delete(key)
        _WRITABLE.add(self.location)

    def unavailable(self, operation: str, error: OSError, *, before: bool = False) -> CacheUnavailableError:
        """The error of a store that failed to ``operation``: where, what, the likely cause and what to set."""
        _WRITABLE.discard(self.location)
        what = _HINT if before else "the call stopped after the requests in flight (error.partial holds their answers)"
        return CacheUnavailableError(
            f"the cache at {self.location} cannot keep answers: {operation} failed ({error}); likely cause: "
            f"{self.storage.explain(error)}; {what}",
            location=self.location,
            operation=operation,
        )

    # -- what makes a cache -------------------------------------------------------------

    def mark(self) -> None:
        """Write the marker (:data:`~storeframes.cache.layout.MARKER`) unless it is there: before the
        first file this cache writes. A store only this process sees needs none."""
        if self._marked or self.private:
            return
        body = json.dumps({"format": FORMAT, "written_by": f"storeframes {__version__}"}).encode()
        with contextlib.suppress(OSError):  # a store that cannot take it cannot take the file that follows either
            try:
                self.storage.put_if_absent(MARKER, body)
            except OSError:  # a bucket without conditional writes
                try:
                    self.storage.get(MARKER)
                except FileNotFoundError:
                    self.storage.put(MARKER, body)
            self._marked = True

    def is_cache(self, *, mark: bool = False) -> bool:
        """Whether the store holds a storeframes cache (see :meth:`storeframes.cache.Cache.is_cache`)."""
        if self.private:
            return True
        try:
            self.storage.get(MARKER)
            self._marked = True
            return True
        except FileNotFoundError:
            pass
        except OSError:  # there, but unreadable: its name is the cache's
            return True
        if not self._has_layout():
            return False
        if mark:
            self.mark()
        return True

    def _has_layout(self) -> bool:
        for key in self.keys("ledger/"):
            if key.count("/") == 1 and key.endswith(".parquet"):
                return True
        for kind, suffix in (("index", (".parquet",)), ("answers", ANSWERS)):
            for key in self.keys(f"{kind}/"):
                parts = key.split("/")
                if len(parts) == 3 and parts[1].startswith("endpoint=") and parts[2].endswith(suffix):
                    return True
        return False

    # -- files that cannot be read ------------------------------------------------------

    def set_aside(self, key: str, reason: BaseException | str | None, *, partners: Iterable[str] = ()) -> None:
        """Set an unreadable file aside as ``<name>.corrupt``, and ``partners`` (the other file
        of the same entry, under each name it may have) with it; warn once, unless ``reason``
        is None or another process set the file aside first.

        A file that could not be reached (no permission, a folder where it should be) is
        not moved: it is reported once and treated as not cached where it is.
        """
        called = name(key)
        with _PASSED_LOCK:
            if key in _PASSED.get(self.location, ()):
                reason = None  # reported once already, when a listing passed over it
        if isinstance(reason, BaseException) and cannot_reach(reason):
            self.warn_once(
                f"read {key}", f"cannot read cache file {called} ({reason}); treated as not cached and left where it is"
            )
            return
        for partner in partners:
            with contextlib.suppress(OSError):
                self.storage.set_aside(partner)
        try:
            moved = self.storage.set_aside(key)
        except OSError as exc:
            if reason is not None:
                self.warn_once(
                    f"read {key}",
                    f"cache file {called} is unreadable ({reason}) and could not be set aside ({exc}); "
                    "treated as not cached",
                )
            return
        if not moved:
            if reason is not None and self.is_folder(key):
                self.warn_once(
                    f"read {key}", f"cache file {called} is a folder; treated as not cached, left where it is"
                )
            return
        if reason is not None:
            warn(
                f"cache file {called} is unreadable ({reason}); set aside as {called}.corrupt and treated as not cached",
                CacheWarning,
            )

    def is_folder(self, key: str) -> bool:
        """Whether a folder of the cache's folder stands where the file ``key`` should be."""
        return self.path is not None and os.path.isdir(self.path.joinpath(*key.split("/")))

    def skip_newer(self, key: str, entry_id: str | None = None) -> None:
        """Leave a file a newer storeframes wrote where it is, as not cached; say so once."""
        with self.lock:
            self.newer_files.add(key)
            if entry_id is not None:
                self.newer.add(entry_id)
        self.warn_once(
            "newer",
            f"cache file {name(key)} was written by a newer storeframes (this is {__version__}); it is left "
            "where it is and treated as not cached, as are other files of newer versions (not reported again)",
        )

    # -- reading files --------------------------------------------------------------------

    def local(self, key: str) -> Path | None:
        """The file of ``key`` in the cache's folder; None for another store. Raises FileNotFoundError
        when there is none, IsADirectoryError for a folder, and
        :class:`~storeframes.cache.stores.NotAFileError` for what is not a regular file (a link, a named
        pipe, a device): never followed nor opened."""
        if self.path is None:
            return None
        path = self.path.joinpath(*key.split("/"))
        try:
            mode = os.lstat(path).st_mode
        except (FileNotFoundError, NotADirectoryError):
            raise FileNotFoundError(key) from None
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(key)
        if not stat.S_ISREG(mode):
            raise NotAFileError.of(key, mode)
        return path

    def read(self, key: str, most: int) -> bytes:
        """The bytes of ``key``, a file of at most ``most`` bytes: a larger one is a ValueError, refused
        before it is read where the store's files lie in a folder of this machine."""
        if self.path is not None:
            with contextlib.suppress(OSError):  # not there, or not a file: the store's get says so
                found = os.lstat(self.path.joinpath(*key.split("/")))
                if stat.S_ISREG(found.st_mode) and found.st_size > most:
                    raise ValueError(f"it holds {found.st_size:,} bytes, more than the {most:,} it may hold")
        data = self.storage.get(key)
        if len(data) > most:
            raise ValueError(f"it holds {len(data):,} bytes, more than the {most:,} it may hold")
        return data

    def rows_of(self, key: str) -> tuple[dict[str, str], int, list[int]]:
        """The key-value metadata, the rows and the rows of each row group of a Parquet file of the store, from its
        footer alone (none of its rows read): in place from a folder, in ranges from a bucket, else from the
        whole value."""
        import pyarrow.parquet as pq

        path = self.local(key)
        found = pq.read_metadata(str(path) if path is not None else self.open(key))
        groups = [found.row_group(i).num_rows for i in range(found.num_row_groups)]
        return footer(found.metadata), found.num_rows, groups

    def footer_of(self, key: str) -> tuple[dict[str, str], pl.Schema]:
        """The key-value metadata and the columns (as polars reads them) of a Parquet file of the store,
        from its footer alone: read in place from a folder, else through the store's ``open`` (in ranges
        where the store reads them so)."""
        path = self.local(key)
        if path is not None:
            return pl.read_parquet_metadata(path), pl.Schema(pl.read_parquet_schema(path))
        import pyarrow as pa
        import pyarrow.parquet as pq

        found = pq.read_metadata(self.open(key))
        empty = pa.Table.from_batches([], schema=found.schema.to_arrow_schema())
        return footer(found.metadata), pl.DataFrame(empty).schema

    def open(self, key: str) -> Any:
        """A file to read ``key`` from with pyarrow: memory-mapped in place from a folder, else the store's
        ``open`` (in ranges where the store reads them so, else the whole value)."""
        import pyarrow as pa

        path = self.local(key)  # a regular file: a named pipe would hang the mapping
        if path is not None:
            try:
                return pa.memory_map(str(path))
            except (FileNotFoundError, NotADirectoryError):
                raise FileNotFoundError(key) from None
            except pa.ArrowException as exc:
                raise OSError(str(exc)) from None
        return pa.PythonFile(self.storage.open(key), mode="r")

    def read_tables(self, keys: Iterable[str], schema: pl.Schema) -> list[pl.DataFrame]:
        """The small Parquet files ``keys`` (a run log's rows, a day's events), each read whole and
        cast to ``schema`` (a column it lacks is null): one gone meanwhile is skipped, one of a newer
        format left alone, one that cannot be read set aside."""
        frames: list[pl.DataFrame] = []
        for key in keys:
            try:
                data = self.storage.get(key)
                import pyarrow as pa
                import pyarrow.parquet as pq

                with pq.ParquetFile(pa.BufferReader(data)) as handle:
                    if newer_format(footer(handle.metadata.metadata)):
                        self.skip_newer(key)
                        continue
                frame = pl.read_parquet(io.BytesIO(data))
                frames.append(
                    frame.select(
                        [
                            pl.col(n).cast(t) if n in frame.columns else pl.lit(None, t).alias(n)
                            for n, t in schema.items()
                        ]
                    )
                )
            except FileNotFoundError:
                continue
            except unreadable() as exc:
                self.set_aside(key, exc)
        return frames
