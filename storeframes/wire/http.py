"""The one module that speaks to the HTTP library: ``httpx2`` when it is installed, else ``httpx``.

``httpx2`` is httpx's maintained fork (the same API, bounded decoders), which the official MCP SDK requires, so
an environment with every extra sends through it alone; ``httpx`` (the declared dependency, frozen at 0.28) is
used where ``httpx2`` is absent. ``$STOREFRAMES_HTTP`` (``httpx2`` or ``httpx``) forces one, for a test or a
diagnosis. Every other module of the package takes its names from here, never from either library.

A client a caller gives (``http_client=``) may come from either library: :func:`library_of` names the one its
client speaks, and the request path catches that library's errors and builds that library's auth flow.
"""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import ConfigurationError

__all__ = ["ENV", "LIBRARIES", "LOGGERS", "NAME", "HttpClient", "choose", "lib", "library_of"]

ENV = "STOREFRAMES_HTTP"
"""The environment variable that forces one library (``httpx2`` or ``httpx``); unset or empty: the first found."""

LIBRARIES = ("httpx2", "httpx")
"""The HTTP libraries storeframes sends through, the preferred first."""

_CORE_PARTS = ("", ".connection", ".http11", ".http2", ".proxy", ".socks")
LOGGERS = tuple(
    f"{library}{part}"
    for library, parts in (("httpx", ("",)), ("httpx2", ("",)), ("httpcore", _CORE_PARTS), ("httpcore2", _CORE_PARTS))
    for part in parts
)
"""The loggers of both libraries and of their connection layers, whichever is in use (a caller's client may speak
the other)."""


def choose(forced: str | None = None) -> ModuleType:
    """The HTTP library to send through: ``forced`` (else ``$STOREFRAMES_HTTP``) when set, else ``httpx2`` when
    it is installed, else ``httpx``. An unknown name, or a forced library that is not installed, is a
    :class:`~storeframes.ConfigurationError` saying what is allowed.

    >>> choose("httpx").__name__
    'httpx'
    """
    name = (os.environ.get(ENV, "") if forced is None else forced).strip()
    if name and name not in LIBRARIES:
        raise ConfigurationError(
            f"${ENV} is {name!r}: it names the HTTP library storeframes sends through, one of httpx2, httpx "
            "(or unset: httpx2 when it is installed, else httpx)"
        )
    for candidate in (name,) if name else LIBRARIES:
        try:
            return importlib.import_module(candidate)
        except ImportError:
            if name:
                raise ConfigurationError(
                    f"${ENV} is {name!r} but {name} is not installed: pip install {name}, or unset ${ENV}"
                ) from None
    raise ConfigurationError("no HTTP library is installed: pip install httpx")  # httpx is a dependency


if TYPE_CHECKING:  # both libraries have one API: the type checker reads httpx's
    import httpx as lib
else:
    lib = choose()

NAME: str = lib.__name__
"""The name of the library in use: ``"httpx2"`` or ``"httpx"``."""

Client = lib.Client
AsyncClient = lib.AsyncClient
BaseTransport = lib.BaseTransport
MockTransport = lib.MockTransport
Request = lib.Request
Response = lib.Response
Headers = lib.Headers
URL = lib.URL
Timeout = lib.Timeout
Limits = lib.Limits
ReadTimeout = lib.ReadTimeout
RemoteProtocolError = lib.RemoteProtocolError
HTTPError = lib.HTTPError
InvalidURL = lib.InvalidURL
TimeoutException = lib.TimeoutException


class HttpClient(Protocol):
    """What storeframes calls on an ``http_client=``: an ``httpx2.Client`` or an ``httpx.Client`` has it."""

    @property
    def is_closed(self) -> bool: ...

    @property
    def timeout(self) -> Any: ...

    def build_request(
        self, method: str, url: Any, *, params: Any = None, headers: Any = None, timeout: Any = None
    ) -> Any: ...

    def send(self, request: Any, *, stream: bool = False, auth: Any = None, follow_redirects: Any = None) -> Any: ...

    def close(self) -> None: ...


def library_of(client: Any) -> ModuleType:
    """The library whose client ``client`` is (``httpx2`` or ``httpx``, a subclass included): the request path
    sends through it with that library's errors and auth flow. Any other object is a
    :class:`~storeframes.ConfigurationError` naming what is allowed.

    >>> library_of(Client()).__name__ == NAME
    True
    """
    for cls in type(client).__mro__:
        root = cls.__module__.partition(".")[0]
        if root in LIBRARIES and cls.__name__ == "Client" and root in sys.modules:
            return sys.modules[root]
    raise ConfigurationError(
        f"http_client must be an httpx2.Client or an httpx.Client (or a subclass of one), got a "
        f"{type(client).__module__}.{type(client).__name__}"
    )
