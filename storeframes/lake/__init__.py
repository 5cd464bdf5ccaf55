"""Team tables: the cache's tables published to Delta Lake, read back at a version, SQL over the cache, and manifests of what was read.

>>> import storeframes as sf
>>> sf.check_manifest("analysis-manifest.json", cache_dir="storeframes-cache").ok  # doctest: +SKIP
True
"""

from .manifest import Manifest, ManifestCheck, check_manifest, manifest
from .sql import sql

__all__ = ["Manifest", "ManifestCheck", "check_manifest", "manifest", "sql"]
