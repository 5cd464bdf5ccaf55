"""The rank chart with hover details: each point's text, its target over the picture, the HTML a notebook shows.

A small hand-made history whose every day says something different (a move up and down, unchanged,
entered, left, a day without data, a day never fetched), so each hover text is asserted whole; the
targets are read back from the HTML as a browser's parser reads them.
"""

from __future__ import annotations

import base64
import re
from datetime import date
from html.parser import HTMLParser

import polars as pl
import pytest
from matplotlib.figure import Figure

from storeframes import plots
from storeframes.plots import HoverChart, figure_png, hover_rank_chart

PNG = b"\x89PNG\r\n\x1a\n"
MINUS = "\N{MINUS SIGN}"


def day(n: int) -> date:
    return date(2026, 1, n)


# (day, app, rank) of keyword "maps": app "9" fills the list; day 4 has no results, day 6 was never fetched
ROWS = [
    (1, "1", 1),
    (1, "9", 2),
    (1, "2", 3),
    (2, "9", 1),
    (2, "1", 2),
    (3, "9", 1),
    (3, "1", 2),
    (3, "2", 3),
    (5, "1", 1),
    (5, "2", 2),
    (7, "9", 1),
    (7, "1", 4),
    (8, "1", 2),
    (8, "9", 3),
]
FETCHED = [day(n) for n in (1, 2, 3, 4, 5, 7, 8)]


def history() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "keyword": ["maps"] * len(ROWS),
            "date": [day(d) for d, _, _ in ROWS],
            "app_id": [a for _, a, _ in ROWS],
            "rank": [r for _, _, r in ROWS],
            "country": ["us"] * len(ROWS),
            "language": ["en"] * len(ROWS),
            "device": ["iphone"] * len(ROWS),
        }
    )


def changes() -> pl.DataFrame:
    rows = [("1", 2, "version"), ("2", 3, "title"), ("2", 3, "screenshots"), ("2", 7, "icon"), ("1", 5, "size")]
    return pl.DataFrame(
        {"app_id": [a for a, _, _ in rows], "date": [day(d) for _, d, _ in rows], "target": [t for _, _, t in rows]}
    )


def chart(**kwargs) -> HoverChart:
    given = {"changes": changes(), "names": {"1": "Maps Pro"}, "fetched": FETCHED, "end": day(8), **kwargs}
    return hover_rank_chart(history(), ["1", "2"], **given)


EXPECTED = {
    ("1", 1): "Maps Pro (1) · “maps” · 2026-01-01 · rank 1",
    ("1", 2): f"Maps Pro (1) · “maps” · 2026-01-02 · rank 2 · {MINUS}1 since the day before · listing change: version",
    ("1", 3): "Maps Pro (1) · “maps” · 2026-01-03 · rank 2 · unchanged since the day before",
    ("1", 4): "Maps Pro (1) · “maps” · 2026-01-04 · no data",
    ("1", 5): "Maps Pro (1) · “maps” · 2026-01-05 · rank 1 · no data the day before",
    ("1", 6): "Maps Pro (1) · “maps” · 2026-01-06 · not fetched",
    ("1", 7): "Maps Pro (1) · “maps” · 2026-01-07 · rank 4 · not fetched the day before",
    ("1", 8): "Maps Pro (1) · “maps” · 2026-01-08 · rank 2 · +2 since the day before",
    ("2", 1): "2 · “maps” · 2026-01-01 · rank 3",
    ("2", 2): "2 · “maps” · 2026-01-02 · not ranked · left (rank 3 the day before)",
    (
        "2",
        3,
    ): "2 · “maps” · 2026-01-03 · rank 3 · entered (not ranked the day before) · listing changes: screenshots, title",
    ("2", 4): "2 · “maps” · 2026-01-04 · no data",
    ("2", 5): "2 · “maps” · 2026-01-05 · rank 2 · no data the day before",
    ("2", 6): "2 · “maps” · 2026-01-06 · not fetched",
    ("2", 7): "2 · “maps” · 2026-01-07 · not ranked · listing change: icon",
    ("2", 8): "2 · “maps” · 2026-01-08 · not ranked",
}
"""Every point's hover text: a day not known (no data, not fetched) is never a move; the size change is not marked."""


class _Page(HTMLParser):
    """The elements of an HTML fragment as a browser's parser reads them: (tag, attributes), in order."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, {k: v or "" for k, v in attrs}))


def spans(text: str) -> list[dict[str, str]]:
    return [attrs for tag, attrs in _Page(text).elements if tag == "span"]


def box(style: str) -> dict[str, float]:
    """left, top, width and height of a target, in percent of the picture."""
    found = dict(re.findall(r"(left|top|width|height):(-?[\d.]+)%", style))
    return {k: float(v) for k, v in found.items()}


# -- the texts ----------------------------------------------------------------------------------


def test_each_point_has_its_hover_text():
    points = chart().points
    got = {(a, d.day): t for a, d, t in points.select("app_id", "date", "text").iter_rows()}
    assert got == EXPECTED
    statuses = {(a, d.day): s for a, d, s in points.select("app_id", "date", "status").iter_rows()}
    assert (statuses[("1", 4)], statuses[("1", 6)], statuses[("2", 2)]) == ("no_data", "not_fetched", "not_ranked")


def test_the_place_is_named_when_the_chart_has_several():
    frame = pl.concat([history(), history().with_columns(pl.lit("gb").alias("country"))])
    points = hover_rank_chart(frame, ["1"], keywords="maps").points
    assert points.filter(pl.col("date") == day(1))["text"].to_list() == [
        "1 · “maps” (us, iphone) · 2026-01-01 · rank 1",
        "1 · “maps” (gb, iphone) · 2026-01-01 · rank 1",
    ]
    assert chart().points["text"][0] == "Maps Pro (1) · “maps” · 2026-01-01 · rank 1"  # one place: not repeated


# -- the targets over the picture ---------------------------------------------------------------------


def test_one_target_a_point_and_points_on_the_same_spot_share_one():
    made = chart()
    found = spans(made.html)
    titles = [s["title"] for s in found]
    # days 4 and 6 put both apps on the bottom edge, at one spot: one target, a line each, by app
    assert titles.count(f"{EXPECTED[('1', 4)]}\n{EXPECTED[('2', 4)]}") == 1
    assert titles.count(f"{EXPECTED[('1', 6)]}\n{EXPECTED[('2', 6)]}") == 1
    assert len(found) == len(EXPECTED) - 2
    lines = [line for title in titles for line in title.split("\n")]
    assert sorted(lines) == sorted(EXPECTED.values())  # every point told once


def test_each_target_is_centred_on_its_point_as_the_chart_draws_it():
    made = chart()
    [ax] = made.figure.axes
    line = next(line for line in ax.get_lines() if len(line.get_xdata()) == 8)  # app 1's rank line
    drawn = made.figure.transFigure.inverted().transform(ax.transData.transform(line.get_xydata()))
    by_title = {s["title"]: box(s["style"]) for s in spans(made.html)}
    for n, (fx, fy) in enumerate(drawn, start=1):
        if fy != fy:  # nan: a day app 1 was not ranked, drawn as a gap
            continue
        target = by_title[EXPECTED[("1", n)]]
        assert target["left"] + target["width"] / 2 == pytest.approx(100 * fx, abs=0.002)
        assert target["top"] + target["height"] / 2 == pytest.approx(100 * (1 - fy), abs=0.002)
        assert 0 < target["width"] <= target["height"]  # as wide as a day allows, never wider than tall


def test_the_html_is_the_picture_and_the_targets_nothing_else():
    made = chart()
    text = made.html
    elements = _Page(text).elements
    assert [tag for tag, _ in elements[:2]] == ["div", "img"]
    assert {tag for tag, _ in elements[2:]} == {"span"}
    image = elements[1][1]
    assert base64.b64decode(image["src"].removeprefix("data:image/png;base64,")) == made.png
    assert (int(image["width"]), int(image["height"])) == (1000, 390)  # the PNG's own pixels
    assert image["alt"] == made.description
    assert "<script" not in text.lower() and "http" not in text and "href" not in text
    assert re.findall(r'\b(?:src|href|xlink:href)="([^"]*)"', text) == [image["src"]]  # nothing fetched
    assert "<svg" not in text  # an untrusted notebook's sanitizer keeps none of svg: spans it keeps


def test_the_same_chart_gives_the_same_bytes():
    first, second = chart(), chart()
    assert first.html == second.html and first.png == second.png


def test_third_party_titles_are_escaped():
    made = chart(names={"1": 'Maps <b>"Pro"</b> & Co'})
    assert "<b>" not in made.html and '"Pro"' not in made.html
    titles = [s["title"] for s in spans(made.html)]
    assert 'Maps <b>"Pro"</b> & Co (1) · “maps” · 2026-01-01 · rank 1' in titles


# -- what a notebook shows ----------------------------------------------------------------------------


def test_a_notebook_shows_the_html_and_keeps_the_static_png():
    made = chart()
    bundle = made._repr_mimebundle_()
    assert set(bundle) == {"text/html", "image/png", "text/plain"}
    assert bundle["text/html"] == made.html
    png = base64.b64decode(bundle["image/png"])
    assert png.startswith(PNG) and png == made.png
    static = plots.rank_chart(history(), ["1", "2"], changes=changes(), names={"1": "Maps Pro"}, fetched=FETCHED)
    assert png == figure_png(static)  # the picture is the static chart's, to the byte
    assert (
        bundle["text/plain"]
        == made.description
        == (
            "Rank chart of Maps Pro (1), 2 on “maps”, 2026-01-01 to 2026-01-08; "
            "in a notebook, rest the pointer on a point for its app, rank, day and move"
        )
    )


def test_a_chart_of_nothing_is_its_message_with_no_targets():
    made = hover_rank_chart(history(), ["5"], keywords="maps")
    assert isinstance(made.figure, Figure) and made.points.height == 0
    assert spans(made.html) == []
    assert made.description.startswith("No ranks for “maps” in us · iphone from 2026-01-01 to 2026-01-08")
    assert made.png.startswith(PNG)


def test_errors_speak_as_hover_rank_chart():
    with pytest.raises(Exception, match="hover_rank_chart"):
        hover_rank_chart(history(), [])
