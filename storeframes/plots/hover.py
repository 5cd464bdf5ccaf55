"""The rank chart with hover details: rest the pointer on a point to read its app, rank, day and move.

:func:`hover_rank_chart` draws :func:`~storeframes.plots.rank_chart` and lays a hover target over each
point of its picture: an HTML ``<span title="...">`` placed in percent of the image, so it stays on its
point when a narrow cell shrinks the picture, and the browser's own tooltip shows the title. No script,
nothing fetched: the picture is the chart's PNG, inline.

Why not an SVG with a ``<title>`` per point: JupyterLab (and Notebook 7) show ``image/svg+xml`` through an
``<img>``, inside which nothing hovers, and they sanitize the HTML of a notebook they do not trust (one a
colleague sent, opened before it is run again): ``svg`` is not among the tags their sanitizer keeps, so an
inline SVG would show as its titles' text run together, with no picture. ``img``, ``span``, the ``title``
attribute and the positioning styles are kept, so the same output hovers in a trusted notebook, an
untrusted one, classic Notebook and VS Code; a reader that shows no HTML shows the PNG beside it.
"""

from __future__ import annotations

import base64
import html
import struct
from collections.abc import Mapping, Sequence
from datetime import date, timedelta
from typing import Any, cast

import matplotlib.dates as mdates
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .._tracebacks import user_facing
from .common import figure_png
from .rank_charts import DrawnRanks, RankPanel, _draw_ranks

__all__ = ["HoverChart", "hover_rank_chart"]

TARGET_PIXELS = 12
"""The side of a point's hover target in the picture's pixels (narrower where the days are closer)."""
_STATUS_WORDS = {"not_ranked": "not ranked", "no_data": "no data", "not_fetched": "not fetched"}
_PLACE = ("country", "device")
_MINUS = "\N{MINUS SIGN}"  # places lost, as print sets a negative number
_POINTS_SCHEMA = {
    "keyword": pl.String,
    "country": pl.String,
    "device": pl.String,
    "app_id": pl.String,
    "date": pl.Date,
    "status": pl.String,
    "rank": pl.Int64,
    "text": pl.String,
    "x": pl.Float64,
    "y": pl.Float64,
}
_BOX = "position:relative;display:inline-block;max-width:100%;line-height:0"
_IMAGE = "display:block;max-width:100%;height:auto"


class HoverChart:
    """A rank chart whose points tell their app, rank, day and move when the pointer rests on them.

    Shown in a notebook, it is HTML: the chart's PNG with a hover target over each point (the browser's
    own tooltip, no script); a reader that shows no HTML (a notebook converted to Markdown, a static
    viewer) shows the PNG. ``.figure`` is the matplotlib Figure, ``.png`` its picture, ``.html`` the
    hoverable chart (a fragment for a page of your own), ``.points`` one row per point with its hover
    ``text`` and its place on the picture (``x``, ``y``: percent of its width from the left and of its
    height from the top), and ``.description`` the chart in one line (the HTML's alt text).

    >>> chart = hover_rank_chart(history, ["3233849169", "394079159"], changes=changes, names=metadata)  # doctest: +SKIP
    >>> chart.points.select("app_id", "date", "text").head(1)  # doctest: +SKIP
    """

    def __init__(self, figure: Figure, png: bytes, points: pl.DataFrame, targets: Sequence[_Target], description: str):
        self.figure = figure
        self.png = png
        self.points = points
        self.description = description
        self._targets = tuple(targets)

    @property
    def html(self) -> str:
        """The chart as one HTML fragment: the PNG inline, a ``<span title>`` over each point (or each group of
        points closer than a target), nothing fetched, no script; the same bytes for the same chart."""
        width, height = _png_size(self.png)
        picture = base64.b64encode(self.png).decode("ascii")
        alt = html.escape(self.description, quote=True)
        spans = "".join(target.html() for target in self._targets)
        return (
            f'<div style="{_BOX}"><img src="data:image/png;base64,{picture}" width="{width}" height="{height}" '
            f'alt="{alt}" style="{_IMAGE}">{spans}</div>'
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {
            "text/html": self.html,
            "image/png": base64.b64encode(self.png).decode("ascii"),
            "text/plain": self.description,
        }

    def __repr__(self) -> str:
        return f"<HoverChart: {getattr(self, 'description', 'not built')}>"


class _Target:
    """A hover target: a box in percent of the picture and the lines of its title (a point's, or a group's)."""

    def __init__(self, left: float, top: float, width: float, height: float, lines: Sequence[str]):
        self.left, self.top, self.width, self.height = left, top, width, height
        self.lines = tuple(lines)

    def html(self) -> str:
        title = "&#10;".join(html.escape(line, quote=True) for line in self.lines)
        style = (
            f"position:absolute;left:{self.left:.3f}%;top:{self.top:.3f}%;"
            f"width:{self.width:.3f}%;height:{self.height:.3f}%"
        )
        return f'<span title="{title}" style="{style}"></span>'


@user_facing
def hover_rank_chart(
    history: pl.DataFrame | Any,
    apps: str | int | Sequence[str | int],
    keywords: str | Sequence[str] | None = None,
    changes: pl.DataFrame | Any | None = None,
    *,
    names: Mapping[str, str] | pl.DataFrame | None = None,
    start: str | date | None = None,
    end: str | date | None = None,
    targets: str | Sequence[str] | None = None,
    colors: Mapping[str, Any] | None = None,
    title: str | None = None,
    fetched: pl.DataFrame | Any | None = None,
    anomalies: pl.DataFrame | Any | None = None,
) -> HoverChart:
    """:func:`~storeframes.plots.rank_chart`, each point telling its details when the pointer rests on it.

    Takes what ``rank_chart`` takes (but ``ax=``: the chart is a picture of its own) and draws the same
    chart. In a notebook, resting the pointer on a point shows one line per app there::

        Photo Lab (394079159) · “photo editor” · 2026-11-05 · rank 4 · +2 since the day before · listing change: screenshots

    that is the app's title from ``names`` (else its id), the keyword (and the place when the chart has
    several), the day, ``rank N`` or ``not ranked`` / ``no data`` / ``not fetched``, the move since the
    day before (``+N`` places up, a minus sign and N down, ``unchanged``, ``entered``, ``left``; nothing
    on the first day charted, nor where either day had no data or was not fetched: a day not known is
    never a drop), and the listing changes marked that day (with ``changes=``). A day an app was not
    ranked has its target on the bottom edge, where its change markers sit. Points closer than a
    target share one, a line each, top to bottom.

    The result shows as HTML (the PNG with the targets over it; the browser's own tooltip, no script,
    nothing fetched) and carries the PNG for a reader that shows no HTML, so a saved notebook shows the
    picture wherever it is opened: see :class:`HoverChart`.

    >>> chart = hover_rank_chart(history, ["3233849169", "394079159"], changes=changes, names=metadata)  # doctest: +SKIP
    >>> chart  # in a notebook: the chart, hover a point  # doctest: +SKIP
    >>> Path("ranks.html").write_text(chart.html)  # doctest: +SKIP
    """
    figure, drawn = _draw_ranks(
        history,
        apps,
        keywords,
        changes,
        names=names,
        start=start,
        end=end,
        targets=targets,
        colors=colors,
        ax=None,
        title=title,
        fetched=fetched,
        anomalies=anomalies,
        function="hover_rank_chart",
    )
    assert isinstance(figure, Figure)  # without ax= the chart is a figure of its own
    png = figure_png(figure)  # drawn: the layout is settled, the points have their place
    if drawn is None:
        message = " ".join(" ".join(t.get_text() for t in figure.texts).split())
        return HoverChart(figure, png, pl.DataFrame(schema=_POINTS_SCHEMA), (), message)
    points = _placed(figure, drawn)
    return HoverChart(figure, png, points, _targets(figure, drawn, points), _description(drawn))


def _png_size(png: bytes) -> tuple[int, int]:
    """The width and height of a PNG picture, in pixels, from its header.

    >>> _png_size(bytes.fromhex("89504e470d0a1a0a0000000d49484452000003e80000028a"))
    (1000, 650)
    """
    width, height = struct.unpack(">II", png[16:24])
    return int(width), int(height)


def _hover_texts(drawn: DrawnRanks) -> pl.DataFrame:
    """Each point of a drawn rank chart and its hover text: keyword, country, device, app_id, date, status, rank,
    text; by panel, app (as charted) and day."""
    moves = _moves_by_day(drawn.moves)
    several = len({tuple(p.rows[c][0] if p.rows.height else None for c in _PLACE) for p in drawn.panels}) > 1
    frames = []
    for panel in drawn.panels:
        rows = panel.rows
        if rows.height == 0:
            continue
        place = [str(rows[c][0]) for c in _PLACE if rows[c][0] is not None] if several else []
        keyword = f"“{rows['keyword'][0]}”" + (f" ({', '.join(place)})" if place else "")
        texts = []
        statuses = {
            (app, day): (status, rank)
            for app, day, status, rank in rows.select("app_id", "date", "status", "rank").iter_rows()
        }
        for app, day, status, rank in rows.select("app_id", "date", "status", "rank").iter_rows():
            before = statuses.get((app, day - timedelta(days=1)))
            words = [_app_words(app, drawn.labels), keyword, day.isoformat(), _rank_words(status, rank)]
            move = _move_words(status, rank, before)
            if move:
                words.append(move)
            listed = moves.get((app, day))
            if listed:
                words.append(f"listing change{'s' if len(listed) > 1 else ''}: {', '.join(listed)}")
            texts.append(" · ".join(words))
        frames.append(
            rows.select("keyword", *_PLACE, "app_id", "date", "status", pl.col("rank").cast(pl.Int64)).with_columns(
                pl.Series("text", texts, pl.String)
            )
        )
    if not frames:
        return pl.DataFrame(schema={k: v for k, v in _POINTS_SCHEMA.items() if k not in ("x", "y")})
    return pl.concat(frames)


def _app_words(app: str, labels: Mapping[str, str]) -> str:
    name = labels.get(app)
    return f"{name} ({app})" if name else app


def _rank_words(status: str, rank: int | None) -> str:
    return f"rank {rank}" if status == "ranked" else _STATUS_WORDS.get(status, status)


def _move_words(status: str, rank: int | None, before: tuple[str, int | None] | None) -> str:
    """The move since the day before: nothing on the first day charted, or where either day had no data or was
    not fetched (a day not known is never a drop), nor between two days not ranked."""
    if before is None:
        return ""
    was, old = before
    if status == "ranked" and rank is not None:
        if was == "ranked" and old is not None:
            gained = old - rank
            if gained == 0:
                return "unchanged since the day before"
            return f"{'+' if gained > 0 else _MINUS}{abs(gained)} since the day before"
        if was == "not_ranked":
            return "entered (not ranked the day before)"
        return f"{_STATUS_WORDS.get(was, was)} the day before"
    if status == "not_ranked" and was == "ranked":
        return f"left (rank {old} the day before)"
    return ""


def _moves_by_day(moves: pl.DataFrame | None) -> dict[tuple[str, date], list[str]]:
    """The targets of the listing changes marked on the chart, by app and day, sorted."""
    found: dict[tuple[str, date], list[str]] = {}
    if moves is None:
        return found
    for app, day, target in moves.select("app_id", "date", "target").iter_rows():
        found.setdefault((app, day), []).append(target)
    return {key: sorted(set(targets)) for key, targets in found.items()}


def _placed(figure: Figure, drawn: DrawnRanks) -> pl.DataFrame:
    """The points with their hover texts and their place on the picture, in percent from its left and top."""
    points = _hover_texts(drawn)
    xs: list[float] = []
    ys: list[float] = []
    for panel in drawn.panels:
        for x, y in _centres(figure, panel):
            xs.append(x)
            ys.append(y)
    return points.with_columns(pl.Series("x", xs, pl.Float64), pl.Series("y", ys, pl.Float64))


def _centres(figure: Figure, panel: RankPanel) -> list[tuple[float, float]]:
    """Where each row of a panel is drawn, in percent of the figure from its left and top: at its rank, or on
    the bottom edge on a day it was not ranked."""
    rows = panel.rows
    if rows.height == 0:
        return []
    data = [
        (float(mdates.date2num(day)), float(rank) if status == "ranked" else float(panel.lowest))
        for day, status, rank in rows.select("date", "status", "rank").iter_rows()
    ]
    shown = panel.ax.transData.transform(data)
    fractions = figure.transFigure.inverted().transform(shown)
    return [(100 * float(fx), 100 * (1 - float(fy))) for fx, fy in fractions]


def _targets(figure: Figure, drawn: DrawnRanks, points: pl.DataFrame) -> list[_Target]:
    """A hover target over each point, by panel and day, top to bottom; points closer than a target share one."""
    width_px, height_px = figure.bbox.width, figure.bbox.height
    found: list[_Target] = []
    start = 0
    for panel in drawn.panels:
        rows = points.slice(start, panel.rows.height)
        start += panel.rows.height
        side = TARGET_PIXELS * figure.dpi / 100  # the picture is drawn at 100 dpi
        wide = min(side, max(4.0, 0.9 * _day_pixels(panel.ax)))
        w, h = 100 * wide / width_px, 100 * side / height_px
        for (_day,), day_rows in rows.sort("date", maintain_order=True).group_by("date", maintain_order=True):
            ordered = day_rows.sort("y", "app_id")
            x = float(ordered["x"][0])
            group: list[tuple[float, str]] = []
            for y, text in ordered.select("y", "text").iter_rows():
                if group and y - group[-1][0] >= h:
                    found.append(_group_target(x, group, w, h))
                    group = []
                group.append((y, text))
            found.append(_group_target(x, group, w, h))
    return found


def _group_target(x: float, group: Sequence[tuple[float, str]], w: float, h: float) -> _Target:
    top, bottom = group[0][0], group[-1][0]
    return _Target(x - w / 2, top - h / 2, w, bottom - top + h, [text for _, text in group])


def _day_pixels(ax: Axes) -> float:
    """The width of a day on an Axes, in display pixels."""
    (x0, _), (x1, _) = ax.transData.transform([(0.0, 1.0), (1.0, 1.0)])
    return abs(float(x1 - x0))


def _description(drawn: DrawnRanks) -> str:
    """The chart in one line, what a reader without the picture is told (its alt text)."""
    rows = pl.concat([p.rows for p in drawn.panels])
    apps = rows["app_id"].unique(maintain_order=True).to_list()
    names = ", ".join(_app_words(a, drawn.labels) for a in apps)
    keywords = ", ".join(f"“{k}”" for k in rows["keyword"].unique(maintain_order=True).to_list())
    first, last = cast(date, rows["date"].min()), cast(date, rows["date"].max())  # a pl.Date column with rows
    return (
        f"Rank chart of {names} on {keywords}, {first.isoformat()} to {last.isoformat()}; "
        "in a notebook, rest the pointer on a point for its app, rank, day and move"
    )
