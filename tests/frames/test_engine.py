"""The engine on its own: plans, parts, hits and answers over an in-memory cache.

No sandbox, no threads, no files: responses are built by hand and kept in a Cache over a
MemoryStore, and the clock is a fixed datetime.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, timedelta

import pytest

import storeframes.cache
from storeframes import engine, planning
from storeframes.answers import CLOCK_SKEW, Entry, Response
from storeframes.cache import Cache
from storeframes.cache.stores import MemoryStore
from storeframes.catalog import ENDPOINTS, validate

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


def _keep(
    cache: Cache, endpoint: str, params: dict[str, str], result, *, cost: int, at: datetime = NOW
) -> Entry | None:
    ep = ENDPOINTS[endpoint]
    response = Response(endpoint, params, result, cost, cost, 200, at)
    return cache.store(
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


# -- freshness: which entry the cache holds may serve a cell --------------------------------------

METADATA = {"apps": "284882215,310633997", "country": "us", "language": "en", "device": "iphone"}
SEARCH = {"keyword": "photo editor", "country": "us", "language": "en", "device": "iphone"}


def _served(index: engine.Index, endpoint: str, params: dict[str, str], now: datetime, refresh="auto") -> dict:
    """What the engine serves of ``params`` from ``index`` at ``now``."""
    ep = ENDPOINTS[endpoint]
    held = index.newest(ep, service=SERVICE, scope=planning.scope_of(ep, params), cells=planning.cells_of(ep, params))
    return engine.serving(ep, held, now=now, refresh=refresh)


def _history(start: date, end: date) -> dict[str, str]:
    return {**SEARCH, "start_date": start.isoformat(), "end_date": end.isoformat()}


def _entry(endpoint: str, params: dict[str, str], *, at: datetime, available: bool = True) -> Entry:
    ep = ENDPOINTS[endpoint]
    cells = frozenset(planning.cells_of(ep, params))
    scope = planning.scope_of(ep, params)
    return Entry(f"{endpoint}-{at:%H%M%S%f}", endpoint, SERVICE, scope, params, at, 10, 10, cells, available)


class _Held:
    """An index of a few entries, as the cache's is: which entries hold each cell, newest first."""

    def __init__(self, *entries: Entry):
        self.entries = sorted(entries, key=lambda e: e.fetched_at, reverse=True)
        self.asked = 0

    def candidates(self, ep, *, service, scope, cells, sync=True):
        self.asked += 1
        found = {}
        for cell in cells:
            held = [e for e in self.entries if e.endpoint == ep.name and e.scope == scope and cell in e.cells]
            if held:
                found[cell] = held
        return found

    def newest(self, ep, *, service, scope, cells, sync=True):
        return {cell: held[0] for cell, held in self.candidates(ep, service=service, scope=scope, cells=cells).items()}


def test_a_current_answer_is_fresh_on_its_utc_day_and_stale_the_next(cache):
    entry = _keep(cache, "metadata", METADATA, {}, cost=21, at=NOW)
    last_minute = datetime(2026, 11, 20, 23, 59, tzinfo=UTC)
    next_day = datetime(2026, 11, 21, 0, 1, tzinfo=UTC)
    assert len(_served(cache, "metadata", METADATA, last_minute)) == 2
    assert _served(cache, "metadata", METADATA, next_day) == {}
    # "never" serves what is stale, "always" nothing at all
    assert list(_served(cache, "metadata", METADATA, next_day, refresh="never").values()) == [entry, entry]
    assert _served(cache, "metadata", METADATA, NOW, refresh="always") == {}


def test_a_final_history_day_is_never_stale_a_recent_one_is(cache):
    final = _history(date(2026, 10, 1), date(2026, 10, 10))
    recent = _history(date(2026, 11, 18), date(2026, 11, 19))  # 1 and 2 days before the fetch
    _keep(cache, "search_history", final, {}, cost=21, at=NOW)
    _keep(cache, "search_history", recent, {}, cost=21, at=NOW)
    years_later = NOW + timedelta(days=3 * 365)
    assert len(_served(cache, "search_history", final, years_later)) == 10
    # the day two days before the fetch was final; the day before was fresh for an hour
    assert len(_served(cache, "search_history", recent, NOW + timedelta(minutes=59))) == 2
    later = _served(cache, "search_history", recent, NOW + timedelta(hours=2))
    assert [cell[2] for cell in later] == [date(2026, 11, 18)]


def test_the_newest_entry_is_judged_and_served_while_fresh():
    old = _entry("metadata", METADATA, at=NOW - timedelta(days=2))
    new = _entry("metadata", METADATA, at=NOW - timedelta(hours=1))
    index = _Held(old, new)
    cells = planning.cells_of(ENDPOINTS["metadata"], METADATA)
    assert _served(index, "metadata", METADATA, NOW) == {cell: new for cell in cells}
    assert engine.is_fresh(ENDPOINTS["metadata"], new, cells[0], NOW)
    assert not engine.is_fresh(ENDPOINTS["metadata"], old, cells[0], NOW)


def test_a_stale_answer_is_not_served_unless_refresh_is_never():
    stale = _entry("metadata", METADATA, at=NOW - timedelta(days=1))
    index = _Held(stale)
    cells = planning.cells_of(ENDPOINTS["metadata"], METADATA)
    assert _served(index, "metadata", METADATA, NOW) == {}
    assert _served(index, "metadata", METADATA, NOW, refresh="never") == {cell: stale for cell in cells}
    plan = engine.plan_call(ENDPOINTS["metadata"], METADATA, index, service=SERVICE, now=NOW, refresh="auto")
    assert plan.cached == {} and plan.requests == [METADATA]


def test_refresh_always_serves_nothing_and_does_not_ask_the_index():
    fresh = _entry("metadata", METADATA, at=NOW)
    index = _Held(fresh)
    assert _served(index, "metadata", METADATA, NOW, refresh="always") == {}
    plan = engine.plan_call(ENDPOINTS["metadata"], METADATA, index, service=SERVICE, now=NOW, refresh="always")
    assert plan.cached == {} and plan.requests == [METADATA] and index.asked == 1  # only _served asked it
    never = engine.plan_call(ENDPOINTS["metadata"], METADATA, index, service=SERVICE, now=NOW, refresh="never")
    assert len(never.cached) == 2 and never.requests == [] and index.asked == 2


def test_an_answer_fetched_beyond_the_clock_skew_is_stale_however_fresh_it_looks():
    ep = ENDPOINTS["metadata"]
    cell = planning.cells_of(ep, METADATA)[0]
    assert engine.CLOCK_SKEW is CLOCK_SKEW is storeframes.cache.CLOCK_SKEW  # still offered where it was
    assert timedelta(seconds=60) == CLOCK_SKEW  # the bucket leases' CLOCK_MARGIN
    assert engine.is_fresh(ep, _entry("metadata", METADATA, at=NOW + timedelta(seconds=3)), cell, NOW)
    assert engine.is_fresh(ep, _entry("metadata", METADATA, at=NOW + CLOCK_SKEW), cell, NOW)
    beyond = _entry("metadata", METADATA, at=NOW + CLOCK_SKEW + timedelta(microseconds=1))
    assert not engine.is_fresh(ep, beyond, cell, NOW)
    ahead = _entry("metadata", METADATA, at=NOW + timedelta(days=1))  # a colleague's clock a day ahead
    assert _served(_Held(ahead), "metadata", METADATA, NOW) == {}
    assert len(_served(_Held(ahead), "metadata", METADATA, NOW, refresh="never")) == 2
    # a recent day of history fetched "in the future" would look final for ever: stale instead
    yesterday = TODAY - timedelta(days=1)
    history = _history(yesterday, yesterday)
    later = _entry("search_history", history, at=NOW + timedelta(days=5))
    assert _served(_Held(later), "search_history", history, NOW) == {}
    assert _served(_Held(later), "search_history", history, NOW + timedelta(days=5)) != {}


def test_an_unavailable_answer_is_fresh_for_its_utc_day_whatever_the_endpoint_says():
    ep = ENDPOINTS["changes"]
    params = validate(ep, apps="1", start_date="2026-10-01", end_date="2026-10-02", today=TODAY)
    refused = _entry("changes", params, at=NOW, available=False)
    cell = planning.cells_of(ep, params)[0]
    assert engine.UNAVAILABLE_FRESHNESS.current == "utc_day"
    assert engine.is_fresh(ep, refused, cell, datetime(2026, 11, 20, 23, 59, tzinfo=UTC))
    # its days are final by the endpoint's freshness, yet the app is asked again the next UTC day
    assert not engine.is_fresh(ep, refused, cell, datetime(2026, 11, 21, 0, 1, tzinfo=UTC))
    available = _entry("changes", params, at=NOW)
    assert engine.is_fresh(ep, available, cell, datetime(2026, 11, 21, 0, 1, tzinfo=UTC))
    served = _served(_Held(refused), "changes", params, NOW + timedelta(hours=1))
    assert len(served) == 2 and not next(iter(served.values())).available


@pytest.mark.parametrize("hours_after", [0.5, 0.7, 1.1, 30, 24 * 400])
def test_serving_judges_each_entry_once_as_the_policy_judges_each_day(hours_after):
    ep = ENDPOINTS["search_history"]
    at = datetime(2026, 11, 20, 23, 30, tzinfo=UTC)  # late in its UTC day: the settle days count from it
    whole = _entry("search_history", _history(date(2026, 11, 10), date(2026, 11, 19)), at=at)
    last = _entry("search_history", _history(date(2026, 11, 19), date(2026, 11, 20)), at=at - timedelta(minutes=20))
    newest = {cell: whole for cell in whole.cells} | {cell: last for cell in last.cells}
    now = at + timedelta(hours=hours_after)
    served = engine.serving(ep, newest, now=now, refresh="auto")
    policy = ep.freshness  # each day as the policy judges it, one by one
    assert served == {cell: e for cell, e in newest.items() if policy.is_fresh(e.fetched_at, cell[2], now=now)}
    assert served == {cell: e for cell, e in newest.items() if engine.is_fresh(ep, e, cell, now)}
    # both fetched on the 20th: up to the 18th final for ever; the 19th and 20th fresh for an hour after the fetch
    days = sorted(cell[2] for cell in served)
    assert policy.recent == timedelta(hours=1)
    end = date(2026, 11, 20) if hours_after < 2 / 3 else date(2026, 11, 18)
    assert days == [date(2026, 11, 10) + timedelta(n) for n in range((end - date(2026, 11, 10)).days + 1)]


def test_serving_of_many_entries_keeps_the_cells_is_fresh_keeps_in_their_order():
    """Entries fetched over two months, recent and old, available or not: what serving keeps is exactly the
    cells whose newest entry is_fresh says may serve them, whether every entry serves every cell it holds
    (no judgement per cell) or only some do."""
    ep = ENDPOINTS["changes"]
    changes = {"country": "us", "device": "iphone"}
    fetched = [NOW - timedelta(days=d, hours=h) for d, h in ((0, 1), (1, 0), (3, 5), (9, 0), (40, 2))]
    entries = [
        _entry(
            "changes",
            {**changes, "apps": f"{n},{n + 1}", "start_date": f"2026-{m:02}-01", "end_date": f"2026-{m:02}-28"},
            at=at,
            available=n != 4,
        )
        for n, at in enumerate(fetched)
        for m in (9, 10, 11)
    ]
    entries = [replace(e, id=f"{e.id}-{i}") for i, e in enumerate(entries)]
    for now in (NOW, NOW + timedelta(days=3), NOW + timedelta(days=60)):
        for chosen in (
            entries,
            entries[:3],
            entries[-3:],
            [e for e in entries if e.fetched_at > NOW - timedelta(days=2)],
        ):
            newest: dict = {}
            for entry in sorted(chosen, key=lambda e: e.fetched_at):
                newest.update(dict.fromkeys(sorted(entry.cells, key=str), entry))
            expected = {cell: e for cell, e in newest.items() if engine.is_fresh(ep, e, cell, now)}
            assert engine.serving(ep, newest, now=now, refresh="auto") == expected
            assert list(engine.serving(ep, newest, now=now, refresh="auto")) == list(expected)  # in order
    assert engine.serving(ep, {}, now=NOW, refresh="auto") == {}


def test_the_parts_of_a_plan_do_not_depend_on_the_order_its_cached_cells_were_found_in(cache):
    apps = [str(n) for n in range(1, 9)]
    for i in range(0, 8, 3):
        mine = apps[i : i + 3]
        params = {"apps": ",".join(mine), "country": "us", "device": "iphone"}
        _keep(cache, "changes", params | {"start_date": "2026-10-01", "end_date": "2026-10-20"}, {}, cost=9)
    plan = _plan(cache, "changes", apps=apps, start_date="2026-10-05", end_date="2026-10-20")
    assert not plan.missing and len(plan.cached) == len(plan.cells) == 8 * 16
    shuffled = replace(plan, cached=dict(sorted(plan.cached.items(), key=lambda item: str(item[0]), reverse=True)))
    pool = engine.Pool(ENDPOINTS["changes"])
    parts, unavailable, hits = engine.parts_of(ENDPOINTS["changes"], plan, pool)
    assert engine.parts_of(ENDPOINTS["changes"], shuffled, pool) == (parts, unavailable, hits)
    assert [sorted({c[0] for c in p.cells}) for p in parts] == [["1", "2", "3"], ["4", "5", "6"], ["7", "8"]]
    assert [p.whole for p in parts] == [False, False, False] and len(hits) == 3
