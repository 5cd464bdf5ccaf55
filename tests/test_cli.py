"""The command line as a user runs it: demo, endpoints, sandbox serve, cache; README and CI agree."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import warnings
from datetime import date

import httpx
import pytest

from storeframes import AppsUnavailableWarning, Cache
from storeframes.cli import main
from storeframes.sandbox import SANDBOX_KEY, World
from storeframes.sandbox import client as sandbox_client

from .conftest import ROOT

APPS = World(0).EXAMPLE_IOS_APPS
GONE = World(0).UNAVAILABLE_IN_US[0]


def test_endpoints_lists_the_catalog(capsys):
    assert main(["endpoints"]) == 0
    out = capsys.readouterr().out
    for name in ("metadata", "changes", "metrics", "benchmarks", "search_ads", "search_history"):
        assert name in out
    assert "base=1001" in out


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
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)\n```", readme.split("## Using a real token")[0], flags=re.S)
    assert len(blocks) == 2, "the quick start has exactly two commands"
    demo_command, test_command = blocks
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
    assert main(["cache", "ls", "--cache-dir", str(folder)]) == 0
    assert capsys.readouterr().out == f"the cache at {folder} is empty\n"
    assert not folder.exists()  # looking does not create the folder
    assert main(["cache", "info", "--cache-dir", str(folder)]) == 0
    info = {key.strip(): value.strip() for key, value in _info(capsys.readouterr().out).items()}
    assert info["cached answers"] == "0" and info["size on disk"] == "0 B" and info["credits paid"] == "0"
    assert info["cache"] == f"{folder} (not created yet)"


def test_cache_clear_of_one_endpoint_keeps_the_others_and_the_ledger(filled, capsys):
    assert main(["cache", "clear", "--endpoint", "search", "--cache-dir", str(filled)]) == 0
    assert capsys.readouterr().out == f"removed 1 cached search answer from {filled}\n"
    left = Cache(filled).entries()
    assert [e.endpoint for e in left] == ["metadata", "metadata"]
    assert not list((filled / "answers" / "endpoint=search").glob("*"))
    assert Cache(filled).info()["by_service"]["sandbox-0"]["saved"] == 41  # the ledger is kept


def test_cache_clear_older_than(filled, capsys):
    # entries are dated the sandbox's today, 2026-11-20: not older than 100000 days, older than 0
    assert main(["cache", "clear", "--older-than", "100000", "--cache-dir", str(filled)]) == 0
    assert capsys.readouterr().out == f"removed 0 cached answers fetched more than 100000 days ago from {filled}\n"
    assert len(Cache(filled).entries()) == 3
    assert main(["cache", "clear", "--older-than", "0", "--cache-dir", str(filled)]) == 0
    assert capsys.readouterr().out == f"removed 3 cached answers fetched more than 0 days ago from {filled}\n"
    assert Cache(filled).entries() == []
    assert main(["cache", "ls", "--cache-dir", str(filled)]) == 0
    assert capsys.readouterr().out == f"the cache at {filled} is empty\n"


def test_cache_clear_without_filters_clears_every_answer(filled, capsys):
    assert main(["cache", "clear", "--cache-dir", str(filled)]) == 0
    assert capsys.readouterr().out == f"removed 3 cached answers from {filled}\n"
    assert Cache(filled).entries() == []
    info = Cache(filled).info()
    assert info["entries"] == 0 and info["by_service"]["sandbox-0"]["saved"] == 41


@pytest.mark.parametrize("days", ["-1", "soon", "nan", "inf"])
def test_cache_clear_rejects_a_bad_number_of_days(filled, capsys, days):
    with pytest.raises(SystemExit) as exit_:
        main(["cache", "clear", "--older-than", days, "--cache-dir", str(filled)])
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
    assert main(["cache", "clear", "--cache-dir", str(other)]) == 2  # an empty folder is no cache to clear
    captured = capsys.readouterr()
    assert captured.out == "" and f"{other} is not a storeframes cache (the folder is empty)" in captured.err
    assert len(Cache(filled).entries()) == 3
    assert main(["cache", "clear", "--endpoint", "metadata"]) == 0
    assert capsys.readouterr().out == f"removed 2 cached metadata answers from {filled}\n"
    assert [e.endpoint for e in Cache(filled).entries()] == ["search"]
