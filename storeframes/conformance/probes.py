"""The kit's fixed probe of the service, sent through the ordinary client within a budget and recorded.

:func:`plan_probes` lays out the probe: a wrong token (401) and an app no store has (422),
both free if the service refuses them; then for each device a live search for the keyword,
whose top app (unless one is given) is the app of the metadata, changes (two days), metrics
(``app-power`` and ``ratings``) probes, the search with ads where the device has it and a day
of search history; last the benchmarks, whose one request (about 1,001 credits) a default
budget of 150 leaves out. As estimated, the rest costs 150 credits: 85 on iphone, 65 on android.

:func:`send_probes` sends them one by one through a :class:`~storeframes.Client` made with
the token and base URL the user gave (its rate window, retries and ledger, ``budget=``
included), each inside a vcrpy cassette that records every attempt scrubbed
(:mod:`.scrub`). A probe is sent only when its estimate, scaled by the worst ratio of charged to
estimated credits met so far, fits what is left of the budget; one that does not is skipped,
and says why. A probe that fails (a refusal, a shape storeframes cannot read, a transport
failure) is kept with what came, and the next one is sent; but once the first
:data:`UNREACHABLE_AFTER` probes sent got no answer at all (connection refused, DNS, TLS, timeouts),
the rest are skipped, each saying so, rather than each waiting out every retry. A probe whose
cassette an earlier run left in the folder (stopped half-way, or run earlier the same day), for the same request and
ending as expected, is read from it rather than paid for again; its credits count against the budget,
and so does the estimate of a request a killed run had out (it leaves a ``.sending`` mark behind).
"""

from __future__ import annotations

import contextlib
import uuid
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

from .. import catalog
from ..errors import ApiError, BudgetExceededError, StoreframesError
from ..fetch.pipeline import FRAMES
from ..json_bodies import parse_answer
from .reading import Exchange, Reading, read, response_of
from .report import ProbeReport
from .scrub import Scrubber

if TYPE_CHECKING:
    from ..client import Client

__all__ = [
    "ABSENT_APPS",
    "DEFAULT_KEYWORD",
    "WRONG_TOKEN",
    "Probe",
    "exchanges_of",
    "plan_probes",
    "send_probes",
]

DEFAULT_KEYWORD = "photo editor"
"""The keyword probed unless another is given: common in both stores."""

ABSENT_APPS = {"ios": "1", "android": "com.example.storeframes.absent"}
"""An app id of each store that no app has: the probe of a 422."""

WRONG_TOKEN = "storeframes-conformance-wrong-token"
"""The token of the 401 probe: no account's."""

_METRICS = "app-power,ratings"


@dataclass(frozen=True)
class Probe:
    """One request of the probe: its name, endpoint and parameters, and the answer expected.

    ``needs_app``: the parameters take the device's app, found by the live search before it.
    """

    name: str
    endpoint: str
    device: str
    params: Mapping[str, str]
    expect: int = 200
    needs_app: bool = False
    wrong_token: bool = False

    def with_app(self, app: str) -> Probe:
        return Probe(self.name, self.endpoint, self.device, {**self.params, "apps": app}, self.expect, False)


def plan_probes(
    devices: Sequence[str], country: str, keyword: str, today: date, *, apps: Mapping[str, str] | None = None
) -> list[Probe]:
    """The probes, in the order they are sent (see the module's docstring)."""
    yesterday = today - timedelta(days=1)
    first = devices[0]
    absent = {**_at(first, country), "apps": ABSENT_APPS["android" if first == "android" else "ios"]}
    plan = [
        Probe(f"{first} wrong token", "search", first, _at(first, country, keyword=keyword), 401, wrong_token=True),
        Probe(f"{first} app not in the store", "metadata", first, absent, 422),
    ]
    for device in devices:
        at = _at(device, country)
        app = (apps or {}).get(device)
        app_params = {**at, "apps": app} if app else at
        plan.append(Probe(f"{device} search", "search", device, {**at, "keyword": keyword}))
        plan.append(Probe(f"{device} metadata", "metadata", device, app_params, needs_app=not app))
        days = {"start_date": (yesterday - timedelta(days=1)).isoformat(), "end_date": yesterday.isoformat()}
        plan.append(Probe(f"{device} changes", "changes", device, {**app_params, **days}, needs_app=not app))
        plan.append(
            Probe(f"{device} metrics", "metrics", device, {**app_params, "metrics": _METRICS}, needs_app=not app)
        )
        if device in catalog.ENDPOINTS["search_ads"].devices:
            plan.append(Probe(f"{device} search_ads", "search_ads", device, {**at, "keyword": keyword}))
        day = {"start_date": yesterday.isoformat(), "end_date": yesterday.isoformat()}
        plan.append(Probe(f"{device} search_history", "search_history", device, {**at, "keyword": keyword, **day}))
    for device in devices:
        if device in catalog.ENDPOINTS["benchmarks"].devices:
            plan.append(Probe(f"{device} benchmarks", "benchmarks", device, _at(device, country)))
    return plan


def _at(device: str, country: str, **more: str) -> dict[str, str]:
    return {"country": country, "device": device, **more}


def _reported(probe: Probe, outcome: str, estimate: int | None = None, **more: Any) -> ProbeReport:
    return ProbeReport(
        probe.name, probe.endpoint, probe.device, dict(probe.params), probe.expect, outcome, estimate, **more
    )


def _settle(sent: ProbeReport) -> None:
    """The outcome the answers say: a probe the client did not raise for may still have been refused (an
    unavailable app is the client's to handle), and one with no exchange recorded got no answer."""
    if sent.outcome == "answered" and sent.readings and sent.readings[-1][1].status != 200:
        sent.outcome = "refused"
    if sent.outcome == "answered" and not sent.readings:
        sent.outcome = "failed"


def exchanges_of(path: Path) -> list[Exchange]:
    """The exchanges of a cassette file the kit wrote, in order (read with vcrpy's own reader)."""
    from vcr.serialize import deserialize
    from vcr.serializers import yamlserializer

    requests, responses = deserialize(path.read_text(encoding="utf-8"), yamlserializer)
    return _exchanges(requests, responses)


def _exchanges(requests: Sequence[Any], responses: Sequence[Any]) -> list[Exchange]:
    """The recorded (scrubbed) exchanges of a cassette, in order."""
    found = []
    by_path = {catalog.API_PREFIX + ep.path: name for name, ep in catalog.ENDPOINTS.items()}
    for request, response in zip(requests, responses, strict=True):
        parts = urlsplit(request.uri)
        endpoint = by_path.get(parts.path)
        if endpoint is None:
            continue
        body = response.get("body", {}).get("string", b"")
        headers = {k: ", ".join(v) if isinstance(v, list) else str(v) for k, v in response.get("headers", {}).items()}
        found.append(
            Exchange(
                endpoint,
                dict(parse_qsl(parts.query, keep_blank_values=True)),
                int(response["status"]["code"]),
                headers,
                body.encode() if isinstance(body, str) else bytes(body),
            )
        )
    return found


def _first_app(sent: ProbeReport) -> str | None:
    """The top app of a live search's answer, read as ``search_frame`` reads it."""
    for exchange, _ in sent.readings:
        if exchange.status != 200:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                frame = FRAMES["search_frame"].build([response_of(exchange, parse_answer(exchange.body))])[0]
            except (StoreframesError, ValueError, KeyError, TypeError, AttributeError):
                continue
        if frame.height:
            return str(frame.sort("rank")["app_id"][0])
    return None


def send_probes(
    probes: Sequence[Probe],
    *,
    client: Client,
    wrong_client: Callable[[], Client],
    budget: int,
    out: Path,
    scrubber: Scrubber,
    progress: Callable[[str], None] | None = None,
) -> list[ProbeReport]:
    """Send ``probes`` in order (see the module's docstring); each probe's exchanges go to ``out/cassettes``."""
    import vcr

    recorder = vcr.VCR(
        record_mode="all",
        match_on=["method", "path", "query"],
        filter_headers=scrubber.filtered_headers,
        before_record_request=scrubber.request,
        before_record_response=scrubber.response,
        decode_compressed_response=True,
    )
    folder = out / "cassettes"
    folder.mkdir(parents=True, exist_ok=True)
    run = uuid.uuid4().hex[:8]
    found_apps: dict[str, str] = {}
    done: list[ProbeReport] = []
    reused = outstanding(folder)  # credits of the answers an earlier run kept here, and of those it had out
    ratio = 1.0  # the worst charged / estimated met so far
    for probe in probes:
        silent = _silent(done)
        if silent:
            done.append(_reported(probe, "skipped", reason=silent))
            _say(progress, done[-1])
            continue
        if probe.needs_app:
            app = found_apps.get(probe.device)
            if app is None:
                done.append(
                    _reported(probe, "skipped", reason=f"no app: the {probe.device} search found none to probe")
                )
                _say(progress, done[-1])
                continue
            probe = probe.with_app(app)
        estimate = _estimate(client, probe)
        name = probe.name.replace(" ", "-") + ".yaml"
        earlier = _reusable(out / "cassettes" / name, probe)
        if earlier is not None:
            outcome = "answered" if probe.expect == 200 else "refused"
            sent = _reported(
                probe, outcome, estimate, cost=earlier[1], cassette=f"cassettes/{name}", readings=earlier[0]
            )
            sent.reused = True
            reused += sent.cost
            _found_app(sent, found_apps)
            done.append(sent)
            _say(progress, sent)
            continue
        left = budget - reused - client.spent
        if estimate is not None and probe.expect == 200 and estimate * ratio > left:
            reason = f"needs about {round(estimate * ratio):,} credits, {left:,} left of the budget of {budget:,}"
            done.append(_reported(probe, "skipped", estimate, reason=reason))
            _say(progress, done[-1])
            continue
        before = client.spent
        sent = _reported(probe, "answered", estimate, cassette=f"cassettes/{name}")
        marker = folder / f"{name}.{run}{SENDING}"  # a kill before the cassette is written leaves it behind
        marker.write_text(str(estimate or 0))
        with recorder.use_cassette(str(folder / name)) as cassette:
            _send(probe, client, wrong_client, sent, scrubber)
        marker.unlink()
        sent.readings = [(x, read(x)) for x in _exchanges(cassette.requests, cassette.responses)]
        if not sent.readings:  # refused before sending (the client's own budget): vcrpy writes no cassette
            sent.cassette = None
        _settle(sent)
        sent.cost = client.spent - before
        if estimate and sent.cost > estimate:
            ratio = max(ratio, sent.cost / estimate)
        _found_app(sent, found_apps)
        done.append(sent)
        _say(progress, sent)
    return done


UNREACHABLE_AFTER = 2
"""Probes in a row that got no answer, with none answered before, after which the rest are not sent."""


def _silent(done: Sequence[ProbeReport]) -> str | None:
    """Why no more probes are sent: the first ones sent all got no answer (the service cannot be reached, and
    each probe would wait out every retry), or None."""
    sent = [p for p in done if p.outcome != "skipped" and not p.reused]
    if len(sent) < UNREACHABLE_AFTER or any(p.no_answer is None for p in sent):
        return None
    why = ", ".join(sorted({p.no_answer or "" for p in sent}))
    return f"the {len(sent)} probes sent before it got no answer ({why}): the service is not reachable"


SENDING = ".sending"
"""The suffix of the file that marks a request out: left behind by a run killed before the answer was kept."""


def outstanding(folder: Path) -> int:
    """Credits the requests of stopped runs may have cost: each one's estimate (its answer was never kept)."""
    total = 0
    for marker in folder.glob(f"*{SENDING}"):
        with contextlib.suppress(OSError, ValueError):
            total += int(marker.read_text() or 0)
    return total


def _found_app(sent: ProbeReport, found_apps: dict[str, str]) -> None:
    if sent.endpoint == "search" and sent.outcome == "answered":
        app = _first_app(sent)
        if app is not None:
            found_apps.setdefault(sent.device, app)


def _reusable(path: Path, probe: Probe) -> tuple[list[tuple[Exchange, Reading]], int] | None:
    """The exchanges and credits of an earlier run's cassette of the same request that ended as expected, if any:
    a run that was stopped half-way (or one earlier the same day) is not paid for again."""
    if not path.is_file():
        return None
    try:
        exchanges = exchanges_of(path)
    except Exception:  # a cassette cut short by a kill, or not the kit's: sent again
        return None
    if not exchanges or not all(exchanges[-1].params.get(k) == v for k, v in probe.params.items()):
        return None
    readings = [(x, read(x)) for x in exchanges]
    if readings[-1][1].status != probe.expect:
        return None
    return readings, sum(r.cost or 0 for _, r in readings if r.status == 200)


def _estimate(client: Client, probe: Probe) -> int | None:
    try:
        return client.estimate(probe.endpoint, refresh="always", **probe.params)
    except StoreframesError:
        return None


def _send(
    probe: Probe, client: Client, wrong_client: Callable[[], Client], sent: ProbeReport, scrubber: Scrubber
) -> None:
    """One probe through the ordinary client; what it raised is kept on ``sent``, scrubbed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # what the answer holds is read from the recording, not from warnings
        try:
            with _client_for(probe, client, wrong_client) as sender:
                sender.get(probe.endpoint, refresh="always", **probe.params)
        except BudgetExceededError as exc:
            sent.outcome, sent.reason = "skipped", scrubber.text(str(exc))
        except ApiError as exc:
            sent.outcome, sent.raised = "refused", f"{type(exc).__name__}: {scrubber.text(str(exc))}"
        except StoreframesError as exc:
            sent.outcome, sent.raised = "failed", f"{type(exc).__name__}: {scrubber.text(str(exc))}"


@contextlib.contextmanager
def _client_for(probe: Probe, client: Client, wrong_client: Callable[[], Client]) -> Iterator[Client]:
    if not probe.wrong_token:
        yield client
        return
    with wrong_client() as other:
        yield other


def _say(progress: Callable[[str], None] | None, sent: ProbeReport) -> None:
    if progress is None:
        return
    what = sent.reason if sent.outcome == "skipped" else (sent.raised or "")
    cost = f"{sent.cost:,} credits" if sent.outcome != "skipped" else "not sent"
    if sent.reused:
        cost = f"kept from an earlier run ({sent.cost:,} credits then)"
    progress(f"{sent.name}: {sent.outcome}, {cost}" + (f" ({what[:160]})" if what else ""))
