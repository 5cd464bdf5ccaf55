"""Tracker benchmarks: what planning a day costs, and how close a run comes to the rate limit.

Not collected by the test run. Run::

    .venv/bin/python tests/benchmarks/bench_track.py            # a month of history, 580 requests a run
    .venv/bin/python tests/benchmarks/bench_track.py --quick    # a week of history, 116 requests a run
    .venv/bin/python tests/benchmarks/bench_track.py --profile  # and where planning's time goes

The spec: the live search of 100 keywords in 5 countries (500 requests), the metadata of
200 apps (40 requests of 5 apps) and their downloads and ratings (40 requests): 580
requests a day (``--quick``: 20 keywords and 40 apps, 116).

* **Planning**: ``tracker.plan(day)``, best of 3 new trackers (each opens the cache and
  reads its index from the folder, as ``storeframes track plan`` does in a new process),
  then best of 3 more plans of the same tracker (its index synced, as in a scheduler's
  long-lived process); on an empty cache (cold), on a cache holding a month of the
  spec's daily runs (a week with ``--quick``), planning the next day, when everything is
  due again (warm), and the same after ``sf.compact`` of the folder (warm, compacted).
  The tracker's clients talk to the loopback sandbox server (nothing is sent to plan; no
  synthetic world is built in the planning process). The month is filled beforehand in
  this process by one tracker through the sandbox's transport, one day after another,
  with the rate limit lifted (about 8 minutes on 2 CPUs).
* **Run**: ``tracker.run()`` of the whole spec on an empty cache, against a sandbox
  server in its own process (``bench_client.served``) with the service's limit (60
  requests in 10 s) and latency (333 ms), ``--quick`` 30 in 3 s and 100 ms. The figures:
  requests per second over what the limit allows on average (``limit / window``:
  ``rate_x_limit``); ``share_of_ceiling`` as ``bench_client`` counts it (the first
  ``limit`` go at once, each further ``limit`` one window later, the last answer takes the
  latency); the whole run's wall time; 429s and the most requests that arrived in any
  window, from the server's own record.

The machine's rate window lives in a temporary ``$STOREFRAMES_STATE_DIR``, so other
processes using the sandbox's token share nothing with these runs. Prints a table,
then one JSON line per figure.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import storeframes as sf
from storeframes.sandbox import SANDBOX_BASE_URL, SANDBOX_KEY, SandboxService, SandboxTransport, World
from storeframes.track import TrackPlan
from storeframes.wire.http import lib as httpx

sys.path.insert(0, str(Path(__file__).parent))

from bench_client import most_in_any_window, served, state_dir_at

COUNTRIES = ("us", "gb", "de", "fr", "jp")
FIRST_DAY = date(2026, 10, 21)
FULL = {"keywords": 100, "apps": 200, "days": 30, "limit": 60, "window": 10.0, "latency": 0.333}
QUICK = {"keywords": 20, "apps": 40, "days": 7, "limit": 30, "window": 3.0, "latency": 0.1}
REPEAT = 3


def spec_text(keywords: int, apps: int, cache_dir: Path) -> str:
    """The benchmark's spec: ``keywords`` x 5 countries of live search, ``apps`` apps' metadata and metrics."""
    world = World(0)
    words = [*world.EXAMPLE_KEYWORDS, *(f"keyword {i}" for i in range(keywords))][:keywords]
    ids = [a for a in world.app_ids("ios") if a not in world.UNAVAILABLE_IN_US][:apps]
    return f"""[tracker]
name = "bench"
cache_dir = {json.dumps(cache_dir.as_posix())}
device = "iphone"

[[track]]
endpoint = "search"
keywords = {json.dumps(words)}
countries = {json.dumps(list(COUNTRIES))}

[[track]]
endpoint = "metadata"
apps = {json.dumps(ids)}

[[track]]
endpoint = "metrics"
apps = {json.dumps(ids)}
metrics = ["downloads", "ratings"]
"""


def write_spec(folder: Path, size: dict[str, Any]) -> Path:
    path = folder / "bench.toml"
    path.write_text(spec_text(size["keywords"], size["apps"], folder / "cache"), encoding="utf-8")
    return path


@contextmanager
def state_dir() -> Iterator[None]:
    """A temporary ``$STOREFRAMES_STATE_DIR``: the machine's rate window of these runs alone."""
    with tempfile.TemporaryDirectory(prefix="storeframes-bench-state-") as state, state_dir_at(state):
        yield


class DayTransport(httpx.BaseTransport):
    """The sandbox's transport for a day that changes: the answers of a service whose today is :attr:`day`."""

    def __init__(self, world: World):
        self.world = world
        self.day = FIRST_DAY
        self._transports: dict[date, SandboxTransport] = {}

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        transport = self._transports.get(self.day)
        if transport is None:
            service = SandboxService(world=self.world, today=self.day, rate_limit=(10**9, 1.0))
            transport = self._transports[self.day] = SandboxTransport(service)
        return transport.handle_request(request)


def fill(spec: Path, days: int) -> dict[str, Any]:
    """A run of the spec on each of ``days`` days from :data:`FIRST_DAY`, by one tracker through the
    sandbox's transport (one synthetic world, today the run's day, no rate limit); the answers kept
    as the service's, as the loopback server's are."""
    transport = DayTransport(World(0))
    began = time.perf_counter()
    requests = 0
    with httpx.Client(transport=transport) as http:
        tracker = sf.Tracker.from_toml(
            spec, api_key=SANDBOX_KEY, base_url=SANDBOX_BASE_URL, http_client=http, rate_limit=(10**6, 1.0),
            progress=False,
        )  # fmt: skip
        for n in range(days):
            transport.day = day = FIRST_DAY + timedelta(days=n)
            result = tracker.run(today=day)
            if result.status != "ok":
                raise RuntimeError(f"filling the cache: the run of {day} ended {result.status}: {result.errors}")
            requests += result.requests
    return {"days": days, "requests": requests, "seconds": round(time.perf_counter() - began, 1)}


def plan_times(make: Callable[[], sf.Tracker], day: date) -> tuple[list[float], list[float], TrackPlan]:
    """Seconds of ``tracker.plan(day)``: of :data:`REPEAT` new trackers (each opens the cache and reads
    its index from the folder, as ``storeframes track plan`` in a new process does), then of
    :data:`REPEAT` more plans of the last one (its index read once, then synced, as in a scheduler's
    process); and the plan."""
    fresh, again = [], []
    plan = None
    for _ in range(REPEAT):
        tracker = make()
        started = time.perf_counter()
        plan = tracker.plan(day)
        fresh.append(time.perf_counter() - started)
    for _ in range(REPEAT):
        started = time.perf_counter()
        plan = tracker.plan(day)
        again.append(time.perf_counter() - started)
    assert plan is not None
    return fresh, again, plan


def profile(call: Callable[[], Any], top: int = 25) -> str:
    """The top lines of ``call``'s profile, by cumulative time."""
    profiler = cProfile.Profile()
    profiler.enable()
    call()
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def planning(size: dict[str, Any], *, with_profile: bool = False) -> list[dict[str, Any]]:
    """Planning time on an empty cache, on a month of history, and on the same compacted."""
    found = []
    with (
        tempfile.TemporaryDirectory(prefix="storeframes-bench-track-") as tmp,
        state_dir(),
        served(60, 10.0, 0.0) as (base_url, _),
    ):
        spec = write_spec(Path(tmp), size)

        def make() -> sf.Tracker:
            return sf.Tracker.from_toml(spec, api_key=SANDBOX_KEY, base_url=base_url, progress=False)

        base = {"figure": "track_plan", "keywords": size["keywords"], "countries": len(COUNTRIES),
                "apps": size["apps"], "repeat": REPEAT}  # fmt: skip

        def figure(case: str, day: date, history: dict[str, Any] | None) -> dict[str, Any]:
            fresh, again, plan = plan_times(make, day)
            cache = Path(tmp) / "cache"
            files = sum(1 for p in cache.rglob("*") if p.is_file()) if cache.exists() else 0
            out = {**base, "case": case, "day": day.isoformat(), "seconds": round(min(fresh), 4),
                   "first_seconds": round(fresh[0], 4), "same_tracker_seconds": round(min(again), 4),
                   "requests": plan.requests, "credits": plan.credits, "cache_files": files,
                   "history": history}  # fmt: skip
            if with_profile:
                out["profile"] = profile(lambda: make().plan(day))
            return out

        found.append(figure("cold", FIRST_DAY, None))
        history = fill(spec, size["days"])
        following = FIRST_DAY + timedelta(days=size["days"])
        found.append(figure("warm", following, history))
        started = time.perf_counter()
        sf.compact(Path(tmp) / "cache")
        history = {**history, "compaction_seconds": round(time.perf_counter() - started, 1)}
        found.append(figure("warm, compacted", following, history))
    return found


def run_rate(size: dict[str, Any]) -> dict[str, Any]:
    """A whole run of the spec on an empty cache against a sandbox server in its own process."""
    limit, window, latency = size["limit"], size["window"], size["latency"]
    with (
        tempfile.TemporaryDirectory(prefix="storeframes-bench-track-") as tmp,
        state_dir(),
        served(limit, window, latency, ["warm up"]) as (base_url, arrivals),
    ):
        spec = write_spec(Path(tmp), size)
        tracker = sf.Tracker.from_toml(
            spec, api_key=SANDBOX_KEY, base_url=base_url, rate_limit=(limit, window), progress=False
        )
        with sf.Client(SANDBOX_KEY, base_url=base_url, cache_dir=False, rate_limit=(limit, window)) as client:
            client.get("search", keyword="warm up")  # the server's first answer; not counted
        time.sleep(window)  # its slot leaves the window
        started = time.monotonic()
        result = tracker.run()
        took = time.monotonic() - started
    counted = [t for t, status in arrivals if t >= started]
    answered = [t for t, status in arrivals if t >= started and status == 200]
    sent = result.requests
    ceiling_seconds = ((sent - 1) // limit) * window + latency
    return {
        "figure": "track_run",
        "limit": f"{limit}/{window:g}s",
        "latency_ms": round(latency * 1000, 1),
        "status": result.status,
        "requests": sent,
        "answered": len(answered),
        "credits": result.credits_spent,
        "seconds": round(took, 2),
        "run_seconds": round(result.seconds, 2),
        "requests_per_second": round(sent / took, 3),
        "rate_x_limit": round(sent / took / (limit / window), 3),
        "ceiling_seconds": round(ceiling_seconds, 3),
        "share_of_ceiling": round(ceiling_seconds / took, 3),
        "http_429": sum(status == 429 for t, status in arrivals if t >= started),
        "most_in_any_window": most_in_any_window(counted, window),
    }


def figures(quick: bool = False, *, with_profile: bool = False) -> list[dict[str, Any]]:
    size = QUICK if quick else FULL
    return [*planning(size, with_profile=with_profile), run_rate(size)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 keywords, 40 apps, a week of history")
    parser.add_argument("--profile", action="store_true", help="print the top of each plan's profile")
    args = parser.parse_args()
    os.environ["STOREFRAMES_PROGRESS"] = "0"
    found = figures(args.quick, with_profile=args.profile)
    print(f"machine: {os.cpu_count()} CPUs, {platform.machine()}, {platform.python_implementation()} "
          f"{platform.python_version()}")  # fmt: skip
    print(f"{'plan':<16} {'day':<10} {'new tracker s':>13} {'first s':>8} {'same tracker s':>14} {'requests':>8} "
          f"{'files':>7}")  # fmt: skip
    for f in found[:-1]:
        print(f"{f['case']:<16} {f['day']:<10} {f['seconds']:>13.3f} {f['first_seconds']:>8.3f} "
              f"{f['same_tracker_seconds']:>14.3f} {f['requests']:>8} {f['cache_files']:>7}")  # fmt: skip
    r = found[-1]
    print(
        f"run: {r['requests']} requests at {r['limit']}, {r['latency_ms']:.0f} ms: {r['seconds']} s "
        f"({r['requests_per_second']} a second, {r['rate_x_limit']:.1%} of the limit's average, "
        f"{r['share_of_ceiling']:.1%} of the ceiling's {r['ceiling_seconds']} s), {r['http_429']} x 429, "
        f"at most {r['most_in_any_window']} in any window"
    )
    if args.profile:
        for f in found[:-1]:
            print(f"\n-- profile of the plan, {f['case']} --\n{f['profile']}")
    for f in found:
        print(json.dumps({k: v for k, v in f.items() if k != "profile"}))


if __name__ == "__main__":
    main()
