"""``storeframes conformance``: the live conformance kit from the command line (see :mod:`storeframes.conformance`).

Progress goes to stderr, one line per probe; the verdict and the report's place to stdout. Exit
status 0 when every probe sent got an answer and every answer is as storeframes expects, 1 when
something differs (with ``--baseline``: something that did not differ then; with ``--against``: a
difference this version still has; a saved report without answers gives 3 or 4 as below), 2 for bad input, refused before anything is sent, 3 when the
service could not be reached (no probe sent got an answer: connection refused, DNS, TLS, timeouts),
with or without ``--baseline``, and 4 when some probes got no answer and nothing (new) differs in
the answers that came: the check is not whole. An outage is never "no difference".
"""

from __future__ import annotations

import argparse
import sys

from ..errors import ConfigurationError, InvalidParameterError, StoreframesError
from .printing import printable

__all__ = ["UNANSWERED", "UNREACHABLE", "run_conformance"]

UNREACHABLE = 3
"""The exit status when no probe sent got an answer."""

UNANSWERED = 4
"""The exit status when some probes got no answer and nothing (new) differs in the answers that came."""


def _err(text: str) -> None:
    print(printable(f"storeframes conformance: {text}"), file=sys.stderr)


def run_conformance(args: argparse.Namespace) -> int:
    """The ``conformance`` command; the exit status."""
    from .. import conformance

    if args.against is not None:
        if args.baseline is not None:
            _err("--against reads a saved report and sends nothing: it takes no --baseline")
            return 2
        try:
            checked = conformance.check(args.against)
        except (ConfigurationError, ImportError) as exc:
            _err(str(exc))
            return 2
        for line in checked.lines():
            print(printable(line))
        if not checked.passed:
            return 1
        return UNREACHABLE if checked.unreachable else UNANSWERED if checked.unanswered else 0
    apps = dict(args.apps or [])
    chosen = args.chosen_workspace
    try:
        service = {} if chosen is None else {"api_key": chosen.token(), "base_url": chosen.address()}
        report = conformance.run(
            **service,
            out=args.out,
            budget=args.budget,
            devices=args.devices or ("iphone", "android"),
            country=args.country,
            keyword=args.keyword,
            apps=apps,
            progress=lambda line: print(printable(line), file=sys.stderr),
            timeout=args.timeout,
            max_tries=args.tries,
        )
        new = conformance.new_since(report, args.baseline) if args.baseline is not None else None
    except (InvalidParameterError, ConfigurationError) as exc:
        _err(str(exc))
        return 2
    except StoreframesError as exc:
        _err(str(exc))
        return 1
    found = report.differences
    print(printable(f"spent {report.spent:,} of {report.budget:,} credits; the report is in {args.out}/report.md"))
    if any(reading.status == 200 for probe in report.probes for _, reading in probe.readings):
        print(printable(f"matching sandbox dialect: {report.as_json()['dialect']['code']}"))
    else:
        print("matching sandbox dialect: none (no answer came)")
    if report.leaks:
        for line in report.leaks:
            print(printable(f"a secret was found and the file deleted: {line}"))
        return 1
    for probe, why in report.unanswered:
        print(printable(f"{probe}: no answer ({why})"))
    outage = report.outage()
    if report.unreachable:
        print(printable(outage or ""))
        return UNREACHABLE
    if new is not None:
        return _verdict(new, "since the baseline", outage, "nothing differs from the baseline")
    lines = [f"{probe}: {difference.line()}" for probe, difference in found]
    return _verdict(lines, "", outage, "no difference: every answer is as storeframes expects")


def _verdict(lines: list[str], counted: str, outage: str | None, same: str) -> int:
    """Print the differences (and how many, ``counted`` against what), or that some probes got no answer,
    or ``same``; the exit status: 1 a difference, :data:`UNANSWERED` no answer to some, 0 none of both."""
    for line in lines:
        print(printable(line))
    if lines:
        print(" ".join(filter(None, [f"{len(lines)} difference(s)", counted])))
        return 1
    if outage:
        where = "nothing differs from the baseline" if counted else "no difference"
        print(printable(f"{outage}; {where} in the answers that came"))
        return UNANSWERED
    print(same)
    return 0
