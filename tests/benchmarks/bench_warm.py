"""Warm calls and planning against a filled cache, each in a fresh process, beside what reading the rows costs.

Not collected by the test run. Run::

    .venv/bin/python tests/benchmarks/bench_warm.py            # 800 keywords, 500 apps x 90 days, 10,000 tracked cells
    .venv/bin/python tests/benchmarks/bench_warm.py --quick    # 80 keywords, 50 apps x 30 days, 1,000 tracked cells
    .venv/bin/python tests/benchmarks/bench_warm.py --profile  # and where each figure's time goes

A user's notebook run again the next minute: the cache already holds every answer, and a new
client in a new process reads them back. The bodies are made once by the in-process sandbox
(``bench_call.recorded``) and served by an ``httpx.MockTransport``; each call's cache is written
once into a folder of its own by a client through that transport (small files: an index file
and a frame file per answer), and a copy of it compacted (``sf.compact``, as ``storeframes cache
compact`` does: one index file per endpoint, a few frame files per table). Then, on both stores
(iphone and android), each figure in fresh processes (``python bench_warm.py --child ...``),
best of ``repeat`` processes; the imports are made before the clock starts, the client is made
after it (opening the cache is part of the call):

* warm ``search_frame`` of 800 keywords (live search, country us) in a new client (its mock
  transport has no body: a request sent would fail the call, and ``client.requests_sent`` is
  checked to be 0), beside polars reading the same kept rows in another fresh process
  (``pl.scan_parquet`` of the table's frame files in the folder, collected): the ratio of the two;
* warm ``changes_frame`` of 500 apps x 90 days in a new client, beside ``orjson.loads`` of its
  answers' bytes (best of ``repeat`` in this process);
* planning that call, 45,000 app-day cells, against the warm cache:
  ``client.plan("changes_frame", apps=..., start=..., end=...)`` in a new client (opening the
  cache and reading its index included), then the same client's plan again (the index read);
* a tracking run's plan of 10,000 cells: ``tracker.plan(day)`` of a new tracker (the spec of
  ``bench_track``: live search of 1,550 keywords x 5 countries, metadata and downloads and ratings
  of 750 apps), on a cache holding the spec's runs of the days before (``bench_track.fill``), the
  next day, when every cell is due again; then the same tracker's plan again;
* the warm calls' peak memory: in a fresh process, a new client makes the call for one keyword
  or app, the peak resident size is reset (``VmHWM``), a new client makes the whole call, and the
  peak above the resident size before is set beside ``frame.estimated_size()``.

The machine's rate window lives in a temporary ``$STOREFRAMES_STATE_DIR``. Prints a table,
then one JSON line per figure (``{"name", "value", "unit", "context"}``); ``figures(quick)``
returns them for ``run.py``.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from datetime import timedelta
from pathlib import Path
from typing import Any

import orjson
import polars as pl
from _flatten_timing import proc_status, reset_peak
from bench_call import BASE_URL, END, LIFTED, Call, recorded
from bench_track import state_dir

import storeframes as sf
from storeframes.errors import AppsUnavailableWarning
from storeframes.flatteners import UnknownFieldWarning
from storeframes.sandbox import World
from storeframes.wire.http import lib as httpx

FULL = {"keywords": 800, "apps": 500, "days": 90, "track_keywords": 1550, "track_apps": 750, "track_days": 1,
        "repeat": 5}  # fmt: skip
QUICK = {"keywords": 80, "apps": 50, "days": 30, "track_keywords": 155, "track_apps": 75, "track_days": 1,
         "repeat": 2}  # fmt: skip
STORES = {"iphone": "ios", "android": "android"}  # device -> store of World.app_ids
STATES = ("small_files", "compacted")
TABLES = {"search_frame": "search", "changes_frame": "changes"}  # the cache's table of each frame's kept rows

Figure = dict[str, Any]
PROFILE = {"top": 0, "found": []}  # with --profile: the lines of each profile kept, and the profiles


def figure(name: str, value: float, unit: str, **context: Any) -> Figure:
    return {"name": name, "value": value, "unit": unit, "context": context}


def quiet() -> None:
    warnings.filterwarnings("ignore", category=UnknownFieldWarning)  # the sandbox's undocumented change targets
    warnings.filterwarnings("ignore", category=AppsUnavailableWarning)  # a few of the world's apps, as on the service


# -- the children: one figure each, in a fresh process -------------------------------------------


def _client(spec: Figure) -> sf.Client:
    """A new client of the filled folder whose transport has no body: a request sent fails the call."""
    return Call(spec["frame"], "", spec["kwargs"], spec.get("first", {}), {}).client(spec["folder"])


def child_call(spec: Figure) -> Figure:
    """The warm call in a new client, timed from making the client; then again from another new client."""
    gc.collect()
    started = time.perf_counter()
    client = _client(spec)
    frame = getattr(client, spec["frame"])(**spec["kwargs"])
    seconds = time.perf_counter() - started
    sent = client.requests_sent
    client.close()
    gc.collect()
    started = time.perf_counter()
    with _client(spec) as again:
        getattr(again, spec["frame"])(**spec["kwargs"])
        again_seconds = time.perf_counter() - started
        sent += again.requests_sent
    return {"seconds": seconds, "again_seconds": again_seconds, "rows": frame.height, "requests_sent": sent}


def child_memory(spec: Figure) -> Figure:
    """The warm call's peak resident size above the size before, after a call of one keyword or app."""
    with _client(spec) as client:
        getattr(client, spec["frame"])(**spec["first"])
    gc.collect()
    rss = proc_status("VmRSS")
    reset_peak()
    with _client(spec) as client:
        frame = getattr(client, spec["frame"])(**spec["kwargs"])
        sent = client.requests_sent
    return {"peak_bytes": proc_status("VmHWM") - rss, "frame_bytes": frame.estimated_size(), "rows": frame.height,
            "requests_sent": sent}  # fmt: skip


def child_polars(spec: Figure) -> Figure:
    """polars reading the table's kept rows from the folder: every frame file listed, scanned and collected."""
    gc.collect()
    started = time.perf_counter()
    files = sorted(str(p) for p in (Path(spec["folder"]) / "frames" / f"table={spec['table']}").glob("*.parquet"))
    rows = pl.scan_parquet(files, hive_partitioning=False).collect()
    return {"seconds": time.perf_counter() - started, "rows": rows.height, "files": len(files)}


def child_plan(spec: Figure) -> Figure:
    """``client.plan`` of the call in a new client (the cache opened and its index read), then again."""
    gc.collect()
    started = time.perf_counter()
    with _client(spec) as client:
        plan = client.plan(spec["frame"], **spec["kwargs"])
        seconds = time.perf_counter() - started
        started = time.perf_counter()
        client.plan(spec["frame"], **spec["kwargs"])
        again = time.perf_counter() - started
        sent = client.requests_sent
    return {"seconds": seconds, "again_seconds": again, "cells": plan.cells, "cached_cells": plan.cached_cells,
            "to_send": plan.to_send, "requests_sent": sent}  # fmt: skip


def child_track(spec: Figure) -> Figure:
    """``tracker.plan(day)`` of a new tracker (its clients' transport refuses every request), then again."""

    def refuse(request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"planning sent a request: {request.url}")

    http = httpx.Client(transport=httpx.MockTransport(refuse))
    gc.collect()
    started = time.perf_counter()
    tracker = sf.Tracker.from_toml(spec["spec"], api_key="bench-token", base_url=BASE_URL, http_client=http,
                                   rate_limit=LIFTED, progress=False)  # fmt: skip
    plan = tracker.plan(spec["day"])
    seconds = time.perf_counter() - started
    started = time.perf_counter()
    tracker.plan(spec["day"])
    again = time.perf_counter() - started
    items = plan.items
    return {"seconds": seconds, "again_seconds": again, "cells": int(items["cells"].sum()),
            "cached_cells": int(items["cached_cells"].sum()), "requests": plan.requests}  # fmt: skip


CHILDREN = {"call": child_call, "memory": child_memory, "polars": child_polars, "plan": child_plan,
            "track": child_track}  # fmt: skip


def child(mode: str, spec: Figure) -> Figure:
    """Run ``mode`` in a fresh process; its JSON answer (``failed`` with the last line of its error if it failed)."""
    done = subprocess.run(
        [sys.executable, __file__, "--child", mode, json.dumps(spec)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        return {"failed": (done.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def best_of(mode: str, spec: Figure, repeat: int) -> Figure:
    """``repeat`` fresh processes of ``mode``: the fastest one's answer, with every time."""
    found = [child(mode, spec) for _ in range(repeat)]
    if failed := [f for f in found if "failed" in f]:
        raise RuntimeError(f"a {mode} child failed: {failed[0]['failed']}")
    if sent := [f["requests_sent"] for f in found if f.get("requests_sent")]:
        raise RuntimeError(f"a warm {mode} sent {sent[0]} requests")
    fastest = min(found, key=lambda f: f["seconds"])
    if PROFILE["top"]:  # one more process, profiled (not counted)
        where = {k: spec[k] for k in ("frame", "folder", "spec") if k in spec}
        profiled = child(mode, {**spec, "profile": PROFILE["top"]})
        PROFILE["found"].append((f"{mode} {where}", profiled.get("profile") or profiled.get("failed")))
    return {**fastest, "all_seconds": [round(f["seconds"], 4) for f in found]}


# -- the filled folders ----------------------------------------------------------------------


def filled(call: Call, folder: Path) -> dict[str, Path]:
    """The call's cache written once by a client (small files), and a compacted copy of it."""
    small = folder / "small_files"
    with call.client(small) as client:
        frame = call.run(client)
    if frame.is_empty():
        raise RuntimeError(f"{call.frame} {call.setting}: the call gave no rows")
    compacted = folder / "compacted"
    shutil.copytree(small, compacted)
    sf.compact(compacted)
    return {"small_files": small, "compacted": compacted}


def files_under(folder: Path, part: str) -> int:
    return sum(1 for p in (folder / part).rglob("*.parquet"))


def search_call(world: World, device: str, keywords: int) -> Call:
    words = [*world.EXAMPLE_KEYWORDS, *(f"keyword {i}" for i in range(keywords))][:keywords]
    args = {"country": "us", "device": device}
    setting = f"{keywords} keywords, {device}, us"
    return recorded("search_frame", setting, {"keywords": words, **args}, {"keywords": words[:1], **args}, world)


def changes_call(world: World, device: str, apps: int, days: int) -> Call:
    ids = world.app_ids(STORES[device])[:apps]
    span = {"start": (END - timedelta(days=days - 1)).isoformat(), "end": END.isoformat(), "device": device}
    setting = f"{len(ids)} apps x {days} days, {device}"
    return recorded("changes_frame", setting, {"apps": ids, **span}, {"apps": ids[:1], **span}, world)


# -- the figures ------------------------------------------------------------------------------


def parse_seconds(call: Call, repeat: int) -> float:
    bodies = list(call.bodies.values())
    times = []
    for _ in range(repeat):
        gc.collect()
        started = time.perf_counter()
        for body in bodies:
            orjson.loads(body)
        times.append(time.perf_counter() - started)
    return min(times)


def warm_figures(call: Call, folder: Path, device: str, repeat: int) -> list[Figure]:
    """A warm call of each folder state in fresh processes, beside polars' read (search) or the parse (changes)."""
    kind = "search" if call.frame == "search_frame" else "changes"
    folders = filled(call, folder)
    parse = parse_seconds(call, repeat) if kind == "changes" else None
    out = []
    for state, path in folders.items():
        spec = {"frame": call.frame, "kwargs": call.kwargs, "first": call.first, "folder": str(path)}
        warm = best_of("call", spec, repeat)
        read = best_of("polars", {"folder": str(path), "table": TABLES[call.frame]}, repeat)
        memory = child("memory", spec)
        if memory.get("requests_sent"):
            raise RuntimeError(f"the warm call of {call.setting} sent {memory['requests_sent']} requests")
        context = {"call": f"{call.frame} {call.setting}", "state": state, "store": device,
                   "requests": len(call.bodies), "json_bytes": call.size(), "rows": warm["rows"],
                   "seconds": round(warm["seconds"], 4), "all_seconds": warm["all_seconds"],
                   "again_seconds": round(warm["again_seconds"], 4), "polars_read_seconds": round(read["seconds"], 4),
                   "polars_rows": read["rows"], "frame_files": files_under(path, "frames"),
                   "index_files": files_under(path, "index"), "repeat": repeat}  # fmt: skip
        if parse is not None:
            context["parse_seconds"] = round(parse, 4)
        if "failed" in memory:
            context["memory_skipped"] = memory["failed"]
        else:
            context |= {"peak_bytes": memory["peak_bytes"], "frame_bytes": memory["frame_bytes"]}
        name = f"warm.{kind}.{{}}.{state}.{device}"
        out.append(figure(name.format("seconds"), round(warm["seconds"], 4), "s", **context))
        out.append(
            figure(name.format("x_polars_read"), round(warm["seconds"] / read["seconds"], 2), "ratio", **context)
        )
        if parse is not None:
            out.append(figure(name.format("x_parse"), round(warm["seconds"] / parse, 2), "ratio", **context))
        if "peak_bytes" in context:
            peak_x = round(memory["peak_bytes"] / memory["frame_bytes"], 2)
            out.append(figure(name.format("peak_x_frame"), peak_x, "ratio", **context))
        if kind == "changes":
            plan = best_of("plan", spec, repeat)
            if plan["to_send"]:
                raise RuntimeError(f"the warm plan of {call.setting} would send {plan['to_send']} requests")
            at = {"call": f"plan of {call.frame} {call.setting}", "state": state, "store": device,
                  "cells": plan["cells"], "cached_cells": plan["cached_cells"], "seconds": round(plan["seconds"], 4),
                  "all_seconds": plan["all_seconds"], "again_seconds": round(plan["again_seconds"], 4),
                  "index_files": context["index_files"], "repeat": repeat}  # fmt: skip
            out.append(figure(f"warm.plan.seconds.{state}.{device}", at["seconds"], "s", **at))
            out.append(figure(f"warm.plan.again_seconds.{state}.{device}", at["again_seconds"], "s", **at))
    return out


def track_figures(sizes: dict[str, int], folder: Path) -> list[Figure]:
    """A tracker's plan of the day after its runs, on small files and compacted, each a new tracker in a fresh process."""
    import bench_track

    spec = bench_track.write_spec(folder, {"keywords": sizes["track_keywords"], "apps": sizes["track_apps"]})
    history = bench_track.fill(spec, sizes["track_days"])
    day = bench_track.FIRST_DAY + timedelta(days=sizes["track_days"])
    cache = folder / "cache"
    compacted_folder = folder / "compacted"
    compacted_folder.mkdir()
    compacted_spec = bench_track.write_spec(compacted_folder, {"keywords": sizes["track_keywords"],
                                                               "apps": sizes["track_apps"]})  # fmt: skip
    shutil.copytree(cache, compacted_folder / "cache")
    sf.compact(compacted_folder / "cache")
    out = []
    for state, path in (("small_files", spec), ("compacted", compacted_spec)):
        plan = best_of("track", {"spec": str(path), "day": day.isoformat()}, sizes["repeat"])
        at = {"keywords": sizes["track_keywords"], "countries": len(bench_track.COUNTRIES), "apps": sizes["track_apps"],
              "history_days": history["days"], "history_requests": history["requests"], "day": day.isoformat(),
              "state": state, "cells": plan["cells"], "cached_cells": plan["cached_cells"],
              "requests": plan["requests"], "seconds": round(plan["seconds"], 4),
              "all_seconds": plan["all_seconds"], "again_seconds": round(plan["again_seconds"], 4),
              "index_files": files_under(path.parent / "cache", "index"), "repeat": sizes["repeat"]}  # fmt: skip
        out.append(figure(f"warm.track_plan.seconds.{state}", at["seconds"], "s", **at))
        out.append(figure(f"warm.track_plan.again_seconds.{state}", at["again_seconds"], "s", **at))
    return out


def figures(quick: bool = False, sizes: dict[str, int] | None = None) -> list[Figure]:
    """Every figure of this script, a JSON line each, at the ``--quick`` or full sizes (or ``sizes``)."""
    sizes = sizes or (QUICK if quick else FULL)
    quiet()
    out: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="storeframes-bench-warm-") as tmp, state_dir():
        world = World(0)
        for device in STORES:
            search = search_call(world, device, sizes["keywords"])
            out += warm_figures(search, Path(tmp) / f"search-{device}", device, sizes["repeat"])
            changes = changes_call(world, device, sizes["apps"], sizes["days"])
            out += warm_figures(changes, Path(tmp) / f"changes-{device}", device, sizes["repeat"])
        track = Path(tmp) / "track"
        track.mkdir()
        out += track_figures(sizes, track)
    return out


def print_table(found: list[Figure]) -> None:
    print(f"{'figure':<48} {'value':>9}  context")
    for f in found:
        c = f["context"]
        unit = "s" if f["unit"] == "s" else "x"
        about = c.get("call") or f"tracker of {c['cells']:,} cells"
        print(f"{f['name']:<48} {f['value']:>8}{unit}  {about}, {c['state']} (best of {c['repeat']})")


def main() -> None:
    if len(sys.argv) > 3 and sys.argv[1] == "--child":
        quiet()
        os.environ["STOREFRAMES_PROGRESS"] = "0"
        spec = json.loads(sys.argv[3])
        top = spec.pop("profile", 0)
        profiler = cProfile.Profile() if top else None
        if profiler:
            profiler.enable()
        out = CHILDREN[sys.argv[2]](spec)
        if profiler:
            profiler.disable()
            text = io.StringIO()
            pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(top)
            out["profile"] = text.getvalue()
        print(json.dumps(out))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="80 keywords, 50 apps x 30 days, 1,000 tracked cells")
    parser.add_argument("--profile", action="store_true", help="and the top of a profile of each child's figure")
    args = parser.parse_args()
    os.environ["STOREFRAMES_PROGRESS"] = "0"
    PROFILE["top"] = 30 if args.profile else 0
    found = figures(args.quick)
    print_table(found)
    for what, text in PROFILE["found"]:
        print(f"\n-- profile of {what} --\n{text}")
    for f in found:
        print(json.dumps(f))


if __name__ == "__main__":
    main()
