"""Scripted moves in the sandbox: each move shows on its days only, through the public frame functions.

One in-process sandbox client per test (its world built once), moved from day to day by its
service's ``today``; the same client without a script, or the world itself, says what the
sandbox shows unscripted.
"""

from __future__ import annotations

import dataclasses
import json
import re
import warnings
from datetime import date, timedelta
from pathlib import Path

import polars as pl
import pytest

import storeframes as sf
from storeframes import sandbox
from storeframes.sandbox import API_PREFIX, SANDBOX_KEY, SandboxService, Script, World
from storeframes.track import Tracker

WORLD = World(0)
IOS = WORLD.app_ids("ios")
ANDROID = WORLD.app_ids("android")
KEYWORD = "recipes"
DAYS = [date(2026, 11, 9) + timedelta(days=n) for n in range(5)]  # Monday 9 .. Friday 13 November
APP = IOS[3]  # ranked 72nd-93rd for "recipes" in the us on those days, never an advertiser
LEADER = "4386027005"  # first or second for "recipes" on those days


def client(script: Script | None = None, **options) -> sandbox.SandboxClient:
    return sandbox.client(today=DAYS[0], world=WORLD, script=script, cache_dir=False, progress=False, **options)


def ids(c: sandbox.SandboxClient, day: date, **options) -> list[str]:
    c.sandbox_service.today = day
    return c.search_frame(KEYWORD, **options)["app_id"].to_list()


def world_ids(day: date) -> list[str]:
    return WORLD.search(KEYWORD, device="iphone", country="us", language="en", day=day)


# ------------------------------------------------------------------------------------ no script


PATHS = {
    "metadata": ("/apps/metadata.json", {"apps": f"{APP},{IOS[0]}"}),
    "changes": ("/apps/metadata/changes.json", {"apps": APP, "start_date": "2026-09-01", "end_date": "2026-11-11"}),
    "metrics": ("/apps/metrics/current.json", {"apps": APP, "metrics": "downloads,ratings"}),
    "benchmarks": ("/categories/benchmarks", {}),
    "search": ("/keywords/search-results/current", {"keyword": KEYWORD}),
    "search_ads": ("/keywords/search-results/ads/current", {"keyword": KEYWORD}),
    "search_history": ("/keywords/search-results/history.json", {"keyword": KEYWORD, "start_date": "2026-11-01"}),
}


def body(service: SandboxService, endpoint: str) -> bytes:
    path, params = PATHS[endpoint]
    reply = service.handle("GET", API_PREFIX + path, list(params.items()), {"X-Service-Key": SANDBOX_KEY})
    assert reply.status == 200, reply.body
    return reply.body


@pytest.mark.parametrize("endpoint", list(PATHS))
def test_an_empty_script_or_one_about_other_things_changes_no_byte(endpoint):
    elsewhere = (
        Script()
        .rank("meditation", APP, 1, start=DAYS[0])
        .rank(KEYWORD, APP, 1, start=DAYS[0], country="gb")
        .listing(IOS[5], DAYS[0], title="Other")
        .leave_out(APP, DAYS[1])
        .unknown_target(IOS[5], DAYS[1], "age_rating", "4+", "12+")
        .outage(DAYS[3])
    )
    day = DAYS[2]
    plain = body(SandboxService(today=day, world=WORLD), endpoint)
    assert body(SandboxService(today=day, world=WORLD, script=Script()), endpoint) == plain
    assert body(SandboxService(today=day, world=WORLD, script=elsewhere), endpoint) == plain
    assert not Script() and elsewhere


# ------------------------------------------------------------------------------------ ranks


def test_a_scripted_rank_holds_on_its_days_only_and_the_others_keep_their_order():
    script = Script().rank("  Recipes ", APP, 3, start=DAYS[1], end=DAYS[2].isoformat())
    with client(script) as c:
        for day in DAYS[:4]:
            got, world = ids(c, day), world_ids(day)
            assert len(got) == 250 and world.index(APP) + 1 > 70
            if day in DAYS[1:3]:
                assert got.index(APP) == 2
                assert [a for a in got if a != APP] == [a for a in world if a != APP][:249]
            else:
                assert got == world
        c.sandbox_service.today = DAYS[2]
        ads = c.search_frame(KEYWORD, ads=True)
        assert ads.filter(pl.col("app_id") == APP)["organic_rank"].to_list() == [3]
        assert ads.filter(pl.col("is_ad")).height == 2
        c.sandbox_service.today = DAYS[4]
        history = c.search_history_frame(KEYWORD, start=DAYS[0], end=DAYS[3]).filter(pl.col("app_id") == APP)
    ranks = dict(zip(history["date"], history["rank"], strict=True))
    assert ranks[DAYS[1]] == ranks[DAYS[2]] == 3
    assert ranks[DAYS[0]] == world_ids(DAYS[0]).index(APP) + 1 == 74
    assert ranks[DAYS[3]] == 93
    assert history.schema["rank"] == pl.Int64


def test_a_rank_in_one_country_or_device_leaves_the_others_alone():
    script = Script().rank(KEYWORD, APP, 1, start=DAYS[0], country="gb", device="ipad")
    with client(script) as c:
        c.sandbox_service.today = DAYS[0]
        assert c.search_frame(KEYWORD, country="gb", device="ipad")["app_id"][0] == APP
        assert c.search_frame(KEYWORD, country="gb")["app_id"][0] != APP
        assert c.search_frame(KEYWORD, device="ipad")["app_id"][0] != APP


def test_rank_none_leaves_the_app_out_on_its_day():
    script = Script().rank(KEYWORD, LEADER, None, start=DAYS[1], end=DAYS[1])
    with client(script) as c:
        assert ids(c, DAYS[0])[:1] == [LEADER]
        on_the_day = ids(c, DAYS[1])
        assert LEADER not in on_the_day and on_the_day == [a for a in world_ids(DAYS[1]) if a != LEADER]
        assert LEADER not in ids(c, DAYS[1], ads=True)
        assert ids(c, DAYS[2])[:1] == [LEADER]


# ------------------------------------------------------------------------------------ listings


def test_listing_fields_change_from_their_day_on_and_the_changes_do_not_list_them():
    icon = "https://icons.example/new-icon.png"
    script = (
        Script()
        .listing(APP, DAYS[2], title="Snap Recipes", subtitle="Cook it fast", icon=icon, price="4.99")
        .listing(APP, DAYS[2], size=123_456_789, version="99.0.0", description="A new description.")
        .listing(APP, DAYS[3], title="Snap Recipes 2")
    )
    columns = ["title", "subtitle", "description", "icon_url", "price", "size_bytes", "version"]
    rows = {}
    with client(script) as c, client() as plain:
        for day in DAYS:
            c.sandbox_service.today = plain.sandbox_service.today = day
            rows[day] = c.metadata_frame(APP).select(columns).row(0, named=True)
            if day < DAYS[2]:
                assert rows[day] == plain.metadata_frame(APP).select(columns).row(0, named=True)
        c.sandbox_service.today = plain.sandbox_service.today = DAYS[4]
        changes = c.changes_frame(APP, start="2026-09-01", end=DAYS[4])
        unscripted = plain.changes_frame(APP, start="2026-09-01", end=DAYS[4])
    assert changes.height > 0 and changes.drop("fetched_at").equals(unscripted.drop("fetched_at"))
    assert rows[DAYS[2]] == {
        "title": "Snap Recipes",
        "subtitle": "Cook it fast",
        "description": "A new description.",
        "icon_url": icon,
        "price": "4.99",
        "size_bytes": 123_456_789,
        "version": "99.0.0",
    }
    assert rows[DAYS[3]] == rows[DAYS[4]] == rows[DAYS[2]] | {"title": "Snap Recipes 2"}
    assert rows[DAYS[1]]["title"] != "Snap Recipes" and rows[DAYS[1]]["version"] != "99.0.0"
    assert not changes.filter(pl.col("new_value").is_in(["Snap Recipes", "99.0.0", "123456789"])).height


def test_new_screenshots_from_the_listing_day_the_same_each_day_after():
    script = Script().listing(APP, DAYS[1], screenshots=True)
    with client(script) as c:
        shots = {}
        for day in DAYS[:3]:
            c.sandbox_service.today = day
            shots[day] = c.screenshots_frame(APP).sort("device_key", "position")
    before, after = shots[DAYS[0]], shots[DAYS[1]]
    assert after.schema == before.schema and after.height == before.height > 0
    assert after["device_key"].to_list() == before["device_key"].to_list()
    assert not set(after["url"]) & set(before["url"])
    assert not set(after["screenshot_id"]) & set(before["screenshot_id"])
    assert after["url"].n_unique() == after.height
    assert shots[DAYS[2]].drop("fetched_at").equals(after.drop("fetched_at"))


def test_android_listings_set_the_fields_as_that_store_holds_them():
    app = ANDROID[2]
    urls = ["https://shots.example/1.png", "https://shots.example/2.png"]
    script = Script().listing(
        app, DAYS[0], long_description="Long.", short_description="Short.", size=42, screenshots=urls
    )
    with client(script) as c:
        row = c.metadata_frame(app).select("long_description", "short_description", "size_bytes").row(0)
        shots = c.screenshots_frame(app)
    assert row == ("Long.", "Short.", 42)
    assert shots.sort("position")["url"].to_list() == urls


# ------------------------------------------------------------------------------------ ads and history


def test_the_advertiser_holds_the_first_ad_slot_from_its_day():
    script = Script().advertiser(KEYWORD, APP, start=DAYS[2])
    with client(script) as c:
        for day in DAYS:
            c.sandbox_service.today = day
            ads = c.search_frame(KEYWORD, ads=True).filter(pl.col("is_ad"))
            assert ads.height == 2
            assert (ads["app_id"][0] == APP) == (day >= DAYS[2]), day
            assert ads["rank"].to_list() == [1, 2]


def test_a_day_without_data_is_absent_from_the_history_and_not_charged():
    script = Script().no_data("RECIPES", DAYS[1])
    with client(script) as c, client() as plain:
        for each in (c, plain):
            each.sandbox_service.today = DAYS[4]
        history = c.search_history_frame(KEYWORD, start=DAYS[0], end=DAYS[3])
        full = plain.search_history_frame(KEYWORD, start=DAYS[0], end=DAYS[3])
        cost, plain_cost = c.sandbox_service.spent, plain.sandbox_service.spent
    assert sorted(history["date"].unique()) == [DAYS[0], DAYS[2], DAYS[3]]
    assert sorted(full["date"].unique()) == DAYS[:4]
    assert history.equals(full.filter(pl.col("date") != DAYS[1]).with_columns(history["fetched_at"]))
    assert plain_cost - cost == 10  # one day's price


# ------------------------------------------------------------------------------------ odd answers


def test_a_left_out_app_is_missing_from_that_days_metadata_only():
    script = Script().leave_out(APP, DAYS[1])
    with client(script) as c:
        c.sandbox_service.today = DAYS[1]
        with pytest.warns(sf.AnswerWarning, match=APP):
            frame = c.metadata_frame([APP, IOS[0]])
        assert frame["app_id"].to_list() == [IOS[0]]
        with pytest.warns(sf.AnswerWarning, match=APP):
            assert c.metrics_frame(APP, metrics="ratings").height == 0
        c.sandbox_service.today = DAYS[2]
        assert sorted(c.metadata_frame([APP, IOS[0]])["app_id"]) == sorted([APP, IOS[0]])


def test_an_extra_field_warns_on_its_day_only():
    script = Script().extra_field(APP, DAYS[1], "age_rating", {"label": "12+"})
    with client(script) as c:
        c.sandbox_service.today = DAYS[1]
        with pytest.warns(sf.UnknownFieldWarning, match="age_rating"):
            assert c.metadata_frame(APP).height == 1
        c.sandbox_service.today = DAYS[2]
        with warnings.catch_warnings():
            warnings.simplefilter("error", sf.UnknownFieldWarning)
            assert c.metadata_frame(APP).height == 1


def test_an_unknown_target_is_listed_in_the_changes_of_its_day():
    script = Script().unknown_target(APP, DAYS[1], "age_rating", "4+", "12+")
    with client(script) as c:
        c.sandbox_service.today = DAYS[4]
        with pytest.warns(sf.UnknownFieldWarning, match="age_rating"):
            changes = c.changes_frame(APP, start=DAYS[0], end=DAYS[3])
        before = c.changes_frame(APP, start="2026-10-01", end=DAYS[0])
    row = changes.filter(pl.col("target") == "age_rating")
    assert row.select("date", "old_value", "new_value").rows() == [(DAYS[1], "4+", "12+")]
    assert "age_rating" not in before["target"].to_list()


def test_an_outage_answers_503_that_day_and_the_next_day_works():
    script = Script().outage(DAYS[1])
    with client(script, max_tries=1) as c:
        c.sandbox_service.today = DAYS[1]
        with pytest.raises(sf.ServerError) as caught:
            c.search_frame(KEYWORD)
        assert caught.value.status == 503
        assert c.sandbox_service.spent == 0
        c.sandbox_service.today = DAYS[2]
        assert c.search_frame(KEYWORD).height == 250


def test_a_sandbox_tracker_takes_a_script_and_fails_on_an_outage_day(tmp_path: Path):
    spec = tmp_path / "tracking.toml"
    spec.write_text(
        f'[tracker]\nname = "watch"\ncache_dir = "cache"\n\n[[track]]\nendpoint = "metadata"\napps = ["{APP}"]\n'
    )
    script = Script().outage(DAYS[1]).listing(APP, DAYS[2], title="Snap Recipes")
    tracker = Tracker.from_toml(spec, sandbox=True, script=script, max_tries=1)
    assert tracker.run(DAYS[1]).status == "failed"
    assert tracker.run(DAYS[2]).status == "ok"
    with tracker.client(DAYS[2]) as c:
        assert c.metadata_frame(APP, refresh="never")["title"].to_list() == ["Snap Recipes"]


# ------------------------------------------------------------------------------------ the script itself


def test_a_script_is_immutable_and_each_move_makes_a_new_one():
    first = Script().outage(DAYS[0])
    second = first.leave_out(APP, DAYS[1])
    assert len(first.moves) == 1 and len(second.moves) == 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.moves = ()  # type: ignore[misc]
    value = {"label": "12+"}
    script = Script().extra_field(APP, DAYS[0], "age_rating", value)
    value["label"] = "18+"
    assert script.moves[0].value == {"label": "12+"}


@pytest.mark.parametrize(
    ("build", "parameter", "allowed"),
    [
        (lambda s: s.listing(APP, DAYS[0], colour="red"), "colour", "a listing field: one of title, subtitle"),
        (lambda s: s.listing(APP, DAYS[0], size=-1), "size", "size in bytes"),
        (lambda s: s.listing(APP, DAYS[0], screenshots=[]), "screenshots", "True (a new set)"),
        (lambda s: s.rank(KEYWORD, APP, 0, start=DAYS[0]), "rank", "a position >= 1"),
        (lambda s: s.rank(KEYWORD, APP, 1, start="2026-13-01"), "start", "YYYY-MM-DD"),
        (lambda s: s.rank(KEYWORD, APP, 1, start=DAYS[2], end=DAYS[1]), "end", "on or after start"),
        (lambda s: s.rank("  ", APP, 1, start=DAYS[0]), "keyword", "a non-empty keyword"),
        (lambda s: s.rank(KEYWORD, APP, 1, start=DAYS[0], device="android"), "device", "iphone, ipad"),
        (lambda s: s.rank(KEYWORD, APP, 1, start=DAYS[0], country="usa"), "country", "two-letter"),
        (lambda s: s.advertiser(KEYWORD, ANDROID[0], start=DAYS[0]), "app_id", "only that store sells"),
        (lambda s: s.no_data("", DAYS[0]), "keyword", "a non-empty keyword"),
        (lambda s: s.outage("yesterday"), "day", "YYYY-MM-DD"),
        (lambda s: s.extra_field(APP, DAYS[0], "title", "x"), "name", "does not document"),
        (lambda s: s.unknown_target(APP, DAYS[0], "icon", 1, 2), "target", "not version, size"),
        (lambda s: s.leave_out("1, 2", DAYS[0]), "app_id", "one app id"),
    ],
)
def test_a_bad_argument_is_refused_when_the_script_is_built(build, parameter, allowed):
    with pytest.raises(sf.InvalidParameterError, match=re.escape(allowed)) as caught:
        build(Script())
    assert caught.value.parameter == parameter


def test_the_service_refuses_a_script_of_apps_its_world_does_not_have():
    service = SandboxService(today=DAYS[0], world=WORLD)
    with pytest.raises(sf.InvalidParameterError, match="an app of the sandbox's world") as caught:
        service.script = Script().leave_out("999", DAYS[0])
    assert caught.value.value == "999" and not service.script
    with pytest.raises(sf.InvalidParameterError, match="Script"):
        SandboxService(world=WORLD, script="outage")  # type: ignore[arg-type]
    service.script = Script().outage(DAYS[0])
    assert json.loads(body_or_error(service))["error"]["code"] == "InternalServerError"
    service.script = None
    assert json.loads(body_or_error(service))["result"]


def body_or_error(service: SandboxService) -> bytes:
    path, params = PATHS["search"]
    return service.handle("GET", API_PREFIX + path, list(params.items()), {"X-Service-Key": SANDBOX_KEY}).body


def test_a_scripted_rank_shows_in_every_dialect_of_the_search_answers():
    script = Script().rank(KEYWORD, APP, 2, start=DAYS[0])
    dialect = sandbox.Dialect(search="apps", history="list", keyword_level=True)
    service = SandboxService(today=DAYS[1], world=WORLD, script=script, dialect=dialect)
    live = json.loads(body(service, "search"))["result"][KEYWORD]["apps"]
    assert live[1] == {"id": APP, "position": 2}
    params = [("keyword", KEYWORD), ("start_date", "2026-11-07"), ("end_date", "2026-11-10")]
    reply = service.handle("GET", API_PREFIX + PATHS["search_history"][0], params, {"X-Service-Key": SANDBOX_KEY})
    second = {day["date"]: day["value"][1] for day in json.loads(reply.body)["result"][KEYWORD]}
    assert second.pop("2026-11-09") == second.pop("2026-11-10") == APP  # today: the live fill
    assert sorted(second) == ["2026-11-07", "2026-11-08"] and APP not in second.values()
