"""``--against``: a saved report read again by this version of storeframes, and ``--baseline``: a run compared with one.

:func:`load` reads a report folder (or its ``conformance.json``) and the cassettes beside
it, and reads every recorded exchange again (:func:`~.reading.read`), so the report's
differences are this version's. :func:`check` says what remains: a report whose every
difference is gone passes; one with a difference left fails and names it. A report sent by
a user is therefore a test in one step: put its folder under ``cassettes/conformance/`` and
the suite runs :func:`check` on it.

:func:`new_since` compares a fresh run with an earlier one (``--baseline``): the differences
the earlier run did not have, and the points of the dialect that moved, are what a weekly
canary fails on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..errors import ConfigurationError
from .probes import exchanges_of
from .reading import read
from .report import FORMAT, ProbeReport, Report
from .shapes import Difference

__all__ = ["Check", "check", "load", "new_since"]


def _summary_path(path: str | Path) -> Path:
    where = Path(path)
    summary = where / "conformance.json" if where.is_dir() else where
    if not summary.is_file():
        raise ConfigurationError(
            f"no conformance report at {where}: expected a folder holding conformance.json, or that file"
        )
    return summary


def _saved(summary: Path) -> dict[str, Any]:
    try:
        saved = orjson.loads(summary.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise ConfigurationError(f"{summary} is not a conformance report: {exc}") from None
    if not isinstance(saved, dict) or saved.get("format") != FORMAT or not isinstance(saved.get("probes"), list):
        raise ConfigurationError(f"{summary} is not a conformance report of format {FORMAT}")
    return saved


def load(path: str | Path) -> Report:
    """The report at ``path`` (its folder or ``conformance.json``) with every exchange read again by this version.

    >>> report = sf.conformance.load("conformance")  # doctest: +SKIP
    >>> report  # doctest: +SKIP
    Report(storeframes 0.1.0, 2026-11-26 18:48 UTC: 15 probes, 11 answered, 1 difference, 140 of 150 credits)
    """
    summary = _summary_path(path)
    saved = _saved(summary)
    probes = []
    for p in saved["probes"]:
        readings = []
        if p.get("cassette"):
            cassette = summary.parent / p["cassette"]
            if not cassette.is_file():
                raise ConfigurationError(f"the report names {p['cassette']}, which is not beside it ({cassette})")
            readings = [(x, read(x)) for x in exchanges_of(cassette)]
        probes.append(
            ProbeReport(
                p["name"],
                p["endpoint"],
                p["device"],
                dict(p["params"]),
                int(p["expect"]),
                p["outcome"],
                p.get("estimate"),
                int(p.get("cost") or 0),
                p.get("reason", ""),
                p.get("raised"),
                p.get("cassette"),
                readings,
                bool(p.get("reused")),
            )
        )
    report = Report(
        saved.get("made", ""),
        saved.get("country", ""),
        list(saved.get("devices", [])),
        saved.get("keyword", ""),
        int(saved.get("budget") or 0),
        int(saved.get("spent") or 0),
        probes,
        files_checked=int(saved.get("secrets", {}).get("files_checked") or 0),
    )
    return report


@dataclass
class Check:
    """What this version makes of a saved report: the differences that remain, those gone, and the dialect then and now."""

    remaining: list[tuple[str, Difference]]
    gone: list[tuple[str, dict[str, Any]]]
    dialect_then: dict[str, Any] = field(default_factory=dict)
    dialect_now: dict[str, Any] = field(default_factory=dict)
    made_by: str = ""
    unanswered: list[tuple[str, str]] = field(default_factory=list)
    """The report's probes that got no answer, and why: nothing of them could be read again."""
    unreachable: bool = False
    """The report's run could not reach the service: it holds no answer at all."""

    @property
    def passed(self) -> bool:
        return not self.remaining

    def lines(self) -> list[str]:
        """The check in words: one line per difference that remains, one per probe without an answer, a verdict."""
        silent = [f"{probe}: no answer ({why}) in the report, nothing to read again" for probe, why in self.unanswered]
        if self.unreachable:
            return [*silent, "the report's run could not reach the service: it holds no answer to read again"]
        if self.passed:
            gone = f"; {len(self.gone)} difference(s) it reported are gone" if self.gone else ""
            whole = f" in the answers it holds ({len(self.unanswered)} probe(s) got none)" if self.unanswered else ""
            return [
                *silent,
                f"the report (storeframes {self.made_by}) holds no difference this version does not handle{whole}{gone}",
            ]
        lines = [f"{probe}: {d.line()}" for probe, d in self.remaining]
        return [
            *silent,
            *lines,
            f"{len(self.remaining)} difference(s) remain (the report was made by storeframes {self.made_by})",
        ]


def check(path: str | Path) -> Check:
    """Read the report at ``path`` again with this version of storeframes (see the module's docstring).

    >>> checked = sf.conformance.check("conformance")  # doctest: +SKIP
    >>> checked.passed, checked.lines()  # doctest: +SKIP
    (False, ['iphone metadata: unknown at $.result.<app_id>.metadata.badges: ...', '1 difference(s) remain ...'])
    """
    summary = _summary_path(path)
    saved = _saved(summary)
    report = load(summary)
    now = report.differences
    keys = {(probe, d.key()) for probe, d in now}
    gone = [
        (p["name"], d)
        for p in saved["probes"]
        for d in p.get("differences", [])
        if (p["name"], (d["kind"], d["where"], d["detail"])) not in keys
    ]
    return Check(
        now,
        gone,
        saved.get("dialect", {}).get("fields", {}),
        report.dialect[0],
        saved.get("storeframes", ""),
        report.unanswered,
        report.unreachable,
    )


def new_since(report: Report, baseline: str | Path) -> list[str]:
    """What ``report`` has that the run saved at ``baseline`` had not: new differences and dialect points that moved.

    >>> sf.conformance.new_since(report, "runs/first")  # doctest: +SKIP
    ["the dialect's search was 'value', it is 'apps'"]
    """
    earlier = load(baseline)
    before = {(probe, d.key()) for probe, d in earlier.differences}
    lines = [f"{probe}: {d.line()}" for probe, d in report.differences if (probe, d.key()) not in before]
    then, now = earlier.dialect[0], report.dialect[0]
    for point in sorted(then.keys() | now.keys()):
        if point in then and point in now and then[point] != now[point]:
            lines.append(f"the dialect's {point} was {then[point]!r}, it is {now[point]!r}")
    return lines
