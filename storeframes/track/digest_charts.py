"""The digest's rank charts: an app's organic rank over the days, the events marked, its listing changes as lines.

matplotlib is imported when a chart is drawn (a :class:`~matplotlib.figure.Figure` on the Agg canvas,
never pyplot's state); each PNG carries no link and no text that reads as one, so the digest that
embeds it holds none.
"""

from __future__ import annotations

import base64
import io
import itertools
import re
from collections.abc import Callable, Mapping
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
_TOP = {1: 0.88, 2: 0.82}
"""Where the axes end at the top (a share of the figure's height) under a title of one line, or of two."""
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


def _chart_days(series: pl.DataFrame, marks: pl.DataFrame) -> tuple[date, date]:
    """The days a chart shows: its ranks' and its events' days, a week at least (days on the axis)."""
    known = [*series["date"].to_list(), *marks["day"].to_list()]
    return (min(min(known), max(known) - timedelta(days=6)), max(known))


def _spans(days: list[date]) -> list[tuple[date, date]]:
    """Runs of consecutive days, as (first, last)."""
    spans: list[tuple[date, date]] = []
    for day in sorted(days):
        if spans and day - spans[-1][1] == timedelta(days=1):
            spans[-1] = (spans[-1][0], day)
        else:
            spans.append((day, day))
    return spans


def _who(key: tuple[Any, ...], names: Mapping[str, str]) -> tuple[str, str]:
    """A series' app (its name and id) and its keyword and place, as a chart names them."""
    app, keyword, country, language, device = key
    who = f"{names[app]} ({app})" if app in names else str(app)
    place = ", ".join(str(v) for v in (country, language, device) if v is not None)
    return plain(who), plain(f"'{keyword}'" + (f" ({place})" if place else ""))


def chart_title(key: tuple[Any, ...], names: Mapping[str, str]) -> str:
    """A rank chart's title on one line: the app, its keyword and place.

    >>> chart_title(("6441354028", "photo editor", "us", "en", "iphone"), {"6441354028": "Photo Pro"})
    "Photo Pro (6441354028): 'photo editor' (us, en, iphone)"
    """
    who, what = _who(key, names)
    return f"{who}: {what}"


_STATES = {"not_ranked": "not ranked", "no_data": "no data", "not_fetched": "not fetched"}
_MARKED = {"rank_drop": "rank drop", "top": "top N", "anomaly": "rank anomaly"}
_ALT_DAYS = 4
"""The most days an alt text names for one kind of mark (more are counted)."""


def _days_said(days: list[date]) -> str:
    shown = ", ".join(str(d) for d in days[:_ALT_DAYS])
    return shown + (f" and {len(days) - _ALT_DAYS} more" if len(days) > _ALT_DAYS else "")


def chart_alt(
    key: tuple[Any, ...], names: Mapping[str, str], series: pl.DataFrame, marks: pl.DataFrame, changes: pl.DataFrame
) -> str:
    """What a rank chart shows, in words (its alt text): the app's rank on the first and last day charted, its
    best and worst, the days of its events and of its app's listing changes."""
    who, what = _who(key, names)
    if series.is_empty():
        said = f"Rank of {who} for {what}: no rank kept"
    else:
        rows = series.select("date", "rank", "status").rows()

        def state(row: tuple[Any, ...]) -> str:
            return str(row[1]) if row[2] == "ranked" and row[1] is not None else _STATES.get(row[2], str(row[2]))

        ranked = [r for _, r, s in rows if s == "ranked" and r is not None]
        said = f"Rank of {who} for {what} from {rows[0][0]} to {rows[-1][0]}: {state(rows[0])} → {state(rows[-1])}"
        said += f", best {min(ranked)}, worst {max(ranked)}" if ranked else ", never ranked"
    for rule, label in _MARKED.items():
        days = sorted({d for d, r in zip(marks["day"].to_list(), marks["rule"].to_list(), strict=True) if r == rule})
        if days:
            said += f"; {label} on {_days_said(days)}"
    first, last = _chart_days(series, marks)
    changed = sorted(
        {
            (d, t or "listing")
            for d, t in zip(changes["day"].to_list(), changes["target"].to_list(), strict=True)
            if first <= d <= last
        }
    )
    if changed:
        listed = [f"{t} on {d}" for d, t in changed[:_ALT_DAYS]]
        more = f" and {len(changed) - _ALT_DAYS} more" if len(changed) > _ALT_DAYS else ""
        said += f"; listing changes: {', '.join(listed)}{more}"
    return said


def chart_alts(
    keys: list[tuple[Any, ...]], ranks: pl.DataFrame, events: pl.DataFrame, names: Mapping[str, str]
) -> list[str]:
    """The alt text of each chart :func:`charts` draws of ``keys``, in the same order.

    >>> chart_alts(series_keys(events), ranks, events, {"6441354028": "Photo Pro"})[0]  # doctest: +SKIP
    "Rank of Photo Pro (6441354028) for 'photo editor' (us, en, iphone) from 2026-10-20 to 2026-11-08: 3 → 12, ..."
    """
    parts = _Parts(ranks, events)
    return [chart_alt(key, names, *parts.of(key)) for key in keys]


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
    for day in targets:
        ax.axvline(float(date2num(day)), color="#8e44ad", linestyle="--", linewidth=1, alpha=0.8)
    if targets:
        handles.append(Line2D([], [], color="#8e44ad", linestyle="--", label="listing change"))
    ticks = [t for t in MaxNLocator(nbins=5, integer=True, min_n_ticks=2).tick_values(1, worst) if 1 <= t <= worst]
    at_bottom = bool(not_ranked) or any(d not in rank_on and d not in said for d in mark_days)
    ax.set_ylim((bottom if at_bottom else worst) + max(0.6, worst * 0.08), 0.4)  # inverted: rank 1 at the top
    ax.set_yticks([*ticks, bottom] if at_bottom else ticks, [f"{t:g}" for t in ticks] + ["not\nranked"] * at_bottom)
    if at_bottom:
        ax.axhline(bottom, color="#bbb", linestyle=":", linewidth=0.8, zorder=0)
    ax.set_xlim(float(date2num(days[0])) - 0.6, float(date2num(days[1])) + 0.6)
    marked = [(float(date2num(d)), rank_on.get(d, said.get(d, bottom)), _MARK_RADIUS) for d in mark_days] + [
        (float(date2num(d)), bottom, _CROSS_RADIUS) for d in not_ranked
    ]
    line = [(float(date2num(d)), v) for d, v in zip(dates, values, strict=True)]
    _label_changes(ax, sorted(targets.items()), line, marked)
    ax.legend(handles=handles, **_LEGEND)


_MARK_RADIUS = 7.0
"""Pixels around an event's marker (8 points wide, its edge 1.6) that a label keeps clear of."""
_CROSS_RADIUS = 4.0
"""Pixels around a not-ranked cross."""
_LABEL_SIZE = 7
_PLACES = (("top", "right"), ("top", "left"), ("bottom", "right"), ("bottom", "left"))
"""Where a listing change's label may sit beside its line, in the order it is tried."""


def _label_box(ax: Axes, x: float, text: str, place: tuple[str, str]) -> tuple[float, float, float, float]:
    """The box (x0, y0, x1, y1, in pixels) a rotated label of ``text`` takes beside the line at ``x`` at ``place``."""
    size = _LABEL_SIZE * ax.figure.dpi / 72
    tall, wide = len(text) * size * 0.62, size * 1.3  # DejaVu Sans: about 0.6 em a letter, wider than most
    at = float(ax.transData.transform((x, 0))[0])
    box = ax.bbox
    x0 = at + 3 if place[1] == "right" else at - 3 - wide
    y0 = box.y1 - 3 - tall if place[0] == "top" else box.y0 + 3
    return (x0, y0, x0 + wide, y0 + tall)


def _hits(
    box: tuple[float, float, float, float],
    points: list[tuple[float, float, float]],
    boxes: list[tuple[float, float, float, float]],
) -> int:
    """How many of ``points`` (x, y, radius in pixels) and ``boxes`` fall on ``box``."""
    x0, y0, x1, y1 = box
    found = sum(1 for x, y, r in points if x0 - r <= x <= x1 + r and y0 - r <= y <= y1 + r)
    return found + sum(1 for a in boxes if a[0] < x1 and x0 < a[2] and a[1] < y1 and y0 < a[3])


def _label_changes(
    ax: Axes,
    targets: list[tuple[date, list[str]]],
    line: list[tuple[float, float]],
    marked: list[tuple[float, float, float]],
) -> None:
    """Name each listing change's line by its targets, in a rotated label at the top or the bottom of the axes, on
    the side of the line where it covers the fewest of the rank line's points, the event markers and the labels
    placed before it (the top right where several are as clear)."""
    from matplotlib.dates import date2num

    def at(x: float, y: float, radius: float) -> tuple[float, float, float]:
        px, py = ax.transData.transform((x, y))
        return (float(px), float(py), radius)

    points = [at(x, y, 3.0) for x, y in line if y == y]
    for (x0, y0), (x1, y1) in itertools.pairwise(line):  # the line between two ranked days, sampled
        if y0 == y0 and y1 == y1:
            points += [at(x0 + (x1 - x0) * k / 8, y0 + (y1 - y0) * k / 8, 1.0) for k in (2, 4, 6)]
    points += [at(x, y, r) for x, y, r in marked]
    placed: list[tuple[float, float, float, float]] = []
    for day, names in targets:
        x, text = float(date2num(day)), ", ".join(names)
        costs = [(_hits(_label_box(ax, x, text, place), points, placed), n) for n, place in enumerate(_PLACES)]
        vertical, side = _PLACES[min(costs)[1]]
        placed.append(_label_box(ax, x, text, (vertical, side)))
        ax.annotate(
            text,
            (x, 1 if vertical == "top" else 0),
            xycoords=("data", "axes fraction"),
            xytext=(3 if side == "right" else -3, -3 if vertical == "top" else 3),
            textcoords="offset pixels",
            fontsize=_LABEL_SIZE,
            color="#8e44ad",
            rotation=90,
            ha="left" if side == "right" else "right",
            va="top" if vertical == "top" else "bottom",
        )


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

    def fit_title(self, title: str) -> list[str]:
        """Set ``title`` above the axes, within the figure: on one line where it fits, else on two (broken at the
        app's id or between words), the second cut with an ellipsis where it is still too wide (the alt text says
        it whole). The lines set."""
        renderer = self.canvas.get_renderer()
        # the title at y=1, where matplotlib would place it (nothing is above the axes), not moved at each draw
        text = self.axes.set_title(title, fontsize=9, loc="left", y=1.0)
        right = self.figure.bbox.x1 - 4

        def fits(line: str) -> bool:
            text.set_text(line)
            return bool(text.get_window_extent(renderer).x1 <= right)

        def longest(count: int, line: Callable[[int], str]) -> int:
            low, high = 0, count  # the most of ``count`` pieces whose ``line`` fits (fitting shrinks as it grows)
            while low < high:
                middle = (low + high + 1) // 2
                low, high = (middle, high) if fits(line(middle)) else (low, middle - 1)
            return low

        def cut(line: str) -> str:
            return line[: longest(len(line), lambda n: line[:n].rstrip() + "…")].rstrip() + "…"

        if fits(title):
            return [title]
        words = title.split(" ")
        at_id = [n for n in range(1, len(words)) if words[n - 1].endswith("):")]  # "Photo Pro (6441354028):"
        n = (
            at_id[-1]
            if at_id and fits(" ".join(words[: at_id[-1]]))
            else longest(len(words) - 1, lambda k: " ".join(words[:k]))
        )
        first, rest = (" ".join(words[:n]), " ".join(words[n:])) if n else (cut(title), "")
        lines = [first, rest if fits(rest) else cut(rest)] if rest else [first]
        text.set_text("\n".join(lines))
        return lines

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

        self.clear()
        ax = self.axes
        lines = self.fit_title(title)
        self.figure.subplots_adjust(top=_TOP[len(lines)])
        _draw(ax, series, marks, changes, _chart_days(series, marks))
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
