"""Charts of the tidy frames, with matplotlib: keyword ranks, conversion benchmarks, changes.

Each function returns a :class:`matplotlib.figure.Figure` built without pyplot, so it works
headless (a script, a server, a test) and leaves no figure open behind it; in Jupyter the
returned figure shows as the cell's output. Each takes ``ax=`` to draw into an Axes of your
own and then returns that Axes, as pandas does (so the chart shows once, with your figure).
Save one with ``fig.savefig("ranks.png")``. Dates read as day and month with the year, rank
axes start at 1; a chart with nothing to draw is one line saying what has no data and why.

>>> import storeframes as sf
>>> from storeframes import plots
>>> history = sf.search_history_frame(["photo editor", "collage maker"], start="2026-08-21")  # doctest: +SKIP
>>> changes = sf.changes_frame(["394079159", "1395556972"], start="2026-08-21")  # doctest: +SKIP
>>> plots.rank_chart(history, ["3233849169", "394079159", "1395556972"], changes=changes)  # doctest: +SKIP
<Figure size 1000x650 with 2 Axes>

Needs the ``notebook`` extra (``pip install "storeframes[notebook]"``) or matplotlib alone.
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Mapping, Sequence
from datetime import date, datetime, timedelta
from typing import Any, cast, overload

import polars as pl

try:
    import matplotlib.dates as mdates
    from matplotlib.axes import Axes
    from matplotlib.colors import is_color_like, to_hex
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.ticker import FixedLocator
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        'storeframes.plots needs matplotlib: pip install "storeframes[notebook]" (or matplotlib>=3.9)'
    ) from exc

from ..catalog import app_list, parse_day, texts
from ..errors import InvalidParameterError
from ..ranks import _polars, rank_history

__all__ = [
    "MAX_APPS",
    "RATE_LABELS",
    "TARGET_MARKERS",
    "benchmark_chart",
    "changes_timeline",
    "figure_png",
    "rank_chart",
]

RATE_LABELS: dict[str, str] = {
    "page_views_to_installs": "page views → installs (conversion rate, %)",
    "impressions_to_page_views": "impressions → page views (click-through rate, %)",
    "impressions_to_installs": "impressions → installs (%)",
}
"""Axis labels of the benchmark rates (the columns of :func:`~storeframes.benchmarks_frame`)."""

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

_APP_COLORS = (
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22",
)  # fmt: skip
MAX_APPS = len(_APP_COLORS)
"""The most apps :func:`rank_chart` draws at once: each keeps a colour of its own."""
_LINE_STYLES = ("-", "--", ":", "-.")
_NO_DATA = "#d9d9d9"
_HIGHLIGHT = "#ff7f0e"
_BAR = "#4c72b0"
_PLACE = ("country", "language", "device")
_WIDTH = 10.0  # inches: shown at 100 % of a notebook's width, the labels stay readable
_RANK_STEPS = (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000)
_DAY_STEPS = (1, 2, 3, 7, 14)
_MONTH_STEPS = (1, 2, 3, 6, 12, 24, 60, 120)
_MAX_DATE_TICKS = 8


# -- shared helpers -------------------------------------------------------------------------


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


def _labels(names: Any, function: str) -> dict[str, str]:
    """App labels from a mapping or a frame with ``app_id`` and ``title``."""
    if names is None:
        return {}
    if isinstance(names, Mapping):
        return {str(k): str(v) for k, v in names.items()}
    what = "a mapping of app id to name, or a metadata_frame (app_id, title)"
    frame = _polars(names, "names", function, what)
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
    return Figure(figsize=(width, height), layout="constrained"), None


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
    figure = Figure(figsize=(_WIDTH, 0.3 + 0.22 * (text.count("\n") + 1)))
    figure.text(0.015, 0.5, text, va="center", ha="left", fontsize=10)
    return figure


def _runs(days: Sequence[date]) -> list[tuple[date, date]]:
    """Runs of consecutive days, as (first, last)."""
    runs: list[tuple[date, date]] = []
    for day in sorted(days):
        if runs and (day - runs[-1][1]).days == 1:
            runs[-1] = (runs[-1][0], day)
        else:
            runs.append((day, day))
    return runs


def _place_text(frame: pl.DataFrame) -> str:
    parts = []
    for column in ("country", "device"):
        if column in frame.columns:
            values = [v for v in frame[column].unique(maintain_order=True).to_list() if v is not None]
            if len(values) == 1:
                parts.append(str(values[0]))
    return " · ".join(parts)


# -- rank_chart -----------------------------------------------------------------------------


@overload
def rank_chart(
    history: pl.DataFrame | Any,
    apps: str | int | Sequence[str | int],
    keywords: str | Sequence[str] | None = None,
    changes: pl.DataFrame | Any | None = None,
    *,
    names: Mapping[str, str] | pl.DataFrame | None = None,
    start: str | date | None = None,
    end: str | date | None = None,
    targets: str | Sequence[str] | None = None,
    colors: Mapping[str, Any] | None = None,
    ax: None = None,
    title: str | None = None,
) -> Figure: ...


@overload
def rank_chart(
    history: pl.DataFrame | Any,
    apps: str | int | Sequence[str | int],
    keywords: str | Sequence[str] | None = None,
    changes: pl.DataFrame | Any | None = None,
    *,
    names: Mapping[str, str] | pl.DataFrame | None = None,
    start: str | date | None = None,
    end: str | date | None = None,
    targets: str | Sequence[str] | None = None,
    colors: Mapping[str, Any] | None = None,
    ax: Axes,
    title: str | None = None,
) -> Axes: ...


def rank_chart(
    history: pl.DataFrame | Any,
    apps: str | int | Sequence[str | int],
    keywords: str | Sequence[str] | None = None,
    changes: pl.DataFrame | Any | None = None,
    *,
    names: Mapping[str, str] | pl.DataFrame | None = None,
    start: str | date | None = None,
    end: str | date | None = None,
    targets: str | Sequence[str] | None = None,
    colors: Mapping[str, Any] | None = None,
    ax: Axes | None = None,
    title: str | None = None,
) -> Figure | Axes:
    """Each app's rank over time per keyword: rank 1 at the top, gaps where it was not ranked.

    ``history`` is a :func:`~storeframes.search_history_frame` (or a
    :func:`~storeframes.search_frame`, or :func:`~storeframes.rank_history`'s frame).
    ``keywords`` (by default all of the history's) is a keyword, comma-separated keywords
    or a list (where a keyword may hold a comma). One line per app, in one colour across
    panels, named from ``names`` (a metadata frame or a mapping of id to name). Without
    ``ax`` each keyword (and place) gets a panel of its own and the Figure is returned;
    with ``ax`` all keywords share that Axes, one line style per keyword, and the Axes is
    returned. Days the service recorded nothing for a keyword are shaded grey; a gap on a
    white background means the app was not among that day's results. When no app ranked
    on any day the chart is one line saying so.

    ``changes`` (a :func:`~storeframes.changes_frame`) adds a marker at each change of a
    charted app, its shape telling the target (version, title, screenshots ...: see
    :data:`TARGET_MARKERS` and the legend), so you see whether a change moved the rank. It
    sits on the app's line on a day the app ranked; on the bottom edge, filled, on a day
    it was not ranked; on the bottom edge, hollow, on a day with no data. ``targets``
    chooses the targets to mark; by default every target but ``size``, which changes with
    nearly every version and would double its markers (the legend counts those left out).

    ``colors`` maps app ids to matplotlib colours, so an app keeps its colour when the
    apps charted change; the other apps take the usual colours in turn, skipping those
    the mapping gives.

    >>> fig = rank_chart(history, ["3233849169", "394079159"], changes=changes, names=metadata)  # doctest: +SKIP
    >>> fig.savefig("ranks.png")  # doctest: +SKIP
    """
    function = "rank_chart"
    what = "a search_history_frame, search_frame or rank_history frame"
    frame = _polars(history, "history", function, what)
    try:
        ids = app_list(apps)
    except InvalidParameterError:
        ids = []
    if not ids:
        raise InvalidParameterError("apps", apps, "an app id or a non-empty list of app ids", endpoint=function)
    if len(ids) > MAX_APPS:
        raise InvalidParameterError(
            "apps", f"{len(ids)} apps", f"at most {MAX_APPS} apps, so each keeps a colour", endpoint=function
        )
    _need(frame, ("keyword", "app_id", "date", "rank"), "history", function, what)
    wanted = _keywords(frame, keywords, function)
    try:
        if "status" in frame.columns:  # already a rank_history frame: keep the asked apps, keywords and days
            ranks = _given_ranks(frame, ids, wanted, start, end, function)
        else:
            ranks = rank_history(frame, ids, keywords=wanted, start=start, end=end)
    except InvalidParameterError as exc:  # in the words of this function
        raise InvalidParameterError(exc.parameter, exc.value, exc.allowed, endpoint=function) from None
    if ranks.height == 0:
        raise InvalidParameterError("history", "an empty frame", "a history with at least one day", endpoint=function)
    labels = _labels(names, function)
    palette = _app_colors(ids, colors, function)
    first, last = _day_span(ranks)
    moves = _changes(changes, ids, first, last, function)
    left_out = ""  # said in the legend, as changes_timeline says it in its title
    if moves is not None:
        kept = moves.filter(_chosen_targets(targets, moves, function))
        sizes = moves.height - kept.height if targets is None else 0
        left_out = f"{sizes} size change{'s' if sizes > 1 else ''} not marked (targets= to mark)" if sizes else ""
        moves = kept
    if not (ranks["status"] == "ranked").any():
        return _nothing(ax, _no_ranks_text(ranks, ids, first, last))

    panels = ranks.select("keyword", *_PLACE).unique(maintain_order=True)
    several_places = ranks.select(_PLACE).unique().height > 1
    figure, own = _figure(ax, _WIDTH, 1.3 + 2.6 * (1 if ax is not None else panels.height))
    axes: list[Axes] = (
        [ax] if ax is not None else list(figure.subplots(panels.height, 1, sharex=True, squeeze=False)[:, 0])
    )
    shared_worst = _worst(ranks)
    edge: set[str] = set()  # the statuses of the days whose changes sit on the bottom edge

    for index, panel in enumerate(panels.iter_rows(named=True)):
        target_ax = axes[0] if ax is not None else axes[index]
        style = _LINE_STYLES[index % len(_LINE_STYLES)] if ax is not None else "-"
        rows = ranks.filter(*(pl.col(c).eq_missing(panel[c]) for c in ("keyword", *_PLACE)))
        worst = shared_worst if ax is not None else _worst(rows)  # each panel its own scale
        lowest = worst + max(1, round(worst * 0.06))  # the bottom edge, where unranked changes sit
        _shade_no_data(target_ax, rows)
        for app in ids:
            line = rows.filter(pl.col("app_id") == app).sort("date")
            label = _app_label(app, labels) if index == 0 or ax is None else None
            target_ax.plot(
                line["date"].to_list(),
                [float("nan") if r is None else r for r in line["rank"].to_list()],
                style,
                color=palette[app],
                marker="o",
                markersize=2.5,
                linewidth=1.6,
                label=label if index == 0 else None,
            )
            if moves is not None:
                edge |= _change_markers(target_ax, moves.filter(pl.col("app_id") == app), line, palette[app], lowest)
        place = f" ({', '.join(str(panel[c]) for c in ('country', 'device') if panel[c])})" if several_places else ""
        if ax is None:
            target_ax.set_title(f"“{panel['keyword']}”{place}", loc="left", fontsize=11)
        target_ax.set_ylim(lowest + 0.5, 0.5)
        target_ax.yaxis.set_major_locator(FixedLocator(_rank_ticks(lowest)))
        target_ax.set_ylabel("rank (1 = top)")
        target_ax.grid(True, axis="y", alpha=0.3)
        _date_axis(target_ax, first, last)  # exactly the days charted
    if ax is not None and panels.height > 1:  # one line style per keyword on a shared Axes
        for index, panel in enumerate(panels.iter_rows(named=True)):
            axes[0].plot(
                [], [], _LINE_STYLES[index % len(_LINE_STYLES)], color="#444444", label=f"“{panel['keyword']}”"
            )
    axes[-1].set_xlabel("date")
    place = _place_text(ranks)
    heading = title or "Keyword ranks" + (f", {place}" if place else "")
    heading += f"\n{first} to {last}"
    _legend(figure, axes, own, moves, edge, heading, left_out)
    return own if own is not None else figure


def _app_colors(ids: Sequence[str], given: Mapping[str, Any] | None, function: str) -> dict[str, Any]:
    """A colour per app: the given one, else the next of the cycle that no given colour takes."""
    if given is None:
        given = {}
    if not isinstance(given, Mapping):
        raise InvalidParameterError("colors", given, "a mapping of app id to a matplotlib colour", endpoint=function)
    chosen = {str(app): color for app, color in given.items()}
    wrong = [app for app, color in chosen.items() if not is_color_like(color)]
    if wrong:
        raise InvalidParameterError(
            "colors",
            {app: chosen[app] for app in wrong},
            "matplotlib colours such as '#1f77b4', 'tab:red' or (0.1, 0.2, 0.5)",
            endpoint=function,
        )
    charted = {to_hex(chosen[app]) for app in ids if app in chosen}
    elsewhere = {to_hex(color) for color in chosen.values()} - charted  # kept for apps charted another time
    free = [c for c in _APP_COLORS if c not in charted | elsewhere] + [c for c in _APP_COLORS if c in elsewhere]
    cycle = iter(free)
    return {app: chosen[app] if app in chosen else next(cycle) for app in ids}


def _rank_ticks(lowest: int) -> list[int]:
    """Rank 1 and round ranks down to the bottom edge: 1, 2, 4 ... or 1, 10, 20 ... or 1, 25, 50 ..."""
    step = next((s for s in _RANK_STEPS if lowest // s <= 6), _RANK_STEPS[-1])
    return sorted({1, *range(step, lowest + 1, step)})


def _no_ranks_text(ranks: pl.DataFrame, ids: Sequence[str], first: date, last: date) -> str:
    words = ", ".join(f"“{k}”" for k in ranks["keyword"].unique(maintain_order=True).to_list())
    place = _place_text(ranks)
    where = f" in {place}" if place else ""
    if (ranks["status"] == "no_data").all():
        why = "the service recorded no search results on these days"
    else:
        apps = "the app was" if len(ids) == 1 else f"none of the {len(ids)} apps was"
        why = f"{apps} among the results on any day with results"
    return f"No ranks for {words}{where} from {first} to {last}: {why}."


def _worst(ranks: pl.DataFrame) -> int:
    """The largest rank of a rank_history frame (an Int64 column), 1 when no app ranked."""
    return int(cast("int | None", ranks["rank"].max()) or 1)


def _day_span(frame: pl.DataFrame) -> tuple[date, date]:
    """The first and last day of a frame with rows and a ``pl.Date`` column ``date``."""
    return cast(date, frame["date"].min()), cast(date, frame["date"].max())


def _keywords(frame: pl.DataFrame, keywords: Any, function: str) -> list[str] | None:
    """The asked keywords (comma-separated in a text; runs of spaces made one), each of them in the history."""
    if keywords is None:
        return None
    values = texts("keywords", keywords, split=True, endpoint=function)
    wanted = list(dict.fromkeys(" ".join(v.split()) for v in values))  # as the frames keep keywords
    if not wanted:
        raise InvalidParameterError(
            "keywords", keywords, "a keyword, comma-separated keywords or a list of keywords", endpoint=function
        )
    known = frame["keyword"].unique(maintain_order=True).to_list()
    missing = [k for k in wanted if k not in known]
    if missing:
        allowed = "keywords of the history: " + ", ".join(repr(k) for k in known[:8])
        if isinstance(keywords, str) and "," in keywords:
            allowed += " (a text is split on commas: give a list for a keyword with a comma)"
        raise InvalidParameterError("keywords", missing, allowed, endpoint=function)
    return wanted


def _given_ranks(
    frame: pl.DataFrame, ids: Sequence[str], keywords: Any, start: Any, end: Any, function: str
) -> pl.DataFrame:
    """The rows of a rank_history frame for the asked apps, keywords and days."""
    frame = frame.with_columns(
        pl.col("date").cast(pl.Date), *(pl.lit(None, pl.String).alias(c) for c in _PLACE if c not in frame.columns)
    )
    filters = [pl.col("app_id").is_in(list(ids))]
    if keywords is not None:
        filters.append(pl.col("keyword").is_in(list(keywords)))
    first, last = _range(start, end, function)
    if first is not None:
        filters.append(pl.col("date") >= first)
    if last is not None:
        filters.append(pl.col("date") <= last)
    return frame.filter(*filters).sort("date")


def _range(start: Any, end: Any, function: str) -> tuple[date | None, date | None]:
    """``start`` and ``end`` as days (None when not given), the end on or after the start."""
    first = None if start is None else parse_day("start", start, endpoint=function)
    last = None if end is None else parse_day("end", end, endpoint=function)
    if first is not None and last is not None and last < first:
        raise InvalidParameterError("end", last, f"a date on or after start={first}", endpoint=function)
    return first, last


def _changes(changes: Any, ids: Sequence[str], first: Any, last: Any, function: str) -> pl.DataFrame | None:
    if changes is None:
        return None
    what = "a changes_frame (app_id, date, target)"
    frame = _polars(changes, "changes", function, what)
    _need(frame, ("app_id", "date", "target"), "changes", function, what)
    return (
        frame.select("app_id", pl.col("date").cast(pl.Date), "target")
        .filter(pl.col("app_id").is_in(list(ids)), pl.col("date").is_between(first, last))
        .unique(maintain_order=True)
    )


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


def _shade_no_data(ax: Axes, rows: pl.DataFrame) -> None:
    days = rows.filter(pl.col("status") == "no_data")["date"].unique().to_list()
    for first, last in _runs(days):
        ax.axvspan(
            mdates.date2num(first) - 0.5, mdates.date2num(last) + 0.5, color=_NO_DATA, alpha=0.6, linewidth=0, zorder=0
        )


def _change_markers(ax: Axes, moves: pl.DataFrame, line: pl.DataFrame, color: Any, lowest: int) -> set[str]:
    """Markers of an app's changes; the statuses of the days whose changes sit on the bottom edge."""
    edge: set[str] = set()
    if moves.height == 0:
        return edge
    rank_on = dict(zip(line["date"].to_list(), line["rank"].to_list(), strict=True))
    status_on = dict(zip(line["date"].to_list(), line["status"].to_list(), strict=True))
    for (day,), group in moves.group_by("date", maintain_order=True):
        targets = sorted(group["target"].to_list())
        rank = rank_on.get(day)
        no_data = status_on.get(day) == "no_data"
        if rank is None:
            edge.add("no_data" if no_data else "not_ranked")
        for i, target in enumerate(targets):  # several targets on one day sit side by side
            offset = (i - (len(targets) - 1) / 2) * 0.9
            ax.plot(
                mdates.date2num(day) + offset,
                rank if rank is not None else lowest,
                TARGET_MARKERS.get(target, "o"),
                color=color,
                markerfacecolor="white" if no_data else color,  # hollow: nothing is known of that day
                markeredgecolor=color if no_data else "black",
                markeredgewidth=1.4 if no_data else 0.7,
                markersize=7,
                alpha=0.9,
                zorder=5,
                clip_on=False,
            )
    return edge


def _key(marker: str, label: str, *, hollow: bool = False) -> Line2D:
    """A legend entry of a change marker: grey, or hollow as on a day with no data."""
    if hollow:
        return Line2D([], [], linestyle="none", marker=marker, markersize=7, markerfacecolor="white",
                      markeredgecolor="#777777", markeredgewidth=1.4, label=label)  # fmt: skip
    return Line2D([], [], linestyle="none", marker=marker, markersize=7, markerfacecolor="#777777",
                  markeredgecolor="black", label=label)  # fmt: skip


def _legend(
    figure: Figure,
    axes: Sequence[Axes],
    own: Axes | None,
    moves: pl.DataFrame | None,
    edge: set[str],
    heading: str,
    left_out: str,
) -> None:
    handles, labels = axes[0].get_legend_handles_labels()
    if any(a.patches for a in axes):
        handles.append(Patch(color=_NO_DATA, label="no data recorded"))
    if moves is not None and moves.height:
        handles.append(Line2D([], [], linestyle="none", label="changes:"))
        for target, count in moves.group_by("target").len().sort("len", "target", descending=[True, False]).iter_rows():
            handles.append(_key(TARGET_MARKERS.get(target, "o"), f"{target} ({count})"))
        if "not_ranked" in edge:
            handles.append(_key("o", "on the bottom edge: not ranked that day"))
        if "no_data" in edge:
            handles.append(_key("o", "hollow on the bottom edge: no data that day", hollow=True))
    if left_out:
        handles.append(Line2D([], [], linestyle="none", label=left_out))
    labels = [h.get_label() for h in handles]
    if own is not None:
        own.legend(handles, labels, fontsize=8, loc="best")
        own.set_title(heading, loc="left", fontsize=10)
        return
    columns = 1 if len(handles) <= 4 else 2 if len(handles) <= 10 else 3  # under the panels: the width is theirs
    figure.legend(handles, labels, loc="outside lower center", ncols=columns, fontsize=9, frameon=False)
    figure.suptitle(heading, x=0.01, ha="left", fontsize=12)


# -- benchmark_chart ------------------------------------------------------------------------

_SERIES_COLUMNS = ("channel", "country", "device", "type")


@overload
def benchmark_chart(
    benchmarks: pl.DataFrame | Any,
    rate: str = "page_views_to_installs",
    highlight: str | None = None,
    *,
    by: str | None = None,
    order_by: str | None = None,
    top: int | None = None,
    ax: None = None,
    title: str | None = None,
) -> Figure: ...


@overload
def benchmark_chart(
    benchmarks: pl.DataFrame | Any,
    rate: str = "page_views_to_installs",
    highlight: str | None = None,
    *,
    by: str | None = None,
    order_by: str | None = None,
    top: int | None = None,
    ax: Axes,
    title: str | None = None,
) -> Axes: ...


def benchmark_chart(
    benchmarks: pl.DataFrame | Any,
    rate: str = "page_views_to_installs",
    highlight: str | None = None,
    *,
    by: str | None = None,
    order_by: str | None = None,
    top: int | None = None,
    ax: Axes | None = None,
    title: str | None = None,
) -> Figure | Axes:
    """Categories ranked by a conversion rate, per channel or country, one category highlighted.

    ``benchmarks`` is a :func:`~storeframes.benchmarks_frame`; ``rate`` one of its three
    rates (:data:`RATE_LABELS`). With one series the categories are bars, best first.
    With several (``by``: by default the column of channel, country, device or type that
    varies) each category is a row of dots, one colour per series, the rows ordered by
    one series, best first: ``order_by`` (a series such as ``"search"``), by default the
    first series of the frame with a value; categories without a value in it come last,
    and the chart says which series orders it.

    A category without a value is written "no data" where its bar or dot would be, never
    drawn as zero; a series missing from a row is named at its right end. When no category
    has a value at all the chart is one line saying so. ``highlight`` (a category code such
    as ``"6008"`` or its name) is drawn in orange with its place, "#N of M", in each series
    (the legend gives it with several). ``top`` keeps the best ``top`` categories (and the
    highlighted one). Names that two categories share (Music, Sports: an app category and a
    game category) carry their codes. A dashed line marks 100 % when a conversion rate
    passes it (installs can also come straight from search results, without a page view).

    Without ``ax`` the Figure is returned; with ``ax`` the chart is drawn there and the
    Axes is returned.

    >>> fig = benchmark_chart(sf.benchmarks_frame(countries="us", channels="all,search,browse"),
    ...                       highlight="Photo & Video")  # doctest: +SKIP
    """
    function = "benchmark_chart"
    what = "a benchmarks_frame"
    frame = _polars(benchmarks, "benchmarks", function, what)
    if rate not in RATE_LABELS:
        raise InvalidParameterError("rate", rate, f"one of {', '.join(RATE_LABELS)}", endpoint=function)
    _need(frame, ("category", "category_name", rate), "benchmarks", function, what)
    if frame.height == 0:
        raise InvalidParameterError("benchmarks", "an empty frame", "a benchmarks_frame with rows", endpoint=function)
    varying = [c for c in _SERIES_COLUMNS if c in frame.columns and frame[c].n_unique() > 1]
    if by is not None and by not in frame.columns:
        raise InvalidParameterError(
            "by", by, f"a column of the frame such as {', '.join(_SERIES_COLUMNS)}", endpoint=function
        )
    if top is not None and (not isinstance(top, int) or isinstance(top, bool) or top < 1):
        raise InvalidParameterError("top", top, "a whole number of categories >= 1", endpoint=function)
    series_columns = [by] if by is not None else varying
    frame = frame.with_columns(
        pl.concat_str([pl.col(c).cast(pl.String) for c in series_columns], separator=" · ").alias("_series")
        if series_columns
        else pl.lit("").alias("_series"),
        pl.col(rate).cast(pl.Float64).fill_nan(None),
    )
    series = frame["_series"].unique(maintain_order=True).to_list()
    if order_by is not None and order_by not in series:
        allowed = (
            f"one of the chart's series: {', '.join(map(str, series))}" if len(series) > 1 else "None (one series)"
        )
        raise InvalidParameterError("order_by", order_by, allowed, endpoint=function)
    valued = set(frame.filter(pl.col(rate).is_not_null())["_series"].to_list())
    order = order_by if order_by is not None else next((s for s in series if s in valued), series[0])
    categories = (
        frame.group_by("category", maintain_order=True)
        .agg(
            pl.col("category_name").drop_nulls().first(),
            pl.col(rate).filter(pl.col("_series") == order).mean().alias("_value"),
            pl.col(rate).is_not_null().any().alias("_any"),
        )
        .with_columns(pl.col("category_name").fill_null(pl.col("category")))
        .sort("_value", "category_name", descending=[True, False], nulls_last=True)
        .with_row_index("_place", offset=1)
        .with_columns(pl.col("_value").count().alias("_ranked"))
    )
    chosen = _highlighted(categories, highlight, function)
    if frame[rate].null_count() == frame.height:
        return _nothing(ax, _no_rates_text(frame, rate, categories.height))
    places = _places(frame, categories, rate, series, chosen)  # before top= keeps the best
    shared = set(categories.filter(pl.col("category_name").is_duplicated())["category"].to_list())
    if top is not None:
        keep = pl.col("_place") <= top
        categories = categories.filter(keep | (pl.col("category") == chosen) if chosen is not None else keep)
        frame = frame.filter(pl.col("category").is_in(categories["category"].to_list()))
    count = categories.height
    figure, own = _figure(ax, _WIDTH, 1.8 + 0.27 * count)
    target_ax = own if own is not None else figure.subplots()
    position = {c: count - 1 - i for i, c in enumerate(categories["category"].to_list())}  # best at the top
    values = frame.select("category", "_series", rate)
    highest = cast("float | None", values[rate].max())  # a rate: a number, or None when all are null
    peak = float(highest) if highest is not None else 1.0
    if len(series) == 1:
        _bars(target_ax, categories, position, chosen, peak)
    else:
        _dots(target_ax, values, series, categories, rate, position, chosen, peak)
    names = [
        _short(str(name), 28) + (f" ({code})" if code in shared else "")
        for code, name in categories.select("category", "category_name").iter_rows()
    ]
    target_ax.set_yticks(list(range(count)), list(reversed(names)))
    for tick, category in zip(target_ax.get_yticklabels(), reversed(categories["category"].to_list()), strict=True):
        if category == chosen:
            tick.set_fontweight("bold")
            tick.set_color(_HIGHLIGHT)
    target_ax.set_ylim(-0.7, count - 0.3)
    target_ax.set_xlim(0, peak * (1.25 if chosen is not None or len(series) > 1 else 1.12) if peak > 0 else 1)
    target_ax.set_xlabel(RATE_LABELS[rate])
    target_ax.grid(True, axis="x", alpha=0.3)
    target_ax.set_axisbelow(True)
    if rate == "page_views_to_installs" and peak > 100:
        note = "100 %: installs can exceed page views"
        target_ax.axvline(100, color="#555555", linestyle="--", linewidth=1, label=note)  # with dots: in the legend
    if rate == "page_views_to_installs" and peak > 100 and len(series) == 1:
        target_ax.annotate(
            note,
            (100, 0.0),
            xycoords=("data", "axes fraction"),
            xytext=(4, 4),
            textcoords="offset points",
            fontsize=8,
            va="bottom",
            color="#555555",
        )
    context = [
        str(frame[c][0])
        for c in ("country", "device", "type", "channel")
        if c in frame.columns and c not in series_columns
    ]
    if "start_date" in frame.columns and frame["start_date"].n_unique() == 1:
        context.append(f"{_day_text(frame['start_date'][0])} to {_day_text(frame['end_date'][0])}")
    lines = [title or f"Conversion benchmarks: {RATE_LABELS[rate].split(' (')[0]}"]
    if context:
        lines.append(" · ".join(context))
    column = " · ".join(series_columns)
    placed = {name: f"#{p} of {n}" if p is not None else "no data" for name, (p, n) in places.items()}
    if len(series) > 1:
        lines.append(f"rows ordered by {column} {order}, best first; categories without a value for it last")
        if chosen is not None:  # the highlighted category's place in each series, also at the top
            chosen_name = categories.filter(pl.col("category") == chosen)["category_name"][0]
            lines.append(f"{chosen_name}: " + " · ".join(f"{name} {placed[name]}" for name in series))
    target_ax.set_title("\n".join(lines), loc="left", fontsize=11)
    if len(series) > 1:
        legend_title = column
        if chosen is not None:
            legend_title += f": place of {chosen_name}"
            for handle in target_ax.collections:
                handle.set_label(f"{handle.get_label()}: {placed[str(handle.get_label())]}")
        if own is not None:
            own.legend(title=legend_title, fontsize=8, title_fontsize=8, loc="best")
            return own
        handles, labels = target_ax.get_legend_handles_labels()
        figure.legend(
            handles, labels, title=legend_title, loc="outside lower center", ncols=min(len(handles), 4), frameon=False
        )
    return own if own is not None else figure


def _day_text(value: Any) -> str:
    """A day as YYYY-MM-DD, also from the datetime a pandas round trip makes of it."""
    return str(value.date() if isinstance(value, datetime) else value)


def _places(
    frame: pl.DataFrame, categories: pl.DataFrame, rate: str, series: Sequence[str], chosen: str | None
) -> dict[str, tuple[int | None, int]]:
    """The highlighted category's place in each series and the number of categories with a value there."""
    if chosen is None:
        return {}
    named = categories.select("category", "category_name")
    per = (
        frame.group_by("_series", "category")
        .agg(pl.col(rate).mean())
        .drop_nulls(rate)
        .join(named, on="category")
        .sort(rate, "category_name", descending=[True, False])
    )
    places: dict[str, tuple[int | None, int]] = {}
    for name in series:
        codes = per.filter(pl.col("_series") == name)["category"].to_list()
        places[name] = (codes.index(chosen) + 1 if chosen in codes else None, len(codes))
    return places


def _no_rates_text(frame: pl.DataFrame, rate: str, count: int) -> str:
    """What has no value and why: the rate, the place (device in country) and what else was asked."""

    def values(column: str) -> str:
        if column not in frame.columns:
            return ""
        return ", ".join(str(v) for v in frame[column].unique(maintain_order=True).to_list() if v is not None)

    where = " in ".join(v for v in (values("device"), values("country")) if v)
    extra = ", ".join(f"{c} {values(c)}" for c in ("type", "channel") if values(c))
    subject = f"{where} ({extra})" if where and extra else where or extra
    return f"No {rate} for {subject or 'this frame'}: the service gives no value for these {count} categories."


def _highlighted(categories: pl.DataFrame, highlight: str | None, function: str) -> str | None:
    if highlight is None:
        return None
    wanted = str(highlight).strip().casefold()
    pairs = categories.select("category", "category_name").iter_rows()
    found = [str(code) for code, name in pairs if wanted in (str(code).casefold(), str(name).casefold())]
    if len(found) > 1:  # a name two categories share (Music: the app and the game category)
        raise InvalidParameterError(
            "highlight",
            highlight,
            f"one category: the name is shared, give a code ({', '.join(found)})",
            endpoint=function,
        )
    if found:
        return found[0]
    known = ", ".join(f"{n} ({c})" for c, n in categories.select("category", "category_name").head(6).iter_rows())
    raise InvalidParameterError(
        "highlight", highlight, f"a category code or name of the frame, such as {known} ...", endpoint=function
    )


def _no_data(ax: Axes, y: float, peak: float) -> None:
    ax.text(peak * 0.005, y, "no data", va="center", ha="left", fontsize=8, style="italic", color="#777777")


def _bars(ax: Axes, categories: pl.DataFrame, position: Mapping[str, int], chosen: str | None, peak: float) -> None:
    ranked = int(categories["_ranked"][0])  # categories with a value, before top= kept the best
    for category, value, place in categories.select("category", "_value", "_place").iter_rows():
        y = position[category]
        if value is None:
            _no_data(ax, y, peak)
            continue
        highlighted = category == chosen
        ax.barh(y, value, height=0.7, color=_HIGHLIGHT if highlighted else _BAR)
        text = f"{value:.1f}" + (f"  (#{place} of {ranked})" if highlighted else "")
        ax.text(value + peak * 0.01, y, text, va="center", fontsize=8, fontweight="bold" if highlighted else "normal")


def _dots(
    ax: Axes,
    values: pl.DataFrame,
    series: Sequence[str],
    categories: pl.DataFrame,
    rate: str,
    position: Mapping[str, int],
    chosen: str | None,
    peak: float,
) -> None:
    if chosen is not None:
        ax.axhspan(position[chosen] - 0.45, position[chosen] + 0.45, color=_HIGHLIGHT, alpha=0.2, linewidth=0)
    for category, any_value in categories.select("category", "_any").iter_rows():
        y = position[category]
        if not any_value:
            _no_data(ax, y, peak)
            continue
        present = values.filter(pl.col("category") == category)[rate].drop_nulls()
        low, high = cast(float, present.min()), cast(float, present.max())  # numbers: the row has a value
        if present.len() > 1:
            ax.plot([low, high], [y, y], color="#bbbbbb", linewidth=1.5, zorder=1)
        lacking = values.filter(pl.col("category") == category, pl.col(rate).is_null())["_series"].to_list()
        if lacking:
            ax.text(
                float(high) + peak * 0.02,
                y,
                "no data: " + ", ".join(lacking),
                va="center",
                fontsize=8,
                style="italic",
                color="#777777",
            )
    for index, name in enumerate(series):
        rows = values.filter(pl.col("_series") == name, pl.col(rate).is_not_null())
        ax.scatter(
            rows[rate].to_list(),
            [position[c] for c in rows["category"].to_list()],
            color=_APP_COLORS[index % len(_APP_COLORS)],
            s=30,
            zorder=3,
            label=name,
        )


# -- changes_timeline -----------------------------------------------------------------------


@overload
def changes_timeline(
    changes: pl.DataFrame | Any,
    *,
    names: Mapping[str, str] | pl.DataFrame | None = None,
    start: str | date | None = None,
    end: str | date | None = None,
    targets: str | Sequence[str] | None = None,
    ax: None = None,
    title: str | None = None,
) -> Figure: ...


@overload
def changes_timeline(
    changes: pl.DataFrame | Any,
    *,
    names: Mapping[str, str] | pl.DataFrame | None = None,
    start: str | date | None = None,
    end: str | date | None = None,
    targets: str | Sequence[str] | None = None,
    ax: Axes,
    title: str | None = None,
) -> Axes: ...


def changes_timeline(
    changes: pl.DataFrame | Any,
    *,
    names: Mapping[str, str] | pl.DataFrame | None = None,
    start: str | date | None = None,
    end: str | date | None = None,
    targets: str | Sequence[str] | None = None,
    ax: Axes | None = None,
    title: str | None = None,
) -> Figure | Axes:
    """What each app changed and when: one row per app, one marker per change.

    ``changes`` is a :func:`~storeframes.changes_frame`. Each target (version, title,
    screenshots, privacy_info ...) has its own colour, marker and lane within an app's row,
    so changes on the same day stay apart; the legend counts them. As in
    :func:`rank_chart`, ``targets`` chooses the targets to draw, by default every target
    but ``size`` (the title says how many size changes are left out). Apps are named from
    ``names`` (a metadata frame or a mapping of id to name), in the frame's order; an app
    of the frame without a change drawn keeps its (empty) row.

    The chart covers ``start`` to ``end``, the days the frame was asked for: give them
    (as to :func:`~storeframes.changes_frame`) so the title and the axis show the whole
    range, not the first to the last change. A bound not given is the day of the frame's
    first (or last) change, and the title says so. With no change to draw the chart is one
    line saying so. Without ``ax`` the Figure is returned; with ``ax`` the Axes.

    >>> changes_timeline(sf.changes_frame(["394079159", "1395556972"], start="2026-08-21"),
    ...                  names=metadata, start="2026-08-21", end="2026-11-18")  # doctest: +SKIP
    """
    function = "changes_timeline"
    what = "a changes_frame (app_id, date, target)"
    frame = _polars(changes, "changes", function, what)
    _need(frame, ("app_id", "date", "target"), "changes", function, what)
    asked_first, asked_last = _range(start, end, function)
    if frame.height == 0 and (asked_first is None or asked_last is None):
        raise InvalidParameterError(
            "changes",
            "an empty frame",
            "a changes_frame with at least one change, or start= and end= to say there was none",
            endpoint=function,
        )
    frame = frame.select("app_id", pl.col("date").cast(pl.Date), "target").unique(maintain_order=True)
    labels = _labels(names, function)
    keep = _chosen_targets(targets, frame, function)
    apps = frame["app_id"].unique(maintain_order=True).to_list()
    first = asked_first if asked_first is not None else cast(date, frame["date"].min())
    last = asked_last if asked_last is not None else max(cast(date, frame["date"].max()), first)
    inside = frame.filter(pl.col("date").is_between(first, last))
    left_out = inside.filter(~keep)
    frame = inside.filter(keep)
    span = f"{first} to {last}"
    if asked_first is None or asked_last is None:
        bounds = ("first" if asked_first is None else "", "last" if asked_last is None else "")
        span += f" ({' and '.join(b for b in bounds if b)} change)"
    sizes = left_out.filter(pl.col("target") == "size").height
    note = (
        f"\n{sizes} size change{'s' if sizes > 1 else ''} not shown (targets= to show)"
        if targets is None and sizes
        else ""
    )
    if frame.height == 0:
        who = f"the {len(apps)} apps" if len(apps) > 1 else f"app {_app_label(apps[0], labels)}" if apps else "the apps"
        return _nothing(ax, f"No metadata changes of {who} from {span}" + note.replace("\n", "; ") + ".")
    known = list(TARGET_MARKERS)
    counts = (
        frame.group_by("target", maintain_order=True)
        .len()
        .with_columns(
            pl.col("target").replace_strict(known, list(range(len(known))), default=len(known)).alias("_order")
        )
        .sort("_order", maintain_order=True)
        .drop("_order")
    )
    targets_drawn = counts["target"].to_list()  # the lanes of a row, top to bottom: version first, size last
    figure, own = _figure(ax, _WIDTH, 1.5 + max(0.75, 0.14 * len(targets_drawn)) * len(apps))
    target_ax = own if own is not None else figure.subplots()
    lanes = len(targets_drawn)
    for row, app in enumerate(apps):
        y = len(apps) - 1 - row
        if row % 2 == 0:
            target_ax.axhspan(y - 0.5, y + 0.5, color="#f2f2f2", linewidth=0, zorder=0)
        for index, target in enumerate(targets_drawn):
            days = frame.filter(pl.col("app_id") == app, pl.col("target") == target)["date"].unique().sort()
            if days.len() == 0:
                continue
            offset = ((lanes - 1) / 2 - index) * (0.8 / max(lanes, 1))
            target_ax.plot(
                days.to_list(),
                [y + offset] * days.len(),
                TARGET_MARKERS.get(target, "o"),
                color=_APP_COLORS[index % len(_APP_COLORS)],
                markeredgecolor="black",
                markeredgewidth=0.5,
                markersize=7 if target != "size" else 9,
                linestyle="none",
            )
    handles = [
        Line2D(
            [],
            [],
            linestyle="none",
            marker=TARGET_MARKERS.get(target, "o"),
            color=_APP_COLORS[index % len(_APP_COLORS)],
            markeredgecolor="black",
            markeredgewidth=0.5,
            markersize=7,
            label=f"{target} ({count})",
        )
        for index, (target, count) in enumerate(counts.iter_rows())
    ]
    target_ax.set_yticks(list(range(len(apps))), [_app_label(a, labels) for a in reversed(apps)])
    target_ax.set_ylim(-0.5, len(apps) - 0.5)
    _date_axis(target_ax, first, last, pad=max(0.5, 0.025 * ((last - first).days + 1)))  # whole markers
    target_ax.set_xlabel("date of the change")
    target_ax.grid(True, axis="x", alpha=0.3)
    heading = title or "Metadata changes"
    target_ax.set_title(
        f"{heading}\n{span}, {frame.height} change{'s' if frame.height > 1 else ''}{note}", loc="left", fontsize=11
    )
    if own is not None:
        own.legend(handles=handles, fontsize=8, loc="best")
        return own
    columns = min(len(handles), 4)  # under the chart: the width is the dates'
    figure.legend(handles=handles, title="target", loc="outside lower center", ncols=columns, fontsize=9, frameon=False)
    return figure


def _show_in_ipython() -> None:
    """Let IPython show a returned Figure as PNG, when no matplotlib backend has said how."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return
    formatter = shell.display_formatter.formatters["image/png"]
    try:
        formatter.lookup_by_type(Figure)
    except KeyError:
        formatter.for_type(Figure, lambda fig: figure_png(fig, dpi=100))


_show_in_ipython()
