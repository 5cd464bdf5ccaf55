"""Serve the sandbox as a real HTTP server on a loopback address."""

from __future__ import annotations

import errno
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from ..errors import ConfigurationError
from .service import API_PREFIX, SANDBOX_KEY, SandboxService

__all__ = ["SandboxServer"]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def _serve(self, method: str) -> None:
        url = urlsplit(self.path)
        reply = self.server.service.handle(
            method, url.path, parse_qsl(url.query, keep_blank_values=True), dict(self.headers)
        )
        if reply.fault == "timeout":
            time.sleep(self.server.service.faults.stall_seconds)
            self.close_connection = True
            return
        if reply.fault == "dropped":
            self.close_connection = True
            return
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        if reply.fault == "truncated":
            self.wfile.write(reply.body[: len(reply.body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(reply.body)

    def handle(self) -> None:
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError):  # the client went away before its answer: not an error
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # the backlog of connections not yet accepted: socketserver's 5 drops the SYN of a burst of new
    # connections, which the client's kernel sends again a whole second later
    request_queue_size = 128
    service: SandboxService
    verbose: bool


LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")
"""The addresses the sandbox serves on: loopback only."""


def _why_not(exc: OSError) -> str:
    """Why a port could not be listened on, in words, and what to do."""
    if exc.errno == errno.EADDRINUSE:
        why = "another program listens there"
    elif exc.errno == errno.EACCES:
        why = "this user may not listen on that port"
    else:
        why = exc.strerror or str(exc)
    return f"{why}; pick another port (port 0 takes any free one)"


class SandboxServer:
    """The sandbox on ``http://127.0.0.1:PORT/api/public/store``.

    Plain http is accepted by :class:`~storeframes.Client` only because the host is a
    loopback address. Use it as a context manager, or call :meth:`serve_forever`. ``options``
    go to :class:`SandboxService` (``seed``, ``today``, ...); ``server.service.today = day``
    moves a running server on to another day, so one server replays a month day after day.

    >>> with SandboxServer(port=0, today="2026-11-20") as server:  # doctest: +SKIP
    ...     client = Client(server.key, base_url=server.base_url)
    ...     server.service.today = "2026-11-21"  # the next requests answer as on that day
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        verbose: bool = False,
        service: SandboxService | None = None,
        **options: Any,
    ):
        if host not in LOOPBACK_HOSTS:
            raise ConfigurationError(
                f"the sandbox serves only on a loopback address ({', '.join(LOOPBACK_HOSTS)}), not {host!r}"
            )
        self.service = service or SandboxService(**options)
        try:
            self._httpd = _Server((host, port), _Handler)
        except OSError as exc:
            raise ConfigurationError(f"cannot listen on {host}:{port}: {_why_not(exc)}") from None
        self._httpd.service = self.service
        self._httpd.verbose = verbose
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        host = self._httpd.server_address[0]  # text for a TCP server, but typed to allow bytes too
        if isinstance(host, (bytes, bytearray)):
            host = host.decode("ascii")
        return f"http://{host}:{self.port}{API_PREFIX}"

    @property
    def key(self) -> str:
        """The key it accepts: the documented sandbox key, or the one it was given (``api_keys=``)."""
        keys = self.service.api_keys
        return SANDBOX_KEY if SANDBOX_KEY in keys or not keys else sorted(keys)[0]

    def start(self) -> SandboxServer:
        """Serve on a background thread."""
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="storeframes-sandbox", daemon=True
        )
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._httpd.serve_forever()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def __enter__(self) -> SandboxServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
