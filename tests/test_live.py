"""Against the real service: skipped unless STOREFRAMES_API_KEY and STOREFRAMES_BASE_URL are set.

Each test spends a few credits and runs under a small budget.
"""

from __future__ import annotations

import pytest

import storeframes as sf

pytestmark = pytest.mark.live


def test_live_metadata_of_one_app_matches_the_contract():
    with sf.Client(budget=50) as client:
        answer = client.get("metadata", apps="284882215")
    assert "284882215" in answer.result
    assert "title" in answer.result["284882215"]["metadata"]
    assert client.ledger["status"].to_list() == [200]
    assert 0 <= answer.cost <= answer.max_credit_cost


def test_live_unknown_token_is_an_authentication_error():
    with sf.Client("not-a-real-token-000") as client, pytest.raises(sf.AuthenticationError):
        client.get("search", keyword="maps")
