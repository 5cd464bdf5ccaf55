"""sf.snapshots of a team's bucket (moto's S3 on loopback): days replayed by sandbox clients into the
bucket are read back day by day with no token, the same after a compaction of the bucket, and a plan of
them never carries the bucket's keys."""

from __future__ import annotations

import polars as pl
import pytest

import storeframes as sf
from tests._secrets import check_plan_keeps
from tests.kept.test_snapshots import APPS, DAYS, TABLES, check_days, replay, same_rows

pytestmark = pytest.mark.s3

pytest.importorskip("obstore")


def test_a_buckets_snapshots_are_each_days_frames_before_and_after_a_compaction(s3_bucket, monkeypatch):
    options = {"storage_options": s3_bucket.storage_options}
    fetched = replay(s3_bucket.url, **options)
    monkeypatch.delenv("STOREFRAMES_API_KEY", raising=False)
    check_days(s3_bucket.url, fetched, **options)
    before = {table: sf.snapshots(table, s3_bucket.url, **options).collect() for table in TABLES}

    done = sf.compact(s3_bucket.url, **options)

    assert done["frames_dropped"] == 0 and done["frame_files_merged"] > 0
    frames = [key for key in s3_bucket.objects() if "/frames/" in key]
    assert frames and all("/part-" in key for key in frames)
    check_days(s3_bucket.url, fetched, **options)
    for table in TABLES:
        same_rows(sf.snapshots(table, s3_bucket.url, **options).collect(), before[table])
    assert [key for key in s3_bucket.objects() if "/frames/" in key] == frames  # nothing built again


def test_a_plan_of_a_buckets_snapshots_never_carries_its_secret_key(s3_bucket):
    options = {"storage_options": s3_bucket.storage_options}
    with sf.sandbox.client(today=DAYS[0], cache_dir=s3_bucket.url, progress=False, **options) as client:
        client.metrics_frame(APPS[:1], ["downloads"])
    lazy = sf.snapshots("metrics", s3_bucket.url, **options)
    check_plan_keeps(lazy, s3_bucket.storage_options["aws_secret_access_key"], call="sf.snapshots")
    assert lazy.select(pl.len()).collect().item() == 1
