"""Search histories read from the bytes of their answers straight into columns, for the one hot shape.

A history answer as the service sends it, compact JSON keyed by date with the ids as text
(``{"result":{"2026-01-05":["284882215",...],...},"metadata":...}``), is read by
:func:`read_history_body` from its bytes, on the request path in place of the parse: polars
finds the quotes in native code, the quotes cut the result into its texts (an Arrow column over
the body's own bytes), and Arrow takes the ids into one column, handed to polars as string views
(its own layout), without a Python object per id; the rest
of the body (its metadata) is parsed as before. The walk of
:func:`~storeframes.flatteners.search.batch_search_history` over a parsed answer made a Python
list of 1.8 million texts for a year of ten keywords, then copied it into a column.

Only a result in exactly that form is read so: printable ASCII, no escape, no white space, no
empty id, every day once and a list of texts. Anything else (another form, integer ids, an
empty id, an escape, white space, a repeated day ...) gives None, and the body is parsed and
walked as before, with its errors and warnings; so is a day with more results than the
documented cap (:func:`history_from_columns` gives None). The frames are equal either way
(``tests/flatteners/test_columnar.py``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import orjson
import polars as pl

from ._columns import Flat, Keys
from .search import HISTORY_CAPS, _day_source, _history_frame, _today_of

__all__ = ["HistoryColumns", "history_from_columns", "read_history_body"]

_HEAD = b'{"result":{"'
"""How a body in the hot shape begins: its result first, keyed by date."""
_QUOTE, _COMMA, _COLON, _OPEN, _CLOSE = b'",:[]'
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")  # (matched at the start)


class HistoryColumns:
    """A history's result read into columns: its days in order, each one's number of ids, and the ids."""

    __slots__ = ("counts", "dates", "ids", "rest")

    def __init__(self, dates: list[str], counts: list[int], ids: pl.Series, rest: dict[str, Any]):
        self.dates = dates
        self.counts = counts
        self.ids = ids
        self.rest = rest  # the body's other members (its metadata), parsed

    def __repr__(self) -> str:
        days, ids = getattr(self, "dates", None), getattr(self, "ids", None)  # (a half-built one too)
        return f"HistoryColumns({len(days or ()):,} days, {0 if ids is None else len(ids):,} ids)"


def history_from_columns(
    read: Sequence[tuple[HistoryColumns, Keys]], *, endpoint: str = "search_history"
) -> Flat | None:
    """What ``batch_search_history`` gives for the answers read into ``read``, with each one's keys; None when
    a day holds more results than the cap (then the walk of the parsed answers warns and cuts).

    >>> columns = read_history_body(b'{"result":{"2026-01-05":["284882215","389801252"]},"metadata":{}}')
    >>> frame, counts = history_from_columns([(columns, Keys())])
    >>> frame.select("date", "rank", "app_id").rows(), counts
    ([(datetime.date(2026, 1, 5), 1, '284882215'), (datetime.date(2026, 1, 5), 2, '389801252')], [2])
    """
    if not read:
        return None
    d_keyword: list[Any] = []
    d_date: list[Any] = []
    d_source: list[str] = []
    d_n: list[int] = []
    d_day_path: list[str] = []
    answer_days: list[int] = []
    counts: list[int] = []
    for columns, keys in read:
        cap = HISTORY_CAPS.get("android" if keys.device == "android" else "ios", HISTORY_CAPS["ios"])
        if columns.counts and max(columns.counts) > cap:
            return None
        keyword = keys.request.get("keyword")
        today = _today_of(keys)
        d_keyword += [keyword] * len(columns.dates)
        d_date += columns.dates
        d_source += [_day_source(day, today, n) for day, n in zip(columns.dates, columns.counts, strict=True)]
        d_n += columns.counts
        d_day_path += [f"result.{day}" for day in columns.dates]
        answer_days.append(len(columns.dates))
        counts.append(len(columns.ids))
    parts = [columns.ids for columns, _ in read]
    ids = (pl.concat(parts, rechunk=False) if len(parts) > 1 else parts[0]).alias("app_id")
    days = (d_keyword, d_date, d_source, d_n, d_day_path)
    return _history_frame([keys for _, keys in read], answer_days, days, lambda: ids, endpoint), counts


def read_history_body(body: bytes) -> HistoryColumns | None:
    """A history answer's body read into columns when its result is in the hot shape; else None.

    >>> read_history_body(b'{"result":{"2026-01-05":["284882215"],"2026-01-06":[]},"metadata":{"request":{}}}')
    HistoryColumns(2 days, 1 ids)
    >>> read_history_body(b'{"result":{"2026-01-05":[284882215]},"metadata":{}}') is None  # integer ids: walked
    True
    """
    if not body.startswith(_HEAD):
        return None
    start = len(_HEAD) - 1  # the first day's opening quote
    end = body.find(b"}", start)  # the result's end, unless a text holds a brace (then the quotes do not pair up)
    if end < 0 or body.find(b"\\", start, end) >= 0:
        return None
    rest = _rest(body[end + 1 :])
    if rest is None:
        return None
    read = _read(body, start, end)
    if read is None:
        return None
    return HistoryColumns(*read, rest)


def _rest(tail: bytes) -> dict[str, Any] | None:
    """The members after the result (``,"metadata":{...}}``), parsed; None unless a JSON object without a result."""
    if tail.rstrip(b" \t\n\r") == b"}":
        return {}
    if not tail.startswith(b","):
        return None
    try:
        rest = orjson.loads(b"{" + tail[1:])
    except orjson.JSONDecodeError:
        return None  # not strict JSON: parse_answer reads the whole body
    return rest if type(rest) is dict and "result" not in rest else None


def _read(body: bytes, start: int, end: int) -> tuple[list[str], list[int], pl.Series] | None:
    """The days, their numbers of ids and the ids of the result at ``body[start:end]``; None unless in the hot shape.

    The result is cut at its quotes into texts and the marks between them. Nearly every mark is ``","``
    (another id): those are checked together in native code; the few others (a day's start or end, one per
    day) are read one by one, and they say which texts are dates. The ids are taken from the texts by Arrow
    into one compact column, handed to polars as views (its own layout) without another copy.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    whole = pa.py_buffer(body)
    size = end - start
    part = pl.from_arrow(pa.Array.from_buffers(pa.uint8(), size, [None, whole.slice(start, size)]))
    assert isinstance(part, pl.Series)
    if part.min() < 0x20 or part.max() > 0x7E:  # type: ignore[operator]  # control bytes or not ASCII
        return None
    quotes = (part == _QUOTE).arg_true()
    if len(quotes) < 2 or len(quotes) % 2:
        return None
    texts = len(quotes) // 2  # text k is between quotes 2k and 2k + 1; mark k between text k and text k + 1
    close, opening = quotes.gather_every(2, 1)[:-1], quotes.gather_every(2, 2)
    other = (~((opening - close == 2) & (part.gather(close + 1) == _COMMA))).arg_true()  # marks not ","
    where = _days(body, start, other.to_list(), close.gather(other).to_list(), opening.gather(other).to_list(), texts)
    if where is None:
        return None
    tail = body[start + quotes[-1] + 1 : end]
    if tail != (b":[]" if where[-1] == texts - 1 else b"]"):
        return None
    bounds = quotes.gather([i for k in where for i in (2 * k, 2 * k + 1)]).to_list()
    dates = [body[start + a + 1 : start + b].decode() for a, b in zip(bounds[::2], bounds[1::2], strict=True)]
    if not all(_DAY.match(day) for day in dates) or len(set(dates)) != len(dates):
        return None  # (a day given twice: the parsed answer keeps the last list only)
    day_counts = [b - a - 1 for a, b in zip(where, [*where[1:], texts], strict=True)]
    is_date = pl.zeros(texts, pl.Boolean, eager=True).scatter(where, True)
    # the texts and marks in turn, each from just after its opening quote, as offsets into the whole body
    wide = quotes.dtype == pl.UInt64  # (polars' 64-bit indices)
    offsets = quotes + (start + 1) - (pl.int_range(len(quotes), eager=True, dtype=pl.UInt64 if wide else pl.UInt32) & 1)
    if not wide and len(body) >= 2**31:
        return None
    cut = (pa.LargeStringArray if wide else pa.StringArray).from_buffers(
        len(quotes) - 1, offsets.to_arrow().buffers()[1], whole
    )
    taken = pc.take(cut, (pl.int_range(texts, eager=True, dtype=pl.Int32) * 2).filter(~is_date).to_arrow())
    if pc.min(pc.binary_length(taken)).as_py() == 0:  # an empty id
        return None
    view = getattr(pa, "string_view", None)  # (pyarrow 16 on: polars' own layout, no copy into it)
    ids = pl.from_arrow(taken if view is None else taken.cast(view()))
    assert isinstance(ids, pl.Series)
    return dates, day_counts, ids


def _days(
    body: bytes, start: int, marks: list[int], closes: list[int], opens: list[int], texts: int
) -> list[int] | None:
    """Which texts are dates, in order, from the marks that are not ``","`` (mark k at ``body[start + closes[i] + 1 :
    start + opens[i]]``, k = ``marks[i]``); None when one is not a day's start or end, or a day is not a list."""
    dates = [0]  # the first text is a date; a text is a date after a day's end, and a day's ids start after a date
    listed = []
    for k, a, b in zip(marks, closes, opens, strict=True):
        mark = body[start + a + 1 : start + b]
        if mark == b":[":
            listed.append(k)
        elif mark == b"],":
            dates.append(k + 1)
        elif mark == b":[],":
            listed.append(k)
            dates.append(k + 1)
        else:
            return None
    if listed != [k for k in dates if k < texts - 1]:
        return None
    return dates
