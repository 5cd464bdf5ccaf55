"""A listing change in words a person reads: sizes in MB, a description's change as the lines added,
removed and moved, every value cut to a length a message can hold.

The events' ``before`` and ``after`` hold what :func:`shown_values` gives (a size as ``"105.2 MB"``,
never its bytes beside a detail in MB); ``detail`` what :func:`change_words` gives.
"""

from __future__ import annotations

import difflib
import html
import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "DIFF_CHARS",
    "DIFF_PIECES",
    "DIFF_PIECE_CHARS",
    "change_words",
    "cut",
    "describe_diff",
    "describe_privacy",
    "megabytes",
    "shown_values",
]

DETAIL_CHARS = 80
"""The most characters of one value (a title, a subtitle) a detail quotes."""

DIFF_PIECES = 3
"""The most lines or sentences a description's diff quotes of each kind (added, removed, moved)."""

DIFF_PIECE_CHARS = 70
"""The most characters of one quoted line or sentence of a description's diff."""

DIFF_CHARS = 240
"""The most characters of a description's whole diff (a message lists up to 40 events)."""

_DESCRIPTIONS = ("description", "long_description")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)")
_BREAK = re.compile(r"<\s*(?:br|/p|/li|/div)\s*/?\s*>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]+>")


def cut(value: Any, chars: int = DETAIL_CHARS) -> str:
    """``value`` as text on one line, cut to ``chars`` with an ellipsis.

    >>> cut("a  very\\nlong title", 9)
    'a very l…'
    """
    text = "" if value is None else " ".join(str(value).split())
    return text if len(text) <= chars else text[: chars - 1] + "…"


def megabytes(size: Any) -> str | None:
    """A size in bytes as a person reads it (decimal MB, one decimal); None for none.

    >>> megabytes(105_234_944), megabytes("2500000"), megabytes(None)
    ('105.2 MB', '2.5 MB', None)
    """
    if size is None or size == "":
        return None
    try:
        return f"{int(size) / 1e6:.1f} MB"
    except (TypeError, ValueError):
        return str(size)


def shown_values(change: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """A change's ``before`` and ``after`` as an event holds them: a size in MB, any other value as it is.

    >>> shown_values({"target": "size", "old_value": "98000000", "new_value": "105234944",
    ...               "old_size": 98000000, "new_size": 105234944})
    ('98.0 MB', '105.2 MB')
    """
    if change["target"] == "size":
        old = change.get("old_size") if change.get("old_size") is not None else change["old_value"]
        new = change.get("new_size") if change.get("new_size") is not None else change["new_value"]
        return megabytes(old), megabytes(new)
    return change["old_value"], change["new_value"]


def _pieces(text: str | None) -> list[str]:
    """A description's lines and sentences, each on one line (an HTML description's tags taken out)."""
    if not text:
        return []
    plain = html.unescape(_TAG.sub("", _BREAK.sub("\n", text)))
    found = []
    for line in plain.splitlines():
        for sentence in _SENTENCE.split(line):
            piece = " ".join(sentence.split()).lstrip("•·-* ").strip()
            if piece:
                found.append(piece)
    return found


def _quoted(pieces: list[str]) -> str:
    shown = ", ".join(f"'{cut(p, DIFF_PIECE_CHARS)}'" for p in pieces[:DIFF_PIECES])
    more = len(pieces) - DIFF_PIECES
    return shown + (f" and {more} more" if more > 0 else "")


def describe_diff(old: str | None, new: str | None) -> str:
    """What changed between two descriptions, in a few words: the lines (or sentences) added, removed
    and moved, at most :data:`DIFF_PIECES` of each, each cut to :data:`DIFF_PIECE_CHARS` characters, the
    whole to :data:`DIFF_CHARS`. An HTML description (android's) is read as its text.

    >>> describe_diff("Edit photos. Fast.\\n• Filters\\n• Collages\\n• Curves", "Edit photos. Fast.\\n• Collages\\n• Curves\\n• Filters")
    "moved 'Filters'"
    >>> describe_diff("Edit photos.\\n• Filters", "Edit photos and videos.\\n• Filters\\n• Stickers")
    "added 'Edit photos and videos.', 'Stickers'; removed 'Edit photos.'"
    """
    before, after = _pieces(old), _pieces(new)
    removed: list[str] = []
    added: list[str] = []
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("delete", "replace"):
            removed += before[i1:i2]
        if tag in ("insert", "replace"):
            added += after[j1:j2]
    moved = [p for p in dict.fromkeys(added) if p in removed]
    added = [p for p in added if p not in moved]
    removed = [p for p in removed if p not in moved]
    kinds = (("added", added), ("removed", removed), ("moved", moved))
    said = "; ".join(f"{kind} {_quoted(pieces)}" for kind, pieces in kinds if pieces)
    return cut(said, DIFF_CHARS) if said else "only its spacing or markup"


def _sections(value: str | None) -> dict[str, list[str]] | None:
    """A privacy value (compact JSON: section -> data types) read back; None for one that is not."""
    try:
        found = json.loads(value) if value else {}
    except ValueError:
        return None
    if not isinstance(found, dict) or not all(isinstance(v, list) for v in found.values()):
        return None
    return {str(k): [str(t) for t in v] for k, v in found.items()}


def _words(name: str) -> str:
    return name.replace("_", " ").lower()


def describe_privacy(old: str | None, new: str | None) -> str:
    """What changed in an app's privacy details, section by section, in words (cut to :data:`DIFF_CHARS`).

    >>> describe_privacy('{"DATA_LINKED_TO_YOU":["PURCHASES","IDENTIFIERS"]}', '{"DATA_LINKED_TO_YOU":["PURCHASES"],'
    ...                  '"DATA_USED_TO_TRACK_YOU":["USAGE_DATA"]}')
    'data linked to you no longer lists identifiers; data used to track you now lists usage data'
    """
    before, after = _sections(old), _sections(new)
    if before is None or after is None:
        return "its details changed"
    said = []
    for section in dict.fromkeys([*before, *after]):
        was, now = before.get(section, []), after.get(section, [])
        added = [_words(t) for t in now if t not in was]
        removed = [_words(t) for t in was if t not in now]
        parts = [
            f"now lists {', '.join(added)}" if added else "",
            f"no longer lists {', '.join(removed)}" if removed else "",
        ]
        if added or removed:
            said.append(f"{_words(section)} {' and '.join(p for p in parts if p)}")
    return cut("; ".join(said), DIFF_CHARS) if said else "only the order of its details"


def change_words(change: Mapping[str, Any], source: str, place: str) -> str:
    """A listing change in words: what the app changed, from what to what, and where it was seen
    (``source``: ``history`` for the service's change history, else a snapshot; ``place``: its country and device).

    >>> change_words({"app_id": "42", "target": "size", "old_value": "98000000", "new_value": "105234944",
    ...               "old_size": 98000000, "new_size": 105234944}, "history", "us, iphone")
    "42 changed its size: 98.0 MB -> 105.2 MB (us, iphone; in the service's change history)"
    """
    target, app = change["target"], change["app_id"]
    old, new = change["old_value"], change["new_value"]
    if target in ("title", "subtitle", "price", "promotional_text", "short_description"):
        what = f"{app} changed its {target}: '{cut(old)}' -> '{cut(new)}'"
    elif target == "size":
        shown = shown_values(change)
        what = f"{app} changed its size: {shown[0] or 'unknown'} -> {shown[1] or 'unknown'}"
    elif target == "version":
        what = f"{app} released version {cut(new)} (was {cut(old)})"
    elif target == "screenshots" and change.get("device_key"):
        what = f"{app} changed its screenshots ({change['device_key']})"
    elif target in _DESCRIPTIONS:
        what = f"{app} changed its description: {describe_diff(old, new)}"
    elif target == "privacy_info":
        what = f"{app} changed its privacy details: {describe_privacy(old, new)}"
    else:
        what = f"{app} changed its {target}"
    if source == "history":
        return f"{what} ({place}; in the service's change history)"
    return f"{what} ({place}; seen in the snapshot of {change['date']}, against {change['since']})"
