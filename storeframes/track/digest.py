"""A tracker's digest: a period's alert events and rank charts, as one HTML file and its Markdown twin.

:func:`render_digest` turns the events of a period (one row per event, grouped by the rule that
raised it) and the tracked ranks into a :class:`Digest`: a self-contained HTML page (inline CSS,
charts as inline PNG images, no script and no reference to anything outside the file) and the
same sections in Markdown, whose charts are PNG files beside it. :meth:`Digest.write` writes all
of them. The output depends only on the input: the same events and ranks give the same bytes.

>>> from datetime import date
>>> spend = Spend(month="2026-11", month_credits=120_000, budget_per_month=300_000, runs=5)
>>> digest = render_digest(pl.DataFrame(), pl.DataFrame(), tracker="photo-editors",
...                        start=date(2026, 11, 1), end=date(2026, 11, 5), spend=spend)
>>> "No events in this period." in digest.html and "120,000 of 300,000 credits (40%)" in digest.markdown
True
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import quote

import polars as pl

from ..analysis import STANDINGS_CSS, StandingsTable
from ..cache import EVENT_SCHEMA
from ..errors import InvalidParameterError, plural
from ..schemas import RANK_HISTORY
from ..texts import markdown_text as _md
from ..texts import plain as _plain
from .digest_charts import HTTP as _HTTP
from .digest_charts import SERIES as _SERIES
from .digest_charts import chart_title as _chart_title
from .digest_charts import charts as _charts
from .digest_charts import series_keys as _series_keys
from .rules import RULE_HEADINGS

__all__ = ["MAX_CHARTS", "Digest", "Spend", "render_digest"]

_HEADINGS = RULE_HEADINGS

MAX_CHARTS = 12
"""The most rank charts a digest holds (a line says how many were left out)."""

_FUNCTION = "render_digest"
_EVENT_COLUMNS = {
    name: EVENT_SCHEMA[name]
    for name in (
        "event_id",
        "rule",
        "day",
        "app_id",
        "keyword",
        "country",
        "language",
        "device",
        "target",
        "before",
        "after",
        "detail",
    )
}
_RANK_COLUMNS = {
    name: RANK_HISTORY.schema[name]
    for name in ("keyword", "app_id", "date", "rank", "status", "country", "language", "device")
}
_NONE = "—"
_CHART_LINK = re.compile(r"^(!\[[^\n]*\]\()(rank-\d+\.png)\)$", re.MULTILINE)

_CSS = (
    """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#222;margin:24px auto;max-width:1040px;padding:0 16px}
h1{font-size:22px;margin:0 0 6px}
h2{font-size:17px;margin:26px 0 8px;border-bottom:1px solid #ddd;padding-bottom:3px}
h2 .count{color:#777;font-weight:normal;font-size:14px}.spend{color:#444;margin:0 0 8px}.spend b{color:#222}
.bar{display:inline-block;width:120px;height:9px;background:#e6e6e6;border-radius:5px;vertical-align:middle;margin:0 4px;overflow:hidden}
.bar span{display:block;height:100%;background:#4a7fc1}.bar.high span{background:#e0a030}
.bar.over span{background:#c94040}table{border-collapse:collapse;width:100%;font-size:13px}
th,td{text-align:left;vertical-align:top;padding:4px 8px;border-bottom:1px solid #eee}
th{background:#f6f6f6;font-weight:600;white-space:nowrap}td.day,td.place{white-space:nowrap}
td.change{max-width:280px;overflow-wrap:anywhere}td.detail{overflow-wrap:anywhere;color:#444}
.missing{color:#8a4b00}.id{color:#888;font-size:12px}.target{font-weight:600}.none{color:#777}figure{margin:14px 0}
figure img{max-width:100%;border:1px solid #eee}.note{color:#666}
""".strip()
    + "\n"
    + STANDINGS_CSS
)


@dataclass(frozen=True)
class Spend:
    """What a tracker spent: in a calendar month (UTC), against its budget, and in a run or a period's runs.

    >>> Spend(month="2026-11", month_credits=41_200, budget_per_month=300_000, runs=30, runs_not_ok=2).runs
    30
    """

    month: str
    """The month, ``"2026-11"``."""
    month_credits: int
    """Credits spent in that calendar month (UTC)."""
    budget_per_month: int | None
    """The tracker's month budget; None when it has none."""
    run_credits: int | None = None
    """One run's spend; None for a digest of the day or a period (see :attr:`period_credits`)."""
    runs: int = 0
    """Finished runs in the period (a run still ``running`` is not counted here)."""
    runs_not_ok: int = 0
    """How many of them ended other than ``ok``."""
    period_credits: int | None = None
    """What every run of the period spent (from the run log), on every machine; None when not told."""
    runs_running: int = 0
    """Runs of the period whose row still reads ``running`` (running now, or killed)."""


@dataclass(frozen=True)
class Digest:
    """A rendered digest: the HTML page, its Markdown twin and the Markdown's chart images.

    The Markdown links its charts beside it (``![...](rank-1.png)``); :meth:`write` puts them in a
    folder beside the Markdown file and links them there.

    >>> Digest(html="<p>hi</p>", markdown="hi", images={}).images
    {}
    """

    html: str
    markdown: str
    images: Mapping[str, bytes] = field(repr=False)
    """The Markdown's charts: file name (``"rank-1.png"`` ...) to PNG bytes."""

    def write(self, path: str | os.PathLike[str]) -> list[Path]:
        """Write the HTML at ``path`` (``.html`` added when missing), the Markdown beside it (``.md``) and
        the Markdown's images in a folder ``<stem>_files/`` beside them, which the Markdown links relatively.

        Parent folders are made; each file is written whole under a temporary name, then renamed,
        so a reader never sees half a file. Returns the paths written: the HTML, the Markdown,
        then the images.

        >>> digest.write("digests/2026-11")  # doctest: +SKIP
        [PosixPath('digests/2026-11.html'), PosixPath('digests/2026-11.md'), PosixPath('digests/2026-11_files/rank-1.png')]
        """
        try:
            page = Path(path)
        except TypeError:
            raise InvalidParameterError(
                "path", path, "a file path (a text or a path)", endpoint="Digest.write"
            ) from None
        if page.name in ("", ".", ".."):
            raise InvalidParameterError("path", str(path), "a file path, not a folder", endpoint="Digest.write")
        if page.suffix.lower() != ".html":
            page = page.with_name(page.name + ".html")
        stem = page.name[: -len(".html")]
        folder = page.with_name(f"{stem}_files")
        link = quote(f"{stem}_files/")
        markdown = _CHART_LINK.sub(
            lambda m: f"{m.group(1)}{link}{m.group(2)})" if m.group(2) in self.images else m.group(0), self.markdown
        )
        written = [_write(page, self.html.encode()), _write(page.with_suffix(".md"), markdown.encode())]
        written += [_write(folder / name, data) for name, data in self.images.items()]
        return written


def _write(path: Path, data: bytes) -> Path:
    """Write ``data`` at ``path`` under a temporary name in its folder, then rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")  # made with the usual permissions
    try:
        scratch.write_bytes(data)
        os.replace(scratch, path)
    except BaseException:
        scratch.unlink(missing_ok=True)
        raise
    return path


# -- text ----------------------------------------------------------------------------------------------------


def _h(value: Any) -> str:
    """A value as HTML text: escaped, and any "http" left in words written with an entity, so none is read as a link."""
    return _HTTP.sub(lambda m: f"{m.group(0)[:2]}&#{ord(m.group(0)[2])};{m.group(0)[3]}", html.escape(_plain(value)))


def _share(spent: int, budget: int) -> float:
    return spent / budget if budget > 0 else 0.0


def _percent(share: float) -> str:
    return "under 1%" if 0 < share < 0.005 else f"{share:.0%}"


def _title(tracker: str, start: date, end: date) -> str:
    return f"{tracker} on {start}" if start == end else f"{tracker}: {start} to {end}"


def _spend_parts(spend: Spend, start: date, end: date) -> list[tuple[str, str]]:
    """The spend line's parts: (label, value) pairs, the same words in HTML and Markdown."""
    parts = []
    if spend.run_credits is not None:
        parts.append(("This run", f"{plural(spend.run_credits, 'credit')}"))
    if spend.period_credits is not None:
        when = f"on {start}" if start == end else f"from {start} to {end}"
        parts.append((f"Spent {when}", f"{plural(spend.period_credits, 'credit')} (every run)"))
    if spend.budget_per_month is None:
        parts.append((f"Spent in {spend.month}", f"{plural(spend.month_credits, 'credit')} (no month budget)"))
    else:
        share = _percent(_share(spend.month_credits, spend.budget_per_month))
        parts.append(
            (f"Spent in {spend.month}", f"{spend.month_credits:,} of {spend.budget_per_month:,} credits ({share})")
        )
    if spend.runs or spend.runs_running:
        running = f", {spend.runs_running:,} still running or killed" if spend.runs_running else ""
        parts.append(("Runs", f"{spend.runs:,} finished, {spend.runs_not_ok:,} not ok{running}"))
    return parts


def _bar(spend: Spend, *, markdown: bool) -> str:
    if spend.budget_per_month is None:
        return ""
    share = _share(spend.month_credits, spend.budget_per_month)
    if markdown:
        filled = min(10, round(share * 10))
        return f" `{'█' * filled}{'░' * (10 - filled)}`"
    level = " over" if share > 1 else " high" if share >= 0.8 else ""
    return f'<span class="bar{level}"><span style="width:{min(share, 1.0) * 100:.1f}%"></span></span>'


# -- events --------------------------------------------------------------------------------------------------


def _frame(value: Any, name: str, columns: Mapping[str, pl.DataType], what: str) -> pl.DataFrame:
    """``value``'s needed columns in their dtypes; an empty frame without columns stands for no rows."""
    if not isinstance(value, pl.DataFrame):
        raise InvalidParameterError(name, type(value).__name__, what, endpoint=_FUNCTION)
    if value.width == 0:
        return pl.DataFrame(schema=dict(columns))
    missing = [c for c in columns if c not in value.columns]
    if missing:
        raise InvalidParameterError(name, f"a frame without {', '.join(missing)}", what, endpoint=_FUNCTION)
    try:
        return value.select(pl.col(c).cast(t) for c, t in columns.items())
    except pl.exceptions.PolarsError:
        shown = ", ".join(f"{c} {value.schema[c]}" for c in columns)
        raise InvalidParameterError(name, f"a frame with {shown}", what, endpoint=_FUNCTION) from None


def _groups(events: pl.DataFrame) -> list[tuple[str, pl.DataFrame]]:
    """The events by rule, the rules in the digest's order, each group's rows by day, app, keyword and place."""
    known = list(_HEADINGS)
    rules = [r for r in known if r in set(events["rule"].to_list())]
    rules += sorted({r for r in events["rule"].to_list() if r not in _HEADINGS}, key=lambda r: (r is None, r or ""))
    order = [*_SERIES, "target", "event_id"]
    return [
        (rule, events.filter(pl.col("rule").eq_missing(rule)).sort(["day", *order], nulls_last=True)) for rule in rules
    ]


def _heading(rule: str | None) -> str:
    return _HEADINGS.get(rule or "", rule or "Events without a rule")


def _place(row: Mapping[str, Any]) -> str:
    return "/".join(str(row[c]) for c in ("country", "device") if row[c] is not None) or _NONE


_HEADER = ("Day", "App", "Keyword", "Country/device", "Before → after", "Detail")
_SIDE = 60
"""Characters of a value shown before or after a change (a description is cut, a list of screenshots counted)."""


def _side(row: Mapping[str, Any], column: str) -> str | None:
    """A value before or after a change, short enough for a table cell: screenshots counted, an address by
    its file name, a long text cut."""
    value = row[column]
    if value is None:
        return None
    if row.get("target") == "screenshots" and value.startswith("["):
        try:
            return f"{len(json.loads(value))} images"
        except ValueError:
            pass
    if "://" in value and " " not in value:
        value = value.rstrip("/").rsplit("/", 1)[-1]
    return value if len(value) <= _SIDE else value[: _SIDE - 1] + "…"


def _html_table(rows: pl.DataFrame, names: Mapping[str, str]) -> str:
    out = ["<table>", "<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in _HEADER) + "</tr>"]
    for row in rows.iter_rows(named=True):
        app = row["app_id"]
        if app is None:
            app_cell = f'<span class="none">{_NONE}</span>'
        elif app in names:
            app_cell = f'{_h(names[app])} <span class="id">{_h(app)}</span>'
        else:
            app_cell = _h(app)
        keyword = _h(row["keyword"]) if row["keyword"] is not None else f'<span class="none">{_NONE}</span>'
        shown = [_side(row, c) for c in ("before", "after")]
        sides = [_h(v) if v is not None else f'<span class="none">{_NONE}</span>' for v in shown]
        change = " → ".join(sides)
        if row["target"] is not None:
            change = f'<span class="target">{_h(row["target"])}</span>: {change}'
        out.append(
            f'<tr><td class="day">{row["day"]}</td><td>{app_cell}</td><td>{keyword}</td>'
            f'<td class="place">{_h(_place(row))}</td><td class="change">{change}</td>'
            f'<td class="detail">{_h(row["detail"])}</td></tr>'
        )
    out.append("</table>")
    return "\n".join(out)


def _md_table(rows: pl.DataFrame, names: Mapping[str, str]) -> str:
    out = ["| " + " | ".join(_HEADER) + " |", "|" + " --- |" * len(_HEADER)]
    for row in rows.iter_rows(named=True):
        app = row["app_id"]
        app_cell = _NONE if app is None else f"{_md(names[app])} ({_md(app)})" if app in names else _md(app)
        change = " → ".join(_md(v) if (v := _side(row, c)) is not None else _NONE for c in ("before", "after"))
        if row["target"] is not None:
            change = f"**{_md(row['target'])}**: {change}"
        cells = [
            str(row["day"]),
            app_cell,
            _md(row["keyword"]) if row["keyword"] is not None else _NONE,
            _md(_place(row)),
            change,
            _md(row["detail"]),
        ]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def _holes(not_fetched: Mapping[str, Sequence[date]], first: date, last: date) -> list[str]:
    """The "Not fetched" note: a first line, then a line per series with its days of the period in spans."""
    lines = []
    for series, days in not_fetched.items():
        within = sorted({d for d in days if first <= d <= last})
        spans: list[tuple[date, date]] = []
        for day in within:
            if spans and (day - spans[-1][1]).days == 1:
                spans[-1] = (spans[-1][0], day)
            else:
                spans.append((day, day))
        if spans:
            shown = ", ".join(str(a) if a == b else f"{a} to {b}" for a, b in spans)
            lines.append(f"{series}: {shown} ({plural(len(within), 'day')})")
    if not lines:
        return []
    head = "nothing is known of these days (a run over budget or failed, or no run): they are not days without data."
    return [head, *lines]


# -- charts --------------------------------------------------------------------------------------------------


def _day(name: str, value: Any) -> date:
    if isinstance(value, date):
        return value
    raise InvalidParameterError(name, value, "a date (datetime.date)", endpoint=_FUNCTION)


def render_digest(
    events: pl.DataFrame,
    ranks: pl.DataFrame,
    *,
    tracker: str,
    start: date,
    end: date,
    spend: Spend,
    app_names: Mapping[str, str] | None = None,
    not_fetched: Mapping[str, Sequence[date]] | None = None,
    standings: StandingsTable | None = None,
) -> Digest:
    """A tracker's digest of ``start`` to ``end``: its spend, its events by rule, and rank charts.

    ``events`` has a row per alert event (``event_id``, ``rule``, ``day``, ``app_id``, ``keyword``,
    ``country``, ``language``, ``device``, ``target``, ``before``, ``after``, ``detail`` are read;
    other columns are ignored), of which those whose ``day`` is within the period are shown.
    ``not_fetched`` maps a rank series (``"'photo editor' (us)"``) to its days that no run fetched
    (over budget, failed, not run): the page says them, under "Not fetched", apart from days without
    data. ``ranks`` is a :func:`~storeframes.rank_history` frame (``keyword``, ``app_id``, ``date``,
    ``rank``, ``status``, ``country``, ``language``, ``device``) covering the period, and better
    some days before it. An empty frame without columns stands for none. ``app_names`` maps app
    ids to the names shown beside them.

    ``standings`` (:func:`~storeframes.standings_table` of the tracked apps on ``end``) opens the page, under
    "Where we stand", after the spend and the days not fetched.

    The page shows the spend (the run's, when ``spend.run_credits`` is given; the month's beside
    its budget, with a bar; the period's runs), then a table per rule (rank drops, top N entries
    and exits, rank anomalies, listing changes, new advertisers, budget, unknown fields: the rules
    with no event are left out), then a rank chart per app, keyword and place with a rank drop, top
    or anomaly event:
    its rank over the days of ``ranks`` (1 at the top; no-data days shaded grey and days not
    fetched (``status`` ``not_fetched``) hatched, each named in the legend, not-ranked days on the
    bottom line), the event days marked, and the app's listing changes as dashed lines named by
    their target. At most :data:`MAX_CHARTS` charts, the earliest events first. URLs in the
    events are shown without their scheme (``https://x/a.png`` as ``x/a.png``).

    >>> spend = Spend(month="2026-11", month_credits=300, budget_per_month=None, run_credits=40)
    >>> digest = render_digest(pl.DataFrame(), pl.DataFrame(), tracker="t", start=date(2026, 11, 5),
    ...                        end=date(2026, 11, 5), spend=spend)
    >>> print(digest.markdown)
    # t on 2026-11-05
    <BLANKLINE>
    **This run:** 40 credits · **Spent in 2026-11:** 300 credits (no month budget)
    <BLANKLINE>
    No events in this period.
    <BLANKLINE>
    """
    if not isinstance(tracker, str) or not tracker.strip():
        raise InvalidParameterError("tracker", tracker, "the tracker's name, a non-empty text", endpoint=_FUNCTION)
    first, last = _day("start", start), _day("end", end)
    if last < first:
        raise InvalidParameterError("end", last, f"a date on or after start={first}", endpoint=_FUNCTION)
    if not isinstance(spend, Spend):
        raise InvalidParameterError("spend", type(spend).__name__, "a Spend", endpoint=_FUNCTION)
    if app_names is not None and not isinstance(app_names, Mapping):
        raise InvalidParameterError(
            "app_names", type(app_names).__name__, "a mapping of app id to name", endpoint=_FUNCTION
        )
    names = {str(k): str(v) for k, v in (app_names or {}).items()}
    shown = _frame(events, "events", _EVENT_COLUMNS, "an events frame (event_id, rule, day, app_id, keyword ...)")
    shown = shown.filter(pl.col("day").is_between(first, last))
    history = _frame(ranks, "ranks", _RANK_COLUMNS, "a rank_history frame (keyword, app_id, date, rank, status ...)")

    title = _title(tracker, first, last)
    groups = _groups(shown)
    keys = _series_keys(shown)
    drawn = _charts(keys[:MAX_CHARTS], history, shown, names)
    images = {f"rank-{i}.png": png for i, png in enumerate(drawn, 1)}
    captions = [_chart_title(key, names) for key in keys[:MAX_CHARTS]]
    left_out = len(keys) - len(images)
    more = f"{plural(left_out, 'more chart')} left out (at most {MAX_CHARTS})." if left_out else ""

    page = [
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">',
        f"<title>{_h(title)}</title>\n<style>\n{_CSS}\n</style>\n</head>\n<body>",
        f"<h1>{_h(title)}</h1>",
        '<p class="spend">'
        + " · ".join(
            f"<b>{_h(label)}:</b> {_h(value)}" + (_bar(spend, markdown=False) if label.startswith("Spent in") else "")
            for label, value in _spend_parts(spend, first, last)
        )
        + "</p>",
    ]
    text = [
        f"# {_md(title)}",
        " · ".join(
            f"**{_md(label)}:** {_md(value)}" + (_bar(spend, markdown=True) if label.startswith("Spent in") else "")
            for label, value in _spend_parts(spend, first, last)
        ),
    ]
    holes = _holes(not_fetched or {}, first, last)
    if holes:
        page.append(f'<p class="missing"><b>Not fetched:</b> {_h(holes[0])}</p>')
        page.append("<ul>" + "".join(f"<li>{_h(line)}</li>" for line in holes[1:]) + "</ul>")
        text.append(f"**Not fetched:** {_md(holes[0])}\n\n" + "\n".join(f"- {_md(line)}" for line in holes[1:]))
    if standings is not None:
        if not isinstance(standings, StandingsTable):
            raise InvalidParameterError("standings", type(standings).__name__, "a StandingsTable", endpoint=_FUNCTION)
        page += [f"<h2>Where we stand on {last}</h2>", standings.html]
        text += [f"## Where we stand on {last}", standings.markdown]
    if not groups:
        page.append('<p class="note">No events in this period.</p>')
        text.append("No events in this period.")
    for rule, rows in groups:
        count = plural(rows.height, "event")
        page.append(f'<h2>{_h(_heading(rule))} <span class="count">({count})</span></h2>')
        page.append(_html_table(rows, names))
        text += [f"## {_md(_heading(rule))} ({count})", _md_table(rows, names)]
    if images:
        page.append("<h2>Rank charts</h2>")
        text.append("## Rank charts")
        for (name, data), caption in zip(images.items(), captions, strict=True):
            encoded = base64.b64encode(data).decode()
            page.append(
                f'<figure><img alt="{_h(caption)}" src="data:image/png;base64,{encoded}" width="640" height="260">'
                "</figure>"
            )
            text.append(f"![{_md(caption)}]({name})")
        if more:
            page.append(f'<p class="note">{_h(more)}</p>')
            text.append(more)
    page.append("</body>\n</html>\n")
    return Digest(html="\n".join(page), markdown="\n\n".join(text) + "\n", images=images)
