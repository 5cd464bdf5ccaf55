"""The sandbox service: the service's behaviour over the synthetic world.

:class:`SandboxService` answers a request (method, path, query, headers) the way the
service does: the documented envelope, 401 for a missing or unknown key, 422 for
invalid parameters and for apps not available in a country, 403 when credits run out
or estimates are not in the plan, 429 past the limit of a strict sliding window, costs
from :data:`storeframes.catalog.DEFAULT_COSTS`, and optional latency and seeded faults.
It knows nothing of sockets: :class:`~storeframes.sandbox.SandboxTransport` serves it
in-process and :class:`~storeframes.sandbox.SandboxServer` on loopback.

Error bodies
------------
The service does not document its error bodies. The sandbox sends the form one public
client parses (``docs/explanation/service.md``, "Errors"), with the envelope beside it::

    {"error": {"code": "AppNotAvailableError", "message": "..."},
     "metadata": {"request": {"path": ..., "params": ..., "cost": 0,
                              "max_credit_cost": 0, "status": 422},
                  "response": null}}

No 429 body or ``Retry-After`` header has been published; the sandbox sends neither
unless ``retry_after_header=True``.

Costs
-----
Every request is charged by the default cost model, with two refinements that make
``cost`` and ``max_credit_cost`` differ as they do in the service's documented examples:
a metric whose value is null is not charged, and a history day with no recorded search is
not charged. Rejected requests (401, 403, 422, 429, 5xx) cost nothing.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any, ClassVar

from .. import catalog
from ..errors import InvalidParameterError
from ._scripted import ScriptedService, ScriptedWorld, scripted
from .dialect import Dialect
from .script import Script
from .world import World, store_of

__all__ = ["API_PREFIX", "SANDBOX_KEY", "Arrival", "Dialect", "Faults", "Latency", "Reply", "SandboxService"]

API_PREFIX = catalog.API_PREFIX
SANDBOX_KEY = "sandbox-demo-key"
"""The sandbox's documented API key. Any other key gets 401."""


@dataclass(frozen=True)
class Faults:
    """Seeded fault injection: the share of requests that meet each fault.

    ``server_error``: answered 500, 502 or 503. ``rate_limited``: answered 429 (with
    ``burst`` consecutive requests hit each time). ``timeout``: the server stalls for
    ``stall_seconds`` and sends nothing. ``truncated``: the body is cut half-way.
    ``dropped``: the connection closes before any answer.
    """

    server_error: float = 0.0
    rate_limited: float = 0.0
    timeout: float = 0.0
    truncated: float = 0.0
    dropped: float = 0.0
    burst: int = 1
    seed: int = 0
    stall_seconds: float = 2.0

    def __post_init__(self) -> None:
        total = self.server_error + self.rate_limited + self.timeout + self.truncated + self.dropped
        if not 0.0 <= total <= 1.0:
            raise ValueError(f"fault shares must add up to at most 1, got {total}")


Seconds = float | tuple[float, float]
"""A fixed number of seconds, or a ``(low, high)`` range drawn from uniformly."""

_WAYS = ("in", "out", "either")


@dataclass(frozen=True)
class Latency:
    """How long each request takes on its way in and its answer on its way out, seeded.

    The service counts a request when it *arrives*: ``inbound`` seconds after the client
    sent it. Its answer leaves ``outbound`` seconds after the arrival (building the answer
    is part of that time, so answers built side by side do not queue behind each other).
    Each is a fixed number of seconds or a ``(low, high)`` range drawn uniformly. A share
    ``slow`` of the requests, in bursts of ``burst`` consecutive ones, takes ``slow_seconds``
    more on the way ``slow_way``: ``"in"``, ``"out"`` or ``"either"`` (drawn per request).

    The n-th request to reach the sandbox always draws the same delays for one ``seed``
    (:meth:`draw`), whatever the timing of the threads that sent it.

    >>> Latency(outbound=0.1).draw(0)
    (0.0, 0.1)
    """

    inbound: Seconds = 0.0
    outbound: Seconds = 0.0
    slow: float = 0.0
    slow_seconds: float = 0.0
    slow_way: str = "either"
    burst: int = 1
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("inbound", "outbound"):
            value = getattr(self, name)
            low, high = value if isinstance(value, tuple) else (value, value)
            if not 0.0 <= low <= high:
                raise ValueError(f"Latency.{name} must be seconds >= 0 or a (low, high) range, got {value!r}")
        if not 0.0 <= self.slow <= 1.0 or self.slow_seconds < 0 or self.burst < 1:
            raise ValueError("Latency.slow must be a share, slow_seconds >= 0 and burst >= 1")
        if self.slow_way not in _WAYS:
            raise ValueError(f"Latency.slow_way must be one of {', '.join(_WAYS)}, got {self.slow_way!r}")

    def draw(self, n: int) -> tuple[float, float]:
        """(seconds in, seconds out) of the ``n``-th request (from 0)."""
        if not self.slow and not isinstance(self.inbound, tuple) and not isinstance(self.outbound, tuple):
            return float(self.inbound), float(self.outbound)  # nothing to draw
        rng = random.Random(f"{self.seed}:{n}")
        inbound = _seconds(self.inbound, rng)
        outbound = _seconds(self.outbound, rng)
        if self.slow and random.Random(f"{self.seed}:burst:{n // self.burst}").random() < self.slow:
            way = self.slow_way if self.slow_way != "either" else rng.choice(("in", "out"))
            if way == "in":
                inbound += self.slow_seconds
            else:
                outbound += self.slow_seconds
        return inbound, outbound


def _seconds(value: Seconds, rng: random.Random) -> float:
    return rng.uniform(*value) if isinstance(value, tuple) else float(value)


@dataclass(frozen=True)
class Reply:
    """What the service answers; ``fault`` asks the transport to misbehave."""

    status: int
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)
    fault: str | None = None  # "timeout", "truncated" or "dropped"
    cost: int = 0  # credits the answer charges


@dataclass(frozen=True)
class Arrival:
    """One request as it reached the service (``time`` on the monotonic clock)."""

    time: float
    path: str
    params: Mapping[str, str]
    status: int
    cost: int
    fault: str | None


_FAULT_STATUSES = (500, 502, 503)


@dataclass(frozen=True)
class _Call:
    """A request that passed every check, as the builder of its endpoint's result sees it."""

    ep: catalog.Endpoint
    canonical: Mapping[str, str]
    device: str
    country: str
    language: str
    apps: list[str]
    today: date
    max_cost: int  # the estimate; a builder may charge less
    world: World | ScriptedWorld  # the world with the service's script played over it


_Built = tuple[Any, int]
"""What an endpoint's builder returns: the envelope's ``result`` and the credits it costs."""


class SandboxService(ScriptedService):
    """A deterministic fake of the whole service.

    Args:
        seed: the synthetic world's seed; the same request always gets the same answer.
        today: the service's "today", a date or ``YYYY-MM-DD`` (UTC today by default); settable later
            (:attr:`today`, :meth:`set_today`) to replay day after day.
        rate_limit: ``(requests, seconds)`` of the sliding window past which it answers 429.
        latency: seconds each answer takes from the request's arrival (building it included), or a
            :class:`Latency` for delays on the way in, random and bursty ones.
        faults: a :class:`Faults` to inject seeded failures.
        api_keys: the keys it accepts (the documented :data:`SANDBOX_KEY` by default).
        credits: credits of the account; when spent, 403 ``NotEnoughCreditsError``.
        estimates_in_plan: False answers downloads and revenues with 403 ``EstimatesNotInPlanError``.
        retry_after_header: send ``Retry-After`` with 429.
        dialect: a :class:`Dialect`: the form of the answers where the service documents none (the observed
            forms by default).
        script: a :class:`~storeframes.sandbox.Script` of moves on given days (:attr:`script`, settable).
    """

    def __init__(
        self,
        *,
        seed: int = 0,
        today: date | str | None = None,
        rate_limit: tuple[int, float] = (60, 10.0),
        latency: float | Latency = 0.0,
        faults: Faults | None = None,
        api_keys: Iterable[str] = (SANDBOX_KEY,),
        credits: int | None = None,
        estimates_in_plan: bool = True,
        retry_after_header: bool = False,
        world: World | None = None,
        dialect: Dialect | None = None,
        script: Script | None = None,
    ):
        self.world = world or World(seed)
        self.script = script
        self.dialect = dialect or Dialect()
        self._today = None if today is None else catalog.parse_day("today", today, endpoint="sandbox")
        self.limit, self.window = rate_limit
        self.latency = latency
        self._delays = latency if isinstance(latency, Latency) else Latency(outbound=float(latency))
        self._requests = 0  # requests that reached the sandbox, for Latency.draw
        self.faults = faults or Faults()
        self.api_keys = frozenset(api_keys)
        self.credits = credits
        self.estimates_in_plan = estimates_in_plan
        self.retry_after_header = retry_after_header
        self._lock = threading.Lock()
        self._recent: deque[float] = deque()
        self._fault_rng = random.Random(self.faults.seed)
        self._burst_left = 0
        self.arrivals: list[Arrival] = []
        self.spent = 0

    @property
    def today(self) -> date:
        """The service's today: the pinned day, else UTC today. Settable while it serves, from any thread
        (``server.service.today = "2026-11-21"``; ``None``: UTC today), to replay day after day.

        >>> service = SandboxService(today="2026-11-20")
        >>> service.today = "2026-11-21"
        >>> service.today
        datetime.date(2026, 11, 21)
        """
        return self._today or catalog.today_utc()

    @today.setter
    def today(self, value: date | str | None) -> None:
        day = None if value is None else catalog.parse_day("today", value, endpoint="sandbox")
        with self._lock:
            self._today = day

    def set_today(self, value: date | str | None) -> date:
        """Pin today (a date or ``YYYY-MM-DD``; ``None``: UTC today), as setting :attr:`today`; return it."""
        self.today = value
        return self.today

    def now(self) -> datetime:
        """The current UTC time of day on the service's today: the clock of a client of this sandbox."""
        return datetime.combine(self.today, datetime.now(UTC).time(), UTC)

    def reset(self) -> None:
        """Forget arrivals, spending and the rate window (the world stays)."""
        with self._lock:
            self.arrivals.clear()
            self._recent.clear()
            self.spent = 0
            self._fault_rng = random.Random(self.faults.seed)
            self._burst_left = 0
            self._requests = 0

    # -- the request path -------------------------------------------------------

    def handle(self, method: str, path: str, query: Iterable[tuple[str, str]], headers: Mapping[str, str]) -> Reply:
        """Answer one request.

        The request arrives after the latency's inbound seconds: faults, the key and the
        rate window are checked then, and the arrival is dated then. The answer is built
        outside the lock and leaves the outbound seconds after the arrival.
        """
        params = dict(query)
        with self._lock:
            inbound, outbound = self._delays.draw(self._requests)
            self._requests += 1
        if inbound:
            time.sleep(inbound)
        with self._lock:
            now = time.monotonic()
            fault = self._draw_fault()
            reply = self._gatekeep(method, path, params, headers, fault, now)
        if reply is None:
            reply = self._answer(path, params)
            if fault == "truncated":
                reply = Reply(reply.status, reply.body, reply.headers, fault="truncated")
        rest = now + outbound - time.monotonic()
        if rest > 0:
            time.sleep(rest)
        with self._lock:
            charged = reply.cost if reply.status == 200 and reply.fault is None else 0
            if charged and self.credits is not None and self.spent + charged > self.credits:
                reply = self._error(
                    path, params, 403, "NotEnoughCreditsError", "not enough credits left for this request"
                )
                charged = 0
            self.spent += charged
            self.arrivals.append(Arrival(now, path, params, reply.status, charged, reply.fault))
        return reply

    def _draw_fault(self) -> str | None:
        f = self.faults
        if self._burst_left:
            self._burst_left -= 1
            return "rate_limited"
        roll = self._fault_rng.random()
        for name in ("server_error", "rate_limited", "timeout", "truncated", "dropped"):
            share = getattr(f, name)
            if roll < share:
                if name == "rate_limited":
                    self._burst_left = max(f.burst - 1, 0)
                return name
            roll -= share
        return None

    def _gatekeep(
        self, method: str, path: str, params: dict[str, str], headers: Mapping[str, str], fault: str | None, now: float
    ) -> Reply | None:
        if fault in ("timeout", "dropped"):
            return Reply(0, b"", fault=fault)
        if fault == "server_error":
            status = self._fault_rng.choice(_FAULT_STATUSES)
            return self._error(path, params, status, "InternalServerError", "the service failed; try again")
        key = next((v for k, v in headers.items() if k.lower() == "x-service-key"), None)
        if key not in self.api_keys:
            # checked before the rate window: an unknown key is not counted against anybody
            return self._error(path, params, 401, "UnknownTokenError", "missing or unknown API token")
        while self._recent and self._recent[0] <= now - self.window:
            self._recent.popleft()
        if fault == "rate_limited" or len(self._recent) >= self.limit:
            headers_out = {}
            if self.retry_after_header:
                wait = (self._recent[0] + self.window - now) if len(self._recent) >= self.limit else 1.0
                headers_out["Retry-After"] = str(max(1, int(wait + 0.999)))
            return self._error(path, params, 429, "TooManyRequestsError", "rate limit exceeded", headers_out)
        self._recent.append(now)
        if method != "GET":
            return self._error(path, params, 405, "MethodNotAllowedError", "only GET is served")
        return None

    # -- answers ----------------------------------------------------------------

    @staticmethod
    def _metadata(path: str, echo: Mapping[str, Any], cost: int, max_cost: int, status: int) -> dict[str, Any]:
        return {
            "request": {
                "path": path,
                "params": dict(echo),
                "cost": cost,
                "max_credit_cost": max_cost,
                "status": status,
            },
            "response": None,
        }

    def _envelope(self, path: str, echo: Mapping[str, Any], result: Any, cost: int, max_cost: int) -> bytes:
        body = {"result": result, "metadata": self._metadata(path, echo, cost, max_cost, 200)}
        return json.dumps(body, separators=(",", ":")).encode()

    def _error(
        self,
        path: str,
        params: Mapping[str, Any],
        status: int,
        code: str,
        message: str,
        headers: Mapping[str, str] | None = None,
    ) -> Reply:
        body = {"error": {"code": code, "message": message}, "metadata": self._metadata(path, params, 0, 0, status)}
        return Reply(
            status,
            json.dumps(body, separators=(",", ":")).encode(),
            {"content-type": "application/json", **(headers or {})},
        )

    def _answer(self, path: str, params: dict[str, str]) -> Reply:
        short = path.removeprefix(API_PREFIX)  # the service answers under its prefix only, as the real one does
        if short == path or short not in {e.path for e in catalog.ENDPOINTS.values()}:
            return self._error(path, params, 404, "NotFoundError", f"no endpoint at {path}")
        ep = catalog.endpoint(short)
        today, script = self.today, self.script  # read once: a request is answered wholly on one day
        if script.is_outage(today):
            return self._error(path, params, 503, "InternalServerError", "the service failed; try again")
        try:
            canonical = catalog.validate(ep, params, today=today)
        except InvalidParameterError as exc:
            return self._error(path, params, 422, "ValidationError", str(exc))
        if ep.max_apps and len(canonical.get("apps", "").split(",")) > ep.max_apps:
            return self._error(path, params, 422, "ValidationError", f"at most {ep.max_apps} apps per request")
        device = canonical["device"]
        store = store_of(device)
        country = canonical["country"]
        echo: dict[str, Any] = dict(canonical)
        if "language" in ep.param_names or ep.name == "metrics":
            echo["language"] = canonical.get("language") or self.world.default_language(country)
        language = echo.get("language", "en")
        apps = canonical["apps"].split(",") if "apps" in canonical else []
        if apps:
            missing = [
                a for a in apps if not (self.world.has_app(a, store) and self.world.is_available(a, store, country))
            ]
            if missing:
                return self._error(
                    path,
                    echo,
                    422,
                    "AppNotAvailableError",
                    f"one or more apps are not available in country {country!r}",
                )
            echo["apps"] = apps
        if "metrics" in canonical:
            metrics = canonical["metrics"].split(",")
            echo["metrics"] = metrics
            if not self.estimates_in_plan and {"downloads", "revenues"} & set(metrics):
                return self._error(
                    path, echo, 403, "EstimatesNotInPlanError", "downloads and revenues estimates are not in your plan"
                )

        max_cost = ep.estimate(canonical)
        call = _Call(ep, canonical, device, country, language, apps, today, max_cost, scripted(self.world, script))
        result, cost = self._RESULTS[ep.name](self, call)
        result = script.trim(ep.name, today, result)
        return Reply(
            200, self._envelope(path, echo, result, cost, max_cost), {"content-type": "application/json"}, cost=cost
        )

    # -- each endpoint's result: one builder per endpoint, found by name in _RESULTS ----

    def _metadata_result(self, call: _Call) -> _Built:
        result = {
            a: {
                "metadata": self.dialect.metadata(
                    call.world.metadata(
                        a, device=call.device, country=call.country, language=call.language, today=call.today
                    )
                )
            }
            for a in call.apps
        }
        return result, call.max_cost

    def _changes_result(self, call: _Call) -> _Built:
        start, end = date.fromisoformat(call.canonical["start_date"]), date.fromisoformat(call.canonical["end_date"])
        result = {
            a: {
                "changes": call.world.changes(
                    a,
                    device=call.device,
                    country=call.country,
                    language=call.language,
                    start=start,
                    end=min(end, call.today),
                )
            }
            for a in call.apps
        }
        return result, call.max_cost

    def _metrics_result(self, call: _Call) -> _Built:
        """Metrics; a metric whose value is null is not charged."""
        metrics = call.canonical["metrics"].split(",")
        result = {
            a: self.dialect.metrics(
                self.world.metrics(a, metrics, device=call.device, country=call.country, today=call.today)
            )
            for a in call.apps
        }
        cost = call.max_cost
        prices = call.ep.cost.per_app_metric
        for values in result.values():
            for name in metrics:
                if values.get(self.dialect.metric_key(name), {}).get("value") is None:
                    cost -= prices.get(name, 0)
        return result, cost

    def _benchmarks_result(self, call: _Call) -> _Built:
        result = {
            "category_benchmarks": self.world.benchmarks(
                country=call.country,
                device=call.device,
                type=call.canonical["type"],
                channel=call.canonical["channel"],
                start=date.fromisoformat(call.canonical["start_date"]),
                end=date.fromisoformat(call.canonical["end_date"]),
            )
        }
        return result, call.max_cost

    def _search_result(self, call: _Call) -> _Built:
        keyword = call.canonical["keyword"]
        ids = call.world.search(
            keyword, device=call.device, country=call.country, language=call.language, day=call.today
        )
        return self.dialect.under(keyword, self.dialect.live(call.today, ids)), call.max_cost

    def _search_ads_result(self, call: _Call) -> _Built:
        keyword = call.canonical["keyword"]
        ads = call.world.search_ads(
            keyword, device=call.device, country=call.country, language=call.language, day=call.today
        )
        return self.dialect.under(keyword, ads), call.max_cost

    def _search_history_result(self, call: _Call) -> _Built:
        """History; a day with no recorded search is not charged."""
        days, days_charged = self._history(call)
        cost = call.ep.cost.base + call.ep.cost.per_day * days_charged
        return self.dialect.under(call.canonical["keyword"], self.dialect.days(days)), cost

    _RESULTS: ClassVar[Mapping[str, Callable[[SandboxService, _Call], _Built]]] = {
        "metadata": _metadata_result,
        "changes": _changes_result,
        "metrics": _metrics_result,
        "benchmarks": _benchmarks_result,
        "search": _search_result,
        "search_ads": _search_ads_result,
        "search_history": _search_history_result,
    }
    """Each endpoint's builder, by endpoint name: a new endpoint is one entry and one method."""

    def _history(self, call: _Call) -> tuple[dict[str, list[str]], int]:
        """History as an object keyed by date: ``{"2026-01-05": [ids...], ...}``.

        A day the keyword was not tracked is absent. When the range ends today (whose
        results are recorded only once the day is over), a live search fills today,
        capped at 250 results.
        """
        keyword, canonical, world, today = call.canonical["keyword"], call.canonical, call.world, call.today
        device, country, language = call.device, call.country, call.language
        start, end = date.fromisoformat(canonical["start_date"]), date.fromisoformat(canonical["end_date"])
        days: dict[str, list[str]] = {}
        day = start
        while day <= min(end, today - timedelta(days=1)):
            ids = world.search_history_day(keyword, device=device, country=country, language=language, day=day)
            if ids is not None:
                days[day.isoformat()] = ids
            day += timedelta(days=1)
        if start <= today <= end:
            cap = catalog.ENDPOINTS["search_history"].result_cap["live_fallback"]
            days[today.isoformat()] = world.search(
                keyword, device=device, country=country, language=language, day=today
            )[:cap]
        return days, len(days)
