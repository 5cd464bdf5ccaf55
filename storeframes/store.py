"""Where the cache keeps its bytes: kept for earlier imports.

The store contract now lives in :mod:`storeframes.cache.stores` (:mod:`~storeframes.cache.stores.base`,
one module per store).
"""

from __future__ import annotations

from .cache.stores import LocalStore, MemoryStore, Store, SweepError, Usage, check_key

__all__ = ["LocalStore", "MemoryStore", "Store", "SweepError", "Usage", "check_key"]
