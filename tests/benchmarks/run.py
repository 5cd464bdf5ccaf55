"""Every benchmark in one run: one table of the figures, then one JSON line per figure.

Not collected by the test run. Run::

    .venv/bin/python tests/benchmarks/run.py            # the full run (about 45 minutes on 2 CPUs, 5 of shapes, 7 of compaction, 10 of track, 7 of warm, 3 of alerts, 2 of lake, 5 of fetch)
    .venv/bin/python tests/benchmarks/run.py --quick    # a smoke run (about 6 minutes)
    .venv/bin/python tests/benchmarks/run.py --only flatten,memory

It calls the functions of the scripts beside it, with their own default sizes (their
``--quick`` sizes with ``--quick``):

* call: the whole call a user makes (``search_history_frame`` of 10 keywords x 365 days,
  ``metadata_frame`` of 1,000 apps, ``changes_frame`` of 500 apps x 90 days) against a mock
  transport answering at once, with no cache, cold and warm, each as a ratio to orjson's parse
  of the same JSON in the same run; the warm call's peak memory beside the frame's size; and
  ``import storeframes`` (``bench_call.py``);
* shapes: the whole call of every frame function (metadata and its tables, metrics, changes and
  its tables, live search with and without ads, history, benchmarks) on bodies of several shapes
  (both stores, short numeric ids and package names, the variant forms the flatteners accept),
  with no cache and cold, each as a ratio to orjson's parse of the same bodies (``bench_shapes.py``);
* flatten: each endpoint's flatteners on realistic answers, beside ``json.loads`` of the same
  answers and ``pandas.json_normalize`` giving the same rows (``bench_metadata.py``,
  ``bench_changes.py``, ``bench_search.py``, ``bench_metrics.py``);
* fetch: 120 requests at 30 per 3 s and 100 ms latency (and, full run, 180 at 60 per 10 s and
  0, 50, 100, 333 and 500 ms; 333 ms with each body 250 ms after its headers, and with a
  333 ms handshake for each new connection), each request's latency drawn (x uniform(0.5,
  1.5), half each way), through a sandbox server in its own process, as a share of what the
  rate limit allows beside the best safe schedule's share, with the 429s and the most arrivals
  the server saw in any window; and the client's own cost per request (``bench_client.py``);
* coordination: one plan fetched by 1, 2 and 4 processes sharing a token and a cache folder
  (each asking for all of it, then for disjoint shares): credits against one fetch, share of
  the ceiling, 429s and the most requests in any window (``bench_coordination.py``);
* cache: cold and warm calls, an incremental range, index load time and disk footprint against
  the in-process sandbox (``bench_cache.py``);
* frames: ``metadata_frame``, ``changes_frame`` and ``search_history_frame`` cold and warm
  through the loopback sandbox with 150 ms latency (``bench_frames.py``), and the change-history
  frame pipeline against the in-process sandbox (``bench_changes.py``);
* memory: the peak resident size of the largest frames built from a warm cache and of the
  flatten of the largest answers, each in a fresh process (``bench_frames.py``,
  ``bench_search.py``);
* track: a tracker of 100 keywords x 5 countries (live search) and 200 apps (metadata, metrics):
  ``tracker.plan(day)`` on an empty cache, on a month of the spec's daily runs and on the same
  compacted (a week, 20 keywords and 40 apps with ``--quick``); and a whole run's 580 requests
  (116) against the loopback sandbox at 60 per 10 s and 333 ms (30 per 3 s and 100 ms), its
  requests a second over ``limit / window`` and its share of the ceiling (``bench_track.py``);
* alerts: a tracker of 50 keywords x 2 countries and 40 apps with every alert rule, a month of
  daily runs (10 keywords, 10 apps, 10 days with ``--quick``): a judgement of the last day in a new
  process and in the same tracker, the judgements of the month's runs, and the month's digest
  (``bench_alerts.py``);
* digest: ``render_digest`` of a week of 14 rank series with events, 12 of them charted over 21 days of
  ranks, best of 12 renders (4 with ``--quick``) in a process of its own, and the first render of that
  process (``bench_digest.py``; its ``--base`` renders the same beside another checkout, taking turns);
* day: a tracker of 60 live searches (10 with ads) and 20 apps (metadata, changes) with every alert
  rule, run a day at a time for a month (16 days with ``--quick``) against the loopback sandbox at
  30 per 3 s, on a folder and on a moto bucket: each run's time to its last answer and after it,
  days 14-16 over days 2-4 (``bench_day.py``);
* lake: the same month of a tracker (50 keywords x 2 countries of live search, 5 of them's
  history, 40 apps' metadata and metrics; 10 keywords, 10 apps, 7 days with ``--quick``)
  published to a Delta Lake folder with ``sf.publish``, table by table, the current-only ones with
  their snapshots: the first publish (rows, seconds, files written), a re-publish with nothing new
  (in a new process and from an open cache) and a publish after one more day (``bench_lake.py``);
* compaction: a folder of 1,000, 10,000 and 100,000 cached answers (300 and 3,000 with
  ``--quick``) before and after ``storeframes cache compact``: a new client's first lookup and
  a warm ``versions_frame`` + ``metadata_frame`` call, each in a fresh process, the files and
  bytes on disk, and the compaction's time (``bench_compaction.py``);
* warm: a notebook's call made again from a new client in a fresh process, on both stores, its
  cache of small files and the same compacted: ``search_frame`` of 800 keywords beside polars
  reading its kept rows, ``changes_frame`` of 500 apps x 90 days beside the orjson parse of its
  answers, each with its peak memory beside the frame; ``client.plan`` of that call's 45,000 day
  cells; and a tracker's plan of 10,000 cells the day after its runs (``bench_warm.py``).

The table has a row per figure (group, figure, setting, result), then the performance
goals, each figure of this run beside its goal; a JSON line
is ``{"name", "value", "unit", "context"}``, the context holding every number the script
measured for it (a goal's line, ``goal.<figure>``, says the goal and whether it is met). Each script still runs on its own and prints its own, more detailed, tables.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import bench_alerts
import bench_cache
import bench_call
import bench_changes
import bench_client
import bench_compaction
import bench_coordination
import bench_day
import bench_digest
import bench_frames
import bench_lake
import bench_metadata
import bench_metrics
import bench_search
import bench_shapes
import bench_track
import bench_warm
from _flatten_timing import machine

from storeframes.flatteners import UnknownFieldWarning
from storeframes.sandbox import World

Figure = dict[str, Any]
GROUPS = (
    "call", "shapes", "flatten", "fetch", "coordination", "cache", "frames", "memory", "track", "alerts", "digest",
    "day", "lake", "compaction", "warm",
)  # fmt: skip


@dataclass
class Row:
    group: str
    figure: str
    setting: str
    result: str
    lines: list[Figure] = field(default_factory=list)


def line(name: str, value: Any, unit: str, context: Figure) -> Figure:
    return {"name": name, "value": value, "unit": unit, "context": context}


def slug(text: str) -> str:
    """A part of a figure's name: words joined by ``_`` (``"warm, new client"`` -> ``warm_new_client``)."""
    return "_".join(text.replace(",", " ").replace("{", " ").replace("}", " ").replace(".", " ").split())


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms" if seconds >= 0.1 else f"{seconds * 1000:.1f} ms"


def secs(seconds: float) -> str:
    return f"{seconds:.2f} s" if seconds >= 0.1 else ms(seconds)


def times(x: float) -> str:
    return f"{x:.1f}x" if x >= 1 else f"{x:.2f}x"


def mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB"


def without(figure: Figure, *names: str) -> Figure:
    return {k: v for k, v in figure.items() if k not in names}


# -- call -----------------------------------------------------------------------------------


def call(quick: bool) -> list[Row]:
    """The whole call against a mock transport beside parsing its JSON, warm memory, and the import."""
    sizes = dict(bench_call.QUICK if quick else bench_call.FULL)
    rows = []
    for f in bench_call.figures(sizes):
        if f["bench"] == "whole_call":
            name = f"call.{f['frame']}"
            context = without(f, "bench")
            rows.append(
                Row(
                    "call",
                    f"{f['frame']}, whole call",
                    f"{f['call']}, {f['requests']} requests, {mb(f['json_bytes'])}, best of {f['repeat']}",
                    f"no cache {times(f['no_cache_x_parse'])}, cold {times(f['cold_x_parse'])}, "
                    f"warm {times(f['warm_x_parse'])} the orjson parse ({ms(f['parse_s'])}); {f['rows']:,} rows",
                    [
                        line(f"{name}.no_cache_x_parse", f["no_cache_x_parse"], "ratio", context),
                        line(f"{name}.cold_x_parse", f["cold_x_parse"], "ratio", context),
                        line(f"{name}.warm_x_parse", f["warm_x_parse"], "ratio", context),
                    ],
                )
            )
        elif f["bench"] == "warm_memory":
            what, setting = f"{f['frame']}, warm peak memory", f"{f['call']}, new process, offline"
            if "peak_bytes" not in f:
                rows.append(Row("call", what, setting, f"skipped: {f.get('memory_skipped')}", []))
                continue
            rows.append(
                Row(
                    "call",
                    what,
                    setting,
                    f"{mb(f['peak_bytes'])} above start, {times(f['peak_x_frame'])} the frame's "
                    f"{mb(f['frame_bytes'])}; {f['rows']:,} rows in {secs(f['seconds'])}",
                    [line(f"call.{f['frame']}.warm_peak_x_frame", f["peak_x_frame"], "ratio", without(f, "bench"))],
                )
            )
        else:
            rows.append(
                Row(
                    "call",
                    "import storeframes",
                    f"fresh interpreter, best of {f['repeat']}",
                    f"{secs(f['import_s'])} (polars alone {secs(f['polars_import_s'])}; "
                    f"also loaded: {f['also_imported'] or 'none of pyarrow, pandas, httpx, tqdm'})",
                    [line("call.import_seconds", f["import_s"], "s", without(f, "bench"))],
                )
            )
    return rows


# -- shapes ---------------------------------------------------------------------------------


def shapes(quick: bool) -> list[Row]:
    """Every frame function's whole call on bodies of several shapes, beside parsing its JSON."""
    sizes = dict(bench_shapes.QUICK if quick else bench_shapes.FULL)
    rows = []
    for f in bench_shapes.figures(sizes):
        shape = ".".join(slug(part) for part in (f["frame"], f["store"], f["form"]))
        context = without(f, "bench")
        rows.append(
            Row(
                "shapes",
                f"{f['frame']}, {f['store']}, {f['form']}",
                f"{f['call']}, {f['requests']} requests, {mb(f['json_bytes'])}, best of {f['repeat']}",
                f"no cache {times(f['no_cache_x_parse'])}, cold {times(f['cold_x_parse'])} the orjson parse "
                f"({ms(f['parse_s'])}); {f['rows']:,} rows",
                [
                    line(f"shapes.no_cache_x_parse.{shape}", f["no_cache_x_parse"], "ratio", context),
                    line(f"shapes.cold_x_parse.{shape}", f["cold_x_parse"], "ratio", context),
                ],
            )
        )
    return rows


# -- flatten --------------------------------------------------------------------------------


def flatten_row(endpoint: str, figure: Figure, setting: str, name: str | None = None) -> Row:
    """A flatten figure: flatten time beside json.loads and pandas.json_normalize of the same answers."""
    table = figure.get("table") or figure.get("form")
    key = ".".join(slug(part) for part in (endpoint, figure["store"], table))
    name = name or f"{endpoint} {figure['store']} {table}"
    result = (
        f"{figure['rows']:,} rows in {ms(figure['flatten_s'])} ({figure['rows_per_s']:,} rows/s); "
        f"{times(figure['x_parse'])} json.loads ({ms(figure['parse_s'])})"
    )
    if figure.get("x_pandas") is not None:
        result += f"; json_normalize {ms(figure['pandas_s'])}, {times(figure['x_pandas'])} the flatten"
    else:
        result += f"; no json_normalize ({figure.get('pandas_skipped', 'nothing to normalize')})"
    context = without(figure, "bench", "python_peak_bytes", "x_arrow_python", "peak_bytes", "x_arrow")
    context = without(context, "arrow_bytes", "parse_peak_bytes", "memory_skipped")
    return Row("flatten", name, setting, result, [line(f"flatten.{key}", figure["flatten_s"], "s", context)])


def parse_row(endpoint: str, device: str, figure: Figure, setting: str, what: str) -> Row:
    """The JSON parse alone of one store's answers: ``what`` was parsed."""
    return Row(
        "flatten",
        f"{endpoint} {device} json.loads",
        setting,
        f"{what} in {ms(figure['parse_s'])}",
        [line(f"parse.{endpoint}.{device}", figure["parse_s"], "s", without(figure, "bench"))],
    )


def flatten_metadata(quick: bool) -> list[Row]:
    apps, repeat = (100, 1) if quick else (1000, 5)
    world = World(0, ios_apps=apps, android_apps=apps)
    rows = []
    for device in bench_metadata.STORES:
        for f in bench_metadata.bench_store(world, device, apps, repeat):
            if f["bench"] == "metadata_parse":
                setting = f"{f['apps']} apps, {f['answers']} answers, best of {repeat}"
                rows.append(parse_row("metadata", device, f, setting, f"{mb(f['json_bytes'])} of JSON"))
                continue
            row = flatten_row("metadata", f, f"{f['apps']} apps, {f['answers']} answers")
            if f.get("x_pandas_per_answer") is not None:
                row.result += f" (per answer {ms(f['pandas_per_answer_s'])}, {times(f['x_pandas_per_answer'])})"
            rows.append(row)
    return rows


def flatten_changes(quick: bool) -> tuple[list[Row], list[Figure]]:
    """The flatten rows, and the frame pipeline figures (for the frames group)."""
    apps, days, repeat = (50, 30, 1) if quick else (500, 90, 5)
    world = World(0, ios_apps=apps, android_apps=apps)
    rows = []
    for device in bench_changes.STORES:
        for f in bench_changes.bench_store(world, device, apps, days, repeat):
            if f["bench"] == "changes_parse":
                setting = f"{f['apps']} apps x {f['days']} d, {f['answers']} answers, best of {repeat}"
                what = f"{mb(f['json_bytes'])} of JSON ({f['records']:,} records)"
                rows.append(parse_row("changes", device, f, setting, what))
                continue
            rows.append(flatten_row("changes", f, f"{f['apps']} apps x {f['days']} d"))
    return rows, bench_changes.bench_pipeline(world, apps, days)


def flatten_search(quick: bool) -> tuple[list[Row], list[Figure]]:
    """The flatten rows, and the figures with their peak memory (for the memory group)."""
    keywords, days, live, repeat = (3, 30, 50, 1) if quick else (10, 365, 500, 5)
    figures = []
    for device in bench_search.DEPTH:
        figures += bench_search.bench_history(device, keywords, days, 0, repeat, with_memory=True)
    figures += bench_search.bench_live(live, 0, repeat, with_memory=True)
    rows = []
    for f in figures:
        if f["bench"] == "search_history":
            setting = f"{f['keywords']} keywords x {f['days']} d x {f['per_day']}, best of {repeat}"
            rows.append(flatten_row("search_history", f, setting))
        else:
            setting = f"{f['keywords']} searches x {f['per_keyword']}, best of {repeat}"
            rows.append(flatten_row(f["endpoint"], f, setting, f"{f['endpoint']} {f['store']} live {f['form']}"))
    return rows, figures


def flatten_metrics(quick: bool) -> list[Row]:
    apps, countries, bench_countries, repeat = (100, 3, 5, 1) if quick else (1000, 10, len(bench_metrics.COUNTRIES), 5)
    rows = []
    for f in bench_metrics.run(apps, countries, bench_countries, repeat):
        rows.append(flatten_row(f["table"], f, f"{bench_metrics.setting(f)}, best of {repeat}"))
    return rows


# -- fetch ------------------------------------------------------------------------------------


def fetch(quick: bool) -> list[Row]:
    """Fetch throughput against a sandbox server in its own process, each request's latency drawn
    (x uniform(0.5, 1.5), half each way): the scaled limit through the machine's and the process's
    windows (and at 300 ms), and (full run) the service's own limit at 0, 50, 100, 300, 333 and 500 ms."""
    jittered = dict(jitter=0.5, seed=39)
    cases = [
        dict(limit=30, window=3.0, latency=0.1, requests=120, coordinator="machine", **jittered),
        dict(limit=30, window=3.0, latency=0.1, requests=120, coordinator="process", **jittered),
        dict(limit=30, window=3.0, latency=0.3, requests=120, coordinator="machine", **jittered),
    ]
    if not quick:
        for latency in bench_client.LATENCIES:
            cases.append(dict(limit=60, window=10.0, latency=latency, requests=180, coordinator="machine", **jittered))
        # a body that follows its headers a quarter of a second later (a large answer, a slow link)
        cases.append(dict(limit=60, window=10.0, latency=0.333, requests=180, body=0.25, **jittered))
        # a new connection's first request arrives a handshake later (TCP and TLS): each window reuses them
        cases.append(dict(limit=60, window=10.0, latency=0.333, requests=180, handshake=0.333, **jittered))
    rows = []
    for case in cases:
        f = bench_client.fetch_ratio(**case)
        body = f"_body{f['body_ms']:.0f}ms" if f["body_ms"] else ""
        body += f"_handshake{f['handshake_ms']:.0f}ms" if f["handshake_ms"] else ""
        name = f"{f['limit'].replace('/', '_per_')}.{f['latency_ms']:.0f}ms{body}.{f['coordinator']}"
        body = f", bodies {f['body_ms']:.0f} ms after their headers" if f["body_ms"] else ""
        body += f", new connections {f['handshake_ms']:.0f} ms" if f["handshake_ms"] else ""
        setting = (
            f"{f['requests']} requests, {f['limit']}, {f['latency_ms']:.0f} ms {f['jitter']}{body}, {f['workers']} "
            f"threads, {f['coordinator']} window, server in its own process"
        )
        rows.append(
            Row(
                "fetch",
                "fetch throughput, loopback sandbox",
                setting,
                f"{f['share_of_ceiling']:.1%} of what the limit allows ({f['seconds']} s for "
                f"{f['ceiling_seconds']} s; the best safe schedule {f['best_safe_share']:.1%}), {f['http_429']} x 429, "
                f"at most {f['most_in_any_window']} in any window",
                [
                    line(f"fetch.share_of_ceiling.{name}", f["share_of_ceiling"], "ratio", f),
                    line(f"fetch.best_safe_share.{name}", f["best_safe_share"], "ratio", f),
                    line(f"fetch.share_of_best_safe.{name}", f["share_of_best_safe"], "ratio", f),
                    line(f"fetch.http_429.{name}", f["http_429"], "answers", f),
                    line(f"fetch.most_in_any_window.{name}", f["most_in_any_window"], "requests", f),
                ],
            )
        )
    f = bench_client.overhead(500 if quick else 2000)
    rows.append(
        Row(
            "fetch",
            "client overhead",
            f"{f['requests']} sequential requests, canned answer, cache off",
            f"{f['us_per_request']:,} us a request",
            [line("fetch.client_overhead", f["us_per_request"], "us", f)],
        )
    )
    return rows


# -- coordination -----------------------------------------------------------------------------


def coordination(quick: bool) -> list[Row]:
    rows = []
    for f in bench_coordination.figures(quick):
        setting = (
            f"{f['processes']} process(es), {f['plan']}, {f['requests_minimum']} requests, "
            f"{f['limit']}, {f['latency_ms']:.0f} ms"
        )
        result = (
            f"{f['credits_paid']:,} credits for {f['credits_minimum']:,} ({f['credits_paid_twice']:,} paid twice), "
            f"{f['share_of_ceiling']:.0%} of the ceiling, {f['http_429']} x 429, "
            f"at most {f['max_in_window']} in a window"
        )
        name = f"coordination.{f['processes']}_processes.{slug(f['plan'])}"
        rows.append(
            Row(
                "coordination",
                "processes sharing a token",
                setting,
                result,
                [
                    line(f"{name}.credits_paid_twice", f["credits_paid_twice"], "credits", f),
                    line(f"{name}.share_of_ceiling", f["share_of_ceiling"], "ratio", f),
                    line(f"{name}.http_429", f["http_429"], "requests", f),
                ],
            )
        )
    return rows


# -- cache ------------------------------------------------------------------------------------


def cache(quick: bool) -> list[Row]:
    apps, days, repeats, sizes = (50, 30, 1, [200]) if quick else (50, 90, 3, [200, 1000, 3000])
    world = World(0)
    works = bench_cache.workloads(world, apps, days)
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="storeframes-bench-") as tmp:
        root = Path(tmp)
        for work in works:
            figures += bench_cache.cold_and_warm(world, work, root, latency=0.0, repeats=repeats)
        figures += bench_cache.incremental(world, root, apps=apps, first=max(1, days - 30), second=days, latency=0.0)
        figures += bench_cache.index_growth(world, root, sizes, profile=False)
        figures += bench_cache.footprint(root, works)
    value = {f["name"]: f["value"] for f in figures}
    context = {f["name"]: f["context"] for f in figures}
    rows = []

    def of(prefix: str) -> list[Figure]:
        return [{**f, "name": f"cache.{f['name']}"} for f in figures if f["name"].startswith(prefix)]

    for w in works:
        v = {k.removeprefix(f"{w.name}."): x for k, x in value.items() if k.startswith(f"{w.name}.")}
        rows.append(
            Row(
                "cache",
                f"{w.name}, in-process sandbox",
                f"{w.call}, best of {repeats}",
                f"cold {secs(v['cold_seconds'])} ({v['requests_cold']} requests), warm {secs(v['warm_same_client_seconds'])}, "
                f"warm new client {secs(v['warm_new_client_seconds'])} (0 requests); no cache {secs(v['no_cache_seconds'])}",
                of(f"{w.name}."),
            )
        )
    c = context["incremental.seconds"]
    rows.append(
        Row(
            "cache",
            "incremental range",
            c["call"],
            f"{secs(value['incremental.seconds'])}, {value['incremental.requests']} requests of "
            f"{'/'.join(map(str, c['days_per_request']))} new day(s), {value['incremental.credits']} credits "
            f"({value['incremental.credits_saved']} saved)",
            of("incremental."),
        )
    )
    kept = list(dict.fromkeys(f["context"]["entries"] for f in figures if f["name"].startswith("index.")))
    for size, entries in zip(sorted(sizes), kept, strict=True):  # each fill's figures, in the order filled
        at = [f for f in figures if f["name"].startswith("index.") and f["context"]["entries"] == entries]
        v = {f["name"]: f for f in at}
        rows.append(
            Row(
                "cache",
                "index load, new client",
                f"{size:,} one-app calls, {entries:,} cached answers",
                f"first lookup {v['index.first_lookup_ms']['value']:,} ms, then "
                f"{v['index.loaded_lookup_ms']['value']} ms; {mb(v['index.folder_bytes']['value'])} on disk",
                [{**f, "name": f"cache.{f['name']}"} for f in at],
            )
        )
    for w in works:
        a = f"footprint.{w.name}.answer_bytes_per_entry"
        rows.append(
            Row(
                "cache",
                f"disk footprint, {w.name}",
                f"per cached answer ({context[a]['cells_per_entry']} cells)",
                f"{value[a]:,} B of json.zst + {value[f'footprint.{w.name}.index_bytes_per_entry']:,} B of index",
                of(f"footprint.{w.name}."),
            )
        )
    return rows


# -- frames -----------------------------------------------------------------------------------


def frames(quick: bool, pipeline: list[Figure] | None) -> list[Row]:
    """The loopback cold/warm rows, then the rows of the changes pipeline (run here if the flatten group did not)."""
    figures = bench_frames.cold_warm_figures(bench_frames.Sizes.of(quick=quick), latency=0.15)
    rows = []
    for frame in dict.fromkeys(f["frame"] for f in figures):
        of = {f["state"]: f for f in figures if f["frame"] == frame}
        cold, warm, new = of["cold"], of["warm, same client"], of["warm, new client"]
        rows.append(
            Row(
                "frames",
                f"{frame}, loopback sandbox",
                f"{cold['call']}, {cold['latency_ms']:.0f} ms, {cold['limit']}",
                f"cold {secs(cold['seconds'])} ({cold['requests']} requests, limit floor {cold['limit_floor_s']:g} s), "
                f"warm {secs(warm['seconds'])} ({times(warm['x_faster_than_cold'])} faster), "
                f"warm new client {secs(new['seconds'])} ({times(new['x_faster_than_cold'])}); {cold['rows']:,} rows",
                [
                    line(f"frames.{frame}.{slug(state)}_seconds", f["seconds"], "s", without(f, "bench"))
                    for state, f in of.items()
                ],
            )
        )
    if pipeline is None:
        apps, days = (50, 30) if quick else (500, 90)
        pipeline = bench_changes.bench_pipeline(World(0, ios_apps=apps, android_apps=apps), apps, days)
    for f in pipeline:
        rows.append(
            Row(
                "frames",
                f"{f['step']}",
                f"{f['apps']} iphone apps x {f['days']} d, in-process sandbox",
                f"{secs(f['seconds'])}, {f['requests']} requests, {f['rows']:,} rows",
                [line(f"frames.changes_pipeline.{slug(f['step'])}_seconds", f["seconds"], "s", without(f, "bench"))],
            )
        )
    return rows


# -- memory -----------------------------------------------------------------------------------


def memory_row(what: str, setting: str, f: Figure, name: str) -> Row:
    if "peak_bytes" not in f:
        return Row("memory", what, setting, f"skipped: {f.get('memory_skipped')}", [])
    result = f"peak {mb(f['peak_bytes'])}, {f['x_arrow']:.2f}x the frame's {mb(f['arrow_bytes'])}"
    if "rows" in f:
        result += f"; {f['rows']:,} rows"
    if "seconds" in f:
        result += f" in {secs(f['seconds'])}"
    return Row("memory", what, setting, result, [line(f"memory.{name}", f["peak_bytes"], "bytes", without(f, "bench"))])


def search_memory(quick: bool) -> list[Figure]:
    """The peak memory of the search flatteners on the largest history form and the live searches."""
    keywords, days, live = (3, 30, 50) if quick else (10, 365, 500)
    bodies = bench_search.history_bodies("iphone", keywords, days, 0)["by date"]
    context = {"store": "iphone", "keywords": keywords, "days": days, "per_day": bench_search.DEPTH["iphone"]}
    figures = [
        {"bench": "search_history", **context, "form": "by date", **bench_search.memory(bodies, "search_history")}
    ]
    for endpoint, bodies in bench_search.live_bodies(live, 0).items():
        form = "{date, value}" if endpoint == "search" else "ads list"
        per = bench_search.LIVE_DEPTH + (bench_search.ADS if endpoint == "search_ads" else 0)
        figure = {"bench": "search_live", "store": "iphone", "form": form, "keywords": live, "per_keyword": per}
        figures.append(figure | bench_search.memory(bodies, endpoint))
    return figures


def memory(quick: bool, search: list[Figure] | None) -> list[Row]:
    """The largest frames from a warm cache, the largest flattens, and the search flattens' figures."""
    rows = []
    for f in bench_frames.memory_figures(bench_frames.Sizes.of(quick=quick)):
        if f["bench"] == "frame_memory":
            rows.append(memory_row(f"{f['frame']}, warm cache", f["call"], f, f"{f['frame']}.warm_cache"))
        else:
            what = f"flatten {f['table']} ({f['store']})"
            rows.append(memory_row(what, f["call"], f, f"flatten.{f['table']}.{f['store']}"))
    if search is None:  # the flatten group did not run: the largest history and the live searches alone
        search = search_memory(quick)
    for f in search:
        what = f"flatten {f['bench']} ({f['store']}, {f['form']})"
        if f["bench"] == "search_history":
            setting = f"{f['keywords']} keywords x {f['days']} d x {f['per_day']}"
        else:
            setting = f"{f['keywords']} searches x {f['per_keyword']}"
        keep = (
            "store",
            "form",
            "rows",
            "arrow_bytes",
            "peak_bytes",
            "x_arrow",
            "parse_peak_bytes",
            "python_peak_bytes",
        )
        mem = {k: f[k] for k in (*keep, "memory_skipped") if k in f}
        rows.append(memory_row(what, setting, mem, f"flatten.{f['bench']}.{f['store']}.{slug(f['form'])}"))
    return rows


# -- compaction -------------------------------------------------------------------------------


def compaction(quick: bool) -> list[Row]:
    sizes = bench_compaction.QUICK_SIZES if quick else bench_compaction.SIZES
    figures = bench_compaction.run(sizes)
    rows = []
    for size, at in sorted(bench_compaction.by_size(figures).items()):
        setting = f"{size:,} cached answers"
        for state, what in (("small_files", "small files"), ("compacted", "compacted")):
            v = {k.removeprefix(f"{state}."): f["value"] for k, f in at.items() if k.startswith(f"{state}.")}
            rows.append(
                Row(
                    "compaction",
                    f"{what}, new process",
                    setting,
                    f"open {ms(v['open_ms'] / 1000)}, warm call {secs(v['warm_call_seconds'])} "
                    f"(second {secs(v['second_call_seconds'])}, peak {mb(v['warm_peak_rss_bytes'])}); "
                    f"{v['index_files']:,} index + {v['frames_files']:,} frame files, {mb(v['folder_bytes'])}",
                    [f for k, f in at.items() if k.startswith(f"{state}.")],
                )
            )
        c, peak, fill = at["compact_seconds"], at["compact_peak_rss_bytes"], at["fill_seconds"]
        rows.append(
            Row(
                "compaction",
                "storeframes cache compact",
                setting,
                f"{secs(c['value'])}, peak {mb(peak['value'])}: {c['context']['index_files_merged']:,} index and "
                f"{c['context']['frame_files_merged']:,} frame files into {c['context']['files_written']} "
                f"(folder filled in {secs(fill['value'])})",
                [c, peak, fill],
            )
        )
    return rows


# -- track ------------------------------------------------------------------------------------


def track(quick: bool) -> list[Row]:
    """A tracker's plan on an empty cache and on a month of history; a whole run against the rate limit."""
    found = bench_track.figures(quick)
    rows = []
    for f in found[:-1]:
        history = f["history"]
        kept = "empty cache" if history is None else f"{history['days']} days of runs, {history['requests']:,} answers"
        rows.append(
            Row(
                "track",
                f"tracker.plan, {f['case']}",
                f"{f['keywords']} keywords x {f['countries']} countries, {f['apps']} apps; {kept}",
                f"new tracker {secs(f['seconds'])} (first {secs(f['first_seconds'])}), same tracker again "
                f"{secs(f['same_tracker_seconds'])}; {f['requests']} requests planned, {f['cache_files']:,} files",
                [
                    line(f"track.plan_seconds.{slug(f['case'])}", f["seconds"], "s", f),
                    line(f"track.plan_again_seconds.{slug(f['case'])}", f["same_tracker_seconds"], "s", f),
                ],
            )
        )
    r = found[-1]
    rows.append(
        Row(
            "track",
            "tracker.run, loopback sandbox",
            f"{r['requests']} requests, {r['limit']}, {r['latency_ms']:.0f} ms, server in its own process",
            f"{secs(r['seconds'])}: {r['requests_per_second']} a second, {r['rate_x_limit']:.1%} of limit / window, "
            f"{r['share_of_ceiling']:.1%} of the ceiling ({r['ceiling_seconds']} s), {r['http_429']} x 429, "
            f"at most {r['most_in_any_window']} in any window",
            [
                line("track.run.rate_x_limit", r["rate_x_limit"], "ratio", r),
                line("track.run.share_of_ceiling", r["share_of_ceiling"], "ratio", r),
                line("track.run.seconds", r["seconds"], "s", r),
            ],
        )
    )
    return rows


# -- alerts -----------------------------------------------------------------------------------


def alerts(quick: bool) -> list[Row]:
    """A month of a tracker's runs with every alert rule: what a judgement and a digest take."""
    f = bench_alerts.figures(bench_alerts.QUICK if quick else bench_alerts.FULL)
    setting = (
        f"{f['keywords']} keywords x 2 countries, {f['apps']} apps, {f['days']} days of runs; "
        f"{f['events']} events found"
    )
    return [
        Row(
            "alerts",
            "tracker.alerts(day), nothing new",
            setting,
            f"new process {secs(f['judge_new_process_seconds'])}, same tracker {secs(f['judge_same_tracker_seconds'])}"
            f"; a run's judgement at most {secs(f['judge_in_runs_seconds_max'])}",
            [
                line("alerts.judge_new_process_seconds", f["judge_new_process_seconds"], "s", f),
                line("alerts.judge_same_tracker_seconds", f["judge_same_tracker_seconds"], "s", f),
                line("alerts.judge_in_runs_seconds_max", f["judge_in_runs_seconds_max"], "s", f),
            ],
        ),
        Row(
            "alerts",
            "tracker.digest(first, last)",
            setting,
            f"{secs(f['digest_seconds'])}: {f['digest_bytes']:,} bytes, {f['digest_charts']} charts",
            [line("alerts.digest_seconds", f["digest_seconds"], "s", f)],
        ),
    ]


# -- digest -----------------------------------------------------------------------------------


def digest(quick: bool) -> list[Row]:
    """A week's digest of 12 rank charts, rendered again and again in a process of its own."""
    f = bench_digest.figures(quick)
    return [
        Row(
            "digest",
            "render_digest, 12 charts",
            f"{f['charts']} charts of 21 days of ranks, best of {f['rounds']}",
            f"{secs(f['render_seconds'])} ({f['chart_ms']:.1f} ms a chart); a new process's first "
            f"{secs(f['first_seconds'])}",
            [
                line("digest.render_seconds", f["render_seconds"], "s", f),
                line("digest.chart_ms", f["chart_ms"], "ms", f),
                line("digest.first_seconds", f["first_seconds"], "s", f),
            ],
        )
    ]


# -- day --------------------------------------------------------------------------------------


def day(quick: bool) -> list[Row]:
    """A tracker's daily runs at the rate limit for a month (16 days with ``--quick``), on a folder and a bucket."""
    rows = []
    for f in bench_day.run(quick):
        size = f["size"]
        setting = (
            f"{f['store']}, {size['days']} days of 60 live searches, 10 with ads, {size['apps']} apps, every rule; "
            f"{size['limit']} per {size['window']:g} s"
        )
        context = without(f, "days")
        rows.append(
            Row(
                "day",
                "a run's days 14-16 / days 2-4",
                setting,
                f"{times(f['late_x_early'] or 0)} ({secs(f['late_total_s'] or 0)} / {secs(f['early_total_s'] or 0)}); "
                f"after the last answer {secs(f['late_after_s'] or 0)} (at most {secs(f['max_after_s'] or 0)})",
                [
                    line(f"day.late_x_early.{f['store']}", f["late_x_early"], "ratio", context),
                    line(f"day.after_seconds.{f['store']}", f["late_after_s"], "s", context),
                ],
            )
        )
    return rows


# -- lake -------------------------------------------------------------------------------------


def lake(quick: bool) -> list[Row]:
    """A month of a tracker's tables published to a Delta Lake: the first publish, again, and a day later."""
    found = bench_lake.figures(bench_lake.QUICK if quick else bench_lake.FULL)
    rows = []
    for f in found:
        setting = f"{f['keywords']} keywords x 2 countries, {f['apps']} apps, {f['days']} days of runs"
        name = f"lake.{f['case']}.{slug(f['table'])}"
        if f["case"] == "first":
            result = (
                f"{f['rows']:,} rows (+{f['snapshot_rows']:,} snapshot rows) in {secs(f['seconds'])}; "
                f"{f['data_files_written']} data files, {f['log_files_written']} log files"
            )
            lines = [line(f"{name}.seconds", f["seconds"], "s", f)]
        elif f["case"] == "again":
            result = (
                f"new process {secs(f['seconds'])} ({secs(f['new_process_seconds'])} with its start), open cache "
                f"{secs(f['open_cache_seconds'])}; "
                f"{f['data_files_written'] + f['log_files_written']} files written, version {f['version']}"
            )
            lines = [line(f"{name}.seconds", f["seconds"], "s", f),
                     line(f"{name}.open_cache_seconds", f["open_cache_seconds"], "s", f)]  # fmt: skip
        else:
            result = (
                f"{secs(f['seconds'])}: {f['inserted']:,} inserted, {f['updated']:,} updated, {f['deleted']:,} "
                f"deleted, +{f['snapshot_rows']:,} snapshot rows; {f['data_files_written']} data files"
            )
            lines = [line(f"{name}.seconds", f["seconds"], "s", f)]
        rows.append(Row("lake", f"sf.publish {f['table']}, {f['case'].replace('_', ' ')}", setting, result, lines))
    return rows


# -- warm -------------------------------------------------------------------------------------


def warm(quick: bool) -> list[Row]:
    """Warm calls and plans against a filled cache, small files and compacted, each in fresh processes."""
    found = bench_warm.figures(quick)
    by: dict[tuple[str, ...], dict[str, Figure]] = {}
    for f in found:
        _, kind, metric, *where = f["name"].split(".")
        by.setdefault((kind, *where), {})[metric] = f
    rows = []
    for (kind, *_), at in by.items():
        first = next(iter(at.values()))
        c, lines = first["context"], list(at.values())
        state = c["state"].replace("_", " ")
        fresh = f"new client, fresh process, best of {c['repeat']}"
        if kind in ("search", "changes"):
            floor = (
                f"{times(at['x_polars_read']['value'])} polars' read of its rows ({ms(c['polars_read_seconds'])})"
                if kind == "search"
                else f"{times(at['x_parse']['value'])} the orjson parse ({ms(c['parse_seconds'])}), "
                f"{times(at['x_polars_read']['value'])} polars' read of its rows"
            )
            memory = (
                f"peak {mb(c['peak_bytes'])}, {times(at['peak_x_frame']['value'])} the frame's {mb(c['frame_bytes'])}"
                if "peak_x_frame" in at
                else f"memory skipped: {c.get('memory_skipped')}"
            )
            result = (
                f"{secs(c['seconds'])}: {floor}; a second new client {secs(c['again_seconds'])}; {c['rows']:,} rows, "
                f"{c['frame_files']:,} frame + {c['index_files']:,} index files; {memory}"
            )
            rows.append(Row("warm", f"{c['call'].split()[0]}, warm, {state}", f"{c['call']}, {fresh}", result, lines))
        elif kind == "plan":
            setting = f"{c['cells']:,} day cells ({c['call'].removeprefix('plan of ')}), {fresh}"
            result = (
                f"{secs(c['seconds'])} (the same client again {secs(c['again_seconds'])}); "
                f"{c['cached_cells']:,} cells cached, {c['index_files']:,} index files"
            )
            rows.append(Row("warm", f"client.plan(changes_frame), {state}", setting, result, lines))
        else:
            setting = (
                f"{c['cells']:,} cells: {c['keywords']:,} keywords x {c['countries']} countries, {c['apps']:,} apps; "
                f"{c['history_days']} day{'s' if c['history_days'] > 1 else ''} of runs ({c['history_requests']:,} answers), "
                f"fresh process, "
                f"best of {c['repeat']}"
            )
            result = (
                f"new tracker {secs(c['seconds'])}, same tracker again {secs(c['again_seconds'])}; "
                f"{c['requests']:,} requests planned, {c['index_files']:,} index files"
            )
            rows.append(Row("warm", f"tracker.plan, {state}", setting, result, lines))
    return rows


# -- goals ------------------------------------------------------------------------------------

GOALS = (
    ("call.search_history_frame.no_cache_x_parse", "whole history call, no cache / orjson parse", "<=", 2.0),
    ("call.search_history_frame.cold_x_parse", "the same, cold with the cache writing", "<=", 3.0),
    ("call.search_history_frame.warm_x_parse", "the same, warm from the cache", "<=", 1.0),
    ("call.search_history_frame.warm_peak_x_frame", "warm call peak memory / frame size", "<=", 3.0),
    ("shapes.no_cache_x_parse.", "every frame function and shape, no cache / orjson parse", "<=", 2.0),
    ("shapes.cold_x_parse.", "every frame function and shape, cold / orjson parse", "<=", 3.0),
    # of the best schedule that never risks a 429 (window / (window + round trip) of the ceiling): the ceiling
    # itself is out of any safe client's reach at a long latency (0.886 of it at 30 per 3 s and 300 ms)
    ("fetch.share_of_best_safe.", "fetch throughput / the best safe schedule's", ">=", 0.98),
    ("fetch.http_429.", "429 answers while fetching", "<=", 0),
    ("fetch.most_in_any_window.30_per_3s.", "most requests in any 3 s window (limit 30)", "<=", 30),
    ("fetch.most_in_any_window.60_per_10s.", "most requests in any 10 s window (limit 60)", "<=", 60),
    ("call.import_seconds", "import storeframes (s)", "<=", 0.25),
    ("track.plan_seconds.", "tracker.plan of a day, new tracker (s)", "<=", 0.2),
    ("track.plan_again_seconds.", "tracker.plan of a day, same tracker again (s)", "<=", 0.2),
    ("track.run.rate_x_limit", "a tracker run's requests a second / (limit / window)", ">=", 0.95),
    ("day.late_x_early.", "a tracker's run, days 14-16 / days 2-4", "<=", 1.5),
    ("day.after_seconds.folder", "a tracker's run after its last answer, days 14-16, folder (s)", "<=", 1.0),
    ("lake.again.", "sf.publish of a table with nothing new (s)", "<=", 1.0),
    ("warm.search.seconds.compacted.", "warm search_frame, compacted, new client, fresh process (s)", "<=", 0.1),
    ("warm.search.seconds.small_files.", "the same, small files (s)", "<=", 0.3),
    ("warm.search.x_polars_read.", "the same / polars reading its kept rows", "<=", 2.0),
    ("warm.changes.x_parse.", "warm changes_frame / orjson parse of its answers", "<=", 2.0),
    ("warm.search.peak_x_frame.", "warm search_frame peak memory / frame size", "<=", 3.0),
    ("warm.changes.peak_x_frame.", "warm changes_frame peak memory / frame size", "<=", 3.0),
    ("warm.plan.seconds.", "client.plan of the changes call's day cells, new client (s)", "<=", 0.05),
    ("warm.plan.again_seconds.", "the same plan again in the same client (s)", "<=", 0.05),
    ("warm.track_plan.seconds.", "a tracker's plan of a day of many cells, new tracker (s)", "<=", 0.2),
    ("warm.track_plan.again_seconds.", "the same, same tracker again (s)", "<=", 0.2),
)
"""The figures with a performance goal: a line's name (or the start of several), and the goal."""


def goals(rows: Iterable[Row]) -> list[Figure]:
    """Each goal's figures of this run, and whether they meet it (a JSON line each)."""
    found = [figure for r in rows for figure in r.lines]
    out = []
    for name, what, op, goal in GOALS:
        for figure in found:
            if figure["name"] == name or (name.endswith(".") and figure["name"].startswith(name)):
                value = figure["value"]
                met = value <= goal if op == "<=" else value >= goal
                context = {"figure": figure["name"], "what": what, "goal": f"{op} {goal:g}", "met": met}
                out.append(line(f"goal.{figure['name']}", value, figure["unit"], context))
    return out


def print_goals(found: list[Figure]) -> None:
    if not found:
        return
    print()
    width = max(len(f["context"]["what"]) for f in found)
    print(f"{'goal':<{width}}  {'now':>8}  {'aim':>7}  met  figure")
    for f in found:
        c = f["context"]
        print(
            f"{c['what']:<{width}}  {f['value']:>8}  {c['goal']:>7}  {'yes' if c['met'] else 'NO ':<3}  {c['figure']}"
        )


# -- output -----------------------------------------------------------------------------------


def print_table(rows: Iterable[Row], about: Figure, took: dict[str, float], quick: bool) -> None:
    rows = list(rows)
    print(
        f"machine: {about['cpus']} CPUs, {about['machine']}, {about['platform']}, {about['python']}, "
        f"polars {about['polars']}, pandas {about['pandas']}"
    )
    print(f"run: {'--quick' if quick else 'full'}; " + ", ".join(f"{g} {s:.0f} s" for g, s in took.items()))
    heads = ("group", "figure", "setting", "result")
    widths = [max([len(h)] + [len(getattr(r, h)) for r in rows]) for h in heads[:3]]
    print()
    print("  ".join(h.ljust(w) for h, w in zip(heads[:3], widths, strict=True)) + "  result")
    print("  ".join("-" * w for w in widths) + "  " + "-" * 6)
    last = None
    for r in rows:
        group = r.group if r.group != last else ""
        last = r.group
        cells = (group, r.figure, r.setting)
        print("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + "  " + r.result)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: every script's --quick sizes")
    parser.add_argument(
        "--only", default=",".join(GROUPS), help=f"comma-separated groups to run (default all: {','.join(GROUPS)})"
    )
    args = parser.parse_args()
    only = [g.strip() for g in args.only.split(",") if g.strip()]
    if unknown := set(only) - set(GROUPS):
        parser.error(f"unknown group(s) {', '.join(sorted(unknown))}; expected some of {', '.join(GROUPS)}")

    # nothing outside temporary folders: no progress bars, no default cache folder
    os.environ["STOREFRAMES_PROGRESS"] = "0"
    scratch = tempfile.TemporaryDirectory(prefix="storeframes-bench-cache-")
    os.environ["STOREFRAMES_CACHE_DIR"] = scratch.name
    # the sandbox's undocumented change targets are kept and warned about once (see bench_changes.py)
    warnings.filterwarnings("ignore", category=UnknownFieldWarning)

    quick = args.quick
    rows: list[Row] = []
    took: dict[str, float] = {}
    pipeline: list[Figure] | None = None
    search: list[Figure] | None = None

    def timed(group: str, run: Callable[[], list[Row]]) -> None:
        started = time.perf_counter()
        print(f"running {group} ...", file=sys.stderr, flush=True)
        rows.extend(run())
        took[group] = time.perf_counter() - started
        gc.collect()

    with scratch:
        if "call" in only:
            timed("call", lambda: call(quick))
        if "shapes" in only:
            timed("shapes", lambda: shapes(quick))
        if "flatten" in only:

            def flatten_all() -> list[Row]:
                nonlocal pipeline, search
                out = flatten_metadata(quick)
                changes, pipeline = flatten_changes(quick)
                searched, search = flatten_search(quick)
                return out + changes + searched + flatten_metrics(quick)

            timed("flatten", flatten_all)
        if "fetch" in only:
            timed("fetch", lambda: fetch(quick))
        if "coordination" in only:
            timed("coordination", lambda: coordination(quick))
        if "cache" in only:
            timed("cache", lambda: cache(quick))
        if "frames" in only:
            timed("frames", lambda: frames(quick, pipeline))
        if "memory" in only:
            timed("memory", lambda: memory(quick, search))
        if "track" in only:
            timed("track", lambda: track(quick))
        if "alerts" in only:
            timed("alerts", lambda: alerts(quick))
        if "digest" in only:
            timed("digest", lambda: digest(quick))
        if "day" in only:
            timed("day", lambda: day(quick))
        if "lake" in only:
            timed("lake", lambda: lake(quick))
        if "compaction" in only:
            timed("compaction", lambda: compaction(quick))
        if "warm" in only:
            timed("warm", lambda: warm(quick))

    about = machine()
    print_table(rows, about, took, quick)
    reached = goals(rows)
    print_goals(reached)
    print()
    print(json.dumps(line("machine", about["cpus"], "CPUs", without(about, "bench"))))
    print(json.dumps(line("run.seconds", round(sum(took.values()), 1), "s", {"quick": quick, **took})))
    for r in rows:
        for figure in r.lines:
            print(json.dumps(figure))
    for figure in reached:
        print(json.dumps(figure))


if __name__ == "__main__":
    main()
