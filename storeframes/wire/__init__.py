"""The request path: one request from start to end, and the only package that speaks HTTP.

:meth:`Wire.send` takes an endpoint of the catalog and canonical parameters and returns a
checked :class:`~storeframes.Response`, or raises the error of the
:mod:`~storeframes.errors` hierarchy that says what went wrong. On the way it:

- adds the token in the ``x-service-key`` header through an auth flow of the HTTP library that
  masks it again (``***``) once the answer's headers arrived, so no frame of a traceback,
  no ``request.headers`` of a response and no chained exception shows it: the errors it
  raises carry no ``__context__`` (the library's exception, whose frames hold the request as
  it was sent, is dropped);
- never follows a redirect, whatever the ``http_client`` says: a 3xx is a
  :class:`~storeframes.RedirectError` naming its target (user info and query masked);
- holds a slot of the rate limiter from sending each attempt until its answer's headers arrive;
- streams the body, decoding gzip and deflate itself a piece at a time, and stops at the
  ``max_body_bytes`` cap (:class:`~storeframes.ResponseTooLargeError`, never retried) and
  at the per-attempt ``deadline`` (a :class:`~storeframes.TransportError`, retried);
- retries 429, 5xx, timeouts, the deadline, dropped connections, bodies cut short and
  bodies that cannot be decoded, with exponential backoff and full jitter, honouring
  ``Retry-After`` on 429 and 503 (``0`` is no hint; a hint longer than the client waits
  fails at once);
- maps statuses and the error codes of the service to exceptions;
- reads the JSON with non-finite numbers (``NaN``, ``Infinity``, ``1e999``) as null and
  lone surrogates (half an emoji) as U+FFFD, so every text can be written as UTF-8;
- checks the envelope (``result`` and ``metadata.request`` with a whole ``cost`` >= 0 and
  an integer ``status``).

Every attempt, failed ones included, is reported to the caller's hook as a
:class:`~storeframes.answers.Attempt` with the cost its answer carried (or
``cost_unknown`` when that cost could not be read); the request path never counts
credits itself.

Where it lives: :mod:`~storeframes.wire.http` is the one module that speaks to the HTTP library
(httpx2 where it is installed, else httpx); :mod:`~storeframes.wire.request` holds :class:`Wire`, the one
module that sends; :mod:`~storeframes.wire.safety` the token and the addresses (:class:`~storeframes.wire.safety.Secret`,
:func:`clean_token`, :func:`check_base_url`, :func:`shown_url`);
:mod:`~storeframes.wire.body` the decoding of a body within the cap;
:mod:`~storeframes.wire.envelope` what an answer says (its credits, its error, its
``Retry-After``); and :mod:`~storeframes.wire.faults` what became of an attempt that got no
answer (the connection refused, the host name not resolved, the TLS handshake failed, a timeout).
"""

from __future__ import annotations

from ..json_bodies import parse_answer
from .body import ENCODINGS as ENCODINGS
from .envelope import _retry_after as _retry_after
from .request import DEFAULT_DEADLINE, DEFAULT_MAX_BODY_BYTES, Wire
from .request import Report as Report
from .safety import MASK as MASK
from .safety import TOKEN_HEADER, check_base_url, clean_token, shown_url
from .safety import Secret as Secret

__all__ = [
    "DEFAULT_DEADLINE",
    "DEFAULT_MAX_BODY_BYTES",
    "TOKEN_HEADER",
    "Wire",
    "check_base_url",
    "clean_token",
    "parse_answer",
    "shown_url",
]
