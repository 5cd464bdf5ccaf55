"""The tracker left alone: a run SIGKILLed half-way and the next run (on this machine, or on another
machine waiting for it on a bucket), a run stopped past its lease and resumed, two machines running
one spec at once on one bucket, two trackers sharing a month's budget, and a month replayed day
after day.

The runs are real child processes (their own ``HOME`` and state folder where they stand for other
machines) against the sandbox on loopback, whose ``arrivals`` say what was sent and paid; the
bucket is moto's S3 on loopback. A run takes the lease ``track:<name>|tracker`` (and, with a month
budget, ``track-budget:<service>:<month>|budget``), writes its row of the run log as ``running``
when it starts and again when it ends, and asks only for what is due.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import storeframes as sf
from storeframes.cli import main
from storeframes.coord.bucket_leases import ObjectLeases
from storeframes.sandbox import SANDBOX_KEY, Arrival, SandboxServer, World
from tests._children import child_env, sigkill_when
from tests._summary import Repaid, paid_twice, record
from tests.conftest import ROOT, SANDBOX_TODAY

TODAY = SANDBOX_TODAY
_THEMES = ("photo", "video", "music", "weather", "budget", "sleep", "recipe", "habit")
_TOOLS = ("editor", "maker", "tracker", "planner", "app")
KEYWORDS = [f"{theme} {tool}" for theme in _THEMES for tool in _TOOLS]
"""Forty search keywords, one request each."""
SEARCH_COST = 10
"""Credits of one search request (a keyword in one country)."""

RUN = """
import json, sys
from datetime import date
import storeframes as sf
args = json.loads(sys.argv[1])
if args.get("ttl"):  # leases that lapse sooner when their holder dies
    from storeframes.coord.bucket_leases import ObjectLeases
    ObjectLeases.TTL = args["ttl"]
tracker = sf.Tracker.from_toml(args["spec"], progress=False, backoff=(0.01, 0.1), **args["options"])
print("ready", flush=True)
if args["together"]:
    sys.stdin.readline()
result = tracker.run(today=date.fromisoformat(args["today"]))
print(json.dumps({"status": result.status, "requests": result.requests, "spent": result.credits_spent,
                  "left_out": list(result.left_out), "run_id": result.run_id,
                  "interrupted": list(result.interrupted)}), flush=True)
print("finished", flush=True)
sys.exit(result.exit_code)
"""


def _spec(path: Path, name: str, cache: str, items: Sequence[dict[str, Any]], **tracker: Any) -> Path:
    """Write a tracker spec (TOML) at ``path``: its ``[tracker]`` table and one ``[[track]]`` per item."""
    lines = ["[tracker]", f"name = {json.dumps(name)}", f"cache_dir = {json.dumps(cache)}"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in tracker.items()]
    for item in items:
        lines += ["", "[[track]]", *(f"{key} = {json.dumps(value)}" for key, value in item.items())]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _answered(arrivals: Iterable[Arrival]) -> list[Arrival]:
    """The arrivals the server answered in full and charged."""
    return [a for a in arrivals if a.status == 200 and a.fault is None and a.cost]


def _wait_quiet(arrivals: list[Arrival], *, quiet: float = 0.4, limit: float = 10.0) -> None:
    """Wait until no request has arrived for ``quiet`` seconds (the server finishes what was in flight)."""
    deadline = time.monotonic() + limit
    seen = -1
    while len(arrivals) != seen and time.monotonic() < deadline:
        seen = len(arrivals)
        time.sleep(quiet)


def _kept_keywords(cache: sf.Cache) -> list[str]:
    """The keywords whose search answers the cache keeps, once per answer kept."""
    return sorted(entry.params["keyword"] for entry in cache.entries("search"))


def _machine(tmp_path: Path, name: str, **env: str) -> dict[str, str]:
    """The environment of a child standing for a machine of its own (its home and state folder), with ``env``."""
    home = tmp_path / name
    (home / "state").mkdir(parents=True, exist_ok=True)
    return child_env(HOME=str(home), STOREFRAMES_STATE_DIR=str(home / "state"), **env)


def _start(
    spec: Path, env: dict[str, str], *, together: bool = True, ttl: float | None = None, **options: Any
) -> subprocess.Popen[bytes]:
    """A child running ``spec`` once it reads a line (``together``), the tracker built first."""
    args = {"spec": str(spec), "today": TODAY.isoformat(), "options": options, "together": together, "ttl": ttl}
    child = subprocess.Popen(
        [sys.executable, "-c", RUN, json.dumps(args)],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout is not None
    line = child.stdout.readline()
    assert line.strip() == b"ready", (child.stderr.read() if child.stderr else b"").decode()[-3000:]
    return child


def _go(child: subprocess.Popen[bytes]) -> None:
    """Let a child started with ``together`` run."""
    assert child.stdin is not None
    child.stdin.write(b"go\n")
    child.stdin.flush()


def _together(children: Sequence[subprocess.Popen[bytes]]) -> list[tuple[int, dict[str, Any]]]:
    """Let every child run at once; each one's exit code and the result it printed."""
    for child in children:
        _go(child)
    done = []
    for child in children:
        out, err = child.communicate(timeout=120)
        lines = out.decode().splitlines()
        assert lines and lines[-1] == "finished", err.decode()[-3000:]
        assert SANDBOX_KEY not in out.decode() + err.decode()
        done.append((child.returncode, json.loads(lines[-2])))
    return done


# -- a run killed half-way, and the next one ------------------------------------------------------

KILL_WORKERS = 4


@pytest.mark.heavy
@pytest.mark.timeout(180)
@pytest.mark.processes
def test_a_run_killed_half_way_is_marked_interrupted_and_the_rerun_pays_again_only_what_was_in_flight(
    tmp_path, monkeypatch, capsys
):
    folder = tmp_path / "cache"
    spec = _spec(tmp_path / "tracking.toml", "keywords", str(folder), [{"endpoint": "search", "keywords": KEYWORDS}])
    home = tmp_path / "home"
    (home / "state").mkdir(parents=True)
    with SandboxServer(port=0, today=TODAY, latency=0.1) as server:
        for name, value in {"STOREFRAMES_BASE_URL": server.base_url, "STOREFRAMES_API_KEY": SANDBOX_KEY,
                            "HOME": str(home), "STOREFRAMES_STATE_DIR": str(home / "state")}.items():  # fmt: skip
            monkeypatch.setenv(name, value)
        arrivals = server.service.arrivals
        args = {"spec": str(spec), "today": TODAY.isoformat(), "options": {"max_workers": KILL_WORKERS},
                "together": False}  # fmt: skip
        sigkill_when(RUN, args, tmp_path, lambda: len(_answered(list(arrivals))) >= len(KEYWORDS) // 3)
        _wait_quiet(arrivals)
        first = list(arrivals)

        # what the killed run left: its row still running, some keywords kept, the rest not
        tracker = sf.Tracker.from_toml(spec, progress=False, backoff=(0.01, 0.1), max_workers=KILL_WORKERS)
        log = tracker.runs()
        assert log.height == 1 and log["status"].to_list() == ["running"]
        assert log["ended_at"].null_count() == 1
        killed = log["run_id"][0]
        kept = _kept_keywords(sf.Cache(folder))
        answered = sorted(a.params["keyword"] for a in _answered(first))
        in_flight = sorted(set(answered) - set(kept))  # answered (and paid) but not kept when it died
        assert 0 < len(kept) < len(KEYWORDS)
        assert set(kept) <= set(answered)
        assert len(in_flight) <= KILL_WORKERS
        assert tracker.plan(TODAY).requests == len(KEYWORDS) - len(kept)

        rerun = tracker.run(TODAY)
        second = list(arrivals)[len(first) :]
        assert rerun.status == "ok" and rerun.exit_code == 0
        assert rerun.interrupted == (killed,)
        assert rerun.requests == len(second) == len(KEYWORDS) - len(kept)
        assert sorted(a.params["keyword"] for a in second) == sorted(set(KEYWORDS) - set(kept))

        # paid twice: exactly the requests that were in flight at the kill, never more than the workers
        credits, again, _ = paid_twice(list(arrivals))
        assert again == len(in_flight) <= KILL_WORKERS
        assert credits == SEARCH_COST * len(in_flight)
        assert _kept_keywords(sf.Cache(folder)) == sorted(KEYWORDS)

        log = tracker.runs()
        assert log["run_id"].to_list() == [killed, rerun.run_id]
        assert log["status"].to_list() == ["interrupted", "ok"]
        assert f"run {rerun.run_id} fetched what it had not kept" in log["errors"][0]
        assert log.schema == sf.cache.RUN_SCHEMA

        # the killed run's row counts what the service answered and charged it, from the ledger: each
        # request settled, or (sent or about to be when it died) reserved at its estimate
        row = log.row(0, named=True)
        mine = sf.Cache(folder).ledger.read().filter(pl.col("row").str.starts_with(row["session"] + "-"))
        reserved = mine.filter("reserved")
        assert reserved.height <= KILL_WORKERS and (reserved["cost"] == SEARCH_COST).all()
        assert {a.params["keyword"] for a in first} <= {json.loads(p)["keyword"] for p in mine["params"]}
        assert row["requests"] == mine.height > 0 and mine.height - reserved.height <= len(first) <= mine.height
        charged = sum(a.cost for a in first)
        assert row["credits_spent"] == mine["cost"].sum() and charged <= row["credits_spent"]
        assert row["credits_spent"] - charged <= SEARCH_COST * reserved.height
        assert f"counted from the ledger: {row['requests']} requests, {row['credits_spent']:,} credits" in row["errors"]

        # a third run the same day, from the command line: nothing due, nothing sent
        capsys.readouterr()
        assert main(["track", "run", str(spec), "--today", TODAY.isoformat()]) == 0
        assert main(["track", "runs", str(spec)]) == 0
        out = capsys.readouterr().out
        assert "keywords run on 2026-11-20: ok" in out and "0 requests, 0 credits spent" in out
        assert len(arrivals) == len(first) + len(second)
        log = tracker.runs()
        assert log["status"].to_list() == ["interrupted", "ok", "ok"]
        assert log["requests"].to_list()[1:] == [rerun.requests, 0]
        assert f"{killed}  run      2026-11-20  interrupted" in out
        assert SANDBOX_KEY not in out
    record(
        "tracker run SIGKILLed half-way, then rerun",
        faults={"SIGKILL": 1},
        requests=len(arrivals),
        rows=len(KEYWORDS),
        paid_twice=credits - SEARCH_COST * len(in_flight),  # beyond the requests in flight at the kill: 0
        repaid=Repaid("in flight at a kill", SEARCH_COST * len(in_flight), SEARCH_COST * KILL_WORKERS),
    )


# -- two machines at once on one bucket -------------------------------------------------------------


@pytest.mark.heavy
@pytest.mark.timeout(180)
@pytest.mark.processes
@pytest.mark.s3
def test_two_machines_running_one_spec_at_once_on_a_bucket_pay_for_each_keyword_once(tmp_path, s3_bucket):
    keywords = KEYWORDS[:24]
    spec = _spec(tmp_path / "tracking.toml", "keywords", s3_bucket.url, [{"endpoint": "search", "keywords": keywords}])
    with SandboxServer(port=0, today=TODAY, latency=0.05) as server:
        service = {"STOREFRAMES_BASE_URL": server.base_url, "STOREFRAMES_API_KEY": SANDBOX_KEY, **s3_bucket.env}
        children = [_start(spec, _machine(tmp_path, name, **service)) for name in ("machine-a", "machine-b")]
        results = _together(children)
        arrivals = list(server.service.arrivals)

    # each keyword asked and paid once, whoever asked it; both runs ok
    assert [code for code, _ in results] == [0, 0]
    assert [r["status"] for _, r in results] == ["ok", "ok"]
    credits, again, cells = paid_twice(arrivals)
    assert (credits, again, cells) == (0, 0, 0)
    assert len(arrivals) == len(_answered(arrivals)) == len(keywords)
    assert sorted(a.params["keyword"] for a in arrivals) == sorted(keywords)
    assert sorted(r["requests"] for _, r in results) == [0, len(keywords)]

    # the run log in the bucket: a row per run that day, one with the requests and one with none
    tracker = sf.Tracker.from_toml(spec, storage_options=s3_bucket.storage_options)
    log = tracker.runs()
    assert log.height == 2
    assert log["day"].to_list() == [TODAY, TODAY]
    assert log["status"].to_list() == ["ok", "ok"]
    assert sorted(log["run_id"].to_list()) == sorted(r["run_id"] for _, r in results)
    assert log["ended_at"][0] <= log["started_at"][1], "the runs overlapped: the second did not wait for the lease"
    assert log["requests"].to_list() == [len(keywords), 0]  # the second waited for the first, then had nothing due
    assert log["credits_spent"].to_list() == [SEARCH_COST * len(keywords), 0]
    assert log["cells_new"].to_list() == [len(keywords), 0]
    with sf.Client(SANDBOX_KEY, cache_dir=s3_bucket.url, storage_options=s3_bucket.storage_options) as reader:
        assert reader.cache is not None
        assert _kept_keywords(reader.cache) == sorted(keywords)
        ledger = reader.cache.ledger.read()
    assert ledger.filter(~pl.col("from_cache"))["cost"].sum() == SEARCH_COST * len(keywords)
    record(
        "tracker: two machines, one spec, one bucket",
        requests=len(arrivals),
        rows=len(keywords),
        paid_twice=credits,
    )


@pytest.mark.heavy
@pytest.mark.timeout(180)
@pytest.mark.processes
@pytest.mark.s3
def test_a_machine_killed_half_way_while_another_waits_for_the_run_hands_it_over_on_a_bucket(
    tmp_path, s3_bucket, monkeypatch
):
    spec = _spec(tmp_path / "tracking.toml", "keywords", s3_bucket.url, [{"endpoint": "search", "keywords": KEYWORDS}])
    ttl = 1.0
    with SandboxServer(port=0, today=TODAY, latency=0.1) as server:
        service = {"STOREFRAMES_BASE_URL": server.base_url, "STOREFRAMES_API_KEY": SANDBOX_KEY, **s3_bucket.env}
        arrivals = server.service.arrivals
        killed = _start(spec, _machine(tmp_path, "machine-a", **service), ttl=ttl, max_workers=KILL_WORKERS)
        waiting = _start(spec, _machine(tmp_path, "machine-b", **service), ttl=ttl, max_workers=KILL_WORKERS)
        try:
            _go(killed)
            deadline = time.monotonic() + 60
            while not _answered(list(arrivals)):  # machine a holds the run's lease and sends
                assert killed.poll() is None and time.monotonic() < deadline
                time.sleep(0.005)
            _go(waiting)  # machine b waits for the lease
            while len(_answered(list(arrivals))) < len(KEYWORDS) // 3:
                assert killed.poll() is None and time.monotonic() < deadline
                time.sleep(0.005)
            os.kill(killed.pid, signal.SIGKILL)
            killed.communicate(timeout=60)
            assert killed.returncode == -signal.SIGKILL
            out, err = waiting.communicate(timeout=120)
        finally:
            for child in (killed, waiting):
                if child.poll() is None:
                    child.kill()
                    child.wait(timeout=60)
        arrivals = list(arrivals)

    # machine b took the run over once the lease lapsed: it marked a's row and fetched what a had not kept
    assert waiting.returncode == 0, err.decode()[-3000:]
    taken = json.loads(out.decode().splitlines()[-2])
    tracker = sf.Tracker.from_toml(spec, storage_options=s3_bucket.storage_options)
    log = tracker.runs()
    assert log.height == 2 and log["status"].to_list() == ["interrupted", "ok"]
    assert log["run_id"][1] == taken["run_id"] and taken["interrupted"] == [log["run_id"][0]]
    assert log["started_at"][1] > log["started_at"][0]
    with sf.Client(SANDBOX_KEY, cache_dir=s3_bucket.url, storage_options=s3_bucket.storage_options) as reader:
        assert reader.cache is not None
        assert _kept_keywords(reader.cache) == sorted(KEYWORDS)
    credits, again, _ = paid_twice(arrivals)
    assert again <= KILL_WORKERS and credits == SEARCH_COST * again
    assert len(_answered(arrivals)) == len(KEYWORDS) + again
    assert taken["requests"] == log["requests"][1] < len(KEYWORDS)
    record(
        "tracker: a machine SIGKILLed half-way, another takes the run over (bucket)",
        faults={"SIGKILL": 1},
        requests=len(arrivals),
        rows=len(KEYWORDS),
        paid_twice=credits - SEARCH_COST * again,  # beyond the requests in flight at the kill: 0
        repaid=Repaid("in flight at a kill", SEARCH_COST * again, SEARCH_COST * KILL_WORKERS),
    )


@pytest.mark.heavy
@pytest.mark.timeout(180)
@pytest.mark.processes
@pytest.mark.s3
def test_a_run_stopped_past_its_lease_on_a_bucket_is_taken_over_and_pays_nothing_more_when_resumed(
    tmp_path, s3_bucket, monkeypatch
):
    keywords = KEYWORDS[:20]
    spec = _spec(tmp_path / "tracking.toml", "keywords", s3_bucket.url, [{"endpoint": "search", "keywords": keywords}])
    ttl = 1.0
    monkeypatch.setattr(ObjectLeases, "TTL", ttl)
    with SandboxServer(port=0, today=TODAY, latency=0.1) as server:
        service = {"STOREFRAMES_BASE_URL": server.base_url, "STOREFRAMES_API_KEY": SANDBOX_KEY, **s3_bucket.env}
        for name, value in service.items():
            monkeypatch.setenv(name, value)
        arrivals = server.service.arrivals
        stopped = _start(spec, _machine(tmp_path, "laptop", **service), ttl=ttl, max_workers=1)
        try:
            _go(stopped)
            deadline = time.monotonic() + 60
            while len(_answered(list(arrivals))) < len(keywords) // 4:
                assert stopped.poll() is None and time.monotonic() < deadline
                time.sleep(0.005)
            os.kill(stopped.pid, signal.SIGSTOP)  # a laptop asleep: its leases lapse, nobody renews them
            time.sleep(2 * ttl)
            sent_before = len(_answered(list(arrivals)))
            taken = sf.Tracker.from_toml(spec, progress=False, backoff=(0.01, 0.1)).run(TODAY)
            os.kill(stopped.pid, signal.SIGCONT)
            out, err = stopped.communicate(timeout=120)
        finally:
            if stopped.poll() is None:
                os.kill(stopped.pid, signal.SIGCONT)
                stopped.kill()
                stopped.wait(timeout=60)
        _wait_quiet(arrivals)
        arrivals = list(arrivals)

    # the other machine marked the stopped run and fetched the rest; the resumed run sent nothing more
    assert stopped.returncode == 3, err.decode()[-3000:]  # interrupted: its work was finished by another
    resumed = json.loads(out.decode().splitlines()[-2])
    assert resumed["status"] == "interrupted"  # what the run that took over said of it stays said
    assert taken.status == "ok" and taken.interrupted == (resumed["run_id"],)
    assert 0 < taken.requests < len(keywords)
    credits, again, _ = paid_twice(arrivals)
    assert again <= 1 and credits == SEARCH_COST * again  # at most the one request in flight when it stopped
    assert len(_answered(arrivals)) == len(keywords) + again == sent_before + taken.requests
    assert resumed["requests"] <= sent_before
    with sf.Client(SANDBOX_KEY, cache_dir=s3_bucket.url, storage_options=s3_bucket.storage_options) as reader:
        assert reader.cache is not None
        kept = _kept_keywords(reader.cache)
    assert sorted(set(kept)) == sorted(keywords)
    assert len(keywords) <= len(kept) <= len(keywords) + again  # the request paid twice may be kept twice
    log = sf.Tracker.from_toml(spec).runs()
    assert log.height == 2 and log["run_id"].to_list() == [resumed["run_id"], taken.run_id]
    assert log["status"].to_list() == ["interrupted", "ok"]
    assert "resumed after another run took over" in log["errors"][0]
    record(
        "tracker: a run SIGSTOPped past its lease (bucket), taken over, resumed",
        faults={"SIGSTOP": 1},
        requests=len(arrivals),
        rows=len(keywords),
        paid_twice=0,
        repaid=Repaid("in flight at a stop past the lease", credits, SEARCH_COST),  # max_workers=1: one at most
    )


# -- two trackers, one month's budget ------------------------------------------------------------------

SMALL, LARGE = 3, 10
"""Keywords of each tracker's two items: alone a tracker spends 130 credits, both together 260."""
MONTH_BUDGET = SEARCH_COST * (2 * SMALL + LARGE)
"""160 credits a month: either tracker fits alone; together the second can afford only its small item."""


@pytest.mark.heavy
@pytest.mark.timeout(180)
@pytest.mark.processes
@pytest.mark.s3
def test_two_trackers_started_together_on_two_machines_stay_within_the_month_budget(tmp_path, s3_bucket):
    specs, wanted = {}, {}
    for n, name in enumerate(("alpha", "beta")):
        words = KEYWORDS[n * (SMALL + LARGE) : (n + 1) * (SMALL + LARGE)]
        items = [
            {"endpoint": "search", "name": "small", "keywords": words[:SMALL]},
            {"endpoint": "search", "name": "large", "keywords": words[SMALL:]},
        ]
        specs[name] = _spec(tmp_path / f"{name}.toml", name, s3_bucket.url, items, budget_per_month=MONTH_BUDGET)
        wanted[name] = words
    with SandboxServer(port=0, today=TODAY, latency=0.05) as server:
        service = {"STOREFRAMES_BASE_URL": server.base_url, "STOREFRAMES_API_KEY": SANDBOX_KEY, **s3_bucket.env}
        children = [_start(specs[name], _machine(tmp_path, name, **service)) for name in specs]
        results = dict(zip(specs, _together(children), strict=True))
        arrivals = list(server.service.arrivals)

    # one fits whole; the other ends over budget, its large item left out, its small one fetched
    assert sorted(code for code, _ in results.values()) == [0, 4]
    first = next(name for name, (code, _) in results.items() if code == 0)
    second = next(name for name in specs if name != first)
    shown = {name: {k: results[name][1][k] for k in ("status", "requests", "spent", "left_out")} for name in specs}
    assert shown[first] == {"status": "ok", "requests": SMALL + LARGE, "spent": SEARCH_COST * (SMALL + LARGE),
                            "left_out": []}  # fmt: skip
    assert shown[second] == {"status": "over_budget", "requests": SMALL, "spent": SEARCH_COST * SMALL,
                             "left_out": ["large"]}  # fmt: skip

    # the service charged no more than the budget, and no request of the item left out was sent
    charged = sum(a.cost for a in arrivals)
    assert charged == MONTH_BUDGET
    assert paid_twice(arrivals) == (0, 0, 0)
    sent = sorted(a.params["keyword"] for a in arrivals)
    assert sent == sorted(wanted[first] + wanted[second][:SMALL])
    with sf.Client(SANDBOX_KEY, cache_dir=s3_bucket.url, storage_options=s3_bucket.storage_options) as reader:
        assert reader.cache is not None
        ledger = reader.cache.ledger.read()
    month = ledger.filter(pl.col("time").dt.year() == TODAY.year, pl.col("time").dt.month() == TODAY.month)
    assert month["cost"].sum() == charged <= MONTH_BUDGET

    # each tracker's run log: one row; the second's names the item left out; status counts the month
    for name in specs:
        tracker = sf.Tracker.from_toml(specs[name], storage_options=s3_bucket.storage_options)
        log = tracker.runs()
        assert log.height == 1 and log["tracker"].to_list() == [name]
        assert log["status"].to_list() == [results[name][1]["status"]]
        assert log["items_left_out"].to_list() == ["" if name == first else "large"]
        assert tracker.status(TODAY).month_spent == MONTH_BUDGET
    record(
        "tracker: two trackers, one month budget, two machines",
        requests=len(arrivals),
        rows=len(sent),
        paid_twice=0,
    )


# -- a month replayed, day after day ------------------------------------------------------------------

_WORLD = World(0)
APPS = [a for a in _WORLD.app_ids("ios") if a not in _WORLD.UNAVAILABLE_IN_US][:2]
MONTH_START = date(2026, 10, 1)
SETTLE = sf.catalog.ENDPOINTS["search_history"].freshness.settle_days
MONTH_ITEMS = [
    {"endpoint": "search", "keywords": KEYWORDS[:3]},
    {"endpoint": "metadata", "apps": APPS},
    {"endpoint": "metrics", "apps": APPS, "metrics": ["downloads", "ratings"], "every": "7d"},
    {"endpoint": "search_history", "keywords": KEYWORDS[:2], "lookback": "7d"},
]


def _sent(ledger: pl.DataFrame, day: date) -> pl.DataFrame:
    """The requests sent on ``day`` (not served from the cache), with their parameters as columns."""
    rows = ledger.filter(~pl.col("from_cache"), pl.col("time").dt.date() == day)
    params = [json.loads(p) for p in rows["params"]]
    return rows.select("endpoint", "cost").with_columns(
        start=pl.Series([p.get("start_date") for p in params], dtype=pl.String).str.to_date(),
        end=pl.Series([p.get("end_date") for p in params], dtype=pl.String).str.to_date(),
    )


def _gaps(status: Any) -> dict[str, list[date]]:
    return dict(zip(status.items["item"].to_list(), status.items["gap_days"].to_list(), strict=True))


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_month_replayed_day_after_day_runs_what_is_due_each_day_and_then_fills_a_three_day_gap(tmp_path):
    spec = _spec(tmp_path / "month.toml", "month", "cache", MONTH_ITEMS)
    tracker = sf.Tracker.from_toml(spec, sandbox=True, progress=False)
    days = [MONTH_START + timedelta(days=k) for k in range(30)]
    expected = {}
    for k, day in enumerate(days):
        result = tracker.run(day)
        again = tracker.run(day)
        # three keywords and one metadata request a day; metrics every 7th day; history one request a keyword
        expected[day] = {"search": 3, "metadata": 1, "metrics": 1 if k % 7 == 0 else 0, "search_history": 2}
        assert (result.status, again.status) == ("ok", "ok"), result.summary()
        assert result.requests == sum(expected[day].values()), (day, result.summary())
        assert again.requests == again.credits_spent == 0, (day, again.summary())
        assert result.interrupted == again.interrupted == ()

    log = tracker.runs()
    assert log.height == 2 * len(days)
    assert log["status"].unique().to_list() == ["ok"]
    assert log["day"].to_list() == [d for d in days for _ in range(2)]
    assert log["requests"].to_list() == [n for d in days for n in (sum(expected[d].values()), 0)]
    assert log["ended_at"].null_count() == 0

    with tracker.client(days[-1]) as client:
        assert client.cache is not None
        ledger = client.cache.ledger.read()
    for k, day in enumerate(days):
        sent = _sent(ledger, day)
        counts = dict(sent.group_by("endpoint").len().iter_rows())
        assert {e: counts.get(e, 0) for e in expected[day]} == expected[day], day
        history = sent.filter(pl.col("endpoint") == "search_history")
        assert history["end"].to_list() == [day - timedelta(days=1)] * 2  # up to yesterday
        # the first day its lookback; later days only yesterday and the days not final when last fetched
        first = day - timedelta(days=7 if k == 0 else SETTLE)
        assert history["start"].to_list() == [first] * 2, day

    # the day after: nothing missed, only what is due that day
    following = days[-1] + timedelta(days=1)
    status = tracker.status(following)
    assert _gaps(status) == {"search": [], "metadata": [], "metrics": [], "search_history": []}
    assert status.items["last_fetched"].to_list() == [days[-1], days[-1], days[28], days[-1]]
    assert status.items["due"].to_list() == [True, True, False, True]
    assert status.runs.height == 2 * len(days)

    # three days skipped: the status names them, and the run fetches the missed days of history
    back = following + timedelta(days=3)
    skipped = [following + timedelta(days=n) for n in range(3)]
    before = _gaps(tracker.status(back))
    assert before["search"] == before["metadata"] == skipped
    assert before["metrics"] == []  # every 7 days: not due on any skipped day
    assert before["search_history"] == [days[-1], *skipped[:2]]  # the days up to the day before yesterday
    result = tracker.run(back)
    assert result.status == "ok" and result.requests == 3 + 1 + 0 + 2
    with tracker.client(back) as client:
        assert client.cache is not None
        history = _sent(client.cache.ledger.read(), back).filter(pl.col("endpoint") == "search_history")
    assert history["end"].to_list() == [back - timedelta(days=1)] * 2
    assert history["start"].to_list() == [days[-1] - timedelta(days=SETTLE - 1)] * 2  # from the first day not final
    after = _gaps(tracker.status(back))
    assert after["search_history"] == []  # history is filled in
    assert after["search"] == after["metadata"] == skipped  # the present of a past day cannot be fetched any more
    record(
        "tracker: a month replayed, then 3 days skipped",
        requests=int(tracker.runs()["requests"].sum()),
        rows=tracker.runs().height,
    )
