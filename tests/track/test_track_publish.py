"""A tracker with a ``[publish]`` table, replayed day by day against the sandbox: the lake's tables after
every run are what ``sf.scan`` and ``sf.snapshots`` give, and a table's version grows only on a day
with new answers of it."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import storeframes as sf
from storeframes.lake.read import scan as delta_scan
from storeframes.sandbox import World
from storeframes.track import Tracker

pytest.importorskip("deltalake")

WORLD = World(0)
APPS = list(WORLD.EXAMPLE_IOS_APPS[:2])
KEYWORDS = list(WORLD.EXAMPLE_KEYWORDS[:2])
DAY = date(2026, 11, 2)
TABLES = ("metadata", "metrics", "search", "search_history")


def _spec(tmp_path: Path, publish: str) -> Path:
    quoted = lambda values: "[" + ", ".join(f'"{v}"' for v in values) + "]"  # noqa: E731
    path = tmp_path / "tracking.toml"
    path.write_text(f"""[tracker]
name = "watch"
cache_dir = "cache"

[[track]]
endpoint = "search"
keywords = {quoted(KEYWORDS)}

[[track]]
endpoint = "search_history"
keywords = {quoted(KEYWORDS[:1])}
lookback = "3d"

[[track]]
endpoint = "metadata"
apps = {quoted(APPS)}

[[track]]
endpoint = "metrics"
apps = {quoted(APPS)}
metrics = ["downloads"]
every = "7d"

[publish]
{publish}
""")
    return path


def _sorted(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.sort(frame.columns, nulls_last=True)


def _read_delta(uri: str, storage_options: dict[str, str] | None = None) -> pl.DataFrame:
    """A Delta table as polars reads it (through its pyarrow dataset with polars 1.30, which cannot read deltalake 1's)."""
    import deltalake

    return delta_scan(deltalake.DeltaTable(uri, storage_options=storage_options)).collect()


def _same(lake: Path, table: str, expected: pl.LazyFrame) -> None:
    """The lake's table, read by polars' own Delta reader, is ``expected``: values, dtypes, rows."""
    published = _read_delta(str(lake / table)).drop("_cell", "_answer", "_row", strict=False)  # the merge's own
    assert_frame_equal(_sorted(published), _sorted(expected.collect()))


def test_a_week_of_runs_publishes_what_scan_and_snapshots_give_a_new_version_only_with_new_answers(tmp_path):
    tracker = Tracker.from_toml(
        _spec(tmp_path, f'lake = "lake"\ntables = {list(TABLES)!r}\nsnapshots = true'.replace("'", '"')),
        sandbox=True,
    )
    lake, cache = tmp_path / "lake", tmp_path / "cache"
    published = []
    for n in range(7):
        result = tracker.run(DAY + timedelta(days=n))
        assert (result.status, result.errors) == ("ok", [])
        published.append(result.published)
        for table in TABLES:
            _same(lake, table, sf.scan(table, cache))
        for table in ("metadata", "metrics", "search"):
            _same(lake, f"{table}_snapshots", sf.snapshots(table, cache))
    assert set(published[0]) == {*TABLES, "metadata_snapshots", "metrics_snapshots", "search_snapshots"}
    for table in ("search", "search_snapshots", "metadata", "metadata_snapshots", "search_history"):
        versions = [p[table] for p in published]
        assert versions == sorted(set(versions)), (table, versions)  # a new version every day: new answers
    for table in ("metrics", "metrics_snapshots"):  # every 7 days: fetched on the first day only
        assert {p[table] for p in published} == {published[0][table]}, table
    assert _read_delta(str(lake / "metrics_snapshots"))["snapshot_date"].unique().to_list() == [DAY]
    again = tracker.run(DAY + timedelta(days=6))  # nothing due: nothing new to publish
    assert (again.requests, again.published) == (0, published[-1])
    assert "published: metadata v" in again.summary()


def test_a_publish_that_fails_is_said_in_the_run_keeps_what_was_fetched_and_the_next_run_publishes(tmp_path):
    tracker = Tracker.from_toml(_spec(tmp_path, 'lake = "lake"\ntables = ["search", "metadata"]'), sandbox=True)
    (tmp_path / "lake").write_text("a file where the lake's folder should be")
    failed = tracker.run(DAY)
    assert failed.status == "partial" and failed.exit_code == 3
    assert failed.published == {}
    assert [e.split(":")[0] for e in failed.errors] == ["publish metadata", "publish search"]
    assert failed.requests > 0
    log = tracker.runs().row(-1, named=True)
    assert log["status"] == "partial" and "publish search" in log["errors"]
    assert sf.scan("search", tmp_path / "cache").collect().height > 0  # the fetched answers are kept
    (tmp_path / "lake").unlink()
    later = tracker.run(DAY)  # the same day: nothing due, and what the failed run fetched is published
    assert (later.status, later.requests) == ("ok", 0)
    assert set(later.published) == {"search", "metadata"}
    for table in ("search", "metadata"):
        _same(tmp_path / "lake", table, sf.scan(table, tmp_path / "cache"))


@pytest.mark.s3
def test_a_tracker_on_a_bucket_publishes_to_a_bucket_lake_named_by_an_environment_variable(
    s3_bucket, monkeypatch, tmp_path
):
    monkeypatch.setenv("LAKE_BUCKET", s3_bucket.name)
    path = _spec(tmp_path, 'lake = "s3://${LAKE_BUCKET}/lake"\ntables = ["search", "metrics"]')
    path.write_text(path.read_text().replace('cache_dir = "cache"', f'cache_dir = "{s3_bucket.url}"'))
    options = s3_bucket.storage_options
    tracker = Tracker.from_toml(path, sandbox=True, storage_options=options)
    for n in range(2):
        result = tracker.run(DAY + timedelta(days=n))
        assert (result.status, result.errors) == ("ok", [])
        for table in ("search", "metrics"):
            direct = {**options, "aws_allow_http": "true"}  # moto on loopback: plain http
            published = _read_delta(f"s3://{s3_bucket.name}/lake/{table}", direct).drop("_cell", "_answer", "_row")
            expected = sf.scan(table, s3_bucket.url, storage_options=options).collect()
            assert_frame_equal(_sorted(published), _sorted(expected))
    assert result.published == {"search": 2, "metrics": 1}  # 0: made empty; metrics every 7 days: one version
    assert any(key.startswith("lake/search/_delta_log/") for key in s3_bucket.objects())


def test_a_run_that_leaves_something_due_holds_the_snapshots_back_until_a_run_fetches_the_day_whole(tmp_path):
    path = _spec(tmp_path, 'lake = "lake"\ntables = ["search", "metadata"]\nsnapshots = true')
    whole = Tracker.from_toml(path, sandbox=True)
    plan = whole.plan(DAY)
    budget = plan.items.filter(pl.col("item") == "search")["credits"].item()  # the first item fits, no other
    path.write_text(path.read_text().replace('cache_dir = "cache"', f'cache_dir = "cache"\nbudget_per_run = {budget}'))
    short = Tracker.from_toml(path, sandbox=True)
    lake, cache = tmp_path / "lake", tmp_path / "cache"
    first = short.run(DAY)
    assert first.status == "over_budget" and "metadata" in first.left_out
    assert set(first.published) == {"search", "metadata"}  # the current tables: what is kept so far
    _same(lake, "search", sf.scan("search", cache))
    assert not (lake / "search_snapshots").exists()  # the day is not whole yet: appended once, it would stay so
    later = whole.run(DAY)  # the same day, without the budget: the rest is fetched
    assert (later.status, later.errors) == ("ok", [])
    assert set(later.published) == {"search", "metadata", "search_snapshots", "metadata_snapshots"}
    for table in ("search", "metadata"):
        _same(lake, table, sf.scan(table, cache))
        _same(lake, f"{table}_snapshots", sf.snapshots(table, cache))
    assert _read_delta(str(lake / "metadata"))["app_id"].n_unique() == len(APPS)
