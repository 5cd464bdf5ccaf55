"""The cache, against the sandbox, counting the requests that reach it."""

from __future__ import annotations

import json
import multiprocessing
import tempfile
import warnings
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

import storeframes as sf
from storeframes.sandbox import SandboxService, World
from storeframes.wire.http import lib as httpx
from tests.cache.test_cache_format import read_answer
from tests.conftest import SANDBOX_TODAY

WORLD = World(0)
IOS = list(WORLD.EXAMPLE_IOS_APPS)
MORE_IOS = [a for a in WORLD.app_ids("ios") if a not in IOS and a not in WORLD.UNAVAILABLE_IN_US][:40]
KEYWORD = WORLD.EXAMPLE_KEYWORDS[0]
GONE = next(a for a in WORLD.UNAVAILABLE_IN_US if a.isdigit())
NOON = datetime.combine(SANDBOX_TODAY, datetime.min.time(), UTC) + timedelta(hours=12)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: datetime = NOON):
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


def sandbox(folder: Path, clock: Clock | None = None, **options) -> sf.Client:
    options.setdefault("backoff", (0.001, 0.01))
    return sf.sandbox.client(today=SANDBOX_TODAY, cache_dir=folder, clock=clock or Clock(), **options)


def sent(client: sf.Client) -> list[dict[str, str]]:
    """The query of every request that reached the sandbox."""
    return [dict(a.params) for a in client.sandbox_service.arrivals]


def fresh(endpoint: str, **params):
    """The same call answered by a sandbox with no cache at all."""
    with sf.sandbox.client(today=SANDBOX_TODAY) as client:
        return client.get(endpoint, **params)


# -- never pay twice ----------------------------------------------------------------------


def test_a_repeated_call_sends_nothing_and_says_what_it_saved(tmp_path):
    client = sandbox(tmp_path)
    first = client.get("metadata", apps=IOS)
    assert len(sent(client)) == 2 and first.cost == 2 + 10 * len(IOS) and not first.from_cache

    again = client.get("metadata", apps=list(reversed(IOS)))
    assert len(sent(client)) == 2
    assert again.from_cache and again.cost == 0 and again.saved == first.cost
    assert again.result == first.result
    ledger = client.ledger
    assert ledger["from_cache"].to_list() == [False, False, True, True]
    assert ledger.filter(pl.col("from_cache"))["saved"].sum() == first.cost
    assert ledger.filter(pl.col("from_cache"))["cost"].sum() == 0


def test_a_new_client_on_the_same_folder_reads_what_the_first_fetched(tmp_path):
    first = sandbox(tmp_path).get("search", keyword=KEYWORD)
    second = sandbox(tmp_path)
    answer = second.get("search", keyword=KEYWORD)
    assert sent(second) == [] and answer.result == first.result
    assert answer.responses[0].from_cache and answer.responses[0].fetched_at == first.responses[0].fetched_at


def test_a_wider_range_sends_one_request_for_only_the_new_days(tmp_path):
    client = sandbox(tmp_path)
    apps = IOS[:3]
    client.get("changes", apps=apps, start_date="2026-10-01", end_date="2026-10-30")
    wider = client.get("changes", apps=apps, start_date="2026-09-24", end_date="2026-10-30")
    assert sent(client)[1:] == [
        {
            "apps": ",".join(sorted(apps)),
            "country": "us",
            "device": "iphone",
            "start_date": "2026-09-24",
            "end_date": "2026-09-30",
        }
    ]
    assert wider.cost == 1 + 3 * (10 + 7)  # the price of 7 days, not 37
    assert wider.saved == 1 + 3 * (10 + 30)
    expected = fresh("changes", apps=apps, start_date="2026-09-24", end_date="2026-10-30")
    assert wider.result == expected.result
    assert sum(len(v["changes"]) for v in wider.result.values()) > 0


def test_a_narrower_range_is_cut_from_the_cached_answer(tmp_path):
    client = sandbox(tmp_path)
    client.get("changes", apps=IOS[:2], start_date="2026-09-01", end_date="2026-10-30")
    narrow = client.get("changes", apps=IOS[:2], start_date="2026-09-10", end_date="2026-09-20")
    assert len(sent(client)) == 1
    assert narrow.result == fresh("changes", apps=IOS[:2], start_date="2026-09-10", end_date="2026-09-20").result
    dates = {c["date"] for v in narrow.result.values() for c in v["changes"]}
    assert dates and all("2026-09-10" <= d <= "2026-09-20" for d in dates)


def test_missing_days_on_both_sides_become_two_requests(tmp_path):
    client = sandbox(tmp_path)
    client.get("search_history", keyword=KEYWORD, start_date="2026-10-10", end_date="2026-10-20")
    client.get("search_history", keyword=KEYWORD, start_date="2026-10-01", end_date="2026-10-31")
    ranges = [(p["start_date"], p["end_date"]) for p in sent(client)[1:]]
    assert sorted(ranges) == [("2026-10-01", "2026-10-09"), ("2026-10-21", "2026-10-31")]


def test_apps_missing_the_same_range_are_packed_five_to_a_request(tmp_path):
    client = sandbox(tmp_path)
    apps = MORE_IOS[:12]
    client.get("changes", apps=apps[:2], start_date="2026-10-01", end_date="2026-10-30")
    client.get("changes", apps=apps, start_date="2026-10-01", end_date="2026-10-30")
    later = sent(client)[1:]
    assert [len(p["apps"].split(",")) for p in later] == [5, 5]
    assert set(",".join(p["apps"] for p in later).split(",")) == set(apps[2:])


def test_only_the_missing_metrics_and_apps_are_fetched(tmp_path):
    client = sandbox(tmp_path)
    client.get("metrics", apps=IOS[:3], metrics=["downloads", "ratings"])
    answer = client.get("metrics", apps=IOS[:4], metrics=["downloads", "ratings", "power"])
    later = sorted(sent(client)[1:], key=lambda p: p["apps"])
    assert [(p["apps"], p["metrics"]) for p in later] == sorted(
        [(",".join(sorted(IOS[:3])), "app-power"), (IOS[3], "downloads,app-power,ratings")]
    )
    expected = fresh("metrics", apps=IOS[:4], metrics=["downloads", "ratings", "power"])
    assert answer.result == expected.result


def test_two_calls_needing_the_same_request_send_it_once(tmp_path):
    client = sandbox(tmp_path)
    answers = client.get_many("search", [{"keyword": KEYWORD}, {"keyword": f"  {KEYWORD} "}])
    assert len(sent(client)) == 1 and answers[0].result == answers[1].result


# -- freshness ---------------------------------------------------------------------------


def test_current_metadata_is_fresh_for_the_utc_day_it_was_fetched(tmp_path):
    clock = Clock(NOON)
    client = sandbox(tmp_path, clock)
    client.get("metadata", apps=IOS[0])
    clock.advance(hours=11, minutes=59)
    client.get("metadata", apps=IOS[0])
    assert len(sent(client)) == 1
    clock.advance(minutes=2)  # past midnight UTC
    client.get("metadata", apps=IOS[0])
    assert len(sent(client)) == 2


def test_a_live_search_is_fresh_for_an_hour(tmp_path):
    clock = Clock(NOON)
    client = sandbox(tmp_path, clock)
    client.get("search", keyword=KEYWORD)
    clock.advance(minutes=59)
    client.get("search", keyword=KEYWORD)
    assert len(sent(client)) == 1
    clock.advance(minutes=2)
    client.get("search", keyword=KEYWORD)
    assert len(sent(client)) == 2


def test_final_history_days_are_never_fetched_again_recent_ones_are(tmp_path):
    clock = Clock(NOON)
    client = sandbox(tmp_path, clock)
    end = SANDBOX_TODAY - timedelta(days=1)
    client.get("search_history", keyword=KEYWORD, start_date=end - timedelta(days=29), end_date=end)
    clock.advance(days=30)
    client.get("search_history", keyword=KEYWORD, start_date=end - timedelta(days=29), end_date=end)
    # only the days that were younger than the 2-day settle window when fetched
    assert sent(client)[1:] == [
        {
            "keyword": KEYWORD,
            "country": "us",
            "device": "iphone",
            "start_date": (SANDBOX_TODAY - timedelta(days=1)).isoformat(),
            "end_date": end.isoformat(),
        }
    ]
    clock.advance(days=30)
    client.get("search_history", keyword=KEYWORD, start_date=end - timedelta(days=29), end_date=end)
    assert len(sent(client)) == 2  # now every day of it is final


def test_an_empty_day_is_remembered_and_not_asked_again(tmp_path):
    clock = Clock(NOON)
    client = sandbox(tmp_path, clock)
    untracked = WORLD.UNTRACKED_KEYWORD
    first = client.get("search_history", keyword=untracked, start_date="2026-09-01", end_date="2026-09-30")
    assert first.result == {}
    quiet = _app_without_changes(client)
    clock.advance(days=365)
    again = client.get("search_history", keyword=untracked, start_date="2026-09-01", end_date="2026-09-30")
    none = client.get("changes", apps=quiet, start_date="2026-09-01", end_date="2026-09-30")
    assert again.result == {} and again.from_cache
    assert none.from_cache and none.result == {quiet: {"changes": []}}
    assert len([p for p in sent(client) if p.get("apps") == quiet]) == 1


def _app_without_changes(client: sf.Client) -> str:
    start, end = date(2026, 9, 1), date(2026, 9, 30)
    for app in MORE_IOS:
        if not WORLD.changes(app, device="iphone", country="us", language="en", start=start, end=end):
            answer = client.get("changes", apps=app, start_date=start, end_date=end)
            assert answer.result == {app: {"changes": []}}
            return app
    raise AssertionError("no app without changes in September")


def test_freshness_can_be_overridden_per_endpoint(tmp_path):
    clock = Clock(NOON)
    client = sandbox(tmp_path, clock, freshness={"search": sf.Freshness(current=timedelta(minutes=5))})
    client.get("search", keyword=KEYWORD)
    clock.advance(minutes=6)
    client.get("search", keyword=KEYWORD)
    assert len(sent(client)) == 2
    with pytest.raises(sf.ConfigurationError, match="unknown endpoints"):
        sf.Client(cache_dir=False, freshness={"serch": sf.Freshness()})


# -- refresh, offline, plan -----------------------------------------------------------------


def test_refresh_always_fetches_again_and_never_serves_stale_answers(tmp_path):
    clock = Clock(NOON)
    client = sandbox(tmp_path, clock)
    client.get("search", keyword=KEYWORD)
    client.get("search", keyword=KEYWORD, refresh="always")
    assert len(sent(client)) == 2
    clock.advance(days=3)
    stale = client.get("search", keyword=KEYWORD, refresh="never")
    assert stale.from_cache and len(sent(client)) == 2
    with pytest.raises(sf.NotCachedError, match='refresh="never"'):
        client.get("search", keyword="never asked", refresh="never")
    with pytest.raises(sf.InvalidParameterError, match="refresh"):
        client.get("search", keyword=KEYWORD, refresh="sometimes")
    assert len(sent(client)) == 2


def test_offline_raises_with_the_missing_requests_and_their_cost(tmp_path):
    sandbox(tmp_path).get("changes", apps=IOS[:2], start_date="2026-10-01", end_date="2026-10-30")
    offline = sandbox(tmp_path, offline=True)
    cached = offline.get("changes", apps=IOS[:2], start_date="2026-10-05", end_date="2026-10-25")
    assert cached.from_cache
    with pytest.raises(sf.NotCachedError) as caught:
        offline.get("changes", apps=IOS[:3], start_date="2026-09-29", end_date="2026-10-30")
    error = caught.value
    assert sent(offline) == []
    plan = offline.plan("changes", apps=IOS[:3], start_date="2026-09-29", end_date="2026-10-30")
    assert error.requests == [json.loads(p) for p in plan.requests.filter(pl.col("source") == "send")["params"]]
    assert len(error.requests) == 2  # two new days for the cached apps, the whole range for the third
    assert error.estimate == sum(sf.catalog.DEFAULT_COSTS["changes"].estimate(r) for r in error.requests)
    assert "offline" in str(error) and "start_date=2026-09-29" in str(error)


def test_offline_serves_stale_answers_so_a_cache_folder_reproduces_any_day(tmp_path):
    clock = Clock(NOON)
    sandbox(tmp_path, clock).get("search", keyword=KEYWORD)
    clock.advance(days=30)  # a live search is fresh for an hour
    offline = sandbox(tmp_path, clock, offline=True)
    answer = offline.get("search", keyword=KEYWORD)
    assert answer.from_cache and sent(offline) == []
    with pytest.raises(sf.NotCachedError, match="offline"):
        offline.get("search", keyword=KEYWORD, refresh="always")
    online = sandbox(tmp_path, clock)
    assert not online.get("search", keyword=KEYWORD).from_cache  # online, the stale answer is fetched again


def test_offline_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("STOREFRAMES_OFFLINE", "1")
    client = sandbox(tmp_path)
    assert client.offline
    with pytest.raises(sf.NotCachedError):
        client.get("metadata", apps=IOS[0])
    assert sent(client) == []


def test_a_cache_folder_reproduces_on_a_machine_with_no_token(tmp_path, server):
    with sf.Client(server.key, base_url=server.base_url, cache_dir=tmp_path) as online:
        fetched = online.get("metadata", apps=IOS)
    served = len(server.service.arrivals)
    with sf.Client(api_key="", base_url=None, cache_dir=tmp_path) as no_token:
        again = no_token.get("metadata", apps=IOS)
        assert again.result == fetched.result and again.from_cache
        with pytest.raises(sf.ConfigurationError, match="no base URL"):
            no_token.get("metadata", apps=MORE_IOS[0])
    assert len(server.service.arrivals) == served


def test_plan_shows_what_would_be_sent_and_what_the_cache_holds(tmp_path):
    client = sandbox(tmp_path)
    before = client.plan("changes", apps=IOS[:3], start_date="2026-10-01", end_date="2026-10-30")
    assert before.to_send == 1 and before.estimate == 1 + 3 * 40 and before.cached_cells == 0
    client.get("changes", apps=IOS[:3], start_date="2026-10-01", end_date="2026-10-30")
    after = client.plan("changes", apps=IOS[:3], start_date="2026-09-24", end_date="2026-10-30")
    assert after.to_send == 1 and after.estimate == 1 + 3 * 17
    assert after.cells == 3 * 37 and after.cached_cells == 3 * 30 and after.saved == 121
    assert after.requests["source"].to_list() == ["send", "cache"]
    assert "1 request to send, at most 52 credits" in repr(after)
    assert client.estimate("changes", apps=IOS[:3], start_date="2026-10-01", end_date="2026-10-30") == 0
    assert len(sent(client)) == 1


def test_the_budget_counts_only_what_is_not_cached(tmp_path):
    sandbox(tmp_path).get("metadata", apps=IOS[:5])
    client = sandbox(tmp_path, budget=15)
    client.get("metadata", apps=IOS[:6])  # 5 cached, 1 to fetch for 11
    with pytest.raises(sf.BudgetExceededError):
        client.get("metadata", apps=MORE_IOS[:2])
    assert len(sent(client)) == 1 and client.spent == 11


# -- robustness ----------------------------------------------------------------------------


def test_a_failure_half_way_keeps_what_was_fetched(tmp_path):
    apps = MORE_IOS[:12]
    client = sandbox(tmp_path, max_workers=1, credits=2 * 51)
    with pytest.raises(sf.NotEnoughCreditsError) as caught:
        client.get("metadata", apps=apps)
    assert len(caught.value.partial) == 2
    client.sandbox_service.credits = None
    answer = client.get("metadata", apps=apps)
    assert sorted(answer.result) == sorted(apps)
    assert len([a for a in client.sandbox_service.arrivals if a.status == 200]) == 3


def test_unavailable_apps_are_remembered_for_the_day(tmp_path):
    clock = Clock(NOON)
    client = sandbox(tmp_path, clock)
    with pytest.warns(sf.AppsUnavailableWarning):
        first = client.get("metadata", apps=IOS[:4] + [GONE])
    count = len(sent(client))
    with pytest.warns(sf.AppsUnavailableWarning, match=GONE):
        again = client.get("metadata", apps=IOS[:4] + [GONE])
    assert len(sent(client)) == count and again.unavailable == (GONE,) and again.result == first.result
    clock.advance(days=1)
    with pytest.warns(sf.AppsUnavailableWarning):
        client.get("metadata", apps=[GONE])
    assert len(sent(client)) == count + 1


def test_a_corrupt_answer_is_reported_once_and_fetched_again(tmp_path):
    client = sandbox(tmp_path)
    first = client.get("metadata", apps=IOS[:2])
    (answer_file,) = (tmp_path / "answers" / "endpoint=metadata").glob("*.json.zst")
    answer_file.write_bytes(answer_file.read_bytes()[:40])  # truncated
    other = sandbox(tmp_path)
    with pytest.warns(sf.CacheWarning, match="unreadable") as caught:
        again = other.get("metadata", apps=IOS[:2])
    assert len(caught) == 1
    assert again.result == first.result and not again.from_cache and len(sent(other)) == 1
    assert len(list(tmp_path.rglob("*.corrupt"))) == 2  # the answer and its index entry
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sandbox(tmp_path).get("metadata", apps=IOS[:2]).from_cache


def test_a_corrupt_index_file_is_a_miss_not_a_crash(tmp_path):
    sandbox(tmp_path).get("search", keyword=KEYWORD)
    (index_file,) = (tmp_path / "index" / "endpoint=search").glob("*.parquet")
    index_file.write_bytes(b"PAR1 this is not parquet")
    client = sandbox(tmp_path)
    with pytest.warns(sf.CacheWarning, match="unreadable"):
        answer = client.get("search", keyword=KEYWORD)
    assert not answer.from_cache and len(sent(client)) == 1
    assert sf.Cache(tmp_path).info()["corrupt_files"] == 2  # the index file and the answer it described


def test_leftover_temporary_files_are_ignored(tmp_path):
    sandbox(tmp_path).get("search", keyword=KEYWORD)
    folder = tmp_path / "index" / "endpoint=search"
    (folder / ".half-written.parquet.1234.tmp").write_bytes(b"PAR1")
    client = sandbox(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert client.get("search", keyword=KEYWORD).from_cache


def _fetch_into(folder: str, apps: list[str]) -> int:
    # closed before it returns: a pool's worker is terminated once the results are in, and a session
    # nobody closed tidies its ledger at exit, which a termination may cut short (a .tmp file left)
    with sf.sandbox.client(today=SANDBOX_TODAY, cache_dir=folder, max_workers=4) as client:
        client.get("changes", apps=apps, start_date="2026-09-01", end_date="2026-10-30")
        client.get("metadata", apps=apps)
        return len(client.sandbox_service.arrivals)


@pytest.mark.processes
def test_four_processes_share_one_folder_and_lose_nothing(tmp_path):
    groups = [MORE_IOS[i : i + 6] for i in (0, 2, 4, 6)]  # overlapping sets of apps
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        counts = pool.starmap(_fetch_into, [(str(tmp_path), g) for g in groups])
    assert sum(counts) >= 4  # at least the first to start fetched both calls; the others what was left
    everyone = sorted({a for g in groups for a in g})
    client = sandbox(tmp_path, offline=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        changes = client.get("changes", apps=everyone, start_date="2026-09-01", end_date="2026-10-30")
        metadata = client.get("metadata", apps=everyone)
    assert changes.result == fresh("changes", apps=everyone, start_date="2026-09-01", end_date="2026-10-30").result
    assert sorted(metadata.result) == everyone
    assert not list(tmp_path.rglob("*.corrupt")) and not list(tmp_path.rglob(".*.tmp"))


# -- the folder as a dataset ---------------------------------------------------------------


def test_the_index_reads_with_polars_and_carries_provenance(tmp_path):
    client = sandbox(tmp_path)
    client.get("changes", apps=IOS[:2], start_date="2026-10-01", end_date="2026-10-10")
    client.get("metrics", apps=IOS[:2], metrics=["downloads", "ratings"])
    index = pl.scan_parquet(tmp_path / "index" / "**" / "*.parquet", hive_partitioning=True).collect()
    assert index.height == 2 * 10 + 2 * 2
    counts = dict(index.group_by("endpoint").len().iter_rows())
    assert counts == {"changes": 20, "metrics": 4}
    assert index.schema["day"] == pl.Date and index.schema["fetched_at"] == pl.Datetime("us", "UTC")
    metrics = index.filter(pl.col("endpoint") == "metrics")
    assert sorted(metrics["facet"].to_list()) == ["downloads", "downloads", "ratings", "ratings"]
    import pyarrow.parquet as pq

    (path,) = (tmp_path / "index" / "endpoint=changes").glob("*.parquet")
    meta = {k.decode(): v.decode() for k, v in pq.read_metadata(path).metadata.items()}  # the file's key-value metadata
    assert meta["storeframes.endpoint"] == "changes" and meta["storeframes.version"] == sf.__version__
    assert json.loads(meta["storeframes.params"])["start_date"] == "2026-10-01"
    assert int(meta["storeframes.cost"]) == 1 + 2 * 20
    ledger = pl.scan_parquet(tmp_path / "ledger" / "*.parquet").collect()
    assert ledger.height == 2 and ledger.schema == sf.LEDGER_SCHEMA


def test_the_index_reads_with_duckdb(tmp_path):
    duckdb = pytest.importorskip("duckdb")
    sandbox(tmp_path).get("metadata", apps=IOS)
    source = f"read_parquet('{tmp_path}/index/*/*.parquet', hive_partitioning = true)"
    rows = duckdb.sql(f"select endpoint, count(*), count(distinct entry) from {source} group by endpoint").fetchall()
    assert rows == [("metadata", len(IOS), 2)]
    paid = duckdb.sql(f"select sum(answer_cost) from (select distinct entry, answer_cost from {source})").fetchall()
    assert paid == [(2 + 10 * len(IOS),)]
    shares = duckdb.sql(f"select sum(cell_cost) from {source}").fetchall()  # each cell's share: sums to the same
    assert shares == paid


def test_raw_answers_are_kept_with_their_canonical_request(tmp_path):
    sandbox(tmp_path).get("changes", apps=f"{IOS[1]}, {IOS[0]}", end_date=date(2026, 10, 30))
    (path,) = (tmp_path / "answers" / "endpoint=changes").glob("*.json.zst")
    raw, body = read_answer(path.read_bytes())
    assert json.loads(body)["result"]  # the body as it arrived, after a line saying whose it is
    assert raw["params"] == {
        "apps": ",".join(sorted(IOS[:2])),
        "country": "us",
        "device": "iphone",
        "start_date": "2026-10-01",
        "end_date": "2026-10-30",
    }
    assert raw["cost"] == 1 + 2 * 40 and raw["max_credit_cost"] >= raw["cost"]
    assert datetime.fromisoformat(raw["fetched_at"]).date() == SANDBOX_TODAY
    assert set(json.loads(body)["result"]) == set(IOS[:2])


def test_frames_are_kept_as_parquet_and_rebuilt_for_a_new_flattener(tmp_path):
    client = sandbox(tmp_path)
    answer = client.get("search", keyword=KEYWORD)
    cache = client.cache
    (entry,) = cache.entries("search")
    assert answer.responses[0].entry == entry.id and cache.entry(entry.id) == entry
    assert client.get("search", keyword=KEYWORD).responses[0].entry == entry.id
    builds = []

    def build() -> pl.DataFrame:
        builds.append(1)
        ids = answer.result["value"]
        return pl.DataFrame(
            {"rank": range(1, len(ids) + 1), "app_id": ids}, schema={"rank": pl.Int32, "app_id": pl.String}
        )

    def frame(version: str) -> pl.DataFrame:
        """The kept frame of the flattener ``version``, built and kept when there is none."""
        kept = cache.frames.read([entry], "search_results", version).get(entry.id)
        if kept is not None:
            return kept
        built = build()
        cache.frames.write(entry, "search_results", version, built)
        return built

    assert cache.frames.read([entry], "search_results", "1").get(entry.id) is None
    first = frame("1")
    second = frame("1")
    assert len(builds) == 1 and first.equals(second) and second.schema == first.schema
    path = tmp_path / "frames" / "table=search_results" / f"{entry.id}.parquet"
    assert pl.read_parquet(path).height == len(answer.result["value"])
    assert cache.frames.read([entry], "search_results", "2").get(entry.id) is None  # another flattener wrote it
    frame("2")
    assert len(builds) == 2
    path.write_bytes(b"garbage")
    with pytest.warns(sf.CacheWarning, match="unreadable"):
        rebuilt = frame("2")
    assert rebuilt.equals(first) and len(builds) == 3
    assert (path.parent / f"{path.name}.corrupt").read_bytes() == b"garbage"


# -- the ledger ----------------------------------------------------------------------------


def test_the_ledger_persists_and_spend_sums_spent_and_saved(tmp_path):
    first = sandbox(tmp_path)
    cost = first.get("metadata", apps=IOS).cost
    first.get("search", keyword=KEYWORD)
    second = sandbox(tmp_path)
    second.get("metadata", apps=IOS)
    spend = second.spend()
    assert spend.schema == sf.ledger.SPEND_SCHEMA
    metadata = spend.filter(pl.col("endpoint") == "metadata").row(0, named=True)
    assert metadata == {
        "service": "sandbox-0",
        "day": SANDBOX_TODAY,
        "endpoint": "metadata",
        "requests": 2,
        "credits_spent": cost,
        "credits_estimated": 0,
        "cache_hits": 2,
        "credits_saved": cost,
    }
    assert spend["endpoint"].to_list() == ["metadata", "search"]
    session = second.spend(session=True)
    assert session["requests"].to_list() == [0] and session["credits_saved"].to_list() == [cost]


def test_the_ledger_is_kept_in_a_few_files_per_session(tmp_path, monkeypatch):
    monkeypatch.setattr("storeframes.credits.LEDGER_CHUNK", 2)
    client = sandbox(tmp_path)
    for keyword in WORLD.EXAMPLE_KEYWORDS[:5]:
        client.get("search", keyword=keyword)
    small = sorted((tmp_path / "ledger").glob("*.parquet"))
    assert [pl.read_parquet(f).height for f in small] == [1] * 5  # one small file per request, as it ends
    assert client.cache.ledger.read().equals(client.ledger)
    client.close()  # merged into chunks of LEDGER_CHUNK rows, the small files removed
    files = sorted((tmp_path / "ledger").glob("*.parquet"))
    assert [pl.read_parquet(f).height for f in files] == [2, 2, 1]
    assert client.cache.ledger.read().equals(client.ledger)
    assert client.spend()["requests"].to_list() == [5]


# -- hygiene -------------------------------------------------------------------------------


def test_no_file_in_the_folder_holds_the_token(tmp_path):
    token = "sk-live-5f2a9c0e7b1d4c3a"

    def leaky(request: httpx.Request) -> httpx.Response:
        # a service that echoes the token back in the body must not get it into the cache
        reply = service.handle(request.method, request.url.path, request.url.params.multi_items(), request.headers)
        body = json.loads(reply.body)
        body["metadata"]["request"]["params"]["key"] = request.headers["x-service-key"]
        return httpx.Response(reply.status, json=body)

    service = SandboxService(today=SANDBOX_TODAY, api_keys=[token])
    http = httpx.Client(transport=httpx.MockTransport(leaky))
    with sf.Client(token, base_url="https://store.example/api/public/store", http_client=http, cache_dir=tmp_path) as c:
        c.get("metadata", apps=IOS[:2])
        c.get("search", keyword=KEYWORD)
        c.get("metadata", apps=IOS[:2])
        assert token not in repr(c) and token not in repr(c.cache)
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    leases = [p for p in files if p.parent.name == "leases"]
    assert leases and all(p.stat().st_size == 0 for p in leases)  # lock files hold nothing
    # beside a lease's lock file, the record of its holder's last sign of life: pid, host, times
    holders = [p for p in files if p.parent.parent.name == "leases"]
    assert holders and all({"pid", "host", "beat"} <= json.loads(p.read_bytes()).keys() for p in holders)
    kept = [p for p in files if p not in leases and p not in holders]
    assert len(kept) == 7  # the cache's marker, its team's coordination, two answers, their index files, the ledger
    assert json.loads((tmp_path / "storeframes-cache.json").read_text())["format"] == 2
    for path in [p for p in files if p not in leases]:
        data = path.read_bytes()
        if path.suffix == ".zst":
            data = b"\n".join(read_answer(data)[1:])
            assert b'"key":"***"' in data
        assert token.encode() not in data, path.name


def test_caching_can_be_turned_off(tmp_path, monkeypatch):
    monkeypatch.setenv("STOREFRAMES_CACHE_DIR", str(tmp_path))
    client = sf.sandbox.client(today=SANDBOX_TODAY, cache_dir=False)
    client.get("search", keyword=KEYWORD)
    client.get("search", keyword=KEYWORD)
    assert client.cache is None and len(sent(client)) == 2 and not any(tmp_path.iterdir())
    with pytest.raises(sf.ConfigurationError, match="cache_dir"):
        sf.Client(cache_dir=3)


def test_a_sandbox_client_caches_in_a_folder_of_its_own_until_closed(tmp_path, monkeypatch):
    monkeypatch.setenv("STOREFRAMES_CACHE_DIR", str(tmp_path))
    client = sf.sandbox.client(today=SANDBOX_TODAY)
    folder = client.cache.path
    client.get("search", keyword=KEYWORD)
    client.get("search", keyword=KEYWORD)
    assert len(sent(client)) == 1 and folder.is_dir() and not any(tmp_path.iterdir())
    client.close()
    assert not folder.exists() and client.cache is None


def test_a_sandbox_client_refused_at_birth_leaves_no_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with pytest.raises(ValueError, match="nope"):
        sf.sandbox.client(cost_model={"nope": sf.CostModel()})
    assert list(tmp_path.iterdir()) == []


def test_the_default_folder_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("STOREFRAMES_CACHE_DIR", str(tmp_path / "here"))
    assert sf.Client().cache.path == tmp_path / "here"
    monkeypatch.delenv("STOREFRAMES_CACHE_DIR")
    assert "storeframes" in str(sf.Client().cache.path)


def test_sandbox_and_service_answers_are_kept_apart(tmp_path):
    sandbox(tmp_path).get("metadata", apps=IOS[:2])
    real = sf.Client("token", base_url="https://store.example/api/public/store", cache_dir=tmp_path, offline=True)
    with pytest.raises(sf.NotCachedError):
        real.get("metadata", apps=IOS[:2])
    assert sandbox(tmp_path, seed=1, offline=True).plan("metadata", apps=IOS[:2]).to_send == 1
