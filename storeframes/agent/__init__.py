"""An assistant's way in: ``storeframes mcp``, a Model Context Protocol server with a spend gate.

Fourteen tools (:mod:`.server`) over one client: ``describe``, ``plan``, ``fetch_frame`` (the only one that may
spend, past the :mod:`.gate`), ``scan``, ``sql``, ``movers``, ``changes_before``, ``category_standing``,
``share_of_voice``, ``keyword_opportunities``, ``rank_anomalies``, ``events``, ``track_status`` and ``spend``. :class:`~.surface.Surface` holds them as plain methods, usable
without the SDK:

>>> from storeframes.agent import open_surface
>>> surface = open_surface("tracking-cache", sandbox=True, today="2026-11-20", confirm_above=50)  # doctest: +SKIP
>>> print(surface.plan("metadata_frame", {"apps": ["3233849169"]}).text)  # doctest: +SKIP
plan of metadata_frame: 1 row, 4 columns
1 requests to send, at most 11 credits; 0 of 1 cells cached (saving 0 credits)
gate: fetch_frame would go through
...
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager, nullcontext
from datetime import date
from pathlib import Path
from typing import Any

from ..cache import require_cache
from ..client import ENV_API_KEY, Client
from ..defaults import connected
from ..errors import ConfigurationError
from ..ledger import month_spent_of
from ..track import Tracker, load_spec
from ..track.budget import month_budget_lease
from ..workspaces import Workspace
from ..workspaces import workspace as named_workspace
from .gate import Gate
from .surface import Surface

__all__ = ["DEFAULT_CONFIRM_ABOVE", "Gate", "Surface", "open_surface"]

DEFAULT_CONFIRM_ABOVE = 100
"""Credits a call may cost without ``confirm=true``: about ten apps' metadata or ten live searches."""


def open_surface(
    cache_dir: Any = None,
    *,
    budget: int | None = None,
    confirm_above: int = DEFAULT_CONFIRM_ABOVE,
    offline: bool = False,
    tracker: str | os.PathLike[str] | None = None,
    sandbox: bool = False,
    today: str | date | None = None,
    workspace: str | Workspace | None = None,
    **options: Any,
) -> Surface:
    """The tools over a client of ``cache_dir`` (by default the tracker's ``cache_dir``).

    The client is :func:`~storeframes.connect`'s (not made the default of the package functions): the real service with a token, else the cache's own
    answers offline; ``sandbox=True`` the built-in sandbox, its today pinned to ``today``. ``budget`` is
    the session's (None: none), ``confirm_above`` the credits a call may cost unconfirmed, ``offline``
    serves only what the cache holds, ``tracker`` a spec file whose month budget also holds and whose
    runs ``track_status`` reads. ``workspace`` (or the tracker's) serves the workspace's cache with its token:
    its month budget holds too, and the server's paid calls take the month's lease as every caller of the
    workspace does.
    """
    if budget is not None and (not isinstance(budget, int) or budget < 0):
        raise ConfigurationError(f"budget must be a whole number of credits >= 0, got {budget!r}")
    if not isinstance(confirm_above, int) or confirm_above < 0:
        raise ConfigurationError(f"confirm_above must be a whole number of credits >= 0, got {confirm_above!r}")
    if today is not None and not sandbox:
        raise ConfigurationError("today= pins the sandbox's clock; the real service's today is the real one")
    spec = load_spec(Path(tracker), workspace=workspace) if tracker is not None else None
    chosen = named_workspace(workspace) if workspace is not None else spec.workspace if spec is not None else None
    if chosen is not None and sandbox:
        raise ConfigurationError("a workspace is of the real service (its token and address): leave out sandbox")
    if spec is not None:
        if cache_dir is not None and str(cache_dir) != str(spec.cache_dir):
            raise ConfigurationError(
                f"the tracker keeps its answers in {spec.cache_dir}: leave out the cache folder, or name that one"
            )
        cache_dir = spec.cache_dir
    if offline:
        options["offline"] = True
    if chosen is not None:  # the workspace's client: its token, service, cache and month budget
        chosen.own_cache(cache_dir, named="the cache")
        client = Client(workspace=chosen, budget=budget, **options)
    else:  # connect's client, kept by the surface alone (never made the process's default, nor closed by a later one)
        client = connected(cache_dir, False if sandbox else None, budget, today if sandbox else None, 0, options)[0]
    # the tracker reads the answers of the service the client is of: the sandbox's when connect chose it
    followed = Tracker(spec, sandbox=client.namespace != Client.namespace) if spec is not None else None

    budget_per_month = followed.spec.budget_per_month if followed is not None else None
    if client.fetcher.month is not None:  # the workspace's: the tighter of the two
        own = client.fetcher.month.budget
        budget_per_month = own if budget_per_month is None else min(budget_per_month, own)

    def month() -> tuple[int, int] | None:
        if budget_per_month is None or client.cache is None:
            return None
        spent = month_spent_of(client.cache.ledger.read(), client.namespace, client.today())
        return spent, budget_per_month

    def lease() -> AbstractContextManager[Any]:
        if budget_per_month is None or client.cache is None:
            return nullcontext()
        return month_budget_lease(client, client.today())

    if client.offline and client.cache is not None:  # the tools read it alone: a missing one is not an empty one
        require_cache(client.cache, what="--cache-dir")
    whose = "the tracker's month budget"
    if client.fetcher.month is not None and budget_per_month == client.fetcher.month.budget:
        whose = f"the month budget of {client.fetcher.month.whose}"
    gate = Gate(client, budget=budget, confirm_above=confirm_above, month=month, lease=lease, month_whose=whose)
    return Surface(client, gate, tracker=followed, offline=bool(client.offline))


def secrets(workspace: Workspace | None = None) -> list[str]:
    """What no output may hold: the token of the environment, and the workspace's (read from its variable)."""
    variables = [ENV_API_KEY, *([workspace.token_variable()] if workspace is not None else [])]
    tokens = [os.environ.get(name, "").strip() for name in variables]
    return list(dict.fromkeys(token for token in tokens if token))
