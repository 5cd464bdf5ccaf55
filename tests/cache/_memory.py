"""The cache over a MemoryStore, shared by the modules of its parts: answers kept by hand and looked up
by cell, ledger rows, and a clock to set."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from typing import Any

import polars as pl

from storeframes import planning
from storeframes.answers import Response
from storeframes.cache import Cache, Entry
from storeframes.catalog import ENDPOINTS
from storeframes.ledger import LEDGER_SCHEMA

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


def ledger_rows(*minutes: int) -> pl.DataFrame:
    """Ledger rows of the search answer, ``minutes`` past noon; odd minutes are cache hits."""
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


class Clock:
    """A clock for a MemoryStore's modification times, set by hand."""

    def __init__(self) -> None:
        self.now = datetime.now(UTC).timestamp()

    def __call__(self) -> float:
        return self.now
