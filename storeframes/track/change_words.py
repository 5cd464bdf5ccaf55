"""What a listing change changed, in a few words: the screenshots added and removed, a text's words, a price.

A ``listing_change`` event holds the raw values before and after (its ``before`` and ``after``): a
screenshots list as JSON (the images' addresses in order), a title or a description as its text, a price
as the store's text (``""`` for a free app), an icon's address. :func:`describe_change` says what changed
between them for a person, in one short line: the digest's tables (HTML and Markdown), ``storeframes
track events`` and the tracking notebook's events table all say it with these words.

>>> describe_change("price", "2.99", "", currency="usd")
'$2.99 → Free'
"""

from __future__ import annotations

import difflib
import html
import json
import re

from ..analysis import price_text
from .wording import describe_privacy

__all__ = ["CHANGE_CHARS", "describe_change", "image_name"]

CHANGE_CHARS = 200
"""The most characters of a described change (cut at a word, never inside one)."""

_NAMED = 4
"""The most screenshots named by their file (more are counted only)."""
_HUNKS = 3
"""The most places of a text's change quoted (more are counted)."""
_QUOTED = 10
"""The most words of one quoted side of a text's change (a longer one keeps its first and last words)."""
_CONTEXT = 3
"""The unchanged words shown before and after a change."""

_TEXTS = frozenset(
    {"title", "subtitle", "description", "long_description", "short_description", "promotional_text", "whats_new"}
)
_DESCRIPTIONS = frozenset({"description", "long_description"})
"""Currencies written with their sign before the amount; any other is written after it, by its code."""
_WORD = re.compile(r"\S+")
"""A word of a text, with the marks written against it (``"Pro:"``): what a text's change is counted in."""
_BREAK = re.compile(r"<\s*(?:br|/p|/li|/div)\s*/?\s*>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]+>")
_RENDITION = re.compile(r"^\d+x\d+\w*\.\w+$")
"""A store image's last path part that names its size (``392x696bb.png``), not the image."""


def describe_change(target: str | None, before: str | None, after: str | None, *, currency: str | None = None) -> str:
    """What a listing change changed, in one short line (at most :data:`CHANGE_CHARS` characters).

    ``target`` is what changed (``"screenshots"``, ``"title"``, ``"price"`` ...), ``before`` and
    ``after`` its raw values as a ``listing_change`` event holds them; ``currency`` (a lower-case
    code, ``"usd"``) is the currency of a price, when known.

    - screenshots (a JSON list of addresses): how many were added, removed or replaced, named by their
      file when few, and the count before and after;
    - texts (title, subtitle, description ...): the words removed (``-'...'``) and added (``+'...'``),
      with a few unchanged words around them; a line of a description moved elsewhere is said moved;
    - a price: the old and the new one, with the currency when known (``""`` is free);
    - an icon: ``new icon``; privacy details: the data types each section lists or no longer lists;
    - anything else: both values, shortened.

    >>> describe_change("screenshots", '["https://cdn/a/1.png", "https://cdn/a/2.png"]',
    ...                 '["https://cdn/a/1.png", "https://cdn/a/3.png", "https://cdn/a/4.png"]')
    '2 added, 1 removed (2 → 3 images): +3.png, +4.png, -2.png'
    >>> describe_change("title", "Photo Pro: Edit photos", "Photo Pro: AI photo editor")
    "Photo Pro: -'Edit photos' +'AI photo editor'"
    >>> describe_change("icon", "https://cdn/i/1.png", "https://cdn/i/2.png")
    'new icon'
    """
    if before == after:
        return "no change"
    name = (target or "").lower()
    if name == "icon":
        return "new icon" if before else "an icon"
    if name == "screenshots":
        said = _screenshots(before, after)
        if said is not None:
            return said
    if name == "price":
        return f"{_price(before, currency)} → {_price(after, currency)}"
    if name in ("privacy", "privacy_info"):
        return describe_privacy(before, after)
    if name in ("size", "version"):
        return f"{_short(before)} → {_short(after)}"
    if name in _TEXTS or (before and after and (" " in before or " " in after)):
        return _text_change(before, after, description=name in _DESCRIPTIONS)
    return _cut(f"{_short(before)} → {_short(after)}")


# -- screenshots ---------------------------------------------------------------------------------------------


def image_name(address: str) -> str:
    """An image's name as a person tells it apart: the file of its address, the one before a size rendition
    (``.../iphone6plus_2.png/392x696bb.png`` is ``iphone6plus_2.png``), with no scheme or host.

    >>> image_name("https://cdn.example/thumb/v4/ab/iphone6plus_2.png/392x696bb.png"), image_name("shot-3.jpg")
    ('iphone6plus_2.png', 'shot-3.jpg')
    """
    path = address.split("?", 1)[0]
    if "://" in path:  # the scheme and the host name no image
        path = path.split("://", 1)[1].partition("/")[2]
    parts = [p for p in path.split("/") if p]
    if len(parts) > 1 and _RENDITION.match(parts[-1]) and "." in parts[-2]:
        return parts[-2]
    return parts[-1] if parts else address


def _images(value: str | None) -> list[str] | None:
    if value is None or value == "":
        return []
    try:
        found = json.loads(value)
    except ValueError:
        return None
    if not isinstance(found, list) or not all(isinstance(v, str) for v in found):
        return None
    return found


def _screenshots(before: str | None, after: str | None) -> str | None:
    """Screenshots added, removed, replaced or reordered; None when a side is not a JSON list of addresses."""
    old, new = _images(before), _images(after)
    if old is None or new is None:
        return None
    added = [a for a in new if a not in old]
    removed = [r for r in old if r not in new]
    if not added and not removed:
        return f"reordered ({len(new)} images)"
    # an image of the same name taken away and another put in: replaced (a new file of the same screen)
    removed_names = [image_name(r) for r in removed]
    replaced = [n for n in dict.fromkeys(image_name(a) for a in added) if n in removed_names]
    added_names = [n for n in (image_name(a) for a in added) if n not in replaced]
    removed_names = [n for n in removed_names if n not in replaced]
    counts = [
        f"{len(replaced)} replaced" if replaced else "",
        f"{len(added_names)} added" if added_names else "",
        f"{len(removed_names)} removed" if removed_names else "",
    ]
    said = f"{', '.join(c for c in counts if c)} ({len(old)} → {len(new)} images)"
    named = [*replaced, *(f"+{n}" for n in added_names), *(f"-{n}" for n in removed_names)]
    if len(named) <= _NAMED:
        said += ": " + ", ".join(named)
    return _cut(said)


# -- prices --------------------------------------------------------------------------------------------------


def _price(value: str | None, currency: str | None) -> str:
    """A store price as a person reads it (:func:`~storeframes.analysis.price_text`): ``""`` (or ``0``) is Free,
    an amount has its currency, or says it is unknown."""
    return price_text(value, currency)


# -- texts ---------------------------------------------------------------------------------------------------


def _plain_text(value: str | None, *, description: bool) -> str:
    """A text on one line of words: an HTML description (android's) read as its text."""
    if not value:
        return ""
    if description and _TAG.search(value):
        value = html.unescape(_TAG.sub("", _BREAK.sub("\n", value)))
    return value


def _words(text: str) -> list[tuple[str, int, int]]:
    """A text's words, each with where it starts and ends (so a quote keeps the text's own spacing)."""
    return [(m.group(0), m.start(), m.end()) for m in _WORD.finditer(text)]


def _quote(text: str, words: list[tuple[str, int, int]], first: int, last: int) -> str:
    """Words ``first`` to ``last`` (excluded) of ``text`` as written, on one line; a long run keeps its ends."""
    if last - first > _QUOTED:
        head = " ".join(text[words[first][1] : words[first + _QUOTED // 2 - 1][2]].split())
        tail = " ".join(text[words[last - _QUOTED // 2][1] : words[last - 1][2]].split())
        return f"{head} … {tail}"
    return " ".join(text[words[first][1] : words[last - 1][2]].split())


def _context(text: str, words: list[tuple[str, int, int]], first: int, last: int, *, before: bool) -> str:
    """Up to :data:`_CONTEXT` unchanged words before (or after) a change, with an ellipsis where the text goes on."""
    if before:
        start = max(first, last - _CONTEXT)
        shown = _quote(text, words, start, last) if start < last else ""
        return ("…" if start > 0 and shown else "") + shown
    end = min(last, first + _CONTEXT)
    shown = _quote(text, words, first, end) if first < end else ""
    return shown + ("…" if end < len(words) and shown else "")


def _text_change(before: str | None, after: str | None, *, description: bool) -> str:
    """A text's change as its words removed and added, each place with a few words around it."""
    if not before:
        return _cut(f"set to '{_short(after, words=12)}'")
    if not after:
        return _cut(f"emptied (was '{_short(before, words=12)}')")
    old, new = _plain_text(before, description=description), _plain_text(after, description=description)
    a, b = _words(old), _words(new)
    matcher = difflib.SequenceMatcher(a=[w for w, _, _ in a], b=[w for w, _, _ in b], autojunk=False)
    changed = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    if not changed:
        return "only its spacing or markup"
    removed = {_quote(old, a, i1, i2) for tag, i1, i2, _, _ in changed if tag == "delete"}
    inserted = {_quote(new, b, j1, j2) for tag, _, _, j1, j2 in changed if tag == "insert"}
    moved = removed & inserted  # a line taken away here and put back there: moved, not changed
    hunks: list[str] = []
    said_moved: list[str] = []
    for tag, i1, i2, j1, j2 in changed:
        gone = _quote(old, a, i1, i2) if i2 > i1 else ""
        put = _quote(new, b, j1, j2) if j2 > j1 else ""
        if (tag == "delete" and gone in moved) or (tag == "insert" and put in moved):
            if tag == "insert":
                said_moved.append(f"moved '{put.lstrip('•·-* ')}'")
            continue
        sides = " ".join(s for s in (f"-'{gone}'" if gone else "", f"+'{put}'" if put else "") if s)
        lead = _context(old, a, 0, i1, before=True)
        trail = _context(old, a, i2, len(a), before=False)
        hunks.append(" ".join(p for p in (lead, sides, trail) if p))
    said = [*hunks, *said_moved]
    for shown in range(min(len(said), _HUNKS), 0, -1):  # as many places as the length holds, the rest counted
        more = len(said) - shown
        text = "; ".join(said[:shown]) + (f"; and {more} more {'change' if more == 1 else 'changes'}" if more else "")
        if len(text) <= CHANGE_CHARS:
            return text
    return _cut("; ".join(said))


# -- lengths -------------------------------------------------------------------------------------------------


def _short(value: str | None, *, words: int = 8) -> str:
    """A value on one line, at most ``words`` words (an address by its file)."""
    if value is None:
        return "—"
    text = " ".join(value.split())
    if "://" in text and " " not in text:
        return image_name(text)
    parts = text.split(" ")
    return text if len(parts) <= words else " ".join(parts[:words]) + " …"


def _cut(text: str) -> str:
    """``text`` cut to :data:`CHANGE_CHARS` at a space, with an ellipsis; a word longer than that is cut in it."""
    if len(text) <= CHANGE_CHARS:
        return text
    head = text[: CHANGE_CHARS - 1]
    space = head.rfind(" ")
    if text[CHANGE_CHARS - 1] != " " and space > CHANGE_CHARS // 2:  # not inside a word
        head = head[:space]
    return head.rstrip(" ;,") + "…"
