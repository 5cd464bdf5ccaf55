"""Moving a cache folder to a bucket, as docs/how-to/cache-to-bucket.md says: compact it, copy its files to the
bucket's prefix with any copying tool (leaving out ``leases/`` and ``storeframes-coordination.json``), and the
bucket serves every answer, the ledger and the spend as the folder did, nothing paid again; the first member that
fetches into it records how the team sharing the bucket coordinates. Against moto's S3 server on loopback
(tests/_s3.py); the copy is boto3's ``put_object``, file by file, as ``aws s3 sync`` would do it."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import storeframes as sf
from storeframes.cli import main
from tests._s3 import S3Bucket

pytest.importorskip("obstore", reason='obstore not installed (pip install "storeframes[s3]")')

pytestmark = pytest.mark.s3

APPS = ["3233849169", "361252007"]
LEFT_OUT = ("leases/", "storeframes-coordination.json")


def _fill(folder: Path) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """A folder cache with some answers: its frames and its spend."""
    with sf.sandbox.client(today="2026-11-20", cache_dir=folder, progress=False) as client:
        metadata = client.metadata_frame(APPS)
        changes = client.changes_frame(APPS, start="2026-10-01", end="2026-10-31")
        client.metadata_frame(APPS)  # a cache hit: a ledger row of credits saved
        spend = client.spend()
    return metadata, changes, spend


def _copy(folder: Path, bucket: S3Bucket, *, leave_out: tuple[str, ...] = LEFT_OUT) -> list[str]:
    """Every file of the folder to the bucket's prefix, under the same relative names; the names copied."""
    copied = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        name = path.relative_to(folder).as_posix()
        if name.startswith(leave_out):
            continue
        bucket.client.put_object(Bucket=bucket.name, Key=f"{bucket.prefix}/{name}", Body=path.read_bytes())
        copied.append(name)
    return copied


def test_a_folder_copied_to_a_bucket_serves_every_answer_and_the_ledger_with_nothing_paid_again(
    tmp_path: Path, s3_bucket: S3Bucket, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "analysis-cache"
    metadata, changes, spend = _fill(folder)
    assert main(["cache", "compact", "--cache-dir", str(folder)]) == 0
    copied = _copy(folder, s3_bucket)
    assert "storeframes-cache.json" in copied and any(name.startswith("ledger/") for name in copied)

    # storeframes cache info reads the bucket as it read the folder: the same answers and credits
    for name, value in s3_bucket.env.items():
        monkeypatch.setenv(name, value)
    capsys.readouterr()
    assert main(["cache", "info", "--cache-dir", str(folder)]) == 0
    in_folder = capsys.readouterr().out
    assert main(["cache", "info", "--cache-dir", s3_bucket.url]) == 0
    in_bucket = capsys.readouterr().out
    said = [line for line in in_folder.splitlines() if line.startswith(("cached answers", "  ", "sandbox-0"))]
    assert said and all(line in in_bucket.splitlines() for line in said)

    options = {"cache_dir": s3_bucket.url, "storage_options": s3_bucket.storage_options, "progress": False}
    with sf.sandbox.client(today="2026-11-20", offline=True, **options) as client:
        assert client.metadata_frame(APPS).equals(metadata)
        assert client.changes_frame(APPS, start="2026-10-01", end="2026-10-31").equals(changes)
        assert client.requests_sent == 0
        moved = client.spend().group_by("service").agg(pl.col("credits_spent").sum()).sort("service")
    before = spend.group_by("service").agg(pl.col("credits_spent").sum()).sort("service")
    assert moved.equals(before) and before["credits_spent"].sum() > 0


def test_the_first_member_fetching_into_the_copy_records_the_buckets_coordination(
    tmp_path: Path, s3_bucket: S3Bucket
) -> None:
    folder = tmp_path / "analysis-cache"
    _fill(folder)
    assert (folder / "storeframes-coordination.json").exists()  # the folder's: this machine's window
    copied = _copy(folder, s3_bucket)
    assert not any(name.startswith(LEFT_OUT) for name in copied)

    options = {"cache_dir": s3_bucket.url, "storage_options": s3_bucket.storage_options, "progress": False}
    with sf.sandbox.client(today="2026-11-20", **options) as client:
        assert client.metadata_frame([*APPS, "394079159"]).height == 3  # one new app fetched, two served
        assert client.requests_sent == 1
    record = s3_bucket.objects()[f"{s3_bucket.prefix}/storeframes-coordination.json"]
    assert b'"bucket-objects"' in record


def test_a_copied_coordination_record_is_refused_until_the_buckets_is_recorded(
    tmp_path: Path, s3_bucket: S3Bucket, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The folder's record says "this machine only"; copied along, it turns every fetch into the bucket away, and
    ``storeframes cache coordination --record`` on the bucket mends it."""
    folder = tmp_path / "analysis-cache"
    _fill(folder)
    _copy(folder, s3_bucket, leave_out=("leases/",))
    options = {"cache_dir": s3_bucket.url, "storage_options": s3_bucket.storage_options, "progress": False}
    with sf.sandbox.client(today="2026-11-20", **options) as client:
        with pytest.raises(sf.CoordinationMismatchError, match="this machine only"):
            client.metadata_frame([*APPS, "394079159"])
        assert client.requests_sent == 0
    for name, value in s3_bucket.env.items():
        monkeypatch.setenv(name, value)
    assert main(["cache", "coordination", "--record", "--cache-dir", s3_bucket.url]) == 0
    with sf.sandbox.client(today="2026-11-20", **options) as client:
        assert client.metadata_frame([*APPS, "394079159"]).height == 3
        assert client.requests_sent == 1
