"""The analyst's day: sf.today(), relative ranges (days=) and find_apps, on the pinned sandbox."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import storeframes as sf
from storeframes.frames import FIND_APPS_COLUMNS, MOST_FOUND_APPS, with_days
from storeframes.sandbox import World
from tests.conftest import SANDBOX_TODAY

WORLD = World(0)
APPS = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US][:3]
KEYWORD = WORLD.EXAMPLE_KEYWORDS[0]
YESTERDAY = SANDBOX_TODAY - timedelta(days=1)
DATE_RANGED = (
    "changes_frame",
    "privacy_changes_frame",
    "screenshot_changes_frame",
    "version_changes_frame",
    "search_history_frame",
    "benchmarks_frame",
)


@pytest.fixture
def pinned(fresh_default, tmp_path):
    """The pinned sandbox as the default client."""
    return sf.connect(tmp_path / "cache", sandbox_today=SANDBOX_TODAY, quiet=True)


def _first(name: str) -> dict:
    """The first argument of a date-ranged frame function."""
    if name == "benchmarks_frame":
        return {"channels": "search"}
    if name == "search_history_frame":
        return {"keywords": [KEYWORD]}
    return {"apps": APPS}


def _range(plan: sf.Plan) -> set[tuple[str, str]]:
    return {(p["start_date"], p["end_date"]) for p in map(json.loads, plan.requests["params"])}


# -- sf.today() --------------------------------------------------------------------------


def test_today_is_the_pinned_sandbox_s_or_the_real_one(fresh_default, tmp_path, monkeypatch):
    assert "today" in sf.__all__ and sf.today is sf.defaults.today
    sf.connect(tmp_path / "a", sandbox_today="2026-11-20", quiet=True)
    assert sf.today() == date(2026, 11, 20)
    sf.configure(sandbox=True, today=date(2025, 3, 1))
    assert sf.today() == date(2025, 3, 1)
    monkeypatch.delenv("STOREFRAMES_API_KEY", raising=False)
    sf.configure(cache_dir=tmp_path / "b")  # a client of the real service: the UTC day
    assert sf.today() == datetime.now(UTC).date()


# -- days= ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", DATE_RANGED)
def test_days_is_the_days_up_to_yesterday_by_the_pinned_today(pinned, name):
    assert "days" in getattr(sf, name).__signature__.parameters
    planned = sf.plan(name, days=60, **_first(name))
    expected = {((YESTERDAY - timedelta(days=59)).isoformat(), YESTERDAY.isoformat())}
    if name != "search_history_frame":  # its history is asked for by runs of days: one run here
        assert _range(planned) == expected
    else:
        assert _range(planned) == expected and planned.cells == 60
    assert _range(pinned.plan(name, days=60, **_first(name))) == expected  # the client's plan too


@pytest.mark.parametrize("name", ["changes_frame", "search_history_frame", "benchmarks_frame"])
def test_a_frame_of_days_is_the_frame_of_its_start_and_end(pinned, name):
    function = getattr(sf, name)
    by_days = function(**_first(name), days=14)
    start = (YESTERDAY - timedelta(days=13)).isoformat()
    assert_frame_equal(by_days, function(**_first(name), start=start, end=YESTERDAY.isoformat()))
    if name == "search_history_frame":
        assert by_days["date"].min() == YESTERDAY - timedelta(days=13) and by_days["date"].max() == YESTERDAY
        assert by_days["date"].n_unique() == 14


def test_days_counts_back_from_end(pinned):
    frame = sf.search_history_frame([KEYWORD], days=7, end="2026-10-31")
    assert frame["date"].min() == date(2026, 10, 25) and frame["date"].max() == date(2026, 10, 31)
    assert _range(sf.plan("changes_frame", apps=APPS, days=1, end=date(2026, 10, 31))) == {("2026-10-31", "2026-10-31")}
    assert with_days("changes_frame", {"days": 30, "end": "2026-01-31"}, date(2026, 6, 1)) == {
        "start": date(2026, 1, 2),
        "end": date(2026, 1, 31),
    }


@pytest.mark.parametrize(
    ("days", "message"),
    [
        (0, "a whole number of days >= 1"),
        (-5, "a whole number of days >= 1"),
        (True, "a whole number of days >= 1"),
        (2.5, "a whole number of days >= 1"),
        ("60", "a whole number of days >= 1"),
        (10**9, r"at most 6,707 up to 2026-11-19 \(no history is older than 2008-07-10\)"),
    ],
)
def test_bad_days_are_refused_before_anything_is_sent(pinned, days, message):
    for call in (
        lambda: sf.changes_frame(APPS, days=days),
        lambda: sf.search_history_frame([KEYWORD], days=days),
        lambda: sf.plan("benchmarks_frame", days=days),
    ):
        with pytest.raises(sf.InvalidParameterError, match=f"invalid days=.*: {message}"):
            call()
    assert pinned.requests_sent == 0


def test_days_with_start_is_refused_naming_both(pinned):
    with pytest.raises(sf.InvalidParameterError, match=r"invalid days=60 .*days= or start=, not both") as caught:
        sf.search_history_frame([KEYWORD], days=60, start="2026-09-01")
    assert caught.value.parameter == "days" and "start='2026-09-01'" in str(caught.value)
    with pytest.raises(sf.InvalidParameterError, match="days= or start=, not both"):
        sf.plan("version_changes_frame", apps=APPS, days=3, start="2026-09-01")
    with pytest.raises(sf.InvalidParameterError, match="invalid end="):
        sf.changes_frame(APPS, days=3, end="31.10.2026")
    assert pinned.requests_sent == 0


def test_days_is_only_for_the_date_ranged_functions(pinned):
    with pytest.raises(sf.InvalidParameterError, match="days"):
        sf.plan("metadata_frame", apps=APPS, days=3)
    assert "days" not in sf.metadata_frame.__signature__.parameters


# -- find_apps ---------------------------------------------------------------------------------


def test_find_apps_gives_the_ranked_ids_titles_and_developers(pinned):
    found = sf.find_apps(KEYWORD, top=7)
    assert found.columns == list(FIND_APPS_COLUMNS) and found.height == 7
    assert found.schema["rank"] == pl.Int64 and found.schema["app_id"] == pl.String
    assert found.schema["categories"] == pl.List(pl.String)
    search = sf.search_frame([KEYWORD]).sort("rank")
    assert found["app_id"].to_list() == search["app_id"].head(7).to_list()
    assert found["rank"].to_list() == search["rank"].head(7).to_list()
    metadata = sf.metadata_frame(found["app_id"].to_list())
    assert found["title"].to_list() == metadata["title"].to_list()
    assert found["developer_name"].to_list() == metadata["developer_name"].to_list()
    assert found["title"].null_count() == 0
    # the ids go straight into the other functions, and nothing is paid twice
    spent = pinned.spent
    assert sf.versions_frame(found["app_id"]).height > 0 and pinned.spent == spent


def test_find_apps_tells_a_free_app_from_a_paid_one_by_its_amount_and_currency(pinned):
    found = sf.find_apps(KEYWORD, top=7)
    metadata = sf.metadata_frame(found["app_id"].to_list())
    assert found["price_value"].to_list() == metadata["price_value"].to_list()
    assert found["price_value"].null_count() == 0  # every price known: 0 is free, never a missing price
    free, paid = found.filter(pl.col("price_value") == 0), found.filter(pl.col("price_value") > 0)
    assert free.height and paid.height and set(free["price"]) == {""}
    assert set(found["currency"]) == {"usd"}  # the US store's
    abroad = sf.find_apps(KEYWORD, countries=["de", "jp"], top=2)
    assert dict(abroad.select("country", "currency").unique().iter_rows()) == {"de": "eur", "jp": "jpy"}


def test_find_apps_costs_what_its_plan_said_at_most(pinned):
    planned = sf.plan("find_apps", term=KEYWORD, top=12)
    assert planned.endpoint == "find_apps" and planned.to_send == 4
    assert planned.requests["endpoint"].to_list() == ["search", "metadata", "metadata", "metadata"]
    assert planned.requests["cells"].to_list()[1:] == [5, 5, 2]
    assert planned.estimate == 10 + 51 + 51 + 21 and repr(planned).startswith("Plan(find_apps: 4 request")
    assert pinned.requests_sent == 0  # planning sends nothing
    sf.find_apps(KEYWORD, top=12)
    assert 0 < pinned.spent <= planned.estimate
    again = sf.plan("find_apps", term=KEYWORD, top=12, country="US")
    assert again.requests.filter(pl.col("endpoint") == "search")["source"].to_list() == ["cache"]
    assert again.estimate == 51 + 51 + 21  # the metadata part stays an upper bound
    assert pinned.plan("find_apps", term=KEYWORD, top=3).estimate == 31  # the search cached


def test_find_apps_on_android_and_a_term_with_a_comma(pinned):
    found = sf.find_apps("notes, todo", device="android", top=3)
    assert found.height <= 3 and found["app_id"].str.contains(r"\.").all()
    search = sf.search_frame(["notes, todo"], device="android")
    assert search["keyword"].unique().to_list() == ["notes, todo"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"top": 0}, f"invalid top=0 for find_apps: a whole number from 1 to {MOST_FOUND_APPS}"),
        ({"top": MOST_FOUND_APPS + 1}, "a whole number from 1 to 100"),
        ({"top": True}, "invalid top=True"),
        ({"top": "10"}, "invalid top='10'"),
        ({"term": ["a", "b"]}, "invalid term=.* one search term as a non-empty text"),
        ({"term": "  "}, "one search term as a non-empty text"),
        ({"country": "usa"}, "invalid country='usa'"),
        ({"device": "tablet"}, "invalid device='tablet'"),
    ],
)
def test_find_apps_refuses_bad_input_before_anything_is_sent(pinned, arguments, message):
    arguments = {"term": KEYWORD, **arguments}
    with pytest.raises(sf.InvalidParameterError, match=message):
        sf.find_apps(**arguments)
    with pytest.raises(sf.InvalidParameterError, match=message):
        sf.plan("find_apps", **arguments)
    assert pinned.requests_sent == 0 and pinned.spent == 0


def test_plan_of_find_apps_names_unknown_arguments(pinned):
    with pytest.raises(sf.InvalidParameterError, match=r"invalid arguments=.*those of find_apps"):
        sf.plan("find_apps", term=KEYWORD, apps=APPS)
    with pytest.raises(sf.InvalidParameterError, match="those of find_apps"):
        sf.plan("find_apps")


def test_find_apps_is_a_package_function_and_a_method(pinned):
    assert "find_apps" in sf.__all__
    assert list(sf.find_apps.__signature__.parameters) == ["term", "country", "countries", "device", "top", "refresh"]
    assert sf.find_apps.__doc__ == sf.Client.find_apps.__doc__ and "upper bound" in sf.find_apps.__doc__
    assert_frame_equal(pinned.find_apps(KEYWORD, top=2), sf.find_apps(KEYWORD, top=2))


def test_tab_completion_lists_the_public_api_alone():
    listed = dir(sf)
    assert listed == sorted({*sf.__all__, "__version__"})
    for internal in ("engine", "fetching", "wire", "pipeline", "Any", "TYPE_CHECKING", "defaults", "cache"):
        assert internal not in listed
    assert {"metadata_frame", "search_frame", "Tracker", "events", "observed_changes", "sandbox"} <= set(listed)
    assert sf.engine is not None  # the modules are still there for those who import them by name
