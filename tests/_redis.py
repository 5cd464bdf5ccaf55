"""A real Redis server for the tests that need one: ``redis_url`` starts it, answers its URL, and stops it.

The server listens on a free loopback port, keeps nothing on disk (``--save ""
--appendonly no``) and is killed after the test. Without ``redis-server`` on the PATH
(Debian package ``redis-server``) or without redis-py, those tests are skipped.

Use it by importing the fixture into a test module: ``from ._redis import redis_url``.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["REDIS_MISSING", "RestartableRedis", "redis_server", "redis_url"]

REDIS_MISSING = "redis-server not installed (Debian package redis-server)"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def redis_server(
    folder: Path, *, timeout: float = 10.0, port: int | None = None, password: str | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``redis-server`` on a free loopback port (or ``port``), with ``password`` if given; (its process,
    its URL, with the password) once it answers PING."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip(REDIS_MISSING)
    redis = pytest.importorskip("redis", reason='redis-py not installed (pip install ".[redis]")')
    port = port or _free_port()
    command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    command += ["--dir", str(folder), "--protected-mode", "yes", "--loglevel", "warning"]
    if password is not None:
        command += ["--requirepass", password]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"redis://{f':{password}@' if password else ''}127.0.0.1:{port}/0"
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            said, _ = process.communicate()  # read to the end, and the pipe closed
            output = said.decode(errors="replace") if said else ""
            raise RuntimeError(f"redis-server exited with {process.returncode}: {output[-2000:]}")
        try:
            with redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=0.5) as probe:
                if probe.ping():
                    return process, url
        except redis.RedisError:
            pass
        if time.monotonic() > deadline:
            process.kill()
            process.communicate()
            raise RuntimeError(f"redis-server on port {port} did not answer PING within {timeout:g} s")
        time.sleep(0.02)


@pytest.fixture
def redis_url(tmp_path_factory) -> Iterator[str]:
    """The URL of a fresh, empty Redis server that lives for one test."""
    process, url = redis_server(tmp_path_factory.mktemp("redis"))
    try:
        yield url
    finally:
        process.kill()
        process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()


class RestartableRedis:
    """A ``redis-server`` on one loopback port that a test can kill and start again (empty: nothing is saved)."""

    def __init__(self, folder: Path, *, password: str | None = None):
        self.folder, self.password = folder, password
        folder.mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.url = ""
        self.start()

    def start(self) -> None:
        for _ in range(50):  # the port of a killed server may take a moment to be free
            try:
                self.process, self.url = redis_server(self.folder, port=self.port, password=self.password)
                return
            except RuntimeError:
                time.sleep(0.1)
        raise RuntimeError(f"redis-server could not start again on port {self.port}")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)
        if self.process is not None and self.process.stdout is not None:
            self.process.stdout.close()

    def restart(self) -> None:
        self.kill()
        self.start()
