"""The bytes of index files: an answer's cells as rows (each with its share of the answer's cost), its entry
in the footer, and the footer's record of the rows of its kept frames (in an answer's own file, or a
compacted one of many)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import date
from typing import Any

import polars as pl

from ..answers import Entry
from .layout import FORMAT, INDEX_COLUMNS, provenance
from .parquet import parquet_bytes

__all__ = ["FRAME_ROWS", "FrameRows", "index_file", "index_rows", "part_frame_rows"]


def _shares(cost: int, n: int) -> list[int]:
    """``cost`` split over ``n`` cells in whole credits that sum to it exactly (the first cells take the rest)."""
    if n == 0:
        return []
    base, rest = divmod(cost, n)
    return [base + 1] * rest + [base] * (n - rest)


def index_rows(entries: Iterable[Entry]) -> pl.DataFrame:
    """The index rows of ``entries``: one per cell, cells in order, each with its share of the answer's cost."""
    columns: dict[str, list[Any]] = {column: [] for column in INDEX_COLUMNS}
    for entry in entries:
        cells = sorted(entry.cells, key=lambda c: (c[0] or "", c[1] or "", c[2] or date.min))
        n = len(cells)
        columns["entry"] += [entry.id] * n
        columns["service"] += [entry.service] * n
        columns["scope"] += [entry.scope] * n
        columns["entity"] += [c[0] for c in cells]
        columns["facet"] += [c[1] for c in cells]
        columns["day"] += [c[2] for c in cells]
        columns["fetched_at"] += [entry.fetched_at] * n
        columns["answer_cost"] += [entry.cost] * n
        columns["cell_cost"] += _shares(entry.cost, n)
        columns["max_credit_cost"] += [entry.max_credit_cost] * n
        columns["available"] += [entry.available] * n
        columns["params"] += [json.dumps(dict(entry.params), sort_keys=True)] * n
    return pl.DataFrame(columns, schema=INDEX_COLUMNS)


FRAME_ROWS = "storeframes.frame_rows"
"""The footer key of an index file that records the rows of the answers' kept frames: in an answer's own
file ``{table: [flattener, rows]}``, in a compacted one ``{table: {flattener: {entry: rows}}}``."""

FrameRows = dict[str, tuple[str, int]]
"""The rows of one answer's kept frames, as recorded when each was written: table -> (flattener, rows)."""


def index_file(entry: Entry, frames: FrameRows | None = None) -> bytes:
    """The bytes of the index file of one answer: its cells, and its entry in the footer (with the rows of
    its kept ``frames``, when given)."""
    # one answer's cells: no column statistics (half the write; the compacted index has them)
    extra = {"frame_rows": json.dumps({t: list(v) for t, v in sorted(frames.items())})} if frames else {}
    meta = provenance(entry, FORMAT, rows=str(len(entry.cells)), **extra)
    return parquet_bytes(index_rows([entry]), meta, statistics=False)


def _own_rows(text: str | None) -> FrameRows:
    """The rows of one answer's kept frames in its index file's footer; none when absent or malformed."""
    try:
        found = json.loads(text) if text else {}
        return {str(t): (str(v), int(n)) for t, (v, n) in found.items() if int(n) >= 0}
    except (ValueError, TypeError, AttributeError):
        return {}


def _part_rows(text: str | None) -> dict[str, FrameRows]:
    """The rows of the kept frames a compacted index file's footer records, by answer; none when malformed."""
    out: dict[str, FrameRows] = {}
    try:
        found = json.loads(text) if text else {}
        for table, versions in found.items():
            for version, counts in versions.items():
                for entry_id, n in counts.items():
                    if int(n) >= 0:
                        out.setdefault(str(entry_id), {})[str(table)] = (str(version), int(n))
    except (ValueError, TypeError, AttributeError):
        return {}
    return out


def part_frame_rows(rows: Mapping[str, FrameRows]) -> str:
    """The footer value recording ``rows`` (by answer) in a compacted index file."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for entry_id, tables in sorted(rows.items()):
        for table, (version, n) in tables.items():
            out.setdefault(table, {}).setdefault(version, {})[entry_id] = n
    return json.dumps(out, separators=(",", ":"))
