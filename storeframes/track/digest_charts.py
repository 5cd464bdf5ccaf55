"""The digest's rank charts: an app's organic rank over the days, the events marked, its listing changes as lines.

matplotlib is imported when a chart is drawn (a :class:`~matplotlib.figure.Figure` on the Agg canvas,
never pyplot's state); each PNG carries no link and no text that reads as one, so the digest that
embeds it holds none.
"""

from __future__ import annotations

import base64
import io
import re
from collections.abc import Mapping
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any

import polars as pl

from ..texts import plain

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["CHARTED", "HTTP", "SERIES", "chart", "chart_title", "charts", "plain", "series_keys"]

SERIES = ("app_id", "keyword", "country", "language", "device")
"""The columns that make one rank series: an app, a keyword, a place."""
CHARTED = ("rank_drop", "top", "anomaly")
"""The rules whose events get a rank chart."""
HTTP = re.compile("http", re.IGNORECASE)
_FIGSIZE = (6.4, 2.6)
_DPI = 100
_LEGEND: dict[str, Any] = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "fontsize": 7, "frameon": False}


def series_keys(events: pl.DataFrame) -> list[tuple[Any, ...]]:
    """The (app, keyword, place) of each rank event, each once, by its first event's day."""
    rows = (
        events.filter(pl.col("rule").is_in(CHARTED) & pl.col("app_id").is_not_null() & pl.col("keyword").is_not_null())
        .group_by(SERIES)
        .agg(pl.col("day").min().alias("first"))
        .sort(["first", *SERIES], nulls_last=True)
    )
    return [tuple(r) for r in rows.select(SERIES).iter_rows()]


def _spans(days: list[date]) -> list[tuple[date, date]]:
    """Runs of consecutive days, as (first, last)."""
    spans: list[tuple[date, date]] = []
    for day in sorted(days):
        if spans and day - spans[-1][1] == timedelta(days=1):
            spans[-1] = (spans[-1][0], day)
        else:
            spans.append((day, day))
    return spans


def chart_title(key: tuple[Any, ...], names: Mapping[str, str]) -> str:
    app, keyword, country, language, device = key
    who = f"{names[app]} ({app})" if app in names else app
    place = ", ".join(str(v) for v in (country, language, device) if v is not None)
    return plain(f"{who}: '{keyword}'" + (f" ({place})" if place else ""))


def _png(pixels: Any) -> bytes:
    """RGBA rows as PNG bytes without the software's name; its base64 form never spells "http".

    Pillow (matplotlib's own PNG writer) encodes them as RGB when every pixel is opaque (a quarter fewer
    bytes to compress; the same picture), at zlib level 3 (its fast search): 2.5 ms a chart, not 6.
    """
    from PIL import Image
    from PIL.PngImagePlugin import PngInfo

    image = Image.fromarray(pixels)  # RGBA: its rows hold 4 bytes a pixel
    if pixels[:, :, 3].min() == 255:
        image = image.convert("RGB")
    for pad in range(64):  # encoded again with a longer comment until no base64 of it spells "http"
        buffer, info = io.BytesIO(), PngInfo()
        if pad:
            info.add_text("Comment", "." * pad)
        image.save(buffer, format="png", pnginfo=info, dpi=(_DPI, _DPI), compress_level=3)
        data = buffer.getvalue()
        if not HTTP.search(base64.b64encode(data).decode()):
            return data
    raise AssertionError("no padding keeps the chart's base64 free of 'http'")  # pragma: no cover


def _draw(
    ax: Axes,
    ranks: pl.DataFrame,
    marks: pl.DataFrame,
    changes: pl.DataFrame,
    days: tuple[date, date],
) -> None:
    """The rank line, its no-data, not-fetched and not-ranked days, the event days, the listing changes and the
    legend on ``ax``."""
    from matplotlib.dates import date2num
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    dates, statuses = ranks["date"].to_list(), ranks["status"].to_list()  # lists: a chart's rows are few
    ranked = [r for r, s in zip(ranks["rank"].to_list(), statuses, strict=True) if s == "ranked"]
    values = [float(r) if s == "ranked" else float("nan") for r, s in zip(ranks["rank"], statuses, strict=True)]
    rank_on = {d: v for d, v in zip(dates, values, strict=True) if v == v}
    mark_days, mark_rules = marks["day"].to_list(), marks["rule"].to_list()
    # an event on a day the ranks do not rank the app sits at the rank it says (its after), else at the bottom
    said = {
        d: float(a)
        for d, a in zip(mark_days, marks["after"].to_list(), strict=True)
        if d not in rank_on and (a or "").isdigit()
    }
    worst = max([1, *ranked, *said.values()])
    bottom = worst + max(1.0, worst * 0.18)  # where "not ranked" sits, below the worst rank
    handles: list[Any] = []
    if ranked:
        ax.plot(date2num(dates), values, color="#1f77b4", marker="o", markersize=2.5, linewidth=1.4)
        handles.append(Line2D([], [], color="#1f77b4", marker="o", markersize=3, label="rank"))
    no_data = [d for d, s in zip(dates, statuses, strict=True) if s == "no_data"]
    for first, last in _spans(no_data):
        ax.axvspan(date2num(first) - 0.5, date2num(last) + 0.5, color="#e4e4e4", linewidth=0, zorder=0)
    if no_data:
        handles.append(Patch(color="#e4e4e4", label="no data recorded"))
    not_fetched = [d for d, s in zip(dates, statuses, strict=True) if s == "not_fetched"]
    for first, last in _spans(not_fetched):  # hatched, not grey: nothing is known of these days
        span = (date2num(first) - 0.5, date2num(last) + 0.5)
        ax.axvspan(*span, facecolor="#fff4e0", edgecolor="#e0a030", hatch="///", linewidth=0, zorder=0)
    if not_fetched:
        handles.append(Patch(facecolor="#fff4e0", edgecolor="#e0a030", hatch="///", label="not fetched"))
    not_ranked = [d for d, s in zip(dates, statuses, strict=True) if s == "not_ranked"]
    if not_ranked:
        ax.plot(date2num(not_ranked), [bottom] * len(not_ranked), "x", color="#888", markersize=4)
        handles.append(Line2D([], [], linestyle="none", marker="x", color="#888", label="not ranked"))
    for rule, (marker, color, label) in {
        "rank_drop": ("v", "#c0392b", "rank drop"),
        "top": ("D", "#27ae60", "top N"),
        "anomaly": ("o", "#e67e22", "rank anomaly"),
    }.items():
        event_days = sorted({d for d, r in zip(mark_days, mark_rules, strict=True) if r == rule})
        if event_days:
            ys = [rank_on.get(d, said.get(d, bottom)) for d in event_days]
            style: dict[str, Any] = {"marker": marker, "markerfacecolor": "none", "markeredgecolor": color}
            ax.plot(date2num(event_days), ys, linestyle="none", markersize=8, markeredgewidth=1.6, **style)
            handles.append(Line2D([], [], linestyle="none", label=label, **style))
    targets: dict[date, list[str]] = {}
    for day, target in zip(changes["day"].to_list(), changes["target"].to_list(), strict=True):
        if days[0] <= day <= days[1] and (target or "listing") not in targets.setdefault(day, []):
            targets[day].append(target or "listing")
    for day, names in sorted(targets.items()):
        ax.axvline(float(date2num(day)), color="#8e44ad", linestyle="--", linewidth=1, alpha=0.8)
        ax.annotate(
            ", ".join(names),
            (float(date2num(day)), 0),
            xycoords=("data", "axes fraction"),
            xytext=(3, 3),
            textcoords="offset points",
            fontsize=7,
            color="#8e44ad",
            rotation=90,
            va="bottom",
        )
    if targets:
        handles.append(Line2D([], [], color="#8e44ad", linestyle="--", label="listing change"))
    ticks = [t for t in MaxNLocator(nbins=5, integer=True, min_n_ticks=2).tick_values(1, worst) if 1 <= t <= worst]
    at_bottom = bool(not_ranked) or any(d not in rank_on and d not in said for d in mark_days)
    ax.set_ylim((bottom if at_bottom else worst) + max(0.6, worst * 0.08), 0.4)  # inverted: rank 1 at the top
    ax.set_yticks([*ticks, bottom] if at_bottom else ticks, [f"{t:g}" for t in ticks] + ["not\nranked"] * at_bottom)
    if at_bottom:
        ax.axhline(bottom, color="#bbb", linestyle=":", linewidth=0.8, zorder=0)
    ax.set_xlim(float(date2num(days[0])) - 0.6, float(date2num(days[1])) + 0.6)
    ax.legend(handles=handles, **_LEGEND)


class _Sheet:
    """One figure and its axes on the Agg canvas, on which a digest draws its charts one after another.

    What every chart shares (the size, the margins, the rank label, the tick and grid style, the open top and
    right sides) is set once; each chart removes what the one before added (its lines, bands and texts)
    and sets its own limits, ticks and title. Made per call, never shared between threads.
    """

    def __init__(self) -> None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self.figure = Figure(figsize=_FIGSIZE, dpi=_DPI)
        self.canvas = FigureCanvasAgg(self.figure)
        ax = self.axes = self.figure.add_subplot()
        ax.set_ylabel("rank", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.xaxis.get_offset_text().set_fontsize(7)
        ax.grid(axis="y", color="#eee", linewidth=0.8)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        self.figure.subplots_adjust(left=0.11, right=0.8, top=0.88, bottom=0.14)
        self.days: dict[tuple[Any, ...], tuple[Any, list[str], str]] = {}  # the x axis's ticks by its limits

    def clear(self) -> None:
        """Take away every artist the last chart added: the axes as they were made."""
        ax = self.axes
        for artist in [*ax.lines, *ax.patches, *ax.texts, *ax.collections]:
            artist.remove()
        if ax.legend_ is not None:
            ax.legend_.remove()

    def chart(
        self,
        key: tuple[Any, ...],
        series: pl.DataFrame,
        marks: pl.DataFrame,
        changes: pl.DataFrame,
        title: str,
    ) -> bytes:
        """The chart of one rank series (its ranks, its rank events, its app's listing changes) as PNG bytes."""
        import matplotlib.dates as mdates
        import numpy as np
        from matplotlib.ticker import FixedFormatter, FixedLocator

        known = [*series["date"].to_list(), *marks["day"].to_list()]
        days = (min(min(known), max(known) - timedelta(days=6)), max(known))  # a week at least: days on the axis
        self.clear()
        ax = self.axes
        _draw(ax, series, marks, changes, days)
        if "ranked" not in series["status"].to_list():
            ax.text(
                0.5, 0.5, "no rank on the days charted", transform=ax.transAxes, ha="center", fontsize=8, color="#666"
            )
        # the days' ticks and labels worked out once for the limits just set (as the draw would, thrice, each time)
        days_key = ("days", *ax.get_xlim())
        if days_key not in self.days:
            locator = mdates.AutoDateLocator(minticks=3, maxticks=8)
            ax.xaxis.set_major_locator(locator)
            concise = mdates.ConciseDateFormatter(locator)
            at = locator()
            self.days[days_key] = (at, concise.format_ticks(at), concise.get_offset())
        at, names, offset = self.days[days_key]
        labels = FixedFormatter(names)
        labels.set_offset_string(offset)
        ax.xaxis.set_major_locator(FixedLocator(at))
        ax.xaxis.set_major_formatter(labels)
        # the title at y=1, where matplotlib would place it (nothing is above the axes), not measured at each draw
        ax.set_title(title, fontsize=9, loc="left", y=1.0)
        self.canvas.draw()
        return _png(np.asarray(self.canvas.buffer_rgba()))


def charts(
    keys: list[tuple[Any, ...]], ranks: pl.DataFrame, events: pl.DataFrame, names: Mapping[str, str]
) -> list[bytes]:
    """The rank chart of each (app, keyword, place) of ``keys`` as PNG bytes, drawn on one figure in turn.

    ``ranks`` is a rank_history frame, ``events`` an alerts frame (the charted rules' events of each
    series are marked, its app's listing changes drawn), ``names`` app ids' names for the titles.

    >>> charts(series_keys(events), ranks, events, {"6441354028": "Photo Pro"})  # doctest: +SKIP
    [b'\\x89PNG\\r\\n...', b'\\x89PNG\\r\\n...']
    """
    if not keys:
        return []
    parts, sheet = _Parts(ranks, events), _Sheet()
    return [sheet.chart(key, *parts.of(key), chart_title(key, names)) for key in keys]


class _Parts:
    """A digest's ranks and events split once by rank series, for its charts to take their own."""

    def __init__(self, ranks: pl.DataFrame, events: pl.DataFrame) -> None:
        self.ranks, self.events = ranks, events
        self.series = ranks.partition_by(SERIES, as_dict=True)
        self.marks = events.filter(pl.col("rule").is_in(CHARTED)).partition_by(SERIES, as_dict=True)
        self.listed = events.filter(pl.col("rule") == "listing_change")

    def of(self, key: tuple[Any, ...]) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
        """A series' ranks (a row a day, by day), its rank events, and its app's listing changes in its country."""
        app, country = key[0], key[2]
        changes = self.listed.filter(
            (pl.col("app_id") == app) & (pl.col("country").is_null() | pl.col("country").eq_missing(country))
        ).sort("day", "target", nulls_last=True)
        series = self.series.get(key, self.ranks.clear()).unique("date", keep="first").sort("date")
        return series, self.marks.get(key, self.events.clear()), changes


def chart(key: tuple[Any, ...], ranks: pl.DataFrame, events: pl.DataFrame, names: Mapping[str, str]) -> bytes:
    """One (app, keyword, place)'s rank chart as PNG bytes."""
    return charts([key], ranks, events, names)[0]


# -- the digest ----------------------------------------------------------------------------------------------
