"""Backend failures of a team's cache, against moto's S3 server and real folders, with the sandbox on loopback
as the service: a mistyped bucket, refused or missing credentials, an endpoint that refuses connections, a
bucket that stops taking writes mid-call, a read-only cache folder and one that cannot be created. Each is
refused with a :class:`~storeframes.CacheUnavailableError` before the first credit (or, mid-call, after the
requests in flight), and no credential of ``storage_options`` is left in a traceback."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

import storeframes as sf
from storeframes.sandbox import SANDBOX_KEY, SandboxServer, World
from tests._children import child_env
from tests._redis import redis_url  # noqa: F401 - fixture: a real redis-server on loopback
from tests._s3 import ACCESS_KEY, REGION, SECRET_KEY, SESSION_TOKEN, free_port, refusing_server
from tests._secrets import exposures
from tests._summary import Repaid, max_in_window, paid_twice, record
from tests.conftest import ROOT, SANDBOX_TODAY, loopback_client

WORLD = World(0)
APPS = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US][:40]
MONTH = {"start": "2026-10-01", "end": "2026-10-31"}
LIMIT = (600, 1.0)


def _client(server: SandboxServer, cache_dir: Any, **options: Any) -> sf.Client:
    return loopback_client(server.base_url, cache_dir, **{"rate_limit": LIMIT, "backoff": (0.01, 0.1), **options})


def _options(endpoint: str, **more: str) -> dict[str, str]:
    return {
        "aws_access_key_id": ACCESS_KEY,
        "aws_secret_access_key": SECRET_KEY,
        "aws_session_token": SESSION_TOKEN,
        "aws_endpoint_url": endpoint,
        "aws_region": REGION,
        **more,
    }


def _record(name: str, server: SandboxServer, *, faults: dict[str, int], repaid: Repaid | None = None) -> int:
    """Record the scenario; its credits paid twice, documented repayment included (counted apart in the summary)."""
    arrivals = list(server.service.arrivals)
    twice, _, _ = paid_twice(arrivals)
    most = max_in_window([a.time for a in arrivals], LIMIT[1])
    beyond = twice - (repaid.credits if repaid is not None else 0)
    record(
        name, faults=faults, requests=len(arrivals), rows=0, paid_twice=beyond, window=(most, LIMIT[0]), repaid=repaid
    )
    return twice


# -- a bucket that cannot be written: refused before the first credit ------------------------------------------


@pytest.mark.heavy
@pytest.mark.parametrize("coordinated", [False, True], ids=["machine", "redis"])
@pytest.mark.redis
@pytest.mark.s3
def test_a_mistyped_bucket_is_refused_before_the_first_credit(s3_bucket, request, monkeypatch, coordinated):
    if coordinated:  # as the README recommends for a team: the leases are Redis's, not the bucket's
        monkeypatch.setenv("STOREFRAMES_COORDINATOR", request.getfixturevalue("redis_url"))
    for name, value in s3_bucket.env.items():  # credentials as a team sets them: the cloud's variables
        monkeypatch.setenv(name, value)
    typo = f"s3://{s3_bucket.name}-typo/team"
    with SandboxServer(port=0, today=SANDBOX_TODAY) as server:
        for _ in range(3):  # a scheduled job, three runs
            with _client(server, typo) as client:
                with pytest.raises(sf.CacheUnavailableError) as caught:
                    client.changes_frame(APPS[:8], **MONTH)
                assert client.spent == 0
            error = caught.value
            assert error.location == typo and error.operation == "write"
            assert f"{s3_bucket.name}-typo" in str(error) and "no such bucket" in str(error)
            assert "AWS_ENDPOINT_URL" in str(error) and "nothing was sent" in str(error)
            assert SECRET_KEY not in str(error)
        assert server.service.arrivals == []
        _record("backend failure: mistyped bucket", server, faults={"bucket that does not exist": 3})


@pytest.mark.heavy
@pytest.mark.s3
def test_refused_credentials_are_named_before_the_first_credit(monkeypatch):
    with (
        refusing_server(403, "InvalidAccessKeyId") as (endpoint, seen),
        SandboxServer(port=0, today=SANDBOX_TODAY) as server,
    ):
        with _client(server, "s3://team-bucket/team", storage_options=_options(endpoint)) as client:
            with pytest.raises(sf.CacheUnavailableError) as caught:
                client.changes_frame(APPS[:8], **MONTH)
        assert server.service.arrivals == [] and seen
    message = str(caught.value)
    assert "credentials were refused" in message and "AWS_ACCESS_KEY_ID" in message and "AWS_PROFILE" in message
    assert not _secrets_in(caught.value, (SECRET_KEY, SESSION_TOKEN))


@pytest.mark.heavy
def test_missing_credentials_are_named_before_the_first_credit(monkeypatch):
    """A gs:// cache on a machine with no Google credentials: obstore asks the cloud's metadata service."""
    with SandboxServer(port=0, today=SANDBOX_TODAY) as server:
        options = {"google_base_url": f"http://127.0.0.1:{free_port()}", "max_retries": "0", "retry_timeout": "2"}
        with _client(server, "gs://team-bucket/team", storage_options=options) as client:
            with pytest.raises(sf.CacheUnavailableError) as caught:
                client.changes_frame(APPS[:8], **MONTH)
        assert server.service.arrivals == []
    message = str(caught.value)
    assert "gs://team-bucket/team" in message and "GOOGLE_APPLICATION_CREDENTIALS" in message, message


@pytest.mark.heavy
def test_an_endpoint_that_refuses_connections_is_named_before_the_first_credit(monkeypatch):
    endpoint = f"http://127.0.0.1:{free_port()}"
    with SandboxServer(port=0, today=SANDBOX_TODAY) as server:
        options = _options(endpoint, max_retries="0", retry_timeout="2")
        with _client(server, "s3://team-bucket/team", storage_options=options) as client:
            with pytest.raises(sf.CacheUnavailableError) as caught:
                client.changes_frame(APPS[:8], **MONTH)
        assert server.service.arrivals == []
    message = str(caught.value)
    assert "cannot be reached" in message and "AWS_ENDPOINT_URL" in message and "connection refused" in message


# -- a bucket that stops taking writes in the middle of a call ------------------------------------------------


class _Gate(BaseHTTPRequestHandler):
    """A loopback proxy in front of moto's server that, once ``allow`` answers were written, refuses every
    write the way S3 refuses a write its bucket's policy denies (403 AccessDenied)."""

    protocol_version = "HTTP/1.1"

    def _forward(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        state = self.server.state  # type: ignore[attr-defined]
        if self.command == "PUT":
            with state["lock"]:
                shut = state["kept"] >= state["allow"]
                state["refused"] += shut
                state["kept"] += not shut and "/answers/" in self.path
            if shut:
                self._reply(403, [("Content-Type", "application/xml")], _DENIED)
                return
        upstream = http.client.HTTPConnection(state["host"], state["port"], timeout=30)
        try:
            upstream.request(self.command, self.path, body=body, headers=dict(self.headers.items()))
            answer = upstream.getresponse()
            data = answer.read()
            headers = [(k, v) for k, v in answer.getheaders() if k.lower() not in ("transfer-encoding", "connection")]
            self._reply(answer.status, headers, data, sized=self.command != "HEAD")
        finally:
            upstream.close()

    def _reply(self, status: int, headers: list[tuple[str, str]], data: bytes, *, sized: bool = True) -> None:
        self.send_response(status)
        for name, value in headers:
            if not (sized and name.lower() == "content-length"):
                self.send_header(name, value)
        if sized:
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward

    def log_message(self, format: str, *args: Any) -> None:
        pass


_DENIED = b'<?xml version="1.0"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>'


@contextlib.contextmanager
def _gate(endpoint: str, allow: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """A gate in front of ``endpoint`` (moto's server): its own endpoint, and its counts (``kept``, ``refused``);
    set ``allow`` in the counts to let writes through again."""
    parts = urlsplit(endpoint)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Gate)
    state = {
        "lock": threading.Lock(),
        "allow": allow,
        "kept": 0,
        "refused": 0,
        "host": parts.hostname,
        "port": parts.port,
    }
    server.state = state  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.mark.heavy
@pytest.mark.s3
def test_a_bucket_that_stops_taking_writes_mid_call_stops_the_call(s3_bucket):
    with SandboxServer(port=0, today=SANDBOX_TODAY) as server, _gate(s3_bucket.endpoint, allow=3) as (gated, gate):
        options = {"storage_options": {**s3_bucket.storage_options, "aws_endpoint_url": gated}, "max_workers": 2}
        with _client(server, s3_bucket.url, **options) as client:
            with pytest.raises(sf.CacheUnavailableError) as caught:
                client.changes_frame(APPS, **MONTH)
            first = len(server.service.arrivals)
            partial = caught.value.partial
            # every answer paid for is in the error's partial, kept or not; only those in flight are not kept
            assert len(partial) == first and sum(r.cost for r in partial) == client.spent > 0
            # 2 workers: at most the 2 requests in flight after the 3rd; a lease holder confirms its lease (a
            # write) before each request, so a refusal usually stops the call before it pays for another
            assert 3 <= first <= 3 + 2 < len(APPS) // 4
            message = str(caught.value)
            assert s3_bucket.url in message and "AccessDenied" in message and "permission denied" in message
            # it stops where the refusal is met: keeping an answer, writing a lease before the next request, or
            # writing the ledger's reservation of the next request (before it is sent)
            assert caught.value.operation in ("keep an answer", "take a lease", "renew a lease", "write")
            if caught.value.operation == "write":
                assert "cannot write the ledger file ledger/" in str(caught.value)
            assert "in flight" in message or caught.value.operation != "keep an answer"
            with pytest.raises(sf.CacheUnavailableError) as again:
                client.changes_frame(APPS, **MONTH)  # still refusing: refused before paying again
            assert "nothing was sent" in str(again.value) and len(server.service.arrivals) == first
        gate["allow"] = 10**9  # the bucket takes writes again
        with _client(server, s3_bucket.url, **options) as fixed:
            assert fixed.changes_frame(APPS, **MONTH).height > 0
        with _client(server, s3_bucket.url, **options) as third:
            third.changes_frame(APPS, **MONTH)
            assert third.spent == 0
        lost = [r for r in partial if r.entry is None]  # paid, never kept: in flight when the bucket stopped
        assert len(lost) <= 2  # 2 workers: at most the 2 requests in flight, paid once more each
        workers, dearest = options["max_workers"], max(r.cost for r in partial)
        in_flight = Repaid("in flight when a bucket stopped", sum(r.cost for r in lost), workers * dearest)
        twice = _record(
            "backend failure: bucket stops mid-call",
            server,
            faults={"writes refused": gate["refused"]},
            repaid=in_flight,
        )
        assert paid_twice(server.service.arrivals)[1] == len(lost) and twice == in_flight.credits


# -- folders ----------------------------------------------------------------------------------------------------


@pytest.mark.heavy
def test_a_cache_folder_that_cannot_be_created_is_refused_before_the_first_credit(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    folder = blocker / "cache"  # works as root too: nobody makes a folder under a file
    monkeypatch.setenv("STOREFRAMES_CACHE_DIR", str(folder))
    with SandboxServer(port=0, today=SANDBOX_TODAY) as server:
        for _ in range(3):
            with _client(server, None) as client, pytest.raises(sf.CacheUnavailableError) as caught:
                client.changes_frame(APPS[:8], **MONTH)
            assert not isinstance(caught.value, OSError)
            assert str(folder) in str(caught.value) and "STOREFRAMES_CACHE_DIR" in str(caught.value)
            assert caught.value.location == str(folder)
        assert server.service.arrivals == []


_READ_ONLY_CHILD = r"""
import json, os, sys, warnings
args = json.loads(sys.argv[1])
import storeframes as sf
from datetime import UTC, datetime, date
clock = lambda: datetime.combine(date.fromisoformat(args["today"]), datetime.now(UTC).time(), UTC)
out = {}
warnings.simplefilter("ignore")
with sf.Client(args["key"], base_url=args["base_url"], cache_dir=args["cache"], progress=False, clock=clock,
               rate_limit=(600, 1.0)) as client:
    out["cached_rows"] = client.changes_frame(args["cached"], **args["month"]).height
    try:
        client.changes_frame(args["apps"], **args["month"])
        out["error"] = None
    except Exception as exc:
        out["error"] = type(exc).__name__
        out["message"] = str(exc)
        out["raw"] = isinstance(exc, OSError)
    out["spent"] = client.spent
print(json.dumps(out))
"""


@pytest.mark.heavy
@pytest.mark.processes
def test_a_read_only_cache_folder_serves_what_it_holds_and_refuses_to_pay(monkeypatch):
    # chmod does not stop root: as root the child runs without the capabilities that pass over permissions
    # (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH), for which a folder of mode 0555 is read-only as for anyone
    command = [sys.executable]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("as root a read-only folder needs setpriv (util-linux) to drop CAP_DAC_OVERRIDE")
        command = [setpriv, "--bounding-set", "-dac_override,-dac_read_search", "--", sys.executable]
    base = Path(tempfile.mkdtemp(prefix="sf-read-only-"))
    folder = base / "cache"
    state = base / "state"
    state.mkdir()
    try:
        with SandboxServer(port=0, today=SANDBOX_TODAY) as server:
            with _client(server, folder) as writer:  # what the folder holds: the first 8 apps
                held = writer.changes_frame(APPS[:8], **MONTH).height
            paid = len(server.service.arrivals)
            for path in [folder, *folder.rglob("*")]:
                if path.is_dir():
                    path.chmod(0o555)
            args = {
                "key": SANDBOX_KEY,
                "base_url": server.base_url,
                "cache": str(folder),
                "today": SANDBOX_TODAY.isoformat(),
                "month": MONTH,
                "cached": APPS[:8],
                "apps": APPS[:16],
            }
            env = child_env(STOREFRAMES_STATE_DIR=str(state), HOME=str(state), STOREFRAMES_COORDINATOR=None)
            done = subprocess.run(
                [*command, "-c", _READ_ONLY_CHILD, json.dumps(args)],
                cwd=ROOT,
                env=env,
                capture_output=True,
                timeout=120,
            )
            assert done.returncode == 0, done.stderr.decode()[-3000:]
            out = json.loads(done.stdout.decode().strip().splitlines()[-1])
            assert out["cached_rows"] == held  # what it holds is served
            assert out["error"] == "CacheUnavailableError" and not out["raw"], out
            assert str(folder) in out["message"] and "read-only" in out["message"], out["message"]
            assert out["spent"] == 0 and len(server.service.arrivals) == paid  # nothing paid for the rest
            _record("backend failure: read-only folder", server, faults={"read-only folder": 1})
    finally:
        for path in [base, *base.rglob("*")]:
            if path.is_dir():
                path.chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)


# -- no credential in a traceback -------------------------------------------------------------------------------


def _secrets_in(exc: BaseException, secrets: tuple[str, ...]) -> list[str]:
    """Where a raised error shows a secret: its chain's messages, and the locals of storeframes' frames."""
    return exposures(exc, *secrets, frames=lambda filename: "storeframes" in filename and "/tests/" not in filename)


@pytest.mark.parametrize(
    "endpoint, problem",
    [
        ("http://10.1.2.3:9000", "a plain http endpoint off loopback"),
        ("ftp://127.0.0.1:9000", "an endpoint that is not http"),
        ("https://127.0.0.1:9000", "an option obstore refuses"),
    ],
)
def test_a_bucket_cache_that_cannot_be_built_leaves_no_secret_in_the_traceback(endpoint, problem):
    options = _options(endpoint)
    if problem == "an option obstore refuses":
        options["aws_virtual_hosted_style_request"] = "perhaps"
    with pytest.raises(sf.ConfigurationError) as caught:
        sf.Client(SANDBOX_KEY, cache_dir="s3://team-bucket/team", storage_options=options)
    assert not _secrets_in(caught.value, (SECRET_KEY, SESSION_TOKEN)), _secrets_in(caught.value, (SECRET_KEY,))
    with pytest.raises(ValueError) as direct:
        sf.Cache("s3://team-bucket/team", storage_options=options)
    assert not _secrets_in(direct.value, (SECRET_KEY, SESSION_TOKEN))


@pytest.mark.parametrize("variable", ["AZURITE_BLOB_STORAGE_URL", None])
def test_azures_emulator_switch_sends_no_plain_http_off_loopback(monkeypatch, variable):
    for name in [n for n in os.environ if n.startswith(("AZURE_", "AZURITE_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("AZURITE_BLOB_STORAGE_URL", "http://storage.example.com:10000")
    options = {"use_emulator": "true"} if variable else {}
    if variable is None:
        monkeypatch.setenv("AZURE_STORAGE_USE_EMULATOR", "true")
    with pytest.raises(sf.ConfigurationError, match="plain http") as caught:
        sf.Client(SANDBOX_KEY, cache_dir="az://container/team", storage_options=options or None)
    assert "storage.example.com" in str(caught.value)
    monkeypatch.setenv("AZURITE_BLOB_STORAGE_URL", "http://127.0.0.1:10000")  # Azurite on this machine: allowed
    sf.Client(SANDBOX_KEY, cache_dir="az://container/team", storage_options=options or None).close()
