"""A frame as a notebook table whose dates never break across two lines.

Polars draws a frame in a notebook as an HTML table whose cells wrap (``white-space: pre-wrap``):
beside a long title a date column narrows, and ``2026-11-18`` reads ``2026-11-`` over ``18``.
:func:`table` shows the same table, polars' own (its settings, ``pl.Config``, hold: rows, string
lengths), with every date kept on one line: the cells of a date or datetime column, and any cell
whose whole text is a date (a transposed frame's ``"2026-11-18"``), get ``white-space:nowrap``
inline, which survives a notebook's sanitizer and a page built from it. Other cells wrap as before.
It needs neither ipywidgets nor matplotlib.

>>> import polars as pl
>>> from datetime import date
>>> shown = table(pl.DataFrame({"date": [date(2026, 11, 18)], "title": ["Photo Editor Plus"]}))
>>> '<td style="white-space:nowrap">2026-11-18</td>' in shown._repr_html_()
True
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

import polars as pl

from .._tracebacks import user_facing
from ..ranks import polars_frame

__all__ = ["Table", "table"]

NOWRAP = ' style="white-space:nowrap"'
"""The attribute a date's cell gets."""
_TIME_TYPES = re.compile(r"^(date|datetime|time|duration)\b")
"""A column's type as polars writes it under its name (``date``, ``datetime[μs, UTC]``)."""
_DATE_TEXT = re.compile(r"^(&quot;|\")?\d{4}-\d{2}-\d{2}([ T][\d:.+\-]+( UTC)?)?(&quot;|\")?$")
"""A cell whose whole text is a date or a timestamp, quoted (a string column) or not."""
_SECTION = re.compile(r"(<(thead|tbody)>)(.*?)(</\2>)", re.DOTALL)
_ROW = re.compile(r"<tr>(.*?)</tr>", re.DOTALL)
_CELL = re.compile(r"<(td|th)>(.*?)</\1>", re.DOTALL)


@dataclass(frozen=True, repr=False)
class Table:
    """A frame shown as polars shows it, its dates on one line: ``frame`` is the frame, unchanged."""

    frame: pl.DataFrame

    def _repr_html_(self) -> str:
        return nowrap_dates(self.frame._repr_html_())

    def __repr__(self) -> str:
        return repr(self.frame)


@user_facing
def table(frame: pl.DataFrame | Any) -> Table:
    """``frame`` (polars or pandas) as a notebook table whose dates never wrap: what a cell shows.

    The table is polars' own HTML (its ``pl.Config`` settings hold when it is shown), with every
    date on one line: the cells of a date, datetime, time or duration column and any cell whose
    whole text is a date (``2026-11-18``, quoted or not) get ``style="white-space:nowrap"``.
    ``table(frame).frame`` is the frame; as text, it reads as the frame does.

    >>> import polars as pl
    >>> table(pl.DataFrame({"app_id": ["1"], "title": ["Maps"]})).frame.columns
    ['app_id', 'title']
    """
    return Table(polars_frame(frame, "frame", "table", "a polars or pandas DataFrame"))


def nowrap_dates(html: str) -> str:
    """Polars' HTML of a frame with each date's cell kept on one line (see :func:`table`).

    >>> nowrap_dates("<table><thead><tr><th>day</th></tr><tr><td>date</td></tr></thead>"
    ...              "<tbody><tr><td>2026-11-18</td></tr></tbody></table>")
    '<table><thead><tr><th style="white-space:nowrap">day</th></tr><tr><td style="white-space:nowrap">date</td></tr></thead><tbody><tr><td style="white-space:nowrap">2026-11-18</td></tr></tbody></table>'
    """
    heads = _SECTION.findall(html)
    types = []
    for _, name, body, _ in heads:
        rows = _ROW.findall(body) if name == "thead" else []
        if len(rows) > 1:  # the names, then the types
            types = [text.strip() for _, text in _CELL.findall(rows[-1])]
    dated = {n for n, text in enumerate(types) if _TIME_TYPES.match(text)}

    def row(found: re.Match[str]) -> str:
        cells = itertools.count()

        def cell(match: re.Match[str]) -> str:
            n, (tag, text) = next(cells), match.groups()
            keep = n in dated or _DATE_TEXT.match(text.strip()) is not None
            return f"<{tag}{NOWRAP}>{text}</{tag}>" if keep else match[0]

        return "<tr>" + _CELL.sub(cell, found[1]) + "</tr>"

    def section(found: re.Match[str]) -> str:
        return found[1] + _ROW.sub(row, found[3]) + found[4]

    return _SECTION.sub(section, html)
