"""The sandbox service: envelope, errors, costs and faults, as a client of HTTP sees them."""

from __future__ import annotations

import json

import pytest

from storeframes import catalog
from storeframes.sandbox import API_PREFIX, SANDBOX_KEY, Faults, SandboxService, SandboxTransport, World
from storeframes.wire.http import lib as httpx
from tests.conftest import SANDBOX_TODAY

WORLD = World(0)
IOS = list(WORLD.EXAMPLE_IOS_APPS)


@pytest.fixture
def service() -> SandboxService:
    return SandboxService(today=SANDBOX_TODAY, world=WORLD)


def call(service, path, key=SANDBOX_KEY, **params):
    reply = service.handle("GET", API_PREFIX + path, list(params.items()), {"X-Service-Key": key} if key else {})
    return reply.status, json.loads(reply.body) if reply.body else None


def test_envelope_echoes_params_with_defaults_and_lists_as_arrays(service):
    status, body = call(service, "/apps/metadata.json", apps=f"{IOS[1]},{IOS[0]}")
    assert status == 200
    assert set(body) == {"result", "metadata"}
    request = body["metadata"]["request"]
    assert body["metadata"]["response"] is None
    assert request["path"] == "/api/public/store/apps/metadata.json"
    assert request["params"] == {"apps": sorted(IOS[:2]), "country": "us", "language": "en", "device": "iphone"}
    assert request["status"] == 200 and request["cost"] == request["max_credit_cost"] == 21
    assert sorted(body["result"]) == sorted(IOS[:2])


def test_metrics_echo_language_and_charge_only_values_present(service):
    apps = ",".join(WORLD.app_ids("ios")[:5])
    status, body = call(
        service, "/apps/metrics/current.json", apps=apps, metrics="downloads,revenues,app-power,ratings"
    )
    request = body["metadata"]["request"]
    assert status == 200 and request["params"]["language"] == "en"
    assert request["params"]["metrics"] == ["downloads", "revenues", "app-power", "ratings"]
    prices = {"downloads": 100, "revenues": 100, "power": 10, "ratings": 10}
    nulls = sum(prices[k] for entry in body["result"].values() for k, v in entry.items() if v["value"] is None)
    assert request["max_credit_cost"] == 5 * 220
    assert request["cost"] == 5 * 220 - nulls


def test_benchmarks_echo_every_documented_param(service):
    _, body = call(service, "/categories/benchmarks", device="android", channel="referrals")
    assert body["metadata"]["request"]["params"] == {
        "country": "us",
        "device": "android",
        "type": "free",
        "channel": "referrals",
        "start_date": "2026-10-20",
        "end_date": "2026-11-19",
    }
    assert body["metadata"]["request"]["cost"] == 1001


def test_history_is_keyed_by_date_with_untracked_days_absent_and_a_live_today(service):
    _, body = call(
        service,
        "/keywords/search-results/history.json",
        keyword="photo editor",
        start_date="2026-10-01",
        end_date="2026-11-20",
    )
    days = body["result"]
    assert all(len(ids) <= 500 for ids in days.values())
    assert "2026-11-20" in days and len(days["2026-11-20"]) <= 250
    assert len(days) <= 51
    request = body["metadata"]["request"]
    assert request["cost"] == 1 + 10 * len(days) and request["max_credit_cost"] == 1 + 10 * 51
    _, untracked = call(
        service,
        "/keywords/search-results/history.json",
        keyword=WORLD.UNTRACKED_KEYWORD,
        start_date="2026-10-01",
        end_date="2026-10-31",
    )
    assert untracked["result"] == {}


@pytest.mark.parametrize(
    ("path", "params", "key", "status", "code"),
    [
        ("/apps/metadata.json", {"apps": "1"}, None, 401, "UnknownTokenError"),
        ("/apps/metadata.json", {"apps": "1"}, "wrong", 401, "UnknownTokenError"),
        ("/apps/metadata.json", {"apps": "1,2,3,4,5,6"}, SANDBOX_KEY, 422, "ValidationError"),
        ("/apps/metadata.json", {"apps": "com.x.y"}, SANDBOX_KEY, 422, "ValidationError"),
        ("/apps/metadata.json", {"apps": "999"}, SANDBOX_KEY, 422, "AppNotAvailableError"),
        (
            "/keywords/search-results/ads/current",
            {"keyword": "a", "device": "android"},
            SANDBOX_KEY,
            422,
            "ValidationError",
        ),
        ("/nope", {}, SANDBOX_KEY, 404, "NotFoundError"),
    ],
)
def test_errors_carry_a_code_and_the_envelope_and_cost_nothing(service, path, params, key, status, code):
    got, body = call(service, path, key=key, **params)
    assert got == status and body["error"]["code"] == code and body["error"]["message"]
    assert body["metadata"]["request"]["status"] == status and body["metadata"]["request"]["cost"] == 0
    assert service.spent == 0


def test_unavailable_apps_depend_on_the_country(service):
    gone = WORLD.UNAVAILABLE_IN_US[0]
    assert call(service, "/apps/metadata.json", apps=gone)[0] == 422
    assert call(service, "/apps/metadata.json", apps=gone, country="gb")[0] == 200


def test_every_endpoint_of_the_catalog_has_a_result_builder_and_nothing_else_does():
    assert set(SandboxService._RESULTS) == set(catalog.ENDPOINTS)


def test_rate_window_counts_arrivals():
    service = SandboxService(today=SANDBOX_TODAY, world=WORLD, rate_limit=(2, 60.0))
    statuses = [call(service, "/keywords/search-results/current", keyword="maps")[0] for _ in range(4)]
    assert statuses == [200, 200, 429, 429]


def test_the_same_request_gets_the_same_answer():
    params = {"apps": ",".join(IOS[:3]), "start_date": "2026-01-01", "end_date": "2026-06-30"}
    first = call(SandboxService(today=SANDBOX_TODAY), "/apps/metadata/changes.json", **params)
    again = call(SandboxService(today=SANDBOX_TODAY), "/apps/metadata/changes.json", **params)
    assert first == again and first[0] == 200


def test_seeded_faults_are_reproducible_and_act_on_the_wire():
    def statuses(seed):
        service = SandboxService(
            today=SANDBOX_TODAY,
            world=WORLD,
            faults=Faults(server_error=0.3, timeout=0.2, truncated=0.2, dropped=0.1, seed=seed),
        )
        http = httpx.Client(transport=SandboxTransport(service), base_url="https://sandbox.invalid")
        seen = []
        for i in range(30):
            try:
                response = http.get(
                    API_PREFIX + "/keywords/search-results/current",
                    params={"keyword": f"k{i}"},
                    headers={"x-service-key": SANDBOX_KEY},
                )
                try:
                    json.loads(response.content)
                    seen.append(response.status_code)
                except ValueError:
                    seen.append("truncated")
            except httpx.ReadTimeout:
                seen.append("timeout")
            except httpx.RemoteProtocolError:
                seen.append("dropped")
        return seen

    first = statuses(1)
    assert first == statuses(1)
    assert {"timeout", "dropped", "truncated", 200} <= set(first)
    assert set(first) & {500, 502, 503}


def test_credits_run_out_with_403():
    service = SandboxService(today=SANDBOX_TODAY, world=WORLD, credits=25)
    assert call(service, "/apps/metadata.json", apps=IOS[0])[0] == 200
    assert call(service, "/apps/metadata.json", apps=IOS[1])[0] == 200
    status, body = call(service, "/apps/metadata.json", apps=IOS[2])
    assert status == 403 and body["error"]["code"] == "NotEnoughCreditsError"
    assert service.spent == 22
