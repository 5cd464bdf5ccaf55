"""The tools that read the cache: ``scan`` (a cached table, or every day kept of a current-only one, filtered)
and ``sql`` (a read-only query over the cache's views); no request, no token needed.

>>> print(surface.scan("metadata", {"app_id": "3233849169"}).text)  # doctest: +SKIP
metadata in the cache: 1 row, ...
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from typing import Any

import polars as pl

from ..kept.scan import scan
from ..kept.snapshots import SNAPSHOT_TABLES, snapshots
from ..lake.sql import sql_head
from .tables import MOST_ROWS, Shown, show
from .tools import Tools, day_of, fetched_when, refused, texts

__all__ = ["ReadingTools"]


class ReadingTools(Tools):
    """``scan`` and ``sql``, over what the cache holds."""

    def scan(
        self,
        table: str,
        filters: Mapping[str, Any] | None = None,
        columns: Sequence[str] | None = None,
        limit: int = 20,
        *,
        snapshots_: bool = False,
        start: str | None = None,
        end: str | None = None,
        sort: Sequence[str] | None = None,
    ) -> Shown:
        """A cached table (the newest answer of each cell), or every day kept of a current-only one."""
        first, last = day_of(start, "start", "scan"), day_of(end, "end", "scan")
        if snapshots_:
            if table not in SNAPSHOT_TABLES and table != "search_ads":
                raise refused("table", table, f"with snapshots=true one of {', '.join(SNAPSHOT_TABLES)}", "scan")
            frame = snapshots(table, self.cache, start=first, end=last, service=self.service)
        else:
            frame = scan(table, self.cache, service=self.service)
            day = "date" if "date" in frame.collect_schema() else None
            if day and first is not None:
                frame = frame.filter(pl.col(day) >= first)
            if day and last is not None:
                frame = frame.filter(pl.col(day) <= last)
        frame = _filtered(frame, filters)
        if sort:
            wanted = texts(sort, "sort", "scan") or []
            names = frame.collect_schema().names()
            unknown = [c for c in wanted if c.lstrip("-") not in names]
            if unknown:
                raise refused(
                    "sort",
                    list(sort),
                    f"columns of {table} (a leading '-' sorts descending): {', '.join(names)}",
                    "scan",
                )
            frame = frame.sort(
                [c.lstrip("-") for c in wanted], descending=[c.startswith("-") for c in wanted], nulls_last=True
            )
        collected = frame.collect()
        kind = "snapshots of " if snapshots_ else ""
        provenance: dict[str, Any] = {"requests sent": 0, "from": "the cache"}
        if "fetched_at" in collected.columns and collected.height:
            provenance["fetched"] = fetched_when(collected)
        hint = 'add filters (such as {"app_id": "..."} or {"date": {"min": "2026-11-01"}}) or columns'
        return show(
            collected,
            title=f"{kind}{table} in the cache",
            limit=limit,
            columns=columns,
            provenance=provenance,
            hint=hint,
        )

    def sql(self, query: str, limit: int = 20) -> Shown:
        """A read-only SQL query over the cache's views: its first ``limit`` rows (made alone: the limit is in the
        query DuckDB runs) and the count of all, or ``count unknown`` when not counted in time."""
        if not isinstance(query, str) or not query.strip():
            raise refused("query", query, "one SELECT over the cache's views (describe lists them)", "sql")
        import os

        from ..client import ENV_API_KEY
        from .tables import holds_secret

        # DuckDB makes only the rows shown (the limit is in the query it runs), and counts the rest
        head = sql_head(query, self.cache, rows=max(0, min(int(limit), MOST_ROWS)), service=self.service)
        shown = show(
            head.frame,
            title="sql",
            limit=limit,
            provenance={"requests sent": 0, "from": "the cache"},
            hint="add a LIMIT, a WHERE or an aggregate to the query",
            total="unknown" if head.total is None else head.total,
        )
        # a second line (a query reads no file, nor the environment): the token, even transformed, is not shown
        if holds_secret(shown.text + json.dumps(shown.data, default=str), [os.environ.get(ENV_API_KEY, "").strip()]):
            raise refused(
                "query",
                query,
                "a query whose answer holds no part of the API token, forwards or reversed, in any case",
                "sql",
            )
        return shown


def _filtered(frame: pl.LazyFrame, filters: Mapping[str, Any] | None) -> pl.LazyFrame:
    """``frame`` with ``filters``: a column's value, a list of values, or ``{"min": .., "max": ..}``."""
    if not filters:
        return frame
    if not isinstance(filters, Mapping):
        raise refused("filters", filters, 'an object of column: value, [values] or {"min": .., "max": ..}', "scan")
    schema = frame.collect_schema()
    for column, wanted in filters.items():
        if column not in schema:
            raise refused("filters", column, f"columns of the table: {', '.join(schema.names())}", "scan")
        dtype = schema[column]
        if isinstance(wanted, Mapping):
            unknown = set(wanted) - {"min", "max"}
            if unknown:
                raise refused(
                    "filters", {column: wanted}, 'a value, a list of values, or {"min": .., "max": ..}', "scan"
                )
            if wanted.get("min") is not None:
                frame = frame.filter(pl.col(column) >= _value(wanted["min"], column, dtype))
            if wanted.get("max") is not None:
                frame = frame.filter(pl.col(column) <= _value(wanted["max"], column, dtype))
        elif isinstance(wanted, list):
            frame = frame.filter(pl.col(column).is_in([_value(v, column, dtype) for v in wanted]))
        elif wanted is None:
            frame = frame.filter(pl.col(column).is_null())
        else:
            frame = frame.filter(pl.col(column) == _value(wanted, column, dtype))
    return frame


def _value(v: Any, column: str, dtype: Any) -> Any:
    """A filter's value as the column's type: ISO texts for days and times, numbers for numbers."""
    if v is None:
        return None
    try:
        if dtype == pl.Date and isinstance(v, str):
            return date.fromisoformat(v)
        if isinstance(dtype, pl.Datetime) and isinstance(v, str):
            moment = datetime.fromisoformat(v.replace("Z", "+00:00"))
            return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
        return pl.Series([v]).cast(dtype, strict=True)[0]
    except (ValueError, TypeError, pl.exceptions.PolarsError):
        raise refused("filters", {column: v}, f"a value of {column}'s type ({dtype})", "scan") from None
