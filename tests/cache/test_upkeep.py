"""The cache's upkeep over a MemoryStore: clear by endpoint and age, info, and where a cache is."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from storeframes.cache import Cache
from storeframes.cache.stores import MemoryStore
from tests.cache._memory import METADATA, SEARCH, Clock, keep, ledger_rows, look


def test_clear_by_endpoint_removes_its_answers_and_frames_only(store, cache):
    gone = keep(cache, "metadata", METADATA, cost=21)
    stays = keep(cache, "search", SEARCH, cost=11)
    frame = pl.DataFrame({"x": [1]})
    cache.frames.write(gone, "metadata", "1", frame)
    cache.frames.write(stays, "search_results", "1", frame)
    cache.ledger.write("s-0001", ledger_rows(1))
    assert cache.info()["by_service"]["unit"]["paid"] == 32 and cache.info()["credits_paid"] == 0

    assert cache.clear(endpoint="metadata") == 1
    assert cache.entries() == [stays] and cache.entry(gone.id) is None
    assert look(cache, "metadata", METADATA) == {}
    assert store.list() == [
        f"answers/endpoint=search/{stays.id}.json.zst",
        f"frames/table=search_results/{stays.id}.parquet",
        f"index/endpoint=search/{stays.id}.parquet",
        "ledger/s-0001.parquet",
    ]
    assert cache.clear(endpoint="metadata") == 0
    assert cache.clear() == 1 and store.list() == ["ledger/s-0001.parquet"]  # the ledger is kept


def test_clear_older_than_goes_by_when_an_answer_was_kept_not_by_its_fetched_at():
    clock = Clock()
    store = MemoryStore(clock=clock)
    cache = Cache(store)
    now = datetime.now(UTC)
    clock.now -= 40 * 86400
    old = keep(cache, "metadata", METADATA, at=now)  # kept 40 days ago, whatever day it is dated
    clock.now += 40 * 86400
    new = keep(cache, "search", SEARCH, at=now - timedelta(days=400))  # dated long ago, kept now
    assert cache.aged(timedelta(days=30)) == ([old], [])
    assert cache.clear(older_than=timedelta(days=30)) == 1
    assert cache.entries() == [new] and cache.entry(old.id) is None


def test_clear_removes_set_aside_files_and_old_answers_without_an_index():
    clock = Clock()
    store = MemoryStore(clock=clock)
    cache = Cache(store)
    entry = keep(cache, "search", SEARCH)
    clock.now -= 7200
    store.put("answers/endpoint=metadata/stopped-2h-ago.json.gz", b"no index was written")
    store.put("answers/endpoint=metadata/stopped-2h-ago-too.json.zst", b"no index was written")
    clock.now += 7200
    store.put("answers/endpoint=metadata/being-written.json.gz", b"its index comes next")
    store.put("frames/t/junk.parquet", b"x")
    store.set_aside("frames/t/junk.parquet")  # just now: clear removes it all the same
    assert cache.clear(endpoint="metadata") == 0
    assert store.usage().set_aside == 1  # another endpoint's folders are left alone
    assert cache.clear() == 1
    assert store.list() == ["answers/endpoint=metadata/being-written.json.gz"]
    assert store.usage().set_aside == 0 and cache.entry(entry.id) is None


def test_info_and_location_of_a_cache_in_memory(store, cache):
    assert cache.path is None and cache.location == "memory" and repr(cache) == "Cache(memory)"
    assert cache.info()["entries"] == 0 and cache.info()["bytes"] == 0
    keep(cache, "metadata", METADATA, cost=21)
    keep(cache, "search", SEARCH, cost=11)
    info = cache.info()
    assert info["path"] == "memory" and info["entries"] == 2 and info["by_service"]["unit"]["paid"] == 32
    assert info["credits_paid"] == 0  # the real service's only: these entries are of the "unit" service
    assert info["by_endpoint"]["metadata"] == 1 and info["by_endpoint"]["search"] == 1
    assert info["bytes"] == sum(len(store.get(key)) for key in store.list()) and info["corrupt_files"] == 0


def test_a_cache_is_given_a_folder_or_a_store():
    folder = Cache("some/folder")  # nothing is created until something is kept
    assert folder.path == Path("some/folder") and folder.location == "some/folder"
    assert repr(folder) == "Cache('some/folder')" and not Path("some/folder").exists()
    with pytest.raises(TypeError, match="folder path, a bucket address or a Store"):
        Cache(3)
