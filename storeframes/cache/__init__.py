"""The cache: raw answers, the index of what they cover, Parquet frames and the ledger.

See :mod:`storeframes.cache._core` for the layout of a cache and its formats.
"""

from __future__ import annotations

from typing import Any

from ..answers import REFRESH_MODES, Entry, Refresh, RefreshOption
from . import _core
from ._core import CLOCK_SKEW, FORMAT, MARKER, Cache, CacheWarning, _polars_writes_arrow_schema
from .opening import ENV_CACHE_DIR, default_cache_dir, open_cache
from .stores import is_url

__all__ = [
    "CLOCK_SKEW",
    "ENV_CACHE_DIR",
    "FORMAT",
    "MARKER",
    "REFRESH_MODES",
    "Cache",
    "CacheWarning",
    "Entry",
    "Refresh",
    "RefreshOption",
    "_polars_writes_arrow_schema",
    "default_cache_dir",
    "is_url",
    "open_cache",
]


def __getattr__(name: str) -> Any:
    if name == "INDEX_SCHEMA":  # the Arrow schema of an index file, without importing pyarrow with the package
        return _core._index_schema()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
