"""The token's shared rate window: across threads, clients, processes and machines, and where it is kept.

The scenarios run against the loopback sandbox, which answers 429 past its own strict
sliding window and records each request's arrival; a window is "exceeded" when more
arrivals than the limit lie within some window of them. Nothing here asserts how fast
anything is, only what is admitted and what is refused.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

import pytest

import storeframes as sf
from storeframes import coord
from storeframes.coord import Coordinator, state_dir, token_id
from storeframes.coord import coordinator_for as coordinator
from storeframes.coord.base import shared_limiter
from storeframes.coord.machine import STATE_FILE, TABLE, _SqliteSlots
from storeframes.coord.redis import _RedisSlots
from storeframes.coord.window import SharedLimiter
from storeframes.sandbox import SANDBOX_KEY, SandboxServer, World
from storeframes.wire.http import lib as httpx
from tests._children import child_env
from tests._extras import names_the_extra
from tests._redis import redis_url  # noqa: F401 - the fixture
from tests._summary import max_in_window, record
from tests.conftest import SANDBOX_TODAY, loopback_client

WORLD = World(0)
APPS = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US][:200]
WINDOW = (10, 1.0)  # the service's 60 in 10 s, scaled down: 10 requests in any second
TOKEN = "sk-live-windowtoken0123456789"  # found by the suite's leak check if it is ever written
BASE = "https://api.example.test/api/public/store"


def _client(base_url: str, cache_dir: Any, **options: Any) -> sf.Client:
    options = {
        "rate_limit": WINDOW,
        "max_workers": 4,
        "max_tries": 1,  # a 429 is an error, not a retry: it cannot hide
        **options,
    }
    return loopback_client(base_url, cache_dir, **options)


def _files_hold(folder: Path, secret: str) -> list[str]:
    return [p.name for p in folder.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


# -- where callers meet ----------------------------------------------------------------------------


def test_coordinator_is_the_machine_unless_a_redis_url_is_named(monkeypatch):
    monkeypatch.delenv(coord.ENV_COORDINATOR, raising=False)
    assert coordinator() == Coordinator() == coordinator("machine") == coordinator(" Machine ")
    assert coordinator().url is None
    for url in ("redis://127.0.0.1:6379/0", "rediss://cache.internal:6380/1", "unix:///run/redis.sock?db=2"):
        assert coordinator(url).url == url
    given = Coordinator("redis://cache:6379/0")
    assert coordinator(given) is given
    monkeypatch.setenv(coord.ENV_COORDINATOR, "redis://from-env:6379/3")
    assert coordinator().url == "redis://from-env:6379/3"
    assert coordinator("machine").url is None  # an explicit choice wins over the environment


@pytest.mark.parametrize(
    "spec", ["memcached://:hunter2@cache:11211", "http://:hunter2@host/", "hunter2", "redis://:hunter2@host:port/0"]
)
def test_a_coordinator_that_is_not_allowed_is_refused_without_echoing_a_password(spec):
    with pytest.raises(sf.ConfigurationError, match="'machine' or a Redis URL") as caught:
        coordinator(spec)
    assert "redis://" in str(caught.value) and "unix://" in str(caught.value)
    assert "hunter2" not in str(caught.value)


def test_a_bad_coordinator_in_the_environment_is_named_as_such(monkeypatch):
    monkeypatch.setenv(coord.ENV_COORDINATOR, "etcd://somewhere")
    with pytest.raises(sf.ConfigurationError, match=r"\$STOREFRAMES_COORDINATOR"):
        coordinator()
    with pytest.raises(sf.ConfigurationError, match="STOREFRAMES_COORDINATOR"):
        sf.Client(TOKEN, base_url=BASE, cache_dir=False)


def test_a_coordinator_never_shows_a_password():
    assert repr(Coordinator()) == "Coordinator(machine)"
    assert repr(Coordinator("redis://:hunter2@host:6379/0")) == "Coordinator('redis://:***@host:6379/0')"
    assert repr(Coordinator("rediss://user:hunter2@host/0")) == "Coordinator('rediss://user:***@host/0')"
    shown = repr(Coordinator("unix:///run/redis.sock?db=0&password=hunter2"))
    assert "hunter2" not in shown and "password=***" in shown
    assert repr(Coordinator("redis://host:6379/0")) == "Coordinator('redis://host:6379/0')"


@pytest.mark.redis
def test_one_redis_client_per_process_and_url(redis_url):  # noqa: F811
    one, two = Coordinator(redis_url), Coordinator(redis_url)
    assert one.redis() is two.redis()
    assert one.redis().ping()
    assert Coordinator(redis_url.replace("/0", "/1")).redis() is not one.redis()


def test_without_redis_py_the_redis_coordinator_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "redis", None)  # import redis now raises ImportError
    monkeypatch.setattr(coord.redis, "_CLIENTS", {})
    with pytest.raises(sf.ConfigurationError) as by_the_coordinator:
        Coordinator("redis://127.0.0.1:1/0").redis()
    with pytest.raises(sf.ConfigurationError) as by_the_client:
        sf.Client(TOKEN, base_url=BASE, cache_dir=False, coordinator="redis://:hunter2@127.0.0.1:1/0")
    assert names_the_extra(str(by_the_coordinator.value), "redis")
    assert names_the_extra(str(by_the_client.value), "redis") and "hunter2" not in str(by_the_client.value)


def test_state_dir_is_the_environments_or_the_users_and_private(tmp_path, monkeypatch):
    monkeypatch.setenv(coord.ENV_STATE_DIR, str(tmp_path / "a" / "state"))
    folder = state_dir()
    assert folder == tmp_path / "a" / "state" and folder.is_dir()
    assert folder.stat().st_mode & 0o777 == 0o700
    monkeypatch.delenv(coord.ENV_STATE_DIR)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):
        assert state_dir() == tmp_path / "xdg" / "storeframes"


def test_token_id_names_a_token_at_a_base_url_without_holding_it():
    ident = token_id(TOKEN, BASE)
    assert ident == token_id(TOKEN, BASE + "/") and len(ident) == 32
    assert ident != token_id(TOKEN + "x", BASE) and ident != token_id(TOKEN, BASE.replace("example", "other"))
    assert token_id("ab", "c") != token_id("a", "bc")
    assert TOKEN not in ident and "windowtoken" not in ident


# -- the limiter alone ------------------------------------------------------------------------------


def test_limiters_refuse_bad_settings_and_clients_say_rate_limit():
    with pytest.raises(ValueError, match="whole number"):
        shared_limiter(TOKEN, BASE, (0, 1.0), coordinator=Coordinator(), hold=5)
    with pytest.raises(ValueError, match="positive"):
        shared_limiter(TOKEN, BASE, (5, 0), coordinator=Coordinator(), hold=5)
    with pytest.raises(ValueError, match="hold"):
        shared_limiter(TOKEN, BASE, (5, 1.0), coordinator=Coordinator(), hold=0)
    for bad in [(0, 1.0), (5, -1), "60/10s", (5,)]:
        with pytest.raises(sf.ConfigurationError, match="rate_limit"):
            sf.Client(TOKEN, base_url=BASE, rate_limit=bad, cache_dir=False)  # type: ignore[arg-type]


@pytest.mark.redis
def test_a_limiter_says_what_it_shares_and_never_the_token(redis_url):  # noqa: F811
    machine = shared_limiter(TOKEN, BASE, coordinator=Coordinator(), hold=35.0)
    assert repr(machine) == "Limiter(limit=60, window=10.0, shared by token, machine)"
    url = redis_url.replace("redis://", "redis://:hunter2@")
    remote = shared_limiter(TOKEN, BASE, (10, 1.0), coordinator=Coordinator(url), hold=35.0)
    assert repr(remote) == f"Limiter(limit=10, window=1.0, shared by token, {url.replace('hunter2', '***')})"
    with sf.Client(TOKEN, base_url=BASE, cache_dir=False, coordinator=url) as client:
        shown = [repr(client), repr(client.limiter), repr(client.coordinator), repr(vars(client.limiter))]
    assert not [s for s in shown if TOKEN in s or "hunter2" in s]


def test_clients_of_one_token_and_address_share_one_window_and_hold_for_an_attempts_longest(monkeypatch):
    monkeypatch.delenv(coord.ENV_COORDINATOR, raising=False)
    a = sf.Client(TOKEN, base_url=BASE, cache_dir=False)
    b = sf.Client(TOKEN, base_url=BASE + "/", cache_dir=False, rate_limit=(30, 5.0), timeout=2.0, deadline=None)
    other_token = sf.Client(TOKEN + "2", base_url=BASE, cache_dir=False)
    other_base = sf.Client(TOKEN, base_url=BASE.replace("example", "other"), cache_dir=False)
    try:
        assert a.coordinator == Coordinator() and isinstance(a.limiter, SharedLimiter)
        assert a.limiter._shared is b.limiter._shared  # one window, each with its own (limit, window)
        assert (b.limiter.limit, b.limiter.window) == (30, 5.0)
        assert a.limiter._shared is not other_token.limiter._shared
        assert a.limiter._shared is not other_base.limiter._shared
        assert a.limiter.hold == 125.0  # the deadline of an attempt (120 s) and 5 s
        assert b.limiter.hold == 7.0  # without a deadline, the timeout and 5 s
    finally:
        for client in (a, b, other_token, other_base):
            client.close()
    with (
        httpx.Client() as http,
        sf.Client(TOKEN, base_url=BASE, cache_dir=False, http_client=http, deadline=None) as given,
    ):
        assert given.limiter.hold == 60.0  # its timeouts are the http client's: a minute


def test_an_unreachable_sandbox_address_keeps_a_window_of_its_own():
    one = shared_limiter(TOKEN, "https://sandbox.storeframes.invalid/api", (1, 60.0), coordinator=Coordinator(), hold=5)
    two = shared_limiter(TOKEN, "https://sandbox.storeframes.invalid/api", (1, 60.0), coordinator=Coordinator(), hold=5)
    assert "own window" in repr(one)
    one.acquire()
    two.acquire()  # would wait a minute if the two shared a window
    one.release()
    two.release()
    with pytest.raises(RuntimeError, match="without a slot"):
        one.release()


def test_a_state_folder_that_cannot_be_written_is_refused_not_left_to_the_process(tmp_path, monkeypatch):
    # a window of the process's own would not count the other processes of the token: they would trip the limit
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(coord.ENV_STATE_DIR, str(blocker / "state"))
    limiter = shared_limiter(TOKEN + "-ro", BASE, (2, 60.0), coordinator=Coordinator(), hold=5)
    for _ in range(2):  # every time, not once
        with pytest.raises(sf.CoordinationError, match="STOREFRAMES_STATE_DIR") as caught:
            with limiter.slot():
                pass
        assert str(blocker / "state") in str(caught.value)
    assert "machine" in repr(limiter)


# -- the shared record: what it admits -------------------------------------------------------------


def _records(kind: str, url: str | None, tid: str) -> Any:
    if kind == "machine":
        return _SqliteSlots(state_dir() / STATE_FILE, tid)
    return _RedisSlots(Coordinator(url), tid)


@pytest.mark.parametrize("kind", ["machine", "redis"])
@pytest.mark.redis
def test_each_limiter_admits_by_its_own_limit_and_window_over_one_record(kind, request):
    url = request.getfixturevalue("redis_url") if kind == "redis" else None
    slots = _records(kind, url, token_id(TOKEN, BASE + kind))
    first = [slots.take(2, 60.0, 30.0)[0] for _ in range(2)]
    assert None not in first
    handle, delay = slots.take(2, 60.0, 30.0)
    # both in flight: nothing is free for a whole window (each completes from now on, then stays that long)
    assert handle is None and delay == pytest.approx(60.0, abs=0.01)
    more = [slots.take(4, 60.0, 30.0)[0] for _ in range(2)]  # a client allowed 4 takes the other two
    assert None not in more
    assert slots.take(4, 60.0, 30.0)[0] is None
    for held in first + more:
        slots.give(held)
    time.sleep(0.06)
    # every slot completed more than 0.05 s ago: a 0.05 s window is empty, a minute's is full
    assert slots.take(4, 60.0, 30.0)[0] is None
    handle, delay = slots.take(2, 60.0, 30.0)
    assert handle is None and 58.0 < delay <= 60.0  # until the oldest completion leaves the minute
    assert slots.take(4, 0.05, 30.0)[0] is not None


def test_the_machine_record_dates_a_release_when_it_is_made_not_when_the_file_is_free():
    # the answer's headers are in when the slot is given back: waiting for another thread's transaction
    # on the file must not date it later (each such wait would hold the slot that much longer)
    tid = token_id(TOKEN, BASE + "/dated")
    slots = _SqliteSlots(state_dir() / STATE_FILE, tid)
    handle, _ = slots.take(5, 60.0, 30.0)
    with slots._file.lock:  # the process's connection, busy meanwhile
        giving = threading.Thread(target=slots.give, args=(handle,))
        called = time.monotonic()
        giving.start()
        time.sleep(0.6)
    giving.join()
    with sqlite3.connect(state_dir() / STATE_FILE) as db:
        (done,) = db.execute(f"SELECT done FROM {TABLE} WHERE id = ?", (handle,)).fetchone()
    assert called <= done < called + 0.3


@pytest.mark.processes
def test_the_machine_record_counts_a_gone_holder_as_completed_and_forgets_times_from_before_a_boot(tmp_path):
    tid = token_id(TOKEN, BASE + "/gone")
    slots = _SqliteSlots(state_dir() / STATE_FILE, tid)
    assert slots.take(5, 60.0, 30.0)[0] is not None  # opens the file
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    gone = int(finished.stdout)
    now = time.monotonic()  # the record's clock: the machine's monotonic one
    with sqlite3.connect(state_dir() / STATE_FILE) as db:
        rows = [
            (1, tid, gone, now + 3600, 3600, None),  # held by a process that exited: completed now
            (2, tid, None, None, None, now + 7200),  # completed "in two hours": written before a boot
            (3, tid, os.getpid(), now + 7200, 30.0, None),  # a deadline beyond reach: brought back to now + hold
        ]
        db.executemany(f"INSERT INTO {TABLE} (id, token, pid, deadline, hold, done) VALUES (?, ?, ?, ?, ?, ?)", rows)
    handle, delay = slots.take(3, 60.0, 30.0)
    assert handle is None and delay == pytest.approx(60.0, abs=1.0)  # the gone holder's slot is in the window
    with sqlite3.connect(state_dir() / STATE_FILE) as db:
        found = dict(db.execute(f"SELECT id, done FROM {TABLE} WHERE token = ? AND id < 4", (tid,)).fetchall())
        deadline = db.execute(f"SELECT deadline FROM {TABLE} WHERE id = 3").fetchone()[0]
    assert set(found) == {1, 3} and found[1] is not None and now <= found[1] <= time.monotonic()
    assert found[3] is None and deadline <= time.monotonic() + 30.0


@pytest.mark.parametrize("kind", ["machine", "redis"])
@pytest.mark.redis
def test_threads_through_two_limiters_of_one_token_never_exceed_the_limit(kind, request):
    url = request.getfixturevalue("redis_url") if kind == "redis" else None
    where = Coordinator(url)
    limit, window = 5, 0.3
    limiters = [shared_limiter(TOKEN, BASE, (limit, window), coordinator=where, hold=10.0) for _ in range(2)]
    assert limiters[0]._shared is limiters[1]._shared
    starts: list[float] = []
    lock = threading.Lock()

    def worker(i: int) -> None:
        limiter = limiters[i % 2]
        for n in range(6):
            if n % 2:  # in two steps: this thread's slot
                limiter.acquire()
                with lock:
                    starts.append(time.monotonic())
                time.sleep(0.002)
                limiter.release()
            else:
                with limiter.slot():
                    with lock:
                        starts.append(time.monotonic())
                    time.sleep(0.002)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(starts) == 36
    assert max_in_window(starts, window) <= limit
    assert sum(limiter.waited for limiter in limiters) > 0  # 36 slots at 5 a window: they waited


# -- clients and processes on one machine ------------------------------------------------------------

PER_CALLER = 40  # 8 requests of 5 apps: 5 callers send four windows' worth


def _caller_apps(i: int) -> list[str]:
    return APPS[PER_CALLER * i : PER_CALLER * (i + 1)]


def _fetch(i: int, base_url: str, folder: str, start: Any, results: Any) -> None:
    """One caller: its own client and cache folder, the token's window; reports what it got or its error."""
    try:
        with _client(base_url, folder) as client:
            start.wait(timeout=120)
            frame = client.metadata_frame(_caller_apps(i))
            results.put({"i": i, "rows": frame.height, "sent": client.requests_sent, "where": client.limiter.where})
    except BaseException:
        results.put({"i": i, "error": traceback.format_exc()})


@pytest.mark.timeout(180)
@pytest.mark.processes
def test_three_clients_and_two_processes_on_one_token_get_no_429(tmp_path):
    context = multiprocessing.get_context("spawn")
    start, results = context.Barrier(5), context.Queue()
    with SandboxServer(port=0, today=SANDBOX_TODAY, rate_limit=WINDOW) as server:
        args = [(i, server.base_url, str(tmp_path / f"cache{i}"), start, results) for i in range(5)]
        processes = [context.Process(target=_fetch, args=args[i]) for i in (3, 4)]
        threads = [threading.Thread(target=_fetch, args=args[i]) for i in (0, 1, 2)]
        for worker in [*processes, *threads]:
            worker.start()
        try:
            reports = sorted((results.get(timeout=150) for _ in range(5)), key=lambda r: r["i"])
        finally:
            for thread in threads:
                thread.join(timeout=60)
            for process in processes:
                process.join(timeout=60)
                if process.is_alive():
                    process.kill()
        arrivals = list(server.service.arrivals)
    assert not [r["error"] for r in reports if "error" in r], [r["error"] for r in reports if "error" in r]
    assert [r["rows"] for r in reports] == [PER_CALLER] * 5
    assert {r["where"] for r in reports} == {"machine"}
    assert len(arrivals) == sum(r["sent"] for r in reports) == 5 * PER_CALLER // 5
    assert [a.status for a in arrivals].count(429) == 0
    most = max_in_window([a.time for a in arrivals], WINDOW[1])
    record("3 clients + 2 processes, one token", requests=len(arrivals), rows=5 * PER_CALLER, window=(most, WINDOW[0]))
    assert most <= WINDOW[0]
    assert not _files_hold(state_dir(), SANDBOX_KEY)


HOLDER = """
import sys, time
from storeframes.coord import Coordinator
from storeframes.coord.base import shared_limiter

token, base, limit, hold, url = sys.argv[1:6]
limiter = shared_limiter(token, base, (int(limit), 60.0), coordinator=Coordinator(url or None), hold=float(hold))
for _ in range(int(limit)):
    limiter.acquire()
print("held", flush=True)
time.sleep(600)
"""


def _holder(url: str | None, hold: float, limit: int = 3) -> subprocess.Popen[str]:
    """A process that takes every slot of a window and keeps them; started once it holds them."""
    run = [sys.executable, "-c", HOLDER, TOKEN, BASE, str(limit), str(hold), url or ""]
    child = subprocess.Popen(run, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout is not None
    line = child.stdout.readline()
    assert line.strip() == "held", child.stderr.read() if child.stderr else ""
    return child


def _waiter(limiter: SharedLimiter) -> tuple[threading.Thread, threading.Event]:
    admitted = threading.Event()

    def wait() -> None:
        with limiter.slot():
            admitted.set()

    thread = threading.Thread(target=wait, daemon=True)
    thread.start()
    return thread, admitted


@pytest.mark.timeout(120)
@pytest.mark.parametrize("kind", ["machine", "redis"])
@pytest.mark.processes
@pytest.mark.redis
def test_a_process_killed_while_holding_slots_does_not_block_the_others(kind, request):
    url = request.getfixturevalue("redis_url") if kind == "redis" else None
    # a machine's record sees the holder is gone; Redis (other machines' pids mean nothing) waits for the deadline
    hold = 600.0 if kind == "machine" else 2.0
    child = _holder(url, hold)
    try:
        limiter = shared_limiter(TOKEN, BASE, (3, 0.5), coordinator=Coordinator(url), hold=10.0)
        thread, admitted = _waiter(limiter)
        assert not admitted.wait(0.2)  # the child holds every slot
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
        assert admitted.wait(60), "the killed holder's slots still block"
        thread.join(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
        child.communicate(timeout=30)  # its pipes read to the end and closed
    assert child.returncode == -signal.SIGKILL


@pytest.mark.timeout(120)
@pytest.mark.processes
def test_a_live_holder_that_hangs_past_its_deadline_does_not_block_the_others():
    child = _holder(None, 1.0)
    try:
        os.kill(child.pid, signal.SIGSTOP)  # alive, but it will never release
        limiter = shared_limiter(TOKEN, BASE, (3, 0.5), coordinator=Coordinator(), hold=10.0)
        thread, admitted = _waiter(limiter)
        assert admitted.wait(60), "a slot past its deadline still blocks"
        thread.join(timeout=10)
        assert child.poll() is None
    finally:
        child.kill()
        child.communicate(timeout=30)  # its pipes read to the end and closed


def _forked_child_uses(limiter: SharedLimiter, outcome: Any) -> None:
    with limiter.slot():
        pass
    slots = limiter._window().slots  # type: ignore[attr-defined]
    outcome.put((limiter._shared is not PARENT_WINDOW[0], slots.take(2, 60.0, 5.0)[0] is None))


PARENT_WINDOW: list[Any] = []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
@pytest.mark.processes
def test_a_forked_child_counts_in_the_parents_window_through_its_own_connection():
    limiter = shared_limiter(TOKEN, BASE + "/fork", (2, 60.0), coordinator=Coordinator(), hold=5.0)
    with limiter.slot():  # the parent's connection is open
        pass
    PARENT_WINDOW[:] = [limiter._shared]
    context = multiprocessing.get_context("fork")
    outcome = context.Queue()
    child = context.Process(target=_forked_child_uses, args=(limiter, outcome))
    child.start()
    got = outcome.get(timeout=60)
    child.join(timeout=60)
    assert child.exitcode == 0
    assert got == (True, True)  # its own window object, and it saw the parent's completion beside its own
    assert limiter._shared.slots.take(2, 60.0, 5.0)[0] is None  # and the parent sees the child's


def test_the_token_is_never_written_to_the_machine_record():
    limiter = shared_limiter(TOKEN, BASE, (3, 60.0), coordinator=Coordinator(), hold=5)
    for _ in range(3):
        with limiter.slot():
            pass
    files = sorted(p.name for p in state_dir().iterdir())
    assert STATE_FILE in files
    assert not _files_hold(state_dir(), TOKEN) and not _files_hold(state_dir(), "windowtoken")


# -- two machines ----------------------------------------------------------------------------------

MACHINE = """
import json, sys
from datetime import UTC, date, datetime
import storeframes as sf

args = json.loads(sys.argv[1])
today = date.fromisoformat(args["today"])
client = sf.Client(args["key"], base_url=args["base_url"], cache_dir=args["folder"], rate_limit=tuple(args["window"]),
                   coordinator=args["coordinator"], max_workers=4, max_tries=1, progress=False,
                   clock=lambda: datetime.combine(today, datetime.now(UTC).time(), UTC))
print(json.dumps({"where": client.limiter.where}), flush=True)
sys.stdin.readline()  # go
try:
    outcome = client.metadata_frame(args["apps"]).height
except sf.RateLimitError:
    outcome = "429"
client.close()
print(json.dumps({"outcome": outcome}), flush=True)
"""


def _two_machines(tmp_path: Path, url: str | None, apps_each: int) -> tuple[list[Any], list[Any]]:
    """Two processes, each with a home, state and cache of its own, fetching at once; (outcomes, arrivals)."""
    with SandboxServer(port=0, today=SANDBOX_TODAY, rate_limit=WINDOW) as server:
        children = []
        for i in range(2):
            home = tmp_path / ("with" if url else "without") / f"machine{i}"
            env = child_env(
                HOME=str(home),
                XDG_STATE_HOME=str(home / "state"),
                XDG_CACHE_HOME=str(home / "cache"),
                STOREFRAMES_STATE_DIR=str(home / "storeframes-state"),
                STOREFRAMES_CACHE_DIR=str(home / "storeframes-cache"),
                STOREFRAMES_COORDINATOR=None,
            )
            args = {
                "key": SANDBOX_KEY,
                "base_url": server.base_url,
                "folder": str(home / "cache"),
                "window": WINDOW,
                "coordinator": url,
                "apps": APPS[apps_each * i : apps_each * (i + 1)],
                "today": SANDBOX_TODAY.isoformat(),
            }
            run = [sys.executable, "-c", MACHINE, json.dumps(args)]
            children.append(
                subprocess.Popen(
                    run, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
                )
            )
        try:
            ready = [json.loads(child.stdout.readline() or "{}") for child in children]  # type: ignore[union-attr]
            assert all(r.get("where") for r in ready), [c.stderr.read() for c in children]  # type: ignore[union-attr]
            for child in children:
                child.stdin.write("go\n")  # type: ignore[union-attr]
                child.stdin.flush()  # type: ignore[union-attr]
            outcomes = [child.communicate(timeout=120) for child in children]
        finally:
            for child in children:
                if child.poll() is None:
                    child.kill()
                    child.communicate(timeout=30)  # its pipes read to the end and closed
        arrivals = list(server.service.arrivals)
    assert [child.returncode for child in children] == [0, 0], [err for _, err in outcomes]
    return [json.loads(out.splitlines()[-1])["outcome"] for out, _ in outcomes], arrivals


@pytest.mark.timeout(240)
@pytest.mark.processes
@pytest.mark.redis
def test_two_machines_share_the_window_through_redis_and_exceed_it_without(tmp_path, redis_url):  # noqa: F811
    apps_each = 60  # 12 requests each: 24, more than two windows' worth
    outcomes, arrivals = _two_machines(tmp_path, redis_url, apps_each)
    assert outcomes == [apps_each, apps_each]
    assert [a.status for a in arrivals].count(429) == 0
    assert len(arrivals) == 2 * apps_each // 5
    most = max_in_window([a.time for a in arrivals], WINDOW[1])
    record("2 machines, one token, Redis", requests=len(arrivals), rows=2 * apps_each, window=(most, WINDOW[0]))
    assert most <= WINDOW[0]

    # the same two machines without the coordinator: each keeps its own window, together they exceed it
    outcomes, arrivals = _two_machines(tmp_path, None, apps_each)
    assert "429" in outcomes
    assert [a.status for a in arrivals].count(429) > 0

    # and Redis holds no token, in its keys or its values
    import redis

    connection = redis.Redis.from_url(redis_url)
    keys = connection.keys("*")
    assert keys and all(k.startswith(b"storeframes:") for k in keys)
    for key in keys:
        assert SANDBOX_KEY.encode() not in key
        assert SANDBOX_KEY.encode() not in (connection.dump(key) or b"")
    assert all(connection.pttl(k) > 0 for k in keys if k.startswith(b"storeframes:window:"))


@pytest.mark.redis
def test_the_token_is_never_written_to_redis(redis_url):  # noqa: F811
    import redis

    limiter = shared_limiter(TOKEN, BASE, (3, 60.0), coordinator=Coordinator(redis_url), hold=5)
    for _ in range(3):
        with limiter.slot():
            pass
    connection = redis.Redis.from_url(redis_url)
    keys = connection.keys("*")
    window = f"storeframes:window:{token_id(TOKEN, BASE)}"
    assert sorted(keys) == [f"{window}:done".encode(), f"{window}:epoch".encode()]  # the slots; which Redis life
    values = [connection.dump(k) or b"" for k in keys] + [
        m for k in keys if connection.type(k) == b"zset" for m in connection.zrange(k, 0, -1)
    ]
    assert not [v for v in [*keys, *values] if TOKEN.encode() in v or b"windowtoken" in v]
    assert 0 < connection.pttl(f"{window}:done") <= 3600 * 1000  # idle state disappears
    assert 0 < connection.pttl(f"{window}:epoch") <= 86400 * 1000
