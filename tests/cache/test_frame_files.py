"""Frame files over a MemoryStore: written per flattener version, read back the same, set aside when unreadable."""

from __future__ import annotations

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from storeframes.cache import CacheWarning
from tests.cache._memory import SEARCH, keep


def test_frames_round_trip_for_their_flattener_version(store, cache):
    entry = keep(cache, "search", SEARCH)
    frame = pl.DataFrame(
        {"rank": [1, 2, 3], "app_id": ["a", "b", None]}, schema={"rank": pl.Int32, "app_id": pl.String}
    )
    assert cache.frames.read([entry], "search_results", "1").get(entry.id) is None
    cache.frames.write(entry, "search_results", "1", frame)
    back = cache.frames.read([entry], "search_results", "1").get(entry.id)
    assert back is not None and back.equals(frame) and back.schema == frame.schema
    assert cache.frames.read([entry], "search_results", "2").get(entry.id) is None  # another flattener wrote it
    assert cache.frames.read([entry], "other_table", "1").get(entry.id) is None
    key = f"frames/table=search_results/{entry.id}.parquet"
    meta = pq.read_metadata(pa.BufferReader(store.get(key))).metadata
    assert meta[b"storeframes.flattener"] == b"1" and meta[b"storeframes.entry_id"] == entry.id.encode()
    store.put(key, b"garbage")
    with pytest.warns(CacheWarning, match="unreadable"):
        assert cache.frames.read([entry], "search_results", "1").get(entry.id) is None
    assert key not in store.list() and store.usage().set_aside == 1
