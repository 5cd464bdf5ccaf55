"""The engine on its own: plans, parts, hits and answers over an in-memory cache.

No sandbox, no threads, no files: responses are built by hand and kept in a Cache over a
MemoryStore, and the clock is a fixed datetime.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from storeframes import engine, planning
from storeframes.answers import Response
from storeframes.cache import Cache
from storeframes.catalog import ENDPOINTS, validate
from storeframes.store import MemoryStore

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
TODAY = NOW.date()
SERVICE = "service"


def _changes_result(apps: list[str], start: date, end: date) -> dict:
    """One change record per app per day."""
    days = [(start + timedelta(days=n)).isoformat() for n in range((end - start).days + 1)]
    return {
        app: {"changes": [{"target": "size", "old_value": 1, "new_value": 2, "date": d, "version": ""} for d in days]}
        for app in apps
    }


def _keep(cache: Cache, endpoint: str, params: dict[str, str], result, *, cost: int, at: datetime = NOW) -> None:
    ep = ENDPOINTS[endpoint]
    response = Response(endpoint, params, result, cost, cost, 200, at)
    cache.store(
        response,
        service=SERVICE,
        scope=planning.scope_of(ep, params),
        cells=planning.cells_of(ep, params),
    )


@pytest.fixture
def cache() -> Cache:
    return Cache(MemoryStore())


def _plan(cache: Cache | None, endpoint: str, refresh="auto", **args) -> engine.CallPlan:
    ep = ENDPOINTS[endpoint]
    params = validate(ep, args, today=TODAY)
    if cache is not None:
        cache.sync(endpoint)
    return engine.plan_call(ep, params, cache, service=SERVICE, now=NOW, refresh=refresh)


def _pool(endpoint: str, *responses: Response, refused=(), paid: bool = True) -> engine.Pool:
    pool = engine.Pool(ENDPOINTS[endpoint])
    pool.add((list(responses), list(refused)), paid=paid)
    return pool


def test_with_nothing_cached_the_plan_packs_apps_five_to_a_request():
    plan = _plan(None, "metadata", apps=[str(n) for n in range(1, 13)])
    assert len(plan.cells) == 12 and plan.cached == {}
    assert [r["apps"].count(",") + 1 for r in plan.requests] == [5, 5, 2]
    assert all(r["country"] == "us" and r["device"] == "iphone" for r in plan.requests)


def test_a_longer_range_plans_only_the_missing_days(cache):
    _keep(
        cache,
        "changes",
        validate("changes", apps="1", start_date="2026-10-10", end_date="2026-10-20", today=TODAY),
        _changes_result(["1"], date(2026, 10, 10), date(2026, 10, 20)),
        cost=21,
    )
    plan = _plan(cache, "changes", apps=["1", "2"], start_date="2026-10-01", end_date="2026-10-31")
    assert len(plan.cells) == 62 and len(plan.cached) == 11
    assert sorted((r["apps"], r["start_date"], r["end_date"]) for r in plan.requests) == [
        ("1", "2026-10-01", "2026-10-09"),
        ("1", "2026-10-21", "2026-10-31"),
        ("2", "2026-10-01", "2026-10-31"),
    ]


def test_refresh_always_plans_everything_and_never_plans_nothing(cache):
    params = validate("metadata", apps="1", today=TODAY)
    _keep(cache, "metadata", params, {"1": {"metadata": {"title": "One"}}}, cost=11, at=NOW - timedelta(days=3))
    assert len(_plan(cache, "metadata", apps="1").requests) == 1  # stale: fetched three days ago
    assert _plan(cache, "metadata", "never", apps="1").requests == []
    assert len(_plan(cache, "metadata", "always", apps="1").requests) == 1


def test_parts_and_hits_say_which_entry_gives_which_cells_and_what_it_saved(cache):
    cached = validate("changes", apps="1,2", start_date="2026-10-01", end_date="2026-10-10", today=TODAY)
    _keep(cache, "changes", cached, _changes_result(["1", "2"], date(2026, 10, 1), date(2026, 10, 10)), cost=40)
    plan = _plan(cache, "changes", apps=["1"], start_date="2026-10-06", end_date="2026-10-12")
    assert [(r["start_date"], r["end_date"]) for r in plan.requests] == [("2026-10-11", "2026-10-12")]
    fetched_params = plan.requests[0]
    fetched = Response(
        "changes", fetched_params, _changes_result(["1"], date(2026, 10, 11), date(2026, 10, 12)), 13, 13, 200, NOW
    )
    parts, unavailable, hits = engine.parts_of(ENDPOINTS["changes"], plan, _pool("changes", fetched))
    assert unavailable == ()
    cached_part, fetched_part = parts
    assert cached_part.response is None and cached_part.entry is not None and not cached_part.whole
    assert len(cached_part.cells) == 5 and cached_part.saved == 10  # 5 of the entry's 20 cells, 40 credits
    assert fetched_part.response is fetched and fetched_part.whole and fetched_part.saved == 0
    assert hits == [engine.Hit("changes", cached, 10)]


def test_compose_merges_the_parts_keeping_only_their_days(cache):
    cached = validate("changes", apps="1", start_date="2026-10-01", end_date="2026-10-10", today=TODAY)
    _keep(cache, "changes", cached, _changes_result(["1"], date(2026, 10, 1), date(2026, 10, 10)), cost=20)
    ep = ENDPOINTS["changes"]
    plan = _plan(cache, "changes", apps=["1"], start_date="2026-10-08", end_date="2026-10-11")
    loaded = {e.id: cache.load(e) for e in plan.entries().values()}
    request = plan.requests[0]
    fresh = Response(
        "changes", request, _changes_result(["1"], date(2026, 10, 11), date(2026, 10, 11)), 11, 11, 200, NOW
    )
    parts, unavailable, _ = engine.parts_of(ep, plan, _pool("changes", fresh), loaded=loaded)
    answer = engine.compose(ep, plan.params, parts, unavailable)
    days = [record["date"] for record in answer.result["1"]["changes"]]
    assert days == ["2026-10-08", "2026-10-09", "2026-10-10", "2026-10-11"]
    assert answer.cost == 11 and answer.saved == 6 and len(answer.responses) == 2


def test_an_app_remembered_as_unavailable_is_named_and_not_planned(cache):
    ep = ENDPOINTS["metadata"]
    gone = validate("metadata", apps="2", today=TODAY)
    cache.store(
        Response("metadata", gone, None, 0, 0, 422, NOW),
        service=SERVICE,
        scope=planning.scope_of(ep, gone),
        cells=planning.cells_of(ep, gone),
        available=False,
    )
    plan = _plan(cache, "metadata", apps=["1", "2"])
    assert [r["apps"] for r in plan.requests] == ["1"]
    answered = Response("metadata", plan.requests[0], {"1": {"metadata": {}}}, 11, 11, 200, NOW)
    _, unavailable, hits = engine.parts_of(ep, plan, _pool("metadata", answered))
    assert unavailable == ("2",) and hits == []


def test_halves_split_the_apps_of_a_request_and_stop_at_one():
    ep = ENDPOINTS["metadata"]
    params = validate(ep, apps="1,2,3,4,5", today=TODAY)
    assert [h["apps"] for h in engine.halves(ep, params)] == ["1,2", "3,4,5"]
    assert engine.halves(ep, {**params, "apps": "1"}) == []
    assert engine.halves(ENDPOINTS["search"], validate("search", keyword="maps", today=TODAY)) == []


def test_the_plan_summary_counts_each_request_once_and_prices_cached_cells(cache):
    ep = ENDPOINTS["metadata"]
    cached = validate("metadata", apps="1,2", today=TODAY)
    _keep(cache, "metadata", cached, {"1": {"metadata": {}}, "2": {"metadata": {}}}, cost=21)
    plans = [_plan(cache, "metadata", apps=["1", "3"]), _plan(cache, "metadata", apps=["3", "1"])]
    summary = engine.summarize(ep, plans)
    assert summary.to_send == 1 and summary.estimate == 11
    assert summary.cells == 4 and summary.cached_cells == 2
    assert summary.saved == 21  # cell "1" of the entry, used by both calls: 2 of its 2 cells
    assert summary.requests.filter(summary.requests["source"] == "send")["params"].to_list() == [
        engine.key({**cached, "apps": "3"})
    ]


def test_overlapping_calls_are_planned_over_the_union_of_their_missing_cells(cache):
    ep = ENDPOINTS["metadata"]
    _keep(cache, "metadata", validate("metadata", apps="9", today=TODAY), {"9": {"metadata": {}}}, cost=11)
    plans = [_plan(cache, "metadata", apps=apps) for apps in (["1"], ["1"], ["1", "2"], ["9", "3"])]
    missing = engine.missing(ep, plans)
    assert [cell[0] for cells in missing.values() for cell in cells] == ["1", "2", "3"]
    requests = engine.requests_over(ep, plans, missing)
    assert [r["apps"] for r in requests] == ["1,2,3"]  # one request, not four
    assert engine.summarize(ep, plans).to_send == 1
    names = engine.lease_names(ep, SERVICE, missing)
    assert len(names) == 3 and all(name.startswith("metadata|service|") for name in names)
    assert engine.request_leases(ep, SERVICE, requests[0]) == list(names)


def test_days_of_one_keyword_from_several_calls_become_one_run_per_gap():
    ep = ENDPOINTS["search_history"]
    plans = [
        _plan(None, "search_history", keyword="maps", start_date="2026-10-01", end_date="2026-10-05"),
        _plan(None, "search_history", keyword="maps", start_date="2026-10-04", end_date="2026-10-09"),
        _plan(None, "search_history", keyword="notes", start_date="2026-10-01", end_date="2026-10-02"),
    ]
    requests = engine.requests_over(ep, plans, engine.missing(ep, plans))
    assert [(r["keyword"], r["start_date"], r["end_date"]) for r in requests] == [
        ("maps", "2026-10-01", "2026-10-09"),
        ("notes", "2026-10-01", "2026-10-02"),
    ]


def test_a_response_shared_by_calls_is_charged_once_and_a_borrowed_one_is_a_hit():
    ep = ENDPOINTS["metadata"]
    plans = [_plan(None, "metadata", apps=apps) for apps in (["1"], ["1", "2"])]
    request = engine.requests_over(ep, plans, engine.missing(ep, plans))[0]
    response = Response("metadata", request, {"1": {"metadata": {}}, "2": {"metadata": {}}}, 21, 21, 200, NOW)
    counted: set[int] = set()
    answers = []
    for plan in plans:
        parts, _, hits = engine.parts_of(ep, plan, _pool("metadata", response), counted=counted)
        assert hits == []
        answers.append(engine.compose(ep, plan.params, parts, ()))
    assert [a.cost for a in answers] == [21, 0] and sum(a.cost for a in answers) == 21
    assert set(answers[1].result) == {"1", "2"} and set(answers[0].result) == {"1"}

    parts, _, hits = engine.parts_of(ep, plans[0], _pool("metadata", response, paid=False))
    answer = engine.compose(ep, plans[0].params, parts, ())
    assert answer.cost == 0 and answer.saved == 10 == hits[0].saved  # 1 of the response's 2 cells
    assert hits[0].params == request


def test_an_app_a_request_found_refused_is_unavailable_in_its_scope_only():
    ep = ENDPOINTS["metadata"]
    us = _plan(None, "metadata", apps=["1"])
    gb = _plan(None, "metadata", apps=["1"], country="gb")
    pool = _pool("metadata", refused=[(us.requests[0], "1")])
    assert engine.parts_of(ep, us, pool)[1] == ("1",)
    assert engine.missing(ep, [us, gb], pool) == {planning.scope_of(ep, gb.params): {("1", None, None): None}}
    with pytest.raises(LookupError):
        engine.parts_of(ep, gb, pool)


def test_requests_that_share_an_app_fall_in_one_lease_group():
    ep = ENDPOINTS["changes"]
    requests = [
        {"apps": "1,2", "country": "us", "device": "iphone", "start_date": "2026-10-01", "end_date": "2026-10-05"},
        {"apps": "3", "country": "us", "device": "iphone", "start_date": "2026-10-01", "end_date": "2026-10-09"},
        {"apps": "2,4", "country": "us", "device": "iphone", "start_date": "2026-10-08", "end_date": "2026-10-09"},
    ]
    groups = engine.lease_groups(ep, SERVICE, requests)
    assert [[r["apps"] for r in group] for _, group in groups] == [["3"], ["1,2", "2,4"]]
    assert [sorted(name.rpartition("|")[2] for name in names) for names, _ in groups] == [["3"], ["1", "2", "4"]]
