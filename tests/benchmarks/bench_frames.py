"""Frame function benchmarks: cold and warm calls through the loopback sandbox, and peak memory.

Not collected by the test run. Run::

    .venv/bin/python tests/benchmarks/bench_frames.py [--apps 200] [--days 90] [--memory-apps 1000]
    .venv/bin/python tests/benchmarks/bench_frames.py --quick    # 50 apps, 30 days, 3 keywords: a smoke run

Cold and warm. ``metadata_frame`` of ``--apps`` iphone apps, ``changes_frame`` of the same apps x
``--days`` days and ``search_history_frame`` of the 6 example keywords (always tracked) x ``--days``
days, through the loopback sandbox (a real HTTP server on 127.0.0.1, one per call) with ``--latency`` (150 ms) on
every request and a scaled rate limit (30 requests per 3 s, the client's and the sandbox's
alike): "cold" is the first call with an empty cache folder, so it is mostly waiting on the
network and the limiter; "warm" is the same call again in the same client, and "warm, new
client" the same call from a new client on the folder. One run each (a second cold run would be
warm). The floor the limit sets on the cold call's requests is given beside it, at the scaled
limit and at the service's 60 per 10 s.

Peak memory. The largest frames the benchmarks build: ``metadata_frame`` of ``--memory-apps``
iphone apps, ``changes_frame`` of ``--memory-changes-apps`` apps x ``--days`` days and
``search_history_frame`` of ``--keywords`` keywords x ``--memory-days`` days. The cache folder
is filled through the in-process sandbox (its cold time is given too); then a fresh child
process opens an offline client on the folder, builds the frame once for one app or keyword
(so imports and first calls are not counted), records its resident size (``VmRSS``), resets the
peak (``VmHWM``, by writing 5 to ``/proc/self/clear_refs``), builds the frame, and takes the
peak as ``VmHWM`` less the resident size before: the memory a warm call needs, the frame
included, set beside ``frame.estimated_size()``. Also the flatten alone of the largest metadata
and change-history answers (those of ``bench_metadata.py`` and ``bench_changes.py``: 1,000 apps,
500 apps x 90 days), measured the same way after the answers are parsed. Where ``/proc`` is
missing or the peak cannot be reset the figures are skipped with a note.

Prints the tables, then one JSON line per figure.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import polars as pl
from _flatten_timing import Figure, flatten, json_lines, machine, parse, proc_status, reset_peak
from bench_cache import us_apps
from bench_search import KEYWORDS

import storeframes as sf
from storeframes import flatteners
from storeframes.flatteners import UnknownFieldWarning
from storeframes.sandbox import SandboxServer, World

TODAY = date(2026, 11, 20)  # the sandbox's fixed "today" (tests/conftest.py SANDBOX_TODAY)
END = TODAY - timedelta(days=1)
SCALED_LIMIT = (30, 3.0)
SERVICE_LIMIT = (60, 10.0)
LIFTED_LIMIT = (100_000, 1.0)


def span(days: int) -> dict[str, str]:
    return {"start": (END - timedelta(days=days - 1)).isoformat(), "end": END.isoformat()}


@dataclass(frozen=True)
class Call:
    """A frame function call: ``getattr(client, frame)(**kwargs)``; ``first`` the same for one app or keyword."""

    frame: str
    setting: str
    kwargs: dict[str, Any]
    first: dict[str, Any]

    def run(self, client: sf.Client, *, first: bool = False) -> pl.DataFrame:
        return getattr(client, self.frame)(**(self.first if first else self.kwargs))


def metadata_call(world: World, apps: int) -> Call:
    ids = us_apps(world)[:apps]
    return Call("metadata_frame", f"{len(ids)} iphone apps", {"apps": ids}, {"apps": ids[:1]})


def changes_call(world: World, apps: int, days: int) -> Call:
    ids = us_apps(world)[:apps]
    setting = f"{len(ids)} iphone apps x {days} days"
    return Call("changes_frame", setting, {"apps": ids, **span(days)}, {"apps": ids[:1], **span(days)})


def history_call(keywords: int, days: int) -> Call:
    words = list(KEYWORDS[:keywords])
    setting = f"{len(words)} keywords x {days} days"
    return Call(
        "search_history_frame", setting, {"keywords": words, **span(days)}, {"keywords": words[:1], **span(days)}
    )


FULL_SIZES = {"apps": 200, "days": 90, "memory_apps": 1000, "memory_changes_apps": 500, "keywords": 10}
FULL_SIZES |= {"memory_days": 365, "history_keywords": len(World.EXAMPLE_KEYWORDS)}
QUICK_SIZES = {"apps": 50, "days": 30, "memory_apps": 100, "memory_changes_apps": 50, "keywords": 3}
QUICK_SIZES |= {"memory_days": 30, "history_keywords": 3}


@dataclass(frozen=True)
class Sizes:
    """The sizes of the calls: the defaults, or the ``--quick`` ones, unless given."""

    apps: int
    days: int
    memory_apps: int
    memory_changes_apps: int
    keywords: int
    memory_days: int
    history_keywords: int  # of the cold/warm history: the example keywords, always tracked

    @classmethod
    def of(cls, *, quick: bool = False, **given: int | None) -> Sizes:
        defaults = QUICK_SIZES if quick else FULL_SIZES
        sizes = {k: v if (v := given.get(k)) is not None else default for k, default in defaults.items()}
        if min(sizes.values()) < 1:
            raise ValueError(f"every size must be at least 1, got {sizes}")
        return cls(**sizes)

    def cold_warm_calls(self) -> list[Call]:
        """The calls timed cold and warm."""
        world = World(0)
        return [
            metadata_call(world, self.apps),
            changes_call(world, self.apps, self.days),
            history_call(self.history_keywords, self.days),
        ]

    def memory_calls(self) -> tuple[World, list[Call]]:
        """The world to fill the cache from, and the largest calls."""
        world = World(0, ios_apps=max(800, self.memory_apps, self.memory_changes_apps))
        calls = [
            metadata_call(world, self.memory_apps),
            changes_call(world, self.memory_changes_apps, self.days),
            history_call(self.keywords, self.memory_days),
        ]
        return world, calls


def floor_seconds(requests: int, limit: tuple[int, float]) -> float:
    """The least time ``requests`` take under a limit: the first ``limit`` at once, a window per further ``limit``."""
    n, window = limit
    return ((requests - 1) // n) * window if requests else 0.0


# -- cold and warm through the loopback sandbox ----------------------------------------------


def cold_and_warm(call: Call, *, latency: float, limit: tuple[int, float] = SCALED_LIMIT) -> list[Figure]:
    """Cold, warm in the same client, warm in a new client: seconds, requests and rows of each."""
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="storeframes-bench-") as folder:
        with SandboxServer(port=0, today=TODAY, rate_limit=limit, latency=latency) as server:
            arrivals = server.service.arrivals

            def options() -> dict[str, Any]:
                return {
                    "base_url": server.base_url,
                    "rate_limit": limit,
                    "cache_dir": folder,
                    "clock": server.service.now,
                    "progress": False,
                }

            def step(state: str, client: sf.Client) -> None:
                sent = len(arrivals)
                started = time.perf_counter()
                frame = call.run(client)
                took = time.perf_counter() - started
                requests = len(arrivals) - sent
                figures.append(
                    {
                        "bench": "frame_cold_warm",
                        "frame": call.frame,
                        "call": call.setting,
                        "state": state,
                        "latency_ms": latency * 1000,
                        "limit": f"{limit[0]}/{limit[1]:g}s",
                        "seconds": round(took, 4),
                        "requests": requests,
                        "http_429": sum(a.status == 429 for a in arrivals[sent:]),
                        "rows": frame.height,
                        "limit_floor_s": floor_seconds(requests, limit),
                        "service_limit_floor_s": floor_seconds(requests, SERVICE_LIMIT),
                    }
                )

            with sf.Client(server.key, **options()) as client:
                step("cold", client)
                step("warm, same client", client)
            with sf.Client(server.key, **options()) as client:
                step("warm, new client", client)
    cold = figures[0]
    for f in figures[1:]:
        f["x_faster_than_cold"] = round(cold["seconds"] / f["seconds"], 1)
    return figures


# -- peak memory, in a child process ----------------------------------------------------------


def proc_ok() -> str | None:
    """None if this process can read and reset its peak resident size, else why not."""
    try:
        proc_status("VmHWM")
        reset_peak()
    except (OSError, KeyError) as e:
        return f"no resettable peak resident size ({type(e).__name__}: {e})"
    return None


def measured(run: Callable[[], pl.DataFrame]) -> Figure:
    """Seconds, rows, Arrow size and resident-size peak of ``run()``, from the resident size before it."""
    gc.collect()
    rss = proc_status("VmRSS")
    reset_peak()
    started = time.perf_counter()
    frame = run()
    took = time.perf_counter() - started
    return {
        "seconds": round(took, 4),
        "rows": frame.height,
        "arrow_bytes": frame.estimated_size(),
        "peak_bytes": proc_status("VmHWM") - rss,
        "rss_before_bytes": rss,
    }


def child_frame(folder: str, spec: str) -> None:
    """A warm frame call from a fresh process: prints one JSON object (``--child-frame FOLDER SPEC``)."""
    call = Call(**json.loads(spec))
    out: Figure = {}
    if (why := proc_ok()) is not None:
        out["memory_skipped"] = why
    with sf.sandbox.client(
        today=TODAY, cache_dir=folder, rate_limit=LIFTED_LIMIT, offline=True, progress=False
    ) as client:
        call.run(client, first=True)
        if "memory_skipped" not in out:
            out |= measured(lambda: call.run(client))
        out["requests"] = len(client.sandbox_service.arrivals)
    print(json.dumps(out))


def child_flatten(file: str, table: str, device: str) -> None:
    """The flatten of parsed answers in a fresh process: prints one JSON object (``--child-flatten ...``)."""
    warnings.filterwarnings("ignore", category=UnknownFieldWarning)
    flattener = getattr(flatteners, f"batch_{table}")
    results = parse(Path(file).read_bytes().split(b"\n"))
    out: Figure = {"answers": len(results)}
    if (why := proc_ok()) is not None:
        out["memory_skipped"] = why
    flatten(flattener, results[:1], device)
    if "memory_skipped" not in out:
        out |= measured(lambda: flatten(flattener, results, device))
    print(json.dumps(out))


def in_child(*args: str) -> Figure:
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return {"memory_skipped": f"the child process failed ({last})"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def with_ratio(figure: Figure) -> Figure:
    if "peak_bytes" in figure:
        figure["x_arrow"] = round(figure["peak_bytes"] / figure["arrow_bytes"], 2)
    return figure


def frame_memory(world: World, call: Call) -> Figure:
    """Fill a folder through the in-process sandbox, then the warm call's peak memory in a child."""
    with tempfile.TemporaryDirectory(prefix="storeframes-bench-") as folder:
        with sf.sandbox.client(
            today=TODAY, cache_dir=folder, rate_limit=LIFTED_LIMIT, world=world, progress=False
        ) as client:
            started = time.perf_counter()
            rows = call.run(client).height
            cold = time.perf_counter() - started
            requests = len(client.sandbox_service.arrivals)
        spec = json.dumps({"frame": call.frame, "setting": call.setting, "kwargs": call.kwargs, "first": call.first})
        got = in_child("--child-frame", folder, spec)
    figure: Figure = {
        "bench": "frame_memory",
        "frame": call.frame,
        "call": call.setting,
        "cold_in_process_s": round(cold, 4),
        "cold_requests": requests,
        "cold_rows": rows,
        **got,
    }
    if got.get("requests"):
        raise AssertionError(f"{call.frame}: the warm call sent {got['requests']} requests")
    if "rows" in got and got["rows"] != rows:
        raise AssertionError(f"{call.frame}: the warm call gave {got['rows']} rows, the cold one {rows}")
    return with_ratio(figure)


def flatten_memory(bodies: list[bytes], table: str, device: str, setting: str) -> Figure:
    """The peak memory of one flattener over parsed answers, in a child."""
    with tempfile.TemporaryDirectory(prefix="storeframes-bench-") as folder:
        file = Path(folder) / "bodies.jsonl"
        file.write_bytes(b"\n".join(bodies))  # compact JSON bodies hold no raw newline
        got = in_child("--child-flatten", str(file), table, device)
    return with_ratio(
        {
            "bench": "flatten_memory",
            "table": table,
            "store": device,
            "call": setting,
            "json_bytes": sum(map(len, bodies)),
            **got,
        }
    )


def largest_flattens(*, apps: int, changes_apps: int, days: int, seed: int = 0) -> list[Figure]:
    """Peak memory of the metadata and changes flatteners on the answers of bench_metadata and bench_changes."""
    import bench_changes
    import bench_metadata

    # the answers exactly as those scripts build them (json.dumps writes no raw newline)
    metadata = bench_metadata.answers(World(seed, ios_apps=apps, android_apps=apps), "iphone", apps)
    start = bench_changes.END - timedelta(days=days - 1)
    world = World(seed, ios_apps=changes_apps, android_apps=changes_apps)
    changes = bench_changes.answers(world, "iphone", changes_apps, start, bench_changes.END)
    return [
        flatten_memory(metadata, "metadata", "iphone", f"{apps} iphone apps"),
        flatten_memory(metadata, "versions", "iphone", f"{apps} iphone apps"),
        flatten_memory(changes, "changes", "iphone", f"{changes_apps} iphone apps x {days} days"),
    ]


def cold_warm_figures(sizes: Sizes, *, latency: float) -> list[Figure]:
    """Every cold and warm figure, through the loopback sandbox."""
    return [f for call in sizes.cold_warm_calls() for f in cold_and_warm(call, latency=latency)]


def memory_figures(sizes: Sizes) -> list[Figure]:
    """Every peak memory figure: the largest frames from a warm cache, then the largest flattens."""
    world, largest = sizes.memory_calls()
    figures = [frame_memory(world, call) for call in largest]
    return figures + largest_flattens(apps=sizes.memory_apps, changes_apps=sizes.memory_changes_apps, days=sizes.days)


# -- output -------------------------------------------------------------------------------


def mb(n: float) -> str:
    return f"{n / 1e6:.1f}"


def print_tables(cold_warm: list[Figure], memory: list[Figure], about: Figure) -> None:
    print(
        f"machine: {about['machine']}, {about['platform']}, {about['python']}, polars {about['polars']}, "
        f"pandas {about['pandas']}, {about['cpus']} CPUs"
    )
    if cold_warm:
        first = cold_warm[0]
        print(
            f"\ncold and warm through the loopback sandbox ({first['latency_ms']:g} ms a request, "
            f"limit {first['limit']}; one run each)"
        )
        print(
            f"{'frame':<22} {'call':<28} {'state':<18} {'seconds':>8} {'requests':>9} {'rows':>8} "
            f"{'limit floor s':>14} {'x faster':>9}"
        )
        for f in cold_warm:
            x = f"{f['x_faster_than_cold']:g}x" if "x_faster_than_cold" in f else ""
            print(
                f"{f['frame']:<22} {f['call']:<28} {f['state']:<18} {f['seconds']:>8.3f} {f['requests']:>9} "
                f"{f['rows']:>8} {f['limit_floor_s']:>14g} {x:>9}"
            )
    notes = []
    if memory:
        print("\npeak memory (resident-size peak in a fresh process, the frame included; MB = 10^6 bytes)")
        print(f"{'what':<38} {'call':<28} {'rows':>9} {'seconds':>8} {'arrow MB':>9} {'peak MB':>8} {'x arrow':>8}")
        for f in memory:
            what = f"{f['frame']}, warm" if f["bench"] == "frame_memory" else f"flatten {f['table']} ({f['store']})"
            if "peak_bytes" not in f:
                notes.append(f"{what}: no memory figure ({f.get('memory_skipped')})")
                continue
            print(
                f"{what:<38} {f['call']:<28} {f['rows']:>9,} {f['seconds']:>8.3f} {mb(f['arrow_bytes']):>9} "
                f"{mb(f['peak_bytes']):>8} {f['x_arrow']:>8.2f}"
            )
        for f in memory:
            if f["bench"] == "frame_memory":
                notes.append(
                    f"{f['frame']} cold through the in-process sandbox (filling the folder): "
                    f"{f['cold_in_process_s']:.2f} s, {f['cold_requests']} requests"
                )
    for note in notes:
        print(f"note: {note}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--apps", type=int, default=None, help="apps of the cold/warm calls (default 200; 50 quick)")
    parser.add_argument("--days", type=int, default=None, help="days of change history (default 90; 30 with --quick)")
    parser.add_argument("--latency", type=float, default=0.15, help="sandbox seconds per request (default 0.15)")
    parser.add_argument(
        "--memory-apps", type=int, default=None, help="apps of the metadata memory figure (default 1000; 100 quick)"
    )
    parser.add_argument(
        "--memory-changes-apps",
        type=int,
        default=None,
        help="apps of the changes memory figure (default 500; 50 with --quick)",
    )
    parser.add_argument(
        "--keywords", type=int, default=None, help=f"history keywords (default {len(KEYWORDS)}; 3 with --quick)"
    )
    parser.add_argument(
        "--memory-days", type=int, default=None, help="days of the history memory figure (default 365; 30 quick)"
    )
    parser.add_argument("--no-memory", action="store_true", help="skip the peak memory figures")
    parser.add_argument("--quick", action="store_true", help="a smoke run: smaller calls")
    parser.add_argument("--child-frame", nargs=2, metavar=("FOLDER", "SPEC"), help=argparse.SUPPRESS)
    parser.add_argument("--child-flatten", nargs=3, metavar=("FILE", "TABLE", "DEVICE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_frame:
        child_frame(*args.child_frame)
        return
    if args.child_flatten:
        child_flatten(*args.child_flatten)
        return
    try:
        sizes = Sizes.of(
            quick=args.quick,
            apps=args.apps,
            days=args.days,
            memory_apps=args.memory_apps,
            memory_changes_apps=args.memory_changes_apps,
            keywords=args.keywords,
            memory_days=args.memory_days,
        )
    except ValueError as e:
        parser.error(str(e))
    warnings.filterwarnings("ignore", category=UnknownFieldWarning)
    cold_warm = cold_warm_figures(sizes, latency=args.latency)
    memory = [] if args.no_memory else memory_figures(sizes)
    about = machine()
    print_tables(cold_warm, memory, about)
    print()
    json_lines(about, cold_warm + memory)


if __name__ == "__main__":
    main()
