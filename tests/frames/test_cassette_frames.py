"""The frame functions end to end over HTTP, replayed from cassettes (``cassettes/frames_*.yaml``).

Each test runs a frame function on a client whose traffic is a cassette recorded from the
loopback sandbox, with a cache folder of its own: the frame's values are checked against
the raw answer the same client then reads back from the cache (no second request), its
schema against the declared one, and the folder is scanned for the token afterwards. In CI
nothing listens (record mode ``none``), so a request the code did not make when the
cassette was recorded fails the test. Re-record with::

    rm cassettes/frames_*.yaml && STOREFRAMES_RECORD=all python -m pytest tests/frames/test_cassette_frames.py
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import polars as pl
import pytest

import storeframes as sf
from storeframes.sandbox import Faults, World
from storeframes.schemas import SCHEMAS
from tests._secrets import leaks_in
from tests.conftest import recorded

WORLD = World(0)
IOS = list(WORLD.EXAMPLE_IOS_APPS)
ANDROID = list(WORLD.EXAMPLE_ANDROID_APPS)
GONE = next(a for a in WORLD.UNAVAILABLE_IN_US if a.isdigit())
START, END = "2026-09-01", "2026-10-26"  # final days: the same requests on any later day


@contextmanager
def frames(name: str, folder: Path, **options) -> Iterator[sf.Client]:
    """A recorded client caching in ``folder``; on exit, the folder holds no token."""
    client_options = {"cache_dir": folder, "progress": False, **options.pop("client_options", {})}
    with recorded(name, client_options=client_options, **options) as client:
        yield client
    assert not leaks_in(folder)


def sent(client: sf.Client) -> int:
    return int((~client.ledger["from_cache"]).sum())


def has_schema(frame: pl.DataFrame, table: str) -> None:
    assert frame.schema == SCHEMAS[table].schema, table


# -- metadata ------------------------------------------------------------------------------


def test_metadata_tables_of_iphone_apps(tmp_path):
    apps = IOS[:5]
    with frames("frames_metadata_iphone", tmp_path) as client:
        meta = client.metadata_frame(apps)
        assert sent(client) == 1
        tables = {
            name: getattr(client, f"{name}_frame")(apps)
            for name in ("versions", "screenshots", "videos", "in_app_purchases", "related_apps")
        }
        raw = client.get("metadata", apps=apps).result
        assert sent(client) == 1  # every table came from the one answer
    has_schema(meta, "metadata")
    assert sorted(meta["app_id"]) == sorted(apps) and meta["device"].unique().to_list() == ["iphone"]
    for row in meta.iter_rows(named=True):
        source = raw[row["app_id"]]["metadata"]
        assert row["title"] == source["title"] and row["subtitle"] == source["subtitle"]
        assert row["developer_name"] == source["developer"]["name"]
        assert row["versions_count"] == len(source["versions"])
        assert row["version"] == source["versions"][0]["version"]
    for name, frame in tables.items():
        has_schema(frame, name)
    assert tables["versions"].height == sum(len(raw[a]["metadata"]["versions"]) for a in apps)
    shots = sum(len(urls) for a in apps for urls in raw[a]["metadata"]["screenshots"].values())
    assert tables["screenshots"].height == shots > 0
    assert set(tables["screenshots"]["device_key"]) <= set(raw[apps[0]]["metadata"]["screenshots"])
    purchases = sum(len(raw[a]["metadata"]["in_app_purchases"] or []) for a in apps)
    assert tables["in_app_purchases"].height == purchases
    related = tables["related_apps"].filter(pl.col("app_id") == apps[0])
    assert related["related_app_id"].to_list() == [
        str(r["id"]) if isinstance(r, dict) else str(r) for r in raw[apps[0]]["metadata"]["customers_also_bought"]
    ]


def test_metadata_tables_of_android_apps_in_another_country(tmp_path):
    apps = ANDROID[:3]
    with frames("frames_metadata_android", tmp_path) as client:
        meta = client.metadata_frame(apps, device="android", country="de")
        permissions = client.permissions_frame(apps, device="android", country="de")
        raw = client.get("metadata", apps=apps, device="android", country="de").result
        assert sent(client) == 1
    has_schema(meta, "metadata")
    has_schema(permissions, "permissions")
    assert meta["country"].unique().to_list() == ["de"] and meta["language"].unique().to_list() == ["de"]
    for row in meta.iter_rows(named=True):
        source = raw[row["app_id"]]["metadata"]
        assert row["short_description"] == source["short_description"]
        assert row["subtitle"] is None and row["long_description_text"]
    assert permissions.height == sum(len(raw[a]["metadata"]["permissions"]) for a in apps) > 0


def test_ipad_screenshots(tmp_path):
    with frames("frames_metadata_ipad", tmp_path) as client:
        shots = client.screenshots_frame(IOS[:2], device="ipad")
        raw = client.get("metadata", apps=IOS[:2], device="ipad").result
    has_schema(shots, "screenshots")
    assert shots["device"].unique().to_list() == ["ipad"]
    by_key = shots.group_by("device_key").len().sort("device_key")
    expected = {}
    for app in IOS[:2]:
        for key, urls in raw[app]["metadata"]["screenshots"].items():
            if urls:
                expected[key] = expected.get(key, 0) + len(urls)
    assert dict(by_key.iter_rows()) == expected
    assert {"ipad", "ipadPro"} & set(expected)


# -- metrics -------------------------------------------------------------------------------


def test_metrics_of_both_stores(tmp_path):
    with frames("frames_metrics", tmp_path) as client:
        iphone = client.metrics_frame(IOS[:2], ["downloads", "revenues", "ratings"])
        android = client.metrics_frame(ANDROID[:2], "ratings", device="android")
        raw = client.get("metrics", apps=IOS[:2], metrics=["downloads", "revenues", "ratings"]).result
        assert sent(client) == 2
    has_schema(iphone, "metrics")
    has_schema(android, "metrics")
    assert set(iphone["metric"]) == {"downloads", "revenues", "ratings"}
    for app in IOS[:2]:
        downloads = iphone.filter(app_id=app, metric="downloads")
        assert downloads.height == 1 and downloads["value"][0] == raw[app]["downloads"]["value"]
        ratings = iphone.filter(app_id=app, metric="ratings").row(0, named=True)
        breakdown = raw[app]["ratings"]["breakdown"] if "breakdown" in raw[app]["ratings"] else raw[app]["ratings"]
        assert ratings["ratings_total"] == breakdown["total"]
        assert ratings["stars_5"] == breakdown["5"]
    assert android.height == 2 and android["ratings_total"].null_count() == 0


# -- change history ------------------------------------------------------------------------


def test_change_tables_of_iphone_apps(tmp_path):
    apps = IOS[:3]
    with frames("frames_changes_iphone", tmp_path) as client:
        # the service's documentation lists the targets seen, not all: title and subtitle are known text targets too
        with warnings.catch_warnings():
            warnings.simplefilter("error", sf.UnknownFieldWarning)
            changes = client.changes_frame(apps, start=START, end=END)
        versions = client.version_changes_frame(apps, start=START, end=END)
        shots = client.screenshot_changes_frame(apps, start=START, end=END)
        privacy = client.privacy_changes_frame(apps, start=START, end=END)
        raw = client.get("changes", apps=apps, start_date=START, end_date=END).result
        assert sent(client) == 1
    for frame, table in ((changes, "changes"), (versions, "version_changes"), (shots, "screenshot_changes")):
        has_schema(frame, table)
    has_schema(privacy, "privacy_changes")
    records = [(a, c) for a in apps for c in raw[a]["changes"]]
    assert changes.height == len(records) > 0
    assert str(changes["date"].min()) >= START and str(changes["date"].max()) <= END
    by_target = changes.group_by("target").len()
    expected = {}
    for _, c in records:
        expected[c["target"]] = expected.get(c["target"], 0) + 1
    assert dict(by_target.iter_rows()) == expected
    assert versions.height == expected.get("version", 0)
    assert {"title", "subtitle"} <= set(expected)  # rows of their own, their values text


def test_change_history_of_android_apps(tmp_path):
    apps = ANDROID[:2]
    with frames("frames_changes_android", tmp_path) as client:
        with warnings.catch_warnings():
            warnings.simplefilter("error", sf.UnknownFieldWarning)  # short_description is a known text target
            changes = client.changes_frame(apps, start=START, end=END, device="android")
        raw = client.get("changes", apps=apps, start_date=START, end_date=END, device="android").result
    has_schema(changes, "changes")
    assert changes.height == sum(len(raw[a]["changes"]) for a in apps) > 0
    assert changes["device"].unique().to_list() == ["android"]


# -- benchmarks ----------------------------------------------------------------------------


def test_benchmarks_of_both_stores_keep_nulls(tmp_path):
    with frames("frames_benchmarks", tmp_path) as client:
        iphone = client.benchmarks_frame(countries=["us", "gb"], channels=["all", "appref"], start=START, end=END)
        android = client.benchmarks_frame(device="android", channels="explore", start=START, end=END)
        assert sent(client) == 5
    has_schema(iphone, "benchmarks")
    assert iphone.group_by("country", "channel").len().height == 4
    appref = iphone.filter(channel="appref")
    # the referral channel has no impressions: its rates from impressions are null, never 0
    assert appref["impressions_to_page_views"].null_count() == appref.height > 0
    assert iphone.filter(channel="all")["page_views_to_installs"].null_count() < iphone.filter(channel="all").height
    assert android["category"].str.contains(r"^[A-Z_]+$").all() and android["device"].unique().to_list() == ["android"]


# -- keyword search ------------------------------------------------------------------------


def test_live_search_with_and_without_ads(tmp_path):
    with frames("frames_search", tmp_path) as client:
        organic = client.search_frame(["photo editor", "budget planner"])
        android = client.search_frame("photo editor", device="android")
        ads = client.search_frame("photo editor", ads=True)
        raw = client.get("search", keyword="photo editor").result
        assert sent(client) == 4
    for frame in (organic, android, ads):
        has_schema(frame, "search")
    first = organic.filter(keyword="photo editor").sort("rank")
    assert first["app_id"].to_list() == raw["value"] and first["rank"].to_list() == list(range(1, first.height + 1))
    assert str(first["date"][0]) == raw["date"]
    assert not android["app_id"].str.contains(r"^\d+$").any()
    assert ads.filter(pl.col("is_ad")).height == 2 and ads.filter(pl.col("is_ad"))["organic_rank"].null_count() == 2
    assert ads.filter(~pl.col("is_ad"))["organic_rank"].to_list() == list(range(1, ads.height - 1))


def test_search_history_of_both_stores(tmp_path):
    with frames("frames_search_history", tmp_path) as client:
        iphone = client.search_history_frame(["photo editor", "collage maker"], start="2026-10-20", end="2026-10-26")
        android = client.search_history_frame("photo editor", start="2026-10-20", end="2026-10-26", device="android")
        raw = client.get("search_history", keyword="photo editor", start_date="2026-10-20", end_date="2026-10-26")
        assert sent(client) == 3
    for frame in (iphone, android):
        has_schema(frame, "search_history")
    days = raw.result
    one = iphone.filter(keyword="photo editor")
    assert one.height == sum(len(ids) for ids in days.values())
    day = sorted(days)[0]
    assert one.filter(pl.col("date").cast(pl.String) == day).sort("rank")["app_id"].to_list() == days[day]
    assert set(iphone["keyword"]) == {"photo editor", "collage maker"}
    assert android.group_by("date").len()["len"].max() <= 250


# -- errors --------------------------------------------------------------------------------


def test_an_unknown_token_fails_the_frame_and_writes_nothing(tmp_path):
    with (
        frames("frames_error_401", tmp_path, api_key="not-the-key") as client,
        pytest.raises(sf.AuthenticationError, match="UnknownTokenError"),
    ):
        client.metadata_frame(IOS[:2])
    assert not list(tmp_path.rglob("*.json.*"))  # no answer was kept


def test_out_of_credits_and_estimates_not_in_plan(tmp_path):
    with frames("frames_error_403_credits", tmp_path / "a", credits=5) as client:
        with pytest.raises(sf.NotEnoughCreditsError):
            client.metadata_frame(IOS[:2])
    with frames("frames_error_403_estimates", tmp_path / "b", estimates_in_plan=False) as client:
        with pytest.raises(sf.EstimatesNotInPlanError):
            client.metrics_frame(IOS[:1], "revenues")
        # the same apps' ratings are not estimates: the plan allows them
        ratings = client.metrics_frame(IOS[:1], "ratings")
    assert ratings.height == 1


def test_an_unavailable_app_is_left_out_with_a_warning_and_the_rest_kept(tmp_path):
    with frames("frames_error_422", tmp_path) as client:
        with pytest.warns(sf.AppsUnavailableWarning, match=GONE):
            meta = client.metadata_frame(IOS[:4] + [GONE])
        assert sorted(meta["app_id"]) == sorted(IOS[:4])
        # remembered for the day: asking again sends nothing
        before = sent(client)
        with pytest.warns(sf.AppsUnavailableWarning):
            again = client.metadata_frame(IOS[:4] + [GONE])
        assert sent(client) == before
    assert again.equals(meta)


def test_a_429_half_way_keeps_what_was_fetched(tmp_path):
    apps = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US][:8]  # five apps, then three
    options = {"max_tries": 1, "max_workers": 1}
    with frames("frames_error_429", tmp_path, rate_limit=(1, 60.0), client_options=options) as client:
        with pytest.raises(sf.RateLimitError):
            client.metadata_frame(apps)
        assert client.ledger["status"].to_list() == [200, 429]
        plan = client.plan("metadata_frame", apps=apps)
        assert plan.to_send == 1 and plan.estimate == 1 + 10 * 3  # only the three apps not fetched
        fetched = json.loads(client.ledger["params"][0])["apps"].split(",")
    with sf.Client("", base_url=None, cache_dir=tmp_path, offline=True) as offline:
        kept = offline.metadata_frame(fetched)
        with pytest.raises(sf.NotCachedError):
            offline.metadata_frame(apps)
    assert sorted(kept["app_id"]) == sorted(fetched) and len(fetched) == 5 and set(fetched) < set(apps)


def test_server_errors_are_retried_and_raise_after_the_last_try(tmp_path, sandbox):
    faults = Faults(server_error=0.5, seed=3)
    options = {"max_tries": 10}
    with frames("frames_retry_5xx", tmp_path / "a", faults=faults, client_options=options) as client:
        retried = client.search_history_frame("photo editor", start="2026-10-20", end="2026-10-26")
        statuses = client.ledger["status"].to_list()
    assert statuses[-1] == 200 and any(s >= 500 for s in statuses)
    expected = sandbox.search_history_frame("photo editor", start="2026-10-20", end="2026-10-26")
    assert retried.drop("fetched_at").equals(expected.drop("fetched_at"))

    down = Faults(server_error=1.0)
    with frames("frames_error_5xx", tmp_path / "c", faults=down, client_options={"max_tries": 2}) as client:
        with pytest.raises(sf.ServerError) as caught:
            client.search_frame("maps")
    assert caught.value.attempts == 2 and caught.value.status in (500, 502, 503)
