"""What every rule's judgement shares: the day judged and what it may read (:class:`Judged`), an event's row
and its stable id, the kept ranks of the keywords a tracker follows (:func:`rank_frame`), read once for the rules
and the day's digest (:class:`RanksRead`), and the apps' titles.

>>> event_id("photo-editors", "rank_drop", date(2026, 11, 5)) == event_id("photo-editors", "rank_drop", date(2026, 11, 5))
True
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

import polars as pl

from ..cache import EVENT_SCHEMA, Cache
from ..kept.scan import scan
from ..kept.search_ranks import kept_ranks
from .ahead import EarlyRanks, ReadAhead
from .digest_charts import CHARTED
from .rules import Alert
from .spec import TrackerSpec, followed

__all__ = [
    "ALERT_DAYS",
    "BASELINE_LEAD",
    "GAP_DAYS",
    "LIVE",
    "PLACE",
    "STANDING_DAYS",
    "Judged",
    "RanksRead",
    "app_names",
    "event_id",
    "event_row",
    "followed_keywords",
    "followed_pairs",
    "gap_words",
    "kept_rank_days",
    "place_words",
    "rank_frame",
    "ranks_from",
    "tracked_apps",
]

ALERT_DAYS = 7
"""The days a judgement looks at, up to its day: a move of an earlier day is history, not news (a
tracker that missed a few runs still hears of the days it missed)."""

GAP_DAYS = 14
"""How far back the last day with data may lie for a day to be compared with it (a keyword's search read
further back costs a judgement its time: every day read is every result of every tracked search)."""

LIVE = ("search", "search_ads")
"""The endpoints of the live search: a keyword followed through one of them is read from its daily snapshots."""

BASELINE_LEAD = 7
"""The days before the first day judged whose ``anomaly`` baselines a judgement reads whole as well: an
anomaly on the first day judged is an event's first day only when the days before it were not anomalous
(:mod:`storeframes.track.anomaly_rule`), which these days' own baselines say."""


@dataclass
class RanksRead:
    """The organic results a judgement read (:func:`rank_frame` from ``start`` to ``end``), kept for the digest
    of the same run, which shows a part of the same days: read once, not twice.

    >>> RanksRead().within(date(2026, 11, 1), date(2026, 11, 20)) is None
    True
    """

    start: date | None = None
    end: date | None = None
    frame: pl.DataFrame | None = None
    ahead: ReadAhead | None = None  # the days before the run's, read while its requests went

    def within(self, start: date, end: date) -> pl.DataFrame | None:
        """The rows from ``start`` to ``end`` when the read covered them (it ended on ``end``), else None."""
        if self.frame is None or self.start is None or self.start > start or self.end != end:
            return None
        return self.frame.filter(pl.col("date") >= start)


@dataclass(frozen=True)
class Judged:
    """What a judgement needs besides the spec: where, which day, and the month's spend; and where it leaves
    the ranks it read (``ranks``) for the day's digest."""

    cache: Cache
    service: str
    day: date
    now: datetime
    month_spent: int = 0
    ranks: RanksRead = field(default_factory=RanksRead)

    @property
    def first(self) -> date:
        """The first day whose events are looked for."""
        return self.day - timedelta(days=ALERT_DAYS - 1)

    @property
    def reach(self) -> date:
        """The first day of data read: the first day's comparison may reach back this far."""
        return self.first - timedelta(days=GAP_DAYS)


def event_id(*parts: Any) -> str:
    """A stable id of an event from what makes it one (the same move found again has the same id)."""
    text = "\x1f".join("" if p is None else str(p) for p in parts)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


PLACE = ("app_id", "keyword", "country", "language", "device")
"""The columns that say where an event happened, taken from the row it was found in (``place=``)."""


def event_row(
    spec: TrackerSpec,
    alert: Alert,
    at: Judged,
    day: date,
    key: Sequence[Any] | None = None,
    place: Mapping[str, Any] | None = None,
    **values: Any,
) -> dict[str, Any]:
    if place is not None:
        values = {k: place[k] for k in PLACE if k in place} | values
    where = [values.get(k) for k in (*PLACE, "target")]
    ident = event_id(spec.name, alert.name, alert.rule, *(key if key is not None else (day, *where)))
    row = dict.fromkeys(EVENT_SCHEMA.names())
    row.update(
        event_id=ident,
        tracker=spec.name,
        alert=alert.name,
        rule=alert.rule,
        day=day,
        first_seen=at.now,
        notified_to=[],
    )
    row.update(values)
    return row


def place_words(row: Mapping[str, Any]) -> str:
    return ", ".join(str(row[k]) for k in ("country", "device") if row.get(k))


def gap_words(since: date, day: date) -> str:
    missing = (day - since).days - 1
    if missing <= 0:
        return ""
    first, last = since + timedelta(days=1), day - timedelta(days=1)
    if missing == 1:
        return f"; no data on {first}, compared with {since}"
    return f"; no data from {first} to {last} ({missing} days), compared with {since}"


# -- ranks ---------------------------------------------------------------------------------------------


STANDING_DAYS = 30
"""The days before a digest's last day its standings (where we stand) read: the 30-day moves, the best rank,
the sparklines. A judgement that reads ranks reads these days too, so one read serves the rules and the digest."""

_APP_ITEMS = ("metadata", "changes", "metrics")


def tracked_apps(spec: TrackerSpec) -> list[str]:
    """The apps ``spec`` tracks, each once in the order it names them: those of its rank rules, then its app items'.

    >>> tracked_apps(spec)  # doctest: +SKIP
    ['6441354028', '3233849169']
    """
    apps = [app for alert in spec.alerts if alert.rule in CHARTED for app in alert.apps]
    apps += [app for item in spec.items if item.endpoint in _APP_ITEMS for app in followed(item.calls, "apps")]
    return list(dict.fromkeys(apps))


def followed_keywords(spec: TrackerSpec) -> dict[str, list[str]]:
    """The keywords ``spec`` follows by search (live or history), as it spells them, by country in lower case.

    >>> followed_keywords(spec)  # doctest: +SKIP
    {'us': ['photo editor', 'collage maker']}
    """
    out: dict[str, list[str]] = {}
    for item in spec.items:
        if item.endpoint in (*LIVE, "search_history"):
            for call in item.calls:
                country = str(call.get("country", "us")).lower()
                out.setdefault(country, []).extend(followed([call], "keywords"))
    return {country: list(dict.fromkeys(words)) for country, words in sorted(out.items())}


def followed_pairs(spec: TrackerSpec, endpoints: Sequence[str]) -> set[tuple[str, str]]:
    """(keyword in lower case, country) of ``spec``'s items of ``endpoints``.

    >>> followed_pairs(spec, LIVE)  # doctest: +SKIP
    {('photo editor', 'us')}
    """
    pairs: set[tuple[str, str]] = set()
    for item in spec.items:
        if item.endpoint in endpoints:
            for call in item.calls:
                keywords = followed([call], "keywords")
                pairs |= {(k.lower(), str(call.get("country", "us")).lower()) for k in keywords}
    return pairs


def rank_frame(
    spec: TrackerSpec, cache: Cache, service: str, start: date, end: date, *, early: EarlyRanks | None = None
) -> pl.DataFrame:
    """The organic results the tracker kept from ``start`` to ``end``: ``keyword``, ``date``, ``rank``,
    ``app_id``, ``country``, ``language``, ``device``. A keyword's live search (with or without ads:
    a snapshot a day, ads left out) where the tracker follows it live, else its recorded search history
    (:func:`~storeframes.kept.kept_ranks`). ``early``: the live ranks of the days before ``end``, read ahead
    (:class:`~storeframes.track.ahead.ReadAhead`) and still what the cache keeps; only ``end`` is read of them.

    >>> rank_frame(spec, cache, "appstore", date(2026, 11, 1), date(2026, 11, 7))  # doctest: +SKIP
    """
    live, history = followed_pairs(spec, LIVE), followed_pairs(spec, ("search_history",))
    if early is None or early.start != start or early.end != end - timedelta(days=1):
        return kept_ranks(cache, service, start, end, live=live, history=history)[0]
    # ``early`` holds the live ranks of the days before ``end``: the last day's, and the histories, read now
    frames = [early.frame, kept_ranks(cache, service, end, end, live=live, history=set())[0]]
    if history - live:
        frames.append(kept_ranks(cache, service, start, end, live=set(), history=history - live)[0])
    return pl.concat(frames)


def ranks_from(spec: TrackerSpec, at: Judged) -> date | None:
    """The first day of ranks a judgement of ``spec`` on ``at.day`` reads (None without a rank rule): ``rank_drop``
    and ``top`` from :attr:`Judged.reach`, ``anomaly`` from its baseline's weeks before the days judged and
    the :data:`BASELINE_LEAD` days before them.

    >>> ranks_from(spec, Judged(cache, "sandbox-0", date(2026, 11, 30), now))  # doctest: +SKIP
    datetime.date(2026, 10, 17)
    """
    starts = [at.reach for alert in spec.alerts if alert.rule in ("rank_drop", "top")]
    starts += [at.first - timedelta(days=7 * a.weeks + BASELINE_LEAD) for a in spec.alerts if a.rule == "anomaly"]
    if tracked_apps(spec) and followed_keywords(spec):  # the day's digest opens with the standings: one read
        starts.append(at.day - timedelta(days=STANDING_DAYS))
    return min(starts, default=None)


def kept_rank_days(spec: TrackerSpec, at: Judged, start: date) -> pl.DataFrame:
    """The organic results kept from ``start`` to ``at.day`` (:func:`rank_frame`), read once a judgement: the
    rules that read fewer days take theirs of the first read, which ``at.ranks`` keeps for the day's digest.

    >>> kept_rank_days(spec, at, at.reach)  # doctest: +SKIP
    """
    held = at.ranks.within(start, at.day)
    if held is not None:
        return held
    early = at.ranks.ahead.ranks(start) if at.ranks.ahead is not None else None
    frame = rank_frame(spec, at.cache, at.service, start, at.day, early=early)
    at.ranks.start, at.ranks.end, at.ranks.frame = start, at.day, frame
    return frame


def app_names(cache: Cache, service: str, apps: list[str]) -> dict[str, str]:
    """The apps' titles, from the newest kept metadata (none where nothing is kept). A field the flattener does not
    know is not warned of again here: it was when fetched, and the ``unknown_field`` rule tells it."""
    from ..flatteners import UnknownFieldWarning

    if not apps or not cache.entries("metadata"):
        return {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnknownFieldWarning)
        found = (
            scan("metadata", cache, service=service)
            .filter(pl.col("app_id").is_in(apps))
            .sort("fetched_at")
            .select("app_id", "title")
            .collect()
        )
    return {row["app_id"]: row["title"] for row in found.iter_rows(named=True) if row["title"]}
