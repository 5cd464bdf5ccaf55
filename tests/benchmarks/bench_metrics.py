"""Metrics and benchmarks flattening benchmark: current metrics of 1,000 apps in 10 countries, and
the conversion benchmarks of every category, channel and type in every country the sandbox knows.

Not collected by the test run. Run::

    .venv/bin/python tests/benchmarks/bench_metrics.py [--apps 1000] [--countries 10] [--repeat 5]
    .venv/bin/python tests/benchmarks/bench_metrics.py --quick    # 100 apps, 3 countries, 5 for benchmarks, 1 run

The metrics endpoint answers current values only (one value per app and metric, the day
before "today"), not daily series, so its largest pull is many apps in many countries: per
store, ``--apps`` apps x 4 metrics (downloads, revenues, app-power, ratings) in each of the
``--countries`` largest markets, 5 apps per answer as the service takes them. Apps the sandbox
does not sell in a country are left out there (about 3 %). The benchmarks endpoint answers one
record per store category for one country, channel and type, so its largest pull is every
channel of the store x free and paid x ``--bench-countries`` countries (44 categories a record
list on iphone, 49 on android).

The answers (setup, not timed) are the bodies the sandbox service sends (envelope included),
built by :class:`storeframes.sandbox.SandboxService` with the rate limit lifted, for the fixed
"today" 2026-11-20. Timed, best of ``--repeat`` runs (``time.perf_counter``):

* parse: ``json.loads`` of every body;
* flatten: ``batch_metrics`` / ``batch_benchmarks`` over every parsed answer in one call, with
  each answer's keys (country, language, device, the request) taken from its echo, as a frame
  function does it; "end to end" is parse + flatten;
* pandas: ``pandas.json_normalize`` giving the same rows, the way a user would: metrics as one
  record per app and metric (``{**member, "app_id", "metric", "country"}``, built inside the
  timing; the ratings breakdown spread into ``breakdown.1``-like columns), benchmarks as one
  record per answer (``{country, device, channel, type, "records": [...]}``) normalized with
  ``record_path="records"`` and the four keys as ``meta``. Untyped: no key columns, dates left as text, no
  ``power`` named ``app-power``, no integer star counts, no NaN made null. The row counts are
  checked against the flattener's in setup.

Prints the table, then one JSON line per figure.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any

import pandas as pd
import polars as pl
from _flatten_timing import Figure, best, json_lines, machine, parse, timing_figure

from storeframes import catalog
from storeframes.flatteners import Keys, batch_benchmarks, batch_metrics
from storeframes.sandbox import API_PREFIX, SANDBOX_KEY, SandboxService
from storeframes.sandbox.world import World, store_of

TODAY = date(2026, 11, 20)  # the sandbox's fixed "today" (tests/conftest.py SANDBOX_TODAY)
FETCHED_AT = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)
APPS_PER_ANSWER = 5  # the service answers at most 5 apps per metrics request
METRICS = ("downloads", "revenues", "app-power", "ratings")
STORES = {"iphone": "ios", "android": "android"}  # device -> store of World.app_ids
# markets by size first (the sandbox's market table), then every other country it knows a language of
COUNTRIES = ("us", "cn", "jp", "in", "gb", "de", "br", "fr", "kr", "ca", "ru", "mx", "it", "es", "au",
             "nz", "ie", "sg", "za", "at", "ch", "be", "ar", "co", "cl", "pt", "tw", "hk", "nl", "se",
             "no", "dk", "fi", "pl", "tr", "id", "th", "vn", "sa", "ae", "il")  # fmt: skip
HEADERS = {"x-service-key": SANDBOX_KEY}


# -- setup (not timed) ----------------------------------------------------------------------


def body(service: SandboxService, endpoint: str, params: dict[str, str]) -> bytes:
    """The body the sandbox service sends for one request (it must succeed)."""
    reply = service.handle("GET", API_PREFIX + catalog.ENDPOINTS[endpoint].path, params.items(), HEADERS)
    if reply.status != 200:
        raise RuntimeError(f"{endpoint} {params}: the sandbox answered {reply.status}: {reply.body[:200]!r}")
    return reply.body


def metrics_bodies(service: SandboxService, device: str, apps: int, countries: int) -> list[bytes]:
    """``apps`` apps x 4 metrics in each of the first ``countries`` countries, 5 apps per answer."""
    world, store = service.world, store_of(device)
    bodies = []
    for country in COUNTRIES[:countries]:
        ids = [a for a in world.app_ids(store)[:apps] if world.is_available(a, store, country)]
        for first in range(0, len(ids), APPS_PER_ANSWER):
            params = {
                "apps": ",".join(ids[first : first + APPS_PER_ANSWER]),
                "metrics": ",".join(METRICS),
                "country": country,
                "device": device,
            }
            bodies.append(body(service, "metrics", params))
    return bodies


def benchmarks_bodies(service: SandboxService, device: str, countries: int) -> list[bytes]:
    """Every channel of the store x free and paid x the first ``countries`` countries, one answer each."""
    return [
        body(service, "benchmarks", {"country": country, "device": device, "type": kind, "channel": channel})
        for country in COUNTRIES[:countries]
        for channel in catalog.CHANNELS[device]
        for kind in catalog.BENCHMARK_TYPES
    ]


def answers_of(parsed: list[Any]) -> list[tuple[Any, Keys]]:
    """``(result, keys)`` of each parsed body, the keys from the request it echoes (as the client does)."""
    out = []
    for parsed_body in parsed:
        echo = parsed_body["metadata"]["request"]["params"]
        request = {name: value for name, value in echo.items() if type(value) is str}
        out.append((parsed_body["result"], Keys.of(request, echo, FETCHED_AT)))
    return out


# -- the timed work -------------------------------------------------------------------------


def flatten_metrics(answers: list[tuple[Any, Keys]]) -> pl.DataFrame:
    return batch_metrics(answers)[0]


def flatten_benchmarks(answers: list[tuple[Any, Keys]]) -> pl.DataFrame:
    return batch_benchmarks(answers)[0]


def normalize_metrics(parsed: list[Any]) -> pd.DataFrame:
    """``pandas.json_normalize`` of one record per app and metric (untyped)."""
    records = [
        {
            **member,
            "app_id": app_id,
            "metric": metric,
            "country": parsed_body["metadata"]["request"]["params"]["country"],
        }
        for parsed_body in parsed
        for app_id, metrics in parsed_body["result"].items()
        for metric, member in metrics.items()
    ]
    return pd.json_normalize(records)


def normalize_benchmarks(parsed: list[Any]) -> pd.DataFrame:
    """``pandas.json_normalize`` of the category records of each answer, with the request's keys (untyped)."""
    keys = ("country", "device", "channel", "type")
    records = [
        {
            **{k: parsed_body["metadata"]["request"]["params"][k] for k in keys},
            "records": parsed_body["result"]["category_benchmarks"],
        }
        for parsed_body in parsed
    ]
    return pd.json_normalize(records, record_path="records", meta=list(keys))


# -- the figures ------------------------------------------------------------------------------


def timings(
    bench: str,
    context: Figure,
    bodies: list[bytes],
    flattener: Callable[[list[tuple[Any, Keys]]], pl.DataFrame],
    normalize: Callable[[list[Any]], pd.DataFrame],
    repeat: int,
) -> Figure:
    """Parse, flatten, end to end and pandas of one case."""
    parse_s, parsed = best(lambda: parse(bodies), repeat)
    answers = answers_of(parsed)
    # one untimed run of each on every answer: warms polars and pandas up, and checks the rows
    rows = flattener(answers).height
    pandas_rows = len(normalize(parsed))
    if pandas_rows != rows:
        raise AssertionError(f"{bench} {context}: pandas gave {pandas_rows} rows, storeframes {rows}")
    flatten_s, frame = best(lambda: flattener(answers), repeat)
    e2e_s, _ = best(lambda: flattener(answers_of(parse(bodies))), repeat)
    pandas_s, _ = best(lambda: normalize(parsed), repeat)
    times = {"parse_s": parse_s, "flatten_s": flatten_s, "e2e_s": e2e_s, "pandas_s": pandas_s}
    return timing_figure(bench, context, bodies, frame.height, repeat, **times) | {"pandas_rows": pandas_rows}


def bench_metrics(service: SandboxService, device: str, apps: int, countries: int, repeat: int) -> Figure:
    bodies = metrics_bodies(service, device, apps, countries)
    context = {
        "store": device,
        "table": "metrics",
        "apps": min(apps, len(service.world.app_ids(STORES[device]))),
        "metrics": len(METRICS),
        "countries": countries,
    }
    return timings("metrics_flatten", context, bodies, flatten_metrics, normalize_metrics, repeat)


def bench_benchmarks(service: SandboxService, device: str, countries: int, repeat: int) -> Figure:
    bodies = benchmarks_bodies(service, device, countries)
    context = {
        "store": device,
        "table": "benchmarks",
        "channels": len(catalog.CHANNELS[device]),
        "types": len(catalog.BENCHMARK_TYPES),
        "countries": countries,
    }
    return timings("benchmarks_flatten", context, bodies, flatten_benchmarks, normalize_benchmarks, repeat)


def run(apps: int, countries: int, bench_countries: int, repeat: int, seed: int = 0) -> list[Figure]:
    """Every figure of this script: metrics then benchmarks, iphone then android."""
    world = World(seed, ios_apps=max(apps, 12), android_apps=max(apps, 12))
    service = SandboxService(today=TODAY, rate_limit=(10**9, 1.0), world=world)
    figures = [bench_metrics(service, device, apps, countries, repeat) for device in STORES]
    figures += [bench_benchmarks(service, device, bench_countries, repeat) for device in STORES]
    return figures


# -- output -------------------------------------------------------------------------------


def times(x: float) -> str:
    return f"{x:.1f}x" if x >= 1 else f"{x:.2f}x"


def setting(f: Figure) -> str:
    if f["table"] == "metrics":
        return f"{f['apps']} apps x {f['metrics']} metrics x {f['countries']} countries"
    return f"{f['channels']} channels x {f['types']} types x {f['countries']} countries"


def print_table(figures: list[Figure], about: Figure) -> None:
    print(
        f"machine: {about['machine']}, {about['platform']}, {about['python']}, polars {about['polars']}, "
        f"pandas {about['pandas']}, {about['cpus']} CPUs"
    )
    print(f"seconds: best of {figures[0]['repeat']} run(s); bodies as the sandbox service sends them")
    print()
    print(
        f"{'store':<8} {'table':<11} {'setting':<40} {'answers':>8} {'rows':>7} {'JSON MB':>8} {'parse ms':>9} "
        f"{'flatten ms':>11} {'rows/s':>10} {'x parse':>8} {'e2e ms':>8} {'pandas ms':>10} {'x pandas':>9}"
    )
    for f in figures:
        print(
            f"{f['store']:<8} {f['table']:<11} {setting(f):<40} {f['answers']:>8} {f['rows']:>7} "
            f"{f['json_bytes'] / 1e6:>8.2f} {f['parse_s'] * 1000:>9.1f} {f['flatten_s'] * 1000:>11.1f} "
            f"{f['rows_per_s']:>10,} {f['x_parse']:>8.2f} {f['end_to_end_s'] * 1000:>8.1f} "
            f"{f['pandas_s'] * 1000:>10.1f} {times(f['x_pandas']):>9}"
        )
    print()
    print(
        "x parse: flatten time over json.loads time of the bodies; e2e: json.loads + flatten; "
        "x pandas: pandas.json_normalize time (untyped, no key columns) over flatten time"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--apps", type=int, default=None, help="apps per store (default 1000; 100 with --quick)")
    parser.add_argument(
        "--countries", type=int, default=None, help="countries of the metrics (default 10; 3 with --quick)"
    )
    parser.add_argument(
        "--bench-countries",
        type=int,
        default=None,
        help=f"countries of the benchmarks (default {len(COUNTRIES)}, all; 5 with --quick)",
    )
    parser.add_argument(
        "--repeat", type=int, default=None, help="runs of each figure, best kept (default 5; 1 with --quick)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the sandbox world (default 0)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 100 apps, 3 and 5 countries, 1 run")
    args = parser.parse_args()
    apps = args.apps if args.apps is not None else (100 if args.quick else 1000)
    countries = args.countries if args.countries is not None else (3 if args.quick else 10)
    bench_countries = (
        args.bench_countries if args.bench_countries is not None else (5 if args.quick else len(COUNTRIES))
    )
    repeat = args.repeat if args.repeat is not None else (1 if args.quick else 5)
    if apps < 1 or repeat < 1 or not 1 <= countries <= len(COUNTRIES) or not 1 <= bench_countries <= len(COUNTRIES):
        parser.error(f"--apps and --repeat must be at least 1, the countries between 1 and {len(COUNTRIES)}")

    figures = run(apps, countries, bench_countries, repeat, args.seed)
    about = machine()
    print_table(figures, about)
    print()
    json_lines(about, figures)


if __name__ == "__main__":
    main()
