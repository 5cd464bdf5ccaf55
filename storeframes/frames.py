"""The frame functions: one call, one tidy polars DataFrame of a declared schema.

Each is declared once, here, with its real signature and its documentation, as a
method of :class:`FrameFunctions`: :class:`~storeframes.Client` has them as methods,
and :mod:`storeframes.defaults` makes them functions of the package on the default
client. A method binds its arguments and hands them to the :class:`FrameMaker`
(:mod:`storeframes.pipeline`), which plans, fetches what is missing, flattens and
orders (the spec of each function is in :data:`~storeframes.pipeline.FRAMES`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from datetime import date, timedelta
from typing import Any, Protocol, TypeVar

import polars as pl

from .cache import RefreshOption
from .catalog import EARLIEST_DAY, MAX_APPS_PER_REQUEST, Endpoint, parse_day, today_utc
from .engine import PLAN_SCHEMA, Plan, key
from .errors import InvalidParameterError
from .pipeline import DEFAULT_METRICS, FRAMES, FrameMaker

__all__ = [
    "FIND_APPS_COLUMNS",
    "MOST_FOUND_APPS",
    "FrameFunctions",
    "Planner",
    "plan_find_apps",
    "resolve",
    "with_days",
]

MOST_FOUND_APPS = 100
"""The most apps :meth:`FrameFunctions.find_apps` looks up (``top``): their metadata is paid per app."""

FIND_APPS_COLUMNS = (
    "rank",
    "app_id",
    "title",
    "subtitle",
    "developer_name",
    "rating_average",
    "price",
    "categories",
    "icon_url",
)
"""The columns of :meth:`FrameFunctions.find_apps`: the search's rank, then the app's metadata."""


def with_days(name: str, arguments: Mapping[str, Any], today: date) -> dict[str, Any]:
    """``arguments`` of a date-ranged frame function with ``days`` turned into ``start`` and ``end``.

    ``days=60`` is the 60 days up to ``end`` (both included), by default up to yesterday
    (UTC, by ``today``), as the functions' defaults are. Refused before anything is
    sent: ``days`` that is not a whole number >= 1, and ``days`` with ``start``.

    >>> with_days("changes_frame", {"days": 7, "end": "2026-01-31"}, date(2026, 3, 1))
    {'end': datetime.date(2026, 1, 31), 'start': datetime.date(2026, 1, 25)}
    """
    arguments = dict(arguments)
    days = arguments.pop("days", None)
    if days is None:
        return arguments
    if isinstance(days, bool) or not isinstance(days, int) or days < 1:
        raise InvalidParameterError(
            "days",
            days,
            "a whole number of days >= 1 (days=60: the 60 days up to yesterday, or up to end=)",
            endpoint=name,
        )
    if arguments.get("start") is not None:
        raise InvalidParameterError(
            "days",
            days,
            f"days= or start=, not both (start={arguments['start']!r} was given too): "
            "days counts back from end= (by default yesterday); give start= and end= for a fixed range",
            endpoint=name,
        )
    end = (
        parse_day("end", arguments["end"], endpoint=name) if arguments.get("end") is not None else today - timedelta(1)
    )
    most = max((end - EARLIEST_DAY).days + 1, 1)
    if days > most:
        raise InvalidParameterError(
            "days",
            days,
            f"at most {most:,} up to {end.isoformat()} (no history is older than {EARLIEST_DAY.isoformat()})",
            endpoint=name,
        )
    arguments["end"] = end
    arguments["start"] = end - timedelta(days=days - 1)
    return arguments


def resolve(
    name: str, calls: Sequence[Mapping[str, Any]], *, today: date | None = None
) -> tuple[str, list[Mapping[str, Any]]]:
    """An endpoint and its calls from a frame function's name and arguments, its defaults applied.

    An endpoint's name passes through unchanged. ``days`` (of the date-ranged functions)
    counts back from ``today`` (by default the UTC day).
    """
    spec = FRAMES.get(name)
    if spec is None:
        return name, list(calls)
    signature = inspect.signature(getattr(FrameFunctions, name))
    resolved: list[Mapping[str, Any]] = []
    endpoints = set()
    for call in calls:
        try:
            bound = signature.bind(None, **call)
        except TypeError as exc:
            raise InvalidParameterError("arguments", dict(call), f"those of {name}{signature}: {exc}") from None
        bound.apply_defaults()
        arguments = {k: v for k, v in bound.arguments.items() if k not in ("self", "refresh")}
        if "days" in arguments:
            arguments = with_days(name, arguments, today or today_utc())
        endpoint, expanded = spec.calls(arguments)
        endpoints.add(endpoint)
        resolved += expanded
    if len(endpoints) > 1:
        raise InvalidParameterError(
            "calls",
            list(calls),
            f"calls of one endpoint per plan ({name} calls here go to {', '.join(sorted(endpoints))})",
        )
    return (endpoints.pop() if endpoints else spec.endpoint), resolved


F = TypeVar("F", bound=Callable[..., pl.DataFrame])


def _documented(function: F) -> F:
    """Append the schema of the function's table (from its spec in FRAMES) to its docstring."""
    table = FRAMES[function.__name__].table
    function.__doc__ = inspect.cleandoc(function.__doc__ or "") + "\n\n" + table.docstring()
    return function


class FrameFunctions:
    """The frame functions, declared once; :class:`~storeframes.Client` has them as methods.

    Each binds its arguments and hands them to ``maker``, a
    :class:`~storeframes.pipeline.FrameMaker`, which makes the frame.
    """

    def __init__(self, maker: FrameMaker):
        self._maker = maker

    def _frame(self, name: str, arguments: Mapping[str, Any], refresh: RefreshOption | None) -> pl.DataFrame:
        return self._maker.make(name, arguments, refresh)

    def today(self) -> date:
        """Today's date (UTC): what ``days`` and the default date ranges count back from."""
        return today_utc()

    def _dated(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments of a date-ranged function, ``days`` made ``start`` and ``end`` by :meth:`today`."""
        return with_days(name, arguments, self.today())

    def _history_call(
        self, name: str, apps: Any, start: Any, end: Any, days: Any, country: Any, language: Any, device: Any
    ) -> dict[str, Any]:
        return self._dated(
            name,
            {"apps": apps, "start": start, "end": end, "days": days}
            | {"country": country, "language": language, "device": device},
        )

    # -- app metadata ---------------------------------------------------------------------------

    @_documented
    def metadata_frame(
        self,
        apps: str | int | Sequence[str | int],
        *,
        country: str = "us",
        language: str | None = None,
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
        :meth:`screenshots_frame` ...) come from the same cached answers at no cost.

        >>> sf.metadata_frame(["284882215", "389801252"]).select("app_id", "title", "rating_average")  # doctest: +SKIP
        shape: (2, 3)
        """
        return self._frame(
            "metadata_frame", {"apps": apps, "country": country, "language": language, "device": device}, refresh
        )

    @_documented
    def versions_frame(
        self,
        apps: str | int | Sequence[str | int],
        *,
        country: str = "us",
        language: str | None = None,
        device: str | None = None,
        refresh: RefreshOption | None = None,
    ) -> pl.DataFrame:
        """The versions listed in each app's metadata, newest first (``position`` 1).

        Arguments as for :meth:`metadata_frame`; from the same metadata answers.

        >>> sf.versions_frame("284882215").group_by("app_id").len()  # doctest: +SKIP
        """
        return self._frame(
            "versions_frame", {"apps": apps, "country": country, "language": language, "device": device}, refresh
        )

    @_documented
    def screenshots_frame(
        self,
        apps: str | int | Sequence[str | int],
        *,
        country: str = "us",
        language: str | None = None,
        device: str | None = None,
        refresh: RefreshOption | None = None,
    ) -> pl.DataFrame:
        """One row per screenshot, by the answer's device key (iphone_6_5, ipadPro ...).

        An answer that lists screenshots flat (android) has the request's device as its
        key. Arguments as for :meth:`metadata_frame`; from the same metadata answers.

        >>> sf.screenshots_frame("284882215").filter(pl.col("device_key") == "iphone_6_5")  # doctest: +SKIP
        """
        return self._frame(
            "screenshots_frame", {"apps": apps, "country": country, "language": language, "device": device}, refresh
        )

    @_documented
    def videos_frame(
        self,
        apps: str | int | Sequence[str | int],
        *,
        country: str = "us",
        language: str | None = None,
        device: str | None = None,
        refresh: RefreshOption | None = None,
    ) -> pl.DataFrame:
        """One row per preview video, by device key (android lists bare URLs).

        Arguments as for :meth:`metadata_frame`; from the same metadata answers.

        >>> sf.videos_frame("284882215").select("device_key", "url", "width", "height")  # doctest: +SKIP
        """
        return self._frame(
            "videos_frame", {"apps": apps, "country": country, "language": language, "device": device}, refresh
        )

    @_documented
    def in_app_purchases_frame(
        self,
        apps: str | int | Sequence[str | int],
        *,
        country: str = "us",
        language: str | None = None,
        device: str | None = None,
        refresh: RefreshOption | None = None,
    ) -> pl.DataFrame:
        """One row per in-app purchase (iphone/ipad), its price as a decimal number and currency.

        Arguments as for :meth:`metadata_frame`; from the same metadata answers.

        >>> sf.in_app_purchases_frame("284882215").select("name", "price", "currency")  # doctest: +SKIP
        """
        return self._frame(
            "in_app_purchases_frame",
            {"apps": apps, "country": country, "language": language, "device": device},
            refresh,
        )

    @_documented
    def related_apps_frame(
        self,
        apps: str | int | Sequence[str | int],
        *,
        country: str = "us",
        language: str | None = None,
        device: str | None = None,
        refresh: RefreshOption | None = None,
    ) -> pl.DataFrame:
        """The apps listed beside each app: customers_also_bought (iphone/ipad), similar_apps (android).

        Arguments as for :meth:`metadata_frame`; from the same metadata answers.

        >>> sf.related_apps_frame("284882215")["related_app_id"].to_list()[:3]  # doctest: +SKIP
        """
        return self._frame(
            "related_apps_frame", {"apps": apps, "country": country, "language": language, "device": device}, refresh
        )

    @_documented
    def permissions_frame(
        self,
        apps: str | int | Sequence[str | int],
        *,
        country: str = "us",
        language: str | None = None,
        device: str | None = None,
        refresh: RefreshOption | None = None,
    ) -> pl.DataFrame:
        """The permissions each android app asks for (empty for iphone/ipad apps).

        Arguments as for :meth:`metadata_frame`; from the same metadata answers.

        >>> sf.permissions_frame("com.example.notes")["permission"].to_list()[:2]  # doctest: +SKIP
        """
        return self._frame(
            "permissions_frame", {"apps": apps, "country": country, "language": language, "device": device}, refresh
        )

    # -- app metrics -------------------------------------------------------------------------------

    @_documented
    def metrics_frame(
        self,
        apps: str | int | Sequence[str | int],
        metrics: str | Sequence[str] = DEFAULT_METRICS,
        *,
        country: str = "us",
        device: str | None = None,
        refresh: RefreshOption | None = None,
    ) -> pl.DataFrame:
        """Current metrics, one row per app and metric, in the order asked for.

        ``metrics`` are among downloads, revenues, app-power (or power), ratings and
        daily-ratings. ``value`` is a Float64 and stays null where the service has no
        estimate; the ratings breakdown fills ``stars_1`` .. ``stars_5``,
        ``ratings_total`` and ``ratings_average``. Each metric is cached apart, so asking
        for one more metric later fetches only that one.

        >>> sf.metrics_frame(["284882215"], ["downloads", "ratings"]).select("metric", "value")  # doctest: +SKIP
        """
        return self._frame(
            "metrics_frame", {"apps": apps, "metrics": metrics, "country": country, "device": device}, refresh
        )

    # -- metadata change history ------------------------------------------------------------------

    @_documented
    def changes_frame(
        self,
        apps: str | int | Sequence[str | int],
        *,
        start: str | date | None = None,
        end: str | date | None = None,
        days: int | None = None,
        country: str = "us",
        language: str | None = None,
        device: str | None = None,
        refresh: RefreshOption | None = None,
    ) -> pl.DataFrame:
        """What each app changed in its store listing, and when: one row per change, oldest first.

        ``start`` and ``end`` are days (``"2026-01-31"`` or a ``datetime.date``), both
        included; by default the 30 days up to yesterday (UTC), as the service has it.
        ``days=90`` is the 90 days up to yesterday (or up to ``end``), by the client's today
        (the sandbox's, when pinned); it does not go with ``start``. The
        history is cached day by day: a longer range later fetches only the days not held.
        A day is final once it is two days old; more recent days are fetched again after
        six hours. Other arguments as for :meth:`metadata_frame`.

        ``old_value`` and ``new_value`` are text whatever the target: text as it is,
        integers as digits, objects and arrays as compact JSON. Sizes and icon URLs also
        have typed columns, and :meth:`version_changes_frame`,
        :meth:`screenshot_changes_frame` and :meth:`privacy_changes_frame` unfold the
        nested values (from the same cached answers, at no cost). A target storeframes
        does not know (the service does not publish them all) is kept, and named in an
        :class:`~storeframes.UnknownFieldWarning`. ``version`` is null where the service
        ties no version to the change (``version_raw`` keeps what it sent).

        >>> sf.changes_frame(["3233849169"], start="2026-08-01", end="2026-10-31").group_by("target").len()  # doctest: +SKIP
        """
        return self._frame(
            "changes_frame",
            self._history_call("changes_frame", apps, start, end, days, country, language, device),
            refresh,
        )

    @_documented
    def privacy_changes_frame(
        self,
        apps: str | int | Sequence[str | int],
        *,
        start: str | date | None = None,
        end: str | date | None = None,
        days: int | None = None,
        country: str = "us",
        language: str | None = None,
        device: str | None = None,
        refresh: RefreshOption | None = None,
    ) -> pl.DataFrame:
        """The data types of each privacy_info change (iphone/ipad privacy labels), section by section.

        One row per change, section (DATA_LINKED_TO_YOU, DATA_NOT_LINKED_TO_YOU,
        DATA_USED_TO_TRACK_YOU) and data type, with ``status`` added, removed or kept
        between the labels before and after. Arguments as for :meth:`changes_frame`; from
        the same cached answers.

        >>> sf.privacy_changes_frame("3233849169", start="2026-01-01").filter(pl.col("status") != "kept")  # doctest: +SKIP
        """
        return self._frame(
            "privacy_changes_frame",
            self._history_call("privacy_changes_frame", apps, start, end, days, country, language, device),
            refresh,
        )

    @_documented
    def screenshot_changes_frame(
        self,
        apps: str | int | Sequence[str | int],
        *,
        start: str | date | None = None,
        end: str | date | None = None,
        days: int | None = None,
        country: str = "us",
        language: str | None = None,
        device: str | None = None,
        refresh: RefreshOption | None = None,
    ) -> pl.DataFrame:
        """The screenshots before and after each screenshots change, with what was added or removed.

        One row per screenshot on each ``side`` (old, new) of a change, at its
        ``position``; ``status`` is added, removed or kept by screenshot id. Android gives
        no ``filename``. Arguments as for :meth:`changes_frame`; from the same cached
        answers.

        >>> sf.screenshot_changes_frame("3233849169").filter(pl.col("status") == "added")  # doctest: +SKIP
        """
        return self._frame(
            "screenshot_changes_frame",
            self._history_call("screenshot_changes_frame", apps, start, end, days, country, language, device),
            refresh,
        )

    @_documented
    def version_changes_frame(
        self,
        apps: str | int | Sequence[str | int],
        *,
        start: str | date | None = None,
        end: str | date | None = None,
        days: int | None = None,
        country: str = "us",
        language: str | None = None,
        device: str | None = None,
        refresh: RefreshOption | None = None,
    ) -> pl.DataFrame:
        """Each new version of each app, with its release notes and those of the version before.

        Arguments as for :meth:`changes_frame`; from the same cached answers.

        >>> sf.version_changes_frame(["3233849169", "361252007"]).select("app_id", "date", "new_version")  # doctest: +SKIP
        """
        return self._frame(
            "version_changes_frame",
            self._history_call("version_changes_frame", apps, start, end, days, country, language, device),
            refresh,
        )

    # -- keyword search --------------------------------------------------------------------

    @_documented
    def search_frame(
        self,
        keywords: str | Sequence[str],
        *,
        country: str = "us",
        language: str | None = None,
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
        and organically.

        >>> sf.search_frame(["photo editor", "meditation"]).filter(pl.col("rank") <= 3)  # doctest: +SKIP
        """
        return self._frame(
            "search_frame",
            {"keywords": keywords, "country": country, "language": language, "device": device, "ads": ads},
            refresh,
        )

    @_documented
    def search_history_frame(
        self,
        keywords: str | Sequence[str],
        *,
        start: str | date | None = None,
        end: str | date | None = None,
        days: int | None = None,
        country: str = "us",
        language: str | None = None,
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
        keyword containing a comma can still be passed in a list).

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
                    "language": language,
                    "device": device,
                },
            ),
            refresh,
        )

    def find_apps(
        self,
        term: str,
        *,
        country: str = "us",
        device: str = "iphone",
        top: int = 10,
        refresh: RefreshOption | None = None,
    ) -> pl.DataFrame:
        """The apps a live store search shows for ``term``, with their ids, titles and developers.

        One row per app among the ``top`` first results (at most 100), best rank first:
        ``rank``, ``app_id``, ``title``, ``subtitle``, ``developer_name``,
        ``rating_average``, ``price``, ``categories`` and ``icon_url``, the ids ready for
        :meth:`metadata_frame`, :meth:`changes_frame` or :func:`storeframes.rank_history`.
        It costs one live search (:meth:`search_frame`, cached for an hour) and the
        metadata of those apps (:meth:`metadata_frame`, cached for the UTC day):
        ``sf.plan("find_apps", term=..., top=...)`` shows it first, its metadata part an
        upper bound (``top`` apps, none cached), as the apps are not known before the
        search runs. ``term`` is one search
        term (commas and all); ``top``, ``country`` and ``device`` are checked before
        anything is sent. An app the store lists but whose metadata is not available in the
        country keeps its rank with a null title.

        >>> sf.find_apps("meditation", top=5).select("rank", "app_id", "title")  # doctest: +SKIP
        """
        _check_find(term, top)
        results = self.search_frame([term], country=country, device=device, refresh=refresh)
        ranked = results.sort("rank").unique("app_id", keep="first", maintain_order=True).head(top)
        ids = ranked["app_id"].to_list()
        metadata = (
            self.metadata_frame(ids, country=country, device=device, refresh=refresh)
            if ids
            else FRAMES["metadata_frame"].table.empty()
        )
        about = [c for c in FIND_APPS_COLUMNS if c not in ("rank", "app_id")]
        found = ranked.select("rank", "app_id").join(metadata.select("app_id", *about), on="app_id", how="left")
        return found.sort("rank").select(FIND_APPS_COLUMNS)

    # -- conversion benchmarks ---------------------------------------------------------------

    @_documented
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


def _check_find(term: Any, top: Any) -> None:
    """Refuse a ``term`` or ``top`` of :meth:`FrameFunctions.find_apps` before anything is sent."""
    if not isinstance(term, str) or not term.strip():
        raise InvalidParameterError("term", term, "one search term as a non-empty text", endpoint="find_apps")
    if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= MOST_FOUND_APPS:
        raise InvalidParameterError(
            "top",
            top,
            f"a whole number from 1 to {MOST_FOUND_APPS}: how many of the first results to look up",
            endpoint="find_apps",
        )


class Planner(Protocol):
    """What :func:`plan_find_apps` needs of a client: its endpoints (with their prices) and :meth:`plan`."""

    @property
    def endpoints(self) -> Mapping[str, Endpoint]: ...

    def plan(self, endpoint: str, **params: Any) -> Plan: ...


def plan_find_apps(client: Planner, params: Mapping[str, Any], *, refresh: RefreshOption | None = None) -> Plan:
    """What :meth:`FrameFunctions.find_apps` called with ``params`` would send and cost, nothing sent.

    Its rows are the live search (sent or cached, as for ``search_frame``) and the
    metadata of ``top`` apps, 5 to a request, counted as sent: an upper bound, as the
    apps are not known before the search runs (those already cached cost nothing).
    """
    signature = inspect.signature(FrameFunctions.find_apps)
    try:
        bound = signature.bind(None, **params)
    except TypeError as exc:
        raise InvalidParameterError("arguments", dict(params), f"those of find_apps{signature}: {exc}") from None
    bound.apply_defaults()
    term, country, device, top = (bound.arguments[name] for name in ("term", "country", "device", "top"))
    _check_find(term, top)
    search = client.plan("search_frame", keywords=[term], country=country, device=device, refresh=refresh)
    ep = client.endpoints["metadata"]
    where = {"country": country.strip().lower(), "device": device.strip().lower()}
    rows = []
    for first in range(0, top, MAX_APPS_PER_REQUEST):
        last = min(first + MAX_APPS_PER_REQUEST, top)
        shown = {"apps": f"results {first + 1}-{last} of the search", **where}
        request = {"apps": ",".join(["0"] * (last - first)), **where}
        rows.append(
            {
                "endpoint": ep.name,
                "params": key(shown),
                "source": "send",
                "cells": last - first,
                "credits": ep.estimate(request),
            }
        )
    metadata = pl.DataFrame(rows, schema=PLAN_SCHEMA, orient="row")
    return Plan(
        endpoint="find_apps",
        requests=pl.concat([search.requests, metadata]),
        cells=search.cells + top,
        cached_cells=search.cached_cells,
    )
