"""The machine's rate window at the seams: many processes on two base URLs, a damaged or planted file, a
state folder that cannot be used, and a wall clock that steps.

Every scenario runs against the loopback sandbox, which answers 429 past its own strict
sliding window and records each arrival: a window is exceeded when more arrivals than the
limit lie within some window of them. Clients send with ``max_tries=1``, so a 429 is an
error and cannot hide behind a retry.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import storeframes as sf
from storeframes import coord
from storeframes.coord import Coordinator, state_dir
from storeframes.coord import machine as machine_module
from storeframes.coord import window as window_module
from storeframes.coord.base import shared_limiter
from storeframes.coord.machine import STATE_FILE
from storeframes.coord.window import ProcessWindow, SharedLimiter
from storeframes.sandbox import SANDBOX_KEY, SandboxServer, World
from tests._children import child_env
from tests._summary import max_in_window, paid_twice, record
from tests.conftest import ROOT, SANDBOX_TODAY, sandbox_clock

WORLD = World(0)
APPS = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US][:200]
TOKEN = "sk-live-seamwindow0123456789"  # found by the suite's leak check if it is ever written
BASE = "https://api.example.test/api/public/store"
TABLE = getattr(machine_module, "TABLE", "slots")  # the table of slots (earlier versions: "slots", wall-clock times)


def _most(arrivals: list[Any], window: float) -> int:
    return max_in_window([a.time for a in arrivals], window)


# -- several processes, two base URLs, one machine window ----------------------------------------------

MEMBER = """
import json, os, sys
from datetime import UTC, date, datetime
import storeframes as sf

args = json.loads(sys.argv[1])
today = date.fromisoformat(args["today"])
clients = [
    sf.Client(args["key"], base_url=url, cache_dir=False, rate_limit=tuple(args["window"]), max_workers=3,
              max_tries=1, progress=False, clock=lambda: datetime.combine(today, datetime.now(UTC).time(), UTC))
    for url in args["base_urls"]
]
errors, rounds = [], 0
while rounds < (args["rounds"] or 1) or (not args["rounds"] and not os.path.exists(args["stop"])):
    for client in clients:
        try:
            client.metadata_frame(args["apps"])
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
    rounds += 1
    if rounds == 1:
        print("ready", flush=True)
print(json.dumps({"errors": errors, "sent": [c.requests_sent for c in clients],
                  "where": [c.limiter.where for c in clients]}), flush=True)
"""


def _start(args: dict[str, Any]) -> subprocess.Popen[str]:
    run = [sys.executable, "-c", MEMBER, json.dumps(args)]
    return subprocess.Popen(run, cwd=ROOT, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _report(child: subprocess.Popen[str], timeout: float = 150) -> dict[str, Any]:
    """What a MEMBER process reported once it ended (its stderr kept, for a warning or a traceback)."""
    out, err = child.communicate(timeout=timeout)
    assert child.returncode == 0, err
    report: dict[str, Any] = json.loads(out.splitlines()[-1])
    report["stderr"] = err
    return report


@pytest.mark.heavy
@pytest.mark.timeout(240)
@pytest.mark.processes
def test_five_processes_on_two_base_urls_never_find_the_machine_window_malformed(tmp_path):
    """Two long-lived members use both base URLs throughout; three short ones come and go beside them.

    Each member opens the window of its second base URL while the file is in use, and the
    short ones close the file while the long-lived ones go on: the moments that lost the
    long-lived members' SQLite locks, so that the file was checkpointed and its journal
    deleted under them ("database disk image is malformed").
    """
    limit, window = 10, 0.5
    apps = 10  # two requests a call
    stop = tmp_path / "stop"
    with (
        SandboxServer(port=0, today=SANDBOX_TODAY, rate_limit=(limit, window)) as one,
        SandboxServer(port=0, today=SANDBOX_TODAY, rate_limit=(limit, window)) as two,
    ):

        def member(i: int, rounds: int | None) -> dict[str, Any]:
            return {
                "key": SANDBOX_KEY,
                "base_urls": [one.base_url, two.base_url],
                "window": [limit, window],
                "apps": APPS[apps * i : apps * (i + 1)],
                "rounds": rounds,
                "stop": str(stop),
                "today": SANDBOX_TODAY.isoformat(),
            }

        long_lived = [_start(member(i, None)) for i in range(2)]
        children = list(long_lived)
        try:
            for child in long_lived:
                assert child.stdout is not None and child.stdout.readline().strip() == "ready", child.stderr
            first = _start(member(2, 2))  # comes and goes while the long-lived members work
            children.append(first)
            reports = [_report(first)]
            later = [_start(member(i, 3)) for i in (3, 4)]  # opens the file after that
            children += later
            reports += [_report(child) for child in later]
            stop.touch()
            reports += [_report(child) for child in long_lived]
        finally:
            for child in children:
                if child.poll() is None:
                    child.kill()
                    child.wait(timeout=30)
        arrivals = [list(one.service.arrivals), list(two.service.arrivals)]
    errors = [e for r in reports for e in r["errors"]]
    assert not errors, errors[:5]
    assert not [r["stderr"] for r in reports if "malformed" in r["stderr"]]
    assert {w for r in reports for w in r["where"]} == {"machine"}
    sent = sum(sum(r["sent"]) for r in reports)
    assert sent == sum(len(a) for a in arrivals)
    most = max(_most(a, window) for a in arrivals)
    statuses = [a.status for each in arrivals for a in each]
    record(
        "mixed members: two base URLs on one machine window (5 processes)",
        faults={"429": statuses.count(429)},
        requests=sent,
        rows=sent * 5,
        window=(most, limit),
    )
    assert statuses.count(429) == 0
    assert most <= limit


# -- a damaged window file, a planted link, a state folder that cannot be used -------------------------


@pytest.mark.heavy
@pytest.mark.timeout(240)
@pytest.mark.processes
def test_a_damaged_machine_window_is_rebuilt_and_three_processes_keep_the_limit():
    """A window file damaged at rest (a power cut, an earlier version's lost locks) used to leave each
    process a window of its own: together they tripped the limit. Now it is rebuilt, once."""
    limit, window = 6, 0.5
    path = state_dir() / STATE_FILE
    path.write_bytes(b"this is not a SQLite database, it was damaged\n" * 200)
    apps = 30  # six requests each: 18, three windows' worth
    with SandboxServer(port=0, today=SANDBOX_TODAY, rate_limit=(limit, window)) as server:

        def member(i: int) -> dict[str, Any]:
            return {
                "key": SANDBOX_KEY,
                "base_urls": [server.base_url],
                "window": [limit, window],
                "apps": APPS[apps * i : apps * (i + 1)],
                "rounds": 1,
                "today": SANDBOX_TODAY.isoformat(),
            }

        children = [_start(member(i)) for i in range(3)]
        try:
            reports = [_report(child) for child in children]
        finally:
            for child in children:
                if child.poll() is None:
                    child.kill()
                    child.wait(timeout=30)
        arrivals = list(server.service.arrivals)
    errors = [e for r in reports for e in r["errors"]]
    most = _most(arrivals, window)
    statuses = [a.status for a in arrivals]
    record(
        "backend failure: damaged machine window (3 processes)",
        faults={"damaged window file": 1, "429": statuses.count(429)},
        requests=len(arrivals),
        rows=90,
        paid_twice=paid_twice(arrivals)[0],
        window=(most, limit),
    )
    assert not errors, errors[:5]
    assert [r["where"] for r in reports] == [["machine"]] * 3
    assert any("was damaged" in r["stderr"] and "rebuilt" in r["stderr"] for r in reports)
    assert statuses.count(429) == 0 and most <= limit
    assert paid_twice(arrivals)[0] == 0
    assert Path(f"{path}.damaged").read_bytes().startswith(b"this is not a SQLite database")


def test_a_window_file_damaged_while_in_use_is_rebuilt_with_one_warning():
    limiter = shared_limiter(TOKEN, BASE + "/damaged", (3, 60.0), coordinator=Coordinator(), hold=5.0)
    with limiter.slot():
        pass
    path = state_dir() / STATE_FILE
    with open(path, "r+b") as damaged:  # the header and the first pages overwritten in place
        damaged.write(b"\xff" * 8192)
    with pytest.warns(RuntimeWarning, match="was damaged.*rebuilt") as caught:
        with limiter.slot():
            pass
        with limiter.slot():
            pass
    assert len([w for w in caught if "damaged" in str(w.message)]) == 1
    assert Path(f"{path}.damaged").exists()
    # the rebuilt file counts from then on: two slots in it, a third admitted, a fourth waits a minute
    with limiter.slot():
        pass
    assert limiter._shared.slots.take(3, 60.0, 5.0)[0] is None  # type: ignore[attr-defined]


def test_a_process_that_found_the_file_damaged_late_keeps_the_file_another_rebuilt(tmp_path: Path):
    """Two processes find the file damaged; the first sets it aside and rebuilds it. The second, repairing
    after that, must keep the rebuilt file (it used to set it aside too, over the damaged one, so the
    processes counted in two windows for a moment and the damaged file was lost)."""
    path = tmp_path / STATE_FILE
    path.write_bytes(b"this is not a SQLite database, it was damaged\n" * 200)
    late = machine_module._WindowFile(path)  # stands for another process: a connection of its own
    first = machine_module._WindowFile(path)
    with pytest.raises(sqlite3.DatabaseError) as found:
        late._current()  # reads the damaged file, then is held up before its repair
    with pytest.warns(RuntimeWarning, match="was damaged.*rebuilt"):
        assert first.run(lambda db: db.execute(f"SELECT count(*) FROM {TABLE}").fetchone()) == (0,)
    rebuilt = path.stat().st_ino
    with pytest.warns(RuntimeWarning, match="was damaged.*rebuilt"):
        late._repair(found.value)
    assert path.stat().st_ino == rebuilt
    assert Path(f"{path}.damaged").read_bytes().startswith(b"this is not a SQLite database")
    assert late.run(lambda db: db.execute(f"SELECT count(*) FROM {TABLE}").fetchone()) == (0,)
    first._drop()
    late._drop()


@pytest.mark.parametrize("suffix", ["", "-wal", "-journal"])
def test_a_link_planted_at_the_window_file_is_refused_and_nothing_is_written_through_it(tmp_path, suffix):
    victim = tmp_path / "victim.sqlite3"
    with sqlite3.connect(victim) as db:
        db.execute("CREATE TABLE mine (x)")
    db.close()
    before = victim.read_bytes()
    state = state_dir()
    (state / f"{STATE_FILE}{suffix}").symlink_to(victim)
    limiter = shared_limiter(TOKEN, BASE + "/link", (3, 60.0), coordinator=Coordinator(), hold=5.0)
    with pytest.raises(sf.CoordinationError, match="is a link") as caught:
        with limiter.slot():
            pass
    assert str(state) in str(caught.value) and "STOREFRAMES_STATE_DIR" in str(caught.value)
    assert victim.read_bytes() == before
    assert not list(tmp_path.glob("victim.sqlite3-*"))


def test_an_unusable_state_folder_stops_the_call_before_anything_is_sent(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(coord.ENV_STATE_DIR, str(blocker / "state"))
    with SandboxServer(port=0, today=SANDBOX_TODAY, rate_limit=(6, 1.0)) as server:
        with sf.Client(
            SANDBOX_KEY, base_url=server.base_url, cache_dir=False, max_tries=1, progress=False, clock=sandbox_clock
        ) as client:
            with pytest.raises(sf.CoordinationError, match=r"STOREFRAMES_STATE_DIR") as caught:
                client.metadata_frame(APPS[:10])
        assert not server.service.arrivals
    assert str(blocker / "state") in str(caught.value)


# -- a wall clock that steps ------------------------------------------------------------------------


class SteppedWallClock:
    """What a module sees as ``time``: the wall clock, stepped by ``offset`` when the test says, the rest real
    (the monotonic clock goes on, as it does when the system's clock is set)."""

    def __init__(self) -> None:
        self.offset = 0.0

    def time(self) -> float:
        return time.time() + self.offset

    def time_ns(self) -> int:
        return time.time_ns() + int(self.offset * 1e9)

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


@pytest.mark.parametrize("step", [5.0, -5.0], ids=["forward", "back"])
def test_a_wall_clock_step_of_more_than_a_window_readmits_nothing(step, monkeypatch):
    limit, window = 6, 1.0
    clock = SteppedWallClock()
    monkeypatch.setattr(machine_module, "time", clock)
    monkeypatch.setattr(window_module, "time", clock)
    start = time.monotonic()
    with SandboxServer(port=0, today=SANDBOX_TODAY, rate_limit=(limit, window)) as server:
        options = {"rate_limit": (limit, window), "max_workers": limit, "max_tries": 1, "progress": False}
        with sf.Client(
            SANDBOX_KEY, base_url=server.base_url, cache_dir=False, clock=sandbox_clock, **options
        ) as client:
            assert client.limiter.where == "machine"
            client.metadata_frame(APPS[:30])  # six requests: a full window
            clock.offset = step  # the system's clock is set, by more than a window
            client.metadata_frame(APPS[30:60])  # six more: they wait for the window, whatever the clock says
        arrivals = list(server.service.arrivals)
    with sqlite3.connect(state_dir() / STATE_FILE) as db:
        (latest,) = db.execute(f"SELECT MAX(done) FROM {TABLE}").fetchone()
    db.close()
    assert start <= latest <= time.monotonic()  # the record's times are the machine's monotonic ones
    most = _most(arrivals, window)
    record(
        f"clock step: wall clock {abs(step):.0f} s {'forward' if step > 0 else 'back'}, machine window",
        faults={"clock step": 1},
        requests=len(arrivals),
        rows=60,
        paid_twice=paid_twice(arrivals)[0],
        window=(most, limit),
    )
    assert len(arrivals) == 12 and [a.status for a in arrivals].count(429) == 0
    assert most <= limit


@pytest.mark.parametrize("step", [5.0, -5.0], ids=["forward", "back"])
def test_a_wall_clock_step_readmits_nothing_in_the_process_window(step, monkeypatch):
    limit, window = 3, 0.3
    clock = SteppedWallClock()
    monkeypatch.setattr(window_module, "time", clock)
    limiter = SharedLimiter(ProcessWindow(), limit, window, hold=5.0)
    admitted = []
    for n in range(2 * limit):
        if n == limit:
            clock.offset = step
        with limiter.slot():
            admitted.append(time.monotonic())
    assert max_in_window(admitted, window) <= limit
