"""Alerts: a tracker's rules judged on what it kept, each event said once, told through apprise, and a digest.

At the end of every run (and by ``storeframes track alerts``, free), under the tracker's lease:

1. the rules are judged on the last days' kept data (:mod:`storeframes.track.judge`), and the events
   not found before are written to the cache's ``events/`` table, with the day they happened on;
2. each ``[notify]`` address gets one message with every event it has not had
   (:mod:`storeframes.track.notify`), within the ``[notify] timeout``; an event records who has it (by
   the address's keyed id), so a failed address gets it at the next run, and none gets it twice;
3. the digest of the day is kept in the cache (:mod:`storeframes.track.day_digest`): the events first
   seen that day, the day's finished runs and credits; a run keeps it once its own row is final.

:func:`events` reads the table back, offline, with no token.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl

from .._tracebacks import user_facing
from ..cache import EVENT_SCHEMA, Cache
from ..catalog import parse_day
from ..errors import InvalidParameterError, plural
from ..kept.tables import open_for
from ..ledger import month_spent_of
from .day_digest import keep_day_digest, render_period
from .judge import find_events
from .judging import Judged, RanksRead
from .notify import send
from .rules import address_id, shown_address, unkeyed_id
from .spec import TrackerSpec

__all__ = ["KEEP_DAYS", "AlertResult", "events", "judge", "write_digest"]

KEEP_DAYS = 62
"""The days of events a judgement reads back: to say none twice, and to tell what was not told yet."""


@dataclass
class AlertResult:
    """What a judgement did: the events it found, whom it told, the digest it wrote."""

    tracker: str
    day: date
    events: pl.DataFrame
    """The events found now (:data:`~storeframes.cache.EVENT_SCHEMA`); those found before are not repeated."""
    notified: dict[str, int] = field(default_factory=dict)
    """Events sent, by address (shown by its kind and id only)."""
    errors: list[str] = field(default_factory=list)
    digest: tuple[Path, ...] = ()

    @property
    def exit_code(self) -> int:
        """``storeframes track alerts``' exit code: 0 when every address that was owed events got them, 3 when
        one could not be told (its events are kept, and go at the next judgement): a job that sends alerts
        nobody received does not end ``ok``.

        >>> AlertResult("t", date(2026, 11, 20), pl.DataFrame(), errors=["notification to json://…#ab failed"]).exit_code
        3
        """
        return 3 if self.errors else 0

    def summary(self) -> str:
        """A few lines for people."""
        lines = [f"{self.tracker} alerts on {self.day}: {plural(self.events.height, 'new event')}"]
        lines += [f"  {row['rule']}: {row['detail']}" for row in self.events.iter_rows(named=True)]
        lines += [f"  told {address}: {plural(n, 'event')}" for address, n in self.notified.items()]
        if self.digest:
            lines.append(f"  digest: {self.digest[0]}")
        lines += [f"  error: {e}" for e in self.errors]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"AlertResult({self.summary().splitlines()[0]})"


def _record(cache: Cache, tracker: str, rows: pl.DataFrame, days: set[date]) -> None:
    """Write the whole of ``tracker``'s events of ``days`` (``rows`` holds every event of them)."""
    for day in sorted(days):
        cache.events.write(tracker, day, rows.filter(pl.col("day") == day))


def _rekeyed(known: pl.DataFrame, urls: list[str], key: bytes) -> tuple[pl.DataFrame, set[date]]:
    """``known`` with the ids earlier versions wrote for ``urls`` (unkeyed digests) replaced by their keyed
    ids, and the days whose events changed (to be written again)."""
    renamed = {unkeyed_id(u): address_id(u, key) for u in urls}
    old = pl.col("notified_to").list.eval(pl.element().is_in(list(renamed))).list.any().fill_null(False)
    stale = known.filter(old)
    if stale.is_empty():
        return known, set()
    fixed = known.with_columns(
        notified_to=pl.col("notified_to").list.eval(pl.element().replace(renamed)).list.unique().list.sort()
    )
    return fixed, set(stale["day"].to_list())


def _told(known: pl.DataFrame, ids: list[str], told: str, everyone: list[str], now: datetime) -> pl.DataFrame:
    """``known`` with the address id ``told`` among the addresses of the events ``ids``, and ``notified_at`` set
    where every address of ``everyone`` (their ids) now has it."""
    mine = pl.col("event_id").is_in(ids)
    updated = known.with_columns(
        notified_to=pl.when(mine)
        .then(pl.concat_list(pl.col("notified_to"), pl.lit([told], pl.List(pl.String))).list.unique().list.sort())
        .otherwise(pl.col("notified_to"))
    )
    done = (
        pl.lit(pl.Series([everyone], dtype=pl.List(pl.String))).list.set_difference(pl.col("notified_to")).list.len()
        == 0
    )
    return updated.with_columns(
        notified_at=pl.when(mine & pl.col("notified_at").is_null() & done)
        .then(pl.lit(now, EVENT_SCHEMA["notified_at"]))
        .otherwise(pl.col("notified_at"))
    )


def judge(
    spec: TrackerSpec,
    cache: Cache,
    service: str,
    day: date,
    *,
    month_spent: int,
    notify: bool = True,
    digest: bool = True,
    ranks: RanksRead | None = None,
) -> AlertResult:
    """Judge ``spec``'s rules on ``day``, keep the new events, tell them, and keep the digest of the day.

    The caller holds the tracker's lease (a run, or ``Tracker.alerts``): two judgements of one
    tracker never run at once, so an event is written and told once. A run judges with
    ``digest=False`` and keeps the day's digest once its own row in the run log is final
    (:func:`~storeframes.track.day_digest.keep_day_digest`), so the digest counts it as finished; the ranks the
    judgement read are left in ``ranks`` for it (a :class:`~storeframes.track.judging.RanksRead`).
    """
    now = datetime.combine(day, datetime.now(UTC).time(), UTC)
    known = cache.events.read(spec.name, since=day - timedelta(days=KEEP_DAYS))
    read = ranks if ranks is not None else RanksRead()
    found = find_events(spec, Judged(cache, service, day, now, month_spent, read), known)
    result = AlertResult(spec.name, day, found)
    if not found.is_empty():
        known = pl.concat([known, found])
        _record(cache, spec.name, known, set(found["day"].to_list()))
    urls = list(spec.notify.urls)
    if notify and urls:
        key = cache.events.address_key()
        known, rekeyed = _rekeyed(known, urls, key)
        _record(cache, spec.name, known, rekeyed)
        everyone = [address_id(u, key) for u in urls]
        for url in urls:
            pending = known.filter(pl.col("notified_at").is_null())
            ids, error = send(url, pending, tracker=spec.name, day=day, key=key, timeout=spec.notify.timeout)
            if error is not None:
                result.errors.append(error)
            if ids:
                known = _told(known, ids, address_id(url, key), everyone, now)
                _record(cache, spec.name, known, set(pending.filter(pl.col("event_id").is_in(ids))["day"].to_list()))
                result.notified[shown_address(url, key)] = len(ids)
    if digest:
        result.digest = keep_day_digest(spec, cache, service, day, month_spent=month_spent, ranks=read)
    return result


def write_digest(
    spec: TrackerSpec,
    cache: Cache,
    service: str,
    start: date,
    end: date,
    *,
    path: str | Path | None = None,
    month_spent: int | None = None,
) -> tuple[Path, ...]:
    """Write the digest of ``start`` to ``end`` (the events whose day is in it) at ``path`` (by default the
    spec's ``[notify] digest``, its ``{day}`` the period); the files written."""
    events = cache.events.read(spec.name, since=start, until=end)
    target = path if path is not None else spec.notify.digest
    if target is None:
        raise InvalidParameterError(
            "path", None, "a path for the digest, or a [notify] digest path in the spec", endpoint="track"
        )
    named = start.isoformat() if start == end else f"{start}_{end}"
    where = Path(str(target).format(tracker=spec.name, day=named))
    if month_spent is None:
        month_spent = month_spent_of(cache.ledger.read(), service, end)
    made = render_period(spec, cache, service, start, end, events=events, month_spent=month_spent)
    return tuple(made.write(where))


@user_facing
def events(
    cache_dir: Any = None,
    *,
    tracker: str | None = None,
    since: date | str | None = None,
    until: date | str | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> pl.DataFrame:
    """The events the trackers' alerts found, as a frame: offline, no token, from a folder or a bucket.

    ``tracker`` keeps one tracker's; ``since`` and ``until`` (a date or ``"YYYY-MM-DD"``, both
    included) bound the events' ``day``. Rows come by day, tracker, rule and id. A place with no
    cache raises :class:`~storeframes.NoCacheError` (see :func:`~storeframes.scan`), never 0 events.

    Output columns (:data:`~storeframes.cache.EVENT_SCHEMA`): ``event_id``, ``tracker``, ``alert``,
    ``rule``, ``day`` (date), ``since`` (date: the earlier day with data it was compared with),
    ``app_id``, ``keyword``, ``country``, ``language``, ``device``, ``target``, ``before``,
    ``after``, ``detail`` (the event in words), ``first_seen`` and ``notified_at``
    (datetime[μs, UTC]) and ``notified_to`` (list[str]: the ids of the addresses that have it).

    >>> import storeframes as sf
    >>> sf.events("tracking-cache", since="2026-11-01").select("day", "rule", "detail")  # doctest: +SKIP
    """
    first = None if since is None else parse_day("since", since, endpoint="events")
    last = None if until is None else parse_day("until", until, endpoint="events")
    if first is not None and last is not None and first > last:
        raise InvalidParameterError("since", since, f"a date on or before until={last}", endpoint="events")
    if tracker is not None and (not isinstance(tracker, str) or not tracker or "/" in tracker):
        raise InvalidParameterError("tracker", tracker, "a tracker's name, as in its spec", endpoint="events")
    return open_for(cache_dir, storage_options, what="events").events.read(tracker, since=first, until=last)
