"""``storeframes mcp --transport http`` answers its owner only: a loopback port is open to every user of the
machine, so every request must carry the bearer token the server said at start (or the one chosen in
``$STOREFRAMES_MCP_TOKEN``). Checked with the ``mcp`` SDK's own client over streamable HTTP (no token, a
wrong one, the right one), with plain requests, and with a client run as another local user; the ledger
says what was spent."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import polars as pl
import pytest

pytest.importorskip("mcp")

import anyio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from storeframes.cache import open_cache
from storeframes.wire.http import lib as httpx

from .._agent_month import replay, server_command, server_env

pytestmark = [pytest.mark.slow, pytest.mark.processes]

SERVICE = "sandbox-0"
NEW_APPS = ["2787512886", "361252007"]
"""Sandbox apps the month did not follow: fetching them costs 21 credits."""
FETCH = {"function": "metadata_frame", "arguments": {"apps": NEW_APPS}, "confirm": True}
CHOSEN = "owner-chosen-token-0123456789abcdefghijklmnop"
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def spec(tmp_path_factory) -> Path:
    """The replayed month's spec (its cache beside it)."""
    return replay(tmp_path_factory.mktemp("month"))


def spent(spec: Path) -> pl.DataFrame:
    cache = open_cache(str(spec.parent / "cache"), None)
    assert cache is not None
    return cache.ledger.read().filter(pl.col("service") == SERVICE)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(spec: Path, log: Path, **env: str) -> Iterator[tuple[str, str]]:
    """The server over HTTP on a free loopback port: its URL and what it said on stderr once listening."""
    port = _free_port()
    command, args = server_command(spec, "--transport", "http", "--port", str(port))
    with open(log, "w") as out:
        process = subprocess.Popen([command, *args], env=server_env(**env), stdout=out, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                    break
                except OSError:
                    assert process.poll() is None, log.read_text()
                    assert time.monotonic() < deadline, log.read_text()
                    time.sleep(0.2)
            yield f"http://127.0.0.1:{port}/mcp", log.read_text()
        finally:
            process.terminate()
            process.wait(timeout=30)


def told_token(said: str) -> str:
    found = re.findall(r"Authorization: Bearer (\S+)", said)
    assert len(found) == 1, said
    return found[0]


def refusals(exc: BaseException) -> list[BaseException]:
    """The errors a client's failure holds (through the task groups' exception groups)."""
    if isinstance(exc, BaseExceptionGroup):
        return [e for inner in exc.exceptions for e in refusals(inner)]
    return [exc]


def call(url: str, token: str | None, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """The SDK's own client over streamable HTTP, sending ``token`` as a bearer token (None: no header)."""
    headers = {"Authorization": f"Bearer {token}"} if token is not None else None

    async def go() -> list[Any]:
        async with create_mcp_http_client(headers=headers) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                return [await client.call_tool(name, arguments) for name, arguments in calls]

    return anyio.run(go)


def test_without_the_token_or_with_a_wrong_one_nothing_runs_and_nothing_is_spent(spec, tmp_path):
    before = spent(spec).height
    with serving(spec, tmp_path / "http.log") as (url, said):
        token = told_token(said)
        with pytest.raises(BaseException) as none:
            call(url, None, [("fetch_frame", FETCH)])
        with pytest.raises(BaseException) as wrong:
            call(url, token[:-4] + "AAAA", [("fetch_frame", FETCH)])
        log = (tmp_path / "http.log").read_text()
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "fetch_frame", "arguments": FETCH},
        }
        bare = httpx.post(url, json=body, headers=HEADERS)
        forged = httpx.post(url, json=body, headers={**HEADERS, "Authorization": "Bearer " + "x" * 43})
        odd = httpx.post(url, json=body, headers={**HEADERS, "Authorization": ("Bearer é" + token).encode("latin-1")})
        assert spent(spec).height == before  # refused before anything ran: not a request, not a cache hit
        (fetched,) = call(url, token, [("fetch_frame", FETCH)])
    for failed in (none.value, wrong.value):  # the SDK's client is refused: its first request answered 401
        assert [type(e).__name__ for e in refusals(failed)] == ["MCPError"], refusals(failed)
    statuses = re.findall(r'"[A-Z]+ /mcp HTTP/1.1" (\d+)', log)
    assert len(statuses) >= 2 and set(statuses) == {"401"}, log
    assert (bare.status_code, forged.status_code, odd.status_code) == (401, 401, 401)
    assert bare.json()["error"] == "invalid_token" and token not in bare.text + forged.text
    assert not fetched.is_error and fetched.structured_content["provenance"]["credits spent"] == 21
    assert int(spent(spec).slice(before)["cost"].sum()) == 21


def test_the_token_is_said_once_with_the_header_to_send_and_in_no_answer(spec, tmp_path):
    log = tmp_path / "http.log"
    with serving(spec, log) as (url, said):
        token = told_token(said)
        (described,) = call(url, token, [("describe", {})])
        refused = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=HEADERS)
    assert f"every request to {url} must send the header: Authorization: Bearer {token}" in said
    assert len(token) >= 43 and log.read_text().count(token) == 1  # never again, not in the access log
    assert not described.is_error and token not in described.model_dump_json() + refused.text


def test_a_token_chosen_in_the_environment_is_the_one_and_is_never_said(spec, tmp_path):
    log = tmp_path / "http.log"
    with serving(spec, log, STOREFRAMES_MCP_TOKEN=CHOSEN) as (url, said):
        (described,) = call(url, CHOSEN, [("describe", {})])
        with pytest.raises(BaseException) as wrong:
            call(url, CHOSEN[::-1], [("describe", {})])
    assert [type(e).__name__ for e in refusals(wrong.value)] == ["MCPError"]
    assert "Authorization: Bearer $STOREFRAMES_MCP_TOKEN" in said
    assert not described.is_error and CHOSEN not in log.read_text()


@pytest.mark.parametrize("chosen", ["short-token-123", "x" * 20 + " with spaces " + "y" * 20])
@pytest.mark.mcp
def test_a_short_or_odd_chosen_token_is_refused_before_the_server_starts(tmp_path, chosen):
    done = subprocess.run(
        [sys.executable, "-m", "storeframes", "mcp", "--sandbox", "--cache-dir", str(tmp_path), "--transport", "http"],
        env=server_env(STOREFRAMES_MCP_TOKEN=chosen),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "$STOREFRAMES_MCP_TOKEN is not a usable bearer token" in done.stderr and "at least 32" in done.stderr
    assert chosen.strip() not in done.stderr + done.stdout and "Traceback" not in done.stderr


ANOTHER_USER = """
import sys, anyio, httpx
from mcp import Client
body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "fetch_frame", "arguments": {"function": "metadata_frame", "arguments": {"apps": sys.argv[2:]}, "confirm": True}}}
answer = httpx.post(sys.argv[1], json=body, headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
print("status", answer.status_code)
async def go():
    async with Client(sys.argv[1]) as client:
        return await client.call_tool("spend", {})
try:
    anyio.run(go)
    print("sdk client: in")
except BaseException as exc:
    print("sdk client: refused", type(exc).__name__)
"""


@pytest.mark.mcp
def test_another_local_user_cannot_get_in_without_the_token(spec, tmp_path):
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        pytest.skip("running a client as another local user needs root and setpriv")
    nobody = [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    if subprocess.run([*nobody, sys.executable, "-c", "import mcp, httpx"], capture_output=True, timeout=60).returncode:
        pytest.skip("the user nobody cannot run this Python with the mcp SDK here")
    before = spent(spec).height
    with serving(spec, tmp_path / "http.log") as (url, _):
        done = subprocess.run(
            [*nobody, sys.executable, "-c", ANOTHER_USER, url, *NEW_APPS],
            capture_output=True,
            text=True,
            timeout=120,
            cwd="/",
            env={"PATH": os.environ.get("PATH", ""), "HOME": "/"},
        )
    assert done.returncode == 0, done.stderr
    assert "status 401" in done.stdout and "sdk client: refused" in done.stdout, done.stdout
    assert spent(spec).height == before
