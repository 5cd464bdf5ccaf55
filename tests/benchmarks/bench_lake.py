"""Team table benchmarks: what publishing a month of tracking to a Delta Lake costs, and a re-publish.

Not collected by the test run. Run::

    .venv/bin/python tests/benchmarks/bench_lake.py            # 50 keywords x 2 countries, 40 apps, 30 days
    .venv/bin/python tests/benchmarks/bench_lake.py --quick    # 10 keywords, 10 apps, 7 days

The spec: the live search of the keywords in the US and Great Britain, the search history of
the first tenth of them (ten days of lookback, then a day a run), the metadata of the apps and
their downloads and ratings, every day. The cache (a folder) is filled by one tracker, a run a
day, through the sandbox's transport with the rate limit lifted (as ``bench_track.py`` does).
Then every table those items fill is published to a Delta Lake in a folder with
``sf.publish``, the current-only ones with ``snapshots=True`` (a month of daily snapshots
appended at once), each timed on its own:

* ``first``: the first publish of each table, in this process from the cache's folder (the first
  table's time holds the reading of the cache's index): its rows, seconds, and the files it wrote in
  the Delta folder (data files and log entries, the snapshot table's included);
* ``again``: the same publish once more with nothing new, in a new process (``sf.publish`` timed in
  it, the index read included; and the whole process, the interpreter's start included) and in this
  process from the open cache (as a tracker's run publishes), best of 3; the aim is under 1 s for
  the publish, and no file written;
* ``next_day``: one more day's run, then each table published again from the open cache: the
  rows inserted, updated and deleted, seconds and files written.

Prints a table, then one JSON line per figure.
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
from datetime import timedelta
from pathlib import Path
from typing import Any

import polars as pl

from storeframes.wire.http import lib as httpx

sys.path.insert(0, str(Path(__file__).parent))

from bench_track import FIRST_DAY, DayTransport, state_dir

import storeframes as sf
from storeframes.cache import open_cache
from storeframes.kept.snapshots import SNAPSHOT_TABLES
from storeframes.sandbox import SANDBOX_BASE_URL, SANDBOX_KEY, World
from storeframes.track.publishing import filled_tables

FULL = {"keywords": 50, "apps": 40, "days": 30}
QUICK = {"keywords": 10, "apps": 10, "days": 7}
REPEAT = 3


def spec_text(size: dict[str, Any], cache_dir: Path) -> str:
    """The benchmark's tracker: search of the keywords in two countries, a tenth of them's history, the apps'
    metadata and metrics, every day."""
    world = World(0)
    words = [*world.EXAMPLE_KEYWORDS, *(f"keyword {i}" for i in range(size["keywords"]))][: size["keywords"]]
    apps = [a for a in world.app_ids("ios") if a not in world.UNAVAILABLE_IN_US][: size["apps"]]
    return f"""[tracker]
name = "bench-lake"
cache_dir = {json.dumps(cache_dir.as_posix())}
device = "iphone"

[[track]]
endpoint = "search"
keywords = {json.dumps(words)}
countries = ["us", "gb"]

[[track]]
endpoint = "search_history"
keywords = {json.dumps(words[: max(1, len(words) // 10)])}
lookback = "10d"

[[track]]
endpoint = "metadata"
apps = {json.dumps(apps)}

[[track]]
endpoint = "metrics"
apps = {json.dumps(apps)}
metrics = ["downloads", "ratings"]
"""


def files_of(lake: Path, table: str) -> dict[str, int]:
    """The files of a table's Delta folders (``<table>`` and ``<table>_snapshots``): data and log entries."""
    data = log = 0
    for folder in (lake / table, lake / f"{table}_snapshots"):
        if folder.exists():
            for path in folder.rglob("*"):
                if path.is_file():
                    if "_delta_log" in path.parts:
                        log += 1
                    else:
                        data += 1
    return {"data_files": data, "log_files": log}


def written(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {f"{k}_written": after[k] - before[k] for k in after}


def publish_once(table: str, lake: Path, cache_dir: Any) -> tuple[Any, float, dict[str, int]]:
    """``sf.publish`` of ``table``, timed, and the files it wrote."""
    before = files_of(lake, table)
    began = time.perf_counter()
    result = sf.publish(table, lake, cache_dir=cache_dir, snapshots=table in SNAPSHOT_TABLES)
    took = time.perf_counter() - began
    return result, took, written(before, files_of(lake, table))


CHILD = (
    "import json, sys, time; import storeframes as sf; began = time.perf_counter(); "
    "r = sf.publish(sys.argv[1], sys.argv[2], cache_dir=sys.argv[3], snapshots=sys.argv[4] == '1'); "
    "print(json.dumps({'seconds': time.perf_counter() - began, 'written': r.written, 'version': r.version}))"
)
"""``sf.publish`` of a table in a new process, as ``storeframes publish`` runs: its own seconds, and what it did."""


def in_new_process(table: str, lake: Path, cache_dir: Path) -> tuple[dict[str, Any], float]:
    """What :data:`CHILD` printed, and the process's whole seconds."""
    command = [sys.executable, "-c", CHILD, table, str(lake), str(cache_dir), "1" if table in SNAPSHOT_TABLES else "0"]
    began = time.perf_counter()
    done = subprocess.run(command, check=True, capture_output=True, text=True, timeout=600)
    return json.loads(done.stdout.strip().splitlines()[-1]), time.perf_counter() - began


def figures(size: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="storeframes-bench-lake-") as tmp, state_dir():
        folder = Path(tmp)
        spec = folder / "bench.toml"
        spec.write_text(spec_text(size, folder / "cache"), encoding="utf-8")
        cache_dir, lake = folder / "cache", folder / "lake"
        transport = DayTransport(World(0))
        requests = 0
        began = time.perf_counter()
        with httpx.Client(transport=transport) as http:
            tracker = sf.Tracker.from_toml(
                spec, api_key=SANDBOX_KEY, base_url=SANDBOX_BASE_URL, http_client=http, rate_limit=(10**6, 1.0),
                progress=False,
            )  # fmt: skip
            for n in range(size["days"]):
                transport.day = day = FIRST_DAY + timedelta(days=n)
                result = tracker.run(today=day)
                if result.status != "ok":
                    raise RuntimeError(f"filling the cache: the run of {day} ended {result.status}: {result.errors}")
                requests += result.requests
            filled = round(time.perf_counter() - began, 1)
            tables = filled_tables(i.endpoint for i in tracker.spec.items)
            base = {"benchmark": "lake", **size, "requests": requests, "fill_seconds": filled}
            for table in tables:
                result, took, files = publish_once(table, lake, cache_dir)
                rows = sf.scan(table, cache_dir).select(pl.len()).collect().item()
                found.append({**base, "case": "first", "table": table, "rows": rows, "inserted": result.inserted,
                              "snapshot_rows": result.snapshot_rows, "version": result.version,
                              "seconds": round(took, 3), **files})  # fmt: skip
            cache = open_cache(cache_dir)
            for table in tables:
                fresh, whole, kept = [], [], []
                before = files_of(lake, table)
                ever = False
                for _ in range(REPEAT):
                    child, took = in_new_process(table, lake, cache_dir)
                    fresh.append(child["seconds"])
                    whole.append(took)
                    result, took, _ = publish_once(table, lake, cache)
                    kept.append(took)
                    ever = ever or child["written"] or result.written
                found.append({**base, "case": "again", "table": table, "written": ever, "version": result.version,
                              "seconds": round(min(fresh), 3), "new_process_seconds": round(min(whole), 3),
                              "open_cache_seconds": round(min(kept), 3),
                              **written(before, files_of(lake, table))})  # fmt: skip
            transport.day = day = FIRST_DAY + timedelta(days=size["days"])
            run = tracker.run(today=day)
            for table in tables:
                result, took, files = publish_once(table, lake, cache)
                found.append({**base, "case": "next_day", "table": table, "run_requests": run.requests,
                              "inserted": result.inserted, "updated": result.updated, "deleted": result.deleted,
                              "snapshot_rows": result.snapshot_rows, "version": result.version,
                              "seconds": round(took, 3), **files})  # fmt: skip
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 keywords, 10 apps, 7 days")
    args = parser.parse_args()
    os.environ["STOREFRAMES_PROGRESS"] = "0"
    found = figures(QUICK if args.quick else FULL)
    first = found[0]
    print(f"machine: {os.cpu_count()} CPUs, {platform.machine()}, {platform.python_implementation()} "
          f"{platform.python_version()}")  # fmt: skip
    print(f"{first['keywords']} keywords x 2 countries, {first['apps']} apps, {first['days']} days: "
          f"{first['requests']:,} requests (filled in {first['fill_seconds']} s)")  # fmt: skip
    print(f"{'table':<18} {'first: rows':>11} {'snapshot rows':>13} {'s':>7} {'files':>6} {'log':>4}   "
          f"{'again s':>7} {'process s':>9} {'open s':>7} {'written':>7}   {'next day: ins':>13} {'upd':>6} "
          f"{'del':>5} {'s':>7}")  # fmt: skip
    by = {(f["case"], f["table"]): f for f in found}
    for table in dict.fromkeys(f["table"] for f in found):
        a, b, c = by[("first", table)], by[("again", table)], by[("next_day", table)]
        print(
            f"{table:<18} {a['rows']:>11,} {a['snapshot_rows']:>13,} {a['seconds']:>7.3f} {a['data_files_written']:>6} "
            f"{a['log_files_written']:>4}   {b['seconds']:>7.3f} {b['new_process_seconds']:>9.3f} "
            f"{b['open_cache_seconds']:>7.3f} {b['data_files_written'] + b['log_files_written']:>7}   "
            f"{c['inserted']:>13,} {c['updated']:>6,} "
            f"{c['deleted']:>5,} {c['seconds']:>7.3f}"
        )
    for f in found:
        print(json.dumps(f))


if __name__ == "__main__":
    main()
