"""A cache in object storage: kept for earlier imports.

The store now lives in :mod:`storeframes.cache.stores.bucket`, the leases kept in a bucket
in :mod:`storeframes.coord.bucket`.
"""

from __future__ import annotations

from .cache.stores.bucket import ObjectStore
from .coord.bucket import ObjectLeases

__all__ = ["ObjectLeases", "ObjectStore"]
