"""sf.read_table and sf.publish as safe as sf.scan: a read_table LazyFrame of a bucket's table carries no credential
in its serialisation, pickle or plan, and refuses to be written; a missing bucket, missing credentials, a version
past the newest and a version whose files a vacuum removed are StoreframesErrors naming the lake, the table and the
cause in words (no colour codes, no credential, no request), against moto's S3 on loopback and real deltalake."""

from __future__ import annotations

import base64
import json
import os
import pickle
import re
import warnings
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import storeframes as sf
from storeframes.lake import read as lake_read
from tests._s3 import (  # noqa: F401 - the fixtures
    ACCESS_KEY,
    REGION,
    SECRET_KEY,
    SESSION_TOKEN,
    clean_cloud_env,
    refusing_server,
    s3_bucket,
    s3_server,
)
from tests._secrets import exposures
from tests.conftest import sandbox_client_on
from tests.lake.test_lake import APPS, DAYS, _fill

deltalake = pytest.importorskip("deltalake")

SECRETS = (SECRET_KEY, ACCESS_KEY)


def _encodings(secret: str) -> list[bytes]:
    raw = secret.encode()
    return [raw, base64.b64encode(raw), base64.b64encode(raw).rstrip(b"="), secret.replace("/", "%2F").encode()]


def _published(tmp_path: Path, lake: str, options: dict[str, str] | None, refreshes: int = 0) -> Path:
    """A cache filled and its metrics published to ``lake``, then refreshed and published ``refreshes`` times."""
    cache = tmp_path / "cache"
    _fill(cache, DAYS[0])
    sf.publish("metrics", lake, cache_dir=cache, storage_options=options)
    for day in DAYS[1 : 1 + refreshes]:
        with sandbox_client_on(day, cache) as client:
            client.metrics_frame(APPS[:1], ["downloads", "ratings"], refresh=True)
        assert sf.publish("metrics", lake, cache_dir=cache, storage_options=options).written
    return cache


def _clean(error: BaseException) -> str:
    """The error's message, checked: no colour code, no credential anywhere in it or its traceback's locals."""
    message = str(error)
    assert "\x1b[" not in message and "↳" not in message, message
    assert not exposures(error, *SECRETS), exposures(error, *SECRETS)
    return message


@pytest.mark.s3
def test_a_read_table_lazyframe_of_a_bucket_carries_no_credential(s3_bucket, tmp_path, monkeypatch):  # noqa: F811
    options = s3_bucket.storage_options
    lake = f"s3://{s3_bucket.name}/lake"
    cache = _published(tmp_path, lake, options)
    sources: list[Any] = []
    registered = lake_read.register_io_source
    monkeypatch.setattr(
        lake_read, "register_io_source", lambda source, **kw: sources.append(source) or registered(source, **kw)
    )
    lazy = sf.read_table(lake, "metrics", storage_options=options)

    written: list[bytes] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the json format is deprecated, and still written
        warnings.simplefilter("ignore", UserWarning)
        for save in (lazy.serialize, lambda: lazy.serialize(format="json"), lambda: pickle.dumps(lazy)):
            try:
                plan = save()
            except Exception as refused:  # polars wraps what the source raises
                for secret in SECRETS:
                    assert secret not in str(refused) and secret not in repr(refused)
            else:
                written.append(plan if isinstance(plan, bytes) else plan.encode())
    for plan in written:
        for secret in SECRETS:
            assert not any(form in plan for form in _encodings(secret)), secret
    for shown in (lazy.explain(), repr(lazy), str(lazy)):
        assert SECRET_KEY not in shown and ACCESS_KEY not in shown
    # what polars writes of the plan's source (with cloudpickle): the source itself refuses, naming the way out
    with pytest.raises(sf.ConfigurationError) as refused:
        pickle.dumps(sources[0])
    assert str(refused.value) == (
        "a LazyFrame of sf.read_table(..., 'metrics') reads the lake when it is collected and is not serialised, "
        "as it would carry the lake's access: serialise the collected frame, or call sf.read_table again where the "
        "plan is used"
    )

    expected = sf.scan("metrics", cache).collect()
    got = lazy.collect()
    assert got.schema == expected.schema and got.height == expected.height > 0
    app = expected["app_id"][0]
    filtered = lazy.filter(pl.col("app_id") == app).select("app_id", "metric").collect()
    assert filtered.columns == ["app_id", "metric"]
    assert filtered.height == expected.filter(pl.col("app_id") == app).height
    assert lazy.head(1).collect().height == 1


@pytest.mark.parametrize("call", ["publish", "read_table"])
@pytest.mark.s3
def test_a_missing_bucket_is_a_lake_error_naming_bucket_lake_and_table(s3_bucket, tmp_path, call):  # noqa: F811
    options = s3_bucket.storage_options
    cache = tmp_path / "cache"
    _fill(cache, DAYS[0])
    lake = "s3://no-such-bucket-of-ours/lake"
    with pytest.raises(sf.LakeError) as failed:
        if call == "publish":
            sf.publish("metrics", lake, cache_dir=cache, storage_options=options)
        else:
            sf.read_table(lake, "metrics", storage_options=options)
    message = _clean(failed.value)
    assert f"sf.{call} could not" in message and "'metrics' of the lake s3://no-such-bucket-of-ours/lake" in message
    assert "no such bucket: 'no-such-bucket-of-ours' does not exist at this endpoint" in message
    assert "Kernel error" not in message and "Generic S3 error" not in message
    assert (failed.value.lake, failed.value.table, failed.value.operation) == (lake, "metrics", call)
    assert isinstance(failed.value, sf.StoreframesError)


@pytest.mark.s3
def test_no_credentials_is_a_lake_error_saying_which_settings_give_them(s3_bucket, tmp_path):  # noqa: F811
    options = s3_bucket.storage_options
    lake = f"s3://{s3_bucket.name}/lake"
    cache = _published(tmp_path, lake, options)
    anonymous = {k: v for k, v in options.items() if k in ("aws_endpoint_url", "aws_region")}
    try:
        sf.read_table(lake, "metrics", storage_options=anonymous).collect()
    except sf.LakeError:
        pass
    else:  # older delta-rs sends unsigned requests when it finds no credentials, and moto's server takes them
        pytest.skip(f"deltalake {deltalake.__version__} reads without credentials here: nothing is refused")
    for call in (
        lambda: sf.read_table(lake, "metrics", storage_options=anonymous),
        lambda: sf.publish("versions", lake, cache_dir=cache, storage_options=anonymous),
    ):
        with pytest.raises(sf.LakeError, match="no S3 credentials were found: set AWS_ACCESS_KEY_ID") as failed:
            call()
        assert "169.254" not in _clean(failed.value)  # not the metadata service's address it asked


def test_a_version_whose_files_a_vacuum_removed_names_the_versions_that_can_be_read(tmp_path):
    lake = str(tmp_path / "lake")
    _published(tmp_path, lake, None, refreshes=2)  # versions 0 (empty) to 3
    before = sf.read_table(lake, "metrics", version=1)  # made before the vacuum, collected after it
    made = sf.manifest(path=tmp_path / "analysis-manifest.json")
    table = deltalake.DeltaTable(f"{lake}/metrics")
    assert table.vacuum(retention_hours=0, enforce_retention_duration=False, dry_run=False)
    newest = deltalake.DeltaTable(f"{lake}/metrics").version()

    for version in (1, 2):
        with pytest.raises(sf.InvalidParameterError) as refused:
            sf.read_table(lake, "metrics", version=version)
        message = _clean(refused.value)
        assert refused.value.parameter == "version" and refused.value.value == version
        assert f"version {version}'s were removed (by a vacuum)" in message
        assert f"of versions 0 to {newest} (the newest), versions 0 and 3 to {newest} can be read" in message
        assert f"{lake}/metrics" in message
    assert sf.read_table(lake, "metrics", version=3).collect().height > 0
    assert sf.read_table(lake, "metrics", version=0).collect().height == 0  # the empty table holds no file

    # polars before 2.0 wraps what a Python source raises in its ComputeError, whose message carries ours
    raised = sf.LakeError if int(pl.__version__.split(".")[0]) >= 2 else pl.exceptions.ComputeError
    with pytest.raises(raised, match=r"version 1 of .* lost data files since sf\.read_table made this frame"):
        before.collect()
    checked = sf.check_manifest(made)  # a manifest of an analysis that read version 1 before the vacuum
    assert checked.missing == [f"{lake}/metrics@1"]
    assert checked.items[0].note.startswith("not readable: invalid version=1 for read_table: a version of ")
    assert "version 1's were removed (by a vacuum)" in checked.items[0].note


def test_a_version_past_the_newest_says_which_is_the_newest(tmp_path):
    lake = str(tmp_path / "lake")
    _published(tmp_path, lake, None)
    with pytest.raises(sf.InvalidParameterError) as refused:
        sf.read_table(lake, "metrics", version=7)
    assert str(refused.value) == f"invalid version=7 for read_table: a version of {lake}/metrics: 1 is its newest"


def test_the_reader_of_polars_before_1_35_gives_the_same_rows(tmp_path, monkeypatch):
    lake = str(tmp_path / "lake")
    cache = _published(tmp_path, lake, None)
    newest = sf.read_table(lake, "metrics").collect()
    monkeypatch.setattr(lake_read, "SCANS_NEST", False)  # the files read by pyarrow inside the source
    lazy = sf.read_table(lake, "metrics")
    got = lazy.collect()
    assert got.schema == newest.schema == sf.scan("metrics", cache).collect().schema
    assert got.sort(got.columns).equals(newest.sort(newest.columns))
    app = newest["app_id"][0]
    some = lazy.filter(pl.col("app_id") == app).select("metric").collect()
    assert some.columns == ["metric"] and some.height == newest.filter(pl.col("app_id") == app).height


def test_as_of_the_moment_of_a_commit_reads_that_commit(tmp_path):
    lake = str(tmp_path / "lake")
    _published(tmp_path, lake, None)
    log = Path(lake, "metrics", "_delta_log", f"{1:020d}.json")
    committed = next(json.loads(line)["commitInfo"] for line in log.read_text().splitlines() if "commitInfo" in line)
    at = datetime.fromtimestamp(committed["timestamp"] / 1000, tz=UTC)
    later = (committed["timestamp"] + 40) / 1000  # the log file written 40 ms after the commit's own time
    os.utime(log, (later, later))
    assert sf.read_table(lake, "metrics", as_of=at).collect().height == len(APPS) * 2  # version 1, not 0
    assert sf.lake.reads()[-1].version == 1


@pytest.mark.parametrize(
    ("code", "said"),
    [
        ("SignatureDoesNotMatch", "the S3 credentials were refused (wrong, expired or of another account)"),
        ("AccessDenied", "permission denied: these credentials may not"),
    ],
)
@pytest.mark.s3
def test_credentials_refused_or_denied_are_lake_errors_without_the_answer(tmp_path, monkeypatch, code, said):
    clean_cloud_env(monkeypatch)
    cache = tmp_path / "cache"
    _fill(cache, DAYS[0])
    with refusing_server(403, code) as (endpoint, seen):
        options = {
            "aws_access_key_id": ACCESS_KEY,
            "aws_secret_access_key": SECRET_KEY,
            "aws_session_token": SESSION_TOKEN,
            "aws_endpoint_url": endpoint,
            "aws_region": REGION,
        }
        for call in (
            lambda: sf.publish("metrics", "s3://team-bucket/lake", cache_dir=cache, storage_options=options),
            lambda: sf.read_table("s3://team-bucket/lake", "metrics", storage_options=options),
        ):
            with pytest.raises(sf.LakeError, match=re.escape(said)) as failed:
                call()
            message = _clean(failed.value)
            assert "the lake s3://team-bucket/lake" in message and "'metrics'" in message
            if code == "AccessDenied":
                doing = "write" if "sf.publish" in message else "read"
                assert f"may not {doing} under s3://team-bucket/lake (a read-only policy or role?)" in message
            assert SESSION_TOKEN not in message and "CanonicalRequest" not in message
            assert not exposures(failed.value, SESSION_TOKEN)
    assert seen  # the requests reached the server, which answered what S3 answers


@pytest.mark.s3
def test_the_command_says_a_missing_bucket_in_one_line(s3_bucket, tmp_path, monkeypatch, capsys):  # noqa: F811
    from storeframes.cli import main

    for name, value in s3_bucket.env.items():
        monkeypatch.setenv(name, value)
    cache = tmp_path / "cache"
    _fill(cache, DAYS[0])
    capsys.readouterr()
    code = main(["publish", "metrics", "s3://no-such-bucket-of-ours/lake", "--cache-dir", str(cache)])
    said = capsys.readouterr().err
    assert code == 1 and said.count("\n") == 1, said
    assert said.startswith(
        "storeframes publish: sf.publish could not write the table 'metrics' of the lake "
        "s3://no-such-bucket-of-ours/lake: no such bucket: 'no-such-bucket-of-ours' does not exist at this endpoint"
    )
    assert "\x1b[" not in said and SECRET_KEY not in said
