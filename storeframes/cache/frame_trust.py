"""How a kept frame read back is held to its answer: the rows the index recorded when it was written, and the
caller's check of its cells, for many answers' rows at once (one join, not a query per answer)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import polars as pl

from ..answers import Entry

__all__ = ["Check", "Trust"]

Check = Callable[[pl.DataFrame, str, Mapping[str, Entry]], Mapping[str, str]]
"""The caller's check of kept rows: given the rows of many answers, the column naming each row's answer and the
answer of each name, why each name's rows are not its answer's (rows of cells the answer does not hold); a name
that passes is left out. Rows of a name not given are not judged."""

_KEY = "\x00storeframes-answer"  # the column naming one answer's rows, when a frame is judged alone


@dataclass(frozen=True)
class Trust:
    """A read's judge of kept frames: ``misfit(entry_id, rows)`` says why a frame of that many rows is not what the
    index recorded (None when it agrees or nothing is recorded), ``check`` is the caller's."""

    misfit: Callable[[str, int], str | None]
    check: Check | None = None

    def one(self, entry: Entry, frame: pl.DataFrame) -> str | None:
        """Why ``frame`` is not ``entry``'s answer's frame, or None."""
        rows = frame.with_columns(pl.lit(entry.id, pl.String).alias(_KEY)) if self.check is not None else frame
        return self.many(rows, _KEY, {entry.id: entry}, {entry.id: frame.height}).get(entry.id)

    def many(
        self, rows: pl.DataFrame, by: str, entries: Mapping[str, Entry], heights: Mapping[str, int]
    ) -> dict[str, str]:
        """Why the rows of each name of ``entries`` (the values of column ``by`` of ``rows``; ``heights``: each
        name's rows) are not its answer's frame; a name that agrees is left out."""
        found: dict[str, str] = {}
        for key, entry in entries.items():
            if (why := self.misfit(entry.id, heights[key])) is not None:
                found[key] = why
        rest = {key: entry for key, entry in entries.items() if key not in found}
        if self.check is not None and rest:
            found.update(self.check(rows, by, rest))
        return found
