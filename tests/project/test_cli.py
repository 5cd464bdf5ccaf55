"""The command line as a user runs it: demo, endpoints, sandbox serve, cache; README and CI agree."""

from __future__ import annotations

import io
import os
import re
import socket
import struct
import subprocess
import sys
import time
import warnings
from datetime import date
from urllib.parse import urlsplit

import pytest

from storeframes import AppsUnavailableWarning, Cache
from storeframes.cli import main
from storeframes.sandbox import SANDBOX_KEY, Dialect, World
from storeframes.sandbox import client as sandbox_client
from storeframes.wire.http import lib as httpx
from tests.conftest import ROOT

APPS = World(0).EXAMPLE_IOS_APPS
GONE = World(0).UNAVAILABLE_IN_US[0]


def test_endpoints_lists_the_catalog(capsys):
    assert main(["endpoints"]) == 0
    out = capsys.readouterr().out
    for name in ("metadata", "changes", "metrics", "benchmarks", "search_ads", "search_history"):
        assert name in out
    assert "base=1001" in out


@pytest.mark.processes
def test_sandbox_serve_prints_its_base_url_and_key_and_answers():
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "storeframes", "sandbox", "serve", "--port", "0", "--today", "2026-11-20"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        lines = [proc.stdout.readline() for _ in range(3)]
        base_url = re.search(r"STOREFRAMES_BASE_URL=(\S+)", "".join(lines)).group(1)
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/api/public/store", base_url)
        assert f"STOREFRAMES_API_KEY={SANDBOX_KEY}" in "".join(lines)
        deadline = time.monotonic() + 10
        while True:
            try:
                response = httpx.get(
                    f"{base_url}/keywords/search-results/current",
                    params={"keyword": "maps"},
                    headers={"x-service-key": SANDBOX_KEY},
                )
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert response.status_code == 200 and response.json()["result"]["date"] == "2026-11-20"
        assert proc.stdout.readline().strip() == "today 2026-11-20 (--today YYYY-MM-DD answers as on another day)"
    finally:
        proc.terminate()
        proc.communicate(timeout=30)  # its pipe read to the end and closed


@pytest.mark.processes
def test_sandbox_serve_takes_a_key_and_says_nothing_of_clients_that_went_away():
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "storeframes", "sandbox", "serve", "--port", "0", "--today", "2026-11-20",
         "--key", "my-own-sandbox-key", "--latency", "300"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        lines = "".join(proc.stdout.readline() for _ in range(3))
        assert "my-own-sandbox-key" not in lines and "STOREFRAMES_API_KEY=(the key given with --key)" in lines
        base_url = re.search(r"STOREFRAMES_BASE_URL=(\S+)", lines).group(1)
        url = f"{base_url}/keywords/search-results/history.json"
        params = {"keyword": "maps", "start_date": "2025-11-20", "end_date": "2026-11-19"}  # a large answer
        deadline = time.monotonic() + 10
        while True:
            try:
                refused = httpx.get(url, params=params, headers={"x-service-key": SANDBOX_KEY})
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert refused.status_code == 401
        ok = httpx.get(url, params=params, headers={"x-service-key": "my-own-sandbox-key"}, timeout=60)
        assert ok.status_code == 200
        port = int(re.search(r":(\d+)/", base_url).group(1))
        for _ in range(3):  # ask for the large answer and hang up before it is read
            with socket.create_connection(("127.0.0.1", port)) as raw:
                query = "&".join(f"{k}={v.replace(' ', '+')}" for k, v in params.items())
                raw.sendall(
                    f"GET {urlsplit(url).path}?{query} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    "x-service-key: my-own-sandbox-key\r\n\r\n".encode()
                )
                raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # a reset, not a FIN
        assert (
            httpx.get(url, params=params, headers={"x-service-key": "my-own-sandbox-key"}, timeout=60).status_code
            == 200
        )
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert "Traceback" not in err and "Exception occurred" not in err and "Error" not in err, err


def test_sandbox_serve_refuses_a_today_that_is_not_a_date(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["sandbox", "serve", "--port", "0", "--today", "20/11/2026"])
    assert exit_.value.code == 2
    assert "argument --today: expected a date as YYYY-MM-DD such as 2026-11-20, got '20/11/2026'" in (
        capsys.readouterr().err
    )


@pytest.mark.processes
def test_sandbox_serve_answers_in_the_dialect_given():
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "storeframes", "sandbox", "serve", "--port", "0", "--today", "2026-11-20",
         "--dialect", "power=app-power", "--dialect", "categories=genres", "--dialect", "keyword_level=true"],
        stdout=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        lines = [proc.stdout.readline() for _ in range(5)]
        assert lines[4].strip() == (
            'answering in sf.sandbox.Dialect(keyword_level=True, power="app-power", categories="genres")'
        )
        base_url = re.search(r"STOREFRAMES_BASE_URL=(\S+)", "".join(lines)).group(1)
        headers = {"x-service-key": SANDBOX_KEY}
        deadline = time.monotonic() + 10
        while True:
            try:
                params = {"apps": APPS[0], "metrics": "app-power", "device": "iphone"}
                metrics = httpx.get(f"{base_url}/apps/metrics/current.json", params=params, headers=headers)
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert list(metrics.json()["result"][APPS[0]]) == ["app-power"]
        meta = httpx.get(f"{base_url}/apps/metadata.json", params={"apps": APPS[0]}, headers=headers).json()
        assert (
            "genres" in meta["result"][APPS[0]]["metadata"] and "categories" not in meta["result"][APPS[0]]["metadata"]
        )
        search = httpx.get(f"{base_url}/keywords/search-results/current", params={"keyword": "maps"}, headers=headers)
        assert search.json()["result"]["maps"]["date"] == "2026-11-20"
    finally:
        proc.terminate()
        proc.communicate(timeout=30)  # its pipe read to the end and closed


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("colour=red", "invalid --dialect='colour=red': FIELD=VALUE with FIELD one of search, history, "
         "keyword_level, power, categories, size"),
        ("power=Power", "invalid --dialect='power=Power': the values of power: power, app-power "
         "(the first is the default)"),
        ("size=integer", "invalid --dialect='size=integer': the values of size: per_store, number, object "
         "(the first is the default)"),
        ("keyword_level=yes", "invalid --dialect='keyword_level=yes': the values of keyword_level: false, true "
         "(the first is the default)"),
    ],
)  # fmt: skip
def test_sandbox_serve_refuses_a_dialect_it_cannot_speak_before_it_serves(capsys, option, message):
    assert main(["sandbox", "serve", "--port", "0", "--dialect", option]) == 2
    out, err = capsys.readouterr()
    assert err.strip() == f"storeframes sandbox serve: InvalidParameterError: {message}" and "serving" not in out


def test_sandbox_serve_refuses_a_dialect_field_given_twice_or_without_a_value(capsys):
    assert main(["sandbox", "serve", "--port", "0", "--dialect", "size=number", "--dialect", "size=object"]) == 2
    assert "invalid --dialect='size=object': each field once; size is given twice" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        main(["sandbox", "serve", "--port", "0", "--dialect", "power"])
    assert exit_.value.code == 2
    assert "argument --dialect: expected FIELD=VALUE such as power=app-power, got 'power'" in capsys.readouterr().err


def test_sandbox_serve_help_lists_every_form_of_the_dialect(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")  # no line broken inside a form
    with pytest.raises(SystemExit):
        main(["sandbox", "serve", "--help"])
    text = capsys.readouterr().out
    for field, values in Dialect.FORMS.items():
        assert f"{field}={'|'.join(str(v).lower() for v in values)}" in text


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    quick_start = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    tests = readme.split("## Tests", 1)[1].split("\n## ", 1)[0]
    (demo_command,) = re.findall(r"```bash\n(.*?)\n```", quick_start, flags=re.S)
    (test_command,) = re.findall(r"```bash\n(.*?)\n```", tests, flags=re.S)
    assert "storeframes demo" in demo_command and "pytest" in test_command
    assert test_command in (ROOT / ".ci" / "run").read_text()


@pytest.fixture
def filled(tmp_path):
    """A cache folder with three answers: metadata of 3 apps (31 credits), one app not
    available (0), a search (10); asking metadata and search again saves 41 credits."""
    with sandbox_client(today=date(2026, 11, 20), cache_dir=tmp_path) as client:
        client.get("metadata", apps=list(APPS[:3]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", AppsUnavailableWarning)
            client.get("metadata", apps=[GONE])
        client.get("search", keyword="photo editor")
        client.get("metadata", apps=list(APPS[:3]))
        client.get("search", keyword="photo editor")
    assert len(Cache(tmp_path).entries()) == 3
    return tmp_path


def _info(out: str) -> dict[str, str]:
    return dict(line.split(":", 1) for line in out.splitlines())


def test_cache_info_prints_location_size_answers_and_credits(filled, capsys):
    assert main(["cache", "info", "--cache-dir", str(filled)]) == 0
    out = capsys.readouterr().out
    value_columns = {len(line) - len(line.split(":", 1)[1].lstrip()) for line in out.splitlines()}
    assert len(value_columns) == 1, out  # aligned key: value lines
    info = {key.strip(): value.strip() for key, value in _info(out).items()}
    assert info["cache"] == str(filled)
    assert re.fullmatch(r"\d+\.\d kB", info["size on disk"])
    size = sum(f.stat().st_size for f in filled.rglob("*") if f.is_file())
    assert info["size on disk"] == f"{size / 1000:.1f} kB"
    assert info["cached answers"] == "3"
    assert info["metadata"] == "2" and info["search"] == "1"
    assert "changes" not in info and "metrics" not in info  # only endpoints with answers
    # the answers are the sandbox's: its credits are on a line of their own, never the service's
    assert info["credits paid"] == "0" and info["credits spent"] == "0" and info["credits saved"] == "0"
    assert info["sandbox-0"] == "3 cached answers, 41 credits paid, 41 spent, 41 saved (not the service's credits)"
    assert "unreadable files" not in info
    assert "  metadata:" in out  # per endpoint, under the total


def test_cache_info_counts_unreadable_files(filled, capsys):
    next((filled / "index" / "endpoint=search").glob("*.parquet")).write_bytes(b"junk")
    assert main(["cache", "info", "--cache-dir", str(filled)]) == 0
    captured = capsys.readouterr()
    info = {key.strip(): value.strip() for key, value in _info(captured.out).items()}
    assert info["cached answers"] == "2" and "search" not in info
    assert info["unreadable files"].startswith("2 ")  # the index file and the answer it described
    assert "unreadable" in captured.err and "set aside" in captured.err


def test_cache_ls_prints_one_line_per_answer_oldest_first(filled, capsys):
    assert main(["cache", "ls", "--cache-dir", str(filled)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    first, gone, search = lines
    stamp = r"2026-11-20T\d\d:\d\d:\d\dZ"
    apps = ",".join(sorted(APPS[:3]))
    assert re.fullmatch(rf"{stamp}  metadata  31 credits  3 cells  apps={apps} country=us device=iphone", first)
    assert re.fullmatch(
        rf"{stamp}  metadata   0 credits  1 cell   apps={GONE} country=us device=iphone  \(not available\)", gone
    )
    assert re.fullmatch(
        rf'{stamp}  search    10 credits  1 cell   keyword="photo editor" country=us device=iphone', search
    )
    assert "{" not in "".join(lines)  # pairs, not JSON
    times = [line.split()[0] for line in lines]
    assert times == sorted(times)


def test_cache_ls_of_one_endpoint(filled, capsys):
    assert main(["cache", "ls", "search", "--cache-dir", str(filled)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1
    assert lines[0].split()[1:4] == ["search", "10", "credits"] and lines[0].endswith(
        'keyword="photo editor" country=us device=iphone'
    )
    assert main(["cache", "ls", "changes", "--cache-dir", str(filled)]) == 0
    assert capsys.readouterr().out == f"no cached changes answers in the cache at {filled}\n"


def test_cache_ls_of_an_unknown_endpoint_is_a_usage_error(filled, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["cache", "ls", "apps", "--cache-dir", str(filled)])
    assert exit_.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "invalid choice: 'apps'" in captured.err
    for name in ("metadata", "changes", "metrics", "benchmarks", "search", "search_ads", "search_history"):
        assert f"'{name}'" in captured.err


def test_cache_ls_of_an_empty_cache_says_so(tmp_path, capsys):
    folder = tmp_path / "nothing-yet"
    folder.mkdir()
    assert main(["cache", "ls", "--cache-dir", str(folder)]) == 0
    assert capsys.readouterr().out == f"the cache at {folder} is empty\n"
    assert main(["cache", "info", "--cache-dir", str(folder)]) == 0
    info = {key.strip(): value.strip() for key, value in _info(capsys.readouterr().out).items()}
    assert info["cached answers"] == "0" and info["size on disk"] == "0 B" and info["credits paid"] == "0"
    assert info["cache"] == str(folder)
    assert list(folder.iterdir()) == []  # looking writes nothing


@pytest.mark.parametrize("command", [["info"], ["ls"], ["ls", "search"], ["compact"], ["clear", "--yes"]])
def test_a_cache_folder_that_does_not_exist_is_named_not_called_empty(tmp_path, capsys, command):
    folder = tmp_path / "typo" / "cache"
    assert main(["cache", *command, "--cache-dir", str(folder)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"storeframes cache {command[0]}: the folder {folder} does not exist (given by --cache-dir): no cache there\n"
    )
    assert not (tmp_path / "typo").exists()  # nothing created


def test_a_missing_folder_from_the_environment_says_where_it_came_from(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "gone"
    monkeypatch.setenv("STOREFRAMES_CACHE_DIR", str(folder))
    assert main(["cache", "ls"]) == 2
    assert capsys.readouterr().err == (
        f"storeframes cache ls: the folder {folder} does not exist (given by $STOREFRAMES_CACHE_DIR): no cache there\n"
    )
    assert not folder.exists()


def test_cache_clear_of_one_endpoint_keeps_the_others_and_the_ledger(filled, capsys):
    assert main(["cache", "clear", "--yes", "--endpoint", "search", "--cache-dir", str(filled)]) == 0
    assert capsys.readouterr().out == f"removed 1 cached search answer from {filled}\n"
    left = Cache(filled).entries()
    assert [e.endpoint for e in left] == ["metadata", "metadata"]
    assert not list((filled / "answers" / "endpoint=search").glob("*"))
    assert Cache(filled).info()["by_service"]["sandbox-0"]["saved"] == 41  # the ledger is kept


def test_cache_clear_older_than(filled, capsys):
    # entries were kept moments ago (whatever day the sandbox dates them): not older than 100000 days, older than 0
    assert main(["cache", "clear", "-y", "--older-than", "100000", "--cache-dir", str(filled)]) == 0
    assert capsys.readouterr().out == f"removed 0 cached answers kept more than 100000 days ago from {filled}\n"
    assert len(Cache(filled).entries()) == 3
    assert main(["cache", "clear", "--yes", "--older-than", "0", "--cache-dir", str(filled)]) == 0
    assert capsys.readouterr().out == f"removed 3 cached answers kept more than 0 days ago from {filled}\n"
    assert Cache(filled).entries() == []
    assert main(["cache", "ls", "--cache-dir", str(filled)]) == 0
    assert capsys.readouterr().out == f"the cache at {filled} is empty\n"


def test_cache_clear_without_filters_clears_every_answer(filled, capsys):
    assert main(["cache", "clear", "--yes", "--cache-dir", str(filled)]) == 0
    assert capsys.readouterr().out == f"removed 3 cached answers from {filled}\n"
    assert Cache(filled).entries() == []
    info = Cache(filled).info()
    assert info["entries"] == 0 and info["by_service"]["sandbox-0"]["saved"] == 41


@pytest.mark.parametrize("days", ["-1", "soon", "nan", "inf"])
def test_cache_clear_rejects_a_bad_number_of_days(filled, capsys, days):
    with pytest.raises(SystemExit) as exit_:
        main(["cache", "clear", "--yes", "--older-than", days, "--cache-dir", str(filled)])
    assert exit_.value.code == 2
    assert (
        f"argument --older-than: expected a number of days such as 30 or 0.5, got '{days}'" in capsys.readouterr().err
    )
    assert len(Cache(filled).entries()) == 3


def test_cache_commands_use_the_environment_folder_by_default(filled, tmp_path_factory, monkeypatch, capsys):
    monkeypatch.setenv("STOREFRAMES_CACHE_DIR", str(filled))
    assert main(["cache", "info"]) == 0
    info = {key.strip(): value.strip() for key, value in _info(capsys.readouterr().out).items()}
    assert info["cache"] == str(filled) and info["cached answers"] == "3"
    assert main(["cache", "ls", "search"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1
    # --cache-dir wins over the environment
    other = tmp_path_factory.mktemp("other")
    assert main(["cache", "clear", "--yes", "--cache-dir", str(other)]) == 2  # an empty folder is no cache to clear
    captured = capsys.readouterr()
    assert captured.out == "" and f"{other} is not a storeframes cache (the folder is empty)" in captured.err
    assert len(Cache(filled).entries()) == 3
    assert main(["cache", "clear", "--endpoint", "metadata", "--yes"]) == 0
    assert capsys.readouterr().out == f"removed 2 cached metadata answers from {filled}\n"
    assert [e.endpoint for e in Cache(filled).entries()] == ["search"]


def test_a_missing_default_folder_is_named_as_the_default(tmp_path, monkeypatch, capsys):
    import storeframes.cache

    folder = tmp_path / "user-cache" / "storeframes"
    monkeypatch.delenv("STOREFRAMES_CACHE_DIR", raising=False)
    monkeypatch.setattr(storeframes.cache, "default_cache_dir", lambda: folder)
    assert main(["cache", "info"]) == 2
    assert capsys.readouterr().err == (
        f"storeframes cache info: the folder {folder} does not exist (the user's cache folder for storeframes, "
        "used when neither --cache-dir nor $STOREFRAMES_CACHE_DIR is given): no cache there\n"
    )
    assert not (tmp_path / "user-cache").exists()


# -- cache clear asks first ---------------------------------------------------------------------------


class _Terminal:
    """A stdin that is a terminal, with a user's answer typed in ("" is Ctrl-D: end of input)."""

    def __init__(self, answer: str):
        self.answer = answer
        self.asked = 0

    def isatty(self) -> bool:
        return True

    def readline(self) -> str:
        self.asked += 1
        return self.answer


def _clear_in_terminal(monkeypatch, answer: str, *args: str) -> _Terminal:
    terminal = _Terminal(answer)
    monkeypatch.setattr(sys, "stdin", terminal)
    return terminal


@pytest.mark.parametrize("answer", ["y\n", "yes\n", " Y \n", "YES\n"])
def test_cache_clear_in_a_terminal_asks_and_yes_removes(filled, monkeypatch, capsys, answer):
    terminal = _clear_in_terminal(monkeypatch, answer)
    assert main(["cache", "clear", "--cache-dir", str(filled)]) == 0
    captured = capsys.readouterr()
    assert terminal.asked == 1
    assert captured.err == (
        f"This removes 3 cached answers (2 metadata, 1 search) and their frames from {filled}; "
        "the ledger of credits is kept.\nDelete them? [y/N] "
    )
    assert captured.out == f"removed 3 cached answers from {filled}\n"
    assert Cache(filled).entries() == []


@pytest.mark.parametrize("answer", ["n\n", "\n", "no\n", "yep\n", "", "y es\n"])
def test_cache_clear_in_a_terminal_keeps_everything_unless_told_yes(filled, monkeypatch, capsys, answer):
    terminal = _clear_in_terminal(monkeypatch, answer)
    assert main(["cache", "clear", "--endpoint", "search", "--older-than", "0", "--cache-dir", str(filled)]) == 0
    captured = capsys.readouterr()
    assert terminal.asked == 1
    assert captured.err.startswith(
        f"This removes 1 cached search answer kept more than 0 days ago and its frames from {filled}; "
    )
    assert captured.err.endswith("Delete it? [y/N] " + ("\n" if answer == "" else ""))
    assert captured.out == "Nothing deleted.\n"
    assert len(Cache(filled).entries()) == 3


def test_cache_clear_in_a_terminal_names_the_unreadable_files_too(filled, monkeypatch, capsys):
    next((filled / "index" / "endpoint=search").glob("*.parquet")).write_bytes(b"junk")
    _clear_in_terminal(monkeypatch, "n\n")
    assert main(["cache", "clear", "--older-than", "100000", "--cache-dir", str(filled)]) == 0
    captured = capsys.readouterr()
    assert captured.err.startswith(
        f"This removes 0 cached answers kept more than 100000 days ago from {filled}, and the unreadable files "
        "set aside more than 100000 days ago (2 set aside in all); the ledger of credits is kept.\n"
        "Delete them? [y/N] storeframes cache: "  # then the warning naming what was set aside
    )
    assert captured.out == "Nothing deleted.\n"
    assert len(Cache(filled).entries()) == 2
    _clear_in_terminal(monkeypatch, "n\n")
    assert main(["cache", "clear", "--endpoint", "metadata", "--cache-dir", str(filled)]) == 0
    assert capsys.readouterr().err.startswith(
        f"This removes 2 cached metadata answers and their frames from {filled}; the ledger"
    )  # the files set aside are the search's: clearing metadata leaves them
    _clear_in_terminal(monkeypatch, "n\n")
    assert main(["cache", "clear", "--cache-dir", str(filled)]) == 0
    assert capsys.readouterr().err.startswith(
        f"This removes 2 cached answers (2 metadata) and their frames from {filled}, and 2 unreadable files set "
        "aside; the ledger of credits is kept.\nDelete them? [y/N] "
    )


def test_cache_clear_with_yes_does_not_ask(filled, monkeypatch, capsys):
    terminal = _clear_in_terminal(monkeypatch, "n\n")
    assert main(["cache", "clear", "-y", "--endpoint", "metadata", "--cache-dir", str(filled)]) == 0
    captured = capsys.readouterr()
    assert terminal.asked == 0 and captured.err == ""
    assert captured.out == f"removed 2 cached metadata answers from {filled}\n"


def test_cache_clear_without_a_terminal_refuses_unless_yes(filled, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))  # a pipe: nobody to ask, whatever it holds
    assert main(["cache", "clear", "--older-than", "0", "--cache-dir", str(filled)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"storeframes cache clear: this would remove 3 cached answers (2 metadata, 1 search) kept more than 0 "
        f"days ago and their frames from {filled}, but stdin is not a terminal, so nobody can be asked: "
        "pass --yes to delete without asking; nothing removed\n"
    )
    assert len(Cache(filled).entries()) == 3
    monkeypatch.setattr(sys, "stdin", None)  # no stdin at all
    assert main(["cache", "clear", "--cache-dir", str(filled)]) == 2
    assert "pass --yes" in capsys.readouterr().err and len(Cache(filled).entries()) == 3


def test_cache_clear_refuses_a_folder_that_is_no_cache_before_asking(tmp_path, monkeypatch, capsys):
    (tmp_path / "notes.txt").write_text("keep me")
    terminal = _clear_in_terminal(monkeypatch, "y\n")
    assert main(["cache", "clear", "--cache-dir", str(tmp_path)]) == 2
    assert terminal.asked == 0
    assert "is not a storeframes cache" in capsys.readouterr().err
    assert (tmp_path / "notes.txt").read_text() == "keep me"


def test_cache_clear_help_mentions_yes(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["cache", "clear", "--help"])
    assert exit_.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "-y, --yes" in out and "without asking" in out and "stdin is not a terminal" in out


def _clear_on_a_pty(folder, typed: bytes, *args: str) -> tuple[int, str, str]:
    """``storeframes cache clear`` in a child process whose stdin is a pseudo-terminal; ``typed`` is
    what the user types there."""
    import pty

    controller, terminal = pty.openpty()
    try:
        os.write(controller, typed)  # the terminal holds the line until the child reads it
        done = subprocess.run(
            [sys.executable, "-m", "storeframes", "cache", "clear", *args, "--cache-dir", str(folder)],
            stdin=terminal,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        os.close(terminal)
        os.close(controller)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.processes
def test_cache_clear_on_a_real_terminal_asks(filled):
    code, out, err = _clear_on_a_pty(filled, b"n\n", "--endpoint", "search")
    assert (code, out) == (0, "Nothing deleted.\n")
    assert (
        err
        == f"This removes 1 cached search answer and its frames from {filled}; the ledger of credits is kept.\n"
        + ("Delete it? [y/N] ")
    )
    assert len(Cache(filled).entries()) == 3
    code, out, err = _clear_on_a_pty(filled, b"y\n", "--endpoint", "search")
    assert (code, out) == (0, f"removed 1 cached search answer from {filled}\n")
    assert [e.endpoint for e in Cache(filled).entries()] == ["metadata", "metadata"]
    code, out, err = _clear_on_a_pty(filled, b"", "--yes")  # nothing typed: --yes does not ask
    assert (code, out, err) == (0, f"removed 2 cached answers from {filled}\n", "")
    assert Cache(filled).entries() == []


# -- demo: every refusal comes before its folder is made ------------------------------------------------


def _code(argv: list[str]) -> int:
    """main's exit status, a usage error's included."""
    try:
        return main(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)


LIVE_MISSING = (
    "storeframes demo: ConfigurationError: --live needs a token and the service's address: "
    "{missing} not set (set STOREFRAMES_API_KEY to the token and STOREFRAMES_BASE_URL to the service's "
    "https:// address)\n"
)


@pytest.mark.parametrize(
    ("env", "missing"),
    [
        ({}, "STOREFRAMES_API_KEY and STOREFRAMES_BASE_URL are"),
        ({"STOREFRAMES_BASE_URL": "https://api.example.com/api/public/store"}, "STOREFRAMES_API_KEY is"),
        ({"STOREFRAMES_API_KEY": "sk-live-0123456789abcdef"}, "STOREFRAMES_BASE_URL is"),
    ],
)
def test_demo_live_without_a_token_creates_no_folder(tmp_path, monkeypatch, capsys, fresh_default, env, missing):
    monkeypatch.delenv("STOREFRAMES_API_KEY", raising=False)
    monkeypatch.delenv("STOREFRAMES_BASE_URL", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    out = tmp_path / "demo-output"
    assert main(["demo", "--live", "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == LIVE_MISSING.format(missing=missing)
    assert "sk-live" not in captured.err
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--live"], "ConfigurationError: base_url 'http://api.example.com/api/public/store' uses plain http"),
        (["--days", "0"], "argument --days: expected a whole number of days >= 1 such as 90, got '0'"),
        (["--days", "-3"], "argument --days: expected a whole number of days >= 1 such as 90, got '-3'"),
        (["--days", "ten"], "argument --days: expected a whole number of days >= 1 such as 90, got 'ten'"),
        (
            ["--days", "100000000000"],
            "InvalidParameterError: invalid days=100000000000 for demo: at most 6,706 days (history starts on "
            "2008-07-10 and the demo's days end on 2026-11-18)",
        ),
        (["--country", "uk"], "InvalidParameterError: invalid country='uk' for search_history: not an ISO 3166-1"),
        (["--country", "zz"], "InvalidParameterError: invalid country='zz' for search_history"),
        (["--keywords", " , "], "argument --keywords: expected comma-separated keywords such as"),
        (["--keywords", "x" * 1001], "InvalidParameterError: invalid keyword="),
        (["--budget", "-5"], "argument --budget: expected a whole number of credits >= 0 such as 25000, got '-5'"),
        (["--app", "notanid"], "InvalidParameterError: invalid apps='notanid' for metadata"),
        (["--app", "com.example.photo"], "an android package name cannot be sent with device='iphone'"),
    ],
)
def test_demo_refusals_create_no_folder(tmp_path, monkeypatch, capsys, fresh_default, args, message):
    monkeypatch.setenv("STOREFRAMES_API_KEY", "sk-live-0123456789abcdef")
    monkeypatch.setenv("STOREFRAMES_BASE_URL", "http://api.example.com/api/public/store")  # only --live uses them
    out = tmp_path / "demo-output"
    assert _code(["demo", *args, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err
    assert "sk-live" not in captured.err
    assert not out.exists()


def test_demo_refuses_an_out_that_is_a_file(tmp_path, capsys, fresh_default):
    out = tmp_path / "report.txt"
    out.write_text("keep me")
    assert main(["demo", "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"storeframes demo: ConfigurationError: --out {out} is a file, not a folder: give a folder for the tables "
        "and charts\n"
    )
    assert out.read_text() == "keep me"
