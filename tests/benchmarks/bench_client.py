"""Client benchmarks: fetch throughput under the rate limit, and per-request overhead.

Not collected by the test run. Run::

    .venv/bin/python tests/benchmarks/bench_client.py            # the figures
    .venv/bin/python tests/benchmarks/bench_client.py --trace    # and where the time of each window went
    .venv/bin/python tests/benchmarks/bench_client.py --redis redis://127.0.0.1:6379/0   # and through Redis

The fetch figure: ``requests`` live searches through the loopback sandbox server running
in **its own process** (a fresh interpreter, so it shares nothing with the client, not
even the GIL), with the service's limit scaled down (30 requests in any 3 s) and its
ratio of latency to window (100 ms, from each arrival to its answer leaving). The server
builds its synthetic world's rankings of the keywords before the clock starts, as the
service's answers take their latency and not one Python process's CPU in turn. The
client takes its slots through a coordinator: ``machine`` (the default, the SQLite
window in a temporary ``$STOREFRAMES_STATE_DIR``), ``process`` (the window in memory) or
a Redis URL, with ``max_workers`` threads (the limit by default, so the first ``limit``
can go at once; with the client's default of 8 a window's 30 requests take four round
trips to send, which caps the share near 0.94).

``share_of_ceiling`` is what the limit allows over what it took: for n requests at L per
W seconds with latency d, the first L go at once, each further L one window later, and
the last answer takes d, so ``((n - 1) // L) * W + d`` seconds. Slots are dated by their
completion (``storeframes.coord.window`` says why no sooner date is safe), which costs one
round trip a window: at best ``ceiling / (((n - 1) // L) * (W + d) + d)``, 0.968 here.
``most_in_any_window`` is counted from the arrival times the server recorded, the way
the service counts, and ``http_429`` from its answers. ``--trace`` adds, window by
window, when the slots were granted, when the requests arrived and the answers were
read, and how late each grant came after the completion that freed it.

Caching is off, so every request reaches the sandbox (and nothing is written to the
default cache folder). Prints a table, then one JSON line per figure.
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

import storeframes as sf

_SERVER = """
import json, sys
from storeframes.sandbox import SANDBOX_KEY, SandboxServer, SandboxService

limit, window, latency = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
keywords = json.loads(sys.argv[4])
with SandboxServer(port=0, rate_limit=(limit, window), latency=latency) as server:
    # the world's ranking of each keyword is built before the clock starts: a service answers in its
    # latency, not after the CPU of one Python process has built thirty synthetic rankings in turn
    warm = SandboxService(world=server.service.world, rate_limit=(10**9, 1.0))
    for keyword in keywords:
        params = [("keyword", keyword), ("country", "us"), ("device", "iphone")]
        warm.handle("GET", "/api/public/store/keywords/search-results/current", params, {"x-service-key": SANDBOX_KEY})
    print(server.base_url, flush=True)
    sys.stdin.readline()  # stop
    arrivals = [(a.time, a.status) for a in server.service.arrivals]
print(json.dumps(arrivals), flush=True)
"""


@contextmanager
def served(
    limit: int,
    window: float,
    latency: float,
    keywords: list[str] = [],  # noqa: B006 - never changed
) -> Iterator[tuple[str, list[tuple[float, int]]]]:
    """A sandbox server in a process of its own: (its base URL, the arrivals it recorded, filled on exit).

    The arrival times are ``time.monotonic()`` of the server's process, the same clock as this
    process's on Linux and macOS (CLOCK_MONOTONIC is system-wide)."""
    server = subprocess.Popen(
        [sys.executable, "-c", _SERVER, str(limit), repr(window), repr(latency), json.dumps(keywords)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None
    arrivals: list[tuple[float, int]] = []
    try:
        base_url = server.stdout.readline().strip()
        if not base_url:
            raise RuntimeError("the sandbox server did not start")
        yield base_url, arrivals
        server.stdin.write("stop\n")
        server.stdin.flush()
        arrivals.extend((t, status) for t, status in json.loads(server.stdout.readline()))
    finally:
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def most_in_any_window(times: list[float], window: float) -> int:
    """The most of ``times`` within any ``window`` seconds, counted as the service does: the arrivals in
    ``(t - window, t]`` for each arrival ``t``."""
    times = sorted(times)
    return max((i + 1 - bisect.bisect_right(times, t - window) for i, t in enumerate(times)), default=0)


class _Traced:
    """A limiter that notes when each slot was granted (the request is sent next) and released (its
    answer read), on the monotonic clock."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.slots: list[tuple[float, float]] = []
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    @contextmanager
    def slot(self) -> Iterator[None]:
        with self.inner.slot():
            granted = time.monotonic()
            try:
                yield
            finally:
                released = time.monotonic()
                with self._lock:
                    self.slots.append((granted, released))


def _process_limiter(limit: int, window: float, hold: float) -> Any:
    """The window of this process only (what every coordinator keeps in front of its record)."""
    from storeframes.coord.window import ProcessWindow, SharedLimiter

    return SharedLimiter(ProcessWindow(), limit, window, hold=hold)


def fetch_ratio(
    *,
    limit: int = 30,
    window: float = 3.0,
    latency: float = 0.1,
    requests: int = 120,
    workers: int | None = None,
    coordinator: str = "machine",
    trace: bool = False,
) -> dict:
    """Requests per second through a sandbox server in its own process, as a share of what the limit allows.

    ``workers`` is the client's ``max_workers`` (None: the client's default, the limit's
    requests, so the first ``limit`` requests can go at once); ``coordinator`` is ``machine``, ``process`` or a Redis URL.
    With ``trace``, the figure also holds where each request's time went.
    """
    keywords = [f"keyword {i}" for i in range(requests)]
    with (
        tempfile.TemporaryDirectory(prefix="storeframes-bench-state-") as state,
        served(limit, window, latency, ["warm up", *keywords]) as (base_url, arrivals),
    ):
        saved = os.environ.get("STOREFRAMES_STATE_DIR")
        os.environ["STOREFRAMES_STATE_DIR"] = state
        try:
            spec = "machine" if coordinator == "process" else coordinator
            with sf.Client(
                sf.sandbox.SANDBOX_KEY,
                base_url=base_url,
                rate_limit=(limit, window),
                coordinator=spec,
                max_workers=workers,
                cache_dir=False,
                progress=False,
            ) as client:
                workers = client.max_workers  # None: the client's default, the limit's requests (8 to 64)
                if coordinator == "process":
                    client.limiter = client.wire.limiter = _process_limiter(limit, window, client.limiter.hold)
                traced = _Traced(client.wire.limiter)
                client.wire.limiter = traced
                client.get("search", keyword="warm up")  # connections, imports; this one is not counted
                while time.monotonic() < traced.slots[-1][1] + window:  # let its slot leave the window
                    time.sleep(0.01)
                traced.slots.clear()
                started = time.monotonic()
                client.get_many("search", [{"keyword": k} for k in keywords])
                took = time.monotonic() - started
                retries = client.wire.retries
        finally:
            if saved is None:
                os.environ.pop("STOREFRAMES_STATE_DIR", None)
            else:
                os.environ["STOREFRAMES_STATE_DIR"] = saved
    counted = [t for t, status in arrivals if t >= started]
    ceiling_seconds = ((requests - 1) // limit) * window + latency
    figure: dict[str, Any] = {
        "figure": "fetch_throughput",
        "coordinator": coordinator,
        "limit": f"{limit}/{window:g}s",
        "latency_ms": round(latency * 1000, 1),
        "requests": requests,
        "workers": workers,
        "server": "own process",
        "seconds": round(took, 3),
        "ceiling_seconds": round(ceiling_seconds, 3),
        "requests_per_second": round(requests / took, 2),
        "share_of_ceiling": round(ceiling_seconds / took, 3),
        "http_429": sum(status == 429 for t, status in arrivals if t >= started),
        "retries": retries,
        "most_in_any_window": most_in_any_window(counted, window),
    }
    if trace:
        figure["trace"] = _trace(sorted(traced.slots), sorted(counted), started, limit, window)
    return figure


def _trace(slots: list[tuple[float, float]], arrivals: list[float], started: float, limit: int, window: float) -> dict:
    """Where the time went, window by window: when its first and last slots were granted (after the
    completion that freed them, plus the window), when requests arrived and when answers were read."""
    granted = [g - started for g, _ in slots]
    done = sorted(r - started for _, r in slots)
    arrived = [a - started for a in arrivals]
    rounds = []
    for k in range(0, len(granted), limit):
        # the j-th grant of round k can go once the j-th completion of round k-1 has left the window
        freed = [done[j - limit] + window for j in range(k, min(k + limit, len(granted)))] if k else None
        late = [granted[j] - freed[j - k] for j in range(k, min(k + limit, len(granted)))] if freed else []
        rounds.append(
            {
                "first_grant": round(granted[k], 3),
                "last_grant": round(granted[min(k + limit, len(granted)) - 1], 3),
                "first_arrival": round(arrived[k], 3) if k < len(arrived) else None,
                "last_arrival": round(arrived[min(k + limit, len(arrived)) - 1], 3) if k < len(arrived) else None,
                "last_done": round(max(done[k : k + limit]), 3),
                "grant_late_ms_median": round(statistics.median(late) * 1000, 1) if late else None,
                "grant_late_ms_max": round(max(late) * 1000, 1) if late else None,
            }
        )
    round_trips = sorted(r - g for g, r in slots)
    to_arrival = sorted(a - g for (g, _), a in zip(slots, arrivals, strict=False))
    return {
        "round_trip_ms": [round(round_trips[i] * 1000, 1) for i in (0, len(round_trips) // 2, -1)],
        "grant_to_arrival_ms_sorted_pairs": [round(to_arrival[i] * 1000, 1) for i in (0, len(to_arrival) // 2, -1)],
        "rounds": rounds,
    }


def overhead(requests: int = 2000) -> dict:
    """The client's own cost per request (validation, limiter, retry wrapper, envelope check,
    ledger), against a transport that answers a canned envelope at once."""
    body = json.dumps(
        {
            "result": {"date": "2026-11-20", "value": [str(i) for i in range(250)]},
            "metadata": {
                "request": {"path": "/x", "params": {}, "cost": 10, "max_credit_cost": 10, "status": 200},
                "response": None,
            },
        }
    ).encode()
    http = httpx.Client(transport=httpx.MockTransport(lambda request: httpx.Response(200, content=body)))
    with sf.Client(
        "k",
        base_url="https://api.example.com/api/public/store",
        http_client=http,
        rate_limit=(10**9, 1.0),
        max_workers=1,
        cache_dir=False,
    ) as client:
        client.get("search", keyword="warm up")
        started = time.perf_counter()
        for i in range(requests):
            client.get("search", keyword=f"k{i}")
        took = time.perf_counter() - started
    return {"figure": "client_overhead", "requests": requests, "us_per_request": round(took / requests * 1e6, 1)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trace", action="store_true", help="show where the time of each window went")
    parser.add_argument("--redis", metavar="URL", help="also measure a Redis coordinator at URL")
    args = parser.parse_args(argv)
    coordinators = ["machine", "process"] + ([args.redis] if args.redis else [])
    figures = [fetch_ratio(coordinator=c, trace=args.trace) for c in coordinators]
    figures += [fetch_ratio(coordinator=c, workers=8, trace=args.trace) for c in coordinators[:2]]
    figures.append(overhead())
    print(f"machine: {platform.machine()}, {platform.python_implementation()} {platform.python_version()}")
    print(f"{'figure':<22} {'setting':<52} {'result'}")
    for f in figures:
        if f["figure"] == "fetch_throughput":
            setting = (
                f"{f['requests']} req, {f['limit']}, {f['latency_ms']:.0f} ms, {f['workers']} thr, {f['coordinator']}"
            )
            result = (
                f"{f['seconds']} s, {f['share_of_ceiling']:.1%} of ceiling, {f['http_429']} x 429, "
                f"at most {f['most_in_any_window']} in a window"
            )
        else:
            setting = f"{f['requests']} sequential, canned body"
            result = f"{f['us_per_request']} us per request"
        print(f"{f['figure']:<22} {setting:<52} {result}")
    for f in figures:
        print(json.dumps(f))


if __name__ == "__main__":
    sys.exit(main())
