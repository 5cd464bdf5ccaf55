"""Properties of the sandbox's synthetic world (storeframes.sandbox.world)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import defaultdict
from datetime import date, timedelta
from itertools import pairwise

import pytest

from storeframes.sandbox.world import (
    ANDROID_CATEGORIES,
    HISTORY_START,
    IOS_CATEGORIES,
    PRIVACY_SECTIONS,
    PRIVACY_TYPES,
    SCREENSHOT_KEYS,
    World,
    store_of,
)
from tests._children import child_env
from tests.conftest import ROOT

TODAY = date(2026, 3, 1)
YEAR_START, YEAR_END = date(2025, 1, 1), date(2025, 12, 31)
DEVICES = {"ios": "iphone", "android": "android"}

IOS_METADATA_KEYS = {
    "title", "subtitle", "promotional_text", "description", "id", "categories", "icon", "screenshots", "videos",
    "size", "rating", "developer", "price", "versions", "release_date", "customers_also_bought", "dna", "features",
    "in_app_purchases",
}  # fmt: skip
ANDROID_METADATA_KEYS = {
    "title", "short_description", "long_description", "id", "categories", "icon", "screenshots", "videos", "size",
    "rating", "developer", "price", "released_at", "versions", "similar_apps", "release_date", "dna", "permissions",
}  # fmt: skip
IAP_KEYS = {
    "id", "recurring_subscription_period", "is_family_shareable", "is_merchandise_enabled", "is_subscription",
    "is_merchandise_visible", "subscription_family_name", "artwork", "rank", "name", "description", "price",
    "discounts",
}  # fmt: skip
DNA_KEYS = {"class_id", "class_label", "subclass_id", "subclass_label"}
DOCUMENTED_TARGETS = {"version", "privacy_info", "long_description", "icon", "screenshots", "size"}
ISO_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
PACKAGE_NAME = re.compile(r"^[a-z]+(\.[a-z0-9]+){2,}$")


@pytest.fixture(scope="module")
def world() -> World:
    return World(seed=0)


def examples(world: World, store: str) -> tuple[str, ...]:
    return world.EXAMPLE_IOS_APPS if store == "ios" else world.EXAMPLE_ANDROID_APPS


def year_of_changes(world: World, store: str, app_id: str, country: str = "us") -> list[dict]:
    return world.changes(app_id, device=DEVICES[store], country=country, language="en", start=YEAR_START, end=YEAR_END)


def day_before(text: str) -> date:
    return date.fromisoformat(text) - timedelta(days=1)


# ------------------------------------------------------------------------------------ catalogue


def test_store_of_maps_devices_to_stores():
    assert [store_of(d) for d in ("iphone", "ipad", "android")] == ["ios", "ios", "android"]
    with pytest.raises(ValueError):
        store_of("watch")


def test_catalogue_sizes_and_id_formats(world):
    ios, android = world.app_ids("ios"), world.app_ids("android")
    assert (len(ios), len(set(ios)), len(android), len(set(android))) == (800, 800, 600, 600)
    assert all(i.isdigit() and 9 <= len(i) <= 10 for i in ios)
    assert all(PACKAGE_NAME.match(i) for i in android)
    small = World(0, ios_apps=20, android_apps=15)
    assert (len(small.app_ids("ios")), len(small.app_ids("android"))) == (20, 15)


def test_category_tables_use_store_codes():
    assert 40 <= len(IOS_CATEGORIES) <= 50 and 40 <= len(ANDROID_CATEGORIES) <= 55
    assert IOS_CATEGORIES["6014"] == "Games" and IOS_CATEGORIES["6007"] == "Productivity"
    assert IOS_CATEGORIES["7001"] == "Action" and ANDROID_CATEGORIES["GAME_PUZZLE"] == "Puzzle"
    assert all(code.isdigit() for code in IOS_CATEGORIES)
    assert all(code == code.upper() and " " not in code for code in ANDROID_CATEGORIES)


def test_example_sets_are_valid_members(world):
    assert len(world.EXAMPLE_IOS_APPS) == len(world.EXAMPLE_ANDROID_APPS) == len(world.EXAMPLE_KEYWORDS) == 6
    for store in ("ios", "android"):
        for app_id in examples(world, store):
            assert world.has_app(app_id, store)
            assert all(world.is_available(app_id, store, c) for c in ("us", "de", "fr", "jp", "br", "zz"))
    assert len(world.UNAVAILABLE_IN_US) == 4
    assert world.UNTRACKED_KEYWORD not in world.EXAMPLE_KEYWORDS


# ------------------------------------------------------------------------------------ determinism


def test_same_seed_same_answers_other_seed_differs(world):
    twin, other = World(seed=0), World(seed=1)
    app = world.EXAMPLE_IOS_APPS[0]
    calls = [
        lambda w: w.app_ids("android"),
        lambda w: w.metadata(app, device="iphone", country="us", language="en", today=TODAY),
        lambda w: w.changes(app, device="iphone", country="de", language="de", start=YEAR_START, end=YEAR_END),
        lambda w: w.metrics(app, ["downloads", "ratings"], device="iphone", country="us", today=TODAY),
        lambda w: w.benchmarks(
            country="us", device="iphone", type="free", channel="all", start=YEAR_START, end=YEAR_END
        ),
        lambda w: w.search("photo editor", device="iphone", country="us", language="en", day=TODAY),
        lambda w: w.search_history_day("recipes", device="android", country="us", language="en", day=TODAY),
    ]
    for call in calls:
        assert call(world) == call(twin)
    assert world.app_ids("ios") != other.app_ids("ios")
    assert world.EXAMPLE_IOS_APPS != other.EXAMPLE_IOS_APPS
    assert calls[4](world) != calls[4](other)


@pytest.mark.processes
def test_answers_do_not_depend_on_the_process_hash_seed(world):
    script = (
        "import json; from datetime import date; from storeframes.sandbox.world import World; w = World(0);"
        "a = w.EXAMPLE_ANDROID_APPS[1];"
        "print(json.dumps([w.app_ids('ios')[:50], w.UNAVAILABLE_IN_US,"
        " w.metadata(a, device='android', country='fr', language='fr', today=date(2026, 3, 1)),"
        " w.search('budget planner', device='ipad', country='de', language='de', day=date(2025, 7, 4))]))"
    )
    expected = [
        world.app_ids("ios")[:50],
        list(world.UNAVAILABLE_IN_US),
        world.metadata(world.EXAMPLE_ANDROID_APPS[1], device="android", country="fr", language="fr", today=TODAY),
        world.search("budget planner", device="ipad", country="de", language="de", day=date(2025, 7, 4)),
    ]
    env = child_env(PYTHONHASHSEED="12345")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env, cwd=ROOT)
    assert json.loads(out.stdout) == json.loads(json.dumps(expected))


# ------------------------------------------------------------------------------------ availability


def test_availability_rules(world):
    for app_id in world.UNAVAILABLE_IN_US:
        store = "ios" if app_id.isdigit() else "android"
        assert world.has_app(app_id, store) and not world.is_available(app_id, store, "us")
    for store in ("ios", "android"):
        ids = world.app_ids(store)
        in_us = [a for a in ids if a not in world.UNAVAILABLE_IN_US]
        assert all(world.is_available(a, store, "us") for a in in_us)
        missing_in_de = sum(not world.is_available(a, store, "de") for a in ids) / len(ids)
        assert 0.01 <= missing_in_de <= 0.06
    assert not world.has_app(world.EXAMPLE_IOS_APPS[0], "android")
    assert not world.is_available("com.nobody.nothing", "android", "us")
    assert [world.default_language(c) for c in ("us", "de", "fr", "jp", "es", "br", "zz")] == [
        "en", "de", "fr", "ja", "es", "pt", "en"
    ]  # fmt: skip


# ------------------------------------------------------------------------------------ metadata


@pytest.mark.parametrize("device", ["iphone", "ipad"])
def test_ios_metadata_matches_the_documentation(world, device):
    for app_id in world.EXAMPLE_IOS_APPS + tuple(world.app_ids("ios")[100:140]):
        m = world.metadata(app_id, device=device, country="de", language="de", today=TODAY)
        assert set(m) == IOS_METADATA_KEYS
        assert m["id"] == int(app_id)
        assert 1 <= len(m["categories"]) <= 3 and all(str(c) in IOS_CATEGORIES for c in m["categories"])
        assert all(isinstance(c, int) for c in m["categories"])
        assert m["promotional_text"] is None or isinstance(m["promotional_text"], str)
        assert "\n" in m["description"] and "<br>" not in m["description"]
        assert tuple(m["screenshots"]) == SCREENSHOT_KEYS
        filled = {k for k, items in m["screenshots"].items() if items}
        assert ("ipadPro_2018" if device == "ipad" else "iphone_6_5") in filled
        for items in m["screenshots"].values():
            for item in items:
                assert set(item) - {"hash"} == {"id", "filename", "path_component", "url"}
        assert set(m["videos"]) <= {"iphone_6_5", "iphone6plus", "ipadPro", "ipadPro_2018"}
        for items in m["videos"].values():
            assert items and all(set(v) == {"uri", "audio", "width", "height", "codecs"} for v in items)
        assert isinstance(m["size"], int) and set(m["rating"]) == {"average"}
        assert set(m["developer"]) == {"id", "name"} and isinstance(m["developer"]["id"], int)
        assert m["price"] == "" or re.fullmatch(r"\d+\.\d\d", m["price"])
        assert ISO_TIMESTAMP.match(m["release_date"]) and set(m["dna"]) == DNA_KEYS
        assert all(world.has_app(a, "ios") for a in m["customers_also_bought"])
        assert set(m["features"]) == {"game_center", "passbook", "in_apps"}
        assert m["features"]["in_apps"] == bool(m["in_app_purchases"])
        for rank, iap in enumerate(m["in_app_purchases"], start=1):
            assert set(iap) == IAP_KEYS and iap["rank"] == rank and iap["artwork"] is None
            assert iap["price"]["currency"] == "eur" and re.fullmatch(r"\d+\.\d\d", iap["price"]["value"])
            assert iap["is_subscription"] == bool(iap["recurring_subscription_period"])
            assert iap["recurring_subscription_period"] in ("", "P1W", "P1M", "P3M", "P6M", "P1Y")
        for version in m["versions"]:
            assert set(version) == {
                "version",
                "release_notes",
                "has_game_center",
                "game_controller_information",
                "release_date",
            }
            assert set(version["game_controller_information"]) == {"required", "supported", "requirement_label"}


def test_android_metadata_matches_the_documentation(world):
    entities = set()
    for app_id in world.EXAMPLE_ANDROID_APPS + tuple(world.app_ids("android")[100:140]):
        m = world.metadata(app_id, device="android", country="us", language="en", today=TODAY)
        assert set(m) == ANDROID_METADATA_KEYS
        assert m["id"] == app_id and m["released_at"] is None
        assert 1 <= len(m["categories"]) <= 3 and all(c in ANDROID_CATEGORIES for c in m["categories"])
        assert "<br>" in m["long_description"] and "<b>" in m["long_description"] and "\n" not in m["long_description"]
        entities |= {e for e in ("&amp;", "&quot;", "&#39;") if e in m["long_description"]}
        assert m["screenshots"] and all(isinstance(s, str) and s.startswith("https://") for s in m["screenshots"])
        assert all(isinstance(v, str) for v in m["videos"])
        assert set(m["size"]) == {"current"} and isinstance(m["size"]["current"]["data"], int)
        assert set(m["developer"]) == {"id", "name", "email", "website"} and isinstance(m["developer"]["id"], str)
        assert "@" in m["developer"]["email"] and m["developer"]["website"].startswith("https://")
        assert all(world.has_app(a, "android") for a in m["similar_apps"])
        assert set(m["dna"]) == DNA_KEYS and "android.permission.INTERNET" in m["permissions"]
        for version in m["versions"]:
            assert set(version) == {"version", "release_notes", "release_date"}
    assert entities == {"&amp;", "&quot;", "&#39;"}


def test_metadata_prices_and_text_follow_country_and_language(world):
    paid = next(
        a for a in world.app_ids("ios")
        if world.metadata(a, device="iphone", country="us", language="en", today=TODAY)["price"]
    )  # fmt: skip
    us = world.metadata(paid, device="iphone", country="us", language="en", today=TODAY)
    jp = world.metadata(paid, device="iphone", country="jp", language="ja", today=TODAY)
    assert us["price"] != jp["price"] and jp["price"].isdigit()
    assert jp["description"].startswith("[ja] ") and not us["description"].startswith("[")


def test_versions_are_newest_first_and_climb(world):
    def key(version: str) -> tuple[int, ...]:
        return tuple(int(part) for part in version.split("."))

    for store in ("ios", "android"):
        for app_id in examples(world, store) + tuple(world.app_ids(store)[50:80]):
            versions = world.metadata(app_id, device=DEVICES[store], country="us", language="en", today=TODAY)[
                "versions"
            ]
            assert 1 <= len(versions) <= 25
            dates = [v["release_date"] for v in versions]
            assert dates == sorted(dates, reverse=True) and all(ISO_TIMESTAMP.match(d) for d in dates)
            assert all(d[:10] <= TODAY.isoformat() for d in dates)
            numbers = [key(v["version"]) for v in versions]
            assert numbers == sorted(numbers, reverse=True) and len(set(numbers)) == len(numbers)


def test_metadata_before_first_release_has_no_versions(world):
    m = world.metadata(world.EXAMPLE_IOS_APPS[0], device="iphone", country="us", language="en", today=date(2005, 1, 1))
    assert m["versions"] == []


# ------------------------------------------------------------------------------------ changes


def test_version_changes_agree_with_metadata(world):
    for store in ("ios", "android"):
        for app_id in examples(world, store):
            releases = [c for c in year_of_changes(world, store, app_id) if c["target"] == "version"]
            assert releases
            for change in releases:
                day = date.fromisoformat(change["date"])
                on = world.metadata(app_id, device=DEVICES[store], country="us", language="en", today=day)["versions"]
                before = world.metadata(
                    app_id, device=DEVICES[store], country="us", language="en", today=day_before(change["date"])
                )
                assert on[0]["version"] == change["new_value"] == change["version"]
                assert on[0]["release_date"][:10] == change["date"]
                assert on[1]["version"] == change["old_value"] == before["versions"][0]["version"]
                assert (on[0]["release_notes"], on[1]["release_notes"]) == (
                    change["new_release_notes"],
                    change["old_release_notes"],
                )


def test_field_changes_agree_with_metadata(world):
    checked = defaultdict(int)
    for app_id in world.EXAMPLE_IOS_APPS:
        for change in year_of_changes(world, "ios", app_id):
            if change["target"] not in ("icon", "long_description", "size", "screenshots", "title", "subtitle"):
                continue
            day = date.fromisoformat(change["date"])
            after = world.metadata(app_id, device="iphone", country="us", language="en", today=day)
            before = world.metadata(app_id, device="iphone", country="us", language="en", today=day - timedelta(days=1))
            if change["target"] == "icon":
                assert (before["icon"], after["icon"]) == (change["old_value"]["url"], change["new_value"]["url"])
            elif change["target"] == "long_description":
                assert (before["description"], after["description"]) == (change["old_value"], change["new_value"])
            elif change["target"] == "screenshots":
                assert [s["id"] for s in after["screenshots"]["iphone_6_5"]] == [s["id"] for s in change["new_value"]]
            else:
                assert (before[change["target"]], after[change["target"]]) == (change["old_value"], change["new_value"])
            checked[change["target"]] += 1
    assert set(checked) == {"icon", "long_description", "size", "screenshots", "title", "subtitle"}


def test_overlapping_change_ranges_agree_day_by_day(world):
    for store in ("ios", "android"):
        for app_id in examples(world, store)[:3]:
            device = DEVICES[store]
            first = world.changes(
                app_id, device=device, country="fr", language="fr", start=date(2025, 1, 1), end=date(2025, 6, 30)
            )
            second = world.changes(
                app_id, device=device, country="fr", language="fr", start=date(2025, 4, 1), end=date(2025, 9, 30)
            )
            by_day_first, by_day_second = defaultdict(list), defaultdict(list)
            for record in first:
                by_day_first[record["date"]].append(record)
            for record in second:
                by_day_second[record["date"]].append(record)
            overlap = {d for d in by_day_first | by_day_second if "2025-04-01" <= d <= "2025-06-30"}
            assert overlap
            for day in overlap:
                assert by_day_first[day] == by_day_second[day]
            assert all("2025-04-01" <= r["date"] <= "2025-09-30" for r in second)


def test_every_documented_target_occurs_with_its_value_shape(world):
    seen = {"ios": set(), "android": set()}
    for store in ("ios", "android"):
        for app_id in examples(world, store):
            records = year_of_changes(world, store, app_id)
            assert [r["date"] for r in records] == sorted(r["date"] for r in records)
            for r in records:
                seen[store].add(r["target"])
                has_notes = {"old_release_notes", "new_release_notes"} <= set(r)
                assert set(r) - {"old_release_notes", "new_release_notes"} == {
                    "target", "old_value", "new_value", "version", "is_ab_test", "date"
                }  # fmt: skip
                assert has_notes == (r["target"] == "version")
                assert r["is_ab_test"] in (True, False, None) and isinstance(r["version"], str)
                assert r["old_value"] != r["new_value"]
                old, new = r["old_value"], r["new_value"]
                if r["target"] in ("version", "long_description", "title", "subtitle", "short_description"):
                    assert isinstance(old, str) and isinstance(new, str)
                elif r["target"] == "size":
                    assert isinstance(old, int) and isinstance(new, int)
                elif r["target"] == "icon":
                    assert set(old) == set(new) == {"id", "url"}
                elif r["target"] == "screenshots":
                    expected = (
                        {"id", "filename", "path_component", "url"}
                        if store == "ios"
                        else {"id", "path_component", "url"}
                    )
                    assert all(set(item) == expected for item in old + new)
                    old_ids, new_ids = {s["id"] for s in old}, {s["id"] for s in new}
                    assert old_ids & new_ids and old_ids ^ new_ids
                elif r["target"] == "privacy_info":
                    assert tuple(old) == tuple(new) == PRIVACY_SECTIONS
                    assert all(t in PRIVACY_TYPES for values in (*old.values(), *new.values()) for t in values)
                    toggled = sum(len(set(old[s]) ^ set(new[s])) for s in PRIVACY_SECTIONS)
                    assert toggled == 1
                else:
                    pytest.fail(f"unexpected target {r['target']}")
    assert seen["ios"] >= DOCUMENTED_TARGETS
    assert DOCUMENTED_TARGETS - {"privacy_info"} <= seen["android"]
    assert "privacy_info" not in seen["android"]


def test_change_pace_and_flag_mix(world):
    records = [
        r for store in ("ios", "android") for a in world.app_ids(store)[:60] for r in year_of_changes(world, store, a)
    ]
    days_per_change = 120 * 365 / len(records)
    assert 5 <= days_per_change <= 10
    assert {r["is_ab_test"] for r in records} == {True, False, None}
    assert {"", "No related version"} <= {r["version"] for r in records}
    assert {"title", "subtitle", "short_description"} <= {r["target"] for r in records}


def test_changes_vary_with_country_but_versions_do_not(world):
    app_id = world.EXAMPLE_IOS_APPS[2]
    us, de = year_of_changes(world, "ios", app_id, "us"), year_of_changes(world, "ios", app_id, "de")
    assert us != de
    assert [r["new_value"] for r in us if r["target"] == "version"] == [
        r["new_value"] for r in de if r["target"] == "version"
    ]


# ------------------------------------------------------------------------------------ metrics


def test_metrics_shapes_power_key_and_null_share(world):
    names = ["downloads", "revenues", "app-power", "ratings", "daily-ratings"]
    values, nulls = 0, 0
    for store in ("ios", "android"):
        for app_id in world.app_ids(store):
            m = world.metrics(app_id, names, device=DEVICES[store], country="us", today=TODAY)
            assert set(m) == {"downloads", "revenues", "power", "ratings", "daily-ratings"}
            assert all(v["date"] == "2026-02-28" for v in m.values())
            assert set(m["downloads"]) == {"value", "precision", "date"}
            assert (
                set(m["revenues"]) == {"value", "precision", "date", "currency"} and m["revenues"]["currency"] == "usd"
            )
            assert set(m["power"]) == {"value", "date"}
            assert set(m["ratings"]) == set(m["daily-ratings"]) == {"value", "breakdown", "date"}
            ratings, daily = m["ratings"]["breakdown"], m["daily-ratings"]["breakdown"]
            assert (ratings is None) == (m["ratings"]["value"] is None)
            if ratings is not None:
                assert set(ratings) == {"1", "2", "3", "4", "5", "total", "avg"}
                assert ratings["total"] == m["ratings"]["value"] == sum(ratings[s] for s in "12345")
            if daily is not None:
                assert set(daily) == {"1", "2", "3", "4", "5"} and sum(daily.values()) == m["daily-ratings"]["value"]
            values += len(m)
            nulls += sum(v["value"] is None for v in m.values())
            if app_id in examples(world, store):
                assert all(v["value"] is not None for v in m.values())
    assert 0.05 <= nulls / values <= 0.15


def test_metrics_answer_only_what_was_asked(world):
    m = world.metrics(world.EXAMPLE_IOS_APPS[0], ["app-power"], device="ipad", country="gb", today=TODAY)
    assert list(m) == ["power"] and 0 <= m["power"]["value"] <= 100
    assert (
        world.metrics(world.EXAMPLE_IOS_APPS[0], ["revenues"], device="iphone", country="gb", today=TODAY)["revenues"][
            "currency"
        ]
        == "gbp"
    )


# ------------------------------------------------------------------------------------ benchmarks


CHANNELS = {
    "iphone": ("all", "search", "browse", "appref", "webref"),
    "android": ("all", "search", "explore", "referrals"),
}
RATES = ("impressions_to_page_views", "page_views_to_installs", "impressions_to_installs")


def all_benchmarks(world: World, country: str = "us"):
    for device, channels in CHANNELS.items():
        for type_ in ("free", "paid"):
            for channel in channels:
                records = world.benchmarks(
                    country=country,
                    device=device,
                    type=type_,
                    channel=channel,
                    start=date(2025, 5, 1),
                    end=date(2025, 5, 31),
                )
                yield device, channel, records


def test_benchmark_records_follow_the_documented_rules(world):
    thin = total = all_null = 0
    over_100_iphone = over_100_android = 0
    for device, channel, records in all_benchmarks(world):
        table = IOS_CATEGORIES if device == "iphone" else ANDROID_CATEGORIES
        assert [r["category"] for r in records] == list(table)
        assert [r["category_name"] for r in records] == list(table.values())
        for r in records:
            assert set(r) == {"category", "category_name", *RATES, "number_of_apps"}
            total += 1
            if r["number_of_apps"] is None:
                all_null += 1
                assert all(r[k] is None for k in RATES)
                continue
            if r["page_views_to_installs"] is None:
                thin += 1
                assert all(r[k] is None for k in RATES)
                continue
            three_rates = device == "iphone" and channel in ("all", "search", "browse")
            assert (r["impressions_to_page_views"] is not None) == three_rates
            assert (r["impressions_to_installs"] is not None) == three_rates
            if three_rates:
                product = r["impressions_to_page_views"] * r["page_views_to_installs"] / 100
                assert r["impressions_to_installs"] == pytest.approx(product, abs=1e-3)
            if r["page_views_to_installs"] > 100:
                over_100_iphone += device == "iphone"
                over_100_android += device == "android"
    assert all_null > 0 and over_100_iphone > 0 and over_100_android > 0
    assert 0.08 <= (thin + all_null) / total <= 0.18


def test_benchmarks_depend_on_every_argument(world):
    def call(**changes):
        args = {
            "country": "us",
            "device": "iphone",
            "type": "free",
            "channel": "all",
            "start": date(2025, 5, 1),
            "end": date(2025, 5, 31),
        }
        return world.benchmarks(**(args | changes))

    base = call()
    for changes in ({"country": "de"}, {"type": "paid"}, {"channel": "search"}, {"start": date(2025, 4, 1)}):
        assert call(**changes) != base
    shifted = call(start=date(2025, 4, 1))
    ratios = [a["page_views_to_installs"] / b["page_views_to_installs"] for a, b in zip(shifted, base, strict=True)
              if a["page_views_to_installs"] and b["page_views_to_installs"]]  # fmt: skip
    assert all(0.9 < ratio < 1.1 for ratio in ratios)


# ------------------------------------------------------------------------------------ search


def test_live_and_history_caps_and_consistency(world):
    longest = {"ios": 0, "android": 0}
    for keyword in (*world.EXAMPLE_KEYWORDS, "vpn", "weather radar", "solitaire", "chat"):
        for device in ("iphone", "ipad", "android"):
            store = store_of(device)
            live = world.search(keyword, device=device, country="us", language="en", day=date(2025, 8, 1))
            history = world.search_history_day(
                keyword, device=device, country="us", language="en", day=date(2025, 8, 1)
            )
            assert 40 <= len(live) <= 250 and len(set(live)) == len(live)
            assert all(world.is_available(a, store, "us") for a in live)
            assert not set(live) & set(world.UNAVAILABLE_IN_US)
            if history is not None:
                assert len(history) <= (500 if store == "ios" else 250) and len(set(history)) == len(history)
                assert history[:250] == live
                longest[store] = max(longest[store], len(history))
    assert longest["ios"] > 250


def test_iphone_and_ipad_share_results_android_has_its_own(world):
    args = {"country": "us", "language": "en", "day": date(2025, 8, 1)}
    iphone = world.search("recipes", device="iphone", **args)
    assert iphone == world.search("recipes", device="ipad", **args)
    android = world.search("recipes", device="android", **args)
    assert all(world.has_app(a, "android") for a in android)


def test_example_apps_rank_high_for_their_keyword(world):
    for store, device in DEVICES.items():
        for keyword, app_id in zip(world.EXAMPLE_KEYWORDS, examples(world, store), strict=True):
            ranked = world.search(keyword, device=device, country="us", language="en", day=date(2025, 8, 1))
            assert app_id in ranked[:20]


def test_rankings_drift_smoothly(world):
    for keyword in world.EXAMPLE_KEYWORDS:
        days = [
            world.search(keyword, device="iphone", country="us", language="en", day=date(2025, 3, 1) + timedelta(n))
            for n in range(30)
        ]
        overlaps = [len(set(a[:10]) & set(b[:10])) for a, b in pairwise(days)]
        assert min(overlaps) >= 6 and sum(overlaps) / len(overlaps) >= 8
        assert sum(a != b for a, b in pairwise(days)) >= 25
        assert days[0][:50] != days[-1][:50]


def test_ads_come_first_and_may_repeat_organically(world):
    repeated = 0
    for keyword in world.EXAMPLE_KEYWORDS:
        for n in range(5):
            day = date(2025, 8, 1) + timedelta(n)
            answer = world.search_ads(keyword, device="iphone", country="us", language="en", day=day)
            assert all(set(entry) == {"application_id", "is_ad"} for entry in answer)
            assert [e["is_ad"] for e in answer[:2]] == [True, True]
            assert not any(e["is_ad"] for e in answer[2:])
            assert answer[0]["application_id"] != answer[1]["application_id"]
            organic = [e["application_id"] for e in answer[2:]]
            assert organic == world.search(keyword, device="iphone", country="us", language="en", day=day)
            repeated += bool({answer[0]["application_id"], answer[1]["application_id"]} & set(organic))
    assert repeated > 0
    with pytest.raises(ValueError):
        world.search_ads("recipes", device="android", country="us", language="en", day=TODAY)


def test_keyword_tracking(world):
    year = [YEAR_START + timedelta(n) for n in range(365)]
    assert all(
        world.search_history_day(world.UNTRACKED_KEYWORD, device="iphone", country="us", language="en", day=d) is None
        for d in year
    )
    assert (
        world.search_history_day(
            "recipes", device="iphone", country="us", language="en", day=HISTORY_START - timedelta(1)
        )
        is None
    )
    for keyword in world.EXAMPLE_KEYWORDS[:3]:
        recorded = [
            world.search_history_day(keyword, device="android", country="us", language="en", day=d) for d in year
        ]
        missed = sum(r is None for r in recorded) / len(recorded)
        assert 0.01 <= missed <= 0.12
    never = sum(
        world.search_history_day(f"keyword {n}", device="iphone", country="us", language="en", day=date(2025, 2, 1))
        is None
        for n in range(150)
    )
    assert 0.06 <= never / 150 <= 0.25  # about 10 % untracked keywords plus about 5 % missed days
