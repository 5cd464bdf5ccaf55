"""``storeframes sandbox serve`` refuses what it cannot do in one line on stderr with exit status 2, as ``storeframes
mcp`` does, never with a traceback: a host that is not a loopback address, a port another program listens on. Run
as a user runs it, in a child process."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

import storeframes as sf
from storeframes.sandbox import SandboxServer


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "storeframes", "sandbox", "serve", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.7", "example.com"])
@pytest.mark.processes
def test_a_host_that_is_not_loopback_is_one_line_and_exit_2(host):
    done = _serve("--host", host, "--port", "0")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"storeframes sandbox serve: --host must be a loopback address (127.0.0.1, ::1, localhost), not {host!r}"
    ]
    assert "serving" not in done.stdout


@pytest.mark.processes
def test_a_port_in_use_is_one_line_and_exit_2():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = _serve("--port", str(port))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"storeframes sandbox serve: cannot listen on 127.0.0.1:{port}: another program listens there; "
        "pick another port (port 0 takes any free one)"
    ]
    assert "serving" not in done.stdout


def test_the_server_itself_refuses_with_a_storeframes_error():
    with pytest.raises(sf.ConfigurationError, match=r"only on a loopback address .* not '0\.0\.0\.0'"):
        SandboxServer(host="0.0.0.0")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        with pytest.raises(sf.ConfigurationError, match=f"cannot listen on 127.0.0.1:{port}: another program"):
            SandboxServer(port=port)
