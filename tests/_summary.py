"""The reliability summary: what each fault scenario injected, retried, sent and compared.

Tests call :func:`record`; ``conftest.pytest_terminal_summary`` prints the table at the
end of the run (only when a scenario ran).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ROWS", "Scenario", "faults_of", "print_summary", "record"]


@dataclass
class Scenario:
    name: str
    faults: Counter[str] = field(default_factory=Counter)
    retries: int = 0
    requests: int = 0
    rows: int = 0


ROWS: list[Scenario] = []


def record(name: str, *, faults: Mapping[str, int] | None = None, retries: int = 0, requests: int, rows: int) -> None:
    """Add a scenario's figures to the summary: ``faults`` by kind, retries, requests the server saw, rows compared."""
    ROWS.append(Scenario(name, Counter({k: v for k, v in (faults or {}).items() if v}), retries, requests, rows))


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
    if not ROWS:
        return
    header = ("scenario", "faults injected", "retries", "requests", "rows compared")
    lines = [(s.name, _faults_text(s.faults), f"{s.retries:,}", f"{s.requests:,}", f"{s.rows:,}") for s in ROWS]
    lines.append(
        (
            "total",
            _faults_text(sum((s.faults for s in ROWS), Counter())),
            f"{sum(s.retries for s in ROWS):,}",
            f"{sum(s.requests for s in ROWS):,}",
            f"{sum(s.rows for s in ROWS):,}",
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
