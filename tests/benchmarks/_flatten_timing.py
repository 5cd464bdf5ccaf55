"""What the flatten benchmarks share: best-of-N timing, parsing, one batch flatten, the machine.

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
