"""The stores a cache can live in, one module each, and the registry from an address to its store.

* a folder: :class:`~storeframes.cache.stores.local.LocalStore` (a path, or ``file://``);
* this process's memory: :class:`~storeframes.cache.stores.memory.MemoryStore`;
* a bucket: :class:`~storeframes.cache.stores.bucket.ObjectStore` (``s3://``, ``s3a://``, ``gs://``,
  ``az://``, ``abfs://``, ``abfss://``, ``azure://``, ``adl://``; needs the ``s3`` extra).

:func:`store_for` turns what a user gives as a cache's place (a folder path, an address, a
store) into a store. An address is looked up by its scheme in the registry, which imports
the store's module only when an address needs it, and names the extra to install when
the module's package is missing, the way fsspec's registry does. A new backend is one
module (a :class:`~storeframes.cache.stores.base.StoreBase` with the operations and its
:class:`~storeframes.cache.stores.base.Capabilities`) and one :func:`register` line::

    register("mem", "my_package.stores:MyStore", extra="my-extra")

Nothing outside :mod:`storeframes.cache` imports a store's module: it goes through here
or through :func:`storeframes.cache.open_cache`.
"""

from __future__ import annotations

import builtins
import importlib
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..._version import install_hint
from ...errors import ConfigurationError, shown_when_half_built
from .base import Capabilities, NotAFileError, Store, StoreBase, SweepError, Usage, Version, check_key
from .local import LocalStore
from .memory import MemoryStore

__all__ = [
    "Capabilities",
    "LocalStore",
    "MemoryStore",
    "NotAFileError",
    "Store",
    "StoreBase",
    "SweepError",
    "Usage",
    "Version",
    "check_key",
    "is_url",
    "register",
    "registered",
    "store_for",
]

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def is_url(text: str) -> bool:
    """Whether ``text`` is a storage address (``s3://bucket/prefix``, ``gs://...``) rather than a folder."""
    return bool(_URL.match(text))


@dataclass(frozen=True)
class _Backend:
    """A registered store: where its class is (``module:Class``, imported when first used) or a factory,
    and the extra of storeframes that installs what it needs."""

    target: str | Callable[..., StoreBase]
    extra: str | None

    def make(self, address: str, storage_options: Mapping[str, Any] | None) -> StoreBase:
        factory = self.target
        if isinstance(factory, str):
            module, _, name = factory.partition(":")
            try:
                factory = getattr(importlib.import_module(module), name)
            except ModuleNotFoundError as exc:
                if self.extra is None or not (exc.name or "").split(".")[0] or exc.name == module:
                    raise
                raise ImportError(
                    f"a cache at {address.split('://')[0]}:// needs {exc.name}: {install_hint(self.extra)}"
                ) from None
        if storage_options is None:
            return factory(address)
        return factory(address, storage_options=storage_options)


def _local(address: str, storage_options: Mapping[str, Any] | None = None) -> LocalStore:
    """A folder named by a ``file://`` address (storage options mean nothing to a folder)."""
    return LocalStore(address[len("file://") :])


_REGISTRY: dict[str, _Backend] = {}


def register(schemes: str | Iterable[str], target: str | Callable[..., StoreBase], *, extra: str | None = None) -> None:
    """Make addresses of ``schemes`` (``"s3"`` or several) open with ``target``: a ``"module:Class"`` text,
    imported when an address first needs it, or a callable ``target(address, storage_options=...)``.
    ``extra`` names the extra of storeframes to install when the module's package is missing. A scheme
    registered again is replaced."""
    for scheme in [schemes] if isinstance(schemes, str) else schemes:
        _REGISTRY[scheme.lower()] = _Backend(target, extra)


def registered() -> builtins.list[str]:
    """The address schemes a cache can live at, sorted."""
    return sorted(_REGISTRY)


register("file", _local)
register(
    ("s3", "s3a", "gs", "az", "abfs", "abfss", "azure", "adl"),
    "storeframes.cache.stores.bucket:ObjectStore",
    extra="s3",
)


class _Undeclared(StoreBase):
    """A store written for an earlier version (the operations of :class:`Store`, no declaration): its
    operations as they are, declared as a store that can do nothing special."""

    def __init__(self, store: Store):
        self.store = store

    @shown_when_half_built
    def __repr__(self) -> str:
        return repr(self.store)

    def put(self, key: str, data: bytes) -> None:
        self.store.put(key, data)

    def put_if_absent(self, key: str, data: bytes) -> bool:
        return self.store.put_if_absent(key, data)

    def get(self, key: str) -> bytes:
        return self.store.get(key)

    def list(self, prefix: str = "") -> builtins.list[str]:
        return self.store.list(prefix)

    def delete(self, key: str) -> None:
        self.store.delete(key)

    def mtime(self, key: str) -> float | None:
        return self.store.mtime(key)

    def set_aside(self, key: str) -> bool:
        return self.store.set_aside(key)

    def sweep(
        self, older_than_seconds: float, *, prefix: str = "", set_aside_older_than_seconds: float | None = None
    ) -> int:
        return self.store.sweep(
            older_than_seconds, prefix=prefix, set_aside_older_than_seconds=set_aside_older_than_seconds
        )

    def usage(self, prefix: str = "") -> Usage:
        return self.store.usage(prefix)


def store_for(where: str | os.PathLike[str] | Store, storage_options: Mapping[str, Any] | None = None) -> StoreBase:
    """The store of a cache placed at ``where``: a folder path, an address of a registered scheme
    (``s3://bucket/prefix``; ``storage_options`` go with it), or a store (taken as it is).

    >>> store_for("/tmp/cache")
    LocalStore('/tmp/cache')
    >>> store_for("ftp://host/cache")
    Traceback (most recent call last):
    ...
    ValueError: not a cache address: 'ftp://host/cache' (unknown scheme 'ftp'; a folder path, or one of abfs, abfss, adl, az, azure, file, gs, s3, s3a)
    """
    if isinstance(where, str) and (found := _URL.match(where)):
        backend = _REGISTRY.get(found.group(1).lower())
        if backend is None:
            shown = where if "@" not in where else f"{found.group(0)}***"
            raise ValueError(
                f"not a cache address: {shown!r} (unknown scheme {found.group(1)!r}; "
                f"a folder path, or one of {', '.join(registered())})"
            )
        return backend.make(where, storage_options)
    if storage_options is not None:
        raise TypeError("storage_options= goes with a bucket address (s3://bucket/prefix), not a folder or a Store")
    if isinstance(where, str) and not where.strip():
        raise ConfigurationError(f"{where!r} is no cache folder (it would be the current folder): give a folder path")
    if isinstance(where, (str, os.PathLike)):
        return LocalStore(where)
    if isinstance(where, StoreBase):
        return where
    if isinstance(where, Store):
        return _Undeclared(where)
    raise TypeError(f"a cache lives in a folder path, a bucket address or a Store, got {where!r}")
