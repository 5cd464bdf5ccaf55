"""What the assistant's tools share: the parts of the surface every tool reads (:class:`Tools`), and the reading of
their JSON-shaped arguments, each refusal naming what is allowed before anything is read or spent.

>>> from storeframes.agent.tools import texts
>>> texts("maps, weather", "keywords", "movers")
['maps', 'weather']
"""

from __future__ import annotations

from datetime import date
from typing import Any

import polars as pl

from ..cache import Cache
from ..catalog import parse_day
from ..client import Client
from ..errors import InvalidParameterError, StoreframesError
from ..track import Tracker
from .gate import Gate

__all__ = ["NothingKeptError", "Tools", "day_of", "fetched_when", "refused", "texts"]


class NothingKeptError(StoreframesError):
    """A free tool found nothing in the cache to answer with; the message says what would fill it."""


def refused(parameter: str, value: Any, allowed: str, tool: str) -> InvalidParameterError:
    """The refusal of a tool's argument ``parameter``, naming what is allowed."""
    return InvalidParameterError(parameter, value, allowed, endpoint=tool)


def texts(value: Any, parameter: str, tool: str) -> list[str] | None:
    """A list of texts from a list or a comma-separated text; None stays None."""
    if value is None:
        return None
    if isinstance(value, str):
        items = [v.strip() for v in value.split(",") if v.strip()]
    elif isinstance(value, list | tuple) and all(isinstance(v, str | int) and not isinstance(v, bool) for v in value):
        items = [str(v).strip() for v in value if str(v).strip()]
    else:
        raise refused(parameter, value, "a list of texts, or one comma-separated text", tool)
    return items or None


def day_of(value: Any, parameter: str, tool: str) -> date | None:
    """A day from a text as YYYY-MM-DD; None or an empty text is None."""
    if value is None or value == "":
        return None
    try:
        return parse_day(parameter, value, endpoint=tool)
    except (InvalidParameterError, TypeError, ValueError):
        raise refused(parameter, value, "a day as YYYY-MM-DD, such as 2026-11-20", tool) from None


class Tools:
    """The parts of a :class:`~storeframes.agent.surface.Surface` its tools read: the client, its cache and
    service, the gate, the tracker (optional) and whether it is offline."""

    client: Client
    cache: Cache
    service: str
    gate: Gate
    tracker: Tracker | None
    offline: bool

    def today(self) -> date:
        return self.client.today()


def fetched_when(frame: pl.DataFrame) -> str:
    """When the rows' answers were fetched from the service: a moment, or the first and the last."""
    moments = frame["fetched_at"].dt.strftime("%Y-%m-%d %H:%M")
    first, last = str(moments.min()), str(moments.max())
    return f"{first} UTC" if first == last else f"{first} to {last} UTC"
