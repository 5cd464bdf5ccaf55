"""Serve the sandbox in-process, as an httpx transport (no sockets, no threads)."""

from __future__ import annotations

import httpx

from .service import SandboxService

__all__ = ["SandboxTransport"]


class SandboxTransport(httpx.BaseTransport):
    """An httpx transport that hands each request to a :class:`SandboxService`.

    Injected faults act as they would on the wire: a timeout raises
    ``httpx.ReadTimeout``, a dropped connection ``httpx.RemoteProtocolError``, and a
    truncated body arrives cut half-way.
    """

    def __init__(self, service: SandboxService):
        self.service = service

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        reply = self.service.handle(request.method, request.url.path, request.url.params.multi_items(), request.headers)
        if reply.fault == "timeout":
            raise httpx.ReadTimeout("sandbox: injected timeout", request=request)
        if reply.fault == "dropped":
            raise httpx.RemoteProtocolError("sandbox: server disconnected without sending a response", request=request)
        body = reply.body[: len(reply.body) // 2] if reply.fault == "truncated" else reply.body
        return httpx.Response(reply.status, headers=dict(reply.headers), content=body, request=request)
