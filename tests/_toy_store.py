"""A toy storage backend, as a user would add one: this module and one ``register`` line.

It keeps values in a dict shared by every store of the same address (so two caches at
``toy://team`` in one process see each other's files), dated by a clock the test moves,
and writes conditionally with a version counter, so it declares conditional writes and
leases as objects.
"""

from __future__ import annotations

import builtins
import errno
import itertools
import threading
import time
from collections.abc import Callable
from typing import Any

from storeframes.cache.stores import Capabilities, StoreBase, Usage, Version, check_key

_SPACES: dict[str, tuple[threading.Lock, dict[str, tuple[bytes, float, int]]]] = {}
_VERSIONS = itertools.count(1)


class ToyStore(StoreBase):
    capabilities = Capabilities(conditional_writes=True, shared="process", leases="objects")

    def __init__(self, address: str, *, storage_options: Any = None, clock: Callable[[], float] = time.time):
        self.address, self.clock = address, clock
        self._lock, self._values = _SPACES.setdefault(address, (threading.Lock(), {}))

    def __repr__(self) -> str:
        return f"ToyStore({self.address!r})"

    @property
    def location(self) -> str:
        return self.address

    def _version(self, key: str) -> Version | None:
        found = self._values.get(key)
        return None if found is None else Version(key, len(found[0]), found[1], str(found[2]), None)

    def put(self, key: str, data: bytes) -> None:
        with self._lock:
            self._values[check_key(key)] = (bytes(data), self.clock(), next(_VERSIONS))

    def put_if_absent(self, key: str, data: bytes) -> bool:
        return self.create(key, data) is not None

    def get(self, key: str) -> bytes:
        with self._lock:
            found = self._values.get(check_key(key))
        if found is None:
            raise FileNotFoundError(errno.ENOENT, f"no value under {key!r}", key)
        return found[0]

    def list(self, prefix: str = "") -> builtins.list[str]:
        check_key(prefix, prefix=True)
        with self._lock:
            return sorted(k for k in self._values if k.startswith(prefix) and not k.endswith(".corrupt"))

    def delete(self, key: str) -> None:
        with self._lock:
            self._values.pop(check_key(key), None)

    def mtime(self, key: str) -> float | None:
        with self._lock:
            found = self._values.get(check_key(key))
        return None if found is None else found[1]

    def set_aside(self, key: str) -> bool:
        with self._lock:
            found = self._values.pop(check_key(key), None)
            if found is None:
                return False
            self._values[key + ".corrupt"] = (found[0], self.clock(), next(_VERSIONS))
            return True

    def sweep(
        self, older_than_seconds: float, *, prefix: str = "", set_aside_older_than_seconds: float | None = None
    ) -> int:
        check_key(prefix, prefix=True)
        age = older_than_seconds if set_aside_older_than_seconds is None else set_aside_older_than_seconds
        now = self.clock()
        with self._lock:
            old = [
                k
                for k, (_, at, _) in self._values.items()
                if k.startswith(prefix) and k.endswith(".corrupt") and (age <= 0 or now - at >= age)
            ]
            for key in old:
                del self._values[key]
        return len(old)

    def usage(self, prefix: str = "") -> Usage:
        check_key(prefix, prefix=True)
        with self._lock:
            items = [(k, v) for k, (v, _, _) in self._values.items() if k.startswith(prefix)]
        return Usage(sum(len(v) for _, v in items), sum(k.endswith(".corrupt") for k, _ in items))

    def head(self, key: str) -> Version | None:
        with self._lock:
            return self._version(check_key(key))

    def create(self, key: str, data: bytes) -> Version | None:
        with self._lock:
            if check_key(key) in self._values:
                return None
            self._values[key] = (bytes(data), self.clock(), next(_VERSIONS))
            return self._version(key)

    def replace(self, key: str, data: bytes, expected: Version) -> Version | None:
        with self._lock:
            if self._version(check_key(key)) != expected:
                return None
            self._values[key] = (bytes(data), self.clock(), next(_VERSIONS))
            return self._version(key)
