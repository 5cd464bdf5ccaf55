"""sf.publish and sf.read_table: cached tables published to Delta Lake (a folder, and moto's S3 on loopback)
equal sf.scan read back by polars and by deltalake; a publish with nothing new writes no version; a refresh
changes exactly its cells' rows and the version before stays readable; snapshots are appended day by day;
two publishers at once lose no row; and what is refused before anything is written."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import storeframes as sf
from storeframes.lake import LakeRead, merge_keys, reads
from storeframes.lake.read import BOOKKEEPING, SCANS_DELTA
from storeframes.sandbox import World
from tests._children import child_env
from tests._extras import names_the_extra
from tests.conftest import ROOT, SANDBOX_TODAY, sandbox_client_on

deltalake = pytest.importorskip("deltalake")

WORLD = World(0)
APPS = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US][:3]
DAYS = [SANDBOX_TODAY - timedelta(days=n) for n in (2, 1, 0)]
TABLES = ["metadata", "versions", "metrics", "search_history"]


def _fill(cache: Any, day: date, **options: Any) -> None:
    """One day's tracking of :data:`APPS` into ``cache``."""
    with sandbox_client_on(day, cache, **options) as client:
        client.metadata_frame(APPS)
        client.metrics_frame(APPS, ["downloads", "ratings"])
        client.search_history_frame(WORLD.EXAMPLE_KEYWORDS[0], days=5)


def _sorted(frame: pl.DataFrame) -> pl.DataFrame:
    keys = [name for name, dtype in frame.schema.items() if not dtype.is_nested()]
    return frame.sort(keys, nulls_last=True)


def _same(got: pl.DataFrame, expected: pl.DataFrame) -> None:
    """The same columns, dtypes and rows, in any order."""
    assert got.schema == expected.schema
    assert got.height == expected.height
    assert_frame_equal(_sorted(got), _sorted(expected))


def _check_published(lake: str, table: str, cache: Any, options: dict[str, str] | None = None) -> None:
    """The Delta table equals sf.scan(table), read by polars, by deltalake and by sf.read_table."""
    kw = {"storage_options": options} if options else {}
    direct = {**options, "aws_allow_http": "true"} if options else None  # moto on loopback: plain http
    uri = f"{lake}/{table}"
    expected = sf.scan(table, cache).collect()
    assert expected.height > 0
    if SCANS_DELTA:
        by_polars = pl.scan_delta(uri, storage_options=direct).collect()
    else:  # polars 1.30 cannot read deltalake 1's tables itself: through their pyarrow dataset
        by_polars = pl.scan_pyarrow_dataset(
            deltalake.DeltaTable(uri, storage_options=direct).to_pyarrow_dataset()
        ).collect()
    assert by_polars.columns == [*expected.columns, *BOOKKEEPING]
    assert by_polars.select(pl.struct("_cell", "_row").is_unique().all()).item()
    _same(by_polars.drop(BOOKKEEPING), expected)
    by_deltalake = pl.from_arrow(deltalake.DeltaTable(uri, storage_options=direct).to_pyarrow_table())
    assert isinstance(by_deltalake, pl.DataFrame)
    _same(by_deltalake.drop(BOOKKEEPING), expected)
    _same(sf.read_table(lake, table, **kw).collect(), expected)


@pytest.fixture
def filled(tmp_path: Path) -> Path:
    cache = tmp_path / "cache"
    _fill(cache, DAYS[0])
    return cache


@pytest.mark.s3
def test_every_table_published_equals_its_scan_and_a_second_publish_writes_nothing(filled, tmp_path):
    lake = str(tmp_path / "lake")
    for table in TABLES:
        first = sf.publish(table, lake, cache_dir=filled)
        # version 0 is the table made empty; its rows are version 1
        assert (first.table, first.uri, first.version, first.written) == (table, f"{lake}/{table}", 1, True)
        assert first.inserted == sf.scan(table, filled).collect().height and first.deleted == first.updated == 0
        assert first.snapshots_uri is None and first.snapshot_rows == 0
        _check_published(lake, table, filled)

        again = sf.publish(table, lake, cache_dir=filled)
        assert (again.version, again.written, again.inserted, again.updated, again.deleted) == (1, False, 0, 0, 0)
        assert deltalake.DeltaTable(f"{lake}/{table}").version() == 1

    commit = deltalake.DeltaTable(f"{lake}/metrics").history(1)[0]
    assert commit["storeframes.version"] == sf.__version__
    assert commit["storeframes.table"] == "metrics"
    assert commit["storeframes.cache"] == sf.Cache(filled).location
    assert commit["storeframes.cells"] == str(len(APPS) * 2) and commit["storeframes.answers"] == "1"
    assert re.fullmatch(r"[0-9a-f]{64}", commit["storeframes.digest"])


@pytest.mark.s3
def test_a_refresh_changes_exactly_its_cells_rows_and_the_version_before_stays_readable(filled, tmp_path):
    lake = str(tmp_path / "lake")
    before = {table: sf.scan(table, filled).collect() for table in ("metrics", "versions")}
    for table in before:
        sf.publish(table, lake, cache_dir=filled)
    time.sleep(0.05)
    between = datetime.now(UTC)  # after version 1 of each table, before version 2
    time.sleep(0.05)
    with sandbox_client_on(DAYS[1], filled) as client:  # a day later, the first app fetched again
        client.metadata_frame(APPS[:1], refresh=True)
        client.metrics_frame(APPS[:1], ["downloads", "ratings"], refresh=True)

    for table, old in before.items():
        new = sf.scan(table, filled).collect()
        done = sf.publish(table, lake, cache_dir=filled)
        assert done.written and done.version == 2
        mine = new.filter(pl.col("app_id") == APPS[0]).height
        was = old.filter(pl.col("app_id") == APPS[0]).height
        assert done.inserted + done.updated == mine and done.updated + done.deleted == was
        _check_published(lake, table, filled)
        published = pl.from_arrow(deltalake.DeltaTable(f"{lake}/{table}").to_pyarrow_table())
        assert isinstance(published, pl.DataFrame)
        assert published.filter(pl.col("app_id") == APPS[0])["fetched_at"].dt.date().unique().to_list() == [DAYS[1]]
        others = published.filter(pl.col("app_id") != APPS[0])
        assert others["fetched_at"].dt.date().unique().to_list() == [DAYS[0]]  # untouched
        _same(sf.read_table(lake, table, version=1).collect(), old)
        assert reads()[-1].version == 1 and reads()[-1].table == table
        assert sf.read_table(lake, table).collect().height == new.height and reads()[-1].version == 2
        _same(sf.read_table(lake, table, as_of=between).collect(), old)
        assert reads()[-1] == LakeRead(lake, table, 1)
        assert sf.read_table(lake, table, as_of=datetime.now(UTC).isoformat()).collect().height == new.height
        assert reads()[-1] == LakeRead(lake, table, 2)


def test_snapshots_appended_day_by_day_match_sf_snapshots(tmp_path):
    cache, lake = tmp_path / "cache", str(tmp_path / "lake")
    for n, day in enumerate(DAYS):
        _fill(cache, day)
        done = sf.publish("metrics", lake, cache_dir=cache, snapshots=True)
        assert done.snapshots_uri == f"{lake}/metrics_snapshots" and done.snapshots_version == n + 1
        assert done.snapshot_rows == len(APPS) * 2
        expected = sf.snapshots("metrics", cache).collect()
        got = sf.read_table(lake, "metrics_snapshots").collect()
        _same(got, expected)
        assert sorted(got["snapshot_date"].unique()) == DAYS[: n + 1]
        again = sf.publish("metrics", lake, cache_dir=cache, snapshots=True)
        assert (again.written, again.snapshots_version, again.snapshot_rows) == (False, n + 1, 0)
    partitions = deltalake.DeltaTable(f"{lake}/metrics_snapshots").metadata().partition_columns
    assert partitions == ["snapshot_date"]


PUBLISH = """
import json, sys
import storeframes as sf
args = json.loads(sys.argv[1])
done = sf.publish(args["table"], args["lake"], cache_dir=args["cache"], storage_options=args["options"])
print(json.dumps({"version": done.version, "written": done.written}))
"""


def _at_once(table: str, lake: str, cache: str, options: dict[str, str] | None, env: dict[str, str]) -> list[dict]:
    """Two processes publishing ``table`` at the same time; what each said."""
    args = json.dumps({"table": table, "lake": lake, "cache": cache, "options": options})
    command = [sys.executable, "-c", PUBLISH, args]
    both = [
        subprocess.Popen(command, cwd=ROOT, env=child_env(**env), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    said = []
    for child in both:
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err.decode()
        said.append(json.loads(out.decode().strip().splitlines()[-1]))
    return said


@pytest.mark.processes
@pytest.mark.s3
def test_two_processes_publishing_at_once_leave_every_row_once(filled, tmp_path):
    lake = str(tmp_path / "lake")
    said = _at_once("versions", lake, str(filled), None, {})  # both create the table
    assert sorted(s["written"] for s in said) == [False, True]
    _check_published(lake, "versions", filled)
    made = deltalake.DeltaTable(f"{lake}/versions").version()  # 1, or 2 when both made the empty table
    with sandbox_client_on(DAYS[1], filled) as client:
        client.metadata_frame(APPS[:2], refresh=True)
    said = _at_once("versions", lake, str(filled), None, {})  # both merge the same change
    assert sorted(s["written"] for s in said) == [False, True] and {s["version"] for s in said} == {made + 1}
    _check_published(lake, "versions", filled)


@pytest.mark.processes
@pytest.mark.s3
def test_a_bucket_lake_equals_the_scan_merges_a_refresh_and_keeps_credentials_out(s3_bucket, tmp_path):
    options = s3_bucket.storage_options
    cache = tmp_path / "cache"
    _fill(cache, DAYS[0])
    lake = f"s3://{s3_bucket.name}/lake"
    for table in ("metrics", "versions"):
        done = sf.publish(table, lake, cache_dir=cache, storage_options=options, snapshots=True)
        assert done.written and done.uri == f"{lake}/{table}"
        _check_published(lake, table, cache, options)
        assert not sf.publish(table, lake, cache_dir=cache, storage_options=options).written
    with sandbox_client_on(DAYS[1], cache) as client:
        client.metrics_frame(APPS[:1], ["downloads", "ratings"], refresh=True)
    assert sf.publish("metrics", lake, cache_dir=cache, storage_options=options).version == 2
    _check_published(lake, "metrics", cache, options)
    said = _at_once("versions", lake, str(cache), options, {})
    assert [s["written"] for s in said] == [False, False]
    with sandbox_client_on(DAYS[1], cache) as client:
        client.metadata_frame(APPS[:2], refresh=True)
    said = _at_once("versions", lake, str(cache), options, {})  # conditional writes on S3: one wins
    assert sorted(s["written"] for s in said) == [False, True]
    _check_published(lake, "versions", cache, options)

    secret = options["aws_secret_access_key"]
    logs = {k: v for k, v in s3_bucket.objects().items() if "/_delta_log/" in k and k.endswith(".json")}
    assert logs and not any(
        secret.encode() in body or options["aws_access_key_id"].encode() in body for body in logs.values()
    )
    assert any(b'"storeframes.cache"' in body for body in logs.values())
    shown = repr(sf.publish("metrics", lake, cache_dir=cache, storage_options=options))
    assert secret not in shown and options["aws_access_key_id"] not in shown


def test_what_is_refused_before_anything_is_written(filled, tmp_path):
    lake = tmp_path / "lake"
    cases: list[tuple[dict[str, Any], str]] = [
        ({"table": "nonsense", "lake": lake}, "table"),
        ({"table": "changes", "lake": lake, "snapshots": True}, "snapshots"),
        ({"table": "metrics", "lake": lake, "snapshots": "yes"}, "snapshots"),
        ({"table": "metrics", "lake": "ftp://host/lake"}, "lake"),
        ({"table": "metrics", "lake": ""}, "lake"),
        ({"table": "metrics", "lake": 3}, "lake"),
        ({"table": "metrics", "lake": lake, "storage_options": {"aws_region": "us-east-1"}}, "storage_options"),
    ]
    for given, parameter in cases:
        with pytest.raises(sf.InvalidParameterError) as refused:
            sf.publish(cache_dir=filled, **given)
        assert refused.value.parameter == parameter, given
    with pytest.raises(sf.InvalidParameterError, match="holds credentials") as refused:
        sf.publish("metrics", "s3://AKIAXX:topsecret@bucket/lake", cache_dir=filled)
    assert "topsecret" not in str(refused.value)
    assert not lake.exists()

    sf.publish("metrics", lake, cache_dir=filled)
    for given, parameter in [
        ({"version": 0, "as_of": "2026-11-20"}, "as_of"),
        ({"version": -1}, "version"),
        ({"version": 7}, "version"),
        ({"as_of": "yesterday"}, "as_of"),
    ]:
        with pytest.raises(sf.InvalidParameterError) as refused:
            sf.read_table(lake, "metrics", **given)
        assert refused.value.parameter == parameter, given
    with pytest.raises(sf.InvalidParameterError, match="none is at"):
        sf.read_table(lake, "versions")
    deltalake.write_deltalake(str(lake / "versions"), pl.DataFrame({"app_id": ["1"]}).to_arrow())
    with pytest.raises(sf.InvalidParameterError, match="is another's") as refused:
        sf.publish("versions", lake, cache_dir=filled)
    assert refused.value.parameter == "lake"
    assert deltalake.DeltaTable(str(lake / "versions")).version() == 0


@pytest.mark.processes
def test_the_command_publishes_and_says_what_it_did(filled, tmp_path):
    lake = str(tmp_path / "lake")
    command = [sys.executable, "-m", "storeframes", "publish", "metrics", lake, "--cache-dir", str(filled)]
    first = subprocess.run([*command, "--snapshots"], cwd=ROOT, env=child_env(), capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    lines = first.stdout.strip().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"metrics -> {lake}/metrics: version 1: {len(APPS) * 2} rows inserted")
    assert lines[1].startswith(f"metrics snapshots -> {lake}/metrics_snapshots: {len(APPS) * 2} rows appended")
    again = subprocess.run(command, cwd=ROOT, env=child_env(), capture_output=True, text=True)
    assert again.returncode == 0 and "nothing new, version 1 unchanged" in again.stdout
    refused = subprocess.run(
        [*command[:4], "nonsense", lake], cwd=ROOT, env=child_env(), capture_output=True, text=True
    )
    assert refused.returncode == 2 and "invalid table='nonsense'" in refused.stderr


def test_the_readme_lists_the_merge_keys_of_every_table():
    section = (ROOT / "docs" / "guides" / "tables-and-sql.md").read_text(encoding="utf-8").split("\n## ", 1)[0]
    listed = {t: (c, s) for t, c, s in re.findall(r"^\| `(\w+)` \| (.+?) \| (.+?) \|$", section, flags=re.MULTILINE)}

    def shown(names: list[str]) -> str:
        return ", ".join(f"`{name}`" for name in names) or "(one cell per scope)"

    assert listed == {table: (shown(keys["cell"]), shown(keys["scope"])) for table, keys in merge_keys().items()}
    assert set(listed) == set(sf.kept.tables.TABLES)


def test_without_deltalake_publish_and_read_table_name_the_extra(filled, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "deltalake", None)  # as if it were not installed
    for call in (
        lambda: sf.publish("metrics", tmp_path / "lake", cache_dir=filled),
        lambda: sf.read_table(tmp_path / "lake", "metrics"),
    ):
        with pytest.raises(ImportError) as raised:
            call()
        assert names_the_extra(str(raised.value), "lake")
    assert not (tmp_path / "lake").exists()


@pytest.mark.s3
def test_a_publish_that_loses_the_race_reads_the_table_again_and_adds_no_row_twice(filled, tmp_path, monkeypatch):
    publishing = sys.modules["storeframes.lake.publish"]  # the module (sf.lake.publish is the function)
    lake = str(tmp_path / "lake")
    sf.publish("versions", lake, cache_dir=filled)
    with sandbox_client_on(DAYS[1], filled) as client:
        client.metadata_frame(APPS[:2], refresh=True)
    rows, raced, failures = publishing._rows, [], []
    racing = []
    merge = deltalake.DeltaTable.merge

    def first_reads_then_another_commits(*args: Any, **kwargs: Any) -> pl.DataFrame:
        found = rows(*args, **kwargs)
        if not racing:  # between this publish's read and its commit, another publish commits
            racing.append(True)
            raced.append(sf.publish("versions", lake, cache_dir=filled))
        return found

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        builder = merge(self, *args, **kwargs)
        execute = builder.execute

        def run() -> Any:
            try:
                return execute()
            except Exception as exc:
                failures.append(type(exc).__name__)
                raise

        builder.execute = run
        return builder

    monkeypatch.setattr(publishing, "_rows", first_reads_then_another_commits)
    monkeypatch.setattr(deltalake.DeltaTable, "merge", counted)
    done = sf.publish("versions", lake, cache_dir=filled)

    assert raced[0].written and raced[0].version == 2
    assert failures == ["CommitFailedError"]  # its commit was refused, then it read version 2: nothing new
    assert (done.written, done.version) == (False, 2)
    _check_published(lake, "versions", filled)


def test_two_caches_publish_to_one_lake_and_the_newest_answer_of_each_cell_wins(tmp_path):
    older, newer, lake = tmp_path / "older", tmp_path / "newer", str(tmp_path / "lake")
    _fill(older, DAYS[0])
    with sandbox_client_on(DAYS[1], newer) as client:
        client.metrics_frame(APPS[:2], ["downloads", "ratings"])  # two of the three apps, a day later
    assert sf.publish("metrics", lake, cache_dir=newer).written
    late = sf.publish("metrics", lake, cache_dir=older)  # only its third app is new to the lake
    assert late.written and late.inserted == 2 and late.updated == late.deleted == 0
    expected = pl.concat(
        [sf.scan("metrics", newer).collect(), sf.scan("metrics", older).collect().filter(pl.col("app_id") == APPS[2])]
    )
    _same(sf.read_table(lake, "metrics").collect(), expected)
    assert not sf.publish("metrics", lake, cache_dir=older).written
    assert not sf.publish("metrics", lake, cache_dir=newer).written


@pytest.mark.s3
def test_rows_made_by_another_flattener_version_are_all_written_again(filled, tmp_path, monkeypatch):
    publishing = sys.modules["storeframes.lake.publish"]
    lake = str(tmp_path / "lake")
    first = sf.publish("versions", lake, cache_dir=filled)
    assert publishing.last_commit(publishing.where(lake, "versions", None, what="t"), 1)["storeframes.flattener"]
    monkeypatch.setattr(publishing, "last_commit", lambda place, version: {"storeframes.flattener": "0"})
    again = sf.publish("versions", lake, cache_dir=filled)
    assert (again.written, again.version, again.updated, again.inserted, again.deleted) == (
        True,
        2,
        first.inserted,
        0,
        0,
    )
    _check_published(lake, "versions", filled)


def test_a_lake_or_a_table_that_is_a_file_is_refused_by_name(filled, tmp_path):
    """delta-rs panics (a BaseException) on a file where a folder should be: refused first, with the path."""
    (tmp_path / "file-lake").write_text("not a folder")
    (tmp_path / "lake").mkdir()
    (tmp_path / "lake" / "metrics").write_text("not a table")
    for lake in (tmp_path / "file-lake", tmp_path / "lake"):
        with pytest.raises(sf.InvalidParameterError, match="is a file, not a folder") as refused:
            sf.publish("metrics", lake, cache_dir=filled)
        assert refused.value.parameter == "lake"
        with pytest.raises(sf.InvalidParameterError, match="is a file, not a folder"):
            sf.read_table(lake, "metrics")
    assert (tmp_path / "lake" / "metrics").read_text() == "not a table"


def test_a_table_of_no_rows_is_made_once_and_published_again_writes_nothing(filled, tmp_path):
    """iOS apps have no permissions: the table is made with the scan's columns, and no later publish writes."""
    lake = str(tmp_path / "lake")
    assert sf.scan("permissions", filled).collect().height == 0
    first = sf.publish("permissions", lake, cache_dir=filled)
    assert (first.version, first.written, first.inserted) == (0, False, 0)
    again = sf.publish("permissions", lake, cache_dir=filled)
    assert (again.version, again.written) == (0, False)
    got = sf.read_table(lake, "permissions").collect()
    assert got.height == 0 and got.schema == sf.scan("permissions", filled).collect().schema
