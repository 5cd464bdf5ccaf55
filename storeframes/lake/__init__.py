"""Team tables: a cached table published to Delta Lake (merged on its cells), read back at any version; SQL over the cache; manifests of what an analysis read.

:func:`publish` writes a table of the cache to ``<lake>/<table>`` (and its snapshots to
``<lake>/<table>_snapshots``); :func:`read_table` reads one at a version or a moment and
records what it read (:func:`reads`). ``deltalake`` is needed (the extra ``lake``).
:func:`sql` runs DuckDB over the cache's tables (the extra ``sql``). :func:`manifest` writes
what an analysis read and :func:`check_manifest` says whether a cache or a lake still gives it.

>>> import storeframes as sf
>>> sf.check_manifest("analysis-manifest.json", cache_dir="storeframes-cache").ok  # doctest: +SKIP
True
"""

from __future__ import annotations

from .manifest import Manifest, ManifestCheck, check_manifest, manifest
from .publish import PublishResult, merge_keys, publish
from .read import LakeRead, read_table, reads
from .sql import sql

__all__ = [
    "LakeRead",
    "Manifest",
    "ManifestCheck",
    "PublishResult",
    "check_manifest",
    "manifest",
    "merge_keys",
    "publish",
    "read_table",
    "reads",
    "sql",
]
