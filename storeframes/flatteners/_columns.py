"""Building blocks of the flatteners: typed columns from Python lists, JSON paths in errors.

A flattener walks the parsed answer once, appending raw values to one list per column,
then hands the lists to :func:`build`. Types are checked by polars while it builds each
column (``strict=True``), so the walk stays cheap; only when a column is refused is it
scanned again in Python to name the JSON path of the first value of the wrong type.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from itertools import chain, repeat
from typing import Any

import polars as pl

from ..errors import ResponseShapeError, warn
from ..schemas import PRICE, UTC_TIMESTAMP, TableSchema

TEXT_LIST = pl.List(pl.String())
# What polars' fast text parsers raise on a text they cannot read; some releases panic instead (a
# PanicException derives from BaseException, not Exception). Either way the texts are read one by one.
_PARSE_FAILURES = (pl.exceptions.PolarsError, pl.exceptions.PanicException, ValueError)

__all__ = ["Answers", "Flat", "Keys", "UnknownFieldWarning", "Walk", "build", "html_to_text"]


class UnknownFieldWarning(UserWarning):
    """The service sent a field no frame schema knows; it was left out (the warning filters say how often it is shown)."""


@dataclass(frozen=True)
class Keys:
    """The key columns every row of one answer shares: where, in which language, on which device, when."""

    country: str | None = None
    language: str | None = None
    device: str | None = None
    fetched_at: datetime | None = None
    request: Mapping[str, str] = field(default_factory=dict, compare=False)
    """The request's canonical parameters (the keyword, a benchmark's channel and dates ...)."""

    @classmethod
    def of(cls, params: Mapping[str, Any], echo: Mapping[str, Any], fetched_at: datetime | None) -> Keys:
        """Keys from a request's canonical parameters, with the service's echo filling defaults."""

        def pick(name: str) -> str | None:
            value = params.get(name) or echo.get(name)
            return str(value) if value is not None else None

        return cls(pick("country"), pick("language"), pick("device"), fetched_at, dict(params))


NO_KEYS = Keys()
"""Keys of an answer whose request is not known: the key columns stay null."""
KEY_COLUMNS = ("country", "language", "device", "fetched_at")
Answers = Sequence[tuple[Any, Keys]]
"""The answers one flattener call walks: each ``(result, keys)``; their rows come out in order."""
Flat = tuple[pl.DataFrame, list[int]]
"""A batch flattener's frame and the number of rows of each answer, in order."""

_KEY_DTYPES = {"country": pl.String(), "language": pl.String(), "device": pl.String(), "fetched_at": UTC_TIMESTAMP}

# -- unknown fields ------------------------------------------------------------------


def note_unknown(
    where: str,
    fields: Iterable[str],
    *,
    what: tuple[str, str] = ("a field", "fields"),
    fate: str = "left out of the frame",
) -> None:
    """Warn about names the schema does not know, met at ``where`` (one warning for all of them).

    ``what`` names what they are, one and several (fields are left out; change targets are
    kept), and ``fate`` what became of them. The warning filters decide how often it is
    shown (by default once per line of the user's code and message).
    """
    names = sorted({str(f) for f in fields})
    if names:
        noun = what[0] if len(names) == 1 else what[1]
        warn(
            f"the service sent {noun} storeframes does not know at {where}, {fate}: {', '.join(names)}",
            UnknownFieldWarning,
        )


# -- walking the answer ----------------------------------------------------------------


def shape_error(expected: str, value: Any, path: str, endpoint: str) -> ResponseShapeError:
    found = "null" if value is None else type(value).__name__
    shown = repr(value) if isinstance(value, (str, int, float, bool)) else found
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return ResponseShapeError(f"expected {expected}, got {shown}", path=path, endpoint=endpoint)


def obj(value: Any, path: str, endpoint: str) -> dict[str, Any]:
    """An object member; null counts as an empty object."""
    if type(value) is dict:
        return value
    if value is None:
        return {}
    raise shape_error("an object", value, path, endpoint)


def seq(value: Any, path: str, endpoint: str) -> list[Any]:
    """An array member; null counts as an empty array."""
    if type(value) is list:
        return value
    if value is None:
        return []
    raise shape_error("an array", value, path, endpoint)


def apps_of(result: Any, endpoint: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(app_id, resource)`` for each app of an answer keyed by app id."""
    if result is None:
        return
    if type(result) is not dict:
        raise shape_error("an object keyed by app id", result, "result", endpoint)
    for app_id, resource in result.items():
        if type(resource) is not dict:
            raise shape_error("an object", resource, f"result.{app_id}", endpoint)
        yield str(app_id), resource


class Walk:
    """The apps of several answers, in order, counting each answer's rows.

    ``apps(rows)`` yields ``(app_id, resource)`` of every answer; ``rows`` is the list
    the caller appends one item per row to, so ``counts`` ends with each answer's rows.
    ``current`` is the keys of the answer being walked.
    """

    def __init__(self, answers: Answers, endpoint: str):
        self.answers = answers
        self.endpoint = endpoint
        self.keys = [keys for _, keys in answers]
        self.counts: list[int] = []
        self.current = NO_KEYS

    def apps(self, rows: list[Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        for result, keys in self.answers:
            self.current = keys
            start = len(rows)
            yield from apps_of(result, self.endpoint)
            self.counts.append(len(rows) - start)


def ident(value: Any) -> Any:
    """An id as text: integers become digits; anything else but text is left for the type check."""
    return str(value) if type(value) is int else value


def as_json(value: Any) -> str | None:
    """A value of unknown shape as compact JSON text (text stays as it is)."""
    if value is None or type(value) is str:
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


_SCALE = Decimal("0.0001")
_LARGEST = Decimal(10) ** 34  # what a decimal of 38 digits, 4 after the point, holds


def decimal(value: Any) -> Decimal | None:
    """A decimal amount from text or a number; None when it is not one."""
    if value is None or type(value) is bool:
        return None
    try:
        number = Decimal(value if type(value) is str else str(value))
        return number.quantize(_SCALE) if number.is_finite() and abs(number) < _LARGEST else None
    except (InvalidOperation, ValueError, TypeError):
        return None


_BREAK = re.compile(r"<\s*br\s*/?\s*>|<\s*/\s*(?:p|div|li|h[1-6])\s*>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]*>")


def html_to_text(text: str | None) -> str | None:
    """Plain text from the store's HTML: line breaks kept, tags removed, entities decoded.

    >>> html_to_text("<b>New</b> in 2.0:<br>Faster &amp; smaller")
    'New in 2.0:\\nFaster & smaller'
    """
    if not text:
        return text
    if "<" in text:
        text = _TAG.sub("", _BREAK.sub("\n", text))
    return html.unescape(text) if "&" in text else text


# -- building typed columns ----------------------------------------------------------


def _accepts(dtype: pl.DataType) -> tuple[Callable[[Any], bool], str]:
    if dtype == pl.String or dtype == UTC_TIMESTAMP or dtype == pl.Date:
        return (lambda v: type(v) is str), "text"
    if dtype == pl.Int64:
        return (lambda v: type(v) is int), "an integer"
    if dtype == pl.Float64:
        return (lambda v: type(v) in (int, float)), "a number"
    if dtype == pl.Boolean:
        return (lambda v: type(v) is bool), "true or false"
    if dtype == TEXT_LIST:
        return (lambda v: type(v) is list and all(type(x) is str for x in v)), "an array of text"
    return (lambda v: True), str(dtype)


def _first_bad(values: list[Any], dtype: pl.DataType) -> tuple[int, str]:
    ok, expected = _accepts(dtype)
    for i, value in enumerate(values):
        if value is not None and not ok(value):
            return i, expected
    return -1, expected


Where = Callable[[int, str], str]


def _refuse(values: list[Any], dtype: pl.DataType, column: str, where: Where, endpoint: str) -> ResponseShapeError:
    i, expected = _first_bad(values, dtype)
    if i < 0:  # polars refused, yet every value has the right Python type: report the first value
        i = 0
    return shape_error(expected, values[i], where(i, column), endpoint)


def _typed(values: list[Any], dtype: pl.DataType, column: str, where: Where, endpoint: str) -> pl.Series:
    if dtype == UTC_TIMESTAMP:
        return _timestamps(values, column, where, endpoint)
    if dtype == pl.Date:
        return _dates(values, column, where, endpoint)
    if dtype == PRICE:
        return pl.Series(column, values, dtype=dtype)
    if dtype == TEXT_LIST:
        return _text_lists(values, column, where, endpoint)
    try:
        series = pl.Series(column, values, dtype=dtype, strict=True)
    except (TypeError, ValueError, OverflowError, pl.exceptions.PolarsError):
        raise _refuse(values, dtype, column, where, endpoint) from None
    if (dtype == pl.Int64 or dtype == pl.Float64) and bool in set(map(type, values)):
        raise _refuse(values, dtype, column, where, endpoint)
    return series


def _text_lists(values: list[Any], column: str, where: Where, endpoint: str) -> pl.Series:
    """A list-of-text column through Arrow offsets (polars builds nested lists from Python slowly).

    The texts, offsets and mask become Arrow arrays through polars, not ``pa.array``: pyarrow's first
    ``pa.array`` of a Python list in a process imports pandas when it is installed (0.2-0.3 s)."""
    import pyarrow as pa  # when first needed: importing storeframes stays quick

    offsets = [0]
    flat: list[Any] = []
    mask: list[bool] = []
    for value in values:
        if value is not None:
            flat.extend(value)
        offsets.append(len(flat))
        mask.append(value is None)
    try:
        # a list of plain texts with 32-bit offsets, whatever polars exports texts as (string_view, large_string):
        # the one layout every supported polars reads back as a list of texts
        texts = pl.Series(flat, dtype=pl.String, strict=True).to_arrow().cast(pa.string())
    except (TypeError, ValueError, pl.exceptions.PolarsError):
        raise _refuse(values, TEXT_LIST, column, where, endpoint) from None
    at = pl.Series(offsets, dtype=pl.Int32).to_arrow()
    lists = pa.ListArray.from_arrays(at, texts, mask=pl.Series(mask, dtype=pl.Boolean).to_arrow())
    return pl.Series(column, lists).cast(TEXT_LIST)


def _timestamps(values: list[Any], column: str, where: Where, endpoint: str) -> pl.Series:
    texts = _typed(values, pl.String(), column, where, endpoint)
    try:
        return texts.str.to_datetime(time_unit="us", time_zone="UTC", strict=True)
    except _PARSE_FAILURES:
        pass
    parsed: list[datetime | None] = []  # mixed or unusual ISO 8601 forms: parse one by one
    for i, text in enumerate(values):
        if text is None:
            parsed.append(None)
            continue
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise shape_error("an ISO 8601 timestamp", text, where(i, column), endpoint) from None
        parsed.append(moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC))
    return pl.Series(column, parsed, dtype=UTC_TIMESTAMP)


def _dates(values: list[Any], column: str, where: Where, endpoint: str) -> pl.Series:
    texts = _typed(values, pl.String(), column, where, endpoint)
    try:
        return texts.str.to_date("%Y-%m-%d", strict=True)
    except _PARSE_FAILURES:
        pass
    parsed: list[date | None] = []
    for i, text in enumerate(values):
        try:
            parsed.append(None if text is None else date.fromisoformat(text[:10]))
        except ValueError:
            raise shape_error("a date as YYYY-MM-DD", text, where(i, column), endpoint) from None
    return pl.Series(column, parsed, dtype=pl.Date)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def _key_series(name: str, keys: Sequence[Keys], counts: Sequence[int]) -> pl.Series:
    """One key column: each answer's value repeated over its rows (timestamps go in as integers, fast)."""
    values: list[Any] = [getattr(k, name) for k in keys]
    if name == "fetched_at":
        values = [None if v is None else (v - _EPOCH) // _MICROSECOND for v in values]
    if len(set(values)) == 1:
        repeated = values[:1] * sum(counts)
    else:
        repeated = list(chain.from_iterable(repeat(v, n) for v, n in zip(values, counts, strict=True)))
    if name == "fetched_at":
        return pl.Series(name, repeated, dtype=pl.Int64).cast(UTC_TIMESTAMP)
    return pl.Series(name, repeated, dtype=pl.String)


def build(
    table: TableSchema,
    columns: Mapping[str, list[Any]],
    keys: Sequence[Keys],
    counts: Sequence[int],
    where: Where,
    *,
    endpoint: str,
    ids: Collection[str] = (),
) -> pl.DataFrame:
    """A frame of ``table``'s schema from one list per column (missing columns are null).

    ``keys`` and ``counts`` give each answer's key columns (country, language, device,
    fetched_at) and its number of rows. ``where(row, column)`` gives the JSON path of a
    value, for the error raised when a value has the wrong type. Integers in the ``ids``
    columns become text.
    """
    height = sum(counts)
    series: list[pl.Series] = []
    for column in table.columns:
        name, dtype = column.name, column.dtype
        if name in _KEY_DTYPES and name not in columns:
            series.append(_key_series(name, keys, counts))
        elif name in columns:
            values = columns[name]
            if name in ids:
                series.append(_ids(values, name, where, endpoint))
            else:
                series.append(_typed(values, dtype, name, where, endpoint))
        else:
            series.append(pl.Series(name, [None] * height, dtype=dtype))
    return pl.DataFrame(series)


def _ids(values: list[Any], column: str, where: Where, endpoint: str) -> pl.Series:
    """A column of ids: text, with integers made text (checked only when polars refuses the list)."""
    if values and type(values[0]) is int:
        numbers = _integer_ids(values, column)
        if numbers is not None:
            return numbers
    try:
        return pl.Series(column, values, dtype=pl.String, strict=True)
    except (TypeError, ValueError, pl.exceptions.PolarsError):
        return _typed([ident(v) for v in values], pl.String(), column, where, endpoint)


def _integer_ids(values: list[Any], column: str) -> pl.Series | None:
    """Ids that are all integers (or null), made text by polars; None when the list holds anything else.

    Polars reads a list of integers at once and writes their digits in native code, where
    making each one a Python string first costs ten times as much (and trying the list as
    text first costs more again: polars refuses it only after looking at every value).
    """
    try:
        numbers = pl.Series(column, values, strict=True)
    except (TypeError, ValueError, OverflowError, pl.exceptions.PolarsError):
        return None
    if numbers.dtype != pl.Int64 or bool in set(map(type, values)):  # polars reads true as 1 after an integer
        return None
    return numbers.cast(pl.String)
