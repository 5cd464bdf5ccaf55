"""Keyword search flattening benchmark: a year of search history for 10 keywords, and 500 live searches.

Not collected by the test run. Run::

    .venv/bin/python tests/benchmarks/bench_search.py [--keywords 10] [--days 365] [--repeat 5]
    .venv/bin/python tests/benchmarks/bench_search.py --quick    # 3 keywords, 30 days, 50 live searches, 1 run

The history is the largest answer users pull: 10 keywords over 365 days at 500 results a
day (iphone) is 1,825,000 rows. The aims: the flatten within 3x the time of parsing the
JSON alone, at least 20x faster than ``pandas.json_normalize``, and a peak memory under 4x
the size of the resulting Arrow table.

The answers (setup, not timed). The client asks the history per keyword and run of days, so
a 365-day call is one request per keyword: one answer per keyword, each holding the 365
days 2025-11-20..2026-11-19 (all days recorded, none missed, the full 1.8
million rows), fetched on 2026-12-01 (well after the last day, so every day's ``source``
is ``history``). Each answer is the full body the service sends, the envelope
``{"result": ..., "metadata": {"request": {...}, "response": null}}`` serialized compactly
to bytes. The sandbox world is too slow to rank 3,650 days of 500 results, so the rankings
come from a seeded ``random.Random``: each keyword draws 2,000 apps from a pool of 5,000
ids, ranks 500 of them on the first day, then drifts from day to day (about 60 neighbour
swaps and 5 apps entering in place of one that drops out). Two stores:

* iphone: 500 results a day, numeric-text ids of 9-10 digits as the sandbox's;
* android: 250 results a day, package names (``com.brightleaf.budgetplanner3``).

Three forms of the same answers, each its own set of bodies (the flattener takes all):

* ``by date``: ``result`` is ``{"2025-11-20": [ids ...], ...}`` (the sandbox's form);
* ``date list``: ``result`` is ``[{"date": "2025-11-20", "value": [ids ...]}, ...]``;
* ``keyword``: the by-date object under a key named after the keyword, ``{"photo editor": {...}}``.

Timed, best of ``--repeat`` runs (``time.perf_counter``):

* parse: ``json.loads`` of every body;
* flatten: ``batch_search_history([(result, keys), ...])`` over every parsed answer in one
  call, as a frame function does it, with ``keys`` the request's (keyword, country, device,
  dates); "end to end" is parse + flatten;
* pandas: ``pandas.json_normalize`` giving the same rows (keyword, date, rank, app_id),
  done the most favourable honest way: one record per day (``{"keyword", "date", "app_id":
  [ids]}``, built inside the timing; for the date-list form the days are normalized straight
  from each answer with ``record_path=["days", "value"]``), then
  ``json_normalize(records, record_path="app_id", meta=["keyword", "date"])`` and the rank
  from ``groupby(["keyword", "date"]).cumcount() + 1``. pandas is slow, so it is timed best
  of ``min(--repeat, 3)`` runs. Its frame is untyped: dates stay text (pandas' ``str``
  dtype, as are keyword and app_id; Arrow-backed in pandas 3, so pandas too copies the text
  out of Python), no key columns (country, language, device, fetched_at, source), no id or
  cap checks. Its rows are checked against the flattener's on the first answer (setup).

Peak memory, in a fresh subprocess per store and form (so earlier allocations do not count):
the child reads the bodies, parses them, warms the flattener up on two days, records its
resident size (``VmRSS`` of ``/proc/self/status``), resets the peak (writing 5 to
``/proc/self/clear_refs`` resets ``VmHWM``), flattens, and takes the peak as ``VmHWM`` minus
the resident size before; that is set beside ``frame.estimated_size()``, the size of the
resulting Arrow table (the frame itself is part of the peak). Where ``/proc`` is missing or
the peak cannot be reset the figure is skipped with a note. Then, the frame dropped, it
flattens again under ``tracemalloc``: the peak of Python-side allocations alone.

Live searches: ``--live`` keywords (500) of 250 results, one answer each, on iphone, through
``batch_search``: the ``{"date", "value"}`` form (``search``) and the ads list form
(``search_ads``: 2 ads then 250 organic ``{"application_id", "is_ad"}`` objects); flatten
beside parse and beside ``json_normalize``.

Prints the tables, then one JSON line per figure.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import subprocess
import sys
import tempfile
import tracemalloc
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl
from _flatten_timing import (
    COUNTRY,
    LANGUAGE,
    Figure,
    best,
    json_lines,
    machine,
    parse,
    proc_status,
    reset_peak,
    timing_figure,
)

from storeframes.flatteners import Keys, batch_search, batch_search_history

END = date(2026, 11, 19)  # the day before the sandbox's fixed "today" (tests/conftest.py SANDBOX_TODAY)
TODAY = END + timedelta(days=1)
FETCHED_AT = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)  # the history: well after its last day
LIVE_FETCHED_AT = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)
PREFIX = "/api/public/store"
HISTORY_PATH = "/keywords/search-results/history.json"
LIVE_PATHS = {"search": "/keywords/search-results/current", "search_ads": "/keywords/search-results/ads/current"}
DEPTH = {"iphone": 500, "android": 250}  # results a day in a history (the documented caps)
LIVE_DEPTH = 250
ADS = 2
POOL = 5_000  # ids of a store
KEYWORD_POOL = 2_000  # of which a keyword's rankings draw
SWAPS_PER_500 = 60  # neighbour swaps a day, per 500 ranks
ENTRANTS_PER_500 = 5  # apps entering the ranking a day, per 500 ranks
FORMS = ("by date", "date list", "keyword")
PANDAS_REPEAT = 3
AIM_X_PARSE = 3.0
AIM_X_PANDAS = 20.0
AIM_X_ARROW = 4.0
KEYWORDS = (
    "photo editor",
    "budget planner",
    "puzzle games",
    "meditation",
    "running tracker",
    "recipes",
    "vpn",
    "habit tracker",
    "pdf scanner",
    "language learning",
)
_WORDS = ("photo", "budget", "puzzle", "calm", "run", "recipe", "shield", "habit", "scan", "lingo", "snap", "note",
          "focus", "sleep", "fit", "cook", "safe", "daily", "doc", "word", "pixel", "money", "brain", "zen", "step",
          "chef", "guard", "track", "paper", "speak")  # fmt: skip
_DEVELOPERS = ("brightleaf", "moonforge", "polarpeak", "tinyharbor", "bluefox", "wildharbor", "neonowl", "quietpine",
               "sunbyte", "ironkite")  # fmt: skip
_TLDS = ("com", "com", "com", "app", "net", "io")


# -- setup (not timed) ----------------------------------------------------------------------


def id_pool(device: str, rng: random.Random) -> list[str]:
    """``POOL`` distinct app ids of a store: 9-10 digits on iphone, package names on android."""
    ids: set[str] = set()
    while len(ids) < POOL:
        if device == "iphone":
            ids.add(str(rng.randrange(280_000_000, 6_800_000_000)))
        else:
            name = f"{rng.choice(_WORDS)}{rng.choice(_WORDS)}{rng.choice(('', '', 'pro', 'lite', str(rng.randrange(100))))}"
            ids.add(f"{rng.choice(_TLDS)}.{rng.choice(_DEVELOPERS)}.{name}")
    return sorted(ids)


def rankings(pool: list[str], rng: random.Random, days: int, depth: int) -> list[list[str]]:
    """A keyword's ranking on each of ``days`` days, drifting from one day to the next."""
    drawn = rng.sample(pool, KEYWORD_POOL)
    ranking, bench = drawn[:depth], drawn[depth:]
    swaps = max(1, SWAPS_PER_500 * depth // 500)
    entrants = max(1, ENTRANTS_PER_500 * depth // 500)
    out = []
    for _ in range(days):
        for _ in range(swaps):  # apps trading places with a neighbour a few ranks away
            i = rng.randrange(depth)
            j = min(depth - 1, i + rng.randint(1, 5))
            ranking[i], ranking[j] = ranking[j], ranking[i]
        for _ in range(entrants):  # an app enters, mostly low in the ranking; the one there drops out
            at = min(depth - 1, int(depth * rng.random() ** 0.3))
            b = rng.randrange(len(bench))
            ranking[at], bench[b] = bench[b], ranking[at]
        out.append(ranking.copy())
    return out


def envelope(path: str, params: dict[str, str], result: Any, cost: int) -> bytes:
    """A body as the service sends it (the sandbox's envelope), compact JSON bytes."""
    metadata = {
        "request": {"path": PREFIX + path, "params": params, "cost": cost, "max_credit_cost": cost, "status": 200},
        "response": None,
    }
    return json.dumps({"result": result, "metadata": metadata}, separators=(",", ":")).encode()


def history_params(keyword: str, device: str, start: date) -> dict[str, str]:
    return {
        "keyword": keyword,
        "country": COUNTRY,
        "language": LANGUAGE,
        "device": device,
        "start_date": start.isoformat(),
        "end_date": END.isoformat(),
    }


def history_bodies(device: str, keywords: int, days: int, seed: int) -> dict[str, list[bytes]]:
    """Each form's bodies: one answer per keyword holding every day of the range."""
    rng = random.Random(f"{seed}:{device}")
    pool = id_pool(device, rng)
    start = END - timedelta(days=days - 1)
    dates = [(start + timedelta(days=d)).isoformat() for d in range(days)]
    bodies: dict[str, list[bytes]] = {form: [] for form in FORMS}
    for keyword in KEYWORDS[:keywords] if keywords <= len(KEYWORDS) else [f"keyword {k}" for k in range(keywords)]:
        by_date = dict(zip(dates, rankings(pool, rng, days, DEPTH[device]), strict=True))
        params = history_params(keyword, device, start)
        cost = 1 + 10 * days
        bodies["by date"].append(envelope(HISTORY_PATH, params, by_date, cost))
        listed = [{"date": day, "value": ids} for day, ids in by_date.items()]
        bodies["date list"].append(envelope(HISTORY_PATH, params, listed, cost))
        bodies["keyword"].append(envelope(HISTORY_PATH, params, {keyword: by_date}, cost))
    return bodies


def live_bodies(keywords: int, seed: int) -> dict[str, list[bytes]]:
    """One live answer per keyword, iphone: the ``{"date", "value"}`` form and the ads list form."""
    rng = random.Random(f"{seed}:live")
    pool = id_pool("iphone", rng)
    bodies: dict[str, list[bytes]] = {"search": [], "search_ads": []}
    for k in range(keywords):
        keyword = f"keyword {k}"
        ids = rng.sample(pool, LIVE_DEPTH)
        params = {"keyword": keyword, "country": COUNTRY, "language": LANGUAGE, "device": "iphone"}
        result: Any = {"date": TODAY.isoformat(), "value": ids}
        bodies["search"].append(envelope(LIVE_PATHS["search"], params, result, 10))
        advertisers = rng.sample(ids[:20], 1) + rng.sample(pool, 1)  # an advertiser may also rank organically
        result = [{"application_id": a, "is_ad": True} for a in advertisers] + [
            {"application_id": a, "is_ad": False} for a in ids
        ]
        bodies["search_ads"].append(envelope(LIVE_PATHS["search_ads"], params, result, 20))
    return bodies


def answers_of(parsed: list[Any], fetched_at: datetime) -> list[tuple[Any, Keys]]:
    """``(result, keys)`` of each parsed body, the keys from the request it echoes (as the client does)."""
    out = []
    for body in parsed:
        params = body["metadata"]["request"]["params"]
        keys = Keys(
            country=params["country"],
            language=params["language"],
            device=params["device"],
            fetched_at=fetched_at,
            request=params,
        )
        out.append((body["result"], keys))
    return out


# -- the timed work -------------------------------------------------------------------------


def flatten_history(answers: list[tuple[Any, Keys]]) -> pl.DataFrame:
    return batch_search_history(answers)[0]


def flatten_live(endpoint: str) -> Callable[[list[tuple[Any, Keys]]], pl.DataFrame]:
    return lambda answers: batch_search(answers, endpoint=endpoint)[0]


def ranked(records: list[dict[str, Any]], record_path: Any, meta: list[Any]) -> pd.DataFrame:
    """``json_normalize`` of one record per ranked list, then the rank within each list."""
    frame = pd.json_normalize(records, record_path=record_path, meta=meta)
    frame.columns = ["app_id", "keyword", "date"]
    frame["rank"] = frame.groupby(["keyword", "date"], sort=False).cumcount() + 1
    return frame[["keyword", "date", "rank", "app_id"]]


def normalize_history(form: str, answers: list[tuple[Any, Keys]]) -> pd.DataFrame:
    """``pandas.json_normalize`` of a history, the same rows as the flattener (untyped)."""
    if form == "date list":
        records = [{"keyword": keys.request["keyword"], "days": result} for result, keys in answers]
        return ranked(records, ["days", "value"], ["keyword", ["days", "date"]])
    records = []
    for result, keys in answers:
        keyword = keys.request["keyword"]
        days = result[keyword] if form == "keyword" else result
        records += [{"keyword": keyword, "date": day, "app_id": ids} for day, ids in days.items()]
    return ranked(records, "app_id", ["keyword", "date"])


def normalize_live(endpoint: str, answers: list[tuple[Any, Keys]]) -> pd.DataFrame:
    """``pandas.json_normalize`` of live searches: rank over the whole list, organic rank over organic results."""
    if endpoint == "search":
        records = [{**result, "keyword": keys.request["keyword"]} for result, keys in answers]
        frame = pd.json_normalize(records, record_path="value", meta=["keyword", "date"])
        frame.columns = ["app_id", "keyword", "date"]
        frame["rank"] = frame.groupby("keyword", sort=False).cumcount() + 1
        return frame
    records = [{"keyword": keys.request["keyword"], "results": result} for result, keys in answers]
    frame = pd.json_normalize(records, record_path="results", meta=["keyword"])
    frame = frame.rename(columns={"application_id": "app_id"})
    frame["date"] = LIVE_FETCHED_AT.date().isoformat()
    frame["rank"] = frame.groupby("keyword", sort=False).cumcount() + 1
    organic = ~frame["is_ad"]
    frame.loc[organic, "organic_rank"] = frame[organic].groupby("keyword", sort=False).cumcount() + 1
    return frame


def same_rows(frame: pl.DataFrame, pandas_frame: pd.DataFrame) -> bool:
    """Whether pandas gave the flattener's (keyword, date, rank, app_id) rows."""
    ours = frame.select("keyword", pl.col("date").cast(pl.String), "rank", "app_id").rows()
    theirs = list(pandas_frame[["keyword", "date", "rank", "app_id"]].itertuples(index=False, name=None))
    return ours == theirs


# -- peak memory, in a child process ----------------------------------------------------------


def warm_up(result: Any, keys: Keys, endpoint: str) -> Any:
    """A small answer of the same form: two days of a history, or the live answer itself."""
    if endpoint != "search_history":
        return result
    keyword = keys.request["keyword"]
    if type(result) is dict and keyword in result:
        return {keyword: dict(list(result[keyword].items())[:2])}
    return dict(list(result.items())[:2]) if type(result) is dict else result[:2]


def child(file: str, endpoint: str) -> None:
    """The memory figure of one case: prints one JSON object (run as ``--child FILE ENDPOINT``)."""
    bodies = Path(file).read_bytes().split(b"\n")
    flattener, fetched_at = (
        (flatten_history, FETCHED_AT) if endpoint == "search_history" else (flatten_live(endpoint), LIVE_FETCHED_AT)
    )
    out: Figure = {}
    try:
        proc_status("VmHWM")
        reset_peak()
        proc = True
    except (OSError, KeyError) as e:  # no /proc, or the peak cannot be reset
        proc = False
        out["memory_skipped"] = f"no resettable peak resident size ({type(e).__name__}: {e})"
    if proc:
        gc.collect()
        rss = proc_status("VmRSS")
        reset_peak()
        parsed = parse(bodies)
        out["parse_peak_bytes"] = proc_status("VmHWM") - rss
    else:
        parsed = parse(bodies)
    answers = answers_of(parsed, fetched_at)
    flattener([(warm_up(answers[0][0], answers[0][1], endpoint), answers[0][1])])
    gc.collect()
    if proc:
        rss = proc_status("VmRSS")
        reset_peak()
    frame = flattener(answers)
    if proc:
        out["peak_bytes"] = proc_status("VmHWM") - rss
    out["rows"] = frame.height
    out["arrow_bytes"] = frame.estimated_size()
    del frame
    gc.collect()
    tracemalloc.start()
    out["python_rows"] = flattener(answers).height
    out["python_peak_bytes"] = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(json.dumps(out))


def memory(bodies: list[bytes], endpoint: str) -> Figure:
    """The child's memory figure of flattening these bodies (or a note why there is none)."""
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / "bodies.jsonl"
        file.write_bytes(b"\n".join(bodies))  # compact JSON bodies hold no raw newline
        done = subprocess.run(
            [sys.executable, __file__, "--child", str(file), endpoint], capture_output=True, text=True, check=False
        )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return {"memory_skipped": f"the child process failed ({last})"}
    got = json.loads(done.stdout.strip().splitlines()[-1])
    figure: Figure = {"arrow_bytes": got["arrow_bytes"], "python_peak_bytes": got["python_peak_bytes"]}
    figure["x_arrow_python"] = round(got["python_peak_bytes"] / got["arrow_bytes"], 3)
    if "peak_bytes" in got:
        figure |= {
            "peak_bytes": got["peak_bytes"],
            "x_arrow": round(got["peak_bytes"] / got["arrow_bytes"], 3),
            "parse_peak_bytes": got["parse_peak_bytes"],
        }
    else:
        figure["memory_skipped"] = got["memory_skipped"]
    return figure


# -- the figures ------------------------------------------------------------------------------


def figure_of(
    bench: str,
    context: Figure,
    bodies: list[bytes],
    flattener: Callable[[list[tuple[Any, Keys]]], pl.DataFrame],
    normalize: Callable[[list[tuple[Any, Keys]]], pd.DataFrame],
    fetched_at: datetime,
    endpoint: str,
    repeat: int,
    *,
    with_memory: bool,
) -> Figure:
    """Parse, flatten, end to end and pandas of one case, with its memory figure."""
    figure = timings(bench, context, bodies, flattener, normalize, fetched_at, repeat)
    gc.collect()  # the parsed answers and the frames are gone
    figure |= memory(bodies, endpoint) if with_memory else {"memory_skipped": "--no-memory"}
    return figure


def timings(
    bench: str,
    context: Figure,
    bodies: list[bytes],
    flattener: Callable[[list[tuple[Any, Keys]]], pl.DataFrame],
    normalize: Callable[[list[tuple[Any, Keys]]], pd.DataFrame],
    fetched_at: datetime,
    repeat: int,
) -> Figure:
    parse_s, parsed = best(lambda: parse(bodies), repeat)
    answers = answers_of(parsed, fetched_at)
    # warm-up and check on the first answer (untimed): pandas gives the flattener's rows
    first = flattener(answers[:1])
    checked = same_rows(first, normalize(answers[:1]))
    e2e_s, _ = best(lambda: flattener(answers_of(parse(bodies), fetched_at)), repeat)
    flatten_s, frame = best(lambda: flattener(answers), repeat)
    pandas_repeat = min(repeat, PANDAS_REPEAT)
    pandas_s, pandas_frame = best(lambda: normalize(answers), pandas_repeat)
    times = {"parse_s": parse_s, "flatten_s": flatten_s, "e2e_s": e2e_s, "pandas_s": pandas_s}
    figure: Figure = timing_figure(bench, context, bodies, frame.height, repeat, **times) | {
        "pandas_repeat": pandas_repeat,
        "pandas_rows": len(pandas_frame),
        "pandas_same_rows_first_answer": checked,
    }
    return figure


def bench_history(device: str, keywords: int, days: int, seed: int, repeat: int, *, with_memory: bool) -> list[Figure]:
    all_bodies = history_bodies(device, keywords, days, seed)
    figures = []
    for form, bodies in all_bodies.items():
        context = {"store": device, "form": form, "keywords": keywords, "days": days, "per_day": DEPTH[device]}
        figures.append(
            figure_of(
                "search_history",
                context,
                bodies,
                flatten_history,
                lambda answers, form=form: normalize_history(form, answers),
                FETCHED_AT,
                "search_history",
                repeat,
                with_memory=with_memory,
            )
        )
    return figures


def bench_live(keywords: int, seed: int, repeat: int, *, with_memory: bool) -> list[Figure]:
    figures = []
    for endpoint, bodies in live_bodies(keywords, seed).items():
        context = {
            "store": "iphone",
            "form": "{date, value}" if endpoint == "search" else "ads list",
            "endpoint": endpoint,
            "keywords": keywords,
            "per_keyword": LIVE_DEPTH + (ADS if endpoint == "search_ads" else 0),
        }
        figures.append(
            figure_of(
                "search_live",
                context,
                bodies,
                flatten_live(endpoint),
                lambda answers, endpoint=endpoint: normalize_live(endpoint, answers),
                LIVE_FETCHED_AT,
                endpoint,
                repeat,
                with_memory=with_memory,
            )
        )
    return figures


# -- output -------------------------------------------------------------------------------


def times(x: float) -> str:
    return f"{x:.1f}x" if x >= 1 else f"{x:.2f}x"


def mb(n: float) -> str:
    return f"{n / 1e6:.1f}"


def print_tables(figures: list[Figure], about: Figure) -> None:
    print(
        f"machine: {about['machine']}, {about['platform']}, {about['python']}, polars {about['polars']}, "
        f"pandas {about['pandas']}, {about['cpus']} CPUs"
    )
    history = [f for f in figures if f["bench"] == "search_history"]
    live = [f for f in figures if f["bench"] == "search_live"]
    notes: list[str] = []
    if history:
        h = history[0]
        print(
            f"search history: {h['keywords']} keywords x {h['days']} days, one answer per keyword, "
            f"{DEPTH['iphone']} results a day on iphone, {DEPTH['android']} on android; "
            f"seconds: best of {h['repeat']} run(s), pandas best of {h['pandas_repeat']}"
        )
    if live:
        v = live[0]
        print(f"live search: {v['keywords']} keywords, one answer each, iphone, {LIVE_DEPTH} organic results")
    print()
    print(
        f"{'store':<8} {'form':<18} {'rows':>9} {'JSON MB':>8} {'parse ms':>9} {'flatten ms':>11} {'rows/s':>11} "
        f"{'x parse':>8} {'e2e ms':>8} {'pandas ms':>10} {'x pandas':>9}  "
        f"aims (<= {AIM_X_PARSE:g}x parse, >= {AIM_X_PANDAS:g}x pandas)"
    )
    for f in figures:
        missed = []
        if f["x_parse"] > AIM_X_PARSE:
            missed.append(f"{f['x_parse']:.1f}x parse")
        if f["x_pandas"] < AIM_X_PANDAS:
            missed.append(f"only {times(f['x_pandas'])} pandas")
        name = f["form"] if f["bench"] == "search_history" else f"live {f['form']}"
        print(
            f"{f['store']:<8} {name:<18} {f['rows']:>9,} {mb(f['json_bytes']):>8} {f['parse_s'] * 1000:>9.1f} "
            f"{f['flatten_s'] * 1000:>11.1f} {f['rows_per_s']:>11,} {f['x_parse']:>8.2f} "
            f"{f['end_to_end_s'] * 1000:>8.1f} {f['pandas_s'] * 1000:>10.1f} {times(f['x_pandas']):>9}  "
            f"{'MISSED: ' + ', '.join(missed) if missed else 'ok'}"
        )
        if f["pandas_rows"] != f["rows"] or not f["pandas_same_rows_first_answer"]:
            notes.append(f"{f['store']} {name}: pandas rows differ ({f['pandas_rows']:,} against {f['rows']:,})")
    with_memory = [f for f in figures if "arrow_bytes" in f]
    skipped = {f["memory_skipped"] for f in figures if "arrow_bytes" not in f}
    if skipped and not with_memory:
        notes.append(f"no memory figures ({', '.join(sorted(skipped))})")
    if with_memory:
        print()
        print(
            f"{'store':<8} {'form':<18} {'arrow MB':>9} {'peak MB':>8} {'x arrow':>8} {'py peak MB':>11} "
            f"{'x arrow':>8} {'parse peak MB':>14}  aim (peak <= {AIM_X_ARROW:g}x arrow)"
        )
    for f in figures if with_memory else []:
        name = f["form"] if f["bench"] == "search_history" else f"live {f['form']}"
        if "arrow_bytes" not in f:
            notes.append(f"{f['store']} {name}: no memory figure ({f['memory_skipped']})")
            continue
        if "peak_bytes" in f:
            peak, x_arrow, parse_peak = mb(f["peak_bytes"]), f"{f['x_arrow']:.2f}", mb(f["parse_peak_bytes"])
            verdict = "ok" if f["x_arrow"] <= AIM_X_ARROW else f"MISSED: {f['x_arrow']:.1f}x arrow"
        else:
            peak = x_arrow = parse_peak = "n/a"
            verdict = "n/a"
            notes.append(f"{f['store']} {name}: no resident-size peak ({f['memory_skipped']})")
        print(
            f"{f['store']:<8} {name:<18} {mb(f['arrow_bytes']):>9} {peak:>8} {x_arrow:>8} "
            f"{mb(f['python_peak_bytes']):>11} {f['x_arrow_python']:>8.2f} {parse_peak:>14}  {verdict}"
        )
    print()
    print(
        "x parse: flatten time over json.loads time of the bodies; e2e: json.loads + flatten; x pandas (the "
        "flatten only, both from parsed answers; bench_call.py's x_faster_than_user_json_normalize is the whole "
        "call from bytes): pandas.json_normalize (+ groupby cumcount for the rank, untyped: dates left as text, "
        "no key columns) time over flatten time"
    )
    print(
        "peak: resident-size peak of the flatten (VmHWM after, less VmRSS before) in a fresh process, the frame "
        "included; arrow: frame.estimated_size(); py peak: tracemalloc's peak of Python allocations in the "
        "flatten; parse peak: resident-size peak of json.loads; MB = 10^6 bytes"
    )
    for note in notes:
        print(f"note: {note}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keywords", type=int, default=None, help="history keywords (default 10; 3 with --quick)")
    parser.add_argument(
        "--days", type=int, default=None, help="history days per keyword (default 365; 30 with --quick)"
    )
    parser.add_argument("--live", type=int, default=None, help="live search keywords (default 500; 50 with --quick)")
    parser.add_argument(
        "--repeat", type=int, default=None, help="runs of each figure, best kept (default 5; 1 with --quick)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated rankings (default 0)")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak memory figures (child processes)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 3 keywords, 30 days, 50 live, 1 run")
    parser.add_argument("--child", nargs=2, metavar=("FILE", "ENDPOINT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    keywords = args.keywords if args.keywords is not None else (3 if args.quick else 10)
    days = args.days if args.days is not None else (30 if args.quick else 365)
    live = args.live if args.live is not None else (50 if args.quick else 500)
    repeat = args.repeat if args.repeat is not None else (1 if args.quick else 5)
    if keywords < 1 or days < 1 or live < 1 or repeat < 1:
        parser.error("--keywords, --days, --live and --repeat must be at least 1")

    figures: list[Figure] = []
    for device in DEPTH:
        figures += bench_history(device, keywords, days, args.seed, repeat, with_memory=not args.no_memory)
    figures += bench_live(live, args.seed, repeat, with_memory=not args.no_memory)

    about = machine()
    print_tables(figures, about)
    print()
    json_lines(about, figures)


if __name__ == "__main__":
    main()
