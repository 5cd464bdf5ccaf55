"""The whole call a user makes, beside parsing its JSON: no cache, cold, warm, and warm peak memory.

Not collected by the test run. Run::

    .venv/bin/python tests/benchmarks/bench_call.py             # history 10 x 365, metadata 1,000, changes 500 x 90
    .venv/bin/python tests/benchmarks/bench_call.py --quick     # 3 keywords x 30 days, 100 apps, 50 apps x 30 days

Users call the frame function, not the flattener. Each call here goes through the whole
client (planning, the rate window, the request path, the cache, the flattener, the order of
rows) against an ``httpx.MockTransport`` that answers every request at once from bodies made
beforehand, so neither the network nor the rate limit is in the way (the limit is lifted; the
machine's rate window is still asked for every request, in a temporary state folder).

The calls:

* ``search_history_frame`` of 10 keywords x 365 days (iphone, 500 results a day: 1,825,000
  rows, about 23.6 MB of JSON), the bodies of ``bench_search.history_bodies`` ("by date" form);
* ``metadata_frame`` of 1,000 iphone apps (200 requests of 5 apps) and ``changes_frame`` of 500
  iphone apps x 90 days (100 requests), their bodies recorded once from the in-process sandbox
  and served again, byte for byte, by the mock transport.

Timed, best of ``--repeat`` runs each, all in one run so each ratio is of figures measured
together:

* parse: ``orjson.loads`` of every body (the floor: the JSON must be read);
* no cache: the call with ``cache_dir=False``, a new client per call (what a script's one call
  costs: the client's one-off setup counts);
* no cache, reused: the same call again from one client (after a first call, not timed);
* a user's json_normalize (the history only): what a user would write for the same tidy
  frame without storeframes, from the same bytes: ``json.loads`` (the standard library's) of
  every body, one record per day (keyword, date, ids), ``pandas.json_normalize`` and the rank
  within each day (``bench_search.ranked``): the rows keyword, date, rank, app_id, untyped
  (checked equal to the call's, untimed). Best of ``min(--repeat, 3)``; the figure
  ``x_faster_than_user_json_normalize`` is its time over the whole no-cache call's (a new
  client per call). Not ``bench_search``'s ``x_pandas``, which sets ``json_normalize`` beside
  the flattener alone, both from answers already parsed;
* cold: the call with an empty cache folder (the raw answers and the Parquet frames written);
* warm: the same call from a new client on the filled folder (no request is sent: checked);
* warm peak memory: in a fresh process, a new offline client on the filled folder makes the
  call once for one keyword or app (imports and first calls not counted), resets its peak
  resident size (``VmHWM``, by writing 5 to ``/proc/self/clear_refs``), makes the whole call,
  and takes ``VmHWM`` less the resident size before, beside ``frame.estimated_size()``.

Also ``import storeframes`` in a fresh interpreter, best of 5 (``polars`` alone beside it).

Prints a table, then one JSON line per figure.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

import orjson
import polars as pl
from _flatten_timing import Figure, json_lines, machine, proc_status, reset_peak
from bench_search import END, history_bodies, ranked, same_rows

import storeframes as sf
from storeframes.errors import AppsUnavailableWarning
from storeframes.flatteners import UnknownFieldWarning
from storeframes.sandbox import SANDBOX_KEY, SandboxService, SandboxTransport, World
from storeframes.wire.http import lib as httpx

TODAY = date(2026, 11, 20)  # the sandbox's fixed "today"; history ends the day before (bench_search.END)
BASE_URL = "https://service.invalid/api/public/store"
LIFTED = (1_000_000, 1.0)
FULL = {"keywords": 10, "days": 365, "apps": 1000, "changes_apps": 500, "changes_days": 90, "repeat": 5}
QUICK = {"keywords": 3, "days": 30, "apps": 100, "changes_apps": 50, "changes_days": 30, "repeat": 1}


def clock() -> datetime:
    return datetime(TODAY.year, TODAY.month, TODAY.day, 12, tzinfo=UTC)


def _key(path: str, params: Any) -> str:
    return path + "?" + "&".join(sorted(f"{k}={v}" for k, v in params))


@dataclass
class Call:
    """A frame function call and the bodies that answer its requests, keyed by path and parameters."""

    frame: str
    setting: str
    kwargs: dict[str, Any]
    first: dict[str, Any]  # the same call for one keyword or app (the child's warm-up)
    bodies: dict[str, bytes]
    statuses: dict[str, int] = field(default_factory=dict)  # of the bodies that are not 200
    rows: int = 0  # the frame's rows, once a call was made

    def transport(self) -> httpx.MockTransport:
        def answer(request: httpx.Request) -> httpx.Response:
            key = _key(request.url.path, request.url.params.multi_items())
            status = self.statuses.get(key, 200)
            return httpx.Response(status, content=self.bodies[key], headers={"content-type": "application/json"})

        return httpx.MockTransport(answer)

    def client(self, cache_dir: Any, **options: Any) -> sf.Client:
        return sf.Client(
            "bench-token",
            base_url=BASE_URL,
            http_client=httpx.Client(transport=self.transport()),
            cache_dir=cache_dir,
            rate_limit=LIFTED,
            clock=clock,
            progress=False,
            **options,
        )

    def run(self, client: sf.Client, *, first: bool = False) -> pl.DataFrame:
        return getattr(client, self.frame)(**(self.first if first else self.kwargs))

    def size(self) -> int:
        return sum(map(len, self.bodies.values()))


def history_call(keywords: int, days: int) -> Call:
    start = END - timedelta(days=days - 1)
    bodies = {}
    words = []
    for body in history_bodies("iphone", keywords, days, seed=0)["by date"]:
        request = orjson.loads(body)["metadata"]["request"]
        sent = {k: v for k, v in request["params"].items() if k != "language"}  # the client leaves the default out
        bodies[_key(request["path"], sent.items())] = body
        words.append(request["params"]["keyword"])
    span = {"start": start.isoformat(), "end": END.isoformat(), "country": "us", "device": "iphone"}
    setting = f"{keywords} keywords x {days} days (iphone, 500 a day)"
    return Call("search_history_frame", setting, {"keywords": words, **span}, {"keywords": words[:1], **span}, bodies)


class _Recorder(httpx.BaseTransport):
    """The in-process sandbox, keeping each body it sends by path and parameters."""

    def __init__(self, service: SandboxService):
        self.inner = SandboxTransport(service)
        self.bodies: dict[str, bytes] = {}
        self.statuses: dict[str, int] = {}

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        body = response.read()
        key = _key(request.url.path, request.url.params.multi_items())
        self.bodies[key] = body
        if response.status_code != 200:
            self.statuses[key] = response.status_code
        return httpx.Response(response.status_code, headers=response.headers, content=body, request=request)


def recorded(frame: str, setting: str, kwargs: dict[str, Any], first: dict[str, Any], world: World) -> Call:
    """A call whose bodies the in-process sandbox answers once (setup, not timed)."""
    service = SandboxService(world=world, today=TODAY, rate_limit=LIFTED)
    key = SANDBOX_KEY
    recorder = _Recorder(service)
    with sf.Client(
        key,
        base_url=BASE_URL,
        http_client=httpx.Client(transport=recorder),
        cache_dir=False,
        rate_limit=LIFTED,
        clock=clock,
        progress=False,
    ) as client:
        getattr(client, frame)(**kwargs)
    return Call(frame, setting, kwargs, first, recorder.bodies, recorder.statuses)


def metadata_call(world: World, apps: int) -> Call:
    ids = world.app_ids("ios")[:apps]
    return recorded("metadata_frame", f"{len(ids):,} iphone apps", {"apps": ids}, {"apps": ids[:1]}, world)


def changes_call(world: World, apps: int, days: int) -> Call:
    ids = world.app_ids("ios")[:apps]
    span = {"start": (END - timedelta(days=days - 1)).isoformat(), "end": END.isoformat()}
    setting = f"{len(ids):,} iphone apps x {days} days"
    return recorded("changes_frame", setting, {"apps": ids, **span}, {"apps": ids[:1], **span}, world)


# -- timing -------------------------------------------------------------------------------


def best(run: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def whole_call(call: Call, repeat: int) -> Figure:
    """Parse, no cache, cold and warm, best of ``repeat`` each, interleaved so they share the machine's load."""
    bodies = list(call.bodies.values())
    parse, no_cache, reused, cold, warm, pandas = [], [], [], [], [], []
    history = call.frame == "search_history_frame"
    with call.client(False) as kept:
        call.run(kept)  # the reused client's first call (its one-off setup), not timed
        for i in range(repeat):
            parse.append(best(lambda: [orjson.loads(b) for b in bodies], 1))
            with call.client(False) as client:
                no_cache.append(best(lambda c=client: call.run(c), 1))
            reused.append(best(lambda: call.run(kept), 1))
            if history and i < min(repeat, 3):
                pandas.append(best(lambda: user_json_normalize(bodies, call.kwargs["keywords"]), 1))
            cold_and_warm(call, cold, warm)
    floor = min(parse)
    figure: Figure = {
        "bench": "whole_call",
        "frame": call.frame,
        "call": call.setting,
        "requests": len(bodies),
        "json_bytes": call.size(),
        "rows": call.rows,
        "parse_s": round(floor, 4),
        "no_cache_s": round(min(no_cache), 4),
        "no_cache_reused_s": round(min(reused), 4),
        "cold_s": round(min(cold), 4),
        "warm_s": round(min(warm), 4),
        "no_cache_x_parse": round(min(no_cache) / floor, 2),
        "no_cache_reused_x_parse": round(min(reused) / floor, 2),
        "cold_x_parse": round(min(cold) / floor, 2),
        "warm_x_parse": round(min(warm) / floor, 2),
        "repeat": repeat,
    }
    if pandas:
        with call.client(False) as client:
            if not same_rows(call.run(client), user_json_normalize(bodies, call.kwargs["keywords"])):
                raise AssertionError("the user's json_normalize gave other rows than the call")
        figure["user_json_normalize_s"] = round(min(pandas), 4)
        figure["x_faster_than_user_json_normalize"] = round(min(pandas) / min(no_cache), 1)
    return figure


def user_json_normalize(bodies: list[bytes], keywords: list[str]) -> Any:
    """What a user would write for the history's tidy frame: ``json.loads`` of each body (the keyword is the
    one they asked), one record per day, ``pandas.json_normalize`` and the rank within each day (untyped)."""
    records = []
    for body, keyword in zip(bodies, keywords, strict=True):
        records += [{"keyword": keyword, "date": day, "app_id": ids} for day, ids in json.loads(body)["result"].items()]
    return ranked(records, "app_id", ["keyword", "date"])


def cold_and_warm(call: Call, cold: list[float], warm: list[float]) -> None:
    """One cold call (an empty cache folder) and one warm one (a new client on the filled folder)."""
    with tempfile.TemporaryDirectory(prefix="storeframes-bench-") as folder:
        with call.client(folder) as client:
            cold.append(best(lambda c=client: call.run(c), 1))
        with call.client(folder) as client:
            gc.collect()
            started = time.perf_counter()
            frame = call.run(client)
            warm.append(time.perf_counter() - started)
            if client.requests_sent:
                raise AssertionError(f"the warm call sent {client.requests_sent} requests")
            call.rows = frame.height


def child_memory(folder: str, spec: str) -> None:
    """``--child-memory FOLDER SPEC``: the warm call's peak memory from a fresh process, one JSON object."""
    warnings.filterwarnings("ignore", category=UnknownFieldWarning)
    warnings.filterwarnings("ignore", category=AppsUnavailableWarning)  # a few of the world's apps, as on the service
    given = json.loads(spec)
    call = Call(given["frame"], given["setting"], given["kwargs"], given["first"], {})
    out: Figure = {}
    with call.client(folder, offline=True) as client:
        call.run(client, first=True)
        gc.collect()
        try:
            rss = proc_status("VmRSS")
            reset_peak()
        except (OSError, KeyError) as exc:
            print(json.dumps({"memory_skipped": f"no resettable peak resident size ({exc})"}))
            return
        started = time.perf_counter()
        frame = call.run(client)
        out["seconds"] = round(time.perf_counter() - started, 4)
        out["peak_bytes"] = proc_status("VmHWM") - rss
        out["frame_bytes"] = frame.estimated_size()
        out["rows"] = frame.height
    print(json.dumps(out))


def warm_memory(call: Call) -> Figure:
    """Fill a folder, then the warm call's peak resident size in a fresh process, beside the frame's size."""
    with tempfile.TemporaryDirectory(prefix="storeframes-bench-") as folder:
        with call.client(folder) as client:
            call.run(client)
        spec = json.dumps({"frame": call.frame, "setting": call.setting, "kwargs": call.kwargs, "first": call.first})
        done = subprocess.run(
            [sys.executable, __file__, "--child-memory", folder, spec], capture_output=True, text=True, check=False
        )
    figure: Figure = {"bench": "warm_memory", "frame": call.frame, "call": call.setting}
    if done.returncode != 0:
        figure["memory_skipped"] = f"the child failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}"
        return figure
    figure |= json.loads(done.stdout.strip().splitlines()[-1])
    if "peak_bytes" in figure:
        figure["peak_x_frame"] = round(figure["peak_bytes"] / figure["frame_bytes"], 2)
    return figure


def import_time(repeat: int = 5) -> Figure:
    """``import storeframes`` (and ``import polars`` alone) in a fresh interpreter, best of ``repeat``."""

    def once(module: str) -> float:
        code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        return float(done.stdout.strip())

    package = min(once("storeframes") for _ in range(repeat))
    polars = min(once("polars") for _ in range(repeat))
    check = "import sys, storeframes; print(','.join(m for m in ('pyarrow', 'pandas', 'httpx', 'httpx2', 'tqdm') if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, check=True).stdout.strip()
    return {
        "bench": "import",
        "import_s": round(package, 4),
        "polars_import_s": round(polars, 4),
        "also_imported": loaded,
        "repeat": repeat,
    }


# -- the run ------------------------------------------------------------------------------


def calls(sizes: dict[str, int]) -> list[Call]:
    world = World(0, ios_apps=max(800, sizes["apps"], sizes["changes_apps"]))
    return [
        history_call(sizes["keywords"], sizes["days"]),
        metadata_call(world, sizes["apps"]),
        changes_call(world, sizes["changes_apps"], sizes["changes_days"]),
    ]


def figures(sizes: dict[str, int], *, memory: bool = True) -> list[Figure]:
    """Every figure of this script, at ``sizes`` (:data:`FULL` or :data:`QUICK` with overrides)."""
    warnings.filterwarnings("ignore", category=UnknownFieldWarning)
    warnings.filterwarnings("ignore", category=AppsUnavailableWarning)  # a few of the world's apps, as on the service
    out: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="storeframes-bench-state-") as state:
        os.environ["STOREFRAMES_STATE_DIR"] = state  # the machine's rate window, apart from the user's
        for call in calls(sizes):
            out.append(whole_call(call, sizes["repeat"]))
            if memory:
                out.append(warm_memory(call))
    out.append(import_time())
    return out


def print_table(found: list[Figure], about: Figure) -> None:
    print(f"whole calls through a mock transport answering at once ({about['platform']}, {about['cpus']} CPUs)")
    print(f"{'call':<58} {'parse':>8} {'no cache':>10} {'reused':>10} {'cold':>10} {'warm':>10}")
    for f in found:
        if f["bench"] == "whole_call":
            name = f"{f['frame']} {f['call']}"
            print(
                f"{name:<58} {f['parse_s'] * 1000:>6.0f}ms {f['no_cache_x_parse']:>9.2f}x "
                f"{f['no_cache_reused_x_parse']:>9.2f}x {f['cold_x_parse']:>9.2f}x {f['warm_x_parse']:>9.2f}x"
            )
            if "user_json_normalize_s" in f:
                print(
                    f"  no cache, a new client: {f['x_faster_than_user_json_normalize']}x faster than a user's "
                    f"json.loads + pandas.json_normalize of the same bytes ({f['user_json_normalize_s']:.2f} s, "
                    "same rows, untyped)"
                )
    for f in found:
        if f["bench"] == "warm_memory" and "peak_bytes" in f:
            print(
                f"warm {f['frame']} {f['call']}: peak {f['peak_bytes'] / 1e6:,.0f} MB above start for a "
                f"{f['frame_bytes'] / 1e6:,.0f} MB frame ({f['peak_x_frame']}x)"
            )
        elif f["bench"] == "warm_memory":
            print(f"warm {f['frame']}: {f['memory_skipped']}")
        elif f["bench"] == "import":
            print(f"import storeframes: {f['import_s']:.3f} s (polars alone {f['polars_import_s']:.3f} s)")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child-memory":
        child_memory(sys.argv[2], sys.argv[3])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    for name in FULL:
        parser.add_argument(f"--{name.replace('_', '-')}", type=int)
    args = parser.parse_args()
    sizes = dict(QUICK if args.quick else FULL)
    sizes |= {k: v for k in FULL if (v := getattr(args, k)) is not None}
    about = machine()
    found = figures(sizes)
    print_table(found, about)
    json_lines(about, found)


if __name__ == "__main__":
    main()
