"""What the charts share: change markers, app colours, the figure or your Axes, the date axis, a chart of nothing,
and the figure itself (:class:`Chart`), which says in words what it shows (its alternative text).

The package (:mod:`storeframes.plots`) says what to install when matplotlib is missing
before this module is imported.
"""

from __future__ import annotations

import base64
import html
import io
import textwrap
from collections.abc import Mapping, Sequence
from datetime import date, timedelta
from typing import Any

import matplotlib.dates as mdates
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ..catalog import parse_day, texts
from ..errors import InvalidParameterError
from ..ranks import polars_frame

TARGET_MARKERS: dict[str, str] = {
    "version": "D",
    "title": "^",
    "subtitle": "v",
    "screenshots": "s",
    "icon": "*",
    "privacy_info": "X",
    "description": "P",
    "long_description": "P",
    "short_description": "p",
    "promotional_text": "h",
    "size": ".",
}
"""Marker of each change target; a target not listed gets ``"o"``."""

APP_COLORS = (
    "#1f77b4",  # blue
    "#d62728",  # red
    "#2ca02c",  # green
    "#ff7f0e",  # orange
    "#9467bd",  # purple
    "#8c564b",  # brown
    "#e377c2",  # pink
    "#17becf",  # cyan
    "#7f7f7f",  # grey
    "#bcbd22",  # olive
)
MAX_APPS = len(APP_COLORS)
"""The most apps :func:`rank_chart` draws at once: each keeps a colour of its own."""
_WIDTH = 10.0  # inches: shown at 100 % of a notebook's width, the labels stay readable
_DAY_STEPS = (1, 2, 3, 7, 14)
_MONTH_STEPS = (1, 2, 3, 6, 12, 24, 60, 120)
_MAX_DATE_TICKS = 8


class Chart(Figure):
    """A chart of :mod:`storeframes.plots`: a matplotlib :class:`~matplotlib.figure.Figure` that says what it shows.

    :attr:`alt` is its alternative text, for a reader who cannot see the picture (a screen reader, a
    page whose image did not load). Shown in a notebook, the chart is an HTML ``<img>`` with that
    ``alt`` (what JupyterLab and an HTML export show), a PNG beside it for the renderers that show
    images only, and the text as its plain text. Everything else is the Figure's own: save it with
    ``chart.savefig(...)``, draw into its Axes.

    >>> chart = Chart()
    >>> chart.alt_text = "Keyword ranks of 2 apps"
    >>> chart.alt
    'Keyword ranks of 2 apps'
    """

    alt_text: str | None = None
    """The alternative text a chart gave itself; None: :func:`chart_alt` tells it from the drawing."""

    @property
    def alt(self) -> str:
        """What the chart shows, in words: :attr:`alt_text`, else what :func:`chart_alt` reads in the drawing."""
        return self.alt_text or chart_alt(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        alt = self.alt
        png = base64.b64encode(figure_png(self)).decode("ascii")
        width = round(self.get_figwidth() * 100)
        image = (
            f'<img src="data:image/png;base64,{png}" alt="{html.escape(alt, quote=True)}" width="{width}" '
            'style="max-width:100%;height:auto">'
        )
        # the PNG too, where no matplotlib backend says how to draw a Figure (one that does is asked instead)
        return {"text/html": image, "image/png": png, "text/plain": alt}


def chart_alt(figure: Figure) -> str:
    """A figure's alternative text, read from what it draws: its title, each panel's title and axes (their
    labels, the first and last tick), the key of its legends, and any line of text it holds.

    >>> chart = Chart()
    >>> ax = chart.subplots()
    >>> _ = ax.plot([1, 2], [3, 1], label="Photo Editor Plus")
    >>> _ = ax.set_title("“photo editor”"), ax.set_xlabel("date"), ax.set_ylabel("rank (1 = top)")
    >>> _ = ax.set_xticks([1, 2], ["1 Nov", "2 Nov"]), ax.legend()
    >>> chart_alt(chart)
    'Chart. “photo editor”: rank (1 = top) by date, 1 Nov to 2 Nov. Key: Photo Editor Plus.'
    """
    said: list[str] = []
    heading = figure.get_suptitle() if hasattr(figure, "get_suptitle") else ""
    if heading:
        said.append(_line(heading))
    keys: list[str] = []
    for ax in figure.axes:
        titles = [_line(ax.get_title(loc)) for loc in ("left", "center", "right") if ax.get_title(loc)]
        axes = _axes_words(ax) if ax.axison else ""
        if titles or axes:
            said.append(": ".join(part for part in (", ".join(titles), axes) if part))
        legend = ax.get_legend()
        if legend is not None:
            keys += [text.get_text() for text in legend.get_texts()]
        said += [_line(text.get_text()) for text in ax.texts if text.get_text().strip() and not ax.axison]
    for legend in figure.legends:
        keys += [text.get_text() for text in legend.get_texts()]
    said += [_line(text.get_text()) for text in figure.texts if text.get_text().strip()]
    if keys:
        said.append("Key: " + ", ".join(_line(k) for k in dict.fromkeys(keys) if k.strip()))
    # a heading drawn twice (the figure's title, an Axes' own) is said once
    return " ".join(["Chart.", *(f"{part.rstrip('.')}." for part in dict.fromkeys(said) if part)])


def _line(text: str, joint: str = ", ") -> str:
    """A text of the chart on one line: its lines joined by commas (a tick's day and year by a space)."""
    return joint.join(part.strip() for part in text.splitlines() if part.strip())


def _axes_words(ax: Axes) -> str:
    """``rank (1 = top) by date, 1 Nov to 2 Nov``: the y label by the x label, the x axis' first and last tick."""
    x_label, y_label = _line(ax.get_xlabel()), _line(ax.get_ylabel())
    ticks = [_line(t.get_text(), " ") for t in ax.get_xticklabels() if t.get_text().strip()]
    words = f"{y_label} by {x_label}" if x_label and y_label else x_label or y_label
    if len(ticks) > 1:
        words += f"{', ' if words else ''}{ticks[0]} to {ticks[-1]}"
    return words


def figure_png(fig: Figure, *, dpi: int = 100) -> bytes:
    """The figure as PNG bytes (for an ``ipywidgets.Image``, a web page or a file).

    >>> figure_png(rank_chart(history, "3233849169"))[:4]  # doctest: +SKIP
    b'\\x89PNG'
    """
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


def _need(frame: pl.DataFrame, columns: Sequence[str], name: str, function: str, what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InvalidParameterError(name, f"a frame without {', '.join(missing)}", what, endpoint=function)


def app_labels(names: Any, function: str) -> dict[str, str]:
    """App labels from a mapping or a frame with ``app_id`` and ``title`` (the charts' and the explorers' ``names=``).

    >>> app_labels(pl.DataFrame({"app_id": ["394079159"], "title": ["Photo Lab"]}), "rank_chart")
    {'394079159': 'Photo Lab'}
    """
    if names is None:
        return {}
    if isinstance(names, Mapping):
        return {str(k): str(v) for k, v in names.items()}
    what = "a mapping of app id to name, or a metadata_frame (app_id, title)"
    frame = polars_frame(names, "names", function, what)
    _need(frame, ("app_id", "title"), "names", function, what)
    rows = frame.select("app_id", "title").drop_nulls().unique("app_id", keep="first", maintain_order=True)
    return dict(zip(rows["app_id"].to_list(), rows["title"].to_list(), strict=True))


def _short(text: str, width: int = 32) -> str:
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def _app_label(app_id: str, labels: Mapping[str, str]) -> str:
    name = labels.get(app_id)
    return f"{_short(name)} ({app_id})" if name else app_id


def _figure(ax: Axes | None, width: float, height: float) -> tuple[Figure, Axes | None]:
    if ax is not None:
        figure = ax.figure
        if not isinstance(figure, Figure):  # a subfigure: draw into it, return its top figure
            figure = figure.figure
        return figure, ax
    return Chart(figsize=(width, height), layout="constrained"), None


def _date_axis(ax: Axes, first: date, last: date, *, pad: float = 0.5) -> None:
    """The days from first to last on the x axis, ``pad`` days beyond, ticks labelled with the year."""
    ticks, kind = _day_ticks(first, last)
    ax.set_xlim(mdates.date2num(first) - pad, mdates.date2num(last) + pad)
    ax.set_xticks([float(mdates.date2num(day)) for day in ticks], _day_labels(ticks, kind))


def _day_ticks(first: date, last: date) -> tuple[list[date], str]:
    """At most 8 ticks: every 1, 2, 3, 7 or 14 days (weeks from Mondays), else month or year starts."""
    for step in _DAY_STEPS:
        begin = first if step < 7 else first + timedelta(days=(7 - first.weekday()) % 7)
        ticks = [begin + timedelta(days=n) for n in range(0, (last - begin).days + 1, step)]
        if len(ticks) <= _MAX_DATE_TICKS:
            return ticks, "day"
    months = range(first.year * 12 + first.month - 1 + (first.day > 1), last.year * 12 + last.month)
    for step in _MONTH_STEPS:
        ticks = [date(m // 12, m % 12 + 1, 1) for m in months if m % step == 0]
        if len(ticks) <= _MAX_DATE_TICKS:
            break
    return ticks, "month" if step < 12 else "year"


def _day_labels(ticks: Sequence[date], kind: str) -> list[str]:
    """Labels such as "7 Sep" (days) or "Sep" (months), the year under the first and each new year's first."""
    labels = []
    for index, day in enumerate(ticks):
        text = str(day.year) if kind == "year" else f"{day.day} {day:%b}" if kind == "day" else f"{day:%b}"
        if kind != "year" and (index == 0 or day.year != ticks[index - 1].year):
            text += f"\n{day.year}"
        labels.append(text)
    return labels


def _nothing(ax: Axes | None, message: str) -> Figure | Axes:
    """A line saying what has no data and why, in place of a chart of nothing."""
    text = "\n".join(textwrap.wrap(message, 125))
    if ax is not None:
        ax.set_axis_off()
        ax.text(0.0, 0.5, text, transform=ax.transAxes, va="center", ha="left", fontsize=10)
        return ax
    figure = Chart(figsize=(_WIDTH, 0.3 + 0.22 * (text.count("\n") + 1)))
    figure.text(0.015, 0.5, text, va="center", ha="left", fontsize=10)
    figure.alt_text = f"No chart: {' '.join(message.split())}"
    return figure


def _range(start: Any, end: Any, function: str) -> tuple[date | None, date | None]:
    """``start`` and ``end`` as days (None when not given), the end on or after the start."""
    first = None if start is None else parse_day("start", start, endpoint=function)
    last = None if end is None else parse_day("end", end, endpoint=function)
    if first is not None and last is not None and last < first:
        raise InvalidParameterError("end", last, f"a date on or after start={first}", endpoint=function)
    return first, last


def _chosen_targets(targets: Any, changes: pl.DataFrame, function: str) -> pl.Expr:
    """The filter of the change targets to draw: the given ones, by default every target but size."""
    if targets is None:
        return pl.col("target") != "size"
    wanted = texts("targets", targets, split=True, endpoint=function)
    known = [*TARGET_MARKERS, *(t for t in changes["target"].unique().sort().to_list() if t not in TARGET_MARKERS)]
    unknown = [t for t in wanted if t not in known]
    if not wanted or unknown:
        raise InvalidParameterError(
            "targets", unknown or targets, f"change targets such as {', '.join(known)}", endpoint=function
        )
    return pl.col("target").is_in(wanted)
