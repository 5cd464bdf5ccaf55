"""The frame functions: one call, one tidy polars DataFrame of a declared schema.

Each frame function plans its requests through the cache, fetches what is missing (under
the budget and the rate limit), flattens every answer with a pure flattener
(:mod:`storeframes.flatteners`) and concatenates. The frame of each cached answer is kept
beside it as Parquet (``frames/<table>/<entry>.parquet``), so the tables of one metadata
answer (metadata, versions, screenshots ...) cost the credits of one fetch, and a warm
call reads Parquet without touching the raw JSON.

They are methods of :class:`~storeframes.Client` and, with the default client, functions
of the package (see :func:`storeframes.configure`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

import polars as pl

from . import catalog, planning
from ._version import __version__
from .errors import InvalidParameterError, StoreframesError
from .flatteners import (
    Answers,
    Flat,
    Keys,
    batch_benchmarks,
    batch_changes,
    batch_in_app_purchases,
    batch_metadata,
    batch_metrics,
    batch_permissions,
    batch_privacy_changes,
    batch_related_apps,
    batch_screenshot_changes,
    batch_screenshots,
    batch_search,
    batch_search_history,
    batch_version_changes,
    batch_versions,
    batch_videos,
)
from .schemas import (
    BENCHMARKS,
    CHANGES,
    IN_APP_PURCHASES,
    METADATA,
    METRICS,
    PERMISSIONS,
    PRIVACY_CHANGES,
    RELATED_APPS,
    SCREENSHOT_CHANGES,
    SCREENSHOTS,
    SEARCH,
    SEARCH_HISTORY,
    VERSION_CHANGES,
    VERSIONS,
    VIDEOS,
    TableSchema,
)

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

    from .answers import Response
    from .cache import Cache, Entry, Refresh
    from .catalog import Endpoint

__all__ = ["FRAMES", "FrameMethods", "FrameSpec"]

DEFAULT_METRICS = ("downloads", "revenues", "app-power", "ratings")


@dataclass(frozen=True)
class FrameSpec:
    """What a frame function fetches and how it flattens one answer.

    ``revision`` names the flattener's output; with the package version it decides
    whether a frame kept in the cache is still good (otherwise it is rebuilt from the
    raw answer, at no cost). ``renames`` maps the function's arguments to the
    endpoint's parameters where they differ.
    """

    name: str
    endpoint: str
    table: TableSchema
    flatten: Callable[[Answers], Flat]
    revision: int = 1
    renames: Mapping[str, str] = field(default_factory=dict)
    fan_out: Mapping[str, bool] = field(default_factory=dict)
    """Parameters taking one value per request, for which a call may give several: one request
    each (``keyword``, ``country`` ...); True where a text value may list them comma-separated."""
    switch: tuple[str, str] | None = None
    """``(argument, endpoint)``: a True/False argument that, when True, sends to another endpoint."""

    @property
    def version(self) -> str:
        return f"{__version__}/{self.name}/{self.revision}"

    def params(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The endpoint's parameters for the function's arguments (None means the default).

        With no ``device``, the apps' ids choose it: package names mean android, numeric
        ids iphone.
        """
        if "device" in arguments and arguments["device"] is None and "apps" in arguments:
            arguments = {**arguments, "device": catalog.device_for(arguments["apps"])}
        return {self.renames.get(k, k): v for k, v in arguments.items() if v is not None}

    def route(self, arguments: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """The endpoint a call goes to, and its arguments without the one that chose it."""
        arguments = dict(arguments)
        if self.switch is None:
            return self.endpoint, arguments
        name, other = self.switch
        flag = arguments.pop(name, False)
        if not isinstance(flag, bool):
            raise InvalidParameterError(name, flag, "True or False", endpoint=self.name)
        if not flag:
            return self.endpoint, arguments
        ep = catalog.ENDPOINTS[other]
        device = arguments.get("device")
        if isinstance(device, str) and device.strip().lower() not in ep.devices:
            raise InvalidParameterError(
                "device",
                device,
                f"one of {', '.join(ep.devices)} with {name}=True (the {ep.summary})",
                endpoint=self.name,
            )
        return other, arguments

    def calls(self, arguments: Mapping[str, Any]) -> tuple[str, list[dict[str, Any]]]:
        """The endpoint and one call of its parameters per value of each fanned-out parameter.

        Repeated values are asked for once; an empty list is refused.
        """
        endpoint, arguments = self.route(arguments)
        calls = [self.params(arguments)]
        back = {param: arg for arg, param in self.renames.items()}
        for param, split in self.fan_out.items():
            if param not in calls[0]:
                continue
            values = _fan_values(back.get(param, param), calls[0][param], split, self.name)
            calls = [{**call, param: value} for call in calls for value in values]
        return endpoint, calls

    def build(self, responses: Sequence[Response]) -> Flat:
        """The frame of several answers in one walk, and each answer's number of rows."""
        return self.flatten([(r.result, Keys.of(r.params, r.echo, r.fetched_at)) for r in responses])

    def speak(self, exc: InvalidParameterError) -> InvalidParameterError:
        """The error of a renamed parameter in the words of the function (``start``, not ``start_date``)."""
        back = {param: arg for arg, param in self.renames.items()}
        allowed = exc.allowed
        for param, arg in back.items():
            allowed = allowed.replace(f"{param}=", f"{arg}=")
        if exc.parameter not in back and allowed == exc.allowed:
            return exc
        return InvalidParameterError(back.get(exc.parameter, exc.parameter), exc.value, allowed, endpoint=self.name)


def _fan_values(argument: str, value: Any, split: bool, frame: str) -> list[Any]:
    """The values of a fanned-out argument: one text (comma-separated where ``split``) or a list."""
    if isinstance(value, str):
        values: list[Any] = [v.strip() for v in value.split(",")] if split else [value]
    elif isinstance(value, Iterable) and not isinstance(value, (bytes, Mapping)):
        values = list(value)
    else:
        return [value]  # the endpoint's validation says what is wrong with it
    unique: list[Any] = []
    for item in values:
        if item not in unique:
            unique.append(item)
    if not unique or unique == [""]:
        raise InvalidParameterError(
            argument, value, f"at least one value ({argument} takes a text or a list)", endpoint=frame
        )
    if None in unique:  # else the endpoint would call the missing value "required"
        raise InvalidParameterError(argument, value, f"each item of {argument} is a text, not None", endpoint=frame)
    return unique


_DATES = {"start": "start_date", "end": "end_date"}
_KEYWORDS = {"keywords": "keyword"}

FRAMES: dict[str, FrameSpec] = {
    spec.name: spec
    for spec in (
        FrameSpec("metadata_frame", "metadata", METADATA, batch_metadata),
        FrameSpec("versions_frame", "metadata", VERSIONS, batch_versions),
        FrameSpec("screenshots_frame", "metadata", SCREENSHOTS, batch_screenshots),
        FrameSpec("videos_frame", "metadata", VIDEOS, batch_videos),
        FrameSpec("in_app_purchases_frame", "metadata", IN_APP_PURCHASES, batch_in_app_purchases),
        FrameSpec("related_apps_frame", "metadata", RELATED_APPS, batch_related_apps),
        FrameSpec("permissions_frame", "metadata", PERMISSIONS, batch_permissions),
        FrameSpec("metrics_frame", "metrics", METRICS, batch_metrics),
        FrameSpec("changes_frame", "changes", CHANGES, batch_changes, renames=_DATES),
        FrameSpec("privacy_changes_frame", "changes", PRIVACY_CHANGES, batch_privacy_changes, renames=_DATES),
        FrameSpec("screenshot_changes_frame", "changes", SCREENSHOT_CHANGES, batch_screenshot_changes, renames=_DATES),
        FrameSpec("version_changes_frame", "changes", VERSION_CHANGES, batch_version_changes, renames=_DATES),
        FrameSpec(
            "search_frame",
            "search",
            SEARCH,
            batch_search,
            renames=_KEYWORDS,
            fan_out={"keyword": False},
            switch=("ads", "search_ads"),
        ),
        FrameSpec(
            "search_history_frame",
            "search_history",
            SEARCH_HISTORY,
            batch_search_history,
            renames={**_KEYWORDS, **_DATES},
            fan_out={"keyword": False},
        ),
        FrameSpec(
            "benchmarks_frame",
            "benchmarks",
            BENCHMARKS,
            batch_benchmarks,
            renames={"countries": "country", "channels": "channel", **_DATES},
            fan_out={"country": True, "channel": True},
        ),
    )
}


def resolve(name: str, calls: Sequence[Mapping[str, Any]]) -> tuple[str, list[Mapping[str, Any]]]:
    """An endpoint and its calls from a frame function's name and arguments, its defaults applied.

    An endpoint's name passes through unchanged.
    """
    spec = FRAMES.get(name)
    if spec is None:
        return name, list(calls)
    signature = inspect.signature(getattr(FrameMethods, name))
    resolved: list[Mapping[str, Any]] = []
    endpoints = set()
    for call in calls:
        try:
            bound = signature.bind(None, **call)
        except TypeError as exc:
            raise InvalidParameterError("arguments", dict(call), f"those of {name}{signature}: {exc}") from None
        bound.apply_defaults()
        arguments = {k: v for k, v in bound.arguments.items() if k not in ("self", "refresh")}
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


class _Vanished(Exception):
    """A cached answer disappeared between planning and reading; plan again."""


def _keep_cells(frame: pl.DataFrame, ep: Endpoint, cells: Iterable[planning.Cell]) -> pl.DataFrame:
    """The rows of ``frame`` that stand for ``cells`` (for an answer shared with other calls)."""
    entity = "app_id" if ep.entity == "apps" else "keyword"
    columns = [entity] + (["metric"] if ep.facet else []) + (["date"] if ep.daily else [])
    wanted = {
        "\x1f".join(str(part) for part, used in zip(cell, (True, bool(ep.facet), ep.daily), strict=True) if used)
        for cell in cells
    }
    key = pl.concat_str([pl.col(c).cast(pl.String) for c in columns], separator="\x1f")
    return frame.filter(key.is_in(list(wanted)))


def _documented(table: TableSchema) -> Callable[[Callable[..., pl.DataFrame]], Callable[..., pl.DataFrame]]:
    """Append the table's schema to a frame function's docstring."""

    def document(function: Callable[..., pl.DataFrame]) -> Callable[..., pl.DataFrame]:
        function.__doc__ = inspect.cleandoc(function.__doc__ or "") + "\n\n" + table.docstring()
        return function

    return document


class FrameMethods:
    """The frame functions as methods; mixed into :class:`~storeframes.Client`."""

    cache: Cache | None

    if TYPE_CHECKING:

        def _executor(self) -> ThreadPoolExecutor: ...

        def _gather(
            self, endpoint: str, calls: Sequence[Mapping[str, Any]], refresh: Refresh | None
        ) -> tuple[Endpoint, list[tuple[dict[str, str], list[Any]]]]: ...

    # -- the pipeline ------------------------------------------------------------------------

    def _frame(self, name: str, arguments: Mapping[str, Any], refresh: Refresh | None) -> pl.DataFrame:
        spec = FRAMES[name]
        try:
            endpoint, calls = spec.calls(arguments)
        except InvalidParameterError as exc:
            raise spec.speak(exc) from None
        for _ in range(3):
            try:
                ep, gathered = self._gather(endpoint, calls, refresh)
                frames = self._piece_frames(spec, [piece for _, pieces in gathered for piece in pieces])
                break
            except _Vanished:
                continue
            except InvalidParameterError as exc:
                raise spec.speak(exc) from None
        else:
            raise StoreframesError(f"the cache at {self.cache} keeps losing answers while {name} reads them")
        parts: list[pl.DataFrame] = []
        taken = 0
        for canonical, pieces in gathered:
            mine = frames[taken : taken + len(pieces)]
            taken += len(pieces)
            mine = [f if p.whole else _keep_cells(f, ep, p.cells) for f, p in zip(mine, pieces, strict=True)]
            frame = pl.concat(mine, how="vertical") if mine else spec.table.empty()
            if ep.daily and frame.height:  # only the days asked for, whatever an answer also held
                first, last = (date.fromisoformat(canonical[p]) for p in ("start_date", "end_date"))
                frame = frame.filter(pl.col("date").is_between(first, last))
            parts.append(frame)
        frame = pl.concat(parts, how="vertical") if len(parts) > 1 else parts[0] if parts else spec.table.empty()
        return self._in_order(frame, ep, spec, calls[0], [canonical for canonical, _ in gathered])

    def _piece_frames(self, spec: FrameSpec, pieces: Sequence[Any]) -> list[pl.DataFrame]:
        """Each piece's frame: kept frames are read from the cache; the others are built in one walk and kept."""
        frames: list[pl.DataFrame | None] = [None] * len(pieces)
        cache = self.cache
        if cache is not None:
            kept = [(i, p.entry) for i, p in enumerate(pieces) if p.entry is not None]

            def read(entry: Entry) -> pl.DataFrame | None:
                return cache.read_frame(entry, spec.table.name, spec.version)

            # Parquet reads release the GIL: many small files go faster on the client's threads
            found = (
                self._executor().map(read, [e for _, e in kept]) if len(kept) > 4 else map(read, [e for _, e in kept])
            )
            for (i, _), frame in zip(kept, found, strict=True):
                frames[i] = frame
        todo: list[tuple[int, Response]] = []
        for i, piece in enumerate(pieces):
            if frames[i] is not None:
                continue
            entry: Entry | None = piece.entry
            response = piece.response
            if response is None and entry is not None and self.cache is not None:
                response = self.cache.load(entry)
            if response is None:
                raise _Vanished
            todo.append((i, response))
        if todo:
            built, counts = spec.build([response for _, response in todo])
            offset = 0
            for (i, _), count in zip(todo, counts, strict=True):
                frames[i] = built.slice(offset, count)
                offset += count
                entry = pieces[i].entry
                if entry is not None and self.cache is not None:
                    self.cache.write_frame(entry, spec.table.name, spec.version, frames[i])
        return frames  # type: ignore[return-value]

    @staticmethod
    def _in_order(
        frame: pl.DataFrame,
        ep: Endpoint,
        spec: FrameSpec,
        params: Mapping[str, Any],
        calls: Sequence[Mapping[str, str]],
    ) -> pl.DataFrame:
        """Rows in the order the apps (metrics, keywords, countries ...) were asked for, then by day.

        Rows of one app or keyword (and day) stay in the order the answer had them.
        """
        if frame.height < 2:
            return frame
        order: list[pl.Expr] = []

        def given(column: str, values: Sequence[str]) -> None:
            values = list(dict.fromkeys(values))
            if len(values) > 1:
                order.append(pl.col(column).replace_strict(values, list(range(len(values))), default=len(values)))

        if "apps" in params:
            given("app_id", catalog.app_list(params["apps"]))
        if ep.facet and "metrics" in params:
            names = params["metrics"].split(",") if isinstance(params["metrics"], str) else params["metrics"]
            given("metric", [catalog.METRIC_ALIASES.get(m.strip().lower(), m.strip().lower()) for m in names])
        for param in spec.fan_out:
            if all(param in call for call in calls):
                given(param, [call[param] for call in calls])
        if ep.daily:
            order.append(pl.col("date"))
        return frame.sort(order, maintain_order=True) if order else frame

    # -- app metadata ---------------------------------------------------------------------------

    @_documented(METADATA)
    def metadata_frame(
        self,
        apps: str | Sequence[str],
        *,
        country: str = "us",
        language: str | None = None,
        device: str | None = None,
        refresh: Refresh | None = None,
    ) -> pl.DataFrame:
        """Current metadata, one row per app, the same columns for iphone, ipad and android.

        ``apps`` is a list or a comma-separated string of ids of one store, any number of
        them (sent 5 to a request). ``device`` is iphone, ipad or android; by default the
        ids choose (package names mean android, numeric ids iphone). ``language`` defaults
        to the country's language. Apps not available in the country are left
        out and named in an :class:`~storeframes.AppsUnavailableWarning`. ``refresh``
        overrides the client's cache policy for this call (``"auto"``, ``"always"``,
        ``"never"``). The other metadata tables (:meth:`versions_frame`,
        :meth:`screenshots_frame` ...) come from the same cached answers at no cost.

        >>> sf.metadata_frame(["284882215", "389801252"]).select("app_id", "title", "rating_average")  # doctest: +SKIP
        shape: (2, 3)
        """
        return self._frame(
            "metadata_frame", {"apps": apps, "country": country, "language": language, "device": device}, refresh
        )

    @_documented(VERSIONS)
    def versions_frame(
        self,
        apps: str | Sequence[str],
        *,
        country: str = "us",
        language: str | None = None,
        device: str | None = None,
        refresh: Refresh | None = None,
    ) -> pl.DataFrame:
        """The versions listed in each app's metadata, newest first (``position`` 1).

        Arguments as for :meth:`metadata_frame`; from the same metadata answers.

        >>> sf.versions_frame("284882215").group_by("app_id").len()  # doctest: +SKIP
        """
        return self._frame(
            "versions_frame", {"apps": apps, "country": country, "language": language, "device": device}, refresh
        )

    @_documented(SCREENSHOTS)
    def screenshots_frame(
        self,
        apps: str | Sequence[str],
        *,
        country: str = "us",
        language: str | None = None,
        device: str | None = None,
        refresh: Refresh | None = None,
    ) -> pl.DataFrame:
        """One row per screenshot, by the answer's device key (iphone_6_5, ipadPro ...).

        An answer that lists screenshots flat (android) has the request's device as its
        key. Arguments as for :meth:`metadata_frame`; from the same metadata answers.

        >>> sf.screenshots_frame("284882215").filter(pl.col("device_key") == "iphone_6_5")  # doctest: +SKIP
        """
        return self._frame(
            "screenshots_frame", {"apps": apps, "country": country, "language": language, "device": device}, refresh
        )

    @_documented(VIDEOS)
    def videos_frame(
        self,
        apps: str | Sequence[str],
        *,
        country: str = "us",
        language: str | None = None,
        device: str | None = None,
        refresh: Refresh | None = None,
    ) -> pl.DataFrame:
        """One row per preview video, by device key (android lists bare URLs).

        Arguments as for :meth:`metadata_frame`; from the same metadata answers.

        >>> sf.videos_frame("284882215").select("device_key", "url", "width", "height")  # doctest: +SKIP
        """
        return self._frame(
            "videos_frame", {"apps": apps, "country": country, "language": language, "device": device}, refresh
        )

    @_documented(IN_APP_PURCHASES)
    def in_app_purchases_frame(
        self,
        apps: str | Sequence[str],
        *,
        country: str = "us",
        language: str | None = None,
        device: str | None = None,
        refresh: Refresh | None = None,
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

    @_documented(RELATED_APPS)
    def related_apps_frame(
        self,
        apps: str | Sequence[str],
        *,
        country: str = "us",
        language: str | None = None,
        device: str | None = None,
        refresh: Refresh | None = None,
    ) -> pl.DataFrame:
        """The apps listed beside each app: customers_also_bought (iphone/ipad), similar_apps (android).

        Arguments as for :meth:`metadata_frame`; from the same metadata answers.

        >>> sf.related_apps_frame("284882215")["related_app_id"].to_list()[:3]  # doctest: +SKIP
        """
        return self._frame(
            "related_apps_frame", {"apps": apps, "country": country, "language": language, "device": device}, refresh
        )

    @_documented(PERMISSIONS)
    def permissions_frame(
        self,
        apps: str | Sequence[str],
        *,
        country: str = "us",
        language: str | None = None,
        device: str | None = None,
        refresh: Refresh | None = None,
    ) -> pl.DataFrame:
        """The permissions each android app asks for (empty for iphone/ipad apps).

        Arguments as for :meth:`metadata_frame`; from the same metadata answers.

        >>> sf.permissions_frame("com.example.notes")["permission"].to_list()[:2]  # doctest: +SKIP
        """
        return self._frame(
            "permissions_frame", {"apps": apps, "country": country, "language": language, "device": device}, refresh
        )

    # -- app metrics -------------------------------------------------------------------------------

    @_documented(METRICS)
    def metrics_frame(
        self,
        apps: str | Sequence[str],
        metrics: str | Sequence[str] = DEFAULT_METRICS,
        *,
        country: str = "us",
        device: str | None = None,
        refresh: Refresh | None = None,
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

    @_documented(CHANGES)
    def changes_frame(
        self,
        apps: str | Sequence[str],
        *,
        start: str | date | None = None,
        end: str | date | None = None,
        country: str = "us",
        language: str | None = None,
        device: str | None = None,
        refresh: Refresh | None = None,
    ) -> pl.DataFrame:
        """What each app changed in its store listing, and when: one row per change, oldest first.

        ``start`` and ``end`` are days (``"2026-01-31"`` or a ``datetime.date``), both
        included; by default the 30 days up to yesterday (UTC), as the service has it. The
        history is cached day by day: a longer range later fetches only the days not held.
        A day is final once it is two days old; more recent days are fetched again after
        six hours. Other arguments as for :meth:`metadata_frame`.

        ``old_value`` and ``new_value`` are text whatever the target: text as it is,
        integers as digits, objects and arrays as compact JSON. Sizes and icon URLs also
        have typed columns, and :meth:`version_changes_frame`,
        :meth:`screenshot_changes_frame` and :meth:`privacy_changes_frame` unfold the
        nested values (from the same cached answers, at no cost). A target storeframes
        does not know (the contract does not list them all) is kept, and named once in an
        :class:`~storeframes.UnknownFieldWarning`. ``version`` is null where the service
        ties no version to the change (``version_raw`` keeps what it sent).

        >>> sf.changes_frame(["3233849169"], start="2026-08-01", end="2026-10-31").group_by("target").len()  # doctest: +SKIP
        """
        return self._frame("changes_frame", _history_call(apps, start, end, country, language, device), refresh)

    @_documented(PRIVACY_CHANGES)
    def privacy_changes_frame(
        self,
        apps: str | Sequence[str],
        *,
        start: str | date | None = None,
        end: str | date | None = None,
        country: str = "us",
        language: str | None = None,
        device: str | None = None,
        refresh: Refresh | None = None,
    ) -> pl.DataFrame:
        """The data types of each privacy_info change (iphone/ipad privacy labels), section by section.

        One row per change, section (DATA_LINKED_TO_YOU, DATA_NOT_LINKED_TO_YOU,
        DATA_USED_TO_TRACK_YOU) and data type, with ``status`` added, removed or kept
        between the labels before and after. Arguments as for :meth:`changes_frame`; from
        the same cached answers.

        >>> sf.privacy_changes_frame("3233849169", start="2026-01-01").filter(pl.col("status") != "kept")  # doctest: +SKIP
        """
        return self._frame("privacy_changes_frame", _history_call(apps, start, end, country, language, device), refresh)

    @_documented(SCREENSHOT_CHANGES)
    def screenshot_changes_frame(
        self,
        apps: str | Sequence[str],
        *,
        start: str | date | None = None,
        end: str | date | None = None,
        country: str = "us",
        language: str | None = None,
        device: str | None = None,
        refresh: Refresh | None = None,
    ) -> pl.DataFrame:
        """The screenshots before and after each screenshots change, with what was added or removed.

        One row per screenshot on each ``side`` (old, new) of a change, at its
        ``position``; ``status`` is added, removed or kept by screenshot id. Android gives
        no ``filename``. Arguments as for :meth:`changes_frame`; from the same cached
        answers.

        >>> sf.screenshot_changes_frame("3233849169").filter(pl.col("status") == "added")  # doctest: +SKIP
        """
        return self._frame(
            "screenshot_changes_frame", _history_call(apps, start, end, country, language, device), refresh
        )

    @_documented(VERSION_CHANGES)
    def version_changes_frame(
        self,
        apps: str | Sequence[str],
        *,
        start: str | date | None = None,
        end: str | date | None = None,
        country: str = "us",
        language: str | None = None,
        device: str | None = None,
        refresh: Refresh | None = None,
    ) -> pl.DataFrame:
        """Each new version of each app, with its release notes and those of the version before.

        Arguments as for :meth:`changes_frame`; from the same cached answers.

        >>> sf.version_changes_frame(["3233849169", "361252007"]).select("app_id", "date", "new_version")  # doctest: +SKIP
        """
        return self._frame("version_changes_frame", _history_call(apps, start, end, country, language, device), refresh)

    # -- keyword search --------------------------------------------------------------------

    @_documented(SEARCH)
    def search_frame(
        self,
        keywords: str | Sequence[str],
        *,
        country: str = "us",
        language: str | None = None,
        device: str = "iphone",
        ads: bool = False,
        refresh: Refresh | None = None,
    ) -> pl.DataFrame:
        """The live store search for each keyword: one row per keyword and result, rank 1 first.

        ``keywords`` is one keyword (a text, commas and all) or a list; each is one request,
        sent concurrently under the rate limit, and cached for an hour. ``device`` is
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

    @_documented(SEARCH_HISTORY)
    def search_history_frame(
        self,
        keywords: str | Sequence[str],
        *,
        start: str | date | None = None,
        end: str | date | None = None,
        country: str = "us",
        language: str | None = None,
        device: str = "iphone",
        refresh: Refresh | None = None,
    ) -> pl.DataFrame:
        """Where apps ranked for each keyword, day by day: one row per keyword, day and result.

        ``start`` and ``end`` are days (``"2026-01-31"`` or a ``datetime.date``), both
        included; by default the 31 days up to yesterday (UTC). A day the service did not
        record (the keyword was not tracked) has no rows; the cache remembers it, so a
        final day is never asked for again. The history is cached day by day: a longer
        range later fetches only the days not held, one request per keyword and run of
        missing days. When ``end`` is today, the service fills today with a live search
        (at most 250 results): those rows have ``source="live"``, and today is fetched
        again after an hour. At most 500 results a day are kept on iphone/ipad and 250 on
        android, as the contract says. :func:`storeframes.rank_history` turns the frame
        into each app's rank per keyword and day.

        >>> sf.search_history_frame(["photo editor"], start="2026-09-01").filter(pl.col("app_id") == "3233849169")  # doctest: +SKIP
        """
        return self._frame(
            "search_history_frame",
            {
                "keywords": keywords,
                "start": start,
                "end": end,
                "country": country,
                "language": language,
                "device": device,
            },
            refresh,
        )

    # -- conversion benchmarks ---------------------------------------------------------------

    @_documented(BENCHMARKS)
    def benchmarks_frame(
        self,
        *,
        countries: str | Sequence[str] = "us",
        device: str = "iphone",
        type: str = "free",
        channels: str | Sequence[str] = "all",
        start: str | date | None = None,
        end: str | date | None = None,
        refresh: Refresh | None = None,
    ) -> pl.DataFrame:
        """Conversion-rate benchmarks per store category: one row per country, channel and category.

        ``countries`` and ``channels`` take one value, a comma-separated text or a list;
        the service takes one country and one channel per request, so each pair is one
        request (about 1,000 credits each: see :meth:`plan` first), sent concurrently.
        ``device`` is iphone or android, ``type`` free or paid. Channels are checked for
        the device before anything is sent: all, search, browse, appref, webref on
        iphone; all, search, explore, referrals on android. ``start`` and ``end`` default
        to the 31 days up to yesterday; a range is cached whole, as the rates average over it.

        Rates are percent and stay null where too few apps have data (never zero);
        ``page_views_to_installs`` can exceed 100, as installs also come straight from
        search and browse results. On android, and for the iphone referrer channels, only
        ``page_views_to_installs`` is given.

        >>> sf.benchmarks_frame(countries=["us", "gb"], channels="search").sort("page_views_to_installs")  # doctest: +SKIP
        """
        return self._frame(
            "benchmarks_frame",
            {"countries": countries, "device": device, "type": type, "channels": channels, "start": start, "end": end},
            refresh,
        )


def _history_call(apps: Any, start: Any, end: Any, country: Any, language: Any, device: Any) -> dict[str, Any]:
    return {"apps": apps, "start": start, "end": end, "country": country, "language": language, "device": device}
