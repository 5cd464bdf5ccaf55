"""Client benchmarks: fetch throughput under the rate limit, and per-request overhead.

Not collected by the test run. Run::

    .venv/bin/python tests/benchmarks/bench_client.py            # the figures
    .venv/bin/python tests/benchmarks/bench_client.py --trace    # and where the time of each window went
    .venv/bin/python tests/benchmarks/bench_client.py --redis redis://127.0.0.1:6379/0   # and through Redis

The fetch figure: ``requests`` live searches through the loopback sandbox server running
in **its own process** (a fresh interpreter, so it shares nothing with the client, not
even the GIL), at the service's own limit (60 requests in any 10 s) with a mean latency
of 0, 50, 100, 300, 333 and 500 ms (``--latencies``), then at the limit scaled down (30 in any
3 s) with 100 ms (through the machine's and the process's windows) and 300 ms. Each request's latency is drawn, seeded: ``latency x uniform(0.5, 1.5)``
(``--jitter 0.5``), split between the way in and the way out (the arrival falls anywhere
between send and answer). The server builds its synthetic world's rankings of the
keywords before the clock starts, as the service's answers take their latency and not one
Python process's CPU in turn. The client takes its slots through a coordinator:
``machine`` (the default, the SQLite window in a temporary ``$STOREFRAMES_STATE_DIR``),
``process`` (the window in memory) or a Redis URL, with ``max_workers`` threads (the
limit by default, so the first ``limit`` can go at once and a whole window is sent at any
latency).

``share_of_ceiling`` is what the limit allows over what it took. The **ceiling** of n requests
at L per W seconds with latency d: the first window's L requests arrive at t = 0, each further
L one window later, and the last answer takes d, so ``((n - 1) // L) * W + d`` seconds (120
requests at 30 per 3 s and 100 ms: 9.1 s). A slot is dated when its
answer's headers arrive (``storeframes.coord.window`` says why no sooner date is safe),
which costs one round trip a window: ``best_safe_share`` is the best any safe schedule
reaches with the same drawn latencies and a client that costs nothing
(:func:`best_safe_seconds`), ``ceiling / (((n - 1) // L) * (W + d) + d)`` at a fixed
latency: 0.953 at 500 ms and 180 requests, and less when the latency is drawn, as each
slot's chain of round trips adds up on its own and the longest ends the run.
``window_share`` is ``W / (W + d)``, the best safe schedule's share per window at a fixed
latency (at 300 ms: 0.971 of the service's 10 s window, 0.909 of a 3 s one: no safe client
reaches 0.95 of the ceiling at 30 per 3 s and 300 ms).
``share_of_best_safe`` is the client's own part of the gap, and ``slack`` says where it
went (:func:`slack`: the first window's start and spread, sending, the wake-up of a sender
whose slot freed, the record's writes, the tail). ``most_in_any_window`` is
counted from the arrival times the server recorded, the way the service counts, and
``http_429`` from its answers. ``--trace`` adds, window by window, when the slots were
granted, when the requests arrived and the headers were read, and how late each grant
came after the release that freed it.

Caching is off, so every request reaches the sandbox (and nothing is written to the
default cache folder). With ``--repeat N`` each figure is the fastest of N runs, the cases
taken in turn. Prints a table, then one JSON line per figure: ``fetch_throughput`` and
``client_overhead``.
"""

from __future__ import annotations

import argparse
import bisect
import heapq
import json
import math
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

LATENCIES = (0.0, 0.05, 0.1, 0.3, 0.333, 0.5)
"""Mean latencies (seconds) measured at the service's own limit."""

SCALED_LATENCIES = (0.1, 0.3)
"""Mean latencies (seconds) measured at the limit scaled down, 30 in any 3 s."""

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
connections, received = [], []  # when each connection was accepted, when each request's line was read
def setup(handler, start=served._Handler.setup):
    connections.append(time.monotonic())
    if handshake:  # a new connection's first request arrives a handshake later (TCP and TLS on a real link)
        time.sleep(handshake)
    start(handler)
served._Handler.setup = setup
def serve(handler, method, inner=served._Handler._serve):
    received.append(time.monotonic())  # before the way in's latency: when the client's bytes came
    inner(handler, method)
served._Handler._serve = serve
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
print(json.dumps({"arrivals": arrivals, "connections": connections, "received": received}), flush=True)
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
    seen: dict[str, list[float]] | None = None,
) -> Iterator[tuple[str, list[tuple[float, int]]]]:
    """A sandbox server in a process of its own: (its base URL, the arrivals it recorded, filled on exit).

    Each answer takes ``latency`` seconds from its arrival; with ``jitter`` (0.5: latency x
    uniform(0.5, 1.5)) each request's latency is drawn, seeded, and split between the way in and the
    way out (:func:`delays`); each body follows its headers ``body`` seconds later, and a new connection's first request arrives
    ``handshake`` seconds later. The arrival times are ``time.monotonic()`` of the server's process, the same clock as this
    process's on Linux and macOS (CLOCK_MONOTONIC is system-wide). ``seen``, if given, gets on exit when the server
    accepted each connection (``connections``) and read each request (``received``, before the way in's latency)."""
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
        record = json.loads(server.stdout.readline())
        arrivals.extend((t, status) for t, status in record["arrivals"])
        if seen is not None:
            seen.update(connections=record["connections"], received=record["received"])
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
    answer's headers arrived, or the attempt failed), on the monotonic clock, and how long the window
    took to record each release (``recording``)."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.slots: list[tuple[float, float]] = []
        self.recording: list[float] = []
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
        recorded = time.monotonic()
        with self._lock:
            self.slots.append((self._local.granted, released))
            self.recording.append(recorded - released)

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
    seen: dict[str, list[float]] = {}
    with (
        tempfile.TemporaryDirectory(prefix="storeframes-bench-state-") as state,
        state_dir_at(state),
        served(
            limit,
            window,
            latency,
            ["warm up", *keywords],
            jitter=jitter,
            seed=seed,
            body=body,
            handshake=handshake,
            seen=seen,
        ) as (
            base_url,
            arrivals,
        ),
    ):
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
            traced.recording.clear()
            started = time.monotonic()
            client.get_many("search", [{"keyword": k} for k in keywords])
            took = time.monotonic() - started
            retries = client.wire.retries
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
        "window_share": round(window / (window + latency), 3),
        "slack": slack(
            traced, seen, started, started + took, limit, window, safety=best - ceiling_seconds, client=took - best
        ),
    }
    if trace:
        figure["trace"] = _trace(sorted(traced.slots), sorted(counted), started, limit, window)
    return figure


def slack(
    traced: _Traced,
    seen: dict[str, list[float]],
    started: float,
    ended: float,
    limit: int,
    window: float,
    *,
    safety: float,
    client: float,
) -> dict[str, Any]:
    """Where a run's time beyond the ceiling went, in milliseconds.

    ``safety_margin_ms``: the best safe schedule's time over the ceiling (a round trip a window, the
    price of dating a slot by its answer's headers); ``client_ms``: the run's time over the best safe
    schedule, which the rest explains. ``first_send_ms``: from the call to its first slot granted
    (``first_window_spread_ms`` later the window's last: threads, building and sending ``limit``
    requests, each on a connection perhaps opened then); ``send_ms``: from a grant to the server
    reading its request (the n-th grant paired with the n-th request read: the client's send, a
    connection's setup, before the way in's latency); ``late_grant_ms``: from a slot freeing (the
    completion it replaces plus the window) to its grant (the waiting sender's wake-up and the
    window's record); ``recording_ms``: the window recording a release; ``tail_ms``: from the last
    answer's headers to the call's return (the last bodies, parsing, the caller's wake-up);
    ``connections_opened``: connections the server accepted during the run (reused ones are not).
    Each of ``send_ms``, ``late_grant_ms`` and ``recording_ms`` is [median, max].
    """
    slots = sorted(traced.slots)
    granted = [g for g, _ in slots]
    done = sorted(r for _, r in slots)
    received = sorted(t for t in seen.get("received", []) if t >= started)
    late = [granted[j] - (done[j - limit] + window) for j in range(limit, len(granted))]

    def spread(values: list[float]) -> list[float] | None:
        return [round(statistics.median(values) * 1000, 1), round(max(values) * 1000, 1)] if values else None

    first = granted[: min(limit, len(granted))]
    return {
        "safety_margin_ms": round(safety * 1000, 1),
        "client_ms": round(client * 1000, 1),
        "first_send_ms": round((granted[0] - started) * 1000, 1) if granted else None,
        "first_window_spread_ms": round((first[-1] - first[0]) * 1000, 1) if first else None,
        "send_ms": spread([r - g for g, r in zip(granted, received, strict=False)]),
        "late_grant_ms": spread(late),
        "recording_ms": spread(traced.recording),
        "tail_ms": round((ended - done[-1]) * 1000, 1) if done else None,
        "connections_opened": sum(t >= started for t in seen.get("connections", [])),
    }


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


def overhead(requests: int = 2000, coordinator: str = "machine", repeat: int = 1) -> dict:
    """The client's own cost per request (validation, limiter, retry wrapper, envelope check,
    ledger), against a transport that answers a canned envelope at once: the fastest of ``repeat``
    runs. ``coordinator``: ``machine`` (the default window, a SQLite file in a temporary state
    folder) or ``process`` (the window in memory), to tell the record's part."""
    body = json.dumps(
        {
            "result": {"date": "2026-11-20", "value": [str(i) for i in range(250)]},
            "metadata": {
                "request": {"path": "/x", "params": {}, "cost": 10, "max_credit_cost": 10, "status": 200},
                "response": None,
            },
        }
    ).encode()
    best = math.inf
    for _ in range(repeat):
        http = httpx.Client(transport=httpx.MockTransport(lambda request: httpx.Response(200, content=body)))
        with (
            tempfile.TemporaryDirectory(prefix="storeframes-bench-state-") as state,
            state_dir_at(state),
            sf.Client(
                "k",
                base_url="https://api.example.com/api/public/store",
                http_client=http,
                rate_limit=(10**9, 1.0),
                max_workers=1,
                cache_dir=False,
            ) as client,
        ):
            if coordinator == "process":
                client.limiter = client.wire.limiter = _process_limiter(10**9, 1.0, client.limiter.hold)
            client.get("search", keyword="warm up")
            started = time.perf_counter()
            for i in range(requests):
                client.get("search", keyword=f"k{i}")
            best = min(best, time.perf_counter() - started)
        http.close()
    return {
        "figure": "client_overhead",
        "coordinator": coordinator,
        "requests": requests,
        "repeat": repeat,
        "us_per_request": round(best / requests * 1e6, 1),
    }


@contextmanager
def state_dir_at(folder: str) -> Iterator[None]:
    """``$STOREFRAMES_STATE_DIR`` set to ``folder`` meanwhile: the machine's window in a file of the run's own."""
    saved = os.environ.get("STOREFRAMES_STATE_DIR")
    os.environ["STOREFRAMES_STATE_DIR"] = folder
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("STOREFRAMES_STATE_DIR", None)
        else:
            os.environ["STOREFRAMES_STATE_DIR"] = saved


def _fastest(runs: list[dict]) -> dict:
    return min(runs, key=lambda f: f["seconds"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trace", action="store_true", help="show where the time of each window went")
    parser.add_argument("--redis", metavar="URL", help="also measure a Redis coordinator at URL")
    parser.add_argument(
        "--latencies",
        default=",".join(f"{d * 1000:g}" for d in LATENCIES),
        help="milliseconds of mean latency at the service's own limit (default %(default)s)",
    )
    parser.add_argument(
        "--scaled-latencies",
        default=",".join(f"{d * 1000:g}" for d in SCALED_LATENCIES),
        help="milliseconds of mean latency at 30 per 3 s (default %(default)s; the first through every coordinator)",
    )
    parser.add_argument("--requests", type=int, default=180, help="requests at the service's own limit")
    parser.add_argument("--jitter", type=float, default=0.5, help="latency x uniform(1 - J, 1 + J) (default 0.5)")
    parser.add_argument("--seed", type=int, default=39, help="the seed of the drawn latencies")
    parser.add_argument("--workers", type=int, help="the client's max_workers (default: the limit's requests)")
    parser.add_argument("--body-ms", type=float, default=0.0, help="milliseconds each body follows its headers")
    parser.add_argument("--handshake-ms", type=float, default=0.0, help="milliseconds a new connection costs")
    parser.add_argument("--repeat", type=int, default=1, help="each figure the fastest of N runs, taken in turn")
    args = parser.parse_args(argv)
    drawn = dict(
        jitter=args.jitter,
        seed=args.seed,
        workers=args.workers,
        trace=args.trace,
        body=args.body_ms / 1000,
        handshake=args.handshake_ms / 1000,
    )
    cases: list[dict[str, Any]] = [
        dict(limit=60, window=10.0, latency=float(ms) / 1000, requests=args.requests)
        for ms in args.latencies.split(",")
        if ms.strip()
    ]
    coordinators = ["machine", "process"] + ([args.redis] if args.redis else [])
    for n, ms in enumerate(ms for ms in args.scaled_latencies.split(",") if ms.strip()):
        for c in coordinators if n == 0 else ["machine"]:  # the scaled 30 per 3 s
            cases.append(dict(coordinator=c, latency=float(ms) / 1000))
    runs: list[list[dict]] = [[] for _ in cases]
    for _ in range(args.repeat):
        for case, done in zip(cases, runs, strict=True):
            done.append(fetch_ratio(**case, **drawn))
    figures = [_fastest(done) for done in runs]
    figures += [overhead(coordinator=c, repeat=max(3, args.repeat)) for c in ("machine", "process")]
    print(f"machine: {platform.machine()}, {platform.python_implementation()} {platform.python_version()}")
    print(f"{'figure':<22} {'setting':<52} {'result'}")
    for f in figures:
        if f["figure"] == "fetch_throughput":
            setting = (
                f"{f['requests']} req, {f['limit']}, {f['latency_ms']:.0f} ms, {f['workers']} thr, {f['coordinator']}"
            )
            result = (
                f"{f['seconds']} s, {f['share_of_ceiling']:.1%} of ceiling (best safe {f['best_safe_share']:.1%}, "
                f"client {f['share_of_best_safe']:.1%} of it), {f['http_429']} x 429, "
                f"at most {f['most_in_any_window']} in a window"
            )
        else:
            setting = f"{f['requests']} sequential, canned body, {f['coordinator']} window"
            result = f"{f['us_per_request']} us per request"
        print(f"{f['figure']:<22} {setting:<52} {result}")
    for f in figures:
        print(json.dumps(f))


if __name__ == "__main__":
    sys.exit(main())
