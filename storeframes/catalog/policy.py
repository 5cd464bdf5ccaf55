"""The catalog's types: what an endpoint is (:class:`Endpoint`, :class:`Param`) and its policies.

An :class:`Endpoint` is a declarative description of one endpoint of the service; its
:class:`CostModel` says the most a request can cost and its :class:`Freshness` how long a
cached answer stays usable. The entries themselves are in
:mod:`storeframes.catalog.endpoints`.

Freshness
---------
Each endpoint carries a :class:`Freshness` policy that the cache follows: answers of
the current endpoints (metadata, metrics) are fresh for the UTC day they were fetched,
live searches for an hour; a day of history (or a benchmarks range) that was at least
``settle_days`` old when fetched is final and never fetched again, and a more recent
day goes stale after ``recent``.

Cells
-----
The cache keeps track of what it holds as cells: ``(entity, facet, day)``, where the
entity is an app id or a keyword (:attr:`Endpoint.entity`), the facet a metric
(:attr:`Endpoint.facet`) and the day a day of a daily history (:attr:`Endpoint.daily`).
Benchmarks are averages over their whole range, so their one cell is the exact request.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from functools import cached_property
from typing import Literal

__all__ = ["CostModel", "Endpoint", "Freshness", "Param"]


@dataclass(frozen=True)
class CostModel:
    """A linear price list: the maximum credits a request can cost.

    ``estimate = base + per_app * apps + per_day * days + per_app_day * apps * days
    + sum(per_app_metric[m] for each metric) * apps``
    """

    base: int = 0
    per_app: int = 0
    per_day: int = 0
    per_app_day: int = 0
    per_app_metric: Mapping[str, int] = field(default_factory=dict)

    def estimate(self, params: Mapping[str, str]) -> int:
        """The maximum cost of one request with these canonical parameters."""
        apps = len(params["apps"].split(",")) if params.get("apps") else 0
        days = 0
        if params.get("start_date") and params.get("end_date"):
            days = (date.fromisoformat(params["end_date"]) - date.fromisoformat(params["start_date"])).days + 1
        metric_price = sum(self.per_app_metric.get(m, 0) for m in params.get("metrics", "").split(",") if m)
        return (
            self.base + self.per_app * apps + self.per_day * days + self.per_app_day * apps * days + metric_price * apps
        )


@dataclass(frozen=True)
class Freshness:
    """How long a cached answer of an endpoint stays usable.

    Args:
        current: for endpoints without dates, ``"utc_day"`` (fresh until the UTC day
            it was fetched ends, as the service gathers such data daily) or a
            :class:`~datetime.timedelta`.
        settle_days: a day of history that was at least this many days before the day
            of the fetch is final: it is never fetched again (for benchmarks, the
            range's end date decides).
        recent: how long a day that was not yet final when fetched stays fresh.

    >>> Freshness(current="utc_day").is_fresh(datetime(2026, 1, 5, 9, tzinfo=UTC), None,
    ...                                       now=datetime(2026, 1, 5, 23, tzinfo=UTC))
    True
    """

    current: timedelta | Literal["utc_day"] = "utc_day"
    settle_days: int = 2
    recent: timedelta = timedelta(hours=6)

    def __post_init__(self) -> None:
        if self.current != "utc_day" and not isinstance(self.current, timedelta):
            raise ValueError(f"Freshness.current must be 'utc_day' or a timedelta, got {self.current!r}")
        if not isinstance(self.settle_days, int) or self.settle_days < 0:
            raise ValueError(f"Freshness.settle_days must be a whole number >= 0, got {self.settle_days!r}")
        if not isinstance(self.recent, timedelta):
            raise ValueError(f"Freshness.recent must be a timedelta, got {self.recent!r}")

    def is_final(self, fetched_at: datetime, day: date | None) -> bool:
        """Whether ``day``, fetched at ``fetched_at``, can no longer change."""
        return day is not None and day <= self.last_final(fetched_at)

    def last_final(self, fetched_at: datetime) -> date:
        """The last day of history that an answer fetched at ``fetched_at`` holds as final: every day up to
        it (:meth:`is_final`)."""
        return fetched_at.astimezone(UTC).date() - timedelta(days=self.settle_days)

    def is_fresh(self, fetched_at: datetime, day: date | None, *, now: datetime) -> bool:
        """Whether an answer fetched at ``fetched_at`` may still be served at ``now``.

        ``day`` is the day of history the answer covers, or None for a current answer.
        """
        if day is None:
            if self.current == "utc_day":
                return fetched_at.astimezone(UTC).date() == now.astimezone(UTC).date()
            return now - fetched_at < self.current
        return self.is_final(fetched_at, day) or now - fetched_at < self.recent


@dataclass(frozen=True)
class Param:
    """One query parameter.

    ``kind`` selects the validator: apps, metrics, country, language, device, channel,
    choice, date or keyword. ``default`` is a literal, or for dates a relative rule:
    ``"today-1d"`` (yesterday) or ``"end-30d"`` (30 days before the end date).
    """

    name: str
    kind: str
    required: bool = False
    default: str | None = None
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Endpoint:
    """A declarative description of one endpoint of the service."""

    name: str
    path: str
    summary: str
    params: tuple[Param, ...]
    devices: tuple[str, ...]
    cost: CostModel
    max_apps: int | None = None
    result_cap: Mapping[str, int] = field(default_factory=dict)
    freshness: Freshness = field(default_factory=Freshness)
    entity: str | None = None
    """The parameter naming what a request is about: ``apps`` or ``keyword``."""
    facet: str | None = None
    """A list parameter whose items are cached apart: ``metrics``."""
    daily: bool = False
    """Whether the answer is a daily history, cached day by day."""
    records: str | None = None
    """For a daily history of apps, the member of each app's answer that lists its dated records."""

    @cached_property  # judged once: planning asks for every cached answer
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    @cached_property
    def takes_apps(self) -> bool:
        return "apps" in self.param_names

    @cached_property
    def date_ranged(self) -> bool:
        return "start_date" in self.param_names

    @cached_property
    def current_only(self) -> bool:
        """Whether the service answers only with today's values (no days, no date range): what it said
        yesterday is gone unless a cache kept it (see :func:`storeframes.snapshots`)."""
        return not self.daily and not self.date_ranged

    def estimate(self, params: Mapping[str, str]) -> int:
        """Maximum credits of one request with these canonical parameters."""
        return self.cost.estimate(params)

    def with_cost(self, cost: CostModel) -> Endpoint:
        return replace(self, cost=cost)

    def with_freshness(self, freshness: Freshness) -> Endpoint:
        return replace(self, freshness=freshness)
