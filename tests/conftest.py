"""Shared fixtures: the sandbox in-process and on loopback, and the cassette recorder.

Cassettes
---------
Client tests replay HTTP interactions recorded in ``cassettes/`` (vcrpy). By default
they replay only (record mode ``none``): no server runs and a missing interaction fails
the test. To re-record from the loopback sandbox::

    rm cassettes/*.yaml && STOREFRAMES_RECORD=all python -m pytest tests/frames/test_cassettes.py tests/frames/test_cassette_frames.py

Against the real service (costs credits), with a token and base URL; tests marked
``live`` are skipped when either is missing. With ``STOREFRAMES_RECORD=all`` their traffic
is also written, scrubbed, to ``cassettes/live/``::

    STOREFRAMES_API_KEY=... STOREFRAMES_BASE_URL=https://... python -m pytest -m live
    STOREFRAMES_RECORD=all STOREFRAMES_API_KEY=... STOREFRAMES_BASE_URL=https://... python -m pytest -m live
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
import vcr

from storeframes import Client, defaults
from storeframes.sandbox import SANDBOX_KEY, SandboxServer
from storeframes.sandbox import client as sandbox_client

from ._s3 import s3_bucket, s3_server  # noqa: F401 - fixtures: moto's S3 on loopback, a fresh bucket

pytest_plugins = ["pytester"]  # tests/project/test_contributing.py runs a small suite of its own

ROOT = Path(__file__).resolve().parent.parent
CASSETTES = ROOT / "cassettes"
SANDBOX_TODAY = date(2026, 11, 20)
"""The sandbox's today for recordings and deterministic tests."""
REPLAY_BASE_URL = "http://127.0.0.1:8765/api/public/store"
RECORD_MODE = os.environ.get("STOREFRAMES_RECORD", "none")
SCRUBBED = "REDACTED"


def _stable_request(request):
    """Record every loopback port as the replay address, so re-recordings diff cleanly."""
    request.uri = re.sub(r"^http://127\.0\.0\.1:\d+", "http://127.0.0.1:8765", request.uri)
    for name in [n for n in request.headers if n.lower() == "host"]:
        request.headers[name] = re.sub(r"^127\.0\.0\.1:\d+$", "127.0.0.1:8765", request.headers[name])
    return request


def _scrub_response(response: dict) -> dict:
    response["headers"].pop("date", None)
    response["headers"].pop("Date", None)
    body = response.get("body", {}).get("string", b"")
    for secret in _secrets():
        if isinstance(body, bytes):
            body = body.replace(secret.encode(), SCRUBBED.encode())
        else:
            body = body.replace(secret, SCRUBBED)
    response["body"]["string"] = body
    return response


def _secrets() -> list[str]:
    values = [SANDBOX_KEY, os.environ.get("STOREFRAMES_API_KEY", ""), "not-the-key"]
    return [v for v in values if v]


recorder = vcr.VCR(
    cassette_library_dir=str(CASSETTES),
    record_mode=RECORD_MODE,
    match_on=["method", "path", "query"],
    filter_headers=[("x-service-key", SCRUBBED)],
    before_record_request=_stable_request,
    before_record_response=_scrub_response,
    decode_compressed_response=True,
)


@contextmanager
def recorded(
    name: str, *, api_key: str = SANDBOX_KEY, client_options: dict | None = None, **server_options
) -> Iterator[Client]:
    """A client whose traffic is the cassette ``name``.

    When recording, a loopback sandbox with ``server_options`` answers; when
    replaying, nothing listens and every request must be in the cassette.
    """
    options = {"max_workers": 1, "backoff": (0.001, 0.01), "cache_dir": False, **(client_options or {})}
    with recorder.use_cassette(f"{name}.yaml"):
        if RECORD_MODE == "none":
            with Client(api_key, base_url=REPLAY_BASE_URL, **options) as client:
                yield client
        else:
            server_options.setdefault("today", SANDBOX_TODAY)
            with (
                SandboxServer(port=0, **server_options) as server,
                Client(api_key, base_url=server.base_url, **options) as client,
            ):
                yield client


@contextmanager
def live(name: str, *, budget: int, **client_options) -> Iterator[Client]:
    """A client on the real service (token and base URL from the environment) under ``budget``.

    With ``STOREFRAMES_RECORD=all`` its traffic is also kept as ``cassettes/live/<name>.yaml``,
    with the token header filtered and the token scrubbed from bodies.
    """
    options = {"cache_dir": False, "progress": False, **client_options}
    with Client(budget=budget, **options) as client:
        if RECORD_MODE == "none":
            yield client
            return
        with recorder.use_cassette(f"live/{name}.yaml", record_mode=RECORD_MODE):
            yield client


@pytest.fixture(scope="session", autouse=True)
def _no_token_in_any_file_the_suite_wrote(tmp_path_factory):
    """After the run: no cassette and no file the tests wrote (cache folders, demo output,
    executed notebooks) holds a token or a key-shaped string. A leak fails the session."""
    yield
    from ._secrets import leaks_in

    leaks = leaks_in(CASSETTES) + leaks_in(tmp_path_factory.getbasetemp())
    assert not leaks, "a token was written to disk:\n" + "\n".join(leaks[:20])


@pytest.fixture(autouse=True)
def _own_cache_folder(tmp_path_factory, monkeypatch):
    """Every test gets an empty cache folder of its own and starts online."""
    monkeypatch.setenv("STOREFRAMES_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.setenv("STOREFRAMES_STATE_DIR", str(tmp_path_factory.mktemp("state")))
    monkeypatch.delenv("STOREFRAMES_OFFLINE", raising=False)
    from storeframes.lake import read as lake_read

    monkeypatch.setattr(lake_read, "_READS", [])  # the published tables read, noted per process: none yet


FAST_BACKOFF = (0.001, 0.01)
"""The retries' backoff in the tests: a fault costs milliseconds, not seconds."""


def sandbox_clock() -> datetime:
    """The sandbox's today at the current time of day, as :func:`storeframes.sandbox.client` keeps it.

    A plain function (not a fixture): clients of child processes are given it, so it must pickle.
    """
    return datetime.combine(SANDBOX_TODAY, datetime.now(UTC).time(), UTC)


def sandbox_client_on(day: date, cache_dir: Any, **options: Any) -> Client:
    """An in-process sandbox client whose today is ``day``, caching in ``cache_dir``, with fast retries."""
    return sandbox_client(today=day, cache_dir=cache_dir, progress=False, backoff=FAST_BACKOFF, **options)


def loopback_client(base_url: str, cache_dir: Any, **options: Any) -> Client:
    """A client of a sandbox (or a misbehaving server) on loopback, with the sandbox's key and clock."""
    options = {"progress": False, "clock": sandbox_clock, **options}
    return Client(SANDBOX_KEY, base_url=base_url, cache_dir=cache_dir, **options)


@pytest.fixture
def make_client() -> Iterator[Callable[..., Client]]:
    """Build clients with the suite's defaults; every client made is closed at teardown.

    ``make_client(**options)`` is an in-process sandbox client (fixed today, fast retries, no
    progress bars, no cache unless ``cache_dir`` is given); ``make_client(server=running, ...)``
    is a client of a sandbox on loopback, with the sandbox's key. Any option of
    :class:`~storeframes.Client` overrides a default; closing a client early (``with``) is harmless.
    """
    made: list[Client] = []

    def make(*, server: SandboxServer | None = None, **options: Any) -> Client:
        options = {"backoff": FAST_BACKOFF, "progress": False, "cache_dir": False, **options}
        if server is None:
            client: Client = sandbox_client(today=SANDBOX_TODAY, **options)
        else:
            client = Client(SANDBOX_KEY, base_url=server.base_url, **options)
        made.append(client)
        return client

    yield make
    for client in reversed(made):
        client.close()


@pytest.fixture
def sandbox(make_client) -> Client:
    """An in-process sandbox client with a fixed today and fast retries, caching in a folder of its own."""
    return make_client(cache_dir=None, progress=None)


@pytest.fixture
def server() -> Iterator[SandboxServer]:
    """The sandbox on loopback, with a fixed today."""
    with SandboxServer(port=0, today=SANDBOX_TODAY) as running:
        yield running


NEEDS = {"s3_server": "s3", "s3_bucket": "s3", "redis_url": "redis"}
"""The fixtures that start a real server, and the marker a test that asks for one must carry."""


def unmarked(items: list[pytest.Item]) -> list[str]:
    """The tests that ask for a server's fixture without the marker that names it (see :data:`NEEDS`)."""
    return [
        f"{item.nodeid} asks for {fixture} but is not marked {marker}"
        for item in items
        for fixture, marker in NEEDS.items()
        if fixture in getattr(item, "fixturenames", ()) and item.get_closest_marker(marker) is None
    ]


def pytest_collection_modifyitems(config, items):
    """Refuse a test that needs a server its markers do not name (a plain ``pytest`` would start it);
    skip tests marked ``live`` unless a real token and base URL are configured."""
    wrong = unmarked(items)
    if wrong:
        raise pytest.UsageError("tests need a marker (pyproject's markers, CONTRIBUTING.md):\n" + "\n".join(wrong))
    if os.environ.get("STOREFRAMES_API_KEY") and os.environ.get("STOREFRAMES_BASE_URL"):
        return
    skip = pytest.mark.skip(reason="live: set STOREFRAMES_API_KEY and STOREFRAMES_BASE_URL to run")
    for item in items:
        if "live" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def fresh_default():
    """Leave the package's default client as it was."""
    saved = defaults._client, defaults._owned
    defaults._client, defaults._owned = None, False
    yield
    if defaults._client is not None and defaults._owned and defaults._client is not saved[0]:
        defaults._client.close()
    defaults._client, defaults._owned = saved


def pytest_sessionfinish(session):
    """A worker of a parallel run (pytest-xdist) hands its reliability figures to the process that prints them."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        from ._summary import exported

        workeroutput["reliability"] = exported()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """The figures of a worker that finished, added to the summary (pytest-xdist's hook; absent without it)."""
    from ._summary import LOST, imported

    text = getattr(node, "workeroutput", {}).get("reliability")
    if text is None:  # it crashed: the summary must not read as whole
        LOST.append(str(getattr(getattr(node, "gateway", None), "id", node)))
    else:
        imported(text)


DOCS_BLOCKS: dict[str, dict[str, int]] = {}
"""Per docs page, the code blocks that ran, were marked not run, were shown output (tests/project/test_docs_blocks.py)."""


def pytest_runtest_logreport(report):
    """Gather each docs page's counts of blocks from its test's report (in this process, or handed over by a worker)."""
    if report.when == "call" and report.passed:
        for name, value in report.user_properties:
            if name == "docs blocks":
                page, counts = value
                DOCS_BLOCKS[page] = counts


def pytest_terminal_summary(terminalreporter):
    """After the run: the reliability summary (faults injected, retries, requests, rows compared), and how many
    of the docs' code blocks ran (and the pages with blocks marked not run)."""
    from ._summary import print_summary

    print_summary(terminalreporter)
    if DOCS_BLOCKS:
        total = {
            what: sum(counts[what] for counts in DOCS_BLOCKS.values()) for what in next(iter(DOCS_BLOCKS.values()))
        }
        terminalreporter.write_sep("=", "docs code blocks")
        terminalreporter.write_line(
            f"{len(DOCS_BLOCKS)} pages: " + ", ".join(f"{n} {what}" for what, n in total.items())
        )
        for page, counts in sorted(DOCS_BLOCKS.items()):  # the pages with blocks that were not run
            if counts["marked not run"]:
                terminalreporter.write_line(f"  {page}: " + ", ".join(f"{n} {what}" for what, n in counts.items()))
