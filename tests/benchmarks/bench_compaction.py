"""Compaction benchmarks: a cache of many small files, before and after ``storeframes cache compact``.

Not collected by the test run. Run::

    .venv/bin/python tests/benchmarks/bench_compaction.py                   # 1,000, 10,000 and 100,000 answers
    .venv/bin/python tests/benchmarks/bench_compaction.py --quick           # 300 and 3,000 answers
    .venv/bin/python tests/benchmarks/bench_compaction.py --sizes 100000 --profile

Prints a table, then one JSON line per figure (``{"name", "value", "unit", "context"}``).

A folder is filled with N one-app metadata answers of the sandbox's namespace, each with
its kept ``versions`` and ``metadata`` frames, as a client leaves them: four small files
an answer (raw answer, index, two frames). Filling 100,000 answers through the sandbox
client would take long, so a few real sandbox answers serve as templates and each cached
answer is one of them given an app id of its own, written straight through
:meth:`Cache.store <storeframes.Cache.store>` and :meth:`cache.frames.write
<storeframes.cache.frame_files.FrameFiles.write>` (on every CPU). Then, before and after
:meth:`Cache.compact <storeframes.Cache.compact>` (with this version's flatteners, as
``storeframes cache compact`` does), each in a fresh process:

* open: a new client's first lookup (``client.plan("metadata", apps=[one cached app])``),
  which reads the index;
* warm call: a new offline sandbox client calling ``versions_frame`` and ``metadata_frame``
  of 20 cached apps, first (opening the cache included) and a second time in the same
  process, with the process's peak resident size; no request is sent;

and the files under ``index/`` and ``frames/`` and the bytes of the folder. The
compaction runs in a fresh process too (``Cache(folder).compact(...)``): its time and
peak resident size. Answers made from 40 templates compress better than real ones, so
the compacted bytes are on the low side; the counts of files and rows are real.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import multiprocessing
import os
import platform
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import storeframes as sf
from storeframes import planning
from storeframes.answers import Response
from storeframes.cache import Cache
from storeframes.catalog import ENDPOINTS
from storeframes.fetch.pipeline import FRAMES
from storeframes.kept.tables import flattener_versions
from storeframes.sandbox import World

TODAY = date(2026, 11, 20)
SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (300, 3_000)
TEMPLATES = 40  # real sandbox answers the cached ones are made from
WARM_APPS = 20
FIRST_ID = 7_000_000_000  # synthetic app ids: FIRST_ID + n (iphone ids, none of the sandbox world's)
TABLES = ("versions_frame", "metadata_frame")  # the frames kept beside each answer
CHUNK = 500  # answers a filling process writes at a time

Figure = dict[str, Any]


def figure(name: str, value: float, unit: str, **context: Any) -> Figure:
    return {"name": name, "value": value, "unit": unit, "context": context}


def namespace(seed: int = 0) -> str:
    """The service name a sandbox client of ``seed`` keeps its answers under (``SandboxClient.namespace``)."""
    return f"sandbox-{seed}"


def app_id(n: int) -> str:
    return str(FIRST_ID + n)


# -- filling a folder ------------------------------------------------------------------------


def templates(world: World, count: int = TEMPLATES) -> list[Response]:
    """Real one-app metadata answers of the sandbox, of apps available in "us"."""
    apps = [a for a in world.app_ids("ios") if a not in world.UNAVAILABLE_IN_US][:count]
    with sf.sandbox.client(
        today=TODAY, cache_dir=False, world=world, rate_limit=(10_000, 1.0), progress=False
    ) as client:
        answers = [client.get("metadata", apps=[a]) for a in apps]  # one request each
    responses = [r for a in answers for r in a.responses]
    assert all(len(r.result) == 1 for r in responses)
    return responses


def synthetic(template: Response, n: int) -> Response:
    """The answer ``template`` for the app ``app_id(n)``: its result keyed and numbered so, fetched a little earlier."""
    ((_, resource_),) = template.result.items()
    app = app_id(n)
    result = {app: {**resource_, "metadata": {**resource_["metadata"], "id": int(app)}}}
    return Response(
        endpoint=template.endpoint,
        params={**template.params, "apps": app},
        result=result,
        cost=template.cost,
        max_credit_cost=template.max_credit_cost,
        status=template.status,
        fetched_at=template.fetched_at - timedelta(milliseconds=n),
        echo={**template.echo, "apps": [app]},
    )


def fill_chunk(folder: str, models: list[Response], start: int, stop: int) -> int:
    """Keep the answers ``start`` to ``stop`` (and their frames) in ``folder``, as a client would."""
    cache = Cache(folder)
    ep = ENDPOINTS["metadata"]
    responses = [synthetic(models[n % len(models)], n) for n in range(start, stop)]
    entries = []
    for response in responses:
        entry = cache.store(
            response,
            service=namespace(),
            scope=planning.scope_of(ep, response.params),
            cells=planning.cells_of(ep, response.params),
        )
        assert entry is not None
        entries.append(entry)
    for name in TABLES:
        spec = FRAMES[name]
        built, counts = spec.build(responses)
        offset = 0
        for entry, count in zip(entries, counts, strict=True):
            cache.frames.write(entry, spec.table.name, spec.version, built.slice(offset, count))
            offset += count
    return stop - start


def fill(folder: Path, size: int, models: list[Response], workers: int) -> float:
    """Fill ``folder`` with ``size`` answers on ``workers`` processes; the seconds it took."""
    started = time.perf_counter()
    chunks = [(n, min(n + CHUNK, size)) for n in range(0, size, CHUNK)]
    # spawned, not forked: polars' runtime does not survive a fork of a process that used it (run.py's groups do)
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        done = sum(pool.map(fill_chunk, *zip(*[(str(folder), models, a, b) for a, b in chunks], strict=True)))
    assert done == size
    return time.perf_counter() - started


# -- measuring ---------------------------------------------------------------------------------


def files_under(folder: Path, kind: str) -> int:
    return sum(1 for p in (folder / kind).rglob("*") if p.is_file())


def folder_bytes(folder: Path) -> tuple[int, int]:
    """Apparent size (sum of file sizes) and allocated size (blocks on disk) of every file under ``folder``."""
    files = [p.stat() for p in folder.rglob("*") if p.is_file()]
    return sum(s.st_size for s in files), sum(s.st_blocks * 512 for s in files)


def on_disk(folder: Path) -> Figure:
    apparent, allocated = folder_bytes(folder)
    return {
        "answers_files": files_under(folder, "answers"),
        "index_files": files_under(folder, "index"),
        "frames_files": files_under(folder, "frames"),
        "bytes": apparent,
        "allocated_bytes": allocated,
    }


def peak_rss() -> int:
    """This process's peak resident size in bytes.

    ``VmHWM`` where there is a ``/proc``: ``ru_maxrss`` of a child started by a large
    parent reports the parent's size, kept across fork and exec.
    """
    try:
        with open("/proc/self/status") as status:
            for row in status:
                if row.startswith("VmHWM:"):
                    return int(row.split()[1]) * 1024
    except OSError:
        pass
    import resource  # not on Windows

    scale = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB elsewhere
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def child_open(folder: str, app: str) -> None:
    """A new client's first lookup, in this fresh process: prints one JSON object (``--child-open FOLDER APP``)."""
    started = time.perf_counter()
    client = sf.sandbox.client(today=TODAY, cache_dir=folder, offline=True, progress=False)
    made = time.perf_counter() - started
    with client:
        started = time.perf_counter()
        plan = client.plan("metadata", apps=[app])
        first = time.perf_counter() - started
        assert plan.cached, plan
        started = time.perf_counter()
        client.plan("metadata", apps=[app])
        again = time.perf_counter() - started
        entries = len(client.cache.entries("metadata"))
    print(json.dumps({"client_s": made, "first_lookup_s": first, "again_s": again, "entries": entries}))


def print_profile(profiler: cProfile.Profile, what: str) -> None:
    """``profiler``'s figures to stderr: by cumulative time, then by own time."""
    for order in ("cumulative", "tottime"):
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats(order).print_stats(25)
        print(f"-- profile of {what} ({order}) --\n{out.getvalue()}", file=sys.stderr)


def child_warm(folder: str, apps: str, profile: str = "") -> None:
    """Two warm frame calls of a new offline client, in this fresh process: prints one JSON object.

    ``--child-warm FOLDER APP,APP,... [PROFILE]``; with PROFILE, each call's cProfile goes to stderr.
    """
    ids = apps.split(",")
    started = time.perf_counter()
    client = sf.sandbox.client(today=TODAY, cache_dir=folder, offline=True, progress=False)
    made = time.perf_counter() - started
    with client:
        runs = []
        for which in ("first", "second"):
            profiler = cProfile.Profile() if profile else None
            if profiler:
                profiler.enable()
            started = time.perf_counter()
            versions = client.versions_frame(ids)
            middle = time.perf_counter()
            metadata = client.metadata_frame(ids)
            ended = time.perf_counter()
            if profiler:
                profiler.disable()
                print_profile(profiler, f"the {which} warm call")
            runs.append({"seconds": ended - started, "versions_s": middle - started, "metadata_s": ended - middle})
            assert client.sandbox_service.arrivals == [], "the warm call sent requests"
            assert set(versions["app_id"]) == set(ids), sorted(set(versions["app_id"]))
            assert metadata.height == len(ids) and set(metadata["app_id"]) == set(ids)
    first, second = runs
    print(
        json.dumps(
            {
                "client_s": made,
                "first_s": first["seconds"],
                "first_versions_s": first["versions_s"],
                "first_metadata_s": first["metadata_s"],
                "second_s": second["seconds"],
                "versions_rows": versions.height,
                "metadata_rows": metadata.height,
                "peak_rss_bytes": peak_rss(),
            }
        )
    )


def child_compact(folder: str, profile: str = "") -> None:
    """``Cache(folder).compact(frames=flattener_versions())`` in this fresh process: prints one JSON object.

    ``--child-compact FOLDER [PROFILE]``; with PROFILE, its cProfile goes to stderr.
    """
    profiler = cProfile.Profile() if profile else None
    if profiler:
        profiler.enable()
    started = time.perf_counter()
    done = Cache(folder).compact(frames=flattener_versions())
    took = time.perf_counter() - started
    if profiler:
        profiler.disable()
        print_profile(profiler, "the compaction")
    print(json.dumps({"seconds": took, "peak_rss_bytes": peak_rss(), **done}))


def in_child(*args: str, profile: bool = False) -> Figure:
    env = {**os.environ, "STOREFRAMES_PROGRESS": "0"}
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, check=False, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"the child process {args[0]} failed:\n{done.stderr}")
    if profile:
        print(done.stderr, file=sys.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


STATES = {"small_files": "small files", "compacted": "compacted"}  # a figure's state, in its name, and for people


def measure(folder: Path, size: int, state: str, *, profile: bool) -> list[Figure]:
    """The open and warm-call figures of ``folder`` (``state`` of :data:`STATES`) in fresh processes, and its files."""
    probe = app_id(size // 2)
    warm = [app_id(n * size // WARM_APPS) for n in range(WARM_APPS)]  # spread over the folder
    opened = in_child("--child-open", str(folder), probe)
    called = in_child("--child-warm", str(folder), ",".join(warm), *(["profile"] if profile else []), profile=profile)
    assert opened["entries"] == size, (opened, size)
    disk = on_disk(folder)
    context = {
        "answers": size,
        "state": STATES[state],
        "entry": "one app's metadata",
        "frames": ["versions", "metadata"],
    }
    call = f"versions_frame + metadata_frame of {WARM_APPS} apps, offline"
    name = f"compaction.{state}"
    return [
        figure(
            f"{name}.open_ms",
            round(opened["first_lookup_s"] * 1000, 2),
            "ms",
            **context,
            call="plan('metadata', apps=[one cached app])",
            client_ms=round(opened["client_s"] * 1000, 2),
            again_ms=round(opened["again_s"] * 1000, 3),
        ),
        figure(
            f"{name}.warm_call_seconds",
            round(called["first_s"], 4),
            "s",
            **context,
            call=call,
            versions_s=round(called["first_versions_s"], 4),
            metadata_s=round(called["first_metadata_s"], 4),
            client_s=round(called["client_s"], 4),
            versions_rows=called["versions_rows"],
            metadata_rows=called["metadata_rows"],
        ),
        figure(f"{name}.second_call_seconds", round(called["second_s"], 4), "s", **context, call=call),
        figure(f"{name}.warm_peak_rss_bytes", called["peak_rss_bytes"], "bytes", **context, call=call),
        figure(f"{name}.index_files", disk["index_files"], "files", **context),
        figure(f"{name}.frames_files", disk["frames_files"], "files", **context),
        figure(
            f"{name}.folder_bytes",
            disk["bytes"],
            "bytes",
            **context,
            allocated_bytes=disk["allocated_bytes"],
            answers_files=disk["answers_files"],
        ),
    ]


def run(sizes: Sequence[int], *, workers: int | None = None, profile: bool = False) -> list[Figure]:
    """Every figure at every size: one folder each, filled, measured, compacted, measured again."""
    workers = workers or os.cpu_count() or 1
    models = templates(World(0))
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="storeframes-bench-") as tmp:
        for size in sorted(sizes):
            folder = Path(tmp) / f"cache-{size}"
            filled = fill(folder, size, models, workers)
            last = profile and size == max(sizes)
            figures.append(figure("compaction.fill_seconds", round(filled, 2), "s", answers=size, workers=workers))
            figures += measure(folder, size, "small_files", profile=False)
            done = in_child("--child-compact", str(folder), *(["profile"] if last else []), profile=last)
            took, peak = done.pop("seconds"), done.pop("peak_rss_bytes")
            context = {"answers": size, "call": "Cache(folder).compact(frames=flattener_versions())", **done}
            figures.append(figure("compaction.compact_seconds", round(took, 3), "s", **context))
            figures.append(figure("compaction.compact_peak_rss_bytes", peak, "bytes", **context))
            figures += measure(folder, size, "compacted", profile=last)
            shutil.rmtree(folder)
    return figures


# -- output ------------------------------------------------------------------------------------


def by_size(figures: Sequence[Figure]) -> dict[int, dict[str, Figure]]:
    """The figures of each size, by name without ``compaction.`` (``compact_seconds``, ``compacted.open_ms``)."""
    out: dict[int, dict[str, Figure]] = {}
    for f in figures:
        out.setdefault(f["context"]["answers"], {})[f["name"].removeprefix("compaction.")] = f
    return out


def print_table(figures: Sequence[Figure]) -> None:
    print(
        "\ncompaction (one-app metadata answers with their versions and metadata frames; each figure a fresh process)"
    )
    heads = ("answers", "state", "open ms", "warm s", "2nd s", "peak MB", "index files", "frames files", "MB")
    print(f"{heads[0]:>8} {heads[1]:<12} " + " ".join(f"{h:>12}" for h in heads[2:]))
    for size, at in sorted(by_size(figures).items()):
        for state, what in STATES.items():
            v = {k.removeprefix(f"{state}."): f["value"] for k, f in at.items() if k.startswith(f"{state}.")}
            print(
                f"{size:>8} {what:<12} {v['open_ms']:>12,.1f} {v['warm_call_seconds']:>12.3f} "
                f"{v['second_call_seconds']:>12.3f} {v['warm_peak_rss_bytes'] / 1e6:>12,.0f} "
                f"{v['index_files']:>12,} {v['frames_files']:>12,} {v['folder_bytes'] / 1e6:>12,.1f}"
            )
        c = at["compact_seconds"]
        print(
            f"{'':>8} fill {at['fill_seconds']['value']:.1f} s; compact {c['value']:.2f} s, "
            f"peak {at['compact_peak_rss_bytes']['value'] / 1e6:,.0f} MB "
            f"({c['context']['index_files_merged']:,} index and {c['context']['frame_files_merged']:,} frame files "
            f"merged into {c['context']['files_written']})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="cached answers (default 1000,10000,100000)")
    parser.add_argument("--quick", action="store_true", help="300 and 3,000 answers: a smoke run")
    parser.add_argument("--workers", type=int, default=None, help="processes filling a folder (default: every CPU)")
    parser.add_argument(
        "--profile", action="store_true", help="cProfile the largest compaction and compacted warm call (to stderr)"
    )
    parser.add_argument("--child-open", nargs=2, metavar=("FOLDER", "APP"), help=argparse.SUPPRESS)
    parser.add_argument("--child-warm", nargs="+", metavar="ARG", help=argparse.SUPPRESS)
    parser.add_argument("--child-compact", nargs="+", metavar="ARG", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_open:
        child_open(*args.child_open)
        return
    if args.child_warm:
        child_warm(*args.child_warm)
        return
    if args.child_compact:
        child_compact(*args.child_compact)
        return
    sizes = QUICK_SIZES if args.quick else sorted({int(s) for s in args.sizes.split(",") if s.strip()})

    started = time.perf_counter()
    figures = run(sizes, workers=args.workers, profile=args.profile)
    took = time.perf_counter() - started
    about = f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}"
    print(f"machine: {os.cpu_count()} CPUs, {about}")
    print(f"run: {took:.0f} s")
    print_table(figures)
    print()
    for f in figures:
        print(json.dumps(f))


if __name__ == "__main__":
    main()
