"""sf.manifest and sf.check_manifest: what an analysis read (tables of a cache filled by sandbox clients,
published tables at a version, frames), written as JSON and checked again against the same cache, a
cache where some cells were fetched again, and a cache that lacks a table; the content hash's stability."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import storeframes as sf
from storeframes.lake import read as lake_read
from storeframes.lake.manifest import NOT_CHECKABLE, Manifest, content_hash
from storeframes.sandbox import World
from tests.conftest import SANDBOX_TODAY, sandbox_client_on

WORLD = World(0)
APPS = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US][:3]
DAY = SANDBOX_TODAY - timedelta(days=1)


def _write(frame: pl.DataFrame, path: Any, mode: str = "error") -> None:
    """A Delta table written as another tool would (the oldest Arrow layout: pyarrow 15 reads no string views)."""
    import deltalake

    deltalake.write_deltalake(str(path), frame.to_arrow(compat_level=pl.CompatLevel.oldest()), mode=mode)


def fill(folder: Any, **options: Any) -> dict[str, pl.DataFrame]:
    """The metadata and the downloads of three apps, fetched on :data:`DAY` into ``folder``."""
    with sandbox_client_on(DAY, folder, **options) as client:
        return {"metadata": client.metadata_frame(APPS), "metrics": client.metrics_frame(APPS, ["downloads"])}


# -- the content hash ---------------------------------------------------------------------------

MIXED = pl.DataFrame(
    {
        "app_id": ["1", "2", None],
        "rank": [3, None, 1],
        "value": [0.1, float("nan"), -2.5],
        "day": [date(2026, 11, 1), date(2026, 11, 2), None],
        "at": [datetime(2026, 11, 1, 9, 30, tzinfo=UTC), None, datetime(2026, 11, 3, tzinfo=UTC)],
        "tags": [["a", "b"], [], None],
        "price": [{"value": 1.99, "currency": "USD"}, None, {"value": 0.0, "currency": None}],
    },
    schema={
        "app_id": pl.String,
        "rank": pl.Int32,
        "value": pl.Float32,
        "day": pl.Date,
        "at": pl.Datetime("us", "UTC"),
        "tags": pl.List(pl.String),
        "price": pl.Struct({"value": pl.Float64, "currency": pl.String}),
    },
)
MIXED_HASH = "sha256:8944e26297b2fc4206565d83b937bc82f01abc874d39336e304b5cc1c054d7eb"
"""The hash of :data:`MIXED`, kept here: a manifest written by one version must be checked by the next."""


@pytest.mark.processes
def test_the_content_hash_is_the_same_in_any_row_or_column_order_and_in_another_process():
    shuffled = MIXED.reverse().select(reversed(MIXED.columns))
    assert content_hash(MIXED) == content_hash(shuffled) == content_hash(MIXED.lazy()) == MIXED_HASH
    code = (
        "import sys; from tests.lake.test_manifest import MIXED; from storeframes.lake.manifest import content_hash\n"
    )
    code += "print(content_hash(MIXED))"
    other = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert other.stdout.strip() == MIXED_HASH


def test_the_content_hash_changes_with_a_value_a_row_a_duplicate_or_a_column_name():
    hashes = {
        content_hash(MIXED),
        content_hash(MIXED.with_columns(pl.when(pl.col("app_id") == "1").then(4).otherwise("rank").alias("rank"))),
        content_hash(MIXED.head(2)),
        content_hash(pl.concat([MIXED, MIXED.head(1)])),
        content_hash(MIXED.rename({"rank": "place"})),
        content_hash(MIXED.clear()),
    }
    assert len(hashes) == 6


# -- tables of a cache ----------------------------------------------------------------------------


def test_a_manifest_of_two_tables_and_a_frame_is_written_as_json_and_read_back(tmp_path):
    fetched = fill(tmp_path / "cache")
    ranks = pl.DataFrame({"app_id": APPS, "rank": [1, 2, 3]}, schema={"app_id": pl.String, "rank": pl.Int64})
    path = tmp_path / "analysis-manifest.json"

    made = sf.manifest("metrics_frame", "metadata", ranks.lazy(), ranks=ranks, cache_dir=tmp_path / "cache", path=path)

    assert made.path == str(path) and made.storeframes_version == sf.__version__
    assert made.cache == str(tmp_path / "cache")
    by_name = {t.name: t for t in made.tables}
    assert list(by_name) == ["metadata", "metrics"]
    for name, frame in fetched.items():
        table = by_name[name]
        assert (table.rows, table.service, table.answers) == (frame.height, "sandbox-0", 1)
        assert table.hash == content_hash(frame)  # the rows the frame function gave
        assert datetime.fromisoformat(table.newest_fetched_at).date() == DAY
    assert [(f.name, f.rows, f.columns) for f in made.frames] == [
        ("frame_1", 3, ("app_id", "rank")),
        ("ranks", 3, ("app_id", "rank")),
    ]
    text = path.read_text()
    data = json.loads(text)
    assert text == json.dumps(data, indent=2, sort_keys=True) + "\n"
    assert data["tables"]["metrics"]["rows"] == 3 and data["frames"]["ranks"]["hash"] == content_hash(ranks)
    assert Manifest.load(path) == made
    assert Manifest.from_dict(json.loads(made.to_json())) == made


def test_checked_against_the_same_cache_every_table_is_the_same_and_frames_are_listed(tmp_path):
    fill(tmp_path / "cache")
    ranks = pl.DataFrame({"app_id": APPS}, schema={"app_id": pl.String})
    sf.manifest("metadata", "metrics", ranks=ranks, cache_dir=tmp_path / "cache", path=tmp_path / "m.json")

    checked = sf.check_manifest(tmp_path / "m.json", tmp_path / "cache")

    assert checked.ok and checked.changed == [] and checked.missing == []
    frame = checked.to_frame()
    assert frame.schema == pl.Schema(
        {
            "kind": pl.String,
            "name": pl.String,
            "status": pl.String,
            "rows_before": pl.Int64,
            "rows_after": pl.Int64,
            "note": pl.String,
        }
    )
    assert frame.select("kind", "name", "status", "rows_before", "rows_after").rows() == [
        ("table", "metadata", "same", 3, 3),
        ("table", "metrics", "same", 3, 3),
        ("frame", "ranks", NOT_CHECKABLE, 3, None),
    ]
    assert "the same data" in repr(checked) and "ranks: recorded, not checkable" in repr(checked)
    assert "<td>metrics</td><td>same</td>" in checked._repr_html_()


def test_after_a_refresh_of_some_cells_the_check_names_exactly_the_table_that_changed(tmp_path):
    fill(tmp_path / "cache")
    sf.manifest("metadata", "metrics", cache_dir=tmp_path / "cache", path=tmp_path / "m.json")
    with sandbox_client_on(
        SANDBOX_TODAY, tmp_path / "cache"
    ) as client:  # one app's downloads fetched again, a day later
        client.metrics_frame(APPS[:1], ["downloads"], refresh="always")

    checked = sf.check_manifest(tmp_path / "m.json", tmp_path / "cache")

    assert not checked.ok
    assert checked.changed == ["metrics"] and checked.missing == []
    item = next(i for i in checked.items if i.name == "metrics")
    assert (item.rows_before, item.rows_after) == (3, 3)
    assert "content hash differs" in item.note and "2 answers" in item.note
    assert "metrics: changed" in repr(checked) and "metadata: same" in repr(checked)


def test_a_cache_without_a_table_is_said_to_miss_it(tmp_path):
    with sandbox_client_on(DAY, tmp_path / "cache") as client:
        client.metadata_frame(APPS)
    shutil.copytree(tmp_path / "cache", tmp_path / "other")  # a colleague's copy, before the metrics were fetched
    with sandbox_client_on(DAY, tmp_path / "cache") as client:
        client.metrics_frame(APPS, ["downloads"])
    sf.manifest("metadata", "metrics", cache_dir=tmp_path / "cache", path=tmp_path / "m.json")

    checked = sf.check_manifest(tmp_path / "m.json", cache_dir=tmp_path / "other")

    assert not checked.ok and checked.missing == ["metrics"] and checked.changed == []
    assert "1 missing" in repr(checked)
    assert "the cache holds no answer of metrics from sandbox-0" in repr(checked)


def test_what_the_manifest_refuses(tmp_path):
    fill(tmp_path / "cache")
    with pytest.raises(sf.InvalidParameterError, match=r"invalid table='rankings'.*one of metadata"):
        sf.manifest("rankings", cache_dir=tmp_path / "cache")
    with pytest.raises(sf.InvalidParameterError, match=r"invalid frames_or_tables=.*holds none of benchmarks"):
        sf.manifest("benchmarks", cache_dir=tmp_path / "cache")
    with pytest.raises(sf.InvalidParameterError, match=r"invalid frames_or_tables='dict'.*a table's name"):
        sf.manifest({"a": [1]}, cache_dir=tmp_path / "cache")
    with pytest.raises(sf.InvalidParameterError, match=r"invalid ranks='list'.*a polars DataFrame or LazyFrame"):
        sf.manifest(ranks=[1, 2])
    with pytest.raises(sf.InvalidParameterError, match=r"invalid frames_or_tables=\(\).*nothing was given"):
        sf.manifest(path=tmp_path / "empty.json")
    assert not (tmp_path / "empty.json").exists()
    (tmp_path / "notes.json").write_text('{"hello": 1}')
    with pytest.raises(sf.InvalidParameterError, match=r"invalid path=.*notes.json.*a manifest written by sf.manifest"):
        sf.check_manifest(tmp_path / "notes.json", tmp_path / "cache")
    with pytest.raises(sf.InvalidParameterError, match=r"invalid path=.*could not be read as JSON"):
        sf.check_manifest(tmp_path / "nowhere.json", tmp_path / "cache")


# -- published tables --------------------------------------------------------------------------


def test_a_published_table_read_is_recorded_at_its_version_and_checked_there(tmp_path):
    pytest.importorskip("deltalake")
    lake = tmp_path / "lake"
    first = pl.DataFrame({"app_id": ["1", "2"], "value": [10, 20]}, schema={"app_id": pl.String, "value": pl.Int64})
    _write(first, lake / "metrics")
    _write(pl.DataFrame({"app_id": ["3"], "value": [30]}), lake / "metrics", mode="append")  # version 1

    read = lake_read.read_table(lake, "metrics", version=0).collect()
    made = sf.manifest(path=tmp_path / "m.json")

    assert read.height == 2
    assert [(d.table, d.version, d.rows, d.hash) for d in made.delta] == [("metrics", 0, 2, content_hash(first))]
    assert made.delta[0].uri == str(lake) and made.cache is None and made.tables == ()
    _write(pl.DataFrame({"app_id": ["4"], "value": [40]}), lake / "metrics", mode="append")  # version 2
    checked = sf.check_manifest(tmp_path / "m.json")
    assert checked.ok and [(i.kind, i.status, i.rows_after) for i in checked.items] == [("delta", "same", 2)]

    shutil.rmtree(lake)
    checked = sf.check_manifest(tmp_path / "m.json")
    assert not checked.ok and checked.missing == [f"{lake / 'metrics'}@0"]


def test_the_check_of_a_table_changed_in_place_says_so(tmp_path):
    pytest.importorskip("deltalake")
    path = Path(tmp_path / "lake")
    _write(pl.DataFrame({"app_id": ["1"], "value": [10]}), path / "ranks")
    lake_read.read_table(path, "ranks").collect()
    made = sf.manifest()
    changed = Manifest.from_dict({**made.to_dict(), "delta": [{**vars(made.delta[0]), "hash": "sha256:0"}]})

    checked = sf.check_manifest(changed)

    assert checked.changed == [f"{path / 'ranks'}@0"] and not checked.ok
