"""The rank chart: each app's rank over time per keyword, with its metadata changes marked."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, cast, overload

import matplotlib.dates as mdates
import polars as pl
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.colors import is_color_like, to_hex
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator

from .._tracebacks import user_facing
from ..catalog import app_list, texts
from ..errors import InvalidParameterError
from ..ranks import polars_frame, rank_history
from .anomaly_marks import anomaly_frame, anomaly_handles, footnotes, mark_anomalies, panel_anomalies
from .common import (
    _WIDTH,
    APP_COLORS,
    MAX_APPS,
    TARGET_MARKERS,
    _app_label,
    _chosen_targets,
    _date_axis,
    _figure,
    _need,
    _nothing,
    _range,
    app_labels,
)

_LINE_STYLES = ("-", "--", ":", "-.")
_NO_DATA = "#d9d9d9"
_NOT_FETCHED, _HATCH = "#fff4e0", "#e0a030"  # hatched: nothing is known of a day never fetched
_PLACE = ("country", "language", "device")
_RANK_STEPS = (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000)


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
    fetched: pl.DataFrame | Any | None = None,
    anomalies: pl.DataFrame | Any | None = None,
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
    fetched: pl.DataFrame | Any | None = None,
    anomalies: pl.DataFrame | Any | None = None,
) -> Axes: ...


@user_facing
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
    fetched: pl.DataFrame | Any | None = None,
    anomalies: pl.DataFrame | Any | None = None,
) -> Figure | Axes:
    """Each app's rank over time per keyword: rank 1 at the top, gaps where it was not ranked.

    ``history`` is a :func:`~storeframes.search_history_frame` (or a
    :func:`~storeframes.search_frame`, or :func:`~storeframes.rank_history`'s frame).
    ``keywords`` (by default all of the history's) is a keyword, comma-separated keywords
    or a list (where a keyword may hold a comma). One line per app, in one colour across
    panels, named from ``names`` (a metadata frame or a mapping of id to name). Without
    ``ax`` each keyword (and place) gets a panel of its own and the Figure is returned;
    with ``ax`` all keywords share that Axes, one line style per keyword, and the Axes is
    returned. Days the service recorded nothing for a keyword are shaded grey; days never
    fetched (``fetched=``, as :func:`~storeframes.rank_history` takes it, or a rank_history
    frame's ``not_fetched`` status) are hatched, apart, each named in the legend; a gap on a
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

    ``anomalies`` (a :func:`~storeframes.analysis.rank_anomalies` frame) rings each
    anomalous day of a charted app at its rank (on the bottom edge when it fell out of the
    results), green when the rank was far above its baseline, magenta when far below
    (:data:`DIRECTION_COLORS`); the legend counts them, and the rows of apps, keywords,
    places or days not charted. A cause of up to 30 characters is written beside its ring;
    a longer one is numbered there and written in full under the chart.

    :func:`~storeframes.plots.hover_rank_chart` draws the same chart for a notebook, each point telling its
    app, rank, day, move and listing changes when the pointer rests on it.

    >>> fig = rank_chart(history, ["3233849169", "394079159"], changes=changes, names=metadata)  # doctest: +SKIP
    >>> fig.savefig("ranks.png")  # doctest: +SKIP
    >>> rank_chart(history, "3233849169", anomalies=sf.rank_anomalies(sf.rank_history(history, "3233849169")))  # doctest: +SKIP
    """
    return _draw_ranks(
        history,
        apps,
        keywords,
        changes,
        names=names,
        start=start,
        end=end,
        targets=targets,
        colors=colors,
        ax=ax,
        title=title,
        fetched=fetched,
        anomalies=anomalies,
    )[0]


@dataclass(frozen=True)
class RankPanel:
    """One panel of a drawn rank chart: its Axes, its rank_history rows (one keyword in one place, every charted
    app and day) and its bottom edge, the rank below the worst where the days an app was not ranked sit."""

    ax: Axes
    rows: pl.DataFrame
    lowest: int


@dataclass(frozen=True)
class DrawnRanks:
    """What :func:`rank_chart` drew, for a reader of its points (:func:`~storeframes.plots.hover_rank_chart`): the
    panels in order, the app labels given by ``names=``, the change markers' rows (None without ``changes=``)."""

    panels: tuple[RankPanel, ...]
    labels: dict[str, str]
    moves: pl.DataFrame | None


def _draw_ranks(
    history: Any,
    apps: Any,
    keywords: Any,
    changes: Any,
    *,
    names: Any,
    start: Any,
    end: Any,
    targets: Any,
    colors: Any,
    ax: Axes | None,
    title: str | None,
    fetched: Any,
    anomalies: Any,
    function: str = "rank_chart",
) -> tuple[Figure | Axes, DrawnRanks | None]:
    """The rank chart and what it drew (None for a chart of nothing: one line saying why)."""
    what = "a search_history_frame, search_frame or rank_history frame"
    frame = polars_frame(history, "history", function, what)
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
    marks = anomaly_frame(anomalies, function)
    try:
        if "status" in frame.columns:  # already a rank_history frame: keep the asked apps, keywords and days
            ranks = _given_ranks(frame, ids, wanted, start, end, function)
        else:
            ranks = rank_history(frame, ids, keywords=wanted, start=start, end=end, fetched=fetched)
    except InvalidParameterError as exc:  # in the words of this function
        raise InvalidParameterError(exc.parameter, exc.value, exc.allowed, endpoint=function) from None
    if ranks.height == 0:  # nothing was recorded or fetched, and no days were asked for
        who = "the app" if len(ids) == 1 else f"the {len(ids)} apps"
        why = "no search was recorded or fetched"
        hint = "give start= and end= to show those days as days without data"
        return _nothing(ax, f"No ranks for {who}: the history has no rows ({why}); {hint}."), None
    labels = app_labels(names, function)
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
        return _nothing(ax, _no_ranks_text(ranks, ids, first, last)), None

    panels = ranks.select("keyword", *_PLACE).unique(maintain_order=True)
    several_places = ranks.select(_PLACE).unique().height > 1
    figure, own = _figure(ax, _WIDTH, 1.3 + 2.6 * (1 if ax is not None else panels.height))
    axes: list[Axes] = (
        [ax] if ax is not None else list(figure.subplots(panels.height, 1, sharex=True, squeeze=False)[:, 0])
    )
    shared_worst = _worst(ranks)
    edge: set[str] = set()  # the statuses of the days whose changes sit on the bottom edge
    rings: Counter[str] = Counter()  # the anomalies marked, by direction
    notes: list[str] = []  # their long causes, numbered
    drawn_panels: list[RankPanel] = []

    for index, panel in enumerate(panels.iter_rows(named=True)):
        target_ax = axes[0] if ax is not None else axes[index]
        style = _LINE_STYLES[index % len(_LINE_STYLES)] if ax is not None else "-"
        rows = ranks.filter(*(pl.col(c).eq_missing(panel[c]) for c in ("keyword", *_PLACE)))
        worst = shared_worst if ax is not None else _worst(rows)  # each panel its own scale
        lowest = worst + max(1, round(worst * 0.06))  # the bottom edge, where unranked changes sit
        _shade_no_data(target_ax, rows)
        drawn_panels.append(RankPanel(target_ax, rows, lowest))
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
            if marks is not None:
                rings += mark_anomalies(target_ax, panel_anomalies(marks, panel, app, first, last), lowest, notes)
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
    extra = anomaly_handles(rings, marks.height - rings.total()) if marks is not None else []
    _legend(figure, axes, own, moves, edge, heading, left_out, extra)
    if notes:  # under the date axis, inside the layout: the legend goes below them
        axes[-1].annotate(
            footnotes(notes, labels),
            (0, 0),
            xycoords=("axes fraction", axes[-1].xaxis.label),
            xytext=(0, -6),
            textcoords="offset points",
            ha="left",
            va="top",
            fontsize=8,
            gid="anomaly_notes",
        )
    drawn = DrawnRanks(tuple(drawn_panels), labels, moves)
    return (own if own is not None else figure), drawn


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
    free = [c for c in APP_COLORS if c not in charted | elsewhere] + [c for c in APP_COLORS if c in elsewhere]
    cycle = iter(free)
    return {app: chosen[app] if app in chosen else next(cycle) for app in ids}


def _rank_ticks(lowest: int) -> list[int]:
    """Rank 1 and round ranks above the bottom edge: 1, 2, 4 ... or 1, 10, 20 ... or 1, 25, 50 ... The edge
    itself never has a number: the markers of days not ranked or without data sit there, and a number would
    read as a rank they fell to."""
    step = next((s for s in _RANK_STEPS if lowest // s <= 6), _RANK_STEPS[-1])
    return sorted({1, *range(step, lowest, step)})


def _no_ranks_text(ranks: pl.DataFrame, ids: Sequence[str], first: date, last: date) -> str:
    words = ", ".join(f"“{k}”" for k in ranks["keyword"].unique(maintain_order=True).to_list())
    place = _place_text(ranks)
    where = f" in {place}" if place else ""
    if (ranks["status"] == "not_fetched").all():
        why = "none of these days was fetched"
    elif ranks["status"].is_in(["no_data", "not_fetched"]).all():
        skipped = ranks.filter(pl.col("status") == "not_fetched")["date"].n_unique()
        why = "the service recorded no search results on these days" + (
            f" ({skipped} of them not fetched)" if skipped else ""
        )
    else:
        apps = "the app was not" if len(ids) == 1 else f"none of the {len(ids)} apps was"
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


def _changes(changes: Any, ids: Sequence[str], first: Any, last: Any, function: str) -> pl.DataFrame | None:
    if changes is None:
        return None
    what = "a changes_frame (app_id, date, target)"
    frame = polars_frame(changes, "changes", function, what)
    _need(frame, ("app_id", "date", "target"), "changes", function, what)
    return (
        frame.select("app_id", pl.col("date").cast(pl.Date), "target")
        .filter(pl.col("app_id").is_in(list(ids)), pl.col("date").is_between(first, last))
        .unique(maintain_order=True)
    )


def _shade_no_data(ax: Axes, rows: pl.DataFrame) -> None:
    """Grey bands over the days without data, hatched ones (labelled ``not fetched``) over the days never fetched."""
    days = rows.filter(pl.col("status") == "no_data")["date"].unique().to_list()
    for first, last in _runs(days):
        ax.axvspan(
            mdates.date2num(first) - 0.5, mdates.date2num(last) + 0.5, color=_NO_DATA, alpha=0.6, linewidth=0, zorder=0
        )
    skipped = rows.filter(pl.col("status") == "not_fetched")["date"].unique().to_list()
    for first, last in _runs(skipped):
        span = (mdates.date2num(first) - 0.5, mdates.date2num(last) + 0.5)
        ax.axvspan(*span, facecolor=_NOT_FETCHED, edgecolor=_HATCH, hatch="///", linewidth=0, zorder=0, gid="skipped")


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
        no_data = status_on.get(day) in ("no_data", "not_fetched")
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
    face, edge, width = ("white", "#777777", 1.4) if hollow else ("#777777", "black", None)  # None: matplotlib's width
    key = Line2D([], [], linestyle="none", marker=marker, markersize=7, label=label, markeredgewidth=width)
    key.set_markerfacecolor(face)
    key.set_markeredgecolor(edge)
    return key


def _legend(
    figure: Figure,
    axes: Sequence[Axes],
    own: Axes | None,
    moves: pl.DataFrame | None,
    edge: set[str],
    heading: str,
    left_out: str,
    extra: Sequence[Line2D] = (),
) -> None:
    handles, _ = axes[0].get_legend_handles_labels()
    if any(p.get_gid() != "skipped" for a in axes for p in a.patches):
        handles.append(Patch(color=_NO_DATA, label="no data recorded"))
    if any(p.get_gid() == "skipped" for a in axes for p in a.patches):
        handles.append(Patch(facecolor=_NOT_FETCHED, edgecolor=_HATCH, hatch="///", label="not fetched"))
    marked: list[Artist] = []
    if moves is not None and moves.height:
        marked.append(Line2D([], [], linestyle="none", label="changes:"))
        for target, count in moves.group_by("target").len().sort("len", "target", descending=[True, False]).iter_rows():
            marked.append(_key(TARGET_MARKERS.get(target, "o"), f"{target} ({count})"))
        if "not_ranked" in edge:
            marked.append(_key("o", "on the bottom edge: not ranked that day"))
        if "no_data" in edge:
            marked.append(_key("o", "hollow on the bottom edge: no data that day", hollow=True))
    if left_out:
        marked.append(Line2D([], [], linestyle="none", label=left_out))
    if own is not None:  # one column: each heading right above its entries
        entries = [*handles, *marked, *extra]
        own.legend(entries, [str(h.get_label()) for h in entries], fontsize=8, loc="best")
        own.set_title(heading, loc="left", fontsize=10)
        return
    entries, columns = _legend_columns([handles, marked, list(extra)])  # under the panels: the width is theirs
    figure.legend(
        entries,
        [str(h.get_label()) for h in entries],
        loc="outside lower center",
        ncols=columns,
        fontsize=9,
        frameon=False,
    )
    figure.suptitle(heading, x=0.01, ha="left", fontsize=12)


def _legend_columns(sections: Sequence[Sequence[Artist]]) -> tuple[list[Artist], int]:
    """A legend's entries in matplotlib's order (column by column) and its number of columns: up to 4 entries in
    one column, else 2 columns (3 beyond 10 entries, more when there are more sections), each section starting at
    the top of a column, so a heading (``changes:``, ``anomalies:``) sits right above its entries.

    >>> apps, changes = [Line2D([], [], label=a) for a in "ab"], [Line2D([], [], label=c) for c in ("changes:", "x", "y")]
    >>> entries, columns = _legend_columns([apps, changes])
    >>> [e.get_label() for e in entries], columns
    (['a', 'b', '', 'changes:', 'x', 'y'], 2)
    """
    kept = [list(s) for s in sections if s]
    total = sum(len(s) for s in kept)
    if total <= 4:
        return [entry for section in kept for entry in section], 1
    most = max(2 if total <= 10 else 3, len(kept))
    rows = next(r for r in range(1, total + 1) if sum(-(-len(s) // r) for s in kept) <= most)
    entries: list[Artist] = []
    for section in kept:  # matplotlib fills a column, then the next: a short section is padded to its column's foot
        entries += section + [Line2D([], [], linestyle="none", label="") for _ in range(-len(section) % rows)]
    return entries, len(entries) // rows


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
