"""What a call returns: the responses of its requests, fetched or cached, and their merge.

The words (call, cell, request, response, entry, part, answer) are defined once, in
:mod:`storeframes.engine`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .planning import Cell

__all__ = ["Answer", "Attempt", "Part", "Response"]


@dataclass(frozen=True)
class Response:
    """One successful request: its canonical parameters, the result and the credits.

    ``from_cache`` is True when the response was read from the cache (``entry`` names
    the cache entry); ``cost`` is then what the original request cost. ``body`` is the
    answer's JSON as it arrived (the cache keeps those bytes); None where the result was
    made or changed here, or read from the cache.
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
    body: bytes | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class Part:
    """The cells of a call that one response provides.

    ``whole`` says whether those are all the cells of the response (else only they are
    taken from it). ``saved`` is the share of the original cost of a cached response
    that these cells stand for (0 for a response fetched by this call). ``entry`` names
    the cache entry holding the response. ``charged`` says that this part carries the
    cost of its response: a response this call paid for is charged in one part only,
    however many calls of a batch share it, and one borrowed from another caller (who
    paid for it) in none. In an :class:`Answer` every part has its
    ``response``; a frame function reads the frames kept for a cached entry instead, and
    leaves ``response`` None until it needs the raw answer.
    """

    response: Response | None
    cells: frozenset[Cell]
    whole: bool = True
    saved: int = 0
    entry: str | None = None
    charged: bool = False


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
        """Credits charged for this answer by this call: each response it paid for counted once.

        Cached parts cost nothing, and a response shared with another call of the same
        :meth:`~storeframes.Client.get_many` (or fetched by another caller at the same
        time) counts in one answer only, so the costs of a batch add up to what was paid.
        """
        return sum(p.response.cost for p in self.parts if p.charged and p.response is not None)

    @property
    def max_credit_cost(self) -> int:
        return sum(p.response.max_credit_cost for p in self.parts if p.charged and p.response is not None)

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


@dataclass(frozen=True)
class Attempt:
    """One attempt at one request, as the request path reports it.

    ``status`` is None when no answer came back (a timeout, a dropped connection, a body
    cut short); ``cost`` is what the answer said was charged (0 without one).
    ``cost_unknown`` is True when an answer came back but its ``metadata.request.cost``
    was not a whole number >= 0 (negative, fractional, not a number): ``cost`` is then 0
    and whoever counts credits counts the request's estimate instead
    (:meth:`storeframes.credits.Reservation.attempt` does).
    """

    endpoint: str
    params: Mapping[str, str]
    status: int | None
    cost: int
    max_credit_cost: int
    attempt: int
    elapsed: float
    error: str | None = None
    cost_unknown: bool = False
