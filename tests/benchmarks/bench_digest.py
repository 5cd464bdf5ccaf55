"""Digest benchmark: what a digest's rank charts cost, beside another checkout's digest of the same events.

Not collected by the test run. Run::

    .venv/bin/python tests/benchmarks/bench_digest.py                              # this checkout alone
    .venv/bin/python tests/benchmarks/bench_digest.py --base /tmp/storeframes-old  # and beside an older checkout
    .venv/bin/python tests/benchmarks/bench_digest.py --quick                      # fewer rounds
    .venv/bin/python tests/benchmarks/bench_digest.py --charts 3                   # a digest of 3 charts

The digest: ``render_digest`` of a week (2026-11-14 to 2026-11-20) of a tracker's events: 14 rank series
(7 apps x 2 keywords, in the US and Great Britain) with a rank drop or a top-N event, of which the
digest charts 12 (:data:`~storeframes.track.digest.MAX_CHARTS`), over 21 days of ranks with days without
data (grey bands), days not fetched (hatched), days not ranked (the bottom line) and listing changes
(dashed lines with their labels); 40 events in all.

Each checkout renders it in a process of its own (``PYTHONPATH`` its folder), the processes kept
alive and taking turns (one render each, then the other, ``--rounds`` times), so both see the same
load; a figure is the best of its rounds. ``first_seconds`` is the first digest of each process
(matplotlib imported, its fonts loaded), as a tracker's run in a new process pays it.

The figures: ``digest.render_seconds`` (this checkout's best render), ``digest.chart_ms`` (the same
per chart), ``digest.first_seconds``; with ``--base``, ``digest.base_x_render`` (the base's best over
this checkout's: how many times faster) and the base's own figures in its context. Prints a table, then
one JSON line per figure.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TREE = HERE.parent.parent
START, END = date(2026, 11, 14), date(2026, 11, 20)
FIRST = END - timedelta(days=20)  # 21 days of ranks
APPS = [str(1_400_000_000 + 7_919 * n) for n in range(7)]
KEYWORDS = ["photo editor", "collage maker"]
PLACES = [("us", "en", "iphone"), ("gb", "en", "iphone")]
ROUNDS, QUICK_ROUNDS = 12, 4


def digest_input() -> dict[str, Any]:
    """The events, ranks and names of the digest (the same in every checkout: a seeded draw)."""
    import polars as pl

    from storeframes.cache import EVENT_SCHEMA
    from storeframes.schemas import RANK_HISTORY
    from storeframes.track.digest import Spend

    draw = random.Random(54)
    events: list[dict[str, Any]] = []

    def event(rule: str, day: date, detail: str, **values: Any) -> None:
        row: dict[str, Any] = dict.fromkeys(EVENT_SCHEMA.names())
        seen = datetime(day.year, day.month, day.day, 6, tzinfo=UTC)
        row.update(event_id=f"{rule}-{len(events)}", tracker="bench", alert=rule, rule=rule, day=day, detail=detail)
        row.update(first_seen=seen, notified_at=seen, notified_to=["ops"], **values)
        events.append(row)

    ranks: list[dict[str, Any]] = []
    for k, keyword in enumerate(KEYWORDS):
        no_data = {FIRST + timedelta(days=d) for d in ((4, 5) if k == 0 else (11,))}
        for a, app in enumerate(APPS):
            country, language, device = PLACES[(a + k) % 2]
            place = {"country": country, "language": language, "device": device}
            rank = draw.randint(1, 30)
            skipped = {FIRST + timedelta(days=d) for d in range(13, 16)} if a % 3 == 1 else set()
            for d in range(21):
                day = FIRST + timedelta(days=d)
                rank = max(1, rank + draw.choice((-3, -1, 0, 0, 1, 2, 5)))
                if day in no_data:
                    row = {"rank": None, "status": "no_data", "results": None}
                elif day in skipped:
                    row = {"rank": None, "status": "not_fetched", "results": None}
                elif a % 2 == 0 and d % 7 == 3:
                    row = {"rank": None, "status": "not_ranked", "results": 50}
                else:
                    row = {"rank": rank, "status": "ranked", "results": 50}
                ranks.append({"keyword": keyword, "app_id": app, "date": day, **row, **place})
            day = START + timedelta(days=(a + 2 * k) % 7)
            if (a + k) % 2:
                event(
                    "rank_drop",
                    day,
                    f"{app} fell for '{keyword}'",
                    app_id=app,
                    keyword=keyword,
                    before=str(rank),
                    after=str(rank + 9),
                    **place,
                )
            else:
                event(
                    "top",
                    day,
                    f"{app} entered the top 10 for '{keyword}'",
                    app_id=app,
                    keyword=keyword,
                    before=None,
                    after=str(min(rank, 10)),
                    **place,
                )
            event(
                "rank_drop",
                day + timedelta(days=1),
                f"{app} fell again",
                app_id=app,
                keyword=keyword,
                before="4",
                after=None if a % 3 == 0 else "31",
                **place,
            )
    for a, app in enumerate(APPS):
        for n, target in enumerate(("icon", "title", "screenshots")[: 1 + a % 3]):
            day = START + timedelta(days=(a + 3 * n) % 7)
            event(
                "listing_change",
                day,
                f"{app} changed its {target}",
                app_id=app,
                target=target,
                before="a",
                after="b",
                country="us",
                language="en",
                device="iphone",
            )
    for n in range(14):
        event(
            "new_advertiser",
            START + timedelta(days=n % 7),
            f"an app bids on 'x{n}'",
            app_id=str(900 + n),
            keyword=f"x{n}",
            after="0.12",
            country="us",
            language="en",
            device="iphone",
        )
    return {
        "events": pl.DataFrame(events, schema=EVENT_SCHEMA),
        "ranks": pl.DataFrame(ranks, schema=RANK_HISTORY.schema),
        "tracker": "bench-digest",
        "start": START,
        "end": END,
        "spend": Spend(month="2026-11", month_credits=120_000, budget_per_month=300_000, run_credits=4_200),
        "app_names": {app: f"App {n}" for n, app in enumerate(APPS)},
    }


def serve(charts: int) -> None:
    """A worker: render the digest once per line read on stdin, answering its seconds and charts as JSON."""
    import polars as pl

    from storeframes.track.digest import render_digest

    made = digest_input()
    if charts:  # the rank events of the first series only: a digest of fewer charts
        events = made["events"]
        rank = pl.col("rule").is_in(["rank_drop", "top"])
        first = (
            events.filter(rank).group_by("app_id", "keyword").agg(pl.col("day").min()).sort("day", "app_id", "keyword")
        )
        kept = first.head(charts).select("app_id", "keyword")
        made["events"] = pl.concat([events.filter(~rank), events.filter(rank).join(kept, on=["app_id", "keyword"])])
    for _ in sys.stdin:
        began = time.perf_counter()
        digest = render_digest(**made)
        took = time.perf_counter() - began
        print(json.dumps({"seconds": took, "charts": len(digest.images), "bytes": len(digest.html)}), flush=True)


class Worker:
    """A process rendering the digest with the package of ``tree`` on its path."""

    def __init__(self, tree: Path, charts: int = 0) -> None:
        env = {**os.environ, "PYTHONPATH": str(tree), "STOREFRAMES_PROGRESS": "0"}
        command = [sys.executable, str(Path(__file__).resolve()), "--serve", "--charts", str(charts)]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)

    def render(self) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write("go\n")
        self.process.stdin.flush()
        return dict(json.loads(self.process.stdout.readline()))

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)


def figures(quick: bool = False, base: Path | None = None, charts: int = 0) -> dict[str, Any]:
    """The best render of this checkout (and of ``base``), their processes taking turns."""
    trees = {"this": TREE, **({"base": base} if base is not None else {})}
    workers = {name: Worker(tree, charts) for name, tree in trees.items()}
    try:
        first = {name: w.render() for name, w in workers.items()}
        times: dict[str, list[float]] = {name: [] for name in workers}
        for _ in range(QUICK_ROUNDS if quick else ROUNDS):
            for name, w in workers.items():
                times[name].append(w.render()["seconds"])
    finally:
        for w in workers.values():
            w.close()
    charts = first["this"]["charts"]
    out: dict[str, Any] = {
        "benchmark": "digest",
        "charts": charts,
        "rounds": len(times["this"]),
        "render_seconds": round(min(times["this"]), 4),
        "chart_ms": round(min(times["this"]) / charts * 1000, 2),
        "first_seconds": round(first["this"]["seconds"], 3),
        "html_bytes": first["this"]["bytes"],
    }
    if base is not None:
        out |= {
            "base": str(base),
            "base_render_seconds": round(min(times["base"]), 4),
            "base_chart_ms": round(min(times["base"]) / first["base"]["charts"] * 1000, 2),
            "base_first_seconds": round(first["base"]["seconds"], 3),
            "base_x_render": round(min(times["base"]) / min(times["this"]), 2),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_ROUNDS} rounds, not {ROUNDS}")
    parser.add_argument("--base", type=Path, help="another checkout's folder, to render the same digest beside")
    parser.add_argument("--charts", type=int, default=0, help="keep the rank events of the first N series only")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.charts)
        return
    f = figures(args.quick, args.base, args.charts)
    print(f"render_digest of a week, {f['charts']} charts, best of {f['rounds']} rounds taking turns")
    print(
        f"  this checkout: {f['render_seconds']:.3f} s ({f['chart_ms']:.1f} ms a chart), first {f['first_seconds']} s"
    )
    if args.base:
        print(
            f"  base {args.base}: {f['base_render_seconds']:.3f} s ({f['base_chart_ms']:.1f} ms a chart), "
            f"first {f['base_first_seconds']} s"
        )
        print(f"  {f['base_x_render']}x faster than the base")
    context = {k: v for k, v in f.items() if k not in ("render_seconds", "chart_ms", "first_seconds", "base_x_render")}
    for name, unit in (("render_seconds", "s"), ("chart_ms", "ms"), ("first_seconds", "s"), ("base_x_render", "x")):
        if name in f:
            print(json.dumps({"name": f"digest.{name}", "value": f[name], "unit": unit, "context": context}))


if __name__ == "__main__":
    main()
