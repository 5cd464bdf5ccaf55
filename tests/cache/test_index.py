"""The index over a MemoryStore: every entry holding a cell, newest first, across caches and once compacted."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from storeframes import planning
from storeframes.cache import Cache, CacheWarning
from storeframes.catalog import ENDPOINTS
from tests.cache._memory import APPS, METADATA, NOON, SEARCH, keep, look


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


def test_an_unreadable_index_file_is_set_aside_with_its_answer(store, cache):
    entry = keep(cache, "search", SEARCH)
    store.put(f"index/endpoint=search/{entry.id}.parquet", b"PAR1 not parquet")
    other = Cache(store)
    with pytest.warns(CacheWarning, match="unreadable"):
        assert other.entries() == []
    assert store.list() == [] and store.usage().set_aside == 2


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


def test_a_batch_searches_a_compacted_index_once_and_a_later_look_finds_the_rest(store, cache, monkeypatch):
    from storeframes.cache import index as index_module

    ep = ENDPOINTS["metadata"]
    kept = {str(1000 + n): keep(cache, "metadata", {**METADATA, "apps": str(1000 + n)}) for n in range(30)}
    cache.compact()
    fresh = Cache(store)  # another process opening the compacted cache
    built: list[int] = []
    entries_of = index_module._entries_of
    monkeypatch.setattr(
        index_module, "_entries_of", lambda rows, endpoint: built.append(rows.height) or entries_of(rows, endpoint)
    )
    scope = planning.scope_of(ep, METADATA)
    wanted = [str(1000 + n) for n in range(20)]
    fresh.sync("metadata")
    fresh.prepare(ep, service="unit", wanted={scope: set(wanted)})
    assert built == [20]  # one pass over the compacted file for the 20 apps, not one per app
    for app in wanted:  # the calls of the batch find them with no further search
        assert fresh.newest(ep, service="unit", scope=scope, cells=[(app, None, None)], sync=False) == {
            (app, None, None): kept[app]
        }
    fresh.prepare(ep, service="unit", wanted={scope: set(wanted)})
    assert built == [20]
    later = fresh.newest(ep, service="unit", scope=scope, cells=[("1025", None, None), ("9", None, None)], sync=False)
    assert later == {("1025", None, None): kept["1025"]} and built == [20, 1]
    assert fresh.newest(ep, service="other", scope=scope, cells=[("1026", None, None)], sync=False) == {}
    assert sorted(e.id for e in fresh.entries("metadata")) == sorted(e.id for e in kept.values())


def test_newest_gives_the_newest_entry_of_each_cell_and_candidates_every_one(store, cache):
    ep = ENDPOINTS["metadata"]
    scope = planning.scope_of(ep, METADATA)
    cells = planning.cells_of(ep, METADATA)
    old = keep(cache, "metadata", METADATA, at=NOON - timedelta(hours=3))
    new = keep(cache, "metadata", {**METADATA, "apps": APPS[0]}, at=NOON)
    late = keep(cache, "metadata", {**METADATA, "apps": APPS[0]}, at=NOON - timedelta(hours=1))  # kept after, older
    assert cache.newest(ep, service="unit", scope=scope, cells=cells) == {cells[0]: new, cells[1]: old}
    assert cache.candidates(ep, service="unit", scope=scope, cells=cells)[cells[0]] == [new, late, old]
    cache._index.forget(new)  # its answer gone: the next newest serves its cell
    assert cache.newest(ep, service="unit", scope=scope, cells=cells) == {cells[0]: late, cells[1]: old}
    cache._index.forget(late)
    assert cache.newest(ep, service="unit", scope=scope, cells=cells) == {cells[0]: old, cells[1]: old}
    assert cache.candidates(ep, service="unit", scope=scope, cells=cells) == {cells[0]: [old], cells[1]: [old]}
    cache._index.forget(old)
    assert cache.newest(ep, service="unit", scope=scope, cells=cells) == {}
    for compacted in (False, True):  # a new cache opens the three answers at once, sharing a cell: the same
        if compacted:
            Cache(store).compact()
        other = Cache(store)
        assert other.newest(ep, service="unit", scope=scope, cells=cells) == {cells[0]: new, cells[1]: old}
        assert other.candidates(ep, service="unit", scope=scope, cells=cells)[cells[0]] == [new, late, old]


def test_a_new_cache_reads_many_index_files_side_by_side_each_as_alone(store, cache):
    kept = [keep(cache, "metadata", {**METADATA, "apps": str(1000 + n)}) for n in range(40)]
    store.put(f"index/endpoint=metadata/{kept[3].id}.parquet", b"PAR1 not parquet")
    gone = f"index/endpoint=metadata/{kept[7].id}.parquet"
    get = store.get
    readers: set[str] = set()

    def removed_while_listed(key: str) -> bytes:  # a file another process removes after it was listed
        readers.add(threading.current_thread().name)
        if key == gone:
            store.delete(key)
        return get(key)

    store.get = removed_while_listed
    other = Cache(store)
    with pytest.warns(CacheWarning, match="unreadable"):
        found = other.entries("metadata")
    assert sorted(e.id for e in found) == sorted(e.id for n, e in enumerate(kept) if n not in (3, 7))
    assert other.entry(kept[39].id) == kept[39] and other.entry(kept[7].id) is None
    assert any(name.startswith("storeframes-index") for name in readers)  # read side by side, on the index's threads
