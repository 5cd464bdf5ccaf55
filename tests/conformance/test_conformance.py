"""The conformance kit against loopback servers: the sandbox in each of its dialects, and the sandbox bent into
forms it never sends (an unknown member, a renamed one, a changed type, another error body, wrong prices, a
service that echoes the token). Each difference is named in the report, the budget holds, no file written
holds a secret, and a saved report read again with ``--against`` fails while a difference remains."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from storeframes import catalog, conformance
from storeframes.cli import main
from storeframes.sandbox import SANDBOX_KEY, Dialect, Faults, SandboxServer, SandboxService
from storeframes.sandbox.service import Reply
from storeframes.texts import markdown_code

from .._secrets import leaks_in

ROOT = Path(__file__).resolve().parents[2]
SAVED = ROOT / "cassettes" / "conformance"
TOKEN = "sk-live-Conformance7Token9"

Bend = Callable[[str, Mapping[str, str], int, dict[str, Any]], tuple[int, dict[str, Any]]]


class Bent(SandboxService):
    """The sandbox, each answer's JSON bent by ``bend(path, params, status, body) -> (status, body)``;
    ``price`` multiplies every reported cost, ``echo`` sends the request's token back in a header and the body."""

    def __init__(self, bend: Bend | None = None, *, price: int = 1, echo: bool = False, **options: Any):
        super().__init__(**options)
        self.bend, self.price, self.echo = bend, price, echo

    def handle(self, method: str, path: str, query: Iterable[tuple[str, str]], headers: Mapping[str, str]) -> Reply:
        params = dict(query)
        reply = super().handle(method, path, params.items(), headers)
        body = json.loads(reply.body)
        status = reply.status
        if self.bend is not None:
            status, body = self.bend(path, params, status, body)
        request = body.get("metadata", {}).get("request", {}) if isinstance(body, dict) else {}
        if "cost" in request:
            request["cost"] *= self.price
            request["max_credit_cost"] *= self.price
        out = dict(reply.headers)
        if self.echo:
            key = next((v for k, v in headers.items() if k.lower() == "x-service-key"), "")
            out["X-Debug-Key"] = key
            request["echoed"] = f"key={key}"
        return Reply(status, json.dumps(body).encode(), out, reply.fault, reply.cost)


def kit(out: Path, service: SandboxService | None = None, **options: Any) -> tuple[conformance.Report, SandboxService]:
    service = service or SandboxService()
    with SandboxServer(port=0, service=service) as server:
        options.setdefault("api_key", SANDBOX_KEY)
        report = conformance.run(out=out, base_url=server.base_url, **options)
    return report, service


def lines(report: conformance.Report) -> list[str]:
    return [f"{probe}: {d.line()}" for probe, d in report.differences]


def by_name(report: conformance.Report) -> dict[str, conformance.ProbeReport]:
    return {p.name: p for p in report.probes}


# -- the sandbox as it is -----------------------------------------------------------------------------------------


def test_the_sandbox_answers_as_storeframes_expects_within_the_default_budget(tmp_path):
    report, service = kit(tmp_path / "kit")
    assert lines(report) == []
    probes = by_name(report)
    assert [p.outcome for p in report.probes].count("answered") == 11
    wrong = probes["iphone wrong token"]
    assert (wrong.outcome, wrong.readings[-1][1].status, wrong.readings[-1][1].error) == (
        "refused",
        401,
        "AuthenticationError",
    )
    absent = probes["iphone app not in the store"].readings[-1][1]
    assert (absent.status, absent.code, absent.error, absent.cost) == (
        422,
        "AppNotAvailableError",
        "AppNotAvailableError",
        0,
    )
    for device in ("iphone", "android"):
        skipped = probes[f"{device} benchmarks"]
        assert skipped.outcome == "skipped" and "1,001 credits" in skipped.reason and not skipped.readings
    # every probe's frames were built from what came: the metadata gives its seven tables
    assert set(probes["android metadata"].readings[-1][1].frames) >= {"metadata_frame", "permissions_frame"}
    assert probes["iphone metadata"].readings[-1][1].frames["metadata_frame"] == 1
    # what was spent is what the service charged, within the budget
    assert report.spent == service.spent <= 150
    assert len(service.arrivals) == 13  # the benchmarks were never sent
    out = report.as_json()
    assert out["dialect"] == {"fields": out["dialect"]["fields"], "code": "sf.sandbox.Dialect()", "notes": []}
    written = json.loads((tmp_path / "kit" / "conformance.json").read_text())
    assert written["spent"] == report.spent and written["differences"] == 0
    assert sorted(p.name for p in (tmp_path / "kit" / "cassettes").iterdir()) == sorted(
        f"{p.name.replace(' ', '-')}.yaml" for p in report.probes if p.outcome != "skipped"
    )
    text = (tmp_path / "kit" / "report.md").read_text()
    assert "**No difference**" in text and "sf.sandbox.Dialect()" in text
    assert "No answer carried a header about rate limits" in text
    assert leaks_in(tmp_path) == []


def test_a_budget_for_the_benchmarks_probes_them_too(tmp_path):
    report, service = kit(tmp_path / "kit", budget=2_200)
    assert lines(report) == []
    probes = by_name(report)
    assert probes["iphone benchmarks"].outcome == probes["android benchmarks"].outcome == "answered"
    assert probes["android benchmarks"].readings[-1][1].frames["benchmarks_frame"] > 10
    assert report.spent == service.spent <= 2_200


DIALECTS = [
    (name, value)
    for name, values in Dialect.FORMS.items()
    for value in values[1:]  # the first is the default
]


@pytest.mark.parametrize(("field", "value"), DIALECTS, ids=[f"{f}={v}" for f, v in DIALECTS])
def test_each_dialect_of_the_sandbox_is_named_and_holds_no_difference(tmp_path, field, value):
    dialect = Dialect(**{field: value})
    report, _ = kit(tmp_path / "kit", SandboxService(dialect=dialect), devices=["iphone", "android"])
    assert lines(report) == []
    fields, notes = report.dialect
    assert fields[field] == value and notes == []
    code = report.as_json()["dialect"]["code"]
    assert code == dialect.code()
    import storeframes as sf

    assert eval(code, {"sf": sf}) == dialect


# -- forms the sandbox never sends ---------------------------------------------------------------------------------


def _metadata(path: str, params: Mapping[str, str], status: int, body: dict[str, Any]):
    return path.endswith("/apps/metadata.json") and status == 200


def unknown_member(path, params, status, body):
    if _metadata(path, params, status, body):
        for resource in body["result"].values():
            resource["metadata"]["badges"] = ["editors-choice"]
    return status, body


def renamed_member(path, params, status, body):
    if path.endswith("/apps/metrics/current.json") and status == 200:
        for resource in body["result"].values():
            resource["rating_stats"] = resource.pop("ratings")
    return status, body


def changed_type(path, params, status, body):
    if _metadata(path, params, status, body):
        for resource in body["result"].values():
            resource["metadata"]["rating"]["average"] = "4.5 stars"
    return status, body


def other_error_body(path, params, status, body):
    if status == 401:
        return status, {"errors": [{"title": "Unauthorized", "detail": "bad key"}]}
    return status, body


def history_by_keyword_list(path, params, status, body):
    if path.endswith("/history.json") and status == 200:
        body["result"] = {"days": body["result"]}
    return status, body


def stranger(path, params, status, body):
    if _metadata(path, params, status, body) and params.get("device") == "android":
        resource = next(iter(body["result"].values()))
        body["result"]["com.example.stranger"] = resource
    return status, body


BENT = {
    "an unknown member": (
        unknown_member,
        [
            "iphone metadata: unknown at $.result.<app_id>.metadata.badges: a member storeframes does not know "
            "(an array of 1)",
            "android metadata: unknown at $.result.<app_id>.metadata.badges: a member storeframes does not know "
            "(an array of 1)",
        ],
        "metadata_frame warns: UnknownFieldWarning: the service sent a field storeframes does not know at "
        "result.<app_id>.metadata, left out of the frame: badges",
    ),
    "a renamed member": (
        renamed_member,
        [
            "iphone metrics: missing at $.result.<app_id>.ratings: expected, not found",
            "iphone metrics: unknown at $.result.<app_id>.rating_stats: a member storeframes does not know (an object)",
        ],
        "metrics_frame warns: UnknownFieldWarning",
    ),
    "a changed type": (
        changed_type,
        [
            'iphone metadata: type at $.result.<app_id>.metadata.rating.average: expected a number, found text, e.g. "4.5 stars"',
        ],
        "metadata_frame cannot read it",
    ),
    "an error body of another shape": (
        other_error_body,
        [
            "iphone wrong token: form at $: an error body in none of the known forms: storeframes finds no code or message in it"
        ],
        None,
    ),
    "an app nobody asked for": (
        stranger,
        ["android metadata: unknown at $.result.<app_id>: an app that was not asked for, e.g. 'com.example.stranger'"],
        None,
    ),
    "a history in another form": (
        history_by_keyword_list,
        ['iphone search_history: form at $.result.<date>: a key that is not date, e.g. "days"'],
        "search_history_frame cannot read it",
    ),
}


@pytest.mark.parametrize("case", list(BENT))
def test_every_form_the_sandbox_never_sends_is_named_in_the_report_and_fails_against(tmp_path, case, capsys):
    bend, expected, frame = BENT[case]
    report, _ = kit(tmp_path / "kit", Bent(bend))
    found = lines(report)
    for line in expected:
        assert line in found, "\n".join(found)
    if frame is not None:
        assert any(frame in line for line in found), "\n".join(found)
    text = (tmp_path / "kit" / "report.md").read_text()
    assert "## Differences" in text and "No difference" not in text
    for line in expected:
        where = line.split(" at ", 1)[1].split(": ", 1)[0]
        assert f"| {markdown_code(where)} |" in text  # the service's names, as code
    saved = json.loads((tmp_path / "kit" / "conformance.json").read_text())
    assert saved["differences"] == len(found) > 0
    # the saved report read again: the same differences, a failure naming each
    checked = conformance.check(tmp_path / "kit")
    assert not checked.passed
    assert sorted(f"{p}: {d.line()}" for p, d in checked.remaining) == sorted(found)
    assert main(["conformance", "--against", str(tmp_path / "kit" / "conformance.json")]) == 1
    said = capsys.readouterr().out
    for line in expected:
        assert line in said
    assert f"{len(found)} difference(s) remain" in said


def test_an_error_body_under_metadata_response_is_a_form_storeframes_knows(tmp_path):
    def under_response(path, params, status, body):
        if status != 200:
            body["metadata"]["response"] = body.pop("error")
        return status, body

    report, _ = kit(tmp_path / "kit", Bent(under_response))
    assert lines(report) == []
    assert {r.error_form for p in report.probes for _, r in p.readings if r.status != 200} == {"metadata.response"}


def test_what_the_service_says_about_rate_limits_is_reported_and_a_retried_429_is_no_difference(tmp_path):
    service = SandboxService(faults=Faults(rate_limited=0.25, seed=4), retry_after_header=True)
    report, _ = kit(tmp_path / "kit", service, devices=["iphone"])
    limited = [(p.name, r.limits) for p in report.probes for _, r in p.readings if r.status == 429]
    assert limited and all(limits == {"retry-after": "1"} for _, limits in limited)
    assert lines(report) == []  # each probe was retried to its answer
    text = (tmp_path / "kit" / "report.md").read_text()
    assert "| `retry-after` | `1` |" in text and "TooManyRequestsError" in text


# -- the budget ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("budget", [0, 40, 150])
def test_a_service_dearer_than_the_catalog_never_passes_the_budget(tmp_path, budget):
    report, service = kit(tmp_path / "kit", Bent(price=3), budget=budget)
    assert report.spent <= budget
    assert sum(a.cost for a in service.arrivals) * 3 == report.spent
    skipped = [p for p in report.probes if p.outcome == "skipped"]
    assert skipped and all(p.reason for p in skipped)
    if budget == 0:
        assert service.arrivals == []
    else:
        dearer = [line for line in lines(report) if " cost at " in line]
        assert "iphone search: cost at search iphone: charged 30 credits, the catalog estimates 10" in dearer
        assert "iphone search: cost at search iphone: max_credit_cost 30 above the catalog's estimate of 10" in dearer


# -- secrets ------------------------------------------------------------------------------------------------------


def test_no_file_written_holds_the_token_or_the_base_urls_credentials(tmp_path):
    service = Bent(echo=True, api_keys=(TOKEN,))
    with SandboxServer(port=0, service=service) as server:
        base = server.base_url.replace("http://", "http://probe-user:S3cretPass@")
        report = conformance.run(out=tmp_path / "kit", api_key=TOKEN, base_url=base)
    assert report.leaks == []
    written = [p for p in (tmp_path / "kit").rglob("*") if p.is_file()]
    assert len(written) == report.files_checked == 15
    for path in written:
        data = path.read_bytes()
        for secret in (TOKEN, "S3cretPass", "probe-user", "storeframes-conformance-wrong-token", "127.0.0.1"):
            assert secret.encode() not in data, (path.name, secret)
    # what the service echoed is kept, scrubbed: the header is still there to be seen
    metadata = (tmp_path / "kit" / "cassettes" / "iphone-metadata.yaml").read_text()
    assert "x-debug-key:\n      - redacted" in metadata.lower()  # vcrpy 6 keeps the header's case, later ones not
    assert "https://service.example/api/public/store/apps/metadata.json?" in metadata
    assert leaks_in(tmp_path) == []
    assert TOKEN not in repr(report) and TOKEN not in json.dumps(report.as_json())
    assert "the 15 files written were read back" in (tmp_path / "kit" / "report.md").read_text()


# -- the command line -------------------------------------------------------------------------------------------


@pytest.fixture
def served(monkeypatch):
    """A loopback sandbox whose token and address are in the environment, as a user's would be."""
    service = SandboxService()
    with SandboxServer(port=0, service=service) as server:
        monkeypatch.setenv("STOREFRAMES_API_KEY", SANDBOX_KEY)
        monkeypatch.setenv("STOREFRAMES_BASE_URL", server.base_url)
        yield service


def test_the_command_writes_the_report_and_exits_0_when_nothing_differs(tmp_path, served, capsys):
    out = tmp_path / "kit"
    assert main(["conformance", "--out", str(out), "--device", "iphone", "--keyword", "meditation"]) == 0
    said = capsys.readouterr()
    assert "no difference: every answer is as storeframes expects" in said.out
    assert "matching sandbox dialect: sf.sandbox.Dialect()" in said.out
    assert "iphone metadata: answered, 11 credits" in said.err
    assert (out / "report.md").is_file() and not (out / "cassettes" / "android-search.yaml").exists()
    assert main(["conformance", "--against", str(out)]) == 0
    assert "holds no difference this version does not handle" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--country", "zz"], "country"),
        (["--keyword", "x" * 1001], "keyword"),
        (["--app", "iphone=com.example.notes"], "apps"),
        (["--app", "android=com.example.notes", "--device", "iphone"], "an app for a device probed"),
        (["--device", "iphone", "--device", "iphone"], "each device once"),
        (["--against", "nowhere"], "no conformance report at nowhere"),
    ],
)
def test_bad_input_exits_2_before_anything_is_sent(tmp_path, served, capsys, argv, said):
    assert main(["conformance", "--out", str(tmp_path / "kit"), *argv]) == 2
    assert said in capsys.readouterr().err
    assert served.arrivals == [] and not (tmp_path / "kit").exists()


def test_a_folder_that_is_not_a_report_and_a_missing_token_are_refused(tmp_path, served, capsys, monkeypatch):
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    assert main(["conformance", "--out", str(busy)]) == 2
    assert "holds an earlier run of the kit" in capsys.readouterr().err
    assert (busy / "notes.txt").read_text() == "mine"
    monkeypatch.delenv("STOREFRAMES_API_KEY")
    assert main(["conformance", "--out", str(tmp_path / "kit")]) == 2
    assert "needs a token" in capsys.readouterr().err
    assert served.arrivals == []


def test_a_weekly_canary_fails_on_what_changed_since_its_baseline_only(tmp_path, monkeypatch, capsys):
    first = tmp_path / "monday"
    kit(first, Bent(unknown_member))  # a difference the team knows of
    service = Bent(unknown_member)
    with SandboxServer(port=0, service=service) as server:
        monkeypatch.setenv("STOREFRAMES_API_KEY", SANDBOX_KEY)
        monkeypatch.setenv("STOREFRAMES_BASE_URL", server.base_url)
        assert main(["conformance", "--out", str(tmp_path / "week2"), "--baseline", str(first)]) == 0
        assert "nothing differs from the baseline" in capsys.readouterr().out
        # the known difference and a new one, and a search answer in another form
        service.bend = lambda path, params, status, body: renamed_member(
            path, params, *unknown_member(path, params, status, body)
        )
        service.dialect = Dialect(search="apps")
        assert main(["conformance", "--out", str(tmp_path / "week3"), "--baseline", str(first)]) == 1
    said = capsys.readouterr().out
    assert "iphone metrics: missing at $.result.<app_id>.ratings: expected, not found" in said
    assert "the dialect's search was 'value', it is 'apps'" in said
    assert "badges" not in said  # known since the baseline


# -- reports kept in the repository ---

SANDBOX_REPORTS = {
    "sandbox": Dialect(),
    "sandbox-other-forms": Dialect(
        search="apps", history="list", keyword_level=True, power="app-power", categories="genres", size="number"
    ),
}
"""The saved reports of the sandbox: ``python -m tests.conformance.test_conformance`` records them again."""


def record_saved_reports() -> None:
    import shutil
    from datetime import UTC, datetime

    for name, dialect in SANDBOX_REPORTS.items():
        shutil.rmtree(SAVED / name, ignore_errors=True)
        service = SandboxService(today="2026-11-20", dialect=dialect)
        kit(SAVED / name, service, clock=lambda: datetime(2026, 11, 20, 12, tzinfo=UTC))


@pytest.mark.parametrize("folder", sorted(p.name for p in SAVED.iterdir() if p.is_dir()) if SAVED.is_dir() else [])
def test_every_saved_report_is_read_by_this_version_without_a_difference(folder):
    """A report a user sent, put under cassettes/conformance/, fails here until storeframes handles what it shows."""
    checked = conformance.check(SAVED / folder)
    assert checked.passed, "\n".join(checked.lines())
    assert checked.dialect_now == checked.dialect_then
    if folder in SANDBOX_REPORTS:  # the sandbox's own: each names the dialect it was recorded in
        expected = SANDBOX_REPORTS[folder]
        assert Dialect(**checked.dialect_now) == expected


def test_a_probe_that_fails_fails_alone_and_is_not_sent_again(tmp_path):
    """A probe whose answer cannot be read (its cost is not a number) fails alone; the next ones are sent."""

    def broken_metadata(path, params, status, body):
        if _metadata(path, params, status, body) and params.get("device") == "iphone":
            body["metadata"]["request"]["cost"] = "eleven"
        return status, body

    report, service = kit(tmp_path / "kit", Bent(broken_metadata))
    probes = by_name(report)
    assert probes["iphone metadata"].outcome == "failed"
    assert "ResponseShapeError" in (probes["iphone metadata"].raised or "")
    assert probes["iphone changes"].outcome == probes["android metadata"].outcome == "answered"
    assert any("metadata.request.cost" in line for line in lines(report))
    asked = [a for a in service.arrivals if a.path.endswith("/metadata.json") and a.params.get("apps") != "1"]
    assert [a.params["device"] for a in asked] == ["iphone", "android"]  # the one that failed was not sent again


if __name__ == "__main__":
    record_saved_reports()


# -- a run stopped half-way ----------------------------------------------------------------------------------------


@pytest.mark.heavy
@pytest.mark.processes
def test_a_run_killed_half_way_is_finished_by_the_next_without_paying_twice_or_passing_the_budget(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    service = SandboxService(latency=0.15)
    out = tmp_path / "kit"
    with SandboxServer(port=0, service=service) as server:
        env = {**os.environ, "STOREFRAMES_API_KEY": SANDBOX_KEY, "STOREFRAMES_BASE_URL": server.base_url}
        child = subprocess.Popen(
            [sys.executable, "-m", "storeframes", "conformance", "--out", str(out)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while len(service.arrivals) < 7 and time.monotonic() < deadline and child.poll() is None:
            time.sleep(0.01)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        first = len(service.arrivals)
        assert 7 <= first < 13 and not (out / "conformance.json").exists()
        kept = sorted(p.name for p in (out / "cassettes").glob("*.yaml"))
        cut_off = sum(int(p.read_text()) for p in (out / "cassettes").glob("*.sending"))  # a request was out
        report = conformance.run(out=out, api_key=SANDBOX_KEY, base_url=server.base_url)
    assert lines(report) == []
    reused = [p for p in report.probes if p.reused]
    assert {f"{p.name.replace(' ', '-')}.yaml" for p in reused} == set(kept) and len(reused) >= 5
    for probe in reused:  # kept by the first run: not asked again
        path = catalog.API_PREFIX + catalog.ENDPOINTS[probe.endpoint].path
        again = [a for a in service.arrivals[first:] if a.path == path and a.params.items() >= probe.params.items()]
        assert again == [], probe.name
    # the budget holds over both runs: what was charged, with the request cut off counted at its estimate
    assert service.spent <= 150
    assert report.spent + report.reused + report.stopped <= 150 and report.stopped == cut_off
    for p in report.probes:  # every probe has an answer, or was left out for the budget, saying so
        assert p.outcome in ("answered", "refused") or "left of the budget" in p.reason, (p.name, p.reason)
    assert not list((out / "cassettes").glob("*.sending"))
    text = (out / "report.md").read_text()
    assert "were read again" in text and ("requests a stopped run had out may have cost up to" in text) == (cut_off > 0)


def test_a_run_again_into_the_same_folder_the_same_day_sends_nothing(tmp_path):
    report, service = kit(tmp_path / "kit")
    sent = len(service.arrivals)
    with SandboxServer(port=0, service=service) as server:
        again = conformance.run(out=tmp_path / "kit", api_key=SANDBOX_KEY, base_url=server.base_url)
    assert len(service.arrivals) == sent and again.spent == 0 and again.reused == report.spent
    assert lines(again) == [] and [p.outcome for p in again.probes] == [p.outcome for p in report.probes]
