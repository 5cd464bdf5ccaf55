"""What a call returns: the responses of its requests, fetched or cached, and their merge."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .planning import Cell

__all__ = ["Answer", "Part", "Response"]


@dataclass(frozen=True)
class Response:
    """One successful request: its canonical parameters, the result and the credits.

    ``from_cache`` is True when the response was read from the cache (``entry`` names
    the cache entry); ``cost`` is then what the original request cost.
    """

    endpoint: str
    params: Mapping[str, str]
    result: Any
    cost: int
    max_credit_cost: int
    status: int
    fetched_at: datetime
    echo: Mapping[str, Any] = field(default_factory=dict)  # metadata.request.params as the service echoed them
    attempts: int = 1
    from_cache: bool = False
    entry: str | None = None


@dataclass(frozen=True)
class Part:
    """The cells of a call that one response provides.

    ``saved`` is the share of the original cost of a cached response that these cells
    stand for (0 for a response fetched by this call).
    """

    response: Response
    cells: frozenset[Cell]
    whole: bool = True
    saved: int = 0


@dataclass(frozen=True)
class Answer:
    """The merged answer of one call, which may have taken several requests.

    ``result`` is the service's ``result`` member; for app endpoints the per-request
    results are merged by app id, and for daily histories by day, each part keeping
    only the cells it provides (see :func:`storeframes.planning.merge_result`).
    ``unavailable`` lists the app ids the service reported as not available in the
    requested country (they are absent from ``result``). ``parts`` says which response,
    fetched or cached, provides which cells.
    """

    endpoint: str
    params: Mapping[str, str]
    result: Any
    responses: tuple[Response, ...]
    unavailable: tuple[str, ...] = ()
    parts: tuple[Part, ...] = ()

    @property
    def cost(self) -> int:
        """Credits charged for this answer by this call (cached parts cost nothing)."""
        return sum(r.cost for r in self.responses if not r.from_cache)

    @property
    def max_credit_cost(self) -> int:
        return sum(r.max_credit_cost for r in self.responses if not r.from_cache)

    @property
    def saved(self) -> int:
        """Credits the cache saved: the original cost of the cached cells used."""
        return sum(p.saved for p in self.parts)

    @property
    def from_cache(self) -> bool:
        """Whether every part of the answer came from the cache."""
        return bool(self.responses) and all(r.from_cache for r in self.responses)

    @property
    def fetched_at(self) -> datetime | None:
        """When the oldest response of the answer was fetched."""
        return min((r.fetched_at for r in self.responses), default=None)
