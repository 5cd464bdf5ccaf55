"""The changes the cache shows of apps' listings: the service's change history and those seen between snapshots.

What the tracker's ``listing_change`` alerts judge (:mod:`storeframes.track.judge`) and what the assistant's
``changes_before`` reads (:mod:`storeframes.agent`), in one set of columns. Nothing is sent.

>>> from datetime import date
>>> from storeframes.kept.app_changes import kept_changes
>>> history, seen = kept_changes(cache, "appstore", ["6441354028"], date(2026, 11, 1), date(2026, 11, 7))  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

import polars as pl

from ..cache import Cache
from .observed import observed_changes
from .scan import scan

__all__ = ["CHANGE_COLUMNS", "kept_changes"]

CHANGE_COLUMNS = [
    "app_id",
    "country",
    "language",
    "device",
    "date",
    "target",
    "old_value",
    "new_value",
    "old_size",
    "new_size",
]
"""The columns :func:`kept_changes` takes from the change history, before ``since`` and ``device_key``."""


def kept_changes(
    cache: Cache, service: str, apps: Sequence[str], first: date, last: date
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The changes of ``apps`` from ``first`` to ``last`` the cache shows: the service's change history,
    and those seen between consecutive metadata snapshots (:func:`~storeframes.observed_changes`), in the
    same columns (``app_id``, scope, ``date``, ``target``, old and new value and size, ``since``, ``device_key``).

    >>> history, seen = kept_changes(cache, "appstore", ["6441354028"], first, last)  # doctest: +SKIP
    """
    history = (
        scan("changes", cache, service=service)
        .filter(pl.col("app_id").is_in(list(apps)) & pl.col("date").is_between(first, last))
        .select(*CHANGE_COLUMNS, since=pl.lit(None, pl.Date), device_key=pl.lit(None, pl.String))
        .collect()
    )
    seen = observed_changes(cache, apps=list(apps), start=first, end=last, service=service)
    return history, seen.select(history.columns)
