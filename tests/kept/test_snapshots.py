"""sf.snapshots: the days a cache kept of the current-only tables (metadata and its child tables, metrics,
live search), one snapshot per cell per UTC day, replayed from sandbox clients of several days into one
folder; what compaction keeps of them; and what is refused before the cache is read."""

from __future__ import annotations

import pickle
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import storeframes as sf
from storeframes.cache import Cache
from storeframes.kept import tables
from storeframes.kept.snapshots import SNAPSHOT_TABLES
from storeframes.sandbox import World
from storeframes.schemas import read_schema
from tests.conftest import SANDBOX_TODAY, sandbox_client_on

WORLD = World(0)
APPS = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US][:3]
GONE = sorted(WORLD.UNAVAILABLE_IN_US)[0]  # an app the US store does not have: no rows, on any day
KEYWORDS = list(WORLD.EXAMPLE_KEYWORDS[:2])
DAYS = [SANDBOX_TODAY - timedelta(days=n) for n in (3, 2, 0)]  # a day left out: no snapshot of it
TABLES = ["metadata", "versions", "screenshots", "metrics", "search", "search_ads"]


def _fetch(client: sf.Client) -> dict[str, pl.DataFrame]:
    """One day's frames of every table the tests read back, as the frame functions gave them."""
    with pytest.warns(sf.AppsUnavailableWarning):
        metadata = client.metadata_frame([*APPS, GONE])
    organic = client.search_frame(KEYWORDS)
    ads = client.search_frame(KEYWORDS[:1], ads=True)
    return {
        "metadata": metadata,
        "versions": client.versions_frame(APPS),
        "screenshots": client.screenshots_frame(APPS),  # the rows of every metadata answer kept
        "metrics": client.metrics_frame(APPS, ["downloads", "ratings"]),
        # the search table holds the searches with ads too, each row saying its list: rank means one thing a list
        "search": pl.concat([organic.with_columns(list=pl.lit("organic")), ads.with_columns(list=pl.lit("with_ads"))]),
        "search_ads": ads.with_columns(list=pl.lit("with_ads")),
    }


def replay(folder: Any, **options: Any) -> dict[date, dict[str, pl.DataFrame]]:
    """Each day of :data:`DAYS` fetched into ``folder`` by a client whose today is that day."""
    fetched = {}
    for day in DAYS:
        with sandbox_client_on(day, folder, **options) as client:
            fetched[day] = _fetch(client)
    return fetched


def same_rows(got: pl.DataFrame, expected: pl.DataFrame) -> None:
    """The same rows and dtypes, in any order."""
    assert got.schema == expected.schema
    assert got.height == expected.height
    keys = [name for name, dtype in expected.schema.items() if not dtype.is_nested()]
    assert_frame_equal(got.sort(keys, nulls_last=True), expected.sort(keys, nulls_last=True))


def check_days(folder: Any, fetched: dict[date, dict[str, pl.DataFrame]], **options: Any) -> None:
    """Each table's snapshots of each day are that day's frame, with the day first."""
    for table in TABLES:
        every = sf.snapshots(table, folder, **options).collect()
        assert every.columns[0] == "snapshot_date" and every.schema["snapshot_date"] == pl.Date
        assert (
            every.drop("snapshot_date").schema
            == read_schema(SNAPSHOT_TABLES["search" if table == "search_ads" else table].table).schema
        )
        assert sorted(every["snapshot_date"].unique()) == DAYS, table
        assert every.height == sum(fetched[day][table].height for day in DAYS), table
        for day in DAYS:
            shown = every.filter(pl.col("snapshot_date") == day).drop("snapshot_date")
            same_rows(shown, fetched[day][table])
            assert (shown["fetched_at"].dt.date() == day).all()


def test_each_days_snapshot_is_the_frame_the_call_of_that_day_gave(tmp_path, monkeypatch):
    monkeypatch.delenv("STOREFRAMES_API_KEY", raising=False)  # read with no token anywhere
    fetched = replay(tmp_path)
    assert fetched[DAYS[0]]["metrics"]["value"].to_list() != fetched[DAYS[-1]]["metrics"]["value"].to_list()
    check_days(tmp_path, fetched)
    assert {row["app_id"] for row in fetched[DAYS[0]]["metadata"].iter_rows(named=True)} == set(APPS)
    metadata = sf.snapshots("metadata_frame", tmp_path).collect()  # a frame function's name works too
    assert metadata.height == len(APPS) * len(DAYS) and GONE not in metadata["app_id"].to_list()
    assert sf.scan("metadata", tmp_path).collect().height == len(APPS)  # scan: the newest day only


def test_start_and_end_bound_the_days_both_included(tmp_path):
    fetched = replay(tmp_path)
    middle = sf.snapshots("versions", tmp_path, start=DAYS[1], end=DAYS[1].isoformat()).collect()
    same_rows(middle.drop("snapshot_date"), fetched[DAYS[1]]["versions"])
    since = sf.snapshots("metrics", tmp_path, start=DAYS[1]).collect()
    assert sorted(since["snapshot_date"].unique()) == DAYS[1:]
    until = sf.snapshots("search", tmp_path, end=f" {DAYS[0].isoformat()} ").collect()
    assert until["snapshot_date"].unique().to_list() == [DAYS[0]]
    empty = sf.snapshots("metadata", tmp_path, start=DAYS[-1] + timedelta(days=1)).collect()
    assert empty.is_empty() and empty.schema == pl.Schema(
        [("snapshot_date", pl.Date()), *SNAPSHOT_TABLES["metadata"].table.schema.items()]
    )


def test_a_cell_fetched_twice_in_a_day_shows_the_later_answer_once(tmp_path):
    day = DAYS[0]
    morning = datetime.combine(day, time(8), UTC)
    evening = datetime.combine(day, time(20), UTC)
    with sandbox_client_on(day, tmp_path, clock=lambda: morning) as early:
        early.metrics_frame(APPS, ["downloads", "ratings"])
        early.search_frame(KEYWORDS)
    with sandbox_client_on(day, tmp_path, clock=lambda: evening, refresh="always") as late:
        metrics = late.metrics_frame(APPS[:2], ["downloads", "ratings"])  # the third app: morning's stands
        search = late.search_frame(KEYWORDS)
    with sandbox_client_on(day + timedelta(days=1), tmp_path) as next_day:
        next_day.search_frame(KEYWORDS)
    assert len(Cache(tmp_path).entries("search")) == 3 * len(KEYWORDS)  # every answer kept: one a keyword a time

    got = sf.snapshots("metrics", tmp_path).filter(pl.col("snapshot_date") == day).collect()
    assert got.height == len(APPS) * 2
    times = dict(got.group_by("app_id").agg(pl.col("fetched_at").unique()).rows())
    assert times == {APPS[0]: [evening], APPS[1]: [evening], APPS[2]: [morning]}
    same_rows(got.filter(pl.col("app_id") != APPS[2]).drop("snapshot_date"), metrics)

    searched = sf.snapshots("search", tmp_path).collect()
    assert searched.group_by("snapshot_date").len().sort("snapshot_date")["len"].to_list() == [search.height] * 2
    same_rows(
        searched.filter(pl.col("snapshot_date") == day).drop("snapshot_date"),
        search.with_columns(list=pl.lit("organic")),
    )


@pytest.mark.slow
def test_compaction_keeps_every_snapshots_rows(tmp_path):
    fetched = replay(tmp_path)
    before = {table: sf.snapshots(table, tmp_path).collect() for table in TABLES}  # every frame made and kept
    assert Cache(tmp_path).info()["files"]["superseded"] == 0  # no frame compaction would drop
    answers = sorted((tmp_path / "answers").rglob("*.json.zst"))
    assert (
        len(answers) == len(Cache(tmp_path).entries()) == 7 * len(DAYS)
    )  # a day: 3 metadata (the unavailable app set apart), 1 metrics, 3 searches

    done = sf.compact(tmp_path)

    assert done["frames_dropped"] == 0
    assert sorted((tmp_path / "answers").rglob("*.json.zst")) == answers  # every raw answer, every day's
    cache = Cache(tmp_path)
    for table in ("metadata", "versions", "screenshots", "metrics", "search"):
        small = [
            p for p in (tmp_path / "frames" / f"table={table}").glob("*.parquet") if not p.name.startswith("part-")
        ]
        assert small == []
        held = set(pl.read_parquet(tmp_path / "frames" / f"table={table}" / "part-*.parquet")["entry"].unique())
        endpoints = ["search", "search_ads"] if table == "search" else ["metrics" if table == "metrics" else "metadata"]
        entries = [e for ep in endpoints for e in cache.entries(ep)]
        assert held == {e.id for e in entries if e.available}, table  # every day's answers, the oldest included
    check_days(tmp_path, fetched)
    for table in TABLES:
        same_rows(sf.snapshots(table, tmp_path).collect(), before[table])
    assert not [p for p in (tmp_path / "frames").rglob("*.parquet") if not p.name.startswith("part-")]  # none rebuilt


def test_compaction_still_drops_a_frame_replaced_within_its_day(tmp_path):
    day = DAYS[0]
    with sandbox_client_on(day, tmp_path, clock=lambda: datetime.combine(day, time(8), UTC)) as early:
        early.metrics_frame(APPS, ["downloads"])
    with sandbox_client_on(day, tmp_path, clock=lambda: datetime.combine(day, time(9), UTC), refresh="always") as late:
        late.metrics_frame(APPS, ["downloads"])
    expected = sf.snapshots("metrics", tmp_path).collect()
    assert Cache(tmp_path).info()["files"]["superseded"] == 1
    assert sf.compact(tmp_path)["frames_dropped"] == 1
    same_rows(sf.snapshots("metrics", tmp_path).collect(), expected)
    assert len(Cache(tmp_path).entries("metrics")) == 2  # its raw answer stays


@pytest.mark.parametrize("table", ["changes", "search_history", "benchmarks", "privacy_changes_frame"])
def test_a_history_table_is_refused_with_the_tables_allowed_and_scan_named(table, monkeypatch):
    monkeypatch.setattr(tables, "open_cache", lambda *_: pytest.fail("the cache was opened"))
    with pytest.raises(sf.InvalidParameterError) as refused:
        sf.snapshots(table, "anywhere")
    message = str(refused.value)
    name = table.removesuffix("_frame")
    assert f"invalid table='{table}' for snapshots" in message
    assert "one of metadata, versions, screenshots, videos, in_app_purchases, related_apps, permissions" in message
    assert "metrics, search, search_ads" in message
    assert f"{name} is a history table" in message and f"sf.scan('{name}')" in message


def test_a_name_of_no_table_is_refused_with_the_tables_allowed(monkeypatch):
    monkeypatch.setattr(tables, "open_cache", lambda *_: pytest.fail("the cache was opened"))
    for table in ("metadatas", None, 3):
        with pytest.raises(sf.InvalidParameterError, match=r"one of metadata, versions, .*search_ads") as refused:
            sf.snapshots(table, "anywhere")  # type: ignore[arg-type]
        assert "history table" not in str(refused.value)


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"start": "2026-13-01"}, "start='2026-13-01'"),
        ({"end": "yesterday"}, "end='yesterday'"),
        ({"start": 20261101}, "start=20261101"),
        ({"end": datetime(2026, 11, 1, tzinfo=UTC)}, "end="),
        ({"start": True}, "start=True"),
    ],
)
def test_a_bad_day_is_refused_before_the_cache_is_opened(options, named, monkeypatch):
    monkeypatch.setattr(tables, "open_cache", lambda *_: pytest.fail("the cache was opened"))
    with pytest.raises(sf.InvalidParameterError, match=r"a date: a datetime\.date or an ISO date text") as refused:
        sf.snapshots("metrics", "anywhere", **options)
    assert f"invalid {named}" in str(refused.value)


def test_a_start_after_the_end_is_refused_before_the_cache_is_opened(monkeypatch):
    monkeypatch.setattr(tables, "open_cache", lambda *_: pytest.fail("the cache was opened"))
    with pytest.raises(sf.InvalidParameterError, match=r"invalid start='2026-11-20' .*on or before end=2026-11-19"):
        sf.snapshots("metrics", "anywhere", start="2026-11-20", end=date(2026, 11, 19))


def test_no_cache_is_refused_and_the_plan_is_not_serialised(tmp_path: Path, monkeypatch):
    with pytest.raises(sf.ConfigurationError, match="scan, snapshots and compact need a cache"):
        sf.snapshots("metrics", False)
    with sandbox_client_on(DAYS[0], tmp_path) as client:
        client.metrics_frame(APPS[:1], ["downloads"])
    sources: list[Any] = []
    registered = tables.register_io_source
    monkeypatch.setattr(
        tables, "register_io_source", lambda source, **kw: sources.append(source) or registered(source, **kw)
    )
    lazy = sf.snapshots("metrics", tmp_path)
    assert lazy.select(pl.len()).collect().item() == 1  # one app, one metric, one day
    # refused: by the source, or by polars (before 2.0 its ComputeError carries what the source raised)
    with pytest.raises((sf.ConfigurationError, pl.exceptions.ComputeError)):
        pickle.dumps(lazy)
    with pytest.raises(sf.ConfigurationError, match=r"sf\.snapshots\('metrics'\) reads the cache when it is collected"):
        pickle.dumps(sources[0])  # what polars would write: the source itself refuses
