"""The HTTP library storeframes sends through: httpx2 where it is installed (the ``mcp`` extra brings it), httpx
where it is not, either forced by ``$STOREFRAMES_HTTP``; and an ``http_client=`` of either library."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys

import pytest

import storeframes as sf
from storeframes.wire import http
from tests._hostile import Hostile, Reply, envelope
from tests.conftest import ROOT

INSTALLED = [name for name in http.LIBRARIES if importlib.util.find_spec(name) is not None]
TOKEN = "sk-live-seam-0123456789"
SEARCH = {"date": "2026-11-20", "value": ["284882215"]}

_SEND = """
import json, sys
{block}
import storeframes as sf
from storeframes.wire import http
with sf.sandbox.client(progress=False) as client:
    frame = client.metadata_frame(apps=list(client.sandbox_service.world.EXAMPLE_IOS_APPS)[:1])
    sent_with = type(client.wire.http).__module__.partition(".")[0]
print(json.dumps({{"in_use": http.NAME, "sent_with": sent_with, "rows": frame.height}}))
"""


def _child(block: str = "", **env: str) -> dict:
    """What a fresh interpreter says of the library it sends through (``block`` runs first)."""
    environ = {k: v for k, v in os.environ.items() if k != http.ENV} | {"PYTHONPATH": str(ROOT), **env}
    code = _SEND.format(block=block)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environ, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_with_every_extra_installed_storeframes_sends_through_httpx2():
    """httpx2 is preferred wherever it is installed; the mcp extra brings it, so an environment with every extra
    has one HTTP stack in use."""
    said = _child()
    expected = "httpx2" if "httpx2" in INSTALLED else "httpx"
    assert said == {"in_use": expected, "sent_with": expected, "rows": 1}
    if importlib.util.find_spec("mcp") is not None:
        assert any(r.startswith("httpx2") for r in importlib.metadata.requires("mcp") or [])
        assert said["in_use"] == "httpx2"


def test_without_httpx2_storeframes_sends_through_httpx():
    said = _child(block="sys.modules['httpx2'] = None  # as if it were not installed")
    assert said == {"in_use": "httpx", "sent_with": "httpx", "rows": 1}


@pytest.mark.parametrize("name", INSTALLED)
def test_the_environment_variable_forces_a_library(name):
    assert _child(**{http.ENV: name}) == {"in_use": name, "sent_with": name, "rows": 1}


def test_an_unknown_library_in_the_environment_variable_is_refused_saying_what_is_allowed(monkeypatch):
    monkeypatch.setenv(http.ENV, "requests")
    with pytest.raises(sf.ConfigurationError) as caught:
        http.choose()
    assert str(caught.value) == (
        "$STOREFRAMES_HTTP is 'requests': it names the HTTP library storeframes sends through, one of httpx2, httpx "
        "(or unset: httpx2 when it is installed, else httpx)"
    )


def test_a_forced_library_that_is_not_installed_is_refused_saying_how_to_install_it():
    code = "import sys; sys.modules['httpx2'] = None\nfrom storeframes.wire import http"
    environ = {**os.environ, "PYTHONPATH": str(ROOT), http.ENV: "httpx2"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environ, timeout=60)
    assert done.returncode == 1
    assert (
        "storeframes.errors.ConfigurationError: $STOREFRAMES_HTTP is 'httpx2' but httpx2 is not installed: "
        "pip install httpx2, or unset $STOREFRAMES_HTTP"
    ) in done.stderr


@pytest.mark.parametrize("name", INSTALLED)
def test_an_http_client_of_either_library_sends_and_its_failures_are_the_clients_errors(name):
    """A caller's client of either library is sent through with that library's auth flow (the token in its
    header, masked afterwards) and its errors: a connection dropped is a TransportError, never the library's."""
    library = importlib.import_module(name)
    with Hostile(Reply.json(envelope(SEARCH, cost=1))) as server, library.Client() as own:
        with sf.Client(TOKEN, base_url=server.base_url, http_client=own, cache_dir=False, progress=False) as client:
            answer = client.get("search", keyword="maps")
        assert answer.result == SEARCH and not own.is_closed  # the caller's client stays the caller's
        assert {k.lower(): v for k, v in server.seen[0].headers.items()}["x-service-key"] == TOKEN
    with Hostile(Reply.json(envelope(SEARCH, cost=1), kind="cut body", cut=10)) as server, library.Client() as own:
        options = {"http_client": own, "cache_dir": False, "progress": False, "max_tries": 2, "backoff": (0, 0)}
        with sf.Client(TOKEN, base_url=server.base_url, **options) as client:
            with pytest.raises(sf.TransportError) as caught:
                client.get("search", keyword="maps")
    assert caught.value.__context__ is None and TOKEN not in str(caught.value)


def test_an_http_client_of_another_kind_is_refused_naming_what_is_allowed():
    class Session:  # what a caller of another library might hand over
        timeout = 30.0
        is_closed = False

    with pytest.raises(sf.ConfigurationError) as caught:
        sf.Client(TOKEN, base_url="https://api.example/api/public/store", http_client=Session(), cache_dir=False)
    assert str(caught.value) == (
        "http_client must be an httpx2.Client or an httpx.Client (or a subclass of one), got a "
        "tests.wire.test_http_seam.Session"
    )
