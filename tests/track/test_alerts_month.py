"""A replayed month of the sandbox with the alert rules a marketing lead writes, defaults left as they
are: listing alerts on what a store visitor sees (size and version only when named), sizes in MB, a
description change said as the lines that changed, nothing from before the tracker's first run, and a
top 10 that does not flap when an app moves between places 10 and 11 and back."""

from __future__ import annotations

import itertools
import re
from datetime import date, timedelta
from pathlib import Path

import polars as pl
import pytest

import storeframes as sf
from storeframes.sandbox import World
from storeframes.track import Tracker

pytestmark = pytest.mark.slow  # a month of tracking replayed, day by day

WORLD = World(0)
APPS = ["3233849169", "394079159", "1395556972", "1286838609", "6441354028"]  # the tracking example's apps
KEYWORDS = [World.EXAMPLE_KEYWORDS[0], "photo filters", "collage maker"]
FLAPPER, FLAPPING = "6441354028", "photo filters"  # at 12, 10, 9, 11, 12, 10, 12, 11, 12, 10 ... 11, 12, 9, 53
FIRST, LAST = date(2026, 10, 22), date(2026, 11, 20)
DAYS = [FIRST + timedelta(days=n) for n in range((LAST - FIRST).days + 1)]


def _spec(folder: Path, name: str, alerts: str) -> Path:
    path = folder / f"{name}.toml"
    path.write_text(
        f"""
[tracker]
name = "{name}"
cache_dir = "cache"
device = "iphone"
country = "us"

[[track]]
endpoint = "search"
keywords = {KEYWORDS!r}

[[track]]
endpoint = "metadata"
apps = {APPS!r}

[[track]]
endpoint = "changes"
apps = {APPS!r}
lookback = "7d"

[[alert]]
rule = "top"
apps = {APPS!r}
n = 10
{alerts}
""".replace("'", '"')
    )
    return path


@pytest.fixture(scope="module")
def month(tmp_path_factory: pytest.TempPathFactory) -> tuple[pl.DataFrame, pl.DataFrame, Path]:
    """The events of a month of daily runs: a tracker of default rules, and one that names size and
    version and sets the top rule's margin to 0 (every crossing, on its day), on one cache."""
    folder = tmp_path_factory.mktemp("month")
    plain = Tracker.from_toml(_spec(folder, "plain", '\n[[alert]]\nrule = "listing_change"\n'), sandbox=True)
    every = Tracker.from_toml(
        _spec(
            folder,
            "every",
            'margin = 0\n\n[[alert]]\nrule = "listing_change"\n'
            'targets = ["title", "subtitle", "description", "screenshots", "icon", "price", "privacy", "size", '
            '"version"]\n',
        ),
        sandbox=True,
    )
    for day in DAYS:
        assert plain.run(day).status == "ok"
        assert every.run(day).status == "ok"
    return plain.events(), every.events(), folder / "cache"


def _listing(events: pl.DataFrame) -> pl.DataFrame:
    return events.filter(pl.col("rule") == "listing_change")


def test_default_listing_alerts_leave_size_and_version_out_and_an_opt_in_gets_them(month):
    plain, every, _ = month
    assert not _listing(plain).filter(pl.col("target").is_in(["size", "version"])).height
    opted = _listing(every)
    assert {"size", "version"} <= set(opted["target"])
    # the rest is the same: the opt-in adds size and version events, and nothing else
    rest = opted.filter(~pl.col("target").is_in(["size", "version"]))
    assert sorted(rest.select("app_id", "day", "target").rows()) == sorted(
        _listing(plain).select("app_id", "day", "target").rows()
    )
    # what the default watches fired on the month's own changes: description, icon, screenshots, title, privacy
    expected = {
        (app, date.fromisoformat(c["date"]), c["target"].replace("long_description", "description"))
        for app in APPS
        for c in WORLD.changes(app, device="iphone", country="us", language="en", start=FIRST, end=LAST)
        if c["target"] in ("long_description", "icon", "screenshots", "title", "privacy_info")
    }
    found = {
        (app, day, target.replace("long_description", "description"))
        for app, day, target in _listing(plain).select("app_id", "day", "target").rows()
    }
    assert len(expected) >= 8
    for app, day, target in expected:  # a change the history lists late is seen in the next day's snapshot
        assert (app, day, target) in found or (app, day + timedelta(days=1), target) in found, (app, day, target)


def test_a_size_reads_in_mb_everywhere_in_its_event(month):
    _, every, cache = month
    sizes = _listing(every).filter(pl.col("target") == "size")
    assert sizes.height >= 5
    history = sf.scan("changes", cache).filter(pl.col("target") == "size").collect()
    for event in sizes.iter_rows(named=True):
        assert re.fullmatch(r"\d+\.\d MB", event["before"]) and re.fullmatch(r"\d+\.\d MB", event["after"]), event
        assert f"changed its size: {event['before']} -> {event['after']}" in event["detail"]
        assert not re.search(r"\d{5,}", event["before"] + event["after"] + event["detail"].split("(")[-1])
        same = history.filter((pl.col("app_id") == event["app_id"]) & (pl.col("date") == event["day"]))
        if same.height:
            assert event["after"] == f"{same['new_size'][0] / 1e6:.1f} MB"


def test_a_description_event_says_the_line_that_changed(month):
    plain, _, _ = month
    descriptions = _listing(plain).filter(pl.col("target").is_in(["description", "long_description"]))
    assert descriptions.height >= 3
    for event in descriptions.iter_rows(named=True):
        # the sandbox turns the feature list by one: the first feature goes to the end
        changes = WORLD.changes(event["app_id"], device="iphone", country="us", language="en", start=FIRST, end=LAST)
        near = event["day"] - timedelta(days=1)
        change = next(
            c
            for c in changes
            if c["target"] == "long_description" and near <= date.fromisoformat(c["date"]) <= event["day"]
        )
        moved = change["old_value"].split("KEY FEATURES\n• ")[1].split("\n")[0]
        assert f"changed its description: moved '{moved}'" in event["detail"], event["detail"]
        assert "characters" not in event["detail"]


def test_nothing_fires_for_a_change_from_before_the_first_run(month):
    plain, every, cache = month
    # the first run's lookback kept the change history of the days before it: size and version changes
    # of an app on 2026-10-20 and 2026-10-21, in the week a first judgement reads
    earlier = sf.scan("changes", cache).filter(pl.col("date") < FIRST).collect()
    assert earlier.filter(pl.col("date") >= FIRST - timedelta(days=6)).height >= 2
    for events in (plain, every):
        assert events["day"].min() >= FIRST
    assert every.filter(pl.col("day") == FIRST).height >= 1  # the first run's own day does fire


def test_an_app_moving_between_places_10_and_11_fires_once_per_move_not_at_each_crossing(month):
    plain, every, _ = month

    def flaps(events: pl.DataFrame) -> list[tuple[date, str | None, str | None]]:
        top = events.filter((pl.col("rule") == "top") & (pl.col("app_id") == FLAPPER) & (pl.col("keyword") == FLAPPING))
        return top.sort("day").select("day", "before", "after").rows()

    def inside(day: date) -> bool:
        found = WORLD.search(FLAPPING, device="iphone", country="us", language="en", day=day)
        return FLAPPER in found and found.index(FLAPPER) < 10

    crossings = sum(inside(a) != inside(b) for a, b in itertools.pairwise(DAYS))
    assert crossings == len(flaps(every)) == 8
    # with the default margin: in or out when it stayed a second day, or moved past the margin (12 -> 9, 9 -> 53);
    # never for its one day at place 10 (12, 10, 12 on 2026-10-31 .. 11-02)
    assert flaps(plain) == [
        (date(2026, 10, 26), "12", "10"),
        (date(2026, 10, 31), "9", "12"),
        (date(2026, 11, 6), "12", "9"),
        (date(2026, 11, 13), "10", "11"),
        (date(2026, 11, 16), "12", "9"),
        (date(2026, 11, 17), "9", "53"),
    ]
    assert (date(2026, 11, 1), "12", "10") in flaps(every) and (date(2026, 11, 2), "10", "12") in flaps(every)
    entered = plain.filter((pl.col("rule") == "top") & (pl.col("day") == date(2026, 10, 26)))["detail"][0]
    assert (
        "entered the top 10 for 'photo filters' (us, iphone): 12 -> 10 on 2026-10-25, then 10 on 2026-10-26" in entered
    )
    assert plain.filter(pl.col("rule") == "top").height < every.filter(pl.col("rule") == "top").height


def test_a_privacy_event_says_which_data_types_came_and_went(month):
    plain, _, _ = month
    privacy = _listing(plain).filter(pl.col("target") == "privacy_info")
    assert privacy.height >= 1
    for event in privacy.iter_rows(named=True):
        change = next(
            c
            for c in WORLD.changes(event["app_id"], device="iphone", country="us", language="en", start=FIRST, end=LAST)
            if c["target"] == "privacy_info" and date.fromisoformat(c["date"]) == event["day"]
        )
        old, new = change["old_value"], change["new_value"]
        for section in old.keys() | new.keys():
            for kind in set(old.get(section, [])) - set(new.get(section, [])):
                gone = f"{section.replace('_', ' ').lower()} no longer lists"
                assert gone in event["detail"] and kind.replace("_", " ").lower() in event["detail"], event["detail"]
        assert "changed its privacy details: " in event["detail"]
