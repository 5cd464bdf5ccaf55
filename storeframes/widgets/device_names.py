"""Readable names of the stores' device keys: ``iphone_6_5`` reads "iPhone 6.5-inch".

An iphone/ipad metadata answer keys its screenshots and videos by the display class they were
made for (``iphone_6_5``, ``ipadPro_2018``, ``appleWatch`` ...); :func:`device_name` gives the
name a person reads, as an app card's screenshot strip shows it. The sizes are the diagonal of
the screens each class stands for. A key not listed here still reads as words: underscores and
capitals split it, a pair of numbers is a dotted size (``ipad_10_5``: "iPad 10.5-inch") and a year
goes in brackets.

>>> device_name("iphone_6_5"), device_name("ipadPro_2018"), device_name("android")
('iPhone 6.5-inch', 'iPad Pro 12.9-inch (2018)', 'Android')
"""

from __future__ import annotations

import re

from ..errors import InvalidParameterError

__all__ = ["DEVICE_NAMES", "device_name"]

DEVICE_NAMES: dict[str, str] = {
    "iphone": "iPhone 3.5-inch",
    "iphone5": "iPhone 4-inch",
    "iphone6": "iPhone 4.7-inch",
    "iphone6plus": "iPhone 5.5-inch",
    "iphone_5_8": "iPhone 5.8-inch",
    "iphone_6_5": "iPhone 6.5-inch",
    "ipad": "iPad 9.7-inch",
    "ipadPro": "iPad Pro 12.9-inch",
    "ipadPro_2018": "iPad Pro 12.9-inch (2018)",
    "appleWatch": "Apple Watch",
    "appleWatch_2018": "Apple Watch (2018)",
    "android": "Android",
    "phone": "Phone",
    "tablet": "Tablet",
}
"""The name of each device key the service documents (iphone/ipad screenshots and videos), and of
android's: ``android`` (a flat list, named after the request's device), ``phone`` and ``tablet``."""

_WORDS = {"iphone": "iPhone", "ipad": "iPad", "tv": "TV"}
"""Words spelled otherwise than with a capital first letter."""

_PART = re.compile(r"[A-Z]{2,}(?![a-z])|[A-Z]?[a-z]+|\d+")
_YEAR = re.compile(r"(?:19|20)\d\d")


def device_name(key: str) -> str:
    """The readable name of a screenshot or video device key (``device_key`` of :func:`~storeframes.screenshots_frame`).

    A key the service documents has its name in :data:`DEVICE_NAMES`; any other reads as
    words: ``smart_display`` is "Smart Display", ``ipad_10_5`` "iPad 10.5-inch" (after iphone
    or ipad a number is the screen's size), ``vendorWatch_2021`` "Vendor Watch (2021)". A key
    that is not text raises :class:`~storeframes.InvalidParameterError`.

    >>> [device_name(k) for k in ("iphone_6_5", "ipadPro", "phone", "ipad_11", "appleTV")]
    ['iPhone 6.5-inch', 'iPad Pro 12.9-inch', 'Phone', 'iPad 11-inch', 'Apple TV']
    """
    if not isinstance(key, str):
        raise InvalidParameterError("key", key, "a device key as text, such as 'iphone_6_5'", endpoint="device_name")
    known = DEVICE_NAMES.get(key)
    return known if known is not None else _words(key)


def _words(key: str) -> str:
    """An unknown key as words: sizes dotted (and in inches after iphone or ipad), a year in brackets."""
    parts: list[str] = _PART.findall(key)
    words: list[str] = []
    years: list[str] = []
    sized = False
    i = 0
    while i < len(parts):
        part = parts[i]
        if _YEAR.fullmatch(part):
            years.append(f"({part})")
        elif part.isdigit():
            size = part
            if i + 1 < len(parts) and parts[i + 1].isdigit() and not _YEAR.fullmatch(parts[i + 1]) and len(size) <= 2:
                size, i = f"{part}.{parts[i + 1]}", i + 1
            screen = not sized and any(word in ("iPhone", "iPad") for word in words)
            words.append(f"{size}-inch" if screen else size)
            sized |= screen
        else:
            words.append(_WORDS.get(part.lower(), part[:1].upper() + part[1:]))
        i += 1
    return " ".join(words + years)
