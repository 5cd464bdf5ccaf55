"""keyword_opportunities: one row per keyword, ranks and counts read off the latest day, a score by its formula."""

from __future__ import annotations

import itertools
from datetime import date

import polars as pl
import pytest

import storeframes as sf
from storeframes.analysis import OPPORTUNITIES, SCORE_WEIGHTS, keyword_opportunities
from storeframes.errors import InvalidParameterError

from ..conftest import SANDBOX_TODAY, sandbox_client_on

KEYWORDS = ["photo editor", "photo filters", "selfie camera", "collage maker", "video editor"]
APP = "3233849169"


@pytest.fixture(scope="module")
def month(tmp_path_factory) -> tuple[pl.DataFrame, list[str], pl.DataFrame]:
    """A sandbox month of history, three competitors (the apps most often in its top 10) and their changes."""
    with sandbox_client_on(SANDBOX_TODAY, tmp_path_factory.mktemp("opportunities")) as client:
        history = client.search_history_frame(KEYWORDS, start="2026-10-01", end="2026-10-31")
        common = history.filter(pl.col("rank") <= 10, pl.col("app_id") != APP)["app_id"].value_counts(sort=True)
        rivals = common["app_id"].head(3).to_list()
        changes = client.changes_frame(rivals, start="2026-10-01", end="2026-10-31")
    return history, rivals, changes


def _latest(history: pl.DataFrame, keyword: str) -> pl.DataFrame:
    rows = history.filter(pl.col("keyword") == keyword)
    return rows.filter(pl.col("date") == rows["date"].max())


def _rank(rows: pl.DataFrame, app: str) -> int | None:
    ranks = rows.filter(pl.col("app_id") == app)["rank"]
    return None if ranks.len() == 0 else ranks.min()


def test_one_row_per_keyword_with_the_latest_days_ranks_and_counts(month):
    history, rivals, _ = month
    found = keyword_opportunities(history, APP, rivals, top=10)
    assert found.schema == OPPORTUNITIES.schema
    assert sorted(found["keyword"]) == sorted(KEYWORDS)
    for row in found.iter_rows(named=True):
        latest = _latest(history, row["keyword"])
        assert row["latest_date"] == latest["date"][0]
        assert row["results"] == latest.height
        assert row["app_rank"] == _rank(latest, APP)
        ranks = {r: _rank(latest, r) for r in rivals if _rank(latest, r) is not None}
        assert row["best_competitor_rank"] == min(ranks.values())
        assert ranks[row["best_competitor"]] == row["best_competitor_rank"]
        assert row["competitors_in_top"] == sum(1 for r in ranks.values() if r <= 10)
        days = history.filter(pl.col("keyword") == row["keyword"])["date"]
        assert row["days_recorded"] == days.n_unique()
        first = history.filter(pl.col("keyword") == row["keyword"], pl.col("date") == days.min())
        start = _rank(first, APP)
        assert row["app_rank_change"] == (None if start is None or row["app_rank"] is None else start - row["app_rank"])


def _volatility(history: pl.DataFrame, keyword: str, top: int) -> float:
    rows = history.filter(pl.col("keyword") == keyword, pl.col("rank") <= top)
    tops = [set(g["app_id"]) for _, g in sorted(rows.group_by("date"), key=lambda item: item[0][0])]
    shares = [len(today - before) / len(today) for before, today in itertools.pairwise(tops)]
    return sum(shares) / len(shares)


def test_the_score_follows_its_formula(month):
    history, rivals, _ = month
    found = keyword_opportunities(history, APP, rivals, top=10)
    for row in found.iter_rows(named=True):
        assert row["volatility"] == pytest.approx(_volatility(history, row["keyword"], 10))
        rank = row["app_rank"]
        room = 1.0 if rank is None or rank > 10 else (rank - 1) / 10
        points = (
            room * SCORE_WEIGHTS["room"]
            + row["competitors_in_top"] / 3 * SCORE_WEIGHTS["competition"]
            + row["volatility"] * SCORE_WEIGHTS["volatility"]
        ) * (100 / 90)
        assert row["score"] == pytest.approx(points, abs=0.006)
        assert row["why"].endswith(f"score {row['score']}")
        assert f"competitors {row['competitors_in_top']}/3 in the top 10" in row["why"]
    assert found["score"].to_list() == sorted(found["score"].to_list(), reverse=True)


def test_ads_count_the_distinct_advertisers_and_weigh_ten_points():
    day = date(2026, 1, 1)
    history = pl.DataFrame(
        {"keyword": ["maps"] * 2 + ["taxi"] * 2, "date": [day] * 4, "rank": [1, 2] * 2, "app_id": ["b", "a", "b", "a"]}
    )
    ads = pl.DataFrame(
        {
            "keyword": ["maps"] * 4 + ["taxi"] * 2,
            "date": [day] * 6,
            "rank": [1, 2, 3, 4, 1, 2],
            "app_id": ["x", "y", "z", "b", "b", "a"],
            "is_ad": [True, True, True, False, False, False],
        }
    )
    found = keyword_opportunities(history, "a", ["b"], top=2, ads=ads).sort("keyword")
    assert found["advertisers"].to_list() == [3, 0]
    # room (2-1)/2 = 0.5 -> 20; competition 1/1 -> 30; volatility 0 (one day); ads 1 - 3/4 -> 2.5 and 1 -> 10
    assert found["score"].to_list() == [52.5, 60.0]
    assert "3 advertisers: 2.5 pts" in found["why"][0]


def test_a_keyword_with_no_day_with_ads_says_its_advertisers_are_unknown():
    day = date(2026, 1, 1)
    history = pl.DataFrame({"keyword": ["maps", "taxi"], "date": [day] * 2, "rank": [1, 1], "app_id": ["b", "b"]})
    ads = pl.DataFrame({"keyword": ["maps"], "date": [day], "rank": [1], "app_id": ["x"], "is_ad": [True]})
    found = keyword_opportunities(history, "a", "b", top=1, ads=ads).sort("keyword")
    assert found["advertisers"].to_list() == [1, None]
    assert "advertisers unknown" in found["why"][1]
    # not ranked: room 1 -> 40; competition 1 -> 30; volatility 0; maps: ads 0.75 -> 7.5; taxi: scaled by 100/90
    assert found["score"].to_list() == [77.5, pytest.approx(77.78)]


def test_competitor_changes_count_the_changes_of_the_competitors_in_the_top(month):
    history, rivals, changes = month
    found = keyword_opportunities(history, APP, rivals, top=10, changes=changes)
    for row in found.iter_rows(named=True):
        latest = _latest(history, row["keyword"])
        in_top = [r for r in rivals if (_rank(latest, r) or 99) <= 10]
        first = history.filter(pl.col("keyword") == row["keyword"])["date"].min()
        made = changes.filter(pl.col("app_id").is_in(in_top), pl.col("date").is_between(first, row["latest_date"]))
        assert row["competitor_changes"] == made.height
    assert found["competitor_changes"].sum() > 0


def test_each_place_is_its_own_row():
    day = date(2026, 1, 1)
    history = pl.DataFrame(
        {
            "keyword": ["maps"] * 4,
            "date": [day] * 4,
            "rank": [1, 2, 1, 2],
            "app_id": ["a", "b", "b", "a"],
            "country": ["us", "us", "de", "de"],
        }
    )
    found = keyword_opportunities(history, "a", ["b"], top=2)
    assert found.select("country", "app_rank", "best_competitor_rank").sort("country").rows() == [
        ("de", 2, 1),
        ("us", 1, 2),
    ]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("a,b", ["c"]), "one app id"),
        (("a", []), "an app id or a list of them"),
        (("a", ["a"]), "not the app's own"),
    ],
)
def test_bad_apps_are_refused(args, words):
    history = pl.DataFrame({"keyword": ["maps"], "date": [date(2026, 1, 1)], "rank": [1], "app_id": ["a"]})
    with pytest.raises(InvalidParameterError, match="keyword_opportunities") as raised:
        keyword_opportunities(history, *args)
    assert words in str(raised.value)


def test_top_must_be_a_whole_number():
    history = pl.DataFrame({"keyword": ["maps"], "date": [date(2026, 1, 1)], "rank": [1], "app_id": ["a"]})
    with pytest.raises(InvalidParameterError, match="a whole number of 1 or more"):
        sf.keyword_opportunities(history, "a", "b", top=0)
