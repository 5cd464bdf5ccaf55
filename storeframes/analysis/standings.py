"""Where we stand: each tracked app's rank on each keyword today, its change over 1, 7 and 30 days, its best.

A rank tracker's users live in one view: a table of keywords with the current position, the moves, the best
position and a sparkline. :func:`standings` is that table as a tidy frame, read from a search history (or the
days a cache keeps of the live search): pure polars, nothing is sent. A day nothing is known of is never a
move: a change is a number only when both days ranked, and the day before it says what it was.

>>> import storeframes as sf
>>> history = sf.search_history_frame(["photo editor", "photo filters"], start="2026-10-01", end="2026-11-28")  # doctest: +SKIP
>>> sf.standings(history, ["3233849169", "394079159"])  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import date, timedelta
from typing import Any, cast

import polars as pl

from .._tracebacks import user_facing
from ..errors import InvalidParameterError
from ..ranks import rank_history
from ..schemas import Column, TableSchema
from .inputs import NEEDED, SERIES, app_ids, checked_frame, count, day
from .voice import _weights

__all__ = ["CHANGE_DAYS", "STANDINGS", "standings"]

CHANGE_DAYS = (1, 7, 30)
"""The spans of :func:`standings`' changes, in days: the day before, the week before, the month before."""

_FUNCTION = "standings"
_KEY = [*SERIES, "app_id"]
_STATUS = (
    "the status that day: ranked, not_ranked (the day has results, the app is not among them), no_data (the "
    "service recorded no results), not_fetched (nothing was asked that day, with fetched=); null before the "
    "history's first day"
)


def _change_columns() -> list[Column]:
    columns = []
    for n in CHANGE_DAYS:
        ago = "the day before" if n == 1 else f"{n} days before"
        columns += [
            Column(
                f"change_{n}d",
                pl.Int64(),
                f"places moved since {ago}: positive = up (a better rank); null unless both days ranked",
            ),
            Column(f"was_{n}d", pl.String(), f"{ago}: {_STATUS}"),
        ]
    return columns


STANDINGS = TableSchema(
    "standings",
    "one row per tracked app, keyword and place: where it stands on the last day",
    (
        Column("app_id", pl.String(), "the tracked app"),
        Column("keyword", pl.String(), "the keyword"),
        Column("country", pl.String(), "two-letter country code"),
        Column("language", pl.String(), "two-letter language code"),
        Column("device", pl.String(), "iphone, ipad or android"),
        Column("date", pl.Date(), "the day the standings are of (end=)"),
        Column("rank", pl.Int64(), "the app's organic rank that day; null unless status is ranked"),
        Column("status", pl.String(), "that day: ranked, not_ranked, no_data or not_fetched (as rank_history)"),
        *_change_columns(),
        Column("best", pl.Int64(), "the best rank in the period (the days= before the day, and the day)"),
        Column("best_date", pl.Date(), "the last day of the period the app held its best rank"),
        Column(
            "share",
            pl.Float64(),
            "the app's share of the keyword's top places that day, weighted as share_of_voice weighs them (0 to 1); "
            "null when the day has no results",
        ),
        Column(
            "biggest_move",
            pl.Int64(),
            "the largest of the three moves, in places (a day not ranked counts as the place after the last "
            "result, so entering or leaving the results is a move): what the rows are sorted by",
        ),
        Column("trend", pl.List(pl.Int64()), "the rank on each day of the period, oldest first; null unless ranked"),
        Column("trend_status", pl.List(pl.String()), "each day's status, as trend: the gaps told apart"),
        Column("trend_start", pl.Date(), "the first day of trend"),
    ),
)
"""The columns of :func:`standings`, in order."""


def _floor() -> pl.Expr:
    """The rank a day counts as for a move: its rank, or the place after the last result when not ranked."""
    return (
        pl.when(pl.col("status") == "ranked")
        .then(pl.col("rank"))
        .when(pl.col("status") == "not_ranked")
        .then(pl.col("results") + 1)
    )


@user_facing
def standings(
    history: pl.DataFrame | Any,
    apps: str | int | Sequence[str | int],
    *,
    keywords: str | Sequence[str] | None = None,
    end: str | date | None = None,
    days: int = 30,
    fetched: pl.DataFrame | Any | None = None,
    top: int = 10,
    weights: str | Mapping[int, float] | Callable[[int], float] = "ctr",
) -> pl.DataFrame:
    """Where each app stands on each keyword and place on ``end``: its rank, its changes over 1, 7 and 30 days,
    its best rank, its share of the top places, and the days of the period for a sparkline.

    ``history`` is a :func:`~storeframes.search_history_frame`, a cache's days of the live search
    (:func:`~storeframes.snapshots` ``("search")``) or a :func:`~storeframes.search_frame`; ``apps`` the apps
    tracked (an id, several comma-separated, or a list); ``keywords`` keeps those keywords (every keyword of the
    history by default). ``end`` is the day (the history's last by default); the period is the ``days`` days
    before it and the day. ``fetched`` says which days were asked, as :func:`~storeframes.rank_history`'s
    (``tracker.fetched(...)``): then a day nothing was asked is ``not_fetched``, not ``no_data``.

    ``change_1d``, ``change_7d`` and ``change_30d`` are the places moved since that many days before (positive
    = up), a number only when the app ranked on both days; ``was_1d`` ... say what the earlier day was, so a
    null change reads as what it is: the app entered or left the results (``not_ranked``), or nothing is known
    of one of the days (``no_data``, ``not_fetched``): a hole is never a drop. ``best`` is the best rank of the
    period; ``share`` the weight of the app's place in the keyword's top ``top`` over the weight of them all
    (``weights`` as :func:`~storeframes.share_of_voice`'s: the click curve by default; 0 outside the top, null
    on a day without results). ``trend`` and ``trend_status`` hold the period's days, oldest first.

    Rows come biggest move first (``biggest_move``: the largest of the three, where a day not ranked counts
    as the place after the last result), then by app (in the order given), keyword and place.

    >>> from datetime import date, timedelta
    >>> days = [date(2026, 11, 1) + timedelta(d) for d in range(31)]
    >>> history = pl.DataFrame({"keyword": "maps", "date": days * 2, "app_id": ["a"] * 31 + ["b"] * 31,
    ...                         "rank": [9] * 23 + [6] * 4 + [4] * 3 + [2] + [1] * 30 + [3]})
    >>> standings(history, ["a", "b"]).select("app_id", "rank", "change_1d", "change_7d", "change_30d", "best")
    shape: (2, 6)
    ┌────────┬──────┬───────────┬───────────┬────────────┬──────┐
    │ app_id ┆ rank ┆ change_1d ┆ change_7d ┆ change_30d ┆ best │
    │ ---    ┆ ---  ┆ ---       ┆ ---       ┆ ---        ┆ ---  │
    │ str    ┆ i64  ┆ i64       ┆ i64       ┆ i64        ┆ i64  │
    ╞════════╪══════╪═══════════╪═══════════╪════════════╪══════╡
    │ a      ┆ 2    ┆ 2         ┆ 4         ┆ 7          ┆ 2    │
    │ b      ┆ 3    ┆ -2        ┆ -2        ┆ -2         ┆ 1    │
    └────────┴──────┴───────────┴───────────┴────────────┴──────┘
    """
    frame = checked_frame(history, "history", _FUNCTION, "a search_history_frame or search_frame", NEEDED)
    ids = app_ids(apps, _FUNCTION)
    span, size = count("days", days, _FUNCTION), count("top", top, _FUNCTION)
    if span is None or size is None:
        raise InvalidParameterError("days and top", None, "whole numbers of 1 or more", endpoint=_FUNCTION)
    curve = _weights(weights, size)
    last = day("end", end, _FUNCTION)
    if last is None:
        known = frame["date"].cast(pl.Date).max() if frame.height else None
        if known is None:
            return STANDINGS.empty()
        last = cast("date", known)
    first = last - timedelta(days=span)
    reach = min(first, last - timedelta(days=max(CHANGE_DAYS)))
    ranks = rank_history(frame, ids, keywords=keywords, start=reach, end=last, fetched=fetched)
    if ranks.is_empty():
        return STANDINGS.empty()
    ranks = ranks.with_columns(_floor().alias("_floor"))
    out = ranks.filter(pl.col("date") == last).select(*_KEY, "date", "rank", "status", "_floor")
    sizes = []
    for n in CHANGE_DAYS:
        then = ranks.filter(pl.col("date") == last - timedelta(days=n)).select(
            *_KEY, pl.col("rank").alias("_then"), pl.col("status").alias(f"was_{n}d"), pl.col("_floor").alias("_was")
        )
        both = (pl.col("status") == "ranked") & (pl.col(f"was_{n}d") == "ranked")
        out = (
            out.join(then, on=_KEY, how="left", nulls_equal=True)
            .with_columns(pl.when(both).then(pl.col("_then") - pl.col("rank")).alias(f"change_{n}d"))
            .with_columns((pl.col("_was") - pl.col("_floor")).abs().alias(f"_move_{n}"))
            .drop("_then", "_was")
        )
        sizes.append(f"_move_{n}")
    period = ranks.filter(pl.col("date") >= first).sort("date")
    best = (
        period.filter(pl.col("status") == "ranked")
        .sort("rank", "date", descending=[False, True])
        .group_by(_KEY, maintain_order=True)
        .agg(pl.col("rank").first().alias("best"), pl.col("date").first().alias("best_date"))
    )
    trend = period.group_by(_KEY, maintain_order=True).agg(
        pl.col("rank").alias("trend"), pl.col("status").alias("trend_status"), pl.col("date").min().alias("trend_start")
    )
    order = pl.DataFrame({"app_id": ids, "_app": list(range(len(ids)))}, schema={"app_id": pl.String, "_app": pl.Int64})
    keyword_order = list(dict.fromkeys(ranks["keyword"].to_list()))
    place = pl.when(pl.col("rank") <= size).then(pl.col("rank")).otherwise(0)
    share = place.replace_strict(list(range(size + 1)), [0.0, *curve], return_dtype=pl.Float64) / sum(curve)
    out = (
        out.join(best, on=_KEY, how="left", nulls_equal=True)
        .join(trend, on=_KEY, how="left", nulls_equal=True)
        .join(order, on="app_id", how="left")
        .with_columns(
            pl.when(pl.col("status").is_in(["ranked", "not_ranked"])).then(share.fill_null(0.0)).alias("share"),
            pl.max_horizontal(sizes).alias("biggest_move"),
            pl.col("keyword").replace_strict(keyword_order, list(range(len(keyword_order)))).alias("_keyword"),
        )
        .sort(
            ["biggest_move", "_app", "_keyword", "country", "language", "device"],
            descending=[True, False, False, False, False, False],
            nulls_last=True,
            maintain_order=True,
        )
    )
    return out.select(STANDINGS.names).cast(STANDINGS.schema)
