"""The options of a :class:`~storeframes.Client`, checked (what each may be, and the defaults the environment
sets), and the :class:`Settings` they make: what the client's fetcher reads on every call."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from .. import catalog
from ..answers import REFRESH_MODES, Refresh
from ..catalog import CostModel, Endpoint, Freshness
from ..errors import ConfigurationError, InvalidParameterError

if TYPE_CHECKING:
    from ..wire.http import HttpClient

__all__ = [
    "ENV_OFFLINE",
    "ENV_PROGRESS",
    "MOST_DEFAULT_WORKERS",
    "Settings",
    "default_workers",
    "settings_of",
    "utc_now",
    "workers_for",
]

ENV_OFFLINE = "STOREFRAMES_OFFLINE"
ENV_PROGRESS = "STOREFRAMES_PROGRESS"


def _env_flag(name: str) -> bool | None:
    """An environment switch: True for 1/true/yes/on, False for 0/false/no/off, None when unset or other."""
    value = os.environ.get(name, "").strip().lower()
    return True if value in ("1", "true", "yes", "on") else False if value in ("0", "false", "no", "off") else None


def _per_endpoint(option: str, defaults: Mapping[str, Any], overrides: Mapping[str, Any] | None) -> dict[str, Any]:
    """The defaults per endpoint name with the user's overrides; an unknown name is refused."""
    unknown = sorted(set(overrides or {}) - set(catalog.ENDPOINTS))
    if unknown:
        raise ConfigurationError(f"{option} names unknown endpoints {unknown}; known: {list(catalog.ENDPOINTS)}")
    return {**defaults, **(overrides or {})}


def endpoints_with(
    cost_model: Mapping[str, CostModel] | None, freshness: Mapping[str, Freshness] | None
) -> dict[str, Endpoint]:
    """The catalog's endpoints with the user's prices and freshness policies."""
    costs = _per_endpoint("cost_model", catalog.DEFAULT_COSTS, cost_model)
    policies = _per_endpoint("freshness", catalog.DEFAULT_FRESHNESS, freshness)
    return {name: ep.with_cost(costs[name]).with_freshness(policies[name]) for name, ep in catalog.ENDPOINTS.items()}


def slot_hold(timeout: Any, http_client: HttpClient | None, deadline: Any = None) -> float:
    """The longest one attempt may hold a slot: its deadline and 5 s; without one, the HTTP timeout and
    5 s, or 60 s when it is not known."""
    if isinstance(deadline, (int, float)) and not isinstance(deadline, bool) and deadline > 0:
        return float(deadline) + 5.0  # an attempt ends by its deadline, however its body trickles
    if http_client is not None or isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        return 60.0
    return float(timeout) + 5.0


def refresh_mode(refresh: Any) -> Refresh:
    """The cache policy ``refresh=`` asks for: a mode by its name, True for "always", False for "auto"."""
    if refresh is True or refresh is False:
        return "always" if refresh else "auto"
    if not isinstance(refresh, str) or refresh not in REFRESH_MODES:
        allowed = f"one of {', '.join(REFRESH_MODES)} (or True for always, False for auto)"
        raise InvalidParameterError("refresh", refresh, allowed)
    return refresh  # type: ignore[return-value]


MOST_DEFAULT_WORKERS = 64
"""The most threads a client sends with by default, whatever its rate limit."""


def default_workers(limit: int) -> int:
    """Threads enough to send a whole window at once: the rate limit (at least 8, at most 64).

    With fewer, the requests of a window leave in several round trips, and the spread
    carries into every later window (8 threads at 60 requests per 10 s and a third of a
    second's latency reach about 77 % of what the limit allows; 60 threads 96 %).
    """
    return min(max(8, limit), MOST_DEFAULT_WORKERS)


def workers_for(max_workers: Any, limit: int) -> int:
    """The checked ``max_workers`` option: None means the rate limit's requests (8 to 64).

    >>> workers_for(None, 60), workers_for(3, 60)
    (60, 3)
    """
    if max_workers is not None and (
        not isinstance(max_workers, int) or isinstance(max_workers, bool) or max_workers < 1
    ):
        raise ConfigurationError(
            f"max_workers must be a whole number >= 1 (or None for the rate limit's requests, "
            f"{default_workers(limit)}), got {max_workers!r}"
        )
    return max_workers or default_workers(limit)


def settings_of(
    *,
    cost_model: Mapping[str, CostModel] | None = None,
    freshness: Mapping[str, Freshness] | None = None,
    refresh: Any = "auto",
    offline: Any = None,
    progress: Any = None,
    clock: Callable[[], datetime] | None = None,
    progress_after: int = 5,
) -> Settings:
    """A client's :class:`Settings` from its options, each checked, the environment's defaults applied
    (``$STOREFRAMES_OFFLINE``, ``$STOREFRAMES_PROGRESS``).

    >>> settings_of(refresh=True).refresh, settings_of(offline=True).offline
    ('always', True)
    """
    if offline is not None and not isinstance(offline, bool):
        raise ConfigurationError(f"offline must be True, False or None (${ENV_OFFLINE}), got {offline!r}")
    if progress is None and _env_flag(ENV_PROGRESS) is False:
        progress = False
    if progress is not None and not isinstance(progress, bool):
        raise ConfigurationError(f"progress must be True, False or None (when many requests), got {progress!r}")
    return Settings(
        endpoints_with(cost_model, freshness),
        refresh_mode(refresh),
        _env_flag(ENV_OFFLINE) is True if offline is None else offline,
        progress,
        progress_after=progress_after,
        clock=clock or utc_now,
    )


def utc_now() -> datetime:
    """The current time in UTC: a client's clock unless it is given one.

    >>> utc_now().tzinfo
    datetime.timezone.utc
    """
    return datetime.now(UTC)


@dataclass(frozen=True)
class Settings:
    """What a client is set to, as its fetcher reads it on every call (as httpx's ``BaseClient`` keeps its settings).

    The client owns it: changing one of them on the client (``client.offline = True``) replaces the
    settings with a copy holding the new value, which the next call reads. The parts a call goes
    through (the cache, the credits, the wire, the rate window) are the fetcher's, not settings.

    >>> settings = Settings(endpoints_with(None, None), refresh="auto", offline=False, progress=None)
    >>> settings.namespace, settings.endpoints["metadata"].path
    ('service', '/apps/metadata.json')
    """

    endpoints: Mapping[str, Endpoint]
    """The catalog's endpoints with the client's prices and freshness policies."""
    refresh: Refresh
    """The cache policy of a call that names none."""
    offline: bool
    """Never send: every cached answer serves, however old."""
    progress: bool | None
    """Show a progress bar: None when a call sends more than :attr:`progress_after` requests."""
    progress_after: int = 5
    namespace: str = "service"
    """Which service the cached answers come from (a sandbox's are kept apart)."""
    offline_reason: str = "offline"
    """Why an offline client sends nothing, as a :class:`~storeframes.NotCachedError` says it."""
    clock: Callable[[], datetime] = utc_now
    """The current UTC datetime (a replay's or a test's clock)."""
