"""Reading an answer's body: JSON bytes as the service sent them, into what frames can hold.

The body is parsed once, with orjson (several times quicker than the standard library on
the large ranked-id lists of a search history). The few bodies orjson refuses to read as
strict JSON (``NaN`` or ``Infinity``, a number too large for a float, a lone
surrogate, bytes that are not UTF-8, nesting deeper than 1,024 levels) are read again by
the standard library's decoder, which gives them the meaning below. The cache keeps the
bytes as they arrived and reads them back through :func:`parse_answer` too, so a cached
answer is the same Python object as a fresh one.

Decompressing is bounded here too, for the request path and the cache alike: :class:`Inflate`
decodes gzip or deflate a piece at a time, and :func:`inflate` reads a whole compressed
value (gzip or zstd) in pieces, stopping with :class:`TooLarge` as soon as it passes its cap,
so a few kilobytes that would decompress to gigabytes never take more memory than the cap.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Iterator
from typing import Any, Literal

import orjson

__all__ = ["DEFAULT_MAX_BODY_BYTES", "PIECE", "Inflate", "TooLarge", "inflate", "parse_answer"]

DEFAULT_MAX_BODY_BYTES = 256 * 1024 * 1024
"""The largest body accepted, in decoded bytes (``max_body_bytes=``): 256 MB, far above any answer."""

PIECE = 64 * 1024
"""The most bytes one step of decoding produces, so a compressed body never inflates past its cap."""

_ZSTD_STEP = 1024 * 1024
"""The most bytes one step of :func:`inflate` reads from a zstd stream."""


class TooLarge(ValueError):
    """Compressed bytes that decompress to more than ``limit`` bytes (decompressing stopped there)."""

    def __init__(self, limit: int):
        super().__init__(f"it decompresses to more than {limit:,} bytes")
        self.limit = limit


class Inflate:
    """One gzip or deflate layer, producing at most :data:`PIECE` bytes a step.

    Several gzip members follow one another; garbage after a whole member is ignored (as
    urllib3 does); deflate is read zlib-wrapped first, raw when that fails (as httpx does).
    Raises ``zlib.error`` for bytes that cannot be decoded.
    """

    def __init__(self, coding: Literal["gzip", "deflate"]):
        self.coding = coding
        self.members = 0
        self.raw = False
        self._start()

    def _start(self) -> None:
        wbits = zlib.MAX_WBITS | 16 if self.coding == "gzip" else -zlib.MAX_WBITS if self.raw else zlib.MAX_WBITS
        self.inflater = zlib.decompressobj(wbits)
        self.fresh = True

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The content of ``data`` (the next compressed bytes), in pieces of at most :data:`PIECE` bytes."""
        while True:
            try:
                out = self.inflater.decompress(data, PIECE)
            except zlib.error:
                if self.coding == "deflate" and self.fresh and not self.raw:
                    self.raw = True
                    self._start()
                    continue
                if self.members:  # garbage after a whole gzip member: ignored, as urllib3 does
                    return
                raise
            self.fresh = False
            if out:
                yield out
            if self.inflater.eof:
                self.members += 1
                data = self.inflater.unused_data
                if not data or self.coding != "gzip":
                    return
                self._start()  # another gzip member follows
                continue
            data = self.inflater.unconsumed_tail
            if not data and len(out) < PIECE:
                return

    def flush(self) -> Iterator[bytes]:
        """What is left once every compressed byte was fed."""
        yield from self.feed(b"")
        rest = self.inflater.flush()
        if rest:
            yield rest


def _zstd_pieces(data: bytes) -> Iterator[bytes]:
    import pyarrow as pa

    with pa.CompressedInputStream(pa.BufferReader(data), "zstd") as stream:
        while piece := stream.read(_ZSTD_STEP):
            yield piece


def inflate(data: bytes, coding: Literal["gzip", "zstd"], limit: int) -> bytes:
    """The content of ``data`` compressed with ``coding``, decompressed a piece at a time; :class:`TooLarge` as
    soon as it passes ``limit`` bytes, so memory never holds much more than ``limit``.

    Damaged bytes raise what the decoder raises (``zlib.error``, ``OSError``, pyarrow's errors).

    >>> import gzip
    >>> inflate(gzip.compress(b"[1, 2]"), "gzip", limit=10)
    b'[1, 2]'
    >>> inflate(gzip.compress(bytes(100)), "gzip", limit=10)
    Traceback (most recent call last):
    ...
    storeframes.json_bodies.TooLarge: it decompresses to more than 10 bytes
    """
    out = bytearray()
    if coding == "zstd":
        pieces: Iterator[bytes] = _zstd_pieces(data)
    else:
        layer = Inflate("gzip")
        pieces = (piece for part in (layer.feed(data), layer.flush()) for piece in part)
    for piece in pieces:
        out += piece
        if len(out) > limit:
            raise TooLarge(limit)
    return bytes(out)


_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")
"""A lone surrogate may be in a body only where this matches: an escape from ``\\ud800`` to
``\\udfff``, or one encoded as UTF-8 bytes (which json reads with ``surrogatepass``)."""

_LONE = re.compile("[\ud800-\udfff]")


def _finite(text: str) -> float | None:
    value = float(text)
    return value if value - value == 0.0 else None  # inf - inf and nan - nan are nan


def _no_constant(name: str) -> None:
    return None  # NaN, Infinity, -Infinity


_DECODER = json.JSONDecoder(parse_float=_finite, parse_constant=_no_constant)


def _mend(body: Any) -> Any:
    """``body`` with every lone surrogate of its texts (keys too) replaced by U+FFFD, in place, without recursion."""
    if isinstance(body, str):
        return _LONE.sub("\ufffd", body)
    todo: list[Any] = [body]
    while todo:
        node = todo.pop()
        if isinstance(node, list):
            for i, item in enumerate(node):
                if isinstance(item, str):
                    if _LONE.search(item):
                        node[i] = _LONE.sub("\ufffd", item)
                elif isinstance(item, (list, dict)):
                    todo.append(item)
        elif isinstance(node, dict):
            if any(_LONE.search(key) for key in node):
                mended = {_LONE.sub("\ufffd", key): value for key, value in node.items()}
                node.clear()
                node.update(mended)
            for key, item in node.items():
                if isinstance(item, str):
                    if _LONE.search(item):
                        node[key] = _LONE.sub("\ufffd", item)
                elif isinstance(item, (list, dict)):
                    todo.append(item)
    return body


def _parse_slowly(data: bytes) -> Any:
    """What :func:`parse_answer` gives, with the standard library's decoder (for what orjson refuses)."""
    try:  # as json.loads reads bytes, with one decoder made once
        text = data.decode(json.detect_encoding(data), "surrogatepass")
    except UnicodeDecodeError:
        text = data.decode("utf-8", "replace")
    body = _DECODER.decode(text)
    if (b"\\u" in data or b"\xed" in data) and _SURROGATE.search(data):
        body = _mend(body)
    return body


def parse_answer(data: bytes) -> Any:
    """The JSON of a body, as frames can hold it: non-finite numbers null, lone surrogates U+FFFD.

    ``NaN``, ``Infinity``, ``-Infinity`` and numbers too large for a float (``1e999``) are
    read as None. A lone surrogate (``"\\ud83d"``, half an emoji cut at a length limit) is
    read as U+FFFD, as are bytes that are not UTF-8; proper surrogate pairs are one
    character. An integer beyond 64 bits is read as a float. Raises ``json.JSONDecodeError`` for what is not
    JSON, ``RecursionError`` for a body nested deeper than Python reads, and ``ValueError``
    for a number it cannot read (an integer of more than 4,300 digits).

    >>> parse_answer(b'{"a": NaN, "b": 1e999, "c": "\\\\ud83d!"}')
    {'a': None, 'b': None, 'c': '\\ufffd!'}
    """
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return _parse_slowly(data)  # what a body beyond strict JSON may still mean
