"""The bearer token of ``storeframes mcp`` over HTTP: a loopback port is open to every user of the machine,
so every request must carry the token only the server's owner holds.

The token is read from ``$STOREFRAMES_MCP_TOKEN`` (at least :data:`SHORTEST` characters of letters, digits
and ``-._~+/=``), else made anew at each start with :func:`secrets.token_urlsafe` (43 characters, 256 bits).
It is compared in constant time and never written to a log, a repr, an error or a tool's output.
"""

from __future__ import annotations

import hmac
import os
import re
import secrets
from collections.abc import Mapping

from ..errors import ConfigurationError

__all__ = ["ENV_MCP_TOKEN", "SHORTEST", "bearer_token", "matches"]

ENV_MCP_TOKEN = "STOREFRAMES_MCP_TOKEN"
"""The environment variable that chooses the HTTP server's bearer token (else a new one is made at start)."""

SHORTEST = 32
"""The fewest characters a chosen bearer token may have."""

_ALLOWED = re.compile(r"[A-Za-z0-9\-._~+/=]+")


def bearer_token(environ: Mapping[str, str] | None = None) -> tuple[str, bool]:
    """The bearer token the HTTP server requires, and whether it was chosen in the environment (else it is new).

    >>> token, chosen = bearer_token({})
    >>> len(token) >= SHORTEST, chosen
    (True, False)
    >>> bearer_token({"STOREFRAMES_MCP_TOKEN": "x" * 40}) == ("x" * 40, True)
    True
    """
    chosen = (os.environ if environ is None else environ).get(ENV_MCP_TOKEN, "").strip()
    if not chosen:
        return secrets.token_urlsafe(32), False
    if len(chosen) < SHORTEST or not _ALLOWED.fullmatch(chosen):
        raise ConfigurationError(
            f"${ENV_MCP_TOKEN} is not a usable bearer token (it is not shown): it needs at least {SHORTEST} "
            "characters of letters, digits and -._~+/= ; make one with "
            'python -c "import secrets; print(secrets.token_urlsafe(32))", or unset it and a new one is made at start'
        )
    return chosen, True


def matches(sent: str, expected: str) -> bool:
    """Whether the token a request sent is ``expected``, compared in constant time (any text, never an error).

    >>> matches("a" * 40, "a" * 40), matches("b" * 40, "a" * 40), matches("é", "a" * 40)
    (True, False, False)
    """
    return hmac.compare_digest(sent.encode("utf-8", "surrogateescape"), expected.encode("utf-8"))
