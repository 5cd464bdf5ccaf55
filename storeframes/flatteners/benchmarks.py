"""Flattener of the category benchmarks answer (``result.category_benchmarks``): a pure function, no I/O.

>>> result = {"category_benchmarks": [{"category": 6014, "category_name": "Games",
...            "page_views_to_installs": 41.5, "number_of_apps": None}]}
>>> flatten_benchmarks(result, Keys(country="us", device="iphone")).select("category", "page_views_to_installs")
shape: (1, 2)
┌──────────┬────────────────────────┐
│ category ┆ page_views_to_installs │
│ ---      ┆ ---                    │
│ str      ┆ f64                    │
╞══════════╪════════════════════════╡
│ 6014     ┆ 41.5                   │
└──────────┴────────────────────────┘
"""

from __future__ import annotations

from typing import Any

import polars as pl

from ..schemas import BENCHMARKS
from ._columns import NO_KEYS, Answers, Flat, Keys, build, note_unknown, obj, seq, shape_error

__all__ = ["batch_benchmarks", "flatten_benchmarks"]

_EP = "benchmarks"
_FIELDS = (
    "category",
    "category_name",
    "impressions_to_page_views",
    "page_views_to_installs",
    "impressions_to_installs",
    "number_of_apps",
)
_KNOWN = frozenset(_FIELDS)
_REQUEST = ("type", "channel", "start_date", "end_date")  # columns from the request, the same for each row


def flatten_benchmarks(result: Any, keys: Keys = NO_KEYS) -> pl.DataFrame:
    """One row per category (:data:`~storeframes.schemas.BENCHMARKS`); see :func:`batch_benchmarks`."""
    return batch_benchmarks([(result, keys)])[0]


def batch_benchmarks(answers: Answers) -> Flat:
    """One row per category, over several benchmarks answers, in the answer's order.

    The rates stay percent and stay null where the service has too little data; a
    category code sent as a number becomes text. ``type``, ``channel``, ``start_date``
    and ``end_date`` come from the request (the service echoes them).
    """
    cols: dict[str, list[Any]] = {name: [] for name in (*_FIELDS, *_REQUEST)}
    where_row: list[int] = []  # each row's index in its answer's list
    counts: list[int] = []
    unknown: set[str] = set()
    for result, keys in answers:
        records = seq(obj(result, "result", _EP).get("category_benchmarks"), "result.category_benchmarks", _EP)
        for i, record in enumerate(records):
            if type(record) is not dict:
                raise shape_error("an object", record, f"result.category_benchmarks[{i}]", _EP)
            if not record.keys() <= _KNOWN:
                unknown |= record.keys() - _KNOWN
            for name in _FIELDS:
                cols[name].append(record.get(name))
            where_row.append(i)
        n = len(records)
        for name in _REQUEST:
            cols[name] += [keys.request.get(name)] * n
        counts.append(n)
    if unknown:
        note_unknown("result.category_benchmarks[] (benchmarks)", unknown)
    frame = build(
        BENCHMARKS,
        cols,
        [keys for _, keys in answers],
        counts,
        lambda i, column: (
            f"result.category_benchmarks[{where_row[i]}].{column}" if column in _KNOWN else f"request.{column}"
        ),
        endpoint=_EP,
        ids=("category",),
    )
    rates = [name for name in _FIELDS[2:] if frame[name].is_nan().any()]
    if rates:  # a NaN (which json.loads accepts) means no value, as null does
        frame = frame.with_columns(pl.col(rates).fill_nan(None))
    return frame, counts
