"""The alert rules judged on what the cache keeps: each rule's events of the last days, none on missing data.

Every rule reads kept answers only (nothing is sent): the live search's snapshots (or the
search history, where only history is tracked) for the rank rules (``anomaly`` judged by
:func:`~storeframes.rank_anomalies`, in :mod:`~storeframes.track.anomaly_rule`), the change history
and the metadata snapshots for listing changes, the ads' snapshots for new advertisers, the
ledger for the budget, and the kept answers themselves for fields storeframes does not know.

A day with no data is never an event: ranks are compared day with day *with data*
(:func:`~storeframes.rank_history`'s ``no_data`` days, a day the run failed or an answer that
left an app out, are skipped), and an event after a gap says so. Each event has a stable id,
so the same move found again (by a rerun, another machine, a later run) is the same event.

Each rule reads a bounded window of what is kept, chosen through the cache's index (the answers of
those days only): ``rank_drop`` and ``top`` the ranks of the
:data:`~storeframes.track.judging.ALERT_DAYS` judged and the :data:`~storeframes.track.judging.GAP_DAYS`
before them (21 days: a judged day's last day with data may lie that far back, and the top rule's side
of the line starts with the first day read); ``listing_change`` the change history of the days judged
and the metadata snapshots from the last one before them; ``unknown_field`` the answers of the days
judged; ``budget`` the ledger's month. ``new_advertiser`` alone reads every day kept of the searches
with ads, as "for the first time" is of all of them; ``anomaly`` its baseline's weeks before the days
judged (:mod:`~storeframes.track.anomaly_rule`). The rank rules' days are read once, the widest
window of them (:func:`~storeframes.track.judging.kept_rank_days`); the day's digest shows a part of
them, and a run's digest takes them from its judgement (:class:`~storeframes.track.judging.RanksRead`).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from datetime import date
from typing import Any

import polars as pl

from ..cache import EVENT_SCHEMA, Cache
from ..cache.compaction import read_many
from ..kept.app_changes import kept_changes
from ..kept.search_ranks import of_pairs
from ..kept.snapshots import snapshots
from ..kept.tables import TABLES, endpoints_of
from ..ranks import rank_history
from .anomaly_rule import anomaly_events
from .judging import (
    Judged,
    app_names,
    event_row,
    followed_pairs,
    gap_words,
    kept_rank_days,
    place_words,
    ranks_from,
)
from .rules import Alert
from .spec import TrackerSpec
from .wording import change_words, shown_values

__all__ = ["find_events", "first_run"]

_UNKNOWN = re.compile(r"does not know at (?P<where>.+?), [^:]*: (?P<names>.+)$")


_SERIES = ["keyword", "country", "language", "device", "app_id"]


def _drops(alert: Alert) -> pl.Expr:
    """Whether a day with data (``rank``) and the day with data before it (``was``) make a ``rank_drop`` fire."""
    was, rank = pl.col("was"), pl.col("rank")
    return was.is_not_null() & (was <= alert.within) & (rank.is_null() | (rank - was >= alert.places))


def _rank_events(spec: TrackerSpec, alerts: Sequence[Alert], at: Judged) -> list[dict[str, Any]]:
    frame = kept_rank_days(spec, at, at.reach)
    rows: list[dict[str, Any]] = []
    for alert in alerts:
        chosen = frame
        if alert.keywords:
            chosen = frame.filter(pl.col("keyword").str.to_lowercase().is_in([k.lower() for k in alert.keywords]))
        if chosen.is_empty():
            continue
        # each day with data beside the day with data before it, of the same keyword, place and app: the
        # days with no data (no_data) are left out first, so a gap is stepped over, never compared with
        days = (
            rank_history(chosen, list(alert.apps), start=at.reach, end=at.day)
            .filter(pl.col("status") != "no_data")
            .sort([*_SERIES, "date"], nulls_last=True)
        )
        if alert.rule == "top":
            rows += _top_events(spec, alert, at, days)
            continue
        paired = days.with_columns(
            since=pl.col("date").shift(1).over(_SERIES),
            was=pl.col("rank").shift(1).over(_SERIES),
            results_before=pl.col("results").shift(1).over(_SERIES),
        ).filter(pl.col("since").is_not_null() & (pl.col("date") >= at.first) & _drops(alert))
        for row in paired.iter_rows(named=True):
            before = {"rank": row["was"], "results": row["results_before"]}
            rows.append(
                event_row(
                    spec,
                    alert,
                    at,
                    row["date"],
                    since=row["since"],
                    place=row,
                    before=_text(row["was"]),
                    after=_text(row["rank"]),
                    detail=_rank_move(alert, before, row) + gap_words(row["since"], row["date"]),
                )
            )
    return rows


def _inside(alert: Alert, rank: int | None) -> bool:
    return rank is not None and rank <= alert.n


def _firm(alert: Alert, rank: int | None) -> bool:
    """Whether ``rank`` is past the top ``n``'s line by the alert's margin (on either side)."""
    if rank is not None and rank <= alert.n:
        return rank <= alert.n - alert.margin
    return rank is None or rank > alert.n + alert.margin


def _top_events(spec: TrackerSpec, alert: Alert, at: Judged, days: pl.DataFrame) -> list[dict[str, Any]]:
    """The entries and exits of the top ``n``, day with data by day with data: an app's side of the line is
    the one it was last told on (its first day read is where it starts); a crossing fires on its day when it
    passes the line by the margin, else on the next day with data that finds it still past the line."""
    rows: list[dict[str, Any]] = []
    for _, series in days.group_by(_SERIES, maintain_order=True):
        side: bool | None = None
        anchor: dict[str, Any] = {}  # the last day with data on the side told
        crossed: dict[str, Any] | None = None  # a day past the line, not by the margin, not yet told
        for row in series.iter_rows(named=True):
            inside = _inside(alert, row["rank"])
            if side is None or inside == side:
                side, anchor, crossed = inside, row, None
                continue
            if not _firm(alert, row["rank"]) and crossed is None:
                crossed = row
                continue
            if row["date"] >= at.first:
                first = crossed or row
                detail = _rank_move(alert, anchor, first)
                if crossed is not None:  # passed by less than the margin: told when it stayed past the line
                    detail += f" on {first['date']}, then {_shown(row['rank'], row['results'])} on {row['date']}"
                detail += gap_words(anchor["date"], first["date"])
                before, after = _text(anchor["rank"]), _text(row["rank"])
                since = anchor["date"]
                rows.append(
                    event_row(
                        spec, alert, at, row["date"], since=since, place=row, before=before, after=after, detail=detail
                    )
                )
            side, anchor, crossed = inside, row, None
    return rows


def _text(rank: int | None) -> str | None:
    return None if rank is None else str(rank)


def _shown(rank: int | None, results: int | None) -> str:
    return str(rank) if rank is not None else f"not ranked (not in the {results} results)"


def _rank_move(alert: Alert, before: Mapping[str, Any], now: Mapping[str, Any]) -> str:
    """The move in words (``before`` and ``now``: the rank and the results of the two days)."""
    was, rank = before["rank"], now["rank"]
    where = f"for '{now['keyword']}' ({place_words(now)})"
    if alert.rule == "rank_drop":
        return f"{now['app_id']} fell from {was} to {_shown(rank, now['results'])} {where}"
    moved = "entered" if rank is not None and rank <= alert.n else "left"
    return f"{now['app_id']} {moved} the top {alert.n} {where}: {_shown(was, before['results'])} -> {_shown(rank, now['results'])}"


# -- listing changes -------------------------------------------------------------------------------------


_ALSO = {"description": "long_description", "privacy": "privacy_info"}
"""The change history's name of a target, where it differs from the one a rule names."""


def _matching(targets: Iterable[str]) -> set[str]:
    wanted = set(targets)
    return wanted | {_ALSO[t] for t in wanted if t in _ALSO}


def _listing_events(
    spec: TrackerSpec, alerts: Sequence[Alert], at: Judged, existing: pl.DataFrame
) -> list[dict[str, Any]]:
    apps = sorted({a for alert in alerts for a in alert.apps})
    history, seen = kept_changes(at.cache, at.service, apps, at.first, at.day)
    rows: list[dict[str, Any]] = []
    kept = [r for r in existing.filter(pl.col("rule") == "listing_change").iter_rows(named=True)]
    for alert in alerts:
        targets = _matching(alert.targets)
        said = [r for r in kept if r["alert"] == alert.name]
        for source, frame in (("history", history), ("snapshot", _screens_together(seen))):
            chosen = frame.filter(pl.col("app_id").is_in(list(alert.apps)) & pl.col("target").is_in(list(targets)))
            for change in chosen.sort("app_id", "date", "target").iter_rows(named=True):
                before, after = shown_values(change)
                detail = change_words(change, source, place_words(change))
                row = event_row(
                    spec,
                    alert,
                    at,
                    change["date"],
                    since=change["since"],
                    place=change,
                    target=change["target"],
                    before=before,
                    after=after,
                    detail=detail,
                )
                if any(_same_change(row, other) for other in said):
                    continue
                said.append(row)
                rows.append(row)
    return rows


def _screens_together(seen: pl.DataFrame) -> pl.DataFrame:
    """Observed changes with one screenshots row per app, scope and day (the device keys in ``device_key``)."""
    screens = seen.filter(pl.col("target") == "screenshots")
    if screens.is_empty():
        return seen
    keys = ["app_id", "country", "language", "device", "date", "target"]
    merged = screens.group_by(keys, maintain_order=True).agg(
        pl.col("old_value", "new_value", "old_size", "new_size").first(),
        pl.col("since").min(),
        pl.col("device_key").sort().str.join(", "),
    )
    return pl.concat([seen.filter(pl.col("target") != "screenshots"), merged.select(seen.columns)])


_SAME = {"long_description": "description"}


def _same_change(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two listing events are one change, seen by the change history and by snapshots (the history
    names an iphone/ipad description ``long_description``, the snapshots ``description``)."""
    if any(a[k] != b[k] for k in ("app_id", "country", "device")) or _SAME.get(a["target"], a["target"]) != _SAME.get(
        b["target"], b["target"]
    ):
        return False
    if abs((a["day"] - b["day"]).days) <= 1:
        return True
    return any(x["since"] is not None and x["since"] < y["day"] <= x["day"] for x, y in ((a, b), (b, a)))


# -- advertisers, budget, unknown fields -----------------------------------------------------------------


def _advertiser_events(spec: TrackerSpec, alerts: Sequence[Alert], at: Judged) -> list[dict[str, Any]]:
    pairs = followed_pairs(spec, ("search_ads",))
    ads = of_pairs(
        snapshots("search_ads", at.cache, end=at.day, service=at.service).filter(pl.col("is_ad").fill_null(False)),
        pairs,
    ).collect()
    rows: list[dict[str, Any]] = []
    scope = ["keyword", "country", "language", "device"]
    for alert in alerts:
        chosen = ads
        if alert.keywords:
            chosen = ads.filter(pl.col("keyword").str.to_lowercase().is_in([k.lower() for k in alert.keywords]))
        for _, series in chosen.sort("snapshot_date", "rank").group_by(scope, maintain_order=True):
            known: set[str] = set()
            earlier: date | None = None
            for (day,), placed in series.group_by("snapshot_date", maintain_order=True):
                for ad in placed.unique("app_id", keep="first", maintain_order=True).iter_rows(named=True):
                    if earlier is not None and day >= at.first and ad["app_id"] not in known:
                        where = f"'{ad['keyword']}' ({place_words(ad)})"
                        rows.append(
                            event_row(
                                spec,
                                alert,
                                at,
                                day,
                                since=earlier,
                                place=ad,
                                after=str(ad["rank"]),
                                detail=f"{ad['app_id']} bought an ad on {where} for the first time, at place "
                                f"{ad['rank']}",
                            )
                        )
                known |= set(placed["app_id"].to_list())
                earlier = day
    return rows


def _budget_events(spec: TrackerSpec, alerts: Sequence[Alert], at: Judged) -> list[dict[str, Any]]:
    budget = spec.budget_per_month
    if not budget:
        return []
    share = at.month_spent / budget
    month = f"{at.day:%Y-%m}"
    return [
        event_row(
            spec,
            alert,
            at,
            at.day,
            key=(month,),
            target="budget_per_month",
            after=f"{share:.2f}",
            detail=f"{at.month_spent:,} of the {budget:,} credits of {month} spent ({share:.0%}), past {alert.at:.0%}",
        )
        for alert in alerts
        if at.month_spent >= alert.at * budget
    ]


def _unknown_in(table: Any, batch: list[Any]) -> list[tuple[str, str]]:
    """(where, name) of every field or change target ``table``'s flattener does not know in ``batch`` (one walk;
    an answer the flattener refuses is not this rule's business)."""
    from ..flatteners import UnknownFieldWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UnknownFieldWarning)
        try:
            table.build_each(batch)
        except Exception:
            if len(batch) > 1:
                return [found for response in batch for found in _unknown_in(table, [response])]
            return []
    found = []
    for warning in caught:
        matched = _UNKNOWN.search(str(warning.message)) if warning.category is UnknownFieldWarning else None
        if matched is not None:
            found += [(matched.group("where"), name) for name in matched.group("names").split(", ")]
    return found


def _unknown_events(spec: TrackerSpec, alerts: Sequence[Alert], at: Judged) -> list[dict[str, Any]]:
    endpoints = sorted({item.endpoint for item in spec.items})
    batches: dict[tuple[str, date], list[Any]] = {}  # the kept answers of the days, by endpoint and day
    remote = at.cache.storage.capabilities.local_root is None  # a bucket: its GETs side by side, on a few threads
    for name in endpoints:
        days = [e for e in at.cache.entries(name) if e.service == at.service and at.first <= e.day <= at.day]
        for entry, response in read_many(at.cache.load, days) if remote else ((e, at.cache.load(e)) for e in days):
            if response is not None:
                batches.setdefault((name, entry.day), []).append(response)
    found: dict[tuple[str, str, str], date] = {}
    for (endpoint, day), batch in sorted(batches.items()):
        for table in TABLES.values():
            if endpoint in {ep.name for ep in endpoints_of(table)}:
                for where, name in _unknown_in(table, batch):
                    key = (endpoint, where, name)
                    found[key] = min(found.get(key, day), day)
    rows = []
    for alert in alerts:
        for (endpoint, where, name), day in sorted(found.items()):
            rows.append(
                event_row(
                    spec,
                    alert,
                    at,
                    day,
                    key=(endpoint, name),
                    target=name,
                    detail=f"the service sent '{name}', which storeframes does not know, at {where} (a {endpoint} "
                    f"answer of {day})",
                )
            )
    return rows


def first_run(cache: Cache, tracker: str) -> date | None:
    """The day of ``tracker``'s first run, by the cache's run log (None before any run): tracking began then.

    >>> first_run(open_for("tracking-cache", None), "photo-editors")  # doctest: +SKIP
    datetime.date(2026, 10, 22)
    """
    runs = cache.runs.read(tracker)
    return None if runs.is_empty() else runs["day"].min()  # type: ignore[return-value]


def find_events(spec: TrackerSpec, at: Judged, existing: pl.DataFrame) -> pl.DataFrame:
    """The events of ``spec``'s alerts on the days up to ``at.day`` that ``existing`` does not hold yet.

    None is dated before the tracker's first run (:func:`first_run`; ``at.day`` when it never ran): a
    change or a move from before tracking began is history, not news, although a first run's lookback
    or the service's change history holds it.
    """
    by_rule: dict[str, list[Alert]] = {}
    for alert in spec.alerts:
        by_rule.setdefault(alert.rule, []).append(alert)
    rows: list[dict[str, Any]] = []
    ranks = by_rule.get("rank_drop", []) + by_rule.get("top", [])
    start = ranks_from(spec, at)
    if start is not None:  # the widest window of the rank rules read once: each takes its days of it
        kept_rank_days(spec, at, start)
    if ranks:
        rows += _rank_events(spec, ranks, at)
    if "anomaly" in by_rule:
        rows += anomaly_events(spec, by_rule["anomaly"], at)
    if "listing_change" in by_rule:
        rows += _listing_events(spec, by_rule["listing_change"], at, existing)
    if "new_advertiser" in by_rule:
        rows += _advertiser_events(spec, by_rule["new_advertiser"], at)
    if "budget" in by_rule:
        rows += _budget_events(spec, by_rule["budget"], at)
    if "unknown_field" in by_rule:
        rows += _unknown_events(spec, by_rule["unknown_field"], at)
    frame = pl.DataFrame(rows, schema=EVENT_SCHEMA, orient="row") if rows else pl.DataFrame(schema=EVENT_SCHEMA)
    began = first_run(at.cache, spec.name) or at.day
    frame = frame.filter(pl.col("day") >= began)
    new = frame.unique("event_id", keep="first", maintain_order=True).filter(
        ~pl.col("event_id").is_in(existing["event_id"].to_list())
    )
    titles = app_names(at.cache, at.service, new["app_id"].drop_nulls().unique().to_list())
    if not titles:
        return new
    named = [  # "Photo Lab (6441354028) fell from 3 to 12 ...": the app's title where the cache keeps one
        f"{titles[app]} ({app}){detail[len(app) :]}" if app in titles and detail.startswith(app) else detail
        for app, detail in zip(new["app_id"], new["detail"], strict=True)
    ]
    return new.with_columns(detail=pl.Series(named, dtype=pl.String))
