"""A tracker's runs, replayed against the in-process sandbox: what is due, what is sent, what it costs."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

import storeframes as sf
from storeframes.cache import RUN_SCHEMA, open_cache
from storeframes.cli import main
from storeframes.sandbox import World
from storeframes.track import EXIT_CODES, Tracker

WORLD = World(0)
APPS = list(WORLD.EXAMPLE_IOS_APPS[:3])
KEYWORDS = list(WORLD.EXAMPLE_KEYWORDS[:3])
DAY = date(2026, 11, 2)


def _spec(tmp_path: Path, *, extra: str = "", items: str | None = None) -> Path:
    quoted = lambda values: "[" + ", ".join(f'"{v}"' for v in values) + "]"  # noqa: E731
    body = (
        items
        or f"""
[[track]]
endpoint = "search"
keywords = {quoted(KEYWORDS)}
countries = ["us", "gb"]

[[track]]
endpoint = "metadata"
apps = {quoted(APPS)}

[[track]]
endpoint = "metrics"
apps = {quoted(APPS[:2])}
metrics = ["downloads", "ratings"]
every = "7d"

[[track]]
endpoint = "search_history"
keywords = {quoted(KEYWORDS[:1])}
lookback = "10d"
"""
    )
    path = tmp_path / "tracking.toml"
    path.write_text(f'[tracker]\nname = "watch"\ncache_dir = "cache"\n{extra}\n{body}')
    return path


def _sent(tracker: Tracker) -> pl.DataFrame:
    """Every request the sandbox answered into the tracker's cache, from the ledger."""
    cache = open_cache(tracker.spec.cache_dir)
    return cache.ledger.read().filter(pl.col("attempt") > 0)


def test_a_run_fetches_every_item_and_a_rerun_the_same_day_sends_nothing(tmp_path):
    tracker = Tracker.from_toml(_spec(tmp_path), sandbox=True)
    first = tracker.run(DAY)
    assert first.status == "ok" and first.exit_code == 0
    assert first.items_due == 4
    # 3 keywords x 2 countries, 3 apps in one metadata request, 2 apps of metrics, 1 history request
    assert first.requests == 6 + 1 + 1 + 1
    assert first.credits_spent == _sent(tracker)["cost"].sum() > 0
    again = tracker.run(DAY)
    assert (again.status, again.requests, again.credits_spent, again.items_due) == ("ok", 0, 0, 0)
    log = tracker.runs()
    assert log.schema == RUN_SCHEMA
    assert log["status"].to_list() == ["ok", "ok"]
    assert log["requests"].to_list() == [9, 0]
    assert log["day"].to_list() == [DAY, DAY]
    assert log["ended_at"].null_count() == 0


def test_the_next_day_fetches_only_what_is_due(tmp_path):
    tracker = Tracker.from_toml(_spec(tmp_path), sandbox=True)
    tracker.run(DAY)
    before = _sent(tracker).height
    plan = tracker.plan(DAY + timedelta(days=1))
    due = dict(zip(plan.items["item"], plan.items["due"], strict=True))
    assert due == {"search": True, "metadata": True, "metrics": False, "search_history": True}  # metrics: every 7 days
    second = tracker.run(DAY + timedelta(days=1))
    assert second.requests == plan.requests == 6 + 1 + 1
    sent = _sent(tracker).slice(before)
    assert "metrics" not in sent["endpoint"].to_list()
    history = sent.filter(pl.col("endpoint") == "search_history")["params"].str.json_decode().struct.unnest()
    # the day that was not final when last fetched, to yesterday: not the 10 days of lookback again
    assert history["start_date"].to_list() == [str(DAY - timedelta(days=1))]
    assert history["end_date"].to_list() == [str(DAY)]
    assert second.cells_cached == 0  # it asks from the first day not final: no final day it holds is asked again
    week = tracker.plan(DAY + timedelta(days=7))
    assert week.items.filter(pl.col("item") == "metrics")["due"].item() is True


def test_a_budget_too_small_sends_nothing_and_says_over_budget(tmp_path):
    tracker = Tracker.from_toml(_spec(tmp_path, extra="budget_per_run = 5"), sandbox=True)
    result = tracker.run(DAY)
    assert result.status == "over_budget" and result.exit_code == EXIT_CODES["over_budget"] == 4
    assert result.requests == 0 and result.credits_spent == 0
    assert result.left_out == ("search", "metadata", "metrics", "search_history")
    assert _sent(tracker).is_empty()
    assert tracker.runs()["items_left_out"].to_list() == ["search,metadata,metrics,search_history"]


def test_items_that_do_not_fit_are_left_out_in_spec_order(tmp_path):
    tracker = Tracker.from_toml(_spec(tmp_path), sandbox=True)
    plan = tracker.plan(DAY)
    credits = dict(zip(plan.items["item"], plan.items["credits"], strict=True))
    budget = credits["search"] + credits["metadata"] + credits["search_history"]  # metrics does not fit
    tracker = Tracker.from_toml(_spec(tmp_path, extra=f"budget_per_run = {budget}"), sandbox=True)
    result = tracker.run(DAY)
    assert result.status == "over_budget" and result.left_out == ("metrics",)
    assert result.credits_spent <= budget
    assert sorted(set(_sent(tracker)["endpoint"])) == ["metadata", "search", "search_history"]


def test_the_month_budget_counts_what_the_token_spent_earlier_in_the_month(tmp_path):
    open_tracker = Tracker.from_toml(_spec(tmp_path), sandbox=True)
    spent = open_tracker.run(DAY).credits_spent  # no month budget yet
    budget = spent + 60  # the next day's search (60) fits, nothing else does
    tracker = Tracker.from_toml(_spec(tmp_path, extra=f"budget_per_month = {budget}"), sandbox=True)
    assert tracker.status(DAY).month_spent == spent
    result = tracker.run(DAY + timedelta(days=1))
    assert result.status == "over_budget"
    assert result.left_out == ("metadata", "search_history")
    assert result.month_spent == spent + result.credits_spent <= budget
    first_of_next_month = Tracker.from_toml(_spec(tmp_path, extra=f"budget_per_month = {budget}"), sandbox=True)
    assert first_of_next_month.status(date(2026, 12, 1)).month_spent == 0  # a new calendar month


def test_a_dry_run_sends_nothing_and_leaves_no_row(tmp_path):
    tracker = Tracker.from_toml(_spec(tmp_path), sandbox=True)
    result = tracker.run(DAY, dry_run=True)
    assert (result.kind, result.status, result.requests, result.items_due) == ("dry_run", "ok", 0, 4)
    assert _sent(tracker).is_empty() and tracker.runs().is_empty()


def test_a_run_left_running_is_marked_interrupted_by_the_next(tmp_path):
    tracker = Tracker.from_toml(_spec(tmp_path), sandbox=True)
    cache = open_cache(tracker.spec.cache_dir)
    killed = dict.fromkeys(RUN_SCHEMA) | {
        "run_id": "20261102-000000-dead00", "tracker": "watch", "kind": "run", "day": DAY, "status": "running",
        "started_at": datetime(2026, 11, 2, tzinfo=UTC), "requests": 0,
    }  # fmt: skip
    assert cache.runs.write(killed)
    result = tracker.run(DAY)
    assert result.status == "ok" and result.interrupted == ("20261102-000000-dead00",)
    log = tracker.runs()
    assert dict(zip(log["run_id"], log["status"], strict=True)) == {
        "20261102-000000-dead00": "interrupted",
        result.run_id: "ok",
    }
    assert "stopped before it ended" in log.filter(pl.col("status") == "interrupted")["errors"].item()


def test_backfill_fetches_thirty_days_of_history_once(tmp_path):
    tracker = Tracker.from_toml(_spec(tmp_path), sandbox=True)
    start = DAY - timedelta(days=30)
    with pytest.raises(sf.InvalidParameterError, match="cannot be backfilled"):
        tracker.backfill(start, items=["search"])
    result = tracker.backfill(start, DAY - timedelta(days=1))
    assert result.kind == "backfill" and result.status == "ok"
    days = set(sf.scan("search_history", tracker.spec.cache_dir, service="sandbox-0").collect()["date"])
    recorded = {  # the sandbox misses about 5 % of the days, as the service does
        start + timedelta(days=n)
        for n in range(30)
        if WORLD.search_history_day(
            KEYWORDS[0], device="iphone", country="us", language=WORLD.default_language("us"),
            day=start + timedelta(days=n),
        ) is not None
    }  # fmt: skip
    assert days == recorded and len(recorded) >= 25
    again = tracker.backfill(start, DAY - timedelta(days=1))
    assert again.requests <= 1  # only the days not yet final when they were fetched
    assert tracker.runs()["kind"].to_list() == ["backfill", "backfill"]


def test_a_run_whose_requests_fail_is_failed_with_the_errors_in_words(tmp_path):
    faults = sf.sandbox.Faults(server_error=1.0)
    tracker = Tracker.from_toml(_spec(tmp_path), sandbox=True, faults=faults, max_tries=1)
    result = tracker.run(DAY)
    assert result.status == "failed" and result.exit_code == 3
    assert len(result.errors) == 4 and all("ServerError" in e for e in result.errors)
    assert tracker.runs()["status"].to_list() == ["failed"]


def test_status_names_the_days_an_item_missed(tmp_path):
    tracker = Tracker.from_toml(_spec(tmp_path), sandbox=True)
    tracker.run(DAY)
    tracker.run(DAY + timedelta(days=3))  # two days missed
    status = tracker.status(DAY + timedelta(days=4))
    gaps = dict(zip(status.items["item"], status.items["gap_days"].to_list(), strict=True))
    assert gaps["search"] == [DAY + timedelta(days=1), DAY + timedelta(days=2)]
    assert gaps["metrics"] == []  # every 7 days: not due on those days
    assert gaps["search_history"] == []  # the run after the gap fetched the missed days
    lines = status.summary().splitlines()
    assert "  search: last 2026-11-05, due; 2 days missing: 2026-11-03..2026-11-04" in lines
    assert "  metrics: last 2026-11-02, up to date" in lines  # not due, and nothing missing
    assert not [line for line in lines if "up to date" in line and "missing" in line]
    assert status.missing == {"search": gaps["search"], "metadata": gaps["metadata"]} and status.exit_code == 3


def test_the_command_line_runs_plans_and_exits_with_the_runs_code(tmp_path, capsys):
    path = _spec(tmp_path)
    assert main(["track", "plan", str(path), "--sandbox", "--today", str(DAY)]) == 0
    assert "4 items due of 4, 9 requests to send" in capsys.readouterr().out
    assert main(["track", "run", str(path), "--sandbox", "--today", str(DAY)]) == 0
    assert "watch run on 2026-11-02: ok" in capsys.readouterr().out
    assert main(["track", "runs", str(path), "--sandbox"]) == 0
    assert " ok " in capsys.readouterr().out
    small = _spec(tmp_path, extra="budget_per_run = 1")
    assert main(["track", "run", str(small), "--sandbox", "--today", str(DAY + timedelta(days=1))]) == 4
    assert "left out for the budget" in capsys.readouterr().out
    broken = tmp_path / "broken.toml"
    broken.write_text('[tracker]\nname = "x"\n\n[[track]]\nendpoint = "serch"\n')
    assert main(["track", "run", str(broken), "--sandbox"]) == 2
    assert "broken.toml, line 5" in capsys.readouterr().err


def test_a_run_stopped_between_items_leaves_what_it_spent_in_its_row(tmp_path, monkeypatch):
    tracker = Tracker.from_toml(_spec(tmp_path), sandbox=True)
    calls = []
    real = sf.Client.get_many

    def stopped_at_the_second_item(self, endpoint, *args, **kwargs):
        calls.append(endpoint)
        if len(calls) == 2:
            raise KeyboardInterrupt  # as a kill would leave it: no code of the run runs after this
        return real(self, endpoint, *args, **kwargs)

    monkeypatch.setattr(sf.Client, "get_many", stopped_at_the_second_item)
    with pytest.raises(KeyboardInterrupt):
        tracker.run(DAY)
    monkeypatch.undo()
    left = tracker.runs().row(0, named=True)
    assert left["status"] == "running" and left["ended_at"] is None
    assert left["requests"] == 6 and left["credits_spent"] == 60  # the search item: 3 keywords x 2 countries
    rerun = tracker.run(DAY)
    assert rerun.interrupted == (left["run_id"],)
    assert rerun.requests == 3  # metadata, metrics and history: the search item was kept
    assert tracker.runs()["status"].to_list() == ["interrupted", "ok"]


def test_a_plan_validates_each_due_call_once_and_says_what_a_run_sends(tmp_path, monkeypatch):
    from storeframes import catalog
    from storeframes.track import due

    tracker = Tracker.from_toml(_spec(tmp_path), sandbox=True)
    tracker.run(DAY)
    checked: list[str] = []
    validate = catalog.validate
    monkeypatch.setattr(catalog, "validate", lambda ep, *a, **k: checked.append(ep.name) or validate(ep, *a, **k))
    monkeypatch.setattr(due, "validate", catalog.validate)  # where the tracker makes them canonical
    plan = tracker.plan(DAY + timedelta(days=1))
    # the due calls are made canonical once (3 keywords x 2 countries, 1 metadata): not again to plan them
    assert (checked.count("search"), checked.count("metadata")) == (6, 1)
    assert plan.requests == 6 + 1 + 1 and plan.items.filter(pl.col("due"))["requests"].to_list() == [6, 1, 1]
    assert tracker.run(DAY + timedelta(days=1)).requests == plan.requests
