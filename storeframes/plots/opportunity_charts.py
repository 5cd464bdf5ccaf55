"""The opportunities chart: per keyword, best score first, the app's rank against its best competitor's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, overload

import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, NullLocator
from matplotlib.transforms import blended_transform_factory, offset_copy

from .._tracebacks import user_facing
from ..errors import InvalidParameterError
from ..ranks import polars_frame
from .common import _WIDTH, APP_COLORS, _app_label, _figure, _need, _nothing, _short, app_labels

_APP, _RIVAL = APP_COLORS[0], APP_COLORS[1]
_LINK = "#9a9a9a"
_PLACE = ("country", "language", "device")
_TICKS = (1, 2, 3, 5, 10, 20, 30, 50, 100, 200, 300, 500, 1000)
NOT_RANKED = "not ranked"
"""The label of the slot beyond the rank axis where an unranked app (or competitor) is drawn."""


@overload
def opportunities_chart(
    opportunities: pl.DataFrame | Any,
    *,
    n: int = 20,
    top: int = 10,
    names: Mapping[str, str] | pl.DataFrame | None = None,
    ax: None = None,
    title: str | None = None,
) -> Figure: ...


@overload
def opportunities_chart(
    opportunities: pl.DataFrame | Any,
    *,
    n: int = 20,
    top: int = 10,
    names: Mapping[str, str] | pl.DataFrame | None = None,
    ax: Axes,
    title: str | None = None,
) -> Axes: ...


@user_facing
def opportunities_chart(
    opportunities: pl.DataFrame | Any,
    *,
    n: int = 20,
    top: int = 10,
    names: Mapping[str, str] | pl.DataFrame | None = None,
    ax: Axes | None = None,
    title: str | None = None,
) -> Figure | Axes:
    """The keyword opportunities as a chart: the app's rank against its best competitor's, best score first.

    ``opportunities`` is a :func:`~storeframes.analysis.keyword_opportunities` frame. The
    ``n`` keywords of the highest ``score`` are drawn one a row, the best at the top: a dot
    at the app's rank on the keyword's latest day, a diamond at the best competitor's, a
    line between them; at the right the score (0-100) and the best competitor ("none
    ranked" when no competitor was among the results). Rank 1 is at the left, on a log
    scale so the top places keep their room; a dashed line marks the top ``top`` (give the
    ``top=`` the frame was computed with). An app (or competitor) not among the keyword's
    results is drawn hollow beyond the rank axis, in a slot labelled "not ranked", never at
    a made-up rank; the legend says so. With several places (country, language, device) in
    the frame each row names its place. The app and the competitors are named from
    ``names`` (a metadata frame or a mapping of id to name). A frame without rows is one
    line saying so. Without ``ax`` the Figure is returned; with ``ax`` the Axes.

    >>> chances = sf.keyword_opportunities(history, "3233849169", ["394079159", "1395556972"])  # doctest: +SKIP
    >>> opportunities_chart(chances, n=15, names=sf.metadata_frame(["3233849169", "394079159", "1395556972"]))  # doctest: +SKIP
    <Chart size 1000x630 with 1 Axes>
    """
    function = "opportunities_chart"
    what = "a keyword_opportunities frame (keyword, app_rank, best_competitor_rank, score)"
    frame = polars_frame(opportunities, "opportunities", function, what)
    _need(frame, ("keyword", "app_rank", "best_competitor_rank", "score"), "opportunities", function, what)
    for name, value in (("n", n), ("top", top)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise InvalidParameterError(name, value, f"a whole number of {_NOUNS[name]} >= 1", endpoint=function)
    for column in ("app_rank", "best_competitor_rank", "score"):
        if not (frame[column].dtype.is_numeric() or frame[column].dtype == pl.Null):
            raise InvalidParameterError(
                "opportunities", f"a {column} column of {frame[column].dtype}", what, endpoint=function
            )
    apps = frame["app_id"].drop_nulls().unique(maintain_order=True).to_list() if "app_id" in frame.columns else []
    if len(apps) > 1:
        raise InvalidParameterError(
            "opportunities",
            f"a frame of {len(apps)} apps ({', '.join(map(str, apps[:4]))})",
            "a keyword_opportunities frame of one app (filter it by app_id)",
            endpoint=function,
        )
    labels = app_labels(names, function)
    app = _app_label(str(apps[0]), labels) if apps else "the app"
    if frame.height == 0:
        return _nothing(ax, f"No keyword opportunities for {app}: the frame has no rows.")
    frame = frame.with_columns(
        pl.col("app_rank").cast(pl.Float64),
        pl.col("best_competitor_rank").cast(pl.Float64),
        pl.col("score").cast(pl.Float64),
        *(pl.lit(None, pl.String).alias(c) for c in _PLACE if c not in frame.columns),
    )
    rows = frame.sort("score", descending=True, nulls_last=True, maintain_order=True).head(n)
    several_places = frame.select(_PLACE).unique().height > 1
    ranks = [r for c in ("app_rank", "best_competitor_rank") for r in rows[c].to_list() if r is not None]
    worst = max([top, *ranks])
    beyond = worst * 1.9  # the slot of "not ranked", past the axis' last rank
    figure, own = _figure(ax, _WIDTH, 1.9 + 0.3 * rows.height)
    target_ax = own if own is not None else figure.subplots()
    unranked = {"app": 0, "competitor": 0}
    for y, row in enumerate(rows.iter_rows(named=True)):
        mine = row["app_rank"] if row["app_rank"] is not None else beyond
        theirs = row["best_competitor_rank"] if row["best_competitor_rank"] is not None else beyond
        target_ax.plot([mine, theirs], [y, y], color=_LINK, linewidth=2.2, solid_capstyle="round", zorder=2)
        for who, x, given, marker, color, size in (
            ("competitor", theirs, row["best_competitor_rank"], "D", _RIVAL, 6.5),
            ("app", mine, row["app_rank"], "o", _APP, 8.0),
        ):
            hollow = given is None
            unranked[who] += hollow
            target_ax.plot(
                x,
                y,
                marker,
                color=color,
                markersize=size,
                markerfacecolor="white" if hollow else color,
                markeredgewidth=1.6 if hollow else 0.6,
                markeredgecolor=color if hollow else "black",
                zorder=3,
                gid=f"{who}_unranked" if hollow else who,
            )
    _rank_axis(target_ax, rows, worst, beyond, top, several_places)
    _scores(target_ax, figure, rows, labels)
    handles = [
        Line2D([], [], linestyle="none", marker="o", color=_APP, markeredgecolor="black", label=app),
        Line2D([], [], linestyle="none", marker="D", color=_RIVAL, markeredgecolor="black", label="best competitor"),
        Line2D([], [], color="#555555", linestyle="--", linewidth=1, label=f"top {top}"),
    ]
    if any(unranked.values()):
        who = " or ".join(w for w in ("app", "competitor") if unranked[w])
        key = Line2D([], [], linestyle="none", marker="o", markersize=7, markerfacecolor="white", label="")
        key.set_markeredgecolor("#555555")
        key.set_label(f"hollow: {who} not among the results")
        handles.append(key)
    total = frame.height
    words = f"keyword{'s' if total > 1 else ''}" + (" and places" if several_places else "")
    shown = f"the {rows.height} best of {total} {words}" if total > rows.height else f"{total} {words}"
    place = "" if several_places else " · ".join(str(rows[c][0]) for c in _PLACE if rows[c][0] is not None)
    heading = title or f"Keyword opportunities of {app}" + (f", {place}" if place else "")
    heading += f"\n{shown} by score: its rank on each keyword's latest day against the best competitor's"
    if own is not None:
        under = offset_copy(own.transAxes, fig=figure, y=-50, units="points")  # under the rank axis' labels
        own.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(0, 0), bbox_transform=under, ncols=4)
        own.set_title(heading, loc="left", fontsize=10, pad=16)  # above the scores' heading
        return own
    figure.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=9, frameon=False)
    figure.suptitle(heading, x=0.01, ha="left", fontsize=12)
    return figure


_NOUNS = {"n": "keywords", "top": "places (keyword_opportunities' top=)"}


def _rank_axis(ax: Axes, rows: pl.DataFrame, worst: float, beyond: float, top: int, several_places: bool) -> None:
    """Rank 1 at the left on a log scale, the "not ranked" slot past a break, the keywords down the side."""
    ax.set_xscale("log")
    ax.set_xlim(0.8, beyond * 1.25)
    ticks = [t for t in _TICKS if t <= worst * 1.3]  # the next round rank too, short of the not-ranked slot
    ax.xaxis.set_major_locator(FixedLocator([*ticks, beyond]))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([*(str(t) for t in ticks), NOT_RANKED.replace(" ", "\n")])
    ax.axvspan(worst * 1.35, beyond * 1.25, color="#f2f2f2", linewidth=0, zorder=0)
    ax.axvline(top + 0.5, color="#555555", linestyle="--", linewidth=1, zorder=1)
    ax.set_xlabel("rank (1 = top, log scale)")
    texts = []
    for row in rows.iter_rows(named=True):
        text = _short(str(row["keyword"]), 30)
        if several_places:
            text += f" ({', '.join(str(row[c]) for c in ('country', 'device') if row[c])})"
        texts.append(text)
    ax.set_yticks(list(range(rows.height)), texts)
    ax.set_ylim(rows.height - 0.4, -0.6)  # the best score at the top
    ax.grid(True, axis="x", alpha=0.3)
    ax.set_axisbelow(True)


def _scores(ax: Axes, figure: Figure, rows: pl.DataFrame, labels: Mapping[str, str]) -> None:
    """Each row's score just right of the axis, under a "score" heading, and its best competitor beside it."""
    where = blended_transform_factory(ax.transAxes, ax.transData)
    for y, score in enumerate(rows["score"].to_list()):
        text = "no score" if score is None else f"{score:.0f}"
        ax.text(1.01, y, text, transform=where, va="center", ha="left", fontsize=9, gid="score")
    ax.text(1.01, -0.6, "score", transform=where, va="bottom", ha="left", fontsize=9, fontweight="bold")
    if "best_competitor" not in rows.columns:
        return
    beside = offset_copy(where, fig=figure, x=36, units="points")  # past the widest score
    for y, rival in enumerate(rows["best_competitor"].to_list()):
        text = "none ranked" if rival is None else _short(labels.get(str(rival), str(rival)), 24)
        ax.text(1.01, y, text, transform=beside, va="center", ha="left", fontsize=8, color=_RIVAL, gid="rival")
    ax.text(1.01, -0.6, "best competitor", transform=beside, va="bottom", ha="left", fontsize=9, color=_RIVAL)
