"""Change-history flattening benchmark: the four change tables of 500 sandbox apps per store.

Not collected by the test run. Run::

    .venv/bin/python tests/benchmarks/bench_changes.py [--apps 500] [--days 90] [--repeat 5]
    .venv/bin/python tests/benchmarks/bench_changes.py --quick    # 50 apps, 30 days, 1 run: a smoke run

For each store (iphone, android) the sandbox world builds the change history of ``--apps``
apps over the ``--days`` days ending the day before the sandbox's fixed "today" (2026-11-20,
as in ``tests/conftest.py``), in ``us``/``en``, grouped 5 apps per answer as the service
returns them (``result`` is ``{app_id: {"changes": [records...]}}``), and each answer's
``result`` is serialized to JSON bytes. That is setup and is not timed; so is one run of
every flattener and every pandas equivalent on all the answers, which checks that they
give the same number of rows. Then, best of ``--repeat`` runs (``time.perf_counter``):

* the JSON parse alone: ``json.loads`` of every answer's bytes;
* per table, the storeframes batch flattener over every parsed answer in one walk, as a
  frame function does it for the answers it fetched (``batch_changes([(result, keys), ...])``),
  and all four flatteners over every answer, timed together ("all tables");
* per table, ``pandas.json_normalize`` of the same parsed answers, done the way a user would
  (the lists of dicts are built inside the timing):

  - changes: ``json_normalize(apps, record_path="changes", meta=["app_id"])`` where
    ``apps`` is every app's ``{"changes": [...], "app_id": ...}``; one row per record.
    Object values (icon, privacy_info) are spread into ``old_value.url``-like columns,
    arrays (screenshots) and mixed scalars are left as Python objects in ``old_value``
    and ``new_value``;
  - version_changes: the records whose ``target`` is ``"version"``, with ``app_id``
    added, in one ``json_normalize`` call;
  - screenshot_changes: the records whose ``target`` is ``"screenshots"``, with
    ``app_id`` added, normalized twice, ``record_path="old_value"`` and
    ``record_path="new_value"`` with ``meta=["app_id", "date", "version", "is_ab_test"]``,
    each given a ``side`` column, then ``pd.concat``; one row per screenshot on each side;
  - privacy_changes (iphone only: android has no privacy labels, so there is no pandas
    figure for it): the records whose ``target`` is ``"privacy_info"``, with ``app_id``
    added, in one ``json_normalize`` call (a column per side and section holding the list
    of data types), a record number added, then ``melt`` to one row per record, side and
    section, ``explode`` of the lists to one row per data type, rows without a data type
    dropped, the section taken from the column name, and ``drop_duplicates`` on record,
    section and data type so a type on both sides is one row, as in the flattener.

  The pandas frames have the same rows as the flatteners' (checked in setup) but are
  untyped: no key columns (country, language, device, fetched_at), dates left as text (no
  Date dtype), values not made text (integers, objects and arrays left as Python objects
  or spread into columns), no related version told from ``""``/"No related version", no
  typed size or icon URL columns, no screenshot positions and no added/removed/kept status
  computed, no checks of the values' shapes. The speed-up over pandas is the pandas time
  over the flatten time.

The sandbox also sends change targets the documentation does not list (title, subtitle,
short_description); the flatteners keep them in the changes table and warn once with an
``UnknownFieldWarning``, which this script silences.

Then the frame pipeline on the iphone store, against the in-process sandbox (no network
time, the rate limit lifted, a fresh cache folder): ``changes_frame`` of the same apps and
days cold (every request sent) and warm (read from the kept Parquet frames); the three
other change tables right after, built from the cached raw answers with no request; and
the range widened by 30 days, which sends only the new days. One run each (a second cold
run would be warm).

Prints the tables, then one JSON line per figure.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import warnings
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

import pandas as pd
import polars as pl
from _flatten_timing import (
    COUNTRY,
    LANGUAGE,
    Figure,
    Flattener,
    best,
    flatten,
    json_lines,
    machine,
    parse,
    table_figures,
)

import storeframes as sf
from storeframes.flatteners import UnknownFieldWarning
from storeframes.flatteners.changes import (
    batch_changes,
    batch_privacy_changes,
    batch_screenshot_changes,
    batch_version_changes,
)
from storeframes.sandbox.world import World

TODAY = date(2026, 11, 20)  # the sandbox's fixed "today" (tests/conftest.py SANDBOX_TODAY)
END = TODAY - timedelta(days=1)  # the service's default change range ends yesterday
APPS_PER_ANSWER = 5  # the service answers at most 5 apps per changes request
STORES = {"iphone": "ios", "android": "android"}  # device -> store of World.app_ids

TABLES: dict[str, Flattener] = {
    "changes": batch_changes,
    "version_changes": batch_version_changes,
    "screenshot_changes": batch_screenshot_changes,
    "privacy_changes": batch_privacy_changes,
}
META = ["app_id", "date", "version", "is_ab_test"]


# -- setup (not timed) ----------------------------------------------------------------------


def answers(world: World, device: str, apps: int, start: date, end: date) -> list[bytes]:
    """The JSON bytes of each answer's ``result``, 5 apps per answer."""
    ids = world.app_ids(STORES[device])[:apps]
    bodies = []
    for first in range(0, len(ids), APPS_PER_ANSWER):
        result = {
            app_id: {
                "changes": world.changes(
                    app_id, device=device, country=COUNTRY, language=LANGUAGE, start=start, end=end
                )
            }
            for app_id in ids[first : first + APPS_PER_ANSWER]
        }
        bodies.append(json.dumps(result).encode())
    return bodies


# -- the timed work -------------------------------------------------------------------------


def records_of(results: list[Any], target: str) -> list[dict[str, Any]]:
    """The change records of one target, each with its ``app_id`` added."""
    return [
        {**record, "app_id": app_id}
        for result in results
        for app_id, resource in result.items()
        for record in resource["changes"]
        if record["target"] == target
    ]


def normalize(table: str, results: list[Any]) -> pd.DataFrame:
    """``pandas.json_normalize`` of the same table, the way a user would write it (see the docstring)."""
    if table == "changes":
        apps = [{**resource, "app_id": app_id} for result in results for app_id, resource in result.items()]
        return pd.json_normalize(apps, record_path="changes", meta=["app_id"])
    if table == "version_changes":
        return pd.json_normalize(records_of(results, "version"))
    if table == "screenshot_changes":
        records = records_of(results, "screenshots")
        sides = [
            pd.json_normalize(records, record_path=f"{side}_value", meta=META).assign(side=side)
            for side in ("old", "new")
        ]
        return pd.concat(sides, ignore_index=True)
    if table == "privacy_changes":
        wide = pd.json_normalize(records_of(results, "privacy_info"))
        wide["record"] = range(len(wide))
        lists = [c for c in wide.columns if c.startswith(("old_value.", "new_value."))]
        long = wide.melt(id_vars=["record", *META], value_vars=lists, var_name="column", value_name="data_type")
        long = long.explode("data_type").dropna(subset=["data_type"])
        long["section"] = long["column"].str.split(".", n=1).str[1]
        return long.drop_duplicates(["record", "section", "data_type"]).drop(columns="column")
    raise ValueError(table)


def pandas_skip(table: str, results: list[Any]) -> str | None:
    """Why there is no pandas figure for the table on this store (None: there is one)."""
    if table == "privacy_changes" and not records_of(results, "privacy_info"):
        return "no privacy_info changes"
    return None


# -- one store ----------------------------------------------------------------------------


def bench_store(world: World, device: str, apps: int, days: int, repeat: int) -> list[Figure]:
    start = END - timedelta(days=days - 1)
    bodies = answers(world, device, apps, start, END)
    n_apps = min(apps, len(world.app_ids(STORES[device])))
    context = {
        "store": device,
        "apps": n_apps,
        "days": days,
        "start": start.isoformat(),
        "end": END.isoformat(),
        "answers": len(bodies),
        "repeat": repeat,
    }
    parse_s, results = best(lambda: parse(bodies), repeat)
    records = sum(len(resource["changes"]) for result in results for resource in result.values())
    figures: list[Figure] = [
        {
            "bench": "changes_parse",
            **context,
            "records": records,
            "json_bytes": sum(len(b) for b in bodies),
            "parse_s": round(parse_s, 6),
        }
    ]

    # one run of each code path on every answer, not timed: it warms up polars and pandas and
    # checks that pandas gives the flattener's rows
    skips = {table: pandas_skip(table, results) for table in TABLES}
    for table, flattener in TABLES.items():
        rows = flatten(flattener, results, device).height
        if skips[table] is None:
            pandas_rows = len(normalize(table, results))
            assert pandas_rows == rows, f"{device} {table}: pandas gave {pandas_rows} rows, storeframes {rows}"

    return figures + table_figures(
        "changes_flatten",
        context,
        TABLES,
        results,
        device,
        parse_s,
        repeat,
        normalize=lambda table: normalize(table, results),
        skip=lambda table: skips[table],
    )


# -- output -------------------------------------------------------------------------------


def times(x: float) -> str:
    return f"{x:.1f}x" if x >= 1 else f"{x:.2f}x"


def print_table(figures: list[Figure], about: Figure) -> None:
    print(
        f"machine: {about['machine']}, {about['platform']}, {about['python']}, polars {about['polars']}, "
        f"pandas {about['pandas']}, {about['cpus']} CPUs"
    )
    parses = [f for f in figures if f["bench"] == "changes_parse"]
    first = parses[0]
    print(
        f"change history of {first['apps']} apps per store over {first['days']} days "
        f"({first['start']}..{first['end']}), {APPS_PER_ANSWER} apps per answer; "
        f"seconds: best of {first['repeat']} run(s)"
    )
    for p in parses:
        print(
            f"  {p['store']}: {p['answers']} answers, {p['records']:,} change records, "
            f"{p['json_bytes'] / 1e6:.2f} MB of JSON, json.loads {p['parse_s'] * 1000:.1f} ms"
        )
    print()
    print(
        f"{'store':<8} {'table':<19} {'rows':>7} {'flatten ms':>11} {'rows/s':>11} {'x parse':>8} "
        f"{'pandas ms':>10} {'x faster':>9}"
    )
    notes = []
    for f in figures:
        if f["bench"] == "changes_parse":
            print(f"{f['store']:<8} {'(json.loads)':<19} {'':>7} {f['parse_s'] * 1000:>11.1f} {'':>11} {1:>8.2f}")
            continue
        if f["x_pandas"] is None:
            pandas_ms, x_pandas = "n/a", "n/a"
            notes.append(f"{f['store']} {f['table']}: no pandas figure ({f['pandas_skipped']})")
        else:
            pandas_ms, x_pandas = f"{f['pandas_s'] * 1000:.1f}", times(f["x_pandas"])
        if f["table"] == "all tables":
            notes.append(
                f"{f['store']} all tables: pandas ms is the sum over {', '.join(f['pandas_tables'])}; "
                f"x faster against the flatteners of those tables (sum of their best times)"
            )
        print(
            f"{f['store']:<8} {f['table']:<19} {f['rows']:>7} {f['flatten_s'] * 1000:>11.1f} {f['rows_per_s']:>11,} "
            f"{f['x_parse']:>8.2f} {pandas_ms:>10} {x_pandas:>9}"
        )
    print()
    print("x parse: flatten time over json.loads time; x faster: pandas.json_normalize time over flatten time")
    for note in notes:
        print(f"note: {note}")


PIPELINE_TABLES = ("privacy_changes_frame", "screenshot_changes_frame", "version_changes_frame")


def bench_pipeline(world: World, apps: int, days: int) -> list[Figure]:
    """changes_frame cold, warm, the sibling tables from the same answers, and a widened range (iphone)."""
    end = TODAY - timedelta(days=1)
    start = end - timedelta(days=days - 1)
    ids = [a for a in world.app_ids("ios") if a not in world.UNAVAILABLE_IN_US][:apps]
    span = {"start": start, "end": end}
    figures: list[Figure] = []
    with tempfile.TemporaryDirectory() as folder:
        client = sf.sandbox.client(today=TODAY, cache_dir=folder, rate_limit=(100_000, 1.0), world=world)

        def step(name: str, run: Callable[[], pl.DataFrame]) -> None:
            sent, spent = len(client.sandbox_service.arrivals), client.spent
            started = time.perf_counter()
            rows = run().height
            figures.append(
                {
                    "bench": "changes_pipeline",
                    "step": name,
                    "apps": len(ids),
                    "days": days,
                    "rows": rows,
                    "seconds": round(time.perf_counter() - started, 4),
                    "requests": len(client.sandbox_service.arrivals) - sent,
                    "credits": client.spent - spent,
                }
            )

        with client:
            step("changes_frame, cold", lambda: client.changes_frame(ids, **span))
            step("changes_frame, warm", lambda: client.changes_frame(ids, **span))
            for name in PIPELINE_TABLES:
                step(f"{name}, from the cached answers", lambda name=name: getattr(client, name)(ids, **span))
            wider = {"start": start - timedelta(days=30), "end": end}
            step("changes_frame, 30 more days", lambda: client.changes_frame(ids, **wider))
    return figures


def print_pipeline(figures: list[Figure]) -> None:
    first = figures[0]
    print(f"frame pipeline, iphone, {first['apps']} apps x {first['days']} days, in-process sandbox, one run each")
    print(f"{'step':<52} {'rows':>7} {'seconds':>8} {'requests':>9} {'credits':>8}")
    for f in figures:
        print(f"{f['step']:<52} {f['rows']:>7} {f['seconds']:>8.3f} {f['requests']:>9} {f['credits']:>8}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--apps", type=int, default=None, help="apps per store (default 500; 50 with --quick)")
    parser.add_argument("--days", type=int, default=None, help="days of change history (default 90; 30 with --quick)")
    parser.add_argument(
        "--repeat", type=int, default=None, help="runs of each figure, best kept (default 5; 1 with --quick)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the sandbox world (default 0)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 50 apps, 30 days, 1 run")
    args = parser.parse_args()
    apps = args.apps if args.apps is not None else (50 if args.quick else 500)
    days = args.days if args.days is not None else (30 if args.quick else 90)
    repeat = args.repeat if args.repeat is not None else (1 if args.quick else 5)
    if apps < 12 or days < 1 or repeat < 1:
        parser.error(
            "--apps must be at least 12 (the sandbox world's minimum), --days at least 1 and --repeat at least 1"
        )

    # the sandbox's undocumented targets (title, subtitle, short_description) are kept and warned about once
    warnings.filterwarnings("ignore", category=UnknownFieldWarning)
    world = World(args.seed, ios_apps=apps, android_apps=apps)
    figures: list[Figure] = []
    for device in STORES:
        figures += bench_store(world, device, apps, days, repeat)

    pipeline = bench_pipeline(world, apps, days)

    about = machine()
    print_table(figures, about)
    print()
    print_pipeline(pipeline)
    print()
    json_lines(about, figures + pipeline)


if __name__ == "__main__":
    main()
