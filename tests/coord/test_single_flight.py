"""Single flight: a missing cell is asked for once, whoever asks, within a client, a process or a machine.

Every scenario runs against the loopback sandbox, which records each request as it
arrives; a cell is "paid twice" when two answered requests delivered it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from storeframes.coord.file_leases import FileLeases
from storeframes.coord.leases import Leases
from storeframes.coord.redis import RedisCoordinator, RedisLeases
from storeframes.sandbox import SANDBOX_KEY, SandboxServer, World
from tests._children import child_env
from tests._redis import redis_url  # noqa: F401 - the fixture
from tests._summary import paid_twice, record
from tests.conftest import SANDBOX_TODAY, sandbox_clock

WORLD = World(0)
APPS = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US][:40]


ON_LOOPBACK: dict[str, Any] = {"rate_limit": (600, 1.0), "backoff": (0.01, 0.1), "clock": sandbox_clock}
"""The clients' options on the loopback sandbox (with ``make_client(server=...)``): a wide window, the sandbox's day."""


def _together(count: int, function: Any) -> list[Any]:
    """``function(i)`` on ``count`` threads released at once; their results in order."""
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait(timeout=30)
            results[i] = function(i)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    return results


@pytest.mark.parametrize("cache", ["folder", "none"])
def test_eight_threads_asking_one_client_for_the_same_apps_pay_once(make_client, tmp_path, cache):
    with SandboxServer(port=0, today=SANDBOX_TODAY, latency=0.3) as server:
        with make_client(server=server, cache_dir=tmp_path if cache == "folder" else False, **ON_LOOPBACK) as client:
            frames = _together(8, lambda i: client.metadata_frame(APPS[:5]))
            arrivals = list(server.service.arrivals)
            assert len(arrivals) == 1 and paid_twice(arrivals) == (0, 0, 0)
            assert client.spent == arrivals[0].cost == server.service.spent > 0
            assert client.ledger.filter(~pl.col("from_cache"))["cost"].sum() == client.spent
            for frame in frames[1:]:
                assert_frame_equal(frame, frames[0])
            assert frames[0]["app_id"].to_list() == APPS[:5]
    record(f"8 threads, one client (cache: {cache})", requests=len(arrivals), rows=8 * 5, paid_twice=0)


def test_two_clients_of_one_process_sharing_a_folder_pay_once_for_overlapping_apps(make_client, tmp_path):
    with (
        SandboxServer(port=0, today=SANDBOX_TODAY, latency=0.3) as server,
        make_client(server=server, cache_dir=tmp_path, **ON_LOOPBACK) as one,
        make_client(server=server, cache_dir=tmp_path, **ON_LOOPBACK) as two,
    ):
        asked = [APPS[0:10], APPS[3:13]]  # overlapping, not on request boundaries
        clients = [one, two]
        frames = _together(2, lambda i: clients[i].metadata_frame(asked[i]))
        arrivals = list(server.service.arrivals)
        assert paid_twice(arrivals) == (0, 0, 0)
        delivered = [app for a in arrivals for app in a.params["apps"].split(",")]
        assert sorted(delivered) == sorted(set(APPS[0:13]))  # each of the 13 apps asked for once
        assert one.spent + two.spent == server.service.spent
        for frame, apps in zip(frames, asked, strict=True):
            assert frame["app_id"].to_list() == apps
        # what one client borrowed from the other counts as saved, not spent
        assert one.saved + two.saved > 0
    record("2 clients, one folder, overlapping apps", requests=len(arrivals), rows=23, paid_twice=0)


def test_overlapping_calls_of_one_get_many_ask_for_each_app_once(make_client, tmp_path):
    x, y = APPS[0], APPS[1]
    with (
        SandboxServer(port=0, today=SANDBOX_TODAY) as server,
        make_client(server=server, cache_dir=tmp_path, **ON_LOOPBACK) as client,
    ):
        plan = client.plan_many("metadata", [{"apps": x}, {"apps": x}, {"apps": [x, y]}])
        assert plan.to_send == 1
        answers = client.get_many("metadata", [{"apps": x}, {"apps": x}, {"apps": [x, y]}])
        arrivals = list(server.service.arrivals)
        assert [a.params["apps"] for a in arrivals] == [f"{x},{y}"]
        assert [sorted(a.result) for a in answers] == [[x], [x], sorted([x, y])]
        assert sum(a.cost for a in answers) == client.spent == arrivals[0].cost > 0
        assert answers[0].cost == arrivals[0].cost and answers[1].cost == answers[2].cost == 0


def test_a_history_asked_by_threads_over_overlapping_ranges_delivers_each_day_once(make_client, tmp_path):
    keyword = WORLD.EXAMPLE_KEYWORDS[0]
    ranges = [("2026-09-01", "2026-09-20"), ("2026-09-10", "2026-09-30"), ("2026-09-05", "2026-09-25")]
    with (
        SandboxServer(port=0, today=SANDBOX_TODAY, latency=0.2) as server,
        make_client(server=server, cache_dir=tmp_path, **ON_LOOPBACK) as client,
    ):
        frames = _together(3, lambda i: client.search_history_frame([keyword], start=ranges[i][0], end=ranges[i][1]))
        arrivals = list(server.service.arrivals)
        assert paid_twice(arrivals) == (0, 0, 0)
        for frame, (start, end) in zip(frames, ranges, strict=True):
            assert frame["date"].min().isoformat() == start and frame["date"].max().isoformat() == end
        assert client.spent == server.service.spent


# -- across processes ------------------------------------------------------------------------

HOLDER = """
import json, sys
from datetime import UTC, date, datetime
import storeframes as sf

args = json.loads(sys.argv[1])
today = date.fromisoformat(args["today"])
with sf.Client(args["key"], base_url=args["base_url"], cache_dir=args["folder"], progress=False,
               clock=lambda: datetime.combine(today, datetime.now(UTC).time(), UTC)) as client:
    client.metadata_frame(args["apps"])
print("finished")
"""


@pytest.mark.timeout(120)
@pytest.mark.processes
def test_a_process_killed_while_holding_a_lease_does_not_block_the_others(make_client, tmp_path):
    folder = tmp_path / "cache"
    apps = APPS[:5]
    with SandboxServer(port=0, today=SANDBOX_TODAY, latency=1.5) as server:
        args = {"key": SANDBOX_KEY, "base_url": server.base_url, "folder": str(folder), "apps": apps}
        args["today"] = SANDBOX_TODAY.isoformat()
        env = child_env()
        child = subprocess.Popen(
            [sys.executable, "-c", HOLDER, json.dumps(args)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        try:
            deadline = time.monotonic() + 60
            while not server.service._recent:  # the child holds the lease and its request is in flight
                assert child.poll() is None, child.stderr.read() if child.stderr else ""
                assert time.monotonic() < deadline
                time.sleep(0.01)
            done: list[pl.DataFrame] = []
            with make_client(server=server, cache_dir=folder, **ON_LOOPBACK) as client:
                waiter = threading.Thread(target=lambda: done.append(client.metadata_frame(apps)))
                waiter.start()
                time.sleep(0.3)
                assert not done  # waiting for the child's lease
                os.kill(child.pid, signal.SIGKILL)
                waiter.join(timeout=60)
        finally:
            if child.poll() is None:
                child.kill()
            child.communicate(timeout=30)  # its pipes read to the end and closed
        assert child.returncode == -signal.SIGKILL
        assert done and done[0]["app_id"].to_list() == apps
        # the killed child's request may have been answered (the server does not know it died): at most two
        assert 1 <= len(server.service.arrivals) <= 2


@pytest.mark.processes
def test_file_leases_exclude_other_processes_and_share_a_stripe_within_one(tmp_path):
    leases = FileLeases(tmp_path)
    names = [f"metadata|service|{{}}|{n}" for n in range(2000)]
    first: dict[int, str] = {}
    a, b = next((first[s], n) for n in names if (s := leases._stripe(n)) in first or first.setdefault(s, n) is None)
    held = leases.try_take(names[0])
    assert held is not None
    ha, hb = leases.try_take(a), leases.try_take(b)  # two names on one file, both taken by this process
    assert ha is not None and hb is not None
    leases.release(ha)
    leases.release(hb)
    probe = """
import sys
from storeframes.coord.file_leases import FileLeases
leases = FileLeases(sys.argv[1])
handle = leases.try_take(sys.argv[2])
if handle is not None:
    leases.release(handle)
print(handle is None, leases.wait(sys.argv[2], 0.2))
"""
    env = child_env()
    run = [sys.executable, "-c", probe, str(tmp_path), names[0]]
    assert subprocess.run(run, env=env, capture_output=True, text=True, check=True).stdout.split() == [
        "True",
        "False",
    ]
    leases.release(held)
    assert subprocess.run(run, env=env, capture_output=True, text=True, check=True).stdout.split() == [
        "False",
        "True",
    ]


def test_in_process_flights_hand_the_holders_answers_to_the_waiters():
    leases = Leases()
    held, busy = leases.take(["a", "b"])
    assert set(held) == {"a", "b"} and busy == {}
    again, busy = leases.take(["a", "c"])
    assert set(again) == {"c"} and set(busy) == {"a"} and busy["a"] is not None
    got: list[Any] = []
    waiter = threading.Thread(target=lambda: got.extend(leases.wait("a", busy["a"])))
    waiter.start()
    fetched = ([], [({"apps": "a"}, "a")])
    leases.release(held["a"], [fetched])
    waiter.join(timeout=10)
    assert got == [fetched]
    leases.release(held["a"], [])  # a second release changes nothing
    for lease in (held["b"], again["c"]):
        leases.release(lease)
    assert set(leases.take(["a", "b", "c"])[0]) == {"a", "b", "c"}


# -- leases in Redis -----------------------------------------------------------------------------


@pytest.mark.processes
@pytest.mark.redis
def test_redis_leases_exclude_expire_when_their_holder_dies_and_hold_no_token(redis_url):  # noqa: F811
    import redis

    connection = redis.Redis.from_url(redis_url)
    one, two = RedisLeases(RedisCoordinator(redis_url), "space"), RedisLeases(RedisCoordinator(redis_url), "space")
    handle = one.try_take("metadata|service|{}|1")
    assert handle is not None and two.try_take("metadata|service|{}|1") is None
    assert not two.wait("metadata|service|{}|1", 0.1)
    one.release(handle)
    assert two.wait("metadata|service|{}|1", 1.0)

    # a holder that dies: its lease lapses after the TTL, nobody has to release it
    holder = """
import os, signal, sys
from storeframes.coord.redis import RedisCoordinator, RedisLeases
RedisLeases.TTL = 0.5
leases = RedisLeases(RedisCoordinator(sys.argv[1]), "space")
assert leases.try_take("k") is not None
print("held", flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""
    env = child_env()
    child = subprocess.run([sys.executable, "-c", holder, redis_url], env=env, capture_output=True, text=True)
    assert child.returncode == -signal.SIGKILL and "held" in child.stdout
    assert two.try_take("k") is None
    started = time.monotonic()
    assert two.wait("k", 5.0)
    assert time.monotonic() - started < 2.0
    for key in connection.keys("*"):
        assert SANDBOX_KEY.encode() not in key and b"|" not in key  # names are hashed


@pytest.mark.redis
def test_a_renewed_redis_lease_outlives_its_ttl_while_held(redis_url, monkeypatch):  # noqa: F811
    monkeypatch.setattr(RedisLeases, "TTL", 0.6)
    leases = RedisLeases(RedisCoordinator(redis_url), "renew")
    handle = leases.try_take("x")
    time.sleep(1.5)  # more than two TTLs: only the renewals keep it
    assert leases.try_take("x") is None
    leases.release(handle)
    again = leases.try_take("x")
    assert again is not None
    leases.release(again)  # nothing left for the keeper to renew once the test's server is gone


def test_a_large_cold_call_holds_few_lock_files_at_a_time(make_client, tmp_path, monkeypatch):
    held: list[int] = []
    take = FileLeases.try_take

    def counting(self: FileLeases, name: str) -> Any:
        handle = take(self, name)
        held.append(len(self._held))
        return handle

    monkeypatch.setattr(FileLeases, "try_take", counting)
    apps = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US][:300]
    with (
        SandboxServer(port=0, today=SANDBOX_TODAY) as server,
        make_client(server=server, cache_dir=tmp_path, max_workers=4, **ON_LOOPBACK) as client,
    ):
        assert client.metadata_frame(apps).height == 300
        assert len(server.service.arrivals) == 60
    # a lease is held only while its request is in flight: at most 4 threads x 5 apps, not 300 open files
    assert held and max(held) <= 4 * 5
