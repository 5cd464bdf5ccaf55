"""Flatteners of the keyword search answers (live, live with ads, history): pure functions, no I/O.

The service does not document the member names of search answers, so every form seen
or thought possible is accepted (``docs/explanation/service.md``, "Beyond the reference"):

* a live search: ``result.value``, an ordered list of app ids (with ``result.date``);
  ``result.apps``, a list of app objects (``{"id", ...}``); or ``result`` itself a list
  of ``{"application_id", "is_ad"}`` objects, where the same app may appear twice (once
  as an ad, once organically);
* a history: an object keyed by date (``{"2026-01-05": [ids ...]}``) or a list of
  ``{"date", "value"}`` objects, a day's value being any of the lists above;
* any of these under a key named after the keyword (``{"photo editor": {...}}``).

Anything else raises :class:`~storeframes.ResponseShapeError` naming the path and the
form found. App ids sent as integers become text.

>>> answer = {"date": "2026-11-20", "value": ["284882215", 389801252]}
>>> flatten_search(answer, Keys(request={"keyword": "maps"})).select("keyword", "date", "rank", "app_id")
shape: (2, 4)
┌─────────┬────────────┬──────┬───────────┐
│ keyword ┆ date       ┆ rank ┆ app_id    │
│ ---     ┆ ---        ┆ ---  ┆ ---       │
│ str     ┆ date       ┆ i64  ┆ str       │
╞═════════╪════════════╪══════╪═══════════╡
│ maps    ┆ 2026-11-20 ┆ 1    ┆ 284882215 │
│ maps    ┆ 2026-11-20 ┆ 2    ┆ 389801252 │
└─────────┴────────────┴──────┴───────────┘
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterator
from datetime import UTC
from typing import Any

import polars as pl

from ..catalog import ENDPOINTS
from ..errors import ResponseShapeError, warn
from ..schemas import SEARCH, SEARCH_HISTORY
from ._columns import (
    KEY_COLUMNS,
    NO_KEYS,
    Answers,
    Flat,
    Keys,
    _dates,
    _ids,
    _key_series,
    ident,
    note_unknown,
    shape_error,
)

__all__ = [
    "ResultCapWarning",
    "batch_search",
    "batch_search_history",
    "flatten_search",
    "flatten_search_history",
    "same_keyword",
]

LIVE_CAP = ENDPOINTS["search"].result_cap["ios"]
"""At most this many organic results in a live search, and in the live fallback of a history."""
HISTORY_CAPS = {
    "ios": ENDPOINTS["search_history"].result_cap["ios"],
    "android": ENDPOINTS["search_history"].result_cap["android"],
}

_LISTS = ("value", "apps")  # the members holding a ranked list
_LIVE_MEMBERS = frozenset({*_LISTS, "date"})
_ID_MEMBERS = ("application_id", "id")
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}")
_FORMS = (
    "result.value (a list of app ids), result.apps (a list of app objects) or a list of "
    "{application_id, is_ad} objects, possibly under a key named after the keyword"
)
_HISTORY_FORMS = (
    "an object keyed by date (YYYY-MM-DD) or a list of {date, value} objects, possibly under a key named "
    "after the keyword"
)


class ResultCapWarning(UserWarning):
    """An answer held more results than the service documents; the extra ones were left out."""


def _form(value: Any) -> str:
    """What a value is, in words, for an error message."""
    if value is None:
        return "null"
    if type(value) is dict:
        if not value:
            return "an empty object"
        keys = sorted(map(str, value))
        shown = ", ".join(keys[:5]) + (", ..." if len(keys) > 5 else "")
        return f"an object with keys {shown}"
    if type(value) is list:
        return f"a list of {_form(value[0]).removeprefix('a ').removeprefix('an ')}" if value else "an empty list"
    if type(value) is str:
        return "text " + (repr(value) if len(value) <= 40 else repr(value[:37] + "..."))
    if type(value) is bool:
        return "true or false"
    if type(value) in (int, float):
        return f"a number ({value!r})"
    return type(value).__name__


def same_keyword(a: str, b: str) -> bool:
    """Whether two texts name the same keyword: case and runs of white space aside."""
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


def _under_keyword(result: dict[str, Any], keyword: str | None, path: str, endpoint: str) -> tuple[Any, str] | None:
    """The part of an answer under a key named after the keyword, if there is one."""
    if keyword is None:
        return None
    for key, value in result.items():
        if isinstance(key, str) and same_keyword(key, keyword) and type(value) in (dict, list):
            others = [k for k in result if k != key]
            if others:
                note_unknown(
                    f"{path} ({endpoint})",
                    others,
                    what=("a member beside the keyword", "members beside the keyword"),
                    fate="ignored",
                )
            return value, f"{path}.{key}"
    return None


class _Ranked:
    """One ranked list of results: app ids, ad flags and the path of each entry."""

    __slots__ = ("ads", "ids", "path")

    def __init__(self, ids: list[Any], ads: list[bool] | None, path: str):
        self.ids = ids  # a plain list of ids is the answer's own: the column builder checks it
        self.ads = ads  # None: all organic
        self.path = path

    def organic(self) -> list[Any]:
        return self.ids if self.ads is None else [i for i, ad in zip(self.ids, self.ads, strict=True) if not ad]


def _ranked(items: Any, path: str, endpoint: str) -> _Ranked:
    """A ranked list from a list of ids (text or integers) or of app objects."""
    if items is None:
        return _Ranked([], None, path)
    if type(items) is not list:
        raise ResponseShapeError(
            f"expected a list of app ids or app objects, got {_form(items)}", path=path, endpoint=endpoint
        )
    if not items or type(items[0]) is not dict:
        return _Ranked(items, None, path)  # ids: checked by the column builder, which names a bad one
    member = next((m for m in _ID_MEMBERS if m in items[0]), None)
    if member is not None:  # the usual answer: every object names its id the same way; checked in one pass
        try:
            ids: list[Any] = [item[member] for item in items]
            flags = [item.get("is_ad") for item in items]
        except (KeyError, TypeError, AttributeError):
            pass
        else:
            if all(type(app) is str and app for app in ids) and all(f is None or type(f) is bool for f in flags):
                return _Ranked(ids, [f is True for f in flags], path)
    return _checked_objects(items, path, endpoint)


def _checked_objects(items: list[Any], path: str, endpoint: str) -> _Ranked:
    """App objects one by one: integer ids made text, the first bad one named by its path."""
    ids: list[Any] = []
    ads: list[bool] = []
    for i, item in enumerate(items):
        if type(item) is not dict:
            raise ResponseShapeError(
                f"expected an app object, got {_form(item)}", path=f"{path}[{i}]", endpoint=endpoint
            )
        member = next((m for m in _ID_MEMBERS if m in item), None)
        app = ident(item.get(member)) if member else None
        if type(app) is not str or not app:
            where = f"{path}[{i}].{member}" if member else f"{path}[{i}]"
            found = _form(app) if member else _form(item)
            raise ResponseShapeError(
                f"expected an app id in application_id or id, got {found}", path=where, endpoint=endpoint
            )
        flag = item.get("is_ad")
        if flag is not None and type(flag) is not bool:
            raise ResponseShapeError(
                f"expected true or false, got {_form(flag)}", path=f"{path}[{i}].is_ad", endpoint=endpoint
            )
        ids.append(app)
        ads.append(bool(flag))
    return _Ranked(ids, ads, path)


def _live_member(result: dict[Any, Any], path: str, endpoint: str) -> str | None:
    """The member holding the ranked list of an answer in the live form (``{"date", "value"}``), if any."""
    member = next((m for m in _LISTS if m in result and type(result[m]) is not dict), None)
    if member is not None:
        extra = result.keys() - _LIVE_MEMBERS
        if extra:
            note_unknown(f"{path} ({endpoint})", extra)
    return member


def _live_list(result: Any, keyword: str | None, path: str, endpoint: str) -> tuple[_Ranked, Any, str]:
    """The ranked list of a live search answer, the date it carries (or None) and that date's path."""
    if result is None or (type(result) is dict and not result):
        return _Ranked([], None, path), None, f"{path}.date"
    if type(result) is list:
        return _ranked(result, path, endpoint), None, f"{path}.date"
    if type(result) is dict:
        member = _live_member(result, path, endpoint)
        if member is not None:
            return _ranked(result[member], f"{path}.{member}", endpoint), result.get("date"), f"{path}.date"
        inner = _under_keyword(result, keyword, path, endpoint)
        if inner is not None:
            return _live_list(inner[0], None, inner[1], endpoint)
    raise ResponseShapeError(f"expected {_FORMS}; got {_form(result)}", path=path, endpoint=endpoint)


def _app_ids(values: list[Any], where: Any, endpoint: str) -> pl.Series:
    """The app id column: text (integers made text), never null or empty."""
    ids = _ids(values, "app_id", where, endpoint)
    missing = ids.is_null() | (ids == "")
    if missing.any():
        i = missing.arg_true()[0]
        raise shape_error("an app id", values[i], where(i, "app_id"), endpoint)
    return ids


def _warn_cap(endpoint: str, keyword: Any, day: str | None, sent: int, cap: int) -> None:
    when = f" on {day}" if day else ""
    warn(
        f"the service sent {sent:,} organic results for keyword {keyword!r}{when} ({endpoint}), more than the "
        f"{cap:,} the service documents; the first {cap:,} are kept",
        ResultCapWarning,
    )


# -- live search ------------------------------------------------------------------------


def flatten_search(result: Any, keys: Keys = NO_KEYS) -> pl.DataFrame:
    """One row per result of a live search (:data:`~storeframes.schemas.SEARCH`); see :func:`batch_search`."""
    return batch_search([(result, keys)])[0]


def batch_search(answers: Answers, *, endpoint: str = "search") -> Flat:
    """One row per keyword and result, over several live search answers (with or without ads).

    ``rank`` is the place in the list as the store showed it (ads included);
    ``organic_rank`` counts organic results only. At most 250 organic results are kept
    per answer (the service's documented cap), with a :class:`ResultCapWarning` if more
    came. The date is the answer's ``date``, else the UTC day of the fetch.
    """
    flat: list[Any] = []
    flat_ads: list[bool] = []
    u_keyword: list[Any] = []
    u_date: list[Any] = []
    u_date_path: list[str] = []
    u_path: list[str] = []
    u_first: list[int] = []
    counts: list[int] = []
    for result, keys in answers:
        keyword = keys.request.get("keyword")
        ranked, day, day_path = _live_list(result, keyword, "result", endpoint)
        ids, ads = ranked.ids, ranked.ads if ranked.ads is not None else [False] * len(ranked.ids)
        organic = len(ads) - sum(ads)
        if organic > LIVE_CAP:
            _warn_cap(endpoint, keyword, None, organic, LIVE_CAP)
            ids, ads = _first_organic(ids, ads, LIVE_CAP)
        if day is None and keys.fetched_at is not None:
            day = keys.fetched_at.astimezone(UTC).date().isoformat()
        u_first.append(len(flat))
        flat += ids
        flat_ads += ads
        u_keyword.append(keyword)
        u_date.append(day)
        u_date_path.append(day_path)
        u_path.append(ranked.path)
        counts.append(len(ids))

    def where(i: int, column: str) -> str:
        unit = bisect_right(u_first, i) - 1
        return f"{u_path[unit]}[{i - u_first[unit]}]"

    keys_list = [keys for _, keys in answers]
    units = [
        _ids(u_keyword, "keyword", lambda i, column: u_date_path[i], endpoint),
        _dates(u_date, "date", lambda i, column: u_date_path[i], endpoint),
        *(_key_series(name, keys_list, [1] * len(keys_list)) for name in KEY_COLUMNS),
    ]
    is_ad = pl.Series("is_ad", flat_ads, dtype=pl.Boolean)
    organic_rank = (~pl.col("is_ad")).cast(pl.Int64).cum_sum().over("_unit")
    frame = (
        _rows(units, counts, _app_ids(flat, where, endpoint))
        .with_columns(is_ad)
        .with_columns(pl.when(~pl.col("is_ad")).then(organic_rank).alias("organic_rank"))
        .select(SEARCH.names)
    )
    return frame, counts


def _first_organic(ids: list[Any], ads: list[bool], cap: int) -> tuple[list[Any], list[bool]]:
    """The entries up to the ``cap``-th organic one, ads among them kept."""
    kept_ids: list[Any] = []
    kept_ads: list[bool] = []
    organic = 0
    for app, ad in zip(ids, ads, strict=True):
        if not ad:
            organic += 1
            if organic > cap:
                continue
        kept_ids.append(app)
        kept_ads.append(ad)
    return kept_ids, kept_ads


def _rows(units: list[pl.Series], counts: list[int], app_ids: pl.Series) -> pl.DataFrame:
    """One row per result: each unit's (answer's or day's) columns repeated over its results, ranked 1..n.

    Built per unit and exploded, so a million results cost one id column and a few repeats.
    """
    frame = pl.DataFrame(
        [*units, pl.Series("_n", counts, dtype=pl.Int64), pl.Series("_unit", range(len(counts)), dtype=pl.Int64)]
    )
    return (
        frame.filter(pl.col("_n") > 0)
        .with_columns(pl.int_ranges(1, pl.col("_n") + 1, dtype=pl.Int64).alias("rank"))
        .drop("_n")
        .explode("rank")
        .with_columns(app_ids)
    )


# -- history ----------------------------------------------------------------------------


def _days(
    result: Any, keyword: str | None, path: str, endpoint: str, today: str | None
) -> Iterator[tuple[Any, Any, str, str]]:
    """``(day, value, path of the value, path of the day)`` of each day of a history answer, in its order.

    An answer in the form of a live search (``{"date", "value"}``), which the service may
    send for a range ending today, is one day: its date, else ``today`` (the fetch's day).
    """
    if result is None:
        return
    if type(result) is dict:
        if not result:
            return
        first = next(iter(result))
        if not (isinstance(first, str) and _DAY.match(first)):
            member = _live_member(result, path, endpoint)
            if member is not None:
                yield result.get("date", today), result[member], f"{path}.{member}", f"{path}.date"
                return
            inner = _under_keyword(result, keyword, path, endpoint)
            if inner is None:
                raise ResponseShapeError(
                    f"expected {_HISTORY_FORMS}; got {_form(result)}", path=path, endpoint=endpoint
                )
            yield from _days(inner[0], None, inner[1], endpoint, today)
            return
        for day, value in result.items():
            if not (isinstance(day, str) and _DAY.match(day)):
                raise ResponseShapeError(
                    f"expected an object keyed by date (YYYY-MM-DD), got the key {day!r}",
                    path=f"{path}.{day}",
                    endpoint=endpoint,
                )
            yield day, value, f"{path}.{day}", f"{path}.{day}"
        return
    if type(result) is list:
        for i, item in enumerate(result):
            here = f"{path}[{i}]"
            member = next((m for m in _LISTS if m in item), None) if type(item) is dict and "date" in item else None
            if member is None:
                raise ResponseShapeError(
                    f"expected a {{date, value}} object, got {_form(item)}", path=here, endpoint=endpoint
                )
            yield item["date"], item[member], f"{here}.{member}", f"{here}.date"
        return
    raise ResponseShapeError(f"expected {_HISTORY_FORMS}; got {_form(result)}", path=path, endpoint=endpoint)


def _day_list(value: Any, path: str, endpoint: str) -> _Ranked:
    """A day's ranked list: a list of ids or app objects, or an object holding one in value or apps."""
    if type(value) is dict:
        member = next((m for m in _LISTS if m in value), None)
        if member is None:
            if not value:
                return _Ranked([], None, path)
            raise ResponseShapeError(
                f"expected a list of app ids or an object with value or apps, got {_form(value)}",
                path=path,
                endpoint=endpoint,
            )
        return _ranked(value[member], f"{path}.{member}", endpoint)
    return _ranked(value, path, endpoint)


def flatten_search_history(result: Any, keys: Keys = NO_KEYS) -> pl.DataFrame:
    """One row per day and result of a history answer (:data:`~storeframes.schemas.SEARCH_HISTORY`).

    See :func:`batch_search_history`.
    """
    return batch_search_history([(result, keys)])[0]


def batch_search_history(answers: Answers, *, endpoint: str = "search_history") -> Flat:
    """One row per keyword, day and organic result, over several history answers.

    A day the service did not record is absent from the answer and has no rows. Ads, if
    an answer holds any, are left out: the history ranks organic results. At most 500
    results a day are kept on iphone/ipad and 250 on android (the service's documented
    caps), with a :class:`ResultCapWarning` if more came. ``source`` is ``live`` for the
    day of the fetch when it holds at most 250 results (the service's live fallback for a
    range ending today), else ``history``.
    """
    flat: list[Any] = []
    d_keyword: list[Any] = []
    d_date: list[Any] = []
    d_source: list[str] = []
    d_n: list[int] = []
    d_path: list[str] = []
    d_day_path: list[str] = []
    d_first: list[int] = []
    answer_days: list[int] = []
    counts: list[int] = []
    for result, keys in answers:
        keyword = keys.request.get("keyword")
        cap = HISTORY_CAPS.get("android" if keys.device == "android" else "ios", HISTORY_CAPS["ios"])
        today = _today_of(keys)
        before = len(flat)
        n_days = 0
        for day, value, path, day_path in _days(result, keyword, "result", endpoint, today):
            ranked = _day_list(value, path, endpoint)
            ids = ranked.organic()
            if len(ids) > cap:
                _warn_cap(endpoint, keyword, str(day), len(ids), cap)
                ids = ids[:cap]
            d_first.append(len(flat))
            flat += ids
            d_keyword.append(keyword)
            d_date.append(day)
            d_source.append(_day_source(day, today, len(ids)))
            d_n.append(len(ids))
            d_path.append(ranked.path)
            d_day_path.append(day_path)
            n_days += 1
        answer_days.append(n_days)
        counts.append(len(flat) - before)

    def where(i: int, column: str) -> str:
        day = bisect_right(d_first, i) - 1
        return f"{d_path[day]}[{i - d_first[day]}]"

    return _history_frame(
        [keys for _, keys in answers],
        answer_days,
        (d_keyword, d_date, d_source, d_n, d_day_path),
        lambda: _app_ids(flat, where, endpoint),
        endpoint,
    ), counts


def _today_of(keys: Keys) -> str | None:
    """The UTC day of an answer's fetch (``YYYY-MM-DD``), if known: the day a history's live fallback is of."""
    return keys.fetched_at.astimezone(UTC).date().isoformat() if keys.fetched_at is not None else None


def _day_source(day: Any, today: str | None, results: int) -> str:
    """``live`` for the day of the fetch holding at most 250 results (the service's live fallback), else ``history``."""
    return "live" if today is not None and str(day)[:10] == today and results <= LIVE_CAP else "history"


_Days = tuple[list[Any], list[Any], list[str], list[int], list[str]]
"""A history's days, one entry each: keyword, date, source, number of results and the day's JSON path."""


def _history_frame(
    keys_list: list[Keys], answer_days: list[int], days: _Days, app_ids: Callable[[], pl.Series], endpoint: str
) -> pl.DataFrame:
    """The rows of a history's days (:data:`_Days`; ``answer_days``: each answer's number of days) and its
    ``app_ids`` (the column of every day's results in order, checked when called, after the dates)."""
    d_keyword, d_date, d_source, d_n, d_day_path = days

    def day_where(i: int, column: str) -> str:
        return d_day_path[i]

    dates = _dates(d_date, "date", day_where, endpoint)
    if dates.null_count():
        i = dates.is_null().arg_true()[0]
        raise shape_error("a date as YYYY-MM-DD", None, day_where(i, "date"), endpoint)
    units = [
        _ids(d_keyword, "keyword", day_where, endpoint),
        dates,
        pl.Series("source", d_source, dtype=pl.String),
        *(_key_series(name, keys_list, answer_days) for name in KEY_COLUMNS),
    ]
    return _rows(units, d_n, app_ids()).select(SEARCH_HISTORY.names)
