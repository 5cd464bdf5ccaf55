"""A base URL with a user name and password (a gateway's) never reaches a log line: every logger at DEBUG (httpx's,
httpcore's, storeframes' own) through whole client calls against the sandbox over loopback, retries included; the
user name and password still reach the gateway, as HTTP basic authentication beside the token."""

from __future__ import annotations

import base64
import logging
from typing import Any

import pytest

import storeframes as sf
from storeframes.sandbox import SANDBOX_KEY, Faults, SandboxServer, SandboxService, World
from storeframes.wire.http import LOGGERS
from tests._hostile import Hostile, Reply, envelope

PASSWORD = "s3cretpw"
APPS = World(0).app_ids("ios")[:2]


def _with_user_info(base_url: str) -> str:
    return base_url.replace("http://", f"http://alice:{PASSWORD}@")


def _everything_said(records: list[logging.LogRecord]) -> list[str]:
    """Each record as a handler could write it: the message, its format and arguments, and any traceback."""
    said = []
    for record in records:
        said += [record.getMessage(), str(record.msg), repr(record.args)]
        if record.exc_info:
            said.append(logging.Formatter().formatException(record.exc_info))
    return said


@pytest.fixture
def every_logger_at_debug(caplog: pytest.LogCaptureFixture) -> Any:
    caplog.set_level(logging.DEBUG)
    for name in (*LOGGERS, "storeframes"):
        caplog.set_level(logging.DEBUG, logger=name)
    return caplog


def test_no_log_record_at_any_level_holds_the_base_urls_user_info(tmp_path, every_logger_at_debug):
    caplog = every_logger_at_debug
    service = SandboxService(faults=Faults(rate_limited=0.4, seed=3))  # some answers are 429s: retries are logged
    with SandboxServer(port=0, service=service) as server:
        url = _with_user_info(server.base_url)
        with sf.Client(SANDBOX_KEY, base_url=url, cache_dir=tmp_path / "c", progress=False, backoff=(0, 0.01)) as c:
            frame = c.metadata_frame(apps=APPS)
            c.search_frame("photo editor")
    assert frame.height == len(APPS)
    said = _everything_said(caplog.records)
    requests = [line for line in said if line.startswith("HTTP Request: GET")]
    assert requests and all(f"{server.base_url}/" in line for line in requests)  # httpx's lines, without user info
    assert any(r.name.startswith("httpcore") for r in caplog.records)  # httpcore's (or httpcore2's) debug lines too
    assert [line for line in said if PASSWORD in line or "alice:" in line] == []


def test_the_user_name_and_password_reach_the_gateway_as_basic_authentication(tmp_path, every_logger_at_debug):
    result = {"date": "2026-11-20", "value": ["284882215"]}
    with Hostile(Reply.json(envelope(result, cost=1), kind="ok")) as server:
        url = _with_user_info(server.base_url)
        with sf.Client("sk-live-gateway-0123456789", base_url=url, cache_dir=False, progress=False) as client:
            client.get("search", keyword="maps")
        headers = {k.lower(): v for k, v in server.seen[0].headers.items()}
    assert headers["authorization"] == "Basic " + base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    assert headers["x-service-key"] == "sk-live-gateway-0123456789"
    assert [line for line in _everything_said(every_logger_at_debug.records) if PASSWORD in line] == []


def test_a_url_with_user_info_that_reaches_httpxs_logger_anyway_is_masked(tmp_path, every_logger_at_debug):
    """The second line: a URL with user info logged through the loggers of httpx2, httpx or their connection
    layers (a caller's own http_client, of either library; a proxy) is masked once a client is made."""
    sf.Client(SANDBOX_KEY, base_url="http://127.0.0.1:9/api/public/store", cache_dir=False, progress=False).close()
    names = ("httpx", "httpcore.connection", "httpcore.proxy", "httpx2", "httpcore2.connection", "httpcore2.proxy")
    for name in names:
        logging.getLogger(name).info("HTTP Request: GET %s", f"https://bob:{PASSWORD}@gw.example/api/public/store/x")
    said = _everything_said(every_logger_at_debug.records)
    assert [line for line in said if PASSWORD in line] == []
    messages = [r.getMessage() for r in every_logger_at_debug.records]
    assert messages.count("HTTP Request: GET https://***@gw.example/api/public/store/x") == len(names)


@pytest.mark.parametrize(
    "url",
    [
        "https://gw.example/api/public/store?key=s3cretpw",
        "https://gw.example/api/public/store/?sig=s3cretpw&x=1",
        "https://gw.example/api/public/store#s3cretpw",
    ],
)
def test_a_base_url_with_a_query_or_fragment_is_refused_without_showing_it(url):
    """A query in the base URL would go into every request's URL (and httpx's log line) and break its path: it is
    refused when the client is made, the query not shown."""
    with pytest.raises(sf.ConfigurationError) as caught:
        sf.Client("sk-live-gateway-0123456789", base_url=url, cache_dir=False, progress=False)
    said = str(caught.value)
    assert PASSWORD not in said
    assert said.startswith("base_url 'https://gw.example/api/public/store") and "takes no query" in said
