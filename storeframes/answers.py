"""What a call returns: the responses of its requests, fetched or cached, and their merge.

The words (call, cell, request, response, entry, part, answer) are defined once, in
:mod:`storeframes.engine`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

from .errors import cut, html_table, plural
from .json_bodies import parse_answer
from .planning import Cell

__all__ = [
    "CLOCK_SKEW",
    "REFRESH_MODES",
    "UNPARSED",
    "Answer",
    "Attempt",
    "Entry",
    "Part",
    "Refresh",
    "RefreshOption",
    "Response",
    "short_params",
]

Refresh = Literal["auto", "always", "never"]
REFRESH_MODES: tuple[str, ...] = ("auto", "always", "never")
RefreshOption = Refresh | bool
CLOCK_SKEW = timedelta(seconds=60)
"""How far in the future an answer's ``fetched_at`` may lie (a colleague's clock ahead of this
machine's) and still count, as fetched now; beyond that the answer is stale, never fresh for ever
(the engine judges freshness: :func:`storeframes.engine.is_fresh`). The same margin the bucket
leases allow between clocks (``ObjectLeases.CLOCK_MARGIN``)."""


def short_params(params: Mapping[str, Any], most: int = 110) -> str:
    """A request's parameters in a few words: ``12 apps, country=us, device=iphone, 2026-10-01..2026-10-31``.

    Apps are counted (named when one or two), a date range is one span, and each other
    value is cut to 30 characters.
    """
    said = []
    for name, value in params.items():
        text = str(value)
        if name == "apps" and text.count(",") > 1:
            said.append(plural(text.count(",") + 1, "app"))
        elif name == "start_date":
            said.append(f"{text}..{params.get('end_date', '')}")
        elif name != "end_date" or "start_date" not in params:
            said.append(f"{name}={cut(text, 30)}")
    return cut(", ".join(said), most)


@dataclass(frozen=True)
class Entry:
    """One cached answer: which request, from which service, when, for how much, covering which cells."""

    id: str
    endpoint: str
    service: str
    scope: str
    params: Mapping[str, str]
    fetched_at: datetime
    cost: int
    max_credit_cost: int
    cells: frozenset[Cell]
    available: bool = True

    def __repr__(self) -> str:
        gone = ", not available" if not self.available else ""
        return (
            f"Entry({self.endpoint}: {short_params(self.params, 80)}; {plural(self.cost, 'credit')}, "
            f"fetched {self.fetched_at:%Y-%m-%d}{gone}; id {self.id})"
        )

    @property
    def day(self) -> date:
        """The UTC day of ``fetched_at`` (a time without a zone is taken as UTC): the day the answer is a snapshot of."""
        at = self.fetched_at
        return (at.astimezone(UTC) if at.tzinfo is not None else at).date()

    def share(self, cells: int) -> int:
        """The part of the entry's cost that ``cells`` of its cells stand for."""
        return round(self.cost * cells / len(self.cells)) if self.cells else 0


def _when(moment: datetime | None) -> str:
    return f"{moment:%Y-%m-%d %H:%M} UTC" if moment is not None else "-"


class _Unparsed:
    """The type of :data:`UNPARSED` (one object, kept one across pickling)."""

    def __repr__(self) -> str:
        return "UNPARSED"

    def __reduce__(self) -> str:
        return "UNPARSED"


UNPARSED: Any = _Unparsed()
"""The result of a :class:`Response` read straight into columns, before anything asked for it."""


class _Result:
    """``Response.result``: the result given, or, when that is :data:`UNPARSED`, the body's result parsed once."""

    def __get__(self, response: Any, owner: Any = None) -> Any:
        if response is None:
            raise AttributeError("result")  # no default: the field stays required
        value = response.__dict__["_result"]
        if value is UNPARSED:
            value = parse_answer(response.body)["result"]
            response.__dict__["_result"] = value
        return value

    def __set__(self, response: Any, value: Any) -> None:
        response.__dict__["_result"] = value


@dataclass(frozen=True)
class Response:
    """One successful request: its canonical parameters, the result and the credits.

    ``from_cache`` is True when the response was read from the cache (``entry`` names
    the cache entry); ``cost`` is then what the original request cost. ``body`` is the
    answer's JSON as it arrived (the cache keeps those bytes); None where the result was
    made or changed here, or read from the cache.

    ``columns`` holds the result already read into columns where the request path read it
    so (:func:`~storeframes.flatteners.columnar.read_history_body`): the result is then
    :data:`UNPARSED` until asked for, and parsed from ``body`` then, once.
    """

    endpoint: str
    params: Mapping[str, str]
    if TYPE_CHECKING:
        result: Any
    else:
        result: Any = _Result()  # parsed from the body when first asked for, where it is UNPARSED
    cost: int
    max_credit_cost: int
    status: int
    fetched_at: datetime
    echo: Mapping[str, Any] = field(default_factory=dict)  # metadata.request.params as the service echoed them
    attempts: int = 1
    from_cache: bool = False
    entry: str | None = None
    body: bytes | None = field(default=None, repr=False, compare=False)
    columns: Any = field(default=None, repr=False, compare=False)

    def kept_as(self, entry: str) -> Response:
        """This response, kept in the cache as ``entry`` (the result is not parsed for it).

        >>> r = Response("search", {}, [], 0, 0, 200, datetime(2026, 1, 1, tzinfo=UTC))
        >>> r.kept_as("abc").entry
        'abc'
        """
        kept = copy.copy(self)
        object.__setattr__(kept, "entry", entry)
        return kept

    def __repr__(self) -> str:
        source = ", from the cache" if self.from_cache else ""
        return (
            f"Response({self.endpoint}: {short_params(self.params)}; {plural(self.cost, 'credit')}, "
            f"fetched {_when(self.fetched_at)}{source})"
        )


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

    def __repr__(self) -> str:
        source = repr(self.response) if self.response is not None else f"cache entry {self.entry}"
        return f"Part({plural(len(self.cells), 'cell')} of {source})"


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

    def _answered(self) -> str:
        """What the result holds, in a few words: the apps (or a keyword's days) answered, the apps not available."""
        said = []
        if "apps" in self.params and isinstance(self.result, dict):
            said.append(f"{plural(len(self.result), 'app')} answered")
        elif "keyword" in self.params and "start_date" in self.params and isinstance(self.result, (dict, list)):
            said.append(f"{plural(len(self.result), 'day')} answered")
        if self.unavailable:
            said.append(f"{len(self.unavailable):,} not available")
        return ", ".join(said) + "; " if said else ""

    def _sources(self) -> str:
        cached = sum(r.from_cache for r in self.responses)
        if cached == len(self.responses) and cached:
            return f"{plural(cached, 'response')} from the cache"
        return plural(len(self.responses), "response") + (f" ({cached:,} from the cache)" if cached else "")

    def __repr__(self) -> str:
        return (
            f"Answer({self.endpoint}: {short_params(self.params)}; {self._answered()}{self._sources()}, "
            f"{plural(self.cost, 'credit')} spent, {self.saved:,} saved)"
        )

    def _repr_html_(self) -> str:
        rows: list[tuple[str, Any]] = [("endpoint", self.endpoint)]
        rows += [(name, cut(str(value), 200)) for name, value in self.params.items()]
        if "apps" in self.params and isinstance(self.result, dict):
            rows.append(("apps answered", len(self.result)))
        if self.unavailable:
            rows.append(("not available", cut(", ".join(self.unavailable), 200)))
        rows += [
            ("responses", self._sources()),
            ("credits spent", self.cost),
            ("credits saved", self.saved),
            ("fetched", _when(self.fetched_at)),
        ]
        return html_table(f"Answer of {self.endpoint}", ("", "value"), rows)


@dataclass(frozen=True)
class Attempt:
    """One attempt at one request, as the request path reports it.

    ``status`` is None when no answer came back (a timeout, a dropped connection, a body
    cut short of an error status); ``cost`` is what the answer said was charged (0 without one).
    ``cost_unknown`` is True when an answer came back but its ``metadata.request.cost``
    was not a whole number from 0 to :data:`~storeframes.ledger.MOST_CREDITS` (negative,
    fractional, not a number, absurdly large), or when a 200 began and its body never
    arrived whole (cut by the deadline or a dropped connection, not JSON, JSON cut short):
    ``cost`` is then 0 and whoever counts credits counts the request's estimate instead
    (:meth:`storeframes.credits.Reservation.attempt` does). ``retried`` is True when the
    request path tries again after this attempt's fault while attempts remain (a body cut
    short); a 429 and a 5xx are retried too, whatever it says.
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
    retried: bool = False
