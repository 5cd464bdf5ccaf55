"""standings and standings_table: where each tracked app stands, its 1/7/30-day changes counted by hand, holes
never read as moves, and the table a person reads (sparklines whose days say their rank, no script)."""

from __future__ import annotations

import base64
import re
from datetime import date, timedelta

import polars as pl
import pytest

import storeframes as sf
from storeframes.analysis import (
    CTR_CURVE,
    STANDINGS,
    sparkline_html,
    sparkline_svg,
    sparkline_text,
    standings,
    standings_table,
)
from storeframes.errors import InvalidParameterError

from ..conftest import SANDBOX_TODAY, sandbox_client_on

END = date(2026, 11, 30)
DAYS = [END - timedelta(days=n) for n in range(40, -1, -1)]  # 41 days, the last one END


def _history(ranks: dict[str, list[int | None]], results: int = 50) -> pl.DataFrame:
    """A keyword's days: each app at its rank (None: not among the results that day), other apps filling up to
    ``results`` places."""
    rows = []
    for i, day in enumerate(DAYS):
        taken = {app: r[i] for app, r in ranks.items() if r[i] is not None}
        filler = (p for p in range(1, results + 1) if p not in taken.values())
        rows += [{"keyword": "maps", "date": day, "app_id": app, "rank": place} for app, place in taken.items()]
        rows += [{"keyword": "maps", "date": day, "app_id": f"other{p}", "rank": p} for p in filler]
    return pl.DataFrame(rows, schema={"keyword": pl.String, "date": pl.Date, "app_id": pl.String, "rank": pl.Int64})


def test_changes_best_share_and_order_on_a_small_history():
    steady = [7] * 41
    climber = [30] * 30 + [12] * 10 + [3]
    history = _history({"a": steady, "b": climber})
    out = standings(history, ["a", "b"])
    assert out.schema == STANDINGS.schema
    assert out["app_id"].to_list() == ["b", "a"]  # the biggest move first
    b, a = out.rows(named=True)
    assert (b["rank"], b["status"], b["change_1d"], b["change_7d"], b["change_30d"]) == (3, "ranked", 9, 9, 27)
    assert (b["was_1d"], b["was_7d"], b["was_30d"]) == ("ranked", "ranked", "ranked")
    assert (b["best"], b["best_date"], b["biggest_move"]) == (3, END, 27)
    assert (a["change_1d"], a["change_7d"], a["change_30d"], a["biggest_move"]) == (0, 0, 0, 0)
    assert b["share"] == pytest.approx(CTR_CURVE[3] / sum(CTR_CURVE.values()))
    assert a["share"] == pytest.approx(CTR_CURVE[7] / sum(CTR_CURVE.values()))
    assert len(b["trend"]) == len(b["trend_status"]) == 31 and b["trend_start"] == END - timedelta(days=30)
    assert b["trend"][-11:] == [12] * 10 + [3]
    assert a["date"] == END and out["date"].unique().to_list() == [END]


def test_entering_and_leaving_the_results_are_said_and_sized_not_counted_as_a_number():
    left = [5] * 40 + [None]  # among 50 results until the last day
    entered = [None] * 33 + [40] * 8  # in from 8 days before
    out = standings(_history({"x": left, "y": entered}), ["x", "y"])
    x = out.filter(pl.col("app_id") == "x").row(0, named=True)
    y = out.filter(pl.col("app_id") == "y").row(0, named=True)
    assert (x["rank"], x["status"], x["change_1d"], x["was_1d"]) == (None, "not_ranked", None, "ranked")
    assert x["biggest_move"] == 51 - 5  # from 5 to the place after the last of 50 results
    assert x["share"] == 0.0 and x["best"] == 5
    assert (y["change_1d"], y["change_7d"], y["was_7d"], y["change_30d"], y["was_30d"]) == (
        0,
        0,
        "ranked",
        None,
        "not_ranked",
    )
    assert y["biggest_move"] == 51 - 40
    assert out["app_id"].to_list() == ["x", "y"]


def test_a_day_not_fetched_or_without_data_is_never_a_move():
    ranks = [10] * 41
    history = _history({"a": ranks}).filter(
        ~pl.col("date").is_in([END - timedelta(days=1), END - timedelta(days=7)])  # no results those days
    )
    asked = [d for d in DAYS if d != END - timedelta(days=7)]  # the day 7 days before was never asked for
    out = standings(history, "a", fetched=asked).row(0, named=True)
    assert (out["change_1d"], out["was_1d"]) == (None, "no_data")
    assert (out["change_7d"], out["was_7d"]) == (None, "not_fetched")
    assert (out["change_30d"], out["was_30d"], out["biggest_move"]) == (0, "ranked", 0)
    assert out["trend_status"].count("not_fetched") == 1 and out["trend_status"].count("no_data") == 1
    today = standings(history, "a", end=END - timedelta(days=1), fetched=asked).row(0, named=True)
    assert (today["rank"], today["status"], today["share"], today["biggest_move"]) == (None, "no_data", None, None)


def test_end_days_and_top_shape_the_period():
    history = _history({"a": list(range(41, 0, -1))})  # one place better every day
    out = standings(history, "a", end=END - timedelta(days=5), days=7, top=3).row(0, named=True)
    assert out["rank"] == 6 and out["change_1d"] == 1 and out["change_7d"] == 7 and out["change_30d"] == 30
    assert len(out["trend"]) == 8 and out["trend"][0] == 13 and out["best"] == 6
    assert out["share"] == 0.0  # outside the top 3
    assert standings(history, "a", end=END, top=3, weights="equal").row(0, named=True)["share"] == pytest.approx(1 / 3)


def test_bad_inputs_are_refused_before_anything_is_computed():
    history = _history({"a": [1] * 41})
    with pytest.raises(InvalidParameterError, match="days"):
        standings(history, "a", days=0)
    with pytest.raises(InvalidParameterError, match="apps"):
        standings(history, [])
    with pytest.raises(InvalidParameterError, match="rank"):
        standings(history.drop("rank"), "a")
    with pytest.raises(InvalidParameterError, match="end"):
        standings(history, "a", end="yesterday")
    with pytest.raises(InvalidParameterError, match="names"):
        standings_table(standings(history, "a"), names=["a"])  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="standings"):
        standings_table(history)


def test_an_empty_history_gives_no_rows_and_a_table_that_says_so():
    empty = pl.DataFrame(schema={"keyword": pl.String, "date": pl.Date, "app_id": pl.String, "rank": pl.Int64})
    out = standings(empty, "a")
    assert out.height == 0 and out.schema == STANDINGS.schema
    table = standings_table(out)
    assert table.rows == 0 and "No standings" in table.html and "No standings" in table.markdown


def test_pandas_and_lazy_inputs_give_the_same_frame():
    history = _history({"a": [3] * 20 + [9] * 21})
    expected = standings(history, "a")
    assert standings(history.lazy(), "a").equals(expected)
    assert standings(history.to_pandas(), "a").equals(expected)


def test_the_table_shows_each_cell_as_a_person_reads_it():
    left = [5] * 40 + [None]
    climber = [30] * 30 + [12] * 10 + [3]
    out = standings(_history({"x": left, "b": climber}), ["x", "b"])
    table = standings_table(out, names={"b": "Brush <Pro>"})
    html = table.html
    assert html.index('standing">x ') < html.index("Brush &lt;Pro&gt;")  # the biggest move first (46), names escaped
    assert html.count('<div class="scroll"><table class="standings">') == 2
    assert "<script" not in html and "http" not in html.lower() and "href" not in html
    assert html.count('<span class="spark"') == 2 and html.count("<span title=") == 2 * 31  # a hover target a day
    assert "<svg" not in html and html.count('<img src="data:image/svg+xml;base64,') == 2
    assert "2026-11-30 · rank 3 · up 9 since the day before" in html
    assert "2026-11-30 · not ranked · left the results since the day before" in html
    assert re.search(r'<td class="num down" title="left the results">left</td>', html)
    assert '<td class="num up" title="up 27">▲ 27</td>' in html
    assert "share of voice 12.5% over 1 keyword" in html  # the third place: 0.110 of 0.880
    md = table.markdown
    assert "### Brush \\<Pro\\> (b) · share of voice 12.5% over 1 keyword" in md
    assert "| maps | 3 | +9 | +9 | +27 | 3 (11-30) | 12.5% |" in md
    assert "| maps | not ranked | left | left | left | 5 (11-29) |" in md
    assert md.rstrip().endswith(sf.analysis.standings_view.MARKDOWN_LEGEND)
    assert table._repr_html_().startswith("<style>") and table._repr_markdown_() == md


def test_a_sparkline_draws_ranks_and_tells_its_holes_apart():
    statuses = ["ranked", "no_data", "not_fetched", "not_ranked", "ranked", "ranked"]
    ranks = [4, None, None, None, 2, 1]
    svg = sparkline_svg(date(2026, 11, 1), ranks, statuses, label="maps")
    assert svg.startswith('<svg xmlns="http://www.w3.org/2000/svg"') and "<title>maps</title>" in svg
    assert svg.count('fill="#e4e4e4"') == 1 and svg.count('fill="#f5c26b"') == 1  # no data, not fetched
    assert svg.count("<polyline") == 1 and svg.count("<circle") == 2  # 2 -> 1 a line, 4 a point, the last dot
    part = sparkline_html(date(2026, 11, 1), ranks, statuses, label="maps <best 1>")
    assert (
        'title="2026-11-03 · not fetched"' in part and 'title="2026-11-06 · rank 1 · up 1 since the day before"' in part
    )
    assert 'title="2026-11-05 · rank 2 · entered the results since the day before"' in part
    assert 'alt="maps &lt;best 1&gt;"' in part and "http" not in part.lower() and "<script" not in part
    encoded = re.search(r'src="data:image/svg\+xml;base64,([^"]+)"', part)
    assert encoded is not None and base64.b64decode(encoded.group(1)).decode() == sparkline_svg(
        date(2026, 11, 1), ranks, statuses, label="maps <best 1>"
    )
    lefts = [float(x) for x in re.findall(r"left:([0-9.]+)%", part)]
    assert lefts == sorted(lefts) and len(lefts) == 6 and lefts[0] == 0.0  # a target a day, left to right
    assert sparkline_text(ranks, statuses) == "▁·?_▆█"
    assert sparkline_html(date(2026, 11, 1), ranks, statuses, label="maps <best 1>") == part  # the same bytes


def test_standings_of_a_sandbox_history_match_rank_history(tmp_path):
    apps = ["3233849169", "394079159", "6441354028"]
    with sandbox_client_on(SANDBOX_TODAY, tmp_path) as client:
        history = client.search_history_frame(["photo editor", "collage maker"], start="2026-10-01", end="2026-11-10")
    out = standings(history, apps, end="2026-11-10")
    ranks = sf.rank_history(history, apps, start="2026-10-11", end="2026-11-10")
    assert out.height == 6
    rank_of = {(r["app_id"], r["keyword"], r["date"]): (r["rank"], r["status"]) for r in ranks.iter_rows(named=True)}
    for row in out.iter_rows(named=True):
        now = rank_of[row["app_id"], row["keyword"], date(2026, 11, 10)]
        assert (row["rank"], row["status"]) == now
        for n in (1, 7, 30):
            then = rank_of[row["app_id"], row["keyword"], date(2026, 11, 10) - timedelta(days=n)]
            both = now[1] == then[1] == "ranked"
            assert row[f"change_{n}d"] == (then[0] - now[0] if both else None)
            assert row[f"was_{n}d"] == then[1]
