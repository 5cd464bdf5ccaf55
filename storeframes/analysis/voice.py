"""Share of voice: how much of the top of a keyword set's results each app (or developer) holds, day by day.

Pure polars on a search history (or the days a cache keeps of the live search): nothing is sent.

>>> import storeframes as sf
>>> history = sf.search_history_frame(["photo editor", "photo filters"], start="2026-11-01", end="2026-11-28")  # doctest: +SKIP
>>> sf.share_of_voice(history, top=10, weights="equal")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import date
from typing import Any, cast

import polars as pl

from .._tracebacks import user_facing
from ..errors import InvalidParameterError
from ..schemas import Column, TableSchema
from .inputs import NEEDED, PLACE, app_ids, best_places, checked_frame, count, organic_rows, recorded_days

__all__ = ["CTR_CURVE", "SHARE_OF_VOICE", "ctr_weight", "share_of_voice"]

CTR_CURVE: dict[int, float] = {
    1: 0.285,
    2: 0.157,
    3: 0.110,
    4: 0.080,
    5: 0.072,
    6: 0.051,
    7: 0.040,
    8: 0.032,
    9: 0.028,
    10: 0.025,
}
"""The share of searches that click each of the first ten places: SISTRIX's study of organic click-through
rates by position (80 million keywords, July 2020: "Why (almost) everything you knew about Google CTR is no
longer valid"). The stores publish no curve of their own; this is the most widely cited public one, and a
result list is a result list: the first place takes most taps and the tenth a tenth of the first's. Beyond the
tenth place :func:`ctr_weight` lets the weight fall as ``0.025 x 10 / place``. Give ``weights=`` a mapping or a
function to use another curve."""

SHARE_OF_VOICE = TableSchema(
    "share_of_voice",
    "one row per place, day and app (or developer)",
    (
        Column("date", pl.Date(), "the day"),
        Column("app_id", pl.String(), "the app's id (by='developer': developer_id and developer_name instead)"),
        Column("share", pl.Float64(), "the weighted share of the top places held, 0 to 1; null on a day without data"),
        Column("positions", pl.Int64(), "top places held that day, over every keyword; null on a day without data"),
        Column("keywords", pl.Int64(), "keywords on which it holds one top place or more; null on a day without data"),
        Column("keywords_recorded", pl.Int64(), "keywords with results that day: the share's denominator counts them"),
        Column("keywords_tracked", pl.Int64(), "keywords of the history in this place, recorded that day or not"),
        Column("country", pl.String(), "two-letter country code of the history"),
        Column("language", pl.String(), "two-letter language code of the history"),
        Column("device", pl.String(), "iphone, ipad or android"),
    ),
)
"""The columns of :func:`share_of_voice`, in order (``by="developer"`` puts ``developer_id`` and
``developer_name`` in place of ``app_id``)."""

_FUNCTION = "share_of_voice"
_DEVELOPER = ("developer_id", "developer_name")


@user_facing
def ctr_weight(place: int) -> float:
    """The weight of a place under :data:`CTR_CURVE`: its table for places 1-10, ``0.25 / place`` beyond.

    >>> ctr_weight(1), ctr_weight(10), ctr_weight(20)
    (0.285, 0.025, 0.0125)
    """
    if place < 1:
        raise InvalidParameterError("place", place, "a place of 1 or more", endpoint=_FUNCTION)
    return CTR_CURVE.get(place, 0.25 / place)


def _weights(weights: Any, top: int) -> list[float]:
    """The weight of each place 1..top, from "ctr", "equal", a mapping or a function; refused unless every
    weight is a number of 0 or more and one at least is above 0."""
    allowed = '"ctr", "equal", a mapping {place: weight} or a function place -> weight'
    if weights == "ctr":
        values = [ctr_weight(p) for p in range(1, top + 1)]
    elif weights == "equal":
        values = [1.0] * top
    elif isinstance(weights, Mapping):
        values = [weights.get(p, 0.0) for p in range(1, top + 1)]
    elif callable(weights):
        values = [cast("Callable[[int], Any]", weights)(p) for p in range(1, top + 1)]
    else:
        raise InvalidParameterError("weights", weights, allowed, endpoint=_FUNCTION)
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0 for v in values) or not any(values):
        raise InvalidParameterError(
            "weights",
            weights,
            f"{allowed}, giving places 1-{top} numbers of 0 or more, one above 0",
            endpoint=_FUNCTION,
        )
    return [float(v) for v in values]


def _owners(metadata: Any, by: str) -> pl.DataFrame | None:
    """None by app; by developer, each app's developer from ``metadata``."""
    if by == "app":
        return None
    if by != "developer":
        raise InvalidParameterError("by", by, '"app" or "developer"', endpoint=_FUNCTION)
    if metadata is None:
        raise InvalidParameterError(
            "metadata", None, 'a metadata_frame of the apps, to group by="developer"', endpoint=_FUNCTION
        )
    meta = checked_frame(metadata, "metadata", _FUNCTION, "a metadata_frame", ("app_id", *_DEVELOPER))
    return meta.select(pl.col("app_id").cast(pl.String), *(pl.col(c).cast(pl.String) for c in _DEVELOPER)).unique(
        "app_id", keep="first", maintain_order=True
    )


@user_facing
def share_of_voice(
    history: pl.DataFrame | Any,
    apps: str | int | Sequence[str | int] | None = None,
    *,
    top: int = 10,
    weights: str | Mapping[int, float] | Callable[[int], float] = "ctr",
    by: str = "app",
    metadata: pl.DataFrame | Any | None = None,
) -> pl.DataFrame:
    """Each app's share of the top ``top`` places of a set of keywords, per day and place.

    ``history`` is a :func:`~storeframes.search_history_frame`, a cache's days of the live search
    (:func:`~storeframes.snapshots` ``("search")``: its organic list is read) or a
    :func:`~storeframes.search_frame` (ads left out, the organic rank used). On each day and place
    (country, language, device), every keyword with results that day counts: an app's ``share`` is the
    weight of the places it holds in the top ``top`` of each keyword, over the weight of all the top places
    of those keywords. With ``weights="equal"`` that is the places it holds over ``top`` x
    ``keywords_recorded``; with ``"ctr"`` (the default) each place weighs what :data:`CTR_CURVE` says
    searchers click it (the first about eleven times the tenth); a mapping ``{place: weight}`` or a function
    of the place gives another curve.

    The rows cover every day from the history's first to its last, for every app that held a top place on
    one day or more of it (or the ``apps`` given, held or not): an app without a place that day has
    ``share`` 0. A day on which no keyword of a place has results is a hole, not a zero: its ``share``,
    ``positions`` and ``keywords`` are null and ``keywords_recorded`` is 0. ``keywords_recorded`` below
    ``keywords_tracked`` says that some keywords had no results that day, and the share is over the others.
    ``by="developer"`` adds up each developer's apps (``metadata=`` a :func:`~storeframes.metadata_frame`
    of them; an app it does not name is its own developer, with a null name). Rows come by place, day, and
    share (largest first).

    >>> from datetime import date
    >>> history = pl.DataFrame({"keyword": ["maps", "maps", "taxi", "taxi"], "date": [date(2026, 1, 1)] * 4,
    ...                         "rank": [1, 2, 1, 2], "app_id": ["a", "b", "b", "c"]})
    >>> share_of_voice(history, top=2, weights="equal").select("app_id", "share", "positions", "keywords")
    shape: (3, 4)
    ┌────────┬───────┬───────────┬──────────┐
    │ app_id ┆ share ┆ positions ┆ keywords │
    │ ---    ┆ ---   ┆ ---       ┆ ---      │
    │ str    ┆ f64   ┆ i64       ┆ i64      │
    ╞════════╪═══════╪═══════════╪══════════╡
    │ b      ┆ 0.5   ┆ 2         ┆ 2        │
    │ a      ┆ 0.25  ┆ 1         ┆ 1        │
    │ c      ┆ 0.25  ┆ 1         ┆ 1        │
    └────────┴───────┴───────────┴──────────┘
    """
    frame = checked_frame(history, "history", _FUNCTION, "a search_history_frame or search_frame", NEEDED)
    size = count("top", top, _FUNCTION)
    if size is None:
        raise InvalidParameterError("top", top, "a whole number of 1 or more", endpoint=_FUNCTION)
    curve = _weights(weights, size)
    owners = _owners(metadata, by)
    ids = None if apps is None else app_ids(apps, _FUNCTION)
    key = ["app_id"] if owners is None else list(_DEVELOPER)

    rows = organic_rows(frame)
    days_recorded = recorded_days(rows)
    recorded = days_recorded.group_by(*PLACE, "date").agg(pl.len().cast(pl.Int64).alias("keywords_recorded"))
    tracked = days_recorded.group_by(*PLACE).agg(pl.col("keyword").n_unique().cast(pl.Int64).alias("keywords_tracked"))
    held = best_places(rows, within=size).with_columns(
        pl.col("rank").replace_strict(list(range(1, size + 1)), curve, return_dtype=pl.Float64).alias("_weight")
    )
    if owners is not None:
        held = held.join(owners, on="app_id", how="left").with_columns(
            pl.col("developer_id").fill_null(pl.col("app_id"))
        )
    if ids is not None:
        held = held.filter(pl.col("app_id").is_in(ids))
    per_day = held.group_by(*PLACE, "date", *key).agg(
        pl.col("_weight").sum().alias("_held"),
        pl.len().cast(pl.Int64).alias("positions"),
        pl.col("keyword").n_unique().cast(pl.Int64).alias("keywords"),
    )
    if ids is not None and owners is None:
        who = tracked.select(PLACE).join(pl.DataFrame({"app_id": ids}, schema={"app_id": pl.String}), how="cross")
    else:
        who = held.select(*PLACE, *key).unique()
    first, last = cast("date | None", days_recorded["date"].min()), cast("date | None", days_recorded["date"].max())
    if first is None or last is None or who.height == 0:
        return _empty(key)
    days = pl.DataFrame({"date": pl.date_range(first, last, "1d", eager=True)})
    out = (
        who.join(days, how="cross")
        .join(recorded, on=[*PLACE, "date"], how="left", nulls_equal=True)
        .join(tracked, on=list(PLACE), how="left", nulls_equal=True)
        .join(per_day, on=[*PLACE, "date", *key], how="left", nulls_equal=True)
        .with_columns(pl.col("keywords_recorded").fill_null(0))
        .with_columns(
            *(
                pl.when(pl.col("keywords_recorded") > 0).then(pl.col(c).fill_null(0)).alias(c)
                for c in ("positions", "keywords")
            ),
            pl.when(pl.col("keywords_recorded") > 0)
            .then(pl.col("_held").fill_null(0.0) / (pl.col("keywords_recorded") * sum(curve)))
            .alias("share"),
        )
        .sort(*PLACE, "date", "share", *key, descending=[False, False, False, False, True, *[False] * len(key)])
    )
    return out.select(_columns(key)).cast(_schema(key))


def _columns(key: list[str]) -> list[str]:
    return [c for name in SHARE_OF_VOICE.names for c in (key if name == "app_id" else [name])]


def _schema(key: list[str]) -> pl.Schema:
    schema = SHARE_OF_VOICE.schema
    return pl.Schema({c: schema.get(c, pl.String()) for c in _columns(key)})


def _empty(key: list[str]) -> pl.DataFrame:
    return pl.DataFrame(schema=_schema(key))
