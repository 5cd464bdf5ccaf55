"""What the analysis functions share: their inputs checked, and the organic results of a search frame.

A frame the functions read may be polars, lazy or pandas; a wrong one is refused with the columns it
lacks, before anything is computed.

>>> history = pl.DataFrame({"keyword": ["maps"], "date": [date(2026, 1, 1)], "rank": [1], "app_id": ["1"]})
>>> organic(checked_frame(history, "history", "share_of_voice", "a search_history_frame", NEEDED)).columns
['keyword', 'country', 'language', 'device', 'date', 'app_id', 'rank']
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

import polars as pl

from ..catalog import app_list, parse_day
from ..errors import InvalidParameterError
from ..ranks import one_list, polars_frame

__all__ = [
    "NEEDED",
    "PLACE",
    "SERIES",
    "app_ids",
    "best_places",
    "checked_frame",
    "count",
    "day",
    "organic",
    "organic_rows",
    "recorded_days",
    "with_series",
]

SERIES = ("keyword", "country", "language", "device")
"""A ranking's keys: the keyword and its place."""

PLACE = SERIES[1:]
"""A place: country, language and device."""

NEEDED = ("keyword", "date", "rank", "app_id")
"""The columns of a search frame every analysis of results reads."""


def checked_frame(value: Any, name: str, function: str, what: str, needed: Sequence[str]) -> pl.DataFrame:
    """A polars frame from ``value`` that has the ``needed`` columns, or an error naming the missing ones."""
    frame = polars_frame(value, name, function, f"{what} (a polars or pandas DataFrame)")
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise InvalidParameterError(
            name,
            f"a frame without {', '.join(missing)}",
            f"{what}, with columns {', '.join(needed)}",
            endpoint=function,
        )
    return frame


def count(name: str, value: Any, function: str) -> int | None:
    """A whole number of 1 or more, or None."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise InvalidParameterError(name, value, "a whole number of 1 or more, or None", endpoint=function)
    return value


def day(name: str, value: Any, function: str) -> date | None:
    """A day from a date or an ISO text, or None."""
    return None if value is None else parse_day(name, value, endpoint=function)


def app_ids(value: Any, function: str, name: str = "apps") -> list[str]:
    """App ids from an id, a comma-separated text or a list; none is refused."""
    try:
        ids = app_list(value)
    except InvalidParameterError:
        ids = []
    if not ids:
        raise InvalidParameterError(name, value, "an app id or a list of them", endpoint=function)
    return ids


def with_series(frame: pl.DataFrame) -> pl.DataFrame:
    """``date`` as a day, and every series column present (null where the frame lacks it)."""
    return frame.with_columns(
        pl.col("date").cast(pl.Date),
        *(pl.col(c).cast(pl.String) if c in frame.columns else pl.lit(None, pl.String).alias(c) for c in SERIES),
    ).filter(pl.col("date").is_not_null())


def organic_rows(frame: pl.DataFrame) -> pl.DataFrame:
    """The organic rows of a search history, a live search or a cache's snapshots of it, as they are: ads
    left out, of a cache's two lists of a day the organic one (:func:`storeframes.ranks.one_list`), the
    organic rank as ``rank``. An app may have two rows a day (:func:`best_places` keeps its best)."""
    frame = one_list(with_series(frame), [*SERIES, "date"])
    if "is_ad" in frame.columns:
        frame = frame.filter(~pl.col("is_ad").fill_null(False))
    rank = "organic_rank" if "organic_rank" in frame.columns else "rank"
    return frame.filter(pl.col(rank).is_not_null(), pl.col("app_id").is_not_null()).select(
        *SERIES, "date", pl.col("app_id").cast(pl.String), pl.col(rank).cast(pl.Int64).alias("rank")
    )


def best_places(rows: pl.DataFrame, within: int | None = None) -> pl.DataFrame:
    """One row per keyword, place, day and app of :func:`organic_rows`, at its best place; with ``within``,
    only the places up to it (filtered first: a day's top is a small share of its results)."""
    if within is not None:
        rows = rows.filter(pl.col("rank") <= within)
    return rows.group_by(*SERIES, "date", "app_id").agg(pl.col("rank").min())


def recorded_days(rows: pl.DataFrame) -> pl.DataFrame:
    """The keywords, places and days of :func:`organic_rows` with results."""
    return rows.select(*SERIES, "date").unique()


def organic(frame: pl.DataFrame) -> pl.DataFrame:
    """:func:`best_places` of :func:`organic_rows`: one row per keyword, place, day and app."""
    return best_places(organic_rows(frame)).select(*SERIES, "date", "app_id", "rank")
