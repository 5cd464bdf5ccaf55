"""A tracker's spec: what to fetch every day (or week, or month), read from TOML.

::

    [tracker]
    name = "photo-editors"
    cache_dir = "tracking-cache"      # a folder (relative to the spec file) or s3://bucket/prefix
    # workspace = "acme"              # or spend under a workspace of storeframes.toml: its token, cache, month budget
    budget_per_run = 20000            # credits, optional
    budget_per_month = 300000         # credits per calendar month (UTC), optional
    compact_at = 500                  # small files past which a run compacts the cache as it goes; 0: never
    country = "us"                    # defaults for every item below
    device = "iphone"

    [[track]]
    endpoint = "search"               # live organic search, a snapshot a day
    keywords = ["photo editor", "collage maker"]
    countries = ["us", "gb"]

    [[track]]
    endpoint = "metrics"
    apps = ["6441354028"]
    metrics = ["downloads", "ratings"]
    every = "7d"

An item takes the parameters of its frame function (``apps``, ``keywords``, ``metrics``,
``country`` or ``countries``, ``language``, ``device``, ``channels``, ``type``), its cadence
``every`` (``"1d"``, the default, ``"7d"``, ``"30d"``: any ``"<n>d"``), an optional ``name``
(by default the endpoint's, ``<endpoint>_2`` for its second item ...) and, for the history endpoints (``search_history``,
``changes``), ``lookback``: the days a first run fetches (``"30d"`` by default). Every value is
checked as the frame function checks it, when the spec is read: an unknown key, an unknown
endpoint or a bad value is a :class:`~storeframes.InvalidParameterError` naming the file, the
line and what is allowed, before anything is sent. ``[[alert]]`` and ``[notify]`` tables are read by
:mod:`storeframes.track.rules`, a ``[publish]`` table (the Delta Lake a run publishes its tables to) by
:mod:`storeframes.track.publishing`.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from ..catalog import ENDPOINTS, texts, today_utc, validate
from ..errors import ConfigurationError, InvalidParameterError, StoreframesError, shown_value
from ..frames.functions import resolve
from ..workspaces import CONFIG_NAME, Workspace, WorkspaceFileError
from ..workspaces import workspace as named_workspace
from .publishing import Publish, parse_publish
from .rules import Alert, Notify, parse_alerts, parse_notify

__all__ = ["COMPACT_AT", "CURRENT_ONLY", "HISTORY", "Item", "SpecError", "TrackerSpec", "load_spec", "parse_spec"]

HISTORY = ("search_history", "changes")
"""The endpoints of history: a run fetches the days since the last, a backfill any range."""

CURRENT_ONLY = ("search", "search_ads", "metadata", "metrics", "benchmarks")
"""The endpoints whose answer is the present only: a run keeps a snapshot of each."""

_FRAME = {
    "search": "search_frame",
    "search_ads": "search_frame",
    "search_history": "search_history_frame",
    "metadata": "metadata_frame",
    "changes": "changes_frame",
    "metrics": "metrics_frame",
    "benchmarks": "benchmarks_frame",
}
_COMMON = ("endpoint", "name", "every")
_KEYS: Mapping[str, tuple[str, ...]] = {
    "search": ("keywords", "country", "countries", "language", "device"),
    "search_ads": ("keywords", "country", "countries", "language", "device"),
    "search_history": ("keywords", "country", "countries", "language", "device", "lookback"),
    "metadata": ("apps", "country", "countries", "language", "device"),
    "changes": ("apps", "country", "countries", "language", "device", "lookback"),
    "metrics": ("apps", "metrics", "country", "countries", "device"),
    "benchmarks": ("country", "countries", "device", "type", "channels"),
}
_REQUIRED = {
    "search": "keywords",
    "search_ads": "keywords",
    "search_history": "keywords",
    "metadata": "apps",
    "changes": "apps",
    "metrics": "apps",
}
_TRACKER_KEYS = (
    "name",
    "cache_dir",
    "budget_per_run",
    "budget_per_month",
    "compact_at",
    "country",
    "device",
    "language",
    "workspace",
)
_MOST_CREDITS = 2**63 - 1  # what the ledger's Int64 columns hold
_NAME = re.compile(r"^(?!.*\.\.)[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")  # never "..": it names files of the cache
_DAYS = re.compile(r"^([1-9][0-9]{0,2})d$")
MOST_NESTED = 16
"""How deep a spec's values may nest, tables in tables and lists in lists (a spec's own nest 4 deep): a spec
nested deeper is refused before any of its values is looked at."""
DEFAULT_LOOKBACK = 30
"""Days of history a first run of a history item fetches (its ``lookback``)."""
COMPACT_AT = 500
"""The small files (answers' index files not yet compacted) past which a run compacts the tracker's cache
while its requests wait (``[tracker] compact_at``; 0 never): about five days of a tracker of a hundred requests a day."""
_MOST_FILES = 10**9


class SpecError(InvalidParameterError):
    """A tracker spec that cannot be used: where (file and line) and what is allowed."""


@dataclass(frozen=True)
class Item:
    """One ``[[track]]`` table: what to fetch, how often, as calls of its frame function."""

    index: int
    """Its place in the spec, from 0: budgets leave items out in this order."""
    name: str
    endpoint: str
    every_days: int
    frame: str
    """The frame function (``search_frame`` ...) whose arguments :attr:`calls` are."""
    calls: tuple[Mapping[str, Any], ...]
    """The frame function's arguments, one call per country (without dates for history)."""
    lookback_days: int = DEFAULT_LOOKBACK

    @property
    def history(self) -> bool:
        """Whether the endpoint keeps days (a run fetches what is missing, a backfill any range)."""
        return self.endpoint in HISTORY

    @property
    def label(self) -> str:
        """A short text: the endpoint and what it follows."""
        first = self.calls[0]
        what = first.get("keywords") or first.get("apps") or first.get("channels") or []
        countries = sorted({c for call in self.calls for c in _as_list(call.get("country") or call.get("countries"))})
        shown = ", ".join(map(str, what[:3])) + (f" +{len(what) - 3}" if len(what) > 3 else "")
        every = "" if self.every_days == 1 else f", every {self.every_days} days"
        return f"{self.endpoint}: {shown} ({', '.join(countries)}{every})"


@dataclass(frozen=True)
class TrackerSpec:
    """A tracker: its name, cache, budgets and items (:func:`load_spec` reads one from TOML)."""

    name: str
    items: tuple[Item, ...]
    cache_dir: str | None = None
    budget_per_run: int | None = None
    budget_per_month: int | None = None
    path: Path | None = None
    spec_hash: str = ""
    """The first 16 hex digits of the SHA-256 of the spec's text (the run log records it)."""
    defaults: Mapping[str, str] = field(default_factory=dict)
    alerts: tuple[Alert, ...] = ()
    """The ``[[alert]]`` rules, evaluated at the end of every run (see :mod:`storeframes.track.alerts`)."""
    notify: Notify = field(default_factory=Notify)
    """Where new events are told (``[notify]``): apprise addresses and the digest's path."""
    publish: Publish | None = None
    """Where the run publishes its tables (``[publish]``, see :mod:`storeframes.track.publishing`); None for nowhere."""
    workspace: Workspace | None = None
    """The workspace the tracker spends under (``[tracker] workspace``): its token, service, cache, month budget
    (the tighter of its and the spec's), and the default ``[notify]`` addresses and ``[publish]`` lake."""
    compact_at: int = COMPACT_AT
    """A run compacts the cache while its requests wait once earlier runs left more small files than this (0:
    never; see :mod:`storeframes.track.compacting`)."""

    def item(self, name: str) -> Item:
        """The item called ``name``."""
        for item in self.items:
            if item.name == name:
                return item
        raise InvalidParameterError("items", name, f"one of {', '.join(i.name for i in self.items)}")

    def chosen(self, names: Sequence[str] | str | None) -> tuple[Item, ...]:
        """The items called ``names`` (every item for None), in spec order."""
        if names is None:
            return self.items
        wanted = [names] if isinstance(names, str) else list(names)
        for each in wanted:
            self.item(each)
        return tuple(i for i in self.items if i.name in wanted)


def followed(calls: Iterable[Mapping[str, Any]], what: str) -> list[str]:
    """The keywords or apps (``what``) an item's ``calls`` follow, as the frames write them, each once."""
    found: list[str] = []
    for call in calls:
        value = call.get(what)
        if value is not None:
            found += [" ".join(v.split()) for v in texts(what, value, digits=what == "apps")]
    return list(dict.fromkeys(found))


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return [value] if isinstance(value, str | int) else list(value)


class _Lines:
    """Finds the line of a key in the spec's text, for messages."""

    def __init__(self, text: str, path: Path | None):
        self.lines = text.splitlines()
        self.where = str(path.name) if path is not None else "the spec"
        self.tables = self._starts(r"\[\[\s*track\s*\]\]")
        self.alerts = self._starts(r"\[\[\s*alert\s*\]\]")
        self.tracker = next(iter(self._starts(r"\[\s*tracker\s*\]")), None)
        self.notify = next(iter(self._starts(r"\[\s*notify\s*\]")), None)
        self.publish = next(iter(self._starts(r"\[\s*publish\s*\]")), None)

    def _starts(self, table: str) -> list[int]:
        return [n for n, line in enumerate(self.lines) if re.match(rf"^\s*{table}", line)]

    def of(self, table: int | str | None, key: str | None = None) -> str:
        if isinstance(table, str):  # "alert:<n>", "notify" or "publish"
            kind, _, nth = table.partition(":")
            single = self.notify if kind == "notify" else self.publish
            starts = self.alerts if kind == "alert" else [single] if single is not None else []
            number = int(nth or 0)
            start = starts[number] if number < len(starts) else None
        else:
            start = self.tracker if table is None else (self.tables[table] if table < len(self.tables) else None)
        if start is None:
            return self.where
        line = start
        if key is not None:
            for n in range(start + 1, len(self.lines)):
                if re.match(r"^\s*\[", self.lines[n]):
                    break
                if re.match(rf"""^\s*["']?{re.escape(key)}["']?\s*=""", self.lines[n]):
                    line = n
                    break
        return f"{self.where}, line {line + 1}"


def _fail(lines: _Lines, table: int | str | None, key: str | None, value: Any, allowed: str) -> SpecError:
    if isinstance(table, str):
        kind, _, nth = table.partition(":")
        what = f"[[alert]] {int(nth) + 1}" if kind == "alert" else f"[{kind}]"
    else:
        what = "[tracker]" if table is None else f"[[track]] {table + 1}"
    named = f"{what}.{_named(key)}" if key else what
    return SpecError(named, value, f"{allowed} ({lines.of(table, key)})", endpoint="track")


def _named(key: str) -> str:
    """A key of the spec as a message shows it: as written when short and printable, else quoted and cut."""
    return key if len(key) <= 64 and key.isprintable() else shown_value(key, 64)


def _days(lines: _Lines, table: int, key: str, value: Any) -> int:
    found = _DAYS.match(value) if isinstance(value, str) else None
    if found is None:
        raise _fail(lines, table, key, value, 'a number of days such as "1d", "7d" or "30d"')
    return int(found.group(1))


def _compact_at(lines: _Lines, value: Any) -> int:
    if value is None:
        return COMPACT_AT
    if value is False:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MOST_FILES:
        raise _fail(
            lines, None, "compact_at", value, f"a whole number of files, 0 (never) to {_MOST_FILES:,}, or false"
        )
    return value


def _budget(lines: _Lines, key: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MOST_CREDITS:
        raise _fail(lines, None, key, value, f"a whole number of credits, 0 to {_MOST_CREDITS:,}")
    return value


_NESTED = f"TOML whose tables and lists nest at most {MOST_NESTED} levels deep (tables in tables, lists in lists)"


def _deeper(data: Any, most: int) -> bool:
    """Whether ``data`` (what tomllib read) nests tables and lists more than ``most`` levels deep; found without
    recursion, so any depth is measured."""
    todo: list[tuple[Any, int]] = [(data, 0)]
    while todo:
        value, depth = todo.pop()
        if depth > most:
            return True
        if isinstance(value, dict):
            todo += [(v, depth + 1) for v in value.values()]
        elif isinstance(value, list):
            todo += [(v, depth + 1) for v in value]
    return False


def parse_spec(
    text: str,
    *,
    path: str | Path | None = None,
    workspace: str | Workspace | None = None,
    config: str | Path | None = None,
) -> TrackerSpec:
    """A :class:`TrackerSpec` from the text of a TOML spec (``path`` places a relative ``cache_dir``); ``workspace``
    names the workspace it spends under when the spec names none (``storeframes --workspace``), ``config`` the
    workspaces file (by default the ``storeframes.toml`` beside the spec, else the one found as usual)."""
    where = Path(path) if path is not None else None
    lines = _Lines(text, where)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError("spec", lines.where, f"TOML ({exc})", endpoint="track") from None
    except RecursionError:  # tomllib follows nested lists and inline tables by recursion
        raise SpecError("spec", lines.where, _NESTED, endpoint="track") from None
    if _deeper(data, MOST_NESTED):
        raise SpecError("spec", lines.where, _NESTED, endpoint="track")
    try:
        return _parsed(data, text, where, lines, workspace, config)
    except StoreframesError:
        raise
    except (RecursionError, ValueError, TypeError, OverflowError) as exc:  # a shape no check above foresaw
        cause = shown_value(str(exc), 120)
        raise SpecError(
            "spec", lines.where, f"a tracker spec ({type(exc).__name__}: {cause})", endpoint="track"
        ) from None


def _parsed(
    data: dict[str, Any],
    text: str,
    where: Path | None,
    lines: _Lines,
    workspace: str | Workspace | None = None,
    config: str | Path | None = None,
) -> TrackerSpec:
    """The spec ``data`` (what tomllib read of ``text``) checked, as a :class:`TrackerSpec`."""
    for key in data:
        if key not in ("tracker", "track", "alert", "notify", "publish"):
            allowed = "a [tracker] table, [[track]] and [[alert]] tables, a [notify] and a [publish] table"
            raise SpecError(_named(key), "…", f"{allowed} ({lines.where})", endpoint="track")
    tracker = data.get("tracker")
    if not isinstance(tracker, dict):
        raise SpecError("tracker", None, f"a [tracker] table with a name ({lines.where})", endpoint="track")
    for key in tracker:
        if key not in _TRACKER_KEYS:
            raise _fail(lines, None, key, tracker[key], f"one of the keys {', '.join(_TRACKER_KEYS)}")
    name = tracker.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise _fail(lines, None, "name", name, "a name of letters, digits, '_', '.' and '-' (at most 64, never '..')")
    chosen = _workspace_of(lines, tracker, where, workspace, config)
    cache_dir = tracker.get("cache_dir")
    if chosen is not None and cache_dir is not None:
        raise _fail(
            lines,
            None,
            "cache_dir",
            cache_dir,
            f"no cache_dir: the tracker of workspace {chosen.name} keeps its answers in the workspace's ({chosen.cache_dir})",
        )
    cache_dir = chosen.cache_dir if chosen is not None else cache_dir
    if cache_dir is not None and (
        not isinstance(cache_dir, str) or not cache_dir.strip() or not cache_dir.isprintable()
    ):
        raise _fail(lines, None, "cache_dir", cache_dir, "a folder or a bucket address such as s3://bucket/prefix")
    if isinstance(cache_dir, str) and "://" not in cache_dir and where is not None:
        cache_dir = str((where.parent / Path(cache_dir).expanduser()).resolve())
    defaults = {k: tracker[k] for k in ("country", "device", "language") if k in tracker}
    tables = data.get("track", [])
    if not isinstance(tables, list) or not tables:
        raise SpecError("track", None, f"one [[track]] table or more ({lines.where})", endpoint="track")
    seen: dict[str, int] = {}
    items = []
    for n, table in enumerate(tables):
        endpoint = table.get("endpoint") if isinstance(table, dict) else None
        seen[str(endpoint)] = seen.get(str(endpoint), 0) + 1  # search, search_2 ... unless named
        items.append(_item(lines, n, table, defaults, seen[str(endpoint)]))
    names = [i.name for i in items]
    for n, item in enumerate(items):
        if item.name in names[:n]:
            raise _fail(lines, n, "name", item.name, "a name no other item of the spec has")
    budget_per_month = _budget(lines, "budget_per_month", tracker.get("budget_per_month"))
    if chosen is not None and chosen.budget_per_month is not None:  # the workspace's holds for its trackers too
        budget_per_month = min(
            budget_per_month if budget_per_month is not None else _MOST_CREDITS, chosen.budget_per_month
        )

    def fail(table: str | None, key: str | None, value: Any, allowed: str) -> SpecError:
        return _fail(lines, table, key, value, allowed)

    keywords_of: dict[str, set[str]] = {}
    apps_of: dict[str, set[str]] = {}
    for item in items:
        keywords_of.setdefault(item.endpoint, set()).update(followed(item.calls, "keywords"))
        apps_of.setdefault(item.endpoint, set()).update(followed(item.calls, "apps"))
    alerts = parse_alerts(
        data.get("alert"), fail, keywords_of=keywords_of, apps_of=apps_of, budget_per_month=budget_per_month
    )
    folder = where.parent.resolve() if where is not None else None
    notify_table, publish_table = data.get("notify"), data.get("publish")
    if chosen is not None and chosen.notify and not (isinstance(notify_table, dict) and "urls" in notify_table):
        notify_table = {**(notify_table if isinstance(notify_table, dict) else {}), "urls": list(chosen.notify)}
    if chosen is not None and chosen.lake is not None and isinstance(publish_table, dict):
        publish_table = {"lake": chosen.lake, **publish_table}
    notify = parse_notify(notify_table, fail, folder=folder)
    publish = parse_publish(publish_table, fail, endpoints=[i.endpoint for i in items], folder=folder)
    return TrackerSpec(
        name=name,
        items=tuple(items),
        cache_dir=cache_dir,
        budget_per_run=_budget(lines, "budget_per_run", tracker.get("budget_per_run")),
        budget_per_month=budget_per_month,
        path=where,
        spec_hash=hashlib.sha256(text.encode()).hexdigest()[:16],
        defaults=defaults,
        alerts=alerts,
        notify=notify,
        publish=publish,
        compact_at=_compact_at(lines, tracker.get("compact_at")),
        workspace=chosen,
    )


def _workspace_of(
    lines: _Lines,
    tracker: Mapping[str, Any],
    where: Path | None,
    given: str | Workspace | None,
    config: str | Path | None = None,
) -> Workspace | None:
    """The workspace the spec names (``[tracker] workspace``), or ``given`` (``--workspace``): read from the
    ``storeframes.toml`` beside the spec, else the one found as :func:`~storeframes.workspaces.config_path` says."""
    named = tracker.get("workspace")
    if named is not None and (not isinstance(named, str) or not named.strip()):
        raise _fail(lines, None, "workspace", named, "the name of a workspace of storeframes.toml, such as 'acme'")
    given_name = given.name if isinstance(given, Workspace) else given
    if given_name is not None and named is not None and named.strip() != given_name:
        raise _fail(lines, None, "workspace", named, f"the workspace the command names ({given_name}), or none")
    if isinstance(given, Workspace):
        return given
    name = named.strip() if named is not None else given
    if name is None:
        return None
    beside = where.parent / CONFIG_NAME if where is not None else None
    if config is None and beside is not None and beside.is_file():
        config = beside
    try:
        return named_workspace(name, config)
    except WorkspaceFileError:
        raise
    except ConfigurationError as exc:
        raise _fail(lines, None, "workspace", name, str(exc)) from None


def _item(lines: _Lines, n: int, table: Any, defaults: Mapping[str, str], nth: int) -> Item:
    if not isinstance(table, dict):
        raise _fail(lines, n, None, table, "a table of keys")
    found = table.get("endpoint")
    if not isinstance(found, str) or found not in _KEYS:
        raise _fail(lines, n, "endpoint", found, f"one of {', '.join(_KEYS)}")
    endpoint: str = found
    allowed = (*_COMMON, *_KEYS[endpoint])
    for key in table:
        if key not in allowed:
            raise _fail(lines, n, key, table[key], f"one of the keys of a {endpoint} item: {', '.join(allowed)}")
    required = _REQUIRED.get(endpoint)
    if required and not _as_list(table.get(required)):
        raise _fail(lines, n, required, table.get(required), f"a {endpoint} item's {required}: one or more")
    name = table.get("name", endpoint if nth == 1 else f"{endpoint}_{nth}")
    if not isinstance(name, str) or not _NAME.match(name):
        raise _fail(lines, n, "name", name, "a name of letters, digits, '_', '.' and '-' (at most 64, never '..')")
    every = _days(lines, n, "every", table.get("every", "1d"))
    lookback = _days(lines, n, "lookback", table.get("lookback", f"{DEFAULT_LOOKBACK}d"))
    if "country" in table and "countries" in table:
        raise _fail(lines, n, "countries", table["countries"], "country or countries, not both")
    countries = _as_list(table.get("countries", table.get("country", defaults.get("country", "us"))))
    if not countries:
        raise _fail(lines, n, "countries", countries, "one country or more")
    base: dict[str, Any] = {}
    for key in ("keywords", "apps", "metrics", "language", "device", "channels", "type"):
        if key in table:
            base[key] = table[key]
        elif key in defaults and key in _KEYS[endpoint]:
            base[key] = defaults[key]
    if endpoint == "search_ads":
        base["ads"] = True
    frame = _FRAME[endpoint]
    if endpoint == "benchmarks":
        calls: list[dict[str, Any]] = [{**base, "countries": countries}]
    else:
        calls = [{**base, "country": country} for country in countries]
    item = Item(n, name, endpoint, every, frame, tuple(calls), lookback)
    _check(lines, n, item)
    return item


def _check(lines: _Lines, n: int, item: Item, today: date | None = None) -> None:
    """Every call of ``item`` checked as its frame function checks it, at ``today`` (UTC today)."""
    day = today or today_utc()
    try:
        endpoint, calls = resolve(item.frame, [dated(item, call, day) for call in item.calls], today=day)
        for call in calls:
            validate(ENDPOINTS[endpoint], call, today=day)
    except InvalidParameterError as exc:
        key = {"keyword": "keywords", "channel": "channels"}.get(exc.parameter, exc.parameter)
        if key == "country" and "countries" in _raw_keys(lines, n):
            key = "countries"
        raise SpecError(
            f"[[track]] {n + 1}.{key}", exc.value, f"{exc.allowed} ({lines.of(n, key)})", endpoint="track"
        ) from None
    except StoreframesError as exc:
        raise SpecError(f"[[track]] {n + 1}", None, f"{exc} ({lines.of(n)})", endpoint="track") from None


def _raw_keys(lines: _Lines, n: int) -> set[str]:
    start = lines.tables[n] if n < len(lines.tables) else len(lines.lines)
    keys = set()
    for line in lines.lines[start + 1 :]:
        if re.match(r"^\s*\[", line):
            break
        found = re.match(r"^\s*([A-Za-z_]+)\s*=", line)
        if found:
            keys.add(found.group(1))
    return keys


def dated(item: Item, call: Mapping[str, Any], today: date, start: date | None = None) -> dict[str, Any]:
    """A call of ``item`` with the dates of a run on ``today``: a history item's days from ``start``
    (by default its ``lookback`` before today) to yesterday; others as they are."""
    if not item.history:
        return dict(call)
    from datetime import timedelta

    first = start if start is not None else today - timedelta(days=item.lookback_days)
    return {**call, "start": first, "end": max(first, today - timedelta(days=1))}


def load_spec(
    path: str | Path, *, workspace: str | Workspace | None = None, config: str | Path | None = None
) -> TrackerSpec:
    """The :class:`TrackerSpec` in the TOML file ``path`` (``workspace`` and ``config``: see :func:`parse_spec`)."""
    where = Path(path)
    try:
        text = where.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError("spec", str(where), f"a readable TOML file ({exc.strerror or exc})", endpoint="track") from None
    except UnicodeDecodeError as exc:
        raise SpecError(
            "spec", str(where), f"a TOML file in UTF-8 (byte {exc.start} is not)", endpoint="track"
        ) from None
    return parse_spec(text, path=where, workspace=workspace, config=config)
