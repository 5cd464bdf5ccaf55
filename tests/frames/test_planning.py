"""Cells, request planning, merging parts of an answer, and freshness: pure functions."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

import storeframes as sf
from storeframes.catalog import ENDPOINTS, Freshness, validate
from storeframes.planning import cells_of, merge_result, requests_for, scope_of

D = date(2026, 10, 1)


def day(n: int) -> date:
    return D + timedelta(days=n)


def test_cells_of_each_kind_of_endpoint():
    changes = validate("changes", apps="2,1", start_date=day(0), end_date=day(2))
    assert len(cells_of(ENDPOINTS["changes"], changes)) == 6
    assert cells_of(ENDPOINTS["metrics"], validate("metrics", apps="1", metrics="ratings,power")) == [
        ("1", "app-power", None),
        ("1", "ratings", None),
    ]
    assert cells_of(ENDPOINTS["search"], validate("search", keyword="maps")) == [("maps", None, None)]
    bench = validate("benchmarks", start_date=day(0), end_date=day(9))
    assert cells_of(ENDPOINTS["benchmarks"], bench) == [(None, None, None)]
    assert "2026-10-10" in scope_of(ENDPOINTS["benchmarks"], bench)  # a range is its own key


def test_scope_leaves_out_the_cells_but_keeps_everything_else():
    a = validate("changes", apps="1", start_date=day(0), end_date=day(5), country="DE", language="de")
    b = validate("changes", apps="2,3", start_date=day(3), end_date=day(9), country="de", language="de")
    assert scope_of(ENDPOINTS["changes"], a) == scope_of(ENDPOINTS["changes"], b)
    c = validate("changes", apps="1", start_date=day(0), end_date=day(5), country="de")
    assert scope_of(ENDPOINTS["changes"], a) != scope_of(ENDPOINTS["changes"], c)  # default language differs


def test_nothing_missing_means_no_request():
    call = validate("metadata", apps="1,2")
    assert requests_for(ENDPOINTS["metadata"], call, []) == []


def test_missing_days_become_runs_and_apps_with_the_same_run_share_a_request():
    ep = ENDPOINTS["changes"]
    apps = [str(n) for n in range(1, 8)]
    call = validate("changes", apps=apps, start_date=day(0), end_date=day(9))
    missing = [(a, None, day(n)) for a in apps for n in (0, 1, 2, 7, 8, 9)]  # days 3..6 cached for all
    missing += [("7", None, day(5))]  # and one more day for app 7
    requests = requests_for(ep, call, missing)
    summary = sorted((r["apps"], r["start_date"], r["end_date"]) for r in requests)
    assert summary == sorted(
        [
            ("1,2,3,4,5", "2026-10-01", "2026-10-03"),
            ("6,7", "2026-10-01", "2026-10-03"),
            ("1,2,3,4,5", "2026-10-08", "2026-10-10"),
            ("6,7", "2026-10-08", "2026-10-10"),
            ("7", "2026-10-06", "2026-10-06"),
        ]
    )
    assert all(list(r) == list(call) for r in requests)  # canonical order of parameters


def test_a_keyword_history_is_one_request_per_run():
    ep = ENDPOINTS["search_history"]
    call = validate("search_history", keyword="maps", start_date=day(0), end_date=day(9))
    missing = [("maps", None, day(n)) for n in (0, 1, 4, 5, 6, 9)]
    assert [(r["start_date"], r["end_date"]) for r in requests_for(ep, call, missing)] == [
        ("2026-10-01", "2026-10-02"),
        ("2026-10-05", "2026-10-07"),
        ("2026-10-10", "2026-10-10"),
    ]


def test_merge_keeps_only_each_parts_days_of_change_records():
    ep = ENDPOINTS["changes"]
    old = {"1": {"changes": [{"date": "2026-10-01", "target": "icon"}, {"date": "2026-10-05", "target": "size"}]}}
    new = {"1": {"changes": [{"date": "2026-10-05", "target": "size"}, {"date": "2026-10-09", "target": "title"}]}}
    parts = [
        (old, {("1", None, day(n)) for n in range(0, 4)}, False),  # the old answer serves days 0..3
        (new, {("1", None, day(n)) for n in range(4, 9)}, False),  # the new one 4..8 (the 10-05 record once)
    ]
    merged = merge_result(ep, parts)
    assert [c["date"] for c in merged["1"]["changes"]] == ["2026-10-01", "2026-10-05", "2026-10-09"]


def test_merge_reports_a_change_record_without_a_date():
    ep = ENDPOINTS["changes"]
    bad = {"1": {"changes": [{"target": "icon"}]}}
    with pytest.raises(sf.ResponseShapeError) as caught:
        merge_result(ep, [(bad, {("1", None, day(0))}, False), (bad, {("1", None, day(1))}, False)])
    assert caught.value.path == "result.1.changes[0].date"


@pytest.mark.parametrize(
    "form",
    [
        lambda days: {d: [f"id{d[-2:]}"] for d in days},
        lambda days: [{"date": d, "value": [f"id{d[-2:]}"]} for d in days],
        lambda days: {"maps": {d: [f"id{d[-2:]}"] for d in days}},
        lambda days: {"maps": [{"date": d, "value": [f"id{d[-2:]}"]} for d in days]},
    ],
    ids=["by-date", "list", "keyword-by-date", "keyword-list"],
)
def test_merge_of_history_parts_in_every_known_form(form):
    ep = ENDPOINTS["search_history"]
    first = form(["2026-10-01", "2026-10-02", "2026-10-03"])
    second = form(["2026-10-03", "2026-10-04"])
    parts = [
        (second, {("maps", None, day(n)) for n in (2, 3)}, True),
        (first, {("maps", None, day(n)) for n in (0, 1)}, False),
    ]
    assert merge_result(ep, parts) == form(["2026-10-01", "2026-10-02", "2026-10-03", "2026-10-04"])


def test_merge_of_history_refuses_an_unknown_form():
    ep = ENDPOINTS["search_history"]
    parts = [("not a history", {("maps", None, day(0))}, False), ({}, {("maps", None, day(1))}, False)]
    with pytest.raises(sf.ResponseShapeError, match="keyed by date"):
        merge_result(ep, parts)


def test_merge_of_metrics_takes_each_parts_metrics_and_the_power_alias():
    ep = ENDPOINTS["metrics"]
    a = {"1": {"downloads": {"value": 5}, "ratings": {"value": 1}}}
    b = {"1": {"power": {"value": 9}, "downloads": {"value": 6}}}
    merged = merge_result(
        ep, [(a, {("1", "downloads", None), ("1", "ratings", None)}, True), (b, {("1", "app-power", None)}, False)]
    )
    assert merged == {"1": {"downloads": {"value": 5}, "ratings": {"value": 1}, "power": {"value": 9}}}


NOON = datetime(2026, 11, 20, 12, tzinfo=UTC)


def test_freshness_of_current_answers():
    daily = Freshness(current="utc_day")
    assert daily.is_fresh(NOON, None, now=NOON + timedelta(hours=11, minutes=59))
    assert not daily.is_fresh(NOON, None, now=NOON + timedelta(hours=12, minutes=1))
    hourly = Freshness(current=timedelta(hours=1))
    assert hourly.is_fresh(NOON, None, now=NOON + timedelta(minutes=59))
    assert not hourly.is_fresh(NOON, None, now=NOON + timedelta(minutes=61))


def test_freshness_of_history_days():
    policy = Freshness(settle_days=2, recent=timedelta(hours=6))
    settled, recent = date(2026, 11, 18), date(2026, 11, 19)
    assert policy.is_final(NOON, settled) and not policy.is_final(NOON, recent)
    years_later = NOON + timedelta(days=900)
    assert policy.is_fresh(NOON, settled, now=years_later)
    assert policy.is_fresh(NOON, recent, now=NOON + timedelta(hours=5)) is True
    assert policy.is_fresh(NOON, recent, now=NOON + timedelta(hours=7)) is False


@pytest.mark.parametrize(
    "kwargs", [{"current": "weekly"}, {"settle_days": -1}, {"recent": 6}], ids=["current", "settle", "recent"]
)
def test_freshness_refuses_bad_settings(kwargs):
    with pytest.raises(ValueError, match="Freshness"):
        Freshness(**kwargs)


def test_every_endpoint_has_a_freshness_policy():
    assert {name: ep.freshness for name, ep in ENDPOINTS.items()} == dict(sf.catalog.DEFAULT_FRESHNESS)
