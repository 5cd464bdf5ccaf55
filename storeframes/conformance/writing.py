"""The kit's report in Markdown: the verdict first, then the differences, the probes, costs, limits and refusals."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..texts import markdown_code, markdown_text
from .forms import DIALECT_POINTS
from .report import Report

__all__ = ["markdown"]


class _Md(str):
    """Markdown made here, put into a cell as it is; any other value is escaped there."""


def _code(value: Any) -> _Md:
    """A name or value from the service, shown as it came in a code span (nothing in it is read as Markdown)."""
    return _Md(markdown_code(value))


def _cell(value: Any) -> str:
    """A table's cell: Markdown made here as it is, anything else as escaped text on one line (the service's words
    in a message, a name the user gave): no HTML, link or image is read in it and no pipe ends the cell."""
    if isinstance(value, _Md):
        return str(value)
    return markdown_text(value)


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return [*lines, ""]


def _request(endpoint: str, params: dict[str, str]) -> _Md:
    """A probe's request: its endpoint as code, its parameters as escaped text."""
    return _Md(f"{markdown_code(endpoint)} {markdown_text(' '.join(f'{k}={v}' for k, v in params.items()))}")


def _what(detail: str, example: str) -> _Md:
    """A difference in words (escaped: a message of the service's may be quoted in it), and the value met as code."""
    return _Md(markdown_text(detail) + (f", e.g. {markdown_code(example)}" if example else ""))


def markdown(report: Report) -> str:
    """The report for people: the verdict, the differences, each probe, costs, rate-limit headers, refusals, secrets."""
    _, notes = report.dialect
    differences = report.differences
    verdict = _verdict(report)
    lines = [
        "# storeframes conformance report",
        "",
        f"storeframes {report.version} against the service, {markdown_text(report.made)}: country "
        f"{markdown_code(report.country, table=False)}, devices {markdown_text(', '.join(report.devices))}, "
        f'keyword "{markdown_text(report.keyword)}".',
        "",
        verdict,
        "",
        f"- **Credits:** {report.spent:,} spent of a budget of {report.budget:,} "
        f"(the catalog estimated {report.estimated:,} for the probes sent)"
        + (
            f"; {report.reused:,} more were spent by an earlier run into this folder, whose answers were read again"
            if report.reused
            else ""
        )
        + (
            f"; requests a stopped run had out may have cost up to {report.stopped:,} more (counted against the budget)"
            if report.stopped
            else ""
        )
        + ".",
        f"- **Matching sandbox dialect:** {_dialect(report, notes)}",
        f"- **Forms met:** {_forms(report)}",
        f"- **Not seen:** {_empty(report)}",
        "",
    ]
    if differences:
        lines += ["## Differences", ""]
        found = [(probe, d.kind, _code(d.where), _what(d.detail, d.example), d.count) for probe, d in differences]
        lines += _table(("probe", "kind", "where", "what", "times"), found)
    lines += _unanswered(report)
    lines += ["## Probes", ""]
    rows: list[tuple[Any, ...]] = []
    for p in report.probes:
        last = p.readings[-1][1] if p.readings else None
        frames = ", ".join(f"{k} {v:,}" for k, v in last.frames.items()) if last is not None else ""
        refused = f"read as {last.error} ({last.code or 'no code'})" if last is not None and last.error else ""
        what = p.reason or p.raised or refused or frames
        status = " ".join(str(r.status) for _, r in p.readings)
        outcome = f"{p.outcome} (kept from an earlier run)" if p.reused else p.outcome
        rows.append((p.name, _request(p.endpoint, p.params), outcome, status, p.cost, p.estimate, what))
    lines += _table(("probe", "request", "outcome", "status", "credits", "estimate", "frames (rows), or why"), rows)
    lines += _costs(report)
    lines += _limits(report)
    lines += _refusals(report)
    lines += _secrets(report)
    lines += [
        "## Sending this report",
        "",
        "Send this folder (this report, `conformance.json` and `cassettes/`) with an issue. "
        "`storeframes conformance --against conformance.json` reads its answers again with any version of "
        "storeframes and fails, naming each, while a difference remains.",
        "",
    ]
    return "\n".join(lines)


def _verdict(report: Report) -> str:
    """The verdict's paragraph: an outage first (the base URL is not written: see the secrets' section)."""
    differences = report.differences
    many = f"{len(differences)} difference{'s' if len(differences) != 1 else ''}"
    if report.unreachable:
        sent = len(report.sent)
        return (
            f"**Could not reach the service**: none of the {sent} probe{'s' if sent != 1 else ''} sent got an "
            f"answer ({', '.join(sorted({why for _, why in report.unanswered}))}; listed below), so nothing was "
            "compared. Check the base URL, DNS, a proxy or the service's status, and run the kit again."
        )
    if report.unanswered:
        came = f"{many} in the answers that came (listed below)" if differences else "no difference in those that came"
        return (
            f"**{len(report.unanswered)} of the {len(report.sent)} probes sent got no answer** (listed below): what "
            f"they ask was not compared, so this is not a full check; {came}."
        )
    if differences:
        return f"**{many}** between the service and what storeframes {report.version} knows (listed below)."
    return (
        f"**No difference**: every answer came in a form storeframes {report.version} knows, and read into its frames."
    )


_WHY = {
    "refused": "the connection was refused: nothing listens at that address and port",
    "DNS": "the host name did not resolve (a typo, DNS)",
    "TLS": "the TLS handshake failed (a proxy, a certificate, http at an https address)",
    "timeout": "no answer within the timeout, on every attempt",
    "dropped": "the connection closed before an answer",
    "cut short": "the answer was cut short",
}


def _unanswered(report: Report) -> list[str]:
    """The probes sent that got no answer, each with why, as the client said it after its retries."""
    rows = [
        (p.name, _request(p.endpoint, p.params), _WHY.get(p.no_answer or "", p.no_answer), p.raised)
        for p in report.probes
        if p.no_answer is not None
    ]
    if not rows:
        return []
    return ["## Probes without an answer", "", *_table(("probe", "request", "why", "the client said"), rows)]


def _dialect(report: Report, notes: Sequence[str]) -> str:
    if not any(r.status == 200 for p in report.probes for _, r in p.readings):
        return "none: no answer came"
    code = markdown_code(report.dialect_code, table=False)
    return code + (f" ({markdown_text('; '.join(notes))})" if notes else "")


def _empty(report: Report) -> str:
    """The probes answered with nothing in them: the form of their items was not seen."""
    if not any(r.status == 200 for p in report.probes for _, r in p.readings):
        return "everything: no answer came"
    empty = [
        p.name
        for p in report.probes
        if p.outcome == "answered" and p.readings and not any(p.readings[-1][1].frames.values())
    ]
    if not empty:
        return "nothing: every answer held items"
    return f"{markdown_text(', '.join(empty))} answered with nothing in them, so the form of their items was not seen"


def _forms(report: Report) -> str:
    met: dict[str, set[str]] = {}
    for p in report.probes:
        for _, reading in p.readings:
            for point, names in reading.forms.items():
                met.setdefault(point, set()).update(str(n) for n in names)
    order = {name: i for i, name in enumerate(DIALECT_POINTS)}
    shown = sorted(met.items(), key=lambda item: (order.get(item[0], len(order)), item[0]))
    return markdown_text("; ".join(f"{point} {' and '.join(sorted(names))}" for point, names in shown)) or "none"


def _costs(report: Report) -> list[str]:
    rows = []
    for p in report.probes:
        for _, reading in p.readings:
            if reading.status != 200 and not reading.cost:
                continue
            estimate = reading.estimate
            verdict = (
                "as estimated"
                if reading.cost == estimate
                else "below the estimate"
                if estimate is not None and (reading.cost or 0) < estimate
                else "ABOVE the estimate"
                if estimate is not None
                else "no estimate"
            )
            rows.append((p.name, reading.cost, reading.max_credit_cost, estimate, verdict))
    if not rows:
        return []
    return [
        "## Costs against the catalog's estimates",
        "",
        *_table(("probe", "cost", "max_credit_cost", "estimate", ""), rows),
    ]


def _limits(report: Report) -> list[str]:
    rows = [
        (p.name, reading.status, _code(name), _code(value))
        for p in report.probes
        for _, reading in p.readings
        for name, value in reading.limits.items()
    ]
    lines = ["## What the service said about rate limits", ""]
    if not rows:
        return [*lines, "No answer carried a header about rate limits, retries or credits.", ""]
    return [*lines, *_table(("probe", "status", "header", "value"), rows)]


def _refusals(report: Report) -> list[str]:
    rows = [
        (
            p.name,
            reading.status,
            _code(reading.code),
            _code(reading.message),
            reading.error_form or "none known",
            reading.error,
        )
        for p in report.probes
        for _, reading in p.readings
        if reading.status != 200
    ]
    if not rows:
        return []
    header = ("probe", "status", "code", "message", "error body", "storeframes raises")
    return ["## Refusals", "", *_table(header, rows)]


def _secrets(report: Report) -> list[str]:
    lines = ["## Secrets", ""]
    if report.leaks:
        return [*lines, "Files that held a secret were deleted: " + markdown_text("; ".join(report.leaks)), ""]
    return [
        *lines,
        f"No file written here holds the token, the wrong token of the 401 probe or the base URL's user name or "
        f"password: after scrubbing, the {report.files_checked} files written were read back and searched for each "
        "of them and for anything shaped like a token (this report is searched as it is written). Requests are "
        "recorded at `https://service.example`: the base URL is not kept anywhere here.",
        "",
    ]
