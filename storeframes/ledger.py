"""The credits ledger: one row per answer a call used, sent or served from the cache."""

from __future__ import annotations

import polars as pl

__all__ = ["LEDGER_SCHEMA", "SPEND_SCHEMA", "spend_summary"]

LEDGER_SCHEMA = pl.Schema(
    {
        "time": pl.Datetime("us", "UTC"),
        "endpoint": pl.String(),
        "params": pl.String(),
        "cost": pl.Int64(),
        "max_credit_cost": pl.Int64(),
        "status": pl.Int32(),
        "attempt": pl.Int32(),
        "elapsed_ms": pl.Float64(),
        "from_cache": pl.Boolean(),
        "saved": pl.Int64(),
    }
)
"""``time`` (UTC), ``endpoint``, canonical ``params`` (JSON), ``cost`` charged,
``max_credit_cost``, ``status``, ``attempt`` (0 for a cache hit), ``elapsed_ms``,
``from_cache`` and ``saved`` (for a cache hit, the original cost of the cells served)."""

SPEND_SCHEMA = pl.Schema(
    {
        "day": pl.Date,
        "endpoint": pl.String,
        "requests": pl.UInt32,
        "credits_spent": pl.Int64,
        "cache_hits": pl.UInt32,
        "credits_saved": pl.Int64,
    }
)


def spend_summary(ledger: pl.DataFrame) -> pl.DataFrame:
    """Credits spent and saved per UTC day and endpoint (schema :data:`SPEND_SCHEMA`).

    ``requests`` counts answers received from the service (errors and retries
    included), ``cache_hits`` answers served from the cache.
    """
    if ledger.is_empty():
        return pl.DataFrame(schema=SPEND_SCHEMA)
    return (
        ledger.group_by(pl.col("time").dt.date().alias("day"), "endpoint")
        .agg(
            requests=(~pl.col("from_cache")).sum().cast(pl.UInt32),
            credits_spent=pl.col("cost").sum(),
            cache_hits=pl.col("from_cache").sum().cast(pl.UInt32),
            credits_saved=pl.col("saved").sum(),
        )
        .sort("day", "endpoint")
        .select(SPEND_SCHEMA.names())
        .cast(SPEND_SCHEMA)
    )
