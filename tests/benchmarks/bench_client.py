"""Client benchmarks: fetch throughput under the rate limit, and per-request overhead.

Not collected by the test run. Run::

    .venv/bin/python tests/benchmarks/bench_client.py

Caching is off, so every request reaches the sandbox (and nothing is written to the default
cache folder). Prints a table, then one JSON line per figure.
"""

from __future__ import annotations

import json
import platform
import time

import httpx

import storeframes as sf
from storeframes.sandbox import SandboxServer


def fetch_ratio(*, limit: int, window: float, latency: float, requests: int, workers: int) -> dict:
    """Requests per second through the loopback sandbox, as a share of the limit's ceiling."""
    with SandboxServer(port=0, rate_limit=(limit, window), latency=latency) as server:
        with sf.Client(
            server.key, base_url=server.base_url, rate_limit=(limit, window), max_workers=workers, cache_dir=False
        ) as client:
            started = time.perf_counter()
            client.get_many("search", [{"keyword": f"keyword {i}"} for i in range(requests)])
            took = time.perf_counter() - started
        rejected = sum(a.status == 429 for a in server.service.arrivals)
    # the first `limit` requests go at once; each further `limit` needs one more window
    ceiling_seconds = ((requests - 1) // limit) * window
    return {
        "figure": "fetch_throughput",
        "limit": f"{limit}/{window:g}s",
        "latency_ms": latency * 1000,
        "requests": requests,
        "seconds": round(took, 2),
        "requests_per_second": round(requests / took, 2),
        "share_of_ceiling": round(ceiling_seconds / took, 3),
        "http_429": rejected,
        "workers": workers,
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


def main() -> None:
    figures = [
        fetch_ratio(limit=30, window=3.0, latency=0.15, requests=150, workers=4),
        fetch_ratio(limit=60, window=10.0, latency=0.15, requests=120, workers=4),
        fetch_ratio(limit=60, window=10.0, latency=0.15, requests=120, workers=8),
        overhead(),
    ]
    print(f"machine: {platform.machine()}, {platform.python_implementation()} {platform.python_version()}")
    print(f"{'figure':<22} {'setting':<36} {'result'}")
    for f in figures:
        if f["figure"] == "fetch_throughput":
            setting = f"{f['requests']} req, {f['limit']}, {f['latency_ms']:.0f} ms, {f['workers']} thr"
            result = f"{f['seconds']} s, {f['share_of_ceiling']:.0%} of ceiling, {f['http_429']} x 429"
        else:
            setting = f"{f['requests']} sequential, canned body"
            result = f"{f['us_per_request']} us per request"
        print(f"{f['figure']:<22} {setting:<36} {result}")
    for f in figures:
        print(json.dumps(f))


if __name__ == "__main__":
    main()
