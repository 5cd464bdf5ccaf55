"""A cache in this process's memory: :class:`MemoryStore`, for tests and throwaway caches."""

from __future__ import annotations

import builtins
import errno
import itertools
import threading
import time
from collections.abc import Callable, Iterable

from ...errors import shown_when_half_built
from .base import Capabilities, StoreBase, Usage, Version, _old, check_key

__all__ = ["MemoryStore"]


class MemoryStore(StoreBase):
    """A dict under a lock: for tests and caches that need not outlive the process.

    Writes are atomic by the lock, so there are never temporary files. ``clock``
    (POSIX seconds, :func:`time.time` by default) dates what is written and set aside.
    """

    def __init__(self, *, clock: Callable[[], float] = time.time):
        self._clock = clock
        self._lock = threading.Lock()
        self._values: dict[str, tuple[bytes, float]] = {}
        self._aside: dict[str, tuple[bytes, float]] = {}  # by the key the value had
        self._serial = itertools.count(1)
        self._serials: dict[str, int] = {}  # the version of each value written conditionally

    capabilities = Capabilities(shared="process", leases="process", conditional_writes=True)
    """Only this process sees it; its writes, conditional ones too, are atomic under its lock."""

    @shown_when_half_built
    def __repr__(self) -> str:
        return f"MemoryStore({len(self._values)} values)"

    @property
    def location(self) -> str:
        return "memory"

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

    def head(self, key: str) -> Version | None:
        with self._lock:
            return self._version(check_key(key))

    def _version(self, key: str) -> Version | None:
        value = self._values.get(key)
        return None if value is None else Version(key, len(value[0]), value[1], str(self._serials.get(key)), None)

    def create(self, key: str, data: bytes) -> Version | None:
        check_key(key)
        with self._lock:
            if key in self._values:
                return None
            self._values[key] = (bytes(data), self._clock())
            self._serials[key] = next(self._serial)
            return self._version(key)

    def replace(self, key: str, data: bytes, expected: Version) -> Version | None:
        check_key(key)
        with self._lock:
            if self._version(key) != expected:
                return None
            self._values[key] = (bytes(data), self._clock())
            self._serials[key] = next(self._serial)
            return self._version(key)

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
