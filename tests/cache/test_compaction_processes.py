"""Compaction while a team reads: offline readers, readers with a token and ``sf.scan`` LazyFrames, in
processes of their own, against two compactors of which one is SIGKILLed again and again, on a folder and
on a bucket (moto's S3 on loopback)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from storeframes.sandbox import World
from storeframes.sandbox import client as sandbox_client
from tests._children import child_env
from tests._summary import record
from tests.conftest import ROOT, SANDBOX_TODAY

pytestmark = [pytest.mark.processes, pytest.mark.s3]

WORLD = World(0)
_IOS = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US]
KEPT = _IOS[:10]  # in the cache before the race: every reader must find each of them, every time
NEW = _IOS[10:200]  # fetched during the race by the reader with a token: the compactors' work
SECONDS = 10.0

_READER = """
import json, sys, time
import polars as pl
import storeframes as sf
args = json.loads(sys.argv[1])
expected = pl.read_parquet(args["expected"])
kept, mode, cache_dir = args["kept"], args["mode"], args["cache_dir"]
failures, runs = [], 0

def check(frame, what):
    got = frame.filter(pl.col("app_id").is_in(kept)).select(expected.columns).sort("app_id", "position")
    if not got.equals(expected):
        failures.append(f"{what}: {got.height} rows of {expected.height}, or other values")

def client(**options):
    return sf.sandbox.client(today=args["today"], cache_dir=cache_dir, progress=False, rate_limit=(6000, 1.0),
                             backoff=(0.001, 0.01), **options)

early = sf.scan("versions", cache_dir=cache_dir) if mode == "scan" else None  # made before the compactions
reader = client(offline=True) if mode == "offline" else client() if mode == "token" else None
new = iter(args["new"])
end = time.monotonic() + args["seconds"]
def read_early():
    check(early.collect(), "a LazyFrame made before the compactions")

def read_scan():
    check(sf.scan("versions", cache_dir=cache_dir).filter(pl.col("app_id").is_in(kept)).collect(), "a scan")

def read_offline():
    check(reader.versions_frame(kept), "an offline client")

def read_with_token():
    app = next(new, None)
    if app is not None:
        reader.versions_frame([app])  # a new answer: small files for the compactors to merge
    sent = len(reader.sandbox_service.arrivals)
    check(reader.versions_frame(kept), "a client with a token")
    if len(reader.sandbox_service.arrivals) != sent:
        failures.append("a client with a token paid again for answers in the cache")

reads = {"scan": [read_early, read_scan], "offline": [read_offline], "token": [read_with_token]}[mode]
while time.monotonic() < end:
    for read in reads:
        runs += 1
        try:
            read()
        except Exception as exc:
            failures.append(f"{read.__name__}: {type(exc).__module__}.{type(exc).__name__}: {str(exc)[:120]}")
if reader is not None:
    reader.close()
print(json.dumps({"runs": runs, "failures": failures}))
"""

_COMPACTOR = """
import json, sys, time
import storeframes as sf
args = json.loads(sys.argv[1])
end = time.monotonic() + args["seconds"]
n = 0
print("started", flush=True)
while time.monotonic() < end:
    sf.compact(cache_dir=args["cache_dir"])
    n += 1
print(n)
"""


def _start(script: str, args: dict[str, Any], env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", script, json.dumps(args)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _race(cache_dir: str, tmp_path: Path, env: dict[str, str]) -> tuple[list[int], int, list[str], int, int]:
    """Fill ``cache_dir``, then run the readers against two compactors for :data:`SECONDS`; (reads of each
    reader, rows compared, failures, compactions of the compactor left alone, SIGKILLs of the other)."""
    with sandbox_client(today=SANDBOX_TODAY, cache_dir=cache_dir, progress=False, rate_limit=(6000, 1.0)) as filler:
        for app in KEPT:
            filler.versions_frame([app])
        expected = filler.versions_frame(KEPT).sort("app_id", "position")
    expected.write_parquet(tmp_path / "expected.parquet")
    base = {"cache_dir": cache_dir, "today": SANDBOX_TODAY.isoformat(), "seconds": SECONDS}
    reading = {**base, "expected": str(tmp_path / "expected.parquet"), "kept": KEPT, "new": NEW}
    readers = [_start(_READER, {**reading, "mode": mode}, env) for mode in ("offline", "token", "scan")]
    steady = _start(_COMPACTOR, base, env)
    kills = 0
    end = time.monotonic() + SECONDS
    rng = random.Random(34)
    while time.monotonic() < end:
        killed = _start(_COMPACTOR, {**base, "seconds": 600}, env)
        assert killed.stdout is not None
        killed.stdout.readline()  # started: compacting from now on
        time.sleep(rng.uniform(0.05, 0.6))
        os.kill(killed.pid, signal.SIGKILL)
        killed.communicate(timeout=60)
        kills += 1
    reads, failures = [], []
    for child in readers:
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, err.decode()[-3000:]
        done = json.loads(out.decode().strip().splitlines()[-1])
        reads.append(done["runs"])
        failures += done["failures"]
    out, err = steady.communicate(timeout=120)
    assert steady.returncode == 0, err.decode()[-3000:]
    return reads, sum(reads) * expected.height, failures, int(out.decode().split()[-1]), kills


@pytest.mark.heavy
@pytest.mark.parametrize("where", ["folder", "bucket"])
def test_readers_find_every_kept_answer_while_two_compactors_run_and_one_is_killed_again_and_again(
    where, tmp_path, request, monkeypatch
):
    if where == "bucket":
        bucket = request.getfixturevalue("s3_bucket")
        for name, value in bucket.env.items():  # credentials as a team sets them: the cloud's variables
            monkeypatch.setenv(name, value)
        cache_dir, env = bucket.url, child_env(**bucket.env)
    else:
        cache_dir, env = str(tmp_path / "cache"), child_env()
    reads, rows, failures, compactions, kills = _race(cache_dir, tmp_path, env)
    record(
        f"compaction under readers ({where}): 3 readers, 2 compactors, failures: {len(failures)}",
        faults={"compactor SIGKILLed": kills, "reader failed": len(failures)},
        requests=0,
        rows=rows,
    )
    assert compactions >= 1 and kills >= 2
    assert min(reads) >= 2  # every reader read again and again while the compactors ran
    kinds = Counter(failure[:100] for failure in failures).most_common(8)
    assert failures == [], f"failures: {len(failures)} of {sum(reads)} reads: {kinds}"
