"""What became of a request that got no complete answer, in words a person can act on.

A transport failure is told by its cause, found along the exception's chain: the connection
refused (nothing listens there), the host name not resolved (a typo, DNS), the TLS handshake
failed (a proxy, a certificate, plain http at an https address), a timeout, or a connection
dropped before a whole answer. :data:`NO_ANSWER` maps each opening phrase to a short kind, which
the conformance kit reports per probe. Nothing here speaks HTTP: :mod:`.request` tells a timeout
from a failed connection, and asks :func:`unanswered` why the connection failed.
"""

from __future__ import annotations

import socket
import ssl

__all__ = ["NO_ANSWER", "no_answer_kind", "unanswered"]

NO_ANSWER = {
    "connection refused": "refused",
    "the host name did not resolve": "DNS",
    "the TLS handshake failed": "TLS",
    "timed out": "timeout",
    "connection failed": "dropped",
}
"""The opening phrase of each transport failure the request path names (:func:`unanswered` and timeouts), and its kind."""


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    at: BaseException | None = exc
    while at is not None and at not in seen:
        seen.append(at)
        at = at.__cause__ or at.__context__
    return seen


def unanswered(exc: BaseException) -> str:
    """The failure of one attempt whose connection failed (not a timeout: that is said as such), its cause first.

    >>> unanswered(ConnectionRefusedError(111, "Connection refused"))
    'connection refused (ConnectionRefusedError)'
    """
    name = type(exc).__name__
    chain = _chain(exc)
    text = " ".join(str(each) for each in chain)
    if any(isinstance(each, ConnectionRefusedError) for each in chain) or "Connection refused" in text:
        return f"connection refused ({name})"
    if any(isinstance(each, socket.gaierror) for each in chain) or "name resolution" in text.lower():
        return f"the host name did not resolve ({name})"
    if any(isinstance(each, ssl.SSLError) for each in chain) or "[SSL" in text:
        reason = next((str(each) for each in chain if isinstance(each, ssl.SSLError)), str(exc))
        return f"the TLS handshake failed ({name}: {reason[:120]})"
    return f"connection failed ({name})"


def no_answer_kind(message: str) -> str | None:
    """The kind of transport failure a :class:`~storeframes.TransportError`'s message names (see
    :data:`NO_ANSWER`), or None when it names none (a body cut short, one that could not be decoded).

    >>> no_answer_kind("connection refused (ConnectError) (/v1/search, 5 attempts)")
    'refused'
    """
    text = message.split(": ", 1)[1] if message.startswith("TransportError: ") else message
    return next((kind for phrase, kind in NO_ANSWER.items() if text.startswith(phrase)), None)
