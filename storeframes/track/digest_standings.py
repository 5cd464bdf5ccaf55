"""Where we stand, for a digest: each tracked app's standing on each followed keyword on the digest's last day.

The tracked apps are those the tracker's rank rules watch and its app items follow; the keywords those it
follows (live, or by their history) (:func:`~storeframes.track.judging.tracked_apps`,
:func:`~storeframes.track.judging.followed_keywords`). Ranks are read from what the cache keeps (the same reading as the rules
and the charts), and a day no run fetched is ``not fetched`` there too, never a drop. A keyword followed in a
country where nothing was kept in the period still has its rows, every day of them ``not fetched``.

>>> digest_standings(spec, cache, "sandbox-0", date(2026, 11, 28))  # doctest: +SKIP
"""

from __future__ import annotations

from datetime import date, timedelta

import polars as pl

from ..analysis import CHANGE_DAYS, STANDINGS, standings
from ..cache import Cache
from .judging import STANDING_DAYS, RanksRead, followed_keywords, rank_frame, tracked_apps
from .spec import TrackerSpec

__all__ = ["digest_standings"]


def digest_standings(
    spec: TrackerSpec,
    cache: Cache,
    service: str,
    end: date,
    *,
    fetched: pl.DataFrame | None = None,
    read: RanksRead | None = None,
) -> pl.DataFrame:
    """The :func:`~storeframes.standings` of ``spec``'s tracked apps on its keywords on ``end``, from the ranks the
    cache keeps of the :data:`STANDING_DAYS` days before (``read``'s where it holds them); ``fetched``: the days
    fetched (:func:`~storeframes.track.day_digest.fetched_days`) from 30 days before ``end``, so that a day no
    run fetched is ``not_fetched``. No tracked app or keyword: no rows.
    """
    apps, keywords = tracked_apps(spec), followed_keywords(spec)
    if not apps or not keywords:
        return STANDINGS.empty()
    first = end - timedelta(days=max(STANDING_DAYS, *CHANGE_DAYS))
    held = read.within(first, end) if read is not None else None
    frame = held if held is not None else rank_frame(spec, cache, service, first, end)
    parts = []
    for country, words in keywords.items():
        kept = frame.filter(pl.col("country").str.to_lowercase() == country)
        asked = None if fetched is None else fetched.filter(pl.col("country") == country).select("keyword", "date")
        part = standings(kept, apps, keywords=words, end=end, days=STANDING_DAYS, fetched=asked)
        parts.append(part.with_columns(pl.col("country").fill_null(country)))
    return pl.concat(parts).sort("biggest_move", descending=True, nulls_last=True, maintain_order=True)
