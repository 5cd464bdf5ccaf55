"""Ten everyday questions asked through ``storeframes mcp``, as an assistant would ask them, against a month of
the tracking notebook's tracker replayed on the sandbox; each answer set beside the one the notebooks' code
gives (``notebooks/tracking.ipynb`` and ``rank_tracking.ipynb``: ``sf.snapshots``, ``sf.scan``, the analysis
functions, the tracker's status and run log).

    python -m tests.evaluation.agent_questions [--out FOLDER]

prints each question, the tools it took and the answer, whether it equals the notebook's, and a last JSON
line for machines. Exit status 0 when all ten are equal. The suite runs it (``tests/agent/test_mcp.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import anyio
import polars as pl
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

import storeframes as sf
from storeframes.analysis import category_standing, changes_before, movers
from storeframes.cache import open_cache
from storeframes.kept.app_changes import kept_changes

from .._agent_month import APP, APPS, DAYS, KEYWORDS, LAST_DAY, TRACKER, replay, server_command, server_env

SERVICE = "sandbox-0"
MONTH_START = "2026-11-01"


@dataclass
class Question:
    text: str
    calls: list[tuple[str, dict[str, Any]]]
    answer: Callable[[list[Any]], Any]  # from the tools' structured results
    expected: Callable[[Path], Any]  # the notebook's way, from the cache folder
    paid: bool = False  # its answer is read after the tools fetched it; the others before anything is asked


def _rows(result: Any) -> list[dict[str, Any]]:
    data = result.structured_content  # rows from the service or the cache are marked as third-party data
    return list(data.get("untrusted_third_party_data", data)["rows"])


def _searches(cache: Path, start: str) -> pl.DataFrame:
    """The notebook's search snapshots: the tracker's daily live search, organic results, dated by the day kept."""
    return (
        sf.snapshots("search", cache, start=start, end=LAST_DAY, service=SERVICE)
        .filter(~pl.col("is_ad").fill_null(False))
        .with_columns(date=pl.col("snapshot_date"))
        .collect()
    )


def _moved(cache: Path) -> pl.DataFrame:
    history = _searches(cache, MONTH_START).filter(pl.col("keyword") == KEYWORDS[1])
    return movers(history, APPS, start=MONTH_START, end=LAST_DAY, top=5)


def _changed_before(cache: Path) -> list[tuple[Any, ...]]:
    """The notebook's changes_before on the movers: the service's change history and the changes seen between
    daily metadata snapshots (one of each, the history's first), size left out."""
    moved = _moved(cache)
    store = open_cache(str(cache), None)
    apps = moved["app_id"].unique().to_list()
    history, seen = kept_changes(store, SERVICE, apps, date.fromisoformat(MONTH_START) - timedelta(days=30), LAST_DAY)
    changes = pl.concat([history, seen.join(history, on=["app_id", "date", "target"], how="anti")])
    before = changes_before(moved, changes.filter(pl.col("target") != "size"), days=30)
    return before.select("app_id", "changes", "what_changed").rows()


def _benchmarks(cache: Path) -> list[tuple[Any, ...]]:
    with sf.sandbox.client(today=LAST_DAY, cache_dir=cache, offline=True) as client:
        frame = client.benchmarks_frame(countries="us", channels="search")
    standing = category_standing(frame, "Photo & Video")
    return standing.select("country", "channel", "page_views_to_installs", "place", "out_of").rows()


QUESTIONS = [
    Question(
        "Which of our apps and competitors moved most on 'photo filters' this month?",
        [
            (
                "movers",
                {"keywords": [KEYWORDS[1]], "apps": APPS, "start": MONTH_START, "end": LAST_DAY.isoformat(), "top": 5},
            )
        ],
        lambda r: [(x["app_id"], x["start_rank"], x["end_rank"], x["move"]) for x in _rows(r[0])],
        lambda c: _moved(c).select("app_id", "start_rank", "end_rank", "move").rows(),
    ),
    Question(
        "...and what did they change in the 30 days before?",
        [
            (
                "changes_before",
                {
                    "keywords": [KEYWORDS[1]],
                    "apps": APPS,
                    "start": MONTH_START,
                    "end": LAST_DAY.isoformat(),
                    "top": 5,
                    "days": 30,
                },
            )
        ],
        lambda r: [(x["app_id"], x["changes"], x["what_changed"]) for x in _rows(r[0])],
        _changed_before,
    ),
    Question(
        "Where does our app rank on each keyword today?",
        [
            (
                "scan",
                {
                    "table": "search",
                    "snapshots": True,
                    "start": LAST_DAY.isoformat(),
                    "end": LAST_DAY.isoformat(),
                    "filters": {"app_id": APP},
                    "columns": ["keyword", "rank"],
                    "sort": ["keyword"],
                },
            )
        ],
        lambda r: [(x["keyword"], x["rank"]) for x in _rows(r[0])],
        lambda c: (
            _searches(c, LAST_DAY.isoformat())
            .filter(pl.col("app_id") == APP)
            .sort("keyword")
            .select("keyword", "rank")
            .rows()
        ),
    ),
    Question(
        "What was our median rank per keyword over the month?",
        [
            (
                "sql",
                {
                    "query": f"SELECT keyword, median(rank) AS median_rank FROM search_snapshots WHERE app_id = '{APP}' "
                    "GROUP BY keyword ORDER BY keyword"
                },
            )
        ],
        lambda r: [(x["keyword"], x["median_rank"]) for x in _rows(r[0])],
        lambda c: (
            _searches(c, DAYS[0].isoformat())
            .filter(pl.col("app_id") == APP)
            .group_by("keyword")
            .agg(pl.col("rank").median())
            .sort("keyword")
            .rows()
        ),
    ),
    Question(
        "How did our downloads go over the month?",
        [
            (
                "scan",
                {
                    "table": "metrics",
                    "snapshots": True,
                    "filters": {"app_id": APP, "metric": "downloads"},
                    "columns": ["date", "value"],
                    "sort": ["date"],
                    "limit": 200,
                },
            )
        ],
        lambda r: [(x["date"], x["value"]) for x in _rows(r[0])],
        lambda c: [
            (d.isoformat(), v)
            for d, v in sf.snapshots("metrics", c, start=DAYS[0], end=LAST_DAY, service=SERVICE)
            .filter((pl.col("app_id") == APP) & (pl.col("metric") == "downloads"))
            .sort("date")
            .select("date", "value")
            .collect()
            .rows()
        ],
    ),
    Question(
        "What did the alerts find this month?",
        [("events", {"since": DAYS[0].isoformat(), "limit": 200})],
        lambda r: sorted((x["day"], x["rule"], x["detail"]) for x in _rows(r[0])),
        lambda c: sorted(
            (d.isoformat(), rule, detail)
            for d, rule, detail in sf.events(c, tracker=TRACKER, since=DAYS[0]).select("day", "rule", "detail").rows()
        ),
    ),
    Question(
        "How much of the month's budget has the tracker spent, and did it miss a day?",
        [("track_status", {})],
        lambda r: (r[0].structured_content["month_spent"], [(x["item"], x["gap_days"]) for x in _rows(r[0])]),
        lambda c: _status(c),
    ),
    Question(
        "What did tracking cost per endpoint since it started?",
        [("spend", {"since": DAYS[0].isoformat()})],
        lambda r: sorted((x["endpoint"], x["credits_spent"]) for x in _rows(r[0])),
        lambda c: sorted(
            sf.sql("SELECT endpoint, sum(cost)::BIGINT FROM ledger GROUP BY endpoint", c, service=SERVICE).rows()
        ),
    ),
    Question(
        "What would the US search-channel conversion benchmarks cost, and may I fetch them without asking?",
        [("plan", {"function": "benchmarks_frame", "arguments": {"countries": "us", "channels": "search"}})],
        lambda r: (r[0].structured_content["estimate"], r[0].structured_content["gate"]["passes"]),
        lambda c: (_plan(c).estimate, _plan(c).estimate <= 100),
    ),
    Question(
        "(the user agreed) Where does Photo & Video stand in US search conversion?",
        [
            (
                "fetch_frame",
                {
                    "function": "benchmarks_frame",
                    "arguments": {"countries": "us", "channels": "search"},
                    "confirm": True,
                    "limit": 1,
                },
            ),
            ("category_standing", {"category": "Photo & Video", "countries": ["us"], "channels": ["search"]}),
        ],
        lambda r: [
            (x["country"], x["channel"], x["page_views_to_installs"], x["place"], x["out_of"]) for x in _rows(r[1])
        ],
        _benchmarks,
        paid=True,
    ),
]


def _status(cache: Path) -> Any:
    status = sf.Tracker.from_toml(cache.parent / "tracking.toml", sandbox=True).status(LAST_DAY)
    gaps = [(item, [d.isoformat() for d in days]) for item, days in status.items.select("item", "gap_days").rows()]
    return status.month_spent, gaps


def _plan(cache: Path) -> Any:
    with sf.sandbox.client(today=LAST_DAY, cache_dir=cache, offline=True) as client:
        return client.plan("benchmarks_frame", countries="us", channels="search")


def ask_all(spec: Path) -> list[list[Any]]:
    """Every question's tool calls, in one session of the server over stdio."""
    command, args = server_command(spec)
    params = StdioServerParameters(command=command, args=args, env=server_env(), cwd=str(spec.parent))

    async def go() -> list[list[Any]]:
        with open(spec.parent / "server.log", "a", encoding="utf-8") as log:
            async with Client(stdio_client(params, errlog=log)) as client:
                return [[await client.call_tool(name, arguments) for name, arguments in q.calls] for q in QUESTIONS]

    return anyio.run(go)


def evaluate(folder: Path) -> dict[str, Any]:
    """Replay the month into ``folder``, ask the ten questions; a summary with each answer and its verdict."""
    started = time.perf_counter()
    spec = replay(folder)
    replayed = time.perf_counter()
    cache = spec.parent / "cache"
    before = [None if q.paid else q.expected(cache) for q in QUESTIONS]
    results = ask_all(spec)
    asked = time.perf_counter()
    out = []
    for question, answers, kept in zip(QUESTIONS, results, before, strict=True):
        errors = [a.content[0].text for a in answers if a.is_error]
        got = None if errors else question.answer(answers)
        expected = question.expected(cache) if question.paid else kept
        out.append({"question": question.text, "tools": [n for n, _ in question.calls], "answer": got,
                    "expected": expected, "equal": got == expected, "errors": errors})  # fmt: skip
    return {
        "questions": len(out),
        "equal": sum(q["equal"] for q in out),
        "tool_calls": sum(len(q.calls) for q in QUESTIONS),
        "replay_seconds": round(replayed - started, 1),
        "ask_seconds": round(asked - replayed, 1),
        "answers": out,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="the folder of the replayed month (default: a temporary one)")
    args = parser.parse_args(argv)
    folder = args.out or Path(tempfile.mkdtemp(prefix="agent-questions-"))
    summary = evaluate(folder)
    for n, q in enumerate(summary["answers"], 1):
        print(f"{n}. {q['question']}  [{', '.join(q['tools'])}]")
        print(f"   {json.dumps(q['answer'], default=str)[:300]}")
        print(
            f"   equal to the notebook's: {'yes' if q['equal'] else 'NO: ' + json.dumps(q['expected'], default=str)[:300]}"
        )
        for error in q["errors"]:
            print(f"   error: {error[:300]}")
    line = {k: v for k, v in summary.items() if k != "answers"}
    print(json.dumps({"evaluation": "agent_questions", **line}))
    return 0 if summary["equal"] == summary["questions"] else 1


if __name__ == "__main__":
    sys.exit(main())
