"""The standings as a person reads them: a keyword table per app and place, with a sparkline a row.

:func:`standings_table` turns a :func:`~storeframes.standings` frame into a :class:`StandingsTable`: HTML (inline
CSS classes, each row's sparkline an SVG image whose days say their rank when hovered: the browser's own
tooltip, no script, nothing fetched: :func:`sparkline_html`) and its Markdown twin (the sparkline in block characters). A notebook
shows it as HTML; the digest opens with it. Pure: the same frame gives the same bytes.

>>> import storeframes as sf
>>> sf.standings_table(sf.standings(history, ["3233849169"]), names={"3233849169": "Photo Pro"})  # doctest: +SKIP
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

import polars as pl

from .._tracebacks import user_facing
from ..errors import InvalidParameterError, plural
from ..texts import html_text as _h
from ..texts import markdown_text as _md
from .inputs import PLACE, checked_frame
from .standings import CHANGE_DAYS, STANDINGS

__all__ = ["STANDINGS_CSS", "StandingsTable", "sparkline_html", "sparkline_svg", "sparkline_text", "standings_table"]

STANDINGS_CSS = """
table.standings{width:100%}table.standings td.num,table.standings th.num{text-align:right;white-space:nowrap}
table.standings td.kw{min-width:8em}.up{color:#1e7a3c}.down{color:#b3261e}.gap{color:#8a4b00}.flat{color:#777}
table.standings td.spark{padding-top:2px;padding-bottom:0}span.spark{vertical-align:middle}.quiet{color:#777;font-size:12px}
h3.standing{font-size:15px;margin:18px 0 6px}h3.standing .id{color:#888;font-size:12px;font-weight:normal}
@media (max-width:600px){table.standings th,table.standings td{padding:3px 4px}table.standings td.kw{min-width:6em}}
""".strip()
"""The standings table's CSS (the digest and the notebook both use it)."""

_WIDTH, _HEIGHT, _PAD = 124, 28, 3
_SVG = "http://www.w3.org/2000/svg"  # the namespace of an SVG file: inside the image's base64, never a link
_BOX = f"position:relative;display:inline-block;width:{_WIDTH}px;height:{_HEIGHT}px;line-height:0"
_WORDS = {"not_ranked": "not ranked", "no_data": "no data", "not_fetched": "not fetched"}
_BLOCKS = "▁▂▃▄▅▆▇█"
_MARKS = {"not_ranked": "_", "no_data": "·", "not_fetched": "?"}
MARKDOWN_LEGEND = "Trend: one character a day, oldest first; ▁ to █ the rank (taller is better), _ not ranked, · no data, ? not fetched."
_NONE = "—"


def _rank_words(rank: int | None, status: str | None) -> str:
    if status == "ranked" and rank is not None:
        return f"rank {rank}"
    return _WORDS.get(status or "", "no data")


def _change(now: str | None, then: str | None, change: int | None) -> tuple[str, str, str]:
    """A change's cell: (text, CSS class, words for a title); a hole says which day is the hole."""
    if change is not None:
        if change == 0:
            return "=", "flat", "no change"
        return (f"▲ {change}", "up", f"up {change}") if change > 0 else (f"▼ {-change}", "down", f"down {-change}")
    if now == "ranked" and then == "not_ranked":
        return "entered", "up", "entered the results"
    if now == "not_ranked" and then == "ranked":
        return "left", "down", "left the results"
    if now == "not_ranked" and then == "not_ranked":
        return _NONE, "flat", "not ranked on either day"
    hole = then if now in ("ranked", "not_ranked") else now
    return "?", "gap", f"{_WORDS.get(hole or '', 'nothing known')} on {'that' if hole == then else 'this'} day"


def _day_words(day: date, rank: int | None, status: str, before: int | None, before_status: str | None) -> str:
    words = f"{day} · {_rank_words(rank, status)}"
    text, _, said = _change(status, before_status, None if rank is None or before is None else before - rank)
    if before_status is not None and text not in (_NONE, "?"):
        words += f" · {said} since the day before"
    return words


def _days_x(days: int) -> tuple[list[float], float]:
    """Each day's x in the sparkline, and the width a day takes."""
    step = (_WIDTH - 2 * _PAD) / max(days - 1, 1)
    return [_PAD + i * step for i in range(days)], step


def _y(rank: int, best: int, worst: int) -> float:
    if worst == best:
        return _HEIGHT / 2
    return _PAD + (rank - best) / (worst - best) * (_HEIGHT - 2 * _PAD)


@user_facing
def sparkline_svg(start: date, ranks: Sequence[int | None], statuses: Sequence[str], *, label: str) -> str:
    """An SVG sparkline of a rank over days from ``start`` (rank 1 at the top), a file of its own: the ranked days
    as a line, not-ranked days as ticks on the bottom, no-data days grey and not-fetched days amber, each a gap of
    its own. ``label`` is its title. :func:`sparkline_html` shows it with a hover target a day.

    >>> svg = sparkline_svg(date(2026, 11, 1), [5, 3, None], ["ranked", "ranked", "not_fetched"], label="maps")
    >>> svg.count("<polyline"), svg.count('fill="#f5c26b"'), "<script" in svg
    (1, 1, False)
    """
    if len(ranks) != len(statuses):
        raise InvalidParameterError("ranks", len(ranks), f"as many ranks as statuses ({len(statuses)})")
    xs, step = _days_x(len(ranks))
    ranked = [r for r, s in zip(ranks, statuses, strict=True) if s == "ranked" and r is not None]
    best, worst = (min(ranked), max(ranked)) if ranked else (1, 1)
    out = [
        f'<svg xmlns="{_SVG}" width="{_WIDTH}" height="{_HEIGHT}" viewBox="0 0 {_WIDTH} {_HEIGHT}">'
        f"<title>{_h(label)}</title>"
    ]
    for i, status in enumerate(statuses):  # the holes first, under the line
        if status in ("no_data", "not_fetched"):
            fill = "#e4e4e4" if status == "no_data" else "#f5c26b"
            out.append(f'<rect x="{xs[i] - step / 2:.1f}" y="0" width="{step:.1f}" height="{_HEIGHT}" fill="{fill}"/>')
    runs: list[list[str]] = []
    for i, (rank, status) in enumerate(zip(ranks, statuses, strict=True)):
        if status == "ranked" and rank is not None:
            point = f"{xs[i]:.1f},{_y(rank, best, worst):.1f}"
            if runs and i > 0 and statuses[i - 1] == "ranked":
                runs[-1].append(point)
            else:
                runs.append([point])
        elif status == "not_ranked":
            out.append(f'<rect x="{xs[i] - 1:.1f}" y="{_HEIGHT - 3}" width="2" height="3" fill="#999"/>')
    for run in runs:
        if len(run) == 1:
            x, y = run[0].split(",")
            out.append(f'<circle cx="{x}" cy="{y}" r="1.6" fill="#1f6fb4"/>')
        else:
            out.append(f'<polyline points="{" ".join(run)}" fill="none" stroke="#1f6fb4" stroke-width="1.5"/>')
    if ranked and statuses[-1] == "ranked" and ranks[-1] is not None:
        out.append(f'<circle cx="{xs[-1]:.1f}" cy="{_y(ranks[-1], best, worst):.1f}" r="2.2" fill="#1f6fb4"/>')
    out.append("</svg>")
    return "".join(out)


@user_facing
def sparkline_html(start: date, ranks: Sequence[int | None], statuses: Sequence[str], *, label: str) -> str:
    """The sparkline as HTML that reads everywhere a person opens it: the SVG as an inline image (``alt`` its
    ``label``) and over each day a ``<span title>`` (placed in percent) whose tooltip says the day's date, rank
    and move. No script, nothing fetched, and only what a notebook's sanitizer keeps (``img``, ``span``,
    ``title``, positions): an inline ``<svg>`` would show as text in a notebook not yet trusted, and not at
    all in most mail clients.

    >>> part = sparkline_html(date(2026, 11, 1), [5, 3, None], ["ranked", "ranked", "not_fetched"], label="maps")
    >>> part.count("<span title="), "2026-11-02 · rank 3 · up 2 since the day before" in part, "http" in part
    (3, True, False)
    """
    svg = sparkline_svg(start, ranks, statuses, label=label)
    picture = ""
    for pad in range(64):  # encoded again with a longer comment until no base64 of it spells "http"
        picture = base64.b64encode((svg + f"<!--{'.' * pad}-->" * bool(pad)).encode()).decode()
        if "http" not in picture.lower():
            break
    else:  # pragma: no cover
        raise AssertionError("no padding keeps the sparkline's base64 free of 'http'")
    xs, step = _days_x(len(ranks))
    spots = []
    for i, (rank, status) in enumerate(zip(ranks, statuses, strict=True)):
        before = (ranks[i - 1], statuses[i - 1]) if i else (None, None)
        words = _day_words(start + timedelta(days=i), rank, status, *before)
        left = max(0.0, (xs[i] - step / 2) / _WIDTH * 100)
        spots.append(
            f'<span title="{_h(words)}" style="position:absolute;left:{left:.2f}%;top:0;'
            f'width:{step / _WIDTH * 100:.2f}%;height:100%"></span>'
        )
    return (
        f'<span class="spark" style="{_BOX}"><img src="data:image/svg+xml;base64,{picture}" width="{_WIDTH}" '
        f'height="{_HEIGHT}" alt="{_h(label)}" style="display:block">{"".join(spots)}</span>'
    )


@user_facing
def sparkline_text(ranks: Sequence[int | None], statuses: Sequence[str]) -> str:
    """The sparkline in block characters, a day each: taller is a better rank; ``_`` not ranked, ``·`` no data,
    ``?`` not fetched (:data:`MARKDOWN_LEGEND`).

    >>> sparkline_text([9, 5, 1, None, None], ["ranked", "ranked", "ranked", "no_data", "not_fetched"])
    '▁▅█·?'
    """
    ranked = [r for r, s in zip(ranks, statuses, strict=True) if s == "ranked" and r is not None]
    best, worst = (min(ranked), max(ranked)) if ranked else (1, 1)
    out = []
    for rank, status in zip(ranks, statuses, strict=True):
        if status == "ranked" and rank is not None:
            level = 4 if worst == best else round((worst - rank) / (worst - best) * (len(_BLOCKS) - 1))
            out.append(_BLOCKS[level])
        else:
            out.append(_MARKS.get(status, "·"))
    return "".join(out)


def _share(value: float | None) -> str:
    if value is None:
        return _NONE
    return "0%" if value == 0 else "under 0.1%" if value < 0.001 else f"{value:.1%}"


def _spark_label(row: Mapping[str, Any]) -> str:
    statuses = row["trend_status"] or []
    end = row["trend_start"] + timedelta(days=len(statuses) - 1)
    ranked = [r for r, s in zip(row["trend"], statuses, strict=True) if s == "ranked"]
    words = f"Rank of '{row['keyword']}' from {row['trend_start']} to {end}"
    words += f": best {min(ranked)}, worst {max(ranked)}" if ranked else ": never ranked"
    holes = [f"{plural(statuses.count(s), 'day')} {w}" for s, w in _WORDS.items() if s in statuses]
    return words + (f"; {', '.join(holes)}" if holes else "")


def _groups(frame: pl.DataFrame) -> list[tuple[tuple[Any, ...], pl.DataFrame]]:
    """The rows by app and place, the groups in the order of their first row (the biggest move first)."""
    keys = ["app_id", *PLACE]
    order = frame.select(keys).unique(maintain_order=True)
    parts = frame.partition_by(keys, as_dict=True, maintain_order=True)
    return [(key, parts[key]) for key in order.iter_rows()]


def _heading(key: tuple[Any, ...], rows: pl.DataFrame, names: Mapping[str, str]) -> tuple[str, str, str]:
    """A group's name, its id and its place in words, and its share of voice over its keywords that day."""
    app, *place = key
    where = "/".join(str(p) for p in place if p is not None)
    recorded = [float(v) for v in rows["share"].drop_nulls().to_list()]
    mean = sum(recorded) / len(recorded) if recorded else None
    voice = f"share of voice {_share(mean)} over {plural(len(recorded), 'keyword')}" if recorded else ""
    return names.get(app, app), " · ".join(w for w in (where, voice) if w), app


def _html_row(row: Mapping[str, Any]) -> str:
    now = row["status"]
    rank = str(row["rank"]) if now == "ranked" else _WORDS.get(now, "no data")
    cells = [
        f'<td class="kw">{_h(row["keyword"])}</td>',
        f'<td class="num{"" if now == "ranked" else " gap"}">{rank}</td>',
    ]
    for n in CHANGE_DAYS:
        text, kind, said = _change(now, row[f"was_{n}d"], row[f"change_{n}d"])
        cells.append(f'<td class="num {kind}" title="{_h(said)}">{_h(text)}</td>')
    best = f'{row["best"]} <span class="quiet">{row["best_date"]:%m-%d}</span>' if row["best"] is not None else _NONE
    cells.append(f'<td class="num">{best}</td><td class="num">{_share(row["share"])}</td>')
    spark = sparkline_html(row["trend_start"], row["trend"], row["trend_status"], label=_spark_label(row))
    cells.append(f'<td class="spark">{spark}</td>')
    return "<tr>" + "".join(cells) + "</tr>"


def _html_head(days: int) -> str:
    heads = [*(f"{n} day{'s' if n > 1 else ''}" for n in CHANGE_DAYS), "Best", "Share"]
    numbers = "".join(f'<th class="num">{h}</th>' for h in heads)
    return f'<tr><th>Keyword</th><th class="num">Rank</th>{numbers}<th>Last {plural(days, "day")}</th></tr>'


def _md_row(row: Mapping[str, Any]) -> str:
    now = row["status"]
    cells = [_md(row["keyword"]), str(row["rank"]) if now == "ranked" else _WORDS.get(now, "no data")]
    for n in CHANGE_DAYS:
        text = _change(now, row[f"was_{n}d"], row[f"change_{n}d"])[0]
        cells.append(text.replace("▲ ", "+").replace("▼ ", "-"))
    cells.append(f"{row['best']} ({row['best_date']:%m-%d})" if row["best"] is not None else _NONE)
    cells += [_share(row["share"]), f"`{sparkline_text(row['trend'], row['trend_status'])}`"]
    return "| " + " | ".join(cells) + " |"


@dataclass(frozen=True)
class StandingsTable:
    """The standings as HTML (``html``: the tables, each in a ``div.scroll`` that scrolls on a narrow screen) and
    Markdown (``markdown``); a notebook shows the HTML. ``css`` is the CSS the HTML's classes need.

    >>> StandingsTable(html="<p>x</p>", markdown="x", rows=0).rows
    0
    """

    html: str
    markdown: str
    rows: int
    css: str = field(default=STANDINGS_CSS, repr=False)

    def _repr_html_(self) -> str:
        return f"<style>{self.css}</style>\n{self.html}"

    def _repr_markdown_(self) -> str:
        return self.markdown


@user_facing
def standings_table(standings: pl.DataFrame | Any, *, names: Mapping[str, str] | None = None) -> StandingsTable:
    """A :func:`~storeframes.standings` frame as a person reads it: a table per app and place (its share of
    voice over the keywords beside its name), a row a keyword: the rank (or "not ranked", "no data", "not
    fetched"), the changes over 1, 7 and 30 days (▲ up, ▼ down, "entered", "left", "?" where one of the days is
    a hole: hover it to see which), the best rank and its day, the share of the top places, and a sparkline of
    the period whose days say their rank when hovered. ``names`` maps app ids to the names shown. The groups
    and rows keep the frame's order (the biggest move first).

    >>> table = standings_table(standings(history, ["a", "b"]), names={"a": "Atlas"})  # doctest: +SKIP
    >>> table  # doctest: +SKIP
    """
    frame = checked_frame(standings, "standings", "standings_table", "a standings frame", STANDINGS.names)
    if names is not None and not isinstance(names, Mapping):
        raise InvalidParameterError(
            "names", type(names).__name__, "a mapping of app id to name", endpoint="standings_table"
        )
    shown = {str(k): str(v) for k, v in (names or {}).items()}
    if frame.is_empty():
        note = "No standings: no tracked app and keyword has a day in the history."
        return StandingsTable(html=f'<p class="quiet">{_h(note)}</p>', markdown=note, rows=0)
    days = max(len(s) for s in frame["trend_status"].to_list() if s is not None)
    html_parts, md_parts = [], []
    for key, rows in _groups(frame):
        title, where, app = _heading(key, rows, shown)
        aside = " · ".join(_h(w) for w in (app if title != app else "", where) if w)
        html_parts.append(f'<h3 class="standing">{_h(title)} <span class="id">{aside}</span></h3>')
        body = "\n".join(_html_row(r) for r in rows.iter_rows(named=True))
        html_parts.append(
            f'<div class="scroll"><table class="standings">\n{_html_head(days - 1)}\n{body}\n</table></div>'
        )
        named = f"{_md(title)} ({_md(app)})" if title != app else _md(app)
        md_parts.append(f"### {named} · {_md(where)}" if where else f"### {named}")
        head = ["Keyword", "Rank", *(f"{n}d" for n in CHANGE_DAYS), "Best", "Share", "Trend"]
        md_parts.append(
            "\n".join(
                ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
                + [_md_row(r) for r in rows.iter_rows(named=True)]
            )
        )
    md_parts.append(MARKDOWN_LEGEND)
    return StandingsTable(html="\n".join(html_parts), markdown="\n\n".join(md_parts), rows=frame.height)
