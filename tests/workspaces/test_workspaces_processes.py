"""Workspaces in several processes at once: two workspaces on one token share its one rate window (never over
the limit, no 429) while each keeps its own cache and ledger; a month budget stops a workspace's notebook and
its tracker running at once, while the other workspace goes on."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import storeframes as sf
from storeframes.sandbox import SandboxServer
from tests._children import child_env, sigkill_when
from tests._summary import max_in_window, record
from tests.conftest import SANDBOX_TODAY
from tests.ledger.test_ledger import Loopback
from tests.workspaces.conftest import MONTH, write_spec, write_workspaces

KEYWORDS = {
    "acme": [f"acme keyword {n}" for n in range(12)],
    "beta": [f"beta keyword {n}" for n in range(12)],
}

NOTEBOOK = """
import json, sys
from datetime import UTC, date, datetime
import storeframes as sf

args = json.loads(sys.argv[1])
today = date.fromisoformat(args["today"])
clock = lambda: datetime.combine(today, datetime.now(UTC).time(), UTC)
client = sf.Client(workspace=args["workspace"], clock=clock, max_tries=1, progress=False,
                   **({"rate_limit": tuple(args["window"])} if args["window"] else {}))
errors, refused, rows = [], None, 0
for keyword in args["keywords"]:
    try:
        rows += client.search_frame([keyword]).height
    except sf.BudgetExceededError as exc:
        refused = {"whose": exc.whose, "left": exc.left}
        break
    except Exception as exc:
        errors.append(f"{type(exc).__name__}: {exc}")
client.close()
print(json.dumps({"errors": errors, "refused": refused, "rows": rows, "spent": client.spent}), flush=True)
"""


def _notebook(folder: Path, env: dict[str, str], **args: Any) -> subprocess.Popen[str]:
    args = {"today": SANDBOX_TODAY.isoformat(), "window": None, **args}
    run = [sys.executable, "-c", NOTEBOOK, json.dumps(args)]
    return subprocess.Popen(run, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _report(child: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = child.communicate(timeout=180)
    assert child.returncode == 0, err
    report: dict[str, Any] = json.loads(out.splitlines()[-1])
    return report


def _own_ledger(folder: Path, name: str) -> Any:
    return sf.Cache(folder / f"{name}-cache").ledger.read()


@pytest.mark.heavy
@pytest.mark.processes
@pytest.mark.timeout(300)
def test_two_workspaces_on_one_token_in_two_processes_share_its_window_and_keep_their_own_caches(tmp_path):
    limit, window = 4, 1.0
    with SandboxServer(port=0, today=SANDBOX_TODAY, rate_limit=(limit, window)) as server:
        write_workspaces(tmp_path, server.base_url, acme_budget=None)
        env = child_env(ACME_KEY=server.key, BETA_KEY=server.key, STOREFRAMES_WORKSPACE=None)
        children = [
            _notebook(tmp_path, env, workspace=name, keywords=KEYWORDS[name], window=[limit, window])
            for name in ("acme", "beta")
        ]
        reports = [_report(child) for child in children]
        arrivals = list(server.service.arrivals)
    assert [r["errors"] for r in reports] == [[], []]
    statuses = [a.status for a in arrivals]
    most = max_in_window([a.time for a in arrivals], window)
    record(
        "workspaces: two workspaces on one token, two processes",
        faults={"429": statuses.count(429)},
        requests=len(arrivals),
        rows=sum(r["rows"] for r in reports),
        window=(most, limit),
    )
    assert statuses.count(429) == 0 and most <= limit
    assert len(arrivals) == 24 and set(statuses) == {200}
    for name, report in zip(("acme", "beta"), reports, strict=True):
        ledger = _own_ledger(tmp_path, name)
        other = "beta" if name == "acme" else "acme"
        asked = ledger["params"].to_list()
        assert len(asked) == 12 and all(name in p and other not in p for p in asked), asked  # its own, no other's
        assert ledger["cost"].sum() == report["spent"] > 0


@pytest.mark.heavy
@pytest.mark.processes
@pytest.mark.timeout(300)
def test_a_month_budget_stops_a_workspaces_notebook_and_tracker_at_once_while_the_other_goes_on(tmp_path):
    budget = 100  # ten searches; the tracker alone asks for twelve, the notebook for twelve more
    with SandboxServer(port=0, today=SANDBOX_TODAY) as server:
        write_workspaces(tmp_path, server.base_url, acme_budget=budget)
        spec = write_spec(tmp_path, [f"acme tracked {n}" for n in range(12)])
        env = child_env(ACME_KEY=server.key, BETA_KEY=server.key, STOREFRAMES_WORKSPACE=None)
        tracker = subprocess.Popen(
            [sys.executable, "-m", "storeframes", "track", "run", str(spec), "--today", SANDBOX_TODAY.isoformat()],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        notebook = _notebook(tmp_path, env, workspace="acme", keywords=KEYWORDS["acme"])
        other = _notebook(tmp_path, env, workspace="beta", keywords=KEYWORDS["beta"])
        acme, beta = _report(notebook), _report(other)
        out, err = tracker.communicate(timeout=180)
        statuses = [a.status for a in server.service.arrivals]
    assert tracker.returncode == 4, out + err  # over budget: the days it could not pay for are named
    assert "over_budget" in out and "not fetched" in out
    assert acme["errors"] == [] and acme["refused"] is not None
    assert acme["refused"]["whose"] == f"the month budget of workspace acme ({MONTH})"
    month = _own_ledger(tmp_path, "acme")["cost"].sum()
    assert budget - 10 < month <= budget  # everything that fitted was spent, never more
    assert beta["errors"] == [] and beta["refused"] is None and beta["spent"] == 120 > budget
    assert statuses.count(429) == 0
    report = sf.spend_report(MONTH, config=tmp_path / "storeframes.toml")
    assert report.select("workspace", "spent", "left").rows() == [("acme", month, budget - month), ("beta", 120, None)]


@pytest.mark.heavy
@pytest.mark.processes
@pytest.mark.timeout(300)
def test_a_caller_killed_while_it_holds_the_months_lease_leaves_its_reservation_counted_and_blocks_nobody(
    tmp_path, monkeypatch
):
    budget = 100
    release = threading.Event()

    def hang(number: int, path: str, query: dict[str, str], headers: dict[str, str]) -> None:
        release.wait(30)  # no answer while its caller lives: it is killed waiting, holding the month's lease

    try:
        with Loopback(hang) as slow, SandboxServer(port=0, today=SANDBOX_TODAY) as fast:
            monkeypatch.setenv("ACME_KEY", fast.key)
            monkeypatch.setenv("BETA_KEY", fast.key)
            monkeypatch.delenv("STOREFRAMES_WORKSPACE", raising=False)
            write_workspaces(tmp_path, slow.base_url, acme_budget=budget)
            # killed once its request has arrived (Loopback counts a request when it comes, not when answered)
            sigkill_when(KILLED, {"folder": str(tmp_path)}, tmp_path, lambda: len(slow.arrivals) == 1)
            release.set()
            write_workspaces(tmp_path, fast.base_url, acme_budget=budget)  # the next caller is answered at once
            began = time.monotonic()
            after = _report(_notebook(tmp_path, child_env(), workspace="acme", keywords=KEYWORDS["acme"]))
            waited = time.monotonic() - began
    finally:
        release.set()
    assert waited < 30  # the killed holder's lease went with its process: nobody waited for it
    assert after["errors"] == [] and after["refused"] is not None
    ledger = _own_ledger(tmp_path, "acme")
    reserved = ledger.filter(ledger["reserved"])
    assert reserved.height == 1 and reserved["cost"].sum() == 10  # the killed request, counted at its estimate
    assert ledger["cost"].sum() == budget and after["spent"] == budget - 10  # nine searches fitted beside it


KILLED = """
import json, os, sys
from datetime import UTC, date, datetime
import storeframes as sf
args = json.loads(sys.argv[1])
os.chdir(args["folder"])
today = date(2026, 11, 20)
client = sf.Client(workspace="acme", clock=lambda: datetime.combine(today, datetime.now(UTC).time(), UTC))
client.search_frame(["killed keyword"])
print("finished", flush=True)
"""
