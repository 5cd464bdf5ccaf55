"""Keyword search and category benchmark flatteners: live search (with and without ads), history, benchmarks.

Real-looking answers come from the sandbox world (every store, the ads, the days the
service missed, a day of more than 250 results, thin benchmark categories); each form that
docs/explanation/service.md calls possible is built from them. The caps, the wrong shapes and the edge cases
are small hand-written answers; the property test builds any history in any accepted form.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from storeframes import ResponseShapeError, ResultCapWarning, UnknownFieldWarning
from storeframes.flatteners import (
    Keys,
    batch_benchmarks,
    batch_search,
    batch_search_history,
    flatten_benchmarks,
    flatten_search,
    flatten_search_history,
)
from storeframes.sandbox.world import World
from storeframes.schemas import BENCHMARKS, SEARCH, SEARCH_HISTORY, TableSchema

TODAY = date(2026, 11, 20)
FETCHED = datetime(2026, 11, 20, 12, tzinfo=UTC)
HISTORY_START = TODAY - timedelta(days=60)
DEVICES = ("iphone", "ipad", "android")
KEYWORD = "photo editor"
ADS_KEYWORD = "budget planner"
"""A keyword whose first ad on TODAY does not rank organically and whose second does (in the sandbox)."""
CAPS = {"iphone": 500, "ipad": 500, "android": 250}


def keys(
    device: str = "iphone",
    keyword: str | None = KEYWORD,
    fetched_at: datetime | None = FETCHED,
    country: str = "us",
    language: str | None = "en",
    **request: str,
) -> Keys:
    params = {"keyword": keyword, **request} if keyword is not None else dict(request)
    return Keys(country=country, language=language, device=device, fetched_at=fetched_at, request=params)


def assert_schema(frame: pl.DataFrame, table: TableSchema) -> None:
    assert frame.columns == table.names
    assert frame.schema == table.schema


def caught_of(kind: type[Warning], caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, kind)]


def run(flatten: Callable[[Any, Keys], pl.DataFrame], result: Any, k: Keys) -> tuple[pl.DataFrame, list[Any]]:
    """Flatten, recording every warning (each one, not once per place)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = flatten(result, k)
    return frame, caught


@pytest.fixture(scope="module")
def world() -> World:
    return World(0)


# ------------------------------------------------------------------------ answer forms

LIVE_FORMS = ("value", "apps", "pairs", "value_objects")


def live_form(ids: list[Any], form: str, day: str | None = TODAY.isoformat()) -> Any:
    """A live organic search in one of the forms docs/explanation/service.md names."""
    if form == "value":
        return {"date": day, "value": ids}
    if form == "apps":
        return {"date": day, "apps": [{"id": a, "title": f"App {a}", "position": i + 1} for i, a in enumerate(ids)]}
    if form == "pairs":
        return [{"application_id": a, "is_ad": False} for a in ids]
    if form == "value_objects":
        return {"date": day, "value": [{"application_id": a} for a in ids]}
    raise AssertionError(form)


HISTORY_FORMS = (
    "by_date",
    "by_date_app_objects",
    "by_date_value_object",
    "by_date_apps_object",
    "list_value",
    "list_apps",
    "list_nested",
)


def history_form(days: dict[str, list[Any]], form: str) -> Any:
    """A history in one of the forms docs/explanation/service.md calls possible."""

    def apps(ids: list[Any]) -> list[dict[str, Any]]:
        return [{"id": a, "position": i + 1} for i, a in enumerate(ids)]

    if form == "by_date":
        return dict(days)
    if form == "by_date_app_objects":
        return {d: apps(ids) for d, ids in days.items()}
    if form == "by_date_value_object":
        return {d: {"date": d, "value": ids} for d, ids in days.items()}
    if form == "by_date_apps_object":
        return {d: {"apps": apps(ids)} for d, ids in days.items()}
    if form == "list_value":
        return [{"date": d, "value": ids} for d, ids in days.items()]
    if form == "list_apps":
        return [{"date": d, "apps": apps(ids)} for d, ids in days.items()]
    if form == "list_nested":
        return [{"date": d, "value": {"value": ids}} for d, ids in days.items()]
    raise AssertionError(form)


def sandbox_history(world: World, keyword: str, device: str) -> dict[str, list[str]]:
    """What the sandbox service answers for the 60 days to today: recorded days, then today's live search."""
    days: dict[str, list[str]] = {}
    day = HISTORY_START
    while day < TODAY:
        ids = world.search_history_day(keyword, device=device, country="us", language="en", day=day)
        if ids is not None:
            days[day.isoformat()] = ids
        day += timedelta(days=1)
    days[TODAY.isoformat()] = world.search(keyword, device=device, country="us", language="en", day=TODAY)[:250]
    return days


def expected_history(
    days: dict[str, list[Any]], keyword: str | None, today: str | None = TODAY.isoformat()
) -> list[tuple[Any, ...]]:
    rows = []
    for day, ids in days.items():
        source = "live" if day == today and len(ids) <= 250 else "history"
        rows += [(keyword, date.fromisoformat(day), i + 1, str(a), source) for i, a in enumerate(ids)]
    return rows


HISTORY_COLUMNS = ("keyword", "date", "rank", "app_id", "source")


@pytest.fixture(scope="module")
def histories(world: World) -> dict[tuple[str, str], dict[str, list[str]]]:
    return {
        (device, keyword): sandbox_history(world, keyword, device)
        for device in DEVICES
        for keyword in ("photo editor", "meditation")
    }


# ------------------------------------------------------------------------ live search: sandbox answers


@pytest.mark.parametrize("keyword_level", [False, True], ids=["flat", "under-keyword"])
@pytest.mark.parametrize("form", LIVE_FORMS)
@pytest.mark.parametrize("device", DEVICES)
def test_live_search_in_every_form(world, device, form, keyword_level):
    ids = world.search("meditation", device=device, country="us", language="en", day=TODAY)
    result = live_form(ids, form)
    if keyword_level:
        result = {"Meditation": result}
    frame, caught = run(flatten_search, result, keys(device, "meditation"))
    assert caught == []
    assert_schema(frame, SEARCH)
    assert frame.height == len(ids) > 0
    assert frame["app_id"].to_list() == ids
    assert frame["rank"].to_list() == list(range(1, len(ids) + 1))
    assert frame["organic_rank"].to_list() == list(range(1, len(ids) + 1))
    assert frame["is_ad"].to_list() == [False] * len(ids)
    assert frame["keyword"].unique().to_list() == ["meditation"]
    assert frame["date"].unique().to_list() == [TODAY]
    assert frame["device"].unique().to_list() == [device]
    assert frame["country"].unique().to_list() == ["us"] and frame["language"].unique().to_list() == ["en"]
    assert frame["fetched_at"].unique().to_list() == [FETCHED]
    if device == "android":
        assert all("." in a for a in ids)  # package names
    else:
        assert all(a.isdigit() for a in ids)


@pytest.mark.parametrize("keyword_level", [False, True], ids=["flat", "under-keyword"])
@pytest.mark.parametrize("device", ["iphone", "ipad"])
def test_search_with_ads_keeps_the_ad_and_the_organic_row_of_an_advertiser(world, device, keyword_level):
    answer = world.search_ads(ADS_KEYWORD, device=device, country="us", language="en", day=TODAY)
    ad, advertiser = answer[0]["application_id"], answer[1]["application_id"]
    organic = [e["application_id"] for e in answer if not e["is_ad"]]
    assert advertiser in organic and ad not in organic  # what the sandbox gives for this keyword
    result = {ADS_KEYWORD.upper(): answer} if keyword_level else answer
    frame, caught = run(flatten_search, result, keys(device, keyword=ADS_KEYWORD))
    assert caught == []
    assert_schema(frame, SEARCH)
    assert frame.height == len(answer) == len(organic) + 2
    assert frame["app_id"].to_list() == [e["application_id"] for e in answer]
    assert frame["rank"].to_list() == list(range(1, len(answer) + 1))  # ads counted
    assert frame["is_ad"].to_list() == [True, True] + [False] * len(organic)
    assert frame["organic_rank"].to_list() == [None, None, *range(1, len(organic) + 1)]
    both = frame.filter(pl.col("app_id") == advertiser)
    assert both.select("rank", "is_ad", "organic_rank").rows() == [
        (2, True, None),
        (organic.index(advertiser) + 3, False, organic.index(advertiser) + 1),
    ]
    assert frame["date"].unique().to_list() == [TODAY]  # the bare list has no date: the UTC day of the fetch


def test_ads_anywhere_in_the_list_shift_rank_but_not_organic_rank():
    answer = [
        {"application_id": "1", "is_ad": False},
        {"application_id": "2", "is_ad": True},
        {"application_id": "3"},
        {"application_id": "4", "is_ad": None},
        {"application_id": "2", "is_ad": False},
    ]
    frame = flatten_search(answer, keys())
    assert frame.select("rank", "app_id", "is_ad", "organic_rank").rows() == [
        (1, "1", False, 1),
        (2, "2", True, None),
        (3, "3", False, 2),  # no is_ad: organic
        (4, "4", False, 3),  # null is_ad: organic
        (5, "2", False, 4),
    ]


@pytest.mark.parametrize(
    "result",
    [
        {"date": "2026-11-20", "value": [284882215, "389801252", 7]},
        {"apps": [{"id": 284882215}, {"id": "389801252"}, {"id": 7}]},
        [
            {"application_id": 284882215, "is_ad": False},
            {"application_id": "389801252", "is_ad": False},
            {"application_id": 7},
        ],
        {"value": [{"id": 284882215}, {"application_id": "389801252"}, {"id": 7}]},
    ],
    ids=["value", "apps", "pairs", "value-objects"],
)
def test_integer_ids_become_text(result):
    frame = flatten_search(result, keys())
    assert frame["app_id"].dtype == pl.String
    assert frame["app_id"].to_list() == ["284882215", "389801252", "7"]


def test_a_history_of_integer_ids_becomes_text():
    result = {"2026-01-05": [284882215, 7], "2026-01-06": [389801252, -3, 2**70]}
    frame = flatten_search_history(result, keys())
    assert frame["app_id"].dtype == pl.String
    assert frame["app_id"].to_list() == ["284882215", "7", "389801252", "-3", "1180591620717411303424"]
    assert frame["rank"].to_list() == [1, 2, 1, 2, 3]


@pytest.mark.parametrize(
    ("ids", "where", "found"),
    [
        ([1, True], "result.value[1]", "expected text, got True"),  # polars alone would read true as 1
        ([1, 2, 2.5], "result.value[2]", "expected text, got 2.5"),
        ([1, None], "result.value[1]", "expected an app id, got null"),
    ],
    ids=["true", "float", "null"],
)
def test_integer_ids_beside_anything_else_name_its_path(ids, where, found):
    with pytest.raises(ResponseShapeError) as caught:
        flatten_search({"date": "2026-11-20", "value": ids}, keys())
    assert caught.value.path == where
    assert found in str(caught.value)


@pytest.mark.parametrize("key", ["photo editor", "Photo Editor", "PHOTO  EDITOR", " photo\teditor ", "photo\n editor"])
def test_a_keyword_key_matches_ignoring_case_and_runs_of_spaces(key):
    frame, caught = run(flatten_search, {key: {"date": "2026-11-19", "value": ["1", "2"]}}, keys())
    assert caught == []
    assert frame["app_id"].to_list() == ["1", "2"]
    assert frame["keyword"].to_list() == [KEYWORD, KEYWORD]  # the request's keyword, not the key
    assert frame["date"].to_list() == [date(2026, 11, 19)] * 2


@pytest.mark.parametrize("key", ["photo editors", "photoeditor", "photo-editor", "editor photo"])
def test_a_key_named_after_another_keyword_is_refused(key):
    with pytest.raises(ResponseShapeError) as caught:
        flatten_search({key: {"value": ["1"]}}, keys())
    assert caught.value.path == "result"
    assert f"got an object with keys {key}" in str(caught.value)


def test_a_keyword_key_needs_the_request_keyword():
    with pytest.raises(ResponseShapeError) as caught:
        flatten_search({KEYWORD: {"value": ["1"]}}, keys(keyword=None))
    assert caught.value.path == "result"
    with pytest.raises(ResponseShapeError) as caught:
        flatten_search_history({KEYWORD: {"2026-01-05": ["1"]}}, keys(keyword=None))
    assert caught.value.path == "result"


@pytest.mark.parametrize(
    ("flatten", "inner", "endpoint"),
    [
        (flatten_search, {"value": ["1", "2"]}, "search"),
        (flatten_search, [{"application_id": "1", "is_ad": True}, {"application_id": "2", "is_ad": False}], "search"),
        (flatten_search_history, {"2026-01-05": ["1", "2"]}, "search_history"),
        (flatten_search_history, [{"date": "2026-01-05", "value": ["1", "2"]}], "search_history"),
    ],
    ids=["live-value", "live-pairs", "history-by-date", "history-list"],
)
def test_members_beside_the_keyword_are_ignored_with_one_warning(flatten, inner, endpoint):
    result = {"total": 2, "Photo Editor": inner, "metadata": {"cost": 10}}
    frame, caught = run(flatten, result, keys())
    assert frame.height == 2 and frame["app_id"].to_list() == ["1", "2"]
    messages = caught_of(UnknownFieldWarning, caught)
    assert messages == [
        f"the service sent members beside the keyword storeframes does not know at result ({endpoint}), "
        "ignored: metadata, total"
    ]
    assert len(caught) == 1
    frame, caught = run(flatten, result, keys())  # named again: the filters ("always" here) decide
    assert frame.height == 2 and caught_of(UnknownFieldWarning, caught) == messages


def test_unknown_members_of_a_live_answer_are_named_in_one_warning():
    result = {"date": "2026-11-20", "value": ["1"], "count": 1, "cursor": None}
    frame, caught = run(flatten_search, result, keys())
    assert frame["app_id"].to_list() == ["1"]
    assert caught_of(UnknownFieldWarning, caught) == [
        "the service sent fields storeframes does not know at result (search), left out of the frame: count, cursor"
    ]
    assert len(run(flatten_search, result, keys())[1]) == 1  # each time: the filters decide repeats


@pytest.mark.parametrize(
    ("result", "fetched_at", "expected"),
    [
        ({"date": "2026-11-19", "value": ["1"]}, FETCHED, date(2026, 11, 19)),
        ({"date": "2026-11-19T23:59:59Z", "value": ["1"]}, FETCHED, date(2026, 11, 19)),
        ({"date": "2026-11-19T08:00:00.123456+00:00", "apps": [{"id": "1"}]}, FETCHED, date(2026, 11, 19)),
        ({"date": "2026-11-19", "value": ["1"]}, None, date(2026, 11, 19)),
        ({"value": ["1"]}, FETCHED, TODAY),
        ({"date": None, "value": ["1"]}, FETCHED, TODAY),
        ([{"application_id": "1", "is_ad": False}], FETCHED, TODAY),
        # 23:30 at UTC-5 is 04:30 the next day in UTC
        ({"value": ["1"]}, datetime(2026, 11, 20, 23, 30, tzinfo=timezone(timedelta(hours=-5))), date(2026, 11, 21)),
        ({"value": ["1"]}, datetime(2026, 11, 21, 0, 30, tzinfo=timezone(timedelta(hours=2))), date(2026, 11, 20)),
        ({"value": ["1"]}, None, None),
        ([{"application_id": "1", "is_ad": True}], None, None),
    ],
    ids=[
        "date",
        "timestamp-z",
        "timestamp-offset",
        "date-without-fetch",
        "fetch-day",
        "null-date",
        "pairs",
        "fetch-west-of-utc",
        "fetch-east-of-utc",
        "nothing",
        "pairs-nothing",
    ],
)
def test_the_date_of_a_live_search(result, fetched_at, expected):
    frame = flatten_search(result, keys(fetched_at=fetched_at))
    assert frame["date"].dtype == pl.Date
    assert frame["date"].to_list() == [expected]
    assert frame["fetched_at"].to_list() == [fetched_at]


def test_the_keyword_column_comes_from_the_request():
    frame = flatten_search({"date": "2026-11-20", "value": ["1"]}, keys(keyword="Maps  App"))
    assert frame["keyword"].to_list() == ["Maps  App"]  # as the request sent it
    frame = flatten_search({"date": "2026-11-20", "value": ["1"]}, keys(keyword=None))
    assert frame["keyword"].to_list() == [None]
    frame = flatten_search({"value": ["1"]}, Keys())
    assert frame.row(0, named=True) == {
        "keyword": None,
        "date": None,
        "rank": 1,
        "app_id": "1",
        "is_ad": False,
        "organic_rank": 1,
        "country": None,
        "language": None,
        "device": None,
        "fetched_at": None,
    }


# ------------------------------------------------------------------------ live search: the cap


def test_more_than_250_organic_results_keep_the_first_250_and_the_ads():
    organic = [str(1000 + i) for i in range(260)]
    answer = [{"application_id": "ad1", "is_ad": True}, {"application_id": "ad2", "is_ad": True}]
    answer += [{"application_id": a, "is_ad": False} for a in organic[:100]]
    answer += [{"application_id": "ad3", "is_ad": True}]
    answer += [{"application_id": a, "is_ad": False} for a in organic[100:]]
    answer += [{"application_id": "ad4", "is_ad": True}]  # after the cap, still an ad shown
    frame, caught = run(flatten_search, answer, keys())
    messages = caught_of(ResultCapWarning, caught)
    assert messages == [
        "the service sent 260 organic results for keyword 'photo editor' (search), more than the 250 the "
        "service documents; the first 250 are kept"
    ]
    assert len(caught) == 1
    assert frame.height == 250 + 4
    assert frame.filter(~pl.col("is_ad"))["app_id"].to_list() == organic[:250]
    assert frame.filter(pl.col("is_ad"))["app_id"].to_list() == ["ad1", "ad2", "ad3", "ad4"]
    assert frame["rank"].to_list() == list(range(1, 255))
    assert frame["organic_rank"].max() == 250
    assert frame.filter(pl.col("app_id") == "ad4")["rank"].to_list() == [254]


@pytest.mark.parametrize("form", LIVE_FORMS)
@pytest.mark.parametrize("device", DEVICES)
def test_the_live_cap_applies_to_every_form_and_store(form, device):
    ids = [f"app.{i}" if device == "android" else str(10**8 + i) for i in range(300)]
    frame, caught = run(flatten_search, live_form(ids, form), keys(device))
    assert len(caught_of(ResultCapWarning, caught)) == 1 and len(caught) == 1
    assert frame["app_id"].to_list() == ids[:250]
    assert frame["organic_rank"].to_list() == list(range(1, 251))


def test_exactly_250_organic_results_are_kept_without_a_warning():
    answer = [{"application_id": "ad", "is_ad": True}] + [
        {"application_id": str(i), "is_ad": False} for i in range(250)
    ]
    frame, caught = run(flatten_search, answer, keys())
    assert caught == []
    assert frame.height == 251 and frame["organic_rank"].max() == 250


def test_the_cap_warning_names_the_endpoint_of_a_batch():
    with pytest.warns(ResultCapWarning, match=r"300 organic results for keyword 'x' \(search_ads\)"):
        frame, counts = batch_search(
            [({"value": [str(i) for i in range(300)]}, keys(keyword="x"))], endpoint="search_ads"
        )
    assert counts == [250] and frame.height == 250


# ------------------------------------------------------------------------ live search: several answers, empty answers


def test_rows_and_keys_of_several_live_answers():
    when = datetime(2026, 11, 19, 8, tzinfo=UTC)
    answers = [
        ({"date": "2026-11-20", "value": ["1", "2"]}, keys("iphone", "maps")),
        ({}, keys("ipad", "notes")),
        ([{"application_id": "3", "is_ad": True}, {"application_id": "4"}], keys("ipad", "chess", when, "gb", "fr")),
        ({"Weather": {"apps": [{"id": "com.a"}]}}, keys("android", "weather", None, "de", None)),
    ]
    frame, counts = batch_search(answers)
    assert counts == [2, 0, 2, 1]
    assert_schema(frame, SEARCH)
    assert frame.select("keyword", "date", "rank", "app_id", "is_ad", "organic_rank").rows() == [
        ("maps", TODAY, 1, "1", False, 1),
        ("maps", TODAY, 2, "2", False, 2),
        ("chess", date(2026, 11, 19), 1, "3", True, None),
        ("chess", date(2026, 11, 19), 2, "4", False, 1),
        ("weather", None, 1, "com.a", False, 1),
    ]
    assert frame.select("country", "language", "device", "fetched_at").rows() == [
        ("us", "en", "iphone", FETCHED),
        ("us", "en", "iphone", FETCHED),
        ("gb", "fr", "ipad", when),
        ("gb", "fr", "ipad", when),
        ("de", None, "android", None),
    ]
    assert flatten_search(*answers[2]).equals(frame.slice(2, 2))


def test_a_bad_id_in_a_later_answer_names_its_path_in_that_answer():
    answers = [
        ({"value": ["1", "2", "3"]}, keys()),
        ({}, keys()),
        ({"Photo Editor": {"value": ["4", 5.5]}}, keys()),
    ]
    with pytest.raises(ResponseShapeError) as caught:
        batch_search(answers, endpoint="search_ads")
    assert caught.value.path == "result.Photo Editor.value[1]"
    assert caught.value.endpoint == "search_ads"
    assert str(caught.value) == "unexpected response shape at result.Photo Editor.value[1]: expected text, got 5.5"


LIVE_EMPTY = [
    None,
    {},
    [],
    {"value": []},
    {"value": None},
    {"apps": []},
    {"apps": None},
    {"date": "2026-11-20", "value": []},
    {KEYWORD: {}},
    {KEYWORD: []},
    {"Photo Editor": {"value": []}},
]


@pytest.mark.parametrize("result", LIVE_EMPTY, ids=repr)
def test_an_empty_live_answer_has_the_schema(result):
    frame, counts = batch_search([(result, keys())])
    assert counts == [0]
    assert frame.height == 0
    assert_schema(frame, SEARCH)


# ------------------------------------------------------------------------ history: sandbox answers


@pytest.mark.parametrize("keyword_level", [False, True], ids=["flat", "under-keyword"])
@pytest.mark.parametrize("form", HISTORY_FORMS)
@pytest.mark.parametrize("device", DEVICES)
def test_history_in_every_form(histories, device, form, keyword_level):
    days = histories[(device, KEYWORD)]
    result = history_form(days, form)
    if keyword_level:
        result = {"Photo  Editor": result}
    frame, caught = run(flatten_search_history, result, keys(device))
    assert caught == []
    assert_schema(frame, SEARCH_HISTORY)
    assert frame.height == sum(len(ids) for ids in days.values())
    assert frame.select(HISTORY_COLUMNS).rows() == expected_history(days, KEYWORD)
    assert frame["device"].unique().to_list() == [device]
    assert frame["country"].unique().to_list() == ["us"] and frame["language"].unique().to_list() == ["en"]
    assert frame["fetched_at"].unique().to_list() == [FETCHED]


@pytest.mark.parametrize("device", DEVICES)
def test_days_the_service_missed_have_no_rows(histories, device):
    days = histories[(device, KEYWORD)]
    frame = flatten_search_history(days, keys(device))
    recorded = {date.fromisoformat(d) for d in days}
    every_day = {HISTORY_START + timedelta(days=i) for i in range(61)}
    assert set(frame["date"]) == recorded
    assert every_day - recorded, "the sandbox should miss some days"
    per_day = frame.group_by("date", maintain_order=True).agg(
        pl.len(), pl.col("rank").max().alias("last"), pl.col("rank").min().alias("first")
    )
    assert per_day.rows() == [(date.fromisoformat(d), len(ids), len(ids), 1) for d, ids in days.items()]


def test_an_untracked_keyword_has_only_todays_live_search(world):
    days = sandbox_history(world, world.UNTRACKED_KEYWORD, "iphone")
    assert list(days) == [TODAY.isoformat()]
    frame = flatten_search_history(days, keys(keyword=world.UNTRACKED_KEYWORD))
    assert frame["source"].unique().to_list() == ["live"]
    assert frame["app_id"].to_list() == days[TODAY.isoformat()]


@pytest.mark.parametrize("device", ["iphone", "ipad"])
def test_a_recorded_day_of_more_than_250_results_is_history_even_on_the_day_of_the_fetch(histories, device):
    days = histories[(device, "meditation")]
    yesterday = (TODAY - timedelta(days=1)).isoformat()
    big = {d: ids for d, ids in days.items() if len(ids) > 250}
    assert yesterday in big and len(days[TODAY.isoformat()]) == 250
    fetched = datetime(2026, 11, 19, 23, tzinfo=UTC)  # the fetch on the day the 291 results were recorded
    frame = flatten_search_history(days, keys(device, "meditation", fetched))
    sources = dict(frame.group_by("date").agg(pl.col("source").unique()).iter_rows())
    assert sources[date(2026, 11, 19)] == ["history"]
    assert sources[TODAY] == ["history"]  # not the day of this fetch
    frame = flatten_search_history(days, keys(device, "meditation"))
    assert frame.filter(pl.col("source") == "live")["date"].unique().to_list() == [TODAY]
    assert frame.filter(pl.col("date") == date(2026, 11, 19)).height == len(days[yesterday]) > 250


def test_ads_inside_a_history_day_are_left_out(world):
    with_ads = world.search_ads(KEYWORD, device="iphone", country="us", language="en", day=TODAY)
    organic = [e["application_id"] for e in with_ads if not e["is_ad"]]
    for result in (
        {"2026-11-19": with_ads},
        [{"date": "2026-11-19", "value": with_ads}],
        {KEYWORD: {"2026-11-19": {"apps": with_ads}}},
    ):
        frame = flatten_search_history(result, keys())
        assert frame["app_id"].to_list() == organic
        assert frame["rank"].to_list() == list(range(1, len(organic) + 1))


def test_a_day_with_nothing_in_it_has_no_rows():
    result = {
        "2026-01-05": ["a", "b"],
        "2026-01-06": [],
        "2026-01-07": None,
        "2026-01-08": {},
        "2026-01-09": {"value": None},
        "2026-01-10": {"apps": []},
        "2026-01-11": ["c"],
    }
    frame, counts = batch_search_history([(result, keys())])
    assert counts == [3]
    assert frame.select("date", "rank", "app_id").rows() == [
        (date(2026, 1, 5), 1, "a"),
        (date(2026, 1, 5), 2, "b"),
        (date(2026, 1, 11), 1, "c"),
    ]


def test_rows_come_in_the_answers_order_of_days():
    result = [
        {"date": "2026-01-07", "value": ["x", "y"]},
        {"date": "2026-01-05", "apps": [{"id": 3}]},
        {"date": "2026-01-06", "value": {"apps": [{"application_id": "z", "is_ad": False}]}},
    ]
    frame = flatten_search_history(result, keys())
    assert frame.select("date", "rank", "app_id").rows() == [
        (date(2026, 1, 7), 1, "x"),
        (date(2026, 1, 7), 2, "y"),
        (date(2026, 1, 5), 1, "3"),
        (date(2026, 1, 6), 1, "z"),
    ]


def test_rows_counts_and_keys_of_several_history_answers():
    other = datetime(2026, 3, 2, 6, tzinfo=UTC)
    answers = [
        ({"2026-03-01": ["1", "2"], "2026-03-02": ["3"]}, keys("iphone", "maps", other)),
        ({}, keys("ipad", "notes")),
        ([{"date": "2026-03-02", "value": ["a.b"]}], keys("android", "chess", None, "de", "de")),
        ({"Weather": {"2026-03-01": [7, 8]}}, keys("ipad", "weather", FETCHED, "jp", None)),
        (None, keys("android", "x")),
    ]
    frame, counts = batch_search_history(answers)
    assert counts == [3, 0, 1, 2, 0]
    assert_schema(frame, SEARCH_HISTORY)
    assert frame.rows() == [
        ("maps", date(2026, 3, 1), 1, "1", "history", "us", "en", "iphone", other),
        ("maps", date(2026, 3, 1), 2, "2", "history", "us", "en", "iphone", other),
        ("maps", date(2026, 3, 2), 1, "3", "live", "us", "en", "iphone", other),
        ("chess", date(2026, 3, 2), 1, "a.b", "history", "de", "de", "android", None),
        ("weather", date(2026, 3, 1), 1, "7", "history", "jp", None, "ipad", FETCHED),
        ("weather", date(2026, 3, 1), 2, "8", "history", "jp", None, "ipad", FETCHED),
    ]
    assert flatten_search_history(*answers[3]).equals(frame.slice(4, 2))


# ------------------------------------------------------------------------ history: caps and source


@pytest.mark.parametrize(
    ("device", "sent", "kept"),
    [("iphone", 501, 500), ("ipad", 620, 500), ("android", 251, 250), ("android", 500, 250)],
)
def test_a_day_over_the_history_cap_is_truncated_with_a_warning(device, sent, kept):
    ids = [str(i) for i in range(sent)]
    result = {"2026-01-04": ["a"], "2026-01-05": ids, "2026-01-06": ["b"]}
    frame, caught = run(flatten_search_history, result, keys(device))
    assert caught_of(ResultCapWarning, caught) == [
        f"the service sent {sent} organic results for keyword 'photo editor' on 2026-01-05 (search_history), "
        f"more than the {kept} the service documents; the first {kept} are kept"
    ]
    assert len(caught) == 1
    day = frame.filter(pl.col("date") == date(2026, 1, 5))
    assert day["app_id"].to_list() == ids[:kept]
    assert day["rank"].to_list() == list(range(1, kept + 1))
    assert frame.height == kept + 2


@pytest.mark.parametrize(("device", "n"), [("iphone", 500), ("ipad", 500), ("android", 250)])
def test_a_day_at_the_history_cap_is_kept_without_a_warning(device, n):
    frame, caught = run(flatten_search_history, {"2026-01-05": [str(i) for i in range(n)]}, keys(device))
    assert caught == []
    assert frame.height == n


def test_the_history_cap_counts_organic_results_only():
    day = [{"application_id": "ad", "is_ad": True}] * 3 + [{"application_id": str(i)} for i in range(500)]
    frame, caught = run(flatten_search_history, {"2026-01-05": day}, keys("iphone"))
    assert caught == []
    assert frame.height == 500 and "ad" not in frame["app_id"].to_list()


@pytest.mark.parametrize(
    ("device", "n", "fetched_at", "source"),
    [
        ("iphone", 250, FETCHED, "live"),
        ("iphone", 1, FETCHED, "live"),
        ("iphone", 251, FETCHED, "history"),
        ("ipad", 500, FETCHED, "history"),
        ("android", 250, FETCHED, "live"),
        ("android", 400, FETCHED, "live"),  # capped to 250 first: a live fallback
        ("iphone", 10, None, "history"),
        ("iphone", 10, datetime(2026, 11, 21, 1, tzinfo=UTC), "history"),
        ("iphone", 10, datetime(2026, 11, 19, 22, tzinfo=timezone(timedelta(hours=-5))), "live"),  # 03:00 UTC
        ("iphone", 10, datetime(2026, 11, 20, 22, tzinfo=timezone(timedelta(hours=-5))), "history"),  # next day
    ],
)
def test_source_of_the_day_of_the_fetch(device, n, fetched_at, source):
    result = {"2026-11-19": ["y"], "2026-11-20": [str(i) for i in range(n)]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResultCapWarning)
        frame = flatten_search_history(result, keys(device, fetched_at=fetched_at))
    assert frame.filter(pl.col("date") == TODAY)["source"].unique().to_list() == [source]
    assert frame.filter(pl.col("date") == date(2026, 11, 19))["source"].to_list() == ["history"]


def test_a_day_key_given_as_a_timestamp_is_its_date():
    frame = flatten_search_history({"2026-11-20T00:00:00Z": ["1"], "2026-11-19T00:00:00Z": ["2"]}, keys())
    assert frame.select("date", "source").rows() == [(TODAY, "live"), (date(2026, 11, 19), "history")]


# ------------------------------------------------------------------------ history: empty answers

HISTORY_EMPTY = [
    None,
    {},
    [],
    {KEYWORD: {}},
    {KEYWORD: []},
    {"Photo Editor": {"2026-01-05": []}},
    {"2026-01-05": []},
    {"2026-01-05": None},
    [{"date": "2026-01-05", "value": []}],
    [{"date": "2026-01-05", "apps": None}],
]
LIVE_SHAPED_EMPTY = [{"value": []}, {"value": None}]


@pytest.mark.parametrize(
    "result",
    [
        *HISTORY_EMPTY,
        *LIVE_SHAPED_EMPTY,
    ],
    ids=repr,
)
def test_an_empty_history_has_the_schema(result):
    frame, counts = batch_search_history([(result, keys())])
    assert counts == [0]
    assert frame.height == 0
    assert_schema(frame, SEARCH_HISTORY)


def test_a_live_fallback_in_the_live_form_is_todays_rows():
    """The service's documented live fallback may come as a live search answer: one day, its date or the fetch's."""
    frame = flatten_search_history({"date": "2026-11-20", "value": ["1", "2"]}, keys())
    assert frame.select("date", "rank", "app_id", "source").rows() == [(TODAY, 1, "1", "live"), (TODAY, 2, "2", "live")]


# ------------------------------------------------------------------------ wrong shapes name their path and form

LIVE_BAD = [
    ({"x": 1}, "result", "got an object with keys x"),
    ("text", "result", "got text 'text'"),
    (5, "result", "got a number (5)"),
    (True, "result", "got true or false"),
    ({"value": "1,2"}, "result.value", "expected a list of app ids or app objects, got text '1,2'"),
    ({"photo editor": "1,2"}, "result", "got an object with keys photo editor"),
    ({"value": ["1", ["2"]]}, "result.value[1]", "expected text, got list"),
    ({"value": [1.5]}, "result.value[0]", "expected text, got 1.5"),
    ({"value": [True]}, "result.value[0]", "expected text, got True"),
    ({"value": ["1", {"id": "2"}]}, "result.value[1]", "expected text, got dict"),
    (
        {"apps": [{"title": "x"}]},
        "result.apps[0]",
        "expected an app id in application_id or id, got an object with keys title",
    ),
    ({"apps": [{"id": None}]}, "result.apps[0].id", "got null"),
    ({"apps": [{"id": "1"}, {"id": 2.0}]}, "result.apps[1].id", "got a number (2.0)"),
    ({"apps": [{"id": ""}]}, "result.apps[0].id", "got text ''"),
    ({"apps": [{"id": "1"}, "2"]}, "result.apps[1]", "expected an app object, got text '2'"),
    ([{"application_id": "1", "is_ad": "yes"}], "result[0].is_ad", "expected true or false, got text 'yes'"),
    ([{"application_id": "1"}, {"application_id": "2", "is_ad": 1}], "result[1].is_ad", "got a number (1)"),
    ([{"application_id": ["1"], "is_ad": False}], "result[0].application_id", "got a list of text '1'"),
    ({"date": 20261120, "value": ["1"]}, "result.date", "expected text, got 20261120"),
    ({"date": "20 Nov 2026", "value": ["1"]}, "result.date", "expected a date as YYYY-MM-DD, got '20 Nov 2026'"),
    ({"Photo Editor": {"value": ["1", None, ["x"]]}}, "result.Photo Editor.value[2]", "expected text, got list"),
    ({"PHOTO EDITOR": [{"id": 1}, {"id": {}}]}, "result.PHOTO EDITOR[1].id", "got an empty object"),
]


@pytest.mark.parametrize(
    ("result", "where", "found"), LIVE_BAD, ids=[f"{w}-{i}" for i, (_, w, _) in enumerate(LIVE_BAD)]
)
def test_a_live_answer_of_the_wrong_shape_names_its_path(result, where, found):
    with pytest.raises(ResponseShapeError) as caught:
        flatten_search(result, keys())
    assert caught.value.path == where
    assert caught.value.endpoint == "search"
    assert str(caught.value).startswith(f"unexpected response shape at {where}: ")
    assert found in str(caught.value)


def test_the_live_message_lists_the_accepted_forms():
    with pytest.raises(ResponseShapeError) as caught:
        flatten_search({"x": 1, "y": 2}, keys())
    assert str(caught.value) == (
        "unexpected response shape at result: expected result.value (a list of app ids), result.apps (a list "
        "of app objects) or a list of {application_id, is_ad} objects, possibly under a key named after the "
        "keyword; got an object with keys x, y"
    )


HISTORY_BAD = [
    ({"x": 1}, "result", "got an object with keys x"),
    ("text", "result", "got text 'text'"),
    (3, "result", "got a number (3)"),
    ([{"value": ["1"]}], "result[0]", "expected a {date, value} object, got an object with keys value"),
    ([{"date": "2026-01-01"}], "result[0]", "expected a {date, value} object, got an object with keys date"),
    (["2026-01-01"], "result[0]", "expected a {date, value} object, got text '2026-01-01'"),
    ([{"date": "2026-01-01", "value": []}, None], "result[1]", "got null"),
    ({"2026-01-01": "abc"}, "result.2026-01-01", "expected a list of app ids or app objects, got text 'abc'"),
    ({"2026-01-01": 5}, "result.2026-01-01", "got a number (5)"),
    ({"2026-01-01": {"value": "x"}}, "result.2026-01-01.value", "got text 'x'"),
    ({"2026-01-01": {"foo": 1}}, "result.2026-01-01", "got an object with keys foo"),
    ({"2026-01-01": ["1"], "yesterday": ["2"]}, "result.yesterday", "got the key 'yesterday'"),
    ({"2026-13-45": ["1"]}, "result.2026-13-45", "expected a date as YYYY-MM-DD, got '2026-13-45'"),
    ({"2026-01-01": [], "2026-02-30": ["1"]}, "result.2026-02-30", "expected a date as YYYY-MM-DD, got '2026-02-30'"),
    ([{"date": "2026/01/01", "value": ["1"]}], "result[0].date", "expected a date as YYYY-MM-DD, got '2026/01/01'"),
    ([{"date": 20260101, "value": ["1"]}], "result[0].date", "expected text, got 20260101"),
    ({"2026-01-01": ["1", ["2"]]}, "result.2026-01-01[1]", "expected text, got list"),
    ({"2026-01-01": [{"id": 1}, {"id": None}]}, "result.2026-01-01[1].id", "got null"),
    ({"2026-01-01": [{"application_id": "1", "is_ad": "no"}]}, "result.2026-01-01[0].is_ad", "got text 'no'"),
    (
        [{"date": "2026-01-01", "value": ["1"]}, {"date": "2026-01-02", "apps": [{"id": "a"}, {"title": "b"}]}],
        "result[1].apps[1]",
        "got an object with keys title",
    ),
    ({"2026-01-01": ["a"], "2026-01-02": [], "2026-01-03": ["b", 2.5]}, "result.2026-01-03[1]", "got 2.5"),
    ({"Photo Editor": {"2026-01-01": [], "2026-01-02": ["a", True]}}, "result.Photo Editor.2026-01-02[1]", "got True"),
    ({"photo editor": [{"date": "2026-01-02"}]}, "result.photo editor[0]", "got an object with keys date"),
]


@pytest.mark.parametrize(
    ("result", "where", "found"), HISTORY_BAD, ids=[f"{w}-{i}" for i, (_, w, _) in enumerate(HISTORY_BAD)]
)
def test_a_history_of_the_wrong_shape_names_its_path(result, where, found):
    with pytest.raises(ResponseShapeError) as caught:
        flatten_search_history(result, keys())
    assert caught.value.path == where
    assert caught.value.endpoint == "search_history"
    assert str(caught.value).startswith(f"unexpected response shape at {where}: ")
    assert found in str(caught.value)


def test_the_history_message_lists_the_accepted_forms():
    with pytest.raises(ResponseShapeError) as caught:
        flatten_search_history({"metadata": {}}, keys())
    assert str(caught.value) == (
        "unexpected response shape at result: expected an object keyed by date (YYYY-MM-DD) or a list of "
        "{date, value} objects, possibly under a key named after the keyword; got an object with keys metadata"
    )


def test_a_null_id_in_a_live_list_is_refused():
    with pytest.raises(ResponseShapeError) as caught:
        flatten_search({"value": ["1", None]}, keys())
    assert caught.value.path == "result.value[1]"


def test_a_null_id_in_a_history_day_is_refused():
    with pytest.raises(ResponseShapeError) as caught:
        flatten_search_history({"2026-01-05": ["1", None]}, keys())
    assert caught.value.path == "result.2026-01-05[1]"


def test_a_history_day_with_a_null_date_is_refused():
    with pytest.raises(ResponseShapeError) as caught:
        flatten_search_history([{"date": None, "value": ["1"]}], keys())
    assert caught.value.path == "result[0].date"


# ------------------------------------------------------------------------ benchmarks

BENCH_START, BENCH_END = date(2026, 10, 1), date(2026, 10, 31)
RATES = ("impressions_to_page_views", "page_views_to_installs", "impressions_to_installs", "number_of_apps")
BENCH_CASES = [
    ("iphone", "free", "all"),
    ("iphone", "free", "search"),
    ("iphone", "paid", "browse"),
    ("iphone", "free", "appref"),
    ("iphone", "paid", "webref"),
    ("android", "free", "all"),
    ("android", "paid", "search"),
    ("android", "free", "explore"),
    ("android", "paid", "referrals"),
]


def bench_keys(
    device: str = "iphone", type: str = "free", channel: str = "all", country: str = "us", fetched_at=FETCHED
) -> Keys:
    request = {
        "country": country,
        "device": device,
        "type": type,
        "channel": channel,
        "start_date": BENCH_START.isoformat(),
        "end_date": BENCH_END.isoformat(),
    }
    return Keys(country=country, device=device, fetched_at=fetched_at, request=request)


def benchmark(category: Any = "6014", **fields: Any) -> dict[str, Any]:
    record = {"category": category, "category_name": "Games", **dict.fromkeys(RATES)}
    return {**record, **fields}


@pytest.mark.parametrize(("device", "type_", "channel"), BENCH_CASES)
def test_sandbox_benchmarks(world, device, type_, channel):
    records = world.benchmarks(
        country="us", device=device, type=type_, channel=channel, start=BENCH_START, end=BENCH_END
    )
    frame, caught = run(flatten_benchmarks, {"category_benchmarks": records}, bench_keys(device, type_, channel))
    assert caught == []
    assert_schema(frame, BENCHMARKS)
    assert frame.height == len(records) > 40
    assert frame["category"].to_list() == [r["category"] for r in records]
    assert frame["category_name"].to_list() == [r["category_name"] for r in records]
    for rate in RATES:
        assert frame[rate].to_list() == [r[rate] for r in records], rate  # nulls stay null, never 0
    assert frame["page_views_to_installs"].null_count() > 0  # thin categories
    assert frame.select("country", "device", "type", "channel", "start_date", "end_date").unique().rows() == [
        ("us", device, type_, channel, BENCH_START, BENCH_END)
    ]
    assert frame["fetched_at"].unique().to_list() == [FETCHED]
    if device == "android":
        assert frame["category"].str.contains(r"^[A-Z_]+$").all()
        assert frame["impressions_to_page_views"].null_count() == frame.height
    else:
        assert frame["category"].str.contains(r"^\d+$").all()
    if device == "iphone" and channel in ("appref", "webref"):
        assert frame["impressions_to_installs"].null_count() == frame.height
    if channel == "search" and device == "iphone":
        assert frame["page_views_to_installs"].max() > 100  # the service allows more than 100 percent


def test_benchmark_values_and_nulls():
    records = [
        benchmark(6014, page_views_to_installs=41.5, impressions_to_page_views=3, number_of_apps=12),
        benchmark("GAME_ACTION", category_name="Action"),
        benchmark("6000", page_views_to_installs=0, number_of_apps=0.0),
        {"category": "6001", "page_views_to_installs": 12.25},  # fields left out are null
    ]
    frame = flatten_benchmarks({"category_benchmarks": records}, bench_keys())
    assert frame.select("category", "category_name", *RATES).rows() == [
        ("6014", "Games", 3.0, 41.5, None, 12.0),
        ("GAME_ACTION", "Action", None, None, None, None),
        ("6000", "Games", None, 0.0, None, 0.0),
        ("6001", None, None, 12.25, None, None),
    ]
    assert frame.select(*RATES).dtypes == [pl.Float64] * 4
    assert frame["start_date"].dtype == pl.Date and frame["end_date"].dtype == pl.Date


def test_request_columns_come_from_the_request_and_may_be_null():
    frame = flatten_benchmarks({"category_benchmarks": [benchmark()]}, Keys())
    assert frame.row(0, named=True) == {
        "country": None,
        "device": None,
        "type": None,
        "channel": None,
        "start_date": None,
        "end_date": None,
        "category": "6014",
        "category_name": "Games",
        **dict.fromkeys(RATES),
        "fetched_at": None,
    }


def test_unknown_benchmark_fields_are_named_in_one_warning_and_left_out():
    records = [benchmark(rank=1), benchmark("6000", currency="usd", rank=2), benchmark("6001")]
    frame, caught = run(flatten_benchmarks, {"category_benchmarks": records}, bench_keys())
    assert caught_of(UnknownFieldWarning, caught) == [
        "the service sent fields storeframes does not know at result.category_benchmarks[] (benchmarks), left "
        "out of the frame: currency, rank"
    ]
    assert len(caught) == 1
    assert frame.columns == BENCHMARKS.names and frame.height == 3
    frame, caught = run(flatten_benchmarks, {"category_benchmarks": records}, bench_keys())
    assert len(caught) == 1 and frame.height == 3  # "always": named again


def test_members_beside_category_benchmarks_are_not_rows():
    frame, caught = run(flatten_benchmarks, {"category_benchmarks": [benchmark()], "total": 1}, bench_keys())
    assert frame.height == 1 and caught == []


BENCH_BAD = [
    ([], "result", "expected an object, got list"),
    ("x", "result", "expected an object, got 'x'"),
    ({"category_benchmarks": {}}, "result.category_benchmarks", "expected an array, got dict"),
    ({"category_benchmarks": "none"}, "result.category_benchmarks", "expected an array, got 'none'"),
    ({"category_benchmarks": [benchmark(), 5]}, "result.category_benchmarks[1]", "expected an object, got 5"),
    ({"category_benchmarks": [[]]}, "result.category_benchmarks[0]", "expected an object, got list"),
    (
        {"category_benchmarks": [benchmark(), benchmark(), benchmark(), benchmark(page_views_to_installs="41.5")]},
        "result.category_benchmarks[3].page_views_to_installs",
        "expected a number, got '41.5'",
    ),
    (
        {"category_benchmarks": [benchmark(number_of_apps=3), benchmark(number_of_apps=True)]},
        "result.category_benchmarks[1].number_of_apps",
        "expected a number, got True",
    ),
    (
        {"category_benchmarks": [benchmark(impressions_to_installs=False)]},
        "result.category_benchmarks[0].impressions_to_installs",
        "expected a number, got False",
    ),
    (
        {"category_benchmarks": [benchmark(impressions_to_page_views=[1.0])]},
        "result.category_benchmarks[0].impressions_to_page_views",
        "expected a number, got list",
    ),
    (
        {"category_benchmarks": [benchmark(), benchmark(6014.0)]},
        "result.category_benchmarks[1].category",
        "expected text, got 6014.0",
    ),
    ({"category_benchmarks": [benchmark(True)]}, "result.category_benchmarks[0].category", "expected text, got True"),
    (
        {"category_benchmarks": [benchmark(category_name=5)]},
        "result.category_benchmarks[0].category_name",
        "expected text, got 5",
    ),
]


@pytest.mark.parametrize(
    ("result", "where", "found"), BENCH_BAD, ids=[f"{w}-{i}" for i, (_, w, _) in enumerate(BENCH_BAD)]
)
def test_a_benchmarks_answer_of_the_wrong_shape_names_its_path(result, where, found):
    with pytest.raises(ResponseShapeError) as caught:
        flatten_benchmarks(result, bench_keys())
    assert caught.value.path == where
    assert caught.value.endpoint == "benchmarks"
    assert str(caught.value) == f"unexpected response shape at {where}: {found}"


def test_a_bad_record_in_a_later_answer_names_its_index_in_that_answer():
    answers = [
        ({"category_benchmarks": [benchmark(), benchmark(), benchmark()]}, bench_keys()),
        ({"category_benchmarks": [benchmark(), benchmark(page_views_to_installs="n/a")]}, bench_keys("android")),
    ]
    with pytest.raises(ResponseShapeError) as caught:
        batch_benchmarks(answers)
    assert caught.value.path == "result.category_benchmarks[1].page_views_to_installs"


@pytest.mark.parametrize(
    ("request_field", "value", "found"),
    [
        ("start_date", "2026/10/01", "expected a date as YYYY-MM-DD, got '2026/10/01'"),
        ("type", 5, "expected text, got 5"),
    ],
)
def test_a_bad_request_value_names_the_request(request_field, value, found):
    k = bench_keys()
    k = Keys(k.country, k.language, k.device, k.fetched_at, {**k.request, request_field: value})
    with pytest.raises(ResponseShapeError) as caught:
        flatten_benchmarks({"category_benchmarks": [benchmark()]}, k)
    assert str(caught.value) == f"unexpected response shape at request.{request_field}: {found}"


@pytest.mark.parametrize(
    "result", [None, {}, {"category_benchmarks": None}, {"category_benchmarks": []}, {"metadata": {}}], ids=repr
)
def test_an_empty_benchmarks_answer_has_the_schema(result):
    frame, counts = batch_benchmarks([(result, bench_keys())])
    assert counts == [0]
    assert frame.height == 0
    assert_schema(frame, BENCHMARKS)


def test_rows_counts_and_keys_of_several_benchmark_answers():
    answers = [
        ({"category_benchmarks": [benchmark("6014"), benchmark("6000")]}, bench_keys("iphone", "paid", "search")),
        ({"category_benchmarks": []}, bench_keys("android")),
        ({"category_benchmarks": [benchmark("GAME")]}, bench_keys("android", "free", "explore", "de", None)),
    ]
    frame, counts = batch_benchmarks(answers)
    assert counts == [2, 0, 1]
    assert frame.select("country", "device", "type", "channel", "category", "fetched_at").rows() == [
        ("us", "iphone", "paid", "search", "6014", FETCHED),
        ("us", "iphone", "paid", "search", "6000", FETCHED),
        ("de", "android", "free", "explore", "GAME", None),
    ]


# ------------------------------------------------------------------------ pandas round trip


def round_trip(frame: pl.DataFrame, table: TableSchema) -> pl.DataFrame:
    frame_pd = frame.to_pandas()
    assert list(frame_pd.columns) == table.names and len(frame_pd) == frame.height
    assert str(frame_pd["fetched_at"].dt.tz) == "UTC"
    return pl.from_pandas(frame_pd).cast(table.schema)


def test_pandas_round_trip_of_a_search_with_ads(world):
    answer = world.search_ads(KEYWORD, device="iphone", country="us", language="en", day=TODAY)
    frame = flatten_search(answer, keys())
    back = round_trip(frame, SEARCH)
    assert back.equals(frame)
    assert back["organic_rank"].null_count() == 2 and back["is_ad"].sum() == 2


def test_pandas_round_trip_of_a_history(histories):
    frame = flatten_search_history(histories[("android", "meditation")], keys("android", "meditation"))
    assert frame.height > 1000
    assert round_trip(frame, SEARCH_HISTORY).equals(frame)


def test_pandas_round_trip_of_benchmarks(world):
    records = world.benchmarks(
        country="fr", device="iphone", type="paid", channel="all", start=BENCH_START, end=BENCH_END
    )
    frame = flatten_benchmarks({"category_benchmarks": records}, bench_keys("iphone", "paid", "all", "fr"))
    back = round_trip(frame, BENCHMARKS)
    assert back.equals(frame)
    for rate in RATES:
        assert back[rate].to_list() == [r[rate] for r in records]


# ------------------------------------------------------------------------ property test: any accepted history

DAY = st.dates(min_value=date(2015, 1, 1), max_value=date(2030, 12, 31)).map(date.isoformat)
SIZE = st.integers(0, 4) | st.sampled_from([249, 250, 251, 499, 500, 501])
ID_FORMS = ("text", "int", "id_object", "pair_object")
DAY_FORMS = ("list", "value_object", "apps_object")
KEYWORD_KEYS = ("photo editor", "Photo Editor", "PHOTO  EDITOR", " photo\teditor ")


def ids_in(form: str, numbers: list[int]) -> list[Any]:
    if form == "text":
        return [str(n) for n in numbers]
    if form == "int":
        return numbers
    if form == "id_object":
        return [{"id": n} for n in numbers]
    return [{"application_id": str(n), "is_ad": False} for n in numbers]


@st.composite
def any_history(draw: Any) -> tuple[Any, Keys, list[tuple[str, list[str]]]]:
    """A history answer in any accepted form, its keys, and each day with its ids as text."""
    device = draw(st.sampled_from(DEVICES))
    days = draw(st.lists(DAY, unique=True, max_size=5))
    per_day: list[tuple[str, list[str]]] = []
    values: list[Any] = []
    for k, day in enumerate(days):
        numbers = [10_000 * (k + 1) + j for j in range(draw(SIZE))]
        ids = ids_in(draw(st.sampled_from(ID_FORMS)), numbers)
        day_form = draw(st.sampled_from(DAY_FORMS))
        values.append(ids if day_form == "list" else {day_form.removesuffix("_object"): ids})
        per_day.append((day, [str(n) for n in numbers]))
    if draw(st.booleans()):
        result: Any = dict(zip(days, values, strict=True))
    else:
        member = draw(st.sampled_from(["value", "apps"]))
        result = [{"date": day, member: value} for day, value in zip(days, values, strict=True)]
    if draw(st.booleans()):
        result = {draw(st.sampled_from(KEYWORD_KEYS)): result}
    fetched_day = draw(st.none() | st.sampled_from(days or ["2026-11-20"]))
    fetched_at = None if fetched_day is None else datetime.fromisoformat(fetched_day).replace(hour=12, tzinfo=UTC)
    return result, keys(device, fetched_at=fetched_at), per_day


@settings(max_examples=80, deadline=None)
@given(any_history())
def test_any_accepted_history_flattens_to_the_schema(case):
    result, k, per_day = case
    cap = CAPS[k.device]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame, counts = batch_search_history([(result, k)])
    assert_schema(frame, SEARCH_HISTORY)
    expected = sum(min(len(ids), cap) for _, ids in per_day)
    assert frame.height == expected and counts == [expected]
    assert len(caught_of(ResultCapWarning, caught)) == sum(len(ids) > cap for _, ids in per_day)
    today = None if k.fetched_at is None else k.fetched_at.date().isoformat()
    kept = {day: ids[:cap] for day, ids in per_day if ids}
    assert frame.select(HISTORY_COLUMNS).rows() == expected_history(kept, KEYWORD, today)
    assert frame["device"].unique().to_list() == ([k.device] if expected else [])


def test_a_live_form_history_without_a_date_is_the_day_of_the_fetch():
    frame = flatten_search_history({"value": ["1", "2"]}, keys())
    assert frame.select("date", "source").unique().rows() == [(FETCHED.date(), "live")]
    with pytest.raises(ResponseShapeError, match=r"at result\.date: expected a date as YYYY-MM-DD, got null"):
        flatten_search_history({"value": ["1"]}, Keys())


@pytest.mark.parametrize("ids", [["1", ""], ["1", None]])
def test_an_empty_or_null_id_is_refused(ids):
    with pytest.raises(ResponseShapeError, match=r"at result.value\[1\]: expected an app id"):
        flatten_search({"value": ids}, keys())


def test_a_nan_rate_is_null_and_a_null_record_is_refused():
    record = {"category": "6014", "category_name": "Games", "page_views_to_installs": float("nan")}
    frame = flatten_benchmarks({"category_benchmarks": [record]}, keys())
    assert frame["page_views_to_installs"].to_list() == [None]
    with pytest.raises(ResponseShapeError, match=r"at result.category_benchmarks\[1\]: expected an object, got null"):
        flatten_benchmarks({"category_benchmarks": [record, None]}, keys())
