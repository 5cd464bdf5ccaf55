"""share_of_voice: the share of the top places each app holds, day by day, counted by hand on a sandbox month."""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import date

import polars as pl
import pytest

import storeframes as sf
from storeframes.analysis import CTR_CURVE, SHARE_OF_VOICE, ctr_weight, share_of_voice
from storeframes.errors import InvalidParameterError

from ..conftest import SANDBOX_TODAY, sandbox_client_on

KEYWORDS = ["photo editor", "photo filters", "selfie camera", "collage maker"]


@pytest.fixture(scope="module")
def month(tmp_path_factory) -> pl.DataFrame:
    """A sandbox month of search history for four keywords (some days missed by the service)."""
    with sandbox_client_on(SANDBOX_TODAY, tmp_path_factory.mktemp("voice")) as client:
        return client.search_history_frame(KEYWORDS, start="2026-10-01", end="2026-10-31")


def _by_hand(history: pl.DataFrame, top: int) -> tuple[dict, dict, dict]:
    """Per (day, app): places held in the top; per day: keywords recorded; from the rows, in plain Python."""
    held: Counter = Counter()
    words: defaultdict = defaultdict(set)
    recorded: defaultdict = defaultdict(set)
    for row in history.iter_rows(named=True):
        recorded[row["date"]].add(row["keyword"])
        if row["rank"] <= top:
            held[row["date"], row["app_id"]] += 1
            words[row["date"], row["app_id"]].add(row["keyword"])
    return held, words, recorded


def test_equal_weights_equal_a_count_by_hand_on_a_sandbox_month(month):
    sov = share_of_voice(month, top=10, weights="equal")
    held, words, recorded = _by_hand(month, 10)
    assert sov.schema == SHARE_OF_VOICE.schema
    days = {d for d in recorded}
    apps = {app for _, app in held}
    assert sov.height == len(apps) * 31  # every app that held a place, on every day of the month
    for row in sov.iter_rows(named=True):
        day, app = row["date"], row["app_id"]
        if day not in days:
            assert row["share"] is None and row["keywords_recorded"] == 0
            continue
        assert row["positions"] == held[day, app]
        assert row["keywords"] == len(words[day, app])
        assert row["keywords_recorded"] == len(recorded[day])
        assert row["keywords_tracked"] == len(KEYWORDS)
        assert row["share"] == pytest.approx(held[day, app] / (10 * len(recorded[day])))
    # on every day with data the shares of all the apps add up to the whole top
    totals = sov.filter(pl.col("keywords_recorded") > 0).group_by("date").agg(pl.col("share").sum())
    assert totals["share"].to_list() == pytest.approx([1.0] * totals.height)


def test_a_day_a_keyword_was_missed_counts_only_the_keywords_recorded(month):
    sov = share_of_voice(month, top=10, weights="equal")
    partial = sov.filter(pl.col("keywords_recorded").is_between(1, len(KEYWORDS) - 1))
    assert partial.height > 0, "the sandbox misses about 5 % of the days: a month of four keywords has some"
    day = partial["date"][0]
    recorded = month.filter(pl.col("date") == day)["keyword"].n_unique()
    assert partial.filter(pl.col("date") == day)["keywords_recorded"].unique().to_list() == [recorded]


def test_ctr_weights_follow_the_documented_curve(month):
    ctr = share_of_voice(month, top=10)
    day = month["date"].max()
    rows = month.filter(pl.col("date") == day, pl.col("rank") <= 10)
    app = ctr.filter(pl.col("date") == day)["app_id"][0]  # the largest share that day
    mine = rows.filter(pl.col("app_id") == app)["rank"].to_list()
    expected = sum(CTR_CURVE[r] for r in mine) / (rows["keyword"].n_unique() * sum(CTR_CURVE.values()))
    assert ctr.filter(pl.col("date") == day, pl.col("app_id") == app)["share"][0] == pytest.approx(expected)
    assert ctr_weight(1) / ctr_weight(10) == pytest.approx(11.4)
    assert ctr_weight(20) == pytest.approx(0.0125)


def test_a_mapping_or_a_function_gives_another_curve(month):
    first_only = share_of_voice(month, top=3, weights={1: 1.0})
    by_function = share_of_voice(month, top=3, weights=lambda place: 1.0 if place == 1 else 0.0)
    assert first_only.equals(by_function)
    day = month.filter(pl.col("date") == month["date"].max())
    leaders = Counter(day.filter(pl.col("rank") == 1)["app_id"].to_list())
    top = first_only.filter(pl.col("date") == day["date"][0], pl.col("share") > 0)
    assert dict(zip(top["app_id"], top["share"], strict=True)) == pytest.approx(
        {a: n / day["keyword"].n_unique() for a, n in leaders.items()}
    )


def test_apps_given_get_a_row_every_day_even_without_a_place(month):
    nowhere = "999999999"
    sov = share_of_voice(month, [nowhere, "3233849169"], top=10, weights="equal")
    assert sorted(sov["app_id"].unique().to_list()) == ["3233849169", nowhere]
    assert sov.height == 2 * 31
    assert set(sov.filter(pl.col("app_id") == nowhere, pl.col("keywords_recorded") > 0)["share"]) == {0.0}


def test_by_developer_adds_up_each_developers_apps():
    day = date(2026, 1, 1)
    history = pl.DataFrame({"keyword": ["maps"] * 3, "date": [day] * 3, "rank": [1, 2, 3], "app_id": ["a", "b", "c"]})
    metadata = pl.DataFrame({"app_id": ["a", "b"], "developer_id": ["d1", "d1"], "developer_name": ["One", "One"]})
    sov = share_of_voice(history, top=3, weights="equal", by="developer", metadata=metadata)
    assert sov.columns[:3] == ["date", "developer_id", "developer_name"]
    assert sov.select("developer_id", "developer_name", "share", "positions").rows() == [
        ("d1", "One", pytest.approx(2 / 3), 2),
        ("c", None, pytest.approx(1 / 3), 1),
    ]


def test_a_day_without_any_keyword_recorded_is_a_hole_not_a_zero():
    history = pl.DataFrame(
        {
            "keyword": ["maps", "maps"],
            "date": [date(2026, 1, 1), date(2026, 1, 3)],
            "rank": [1, 1],
            "app_id": ["a", "a"],
        }
    )
    sov = share_of_voice(history, top=1, weights="equal")
    assert sov.select("date", "share", "positions", "keywords_recorded").rows() == [
        (date(2026, 1, 1), 1.0, 1, 1),
        (date(2026, 1, 2), None, None, 0),
        (date(2026, 1, 3), 1.0, 1, 1),
    ]


def test_the_organic_list_of_a_caches_snapshots_and_a_live_search_with_ads(sandbox):
    live = sandbox.search_frame(KEYWORDS[:2], ads=True)
    sov = share_of_voice(live, top=5, weights="equal")
    organic = live.filter(~pl.col("is_ad"), pl.col("organic_rank") <= 5)
    assert sov["positions"].sum() == organic.height == 10
    both = pl.concat(
        [live.with_columns(list=pl.lit("with_ads")), live.filter(~pl.col("is_ad")).with_columns(list=pl.lit("organic"))]
    )
    assert share_of_voice(both, top=5, weights="equal").equals(sov)


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"top": 0}, "a whole number of 1 or more"),
        ({"weights": "clicks"}, '"ctr", "equal", a mapping'),
        ({"weights": {1: -1.0}}, "numbers of 0 or more"),
        ({"by": "publisher"}, '"app" or "developer"'),
        ({"by": "developer"}, "a metadata_frame of the apps"),
    ],
)
def test_bad_input_is_refused_saying_what_is_allowed(month, options, words):
    with pytest.raises(InvalidParameterError, match="share_of_voice") as raised:
        share_of_voice(month, **options)
    assert words in str(raised.value)


def test_a_frame_without_ranks_is_refused():
    with pytest.raises(InvalidParameterError, match="keyword, date, rank, app_id"):
        sf.share_of_voice(pl.DataFrame({"keyword": ["maps"]}))
