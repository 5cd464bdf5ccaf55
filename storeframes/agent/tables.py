"""A frame as an assistant reads it: a capped Markdown table with its count and the columns left out, and the
same rows as JSON, with where they came from.

An assistant pays for every word it reads, so a result is small whatever the frame: at most ``limit``
rows (:data:`MOST_ROWS` at most), at most :data:`MOST_COLUMNS` columns unless asked for by name, each
text cut at :data:`MOST_CHARACTERS` characters. What was left out is said, with the total, so the
assistant can narrow the question (a filter, fewer columns) instead of guessing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any, Literal

import polars as pl

from ..errors import InvalidParameterError, plural

__all__ = ["MOST_CHARACTERS", "MOST_COLUMNS", "MOST_ROWS", "Shown", "holds_secret", "jsonable", "show"]

MOST_ROWS = 200
"""The most rows a result lists, whatever ``limit`` asks."""

MOST_COLUMNS = 12
"""The most columns a result lists when none are named (the key columns and the first others)."""

MOST_CHARACTERS = 80
"""The most characters of a text value a result shows (the rest is cut, with an ellipsis)."""

_QUIET = ("country", "language", "device", "fetched_at")
"""Key columns every frame has that say little once a question has named them: listed last."""


@dataclass
class Shown:
    """A result: ``text`` for the assistant to read, ``data`` the same as JSON (the tool's structured content)."""

    text: str
    data: dict[str, Any] = field(default_factory=dict)
    error: bool = False


def _cut(value: str) -> str:
    value = value.replace("\r", " ").replace("\n", " ")
    return value if len(value) <= MOST_CHARACTERS else value[: MOST_CHARACTERS - 1] + "…"


def jsonable(value: Any) -> Any:
    """``value`` as JSON has it: dates and times as ISO text, decimals as text, lists and structs kept."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return str(value)


def _cell(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, float):
        return f"{value:.4g}" if math.isfinite(value) else str(value)
    if isinstance(value, list | tuple):
        inner = ", ".join(_cell(v) for v in value[:5]) + (f", … {len(value) - 5} more" if len(value) > 5 else "")
        return _cut(f"[{inner}]")
    text = jsonable(value)
    return _cut(str(text)).replace("|", "\\|")


def _columns(frame: pl.DataFrame, columns: Sequence[str] | None) -> list[str]:
    if columns:
        unknown = [c for c in columns if c not in frame.columns]
        if unknown:
            raise InvalidParameterError(
                "columns", list(columns), f"columns of this result: {', '.join(frame.columns)}", endpoint="agent"
            )
        return list(dict.fromkeys(columns))
    loud = [c for c in frame.columns if c not in _QUIET]
    quiet = [c for c in frame.columns if c in _QUIET]
    return [*loud, *quiet][:MOST_COLUMNS]


def show(
    frame: pl.DataFrame,
    *,
    title: str,
    limit: int | None = 20,
    columns: Sequence[str] | None = None,
    provenance: Mapping[str, Any] | None = None,
    notes: Sequence[str] = (),
    hint: str | None = None,
    total: int | Literal["unknown"] | None = None,
) -> Shown:
    """``frame`` as a result: a title line, the provenance, a Markdown table of its first ``limit`` rows
    (at most :data:`MOST_ROWS`) and ``columns`` (by default the first :data:`MOST_COLUMNS`, key columns
    last), and what was left out. ``hint`` says how to narrow a frame too large to list whole.
    ``total`` is the rows of the whole answer when ``frame`` holds only its first ones (``"unknown"``
    when they were not counted); by default ``frame``'s."""
    most = MOST_ROWS if limit is None else max(0, min(int(limit), MOST_ROWS))
    chosen = _columns(frame, columns)
    left_out = [c for c in frame.columns if c not in chosen]
    rows = frame.select(chosen).head(most)
    counted = frame.height if total is None else total
    size = "count unknown" if counted == "unknown" else plural(counted, "row")
    lines = [f"{title}: {size}, {plural(len(frame.columns), 'column')}"]
    if provenance:
        lines.append("source: " + "; ".join(f"{k} {_said(v)}" for k, v in provenance.items() if v is not None))
    lines += list(notes)
    if rows.height:
        lines.append("")
        lines.append("| " + " | ".join(chosen) + " |")
        lines.append("|" + "---|" * len(chosen))
        for row in rows.iter_rows():
            lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    if counted == "unknown" and rows.height == most:
        more = "more rows may follow: they were not counted in time"
        lines.append(f"({more}; {hint})" if hint else f"({more})")
    elif isinstance(counted, int) and counted > rows.height:
        more = f"{counted - rows.height:,} more rows not shown"
        lines.append(f"({more}; {hint})" if hint else f"({more})")
    if left_out:
        lines.append(f"columns left out: {', '.join(left_out)} (name them in `columns` to see them)")
    data: dict[str, Any] = {
        "title": title,
        "total_rows": counted if isinstance(counted, int) else None,
        "shown_rows": rows.height,
        "columns": chosen,
        "columns_left_out": left_out,
        "dtypes": {c: str(frame.schema[c]) for c in chosen},
        "rows": [{c: jsonable(v) for c, v in zip(chosen, row, strict=True)} for row in rows.iter_rows()],
    }
    if provenance:
        data["provenance"] = {k: jsonable(v) for k, v in provenance.items()}
    if notes:
        data["notes"] = list(notes)
    return Shown("\n".join(lines), data)


SECRET_PIECE = 12
"""The shortest piece of a secret :func:`holds_secret` looks for (a shorter secret is looked for whole)."""


def holds_secret(text: str, secrets: Sequence[str]) -> bool:
    """Whether ``text`` holds one of ``secrets``, or a piece of :data:`SECRET_PIECE` characters of one,
    in any case, forwards or reversed: what a query's ``upper``, ``reverse`` or ``substr`` of a secret
    would show. A second line: a query cannot read a secret in the first place.

    >>> holds_secret("NEKOT-EVIL-KS", ["sk-live-token"])
    True
    """
    folded = text.casefold()
    for secret in secrets:
        if not secret:
            continue
        size = min(SECRET_PIECE, len(secret))
        for form in (secret.casefold(), secret[::-1].casefold()):
            if any(form[at : at + size] in folded for at in range(len(form) - size + 1)):
                return True
    return False


def _said(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    return str(jsonable(value))
