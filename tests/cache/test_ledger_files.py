"""Ledger files over a MemoryStore: one file per session chunk, read back oldest first."""

from __future__ import annotations

import polars as pl

from storeframes.ledger import LEDGER_SCHEMA
from tests.cache._memory import ledger_rows


def test_ledger_rows_round_trip_oldest_first(store, cache):
    assert cache.ledger.read().equals(pl.DataFrame(schema=LEDGER_SCHEMA))
    cache.ledger.write("b-0001", ledger_rows(5, 6))
    cache.ledger.write("a-0001", ledger_rows(1, 9))
    cache.ledger.write("c-0001", ledger_rows())  # nothing to keep: no file
    assert store.list("ledger/") == ["ledger/a-0001.parquet", "ledger/b-0001.parquet"]
    assert cache.ledger.read().equals(ledger_rows(1, 5, 6, 9))
    cache.ledger.write("b-0001", ledger_rows(5, 6, 7))  # a session rewrites its last file as it grows
    assert cache.ledger.read().equals(ledger_rows(1, 5, 6, 7, 9))
    assert cache.info()["credits_saved"] == 4 * 11  # the four cache hits
