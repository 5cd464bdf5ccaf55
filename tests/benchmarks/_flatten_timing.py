"""What the benchmarks share: best-of-N timing, parsing, one batch flatten, the peak resident size, the machine.

Imported by the scripts beside it (run as ``python tests/benchmarks/bench_*.py``, so this
folder is on the import path).
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl

from storeframes.flatteners import Answers, Flat, Keys

COUNTRY = "us"
LANGUAGE = "en"
Flattener = Callable[[Answers], Flat]
Figure = dict[str, Any]


def parse(bodies: list[bytes]) -> list[Any]:
    return [json.loads(body) for body in bodies]


def flatten(flattener: Flattener, results: list[Any], device: str) -> pl.DataFrame:
    """Every answer in one batch, as a frame function flattens the answers of a call."""
    keys = Keys(country=COUNTRY, language=LANGUAGE, device=device, fetched_at=datetime.now(UTC))
    return flattener([(result, keys) for result in results])[0]


def best(run: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The shortest of ``repeat`` runs, in seconds, and the last run's value."""
    times = []
    value = None
    for _ in range(repeat):
        started = time.perf_counter()
        value = run()
        times.append(time.perf_counter() - started)
    return min(times), value


def timing_figure(
    bench: str,
    context: Figure,
    bodies: list[bytes],
    rows: int,
    repeat: int,
    *,
    parse_s: float,
    flatten_s: float,
    e2e_s: float,
    pandas_s: float,
) -> Figure:
    """One flatten figure: the answers' size, rows, and the parse, flatten, end-to-end and pandas times."""
    return {
        "bench": bench,
        **context,
        "answers": len(bodies),
        "json_bytes": sum(map(len, bodies)),
        "rows": rows,
        "repeat": repeat,
        "parse_s": round(parse_s, 6),
        "flatten_s": round(flatten_s, 6),
        "rows_per_s": round(rows / flatten_s),
        "x_parse": round(flatten_s / parse_s, 3),
        "end_to_end_s": round(e2e_s, 6),
        "pandas_s": round(pandas_s, 6),
        "x_pandas": round(pandas_s / flatten_s, 3),
    }


def proc_status(field: str) -> int:
    """A field of ``/proc/self/status`` (``VmRSS``, ``VmHWM`` ...), in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(field)


def reset_peak() -> None:
    """Reset this process's peak resident size (``VmHWM``) to its resident size now."""
    with open("/proc/self/clear_refs", "w") as f:  # 5: reset the peak resident size
        f.write("5")


def machine() -> Figure:
    return {
        "bench": "machine",
        "machine": platform.machine(),
        "platform": platform.platform(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "polars": pl.__version__,
        "pandas": pd.__version__,
        "cpus": os.cpu_count(),
    }


def json_lines(about: Figure, figures: list[Figure]) -> None:
    """The machine and then each figure as one JSON line, for machines to read."""
    print(json.dumps(about))
    for figure in figures:
        print(json.dumps(figure))


def table_figures(
    bench: str,
    context: Figure,
    tables: dict[str, Flattener],
    results: list[Any],
    device: str,
    parse_s: float,
    repeat: int,
    *,
    normalize: Callable[[str], Any],
    skip: Callable[[str], str | None],
    more_pandas: Callable[[str, float], Figure] | None = None,
) -> list[Figure]:
    """One figure per table (flatten beside parse and beside ``normalize(table)``), then "all tables".

    ``skip(table)`` says why pandas has nothing to normalize for a table (or None);
    ``more_pandas(table, flatten_s)`` adds further pandas figures to a table's figure.
    """
    figures: list[Figure] = []
    flatten_sum = pandas_sum = flatten_sum_with_pandas = 0.0
    pandas_tables = []
    for table, flattener in tables.items():
        flatten_s, frame = best(lambda flattener=flattener: flatten(flattener, results, device), repeat)
        rows = frame.height
        flatten_sum += flatten_s
        figure: Figure = {
            "bench": bench,
            **context,
            "table": table,
            "rows": rows,
            "flatten_s": round(flatten_s, 6),
            "rows_per_s": round(rows / flatten_s),
            "parse_s": round(parse_s, 6),
            "x_parse": round(flatten_s / parse_s, 3),
        }
        reason = skip(table)
        if reason is None:
            pandas_s, pandas_frame = best(lambda table=table: normalize(table), repeat)
            figure |= {
                "pandas_s": round(pandas_s, 6),
                "x_pandas": round(pandas_s / flatten_s, 3),
                "pandas_rows": len(pandas_frame),
            }
            if more_pandas is not None:
                figure |= more_pandas(table, flatten_s)
            pandas_sum += pandas_s
            flatten_sum_with_pandas += flatten_s
            pandas_tables.append(table)
        else:
            figure |= {"pandas_s": None, "x_pandas": None, "pandas_skipped": reason}
        figures.append(figure)

    def flatten_all() -> int:
        return sum(flatten(flattener, results, device).height for flattener in tables.values())

    all_s, rows = best(flatten_all, repeat)
    figures.append(
        {
            "bench": bench,
            **context,
            "table": "all tables",
            "rows": rows,
            "flatten_s": round(all_s, 6),
            "rows_per_s": round(rows / all_s),
            "parse_s": round(parse_s, 6),
            "x_parse": round(all_s / parse_s, 3),
            "sum_of_table_bests_s": round(flatten_sum, 6),
            # pandas over the tables it applies to, against the flatteners of those same tables
            "pandas_s": round(pandas_sum, 6),
            "x_pandas": round(pandas_sum / flatten_sum_with_pandas, 3),
            "pandas_tables": pandas_tables,
        }
    )
    return figures
