"""A cache in object storage: kept for earlier imports.

The store now lives in :mod:`storeframes.cache.stores.bucket`.
"""

from __future__ import annotations

from .cache.stores.bucket import ObjectLeases, ObjectStore

__all__ = ["ObjectLeases", "ObjectStore"]
