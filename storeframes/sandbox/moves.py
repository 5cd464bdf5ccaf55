"""How the sandbox's world moves from one day to the next, the way the real stores do.

Everything here is a pure function of its arguments (text keys carry the world's seed), built
from stable hashes only, so a day's answer is the same in any process and a replayed month
gives the same month again. :mod:`storeframes.sandbox.world` uses it for the parts of an
answer that only the day changes:

* **Rank episodes.** On top of a keyword's smooth drift and daily noise, an app now and then
  lives through an *episode* of 2-8 days: a boost (a launch, a feature by the store) that lifts
  an app from outside the top 10 by many places, or a drop (a penalty, a broken release) that
  pushes a top app down. Episodes are drawn per week of the calendar (:func:`episodes`), about
  one a week per keyword, store and country, so a month shows a few jumps of 10 places or more,
  and apps that leave the top 10 and come back.
* **Weekly rhythms.** About a quarter of a keyword's relevant apps rise or fall by a few places
  every Saturday and Sunday (:func:`weekly_rhythm`): the median of the same weekday over past
  weeks is their baseline, not the median of the last days.
* **Jumps after listing changes.** When a relevant app changes its title, subtitle or short
  description, screenshots or long description in a country, the change moves it on a keyword
  now and then (:func:`listing_jumps`): 1-3 days later, ten places or more up or down, for days
  or weeks. The change is the one the changes endpoint reports, so a jump has a cause to find.
* **Advertisers** of a keyword come and go by the week (:func:`advertisers`): one or two steady
  ones, and campaigns of 1-3 weeks, more on some keywords than others.
* **Demand.** Downloads, revenues and power follow :func:`demand`: a weekly pattern (games and
  entertainment peak at the weekend, work apps on weekdays), a slow per-app momentum (a sinusoid
  of 3-13 weeks) and a daily noise.
* **Ratings.** The number of ratings grows day by day (:func:`ratings_to_date`): each star's
  count is a non-decreasing function of the day, so the total never falls, the daily ratings
  are the difference of two days, and the average drifts slowly towards the mood of the recent
  ratings.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Sequence
from datetime import date
from typing import Protocol

__all__ = [
    "CAMPAIGN_WEEKS",
    "EPISODE_DAYS",
    "JUMP_CHANCE",
    "JUMP_DAYS",
    "JUMP_DELAY",
    "RATINGS_EPOCH",
    "WEEKEND_THEMES",
    "advertisers",
    "demand",
    "episodes",
    "listing_jumps",
    "ratings_to_date",
    "star_shares",
    "weekly_rhythm",
]

EPISODE_DAYS = (2, 8)
"""The shortest and the longest episode, in days (an episode never lasts past the next week)."""

RATINGS_EPOCH = date(2026, 1, 1).toordinal()
"""The day on which an app's number of ratings equals its base number (it grows after, shrinks before)."""

WEEKEND_THEMES = frozenset(
    {
        "puzzle",
        "racing",
        "action",
        "strategy",
        "casual",
        "word",
        "cards",
        "rpg",
        "kids",
        "music",
        "video",
        "recipes",
        "travel",
        "books",
        "dating",
        "shopping",
        "sports",
    }
)
"""Themes whose demand peaks at the weekend; the others peak on weekdays."""

CAMPAIGN_WEEKS = (1, 3)
"""The shortest and the longest advertising campaign on a keyword, in weeks (Monday to Sunday)."""

JUMP_CHANCE = 0.1
"""The chance that a listing change of a relevant app moves it on a keyword (see :func:`listing_jumps`)."""

JUMP_DELAY = (1, 3)
"""The fewest and the most days between a listing change and the jump it causes."""

JUMP_DAYS = (5, 21)
"""The shortest and the longest jump, in days (it ends earlier when the same field changes again)."""

_WEEK = 7
_RHYTHM_SHARE = 0.25
_RHYTHM_SIZE = (0.25, 0.5)
_JUMP_SIZE = (0.8, 1.6)
_HAPPY = (0.03, 0.02, 0.05, 0.15, 0.75)
_UNHAPPY = (0.6, 0.15, 0.1, 0.07, 0.08)


def _unit(*parts: object) -> float:
    """A stable float in [0, 1) from the parts (blake2b; never the salted built-in ``hash``)."""
    text = "\x1f".join(map(str, parts))
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big") / 18446744073709551616.0


def episodes(key: str, day: int, risers: Sequence[int], leaders: Sequence[int]) -> dict[int, float]:
    """The score shifts of the episodes under way on ``day`` (an ordinal): ``{app index: shift}``.

    ``key`` names one ranking (seed, store, keyword, country, language); ``risers`` are the
    indexes of apps that may be boosted (ranked about 11-60 by relevance), ``leaders`` those that
    may drop (the top 12). Each week of the calendar draws 0-2 episodes from ``key`` and the week
    alone: a start day in the week, a length of 2-8 days, an app and a shift (+1.0..+2.4 for a
    boost, -1.0..-2.2 for a drop, in units of the ranking's score, where ten places are about one
    unit). An episode starts at full strength and fades over its last two days.

    >>> key = "0:ios:episodes:recipes:us:en"
    >>> [episodes(key, date(2026, 11, d).toordinal(), range(10, 60), range(12)) for d in (3, 5, 8)]
    [{17: 0.567...}, {}, {2: -2.088...}]
    """
    shifts: dict[int, float] = {}
    week = day // _WEEK
    for w in (week - 1, week):
        rng = random.Random(f"{key}:week:{w}")
        count = rng.choices((0, 1, 2), weights=(3, 5, 2))[0]
        for _ in range(count):
            start = w * _WEEK + rng.randrange(_WEEK)
            length = rng.randint(*EPISODE_DAYS)
            boost = rng.random() < 0.6
            pool = risers if boost else leaders
            if not pool:
                continue
            app = pool[rng.randrange(len(pool))]
            size = rng.uniform(1.0, 2.4) if boost else -rng.uniform(1.0, 2.2)
            left = start + length - 1 - day
            if day < start or left < 0:
                continue
            fade = 1.0 if left >= 2 else (left + 1) / 3
            shifts[app] = shifts.get(app, 0.0) + size * fade
    return shifts


def demand(key: str, day: int, *, weekend: bool) -> float:
    """A multiplier of an app's downloads, revenues and power on ``day`` (an ordinal), about 0.75-1.3.

    ``key`` names the app in a country (seed, store, app, country); the product of a weekly
    pattern (+-4-10 %, at its height on Saturday and Sunday when ``weekend``, else mid-week), a
    momentum (a sinusoid of 20-90 days, +-5-15 %) and a daily noise (+-6 %).

    >>> round(demand("0:ios:361252007:us", date(2026, 11, 1).toordinal(), weekend=True), 3)
    1.072
    """
    amplitude = 0.04 + 0.06 * _unit(key, "weekly")
    weekday = date.fromordinal(day).weekday()  # Monday 0 .. Sunday 6
    peak = (5.5 if weekend else 2.0) / _WEEK * 2 * math.pi
    weekly = 1.0 + amplitude * math.cos(weekday / _WEEK * 2 * math.pi - peak)
    swing = 0.05 + 0.10 * _unit(key, "momentum")
    period = 20.0 + 70.0 * _unit(key, "period")
    momentum = 1.0 + swing * math.sin(2 * math.pi * day / period + 2 * math.pi * _unit(key, "phase"))
    noise = 1.0 + (_unit(key, day, "noise") - 0.5) * 0.12
    return weekly * momentum * noise


def star_shares(average: float) -> tuple[float, ...]:
    """Shares of the stars 1-5 among ratings averaging about ``average`` (a happy/unhappy mix).

    >>> [round(s, 3) for s in star_shares(4.5)]
    [0.045, 0.023, 0.051, 0.148, 0.733]
    """
    mean_happy = sum((s + 1) * p for s, p in enumerate(_HAPPY))
    mean_unhappy = sum((s + 1) * p for s, p in enumerate(_UNHAPPY))
    weight = min(1.0, max(0.0, (average - mean_unhappy) / (mean_happy - mean_unhappy)))
    return tuple(weight * h + (1 - weight) * u for h, u in zip(_HAPPY, _UNHAPPY, strict=True))


def ratings_to_date(key: str, day: int, *, base: float, per_day: float, average: float, mood: float) -> dict[str, int]:
    """The number of ratings per star (``"1"``..``"5"``) an app has received up to ``day`` (an ordinal).

    On :data:`RATINGS_EPOCH` the app holds about ``base`` ratings averaging ``average``; every
    day adds about ``per_day`` ratings averaging ``mood`` (so the average drifts slowly towards
    it), more on some days than others. Each star's count is non-decreasing in ``day``: the
    daily ratings of a day are the difference between that day and the day before.

    >>> ratings_to_date("k", RATINGS_EPOCH, base=1000.0, per_day=2.0, average=4.5, mood=4.0)
    {'1': 45, '2': 23, '3': 51, '4': 148, '5': 733}
    >>> ratings_to_date("k", RATINGS_EPOCH + 30, base=1000.0, per_day=2.0, average=4.5, mood=4.0)
    {'1': 54, '2': 26, '3': 55, '4': 156, '5': 770}
    """
    counts = {}
    t = day - RATINGS_EPOCH
    for star, (old, new) in enumerate(zip(star_shares(average), star_shares(mood), strict=True), start=1):
        # t + a noise in [0, 0.6) rises by at least 0.4 a day: every count only grows
        received = per_day * new * (t + 0.6 * _unit(key, star, day))
        counts[str(star)] = max(0, math.floor(base * old + received + 0.5))
    return counts


def weekly_rhythm(key: str, *, weekend: bool) -> tuple[float, ...]:
    """An app's score shift on one keyword per weekday (Monday to Sunday), or ``()`` for none.

    ``key`` names the app in one ranking (seed, store, keyword, country, language, app). About a
    quarter of the apps have a rhythm: an app whose theme peaks at the weekend (``weekend``)
    rises on Saturday and Sunday by 0.25-0.5 units of the ranking's score (a few places near the
    top, 10-20 further down where the ranking is crowded), the others fall by as much at the
    weekend; Monday to Friday they stay where they are. The shift depends on the weekday alone,
    so the median of the same weekday over past weeks is the baseline that takes it out.

    >>> weekly_rhythm("0:ios:rhythm:puzzle games:us:en:361252007", weekend=True)
    ()
    >>> [round(s, 3) for s in weekly_rhythm("0:ios:rhythm:puzzle games:us:en:2", weekend=True)]
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.375, 0.375]
    >>> [round(s, 3) for s in weekly_rhythm("0:ios:rhythm:puzzle games:us:en:2", weekend=False)]
    [0.0, 0.0, 0.0, 0.0, 0.0, -0.375, -0.375]
    """
    if _unit(key, "rhythm") >= _RHYTHM_SHARE:
        return ()
    low, high = _RHYTHM_SIZE
    size = (low + (high - low) * _unit(key, "rhythm-size")) * (1.0 if weekend else -1.0)
    return (0.0,) * 5 + (size, size)


def advertisers(key: str, week: int, bidders: Sequence[str]) -> list[str]:
    """The apps that buy a keyword's ads in ``week`` (days ``7 * week + 1 .. 7 * week + 7``, Monday first).

    ``key`` names the keyword's market (seed, keyword, country); ``bidders`` are the apps that
    ever advertise on it, the steady ones first. The first one or two of them (by ``key``)
    advertise every week; the others run *campaigns* of 1-3 weeks. Each week starts 0.2-1.8
    campaigns on average (more on some keywords than others, by ``key``), each drawn from
    ``key`` and its week alone, so a month shows advertisers entering on a Monday and leaving a
    few weeks later. At least two apps advertise every week (when ``bidders`` holds two).

    >>> bidders = ["a", "b", "c", "d", "e", "f"]
    >>> [advertisers("0:recipes:us", week, bidders) for week in range(105_690, 105_696)]
    [['a', 'c'], ['a', 'c', 'e'], ['a', 'c', 'e'], ['a', 'c', 'f'], ['a', 'f', 'e'], ['a', 'e', 'f', 'c']]
    """
    steady = 1 + (_unit(key, "steady") < 0.5)
    chosen = list(bidders[:steady])
    others = bidders[steady:]
    rate = 0.2 + 1.6 * _unit(key, "campaigns")
    if others:
        for start in range(week - CAMPAIGN_WEEKS[1] + 1, week + 1):
            rng = random.Random(f"{key}:campaigns:{start}")
            for _ in range(int(rate) + (rng.random() < rate % 1)):
                app = others[rng.randrange(len(others))]
                if start + rng.randint(*CAMPAIGN_WEEKS) > week:
                    chosen.append(app)
    chosen = list(dict.fromkeys(chosen))
    if len(chosen) < 2:
        chosen += [a for a in bidders[:2] if a not in chosen]
    return chosen


class Calendar(Protocol):
    """A closed-form calendar of an app's changes of one field (events 1, 2, ... are changes)."""

    def day_of(self, k: int) -> int:
        """The day (an ordinal) of event ``k``."""
        ...

    def events_between(self, first: int, last: int) -> list[int]:
        """The events from day ``first`` to day ``last``, both included."""
        ...


def listing_jumps(
    key: str, first: int, last: int, listings: Sequence[tuple[int, str, int, str, Calendar]]
) -> list[tuple[int, int, int, float]]:
    """The jumps after listing changes under way between days ``first`` and ``last``: ``(index, start, end, shift)``.

    ``key`` names one ranking (seed, store, keyword, country, language); ``listings`` holds
    ``(app index, app id, place by relevance, field, calendar)`` for the apps relevant to the
    keyword and the fields that move a ranking (title, subtitle or short description,
    screenshots, long description), each with the calendar of its changes in the country. A
    change moves the app with probability :data:`JUMP_CHANCE` (drawn from ``key``, the app, the
    field and the change's number): from 1-3 days after the change its score shifts by 0.8-1.6
    units (ten places or more; up more often for an app outside the top 12 by relevance, down
    more often for a top app) for 5-21 days, or until the field changes again. ``start`` and
    ``end`` are the first and last day of the shift (ordinals, both included).

    >>> class Every30:
    ...     def day_of(self, k): return 739_000 + 30 * k
    ...     def events_between(self, first, last):
    ...         return [k for k in range(0, 100) if first <= self.day_of(k) <= last]
    >>> listings = [(n, f"app{n}", n, "screenshots", Every30()) for n in range(40)]
    >>> [(i, s - 739_000, e - 739_000, round(x, 2)) for i, s, e, x in listing_jumps("k", 739_100, 739_130, listings)]
    [(2, 121, 135, -1.09), (13, 121, 126, 1.4), (15, 121, 139, -1.4), (21, 91, 109, 1.51), (33, 122, 127, 1.28)]
    """
    jumps = []
    reach = JUMP_DELAY[1] + JUMP_DAYS[1]
    for index, app_id, place, target, calendar in listings:
        for k in calendar.events_between(first - reach, last):
            if k == 0 or _unit(key, app_id, target, k, "jump") >= JUMP_CHANCE:
                continue
            day = calendar.day_of(k)
            start = (
                day + JUMP_DELAY[0] + int(_unit(key, app_id, target, k, "delay") * (JUMP_DELAY[1] - JUMP_DELAY[0] + 1))
            )
            length = JUMP_DAYS[0] + int(_unit(key, app_id, target, k, "days") * (JUMP_DAYS[1] - JUMP_DAYS[0] + 1))
            end = min(start + length - 1, calendar.day_of(k + 1) - 1)
            if end < max(start, first) or start > last:
                continue
            up = _unit(key, app_id, target, k, "up") < (0.75 if place >= 12 else 0.25)
            size = _JUMP_SIZE[0] + (_JUMP_SIZE[1] - _JUMP_SIZE[0]) * _unit(key, app_id, target, k, "size")
            jumps.append((index, start, end, size if up else -size))
    return jumps
