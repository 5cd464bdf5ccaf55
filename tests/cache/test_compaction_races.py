"""Reading a cache while a compaction replaces its files: a file listed, then gone before it is read."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

import storeframes as sf
from storeframes.cache import RELISTS, Cache
from storeframes.kept.scan import scan
from storeframes.kept.tables import flattener_versions
from storeframes.sandbox import World
from tests._secrets import check_plan_keeps

WORLD = World(0)
APPS = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US][:8]


def _fill(make_client: Any, cache_dir: Any, **options: Any) -> pl.DataFrame:
    """One answer per app of APPS[:6] kept and compacted, then one more answer not compacted; the versions of APPS[:6]."""
    with make_client(cache_dir=cache_dir, **options) as filler:
        for app in APPS[:6]:
            filler.versions_frame([app])
        versions = filler.versions_frame(APPS[:6])
    sf.compact(cache_dir=cache_dir, **options)
    with make_client(cache_dir=cache_dir, **options) as filler:
        filler.versions_frame(APPS[6:7])  # small files: the next compaction replaces the compacted ones
    return versions.sort("app_id", "position")


def test_an_offline_reader_finds_answers_whose_index_a_compaction_replaced_while_it_was_read(
    make_client, tmp_path, monkeypatch
):
    expected = _fill(make_client, tmp_path)
    reader = make_client(cache_dir=tmp_path, offline=True)
    storage = reader.cache.storage
    get = storage.get
    compacted = []

    def get_after_a_compaction(key: str) -> bytes:
        if "index/" in key and "/part-" in key and not compacted:  # listed, then replaced before it is read
            compacted.append(Cache(tmp_path).compact(frames=flattener_versions()))
        return get(key)

    monkeypatch.setattr(storage, "get", get_after_a_compaction)
    assert reader.versions_frame(APPS[:6]).sort("app_id", "position").equals(expected)
    assert compacted and compacted[0]["index_files_merged"] == 2
    assert reader.sandbox_service.arrivals == []


@pytest.mark.parametrize("where", ["folder", "bucket"])
@pytest.mark.s3
def test_a_scan_made_before_a_compaction_gives_the_same_rows_after_it(make_client, tmp_path, request, where):
    options: dict[str, Any] = {}
    cache_dir: Any = tmp_path
    if where == "bucket":
        bucket = request.getfixturevalue("s3_bucket")
        cache_dir, options = bucket.url, {"storage_options": bucket.storage_options}
    expected = _fill(make_client, cache_dir, **options)
    early = scan("versions", cache_dir=cache_dir, **options)
    first = early.filter(pl.col("app_id").is_in(APPS[:6])).collect().sort("app_id", "position")
    done = sf.compact(cache_dir=cache_dir, **options)
    assert done["frame_files_merged"] >= 2  # the files the LazyFrame would have read are gone
    later = early.filter(pl.col("app_id").is_in(APPS[:6])).collect().sort("app_id", "position")
    assert first.equals(expected) and later.equals(expected)
    assert early.select(pl.col("app_id").n_unique()).collect().item() == 7


def test_a_scan_collected_while_a_compaction_replaces_its_files_reads_the_new_ones(make_client, tmp_path, monkeypatch):
    expected = _fill(make_client, tmp_path)
    cache = Cache(tmp_path)
    locate = cache.frames.locate
    compacted = []

    def located_then_compacted(*args: Any, **kwargs: Any) -> dict[str, str]:
        found = locate(*args, **kwargs)
        if not compacted:  # another process compacts between finding the files and reading them
            compacted.append(Cache(tmp_path).compact(frames=flattener_versions()))
        return found

    monkeypatch.setattr(cache.frames, "locate", located_then_compacted)
    rows = scan("versions", cache_dir=cache).collect()
    assert compacted and compacted[0]["frame_files_merged"] >= 2
    assert rows.filter(pl.col("app_id").is_in(APPS[:6])).sort("app_id", "position").equals(expected)
    assert rows["app_id"].n_unique() == 7


def test_a_scan_whose_files_keep_vanishing_says_so_in_a_storeframes_error(make_client, tmp_path, monkeypatch):
    _fill(make_client, tmp_path)
    cache = Cache(tmp_path)
    locate = cache.frames.locate
    calls = []

    def located_elsewhere(*args: Any, **kwargs: Any) -> dict[str, str]:
        calls.append(kwargs.get("relist", False))
        return {entry_id: "frames/table=versions/part-gone.parquet" for entry_id in locate(*args, **kwargs)}

    monkeypatch.setattr(cache.frames, "locate", located_elsewhere)
    early = scan("versions", cache_dir=cache)
    # polars before 2.0 wraps what a Python source raises in its ComputeError, whose message carries ours
    raised = sf.CacheUnavailableError if int(pl.__version__.split(".")[0]) >= 2 else pl.exceptions.ComputeError
    with pytest.raises(raised, match=f"replaced {RELISTS} times while they were read.*collect the scan again"):
        early.collect()
    assert calls.count(True) == RELISTS - 1  # each attempt after the first lists the files again


@pytest.mark.s3
def test_a_bucket_scan_that_finds_its_files_when_collected_never_writes_the_secret_key_into_its_plan(
    make_client, s3_bucket
):
    options = {"storage_options": s3_bucket.storage_options}
    _fill(make_client, s3_bucket.url, **options)
    lazy = scan("versions", cache_dir=s3_bucket.url, **options)
    check_plan_keeps(lazy, s3_bucket.storage_options["aws_secret_access_key"])
    assert lazy.select(pl.col("app_id").n_unique()).collect().item() == 7


def test_an_index_file_listed_but_never_there_costs_one_listing_more_not_one_per_retry(
    make_client, tmp_path, monkeypatch
):
    expected = _fill(make_client, tmp_path)
    cache = Cache(tmp_path)
    listings = []
    list_keys = cache.storage.list

    def listed(prefix: str) -> list[str]:
        listings.append(prefix)
        found = list_keys(prefix)
        return [*found, f"{prefix}20261120T000000000000Z-000000000000-nowhere.parquet"] if "index/" in prefix else found

    monkeypatch.setattr(cache.storage, "list", listed)
    with make_client(cache_dir=cache, offline=True) as reader:
        assert reader.versions_frame(APPS[:6]).sort("app_id", "position").equals(expected)
    assert listings.count("index/endpoint=metadata/") == 2
