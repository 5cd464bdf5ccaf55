"""``storeframes spend [--workspaces] [--month YYYY-MM]``: each workspace's month beside its budget, and each
token's total, read from the workspaces' caches for free (:func:`storeframes.spend_report`).

A workspace whose spend is not known (no cache there, a cache that cannot be read) is said on its line with
why, never shown as 0, and the exit status is 3; a workspace whose month budget is spent makes it 4.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import ConfigurationError, StoreframesError
from .printing import printable

__all__ = ["run_spend"]

NOT_KNOWN = 3
OVER_BUDGET = 4


def _credits(value: int | None) -> str:
    return "not known" if value is None else f"{value:,}"


def run_spend(args: argparse.Namespace, chosen: Any) -> int:
    """The ``spend`` command; the exit status."""
    from ..workspaces import spend_report

    names = None if chosen is None or args.workspaces else [chosen.name]
    try:
        report = spend_report(args.month, config=args.config, workspaces=names)
    except (ConfigurationError, StoreframesError) as exc:
        print(printable(f"storeframes spend: {exc}"), file=sys.stderr)
        return 2
    month = report["month"][0] if report.height else args.month
    print(printable(f"month {month} (UTC), read from each workspace's cache"))
    width = max([len("workspace"), *(len(name) for name in report["workspace"])])
    print(f"{'workspace':<{width}}  {'spent':>12}  {'budget':>12}  {'left':>12}  token")
    for row in report.iter_rows(named=True):
        budget = "none" if row["budget"] is None else f"{row['budget']:,}"
        left = "-" if row["budget"] is None else _credits(row["left"])
        line = f"{row['workspace']:<{width}}  {_credits(row['spent']):>12}  {budget:>12}  {left:>12}  {row['token']}"
        if row["status"] != "ok":
            line += f"  [{row['status']}: {row['note']}]"
        print(printable(line))
    for _, group in report.group_by("token", maintain_order=True):
        shared = group["token_spent"][0]
        names_said = ", ".join(group["workspace"])
        total = "not known (a workspace's spend is not known)" if shared is None else f"{shared:,} credits"
        print(printable(f"token {group['token'][0]} ({names_said}): {total} in {month}"))
    if report.filter(report["spent"].is_null()).height:
        return NOT_KNOWN
    if report.filter(report["status"] == "over_budget").height:
        return OVER_BUDGET
    return 0
