"""A process forked after a frame call: the child is refused before it sends anything, and does not hang.

Each scenario runs in a child Python process of its own (its own state folder), against the sandbox on
loopback in this process: the script makes a frame call, then forks (``os.fork``, or a
``multiprocessing`` pool with the ``"fork"`` start method) and tries again in the child, with the
parent's client, a client built in the child and the default client. Before, the child sent its
request (paid) and hung in polars before the answer was kept.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from storeframes.sandbox import SANDBOX_KEY, SandboxServer, World
from tests._children import child_env
from tests._summary import paid_twice, record
from tests.conftest import ROOT, SANDBOX_TODAY

pytestmark = [pytest.mark.heavy, pytest.mark.processes]

WORLD = World(0)
APPS = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US][:9]
PARENT, CHILD, AFTER = APPS[:3], APPS[3:6], APPS[6:]
CHILD_DEADLINE = 15.0
"""Seconds a child may take before it counts as hung (it is then killed)."""

_SCRIPT = """
import json, os, sys, time, multiprocessing
import storeframes as sf

args = json.loads(sys.argv[1])
options = dict(api_key=args["key"], base_url=args["url"], cache_dir=args["cache"], progress=False,
               rate_limit=(600, 1.0), backoff=(0.01, 0.1))


def attempt(what):
    # in the child: one frame call, and what became of it
    try:
        if what == "parent's client":
            frame = client.metadata_frame(args["child"])
        elif what == "default client":
            frame = sf.metadata_frame(args["child"])
        elif what == "configure in the child":
            sf.configure(**options)
            frame = sf.metadata_frame(args["child"])
        else:
            with sf.Client(**options) as own:
                frame = own.metadata_frame(args["child"])
        return {"what": what, "rows": frame.height}
    except Exception as exc:
        return {"what": what, "error": type(exc).__name__, "message": str(exc),
                "configuration": isinstance(exc, sf.ConfigurationError)}


WAYS = ["parent's client", "default client", "client built in the child", "configure in the child"]
client = None


def main():
    global client
    with sf.Client(**options) as client:
        sf.configure(**options)
        client.metadata_frame(args["parent"])  # the parent's frame call, polars' threads in use
        sf.metadata_frame(args["parent"])  # the default client's too (from the cache)
        print(json.dumps({"forking": True}), flush=True)
        if args["mode"] == "fork":
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:  # the child: tries each way, reports, and exits the ordinary way (atexit runs)
                os.close(read)
                with os.fdopen(write, "w") as out:
                    for what in WAYS:
                        out.write(json.dumps(attempt(what)) + "\\n")
                        out.flush()
                sys.exit(0)
            os.close(write)
            deadline = time.monotonic() + args["deadline"]
            while time.monotonic() < deadline:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
                time.sleep(0.05)
            else:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                status = "hung"
            with os.fdopen(read) as got:
                results = [json.loads(line) for line in got]
            print(json.dumps({"child": status, "results": results}), flush=True)
        else:
            method = args["mode"].removeprefix("pool-")
            with multiprocessing.get_context(method).Pool(2) as pool:
                ways = WAYS if method == "fork" else ["client built in the child"]
                waiting = pool.map_async(attempt, ways)
                try:
                    results = waiting.get(timeout=args["deadline"])
                    status = 0
                except multiprocessing.TimeoutError:
                    results, status = [], "hung"
                    pool.terminate()
            print(json.dumps({"child": status, "results": results}), flush=True)
        after = client.metadata_frame(args["after"])  # the parent goes on
        print(json.dumps({"after": after.height, "spent": client.spent}), flush=True)


if __name__ == "__main__":  # a spawned child imports this file without running it
    main()
"""


def _run(mode: str, tmp_path: Any) -> tuple[dict[str, Any], list[Any], list[Any]]:
    """The script in ``mode``: what its child reported, and the arrivals before and after the fork."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    with SandboxServer(port=0, today=SANDBOX_TODAY) as server:
        args = {
            "key": SANDBOX_KEY,
            "url": server.base_url,
            "cache": str(tmp_path / "cache"),
            "mode": mode,
            "parent": PARENT,
            "child": CHILD,
            "after": AFTER,
            "deadline": CHILD_DEADLINE,
        }
        env = child_env(STOREFRAMES_STATE_DIR=str(tmp_path / "state"), STOREFRAMES_COORDINATOR=None)
        script = tmp_path / "forking.py"
        script.write_text(_SCRIPT)
        run = subprocess.run(
            [sys.executable, str(script), json.dumps(args)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=CHILD_DEADLINE + 90,
        )
        arrivals = list(server.service.arrivals)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    report = {k: v for line in lines for k, v in line.items()}
    asked = [set(a.params.get("apps", "").split(",")) for a in arrivals]
    from_child = [a for a, apps in zip(arrivals, asked, strict=True) if apps & set(CHILD)]
    return report, arrivals, from_child


def _refused(results: list[dict[str, Any]], ways: int) -> None:
    assert len(results) == ways, results
    for result in results:
        assert result.get("error") == "ForkedProcessError", result
        assert result["configuration"], result  # a ConfigurationError
        message = result["message"]
        assert "Nothing was sent" in message and 'get_context("spawn")' in message and "forkserver" in message


def test_a_child_forked_after_a_frame_call_is_refused_before_it_pays_and_does_not_hang(tmp_path):
    report, arrivals, from_child = _run("fork", tmp_path)
    assert report["child"] == 0, report  # exited by itself, atexit included, well before the deadline
    _refused(report["results"], 4)
    assert from_child == []  # the child sent nothing
    assert report["after"] == len(AFTER)  # the parent goes on
    twice = paid_twice(arrivals)
    assert twice == (0, 0, 0)
    record("fork: os.fork child", requests=len(arrivals), rows=len(report["results"]), paid_twice=twice[0])


def test_a_fork_pool_after_a_frame_call_is_refused_before_it_pays_and_does_not_hang(tmp_path):
    report, arrivals, from_child = _run("pool-fork", tmp_path)
    assert report["child"] == 0, report
    _refused(report["results"], 4)
    assert from_child == []
    assert report["after"] == len(AFTER)
    twice = paid_twice(arrivals)
    assert twice == (0, 0, 0)
    record(
        "fork: multiprocessing Pool (fork)", requests=len(arrivals), rows=len(report["results"]), paid_twice=twice[0]
    )


def test_a_spawn_pool_after_a_frame_call_works_as_the_message_says(tmp_path):
    report, arrivals, from_child = _run("pool-spawn", tmp_path)
    assert report["child"] == 0, report
    assert report["results"] == [{"what": "client built in the child", "rows": len(CHILD)}]
    assert len(from_child) == 1  # the spawned child fetched what it asked for, once
    assert paid_twice(arrivals) == (0, 0, 0)
