"""A client of the built-in sandbox: :func:`client`, with no network and no token."""

from __future__ import annotations

import shutil
import tempfile
import weakref
from typing import Any

from .._tracebacks import user_facing
from ..client import Client
from ..wire import http as http_library
from .service import API_PREFIX, SANDBOX_KEY, SandboxService
from .transport import SandboxTransport

__all__ = ["SANDBOX_BASE_URL", "SandboxClient", "client"]

SANDBOX_BASE_URL = "https://sandbox.storeframes.invalid" + API_PREFIX
"""The base URL of the in-process sandbox (the transport answers it; nothing resolves it)."""

_CLIENT_OPTIONS = (
    "max_tries",
    "backoff",
    "max_workers",
    "cost_model",
    "timeout",
    "max_body_bytes",
    "cache_dir",
    "storage_options",
    "offline",
    "refresh",
    "freshness",
    "clock",
    "progress",
)


class SandboxClient(Client):
    """A :class:`~storeframes.Client` wired to an in-process :class:`SandboxService`.

    ``sandbox_service`` is the service it talks to (its ``world``, its ``arrivals``).
    Its cached answers are kept apart from the real service's (``namespace``
    ``sandbox-<seed>``), and its clock is the sandbox's today.
    """

    def __init__(self, service: SandboxService, *, scratch: str | None = None, **options: Any):
        http = http_library.Client(transport=SandboxTransport(service), timeout=options.pop("timeout", 30.0))
        try:
            options.setdefault("clock", service.now)
            super().__init__(SANDBOX_KEY, base_url=SANDBOX_BASE_URL, http_client=http, **options)
        except BaseException:
            http.close()
            raise
        self.wire.owns_http = True
        self.sandbox_service = service
        self.namespace = f"sandbox-{service.world.seed}"
        # a cache folder of its own is removed on close(), or when the client is collected
        self._scratch = weakref.finalize(self, shutil.rmtree, scratch, ignore_errors=True) if scratch else None

    def _settings(self) -> list[tuple[str, Any]]:
        """The client's settings, its key named for what it is: the sandbox's documented one, no token."""
        return [(name, "sandbox" if name == "api_key" else value) for name, value in super()._settings()]

    def close(self) -> None:
        super().close()
        if self._scratch is not None:
            self._scratch()
            self.cache = None


@user_facing
def client(*, budget: int | None = None, rate_limit: tuple[int, float] = (60, 10.0), **options: Any) -> SandboxClient:
    """A client wired to an in-process sandbox service (no network, no token needed).

    ``options`` go to :class:`SandboxService` (``seed``, ``today``, ``rate_limit``,
    ``latency``, ``faults``, ``script`` ...). The client's ``max_tries``, ``backoff``,
    ``max_workers``, ``cost_model``, ``timeout``, ``max_body_bytes``, ``cache_dir``, ``offline``,
    ``refresh``, ``freshness``, ``clock`` and ``progress`` may be given too. Unless
    ``cache_dir`` is given, the client caches in a temporary folder of its own, removed
    when it is closed (``cache_dir=False`` turns caching off); in a shared folder its
    answers are kept apart from the real service's. Its clock is the sandbox's
    ``today``, so relative dates and freshness follow the sandbox.

    ``today`` (a date or ``YYYY-MM-DD``) pins the sandbox's day. The world moves from day to day
    as the stores do (ranks drift and jump, downloads follow the week, ratings grow, apps change
    their metadata), deterministically per ``(seed, day)``: a client per day of a month replays
    that month, and ``client.sandbox_service.today = ...`` moves one client on to another day.

    >>> from storeframes import sandbox
    >>> with sandbox.client(seed=0) as demo:
    ...     demo.get("metadata", apps="3233849169").cost
    11
    >>> def top10(day):
    ...     with sandbox.client(today=day, cache_dir=False) as c:
    ...         return c.get("search", keyword="recipes", device="iphone").result["value"][:10]
    >>> top10("2026-11-01") == top10("2026-11-01") != top10("2026-11-02")
    True
    """
    client_options = {k: options.pop(k) for k in _CLIENT_OPTIONS if k in options}
    scratch = None
    if client_options.get("cache_dir") is None:
        scratch = tempfile.mkdtemp(prefix="storeframes-sandbox-")
        client_options["cache_dir"] = scratch
    options.setdefault("rate_limit", rate_limit)
    try:
        service = SandboxService(**options)
        return SandboxClient(service, scratch=scratch, budget=budget, rate_limit=rate_limit, **client_options)
    except BaseException:  # a refused option leaves no folder behind
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
        raise
