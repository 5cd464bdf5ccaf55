"""Running the kit: check the arguments, send the probe, read every exchange, write the report, scan what was written.

Everything a user can get wrong is refused before anything is sent (the token, the base
URL, the budget, devices, country, keyword and apps, the output folder, vcrpy). The probe goes
through the ordinary client (:mod:`.probes`); each exchange is read by this version of
storeframes (:mod:`.reading`); the report is written as Markdown and JSON beside the cassettes,
and every file is then read back for the secrets of the run (:mod:`.scrub`): one that holds
any is deleted and named in the report.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from .. import catalog
from .._version import install_hint
from ..errors import ConfigurationError, InvalidParameterError
from ..wire.safety import Secret, check_base_url, clean_token, shown_url
from .probes import DEFAULT_KEYWORD, WRONG_TOKEN, outstanding, plan_probes, send_probes
from .report import Report
from .scrub import Scrubber, leaks
from .writing import markdown

__all__ = ["DEFAULT_BUDGET", "REPORT_FILES", "run"]

DEFAULT_BUDGET = 150
"""Credits the kit may spend unless told otherwise: every probe but the benchmarks (about 1,001 each)."""

REPORT_FILES = ("report.md", "conformance.json")
"""What the kit writes beside ``cassettes/``."""

_DEVICES = ("iphone", "ipad", "android")


def _need_vcr() -> None:
    try:
        import vcr  # noqa: F401
    except ImportError:
        raise ConfigurationError(
            f"the conformance kit records with vcrpy, which is not installed: {install_hint('conformance')}"
        ) from None


def _check(
    budget: Any, devices: Sequence[str], country: str, keyword: str, apps: Mapping[str, str], out: Path
) -> list[str]:
    if type(budget) is not int or budget < 0:
        raise InvalidParameterError("budget", budget, "a whole number of credits >= 0")
    if isinstance(devices, str) or not devices:
        raise InvalidParameterError("devices", devices, f"a list of one or more of {', '.join(_DEVICES)}")
    chosen = [str(d).strip().lower() for d in devices]
    for device in chosen:
        if device not in _DEVICES:
            raise InvalidParameterError("devices", device, f"one of {', '.join(_DEVICES)}")
    if len(set(chosen)) != len(chosen):
        raise InvalidParameterError("devices", list(devices), "each device once")
    for device in chosen:
        catalog.validate(catalog.ENDPOINTS["search"], {"keyword": keyword, "country": country, "device": device})
    for device, app in apps.items():
        if device not in chosen:
            raise InvalidParameterError("apps", f"{device}={app}", f"an app for a device probed ({', '.join(chosen)})")
        catalog.validate(catalog.ENDPOINTS["metadata"], {"apps": app, "country": country, "device": device})
        if "," in str(app):
            raise InvalidParameterError("apps", f"{device}={app}", "one app id per device")
    earlier = (out / "conformance.json").is_file() or (out / "cassettes").is_dir()
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not earlier)):
        raise InvalidParameterError(
            "out",
            str(out),
            "a folder that does not exist, is empty, or holds an earlier run of the kit (conformance.json, cassettes/)",
        )
    return chosen


def run(
    *,
    out: str | os.PathLike[str] = "conformance",
    budget: int = DEFAULT_BUDGET,
    devices: Sequence[str] = ("iphone", "android"),
    country: str = "us",
    keyword: str = DEFAULT_KEYWORD,
    apps: Mapping[str, str] | None = None,
    api_key: str | None = None,
    base_url: str | None = None,
    clock: Callable[[], datetime] | None = None,
    progress: Callable[[str], None] | None = None,
    timeout: float = 30.0,
    max_tries: int = 5,
) -> Report:
    """Probe the service, compare every answer with what storeframes knows, and write the report to ``out``.

    ``budget`` caps the credits spent (the benchmarks' 1,001 need ``budget=1200``); ``apps`` picks
    the app of a device (``{"iphone": "284882215"}``) instead of its search's top result. The
    token and base URL are those of :class:`~storeframes.Client` (``STOREFRAMES_API_KEY``,
    ``STOREFRAMES_BASE_URL``). ``progress`` is told each probe's outcome as it ends. ``timeout``
    (seconds for each network operation) and ``max_tries`` (attempts per request) are the client's.

    A service that could not be reached (connection refused, DNS, TLS, timeouts) is not "no
    difference": ``report.verdict`` is ``unreachable`` when no probe sent got an answer (the rest
    are then not sent), ``partial`` when some did not; ``report.unanswered`` names each and why,
    and ``report.outage()`` says it in a line ("could not reach the service at <base URL,
    masked>: ...").

    Writes ``out/report.md``, ``out/conformance.json`` and ``out/cassettes/*.yaml`` and returns
    the :class:`Report`; ``report.differences`` is empty when the service answered as
    storeframes expects.

    >>> report = sf.conformance.run(out="conformance", budget=150)  # doctest: +SKIP
    >>> report.as_json()["dialect"]["code"]  # doctest: +SKIP
    'sf.sandbox.Dialect()'
    """
    from ..client import Client

    target = Path(out)
    chosen = _check(budget, devices, country, keyword, apps or {}, target)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise InvalidParameterError("timeout", timeout, "seconds > 0 for each network operation")
    if type(max_tries) is not int or max_tries < 1:
        raise InvalidParameterError("max_tries", max_tries, "a whole number of attempts >= 1")
    _need_vcr()
    token = Secret(clean_token(api_key if api_key is not None else os.environ.get("STOREFRAMES_API_KEY", "")))
    del api_key
    if not token:
        raise ConfigurationError("the conformance kit needs a token: set STOREFRAMES_API_KEY (or pass api_key=)")
    url = base_url if base_url is not None else os.environ.get("STOREFRAMES_BASE_URL") or None
    if url is None:
        raise ConfigurationError("the conformance kit needs the service's address: set STOREFRAMES_BASE_URL")
    check_base_url(url)
    scrubber = Scrubber([token, Secret(WRONG_TOKEN)], url)
    options: dict[str, Any] = {
        "base_url": url,
        "cache_dir": False,
        "progress": False,
        "clock": clock,
        "timeout": timeout,
        "max_tries": max_tries,
    }
    today = clock().astimezone(UTC).date() if clock is not None else catalog.today_utc()
    probes = plan_probes(chosen, country.strip().lower(), keyword, today, apps=apps)
    target.mkdir(parents=True, exist_ok=True)
    for name in REPORT_FILES:
        (target / name).unlink(missing_ok=True)
    stopped = outstanding(target / "cassettes")  # what requests a killed run had out may have cost
    with Client(token.reveal(), budget=budget, **options) as client:
        sent = send_probes(
            probes,
            client=client,
            wrong_client=lambda: Client(WRONG_TOKEN, budget=budget, **options),
            budget=budget,
            out=target,
            scrubber=scrubber,
            progress=progress,
        )
        spent = client.spent
    kept = {s.cassette for s in sent if s.cassette}
    for stale in (target / "cassettes").glob("*"):  # an earlier run's, for requests not made this time, and its marks
        if f"cassettes/{stale.name}" not in kept:
            stale.unlink(missing_ok=True)
    made = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    report = Report(made, country.strip().lower(), chosen, keyword, budget, spent, sent)
    report.stopped = stopped
    report.service = shown_url(url)
    _write(report, target, scrubber)
    return report


def _write(report: Report, target: Path, scrubber: Scrubber) -> None:
    """The report's files, then every file read back for the run's secrets; a file holding one is deleted."""
    report.files_checked = sum(1 for p in target.rglob("*") if p.is_file()) + len(REPORT_FILES)
    for _ in range(2):  # once more when a leak was found, so the report names it
        (target / "conformance.json").write_bytes(orjson.dumps(report.as_json(), option=orjson.OPT_INDENT_2) + b"\n")
        (target / "report.md").write_text(scrubber.text(markdown(report)), encoding="utf-8")
        found = leaks(target, scrubber.secrets)
        if not found:
            return
        for line in found:
            (target / line.split(": ", 1)[0]).unlink(missing_ok=True)
        report.leaks = sorted(set(report.leaks) | set(found))
