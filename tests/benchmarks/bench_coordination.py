"""What coordination costs: one plan fetched by 1, 2 and 4 processes sharing a token and a cache folder.

Not collected by the test run. Run::

    .venv/bin/python tests/benchmarks/bench_coordination.py [--quick]

Every process runs the same plan (the worst case for overlap: each asks for everything)
against one loopback sandbox with 100 ms latency and a scaled-down limit (30 requests in
3 s: the real service's ratio of latency to window), all started together. Then the plan
is split into disjoint shares, one per process (no overlap: what a shared window costs
alone). For each run it reports the wall time, the requests the server answered, their
rate as a share of the ceiling the limit allows, the credits paid against the minimum
(one fetch of the plan), 429s, and the most requests that arrived in any window.
Prints a table, then one JSON line per figure.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import platform
import sys
import tempfile
import time
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import storeframes as sf
from storeframes.sandbox import SANDBOX_KEY, SandboxServer, World

TODAY = date(2026, 11, 20)
LIMIT, WINDOW, LATENCY = 30, 3.0, 0.1


def _plan(size: int) -> list[tuple[str, dict[str, Any]]]:
    world = World(0)
    apps = [a for a in world.app_ids("ios") if a not in world.UNAVAILABLE_IN_US][: 5 * size]
    keywords = [f"keyword {i}" for i in range(size)]
    return [
        ("metadata_frame", {"apps": apps}),  # `size` requests of 5 apps
        ("search_frame", {"keywords": keywords}),  # `size` requests
        ("search_history_frame", {"keywords": keywords[: size // 2], "start": "2026-10-01", "end": "2026-10-30"}),
    ]


def _share(plan: list[tuple[str, dict[str, Any]]], i: int, n: int) -> list[tuple[str, dict[str, Any]]]:
    """The ``i``-th of ``n`` disjoint shares of the plan."""
    out = []
    for name, args in plan:
        key = "apps" if "apps" in args else "keywords"
        items = args[key]
        share = items[len(items) * i // n : len(items) * (i + 1) // n]
        if share:
            out.append((name, {**args, key: share}))
    return out


def _worker(base_url: str, folder: str, calls: list[tuple[str, dict[str, Any]]], start: Any, out: Any) -> None:
    with sf.Client(
        SANDBOX_KEY,
        base_url=base_url,
        cache_dir=folder,
        rate_limit=(LIMIT, WINDOW),
        max_workers=8,
        progress=False,
        clock=lambda: datetime.combine(TODAY, datetime.now(UTC).time(), UTC),
    ) as client:
        start.wait(timeout=120)
        began = time.perf_counter()
        for name, args in calls:
            getattr(client, name)(**args)
        out.put({"seconds": time.perf_counter() - began, "spent": client.spent})


def run(processes: int, size: int, *, split: bool, minimum_credits: int | None = None) -> dict[str, Any]:
    """One run; ``minimum_credits`` is what one process alone paid for the plan (this run's own when None)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from _summary import max_in_window, paid_twice  # the counters the reliability tests use

    plan = _plan(size)
    context = multiprocessing.get_context("spawn")
    with (
        tempfile.TemporaryDirectory() as folder,
        SandboxServer(port=0, today=TODAY, rate_limit=(LIMIT, WINDOW), latency=LATENCY) as server,
    ):
        with sf.Client(SANDBOX_KEY, base_url=server.base_url, cache_dir=False, clock=lambda: datetime.now(UTC)) as c:
            minimum_requests = sum(c.plan(name, **args).to_send for name, args in plan)
        start, out = context.Barrier(processes + 1), context.Queue()
        workers = [
            context.Process(
                target=_worker,
                args=(server.base_url, folder, _share(plan, i, processes) if split else plan, start, out),
            )
            for i in range(processes)
        ]
        for worker in workers:
            worker.start()
        start.wait(timeout=120)
        began = time.perf_counter()
        reports = [out.get(timeout=600) for _ in workers]
        took = time.perf_counter() - began
        for worker in workers:
            worker.join(timeout=60)
        arrivals = list(server.service.arrivals)
    answered = [a for a in arrivals if a.status == 200]
    ceiling = ((len(answered) - 1) // LIMIT) * WINDOW
    return {
        "figure": "coordination",
        "processes": processes,
        "plan": "disjoint shares" if split else "same plan each",
        "limit": f"{LIMIT}/{WINDOW:g}s",
        "latency_ms": LATENCY * 1000,
        "requests_minimum": minimum_requests,
        "requests_answered": len(answered),
        "seconds": round(took, 2),
        "requests_per_second": round(len(answered) / took, 2),
        "share_of_ceiling": round(ceiling / took, 3) if took else None,
        "credits_paid": sum(r["spent"] for r in reports),
        "credits_minimum": minimum_credits or sum(r["spent"] for r in reports),
        "credits_paid_twice": paid_twice(arrivals)[0],
        "http_429": sum(a.status == 429 for a in arrivals),
        "max_in_window": max_in_window([a.time for a in arrivals], WINDOW),
    }


def figures(quick: bool = False) -> list[dict[str, Any]]:
    size = 24 if quick else 40  # 60 or 100 requests: two or more windows
    counts = (1, 2) if quick else (1, 2, 4)
    alone = run(1, size, split=False)
    found = [alone]
    for split in (False, True):
        for n in counts:
            if split or n > 1:
                found.append(run(n, size, split=split, minimum_credits=alone["credits_paid"]))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smaller plan (60 requests), 1 and 2 processes")
    found = figures(parser.parse_args().quick)
    print(f"machine: {platform.machine()}, {platform.python_implementation()} {platform.python_version()}")
    print(
        f"{'plan':<16} {'proc':>4} {'answered/min':>12} {'seconds':>8} {'of ceiling':>10} "
        f"{'credits/min':>14} {'429':>4} {'max/window':>10}"
    )
    for f in found:
        print(
            f"{f['plan']:<16} {f['processes']:>4} {f['requests_answered']:>5}/{f['requests_minimum']:<6} "
            f"{f['seconds']:>8} {f['share_of_ceiling']:>10.0%} {f['credits_paid']:>6}/{f['credits_minimum']:<7} "
            f"{f['http_429']:>4} {f['max_in_window']:>6}/{LIMIT}"
        )
    for f in found:
        print(json.dumps(f))


if __name__ == "__main__":
    main()
