"""``storeframes mcp`` as an assistant meets it: the server's start and each tool's round trip over stdio.

Not collected by the test run. Run::

    .venv/bin/python tests/benchmarks/bench_agent.py           # best of 5
    .venv/bin/python tests/benchmarks/bench_agent.py --quick   # best of 1

Against a month of the tracking notebook's tracker replayed on the sandbox (30 daily runs of 4 keywords'
live search and history, 5 apps' metadata, downloads and ratings): the time from starting the server
(``python -m storeframes mcp`` spawned by the ``mcp`` SDK's client) to its tool list; then each tool's whole
call as the assistant makes it (the SDK's client sends it, the server answers over stdio), beside the
same tool called in process on a :class:`~storeframes.agent.Surface` (what the protocol and the process
boundary add); and a paid ``fetch_frame`` once (the sandbox in process), then the same call answered by
the cache.

Prints a table, then one JSON line per figure (``{"name", "value", "unit", "context"}``);
``figures(quick)`` returns them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository: tests._agent_month

from storeframes.agent import open_surface
from tests._agent_month import APPS, KEYWORDS, LAST_DAY, replay, server_command, server_env

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("describe", {}),
    ("plan", {"function": "search_history_frame", "arguments": {"keywords": KEYWORDS, "days": 90}}),
    ("scan", {"table": "search", "snapshots": True, "filters": {"app_id": APPS[0]}, "limit": 50}),
    ("sql", {"query": "SELECT keyword, median(rank) AS m FROM search_snapshots GROUP BY keyword"}),
    ("movers", {"keywords": KEYWORDS, "top": 10}),
    ("changes_before", {"keywords": KEYWORDS, "apps": APPS, "days": 30}),
    ("share_of_voice", {"keywords": KEYWORDS, "start": "2026-10-22", "end": "2026-11-20"}),
    ("keyword_opportunities", {"app": APPS[0], "competitors": APPS[1:], "start": "2026-10-22", "end": "2026-11-20"}),
    ("rank_anomalies", {"keywords": KEYWORDS, "start": "2026-10-22", "end": "2026-11-20", "weeks": 2}),
    ("events", {"since": "2026-10-22", "limit": 50}),
    ("track_status", {}),
    ("spend", {"since": "2026-10-01"}),
    ("fetch_frame", {"function": "metadata_frame", "arguments": {"apps": APPS}}),
]
"""One call of each tool, as an assistant would make it; the fetch is answered by the cache."""

PAID = ("fetch_frame", {"function": "metadata_frame", "arguments": {"apps": ["2787512886", "361252007"]}})


def _in_process(surface: Any, name: str, arguments: dict[str, Any]) -> Any:
    args = dict(arguments)
    if name == "scan":
        args["snapshots_"] = args.pop("snapshots", False)
    return surface.run(name, lambda: getattr(surface, name)(**args))


def figures(quick: bool) -> list[dict[str, Any]]:
    repeat = 1 if quick else 5
    with tempfile.TemporaryDirectory() as folder:
        os.environ["STOREFRAMES_STATE_DIR"] = folder
        started = time.perf_counter()
        spec = replay(Path(folder) / "month")
        replayed = time.perf_counter() - started
        command, args = server_command(spec)
        params = StdioServerParameters(command=command, args=args, env=server_env(), cwd=str(spec.parent))

        async def session() -> tuple[float, dict[str, float], float, float]:
            began = time.perf_counter()
            with open(spec.parent / "server.log", "w") as log:
                async with Client(stdio_client(params, errlog=log)) as client:
                    await client.list_tools()
                    start = time.perf_counter() - began
                    best: dict[str, float] = {}
                    for name, arguments in CALLS:
                        for _ in range(repeat):
                            t0 = time.perf_counter()
                            result = await client.call_tool(name, arguments)
                            best[name] = min(best.get(name, float("inf")), time.perf_counter() - t0)
                            assert not result.is_error, (name, result.content[0].text)
                    t0 = time.perf_counter()
                    paid = await client.call_tool(PAID[0], {**PAID[1], "confirm": True})
                    first = time.perf_counter() - t0
                    assert paid.structured_content["provenance"]["credits spent"] > 0
                    t0 = time.perf_counter()
                    await client.call_tool(PAID[0], PAID[1])
                    again = time.perf_counter() - t0
                    return start, best, first, again

        start, over_stdio, paid, cached = anyio.run(session)
        surface = open_surface(tracker=spec, sandbox=True, today=LAST_DAY)
        in_process: dict[str, float] = {}
        for name, arguments in CALLS:
            for _ in range(repeat):
                t0 = time.perf_counter()
                _in_process(surface, name, arguments)
                in_process[name] = min(in_process.get(name, float("inf")), time.perf_counter() - t0)
    context = {"replay_s": round(replayed, 2), "repeat": repeat}
    found = [{"name": "mcp_server_start_to_tool_list", "value": start, "unit": "s", "context": context}]
    for name, _ in CALLS:
        found.append({"name": f"mcp_tool_{name}", "value": over_stdio[name], "unit": "s",
                      "context": {"in_process_s": in_process[name], **context}})  # fmt: skip
    found.append(
        {"name": "mcp_fetch_frame_paid_2_apps", "value": paid, "unit": "s", "context": {"cached_again_s": cached}}
    )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one run of each, not the best of 5")
    found = figures(parser.parse_args().quick)
    print(f"{'figure':<34} {'over stdio':>11} {'in process':>11}")
    for figure in found:
        inner = figure["context"].get("in_process_s")
        shown = f"{figure['value'] * 1000:,.1f} ms"
        print(f"{figure['name']:<34} {shown:>11} {'' if inner is None else f'{inner * 1000:,.1f} ms':>11}")
    for figure in found:
        print(json.dumps(figure))


if __name__ == "__main__":
    sys.exit(main())
