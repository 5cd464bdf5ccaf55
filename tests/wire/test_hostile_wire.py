"""The request path under a hostile server: secrets kept, every fault a typed error, bounded in time and memory.

Each case is served by a loopback server that misbehaves on purpose (tests/_hostile.py), or
checks a helper of :mod:`storeframes.wire` directly, and asserts what a user relies on: the
error's type and message, what the server saw (never the token where it does not belong),
how long it took, how much memory it used, and what the ledger counted.
"""

from __future__ import annotations

import gzip
import json
import time
import tracemalloc
import zlib
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest

import storeframes as sf
from storeframes import defaults
from storeframes.answers import Attempt
from storeframes.catalog import ENDPOINTS, MAX_APP_ID_LENGTH, MAX_KEYWORD_LENGTH
from storeframes.fetch.limiter import SlidingWindowLimiter
from storeframes.wire import Wire, clean_token, shown_url
from storeframes.wire.envelope import _retry_after
from storeframes.wire.http import lib as httpx
from tests._hostile import PREFIX, Hostile, Reply, envelope
from tests._secrets import exposures

pytestmark = pytest.mark.timeout(30)

TOKEN = "sk-live-hostile-0123456789"
NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
SEARCH = ENDPOINTS["search"]
SEARCH_PARAMS = {"keyword": "maps", "country": "us", "language": "en", "device": "iphone"}
SEARCH_RESULT = {"date": "2026-11-20", "value": ["284882215"]}
SEARCH_PATH = f"{PREFIX}/keywords/search-results/current"


def _ok(result: Any = None, *, cost: Any = 1, **options: Any) -> Reply:
    options.setdefault("kind", "ok")
    return Reply.json(envelope(SEARCH_RESULT if result is None else result, cost=cost, path=SEARCH_PATH), **options)


def _client(server: Hostile, tmp_path: Any, **options: Any) -> sf.Client:
    options = {"backoff": (0.0, 0.01), "max_tries": 2, "progress": False, "clock": lambda: NOW, **options}
    return sf.Client(TOKEN, base_url=server.base_url, cache_dir=tmp_path / "c", **options)


_OPENED: list[Wire] = []


@pytest.fixture(autouse=True)
def _close_the_wires_a_test_opened():
    """Each wire a test built is closed after it, with the http client it was given: a kept-alive socket left
    to the garbage collector warns (ResourceWarning) in whichever later test the collector happens to run."""
    yield
    while _OPENED:
        wire = _OPENED.pop()
        wire.close()
        wire.http.close()


def _wire(server: Hostile, **options: Any) -> Wire:
    options = {"backoff": (0.0, 0.01), "max_tries": 2, **options}
    wire = Wire(TOKEN, server.base_url, limiter=SlidingWindowLimiter(100, 1.0), clock=lambda: NOW, **options)
    _OPENED.append(wire)
    return wire


def _send(wire: Wire, attempts: list[Attempt] | None = None) -> Any:
    return wire.send(SEARCH, SEARCH_PARAMS, report=(attempts if attempts is not None else []).append)


# -- secrets ---------------------------------------------------------------------------


def _exposures(exc: BaseException) -> list[str]:
    """Everything shown of a raised error that holds the token: every frame, the test's own included."""
    return exposures(exc, TOKEN, frames=lambda filename: True)


def _bomb(decoded: int) -> bytes:
    """A gzip body of ``decoded`` zero bytes, made a megabyte at a time."""
    pack = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b"\0" * (1 << 20)
    return b"".join([*(pack.compress(block) for _ in range(decoded >> 20)), pack.flush()])


HOSTILE_ERRORS = {
    "401": (Reply.json({"error": {"code": "UnknownTokenError"}}, kind="error status", status=401), sf.ApiError),
    "503": (Reply.json({"error": "down"}, kind="error status", status=503), sf.ServerError),
    "cut body": (_ok(kind="cut body", cut=30), sf.TransportError),
    "read timeout": (_ok(kind="stall", trickle=1.0, chunk=10, max_seconds=2), sf.TransportError),
    "broken gzip": (_ok(kind="broken content-encoding", headers={"Content-Encoding": "gzip"}), sf.TransportError),
    "redirect": (Reply.redirect("http://127.0.0.1:9/elsewhere", kind="cross-host redirect"), sf.RedirectError),
    "too large": (Reply(kind="oversized body", body=b"[" + b"0," * 2000 + b"0]"), sf.ResponseTooLargeError),
    "deadline": (_ok(kind="trickle", trickle=0.2, chunk=1), sf.TransportError),
    "not json": (Reply(kind="not json", body=b"<html>"), sf.TransportError),
}


@pytest.mark.parametrize("http_client", [False, True], ids=["own client", "user client"])
@pytest.mark.parametrize("case", list(HOSTILE_ERRORS))
def test_no_traceback_frame_or_chained_exception_holds_the_token(case, http_client):
    reply, error = HOSTILE_ERRORS[case]
    with Hostile([reply]) as server:
        options: dict[str, Any] = {"max_tries": 1, "timeout": 0.3, "deadline": 0.6, "max_body_bytes": 1000}
        if http_client:
            options["http_client"] = httpx.Client(timeout=0.3, follow_redirects=True)
        wire = _wire(server, **options)
        with pytest.raises(error) as caught:
            _send(wire)
        # the request was sent with the token, so what follows means something: on a loaded machine the client's
        # 0.3 s may pass before the server's thread has read the request it already holds, so wait for it
        waited = time.monotonic() + 5
        while not server.seen and time.monotonic() < waited:
            time.sleep(0.01)
        assert server.seen and server.seen[0].headers["x-service-key"] == TOKEN
        wire.close()
    assert caught.value.__context__ is None and caught.value.__cause__ is None
    assert _exposures(caught.value) == []


@pytest.mark.parametrize("case", ["401", "cut body", "broken gzip"])
def test_no_frame_of_a_client_call_holds_the_token(case, tmp_path):
    reply, error = HOSTILE_ERRORS[case]
    with Hostile([reply]) as server:
        client = _client(server, tmp_path, max_tries=1)
        with pytest.raises(error) as caught:
            client.search_frame("maps")
        client.close()
    assert _exposures(caught.value) == []


def test_the_token_reaches_the_transport_and_is_masked_once_the_answer_arrived():
    requests: list[httpx.Request] = []
    sent: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        sent.append(request.headers["x-service-key"])
        return httpx.Response(200, content=json.dumps(envelope(SEARCH_RESULT, cost=1)).encode())

    http = httpx.Client(transport=httpx.MockTransport(handler))
    url = "https://api.example.com/api/public/store"
    wire = Wire(TOKEN, url, limiter=SlidingWindowLimiter(9, 1.0), http_client=http, clock=lambda: NOW)
    assert _send(wire).result == SEARCH_RESULT
    assert sent == [TOKEN] and requests[0].headers["x-service-key"] == "***"


def test_a_redirect_to_another_host_is_an_error_and_the_other_host_never_sees_the_token():
    with Hostile([_ok(kind="redirect target")], name="elsewhere") as other:
        target = other.origin.replace("http://", "http://mallory:hunter2@") + "/steal?sig=abc123#frag"
        with Hostile([Reply.redirect(target, kind="cross-host redirect")]) as server:
            for http_client in (None, httpx.Client(follow_redirects=True)):
                wire = _wire(server, http_client=http_client)
                with pytest.raises(sf.RedirectError) as caught:
                    _send(wire)
                message = str(caught.value)
                shown = other.origin.replace("http://", "http://***@") + "/steal?***"
                assert caught.value.status == 302 and caught.value.location == shown
                assert shown in message and "base_url" in message
                assert "hunter2" not in message and "abc123" not in message and "frag" not in message
                wire.close()
            assert len(server.seen) == 2  # not retried
        assert other.seen == []


def test_a_redirect_loop_ends_at_the_first_redirect():
    with Hostile([Reply.redirect(f"{PREFIX}/keywords/search-results/current", kind="redirect loop")]) as server:
        wire = _wire(server, http_client=httpx.Client(follow_redirects=True), max_tries=3)
        with pytest.raises(sf.RedirectError, match="redirect"):
            _send(wire)
        assert len(server.seen) == 1


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://user:pa55word@api.example.com/api/public/store", "https://***@api.example.com/api/public/store"),
        ("https://api.example.com/api?key=s3cret&x=1#part", "https://api.example.com/api?***"),
        ("https://tok@api.example.com:8443/a", "https://***@api.example.com:8443/a"),
        ("https://api.example.com/api/public/store", "https://api.example.com/api/public/store"),
        ("not a url", "not a url"),
    ],
)
def test_shown_url_masks_user_info_and_query(url, shown):
    assert shown_url(url) == shown


def test_credentials_in_the_base_url_are_masked_wherever_it_is_shown(tmp_path, monkeypatch, capsys):
    with Hostile([_ok()]) as server:
        url = server.base_url.replace("http://", "http://alice:pa55word@")
        client = sf.Client(TOKEN, base_url=url, cache_dir=tmp_path / "c", progress=False)
        assert "pa55word" not in repr(client) and "***@127.0.0.1" in repr(client)
        client.close()
        monkeypatch.setattr(defaults, "_client", None)
        monkeypatch.setattr(defaults, "_owned", False)
        connected = sf.connect(tmp_path / "c2", live=True, api_key=TOKEN, base_url=url)
        line = capsys.readouterr().out
        assert "pa55word" not in line and "***@127.0.0.1" in line
        connected.close()
    for bad in ("http://alice:pa55word@api.example.com/api", "ftp://alice:pa55word@example.com/x?key=s3cret"):
        with pytest.raises(sf.ConfigurationError) as caught:
            sf.Client(TOKEN, base_url=bad)
        assert "pa55word" not in str(caught.value) and "s3cret" not in str(caught.value)


@pytest.mark.parametrize(
    "url", ["http://anything.localhost/api", "http://localhost.example.com/api", "http://127.0.0.1.nip.io/api"]
)
def test_plain_http_to_a_name_that_only_looks_local_is_refused(url):
    with pytest.raises(sf.ConfigurationError, match="https"):
        sf.Client(TOKEN, base_url=url)


@pytest.mark.parametrize(
    "url",
    ["http://localhost:9/api/public/store", "http://127.0.0.2/api/public/store", "http://[::1]:8000/api/public/store"],
)
def test_plain_http_to_loopback_addresses_and_localhost_is_allowed(url):
    assert sf.Client(TOKEN, base_url=url).base_url == url


@pytest.mark.parametrize(
    "url",
    [
        "https://api.example.com",
        "https://api.example.com/",
        "https://api.example.com/api",
        "https://api.example.com/api/public",
        "https://api.example.com/api/public/store/apps",
        "https://api.example.com/myapi/public/store",
        "http://127.0.0.1:8765",
    ],
)
def test_a_base_url_without_the_service_prefix_is_refused_naming_it(url):
    with pytest.raises(sf.ConfigurationError, match="does not end with the service's prefix /api/public/store"):
        sf.Client(TOKEN, base_url=url)


@pytest.mark.parametrize(
    "url", ["https://api.example.com/api/public/store/", "https://gateway.example.com/vendor/api/public/store"]
)
def test_a_base_url_ending_with_the_service_prefix_is_taken(url):
    assert sf.Client(TOKEN, base_url=url).base_url == url.rstrip("/")


def test_the_loopback_sandbox_answers_only_under_the_service_prefix():
    from storeframes.sandbox import SANDBOX_KEY, SandboxServer, World

    with SandboxServer(port=0, today="2026-11-20") as server:
        origin = server.base_url.removesuffix(PREFIX)
        headers = {"x-service-key": SANDBOX_KEY}
        query = {"apps": World(0).EXAMPLE_IOS_APPS[0]}
        inside = httpx.get(f"{server.base_url}/apps/metadata.json", params=query, headers=headers)
        outside = httpx.get(f"{origin}/apps/metadata.json", params=query, headers=headers)
        assert inside.status_code == 200 and inside.json()["metadata"]["request"]["path"] == inside.url.path
        assert outside.status_code == 404 and outside.json()["error"]["code"] == "NotFoundError"
        assert outside.json()["metadata"]["request"]["path"] == "/apps/metadata.json"
        assert [a.status for a in server.service.arrivals] == [200, 404]
        assert server.service.spent == inside.json()["metadata"]["request"]["cost"] > 0


# -- crashes ---------------------------------------------------------------------------


def test_retry_after_is_read_in_every_http_date_form():
    soon = datetime.now(UTC) + timedelta(seconds=120)
    assert 100 < (_retry_after(format_datetime(soon, usegmt=True)) or 0) <= 120  # IMF-fixdate
    assert 100 < (_retry_after(soon.strftime("%A, %d-%b-%y %H:%M:%S GMT")) or 0) <= 120  # RFC 850
    asctime = soon.strftime("%a %b ") + f"{soon.day:>2}" + soon.strftime(" %H:%M:%S %Y")
    assert 100 < (_retry_after(asctime) or 0) <= 120
    for no_hint in ["Sun Nov  6 08:49:37 1994", "0", "-5", "soon", "1e999", "nan", "inf", "", None, "Mon, 99 Foo"]:
        assert _retry_after(no_hint) is None, no_hint
    assert _retry_after(" 7 ") == 7.0 and _retry_after("1.5") == 1.5


def test_a_429_with_an_asctime_retry_after_ends_in_a_rate_limit_error():
    headers = {"Retry-After": "Sun Nov  6 08:49:37 1994"}
    reply = Reply.json({"error": "slow down"}, kind="asctime retry-after", status=429, headers=headers)
    with Hostile([reply]) as server:
        with pytest.raises(sf.RateLimitError) as caught:
            _send(_wire(server))
        assert caught.value.retry_after is None and len(server.seen) == 2


def test_a_body_nested_too_deep_is_a_response_shape_error():
    deep = b'{"result": ' + b"[" * 100_000 + b"]" * 100_000 + b', "metadata": {}}'
    with Hostile([Reply(kind="nested 100,000 deep", body=deep)]) as server:
        with pytest.raises(sf.ResponseShapeError, match="deep"):
            _send(_wire(server))
        assert len(server.seen) == 1


def test_a_number_too_long_to_read_is_a_response_shape_error():
    body = json.dumps(envelope({"value": 0}, cost=1)).replace('"value": 0', '"value": ' + "9" * 5000).encode()
    with Hostile([Reply(kind="number of 5,000 digits", body=body)]) as server:
        with pytest.raises(sf.ResponseShapeError, match="number"):
            _send(_wire(server))
        assert len(server.seen) == 1


def test_a_broken_content_encoding_is_retried_as_a_transport_fault():
    broken = _ok(kind="broken content-encoding", headers={"Content-Encoding": "gzip"})
    with Hostile([broken, broken, _ok(gzip=True, kind="gzip")]) as server:
        with pytest.raises(sf.TransportError, match="gzip"):
            _send(_wire(server))
        assert len(server.seen) == 2
        assert _send(_wire(server, max_tries=1)).result == SEARCH_RESULT  # a good gzip body is read


def test_an_unknown_content_encoding_is_a_transport_fault():
    with Hostile([_ok(kind="unasked content-encoding", headers={"Content-Encoding": "br"})]) as server:
        with pytest.raises(sf.TransportError, match="br"):
            _send(_wire(server))


def test_a_keyword_or_app_id_longer_than_the_limit_is_refused_before_sending(tmp_path):
    assert MAX_KEYWORD_LENGTH == 1000 and MAX_APP_ID_LENGTH == 1000
    with Hostile([_ok()]) as server:
        client = _client(server, tmp_path)
        with pytest.raises(sf.InvalidParameterError, match="at most 1,000 characters") as caught:
            client.get("search", keyword="k" * 70_000)
        assert caught.value.parameter == "keyword" and len(str(caught.value)) < 400
        with pytest.raises(sf.InvalidParameterError, match="at most 1,000 characters"):
            client.get("metadata", apps="com." + "a" * 2000, device="android")
        assert client.get("search", keyword="k" * 1000).result == SEARCH_RESULT
        assert len(server.seen) == 1
        client.close()


def test_parameters_httpx_cannot_put_in_a_url_are_refused_by_the_wire_too():
    with Hostile([_ok()]) as server:
        wire = _wire(server)
        with pytest.raises(sf.InvalidParameterError, match="URL") as caught:
            wire.send(SEARCH, {**SEARCH_PARAMS, "keyword": "k" * 70_000}, report=lambda attempt: None)
        assert caught.value.__context__ is None and len(str(caught.value)) < 600
        assert server.seen == []


@pytest.mark.parametrize(
    "token", [TOKEN + "é", "sk-live-\u00a0hostile", "sk-live\x00hostile", "sk-live\nhostile", "sk\tlive"]
)
def test_a_token_with_a_control_or_non_ascii_character_is_refused_when_the_client_is_built(token):
    with pytest.raises(sf.ConfigurationError, match="api_key") as caught:
        sf.Client(token, base_url="https://api.example.com/api/public/store")
    assert token not in str(caught.value) and "hostile" not in str(caught.value)
    assert caught.value.__context__ is None


def test_whitespace_around_a_token_read_from_a_file_is_stripped(tmp_path):
    assert clean_token(f"  {TOKEN}\r\n") == TOKEN
    with Hostile([_ok()]) as server:
        client = sf.Client(f"{TOKEN}\n", base_url=server.base_url, cache_dir=False, progress=False)
        assert client.get("search", keyword="maps").result == SEARCH_RESULT
        assert server.seen[0].headers["x-service-key"] == TOKEN
        client.close()


def test_a_closed_client_says_so(tmp_path):
    with Hostile([_ok()]) as server:
        client = _client(server, tmp_path)
        client.get("search", keyword="maps")
        client.close()
        assert "closed" in repr(client)
        with pytest.raises(sf.ConfigurationError, match="this client is closed"):
            client.get("search", keyword="other")
        http = httpx.Client()
        wire = _wire(server, http_client=http)
        http.close()
        with pytest.raises(sf.ConfigurationError, match="http_client is closed"):
            _send(wire)
        assert len(server.seen) == 1


# -- hangs and sizes ---------------------------------------------------------------------


def test_a_trickled_body_ends_at_the_deadline_and_is_retried(tmp_path):
    with Hostile([_ok(kind="trickle", trickle=0.5, chunk=1, max_seconds=6)]) as server:
        client = _client(server, tmp_path, deadline=1.0, max_tries=2)
        started = time.monotonic()
        with pytest.raises(sf.TransportError, match=r"deadline=1") as caught:
            client.get("search", keyword="maps")
        took = time.monotonic() - started
        assert 2.0 <= took < 4.0 and len(server.seen) == 2 and caught.value.attempts == 2
        client.close()


def test_the_deadline_bounds_a_server_that_sends_nothing():
    with Hostile([_ok(kind="stall", trickle=5.0, chunk=10, max_seconds=6)]) as server:
        wire = _wire(server, deadline=0.5, max_tries=1)  # the read timeout alone is 30 s
        started = time.monotonic()
        with pytest.raises(sf.TransportError):
            _send(wire)
        assert time.monotonic() - started < 1.5


def test_a_gzip_bomb_stops_at_the_size_cap_without_inflating_it():
    bomb = _bomb(64 << 20)  # 64 MB of zeros in 64 KB of gzip
    assert len(bomb) < 100_000
    reply = Reply(kind="gzip bomb", body=bomb, headers={"Content-Type": "application/json", "Content-Encoding": "gzip"})
    with Hostile([reply]) as server:
        wire = _wire(server, max_body_bytes=1 << 20)
        tracemalloc.start()
        try:
            with pytest.raises(sf.ResponseTooLargeError) as caught:
                _send(wire)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 6 << 20, f"peak {peak / 1e6:.1f} MB"
        assert caught.value.limit == 1 << 20 and "max_body_bytes" in str(caught.value)
        assert len(server.seen) == 1  # not retried


def test_a_body_over_the_cap_is_refused_and_not_retried(tmp_path):
    big = json.dumps(envelope({"date": "2026-11-20", "value": [str(i) for i in range(200_000)]}, cost=1)).encode()
    with Hostile([Reply(kind="oversized body", body=big)]) as server:
        client = _client(server, tmp_path, max_body_bytes=1_000_000)
        with pytest.raises(sf.ResponseTooLargeError, match=r"1,000,000 bytes.*max_body_bytes="):
            client.get("search", keyword="maps")
        # the answer was sent, and maybe charged: its cost unread, the estimate counts
        assert len(server.seen) == 1 and client.spent == client.estimate("search", keyword="maps") > 0
        assert client.ledger["max_credit_cost"].to_list() == [None]
        client.close()


@pytest.mark.parametrize(("deadline", "cap"), [(0, 1), (-1, 1), ("1", 1), (1, 0), (1, 1.5), (1, True)])
def test_deadline_and_size_cap_are_checked_when_the_client_is_built(deadline, cap):
    with pytest.raises(sf.ConfigurationError, match=r"deadline|max_body_bytes"):
        sf.Client(TOKEN, base_url="https://api.example.com/api/public/store", deadline=deadline, max_body_bytes=cap)


# -- Retry-After -----------------------------------------------------------------------


def test_a_retry_after_longer_than_the_client_waits_fails_at_once():
    reply = Reply.json({"error": "later"}, kind="retry-after an hour", status=429, headers={"Retry-After": "3600"})
    with Hostile([reply]) as server:
        started = time.monotonic()
        with pytest.raises(sf.RateLimitError, match="3600") as caught:
            _send(_wire(server, max_tries=5))
        assert time.monotonic() - started < 2 and len(server.seen) == 1
        assert caught.value.retry_after == 3600.0


def test_retry_after_on_503_is_honoured_as_on_429():
    unavailable = Reply.json({"error": "busy"}, kind="503 retry-after", status=503, headers={"Retry-After": "1"})
    with Hostile([unavailable, _ok()]) as server:
        assert _send(_wire(server)).result == SEARCH_RESULT
        assert server.seen[1].time - server.seen[0].time >= 0.9
    with Hostile([unavailable]) as server:
        with pytest.raises(sf.ServerError) as caught:
            _send(_wire(server, max_tries=1))
        assert caught.value.retry_after == 1.0


# -- credits and data ----------------------------------------------------------------------


@pytest.mark.parametrize("cost", [-500, 11.5, "11", True, None, [11], float("inf")])
def test_a_cost_that_is_not_a_whole_number_counts_the_estimate(tmp_path, cost):
    with Hostile([_ok(cost=cost, kind="hostile cost")]) as server:
        client = _client(server, tmp_path, budget=10_000)
        estimate = client.estimate("search", keyword="maps")
        with pytest.raises(sf.ResponseShapeError, match=r"metadata\.request\.cost") as caught:
            client.get("search", keyword="maps")
        assert caught.value.path == "metadata.request.cost"
        ledger = client.ledger
        assert client.spent == estimate == ledger["cost"].sum() > 0
        assert ledger["max_credit_cost"].to_list() == [None]  # the row's cost is the estimate
        assert len(server.seen) == 1 and client.cache.entries() == []
        client.close()


def test_a_whole_float_cost_is_the_whole_number(tmp_path):
    with Hostile([_ok(cost=11.0)]) as server:
        client = _client(server, tmp_path)
        assert client.get("search", keyword="maps").cost == 11 and client.spent == 11
        client.close()


def test_a_negative_cost_never_turns_the_budget_off(tmp_path):
    with Hostile([_ok(cost=-10_000, kind="hostile cost"), _ok(cost=1)]) as server:
        client = _client(server, tmp_path, budget=2 * SEARCH.estimate(SEARCH_PARAMS) - 1)
        with pytest.raises(sf.ResponseShapeError):
            client.get("search", keyword="maps")
        with pytest.raises(sf.BudgetExceededError):
            client.get("search", keyword="other")
        assert len(server.seen) == 1
        client.close()


def test_a_cost_above_the_services_own_maximum_warns(tmp_path):
    reply = Reply.json(envelope(SEARCH_RESULT, cost=50, max_cost=10, path=SEARCH_PATH), kind="cost above max")
    with Hostile([reply]) as server:
        client = _client(server, tmp_path)
        with pytest.warns(sf.CostWarning, match=r"50 credits.*max_credit_cost 10"):
            answer = client.get("search", keyword="maps")
        assert answer.cost == 50 == client.spent == client.ledger["cost"].sum()
        client.close()


def test_non_finite_numbers_in_an_answer_become_null():
    result = b'{"a": NaN, "b": Infinity, "c": -Infinity, "d": 1e999, "e": -1e999, "f": 1.5, "g": [NaN, 2.0, 3]}'
    body = json.dumps(envelope("RESULT", cost=1)).encode().replace(b'"RESULT"', result)
    with Hostile([Reply(kind="NaN and Infinity", body=body)]) as server:
        got = _send(_wire(server)).result
    assert got == {"a": None, "b": None, "c": None, "d": None, "e": None, "f": 1.5, "g": [None, 2.0, 3]}


def test_lone_surrogates_become_replacement_characters_and_pairs_are_kept():
    lone = (
        b'{"title": "Photo \\ud83d", "low": "\\uDE00 x", "pair": "\\ud83d\\ude00", "\\udbff key": ["\\udfff"],'
        b' "raw": "\xed\xa0\xbd", "plain": "caf\xc3\xa9 \xed\x9e\xa3"}'
    )
    not_utf8 = b'{"bad utf-8": "a\xffb", "plain": "caf\xc3\xa9"}'
    bodies = [json.dumps(envelope("RESULT", cost=1)).encode().replace(b'"RESULT"', r) for r in (lone, not_utf8)]
    with Hostile([Reply(kind="lone surrogate", body=bodies[0]), Reply(kind="not utf-8", body=bodies[1])]) as server:
        wire = _wire(server)
        got, other = _send(wire).result, _send(wire).result
    assert got == {
        "title": "Photo \ufffd",
        "low": "\ufffd x",
        "pair": "\U0001f600",
        "\ufffd key": ["\ufffd"],
        "raw": "\ufffd",
        "plain": "café \ud7a3",
    }
    assert other == {"bad utf-8": "a\ufffdb", "plain": "café"}
    assert json.dumps([got, other], ensure_ascii=False).encode()  # utf-8 can hold all of it


def test_errors_of_the_request_path_are_exported():
    for name in ("RedirectError", "ResponseTooLargeError", "CostWarning"):
        assert name in sf.errors.__all__ and getattr(sf, name) is getattr(sf.errors, name)
    assert issubclass(sf.RedirectError, sf.ApiError) and issubclass(sf.CostWarning, UserWarning)
    assert issubclass(sf.ResponseTooLargeError, sf.StoreframesError)
    assert not issubclass(sf.ResponseTooLargeError, sf.TransportError)  # never retried


def test_gzip_helpers_agree_with_the_standard_library():
    assert gzip.decompress(_bomb(2 << 20)) == b"\0" * (2 << 20)
