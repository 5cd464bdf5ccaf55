"""Keyword opportunities: which keywords an app should work on, scored by a formula whose every term is a column.

Pure polars on a search history the team already has (and, when given, the days of the search with ads and
the competitors' changes): nothing is sent and nothing is a black box.

>>> import storeframes as sf
>>> history = sf.search_history_frame(["photo editor", "photo filters"], start="2026-11-01", end="2026-11-28")  # doctest: +SKIP
>>> sf.keyword_opportunities(history, "3233849169", ["394079159", "1093351232"], top=10)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from .._tracebacks import user_facing
from ..errors import InvalidParameterError
from ..schemas import Column, TableSchema
from .inputs import (
    NEEDED,
    PLACE,
    SERIES,
    app_ids,
    best_places,
    checked_frame,
    count,
    organic_rows,
    recorded_days,
    with_series,
)

__all__ = ["OPPORTUNITIES", "SCORE_WEIGHTS", "keyword_opportunities"]

SCORE_WEIGHTS: dict[str, float] = {"room": 40.0, "competition": 30.0, "volatility": 20.0, "ads": 10.0}
"""The points each term of :func:`keyword_opportunities`' score is worth, 100 in all."""

AD_PRESSURE_AT = 4
"""The number of advertisers at which a keyword's ads term is spent (four or more: no point left)."""

OPPORTUNITIES = TableSchema(
    "keyword_opportunities",
    "one row per keyword and place, best score first",
    (
        Column("keyword", pl.String(), "the keyword"),
        Column("app_id", pl.String(), "the app the opportunities are of"),
        Column("latest_date", pl.Date(), "the keyword's last day with results: the day the ranks are read on"),
        Column("app_rank", pl.Int64(), "the app's organic rank on latest_date; null when not among the results"),
        Column(
            "app_rank_change",
            pl.Int64(),
            "rank on the keyword's first day with results - rank on latest_date: positive = moved up; "
            "null unless ranked on both",
        ),
        Column("best_competitor", pl.String(), "the competitor ranked best on latest_date; null if none ranked"),
        Column("best_competitor_rank", pl.Int64(), "its rank"),
        Column("competitors_in_top", pl.Int64(), "competitors within the top places on latest_date"),
        Column(
            "volatility",
            pl.Float64(),
            "the mean share of the top places' apps that were not in the top the recorded day before, 0 to 1; "
            "null with one day recorded",
        ),
        Column(
            "advertisers", pl.Int64(), "distinct advertisers in the days given of the search with ads; null without"
        ),
        Column(
            "competitor_changes",
            pl.Int64(),
            "listing changes over the period by the competitors in the top on latest_date; null without changes=",
        ),
        Column("results", pl.Int64(), "organic results on latest_date"),
        Column("days_recorded", pl.Int64(), "days of the history with results for the keyword"),
        Column("score", pl.Float64(), "0-100: the sum of the terms said in why (SCORE_WEIGHTS)"),
        Column("why", pl.String(), "the score's terms in words, each with its points"),
        Column("country", pl.String(), "two-letter country code of the history"),
        Column("language", pl.String(), "two-letter language code of the history"),
        Column("device", pl.String(), "iphone, ipad or android"),
    ),
)
"""The columns of :func:`keyword_opportunities`, in order."""

_FUNCTION = "keyword_opportunities"
_ON = list(SERIES)


def _volatility(results: pl.DataFrame, top: int) -> pl.DataFrame:
    """Per keyword and place: the mean, over consecutive recorded days, of the share of a day's top apps that
    were not in the top the recorded day before."""
    tops = (
        results.filter(pl.col("rank") <= top)
        .group_by(*SERIES, "date")
        .agg(pl.col("app_id").unique().alias("_top"))
        .sort(*SERIES, "date", nulls_last=True)
    )
    before = pl.col("_top").shift(1).over(_ON)
    return (
        tops.with_columns(
            (pl.col("_top").list.set_difference(before).list.len() / pl.col("_top").list.len()).alias("_new"),
        )
        .filter(before.is_not_null())
        .group_by(_ON)
        .agg(pl.col("_new").mean().alias("volatility"))
    )


def _advertisers(ads: Any, first: Any, last: Any) -> pl.DataFrame:
    """Per keyword and place of the search with ads: the distinct advertisers from ``first`` to ``last``."""
    frame = checked_frame(ads, "ads", _FUNCTION, "a search_frame with ads or snapshots of it", ("is_ad", *NEEDED))
    frame = with_series(frame)
    if "list" in frame.columns:
        frame = frame.filter(pl.col("list") == "with_ads")
    frame = frame.filter(pl.col("date").is_between(first, last))
    return frame.group_by(_ON).agg(
        pl.col("app_id").filter(pl.col("is_ad").fill_null(False)).n_unique().cast(pl.Int64).alias("advertisers")
    )


def _competitor_changes(changes: Any, latest: pl.DataFrame, competitors: list[str], top: int) -> pl.DataFrame:
    """Per keyword and place: the changes the competitors in its top made from its first to its latest day."""
    made = checked_frame(changes, "changes", _FUNCTION, "a changes_frame", ("app_id", "date", "target"))
    made = made.select(pl.col("app_id").cast(pl.String), pl.col("date").cast(pl.Date)).filter(
        pl.col("app_id").is_in(competitors)
    )
    in_top = latest.filter(pl.col("app_id").is_in(competitors), pl.col("rank") <= top).select(
        *SERIES, "app_id", "_first", "latest_date"
    )
    return (
        in_top.join(made, on="app_id", how="inner")
        .filter(pl.col("date").is_between(pl.col("_first"), pl.col("latest_date")))
        .group_by(_ON)
        .agg(pl.len().cast(pl.Int64).alias("competitor_changes"))
    )


def _why(top: int, competitors: int, with_ads: bool) -> pl.Expr:
    """The score's terms in words: each term's value, what it comes of, and its points."""
    room = (
        pl.when(pl.col("app_rank").is_null())
        .then(pl.lit("not ranked"))
        .when(pl.col("app_rank") > top)
        .then(pl.format("rank {}, below the top {}", pl.col("app_rank"), pl.lit(top)))
        .otherwise(pl.format("rank {} in the top {}", pl.col("app_rank"), pl.lit(top)))
    )
    parts = [
        pl.format("room {} ({}): {} pts", pl.col("_room").round(2), room, pl.col("_p_room").round(1)),
        pl.format(
            "competitors {}/{} in the top {}: {} pts",
            pl.col("competitors_in_top"),
            pl.lit(competitors),
            pl.lit(top),
            pl.col("_p_competition").round(1),
        ),
        pl.format(
            "volatility {}: {} pts",
            pl.col("volatility").round(2).cast(pl.String).fill_null("unknown (one day recorded)"),
            pl.col("_p_volatility").round(1),
        ),
    ]
    if with_ads:
        parts.append(
            pl.when(pl.col("advertisers").is_null())
            .then(pl.lit("advertisers unknown (no day with ads): left out, the rest scaled by 100/90"))
            .otherwise(pl.format("{} advertisers: {} pts", pl.col("advertisers"), pl.col("_p_ads").round(1)))
        )
    else:
        parts.append(pl.lit("no ads given: left out, the rest scaled by 100/90"))
    return pl.concat_str([*parts, pl.format("score {}", pl.col("score"))], separator="; ")


@user_facing
def keyword_opportunities(
    history: pl.DataFrame | Any,
    app: str | int,
    competitors: str | int | Sequence[str | int],
    *,
    top: int = 10,
    ads: pl.DataFrame | Any | None = None,
    changes: pl.DataFrame | Any | None = None,
) -> pl.DataFrame:
    """Which keywords of a history ``app`` should work on, one row per keyword and place, best first.

    ``history`` is a :func:`~storeframes.search_history_frame` (or a cache's days of the live search, or a
    :func:`~storeframes.search_frame`: the organic ranks are read). For each keyword and place the ranks
    are read on ``latest_date``, its last day with results: the app's rank, the best competitor's, how many
    of ``competitors`` are in the top ``top``; ``app_rank_change`` is the app's move since the keyword's
    first day with results, ``volatility`` how much its top changes from one recorded day to the next.
    ``ads`` (a :func:`~storeframes.search_frame` fetched with ``ads=True``, or ``sf.snapshots("search")``,
    whose ``with_ads`` list is read) counts the distinct advertisers over the history's days;
    ``changes`` (a :func:`~storeframes.changes_frame` of the competitors) counts the listing changes of the
    competitors in the top.

    ``score`` is the sum of four terms, each in [0, 1] times its points (:data:`SCORE_WEIGHTS`), and
    ``why`` says each one:

    * **room** (40): 1 when the app is not ranked or ranks below the top, else ``(app_rank - 1) / top``:
      the places left to gain within the top (0 at the first place);
    * **competition** (30): ``competitors_in_top / len(competitors)``: the keyword matters in this market,
      since the competitors are found there;
    * **volatility** (20): a top that changes is a top that can be entered (0 when one day is recorded);
    * **ads** (10): ``1 - min(advertisers, 4) / 4``: the fewer advertisers, the cheaper the keyword; without
      ``ads=`` (or for a keyword with no day with ads) the term is left out and the other three are scaled
      by 100/90, so scores stay on one scale of 100.

    >>> from datetime import date
    >>> history = pl.DataFrame({"keyword": ["maps"] * 3 + ["taxi"] * 3, "date": [date(2026, 1, 1)] * 6,
    ...                         "rank": [1, 2, 3] * 2, "app_id": ["b", "a", "c", "a", "b", "c"]})
    >>> keyword_opportunities(history, "a", ["b", "c"], top=2).select("keyword", "app_rank", "best_competitor", "score")
    shape: (2, 4)
    ┌─────────┬──────────┬─────────────────┬───────┐
    │ keyword ┆ app_rank ┆ best_competitor ┆ score │
    │ ---     ┆ ---      ┆ ---             ┆ ---   │
    │ str     ┆ i64      ┆ str             ┆ f64   │
    ╞═════════╪══════════╪═════════════════╪═══════╡
    │ maps    ┆ 2        ┆ b               ┆ 38.89 │
    │ taxi    ┆ 1        ┆ b               ┆ 16.67 │
    └─────────┴──────────┴─────────────────┴───────┘
    """
    frame = checked_frame(history, "history", _FUNCTION, "a search_history_frame or search_frame", NEEDED)
    own = app_ids(app, _FUNCTION, "app")
    if len(own) != 1:
        raise InvalidParameterError("app", app, "one app id (the competitors go in competitors=)", endpoint=_FUNCTION)
    rivals = [c for c in app_ids(competitors, _FUNCTION, "competitors") if c != own[0]]
    if not rivals:
        raise InvalidParameterError(
            "competitors", competitors, "one competitor's app id or more, not the app's own", endpoint=_FUNCTION
        )
    size = count("top", top, _FUNCTION)
    if size is None:
        raise InvalidParameterError("top", top, "a whole number of 1 or more", endpoint=_FUNCTION)
    rows = organic_rows(frame)
    days = (
        recorded_days(rows)
        .group_by(_ON)
        .agg(
            pl.col("date").min().alias("_first"),
            pl.col("date").max().alias("latest_date"),
            pl.len().cast(pl.Int64).alias("days_recorded"),
        )
    )
    if days.height == 0:
        return OPPORTUNITIES.empty()
    ends = pl.concat([days.select(*_ON, pl.col(c).alias("date")) for c in ("_first", "latest_date")]).unique()
    at_ends = best_places(rows.join(ends, on=[*_ON, "date"], nulls_equal=True)).join(days, on=_ON, nulls_equal=True)
    latest = at_ends.filter(pl.col("date") == pl.col("latest_date"))
    first_rank = at_ends.filter(pl.col("date") == pl.col("_first"), pl.col("app_id") == own[0]).select(
        *SERIES, pl.col("rank").alias("_first_rank")
    )
    at_latest = latest.group_by(_ON).agg(
        pl.len().cast(pl.Int64).alias("results"),
        pl.col("rank").filter(pl.col("app_id") == own[0]).min().alias("app_rank"),
        pl.col("rank").filter(pl.col("app_id").is_in(rivals)).min().alias("best_competitor_rank"),
        pl.col("app_id")
        .filter(pl.col("app_id").is_in(rivals), pl.col("rank") <= size)
        .n_unique()
        .cast(pl.Int64)
        .alias("competitors_in_top"),
    )
    best = (
        latest.filter(pl.col("app_id").is_in(rivals))
        .sort("rank", "app_id")
        .group_by(_ON, maintain_order=True)
        .agg(pl.col("app_id").first().alias("best_competitor"))
    )
    out = (
        days.join(at_latest, on=_ON, nulls_equal=True)
        .join(best, on=_ON, how="left", nulls_equal=True)
        .join(first_rank, on=_ON, how="left", nulls_equal=True)
        .join(_volatility(best_places(rows, within=size), size), on=_ON, how="left", nulls_equal=True)
        .with_columns(
            (pl.col("_first_rank") - pl.col("app_rank")).alias("app_rank_change"), pl.lit(own[0]).alias("app_id")
        )
    )
    if ads is None:
        out = out.with_columns(pl.lit(None, pl.Int64).alias("advertisers"))
    else:
        first, last = days["_first"].min(), days["latest_date"].max()
        out = out.join(_advertisers(ads, first, last), on=_ON, how="left", nulls_equal=True)
    if changes is None:
        out = out.with_columns(pl.lit(None, pl.Int64).alias("competitor_changes"))
    else:
        made = _competitor_changes(changes, latest, rivals, size)
        out = out.join(made, on=_ON, how="left", nulls_equal=True).with_columns(
            pl.col("competitor_changes").fill_null(0)
        )
    out = _scored(out, size, len(rivals), ads is not None)
    return (
        out.sort(["score", "keyword", *PLACE], descending=[True, False, False, False, False], nulls_last=True)
        .select(OPPORTUNITIES.names)
        .cast(OPPORTUNITIES.schema)
    )


def _scored(out: pl.DataFrame, top: int, competitors: int, with_ads: bool) -> pl.DataFrame:
    """The four terms, their points (the ads term left out where the advertisers are unknown, the others
    scaled to keep 100 in all), the score and its words."""
    w = SCORE_WEIGHTS
    known_ads = pl.col("advertisers").is_not_null() if with_ads else pl.lit(False)
    ranked_in_top = pl.col("app_rank").is_not_null() & (pl.col("app_rank") <= top)
    terms = out.with_columns(
        pl.when(ranked_in_top).then((pl.col("app_rank") - 1) / top).otherwise(1.0).alias("_room"),
        (pl.col("competitors_in_top") / competitors).alias("_competition"),
        pl.col("volatility").fill_null(0.0).alias("_volatility"),
        (1.0 - pl.min_horizontal(pl.col("advertisers"), AD_PRESSURE_AT) / AD_PRESSURE_AT).alias("_ads"),
        pl.when(known_ads).then(1.0).otherwise(100.0 / (100.0 - w["ads"])).alias("_scale"),
    )
    points = terms.with_columns(
        *((pl.col(f"_{k}") * v * pl.col("_scale")).alias(f"_p_{k}") for k, v in w.items() if k != "ads"),
        pl.when(known_ads).then(pl.col("_ads") * w["ads"]).otherwise(0.0).alias("_p_ads"),
    )
    scored = points.with_columns(pl.sum_horizontal(*(f"_p_{k}" for k in w)).round(2).alias("score"))
    return scored.with_columns(_why(top, competitors, with_ads).alias("why"))
