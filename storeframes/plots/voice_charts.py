"""The share of voice chart: each app's share of a keyword set's top places over time, stacked, one panel per place."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import date, timedelta
from typing import Any, cast, overload

import matplotlib.dates as mdates
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import PercentFormatter

from .._tracebacks import user_facing
from ..errors import InvalidParameterError
from ..ranks import polars_frame
from .common import _WIDTH, APP_COLORS, MAX_APPS, _app_label, _date_axis, _figure, _need, _nothing, app_labels

_OTHERS = "#c7c7c7"
_GAP_FACE, _GAP_HATCH = "#ffffff", "#8c8c8c"  # hatched: no keyword recorded, so no share at all
_PLACE = ("country", "language", "device")
MOST_APPS = MAX_APPS - 1
"""The most apps :func:`share_of_voice_chart` draws by name (``top_apps``); the rest are summed into "others"."""


@overload
def share_of_voice_chart(
    sov: pl.DataFrame | Any,
    *,
    top_apps: int = 8,
    names: Mapping[str, str] | pl.DataFrame | None = None,
    ax: None = None,
    title: str | None = None,
) -> Figure: ...


@overload
def share_of_voice_chart(
    sov: pl.DataFrame | Any,
    *,
    top_apps: int = 8,
    names: Mapping[str, str] | pl.DataFrame | None = None,
    ax: Axes,
    title: str | None = None,
) -> Axes: ...


@user_facing
def share_of_voice_chart(
    sov: pl.DataFrame | Any,
    *,
    top_apps: int = 8,
    names: Mapping[str, str] | pl.DataFrame | None = None,
    ax: Axes | None = None,
    title: str | None = None,
) -> Figure | Axes:
    """Each app's share of voice over time, stacked: who holds the keywords' top places, day by day.

    ``sov`` is a :func:`~storeframes.analysis.share_of_voice` frame (one row per place, day
    and app; with ``by="developer"`` one per developer). The ``top_apps`` apps of the largest
    share over the whole period are stacked by name, the largest at the bottom, each in a
    colour of its own; the other apps of the frame are summed into one grey "others" band on
    top (an app that would be alone in it is drawn by name). The y axis is in percent of the
    keywords' top places (weighted as the frame was computed); the top of the stack is the
    share the frame's apps hold together. Apps are named from ``names`` (a metadata frame or
    a mapping of id to name); developers from the frame's ``developer_name``.

    A day on which no keyword was recorded (``keywords_recorded`` 0, ``share`` null) has no
    share: it is a hatched band, never drawn as 0, and the title counts those days. Without
    ``ax`` each place (country, language, device) gets a panel of its own and the Figure is
    returned; with ``ax`` the frame must hold one place, and the Axes is returned. A frame
    without rows, or without a recorded day, is one line saying so.

    >>> sov = sf.share_of_voice(sf.search_history_frame(["photo editor", "collage maker"],
    ...                                                  start="2026-10-20", end="2026-11-18"))  # doctest: +SKIP
    >>> share_of_voice_chart(sov, top_apps=5, names=sf.metadata_frame(sov["app_id"].unique()))  # doctest: +SKIP
    <Chart size 1000x450 with 1 Axes>
    """
    function = "share_of_voice_chart"
    what = "a share_of_voice frame (date, app_id or developer_id, share, keywords_recorded)"
    frame = polars_frame(sov, "sov", function, what)
    key = next((c for c in ("app_id", "developer_id") if c in frame.columns), None)
    if key is None:
        raise InvalidParameterError("sov", "a frame without app_id or developer_id", what, endpoint=function)
    _need(frame, ("date", "share", "keywords_recorded"), "sov", function, what)
    if not isinstance(top_apps, int) or isinstance(top_apps, bool) or not 1 <= top_apps <= MOST_APPS:
        raise InvalidParameterError(
            "top_apps", top_apps, f"a whole number of apps from 1 to {MOST_APPS}", endpoint=function
        )
    if not (frame["share"].dtype.is_numeric() or frame["share"].dtype == pl.Null):
        raise InvalidParameterError("sov", f"a share column of {frame['share'].dtype}", what, endpoint=function)
    labels = _labels(frame, key, names, function)
    if frame.height == 0:
        return _nothing(ax, "No share of voice: the frame has no rows (no search history was given for it).")
    frame = frame.with_columns(
        pl.col("date").cast(pl.Date),
        pl.col(key).cast(pl.String),
        pl.col("share").cast(pl.Float64),
        (pl.col("keywords_recorded").fill_null(0) > 0).alias("_recorded"),
        *(pl.lit(None, pl.String).alias(c) for c in _PLACE if c not in frame.columns),
    )
    first, last = cast(date, frame["date"].min()), cast(date, frame["date"].max())
    places = frame.select(_PLACE).unique(maintain_order=True)
    if ax is not None and places.height > 1:
        raise InvalidParameterError(
            "ax",
            f"an Axes for {places.height} places",
            "ax= with a frame of one place (filter the frame by country, language and device), "
            "or no ax for a panel per place",
            endpoint=function,
        )
    if not frame["_recorded"].any():
        return _nothing(ax, f"No share of voice from {first} to {last}: no keyword was recorded on any day.")
    series, colors, rest = _series(frame, key, top_apps, labels)
    figure, own = _figure(ax, _WIDTH, 1.6 + 2.9 * places.height)
    axes: list[Axes] = (
        [own] if own is not None else list(figure.subplots(places.height, 1, sharex=True, squeeze=False)[:, 0])
    )
    peak, gaps = 0.0, list[int]()
    for target_ax, place in zip(axes, places.iter_rows(named=True), strict=True):
        rows = frame.filter(*(pl.col(c).eq_missing(place[c]) for c in _PLACE))
        tops, missing = _stack(target_ax, rows, key, series, colors, first, last)
        peak = max(peak, tops)
        gaps.append(missing)
        if places.height > 1:
            where = " · ".join(str(place[c]) for c in _PLACE if place[c])
            said = f": {missing} day{'s' if missing > 1 else ''} without data" if missing else ""
            target_ax.set_title(where + said, loc="left", fontsize=10)
        target_ax.set_ylabel("share of voice")
        target_ax.yaxis.set_major_formatter(PercentFormatter(xmax=1.0, decimals=0))
        target_ax.grid(True, axis="y", alpha=0.3)
        target_ax.set_axisbelow(True)
        _date_axis(target_ax, first, last)
    for target_ax in axes:  # one scale for every panel: the shares compare across places
        target_ax.set_ylim(0, _ceiling(peak))
    axes[-1].set_xlabel("date")
    heading = _heading(frame, key, series, len(series) - (rest > 0), first, last, gaps, title)
    handles = [Patch(color=colors[name], label=name) for name in reversed(series)]  # top of the stack first
    if any(p.get_gid() == "no_data" for a in axes for p in a.patches):
        handles.append(Patch(facecolor=_GAP_FACE, edgecolor=_GAP_HATCH, hatch="///", label="no keyword recorded"))
    if own is not None:
        own.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        own.set_title(heading, loc="left", fontsize=10)
        return own
    figure.legend(handles=handles, loc="outside right center", fontsize=9, frameon=False)
    figure.suptitle(heading, x=0.01, ha="left", fontsize=12)
    return figure


def _labels(frame: pl.DataFrame, key: str, names: Any, function: str) -> dict[str, str]:
    """The names of the apps (from ``names``) or of the developers (the frame's, then ``names``)."""
    if key == "app_id":
        return app_labels(names, function)
    own: dict[str, str] = {}
    if "developer_name" in frame.columns:
        rows = frame.select(pl.col(key).cast(pl.String), "developer_name").drop_nulls().unique(key, keep="first")
        own = dict(rows.iter_rows())
    if names is not None and not isinstance(names, Mapping):
        raise InvalidParameterError(
            "names", type(names).__name__, "a mapping of developer id to name (or None)", endpoint=function
        )
    return own | {str(k): str(v) for k, v in (names or {}).items()}


def _series(
    frame: pl.DataFrame, key: str, top_apps: int, labels: Mapping[str, str]
) -> tuple[dict[str, list[str]], dict[str, str], int]:
    """The bands, bottom to top (a label and the ids summed in it), their colours, the number of ids in "others"."""
    totals = (
        frame.group_by(key)
        .agg(pl.col("share").fill_null(0.0).sum().alias("_total"))
        .sort("_total", key, descending=[True, False])
    )
    ids = totals[key].to_list()
    named = ids if len(ids) <= top_apps + 1 else ids[:top_apps]  # one app alone is no "others"
    series = {_app_label(app, labels): [app] for app in named}
    colors = {label: APP_COLORS[index] for index, label in enumerate(series)}
    rest = ids[len(named) :]
    if rest:
        label = f"others ({len(rest)} {'apps' if key == 'app_id' else 'developers'})"
        series[label] = rest
        colors[label] = _OTHERS
    return series, colors, len(rest)


def _stack(
    ax: Axes,
    rows: pl.DataFrame,
    key: str,
    series: Mapping[str, list[str]],
    colors: Mapping[str, str],
    first: date,
    last: date,
) -> tuple[float, int]:
    """The stacked bands of one place over its recorded days, hatched bands over the others.

    Returns the highest top of the stack and the number of days without data."""
    recorded = set(rows.filter(pl.col("_recorded"))["date"].to_list())
    days = [first + timedelta(days=n) for n in range((last - first).days + 1)]
    shares = {
        label: dict(
            rows.filter(pl.col(key).is_in(ids), pl.col("_recorded"))
            .group_by("date")
            .agg(pl.col("share").fill_null(0.0).sum())
            .iter_rows()
        )
        for label, ids in series.items()
    }
    peak = 0.0
    for run in _runs([d for d in days if d in recorded]):
        x = [mdates.date2num(run[0]) - 0.5, *(mdates.date2num(d) for d in run), mdates.date2num(run[-1]) + 0.5]
        lower = [0.0] * len(x)
        for label in series:
            values = [shares[label].get(d, 0.0) for d in run]
            upper = [a + b for a, b in zip(lower, [values[0], *values, values[-1]], strict=True)]
            ax.fill_between(x, lower, upper, color=colors[label], linewidth=0.4, edgecolor="white", gid=label)
            lower = upper
        peak = max(peak, *lower)
    missing = [d for d in days if d not in recorded]
    for run in _runs(missing):
        ax.axvspan(
            mdates.date2num(run[0]) - 0.5,
            mdates.date2num(run[-1]) + 0.5,
            facecolor=_GAP_FACE,
            edgecolor=_GAP_HATCH,
            hatch="///",
            linewidth=0,
            zorder=0,
            gid="no_data",
        )
    return peak, len(missing)


def _runs(days: list[date]) -> list[list[date]]:
    """Runs of consecutive days (the days sorted)."""
    runs: list[list[date]] = []
    for day in sorted(days):
        if runs and (day - runs[-1][-1]).days == 1:
            runs[-1].append(day)
        else:
            runs.append([day])
    return runs


def _ceiling(peak: float) -> float:
    """The top of the share axis: 100 % for a nearly full stack, else the peak rounded up to 5 % with room."""
    if peak > 0.8:
        return 1.0
    return max(0.05, math.ceil(peak * 1.1 / 0.05) * 0.05)


def _heading(
    frame: pl.DataFrame,
    key: str,
    series: Mapping[str, list[str]],
    shown: int,
    first: date,
    last: date,
    gaps: list[int],
    title: str | None,
) -> str:
    """The title: the place (when one), the days, the apps drawn, the days without data said."""
    who = "apps" if key == "app_id" else "developers"
    count = sum(len(ids) for ids in series.values())
    place = ""
    if len(gaps) == 1:
        place = " · ".join(str(frame[c][0]) for c in _PLACE if frame[c][0] is not None)
    heading = title or "Share of voice" + (f", {place}" if place else "")
    tracked = ""
    if "keywords_tracked" in frame.columns and frame["keywords_tracked"].max() is not None:
        number = int(cast(int, frame["keywords_tracked"].max()))
        tracked = f" of {number} keyword{'s' if number > 1 else ''}"
    by_name = f", {shown} by name" if shown < count else ""
    line = f"{first} to {last}: the top places{tracked} held by {count} {who}{by_name}"
    if len(gaps) == 1 and gaps[0]:
        line += f"\n{gaps[0]} day{'s' if gaps[0] > 1 else ''} without any keyword recorded (hatched): no share, not 0"
    elif any(gaps):
        line += "\ndays without any keyword recorded in a place are hatched (counted above its panel): no share, not 0"
    return f"{heading}\n{line}"
