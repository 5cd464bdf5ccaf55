"""The types of the command line's arguments: a rate, a day, days, seconds, whole numbers, keywords, app ids,
countries, a score; each refuses a bad value through argparse with an example of a good one.

>>> whole("keywords", 1, "20")("3")
3
>>> country_list("US, gb")
['us', 'gb']
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from datetime import date

__all__ = [
    "app_list",
    "country_list",
    "days",
    "field",
    "files",
    "iso_day",
    "keyword_list",
    "rate",
    "score",
    "seconds",
    "whole",
]


def rate(text: str) -> tuple[int, float]:
    try:
        count, seconds = text.split("/")
        return int(count), float(seconds)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected REQUESTS/SECONDS such as 60/10, got {text!r}") from None


def iso_day(text: str) -> date:
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date as YYYY-MM-DD such as 2026-11-20, got {text!r}") from None


def files(text: str) -> int:
    if not text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number of files such as 500, or 0 (never), got {text!r}")
    return int(text)


def days(text: str) -> float:
    try:
        days = float(text)
    except ValueError:
        days = math.nan
    if not math.isfinite(days) or days < 0:
        raise argparse.ArgumentTypeError(f"expected a number of days such as 30 or 0.5, got {text!r}")
    return days


def seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0 such as 30 or 2.5, got {text!r}")
    return seconds


def whole(what: str, least: int, example: str) -> Callable[[str], int]:
    """An argument type: a whole number of ``what`` no smaller than ``least``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = least - 1
        if value < least:
            raise argparse.ArgumentTypeError(
                f"expected a whole number of {what} >= {least} such as {example}, got {text!r}"
            )
        return value

    return parse


def field(text: str) -> tuple[str, str]:
    field, sep, value = text.partition("=")
    if not sep or not field.strip() or not value.strip():
        raise argparse.ArgumentTypeError(f"expected FIELD=VALUE such as power=app-power, got {text!r}")
    return field.strip(), value.strip()


def keyword_list(text: str) -> list[str]:
    keywords = [k.strip() for k in text.split(",") if k.strip()]
    if not keywords:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated keywords such as 'photo editor,collage maker', got {text!r}"
        )
    return keywords


def app_list(text: str) -> list[str]:
    apps = list(dict.fromkeys(a.strip() for a in text.split(",") if a.strip()))
    if not apps:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated app ids such as 1234567890,2345678901, got {text!r}"
        )
    return apps


def country_list(text: str) -> list[str]:
    countries = [c.strip().lower() for c in text.split(",") if c.strip()]
    if not countries:
        raise argparse.ArgumentTypeError(f"expected comma-separated country codes such as us,gb, got {text!r}")
    return countries


def score(text: str) -> float:
    try:
        score = float(text)
    except ValueError:
        score = math.nan
    if not 0 <= score <= 100:
        raise argparse.ArgumentTypeError(f"expected a score from 0 to 100 such as 60, got {text!r}")
    return score
