"""The reliability summary: what each fault scenario injected, retried, sent and compared, and where it
counted them, the credits it paid twice, the credits it paid again as the docs document, and the most
requests that arrived in any window.

Credits paid twice are defects, and the summary's figure of them should be 0. A documented repayment
is not one: the docs say which requests are paid again (:data:`REPAYMENTS`: a request in flight at a
kill, one in flight when a bucket stopped taking writes) and how many at most. A scenario that meets
one says so with :class:`Repaid` (its kind, its credits and the bound the docs give, in credits),
and counts only the rest as paid twice; the summary shows the two apart, and a repayment past its
bound as what it is.

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
    "REPAYMENTS",
    "ROWS",
    "Repaid",
    "Scenario",
    "faults_of",
    "hostile",
    "max_in_window",
    "paid_lines",
    "paid_twice",
    "print_summary",
    "record",
]


REPAYMENTS = {
    "in flight at a kill": "a request answered (and charged) while its process was killed is not kept, and the "
    "next run pays it again: at most the requests in flight, one per worker (docs/guides/tracking.md)",
    "in flight when a bucket stopped": "a request answered while the bucket stopped taking writes is not kept, "
    "and is paid again next time: at most the requests in flight (docs/guides/teams.md, What a backend failure "
    "looks like)",
    "in flight at a stop past the lease": "a request in flight when its holder was stopped (Ctrl-Z, a laptop "
    "asleep) past its lease is fetched again by the caller that took the lease over: at most one per worker "
    "of the stopped holder (docs/guides/teams.md)",
}
"""The repayments the docs document, by kind, and what it says of each."""


@dataclass(frozen=True)
class Repaid:
    """Credits a scenario paid again as the docs document: ``kind`` (one of :data:`REPAYMENTS`), ``credits``
    and ``bound``, the most the docs allow in the scenario (its requests in flight at most, in credits)."""

    kind: str
    credits: int
    bound: int

    def __post_init__(self) -> None:
        if self.kind not in REPAYMENTS:
            raise ValueError(f"not a repayment the docs document: {self.kind!r}; known: {', '.join(REPAYMENTS)}")

    @property
    def within(self) -> bool:
        return 0 <= self.credits <= self.bound

    def text(self) -> str:
        """``110 of at most 150``, or ``210, OVER its bound of 150``."""
        if self.within:
            return f"{self.credits:,} of at most {self.bound:,}"
        return f"{self.credits:,}, OVER its bound of {self.bound:,}"


@dataclass
class Scenario:
    name: str
    faults: Counter[str] = field(default_factory=Counter)
    retries: int = 0
    requests: int = 0
    rows: int = 0
    paid_twice: int | None = None
    window: tuple[int, int] | None = None  # (most requests that arrived in one window, the limit)
    repaid: Repaid | None = None


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
    repaid: Repaid | None = None,
) -> None:
    """Add a scenario's figures to the summary: ``faults`` by kind, retries, requests the server saw, rows
    compared, and where the scenario counted them, the credits paid twice (beyond ``repaid``, the repayment
    the docs document, if any) and the most requests in any window."""
    kinds = Counter({k: v for k, v in (faults or {}).items() if v})
    ROWS.append(Scenario(name, kinds, retries, requests, rows, paid_twice, window, repaid))


def exported() -> str:
    """The figures recorded in this process, as JSON: a worker of a parallel run (pytest-xdist) hands them to
    the process that prints the summary."""
    rows = [  # by hand: dataclasses.asdict would rebuild a Counter from its (kind, count) pairs as keys
        {**vars(row), "faults": dict(row.faults), "repaid": vars(row.repaid) if row.repaid else None} for row in ROWS
    ]
    return json.dumps({"rows": rows, "hostile": dict(HOSTILE)})


def imported(text: str) -> None:
    """Add the figures a worker recorded (:func:`exported`) to this process's."""
    data = json.loads(text)
    HOSTILE.update(data["hostile"])
    for row in data["rows"]:
        repaid = Repaid(**row["repaid"]) if row["repaid"] else None
        window = tuple(row["window"]) if row["window"] else None
        faults = Counter(row["faults"])
        ROWS.append(
            Scenario(
                row["name"], faults, row["retries"], row["requests"], row["rows"], row["paid_twice"], window, repaid
            )
        )


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


LOST: list[str] = []
"""Workers of a parallel run that stopped without handing their figures over (the summary says so)."""


def print_summary(reporter: Any) -> None:
    if not ROWS and not HOSTILE and not LOST:
        return
    if LOST:  # a worker that crashed took its figures with it: the table below counts the others only
        reporter.write_sep("=", "reliability summary")
        reporter.write_line(
            f"INCOMPLETE: the figures of {len(LOST)} worker(s) were lost ({', '.join(LOST)} stopped before handing "
            "them over); what follows counts the others only"
        )
    if not ROWS:
        if not LOST:
            reporter.write_sep("=", "reliability summary")
        _print_hostile(reporter)
        return
    header = (
        "scenario",
        "faults injected",
        "retries",
        "requests",
        "rows compared",
        "paid twice",
        "repaid (documented)",
        "most in a window",
    )
    lines = [
        (
            s.name,
            _faults_text(s.faults),
            f"{s.retries:,}",
            f"{s.requests:,}",
            f"{s.rows:,}",
            "-" if s.paid_twice is None else f"{s.paid_twice:,}",
            "-" if s.repaid is None else s.repaid.text(),
            "-" if s.window is None else f"{s.window[0]} of {s.window[1]}",
        )
        for s in ROWS
    ]
    counted = [s for s in ROWS if s.paid_twice is not None]
    repaid = [s.repaid for s in ROWS if s.repaid is not None]
    all_faults = sum((s.faults for s in ROWS), Counter())
    lines.append(
        (
            "total",
            f"{sum(all_faults.values()):,} (by kind below)" if all_faults else "none",
            f"{sum(s.retries for s in ROWS):,}",
            f"{sum(s.requests for s in ROWS):,}",
            f"{sum(s.rows for s in ROWS):,}",
            f"{sum(s.paid_twice or 0 for s in counted):,}" if counted else "-",
            f"{sum(r.credits for r in repaid):,}" if repaid else "-",
            "",
        )
    )
    widths = [max(len(row[i]) for row in [header, *lines]) for i in range(len(header))]
    if not LOST:  # else said above, with what was lost
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
    for line in paid_lines(ROWS):
        reporter.write_line(line)
    windows = [(s.name, s.window) for s in ROWS if s.window is not None]
    if windows:
        name, (most, limit) = max(windows, key=lambda w: w[1][0] / w[1][1])
        over = sum(w[0] > w[1] for _, w in windows)
        reporter.write_line(
            f"max requests in any window: {most} of {limit} allowed ({name}); "
            f"{over} of {len(windows)} scenarios over the limit"
        )
    _print_hostile(reporter)


def paid_lines(rows: Iterable[Scenario]) -> list[str]:
    """The summary's lines of credits paid twice (defects: the figure should be 0) and of the repayments the
    docs document, by kind, each with its bound."""
    rows = list(rows)
    counted = [s for s in rows if s.paid_twice is not None]
    repaid = [s for s in rows if s.repaid is not None]
    lines = []
    if counted:
        total = sum(s.paid_twice or 0 for s in counted)
        where = f"in {len(counted)} {'scenario that counts' if len(counted) == 1 else 'scenarios that count'} them"
        verdict = "none beyond the documented repayments" if total == 0 else "a DEFECT: the docs document none"
        lines.append(f"credits paid twice: {total:,} ({where}; {verdict})")
    if repaid:
        total = sum(s.repaid.credits for s in repaid if s.repaid is not None)
        over = [s for s in repaid if s.repaid is not None and not s.repaid.within]
        state = f"{len(over)} OVER its bound" if over else "each within its bound"
        lines.append(
            f"documented repayments: {total:,} credits in {len(repaid)} "
            f"{'scenario' if len(repaid) == 1 else 'scenarios'}, {state}:"
        )
        for kind in REPAYMENTS:
            mine = [s for s in repaid if s.repaid is not None and s.repaid.kind == kind]
            shown = "; ".join(f"{s.name}: {s.repaid.text()}" for s in mine if s.repaid is not None)
            if mine:
                lines += textwrap.wrap(f"{kind}: {shown}", width=110, initial_indent="  ", subsequent_indent="    ")
    return lines


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
