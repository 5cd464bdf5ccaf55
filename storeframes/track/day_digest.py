"""The digest of the day, kept in the cache; and which days a tracker fetched, to tell "not fetched" from "no data".

One digest of the day per tracker: the run that finishes the day's work (under the tracker's lease,
after its row in the run log is final) renders it and keeps it in the cache
(``digests/tracker=<name>/day=<day>.parquet``: a folder, or the team's bucket), replacing what an
earlier run of the day kept, so the last run of the day leaves the whole day: every run's credits,
the finished runs, the events first seen that day. Anyone reads it back (:func:`kept_digest`,
``storeframes track digest SPEC --day D``); a day with none kept is a :class:`~storeframes.errors.DigestNotKeptError`.

A day is *fetched* for a keyword and country when the cache's index holds an answer of it: a live
search (``search``, ``search_ads``) taken that day where the tracker follows the keyword live, else
a search history that covers the day. Any other day is *not fetched* (a run over budget or failed,
or no run), which is not a day without data: :func:`fetched_days` feeds
:func:`~storeframes.rank_history`'s ``fetched=``, so its frame, the charts and the digest say which.

>>> kept_digest(load_spec("tracking.toml"), "2026-11-05").markdown  # doctest: +SKIP
'# photo-editors on 2026-11-05 ...'
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl

from ..analysis import standings_table, store_currency
from ..cache import Cache, open_cache
from ..catalog import parse_day
from ..errors import CacheUnavailableError, DigestNotKeptError, InvalidParameterError, StoreframesError
from ..kept.scan import scan
from ..ranks import rank_history
from ..schemas import RANK_HISTORY
from .digest import Digest, Spend, render_digest
from .digest_charts import CHARTED
from .digest_standings import digest_standings
from .judging import (
    LIVE,
    STANDING_DAYS,
    RanksRead,
    app_names,
    followed_keywords,
    followed_pairs,
    rank_frame,
    tracked_apps,
)
from .spec import TrackerSpec

__all__ = [
    "fetched_days",
    "keep_after_run",
    "keep_day_digest",
    "kept_digest",
    "not_fetched",
    "price_currencies",
    "render_period",
]

CHART_DAYS = 14
"""Days before a digest's period its rank charts show, for context."""

_SEEN_WITHIN = 62
"""Days of events read back for a day's digest: an event first seen on a day may be of a day up to this long before."""


def _pairs(spec: TrackerSpec) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """(keyword in lower case, country) followed live, and those followed by their history alone."""
    live = followed_pairs(spec, LIVE)
    return live, followed_pairs(spec, ("search_history",)) - live


def fetched_days(spec: TrackerSpec, cache: Cache, service: str, start: date, end: date) -> pl.DataFrame:
    """The days from ``start`` to ``end`` each followed keyword (``keyword``, ``country``) was fetched, by the
    cache's index: a live search taken that day where it is followed live, else a search history covering it.

    >>> fetched_days(spec, cache, "sandbox-0", date(2026, 11, 1), date(2026, 11, 30))  # doctest: +SKIP
    """
    live, history = _pairs(spec)
    rows: set[tuple[str, str, date]] = set()
    for endpoint, pairs in (("search", live), ("search_ads", live), ("search_history", history)):
        if not pairs:
            continue
        for entry in cache.entries(endpoint):
            if entry.service != service:
                continue
            country = str(entry.params.get("country", "us")).lower()
            for keyword, _, covered in entry.cells:
                day = entry.day if endpoint != "search_history" else covered
                if day is not None and start <= day <= end and (str(keyword).lower(), country) in pairs:
                    rows.add((str(keyword), country, day))  # as the kept frames spell it
    schema = {"keyword": pl.String, "country": pl.String, "date": pl.Date}
    return pl.DataFrame(sorted(rows), schema=schema, orient="row")


def not_fetched(spec: TrackerSpec, fetched: pl.DataFrame, start: date, end: date) -> dict[str, list[date]]:
    """Each followed keyword's days from ``start`` to ``end`` not fetched (a history's up to the day before
    ``end``: the service records a day once it is over), by a label such as ``"'photo editor' (us)"``.

    >>> not_fetched(spec, fetched_days(spec, cache, "sandbox-0", first, last), first, last)  # doctest: +SKIP
    {"'photo editor' (us)": [datetime.date(2026, 11, 11), ...]}
    """
    live, history = _pairs(spec)
    have = {(k.lower(), c, d) for k, c, d in fetched.select("keyword", "country", "date").iter_rows()}
    out: dict[str, list[date]] = {}
    for pair in sorted(live | history):
        last = end if pair in live else end - timedelta(days=1)
        days = [start + timedelta(days=n) for n in range((last - start).days + 1)]
        missing = [d for d in days if (*pair, d) not in have]
        if missing:
            out[f"'{pair[0]}' ({pair[1]})"] = missing
    return out


def price_currencies(cache: Cache, service: str, events: pl.DataFrame) -> dict[str, str]:
    """The currency of the store's prices in each country of ``events``' price changes, by the in-app purchases the
    cache keeps there (a store answers a country's prices in one currency; an app's own price comes without it),
    else the country's store currency (:func:`~storeframes.analysis.store_currency`). A country neither tells is
    left out: its prices say their currency is unknown.

    >>> price_currencies(cache, "sandbox-0", events)  # doctest: +SKIP
    {'us': 'usd'}
    """
    changed = events.filter((pl.col("rule") == "listing_change") & (pl.col("target") == "price"))
    countries = sorted(set(changed["country"].drop_nulls().to_list()))
    known = {c: code for c in countries if (code := store_currency(c)) is not None}
    if not countries or not cache.entries("metadata"):
        return known
    found = (
        scan("in_app_purchases", cache, service=service)
        .filter(pl.col("country").is_in(countries) & pl.col("currency").is_not_null())
        .sort("fetched_at")
        .select("country", "currency")
        .collect()
    )
    return known | {row["country"]: row["currency"].lower() for row in found.iter_rows(named=True)}


def render_period(
    spec: TrackerSpec,
    cache: Cache,
    service: str,
    start: date,
    end: date,
    *,
    events: pl.DataFrame,
    month_spent: int,
    day: date | None = None,
    read: RanksRead | None = None,
) -> Digest:
    """The digest of ``events`` from ``start`` to ``end``: the runs and credits of the period (of ``day`` alone
    for a digest of the day, and said so) from the run log, finished runs counted apart from those still
    ``running``, and the month of ``end`` so far (``month_spent``) beside the month budget; the
    rank charts of the apps that moved, days not fetched apart from days without data; the days not fetched.
    ``read``: what the run's judgement read of the ranks, the charts' days taken from it where it holds them.

    >>> render_period(spec, cache, "sandbox-0", first, last, events=found, month_spent=1_200)  # doctest: +SKIP
    """
    own = (day, day) if day is not None else (start, end)
    moved = events.filter(pl.col("rule").is_in(CHARTED))
    ranks = RANK_HISTORY.empty()
    earliest: date = min([*moved["day"].to_list(), start])
    reach = min(own[0], end - timedelta(days=STANDING_DAYS), earliest - timedelta(days=CHART_DAYS))
    asked = fetched_days(spec, cache, service, reach, end)  # once, for the charts, the standings and the holes
    if not moved.is_empty():
        first = earliest - timedelta(days=CHART_DAYS)
        held = read.within(first, end) if read is not None else None
        frame = held if held is not None else rank_frame(spec, cache, service, first, end)
        if not frame.is_empty():  # the charts begin with the data, not with days nothing was kept
            first = max(first, min(frame["date"].to_list()))
        ranks = rank_history(
            frame,
            moved["app_id"].unique().to_list(),
            keywords=moved["keyword"].unique().to_list(),
            start=first,
            end=end,
            fetched=asked.filter(pl.col("date") >= first),
        )
    runs = cache.runs.read(spec.name).filter(pl.col("day").is_between(*own) & (pl.col("kind") != "dry_run"))
    finished = runs.filter(pl.col("status") != "running")
    spend = Spend(
        month=f"{end:%Y-%m}",
        month_credits=month_spent,
        budget_per_month=spec.budget_per_month,
        runs=finished.height,
        runs_not_ok=finished.filter(pl.col("status") != "ok").height,
        period_credits=int(runs["credits_spent"].sum() or 0),
        runs_running=runs.height - finished.height,
        days=own,
    )
    standing = digest_standings(spec, cache, service, end, fetched=asked, read=read)
    apps = sorted(set(events["app_id"].drop_nulls().to_list()) | set(standing["app_id"].to_list()))
    holes = not_fetched(spec, asked.filter(pl.col("date") >= own[0]), *own)
    names = app_names(cache, service, apps)
    return render_digest(
        events,
        ranks,
        tracker=spec.name,
        start=start,
        end=end,
        spend=spend,
        app_names=names,
        not_fetched=holes,
        currencies=price_currencies(cache, service, events),
        standings=standings_table(standing, names=names) if tracked_apps(spec) and followed_keywords(spec) else None,
    )


def keep_day_digest(
    spec: TrackerSpec,
    cache: Cache,
    service: str,
    day: date,
    *,
    month_spent: int,
    run_id: str | None = None,
    ranks: RanksRead | None = None,
) -> tuple[Path, ...]:
    """Render ``spec``'s digest of ``day`` (the events first seen that day, the day's runs and credits) and keep
    it in the cache, replacing the day's earlier one; also write it at the spec's ``[notify] digest`` path, when
    it has one (the files written); ``ranks`` as ``read`` for :func:`render_period`. The caller holds the tracker's lease.
    A cache that does not take it is a
    :class:`~storeframes.errors.CacheUnavailableError`.

    >>> keep_day_digest(spec, cache, "sandbox-0", date(2026, 11, 5), month_spent=1_628)  # doctest: +SKIP
    ()
    """
    known = cache.events.read(spec.name, since=day - timedelta(days=_SEEN_WITHIN))
    today = known.filter(pl.col("first_seen").dt.date() == day)  # found that day, of that day or the days before
    first = min([day, *today["day"].to_list()])
    made = render_period(spec, cache, service, first, day, events=today, month_spent=month_spent, day=day, read=ranks)
    row = {
        "tracker": spec.name,
        "day": day,
        "written_at": datetime.now(UTC),
        "run_id": run_id,
        "host": socket.gethostname(),
        "markdown": made.markdown,
        "html": made.html,
        "images": [{"name": name, "png": data} for name, data in made.images.items()],
    }
    try:
        cache.digests.write(row)
    except OSError as exc:
        raise CacheUnavailableError(
            f"could not keep the digest of {day} in the cache at {cache.location}: {exc}",
            location=cache.location,
            operation="write",
        ) from None
    if spec.notify.digest is None:
        return ()
    return tuple(made.write(Path(str(spec.notify.digest).format(tracker=spec.name, day=day.isoformat()))))


def keep_after_run(
    spec: TrackerSpec, cache: Cache, service: str, result: Any, final: dict[str, Any], ranks: RanksRead | None = None
) -> None:
    """Keep the day's digest once a run's row (``final``) is in the run log; a digest that cannot be kept is said
    in the run's errors and makes an ``ok`` run ``partial``, its row rewritten so (the day has no digest).

    >>> keep_after_run(spec, cache, "sandbox-0", result, final)  # doctest: +SKIP
    """
    try:
        keep_day_digest(
            spec, cache, service, result.day, month_spent=result.month_spent, run_id=result.run_id, ranks=ranks
        )
    except (StoreframesError, OSError) as exc:
        result.errors.append(f"digest: {type(exc).__name__}: {exc}".splitlines()[0])
        if result.status == "ok":
            result.status = final["status"] = "partial"
        cache.runs.write(final | {"errors": "\n".join(filter(None, [final["errors"], result.errors[-1]]))})


def kept_digest(spec: TrackerSpec, day: date | str, *, storage_options: Mapping[str, str] | None = None) -> Digest:
    """The digest of ``day`` kept in ``spec``'s cache (its folder or bucket), as its last run of the day left it;
    offline, no token. A day with none kept is a :class:`~storeframes.errors.DigestNotKeptError` naming the days
    that have one.

    >>> print(kept_digest(load_spec("tracking.toml"), "2026-11-05").markdown)  # doctest: +SKIP
    """
    if not isinstance(spec, TrackerSpec):
        raise InvalidParameterError("spec", type(spec).__name__, "a TrackerSpec (load_spec)", endpoint="kept_digest")
    chosen = parse_day("day", day, endpoint="kept_digest")
    cache = open_cache(spec.cache_dir, storage_options)
    assert cache is not None  # a spec's cache_dir is never False
    row: dict[str, Any] | None = cache.digests.read(spec.name, chosen)
    if row is None:
        raise DigestNotKeptError(spec.name, chosen, cache.digests.days(spec.name), location=cache.location)
    images = {image["name"]: image["png"] for image in row["images"] or []}
    return Digest(html=row["html"], markdown=row["markdown"], images=images)
