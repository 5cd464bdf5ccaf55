"""The request path and the credits on their own: attempts reported, errors mapped, the token hidden."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime

import pytest

import storeframes as sf
from storeframes.answers import Attempt
from storeframes.catalog import ENDPOINTS
from storeframes.credits import Credits
from storeframes.fetch.limiter import SlidingWindowLimiter
from storeframes.wire import TOKEN_HEADER, Wire
from storeframes.wire.http import lib as httpx

TOKEN = "sk-live-wire-test-0123456789"
NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
METADATA = ENDPOINTS["metadata"]
PARAMS = {"apps": "284882215", "country": "us", "device": "iphone"}


def _envelope(result, *, cost: int, status: int = 200) -> bytes:
    request = {
        "path": "/api/public/store/apps/metadata.json",
        "params": {},
        "cost": cost,
        "max_credit_cost": cost + 1,
        "status": status,
    }
    return json.dumps({"result": result, "metadata": {"request": request, "response": None}}).encode()


def _wire(handler, **options) -> Wire:
    http = httpx.Client(transport=httpx.MockTransport(handler))
    options.setdefault("backoff", (0.0, 0.0))
    limiter = SlidingWindowLimiter(100, 1.0)
    url = "https://api.example.com/api/public/store"
    return Wire(TOKEN, url, limiter=limiter, http_client=http, clock=lambda: NOW, **options)


def test_every_attempt_is_reported_with_its_status_and_cost():
    replies = iter(
        [
            httpx.Response(503, content=_envelope(None, cost=2, status=503)),
            httpx.Response(200, content=b'{"result": {"2842'),  # a body cut short
            httpx.Response(200, content=_envelope({"284882215": {"metadata": {}}}, cost=11)),
        ]
    )
    seen_tokens = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen_tokens.append(request.headers[TOKEN_HEADER])
        return next(replies)

    attempts: list[Attempt] = []
    response = _wire(handler).send(METADATA, PARAMS, report=attempts.append)
    assert [(a.status, a.cost, a.attempt) for a in attempts] == [(503, 2, 1), (200, 0, 2), (200, 11, 3)]
    assert response.cost == 11 and response.max_credit_cost == 12 and response.attempts == 3
    assert response.fetched_at == NOW and response.result == {"284882215": {"metadata": {}}}
    assert seen_tokens == [TOKEN] * 3


def test_an_attempt_without_an_answer_is_reported_without_a_status():
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    attempts: list[Attempt] = []
    with pytest.raises(sf.TransportError) as caught:
        _wire(handler, max_tries=2).send(METADATA, PARAMS, report=attempts.append)
    assert caught.value.attempts == 2
    assert [(a.status, a.cost) for a in attempts] == [(None, 0), (None, 0)]


def test_error_codes_map_to_the_hierarchy_and_messages_never_hold_the_token():
    body = {"error": {"code": "NotEnoughCreditsError", "message": f"token {TOKEN} has no credits"}}

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(403, json=body)

    with pytest.raises(sf.NotEnoughCreditsError) as caught:
        _wire(handler).send(METADATA, PARAMS, report=lambda attempt: None)
    assert caught.value.status == 403 and caught.value.code == "NotEnoughCreditsError"
    assert TOKEN not in str(caught.value) and "***" in str(caught.value)


def test_no_frame_of_a_traceback_holds_the_token():
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    wire = _wire(handler, max_tries=1)
    try:
        wire.send(METADATA, PARAMS, report=lambda attempt: None)
    except sf.TransportError:
        tb = sys.exc_info()[2]
    shown = []
    while tb is not None:
        for value in tb.tb_frame.f_locals.values():
            shown.append(repr(value))
            if isinstance(value, dict):
                shown.extend(repr(v) for v in value.values())
        tb = tb.tb_next
    assert shown and not any(TOKEN in text for text in shown)
    assert TOKEN not in repr(wire) and TOKEN not in repr(vars(wire))


def test_spent_is_the_sum_of_the_ledger_and_the_budget_counts_what_is_in_flight():
    credits = Credits(100, clock=lambda: NOW)
    first = credits.reserve("metadata", 60)
    with pytest.raises(sf.BudgetExceededError) as caught:
        credits.reserve("metadata", 41)
    assert caught.value.reserved == 60 and caught.value.spent == 0
    rows = []
    credits.watch(rows.append)
    first.attempt(Attempt("metadata", PARAMS, 503, 2, 2, 1, 0.1))
    first.attempt(Attempt("metadata", PARAMS, None, 0, 0, 2, 0.1, "timed out"))
    first.attempt(Attempt("metadata", PARAMS, 200, 11, 12, 3, 0.1))
    assert rows == [] and credits.spent == 0  # watchers hear of a request once its credits count
    first.settle()
    assert credits.spent == 13 == credits.ledger["cost"].sum() and credits.reserved == 0
    # every attempt is a row; one that got no answer has status None and costs nothing
    assert [row["status"] for row in rows] == [503, None, 200] and credits.ledger.height == 3
    credits.reserve("metadata", 87).settle()  # 13 + 87 = 100: just within the budget
    credits.record_hit("metadata", PARAMS, saved=11)
    assert credits.saved == 11 and credits.ledger["from_cache"].to_list() == [False, False, False, True]


class _Recording:
    """A limiter that writes down when its slot is taken and released, beside what the transport does."""

    limit, window, waited = 100, 1.0, 0.0

    def __init__(self, events: list[str]):
        self.events = events

    def acquire(self) -> None:
        self.events.append("slot taken")

    def release(self) -> None:
        self.events.append("slot released")

    def slot(self):  # pragma: no cover - the wire takes and releases in two steps
        raise AssertionError("the wire releases the slot when the headers arrive, not after the body")


class _SlowBody(httpx.SyncByteStream):
    """A body that the transport sends only when it is read (after the headers came)."""

    def __init__(self, body: bytes, events: list[str]):
        self.body, self.events = body, events

    def __iter__(self):
        self.events.append("body read")
        yield self.body


def test_a_slot_is_dated_when_the_headers_arrive_not_when_the_body_is_read():
    events: list[str] = []
    body = _envelope({"284882215": {"metadata": {}}}, cost=11)

    def handler(request: httpx.Request) -> httpx.Response:
        events.append("sent")
        return httpx.Response(200, headers={"content-length": str(len(body))}, stream=_SlowBody(body, events))

    wire = _wire(handler)
    wire.limiter = _Recording(events)
    response = wire.send(METADATA, PARAMS, report=lambda attempt: None)
    assert response.result == {"284882215": {"metadata": {}}} and response.cost == 11
    # the service counted the request before it sent a header: the slot is free to date from then
    assert events == ["slot taken", "sent", "slot released", "body read"]


def test_a_slot_is_released_once_when_no_answer_came_and_never_taken_for_a_url_that_cannot_be_sent():
    events: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        events.append("sent")
        raise httpx.ConnectError("refused", request=request)

    wire = _wire(handler, max_tries=2)
    wire.limiter = _Recording(events)
    with pytest.raises(sf.TransportError):
        wire.send(METADATA, PARAMS, report=lambda attempt: None)
    assert events == ["slot taken", "sent", "slot released"] * 2
    events.clear()
    with pytest.raises(sf.InvalidParameterError) as caught:
        wire.send(METADATA, {**PARAMS, "country": "x" * 70_000}, report=lambda attempt: None)  # too long a URL
    assert caught.value.parameter == "params" and events == []
