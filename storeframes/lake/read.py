"""Reading a published table back, at a version or a time, and the record of what this process read.

:func:`read_table` reads the Delta Lake table ``<lake>/<table>`` (a folder or ``s3://...``)
at its newest version, at ``version=`` or as it was at ``as_of=``, and notes the version it
read; :func:`reads` lists those notes, so a manifest (:func:`storeframes.manifest`) can say
which version of each table an analysis read.

>>> import storeframes as sf
>>> sf.read_table("team-lake", "metadata", version=3).collect()  # doctest: +SKIP
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl

from .._tracebacks import user_facing
from ..errors import InvalidParameterError

__all__ = ["LakeRead", "read_table", "reads"]


@dataclass(frozen=True)
class LakeRead:
    """One read of a published table: its address (never a credential), its name and the version read."""

    uri: str
    table: str
    version: int


_READS: list[LakeRead] = []
_LOCK = threading.Lock()


def reads() -> list[LakeRead]:
    """Every read of a published table this process made, oldest first, each (address, table, version) once.

    >>> from storeframes.lake.read import reads
    >>> isinstance(reads(), list)
    True
    """
    with _LOCK:
        return list(_READS)


def table_uri(lake: Any, table: str) -> str:
    """The address of ``table`` in ``lake``: ``<lake>/<table>``, a folder's made absolute."""
    if isinstance(lake, str) and "://" in lake:
        return f"{lake.rstrip('/')}/{table}"
    if isinstance(lake, (str, os.PathLike)):
        return str(Path(lake).expanduser().absolute() / table)
    raise InvalidParameterError("lake", lake, "a folder path or a bucket address (s3://bucket/prefix)")


@user_facing
def read_table(
    lake: str | os.PathLike[str],
    table: str,
    version: int | None = None,
    as_of: datetime | str | None = None,
    *,
    storage_options: dict[str, str] | None = None,
) -> pl.LazyFrame:
    """The published table ``table`` of ``lake``, at its newest version, at ``version`` or as of ``as_of``.

    The version read is noted (see :func:`reads`). Output columns: those the table was published with.

    >>> import storeframes as sf
    >>> sf.read_table("team-lake", "metrics", version=0).select("app_id", "value").collect()  # doctest: +SKIP
    """
    if not isinstance(table, str) or not table.strip():
        raise InvalidParameterError("table", table, "a table's name, such as 'metadata'")
    if version is not None and (isinstance(version, bool) or not isinstance(version, int) or version < 0):
        raise InvalidParameterError("version", version, "a table version: a whole number >= 0, or None for the newest")
    if version is not None and as_of is not None:
        raise InvalidParameterError("as_of", as_of, "None when version is given: one or the other")
    from deltalake import DeltaTable

    uri = table_uri(lake, table)
    delta = DeltaTable(uri, version=version, storage_options=storage_options)
    if as_of is not None:
        if not isinstance(as_of, (datetime, str)):
            raise InvalidParameterError("as_of", as_of, "a datetime or an ISO timestamp text")
        delta.load_as_version(as_of)
    read = LakeRead(uri, table, delta.version())
    with _LOCK:
        if read not in _READS:
            _READS.append(read)
    return pl.scan_delta(uri, version=read.version, storage_options=storage_options)
