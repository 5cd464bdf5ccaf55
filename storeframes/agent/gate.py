"""The spend gate: what an assistant may spend, decided before anything is sent.

Three rules, in this order, on the plan's estimate (the most the requests the cache lacks may cost):

1. nothing to send (the cache answers the call) always passes: it is free;
2. never past the session's budget (``--budget``) nor what is left of the tracker's (or the workspace's) month budget
   (``budget_per_month`` of ``--tracker``, against the month's spend in the cache's ledger, every
   machine's): refused whatever ``confirm`` says;
3. a call estimated above ``--confirm-above`` credits passes only with ``confirm=true``: the assistant
   is shown the price first, and asks.

While a call that passed runs, the client's own budget is held at what the rules left, so even an
answer dearer than its estimate cannot carry the spend past the session's or the month's budget.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any, Literal

from ..client import Client
from ..errors import plural

__all__ = ["Gate", "Verdict"]


@dataclass(frozen=True)
class Verdict:
    """What the gate said of a call: ``passed``, and in words why not (``reason``); ``confirmable``
    when ``confirm=true`` would let it through; ``left``, the most the budgets left it (None: no limit)."""

    passed: bool
    reason: str = ""
    confirmable: bool = False
    left: int | None = None


class Gate:
    """The gate of one server's session: ``budget`` (None: no session limit), ``confirm_above`` credits,
    and ``month``, a function giving (spent this month, the month's budget) or None without a tracker's
    month budget. ``lease`` is held while a paid call is judged and sent: with a month budget, the lease
    on the month's spending that the tracker's runs hold too, so two servers (or a server and a run) on
    one cache never pass the month's budget together."""

    def __init__(
        self,
        client: Client,
        *,
        budget: int | None,
        confirm_above: int,
        month: Callable[[], tuple[int, int] | None] = lambda: None,
        lease: Callable[[], AbstractContextManager[Any]] = nullcontext,
        month_whose: str = "the tracker's month budget",
    ):
        self.client = client
        self.budget = budget
        self.confirm_above = confirm_above
        self.month = month
        self.lease = lease
        self.month_whose = month_whose
        """Whose month budget ``month`` reads, in words (the tracker's, or a workspace's)."""
        self._start = client.spent

    @property
    def spent(self) -> int:
        """Credits this session has spent."""
        return self.client.spent - self._start

    def left(self, month: tuple[int, int] | Literal["read"] | None = "read") -> tuple[int | None, str]:
        """The most credits a call may still spend (None: no limit), and what sets it, in words; ``month``
        is :attr:`month`'s answer when the caller has it already (by default it is read)."""
        limits: list[tuple[int, str]] = []
        if self.budget is not None:
            limits.append(
                (max(0, self.budget - self.spent), f"the session's budget of {plural(self.budget, 'credit')}")
            )
        if month == "read":
            month = self.month()
        if month is not None:
            spent, budget = month
            limits.append((max(0, budget - spent), f"{self.month_whose} ({spent:,} of {budget:,} spent)"))
        if not limits:
            return None, "no budget"
        return min(limits)

    def judge(self, estimate: int, *, confirm: bool) -> Verdict:
        """The verdict on a call whose requests are estimated at ``estimate`` credits."""
        if estimate <= 0:
            return Verdict(True)
        left, limit = self.left()
        if left is not None and estimate > left:
            said = f"it would cost up to {plural(estimate, 'credit')}, and {left:,} are left of {limit}"
            return Verdict(False, said, left=left)
        if estimate > self.confirm_above and not confirm:
            return Verdict(
                False,
                f"it would cost up to {plural(estimate, 'credit')}, above the {self.confirm_above:,} this server spends "
                "without confirmation: ask the user, then call again with confirm=true",
                confirmable=True,
                left=left,
            )
        return Verdict(True, left=left)

    @contextmanager
    def holding(self, left: int | Literal["read"] | None = "read") -> Iterator[None]:
        """The client's budget held at what the gate leaves (``left``, as a verdict found it; by default read
        again) while a call that passed runs."""
        if left == "read":
            left = self.left()[0]
        before = self.client.budget
        self.client.budget = None if left is None else self.client.spent + left
        try:
            yield
        finally:
            self.client.budget = before
