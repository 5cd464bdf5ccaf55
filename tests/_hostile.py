"""A loopback HTTP server that misbehaves on purpose, reply by reply.

Each request the server receives takes the next :class:`Reply` of its script (the last
one repeats once the script runs out). A reply chooses its status, headers and body, and
how the body travels: whole, trickled a chunk at a time, cut short of its
``Content-Length``, gzip-encoded (or claimed so), or as a redirect. Everything the server
does is bounded in time: a trickle stops after ``max_seconds``, a handler never waits for
the client, and the server stops with its context.

Every reply served is counted by kind for the reliability summary printed at the end of
the test run (:func:`tests._summary.hostile`).

>>> with Hostile([Reply.json(envelope({"1": {}}, cost=11))]) as server:  # doctest: +SKIP
...     client = Client("token", base_url=server.base_url)
"""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from . import _summary

__all__ = ["PREFIX", "Hostile", "Reply", "Seen", "envelope"]

PREFIX = "/api/public/store"


def envelope(
    result: Any,
    *,
    cost: Any = 11,
    max_cost: Any = None,
    status: Any = 200,
    path: str = f"{PREFIX}/apps/metadata.json",
    params: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The service's envelope around ``result``; any member may be given a hostile value."""
    request = {
        "path": path,
        "params": dict(params or {}),
        "cost": cost,
        "max_credit_cost": cost if max_cost is None else max_cost,
        "status": status,
    }
    return {"result": result, "metadata": {"request": request, "response": None}}


@dataclass
class Reply:
    """One answer of the server, and how it misbehaves.

    Args:
        kind: what the reliability summary calls this case.
        status: the HTTP status.
        body: the bytes of the body (sent as they are).
        headers: extra headers (``Content-Length`` is set unless ``length`` says otherwise).
        length: the ``Content-Length`` to announce (None: the body's own length).
        cut: send only the first ``cut`` bytes of the body, then close the connection.
        trickle: send the body ``chunk`` bytes at a time, ``trickle`` seconds apart.
        max_seconds: the longest a trickle goes on before the server gives up.
        gzip: compress the body and say so in ``Content-Encoding``.
    """

    kind: str = "ok"
    status: int = 200
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)
    length: int | None = None
    cut: int | None = None
    trickle: float = 0.0
    chunk: int = 1
    max_seconds: float = 20.0
    gzip: bool = False

    @classmethod
    def json(cls, payload: Any, *, kind: str = "ok", status: int = 200, **options: Any) -> Reply:
        """A reply with ``payload`` as its JSON body (``allow_nan``: NaN and Infinity are written as such)."""
        body = json.dumps(payload, allow_nan=True).encode() if not isinstance(payload, bytes) else payload
        headers = {"Content-Type": "application/json", **options.pop("headers", {})}
        return cls(kind=kind, status=status, body=body, headers=headers, **options)

    @classmethod
    def redirect(cls, location: str, *, status: int = 302, kind: str = "redirect") -> Reply:
        return cls(kind=kind, status=status, headers={"Location": location})


@dataclass(frozen=True)
class Seen:
    """A request as the server received it."""

    path: str
    params: dict[str, str]
    headers: dict[str, str]
    time: float


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    hostile: Hostile


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        hostile = self.server.hostile
        url = urlsplit(self.path)
        seen = Seen(url.path, dict(parse_qsl(url.query)), {k.lower(): v for k, v in self.headers.items()}, time.time())
        reply = hostile._next(seen)
        body = gzip.compress(reply.body, mtime=0) if reply.gzip else reply.body
        try:
            self.send_response(reply.status)
            headers = {k.lower(): v for k, v in reply.headers.items()}
            if reply.gzip:
                headers.setdefault("content-encoding", "gzip")
            for name, value in headers.items():
                self.send_header(name, value)
            if "content-length" not in headers:
                self.send_header("Content-Length", str(reply.length if reply.length is not None else len(body)))
            self.end_headers()
            if reply.cut is not None:
                self.wfile.write(body[: reply.cut])
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if reply.trickle:
                deadline = time.monotonic() + reply.max_seconds
                for start in range(0, len(body), reply.chunk):
                    if time.monotonic() > deadline or hostile._stopping.is_set():
                        self.close_connection = True
                        return
                    self.wfile.write(body[start : start + reply.chunk])
                    self.wfile.flush()
                    hostile._stopping.wait(reply.trickle)
                return
            self.wfile.write(body)
        except OSError:  # the client gave up: that is what some cases are about
            self.close_connection = True


class Hostile:
    """A scripted loopback server (see the module): a context manager with a ``base_url``.

    ``script`` is a list of replies, taken in order; the last repeats. ``seen`` lists the
    requests received, in order.
    """

    def __init__(self, script: Sequence[Reply] | Reply, *, name: str = "hostile"):
        self.script = [script] if isinstance(script, Reply) else list(script)
        if not self.script:
            raise ValueError("a Hostile server needs at least one reply")
        self.name = name
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.hostile = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.origin}{PREFIX}"

    def _next(self, seen: Seen) -> Reply:
        with self._lock:
            reply = self.script[min(len(self.seen), len(self.script) - 1)]
            self.seen.append(seen)
        _summary.hostile(reply.kind)
        return reply

    def then(self, replies: Iterable[Reply]) -> None:
        """Replace the replies still to come (those already served stay counted)."""
        with self._lock:
            self.script = self.script[: len(self.seen)] + list(replies)

    def __enter__(self) -> Hostile:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
