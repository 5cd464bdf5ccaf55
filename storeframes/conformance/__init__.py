"""The live conformance kit: the first token holder checks storeframes against the real service in one command.

Everything storeframes knows of the service comes from its reference documentation and what
public clients show, and the suite runs against the sandbox, which shares those assumptions.
The kit sends a fixed, budget-capped probe of every endpoint on both stores through the ordinary
client (:mod:`.probes`), compares every answer with the forms storeframes knows (:mod:`.forms`,
:mod:`.reading`), and writes what matched and what differed, the matching ``sf.sandbox.Dialect``
and the cost (:mod:`.report`), with the scrubbed answers as vcrpy cassettes (:mod:`.scrub`).

>>> import storeframes as sf
>>> report = sf.conformance.run(out="conformance", budget=150)  # doctest: +SKIP
>>> [d.line() for _, d in report.differences]  # doctest: +SKIP
['unknown at $.result.<app_id>.metadata.badges: a member storeframes does not know (an array of 2)']
>>> sf.conformance.check("conformance").passed  # a saved report, read again by this version  # doctest: +SKIP
False

An outage is never "no difference": ``report.verdict`` is ``unreachable`` when no probe sent got
an answer, ``partial`` when some did not (``report.unanswered`` names each and why: refused, DNS,
TLS, timeout, dropped, cut short), else ``differs`` or ``as expected``.

>>> report.outage()  # doctest: +SKIP
'could not reach the service at https://gateway.example.com/api/public/store: none of the 2 probes sent got an answer (DNS)'

From the command line: ``storeframes conformance [--budget N] [--out DIR] [--device D ...]
[--country C] [--keyword K] [--app DEVICE=ID]``, ``storeframes conformance --against DIR`` and
``--baseline DIR`` for a weekly canary; exit status 3 when the service could not be reached, 4 when
some probes got no answer. Recording needs vcrpy (the ``conformance`` extra:
``pip install ".[conformance]"`` from a checkout).
"""

from __future__ import annotations

from .against import Check, check, load, new_since
from .kit import DEFAULT_BUDGET, run
from .reading import Exchange, Reading, read
from .report import ProbeReport, Report
from .shapes import Difference

__all__ = [
    "DEFAULT_BUDGET",
    "Check",
    "Difference",
    "Exchange",
    "ProbeReport",
    "Reading",
    "Report",
    "check",
    "load",
    "new_since",
    "read",
    "run",
]
