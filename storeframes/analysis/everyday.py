"""The everyday questions in one call: who moved, what they changed, where a category stands, whose app is it.

Pure functions on the frames the client returns: they send nothing and spend no credit.

* :func:`movers`: per keyword and app, the rank at the start and at the end of a range, the
  change (positive = moved up), the move (up, down, entered or left the results), the places it
  counts for (the size the rows are sorted by) and the days ranked;
* :func:`changes_before`: what each mover changed in the days before its move ended;
* :func:`category_standing`: per country and channel, a category's conversion rate, its place
  among the categories and the median of them all;
* :func:`with_names`: app titles (and category names) joined onto any frame with ``app_id``.

>>> import storeframes as sf
>>> from storeframes.analysis import changes_before, movers, with_names
>>> history = sf.search_history_frame(["photo editor", "photo filters"], start="2026-08-21", end="2026-11-18")  # doctest: +SKIP
>>> moved = movers(history, ["3233849169", "394079159"], top=5)  # doctest: +SKIP
>>> changes = sf.changes_frame(["3233849169", "394079159"], start="2026-08-21", end="2026-11-18")  # doctest: +SKIP
>>> with_names(changes_before(moved, changes, days=14), sf.metadata_frame(moved["app_id"]))  # doctest: +SKIP
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from datetime import date, timedelta
from typing import Any, cast

import polars as pl

from .._tracebacks import user_facing
from ..catalog import ANDROID_CATEGORIES, IOS_CATEGORIES
from ..errors import InvalidParameterError
from ..ranks import one_list, polars_frame
from ..schemas import BENCHMARK_RATES, Column, TableSchema
from .inputs import SERIES, app_ids, checked_frame, count, day, with_series

__all__ = ["CHANGES_BEFORE", "MOVERS", "RATES", "category_standing", "changes_before", "movers", "with_names"]

RATES = BENCHMARK_RATES
"""The conversion rates of a benchmarks frame, each in percent."""


MOVERS = TableSchema(
    "movers",
    "one row per keyword and app",
    (
        Column("keyword", pl.String(), "the keyword"),
        Column("app_id", pl.String(), "the app's id"),
        Column("start_date", pl.Date(), "the first day of the range with results for the keyword; null if none"),
        Column("start_rank", pl.Int64(), "the app's rank on start_date; null unless start_status is ranked"),
        Column("start_status", pl.String(), "ranked, not_ranked (results, the app not among them) or no_data"),
        Column("end_date", pl.Date(), "the last day of the range with results for the keyword; null if none"),
        Column("end_rank", pl.Int64(), "the app's rank on end_date; null unless end_status is ranked"),
        Column("end_status", pl.String(), "ranked, not_ranked or no_data, as start_status"),
        Column("change", pl.Int64(), "start_rank - end_rank: positive = moved up; null unless ranked at both ends"),
        Column("move", pl.String(), "up, down, same; entered or left the results (ranked at one end only); or null"),
        Column(
            "places_moved",
            pl.Int64(),
            "the size the rows are sorted by: abs(change); an entry or exit from (or to) one place below the "
            "last result of the day not ranked, at least 1; 0 for same; null without a move",
        ),
        Column("days_ranked", pl.Int64(), "days of the range the app ranked for the keyword"),
        Column("days_recorded", pl.Int64(), "days of the range with results for the keyword"),
        Column("country", pl.String(), "two-letter country code of the history"),
        Column("language", pl.String(), "two-letter language code of the history"),
        Column("device", pl.String(), "iphone, ipad or android"),
    ),
)
"""The columns of :func:`movers`, in order: ``MOVERS.describe()`` lists them."""

CHANGES_BEFORE = TableSchema(
    "changes_before",
    "the columns changes_before adds after the movers' own",
    (
        Column("window_start", pl.Date(), "the first day of the changes counted (included); null without end_date"),
        Column("window_end", pl.Date(), "the last day counted (included): the day before end_date"),
        Column("changes", pl.Int64(), "the app's changes dated window_start to window_end; null without end_date"),
        Column("what_changed", pl.String(), "their targets, each once, oldest first (version, screenshots ...)"),
    ),
)
"""The columns :func:`changes_before` adds to the movers' columns."""


# -- checks ---------------------------------------------------------------------------------------


# -- movers ---------------------------------------------------------------------------------------


@user_facing
def movers(
    history_or_ranks: pl.DataFrame | Any,
    apps: str | Sequence[str] | None = None,
    *,
    start: str | date | None = None,
    end: str | date | None = None,
    top: int | None = None,
    within: int | None = None,
) -> pl.DataFrame:
    """Per keyword and app: the rank at the start and at the end of a range, the change and the move.

    ``history_or_ranks`` is a :func:`~storeframes.search_history_frame` (or a
    :func:`~storeframes.search_frame`: ads left out, the organic rank used) or the frame of
    :func:`~storeframes.rank_history` (told apart by its ``status`` column). ``apps`` keeps
    those apps (a list or a comma-separated text); by default every app of the frame. With
    a history, an app given that never ranked gets a row too (``not_ranked`` at both ends).

    The range runs from ``start`` to ``end`` (both included), by default the first and the last
    day of the frame with data. For each keyword the move runs from ``start_date``, the first
    day in the range that has results for the keyword, to ``end_date``, the last such day: a
    day the service did not record is skipped, never taken for a bad rank. ``start_rank`` is
    the app's rank on ``start_date`` (its best place that day) and ``start_status`` says why
    it is null otherwise: ``not_ranked`` (the day has results, the app is not among them) or
    ``no_data`` (the keyword has no day with results in the range; its dates are null too).
    ``end_rank`` and ``end_status`` likewise. ``change`` is ``start_rank - end_rank``, so
    positive means moved up (from 12th to 3rd is +9), null unless ranked at both ends.
    ``move`` names it: ``up``, ``down`` or ``same`` when ranked at both ends, ``entered``
    when ``not_ranked`` at the start and ranked at the end, ``left`` the other way round, and
    null when neither end is ranked (or has data).

    Rows are sorted by the size of the move, ``places_moved``, largest first, and a tie keeps
    the frame's order (keywords as they first appear, apps as given): up and down moves count
    ``abs(change)`` places, and an entry or an exit counts as a move from (or to) one place
    below the last result of the day the app was not ranked (at least 1 place): entering at
    3rd a keyword with 10 results the day before is a move of 8. ``same`` (0 places) comes
    next, then the rows without a move (null). ``within=N`` keeps the rows whose app is within the first ``N`` places at
    the start or at the end (from 285th to 8th is within 10, entering at 120th is not).
    ``top=N`` then keeps the ``N`` biggest moves: up, down, entered and left; rows that did not
    move (``same`` or null) are left out. Columns, in order, and dtypes: ``MOVERS.describe()``
    (keyword, app_id, start_date, start_rank, start_status, end_date, end_rank, end_status,
    change, move, places_moved, days_ranked, days_recorded, country, language, device).

    >>> history = pl.DataFrame({"keyword": ["maps"] * 4, "date": ["2026-01-01"] * 2 + ["2026-01-03"] * 2,
    ...                         "rank": [1, 2, 1, 2], "app_id": ["a", "b", "b", "c"]})
    >>> history = history.with_columns(pl.col("date").str.to_date())
    >>> movers(history).select("app_id", "start_rank", "end_rank", "change", "move", "places_moved")
    shape: (3, 6)
    ┌────────┬────────────┬──────────┬────────┬─────────┬──────────────┐
    │ app_id ┆ start_rank ┆ end_rank ┆ change ┆ move    ┆ places_moved │
    │ ---    ┆ ---        ┆ ---      ┆ ---    ┆ ---     ┆ ---          │
    │ str    ┆ i64        ┆ i64      ┆ i64    ┆ str     ┆ i64          │
    ╞════════╪════════════╪══════════╪════════╪═════════╪══════════════╡
    │ a      ┆ 1          ┆ null     ┆ null   ┆ left    ┆ 2            │
    │ b      ┆ 2          ┆ 1        ┆ 1      ┆ up      ┆ 1            │
    │ c      ┆ null       ┆ 2        ┆ null   ┆ entered ┆ 1            │
    └────────┴────────────┴──────────┴────────┴─────────┴──────────────┘
    """
    function = "movers"
    what = "a search_history_frame or rank_history frame (a polars or pandas DataFrame)"
    raw = polars_frame(history_or_ranks, "history_or_ranks", function, what)
    is_ranks = "status" in raw.columns
    ranks_needed = ("keyword", "app_id", "date", "rank", "status", "results")
    needed = ranks_needed if is_ranks else ("keyword", "date", "rank", "app_id")
    what = "a rank_history frame" if is_ranks else "a search_history_frame or search_frame"
    frame = checked_frame(raw, "history_or_ranks", function, what, needed)
    ids = None if apps is None else app_ids(apps, function)
    first, last = day("start", start, function), day("end", end, function)
    top, within = count("top", top, function), count("within", within, function)
    if first is not None and last is not None and last < first:
        raise InvalidParameterError("end", last, f"a date on or after start={first}", endpoint=function)

    daily = _from_ranks if is_ranks else _from_history
    pairs, recorded, ranked = daily(with_series(frame), ids, function)
    first, last = _range(recorded, first, last, function)
    if first is not None and last is not None:
        recorded = recorded.filter(pl.col("date").is_between(first, last))
        ranked = ranked.filter(pl.col("date").is_between(first, last))
    series = list(SERIES)
    spans = recorded.group_by(series).agg(
        pl.col("date").min().alias("start_date"),
        pl.col("date").max().alias("end_date"),
        pl.len().cast(pl.Int64).alias("days_recorded"),
    )
    results = {end: recorded.rename({"date": f"{end}_date", "results": f"{end}_results"}) for end in ("start", "end")}
    keys = [*series, "app_id"]
    days_ranked = ranked.group_by(keys).agg(pl.len().cast(pl.Int64).alias("days_ranked"))
    out = (
        _left(pairs, spans, series)
        .pipe(_left, ranked.rename({"date": "start_date", "rank": "start_rank"}), [*keys, "start_date"])
        .pipe(_left, ranked.rename({"date": "end_date", "rank": "end_rank"}), [*keys, "end_date"])
        .pipe(_left, days_ranked, keys)
        .pipe(_left, results["start"], [*series, "start_date"])
        .pipe(_left, results["end"], [*series, "end_date"])
        .with_columns(
            _status("start"),
            _status("end"),
            (pl.col("start_rank") - pl.col("end_rank")).alias("change"),
            pl.col("days_ranked").fill_null(0),
            pl.col("days_recorded").fill_null(0),
        )
        .with_columns(_move())
        .with_columns(_size().alias("places_moved"))
        .sort("places_moved", descending=True, nulls_last=True, maintain_order=True)
    )
    if within is not None:
        out = out.filter((pl.col("start_rank") <= within) | (pl.col("end_rank") <= within))
    if top is not None:
        out = out.filter(pl.col("move").is_in(_MOVED)).head(top)
    return out.select(MOVERS.names).cast(MOVERS.schema)


_MOVED = ("up", "down", "entered", "left")
"""The moves ``top=`` keeps."""


def _move() -> pl.Expr:
    """up, down, same, entered or left: from the statuses at each end and the change."""
    start, end, change = pl.col("start_status"), pl.col("end_status"), pl.col("change")
    return (
        pl.when(change > 0)
        .then(pl.lit("up"))
        .when(change < 0)
        .then(pl.lit("down"))
        .when(change == 0)
        .then(pl.lit("same"))
        .when((start == "not_ranked") & (end == "ranked"))
        .then(pl.lit("entered"))
        .when((start == "ranked") & (end == "not_ranked"))
        .then(pl.lit("left"))
        .otherwise(pl.lit(None, pl.String))
        .alias("move")
    )


def _size() -> pl.Expr:
    """The places a move counts for the order: an entry or exit from one place below the last result."""
    move = pl.col("move")
    return (
        pl.when(move == "entered")
        .then(pl.max_horizontal(pl.col("start_results") + 1 - pl.col("end_rank"), 1))
        .when(move == "left")
        .then(pl.max_horizontal(pl.col("end_results") + 1 - pl.col("start_rank"), 1))
        .otherwise(pl.col("change").abs())
    )


Daily = tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]


def _from_ranks(frame: pl.DataFrame, ids: list[str] | None, function: str) -> Daily:
    """The (keyword, app) pairs, the days with results (how many) and each app's rank per day of a rank_history frame."""
    if ids is not None:
        absent = [a for a in ids if a not in set(frame["app_id"].to_list())]
        if absent:
            known = ", ".join(frame["app_id"].unique(maintain_order=True).head(10).to_list())
            raise InvalidParameterError("apps", absent, f"apps of the rank_history frame: {known}", endpoint=function)
        frame = frame.filter(pl.col("app_id").is_in(ids))
    pairs = frame.select(*SERIES, "app_id").unique(maintain_order=True)
    recorded = (
        frame.filter(pl.col("status") != "no_data")
        .group_by(*SERIES, "date")
        .agg(pl.col("results").max().cast(pl.Int64))
    )
    ranked = (
        frame.filter(pl.col("status") == "ranked", pl.col("rank").is_not_null())
        .group_by(*SERIES, "app_id", "date")
        .agg(pl.col("rank").min())
    )
    return pairs, recorded, ranked


def _from_history(frame: pl.DataFrame, ids: list[str] | None, function: str) -> Daily:
    """The same from a search history (or a live search: ads left out, the organic rank used; of a cache's
    two lists of a day, the organic one)."""
    frame = one_list(frame, [*SERIES, "date"])
    if "is_ad" in frame.columns:
        frame = frame.filter(~pl.col("is_ad").fill_null(False))
    rank = "organic_rank" if "organic_rank" in frame.columns else "rank"
    recorded = frame.group_by(*SERIES, "date").agg(pl.len().cast(pl.Int64).alias("results"))
    ranked = (
        frame.filter(pl.col(rank).is_not_null())
        .group_by(*SERIES, "app_id", "date", maintain_order=True)
        .agg(pl.col(rank).min().alias("rank"))
    )
    if ids is None:  # every app that ranked
        pairs = ranked.select(*SERIES, "app_id").unique(maintain_order=True)
    else:  # every keyword with each app given, ranked or not
        apps = pl.DataFrame({"app_id": ids}, schema={"app_id": pl.String})
        pairs = frame.select(SERIES).unique(maintain_order=True).join(apps, how="cross")
    return pairs, recorded, ranked


def _range(
    recorded: pl.DataFrame, first: date | None, last: date | None, function: str
) -> tuple[date | None, date | None]:
    """``start`` and ``end``, by default the first and last day with data; an end alone beyond the data is refused."""
    known_first, known_last = cast("date | None", recorded["date"].min()), cast("date | None", recorded["date"].max())
    if first is not None and last is None and known_last is not None and first > known_last:
        raise InvalidParameterError(
            "start", first, f"a date on or before the last day with data, {known_last}", endpoint=function
        )
    if last is not None and first is None and known_first is not None and last < known_first:
        raise InvalidParameterError(
            "end", last, f"a date on or after the first day with data, {known_first}", endpoint=function
        )
    return first or known_first, last or known_last


def _left(frame: pl.DataFrame, other: pl.DataFrame, on: list[str]) -> pl.DataFrame:
    """A left join that keeps the rows' order and matches null keys (a history without country ...)."""
    return frame.join(other, on=on, how="left", nulls_equal=True, maintain_order="left")


def _status(end: str) -> pl.Expr:
    return (
        pl.when(pl.col(f"{end}_date").is_null())
        .then(pl.lit("no_data"))
        .when(pl.col(f"{end}_rank").is_not_null())
        .then(pl.lit("ranked"))
        .otherwise(pl.lit("not_ranked"))
        .alias(f"{end}_status")
    )


# -- changes_before -------------------------------------------------------------------------------


@user_facing
def changes_before(movers: pl.DataFrame | Any, changes: pl.DataFrame | Any, *, days: int | None = 7) -> pl.DataFrame:
    """What each mover changed in the days before its move ended: one row per mover, in its order.

    ``movers`` is a :func:`movers` frame (any frame with ``app_id``, ``start_date`` and
    ``end_date``), ``changes`` a :func:`~storeframes.changes_frame` (any frame with
    ``app_id``, ``date`` and ``target``; leave out what you do not want counted, such as
    ``size``, which changes with every version). The window of a mover is precisely:

    * ``days=N``: from ``end_date - N days`` to ``end_date - 1 day``, both included: the ``N``
      days before the day the move ended (a change made on ``end_date`` itself is left out:
      that day's rank may have been taken before it);
    * ``days=None``: the whole move, from ``start_date`` to ``end_date - 1 day``.

    A change counts for a mover when it is of the same app (and the same country and device,
    when both frames name them) and dated in that window. Four columns are added after the
    mover's own (``CHANGES_BEFORE.describe()``): ``window_start`` and ``window_end`` (Date),
    ``changes`` (Int64, 0 when the app changed nothing then) and ``what_changed`` (String,
    the targets, each once, in the order first made, null when nothing changed). A mover
    without an ``end_date`` (its keyword has no data) gets nulls. ``changes`` must cover the
    windows (fetch it from the earliest ``window_start``): a day it lacks counts as no change.
    """
    function = "changes_before"
    moved = checked_frame(movers, "movers", function, "a movers() frame", ("app_id", "start_date", "end_date"))
    made = checked_frame(changes, "changes", function, "a changes_frame", ("app_id", "date", "target"))
    window = count("days", days, function)
    taken = [c.name for c in CHANGES_BEFORE.columns if c.name in moved.columns]
    if taken:
        raise InvalidParameterError(
            "movers",
            f"a frame with {', '.join(taken)}",
            "a movers() frame changes_before has not joined yet",
            endpoint=function,
        )
    keys = ["app_id"] + [
        c
        for c in ("country", "device")
        if c in moved.columns and c in made.columns and not moved[c].has_nulls() and not made[c].has_nulls()
    ]
    end = pl.col("end_date").cast(pl.Date)
    first = pl.col("start_date").cast(pl.Date) if window is None else end - timedelta(days=window)
    rows = moved.with_row_index("_row").with_columns(
        first.alias("window_start"), (end - timedelta(days=1)).alias("window_end")
    )
    found = (
        rows.select("_row", *keys, "window_start", "window_end")
        .join(made.select(*keys, pl.col("date").cast(pl.Date), pl.col("target").cast(pl.String)), on=keys)
        .filter(pl.col("date").is_between(pl.col("window_start"), pl.col("window_end")))
        .sort("_row", "date", "target")
        .group_by("_row", maintain_order=True)
        .agg(
            pl.len().cast(pl.Int64).alias("changes"),
            pl.col("target").unique(maintain_order=True).str.join(", ").alias("what_changed"),
        )
    )
    return (
        rows.join(found, on="_row", how="left", maintain_order="left")
        .with_columns(
            pl.when(pl.col("window_start").is_not_null()).then(pl.col("changes").fill_null(0)).alias("changes")
        )
        .drop("_row")
        .cast(CHANGES_BEFORE.schema)
    )


# -- category_standing ----------------------------------------------------------------------------

_GROUPS = ("country", "device", "type", "channel", "start_date", "end_date")


@user_facing
def category_standing(
    benchmarks: pl.DataFrame | Any, category: str | int, *, rate: str = "page_views_to_installs"
) -> pl.DataFrame:
    """Where a category stands, per country and channel: its rate, its place and the median.

    ``benchmarks`` is a :func:`~storeframes.benchmarks_frame`; ``category`` a code
    (``"6008"``) or a name (``"Photo & Video"``, any case) of the frame; ``rate`` one of
    ``RATES``. One row per country and channel (and device, type and date range, when the
    frame holds several), in the frame's order, with columns in this order:

    * ``country``, ``channel``, ``category``, ``category_name`` (String);
    * the rate, named as ``rate`` (Float64, percent; null where the service has too few apps);
    * ``place`` (Int64): 1 = the highest rate there; categories of equal rate share a place;
      null when the category has no rate there;
    * ``out_of`` (Int64): how many categories have a rate there (nulls are not ranked);
    * ``median`` (Float64): the median of the rate over those categories;
    * ``vs_median`` (Float64): the category's rate minus the median;
    * then ``device``, ``type``, ``start_date``, ``end_date``, those the frame has.

    A category not in the frame is refused with the closest names; a name two categories
    share (Music: the app and the game category) asks for a code.
    """
    function = "category_standing"
    if rate not in RATES:
        raise InvalidParameterError("rate", rate, f"one of {', '.join(RATES)}", endpoint=function)
    frame = checked_frame(
        benchmarks,
        "benchmarks",
        function,
        "a benchmarks_frame",
        ("country", "channel", "category", "category_name", rate),
    )
    frame = frame.with_columns(
        pl.col("category").cast(pl.String), pl.col("category_name").cast(pl.String), pl.col(rate).cast(pl.Float64)
    )
    code, name = _category(frame, category, function)
    groups = [c for c in _GROUPS if c in frame.columns]
    value = pl.col(rate)
    ranked = frame.with_columns(
        value.rank("min", descending=True).over(groups).cast(pl.Int64).alias("place"),
        value.count().over(groups).cast(pl.Int64).alias("out_of"),
        value.median().over(groups).alias("median"),
    )
    every = ranked.group_by(groups, maintain_order=True).agg(pl.col("out_of").first(), pl.col("median").first())
    mine = ranked.filter(pl.col("category") == code).unique(groups, keep="first", maintain_order=True)
    rest = [c for c in groups if c not in ("country", "channel")]
    return (
        every.join(mine.select(*groups, rate, "place"), on=groups, how="left", nulls_equal=True, maintain_order="left")
        .with_columns(
            pl.lit(code, pl.String).alias("category"),
            pl.lit(name, pl.String).alias("category_name"),
            (pl.col(rate) - pl.col("median")).alias("vs_median"),
        )
        .select(
            "country", "channel", "category", "category_name", rate, "place", "out_of", "median", "vs_median", *rest
        )
    )


def _category(frame: pl.DataFrame, category: Any, function: str) -> tuple[str, str | None]:
    """The code and name of ``category`` (a code or a name of the frame, any case)."""
    if isinstance(category, bool) or not isinstance(category, (str, int)) or not str(category).strip():
        raise InvalidParameterError(
            "category", category, "a category code or name, such as '6008' or 'Photo & Video'", endpoint=function
        )
    pairs = frame.select("category", "category_name").unique(maintain_order=True).drop_nulls("category")
    known = [(str(code), name) for code, name in pairs.iter_rows()]
    wanted = str(category).strip().casefold()
    found = list(dict.fromkeys(code for code, name in known if wanted in (code.casefold(), (name or "").casefold())))
    names = dict(known)
    if len(found) > 1:
        listed = ", ".join(f"{code} ({names[code]})" for code in found)
        raise InvalidParameterError(
            "category", category, f"one category: that name is shared, give a code: {listed}", endpoint=function
        )
    if found:
        return found[0], names[found[0]]
    labels = {(name or code).casefold(): f"{name!r} ({code})" for code, name in known}
    close = difflib.get_close_matches(wanted, labels, n=5, cutoff=0.5)
    if not labels:
        hint = "the frame has no category (an empty benchmarks frame?)"
    elif close:
        hint = "closest: " + ", ".join(labels[c] for c in close)
    else:
        hint = "such as " + ", ".join(list(labels.values())[:6]) + " ..."
    raise InvalidParameterError(
        "category", category, f"a category code or name of the frame; {hint}", endpoint=function
    )


# -- with_names -----------------------------------------------------------------------------------

_CATEGORY_NAMES = {**IOS_CATEGORIES, **ANDROID_CATEGORIES}


@user_facing
def with_names(frame: pl.DataFrame | Any, metadata: pl.DataFrame | Any, *, categories: bool = False) -> pl.DataFrame:
    """``frame`` with each app's title from ``metadata`` as ``app_title``, right after ``app_id``.

    ``frame`` is any frame with an ``app_id`` column (movers, changes, ranks, metrics ...);
    ``metadata`` a :func:`~storeframes.metadata_frame`. Rows and their order stay as they
    are; ``app_title`` (String) is null for an app the metadata lacks (the name is not
    ``title``, which a pivot of change targets may hold). When the metadata holds
    several countries and ``frame`` has a ``country`` column, the title of that country is
    used. ``categories=True`` also adds ``category`` (the app's first category code) and
    ``category_name`` (its name in the store's list), after ``app_title``.
    """
    function = "with_names"
    rows = checked_frame(frame, "frame", function, "a frame with app ids", ("app_id",))
    needed = ("app_id", "title", "categories") if categories else ("app_id", "title")
    meta = checked_frame(metadata, "metadata", function, "a metadata_frame", needed)
    added = ["app_title", "category", "category_name"] if categories else ["app_title"]
    taken = [c for c in added if c in rows.columns]
    if taken:
        raise InvalidParameterError(
            "frame",
            f"a frame with {', '.join(taken)}",
            "a frame without the columns with_names adds (drop them first)",
            endpoint=function,
        )
    keys = ["app_id"]
    if "country" in rows.columns and "country" in meta.columns and meta["country"].n_unique() > 1:
        keys.append("country")
    columns = [pl.col("title").cast(pl.String).alias("app_title")]
    if categories:
        first = pl.col("categories").list.first().cast(pl.String)
        columns += [
            first.alias("category"),
            first.replace_strict(_CATEGORY_NAMES, default=None, return_dtype=pl.String).alias("category_name"),
        ]
    names = (
        meta.with_columns(pl.col("app_id").cast(pl.String))
        .select(*keys, *columns)
        .unique(keys, keep="first", maintain_order=True)
    )
    order = list(rows.columns)
    at = order.index("app_id") + 1
    return (
        rows.with_columns(pl.col("app_id").cast(pl.String))
        .join(names, on=keys, how="left", nulls_equal=True, maintain_order="left")
        .select(*order[:at], *added, *order[at:])
    )
