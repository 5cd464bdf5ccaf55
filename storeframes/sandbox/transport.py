"""Serve the sandbox in-process, as a transport of the HTTP library in use (no sockets, no threads)."""

from __future__ import annotations

from ..wire import http
from .service import SandboxService

__all__ = ["SandboxTransport"]


class SandboxTransport(http.BaseTransport):
    """A transport of the HTTP library in use (httpx2 or httpx, see :mod:`~storeframes.wire.http`) that hands each
    request to a :class:`SandboxService`.

    Injected faults act as they would on the wire: a timeout raises
    ``ReadTimeout``, a dropped connection ``RemoteProtocolError``, and a
    truncated body arrives cut half-way.
    """

    def __init__(self, service: SandboxService):
        self.service = service

    def handle_request(self, request: http.Request) -> http.Response:
        reply = self.service.handle(request.method, request.url.path, request.url.params.multi_items(), request.headers)
        if reply.fault == "timeout":
            raise http.ReadTimeout("sandbox: injected timeout", request=request)
        if reply.fault == "dropped":
            raise http.RemoteProtocolError("sandbox: server disconnected without sending a response", request=request)
        body = reply.body[: len(reply.body) // 2] if reply.fault == "truncated" else reply.body
        return http.Response(reply.status, headers=dict(reply.headers), content=body, request=request)
