"""A tracker keeps its cache compact: while a run's requests wait on the rate limit, once the small files that
earlier runs left pass the spec's ``compact_at``.

Each answer a run keeps is a small index file and a frame file or two; a cache of a few thousand of them
opens and reads slowly (the judging and the digest read a few weeks of snapshots back, at every run). A run
that finds more than ``[tracker] compact_at`` small files when it starts (:data:`~storeframes.track.spec.COMPACT_AT`
by default, 0 never) compacts the cache on a thread of its own while its requests go
(:class:`~storeframes.track.ahead.ReadAhead`), its tracker's lease held until the compaction ends: two runs of
the tracker never compact at once, the judging and the digest read the compacted cache, and a compaction that
grows with the cache costs the run no time past its last answer. Readers and writers in other processes, and
the run's own requests, are never raced (:meth:`~storeframes.cache.Cache.compact` merges the files it listed,
writes the merged files first and removes the ones they replace after; a reader accepts either state, and a
file written after the listing waits for the next compaction). What it did, or why it failed, is in the run's
result (:attr:`~storeframes.track.result.RunResult.compaction`); a compaction that fails loses nothing kept (the
small files it did not merge stay) and leaves the run's status as it was.

>>> said, problems = counted(spec, cache)  # doctest: +SKIP
>>> compact_kept(said, cache) if compaction_due(said) else (said, problems)  # doctest: +SKIP
({'compact_at': 500, 'compacted': True, 'small_files': 612, 'seconds': 2.9, 'index_files_merged': 612, ...}, [])
"""

from __future__ import annotations

import time
from typing import Any

from ..cache import Cache, CacheWarning
from ..errors import StoreframesError, held_warnings
from ..kept.tables import flattener_versions
from .spec import TrackerSpec

__all__ = ["compact_kept", "compaction_due", "counted"]


def counted(spec: TrackerSpec, cache: Cache) -> tuple[dict[str, Any], list[str]]:
    """What a run's result says of the small files of ``spec``'s endpoints the cache holds as the run begins
    (:attr:`~storeframes.track.result.RunResult.compaction`: empty when ``spec.compact_at`` is 0), and the
    problem met counting them; a compaction is due past ``spec.compact_at`` (:func:`compaction_due`).

    >>> counted(spec, cache)  # doctest: +SKIP
    ({'compact_at': 500, 'compacted': False, 'small_files': 612}, [])
    """
    if spec.compact_at <= 0:
        return {}, []
    said: dict[str, Any] = {"compact_at": spec.compact_at, "compacted": False}
    try:
        said["small_files"] = cache.small_files(sorted({item.endpoint for item in spec.items}))
    except (StoreframesError, OSError) as exc:
        return {**said, "error": _problem(exc)}, [_problem(exc)]
    return said, []


def compaction_due(said: dict[str, Any]) -> bool:
    """Whether the small files :func:`counted` are past the threshold."""
    return bool(said) and "error" not in said and said["small_files"] > said["compact_at"]


def compact_kept(said: dict[str, Any], cache: Cache) -> tuple[dict[str, Any], list[str]]:
    """Compact ``cache``, its small files :func:`counted` as ``said`` and :func:`compaction_due`; ``said`` with what the
    compaction did, and the problems it met. The caller holds the tracker's lease; on any thread: the
    compaction's warnings are held on it and said as problems, and another thread's are left alone.

    >>> compact_kept(counted(spec, cache)[0], cache)  # doctest: +SKIP
    ({'compact_at': 500, 'compacted': True, 'small_files': 612, 'seconds': 2.9, ...}, [])
    """
    said = dict(said)
    began = time.monotonic()
    try:
        with held_warnings() as held:  # a part it could not merge: said, not warned
            done = cache.compact(frames=flattener_versions())
        said |= done | {"compacted": True, "seconds": round(time.monotonic() - began, 3)}
        problems = [message for message, category in held if issubclass(category, CacheWarning)]
    except (StoreframesError, OSError) as exc:
        problems = [_problem(exc)]
    if problems:
        said["error"] = "; ".join(problems)
    return said, problems


def _problem(exc: BaseException) -> str:
    """An error in a line: its type and the first line of its message."""
    return f"{type(exc).__name__}: {exc}".splitlines()[0]
