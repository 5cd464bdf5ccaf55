"""Against the real service: skipped unless STOREFRAMES_API_KEY and STOREFRAMES_BASE_URL are set.

Each test spends a few credits under a small budget (about 270 in all, the conformance kit 150 of them; the benchmarks
endpoint, at 1,001 credits a request, is left to the sandbox). With
``STOREFRAMES_RECORD=all`` the traffic is kept in ``cassettes/live/``, scrubbed.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

import storeframes as sf
from storeframes.catalog import today_utc
from storeframes.schemas import SCHEMAS
from tests.conftest import live

pytestmark = pytest.mark.live

APP = "284882215"
ANDROID_APP = "com.facebook.katana"


def test_live_metadata_of_one_app_matches_the_documentation():
    with live("metadata", budget=50) as client:
        answer = client.get("metadata", apps=APP)
    assert APP in answer.result
    assert "title" in answer.result[APP]["metadata"]
    assert client.ledger["status"].to_list() == [200]
    assert 0 <= answer.cost <= answer.max_credit_cost


def test_live_unknown_token_is_an_authentication_error():
    with sf.Client("not-a-real-token-000", cache_dir=False) as client, pytest.raises(sf.AuthenticationError):
        client.get("search", keyword="maps")


def test_live_metadata_frames_of_both_stores():
    with live("metadata_frames", budget=30) as client:
        iphone = client.metadata_frame(APP)
        versions = client.versions_frame(APP)
        android = client.metadata_frame(ANDROID_APP, device="android")
    assert iphone.schema == SCHEMAS["metadata"].schema and iphone["app_id"].to_list() == [APP]
    assert versions.height == iphone["versions_count"][0] > 0
    assert android["app_id"].to_list() == [ANDROID_APP] and android["title"][0]


def test_live_change_history_of_a_week():
    end = today_utc() - timedelta(days=2)
    with live("changes_frame", budget=30) as client:
        changes = client.changes_frame(APP, start=end - timedelta(days=6), end=end)
    assert changes.schema == SCHEMAS["changes"].schema
    assert changes["date"].is_between(end - timedelta(days=6), end).all()


def test_live_search_and_a_few_days_of_history():
    end = today_utc() - timedelta(days=2)
    with live("search_frames", budget=60) as client:
        live_search = client.search_frame("maps")
        history = client.search_history_frame("maps", start=end - timedelta(days=2), end=end)
    assert live_search.schema == SCHEMAS["search"].schema and live_search.height > 0
    assert live_search["rank"].to_list() == list(range(1, live_search.height + 1))
    assert history.schema == SCHEMAS["search_history"].schema
    assert history["date"].n_unique() <= 3


def test_live_conformance_kit_within_its_budget(tmp_path):
    """The kit against the real service: within its default budget, its report written, no secret in any file.
    Its differences are the report's business (a canary fails on them), not this test's."""
    from storeframes import conformance
    from tests._secrets import leaks_in

    report = conformance.run(out=tmp_path / "conformance")
    assert report.spent <= conformance.DEFAULT_BUDGET
    assert {p.name for p in report.probes if p.outcome == "answered"} >= {"iphone metadata", "android metadata"}
    assert (tmp_path / "conformance" / "report.md").is_file() and report.leaks == []
    assert leaks_in(tmp_path) == []
