"""The ``anomaly`` rule over replayed days of the sandbox with scripted moves: its events are exactly the events
``sf.rank_anomalies`` finds on the same kept ranks (one per event, on its first day, never on a day without data),
each fires once across the daily runs and a judgement again of a day fires nothing new, and the digest of its day
holds it with its cause. A week of runs over a search history kept 35 days back runs in the default tier; a month
of live searches with a failed run, a day no run ran and days the history recorded nothing is ``slow``."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path

import polars as pl
import pytest

from storeframes.analysis import rank_anomalies
from storeframes.kept import kept_changes, snapshots
from storeframes.ranks import rank_history
from storeframes.sandbox import Script, World
from storeframes.track import Tracker
from storeframes.track.day_digest import kept_digest
from storeframes.track.judging import rank_frame

WORLD = World(0)
APPS = ["3233849169", "394079159", "1395556972", "1286838609", "6441354028"]  # the tracking example's apps
LIVE, FILTERS, HISTORY = "photo editor", "photo filters", "collage maker"
D = [date(2026, 10, 22) + timedelta(days=n) for n in range(30)]
DOWN, UP = APPS[0], APPS[3]  # pinned by the script: one falls for three days, one rises after a day not run
ADVERTISER = WORLD.app_ids("ios")[55]
FAILED, NOT_RUN, UNRECORDED = D[10], D[15], (D[12], D[19])
WEEKS = 2

KEY = ["keyword", "app_id", "country", "language", "device", "event_start", "direction"]
"""What makes an anomaly one event."""


def _told(events: pl.DataFrame) -> pl.DataFrame:
    """The events of the rule by :data:`KEY` (an event is dated on its first day, its target its direction)."""
    return events.select(
        "keyword",
        "app_id",
        "country",
        "language",
        "device",
        pl.col("day").alias("event_start"),
        pl.col("target").alias("direction"),
    )


SCRIPT = (
    Script()
    # a fall of the live keyword's third app for three days, its title changed the first of them
    .rank(LIVE, DOWN, 45, start=D[18], end=D[20])
    .listing(DOWN, D[18], title="Photo Editor Max")
    .advertiser(LIVE, ADVERTISER, start=D[18])
    # a rise the day after a day no run ran
    .rank(FILTERS, UP, 1, start=D[16], end=D[16])
    .outage(FAILED)
    .no_data(HISTORY, UNRECORDED[0])
    .no_data(HISTORY, UNRECORDED[1])
)


FIRST = date(2026, 11, 10)
WEEK = [FIRST + timedelta(days=n) for n in range(6)]
FAST = Script().rank(LIVE, APPS[0], 60, start=WEEK[1], end=WEEK[4]).no_data(LIVE, WEEK[2])
"""The first app of the live keyword (at 1 every day before) at 60 from the second day to the fifth, the third
recorded nothing: one event, on the second day."""


def _history_spec(folder: Path) -> Path:
    path = folder / "history.toml"
    path.write_text(
        f"""
[tracker]
name = "history"
cache_dir = "cache"
device = "iphone"
country = "us"

[[track]]
endpoint = "search_history"
keywords = {json.dumps([LIVE, HISTORY])}
lookback = "35d"

[[track]]
endpoint = "changes"
apps = {json.dumps(APPS)}
lookback = "14d"

[[alert]]
rule = "anomaly"
apps = {json.dumps(APPS)}
"""
    )
    return path


def test_a_week_of_runs_over_a_kept_history_fires_each_event_once_on_its_first_day(tmp_path: Path):
    tracker = Tracker.from_toml(_history_spec(tmp_path), sandbox=True, script=FAST, progress=False)
    for day in WEEK:
        assert tracker.run(day).status == "ok"
    events = tracker.events().filter(pl.col("rule") == "anomaly")
    with tracker.client(WEEK[-1]) as client:
        cache, service = client.cache, client.namespace
        assert cache is not None
        start = FIRST - timedelta(days=35)
        kept = rank_frame(tracker.spec, cache, service, start, WEEK[-1])
        changes = pl.concat(kept_changes(cache, service, APPS, start, WEEK[-1]))
    ranks = rank_history(kept, APPS, start=start, end=WEEK[-1])
    found = rank_anomalies(ranks, changes=changes, within=20)  # the rule's defaults: 3.0, 4 weeks, 5 places, top 20
    expected = found.filter(pl.col("event_start") >= FIRST).select(KEY).unique()
    assert sorted(_told(events).rows()) == sorted(expected.rows())
    # the scripted fall: anomalous on the 2nd, 4th and 5th days (the 3rd recorded nothing), told once, on the 2nd
    fall = found.filter((pl.col("app_id") == APPS[0]) & (pl.col("keyword") == LIVE))
    assert fall.select("date", "event_start").rows() == [(d, WEEK[1]) for d in (WEEK[1], WEEK[3], WEEK[4])]
    told = events.filter((pl.col("app_id") == APPS[0]) & (pl.col("keyword") == LIVE))
    assert told.select("day", "target", "before", "after").rows() == [(WEEK[1], "down", "1", "60")]
    assert told["detail"][0].startswith(f"{APPS[0]} fell to 60 for 'photo editor' (us, iphone): 59 places down from 1")
    row = fall.row(0, named=True)
    counted = f"{row['baseline_days']} of the 4" if row["baseline_days"] < 4 else "4"
    words = f"the median of {counted} {WEEK[1]:%A}s before"
    assert words in told["detail"][0] and f"z {row['z']:+.1f}" in told["detail"][0]
    # the weekdays of its baseline without data are said, left out of it
    series = ranks.filter((pl.col("app_id") == APPS[0]) & (pl.col("keyword") == LIVE))
    weekdays = [WEEK[1] - timedelta(days=7 * n) for n in (4, 3, 2, 1)]
    lacking = series.filter(pl.col("date").is_in(weekdays) & (pl.col("status") == "no_data"))["date"].to_list()
    assert len(lacking) == 4 - row["baseline_days"]
    if lacking:
        assert f"no data on {', '.join(map(str, lacking))}, left out of the baseline" in told["detail"][0]
    assert not events.filter(pl.col("day") == WEEK[2]).height
    for day in WEEK[1:]:
        assert tracker.alerts(today=day, notify=False).events.height == 0, day


def _spec(folder: Path) -> Path:
    path = folder / "anomalies.toml"
    path.write_text(
        f"""
[tracker]
name = "anomalies"
cache_dir = "cache"
device = "iphone"
country = "us"

[[track]]
endpoint = "search"
keywords = {json.dumps([LIVE, FILTERS])}

[[track]]
endpoint = "search_ads"
keywords = ["{LIVE}"]

[[track]]
endpoint = "search_history"
keywords = ["{HISTORY}"]
lookback = "3d"

[[track]]
endpoint = "metadata"
apps = {json.dumps(APPS)}

[[alert]]
rule = "anomaly"
apps = {json.dumps(APPS)}
weeks = {WEEKS}
"""
    )
    return path


@pytest.fixture(scope="module")
def month(tmp_path_factory: pytest.TempPathFactory) -> tuple[Tracker, dict[date, int]]:
    """A month of daily runs but one (a failed run on FAILED, none on NOT_RUN): the tracker and the anomaly events
    each run found."""
    tracker = Tracker.from_toml(
        _spec(tmp_path_factory.mktemp("anomalies")), sandbox=True, script=SCRIPT, max_tries=1, progress=False
    )
    found: dict[date, int] = {}
    for day in D:
        if day == NOT_RUN:
            continue
        result = tracker.run(day)
        assert result.status == ("failed" if day == FAILED else "ok"), (day, result.errors)
        found[day] = tracker.events().filter(pl.col("rule") == "anomaly").height
    return tracker, found


def _kept_anomalies(tracker: Tracker) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``sf.rank_anomalies`` on every rank, listing change and search with ads the tracker kept, with the rule's
    parameters; and the ranks."""
    start = D[0] - timedelta(days=7)
    with tracker.client(D[-1]) as client:
        cache, service = client.cache, client.namespace
        assert cache is not None
        kept = rank_frame(tracker.spec, cache, service, start, D[-1])
        changes = pl.concat(kept_changes(cache, service, APPS, start, D[-1]))
        ads = snapshots("search_ads", cache, service=service).collect()
    ranks = rank_history(kept, APPS, start=start, end=D[-1])
    return rank_anomalies(ranks, weeks=WEEKS, within=20, changes=changes, ads=ads), ranks


@pytest.mark.slow  # a month of tracking replayed, day by day
def test_the_rules_events_are_the_events_rank_anomalies_finds_each_on_its_first_day(month):
    tracker, _ = month
    events = tracker.events().filter(pl.col("rule") == "anomaly")
    found, ranks = _kept_anomalies(tracker)
    expected = found.filter(pl.col("event_start") >= D[0]).select(KEY).unique()
    told = _told(events)
    assert expected.height >= 3
    assert sorted(told.rows()) == sorted(expected.rows())  # one event each, none twice
    assert told.unique().height == events.height
    # the scripted fall: one event on its first day, none on its next two anomalous days
    fall = events.filter((pl.col("app_id") == DOWN) & (pl.col("keyword") == LIVE))
    assert fall.select("day", "target", "after").rows() == [(D[18], "down", "45")]
    days = found.filter((pl.col("app_id") == DOWN) & (pl.col("keyword") == LIVE))["date"].to_list()
    assert days == [D[18], D[19], D[20]]
    # never on a day without data: each event's day has a rank or results kept, and none is a hole's day
    statuses = events.join(
        ranks.rename({"date": "day"}), on=["keyword", "app_id", "country", "language", "device", "day"], how="left"
    )["status"]
    assert statuses.is_in(["ranked", "not_ranked"]).all()
    holes = ranks.filter(pl.col("status").is_in(["no_data", "not_fetched"]))
    assert {FAILED, NOT_RUN, *UNRECORDED} <= set(holes["date"].to_list())
    assert not set(events["day"].to_list()) & {FAILED, NOT_RUN}
    assert not events.filter((pl.col("keyword") == HISTORY) & pl.col("day").is_in(UNRECORDED)).height


@pytest.mark.slow  # a month of tracking replayed, day by day
def test_an_event_says_its_baseline_its_move_its_z_and_its_cause(month):
    tracker, _ = month
    events = tracker.events().filter(pl.col("rule") == "anomaly")
    found, _ = _kept_anomalies(tracker)
    fall = events.filter((pl.col("app_id") == DOWN) & (pl.col("keyword") == LIVE)).row(0, named=True)
    row = found.filter((pl.col("app_id") == DOWN) & (pl.col("date") == D[18]) & (pl.col("keyword") == LIVE)).row(
        0, named=True
    )
    baseline = f"{row['baseline']:.1f}".removesuffix(".0")
    assert fall["before"] == baseline and fall["since"] == D[18] - timedelta(days=7 * WEEKS)
    assert fall["detail"].startswith(f"Photo Editor Max ({DOWN}) fell to 45 for 'photo editor' (us, iphone): ")
    assert f"{abs(row['move'])} places down from {baseline}, the median of 2 {D[18]:%A}s before" in fall["detail"]
    assert f"z {row['z']:+.1f}" in fall["detail"]
    assert (row["cause_app_id"], row["cause_date"], row["cause_targets"]) == (DOWN, D[18], "title")
    assert ADVERTISER in row["new_advertisers"]
    assert f"likely cause: it changed its title on {D[18]}; new in the ads that day: " in fall["detail"]
    assert ADVERTISER in fall["detail"].split("new in the ads that day: ")[1]
    # the rise the day after the day no run ran says the day without data before it
    rise = events.filter((pl.col("app_id") == UP) & (pl.col("keyword") == FILTERS))
    assert rise.select("day", "target", "after").rows() == [(D[16], "up", "1")]
    assert f"no data on {NOT_RUN}, just before it" in rise["detail"][0]


@pytest.mark.slow  # a month of tracking replayed, day by day
def test_each_event_fires_once_across_the_runs_and_a_second_judgement_of_a_day_fires_nothing(month):
    tracker, found = month
    events = tracker.events().filter(pl.col("rule") == "anomaly")
    # each run told the live keywords' events of its own day: none found twice, none late
    assert events["event_id"].n_unique() == events.height
    live = events.filter(pl.col("keyword").is_in([LIVE, FILTERS]))
    assert live.height and (live["first_seen"].dt.date() == live["day"]).all()
    assert list(found.values()) == sorted(found.values())  # runs only ever add
    for day in (D[16], D[18], D[19], D[-1]):
        again = tracker.alerts(today=day, notify=False)
        assert again.events.filter(pl.col("rule") == "anomaly").height == 0, day
    assert tracker.events().filter(pl.col("rule") == "anomaly").height == events.height


@pytest.mark.slow  # a month of tracking replayed, day by day
def test_the_digest_of_the_day_holds_the_event_with_its_cause(month):
    tracker, _ = month
    digest = kept_digest(tracker.spec, D[18])
    assert "## Rank anomalies (" in digest.markdown and "<h2>Rank anomalies <span" in digest.html
    line = next(x for x in digest.markdown.splitlines() if f"({DOWN})" in x and "fell to 45" in x)
    assert f"likely cause: it changed its title on {D[18]}" in line and "**down**" in line
    assert digest.images  # the event's rank chart
