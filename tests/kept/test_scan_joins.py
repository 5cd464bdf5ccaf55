"""Queries that join several lazy datasets of a cache, collected by polars with as few threads as sources.

Each ``sf.scan`` or ``sf.snapshots`` frame is an IO source that reads its files when collected. Before
polars 1.35, a Parquet scan collected inside one source while another source waited for a thread never
returned with 2 threads (2 CPUs): a join of two scans hung for ever. The files are read by pyarrow there.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date

import pytest

import storeframes as sf
from storeframes.sandbox import World
from tests._children import child_env

pytestmark = pytest.mark.processes

APPS = list(World(0).EXAMPLE_IOS_APPS[:3])

JOINS = """
import json, sys
import polars as pl
import storeframes as sf

folder = sys.argv[1]
meta, versions = sf.scan("metadata", folder), sf.scan("versions", folder)
shots = sf.scan("screenshots", folder).select("app_id", "url")
both = meta.select("app_id", "title").join(versions.select("app_id", "version"), on="app_id")
days = sf.snapshots("metadata", folder).join(sf.snapshots("versions", folder), on=["app_id", "snapshot_date"])
print(json.dumps({
    "two": both.collect().height,
    "three": both.join(shots, on="app_id").collect().height,
    "snapshots": days.collect().height,
    "threads": pl.thread_pool_size(),
}))
"""


def test_a_join_of_scans_and_snapshots_is_collected_with_two_threads(tmp_path):
    folder = tmp_path / "cache"
    for day in (date(2026, 11, 19), date(2026, 11, 20)):
        with sf.sandbox.client(today=day, cache_dir=folder) as client:
            client.metadata_frame(APPS)
            client.versions_frame(APPS)
            client.screenshots_frame(APPS)
    run = subprocess.run(
        [sys.executable, "-c", JOINS, str(folder)],
        env=child_env(POLARS_MAX_THREADS="2", STOREFRAMES_API_KEY=None),
        capture_output=True,
        timeout=120,  # the hang this guards against never ends
    )
    assert run.returncode == 0, run.stderr.decode()[-3000:]
    found = json.loads(run.stdout.decode().splitlines()[-1])
    assert found["threads"] == 2
    # the same joins of the frames collected one at a time, in this process
    meta = sf.scan("metadata", folder).collect().select("app_id", "title")
    both = meta.join(sf.scan("versions", folder).collect().select("app_id", "version"), on="app_id")
    shots = sf.scan("screenshots", folder).collect().select("app_id", "url")
    days = sf.snapshots("metadata", folder).collect()
    day_versions = sf.snapshots("versions", folder).collect()
    assert found["two"] == both.height > len(APPS)
    assert found["three"] == both.join(shots, on="app_id").height > both.height
    assert found["snapshots"] == days.join(day_versions, on=["app_id", "snapshot_date"]).height
    assert found["snapshots"] > found["two"]  # two days of snapshots
