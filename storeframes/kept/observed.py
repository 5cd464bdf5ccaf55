"""The changes a cache saw itself: consecutive metadata snapshots of each app, compared.

The service keeps a change history of its own (:meth:`~storeframes.Client.changes_frame`);
a cache that fetched an app's metadata day after day holds a second one, found by
comparing each day's snapshot (see :func:`storeframes.snapshots`) with the one before.
:func:`observed_changes` gives it in the shape of ``changes_frame``, so the two stack, and
reads what a scan does: offline, with no token, from a folder or a bucket.

>>> import storeframes as sf
>>> sf.observed_changes("s3://team-bucket/storeframes", apps="3233849169", start="2026-11-01")  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

import polars as pl

from .._tracebacks import user_facing
from ..answers import Entry
from ..errors import InvalidParameterError
from ..flatteners.changes import value_text
from ..schemas import CHANGES, Column, TableSchema
from .snapshots import SNAPSHOT_TABLES
from .tables import SNAPSHOT_DATE, as_date, daily_chooser, endpoints_of, lazy_rows, newest, open_for, service_of

__all__ = ["OBSERVED_CHANGES", "OBSERVED_TARGETS", "observed_changes"]

_WHAT = "observed_changes"
_KEYS = ["app_id", "country", "language", "device"]

OBSERVED_CHANGES = TableSchema(
    "observed_changes",
    "one row per change found between two consecutive snapshots of an app's metadata",
    (
        *CHANGES.columns,
        Column("source", pl.String(), "where the row comes from: always snapshot"),
        Column("since", pl.Date(), "the day of the snapshot before: the change happened after it, on or before date"),
        Column("device_key", pl.String(), "screenshots changes: the device key whose screenshots changed, else null"),
    ),
)
"""The columns of :func:`observed_changes`: those of ``changes_frame`` (:data:`~storeframes.schemas.CHANGES`),
then ``source``, ``since`` and ``device_key``."""

_TEXT_TARGETS = {
    "title": "title",
    "subtitle": "subtitle",
    "description": "description",
    "short_description": "short_description",
    "long_description": "long_description",
    "promotional_text": "promotional_text",
    "icon": "icon_url",
    "price": "price",
    "size": "size_bytes",
    "version": "version",
}
"""The targets compared in the metadata table, with the column each compares."""

OBSERVED_TARGETS = (*_TEXT_TARGETS, "screenshots")
"""The targets :func:`observed_changes` compares."""


def _apps(apps: Any) -> list[str] | None:
    """``apps`` as a list of ids (None for every app); an empty list, or an id that is not text, refused."""
    allowed = "None (every app), an app id as text, or a non-empty list of them"
    if apps is None:
        return None
    ids = [apps] if isinstance(apps, str) else list(apps) if isinstance(apps, Sequence) else None
    if not ids or not all(isinstance(a, str) and a.strip() for a in ids):
        raise InvalidParameterError("apps", apps, allowed, endpoint=_WHAT)
    return [a.strip() for a in ids]


def _read_from(entries: list[Entry], apps: list[str] | None, start: date | None) -> date | None:
    """The first day to read so that each app's first snapshot on or after ``start`` has the one before
    it: the earliest of the last days before ``start`` on which an app (of ``apps``) had a snapshot."""
    if start is None:
        return None
    before = [e for e in entries if e.day < start]
    last: dict[tuple[str, Any], date] = {}
    by_id = {e.id: e for e in before}
    for entry_id, cells in newest(before, daily=True).items():
        entry = by_id[entry_id]
        for entity, _, _ in cells:
            if apps is None or entity in apps:
                key = (entry.scope, entity)
                last[key] = max(last.get(key, entry.day), entry.day)
    return min(last.values(), default=start)


def _day_rows(metadata: pl.DataFrame) -> pl.DataFrame:
    """One row per app, scope and day (the latest answer of the day), with the day before's values beside."""
    latest = metadata.sort("fetched_at").unique([*_KEYS, SNAPSHOT_DATE], keep="last", maintain_order=True)
    ordered = latest.sort([*_KEYS, SNAPSHOT_DATE], nulls_last=True)
    columns = ["fetched_at", SNAPSHOT_DATE, *sorted(set(_TEXT_TARGETS.values()))]
    return ordered.with_columns(pl.col(c).shift(1).over(_KEYS).alias(f"_old_{c}") for c in columns)


def _changed(pairs: pl.DataFrame, target: str) -> pl.DataFrame:
    """The rows of ``target`` where the day's value differs from the day before's (nulls compared as they are)."""
    column = _TEXT_TARGETS[target]
    new, old = pl.col(column), pl.col(f"_old_{column}")
    found = pairs.filter(old.ne_missing(new))
    size, icon = target == "size", target == "icon"
    none = pl.lit(None, pl.String)
    return found.select(
        *_KEYS,
        "fetched_at",
        pl.col(SNAPSHOT_DATE).alias("date"),
        pl.lit(target).alias("target"),
        "version",
        pl.col("version").alias("version_raw"),
        pl.lit(None, pl.Boolean).alias("is_ab_test"),
        old.cast(pl.String).alias("old_value"),
        new.cast(pl.String).alias("new_value"),
        none.alias("old_release_notes"),
        none.alias("new_release_notes"),
        (old if size else pl.lit(None, pl.Int64)).alias("old_size"),
        (new if size else pl.lit(None, pl.Int64)).alias("new_size"),
        (old if icon else none).alias("old_icon_url"),
        (new if icon else none).alias("new_icon_url"),
        pl.lit("snapshot").alias("source"),
        pl.col(f"_old_{SNAPSHOT_DATE}").alias("since"),
        none.alias("device_key"),
    )


def _screenshot_lists(screenshots: pl.DataFrame) -> dict[tuple[Any, ...], dict[str, str]]:
    """Each answer's screenshot URLs as compact JSON arrays, by device key, keyed by the app's scope and
    the answer's ``fetched_at``."""
    lists = screenshots.group_by([*_KEYS, "fetched_at", "device_key"]).agg(pl.col("url").sort_by("position"))
    held: dict[tuple[Any, ...], dict[str, str]] = {}
    for *keys, at, device_key, urls in lists.iter_rows():
        held.setdefault((*keys, at), {})[device_key] = value_text(urls) or "[]"
    return held


def _screenshot_changes(pairs: pl.DataFrame, screenshots: pl.DataFrame) -> pl.DataFrame:
    """One row per device key whose ordered screenshot URLs differ from the day before's; a device key
    one side lacks has an empty array there."""
    held = _screenshot_lists(screenshots)
    rows: dict[str, list[Any]] = {name: [] for name in OBSERVED_CHANGES.names}
    names = [*_KEYS, "fetched_at", SNAPSHOT_DATE, "version", "_old_fetched_at", f"_old_{SNAPSHOT_DATE}"]
    for *keys, at, day, version, old_at, since in pairs.select(names).iter_rows():
        old, new = held.get((*keys, old_at), {}), held.get((*keys, at), {})
        for device_key in sorted(old.keys() | new.keys(), key=lambda k: (k is None, k or "")):
            before, after = old.get(device_key, "[]"), new.get(device_key, "[]")
            if before == after:
                continue
            row = dict(zip(_KEYS, keys, strict=True)) | {"fetched_at": at, "date": day, "target": "screenshots"}
            row |= {"version": version, "version_raw": version, "old_value": before, "new_value": after}
            row |= {"source": "snapshot", "since": since, "device_key": device_key}
            for name, values in rows.items():
                values.append(row.get(name))
    return pl.DataFrame(rows, schema=OBSERVED_CHANGES.schema)


@user_facing
def observed_changes(
    cache_dir: Any = None,
    *,
    apps: str | Sequence[str] | None = None,
    start: date | str | None = None,
    end: date | str | None = None,
    service: str | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> pl.DataFrame:
    """The changes a cache saw: each app's metadata snapshots compared day to day, shaped like ``changes_frame``.

    Of each app in each scope (country, language, device), the metadata snapshot of a
    day (see :func:`~storeframes.snapshots`) is compared with the one of the last day
    before it that had one: a day with none (the app not fetched, left out of the
    answer, or unavailable) is passed over, and ``since`` shows the gap. Each field that
    differs gives a row dated the day the new value was first seen; a null on either
    side is compared as it is (null to a text is a change, null to null is not). An
    app's first snapshot gives no rows.

    The targets compared, with ``old_value`` and ``new_value`` as text: ``title``,
    ``subtitle``, ``description`` (iphone/ipad), ``short_description`` and
    ``long_description`` (android), ``promotional_text``, ``icon`` (the URLs, in
    ``old_icon_url`` and ``new_icon_url`` too), ``price`` (the price text), ``size``
    (digits, and ``old_size``/``new_size``), ``version`` (the version labels) and
    ``screenshots``: one row per device key whose ordered list of screenshot URLs
    changed, each side a compact JSON array of the URLs as ``changes_frame`` writes
    arrays (a device key one side lacks is an empty array there).

    ``apps`` is None (every app), an app id or a list of ids. ``start`` and ``end``
    (a :class:`~datetime.date` or an ISO text) bound ``date``, both included; the
    snapshot before ``start`` is still read, so the first day in range is compared too
    (only the days from the earliest such snapshot on are read). A bad value, or
    ``start`` after ``end``, is refused before the cache is opened. ``cache_dir``,
    ``service`` and ``storage_options`` are as for :func:`~storeframes.scan`: nothing is
    sent and no token is needed, and a place with no cache raises :class:`~storeframes.NoCacheError`.

    Output columns: those of ``changes_frame`` with its dtypes, in its order, then three.
    ``fetched_at`` is the answer of ``date``'s snapshot; ``version`` (and
    ``version_raw``) the version that snapshot shows (for a version change, the new
    one); ``is_ab_test`` and the release notes are null (a snapshot does not say).
    ``source`` is ``"snapshot"``, ``since`` (``pl.Date``) the day of the snapshot
    before, and ``device_key`` the screenshots' device key (null for other targets).
    The rows are sorted by app_id, country, language, device, date, target and
    device_key; with none, the frame is empty with these columns.

    >>> import storeframes as sf
    >>> sf.observed_changes("analysis-cache", apps=["3233849169"], start="2026-11-01").select(
    ...     "app_id", "date", "since", "target", "old_value", "new_value"
    ... )  # doctest: +SKIP
    """
    wanted = _apps(apps)
    first, last = as_date("start", start, what=_WHAT), as_date("end", end, what=_WHAT)
    if first is not None and last is not None and first > last:
        raise InvalidParameterError("start", start, f"a date on or before end={last.isoformat()}", endpoint=_WHAT)
    cache = open_for(cache_dir, storage_options, what="observed_changes")
    spec = SNAPSHOT_TABLES["metadata"]
    endpoints = {ep.name for ep in endpoints_of(spec)}
    entries = [e for name in sorted(endpoints) for e in cache.entries(name)]
    chosen = service_of(entries, service, what=_WHAT)
    choose = daily_chooser(endpoints, _read_from([e for e in entries if e.service == chosen], wanted, first), last)
    only = pl.col("app_id").is_in(wanted) if wanted is not None else pl.lit(True)
    fields = sorted(set(_TEXT_TARGETS.values()))
    metadata = lazy_rows(cache, spec, chosen, choose, what=_WHAT, dated=True)
    days = _day_rows(metadata.filter(only).select(SNAPSHOT_DATE, *_KEYS, "fetched_at", *fields).collect())
    pairs = days.filter(pl.col(f"_old_{SNAPSHOT_DATE}").is_not_null())
    if first is not None:
        pairs = pairs.filter(pl.col(SNAPSHOT_DATE) >= first)
    found = [_changed(pairs, target) for target in _TEXT_TARGETS]
    if not pairs.is_empty():
        shots = lazy_rows(cache, SNAPSHOT_TABLES["screenshots"], chosen, choose, what=_WHAT, dated=True)
        columns = [*_KEYS, "fetched_at", "device_key", "position", "url"]
        found.append(_screenshot_changes(pairs, shots.filter(only).select(columns).collect()))
    order = [*_KEYS, "date", "target", "device_key"]
    typed = [pl.col(name).cast(dtype) for name, dtype in OBSERVED_CHANGES.schema.items()]
    return pl.concat(found).select(typed).sort(order, nulls_last=True)
