"""The change-history frame functions end to end, against the in-process sandbox."""

from __future__ import annotations

import warnings
from datetime import UTC, date, datetime, timedelta

import polars as pl
import pytest

import storeframes as sf
from storeframes import schemas
from storeframes.flatteners import Keys, flatten_changes
from storeframes.frames import FRAMES
from storeframes.sandbox import SANDBOX_KEY, World
from tests.conftest import SANDBOX_TODAY

WORLD = World(0)
IOS = list(WORLD.EXAMPLE_IOS_APPS)
ANDROID = list(WORLD.EXAMPLE_ANDROID_APPS)
GONE = next(a for a in WORLD.UNAVAILABLE_IN_US if a.isdigit())
CHANGE_FRAMES = [name for name, spec in FRAMES.items() if spec.endpoint == "changes"]
YESTERDAY = SANDBOX_TODAY - timedelta(days=1)
MONTH = {"start": "2026-08-01", "end": "2026-08-31"}


def arrivals(client: sf.Client) -> list[dict[str, str]]:
    return [dict(a.params) for a in client.sandbox_service.arrivals]


def without_fetch_time(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.drop("fetched_at")


@pytest.fixture(autouse=True)
def _quiet_unknown_targets():
    """The sandbox sends targets the service's documentation does not list (title, subtitle ...); they are tested apart."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sf.UnknownFieldWarning)
        yield


@pytest.fixture
def client(make_client, tmp_path):
    return make_client(cache_dir=tmp_path / "cache")


# -- values, order and schemas ------------------------------------------------------------------------


@pytest.mark.parametrize(("device", "apps"), [("iphone", IOS), ("ipad", IOS[:2]), ("android", ANDROID)])
def test_changes_frame_holds_every_record_of_the_range(client, device, apps):
    frame = client.changes_frame(apps, device=device, start="2026-05-01", end="2026-10-31")
    assert frame.schema == schemas.CHANGES.schema
    expected = []
    for app in apps:  # in the order given, each app's history oldest first
        records = WORLD.changes(
            app, device=device, country="us", language="en", start=date(2026, 5, 1), end=date(2026, 10, 31)
        )
        expected.append(flatten_changes({app: {"changes": records}}, Keys("us", "en", device)))
    assert without_fetch_time(frame).equals(without_fetch_time(pl.concat(expected)))
    assert frame["app_id"].unique(maintain_order=True).to_list() == [a for a in apps if a in set(frame["app_id"])]
    for app in apps:
        days = frame.filter(pl.col("app_id") == app)["date"]
        assert days.is_sorted()
    assert frame["fetched_at"].dt.date().unique().to_list() == [SANDBOX_TODAY]


@pytest.mark.parametrize("name", CHANGE_FRAMES)
@pytest.mark.parametrize(("device", "apps"), [("iphone", IOS[:3]), ("android", ANDROID[:3])])
def test_every_change_frame_has_its_schema_and_pandas_form(client, name, device, apps):
    frame = getattr(client, name)(apps, start="2026-01-01", end="2026-10-31")
    assert frame.schema == FRAMES[name].table.schema
    assert frame["device"].unique().to_list() in ([device], [])
    assert frame.to_pandas().shape == frame.shape
    if not (name == "privacy_changes_frame" and device == "android"):
        assert frame.height > 0


def test_every_change_table_costs_one_fetch(client):
    changes = client.changes_frame(IOS, **MONTH)
    spent, sent = client.spent, len(arrivals(client))
    # 6 apps: two requests (5 + 1 apps), 1 + 10 per app + 1 per app and day
    assert sent == 2 and spent == 2 + 10 * 6 + 31 * 6
    heights = {name: getattr(client, name)(IOS, **MONTH).height for name in CHANGE_FRAMES}
    assert client.spent == spent and len(arrivals(client)) == sent
    assert heights["changes_frame"] == changes.height
    assert heights["version_changes_frame"] == changes.filter(pl.col("target") == "version").height


def test_android_screenshots_have_no_filename(client):
    shots = client.screenshot_changes_frame(ANDROID, start="2026-01-01", end="2026-10-31")
    assert shots.height > 0 and shots["filename"].null_count() == shots.height
    ios = client.screenshot_changes_frame(IOS, start="2026-01-01", end="2026-10-31")
    assert ios["filename"].null_count() == 0


def test_privacy_changes_name_what_was_added_or_removed(client):
    privacy = client.privacy_changes_frame(IOS, start="2025-11-01", end="2026-10-31")
    changes = client.changes_frame(IOS, start="2025-11-01", end="2026-10-31")
    labels = changes.filter(pl.col("target") == "privacy_info")
    moved = privacy.filter(pl.col("status") != "kept")
    assert moved.height == labels.height > 0  # one data type added or removed per change in the sandbox
    assert set(moved["status"]) == {"added", "removed"}
    assert set(privacy["section"]) == set(sf.flatteners.changes.PRIVACY_SECTIONS)
    joined = moved.join(labels, on=["app_id", "date"], how="left")
    assert joined["target"].null_count() == 0


def test_version_changes_follow_each_other(client):
    versions = client.version_changes_frame(IOS[0], start="2025-11-01", end="2026-10-31")
    assert versions.height > 3
    assert versions["old_version"].to_list()[1:] == versions["new_version"].to_list()[:-1]
    assert versions["date"].is_sorted()


# -- dates, the cache and the incremental range ----------------------------------------------------------


def test_the_default_range_is_the_30_days_up_to_yesterday(client):
    frame = client.changes_frame(IOS[:2])
    (sent,) = arrivals(client)
    assert sent["start_date"] == (SANDBOX_TODAY - timedelta(days=30)).isoformat()
    assert sent["end_date"] == YESTERDAY.isoformat()
    assert frame.height == 0 or frame["date"].min() >= SANDBOX_TODAY - timedelta(days=30)


def test_dates_may_be_given_as_dates(client):
    as_text = client.changes_frame(IOS[:2], **MONTH)
    as_dates = client.changes_frame(IOS[:2], start=date(2026, 8, 1), end=date(2026, 8, 31))
    assert as_dates.equals(as_text) and len(arrivals(client)) == 1


def test_a_longer_range_fetches_only_the_new_days(make_client, client, tmp_path):
    client.changes_frame(IOS[:3], start="2026-07-01", end="2026-07-31")
    spent = client.spent
    longer = client.changes_frame(IOS[:3], start="2026-06-01", end="2026-08-31")
    later = arrivals(client)[1:]
    assert sorted((a["start_date"], a["end_date"]) for a in later) == [
        ("2026-06-01", "2026-06-30"),
        ("2026-08-01", "2026-08-31"),
    ]
    assert all(a["apps"] == ",".join(sorted(IOS[:3])) for a in later)
    assert client.spent - spent == 2 * (1 + 30) + 3 * (30 + 31)  # base + 10 per app + 1 per app and day
    with make_client(cache_dir=tmp_path / "fresh") as fresh:
        whole = fresh.changes_frame(IOS[:3], start="2026-06-01", end="2026-08-31")
    assert without_fetch_time(longer).equals(without_fetch_time(whole))
    inner = client.changes_frame(IOS[:3], start="2026-06-15", end="2026-08-15")
    assert len(arrivals(client)) == 3  # a range inside the cached days costs nothing
    assert inner["date"].min() >= date(2026, 6, 15) and inner["date"].max() <= date(2026, 8, 15)
    assert without_fetch_time(inner).equals(
        without_fetch_time(whole.filter(pl.col("date").is_between(date(2026, 6, 15), date(2026, 8, 15))))
    )


def test_more_apps_over_a_cached_range_fetch_only_the_new_apps(client):
    client.changes_frame(IOS[:2], **MONTH)
    frame = client.changes_frame(IOS[:4], **MONTH)
    assert [a["apps"] for a in arrivals(client)] == [",".join(sorted(IOS[:2])), ",".join(sorted(IOS[2:4]))]
    assert frame["app_id"].unique(maintain_order=True).to_list() == [a for a in IOS[:4] if a in set(frame["app_id"])]


def test_an_empty_history_is_remembered(client):
    day = {"start": "2026-08-02", "end": "2026-08-02"}
    quiet_app = next(
        a
        for a in IOS
        if not WORLD.changes(
            a, device="iphone", country="us", language="en", start=date(2026, 8, 2), end=date(2026, 8, 2)
        )
    )
    for name in CHANGE_FRAMES:
        frame = getattr(client, name)(quiet_app, **day)
        assert frame.height == 0 and frame.schema == FRAMES[name].table.schema
    assert len(arrivals(client)) == 1


def test_only_the_unsettled_days_are_fetched_again_once_stale(make_client, tmp_path):
    now = [datetime(2026, 11, 20, 9, tzinfo=UTC)]
    with make_client(cache_dir=tmp_path, clock=lambda: now[0]) as c:
        c.changes_frame(IOS[:2], start="2026-11-01", end="2026-11-19")
        now[0] += timedelta(hours=5)
        c.changes_frame(IOS[:2], start="2026-11-01", end="2026-11-19")
        assert len(arrivals(c)) == 1  # still fresh
        now[0] += timedelta(hours=2)
        frame = c.changes_frame(IOS[:2], start="2026-11-01", end="2026-11-19")
        again = arrivals(c)[1:]
        # a day two days old when fetched is final; yesterday is asked again after six hours
        assert [(a["start_date"], a["end_date"]) for a in again] == [("2026-11-19", "2026-11-19")]
        assert frame["date"].max() <= date(2026, 11, 19)


def test_the_offline_notebook_reproduces_the_changes(make_client, tmp_path):
    with make_client(cache_dir=tmp_path) as online:
        frames = {name: getattr(online, name)(IOS[:3], **MONTH) for name in CHANGE_FRAMES}
    with make_client(cache_dir=tmp_path, offline=True) as offline:
        for name, frame in frames.items():
            assert getattr(offline, name)(IOS[:3], **MONTH).equals(frame), name
        assert offline.sandbox_service.arrivals == []
        with pytest.raises(sf.NotCachedError):
            offline.changes_frame(IOS[:3], start="2026-07-01", end="2026-08-31")


def test_the_token_is_in_no_change_frame_file(client):
    for name in CHANGE_FRAMES:
        getattr(client, name)(IOS[:2], **MONTH)
    client.cache.frames.flush()  # what the cache writes behind the calls (an index's record of rows), written
    files = [p for p in client.cache.path.rglob("*") if p.is_file()]
    tables = {"table=changes", "table=privacy_changes", "table=screenshot_changes", "table=version_changes"}
    assert tables <= {p.parent.name for p in files}
    for path in files:
        assert SANDBOX_KEY.encode() not in path.read_bytes(), path


def test_an_unavailable_app_is_left_out_and_named(client):
    with pytest.warns(sf.AppsUnavailableWarning, match=GONE):
        frame = client.changes_frame([IOS[0], GONE], start="2026-01-01", end="2026-10-31")
    assert frame.height > 0 and set(frame["app_id"]) == {IOS[0]}


def test_the_text_targets_the_documentation_does_not_list_are_known(make_client, tmp_path):
    with make_client(cache_dir=tmp_path) as c, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = c.changes_frame(IOS[:3], start="2026-01-01", end="2026-10-31")
        c.changes_frame(IOS[3:], start="2026-01-01", end="2026-10-31")
    assert [w for w in caught if issubclass(w.category, sf.UnknownFieldWarning)] == []
    assert {"title", "subtitle"} <= set(frame["target"])
    titles = frame.filter(pl.col("target") == "title")
    assert titles.height > 0 and titles["new_value"].null_count() == 0
    assert not titles["new_value"].str.starts_with('"').any()  # text as it is


# -- input errors spend nothing ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "parameter", "words"),
    [
        ({"start": "2026-09-01", "end": "2026-08-01"}, "end", "on or after start=2026-09-01"),
        ({"start": "2026-02-30"}, "start", "YYYY-MM-DD"),
        ({"end": "yesterday"}, "end", "YYYY-MM-DD"),
        ({"start": 20260101}, "start", "YYYY-MM-DD"),
        ({"end": (SANDBOX_TODAY + timedelta(days=5)).isoformat()}, "end", "no later than today"),
        ({"country": "usa"}, "country", "two-letter"),
        ({"device": "android"}, "apps", "android"),
    ],
)
@pytest.mark.parametrize("name", CHANGE_FRAMES)
def test_bad_input_is_refused_before_any_request(client, name, arguments, parameter, words):
    with pytest.raises(sf.InvalidParameterError, match=words) as caught:
        getattr(client, name)(IOS[:1], **arguments)
    assert caught.value.parameter == parameter
    assert client.sandbox_service.arrivals == [] and client.spent == 0


def test_plan_shows_the_cost_of_a_range_and_what_the_cache_holds(client):
    plan = client.plan("changes_frame", apps=IOS, start="2026-07-01", end="2026-08-31")
    assert plan.estimate == 2 + 10 * 6 + 62 * 6 and plan.to_send == 2
    client.version_changes_frame(IOS, start="2026-07-01", end="2026-07-31")
    plan = client.plan("screenshot_changes_frame", apps=IOS, start="2026-07-01", end="2026-08-31")
    assert plan.estimate == 2 + 10 * 6 + 31 * 6 and plan.saved > 0
    with pytest.raises(sf.InvalidParameterError, match="end=") as caught:
        client.plan("changes_frame", apps=IOS, start="2026-08-01", end="2026-07-01")
    assert caught.value.parameter == "end"


def test_package_functions(fresh_default, tmp_path):
    sf.configure(sandbox=True, today=SANDBOX_TODAY, cache_dir=tmp_path)
    assert sf.changes_frame(IOS[:2], **MONTH).equals(sf.default_client().changes_frame(IOS[:2], **MONTH))
    assert list(sf.version_changes_frame.__signature__.parameters)[:3] == ["apps", "start", "end"]


def test_records_outside_the_range_asked_for_are_left_out(client, monkeypatch):
    world = client.sandbox_service.world
    real = world.changes

    def with_a_stray_record(app_id, **kwargs):
        stray = {"target": "icon", "old_value": None, "new_value": None, "version": "", "is_ab_test": None}
        before = (kwargs["start"] - timedelta(days=1)).isoformat()
        return [{**stray, "date": before}, *real(app_id, **kwargs)]

    monkeypatch.setattr(world, "changes", with_a_stray_record)
    frame = client.changes_frame(IOS[:2], **MONTH)
    assert frame.height > 0 and frame["date"].min() >= date(2026, 8, 1)
