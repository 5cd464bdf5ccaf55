"""``countries=`` on every frame function: one frame with each country's rows in the order given, a call per
country fetched together, each country's cells cached apart, priced by ``plan`` before anything is sent, and
``language=`` given per country."""

from __future__ import annotations

import inspect
import warnings
from datetime import timedelta
from typing import Any

import polars as pl
import pytest

from storeframes import AppsUnavailableWarning, Client
from storeframes.fetch.pipeline import FRAMES
from storeframes.frames import FrameFunctions
from tests.conftest import SANDBOX_TODAY

FIVE = ["us", "gb", "de", "fr", "jp"]
KEYWORDS = ["photo editor", "meditation"]
APPS = ["3233849169", "361252007"]
MORE_APPS = [*APPS, "1395556972", "394079159", "284882215"]  # among them, some with in-app purchases
ANDROID = ["app.moonforge.photoeditorhd", "com.moonpine.collageeditorx"]  # permissions are android's
END = SANDBOX_TODAY - timedelta(days=1)

_ARGUMENTS: dict[str, dict[str, Any]] = {
    "search_frame": {"keywords": KEYWORDS},
    "search_history_frame": {"keywords": KEYWORDS, "start": END - timedelta(days=4), "end": END},
    "metrics_frame": {"apps": APPS, "metrics": ["downloads", "ratings"]},
    "in_app_purchases_frame": {"apps": MORE_APPS},
    "permissions_frame": {"apps": ANDROID},
}
"""The arguments of each frame function but its market (the others take ``APPS``, the change histories of
``MORE_APPS`` over 90 days up to yesterday): each gives rows in the sandbox."""


def _arguments(name: str) -> dict[str, Any]:
    if name in _ARGUMENTS:
        return _ARGUMENTS[name]
    if "start" in inspect.signature(getattr(FrameFunctions, name)).parameters:
        return {"apps": MORE_APPS, "start": END - timedelta(days=89), "end": END}
    return {"apps": APPS}


MARKET_FRAMES = [name for name in FRAMES if "country" in inspect.signature(getattr(FrameFunctions, name)).parameters]


def _quiet(call: Any) -> pl.DataFrame:
    with warnings.catch_warnings():  # an app the sandbox does not sell in a country: said, and left out
        warnings.simplefilter("ignore", AppsUnavailableWarning)
        return call()


def test_every_frame_function_with_country_takes_countries() -> None:
    several = [n for n in FRAMES if "countries" in inspect.signature(getattr(FrameFunctions, n)).parameters]
    assert several == [*MARKET_FRAMES, "benchmarks_frame"] and len(MARKET_FRAMES) == 14
    assert "countries" in inspect.signature(FrameFunctions.find_apps).parameters


def test_a_five_country_search_is_five_one_country_searches_with_a_request_each(make_client: Any) -> None:
    client: Client = make_client(cache_dir=None)
    five = client.search_frame(KEYWORDS, countries=FIVE)
    assert client.requests_sent == len(FIVE) * len(KEYWORDS)  # one request per keyword and country
    one_by_one = pl.concat([client.search_frame(KEYWORDS, country=country) for country in FIVE])
    assert client.requests_sent == 10  # each country's answers cached apart: nothing sent again
    assert five.equals(one_by_one) and five.schema == one_by_one.schema
    assert five["country"].unique(maintain_order=True).to_list() == FIVE
    by_country = five.group_by("country", maintain_order=True).agg(pl.col("keyword").unique(maintain_order=True))
    assert by_country["keyword"].to_list() == [KEYWORDS] * 5  # each country's keywords in the order given


@pytest.mark.parametrize("name", MARKET_FRAMES)
def test_every_frame_function_with_countries_equals_its_one_country_calls(make_client: Any, name: str) -> None:
    client: Client = make_client(cache_dir=None)
    call = getattr(client, name)
    both = _quiet(lambda: call(**_arguments(name), countries="us, GB"))  # a comma-separated text, any case
    sent = client.requests_sent
    apart = pl.concat([_quiet(lambda c=c: call(**_arguments(name), country=c)) for c in ("us", "gb")])
    assert client.requests_sent == sent  # the same cells, cached per country
    assert both.height > 0 and both.equals(apart), name
    assert both["country"].unique(maintain_order=True).to_list() == ["us", "gb"]


def test_a_five_country_call_after_a_one_country_call_fetches_four(make_client: Any) -> None:
    client: Client = make_client(cache_dir=None)
    client.metadata_frame(APPS, country="gb")
    assert client.requests_sent == 1
    frame = _quiet(lambda: client.metadata_frame(APPS, countries=FIVE))
    assert client.requests_sent == 1 + 4
    assert frame.select("country").unique(maintain_order=True)["country"].to_list() == FIVE
    again = _quiet(lambda: client.metadata_frame(APPS, countries=list(reversed(FIVE)) + ["us"]))  # us given twice
    assert client.requests_sent == 5
    assert again["country"].unique(maintain_order=True).to_list() == list(reversed(FIVE))


def test_plan_prices_every_country_before_anything_is_sent(make_client: Any) -> None:
    client: Client = make_client(cache_dir=None)
    plan = client.plan("search_frame", keywords=KEYWORDS, countries=FIVE)
    assert plan.requests.height == 10 and plan.cells == 10 and client.requests_sent == 0
    assert sorted(plan.requests["params"].str.extract(r'"country": ?"(\w+)"').unique().to_list()) == sorted(FIVE)
    client.search_frame(KEYWORDS, countries=FIVE[:2])
    later = client.plan("search_frame", keywords=KEYWORDS, countries=FIVE)
    assert later.cached_cells == 4 and (later.requests["source"] == "send").sum() == 6
    history = client.plan("changes_frame", apps=APPS, countries=["us", "gb"], start=END - timedelta(days=9), end=END)
    assert history.cells == 2 * 2 * 10 and client.requests_sent == 4  # apps x countries x days, nothing sent


def test_languages_given_per_country_and_the_others_their_own(make_client: Any) -> None:
    client: Client = make_client(cache_dir=None)
    own = _quiet(lambda: client.metadata_frame(APPS, countries=["us", "fr"]))
    assert dict(own.select("country", "language").unique().iter_rows()) == {"us": "en", "fr": "fr"}
    given = _quiet(lambda: client.metadata_frame(APPS, countries=["us", "fr"], language={"FR": "en"}))
    assert dict(given.select("country", "language").unique().iter_rows()) == {"us": "en", "fr": "en"}
    assert client.requests_sent == 3  # fr in English is a cell of its own
    every = _quiet(lambda: client.metadata_frame(APPS, countries=["us", "fr"], language="en"))  # en for both
    assert every.drop("fetched_at").equals(given.drop("fetched_at"))
    assert client.requests_sent == 4  # us in English asked for is a cell apart from us in its own language


def test_find_apps_searches_each_country_and_looks_up_its_apps_there(make_client: Any) -> None:
    client: Client = make_client(cache_dir=None)
    found = client.find_apps("meditation", countries=["us", "de"], top=3)
    assert found.columns[:3] == ["country", "rank", "app_id"]
    assert found["country"].to_list() == ["us"] * 3 + ["de"] * 3 and found["rank"].to_list() == [1, 2, 3] * 2
    assert found["title"].null_count() == 0
    single = client.find_apps("meditation", country="de", top=3)
    assert "country" not in single.columns
    assert single.equals(found.filter(pl.col("country") == "de").drop("country"))
    plan = client.plan("find_apps", term="notes", countries="us,gb,de", top=7)
    # a search per country, and the metadata of 7 apps in each (5 to a request): an upper bound
    assert plan.requests.height == 3 + 3 * 2 and plan.cells == 3 + 3 * 7


def test_the_countries_requests_are_sent_together(make_client: Any) -> None:
    """Each answer takes a second from its arrival: the three countries' requests all arrive within that second
    (one after another, they would arrive a second apart at least)."""
    client: Client = make_client(cache_dir=None, latency=1.0)
    frame = _quiet(lambda: client.metadata_frame(APPS, countries=["us", "gb", "de"]))
    arrivals = client.sandbox_service.arrivals
    assert sorted(a.params["country"] for a in arrivals) == ["de", "gb", "us"] and frame.height == 6
    times = [a.time for a in arrivals]
    assert max(times) - min(times) < 1.0
