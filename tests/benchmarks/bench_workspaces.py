"""What a workspace's month budget costs a notebook: a paid call with and without it, and the spend report.

Not collected by the test run. Run::

    .venv/bin/python tests/benchmarks/bench_workspaces.py           # ledgers of 0, 10,000 and 100,000 rows
    .venv/bin/python tests/benchmarks/bench_workspaces.py --quick   # 0 and 10,000 rows

Against the loopback sandbox (in this process, answering at once), with the cache's ledger holding a month of
earlier rows: the whole ``metadata_frame`` call of one new app (one request), 30 of them, as a client of a
workspace with a month budget (each call takes the month's lease and reads the month's spend from the ledger)
and as a plain client of the same token, service and ledger; and ``sf.spend_report()`` over two workspaces of
that ledger. Prints a table, then one JSON line per figure (``{"name", "value", "unit", "context"}``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import storeframes as sf
from storeframes.ledger import SERVICE, ledger_table
from storeframes.sandbox import SandboxServer, World

TODAY = datetime(2026, 11, 20, 12, tzinfo=UTC)
CALLS = 30
WORLD = World(0)
APPS = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US]


def _prefill(folder: Path, rows: int) -> None:
    """A month of earlier ledger rows in the cache at ``folder`` (one file, as a merged session leaves them)."""
    folder.mkdir(parents=True, exist_ok=True)
    if not rows:
        return
    start = TODAY.replace(day=1)
    made = [
        {
            "time": start + timedelta(seconds=n * 17),
            "service": SERVICE,
            "endpoint": "search",
            "params": f'{{"keyword":"bench {n}"}}',
            "cost": 1,
            "max_credit_cost": 10,
            "status": 200,
            "attempt": 1,
            "elapsed_ms": 100.0,
            "from_cache": False,
            "saved": 0,
            "row": f"bench-{n}",
            "cost_estimated": False,
            "reserved": False,
        }
        for n in range(rows)
    ]
    cache = sf.Cache(folder)
    assert cache.ledger.write("bench-prefill-0", ledger_table(made), must=True)


def _calls(client: sf.Client, apps: list[str]) -> list[float]:
    took = []
    for app in apps:
        began = time.perf_counter()
        assert client.metadata_frame([app]).height == 1
        took.append(time.perf_counter() - began)
    return took


def measure(rows: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, SandboxServer(port=0, today=TODAY.date()) as server:
        folder = Path(tmp)
        os.environ["BENCH_KEY"] = server.key
        (folder / "storeframes.toml").write_text(
            f'[workspace.acme]\napi_key_env = "BENCH_KEY"\nbase_url = "{server.base_url}"\ncache_dir = "acme"\n'
            f"budget_per_month = {10**9}\n\n"
            f'[workspace.beta]\napi_key_env = "BENCH_KEY"\nbase_url = "{server.base_url}"\ncache_dir = "beta"\n',
            encoding="utf-8",
        )
        for name in ("acme", "beta", "plain"):
            _prefill(folder / name, rows)
        config = folder / "storeframes.toml"
        clock = lambda: TODAY  # noqa: E731
        chosen = sf.workspaces.workspace("acme", config)
        with sf.Client(workspace=chosen, clock=clock, progress=False) as client:
            _calls(client, APPS[:2])  # warm: the index, the connection, the lease files
            budgeted = _calls(client, APPS[2 : 2 + CALLS])
        plain_client = sf.Client(server.key, base_url=server.base_url, cache_dir=folder / "plain", clock=clock)
        with plain_client as client:
            _calls(client, APPS[:2])
            plain = _calls(client, APPS[2 : 2 + CALLS])
        began = time.perf_counter()
        report = sf.spend_report("2026-11", config=config)
        report_s = time.perf_counter() - began
        assert report.height == 2 and report["spent"].null_count() == 0
    workspace_ms = statistics.median(budgeted) * 1000
    plain_ms = statistics.median(plain) * 1000
    return {
        "ledger_rows": rows,
        "calls": CALLS,
        "plain_ms": round(plain_ms, 2),
        "workspace_ms": round(workspace_ms, 2),
        "overhead_ms": round(workspace_ms - plain_ms, 2),
        "spend_report_ms": round(report_s * 1000, 1),
    }


def figures(quick: bool = False) -> list[dict[str, Any]]:
    return [measure(rows) for rows in ((0, 10_000) if quick else (0, 10_000, 100_000))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    found = figures(parser.parse_args().quick)
    print(f"{'ledger rows':>12}  {'plain call':>11}  {'workspace call':>15}  {'overhead':>9}  {'spend_report':>13}")
    for f in found:
        print(
            f"{f['ledger_rows']:>12,}  {f['plain_ms']:>8.1f} ms  {f['workspace_ms']:>12.1f} ms  "
            f"{f['overhead_ms']:>6.1f} ms  {f['spend_report_ms']:>10.1f} ms"
        )
    for f in found:
        context = {k: v for k, v in f.items() if k != "workspace_ms"}
        name = f"workspaces.paid_call_{f['ledger_rows']}_rows"
        print(json.dumps({"name": name, "value": f["workspace_ms"], "unit": "ms", "context": context}))


if __name__ == "__main__":
    main()
