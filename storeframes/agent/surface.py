"""The tools an assistant is given, as plain methods: each takes JSON-shaped arguments and returns a
:class:`~storeframes.agent.tables.Shown` (a capped table as text, the same rows as JSON, where they came from).

Only :meth:`Surface.fetch_frame` may send a request, through the ordinary client (its cache, rate window,
ledger and budget) and past the :class:`~storeframes.agent.gate.Gate`. Every other tool reads what the
cache holds, or plans against its index: no request, no token needed. A tool's refusal of its arguments
names what is allowed, as the frame functions do, before anything is read or spent.
"""

from __future__ import annotations

import json
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

import polars as pl

from ..analysis import category_standing, changes_before, movers, with_names
from ..answers import short_params
from ..catalog import parse_day
from ..client import Client
from ..datasets import scan
from ..engine import Plan
from ..errors import InvalidParameterError, StoreframesError, plural
from ..fetch.pipeline import FRAMES
from ..lake.sql import sql_head
from ..ledger import spend_summary
from ..snapshots import SNAPSHOT_TABLES, snapshots
from ..track import Tracker, events
from ..track.judge import kept_changes, kept_ranks
from .describe import FUNCTIONS, describe
from .gate import Gate, Verdict
from .tables import MOST_ROWS, Shown, show

__all__ = ["NothingKeptError", "Surface"]


class NothingKeptError(StoreframesError):
    """A free tool found nothing in the cache to answer with; the message says what would fill it."""


def _refused(parameter: str, value: Any, allowed: str, tool: str) -> InvalidParameterError:
    return InvalidParameterError(parameter, value, allowed, endpoint=tool)


def _texts(value: Any, parameter: str, tool: str) -> list[str] | None:
    """A list of texts from a list or a comma-separated text; None stays None."""
    if value is None:
        return None
    if isinstance(value, str):
        items = [v.strip() for v in value.split(",") if v.strip()]
    elif isinstance(value, list | tuple) and all(isinstance(v, str | int) and not isinstance(v, bool) for v in value):
        items = [str(v).strip() for v in value if str(v).strip()]
    else:
        raise _refused(parameter, value, "a list of texts, or one comma-separated text", tool)
    return items or None


def _day(value: Any, parameter: str, tool: str) -> date | None:
    if value is None or value == "":
        return None
    try:
        return parse_day(parameter, value, endpoint=tool)
    except (InvalidParameterError, TypeError, ValueError):
        raise _refused(parameter, value, "a day as YYYY-MM-DD, such as 2026-11-20", tool) from None


class Surface:
    """The tools over one client: ``gate`` decides what ``fetch_frame`` may spend; ``tracker`` (optional)
    gives ``track_status`` and the month budget; ``offline`` serves only what the cache holds."""

    def __init__(self, client: Client, gate: Gate, *, tracker: Tracker | None = None, offline: bool = False):
        if client.cache is None:
            raise _refused("cache_dir", None, "a cache folder or bucket: the tools read what it holds", "mcp")
        self.client = client
        self.cache = client.cache
        self.service = client.namespace
        self.gate = gate
        self.tracker = tracker
        self.offline = offline
        self._lock = threading.Lock()  # one tool at a time: the warnings of a call are caught per call

    # -- helpers --------------------------------------------------------------------------------

    def today(self) -> date:
        return self.client.today()

    def settings(self) -> dict[str, Any]:
        left, limit = self.gate.left()
        said: dict[str, Any] = {
            "service": self.service,
            "today": self.today().isoformat(),
            "cache": str(self.cache.location),
            "offline": self.offline,
            "confirm_above": self.gate.confirm_above,
            "budget_left": "no limit" if left is None else f"{left:,} ({limit})",
        }
        if self.tracker is not None:
            said["tracker"] = self.tracker.spec.name
        return said

    def run(self, tool: str, call: Callable[[], Shown]) -> Shown:
        """``call`` under the lock, its warnings kept as notes; a refusal or an error as an error result, a
        failure of a native library (a ``BaseException`` such as a panic) too: only an interrupt or an exit
        goes through, so the server answers the next call."""
        with self._lock, warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                shown = call()
            except Exception as exc:  # a server answers every call: the assistant reads what went wrong
                shown = Shown(f"{tool} failed: {type(exc).__name__}: {exc}", {"error": type(exc).__name__}, error=True)
            except BaseException as exc:  # a native library's panic: this call fails, the server goes on
                if isinstance(exc, KeyboardInterrupt | SystemExit | GeneratorExit):
                    raise
                shown = _broke(tool, exc)
        said = list(dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught))
        if said:
            shown.text += (
                "\nwarnings: " + " | ".join(said[:5]) + (f" (and {len(said) - 5} more)" if len(said) > 5 else "")
            )
            shown.data["warnings"] = said
        return shown

    def _function(self, function: Any, tool: str) -> str:
        if not isinstance(function, str) or function not in FUNCTIONS:
            raise _refused("function", function, f"one of {', '.join(FUNCTIONS)}", tool)
        return function

    @staticmethod
    def _arguments(arguments: Any, tool: str) -> dict[str, Any]:
        if arguments is None:
            return {}
        if not isinstance(arguments, Mapping) or not all(isinstance(k, str) for k in arguments):
            raise _refused(
                "arguments", arguments, 'an object of the function\'s arguments, such as {"apps": ["284882215"]}', tool
            )
        if "refresh" in arguments:
            raise _refused(
                "arguments", "refresh", "the function's arguments but refresh (the server's cache policy holds)", tool
            )
        return dict(arguments)

    # -- plan and fetch -------------------------------------------------------------------------

    def plan(self, function: str, arguments: Mapping[str, Any] | None = None) -> Shown:
        """What ``function(**arguments)`` would send and cost, what the cache already holds; nothing sent."""
        name, args = self._function(function, "plan"), self._arguments(arguments, "plan")
        planned = self.client.plan(name, **args)
        return self._planned(name, args, planned, self.gate.judge(planned.estimate, confirm=False))

    def _planned(self, name: str, args: dict[str, Any], planned: Plan, verdict: Verdict) -> Shown:
        """A plan as a result: its requests, what they cost, what the cache holds, and the gate's verdict."""
        gate = "free: the cache answers it" if planned.cached else (
            "fetch_frame would go through" if verdict.passed else
            ("fetch_frame needs confirm=true: " if verdict.confirmable else "fetch_frame would be refused: ") + verdict.reason
        )  # fmt: skip
        requests = (
            planned.requests.select("source", "params", "cells", "credits")
            .with_columns(request=pl.Series([_request(p) for p in planned.requests["params"]], dtype=pl.String))
            .select("source", "request", "cells", "credits")
        )
        notes = [f"{planned.to_send:,} requests to send, at most {plural(planned.estimate, 'credit')}; "
                 f"{planned.cached_cells:,} of {planned.cells:,} cells cached (saving {planned.saved:,} credits)",
                 f"gate: {gate}"]  # fmt: skip
        shown = show(requests, title=f"plan of {name}", limit=20, notes=notes)
        shown.data.update(function=name, arguments=args, to_send=planned.to_send, estimate=planned.estimate,
                          cells=planned.cells, cached_cells=planned.cached_cells, saved=planned.saved,
                          gate={"passes": verdict.passed, "confirmable": verdict.confirmable, "reason": verdict.reason})  # fmt: skip
        return shown

    def fetch_frame(
        self,
        function: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        confirm: bool = False,
        columns: Sequence[str] | None = None,
        limit: int = 20,
    ) -> Shown:
        """The frame of ``function(**arguments)``: from the cache for free, or fetched past the gate."""
        name, args = self._function(function, "fetch_frame"), self._arguments(arguments, "fetch_frame")
        planned = self.client.plan(name, **args)
        if planned.estimate > 0:  # judged and sent under the month's lease: the month's spend read as it is
            with self.gate.lease():
                verdict = self.gate.judge(planned.estimate, confirm=bool(confirm))
                if verdict.passed:
                    return self._fetched(name, args, columns, limit, verdict.left)
            refused = self._planned(name, args, planned, verdict)
            refused.text = "not fetched, nothing sent\n\n" + refused.text
            refused.data.update(refused=True, reason=verdict.reason)
            refused.error = True
            return refused
        return self._fetched(name, args, columns, limit, self.gate.left()[0])

    def _fetched(
        self, name: str, args: dict[str, Any], columns: Sequence[str] | None, limit: int, left: int | None
    ) -> Shown:
        before = self.client.ledger.height
        with self.gate.holding(left):
            frame = getattr(self.client, name)(**args)
        new = self.client.ledger.slice(before)
        sent = new.filter(~pl.col("from_cache"))
        provenance: dict[str, Any] = {
            "requests sent": sent.height,
            "credits spent": int(new["cost"].sum() or 0),
            "answers from the cache": int(new["from_cache"].sum() or 0),
            "credits saved": int(new["saved"].sum() or 0),
        }
        if "fetched_at" in frame.columns and frame.height:
            provenance["fetched"] = _fetched_when(frame)
        provenance["session spent"] = self.gate.spent
        table = FRAMES[name].table.name if name in FRAMES else "metadata"
        hint = f"the frame is in the cache now: scan(table={table!r}, filters={{...}}, columns=[...]) reads a part of it for free"
        return show(frame, title=f"{name}", limit=limit, columns=columns, provenance=provenance, hint=hint)

    # -- reading the cache ----------------------------------------------------------------------

    def scan(
        self,
        table: str,
        filters: Mapping[str, Any] | None = None,
        columns: Sequence[str] | None = None,
        limit: int = 20,
        *,
        snapshots_: bool = False,
        start: str | None = None,
        end: str | None = None,
        sort: Sequence[str] | None = None,
    ) -> Shown:
        """A cached table (the newest answer of each cell), or every day kept of a current-only one."""
        first, last = _day(start, "start", "scan"), _day(end, "end", "scan")
        if snapshots_:
            if table not in SNAPSHOT_TABLES and table != "search_ads":
                raise _refused("table", table, f"with snapshots=true one of {', '.join(SNAPSHOT_TABLES)}", "scan")
            frame = snapshots(table, self.cache, start=first, end=last, service=self.service)
        else:
            frame = scan(table, self.cache, service=self.service)
            day = "date" if "date" in frame.collect_schema() else None
            if day and first is not None:
                frame = frame.filter(pl.col(day) >= first)
            if day and last is not None:
                frame = frame.filter(pl.col(day) <= last)
        frame = _filtered(frame, filters)
        if sort:
            wanted = _texts(sort, "sort", "scan") or []
            names = frame.collect_schema().names()
            unknown = [c for c in wanted if c.lstrip("-") not in names]
            if unknown:
                raise _refused(
                    "sort",
                    list(sort),
                    f"columns of {table} (a leading '-' sorts descending): {', '.join(names)}",
                    "scan",
                )
            frame = frame.sort(
                [c.lstrip("-") for c in wanted], descending=[c.startswith("-") for c in wanted], nulls_last=True
            )
        collected = frame.collect()
        kind = "snapshots of " if snapshots_ else ""
        provenance: dict[str, Any] = {"requests sent": 0, "from": "the cache"}
        if "fetched_at" in collected.columns and collected.height:
            provenance["fetched"] = _fetched_when(collected)
        hint = 'add filters (such as {"app_id": "..."} or {"date": {"min": "2026-11-01"}}) or columns'
        return show(collected, title=f"{kind}{table} in the cache", limit=limit, columns=columns,
                    provenance=provenance, hint=hint)  # fmt: skip

    def sql(self, query: str, limit: int = 20) -> Shown:
        """A read-only SQL query over the cache's views: its first ``limit`` rows (made alone: the limit is in the
        query DuckDB runs) and the count of all, or ``count unknown`` when not counted in time."""
        if not isinstance(query, str) or not query.strip():
            raise _refused("query", query, "one SELECT over the cache's views (describe lists them)", "sql")
        import os

        from ..client import ENV_API_KEY
        from .tables import holds_secret

        # DuckDB makes only the rows shown (the limit is in the query it runs), and counts the rest
        head = sql_head(query, self.cache, rows=max(0, min(int(limit), MOST_ROWS)), service=self.service)
        shown = show(
            head.frame,
            title="sql",
            limit=limit,
            provenance={"requests sent": 0, "from": "the cache"},
            hint="add a LIMIT, a WHERE or an aggregate to the query",
            total="unknown" if head.total is None else head.total,
        )
        # a second line (a query reads no file, nor the environment): the token, even transformed, is not shown
        if holds_secret(shown.text + json.dumps(shown.data, default=str), [os.environ.get(ENV_API_KEY, "").strip()]):
            raise _refused(
                "query",
                query,
                "a query whose answer holds no part of the API token, forwards or reversed, in any case",
                "sql",
            )
        return shown

    # -- the everyday questions -----------------------------------------------------------------

    def _range(self, start: Any, end: Any, tool: str) -> tuple[date, date]:
        last = _day(end, "end", tool) or self.today()
        first = _day(start, "start", tool) or last - timedelta(days=29)
        if last < first:
            raise _refused("end", last.isoformat(), f"a day on or after start={first}", tool)
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
        sources = {k: "live search snapshots" if k in read_live else "search history"
                   for k in frame["keyword"].str.to_lowercase().unique().to_list()}  # fmt: skip
        return frame, sources

    def _names(self) -> pl.DataFrame:
        return (
            scan("metadata", self.cache, service=self.service)
            .select("app_id", "title", "country", "language", "device")
            .collect()
        )

    def movers(self, keywords: Any = None, apps: Any = None, start: Any = None, end: Any = None,
               top: int | None = 10, within: int | None = None, **scope: Any) -> Shown:  # fmt: skip
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
            "days_ranked",
        ]
        return show(named, title="movers", limit=MOST_ROWS if top else 20, columns=[c for c in columns if c in named.columns],
                    provenance=provenance, notes=notes, hint="name keywords or apps, or set top")  # fmt: skip

    def _moved(self, tool: str, keywords: Any, apps: Any, start: Any, end: Any, top: Any, within: Any,
               scope: Mapping[str, Any]) -> tuple[pl.DataFrame, list[str], dict[str, Any], tuple[date, date]]:  # fmt: skip
        first, last = self._range(start, end, tool)
        chosen = _texts(keywords, "keywords", tool)
        ranks, sources = self.ranks(chosen, first, last, scope)
        if ranks.is_empty():
            raise NothingKeptError(
                f"no search results are kept for {', '.join(chosen) if chosen else 'any keyword'} from {first} to {last}: "
                "a tracker with a search or search_history item keeps them, or fetch_frame('search_history_frame', ...)"
            )
        moved = movers(ranks, _texts(apps, "apps", tool), start=first, end=last, top=top, within=within)
        notes = [
            f"ranks from {first} to {last}: "
            + "; ".join(
                f"{k}: {s}" for k, s in sorted(sources.items()) if not chosen or k in {c.lower() for c in chosen}
            )
        ]
        return moved, notes, {"requests sent": 0, "from": "the cache"}, (first, last)

    def changes_before(self, keywords: Any = None, apps: Any = None, start: Any = None, end: Any = None,
                       top: int | None = 10, within: int | None = None, days: int | None = 30,
                       targets: Any = None, **scope: Any) -> Shown:  # fmt: skip
        """The movers, each with what its app changed in the ``days`` before the end of its move."""
        moved, notes, provenance, (first, last) = self._moved(
            "changes_before", keywords, apps, start, end, top, within, scope
        )
        ids = moved["app_id"].unique().to_list()
        history, seen = kept_changes(self.cache, self.service, ids, first - timedelta(days=days or 0), last)
        changes = pl.concat([history, seen.join(history, on=["app_id", "date", "target"], how="anti")])
        wanted = _texts(targets, "targets", "changes_before")
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
        notes.append("changes: the service's change history and those seen between daily metadata snapshots; size left out"
                     if not wanted else f"changes of {', '.join(wanted)}")  # fmt: skip
        return show(before, title=f"movers and their changes in the {days} days before", limit=MOST_ROWS,
                    columns=columns, provenance=provenance, notes=notes)  # fmt: skip

    def category_standing(self, category: str, countries: Any = None, channels: Any = None,
                          device: str | None = None, rate: str = "page_views_to_installs") -> Shown:  # fmt: skip
        """Where a category stands in the cached conversion benchmarks, per country and channel."""
        frame = scan("benchmarks", self.cache, service=self.service)
        for column, value in (("country", countries), ("channel", channels), ("device", device)):
            chosen = _texts(value, column, "category_standing")
            if chosen:
                frame = frame.filter(pl.col(column).is_in([c.lower() for c in chosen]))
        benchmarks = frame.collect()
        if benchmarks.is_empty():
            raise NothingKeptError(
                "no conversion benchmarks are cached for this choice: plan('benchmarks_frame', {...}) shows their price "
                "(1,001 credits a request at the catalog's estimate), fetch_frame fetches them"
            )
        standing = category_standing(benchmarks, category, rate=rate)
        return show(standing, title=f"where {category} stands ({rate})", limit=MOST_ROWS,
                    provenance={"requests sent": 0, "from": "the cache"})  # fmt: skip

    # -- the tracker ----------------------------------------------------------------------------

    def events(self, since: Any = None, until: Any = None, rule: Any = None, limit: int = 20) -> Shown:
        """The events the tracker's alerts found, newest day first."""
        first = _day(since, "since", "events") or self.today() - timedelta(days=7)
        tracker = self.tracker.spec.name if self.tracker is not None else None
        found = events(self.cache, tracker=tracker, since=first, until=_day(until, "until", "events"))
        rules = _texts(rule, "rule", "events")
        if rules:
            found = found.filter(pl.col("rule").is_in(rules))
        found = found.sort("day", descending=True, maintain_order=True)
        columns = ["day", "since", "rule", "app_id", "keyword", "target", "before", "after", "detail"]
        return show(found, title=f"events since {first}", limit=limit, columns=columns,
                    provenance={"requests sent": 0, "from": "the cache"}, hint="name a rule or a later since")  # fmt: skip

    def track_status(self) -> Shown:
        """The tracker's items (last snapshot, due, days missing), its last runs and the month's spend; ``missing``
        names the days not fetched, by item."""
        if self.tracker is None:
            raise _refused(
                "tracker", None, "a server started with --tracker SPEC (the tracker's TOML spec)", "track_status"
            )
        status = self.tracker.status(self.today())
        lines = status.summary().splitlines()  # the first line, and the days missing said, not left to the rows
        notes = [lines[0], *(line.strip() for line in lines[1:] if "missing" in line)]
        shown = show(status.items, title=f"tracker {status.tracker} on {status.day}", limit=MOST_ROWS, notes=notes)
        runs = status.runs.select("day", "kind", "status", "requests", "credits_spent", "cells_new").tail(5)
        shown.text += "\n\n" + show(runs, title="last runs", limit=5).text
        missing = {item: [d.isoformat() for d in days] for item, days in status.missing.items()}
        shown.data.update(missing=missing, month_spent=status.month_spent, budget_per_month=status.budget_per_month,
                          runs=status.runs.height, last_runs=show(runs, title="", limit=5).data["rows"])  # fmt: skip
        return shown

    def spend(self, since: Any = None, by: str = "endpoint") -> Shown:
        """Credits spent and saved per endpoint (``by="day"``: per day and endpoint), from the cache's ledger."""
        if by not in ("endpoint", "day"):
            raise _refused("by", by, "endpoint or day", "spend")
        first = _day(since, "since", "spend") or self.today().replace(day=1)
        ledger = self.cache.read_ledger().filter(pl.col("service") == self.service)
        ledger = ledger.filter(pl.col("time") >= datetime.combine(first, time(), UTC))
        summary = spend_summary(ledger)
        month = self.gate.month()
        provenance: dict[str, Any] = {
            "credits spent": int(ledger["cost"].sum() or 0),
            "requests": int((~ledger["from_cache"]).sum()),
            "credits saved": int(ledger["saved"].sum() or 0),
            "this session": f"{self.gate.spent:,} credits",
        }
        left, limit = self.gate.left(month)
        provenance["left"] = "no limit" if left is None else f"{left:,} ({limit})"
        if month is not None:
            provenance["month"] = f"{month[0]:,} of {month[1]:,} credits"
        columns = ["day", "endpoint", "requests", "credits_spent", "cache_hits", "credits_saved"]
        if by != "day":
            sums = [pl.col(c).sum() for c in columns[2:]]
            summary, columns = summary.group_by("endpoint").agg(sums).sort("endpoint"), columns[1:]
        shown = show(
            summary,
            title=f"spend since {first} ({self.service}), per {by}",
            limit=MOST_ROWS,
            columns=columns,
            provenance=provenance,
        )
        shown.data.update(
            credits_spent=provenance["credits spent"], session_spent=self.gate.spent, since=first.isoformat()
        )
        return shown

    def describe(self, name: str | None = None) -> Shown:
        return describe(name, self.settings())


def _broke(tool: str, exc: BaseException) -> Shown:
    """The error result of a call a native library broke off (its first line said, no traceback)."""
    said = (str(exc).strip().splitlines() or ["no message"])[0]
    said = said if len(said) <= 200 else said[:199] + "…"
    text = (
        f"{tool} failed inside a native library ({type(exc).__name__}: {said}); the call was stopped and the "
        "server goes on: ask a smaller question (a filter, fewer columns, a LIMIT), or another tool"
    )
    return Shown(text, {"error": type(exc).__name__}, error=True)


def _request(params: str) -> str:
    """A request's parameters in a few words, what it asks for first: ``keyword=maps, country=us, ...``."""
    said = json.loads(params)
    return short_params({k: said[k] for k in sorted(said, key=lambda k: k not in ("apps", "keyword"))}, 78)


def _fetched_when(frame: pl.DataFrame) -> str:
    """When the rows' answers were fetched from the service: a moment, or the first and the last."""
    moments = frame["fetched_at"].dt.strftime("%Y-%m-%d %H:%M")
    first, last = str(moments.min()), str(moments.max())
    return f"{first} UTC" if first == last else f"{first} to {last} UTC"


def _filtered(frame: pl.LazyFrame, filters: Mapping[str, Any] | None) -> pl.LazyFrame:
    """``frame`` with ``filters``: a column's value, a list of values, or ``{"min": .., "max": ..}``."""
    if not filters:
        return frame
    if not isinstance(filters, Mapping):
        raise _refused("filters", filters, 'an object of column: value, [values] or {"min": .., "max": ..}', "scan")
    schema = frame.collect_schema()
    for column, wanted in filters.items():
        if column not in schema:
            raise _refused("filters", column, f"columns of the table: {', '.join(schema.names())}", "scan")
        dtype = schema[column]
        if isinstance(wanted, Mapping):
            unknown = set(wanted) - {"min", "max"}
            if unknown:
                raise _refused(
                    "filters", {column: wanted}, 'a value, a list of values, or {"min": .., "max": ..}', "scan"
                )
            if wanted.get("min") is not None:
                frame = frame.filter(pl.col(column) >= _value(wanted["min"], column, dtype))
            if wanted.get("max") is not None:
                frame = frame.filter(pl.col(column) <= _value(wanted["max"], column, dtype))
        elif isinstance(wanted, list):
            frame = frame.filter(pl.col(column).is_in([_value(v, column, dtype) for v in wanted]))
        elif wanted is None:
            frame = frame.filter(pl.col(column).is_null())
        else:
            frame = frame.filter(pl.col(column) == _value(wanted, column, dtype))
    return frame


def _value(v: Any, column: str, dtype: Any) -> Any:
    """A filter's value as the column's type: ISO texts for days and times, numbers for numbers."""
    if v is None:
        return None
    try:
        if dtype == pl.Date and isinstance(v, str):
            return date.fromisoformat(v)
        if isinstance(dtype, pl.Datetime) and isinstance(v, str):
            moment = datetime.fromisoformat(v.replace("Z", "+00:00"))
            return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
        return pl.Series([v]).cast(dtype, strict=True)[0]
    except (ValueError, TypeError, pl.exceptions.PolarsError):
        raise _refused("filters", {column: v}, f"a value of {column}'s type ({dtype})", "scan") from None
