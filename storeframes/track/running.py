"""A tracker's run, its leases held: the runs found interrupted marked, the plan, the items' requests under the
budgets, the alerts judged, the tables published, the status said and the run log's row written.

>>> tracker.run("2026-11-20").status  # doctest: +SKIP
'ok'
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import Any

import polars as pl

from ..cache import Cache
from ..client import Client
from ..errors import StoreframesError
from .ahead import ReadAhead
from .alerts import judge
from .compacting import compaction_due, counted
from .day_digest import keep_after_run
from .judging import LIVE, Judged, RanksRead, followed_pairs, ranks_from
from .plan import TrackPlan, make_plan
from .publishing import Publish, publish_tables
from .result import RunResult
from .runs import end_interrupted, stops_the_run
from .spec import Item, TrackerSpec
from .status import unfetched

__all__ = ["run_locked", "taken_over"]


def run_locked(
    spec: TrackerSpec,
    client: Client,
    run_id: str,
    day: date,
    kind: str,
    chosen: Sequence[Item],
    span: tuple[date, date] | None,
    began: float,
    storage_options: Any,
) -> RunResult:
    """A run, its leases held: the interrupted runs marked, the plan, the requests, the run log."""
    cache = client.cache
    started = datetime.now(UTC)
    result = RunResult(run_id, spec.name, day, kind, "running", budget_per_month=spec.budget_per_month)
    result.session = client.credits.session
    if cache is not None:
        result.interrupted = end_interrupted(cache, spec.name, run_id)
        cache.runs.write(result.row(started, None, spec.spec_hash))
    plan = make_plan(spec, client, day, chosen, backfill=span)
    result.items_due = int(plan.items["due"].sum())
    result.left_out = plan.left_out
    month_left = None if plan.budget_per_month is None else plan.budget_per_month - plan.month_spent
    run_left = plan.budget_per_run
    limits = [x for x in (run_left, month_left) if x is not None]
    client.budget = max(0, min(limits)) if limits else None
    alerting = kind == "run" and bool(spec.alerts or spec.notify.digest)
    ranks = RanksRead()  # what the judgement reads of the ranks, for the day's digest
    # the small files earlier runs left counted before the requests; their compaction when due, and the days
    # before this one, done while the requests wait on the rate limit
    said, problems = counted(spec, cache) if cache is not None else ({}, [])
    compact = said if compaction_due(said) else None
    ahead = _while_waiting(spec, cache, client.namespace, day, alerting, compact) if cache is not None else None
    ranks.ahead = ahead if ahead is not None and ahead.live else None
    try:
        done, failed = _fetch_items(spec, client, plan, result, started)
    finally:  # the compaction ends under the tracker's lease, whatever the requests did
        failure = ahead.wait() if ahead is not None else None
    if failure is not None:
        raise failure
    if ahead is not None and ahead.compaction is not None:
        said, problems = ahead.compaction
    result.compaction = said
    result.errors += [f"compaction: {p}" for p in problems]
    month_spent = result.month_spent = plan.month_spent + client.spent
    if cache is None:
        result.status = _status(result, done, failed, unpublished=0, untold=False)
        result.seconds = time.monotonic() - began
        return result
    # the days it was to fetch and did not, named: a hole is never ok
    due_items = set(plan.items.filter("due")["item"])
    asked = [i for i in chosen if i.name in due_items]
    result.missing = unfetched(cache.entries, client.namespace, asked, day, span=span)
    untold = alerting and not _judged(spec, cache, client, day, result, month_spent=month_spent, ranks=ranks)
    unpublished = 0
    if spec.publish is not None:  # after the fetching, a backfill's too: a failure loses nothing fetched
        whole = not failed and not result.left_out and not result.missing  # a day's snapshots wait for it whole
        unpublished = _published(spec.publish, cache, client, result, storage_options, snapshots=whole)
    result.status = _status(result, done, failed, unpublished=unpublished, untold=untold)
    result.seconds = time.monotonic() - began
    _end(spec, cache, client, result, started, ranks)
    return result


def _while_waiting(
    spec: TrackerSpec, cache: Cache, service: str, day: date, alerting: bool, compact: dict[str, Any] | None
) -> ReadAhead | None:
    """The cache's compaction when due (``compact``: its small files counted), then the kept ranks of the days a
    rank rule judges before ``day`` (when ``alerting``), on a thread as the requests go; None when there is
    neither to do."""
    reads = ranks_from(spec, Judged(cache, service, day, datetime.now(UTC))) if alerting else None
    live = followed_pairs(spec, LIVE) if reads is not None else set()
    if not live and compact is None:
        return None
    first = reads if reads is not None and live else day
    return ReadAhead(cache, service, day, first, live, compact=compact).start()


def _fetch_items(
    spec: TrackerSpec, client: Client, plan: TrackPlan, result: RunResult, started: datetime
) -> tuple[int, int]:
    """The plan's calls sent item by item, what they spent written into the run's row as they go (a run killed
    shows it); how many items were fetched and how many failed."""
    cache = client.cache
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
            if cache is not None and not taken_over(spec, cache, result.run_id):
                cache.runs.write(result.row(started, None, spec.spec_hash))
        done += 1
        result.cells_new += row["cells"] - row["cached_cells"]
        result.cells_cached += row["cached_cells"]
    return done, failed


def _judged(
    spec: TrackerSpec, cache: Cache, client: Client, day: date, result: RunResult, *, month_spent: int, ranks: RanksRead
) -> bool:
    """The alert rules judged on what the run kept, their events told; whether every address was told (an address
    not told is said in the status, and its events go next run)."""
    try:
        judged = judge(spec, cache, client.namespace, day, month_spent=month_spent, digest=False, ranks=ranks)
    except (StoreframesError, OSError) as exc:  # the fetched stays kept; the next run judges again
        result.errors.append(f"alerts: {type(exc).__name__}: {exc}".splitlines()[0])
        return False
    result.events, result.notified = judged.events.height, sum(judged.notified.values())
    result.errors += [f"alerts: {e}" for e in judged.errors]
    return not judged.errors


def _published(
    publish: Publish, cache: Cache, client: Client, result: RunResult, storage_options: Any, *, snapshots: bool
) -> int:
    """The spec's tables published to its lake, their versions in the result; how many failed (named in its
    errors)."""
    published = publish_tables(publish, cache, client.namespace, storage_options=storage_options, snapshots=snapshots)
    result.published = published.versions
    result.errors += published.errors
    return len(published.errors)


def _status(result: RunResult, done: int, failed: int, *, unpublished: int, untold: bool) -> str:
    """The run's status (:data:`~storeframes.track.result.EXIT_CODES`): a hole or an untold event is never ok."""
    if failed and not done:
        return "failed"
    if failed:
        return "partial"
    if result.left_out:
        return "over_budget"
    if unpublished or result.missing or untold:
        return "partial"
    return "ok"


def _end(
    spec: TrackerSpec, cache: Cache, client: Client, result: RunResult, started: datetime, ranks: RanksRead
) -> None:
    """The run log's final row written, and the day's digest kept once the run that finishes the day ends."""
    final = result.row(started, datetime.now(UTC), spec.spec_hash)
    mine = cache.runs.one(spec.name, result.run_id)
    # stopped past its lease, then resumed: the run that took over said so, and it stays said
    if mine is not None and mine["status"] == "interrupted":
        final["status"] = result.status = "interrupted"
        note = "resumed after another run took over, and ended"
        final["errors"] = "\n".join(filter(None, [mine["errors"], note, *result.errors]))
    cache.runs.write(final)
    if result.kind == "run" and (spec.alerts or spec.notify.digest):
        keep_after_run(spec, cache, client.namespace, result, final, ranks)


def taken_over(spec: TrackerSpec, cache: Cache, run_id: str) -> bool:
    """Whether another run marked this one ``interrupted`` (it was stopped past its lease)."""
    mine = cache.runs.one(spec.name, run_id)
    return mine is not None and mine["status"] == "interrupted"
