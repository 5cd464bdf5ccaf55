"""``storeframes mcp`` as an assistant meets it: the server started by the ``mcp`` SDK's own client over stdio
(and once over streamable HTTP on loopback), against a month of the tracking notebook's tracker replayed on
the sandbox. What is checked is what a user relies on: the tool list, that the free tools send nothing,
the gate (a refusal with the price and 0 requests, then the call with ``confirm``; the budget stopping a
loop), that scan and sql work offline with no token, that no output holds the token, and that ``spend``
is the ledger."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl
import pytest

pytest.importorskip("mcp")

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

import storeframes as sf
from storeframes.analysis import movers
from storeframes.cache import open_cache
from storeframes.wire.http import lib as httpx

from .._agent_month import (
    APP,
    APPS,
    KEYWORDS,
    LAST_DAY,
    MONTH_BUDGET,
    TRACKER,
    replay,
    rows,
    server_command,
    server_env,
)

pytestmark = pytest.mark.slow

SERVICE = "sandbox-0"
TOOLS = {"describe", "plan", "fetch_frame", "scan", "sql", "movers", "changes_before", "category_standing",
         "share_of_voice", "keyword_opportunities", "rank_anomalies", "events", "track_status", "spend"}  # fmt: skip
TOKEN = "sk-live-mcp-0123456789abcdef0123456789abcdef"  # a made-up token, shaped like a real one
NEW_APPS = ["2787512886", "361252007", "1004337595", "4027357231", "4386027005", "6389698736", "2905767697"]
"""Sandbox apps the month did not follow: fetching them costs credits."""


@pytest.fixture(scope="module")
def month(tmp_path_factory) -> Path:
    """The replayed month's spec (its cache beside it)."""
    return replay(tmp_path_factory.mktemp("month"))


@pytest.fixture
def spec(month: Path, tmp_path: Path) -> Path:
    """A copy of the month for one test, so what a test fetches is its own."""
    import shutil

    copy = tmp_path / "month"
    shutil.copytree(month.parent, copy)
    text = month.read_text(encoding="utf-8").replace(month.parent.resolve().as_posix(), copy.resolve().as_posix())
    (copy / "tracking.toml").write_text(text, encoding="utf-8")
    return copy / "tracking.toml"


def ledger(spec: Path) -> pl.DataFrame:
    cache = open_cache(str(spec.parent / "cache"), None)
    assert cache is not None
    return cache.ledger.read().filter(pl.col("service") == SERVICE)


def reference(spec: Path) -> Any:
    """A sandbox client of the month's cache on its last day, serving only what the cache holds."""
    from storeframes.sandbox import client

    return client(today=LAST_DAY, cache_dir=spec.parent / "cache", offline=True)


def ask(spec: Path, calls: list[tuple[str, dict[str, Any]]], *flags: str, env: dict[str, str] | None = None,
        errlog: Path | None = None) -> tuple[list[Any], list[Any]]:  # fmt: skip
    """Start the server over stdio with the SDK's client, list the tools, make ``calls`` in order."""
    command, args = server_command(spec, *flags)
    params = StdioServerParameters(command=command, args=args, env=env or server_env(), cwd=str(spec.parent))

    async def go() -> tuple[list[Any], list[Any]]:
        with open(errlog or spec.parent / "server.log", "a", encoding="utf-8") as log:
            async with Client(stdio_client(params, errlog=log)) as client:
                tools = (await client.list_tools()).tools
                return tools, [await client.call_tool(name, arguments) for name, arguments in calls]

    return anyio.run(go)


@pytest.mark.mcp
def test_the_tools_are_listed_with_typed_arguments_and_descriptions(spec):
    tools, (described,) = ask(spec, [("describe", {})])
    by_name = {tool.name: tool for tool in tools}
    assert set(by_name) == TOOLS
    for tool in tools:
        assert len(tool.description or "") > 80, tool.name
    fetch = by_name["fetch_frame"].input_schema
    assert fetch["required"] == ["function"]
    assert fetch["properties"]["confirm"]["type"] == "boolean" and fetch["properties"]["confirm"]["default"] is False
    assert "PAID" in by_name["fetch_frame"].description
    assert by_name["plan"].annotations.read_only_hint is True
    assert by_name["fetch_frame"].annotations.read_only_hint is False
    assert "metadata_frame" in [r["function"] for r in described.structured_content["functions"]]
    prices = {r["endpoint"]: r["price"] for r in described.structured_content["endpoints"]}
    assert prices["benchmarks"] == "base=1001"


@pytest.mark.mcp
def test_plan_sends_nothing_and_tells_the_price_and_what_is_cached(spec):
    before = ledger(spec).height
    arguments = {"apps": [APP, *NEW_APPS[:2]]}
    _, (planned,) = ask(spec, [("plan", {"function": "metadata_frame", "arguments": arguments})])
    assert ledger(spec).height == before  # not even a cache hit is written
    assert not planned.is_error
    with reference(spec) as client:
        expected = client.plan("metadata_frame", **arguments)
    data = planned.structured_content
    assert data["estimate"] == 21 and data["to_send"] == 1 and data["cached_cells"] == 1 and data["cells"] == 3
    assert data["gate"]["passes"] is True
    assert (data["estimate"], data["to_send"]) == (expected.estimate, expected.to_send)
    assert "at most 21 credits" in planned.content[0].text


@pytest.mark.mcp
def test_fetch_over_the_gate_is_refused_with_its_price_and_then_goes_through_with_confirm(spec):
    arguments = {"apps": NEW_APPS[:5]}  # 51 credits at the catalog's estimate, above --confirm-above 20
    before = ledger(spec)
    call = {"function": "metadata_frame", "arguments": arguments, "columns": ["app_id", "title"], "limit": 3}
    _, (refused,) = ask(spec, [("fetch_frame", call)], "--confirm-above", "20")
    assert refused.is_error
    assert refused.structured_content["refused"] is True and refused.structured_content["estimate"] == 51
    assert "51 credits" in refused.content[0].text and "confirm=true" in refused.content[0].text
    assert ledger(spec).height == before.height  # 0 requests

    _, (fetched,) = ask(spec, [("fetch_frame", {**call, "confirm": True})], "--confirm-above", "20")
    assert not fetched.is_error
    after = ledger(spec).slice(before.height)
    sent = after.filter(~pl.col("from_cache"))
    assert sent.height >= 1
    provenance = fetched.structured_content["provenance"]
    assert provenance["credits spent"] == int(after["cost"].sum()) > 0
    assert provenance["requests sent"] == sent.height
    data = fetched.structured_content
    with reference(spec) as client:  # what the cache now holds
        frame = client.metadata_frame(NEW_APPS[:5])
    assert data["total_rows"] == frame.height and data["shown_rows"] == min(3, frame.height)
    assert [r["app_id"] for r in rows(fetched)] == frame["app_id"].head(3).to_list()
    assert [r["title"] for r in rows(fetched)] == frame["title"].head(3).to_list()
    assert "title" in data["columns"] and "developer_name" in data["columns_left_out"]


@pytest.mark.mcp
def test_the_session_budget_stops_a_loop_of_paid_calls(spec):
    before = ledger(spec).height
    calls = [("fetch_frame", {"function": "metadata_frame", "arguments": {"apps": [app]}, "confirm": True, "limit": 1})
             for app in NEW_APPS]  # fmt: skip
    _, results = ask(spec, calls, "--budget", "40", "--confirm-above", "0")
    spent = int(ledger(spec).slice(before)["cost"].sum())
    refused = [r for r in results if r.is_error]
    assert spent <= 40
    assert len(results) - len(refused) == 3  # 11 credits each at the estimate: a fourth would pass 40
    assert all("left of the session's budget of 40 credits" in r.content[0].text for r in refused)
    assert all(r.structured_content.get("refused") for r in refused)


@pytest.mark.mcp
def test_the_tracker_month_budget_holds_whatever_confirm_says(spec):
    spent = int(ledger(spec).filter(pl.col("time").dt.month() == LAST_DAY.month)["cost"].sum())
    left = MONTH_BUDGET - spent
    bench = {"countries": ["us"], "channels": ["search"]}  # 1,001 credits a request
    n = left // 1001 + 1
    countries = ["us", "gb", "de", "fr", "jp", "ca", "au", "it", "es", "br", "mx", "kr", "nl", "se"][:n]
    call = {"function": "benchmarks_frame", "arguments": {**bench, "countries": countries}, "confirm": True}
    before = ledger(spec).height
    _, (refused,) = ask(spec, [("fetch_frame", call)], "--budget", "100000")
    assert refused.is_error and "month budget" in refused.content[0].text
    assert ledger(spec).height == before


@pytest.mark.mcp
def test_scan_sql_and_the_analysis_tools_work_offline_with_no_token(spec):
    calls = [
        ("scan", {"table": "search", "snapshots": True, "filters": {"keyword": KEYWORDS[0], "app_id": APP},
                  "columns": ["snapshot_date", "rank"], "sort": ["snapshot_date"], "limit": 200}),
        ("sql", {"query": "SELECT endpoint, sum(cost)::BIGINT AS credits FROM ledger GROUP BY endpoint ORDER BY endpoint"}),
        ("movers", {"keywords": [KEYWORDS[0]], "start": "2026-11-01", "end": LAST_DAY.isoformat(), "top": 5}),
        ("fetch_frame", {"function": "metadata_frame", "arguments": {"apps": NEW_APPS[:1]}}),
    ]  # fmt: skip
    before = ledger(spec).height
    _, (scanned, queried, moved, missing) = ask(spec, calls, "--offline", env=server_env())
    assert ledger(spec).height == before
    snaps = (sf.snapshots("search", spec.parent / "cache", service=SERVICE)
             .filter((pl.col("keyword") == KEYWORDS[0]) & (pl.col("app_id") == APP))
             .sort("snapshot_date").collect())  # fmt: skip
    assert [(r["snapshot_date"], r["rank"]) for r in rows(scanned)] == [
        (d.isoformat(), r) for d, r in zip(snaps["snapshot_date"], snaps["rank"], strict=True)
    ]
    assert len(rows(scanned)) == 30
    expected = sf.sql(
        "SELECT endpoint, sum(cost)::BIGINT AS credits FROM ledger GROUP BY endpoint ORDER BY endpoint",
        spec.parent / "cache", service=SERVICE,
    )  # fmt: skip
    assert [(r["endpoint"], r["credits"]) for r in rows(queried)] == expected.rows()
    history = (sf.snapshots("search", spec.parent / "cache", start="2026-11-01", end=LAST_DAY, service=SERVICE)
               .filter((pl.col("keyword") == KEYWORDS[0]) & ~pl.col("is_ad").fill_null(False))
               .with_columns(date=pl.col("snapshot_date")).collect())  # fmt: skip
    reference = movers(history, start="2026-11-01", end=LAST_DAY, top=5)
    assert [(r["app_id"], r["change"], r["move"], r["places_moved"]) for r in rows(moved)] == reference.select(
        "app_id", "change", "move", "places_moved"
    ).rows()
    assert missing.is_error and "NotCachedError" in missing.content[0].text


FREE_CALLS = [
    ("describe", {}),
    ("describe", {"name": "search_history_frame"}),
    ("plan", {"function": "search_history_frame", "arguments": {"keywords": ["maps", "notes"], "days": 60}}),
    ("scan", {"table": "metadata", "columns": ["app_id", "title"]}),
    ("scan", {"table": "metrics", "snapshots": True, "filters": {"date": {"min": "2026-11-01"}}}),
    ("sql", {"query": "SELECT count(*) AS n FROM events"}),
    ("movers", {"keywords": "photo editor, collage maker", "within": 20}),
    ("changes_before", {"apps": APPS, "days": 14}),
    ("category_standing", {"category": "Photo & Video"}),
    ("share_of_voice", {"keywords": KEYWORDS, "weights": "equal"}),
    ("keyword_opportunities", {"app": APP, "competitors": APPS[1:], "top": 20}),
    ("rank_anomalies", {"keywords": KEYWORDS, "weeks": 2}),
    ("events", {"rule": ["rank_drop", "top"]}),
    ("track_status", {}),
    ("spend", {"by": "day"}),
]
"""Every free tool, with arguments a user gives: none of them may send a request."""


@pytest.mark.mcp
def test_the_free_tools_send_nothing_and_the_gate_still_holds_after_them(spec):
    before = ledger(spec).height
    _, results = ask(spec, FREE_CALLS)
    assert ledger(spec).height == before
    answered = {name: r for (name, _), r in zip(FREE_CALLS, results, strict=True)}
    assert [name for (name, _), r in zip(FREE_CALLS, results, strict=True) if r.is_error] == ["category_standing"]
    assert "no conversion benchmarks are cached" in answered["category_standing"].content[0].text
    assert answered["plan"].structured_content["estimate"] == 2 * (1 + 10 * 60)
    assert answered["plan"].structured_content["gate"] == {
        "passes": False,
        "confirmable": True,
        "reason": "it would cost up to 1,202 credits, above the 100 this server spends without confirmation: "
        "ask the user, then call again with confirm=true",
    }
    for (name, _), result in zip(FREE_CALLS, results, strict=True):
        if "provenance" in result.structured_content and name != "spend":  # spend's counts the ledger's requests
            assert result.structured_content["provenance"]["requests sent"] == 0, name


@pytest.mark.processes
@pytest.mark.mcp
def test_scan_and_sql_need_no_token_and_no_network(spec):
    """No --sandbox and no token: the folder's own answers, offline; every proxy a dead port, so that a
    request that left would fail."""
    dead = "http://127.0.0.1:9"
    env = server_env(HTTP_PROXY=dead, HTTPS_PROXY=dead, ALL_PROXY=dead, http_proxy=dead, https_proxy=dead)
    calls = [
        ("scan", {"table": "search_history", "filters": {"keyword": KEYWORDS[0]}, "limit": 0}),
        ("sql", {"query": "SELECT count(*) AS answers FROM ledger WHERE NOT from_cache"}),
        ("fetch_frame", {"function": "search_frame", "arguments": {"keywords": ["maps"]}}),
    ]
    command = [sys.executable, "-m", "storeframes", "mcp", "--tracker", str(spec), "--offline"]
    params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=str(spec.parent))

    async def go() -> list[Any]:
        with open(spec.parent / "offline.log", "w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                return [await client.call_tool(name, arguments) for name, arguments in calls]

    before = ledger(spec).height
    scanned, counted, missing = anyio.run(go)
    expected = sf.scan("search_history", spec.parent / "cache", service=SERVICE).filter(
        pl.col("keyword") == KEYWORDS[0]
    )
    assert scanned.structured_content["total_rows"] == expected.collect().height > 1000
    assert rows(counted) == [{"answers": ledger(spec).filter(~pl.col("from_cache")).height}]
    assert missing.is_error and "NotCachedError" in missing.content[0].text
    assert ledger(spec).height == before


@pytest.mark.processes
@pytest.mark.mcp
def test_with_a_token_over_http_the_token_is_sent_only_to_the_service(tmp_path):
    """The real path: a token and a base URL (the sandbox on loopback, taking that token), a paid call, a
    refusal by the service, bad input; the token in no output and no log line, every request in the ledger."""
    from storeframes.sandbox import SandboxServer

    calls = [
        ("fetch_frame", {"function": "metadata_frame", "arguments": {"apps": NEW_APPS[:2]}, "confirm": True}),
        ("fetch_frame", {"function": "metadata_frame", "arguments": {"apps": ["999999999"]}, "confirm": True}),
        ("plan", {"function": "metrics_frame", "arguments": {"apps": NEW_APPS[:1], "metrics": "downloads"}}),
        ("fetch_frame", {"function": "metrics_frame", "arguments": {"apps": NEW_APPS[:1], "metrics": ["nope"]}}),
        ("spend", {}),
        ("describe", {}),
    ]
    log = tmp_path / "server.log"
    with SandboxServer(port=0, today=LAST_DAY, api_keys=[TOKEN]) as served:
        env = server_env(STOREFRAMES_API_KEY=TOKEN, STOREFRAMES_BASE_URL=served.base_url)
        params = StdioServerParameters(command=sys.executable, cwd=str(tmp_path), env=env,
                                       args=["-m", "storeframes", "mcp", "--cache-dir", str(tmp_path / "cache")])  # fmt: skip

        async def go() -> tuple[list[Any], list[Any]]:
            with open(log, "w") as errlog:
                async with Client(stdio_client(params, errlog=errlog)) as client:
                    tools = (await client.list_tools()).tools
                    return tools, [await client.call_tool(name, arguments) for name, arguments in calls]

        tools, (fetched, absent, planned, refused, spent, described) = anyio.run(go)
    assert not fetched.is_error and fetched.structured_content["provenance"]["credits spent"] == 21
    assert absent.structured_content["total_rows"] == 0 and "999999999" in absent.content[0].text
    assert planned.structured_content["estimate"] == 100 and not planned.is_error
    assert refused.is_error and "InvalidParameterError" in refused.content[0].text
    kept = open_cache(str(tmp_path / "cache"), None).ledger.read()
    assert set(kept["service"]) == {"service"}
    assert spent.structured_content["credits_spent"] == int(kept["cost"].sum()) == 21
    assert described.structured_content["settings"]["service"] == "service"
    texts = [t.model_dump_json() for t in tools] + [
        r.model_dump_json() for r in (fetched, absent, planned, refused, spent, described)
    ]
    assert not [t for t in [*texts, log.read_text()] if TOKEN in t]


@pytest.mark.mcp
def test_no_output_description_or_error_holds_the_token(spec, tmp_path):
    log = tmp_path / "stderr.log"
    calls = [
        ("describe", {}),
        ("plan", {"function": "metadata_frame", "arguments": {"apps": [TOKEN]}}),
        ("fetch_frame", {"function": "metadata_frame", "arguments": {"apps": NEW_APPS[:1], "api_key": TOKEN}}),
        ("fetch_frame", {"function": "metadata_frame", "arguments": {"apps": NEW_APPS[:2]}, "confirm": True}),
        ("scan", {"table": TOKEN}),
        ("sql", {"query": f"SELECT '{TOKEN}' AS t"}),
        ("sql", {"query": "SELECT * FROM ledger"}),
        ("track_status", {}),
        ("spend", {}),
        ("events", {"since": "2026-10-01"}),
    ]
    tools, results = ask(spec, calls, env=server_env(STOREFRAMES_API_KEY=TOKEN), errlog=log)
    texts = [t.model_dump_json() for t in tools] + [r.model_dump_json() for r in results] + [log.read_text()]
    assert results[1].is_error and results[2].is_error  # refused, the value not shown
    assert not [t for t in texts if TOKEN in t]
    assert not results[3].is_error


@pytest.mark.mcp
def test_spend_equals_the_ledger(spec):
    calls = [
        ("fetch_frame", {"function": "metrics_frame", "arguments": {"apps": NEW_APPS[:2], "metrics": ["ratings"]}, "confirm": True}),
        ("spend", {}),
        ("spend", {"by": "day", "since": "2026-10-01"}),
    ]  # fmt: skip
    _, (_, month, daily) = ask(spec, calls)
    kept = ledger(spec)
    first = datetime(LAST_DAY.year, LAST_DAY.month, 1, tzinfo=UTC)
    november = kept.filter(pl.col("time") >= first)
    assert month.structured_content["credits_spent"] == int(november["cost"].sum())
    per_endpoint = {r["endpoint"]: r["credits_spent"] for r in rows(month)}
    expected = november.group_by("endpoint").agg(pl.col("cost").sum())
    assert per_endpoint == dict(expected.rows())
    assert daily.structured_content["credits_spent"] == int(
        kept.filter(pl.col("time") >= datetime(2026, 10, 1, tzinfo=UTC))["cost"].sum()
    )
    assert (
        month.structured_content["provenance"]["month"]
        == f"{int(november['cost'].sum()):,} of {MONTH_BUDGET:,} credits"
    )


@pytest.mark.mcp
def test_track_status_and_events_are_the_trackers(spec):
    _, (status, found) = ask(spec, [("track_status", {}), ("events", {"since": "2026-10-22", "limit": 200})])
    tracker = sf.Tracker.from_toml(spec, sandbox=True)
    expected = tracker.status(LAST_DAY)
    assert status.structured_content["month_spent"] == expected.month_spent
    assert [r["item"] for r in rows(status)] == expected.items["item"].to_list()
    assert status.structured_content["runs"] == 30
    assert status.structured_content["missing"] == expected.missing == {}  # a month run every day: no day missing
    kept = sf.events(spec.parent / "cache", tracker=TRACKER, since="2026-10-22")
    assert found.structured_content["total_rows"] == kept.height > 0
    assert sorted(r["detail"] for r in rows(found)) == sorted(kept["detail"].to_list())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.processes
def test_over_streamable_http_on_loopback(spec, tmp_path):
    port = _free_port()
    command, args = server_command(spec, "--transport", "http", "--port", str(port))
    owner = "the-owner-s-bearer-token-0123456789abcdef"
    with open(tmp_path / "http.log", "w") as log:
        env = server_env(STOREFRAMES_MCP_TOKEN=owner)
        process = subprocess.Popen([command, *args], env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                    break
                except OSError:
                    assert process.poll() is None, (tmp_path / "http.log").read_text()
                    time.sleep(0.2)

            async def go() -> tuple[list[Any], Any]:
                http = create_mcp_http_client(headers={"Authorization": f"Bearer {owner}"})
                async with (
                    http,
                    Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as client,
                ):
                    tools = (await client.list_tools()).tools
                    return tools, await client.call_tool(
                        "plan", {"function": "search_frame", "arguments": {"keywords": ["maps"]}}
                    )

            tools, planned = anyio.run(go)
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
            headers = {
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                "Authorization": f"Bearer {owner}",  # the owner's: only the Host or Origin is wrong
            }
            rebound = httpx.post(f"http://127.0.0.1:{port}/mcp", json=body, headers={**headers, "Host": "evil.example"})
            foreign = httpx.post(
                f"http://127.0.0.1:{port}/mcp", json=body, headers={**headers, "Origin": "https://evil.example"}
            )
        finally:
            process.terminate()
            process.wait(timeout=30)
    assert {t.name for t in tools} == TOOLS
    assert (rebound.status_code, foreign.status_code) == (421, 403)  # a web page's DNS rebinding reaches nothing
    assert planned.structured_content["estimate"] == 10 and planned.structured_content["to_send"] == 1


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--transport", "http", "--host", "0.0.0.0"], "loopback"),
        (["--today", "2026-11-20"], "--sandbox"),
        (["--budget", "-5"], "credits >= 0"),
    ],
)
@pytest.mark.processes
@pytest.mark.mcp
def test_the_command_refuses_bad_input_before_it_serves(tmp_path, flags, said):
    done = subprocess.run([sys.executable, "-m", "storeframes", "mcp", "--cache-dir", str(tmp_path), *flags],
                          env=server_env(), capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 2
    assert said in done.stderr


def test_the_ten_everyday_questions_get_the_notebooks_answers(tmp_path):
    from ..evaluation.agent_questions import evaluate

    summary = evaluate(tmp_path / "month")
    unequal = [(q["question"], q["answer"], q["expected"], q["errors"]) for q in summary["answers"] if not q["equal"]]
    assert not unequal
    assert summary["questions"] == 10


def test_two_servers_on_one_cache_never_pass_the_month_budget_together(spec):
    """Two servers of one tracker (two threads here, each with its own client; two processes or machines take
    the same lease through the cache) each want benchmarks that fit what is left of the month, but not both:
    a paid call is judged and sent under the month's lease, so the second sees the first's spend."""
    import threading

    from storeframes.agent import open_surface

    november = datetime(LAST_DAY.year, LAST_DAY.month, 1, tzinfo=UTC)
    left = MONTH_BUDGET - int(ledger(spec).filter(pl.col("time") >= november)["cost"].sum())
    assert 2 * 1001 <= left < 4 * 1001  # either call fits alone (two countries, 1,001 credits each); not both
    surfaces = [
        open_surface(tracker=spec, sandbox=True, today=LAST_DAY, budget=100_000, confirm_above=0, latency=0.4)
        for _ in range(2)
    ]
    start = threading.Barrier(2)
    results: list[Any] = [None, None]

    def fetch(n: int, countries: list[str]) -> None:
        surface = surfaces[n]
        start.wait()
        call = {"countries": countries, "channels": "search"}
        results[n] = surface.run("fetch_frame", lambda: surface.fetch_frame("benchmarks_frame", call, confirm=True))

    threads = [
        threading.Thread(target=fetch, args=(0, ["us", "gb"])),
        threading.Thread(target=fetch, args=(1, ["de", "fr"])),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert sorted(r.error for r in results) == [False, True]
    refused = next(r for r in results if r.error)
    assert "month budget" in refused.text and refused.data["refused"] is True
    spent = int(ledger(spec).filter(pl.col("time") >= november)["cost"].sum())
    assert spent == MONTH_BUDGET - left + 2002 <= MONTH_BUDGET
    for surface in surfaces:
        surface.client.close()


def test_assistants_calling_at_once_never_pass_the_session_budget_together(spec):
    """Calls of several assistants (the HTTP transport serves them at once, on threads): each paid call is judged
    and sent in turn, so 4 calls of 11 credits each within a budget of 30 buy exactly 2."""
    import threading

    from storeframes.agent import open_surface

    surface = open_surface(tracker=spec, sandbox=True, today=LAST_DAY, budget=30, confirm_above=0, latency=0.3)
    start = threading.Barrier(4)
    results: list[Any] = [None] * 4

    def fetch(n: int) -> None:
        start.wait()
        call = {"apps": [NEW_APPS[n]]}
        results[n] = surface.run("fetch_frame", lambda: surface.fetch_frame("metadata_frame", call, confirm=True))

    threads = [threading.Thread(target=fetch, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert sorted(r.error for r in results) == [False, False, True, True]
    assert surface.gate.spent == 22 <= 30
    surface.client.close()
