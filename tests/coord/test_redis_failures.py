"""A team's Redis when it fails: down, a rotated password, killed mid-call, restarted empty, a key overwritten,
and members whose wall clocks step.

Every scenario runs a real ``redis-server`` on loopback (tests/_redis.py) and the sandbox on
loopback, which records each request as it arrives.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

import storeframes as sf
from storeframes.coord import ENV_COORDINATOR
from storeframes.coord.redis import RedisCoordinator, RedisLeases
from storeframes.sandbox import SANDBOX_KEY, SandboxServer, World
from tests._children import child_env
from tests._redis import RestartableRedis, redis_server
from tests._secrets import chain, exposures
from tests._summary import faults_of, max_in_window, paid_twice, record
from tests.conftest import SANDBOX_TODAY, sandbox_clock

pytestmark = pytest.mark.redis

WORLD = World(0)
APPS = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US][:40]
PASSWORD = "rotated-out-pass-7731"


def _options(url: str, rate: tuple[int, float]) -> dict[str, Any]:
    return {"coordinator": url, "rate_limit": rate, "backoff": (0.01, 0.1), "clock": sandbox_clock, "cache_dir": False}


def _no_redis_error(exc: BaseException) -> None:
    kinds = [type(e) for e in chain(exc)]
    assert not [k for k in kinds if k.__module__.startswith("redis")], kinds


@pytest.fixture
def server() -> Iterator[SandboxServer]:
    with SandboxServer(port=0, today=SANDBOX_TODAY) as running:
        yield running


def test_a_redis_that_is_down_is_a_coordination_error_naming_the_setting_and_nothing_is_paid(
    make_client, server, tmp_path
):
    process, url = redis_server(tmp_path)
    process.kill()
    process.communicate(timeout=30)  # its pipe read to the end and closed
    down = url.replace("redis://", f"redis://:{PASSWORD}@")
    client = make_client(server=server, **_options(down, (6, 1.0)))
    with pytest.raises(sf.CoordinationError) as raised:
        client.metadata_frame(APPS[:3])
    message = str(raised.value)
    assert ENV_COORDINATOR in message and "redis://:***@127.0.0.1" in message and "running" in message
    assert not exposures(raised.value, PASSWORD)
    _no_redis_error(raised.value)
    assert server.service.arrivals == []
    record("backend failure: Redis down", requests=0, rows=0, paid_twice=0)


def test_a_rotated_redis_password_is_refused_with_no_password_in_any_frame_local(make_client, server, tmp_path):
    process, url = redis_server(tmp_path, password="the-new-one")
    try:
        old = url.replace("the-new-one", PASSWORD)
        client = make_client(server=server, **_options(old, (6, 1.0)))
        with pytest.raises(sf.CoordinationError) as raised:
            client.metadata_frame(APPS[:3])
        message = str(raised.value)
        assert "refused the password" in message and ENV_COORDINATOR in message and "redis://:***@" in message
        assert not exposures(raised.value, PASSWORD), exposures(raised.value, PASSWORD)
        assert not exposures(raised.value, "the-new-one")
        _no_redis_error(raised.value)
        assert server.service.arrivals == []
    finally:
        process.kill()
        process.communicate(timeout=30)  # its pipes read to the end and closed


@pytest.mark.heavy
def test_redis_killed_in_the_middle_of_a_call_stops_it_with_a_coordination_error(make_client, tmp_path):
    redis = RestartableRedis(tmp_path, password=PASSWORD)
    try:
        with SandboxServer(port=0, today=SANDBOX_TODAY) as server:
            client = make_client(server=server, **_options(redis.url, (2, 0.5)))
            failure: list[BaseException] = []

            def call() -> None:
                try:
                    for app in APPS[:20]:
                        client.get("metadata", apps=[app], country="us")
                except BaseException as exc:
                    failure.append(exc)

            caller = threading.Thread(target=call)
            caller.start()
            while len(server.service.arrivals) < 3:
                time.sleep(0.01)
            redis.kill()
            caller.join(timeout=120)
            assert failure and isinstance(failure[0], sf.CoordinationError), failure
            assert "redis://:***@" in str(failure[0]) and ENV_COORDINATOR in str(failure[0])
            assert not exposures(failure[0], PASSWORD)
            _no_redis_error(failure[0])
            arrivals = server.service.arrivals
            assert len(arrivals) < 20
            record(
                "backend failure: Redis killed mid-call",
                faults={"redis killed": 1},
                requests=len(arrivals),
                rows=0,
                paid_twice=paid_twice(arrivals)[0],
                window=(max_in_window([a.time for a in arrivals], 0.5), 2),
            )
    finally:
        redis.kill()


@pytest.mark.heavy
def test_a_restarted_redis_does_not_let_a_second_full_window_through(make_client, tmp_path):
    limit, window = 6, 2.0
    redis = RestartableRedis(tmp_path)
    try:
        with SandboxServer(port=0, today=SANDBOX_TODAY) as server:
            client = make_client(server=server, **_options(redis.url, (limit, window)))
            for app in APPS[:limit]:  # the window is full
                client.get("metadata", apps=[app], country="us")
            redis.restart()  # empty: nothing was saved
            for app in APPS[limit : 2 * limit]:
                client.get("metadata", apps=[app], country="us")
            arrivals = server.service.arrivals
            most = max_in_window([a.time for a in arrivals], window)
            assert len(arrivals) == 2 * limit and faults_of(arrivals) == {}
            assert most <= limit, f"{most} requests in one window of {window:g} s after the restart (limit {limit})"
            record(
                "backend failure: Redis restarted (emptied)",
                faults={"redis restarted": 1},
                requests=len(arrivals),
                rows=0,
                paid_twice=paid_twice(arrivals)[0],
                window=(most, limit),
            )
    finally:
        redis.kill()


@pytest.mark.heavy
def test_a_window_or_lease_key_overwritten_with_another_type_is_repaired_not_fatal(make_client, tmp_path):
    import redis as redispy

    limit, window = 4, 1.0
    redis = RestartableRedis(tmp_path)
    try:
        with SandboxServer(port=0, today=SANDBOX_TODAY) as server:
            client = make_client(server=server, **_options(redis.url, (limit, window)))
            client.get("metadata", apps=[APPS[0]], country="us")
            connection = redispy.Redis.from_url(redis.url)
            done = [k.decode() for k in connection.keys("storeframes:window:*:done")]
            assert len(done) == 1
            keys = [done[0], done[0].replace(":done", ":flight")]
            for key in keys:  # someone SETs our keys by hand
                connection.delete(key)
                connection.set(key, "not a sorted set")
            for app in APPS[1 : 1 + 2 * limit]:
                client.get("metadata", apps=[app], country="us")
            arrivals = server.service.arrivals
            most = max_in_window([a.time for a in arrivals], window)
            assert len(arrivals) == 1 + 2 * limit and most <= limit
            # a lease key of the wrong type (a hash, without expiry) does not block its name for good
            leases = RedisLeases(RedisCoordinator(redis.url), "space")
            connection.hset(leases._key("x"), "a", "b")
            handle = leases.try_take("x")
            assert handle is not None and leases.confirm(handle)
            leases.release(handle)
            record(
                "backend failure: Redis key of the wrong type",
                faults={"WRONGTYPE key": len(keys) + 1},
                requests=len(arrivals),
                rows=0,
                paid_twice=paid_twice(arrivals)[0],
                window=(most, limit),
            )
    finally:
        redis.kill()


MEMBER = """
import json, sys, time
args = json.loads(sys.argv[1])
wall = time.time
time.time = lambda: wall() + args["step"]  # this machine's wall clock is off by a step
from datetime import UTC, date, datetime
import storeframes as sf
today = date.fromisoformat(args["today"])
with sf.Client(args["key"], base_url=args["base_url"], coordinator=args["url"], cache_dir=False, progress=False,
               rate_limit=(args["limit"], args["window"]), backoff=(0.01, 0.1),
               clock=lambda: datetime.combine(today, datetime.now(UTC).time(), UTC)) as client:
    for app in args["apps"]:
        client.get("metadata", apps=[app], country="us")
print("finished")
"""


@pytest.mark.heavy
@pytest.mark.processes
def test_redis_members_whose_wall_clocks_step_share_one_window(tmp_path):
    """The window is dated by the Redis server's clock (TIME in its scripts): a member's wall clock a whole
    hour ahead or behind, or stepping, changes nothing."""
    limit, window = 6, 1.0
    redis = RestartableRedis(tmp_path)
    try:
        with SandboxServer(port=0, today=SANDBOX_TODAY) as server:
            children = []
            for i, step in enumerate((3600.0, -3600.0, 0.0)):
                args = {
                    "key": SANDBOX_KEY,
                    "base_url": server.base_url,
                    "url": redis.url,
                    "today": SANDBOX_TODAY.isoformat(),
                    "limit": limit,
                    "window": window,
                    "step": step,
                    "apps": APPS[i * 6 : i * 6 + 6],
                }
                children.append(
                    subprocess.Popen(
                        [sys.executable, "-c", MEMBER, json.dumps(args)],
                        env=child_env(),
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                    )
                )
            for child in children:
                out, err = child.communicate(timeout=120)
                assert child.returncode == 0 and b"finished" in out, err.decode()[-2000:]
            arrivals = server.service.arrivals
            most = max_in_window([a.time for a in arrivals], window)
            assert len(arrivals) == 18 and faults_of(arrivals) == {}
            assert most <= limit
            record(
                "clock step: Redis members (+1 h, -1 h, none)",
                faults={"clock step": 2},
                requests=len(arrivals),
                rows=0,
                paid_twice=paid_twice(arrivals)[0],
                window=(most, limit),
            )
    finally:
        redis.kill()
