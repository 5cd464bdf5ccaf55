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
from .digest_charts import chart_alts as _chart_alts
from .digest_charts import charts as _charts
from .digest_charts import series_keys as _series_keys
from .digest_events import event_groups, heading, html_table, markdown_table
from .digest_events import html_text as _h

__all__ = ["MAX_CHARTS", "Digest", "Spend", "render_digest"]

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
_CHART_LINK = re.compile(r"^(!\[[^\n]*\]\()(rank-\d+\.png)\)$", re.MULTILINE)

_CSS = (
    """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#222;margin:24px auto;
max-width:1040px;padding:0 16px;overflow-wrap:break-word;word-break:normal}
h1{font-size:22px;margin:0 0 6px}
h2{font-size:17px;margin:26px 0 8px;border-bottom:1px solid #ddd;padding-bottom:3px}
h2 .count{color:#777;font-weight:normal;font-size:14px}.spend{color:#444;margin:0 0 8px}.spend b{color:#222}
.bar{display:inline-block;width:120px;height:9px;background:#e6e6e6;border-radius:5px;vertical-align:middle;
margin:0 4px;overflow:hidden}
.bar span{display:block;height:100%;background:#4a7fc1}.bar.high span{background:#e0a030}
.bar.over span{background:#c94040}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{text-align:left;vertical-align:top;padding:4px 8px;border-bottom:1px solid #eee}
th{background:#f6f6f6;font-weight:600;white-space:nowrap}td.day,td.place{white-space:nowrap}
td.change{max-width:280px}td.detail{color:#444}
.missing{color:#8a4b00}.id{color:#888;font-size:12px}.target{font-weight:600}.none{color:#777}figure{margin:14px 0}
figure img{max-width:100%;height:auto;border:1px solid #eee}.note{color:#666}
@media (max-width:600px){
body{margin:12px auto;padding:0 10px}
h1{font-size:19px}h2{font-size:16px;margin-top:20px}
th,td{padding:3px 5px}
table.events,table.events tbody,table.events tr,table.events td{display:block;width:auto;max-width:none}
table.events thead{display:none}
table.events tr{padding:6px 0;border-bottom:1px solid #ddd}
table.events td{border:0;padding:1px 0}
table.events td.day{display:inline;font-weight:600;margin-right:6px}table.events td.app{display:inline}
table.events td.app::after{content:"\\A";white-space:pre}
table.events td.keyword,table.events td.place{display:inline-block;margin-right:12px}
table.events td[data-label]::before{content:attr(data-label) ": ";color:#777;font-size:12px}
}
""".strip()
    + "\n"
    + STANDINGS_CSS
)


@dataclass(frozen=True)
class Spend:
    """What a tracker spent: in a period's runs (or a run), and in a calendar month (UTC) against its month budget.

    The digest's spend line leads with the period's credits (:attr:`period_credits`: every run of the
    period, whatever months it spans), then the month beside its budget: the month the budget counts,
    the one of the period's last day, as spent so far.

    >>> Spend(month="2026-11", month_credits=41_200, budget_per_month=300_000, runs=30, runs_not_ok=2).runs
    30
    """

    month: str
    """The month the budget counts, ``"2026-11"``: the one of the period's last day."""
    month_credits: int
    """Credits spent in that calendar month (UTC) so far, by the ledger (every machine's, every run's)."""
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
    days: tuple[date, date] | None = None
    """The first and last day of the runs :attr:`period_credits` and the run counts are of; None when they are
    the digest's own start and end (a digest of the day may show events of earlier days, its runs are the day's)."""


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


def _share(spent: int, budget: int) -> float:
    return spent / budget if budget > 0 else 0.0


def _percent(share: float) -> str:
    return "under 1%" if 0 < share < 0.005 else f"{share:.0%}"


def _title(tracker: str, start: date, end: date) -> str:
    return f"{tracker} on {start}" if start == end else f"{tracker}: {start} to {end}"


def _spend_parts(spend: Spend, start: date, end: date) -> list[tuple[str, str, bool]]:
    """The spend line's parts: (label, value, whether the month's bar follows), the same words in HTML and
    Markdown; the period's credits first, then the month beside its budget."""
    parts = []
    if spend.period_credits is not None:
        first, last = spend.days or (start, end)
        when = f"on {first}" if first == last else f"from {first} to {last}"
        parts.append((f"Spent {when}", f"{plural(spend.period_credits, 'credit')} (every run)", False))
    if spend.run_credits is not None:
        parts.append(("This run", f"{plural(spend.run_credits, 'credit')}", False))
    if spend.budget_per_month is None:
        parts.append((f"{spend.month} so far", f"{plural(spend.month_credits, 'credit')} (no month budget)", False))
    else:
        share = _percent(_share(spend.month_credits, spend.budget_per_month))
        value = f"{spend.month_credits:,} of {spend.budget_per_month:,} credits ({share})"
        parts.append((f"Month budget, {spend.month} so far", value, True))
    if spend.runs or spend.runs_running:
        running = f", {spend.runs_running:,} still running or killed" if spend.runs_running else ""
        parts.append(("Runs", f"{spend.runs:,} finished, {spend.runs_not_ok:,} not ok{running}", False))
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


# -- the page ------------------------------------------------------------------------------------------------


def _day(name: str, value: Any) -> date:
    if isinstance(value, date):
        return value
    raise InvalidParameterError(name, value, "a date (datetime.date)", endpoint=_FUNCTION)


def _opening(title: str, spend: Spend, holes: list[str], first: date, last: date) -> tuple[list[str], list[str]]:
    """The page's head, its title and its spend line, and the "Not fetched" note: (HTML parts, Markdown parts)."""
    parts = _spend_parts(spend, first, last)
    page = [
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_h(title)}</title>\n<style>\n{_CSS}\n</style>\n</head>\n<body>",
        f"<h1>{_h(title)}</h1>",
        '<p class="spend">'
        + " · ".join(
            f"<b>{_h(label)}:</b> {_h(value)}" + _bar(spend, markdown=False) * bar for label, value, bar in parts
        )
        + "</p>",
    ]
    text = [
        f"# {_md(title)}",
        " · ".join(f"**{_md(label)}:** {_md(value)}" + _bar(spend, markdown=True) * bar for label, value, bar in parts),
    ]
    if holes:
        page.append(f'<p class="missing"><b>Not fetched:</b> {_h(holes[0])}</p>')
        page.append("<ul>" + "".join(f"<li>{_h(line)}</li>" for line in holes[1:]) + "</ul>")
        text.append(f"**Not fetched:** {_md(holes[0])}\n\n" + "\n".join(f"- {_md(line)}" for line in holes[1:]))
    return page, text


def _event_sections(
    shown: pl.DataFrame, names: Mapping[str, str], currencies: Mapping[str, str]
) -> tuple[list[str], list[str]]:
    """A section per rule with events (the anomalies first), or a line saying there is none."""
    groups = event_groups(shown)
    if not groups:
        return ['<p class="note">No events in this period.</p>'], ["No events in this period."]
    page: list[str] = []
    text: list[str] = []
    for rule, rows in groups:
        count = plural(rows.height, "event")
        page.append(f'<h2>{_h(heading(rule))} <span class="count">({count})</span></h2>')
        page.append(html_table(rows, names, currencies))
        text += [f"## {_md(heading(rule))} ({count})", markdown_table(rows, names, currencies)]
    return page, text


def _chart_sections(
    shown: pl.DataFrame, history: pl.DataFrame, names: Mapping[str, str]
) -> tuple[list[str], list[str], dict[str, bytes]]:
    """The rank charts (each image with the words it shows for its alt text), and a line for those left out."""
    keys = _series_keys(shown)
    drawn = _charts(keys[:MAX_CHARTS], history, shown, names)
    if not drawn:
        return [], [], {}
    images = {f"rank-{i}.png": png for i, png in enumerate(drawn, 1)}
    alts = _chart_alts(keys[:MAX_CHARTS], history, shown, names)
    page, text = ["<h2>Rank charts</h2>"], ["## Rank charts"]
    for (name, data), alt in zip(images.items(), alts, strict=True):
        encoded = base64.b64encode(data).decode()
        page.append(
            f'<figure><img alt="{_h(alt)}" src="data:image/png;base64,{encoded}" width="640" height="260" '
            'style="max-width:100%;height:auto"></figure>'  # inline too: a mail client may drop the page's style
        )
        text.append(f"![{_md(alt)}]({name})")
    left_out = len(keys) - len(images)
    if left_out:
        more = f"{plural(left_out, 'more chart')} left out (at most {MAX_CHARTS})."
        page.append(f'<p class="note">{_h(more)}</p>')
        text.append(more)
    return page, text, images


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
    currencies: Mapping[str, str] | None = None,
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
    ids to the names shown beside them; ``currencies`` a country to the currency of its store's
    prices (``{"us": "usd"}``), for the price changes.

    The page shows the spend (what every run of the period spent, when ``spend.period_credits`` is
    given, and the run's, when ``spend.run_credits`` is; the month's so far beside its month budget,
    with a bar; the period's runs), the days not fetched, then a table per rule: the rank anomalies
    (each with its likely cause) first, then rank drops, top N entries and exits, listing changes
    (what changed in words: the screenshots added and removed, a text's words, a price), new
    advertisers, budget, unknown fields (the rules with no event are left out); then a rank chart
    per app, keyword and place with a rank drop, top or anomaly event: its rank over the days of
    ``ranks`` (1 at the top; no-data days shaded grey and days not fetched (``status``
    ``not_fetched``) hatched, each named in the legend, not-ranked days on the bottom line), the
    event days marked, and the app's listing changes as dashed lines named by their target; its alt
    text says the same in words. At most :data:`MAX_CHARTS` charts, the earliest events first. URLs
    in the events are shown without their scheme (``https://x/a.png`` as ``x/a.png``).

    ``standings`` (:func:`~storeframes.standings_table` of the tracked apps on ``end``) opens the page, under
    "Where we stand on END", after the spend and the days not fetched, before the events.

    The page reads on a phone and in an e-mail client: a viewport, tables that scroll within
    themselves (a narrow screen shows each event as a block of lines), words never broken inside,
    no script and nothing fetched.

    >>> spend = Spend(month="2026-11", month_credits=300, budget_per_month=None, period_credits=40)
    >>> digest = render_digest(pl.DataFrame(), pl.DataFrame(), tracker="t", start=date(2026, 11, 5),
    ...                        end=date(2026, 11, 5), spend=spend)
    >>> print(digest.markdown)
    # t on 2026-11-05
    <BLANKLINE>
    **Spent on 2026-11-05:** 40 credits (every run) · **2026-11 so far:** 300 credits (no month budget)
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
    for name, value, what in (
        ("app_names", app_names, "a mapping of app id to name"),
        ("currencies", currencies, "a mapping of country to currency code"),
    ):
        if value is not None and not isinstance(value, Mapping):
            raise InvalidParameterError(name, type(value).__name__, what, endpoint=_FUNCTION)
    if standings is not None and not isinstance(standings, StandingsTable):
        raise InvalidParameterError("standings", type(standings).__name__, "a StandingsTable", endpoint=_FUNCTION)
    names = {str(k): str(v) for k, v in (app_names or {}).items()}
    money = {str(k).lower(): str(v).lower() for k, v in (currencies or {}).items()}
    shown = _frame(events, "events", _EVENT_COLUMNS, "an events frame (event_id, rule, day, app_id, keyword ...)")
    shown = shown.filter(pl.col("day").is_between(first, last))
    history = _frame(ranks, "ranks", _RANK_COLUMNS, "a rank_history frame (keyword, app_id, date, rank, status ...)")

    page, text = _opening(_title(tracker, first, last), spend, _holes(not_fetched or {}, first, last), first, last)
    if standings is not None:
        page += [f"<h2>Where we stand on {last}</h2>", standings.html]
        text += [f"## Where we stand on {last}", standings.markdown]
    sections = _event_sections(shown, names, money)
    page += sections[0]
    text += sections[1]
    chart_page, chart_text, images = _chart_sections(shown, history, names)
    page += [*chart_page, "</body>\n</html>\n"]
    text += chart_text
    return Digest(html="\n".join(page), markdown="\n\n".join(text) + "\n", images=images)
