"""The ``anomaly`` rule: a tracked app's rank far from its weekday's usual, told once per event, with its likely cause.

::

    [[alert]]
    rule = "anomaly"
    apps = ["6441354028"]
    keywords = ["photo editor"]   # default: every keyword the tracker follows
    threshold = 3.0               # the robust z past which a day is anomalous
    weeks = 4                     # the baseline: the median of the same weekday over the weeks before
    min_move = 5                  # and the fewest places moved from it
    within = 20                   # judged where the rank or its baseline is in the top 20

The kept ranks (:func:`~storeframes.track.judging.rank_frame`) of the rule's apps and keywords go to
:func:`~storeframes.rank_anomalies` with the rule's ``threshold``, ``weeks``, ``min_move`` and ``within``, the tracker's
kept listing changes (of every app it follows through a ``metadata`` or ``changes`` item: its own and
its competitors') as ``changes=`` and its kept searches with ads (of its ``search_ads`` items) as
``ads=``. An event is a run of anomalous days in one direction (days with data: a hole does not break
it), keyed by its keyword, app, place, first day and direction: it fires once, dated on its first day,
and the run's later days fire nothing. Never on a day without data: ``no_data`` and ``not_fetched``
days are never rows of ``rank_anomalies`` and never in a baseline, so a hole in what is kept is not a
move. Its words carry the explanation: the rank and the move, the baseline (the median of how many
weekdays), the spread and the z, what the data lacked (a weekday left out of the baseline, the days
without data just before the event, the days before anything was kept), and the likely cause (the
nearest listing change before it of the app, or of a competitor ranked ahead of it: their ranks go to
``rank_anomalies`` beside the app's; an app new in the ads that day); an app is named by its title and id
where the cache keeps its metadata, as in the other rules' events.

A judgement reads the days it judges (:data:`~storeframes.track.judging.ALERT_DAYS`), the
:data:`~storeframes.track.judging.BASELINE_LEAD` days before them (whose own baselines say whether a
run began before the days judged: such a run was told before, or is history) and ``weeks`` x 7 days
of baselines before those: 42 days of kept ranks with the default 4 weeks; the listing changes and
the searches with ads of those days and the :data:`CAUSE_DAYS` before them. A run that crosses a hole
of more than :data:`~storeframes.track.judging.BASELINE_LEAD` days before the days judged is judged
afresh after it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, timedelta
from typing import Any

import polars as pl

from ..analysis import rank_anomalies
from ..kept.app_changes import kept_changes
from ..kept.search_ranks import of_pairs
from ..kept.snapshots import snapshots
from ..ranks import rank_history
from .judging import BASELINE_LEAD, Judged, app_names, event_row, followed_pairs, kept_rank_days, place_words
from .rules import Alert
from .spec import TrackerSpec, followed

__all__ = ["CAUSE_DAYS", "anomaly_events", "anomaly_words"]

CAUSE_DAYS = 7
"""The days before an anomaly whose listing changes may be its cause (``rank_anomalies``' ``days``)."""

_EMPTY = ("no_data", "not_fetched")

_KEY = ("keyword", "app_id", "country", "language", "device", "event_start", "direction")
"""What makes an event one: its series, its first day and its direction."""


def _first_read(alert: Alert, at: Judged) -> date:
    """The first day of ranks the rule reads: its baseline's weeks before the lead days before the days judged."""
    return at.first - timedelta(days=7 * alert.weeks + BASELINE_LEAD)


def _listed(spec: TrackerSpec) -> list[str]:
    """The apps the tracker follows through a metadata or changes item: its own and its competitors'."""
    found = [a for item in spec.items if item.endpoint in ("metadata", "changes") for a in followed(item.calls, "apps")]
    return list(dict.fromkeys(found))


def _changes(at: Judged, apps: list[str], start: date) -> pl.DataFrame | None:
    """The listing changes of ``apps`` kept from ``start`` to the day judged: the change history and those seen
    between metadata snapshots (None without apps)."""
    if not apps:
        return None
    history, seen = kept_changes(at.cache, at.service, apps, start, at.day)
    return pl.concat([history, seen])


def _ads(spec: TrackerSpec, at: Judged, start: date) -> pl.DataFrame | None:
    """The searches with ads kept from ``start`` to the day judged, of the tracker's ``search_ads`` items (None
    without one)."""
    pairs = followed_pairs(spec, ("search_ads",))
    if not pairs:
        return None
    kept = snapshots("search_ads", at.cache, start=start, end=at.day, service=at.service)
    return of_pairs(kept, pairs).collect()


def _number(value: float) -> str:
    return f"{value:.1f}".removesuffix(".0")


_SERIES = ("keyword", "app_id", "country", "language", "device")


def _statuses(history: pl.DataFrame, events: pl.DataFrame) -> dict[tuple[Any, ...], dict[date, str]]:
    """Each event's series' status by day (of the series with an event only: one pass over the ranks)."""
    wanted = history.join(events.select(_SERIES).unique(), on=list(_SERIES), nulls_equal=True)
    found: dict[tuple[Any, ...], dict[date, str]] = {}
    for row in wanted.select(*_SERIES, "date", "status").iter_rows():
        found.setdefault(row[:5], {})[row[5]] = row[6]
    return found


def _holes(status: Mapping[date, str], row: Mapping[str, Any], weeks: int) -> str:
    """What the event's baseline and the days before it lacked (``status``: its series' status by day): the
    weekdays of the baseline without data (those before the first day kept said apart), and the days without
    data just before the event's first day."""
    kept = [d for d, s in status.items() if s in ("ranked", "not_ranked")]
    began = min(kept) if kept else row["event_start"]
    start = row["event_start"]
    said = []
    weekdays = [start - timedelta(days=7 * n) for n in range(weeks, 0, -1)]
    lacking = [d for d in weekdays if d >= began and status.get(d) in _EMPTY]
    if lacking:
        said.append(f"no data on {', '.join(str(d) for d in lacking)}, left out of the baseline")
    if weekdays[0] < began:
        said.append(f"nothing kept before {began}")
    before = []
    day = start - timedelta(days=1)
    while day >= began and status.get(day) in _EMPTY:
        before.append(day)
        day -= timedelta(days=1)
    if before:
        first, last = min(before), max(before)
        gap = str(first) if first == last else f"{first} to {last} ({len(before)} days)"
        said.append(f"no data on {gap}, just before it")
    return "; ".join(said)


def anomaly_words(row: Mapping[str, Any], names: Mapping[str, str], *, weeks: int, holes: str = "") -> str:
    """An anomaly event in words: the rank and the move, the baseline it is far from, its z, what the data
    lacked (``holes``), and its likely cause (a listing change before it, a new advertiser that day); an app
    named by its title and id where ``names`` holds its title, as the other rules' events name it.

    >>> anomaly_words({"app_id": "42", "keyword": "photo editor", "country": "us", "device": "iphone",
    ...                "rank": 3, "status": "ranked", "baseline": 12.0, "spread": 1.5, "z": -6.0, "move": 9,
    ...                "direction": "up", "event_start": date(2026, 11, 9), "baseline_days": 4,
    ...                "cause_app_id": "42", "cause_date": date(2026, 11, 6), "cause_targets": "title",
    ...                "new_advertisers": None}, {}, weeks=4)
    "42 rose to 3 for 'photo editor' (us, iphone): 9 places up from 12, the median of 4 Mondays before (spread 1.5, z -6.0); likely cause: it changed its title on 2026-11-06"
    """
    app, direction = row["app_id"], row["direction"]
    where = f"for '{row['keyword']}' ({place_words(row)})"
    if row["rank"] is None:
        now = f"{app} fell out of the results {where}"
    else:
        now = f"{app} {'rose' if direction == 'up' else 'fell'} to {row['rank']} {where}"
    weekday = f"{row['event_start']:%A}s"
    counted = row["baseline_days"]
    of = f"{counted} {weekday}" if counted == weeks else f"{counted} of the {weeks} {weekday}"
    places = abs(row["move"]) if row["move"] is not None else None
    moved = f"{places} places {direction}" if places is not None else f"{direction}"
    said = (
        f"{now}: {moved} from {_number(row['baseline'])}, the median of {of} before "
        f"(spread {_number(row['spread'])}, z {row['z']:+.1f})"
    )
    if holes:
        said += f"; {holes}"
    causes = []
    if row.get("cause_app_id") is not None:
        who = "it" if row["cause_app_id"] == app else _named(row["cause_app_id"], names)
        what = row.get("cause_targets") or "listing"
        causes.append(f"{who} changed its {what} on {row['cause_date']}")
    advertisers = row.get("new_advertisers") or []
    if advertisers:
        shown = ", ".join(_named(a, names) for a in advertisers)
        causes.append(f"new in the ads that day: {shown}")
    if causes:
        said += "; likely cause: " + "; ".join(causes)
    return said


def _named(app: str, names: Mapping[str, str]) -> str:
    return f"{names[app]} ({app})" if app in names else app


def anomaly_events(spec: TrackerSpec, alerts: Sequence[Alert], at: Judged) -> list[dict[str, Any]]:
    """The events of ``spec``'s ``anomaly`` rules on the days judged: one per run of anomalous days (of a keyword,
    app and place, in one direction) whose first day is judged, dated on that day.

    >>> anomaly_events(spec, [alert], at)  # doctest: +SKIP
    """
    reach = min(_first_read(alert, at) for alert in alerts)
    cause_from = at.first - timedelta(days=BASELINE_LEAD + CAUSE_DAYS)
    listed = _listed(spec)
    watched = sorted({*listed, *(a for alert in alerts for a in alert.apps)}) if listed else []
    changes = _changes(at, watched, cause_from)
    ads = _ads(spec, at, cause_from)
    kept = kept_rank_days(spec, at, reach)
    rows: list[dict[str, Any]] = []
    for alert in alerts:
        start = _first_read(alert, at)
        chosen = kept.filter(pl.col("date") >= start)
        if alert.keywords:
            chosen = chosen.filter(pl.col("keyword").str.to_lowercase().is_in([k.lower() for k in alert.keywords]))
        if chosen.is_empty():
            continue
        # the competitors' ranks beside the apps': a competitor's change is a cause where it ranks ahead of the app
        history = rank_history(chosen, list(dict.fromkeys([*alert.apps, *listed])), start=start, end=at.day)
        found = rank_anomalies(
            history,
            threshold=alert.threshold,
            weeks=alert.weeks,
            min_move=alert.min_move,
            within=alert.within,
            changes=changes,
            ads=ads,
            days=CAUSE_DAYS,
        ).filter(pl.col("app_id").is_in(list(alert.apps)))
        # each event on its first day, when that day is judged: a run that began before is an event told before
        firsts = found.filter((pl.col("date") == pl.col("event_start")) & (pl.col("event_start") >= at.first))
        if firsts.is_empty():
            continue
        others = {a for n in firsts["new_advertisers"].to_list() if n for a in n}
        names = app_names(at.cache, at.service, sorted(others | set(firsts["cause_app_id"].drop_nulls().to_list())))
        statuses = _statuses(history, firsts)
        for row in firsts.sort("event_start", *_SERIES, "direction").iter_rows(named=True):
            holes = _holes(statuses.get(tuple(row[k] for k in _SERIES), {}), row, alert.weeks)
            rows.append(
                event_row(
                    spec,
                    alert,
                    at,
                    row["event_start"],
                    key=tuple(row[k] for k in _KEY),
                    place=row,
                    since=row["event_start"] - timedelta(days=7 * alert.weeks),
                    target=row["direction"],
                    before=_number(row["baseline"]),
                    after=None if row["rank"] is None else str(row["rank"]),
                    detail=anomaly_words(row, names, weeks=alert.weeks, holes=holes),
                )
            )
    return rows
