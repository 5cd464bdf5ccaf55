"""The lease contract, over every backend with the same assertions.

The backends: the process's own flights (a cache nobody else sees), lock files in a
folder (:class:`~storeframes.coord.file_leases.FileLeases`), keys of a real Redis server on
loopback (:class:`~storeframes.coord.redis.RedisLeases`, tests/_redis.py) and objects of
a bucket on moto's S3 server (:class:`~storeframes.coord.bucket_leases.ObjectLeases`,
tests/_s3.py). Each is used the way a client uses it, through
:class:`~storeframes.coord.leases.Leases`; a *taker* is a caller of its own: another
thread of the process for the flights, as good as another process for the others.

What every backend promises: of several takers of one name exactly one wins (threads,
and processes where the backend is shared between them); a release lets a waiter
through; a wait while the lease is held ends in an error when its time is up. Where
a lease can outlive its holder: a dead holder's lease is taken over, and a holder that
lost its lease that way leaves the new holder's alone when it releases.
"""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

import storeframes as sf
from storeframes.coord.bucket_leases import ObjectLeases
from storeframes.coord.file_leases import FileLeases
from storeframes.coord.leases import Leases, Remote
from storeframes.coord.redis import RedisCoordinator, RedisLeases
from tests._children import child_env
from tests._redis import redis_url  # noqa: F401 - the fixture
from tests._s3 import s3_bucket, s3_server  # noqa: F401 - the fixtures
from tests.conftest import ROOT

pytestmark = [pytest.mark.redis, pytest.mark.s3]

TTL = 1.5
"""The lease lifetime of the backends that have one, in the tests of holders that die or stall: a lease lapses
this long after its last renewal (a live holder renews it every third of that; elsewhere they keep 15 s)."""
NAME = "metadata|service|{}|284882215"
BACKENDS = ["process", "files", "redis", "objects"]


def _remote(spec: dict[str, Any]) -> Remote | None:
    """A new backend object for ``spec`` (as the kit and the child processes make them): a caller of its own."""
    kind = spec["kind"]
    if kind == "files":
        return FileLeases(spec["folder"])
    if kind == "redis":
        return RedisLeases(RedisCoordinator(spec["url"]), "contract")
    if kind == "objects":
        from storeframes.cache.stores import store_for

        return ObjectLeases(store_for(spec["url"], spec["options"]))
    raise ValueError(f"no backend {kind!r} outside the process")


@dataclass
class Kit:
    """One backend, and how the contract's takers reach it."""

    kind: str
    taker: Callable[[], Leases]
    """A caller of its own: its own connection or files, as another process would have (the flights: the
    process's one table, which every thread of it shares)."""
    spec: dict[str, Any] | None
    """How a child process reaches the backend; None when nothing outside the process does."""
    expires: bool
    """Whether a lease lapses when its holder stops renewing it (a lock file's too: its heartbeat ages; the
    process's flights end with their holder)."""


@pytest.fixture(params=BACKENDS)
def kit(request, tmp_path) -> Kit:
    kind = request.param
    if kind == "process":
        shared = Leases()
        return Kit(kind, lambda: shared, None, expires=False)
    if kind == "files":
        spec: dict[str, Any] = {"kind": kind, "folder": str(tmp_path / "leases")}
    elif kind == "redis":
        spec = {"kind": kind, "url": request.getfixturevalue("redis_url")}
    else:
        bucket = request.getfixturevalue("s3_bucket")
        spec = {"kind": kind, "url": bucket.url, "options": bucket.storage_options}
    return Kit(kind, lambda: Leases(_remote(spec)), spec, expires=True)


def _release_all(held: list[tuple[Leases, Any]]) -> None:
    for leases, lease in held:
        leases.release(lease)


# -- one winner -----------------------------------------------------------------------------------------


def _take_together(takers: list[Leases], name: str) -> tuple[list[tuple[Leases, Any]], list[str]]:
    """Every taker takes ``name`` at once, each on a thread of its own: (the leases won, the names found busy)."""
    barrier, won, busy = threading.Barrier(len(takers)), [], []

    def take(leases: Leases) -> None:
        barrier.wait(timeout=30)
        held, others = leases.take([name])
        won.extend((leases, lease) for lease in held.values())
        busy.extend(others)

    threads = [threading.Thread(target=take, args=(leases,)) for leases in takers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return won, busy


def test_of_many_threads_taking_one_name_exactly_one_wins(kit):
    takers = [kit.taker() for _ in range(6)]
    for r in range(3):
        name = f"{NAME}|{r}"
        won, busy = _take_together(takers, name)
        assert len(won) == 1 and busy == [name] * (len(takers) - 1)
        _release_all(won)
        again, free = takers[-1].take([name])  # free once released
        assert list(again) == [name] and free == {}
        _release_all([(takers[-1], again[name])])


def _race(spec: dict[str, Any], n: int, rounds: int, barrier: Any, results: Any) -> None:
    leases = Leases(_remote(spec))
    for r in range(rounds):
        barrier.wait(timeout=60)
        held, _ = leases.take([f"contested|{r}"])
        results.put((r, n, bool(held)))
    barrier.wait(timeout=60)  # nobody ends (dropping its leases) before every one has tried the last name


@pytest.mark.processes
def test_of_several_processes_taking_one_name_exactly_one_wins(kit):
    if kit.spec is None:
        pytest.skip("the process's flights are seen by its own threads only")
    context, count, rounds = multiprocessing.get_context("spawn"), 3, 3
    barrier, results = context.Barrier(count), context.Queue()
    processes = [context.Process(target=_race, args=(kit.spec, n, rounds, barrier, results)) for n in range(count)]
    for process in processes:
        process.start()
    try:
        outcomes = [results.get(timeout=120) for _ in range(count * rounds)]
    finally:
        for process in processes:
            process.join(timeout=60)
    assert [process.exitcode for process in processes] == [0] * count
    assert sorted(r for r, _, won in outcomes if won) == list(range(rounds))


# -- waiting ----------------------------------------------------------------------------------------------


def test_a_release_lets_a_waiter_through_and_the_name_is_free_again(kit):
    holder, waiter = kit.taker(), kit.taker()
    held, _ = holder.take([NAME])
    assert list(held) == [NAME]
    mine, busy = waiter.take([NAME])
    assert mine == {} and list(busy) == [NAME]
    got: list[Any] = []
    thread = threading.Thread(target=lambda: got.append(waiter.wait(NAME, busy[NAME], timeout=30)))
    thread.start()
    time.sleep(0.3)
    assert not got and thread.is_alive()  # still held
    released = time.monotonic()
    holder.release(held[NAME], [])
    thread.join(timeout=30)
    assert got == [[]] and time.monotonic() - released < 5.0
    again, busy = waiter.take([NAME])
    assert list(again) == [NAME] and busy == {}
    waiter.release(again[NAME])


def test_a_wait_while_the_lease_is_held_ends_when_its_time_is_up(kit):
    holder, waiter = kit.taker(), kit.taker()
    held, _ = holder.take([NAME])
    _, busy = waiter.take([NAME])
    started = time.monotonic()
    with pytest.raises(sf.StoreframesError, match=r"waited 0.3 s for another caller fetching the same data \(metadata"):
        waiter.wait(NAME, busy[NAME], timeout=0.3)
    assert 0.3 <= time.monotonic() - started < 5.0
    holder.release(held[NAME])
    holder.release(held[NAME])  # a second release changes nothing
    again, _ = waiter.take([NAME])
    assert list(again) == [NAME]
    waiter.release(again[NAME])


# -- holders that die or stall -----------------------------------------------------------------------------

_HOLDER = """
import json, sys
from tests.coord.test_lease_contract import TTL, _remote
from storeframes.coord.bucket_leases import ObjectLeases
from storeframes.coord.leases import Leases
from storeframes.coord.file_leases import FileLeases
from storeframes.coord.redis import RedisCoordinator, RedisLeases
RedisLeases.TTL = ObjectLeases.TTL = FileLeases.TTL = TTL
leases = Leases(_remote(json.loads(sys.argv[1])))
held, _ = leases.take([sys.argv[2]])
print("held" if held else "busy", flush=True)
sys.stdin.readline()  # killed here
"""


@pytest.fixture
def short_ttl(monkeypatch):
    """Leases that lapse :data:`TTL` after their last renewal."""
    monkeypatch.setattr(RedisLeases, "TTL", TTL)
    monkeypatch.setattr(ObjectLeases, "TTL", TTL)
    monkeypatch.setattr(FileLeases, "TTL", TTL)


@pytest.mark.processes
def test_the_lease_of_a_holder_that_died_is_taken_over(kit, short_ttl):
    if kit.spec is None:
        pytest.skip("a holder of the process's flights dies with the process")
    child = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, json.dumps(kit.spec), NAME],
        cwd=ROOT,
        env=child_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stderr is not None
        line = child.stdout.readline()
        assert line.strip() == "held", line or child.stderr.read()[-2000:]
        taker = kit.taker()
        time.sleep(2 * TTL)  # longer than a lease lives unrenewed: a live holder keeps it
        mine, busy = taker.take([NAME])
        assert mine == {} and list(busy) == [NAME]
        child.kill()
        child.wait(timeout=30)
        died = time.monotonic()
        assert taker.wait(NAME, busy[NAME], timeout=30) == []
        assert time.monotonic() - died < 10.0  # a TTL or two, not the 900 s a wait may last
        held, busy = taker.take([NAME])
        assert list(held) == [NAME] and busy == {}
        taker.release(held[NAME])
    finally:
        if child.poll() is None:
            child.kill()
        child.wait(timeout=30)
        for stream in (child.stdin, child.stdout, child.stderr):
            if stream is not None:
                stream.close()


def test_a_release_after_a_takeover_leaves_the_new_holders_lease_alone(kit, short_ttl):
    if not kit.expires:
        pytest.skip("its leases never lapse while their holder lives")
    stalled, newcomer, third = kit.taker(), kit.taker(), kit.taker()
    assert stalled.remote is not None
    stalled.remote._keep = lambda: None  # a holder whose renewals never get through
    old, _ = stalled.take([NAME])
    assert list(old) == [NAME]
    _, busy = newcomer.take([NAME])
    assert newcomer.wait(NAME, busy[NAME], timeout=30) == []  # it lapsed
    new, _ = newcomer.take([NAME])
    assert list(new) == [NAME]
    stalled.release(old[NAME])  # too late: the lease is the newcomer's now
    mine, busy = third.take([NAME])
    assert mine == {} and list(busy) == [NAME]
    newcomer.release(new[NAME])
    assert third.wait(NAME, busy[NAME], timeout=30) == []
    final, _ = third.take([NAME])
    assert list(final) == [NAME]
    third.release(final[NAME])
