"""Answer files over a MemoryStore: kept as the bytes that arrived with their index file, loaded back,
set aside when unreadable."""

from __future__ import annotations

import json
import warnings

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from storeframes import planning
from storeframes.cache import INDEX_SCHEMA, Cache, CacheWarning
from storeframes.catalog import ENDPOINTS
from tests.cache._memory import APPS, METADATA, NOON, SEARCH, keep, look
from tests.cache.test_cache_format import read_answer


def test_a_stored_answer_is_found_for_its_cells_and_loads_back(cache, store):
    entry = keep(cache, "metadata", METADATA)
    cells = planning.cells_of(ENDPOINTS["metadata"], METADATA)
    assert cells == [(APPS[0], None, None), (APPS[1], None, None)]
    assert look(cache, "metadata", METADATA) == {cell: entry for cell in cells}
    one = {**METADATA, "apps": APPS[1]}
    assert look(cache, "metadata", one) == {(APPS[1], None, None): entry}
    assert look(cache, "metadata", {**METADATA, "country": "gb"}) == {}  # another scope
    assert look(cache, "metadata", {**METADATA, "apps": "389801252"}) == {}

    loaded = cache.load(entry)
    assert loaded is not None and loaded.from_cache and loaded.entry == entry.id
    assert loaded.result == {"params": METADATA, "at": NOON.isoformat()}
    assert (loaded.cost, loaded.max_credit_cost, loaded.status, loaded.fetched_at) == (21, 26, 200, NOON)
    assert dict(loaded.params) == METADATA
    assert entry.cost == 21 and entry.share(1) == 10 and cache.entry(entry.id) == entry

    # the folder layout, in the store
    assert store.list() == [
        f"answers/endpoint=metadata/{entry.id}.json.zst",
        f"index/endpoint=metadata/{entry.id}.parquet",
    ]
    raw, body = read_answer(store.get(f"answers/endpoint=metadata/{entry.id}.json.zst"))
    assert raw["params"] == METADATA and raw["cost"] == 21 and raw["format"] == 2
    assert json.loads(body)["result"] == loaded.result  # made here (no body arrived): kept as its result
    index = pq.read_table(pa.BufferReader(store.get(f"index/endpoint=metadata/{entry.id}.parquet")))
    text = {pa.string(), pa.large_string()}  # text columns of either width
    assert index.schema.names == INDEX_SCHEMA.names and index["entity"].to_pylist() == APPS
    assert all(a == b or {a, b} <= text for a, b in zip(index.schema.types, INDEX_SCHEMA.types, strict=True))
    footer = pq.read_metadata(pa.BufferReader(store.get(f"index/endpoint=metadata/{entry.id}.parquet"))).metadata
    assert footer[b"storeframes.endpoint"] == b"metadata"


def test_an_unreadable_answer_is_set_aside_and_its_cells_become_misses(store, cache):
    entry = keep(cache, "metadata", METADATA)
    kept = keep(cache, "search", SEARCH)
    store.put(f"answers/endpoint=metadata/{entry.id}.json.zst", b"\x28\xb5\x2f\xfd not zstd at all")
    with pytest.warns(CacheWarning, match="unreadable") as caught:
        assert cache.load(entry) is None
    assert len(caught) == 1 and f"{entry.id}.json.zst.corrupt" in str(caught[0].message)
    assert look(cache, "metadata", METADATA) == {}
    assert store.list() == [
        f"answers/endpoint=search/{kept.id}.json.zst",
        f"index/endpoint=search/{kept.id}.parquet",
    ]  # the answer and its index file, set aside
    assert store.usage().set_aside == 2 and cache.info()["corrupt_files"] == 2
    assert Cache(store).entries() == [kept]
    with warnings.catch_warnings():  # a cache that still holds the entry finds it gone: None, quietly
        warnings.simplefilter("error")
        assert Cache(store).load(entry) is None


def test_an_index_whose_answer_is_gone_is_set_aside_quietly(store, cache, recwarn):
    entry = keep(cache, "search", SEARCH)
    store.delete(f"answers/endpoint=search/{entry.id}.json.zst")
    assert cache.load(entry) is None
    assert not [w for w in recwarn if issubclass(w.category, CacheWarning)]
    assert store.list() == [] and look(cache, "search", SEARCH) == {}
