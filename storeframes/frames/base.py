"""What every frame function stands on: the maker that makes its frame, today's date, and
``days`` made a ``start`` and ``end`` (:func:`with_days`); :func:`documented` appends a
function's table schema to its docstring."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from datetime import date, timedelta
from typing import Any, TypeVar

import polars as pl

from ..answers import RefreshOption
from ..catalog import EARLIEST_DAY, parse_day, today_utc
from ..errors import InvalidParameterError
from ..fetch.pipeline import FRAMES, FrameMaker

__all__ = ["FrameBase", "documented", "with_days"]


def with_days(name: str, arguments: Mapping[str, Any], today: date) -> dict[str, Any]:
    """``arguments`` of a date-ranged frame function with ``days`` turned into ``start`` and ``end``.

    ``days=60`` is the 60 days up to ``end`` (both included), by default up to yesterday
    (UTC, by ``today``), as the functions' defaults are. Refused before anything is
    sent: ``days`` that is not a whole number >= 1, and ``days`` with ``start``.

    >>> with_days("changes_frame", {"days": 7, "end": "2026-01-31"}, date(2026, 3, 1))
    {'end': datetime.date(2026, 1, 31), 'start': datetime.date(2026, 1, 25)}
    """
    arguments = dict(arguments)
    days = arguments.pop("days", None)
    if days is None:
        return arguments
    if isinstance(days, bool) or not isinstance(days, int) or days < 1:
        raise InvalidParameterError(
            "days",
            days,
            "a whole number of days >= 1 (days=60: the 60 days up to yesterday, or up to end=)",
            endpoint=name,
        )
    if arguments.get("start") is not None:
        raise InvalidParameterError(
            "days",
            days,
            f"days= or start=, not both (start={arguments['start']!r} was given too): "
            "days counts back from end= (by default yesterday); give start= and end= for a fixed range",
            endpoint=name,
        )
    end = (
        parse_day("end", arguments["end"], endpoint=name) if arguments.get("end") is not None else today - timedelta(1)
    )
    most = max((end - EARLIEST_DAY).days + 1, 1)
    if days > most:
        raise InvalidParameterError(
            "days",
            days,
            f"at most {most:,} up to {end.isoformat()} (no history is older than {EARLIEST_DAY.isoformat()})",
            endpoint=name,
        )
    arguments["end"] = end
    arguments["start"] = end - timedelta(days=days - 1)
    return arguments


F = TypeVar("F", bound=Callable[..., pl.DataFrame])


def documented(function: F) -> F:
    """Append the schema of the function's table (from its spec in FRAMES) to its docstring."""
    table = FRAMES[function.__name__].table
    function.__doc__ = inspect.cleandoc(function.__doc__ or "") + "\n\n" + table.docstring()
    return function


class FrameBase:
    """What the frame functions share: each binds its arguments and hands them to ``maker``, a
    :class:`~storeframes.fetch.pipeline.FrameMaker`, which makes the frame."""

    def __init__(self, maker: FrameMaker):
        self._maker = maker

    def _frame(self, name: str, arguments: Mapping[str, Any], refresh: RefreshOption | None) -> pl.DataFrame:
        return self._maker.make(name, arguments, refresh)

    def today(self) -> date:
        """Today's date (UTC): what ``days`` and the default date ranges count back from."""
        return today_utc()

    def _dated(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments of a date-ranged function, ``days`` made ``start`` and ``end`` by :meth:`today`."""
        return with_days(name, arguments, self.today())
