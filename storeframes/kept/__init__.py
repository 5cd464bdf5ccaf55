"""What the cache keeps, read back: tables of every answer, the days kept of current-only tables, and changes.

Nothing here sends a request or needs a token. :func:`scan` (:mod:`~storeframes.kept.scan`) reads a table's
newest answer of each cell, :func:`compact` merges a cache's small files; :func:`snapshots`
(:mod:`~storeframes.kept.snapshots`) reads every day kept of a current-only table, :func:`observed_changes`
(:mod:`~storeframes.kept.observed`) compares consecutive metadata snapshots; :func:`kept_ranks`
(:mod:`~storeframes.kept.search_ranks`) and :func:`kept_changes` (:mod:`~storeframes.kept.app_changes`) are
the ranks and listing changes that alerts and the assistant judge by. :mod:`~storeframes.kept.tables` holds
what they share: the tables, the choice of answers, their files and rows. The lake, the tracker and the
agent read the cache through this wing; it reaches none of them.

>>> import storeframes as sf
>>> sf.snapshots("metrics", cache_dir="analysis-cache", start="2026-11-01").collect()  # doctest: +SKIP
"""

from __future__ import annotations

from .app_changes import kept_changes
from .observed import observed_changes
from .scan import compact, scan
from .search_ranks import kept_ranks
from .snapshots import SNAPSHOT_TABLES, snapshots
from .tables import TABLES, flattener_versions

__all__ = [
    "SNAPSHOT_TABLES",
    "TABLES",
    "compact",
    "flattener_versions",
    "kept_changes",
    "kept_ranks",
    "observed_changes",
    "scan",
    "snapshots",
]
