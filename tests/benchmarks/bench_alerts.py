"""Alert benchmarks: what judging the rules adds to a tracker's run, and what a month's digest takes.

Not collected by the test run. Run::

    .venv/bin/python tests/benchmarks/bench_alerts.py            # 50 keywords x 2 countries, 40 apps, 30 days
    .venv/bin/python tests/benchmarks/bench_alerts.py --quick    # 10 keywords, 10 apps, 10 days
    .venv/bin/python tests/benchmarks/bench_alerts.py --flaps    # the top rule's margin, on a replayed month

The spec: the live search of the keywords in the US and Great Britain, the search with ads
of the first tenth of them, the metadata of the apps; every rule of an ``[[alert]]``
(``rank_drop``, ``top`` and ``anomaly`` on the apps, ``listing_change`` on them, ``new_advertiser``,
``budget``, ``unknown_field``). The cache is filled by one tracker with the alerts on, a run
a day, through the sandbox's transport with the rate limit lifted; each run's judgement is
timed by the run itself (the run's seconds with and without it are compared on the last day).

The figures, on the cache of the whole period:

* ``judge_new_process``: ``tracker.alerts(day)`` in a new process, as ``storeframes track alerts``
  (reads the cache's index, judges the last day: nothing new), best of 3, the interpreter's start included;
* ``judge_same_tracker``: ``tracker.alerts(day)`` again in this process, best of 3; and
  ``judge_without_anomaly``, the same of a tracker of every rule but ``anomaly`` on the same cache;
* ``judge_in_runs``: the seconds the month's runs spent judging (sum, and per run at most);
* ``digest``: ``tracker.digest(first, last)`` of the whole period, best of 3, and its size;
* ``events``: the events found in the period, by rule.

Prints a table, then one JSON line per figure.

``--flaps`` replays the tracking example's month instead (2026-10-22 to 2026-11-20: its five apps, its
three keywords, a run a day on the sandbox) with a ``top`` rule (n = 10) at each margin from 0 to 3,
and the default ``listing_change`` rule beside one that names every target; it prints each margin's
top-10 events, those of an app back across the line within two days of its last event (a flap), and
the listing events by target. The default margin (:data:`storeframes.track.rules.TOP_MARGIN`) was
chosen from it.
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
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from storeframes.wire.http import lib as httpx

sys.path.insert(0, str(Path(__file__).parent))

from bench_track import FIRST_DAY, DayTransport, state_dir

import storeframes as sf
from storeframes.sandbox import SANDBOX_BASE_URL, SANDBOX_KEY, World
from storeframes.track.rules import DEFAULT_TARGETS

FULL = {"keywords": 50, "apps": 40, "days": 30}
QUICK = {"keywords": 10, "apps": 10, "days": 10}
REPEAT = 3


def every_rule(apps: str, *, anomaly: bool = True) -> str:
    """Every rule of an ``[[alert]]``, the app rules on ``apps`` (a TOML list): the end of a benchmark's spec
    (``anomaly=False``: all but the ``anomaly`` rule)."""
    unusual = f"""
[[alert]]
rule = "anomaly"
apps = {apps}
"""
    return f"""[[alert]]
rule = "rank_drop"
apps = {apps}

[[alert]]
rule = "top"
apps = {apps}
{unusual if anomaly else ""}
[[alert]]
rule = "listing_change"

[[alert]]
rule = "new_advertiser"

[[alert]]
rule = "budget"
at = 0.5

[[alert]]
rule = "unknown_field"
"""


def spec_text(size: dict[str, Any], cache_dir: Path, *, anomaly: bool = True) -> str:
    world = World(0)
    words = [*world.EXAMPLE_KEYWORDS, *(f"keyword {i}" for i in range(size["keywords"]))][: size["keywords"]]
    day = FIRST_DAY
    ranked = [a for w in words[:5] for a in world.search(w, device="iphone", country="us", language="en", day=day)[:8]]
    apps = list(dict.fromkeys(ranked))[: size["apps"]]
    listed = json.dumps(apps)
    return f"""[tracker]
name = "bench-alerts"
cache_dir = {json.dumps(cache_dir.as_posix())}
device = "iphone"
budget_per_month = 10000000

[[track]]
endpoint = "search"
keywords = {json.dumps(words)}
countries = ["us", "gb"]

[[track]]
endpoint = "search_ads"
keywords = {json.dumps(words[: max(1, len(words) // 10)])}

[[track]]
endpoint = "metadata"
apps = {listed}

{every_rule(listed, anomaly=anomaly)}"""


def best(call: Any) -> float:
    times = []
    for _ in range(REPEAT):
        began = time.perf_counter()
        call()
        times.append(time.perf_counter() - began)
    return round(min(times), 3)


def figures(size: dict[str, Any]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="storeframes-bench-alerts-") as folder, state_dir():
        spec = Path(folder) / "bench.toml"
        spec.write_text(spec_text(size, Path(folder) / "cache"), encoding="utf-8")
        transport = DayTransport(World(0))
        judged: list[float] = []
        requests = 0
        began = time.perf_counter()
        with httpx.Client(transport=transport) as http:
            options = {"api_key": SANDBOX_KEY, "base_url": SANDBOX_BASE_URL, "http_client": http,
                       "rate_limit": (10**6, 1.0), "progress": False}  # fmt: skip
            tracker = sf.Tracker.from_toml(spec, **options)
            plain = sf.Tracker(sf.track.parse_spec(spec.read_text().split("[[alert]]")[0], path=spec), **options)
            for n in range(size["days"]):
                transport.day = day = FIRST_DAY + timedelta(days=n)
                result = tracker.run(today=day)
                requests += result.requests
                start = time.perf_counter()
                tracker.alerts(day, notify=False)  # what the run's judgement costs, timed alone
                judged.append(time.perf_counter() - start)
            if os.environ.get("BENCH_PROFILE"):
                import cProfile
                import pstats

                cProfile.runctx("tracker.alerts(day, notify=False)", globals(), locals(), "/tmp/judge.prof")
                pstats.Stats("/tmp/judge.prof").sort_stats("cumulative").print_stats(30)
            last = FIRST_DAY + timedelta(days=size["days"] - 1)
            filled = round(time.perf_counter() - began, 1)
            same = best(lambda: tracker.alerts(last, notify=False))
            others = sf.track.parse_spec(spec_text(size, Path(folder) / "cache", anomaly=False), path=spec)
            without = best(lambda: sf.Tracker(others, **options).alerts(last, notify=False))
            run_without = best(lambda: plain.run(today=last))
            judge = (  # as `storeframes track alerts` does, of the service the cache was filled from
                "import storeframes as sf, sys; from storeframes.sandbox import SANDBOX_BASE_URL, SANDBOX_KEY; "
                "sf.Tracker.from_toml(sys.argv[1], api_key=SANDBOX_KEY, base_url=SANDBOX_BASE_URL, progress=False)"
                ".alerts(sys.argv[2], notify=False)"
            )
            command = [sys.executable, "-c", judge, str(spec), last.isoformat()]
            new_process = best(lambda: subprocess.run(command, check=True, capture_output=True, timeout=600))
            written: list[Path] = []
            digest = best(
                lambda: written.__setitem__(slice(None), tracker.digest(FIRST_DAY, last, path=Path(folder) / "d.html"))
            )
            events = tracker.events()
        by_rule = {rule: n for rule, n in events.group_by("rule").len().sort("rule").iter_rows()}
        return {
            "benchmark": "alerts",
            **size,
            "requests": requests,
            "fill_seconds": filled,
            "events": events.height,
            "events_by_rule": by_rule,
            "judge_new_process_seconds": new_process,
            "judge_same_tracker_seconds": same,
            "judge_without_anomaly_seconds": without,
            "judge_in_runs_seconds_sum": round(sum(judged), 2),
            "judge_in_runs_seconds_max": round(max(judged), 3),
            "run_nothing_due_seconds": run_without,
            "digest_seconds": digest,
            "digest_bytes": written[0].stat().st_size,
            "digest_charts": len(written) - 2,
        }


FLAP_APPS = ["3233849169", "394079159", "1395556972", "1286838609", "6441354028"]
FLAP_KEYWORDS = ["photo editor", "photo filters", "collage maker"]
FLAP_FIRST = date(2026, 10, 22)
EVERY_TARGET = [*DEFAULT_TARGETS, "size", "version"]


def _flap_spec(folder: Path, name: str, margin: int, targets: list[str] | None) -> Path:
    listing = f"\ntargets = {json.dumps(targets)}" if targets else ""
    path = folder / f"{name}.toml"
    path.write_text(
        f"""[tracker]
name = "{name}"
cache_dir = "cache"
device = "iphone"

[[track]]
endpoint = "search"
keywords = {json.dumps(FLAP_KEYWORDS)}

[[track]]
endpoint = "metadata"
apps = {json.dumps(FLAP_APPS)}

[[track]]
endpoint = "changes"
apps = {json.dumps(FLAP_APPS)}
lookback = "7d"

[[alert]]
rule = "top"
apps = {json.dumps(FLAP_APPS)}
n = 10
margin = {margin}

[[alert]]
rule = "listing_change"{listing}
""",
        encoding="utf-8",
    )
    return path


def _flapped(top: Any) -> int:
    """The top events of an app whose previous event, of the same keyword, was at most two days before."""
    import polars as pl

    ordered = top.sort("keyword", "app_id", "day").with_columns(
        gap=(pl.col("day") - pl.col("day").shift(1).over("keyword", "app_id")).dt.total_days()
    )
    return ordered.filter(pl.col("gap") <= 2).height


def flaps(days: int = 30) -> dict[str, Any]:
    """Each margin's top-10 events and flaps, and the listing events by target, over a replayed month."""
    import polars as pl

    found: dict[str, Any] = {"benchmark": "alert_flaps", "days": days, "margins": {}, "listing": {}}
    with tempfile.TemporaryDirectory(prefix="storeframes-bench-flaps-") as folder, state_dir():
        trackers = {
            margin: sf.Tracker.from_toml(
                _flap_spec(Path(folder), f"margin-{margin}", margin, EVERY_TARGET if margin == 0 else None),
                sandbox=True,
                progress=False,
            )
            for margin in range(4)
        }
        for n in range(days):
            for tracker in trackers.values():
                tracker.run(today=FLAP_FIRST + timedelta(days=n))
        for margin, tracker in trackers.items():
            events = tracker.events()
            top = events.filter(pl.col("rule") == "top")
            found["margins"][margin] = {"top_events": top.height, "flaps": _flapped(top)}
            listed = events.filter(pl.col("rule") == "listing_change").group_by("target").len().sort("target")
            label = "every_target" if margin == 0 else "default_targets" if margin == 1 else None
            if label:
                found["listing"][label] = dict(listed.iter_rows())
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 keywords, 10 apps, 10 days")
    parser.add_argument("--flaps", action="store_true", help="the top rule's margin on a replayed month")
    args = parser.parse_args()
    os.environ["STOREFRAMES_PROGRESS"] = "0"
    if args.flaps:
        f = flaps()
        for margin, counts in f["margins"].items():
            print(f"top 10, margin {margin}: {counts['top_events']} events, {counts['flaps']} of them flaps")
        for label, targets in f["listing"].items():
            print(f"listing_change, {label.replace('_', ' ')}: {sum(targets.values())} events {targets}")
        print(json.dumps(f))
        return
    f = figures(QUICK if args.quick else FULL)
    print(f"machine: {os.cpu_count()} CPUs, {platform.machine()}, {platform.python_implementation()} "
          f"{platform.python_version()}")  # fmt: skip
    print(
        f"{f['keywords']} keywords x 2 countries, {f['apps']} apps, {f['days']} days: {f['requests']:,} requests "
        f"(filled in {f['fill_seconds']} s); {f['events']} events {f['events_by_rule']}"
    )
    print(
        f"judge: new process {f['judge_new_process_seconds']:.3f} s, same tracker "
        f"{f['judge_same_tracker_seconds']:.3f} s ({f['judge_without_anomaly_seconds']:.3f} s without the anomaly "
        f"rule); in the runs {f['judge_in_runs_seconds_sum']:.2f} s in all, "
        f"at most {f['judge_in_runs_seconds_max']:.3f} s a run (a run with nothing due, without alerts: "
        f"{f['run_nothing_due_seconds']:.3f} s)"
    )
    print(
        f"digest of the period: {f['digest_seconds']:.3f} s, {f['digest_bytes']:,} bytes, {f['digest_charts']} charts"
    )
    print(json.dumps(f))


if __name__ == "__main__":
    main()
