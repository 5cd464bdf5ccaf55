"""Team tables: a cached table published to Delta Lake (merged on its cells), read back at any version.

:func:`publish` writes a table of the cache to ``<lake>/<table>`` (and its snapshots to
``<lake>/<table>_snapshots``); :func:`read_table` reads one at a version or a moment and
records what it read (:func:`reads`). ``deltalake`` is needed (the extra ``lake``).
"""

from __future__ import annotations

from .publish import PublishResult, merge_keys, publish
from .read import LakeRead, read_table, reads

__all__ = ["LakeRead", "PublishResult", "merge_keys", "publish", "read_table", "reads"]
