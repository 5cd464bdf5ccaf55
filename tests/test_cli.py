"""The command line as a user runs it: demo, endpoints, sandbox serve; README and CI agree."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import httpx

from storeframes.cli import main
from storeframes.sandbox import SANDBOX_KEY

from .conftest import ROOT


def test_demo_prints_frames_and_the_ledger(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "sandbox" in out
    assert "1. Metadata of 6 iphone apps: 2 requests" in out
    assert "2. Live search" in out and "3. Conversion benchmarks" in out
    match = re.search(r"4\. The ledger: (\d+) credits in (\d+) requests", out)
    assert match and match.group(2) == "4" and int(match.group(1)) == 62 + 10 + 1001
    assert SANDBOX_KEY not in out


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
