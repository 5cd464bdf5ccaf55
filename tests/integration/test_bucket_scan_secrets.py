"""A scan of a team's bucket is a plan a user may save (``serialize()``) or send (pickle): it holds no
credential, reads the bucket in the process that made it, and says where it cannot."""

from __future__ import annotations

import io
import pickle
import subprocess
import sys
from datetime import UTC, datetime

import polars as pl

import storeframes as sf
from storeframes.sandbox import SANDBOX_KEY, SandboxServer, World
from tests._children import child_env
from tests._s3 import ACCESS_KEY, SECRET_KEY, SESSION_TOKEN
from tests.conftest import ROOT, SANDBOX_TODAY

WORLD = World(0)
APPS = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US][:3]
READ_ELSEWHERE = """
import pickle, sys
plan = pickle.loads(sys.stdin.buffer.read())
try:
    plan.collect()
except Exception as exc:
    print(type(exc).__name__, exc)
else:
    print("read")
"""


def _clock() -> datetime:
    return datetime.combine(SANDBOX_TODAY, datetime.now(UTC).time(), UTC)


def test_a_saved_or_sent_bucket_scan_holds_no_credential(s3_bucket):
    options = {**s3_bucket.storage_options, "aws_session_token": SESSION_TOKEN}  # moto takes any token
    with (
        SandboxServer(port=0, today=SANDBOX_TODAY) as server,
        sf.Client(
            SANDBOX_KEY,
            base_url=server.base_url,
            cache_dir=s3_bucket.url,
            storage_options=options,
            progress=False,
            clock=_clock,
        ) as client,
    ):
        fetched = client.metadata_frame(APPS)
    plan = sf.scan("metadata", cache_dir=s3_bucket.url, storage_options=options)
    saved, sent = plan.serialize(), pickle.dumps(plan)
    for data in (saved, sent):
        for secret in (ACCESS_KEY, SECRET_KEY, SESSION_TOKEN):
            assert secret.encode() not in data
    assert plan.collect().sort("app_id").equals(fetched.sort("app_id"))
    assert pl.LazyFrame.deserialize(io.BytesIO(saved)).collect().sort("app_id").equals(fetched.sort("app_id"))
    assert pickle.loads(sent).collect().sort("app_id").equals(fetched.sort("app_id"))

    elsewhere = subprocess.run(
        [sys.executable, "-c", READ_ELSEWHERE], input=sent, capture_output=True, cwd=ROOT, env=child_env(), timeout=120
    )
    said = elsewhere.stdout.decode() + elsewhere.stderr.decode()
    assert "stay in the process that scanned it" in said and "read" not in said.split()
    assert not any(secret in said for secret in (ACCESS_KEY, SECRET_KEY, SESSION_TOKEN))
