"""What this version of storeframes makes of one recorded exchange: no I/O, the same for a live run and a saved one.

An :class:`Exchange` is one request and the answer that came (status, headers, body bytes),
as the kit recorded it. :func:`read` compares its body with the forms storeframes knows
(:mod:`.forms`), reads it as the request path does (the envelope's costs; an error's code,
message and the exception storeframes raises for it) and hands a successful answer to every
frame function of its endpoint, counting their rows and catching what they warn or raise.
The result is a :class:`Reading`; ``storeframes conformance --against`` reads a saved report's
exchanges again with it, so what a newer storeframes learned shows at once.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .. import catalog
from ..answers import Response
from ..errors import StoreframesError
from ..fetch.pipeline import FRAMES
from ..flatteners import ResultCapWarning
from ..json_bodies import parse_answer
from ..wire.envelope import _credits, _error_class, _error_details, _request_meta
from .forms import ENVELOPE, error_form, store_of
from .shapes import Comparison, Context, Difference, compare

__all__ = ["LIMIT_HEADERS", "Exchange", "Reading", "read", "response_of"]

LIMIT_HEADERS = re.compile(r"rate|limit|retry|quota|credit|remaining|reset|throttl", re.IGNORECASE)
"""Response headers that say something about rate limits or credits."""


@dataclass(frozen=True)
class Exchange:
    """One request as sent (endpoint, query parameters) and the answer that came."""

    endpoint: str
    params: Mapping[str, str]
    status: int
    headers: Mapping[str, str] = field(repr=False)
    body: bytes = field(repr=False)

    @property
    def context(self) -> Context:
        metrics = self.params.get("metrics", "")
        return Context(
            store_of(self.params.get("device", "iphone")),
            frozenset(m for m in metrics.split(",") if m),
            self.params.get("keyword"),
        )


@dataclass
class Reading:
    """What storeframes makes of one exchange.

    ``forms``: the form met at each point of the dialect (``{"size": ["number"]}``);
    ``differences``: how the answer differs from the forms storeframes knows (and what the
    frame functions warned or raised); ``frames``: rows per frame function of a successful
    answer; ``error``: the exception storeframes raises for an error answer, with its
    ``code`` and ``message``; ``cost``, ``max_credit_cost``: what the envelope says;
    ``estimate``: the catalog's estimate of the request; ``limits``: the headers about rate
    limits; ``notes``: what is worth saying but is no difference (results cut at a cap).
    """

    status: int
    forms: dict[str, list[Any]] = field(default_factory=dict)
    differences: list[Difference] = field(default_factory=list)
    frames: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    code: str | None = None
    message: str | None = None
    error_form: str | None = None
    cost: int | None = None
    max_credit_cost: int | None = None
    estimate: int | None = None
    limits: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _status(body: Any, http_status: int) -> int:
    meta = _request_meta(body)
    given = meta.get("status") if meta is not None else None
    if http_status == 200 and type(given) is int:
        return given
    return http_status


def _frames_of(endpoint: str) -> list[Any]:
    return [s for s in FRAMES.values() if s.endpoint == endpoint or (s.switch and s.switch[1] == endpoint)]


_DAY = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


def _general(exchange: Exchange, text: str) -> str:
    """``text`` with the request's app ids, keyword and days named by their kind, as the forms' paths name them,
    so that the same difference reads the same for another app or on another day."""
    for app in sorted(filter(None, exchange.params.get("apps", "").split(",")), key=len, reverse=True):
        text = text.replace(app, "<app_id>")
    keyword = exchange.params.get("keyword")
    if keyword:
        text = text.replace(keyword, "<keyword>")
    return _DAY.sub("<date>", text)


def response_of(exchange: Exchange, body: dict[str, Any]) -> Response:
    """A successful exchange as the frame functions take an answer: its parameters, result, echo and credits."""
    meta = _request_meta(body) or {}
    echo = meta.get("params")
    return Response(
        endpoint=exchange.endpoint,
        params=dict(exchange.params),
        result=body.get("result"),
        cost=_credits(meta.get("cost")) or 0,
        max_credit_cost=_credits(meta.get("max_credit_cost")) or 0,
        status=200,
        fetched_at=datetime.now(UTC),
        echo=echo if isinstance(echo, dict) else {},
        body=exchange.body,
    )


def _read_frames(exchange: Exchange, body: dict[str, Any], reading: Reading, out: Comparison) -> None:
    """Hand the answer to every frame function of its endpoint, as the frame functions would."""
    response = response_of(exchange, body)
    said: dict[str, list[str]] = {}
    for spec in _frames_of(exchange.endpoint):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                frame = spec.build_each([response])[0]
            except StoreframesError as exc:
                where = "$." + _general(exchange, getattr(exc, "path", "") or "result")
                out.add("frame", where, f"{spec.name} cannot read it", example=_general(exchange, str(exc))[:200])
                continue
        reading.frames[spec.name] = frame.height
        for warning in caught:
            text = str(warning.message)
            if issubclass(warning.category, ResultCapWarning):
                if text not in reading.notes:
                    reading.notes.append(text)
            else:
                said.setdefault(f"{warning.category.__name__}: {_general(exchange, text)}", []).append(spec.name)
    for text, names in said.items():
        out.add("frame", "$.result", f"{', '.join(names)} {'warns' if len(names) == 1 else 'warn'}: {text}")


def _apps_answered(exchange: Exchange, body: Any, out: Comparison) -> None:
    """An answer keyed by app id holds the apps asked for, each once, and no other."""
    asked = [a for a in exchange.params.get("apps", "").split(",") if a]
    result = body.get("result") if type(body) is dict else None
    if not asked or type(result) is not dict:
        return
    for app in result.keys() - set(asked):
        out.add("unknown", "$.result.<app_id>", "an app that was not asked for", example=repr(app)[:60])
    for app in set(asked) - result.keys():
        out.add("missing", "$.result.<app_id>", "an app asked for and not answered", example=repr(app)[:60])


def read(exchange: Exchange) -> Reading:
    """What this version of storeframes makes of ``exchange`` (see the module's docstring)."""
    limits = {k.lower(): v for k, v in exchange.headers.items() if LIMIT_HEADERS.search(k)}
    ep = catalog.ENDPOINTS[exchange.endpoint]
    reading = Reading(exchange.status, limits=limits)
    try:
        reading.estimate = ep.estimate(dict(exchange.params))
    except (StoreframesError, ValueError, KeyError):  # parameters the catalog refuses (a probe of the service's own)
        reading.estimate = None
    out = Comparison()
    try:
        body: Any = parse_answer(exchange.body) if exchange.body else None
    except ValueError as exc:
        out.add("envelope", "$", f"the body is not JSON storeframes reads ({str(exc)[:80]}): {exchange.body[:60]!r}")
        reading.differences = out.differences
        return reading
    status = reading.status = _status(body, exchange.status)
    meta = _request_meta(body)
    if meta is not None:
        reading.cost = _credits(meta.get("cost"))
        reading.max_credit_cost = _credits(meta.get("max_credit_cost"))
    if status == 200:
        found = compare(body, ENVELOPE[exchange.endpoint], exchange.context, "$")
        out.merge(found)
        _apps_answered(exchange, body, out)
        if type(body) is dict:
            _read_frames(exchange, body, reading, out)
        if reading.cost is None:
            out.add(
                "envelope", "$.metadata.request.cost", "no whole number of credits >= 0: storeframes refuses the answer"
            )
    else:
        where, node = error_form(body)
        reading.error_form = where
        code, message = _error_details(body)
        reading.code, reading.message = code, message
        reading.error = _error_class(status, code).__name__
        if where is None:
            out.add("form", "$", "an error body in none of the known forms: storeframes finds no code or message in it")
        else:
            out.merge(compare(body, node, exchange.context, "$"))
            out.form("error_body", where)
    reading.forms = {point: sorted(names, key=str) for point, names in out.forms.items()}
    reading.differences = out.differences
    return reading
