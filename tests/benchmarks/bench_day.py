"""A tracker's day: what a daily run costs beside its requests, day after day of a replayed month.

Not collected by the test run. Run::

    .venv/bin/python tests/benchmarks/bench_day.py                  # 30 days, on a folder and on a bucket
    .venv/bin/python tests/benchmarks/bench_day.py --quick          # 16 days, on a folder and on a bucket
    .venv/bin/python tests/benchmarks/bench_day.py --store folder   # one store only (folder or bucket)

The spec: the live search of 30 keywords in 2 countries (60 requests), the search with ads of 5 of
them in both (10), the metadata of 20 apps and their change history; every alert rule (``rank_drop``,
``top`` and ``anomaly`` on the apps, ``listing_change``, ``new_advertiser``, ``budget``, ``unknown_field``), so each
run judges the day and keeps the day's digest. A new tracker runs it once a day (as a scheduler starts
``storeframes track run`` each day) against a sandbox server in its own process at the rate limit,
scaled (30 requests per 3 s, 50 ms latency), whose today is moved on to the run's day before it;
the cache is a folder, or a bucket of moto's S3 server (in its own process), never compacted by
hand.

With ``--processes``, each day's run is a new Python process (as a scheduler starts one), making its
tracker and running the day as ``storeframes track run`` does: its time then counts the interpreter's start and
imports before its first request, and what the process still does after its last answer until it exits.

Each day prints its requests, the seconds from the run's start to its last answer (the server's
record of the last arrival, plus the latency), the seconds after it (judging, the digest, the run
log, any upkeep) and the run's whole time. The figures: the mean run of days 14-16 over that of
days 2-4 (``late_x_early``: the aim is at most 1.5), and the time after the last answer (the most,
and its mean over days 14-16: the aim is under 1 s on the folder).

Prints a table, then one JSON line per store (``day.<store>``) with every day's row.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from bench_alerts import every_rule
from bench_track import state_dir

import storeframes as sf
from storeframes.sandbox import SANDBOX_KEY, World

FIRST_DAY = date(2026, 10, 21)
FULL = {"days": 30, "keywords": 30, "ads": 5, "apps": 20, "limit": 30, "window": 3.0, "latency": 0.05}
QUICK = {**FULL, "days": 16}
COUNTRIES = ("us", "gb")

_SERVER = """
import json, sys
from storeframes.sandbox import Latency, SandboxServer

limit, window, latency, today = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
with SandboxServer(port=0, rate_limit=(limit, window), latency=Latency(outbound=latency), today=today) as server:
    print(server.base_url, flush=True)
    for line in sys.stdin:
        command, _, value = line.strip().partition(" ")
        if command == "day":  # the next requests answer as on that day
            server.service.today = value
            print("ok", flush=True)
        elif command == "since":  # the arrivals since a time: how many, the last, and the 429s
            times = [a.time for a in server.service.arrivals if a.time >= float(value)]
            statuses = [a.status for a in server.service.arrivals if a.time >= float(value)]
            print(json.dumps([len(times), max(times, default=None), statuses.count(429)]), flush=True)
        else:
            break
"""

_MOTO = """
import logging, sys
from moto.server import ThreadedMotoServer

logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per request

server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
server.start()
host, port = server.get_host_and_port()
print(f"http://{host}:{port}", flush=True)
sys.stdin.readline()
server.stop()
"""


_RUN = """
import json, sys
import storeframes as sf
from datetime import date
spec, base_url, day, limit, window, options = sys.argv[1:7]
tracker = sf.Tracker.from_toml(spec, api_key=sf.sandbox.SANDBOX_KEY, base_url=base_url, progress=False,
                               rate_limit=(int(limit), float(window)), **json.loads(options))
result = tracker.run(today=date.fromisoformat(day))
print(json.dumps({"status": result.status, "events": result.events, "errors": result.errors[:3],
                  "compaction": getattr(result, "compaction", None)}), flush=True)
"""


class Server:
    """The sandbox server in a process of its own, its day moved by a line on its input."""

    def __init__(self, size: dict[str, Any]):
        command = [sys.executable, "-c", _SERVER, str(size["limit"]), repr(size["window"]), repr(size["latency"])]
        self.process = subprocess.Popen(
            [*command, FIRST_DAY.isoformat()], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self.base_url = self._answer()

    def _answer(self, line: str | None = None) -> str:
        assert self.process.stdin is not None and self.process.stdout is not None
        if line is not None:
            self.process.stdin.write(line + "\n")
            self.process.stdin.flush()
        answer = self.process.stdout.readline().strip()
        if not answer:
            raise RuntimeError("the sandbox server stopped")
        return answer

    def day(self, day: date) -> None:
        self._answer(f"day {day.isoformat()}")

    def since(self, started: float) -> tuple[int, float | None, int]:
        count, last, limited = json.loads(self._answer(f"since {started!r}"))
        return count, last, limited

    def close(self) -> None:
        self.process.communicate("stop\n", timeout=10)


@contextmanager
def bucket() -> Iterator[tuple[str, dict[str, str]]]:
    """A fresh bucket of moto's S3 server in its own process: its address and storage options."""
    import boto3

    moto = subprocess.Popen(
        [sys.executable, "-c", _MOTO],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert moto.stdout is not None
    try:
        endpoint = moto.stdout.readline().strip()
        options = {
            "aws_access_key_id": "AKIAFAKEBENCH0KEY",
            "aws_secret_access_key": "fake/bench+secret",
            "aws_endpoint_url": endpoint,
            "aws_region": "us-east-1",
        }
        name = f"sf-bench-{uuid.uuid4().hex[:12]}"
        client = boto3.client(
            "s3",
            endpoint_url=endpoint,
            aws_access_key_id=options["aws_access_key_id"],
            aws_secret_access_key=options["aws_secret_access_key"],
            region_name="us-east-1",
        )
        client.create_bucket(Bucket=name)
        yield f"s3://{name}/cache", options
    finally:
        moto.communicate("stop\n", timeout=30)


def spec_text(size: dict[str, Any], cache_dir: str) -> str:
    """The benchmark's spec: live search, search with ads, apps' metadata and changes, every alert rule."""
    world = World(0)
    words = [*world.EXAMPLE_KEYWORDS, *(f"keyword {i}" for i in range(size["keywords"]))][: size["keywords"]]
    ranked = [
        a for w in words[:5] for a in world.search(w, device="iphone", country="us", language="en", day=FIRST_DAY)[:8]
    ]
    apps = json.dumps(list(dict.fromkeys(ranked))[: size["apps"]])
    return f"""[tracker]
name = "bench-day"
cache_dir = {json.dumps(cache_dir)}
device = "iphone"
budget_per_month = 10000000

[[track]]
endpoint = "search"
keywords = {json.dumps(words)}
countries = {json.dumps(list(COUNTRIES))}

[[track]]
endpoint = "search_ads"
keywords = {json.dumps(words[: size["ads"]])}
countries = {json.dumps(list(COUNTRIES))}

[[track]]
endpoint = "metadata"
apps = {apps}

[[track]]
endpoint = "changes"
apps = {apps}
lookback = "7d"

{every_rule(apps)}"""


@dataclass
class Ran:
    """What a day's run said of itself."""

    status: str
    events: int
    errors: list[str]
    compaction: dict[str, Any] | None


def run_day(
    spec: Path, server: Server, size: dict[str, Any], options: dict[str, Any], day: date, processes: bool
) -> Ran:
    """The day's run by a new tracker: in this process, or in a new one (``processes``)."""
    if not processes:
        tracker = sf.Tracker.from_toml(
            spec,
            api_key=SANDBOX_KEY,
            base_url=server.base_url,
            progress=False,
            rate_limit=(size["limit"], size["window"]),
            **options,
        )
        result = tracker.run(today=day)
        return Ran(result.status, result.events, result.errors, getattr(result, "compaction", None))
    limit, window = str(size["limit"]), repr(size["window"])
    command = [
        sys.executable,
        "-c",
        _RUN,
        str(spec),
        server.base_url,
        day.isoformat(),
        limit,
        window,
        json.dumps(options),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"the run of {day} failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
    said = json.loads(lines[-1])
    return Ran(said["status"], said["events"], said["errors"], said["compaction"])


def month(size: dict[str, Any], store: str, processes: bool = False) -> dict[str, Any]:
    """A run a day for ``size["days"]`` days on ``store`` (``folder`` or ``bucket``): each day's row and the figures;
    each run a new process with ``processes``."""
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="storeframes-bench-day-") as tmp, state_dir(), _store(store, tmp) as place:
        cache_dir, options = place
        spec = Path(tmp) / "day.toml"
        spec.write_text(spec_text(size, cache_dir), encoding="utf-8")
        server = Server(size)
        try:
            for n in range(size["days"]):
                day = FIRST_DAY + timedelta(days=n)
                server.day(day)
                started = time.monotonic()
                result = run_day(spec, server, size, options, day, processes)
                ended = time.monotonic()
                count, last, limited = server.since(started)
                answered = (last + size["latency"]) if last is not None else started
                rows.append(
                    {
                        "day": n + 1,
                        "date": day.isoformat(),
                        "status": result.status,
                        "requests": count,
                        "http_429": limited,
                        "to_last_s": round(answered - started, 2),
                        "after_s": round(ended - answered, 2),
                        "total_s": round(ended - started, 2),
                        "events": result.events,
                        "compacted_s": (result.compaction or {}).get("seconds"),
                        "errors": result.errors[:3],
                    }
                )
                r = rows[-1]
                print(
                    f"{store:<7} day {r['day']:>2} {r['date']}  {r['status']:<8} {r['requests']:>4} requests  "
                    f"to last {r['to_last_s']:>6.2f} s  after {r['after_s']:>6.2f} s  total {r['total_s']:>6.2f} s"
                    f"  {r['events']:>3} events"
                    + (f"  compacted in {r['compacted_s']:.2f} s" if r["compacted_s"] else ""),
                    flush=True,
                )
        finally:
            server.close()
    return {"store": store, "processes": processes, **figures(rows), "size": size, "days": rows}


@contextmanager
def _store(store: str, tmp: str) -> Iterator[tuple[str, dict[str, Any]]]:
    if store == "folder":
        yield (Path(tmp) / "cache").as_posix(), {}
        return
    with bucket() as (url, options):
        yield url, {"storage_options": options}


def _mean(rows: list[dict[str, Any]], key: str, days: range) -> float | None:
    chosen = [r[key] for r in rows if r["day"] in days]
    return round(sum(chosen) / len(chosen), 3) if chosen else None


def figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Days 14-16 over days 2-4 (whole runs), and the time after the last answer."""
    early, late = _mean(rows, "total_s", range(2, 5)), _mean(rows, "total_s", range(14, 17))
    return {
        "late_x_early": round(late / early, 3) if early and late else None,
        "early_total_s": early,
        "late_total_s": late,
        "late_after_s": _mean(rows, "after_s", range(14, 17)),
        "max_after_s": max((r["after_s"] for r in rows), default=None),
        "last_after_s": rows[-1]["after_s"] if rows else None,
        "mean_to_last_s": _mean(rows, "to_last_s", range(1, len(rows) + 1)),
    }


def run(
    quick: bool = False,
    stores: tuple[str, ...] = ("folder", "bucket"),
    days: int | None = None,
    processes: bool = False,
) -> list[dict[str, Any]]:
    size = dict(QUICK if quick else FULL)
    if days is not None:
        size["days"] = days
    return [month(size, store, processes) for store in stores]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="16 days")
    parser.add_argument("--days", type=int, help="days replayed (at least 16 for the figures)")
    parser.add_argument("--store", choices=["folder", "bucket", "both"], default="both")
    parser.add_argument("--processes", action="store_true", help="each day's run a new process, as a scheduler's")
    args = parser.parse_args()
    os.environ["STOREFRAMES_PROGRESS"] = "0"
    stores = ("folder", "bucket") if args.store == "both" else (args.store,)
    found = run(args.quick, stores, args.days, args.processes)
    print(
        f"machine: {os.cpu_count()} CPUs, {platform.machine()}, {platform.python_implementation()} "
        f"{platform.python_version()}"
    )
    for f in found:
        print(
            f"{f['store']}: days 14-16 {f['late_total_s']} s / days 2-4 {f['early_total_s']} s = "
            f"{f['late_x_early']}x; after the last answer: days 14-16 {f['late_after_s']} s, at most "
            f"{f['max_after_s']} s"
        )
    for f in found:
        print(json.dumps({"name": f"day.{f['store']}" + (".processes" if args.processes else ""), **f}))


if __name__ == "__main__":
    main()
