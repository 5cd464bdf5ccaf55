"""rank_anomalies: a robust z against the same weekday, on generated series whose moves are known."""

from __future__ import annotations

import math
import random
from datetime import date, timedelta

import polars as pl
import pytest

import storeframes as sf
from storeframes.analysis import ANOMALIES, rank_anomalies
from storeframes.errors import InvalidParameterError

START = date(2026, 8, 3)  # a Monday
DAYS = 84  # twelve weeks
# the planted moves: (first day, days, places added to the rank): a two-day fall, a rise, a one-day fall
PLANTED = [(40, 2, 18), (57, 3, -9), (75, 1, 25)]
HOLES = {12, 13, 41, 58, 66, 67, 68, 80}  # days without data, two of them inside planted moves


def _series(seed: int = 7) -> pl.DataFrame:
    """One app's ranks with a weekly rhythm (12 on weekdays, 24 at the weekend), a noise of +-1, the planted
    moves and the holes; every day has 200 results."""
    rng = random.Random(seed)
    rows = []
    for n in range(DAYS):
        day = START + timedelta(n)
        rank = (24 if day.weekday() >= 5 else 12) + rng.choice((-1, 0, 1))
        for first, length, places in PLANTED:
            if first <= n < first + length:
                rank += places
        if n in HOLES:
            rows.append(("maps", "a", day, None, "no_data", None))
        else:
            rows.append(("maps", "a", day, rank, "ranked", 200))
    return pl.DataFrame(
        rows,
        schema={
            "keyword": pl.String,
            "app_id": pl.String,
            "date": pl.Date,
            "rank": pl.Int64,
            "status": pl.String,
            "results": pl.Int64,
        },
        orient="row",
    )


def test_the_three_planted_moves_are_found_and_nothing_else():
    found = rank_anomalies(_series())
    assert found.schema == ANOMALIES.schema
    planted_days = {START + timedelta(n) for f, length, _ in PLANTED for n in range(f, f + length) if n not in HOLES}
    assert set(found["date"]) == planted_days
    assert found["event_start"].unique().sort().to_list() == [START + timedelta(f) for f, _, _ in PLANTED]
    assert found.group_by("event_start").agg(pl.col("direction").unique()).sort("event_start")[
        "direction"
    ].to_list() == [
        ["down"],
        ["up"],
        ["down"],
    ]
    holes = {START + timedelta(n) for n in HOLES}
    assert not holes & set(found["date"]), "a day without data is never judged"
    assert found["status"].unique().to_list() == ["ranked"]


def test_the_weekly_rhythm_alone_is_not_an_anomaly():
    calm = _series().with_columns(
        pl.when(pl.col("status") == "ranked")
        .then(pl.when(pl.col("date").dt.weekday() >= 6).then(24).otherwise(12))
        .alias("rank")
    )
    assert rank_anomalies(calm).height == 0
    # the same series judged against a fixed baseline would fire every weekend: the rhythm is 12 places
    assert calm.filter(pl.col("rank") == 24).height >= 20


def test_baseline_z_and_move_are_those_of_the_same_weekdays_before():
    found = rank_anomalies(_series())
    row = found.filter(pl.col("date") == START + timedelta(57)).row(0, named=True)
    series = _series()
    before = sorted(series.filter(pl.col("date") == START + timedelta(57 - 7 * k))["rank"][0] for k in range(1, 5))
    baseline = (before[1] + before[2]) / 2
    deviations = sorted(abs(b - baseline) for b in before)
    spread = max(1.4826 * (deviations[1] + deviations[2]) / 2, 1.0, baseline / 10)
    assert row["baseline"] == pytest.approx(baseline)
    assert row["spread"] == pytest.approx(spread)
    assert row["z"] == pytest.approx((row["rank"] - baseline) / spread)
    assert row["move"] == math.floor(baseline - row["rank"] + 0.5) > 0
    assert row["baseline_days"] == 4


def test_a_hole_in_the_baseline_is_left_out_not_counted_as_a_rank():
    found = rank_anomalies(_series())
    # day 68, the same weekday a week before day 75, is a hole: day 75 is judged on the three other weeks
    judged = found.filter(pl.col("date") == START + timedelta(75))["baseline_days"][0]
    expected = sum(1 for k in range(1, 5) if 75 - 7 * k not in HOLES)
    assert judged == expected == 3


def test_min_move_and_threshold_gate_the_moves():
    assert rank_anomalies(_series(), min_move=30).height == 0
    assert rank_anomalies(_series(), threshold=1000).height == 0
    smaller = rank_anomalies(_series(), min_move=20)
    assert set(smaller["event_start"]) == {START + timedelta(75)}


def test_a_day_off_the_results_is_a_floor_a_drop_never_a_rise():
    series = _series().with_columns(
        pl.when(pl.col("date") == START + timedelta(83))
        .then(pl.lit("not_ranked"))
        .otherwise(pl.col("status"))
        .alias("status"),
    )
    found = rank_anomalies(series)
    left = found.filter(pl.col("date") == START + timedelta(83)).row(0, named=True)
    assert left["status"] == "not_ranked" and left["rank"] is None and left["direction"] == "down"
    assert left["move"] < -150  # judged as the 201st place
    # an app never in the results rises with a shorter list: that is no rise
    never = series.with_columns(status=pl.lit("not_ranked"), rank=pl.lit(None, pl.Int64))
    never = never.with_columns(results=pl.when(pl.col("date").dt.day() == 20).then(50).otherwise(200))
    assert rank_anomalies(never).filter(pl.col("direction") == "up").height == 0


def _changes(rows: list[tuple[str, int, str]]) -> pl.DataFrame:
    return pl.DataFrame(
        [(a, START + timedelta(n), t) for a, n, t in rows],
        schema={"app_id": pl.String, "date": pl.Date, "target": pl.String},
        orient="row",
    )


def _with_others() -> pl.DataFrame:
    """The series of app a, with b steady at 8th (ahead of a) and c steady at 150th (far behind) every day."""
    a = _series()
    steady = [a.with_columns(app_id=pl.lit(app), rank=pl.lit(place, pl.Int64)) for app, place in (("b", 8), ("c", 150))]
    return pl.concat([a, *(s.with_columns(pl.when(pl.col("status") == "ranked").then(pl.col("rank"))) for s in steady)])


def test_the_nearest_change_that_can_move_a_rank_is_named():
    changes = _changes(
        [("a", 37, "title"), ("b", 39, "screenshots"), ("a", 39, "size"), ("c", 40, "title"), ("b", 70, "icon")]
    )
    found = rank_anomalies(_with_others(), changes=changes)
    assert set(found["app_id"]) == {"a"}, "b and c never move"
    fall = found.filter(pl.col("date") == START + timedelta(40)).row(0, named=True)
    assert (fall["cause_app_id"], fall["cause_date"], fall["cause_targets"]) == (
        "b",
        START + timedelta(39),
        "screenshots",
    )
    assert fall["cause"] == f"competitor b changed screenshots on {START + timedelta(39)} (the day before)"
    late = found.filter(pl.col("date") == START + timedelta(75)).row(0, named=True)
    assert late["cause"] == f"competitor b changed icon on {START + timedelta(70)} (5 days before)"
    rise = found.filter(pl.col("date") == START + timedelta(57)).row(0, named=True)
    assert rise["cause"] is None and rise["cause_app_id"] is None  # nothing within the 7 days before


def test_a_competitor_far_behind_or_not_in_the_ranks_is_not_a_cause():
    # c (150th, behind a's 42nd and its baseline of 24) changed its title the very day; d is not in the ranks
    changes = _changes([("c", 40, "title"), ("d", 40, "title"), ("a", 36, "subtitle")])
    fall = (
        rank_anomalies(_with_others(), changes=changes)
        .filter(pl.col("date") == START + timedelta(40))
        .row(0, named=True)
    )
    assert fall["cause"] == f"own change of subtitle on {START + timedelta(36)} (4 days before)"
    assert rank_anomalies(_series(), changes=_changes([("d", 40, "title")]))["cause"].null_count() == 4


def test_the_apps_own_change_comes_first_on_the_same_day():
    changes = _changes([("b", 38, "title"), ("a", 38, "subtitle"), ("a", 38, "title")])
    fall = (
        rank_anomalies(_with_others(), changes=changes)
        .filter(pl.col("date") == START + timedelta(40))
        .row(0, named=True)
    )
    assert fall["cause"] == f"own change of subtitle, title on {START + timedelta(38)} (2 days before)"


def test_new_advertisers_that_day_are_named():
    ads = pl.DataFrame(
        [
            ("maps", START + timedelta(n), 1, app, True)
            for n in range(30, 84)
            for app in (["x"] + (["y"] if n in (40, 57, 58, 59) else []))
        ],
        schema={"keyword": pl.String, "date": pl.Date, "rank": pl.Int64, "app_id": pl.String, "is_ad": pl.Boolean},
        orient="row",
    )
    found = rank_anomalies(_series(), ads=ads)
    by_day = {d: (n, c) for d, n, c in found.select("date", "new_advertisers", "cause").rows()}
    assert by_day[START + timedelta(40)] == (["y"], "new advertisers: y")
    assert by_day[START + timedelta(57)] == (["y"], "new advertisers: y")
    assert by_day[START + timedelta(59)] == ([], None)  # y advertised the days before: not new
    assert by_day[START + timedelta(75)] == ([], None)
    without = rank_anomalies(_series())
    assert without["new_advertisers"].null_count() == without.height


def test_series_are_judged_apart_by_keyword_app_and_place():
    one = _series()
    other = one.with_columns(app_id=pl.lit("b"), country=pl.lit("de"))
    both = rank_anomalies(pl.concat([one.with_columns(country=pl.lit("us")), other], how="diagonal"))
    assert both.group_by("app_id", "country").len().sort("app_id").rows() == [("a", "us", 4), ("b", "de", 4)]


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"threshold": 0}, "a number above 0"),
        ({"weeks": 0}, "a whole number of 1 or more"),
        ({"min_move": 2.5}, "a whole number of 1 or more"),
        ({"days": -1}, "a whole number of 1 or more"),
    ],
)
def test_bad_parameters_are_refused(options, words):
    with pytest.raises(InvalidParameterError, match="rank_anomalies") as raised:
        rank_anomalies(_series(), **options)
    assert words in str(raised.value)


def test_a_frame_that_is_not_a_rank_history_is_refused():
    with pytest.raises(InvalidParameterError, match="a rank_history frame"):
        sf.rank_anomalies(pl.DataFrame({"keyword": ["maps"], "date": [START], "rank": [1], "app_id": ["a"]}))


def test_on_a_sandbox_history_no_anomaly_falls_on_a_day_without_data(sandbox):
    history = sandbox.search_history_frame(["photo editor", "collage maker"], start="2026-08-01", end="2026-10-31")
    ranks = sf.rank_history(history, ["3233849169", "394079159"])
    found = rank_anomalies(ranks)
    holes = ranks.filter(pl.col("status") == "no_data").select("keyword", "app_id", "date")
    assert ranks["status"].value_counts().filter(pl.col("status") == "no_data")["count"][0] > 0
    assert found.join(holes, on=["keyword", "app_id", "date"]).height == 0
    assert found.height > 0 and set(found["status"]) <= {"ranked", "not_ranked"}


def test_within_judges_only_the_days_in_the_first_places():
    found = rank_anomalies(_series(), within=10)
    # the rise to the 3rd place is within the top 10; the falls from 24th to 42nd and 49th are not
    assert set(found["event_start"]) == {START + timedelta(57)}
    # within the top 30 the falls count too: their baselines (the 24th place) are in it
    assert rank_anomalies(_series(), within=30)["event_start"].n_unique() == 3
    with pytest.raises(InvalidParameterError, match="within"):
        rank_anomalies(_series(), within=0)


def test_a_deep_ranks_daily_shuffle_is_not_an_anomaly():
    # the same series 150 places deeper, its noise ten times wider: a tenth of the rank is its least spread
    rng = random.Random(3)
    deep = _series().with_columns(
        pl.when(pl.col("status") == "ranked")
        .then(150 + pl.Series([rng.randint(-12, 12) for _ in range(DAYS)]))
        .alias("rank")
    )
    assert rank_anomalies(deep).height == 0
    assert rank_anomalies(deep.with_columns(pl.col("rank") - 140)).height > 0  # the same shuffle at the 10th place
