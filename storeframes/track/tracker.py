"""The :class:`Tracker`: a spec's items fetched day after day through the ordinary client.

A run on a day asks only what is due (see :mod:`storeframes.track.due`), priced before it
sends and held to the spec's budgets, under a lease on the tracker (two runs of one spec started
together, on two machines sharing a bucket, do the work once) and, with a month budget, a
lease on the month's spending (runs of the token's trackers spend it one after another). Each run
leaves a row in the cache's run log, written when it starts and when it ends; a row still
``running`` when the next run takes the lease is marked ``interrupted``, and that run fetches
what the first did not keep.

>>> tracker = sf.Tracker.from_toml("tracking.toml")  # doctest: +SKIP
>>> tracker.plan()                                    # doctest: +SKIP
>>> tracker.run().status                              # doctest: +SKIP
'ok'
"""

from __future__ import annotations

import os
import secrets
import socket
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl

from ..answers import Entry
from ..cache import RUN_SCHEMA, Cache, open_cache
from ..client import Client, plan_requests
from ..coord import holding
from ..errors import ConfigurationError, InvalidParameterError, StoreframesError, plural, shown_when_half_built
from ..fetch.pipeline import collector_paused
from .alerts import AlertResult, judge, month_spent_of, write_digest
from .day_digest import fetched_days, keep_after_run
from .due import DueCall, days_text, due_calls, fetched_by_endpoint, trimmed
from .plan import PLAN_SCHEMA, TrackPlan
from .publishing import publish_tables
from .runs import end_interrupted, stops_the_run
from .spec import Item, TrackerSpec, load_spec
from .status import STATUS_DAYS, TrackStatus, item_rows, unfetched

__all__ = ["EXIT_CODES", "RunResult", "TrackPlan", "TrackStatus", "Tracker", "month_budget_lease"]

EXIT_CODES = {"ok": 0, "partial": 3, "failed": 3, "interrupted": 3, "over_budget": 4}
"""The exit code of ``storeframes track run`` and ``track backfill`` (and :attr:`RunResult.exit_code`) for
each status: 0 ``ok``, 3 ``partial`` (an item failed, a day was left unfetched, a table not published) or
``failed``, 4 ``over_budget`` (2 is a spec or command line refused). A run that leaves a day unfetched is
never ``ok``: :attr:`RunResult.missing` names the days."""

RUN_WAIT = 6 * 3600.0
"""Seconds a run waits for another run of its tracker (or of the month's spending) to end: a run
whose holder lives keeps its lease alive, one whose holder died lapses within the lease's TTL."""


def _day(today: date | str | None) -> date | None:
    if today is None or isinstance(today, date):
        return today
    try:
        return date.fromisoformat(today)
    except (TypeError, ValueError):
        raise InvalidParameterError("today", today, "a date as YYYY-MM-DD", endpoint="track") from None


def _entries(client: Client) -> Callable[[str], list[Entry]]:
    """The cache's entries of an endpoint (none without a cache)."""
    cache = client.cache
    return cache.entries if cache is not None else (lambda _: [])


def month_budget_lease(client: Client, day: date) -> AbstractContextManager[Any]:
    """The lease on the month's spending of ``client``'s service: the runs of trackers with a month budget (and
    an assistant's paid calls) spend one after another, on every machine of the cache."""
    leases = client.coordinator.leases(client.cache, client)
    return holding(leases, f"track-budget:{client.namespace}:{day:%Y-%m}|budget", timeout=RUN_WAIT)


@dataclass
class RunResult:
    """What a run did (the row it left in the run log, as an object)."""

    run_id: str
    tracker: str
    day: date
    kind: str
    status: str
    requests: int = 0
    cells_new: int = 0
    cells_cached: int = 0
    credits_spent: int = 0
    credits_saved: int = 0
    items_due: int = 0
    left_out: tuple[str, ...] = ()
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    month_spent: int | None = None
    budget_per_month: int | None = None
    interrupted: tuple[str, ...] = ()
    """The runs found killed half-way (marked ``interrupted``) and finished by this one."""
    events: int = 0
    """New events its alerts found (:func:`storeframes.events` lists them)."""
    notified: int = 0
    """Events it sent to the ``[notify]`` addresses (one message an address)."""
    published: dict[str, int] = field(default_factory=dict)
    """The version of each Delta table of the ``[publish]`` lake after the run (``metadata``,
    ``metadata_snapshots`` ...); a table that failed to publish is missing, and named in :attr:`errors`."""
    missing: dict[str, list[date]] = field(default_factory=dict)
    """The days the run left unfetched, by item (over the budget, failed): a run that leaves one is not ``ok``."""
    session: str = ""
    """Its client's ledger session (:mod:`storeframes.track.runs`)."""

    @property
    def exit_code(self) -> int:
        """The command's exit code for :attr:`status` (:data:`EXIT_CODES`)."""
        return EXIT_CODES.get(self.status, 3)

    def summary(self) -> str:
        """A few lines for people."""
        month = (
            f" (month: {self.month_spent:,} of {self.budget_per_month:,})"
            if self.month_spent is not None and self.budget_per_month is not None
            else ""
        )
        lines = [
            f"{self.tracker} {self.kind} on {self.day}: {self.status} in {self.seconds:.1f} s; "
            f"{plural(self.requests, 'request')}, {plural(self.credits_spent, 'credit')} spent{month}, "
            f"{self.credits_saved:,} saved; {self.cells_new:,} cells new, {self.cells_cached:,} cached"
        ]
        if self.events or self.notified:
            lines.append(f"  alerts: {plural(self.events, 'new event')}, {plural(self.notified, 'event')} sent")
        if self.published:
            lines.append("  published: " + ", ".join(f"{t} v{v}" for t, v in self.published.items()))
        if self.interrupted:
            lines.append(f"  finished what the interrupted run(s) {', '.join(self.interrupted)} left")
        if self.left_out:
            lines.append(f"  left out for the budget: {', '.join(self.left_out)}")
        lines += [f"  not fetched: {line}" for line in self.missing_lines()]
        lines += [f"  error: {e}" for e in self.errors]
        return "\n".join(lines)

    def missing_lines(self) -> list[str]:
        """A line per item with days left unfetched: ``ranks: 3 days (2026-10-09..2026-10-11)``."""
        return [f"{item}: {plural(len(d), 'day')} ({days_text(d)})" for item, d in self.missing.items()]

    def row(self, started_at: datetime, ended_at: datetime | None, spec_hash: str) -> dict[str, Any]:
        """The run log's row (:data:`~storeframes.cache.RUN_SCHEMA`)."""
        return {
            "run_id": self.run_id,
            "tracker": self.tracker,
            "spec_hash": spec_hash,
            "kind": self.kind,
            "day": self.day,
            "started_at": started_at,
            "ended_at": ended_at,
            "status": self.status,
            "requests": self.requests,
            "cells_new": self.cells_new,
            "cells_cached": self.cells_cached,
            "credits_spent": self.credits_spent,
            "credits_saved": self.credits_saved,
            "items_due": self.items_due,
            "items_left_out": ",".join(self.left_out),
            "errors": "\n".join([*self.errors, *(f"not fetched: {line}" for line in self.missing_lines())]),
            "host": socket.gethostname(),
            "session": self.session or None,
        }


class Tracker:
    """A tracker of a :class:`~storeframes.track.spec.TrackerSpec`: its plans, runs, backfills and run log.

    ``client_options`` go to each run's :class:`~storeframes.Client` (``api_key``, ``base_url``,
    ``coordinator``, ``storage_options`` ...; the token comes from ``$STOREFRAMES_API_KEY`` by
    default); the cache is the spec's ``cache_dir``. ``sandbox=True`` runs against the
    built-in sandbox, its today the run's day (for replays, demos and tests).
    """

    def __init__(self, spec: TrackerSpec, *, sandbox: bool = False, **client_options: Any):
        if "cache_dir" in client_options or "clock" in client_options:
            raise ConfigurationError("a tracker's cache is its spec's cache_dir, and its clock the day it runs as")
        self.spec = spec
        self.sandbox = sandbox
        self._options = client_options
        self._cache: Cache | None = None
        self._world: Any = None  # the sandbox's world, with sandbox=True

    @classmethod
    def from_toml(cls, path: str | os.PathLike[str], *, sandbox: bool = False, **client_options: Any) -> Tracker:
        """The tracker of the spec in the TOML file ``path`` (checked whole before anything is sent)."""
        return cls(load_spec(Path(path)), sandbox=sandbox, **client_options)

    @property
    def items(self) -> tuple[Item, ...]:
        """The spec's items, in order."""
        return self.spec.items

    @shown_when_half_built
    def __repr__(self) -> str:
        where = "sandbox" if self.sandbox else "service"
        return f"Tracker({self.spec.name!r}, {plural(len(self.spec.items), 'item')}, {where})"

    # -- the client of a day ------------------------------------------------------------------

    def _open_cache(self, storage_options: Any) -> Cache:
        """The spec's cache, one for every client of the tracker: its index is read once, then synced."""
        if self._cache is None:
            cache = open_cache(self.spec.cache_dir, storage_options)
            assert cache is not None  # a spec's cache_dir is never False
            self._cache = cache
        return self._cache

    def client(self, today: date | str | None = None) -> Client:
        """A client of the spec's cache whose clock is ``today`` (the real clock for None)."""
        day = _day(today)
        options = dict(self._options)
        storage_options = options.pop("storage_options", None)
        self._open_cache(storage_options)
        if self.sandbox:
            from ..sandbox import World
            from ..sandbox import client as sandbox_client

            if "world" not in options:  # one world for the tracker's days: built once (a quarter of a second)
                if self._world is None:
                    self._world = World(options.get("seed", 0))
                options["world"] = self._world
            return sandbox_client(today=day, cache_dir=self._cache, **options)
        clock = None
        if day is not None:
            pinned = day

            def clock() -> datetime:
                return datetime.combine(pinned, datetime.now(UTC).time(), UTC)

        return Client(cache_dir=self._cache, clock=clock, **options)

    # -- planning -------------------------------------------------------------------------------

    def plan(self, today: date | str | None = None, *, items: Sequence[str] | str | None = None) -> TrackPlan:
        """What a run on ``today`` would send and what it would cost, item by item; free."""
        chosen = self.spec.chosen(items)
        with self.client(today) as client, collector_paused():  # thousands of calls planned: no cycle among them
            return self._plan(client, client.today(), chosen)

    def _plan(
        self, client: Client, day: date, chosen: Sequence[Item], *, backfill: tuple[date, date] | None = None
    ) -> TrackPlan:
        fetched = {} if backfill else fetched_by_endpoint(_entries(client), chosen, client.namespace)
        month_spent = self._month_spent(client, day)
        run_left = self.spec.budget_per_run
        month_left = None if self.spec.budget_per_month is None else max(0, self.spec.budget_per_month - month_spent)
        rows, calls, cut = [], [], {}
        for item in chosen:
            due = due_calls(item, day, fetched, backfill=backfill)
            row = {"item": item.name, "endpoint": item.endpoint, "every_days": item.every_days, "due": due is not None,
                   "entities": 0, "requests": 0, "cells": 0, "cached_cells": 0, "credits": 0, "fits": True}  # fmt: skip
            if due is not None:
                plan = plan_requests(client, due.endpoint, due.calls, refresh=due.refresh)  # type: ignore[arg-type]
                row |= {"entities": due.entities, "requests": plan.to_send, "cells": plan.cells,
                        "cached_cells": plan.cached_cells, "credits": plan.estimate}  # fmt: skip
                fits = all(left is None or plan.estimate <= left for left in (run_left, month_left))
                part = None if fits or not item.history else self._part_that_fits(client, due, run_left, month_left)
                if part is not None:  # a long catch-up of history: its oldest days that fit, the rest next time
                    due, plan, cut[item.name] = part
                    row |= {"entities": due.entities, "requests": plan.to_send, "cells": plan.cells}
                    row |= {"cached_cells": plan.cached_cells, "credits": plan.estimate}
                row["fits"] = fits = fits or part is not None
                if fits:
                    calls.append(due)
                    run_left = None if run_left is None else run_left - plan.estimate
                    month_left = None if month_left is None else month_left - plan.estimate
            rows.append(row)
        frame = pl.DataFrame(rows, schema=PLAN_SCHEMA, orient="row") if rows else pl.DataFrame(schema=PLAN_SCHEMA)
        budgets = (self.spec.budget_per_run, self.spec.budget_per_month)
        return TrackPlan(self.spec.name, day, frame, month_spent, *budgets, tuple(calls), cut)

    @staticmethod
    def _part_that_fits(client: Client, due: DueCall, *lefts: int | None) -> tuple[DueCall, Any, date] | None:
        """The most days of a history item's due calls, from its oldest, whose estimate fits what is left of the
        budgets: the calls, their plan and the last day; None when not even its first day fits."""
        left = min(x for x in lefts if x is not None)
        first = min(date.fromisoformat(c["start_date"]) for c in due.calls)
        low, high, found = 0, (max(date.fromisoformat(c["end_date"]) for c in due.calls) - first).days - 1, None
        while low <= high:  # the estimate grows with the days asked: the last day that fits, found by halving
            middle = (low + high) // 2
            last = first + timedelta(days=middle)
            part = trimmed(due, last)
            if part is not None:
                plan = plan_requests(client, part.endpoint, part.calls, refresh=part.refresh)  # type: ignore[arg-type]
                if plan.estimate <= left:
                    found, low = (part, plan, last), middle + 1
                    continue
            high = middle - 1
        return found

    @staticmethod
    def _month_spent(client: Client, day: date) -> int:
        """Credits the token spent in ``day``'s calendar month (UTC), by the cache's ledger: every machine's."""
        return month_spent_of(client.cache.read_ledger() if client.cache is not None else client.ledger,
                              client.namespace, day)  # fmt: skip

    # -- running --------------------------------------------------------------------------------

    def run(
        self, today: date | str | None = None, *, dry_run: bool = False, items: Sequence[str] | str | None = None
    ) -> RunResult:
        """Fetch what is due on ``today`` (UTC today by default), within the budgets; the run's result.

        ``dry_run`` plans only: nothing is sent and nothing written to the run log.
        """
        return self._run(_day(today), kind="dry_run" if dry_run else "run", items=items)

    def backfill(
        self,
        start: date | str,
        end: date | str | None = None,
        *,
        items: Sequence[str] | str | None = None,
        today: date | str | None = None,
    ) -> RunResult:
        """Fetch the days from ``start`` to ``end`` (yesterday by default) of the history items, as of
        ``today`` (UTC today by default: its row's day, and the clock its answers are fetched at).

        A day of the range it leaves unfetched is named (:attr:`RunResult.missing`) and the run is not
        ``ok``. It moves nothing of the daily runs: they ask every day since their first run's
        ``lookback`` that no answer holds final, whatever a backfill fetched.

        Only ``search_history`` and ``changes`` keep days: the others' answers are the present
        only, so a past day of theirs cannot be fetched (a backfill naming one is refused).
        """
        first, last = _day(start), _day(end)
        assert first is not None
        chosen = self.spec.chosen(items)
        current = [i.name for i in chosen if not i.history]
        if items is not None and current:
            raise InvalidParameterError(
                "items", current, "history items only (search_history, changes): the service keeps no past days "
                "of the present's answers (metadata, metrics, search), so they cannot be backfilled", endpoint="track",
            )  # fmt: skip
        history = [i.name for i in chosen if i.history]
        if not history:
            raise InvalidParameterError(
                "items", [i.name for i in chosen], "a spec with search_history or changes items: the others' answers "
                "are the present only, so they cannot be backfilled", endpoint="track",
            )  # fmt: skip
        return self._run(_day(today), kind="backfill", items=history, backfill=(first, last))

    def _run(
        self,
        day: date | None,
        *,
        kind: str,
        items: Sequence[str] | str | None,
        backfill: tuple[date, date | None] | None = None,
    ) -> RunResult:
        chosen = self.spec.chosen(items)
        began = time.monotonic()
        with self.client(day) as client:
            day = client.today()
            span = None
            if backfill is not None:
                last = backfill[1] or day - timedelta(days=1)
                if backfill[0] > last or last >= day:
                    raise InvalidParameterError(
                        "start",
                        f"{backfill[0]}..{last}",
                        f"days before today ({day}), start before end",
                        endpoint="track",
                    )
                span = (backfill[0], last)
            run_id = f"{day:%Y%m%d}-{datetime.now(UTC):%H%M%S}-{secrets.token_hex(3)}"
            if kind == "dry_run":
                plan = self._plan(client, day, chosen, backfill=span)
                status = "over_budget" if plan.left_out else "ok"
                return RunResult(run_id, self.spec.name, day, kind, status, items_due=len(plan.calls),
                                 left_out=plan.left_out, month_spent=plan.month_spent,
                                 budget_per_month=self.spec.budget_per_month)  # fmt: skip
            leases = client.coordinator.leases(client.cache, client)
            with holding(leases, f"track:{self.spec.name}|tracker", timeout=RUN_WAIT):
                if self.spec.budget_per_month is None:
                    return self._locked(client, run_id, day, kind, chosen, span, began)
                with month_budget_lease(client, day):
                    return self._locked(client, run_id, day, kind, chosen, span, began)

    def _locked(
        self,
        client: Client,
        run_id: str,
        day: date,
        kind: str,
        chosen: Sequence[Item],
        span: tuple[date, date] | None,
        began: float,
    ) -> RunResult:
        """A run, its leases held: the interrupted runs marked, the plan, the requests, the run log."""
        cache = client.cache
        started = datetime.now(UTC)
        result = RunResult(run_id, self.spec.name, day, kind, "running", budget_per_month=self.spec.budget_per_month)
        result.session = client.credits.session
        if cache is not None:
            result.interrupted = end_interrupted(cache, self.spec.name, run_id)
            cache.write_run(result.row(started, None, self.spec.spec_hash))
        plan = self._plan(client, day, chosen, backfill=span)
        result.items_due = int(plan.items["due"].sum())
        result.left_out = plan.left_out
        month_left = None if plan.budget_per_month is None else plan.budget_per_month - plan.month_spent
        run_left = plan.budget_per_run
        limits = [x for x in (run_left, month_left) if x is not None]
        client.budget = max(0, min(limits)) if limits else None
        done = failed = 0
        for due in plan.calls:
            row = plan.items.filter(pl.col("item") == due.item.name).row(0, named=True)
            try:
                client.get_many(due.endpoint, list(due.calls), refresh=due.refresh)  # type: ignore[arg-type]
            except StoreframesError as exc:
                failed += 1
                result.errors.append(f"{due.item.name}: {type(exc).__name__}: {exc}".splitlines()[0])
                if stops_the_run(exc):  # the cache keeps neither the ledger nor the answers: nothing more is sent
                    break
                continue
            finally:
                result.requests, result.credits_spent = client.requests_sent, client.spent
                result.credits_saved = client.saved
                if cache is not None and not self._taken_over(cache, run_id):  # what it spent so far, in its
                    cache.write_run(result.row(started, None, self.spec.spec_hash))  # row: a run killed shows it
            done += 1
            result.cells_new += row["cells"] - row["cached_cells"]
            result.cells_cached += row["cached_cells"]
        result.month_spent = plan.month_spent + client.spent
        if cache is not None:  # the days it was to fetch and did not, named: a hole is never ok
            due_items = set(plan.items.filter("due")["item"])
            asked = [i for i in chosen if i.name in due_items]
            result.missing = unfetched(cache.entries, client.namespace, asked, day, span=span)
        untold = False
        if kind == "run" and cache is not None and (self.spec.alerts or self.spec.notify.digest):
            try:
                judged = judge(self.spec, cache, client.namespace, day, month_spent=result.month_spent, digest=False)
                result.events, result.notified = judged.events.height, sum(judged.notified.values())
                result.errors += [f"alerts: {e}" for e in judged.errors]
                untold = bool(judged.errors)  # an address not told is said in the status: the events go next run
            except (StoreframesError, OSError) as exc:  # the fetched stays kept; the next run judges again
                result.errors.append(f"alerts: {type(exc).__name__}: {exc}".splitlines()[0])
                untold = True
        unpublished = 0
        if cache is not None and self.spec.publish is not None:  # after the fetching, a backfill's too: a failure
            published = publish_tables(  # loses nothing fetched; a day's snapshots wait for the day to be whole
                self.spec.publish, cache, client.namespace, storage_options=self._options.get("storage_options"),
                snapshots=not failed and not result.left_out and not result.missing,
            )  # fmt: skip
            result.published, unpublished = published.versions, len(published.errors)
            result.errors += published.errors
        if failed and not done:
            result.status = "failed"
        elif failed:
            result.status = "partial"
        elif result.left_out:
            result.status = "over_budget"
        elif unpublished or result.missing or untold:
            result.status = "partial"
        else:
            result.status = "ok"
        result.seconds = time.monotonic() - began
        if cache is not None:
            final = result.row(started, datetime.now(UTC), self.spec.spec_hash)
            mine = cache.read_run(self.spec.name, run_id)
            if mine is not None and mine["status"] == "interrupted":  # stopped past its lease, then resumed:
                final["status"] = result.status = "interrupted"  # the run that took over said so, and stays said
                note = "resumed after another run took over, and ended"
                final["errors"] = "\n".join(filter(None, [mine["errors"], note, *result.errors]))
            cache.write_run(final)
            if kind == "run" and (self.spec.alerts or self.spec.notify.digest):  # the day's digest, this run finished
                keep_after_run(self.spec, cache, client.namespace, result, final)
        return result

    def _taken_over(self, cache: Cache, run_id: str) -> bool:
        """Whether another run marked this one ``interrupted`` (it was stopped past its lease)."""
        mine = cache.read_run(self.spec.name, run_id)
        return mine is not None and mine["status"] == "interrupted"

    # -- alerts ---------------------------------------------------------------------------------

    def alerts(self, today: date | str | None = None, *, notify: bool = True) -> AlertResult:
        """Judge the alert rules on what is kept up to ``today``, keep and tell the new events; free.

        Under the tracker's lease, as a run judges them at its end: an event is said once.
        """
        with self.client(today) as client:
            day, cache = client.today(), client.cache
            assert cache is not None  # a tracker's cache is its spec's cache_dir
            with holding(client.coordinator.leases(cache, client), f"track:{self.spec.name}|tracker", timeout=RUN_WAIT):
                return judge(self.spec, cache, client.namespace, day, month_spent=self._month_spent(client, day),
                             notify=notify)  # fmt: skip

    def events(self, since: date | str | None = None, until: date | str | None = None) -> pl.DataFrame:
        """The events this tracker's alerts found (:func:`storeframes.events`); offline, no token."""
        first, last = _day(since), _day(until)
        return self._open_cache(self._options.get("storage_options")).read_events(
            self.spec.name, since=first, until=last
        )

    def digest(
        self, start: date | str, end: date | str | None = None, *, path: str | Path | None = None
    ) -> tuple[Path, ...]:
        """Write the digest of the days from ``start`` to ``end`` (``start`` alone by default) at ``path``
        (by default the spec's ``[notify] digest``): an HTML file, its Markdown twin and the charts; free."""
        first = _day(start)
        assert first is not None
        last = _day(end) or first
        if last < first:
            raise InvalidParameterError("end", last, f"a date on or after start={first}", endpoint="track")
        with self.client(last) as client:
            assert client.cache is not None
            return write_digest(self.spec, client.cache, client.namespace, first, last, path=path)

    # -- looking back ---------------------------------------------------------------------------

    def runs(self) -> pl.DataFrame:
        """The run log of this tracker, oldest first (:data:`~storeframes.cache.RUN_SCHEMA`); offline, no token."""
        return self._open_cache(self._options.get("storage_options")).read_runs(self.spec.name)

    def fetched(self, start: date | str, end: date | str) -> pl.DataFrame:
        """The days from ``start`` to ``end`` each followed keyword was fetched (``keyword``, ``country``,
        ``date``), by the cache's index; offline, no token. Give it to ``plots.rank_chart(fetched=...)`` or
        ``sf.rank_history(fetched=...)``: a day not in it is *not fetched*, which is not a day without data.

        >>> tracker.fetched("2026-11-01", "2026-11-20").height  # doctest: +SKIP
        80
        """
        first, last = _day(start), _day(end)
        assert first is not None and last is not None
        if last < first:
            raise InvalidParameterError("end", last, f"a date on or after start={first}", endpoint="track")
        with self.client(last) as client:
            assert client.cache is not None  # a tracker's cache is its spec's cache_dir
            return fetched_days(self.spec, client.cache, client.namespace, first, last)

    def status(self, today: date | str | None = None, *, since: date | str | None = None) -> TrackStatus:
        """Each item's last snapshot, whether it is due on ``today``, and the days missing from ``since`` on
        (by default the 30 days up to ``today``: :data:`~storeframes.track.status.STATUS_DAYS`); the month's spend.

        Only what was fetched on or before ``today`` counts (a replayed day sees what that day saw).
        """
        first = _day(since)
        with self.client(today) as client:
            day = client.today()
            if first is not None and first > day:
                raise InvalidParameterError("since", first, f"a day on or before {day}", endpoint="track")
            fetched = fetched_by_endpoint(_entries(client), self.spec.items, client.namespace)
            first = first if first is not None else day - timedelta(days=STATUS_DAYS - 1)
            rows = item_rows(self.spec.items, day, fetched, since=first)
            runs = (
                client.cache.read_runs(self.spec.name) if client.cache is not None else pl.DataFrame(schema=RUN_SCHEMA)
            )
            month = self._month_spent(client, day)
            return TrackStatus(self.spec.name, day, rows, month, self.spec.budget_per_month, runs, since=first)
