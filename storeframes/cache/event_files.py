"""The alerts' events: what moved, one row per event, kept as ``events/tracker=<name>/day=<day>.parquet``.

A tracker's alert rules (:mod:`storeframes.track.alerts`) find events in what the cache keeps; each
is written once, with the day it happened on, and rewritten only to say to whom it was notified.
A day's events are one file, replaced whole (a reader sees the file before or after a write,
never half of one) by the holder of the tracker's lease alone. The files are plain Parquet: a
warehouse or DuckDB reads them as they are (``pl.scan_parquet("cache/events/**/*.parquet")``).

An event names the notification addresses that have it by an id that gives nothing of the address
away: a keyed HMAC of it (:func:`storeframes.track.rules.address_id`), whose key is the cache's own
(:data:`ADDRESS_KEY`, 32 random bytes written once, by whichever member writes it first: every member
of a team sharing the cache reads the same one, so an address has one id in the whole cache).
"""

from __future__ import annotations

import json
import secrets
from datetime import date

import polars as pl

from .._version import __version__
from ..errors import warn
from .files import CacheWarning, Files
from .layout import TABLE_FORMAT
from .parquet import parquet_bytes
from .stores import NotAFileError

__all__ = ["ADDRESS_KEY", "EVENT_SCHEMA", "EventFiles", "event_key"]

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


ADDRESS_KEY = "storeframes-address-key.json"
"""The file at the root of a cache holding the key of its notification addresses' ids
(``{"key": <64 hex digits>}``): made once, with the first judgement that tells an address."""


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
    """The alerts' events of a cache, as ``cache.events``: rows of :data:`EVENT_SCHEMA`, a file per tracker and day.

    >>> sf.Cache("cache").events.read("keywords", since=date(2026, 11, 1))  # doctest: +SKIP
    """

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

    def address_key(self) -> bytes:
        """The key of the notification addresses' ids: read, or made (32 random bytes) when the cache has none.

        Of members making it at once, one wins (a conditional write where the store has one) and every
        member reads back the one that stands. A key file that cannot be read as one is replaced, with a
        :class:`CacheWarning` (the ids change: an address may get its untold events once more). An OSError
        when the store cannot be read or written."""
        found = self._read_key()
        if isinstance(found, bytes):
            return found
        body = json.dumps({"key": secrets.token_hex(32), "written_by": f"storeframes {__version__}"}).encode()
        self._files.mark()
        if found == "damaged":
            said = f"the notification addresses' key {ADDRESS_KEY} in the cache at {self._files.location}"
            warn(
                f"{said} is not one storeframes wrote: a new one replaces it (addresses not told yet may get "
                "their events once more)",
                CacheWarning,
            )
            self._files.storage.put(ADDRESS_KEY, body)
        else:
            try:
                self._files.storage.put_if_absent(ADDRESS_KEY, body)
            except OSError:  # a bucket without conditional writes: the race is lost to whoever writes last
                if not isinstance(self._read_key(), bytes):
                    self._files.storage.put(ADDRESS_KEY, body)
        again = self._read_key()
        return again if isinstance(again, bytes) else bytes.fromhex(json.loads(body)["key"])

    def _read_key(self) -> bytes | str:
        """The key kept, ``"absent"`` or ``"damaged"``."""
        try:
            data = self._files.read(ADDRESS_KEY, 4096)
        except FileNotFoundError:
            return "absent"
        except (ValueError, NotAFileError):
            return "damaged"
        try:
            key = bytes.fromhex(json.loads(data)["key"])
        except (ValueError, TypeError, KeyError):
            return "damaged"
        return key if len(key) >= 16 else "damaged"

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
