"""Keeping the token out of what the kit writes: scrubbing as it records, and a scan of every file after.

A :class:`Scrubber` knows the secrets of a run (the token, the wrong token of the 401 probe,
and the user name and password of the base URL, if it has any). As vcrpy records, it sets the
token header to ``REDACTED``, drops ``Authorization`` and cookies, records every request at the
replay address :data:`REPLAY_BASE` (so no host, port or credential of the base URL is kept), and
replaces any secret in a body or header by ``REDACTED``. :func:`leaks` then reads every file
written back, as a user would (gzip unpacked), for the secrets and for anything shaped like a
token (:data:`KEY_SHAPED`); the suite runs the same scan over every file it writes.

>>> leaks_in_bytes(b'{"x-service-key": "sk-live-abcdef123456"}', [])
['a key-shaped string']
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from ..errors import shown_when_half_built
from ..wire.safety import TOKEN_HEADER, Secret

__all__ = ["KEY_SHAPED", "REDACTED", "REPLAY_BASE", "Scrubber", "leaks", "leaks_in_bytes"]

REDACTED = "REDACTED"
REPLAY_BASE = "https://service.example"
"""Where recorded requests say they went: replay them with ``base_url=REPLAY_BASE + "/api/public/store"``."""

KEY_SHAPED = re.compile(
    rb"sk-live-[A-Za-z0-9]{6,}"
    rb"|(?i:x-service-key|api[_-]?key|token)[\"']?\s*[:=]\s*[\"']?(?!REDACTED|\*\*\*)[A-Za-z0-9_\-]{8,}"
)
"""A token's shape: the ``sk-live-`` form, or a key-like field holding an unmasked value."""

_DROPPED = ("authorization", "cookie", "set-cookie", "proxy-authorization")


class Scrubber:
    """Scrubs what vcrpy records of a run whose secrets are ``secrets`` (:class:`~storeframes.wire.safety.Secret`)."""

    def __init__(self, secrets: Iterable[Secret], base_url: str | None = None):
        values = [s.reveal() for s in secrets if s]
        if base_url:
            parts = urlsplit(base_url)
            values += [unquote(v) for v in (parts.username, parts.password) if v]
            values += [v for v in (parts.username, parts.password) if v]
        self._secrets = [Secret(v) for v in sorted(set(values), key=len, reverse=True) if len(v) >= 4]
        self.filtered_headers = [(TOKEN_HEADER, REDACTED), *((name, None) for name in _DROPPED)]

    @shown_when_half_built
    def __repr__(self) -> str:
        return f"Scrubber({len(self._secrets)} secrets)"

    @property
    def secrets(self) -> list[bytes]:
        """The secrets to look for in the files written (for :func:`leaks`)."""
        return [s.reveal().encode() for s in self._secrets]

    def text(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret.reveal(), REDACTED)
        return text

    def _bytes(self, data: bytes) -> bytes:
        for secret in self._secrets:
            data = data.replace(secret.reveal().encode(), REDACTED.encode())
        return data

    def request(self, request: Any) -> Any:
        """vcrpy's ``before_record_request``: the replay address, no host or credential of the base URL."""
        parts = urlsplit(request.uri)
        request.uri = self.text(REPLAY_BASE + parts.path + (f"?{parts.query}" if parts.query else ""))
        for name in list(request.headers):
            if name.lower() == "host":
                request.headers[name] = urlsplit(REPLAY_BASE).netloc
            elif name.lower() != TOKEN_HEADER:
                request.headers[name] = self.text(str(request.headers[name]))
        return request

    def response(self, response: dict[str, Any]) -> dict[str, Any]:
        """vcrpy's ``before_record_response``: no secret in the body or the headers, no cookie."""
        headers = response.get("headers", {})
        for name in [n for n in headers if n.lower() in _DROPPED]:
            headers.pop(name)
        for name, values in headers.items():
            headers[name] = [self.text(str(v)) for v in values] if isinstance(values, list) else self.text(str(values))
        body = response.get("body", {}).get("string", b"")
        response["body"]["string"] = self.text(body) if isinstance(body, str) else self._bytes(bytes(body))
        return response


def leaks_in_bytes(data: bytes, secrets: Sequence[bytes]) -> list[str]:
    """What of ``secrets`` (named by position) or of a key's shape ``data`` holds."""
    found = [f"secret {i + 1}" for i, secret in enumerate(secrets) if secret and secret in data]
    if KEY_SHAPED.search(data):
        found.append("a key-shaped string")
    return found


def _texts(path: Path) -> Iterable[bytes]:
    data = path.read_bytes()
    yield data
    if path.name.endswith(".gz"):
        try:
            yield gzip.decompress(data)
        except (OSError, EOFError):
            return


def leaks(root: Path, secrets: Sequence[bytes]) -> list[str]:
    """``file: what`` for every file under ``root`` holding one of ``secrets`` or a key-shaped string."""
    found = []
    for path in sorted(p for p in Path(root).rglob("*") if p.is_file()):
        what = sorted({w for text in _texts(path) for w in leaks_in_bytes(text, secrets)})
        found += [f"{path.relative_to(root)}: {w}" for w in what]
    return found
