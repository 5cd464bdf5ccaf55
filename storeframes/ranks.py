"""Rank tracking: each app's rank per keyword and day, from a search history frame.

>>> import storeframes as sf
>>> history = sf.search_history_frame("photo editor", start="2026-11-01", end="2026-11-07")  # doctest: +SKIP
>>> sf.rank_history(history, ["3233849169", "389801252"])  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any, cast

import polars as pl

from ._tracebacks import user_facing
from .catalog import app_list, parse_day, texts
from .errors import InvalidParameterError
from .schemas import RANK_HISTORY

__all__ = ["RANK_STATUSES", "rank_history"]

RANK_STATUSES = ("ranked", "not_ranked", "no_data", "not_fetched")
"""The statuses of :func:`rank_history`, best first: ``not_fetched`` only where ``fetched=`` says which days were."""

_SERIES = ("keyword", "country", "language", "device")
_NEEDED = ("keyword", "date", "rank", "app_id")
_NULL = "\x00"  # stands for a null key while joining (polars does not match nulls in joins)


def _day(name: str, value: Any) -> date | None:
    return None if value is None else parse_day(name, value, endpoint="rank_history")


def polars_frame(value: Any, name: str, function: str, what: str) -> pl.DataFrame:
    """A polars DataFrame from a polars, lazy or pandas frame; anything else is refused.

    The frames' readers (the analysis, the charts, the widgets) take any of the three through it.

    >>> polars_frame(pl.LazyFrame({"rank": [1, 2]}), "history", "movers", "a rank_history frame").height
    2
    """
    if isinstance(value, pl.LazyFrame):
        return value.collect()
    if isinstance(value, pl.DataFrame):
        return value
    try:
        frame = pl.from_pandas(value)
    except (TypeError, ValueError, ImportError):
        frame = None
    if not isinstance(frame, pl.DataFrame):  # a pandas Series becomes a polars Series
        raise InvalidParameterError(name, type(value).__name__, what, endpoint=function)
    return frame


def _texts(name: str, value: Any, *, endpoint: str = "rank_history") -> list[str]:
    """Texts from a text (comma-separated for several) or a list, each once, runs of spaces made one.

    So keywords are read as the frame functions read them: ``"photo editor, maps"`` is two
    keywords, and a keyword holding a comma is passed in a list.
    """
    values = texts(name, value, endpoint=endpoint)
    if not values:
        raise InvalidParameterError(name, value, "a text or a non-empty list of texts", endpoint=endpoint)
    return list(dict.fromkeys(" ".join(v.split()) for v in values))


def _fetched(value: Any) -> pl.DataFrame:
    """The days fetched, as a frame of ``date`` and the series columns given (nulls as the join's stand-in)."""
    what = "the days fetched: a frame with a date column (and keyword, country, language, device), or dates"
    if isinstance(value, (list, tuple, set, frozenset)):
        if not all(isinstance(d, date) for d in value):
            raise InvalidParameterError("fetched", value, what, endpoint="rank_history")
        return pl.DataFrame({"date": sorted(set(value))}, schema={"date": pl.Date})
    frame = polars_frame(value, "fetched", "rank_history", what)
    if "date" not in frame.columns:
        raise InvalidParameterError("fetched", "a frame without date", what, endpoint="rank_history")
    on = [c for c in _SERIES if c in frame.columns]
    return (
        frame.select(pl.col("date").cast(pl.Date), *(pl.col(c).cast(pl.String).fill_null(_NULL) for c in on))
        .unique()
        .select(*on, "date")
    )


def one_list(frame: Any, by: Sequence[str]) -> Any:
    """``frame`` (a DataFrame or LazyFrame) with one list a keyword, place and day (``by``): where a frame read
    from a cache has its ``list`` column (:data:`~storeframes.schemas.SEARCH_LIST`) and both lists of a day,
    the ``organic`` one's rows; the ``with_ads`` one's where it is the only list. As it is without the column.

    >>> both = pl.DataFrame({"keyword": ["x", "x"], "list": ["organic", "with_ads"], "rank": [1, 3]})
    >>> one_list(both, ["keyword"])["rank"].to_list()
    [1]
    """
    names = frame.collect_schema().names() if isinstance(frame, pl.LazyFrame) else frame.columns
    if "list" not in names:
        return frame
    keys = [c for c in by if c in names]
    organic = pl.col("list") == "organic"
    return frame.filter(organic | ~organic.any().over(keys)) if keys else frame.filter(organic | ~organic.any())


@user_facing
def rank_history(
    history: pl.DataFrame | Any,
    apps: str | int | Sequence[str | int],
    *,
    keywords: str | Sequence[str] | None = None,
    start: str | date | None = None,
    end: str | date | None = None,
    fetched: pl.DataFrame | Any | None = None,
) -> pl.DataFrame:
    """Each app's rank per keyword and day, with a status that tells missing ranks apart.

    ``history`` is a :func:`~storeframes.search_history_frame` (or a
    :func:`~storeframes.search_frame`, whose ads are left out: the rank is the organic
    one). Every day from ``start`` to ``end`` (by default the history's first and last
    day) gets one row per keyword and app, with ``status``:

    * ``ranked``: the app is in that day's results, at ``rank`` (its best place if it
      appears twice);
    * ``not_ranked``: the day has results (``results`` of them), the app is not among them;
    * ``no_data``: the history has no results for that keyword and day: the service recorded
      nothing that day (or, without ``fetched``, the day may not have been fetched);
    * ``not_fetched``: with ``fetched``, a day without results that was never asked for (a run
      over budget, a run that failed, a day no run ran): nothing is known of it, which is not
      the same as a day the service recorded nothing.

    ``fetched`` says which days were asked of the service: a frame with a ``date`` column
    and any of ``keyword``, ``country``, ``language``, ``device`` (a day fetched for those
    alone), or a list of dates (fetched for every keyword and place). A day with results
    is always fetched.

    ``rank`` is null unless the app ranked, so a plot of rank over date shows gaps where
    the app was not ranked. ``keywords`` keeps only those keywords (a text is split on
    commas, as the frame functions split it; a keyword holding a comma goes in a list); a
    keyword with no row at all in the history is all ``no_data``. ``apps`` is an app id (a
    text or a whole number), several comma-separated in a text, or a list. Rows come by
    keyword, app (in the order given) and day.

    >>> history = pl.DataFrame({"keyword": ["maps"] * 3, "date": [date(2026, 1, 1)] * 2 + [date(2026, 1, 3)],
    ...                         "rank": [1, 2, 1], "app_id": ["1", "2", "2"]})
    >>> rank_history(history, ["1"]).select("date", "rank", "status", "results")
    shape: (3, 4)
    ┌────────────┬──────┬────────────┬─────────┐
    │ date       ┆ rank ┆ status     ┆ results │
    │ ---        ┆ ---  ┆ ---        ┆ ---     │
    │ date       ┆ i64  ┆ str        ┆ i64     │
    ╞════════════╪══════╪════════════╪═════════╡
    │ 2026-01-01 ┆ 1    ┆ ranked     ┆ 2       │
    │ 2026-01-02 ┆ null ┆ no_data    ┆ null    │
    │ 2026-01-03 ┆ null ┆ not_ranked ┆ 1       │
    └────────────┴──────┴────────────┴─────────┘
    """
    history = polars_frame(history, "history", "rank_history", "a search_history_frame (a polars or pandas DataFrame)")
    missing = [c for c in _NEEDED if c not in history.columns]
    if missing:
        raise InvalidParameterError(
            "history",
            f"a frame without {', '.join(missing)}",
            "a search_history_frame or search_frame, with columns keyword, date, rank and app_id",
            endpoint="rank_history",
        )
    try:
        ids = app_list(apps)
    except InvalidParameterError:
        ids = []
    if not ids:
        raise InvalidParameterError("apps", apps, "at least one app id, or a list of them", endpoint="rank_history")
    wanted = _texts("keywords", keywords) if keywords is not None else None
    first, last = _day("start", start), _day("end", end)
    asked = None if fetched is None else _fetched(fetched)

    frame = one_list(history.with_columns(pl.col("date").cast(pl.Date)), [*_SERIES, "date"])
    if "is_ad" in frame.columns:
        frame = frame.filter(~pl.col("is_ad").fill_null(False))
    rank = "organic_rank" if "organic_rank" in frame.columns else "rank"
    frame = frame.with_columns(
        *(pl.col(c).cast(pl.String).fill_null(_NULL) if c in frame.columns else pl.lit(_NULL).alias(c) for c in _SERIES)
    )
    # the series (keyword and place) and the default days come from the whole history,
    # so neither keywords= nor start/end drops a keyword or shortens the range of another
    series = frame.select(_SERIES).unique(maintain_order=True)
    places = series.select(_SERIES[1:]).unique(maintain_order=True)
    known = frame["date"]  # cast to pl.Date above: its min and max are dates, or None
    known_first, known_last = cast("date | None", known.min()), cast("date | None", known.max())
    if wanted is not None:
        if places.height == 0:
            places = pl.DataFrame({c: [_NULL] for c in _SERIES[1:]})
        series = pl.DataFrame({"keyword": wanted}).join(places, how="cross").select(_SERIES)
        frame = frame.filter(pl.col("keyword").is_in(wanted))
    if series.height == 0 or (known.len() == 0 and (first is None or last is None)):
        return RANK_HISTORY.empty()
    if first is None:
        first = min(d for d in (known_first, last) if d is not None)
    if last is None:
        last = max(d for d in (known_last, first) if d is not None)
    if last < first:
        raise InvalidParameterError("end", last, f"a date on or after start={first}", endpoint="rank_history")
    frame = frame.filter(pl.col("date").is_between(first, last))
    keyword_order = list(dict.fromkeys(series["keyword"]))
    series = series.sort(
        pl.col("keyword").replace_strict(keyword_order, list(range(len(keyword_order)))), maintain_order=True
    )
    days = pl.DataFrame({"date": pl.date_range(first, last, "1d", eager=True)})
    grid = (
        series.with_row_index("_series")
        .join(pl.DataFrame({"app_id": ids}).with_row_index("_app"), how="cross")
        .join(days, how="cross")
    )
    results = frame.group_by([*_SERIES, "date"]).agg(pl.len().cast(pl.Int64).alias("results"))
    ranks = (
        frame.filter(pl.col("app_id").is_in(ids))
        .group_by([*_SERIES, "date", "app_id"])
        .agg(pl.col(rank).min().cast(pl.Int64).alias("rank"))
    )
    if asked is None:
        grid = grid.with_columns(_fetched=pl.lit(None, pl.Boolean))
    else:
        on = [c for c in asked.columns if c != "date"]
        grid = grid.join(asked.with_columns(_fetched=pl.lit(True)), on=[*on, "date"], how="left")
    out = (
        grid.join(results, on=[*_SERIES, "date"], how="left")
        .join(ranks, on=[*_SERIES, "date", "app_id"], how="left")
        .with_columns(
            pl.when(pl.col("rank").is_not_null())
            .then(pl.lit("ranked"))
            .when(pl.col("results").is_not_null())
            .then(pl.lit("not_ranked"))
            .when(pl.lit(asked is None) | pl.col("_fetched").fill_null(False))
            .then(pl.lit("no_data"))
            .otherwise(pl.lit("not_fetched"))
            .alias("status"),
            *(pl.when(pl.col(c) == _NULL).then(None).otherwise(pl.col(c)).alias(c) for c in _SERIES),
        )
        .sort("_series", "_app", "date")
    )
    return out.select(RANK_HISTORY.names).cast(RANK_HISTORY.schema)
