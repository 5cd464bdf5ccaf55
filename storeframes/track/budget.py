"""The month's spending of a tracker's token: how much it spent in a calendar month, and the lease under which the
runs of trackers with a month budget (and an assistant's paid calls) spend it one after another.

>>> from storeframes.track.budget import RUN_WAIT
>>> RUN_WAIT / 3600
6.0
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from datetime import date

from ..client import Client
from ..coord import holding
from ..fetch.month_budget import month_lease_name
from ..ledger import month_spent_of

__all__ = ["RUN_WAIT", "month_budget_lease", "month_spent"]

RUN_WAIT = 6 * 3600.0
"""Seconds a run waits for another run of its tracker (or of the month's spending) to end: a run
whose holder lives keeps its lease alive, one whose holder died lapses within the lease's TTL."""


@contextmanager
def month_budget_lease(client: Client, day: date) -> Iterator[None]:
    """The lease on the month's spending of ``client``'s service: the runs of trackers with a month budget (and
    an assistant's paid calls, and every call of a workspace with a month budget) spend one after another, on
    every machine of the cache. A client of such a workspace takes no lease of its own meanwhile."""
    leases = client.coordinator.leases(client.cache, client)
    month = client.fetcher.month
    lease = holding(leases, month_lease_name(client.namespace, day), timeout=RUN_WAIT)
    with lease, month.covering() if month is not None else nullcontext():
        yield


def month_spent(client: Client, day: date) -> int:
    """Credits the token spent in ``day``'s calendar month (UTC), by the cache's ledger: every machine's."""
    ledger = client.cache.ledger.read() if client.cache is not None else client.ledger
    return month_spent_of(ledger, client.namespace, day)
