"""The client against the sandbox: batching, 422 isolation, retries, budget, ledger, hygiene."""

from __future__ import annotations

import json
import logging
import time
import warnings

import polars as pl
import pytest

import storeframes as sf
from storeframes.sandbox import SANDBOX_KEY, Faults, World
from storeframes.wire.http import lib as httpx
from tests.conftest import SANDBOX_TODAY

WORLD = World(0)
IOS = list(WORLD.EXAMPLE_IOS_APPS)
ANDROID = list(WORLD.EXAMPLE_ANDROID_APPS)


def successful(service, path_suffix=""):
    return [a for a in service.arrivals if a.status == 200 and a.path.endswith(path_suffix)]


# -- construction and configuration -------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8765/api/public/store",
        "http://localhost:9/api/public/store",
        "http://[::1]:8000/api/public/store",
        "https://api.example.com/api/public/store",
    ],
)
def test_https_or_loopback_urls_are_accepted(url):
    assert sf.Client("k", base_url=url).base_url == url


@pytest.mark.parametrize("url", ["http://api.example.com/api/public/store", "http://10.0.0.5/api", "ftp://example.com"])
def test_plain_http_to_a_remote_host_is_refused(url):
    with pytest.raises(sf.ConfigurationError, match="https"):
        sf.Client("k", base_url=url)


def test_environment_supplies_key_and_base_url(monkeypatch):
    monkeypatch.setenv("STOREFRAMES_API_KEY", "env-secret-123")
    monkeypatch.setenv("STOREFRAMES_BASE_URL", "https://api.example.com/api/public/store/")
    client = sf.Client()
    assert client.base_url == "https://api.example.com/api/public/store"
    assert "env-secret-123" not in repr(client)
    assert "api_key=set" in repr(client)


def _counting_client(handler, **kwargs):
    calls = []

    def wrapped(request):
        calls.append(request)
        return handler(request)

    http = httpx.Client(transport=httpx.MockTransport(wrapped))
    options = {"base_url": "https://api.example.com/api/public/store", "http_client": http, "backoff": (0.001, 0.01)}
    options.update(kwargs)
    return calls, options


def _envelope(result, status=200, cost=1):
    return {
        "result": result,
        "metadata": {
            "request": {"path": "/x", "params": {}, "cost": cost, "max_credit_cost": cost, "status": status},
            "response": None,
        },
    }


def test_missing_token_or_base_url_fails_before_any_request(monkeypatch):
    monkeypatch.delenv("STOREFRAMES_API_KEY", raising=False)
    monkeypatch.delenv("STOREFRAMES_BASE_URL", raising=False)
    calls, options = _counting_client(lambda r: httpx.Response(200, json=_envelope({})))
    with pytest.raises(sf.ConfigurationError, match="STOREFRAMES_API_KEY"):
        sf.Client(**options).get("search", keyword="maps")
    options.pop("base_url")
    with pytest.raises(sf.ConfigurationError, match="STOREFRAMES_BASE_URL"):
        sf.Client("k", **options).get("search", keyword="maps")
    assert calls == []


def test_token_is_sent_in_the_header_and_nowhere_else():
    sent = []

    def handler(request):
        sent.append(request.headers["x-service-key"])
        return httpx.Response(200, json=_envelope({"date": "2026-11-20", "value": []}))

    calls, options = _counting_client(handler)
    client = sf.Client("top-secret-token", **options)
    client.get("search", keyword="maps")
    (request,) = calls
    assert sent == ["top-secret-token"]
    assert request.headers["x-service-key"] == "***"  # masked once the answer arrived
    assert "top-secret-token" not in str(request.url)
    assert "top-secret-token" not in client.ledger.write_csv()


# -- validation happens before anything is sent --------------------------------------


def test_invalid_parameters_never_reach_the_service(sandbox):
    bad_calls = [
        ("metadata", {"apps": "com.example.app"}),
        ("metadata", {"apps": []}),
        ("benchmarks", {"device": "android", "channel": "appref"}),
        ("search_ads", {"keyword": "maps", "device": "android"}),
        ("changes", {"apps": IOS[0], "start_date": "2026-02-01", "end_date": "2026-01-01"}),
        ("metrics", {"apps": IOS[0], "metrics": "installs"}),
    ]
    for endpoint, params in bad_calls:
        with pytest.raises(sf.InvalidParameterError):
            sandbox.get(endpoint, **params)
    # a bad call among good ones stops the whole set before the first request
    with pytest.raises(sf.InvalidParameterError):
        sandbox.get_many("search", [{"keyword": "maps"}, {"keyword": ""}])
    assert sandbox.sandbox_service.arrivals == []


# -- batching and merging ------------------------------------------------------------


def test_many_apps_are_split_into_requests_of_five_and_merged(sandbox):
    apps = WORLD.app_ids("ios")[:12]
    answer = sandbox.get("metadata", apps=apps + apps[:3])  # duplicates are dropped
    assert sorted(answer.result) == sorted(apps)
    assert len(answer.responses) == 3
    sent = [a.params["apps"].split(",") for a in sandbox.sandbox_service.arrivals]
    assert sorted(len(s) for s in sent) == [2, 5, 5]
    assert sorted(sum(sent, [])) == sorted(apps)
    assert answer.cost == 3 * 1 + 12 * 10
    assert answer.result[apps[0]]["metadata"]["title"]


def test_get_many_runs_calls_concurrently_and_keeps_their_order(sandbox):
    keywords = list(WORLD.EXAMPLE_KEYWORDS[:4])
    answers = sandbox.get_many("search", [{"keyword": k} for k in keywords])
    assert [a.params["keyword"] for a in answers] == keywords
    assert all(a.result["value"] for a in answers)
    assert len(sandbox.sandbox_service.arrivals) == 4


# -- 422 AppNotAvailableError isolation --------------------------------------------------


def test_unavailable_apps_are_isolated_and_the_rest_returned(sandbox):
    gone = [a for a in WORLD.UNAVAILABLE_IN_US if a.isdigit()][0]
    apps = sorted(IOS[:4] + [gone])
    with pytest.warns(sf.AppsUnavailableWarning, match=gone):
        answer = sandbox.get("metadata", apps=apps)
    assert answer.unavailable == (gone,)
    assert sorted(answer.result) == sorted(IOS[:4])
    # every available app was fetched successfully exactly once
    fetched = sum((a.params["apps"].split(",") for a in successful(sandbox.sandbox_service)), [])
    assert sorted(fetched) == sorted(IOS[:4])
    rejected = [a for a in sandbox.sandbox_service.arrivals if a.status == 422]
    assert all(a.cost == 0 for a in rejected)
    # the halves are separate requests, each with its base price
    assert answer.cost == sum(1 + 10 * len(r.params["apps"].split(",")) for r in answer.responses)


def test_a_single_unavailable_app_gives_an_empty_answer_and_a_warning(sandbox):
    gone = [a for a in WORLD.UNAVAILABLE_IN_US if not a.isdigit()][0]
    with pytest.warns(sf.AppsUnavailableWarning):
        answer = sandbox.get("metadata", apps=gone, device="android")
    assert answer.result == {} and answer.unavailable == (gone,) and answer.cost == 0


# -- retries -----------------------------------------------------------------------------


def test_server_errors_and_dropped_connections_are_retried_until_success():
    # Half of all requests fault. The sandbox draws faults in the order requests arrive, and the pool's
    # threads arrive in any order, so which keyword meets which fault varies from run to run: with 10
    # tries one keyword of 40 met ten faults in a row in about 1 run of 80. With 40 tries that takes
    # about 1 run in 2.7e10, and the test still fails at once if a fault is not retried.
    faults = Faults(server_error=0.2, timeout=0.1, truncated=0.1, dropped=0.1, seed=7)
    options = {"today": SANDBOX_TODAY, "rate_limit": (1000, 1.0), "backoff": (0.001, 0.005), "max_tries": 40}
    with sf.sandbox.client(faults=faults, **options) as client:
        keywords = [f"keyword {i}" for i in range(40)]
        answers = client.get_many("search", [{"keyword": k} for k in keywords])
        service = client.sandbox_service
        assert all(a.result["value"] for a in answers)
        faulted = [a for a in service.arrivals if a.status != 200 or a.fault]
        assert faulted, "the seed injects faults"
        assert client.retries == len(faulted)
        assert len(successful(service)) - len([a for a in successful(service) if a.fault]) == 40
        statuses = set(client.ledger["status"].to_list())
        assert statuses & {500, 502, 503}
    # the same call on a clean sandbox gives the same answers
    with sf.sandbox.client(today=SANDBOX_TODAY) as clean:
        again = clean.get_many("search", [{"keyword": k} for k in keywords])
    assert [a.result for a in again] == [a.result for a in answers]


def test_retries_are_bounded_and_end_in_a_typed_error():
    with sf.sandbox.client(faults=Faults(server_error=1.0), backoff=(0.001, 0.002), max_tries=3) as client:
        with pytest.raises(sf.ServerError) as caught:
            client.get("search", keyword="maps")
        assert caught.value.attempts == 3
        assert caught.value.status in (500, 502, 503)
        assert len(client.sandbox_service.arrivals) == 3
    with sf.sandbox.client(faults=Faults(timeout=1.0), backoff=(0.001, 0.002), max_tries=2) as client:
        with pytest.raises(sf.TransportError, match="timed out"):
            client.get("search", keyword="maps")
        assert len(client.sandbox_service.arrivals) == 2


def test_other_4xx_are_not_retried():
    with sf.sandbox.client(backoff=(0.001, 0.002)) as client:
        client.sandbox_service.api_keys = frozenset({"another-key"})  # the client's key is now unknown
        with pytest.raises(sf.AuthenticationError) as caught:
            client.get("search", keyword="maps")
        assert caught.value.status == 401 and caught.value.code == "UnknownTokenError"
        assert len(client.sandbox_service.arrivals) == 1
    with sf.sandbox.client(credits=5) as client:
        with pytest.raises(sf.NotEnoughCreditsError):
            client.get("metadata", apps=IOS[0])
        assert len(client.sandbox_service.arrivals) == 1
    with sf.sandbox.client(estimates_in_plan=False) as client:
        with pytest.raises(sf.EstimatesNotInPlanError) as caught:
            client.get("metrics", apps=IOS[0], metrics="downloads")
        assert isinstance(caught.value, sf.ForbiddenError) and caught.value.status == 403


def test_retry_after_is_honoured_and_zero_means_no_hint():
    replies = iter(
        [
            httpx.Response(429, headers={"Retry-After": "0.3"}),
            httpx.Response(429, headers={"Retry-After": "0"}),
            httpx.Response(200, json=_envelope({"date": "2026-11-20", "value": ["1"]})),
        ]
    )
    calls, options = _counting_client(lambda r: next(replies), backoff=(0.001, 0.002))
    client = sf.Client("k", **options)
    started = time.monotonic()
    assert client.get("search", keyword="maps").result["value"] == ["1"]
    elapsed = time.monotonic() - started
    assert len(calls) == 3
    assert 0.3 <= elapsed < 1.0


def test_a_429_that_never_clears_raises_rate_limit_error_with_retry_after():
    calls, options = _counting_client(lambda r: httpx.Response(429, headers={"Retry-After": "0.01"}), max_tries=2)
    with pytest.raises(sf.RateLimitError) as caught:
        sf.Client("k", **options).get("search", keyword="maps")
    assert caught.value.retry_after == pytest.approx(0.01)
    assert caught.value.attempts == 2 and len(calls) == 2


def test_a_failure_half_way_keeps_what_was_fetched():
    # the first two requests succeed, then the service fails for good
    state = {"n": 0}

    def handler(request):
        state["n"] += 1
        if state["n"] <= 2:
            apps = request.url.params["apps"].split(",")
            return httpx.Response(200, json=_envelope({app: {"metadata": {}} for app in apps}))
        return httpx.Response(503, json={"error": {"code": "Down", "message": "down"}})

    calls, options = _counting_client(handler, max_tries=2, max_workers=1)
    client = sf.Client("k", **options)
    apps = [str(100 + i) for i in range(15)]
    with pytest.raises(sf.ServerError) as caught:
        client.get("metadata", apps=apps)
    assert len(caught.value.partial) == 2
    assert {r.params["apps"] for r in caught.value.partial} == {",".join(apps[:5]), ",".join(apps[5:10])}
    assert len(calls) == 4  # nothing more was sent after the failure
    assert client.spent == 2


# -- envelope checks ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "error", "match"),
    [
        ({"result": {}}, sf.ResponseShapeError, "metadata"),
        ({"metadata": {"request": {"cost": 1, "status": 200}}}, sf.ResponseShapeError, "result"),
        ({"result": {}, "metadata": {"request": {"status": 200}}}, sf.ResponseShapeError, "metadata.request.cost"),
        ([1, 2], sf.ResponseShapeError, "JSON object"),
        (
            _envelope(None, status=403) | {"error": {"code": "NotEnoughCreditsError", "message": "no credits"}},
            sf.NotEnoughCreditsError,
            "no credits",
        ),
        (_envelope(None, status=401), sf.AuthenticationError, "401"),
    ],
)
def test_bodies_that_are_not_the_documented_envelope(body, error, match):
    calls, options = _counting_client(lambda r: httpx.Response(200, json=body), max_tries=1)
    with pytest.raises(error, match=match):
        sf.Client("k", **options).get("search", keyword="maps")


def test_envelope_status_other_than_200_is_an_error_even_under_http_200():
    replies = iter(
        [httpx.Response(200, json=_envelope(None, status=500)), httpx.Response(200, json=_envelope({"value": []}))]
    )
    calls, options = _counting_client(lambda r: next(replies))
    assert sf.Client("k", **options).get("search", keyword="maps").result == {"value": []}
    assert len(calls) == 2  # the 500 in the envelope was retried


def test_a_body_that_is_not_json_is_retried_then_reported():
    calls, options = _counting_client(lambda r: httpx.Response(200, content=b'{"result": {"val'), max_tries=3)
    with pytest.raises(sf.TransportError, match="not valid JSON"):
        sf.Client("k", **options).get("search", keyword="maps")
    assert len(calls) == 3


# -- budget and ledger ---------------------------------------------------------------------


def test_budget_refuses_before_sending(sandbox):
    client = sf.sandbox.client(budget=30, today=SANDBOX_TODAY)
    client.get("metadata", apps=IOS[0])  # 11 credits
    with pytest.raises(sf.BudgetExceededError) as caught:
        client.get("metadata", apps=IOS[1:3])  # 21 more would make 32
    error = caught.value
    assert (error.spent, error.estimate, error.budget) == (11, 21, 30)
    assert "11" in str(error) and "21" in str(error) and "30" in str(error)
    assert len(client.sandbox_service.arrivals) == 1
    client.get("metadata", apps=IOS[1])  # 22 in all: still within the budget
    assert client.spent == 22


def test_budget_holds_under_concurrency():
    with sf.sandbox.client(budget=10 * 10 + 5, max_workers=8, cache_dir=False) as client:
        calls = [{"keyword": f"k{i}"} for i in range(10)]
        client.get_many("search", calls)  # exactly 100
        with pytest.raises(sf.BudgetExceededError):
            client.get_many("search", calls[:2])
        assert client.spent == 100 and len(client.sandbox_service.arrivals) == 10


def test_ledger_records_every_answer_with_its_credits(sandbox):
    sandbox.get("metadata", apps=IOS[:2])
    sandbox.get("metrics", apps=IOS[0], metrics=["downloads", "revenues", "power", "ratings"])
    sandbox.get("benchmarks", country="de", start_date="2026-10-01", end_date="2026-10-31")
    ledger = sandbox.ledger
    assert ledger.schema == sf.LEDGER_SCHEMA
    assert ledger["endpoint"].to_list() == ["metadata", "metrics", "benchmarks"]
    assert ledger["status"].to_list() == [200, 200, 200]
    assert ledger["cost"][0] == 21 and ledger["cost"][2] == 1001
    assert ledger["max_credit_cost"][1] == 220 and ledger["cost"][1] <= 220
    assert json.loads(ledger["params"][2]) == {
        "channel": "all",
        "country": "de",
        "device": "iphone",
        "end_date": "2026-10-31",
        "start_date": "2026-10-01",
        "type": "free",
    }
    assert sandbox.spent == ledger["cost"].sum()
    assert ledger["time"].dtype == pl.Datetime("us", "UTC")


def test_empty_ledger_has_the_schema():
    assert sf.sandbox.client().ledger.schema == sf.LEDGER_SCHEMA


# -- token hygiene -------------------------------------------------------------------------


def test_the_token_never_appears_in_repr_messages_or_logs(caplog):
    secret = "sk-live-5f3a9c1d2e7b4a60"
    caplog.set_level(logging.DEBUG)
    calls, options = _counting_client(
        lambda r: httpx.Response(
            401, json={"error": {"code": "UnknownTokenError", "message": f"token {secret} unknown"}}
        )
    )
    client = sf.Client(secret, **options)
    with pytest.raises(sf.AuthenticationError) as caught:
        client.get("metadata", apps="1")
    texts = [
        repr(client),
        str(client),
        str(caught.value),
        repr(caught.value),
        repr(vars(client)),
        caplog.text,
        client.ledger.write_csv(),
    ]
    texts += [str(v) for v in vars(caught.value).values()]
    assert calls and all(secret not in text for text in texts)


def test_unavailable_apps_warning_and_errors_carry_no_token(sandbox):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gone = [a for a in WORLD.UNAVAILABLE_IN_US if a.isdigit()][0]
        sandbox.get("metadata", apps=[gone, IOS[0]])
    assert caught and all(SANDBOX_KEY not in str(w.message) for w in caught)


def test_watch_sees_every_ledger_row_and_saved_sums_the_cache_hits(tmp_path):
    with sf.sandbox.client(today=SANDBOX_TODAY, cache_dir=tmp_path, progress=False) as client:
        rows: list[dict] = []
        stop = client.watch(rows.append)
        client.metadata_frame(["3233849169", "361252007"])
        client.versions_frame(["3233849169", "361252007"])  # the same answer, from the cache
        assert [(r["endpoint"], r["from_cache"]) for r in rows] == [("metadata", False), ("metadata", True)]
        assert rows[0]["cost"] == client.spent > 0
        assert rows[1]["saved"] == client.saved == client.spent
        assert list(rows[0]) == list(sf.LEDGER_SCHEMA)
        stop()
        stop()  # stopping twice is harmless
        client.screenshots_frame(["3233849169", "361252007"])
        assert len(rows) == 2 and client.saved == 2 * client.spent


def test_a_failing_watcher_is_logged_and_does_not_break_the_call(tmp_path, caplog):
    def broken(row):
        raise RuntimeError("display gone")

    with sf.sandbox.client(today=SANDBOX_TODAY, cache_dir=tmp_path, progress=False) as client:
        client.watch(broken)
        with caplog.at_level(logging.ERROR, logger="storeframes"):
            assert client.metadata_frame("3233849169").height == 1
        assert "a ledger watcher failed" in caplog.text
        with pytest.raises(sf.ConfigurationError, match="watch\\(\\) takes a callable, got int"):
            client.watch(3)


def test_watchers_see_the_credits_of_the_row_already_counted(tmp_path):
    with sf.sandbox.client(today=SANDBOX_TODAY, cache_dir=tmp_path, progress=False) as client:
        seen: list[tuple[int, int]] = []
        client.watch(lambda row: seen.append((row["cost"], client.spent)))
        client.metadata_frame(list(World(0).EXAMPLE_IOS_APPS[:3]))
        client.metrics_frame(["3233849169"], ["downloads"])
        assert len(seen) == 2 and all(spent >= cost > 0 for cost, spent in seen)
        assert seen[-1][1] == client.spent == sum(cost for cost, _ in seen)


@pytest.mark.parametrize(
    ("options", "hold"),
    [
        ({}, 125.0),  # the default deadline of 120 s, and 5
        ({"deadline": 7}, 12.0),
        ({"deadline": None, "timeout": 3}, 8.0),  # no deadline: the timeout, and 5
        ({"deadline": None, "http_client": httpx.Client()}, 60.0),  # neither known
    ],
)
def test_a_rate_slot_is_held_as_long_as_an_attempt_can_last(options, hold):
    """A slot whose holder outlives its hold counts as done: the hold must cover the whole attempt."""
    with sf.Client("k", base_url="https://api.example.com/api/public/store", cache_dir=False, **options) as client:
        assert client.limiter.hold == hold


@pytest.mark.timeout(60)
def test_frame_functions_run_by_client_map_finish_and_match_the_direct_call():
    """A frame call inside the client's own pool runs its requests and flattening in that thread,
    rather than waiting on a pool whose every thread is busy waiting."""
    apps = [a for a in WORLD.app_ids("ios")[:24]]
    groups = [apps[i : i + 6] for i in range(0, 24, 6)]  # 2 requests each, more calls than threads
    with sf.sandbox.client(today=SANDBOX_TODAY, max_workers=2, cache_dir=False, progress=False) as client:
        mapped = list(client.map(lambda group: client.metadata_frame(group), groups))
        direct = [client.metadata_frame(group) for group in groups]
    assert [f.height for f in mapped] == [6, 6, 6, 6]
    for got, want in zip(mapped, direct, strict=True):
        assert got.select("app_id", "title").equals(want.select("app_id", "title"))


@pytest.mark.parametrize(
    ("rate_limit", "workers"), [((60, 10.0), 60), ((30, 3.0), 30), ((5, 1.0), 8), ((1000, 1.0), 64)]
)
def test_a_whole_window_leaves_at_once_by_default(rate_limit, workers):
    """As many threads as the window admits (8 to 64), and as many connections kept for them to reuse."""
    with sf.Client(
        "k", base_url="https://api.example.com/api/public/store", rate_limit=rate_limit, cache_dir=False
    ) as client:
        assert client.max_workers == workers
        assert client.wire.http._transport._pool._max_keepalive_connections == max(20, workers)
    with sf.Client("k", base_url="https://api.example.com/api/public/store", max_workers=3, cache_dir=False) as client:
        assert client.max_workers == 3


def test_a_sandbox_client_says_its_key_is_the_sandboxs_not_a_token(monkeypatch):
    monkeypatch.delenv("STOREFRAMES_API_KEY", raising=False)
    with sf.sandbox.client(cache_dir=False) as client:
        assert "api_key=sandbox" in repr(client) and "api_key=set" not in repr(client)
        assert "<td>api_key</td><td>sandbox</td>" in client._repr_html_().replace("\n", "")
