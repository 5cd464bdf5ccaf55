"""The reliability summary: what each fault scenario injected, retried, sent and compared, and where it
counted them, the credits it paid twice and the most requests that arrived in any window.

Tests call :func:`record`; ``conftest.pytest_terminal_summary`` prints the table at the
end of the run (only when a scenario ran).
"""

from __future__ import annotations

import json
import textwrap
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "HOSTILE",
    "ROWS",
    "Scenario",
    "faults_of",
    "hostile",
    "max_in_window",
    "paid_twice",
    "print_summary",
    "record",
]


@dataclass
class Scenario:
    name: str
    faults: Counter[str] = field(default_factory=Counter)
    retries: int = 0
    requests: int = 0
    rows: int = 0
    paid_twice: int | None = None
    window: tuple[int, int] | None = None  # (most requests that arrived in one window, the limit)


ROWS: list[Scenario] = []
HOSTILE: Counter[str] = Counter()
"""Replies of the hostile loopback servers (tests/_hostile.py) served, by the kind of misbehaviour."""


def hostile(kind: str) -> None:
    """Count one hostile case tried: a reply a misbehaving loopback server served (``kind`` is ``ok`` for a
    well-formed one), or a cache folder or answer made hostile on purpose."""
    HOSTILE[kind] += 1


def record(
    name: str,
    *,
    faults: Mapping[str, int] | None = None,
    retries: int = 0,
    requests: int,
    rows: int,
    paid_twice: int | None = None,
    window: tuple[int, int] | None = None,
) -> None:
    """Add a scenario's figures to the summary: ``faults`` by kind, retries, requests the server saw, rows
    compared, and where the scenario counted them, the credits paid twice and the most requests in any window."""
    kinds = Counter({k: v for k, v in (faults or {}).items() if v})
    ROWS.append(Scenario(name, kinds, retries, requests, rows, paid_twice, window))


def paid_twice(arrivals: Iterable[Any]) -> tuple[int, int, int]:
    """What a server's answered arrivals paid for twice: (credits, requests answered again, cells delivered again).

    An arrival counts when the server answered it in full and charged it. Its credits
    count in the share of its cells that an earlier answered arrival already delivered.
    """
    from storeframes import catalog, planning

    seen_requests: set[tuple[str, str]] = set()
    seen_cells: set[tuple[str, str, Any]] = set()
    credits = requests = cells = 0
    for arrival in sorted(arrivals, key=lambda a: a.time):
        if arrival.status != 200 or arrival.fault is not None or not arrival.cost:
            continue
        key = (arrival.path, json.dumps(dict(arrival.params), sort_keys=True))
        requests += key in seen_requests
        seen_requests.add(key)
        ep = next(e for e in catalog.ENDPOINTS.values() if arrival.path.endswith(e.path))
        scope = planning.scope_of(ep, arrival.params)
        mine = [(ep.name, scope, cell) for cell in planning.cells_of(ep, arrival.params)]
        again = sum(cell in seen_cells for cell in mine)
        seen_cells.update(mine)
        cells += again
        credits += round(arrival.cost * again / len(mine)) if mine else 0
    return credits, requests, cells


def max_in_window(times: Iterable[float], window: float) -> int:
    """The most ``times`` (seconds) that lie within any ``window`` seconds."""
    ordered = sorted(times)
    most, first = 0, 0
    for last, time in enumerate(ordered):
        while ordered[first] <= time - window:
            first += 1
        most = max(most, last - first + 1)
    return most


def faults_of(arrivals: Iterable[Any]) -> Counter[str]:
    """Faults the sandbox injected, by kind, from its ``arrivals`` (429 and 5xx by status)."""
    kinds: Counter[str] = Counter()
    for arrival in arrivals:
        if arrival.fault:
            kinds[arrival.fault] += 1
        elif arrival.status == 429:
            kinds["429"] += 1
        elif arrival.status >= 500:
            kinds["5xx"] += 1
    return kinds


def _faults_text(faults: Counter[str]) -> str:
    if not faults:
        return "none"
    return f"{sum(faults.values())}: " + ", ".join(f"{n} {kind}" for kind, n in sorted(faults.items()))


def print_summary(reporter: Any) -> None:
    if not ROWS and not HOSTILE:
        return
    if not ROWS:
        reporter.write_sep("=", "reliability summary")
        _print_hostile(reporter)
        return
    header = ("scenario", "faults injected", "retries", "requests", "rows compared", "paid twice", "most in a window")
    lines = [
        (
            s.name,
            _faults_text(s.faults),
            f"{s.retries:,}",
            f"{s.requests:,}",
            f"{s.rows:,}",
            "-" if s.paid_twice is None else f"{s.paid_twice:,}",
            "-" if s.window is None else f"{s.window[0]} of {s.window[1]}",
        )
        for s in ROWS
    ]
    counted = [s for s in ROWS if s.paid_twice is not None]
    all_faults = sum((s.faults for s in ROWS), Counter())
    lines.append(
        (
            "total",
            f"{sum(all_faults.values()):,} (by kind below)" if all_faults else "none",
            f"{sum(s.retries for s in ROWS):,}",
            f"{sum(s.requests for s in ROWS):,}",
            f"{sum(s.rows for s in ROWS):,}",
            f"{sum(s.paid_twice or 0 for s in counted):,}" if counted else "-",
            "",
        )
    )
    widths = [max(len(row[i]) for row in [header, *lines]) for i in range(len(header))]
    reporter.write_sep("=", "reliability summary")
    for i, row in enumerate([header, *lines]):
        cells = [row[0].ljust(widths[0]), row[1].ljust(widths[1])] + [
            c.rjust(w) for c, w in zip(row[2:], widths[2:], strict=False)
        ]
        reporter.write_line("  ".join(cells))
        if i == 0 or i == len(lines) - 1:
            reporter.write_line("  ".join("-" * w for w in widths))
    if all_faults:
        shown = ", ".join(f"{kind} {n}" for kind, n in sorted(all_faults.items()))
        for line in textwrap.wrap(f"faults by kind: {shown}", width=110, subsequent_indent="  "):
            reporter.write_line(line)
    if counted:
        total = sum(s.paid_twice or 0 for s in counted)
        reporter.write_line(
            f"credits paid twice: {total:,} (in {len(counted)} {'scenario' if len(counted) == 1 else 'scenarios'} that count them)"
        )
    windows = [(s.name, s.window) for s in ROWS if s.window is not None]
    if windows:
        name, (most, limit) = max(windows, key=lambda w: w[1][0] / w[1][1])
        over = sum(w[0] > w[1] for _, w in windows)
        reporter.write_line(
            f"max requests in any window: {most} of {limit} allowed ({name}); "
            f"{over} of {len(windows)} scenarios over the limit"
        )
    _print_hostile(reporter)


def _print_hostile(reporter: Any) -> None:
    """One line of totals, then the hostile cases by kind, wrapped to the terminal's width."""
    if not HOSTILE:
        return
    cases = {kind: n for kind, n in HOSTILE.items() if kind != "ok"}
    reporter.write_line(
        f"hostile cases tried: {len(cases)} kinds, {sum(cases.values()):,} times (loopback servers that misbehave"
        f" on purpose, hostile cache folders and answers; {HOSTILE['ok']:,} well-formed replies beside them):"
    )
    shown = ", ".join(f"{kind} {n}" for kind, n in sorted(cases.items()))
    for line in textwrap.wrap(shown, width=110, initial_indent="  ", subsequent_indent="  "):
        reporter.write_line(line)
