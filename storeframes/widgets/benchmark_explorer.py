"""The benchmark explorer: pick a country, device, type and channel, see the categories' conversion rates.

The package (:mod:`storeframes.widgets`) says what to install when ipywidgets or
matplotlib is missing before this module is imported.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

import ipywidgets as widgets
import polars as pl
from matplotlib.figure import Figure

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
from ..plots.benchmark_charts import RATE_LABELS, benchmark_chart
from ..plots.common import figure_png
from .base import _WIDE, _Charted, _close_parts, _close_widgets
from .credit_meter import CreditMeter

RATES: tuple[tuple[str, str], ...] = tuple((label.split(" (")[0], rate) for rate, label in RATE_LABELS.items())
"""The rate columns of a benchmarks frame, with their labels."""

_KEPT_FRAMES = 64  # the benchmark frames an explorer keeps, so flipping back sends nothing


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
    wherever the new selection has it; where it has not, the Highlight box says "(none)"
    and ``.status`` says why. ``.status`` names the highlighted category. When every
    category lacks the chosen rate, one line says so instead of a chart. Errors (budget,
    offline, refused parameters, the service's errors) are shown in ``.status``, never
    raised. ``.meter`` is a :class:`CreditMeter` of the same client, beside the button.
    ``start`` and ``end`` fix the range of days (as in :func:`~storeframes.benchmarks_frame`;
    by default the 30 days up to yesterday): give the range a notebook already fetched and
    the explorer draws from the cache.

    Shown in a notebook, the explorer's widget holds the controls, and two ordinary
    outputs below it, replaced in place, hold the rest: first the cost line, the credit
    meter's line and the status line (HTML and plain text), then the chart as a PNG (a
    line of text when there is no chart). A notebook saved and reopened after its kernel
    stopped shows them, with or without widget state. Placed in another box, all of it is
    in the widget (the chart in ``.chart``, or ``.note`` when there is none).

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
        self._told: str | None = None  # the status of the frame drawn, before what is highlighted
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
        for line in (self.cost, self.status, self.meter.label):
            line.observe(self._on_line, names="value")
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
        """The selection in words: ``us · iphone · free · all · 2026-10-01 to 2026-10-31`` (the days a range)."""
        chosen = [str(v) for k, v in self.params.items() if k not in ("start", "end")]
        start, end = self._range.get("start"), self._range.get("end")
        if start is not None and end is not None:
            chosen.append(f"{start} to {end}")
        elif start is not None:
            chosen.append(f"from {start}")
        elif end is not None:
            chosen.append(f"up to {end}")
        return " · ".join(chosen)

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
        self._told = None
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
        self._set_highlights(frame)
        if frame.height == 0:
            self._told = None
            self.status.value = self._say(f"No benchmarks for {self._where()} ({how}).")
            self._show_note(f"No chart: the service has no benchmarks for {self._where()}.")
            return
        self._told = f"{plural(frame['category'].n_unique(), 'category', 'categories')} ({how})."
        self._tell()
        self._draw()

    def _tell(self) -> None:
        """The status of a drawn selection: its categories, how they came, and what is highlighted."""
        if self._told is None:
            return
        wanted, label = self._wanted_highlight, self._highlight_label or self._wanted_highlight
        if self.highlight.value is not None:
            note = f" {label} is highlighted."
        elif wanted is not None:
            note = f" {label} is not among these categories: nothing is highlighted."
        else:
            note = ""
        self.status.value = self._say(self._told + note)

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
        if self.highlight.index is None:  # value None unselects: show the "(none)" option instead of a blank box
            self._quiet += 1
            try:
                self.highlight.index = 0
            finally:
                self._quiet -= 1
        self._wanted_highlight = change["new"]  # chosen by hand: kept until another choice
        self._highlight_label = next((label for label, code in self.highlight.options if code == change["new"]), None)
        self._tell()
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
        self.figure = benchmark_chart(self.frame, rate=rate, highlight=self.highlight.value)
        text = f"Conversion benchmarks, {self._where()}: {plural(self.frame['category'].n_unique(), 'category', 'categories')}"
        self._show_png(figure_png(self.figure), text)

    def _set_highlights(self, frame: pl.DataFrame | None) -> None:
        """Fill the highlight choices from a frame's categories, keeping the chosen category when it has it.

        When the frame lacks it the box says "(none)" (:meth:`_tell` says why). Before a
        frame is fetched the choice stays in the box. The box is never blank.
        """
        options: list[tuple[str, str | None]] = [("(none)", None)]
        wanted = self._wanted_highlight
        value = None
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
        elif wanted is not None:
            options.append((self._highlight_label or wanted, wanted))
            value = wanted
        self._quiet += 1
        try:
            self.highlight.options = options
            # by index: a value of None would unselect every option (a blank box), not pick "(none)"
            self.highlight.index = [code for _, code in options].index(value)
        finally:
            self._quiet -= 1

    # -- what a notebook keeps --------------------------------------------------

    def _on_line(self, change: Mapping[str, Any]) -> None:
        self._publish()  # the cost, the meter (on any thread) or the status changed

    def _lines(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The cost line, the credit meter's line and the status line, as HTML and plain text."""
        meter, _ = self.meter._content()
        cost, status = self.cost.value, self.status.value  # escaped text (see _say)
        text = "\n".join(line for line in (html.unescape(cost), self.meter.text, html.unescape(status)) if line)
        parts = [f"<div>{cost}</div>" if cost else "", meter["text/html"], f"<div>{status}</div>" if status else ""]
        return {"text/html": f'<div class="storeframes-explorer">{"".join(parts)}</div>', "text/plain": text}, {}

    def _outputs(self) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        return [self._lines(), self._content()]

    def _view_text(self) -> str:
        return (
            "BenchmarkExplorer controls (they work while the notebook's kernel runs; "
            "the cost, credits and status are the next output, then the chart)"
        )

    def _mirroring(self) -> None:
        super()._mirroring()
        for item in (self.cost, self.status, self.meter):  # shown in the outputs, never twice
            item.layout.display = "none"

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
