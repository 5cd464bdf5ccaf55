"""What to do next, answered from what the cache keeps: ``share_of_voice`` (each app's share of the top places of
keywords, day by day), ``keyword_opportunities`` (the keywords an app could gain on, each score explained) and
``rank_anomalies`` (the days a rank moved beyond its weekday's usual, with the likely cause); no request, no credit.

Each reads the kept ranks (:meth:`~storeframes.agent.questions.QuestionTools.kept_ranks`: the daily live-search
snapshots where a tracker keeps them, else the search history), the kept with-ads snapshots (``search_ads``) and
the kept changes (the service's change history and the daily metadata snapshots compared), and calls the function
of :mod:`storeframes.analysis` of the same name. What the cache does not keep is said in the result's notes.

>>> print(surface.share_of_voice(["photo editor"], start="2026-11-01", end="2026-11-20").text)  # doctest: +SKIP
share of voice in the top 10 (ctr weights): ...
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import date, timedelta
from typing import Any

import polars as pl

from ..analysis import keyword_opportunities, rank_anomalies, share_of_voice, with_names
from ..errors import plural
from ..kept.app_changes import kept_changes
from ..kept.scan import scan
from ..kept.snapshots import snapshots
from ..ranks import rank_history
from ..track.day_digest import fetched_days
from .questions import QuestionTools
from .tables import Shown, show
from .tools import NothingKeptError, refused, texts

__all__ = ["ANOMALY_APPS_WITHIN", "KeywordTools"]

WEIGHTS = {
    "ctr": "each place weighed by the click-through curve of storeframes.analysis (CTR_CURVE)",
    "equal": "places held over top x the keywords with results that day",
}
"""The weights the tool takes, and how each is said in its result."""

ANOMALY_APPS_WITHIN = 10
"""Without ``apps``, ``rank_anomalies`` judges every app kept in the first this many places on a day of the range."""

_FREE = {"requests sent": 0, "credits spent": 0, "from": "the cache"}


def _whole(value: Any, parameter: str, tool: str, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise refused(parameter, value, f"a whole number >= {least}", tool)
    return value


def _positive(value: Any, parameter: str, tool: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise refused(parameter, value, "a number above 0, such as 3.0", tool)
    return float(value)


def _one_app(value: Any, parameter: str, tool: str) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip() or "," in value:
        raise refused(parameter, value, "one app id, such as '3233849169'", tool)
    return value.strip()


def _of(frame: pl.LazyFrame, keywords: list[str] | None, scope: Mapping[str, Any]) -> pl.LazyFrame:
    """``frame``'s rows of ``keywords`` (all when None) and ``scope`` (country, device ...)."""
    if keywords is not None:
        frame = frame.filter(pl.col("keyword").str.to_lowercase().is_in([k.lower() for k in keywords]))
    for column, value in scope.items():
        if value is not None:
            frame = frame.filter(pl.col(column) == str(value).lower())
    return frame


def _baselines(ranks: pl.DataFrame, first: date, last: date, weeks: int) -> tuple[list[str], bool]:
    """What the kept ranks let ``rank_anomalies`` judge, said, and whether any day from ``first`` to ``last`` may be:
    a day needs the same weekday with data on at least half the ``weeks`` before (two at least), so the days before a
    keyword's first kept day plus that many weeks are not."""
    least = max(2, math.ceil(weeks / 2))
    begins = ranks.group_by("keyword").agg(pl.col("date").min().alias("begins")).sort("keyword")
    begins = begins.with_columns(judged_from=pl.col("begins") + timedelta(weeks=least))
    late = begins.filter(pl.col("judged_from") > first)
    if late.is_empty():
        return [], True
    said = "; ".join(f"{k}: judged from {j} at the earliest (its ranks kept from {b})" for k, b, j in late.iter_rows())
    rule = f"a day's baseline needs its weekday with data on {least} of the {weeks} weeks before"
    if late.height == begins.height and late.filter(pl.col("judged_from") <= last).is_empty():
        return [f"no day from {first} to {last} can be judged: {rule} ({said})"], False
    return [f"{rule} ({said})"], True


class KeywordTools(QuestionTools):
    """``share_of_voice``, ``keyword_opportunities`` and ``rank_anomalies``, on the ranks, ads and changes kept."""

    def _sources(self, first: date, last: date, sources: Mapping[str, str], keywords: list[str] | None) -> str:
        wanted = None if keywords is None else {k.lower() for k in keywords}
        said = "; ".join(f"{k}: {s}" for k, s in sorted(sources.items()) if wanted is None or k in wanted)
        return f"ranks from {first} to {last}: {said}"

    def kept_ads(
        self, keywords: list[str] | None, first: date, last: date, scope: Mapping[str, Any], column: str
    ) -> tuple[pl.DataFrame | None, str]:
        """The with-ads snapshots kept of ``keywords`` from ``first`` to ``last`` (None when none are), and a note
        saying so (``column``: what is null without them)."""
        kept = snapshots("search_ads", self.cache, start=first, end=last, service=self.service)
        frame = _of(kept, keywords, scope).collect()
        if frame.is_empty():
            return None, (
                f"no with-ads snapshots are kept for these keywords from {first} to {last} (a tracker's search_ads "
                f"item keeps them): {column} is null"
            )
        days: list[date] = frame["snapshot_date"].unique().sort().to_list()
        said = f"{plural(len(days), 'day')}, {days[0]} to {days[-1]}"
        return frame, f"{column} from the with-ads snapshots kept ({said}); other days' are not known"

    def kept_changes(self, apps: list[str], first: date, last: date, columns: str) -> tuple[pl.DataFrame | None, str]:
        """The changes of ``apps`` kept from ``first`` to ``last`` (size left out; None when the cache keeps neither
        a change history nor two days of metadata snapshots of any of them), and a note saying so (``columns``: what
        is null without them)."""
        history, seen = kept_changes(self.cache, self.service, apps, first, last)
        changes = pl.concat([history, seen.join(history, on=["app_id", "date", "target"], how="anti")])
        changes = changes.filter(pl.col("target") != "size").sort("app_id", "date", "target", maintain_order=True)
        if changes.is_empty() and not self._watched(apps, first, last):
            return None, (
                f"no changes are kept for these apps from {first} to {last} (neither their change history nor two "
                f"days of their metadata snapshots): {columns}"
            )
        return changes, (
            f"{plural(changes.height, 'change')} of these apps from {first} to {last}: the service's change history "
            "and those seen between daily metadata snapshots; size left out"
        )

    def _watched(self, apps: list[str], first: date, last: date) -> bool:
        """Whether the cache could have seen a change of ``apps`` from ``first`` to ``last``: a change history of
        one of them, or one of them in metadata snapshots of two days up to ``last``, one of them from ``first`` on."""
        if (
            not scan("changes", self.cache, service=self.service)
            .filter(pl.col("app_id").is_in(apps))
            .head(1)
            .collect()
            .is_empty()
        ):
            return True
        twice = (
            snapshots("metadata", self.cache, end=last, service=self.service)
            .filter(pl.col("app_id").is_in(apps))
            .group_by("app_id")
            .agg(pl.col("snapshot_date").n_unique().alias("days"), pl.col("snapshot_date").max().alias("last"))
            .filter((pl.col("days") >= 2) & (pl.col("last") >= first))
            .collect()
        )
        return twice.height > 0

    def _titled(self, frame: pl.DataFrame, column: str) -> pl.DataFrame:
        """``frame`` with the title of the app in ``column`` as ``<column>_title``, right after it (null when the
        cache keeps no metadata of it)."""
        named = with_names(frame.select(pl.col(column).alias("app_id")), self._names())["app_title"]
        at = frame.columns.index(column) + 1
        return frame.insert_column(at, named.alias(f"{column}_title"))

    def share_of_voice(
        self,
        keywords: Any = None,
        apps: Any = None,
        start: Any = None,
        end: Any = None,
        top: Any = 10,
        weights: Any = "ctr",
        by: Any = "app",
        columns: Any = None,
        limit: int = 20,
        **scope: Any,
    ) -> Shown:
        """Each app's (or developer's) share of the top places of the kept keywords, per day, latest day first."""
        tool = "share_of_voice"
        top = _whole(top, "top", tool, 1)
        if weights not in WEIGHTS:
            raise refused("weights", weights, "; ".join(f"{w} ({said})" for w, said in WEIGHTS.items()), tool)
        if by not in ("app", "developer"):
            raise refused("by", by, "app, or developer (the developers of the cache's app metadata)", tool)
        first, last = self._range(start, end, tool)
        chosen, ids = texts(keywords, "keywords", tool), texts(apps, "apps", tool)
        ranks, sources = self.kept_ranks(chosen, first, last, scope)
        notes = [self._sources(first, last, sources, chosen), f"weights {weights}: {WEIGHTS[weights]}"]
        metadata = None
        if by == "developer":
            metadata = scan("metadata", self.cache, service=self.service).collect()
            if metadata.is_empty():
                raise NothingKeptError(
                    "no app metadata is kept, so no developer is known: a tracker's metadata item keeps it, or "
                    "fetch_frame('metadata_frame', ...); by='app' needs none"
                )
        voice = share_of_voice(ranks, ids, top=top, weights=weights, by=by, metadata=metadata)
        key = "app_id" if by == "app" else "developer_id"
        if by == "app":
            voice = with_names(voice, self._names())
        voice = voice.sort(["date", "share", key], descending=[True, True, False], nulls_last=True, maintain_order=True)
        held = voice.filter(pl.col("share").is_not_null())
        if held.is_empty():
            notes.append(f"no day from {first} to {last} has a keyword with results: every share is null")
        else:
            means = held.group_by(key).agg(pl.col("share").mean()).sort(["share", key], descending=[True, False])
            said = ", ".join(f"{k} {v:.3f}" for k, v in means.head(5).iter_rows())
            notes.append(
                f"mean daily share, highest first: {said}"
                + (f" (and {means.height - 5} more)" if means.height > 5 else "")
            )
        empty = voice.filter(pl.col("share").is_null())["date"].n_unique()
        if empty:
            notes.append(f"{plural(empty, 'day')} without any keyword recorded: share null (not 0)")
        return show(
            voice,
            title=f"share of voice in the top {top} ({weights} weights), by {by}",
            limit=limit,
            columns=texts(columns, "columns", tool),
            provenance=_FREE,
            notes=notes,
            hint="name keywords or apps, or a shorter range",
        )

    def keyword_opportunities(
        self,
        app: Any,
        competitors: Any,
        keywords: Any = None,
        start: Any = None,
        end: Any = None,
        top: Any = 10,
        columns: Any = None,
        limit: int = 20,
        **scope: Any,
    ) -> Shown:
        """Per kept keyword, where ``app`` stands against ``competitors`` and a score of the room to gain, best first."""
        tool = "keyword_opportunities"
        own = _one_app(app, "app", tool)
        rivals = texts(competitors, "competitors", tool)
        if not rivals:
            raise refused("competitors", competitors, "one competitor's app id or more", tool)
        if own in rivals:
            raise refused("competitors", rivals, f"app ids other than the app's own ({own})", tool)
        top = _whole(top, "top", tool, 1)
        first, last = self._range(start, end, tool)
        chosen = texts(keywords, "keywords", tool)
        ranks, sources = self.kept_ranks(chosen, first, last, scope)
        ads, ads_said = self.kept_ads(chosen, first, last, scope, "advertisers")
        changes, changes_said = self.kept_changes(rivals, first, last, "competitor_changes is null")
        found = keyword_opportunities(ranks, own, rivals, top=top, ads=ads, changes=changes)
        found = self._titled(found, "best_competitor")
        notes = [self._sources(first, last, sources, chosen), ads_said, changes_said]
        if found.height and found["app_rank"].null_count() == found.height:
            notes.append(f"{own} is among the results of none of these keywords on their latest day")
        if ads is None:
            notes.append("the score leaves its ad term out and scales the rest by 100/90")
        shown = [
            "keyword",
            "score",
            "app_rank",
            "app_rank_change",
            "best_competitor",
            "best_competitor_title",
            "best_competitor_rank",
            "competitors_in_top",
            "volatility",
            "advertisers",
            "competitor_changes",
            "why",
        ]
        return show(
            found,
            title=f"keyword opportunities of {own} against {plural(len(rivals), 'competitor')} in the top {top}",
            limit=limit,
            columns=texts(columns, "columns", tool) or shown,
            provenance=_FREE,
            notes=notes,
            hint="name keywords, or raise limit",
        )

    def rank_anomalies(
        self,
        keywords: Any = None,
        apps: Any = None,
        start: Any = None,
        end: Any = None,
        threshold: Any = 3.0,
        weeks: Any = 4,
        min_move: Any = 5,
        days: Any = 7,
        columns: Any = None,
        limit: int = 20,
        **scope: Any,
    ) -> Shown:
        """The days from start to end a kept rank moved beyond its weekday's usual, latest first, with the likely cause."""
        tool = "rank_anomalies"
        threshold = _positive(threshold, "threshold", tool)
        weeks, min_move, days = (
            _whole(weeks, "weeks", tool, 1),
            _whole(min_move, "min_move", tool, 1),
            _whole(days, "days", tool, 1),
        )
        first, last = self._range(start, end, tool)
        since = first - timedelta(weeks=weeks)  # the baselines of the first days judged
        chosen, ids = texts(keywords, "keywords", tool), texts(apps, "apps", tool)
        ranks, sources = self.kept_ranks(chosen, since, last, scope)
        notes = [self._sources(since, last, sources, chosen)]
        if ids is None:
            near = ranks.filter(pl.col("date").is_between(first, last) & (pl.col("rank") <= ANOMALY_APPS_WITHIN))
            ids = near.sort("app_id")["app_id"].unique(maintain_order=True).to_list()
            notes.append(
                f"apps: the {len(ids)} kept in the first {ANOMALY_APPS_WITHIN} places on a day from {first} to {last}"
            )
            if not ids:
                raise NothingKeptError(
                    f"no app is kept in the first {ANOMALY_APPS_WITHIN} places from {first} to {last}: name apps"
                )
        fetched = None
        if self.tracker is not None:  # days the tracker never fetched are not_fetched, not no_data
            fetched = fetched_days(self.tracker.spec, self.cache, self.service, since, last)
        history = rank_history(ranks, ids, start=since, end=last, fetched=fetched)
        said, judgeable = _baselines(ranks, first, last, weeks)
        notes += said
        changes, changes_said = self.kept_changes(
            ids,
            since - timedelta(days=days),
            last,
            "no change is a cause (cause_app_id, cause_date, cause_targets null)",
        )
        ads, ads_said = self.kept_ads(chosen, first - timedelta(days=days), last, scope, "new_advertisers")
        found = rank_anomalies(
            history, threshold=threshold, weeks=weeks, min_move=min_move, changes=changes, ads=ads, days=days
        )
        found = found.filter(pl.col("date").is_between(first, last))
        found = with_names(found, self._names()).sort(
            [pl.col("date"), pl.col("z").abs(), pl.col("keyword"), pl.col("app_id")],
            descending=[True, True, False, False],
            nulls_last=True,
        )
        judged = history.filter(pl.col("date").is_between(first, last))
        series = judged.select("keyword", "app_id", "country", "language", "device").unique().height
        ranked = judged.filter(pl.col("status") == "ranked").height
        if found.is_empty() and judgeable:
            notes.append(
                f"no anomaly from {first} to {last}: no day of the {series:,} series (keyword, app and place) judged "
                f"({plural(ranked, 'ranked day')}) moved {min_move} places or more with |z| >= {threshold:g}"
            )
        elif not found.is_empty():
            events = found.select("keyword", "app_id", "country", "language", "device", "event_start").unique().height
            notes.append(
                f"{plural(events, 'event')} in the {series:,} series (keyword, app and place) judged from {first} to {last}"
            )
        notes += [changes_said, ads_said]
        shown = [
            "keyword",
            "app_id",
            "app_title",
            "date",
            "rank",
            "baseline",
            "move",
            "z",
            "direction",
            "cause",
            "cause_app_id",
            "new_advertisers",
        ]
        return show(
            found,
            title=f"rank anomalies (|z| >= {threshold:g}, {min_move} places or more, baselines of {weeks} weeks)",
            limit=limit,
            columns=texts(columns, "columns", tool) or shown,
            provenance=_FREE,
            notes=notes,
            hint="name keywords or apps, raise threshold or min_move, or a shorter range",
        )
