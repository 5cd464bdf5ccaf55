"""Reading a cache while a compaction replaces its files: a file listed, then gone before it is read."""

from __future__ import annotations

from typing import Any

import polars as pl

import storeframes as sf
from storeframes.cache import Cache
from storeframes.datasets import flattener_versions
from storeframes.sandbox import World

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
