"""The month's spending of a tracker's token: how much it spent in a calendar month, and the lease under which the
runs of trackers with a month budget (and an assistant's paid calls) spend it one after another.

>>> from storeframes.track.budget import RUN_WAIT
>>> RUN_WAIT / 3600
6.0
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from datetime import date
from typing import Any

from ..client import Client
from ..coord import holding
from .alerts import month_spent_of

__all__ = ["RUN_WAIT", "month_budget_lease", "month_spent"]

RUN_WAIT = 6 * 3600.0
"""Seconds a run waits for another run of its tracker (or of the month's spending) to end: a run
whose holder lives keeps its lease alive, one whose holder died lapses within the lease's TTL."""


def month_budget_lease(client: Client, day: date) -> AbstractContextManager[Any]:
    """The lease on the month's spending of ``client``'s service: the runs of trackers with a month budget (and
    an assistant's paid calls) spend one after another, on every machine of the cache."""
    leases = client.coordinator.leases(client.cache, client)
    return holding(leases, f"track-budget:{client.namespace}:{day:%Y-%m}|budget", timeout=RUN_WAIT)


def month_spent(client: Client, day: date) -> int:
    """Credits the token spent in ``day``'s calendar month (UTC), by the cache's ledger: every machine's."""
    ledger = client.cache.ledger.read() if client.cache is not None else client.ledger
    return month_spent_of(ledger, client.namespace, day)
