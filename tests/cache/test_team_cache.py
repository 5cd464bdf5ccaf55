"""A team's cache in a bucket: moto's S3 server on loopback, the sandbox on loopback as the service."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from typing import Any

import polars as pl
import pytest

import storeframes as sf
from storeframes.cli import main
from storeframes.sandbox import SANDBOX_KEY, SandboxServer, World
from tests._children import child_env
from tests._summary import paid_twice
from tests.conftest import ROOT, SANDBOX_TODAY, loopback_client, sandbox_clock

WORLD = World(0)
APPS = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US][:12]
KEYWORDS = list(WORLD.EXAMPLE_KEYWORDS[:2])
MONTH = {"start": "2026-10-01", "end": "2026-10-31"}


def _client(server: SandboxServer | None, bucket: Any, **options: Any) -> sf.Client:
    options = {"rate_limit": (600, 1.0), "backoff": (0.01, 0.1), "progress": False, "clock": sandbox_clock, **options}
    if server is None:  # no token and no service: what the bucket holds
        return sf.Client(None, cache_dir=bucket.url, offline=True, **options)
    return loopback_client(server.base_url, bucket.url, **options)


def _frames(client: sf.Client) -> dict[str, pl.DataFrame]:
    return {
        "metadata": client.metadata_frame(APPS),
        "versions": client.versions_frame(APPS),
        "search_history": client.search_history_frame(KEYWORDS, **MONTH),
        "changes": client.changes_frame(APPS[:4], **MONTH),
    }


def _unpacked(objects: dict[str, bytes]) -> dict[str, bytes]:
    return {k: gzip.decompress(v) if k.endswith(".gz") else v for k, v in objects.items()}


@pytest.mark.s3
def test_a_bucket_serves_a_team_fetch_once_reproduce_anywhere(s3_bucket, monkeypatch):
    for name, value in s3_bucket.env.items():  # credentials as a team sets them: the cloud's variables
        monkeypatch.setenv(name, value)
    with SandboxServer(port=0, today=SANDBOX_TODAY) as server:
        with _client(server, s3_bucket) as first:
            fetched = _frames(first)
            assert first.cache is not None and first.cache.path is None
            paid = len(server.service.arrivals)
        assert paid > 0
        with _client(server, s3_bucket) as colleague:  # another machine with the token: sends nothing
            for name, frame in _frames(colleague).items():
                assert frame.equals(fetched[name]), name
            assert len(server.service.arrivals) == paid and colleague.spent == 0
    monkeypatch.delenv("STOREFRAMES_API_KEY", raising=False)
    with _client(None, s3_bucket) as offline:  # no token, no service
        for name, frame in _frames(offline).items():
            assert frame.equals(fetched[name]), name
    assert (
        sf.scan("versions", cache_dir=s3_bucket.url)
        .collect()
        .sort("app_id", "position")
        .equals(fetched["versions"].sort("app_id", "position"))
    )
    history = sf.scan("search_history", cache_dir=s3_bucket.url).collect()
    assert history.sort("keyword", "date", "rank").equals(fetched["search_history"].sort("keyword", "date", "rank"))
    objects = _unpacked(s3_bucket.objects())
    assert any(k.startswith("cache/ledger/") for k in objects) and any(
        k.startswith("cache/frames/table=") for k in objects
    )
    for key, data in objects.items():
        assert SANDBOX_KEY.encode() not in data, key


@pytest.mark.s3
def test_compaction_in_a_bucket_keeps_every_frame(s3_bucket):
    options = {"storage_options": s3_bucket.storage_options}
    with SandboxServer(port=0, today=SANDBOX_TODAY) as server:
        with _client(server, s3_bucket, **options) as first:
            for app in APPS:
                first.versions_frame([app])
            versions = first.versions_frame(APPS)
    before = [k for k in s3_bucket.objects() if "/index/" in k]
    done = sf.compact(cache_dir=s3_bucket.url, storage_options=s3_bucket.storage_options)
    after = [k for k in s3_bucket.objects() if "/index/" in k]
    assert len(before) == len(APPS) and len(after) == 1 and done["index_files_merged"] == len(APPS)
    with _client(None, s3_bucket, **options) as offline:
        assert offline.versions_frame(APPS).equals(versions)
        shown = f"{offline!r} {offline.cache!r} {offline.cache.storage!r} {offline.cache.location}"
        assert s3_bucket.url in shown
        assert not any(value in shown for value in s3_bucket.storage_options.values() if "http" not in value)


@pytest.mark.s3
def test_cache_info_ls_and_clear_on_a_bucket(s3_bucket, monkeypatch, capsys):
    for name, value in s3_bucket.env.items():
        monkeypatch.setenv(name, value)
    with SandboxServer(port=0, today=SANDBOX_TODAY) as server, _client(server, s3_bucket) as client:
        client.metadata_frame(APPS[:3])
        cost = client.spent
    assert main(["cache", "info", "--cache-dir", s3_bucket.url]) == 0
    out = capsys.readouterr().out
    assert s3_bucket.url in out and "cached answers: 1" in out and f"credits paid:   {cost:,}" in out
    assert "AWS" not in out and s3_bucket.env["AWS_SECRET_ACCESS_KEY"] not in out
    assert main(["cache", "ls", "--cache-dir", s3_bucket.url]) == 0
    assert "metadata" in capsys.readouterr().out
    assert main(["cache", "clear", "--yes", "--cache-dir", s3_bucket.url]) == 0
    assert "removed 1 cached answer" in capsys.readouterr().out
    assert not [k for k in s3_bucket.objects() if "/answers/" in k or "/index/" in k]
    assert [k for k in s3_bucket.objects() if "/ledger/" in k]  # the ledger is kept


def test_plain_http_to_a_bucket_is_refused_off_loopback(tmp_path):
    with pytest.raises(sf.ConfigurationError, match="http"):
        sf.Client(
            SANDBOX_KEY,
            cache_dir="s3://team-bucket/cache",
            storage_options={"aws_endpoint_url": "http://storage.example.com:9000"},
        )
    with pytest.raises(sf.ConfigurationError, match="bucket address"):
        sf.Client(SANDBOX_KEY, cache_dir=tmp_path, storage_options={"aws_region": "us-east-1"})


_MACHINE = """
import json, sys
import storeframes as sf
args = json.loads(sys.argv[1])
with sf.Client(args["key"], base_url=args["url"], cache_dir=args["bucket"], rate_limit=(600, 1.0),
               progress=False, backoff=(0.01, 0.1)) as client:
    print("ready", flush=True)
    sys.stdin.readline()
    frame = client.metadata_frame(args["apps"])
    print(json.dumps({"rows": frame.height, "spent": client.spent}), flush=True)
"""


@pytest.mark.processes
@pytest.mark.s3
def test_two_machines_sharing_only_a_bucket_pay_once(s3_bucket, tmp_path):
    with SandboxServer(port=0, today=SANDBOX_TODAY, latency=0.3) as server:
        args = {"key": SANDBOX_KEY, "url": server.base_url, "bucket": s3_bucket.url, "apps": APPS[:10]}
        machines = []
        for i in range(2):  # nothing shared but the bucket: each its own state folder and no Redis
            env = child_env(
                **s3_bucket.env, STOREFRAMES_STATE_DIR=str(tmp_path / f"state-{i}"), STOREFRAMES_COORDINATOR=None
            )
            machines.append(
                subprocess.Popen(
                    [sys.executable, "-c", _MACHINE, json.dumps(args)],
                    cwd=ROOT,
                    env=env,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
        for machine in machines:
            assert machine.stdout.readline().strip() == "ready", machine.stderr.read()
        for machine in machines:
            machine.stdin.write("go\n")
            machine.stdin.flush()
        results = []
        for machine in machines:
            out, err = machine.communicate(timeout=120)
            assert machine.returncode == 0, err[-2000:]
            results.append(json.loads(out.strip().splitlines()[-1]))
        arrivals = list(server.service.arrivals)
    assert paid_twice(arrivals) == (0, 0, 0)
    delivered = [app for a in arrivals for app in a.params["apps"].split(",")]
    assert sorted(delivered) == sorted(APPS[:10])  # each app asked for once, by one machine or the other
    assert [r["rows"] for r in results] == [10, 10]
    assert sum(r["spent"] for r in results) == server.service.spent
