"""Everything a cache holds, as datasets: lazy scans of a table, and compaction.

:func:`scan` is a question asked of every answer the cache (a folder or a team's
bucket) holds, without a frame call, a request or a token: the rows of one table
(``"versions"``, ``"search_history"``, ``"changes"`` ...), the newest answer of each
cell, with the schema of the frame function's frame. :func:`compact` merges the small
files a cache grows, one or two per answer, into a few (see
:meth:`storeframes.Cache.compact`). The machinery that finds, builds and reads the
files of a table's chosen answers (:func:`~storeframes.kept.tables.lazy_rows`) serves
:func:`storeframes.snapshots` too, which chooses other answers.

>>> import storeframes as sf
>>> sf.scan("versions", cache_dir="analysis-cache").filter(pl.col("position") == 1).collect()  # doctest: +SKIP
>>> sf.compact(cache_dir="s3://team-bucket/storeframes")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from .._tracebacks import user_facing
from .tables import TABLES, flattener_versions, lazy_rows, newest, open_for, spec_of

__all__ = ["compact", "scan"]


@user_facing
def scan(
    table: str,
    cache_dir: Any = None,
    *,
    service: str | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> pl.LazyFrame:
    """Every row of ``table`` the cache holds, the newest answer of each cell, as a lazy frame.

    ``table`` is a table name (``"metadata"``, ``"versions"``, ``"search_history"``,
    ``"changes"`` ...; a frame function's name works too). ``cache_dir`` is a folder or
    a bucket address (``s3://bucket/prefix``, with ``storage_options`` as for
    :class:`~storeframes.Client`), by default ``$STOREFRAMES_CACHE_DIR`` or the user's
    cache. ``service`` chooses whose answers: by default the real service's, or the one
    service a cache holds (a sandbox's is ``"sandbox-<seed>"``).

    A cell is an app (and metric, and day, for daily histories) in a scope (country,
    language, device, and the date range of change history): of each, only the newest
    answer's rows are kept, so an app fetched again shows its rows once. The schema is
    the frame function's; ``search`` has a ``list`` column last (``organic`` or ``with_ads``:
    :data:`~storeframes.schemas.SEARCH_LIST`), as a cache holds both live searches of a keyword.
    Nothing is sent and no token is needed; answers whose frame of this table was never made are flattened from the raw answer first (and kept,
    where the cache may be written). The files are read by polars when the frame is
    collected, so filters and column choices are pushed down into the Parquet reads. A kept
    frame whose columns are not the table's (an edited or damaged file) is built again from
    its raw answer.

    The files are found when the frame is collected, each time it is: a frame made before a
    compaction (in this process or another) gives the same rows after it, and one collected
    while a compaction replaces its files finds the new ones. Should they be replaced
    :data:`~storeframes.cache.RELISTS` times in a row while they are read, collecting raises
    :class:`~storeframes.CacheUnavailableError`; collect again.

    A place with no cache is never read as an empty cache: a folder that does not exist (or
    holds other things) and a bucket prefix without a cache raise :class:`~storeframes.NoCacheError`
    naming it, a bucket that cannot be listed :class:`~storeframes.CacheUnavailableError`, when
    the frame is made. An empty folder, or a cache with nothing of the table, gives 0 rows.
    """
    spec = spec_of(table, TABLES, what="scan")
    return lazy_rows(open_for(cache_dir, storage_options, what="scan"), spec, service, newest, what="scan")


@user_facing
def compact(cache_dir: Any = None, *, storage_options: Mapping[str, str] | None = None) -> dict[str, int]:
    """Compact the cache (a folder or a bucket): see :meth:`storeframes.Cache.compact`.

    The frames of this version's flatteners are merged, others left out (they are
    rebuilt from the raw answers when a frame function needs them).
    """
    return open_for(cache_dir, storage_options, what="compact").compact(frames=flattener_versions())
