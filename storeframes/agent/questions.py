"""The everyday questions, answered from what the cache keeps: ``movers`` (the biggest rank moves),
``changes_before`` (what the movers changed before they moved) and ``category_standing`` (where a category
stands in the conversion benchmarks); no request.

>>> print(surface.movers(["maps"], start="2026-11-01", end="2026-11-20").text)  # doctest: +SKIP
movers: ...
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, timedelta
from typing import Any

import polars as pl

from ..analysis import category_standing, changes_before, movers, with_names
from ..kept.app_changes import kept_changes
from ..kept.scan import scan
from ..kept.search_ranks import kept_ranks
from .tables import MOST_ROWS, Shown, show
from .tools import NothingKeptError, Tools, day_of, refused, texts

__all__ = ["QuestionTools"]


class QuestionTools(Tools):
    """``movers``, ``changes_before`` and ``category_standing``, on the ranks, changes and benchmarks kept."""

    def _range(self, start: Any, end: Any, tool: str) -> tuple[date, date]:
        last = day_of(end, "end", tool) or self.today()
        first = day_of(start, "start", tool) or last - timedelta(days=29)
        if last < first:
            raise refused("end", last.isoformat(), f"a day on or after start={first}", tool)
        return first, last

    def ranks(
        self, keywords: list[str] | None, first: date, last: date, scope: Mapping[str, Any]
    ) -> tuple[pl.DataFrame, dict[str, str]]:
        """The organic results kept of ``keywords`` (every keyword kept when None) from ``first`` to
        ``last``: a keyword's daily snapshots of the live search where the cache holds them, else its
        recorded search history; and which of the two each keyword came from."""
        frame, live = kept_ranks(self.cache, self.service, first, last, live=None, history=None, keywords=keywords)
        for column, value in scope.items():
            if value is not None:
                frame = frame.filter(pl.col(column) == str(value).lower())
        read_live = {k for k, _ in live}
        sources = {
            k: "live search snapshots" if k in read_live else "search history"
            for k in frame["keyword"].str.to_lowercase().unique().to_list()
        }
        return frame, sources

    def kept_ranks(
        self, keywords: list[str] | None, first: date, last: date, scope: Mapping[str, Any]
    ) -> tuple[pl.DataFrame, dict[str, str]]:
        """:meth:`ranks`, or a :class:`NothingKeptError` saying that none are kept and what would keep them."""
        ranks, sources = self.ranks(keywords, first, last, scope)
        if ranks.is_empty():
            places = ", ".join(f"{k}={v}" for k, v in scope.items() if v is not None)
            raise NothingKeptError(
                f"no search results are kept for {', '.join(keywords) if keywords else 'any keyword'}"
                f"{f' ({places})' if places else ''} from {first} to {last}: a tracker with a search or "
                "search_history item keeps them, or fetch_frame('search_history_frame', ...)"
            )
        return ranks, sources

    def _names(self) -> pl.DataFrame:
        return (
            scan("metadata", self.cache, service=self.service)
            .select("app_id", "title", "country", "language", "device")
            .collect()
        )

    def movers(
        self,
        keywords: Any = None,
        apps: Any = None,
        start: Any = None,
        end: Any = None,
        top: int | None = 10,
        within: int | None = None,
        **scope: Any,
    ) -> Shown:
        """Per keyword and app, the rank on the first and the last day with data in range, biggest moves first."""
        moved, notes, provenance, _ = self._moved("movers", keywords, apps, start, end, top, within, scope)
        named = with_names(moved, self._names())
        columns = [
            "keyword",
            "app_id",
            "app_title",
            "start_date",
            "start_rank",
            "end_date",
            "end_rank",
            "change",
            "move",
            "places_moved",
            "days_ranked",
        ]
        return show(
            named,
            title="movers",
            limit=MOST_ROWS if top else 20,
            columns=[c for c in columns if c in named.columns],
            provenance=provenance,
            notes=notes,
            hint="name keywords or apps, or set top",
        )

    def _moved(
        self, tool: str, keywords: Any, apps: Any, start: Any, end: Any, top: Any, within: Any, scope: Mapping[str, Any]
    ) -> tuple[pl.DataFrame, list[str], dict[str, Any], tuple[date, date]]:
        first, last = self._range(start, end, tool)
        chosen = texts(keywords, "keywords", tool)
        ranks, sources = self.kept_ranks(chosen, first, last, scope)
        moved = movers(ranks, texts(apps, "apps", tool), start=first, end=last, top=top, within=within)
        notes = [
            f"ranks from {first} to {last}: "
            + "; ".join(
                f"{k}: {s}" for k, s in sorted(sources.items()) if not chosen or k in {c.lower() for c in chosen}
            )
        ]
        return moved, notes, {"requests sent": 0, "from": "the cache"}, (first, last)

    def changes_before(
        self,
        keywords: Any = None,
        apps: Any = None,
        start: Any = None,
        end: Any = None,
        top: int | None = 10,
        within: int | None = None,
        days: int | None = 30,
        targets: Any = None,
        **scope: Any,
    ) -> Shown:
        """The movers, each with what its app changed in the ``days`` before the end of its move."""
        moved, notes, provenance, (first, last) = self._moved(
            "changes_before", keywords, apps, start, end, top, within, scope
        )
        ids = moved["app_id"].unique().to_list()
        history, seen = kept_changes(self.cache, self.service, ids, first - timedelta(days=days or 0), last)
        changes = pl.concat([history, seen.join(history, on=["app_id", "date", "target"], how="anti")])
        wanted = texts(targets, "targets", "changes_before")
        changes = changes.filter(pl.col("target").is_in(wanted) if wanted else pl.col("target") != "size")
        before = with_names(changes_before(moved, changes, days=days), self._names())
        columns = [
            "keyword",
            "app_id",
            "app_title",
            "start_rank",
            "end_rank",
            "change",
            "move",
            "changes",
            "what_changed",
        ]
        if wanted:
            notes.append(f"changes of {', '.join(wanted)}")
        else:
            notes.append(
                "changes: the service's change history and those seen between daily metadata snapshots; size left out"
            )
        return show(
            before,
            title=f"movers and their changes in the {days} days before",
            limit=MOST_ROWS,
            columns=columns,
            provenance=provenance,
            notes=notes,
        )

    def category_standing(
        self,
        category: str,
        countries: Any = None,
        channels: Any = None,
        device: str | None = None,
        rate: str = "page_views_to_installs",
    ) -> Shown:
        """Where a category stands in the cached conversion benchmarks, per country and channel."""
        frame = scan("benchmarks", self.cache, service=self.service)
        for column, value in (("country", countries), ("channel", channels), ("device", device)):
            chosen = texts(value, column, "category_standing")
            if chosen:
                frame = frame.filter(pl.col(column).is_in([c.lower() for c in chosen]))
        benchmarks = frame.collect()
        if benchmarks.is_empty():
            raise NothingKeptError(
                "no conversion benchmarks are cached for this choice: plan('benchmarks_frame', {...}) shows their price "
                "(1,001 credits a request at the catalog's estimate), fetch_frame fetches them"
            )
        standing = category_standing(benchmarks, category, rate=rate)
        return show(
            standing,
            title=f"where {category} stands ({rate})",
            limit=MOST_ROWS,
            provenance={"requests sent": 0, "from": "the cache"},
        )
