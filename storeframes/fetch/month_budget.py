"""A month budget held for every caller of a cache: a workspace's ``budget_per_month``.

Every call that has requests to send takes the lease on the month's spending of its cache (the one the runs of
trackers with a month budget and an assistant's paid calls hold: :func:`month_lease_name`), reads what the
month spent from the cache's ledger (every process's and machine's, in-flight reservations counted at their
estimate), refuses a call that could pass what is left before anything is sent, and holds the client's
:class:`~storeframes.credits.Ceiling` at what is left while it sends: so a notebook, a tracker, an assistant
and several machines spending under one workspace never pass its month's budget together. A call the cache
answers whole takes no lease and reads nothing.

A tracker's run holds the lease for the whole run and keeps its client's budget within the month itself; it
says so with :meth:`MonthBudget.covering`, and its calls then take no lease of their own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date
from typing import Any

from ..cache import Cache
from ..coord import Leases, holding
from ..coord.leases import WAIT_LIMIT
from ..credits import Ceiling, Credits
from ..errors import BudgetExceededError, shown_when_half_built
from ..ledger import month_spent_of

__all__ = ["MonthBudget", "month_lease_name"]


def month_lease_name(namespace: str, day: date) -> str:
    """The lease on the month's spending of ``namespace``'s answers in a cache, for ``day``'s month."""
    return f"track-budget:{namespace}:{day:%Y-%m}|budget"


class MonthBudget:
    """``budget`` credits a calendar month (UTC) for every caller of ``cache``; ``whose`` names it in messages
    (``"workspace acme"``). ``leases``, ``namespace`` and ``today`` are the client's."""

    def __init__(
        self,
        whose: str,
        budget: int,
        *,
        credits: Credits,
        cache: Cache,
        leases: Callable[[], Leases],
        namespace: Callable[[], str],
        today: Callable[[], date],
    ):
        self.whose = whose
        self.budget = budget
        self._credits, self._cache, self._leases = credits, cache, leases
        self._namespace, self._today = namespace, today
        self._covering = 0
        self._lock = threading.Lock()

    @classmethod
    def of(cls, fetcher: Any, workspace: Any) -> MonthBudget | None:
        """The month budget of ``workspace`` (a :class:`~storeframes.workspaces.Workspace`, or None) for a client's
        ``fetcher`` (its credits, cache, leases, service and clock); None without one, or without a cache."""
        if workspace is None or workspace.budget_per_month is None or fetcher.cache is None:
            return None
        return cls(
            f"workspace {workspace.name}",
            workspace.budget_per_month,
            credits=fetcher.credits,
            cache=fetcher.cache,
            leases=fetcher.leases,
            namespace=fetcher.namespace,
            today=fetcher.today,
        )

    @shown_when_half_built
    def __repr__(self) -> str:
        return f"MonthBudget({self.whose}, {self.budget:,} credits a month)"

    def spent(self, day: date | None = None) -> int:
        """What the month of ``day`` (today by default) spent, by the cache's ledger: every caller's."""
        return month_spent_of(self._cache.ledger.read(), self._namespace(), day or self._today())

    def named(self, day: date) -> str:
        """Whose budget it is, in words, for ``day``'s month (as :class:`~storeframes.BudgetExceededError` says)."""
        return f"the month budget of {self.whose} ({day:%Y-%m})"

    @contextmanager
    def covering(self) -> Iterator[None]:
        """Say that a run holds the month's lease and keeps within the month itself (a tracker's run): the
        client's calls take no lease of their own meanwhile, on whichever thread they run."""
        with self._lock:
            self._covering += 1
        try:
            yield
        finally:
            with self._lock:
                self._covering -= 1

    @contextmanager
    def holding(self, endpoint: str, estimate: int) -> Iterator[None]:
        """Send a call's requests, estimated at ``estimate``, within what the month left: refused before anything
        is sent when it could pass it, and held there (the client's ceiling) while they are sent."""
        if self._covering:
            yield
            return
        day = self._today()
        with holding(self._leases(), month_lease_name(self._namespace(), day), timeout=WAIT_LIMIT):
            spent = self.spent(day)
            credits = self._credits
            if spent + estimate > self.budget:
                raise BudgetExceededError(
                    spent=spent,
                    reserved=0,
                    estimate=estimate,
                    budget=self.budget,
                    endpoint=endpoint,
                    whose=self.named(day),
                )
            base = credits.spent + credits.reserved
            credits.ceiling = Ceiling(base + self.budget - spent, self.named(day), self.budget, spent, credits.spent)
            try:
                yield
            finally:
                credits.ceiling = None
