"""The credits ledger: one row per attempt sent and per answer served from the cache."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

import polars as pl

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "LEDGER_SCHEMA",
    "MOST_CREDITS",
    "SERVICE",
    "SPEND_SCHEMA",
    "UNKNOWN_SERVICE",
    "conform_ledger",
    "ledger_arrow",
    "ledger_table",
    "month_spent_of",
    "spend_summary",
]

SERVICE = "service"
"""The name of the real service in the ledger (a client's ``namespace``); the sandbox's are ``sandbox-<seed>``."""

UNKNOWN_SERVICE = "unknown"
"""The ``service`` of ledger rows written by versions that did not record it."""

LEDGER_SCHEMA = pl.Schema(
    {
        "time": pl.Datetime("us", "UTC"),
        "service": pl.String(),
        "endpoint": pl.String(),
        "params": pl.String(),
        "cost": pl.Int64(),
        "max_credit_cost": pl.Int64(),
        "status": pl.Int32(),
        "attempt": pl.Int32(),
        "elapsed_ms": pl.Float64(),
        "from_cache": pl.Boolean(),
        "saved": pl.Int64(),
        "row": pl.String(),
        "cost_estimated": pl.Boolean(),
        "reserved": pl.Boolean(),
    }
)
"""``time`` (UTC), ``service`` (the client's ``namespace``: ``"service"`` for the real
service, ``"sandbox-<seed>"`` for a sandbox), ``endpoint``, canonical ``params`` (JSON),
``cost`` charged, ``max_credit_cost`` (null when the answer's cost could not be read:
``cost`` is then the request's estimate, counted as spent), ``status`` (null for an
attempt that got no answer: a timeout, a dropped connection), ``attempt`` (0 for a cache hit),
``elapsed_ms``, ``from_cache``, ``saved`` (for a cache hit, the original cost of the
cells served), ``row``, an id unique across sessions (``<session>-<n>``), and
``cost_estimated``: True when the service did not report the cost in a form that could be
counted (a 200 whose body was cut short, was not JSON, or said a cost that is not a whole
number from 0 to :data:`MOST_CREDITS`), so ``cost`` is the request's estimate, what it may
have been charged. Files written before that column read it as ``max_credit_cost`` null,
the mark those versions gave such rows; versions before it read these files and leave
the column out.

``reserved``: True for a *reservation never settled*. Before a request is sent, a row of
its estimate is written (``cost`` the estimate, ``cost_estimated`` True, ``status`` null);
when the request ends, its attempts' rows replace it. A reservation still in the ledger is
of a request whose end was never written (its process was killed, or the disk filled up
after it was sent): the service may have charged it, so it counts at its estimate, and
budgets and ``spend`` stay on the safe side. Files written before that column read it as
False."""

MOST_CREDITS = 2**53 - 1
"""The largest cost an answer is believed to report (the largest whole number a JSON number
holds exactly in every reader): a larger one is counted as the request's estimate, with a
:class:`~storeframes.CostWarning`, so the ledger's sums never overflow its Int64 columns."""


@functools.cache
def ledger_arrow() -> pa.Schema:
    """:data:`LEDGER_SCHEMA` as Arrow: what the ledger files hold (pyarrow is imported when first needed)."""
    import pyarrow as pa

    return pa.schema(
        [
            ("time", pa.timestamp("us", tz="UTC")),
            ("service", pa.string()),
            ("endpoint", pa.string()),
            ("params", pa.string()),
            ("cost", pa.int64()),
            ("max_credit_cost", pa.int64()),
            ("status", pa.int32()),
            ("attempt", pa.int32()),
            ("elapsed_ms", pa.float64()),
            ("from_cache", pa.bool_()),
            ("saved", pa.int64()),
            ("row", pa.string()),
            ("cost_estimated", pa.bool_()),
            ("reserved", pa.bool_()),
        ]
    )


def __getattr__(name: str) -> Any:
    """``LEDGER_ARROW`` (:func:`ledger_arrow`), made when first asked for."""
    if name == "LEDGER_ARROW":
        return ledger_arrow()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def ledger_table(rows: Sequence[Mapping[str, Any]]) -> pl.DataFrame:
    """Ledger rows (dicts of :data:`LEDGER_SCHEMA`'s columns) as a frame, as they are written."""
    return pl.from_dicts(list(rows), schema=LEDGER_SCHEMA)  # a tenth of the time of a frame made from columns


SPEND_SCHEMA = pl.Schema(
    {
        "service": pl.String,
        "day": pl.Date,
        "endpoint": pl.String,
        "requests": pl.UInt32,
        "credits_spent": pl.Int64,
        "credits_estimated": pl.Int64,
        "cache_hits": pl.UInt32,
        "credits_saved": pl.Int64,
    }
)


def conform_ledger(frame: pl.DataFrame, source: str) -> pl.DataFrame:
    """Ledger rows read from a file, in :data:`LEDGER_SCHEMA`.

    A file of an earlier version lacks ``service`` (read as ``"unknown"``), ``row``
    (read as ``<source>#<position>``, ``source`` naming the file), ``cost_estimated``
    (read as ``max_credit_cost`` null, how those versions marked an estimated cost) and
    ``reserved`` (read as False: those versions wrote no reservations); so do missing values.
    """
    position = (pl.lit(f"{source}#") + pl.int_range(pl.len()).cast(pl.String)).alias("row")
    service = pl.lit(UNKNOWN_SERVICE, pl.String).alias("service")
    marked = pl.col("max_credit_cost").is_null().fill_null(False).alias("cost_estimated")
    frame = frame.with_columns(
        pl.col("service").cast(pl.String).fill_null(service) if "service" in frame.columns else service,
        pl.col("row").cast(pl.String).fill_null(position) if "row" in frame.columns else position,
    )
    frame = frame.with_columns(
        pl.col("cost_estimated").cast(pl.Boolean).fill_null(marked) if "cost_estimated" in frame.columns else marked
    )
    unreserved = pl.lit(False).alias("reserved")
    frame = frame.with_columns(
        pl.col("reserved").cast(pl.Boolean).fill_null(False) if "reserved" in frame.columns else unreserved
    )
    return frame.select(LEDGER_SCHEMA.names()).cast(LEDGER_SCHEMA)


def spend_summary(ledger: pl.DataFrame) -> pl.DataFrame:
    """Credits spent and saved per service, UTC day and endpoint (schema :data:`SPEND_SCHEMA`).

    ``requests`` counts answers received from the service (errors and retries
    included; an attempt that got no answer, ``status`` null, is not one),
    ``cache_hits`` answers served from the cache; ``credits_estimated`` is the part of
    ``credits_spent`` the service did not report (``cost_estimated`` rows: the requests'
    estimates, what they may have cost), reservations never settled included (``reserved``
    rows: requests whose process stopped before their answers were written, counted at their
    estimates, and not among ``requests``). Services are never summed together.
    """
    if ledger.is_empty():
        return pl.DataFrame(schema=SPEND_SCHEMA)
    return (
        ledger.group_by("service", pl.col("time").dt.date().alias("day"), "endpoint")
        .agg(
            requests=(~pl.col("from_cache") & pl.col("status").is_not_null()).sum().cast(pl.UInt32),
            credits_spent=pl.col("cost").sum(),
            credits_estimated=pl.col("cost").filter(pl.col("cost_estimated")).sum(),
            cache_hits=pl.col("from_cache").sum().cast(pl.UInt32),
            credits_saved=pl.col("saved").sum(),
        )
        .sort(pl.col("service") != SERVICE, "service", "day", "endpoint")  # the real service first
        .select(SPEND_SCHEMA.names())
        .cast(SPEND_SCHEMA)
    )


def month_spent_of(ledger: pl.DataFrame, service: str, day: date) -> int:
    """Credits ``service``'s token spent in ``day``'s calendar month (UTC), by ``ledger`` (every machine's,
    read from the cache)."""
    first = datetime(day.year, day.month, 1, tzinfo=UTC)
    following = datetime(day.year + (day.month == 12), day.month % 12 + 1, 1, tzinfo=UTC)
    spent = ledger.filter((pl.col("service") == service) & (pl.col("time") >= first) & (pl.col("time") < following))[
        "cost"
    ].sum()
    return int(spent or 0)
