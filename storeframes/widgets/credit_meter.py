"""The credit meter: credits spent and saved in this session against the client's budget, live.

The package (:mod:`storeframes.widgets`) says what to install when ipywidgets or
matplotlib is missing before this module is imported.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Mapping
from typing import Any

import ipywidgets as widgets

from ..client import Client
from ..defaults import default_client
from ..errors import plural
from .base import _close_parts, _close_widgets, _Mirrored


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
