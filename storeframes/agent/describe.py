"""What an assistant can ask for: the frame functions with their arguments and prices, the endpoints, and the
tables with their columns; all from the package's own declarations (the catalog, the frame specs, the schemas),
so the description cannot drift from what the tools do."""

from __future__ import annotations

import inspect
from typing import Any

import polars as pl

from ..catalog import DEFAULT_COSTS, ENDPOINTS, endpoint_rows
from ..errors import InvalidParameterError
from ..fetch.pipeline import FRAMES
from ..frames.functions import FrameFunctions
from ..kept.snapshots import SNAPSHOT_TABLES
from ..kept.tables import TABLES
from ..lake.sql import VIEWS
from ..schemas import SCHEMAS, read_schema
from .tables import Shown, show

__all__ = ["FUNCTIONS", "describe", "function_table", "signature_of"]

FUNCTIONS: tuple[str, ...] = (*FRAMES, "find_apps")
"""The frame functions ``plan`` and ``fetch_frame`` take, by name."""


def signature_of(name: str) -> str:
    """A frame function's arguments as a short text: ``apps, *, country='us', ...`` (no ``refresh``)."""
    signature = inspect.signature(getattr(FrameFunctions, name))
    shown = []
    for parameter in signature.parameters.values():
        if parameter.name in ("self", "refresh"):
            continue
        if parameter.default is inspect.Parameter.empty:
            shown.append(parameter.name)
        else:
            shown.append(f"{parameter.name}={parameter.default!r}")
    return ", ".join(shown)


def _first_line(text: str | None) -> str:
    return (inspect.cleandoc(text or "").split("\n\n")[0]).replace("\n", " ")


def function_table() -> pl.DataFrame:
    """One row per frame function: its endpoint, its table, what a row is, its arguments."""
    rows = []
    for name in FUNCTIONS:
        spec = FRAMES.get(name)
        rows.append(
            {
                "function": name,
                "endpoint": spec.endpoint if spec else "search, metadata",
                "table": spec.table.name if spec else "",
                "one row per": spec.table.doc.removeprefix("one row per ") if spec else "app of a live search's top",
                "arguments": signature_of(name),
            }
        )
    return pl.DataFrame(rows)


def describe(name: str | None, settings: dict[str, Any]) -> Shown:
    """The overview (``name`` None), or one frame function, endpoint or table."""
    if name is None or not str(name).strip():
        return _overview(settings)
    key = str(name).strip().removesuffix("_snapshots")
    if key in FUNCTIONS:
        return _function(key)
    if key in ENDPOINTS:
        return _endpoint(key)
    if key in SCHEMAS and key in TABLES:
        return _table(key)
    if key in VIEWS:
        return show(pl.DataFrame({"view": [key]}), title=f"{key}: a view of sf.sql (the cache's {key})")
    allowed = f"a frame function ({', '.join(FUNCTIONS)}), an endpoint ({', '.join(ENDPOINTS)}) or a table ({', '.join(TABLES)})"
    raise InvalidParameterError("name", name, allowed, endpoint="describe")


def _overview(settings: dict[str, Any]) -> Shown:
    functions = function_table().select("function", "endpoint", "one row per")
    prices = pl.DataFrame(endpoint_rows()).select("endpoint", "price", "max_apps")
    lines = [
        "storeframes: app-store data as tables. Free tools read what the cache holds (scan, sql, movers, changes_before,",
        "category_standing, share_of_voice, keyword_opportunities, rank_anomalies, events, track_status, spend,",
        "describe, plan); fetch_frame is the one tool that may spend credits, and shows the price first.",
        "server: " + "; ".join(f"{k} {v}" for k, v in settings.items()),
        "",
        "tables for scan (snapshots=true: every day kept of "
        + ", ".join(SNAPSHOT_TABLES)
        + "); sql views: "
        + ", ".join(VIEWS),
        "",
    ]
    shown = show(functions, title="frame functions (plan and fetch_frame)", limit=None)
    priced = show(
        prices, title="endpoints and prices in credits (per request; the service's reported cost wins)", limit=None
    )
    text = (
        "\n".join(lines)
        + shown.text
        + "\n\n"
        + priced.text
        + "\n\ndescribe(name) gives a function's arguments or a table's columns."
    )
    data = {
        "functions": shown.data["rows"],
        "endpoints": priced.data["rows"],
        "tables": sorted(TABLES),
        "snapshot_tables": sorted(SNAPSHOT_TABLES),
        "sql_views": sorted(VIEWS),
        "settings": settings,
    }
    return Shown(text, data)


def _function(name: str) -> Shown:
    doc = _first_line(getattr(FrameFunctions, name).__doc__)
    spec = FRAMES.get(name)
    notes = [f"arguments: {signature_of(name)}", doc]
    if spec is None:
        return Shown("\n".join([f"{name}:", *notes]), {"function": name, "arguments": signature_of(name)})
    columns = spec.table.describe()
    shown = show(
        columns, title=f"{name} -> table {spec.table.name} (endpoint {spec.endpoint})", limit=None, notes=notes
    )
    shown.data["arguments"] = signature_of(name)
    return shown


def _endpoint(name: str) -> Shown:
    row = next(r for r in endpoint_rows() if r["endpoint"] == name)
    cost = DEFAULT_COSTS[name]
    functions = [f for f, spec in FRAMES.items() if spec.endpoint == name]
    notes = [
        f"price: {row['price']} (credits; the service's reported cost wins)",
        f"frame functions: {', '.join(functions)}",
    ]
    frame = pl.DataFrame([{k: v for k, v in row.items() if k != "price"}])
    shown = show(frame, title=f"endpoint {name}", notes=notes)
    shown.data["cost_model"] = {k: v for k, v in vars(cost).items() if v}
    return shown


def _table(name: str) -> Shown:
    schema = read_schema(SCHEMAS[name])  # as the cache's tools read it (search: its list last)
    notes = [f"one row per {schema.doc.removeprefix('one row per ')}"]
    if name in SNAPSHOT_TABLES:
        notes.append("current-only: scan(snapshots=true) gives every day kept, with snapshot_date first")
    return show(schema.describe(), title=f"table {name}", limit=None, notes=notes)
