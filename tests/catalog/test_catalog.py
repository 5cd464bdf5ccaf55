"""The endpoint catalog: canonical parameters, defaults, costs, and every refusal."""

from __future__ import annotations

from datetime import date

import pytest

import storeframes as sf
from storeframes import catalog
from storeframes.catalog import CostModel, split_apps, validate

TODAY = date(2026, 11, 20)


def test_every_documented_endpoint_is_declared():
    paths = {ep.path for ep in catalog.ENDPOINTS.values()}
    assert paths == {
        "/apps/metadata.json",
        "/apps/metadata/changes.json",
        "/apps/metrics/current.json",
        "/categories/benchmarks",
        "/keywords/search-results/current",
        "/keywords/search-results/ads/current",
        "/keywords/search-results/history.json",
    }
    assert catalog.endpoint("/categories/benchmarks").name == "benchmarks"


def test_canonical_params_sort_dedupe_and_lowercase():
    params = validate("metadata", apps=" 3, 1,2,1 ", country="DE", language="De", device="iPhone", today=TODAY)
    assert params == {"apps": "1,2,3", "country": "de", "language": "de", "device": "iphone"}
    assert list(params) == ["apps", "country", "language", "device"]


def test_apps_accept_a_list_with_ints():
    assert validate("metadata", apps=[284882215, "1"], today=TODAY)["apps"] == "1,284882215"


def test_relative_date_defaults_resolve_to_real_dates():
    changes = validate("changes", apps="1", today=TODAY)
    assert changes["end_date"] == "2026-11-19"  # yesterday
    assert changes["start_date"] == "2026-10-21"  # 30 days ago: a 30-day range
    bench = validate("benchmarks", today=TODAY)
    assert (bench["start_date"], bench["end_date"]) == ("2026-10-20", "2026-11-19")
    assert bench["channel"] == "all" and bench["type"] == "free" and bench["country"] == "us"
    history = validate("search_history", keyword="photo editor", end_date="2026-02-10", today=TODAY)
    assert history["start_date"] == "2026-01-11"  # 30 days before the end date


def test_dates_accept_date_objects():
    params = validate("changes", apps="1", start_date=date(2026, 1, 1), end_date="2026-01-07", today=TODAY)
    assert (params["start_date"], params["end_date"]) == ("2026-01-01", "2026-01-07")


def test_metric_aliases_and_order():
    assert validate("metrics", apps="1", metrics="ratings,power,downloads", today=TODAY)["metrics"] == (
        "downloads,app-power,ratings"
    )


def test_language_is_left_to_the_service_when_not_given():
    assert "language" not in validate("search", keyword="maps", today=TODAY)


def test_split_apps_into_batches_of_five():
    params = validate("metadata", apps=[str(i) for i in range(100, 112)], today=TODAY)
    batches = split_apps(params)
    assert [len(b["apps"].split(",")) for b in batches] == [5, 5, 2]
    assert ",".join(b["apps"] for b in batches) == params["apps"]


@pytest.mark.parametrize(
    ("endpoint", "params", "expected"),
    [
        ("metadata", {"apps": "284882215"}, 11),  # the service's documented example
        ("metadata", {"apps": "1,2,3"}, 31),
        ("changes", {"apps": "1", "start_date": "2026-10-21", "end_date": "2026-11-19"}, 41),  # about a month
        ("changes", {"apps": "1", "start_date": "2026-11-13", "end_date": "2026-11-19"}, 18),  # a week
        ("benchmarks", {}, 1001),
        ("metrics", {"apps": "1", "metrics": "downloads,revenues,app-power,ratings"}, 220),  # max_credit_cost
    ],
)
def test_cost_model_matches_the_documentations_examples(endpoint, params, expected):
    ep = catalog.endpoint(endpoint)
    assert ep.estimate(validate(ep, params, today=TODAY)) == expected


def test_cost_model_is_data_a_user_overrides():
    client = sf.sandbox.client(cost_model={"metadata": CostModel(base=0, per_app=3)})
    assert client.estimate("metadata", apps="1,2") == 6
    assert client.estimate("benchmarks", end_date="2026-01-31") == 1001
    with pytest.raises(sf.ConfigurationError, match="unknown endpoints"):
        sf.sandbox.client(cost_model={"nope": CostModel()})


BAD_INPUTS = [
    ("metadata", {"apps": "1", "device": "windows"}, "device", "iphone, ipad, android"),
    ("benchmarks", {"device": "ipad"}, "device", "iphone, android"),
    ("benchmarks", {"channel": "tiktok"}, "channel", "all, search, browse, appref, webref"),
    ("benchmarks", {"device": "android", "channel": "browse"}, "channel", "all, search, explore, referrals"),
    ("benchmarks", {"device": "iphone", "channel": "explore"}, "channel", "device='android'"),
    ("benchmarks", {"type": "freemium"}, "type", "free, paid"),
    ("changes", {"apps": "1", "start_date": "2026-03-10", "end_date": "2026-03-01"}, "end_date", "on or after"),
    ("changes", {"apps": "1", "start_date": "2026-13-01"}, "start_date", "YYYY-MM-DD"),
    ("changes", {"apps": "1", "start_date": "01/02/2026"}, "start_date", "YYYY-MM-DD"),
    ("changes", {"apps": "1", "end_date": "2027-06-01"}, "end_date", "no later than today"),
    ("search_history", {"keyword": "maps", "start_date": 20260101}, "start_date", "YYYY-MM-DD"),
    ("metadata", {"apps": "1", "country": "usa"}, "country", "two-letter"),
    ("metadata", {"apps": "1", "country": "u1"}, "country", "two-letter"),
    ("search", {"keyword": "maps", "language": "english"}, "language", "two-letter"),
    ("search", {"keyword": "   "}, "keyword", "non-empty"),
    ("search", {"keyword": ["a", "b"]}, "keyword", "one keyword"),
    ("search", {}, "keyword", "required"),
    ("metadata", {"apps": ""}, "apps", "at least one"),
    ("metadata", {"apps": []}, "apps", "at least one"),
    ("metadata", {}, "apps", "required"),
    ("metadata", {"apps": "com.example.app", "device": "iphone"}, "apps", "package name cannot be sent"),
    ("metadata", {"apps": "com.example.app", "device": "ipad"}, "apps", "numeric text"),
    ("metadata", {"apps": "284882215", "device": "android"}, "apps", "numeric id belongs"),
    ("metadata", {"apps": "12ab", "device": "iphone"}, "apps", "numeric text"),
    ("changes", {"apps": "not a package", "device": "android"}, "apps", "package name"),
    ("search_ads", {"keyword": "maps", "device": "android"}, "device", "only the iphone/ipad store"),
    ("metrics", {"apps": "1", "metrics": "downloads,installs"}, "metrics", "downloads, revenues"),
    ("metrics", {"apps": "1", "metrics": ""}, "metrics", "at least one"),
    ("metadata", {"apps": "1", "colour": "red"}, "colour", "metadata takes apps, country"),
]


@pytest.mark.parametrize(("endpoint", "params", "parameter", "allowed"), BAD_INPUTS)
def test_bad_input_is_refused_naming_parameter_value_and_allowed(endpoint, params, parameter, allowed):
    with pytest.raises(sf.InvalidParameterError) as caught:
        validate(endpoint, params, today=TODAY)
    error = caught.value
    assert isinstance(error, ValueError)
    assert error.parameter == parameter
    assert parameter in str(error)
    assert allowed in str(error)
    if params.get(parameter) not in (None, "", []):
        assert repr(error.value) in str(error) or str(error.value) in str(error)


def test_unknown_endpoint():
    with pytest.raises(sf.InvalidParameterError, match="one of metadata, changes"):
        catalog.endpoint("ratings")
