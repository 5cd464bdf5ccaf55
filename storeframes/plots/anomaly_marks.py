"""Rank anomalies marked on the rank chart: a ring at each anomalous day's rank, coloured by direction, its cause told.

:func:`~storeframes.plots.rank_chart` draws them with ``anomalies=`` (a
:func:`~storeframes.analysis.rank_anomalies` frame).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

import matplotlib.dates as mdates
import polars as pl
from matplotlib.axes import Axes
from matplotlib.lines import Line2D

from ..errors import InvalidParameterError
from ..ranks import polars_frame
from .common import _app_label, _need

DIRECTION_COLORS: dict[str, str] = {"up": "#1a9850", "down": "#c51b7d"}
"""The colour of an anomaly's ring on :func:`~storeframes.plots.rank_chart`: a rank far better (up) or worse (down)
than the same weekday's baseline."""
SHORT_CAUSE = 30
"""A cause of at most this many characters is written beside its ring; a longer one is numbered and listed below."""
MOST_NOTES = 6
"""The most long causes written in full under the chart; the others are counted there (the frame holds them)."""
_PLACE = ("country", "language", "device")
_WHAT = "a rank_anomalies frame (keyword, app_id, date, rank, direction)"


def anomaly_frame(anomalies: Any, function: str) -> pl.DataFrame | None:
    """The anomalies to mark (None when none were given), their shape checked."""
    if anomalies is None:
        return None
    frame = polars_frame(anomalies, "anomalies", function, _WHAT)
    _need(frame, ("keyword", "app_id", "date", "rank", "direction"), "anomalies", function, _WHAT)
    if not (frame["rank"].dtype.is_integer() or frame["rank"].dtype == pl.Null):
        raise InvalidParameterError("anomalies", f"a rank column of {frame['rank'].dtype}", _WHAT, endpoint=function)
    directions = set(frame["direction"].drop_nulls().unique().to_list())
    if directions - set(DIRECTION_COLORS) or frame["direction"].null_count():
        wrong = sorted(map(str, directions - set(DIRECTION_COLORS))) or ["null"]
        raise InvalidParameterError(
            "anomalies",
            f"directions {', '.join(wrong)}",
            "a direction of 'up' or 'down' on each row",
            endpoint=function,
        )
    return frame.with_columns(
        pl.col("date").cast(pl.Date),
        pl.col("app_id").cast(pl.String),
        *(pl.lit(None, pl.String).alias(c) for c in (*_PLACE, "cause") if c not in frame.columns),
    ).sort("date", maintain_order=True)


def panel_anomalies(marks: pl.DataFrame, panel: Mapping[str, Any], app: str, first: date, last: date) -> pl.DataFrame:
    """The anomalies of one app on one panel (keyword and place) within the charted days.

    A place column the chart does not know (null on the panel) is not matched."""
    filters = [pl.col("keyword") == panel["keyword"], pl.col("app_id") == app, pl.col("date").is_between(first, last)]
    filters += [pl.col(c) == panel[c] for c in _PLACE if panel.get(c) is not None]
    return marks.filter(*filters)


def mark_anomalies(ax: Axes, rows: pl.DataFrame, lowest: int, notes: list[str]) -> Counter[str]:
    """A ring per anomaly at its day and rank (on the bottom edge when not ranked), and its cause once per event (the
    run of days from ``event_start``), beside it or numbered into ``notes`` (a cause told before keeps its number).
    Returns the rings drawn by direction."""
    drawn: Counter[str] = Counter()
    told: set[Any] = set()
    for row in rows.iter_rows(named=True):
        direction, rank = row["direction"], row["rank"]
        color = DIRECTION_COLORS[direction]
        x, y = mdates.date2num(row["date"]), rank if rank is not None else lowest
        ax.plot(
            x,
            y,
            "o",
            markersize=11,
            markerfacecolor="none",
            markeredgecolor=color,
            markeredgewidth=2.0,
            zorder=6,
            clip_on=False,
            gid=f"anomaly_{direction}",
        )
        drawn[direction] += 1
        cause, event = row["cause"], (row.get("event_start") or row["date"], direction)
        if not cause or event in told:
            continue
        told.add(event)
        if len(cause) > SHORT_CAUSE:
            if cause not in notes:
                notes.append(cause)
            cause = f"[{notes.index(cause) + 1}]"
        up = direction == "up"
        if rank is None:  # on the bottom edge: beside the ring, off the tick labels
            offset, ha, va = (10, 0), "left", "center"
        else:  # the rank axis runs down: up on the chart is a better rank
            offset, ha, va = (0, 11 if up else -11), "center", "bottom" if up else "top"
        ax.annotate(
            cause,
            (x, y),
            xytext=offset,
            textcoords="offset points",
            ha=ha,
            va=va,
            fontsize=7.5,
            color=color,
            bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none", "alpha": 0.8},
            zorder=7,
            gid="anomaly_cause",
        )
    return drawn


def anomaly_handles(drawn: Counter[str], left_out: int) -> list[Line2D]:
    """The legend's entries: a ring of each direction drawn, with its count, and the rows not charted."""
    handles = [Line2D([], [], linestyle="none", label="anomalies:")] if drawn or left_out else []
    for direction, words in (("up", "rank far above its baseline"), ("down", "rank far below its baseline")):
        if drawn[direction]:
            ring = Line2D([], [], linestyle="none", marker="o", markersize=10, markerfacecolor="none", label="")
            ring.set_markeredgecolor(DIRECTION_COLORS[direction])
            ring.set_markeredgewidth(2.0)
            ring.set_label(f"{words} ({drawn[direction]})")
            handles.append(ring)
    if left_out:
        label = f"{left_out} more, of keywords, apps, places or days not charted"
        handles.append(Line2D([], [], linestyle="none", label=label))
    return handles


def footnotes(notes: Sequence[str], labels: Mapping[str, str]) -> str:
    """The long causes, numbered as beside their rings, the apps named: the first :data:`MOST_NOTES`, the others
    counted."""
    ids = re.compile(r"\b(" + "|".join(map(re.escape, labels)) + r")\b") if labels else None
    lines = []
    for number, note in enumerate(notes[:MOST_NOTES], start=1):
        named = ids.sub(lambda found: _app_label(found.group(1), labels), note) if ids is not None else note
        lines.append(f"[{number}] {named}")
    if len(notes) > MOST_NOTES:
        more = len(notes) - MOST_NOTES
        lines.append(
            f"[{MOST_NOTES + 1}] to [{len(notes)}]: {more} more cause{'s' if more > 1 else ''}, in the frame's cause column"
        )
    return "\n".join(lines)
