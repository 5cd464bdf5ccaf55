"""The alerts' events: what moved, one row per event, kept as ``events/tracker=<name>/day=<day>.parquet``.

A tracker's alert rules (:mod:`storeframes.track.alerts`) find events in what the cache keeps; each
is written once, with the day it happened on, and rewritten only to say to whom it was notified.
A day's events are one file, replaced whole (a reader sees the file before or after a write,
never half of one) by the holder of the tracker's lease alone. The files are plain Parquet: a
warehouse or DuckDB reads them as they are (``pl.scan_parquet("cache/events/**/*.parquet")``).
"""

from __future__ import annotations

from datetime import date

import polars as pl

from .._version import __version__
from ..errors import warn
from .files import CacheWarning, Files
from .layout import TABLE_FORMAT
from .parquet import parquet_bytes

__all__ = ["EVENT_SCHEMA", "EventFiles", "event_key"]

EVENT_SCHEMA = pl.Schema(
    {
        "event_id": pl.String(),
        "tracker": pl.String(),
        "alert": pl.String(),
        "rule": pl.String(),
        "day": pl.Date(),
        "since": pl.Date(),
        "app_id": pl.String(),
        "keyword": pl.String(),
        "country": pl.String(),
        "language": pl.String(),
        "device": pl.String(),
        "target": pl.String(),
        "before": pl.String(),
        "after": pl.String(),
        "detail": pl.String(),
        "first_seen": pl.Datetime("us", "UTC"),
        "notified_at": pl.Datetime("us", "UTC"),
        "notified_to": pl.List(pl.String()),
    }
)
"""One row per event: ``event_id`` (stable: the same move found again has the same id), ``tracker``,
``alert`` (the rule's name in the spec) and ``rule``, ``day`` (when it happened, as the data dates
it), ``since`` (the earlier day with data it was compared with; a gap between them is a stretch
with no data), where (``app_id``, ``keyword``, ``country``, ``language``, ``device``; null where
the rule has none), ``target`` (what changed: a listing's field, an unknown field's name),
``before`` and ``after`` (as text: ranks as digits, null for not ranked), ``detail`` (the event in
words), ``first_seen`` (when it was found), ``notified_at`` (when every notification address had it;
null until then) and ``notified_to`` (the addresses that have it, by their ids)."""


def event_key(tracker: str, day: date) -> str:
    """The name of the file of ``tracker``'s events of ``day``."""
    return f"events/tracker={tracker}/day={day.isoformat()}.parquet"


def _day_of(key: str) -> date | None:
    name = key.rsplit("/", 1)[-1]
    if not (name.startswith("day=") and name.endswith(".parquet")):
        return None
    try:
        return date.fromisoformat(name[4:-8])
    except ValueError:
        return None


class EventFiles:
    """The events of a cache (see :meth:`storeframes.cache.Cache.write_events` and :meth:`~storeframes.cache.Cache.read_events`)."""

    def __init__(self, files: Files):
        self._files = files

    def write(self, tracker: str, day: date, rows: pl.DataFrame) -> bool:
        """Keep ``rows`` as the whole of ``tracker``'s events of ``day``; False, with a warning, when it cannot."""
        frame = rows.select([pl.col(n).cast(t) for n, t in EVENT_SCHEMA.items()]).sort("rule", "event_id")
        meta = {"storeframes.version": __version__, "storeframes.format": str(TABLE_FORMAT)}
        try:
            self._files.mark()
            self._files.storage.put(event_key(tracker, day), parquet_bytes(frame, meta, arrow=False))
        except OSError as exc:
            warn(f"could not write the events to the cache at {self._files.location}: {exc}", CacheWarning)
            return False
        return True

    def read(self, tracker: str | None = None, *, since: date | None = None, until: date | None = None) -> pl.DataFrame:
        """The events (of one tracker, of the days from ``since`` to ``until``), by day, tracker and rule."""
        prefix = f"events/tracker={tracker}/" if tracker is not None else "events/"
        keys = [k for k in self._files.keys(prefix) if k.count("/") == 2 and _within(_day_of(k), since, until)]
        frames = self._files.read_tables(keys, EVENT_SCHEMA)
        if not frames:
            return pl.DataFrame(schema=EVENT_SCHEMA)
        return pl.concat(frames).sort("day", "tracker", "rule", "event_id")


def _within(day: date | None, since: date | None, until: date | None) -> bool:
    return day is not None and (since is None or day >= since) and (until is None or day <= until)
