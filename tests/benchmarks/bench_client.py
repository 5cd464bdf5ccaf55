"""Client benchmarks: fetch throughput under the rate limit, and per-request overhead.

Not collected by the test run. Run::

    .venv/bin/python tests/benchmarks/bench_client.py            # the figures
    .venv/bin/python tests/benchmarks/bench_client.py --trace    # and where the time of each window went
    .venv/bin/python tests/benchmarks/bench_client.py --redis redis://127.0.0.1:6379/0   # and through Redis

The fetch figure: ``requests`` live searches through the loopback sandbox server running
in **its own process** (a fresh interpreter, so it shares nothing with the client, not
even the GIL), at the service's own limit (60 requests in any 10 s) with a mean latency
of 0, 50, 100, 333 and 500 ms (``--latencies``), then at the limit scaled down (30 in any
3 s) with 100 ms. Each request's latency is drawn, seeded: ``latency x uniform(0.5, 1.5)``
(``--jitter 0.5``), split between the way in and the way out (the arrival falls anywhere
between send and answer). The server builds its synthetic world's rankings of the
keywords before the clock starts, as the service's answers take their latency and not one
Python process's CPU in turn. The client takes its slots through a coordinator:
``machine`` (the default, the SQLite window in a temporary ``$STOREFRAMES_STATE_DIR``),
``process`` (the window in memory) or a Redis URL, with ``max_workers`` threads (the
limit by default, so the first ``limit`` can go at once and a whole window is sent at any
latency).

``share_of_ceiling`` is what the limit allows over what it took: for n requests at L per
W seconds with latency d, the first L go at once, each further L one window later, and
the last answer takes d, so ``((n - 1) // L) * W + d`` seconds. A slot is dated when its
answer's headers arrive (``storeframes.coord.window`` says why no sooner date is safe),
which costs one round trip a window: ``best_safe_share`` is the best any safe schedule
reaches with the same drawn latencies and a client that costs nothing
(:func:`best_safe_seconds`), ``ceiling / (((n - 1) // L) * (W + d) + d)`` at a fixed
latency: 0.953 at 500 ms and 180 requests, and less when the latency is drawn, as each
slot's chain of round trips adds up on its own and the longest ends the run.
``share_of_best_safe`` is the client's own part of the gap. ``most_in_any_window`` is
counted from the arrival times the server recorded, the way the service counts, and
``http_429`` from its answers. ``--trace`` adds, window by window, when the slots were
granted, when the requests arrived and the headers were read, and how late each grant
came after the release that freed it.

Caching is off, so every request reaches the sandbox (and nothing is written to the
default cache folder). Prints a table, then one JSON line per figure.
"""

from __future__ import annotations

import argparse
import bisect
import heapq
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

import storeframes as sf
from storeframes.wire.http import lib as httpx

LATENCIES = (0.0, 0.05, 0.1, 0.333, 0.5)
"""Mean latencies (seconds) measured at the service's own limit."""

_SERVER = """
import json, sys, time
from storeframes.sandbox import SANDBOX_KEY, Latency, SandboxServer, SandboxService
from storeframes.sandbox import server as served

limit, window, body, handshake = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[5]), float(sys.argv[6])
keywords, delays = json.loads(sys.argv[4]), json.loads(sys.argv[3])
latency = Latency(**{k: tuple(v) if isinstance(v, list) else v for k, v in delays.items()})
if body:  # each answer's body follows its headers body seconds later: a large answer, a slow link
    def end_headers(handler, end=served._Handler.end_headers):
        end(handler)
        handler.wfile.flush()
        time.sleep(body)
    served._Handler.end_headers = end_headers
if handshake:  # a new connection's first request arrives a handshake later (TCP and TLS on a real link)
    def setup(handler, start=served._Handler.setup):
        time.sleep(handshake)
        start(handler)
    served._Handler.setup = setup
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
    *,
    jitter: float = 0.0,
    seed: int = 0,
    body: float = 0.0,
    handshake: float = 0.0,
) -> Iterator[tuple[str, list[tuple[float, int]]]]:
    """A sandbox server in a process of its own: (its base URL, the arrivals it recorded, filled on exit).

    Each answer takes ``latency`` seconds from its arrival; with ``jitter`` (0.5: latency x
    uniform(0.5, 1.5)) each request's latency is drawn, seeded, and split between the way in and the
    way out (:func:`delays`); each body follows its headers ``body`` seconds later, and a new connection's first request arrives
    ``handshake`` seconds later. The arrival times are ``time.monotonic()`` of the server's process, the same clock as this
    process's on Linux and macOS (CLOCK_MONOTONIC is system-wide)."""
    server = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _SERVER,
            str(limit),
            repr(window),
            json.dumps(delays(latency, jitter, seed)),
            json.dumps(keywords),
            repr(body),
            repr(handshake),
        ],
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


def delays(latency: float, jitter: float = 0.0, seed: int = 0) -> dict[str, Any]:
    """The sandbox's ``Latency`` arguments for a mean ``latency``: all of it on the way out, or with
    ``jitter`` a uniform draw on each way, ``latency / 2 x uniform(1 - jitter, 1 + jitter)``, so the
    whole round trip lies within ``latency x (1 +- jitter)``.

    >>> delays(0.2, 0.5)
    {'inbound': [0.05, 0.15], 'outbound': [0.05, 0.15], 'seed': 0}
    """
    if not jitter:
        return {"outbound": latency, "seed": seed}
    way = [round(latency / 2 * (1 - jitter), 6), round(latency / 2 * (1 + jitter), 6)]
    return {"inbound": way, "outbound": way, "seed": seed}


def most_in_any_window(times: list[float], window: float) -> int:
    """The most of ``times`` within any ``window`` seconds, counted as the service does: the arrivals in
    ``(t - window, t]`` for each arrival ``t``."""
    times = sorted(times)
    return max((i + 1 - bisect.bisect_right(times, t - window) for i, t in enumerate(times)), default=0)


class _Traced:
    """A limiter that notes when each slot was granted (the request is sent next) and released (its
    answer's headers arrived, or the attempt failed), on the monotonic clock."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.slots: list[tuple[float, float]] = []
        self._lock = threading.Lock()
        self._local = threading.local()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def acquire(self) -> None:
        self.inner.acquire()
        self._local.granted = time.monotonic()

    def release(self) -> None:
        released = time.monotonic()
        self.inner.release()
        with self._lock:
            self.slots.append((self._local.granted, released))

    @contextmanager
    def slot(self) -> Iterator[None]:
        self.acquire()
        try:
            yield
        finally:
            self.release()


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
    jitter: float = 0.0,
    seed: int = 0,
    body: float = 0.0,
    handshake: float = 0.0,
) -> dict:
    """Requests per second through a sandbox server in its own process, as a share of what the limit allows.

    ``workers`` is the client's ``max_workers`` (None: the client's default, the limit's
    requests, so the first ``limit`` requests can go at once); ``coordinator`` is ``machine``, ``process`` or a Redis URL.
    With ``trace``, the figure also holds where each request's time went. ``jitter`` and ``seed``
    draw each request's latency (:func:`delays`); ``best_safe_share`` is what the best safe
    schedule reaches with the same draws (:func:`best_safe_seconds`). ``body``: seconds each answer's
    body follows its headers (a large answer, a slow link); ``handshake``: seconds a new connection
    costs before its first request arrives (the counted ceiling leaves it out).
    """
    keywords = [f"keyword {i}" for i in range(requests)]
    with (
        tempfile.TemporaryDirectory(prefix="storeframes-bench-state-") as state,
        served(
            limit, window, latency, ["warm up", *keywords], jitter=jitter, seed=seed, body=body, handshake=handshake
        ) as (
            base_url,
            arrivals,
        ),
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
    ceiling_seconds = ((requests - 1) // limit) * window + latency + body
    best = best_safe_seconds(requests, limit, window, latency, jitter, seed, body)
    figure: dict[str, Any] = {
        "figure": "fetch_throughput",
        "coordinator": coordinator,
        "limit": f"{limit}/{window:g}s",
        "latency_ms": round(latency * 1000, 1),
        "body_ms": round(body * 1000, 1),
        "handshake_ms": round(handshake * 1000, 1),
        "jitter": f"x uniform({1 - jitter:g}, {1 + jitter:g}), half each way" if jitter else "none",
        "requests": requests,
        "workers": workers,
        "server": "own process",
        "seconds": round(took, 3),
        "ceiling_seconds": round(ceiling_seconds, 3),
        "requests_per_second": round(requests / took, 2),
        "share_of_ceiling": round(ceiling_seconds / took, 3),
        "best_safe_seconds": round(best, 3),
        "best_safe_share": round(ceiling_seconds / best, 3),
        "share_of_best_safe": round(best / took, 3),
        "http_429": sum(status == 429 for t, status in arrivals if t >= started),
        "retries": retries,
        "most_in_any_window": most_in_any_window(counted, window),
    }
    if trace:
        figure["trace"] = _trace(sorted(traced.slots), sorted(counted), started, limit, window)
    return figure


def best_safe_seconds(
    requests: int, limit: int, window: float, latency: float, jitter: float = 0.0, seed: int = 0, body: float = 0.0
) -> float:
    """The seconds of the best schedule no request of which can make a window hold more than ``limit``
    arrivals, with the server's seeded latencies and a client that costs nothing.

    Such a schedule sends a request only while fewer than ``limit`` others are in flight or were
    answered (their headers read) within the last ``window``: a request arrives somewhere between
    its sending and its answer's headers, so any sooner sending could make ``limit + 1`` arrivals
    within one window (``storeframes.coord.window``). Each slot is then busy a window plus a round
    trip per request, and ``n`` requests take ``((n - 1) // limit) * (window + d) + d`` at a fixed
    latency ``d``; with drawn latencies each slot's chain of round trips adds up on its own and the
    last one to finish ends the run. The n-th request of the run draws the sandbox's delays of
    request n (the 0-th is the warm-up), as when the requests reach it in the order they were sent.

    >>> round(best_safe_seconds(180, 60, 10.0, 0.5), 3)
    21.5
    """
    from storeframes.sandbox import Latency

    spec = delays(latency, jitter, seed)
    draw = Latency(**{k: tuple(v) if isinstance(v, list) else v for k, v in spec.items()}).draw
    free = [0.0] * limit  # when each slot may be used again
    end = 0.0
    for n in range(1, requests + 1):
        start = heapq.heappop(free)
        answered = start + sum(draw(n))  # the headers: the body follows, holding no slot
        end = max(end, answered + body)
        heapq.heappush(free, answered + window)
    return end


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
    parser.add_argument(
        "--latencies",
        default=",".join(f"{d * 1000:g}" for d in LATENCIES),
        help="milliseconds of mean latency at the service's own limit (default %(default)s)",
    )
    parser.add_argument("--requests", type=int, default=180, help="requests at the service's own limit")
    parser.add_argument("--jitter", type=float, default=0.5, help="latency x uniform(1 - J, 1 + J) (default 0.5)")
    parser.add_argument("--seed", type=int, default=39, help="the seed of the drawn latencies")
    parser.add_argument("--workers", type=int, help="the client's max_workers (default: the limit's requests)")
    parser.add_argument("--body-ms", type=float, default=0.0, help="milliseconds each body follows its headers")
    parser.add_argument("--handshake-ms", type=float, default=0.0, help="milliseconds a new connection costs")
    args = parser.parse_args(argv)
    drawn = dict(
        jitter=args.jitter,
        seed=args.seed,
        workers=args.workers,
        trace=args.trace,
        body=args.body_ms / 1000,
        handshake=args.handshake_ms / 1000,
    )
    figures = [
        fetch_ratio(limit=60, window=10.0, latency=float(ms) / 1000, requests=args.requests, **drawn)
        for ms in args.latencies.split(",")
        if ms.strip()
    ]
    coordinators = ["machine", "process"] + ([args.redis] if args.redis else [])
    figures += [fetch_ratio(coordinator=c, **drawn) for c in coordinators]  # the scaled 30 per 3 s
    figures.append(overhead())
    print(f"machine: {platform.machine()}, {platform.python_implementation()} {platform.python_version()}")
    print(f"{'figure':<22} {'setting':<52} {'result'}")
    for f in figures:
        if f["figure"] == "fetch_throughput":
            setting = (
                f"{f['requests']} req, {f['limit']}, {f['latency_ms']:.0f} ms, {f['workers']} thr, {f['coordinator']}"
            )
            result = (
                f"{f['seconds']} s, {f['share_of_ceiling']:.1%} of ceiling (best safe {f['best_safe_share']:.1%}), "
                f"{f['http_429']} x 429, at most {f['most_in_any_window']} in a window"
            )
        else:
            setting = f"{f['requests']} sequential, canned body"
            result = f"{f['us_per_request']} us per request"
        print(f"{f['figure']:<22} {setting:<52} {result}")
    for f in figures:
        print(json.dumps(f))


if __name__ == "__main__":
    sys.exit(main())
