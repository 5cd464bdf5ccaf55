"""The rows of each kept frame, recorded in the index when the frame is written: held against the frame by
another process, carried into a compacted index, and never written into an index file of format 1."""

from __future__ import annotations

import warnings

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from storeframes.cache import Cache, CacheWarning
from tests.cache._memory import METADATA, keep
from tests.cache.test_cache_format import IOS, arrivals, old_cache, sandbox

__all__ = ["old_cache"]  # the fixture, used by name

FRAME = pl.DataFrame({"app_id": METADATA["apps"].split(","), "title": ["One", "Two"]})


def _write_over(store, key: str, frame: pl.DataFrame) -> None:
    """Write ``frame`` over the frame file ``key``, with the footer the cache wrote there."""
    meta = pq.read_metadata(pa.BufferReader(store.get(key))).metadata
    sink = pa.BufferOutputStream()
    pq.write_table(frame.with_columns(entry=pl.lit("x")).to_arrow().replace_schema_metadata(meta), sink)
    store.put(key, sink.getvalue().to_pybytes())


def _reader(store) -> Cache:
    """Another process's cache over ``store``, having looked up its metadata answers (as a call does first)."""
    reader = Cache(store)
    assert reader.entries("metadata")
    return reader


@pytest.mark.parametrize("compacted", [False, True], ids=["own index file", "compacted index"])
def test_a_kept_frame_with_more_rows_than_recorded_is_not_served_by_another_process(store, cache, compacted):
    entry = keep(cache, "metadata", METADATA)
    cache.frames.write(entry, "metadata", "1", FRAME)
    cache.frames.flush()  # its rows recorded in the index file behind the call: done before another process looks
    if compacted:
        cache.compact()  # the index merged; the frame file stays as it is
        assert [k for k in store.list("index/")] == [k for k in store.list("index/") if "/part-" in k]
    key = f"frames/table=metadata/{entry.id}.parquet"
    assert _reader(store).frames.read([entry], "metadata", "1").get(entry.id).equals(FRAME)
    _write_over(store, key, pl.concat([FRAME] * 3))
    with pytest.warns(CacheWarning, match="6 rows where the index recorded 2"):
        found = _reader(store).frames.read([entry], "metadata", "1")
        assert entry.id not in found  # built again from the answer by the caller
    assert key not in store.list() and store.usage().set_aside == 1


def test_a_cache_of_format_1_keeps_serving_offline_once_its_frames_are_kept(old_cache):
    folder, _ = old_cache
    index = sorted((folder / "index" / "endpoint=metadata").glob("*.parquet"))
    before = [pq.read_metadata(path).metadata for path in index]
    with sandbox(folder, offline=True) as client:
        expected = client.metadata_frame(IOS[:2])  # its frame built and kept
    assert [pq.read_metadata(path).metadata for path in index] == before  # never written as format 2
    with sandbox(folder, offline=True) as client, warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        assert client.metadata_frame(IOS[:2]).equals(expected) and arrivals(client) == 0


def test_frames_whose_rows_the_index_recorded_are_read_in_one_scan_without_their_footers(tmp_path, monkeypatch):
    writer = Cache(tmp_path)
    entries = [keep(writer, "metadata", {**METADATA, "apps": f"{1000 + n},{2000 + n}"}) for n in range(20)]
    frames = {e.id: FRAME.with_columns(app_id=pl.Series([f"{1000 + n}", f"{2000 + n}"])) for n, e in enumerate(entries)}
    for entry in entries:
        writer.frames.write(entry, "metadata", "1", frames[entry.id])
    writer.frames.flush()
    footers: list[str] = []
    read_metadata = pl.read_parquet_metadata
    monkeypatch.setattr(
        pl, "read_parquet_metadata", lambda source: footers.append(str(source)) or read_metadata(source)
    )
    reader = Cache(tmp_path)
    reader.entries("metadata")
    footers.clear()  # the index files' footers, read to open the cache
    found = reader.frames.read(entries, "metadata", "1", schema=FRAME.schema)
    assert {i: f.to_dicts() for i, f in found.items()} == {i: f.to_dicts() for i, f in frames.items()}
    assert [f for f in footers if "frames" in f] == []  # one scan, no footer opened one by one
    # a file written over with other columns fails the scan: each file is then read alone, and it is built again
    changed = frames[entries[0].id].with_columns(rating=pl.lit(4.5))
    changed.with_columns(entry=pl.lit(entries[0].id)).write_parquet(
        tmp_path / "frames" / "table=metadata" / f"{entries[0].id}.parquet"
    )
    again = Cache(tmp_path)
    again.entries("metadata")
    found = again.frames.read(entries, "metadata", "1", schema=FRAME.schema)
    assert sorted(found) == sorted(e.id for e in entries[1:])
    assert found[entries[5].id].to_dicts() == frames[entries[5].id].to_dicts()
