"""Reading a body: gzip and deflate decoded a piece at a time, within the cap.

The request path asks for the codings it decodes itself (:data:`ENCODINGS`) and streams
the body through :func:`_layers` of :class:`~storeframes.json_bodies.Inflate` (the cache reads
its kept answers with it too), so a compressed body never inflates past the
``max_body_bytes`` cap (:class:`_TooLarge`) before it is stopped. A body that
cannot be decoded, or one that stacks codings that were not asked for, is a :class:`_Fault`:
no complete answer within this attempt.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..json_bodies import Inflate as _Inflate

__all__ = ["ENCODINGS", "_Fault", "_Inflate", "_TooLarge", "_finish", "_layers", "_through"]
"""What the request path uses; the names with an underscore are its own, not the package's."""

ENCODINGS = "gzip, deflate"
"""The ``Accept-Encoding`` sent: the codings the request path decodes itself, a piece at a time."""

_MOST_CODINGS = 5
"""The most content codings one body may stack (``gzip, gzip, ...``), as urllib3 allows."""


class _Fault(Exception):
    """No complete answer within this attempt (the deadline, a body that cannot be decoded)."""


class _TooLarge(Exception):
    """The body of an answer of ``status`` passed the cap; ``announced`` is its Content-Length when that said so."""

    def __init__(self, status: int, announced: int | None = None):
        super().__init__(status, announced)
        self.status = status
        self.announced = announced


def _layers(coding: str | None) -> list[_Inflate]:
    """The decoders of a ``Content-Encoding``, the last applied first."""
    names = [c.strip().lower() for c in (coding or "").split(",")]
    names = [c for c in names if c and c != "identity"]
    if len(names) > _MOST_CODINGS:
        raise _Fault(f"the body stacks {len(names)} content codings ({coding}); at most {_MOST_CODINGS} are read")
    for name in names:
        if name not in ("gzip", "x-gzip", "deflate"):
            raise _Fault(f"the body's Content-Encoding {name!r} was not asked for (only {ENCODINGS})")
    return [_Inflate("deflate" if name == "deflate" else "gzip") for name in reversed(names)]


def _through(layers: list[_Inflate], start: int, data: bytes) -> Iterator[bytes]:
    if start == len(layers):
        yield data
        return
    for piece in layers[start].feed(data):
        yield from _through(layers, start + 1, piece)


def _finish(layers: list[_Inflate]) -> Iterator[bytes]:
    for i, layer in enumerate(layers):
        for piece in layer.flush():
            yield from _through(layers, i + 1, piece)
