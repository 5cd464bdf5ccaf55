"""The frames of keywords and store categories: the live search, its history, and the conversion
benchmarks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date

import polars as pl

from .._tracebacks import user_facing
from ..answers import RefreshOption
from .base import FrameBase, documented

__all__ = ["MarketFrames"]


class MarketFrames(FrameBase):
    """The frame functions of keywords and store categories rather than of given apps;
    :class:`~storeframes.frames.FrameFunctions` inherits them."""

    # -- keyword search --------------------------------------------------------------------

    @user_facing
    @documented
    def search_frame(
        self,
        keywords: str | Sequence[str],
        *,
        country: str | None = None,
        countries: str | Sequence[str] | None = None,
        language: str | Mapping[str, str] | None = None,
        device: str = "iphone",
        ads: bool = False,
        refresh: RefreshOption | None = None,
    ) -> pl.DataFrame:
        """The live store search for each keyword: one row per keyword and result, rank 1 first.

        ``keywords`` is a list or a comma-separated text, as apps, metrics, countries and
        channels are (a keyword containing a comma can still be passed in a list); each
        keyword is one request, sent concurrently under the rate limit, and cached for an
        hour. ``device`` is
        iphone, ipad or android; ``language`` defaults to the country's. With
        ``ads=True`` the search with ads is used (iphone and ipad only; refused for
        android before any request): ``is_ad`` marks the ad placements, ``rank`` counts
        them and ``organic_rank`` does not. The same app may then appear twice, as an ad
        and organically. ``countries`` (a list or a comma-separated text, not with ``country``) asks
        several countries in one call, as for :meth:`metadata_frame`: the rows of each country follow in
        the order given, each with its keywords in their order.

        >>> sf.search_frame(["photo editor", "meditation"]).filter(pl.col("rank") <= 3)  # doctest: +SKIP
        """
        return self._frame(
            "search_frame",
            {
                "keywords": keywords,
                "country": country,
                "countries": countries,
                "language": language,
                "device": device,
                "ads": ads,
            },
            refresh,
        )

    @user_facing
    @documented
    def search_history_frame(
        self,
        keywords: str | Sequence[str],
        *,
        start: str | date | None = None,
        end: str | date | None = None,
        days: int | None = None,
        country: str | None = None,
        countries: str | Sequence[str] | None = None,
        language: str | Mapping[str, str] | None = None,
        device: str = "iphone",
        refresh: RefreshOption | None = None,
    ) -> pl.DataFrame:
        """Where apps ranked for each keyword, day by day: one row per keyword, day and result.

        ``start`` and ``end`` are days (``"2026-01-31"`` or a ``datetime.date``), both
        included; by default the 31 days up to yesterday (UTC). ``days=60`` is the 60 days
        up to yesterday (or up to ``end``), by the client's today (the sandbox's, when
        pinned); it does not go with ``start``. A day the service did not
        record (the keyword was not tracked) has no rows; the cache remembers it, so a
        final day is never asked for again. The history is cached day by day: a longer
        range later fetches only the days not held, one request per keyword and run of
        missing days. When ``end`` is today, the service fills today with a live search
        (at most 250 results): those rows have ``source="live"``, and today is fetched
        again after an hour. At most 500 results a day are kept on iphone/ipad and 250 on
        android, as the service documents. :func:`storeframes.rank_history` turns the frame
        into each app's rank per keyword and day.

        ``keywords`` is a list or a comma-separated text, as for :meth:`search_frame` (a
        keyword containing a comma can still be passed in a list), and ``countries`` asks several
        countries in one call, as for :meth:`metadata_frame`.

        >>> sf.search_history_frame(["photo editor"], days=60).filter(pl.col("app_id") == "3233849169")  # doctest: +SKIP
        >>> sf.search_history_frame(["photo editor"], start="2026-09-01").filter(pl.col("app_id") == "3233849169")  # doctest: +SKIP
        """
        return self._frame(
            "search_history_frame",
            self._dated(
                "search_history_frame",
                {
                    "keywords": keywords,
                    "start": start,
                    "end": end,
                    "days": days,
                    "country": country,
                    "countries": countries,
                    "language": language,
                    "device": device,
                },
            ),
            refresh,
        )

    # -- conversion benchmarks ---------------------------------------------------------------

    @user_facing
    @documented
    def benchmarks_frame(
        self,
        *,
        countries: str | Sequence[str] = "us",
        device: str = "iphone",
        type: str = "free",
        channels: str | Sequence[str] = "all",
        start: str | date | None = None,
        end: str | date | None = None,
        days: int | None = None,
        refresh: RefreshOption | None = None,
    ) -> pl.DataFrame:
        """Conversion-rate benchmarks per store category: one row per country, channel and category.

        ``countries`` and ``channels`` take one value, a comma-separated text or a list;
        the service takes one country and one channel per request, so each pair is one
        request (about 1,000 credits each: see :meth:`plan` first), sent concurrently.
        ``device`` is iphone or android, ``type`` free or paid. Channels are checked for
        the device before anything is sent: all, search, browse, appref, webref on
        iphone; all, search, explore, referrals on android. ``start`` and ``end`` default
        to the 31 days up to yesterday; ``days=90`` is the 90 days up to yesterday (or up to
        ``end``), not with ``start``. A range is cached whole, as the rates average over it.

        Rates are percent and stay null where too few apps have data (never zero);
        ``page_views_to_installs`` can exceed 100, as installs also come straight from
        search and browse results. On android, and for the iphone referrer channels, only
        ``page_views_to_installs`` is given.

        >>> sf.benchmarks_frame(countries=["us", "gb"], channels="search").sort("page_views_to_installs")  # doctest: +SKIP
        """
        return self._frame(
            "benchmarks_frame",
            self._dated(
                "benchmarks_frame",
                {"countries": countries, "device": device, "type": type, "channels": channels}
                | {"start": start, "end": end, "days": days},
            ),
            refresh,
        )
