"""Delivering one message to one address, bounded: a total deadline, a cap on the answer read, no redirect.

A JSON webhook (``json://``, ``jsons://``: any server a spec names) is sent by storeframes itself, with
the HTTP library in use (httpx2, else httpx: :mod:`storeframes.wire.http`), as apprise would send it (its
address read by apprise: headers, method, payload fields, basic auth): the whole delivery (connecting,
sending, the answer's head and body) ends by the deadline, at most :data:`ANSWER_CAP` bytes of the answer
are read (the rest never is), and an answer that redirects is a failure, never followed (the message
would reach an address the spec does not name). Every other address
(Slack, Teams, Discord, e-mail ...) is sent by apprise, its HTTP redirects not followed where apprise
allows it, under the same deadline: apprise works in a thread of its own, and a delivery not finished by
the deadline is a failure (its events go at the next run). Nothing said of a failure shows the address.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from .._version import install_hint
from ..errors import ConfigurationError
from .rules import quietly

if TYPE_CHECKING:  # the HTTP library is imported when a webhook is first told, not with the package
    from ..wire import http

__all__ = ["ANSWER_CAP", "deliver"]

ANSWER_CAP = 64 * 1024
"""The bytes of a webhook's answer read at most; the rest is not read (nothing in it is used)."""

_WEBHOOKS = ("json", "jsons")


def deliver(url: str, title: str, body: str, *, timeout: float) -> str | None:
    """Send ``title`` and ``body`` to the apprise address ``url`` within ``timeout`` seconds in all: None when
    it was taken, else the failure in words (without the address).

    >>> deliver("json://127.0.0.1:9/hook", "title", "text", timeout=5)  # port 9: nothing listens
    'could not reach it (ConnectError)'
    """
    apprise = _apprise()
    with quietly():
        found = apprise.Apprise.instantiate(url, asset=_asset(apprise))
    if found is None:
        return "apprise does not know the address"
    if url.split("://", 1)[0].lower() in _WEBHOOKS:
        return _in_a_loop(_webhook(found, title, body, timeout))
    return _through_apprise(apprise, found, title, body, timeout)


def _apprise() -> Any:
    try:
        import apprise
    except ImportError:
        raise ConfigurationError(f"notifications need apprise: {install_hint('alerts')}") from None
    return apprise


def _in_a_loop(work: Coroutine[Any, Any, str | None]) -> str | None:
    """Run ``work`` in an event loop of its own (in a thread of its own when this one already runs a loop)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _run(work)
    with ThreadPoolExecutor(1, thread_name_prefix="storeframes-notify") as pool:
        return pool.submit(_run, work).result()


def _run(work: Coroutine[Any, Any, str | None]) -> str | None:
    """``work`` run to its end in a new loop, closed without waiting for its helper threads (a name lookup
    still under way past the deadline is left to end on its own: ``asyncio.run`` would wait for it)."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(work)
    finally:
        with contextlib.suppress(Exception):
            loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


class _ThisThread(logging.Filter):
    """Keeps one thread's log lines out: the HTTP library's name the webhook's address, whose path may be its
    secret."""

    def __init__(self) -> None:
        super().__init__()
        self.thread = threading.get_ident()

    def filter(self, record: logging.LogRecord) -> bool:
        return record.thread != self.thread


async def _webhook(hook: Any, title: str, body: str, timeout: float) -> str | None:
    """Send apprise's JSON message to the webhook ``hook`` (apprise's reading of its address), the HTTP
    libraries' log lines of this thread kept out of the log meanwhile."""
    from ..wire.http import LOGGERS  # the lines that name a webhook's host, port or path (each logger's own)

    quiet = _ThisThread()
    for name in LOGGERS:
        logging.getLogger(name).addFilter(quiet)
    try:
        return await _post(hook, title, body, timeout)
    finally:
        for name in LOGGERS:
            logging.getLogger(name).removeFilter(quiet)


async def _post(hook: Any, title: str, body: str, timeout: float) -> str | None:
    from ..wire import http

    payload: dict[str, Any] = {
        "version": getattr(hook, "json_version", "1.0"),
        "title": title,
        "message": body,
        "attachments": [],
        "type": "info",
    }
    for key, value in dict(getattr(hook, "payload_extras", {}) or {}).items():
        if key in payload and not value:
            del payload[key]
        elif key in payload:
            payload[value] = payload.pop(key)
        else:
            payload[key] = value
    headers = {"User-Agent": str(getattr(hook, "app_id", "Apprise")), "Content-Type": "application/json"}
    headers.update(dict(getattr(hook, "headers", {}) or {}))
    port = f":{hook.port}" if isinstance(hook.port, int) else ""
    target = f"{'https' if hook.secure else 'http'}://{hook.host}{port}{getattr(hook, 'fullpath', '') or ''}"
    auth = (str(hook.user), str(hook.password or "")) if getattr(hook, "user", None) else None
    try:
        async with asyncio.timeout(timeout):
            async with http.AsyncClient(
                follow_redirects=False, verify=bool(getattr(hook, "verify_certificate", True)), timeout=timeout
            ) as client:
                request = client.build_request(
                    str(getattr(hook, "method", "POST") or "POST"),
                    target,
                    content=json.dumps(payload).encode(),
                    params=dict(getattr(hook, "params", {}) or {}),
                    headers=headers,
                )
                answer = await client.send(request, auth=auth, stream=True)
                try:
                    read = 0
                    async for chunk in answer.aiter_raw():
                        read += len(chunk)
                        if read >= ANSWER_CAP:
                            break
                finally:
                    await answer.aclose()
    except (TimeoutError, http.TimeoutException):
        return f"no answer within {timeout:g} s"
    except (http.HTTPError, OSError, ValueError) as exc:  # its words may name the address: only its kind
        return f"could not reach it ({type(exc).__name__})"
    if answer.is_redirect or 300 <= answer.status_code < 400:
        return f"redirected to {_host(request.url, answer.headers.get('location'))} — not followed"
    if not answer.is_success:
        return f"it answered HTTP {answer.status_code}"
    return None


def _host(base: http.URL, location: str | None) -> str:
    """The host a redirect names (its path and query may hold a secret: never shown)."""
    from ..wire import http

    try:
        host = base.join(location).host if location else ""
    except (http.InvalidURL, ValueError, TypeError):
        host = ""
    return host if host and host.isprintable() and len(host) <= 253 else "an address it did not say well"


SOCKET_GRACE = 1.0
"""Seconds past a delivery's timeout that apprise's sockets wait: the thread ends that long after the wait gave up."""


def _through_apprise(apprise: Any, found: Any, title: str, body: str, timeout: float) -> str | None:
    """Send through apprise's own plugin, in a thread, waiting ``timeout`` seconds at most. Apprise's log lines
    are kept from the log until the thread ends (it may outlive the wait, bounded by its own socket timeouts,
    set :data:`SOCKET_GRACE` seconds past ``timeout``: so a silent server is always said by the wait, as "no
    answer within ``timeout`` s", never by whichever of the two timed out first)."""
    if hasattr(found, "redirects"):
        found.redirects = False
    for name in ("socket_connect_timeout", "socket_read_timeout"):
        if isinstance(getattr(found, name, None), int | float):
            setattr(found, name, min(float(getattr(found, name)), timeout + SOCKET_GRACE))
    outcome: dict[str, Any] = {}
    finished = threading.Event()

    def work() -> None:
        with quietly() as held:
            try:
                sender = apprise.Apprise(asset=_asset(apprise))
                outcome["sent"] = bool(sender.add(found)) and bool(
                    sender.notify(title=title, body=body, body_format=apprise.NotifyFormat.TEXT)
                )
            except Exception as exc:  # a plugin's own failure is this delivery's, said by its kind only
                outcome["sent"], outcome["why"] = False, f"apprise failed ({type(exc).__name__})"
            outcome["complaints"] = list(held.complaints)
        finished.set()

    threading.Thread(target=work, name="storeframes-notify", daemon=True).start()
    if not finished.wait(timeout):
        return f"no answer within {timeout:g} s"
    if outcome.get("sent"):
        return None
    return outcome.get("why") or "; ".join(dict.fromkeys(outcome.get("complaints", []))) or "it was not sent"


def _asset(apprise: Any) -> Any:
    """Apprise's settings: HTTP redirects not followed, where this apprise allows saying so."""
    try:
        return apprise.AppriseAsset(http_redirects=False)
    except (AttributeError, TypeError):
        return apprise.AppriseAsset()
