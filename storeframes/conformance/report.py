"""The kit's report: what matched, what differed, the matching sandbox dialect, the cost; as Markdown and JSON.

A :class:`Report` holds each probe (:class:`ProbeReport`) with the readings of its exchanges
and every difference found, judged by :func:`judge`: the differences of the answer's form
(:mod:`.reading`), plus a refusal of another kind than the probe expects and a charge above
the catalog's estimate. :func:`dialect_of` turns the forms met into the fields of
``sf.sandbox.Dialect``. :meth:`Report.as_json` is for machines and for ``--against``
(:mod:`.against`), which reads the same exchanges again; :func:`.writing.markdown` is for people.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._version import __version__
from ..wire.faults import no_answer_kind
from .forms import DIALECT_POINTS, store_of
from .reading import Exchange, Reading
from .shapes import Difference

__all__ = ["EXPECTED_ERRORS", "ProbeReport", "Report", "dialect_code", "dialect_of", "judge"]

FORMAT = 1
"""The version of the JSON summary's layout."""

EXPECTED_ERRORS = {401: ("AuthenticationError",), 422: ("AppNotAvailableError", "ServiceValidationError")}
"""The exceptions storeframes should raise for the refusals the probe asks for."""


def judge(expect: int, exchange: Exchange, reading: Reading, *, last: bool) -> list[Difference]:
    """Every difference of one exchange: its form's, an unexpected status (on the probe's last exchange), a charge
    above the estimate or for a refusal."""
    found = list(reading.differences)
    where = f"{exchange.endpoint} {exchange.params.get('device', '')}".strip()
    if last and reading.status != expect:
        if expect == 200:
            detail = f"expected an answer, got status {reading.status} ({reading.error}: {reading.code or 'no code'})"
        else:
            detail = f"expected status {expect}, got {reading.status}"
        found.append(Difference("status", where, detail))
    elif last and expect != 200 and reading.error not in EXPECTED_ERRORS.get(expect, ()):
        wanted = " or ".join(EXPECTED_ERRORS.get(expect, ("an error",)))
        found.append(Difference("status", where, f"storeframes raises {reading.error} for it, expected {wanted}"))
    cost = reading.cost or 0
    if reading.status != 200 and cost:
        found.append(Difference("cost", where, f"a refusal (status {reading.status}) was charged {cost:,} credits"))
    elif reading.status == 200 and reading.estimate is not None:
        if cost > reading.estimate:
            found.append(
                Difference("cost", where, f"charged {cost:,} credits, the catalog estimates {reading.estimate:,}")
            )
        top = reading.max_credit_cost
        if top is not None and top > reading.estimate:
            found.append(
                Difference(
                    "cost", where, f"max_credit_cost {top:,} above the catalog's estimate of {reading.estimate:,}"
                )
            )
    return found


@dataclass
class ProbeReport:
    """One probe: what was sent, what became of it, and each exchange read.

    ``outcome``: ``answered`` (a successful answer), ``refused`` (an error answer), ``failed``
    (no answer storeframes could read, or none at all: :attr:`no_answer` says why) or ``skipped``
    (not sent: ``reason`` says why). ``raised``: the exception the ordinary client raised, by class name, with its
    message (scrubbed). ``cassette``: the file its exchanges are in, relative to the output folder;
    ``reused``: they were an earlier run's, kept there (``cost`` is what that run was charged).
    """

    name: str
    endpoint: str
    device: str
    params: dict[str, str]
    expect: int
    outcome: str
    estimate: int | None = None
    cost: int = 0
    reason: str = ""
    raised: str | None = None
    cassette: str | None = None
    readings: list[tuple[Exchange, Reading]] = field(default_factory=list, repr=False)
    reused: bool = False

    @property
    def no_answer(self) -> str | None:
        """Why a probe sent got no answer at all, after the client's retries: ``refused`` (nothing listens at
        the address), ``DNS`` (the host name did not resolve), ``TLS`` (the handshake failed), ``timeout``,
        ``dropped`` (the connection closed before an answer) or ``cut short``; None when an answer came (or the
        probe was not sent)."""
        raised = self.raised or ""
        if self.outcome != "failed" or self.readings or not raised.startswith("TransportError"):
            return None
        return no_answer_kind(raised) or "cut short"

    @property
    def differences(self) -> list[Difference]:
        found: list[Difference] = []
        for i, (exchange, reading) in enumerate(self.readings):
            found += judge(self.expect, exchange, reading, last=i == len(self.readings) - 1)
        return found

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "endpoint": self.endpoint,
            "device": self.device,
            "params": self.params,
            "expect": self.expect,
            "outcome": self.outcome,
            "estimate": self.estimate,
            "cost": self.cost,
            "reason": self.reason,
            "raised": self.raised,
            "cassette": self.cassette,
            "reused": self.reused,
            "no_answer": self.no_answer,
            "exchanges": [
                {
                    "status": reading.status,
                    "params": dict(exchange.params),
                    "cost": reading.cost,
                    "max_credit_cost": reading.max_credit_cost,
                    "estimate": reading.estimate,
                    "forms": reading.forms,
                    "frames": reading.frames,
                    "error": reading.error,
                    "code": reading.code,
                    "message": reading.message,
                    "error_form": reading.error_form,
                    "limits": reading.limits,
                    "notes": reading.notes,
                }
                for exchange, reading in self.readings
            ],
            "differences": [d.as_dict() for d in self.differences],
        }


def dialect_of(readings: Iterable[tuple[Exchange, Reading]]) -> tuple[dict[str, Any], list[str]]:
    """The fields of ``sf.sandbox.Dialect`` the forms met say, and what no dialect field can say.

    A point not met keeps the sandbox's default (it is not named); ``size`` is read per store:
    a number on iphone/ipad and an object on android is ``per_store``.
    """
    met: dict[str, set[Any]] = {}
    sizes: dict[str, set[str]] = {}
    for exchange, reading in readings:
        for point, names in reading.forms.items():
            if point == "size":
                sizes.setdefault(store_of(exchange.params.get("device", "iphone")), set()).update(names)
            elif point in DIALECT_POINTS:
                met.setdefault(point, set()).update(names)
    fields: dict[str, Any] = {}
    notes: list[str] = []
    for point, kinds in sorted(met.items()):
        if len(kinds) == 1:
            fields[point] = next(iter(kinds))
        else:
            notes.append(f"{point}: the answers took several forms ({', '.join(map(str, sorted(kinds, key=str)))})")
    ios, android = sizes.get("ios", set()), sizes.get("android", set())
    if len(ios) > 1 or len(android) > 1:
        notes.append("size: one store sent it in several forms")
    elif ios or android:
        pair = (next(iter(ios), None), next(iter(android), None))
        size = {
            ("number", "object"): "per_store",
            ("number", None): "per_store",
            (None, "object"): "per_store",
            ("number", "number"): "number",
            (None, "number"): "number",
            ("object", "object"): "object",
            ("object", None): "object",
        }.get(pair)
        if size is None:
            notes.append("size: an object on iphone/ipad and a number on android, which no dialect sends")
        else:
            fields["size"] = size
    return fields, notes


def dialect_code(fields: Mapping[str, Any]) -> str:
    """The Python text that builds the sandbox dialect of ``fields`` (defaults left out)."""
    from ..sandbox import Dialect

    known = {k: v for k, v in fields.items() if k in Dialect.__dataclass_fields__}
    return Dialect(**known).code()


@dataclass
class Report:
    """A run of the kit (or a saved one read again): when, what was probed, and what came (the service's address
    is not kept: a gateway's name is nobody else's business)."""

    made: str
    country: str
    devices: list[str]
    keyword: str
    budget: int
    spent: int
    probes: list[ProbeReport]
    files_checked: int = 0
    leaks: list[str] = field(default_factory=list)
    version: str = __version__
    stopped: int = 0
    """The most the requests a killed run into the same folder had out may have cost (their estimates)."""
    service: str = "the service's address"
    """The base URL probed, masked (user info and query): said in the verdict, never written to the report's files."""

    def __repr__(self) -> str:
        answered = sum(p.outcome == "answered" for p in self.probes)
        found = len(self.differences)
        return (
            f"Report(storeframes {self.version}, {self.made}: {len(self.probes)} probes, {answered} answered, "
            f"{found} difference{'s' if found != 1 else ''}, {self.spent:,} of {self.budget:,} credits)"
        )

    @property
    def differences(self) -> list[tuple[str, Difference]]:
        return [(p.name, d) for p in self.probes for d in p.differences]

    @property
    def sent(self) -> list[ProbeReport]:
        """The probes sent by this run (not skipped, not read from an earlier run's cassette)."""
        return [p for p in self.probes if p.outcome != "skipped" and not p.reused]

    @property
    def unanswered(self) -> list[tuple[str, str]]:
        """Each probe sent that got no answer, and why (see :attr:`ProbeReport.no_answer`)."""
        return [(p.name, p.no_answer) for p in self.probes if p.no_answer is not None]

    @property
    def unreachable(self) -> bool:
        """Whether the service could not be reached: probes were sent and not one got an answer."""
        sent = self.sent
        return bool(sent) and all(p.no_answer is not None for p in sent)

    @property
    def verdict(self) -> str:
        """``unreachable``, ``partial`` (some probes sent got no answer), ``differs`` or ``as expected``."""
        if self.unreachable:
            return "unreachable"
        if self.unanswered:
            return "partial"
        return "differs" if self.differences else "as expected"

    def outage(self) -> str | None:
        """The verdict on what did not answer, in one line; None when every probe sent got an answer.

        >>> report.outage()  # doctest: +SKIP
        'could not reach the service at http://127.0.0.1:9/api/public/store: none of the 2 probes sent got an answer (refused)'
        """
        unanswered = self.unanswered
        if not unanswered:
            return None
        kinds = ", ".join(sorted({kind for _, kind in unanswered}))
        if self.unreachable:
            sent = len(self.sent)
            return (
                f"could not reach the service at {self.service}: none of the {sent} probe{'s' if sent != 1 else ''} "
                f"sent got an answer ({kinds})"
            )
        return (
            f"{len(unanswered)} of the {len(self.sent)} probes sent got no answer ({kinds}): "
            "what they ask was not compared"
        )

    @property
    def dialect(self) -> tuple[dict[str, Any], list[str]]:
        return dialect_of(r for p in self.probes for r in p.readings if r[1].status == 200)

    @property
    def reused(self) -> int:
        """Credits of the answers an earlier, interrupted run left in the folder, read again rather than paid for."""
        return sum(p.cost for p in self.probes if p.reused)

    @property
    def dialect_code(self) -> str:
        """The Python text that builds the sandbox dialect the answers were in."""
        return dialect_code(self.dialect[0])

    @property
    def estimated(self) -> int:
        return sum(p.estimate or 0 for p in self.probes if p.outcome != "skipped" and p.expect == 200 and not p.reused)

    def as_json(self) -> dict[str, Any]:
        fields, notes = self.dialect
        return {
            "format": FORMAT,
            "storeframes": self.version,
            "made": self.made,
            "country": self.country,
            "devices": self.devices,
            "keyword": self.keyword,
            "budget": self.budget,
            "spent": self.spent,
            "reused": self.reused,
            "stopped": self.stopped,
            "estimated": self.estimated,
            "dialect": {"fields": fields, "code": self.dialect_code, "notes": notes},
            "differences": len(self.differences),
            "verdict": self.verdict,
            "unanswered": [{"probe": name, "why": why} for name, why in self.unanswered],
            "secrets": {"files_checked": self.files_checked, "found": self.leaks},
            "probes": [p.as_json() for p in self.probes],
        }
