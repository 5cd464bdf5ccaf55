"""Change-history flatteners: one row per change, per privacy data type, per screenshot, per version.

Real-looking histories come from the sandbox world (every documented target on both
stores, plus the targets the service's documentation does not list); the wrong shapes, the unknown
targets and the edge cases are small hand-written answers; the property test builds any
history that follows the service's documentation.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from storeframes import ResponseShapeError, UnknownFieldWarning
from storeframes.flatteners import (
    Keys,
    flatten_changes,
    flatten_privacy_changes,
    flatten_screenshot_changes,
    flatten_version_changes,
)
from storeframes.flatteners.changes import PRIVACY_SECTIONS, TARGETS
from storeframes.sandbox.world import World
from storeframes.schemas import CHANGES, PRIVACY_CHANGES, SCREENSHOT_CHANGES, VERSION_CHANGES, TableSchema

START, END = date(2025, 11, 1), date(2026, 11, 19)
FETCHED = datetime(2026, 11, 20, 12, tzinfo=UTC)
DEVICES = ("iphone", "ipad", "android")
Flattener = Callable[[Any, Keys], pl.DataFrame]
TABLES: list[tuple[TableSchema, Flattener]] = [
    (CHANGES, flatten_changes),
    (PRIVACY_CHANGES, flatten_privacy_changes),
    (SCREENSHOT_CHANGES, flatten_screenshot_changes),
    (VERSION_CHANGES, flatten_version_changes),
]
TABLE_IDS = [table.name for table, _ in TABLES]


def keys(device: str = "iphone") -> Keys:
    return Keys(country="us", language="en", device=device, fetched_at=FETCHED)


def assert_schema(frame: pl.DataFrame, table: TableSchema) -> None:
    assert frame.columns == table.names
    assert frame.schema == table.schema


def record(target: str, old: Any, new: Any, **fields: Any) -> dict[str, Any]:
    return {
        "target": target,
        "old_value": old,
        "new_value": new,
        "version": "2.0",
        "is_ab_test": False,
        "date": "2026-01-05",
        **fields,
    }


def answer(*records: dict[str, Any], app: str = "1") -> dict[str, Any]:
    return {app: {"changes": list(records)}}


def quiet(flatten: Flattener, result: Any, device: str = "iphone") -> pl.DataFrame:
    """Flatten, with the warning about targets the service's documentation does not list silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnknownFieldWarning)
        return flatten(result, keys(device))


@pytest.fixture(scope="module")
def histories() -> dict[str, dict[str, dict]]:
    """A year of change history of 5 apps, for each device, as the service's ``result``."""
    world = World(0)
    out = {}
    for device in DEVICES:
        apps = world.EXAMPLE_ANDROID_APPS if device == "android" else world.EXAMPLE_IOS_APPS
        out[device] = {
            app: {"changes": world.changes(app, device=device, country="us", language="en", start=START, end=END)}
            for app in apps[:5]
        }
    return out


def records_of(result: dict[str, dict]) -> list[tuple[str, dict[str, Any]]]:
    return [(app, r) for app, value in result.items() for r in value["changes"]]


# ------------------------------------------------------------------------ sandbox histories


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("table", "flatten"), TABLES, ids=TABLE_IDS)
def test_every_table_has_its_schema_and_keys(histories, device, table, flatten):
    frame = quiet(flatten, histories[device], device)
    assert_schema(frame, table)
    if table is PRIVACY_CHANGES and device == "android":
        assert frame.height == 0  # no privacy labels on the android store
        return
    assert frame.height > 0
    assert frame["device"].unique().to_list() == [device]
    assert frame["country"].unique().to_list() == ["us"]
    assert frame["fetched_at"].unique().to_list() == [FETCHED]
    assert frame["date"].min() >= START and frame["date"].max() <= END


@pytest.mark.parametrize("device", DEVICES)
def test_one_row_per_change_with_values_as_text(histories, device):
    result = histories[device]
    records = records_of(result)
    frame = quiet(flatten_changes, result, device)
    assert frame.height == len(records)
    assert frame["app_id"].to_list() == [app for app, _ in records]
    assert frame["date"].to_list() == [date.fromisoformat(r["date"]) for _, r in records]
    assert frame["target"].to_list() == [r["target"] for _, r in records]
    assert frame["is_ab_test"].to_list() == [r["is_ab_test"] for _, r in records]
    assert frame.height > 0  # the loop below proves nothing on an empty frame
    for row, (_, raw) in zip(frame.iter_rows(named=True), records, strict=True):
        for side in ("old", "new"):
            value, text = raw[f"{side}_value"], row[f"{side}_value"]
            if isinstance(value, str):
                assert text == value
            else:  # integers as digits, objects and arrays as compact JSON
                assert json.loads(text) == value and ", " not in text[:40] and ": " not in text[:40]
            if raw["target"] == "size":
                assert row[f"{side}_size"] == value and text == str(value)
            else:
                assert row[f"{side}_size"] is None
            if raw["target"] == "icon":
                assert row[f"{side}_icon_url"] == value["url"]
            else:
                assert row[f"{side}_icon_url"] is None
            assert row[f"{side}_release_notes"] == raw.get(f"{side}_release_notes")


def test_every_documented_target_appears_on_both_stores(histories):
    ios = set(quiet(flatten_changes, histories["iphone"])["target"])
    android = set(quiet(flatten_changes, histories["android"], "android")["target"])
    assert set(TARGETS) <= ios
    assert set(TARGETS) - {"privacy_info"} <= android  # the android store has no privacy labels
    assert {
        "title",
        "subtitle",
    } <= ios and "short_description" in android  # targets the service's documentation does not list


@pytest.mark.parametrize("device", DEVICES)
def test_version_is_null_where_the_service_ties_none(histories, device):
    frame = quiet(flatten_changes, histories[device], device)
    raw = frame["version_raw"].to_list()
    assert "" in raw and "No related version" in raw
    for version, text in zip(frame["version"], raw, strict=True):
        assert version == (None if text in ("", "No related version") else text)


def test_android_screenshots_have_no_filename_and_iphone_ones_do(histories):
    android = flatten_screenshot_changes(histories["android"], keys("android"))
    ios = flatten_screenshot_changes(histories["iphone"], keys())
    assert android.height > 0 and android["filename"].null_count() == android.height
    assert android["screenshot_id"].null_count() == 0 and android["path_component"].null_count() == 0
    assert ios["filename"].null_count() == 0 and ios["filename"].str.ends_with(".png").all()


@pytest.mark.parametrize("device", DEVICES)
def test_screenshot_rows_and_statuses_follow_the_ids(histories, device):
    result = histories[device]
    frame = flatten_screenshot_changes(result, keys(device))
    shots = [(app, r) for app, r in records_of(result) if r["target"] == "screenshots"]
    assert frame.height == sum(len(r["old_value"]) + len(r["new_value"]) for _, r in shots)
    expected = []
    for _, r in shots:
        old_ids = [s["id"] for s in r["old_value"]]
        new_ids = [s["id"] for s in r["new_value"]]
        expected += [("old", i + 1, s, "kept" if s in new_ids else "removed") for i, s in enumerate(old_ids)]
        expected += [("new", i + 1, s, "kept" if s in old_ids else "added") for i, s in enumerate(new_ids)]
    assert list(frame.select("side", "position", "screenshot_id", "status").iter_rows()) == expected
    statuses = set(frame["status"])
    assert statuses == {"kept", "added", "removed"}  # the sandbox replaces some screenshots and keeps others


@pytest.mark.parametrize("device", ["iphone", "ipad"])
def test_privacy_rows_cover_the_union_of_both_sides(histories, device):
    result = histories[device]
    frame = flatten_privacy_changes(result, keys(device))
    labels = [r for _, r in records_of(result) if r["target"] == "privacy_info"]
    assert labels
    expected = 0
    for r in labels:
        for section in PRIVACY_SECTIONS:
            expected += len(set(r["old_value"].get(section, [])) | set(r["new_value"].get(section, [])))
    assert frame.height == expected
    assert set(frame["section"]) <= set(PRIVACY_SECTIONS)
    moved = frame.filter(pl.col("status") != "kept")
    # the sandbox adds or removes one data type in one section per change
    assert moved.height == len(labels)


@pytest.mark.parametrize("device", DEVICES)
def test_version_changes_are_the_version_records(histories, device):
    result = histories[device]
    frame = flatten_version_changes(result, keys(device))
    versions = [r for _, r in records_of(result) if r["target"] == "version"]
    assert frame.height == len(versions) > 0
    assert frame["old_version"].to_list() == [r["old_value"] for r in versions]
    assert frame["new_version"].to_list() == [r["new_value"] for r in versions]
    assert frame["new_release_notes"].to_list() == [r["new_release_notes"] for r in versions]
    assert frame["old_release_notes"].to_list() == [r["old_release_notes"] for r in versions]


@pytest.mark.parametrize(("table", "flatten"), TABLES, ids=TABLE_IDS)
@pytest.mark.parametrize("result", [{}, None, {"1": {"changes": []}}, {"1": {"changes": None}}, {"1": {}}])
def test_an_empty_history_has_the_schema(table, flatten, result):
    frame = flatten(result, keys())
    assert frame.height == 0
    assert_schema(frame, table)


@pytest.mark.parametrize(("table", "flatten"), TABLES, ids=TABLE_IDS)
@pytest.mark.parametrize("device", DEVICES)
def test_pandas_round_trip(histories, table, flatten, device):
    frame = quiet(flatten, histories[device], device)
    frame_pd = frame.to_pandas()
    assert list(frame_pd.columns) == table.names and len(frame_pd) == frame.height
    assert str(frame_pd["fetched_at"].dt.tz) == "UTC"
    assert pl.from_pandas(frame_pd).select(pl.col("date").cast(pl.Date))["date"].to_list() == frame["date"].to_list()


# ------------------------------------------------------------------------ hand-written histories


def test_the_text_rules_of_old_and_new_values():
    icon = {"id": "ab12", "url": "https://x.example/icon.png"}
    frame = flatten_changes(
        answer(
            record("size", 1024, {"current": {"data": 2048}}),
            record("icon", None, icon),
            record("long_description", "Line 1\nLine \u00e9", "Line 2"),
        ),
        keys(),
    )
    assert frame["old_value"].to_list() == ["1024", None, "Line 1\nLine \u00e9"]
    assert frame["new_value"].to_list() == [
        '{"current":{"data":2048}}',
        '{"id":"ab12","url":"https://x.example/icon.png"}',
        "Line 2",
    ]
    assert frame["old_size"].to_list() == [1024, None, None] and frame["new_size"].to_list() == [2048, None, None]
    assert frame["old_icon_url"].to_list() == [None, None, None]
    assert frame["new_icon_url"].to_list() == [None, icon["url"], None]


@pytest.mark.parametrize(
    ("raw", "version"),
    [("3.1.0", "3.1.0"), ("", None), ("No related version", None), ("no related version ", None), (None, None)],
)
def test_version_text(raw, version):
    frame = flatten_changes(answer(record("version", "3.0.0", "3.1.0", version=raw)), keys())
    assert frame["version"].to_list() == [version]
    assert frame["version_raw"].to_list() == [raw]


def test_is_ab_test_keeps_null():
    frame = flatten_changes(
        answer(record("icon", None, None, is_ab_test=None), record("icon", None, None, is_ab_test=True)), keys()
    )
    assert frame["is_ab_test"].to_list() == [None, True]


def test_an_unknown_target_is_kept_and_named():
    history = answer(
        record("title", "Notes", "Notes: fast"),
        record("in_app_events", None, [{"id": 7, "name": "Spring"}]),
        record("rating_count", 10, 12),
    )
    with pytest.warns(UnknownFieldWarning, match=r"change targets .*: in_app_events, rating_count$") as caught:
        frame = flatten_changes(history, keys())
    assert len(caught) == 1 and "kept" in str(caught[0].message)
    assert frame["target"].to_list() == ["title", "in_app_events", "rating_count"]
    assert frame["old_value"].to_list() == ["Notes", None, "10"]
    assert frame["new_value"].to_list() == ["Notes: fast", '[{"id":7,"name":"Spring"}]', "12"]
    assert frame["old_size"].null_count() == 3
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        assert flatten_changes(history, keys()).height == 3
    assert [str(w.message) for w in again] == [str(caught[0].message)]  # the filters decide repeats
    for _, flatten in TABLES[1:]:
        assert flatten(history, keys()).height == 0


def test_unknown_record_fields_are_named_and_left_out():
    with pytest.warns(UnknownFieldWarning, match=r"changes\[\].*left out.*locale"):
        frame = flatten_changes(answer(record("icon", None, None, locale="en-US")), keys())
    assert frame.height == 1 and "locale" not in frame.columns


def test_privacy_statuses_by_section_and_data_type():
    old = {"DATA_LINKED_TO_YOU": ["LOCATION", "PURCHASES"], "DATA_NOT_LINKED_TO_YOU": ["DIAGNOSTICS"]}
    new = {"DATA_LINKED_TO_YOU": ["PURCHASES", "CONTACT_INFO"], "DATA_USED_TO_TRACK_YOU": ["IDENTIFIERS"]}
    frame = flatten_privacy_changes(answer(record("privacy_info", old, new, version="")), keys())
    assert list(frame.select("section", "data_type", "status").iter_rows()) == [
        ("DATA_LINKED_TO_YOU", "LOCATION", "removed"),
        ("DATA_LINKED_TO_YOU", "PURCHASES", "kept"),
        ("DATA_LINKED_TO_YOU", "CONTACT_INFO", "added"),
        ("DATA_NOT_LINKED_TO_YOU", "DIAGNOSTICS", "removed"),  # a section removed
        ("DATA_USED_TO_TRACK_YOU", "IDENTIFIERS", "added"),  # a section added
    ]
    assert frame["date"].unique().to_list() == [date(2026, 1, 5)]
    assert frame["version"].unique().to_list() == [None]


def test_privacy_labels_appearing_for_the_first_time_are_all_added():
    new = {"DATA_LINKED_TO_YOU": ["LOCATION"], "DATA_NOT_LINKED_TO_YOU": [], "DATA_USED_TO_TRACK_YOU": None}
    frame = flatten_privacy_changes(answer(record("privacy_info", None, new)), keys())
    assert list(frame.select("section", "data_type", "status").iter_rows()) == [
        ("DATA_LINKED_TO_YOU", "LOCATION", "added")
    ]


def test_an_unknown_privacy_section_is_kept_and_named():
    old = {"DATA_LINKED_TO_YOU": ["LOCATION"]}
    new = {"DATA_LINKED_TO_YOU": ["LOCATION"], "DATA_SHARED_WITH_PARTNERS": ["USAGE_DATA"]}
    with pytest.warns(UnknownFieldWarning, match="privacy section.*DATA_SHARED_WITH_PARTNERS"):
        frame = flatten_privacy_changes(answer(record("privacy_info", old, new)), keys())
    assert frame["section"].to_list() == ["DATA_LINKED_TO_YOU", "DATA_SHARED_WITH_PARTNERS"]
    assert frame["status"].to_list() == ["kept", "added"]


def test_screenshot_sides_positions_and_statuses():
    a = {"id": "a", "filename": "1.png", "path_component": "p/a", "url": "https://x.example/a.png"}
    b = {"id": "b", "filename": "2.png", "path_component": "p/b", "url": "https://x.example/b.png"}
    c = {"id": "c", "filename": "3.png", "path_component": "p/c", "url": "https://x.example/c.png"}
    frame = flatten_screenshot_changes(answer(record("screenshots", [a, b], [b, c], is_ab_test=True)), keys())
    assert list(frame.select("side", "position", "screenshot_id", "filename", "status").iter_rows()) == [
        ("old", 1, "a", "1.png", "removed"),
        ("old", 2, "b", "2.png", "kept"),
        ("new", 1, "b", "2.png", "kept"),
        ("new", 2, "c", "3.png", "added"),
    ]
    assert frame["url"].to_list() == [a["url"], b["url"], b["url"], c["url"]]
    assert frame["path_component"].to_list() == ["p/a", "p/b", "p/b", "p/c"]
    assert frame["is_ab_test"].unique().to_list() == [True]


def test_android_screenshot_objects_and_bare_urls():
    shot = {"id": 77, "path_component": "tokenA", "url": "https://play.example/tokenA"}
    other = {"id": "88", "path_component": "tokenB", "url": "https://play.example/tokenB"}
    frame = flatten_screenshot_changes(
        answer(record("screenshots", [shot, "https://play.example/x"], [other, "https://play.example/x"])),
        keys("android"),
    )
    assert frame["screenshot_id"].to_list() == ["77", None, "88", None]
    assert frame["filename"].null_count() == 4
    assert frame["status"].to_list() == ["removed", "kept", "added", "kept"]  # a bare URL is matched by URL


def test_a_first_screenshot_set_is_all_added():
    frame = flatten_screenshot_changes(answer(record("screenshots", None, [{"id": "a", "url": "u"}])), keys())
    assert list(frame.select("side", "status").iter_rows()) == [("new", "added")]


def test_rows_of_several_answers_count_per_answer():
    from storeframes.flatteners import batch_changes, batch_screenshot_changes

    one = answer(record("icon", None, None), record("size", 1, 2))
    two = answer(record("screenshots", [{"id": "a", "url": "u"}], []), app="2")
    frame, counts = batch_changes([(one, keys()), ({}, keys()), (two, keys("ipad"))])
    assert counts == [2, 0, 1]
    assert frame["device"].to_list() == ["iphone", "iphone", "ipad"]
    shots, counts = batch_screenshot_changes([(one, keys()), (two, keys("ipad"))])
    assert counts == [0, 1] and shots["app_id"].to_list() == ["2"]


# ------------------------------------------------------------------------ wrong shapes name their path

BAD_VALUES = [
    ("size", "big", "old_value"),
    ("size", True, "old_value"),
    ("size", {"current": {"data": "10"}}, "old_value.current.data"),
    ("version", 2, "old_value"),
    ("long_description", ["a"], "old_value"),
    ("icon", "https://x.example/icon.png", "old_value"),
    ("icon", {"id": "a", "url": 5}, "old_value.url"),
    ("icon", {"id": 1.5, "url": "u"}, "old_value.id"),
    ("screenshots", {"iphone": []}, "old_value"),
    ("screenshots", [5], "old_value[0]"),
    ("screenshots", [{"id": "a", "url": "u"}, {"id": "b", "url": 3}], "old_value[1].url"),
    ("screenshots", [{"id": ["a"], "url": "u"}], "old_value[0].id"),
    ("privacy_info", ["LOCATION"], "old_value"),
    ("privacy_info", {"DATA_LINKED_TO_YOU": "LOCATION"}, "old_value.DATA_LINKED_TO_YOU"),
    ("privacy_info", {"DATA_LINKED_TO_YOU": ["LOCATION", 3]}, "old_value.DATA_LINKED_TO_YOU[1]"),
]
READS = {
    "version": {"changes", "version_changes"},
    "screenshots": {"changes", "screenshot_changes"},
    "privacy_info": {"changes", "privacy_changes"},
}


@pytest.mark.parametrize(("target", "value", "where"), BAD_VALUES, ids=[f"{t}-{w}" for t, _, w in BAD_VALUES])
def test_a_value_that_does_not_fit_its_target_names_its_path(target, value, where):
    good = record("icon", None, None)
    history = answer(good, record(target, value, None))
    for table, flatten in TABLES:
        if table.name in READS.get(target, {"changes"}):
            with pytest.raises(ResponseShapeError) as caught:
                flatten(history, keys())
            assert caught.value.path == f"result.1.changes[1].{where}", table.name
            assert caught.value.endpoint == "changes"
        else:  # a table that does not read the value is not stopped by it
            assert flatten(history, keys()).height == 0


BAD_RECORDS = [
    ({"date": "2026/01/05"}, "changes[0].date"),
    ({"date": None}, "changes[0].date"),
    ({"date": 20260105}, "changes[0].date"),
    ({"target": 5}, "changes[0].target"),
    ({"target": None}, "changes[0].target"),
    ({"version": 3}, "changes[0].version"),
    ({"is_ab_test": "yes"}, "changes[0].is_ab_test"),
    ({"old_release_notes": ["a"]}, "changes[0].old_release_notes"),
]


@pytest.mark.parametrize(
    ("fields", "where"), BAD_RECORDS, ids=[w.split(".")[-1] + str(i) for i, (_, w) in enumerate(BAD_RECORDS)]
)
def test_a_bad_record_field_names_its_path(fields, where):
    with pytest.raises(ResponseShapeError) as caught:
        flatten_changes(answer({**record("version", "1", "2"), **fields}), keys())
    assert caught.value.path == f"result.1.{where}"


@pytest.mark.parametrize(
    ("result", "where"),
    [
        ({"1": {"changes": {"0": {}}}}, "result.1.changes"),
        ({"1": {"changes": ["icon"]}}, "result.1.changes[0]"),
        ({"1": ["icon"]}, "result.1"),
        (["icon"], "result"),
    ],
)
@pytest.mark.parametrize(("table", "flatten"), TABLES, ids=TABLE_IDS)
def test_a_history_of_the_wrong_shape_names_its_path(result, where, table, flatten):
    with pytest.raises(ResponseShapeError) as caught:
        flatten(result, keys())
    assert caught.value.path == where


# ------------------------------------------------------------------------ property test: any documented history

TEXT = st.text(max_size=10)
DAY = st.dates(min_value=date(2015, 1, 1), max_value=date(2030, 12, 31)).map(date.isoformat)
SHOT = st.fixed_dictionaries(
    {"id": st.text("0123456789abcdef", min_size=1, max_size=8), "url": TEXT, "path_component": TEXT},
    optional={"filename": TEXT},
)
PRIVACY = st.dictionaries(
    st.sampled_from(PRIVACY_SECTIONS),
    st.lists(st.sampled_from(["PURCHASES", "LOCATION", "CONTACT_INFO", "USAGE_DATA", "DIAGNOSTICS"]), unique=True),
)
VALUES = {
    "version": TEXT,
    "long_description": TEXT,
    "size": st.integers(0, 2**40),
    "icon": st.fixed_dictionaries({"id": TEXT, "url": TEXT}),
    "screenshots": st.lists(SHOT, max_size=4, unique_by=lambda s: s["id"]),
    "privacy_info": PRIVACY,
}


@st.composite
def change_records(draw: Any) -> dict[str, Any]:
    target = draw(st.sampled_from(TARGETS))
    value = VALUES[target]
    out = {
        "target": target,
        "old_value": draw(st.none() | value),
        "new_value": draw(value),
        "version": draw(st.sampled_from(["", "No related version"]) | TEXT),
        "is_ab_test": draw(st.none() | st.booleans()),
        "date": draw(DAY),
    }
    if target == "version":
        out["old_release_notes"] = draw(TEXT)
        out["new_release_notes"] = draw(TEXT)
    return out


HISTORY = st.dictionaries(
    st.integers(1, 10**10).map(str),
    st.fixed_dictionaries({"changes": st.lists(change_records(), max_size=6)}),
    max_size=4,
)


@settings(max_examples=60, deadline=None)
@given(HISTORY)
def test_any_documented_history_flattens_to_the_schema(result):
    records = records_of(result)
    frames = {table.name: flatten(result, keys()) for table, flatten in TABLES}
    for table, _ in TABLES:
        assert_schema(frames[table.name], table)
    assert frames["changes"].height == len(records)
    assert frames["version_changes"].height == sum(r["target"] == "version" for _, r in records)
    assert frames["screenshot_changes"].height == sum(
        len(r["old_value"] or []) + len(r["new_value"]) for _, r in records if r["target"] == "screenshots"
    )
    assert frames["privacy_changes"].height == sum(
        len(set((r["old_value"] or {}).get(s, [])) | set(r["new_value"].get(s, [])))
        for _, r in records
        if r["target"] == "privacy_info"
        for s in PRIVACY_SECTIONS
    )
    assert frames["changes"]["date"].to_list() == [date.fromisoformat(r["date"]) for _, r in records]
    for text, (_, r) in zip(frames["changes"]["new_value"], records, strict=True):
        assert text == r["new_value"] if isinstance(r["new_value"], str) else json.loads(text) == r["new_value"]


def test_dates_cover_the_whole_range(histories):
    frame = quiet(flatten_changes, histories["iphone"])
    assert frame["date"].max() - frame["date"].min() > timedelta(days=300)
