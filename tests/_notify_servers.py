"""Loopback receivers of notifications: a JSON webhook (that can be told to fail) and an SMTP server
(aiosmtpd, with a password), as a team's Slack-like hook and mail server would take them; a webhook
that misbehaves (trickles, answers a huge body, redirects) and a mail server that never answers."""

from __future__ import annotations

import email
import email.policy
import http.server
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = ["HUGE", "Mailbox", "Rogue", "Webhook", "mailbox", "rogue_webhook", "silent_smtp", "webhook"]


class _Receiver:
    """What a loopback webhook received, as one text: each message's title and body."""

    received: list[dict[str, Any]]
    lock: threading.Lock

    def texts(self) -> str:
        with self.lock:
            return "\n".join(m["title"] + "\n" + m["message"] for m in self.received)


@dataclass
class Webhook(_Receiver):
    """A JSON webhook on loopback: ``received`` holds each message it accepted (apprise's JSON:
    ``title``, ``message``); ``failing`` answers 500 to that many requests first."""

    port: int = 0
    secret: str = "hook-secret-5521"
    """The part of its path that is a credential, as a Slack or Teams webhook's is."""
    received: list[dict[str, Any]] = field(default_factory=list)
    refused: int = 0
    failing: int = 0
    stalling: int = 0
    """Requests held without an answer until :attr:`released` is set (then dropped, never received)."""
    stalled: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"json://127.0.0.1:{self.port}/hook/{self.secret}"


@contextmanager
def webhook() -> Iterator[Webhook]:
    hook = Webhook()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            with hook.lock:
                stall = hook.stalling > 0
                hook.stalling -= stall
            if stall:
                hook.stalled.set()
                hook.released.wait(60)
                return
            with hook.lock:
                failing = hook.failing > 0
                if failing:
                    hook.failing -= 1
                    hook.refused += 1
                else:
                    hook.received.append(json.loads(body))
            self.send_response(500 if failing else 200)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    hook.port = server.server_port
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield hook
    finally:
        hook.released.set()
        server.shutdown()
        server.server_close()


@dataclass
class Mailbox:
    """An SMTP server on loopback that takes mail from ``user`` with ``password`` only."""

    port: int
    password: str
    messages: list[email.message.EmailMessage] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"mailto://user:{self.password}@127.0.0.1:{self.port}?to=team@example.test&from=tracker@example.test"

    def texts(self) -> str:
        parts = []
        for message in self.messages:
            body = message.get_body(preferencelist=("plain",))
            parts.append(str(message["subject"]) + "\n" + (body.get_content() if body is not None else ""))
        return "\n".join(parts)


@contextmanager
def mailbox(password: str = "mail-pass-7731") -> Iterator[Mailbox]:
    from aiosmtpd.controller import Controller
    from aiosmtpd.smtp import AuthResult, LoginPassword

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    box = Mailbox(port, password)

    class Handler:
        async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
            box.messages.append(email.message_from_bytes(envelope.content, policy=email.policy.default))  # type: ignore[arg-type]
            return "250 OK"

    def authenticate(server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> AuthResult:
        ok = isinstance(data, LoginPassword) and data.login == b"user" and data.password == password.encode()
        return AuthResult(success=ok)

    controller = Controller(
        Handler(), hostname="127.0.0.1", port=port, authenticator=authenticate, auth_require_tls=False
    )
    controller.start()
    try:
        yield box
    finally:
        controller.stop()


@dataclass
class Rogue(_Receiver):
    """A JSON webhook on loopback that misbehaves as :attr:`mode` says: ``"trickle"`` (200, its answer one
    byte a second for a minute), ``"huge"`` (500 with a 400 MB answer, made as it is sent, never held),
    ``"redirect"`` (307 to :attr:`location`) or ``"ok"`` (200, the message taken)."""

    mode: str
    location: str = ""
    port: int = 0
    received: list[dict[str, Any]] = field(default_factory=list)
    requests: int = 0
    sent_bytes: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"json://127.0.0.1:{self.port}/hook/rogue-secret-3390"


HUGE = 400 * 1024 * 1024
"""The size of the ``huge`` rogue's answer."""


@contextmanager
def rogue_webhook(mode: str, *, location: str = "") -> Iterator[Rogue]:
    hook = Rogue(mode, location)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            with hook.lock:
                hook.requests += 1
                mode = hook.mode
            try:
                if mode == "trickle":
                    self._answer(200, 60, (b"." for _ in range(60)), pause=1.0)
                elif mode == "huge":
                    chunk = b"x" * (1024 * 1024)
                    self._answer(500, HUGE, (chunk for _ in range(HUGE // len(chunk))))
                elif mode == "redirect":
                    self.send_response(307)  # the method and body kept: the message would arrive
                    self.send_header("location", hook.location)
                    self.send_header("content-length", "0")
                    self.end_headers()
                else:
                    with hook.lock:
                        hook.received.append(json.loads(body))
                    self._answer(200, 0, iter(()))
            except OSError:  # the client went away: what a bounded client does
                pass

        def _answer(self, status: int, size: int, chunks: Iterator[bytes], *, pause: float = 0.0) -> None:
            self.send_response(status)
            self.send_header("content-length", str(size))
            self.end_headers()
            self.wfile.flush()
            for chunk in chunks:
                self.wfile.write(chunk)
                self.wfile.flush()
                with hook.lock:
                    hook.sent_bytes += len(chunk)
                if pause:
                    time.sleep(pause)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    hook.port = server.server_port
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield hook
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def silent_smtp() -> Iterator[int]:
    """A port on loopback that takes connections and never says a word (a mail server that hangs)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join(5)
        for connection in held:
            connection.close()
        listener.close()
