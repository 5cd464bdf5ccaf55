"""The cache over a MemoryStore: no sandbox, no threads, no files."""

from __future__ import annotations

import json
import warnings
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from storeframes import planning
from storeframes.answers import Response
from storeframes.cache import INDEX_SCHEMA, Cache, CacheWarning, Entry
from storeframes.catalog import ENDPOINTS
from storeframes.ledger import LEDGER_SCHEMA
from storeframes.store import MemoryStore
from tests.unit.cache.test_cache_format import read_answer

NOON = datetime(2026, 11, 20, 12, tzinfo=UTC)
APPS = ["284882215", "310633997"]
METADATA = {"apps": ",".join(APPS), "country": "us", "language": "en", "device": "iphone"}
SEARCH = {"keyword": "photo editor", "country": "us", "language": "en", "device": "iphone"}


def history(start: date, end: date) -> dict[str, str]:
    return {**SEARCH, "start_date": start.isoformat(), "end_date": end.isoformat()}


def keep(cache: Cache, endpoint: str, params: dict[str, str], *, at: datetime = NOON, cost: int = 21) -> Entry:
    """Store an answer of ``endpoint`` to ``params``, fetched ``at``."""
    result: Any = {"params": params, "at": at.isoformat()}
    response = Response(endpoint, params, result, cost=cost, max_credit_cost=cost + 5, status=200, fetched_at=at)
    ep = ENDPOINTS[endpoint]
    entry = cache.store(
        response, service="unit", scope=planning.scope_of(ep, params), cells=planning.cells_of(ep, params)
    )
    assert entry is not None
    return entry


def look(cache: Cache, endpoint: str, params: dict[str, str], **options: Any) -> dict:
    """The newest entry holding each cell of ``params`` (whether it is fresh is the engine's to judge)."""
    ep = ENDPOINTS[endpoint]
    held = cache.candidates(
        ep, service="unit", scope=planning.scope_of(ep, params), cells=planning.cells_of(ep, params), **options
    )
    return {cell: entries[0] for cell, entries in held.items()}


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore()


@pytest.fixture
def cache(store: MemoryStore) -> Cache:
    return Cache(store)


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


def test_the_newest_entry_of_a_cell_wins(cache):
    old = keep(cache, "metadata", METADATA, at=NOON - timedelta(hours=3))
    new = keep(cache, "metadata", {**METADATA, "apps": APPS[0]}, at=NOON)
    found = look(cache, "metadata", METADATA)
    assert found == {(APPS[0], None, None): new, (APPS[1], None, None): old}


def test_the_index_names_every_entry_holding_a_cell_newest_first_and_judges_none(cache):
    ep = ENDPOINTS["metadata"]
    old = keep(cache, "metadata", METADATA, at=NOON - timedelta(days=30))  # long stale: still named
    new = keep(cache, "metadata", {**METADATA, "apps": APPS[0]}, at=NOON)
    held = cache.candidates(
        ep,
        service="unit",
        scope=planning.scope_of(ep, METADATA),
        cells=[*planning.cells_of(ep, METADATA), ("389801252", None, None)],
    )
    assert held == {(APPS[0], None, None): [new, old], (APPS[1], None, None): [old]}
    assert (
        cache.candidates(
            ep, service="other", scope=planning.scope_of(ep, METADATA), cells=planning.cells_of(ep, METADATA)
        )
        == {}
    )


def test_a_second_cache_over_the_same_store_sees_entries_after_sync(store, cache):
    other = Cache(store)
    assert other.entries() == []
    entry = keep(cache, "metadata", METADATA)
    assert other.entry(entry.id) is None  # not looked yet
    other.sync("metadata")
    assert other.entry(entry.id) == entry
    assert look(other, "metadata", METADATA, sync=False) == look(cache, "metadata", METADATA)
    assert cache.clear(endpoint="metadata") == 1
    other.sync("metadata")  # removed by the other: forgotten
    assert other.entries() == [] and look(other, "metadata", METADATA) == {}


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


def test_an_unreadable_index_file_is_set_aside_with_its_answer(store, cache):
    entry = keep(cache, "search", SEARCH)
    store.put(f"index/endpoint=search/{entry.id}.parquet", b"PAR1 not parquet")
    other = Cache(store)
    with pytest.warns(CacheWarning, match="unreadable"):
        assert other.entries() == []
    assert store.list() == [] and store.usage().set_aside == 2


def test_an_index_whose_answer_is_gone_is_set_aside_quietly(store, cache, recwarn):
    entry = keep(cache, "search", SEARCH)
    store.delete(f"answers/endpoint=search/{entry.id}.json.zst")
    assert cache.load(entry) is None
    assert not [w for w in recwarn if issubclass(w.category, CacheWarning)]
    assert store.list() == [] and look(cache, "search", SEARCH) == {}


def test_frames_round_trip_for_their_flattener_version(store, cache):
    entry = keep(cache, "search", SEARCH)
    frame = pl.DataFrame(
        {"rank": [1, 2, 3], "app_id": ["a", "b", None]}, schema={"rank": pl.Int32, "app_id": pl.String}
    )
    assert cache.read_frame(entry, "search_results", "1") is None
    cache.write_frame(entry, "search_results", "1", frame)
    back = cache.read_frame(entry, "search_results", "1")
    assert back is not None and back.equals(frame) and back.schema == frame.schema
    assert cache.read_frame(entry, "search_results", "2") is None  # another flattener wrote it
    assert cache.read_frame(entry, "other_table", "1") is None
    key = f"frames/table=search_results/{entry.id}.parquet"
    meta = pq.read_metadata(pa.BufferReader(store.get(key))).metadata
    assert meta[b"storeframes.flattener"] == b"1" and meta[b"storeframes.entry_id"] == entry.id.encode()
    store.put(key, b"garbage")
    with pytest.warns(CacheWarning, match="unreadable"):
        assert cache.read_frame(entry, "search_results", "1") is None
    assert key not in store.list() and store.usage().set_aside == 1


def _ledger(*minutes: int) -> pl.DataFrame:
    rows = [
        {
            "time": NOON + timedelta(minutes=m),
            "service": "service",
            "endpoint": "search",
            "params": json.dumps(SEARCH),
            "cost": 0 if m % 2 else 11,
            "max_credit_cost": 11,
            "status": 200,
            "attempt": 0 if m % 2 else 1,
            "elapsed_ms": 1.5,
            "from_cache": bool(m % 2),
            "saved": 11 if m % 2 else 0,
            "row": f"s-{m:07d}",
        }
        for m in minutes
    ]
    return pl.DataFrame(rows, schema=LEDGER_SCHEMA)


def test_ledger_rows_round_trip_oldest_first(store, cache):
    assert cache.read_ledger().equals(pl.DataFrame(schema=LEDGER_SCHEMA))
    cache.write_ledger("b-0001", _ledger(5, 6))
    cache.write_ledger("a-0001", _ledger(1, 9))
    cache.write_ledger("c-0001", _ledger())  # nothing to keep: no file
    assert store.list("ledger/") == ["ledger/a-0001.parquet", "ledger/b-0001.parquet"]
    assert cache.read_ledger().equals(_ledger(1, 5, 6, 9))
    cache.write_ledger("b-0001", _ledger(5, 6, 7))  # a session rewrites its last file as it grows
    assert cache.read_ledger().equals(_ledger(1, 5, 6, 7, 9))
    assert cache.info()["credits_saved"] == 4 * 11  # the four cache hits


def test_clear_by_endpoint_removes_its_answers_and_frames_only(store, cache):
    gone = keep(cache, "metadata", METADATA, cost=21)
    stays = keep(cache, "search", SEARCH, cost=11)
    frame = pl.DataFrame({"x": [1]})
    cache.write_frame(gone, "metadata", "1", frame)
    cache.write_frame(stays, "search_results", "1", frame)
    cache.write_ledger("s-0001", _ledger(1))
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


def test_clear_older_than_keeps_recent_answers(cache):
    now = datetime.now(UTC)
    old = keep(cache, "metadata", METADATA, at=now - timedelta(days=40))
    new = keep(cache, "search", SEARCH, at=now - timedelta(days=1))
    assert cache.clear(older_than=timedelta(days=30)) == 1
    assert cache.entries() == [new] and cache.entry(old.id) is None


def test_clear_removes_set_aside_files_and_old_answers_without_an_index():
    clock = _Clock()
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


class _Clock:
    def __init__(self) -> None:
        self.now = datetime.now(UTC).timestamp()

    def __call__(self) -> float:
        return self.now


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


def test_a_compacted_index_serves_lookups_entries_and_every_answer(store, cache):
    kept = [
        keep(cache, "metadata", {**METADATA, "apps": str(1000 + n)}, at=NOON + timedelta(minutes=n)) for n in range(50)
    ]
    newer = keep(cache, "metadata", {**METADATA, "apps": "1003,1004"}, at=NOON + timedelta(hours=2))
    cache.compact()
    assert [k for k in store.list("index/")] == [k for k in store.list("index/") if "/part-" in k] != []
    fresh = Cache(store)  # another process opening the compacted cache
    found = look(fresh, "metadata", {**METADATA, "apps": "1003,1004,1005"})
    assert found == {("1003", None, None): newer, ("1004", None, None): newer, ("1005", None, None): kept[5]}
    assert fresh.entry(kept[40].id) == kept[40]
    assert sorted(e.id for e in Cache(store).entries()) == sorted(e.id for e in [*kept, newer])
    assert fresh.load(kept[5]) is not None and fresh.load(kept[5]).result == {  # type: ignore[union-attr]
        "params": {**METADATA, "apps": "1005"},
        "at": (NOON + timedelta(minutes=5)).isoformat(),
    }
