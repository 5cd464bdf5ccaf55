"""The steps of a call that reach beyond the engine: plan against the cache, fetch the cells it lacks (once,
whoever sends them), keep each answer as it arrives, and serve the parts.

:class:`Fetcher` does them with a client's parts (cache, credits, wire, the coordinator's
leases), on the client's threads (:class:`Workers`), reading the client's
:class:`~storeframes.fetch.settings.Settings` (offline, progress, the service's name ...) on
every call. It answers the client's calls (:meth:`Fetcher.answers`) and gathers the parts
the :class:`~storeframes.fetch.pipeline.FrameMaker` makes frames of (:meth:`Fetcher.gather`);
it never reaches back into the client. The engine decides; the fetcher does what it says.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, wait
from contextlib import nullcontext
from dataclasses import replace
from datetime import UTC, date, datetime
from functools import partial
from operator import itemgetter
from typing import Any, TypeVar

from .. import catalog, engine, planning
from ..answers import Answer, Part, Refresh, RefreshOption, Response
from ..cache import Cache
from ..catalog import Endpoint
from ..coord import Coordinator, LeaseLost, Leases
from ..coord.forking import ForkGuard
from ..credits import Credits
from ..engine import CallPlan, Fetched
from ..errors import (
    AnswerWarning,
    AppNotAvailableError,
    AppsUnavailableWarning,
    CacheUnavailableError,
    CallWarnings,
    NotCachedError,
    StoreframesError,
    plural,
    warn,
)
from ..wire import Wire
from .month_budget import MonthBudget
from .settings import Settings, refresh_mode
from .workers import Spent, Workers

__all__ = ["CallParts", "Fetcher"]

log = logging.getLogger("storeframes")

T = TypeVar("T")
R = TypeVar("R")


def _progress_bar(name: str, futures: Sequence[Future[Any]], spent: Callable[[], int]) -> Any:
    """A bar counting requests as they finish, with the credits spent so far (see :mod:`storeframes.fetch.progress`)."""
    from .progress import progress_bar

    return progress_bar(name, futures, spent)


CallParts = tuple[dict[str, str], list[Part]]
"""One call's canonical parameters and the parts that provide its cells."""

Group = tuple[list[Fetched], dict[str, Any], bool]
"""What a group of requests gave: what it fetched, the leases others held, whether the cache had some of it."""


def _raise_first_failure(futures: Sequence[Future[Group]], not_done: Collection[Future[Group]]) -> None:
    """On a failed request, cancel those not started and raise its error with ``partial``: the responses received."""
    failure = next((f.exception() for f in futures if f.done() and f.exception() is not None), None)
    if failure is None:
        return
    for future in not_done:
        future.cancel()
    wait(not_done)
    if isinstance(failure, StoreframesError):  # the answers of the groups that ended, and of those that failed
        ran = [f for f in futures if f.done() and not f.cancelled()]
        ok = [response for f in ran if f.exception() is None for got in f.result()[0] for response in got[0]]
        failed = [f.exception() for f in ran if f.exception() not in (None, failure)]
        failure.partial = [
            *ok,
            *failure.partial,
            *(r for e in failed if isinstance(e, StoreframesError) for r in e.partial),
        ]
    raise failure


def _load(cache: Cache, plan: CallPlan, loaded: dict[str, Response]) -> bool:
    """Read the cached answers a plan uses; False when one was unreadable (it is set aside: plan again)."""
    for entry in plan.entries().values():
        if entry.id not in loaded:
            response = cache.load(entry)
            if response is None:
                return False
            loaded[entry.id] = response
    return True


def _shown(ids: Sequence[str], most: int = 10) -> str:
    """App ids for a message: each quoted (escapes show control characters), at most ``most`` of them."""
    shown = ", ".join(repr(i[:200]) for i in ids[:most])
    return shown + (f" and {len(ids) - most} more" if len(ids) > most else "")


def _asked_only(ep: Endpoint, response: Response) -> tuple[Response | None, list[str]]:
    """``response`` holding only the apps it was asked for, and the apps asked for that it left out.

    Apps nobody asked for are dropped with an :class:`~storeframes.AnswerWarning`. The
    response's ``apps`` then name only the apps it answered, so the cache holds it as an
    answer for those; it is None when it answered none of them.
    """
    if ep.entity != "apps" or not isinstance(response.result, dict):
        return response, []
    asked = response.params["apps"].split(",")
    wanted = set(asked)
    strangers = [str(app) for app in response.result if app not in wanted]
    if strangers:
        warn(
            f"{ep.name} answered {plural(len(strangers), 'app')} nobody asked for, left out: {_shown(strangers)}",
            AnswerWarning,
        )
    answered = [app for app in asked if app in response.result]
    if len(answered) == len(asked) and not strangers:
        return response, []
    absent = [app for app in asked if app not in response.result]
    if not answered:
        return None, absent
    result = {app: response.result[app] for app in answered}
    changed = replace(response, params={**response.params, "apps": ",".join(answered)}, result=result, body=None)
    return changed, absent


class Fetcher:
    """The steps of a call that plan against the cache, send what it lacks and serve the parts (see the module).

    >>> from storeframes import sandbox
    >>> client = sandbox.client()
    >>> ep, gathered = client.fetcher.gather("metadata", [{"apps": "3233849169"}], None)
    >>> [params["apps"] for params, parts in gathered]
    ['3233849169']
    >>> client.close()
    """

    def __init__(
        self,
        settings: Settings,
        *,
        cache: Cache | None,
        credits: Credits,
        wire: Wire,
        workers: Workers,
        coordinator: Coordinator,
    ):
        self.settings = settings
        """What the client is set to, read on every call; the client replaces it when a setting changes."""
        self.cache, self.credits, self.wire, self.workers = cache, credits, wire, workers
        self.coordinator = coordinator
        self._leases: Leases | None = None
        self.guard = ForkGuard()
        """The process that built the client's parts: a call in a child forked from it is refused."""
        self.month: MonthBudget | None = None
        """A month budget every caller of the cache holds to (a workspace's), or None."""

    def now(self) -> datetime:
        """The current UTC datetime by the settings' clock."""
        return self.settings.clock()

    def today(self) -> date:
        """Today's date (UTC) by the settings' clock: what relative dates resolve against."""
        return self.now().astimezone(UTC).date()

    def namespace(self) -> str:
        """The service the answers and ledger rows of the calls made now belong to."""
        return self.settings.namespace

    def leases(self) -> Leases:
        """The leases of the cache: one table for every client of the process that uses it."""
        if self._leases is None:
            self._leases = self.coordinator.leases(self.cache, self)
        return self._leases

    def map(self, function: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        """``function`` over ``items`` on the client's threads, results in order (see :meth:`Workers.map`)."""
        return self.workers.map(function, items)

    def answers(self, endpoint: str, calls: Sequence[Mapping[str, Any]], refresh: RefreshOption | None) -> list[Answer]:
        """Each call's answer: validated, planned against the cache, what it lacks sent, the parts merged."""
        with CallWarnings():
            ep, mode, plans, loaded = self.plan(endpoint, calls, refresh, load=True)
            try:
                plans, pool = self.fetch(ep, mode, plans, loaded)
                answers, counted = [], set[int]()
                for plan in plans:
                    parts, unavailable = self.served(ep, plan, pool, loaded, counted)
                    answers.append(engine.compose(ep, plan.params, parts, unavailable))
                return answers
            finally:
                self.flush()

    def gather(
        self, endpoint: str, calls: Sequence[Mapping[str, Any]], refresh: RefreshOption | None
    ) -> tuple[Endpoint, list[CallParts]]:
        """Each call's canonical parameters and parts, fetching what the cache lacks: what frames build on.

        Cached parts name their entry only (``response`` None), so a frame already kept
        in the cache is read from Parquet and the raw answer is never decompressed.
        Calls that mean the same request are answered once.
        """
        with CallWarnings():
            ep, mode, plans, _ = self.plan(endpoint, calls, refresh, load=False)
            unique: dict[str, CallPlan] = {}
            for plan in plans:
                unique.setdefault(engine.key(plan.params), plan)
            try:
                plans, pool = self.fetch(ep, mode, list(unique.values()), None)
                counted = set[int]()
                return ep, [(plan.params, self.served(ep, plan, pool, {}, counted)[0]) for plan in plans]
            finally:
                self.flush()

    def close(self) -> None:
        """Close the threads, wait for the frames written behind the calls, tidy the ledger, close the wire.

        In a child forked from the process that built the parts, it leaves them alone (they are the parent's).
        """
        if self.guard.forked:
            return
        self.workers.shutdown()
        if self.cache is not None:
            self.cache.frames.flush()  # the large frames written behind the calls
            self.credits.sink = self.cache.ledger
            self.credits.close()
        self.wire.close()

    def plan(
        self,
        endpoint: str,
        calls: Sequence[Mapping[str, Any]],
        refresh: RefreshOption | None,
        *,
        load: bool,
        canonical: bool = False,
    ) -> tuple[Endpoint, Refresh, list[CallPlan], dict[str, Response]]:
        """Validate every call (unless ``canonical``: validated already), then plan each against the cache
        (reading its answers when ``load``).

        The first step of every call: in a forked child it is refused (:mod:`storeframes.coord.forking`)
        before anything is read or sent.
        """
        self.guard.check()
        settings = self.settings
        ep = settings.endpoints[catalog.endpoint(endpoint).name]
        mode = refresh_mode(settings.refresh if refresh is None else refresh)
        if settings.offline and mode == "auto":  # no fetching: every cached answer serves, however old
            mode = "never"
        today = self.today()
        valid = [dict(call) if canonical else catalog.validate(ep, call, today=today) for call in calls]
        loaded: dict[str, Response] = {}
        return ep, mode, self.plan_calls(ep, valid, mode, loaded if load else None), loaded

    def flush(self) -> None:
        """Keep the call's cache hits, and any ledger row whose write failed, in the cache."""
        self.guard.check()
        if self.cache is not None:
            self.credits.sink = self.cache.ledger
            self.credits.flush()

    def plan_calls(
        self,
        ep: Endpoint,
        calls: Sequence[dict[str, str]],
        mode: Refresh,
        loaded: dict[str, Response] | None,
        since: datetime | None = None,
    ) -> list[CallPlan]:
        """Plan calls against the cache, seen afresh; read the answers they use into ``loaded`` (unless None)."""
        cells = [planning.cells_of(ep, params) for params in calls]
        scopes = [planning.scope_of(ep, params) for params in calls]
        if self.cache is not None:
            self.cache.sync(ep.name)
            if mode != "always":  # the index searched once for every call's entities
                wanted: dict[str, set[Any]] = {}
                for scope, mine in zip(scopes, cells, strict=True):
                    wanted.setdefault(scope, set()).update(map(itemgetter(0), mine))
                self.cache.prepare(ep, service=self.settings.namespace, wanted=wanted)
        plans: list[CallPlan] = []
        for params, mine, scope in zip(calls, cells, scopes, strict=True):
            while True:
                plan = engine.plan_call(
                    ep,
                    params,
                    self.cache,
                    service=self.settings.namespace,
                    now=self.now(),
                    refresh=mode,
                    since=since,
                    cells=mine,
                    scope=scope,
                )
                if loaded is None or self.cache is None or _load(self.cache, plan, loaded):
                    break
            plans.append(plan)
        return plans

    def fetch(
        self, ep: Endpoint, mode: Refresh, plans: list[CallPlan], loaded: dict[str, Response] | None
    ) -> tuple[list[CallPlan], engine.Pool]:
        """Get every cell the plans miss, each from one request, whoever sends it; returns the plans seen afresh.

        In rounds: each group of requests is sent under the leases of its apps or
        keywords, after a look at the cache (another caller may have just fetched
        them); a group whose leases another caller holds is not sent, and once the
        round's requests ended, those leases are waited for and what their holders
        fetched is used. Offline or over the budget nothing is sent. On a failure the
        requests not yet started are cancelled, and the error is raised with
        ``partial`` holding the responses received.
        """
        self.guard.check()
        pool = engine.Pool(ep)
        cells = engine.missing(ep, plans)
        if not cells:
            return plans, pool
        requests = engine.requests_over(ep, plans, cells)
        estimate = sum(ep.estimate(r) for r in requests)
        settings = self.settings
        if settings.offline or mode == "never":
            if self.cache is not None:  # what could not be listed is not missing
                self.cache.check_listed(ep.name)
            raise NotCachedError(
                ep.name,
                requests,
                estimate,
                reason=settings.offline_reason if settings.offline else 'refresh="never"',
            )
        self.credits.check(ep.name, estimate)
        self.wire.check_ready()
        if self.cache is not None:  # a cache that cannot keep the answers is refused before any is paid for
            self.cache.check_writable()
            self.cache.check_listed(ep.name)
        self.leases()  # here, not on a worker: a member coordinating differently from its team is refused first
        with self.month.holding(ep.name, estimate) if self.month is not None else nullcontext():
            return self._rounds(ep, mode, plans, loaded, pool, requests)

    def _rounds(
        self,
        ep: Endpoint,
        mode: Refresh,
        plans: list[CallPlan],
        loaded: dict[str, Response] | None,
        pool: engine.Pool,
        requests: list[dict[str, str]],
    ) -> tuple[list[CallPlan], engine.Pool]:
        """The rounds of :meth:`fetch`: each sends what no other caller is fetching, then waits for the rest."""
        since = self.now() if mode == "always" else None
        for _ in range(1000):
            groups = engine.lease_groups(ep, self.settings.namespace, requests)
            stop = threading.Event()  # set by a group that failed: the others send no further request
            spent = Spent()  # what this round's requests are charged: its bar's credits
            work = partial(self._fetch_group, ep, mode=mode, since=since, stop=stop, spent=spent)
            futures = self.workers.start(work, groups)
            _, not_done = self._watch(ep, futures, spent)
            _raise_first_failure(futures, not_done)
            replan, busy = False, {}
            for future in futures:
                fetched, waiting, found = future.result()
                for got in fetched:
                    pool.add(got, paid=True)
                busy.update(waiting)
                replan |= found
            leases = self.leases()
            for name, flight in busy.items():
                for got in leases.wait(name, flight):
                    pool.add(got, paid=False)
            if self.cache is not None and (replan or None in busy.values()):  # others kept them in the cache
                plans = self.plan_calls(ep, [p.params for p in plans], "never" if since else mode, loaded, since)
            cells = engine.missing(ep, plans, pool)
            if not cells:
                return plans, pool
            requests = engine.requests_over(ep, plans, cells)
        raise StoreframesError(f"{ep.name}: the cells other callers were fetching never arrived")

    def _watch(self, ep: Endpoint, futures: Sequence[Future[Group]], spent: Spent) -> tuple[Any, Any]:
        """Wait for the first failure or the end of all, with a progress bar when there are many.

        The bar shows the credits these requests were charged (``spent``), not the client's total.
        """
        progress = self.settings.progress
        show = progress is not False and len(futures) > (0 if progress else self.settings.progress_after)
        bar = _progress_bar(ep.name, futures, lambda: spent.credits) if show else None
        try:
            return wait(futures, return_when=FIRST_EXCEPTION)
        finally:
            if bar is not None:
                bar.close()

    def _fetch_group(
        self,
        ep: Endpoint,
        group: tuple[list[str], list[dict[str, str]]],
        *,
        mode: Refresh,
        since: datetime | None,
        stop: threading.Event,
        spent: Spent | None = None,
    ) -> Group:
        """Send a group of requests under its leases: what it fetched, the leases others held, and
        whether the cache already held some of its cells (the calls are then planned again). Once a
        group failed (``stop``), no further request is sent; a failure carries what its group fetched."""
        names, requests = group
        leases = self.leases()
        held, busy = leases.take(names)
        if busy:  # another caller is fetching some of it: wait for it after this round, holding nothing
            for lease in held.values():
                leases.release(lease)
            return [], busy, False
        fetched: list[Fetched] = []
        found = False
        fence = partial(leases.confirm, list(held.values()))
        try:
            for request in requests:
                if stop.is_set():
                    break
                todo = [request]
                if self.cache is not None:  # what another caller fetched before the leases were taken
                    self.cache.sync(ep.name)
                    self.cache.check_listed(ep.name)
                    plan = engine.plan_call(
                        ep,
                        request,
                        self.cache,
                        service=self.settings.namespace,
                        now=self.now(),
                        refresh="never" if since else mode,
                        since=since,
                    )
                    found |= bool(plan.cached)
                    todo = plan.requests
                for params in todo:
                    fetched.append(self._fetch_one(ep, params, fence, spent))
        except LeaseLost as lost:  # stopped past the TTL: another caller fetches the rest; wait for it
            log.warning("%s", lost)
            return fetched, dict.fromkeys(names), True
        except StoreframesError as exc:
            stop.set()
            exc.partial = [*(response for got in fetched for response in got.responses), *exc.partial]
            raise
        except BaseException:
            stop.set()
            raise
        finally:
            for lease in held.values():
                leases.release(lease, fetched)
        return fetched, {}, found

    def _fetch_one(
        self,
        ep: Endpoint,
        params: dict[str, str],
        fence: Callable[[], None] | None = None,
        spent: Spent | None = None,
    ) -> Fetched:
        """Send one request and keep its answer; when a country refuses an app of it, find which by halving.

        Only the apps asked for are kept: others in the answer are dropped with an
        :class:`~storeframes.AnswerWarning`, and apps the answer left out are not cached
        as answered (the call names them; the next one asks for them again).
        """
        try:
            response = self._send(ep, params, fence, spent)
        except AppNotAvailableError:
            if ep.entity != "apps":  # no app to leave out: the call cannot be answered
                raise
            halves = engine.halves(ep, params)
            if not halves:  # this one app: remembered as not available
                self._keep(Response(ep.name, dict(params), None, 0, 0, 422, self.now()), ep, available=False)
                return Fetched([], [(dict(params), params["apps"])])
            results = [self._fetch_one(ep, half, fence, spent) for half in halves]
            return Fetched(
                [r for got in results for r in got.responses],
                [a for got in results for a in got.refused],
                [a for got in results for a in got.absent],
            )
        asked, absent = _asked_only(ep, response)
        kept = [self._keep(asked, ep)] if asked is not None else []
        return Fetched(kept, [], [(dict(params), app) for app in absent])

    def _send(
        self,
        ep: Endpoint,
        params: dict[str, str],
        fence: Callable[[], None] | None = None,
        spent: Spent | None = None,
    ) -> Response:
        """One request through the wire, its estimate held against the budget until it ends.

        Settling counts every attempt's cost (a charged failure too) and keeps the
        request's ledger rows in the cache before the caller keeps the answer; ``spent``
        (the call's own count) adds the same cost.
        """
        reservation = self.credits.reserve(ep.name, ep.estimate(params), tries=self.wire.max_tries, params=params)
        try:
            return self.wire.send(ep, params, report=reservation.attempt, before=fence)
        except BaseException as exc:
            reservation.maybe_sent = not isinstance(exc, Exception)  # an interrupt: it may have gone out unreported
            raise
        finally:
            if spent is not None:
                spent.add(reservation.cost)
            reservation.settle()

    def _keep(self, response: Response, ep: Endpoint, *, available: bool = True) -> Response:
        """Write an answer (or an app's unavailability) to the cache as soon as it is known; name its entry."""
        if self.cache is None:
            return response
        try:
            entry = self.cache.store(
                response,
                service=self.settings.namespace,
                scope=planning.scope_of(ep, response.params),
                cells=planning.cells_of(ep, response.params),
                available=available,
                scrub=self.wire.scrub,
                must_keep=True,
            )
        except CacheUnavailableError as exc:  # paid for, not kept: the call stops, the answer in its partial
            exc.partial = [*exc.partial, response]
            raise
        return response.kept_as(entry.id) if entry is not None else response

    def served(
        self, ep: Endpoint, plan: CallPlan, pool: engine.Pool, loaded: Mapping[str, Response], counted: set[int]
    ) -> tuple[list[Part], tuple[str, ...]]:
        """The parts of a call; its cache hits go to the ledger, the apps refused and the apps answers left
        out into a warning each."""
        parts, unavailable, hits = engine.parts_of(ep, plan, pool, loaded=loaded, counted=counted)
        for hit in hits:
            self.credits.record_hit(hit.endpoint, hit.params, hit.saved)
        scope = plan.scope
        absent = (
            list(dict.fromkeys(str(c[0]) for c in plan.cells if c not in plan.cached and pool.is_absent(scope, c)))
            if pool.absent
            else []
        )
        if absent:
            warn(
                f"{ep.name} answered without {plural(len(absent), 'app')} it was asked for, left out and not cached "
                f"(asked for again next time): {_shown(absent)}",
                AnswerWarning,
            )
        if unavailable:
            warn(
                f"{plural(len(unavailable), 'app')} not available in country {plan.params.get('country')!r} "
                f"for {ep.name}, left out: {', '.join(unavailable)}",
                AppsUnavailableWarning,
            )
        return parts, unavailable
