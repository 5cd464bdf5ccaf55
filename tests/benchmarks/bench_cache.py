"""Cache benchmarks: cold and warm calls, an incremental range, index load time, disk footprint,
and the file formats the cache writes.

Not collected by the test run. Run::

    .venv/bin/python tests/benchmarks/bench_cache.py
    .venv/bin/python tests/benchmarks/bench_cache.py --sizes 200,1000,3000,10000 --latency 0.15 --profile
    .venv/bin/python tests/benchmarks/bench_cache.py --formats    # the formats alone (history 10 x 365)

``--formats`` times the choices behind the files (best of ``--repeats``), on the largest call
users make, ``search_history_frame`` of 10 keywords x 365 days x 500 results (10 answers,
23.6 MB of JSON, bodies of ``bench_search.history_bodies``, one frame of 182,500 rows per
answer), and on the metadata frames of ``--apps`` apps from the sandbox:

* the raw answer: format 1 (``json.dumps`` of the parsed answer, gzip level 6; read back with
  ``json.loads``) beside format 2 (the body's bytes, scrubbed, zstd at levels 1, 3 and 9 through
  pyarrow; read back with orjson), bytes on disk;
* each answer's frame file: ``to_arrow()`` + ``pq.write_table`` (pyarrow's defaults: snappy,
  statistics) beside polars ``write_parquet`` (zstd, lz4, snappy; with and without column
  statistics), read back with pyarrow then ``pl.from_arrow`` and with polars, bytes on disk.

Prints a table per section, then one JSON line per figure
(``{"name", "value", "unit", "context"}``).

Everything runs against the in-process sandbox (one shared synthetic world) with
temporary cache folders. The sandbox answers at once unless ``--latency`` is given, so
a "cold" call measures the client's and the cache's own work plus the sandbox building
its answers, with no network time; "no cache" is the same call with caching off, so
cold minus no-cache is what writing the cache costs.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import itertools
import json
import platform
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.parquet as pq

import storeframes as sf
from storeframes.sandbox import World

sys.path.insert(0, str(Path(__file__).parent))

TODAY = date(2026, 11, 20)
END = date(2026, 11, 19)
METRICS = ["downloads", "revenues", "app-power", "ratings"]
RATE_LIMIT = (10_000, 1.0)  # high enough that the limiter never waits

Figure = dict[str, Any]


def figure(name: str, value: float, unit: str, **context: Any) -> Figure:
    return {"name": name, "value": value, "unit": unit, "context": context}


def sandbox(world: World, cache_dir: Path | bool, *, latency: float = 0.0) -> sf.Client:
    return sf.sandbox.client(today=TODAY, cache_dir=cache_dir, rate_limit=RATE_LIMIT, latency=latency, world=world)


def us_apps(world: World) -> list[str]:
    """The iphone/ipad apps available in "us" (so no call is split to isolate an unavailable app)."""
    return [a for a in world.app_ids("ios") if a not in world.UNAVAILABLE_IN_US]


def dates(days: int) -> dict[str, str]:
    return {"start_date": (END - timedelta(days=days - 1)).isoformat(), "end_date": END.isoformat()}


@dataclass(frozen=True)
class Workload:
    name: str
    endpoint: str
    call: str
    run: Callable[[sf.Client], list[sf.Answer]]


def workloads(world: World, apps: int, days: int) -> list[Workload]:
    ids = us_apps(world)[:apps]
    keywords = list(World.EXAMPLE_KEYWORDS)
    span = dates(days)
    return [
        Workload("metadata", "metadata", f"{len(ids)} apps", lambda c: [c.get("metadata", apps=ids)]),
        Workload("changes", "changes", f"{len(ids)} apps x {days} d", lambda c: [c.get("changes", apps=ids, **span)]),
        Workload(
            "search_history",
            "search_history",
            f"{len(keywords)} keywords x {days} d",
            lambda c: c.get_many("search_history", [{"keyword": k, **span} for k in keywords]),
        ),
        Workload(
            "metrics",
            "metrics",
            f"{len(ids)} apps x {len(METRICS)} metrics",
            lambda c: [c.get("metrics", apps=ids, metrics=METRICS)],
        ),
    ]


@dataclass(frozen=True)
class Run:
    seconds: float
    requests: int
    cost: int
    saved: int
    from_cache: bool


def timed(client: sf.Client, run: Callable[[sf.Client], list[sf.Answer]]) -> Run:
    before = client.requests_sent
    started = time.perf_counter()
    answers = run(client)
    took = time.perf_counter() - started
    return Run(
        seconds=took,
        requests=client.requests_sent - before,
        cost=sum(a.cost for a in answers),
        saved=sum(a.saved for a in answers),
        from_cache=all(a.from_cache for a in answers),
    )


# -- 1. cold and warm ---------------------------------------------------------------


def cold_and_warm(world: World, work: Workload, root: Path, *, latency: float, repeats: int) -> list[Figure]:
    """Best of ``repeats``: no cache, cold (empty folder), warm in the same client, warm in a new client."""
    runs: dict[str, list[Run]] = {"no_cache": [], "cold": [], "warm_same_client": [], "warm_new_client": []}
    for r in range(repeats):
        with sandbox(world, False, latency=latency) as client:  # also builds the world's profiles once
            runs["no_cache"].append(timed(client, work.run))
        folder = root / f"{work.name}-{r}"
        with sandbox(world, folder, latency=latency) as client:
            runs["cold"].append(timed(client, work.run))
            runs["warm_same_client"].append(timed(client, work.run))
        with sandbox(world, folder, latency=latency) as client:
            runs["warm_new_client"].append(timed(client, work.run))
    assert all(r.from_cache for r in runs["warm_same_client"] + runs["warm_new_client"]), work.name
    context = {"workload": work.name, "call": work.call, "latency_ms": latency * 1000, "repeats": repeats}
    figures = [
        figure(f"{work.name}.{state}_seconds", round(min(r.seconds for r in done), 4), "s", **context, stat="min")
        for state, done in runs.items()
    ]
    last = {state: done[-1] for state, done in runs.items()}
    figures += [
        figure(f"{work.name}.requests_{state}", last[state].requests, "requests", **context)
        for state in ("cold", "warm_same_client", "warm_new_client")
    ]
    figures += [
        figure(f"{work.name}.credits_cold", last["cold"].cost, "credits", **context),
        figure(f"{work.name}.credits_saved_warm", last["warm_new_client"].saved, "credits", **context),
    ]
    return figures


# -- 2. an incremental range ----------------------------------------------------------


def incremental(world: World, root: Path, *, apps: int, first: int, second: int, latency: float) -> list[Figure]:
    """``first`` days of change history, then ``second`` days ending the same day: the second call's work."""
    ids = us_apps(world)[:apps]
    with sandbox(world, root / "incremental", latency=latency) as client:
        client.get("changes", apps=ids, **dates(first))
        arrived = len(client.sandbox_service.arrivals)
        run = timed(client, lambda c: [c.get("changes", apps=ids, **dates(second))])
        sent = client.sandbox_service.arrivals[arrived:]
    ranges = sorted({(a.params["start_date"], a.params["end_date"]) for a in sent})
    new_days = sorted({(date.fromisoformat(e) - date.fromisoformat(s)).days + 1 for s, e in ranges})
    context = {
        "workload": "changes",
        "call": f"{len(ids)} apps x {first} d, then x {second} d",
        "latency_ms": latency * 1000,
        "request_ranges": [f"{s}..{e}" for s, e in ranges],
        "days_per_request": new_days,
    }
    return [
        figure("incremental.seconds", round(run.seconds, 4), "s", **context),
        figure("incremental.requests", run.requests, "requests", **context),
        figure("incremental.credits", run.cost, "credits", **context),
        figure("incremental.credits_saved", run.saved, "credits", **context),
    ]


# -- 3. index load time as the cache grows ---------------------------------------------


def languages() -> Iterator[str]:
    """The language codes the catalog accepts, "en" first: each gives another scope, so another entry per app."""
    from storeframes import codes

    accepted = (codes.LANGUAGES - set(codes.REFUSED_LANGUAGES)) | set(codes.SERVICE_LANGUAGES)
    yield "en"
    yield from sorted(accepted - {"en"})


def folder_bytes(folder: Path) -> tuple[int, int]:
    """Apparent size (sum of file sizes) and allocated size (blocks on disk) of every file under ``folder``."""
    files = [p.stat() for p in folder.rglob("*") if p.is_file()]
    return sum(s.st_size for s in files), sum(s.st_blocks * 512 for s in files)


def index_growth(world: World, root: Path, sizes: Sequence[int], *, profile: bool) -> list[Figure]:
    """Fill one folder with metadata calls of one app up to each size (the client sends them in requests of
    up to 5 apps: ``entries`` counts the answers kept); time a fresh client's first lookup."""
    folder = root / "growth"
    apps = us_apps(world)
    keys = ((language, app) for language in languages() for app in apps)
    probe = {"apps": [apps[0]], "language": "en"}  # cached from the first fill on
    figures: list[Figure] = []
    filled = 0
    for size in sorted(sizes):
        calls = [{"apps": [app], "language": language} for language, app in itertools.islice(keys, size - filled)]
        with sandbox(world, folder) as client:
            started = time.perf_counter()
            client.get_many("metadata", calls)
            fill = time.perf_counter() - started
        filled = size
        with sandbox(world, folder) as client:
            profiler = cProfile.Profile() if profile and size == max(sizes) else None
            started = time.perf_counter()
            if profiler:
                profiler.enable()
            plan = client.plan("metadata", **probe)
            if profiler:
                profiler.disable()
            first = time.perf_counter() - started
            again = []
            for _ in range(5):
                started = time.perf_counter()
                client.plan("metadata", **probe)
                again.append(time.perf_counter() - started)
            entries = len(client.cache.entries("metadata"))
        assert plan.cached and 0 < entries <= size, (plan, entries, size)
        if profiler:
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(18)
            print(f"-- profile of the first lookup with {size} entries --\n{out.getvalue()}", file=sys.stderr)
        apparent, allocated = folder_bytes(folder)
        ledger = len(list((folder / "ledger").glob("*.parquet")))
        context = {"entries": entries, "endpoint": "metadata", "entry": "one app's metadata", "ledger_files": ledger}
        figures += [
            figure("index.fill_seconds", round(fill, 3), "s", **context, added=len(calls)),
            figure("index.first_lookup_ms", round(first * 1000, 2), "ms", **context),
            figure("index.first_lookup_ms_per_1000_entries", round(first * 1e6 / entries, 1), "ms", **context),
            figure("index.loaded_lookup_ms", round(statistics.median(again) * 1000, 3), "ms", **context, stat="median"),
            figure("index.folder_bytes", apparent, "bytes", **context, allocated_bytes=allocated),
            figure(
                "index.bytes_per_entry",
                round(apparent / entries),
                "bytes",
                **context,
                allocated=round(allocated / entries),
            ),
        ]
    return figures


# -- 4. disk footprint per endpoint ------------------------------------------------------


def footprint(root: Path, works: Sequence[Workload]) -> list[Figure]:
    """Bytes per cached answer of each workload's cold call: raw answer (zstd JSON) and index (Parquet)."""
    figures: list[Figure] = []
    for work in works:
        folder = root / f"{work.name}-0"  # every repeat holds the same answers
        answers = list((folder / "answers" / f"endpoint={work.endpoint}").glob("*.json.zst"))
        index = list((folder / "index" / f"endpoint={work.endpoint}").glob("*.parquet"))
        cells = sum(pq.read_metadata(p).num_rows for p in index)
        n = len(index)
        gz = sum(p.stat().st_size for p in answers)
        parquet = sum(p.stat().st_size for p in index)
        context = {"workload": work.name, "call": work.call, "entries": n, "cells_per_entry": round(cells / n, 1)}
        figures += [
            figure(
                f"footprint.{work.name}.answer_bytes_per_entry", round(gz / n), "bytes", **context, format="json.zst"
            ),
            figure(
                f"footprint.{work.name}.index_bytes_per_entry", round(parquet / n), "bytes", **context, format="parquet"
            ),
        ]
    return figures


# -- 5. the file formats ---------------------------------------------------------------------


def best_of(run: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    took, out = float("inf"), None
    for _ in range(repeats):
        started = time.perf_counter()
        out = run()
        took = min(took, time.perf_counter() - started)
    return took, out


def history_frames() -> tuple[list[bytes], list[pl.DataFrame]]:
    """The 10 x 365 x 500 history: its bodies, and each answer's frame as the flattener makes it."""
    import orjson
    from bench_search import FETCHED_AT, answers_of, history_bodies

    from storeframes.flatteners import batch_search_history

    bodies = history_bodies("iphone", 10, 365, seed=0)["by date"]
    frames = [batch_search_history(answers_of([orjson.loads(b)], FETCHED_AT))[0] for b in bodies]
    return bodies, frames


def metadata_frames(world: World, apps: int) -> list[pl.DataFrame]:
    """The metadata frames of ``apps`` apps, one per request of 5, as the cache keeps them."""
    with tempfile.TemporaryDirectory(prefix="storeframes-bench-") as folder:
        with sf.sandbox.client(
            today=TODAY, cache_dir=Path(folder), rate_limit=RATE_LIMIT, world=world, progress=False
        ) as client:
            client.metadata_frame(us_apps(world)[:apps])
        return [pl.read_parquet(p).drop("entry") for p in sorted(Path(folder).glob("frames/table=metadata/*.parquet"))]


def answer_formats(bodies: list[bytes], repeats: int) -> list[Figure]:
    import gzip

    import orjson
    import pyarrow as pa

    parsed = [orjson.loads(b) for b in bodies]
    scrub = "not-the-token"
    context = {"answers": len(bodies), "json_bytes": sum(map(len, bodies))}
    figures = [
        figure(
            "formats.answer.parse_s",
            round(best_of(lambda: [orjson.loads(b) for b in bodies], repeats)[0], 4),
            "s",
            **context,
        )
    ]

    def format_1() -> list[bytes]:
        return [
            gzip.compress(
                json.dumps(p, separators=(",", ":"), ensure_ascii=False).replace(scrub, "***").encode(), 6, mtime=0
            )
            for p in parsed
        ]

    took, files = best_of(format_1, repeats)
    read, _ = best_of(lambda: [json.loads(gzip.decompress(f)) for f in files], repeats)
    figures.append(
        figure(
            "formats.answer.gzip6_json",
            round(took, 4),
            "s",
            **context,
            read_s=round(read, 4),
            bytes=sum(map(len, files)),
        )
    )
    for level in (1, 3, 9):
        codec = pa.Codec("zstd", compression_level=level)

        def format_2(codec: Any = codec) -> list[bytes]:
            return [
                codec.compress(b.decode("latin-1").replace(scrub, "***").encode("latin-1"), asbytes=True)
                for b in bodies
            ]

        took, files = best_of(format_2, repeats)
        read, _ = best_of(
            lambda files=files, codec=codec: [
                orjson.loads(codec.decompress(f, decompressed_size=len(b), asbytes=True))
                for f, b in zip(files, bodies, strict=True)
            ],
            repeats,
        )
        figures.append(
            figure(
                f"formats.answer.zstd{level}_body",
                round(took, 4),
                "s",
                **context,
                read_s=round(read, 4),
                bytes=sum(map(len, files)),
            )
        )
    return figures


def frame_formats(name: str, frames: list[pl.DataFrame], repeats: int) -> list[Figure]:
    import io as _io

    import pyarrow as pa

    meta = {"storeframes.flattener": "1", "storeframes.params": json.dumps({"keyword": "photo editor"})}
    kept = [
        f.with_columns(pl.lit(f"20261201T093000000000Z-0123456789ab-{i:06x}").alias("entry"))
        for i, f in enumerate(frames)
    ]

    def by_pyarrow(frame: pl.DataFrame) -> bytes:
        sink = _io.BytesIO()
        pq.write_table(frame.to_arrow().replace_schema_metadata(meta), sink)
        return sink.getvalue()

    def by_polars(**options: Any) -> Callable[[pl.DataFrame], bytes]:
        def write(frame: pl.DataFrame) -> bytes:
            sink = _io.BytesIO()
            frame.write_parquet(sink, metadata=meta, **options)
            return sink.getvalue()

        return write

    writers: dict[str, Callable[[pl.DataFrame], bytes]] = {"pyarrow write_table (snappy, statistics)": by_pyarrow}
    for compression in ("zstd", "lz4", "snappy"):
        for with_statistics in (True, False):
            label = f"polars {compression}{'' if with_statistics else ' no statistics'}"
            writers[label] = by_polars(compression=compression, statistics=with_statistics)
    rows = sum(f.height for f in frames)
    context = {"frames": len(frames), "rows": rows, "frame_bytes": sum(f.estimated_size() for f in frames)}
    figures: list[Figure] = []
    for label, write in writers.items():
        took, files = best_of(lambda write=write: [write(f) for f in kept], repeats)
        by_polars_s, back = best_of(lambda files=files: [pl.read_parquet(_io.BytesIO(b)) for b in files], repeats)
        by_arrow_s, _ = best_of(
            lambda files=files: [pl.from_arrow(pq.read_table(pa.BufferReader(b))) for b in files], repeats
        )
        assert all(a.equals(b) for a, b in zip(back, kept, strict=True)), label
        figures.append(
            figure(
                f"formats.{name}.{label}",
                round(took, 4),
                "s",
                **context,
                read_polars_s=round(by_polars_s, 4),
                read_pyarrow_s=round(by_arrow_s, 4),
                bytes=sum(map(len, files)),
            )
        )
    return figures


def formats(world: World, apps: int, repeats: int) -> list[Figure]:
    bodies, history = history_frames()
    return [
        *answer_formats(bodies, repeats),
        *frame_formats("history", history, repeats),
        *frame_formats("metadata", metadata_frames(world, apps), repeats),
    ]


def print_formats(figures: Sequence[Figure]) -> None:
    parse = next(f["value"] for f in figures if f["name"] == "formats.answer.parse_s")
    print(f"\nraw answers of the history call (orjson parse of the bodies: {parse:.3f} s)")
    print(f"{'format':<26} {'write s':>8} {'read s':>8} {'MB':>7}")
    for f in figures:
        if f["name"].startswith("formats.answer.") and "bytes" in f["context"]:
            c = f["context"]
            print(
                f"{f['name'].removeprefix('formats.answer.'):<26} {f['value']:>8.3f} {c['read_s']:>8.3f} {c['bytes'] / 1e6:>7.2f}"
            )
    for table in ("history", "metadata"):
        rows = [f for f in figures if f["name"].startswith(f"formats.{table}.")]
        if not rows:
            continue
        c = rows[0]["context"]
        print(
            f"\n{table} frame files ({c['frames']} files, {c['rows']:,} rows, {c['frame_bytes'] / 1e6:.1f} MB in memory)"
        )
        print(f"{'writer':<42} {'write s':>8} {'read pl s':>10} {'read pa s':>10} {'MB':>7}")
        for f in rows:
            c = f["context"]
            print(
                f"{f['name'].removeprefix(f'formats.{table}.'):<42} {f['value']:>8.3f} {c['read_polars_s']:>10.3f} "
                f"{c['read_pyarrow_s']:>10.3f} {c['bytes'] / 1e6:>7.2f}"
            )


# -- output -------------------------------------------------------------------------------


def print_tables(figures: Sequence[Figure], works: Sequence[Workload]) -> None:
    value = {f["name"]: f["value"] for f in figures}
    context = {f["name"]: f["context"] for f in figures}

    first = figures[0]["context"]
    print(f"\ncold and warm (seconds: best of {first['repeats']}; cold at {first['latency_ms']:g} ms latency)")
    print(
        f"{'workload':<15} {'call':<24} {'no cache':>9} {'cold':>8} {'warm':>8} {'warm new':>9}  {'requests c/w/n':<15} {'credits':>8} {'saved':>7}"
    )
    for w in works:
        v = {k.removeprefix(f"{w.name}."): x for k, x in value.items() if k.startswith(f"{w.name}.")}
        requests = f"{v['requests_cold']}/{v['requests_warm_same_client']}/{v['requests_warm_new_client']}"
        print(
            f"{w.name:<15} {w.call:<24} {v['no_cache_seconds']:>9.3f} {v['cold_seconds']:>8.3f} "
            f"{v['warm_same_client_seconds']:>8.3f} {v['warm_new_client_seconds']:>9.3f}  {requests:<15} "
            f"{v['credits_cold']:>8} {v['credits_saved_warm']:>7}"
        )

    c = context["incremental.seconds"]
    print(f"\nincremental range ({c['call']})")
    print(
        f"second call: {value['incremental.seconds']:.3f} s, {value['incremental.requests']} requests "
        f"of {c['days_per_request']} day(s) ({', '.join(c['request_ranges'])}), "
        f"{value['incremental.credits']} credits, {value['incremental.credits_saved']} saved"
    )

    print(
        "\nindex load as the cache grows (metadata calls of one app, sent 5 apps a request; fresh client's first lookup)"
    )
    print(
        f"{'entries':>8} {'fill s':>8} {'first ms':>9} {'ms/1000':>8} {'loaded ms':>10} {'folder MB':>10} {'B/entry':>8} {'alloc B/entry':>14}"
    )
    for f in figures:
        if f["name"] != "index.first_lookup_ms":
            continue
        n = f["context"]["entries"]
        at = {g["name"]: g for g in figures if g["name"].startswith("index.") and g["context"]["entries"] == n}
        print(
            f"{n:>8} {at['index.fill_seconds']['value']:>8.2f} {f['value']:>9.1f} "
            f"{at['index.first_lookup_ms_per_1000_entries']['value']:>8.0f} {at['index.loaded_lookup_ms']['value']:>10.3f} "
            f"{at['index.folder_bytes']['value'] / 1e6:>10.2f} {at['index.bytes_per_entry']['value']:>8} "
            f"{at['index.bytes_per_entry']['context']['allocated']:>14}"
        )

    print("\ndisk footprint per cached answer (cold call of each workload)")
    print(f"{'workload':<15} {'entries':>8} {'cells/entry':>12} {'answer .json.zst B':>18} {'index .parquet B':>17}")
    for w in works:
        a = f"footprint.{w.name}.answer_bytes_per_entry"
        print(
            f"{w.name:<15} {context[a]['entries']:>8} {context[a]['cells_per_entry']:>12} {value[a]:>18} "
            f"{value[f'footprint.{w.name}.index_bytes_per_entry']:>17}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--apps", type=int, default=50, help="apps per call (default 50)")
    parser.add_argument("--days", type=int, default=90, help="days of the history calls (default 90)")
    parser.add_argument("--latency", type=float, default=0.0, help="sandbox seconds per request (default 0)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each cold/warm figure, best kept (default 3)")
    parser.add_argument(
        "--sizes",
        default="200,1000,3000",
        help="entries in the folder for the index load figures (default 200,1000,3000)",
    )
    parser.add_argument("--profile", action="store_true", help="cProfile the largest first lookup (to stderr)")
    parser.add_argument("--formats", action="store_true", help="only the file formats' figures")
    args = parser.parse_args()
    sizes = sorted({int(s) for s in args.sizes.split(",") if s.strip()})

    world = World(0)
    if args.formats:
        found = formats(world, args.apps * 4, args.repeats)
        print(f"machine: {platform.machine()}, {platform.python_implementation()} {platform.python_version()}")
        print_formats(found)
        print()
        for f in found:
            print(json.dumps(f))
        return
    works = workloads(world, args.apps, args.days)
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="storeframes-bench-") as tmp:
        root = Path(tmp)
        for work in works:
            figures += cold_and_warm(world, work, root, latency=args.latency, repeats=args.repeats)
        figures += incremental(
            world, root, apps=args.apps, first=max(1, args.days - 30), second=args.days, latency=args.latency
        )
        figures += index_growth(world, root, sizes, profile=args.profile)
        figures += footprint(root, works)

    print(f"machine: {platform.machine()}, {platform.python_implementation()} {platform.python_version()}")
    print_tables(figures, works)
    print()
    for f in figures:
        print(json.dumps(f))


if __name__ == "__main__":
    main()
