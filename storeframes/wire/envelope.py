"""What an answer says: its request metadata and credits, the error it is, and its Retry-After hint.

The request path reads a body with :func:`_read_body` (a history in its usual form straight into
columns), its ``metadata.request`` with :func:`_request_meta` and its
credits with :func:`_credits`; a failed answer becomes the exception of
:mod:`~storeframes.errors` that :func:`_error_class` picks from its status and the service's
error code (:func:`_error_details` reads them in any of the forms seen), with the wait that
:func:`_retry_after` reads from its ``Retry-After`` header.
"""

from __future__ import annotations

import email.utils
import json
import math
import re
import sys
import time
from collections.abc import Mapping
from typing import Any, TypeGuard

from ..answers import UNPARSED
from ..errors import (
    ApiError,
    AppNotAvailableError,
    AuthenticationError,
    EstimatesNotInPlanError,
    ForbiddenError,
    NotEnoughCreditsError,
    RateLimitError,
    RedirectError,
    ServerError,
    ServiceValidationError,
)
from ..flatteners.columnar import HistoryColumns, read_history_body
from ..json_bodies import parse_answer

__all__ = [
    "_MISSING",
    "_credits",
    "_error_class",
    "_error_details",
    "_number",
    "_read_body",
    "_request_meta",
    "_retry_after",
    "_whole",
]
"""What the request path uses: its own helpers, not the package's (``storeframes.wire`` still offers
``_retry_after`` to earlier imports)."""

_DELAY = re.compile(r"^\s*\d+(\.\d+)?\s*$")


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header; None when absent, unreadable, past or 0 (no hint).

    As urllib3 reads it: a number of seconds, or an HTTP date in any of its three forms
    (``Sun, 06 Nov 1994 08:49:37 GMT``, ``Sunday, 06-Nov-94 08:49:37 GMT`` and asctime's
    ``Sun Nov  6 08:49:37 1994``); a date without a zone is UTC.
    """
    if not value:
        return None
    if _DELAY.match(value):
        seconds = float(value)
    else:
        try:
            parsed = email.utils.parsedate_tz(value)
            if parsed is None:
                return None
            if parsed[9] is None:  # asctime names no zone: HTTP dates are UTC
                parsed = (*parsed[:9], 0)
            seconds = email.utils.mktime_tz(parsed) - time.time()
        except (TypeError, ValueError, OverflowError, IndexError):
            return None
    return seconds if 0 < seconds < math.inf else None


_ERRORS_BY_CODE: Mapping[str, type[ApiError]] = {
    "UnknownTokenError": AuthenticationError,
    "NotEnoughCreditsError": NotEnoughCreditsError,
    "EstimatesNotInPlanError": EstimatesNotInPlanError,
    "AppNotAvailableError": AppNotAvailableError,
}


def _error_class(status: int, code: str | None) -> type[ApiError]:
    if code is not None and code in _ERRORS_BY_CODE:
        return _ERRORS_BY_CODE[code]
    if 300 <= status < 400:
        return RedirectError
    if status == 401:
        return AuthenticationError
    if status == 403:
        return ForbiddenError
    if status == 422:
        return ServiceValidationError
    if status == 429:
        return RateLimitError
    if status >= 500:
        return ServerError
    return ApiError


def _error_details(body: Any) -> tuple[str | None, str | None]:
    """The (code, message) of an error body, in any of the forms seen."""
    if not isinstance(body, dict):
        return None, None
    candidates = [body.get("error"), body]
    meta = body.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("response"), dict):
        candidates.insert(1, meta["response"].get("error", meta["response"]))
    for cand in candidates:
        if isinstance(cand, dict) and (cand.get("code") or cand.get("message")):
            code = cand.get("code")
            message = cand.get("message")
            return (str(code) if code else None, str(message) if message else None)
        if isinstance(cand, str):
            return None, cand
    return None, None


def _whole(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _credits(value: Any) -> int | None:
    """A number of credits: a whole number >= 0 (``11.0`` is 11), else None."""
    if _whole(value):
        return value if value >= 0 else None
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    return None


_MISSING = object()


def _request_meta(body: Any) -> Mapping[str, Any] | None:
    meta = body.get("metadata") if isinstance(body, dict) else None
    request = meta.get("request") if isinstance(meta, dict) else None
    return request if isinstance(request, dict) else None


def _read_body(endpoint: str, http_status: int, data: bytes) -> tuple[Any, str | None, HistoryColumns | None]:
    """A body read: its JSON (None when empty), why it could not be read (``incomplete`` where it is not JSON or
    cut short, on a 200), and its result read into columns where it is a history in its usual form (the
    JSON's ``result`` is then :data:`~storeframes.answers.UNPARSED`)."""
    columns = read_history_body(data) if endpoint == "search_history" and http_status == 200 else None
    if columns is not None:
        return {"result": UNPARSED, **columns.rest}, None, columns
    if not data:
        return None, None, None
    try:
        return parse_answer(data), None, None
    except json.JSONDecodeError:
        return None, "incomplete" if http_status == 200 else None, None
    except RecursionError:
        return None, f"the body is nested deeper than Python reads (about {sys.getrecursionlimit():,} levels)", None
    except ValueError as exc:
        return None, f"a number in the body cannot be read ({str(exc)[:120]})", None
