"""What each workspace spent in a month beside its budget, and each token's total: ``sf.spend_report()`` and
``storeframes spend --workspaces``.

Each workspace's month is read from its own cache's ledger (every process's and machine's rows, requests in
flight counted at their estimate), offline, for free. A workspace whose cache is not there, or cannot be read,
has a null ``spent`` and says why in ``status`` and ``note``: never a 0 that is not known.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import Any

import polars as pl

from .._tracebacks import user_facing
from ..cache import open_cache, require_cache
from ..errors import ConfigurationError, NoCacheError, StoreframesError, shown_value
from ..ledger import SERVICE, month_spent_of
from .config import Workspace, load_workspaces

__all__ = ["SPEND_REPORT_SCHEMA", "month_of", "spend_report"]

SPEND_REPORT_SCHEMA = pl.Schema(
    {
        "workspace": pl.String(),
        "month": pl.String(),
        "spent": pl.Int64(),
        "budget": pl.Int64(),
        "left": pl.Int64(),
        "share": pl.Float64(),
        "token": pl.String(),
        "token_spent": pl.Int64(),
        "cache": pl.String(),
        "status": pl.String(),
        "note": pl.String(),
    }
)
"""The spend report's columns: ``spent`` (null when not known), ``budget`` and ``left`` (null without a month
budget), ``share`` of the budget spent, ``token`` (the environment variable holding the workspace's token, never
the token; ``"$A = $B"`` when two variables hold the same token), ``token_spent`` (the month's spend of every workspace of the file on the same token; null when one
of them is not known), ``status`` (``ok``, ``over_budget``, ``no_cache`` or ``unreadable``) and ``note``."""


def month_of(month: str | date | None) -> date:
    """The first day of ``month`` (``"2026-11"``, a date, or None for this month, UTC)."""
    if month is None:
        today = datetime.now(UTC).date()
        return today.replace(day=1)
    if isinstance(month, date):
        return month.replace(day=1)
    try:
        return datetime.strptime(str(month).strip(), "%Y-%m").date()
    except ValueError:
        raise ConfigurationError(f"month is written YYYY-MM such as 2026-11, got {shown_value(month)}") from None


def _spent(chosen: Workspace, first: date) -> tuple[int | None, str, str]:
    """The month's spend of a workspace by its cache's ledger, its status and a note."""
    cache = open_cache(chosen.cache_dir, None)
    assert cache is not None
    try:
        require_cache(cache, what=f"the spend of workspace {chosen.name}")
        spent = month_spent_of(cache.ledger.read(), SERVICE, first)
    except NoCacheError as exc:
        return None, "no_cache", str(exc)
    except StoreframesError as exc:
        return None, "unreadable", str(exc)
    except OSError as exc:
        return None, "unreadable", f"{type(exc).__name__}: {exc}"
    if chosen.budget_per_month is not None and spent >= chosen.budget_per_month:
        return spent, "over_budget", "the month's budget is spent: its callers are refused until the month ends"
    return spent, "ok", ""


def _token_group(chosen: Workspace) -> str:
    """Workspaces whose variables hold the same token are one group (by a hash of it, never the token)."""
    token = os.environ.get(chosen.token_variable(), "").strip()
    if not token:
        return f"unset:{chosen.token_variable()}"
    return hashlib.blake2b(token.encode(), digest_size=8, person=b"sf-spend").hexdigest()


@user_facing
def spend_report(
    month: str | date | None = None,
    *,
    config: str | os.PathLike[str] | None = None,
    workspaces: Sequence[str] | None = None,
) -> pl.DataFrame:
    """Each workspace's spend in ``month`` (this month, UTC, by default) beside its month budget, and its token's
    total; read from each workspace's cache for free, one row a workspace in the file's order.

    ``config`` is the workspaces file (found as :func:`~storeframes.workspaces.config_path` says by default);
    ``workspaces`` keeps some of them. A workspace whose cache is missing or unreadable has a null ``spent``
    and says so in ``status`` (see :data:`SPEND_REPORT_SCHEMA`).

    >>> sf.spend_report("2026-11").select("workspace", "spent", "budget", "left", "token_spent")  # doctest: +SKIP
    """
    first = month_of(month)
    found = load_workspaces(config)
    if workspaces is not None:
        unknown = [name for name in workspaces if name not in found]
        if unknown:
            raise ConfigurationError(f"no workspace {', '.join(unknown)} in the file; it has: {', '.join(found)}")
        found = {name: found[name] for name in workspaces}
    rows: list[dict[str, Any]] = []
    for chosen in found.values():
        spent, status, note = _spent(chosen, first)
        budget = chosen.budget_per_month
        rows.append(
            {
                "workspace": chosen.name,
                "month": f"{first:%Y-%m}",
                "spent": spent,
                "budget": budget,
                "left": None if budget is None or spent is None else max(0, budget - spent),
                "share": None if not budget or spent is None else spent / budget,
                "token": f"${chosen.token_variable()}",
                "cache": chosen.cache_dir,
                "status": status,
                "note": note,
                "group": _token_group(chosen),
            }
        )
    known = pl.col("spent").null_count().over("group") == 0  # a token's total is known when each of its parts is
    return (
        pl.DataFrame(rows, schema={**SPEND_REPORT_SCHEMA, "group": pl.String()}, orient="row")
        .with_columns(
            # variables holding one token are one token
            token=pl.col("token").unique(maintain_order=True).str.join(" = ").over("group"),
            token_spent=pl.when(known).then(pl.col("spent").sum().over("group")),
        )
        .select(SPEND_REPORT_SCHEMA.names())
    )
