"""sf.connect with no token: a folder of the real service's answers reproduces, offline; the sandbox only
for a folder that is empty or holds sandbox answers.

The real service is stood in for by the sandbox on loopback: a plain :class:`~storeframes.Client` with
its address fills a folder with answers that count as the real service's (``service``).
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import storeframes as sf
from storeframes.cache import Cache
from storeframes.ledger import SERVICE
from storeframes.sandbox import SANDBOX_KEY, SandboxClient, SandboxServer, World
from tests.conftest import SANDBOX_TODAY, sandbox_clock

WORLD = World(0)
APPS = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US][:6]
OTHER_APP = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US][7]
KEYWORDS = list(WORLD.EXAMPLE_KEYWORDS[:2])
MONTH = {"start": "2026-10-01", "end": "2026-10-31"}
TOKEN = "sk-live-connect-secret-0123456789"


def _frames() -> dict[str, pl.DataFrame]:
    """The notebook: frames of the package functions (the default client that connect installed)."""
    return {
        "metadata": sf.metadata_frame(APPS),
        "versions": sf.versions_frame(APPS),
        "changes": sf.changes_frame(APPS[:3], **MONTH),
        "search_history": sf.search_history_frame(KEYWORDS, **MONTH),
        "days": sf.search_history_frame(KEYWORDS[:1], days=10, end=MONTH["end"]),
    }


def _fill_from_service(folder: Path | str, **options: Any) -> dict[str, pl.DataFrame]:
    """Fill ``folder`` from the stand-in of the real service on loopback; the frames it made."""
    with SandboxServer(port=0, today=SANDBOX_TODAY) as server:
        client = sf.Client(SANDBOX_KEY, base_url=server.base_url, cache_dir=folder, clock=sandbox_clock, **options)
        with client:
            sf.configure(client)
            frames = _frames()
            assert client.spent > 0 and client.namespace == "service"
    return frames


def _fill_from_sandbox(folder: Path) -> pl.DataFrame:
    with sf.sandbox.client(today=SANDBOX_TODAY, cache_dir=folder) as client:
        frame = client.metadata_frame(APPS)
        assert client.spent > 0
    return frame


def _answer_files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for kind in ("answers", "index") for p in (folder / kind).rglob("*"))


def _services(folder: Path) -> set[str]:
    return {e.service for e in Cache(folder).entries()}


@pytest.fixture
def no_token(monkeypatch):
    monkeypatch.delenv("STOREFRAMES_API_KEY", raising=False)
    monkeypatch.delenv("STOREFRAMES_BASE_URL", raising=False)


def test_a_folder_of_the_real_service_reproduces_with_no_token_online_and_offline(
    fresh_default, no_token, monkeypatch, tmp_path, capsys
):
    folder = tmp_path / "shared"
    fetched = _fill_from_service(folder)
    files = _answer_files(folder)
    assert files and _services(folder) == {"service"}
    capsys.readouterr()
    # the service is gone; a colleague with no token, online
    client = sf.connect(folder)
    banner = capsys.readouterr().out
    assert banner.startswith(
        f"storeframes: the real service's answers in {folder} (no STOREFRAMES_API_KEY set): offline, served from "
        "the cache only; a request it lacks raises NotCachedError\ntoday is "
    )
    assert banner.strip().endswith(f"\ntoday is {datetime.now(UTC).date()}")  # the real today: the answers are dated
    assert not isinstance(client, SandboxClient) and client.offline and sf.default_client() is client
    assert client.namespace == "service" and "api_key=missing" in repr(client) and "offline" in repr(client)
    for name, frame in _frames().items():
        assert frame.equals(fetched[name]), name
    assert client.spent == 0 and client.requests_sent == 0 and client.saved > 0
    with pytest.raises(sf.NotCachedError) as missed:
        sf.metadata_frame([OTHER_APP])
    message = str(missed.value)
    assert "holds the real service's answers" in message and "set STOREFRAMES_API_KEY" in message
    assert missed.value.endpoint == "metadata" and missed.value.requests[0]["apps"] == OTHER_APP
    # and offline, as STOREFRAMES_OFFLINE=1 says
    monkeypatch.setenv("STOREFRAMES_OFFLINE", "1")
    again = sf.connect(folder, quiet=True)
    assert capsys.readouterr().out == "" and again.offline and client.wire.closed
    for name, frame in _frames().items():
        assert frame.equals(fetched[name]), name
    with pytest.raises(sf.NotCachedError, match="a token"):
        sf.changes_frame(APPS[:1], start="2026-09-01", end="2026-09-30")
    again.close()
    # nothing of the sandbox's was written, and no answer was added
    assert _answer_files(folder) == files
    assert _services(folder) == {"service"}
    assert not any(name.startswith("sandbox") for name in Cache(folder).info()["by_service"])


def test_the_folder_named_by_the_environment_reproduces_too(fresh_default, no_token, monkeypatch, tmp_path, capsys):
    folder = tmp_path / "shared"
    fetched = _fill_from_service(folder)
    monkeypatch.setenv("STOREFRAMES_CACHE_DIR", str(folder))
    client = sf.connect(quiet=True)
    assert not isinstance(client, SandboxClient) and client.offline
    assert_frame_equal(sf.metadata_frame(APPS), fetched["metadata"])


def test_a_compacted_folder_of_the_real_service_is_known_too(fresh_default, no_token, tmp_path):
    folder = tmp_path / "shared"
    fetched = _fill_from_service(folder)
    sf.compact(folder)
    assert all(p.name.startswith("part-") for p in (folder / "index").rglob("*.parquet"))
    assert Cache(folder).holds(SERVICE)
    client = sf.connect(folder, quiet=True)
    assert not isinstance(client, SandboxClient)
    assert_frame_equal(sf.search_history_frame(KEYWORDS, **MONTH), fetched["search_history"])


def test_an_empty_folder_gets_the_sandbox(fresh_default, no_token, tmp_path, capsys):
    assert not Cache(tmp_path / "empty").holds(SERVICE)
    client = sf.connect(tmp_path / "empty", sandbox_today="2026-11-20")
    assert capsys.readouterr().out.startswith("storeframes: the sandbox (no STOREFRAMES_API_KEY set)")
    assert isinstance(client, SandboxClient) and not client.offline
    assert sf.metadata_frame(APPS[:1]).height == 1 and client.spent > 0
    assert _services(tmp_path / "empty") == {"sandbox-0"}


NOTEBOOK_LINE = 100
"""Characters of a line a notebook's output shows unwrapped (about 1,000 px wide): past it, a line wraps anywhere."""


def test_the_connect_lines_keep_today_whole_on_a_short_line_of_its_own(fresh_default, no_token, tmp_path, capsys):
    """A notebook's output wraps a long line at any character, in the middle of a date too ("2026-1" / "1-20"):
    the service, today and the cache are lines of their own, the date at the start of a short one."""
    deep = tmp_path / ("a-cache-folder-with-a-long-name-" * 3) / "competitor_watch-cache"
    sf.connect(deep, budget=20_000, sandbox_today="2026-11-20")
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "storeframes: the sandbox (no STOREFRAMES_API_KEY set), a deterministic fake: nothing is billed",
        "today is 2026-11-20; budget 20,000 credits",
        f"cache: {deep}",
    ]
    assert all(len(line) <= NOTEBOOK_LINE for line in lines[:2])  # the cache's path may be long: it comes last
    sf.connect(deep, sandbox_today="2026-11-20", offline=True)
    assert capsys.readouterr().out.splitlines()[1:] == [
        "today is 2026-11-20",
        f"cache: {deep}; offline: answers come from the cache only",
    ]


def test_a_folder_of_sandbox_answers_gets_the_sandbox_and_its_answers(fresh_default, no_token, tmp_path, capsys):
    folder = tmp_path / "sandbox"
    first = _fill_from_sandbox(folder)
    assert not Cache(folder).holds(SERVICE)
    client = sf.connect(folder, sandbox_today=SANDBOX_TODAY)
    assert "the sandbox (no STOREFRAMES_API_KEY set)" in capsys.readouterr().out
    assert isinstance(client, SandboxClient)
    assert_frame_equal(sf.metadata_frame(APPS), first)
    assert client.spent == 0


def test_a_folder_of_both_serves_the_real_answers_only(fresh_default, no_token, tmp_path, capsys):
    folder = tmp_path / "mixed"
    sandboxed = _fill_from_sandbox(folder)
    fetched = _fill_from_service(folder)
    assert _services(folder) == {"service", "sandbox-0"}
    files = _answer_files(folder)
    client = sf.connect(folder)
    assert "the real service's answers in" in capsys.readouterr().out
    assert not isinstance(client, SandboxClient) and client.offline
    metadata = sf.metadata_frame(APPS)
    assert_frame_equal(metadata, fetched["metadata"])
    assert not metadata.equals(sandboxed)  # fetched at other times: the real answers, not the sandbox's
    assert _answer_files(folder) == files


def test_live_false_refuses_a_folder_of_the_real_service(fresh_default, no_token, monkeypatch, tmp_path):
    folder = tmp_path / "shared"
    _fill_from_service(folder)
    files = _answer_files(folder)
    with pytest.raises(sf.ConfigurationError, match=r"live=False asks for the sandbox, .* cache_dir of its own"):
        sf.connect(folder, live=False)
    monkeypatch.setenv("STOREFRAMES_API_KEY", TOKEN)  # a token does not change what live=False asks for
    monkeypatch.setenv("STOREFRAMES_BASE_URL", "https://api.example.com/api/public/store")
    with pytest.raises(sf.ConfigurationError, match="live=False"):
        sf.connect(folder, live=False)
    assert _answer_files(folder) == files and _services(folder) == {"service"}
    # with the token, live=None means the real service, whatever the folder holds
    client = sf.connect(folder, quiet=True)
    assert not isinstance(client, SandboxClient) and not client.offline


def test_a_token_without_the_address_serves_the_folder_and_never_shows_the_token(
    fresh_default, no_token, monkeypatch, tmp_path, capsys
):
    folder = tmp_path / "shared"
    fetched = _fill_from_service(folder)
    monkeypatch.setenv("STOREFRAMES_API_KEY", TOKEN)
    client = sf.connect(folder)
    banner = capsys.readouterr().out
    assert "the real service's answers in" in banner and "(no STOREFRAMES_BASE_URL set)" in banner
    assert TOKEN not in banner and TOKEN not in repr(client) and client.offline
    assert_frame_equal(sf.versions_frame(APPS), fetched["versions"])
    with pytest.raises(sf.NotCachedError) as missed:
        sf.metadata_frame([OTHER_APP])
    assert TOKEN not in str(missed.value)


@pytest.mark.s3
def test_a_bucket_of_the_real_service_reproduces_with_no_token(fresh_default, no_token, s3_bucket, capsys):
    fetched = _fill_from_service(s3_bucket.url, storage_options=s3_bucket.storage_options)
    keys = sorted(k for k in s3_bucket.objects() if "/answers/" in k or "/index/" in k)
    client = sf.connect(s3_bucket.url, storage_options=s3_bucket.storage_options)
    banner = capsys.readouterr().out
    assert f"the real service's answers in {s3_bucket.url}" in banner
    assert not isinstance(client, SandboxClient) and client.offline
    assert_frame_equal(sf.metadata_frame(APPS), fetched["metadata"])
    assert sorted(k for k in s3_bucket.objects() if "/answers/" in k or "/index/" in k) == keys


def test_the_sandbox_today_is_not_the_real_today(fresh_default, no_token, tmp_path):
    sf.connect(tmp_path / "sandbox", sandbox_today="2026-11-20", quiet=True)
    assert sf.today() == date(2026, 11, 20)
    folder = tmp_path / "shared"
    _fill_from_service(folder)
    sf.connect(folder, sandbox_today="2026-11-20", quiet=True)  # the real answers: the real today
    assert sf.today() == datetime.now(UTC).date()


def test_knowing_a_folder_of_the_real_service_reads_one_file(no_token, tmp_path, monkeypatch):
    folder = tmp_path / "shared"
    _fill_from_service(folder)
    cache = Cache(folder)
    indexed = len(list((folder / "index").rglob("*.parquet")))
    read: list[str] = []
    get = cache.storage.get
    monkeypatch.setattr(cache.storage, "get", lambda key: read.append(key) or get(key))
    assert cache.holds(SERVICE)
    assert indexed >= 5 and len([k for k in read if k.startswith("index/")]) == 1


@pytest.mark.parametrize("option", ["sandbox", "apikey", "max_retries"])
def test_an_option_no_client_takes_is_refused_by_name_never_its_value(fresh_default, no_token, tmp_path, option):
    """sf.connect(sandbox=True) once reached SandboxService as a TypeError; a mistyped api_key must not be shown."""
    with pytest.raises(sf.InvalidParameterError) as caught:
        sf.connect(tmp_path / "cache", quiet=True, **{option: "sf-secret-value-1234"})
    message = str(caught.value)
    assert f"invalid option='{option}' for connect" in message
    assert "api_key" in message and "max_tries" in message and "sandbox_today" in message  # what is allowed
    assert "sf-secret-value-1234" not in message and "sf-secret-value-1234" not in repr(caught.value)
    assert not (tmp_path / "cache").exists()  # refused before anything was made


def test_the_sandbox_services_own_options_go_through_connect(fresh_default, no_token, tmp_path):
    client = sf.connect(tmp_path / "cache", quiet=True, latency=0.0, max_tries=2)
    assert isinstance(client, SandboxClient)
    assert client.wire.max_tries == 2 and client.sandbox_service.latency == 0.0
