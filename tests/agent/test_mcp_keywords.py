"""``share_of_voice``, ``keyword_opportunities`` and ``rank_anomalies`` as an assistant meets them: the server
started by the ``mcp`` SDK's own client over stdio, against a month of the tracking notebook's tracker replayed
on the sandbox with the live search with ads of its keywords kept too. Each answer equals the function of
``storeframes.analysis`` called on the frames the cache keeps (read here with ``sf.snapshots`` and
``sf.observed_changes``), the ledger has no new row, the app titles and the ``why``/``cause`` texts are inside the
marked data; over an empty cache each tool says what is missing."""

from __future__ import annotations

import json
import re
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest

pytest.importorskip("mcp")

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

import storeframes as sf
from storeframes.analysis import keyword_opportunities, rank_anomalies, share_of_voice
from storeframes.cache import open_cache

from .._agent_month import APP, APPS, COMPETITORS, KEYWORDS, LAST_DAY, replay, rows, server_command, server_env

pytestmark = [pytest.mark.slow, pytest.mark.mcp]

SERVICE = "sandbox-0"
WRAPPER = "untrusted_third_party_data"
FIRST = LAST_DAY - timedelta(days=29)
ADS = f"""
[[track]]
endpoint = "search_ads"
keywords = {json.dumps(KEYWORDS)}
"""
"""The month's tracker, with the live search with ads of its keywords kept each day too."""


@pytest.fixture(scope="module")
def spec(tmp_path_factory) -> Path:
    return replay(tmp_path_factory.mktemp("month"), extra=ADS)


def ledger(spec: Path) -> pl.DataFrame:
    cache = open_cache(str(spec.parent / "cache"), None)
    assert cache is not None
    return cache.ledger.read()


def ask(
    command: str, args: list[str], cwd: Path, calls: list[tuple[str, dict[str, Any]]]
) -> tuple[list[Any], list[Any]]:
    params = StdioServerParameters(command=command, args=args, env=server_env(), cwd=str(cwd))

    async def go() -> tuple[list[Any], list[Any]]:
        with open(cwd / "server.log", "a", encoding="utf-8") as log:
            async with Client(stdio_client(params, errlog=log)) as client:
                tools = (await client.list_tools()).tools
                return tools, [await client.call_tool(name, arguments) for name, arguments in calls]

    return anyio.run(go)


def kept_ranks(cache: Path) -> pl.DataFrame:
    """The organic list of each day's live search the tracker kept (it follows every keyword live)."""
    return (
        sf.snapshots("search", cache, start=FIRST, end=LAST_DAY, service=SERVICE)
        .filter((pl.col("list") == "organic") & ~pl.col("is_ad").fill_null(False) & pl.col("keyword").is_in(KEYWORDS))
        .select(
            "keyword",
            date="snapshot_date",
            rank=pl.coalesce("organic_rank", "rank").cast(pl.Int64),
            app_id="app_id",
            country="country",
            language="language",
            device="device",
        )
        .collect()
    )


def outside_markers(text: str) -> str:
    block = re.compile(rf'<{WRAPPER} boundary="([0-9a-f]{{16}})">.*?</{WRAPPER} boundary="\1">', re.S)
    return block.sub("", text)


CALLS = [
    (
        "share_of_voice",
        {
            "keywords": KEYWORDS,
            "start": FIRST.isoformat(),
            "end": LAST_DAY.isoformat(),
            "weights": "equal",
            "limit": 200,
        },
    ),
    (
        "keyword_opportunities",
        {
            "app": APP,
            "competitors": COMPETITORS,
            "keywords": KEYWORDS,
            "start": FIRST.isoformat(),
            "end": LAST_DAY.isoformat(),
        },
    ),
    (
        "rank_anomalies",
        {
            "keywords": KEYWORDS,
            "apps": APPS,
            "start": (LAST_DAY - timedelta(days=13)).isoformat(),
            "end": LAST_DAY.isoformat(),
            "weeks": 2,
            "threshold": 2.5,
            "min_move": 2,
            "limit": 200,
            "columns": ["keyword", "app_id", "app_title", "date", "rank", "move", "cause"],
        },
    ),
]


def test_the_three_tools_answer_from_the_kept_month_for_free_and_mark_what_publishers_wrote(spec, tmp_path):
    cache = spec.parent / "cache"
    before = ledger(spec).height
    command, args = server_command(spec)
    tools, (voice, chances, odd) = ask(command, args, spec.parent, CALLS)
    assert ledger(spec).height == before  # not a request, not even a cache hit written
    by_name = {tool.name: tool for tool in tools}
    for name, _ in CALLS:
        assert by_name[name].annotations.read_only_hint is True and by_name[name].annotations.open_world_hint is False
        assert "Free: reads the cache, never sends a request." in " ".join((by_name[name].description or "").split())
    for result in (voice, chances, odd):
        assert not result.is_error, result.content[0].text
        assert result.structured_content["provenance"]["requests sent"] == 0

    ranks = kept_ranks(cache)
    expected = share_of_voice(ranks, weights="equal")
    assert voice.structured_content["total_rows"] == expected.height
    want = {
        (d.isoformat(), a): (s, p) for d, a, s, p in expected.select("date", "app_id", "share", "positions").iter_rows()
    }
    assert {(r["date"], r["app_id"]): (r["share"], r["positions"]) for r in rows(voice)}.items() <= want.items()

    ads = sf.snapshots("search_ads", cache, start=FIRST, end=LAST_DAY, service=SERVICE).collect()
    seen = sf.observed_changes(cache, apps=COMPETITORS, start=FIRST, end=LAST_DAY, service=SERVICE)
    history = sf.scan("changes", cache, service=SERVICE).collect()  # the tracker keeps no change history
    assert history.is_empty()
    found = keyword_opportunities(ranks, APP, COMPETITORS, ads=ads, changes=seen.filter(pl.col("target") != "size"))
    assert [(r["keyword"], r["score"], r["app_rank"], r["advertisers"], r["why"]) for r in rows(chances)] == (
        found.select("keyword", "score", "app_rank", "advertisers", "why").rows()
    )
    assert all(r["advertisers"] is not None for r in rows(chances))

    start = LAST_DAY - timedelta(days=13)
    since = start - timedelta(weeks=2)
    judged = sf.rank_history(
        sf.snapshots("search", cache, start=since, end=LAST_DAY, service=SERVICE)
        .filter((pl.col("list") == "organic") & ~pl.col("is_ad").fill_null(False) & pl.col("keyword").is_in(KEYWORDS))
        .with_columns(date=pl.col("snapshot_date"))
        .collect(),
        APPS,
        start=since,
        end=LAST_DAY,
    )
    changes = sf.observed_changes(cache, apps=APPS, start=since - timedelta(days=7), end=LAST_DAY, service=SERVICE)
    anomalies = rank_anomalies(
        judged, threshold=2.5, weeks=2, min_move=2, ads=ads, changes=changes.filter(pl.col("target") != "size")
    ).filter(pl.col("date") >= start)
    assert sorted(
        (r["keyword"], r["app_id"], r["date"], r["rank"], r["move"], r["cause"]) for r in rows(odd)
    ) == sorted(
        (k, a, d.isoformat(), r, m, c)
        for k, a, d, r, m, c in anomalies.select("keyword", "app_id", "date", "rank", "move", "cause").iter_rows()
    )

    assert rows(odd) and [r for r in rows(odd) if r["cause"]]  # the month has anomalies, some with a cause
    titles = set(sf.scan("metadata", cache, service=SERVICE).collect()["title"])
    for result in (voice, chances, odd):
        data = result.structured_content
        assert "rows" not in data and data[WRAPPER]["rows"] is not None
        rest = json.dumps({k: v for k, v in data.items() if k != WRAPPER})
        outside = outside_markers(result.content[0].text)
        assert not [t for t in titles if t in rest or t in outside]  # publishers' text only inside the marked data
    held = json.dumps([voice.structured_content[WRAPPER], chances.structured_content[WRAPPER]])
    assert [t for t in titles if t in held]
    texts = [r["why"] for r in rows(chances)] + [r["cause"] for r in rows(odd) if r["cause"]]
    assert texts and not [t for t in texts if t in outside_markers(chances.content[0].text + odd.content[0].text)]

    empty = tmp_path / "empty"
    command = [
        sys.executable,
        "-m",
        "storeframes",
        "mcp",
        "--cache-dir",
        str(empty),
        "--sandbox",
        "--today",
        LAST_DAY.isoformat(),
    ]
    _, missing = ask(command[0], command[1:], tmp_path, CALLS)
    for result in missing:
        assert result.is_error
        said = result.content[0].text
        assert "NothingKeptError: no search results are kept for" in said and "search_history" in said, said
