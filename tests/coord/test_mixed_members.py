"""Members of a team configured differently: one with ``STOREFRAMES_COORDINATOR`` (a real Redis server on
loopback) and one without (a cron job, a second notebook), each a process with its own home, on a folder
and on a bucket (moto's S3 on loopback), against the sandbox on loopback; and one bucket spelled
``s3://`` by one member and ``s3a://`` by another."""

from __future__ import annotations

import json
import subprocess
import sys
import traceback
from pathlib import Path
from typing import Any

import pytest

import storeframes as sf
from storeframes.cache.coordination_record import RECORD, canonical_location
from storeframes.cli import main
from storeframes.sandbox import SANDBOX_KEY, SandboxServer, World
from tests._children import child_env
from tests._redis import redis_url  # noqa: F401 - a fixture
from tests._s3 import s3_bucket, s3_server  # noqa: F401 - fixtures
from tests._summary import max_in_window, paid_twice, record
from tests.conftest import ROOT, SANDBOX_TODAY

LIMIT = (6, 1.0)  # the service's window, shortened: six requests a second
KEYWORDS = [
    *World(0).EXAMPLE_KEYWORDS,
    "weather radar",
    "budget planner",
    "sleep sounds",
    "recipe box",
    "habit tracker",
    "flashlight",
]
RANGE = {"start": "2026-10-01", "end": "2026-10-31"}
PASSWORD = "team-redis-pass-0451"

_MEMBER = """
import json, sys
import storeframes as sf
args = json.loads(sys.argv[1])
report = {}
with sf.Client(args["key"], base_url=args["url"], cache_dir=args["cache"], rate_limit=tuple(args["rate"]),
               progress=False, backoff=(0.01, 0.1)) as client:
    print("ready", flush=True)
    sys.stdin.readline()
    try:
        report["rows"] = client.search_history_frame(args["keywords"], **args["range"]).height
    except sf.CoordinationError as exc:
        report.update(refused=type(exc).__name__, message=str(exc), team=exc.team, member=exc.member)
    report.update(requests=client.requests_sent, spent=client.spent)
print(json.dumps(report), flush=True)
"""


def _with_password(url: str) -> str:
    """Give the loopback Redis server a password, as a team's has; its URL with it."""
    import redis

    with redis.Redis.from_url(url) as server:
        server.config_set("requirepass", PASSWORD)
    return url.replace("redis://", f"redis://:{PASSWORD}@", 1)


def _members(
    server: SandboxServer, tmp_path: Path, caches: list[str], coordinators: list[str | None], **env: str
) -> list[dict[str, Any]]:
    """Run one member a cache (each a process with its own home and state folder, ``coordinators[i]`` its
    STOREFRAMES_COORDINATOR), all asking for the same keywords at once; their reports."""
    members = []
    for i, (cache, coordinator) in enumerate(zip(caches, coordinators, strict=True)):
        home = tmp_path / f"home-{i}"
        home.mkdir()
        args = {
            "key": SANDBOX_KEY,
            "url": server.base_url,
            "cache": cache,
            "rate": LIMIT,
            "keywords": KEYWORDS,
            "range": RANGE,
        }
        variables = child_env(
            **env,
            HOME=str(home),
            STOREFRAMES_STATE_DIR=str(home / "state"),
            STOREFRAMES_COORDINATOR=coordinator,
            STOREFRAMES_CACHE_DIR=None,
        )
        members.append(
            subprocess.Popen(
                [sys.executable, "-c", _MEMBER, json.dumps(args)],
                cwd=ROOT,
                env=variables,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    try:
        for member in members:
            assert member.stdout.readline().strip() == "ready", member.stderr.read()[-3000:]
        for member in members:  # both at once
            member.stdin.write("go\n")
            member.stdin.flush()
        reports = []
        for member in members:
            out, err = member.communicate(timeout=120)
            assert member.returncode == 0, err[-3000:]
            reports.append(json.loads(out.strip().splitlines()[-1]))
        return reports
    finally:
        for member in members:
            if member.poll() is None:
                member.kill()
                member.wait(timeout=30)


def _check_one_refused(reports: list[dict[str, Any]], arrivals: list[Any], name: str) -> dict[str, Any]:
    """Exactly one member fetched, the other was refused before it sent anything; nothing paid twice, the
    window kept. Records the scenario; the refused member's report."""
    refused = [r for r in reports if "refused" in r]
    fetched = [r for r in reports if "rows" in r]
    assert len(refused) == 1 and len(fetched) == 1, reports
    assert refused[0]["refused"] == "CoordinationMismatchError"
    assert refused[0]["requests"] == 0 and refused[0]["spent"] == 0  # refused before any request
    assert len(arrivals) == fetched[0]["requests"] > 0  # the sandbox saw none from the refused one
    assert [a.status for a in arrivals] == [200] * len(arrivals)  # no 429
    assert paid_twice(arrivals) == (0, 0, 0)
    most = max_in_window([a.time for a in arrivals], LIMIT[1])
    assert most <= LIMIT[0]
    record(name, requests=len(arrivals), rows=fetched[0]["rows"], paid_twice=0, window=(most, LIMIT[0]))
    message = refused[0]["message"]
    assert "STOREFRAMES_COORDINATOR" in message and "Nothing was sent" in message
    assert PASSWORD not in message
    assert refused[0]["team"] != refused[0]["member"]
    return refused[0]


@pytest.mark.heavy
@pytest.mark.timeout(180)
@pytest.mark.processes
@pytest.mark.redis
def test_a_member_without_the_teams_redis_is_refused_before_it_pays_on_a_folder(tmp_path, redis_url):  # noqa: F811
    team_redis = _with_password(redis_url)
    folder = str(tmp_path / "team-cache")
    with SandboxServer(port=0, today=SANDBOX_TODAY, rate_limit=LIMIT) as server:
        reports = _members(server, tmp_path, [folder, folder], [team_redis, None])
        arrivals = list(server.service.arrivals)
    refused = _check_one_refused(reports, arrivals, "mixed members: folder")
    assert "Redis at redis://127.0.0.1:" in refused["message"]
    recorded = (Path(folder) / RECORD).read_text()
    assert PASSWORD not in recorded and json.loads(recorded)["kind"] in ("redis", "machine")


@pytest.mark.heavy
@pytest.mark.timeout(180)
@pytest.mark.processes
@pytest.mark.redis
@pytest.mark.s3
def test_a_member_without_the_teams_redis_is_refused_before_it_pays_on_a_bucket(tmp_path, redis_url, s3_bucket):  # noqa: F811
    team_redis = _with_password(redis_url)
    with SandboxServer(port=0, today=SANDBOX_TODAY, rate_limit=LIMIT) as server:
        reports = _members(server, tmp_path, [s3_bucket.url, s3_bucket.url], [team_redis, None], **s3_bucket.env)
        arrivals = list(server.service.arrivals)
    refused = _check_one_refused(reports, arrivals, "mixed members: bucket")
    assert "Redis at redis://127.0.0.1:" in refused["message"]
    recorded = s3_bucket.objects()[f"{s3_bucket.prefix}/{RECORD}"].decode()
    assert PASSWORD not in recorded and json.loads(recorded)["kind"] in ("redis", "bucket-objects")


@pytest.mark.heavy
@pytest.mark.timeout(180)
@pytest.mark.processes
@pytest.mark.redis
@pytest.mark.s3
def test_s3_and_s3a_spellings_of_one_bucket_share_one_lease_space(tmp_path, redis_url, s3_bucket):  # noqa: F811
    team_redis = _with_password(redis_url)
    spellings = [s3_bucket.url, f"s3a://{s3_bucket.name}/{s3_bucket.prefix}/"]
    with SandboxServer(port=0, today=SANDBOX_TODAY, rate_limit=LIMIT, latency=0.3) as server:
        reports = _members(server, tmp_path, spellings, [team_redis, team_redis], **s3_bucket.env)
        arrivals = list(server.service.arrivals)
    assert [r.get("refused") for r in reports] == [None, None], reports
    assert [r["rows"] for r in reports] == [reports[0]["rows"]] * 2 and reports[0]["rows"] > 0
    assert paid_twice(arrivals) == (0, 0, 0)  # one paid for each keyword, the other read it
    delivered = sorted(a.params["keyword"] for a in arrivals if a.status == 200)
    assert delivered == sorted(set(delivered))
    assert sum(r["requests"] for r in reports) == len(arrivals)
    assert sum(r["spent"] for r in reports) == server.service.spent
    most = max_in_window([a.time for a in arrivals], LIMIT[1])
    assert most <= LIMIT[0]
    record(
        "mixed members: s3 and s3a spellings",
        requests=len(arrivals),
        rows=sum(r["rows"] for r in reports),
        paid_twice=0,
        window=(most, LIMIT[0]),
    )


# -- in one process: what the record says, offline reads, a change on purpose ----------------------------


def _shown_by_storeframes(exc: BaseException) -> list[str]:
    """What an error shows: its message and repr, and every local of storeframes' frames in its traceback."""
    texts = [str(exc), repr(exc), repr(vars(exc))]
    for frame, _ in traceback.walk_tb(exc.__traceback__):
        if Path(frame.f_code.co_filename).resolve().is_relative_to(Path(sf.__file__).parent.resolve()):
            texts += [f"{frame.f_code.co_name}.{name}: {value!r}" for name, value in frame.f_locals.items()]
    return texts


def _sandbox(monkeypatch: pytest.MonkeyPatch, cache: Path, coordinator: str | None = None, **options: Any) -> sf.Client:
    """An in-process sandbox client on ``cache``, with ``coordinator`` as its STOREFRAMES_COORDINATOR."""
    if coordinator is None:
        monkeypatch.delenv("STOREFRAMES_COORDINATOR", raising=False)
    else:
        monkeypatch.setenv("STOREFRAMES_COORDINATOR", coordinator)
    return sf.sandbox.client(cache_dir=cache, progress=False, **options)


def test_one_canonical_name_per_bucket_whatever_its_spelling():
    for spelling in ("s3://b/p", "s3a://b/p", "S3://b/p/", "s3://b//p", "S3A://b//p//"):
        assert canonical_location(spelling) == "s3://b/p"
    assert canonical_location("gs://b/p/") == "gs://b/p"
    assert canonical_location("/srv/team-cache") == "/srv/team-cache"  # a folder is left as it is


@pytest.mark.redis
def test_a_member_without_redis_reads_a_redis_teams_cache_offline_but_cannot_fetch(tmp_path, monkeypatch, redis_url):  # noqa: F811
    team_redis = _with_password(redis_url)
    folder = tmp_path / "team-cache"
    monkeypatch.setenv("STOREFRAMES_STATE_DIR", str(tmp_path / "state"))
    with _sandbox(monkeypatch, folder, team_redis) as team:
        expected = team.search_history_frame(KEYWORDS[:2], **RANGE)
    record_text = (folder / RECORD).read_text()
    assert PASSWORD not in record_text and json.loads(record_text)["kind"] == "redis"

    with _sandbox(monkeypatch, folder, offline=True) as reader:  # offline reads need no agreement
        assert reader.search_history_frame(KEYWORDS[:2], **RANGE).equals(expected)
    with _sandbox(monkeypatch, folder) as cron:
        assert cron.search_history_frame(KEYWORDS[:2], **RANGE).equals(expected)  # nothing missing: no agreement
        with pytest.raises(sf.CoordinationMismatchError) as refused:
            cron.search_history_frame(KEYWORDS[2:4], **RANGE)
        assert cron.requests_sent == 0 and cron.spent == 0
    message = str(refused.value)
    assert PASSWORD not in message
    assert "STOREFRAMES_COORDINATOR=redis://127.0.0.1:" in message and "cache coordination --record" in message
    assert refused.value.location == str(folder)


@pytest.mark.redis
def test_a_team_that_drops_redis_on_purpose_records_it_and_the_old_setting_is_refused(
    tmp_path,
    monkeypatch,
    capsys,
    redis_url,  # noqa: F811
):
    team_redis = _with_password(redis_url)
    folder = tmp_path / "team-cache"
    monkeypatch.setenv("STOREFRAMES_STATE_DIR", str(tmp_path / "state"))
    with _sandbox(monkeypatch, folder, team_redis) as team:
        team.search_history_frame(KEYWORDS[:1], **RANGE)
    assert main(["cache", "coordination", "--cache-dir", str(folder)]) == 0
    assert "Redis at redis://127.0.0.1:" in capsys.readouterr().out

    monkeypatch.delenv("STOREFRAMES_COORDINATOR")
    assert main(["cache", "coordination", "--record", "--cache-dir", str(folder)]) == 0  # no coordinator now
    said = capsys.readouterr().out
    assert "this machine only" in said and "(was: Redis at redis://127.0.0.1:" in said
    with _sandbox(monkeypatch, folder) as member:
        member.search_history_frame(KEYWORDS[1:2], **RANGE)
        assert member.requests_sent == 1
    with _sandbox(monkeypatch, folder, team_redis) as old, pytest.raises(sf.CoordinationMismatchError) as refused:
        old.search_history_frame(KEYWORDS[2:3], **RANGE)
    assert "unset STOREFRAMES_COORDINATOR" in str(refused.value)
    assert _shown_by_storeframes(refused.value) and not [
        t for t in _shown_by_storeframes(refused.value) if PASSWORD in t
    ]
    assert main(["cache", "coordination", "--cache-dir", str(folder)]) == 0
    assert PASSWORD not in capsys.readouterr().out


def test_the_first_members_to_record_race_and_one_record_stands(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    from storeframes.cache.coordination_record import Coordination

    caches = [sf.Cache(tmp_path / "team-cache") for _ in range(8)]
    mine = [Coordination("redis", f"redis://127.0.0.1:{6000 + i}/0") for i in range(8)]
    with ThreadPoolExecutor(8) as pool:
        standing = list(pool.map(lambda i: caches[i].record_coordination(mine[i]), range(8)))
    assert len({(c.kind, c.identity) for c in standing}) == 1  # every member sees the one that won
    assert caches[0].coordination().same(standing[0])
