"""The digest's event tables: a period's alert events grouped by rule, the anomalies first, as HTML and Markdown.

Each group is a table of its events by day (day, app, keyword, place, what changed, the event in
words). What changed is the rank before and after for a rank event, and for a listing change what
:func:`~storeframes.track.change_words.describe_change` says (the screenshots added and removed, a
text's words, a price with its currency). Every text from elsewhere (app names, details, values) is
escaped; no "http" is left spelled in the HTML, so nothing in it reads as a link.

>>> rows = pl.DataFrame({"rule": ["top", "anomaly"]})
>>> [rule for rule, _ in event_groups(rows.with_columns(day=pl.lit(None, pl.Date)))]
['anomaly', 'top']
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import polars as pl

from ..texts import html_text
from ..texts import markdown_text as _md
from .change_words import describe_change, image_name
from .digest_charts import SERIES
from .rules import RULE_HEADINGS, RULES

__all__ = ["DIGEST_ORDER", "NONE", "event_groups", "heading", "html_table", "html_text", "markdown_table"]

DIGEST_ORDER = ("anomaly", *(rule for rule in RULES if rule != "anomaly"))
"""The rules in the order a digest shows their events: the anomalies (with their likely causes) first."""

NONE = "—"
"""What a cell holds when its value is missing."""

_HEADER = ("Day", "App", "Keyword", "Country/device", "Change", "Detail")
_SIDE = 60
"""Characters of a value shown before or after a change that is no listing change (a longer one is cut at a word)."""


def event_groups(events: pl.DataFrame) -> list[tuple[str | None, pl.DataFrame]]:
    """The events by rule, the rules in :data:`DIGEST_ORDER` (others after them, by name), each group's rows by
    day, app, keyword and place."""
    present = set(events["rule"].to_list())
    rules: list[str | None] = [r for r in DIGEST_ORDER if r in present]
    rules += sorted((r for r in present if r not in RULE_HEADINGS), key=lambda r: (r is None, r or ""))
    order = [*SERIES, "target", "event_id"]
    existing = [c for c in order if c in events.columns]
    return [
        (rule, events.filter(pl.col("rule").eq_missing(rule)).sort(["day", *existing], nulls_last=True))
        for rule in rules
    ]


def heading(rule: str | None) -> str:
    """A group's heading: the rule's (``Rank anomalies``), or the rule's own name for one the digest does not know.

    >>> heading("anomaly"), heading(None)
    ('Rank anomalies', 'Events without a rule')
    """
    return RULE_HEADINGS.get(rule or "", rule or "Events without a rule")


def _place(row: Mapping[str, Any]) -> str:
    return "/".join(str(row[c]) for c in ("country", "device") if row[c] is not None) or NONE


def _side(value: str | None) -> str | None:
    """A rank, a share or a value of another rule, short enough for a table cell: an address by its file name, a
    long text cut at a word."""
    if value is None:
        return None
    if "://" in value and " " not in value:
        return image_name(value)
    text = " ".join(value.split())
    if len(text) <= _SIDE:
        return text
    cut = text[: _SIDE - 1]
    if text[_SIDE - 1] != " " and " " in cut:  # not inside a word
        cut = cut[: cut.rfind(" ")]
    return cut + "…"


def _change(row: Mapping[str, Any], currencies: Mapping[str, str]) -> tuple[str | None, str]:
    """A row's target (or None) and what changed: a listing change described, else the value before → after."""
    target = row["target"]
    if row["rule"] == "listing_change":
        currency = currencies.get(row["country"] or "")
        return target, describe_change(target, row["before"], row["after"], currency=currency)
    sides = [_side(row[c]) for c in ("before", "after")]
    return target, " → ".join(v if v is not None else NONE for v in sides)


def html_table(rows: pl.DataFrame, names: Mapping[str, str], currencies: Mapping[str, str]) -> str:
    """A group's events as an HTML table, in a wrapper that scrolls sideways on its own when the page is narrower
    (a phone reflows its rows instead, by the page's style)."""
    head = "".join(f'<th scope="col">{html.escape(h)}</th>' for h in _HEADER)
    out = ['<div class="scroll"><table class="events">', f"<thead><tr>{head}</tr></thead><tbody>"]
    none = f'<span class="none">{NONE}</span>'
    for row in rows.iter_rows(named=True):
        app = row["app_id"]
        if app is None:
            app_cell = none
        elif app in names:
            app_cell = f'{html_text(names[app])} <span class="id">{html_text(app)}</span>'
        else:
            app_cell = html_text(app)
        keyword = html_text(row["keyword"]) if row["keyword"] is not None else none
        target, change = _change(row, currencies)
        change = html_text(change)
        if target is not None:
            change = f'<span class="target">{html_text(target)}</span>: {change}'
        out.append(
            f'<tr><td class="day">{row["day"]}</td><td class="app">{app_cell}</td>'
            f'<td class="keyword" data-label="Keyword">{keyword}</td>'
            f'<td class="place" data-label="Country/device">{html_text(_place(row))}</td>'
            f'<td class="change" data-label="Change">{change}</td>'
            f'<td class="detail">{html_text(row["detail"])}</td></tr>'
        )
    out.append("</tbody></table></div>")
    return "\n".join(out)


def markdown_table(rows: pl.DataFrame, names: Mapping[str, str], currencies: Mapping[str, str]) -> str:
    """A group's events as a Markdown table (every text escaped, so a ``|`` never ends a cell)."""
    out = ["| " + " | ".join(_HEADER) + " |", "|" + " --- |" * len(_HEADER)]
    for row in rows.iter_rows(named=True):
        app = row["app_id"]
        app_cell = NONE if app is None else f"{_md(names[app])} ({_md(app)})" if app in names else _md(app)
        target, change = _change(row, currencies)
        change = _md(change)
        if target is not None:
            change = f"**{_md(target)}**: {change}"
        cells = [
            str(row["day"]),
            app_cell,
            _md(row["keyword"]) if row["keyword"] is not None else NONE,
            _md(_place(row)),
            change,
            _md(row["detail"]),
        ]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)
