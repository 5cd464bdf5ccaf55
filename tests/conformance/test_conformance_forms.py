"""The forms the conformance kit compares with are the forms storeframes reads: every answer of the sandbox, in
each of its dialects, on every device, matches them with no difference and is named by its dialect; a value in
another form is a difference at its path, counted where it repeats."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from storeframes import catalog
from storeframes.conformance import Exchange, read
from storeframes.conformance.forms import RESULTS
from storeframes.conformance.shapes import Context, compare
from storeframes.sandbox import SANDBOX_KEY, Dialect, SandboxService

ALL_METRICS = "downloads,revenues,app-power,ratings,daily-ratings"


def ask(service: SandboxService, endpoint: str, **params: str) -> Exchange:
    path = catalog.API_PREFIX + catalog.ENDPOINTS[endpoint].path
    reply = service.handle("GET", path, list(params.items()), {"x-service-key": SANDBOX_KEY})
    return Exchange(endpoint, params, reply.status, dict(reply.headers), reply.body)


def calls(service: SandboxService) -> list[Exchange]:
    """Every endpoint on every device it has, many apps at once, ranges of many days."""
    world = service.world
    found = []
    for device in ("iphone", "ipad", "android"):
        store = "android" if device == "android" else "ios"
        ids = world.app_ids(store)
        for batch in (
            ids[0:5],
            ids[100:105],
            ids[300:305],
            list(world.EXAMPLE_IOS_APPS if store == "ios" else world.EXAMPLE_ANDROID_APPS)[:5],
        ):
            apps = ",".join(batch)
            found.append(ask(service, "metadata", apps=apps, device=device))
            found.append(
                ask(service, "changes", apps=apps, device=device, start_date="2026-06-01", end_date="2026-11-19")
            )
            found.append(ask(service, "metrics", apps=apps, device=device, metrics=ALL_METRICS))
        for keyword in ("photo editor", "recipes", "untracked keyword"):
            found.append(ask(service, "search", keyword=keyword, device=device))
            found.append(
                ask(
                    service,
                    "search_history",
                    keyword=keyword,
                    device=device,
                    start_date="2026-11-01",
                    end_date="2026-11-20",
                )
            )
            if device != "android":
                found.append(ask(service, "search_ads", keyword=keyword, device=device))
        if device != "ipad":
            for channel in ("all", "search"):
                found.append(ask(service, "benchmarks", device=device, channel=channel))
    return found


DIALECTS = [Dialect()] + [Dialect(**{f: v}) for f, values in Dialect.FORMS.items() for v in values[1:]]


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.code())
def test_every_sandbox_answer_matches_the_known_forms_in_every_dialect(dialect):
    service = SandboxService(today="2026-11-20", dialect=dialect, rate_limit=(10_000, 1.0))
    met: dict[str, set] = {}
    for exchange in calls(service):
        reading = read(exchange)
        assert reading.status == 200, (exchange.endpoint, exchange.params, reading.message)
        assert reading.differences == [], (exchange.endpoint, exchange.params, [d.line() for d in reading.differences])
        assert reading.frames and all(rows >= 0 for rows in reading.frames.values())
        for point, names in reading.forms.items():
            met.setdefault(point, set()).update(names)
    expected: Mapping[str, object] = {
        f: getattr(dialect, f) for f in ("search", "history", "keyword_level", "power", "categories")
    }
    for point, value in expected.items():
        assert met[point] == {value}, point


def test_a_sandbox_refusal_is_read_as_the_client_raises_it():
    service = SandboxService(today="2026-11-20")
    absent = read(ask(service, "metadata", apps="1", device="iphone"))
    assert (absent.status, absent.code, absent.error, absent.error_form, absent.differences) == (
        422,
        "AppNotAvailableError",
        "AppNotAvailableError",
        "error",
        [],
    )
    path = catalog.API_PREFIX + catalog.ENDPOINTS["search"].path
    reply = service.handle("GET", path, [("keyword", "maps")], {"x-service-key": "not-the-key"})
    refused = read(Exchange("search", {"keyword": "maps"}, reply.status, dict(reply.headers), reply.body))
    assert (refused.status, refused.error, refused.cost) == (401, "AuthenticationError", 0)


def test_a_difference_is_named_at_its_path_once_and_counted():
    result = {
        str(n): {"metadata": {"title": "Notes", "size": "12 MB", "rating": {"average": 4.5, "stars": 3}}}
        for n in range(3)
    }
    found = compare(result, RESULTS["metadata"], Context("ios"), "result")
    shown = [d.line() for d in found.differences]
    assert (
        'form at result.<app_id>.metadata.size: in none of the known forms of size: found text; known: number (a whole number); object (an object), e.g. "12 MB" (3 times)'
        in shown
    )
    assert (
        "unknown at result.<app_id>.metadata.rating.stars: a member storeframes does not know (a whole number), e.g. 3 (3 times)"
        in shown
    )
    assert "missing at result.<app_id>.metadata.subtitle: expected, not found (3 times)" in shown
    assert not any("short_description" in line for line in shown)  # an android member, not expected on iphone


def test_metrics_expected_are_the_metrics_asked_for():
    result = {"1": {"power": {"value": 50.0, "date": "2026-11-19"}}}
    asked = compare(result, RESULTS["metrics"], Context("ios", frozenset({"app-power", "ratings"})))
    assert [d.line() for d in asked.differences] == ["missing at result.<app_id>.ratings: expected, not found"]
    assert compare(result, RESULTS["metrics"], Context("ios", frozenset({"app-power"}))).differences == []


def test_an_answer_that_is_not_json_is_a_difference_not_a_crash():
    reading = read(Exchange("search", {"keyword": "maps"}, 200, {}, b"<html>busy</html>"))
    assert [d.kind for d in reading.differences] == ["envelope"] and reading.frames == {}
