"""Search histories read from the bytes of their answers straight into columns, for the one hot shape.

A history answer as the service sends it, compact JSON keyed by date with the ids as text
(``{"result":{"2026-01-05":["284882215",...],...},"metadata":...}``), is read by
:func:`read_history_body` from its bytes, on the request path in place of the parse: polars
finds the quotes in native code, the quotes cut the result into its texts (an Arrow column over
the body's own bytes), and the ids become one column without a Python object per id; the rest
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
_DAY_TEXT = r"^\d{4}-\d{2}-\d{2}"


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
    """The days, their numbers of ids and the ids of the result at ``body[start:end]``; None unless in the hot shape."""
    import pyarrow as pa

    whole = pa.py_buffer(body)
    part = pl.from_arrow(pa.Array.from_buffers(pa.uint8(), end - start, [None, whole.slice(start, end - start)]))
    assert isinstance(part, pl.Series)
    if part.min() < 0x20 or part.max() > 0x7E:  # type: ignore[operator]  # control bytes or not ASCII
        return None
    quotes = (part == _QUOTE).arg_true().cast(pl.Int64)
    if len(quotes) < 2 or len(quotes) % 2:
        return None
    # every other text of the body is between two quotes: the dates and ids; the ones between are the marks
    marks = pl.DataFrame({"close": quotes.gather_every(2, 1)[:-1], "open": quotes.gather_every(2, 2)})
    kinds = _kinds(marks, part)
    if kinds is None:
        return None
    # a text is a date when it opens the result or follows a day's end; a date is followed by a list's start
    after_date = kinds.get_column("list") | kinds.get_column("empty")
    before_date = kinds.get_column("end") | kinds.get_column("empty")
    is_date = pl.concat([pl.Series([True]), before_date])
    if not (after_date == is_date[:-1]).all():
        return None
    tail = body[start + quotes[-1] + 1 : end]
    if tail != (b":[]" if is_date[-1] else b"]"):
        return None
    opening = (pl.int_range(len(quotes), eager=True, dtype=pl.Int32) + 1) % 2  # 1 at an opening quote
    offsets = quotes.cast(pl.Int32) + start + opening
    texts = pl.from_arrow(pa.StringArray.from_buffers(len(quotes) - 1, offsets.to_arrow().buffers()[1], whole))
    assert isinstance(texts, pl.Series)
    texts = texts.gather_every(2)
    days = texts.filter(is_date)
    ids = texts.filter(~is_date)
    where = is_date.arg_true().to_list()
    day_counts = [b - a - 1 for a, b in zip(where, [*where[1:], len(texts)], strict=True)]
    dates = days.to_list()
    if (len(ids) and ids.str.len_bytes().min() == 0) or not days.str.contains(_DAY_TEXT).all():
        return None
    if len(set(dates)) != len(dates):  # a day given twice: the parsed answer keeps the last list only
        return None
    return dates, day_counts, ids


def _kinds(marks: pl.DataFrame, part: pl.Series) -> pl.DataFrame | None:
    """Each mark between two texts as ``"next"`` (``","``: another id), ``"list"`` (``":["``: a day's ids start),
    ``"end"`` (``"],"``: a day's ids end) or ``"empty"`` (``":[],"``); None when one is none of these."""
    close = marks.get_column("close")
    gap = marks.get_column("open") - close - 1
    padded = part.extend_constant(0, 4)  # the marks' first four bytes, whatever their length
    byte = [padded.gather(close + k) for k in (1, 2, 3, 4)]
    kinds = pl.DataFrame(
        {
            "next": (gap == 1) & (byte[0] == _COMMA),
            "list": (gap == 2) & (byte[0] == _COLON) & (byte[1] == _OPEN),
            "end": (gap == 2) & (byte[0] == _CLOSE) & (byte[1] == _COMMA),
            "empty": (gap == 4) & (byte[0] == _COLON) & (byte[1] == _OPEN) & (byte[2] == _CLOSE) & (byte[3] == _COMMA),
        }
    )
    known = kinds.select(pl.any_horizontal(pl.all()).all()).item() if len(kinds) else True
    return kinds if known else None
