"""A lease holder stopped (Ctrl-Z, a laptop asleep): on a bucket cache, on a folder cache, with Redis.

A real child process takes a lease and waits for its slot of the window (the machine's,
which the test shares, or the Redis server's); the test
stops it with SIGSTOP past the lease's TTL, fetches the same apps itself (taking the
lapsed lease over), and resumes the child with SIGCONT. The child must send nothing for
them: it confirms its lease right before sending, finds it taken over, and reads the
other member's answer from the cache.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from storeframes.coord.bucket_leases import ObjectLeases
from storeframes.coord.file_leases import FileLeases
from storeframes.coord.redis import RedisLeases
from storeframes.sandbox import SANDBOX_KEY, SandboxServer, World
from tests._children import child_env
from tests._redis import RestartableRedis
from tests._summary import max_in_window, paid_twice, record
from tests.conftest import SANDBOX_TODAY, sandbox_clock

WORLD = World(0)
APPS = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US][:10]
LIMIT, WINDOW, TTL = 2, 4.0, 1.0

HOLDER = """
import json, sys
from datetime import UTC, date, datetime
from storeframes.coord.bucket_leases import ObjectLeases
from storeframes.coord.file_leases import FileLeases
from storeframes.coord.redis import RedisLeases
ObjectLeases.TTL = FileLeases.TTL = RedisLeases.TTL = %(ttl)r
import storeframes as sf
args = json.loads(sys.argv[1])
today = date.fromisoformat(args["today"])
with sf.Client(args["key"], base_url=args["base_url"], cache_dir=args["cache"], progress=False,
               coordinator=args["coordinator"],
               rate_limit=(args["limit"], args["window"]), backoff=(0.01, 0.1),
               clock=lambda: datetime.combine(today, datetime.now(UTC).time(), UTC)) as client:
    for app in args["fill"]:  # the window is full: the next request waits for a slot, holding its lease
        client.get("metadata", apps=[app], country="us")
    print("filled", flush=True)
    frame = client.metadata_frame(args["apps"])
    print(json.dumps(sorted(frame["app_id"].to_list())), flush=True)
print("finished")
"""


@contextmanager
def _stopped_holder(
    server: SandboxServer,
    cache: str,
    holds: Callable[[], bool],
    env: dict[str, str],
    pids: list[int] | None = None,
    coordinator: str | None = None,
) -> Iterator[tuple[int, Callable[[], tuple[bytes, bytes]]]]:
    """A child holding the lease on the wanted apps, stopped past the TTL; yields its pid, and what resumes
    it and answers its output."""
    args: dict[str, Any] = {
        "key": SANDBOX_KEY,
        "base_url": server.base_url,
        "cache": cache,
        "coordinator": coordinator,
        "today": SANDBOX_TODAY.isoformat(),
        "limit": LIMIT,
        "window": WINDOW,
        "fill": APPS[:LIMIT],
        "apps": APPS[LIMIT : LIMIT + 3],
    }
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER % {"ttl": TTL}, json.dumps(args)],
        env=child_env(**env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )

    if pids is not None:
        pids.append(child.pid)

    def resume() -> tuple[bytes, bytes]:
        os.kill(child.pid, signal.SIGCONT)
        out, err = child.communicate(timeout=90)
        assert child.returncode == 0, err.decode()[-3000:]
        return out, err

    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == b"filled", child.stderr.read() if child.stderr else ""
        deadline = time.monotonic() + 30
        while not holds():  # it holds the lease, waiting for its slot
            assert time.monotonic() < deadline and child.poll() is None
            time.sleep(0.005)
        os.kill(child.pid, signal.SIGSTOP)
        time.sleep(TTL * 2)  # its lease lapses: nobody renews it
        yield child.pid, resume
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGCONT)
            child.kill()
        child.communicate(timeout=30)  # its pipes read to the end and closed, whoever ended it


def _check(scenario: str, server: SandboxServer, frame: Any, out: bytes) -> None:
    wanted = APPS[LIMIT : LIMIT + 3]
    assert sorted(frame["app_id"].to_list()) == sorted(wanted)
    assert json.loads(out.splitlines()[0]) == sorted(wanted)
    arrivals = server.service.arrivals
    credits, again, _ = paid_twice(arrivals)
    sent_for = [a for a in arrivals if set(a.params.get("apps", "").split(",")) & set(wanted)]
    assert credits == 0 and again == 0 and len(sent_for) == 1, [a.params for a in arrivals]
    most = max_in_window([a.time for a in arrivals], WINDOW)
    assert most <= LIMIT
    record(
        scenario,
        faults={"SIGSTOP": 1},
        requests=len(arrivals),
        rows=frame.height,
        paid_twice=credits,
        window=(most, LIMIT),
    )


@pytest.mark.heavy
@pytest.mark.timeout(180)
@pytest.mark.processes
@pytest.mark.s3
def test_a_bucket_lease_holder_stopped_past_its_ttl_does_not_pay_again_when_resumed(
    make_client, s3_bucket, monkeypatch
):
    monkeypatch.setattr(ObjectLeases, "TTL", TTL)
    wanted = APPS[LIMIT : LIMIT + 3]

    def holds() -> bool:
        return any("/leases/" in key for key in s3_bucket.objects())

    with SandboxServer(port=0, today=SANDBOX_TODAY) as server:
        with _stopped_holder(server, s3_bucket.url, holds, s3_bucket.env) as (_, resume):
            options = {"rate_limit": (LIMIT, WINDOW), "backoff": (0.01, 0.1), "clock": sandbox_clock}
            with make_client(
                server=server, cache_dir=s3_bucket.url, storage_options=s3_bucket.storage_options, **options
            ) as other:
                frame = other.metadata_frame(wanted)
            out, _ = resume()
        _check("stopped holder: bucket lease (SIGSTOP past the TTL)", server, frame, out)


@pytest.mark.heavy
@pytest.mark.timeout(180)
@pytest.mark.processes
@pytest.mark.redis
def test_a_redis_lease_holder_stopped_past_its_ttl_does_not_pay_again_when_resumed(make_client, tmp_path, monkeypatch):
    import redis as redispy

    monkeypatch.setattr(RedisLeases, "TTL", TTL)
    redis = RestartableRedis(tmp_path / "redis")
    folder = tmp_path / "cache"
    wanted = APPS[LIMIT : LIMIT + 3]
    try:
        connection = redispy.Redis.from_url(redis.url)

        def holds() -> bool:
            return bool(connection.keys("storeframes:lease:*"))

        with SandboxServer(port=0, today=SANDBOX_TODAY) as server:
            with _stopped_holder(server, str(folder), holds, {}, coordinator=redis.url) as (_, resume):
                options = {"rate_limit": (LIMIT, WINDOW), "backoff": (0.01, 0.1), "clock": sandbox_clock}
                with make_client(server=server, cache_dir=folder, coordinator=redis.url, **options) as other:
                    frame = other.metadata_frame(wanted)
                out, _ = resume()
            _check("stopped holder: Redis lease (SIGSTOP past the TTL)", server, frame, out)
    finally:
        redis.kill()


@pytest.mark.heavy
@pytest.mark.timeout(180)
@pytest.mark.processes
def test_a_folder_lease_holder_stopped_past_its_ttl_is_taken_over_and_does_not_pay_again_when_resumed(
    make_client, tmp_path, monkeypatch, caplog
):
    monkeypatch.setattr(FileLeases, "TTL", TTL)
    monkeypatch.setattr(FileLeases, "NOTE_AFTER", 0.0)
    folder = tmp_path / "cache"
    wanted = APPS[LIMIT : LIMIT + 3]
    pids: list[int] = []

    def child() -> int:
        return pids[0]

    def holds() -> bool:  # the child holds a lease's lock file (as /proc/locks shows: nothing is touched)
        inodes = {path.stat().st_ino for path in (folder / "leases").glob("*.lock")}
        return any(int(lock[2].rsplit(":", 1)[-1]) in inodes for lock in _flocks() if int(lock[1]) == child())

    with SandboxServer(port=0, today=SANDBOX_TODAY) as server:
        with _stopped_holder(server, str(folder), holds, {}, pids) as (pid, resume):
            options = {"rate_limit": (LIMIT, WINDOW), "backoff": (0.01, 0.1), "clock": sandbox_clock}
            started = time.monotonic()
            with caplog.at_level(logging.WARNING, logger="storeframes"):
                with make_client(server=server, cache_dir=folder, **options) as other:
                    frame = other.metadata_frame(wanted)
            assert time.monotonic() - started < WINDOW + 5  # not the 900 s of waiting for the lock file
            taken = [r.getMessage() for r in caplog.records if "took over a lease" in r.getMessage()]
            assert taken and f"from process {pid} on {socket.gethostname()}" in taken[0], caplog.text
            out, err = resume()
        assert b"taken over by another caller" in err, err.decode()[-3000:]
        _check("stopped holder: folder lease (SIGSTOP past the TTL)", server, frame, out)


@pytest.mark.heavy
@pytest.mark.timeout(60)
@pytest.mark.processes
def test_a_caller_waiting_for_a_folder_lease_says_which_process_holds_it(tmp_path, monkeypatch, caplog):
    """A live holder is not taken over; a waiter says who holds it (pid and host) instead of waiting silently."""
    monkeypatch.setattr(FileLeases, "TTL", TTL)
    monkeypatch.setattr(FileLeases, "NOTE_AFTER", 0.2)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDS_A_LEASE % {"ttl": TTL}, str(tmp_path / "leases")],
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == b"held", holder.stderr.read() if holder.stderr else ""
        leases = FileLeases(tmp_path / "leases")
        assert leases.try_take("metadata|us|1") is None
        with caplog.at_level(logging.WARNING, logger="storeframes"):
            assert not leases.wait("metadata|us|1", timeout=TTL * 3)  # beating all along: never taken over
        assert leases.try_take("metadata|us|1") is None
        notes = [r.getMessage() for r in caplog.records]
        assert len(notes) == 1 and f"held by process {holder.pid} on {socket.gethostname()}" in notes[0], notes
        holder.kill()  # a dead holder's lock file is dropped by the system, as before
        holder.wait(timeout=30)
        assert leases.wait("metadata|us|1", timeout=10)
        handle = leases.try_take("metadata|us|1")
        assert handle is not None and leases.confirm(handle)
        leases.release(handle)
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.communicate(timeout=30)  # its pipes read to the end and closed, whoever ended it


def _flocks() -> list[tuple[str, str, str]]:
    """The flock locks of this machine: (type, pid, device:inode), from /proc/locks."""
    locks = []
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if len(fields) > 5 and fields[1] == "FLOCK":
            locks.append((fields[3], fields[4], fields[5]))
    return locks


HOLDS_A_LEASE = """
import sys, time
from storeframes.coord.file_leases import FileLeases
FileLeases.TTL = %(ttl)r
leases = FileLeases(sys.argv[1])
assert leases.try_take("metadata|us|1") is not None
print("held", flush=True)
time.sleep(600)
"""


def test_a_heartbeat_of_a_lease_released_meanwhile_writes_nothing_and_warns_nothing(tmp_path, caplog):
    """The keeper lists the held leases, then beats them outside its lock: a lease released in between
    used to get a "held" heartbeat over its "free" record (a waiter then waited a TTL for nobody) and,
    once the stripe was taken again, a warning that it had lapsed (6 to 8 times in a month of tracker runs)."""
    leases = FileLeases(tmp_path)
    handle = leases.try_take("search|sandbox-0|{}|photo editor")
    assert handle is not None
    listed = leases._held[handle]  # what the keeper listed before the release
    leases.release(handle)
    with caplog.at_level(logging.WARNING, logger="storeframes"):
        assert leases._beat(handle, listed)  # the keeper's late heartbeat
    generation, record = leases._current(handle)
    assert record is not None and record["state"] == "free"
    started = time.monotonic()
    assert leases.wait("search|sandbox-0|{}|photo editor", timeout=5.0)
    assert time.monotonic() - started < 1.0  # free at once, not after a TTL
    again = leases.try_take("search|sandbox-0|{}|photo editor")
    assert again is not None
    assert leases._beat(handle, listed)
    assert not [r for r in caplog.records if "lapsed" in r.getMessage()]
    assert leases._newest(handle) >= generation
    leases.release(again)
