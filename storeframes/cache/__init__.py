"""The cache: raw answers, the index of what they cover, Parquet frames and the ledger.

See :mod:`storeframes.cache.layout` for the layout of a cache and its formats; :class:`Cache` puts
its parts together (:mod:`~storeframes.cache.index`, :mod:`~storeframes.cache.answer_files`,
:mod:`~storeframes.cache.frame_files`, :mod:`~storeframes.cache.ledger_files`, :mod:`~storeframes.cache.run_files`,
:mod:`~storeframes.cache.compaction`, :mod:`~storeframes.cache.upkeep`) over the store's files
(:mod:`~storeframes.cache.files`) and their bytes (:mod:`~storeframes.cache.parquet`).
"""

from __future__ import annotations

from typing import Any

from ..answers import CLOCK_SKEW, REFRESH_MODES, Entry, Refresh, RefreshOption
from ._core import Cache
from .event_files import EVENT_SCHEMA
from .files import CacheWarning
from .layout import FORMAT, MARKER, RELISTS, index_schema, relist_pause
from .opening import ENV_CACHE_DIR, default_cache_dir, open_cache, require_cache
from .parquet import polars_writes_arrow_schema as _polars_writes_arrow_schema
from .run_files import RUN_SCHEMA, RUN_STATUSES
from .stores import is_url

__all__ = [
    "CLOCK_SKEW",
    "ENV_CACHE_DIR",
    "EVENT_SCHEMA",
    "FORMAT",
    "MARKER",
    "REFRESH_MODES",
    "RELISTS",
    "RUN_SCHEMA",
    "RUN_STATUSES",
    "Cache",
    "CacheWarning",
    "Entry",
    "Refresh",
    "RefreshOption",
    "_polars_writes_arrow_schema",
    "default_cache_dir",
    "is_url",
    "open_cache",
    "relist_pause",
    "require_cache",
]


def __getattr__(name: str) -> Any:
    if name == "INDEX_SCHEMA":  # the Arrow schema of an index file, without importing pyarrow with the package
        return index_schema()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
