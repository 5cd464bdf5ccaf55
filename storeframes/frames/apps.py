"""The frames of given apps: their current metadata, the tables unfolded from it, and their metrics."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl

from .._tracebacks import user_facing
from ..answers import RefreshOption
from ..fetch.pipeline import DEFAULT_METRICS
from .base import FrameBase, documented

__all__ = ["AppFrames"]


class AppFrames(FrameBase):
    """The frame functions of given apps (``apps``): metadata and the tables from the same
    answers, and metrics; :class:`~storeframes.frames.FrameFunctions` inherits them."""

    # -- app metadata ---------------------------------------------------------------------------

    @user_facing
    @documented
    def metadata_frame(
        self,
        apps: str | int | Sequence[str | int],
        *,
        country: str | None = None,
        countries: str | Sequence[str] | None = None,
        language: str | Mapping[str, str] | None = None,
        device: str | None = None,
        refresh: RefreshOption | None = None,
    ) -> pl.DataFrame:
        """Current metadata, one row per app, the same columns for iphone, ipad and android.

        ``apps`` is a list or a comma-separated string of ids of one store, any number of
        them (sent 5 to a request). ``device`` is iphone, ipad or android; by default the
        ids choose (package names mean android, numeric ids iphone). ``language`` defaults
        to the country's language. Apps not available in the country are left
        out and named in an :class:`~storeframes.AppsUnavailableWarning`. ``refresh``
        overrides the client's cache policy for this call (``"auto"``, ``"always"``,
        ``"never"``; ``True`` means ``"always"``, ``False`` ``"auto"``). The other metadata tables (:meth:`versions_frame`,
        :meth:`screenshots_frame` ...) come from the same cached answers at no cost. A free
        app's ``price`` is empty, as the store sends it, and its ``price_value`` is 0; both are
        null when the answer has no price, so a free app never reads as an unknown price.

        ``country`` is one country (``us`` by default); ``countries`` (a list or a comma-separated
        text, not with ``country``) asks several, a call each sent together, and gives one frame with
        each country's rows in the order given. ``language`` is then one language for every country,
        or a mapping of country to language for some of them (``{"ca": "fr"}``; the others keep their
        own). The same holds for every frame function that takes ``country``.

        >>> sf.metadata_frame(["284882215", "389801252"]).select("app_id", "title", "rating_average")  # doctest: +SKIP
        shape: (2, 3)
        """
        return self._frame(
            "metadata_frame",
            {"apps": apps, "country": country, "countries": countries, "language": language, "device": device},
            refresh,
        )

    @user_facing
    @documented
    def versions_frame(
        self,
        apps: str | int | Sequence[str | int],
        *,
        country: str | None = None,
        countries: str | Sequence[str] | None = None,
        language: str | Mapping[str, str] | None = None,
        device: str | None = None,
        refresh: RefreshOption | None = None,
    ) -> pl.DataFrame:
        """The versions listed in each app's metadata, newest first (``position`` 1).

        Arguments as for :meth:`metadata_frame`; from the same metadata answers.

        >>> sf.versions_frame("284882215").group_by("app_id").len()  # doctest: +SKIP
        """
        return self._frame(
            "versions_frame",
            {"apps": apps, "country": country, "countries": countries, "language": language, "device": device},
            refresh,
        )

    @user_facing
    @documented
    def screenshots_frame(
        self,
        apps: str | int | Sequence[str | int],
        *,
        country: str | None = None,
        countries: str | Sequence[str] | None = None,
        language: str | Mapping[str, str] | None = None,
        device: str | None = None,
        refresh: RefreshOption | None = None,
    ) -> pl.DataFrame:
        """One row per screenshot, by the answer's device key (iphone_6_5, ipadPro ...).

        An answer that lists screenshots flat (android) has the request's device as its
        key. Arguments as for :meth:`metadata_frame`; from the same metadata answers.

        >>> sf.screenshots_frame("284882215").filter(pl.col("device_key") == "iphone_6_5")  # doctest: +SKIP
        """
        return self._frame(
            "screenshots_frame",
            {"apps": apps, "country": country, "countries": countries, "language": language, "device": device},
            refresh,
        )

    @user_facing
    @documented
    def videos_frame(
        self,
        apps: str | int | Sequence[str | int],
        *,
        country: str | None = None,
        countries: str | Sequence[str] | None = None,
        language: str | Mapping[str, str] | None = None,
        device: str | None = None,
        refresh: RefreshOption | None = None,
    ) -> pl.DataFrame:
        """One row per preview video, by device key (android lists bare URLs).

        Arguments as for :meth:`metadata_frame`; from the same metadata answers.

        >>> sf.videos_frame("284882215").select("device_key", "url", "width", "height")  # doctest: +SKIP
        """
        return self._frame(
            "videos_frame",
            {"apps": apps, "country": country, "countries": countries, "language": language, "device": device},
            refresh,
        )

    @user_facing
    @documented
    def in_app_purchases_frame(
        self,
        apps: str | int | Sequence[str | int],
        *,
        country: str | None = None,
        countries: str | Sequence[str] | None = None,
        language: str | Mapping[str, str] | None = None,
        device: str | None = None,
        refresh: RefreshOption | None = None,
    ) -> pl.DataFrame:
        """One row per in-app purchase (iphone/ipad), its price as a decimal number and currency.

        Arguments as for :meth:`metadata_frame`; from the same metadata answers.

        >>> sf.in_app_purchases_frame("284882215").select("name", "price", "currency")  # doctest: +SKIP
        """
        return self._frame(
            "in_app_purchases_frame",
            {"apps": apps, "country": country, "countries": countries, "language": language, "device": device},
            refresh,
        )

    @user_facing
    @documented
    def related_apps_frame(
        self,
        apps: str | int | Sequence[str | int],
        *,
        country: str | None = None,
        countries: str | Sequence[str] | None = None,
        language: str | Mapping[str, str] | None = None,
        device: str | None = None,
        refresh: RefreshOption | None = None,
    ) -> pl.DataFrame:
        """The apps listed beside each app: customers_also_bought (iphone/ipad), similar_apps (android).

        Arguments as for :meth:`metadata_frame`; from the same metadata answers.

        >>> sf.related_apps_frame("284882215")["related_app_id"].to_list()[:3]  # doctest: +SKIP
        """
        return self._frame(
            "related_apps_frame",
            {"apps": apps, "country": country, "countries": countries, "language": language, "device": device},
            refresh,
        )

    @user_facing
    @documented
    def permissions_frame(
        self,
        apps: str | int | Sequence[str | int],
        *,
        country: str | None = None,
        countries: str | Sequence[str] | None = None,
        language: str | Mapping[str, str] | None = None,
        device: str | None = None,
        refresh: RefreshOption | None = None,
    ) -> pl.DataFrame:
        """The permissions each android app asks for (empty for iphone/ipad apps).

        Arguments as for :meth:`metadata_frame`; from the same metadata answers.

        >>> sf.permissions_frame("com.example.notes")["permission"].to_list()[:2]  # doctest: +SKIP
        """
        return self._frame(
            "permissions_frame",
            {"apps": apps, "country": country, "countries": countries, "language": language, "device": device},
            refresh,
        )

    # -- app metrics -------------------------------------------------------------------------------

    @user_facing
    @documented
    def metrics_frame(
        self,
        apps: str | int | Sequence[str | int],
        metrics: str | Sequence[str] = DEFAULT_METRICS,
        *,
        country: str | None = None,
        countries: str | Sequence[str] | None = None,
        device: str | None = None,
        refresh: RefreshOption | None = None,
    ) -> pl.DataFrame:
        """Current metrics, one row per app and metric, in the order asked for.

        ``metrics`` are among downloads, revenues, app-power (or power), ratings and
        daily-ratings. ``value`` is a Float64 and stays null where the service has no
        estimate; the ratings breakdown fills ``stars_1`` .. ``stars_5``,
        ``ratings_total`` and ``ratings_average``. Each metric is cached apart, so asking
        for one more metric later fetches only that one. ``countries`` asks several countries in
        one call, as for :meth:`metadata_frame`.

        >>> sf.metrics_frame(["284882215"], ["downloads", "ratings"]).select("metric", "value")  # doctest: +SKIP
        """
        return self._frame(
            "metrics_frame",
            {"apps": apps, "metrics": metrics, "country": country, "countries": countries, "device": device},
            refresh,
        )
