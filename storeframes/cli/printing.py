"""What the commands print of a cache: sizes in decimal units, and text from the cache's files
(request parameters, names, locations) with control characters escaped, so that a cache cannot
drive the terminal."""

from __future__ import annotations

import json
from collections.abc import Mapping

__all__ = ["pairs", "printable", "size"]


def size(count: int) -> str:
    """A number of bytes in decimal units: ``512 B``, ``74.6 kB``, ``1.2 MB``."""
    if count < 1000:
        return f"{count} B"
    value = float(count)
    for unit in ("kB", "MB", "GB", "TB"):
        value /= 1000
        if round(value, 1) < 1000 or unit == "TB":
            break
    return f"{value:.1f} {unit}"


def printable(text: str) -> str:
    """``text`` safe to print on a terminal: every character that is not printable (control
    characters such as ESC, format characters such as a right-to-left override, lone
    surrogates) is shown as its escape (``\\x1b``, ``\\u202e``); letters of every script stay
    as they are (``café``, ``写真``)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else c.encode("unicode_escape").decode("ascii") for c in text)


def pairs(params: Mapping[str, str]) -> str:
    """Request parameters as ``key=value`` pairs; values with spaces or quotes are quoted; control
    characters are escaped (:func:`printable`)."""

    def value(text: str) -> str:
        plain = text and not any(c.isspace() or c in "\"'" for c in text)
        return text if plain else json.dumps(text, ensure_ascii=False)

    return " ".join(printable(f"{key}={value(str(text))}") for key, text in params.items())
