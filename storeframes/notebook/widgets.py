"""Notebook widgets: a credit meter, a keyword rank explorer and a benchmarks explorer.

They are ``ipywidgets`` 8 boxes (``pip install "storeframes[notebook]"``) that draw with
:mod:`storeframes.plots` into an image, so they need no matplotlib backend. Each has a
``close()`` that also stops what it watches.

Shown in a notebook (the cell's value, or ``display(explorer)``), each also writes an
ordinary output that holds what it shows, kept up to date in place (a ``display_id``): the
explorer's current chart as a PNG, the meter's line as HTML. A notebook saved and opened
again after its kernel stopped shows those outputs, with or without the widget state saved.
In plain Python they are made and redrawn the same way; nothing is displayed.

In a notebook cell::

    import storeframes as sf
    from storeframes.widgets import BenchmarkExplorer, CreditMeter, RankExplorer

    client = sf.configure(sandbox=True, budget=10_000)
    CreditMeter(client)                      # credits spent and saved, live
    history = client.search_history_frame(["photo editor", "photo filters"], start="2026-08-21")
    RankExplorer(history, names=client.metadata_frame(["3233849169", "1395556972"]))
    BenchmarkExplorer(client)                # asks before spending: "Fetch: up to 1,001 credits"

:func:`app_card` (from :mod:`storeframes.cards`) is re-exported here.
"""

from __future__ import annotations

import base64
import html
import math
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import date, timedelta
from typing import Any, cast

import polars as pl

try:
    import ipywidgets as widgets
    from matplotlib.figure import Figure
except ImportError as exc:  # pragma: no cover - depends on the installed extras (tests/test_conventions.py)
    _missing = f"{exc.name} is not installed" if exc.name else str(exc)
    raise ImportError(
        f"storeframes.widgets needs ipywidgets and matplotlib ({_missing}): "
        'pip install "storeframes[notebook]" (or ipywidgets>=8.1 and matplotlib>=3.9)',
        name=exc.name,
    ) from exc

from .. import catalog
from ..client import Client, Plan
from ..defaults import default_client
from ..errors import (
    ApiError,
    AuthenticationError,
    BudgetExceededError,
    InvalidParameterError,
    NotCachedError,
    NotEnoughCreditsError,
    StoreframesError,
    TransportError,
    plural,
)
from ..ranks import _polars
from . import plots
from .cards import AppCard, app_card
from .plots.common import _APP_COLORS, _labels

__all__ = ["AppCard", "BenchmarkExplorer", "CreditMeter", "RankExplorer", "app_card"]

RATES: tuple[tuple[str, str], ...] = tuple((label.split(" (")[0], rate) for rate, label in plots.RATE_LABELS.items())
"""The rate columns of a benchmarks frame, with their labels."""

_HISTORY_COLUMNS = ("keyword", "date", "app_id", "rank")
_MAX_OFFERED = 25
_DEFAULT_SELECTED = 5
_KEPT_FRAMES = 64  # the benchmark frames an explorer keeps, so flipping back sends nothing
_WIDE = {"description_width": "initial"}  # a description as wide as its words, never cut off


def _close_parts(item: widgets.Widget) -> None:
    """Close a widget's own layout and style (closing the widget leaves them open)."""
    for name in ("style", "layout"):
        part = getattr(item, name, None) if item.has_trait(name) else None
        if isinstance(part, widgets.Widget):
            part.close()


def _close_widgets(items: Iterable[widgets.Widget]) -> None:
    """Close widgets with their layout and style."""
    for item in items:
        _close_parts(item)
        item.close()


def _as_frame(value: Any, name: str, what: str) -> pl.DataFrame:
    return _polars(value, name, "widgets", what)  # as rank_history and the charts read frames


def _note(text: str) -> dict[str, str]:
    """A one-line message as an output's data: HTML and plain text."""
    return {"text/html": f"<p><em>{html.escape(text)}</em></p>", "text/plain": text}


class _Mirrored(widgets.Box):
    """A box that, shown in IPython, also writes a plain output holding its current content.

    ``_ipython_display_`` shows the widget's view (unless :meth:`_with_view` says not to)
    and then an ordinary display output with a ``display_id``; every :meth:`_publish`
    replaces that output's data with :meth:`_content`, so the notebook file always holds
    the last content, readable without the widget. Updates may come from any thread: one
    lock keeps them in order.
    """

    def _start_mirror(self) -> None:
        self._display_ids: list[str] = []
        self._mirror_lock = threading.RLock()

    def _content(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The output's data and metadata (by mimetype)."""
        raise NotImplementedError

    def _view_text(self) -> str:
        """The widget view's plain text, what a reader without the kernel sees in its place."""
        return f"{type(self).__name__} (its controls work while the notebook's kernel runs)"

    def _with_view(self) -> bool:
        return True

    def _mirroring(self) -> None:
        """The output now shows the content: hide it in the widget's view, so it never shows twice."""

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any] | None:
        data = super()._repr_mimebundle_(**kwargs)
        if data is not None:
            data["text/plain"] = self._view_text()
        return cast("dict[str, Any] | None", data)

    def _ipython_display_(self) -> None:
        from IPython import display  # ipywidgets imported it already

        view = self._repr_mimebundle_() if self._with_view() else None
        if view is not None:
            display.display(view, raw=True)
        display_id = f"storeframes-{type(self).__name__}-{uuid.uuid4().hex}"
        with self._mirror_lock:
            self._mirroring()
            data, metadata = self._content()
            display.display(data, raw=True, metadata=metadata, display_id=display_id)
            self._display_ids.append(display_id)

    def _publish(self) -> None:
        """Show the current content in every output this widget wrote (none outside IPython)."""
        if not getattr(self, "_display_ids", None):
            return
        from IPython import display

        with self._mirror_lock:
            data, metadata = self._content()
            for display_id in self._display_ids:
                display.update_display(data, display_id=display_id, raw=True, metadata=metadata)


class _Charted(_Mirrored):
    """An explorer: controls in the widget, the chart (or a line saying why there is none) in an output.

    Outside an output, ``.chart`` (an ``Image``, scrolled sideways rather than shrunk in a
    narrow window) and ``.note`` (the message shown instead of an empty image) sit in the
    widget's chart area; once the explorer is shown in IPython that area is hidden and the
    output holds the chart.
    """

    def _start_chart(self) -> None:
        self._start_mirror()
        self._png = b""
        self._text = ""
        self.chart = widgets.Image(format="png", value=b"", layout=widgets.Layout(max_width="none", display="none"))
        self.note = widgets.HTML()
        self._chart_area = widgets.Box([self.chart, self.note], layout=widgets.Layout(overflow="auto", width="100%"))

    @property
    def png(self) -> bytes:
        """The chart as PNG (empty when there is none)."""
        return self._png

    def _show_png(self, png: bytes, text: str) -> None:
        self._png, self._text = png, text
        self.chart.value = png
        self.chart.layout.display = None
        self.note.value = ""
        self.note.layout.display = "none"
        self._publish()

    def _show_note(self, text: str) -> None:
        self._png, self._text = b"", text
        self.chart.value = b""
        self.chart.layout.display = "none"
        self.note.value = _note(text)["text/html"]
        self.note.layout.display = None
        self._publish()

    def _content(self) -> tuple[dict[str, Any], dict[str, Any]]:
        if not self._png:
            return _note(self._text), {}
        data = {"image/png": base64.b64encode(self._png).decode("ascii"), "text/plain": self._text}
        return data, {"image/png": {"unconfined": True}}  # its own size, scrolled rather than shrunk

    def _view_text(self) -> str:
        return (
            f"{type(self).__name__} controls (they work while the notebook's kernel runs; the chart is the next output)"
        )

    def _mirroring(self) -> None:
        self._chart_area.layout.display = "none"


class CreditMeter(_Mirrored, widgets.HBox):
    """Credits spent in this session against the client's budget, updated after every answer.

    A progress bar (hidden when the client has no budget; ``"warning"`` above 80 % of
    it, ``"danger"`` once it is all spent) and a line with the credits spent, the
    requests sent and the credits saved by answers reused from the cache: each call
    the cache answered counts what those answers first cost, once per call (an
    explorer that draws again what it already holds makes no call). It follows the
    client through :meth:`Client.watch <storeframes.Client.watch>`; :meth:`close` stops that.

    Shown in a notebook, the meter is an ordinary output (the bar and the line as HTML,
    the line as text) updated in place, so a saved notebook shows its last figures; placed
    in another box, it is the widget.

    >>> import storeframes as sf
    >>> client = sf.sandbox.client(budget=10_000, progress=False)
    >>> meter = CreditMeter(client)
    >>> _ = client.metadata_frame("3233849169")
    >>> meter.label.value
    '11 of 10,000 credits spent (0%) · 1 request · 0 credits saved by cached answers'
    >>> _ = client.versions_frame("3233849169")    # the same answer, from the cache
    >>> meter.label.value
    '11 of 10,000 credits spent (0%) · 1 request · 11 credits saved by cached answers'
    >>> meter.bar.value, meter.bar.max
    (11, 10000)
    >>> meter.close(); client.close()
    """

    def __init__(self, client: Client | None = None, **kwargs: Any):
        self._start_mirror()
        self.client = client if client is not None else default_client()
        self.bar = widgets.IntProgress(
            min=0, max=1, value=0, description="Credits", layout=widgets.Layout(width="220px")
        )
        self.label = widgets.HTML()
        super().__init__([self.bar, self.label], **kwargs)
        self._owned = [self.bar, self.label]
        self._stop: Callable[[], None] | None = None
        self.text = ""
        """The meter's line as plain text."""
        self.refresh()
        self._stop = self.client.watch(self._on_row)

    def _on_row(self, row: Mapping[str, Any]) -> None:
        self.refresh()  # may run on a worker thread: refresh() sets trait values and updates the output

    def refresh(self) -> None:
        """Show the client's current figures."""
        with self._mirror_lock:  # rows end on several threads: the figures read last are shown last
            self._refresh()

    def _refresh(self) -> None:
        client = self.client
        spent = int(client.spent)  # a watcher hears of a row once its credits are counted here
        saved, budget = int(client.saved), client.budget
        tail = f"{plural(int(client.requests_sent), 'request')} · {saved:,} credits saved by cached answers"
        if budget is None:
            self.bar.layout.display = "none"
            self.bar.value = 0
            self.bar.bar_style = ""
            self.text = f"{spent:,} credits spent (no budget set) · {tail}"
        else:
            percent = 100 if budget <= 0 else math.floor(100 * spent / budget)
            self.bar.layout.display = None
            self.bar.max = max(budget, 1)
            self.bar.value = min(spent, self.bar.max)
            self.bar.bar_style = "danger" if spent >= budget else "warning" if 100 * spent > 80 * budget else ""
            self.text = f"{spent:,} of {budget:,} credits spent ({percent}%) · {tail}"
        self.label.value = html.escape(self.text)
        self._publish()

    def _content(self) -> tuple[dict[str, Any], dict[str, Any]]:
        text = self.text
        bar = ""
        if self.client.budget is not None:
            colour = {"danger": "#d62728", "warning": "#ff7f0e"}.get(self.bar.bar_style, "#2ca02c")
            bar = (
                f'<progress value="{self.bar.value}" max="{self.bar.max}" '
                f'style="width:14em;vertical-align:middle;accent-color:{colour}"></progress> '
            )
        line = f'<div class="storeframes-credits">{bar}<span>{html.escape(text)}</span></div>'
        return {"text/html": line, "text/plain": text}, {}

    def _with_view(self) -> bool:
        return False  # the output is the whole meter: nothing in it needs the kernel

    def close(self) -> None:
        """Stop following the client and close the widgets."""
        stop = getattr(self, "_stop", None)
        if stop is not None:
            stop()
            self._stop = None
        _close_widgets(getattr(self, "_owned", ()))
        _close_parts(self)
        super().close()


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
    :func:`storeframes.plots.rank_chart`; ``.figure`` is the Figure, ``.png`` its image
    and ``.summary`` says what is shown, or why nothing is. An app keeps its colour
    whatever else is selected (``.colors``).

    Shown in a notebook, the explorer's widget holds the controls and the summary, and
    the chart is the next output, an ordinary PNG replaced in place at each redraw (a
    line of text when there is nothing to draw): a saved notebook shows the last chart,
    with or without widget state. Placed in another box, the chart is in the widget
    (``.chart``, or ``.note`` when there is nothing to draw).

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
        if not isinstance(max_apps, int) or isinstance(max_apps, bool) or not 1 <= max_apps <= plots.MAX_APPS:
            raise InvalidParameterError(
                "max_apps", max_apps, f"a whole number from 1 to {plots.MAX_APPS}", endpoint="widgets"
            )
        self.history = frame
        self.changes = None if changes is None else _as_frame(changes, "changes", "a changes_frame (polars or pandas)")
        self.names = _labels(names, "widgets")
        self.max_apps = max_apps
        self.figure: Figure | None = None
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
        ranked = frame.filter(pl.col("rank").is_not_null() & pl.col("app_id").is_not_null())
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
        self.figure = None
        self.summary.value = html.escape(message)
        self.summary.layout.display = "none"  # the message is where the chart would be
        self._show_note(message)

    def _colors_for(self, apps: Sequence[str]) -> dict[str, str]:
        """Each app's colour: the one it had, else a colour none of the others drawn has (a new one first)."""
        palette = _APP_COLORS
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
        self.figure = plots.rank_chart(
            self.history,
            apps,
            keywords,
            self.changes,
            names=self.names or None,
            start=start,
            end=end,
            colors=self._colors_for(apps),
        )
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
        self._show_png(plots.figure_png(self.figure), text)

    def close(self) -> None:
        """Close the controls and the chart."""
        _close_widgets(getattr(self, "_owned", ()))
        _close_parts(self)
        super().close()


def _texts(value: Any) -> list[str]:
    """Texts from a list or a comma-separated text (empty when it is neither)."""
    try:
        return catalog.texts("texts", value)
    except InvalidParameterError:
        return []


def _device_choices() -> tuple[str, ...]:
    return catalog.ENDPOINTS["benchmarks"].devices


def _type_choices() -> tuple[str, ...]:
    return next(p.choices for p in catalog.ENDPOINTS["benchmarks"].params if p.name == "type")


class BenchmarkExplorer(_Charted, widgets.VBox):
    """Category conversion benchmarks: pick a country, device, type and channel, see the ranking.

    ``.cost`` always shows what the current selection would cost: a selection the cache
    holds is drawn at once (0 credits), as is one whose estimate is at most
    ``confirm_above`` credits; otherwise ``.fetch_button`` offers the fetch ("Fetch: up
    to 1,001 credits") and nothing is sent until it is clicked. A selection drawn before
    is drawn again from the explorer's memory, with no call at all (so flipping between
    selections neither spends nor counts savings again). The chart is
    :func:`storeframes.plots.benchmark_chart` of ``.frame`` for the chosen ``.rate``,
    with the ``.highlight`` category marked; changing those two only redraws. The
    highlighted category stays chosen when the selection changes, and is marked again
    wherever the new selection has it (``.status`` says when it does not). When every
    category lacks the chosen rate, one line says so instead of a chart. Errors (budget,
    offline, refused parameters, the service's errors) are shown in ``.status``, never
    raised. ``.meter`` is a :class:`CreditMeter` of the same client, beside the button.
    ``start`` and ``end`` fix the range of days (as in :func:`~storeframes.benchmarks_frame`;
    by default the 30 days up to yesterday): give the range a notebook already fetched and
    the explorer draws from the cache.

    Shown in a notebook, the explorer's widget holds the controls and the messages, and
    the chart is the next output, an ordinary PNG replaced in place at each redraw (a
    line of text when there is no chart): a saved notebook shows the last chart, with or
    without widget state. Placed in another box, the chart is in the widget (``.chart``,
    or ``.note`` when there is none).

    >>> import storeframes as sf
    >>> client = sf.sandbox.client(budget=5_000, progress=False)
    >>> explorer = BenchmarkExplorer(client, countries=["us", "gb"])
    >>> explorer.cost.value
    'us · iphone · free · all: not cached: 1 request, at most 1,001 credits'
    >>> explorer.fetch_button.description, client.requests_sent
    ('Fetch: up to 1,001 credits', 0)
    >>> explorer.fetch_button.click()
    >>> explorer.cost.value, client.requests_sent
    ('us · iphone · free · all: cached: draws at once, 0 credits', 1)
    >>> explorer.device.value = "android"
    >>> explorer.channel.options
    ('all', 'search', 'explore', 'referrals')
    >>> explorer.close(); client.close()
    """

    def __init__(
        self,
        client: Client | None = None,
        *,
        countries: str | Sequence[str] = ("us", "gb", "de", "fr", "jp"),
        confirm_above: int = 0,
        rate: str = "page_views_to_installs",
        highlight: str | None = None,
        start: str | date | None = None,
        end: str | date | None = None,
        **kwargs: Any,
    ):
        codes = _texts(countries)
        if not codes:
            raise InvalidParameterError("countries", countries, "at least one country code", endpoint="widgets")
        for code in codes:
            catalog.validate("benchmarks", country=code)
        codes = list(dict.fromkeys(c.strip().lower() for c in codes))
        if not isinstance(confirm_above, int) or isinstance(confirm_above, bool) or confirm_above < 0:
            raise InvalidParameterError(
                "confirm_above", confirm_above, "a whole number of credits >= 0", endpoint="widgets"
            )
        rates = [value for _, value in RATES]
        if rate not in rates:
            raise InvalidParameterError("rate", rate, f"one of {', '.join(rates)}", endpoint="widgets")
        if highlight is not None and not isinstance(highlight, str):
            raise InvalidParameterError("highlight", highlight, "a category code or name, or None", endpoint="widgets")

        self.client = client if client is not None else default_client()
        self.confirm_above = confirm_above
        # start= and end= of benchmarks_frame, as given: keyword arguments of plan, never its refresh=
        self._range: dict[str, Any] = {k: v for k, v in (("start", start), ("end", end)) if v is not None}
        if self._range:  # refused here, in plain words, rather than in every plan
            self.client.plan("benchmarks_frame", countries=codes[0], **self._range)
        self.plan: Plan | None = None
        """The plan of the current selection (None when it was refused)."""
        self.frame: pl.DataFrame | None = None
        self.figure: Figure | None = None
        self._kept: dict[tuple[Any, ...], pl.DataFrame] = {}  # frames drawn before, by selection
        self._wanted_highlight = highlight  # the category to highlight (a code or name), kept across selections
        self._highlight_label = highlight
        self._quiet = 0

        self._start_chart()
        devices = _device_choices()
        self.country = widgets.Dropdown(options=codes, value=codes[0], description="Country", style=_WIDE)
        self.device = widgets.Dropdown(options=devices, value=devices[0], description="Device", style=_WIDE)
        self.type = widgets.Dropdown(options=_type_choices(), description="Type", style=_WIDE)
        channels = catalog.CHANNELS[self.device.value]
        self.channel = widgets.Dropdown(options=channels, value=channels[0], description="Channel", style=_WIDE)
        self.rate = widgets.Dropdown(
            options=RATES, value=rate, description="Rate", style=_WIDE, layout=widgets.Layout(width="auto")
        )
        self.highlight = widgets.Dropdown(
            options=[("(none)", None)],
            value=None,
            description="Highlight",
            style=_WIDE,
            layout=widgets.Layout(width="auto", min_width="20em"),
        )
        self.cost = widgets.HTML()
        self.fetch_button = widgets.Button(
            description="Fetch", disabled=True, icon="download", layout=widgets.Layout(width="auto")
        )
        self.status = widgets.HTML()
        self.meter = CreditMeter(self.client)
        wrap = {"flex_flow": "row wrap", "align_items": "center"}
        self._rows = [
            widgets.HBox([self.country, self.device], layout=widgets.Layout(**wrap)),
            widgets.HBox([self.type, self.channel], layout=widgets.Layout(**wrap)),
            widgets.HBox([self.rate, self.highlight], layout=widgets.Layout(**wrap)),
            widgets.HBox([self.fetch_button, self.meter], layout=widgets.Layout(**wrap)),
        ]
        super().__init__([*self._rows[:3], self.cost, self._rows[3], self.status, self._chart_area], **kwargs)
        self._owned = [
            self.country,
            self.device,
            self.type,
            self.channel,
            self.rate,
            self.highlight,
            self.cost,
            self.fetch_button,
            self.status,
            self.chart,
            self.note,
            self._chart_area,
            *self._rows,
        ]

        self.device.observe(self._on_device, names="value")
        for control in (self.country, self.type, self.channel):
            control.observe(self._on_selection, names="value")
        self.rate.observe(self._on_look, names="value")
        self.highlight.observe(self._on_highlight, names="value")
        self.fetch_button.on_click(self._on_click)
        self._on_selection({})

    # -- the selection ----------------------------------------------------------

    @property
    def params(self) -> dict[str, Any]:
        """The arguments of :meth:`Client.benchmarks_frame` for the current selection."""
        return {
            "countries": self.country.value,
            "device": self.device.value,
            "type": self.type.value,
            "channels": self.channel.value,
            **self._range,
        }

    def _where(self) -> str:
        return " · ".join(str(v) for v in self.params.values())

    def _key(self) -> tuple[Any, ...]:
        return tuple(sorted((k, str(v)) for k, v in self.params.items()))

    def _on_device(self, change: Mapping[str, Any]) -> None:
        channels = catalog.CHANNELS[change["new"]]
        keep = self.channel.value if self.channel.value in channels else channels[0]
        self._quiet += 1
        try:
            self.channel.options = channels
            self.channel.value = keep
        finally:
            self._quiet -= 1
        self._on_selection(change)

    def _on_selection(self, change: Mapping[str, Any]) -> None:
        if self._quiet:
            return
        try:
            self._selection_changed()
        except Exception as exc:  # a control must never raise into the notebook
            self.status.value = self._say(f"Something went wrong: {type(exc).__name__}: {exc}")
            self._show_note("No chart: something went wrong (see the message above).")

    def _selection_changed(self) -> None:
        self.frame = None
        self.figure = None
        self._set_highlights(None)
        if not self._update_plan():
            self._show_note(f"No chart: {self._where()} cannot be fetched.")
            return
        assert self.plan is not None
        kept = self._kept.get(self._key())
        if kept is not None:
            self._use(kept, "drawn before in this explorer: no call, 0 credits")
        elif self.plan.cached or self.plan.estimate <= self.confirm_above:
            self._fetch()
        else:
            self.status.value = self._say(
                f"Not fetched yet: click the button to spend up to {self.plan.estimate:,} credits."
            )
            self._show_note(f"No chart yet: {self._where()} is not fetched.")

    def _update_plan(self) -> bool:
        """Work out the current selection's plan and show it; False when it was refused."""
        try:
            self.plan = self.client.plan("benchmarks_frame", **self.params)
        except StoreframesError as exc:
            self.plan = None
            self.cost.value = self._say(f"{self._where()}: cannot be fetched")
            self.status.value = self._describe(exc)
            self._offer(None)
            return False
        plan = self.plan
        if plan.cached:
            line = "cached: draws at once, 0 credits"
        else:
            line = f"not cached: {plural(plan.to_send, 'request')}, at most {plan.estimate:,} credits"
            budget = self.client.budget
            if budget is not None and self.client.spent + plan.estimate > budget:
                left = max(budget - self.client.spent, 0)
                line += f" (more than the {left:,} left in the budget)"
        self.cost.value = self._say(f"{self._where()}: {line}")
        self._offer(None if plan.cached else plan.estimate)
        return True

    def _offer(self, estimate: int | None) -> None:
        if estimate is None:
            self.fetch_button.disabled = True
            self.fetch_button.description = "Cached" if self.plan is not None else "Fetch"
        else:
            self.fetch_button.disabled = False
            self.fetch_button.description = f"Fetch: up to {estimate:,} credits"

    def _on_click(self, button: widgets.Button) -> None:
        if button.disabled or self.plan is None:
            return
        try:
            self._fetch()
        except Exception as exc:  # a button must never raise into the notebook
            self.status.value = self._say(f"Something went wrong: {type(exc).__name__}: {exc}")

    def _fetch(self) -> None:
        spent = self.client.spent
        try:
            frame = self.client.benchmarks_frame(**self.params)
        except StoreframesError as exc:
            self.status.value = self._describe(exc)
            self._update_plan()
            self._show_note(f"No chart: {self._where()} was not fetched.")
            return
        cost = self.client.spent - spent
        self._update_plan()
        self._use(frame, "from the cache, 0 credits" if cost == 0 else f"fetched for {cost:,} credits")

    def _use(self, frame: pl.DataFrame, how: str) -> None:
        """Show a selection's frame: its categories, the highlight kept if it has it, the chart."""
        self.frame = frame
        self._kept.pop(self._key(), None)
        self._kept[self._key()] = frame
        while len(self._kept) > _KEPT_FRAMES:
            self._kept.pop(next(iter(self._kept)))
        missing = self._set_highlights(frame)
        if frame.height == 0:
            self.status.value = self._say(f"No benchmarks for {self._where()} ({how}).")
            self._show_note(f"No chart: the service has no benchmarks for {self._where()}.")
            return
        categories = frame["category"].n_unique()
        note = f" {missing} is not among these categories: nothing is highlighted." if missing else ""
        self.status.value = self._say(f"{plural(categories, 'category', 'categories')} ({how}).{note}")
        self._draw()

    # -- drawing ------------------------------------------------------------------

    def _on_look(self, change: Mapping[str, Any]) -> None:
        if self._quiet:
            return
        try:
            self._draw()
        except Exception as exc:  # a control must never raise into the notebook
            self.status.value = self._say(f"Could not draw the chart: {type(exc).__name__}: {exc}")

    def _on_highlight(self, change: Mapping[str, Any]) -> None:
        if self._quiet:
            return
        self._wanted_highlight = change["new"]  # chosen by hand: kept until another choice
        self._highlight_label = next((label for label, code in self.highlight.options if code == change["new"]), None)
        self._on_look(change)

    def redraw(self) -> None:
        """Draw the fetched frame again with the chosen rate and highlight (nothing is fetched)."""
        self._draw()

    def _draw(self) -> None:
        if self.frame is None or self.frame.height == 0:
            self.figure = None
            return
        rate = self.rate.value
        values = self.frame[rate].cast(pl.Float64).fill_nan(None)
        if values.null_count() == self.frame.height:
            self.figure = None
            label = dict((value, name) for name, value in RATES)[rate]
            self._show_note(f"No data: the service gives no {label} rate for any category of {self._where()}.")
            return
        self.figure = plots.benchmark_chart(self.frame, rate=rate, highlight=self.highlight.value)
        text = f"Conversion benchmarks, {self._where()}: {plural(self.frame['category'].n_unique(), 'category', 'categories')}"
        self._show_png(plots.figure_png(self.figure), text)

    def _set_highlights(self, frame: pl.DataFrame | None) -> str | None:
        """Fill the highlight choices from a frame's categories, keeping the chosen category when it has it.

        Returns the chosen category's name when the frame lacks it (None otherwise). Before
        a frame is fetched the choice stays in the box, so it never goes blank.
        """
        options: list[tuple[str, str | None]] = [("(none)", None)]
        wanted = self._wanted_highlight
        value = None
        missing = None
        if frame is not None and frame.height:
            cats = (
                frame.select(pl.col("category").cast(pl.String), pl.col("category_name").cast(pl.String))
                .unique()
                .drop_nulls("category")
                .sort(pl.col("category_name").fill_null(pl.col("category")).str.to_lowercase(), "category")
            )
            for code, name in cats.iter_rows():
                label = f"{name} ({code})" if name else code
                options.append((label, code))
                if wanted is not None and wanted.strip().lower() in (code.lower(), (name or "").strip().lower()):
                    value, self._highlight_label = code, label
            if wanted is not None and value is None:
                missing = self._highlight_label or wanted
        elif wanted is not None:
            options.append((self._highlight_label or wanted, wanted))
            value = wanted
        self._quiet += 1
        try:
            self.highlight.options = options
            self.highlight.value = value
        finally:
            self._quiet -= 1
        return missing

    # -- messages -----------------------------------------------------------------

    def _say(self, text: str) -> str:
        """Plain text as HTML, with the token scrubbed (the client's messages never hold it)."""
        scrub = getattr(self.client, "_scrub", None)
        return html.escape(scrub(text) if callable(scrub) else text)

    def _describe(self, exc: StoreframesError) -> str:
        """An error in plain words, as HTML."""
        if isinstance(exc, BudgetExceededError):
            left = max(exc.budget - exc.spent - exc.reserved, 0)
            text = (
                f"Not fetched: this could cost up to {exc.estimate:,} credits and the budget has {left:,} left "
                f"({exc.spent:,} of {exc.budget:,} spent). Nothing was sent; raise the client's budget to fetch it."
            )
        elif isinstance(exc, NotCachedError):
            text = (
                f"Not in the cache, and this client may not fetch (offline): {plural(len(exc.requests), 'request')} "
                f"of at most {exc.estimate:,} credits would be needed. Nothing was sent."
            )
        elif isinstance(exc, InvalidParameterError):
            text = f"This selection is refused before sending anything: {exc}"
        elif isinstance(exc, AuthenticationError):
            text = "The service refused the token (401): check $STOREFRAMES_API_KEY."
        elif isinstance(exc, NotEnoughCreditsError):
            text = f"The account has not enough credits left for this request (the service said: {exc.message})."
        elif isinstance(exc, ApiError):
            text = (
                f"The service answered with an error ({exc.status}{' ' + exc.code if exc.code else ''}): {exc.message}"
            )
        elif isinstance(exc, TransportError):
            text = f"Could not reach the service: {exc}"
        else:
            text = f"Could not fetch: {exc}"
        return self._say(text)

    def close(self) -> None:
        """Close the credit meter, the controls and the chart."""
        meter = getattr(self, "meter", None)
        if meter is not None:
            meter.close()
        _close_widgets(getattr(self, "_owned", ()))
        _close_parts(self)
        super().close()
