"""A tracker's history without holes, replayed against the in-process sandbox: a missed week, a week over
the budget, a backfill of an older range, a replayed day, and what the run, its row and the status say."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path

import polars as pl
import pytest

import storeframes as sf
from storeframes.cache import open_cache
from storeframes.cli import main
from storeframes.sandbox import World
from storeframes.track import Tracker

WORLD = World(0)
KEYWORD = WORLD.EXAMPLE_KEYWORDS[0]
APPS = list(WORLD.EXAMPLE_IOS_APPS[:2])
START = date(2026, 10, 1)
LOOKBACK = 3


def _spec(tmp_path: Path, file: str = "tracking.toml", *, extra: str = "", metadata: bool = True) -> Path:
    """A spec named ``watch`` on the folder ``cache``: a keyword's history (3 days of lookback) and, with
    ``metadata``, two apps' listings."""
    listing = f'\n[[track]]\nendpoint = "metadata"\napps = {json.dumps(APPS)}\n' if metadata else ""
    path = tmp_path / file
    path.write_text(
        f'[tracker]\nname = "watch"\ncache_dir = "cache"\n{extra}\n'
        f'[[track]]\nname = "ranks"\nendpoint = "search_history"\nkeywords = ["{KEYWORD}"]\n'
        f'lookback = "{LOOKBACK}d"\n{listing}'
    )
    return path


def _history_requests(tracker: Tracker, day: date) -> list[tuple[date, date]]:
    """The (start, end) of each search_history request sent on ``day``, from the ledger."""
    ledger = open_cache(tracker.spec.cache_dir).ledger.read()
    rows = ledger.filter(pl.col("attempt") > 0, pl.col("endpoint") == "search_history", pl.col("time").dt.date() == day)
    params = [json.loads(p) for p in rows["params"]]
    return [(date.fromisoformat(p["start_date"]), date.fromisoformat(p["end_date"])) for p in params]


def _days(first: date, last: date) -> list[date]:
    return [first + timedelta(days=n) for n in range((last - first).days + 1)]


def _recorded(days: list[date]) -> set[date]:
    """The days the sandbox recorded ranks of the keyword (it misses about 5 %, as the service does)."""
    language = WORLD.default_language("us")
    return {
        d
        for d in days
        if WORLD.search_history_day(KEYWORD, device="iphone", country="us", language=language, day=d) is not None
    }


def _held(tracker: Tracker) -> set[date]:
    return set(sf.scan("search_history", tracker.spec.cache_dir, service="sandbox-0").collect()["date"])


def test_a_run_after_a_gap_asks_every_day_since_the_last_continuous_fetch(tmp_path):
    tracker = Tracker.from_toml(_spec(tmp_path, metadata=False), sandbox=True)
    day = lambda n: START + timedelta(days=n - 1)  # noqa: E731  (day 1 is START)
    for n in (1, 2, 10):
        assert tracker.run(day(n)).status == "ok"
    # day 10 asks from day 1 (fetched on day 2, not final then) to day 9: not only its 3 days of lookback
    assert _history_requests(tracker, day(10)) == [(day(1), day(9))]
    assert _held(tracker) == _recorded(_days(day(1) - timedelta(days=LOOKBACK), day(9)))
    status = tracker.status(day(11))
    assert status.missing == {} and status.exit_code == 0
    assert "  ranks: last 2026-10-10, due" in status.summary().splitlines()


def test_a_month_with_a_missed_week_and_a_week_over_budget_names_the_days_then_holds_every_day(tmp_path, capsys):
    month = _spec(tmp_path)
    tight = _spec(tmp_path, "tight.toml", extra="budget_per_run = 1")  # the same tracker, with a budget that binds
    tracker = Tracker.from_toml(month, sandbox=True)
    missed = _days(START + timedelta(days=7), START + timedelta(days=13))  # days 8 to 14: nothing runs
    starved = _days(START + timedelta(days=17), START + timedelta(days=23))  # days 18 to 24: over the budget
    for day in _days(START, START + timedelta(days=29)):
        if day in missed:
            continue
        if day in starved:
            code = main(["track", "run", str(tight), "--sandbox", "--today", str(day)])
            out = capsys.readouterr().out
            assert code == 4 and f"watch run on {day}: over_budget" in out
            # the days it leaves unfetched are named: the keyword's from the 17th (the last run's yesterday is
            # the 16th) to yesterday, and today's listings
            ranks = _days(START + timedelta(days=16), day - timedelta(days=1))
            shown = f"{ranks[0]}..{ranks[-1]}" if len(ranks) > 1 else str(ranks[0])
            assert f"  not fetched: ranks: {sf.errors.plural(len(ranks), 'day')} ({shown})" in out
            assert f"  not fetched: metadata: 1 day ({day})" in out
            continue
        result = tracker.run(day)
        assert (result.status, result.missing) == ("ok", {}), result.summary()

    log = tracker.runs()
    over = log.filter(pl.col("status") == "over_budget")
    assert over["day"].to_list() == starved
    last = over.row(-1, named=True)
    assert f"not fetched: ranks: 7 days ({START + timedelta(days=16)}..{START + timedelta(days=22)})" in last["errors"]
    assert set(log.filter(pl.col("day") > starved[-1])["status"]) == {"ok"}
    capsys.readouterr()
    assert main(["track", "runs", str(month), "--sandbox"]) == 0  # the log says why a run was not ok
    listed = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(listed) if f" {starved[-1]}  over_budget" in line)
    assert f"    not fetched: ranks: 7 days ({START + timedelta(days=16)}..{START + timedelta(days=22)})" in listed[at:]

    # the first run after the week over budget asks from the 16th (not final when the 17th's run fetched it)
    assert _history_requests(tracker, START + timedelta(days=24)) == [
        (START + timedelta(days=15), START + timedelta(days=23))
    ]
    # the run after the missed week asks from the 6th (not final when the 7th's run fetched it) to the 14th
    assert _history_requests(tracker, START + timedelta(days=14)) == [
        (START + timedelta(days=5), START + timedelta(days=13))
    ]
    # every day from the first run's lookback to the last run's yesterday is held, as the sandbox recorded it
    assert _held(tracker) == _recorded(_days(START - timedelta(days=LOOKBACK), START + timedelta(days=28)))
    status = tracker.status(START + timedelta(days=30))
    assert status.missing == {"metadata": missed + starved}  # a past day's listing cannot be fetched any more
    assert main(["track", "status", str(month), "--sandbox", "--today", str(START + timedelta(days=30))]) == 3
    out = capsys.readouterr().out
    assert "  metadata: last 2026-10-30, due; 14 days missing: 2026-10-08..2026-10-14, 2026-10-18..2026-10-24" in out
    assert "  ranks: last 2026-10-30, due" in out.splitlines()


def test_the_status_in_a_week_over_budget_names_the_days_and_never_says_up_to_date(tmp_path, capsys):
    tracker = Tracker.from_toml(_spec(tmp_path), sandbox=True)
    tight = Tracker.from_toml(_spec(tmp_path, "tight.toml", extra="budget_per_run = 1"), sandbox=True)
    assert tracker.run(START).status == "ok"
    for n in range(1, 4):
        assert tight.run(START + timedelta(days=n)).status == "over_budget"
    status = tracker.status(START + timedelta(days=4))
    # ranks: fetched on the 1st up to the 30th; the 1st to the 2nd should be held by now (the runs of the 2nd, 3rd)
    assert status.missing == {
        "ranks": _days(START, START + timedelta(days=2)),
        "metadata": _days(START + timedelta(days=1), START + timedelta(days=3)),
    }
    lines = status.summary().splitlines()
    assert "  ranks: last 2026-10-01, due; 3 days missing: 2026-10-01..2026-10-03" in lines
    assert not [line for line in lines if "up to date" in line]
    assert status.exit_code == 3


def test_the_status_counts_the_holes_of_its_window_only_30_days_by_default(tmp_path, capsys):
    path = _spec(tmp_path)
    tracker = Tracker.from_toml(path, sandbox=True)
    for day in (START, START + timedelta(days=2)):  # the 2nd is missed: its listing can never be fetched again
        assert tracker.run(day).status == "ok"
    today = START + timedelta(days=2)
    status = tracker.status(today)
    assert status.since == today - timedelta(days=29)
    assert (status.missing, status.exit_code) == ({"metadata": [START + timedelta(days=1)]}, 3)
    later = tracker.status(today, since=today)  # a check that looks from the 3rd on: nothing missing there
    assert (later.missing, later.exit_code) == ({}, 0)
    assert f"  missing since {today}: none" in later.summary().splitlines()
    assert main(["track", "status", str(path), "--sandbox", "--today", str(today), "--since", str(today)]) == 0
    assert main(["track", "status", str(path), "--sandbox", "--today", str(today)]) == 3
    out = capsys.readouterr().out
    assert f"  missing since {today - timedelta(days=29)}: 1 day in 1 item, not fetched" in out
    with pytest.raises(sf.InvalidParameterError, match="since"):
        tracker.status(today, since=today + timedelta(days=1))


def test_a_backfill_of_an_older_range_moves_nothing_of_the_daily_runs(tmp_path, capsys):
    path = _spec(tmp_path, metadata=False)
    tracker = Tracker.from_toml(path, sandbox=True)
    day = START + timedelta(days=20)
    assert tracker.run(day).status == "ok"  # the 18th to the 20th
    # the next day, a backfill of an older range first, as of that day (--today), then the day's run
    following = day + timedelta(days=1)
    older = (START, START + timedelta(days=4))
    args = ["track", "backfill", str(path), "--sandbox", "--start", str(older[0]), "--end", str(older[1])]
    assert main([*args, "--today", str(following)]) == 0
    assert f"watch backfill on {following}: ok" in capsys.readouterr().out
    assert tracker.runs()["day"].to_list() == [day, following]
    assert _history_requests(tracker, following) == [older]
    assert tracker.run(following).requests == 1  # the backfill moved nothing: the day's run still asks its days
    assert _history_requests(tracker, following)[1:] == [(day - timedelta(days=1), day)]
    for n in (2, 3):
        assert tracker.run(day + timedelta(days=n)).status == "ok"
    status = tracker.status(day + timedelta(days=4))
    assert status.missing == {} and status.exit_code == 0
    # held: the backfill's range and every day from the first run's lookback on; between them, nothing asked
    anchor = day - timedelta(days=LOOKBACK)
    assert _held(tracker) == _recorded(_days(*older) + _days(anchor, day + timedelta(days=2)))


def test_a_backfill_refuses_an_end_on_or_after_its_today_before_anything_is_sent(tmp_path, capsys):
    path = _spec(tmp_path, metadata=False)
    args = ["track", "backfill", str(path), "--sandbox", "--start", "2026-10-01", "--end", "2026-10-05"]
    assert main([*args, "--today", "2026-10-05"]) == 2
    assert "days before today (2026-10-05)" in capsys.readouterr().err
    assert not (tmp_path / "cache" / "runs").exists()  # no run was made


def test_a_replayed_day_takes_its_own_snapshot_though_the_cache_keeps_a_later_one(tmp_path):
    tracker = Tracker.from_toml(_spec(tmp_path), sandbox=True)
    pinned = START + timedelta(days=20)  # as a sandbox's pinned day fetches today's listings first
    assert tracker.run(pinned).requests == 2
    earlier = START + timedelta(days=5)
    replay = tracker.run(earlier)
    assert (replay.status, replay.requests) == ("ok", 2)  # the listings and the ranks of that day: both asked
    snapshots = sf.snapshots("metadata", tracker.spec.cache_dir, service="sandbox-0").collect()
    assert sorted(set(snapshots["snapshot_date"])) == [earlier, pinned]
    assert snapshots.filter(pl.col("snapshot_date") == earlier)["app_id"].sort().to_list() == sorted(APPS)
    status = tracker.status(earlier)
    assert status.items["last_fetched"].to_list() == [earlier, earlier]  # not the later day's answers
    assert tracker.run(earlier).requests == 0  # the day is done


def test_a_run_whose_history_fails_is_failed_and_names_the_days(tmp_path):
    faults = sf.sandbox.Faults(server_error=1.0)
    tracker = Tracker.from_toml(_spec(tmp_path), sandbox=True, faults=faults, max_tries=1)
    result = tracker.run(START)
    assert (result.status, result.exit_code) == ("failed", 3)
    ranks = _days(START - timedelta(days=LOOKBACK), START - timedelta(days=1))
    assert result.missing == {"ranks": ranks, "metadata": [START]}
    assert "  not fetched: ranks: 3 days (2026-09-28..2026-09-30)" in result.summary().splitlines()
    assert "not fetched: metadata: 1 day (2026-10-01)" in tracker.runs()["errors"].item()


def test_a_catch_up_dearer_than_the_run_budget_asks_its_oldest_days_that_fit_and_goes_on_the_next_day(tmp_path):
    # a day of the keyword's history costs 10 credits (and 1 a request): 61 credits pay for 6 days a run
    tracker = Tracker.from_toml(_spec(tmp_path, metadata=False, extra="budget_per_run = 61"), sandbox=True)
    assert tracker.run(START).status == "ok"  # its lookback: September 28th to 30th
    day = START + timedelta(days=21)  # three weeks not run: the 30th (not final then) to the 21st is due
    plan = tracker.plan(day)
    assert plan.left_out == ("ranks",) and plan.cut == {"ranks": date(2026, 10, 5)}
    assert "  ranks: 1 request, 61 credits, 6 of 6 cells to fetch  (over the budget: its days up to 2026-10-05" in (
        plan.summary()
    )
    results = [tracker.run(day + timedelta(days=n)) for n in range(5)]
    assert [r.status for r in results] == ["over_budget"] * 4 + ["ok"]
    assert all(r.credits_spent <= 61 for r in results)
    first = results[0]
    assert first.requests == plan.requests == 1 and first.left_out == ("ranks",)
    assert first.missing == {"ranks": _days(date(2026, 10, 6), day - timedelta(days=1))}  # the rest, named
    assert "  not fetched: ranks: 16 days (2026-10-06..2026-10-21)" in first.summary().splitlines()
    assert [_history_requests(tracker, day + timedelta(days=n)) for n in range(5)] == [
        [(date(2026, 9, 30), date(2026, 10, 5))],
        [(date(2026, 10, 6), date(2026, 10, 11))],
        [(date(2026, 10, 12), date(2026, 10, 17))],
        [(date(2026, 10, 18), date(2026, 10, 23))],
        [(date(2026, 10, 24), date(2026, 10, 25))],
    ]
    assert _held(tracker) == _recorded(_days(START - timedelta(days=LOOKBACK), date(2026, 10, 25)))
    assert tracker.status(date(2026, 10, 27)).missing == {}
