"""The conformance kit when nobody answers: a closed port, a port that accepts and never answers, plain http at an
https address, a name that does not resolve, and a service that answers some probes only. An outage is never "no
difference": the verdict says the service could not be reached (exit status 3), or that some probes got no answer
(exit status 4), with or without ``--baseline``, and the report names each probe without an answer and why."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import pytest

from storeframes import InvalidParameterError, conformance
from storeframes.cli import main
from storeframes.sandbox import SANDBOX_KEY, SandboxServer, SandboxService
from storeframes.sandbox.service import Reply

from .. import _summary
from .._hostile import PREFIX, Hostile
from .._hostile import Reply as HostileReply

QUICK = ["--timeout", "0.3", "--tries", "2"]
"""Short timeouts and few attempts: a probe without an answer is known in about a second."""


def closed_port() -> int:
    """A loopback port nobody listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def silent() -> Iterator[int]:
    """A loopback port that accepts connections (the kernel's backlog) and never answers a byte."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        yield int(sock.getsockname()[1])


@pytest.fixture
def baseline(tmp_path) -> Path:
    """A report of the sandbox answering as storeframes expects: the canary's baseline."""
    with SandboxServer(port=0, service=SandboxService()) as server:
        conformance.run(out=tmp_path / "baseline", api_key=SANDBOX_KEY, base_url=server.base_url, devices=["iphone"])
    return tmp_path / "baseline"


def canary(monkeypatch, url: str, out: Path, *more: str) -> int:
    monkeypatch.setenv("STOREFRAMES_API_KEY", SANDBOX_KEY)
    monkeypatch.setenv("STOREFRAMES_BASE_URL", url)
    return main(["conformance", "--out", str(out), *QUICK, *more])


def saved(out: Path) -> dict:
    return json.loads((out / "conformance.json").read_text())


def test_a_closed_port_is_could_not_reach_the_service_with_exit_status_3(tmp_path, monkeypatch, capsys, baseline):
    _summary.hostile("conformance: a closed port")
    port = closed_port()
    url = f"http://canary:hunter2secret@127.0.0.1:{port}{PREFIX}"
    shown = f"http://***@127.0.0.1:{port}{PREFIX}"
    assert canary(monkeypatch, url, tmp_path / "run") == 3
    said = capsys.readouterr()
    assert said.out.splitlines()[-1] == (
        f"could not reach the service at {shown}: none of the 2 probes sent got an answer (refused)"
    )
    assert "iphone wrong token: no answer (refused)" in said.out
    assert "iphone app not in the store: no answer (refused)" in said.out
    assert "matching sandbox dialect: none (no answer came)" in said.out
    assert "no difference" not in said.out and "hunter2secret" not in said.out + said.err
    report = (tmp_path / "run" / "report.md").read_text()
    assert "**Could not reach the service**: none of the 2 probes sent got an answer (refused" in report
    assert "No difference" not in report and str(port) not in report  # the address is not kept in the files
    assert (
        "| iphone wrong token | `search` country=us device=iphone keyword=photo editor | the connection was" in report
    )
    summary = saved(tmp_path / "run")
    assert summary["verdict"] == "unreachable"
    assert summary["unanswered"] == [
        {"probe": "iphone wrong token", "why": "refused"},
        {"probe": "iphone app not in the store", "why": "refused"},
    ]
    outcomes = {p["name"]: (p["outcome"], p["no_answer"]) for p in summary["probes"]}
    assert outcomes["iphone app not in the store"] == ("failed", "refused")
    assert outcomes["android search"] == ("skipped", None)  # the rest are not sent, each saying why
    assert "got no answer (refused): the service is not reachable" in summary["probes"][5]["reason"]

    # the weekly canary: an outage is not "nothing differs from the baseline"
    assert canary(monkeypatch, url, tmp_path / "week2", "--baseline", str(baseline)) == 3
    said = capsys.readouterr()
    assert said.out.splitlines()[-1].startswith(f"could not reach the service at {shown}")
    assert "nothing differs" not in said.out
    # the saved report read again says there is nothing in it
    assert main(["conformance", "--against", str(tmp_path / "run")]) == 3
    assert "could not reach the service: it holds no answer to read again" in capsys.readouterr().out


def test_a_port_that_accepts_and_never_answers_is_unreachable_by_timeout(tmp_path, monkeypatch, capsys, silent):
    _summary.hostile("conformance: a port that accepts and never answers")
    url = f"http://127.0.0.1:{silent}{PREFIX}"
    report = conformance.run(
        out=tmp_path / "api", api_key=SANDBOX_KEY, base_url=url, devices=["iphone"], timeout=0.3, max_tries=1
    )
    assert report.verdict == "unreachable" and report.unreachable
    assert report.unanswered == [("iphone wrong token", "timeout"), ("iphone app not in the store", "timeout")]
    assert report.outage() == (
        f"could not reach the service at {url}: none of the 2 probes sent got an answer (timeout)"
    )
    assert report.differences == [] and report.spent == 0
    assert "timed out (ReadTimeout)" in (report.probes[0].raised or "")
    assert "| iphone app not in the store | `metadata` country=us device=iphone apps=1 | no answer within the" in (
        (tmp_path / "api" / "report.md").read_text()
    )
    assert canary(monkeypatch, url, tmp_path / "cli", "--device", "iphone") == 3
    assert capsys.readouterr().out.splitlines()[-1].endswith("none of the 2 probes sent got an answer (timeout)")


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("https://127.0.0.1:{port}" + PREFIX, "TLS"),  # plain http behind an https address: a proxy, a wrong port
        ("https://storeframes-canary.invalid" + PREFIX, "DNS"),  # a name that never resolves (RFC 6761)
    ],
    ids=["tls", "dns"],
)
def test_a_handshake_that_fails_and_a_name_that_does_not_resolve_are_named(tmp_path, url, why):
    _summary.hostile(f"conformance: {why} fails")
    with Hostile(HostileReply(kind="conformance: plain http")) as server:
        report = conformance.run(
            out=tmp_path / "kit",
            api_key=SANDBOX_KEY,
            base_url=url.format(port=server.port),
            devices=["android"],
            timeout=2,
            max_tries=1,
        )
    assert report.verdict == "unreachable"
    assert report.unanswered == [("android wrong token", why), ("android app not in the store", why)]


class Patchy(SandboxService):
    """The sandbox, dropping the connection without an answer on the endpoints named."""

    def __init__(self, dropped: tuple[str, ...], **options):
        super().__init__(**options)
        self.dropped = dropped

    def handle(self, method: str, path: str, query: Iterable[tuple[str, str]], headers: Mapping[str, str]) -> Reply:
        if any(part in path for part in self.dropped):
            return Reply(0, b"", fault="dropped")
        return super().handle(method, path, query, headers)


def test_a_service_that_answers_some_probes_only_is_not_no_difference(tmp_path, monkeypatch, capsys, baseline):
    _summary.hostile("conformance: some endpoints drop the connection")
    service = Patchy(("/history", "/apps/metadata.json"))
    with SandboxServer(port=0, service=service) as server:
        report = conformance.run(
            out=tmp_path / "api", api_key=SANDBOX_KEY, base_url=server.base_url, devices=["iphone"], max_tries=2
        )
        assert report.verdict == "partial" and not report.unreachable
        assert report.unanswered == [
            ("iphone app not in the store", "dropped"),
            ("iphone metadata", "dropped"),
            ("iphone search_history", "dropped"),
        ]
        assert report.outage() == "3 of the 8 probes sent got no answer (dropped): what they ask was not compared"
        assert report.differences == []
        assert {p.name: p.outcome for p in report.probes}["iphone changes"] == "answered"  # the others go on
        markdown = (tmp_path / "api" / "report.md").read_text()
        assert "**3 of the 8 probes sent got no answer** (listed below): what they ask was not compared" in markdown
        assert "No difference" not in markdown
        assert saved(tmp_path / "api")["verdict"] == "partial"

        assert canary(monkeypatch, server.base_url, tmp_path / "cli", "--device", "iphone") == 4
        said = capsys.readouterr().out
        assert "iphone search_history: no answer (dropped)" in said
        assert said.splitlines()[-1] == (
            "3 of the 8 probes sent got no answer (dropped): what they ask was not compared; "
            "no difference in the answers that came"
        )
        assert canary(monkeypatch, server.base_url, tmp_path / "week2", "--baseline", str(baseline)) == 4
        said = capsys.readouterr().out
        assert "iphone app not in the store: no answer (dropped)" in said
        assert said.splitlines()[-1].endswith("; nothing differs from the baseline in the answers that came")
    assert main(["conformance", "--against", str(tmp_path / "cli")]) == 4
    assert "iphone metadata: no answer (dropped) in the report" in capsys.readouterr().out


def test_bad_timeouts_and_tries_are_refused_before_anything_is_sent(tmp_path, capsys):
    nowhere = f"http://127.0.0.1:{closed_port()}{PREFIX}"
    with pytest.raises(InvalidParameterError, match=r"invalid timeout=0: seconds > 0 for each network operation"):
        conformance.run(out=tmp_path / "kit", api_key=SANDBOX_KEY, base_url=nowhere, timeout=0)
    with pytest.raises(InvalidParameterError, match=r"invalid max_tries=0: a whole number of attempts >= 1"):
        conformance.run(out=tmp_path / "kit", api_key=SANDBOX_KEY, base_url=nowhere, max_tries=0)
    assert not (tmp_path / "kit").exists()
    with pytest.raises(SystemExit) as exit_:
        main(["conformance", "--out", str(tmp_path / "kit"), "--timeout", "0"])
    assert exit_.value.code == 2
    assert "expected a number of seconds > 0" in capsys.readouterr().err


class PatchyAndChanged(Patchy):
    """Drops the history's connections, and answers metadata with a member storeframes does not know."""

    def handle(self, method: str, path: str, query: Iterable[tuple[str, str]], headers: Mapping[str, str]) -> Reply:
        reply = super().handle(method, path, query, headers)
        if not path.endswith("/apps/metadata.json") or reply.status != 200:
            return reply
        body = json.loads(reply.body)
        for resource in body["result"].values():
            resource["metadata"]["badges"] = ["editors-choice"]
        return Reply(reply.status, json.dumps(body).encode(), reply.headers, reply.fault, reply.cost)


def test_a_difference_beside_probes_without_an_answer_exits_1_and_says_both(tmp_path, monkeypatch, capsys):
    with SandboxServer(port=0, service=PatchyAndChanged(("/history",))) as server:
        assert canary(monkeypatch, server.base_url, tmp_path / "kit", "--device", "iphone") == 1
    said = capsys.readouterr().out.splitlines()
    assert "iphone search_history: no answer (dropped)" in said
    assert any(line.startswith("iphone metadata: unknown at $.result.") and "badges" in line for line in said)
    assert said[-1] == "2 difference(s)"  # the member, and the frame's warning of it
    summary = saved(tmp_path / "kit")
    assert summary["verdict"] == "partial" and summary["differences"] == 2
    assert summary["unanswered"] == [{"probe": "iphone search_history", "why": "dropped"}]
    markdown = (tmp_path / "kit" / "report.md").read_text()
    assert "**1 of the 8 probes sent got no answer** (listed below)" in markdown
    assert "2 differences in the answers that came (listed below)" in markdown
