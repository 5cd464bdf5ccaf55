"""What the widgets share: a box that also writes an ordinary output of what it shows, the chart area, closing.

The package (:mod:`storeframes.widgets`) says what to install when ipywidgets or
matplotlib is missing before this module is imported.
"""

from __future__ import annotations

import base64
import html
import threading
import uuid
from collections.abc import Iterable
from typing import Any, cast

import ipywidgets as widgets
import polars as pl

from ..plots.common import Chart
from ..ranks import polars_frame

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
    return polars_frame(value, name, "widgets", what)  # as rank_history and the charts read frames


def _note(text: str) -> dict[str, str]:
    """A one-line message as an output's data: HTML and plain text."""
    return {"text/html": f"<p><em>{html.escape(text)}</em></p>", "text/plain": text}


class _Mirrored(widgets.Box):
    """A box that, shown in IPython, also writes a plain output holding its current content.

    ``_ipython_display_`` shows the widget's view (unless :meth:`_with_view` says not to)
    and then ordinary display outputs, each with a ``display_id``; every :meth:`_publish`
    replaces their data with :meth:`_outputs` (one output, :meth:`_content`, unless a
    widget says more), so the notebook file always holds the last content, readable
    without the widget. An output whose data did not change is not sent again. Updates
    may come from any thread: one lock keeps them in order.
    """

    def _start_mirror(self) -> None:
        self._display_ids: list[list[str]] = []  # one list a display: an id an output
        self._sent: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
        self._mirror_lock = threading.RLock()

    def _content(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The output's data and metadata (by mimetype)."""
        raise NotImplementedError

    def _outputs(self) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """Every output's data and metadata, top to bottom (an output can show one mimetype only)."""
        return [self._content()]

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
        with self._mirror_lock:
            self._mirroring()
            shown = []
            for data, metadata in self._outputs():
                display_id = f"storeframes-{type(self).__name__}-{uuid.uuid4().hex}"
                display.display(data, raw=True, metadata=metadata, display_id=display_id)
                self._sent[display_id] = (data, metadata)
                shown.append(display_id)
            self._display_ids.append(shown)

    def _publish(self) -> None:
        """Show the current content in every output this widget wrote (none outside IPython)."""
        if not getattr(self, "_display_ids", None):
            return
        from IPython import display

        with self._mirror_lock:
            outputs = self._outputs()
            for shown in self._display_ids:
                for display_id, (data, metadata) in zip(shown, outputs, strict=True):
                    if self._sent.get(display_id) != (data, metadata):
                        display.update_display(data, display_id=display_id, raw=True, metadata=metadata)
                        self._sent[display_id] = (data, metadata)


class _Charted(_Mirrored):
    """An explorer: controls in the widget, the chart (or a line saying why there is none) in an output.

    Outside an output, ``.chart`` (an ``Image``) and ``.note`` (the message shown instead of
    an empty image) sit in the widget's chart area; once the explorer is shown in IPython that
    area is hidden and the output holds the chart: an HTML ``<img>`` whose ``alt`` says what the
    chart shows (the explorer's ``figure``'s :attr:`~storeframes.plots.common.Chart.alt`), with
    the PNG beside it for the renderers that show images only. In both places a window narrower than the
    chart shrinks it to the cell's width, as a static matplotlib chart is: none of it is hidden
    off the right edge. The PNG keeps its size, so a wider window shows it pixel for pixel.
    """

    def _start_chart(self) -> None:
        self._start_mirror()
        self._png = b""
        self._text = ""
        self._html = ""
        self._alt = ""
        # at most as wide as the chart area (no margin to stick out of it): shrunk to the width, never cut
        fitted = widgets.Layout(max_width="100%", height="auto", margin="0", display="none")
        self.chart = widgets.Image(format="png", value=b"", layout=fitted)
        self.note = widgets.HTML()
        self._chart_area = widgets.Box([self.chart, self.note], layout=widgets.Layout(width="100%"))

    @property
    def png(self) -> bytes:
        """The chart as PNG (empty when there is none)."""
        return self._png

    def _show_png(self, png: bytes, text: str, hover: str = "") -> None:
        """Show a chart: its PNG, its text, and (``hover``) the same chart as HTML with hover details, which the
        output shows where HTML is shown (the PNG stays beside it for a reader that shows none)."""
        figure = getattr(self, "figure", None)  # the explorer's chart, drawn before its PNG
        self._png, self._text, self._html = png, text, hover
        self._alt = figure.alt if isinstance(figure, Chart) else text
        self.chart.value = png
        self.chart.layout.display = None
        self.note.value = ""
        self.note.layout.display = "none"
        self._publish()

    def _show_note(self, text: str) -> None:
        self._png, self._text, self._html = b"", text, ""
        self.chart.value = b""
        self.chart.layout.display = "none"
        self.note.value = _note(text)["text/html"]
        self.note.layout.display = None
        self._publish()

    def _content(self) -> tuple[dict[str, Any], dict[str, Any]]:
        if not self._png:
            return _note(self._text), {}
        encoded = base64.b64encode(self._png).decode("ascii")
        image = self._html or (
            f'<img src="data:image/png;base64,{encoded}" alt="{html.escape(self._alt, quote=True)}" '
            'style="max-width:100%;height:auto">'
        )
        data = {"text/html": image, "image/png": encoded, "text/plain": self._text}
        return data, {}  # not "unconfined": a narrow cell shrinks the image to its width

    def _view_text(self) -> str:
        return (
            f"{type(self).__name__} controls (they work while the notebook's kernel runs; the chart is the next output)"
        )

    def _mirroring(self) -> None:
        self._chart_area.layout.display = "none"
