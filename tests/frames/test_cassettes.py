"""The client end to end over HTTP, replayed from cassettes recorded on the loopback sandbox.

In CI nothing listens: every request must be found in ``cassettes/`` (record mode
``none``), so these tests also prove that the client's requests are stable. Re-record
with ``STOREFRAMES_RECORD=all python -m pytest tests/frames/test_cassettes.py tests/frames/test_cassette_frames.py``.
"""

from __future__ import annotations

import re
import socket
from urllib.parse import urlsplit

import pytest
from vcr.errors import CannotOverwriteExistingCassetteException

import storeframes as sf
from storeframes.sandbox import SANDBOX_KEY, Faults, World
from storeframes.wire import http
from tests._secrets import leaks_in
from tests.conftest import CASSETTES, RECORD_MODE, REPLAY_BASE_URL, recorded, recorder

WORLD = World(0)
IOS = list(WORLD.EXAMPLE_IOS_APPS)
ANDROID = list(WORLD.EXAMPLE_ANDROID_APPS)
IOS_METADATA_KEYS = {
    "title", "subtitle", "promotional_text", "description", "id", "categories", "icon", "screenshots", "videos",
    "size", "rating", "developer", "price", "versions", "release_date", "customers_also_bought", "dna",
    "features", "in_app_purchases",
}  # fmt: skip
ANDROID_METADATA_KEYS = {
    "title", "short_description", "long_description", "id", "categories", "icon", "screenshots", "videos", "size",
    "rating", "developer", "price", "released_at", "versions", "similar_apps", "release_date", "dna", "permissions",
}  # fmt: skip


def test_metadata_both_stores_in_batches():
    with recorded("metadata_iphone") as client:
        answer = client.get("metadata", apps=IOS, device="iphone")
    assert sorted(answer.result) == sorted(IOS)
    assert len(answer.responses) == 2 and answer.cost == 2 + 10 * len(IOS)
    for app_id, entry in answer.result.items():
        assert set(entry["metadata"]) == IOS_METADATA_KEYS
        assert str(entry["metadata"]["id"]) == app_id
    with recorded("metadata_android") as client:
        answer = client.get("metadata", apps=ANDROID[:3], device="android", country="de")
    assert sorted(answer.result) == sorted(ANDROID[:3])
    assert all(set(e["metadata"]) == ANDROID_METADATA_KEYS for e in answer.result.values())
    assert answer.responses[0].echo["language"] == "de" and answer.responses[0].echo["apps"] == sorted(ANDROID[:3])
    with recorded("metadata_ipad") as client:
        answer = client.get("metadata", apps=IOS[:1], device="ipad")
    assert (
        answer.result[IOS[0]]["metadata"]["screenshots"]["ipad"]
        or answer.result[IOS[0]]["metadata"]["screenshots"]["ipadPro"]
    )


@pytest.mark.skipif(RECORD_MODE != "none", reason="recording: a loopback sandbox answers")
def test_every_request_of_a_replay_is_served_by_the_cassette_through_the_library_in_use():
    """Nothing listens at the replay address: each request the client sends (through httpx2 where it is installed,
    else httpx) is one vcrpy intercepted and played from the cassette, none reached the network."""
    where = urlsplit(REPLAY_BASE_URL)
    with socket.socket() as probe:
        listening = probe.connect_ex((where.hostname, where.port)) == 0  # refused: no server to fall through to
    assert not listening, f"something listens at {where.netloc}, the cassettes' replay address: stop it and run again"
    options = {"max_workers": 1, "max_tries": 1, "cache_dir": False, "progress": False}
    with (
        recorder.use_cassette("metadata_iphone.yaml") as cassette,
        sf.Client(SANDBOX_KEY, base_url=REPLAY_BASE_URL, **options) as client,
    ):
        answer = client.get("metadata", apps=IOS, device="iphone")
        assert type(client.wire.http).__module__.partition(".")[0] == http.NAME
        assert cassette.play_count == client.wire.requests_sent == len(answer.responses) == 2
    assert sorted(answer.result) == sorted(IOS)


def test_change_history_both_stores():
    with recorded("changes_iphone") as client:
        answer = client.get("changes", apps=IOS[:3], start_date="2026-08-01", end_date="2026-10-31")
    assert answer.cost == 1 + 3 * (10 + 92)
    changes = [c for entry in answer.result.values() for c in entry["changes"]]
    assert changes and all("2026-08-01" <= c["date"] <= "2026-10-31" for c in changes)
    with recorded("changes_android") as client:
        answer = client.get(
            "changes", apps=ANDROID[:2], device="android", start_date="2026-08-01", end_date="2026-10-31"
        )
    shots = [c for e in answer.result.values() for c in e["changes"] if c["target"] == "screenshots"]
    assert all("filename" not in s for c in shots for s in c["new_value"])


def test_metrics_both_stores():
    with recorded("metrics_iphone") as client:
        answer = client.get("metrics", apps=IOS[:2], metrics="downloads,revenues,power,ratings")
    assert answer.max_credit_cost == 2 * 220 and answer.cost <= answer.max_credit_cost
    assert set(answer.result[IOS[0]]) == {"downloads", "revenues", "power", "ratings"}
    assert answer.responses[0].echo["metrics"] == ["downloads", "revenues", "app-power", "ratings"]
    with recorded("metrics_android") as client:
        answer = client.get("metrics", apps=ANDROID[:1], metrics=["ratings"], device="android")
    assert set(answer.result[ANDROID[0]]) == {"ratings"}


def test_benchmarks_for_each_store():
    with recorded("benchmarks") as client:
        iphone, android = client.get_many(
            "benchmarks",
            [
                {"channel": "appref", "start_date": "2026-10-01", "end_date": "2026-10-31"},
                {"device": "android", "channel": "explore", "start_date": "2026-10-01", "end_date": "2026-10-31"},
            ],
        )
    assert iphone.cost == android.cost == 1001
    rows = iphone.result["category_benchmarks"]
    assert rows and all(r["impressions_to_page_views"] is None and r["impressions_to_installs"] is None for r in rows)
    assert all(re.fullmatch(r"\d+", r["category"]) for r in rows)
    assert all(re.fullmatch(r"[A-Z_]+", r["category"]) for r in android.result["category_benchmarks"])


def test_live_search_with_and_without_ads():
    with recorded("search") as client:
        organic, android = client.get_many(
            "search", [{"keyword": "photo editor"}, {"keyword": "photo editor", "device": "android"}]
        )
        ads = client.get("search_ads", keyword="photo editor")
    assert 0 < len(organic.result["value"]) <= 250 and organic.result["date"] == "2026-11-20"
    assert all(not i.isdigit() for i in android.result["value"])
    assert [e["is_ad"] for e in ads.result[:2]] == [True, True]
    assert not any(e["is_ad"] for e in ads.result[2:])


def test_search_history_with_live_fallback():
    with recorded("search_history") as client:
        answer = client.get("search_history", keyword="photo editor", start_date="2026-11-01", end_date="2026-11-20")
        android = client.get(
            "search_history", keyword="photo editor", device="android", start_date="2026-11-01", end_date="2026-11-19"
        )
    days = answer.result
    assert "2026-11-20" in days and len(days["2026-11-20"]) <= 250  # today: the live fallback
    assert max(len(ids) for ids in days.values()) <= 500
    assert max(len(ids) for ids in android.result.values()) <= 250
    assert answer.cost < answer.max_credit_cost or len(days) == 20


def test_errors_over_http():
    with recorded("error_401", api_key="not-the-key") as client, pytest.raises(sf.AuthenticationError) as caught:
        client.get("search", keyword="maps")
    assert caught.value.code == "UnknownTokenError"

    with recorded("error_403_credits", credits=5) as client, pytest.raises(sf.NotEnoughCreditsError):
        client.get("metadata", apps=IOS[0])

    with recorded("error_403_estimates", estimates_in_plan=False) as client:
        with pytest.raises(sf.EstimatesNotInPlanError):
            client.get("metrics", apps=IOS[0], metrics="revenues")

    gone = [a for a in WORLD.UNAVAILABLE_IN_US if a.isdigit()][0]
    with recorded("error_422_isolation") as client, pytest.warns(sf.AppsUnavailableWarning):
        answer = client.get("metadata", apps=IOS[:4] + [gone])
    assert answer.unavailable == (gone,) and sorted(answer.result) == sorted(IOS[:4])

    with recorded("error_429", rate_limit=(1, 60.0), client_options={"max_tries": 1}) as client:
        client.get("search", keyword="maps")
        with pytest.raises(sf.RateLimitError) as caught:
            client.get("search", keyword="maps again")
    assert caught.value.retry_after is None  # the service sends no hint

    with recorded("error_5xx", faults=Faults(server_error=1.0), client_options={"max_tries": 2}) as client:
        with pytest.raises(sf.ServerError) as caught:
            client.get("search", keyword="maps")
    assert caught.value.attempts == 2


def test_transient_faults_are_retried_to_the_same_answer():
    faults = Faults(server_error=0.5, seed=3)
    with recorded("retry_5xx", faults=faults, client_options={"max_tries": 10}) as client:
        answer = client.get("search", keyword="budget planner")
    statuses = client.ledger["status"].to_list()
    assert statuses[-1] == 200 and any(s >= 500 for s in statuses[:-1])
    with recorded("search_budget_planner") as client:
        clean = client.get("search", keyword="budget planner")
    assert answer.result == clean.result


def test_cassettes_hold_no_token():
    files = sorted(CASSETTES.rglob("*.yaml"))
    if RECORD_MODE == "none":  # while re-recording, the other module's cassettes may not be written yet
        assert len(files) >= 30
    assert not leaks_in(CASSETTES)  # no test token, no key-shaped string, in any form
    for path in files:
        assert "REDACTED" in path.read_text(), path.name  # the header was there, and was filtered


@pytest.mark.skipif(RECORD_MODE != "none", reason="replay check only")
def test_replay_needs_no_network():
    # vcrpy's words for it changed across releases; its exception did not
    with pytest.raises(CannotOverwriteExistingCassetteException), recorded("search") as client:
        client.get("search", keyword="a keyword never recorded")
