"""Objects storeframes did not write, planted in every folder of a team's cache (a bucket, or a folder): names
holding ``..``, spaces or accents, folders named like files, links, garbage and empty objects under good names.

None of them breaks a member: a metadata call with a token pays nothing again and serves the same frame,
an offline one too, ``sf.scan``, the ledger's month figures and ``spend``, the run log, events, digests and
``storeframes cache info`` all work and say the same as before; each planted object is named in exactly
one :class:`~storeframes.cache.CacheWarning` (once per process, not per read). Foreign names are left
where they are; files under good names that cannot be read are set aside, as any unreadable file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import pytest

import storeframes as sf
from storeframes.cache import Cache, CacheWarning
from storeframes.cli import main
from storeframes.ledger import month_spent_of
from storeframes.sandbox import SANDBOX_KEY, SandboxServer, World
from tests._children import child_env
from tests.conftest import SANDBOX_TODAY, sandbox_clock

pytestmark = pytest.mark.s3

WORLD = World(0)
APPS, OTHER = (lambda found: (found[:3], found[3:4]))(
    [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US]
)
ID = "20261120T000000000000Z-000000000000-000000"
DAY = date(2026, 11, 20)
DIGEST_DAY = date(2026, 11, 21)
# where each folder of a cache keeps its files, with a name storeframes could have written there ({t}: the table)
GOOD = {
    "answers": f"answers/endpoint=metadata/{ID}.json.zst",
    "index": f"index/endpoint=metadata/{ID}.parquet",
    "frames": "frames/table={t}/part-20261120T000000000000Z-00000000.parquet",
    "ledger": "ledger/20261120T000000000000Z-1-000000-0000.parquet",
    "runs": "runs/tracker=t/20261120-000000-000000.parquet",
    "events": f"events/tracker=t/day={DAY}.parquet",
    "digests": f"digests/tracker=t/day={DIGEST_DAY}.parquet",
    "leases": "leases/0123456789abcdef0123456789abcdef",
}
READ = ("index", "frames", "ledger", "runs", "events", "digests")
"""The folders whose files the cache finds by listing and reads (an answer is read through its index)."""


def _renamed(key: str, name: str) -> str:
    folder, _, _ = key.rpartition("/")
    return f"{folder}/{name}"


FOREIGN = {
    "dots": lambda key: _renamed(key, "z..parquet"),
    "spaces and accents": lambda key: _renamed(key, "planted é copy.parquet"),
    "a folder named like a file": lambda key: f"{key}/inner.parquet",
}

NAMES = ("dots", "spaces and accents")


@dataclass
class Where:
    """A cache's place: a folder or a bucket, and how to plant an object there as another tool would."""

    url: str
    options: dict[str, Any]
    bucket: Any = None

    def plant(self, key: str, data: bytes) -> None:
        if self.bucket is not None:
            self.bucket.client.put_object(Bucket=self.bucket.name, Key=f"{self.bucket.prefix}/{key}", Body=data)
        else:
            path = Path(self.url, *key.split("/"))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)

    def link(self, key: str, target: Path) -> None:
        path = Path(self.url, *key.split("/"))
        path.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, path)

    def holds(self, key: str) -> bool:
        if self.bucket is not None:
            return f"{self.bucket.prefix}/{key}" in self.bucket.objects()
        return os.path.lexists(Path(self.url, *key.split("/")))

    def client(self, server: SandboxServer | None) -> sf.Client:
        options: dict[str, Any] = {"rate_limit": (600, 1.0), "progress": False, "clock": sandbox_clock, **self.options}
        if server is None:
            return sf.Client(None, cache_dir=self.url, offline=True, **options)
        return sf.Client(SANDBOX_KEY, base_url=server.base_url, cache_dir=self.url, **options)


@pytest.fixture(params=["folder", "bucket"])
def where(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Where:
    if request.param == "folder":
        return Where(str(tmp_path / "cache"), {})
    bucket = request.getfixturevalue("s3_bucket")
    for name, value in bucket.env.items():  # for `storeframes cache info`
        monkeypatch.setenv(name, value)
    return Where(bucket.url, {"storage_options": bucket.storage_options}, bucket)


def _everything(where: Where, server: SandboxServer, fetched: Any, before: dict[str, Any]) -> list[str]:
    """Every way a member reads the cache, each checked against what it said before the planting; the
    messages of the CacheWarnings given meanwhile."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        paid = len(server.service.arrivals)
        with where.client(server) as colleague:  # a member with the token: pays nothing again
            assert colleague.metadata_frame(APPS).equals(fetched)
            assert len(server.service.arrivals) == paid and colleague.spent == 0
            assert colleague.spend()["credits_spent"].sum() == before["spent"]
        with where.client(None) as offline:
            assert offline.metadata_frame(APPS).equals(fetched)
        scanned = sf.scan("metadata", cache_dir=where.url, **where.options).collect()
        assert scanned.sort("app_id").equals(fetched.sort("app_id"))
        kept = Cache(where.url, **where.options)
        assert month_spent_of(kept.ledger.read(), "service", before["day"]) == before["month"] > 0
        assert kept.runs.read().height == 0 and kept.events.read().height == 0
        assert kept.digests.read("t", DIGEST_DAY) is None and kept.digests.days("t") == []
        assert kept.info()["entries"] == 1
    assert all(issubclass(w.category, CacheWarning) for w in caught), [str(w.message) for w in caught]
    return [str(w.message) for w in caught]


def _filled(where: Where, server: SandboxServer) -> tuple[Any, dict[str, Any], str]:
    """The metadata of three apps, fetched into the cache; what the ledger says of it; the frames' table."""
    with where.client(server) as first:
        fetched = first.metadata_frame(APPS)
        spent = first.spent
    kept = Cache(where.url, **where.options)
    ledger = kept.ledger.read()
    day = ledger["time"].max().date()
    [table] = {key.split("/")[1].removeprefix("table=") for key in kept.storage.list("frames/")}
    return fetched, {"spent": spent, "day": day, "month": month_spent_of(ledger, "service", day)}, table


@pytest.mark.parametrize("case", list(FOREIGN))
def test_objects_under_names_storeframes_never_writes_are_passed_over_and_named_once(where, case, capsys):
    with SandboxServer(port=0, today=SANDBOX_TODAY) as server:
        fetched, before, table = _filled(where, server)
        # (the leases of a folder are files in folders of their own: a folder there is no foreign name, and
        # no lease is found by listing)
        planted = [
            FOREIGN[case](key.format(t=table)) for kind, key in GOOD.items() if kind != "leases" or case in NAMES
        ]
        for key in planted:
            where.plant(key, b"not the cache's")
        said = _everything(where, server, fetched, before)
        for key in planted:
            assert sum(repr(key) in message for message in said) == 1, (key, said)
            assert where.holds(key)  # not the cache's: left where it is
        assert len(said) == len(planted), said
        assert all("did not write" in message and "passed over" in message for message in said)
    capsys.readouterr()
    assert main(["cache", "info", "--cache-dir", where.url]) == 0
    out, err = capsys.readouterr()
    assert "cached answers: 1" in out and "z.." not in err  # reported once in this process, already


@pytest.mark.parametrize("data", [b"garbage, not Parquet", b""], ids=["garbage", "empty"])
def test_unreadable_objects_under_good_names_are_set_aside_and_named_once(where, data):
    with SandboxServer(port=0, today=SANDBOX_TODAY) as server:
        fetched, before, table = _filled(where, server)
        planted = {kind: GOOD[kind].format(t=table) for kind in READ}
        for key in planted.values():
            where.plant(key, data)
        said = _everything(where, server, fetched, before)
        for kind, key in planted.items():
            named = [m for m in said if key.rpartition("/")[2] in m]
            assert len(named) == 1 and "set aside" in named[0], (kind, said)
            assert not where.holds(key) and where.holds(key + ".corrupt")
        assert len(said) == len(planted), said


def test_links_and_named_pipes_in_a_cache_folder_are_passed_over_and_named_once(tmp_path):
    where = Where(str(tmp_path / "cache"), {})
    outside = tmp_path / "outside.parquet"
    outside.write_bytes(b"not the cache's")
    with SandboxServer(port=0, today=SANDBOX_TODAY) as server:
        fetched, before, table = _filled(where, server)
        planted = [key.format(t=table) for key in GOOD.values()]
        for key in planted:
            where.link(key, outside)
        pipe = _renamed(GOOD["ledger"], "pipe.parquet")
        os.mkfifo(Path(where.url, *pipe.split("/")))
        said = _everything(where, server, fetched, before)
    digest = GOOD["digests"]  # read where it should be (not found by listing): set aside, as any unreadable file
    named = [m for m in said if digest.rpartition("/")[2] in m]
    assert len(named) == 1 and "set aside" in named[0], said
    assert where.holds(digest + ".corrupt") and outside.read_bytes() == b"not the cache's"
    for key in [*planted, pipe]:
        if key != digest:
            named = [m for m in said if key in m]
            assert len(named) == 1 and "not a regular file" in named[0] and "passed over" in named[0], (key, said)
            assert where.holds(key)
    assert len(said) == len(planted) + 1, said


# -- a kept frame of many more rows than its answer's ----------------------------------------------------------

PLANTED_ROWS = 2_000_000
_MEASURE = """
import json, resource, sys, warnings
import polars as pl
import storeframes as sf
from storeframes.cache import CacheWarning
args = json.loads(sys.argv[1])
options = {"rate_limit": (600, 1.0), "progress": False, **args["options"]}
with sf.Client(None, cache_dir=args["url"], offline=True, **options) as client:
    client.metadata_frame(args["other"])  # the same work once, on another answer: imports, caches, pools
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = client.metadata_frame(args["apps"])
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({
    "grown": (after - before) * 1024,
    "same": frame.equals(pl.read_parquet(args["expected"])),
    "said": [str(w.message) for w in caught if issubclass(w.category, CacheWarning)],
}))
"""


def _plant_rows(where: Where, key: str, rows: int) -> None:
    """Write over the kept frame ``key`` a file with its columns, flattener and provenance, and ``rows`` rows
    (its own repeated), written a row group at a time: a few MB of Parquet that read to hundreds of MB."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    if where.bucket is None:
        source = Path(where.url, *key.split("/")).read_bytes()
    else:
        source = where.bucket.objects()[f"{where.bucket.prefix}/{key}"]
    kept = pq.read_table(pa.BufferReader(source))
    said = {k: v for k, v in (pq.read_metadata(pa.BufferReader(source)).metadata or {}).items() if b"ARROW" not in k}
    block = pa.concat_tables([kept] * (50_000 // kept.num_rows + 1)).slice(0, 50_000)
    block = block.replace_schema_metadata(said)  # the provenance and flattener of the file it replaces
    sink = io.BytesIO()
    with pq.ParquetWriter(sink, block.schema, compression="zstd") as writer:
        for _ in range(rows // block.num_rows):
            writer.write_table(block)
    where.plant(key, sink.getvalue())


@pytest.mark.slow
@pytest.mark.parametrize("place", ["folder", "bucket"])
@pytest.mark.processes
def test_a_kept_frame_of_two_million_rows_is_refused_before_its_rows_are_read(place, tmp_path, request):
    if place == "folder":
        where = Where(str(tmp_path / "cache"), {})
    else:
        bucket = request.getfixturevalue("s3_bucket")
        where = Where(bucket.url, {"storage_options": bucket.storage_options}, bucket)
    with SandboxServer(port=0, today=SANDBOX_TODAY) as server:
        with where.client(server) as first:
            fetched = first.metadata_frame(APPS)
            first.metadata_frame(OTHER)  # another answer, read first by the child to warm it up
    kept = Cache(where.url, **where.options)
    [entry] = [e for e in kept.entries("metadata") if len(e.cells) == len(APPS)]
    [key] = [k for k in kept.storage.list("frames/") if entry.id in k]
    _plant_rows(where, key, PLANTED_ROWS)
    expected = tmp_path / "expected.parquet"
    fetched.write_parquet(expected)
    args = {"url": where.url, "options": where.options, "apps": APPS, "other": OTHER, "expected": str(expected)}
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, json.dumps(args)],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    measured = json.loads(done.stdout)
    print(
        f"peak memory growth reading a planted {PLANTED_ROWS:,}-row kept frame ({place}): {measured['grown']:,} bytes"
    )
    assert measured["same"]  # the right rows, built again from the kept answer
    [said] = measured["said"]
    assert f"{PLANTED_ROWS:,} rows where the index recorded {fetched.height:,}" in said and "set aside" in said
    assert measured["grown"] < 150 << 20, f"{measured['grown']:,} bytes: the planted rows were read"


def test_a_compacted_frame_file_whose_row_groups_hold_other_rows_is_refused_before_they_are_read(where):
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    with SandboxServer(port=0, today=SANDBOX_TODAY) as server:
        with where.client(server) as first:
            fetched = first.metadata_frame(APPS)
            first.metadata_frame(OTHER)
    assert main(["cache", "compact", "--cache-dir", where.url]) == 0
    kept = Cache(where.url, **where.options)
    [key] = [k for k in kept.storage.list("frames/") if k.rpartition("/")[2].startswith("part-")]
    source = kept.storage.get(key)
    said = {k: v for k, v in (pq.read_metadata(pa.BufferReader(source)).metadata or {}).items() if b"ARROW" not in k}
    compacted = pq.ParquetFile(pa.BufferReader(source))
    sink = io.BytesIO()
    with pq.ParquetWriter(sink, compacted.schema_arrow.with_metadata(said), compression="zstd") as writer:
        for group in range(compacted.num_row_groups):  # each row group as listed, its rows repeated
            rows = compacted.read_row_group(group)
            many = pa.concat_tables([rows] * (100_000 // rows.num_rows + 1)).slice(0, 100_000)
            writer.write_table(many.replace_schema_metadata(said), row_group_size=many.num_rows)
    where.plant(key, sink.getvalue())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with where.client(None) as offline:
            assert offline.metadata_frame(APPS).equals(fetched)  # built again from the kept answer
    [message] = [str(w.message) for w in caught]
    assert "100,000 rows in a row group where the index recorded" in message and "set aside" in message
    assert where.holds(key + ".corrupt")
