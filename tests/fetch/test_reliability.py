"""Reliability: large plans through seeded faults, a fetch killed half-way, four processes on one folder.

Every scenario runs against the loopback sandbox (:class:`~storeframes.sandbox.SandboxServer`)
and compares its frames with a fault-free run of the same calls. Frames are compared without
``fetched_at``, the one column that differs between two fetches of the same answer. Each
scenario adds a row to the reliability summary printed at the end of the run.
"""

from __future__ import annotations

import json
import multiprocessing
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from polars.testing import assert_frame_equal

import storeframes as sf
from storeframes import catalog
from storeframes.engine import Plan
from storeframes.sandbox import API_PREFIX, Arrival, Faults, SandboxServer, World
from tests._children import sigkill_when
from tests._summary import faults_of, max_in_window, paid_twice, record
from tests.conftest import SANDBOX_TODAY, loopback_client

WORLD = World(0)
APPS = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US][:200]
"""iphone/ipad apps available in "us": no request is split to isolate an unavailable app."""
KEYWORDS = [
    *WORLD.EXAMPLE_KEYWORDS,
    "habit tracker",
    "recipe app",
    "language learning",
    "sleep sounds",
    "pdf scanner",
    "weather radar",
    "budget app",
    "workout plan",
    "music player",
    "video editor",
    "flashlight",
    "qr scanner",
    "calorie counter",
    "step counter",
]
START, END = date(2026, 9, 1), date(2026, 10, 30)  # 60 final days, well before the sandbox's today
FAST_BACKOFF = (0.01, 0.1)
WINDOW = (60, 1.0)  # the service's limit of 60 requests a window, with the window scaled down to a second


def _client(base_url: str, cache_dir: Any, **options: Any) -> sf.Client:
    return loopback_client(base_url, cache_dir, **{"rate_limit": WINDOW, "backoff": FAST_BACKOFF, **options})


def _key(path: str, params: Any) -> tuple[str, str]:
    """A request as (path, canonical parameters as sorted JSON): what the client plans and the server sees."""
    return path, json.dumps(dict(params), sort_keys=True)


def _planned(plan: Plan) -> set[tuple[str, str]]:
    assert plan.cached_cells == 0
    path = API_PREFIX + catalog.ENDPOINTS[plan.endpoint].path
    return {(path, params) for params in plan.requests.filter(pl.col("source") == "send")["params"]}


def _sent(arrivals: Iterable[Arrival]) -> Counter[tuple[str, str]]:
    """How many times each request reached the server, faults and retries included."""
    return Counter(_key(a.path, a.params) for a in arrivals)


def _answered(arrivals: Iterable[Arrival]) -> int:
    """Arrivals the server answered in full (not a fault, not an error)."""
    return sum(a.status == 200 and a.fault is None for a in arrivals)


def _same(frame: pl.DataFrame, reference: pl.DataFrame) -> int:
    """Assert a frame equals the fault-free one (but for when it was fetched); returns the rows compared."""
    assert frame.height == reference.height > 0
    assert frame.schema == reference.schema
    assert frame["fetched_at"].null_count() == 0
    assert_frame_equal(frame.drop("fetched_at"), reference.drop("fetched_at"))
    return frame.height


def _assert_folder_sound(folder: Path) -> None:
    """No file set aside as corrupt; every Parquet file and raw answer of the folder reads."""
    assert not list(folder.rglob("*.corrupt"))
    parquet = [p for p in folder.rglob("*.parquet") if not p.name.startswith(".")]
    assert parquet
    for path in parquet:
        pq.read_table(path)
    answers = list(folder.glob("answers/*/*.json.zst"))
    assert answers
    for path in answers:
        with pa.CompressedInputStream(pa.BufferReader(path.read_bytes()), "zstd") as stream:
            head, _, body = bytes(stream.read()).partition(b"\n")
        assert json.loads(head)["status"] == 200 and json.loads(body)


@contextmanager
def _no_cache_warning() -> Iterator[list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught
    assert not [w for w in caught if issubclass(w.category, sf.CacheWarning)], [str(w.message) for w in caught]


# -- the retry bound -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("faults", "error", "max_tries"),
    [
        (Faults(server_error=1.0, seed=1), sf.ServerError, 3),
        (Faults(timeout=1.0, stall_seconds=0.3, seed=1), sf.TransportError, 2),
    ],
    ids=["5xx every time", "read timeout every time"],
)
def test_a_request_failing_every_time_is_tried_max_tries_times_and_costs_nothing(tmp_path, faults, error, max_tries):
    with (
        SandboxServer(port=0, today=SANDBOX_TODAY, rate_limit=WINDOW, faults=faults) as server,
        _client(server.base_url, tmp_path, max_tries=max_tries, timeout=0.15) as client,
    ):
        with pytest.raises(error) as raised:
            client.metadata_frame(APPS[:3])
        arrivals = list(server.service.arrivals)
        assert raised.value.attempts == max_tries
        assert len(arrivals) == max_tries and len(_sent(arrivals)) == 1
        assert all(a.cost == 0 for a in arrivals) and client.spent == 0 and server.service.spent == 0
        assert client.retries == max_tries - 1
        ledger = client.ledger
        if error is sf.ServerError:  # every answer is in the ledger, free
            assert ledger["attempt"].to_list() == list(range(1, max_tries + 1))
            assert set(ledger["status"]) <= {500, 502, 503} and ledger["cost"].sum() == 0
        else:  # a request that timed out got no answer: a row per attempt, with no status, free
            assert ledger["attempt"].to_list() == list(range(1, max_tries + 1))
            assert ledger["status"].null_count() == max_tries and ledger["cost"].sum() == 0
            assert "timed out" in str(raised.value)
            assert {a.fault for a in arrivals} == {"timeout"}
        assert sf.Cache(tmp_path).entries() == []
    record(
        f"retry bound ({'5xx' if error is sf.ServerError else 'timeout'} every time)",
        faults=faults_of(arrivals),
        retries=client.retries,
        requests=len(arrivals),
        rows=0,
    )


# -- a large plan through faults ---------------------------------------------------------------

LARGE_FAULTS = Faults(
    server_error=0.10, rate_limited=0.02, burst=3, timeout=0.02, truncated=0.03, dropped=0.03, seed=8, stall_seconds=2.0
)
LARGE_TIMEOUT = 1.5  # shorter than the stall, several times the slowest answer (~0.2 s) of the busy loopback server
LARGE_TRIES = 8


def _large_plan(client: sf.Client) -> dict[str, pl.DataFrame]:
    return {
        "metadata": client.metadata_frame(APPS),
        "versions": client.versions_frame(APPS),  # from the same cached answers, nothing sent
        "screenshots": client.screenshots_frame(APPS),
        "search_history": client.search_history_frame(KEYWORDS, start=START, end=END),
    }


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_a_large_plan_through_seeded_faults_gives_the_frames_of_a_clean_run(tmp_path):
    with (
        SandboxServer(port=0, today=SANDBOX_TODAY, rate_limit=WINDOW) as clean_server,
        _client(clean_server.base_url, tmp_path / "clean", max_workers=4) as clean,
    ):
        expected = _large_plan(clean)
        assert clean.retries == 0 and len(clean_server.service.arrivals) == 40 + 20

    with (
        SandboxServer(port=0, today=SANDBOX_TODAY, rate_limit=WINDOW, faults=LARGE_FAULTS) as server,
        _client(
            server.base_url, tmp_path / "faulty", max_workers=4, max_tries=LARGE_TRIES, timeout=LARGE_TIMEOUT
        ) as client,
    ):
        planned = _planned(client.plan("metadata_frame", apps=APPS))
        planned |= _planned(client.plan("search_history_frame", keywords=KEYWORDS, start=START, end=END))
        assert len(planned) == 40 + 20  # 5 apps a request; one request per keyword and run of days
        started = time.perf_counter()
        with _no_cache_warning():
            frames = _large_plan(client)
        elapsed = time.perf_counter() - started
        arrivals = list(server.service.arrivals)
        ledger = client.ledger

    rows = sum(_same(frames[name], expected[name]) for name in expected)
    assert frames["search_history"]["keyword"].n_unique() >= 18 and frames["metadata"].height == 200

    # every kind of fault was met, and survived
    faults = faults_of(arrivals)
    assert set(faults) == {"5xx", "429", "timeout", "truncated", "dropped"}, faults
    assert faults["429"] >= LARGE_FAULTS.burst
    assert sum(faults.values()) >= 10

    # the requests sent were the plan's, each tried at most max_tries times
    sent = _sent(arrivals)
    assert set(sent) == planned
    assert max(sent.values()) <= LARGE_TRIES
    assert max(sent.values()) > 1
    fetched = ledger.filter(~pl.col("from_cache"))
    assert fetched["attempt"].min() >= 1 and fetched["attempt"].max() <= LARGE_TRIES
    answers = fetched.filter((pl.col("status") == 200) & ~pl.col("cost_estimated"))
    assert answers.height == len(planned) and answers["params"].n_unique() == len(planned)
    # each retry shows in the attempt number of the answer that ended it
    assert client.retries == int((answers["attempt"] - 1).sum()) > 0
    assert len(arrivals) <= len(planned) + client.retries  # an attempt on a dead connection never arrives

    # failed attempts cost nothing, but a 200 cut short may have been charged: it counts its estimate
    # (the sandbox charges it nothing; the service may), marked cost_estimated; the rest is the clean run's
    assert fetched.filter(pl.col("status") != 200)["cost"].sum() == 0
    assert all(a.cost == 0 for a in arrivals if a.fault or a.status != 200)
    cut = fetched.filter(pl.col("cost_estimated"))
    assert cut.height == faults["truncated"] and (cut["status"] == 200).all() and (cut["cost"] > 0).all()
    assert clean.spent == int(answers["cost"].sum()) > 0
    assert client.spent == clean.spent + int(cut["cost"].sum())
    assert elapsed < 60
    record(
        "large plan (200 apps, 20 keywords x 60 d)",
        faults=faults,
        retries=client.retries,
        requests=len(arrivals),
        rows=rows,
    )


# -- a fetch killed half-way -------------------------------------------------------------------

KILLED_FETCH = """
import json, sys
from datetime import UTC, date, datetime
import storeframes as sf

args = json.loads(sys.argv[1])
today = date.fromisoformat(args["today"])
with sf.Client(
    args["key"],
    base_url=args["base_url"],
    cache_dir=args["folder"],
    max_workers=args["max_workers"],
    max_tries=args["max_tries"],
    backoff=(0.01, 0.1),
    rate_limit=(60, 1.0),
    clock=lambda: datetime.combine(today, datetime.now(UTC).time(), UTC),
    progress=False,
) as client:
    client.metadata_frame(args["apps"])
print("finished the whole plan")
"""
KILL_FAULTS = Faults(server_error=0.05, truncated=0.03, dropped=0.03, seed=5)
KILL_WORKERS = 2
KILL_TRIES = 6


def _wait_quiet(arrivals: list[Arrival], *, quiet: float = 0.3, limit: float = 10.0) -> None:
    """Wait until no request has arrived for ``quiet`` seconds (the server finishes what was in flight)."""
    deadline = time.monotonic() + limit
    seen = -1
    while len(arrivals) != seen and time.monotonic() < deadline:
        seen = len(arrivals)
        time.sleep(quiet)


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.processes
def test_a_fetch_killed_half_way_resumes_sending_only_what_is_missing(tmp_path):
    folder = tmp_path / "cache"
    with SandboxServer(port=0, today=SANDBOX_TODAY, rate_limit=WINDOW, latency=0.08, faults=KILL_FAULTS) as server:
        with _client(server.base_url, False) as planner:
            planned = _planned(planner.plan("metadata_frame", apps=APPS))
        assert len(planned) == 40
        args = {
            "key": server.key,
            "base_url": server.base_url,
            "folder": str(folder),
            "apps": APPS,
            "today": SANDBOX_TODAY.isoformat(),
            "max_workers": KILL_WORKERS,
            "max_tries": KILL_TRIES,
        }
        arrivals = server.service.arrivals
        sigkill_when(KILLED_FETCH, args, tmp_path, lambda: _answered(list(arrivals)) >= len(planned) // 2)
        _wait_quiet(arrivals)
        before = list(arrivals)

        # what the killed process left: whole entries only, at most the requests in flight lost
        with _no_cache_warning():
            cached = sf.Cache(folder).entries("metadata")
        cached_keys = {_key(API_PREFIX + catalog.ENDPOINTS["metadata"].path, e.params) for e in cached}
        answered = {_key(a.path, a.params) for a in before if a.status == 200 and a.fault is None}
        assert 0 < len(cached) < len(planned)
        assert cached_keys <= answered <= planned
        assert len(answered - cached_keys) <= KILL_WORKERS
        _assert_folder_sound(folder)
        # a write cut short by the kill leaves a temporary file: plant one to be sure there is one
        index = next(p for p in (folder / "index" / "endpoint=metadata").glob("*.parquet"))
        planted = index.with_name(f".{index.name}.0badc0de.tmp")
        planted.write_bytes(index.read_bytes()[: index.stat().st_size // 2])

        with _client(server.base_url, folder, max_workers=KILL_WORKERS, max_tries=KILL_TRIES) as client:
            plan = client.plan("metadata_frame", apps=APPS)
            assert plan.to_send == len(planned) - len(cached)
            assert plan.cached_cells == 5 * len(cached)
            with _no_cache_warning():
                frame = client.metadata_frame(APPS)
            ledger = client.ledger
            retries = client.retries
        rerun = list(arrivals)[len(before) :]

    # the rerun sent exactly the requests whose answers were not cached, each within the retry bound
    resent = _sent(rerun)
    assert set(resent).isdisjoint(cached_keys)
    assert set(resent) | cached_keys == planned
    assert len(resent) + len(cached) == len(planned)
    assert max(resent.values()) <= KILL_TRIES
    assert ledger.filter(pl.col("from_cache")).height == len(cached)
    answers = ledger.filter(~pl.col("from_cache") & (pl.col("status") == 200) & ~pl.col("cost_estimated"))
    assert answers.height == len(resent)
    assert planted.exists()
    _assert_folder_sound(folder)
    # the folder alone now holds the whole plan (not only the rerun's memory of it)
    with _client(server.base_url, folder, offline=True) as offline, _no_cache_warning():
        kept = offline.metadata_frame(APPS)

    with (
        SandboxServer(port=0, today=SANDBOX_TODAY, rate_limit=WINDOW) as clean_server,
        _client(clean_server.base_url, False, max_workers=4) as clean,
    ):
        reference = clean.metadata_frame(APPS)
    rows = _same(frame, reference) + _same(kept, reference)
    assert frame.height == 200 and frame["app_id"].to_list() == APPS
    child_retries = len(before) - len(_sent(before))
    record(
        "SIGKILL half-way, then rerun",
        faults=faults_of([*before, *rerun]),
        retries=child_retries + retries,
        requests=len(before) + len(rerun),
        rows=rows,
    )


# -- four processes on one folder ----------------------------------------------------------------

SHARED_FAULTS = Faults(
    server_error=0.08,
    rate_limited=0.02,
    burst=3,
    timeout=0.01,
    truncated=0.03,
    dropped=0.03,
    seed=19,
    stall_seconds=3.5,
)
SHARED_TIMEOUT = 3.0  # one loopback server answers twelve threads of four processes: answers can take a second
SHARED_TRIES = 8
PROCESSES = 4


def _share(i: int) -> dict[str, Any]:
    """Process ``i``'s plan: overlapping apps (not on request boundaries), keywords and days."""
    start = START + timedelta(days=6 * i)
    return {
        "apps": APPS[17 * i : 17 * i + 60],
        "keywords": KEYWORDS[4 * i : 4 * i + 8],
        "start": start,
        "end": start + timedelta(days=35),
    }


def _calls(i: int) -> list[tuple[str, dict[str, Any]]]:
    """Process ``i``'s frame calls; odd processes ask for the history first."""
    share = _share(i)
    calls = [
        ("metadata_frame", {"apps": share["apps"]}),
        ("search_history_frame", {"keywords": share["keywords"], "start": share["start"], "end": share["end"]}),
    ]
    return calls if i % 2 == 0 else calls[::-1]


def _share_frames(client: sf.Client, i: int) -> dict[str, pl.DataFrame]:
    frames = {name: getattr(client, name)(**args) for name, args in _calls(i)}
    frames["versions_frame"] = client.versions_frame(_share(i)["apps"])  # from answers others may have fetched
    return frames


def _fetch_share(i: int, base_url: str, folder: str, start: Any, results: Any) -> None:
    """One of the processes: wait for the others, fetch its share into the common folder, report."""
    try:
        with _client(
            base_url,
            folder,
            rate_limit=WINDOW,  # one token: the four share one window on this machine
            max_workers=3,
            max_tries=SHARED_TRIES,
            timeout=SHARED_TIMEOUT,
        ) as client:
            start.wait(timeout=120)
            with _no_cache_warning():
                frames = _share_frames(client, i)
            fetched = client.ledger.filter(~pl.col("from_cache"))
            answered = (pl.col("status") == 200) & ~pl.col("cost_estimated")
            results.put(
                {
                    "i": i,
                    "heights": {name: frame.height for name, frame in frames.items()},
                    "spent": client.spent,
                    "retries": client.retries,
                    "max_attempt": int(fetched["attempt"].max() or 0),
                    # an answer: a 200 that arrived whole (one cut short counts its estimate, and is retried)
                    "answers": fetched.filter(answered).height,
                    "retried": int((fetched.filter(answered)["attempt"] - 1).sum()),
                }
            )
    except BaseException:
        results.put({"i": i, "error": traceback.format_exc()})


@pytest.mark.slow
@pytest.mark.timeout(180)
@pytest.mark.processes
def test_four_processes_with_faults_share_one_folder_and_lose_nothing(tmp_path):
    folder = tmp_path / "shared"
    context = multiprocessing.get_context("spawn")
    start, results = context.Barrier(PROCESSES), context.Queue()
    with SandboxServer(port=0, today=SANDBOX_TODAY, rate_limit=WINDOW, faults=SHARED_FAULTS) as server:
        processes = [
            context.Process(target=_fetch_share, args=(i, server.base_url, str(folder), start, results))
            for i in range(PROCESSES)
        ]
        for process in processes:
            process.start()
        try:
            reports = sorted((results.get(timeout=150) for _ in processes), key=lambda r: r["i"])
        finally:
            for process in processes:
                process.join(timeout=60)
                if process.is_alive():
                    process.kill()
        assert [p.exitcode for p in processes] == [0] * PROCESSES
        assert not [r["error"] for r in reports if "error" in r], [r["error"] for r in reports if "error" in r]
        arrivals = list(server.service.arrivals)
        everyone = sorted({a for i in range(PROCESSES) for a in _share(i)["apps"]}, key=APPS.index)

        # a new client, offline, on the folder: every frame is there
        with _client(server.base_url, folder, offline=True) as offline, _no_cache_warning():
            kept = [_share_frames(offline, i) for i in range(PROCESSES)]
            kept_everyone = offline.metadata_frame(everyone)
            assert offline.ledger.filter(~pl.col("from_cache")).is_empty()
        assert len(server.service.arrivals) == len(arrivals)  # offline: nothing sent

    with (
        SandboxServer(port=0, today=SANDBOX_TODAY, rate_limit=(1000, 1.0)) as clean_server,
        _client(clean_server.base_url, False, rate_limit=(1000, 1.0)) as clean,
    ):
        expected = [_share_frames(clean, i) for i in range(PROCESSES)]
        expected_everyone = clean.metadata_frame(everyone)
        alone = sum(len(_planned(clean.plan(name, **args))) for i in range(PROCESSES) for name, args in _calls(i))

    rows = _same(kept_everyone, expected_everyone)
    for report, frames, reference in zip(reports, kept, expected, strict=True):
        rows += sum(_same(frames[name], reference[name]) for name in reference)
        assert report["heights"] == {name: frame.height for name, frame in reference.items()}
        assert 1 <= report["max_attempt"] <= SHARED_TRIES  # no request of a process tried more than max_tries
        assert report["retried"] == report["retries"]  # every retry ended in an answer
    assert len(everyone) == 111 and kept_everyone["app_id"].to_list() == everyone

    faults = faults_of(arrivals)
    assert sum(faults.values()) >= 10 and set(faults) == {"5xx", "429", "timeout", "truncated", "dropped"}, faults
    # the processes used each other's answers: fewer answers fetched than the four plans need alone,
    # and no request, no app and no day was paid for twice
    assert sum(r["answers"] for r in reports) < alone
    assert paid_twice(arrivals) == (0, 0, 0)
    # one window for the four: never over the limit at the server (the 429s are the injected ones)
    most = max_in_window([a.time for a in arrivals], WINDOW[1])
    assert most <= WINDOW[0]
    # credits: the ledgers kept in the folder hold what each process was charged, and failures cost nothing
    kept_ledger = sf.Cache(folder).ledger.read()
    assert kept_ledger["cost"].sum() == sum(r["spent"] for r in reports) > 0
    assert kept_ledger.filter(pl.col("status") != 200)["cost"].sum() == 0
    assert all(a.cost == 0 for a in arrivals if a.fault or a.status != 200)
    assert not list(folder.rglob(".*.tmp"))
    _assert_folder_sound(folder)
    record(
        "four processes, one folder",
        faults=faults,
        retries=sum(r["retries"] for r in reports),
        requests=len(arrivals),
        rows=rows,
        paid_twice=0,
        window=(most, WINDOW[0]),
    )
