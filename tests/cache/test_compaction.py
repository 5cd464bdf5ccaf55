"""Compaction of a cache and lazy scans over everything it holds (folder and memory stores)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import warnings
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

import storeframes as sf
from storeframes.cache import Cache
from storeframes.cache.stores import LocalStore, MemoryStore, StoreBase
from storeframes.cli import main
from storeframes.kept.scan import scan
from storeframes.kept.tables import flattener_versions
from storeframes.sandbox import World
from storeframes.wire import http
from tests._children import child_env
from tests.conftest import ROOT, SANDBOX_TODAY

WORLD = World(0)
APPS = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US][:60]
KEYWORDS = list(WORLD.EXAMPLE_KEYWORDS[:2])
NOON = datetime.combine(SANDBOX_TODAY, datetime.min.time(), UTC) + timedelta(hours=12)


class Clock:
    def __init__(self) -> None:
        self.now = NOON

    def __call__(self) -> datetime:
        return self.now


def files(folder: Path, kind: str) -> list[Path]:
    return sorted(p for p in (folder / kind).rglob("*.parquet"))


def fill(filler: sf.Client, apps: list[str], *, per_call: int = 1) -> None:
    """One metadata answer per ``per_call`` apps, and their versions and metadata frames kept by ``filler``."""
    with filler:
        for i in range(0, len(apps), per_call):
            filler.versions_frame(apps[i : i + per_call])
            filler.metadata_frame(apps[i : i + per_call])


@pytest.mark.slow
def test_compaction_keeps_the_index_and_frames_of_hundreds_of_answers_in_a_handful_of_files(make_client, tmp_path):
    apps = APPS[:60]
    fill(make_client(cache_dir=tmp_path), apps)
    with make_client(cache_dir=tmp_path, offline=True) as before:
        versions, metadata = before.versions_frame(apps), before.metadata_frame(apps)
    assert len(files(tmp_path, "index")) == 60 and len(files(tmp_path, "frames")) == 120

    done = Cache(tmp_path).compact(frames=flattener_versions())

    assert done["index_files_merged"] == 60 and done["frame_files_merged"] == 120
    assert [p.name.startswith("part-") for p in files(tmp_path, "index")] == [True]
    assert len(files(tmp_path, "frames")) == 2  # one file per table
    assert len(list((tmp_path / "answers").rglob("*.json.zst"))) == 60  # raw answers are kept
    with make_client(cache_dir=tmp_path, offline=True) as after:
        assert after.versions_frame(apps).equals(versions)
        assert after.metadata_frame(apps).equals(metadata)
        assert after.sandbox_service.arrivals == []
    again = Cache(tmp_path).compact(frames=flattener_versions())  # nothing left to merge
    assert again == {"index_files_merged": 0, "frame_files_merged": 0, "frames_dropped": 0, "files_written": 0}


class RangeStore(MemoryStore):
    """A store that reads a value in ranges (``open``), as a bucket does."""

    def open(self, key: str) -> io.BytesIO:
        return io.BytesIO(self.get(key))


@pytest.mark.slow
def test_a_compacted_frame_file_is_read_a_row_group_at_a_time(make_client, tmp_path, monkeypatch):
    from storeframes.cache import compaction

    monkeypatch.setattr(compaction, "_GROUP_ROWS", 40)  # a few answers per row group
    fill(make_client(cache_dir=tmp_path), APPS[:30])
    Cache(tmp_path).compact(frames=flattener_versions())
    (part,) = files(tmp_path, "frames/table=versions")
    meta = pq.read_metadata(part)
    groups = json.loads(meta.metadata[b"storeframes.row_groups"])
    assert meta.num_row_groups == len(groups) > 3
    with make_client(
        cache_dir=tmp_path, offline=True
    ) as reader:  # a folder: one scan, the answers a filter pushed down
        expected = reader.versions_frame(APPS[:2])
    assert expected["app_id"].unique().sort().to_list() == sorted(APPS[:2])

    bucket = RangeStore()  # the same files in a store read in ranges: only the row groups wanted are fetched
    for path in tmp_path.rglob("*"):
        name = path.relative_to(tmp_path).as_posix()
        if path.is_file() and name.split("/")[0] in ("answers", "index", "frames", "ledger"):
            bucket.put(name, path.read_bytes())
    read: list[list[int]] = []
    real = pq.ParquetFile.read_row_groups

    def spy(self, row_groups, *args, **kwargs):
        read.append(list(row_groups))
        return real(self, row_groups, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "read_row_groups", spy)
    with make_client(cache_dir=Cache(bucket), offline=True) as reader:
        frame = reader.versions_frame(APPS[:2])
    assert len(read) == 1 and 1 <= len(read[0]) <= 2 < meta.num_row_groups  # the two answers' groups only
    assert frame.equals(expected)


class EarlierStore:
    """A store of the operations alone (written for an earlier version): it declares nothing, so the cache
    reads it through ``open`` built on ``get``."""

    def __init__(self) -> None:
        self.inner = MemoryStore()

    def __getattr__(self, name: str):
        if name in ("put", "put_if_absent", "get", "list", "delete", "mtime", "set_aside", "sweep", "usage"):
            return getattr(self.inner, name)
        raise AttributeError(name)


def test_compacted_frames_are_read_in_place_from_a_folder_and_through_open_elsewhere(
    make_client, tmp_path, monkeypatch
):
    fill(make_client(cache_dir=tmp_path), APPS[:6])
    Cache(tmp_path).compact(frames=flattener_versions())
    with make_client(cache_dir=tmp_path, offline=True) as reader:
        expected = reader.versions_frame(APPS[:2])
    earlier = EarlierStore()
    for path in tmp_path.rglob("*"):
        name = path.relative_to(tmp_path).as_posix()
        if path.is_file() and name.split("/")[0] in ("answers", "index", "frames", "ledger"):
            earlier.put(name, path.read_bytes())
    opened: list[str] = []
    real_open = StoreBase.open
    monkeypatch.setattr(StoreBase, "open", lambda self, key: opened.append(key) or real_open(self, key))
    monkeypatch.setattr(LocalStore, "open", lambda self, key: pytest.fail(f"{key} of a folder read through open"))
    with make_client(cache_dir=Cache(tmp_path), offline=True) as reader:  # the folder its store declares: read in place
        assert reader.versions_frame(APPS[:2]).equals(expected)
    assert Cache(earlier).storage.capabilities.local_root is None
    with make_client(
        cache_dir=Cache(earlier), offline=True
    ) as reader:  # no folder declared: the footer and rows through open
        assert reader.versions_frame(APPS[:2]).equals(expected)
    assert opened and all(key.startswith("frames/table=versions/part-") for key in opened)


def test_compaction_drops_the_frames_of_answers_replaced_in_every_cell(make_client, tmp_path):
    clock = Clock()
    with make_client(cache_dir=tmp_path, clock=clock) as first:
        first.versions_frame(APPS[:3])  # one answer of three apps
        first.versions_frame(APPS[3:5])
        clock.now += timedelta(hours=2)  # the same UTC day: the first answer is not that day's snapshot
        newest = first.versions_frame(APPS[:4], refresh="always")  # replaces the first answer wholly
    assert Cache(tmp_path).info()["files"]["superseded"] == 1
    done = Cache(tmp_path).compact(frames=flattener_versions())
    assert done["frames_dropped"] == 1
    raw = pl.read_parquet(tmp_path / "frames" / "table=versions" / "*.parquet")
    assert raw["entry"].n_unique() == 2  # the partly replaced answer is kept whole
    with make_client(cache_dir=tmp_path, clock=clock, offline=True) as reader:
        assert reader.versions_frame(APPS[:4]).equals(newest)
        assert len(Cache(tmp_path).entries("metadata")) == 3  # every answer stays in the index


def test_a_reader_that_listed_the_files_before_a_compaction_still_reads_everything(make_client, tmp_path):
    fill(make_client(cache_dir=tmp_path), APPS[:10])
    with make_client(cache_dir=tmp_path, offline=True) as reader:
        before = reader.versions_frame(APPS[:10])  # lists the small files
        Cache(tmp_path).compact(frames=flattener_versions())  # another process compacts
        assert reader.versions_frame(APPS[:10]).equals(before)
        assert reader.versions_frame(APPS[:10], refresh="never").equals(before)


def test_clear_removes_compacted_answers_from_the_index_and_the_frames(make_client, tmp_path):
    fill(make_client(cache_dir=tmp_path), APPS[:6])
    Cache(tmp_path).compact(frames=flattener_versions())
    cache = Cache(tmp_path)
    assert cache.clear(endpoint="metadata") == 6
    assert cache.entries() == [] and files(tmp_path, "index") == [] and files(tmp_path, "frames") == []
    with make_client(cache_dir=tmp_path, offline=True) as reader, pytest.raises(sf.NotCachedError):
        reader.versions_frame(APPS[:1])


def test_the_index_gives_each_cell_its_share_of_the_answers_cost(make_client, tmp_path):
    with make_client(cache_dir=tmp_path) as c:
        answer = c.get("metrics", apps=APPS[:3], metrics=["downloads", "ratings"])
    Cache(tmp_path).compact()
    index = pl.read_parquet(tmp_path / "index" / "*" / "*.parquet")
    assert index.height == 6 and index["cell_cost"].sum() == answer.cost
    assert index["answer_cost"].unique().to_list() == [answer.cost]
    assert index["cell_cost"].max() - index["cell_cost"].min() <= 1


def test_cache_info_counts_the_files_and_what_compaction_would_merge(make_client, tmp_path, capsys):
    fill(make_client(cache_dir=tmp_path), APPS[:5])
    info = Cache(tmp_path).info()["files"]
    assert info["answers"] == 5 and info["index"] == 5 and info["frames"] == 10
    assert info["small"] == 15 and info["compacted"] == 0 and info["ledger"] >= 1
    assert main(["cache", "info", "--cache-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "files:" in out and "5 answers, 5 index, 10 frames" in out and "would merge 15" in out
    assert main(["cache", "compact", "--cache-dir", str(tmp_path)]) == 0
    assert "index files 5 -> 1, frame files 10 -> 2" in capsys.readouterr().out
    main(["cache", "info", "--cache-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert "5 answers, 1 index, 2 frames" in out and "would merge" not in out


_WRITER = """
import json, sys
import storeframes as sf
args = json.loads(sys.argv[1])
with sf.sandbox.client(today=args["today"], cache_dir=args["folder"], progress=False, backoff=(0.001, 0.01)) as c:
    for app in args["apps"]:
        c.versions_frame([app])
        c.versions_frame(args["read"])
print("finished")
"""

_COMPACTOR = """
import json, sys, time
from storeframes.cache import Cache
from storeframes.cli import main
from storeframes.kept.tables import flattener_versions
args = json.loads(sys.argv[1])
end = time.monotonic() + args["seconds"]
n = 0
while time.monotonic() < end:
    Cache(args["folder"]).compact(frames=flattener_versions())
    n += 1
print(n)
"""


@pytest.mark.slow
@pytest.mark.processes
def test_compaction_is_safe_while_other_processes_read_and_write(make_client, tmp_path):
    fill(make_client(cache_dir=tmp_path), APPS[:4])
    env = child_env()
    base = {"folder": str(tmp_path), "today": SANDBOX_TODAY.isoformat()}
    writers = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                _WRITER,
                json.dumps({**base, "apps": APPS[4 + 12 * k : 16 + 12 * k], "read": APPS[:4]}),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for k in range(2)
    ]
    compactors = [
        subprocess.Popen(
            [sys.executable, "-c", _COMPACTOR, json.dumps({**base, "seconds": 6})],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(2)
    ]
    runs = []
    for child in writers + compactors:
        out, err = child.communicate(timeout=240)
        assert child.returncode == 0, err.decode()[-2000:]
        runs.append(out)
    assert all(int(out) >= 1 for out in runs[2:])  # each compactor ran while the writers wrote
    Cache(tmp_path).compact(frames=flattener_versions())
    apps = APPS[:28]
    with make_client(cache_dir=tmp_path, offline=True) as reader, warnings.catch_warnings():
        warnings.simplefilter("error")  # no unreadable file anywhere
        frame = reader.versions_frame(apps)
        assert reader.sandbox_service.arrivals == []
    with make_client(cache_dir=False) as fresh:
        assert frame.drop("fetched_at").equals(fresh.versions_frame(apps).drop("fetched_at"))
    assert len(Cache(tmp_path).entries("metadata")) == 28  # every answer paid for is still in the index


# -- lazy scans -----------------------------------------------------------------------------


def test_scan_gives_the_frame_functions_rows_newest_answer_per_cell(make_client, tmp_path):
    clock = Clock()
    with make_client(cache_dir=tmp_path, clock=clock) as c:
        c.metadata_frame(APPS[:4])  # versions never made: scan flattens them from the raw answers
        clock.now += timedelta(days=2)
        c.metadata_frame(APPS[2:6], refresh="always")
        versions = c.versions_frame(APPS[:6], refresh="never")
    scanned = scan("versions", cache_dir=tmp_path)
    assert isinstance(scanned, pl.LazyFrame)
    rows = scanned.collect()
    assert rows.schema == versions.schema
    assert rows.sort("app_id", "position").equals(versions.sort("app_id", "position"))
    assert rows.group_by("app_id").agg(pl.col("fetched_at").n_unique())["fetched_at"].to_list() == [1] * 6
    Cache(tmp_path).compact(frames=flattener_versions())
    assert (
        scan("versions_frame", cache_dir=tmp_path)
        .collect()
        .sort("app_id", "position")
        .equals(rows.sort("app_id", "position"))
    )


def test_scan_of_a_daily_history_keeps_each_keyword_and_day_once(make_client, tmp_path):
    with make_client(cache_dir=tmp_path) as c:
        c.search_history_frame(KEYWORDS, start="2026-10-01", end="2026-10-20")
        c.search_history_frame(KEYWORDS[:1], start="2026-10-15", end="2026-10-31")  # overlaps nothing cached
        whole = c.search_history_frame(KEYWORDS[:1], start="2026-10-01", end="2026-10-31")
        both = c.search_history_frame(KEYWORDS, start="2026-10-01", end="2026-10-20")
    rows = scan("search_history", cache_dir=tmp_path).collect()
    first = rows.filter(pl.col("keyword") == KEYWORDS[0]).sort("date", "rank")
    assert first.equals(whole.sort("date", "rank"))
    assert (
        rows.filter(pl.col("keyword") == KEYWORDS[1])
        .sort("date", "rank")
        .equals(both.filter(pl.col("keyword") == KEYWORDS[1]).sort("date", "rank"))
    )
    assert rows.select("keyword", "date", "rank").is_duplicated().sum() == 0


def test_scan_needs_no_token_and_sends_nothing_and_reads_with_duckdb(make_client, tmp_path, monkeypatch):
    duckdb = pytest.importorskip("duckdb")
    with make_client(cache_dir=tmp_path) as c:
        c.metrics_frame(APPS[:3], metrics=["downloads", "ratings"])
        expected = c.metrics_frame(APPS[:3], metrics=["downloads", "ratings", "revenues"])
    monkeypatch.delenv("STOREFRAMES_API_KEY", raising=False)
    monkeypatch.setattr(http.Client, "send", lambda *a, **k: pytest.fail("a scan sent a request"))
    rows = sf.scan("metrics", cache_dir=str(tmp_path)).collect()
    assert rows.sort("app_id", "metric").equals(expected.sort("app_id", "metric"))
    dataset = f"read_parquet('{tmp_path}/frames/*/*.parquet', hive_partitioning = true, union_by_name = true)"
    counted = duckdb.sql(f"select count(*) from {dataset} where \"table\" = 'metrics'").fetchall()
    assert counted == [(rows.height,)]


def test_scan_of_a_memory_cache_and_of_nothing(make_client, tmp_path):
    cache = Cache(MemoryStore())
    with make_client(cache_dir=cache) as c:
        expected = c.versions_frame(APPS[:2])
    assert (
        scan("versions", cache_dir=cache)
        .collect()
        .sort("app_id", "position")
        .equals(expected.sort("app_id", "position"))
    )
    with pytest.raises(sf.NoCacheError, match="the folder does not exist"):  # no cache is not an empty one
        scan("changes", cache_dir=tmp_path / "empty")
    (tmp_path / "empty").mkdir()  # an empty folder: an empty cache
    empty = scan("changes", cache_dir=tmp_path / "empty").collect()
    assert empty.is_empty() and empty.schema == sf.schemas.CHANGES.schema


def test_scan_refuses_an_unknown_table_and_an_ambiguous_service(make_client, tmp_path):
    with pytest.raises(sf.InvalidParameterError, match="one of metadata, versions"):
        scan("nope", cache_dir=tmp_path)
    with make_client(cache_dir=tmp_path, seed=0) as a, make_client(cache_dir=tmp_path, seed=1) as b:
        a.search_frame(KEYWORDS[:1])
        expected = b.search_frame(KEYWORDS[:1])
    with pytest.raises(sf.InvalidParameterError, match="sandbox-0, sandbox-1"):
        scan("search", cache_dir=tmp_path)
    got = scan("search", cache_dir=tmp_path, service="sandbox-1").collect().sort("rank")
    assert got.equals(expected.with_columns(list=pl.lit("organic")).sort("rank"))


def test_the_readmes_duckdb_query_keeps_the_newest_answer_of_each_day(make_client, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    clock = Clock()
    with make_client(cache_dir=tmp_path, clock=clock) as c:
        c.search_history_frame(KEYWORDS[:1], start="2026-11-10", end="2026-11-19")
        clock.now += timedelta(hours=7)  # the recent days went stale: fetched again
        newest = c.search_history_frame(KEYWORDS[:1], start="2026-11-10", end="2026-11-19")
    dataset = f"read_parquet('{tmp_path}/frames/table=search_history/*.parquet', hive_partitioning = true)"
    query = (
        f"SELECT keyword, date, rank, app_id FROM {dataset} "
        "QUALIFY fetched_at = max(fetched_at) OVER (PARTITION BY keyword, country, device, date)"
    )
    rows = pl.from_arrow(duckdb.sql(query).arrow())
    everything = pl.from_arrow(duckdb.sql(f"SELECT * FROM {dataset}").arrow())
    assert everything.height > rows.height  # the replaced days are still in the files
    expected = newest.select("keyword", "date", "rank", "app_id")
    assert rows.sort("date", "rank").equals(expected.sort("date", "rank"))
    assert (
        sf.scan("search_history", cache_dir=tmp_path).collect().sort("date", "rank").equals(newest.sort("date", "rank"))
    )


def test_answers_with_no_rows_in_a_table_stay_kept_after_compaction(make_client, tmp_path, monkeypatch):
    with make_client(cache_dir=tmp_path) as c:
        sizes = {app: c.in_app_purchases_frame([app]).height for app in APPS[:12]}
    empty = [app for app, rows in sizes.items() if rows == 0]
    assert empty and len(empty) < len(sizes)  # the sandbox has apps without in-app purchases
    Cache(tmp_path).compact(frames=flattener_versions())
    (part,) = files(tmp_path, "frames/table=in_app_purchases")
    meta = pq.read_metadata(part).metadata
    assert len(json.loads(meta[b"storeframes.empty"])) == len(empty)
    monkeypatch.setattr(Cache, "load", lambda *a: pytest.fail("a kept frame was built again from the raw answer"))
    with make_client(cache_dir=tmp_path, offline=True) as reader:
        frame = reader.in_app_purchases_frame(APPS[:12])
    assert frame.height == sum(sizes.values()) and not set(empty) & set(frame["app_id"])
