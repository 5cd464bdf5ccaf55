"""``storeframes conformance``: the live conformance kit from the command line (see :mod:`storeframes.conformance`).

Progress goes to stderr, one line per probe; the verdict and the report's place to stdout. Exit
status 0 when every answer is as storeframes expects, 1 when something differs (with
``--baseline``: something that did not differ then; with ``--against``: a difference this
version still has), 2 for bad input, refused before anything is sent.
"""

from __future__ import annotations

import argparse
import sys

from ..errors import ConfigurationError, InvalidParameterError, StoreframesError
from .printing import printable

__all__ = ["run_conformance"]


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
        return 0 if checked.passed else 1
    apps = dict(args.apps or [])
    try:
        report = conformance.run(
            out=args.out,
            budget=args.budget,
            devices=args.devices or ("iphone", "android"),
            country=args.country,
            keyword=args.keyword,
            apps=apps,
            progress=lambda line: print(printable(line), file=sys.stderr),
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
    print(printable(f"matching sandbox dialect: {report.as_json()['dialect']['code']}"))
    if report.leaks:
        for line in report.leaks:
            print(printable(f"a secret was found and the file deleted: {line}"))
        return 1
    if new is not None:
        for line in new:
            print(printable(line))
        print(f"{len(new)} difference(s) since the baseline" if new else "nothing differs from the baseline")
        return 1 if new else 0
    for probe, difference in found:
        print(printable(f"{probe}: {difference.line()}"))
    print(f"{len(found)} difference(s)" if found else "no difference: every answer is as storeframes expects")
    return 1 if found else 0
