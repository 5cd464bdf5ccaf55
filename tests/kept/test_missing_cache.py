"""Reads of a cache that is not there: every read (sf.scan, sf.snapshots, sf.observed_changes, sf.events,
sf.sql, sf.publish's source, sf.compact, sf.manifest and sf.check_manifest, storeframes mcp offline) of a
folder that does not exist, of a bucket prefix holding no cache (moto's S3 on loopback) and of a bucket
that cannot be listed raises an error naming the place, never 0 rows; an empty cache still gives 0 rows; a table read as of a moment
before it was first published is refused, naming when it was."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import storeframes as sf
from storeframes.cli import main
from storeframes.sandbox import World
from tests._s3 import ACCESS_KEY, REGION, SECRET_KEY, refusing_server
from tests.conftest import SANDBOX_TODAY

WORLD = World(0)
APPS = list(WORLD.EXAMPLE_IOS_APPS[:2])

READS: dict[str, Callable[..., Any]] = {
    "scan": lambda where, **o: sf.scan("metrics", where, **o).collect(),
    "snapshots": lambda where, **o: sf.snapshots("metrics", where, **o).collect(),
    "observed_changes": lambda where, **o: sf.observed_changes(where, **o),
    "events": lambda where, **o: sf.events(where, **o),
    "sql": lambda where, **o: sf.sql("SELECT count(*) AS n FROM metrics", where, **o),
    "compact": lambda where, **o: sf.compact(where, **o),
}
"""Each read of a cache, by the name its error gives."""


def _fill(where: Any, **options: Any) -> None:
    """A cache with one day of metrics in it (and nothing of any other table)."""
    with sf.sandbox.client(today=SANDBOX_TODAY, cache_dir=where, progress=False, **options) as client:
        client.metrics_frame(APPS, ["downloads"])


@pytest.mark.parametrize("read", list(READS))
def test_a_folder_that_does_not_exist_is_no_cache_not_an_empty_one(read, tmp_path):
    missing = tmp_path / "analysis-cahce"  # a typo of the folder a notebook filled
    with pytest.raises(sf.NoCacheError) as raised:
        READS[read](missing)
    message = str(raised.value)
    assert message.startswith(f"{read}: no cache at {missing}: the folder does not exist;")
    assert "a cache is made where a call with this cache_dir" in message and "storeframes track run" in message
    assert (raised.value.location, raised.value.operation) == (str(missing), read)
    assert isinstance(raised.value, sf.CacheUnavailableError)  # caught where a cache that cannot be read is
    assert not missing.exists()  # looking made nothing


@pytest.mark.parametrize("read", ["scan", "sql", "events"])
def test_a_folder_of_other_things_is_no_cache(read, tmp_path):
    (tmp_path / "notes.txt").write_text("not a cache")
    with pytest.raises(sf.NoCacheError, match=r"the folder holds no storeframes-cache\.json"):
        READS[read](tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_an_empty_folder_and_a_cache_without_the_table_give_0_rows(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert sf.scan("metrics", empty).collect().height == 0
    assert sf.sql("SELECT count(*) AS n FROM metrics", empty)["n"].to_list() == [0]
    assert sf.events(empty).height == 0
    filled = tmp_path / "filled"
    _fill(filled)
    assert sf.scan("metrics", filled).collect().height == len(APPS)
    assert sf.snapshots("metadata", filled).collect().height == 0  # a cache with no metadata: truly none
    assert sf.observed_changes(filled).height == 0


@pytest.mark.parametrize("read", list(READS))
@pytest.mark.s3
def test_a_bucket_prefix_holding_no_cache_is_no_cache(read, s3_bucket):
    options = {"storage_options": s3_bucket.storage_options}
    _fill(s3_bucket.url, **options)
    elsewhere = f"s3://{s3_bucket.name}/cahce"  # the bucket is there, the prefix holds nothing
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said in the error, not in a warning beside 0 rows
        with pytest.raises(sf.NoCacheError) as raised:
            READS[read](elsewhere, **options)
    message = str(raised.value)
    assert f"{read}: no cache at s3://{s3_bucket.name}/cahce" in message
    assert "it holds no storeframes-cache.json" in message and "a cache is made" in message
    assert SECRET_KEY not in message and ACCESS_KEY not in message
    assert not any(key.startswith("cahce/") for key in s3_bucket.objects())


@pytest.mark.s3
def test_a_bucket_prefix_holding_a_cache_without_the_table_gives_0_rows(s3_bucket):
    options = {"storage_options": s3_bucket.storage_options}
    _fill(s3_bucket.url, **options)
    assert sf.scan("metrics", s3_bucket.url, **options).collect().height == len(APPS)
    assert sf.scan("versions", s3_bucket.url, **options).collect().height == 0


@pytest.mark.parametrize("read", ["scan", "snapshots", "sql", "events"])
@pytest.mark.s3
def test_a_bucket_that_does_not_exist_is_an_error_not_a_warning_and_0_rows(read, s3_bucket):
    options = {"storage_options": s3_bucket.storage_options}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(sf.CacheUnavailableError) as raised:
            READS[read](f"s3://{s3_bucket.name}-gone/cache", **options)
    assert not isinstance(raised.value, sf.NoCacheError)  # it may hold a cache: it could not be looked into
    message = str(raised.value)
    assert message.startswith(f"{read}: the cache at s3://{s3_bucket.name}-gone/cache cannot be listed (")
    assert "likely cause" in message and SECRET_KEY not in message


@pytest.mark.s3
def test_a_bucket_that_refuses_access_is_an_error_naming_it(monkeypatch):
    with refusing_server(403, "AccessDenied") as (endpoint, seen):
        options = {
            "aws_access_key_id": ACCESS_KEY,
            "aws_secret_access_key": SECRET_KEY,
            "aws_endpoint_url": endpoint,
            "aws_region": REGION,
        }
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(sf.CacheUnavailableError) as raised:
                sf.scan("metrics", "s3://team-bucket/cache", storage_options=options)
        assert seen  # it was asked
    assert not isinstance(raised.value, sf.NoCacheError)
    message = str(raised.value)
    assert message.startswith("scan: the cache at s3://team-bucket/cache cannot be listed (")
    assert SECRET_KEY not in message and ACCESS_KEY not in message


def test_a_manifest_checked_against_a_missing_cache_is_refused_not_all_missing(tmp_path):
    _fill(tmp_path / "cache")
    sf.manifest("metrics", cache_dir=tmp_path / "cache", path=tmp_path / "m.json")
    with pytest.raises(sf.NoCacheError, match=r"^check_manifest: no cache at .*cahce: the folder does not exist"):
        sf.check_manifest(tmp_path / "m.json", tmp_path / "cahce")
    with pytest.raises(sf.NoCacheError, match=r"^manifest: no cache at "):
        sf.manifest("metrics", cache_dir=tmp_path / "cahce")
    assert sf.check_manifest(tmp_path / "m.json", tmp_path / "cache").ok


def test_publish_from_a_missing_cache_creates_no_table(tmp_path, capsys):
    pytest.importorskip("deltalake")
    lake = tmp_path / "lake"
    with pytest.raises(sf.NoCacheError, match=r"^publish: no cache at .*cahce: the folder does not exist"):
        sf.publish("metrics", lake, cache_dir=tmp_path / "cahce", snapshots=True)
    assert not lake.exists()
    code = main(["publish", "metrics", str(lake), "--cache-dir", str(tmp_path / "cahce")])
    assert code == 2 and not lake.exists()
    said = capsys.readouterr().err
    assert said.startswith(f"storeframes publish: publish: no cache at {tmp_path / 'cahce'}: the folder does not")


def test_mcp_offline_on_a_missing_cache_refuses_to_start(tmp_path, capsys, monkeypatch):
    pytest.importorskip("mcp")
    monkeypatch.delenv("STOREFRAMES_API_KEY", raising=False)
    missing = tmp_path / "cahce"
    assert main(["mcp", "--offline", "--cache-dir", str(missing)]) == 2
    said = capsys.readouterr().err
    assert f"storeframes mcp: --cache-dir: no cache at {missing}: the folder does not exist" in said
    assert not missing.exists()
    from storeframes.agent import open_surface

    (tmp_path / "empty").mkdir()  # an empty cache: served, and its tools say it holds nothing
    surface = open_surface(tmp_path / "empty", offline=True)
    assert surface.settings()["offline"] is True


def test_read_table_as_of_before_the_first_version_says_when_it_was_published(tmp_path):
    pytest.importorskip("deltalake")
    cache, lake = tmp_path / "cache", tmp_path / "lake"
    _fill(cache)
    before = datetime.now(UTC) - timedelta(minutes=5)
    done = sf.publish("metrics", lake, cache_dir=cache)
    assert (done.version, done.inserted) == (1, len(APPS))  # version 0: made empty; 1: its rows
    with pytest.raises(sf.InvalidParameterError) as raised:
        sf.read_table(lake, "metrics", as_of=before)
    message = str(raised.value)
    assert "invalid as_of=" in message and f"when {lake}/metrics was first published (version 1)" in message
    assert f"it did not exist at {before.isoformat()}" in message
    first = datetime.fromisoformat(message.split("a moment at or after ")[1].split(",")[0])
    assert before < first <= datetime.now(UTC)
    assert sf.read_table(lake, "metrics", as_of=first).collect().height == len(APPS)  # from then on: its rows
    assert sf.read_table(lake, "metrics", as_of=datetime.now(UTC)).collect().height == len(APPS)
