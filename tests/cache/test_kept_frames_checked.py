"""Kept frames held to their answers: a frame file (or a compacted one) planted or written over in a shared
cache is never served as it is; the frame is built again from the raw answer the cache keeps, with a
warning, and no request is sent."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from storeframes.cache import Cache, CacheWarning
from storeframes.errors import AppsUnavailableWarning
from storeframes.kept.tables import flattener_versions
from tests import _summary
from tests.cache.test_hostile_folder import IOS, WORLD, arrivals, filled, sandbox

__all__ = ["filled"]  # the fixture, used by name

COPIES = 200_000
FRAME_ROWS = b"storeframes.frame_rows"  # where an index file records the rows of its kept frames


def _frame_file(folder: Path) -> Path:
    (path,) = (folder / "frames" / "table=metadata").glob("[!p]*.parquet")
    return path


def _footer(source: Path | pa.BufferReader) -> dict[bytes, bytes]:
    """The key-value metadata of a Parquet file's footer: what the cache wrote there."""
    return dict(pq.read_metadata(source).metadata or {})


def _write_over(path: Path, frame: pl.DataFrame, meta: dict[bytes, bytes]) -> None:
    """Write ``frame`` over ``path`` with the footer ``meta`` (the one the cache wrote, copied)."""
    pq.write_table(frame.to_arrow().replace_schema_metadata(meta), path)


def _quiet(folder: Path, expected: pl.DataFrame) -> None:
    """The frame is served again from the cache, without a warning or a request."""
    with sandbox(folder) as client, warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        assert client.metadata_frame(IOS[:2]).equals(expected) and arrivals(client) == 0


def test_a_kept_frame_holding_one_row_many_times_is_built_again_for_free(filled):
    _summary.hostile("cache: frame of one row many times")
    with sandbox(filled) as client:
        expected = client.metadata_frame(IOS[:2])
    path = _frame_file(filled)
    stored = pq.read_table(path)
    _write_over(path, pl.from_arrow(stored).head(1).sample(COPIES, with_replacement=True), _footer(path))
    with sandbox(filled) as client, pytest.warns(CacheWarning, match=f"{COPIES:,} rows where the index recorded 2"):
        frame = client.metadata_frame(IOS[:2])
        assert frame.height == 2 and frame.equals(expected)
        assert arrivals(client) == 0  # built from the raw answer kept: no request, no credit
    assert pq.read_metadata(path).num_rows == 2  # written again, right
    assert (path.parent / f"{path.name}.corrupt").exists()  # the planted file set aside, for a look
    _quiet(filled, expected)


def test_a_kept_frame_of_an_earlier_version_holding_another_app_is_built_again_for_free(filled):
    _summary.hostile("cache: frame of other cells")
    with sandbox(filled) as client:
        expected = client.metadata_frame(IOS[:2])
    for index in (filled / "index").glob("endpoint=metadata/*.parquet"):  # a cache that recorded no rows
        table = pq.read_table(index)
        # the footer as the cache wrote it (older polars leave the Arrow schema's metadata empty)
        meta = {k: v for k, v in _footer(index).items() if k not in (FRAME_ROWS, b"ARROW:schema")}
        pq.write_table(table.replace_schema_metadata(meta), index)
        assert FRAME_ROWS not in (pq.read_metadata(index).metadata or {})
    path = _frame_file(filled)
    stored = pq.read_table(path)
    other = pl.from_arrow(stored).with_columns(pl.col("app_id").replace(IOS[1], IOS[2]))
    _write_over(path, other, _footer(path))
    with sandbox(filled) as client, pytest.warns(CacheWarning, match=f"app_id '{IOS[2]}'"):
        assert client.metadata_frame(IOS[:2]).equals(expected)
        assert client.metadata_frame(IOS[:2]).filter(pl.col("app_id") == IOS[2]).is_empty()
        assert arrivals(client) == 0
    _quiet(filled, expected)


def test_a_planted_compacted_frame_file_does_not_override_the_kept_frames(filled):
    _summary.hostile("cache: planted compacted frame file")
    with sandbox(filled) as client:
        expected = client.metadata_frame(IOS[:2])
    stored = pq.read_table(_frame_file(filled))
    footer = _footer(_frame_file(filled))
    entry_id = stored.column("entry")[0].as_py()
    lies = pl.from_arrow(stored).with_columns(pl.lit("Planted").alias("title"))  # as many rows, the same apps
    meta = {
        **footer,
        b"storeframes.compacted": b"frames",
        b"storeframes.row_groups": json.dumps([[entry_id]]).encode(),
        b"storeframes.empty": b"[]",
    }
    _write_over(filled / "frames" / "table=metadata" / "part-00000000T000000000000Z-planted.parquet", lies, meta)
    with sandbox(filled) as client:
        frame = client.metadata_frame(IOS[:2])
        assert frame.equals(expected) and "Planted" not in frame["title"].to_list()
        assert arrivals(client) == 0


def test_a_planted_compacted_frame_file_in_a_compacted_cache_is_set_aside_and_built_again(filled):
    _summary.hostile("cache: planted compacted frame file")
    with sandbox(filled) as client:
        expected = client.metadata_frame(IOS[:2])
    Cache(filled).compact(frames=flattener_versions())
    (part,) = (filled / "frames" / "table=metadata").glob("part-*.parquet")
    assert not list((filled / "frames" / "table=metadata").glob("[!p]*.parquet"))  # only the compacted file
    rows, meta = pl.read_parquet(part), _footer(part)
    planted = part.parent / "part-00000000T000000000000Z-planted.parquet"  # listed before the real one
    _write_over(planted, pl.concat([rows] + [rows.head(1)] * 1000), meta)
    with sandbox(filled) as client, pytest.warns(CacheWarning, match="part-00000000T000000000000Z-planted"):
        frame = client.metadata_frame(IOS[:2])
        assert frame.height == 2 and frame.equals(expected)
        assert arrivals(client) == 0
    assert not planted.exists() and part.exists()
    _quiet(filled, expected)


@pytest.mark.s3
def test_a_kept_frame_written_over_in_a_bucket_is_built_again_for_free(s3_bucket):
    _summary.hostile("bucket: frame of one row many times")
    options = {"storage_options": s3_bucket.storage_options}
    with sandbox(s3_bucket.url, **options) as client:  # type: ignore[arg-type]
        expected = client.metadata_frame(IOS[:2])
    ((key, data),) = [(k, v) for k, v in s3_bucket.objects().items() if "/frames/table=metadata/" in k]
    stored = pq.read_table(pa.BufferReader(data))
    sink = pa.BufferOutputStream()
    copies = pl.concat([pl.from_arrow(stored)] * 500)
    pq.write_table(copies.to_arrow().replace_schema_metadata(_footer(pa.BufferReader(data))), sink)
    s3_bucket.client.put_object(Bucket=s3_bucket.name, Key=key, Body=sink.getvalue().to_pybytes())
    with sandbox(s3_bucket.url, **options) as client, pytest.warns(CacheWarning, match="1,000 rows"):  # type: ignore[arg-type]
        assert client.metadata_frame(IOS[:2]).equals(expected)
        assert arrivals(client) == 0
    with sandbox(s3_bucket.url, **options) as client, warnings.catch_warnings():  # type: ignore[arg-type]
        warnings.simplefilter("error", CacheWarning)
        assert client.metadata_frame(IOS[:2]).equals(expected) and arrivals(client) == 0


def test_compaction_leaves_out_a_kept_frame_that_is_not_its_answers(filled):
    _summary.hostile("cache: frame of one row many times")
    with sandbox(filled) as client:
        expected = client.metadata_frame(IOS[:2])
    path = _frame_file(filled)
    _write_over(path, pl.concat([pl.read_parquet(path)] * 50), _footer(path))
    done = Cache(filled).compact(frames=flattener_versions())
    assert done["frames_dropped"] == 1
    assert not path.exists()  # merged away ...
    for part in (filled / "frames" / "table=metadata").glob("part-*.parquet"):  # ... and not carried into a part
        assert pl.read_parquet(part).filter(pl.col("app_id").is_in(IOS[:2])).is_empty()
    with sandbox(filled) as client:
        assert client.metadata_frame(IOS[:2]).equals(expected) and arrivals(client) == 0
    _quiet(filled, expected)


def test_one_kept_frame_among_many_holding_too_many_rows_is_built_again_for_free(tmp_path):
    _summary.hostile("cache: frame of one row many times")
    folder = tmp_path / "cache"
    with sandbox(folder) as client:
        apps = client.search_frame("photo editor")["app_id"].drop_nulls().unique(maintain_order=True).to_list()[:60]
        for at in range(0, len(apps), 3):  # an answer (a frame file) per three apps: read in one scan when warm
            client.metadata_frame(apps[at : at + 3])
        expected = client.metadata_frame(apps)
    files = sorted((folder / "frames" / "table=metadata").glob("*.parquet"))
    assert len(files) == 20 and expected.height == 60
    path = files[7]
    _write_over(path, pl.concat([pl.read_parquet(path)] * 40), _footer(path))
    with sandbox(folder) as client, pytest.warns(CacheWarning, match="120 rows where the index recorded 3"):
        frame = client.metadata_frame(apps)
        assert frame.height == 60 and frame.equals(expected)
        assert arrivals(client) == 0
    assert pq.read_metadata(path).num_rows == 3


APPS = WORLD.app_ids("ios")[:20]  # more answers than a folder reads a file per thread: read in one scan


@pytest.fixture()
def twenty(tmp_path: Path) -> tuple[Path, pl.DataFrame]:
    """A cache folder of 20 answers, one app each; and the frame of a call of all 20."""
    folder = tmp_path / "cache"
    with sandbox(folder) as client, warnings.catch_warnings():
        warnings.simplefilter("ignore", AppsUnavailableWarning)  # an app the sandbox has not: not what is tested
        for app in APPS:
            client.metadata_frame([app])
        expected = client.metadata_frame(APPS)
        assert arrivals(client) == len(APPS)
    return folder, expected


def _holding(folder: Path, app: str) -> Path:
    """The small kept frame file of the answer about ``app``."""
    files = (folder / "frames" / "table=metadata").glob("[!p]*.parquet")
    (path,) = [p for p in files if app in pl.read_parquet(p)["app_id"].to_list()]
    return path


@pytest.mark.parametrize("compacted", [False, True], ids=["small_files", "compacted"])
def test_one_answer_among_many_holding_another_answers_app_is_the_one_built_again(twenty, compacted):
    """Rows of another app of the same call (of the call's cells, not of their answer's) in one kept frame of
    20 read together: that frame is set aside, named in the warning, and built again; nothing is sent."""
    _summary.hostile("cache: frame of other cells")
    folder, expected = twenty
    was, now = APPS[7], APPS[3]
    if compacted:
        Cache(folder).compact(frames=flattener_versions())
        (path,) = (folder / "frames" / "table=metadata").glob("part-*.parquet")
    else:
        path = _holding(folder, was)
    swapped = pl.read_parquet(path).with_columns(pl.col("app_id").replace(was, now))
    _write_over(path, swapped, _footer(path))
    with (
        sandbox(folder) as client,
        warnings.catch_warnings(),
        pytest.warns(CacheWarning, match=f"{path.name} .*app_id '{now}', which its request did not name"),
    ):
        warnings.simplefilter("ignore", AppsUnavailableWarning)
        frame = client.metadata_frame(APPS)
        assert frame.equals(expected) and arrivals(client) == 0
    with sandbox(folder) as client, warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        warnings.simplefilter("ignore", AppsUnavailableWarning)
        assert client.metadata_frame(APPS).equals(expected) and arrivals(client) == 0
