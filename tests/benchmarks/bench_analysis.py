"""What the questions of storeframes.analysis cost on a team's history: share of voice, opportunities, anomalies.

Not collected by the test run. Run::

    .venv/bin/python tests/benchmarks/bench_analysis.py           # 20 and 200 keywords x 90 days x 250 results
    .venv/bin/python tests/benchmarks/bench_analysis.py --quick   # 20 keywords only

A search history is generated (each keyword ranks 250 of 2,000 apps a day, a day missed now and then), as
``search_history_frame`` returns it, then each whole call is timed, best of three: ``share_of_voice`` (CTR
weights), ``keyword_opportunities`` of one app against five competitors (with a with-ads frame of two ads a
keyword and day, and a changes frame of the six apps), ``rank_history`` + ``rank_anomalies`` of the six
apps (with the changes), and ``standings`` + ``standings_table`` of the six apps (the frame, then its HTML and
Markdown, a sparkline of 31 days a row). Prints a table, then one JSON line per figure (``{"name", "value", "unit", "context"}``).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import polars as pl

import storeframes as sf

START = date(2026, 8, 1)
DAYS = 90
RESULTS = 250
APPS = [str(1_000_000_000 + n) for n in range(2_000)]
WATCHED = APPS[:6]


def history(keywords: int, seed: int = 0) -> pl.DataFrame:
    """``keywords`` x 90 days x 250 results, about 2 % of the days missed, ranks drifting day by day."""
    rng = random.Random(seed)
    frames = []
    for k in range(keywords):
        pool = rng.sample(APPS[:600], 300) if k % 2 else rng.sample(APPS, 300)
        base = {a: i + rng.random() * 20 for i, a in enumerate(pool)}
        for d in range(DAYS):
            if rng.random() < 0.02:
                continue
            order = sorted(pool, key=lambda a: base[a] + rng.gauss(0, 6))[:RESULTS]
            frames.append(
                pl.DataFrame(
                    {
                        "keyword": f"keyword {k}",
                        "date": START + timedelta(d),
                        "rank": list(range(1, RESULTS + 1)),
                        "app_id": order,
                        "source": "history",
                        "country": "us",
                        "language": "en",
                        "device": "iphone",
                    }
                )
            )
    return pl.concat(frames)


def ads_of(frame: pl.DataFrame) -> pl.DataFrame:
    """Two ads a keyword and day (apps of its results), as a search with ads gives them."""
    ads = frame.filter(pl.col("rank").is_in([7, 40])).with_columns(is_ad=pl.lit(True))
    return pl.concat([ads, frame.filter(pl.col("rank") <= 20).with_columns(is_ad=pl.lit(False))])


def changes_of(apps: list[str]) -> pl.DataFrame:
    """A change of each app every 6 days."""
    rows = [(a, START + timedelta(d), "title") for i, a in enumerate(apps) for d in range(i, DAYS, 6)]
    return pl.DataFrame(rows, schema={"app_id": pl.String, "date": pl.Date, "target": pl.String}, orient="row")


def _standings(frame: pl.DataFrame) -> pl.DataFrame:
    """The standings of the six apps on the last day and their table (HTML with a sparkline a row, Markdown)."""
    standing = sf.standings(frame, WATCHED)
    table = sf.standings_table(standing)
    assert table.rows == standing.height and table.html and table.markdown
    return standing


def best(call: Callable[[], Any], runs: int = 3) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(runs):
        start = time.perf_counter()
        out = call()
        times.append(time.perf_counter() - start)
    return min(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="20 keywords only")
    sizes = [20] if parser.parse_args().quick else [20, 200]
    lines = []
    print(f"{'call':<40} {'keywords':>8} {'rows in':>10} {'rows out':>9} {'seconds':>8}")
    for size in sizes:
        frame = history(size)
        ads, changes = ads_of(frame), changes_of(WATCHED)
        calls: dict[str, Callable[[], Any]] = {
            "share_of_voice": lambda frame=frame: sf.share_of_voice(frame),
            "keyword_opportunities": lambda frame=frame, ads=ads, changes=changes: sf.keyword_opportunities(
                frame, WATCHED[0], WATCHED[1:], ads=ads, changes=changes
            ),
            "rank_history + rank_anomalies": lambda frame=frame, changes=changes: sf.rank_anomalies(
                sf.rank_history(frame, WATCHED), changes=changes
            ),
            "standings + standings_table": lambda frame=frame: _standings(frame),
        }
        for name, call in calls.items():
            seconds, out = best(call)
            print(f"{name:<40} {size:>8} {frame.height:>10,} {out.height:>9,} {seconds:>8.3f}")
            context = {"keywords": size, "days": DAYS, "rows_in": frame.height, "rows_out": out.height}
            lines.append(
                {
                    "name": f"analysis.{name.replace(' + ', '_and_')}.{size}",
                    "value": round(seconds, 4),
                    "unit": "s",
                    "context": context,
                }
            )
    for one in lines:
        print(json.dumps(one))


if __name__ == "__main__":
    main()
