"""The suite's reliability summary keeps two figures apart: credits paid twice (defects, which should be 0) and the
repayments the docs document (a request in flight at a kill, one in flight when a bucket stopped taking
writes), each scenario's with its kind and its bound."""

from __future__ import annotations

from collections import Counter

import pytest

from tests import _summary
from tests._summary import Repaid, Scenario, paid_lines


class Reporter:
    """What pytest's terminal reporter is asked to write, line by line."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def write_sep(self, sep: str, title: str) -> None:
        self.lines.append(f"== {title} ==")

    def write_line(self, line: str) -> None:
        self.lines.append(line)


def summary(monkeypatch, rows: list[Scenario]) -> list[str]:
    monkeypatch.setattr(_summary, "ROWS", rows)
    monkeypatch.setattr(_summary, "HOSTILE", Counter())
    reporter = Reporter()
    _summary.print_summary(reporter)
    return reporter.lines


KILLED = Scenario("tracker killed", requests=40, rows=30, paid_twice=0, repaid=Repaid("in flight at a kill", 20, 30))
BUCKET = Scenario(
    "bucket stops", requests=5, rows=0, paid_twice=0, repaid=Repaid("in flight when a bucket stopped", 22, 2 * 11)
)
CLEAN = Scenario("8 threads, one client", requests=1, rows=40, paid_twice=0)


def test_documented_repayments_are_counted_apart_from_credits_paid_twice(monkeypatch):
    lines = summary(monkeypatch, [KILLED, BUCKET, CLEAN])
    assert "credits paid twice: 0 (in 3 scenarios that count them; none beyond the documented repayments)" in lines
    at = lines.index("documented repayments: 42 credits in 2 scenarios, each within its bound:")
    assert lines[at + 1 : at + 3] == [
        "  in flight at a kill: tracker killed: 20 of at most 30",
        "  in flight when a bucket stopped: bucket stops: 22 of at most 22",
    ]
    header = lines[1].split()
    assert "repaid" in header and "(documented)" in header
    total = next(line for line in lines if line.startswith("total"))
    assert total.split()[-2:] == ["0", "42"]  # paid twice, repaid


def test_credits_paid_twice_beyond_a_repayment_and_a_repayment_past_its_bound_are_said(monkeypatch):
    defect = Scenario("two clients", requests=3, rows=2, paid_twice=11)
    over = Scenario("killed again", requests=9, rows=3, paid_twice=0, repaid=Repaid("in flight at a kill", 40, 30))
    assert paid_lines([defect, over, CLEAN]) == [
        "credits paid twice: 11 (in 3 scenarios that count them; a DEFECT: the docs document none)",
        "documented repayments: 40 credits in 1 scenario, 1 OVER its bound:",
        "  in flight at a kill: killed again: 40, OVER its bound of 30",
    ]
    assert paid_lines([CLEAN]) == [
        "credits paid twice: 0 (in 1 scenario that counts them; none beyond the documented repayments)"
    ]


def test_a_repayment_the_readme_does_not_document_is_refused():
    with pytest.raises(ValueError, match="not a repayment the docs document: 'a retry'; known: in flight at"):
        Repaid("a retry", 10, 10)
