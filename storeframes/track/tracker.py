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
import time
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl

from ..cache import RUN_SCHEMA, Cache, open_cache
from ..client import Client
from ..coord import holding
from ..errors import ConfigurationError, InvalidParameterError, plural, shown_when_half_built
from ..fetch.pipeline import collector_paused
from ..workspaces import Workspace
from .adding import HISTORY_DAYS, Addition, kept_opportunities, plan_addition
from .alerts import AlertResult, judge, write_digest
from .budget import RUN_WAIT, month_budget_lease, month_spent
from .day_digest import fetched_days
from .digest_standings import digest_standings
from .due import fetched_by_endpoint
from .judging import STANDING_DAYS
from .plan import TrackPlan, client_entries, make_plan
from .result import RunResult
from .running import run_locked
from .spec import Item, TrackerSpec, load_spec
from .status import STATUS_DAYS, TrackStatus, item_rows

__all__ = ["Tracker"]


def _day(today: date | str | None) -> date | None:
    if today is None or isinstance(today, date):
        return today
    try:
        return date.fromisoformat(today)
    except (TypeError, ValueError):
        raise InvalidParameterError("today", today, "a date as YYYY-MM-DD", endpoint="track") from None


class Tracker:
    """A tracker of a :class:`~storeframes.track.spec.TrackerSpec`: its plans, runs, backfills and run log.

    ``client_options`` go to each run's :class:`~storeframes.Client` (``api_key``, ``base_url``,
    ``coordinator``, ``storage_options`` ...; the token comes from ``$STOREFRAMES_API_KEY`` by
    default, or from the variable the spec's workspace names); the cache is the spec's ``cache_dir`` (its
    workspace's). ``sandbox=True`` runs against the
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
    def from_toml(
        cls,
        path: str | os.PathLike[str],
        *,
        sandbox: bool = False,
        workspace: str | Workspace | None = None,
        config: str | os.PathLike[str] | None = None,
        **client_options: Any,
    ) -> Tracker:
        """The tracker of the spec in the TOML file ``path`` (checked whole before anything is sent); ``workspace``
        is the one it spends under when the spec names none (a spec naming another is refused), ``config`` the
        workspaces file (see :func:`~storeframes.track.spec.parse_spec`)."""
        spec = load_spec(Path(path), workspace=workspace, config=config if config is None else Path(config))
        return cls(spec, sandbox=sandbox, **client_options)

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

        return Client(cache_dir=self._cache, clock=clock, workspace=self.spec.workspace, **options)

    # -- planning -------------------------------------------------------------------------------

    def plan(self, today: date | str | None = None, *, items: Sequence[str] | str | None = None) -> TrackPlan:
        """What a run on ``today`` would send and what it would cost, item by item; free."""
        chosen = self.spec.chosen(items)
        with self.client(today) as client, collector_paused():  # thousands of calls planned: no cycle among them
            return make_plan(self.spec, client, client.today(), chosen)

    # -- adding keywords ----------------------------------------------------------------------

    def opportunities(
        self,
        app: str,
        competitors: Sequence[str] | str,
        *,
        places: int = 10,
        countries: Sequence[str] | None = None,
        days: int = HISTORY_DAYS,
        today: date | str | None = None,
    ) -> pl.DataFrame:
        """The keyword opportunities of ``app`` against ``competitors`` (:func:`storeframes.keyword_opportunities`,
        its ``top`` being ``places``), scored on the search history the spec's cache keeps of the spec's places
        (its keyword items' countries and devices, or ``countries``) over the ``days`` up to yesterday; best
        score first; free, nothing is sent.

        A cache keeping no such history raises :class:`~storeframes.track.adding.HistoryNotKeptError`; an app or
        competitor its results never list is refused, naming apps they do.

        >>> found = tracker.opportunities("6441354028", ["1234567890", "2345678901"])  # doctest: +SKIP
        >>> tracker.add(found, top=20)  # the plan after the change; nothing written  # doctest: +SKIP
        """
        if isinstance(competitors, str):
            competitors = competitors.split(",")
        with self.client(today) as client:
            assert client.cache is not None  # a tracker's cache is its spec's cache_dir
            day, cache = client.today(), client.cache
            return kept_opportunities(
                self.spec, cache, client.namespace, day, app, competitors, places=places, countries=countries, days=days
            )

    def add(
        self,
        keywords: pl.DataFrame | Sequence[str] | str,
        *,
        top: int | None = None,
        min_score: float | None = None,
        endpoint: str = "search",
        country: str | None = None,
        today: date | str | None = None,
        write: bool = False,
    ) -> Addition:
        """Add ``keywords`` to the spec as ``[[track]]`` items of ``endpoint`` (``search`` by default; or
        ``search_history``, ``search_ads``), one item per place; the :class:`~storeframes.track.adding.Addition`:
        the keywords, the plan of the spec after the change on ``today`` (what :meth:`plan` then gives) and its
        credits a day and a month against the budgets. Free; nothing is written unless ``write``.

        ``keywords`` is a frame best first with ``keyword`` and ``country`` columns (:meth:`opportunities`' own;
        ``device`` and ``score`` when it has them) or texts, in ``country`` (the spec's by default). The ``top``
        best not tracked yet by an item of ``endpoint`` in their place are added (a keyword tracked already is
        said, never added twice), of a ``score`` of at least ``min_score``. With ``write`` the items are
        appended to the spec's file, every byte before them kept, and the tracker follows the new spec; a
        change that does not fit the budgets is refused then
        (:class:`~storeframes.track.adding.AdditionOverBudgetError`), and nothing is written.

        >>> tracker.add(["photo editor", "collage maker"], country="gb").plan.credits  # doctest: +SKIP
        40
        """
        with self.client(today) as client, collector_paused():
            addition = plan_addition(
                self.spec,
                client,
                client.today(),
                keywords,
                top=top,
                min_score=min_score,
                endpoint=endpoint,
                country=country,
            )
        if write:
            addition = addition.write()
            self.spec = addition.spec
        return addition

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
                "items",
                current,
                "history items only (search_history, changes): the service keeps no past days "
                "of the present's answers (metadata, metrics, search), so they cannot be backfilled",
                endpoint="track",
            )
        history = [i.name for i in chosen if i.history]
        if not history:
            raise InvalidParameterError(
                "items",
                [i.name for i in chosen],
                "a spec with search_history or changes items: the others' answers "
                "are the present only, so they cannot be backfilled",
                endpoint="track",
            )
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
                plan = make_plan(self.spec, client, day, chosen, backfill=span)
                status = "over_budget" if plan.left_out else "ok"
                return RunResult(
                    run_id,
                    self.spec.name,
                    day,
                    kind,
                    status,
                    items_due=len(plan.calls),
                    left_out=plan.left_out,
                    month_spent=plan.month_spent,
                    budget_per_month=self.spec.budget_per_month,
                )
            storage_options = self._options.get("storage_options")
            leases = client.coordinator.leases(client.cache, client)
            with holding(leases, f"track:{self.spec.name}|tracker", timeout=RUN_WAIT):
                if self.spec.budget_per_month is None:
                    result = run_locked(self.spec, client, run_id, day, kind, chosen, span, began, storage_options)
                else:
                    with month_budget_lease(client, day):
                        result = run_locked(self.spec, client, run_id, day, kind, chosen, span, began, storage_options)
                return result

    # -- alerts ---------------------------------------------------------------------------------

    def alerts(self, today: date | str | None = None, *, notify: bool = True) -> AlertResult:
        """Judge the alert rules on what is kept up to ``today``, keep and tell the new events; free.

        Under the tracker's lease, as a run judges them at its end: an event is said once.
        """
        with self.client(today) as client:
            day, cache = client.today(), client.cache
            assert cache is not None  # a tracker's cache is its spec's cache_dir
            with holding(client.coordinator.leases(cache, client), f"track:{self.spec.name}|tracker", timeout=RUN_WAIT):
                return judge(
                    self.spec, cache, client.namespace, day, month_spent=month_spent(client, day), notify=notify
                )

    def events(self, since: date | str | None = None, until: date | str | None = None) -> pl.DataFrame:
        """The events this tracker's alerts found (:func:`storeframes.events`); offline, no token."""
        first, last = _day(since), _day(until)
        return self._open_cache(self._options.get("storage_options")).events.read(
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
        return self._open_cache(self._options.get("storage_options")).runs.read(self.spec.name)

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

    def standings(self, day: date | str | None = None) -> pl.DataFrame:
        """Where the tracked apps stand on ``day`` (by default the client's today): :func:`~storeframes.standings` of
        the apps its rules and items follow on its keywords, from what its cache keeps, a day no run fetched
        ``not_fetched``; what the digest opens with. Offline, no token; show it with
        :func:`~storeframes.standings_table`.

        >>> sf.standings_table(tracker.standings("2026-11-28"))  # doctest: +SKIP
        """
        chosen = _day(day)
        with self.client(chosen) as client:
            assert client.cache is not None  # a tracker's cache is its spec's cache_dir
            last = client.today()
            start = last - timedelta(days=STANDING_DAYS)
            asked = fetched_days(self.spec, client.cache, client.namespace, start, last)
            return digest_standings(self.spec, client.cache, client.namespace, last, fetched=asked)

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
            fetched = fetched_by_endpoint(client_entries(client), self.spec.items, client.namespace)
            first = first if first is not None else day - timedelta(days=STATUS_DAYS - 1)
            rows = item_rows(self.spec.items, day, fetched, since=first)
            runs = (
                client.cache.runs.read(self.spec.name) if client.cache is not None else pl.DataFrame(schema=RUN_SCHEMA)
            )
            month = month_spent(client, day)
            return TrackStatus(self.spec.name, day, rows, month, self.spec.budget_per_month, runs, since=first)
