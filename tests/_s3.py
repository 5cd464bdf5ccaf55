"""An S3 server for the tests that need one: moto's, in this process, on loopback.

``s3_server`` (session) starts moto's S3 on a free loopback port; ``s3_bucket`` (each
test) makes a fresh bucket on it, removes every cloud variable of this machine from the
environment (``AWS_*``, ``GOOGLE_*``, ``AZURE_*``: nothing reaches a real account) and
answers where it is and how to reach it. Without moto, boto3 or obstore those tests are
skipped. ``refusing_server`` is a loopback server that answers every request with an
error, the way S3 does when a signature does not match: its body repeats the access key
and the signed headers, session token included.

Use them by importing the fixtures into a test module or conftest.py:
``from ._s3 import s3_bucket, s3_server``.
"""

from __future__ import annotations

import logging
import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

__all__ = [
    "ACCESS_KEY",
    "REGION",
    "SECRET_KEY",
    "SESSION_TOKEN",
    "S3Bucket",
    "S3Server",
    "clean_cloud_env",
    "free_port",
    "refusing_server",
    "s3_bucket",
    "s3_server",
]

ACCESS_KEY = "AKIAFAKEMOTO0TESTKEY"
SECRET_KEY = "fake/moto+secret-0123456789abcdefghijklmn"
SESSION_TOKEN = "FwoGZXIvYXdzEfakeSessionToken0123456789"
REGION = "us-east-1"
CLOUD_VARIABLES = ("AWS_", "GOOGLE_", "AZURE_")


def _requirements() -> Any:
    """moto's server module, or a skip naming what to install (obstore, boto3 and moto[server] are all needed)."""
    import importlib

    try:
        for module in ("obstore", "boto3"):
            importlib.import_module(module)
        return importlib.import_module("moto.server")
    except ImportError as exc:
        pytest.skip(
            f'an S3 test server needs obstore, boto3 and moto[server] (pip install ".[s3]" --group test): {exc}'
        )


def free_port() -> int:
    """A loopback port nothing listens on (at the time of asking)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def clean_cloud_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Remove every cloud variable of this machine; no configuration file or metadata service is read either."""
    import os

    for name in list(os.environ):
        if name.startswith(CLOUD_VARIABLES):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@dataclass
class S3Server:
    """moto's S3 on loopback: its endpoint, and a boto3 client on it."""

    endpoint: str
    stop: Callable[[], None]
    client: Any = None


def _one_write_at_a_time(app: Callable[..., Any]) -> Callable[..., Any]:
    """moto checks a condition (If-None-Match, If-Match) and then writes, in two steps, where S3 does
    both at once: with one write at a time, moto's conditional writes are atomic like S3's."""
    lock = threading.Lock()

    def serialised(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        if environ.get("REQUEST_METHOD") in ("PUT", "POST", "DELETE"):
            with lock:
                return list(app(environ, start_response))
        return app(environ, start_response)

    return serialised


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """moto's S3 server in this process, on a free loopback port, for the whole session."""
    moto_server = _requirements()
    import boto3

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per request
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    server._server.app = _one_write_at_a_time(server._server.app)
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
        region_name=REGION,
    )
    running = S3Server(endpoint, server.stop, client)
    try:
        yield running
    finally:
        server.stop()


@dataclass
class S3Bucket:
    """A fresh bucket on the test server, and the ways to reach it."""

    name: str
    endpoint: str
    client: Any = field(repr=False)
    prefix: str = "cache"

    @property
    def url(self) -> str:
        """``s3://<bucket>/cache``: where an ObjectStore keeps its values."""
        return f"s3://{self.name}/{self.prefix}"

    @property
    def storage_options(self) -> dict[str, str]:
        """The options that reach the bucket, credentials included (the environment holds none)."""
        return {
            "aws_access_key_id": ACCESS_KEY,
            "aws_secret_access_key": SECRET_KEY,
            "aws_endpoint_url": self.endpoint,
            "aws_region": REGION,
        }

    @property
    def env(self) -> dict[str, str]:
        """The same as environment variables, for a child process or ``monkeypatch.setenv``."""
        return {name.upper(): value for name, value in self.storage_options.items()}  # AWS_ACCESS_KEY_ID ...

    def objects(self) -> dict[str, bytes]:
        """Every object of the bucket (any prefix), by its full key: to check what was written."""
        found: dict[str, bytes] = {}
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=self.name):
            for item in page.get("Contents", []):
                found[item["Key"]] = self.client.get_object(Bucket=self.name, Key=item["Key"])["Body"].read()
        return found

    def backdate(self, key: str, seconds: float) -> None:
        """Make the object ``key`` (under the prefix) look written ``seconds`` earlier, as S3 would date it then."""
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.s3.models import s3_backends

        stored = s3_backends[DEFAULT_ACCOUNT_ID]["aws"].get_object(self.name, f"{self.prefix}/{key}")
        assert stored is not None, f"no object {key!r} in {self.name}"
        stored.last_modified -= timedelta(seconds=seconds)


@pytest.fixture
def s3_bucket(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> Iterator[S3Bucket]:
    """A new, empty bucket on the loopback S3 server, with no cloud variable of this machine in the environment."""
    clean_cloud_env(monkeypatch)
    name = f"sf-{uuid.uuid4().hex[:24]}"
    s3_server.client.create_bucket(Bucket=name)
    yield S3Bucket(name, s3_server.endpoint, s3_server.client)


class _Refusing(BaseHTTPRequestHandler):
    """Answers like S3 to a request whose signature does not match: 403, repeating what was signed."""

    status = 403
    code = "SignatureDoesNotMatch"

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.server.seen.append({k.lower(): v for k, v in self.headers.items()})  # type: ignore[attr-defined]
        signed = "\n".join(f"{k.lower()}:{v}" for k, v in self.headers.items())
        body = (
            '<?xml version="1.0" encoding="UTF-8"?>\n<Error>'
            f"<Code>{self.code}</Code><Message>The request signature we calculated does not match</Message>"
            f"<AWSAccessKeyId>{self._access_key()}</AWSAccessKeyId>"
            f"<CanonicalRequest>{self.command} {self.path}\n{signed}</CanonicalRequest>"
            "</Error>"
        ).encode()
        self.send_response(self.status)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _access_key(self) -> str:
        authorization = self.headers.get("Authorization", "")
        return authorization.partition("Credential=")[2].partition("/")[0]

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def refusing_server(
    status: int = 403, code: str = "SignatureDoesNotMatch"
) -> Iterator[tuple[str, list[dict[str, str]]]]:
    """A loopback server answering every request with ``status`` and an S3 error body that repeats the
    access key and every signed header (the session token among them); yields its endpoint and the
    headers of the requests it saw."""
    handler = type("Handler", (_Refusing,), {"status": status, "code": code})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.seen = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", server.seen  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
