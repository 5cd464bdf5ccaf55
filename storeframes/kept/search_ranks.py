"""The organic ranks the cache keeps of keywords: the live search's daily snapshots, else the search history.

What the tracker's rank alerts judge (:mod:`storeframes.track.judge`) and what the assistant's movers read
(:mod:`storeframes.agent`): a keyword followed live is read from its snapshots (ads left out, the organic
list first), one followed by its recorded history alone from ``search_history``. Nothing is sent.

>>> from datetime import date
>>> from storeframes.kept.search_ranks import kept_ranks
>>> ranks, live = kept_ranks(cache, "appstore", date(2026, 11, 1), date(2026, 11, 7), live=None, history=None)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from typing import Literal

import polars as pl

from ..cache import Cache
from ..ranks import one_list
from .scan import scan
from .snapshots import snapshots

__all__ = ["RANK_COLUMNS", "kept_ranks", "of_pairs"]

RANK_COLUMNS = ["keyword", "date", "rank", "app_id", "country", "language", "device"]
"""The columns of :func:`kept_ranks`' frame."""


def of_pairs(frame: pl.LazyFrame, pairs: set[tuple[str, str]], how: Literal["semi", "anti"] = "semi") -> pl.LazyFrame:
    """``frame``'s rows of ``pairs`` (keyword in lower case, country), or with ``how="anti"`` its other rows.

    >>> frame = pl.LazyFrame({"keyword": ["Photo", "maps"], "country": ["US", "us"]})
    >>> of_pairs(frame, {("photo", "us")}).collect()["keyword"].to_list()
    ['Photo']
    """
    wanted = pl.DataFrame(
        {"_k": [k for k, _ in pairs], "_c": [c for _, c in pairs]}, schema={"_k": pl.String, "_c": pl.String}
    )
    keyed = frame.with_columns(_k=pl.col("keyword").str.to_lowercase(), _c=pl.col("country").str.to_lowercase())
    return keyed.join(wanted.lazy(), on=["_k", "_c"], how=how).drop("_k", "_c")


def _pairs_in(frame: pl.DataFrame) -> set[tuple[str, str]]:
    """The (keyword in lower case, country in lower case) pairs ``frame`` holds."""
    lowered = frame.select(pl.col("keyword").str.to_lowercase(), pl.col("country").str.to_lowercase())
    return set(lowered.unique().rows())


def kept_ranks(
    cache: Cache,
    service: str,
    start: date,
    end: date,
    *,
    live: set[tuple[str, str]] | None,
    history: set[tuple[str, str]] | None,
    keywords: Iterable[str] | None = None,
) -> tuple[pl.DataFrame, set[tuple[str, str]]]:
    """The organic results kept from ``start`` to ``end`` (:data:`RANK_COLUMNS`) of the (keyword in lower
    case, country) pairs followed ``live`` (the daily snapshots of the live search) and those followed by
    their ``history`` alone; and the pairs read live.

    ``None`` for either is every pair the cache keeps there (of ``keywords``, when given): a pair it
    keeps live is never read from its history. Each source is read once.

    >>> frame, live = kept_ranks(cache, "appstore", start, end, live={("photo editor", "us")}, history=set())  # doctest: +SKIP
    """
    chosen = None if keywords is None else [k.lower() for k in keywords]

    def of_keywords(frame: pl.LazyFrame) -> pl.LazyFrame:
        return frame if chosen is None else frame.filter(pl.col("keyword").str.to_lowercase().is_in(chosen))

    frames: list[pl.DataFrame] = []
    read_live: set[tuple[str, str]] = set()
    if live is None or live:
        found = snapshots("search", cache, start=start, end=end, service=service).filter(
            ~pl.col("is_ad").fill_null(False)
        )
        found = found.with_columns(
            date=pl.col("snapshot_date"), rank=pl.coalesce("organic_rank", "rank").cast(pl.Int64)
        )
        # the organic list first, where a keyword is followed with and without ads
        found = one_list(found, ["keyword", "country", "language", "device", "date"]).select(RANK_COLUMNS)
        kept = (of_keywords(found) if live is None else of_pairs(found, live)).collect()
        frames.append(kept)
        read_live = live if live is not None else _pairs_in(kept)
    if history is None or history - read_live:
        found = scan("search_history", cache, service=service).filter(
            (pl.col("source") == "history") & pl.col("date").is_between(start, end)
        )
        found = found.select(RANK_COLUMNS)
        if history is None:
            found = of_pairs(of_keywords(found), read_live, "anti")
        else:
            found = of_pairs(found, history - read_live)
        frames.append(found.collect())
    if not frames:
        empty = pl.DataFrame(
            schema={c: pl.Date if c == "date" else pl.Int64 if c == "rank" else pl.String for c in RANK_COLUMNS}
        )
        return empty, read_live
    # each collected alone: before 1.35, polars hangs on two of the cache's sources in one query
    return pl.concat(frames), read_live
