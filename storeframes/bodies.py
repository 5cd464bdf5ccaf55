"""Reading an answer's body: JSON bytes as the service sent them, into what frames can hold.

The body is parsed once, with orjson (several times quicker than the standard library on
the large ranked-id lists of a search history). The few bodies orjson refuses to read as
strict JSON (``NaN`` or ``Infinity``, a number too large for a float, a lone
surrogate, bytes that are not UTF-8, nesting deeper than 1,024 levels) are read again by
the standard library's decoder, which gives them the meaning below. The cache keeps the
bytes as they arrived and reads them back through :func:`parse_answer` too, so a cached
answer is the same Python object as a fresh one.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

__all__ = ["parse_answer"]

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
