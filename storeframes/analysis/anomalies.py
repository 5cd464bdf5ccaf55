"""Rank anomalies: the days a rank left its weekly rhythm, judged against a robust baseline, with their likely cause.

A fixed threshold fires on noise (a rank that swings five places every weekend) and misses a quiet app's real
fall. :func:`rank_anomalies` compares each day with the same weekday of the weeks before (a median and a MAD:
one odd week does not move them), never judges a day without data and never lets one into a baseline, and
names what happened just before: a change of the app's own listing or a competitor's, a new advertiser.

>>> import storeframes as sf
>>> history = sf.search_history_frame("photo editor", start="2026-09-01", end="2026-11-28")  # doctest: +SKIP
>>> ranks = sf.rank_history(history, ["3233849169", "394079159"])  # doctest: +SKIP
>>> sf.rank_anomalies(ranks, changes=sf.changes_frame(["3233849169", "394079159"], start="2026-09-01"))  # doctest: +SKIP
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from .._tracebacks import user_facing
from ..errors import InvalidParameterError
from ..schemas import Column, TableSchema
from .inputs import NEEDED, PLACE, SERIES, checked_frame, count, with_series

__all__ = ["ANOMALIES", "CAUSE_TARGETS", "MAD_SCALE", "RELATIVE_SPREAD", "rank_anomalies"]

CAUSE_TARGETS = frozenset(
    {"title", "subtitle", "short_description", "long_description", "description", "screenshots", "icon", "version"}
)
"""The changes that can move a rank, and so name a cause: what a store's search reads (the title, subtitle,
descriptions) and what a searcher sees in the results (the icon and screenshots), and a new version. A change
of size or privacy labels moves no rank and is never named."""

MAD_SCALE = 1.4826
"""The factor that makes a median absolute deviation estimate a standard deviation (of a normal spread)."""

RELATIVE_SPREAD = 0.1
"""The least spread of a baseline, as a share of its rank: a tenth. A store's results grow denser with depth, so
a rank of 150 moves ten places on a quiet day where a rank of 5 moves none; a spread of at least a tenth of the
rank (and of one place) keeps a deep rank's daily shuffle from reading as an anomaly."""

ANOMALIES = TableSchema(
    "rank_anomalies",
    "one row per anomalous day of a keyword, app and place",
    (
        Column("keyword", pl.String(), "the keyword"),
        Column("app_id", pl.String(), "the app"),
        Column("date", pl.Date(), "the anomalous day"),
        Column("rank", pl.Int64(), "the app's rank that day; null when it was not among the results"),
        Column("status", pl.String(), "ranked, or not_ranked (judged as the place after the last result)"),
        Column("baseline", pl.Float64(), "the median rank of the same weekday over the weeks before"),
        Column(
            "spread", pl.Float64(), "the baseline's spread: 1.4826 x its median absolute deviation, 1 place at least"
        ),
        Column("z", pl.Float64(), "(rank - baseline) / spread: positive = a worse rank"),
        Column("move", pl.Int64(), "baseline - rank, rounded half up: positive = moved up"),
        Column("direction", pl.String(), "up or down"),
        Column("event_start", pl.Date(), "the first day of the run of anomalous days in this direction: the event"),
        Column("baseline_days", pl.Int64(), "the same weekdays with data the baseline is of"),
        Column("country", pl.String(), "two-letter country code"),
        Column("language", pl.String(), "two-letter language code"),
        Column("device", pl.String(), "iphone, ipad or android"),
        Column("cause", pl.String(), "the likely cause in words: the nearest change before, new advertisers; or null"),
        Column("cause_app_id", pl.String(), "the app whose change is the nearest before (the app's own, or another's)"),
        Column("cause_date", pl.Date(), "the day of that change"),
        Column("cause_targets", pl.String(), "what it changed that day (title, screenshots ...)"),
        Column(
            "new_advertisers",
            pl.List(pl.String()),
            "apps advertising on the keyword that day and not in the days before; null without ads= or ads that day "
            "and some of the days before",
        ),
    ),
)
"""The columns of :func:`rank_anomalies`, in order."""

_FUNCTION = "rank_anomalies"
_KEY = [*SERIES, "app_id"]
_RANKS = ("keyword", "app_id", "date", "rank", "status", "results")


def _number(name: str, value: Any, least: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > least or math.isinf(value):
        raise InvalidParameterError(name, value, f"a number above {least:g}", endpoint=_FUNCTION)
    return float(value)


def _judged(ranks: pl.DataFrame, weeks: int) -> pl.DataFrame:
    """Each day with data of each series, its value (the rank; the place after the last result when not
    ranked) and its baseline: the median and MAD of the same weekday's values over ``weeks`` weeks before."""
    frame = with_series(ranks).with_columns(pl.col("app_id").cast(pl.String))
    valued = frame.filter(pl.col("status").is_in(["ranked", "not_ranked"])).with_columns(
        pl.when(pl.col("status") == "ranked")
        .then(pl.col("rank"))
        .otherwise(pl.col("results") + 1)
        .cast(pl.Float64)
        .alias("_value")
    )
    valued = valued.filter(pl.col("_value").is_not_null())
    before = pl.concat(
        [
            valued.select(*_KEY, (pl.col("date") + pl.duration(days=7 * k)).alias("date"), pl.col("_value").alias("_b"))
            for k in range(1, weeks + 1)
        ]
    )
    median = before.group_by(*_KEY, "date").agg(
        pl.col("_b").median().alias("baseline"), pl.len().cast(pl.Int64).alias("baseline_days")
    )
    mad = (
        before.join(median, on=[*_KEY, "date"], nulls_equal=True)
        .group_by(*_KEY, "date")
        .agg((pl.col("_b") - pl.col("baseline")).abs().median().alias("_mad"))
    )
    return (
        valued.join(median, on=[*_KEY, "date"], how="left", nulls_equal=True)
        .join(mad, on=[*_KEY, "date"], how="left", nulls_equal=True)
        .with_columns(pl.col("baseline_days").fill_null(0))
        .sort(*_KEY, "date", nulls_last=True)
    )


def _events(judged: pl.DataFrame, threshold: float, min_move: int, least_days: int, within: int | None) -> pl.DataFrame:
    """The anomalous days, each with the first day of its run (consecutive days with data, one direction)."""
    spread = pl.max_horizontal(pl.col("_mad") * MAD_SCALE, pl.lit(1.0), pl.col("baseline") * RELATIVE_SPREAD)
    scored = judged.with_columns(
        spread.alias("spread"),
        ((pl.col("_value") - pl.col("baseline")) / spread).alias("z"),
        (pl.col("baseline") - pl.col("_value") + 0.5).floor().cast(pl.Int64).alias("move"),
    ).with_columns(pl.when(pl.col("move") > 0).then(pl.lit("up")).otherwise(pl.lit("down")).alias("direction"))
    flagged = (
        (pl.col("baseline_days") >= least_days)
        & (pl.col("z").abs() >= threshold)
        & (pl.col("move").abs() >= min_move)
        # a day off the results is only a floor of its rank: it can say a drop, never a rise
        & ((pl.col("status") == "ranked") | (pl.col("direction") == "down"))
        & (pl.lit(within is None) | (pl.min_horizontal("_value", "baseline") <= (within or 0)))
    )
    scored = scored.with_columns(flagged.fill_null(False).alias("_flag"))
    same_run = pl.col("_flag").shift(1).over(_KEY).fill_null(False) & (
        pl.col("direction").shift(1).over(_KEY) == pl.col("direction")
    ).fill_null(False)
    # a run's first day, then its number (two steps: a window inside a window is refused by older polars)
    starts = scored.with_columns((pl.col("_flag") & ~same_run).cast(pl.Int64).alias("_starts"))
    runs = starts.with_columns(pl.col("_starts").cum_sum().over(_KEY).alias("_run"))
    return runs.filter(pl.col("_flag")).with_columns(pl.col("date").min().over(*_KEY, "_run").alias("event_start"))


def _causes(events: pl.DataFrame, ranks: pl.DataFrame, changes: Any, days: int) -> pl.DataFrame:
    """The nearest change dated within ``days`` before each anomaly (or that day): the app's own first on a tie;
    another app's only where ``ranks`` has it ranked that day on the keyword, ahead of the app's rank or its
    baseline (where the two could swap places)."""
    made = checked_frame(changes, "changes", _FUNCTION, "a changes_frame", ("app_id", "date", "target"))
    country = "country" in made.columns
    made = (
        made.filter(pl.col("target").is_in(list(CAUSE_TARGETS)))
        .select(
            pl.col("app_id").cast(pl.String).alias("cause_app_id"),
            pl.col("date").cast(pl.Date).alias("cause_date"),
            pl.col("target").cast(pl.String),
            (pl.col("country").cast(pl.String) if country else pl.lit(None, pl.String)).alias("_country"),
        )
        .group_by("cause_app_id", "cause_date", "_country")
        .agg(pl.col("target").unique(maintain_order=True).sort().str.join(", ").alias("cause_targets"))
    )
    band = pl.max_horizontal("_value", "baseline").alias("_band")
    pairs = events.select(*_KEY, "date", band).unique().join(made, how="cross")
    theirs = ranks.filter(pl.col("status") == "ranked").select(
        *SERIES, "date", pl.col("app_id").alias("cause_app_id"), pl.col("rank").alias("_their_rank")
    )
    near = (
        pairs.filter(
            pl.col("cause_date").is_between(pl.col("date") - pl.duration(days=days), pl.col("date")),
            pl.col("_country").is_null() | pl.col("country").is_null() | (pl.col("_country") == pl.col("country")),
        )
        .join(theirs, on=[*SERIES, "date", "cause_app_id"], how="left", nulls_equal=True)
        .with_columns((pl.col("cause_app_id") != pl.col("app_id")).alias("_other"))
        .filter(~pl.col("_other") | (pl.col("_their_rank") <= pl.col("_band")).fill_null(False))
        .sort(*_KEY, "date", "cause_date", "_other", descending=[False] * 6 + [True, False], nulls_last=True)
        .unique([*_KEY, "date"], keep="first")
    )
    ago = (pl.col("date") - pl.col("cause_date")).dt.total_days()
    when = (
        pl.when(ago == 0)
        .then(pl.lit("that day"))
        .when(ago == 1)
        .then(pl.lit("the day before"))
        .otherwise(pl.format("{} days before", ago))
    )
    words = pl.format(
        "{} {} on {} ({})",
        pl.when(pl.col("_other"))
        .then(pl.format("competitor {} changed", pl.col("cause_app_id")))
        .otherwise(pl.lit("own change of")),
        pl.col("cause_targets"),
        pl.col("cause_date"),
        when,
    )
    return near.select(*_KEY, "date", "cause_app_id", "cause_date", "cause_targets", words.alias("_change"))


def _advertisers(events: pl.DataFrame, ads: Any, days: int) -> pl.DataFrame:
    """The apps advertising on each anomaly's keyword that day and on none of the ``days`` days before."""
    frame = with_series(
        checked_frame(ads, "ads", _FUNCTION, "a search_frame with ads or its snapshots", ("is_ad", *NEEDED))
    )
    if "list" in frame.columns:
        frame = frame.filter(pl.col("list") == "with_ads")
    shown = frame.select(*SERIES, "date").unique()
    advertised = (
        frame.filter(pl.col("is_ad").fill_null(False))
        .select(*SERIES, "date", pl.col("app_id").cast(pl.String))
        .unique()
    )
    wanted = events.select(*_KEY, "date").unique().join(shown, on=[*SERIES, "date"], nulls_equal=True)
    # a day is compared with the days before it that have the search with ads: with none, nothing is known new
    earlier = (
        wanted.join(shown.rename({"date": "_shown"}), on=list(SERIES), nulls_equal=True)
        .filter(
            pl.col("_shown").is_between(pl.col("date") - pl.duration(days=days), pl.col("date") - pl.duration(days=1))
        )
        .select(*_KEY, "date")
        .unique()
    )
    wanted = wanted.join(earlier, on=[*_KEY, "date"], how="semi", nulls_equal=True)
    that_day = wanted.join(advertised, on=[*SERIES, "date"], nulls_equal=True, suffix="_ad")
    seen = that_day.join(
        advertised.rename({"date": "_seen", "app_id": "app_id_ad"}), on=[*SERIES, "app_id_ad"], nulls_equal=True
    ).filter(pl.col("_seen").is_between(pl.col("date") - pl.duration(days=days), pl.col("date") - pl.duration(days=1)))
    new = that_day.join(
        seen.select(*_KEY, "date", "app_id_ad").unique(), on=[*_KEY, "date", "app_id_ad"], how="anti", nulls_equal=True
    )
    listed = new.group_by(*_KEY, "date").agg(pl.col("app_id_ad").sort().alias("new_advertisers"))
    return wanted.join(listed, on=[*_KEY, "date"], how="left", nulls_equal=True).with_columns(
        pl.col("new_advertisers").fill_null(pl.lit([], pl.List(pl.String)))
    )


@user_facing
def rank_anomalies(
    ranks: pl.DataFrame | Any,
    *,
    threshold: float = 3.0,
    weeks: int = 4,
    min_move: int = 5,
    within: int | None = None,
    changes: pl.DataFrame | Any | None = None,
    ads: pl.DataFrame | Any | None = None,
    days: int = 7,
) -> pl.DataFrame:
    """The days a rank left its weekly rhythm: a robust z against the same weekday of the weeks before.

    ``ranks`` is a :func:`~storeframes.rank_history` frame (of a search history, or of a cache's days of
    the live search, ``sf.snapshots("search")``). Each day with data of each keyword, app and place is compared with the same weekday of the ``weeks`` weeks
    before: ``baseline`` is their median rank, ``spread`` 1.4826 x their median absolute deviation (at
    least one place, so a rank that never moves is not infinitely surprising), and ``z = (rank -
    baseline) / spread``. A day is an anomaly when ``|z| >= threshold`` **and** the rank moved
    ``min_move`` places or more, with at least half the weeks (two at least) in its baseline. The spread is
    at least a tenth of the baseline (:data:`RELATIVE_SPREAD`): results grow denser with depth, and a rank of
    150 shuffles ten places on a quiet day. ``within=N`` judges only the days the rank or its baseline is in
    the first ``N`` places (the moves a searcher sees); every place by default.

    Days without data (``no_data``, ``not_fetched``) are never judged and never in a baseline: a hole is
    not a drop. A day the app is not among the results counts as the place after the last result; that is
    a floor of its rank, so such a day can be a drop, never a rise. Consecutive anomalous days (days with
    data; holes between them do not break a run) in one direction are one event, named by ``event_start``.

    ``changes`` (a :func:`~storeframes.changes_frame` of the app and its competitors) names the nearest
    change that can move a rank (:data:`CAUSE_TARGETS`: the listing's texts and visuals, a version) dated within ``days`` days before the anomaly (or that day), the app's own first on a tie;
    ``ads`` (a :func:`~storeframes.search_frame` fetched with ``ads=True`` or ``sf.snapshots("search")``)
    names the apps advertising that day that had not in the ``days`` days before (null where none of those
    days has the search with ads: nothing is known new then). ``cause`` says both in
    words. Rows come by keyword, place, app and day.

    >>> from datetime import date, timedelta
    >>> days = [date(2026, 1, 1) + timedelta(d) for d in range(36)]
    >>> ranks = pl.DataFrame({"keyword": "maps", "app_id": "a", "date": days, "status": "ranked", "results": 200,
    ...                       "rank": [5 + d % 2 for d in range(35)] + [30]})
    >>> rank_anomalies(ranks).select("date", "rank", "baseline", "z", "move", "direction")
    shape: (1, 6)
    ┌────────────┬──────┬──────────┬──────┬──────┬───────────┐
    │ date       ┆ rank ┆ baseline ┆ z    ┆ move ┆ direction │
    │ ---        ┆ ---  ┆ ---      ┆ ---  ┆ ---  ┆ ---       │
    │ date       ┆ i64  ┆ f64      ┆ f64  ┆ i64  ┆ str       │
    ╞════════════╪══════╪══════════╪══════╪══════╪═══════════╡
    │ 2026-02-05 ┆ 30   ┆ 5.5      ┆ 24.5 ┆ -24  ┆ down      │
    └────────────┴──────┴──────────┴──────┴──────┴───────────┘
    """
    frame = checked_frame(ranks, "ranks", _FUNCTION, "a rank_history frame", _RANKS)
    limit = _number("threshold", threshold, 0.0)
    span = count("weeks", weeks, _FUNCTION)
    least_move = count("min_move", min_move, _FUNCTION)
    window = count("days", days, _FUNCTION)
    if span is None or least_move is None or window is None:
        raise InvalidParameterError("weeks, min_move and days", None, "whole numbers of 1 or more", endpoint=_FUNCTION)
    places = count("within", within, _FUNCTION)
    events = _events(_judged(frame, span), limit, least_move, max(2, math.ceil(span / 2)), places)
    out = events.with_columns(pl.when(pl.col("status") == "ranked").then(pl.col("rank")).alias("rank"))
    cause_parts: list[pl.Expr] = []
    if changes is None:
        out = out.with_columns(
            pl.lit(None, pl.String).alias("cause_app_id"),
            pl.lit(None, pl.Date).alias("cause_date"),
            pl.lit(None, pl.String).alias("cause_targets"),
        )
    else:
        ranked = with_series(frame).with_columns(pl.col("app_id").cast(pl.String))
        out = out.join(_causes(out, ranked, changes, window), on=[*_KEY, "date"], how="left", nulls_equal=True)
        cause_parts.append(pl.col("_change"))
    if ads is None:
        out = out.with_columns(pl.lit(None, pl.List(pl.String)).alias("new_advertisers"))
    else:
        out = out.join(_advertisers(out, ads, window), on=[*_KEY, "date"], how="left", nulls_equal=True)
        cause_parts.append(
            pl.when(pl.col("new_advertisers").list.len() > 0).then(
                pl.format("new advertisers: {}", pl.col("new_advertisers").list.join(", "))
            )
        )
    cause = pl.concat_str(cause_parts, separator="; ", ignore_nulls=True) if cause_parts else pl.lit(None, pl.String)
    out = out.with_columns(pl.when(cause != "").then(cause).alias("cause"))
    return (
        out.sort(*SERIES[:1], *PLACE, "app_id", "date", nulls_last=True).select(ANOMALIES.names).cast(ANOMALIES.schema)
    )
