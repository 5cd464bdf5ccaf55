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
from .alerts import judge
from .day_digest import keep_after_run
from .plan import make_plan
from .publishing import publish_tables
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
        cache.write_run(result.row(started, None, spec.spec_hash))
    plan = make_plan(spec, client, day, chosen, backfill=span)
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
            # what it spent so far, in its row: a run killed shows it
            if cache is not None and not taken_over(spec, cache, run_id):
                cache.write_run(result.row(started, None, spec.spec_hash))
        done += 1
        result.cells_new += row["cells"] - row["cached_cells"]
        result.cells_cached += row["cached_cells"]
    result.month_spent = plan.month_spent + client.spent
    if cache is not None:  # the days it was to fetch and did not, named: a hole is never ok
        due_items = set(plan.items.filter("due")["item"])
        asked = [i for i in chosen if i.name in due_items]
        result.missing = unfetched(cache.entries, client.namespace, asked, day, span=span)
    untold = False
    if kind == "run" and cache is not None and (spec.alerts or spec.notify.digest):
        try:
            judged = judge(spec, cache, client.namespace, day, month_spent=result.month_spent, digest=False)
            result.events, result.notified = judged.events.height, sum(judged.notified.values())
            result.errors += [f"alerts: {e}" for e in judged.errors]
            untold = bool(judged.errors)  # an address not told is said in the status: the events go next run
        except (StoreframesError, OSError) as exc:  # the fetched stays kept; the next run judges again
            result.errors.append(f"alerts: {type(exc).__name__}: {exc}".splitlines()[0])
            untold = True
    unpublished = 0
    # after the fetching, a backfill's too: a failure loses nothing fetched; a day's snapshots wait for the day
    # to be whole
    if cache is not None and spec.publish is not None:
        published = publish_tables(
            spec.publish,
            cache,
            client.namespace,
            storage_options=storage_options,
            snapshots=not failed and not result.left_out and not result.missing,
        )
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
        final = result.row(started, datetime.now(UTC), spec.spec_hash)
        mine = cache.read_run(spec.name, run_id)
        # stopped past its lease, then resumed: the run that took over said so, and it stays said
        if mine is not None and mine["status"] == "interrupted":
            final["status"] = result.status = "interrupted"
            note = "resumed after another run took over, and ended"
            final["errors"] = "\n".join(filter(None, [mine["errors"], note, *result.errors]))
        cache.write_run(final)
        if kind == "run" and (spec.alerts or spec.notify.digest):  # the day's digest, this run finished
            keep_after_run(spec, cache, client.namespace, result, final)
    return result


def taken_over(spec: TrackerSpec, cache: Cache, run_id: str) -> bool:
    """Whether another run marked this one ``interrupted`` (it was stopped past its lease)."""
    mine = cache.read_run(spec.name, run_id)
    return mine is not None and mine["status"] == "interrupted"
