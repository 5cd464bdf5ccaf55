"""What the request path keeps safe: the token, and the addresses it is sent to or shown as.

The token is held in a :class:`Secret` (no repr, ``vars()`` dump or traceback local shows
it), cleaned by :func:`clean_token` (printable ASCII, as a header carries), and set in the
:data:`TOKEN_HEADER` header by an auth flow of the HTTP library that masks it again (``***``) once
the answer's headers arrived. A base URL is https (plain http only for loopback hosts) and
ends with the service's prefix ``/api/public/store`` (:func:`check_base_url`), and every URL
that is shown goes through :func:`shown_url`, which masks its user info and query.

User info in a base URL (a gateway's ``https://user:password@host/...``) never reaches the HTTP library: the wire
sends to the URL without it (:func:`without_user_info`) and sets the user name and password as HTTP
basic authentication in the same flow as the token, masked in the same way. As a second line,
:func:`guard_logs` puts a filter on the HTTP library's and storeframes' loggers that masks the user
info of any URL in a record, whoever logs it.
"""

from __future__ import annotations

import base64
import functools
import ipaddress
import logging
import re
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit, urlunsplit

from ..catalog import API_PREFIX
from ..errors import ConfigurationError

if TYPE_CHECKING:  # imported when a client is first made: importing storeframes stays quick
    from types import ModuleType

    from .http import Request, Response
    from .http import lib as http_lib

__all__ = [
    "MASK",
    "TOKEN_HEADER",
    "Secret",
    "_token_auth",
    "check_base_url",
    "clean_token",
    "guard_logs",
    "mask_user_info",
    "shown_url",
    "without_user_info",
]

TOKEN_HEADER = "x-service-key"

MASK = "***"


class Secret:
    """Holds the token so that no repr, vars() dump or traceback local shows it."""

    __slots__ = ("_value",)

    def __init__(self, value: str):
        self._value = value

    def reveal(self) -> str:
        return self._value

    def scrub(self, text: str) -> str:
        """``text`` with every occurrence of the token replaced by ``***``."""
        return text.replace(self._value, MASK) if self._value else text

    def __repr__(self) -> str:
        return "'***'"

    __str__ = __repr__

    def __bool__(self) -> bool:
        return bool(self._value)


@functools.cache
def _token_auth(lib: ModuleType) -> Callable[[Secret, Secret | None], http_lib.Auth]:
    """The auth flow class of the HTTP library ``lib`` (httpx2 or httpx: a client takes its own library's flow),
    made when first needed."""

    class _TokenAuth(lib.Auth):  # type: ignore[name-defined]
        """Sets the token header on a request as the library sends it, and masks it once the request is done.

        The library resumes the flow when the answer's headers arrived (or closes it when sending
        failed), so from then on the request that the response, the exception and the library's own
        frames keep holds ``***``.
        """

        def __init__(self, secret: Secret, basic: Secret | None = None):
            self._secret = secret
            self._basic = basic

        def sync_auth_flow(self, request: Request) -> Generator[Request, Response, None]:
            request.headers[TOKEN_HEADER] = self._secret.reveal()
            if self._basic:
                request.headers["authorization"] = self._basic.reveal()
            try:
                yield request
            finally:
                request.headers[TOKEN_HEADER] = MASK
                if self._basic:
                    request.headers["authorization"] = MASK

        def auth_flow(self, request: Request) -> Generator[Request, Response, None]:
            yield from self.sync_auth_flow(request)

    return _TokenAuth


def clean_token(api_key: Any) -> str:
    """The token without the whitespace around it (as read from a file); refused if it cannot be sent.

    A token is sent in a header, which carries printable ASCII only: one with a control
    character (a newline, a tab, a NUL) or a non-ASCII character inside is a
    :class:`~storeframes.ConfigurationError` that says where, never what, it is.

    >>> clean_token("  sk-live-0123  \\n")
    'sk-live-0123'
    """
    if not isinstance(api_key, str):  # the value itself is never shown
        raise ConfigurationError(f"api_key must be the token as a text, got a {type(api_key).__name__}")
    token = api_key.strip()
    if token.isascii() and token.isprintable():
        return token
    position = next(i for i, c in enumerate(token) if not (c.isascii() and c.isprintable()))
    kind = "a control character" if token[position].isascii() else "a non-ASCII character"
    length = len(token)
    del api_key, token  # nor is it among the locals of the traceback
    raise ConfigurationError(
        f"api_key holds {kind} at position {position + 1} of its {length} (the token is not shown): "
        "a token is printable ASCII; check how it was copied or read"
    )


def shown_url(url: Any) -> str:
    """``url`` as it may be shown: user info and query masked, fragment left out.

    Every message, repr and line that shows a URL goes through here, so a password in a
    base URL (``https://user:pass@host/...``) or a signature in a query never is.

    >>> shown_url("https://user:secret@api.example.com/api/public/store?key=abc#top")
    'https://***@api.example.com/api/public/store?***'
    """
    text = str(url)
    try:
        parts = urlsplit(text)
    except ValueError:
        return "<a URL that cannot be read>"
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rpartition('@')[2]}"
    shown = urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    return f"{shown}?{MASK}" if parts.query else shown


def without_user_info(url: str) -> tuple[str, Secret | None]:
    """``url`` without its user info, and that user info as an HTTP basic ``Authorization`` header's value (held in
    a :class:`Secret`), or None when it has none: what the library is given, so that no line it logs holds a password.

    >>> without_user_info("https://alice:pw@gw.example/api/public/store")
    ('https://gw.example/api/public/store', '***')
    """
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None
    info, _, host = parts.netloc.rpartition("@")
    user, _, password = info.partition(":")
    pair = f"{unquote(user)}:{unquote(password)}".encode()
    return urlunsplit(parts._replace(netloc=host)), Secret("Basic " + base64.b64encode(pair).decode("ascii"))


_USER_INFO = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://)[^\s/?#@]*@")


def mask_user_info(text: str) -> str:
    """``text`` with the user info of every URL in it masked.

    >>> mask_user_info("HTTP Request: GET https://alice:pw@gw.example/x")
    'HTTP Request: GET https://***@gw.example/x'
    """
    return _USER_INFO.sub(rf"\1{MASK}@", text)


class _MaskUserInfo(logging.Filter):
    """Masks the user info of any URL in a record's message (its arguments merged in, as a handler writes it)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a record that cannot be formatted: left to logging's own error handling
            return True
        masked = mask_user_info(message)
        if masked != message:
            record.msg, record.args = masked, None
        return True


@functools.cache
def guard_logs() -> None:
    """Put the filter that masks user info in URLs, once, on each logger that may name the service's URL:
    storeframes' own, and those of httpx2, httpx and each of their connection layers
    (:data:`~storeframes.wire.http.LOGGERS`, whichever library is in use: a logger's filters see only the records
    made on it, not those of the loggers under it).

    >>> guard_logs()
    """
    from .http import LOGGERS

    masking = _MaskUserInfo()
    for name in ("storeframes", *LOGGERS):
        logging.getLogger(name).addFilter(masking)


def _is_loopback(host: str) -> bool:
    """Whether ``host`` is ``localhost`` itself or a loopback address (never resolved: a name such
    as ``anything.localhost`` may point anywhere)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_base_url(base_url: str) -> str:
    """The base URL without a trailing slash; https only (plain http for ``localhost`` and loopback addresses),
    and its path ends with the service's prefix :data:`~storeframes.catalog.API_PREFIX` (``/api/public/store``,
    as ``https://<host>/api/public/store``, or under a gateway's path of its own), which every endpoint's path
    follows: a base URL without it would send every request to a path the service does not serve. A query or a
    fragment is refused: each request's path and parameters follow the base URL, and a query there would go into
    every URL sent and logged."""
    from .http import URL

    shown = shown_url(base_url)
    try:
        url = URL(base_url)
    except Exception as exc:  # the library raises InvalidURL and friends
        reason = str(exc).replace(str(base_url), shown)
        raise ConfigurationError(f"base_url {shown!r} is not a URL: {shown_url(reason)}") from None
    if url.scheme == "http" and not _is_loopback(url.host):
        raise ConfigurationError(
            f"base_url {shown!r} uses plain http; the service requires https "
            "(plain http is allowed only for loopback hosts: localhost itself and loopback addresses such as "
            "127.0.0.1, as for the local sandbox)"
        )
    if url.scheme not in ("http", "https") or not url.host:
        raise ConfigurationError(f"base_url {shown!r} must be an https:// URL")
    if url.query or "#" in base_url:
        raise ConfigurationError(
            f"base_url {shown!r} has a query or a fragment (not shown); the service's base address takes no query: "
            f"give it alone, as https://<host>{API_PREFIX} (a gateway's credentials go as https://user:password@<host>"
            f"{API_PREFIX})"
        )
    if not url.path.rstrip("/").endswith(API_PREFIX):
        raise ConfigurationError(
            f"base_url {shown!r} does not end with the service's prefix {API_PREFIX}: give the service's base "
            f"address with it, as https://<host>{API_PREFIX}"
        )
    return base_url.rstrip("/")
