"""The changes timeline: what each app changed and when, one row per app, one marker per change."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any, cast, overload

import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .._tracebacks import user_facing
from ..errors import InvalidParameterError
from ..ranks import polars_frame
from .common import (
    _WIDTH,
    APP_COLORS,
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


@user_facing
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
    frame = polars_frame(changes, "changes", function, what)
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
    labels = app_labels(names, function)
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
                color=APP_COLORS[index % len(APP_COLORS)],
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
            color=APP_COLORS[index % len(APP_COLORS)],
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
