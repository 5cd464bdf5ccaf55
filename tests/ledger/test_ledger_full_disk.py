"""A tracker run on a full disk: no credit the service charged goes unrecorded.

The cache is on a small tmpfs filled to a few hundred kilobytes of its end, so the disk fills
up in the middle of a run against the sandbox on loopback (whose ``arrivals`` say what it
charged). A request goes out only once its reservation is in the ledger, so the ledger holds
every credit charged; the run stops with an error naming the cause; its row is ended (by the run
itself, or, when even that cannot be written, by the next run, from the ledger).
"""

from __future__ import annotations

import json
import os
import subprocess
import warnings
from pathlib import Path

import pytest

import storeframes as sf
from storeframes.cli import main
from storeframes.sandbox import SANDBOX_KEY, SandboxServer
from tests.conftest import SANDBOX_TODAY

pytestmark = pytest.mark.processes

KEYWORDS = [f"photo editor {n}" for n in range(40)]
FREE = 150_000
"""Bytes left on the disk when the run starts: room for the run's first few answers."""


def _mounted(folder: Path) -> bool:
    """Mount a 2 MB tmpfs at ``folder``; False where mounting is not allowed."""
    folder.mkdir(parents=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(folder)], capture_output=True, check=False
    )
    return done.returncode == 0


@pytest.mark.heavy
@pytest.mark.timeout(180)
def test_a_run_that_fills_the_disk_leaves_no_charged_credit_out_of_the_ledger(tmp_path, monkeypatch, capsys):
    disk = tmp_path / "disk"
    if not _mounted(disk):
        pytest.skip("a tmpfs cannot be mounted here (not root, or no mount namespace)")
    try:
        cache_dir = disk / "cache"
        spec = tmp_path / "tracking.toml"
        spec.write_text(
            f'[tracker]\nname = "keywords"\ncache_dir = {json.dumps(str(cache_dir))}\n\n'
            f'[[track]]\nendpoint = "search"\nkeywords = {json.dumps(KEYWORDS)}\n',
            encoding="utf-8",
        )
        home = tmp_path / "home"
        (home / "state").mkdir(parents=True)
        filler = disk / "filler"
        room = os.statvfs(disk)
        filler.write_bytes(b"\0" * (room.f_bavail * room.f_frsize - FREE))
        with SandboxServer(port=0, today=SANDBOX_TODAY) as server:
            service = {"STOREFRAMES_BASE_URL": server.base_url, "STOREFRAMES_API_KEY": SANDBOX_KEY}
            for name, value in {**service, "HOME": str(home), "STOREFRAMES_STATE_DIR": str(home / "state")}.items():
                monkeypatch.setenv(name, value)
            arrivals = server.service.arrivals
            run = ["track", "run", str(spec), "--today", SANDBOX_TODAY.isoformat()]
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                assert main(run) == 3  # stopped: the disk is full
            said = capsys.readouterr()
            assert "No space left on device" in said.out + said.err and SANDBOX_KEY not in said.out + said.err
            # the run's own result is said, not hidden by a lease that could not be released on the full disk
            assert f"keywords run on {SANDBOX_TODAY}: failed" in said.out, said.out + said.err
            assert "  error: search: CacheUnavailableError: " in said.out and "No space left on device" in said.out
            assert all(issubclass(w.category, sf.CacheWarning) for w in caught)
            first = list(arrivals)
            charged = sum(a.cost for a in first)
            assert 0 < len(first) < len(KEYWORDS) and charged > 0

            # not one credit the service charged is missing from the ledger
            ledger = sf.Cache(cache_dir).ledger.read()
            assert ledger["cost"].sum() == charged
            assert {a.params["keyword"] for a in first} <= {json.loads(p)["keyword"] for p in ledger["params"]}

            # room again: the next run ends the first one's row (if it could not) and fetches the rest
            filler.unlink()
            assert main(run) == 0
            log = sf.Tracker.from_toml(spec).runs()
            assert log["status"].to_list()[1] == "ok"
            row = log.row(0, named=True)
            assert row["status"] in ("failed", "interrupted") and row["status"] != "running"
            assert row["requests"] == len(first) and row["credits_spent"] == charged
            assert sf.Cache(cache_dir).ledger.read()["cost"].sum() == sum(a.cost for a in arrivals)
            kept = {entry.params["keyword"] for entry in sf.Cache(cache_dir).entries("search")}
            assert kept == set(KEYWORDS)
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)
