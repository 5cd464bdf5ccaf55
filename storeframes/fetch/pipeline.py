"""How a frame is made: the frame specs, and the pipeline from a call to one tidy frame.

A :class:`FrameSpec` says which endpoint a frame function asks, how its arguments map
to the endpoint's parameters (renames, values fanned out one request each, a switch to
another endpoint) and which pure flattener (:mod:`storeframes.flatteners`) turns answers
into its table. :data:`FRAMES` holds one spec per frame function.

:class:`FrameMaker` runs a spec: it asks the client's :class:`~storeframes.fetch.fetcher.Fetcher` to
gather the parts of each call (the engine's plan, then fetching what is missing), reads the frame kept beside
each cached entry (``frames/table=<table>/``) or flattens the raw answers in
one walk and keeps their frames, keeps only the cells each part provides, and orders
the rows as the user asked. So the tables of one metadata answer (metadata, versions,
screenshots ...) cost the credits of one fetch, and a warm call reads Parquet without
touching the raw JSON.

While a call is made, Python's cyclic garbage collector is paused (see
:func:`collector_paused`): parsed answers are millions of lists and dicts that form no
cycle, and the collector would otherwise walk them again and again as more are made.

A kept frame whose columns are not the table's (a file edited or damaged) is built
again from the raw answer, at no cost, and kept again; so is one that is not its answer's
(rows other than the index recorded, or of an app, keyword or metric its request did not name). A flattener that fails on an
answer raises :class:`~storeframes.errors.ResponseShapeError` naming the frame function
and the answers: they are in the cache already, so calling again (after an update of
storeframes) costs nothing.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import polars as pl

from .. import catalog, planning
from .._version import __version__
from ..answers import Part, Response
from ..cache import Entry, RefreshOption
from ..catalog import Endpoint
from ..errors import InvalidParameterError, ResponseShapeError, StoreframesError, plural
from ..flatteners import (
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
from ..flatteners.columnar import history_from_columns
from ..schemas import (
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
from .fetcher import Fetcher
from .markets import markets

__all__ = ["DEFAULT_METRICS", "FRAMES", "FrameMaker", "FrameSpec", "cell_columns", "collector_paused"]

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
    from_columns: Callable[[Sequence[tuple[Any, Keys]]], Flat | None] | None = None
    """What ``flatten`` gives, from answers the request path read into columns (``Response.columns``); None
    where it cannot tell (then the parsed answers are flattened)."""

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
        """The endpoint and one call of its parameters per value of each fanned-out parameter, the countries of
        ``countries=`` first (:mod:`storeframes.fetch.markets`).

        Repeated values are asked for once; an empty list is refused.
        """
        endpoint, arguments = self.route(arguments)
        arguments, several = markets(arguments, endpoint, self.name)  # countries=: the calls for each in turn
        calls = [self.params(arguments)]
        back = {param: arg for arg, param in self.renames.items()}
        for param, split in self.fan_out.items():
            if param not in calls[0]:
                continue
            values = _fan_values(back.get(param, param), calls[0][param], split, self.name)
            calls = [{**call, param: value} for call in calls for value in values]
        return endpoint, calls if several is None else several.calls(calls)

    def build(self, responses: Sequence[Response]) -> Flat:
        """The frame of several answers in one walk, and each answer's number of rows."""
        if self.from_columns is not None and responses and all(r.columns is not None for r in responses):
            read = self.from_columns([(r.columns, Keys.of(r.params, r.echo, r.fetched_at)) for r in responses])
            if read is not None:
                return read
        return self.flatten([(r.result, Keys.of(r.params, r.echo, r.fetched_at)) for r in responses])

    def build_each(
        self,
        responses: Sequence[Response],
        *,
        entries: Sequence[str | None] | None = None,
        map: Callable[[Callable[[Sequence[Response]], Flat], list[Sequence[Response]]], Iterable[Flat]] | None = None,
    ) -> list[pl.DataFrame]:
        """Each answer's frame, flattened together in one walk (one walk per share of ``map``'s threads).

        With ``map`` (the client's threads), the answers are flattened in up to
        :data:`FLATTEN_SHARES` shares at once: polars builds the columns of one share while
        Python walks the next. A failure of the flattener that is not a
        :class:`StoreframesError` already is raised as a
        :class:`~storeframes.errors.ResponseShapeError` naming this frame function and the
        answers: their requests and cache entries (``entries``, one per answer, where the
        responses do not name theirs).
        """
        shares = _shares(responses, FLATTEN_SHARES if map is not None else 1)
        try:
            built = list(map(self.build, shares)) if map is not None and len(shares) > 1 else [self.build(responses)]
        except StoreframesError:
            raise
        except (Exception, pl.exceptions.PanicException) as exc:  # a panic of polars derives from BaseException
            ids = list(entries) if entries is not None else [r.entry for r in responses]
            raise _flattening_failed(self, responses, ids, exc) from exc
        frames = []
        for frame, counts in built:
            offset = 0
            for count in counts:
                frames.append(frame.slice(offset, count))
                offset += count
        return frames

    def speak(self, exc: InvalidParameterError) -> InvalidParameterError:
        """The error of a renamed parameter in the words of the function (``start``, not ``start_date``)."""
        back = {param: arg for arg, param in self.renames.items()}
        allowed = exc.allowed
        for param, arg in back.items():
            allowed = allowed.replace(f"{param}=", f"{arg}=")
        if exc.parameter not in back and allowed == exc.allowed:
            return exc
        return InvalidParameterError(back.get(exc.parameter, exc.parameter), exc.value, allowed, endpoint=self.name)


FLATTEN_SHARES = 2
"""The most shares a batch of answers is flattened in at once, on the client's threads."""
_SHARE_BYTES = 1 << 20  # a share worth its thread: about a megabyte of answers


def _shares(responses: Sequence[Response], most: int) -> list[Sequence[Response]]:
    """``responses`` in up to ``most`` runs, in order, of about equal size (by their bodies' bytes, where known)."""
    sizes = [len(r.body) if r.body is not None else _SHARE_BYTES for r in responses]
    total = sum(sizes)
    most = min(most, len(responses), max(1, total // _SHARE_BYTES))
    if most <= 1:
        return [responses]
    out: list[Sequence[Response]] = []
    start, run = 0, 0
    for i, size in enumerate(sizes):
        run += size
        if len(out) < most - 1 and run >= total * (len(out) + 1) / most:
            out.append(responses[start : i + 1])
            start = i + 1
    out.append(responses[start:])
    return [share for share in out if share]


def _flattening_failed(
    spec: FrameSpec, responses: Sequence[Response], entries: Sequence[str | None], exc: BaseException
) -> ResponseShapeError:
    """The error of a flattener that failed on ``responses``: which frame, which answers, and that they are kept."""
    named = [
        f"{r.endpoint} {' '.join(f'{k}={v}' for k, v in r.params.items())}"
        + (f" (cache entry {entry})" if entry else "")
        for r, entry in zip(responses[:5], entries, strict=False)
    ]
    more = f" and {len(responses) - 5} more" if len(responses) > 5 else ""
    kept = any(entries)
    return ResponseShapeError(
        f"{spec.name} could not flatten {plural(len(responses), 'answer')}: {'; '.join(named)}{more}: "
        f"{type(exc).__name__}: {exc}"
        + (". The answers are kept in the cache: calling again costs no credits" if kept else ""),
        endpoint=responses[0].endpoint if responses else spec.endpoint,
    )


def _fan_values(argument: str, value: Any, split: bool, frame: str) -> list[str]:
    """The values of a fanned-out argument, each once: one text (comma-separated where ``split``) or a list."""
    values = list(dict.fromkeys(catalog.texts(argument, value, split=split, endpoint=frame)))
    if not values:
        raise InvalidParameterError(
            argument, value, f"at least one value ({argument} takes a text or a list)", endpoint=frame
        )
    return values


_DATES = {"start": "start_date", "end": "end_date"}
_KEYWORDS = {"keywords": "keyword"}

FRAMES: dict[str, FrameSpec] = {
    spec.name: spec
    for spec in (
        FrameSpec("metadata_frame", "metadata", METADATA, batch_metadata, revision=2),  # 2: a free app's price_value 0
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
            fan_out={"keyword": True},
            switch=("ads", "search_ads"),
        ),
        FrameSpec(
            "search_history_frame",
            "search_history",
            SEARCH_HISTORY,
            batch_search_history,
            renames={**_KEYWORDS, **_DATES},
            fan_out={"keyword": True},
            from_columns=history_from_columns,
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


class _Vanished(Exception):
    """A cached answer disappeared between planning and reading; plan again."""


def cell_columns(ep: Endpoint) -> list[str]:
    """The columns of a frame that name its rows' cell: the app or keyword, the metric, the day."""
    entity = [] if ep.entity is None else ["app_id" if ep.entity == "apps" else "keyword"]
    return entity + (["metric"] if ep.facet else []) + (["date"] if ep.daily else [])


def _strays(rows: pl.DataFrame, by: str, entries: Mapping[str, Entry]) -> dict[str, str]:
    """Why the kept rows of each answer of ``entries`` (named by column ``by`` of ``rows``) are not its answer's:
    rows of an app, keyword or metric its request did not name (a file planted, or written over); an answer whose
    rows are all of its cells is left out. One anti-join for every answer of an endpoint, nulls never stray."""
    found: dict[str, str] = {}
    for endpoint in sorted({entry.endpoint for entry in entries.values()}):
        ep = catalog.ENDPOINTS.get(endpoint)
        if ep is None:
            continue
        mine = {key: entry for key, entry in entries.items() if entry.endpoint == endpoint}
        named = [(planning.entities_of, cell_columns(ep)[0])] if ep.entity is not None else []
        named += [(planning.facets_of, "metric")] if ep.facet else []
        for asked, column in named:
            if column not in rows.columns or rows.is_empty():
                continue
            keys: list[str] = []
            values: list[str] = []
            for key, entry in mine.items():
                wanted = {str(value) for value in asked(ep, entry.params) if value is not None}
                keys += [key] * len(wanted)
                values += wanted
            allowed = pl.DataFrame({by: keys, column: values}, schema={by: pl.String, column: pl.String})
            seen = rows.select(pl.col(by).cast(pl.String), pl.col(column).cast(pl.String)).drop_nulls(column)
            if len(mine) < len(entries) or found:
                seen = seen.filter(pl.col(by).is_in(list(mine)) & ~pl.col(by).is_in(list(found)))
            stray = seen.join(allowed, on=[by, column], how="anti").unique(by, keep="first", maintain_order=True)
            for key, value in stray.iter_rows():
                if key in mine:
                    found.setdefault(key, f"rows of {column} {value!r}, which its request did not name")
    return found


def _keep_cells(frame: pl.DataFrame, ep: Endpoint, cells: Iterable[planning.Cell]) -> pl.DataFrame:
    """The rows of ``frame`` that stand for ``cells`` (for an answer shared with other calls)."""
    columns = cell_columns(ep)
    used = (ep.entity is not None, bool(ep.facet), ep.daily)
    wanted = {"\x1f".join(str(part) for part, use in zip(cell, used, strict=True) if use) for cell in cells}
    key = pl.concat_str([pl.col(c).cast(pl.String) for c in columns], separator="\x1f")
    return frame.filter(key.is_in(list(wanted)))


_pause_lock = threading.Lock()
_pauses = 0  # calls under way that paused the collector
_resume = False  # whether the collector was on when the first of them began


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while the block runs, on again after (if it was on).

    Parsing and flattening answers makes many lists and dicts and no cycle: each object is
    freed by its count of references, while the collector, run every 700 new containers,
    walks the young ones again and again, and every live one in its older passes (a
    metadata, changes or history call took 5-15% longer with it on). Blocks on several
    threads share one pause: the collector comes back when the last of them ends, also when
    it raised.

    >>> import gc
    >>> with collector_paused():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    """
    global _pauses, _resume
    with _pause_lock:
        if _pauses == 0:
            _resume = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pauses -= 1
            if _pauses == 0 and _resume:
                gc.enable()


class FrameMaker:
    """Makes the frame of a frame function's call from the parts a :class:`~storeframes.fetch.fetcher.Fetcher` gathers.

    >>> from storeframes import sandbox
    >>> client = sandbox.client()
    >>> FrameMaker(client.fetcher).make("metadata_frame", {"apps": "3233849169"}, None).height
    1
    >>> client.close()
    """

    def __init__(self, fetcher: Fetcher):
        self.fetcher = fetcher

    def make(self, name: str, arguments: Mapping[str, Any], refresh: RefreshOption | None) -> pl.DataFrame:
        """The frame of the frame function ``name`` called with ``arguments`` (the collector paused meanwhile)."""
        with collector_paused():
            return self._make(name, arguments, refresh)

    def _make(self, name: str, arguments: Mapping[str, Any], refresh: RefreshOption | None) -> pl.DataFrame:
        spec = FRAMES[name]
        try:
            endpoint, calls = spec.calls(arguments)
        except InvalidParameterError as exc:
            raise spec.speak(exc) from None
        for _ in range(3):
            try:
                ep, gathered = self.fetcher.gather(endpoint, calls, refresh)
                frames = self._part_frames(spec, [part for _, parts in gathered for part in parts])
                break
            except _Vanished:
                continue
            except InvalidParameterError as exc:
                raise spec.speak(exc) from None
        else:
            raise StoreframesError(f"the cache at {self.fetcher.cache} keeps losing answers while {name} reads them")
        call_frames: list[pl.DataFrame] = []
        taken = 0
        for canonical, parts in gathered:
            mine = frames[taken : taken + len(parts)]
            taken += len(parts)
            mine = [f if p.whole else _keep_cells(f, ep, p.cells) for f, p in zip(mine, parts, strict=True)]
            # one chunk: ordering the rows of a hundred slices took polars ten times as long as copying them
            frame = pl.concat(mine, how="vertical", rechunk=len(mine) > 1) if mine else spec.table.empty()
            if ep.daily and frame.height:  # only the days asked for, whatever an answer also held
                first, last = (date.fromisoformat(canonical[p]) for p in ("start_date", "end_date"))
                dates = frame.get_column("date")
                if dates.null_count() or not first <= dates.min() <= dates.max() <= last:  # type: ignore[operator]
                    frame = frame.filter(pl.col("date").is_between(first, last))
            call_frames.append(_in_order(frame, ep, calls[0]))
        # the calls come in the order their fanned-out values (keywords, countries ...) were given
        return pl.concat(call_frames, how="vertical") if call_frames else spec.table.empty()

    def _part_frames(self, spec: FrameSpec, parts: Sequence[Part]) -> list[pl.DataFrame]:
        """Each part's frame: kept frames are read from the cache; the others are built in one walk and kept."""
        frames: list[pl.DataFrame | None] = [None] * len(parts)
        cache = self.fetcher.cache
        entries: list[Entry | None] = [
            cache.entry(p.entry) if cache is not None and p.entry is not None else None for p in parts
        ]
        if cache is not None:
            kept = [(i, e) for i, e in enumerate(entries) if e is not None]
            # Parquet reads release the GIL: many small files go faster on the client's threads
            found = cache.frames.read(
                {e.id: e for _, e in kept}.values(),
                spec.table.name,
                spec.version,
                schema=spec.table.schema,  # a kept frame with other columns is built again
                map=self.fetcher.map if len(kept) > 4 else map,
                check=_strays,  # a kept frame holding rows of cells its answer does not is built again
            )
            for i, kept_entry in kept:
                frames[i] = found.get(kept_entry.id)
        todo: list[tuple[int, Response]] = []
        for i, part in enumerate(parts):
            if frames[i] is not None:
                continue
            response = part.response
            entry = entries[i]
            if response is None and entry is not None and cache is not None:
                response = cache.load(entry)
            if response is None:
                raise _Vanished
            todo.append((i, response))
        if todo:
            built = spec.build_each(
                [response for _, response in todo],
                entries=[parts[i].entry for i, _ in todo],
                map=self.fetcher.map,
            )
            for (i, _), frame in zip(todo, built, strict=True):
                frames[i] = frame
                entry = entries[i]
                if entry is not None and cache is not None:
                    cache.frames.write(entry, spec.table.name, spec.version, frame, later=True)
        return [frame if frame is not None else spec.table.empty() for frame in frames]


def _in_order(frame: pl.DataFrame, ep: Endpoint, params: Mapping[str, Any]) -> pl.DataFrame:
    """A call's rows in the order the apps (and metrics) were asked for, then by day.

    Rows of one app or keyword (and day) stay in the order the answer had them. (Each
    call has one value of each fanned-out parameter: the calls keep the order given.)
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
    if ep.facet and ep.facet in params:
        given("metric", catalog.metric_list(params[ep.facet]))
    if ep.daily:
        order.append(pl.col("date"))
    if not order or _ordered(frame, order):
        return frame
    return frame.sort(order, maintain_order=True)


def _ordered(frame: pl.DataFrame, order: Sequence[pl.Expr]) -> bool:
    """Whether the rows are in ``order`` already (one pass; a stable sort of the same frame takes several).

    The answers of a call usually come in the order asked, each with its days in order, so
    checking first spares sorting a year of history again.
    """
    keys = frame.select([expr.alias(f"k{i}") for i, expr in enumerate(order)])
    later: pl.Expr = pl.lit(True)  # row i+1 is not before row i on the keys from k onwards
    for i in reversed(range(len(order))):
        this, before = pl.col(f"k{i}"), pl.col(f"k{i}").shift(1)
        later = (this > before) | ((this == before) & later)
    return bool(keys.select(later.slice(1).fill_null(False).all()).item())
