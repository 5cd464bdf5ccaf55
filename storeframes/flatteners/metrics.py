"""Flattener of the metrics answer (``result.<app_id>.<metric>``): a pure function, no I/O.

>>> result = {"1": {"power": {"value": 61.5, "date": "2026-11-19"}}}
>>> flatten_metrics(result, Keys(country="us"))["metric"].to_list()
['app-power']
"""

from __future__ import annotations

from typing import Any

import polars as pl

from ..catalog import METRIC_ALIASES
from ..catalog import METRICS as METRIC_NAMES
from ..schemas import METRICS
from ._columns import NO_KEYS, Answers, Flat, Keys, Walk, build, note_unknown, obj, shape_error

__all__ = ["batch_metrics", "flatten_metrics"]

_EP = "metrics"
_MEMBER_FIELDS = frozenset({"value", "precision", "date", "currency", "breakdown"})
_STARS = ("1", "2", "3", "4", "5")
_BREAKDOWN_FIELDS = frozenset({*_STARS, "total", "avg"})
_SOURCES = {f"stars_{s}": f"breakdown.{s}" for s in _STARS} | {
    "ratings_total": "breakdown.total",
    "ratings_average": "breakdown.avg",
}


def _whole(value: Any, path: str) -> Any:
    """A count: an integer, or a float with no fraction (made an integer)."""
    if type(value) is float:
        if not value.is_integer():
            raise shape_error("a whole number", value, path, _EP)
        return int(value)
    return value


def flatten_metrics(result: Any, keys: Keys = NO_KEYS) -> pl.DataFrame:
    """One row per app and metric (:data:`~storeframes.schemas.METRICS`); see :func:`batch_metrics`."""
    return batch_metrics([(result, keys)])[0]


def batch_metrics(answers: Answers) -> Flat:
    """One row per app and metric, over several answers (:data:`~storeframes.schemas.METRICS`).

    The metric is named as it is requested: the answer's ``power`` (as the service
    documents it) and ``app-power`` (as clients see it) both become ``app-power``. The
    ratings breakdown (``"1"`` .. ``"5"``, ``total``, ``avg``) becomes its own columns.
    """
    cols: dict[str, list[Any]] = {name: [] for name in METRICS.names if name not in ("country", "device", "fetched_at")}
    keys_seen: list[str] = []
    unknown: set[str] = set()
    walk = Walk(answers, _EP)
    for app_id, resource in walk.apps(keys_seen):
        for key, member in resource.items():
            metric = METRIC_ALIASES.get(key, key)
            if metric not in METRIC_NAMES:
                unknown.add(key)
                continue
            path = f"result.{app_id}.{key}"
            member = obj(member, path, _EP)
            if not member.keys() <= _MEMBER_FIELDS:
                unknown |= {f"{key}.{k}" for k in member.keys() - _MEMBER_FIELDS}
            breakdown = obj(member.get("breakdown"), f"{path}.breakdown", _EP)
            if not breakdown.keys() <= _BREAKDOWN_FIELDS:
                unknown |= {f"{key}.breakdown.{k}" for k in breakdown.keys() - _BREAKDOWN_FIELDS}
            keys_seen.append(key)
            cols["app_id"].append(app_id)
            cols["metric"].append(metric)
            cols["value"].append(member.get("value"))
            cols["precision"].append(member.get("precision"))
            cols["currency"].append(member.get("currency"))
            cols["date"].append(member.get("date"))
            for star in _STARS:
                cols[f"stars_{star}"].append(_whole(breakdown.get(star), f"{path}.breakdown.{star}"))
            cols["ratings_total"].append(_whole(breakdown.get("total"), f"{path}.breakdown.total"))
            cols["ratings_average"].append(breakdown.get("avg"))
    if unknown:
        note_unknown("result.<app_id> (metrics)", unknown)
    app_ids = cols["app_id"]
    frame = build(
        METRICS,
        cols,
        walk.keys,
        walk.counts,
        lambda i, column: f"result.{app_ids[i]}.{keys_seen[i]}.{_SOURCES.get(column, column)}",
        endpoint=_EP,
    )
    return frame, walk.counts
