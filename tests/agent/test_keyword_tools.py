"""The assistant's ``share_of_voice``, ``keyword_opportunities`` and ``rank_anomalies`` as plain methods (no SDK):
each answers with the function of ``storeframes.analysis`` of the same name called on the frames the cache keeps,
never sends a request, refuses a bad argument before it reads anything, says what the cache does not keep, and
gives app titles and the ``why``/``cause`` texts only among its rows (marked as data by the server).

The cache: 60 days of the sandbox's search history of three keywords, the live search with ads of the first one
on the last five days, the apps' metadata on two days and their change history: a few seconds to fetch.
"""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import storeframes as sf
from storeframes.agent import open_surface
from storeframes.agent.surface import Surface
from storeframes.agent.tools import NothingKeptError
from storeframes.agent.untrusted import NOTE, WRAPPER, marked
from storeframes.analysis import keyword_opportunities, rank_anomalies, share_of_voice
from storeframes.cache import Cache, open_cache
from storeframes.errors import InvalidParameterError
from storeframes.kept import kept_changes
from storeframes.sandbox import client as sandbox_client

from .._agent_month import APP, APPS, COMPETITORS, KEYWORDS, LAST_DAY

SERVICE = "sandbox-0"
FIRST = LAST_DAY - timedelta(days=29)
LIVE = KEYWORDS[0]
"""The keyword whose live search with ads is kept (its ranks are read from those snapshots)."""
HISTORY_ONLY = KEYWORDS[1:]


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("keywords") / "cache"
    with sandbox_client(today=LAST_DAY, cache_dir=folder, progress=False) as client:
        client.search_history_frame(KEYWORDS, start=LAST_DAY - timedelta(days=60), end=LAST_DAY - timedelta(days=1))
        client.changes_frame(APPS, start=LAST_DAY - timedelta(days=90))
    for n in (30, 0):
        with sandbox_client(today=LAST_DAY - timedelta(days=n), cache_dir=folder, progress=False) as client:
            client.metadata_frame(APPS)
    for n in range(4, -1, -1):
        with sandbox_client(today=LAST_DAY - timedelta(days=n), cache_dir=folder, progress=False) as client:
            client.search_frame([LIVE], ads=True)
    return folder


@pytest.fixture
def surface(cache: Path) -> Any:
    made = open_surface(cache, sandbox=True, today=LAST_DAY, offline=True)
    yield made
    made.client.close()


def kept_history(cache: Path, keywords: list[str], first: date, last: date) -> pl.DataFrame:
    """The organic ranks the cache keeps, read with the package's own readers: the live keyword's snapshots (ads
    left out, the rank in the organic list), the others' recorded history."""
    live = (
        sf.snapshots("search", cache, start=first, end=last, service=SERVICE)
        .filter(pl.col("keyword").is_in([k for k in keywords if k == LIVE]) & ~pl.col("is_ad").fill_null(False))
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
    history = (
        sf.scan("search_history", cache, service=SERVICE)
        .filter(pl.col("keyword").is_in([k for k in keywords if k != LIVE]) & (pl.col("source") == "history"))
        .filter(pl.col("date").is_between(first, last))
        .select(live.columns)
        .collect()
    )
    return pl.concat([live, history])


def names(cache: Path) -> pl.DataFrame:
    return (
        sf.scan("metadata", cache, service=SERVICE).select("app_id", "title", "country", "language", "device").collect()
    )


def frame(shown: Any) -> pl.DataFrame:
    return pl.DataFrame(shown.data["rows"], infer_schema_length=None)


def test_share_of_voice_is_the_functions_on_the_kept_ranks(surface, cache):
    for weights in ("equal", "ctr"):
        shown = surface.share_of_voice(
            KEYWORDS,
            start=FIRST,
            end=LAST_DAY,
            weights=weights,
            limit=200,
            columns=["date", "app_id", "share", "positions", "keywords"],
        )
        expected = share_of_voice(kept_history(cache, KEYWORDS, FIRST, LAST_DAY), weights=weights)
        assert shown.data["total_rows"] == expected.height > 200
        got = {(r["date"], r["app_id"]): (r["share"], r["positions"], r["keywords"]) for r in shown.data["rows"]}
        want = {
            (d.isoformat(), a): (s, p, k)
            for d, a, s, p, k in expected.select("date", "app_id", "share", "positions", "keywords").iter_rows()
        }
        assert got.items() <= want.items()
        assert [r["date"] for r in shown.data["rows"]][0] == LAST_DAY.isoformat()  # the latest day first
        assert shown.data["provenance"]["requests sent"] == 0
        assert any(f"weights {weights}" in n for n in shown.data["notes"])
    titled = surface.share_of_voice(KEYWORDS[1], apps=[APP, *COMPETITORS[:1]], start=FIRST, end=LAST_DAY)
    assert set(frame(titled)["app_id"]) == {APP, COMPETITORS[0]}
    titles = dict(names(cache).select("app_id", "title").unique("app_id").iter_rows())
    assert {r["app_id"]: r["app_title"] for r in titled.data["rows"]} == {a: titles[a] for a in (APP, COMPETITORS[0])}
    means = next(n for n in titled.data["notes"] if n.startswith("mean daily share"))
    assert titles[APP] not in means and APP in means  # ids in the server's words, titles only in the rows


def test_keyword_opportunities_is_the_functions_with_the_kept_ads_and_changes(surface, cache):
    shown = surface.keyword_opportunities(APP, COMPETITORS, start=FIRST, end=LAST_DAY, top=10)
    ads = sf.snapshots("search_ads", cache, start=FIRST, end=LAST_DAY, service=SERVICE).collect()
    history, seen = kept_changes(opened(cache), SERVICE, COMPETITORS, FIRST, LAST_DAY)
    changes = pl.concat([history, seen.join(history, on=["app_id", "date", "target"], how="anti")]).filter(
        pl.col("target") != "size"
    )
    expected = keyword_opportunities(
        kept_history(cache, KEYWORDS, FIRST, LAST_DAY), APP, COMPETITORS, top=10, ads=ads, changes=changes
    )
    got = frame(shown)
    assert got.height == expected.height == len(KEYWORDS)
    assert got["keyword"].to_list() == expected["keyword"].to_list()  # best score first
    for column in (
        "score",
        "app_rank",
        "best_competitor",
        "best_competitor_rank",
        "competitors_in_top",
        "advertisers",
        "competitor_changes",
        "why",
    ):
        assert got[column].to_list() == expected[column].to_list(), column
    live = got.filter(pl.col("keyword") == LIVE)
    assert live["advertisers"][0] is not None and live["advertisers"][0] >= 1
    titles = dict(names(cache).select("app_id", "title").unique("app_id").iter_rows())
    assert got["best_competitor_title"].to_list() == [titles.get(a) for a in got["best_competitor"]]
    assert shown.data["provenance"]["requests sent"] == 0


def test_rank_anomalies_is_the_functions_on_the_kept_rank_history(surface, cache):
    start = LAST_DAY - timedelta(days=20)
    shown = surface.rank_anomalies(
        HISTORY_ONLY,
        apps=APPS,
        start=start,
        end=LAST_DAY,
        threshold=2.5,
        weeks=3,
        min_move=3,
        limit=200,
        columns=["keyword", "app_id", "date", "rank", "z", "cause"],
    )
    since = start - timedelta(weeks=3)
    ranks = sf.rank_history(kept_history(cache, HISTORY_ONLY, since, LAST_DAY), APPS, start=since, end=LAST_DAY)
    expected = rank_anomalies(ranks, threshold=2.5, weeks=3, min_move=3).filter(
        pl.col("date").is_between(start, LAST_DAY)
    )
    got = frame(shown)
    assert got.height == expected.height
    key = ["keyword", "app_id", "date"]
    assert sorted(got.select(*key, "rank").rows()) == sorted(
        (k, a, d.isoformat(), r) for k, a, d, r in expected.select(*key, "rank").iter_rows()
    )
    assert all(start.isoformat() <= d <= LAST_DAY.isoformat() for d in got["date"])


def test_bad_arguments_are_refused_before_the_cache_is_read(surface, monkeypatch):
    def read(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the cache was read")

    monkeypatch.setattr(Surface, "ranks", read)
    refusals = [
        (lambda: surface.share_of_voice(top=0), "top", "whole number >= 1"),
        (lambda: surface.share_of_voice(weights="clicks"), "weights", "ctr"),
        (lambda: surface.share_of_voice(by="publisher"), "by", "developer"),
        (lambda: surface.share_of_voice(start="2026-11-20", end="2026-11-01"), "end", "on or after start"),
        (lambda: surface.keyword_opportunities(APP, []), "competitors", "one competitor"),
        (lambda: surface.keyword_opportunities(APP, [APP, COMPETITORS[0]]), "competitors", "other than"),
        (lambda: surface.keyword_opportunities("1, 2", COMPETITORS), "app", "one app id"),
        (lambda: surface.rank_anomalies(threshold=0), "threshold", "above 0"),
        (lambda: surface.rank_anomalies(weeks=0), "weeks", ">= 1"),
        (lambda: surface.rank_anomalies(min_move=0), "min_move", ">= 1"),
        (lambda: surface.rank_anomalies(start="2026-13-01"), "start", "YYYY-MM-DD"),
    ]
    for call, parameter, allowed in refusals:
        with pytest.raises(InvalidParameterError) as refused:
            call()
        assert parameter in str(refused.value) and allowed in str(refused.value), str(refused.value)


def test_the_tools_never_send_a_request(surface, cache, monkeypatch):
    from storeframes.wire.request import Wire

    sent: list[Any] = []
    monkeypatch.setattr(Wire, "send", lambda *a, **k: sent.append(a) or (_ for _ in ()).throw(AssertionError("sent")))
    ledger = open_ledger(cache)
    surface.client.offline = False  # even a client allowed to send: the tools read the cache alone
    calls = {
        "share_of_voice": lambda: surface.share_of_voice(KEYWORDS, start=FIRST, end=LAST_DAY),
        "keyword_opportunities": lambda: surface.keyword_opportunities(APP, COMPETITORS, start=FIRST, end=LAST_DAY),
        "rank_anomalies": lambda: surface.rank_anomalies(KEYWORDS, start=FIRST, end=LAST_DAY),
    }
    for name, call in calls.items():
        result = surface.run(name, call)
        assert not result.error, result.text
    assert sent == [] and surface.client.spent == 0 and surface.gate.spent == 0
    assert open_ledger(cache).height == ledger.height


def opened(cache: Path) -> Cache:
    found = open_cache(str(cache), None)
    assert found is not None
    return found


def open_ledger(cache: Path) -> pl.DataFrame:
    return opened(cache).ledger.read()


def test_an_empty_cache_says_what_is_missing(tmp_path):
    surface = open_surface(tmp_path / "empty", sandbox=True, today=LAST_DAY)
    try:
        for call in (
            lambda: surface.share_of_voice(KEYWORDS),
            lambda: surface.keyword_opportunities(APP, COMPETITORS),
            lambda: surface.rank_anomalies(),
        ):
            with pytest.raises(NothingKeptError, match="no search results are kept for") as said:
                call()
            assert "search_history" in str(said.value)
        result = surface.run("rank_anomalies", lambda: surface.rank_anomalies(KEYWORDS[:1], country="gb"))
        assert result.error and "no search results are kept for" in result.text and "country=gb" in result.text
    finally:
        surface.client.close()


def test_what_the_cache_does_not_keep_is_said_not_counted(surface):
    shown = surface.keyword_opportunities(APP, COMPETITORS, HISTORY_ONLY, start=FIRST, end=LAST_DAY)
    got = frame(shown)
    assert got["advertisers"].null_count() == got.height == len(HISTORY_ONLY)  # never 0: not known
    assert any(n.startswith("no with-ads snapshots are kept") for n in shown.data["notes"])
    assert any("ad term out" in n for n in shown.data["notes"])
    with pytest.raises(NothingKeptError, match="from 2025-12-04 to 2026-01-31"):  # the baselines' weeks included
        surface.rank_anomalies(HISTORY_ONLY, apps=APPS, start="2026-01-01", end="2026-01-31")

    unseen = ["2787512886", "361252007"]  # apps of the sandbox the cache keeps neither metadata nor changes of
    alone = surface.keyword_opportunities(APP, unseen, HISTORY_ONLY, start=FIRST, end=LAST_DAY)
    assert frame(alone)["competitor_changes"].null_count() == len(HISTORY_ONLY)
    assert any(n.startswith("no changes are kept for these apps") for n in alone.data["notes"])
    watched = surface.keyword_opportunities(APP, COMPETITORS, HISTORY_ONLY, start=FIRST, end=LAST_DAY)
    assert frame(watched)["competitor_changes"].null_count() == 0  # kept: a count, 0 where none was made

    # the live keyword is kept five days: no day has the two same weekdays a baseline needs, and that is said
    short = surface.rank_anomalies([LIVE], apps=APPS, start=LAST_DAY - timedelta(days=4), end=LAST_DAY)
    assert short.data["total_rows"] == 0
    judged = " ".join(short.data["notes"])
    assert f"no day from {LAST_DAY - timedelta(days=4)} to {LAST_DAY} can be judged" in judged
    assert f"its ranks kept from {LAST_DAY - timedelta(days=4)}" in judged
    assert "no anomaly" not in judged  # not a calm week: a week that could not be judged
    calm = surface.rank_anomalies(
        HISTORY_ONLY, apps=[APP], start=LAST_DAY - timedelta(days=6), end=LAST_DAY, threshold=1000
    )
    assert calm.data["total_rows"] == 0
    assert any(n.startswith(f"no anomaly from {LAST_DAY - timedelta(days=6)}") for n in calm.data["notes"])


def test_share_of_voice_by_developer_adds_up_the_developers_apps(surface, cache):
    shown = surface.share_of_voice(HISTORY_ONLY, start=FIRST, end=LAST_DAY, by="developer", weights="equal", limit=200)
    metadata = sf.scan("metadata", cache, service=SERVICE).collect()
    expected = share_of_voice(
        kept_history(cache, HISTORY_ONLY, FIRST, LAST_DAY), weights="equal", by="developer", metadata=metadata
    )
    assert shown.data["total_rows"] == expected.height
    got = {(r["date"], r["developer_id"]): (r["share"], r["developer_name"]) for r in shown.data["rows"]}
    want = {
        (d.isoformat(), i): (v, n)
        for d, i, n, v in expected.select("date", "developer_id", "developer_name", "share").iter_rows()
    }
    assert got.items() <= want.items()
    assert [n for _, n in got.values() if n]  # the developers' names, among the rows (marked by the server)


def test_app_titles_and_causes_are_among_the_rows_the_server_marks(surface, cache):
    shown = surface.keyword_opportunities(APP, COMPETITORS, start=FIRST, end=LAST_DAY)
    done = marked("keyword_opportunities", shown)
    assert done.data[WRAPPER]["note"] == NOTE and "rows" not in done.data
    titles = [t for t in frame(shown)["best_competitor_title"] if t]
    assert titles
    words = " ".join([shown.data["title"], *shown.data["notes"]])
    assert not [t for t in titles if t in words]  # never among the server's own words
    lines = done.text.split("\n")
    inside = [n for n, line in enumerate(lines) if line.startswith("|")]
    assert lines[inside[0] - 1].startswith(f"<{WRAPPER} boundary=") and lines[inside[-1] + 1].startswith(f"</{WRAPPER}")
    for tool in ("share_of_voice", "rank_anomalies"):
        assert marked(tool, shown).data.get(WRAPPER), tool
