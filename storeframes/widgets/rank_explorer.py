"""The rank explorer: pick keywords, apps and days of a search history, see the rank chart.

The package (:mod:`storeframes.widgets`) says what to install when ipywidgets or
matplotlib is missing before this module is imported.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from datetime import date, timedelta
from typing import Any, cast

import ipywidgets as widgets
import polars as pl
from matplotlib.figure import Figure

from .. import catalog
from ..errors import InvalidParameterError, plural
from ..plots.common import APP_COLORS, MAX_APPS, app_labels
from ..plots.hover import HoverChart, hover_rank_chart
from ..ranks import one_list
from .base import _WIDE, _as_frame, _Charted, _close_parts, _close_widgets

_HISTORY_COLUMNS = ("keyword", "date", "app_id", "rank")
_MAX_OFFERED = 25
_DEFAULT_SELECTED = 5


class RankExplorer(_Charted, widgets.VBox):
    """Keyword rankings over time: pick keywords, apps and days, see the chart.

    ``history`` is a :func:`~storeframes.search_history_frame` or a
    :func:`~storeframes.rank_history` frame (polars or pandas). The apps offered are
    ``apps`` if given (ids the history lacks are allowed, and said so), else the 25
    apps with the best median rank over the history; the first ``max_apps`` of
    ``apps``, or the top 5, are selected, and at most ``max_apps`` are drawn. Labels
    come from ``names`` (a mapping app_id -> label, or a metadata frame with app_id and
    title). ``changes`` (a :func:`~storeframes.changes_frame`) marks metadata changes
    on the lines. Every change of ``.keywords``, ``.apps`` or ``.dates`` redraws
    :func:`storeframes.plots.hover_rank_chart`; ``.hover`` is that chart, ``.figure``
    its Figure, ``.png`` its image and ``.summary`` says what is shown, or why nothing
    is. An app keeps its colour whatever else is selected (``.colors``).

    Shown in a notebook, the explorer's widget holds the controls and the summary, and
    the chart is the next output, an ordinary output replaced in place at each redraw
    (a line of text when there is nothing to draw): the chart with hover details on
    each point where HTML is shown, its PNG beside it for a reader that shows none, so
    a saved notebook shows the last chart, with or without widget state. Placed in
    another box, the chart is in the widget as a plain PNG (``.chart``, or ``.note``
    when there is nothing to draw).

    >>> import storeframes as sf
    >>> from datetime import date
    >>> client = sf.sandbox.client(today=date(2026, 11, 20), progress=False)
    >>> history = client.search_history_frame(["photo editor", "meditation"], start="2026-11-01", end="2026-11-14")
    >>> explorer = RankExplorer(history, ["3233849169", "1004337595"])
    >>> explorer.keywords.value
    ('photo editor',)
    >>> explorer.summary.value
    '2 apps · 1 keyword · 2026-11-01 to 2026-11-14 (14 days)'
    >>> explorer.keywords.value = ("photo editor", "meditation")
    >>> len(explorer.figure.axes)
    2
    >>> explorer.close(); client.close()
    """

    def __init__(
        self,
        history: pl.DataFrame | Any,
        apps: str | int | Sequence[str | int] | None = None,
        *,
        changes: pl.DataFrame | Any | None = None,
        names: Mapping[str, str] | pl.DataFrame | Any | None = None,
        max_apps: int = 6,
        **kwargs: Any,
    ):
        what = "a search_history_frame or rank_history frame (polars or pandas)"
        frame = _as_frame(history, "history", what)
        missing = [c for c in _HISTORY_COLUMNS if c not in frame.columns]
        if missing:
            raise InvalidParameterError(
                "history",
                f"a frame without {', '.join(missing)}",
                f"{what}, with columns keyword, date, app_id, rank",
                endpoint="widgets",
            )
        frame = frame.with_columns(pl.col("date").cast(pl.Date), pl.col("app_id").cast(pl.String))
        dated = frame.filter(pl.col("keyword").is_not_null() & pl.col("date").is_not_null())
        if dated.height == 0:
            raise InvalidParameterError(
                "history",
                "an empty frame",
                "a history with at least one day of results: fetch other keywords or days",
                endpoint="widgets",
            )
        if not isinstance(max_apps, int) or isinstance(max_apps, bool) or not 1 <= max_apps <= MAX_APPS:
            raise InvalidParameterError(
                "max_apps", max_apps, f"a whole number from 1 to {MAX_APPS}", endpoint="widgets"
            )
        self.history = frame
        self.changes = None if changes is None else _as_frame(changes, "changes", "a changes_frame (polars or pandas)")
        self.names = app_labels(names, "widgets")
        self.max_apps = max_apps
        self.figure: Figure | None = None
        self.hover: HoverChart | None = None
        """The chart drawn last with its hover details (None when there is none): what the output shows."""
        self.colors: dict[str, str] = {}
        """The colour each app drawn so far keeps (app id -> colour)."""

        in_history = set(frame["app_id"].drop_nulls())
        if apps is not None:
            offered = catalog.app_list(apps)
            if not offered:
                raise InvalidParameterError("apps", apps, "at least one app id, or None", endpoint="widgets")
            selected = offered[:max_apps]
        else:
            offered = self._best_apps(frame)
            selected = offered[: min(_DEFAULT_SELECTED, max_apps)]
        self.absent_apps: tuple[str, ...] = tuple(a for a in offered if a not in in_history)
        """The offered apps that never appear in the history."""

        keywords = [k for k in frame["keyword"].unique(maintain_order=True).to_list() if k is not None]
        # a pl.Date column with rows and no nulls: its min and max are dates
        first, last = cast(date, dated["date"].min()), cast(date, dated["date"].max())
        days = [first + timedelta(days=i) for i in range((last - first).days + 1)]

        self._start_chart()
        self.keywords = widgets.SelectMultiple(
            options=keywords,
            value=tuple(keywords[:1]),
            description="Keywords",
            rows=min(max(len(keywords), 2), 8),
            style=_WIDE,
            layout=widgets.Layout(width="auto", min_width="16em"),
        )
        self.apps = widgets.SelectMultiple(
            options=[(self._label(a), a) for a in offered],
            value=tuple(selected),
            description="Apps",
            rows=min(max(len(offered), 2), 8),
            style=_WIDE,
            layout=widgets.Layout(width="auto", min_width="24em"),
        )
        self.dates = widgets.SelectionRangeSlider(
            options=[(d.isoformat(), d) for d in days],
            index=(0, len(days) - 1),
            description="Days",
            continuous_update=False,
            readout=False,  # its readout joins two dates with a hyphen and clips them: .days_shown says them
            style=_WIDE,
            layout=widgets.Layout(flex="1 1 auto", width="auto", min_width="12em"),
        )
        self.days_shown = widgets.Label(layout=widgets.Layout(width="auto", min_width="24em"))
        """The chosen days in words: ``2026-08-21 to 2026-11-18 (90 days)``."""
        self.summary = widgets.HTML()
        self._controls = widgets.HBox([self.keywords, self.apps], layout=widgets.Layout(flex_flow="row wrap"))
        self._days_row = widgets.HBox([self.dates, self.days_shown], layout=widgets.Layout(width="100%"))
        super().__init__([self._controls, self._days_row, self.summary, self._chart_area], **kwargs)
        self._owned = [
            self.keywords,
            self.apps,
            self.dates,
            self.days_shown,
            self.summary,
            self.chart,
            self.note,
            self._chart_area,
            self._controls,
            self._days_row,
        ]
        for control in (self.keywords, self.apps, self.dates):
            control.observe(self._on_change, names="value")
        self._on_change({})

    @staticmethod
    def _best_apps(frame: pl.DataFrame) -> list[str]:
        ranked = one_list(frame, ["keyword", "country", "language", "device", "date"])  # a cache's organic list
        ranked = ranked.filter(pl.col("rank").is_not_null() & pl.col("app_id").is_not_null())
        if "is_ad" in ranked.columns:
            ranked = ranked.filter(~pl.col("is_ad").fill_null(False))
        best = (
            ranked.group_by("app_id")
            .agg(pl.col("rank").median().alias("median"), pl.len().alias("days"))
            .sort(["median", "days", "app_id"], descending=[False, True, False])
            .head(_MAX_OFFERED)
        )
        return best["app_id"].to_list()

    def _label(self, app: str) -> str:
        return self.names.get(app, app)

    def _on_change(self, change: Mapping[str, Any]) -> None:
        try:
            self.redraw()
        except Exception as exc:  # a control must never raise into the notebook
            self._clear(f"Could not draw the chart: {exc}")

    def _clear(self, message: str) -> None:
        self.figure = self.hover = None
        self.summary.value = html.escape(message)
        self.summary.layout.display = "none"  # the message is where the chart would be
        self._show_note(message)

    def _colors_for(self, apps: Sequence[str]) -> dict[str, str]:
        """Each app's colour: the one it had, else a colour none of the others drawn has (a new one first)."""
        palette = APP_COLORS
        chosen: dict[str, str] = {}
        for app in apps:
            color = self.colors.get(app)
            if color is not None and color not in chosen.values():
                chosen[app] = color
        for app in apps:
            if app not in chosen:
                free = [c for c in palette if c not in chosen.values()]
                fresh = [c for c in free if c not in self.colors.values()]
                chosen[app] = self.colors[app] = (fresh or free)[0]
        return chosen

    def redraw(self) -> None:
        """Draw the chart for the selected keywords, apps and days."""
        keywords = list(self.keywords.value)
        chosen = list(self.apps.value)
        start, end = self.dates.value
        days = (end - start).days + 1
        self.days_shown.value = f"{start.isoformat()} to {end.isoformat()} ({plural(days, 'day')})"
        if not chosen or not keywords:
            lacking = " and ".join(w for w, v in (("an app", chosen), ("a keyword", keywords)) if not v)
            self._clear(f"No chart: select at least {lacking}.")
            return
        apps = chosen[: self.max_apps]
        self.hover = hover_rank_chart(
            self.history,
            apps,
            keywords,
            self.changes,
            names=self.names or None,
            start=start,
            end=end,
            colors=self._colors_for(apps),
        )
        self.figure = self.hover.figure
        parts = [
            plural(len(apps), "app"),
            plural(len(keywords), "keyword"),
            f"{start.isoformat()} to {end.isoformat()} ({plural(days, 'day')})",
        ]
        if len(chosen) > len(apps):
            parts.append(f"showing the first {len(apps)} of {len(chosen)} selected apps")
        absent = [self._label(a) for a in apps if a in self.absent_apps]
        if absent:
            parts.append(f"not in this history: {', '.join(absent)}")
        text = " · ".join(parts)
        self.summary.value = html.escape(text)
        self.summary.layout.display = None
        self._show_png(self.hover.png, text, self.hover.html)

    def close(self) -> None:
        """Close the controls and the chart."""
        _close_widgets(getattr(self, "_owned", ()))
        _close_parts(self)
        super().close()
