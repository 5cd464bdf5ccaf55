"""A tracker keeps its cache compact: after a run, once the small files pass the spec's ``compact_at``.

Each answer a run keeps is a small index file and a frame file or two; a cache of a few thousand of them
opens and reads slowly (the judging and the digest read a few weeks of snapshots back, at every run). A
run that leaves more than ``[tracker] compact_at`` small files (:data:`~storeframes.track.spec.COMPACT_AT`
by default, 0 never) compacts the cache after its own row in the run log is final, its tracker's lease
still held: two runs of the tracker never compact at once, and readers in other processes are never
raced (:meth:`~storeframes.cache.Cache.compact` writes the merged files first and removes the ones they
replace after; a reader accepts either state). What it did, or why it failed, is in the run's result
(:attr:`~storeframes.track.result.RunResult.compaction`); a compaction that fails loses nothing kept (the
small files it did not merge stay) and leaves the run's status as it was.

>>> compact_after_run(spec, cache, result)  # doctest: +SKIP
>>> result.compaction  # doctest: +SKIP
{'small_files': 612, 'compact_at': 500, 'compacted': True, 'seconds': 2.9, 'index_files_merged': 612, ...}
"""

from __future__ import annotations

import time
import warnings
from typing import Any

from ..cache import Cache, CacheWarning
from ..errors import StoreframesError
from ..kept.tables import flattener_versions
from .result import RunResult
from .spec import TrackerSpec

__all__ = ["compact_after_run"]


def compact_after_run(spec: TrackerSpec, cache: Cache, result: RunResult) -> None:
    """Compact ``cache`` when it holds more small files of ``spec``'s endpoints than ``spec.compact_at`` (never
    with 0), and say it in ``result.compaction``. The caller holds the tracker's lease.

    >>> compact_after_run(spec, cache, result)  # doctest: +SKIP
    """
    if spec.compact_at <= 0:
        return
    said: dict[str, Any] = {"compact_at": spec.compact_at, "compacted": False}
    result.compaction = said
    try:
        small = said["small_files"] = cache.small_files(sorted({item.endpoint for item in spec.items}))
        if small <= spec.compact_at:
            return
        began = time.monotonic()
        with warnings.catch_warnings(record=True) as caught:  # a part it could not merge: said, not warned
            warnings.simplefilter("always", CacheWarning)
            done = cache.compact(frames=flattener_versions())
        said |= done | {"compacted": True, "seconds": round(time.monotonic() - began, 3)}
        problems = [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]
    except (StoreframesError, OSError) as exc:
        problems = [f"{type(exc).__name__}: {exc}".splitlines()[0]]
    if problems:
        said["error"] = "; ".join(problems)
        result.errors += [f"compaction: {p}" for p in problems]
