"""A team's bucket holding objects the cache did not write, under keys obstore cannot name (an empty,
``.`` or ``..`` part): they are passed over and reported, and nothing else of the bucket is lost."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import storeframes as sf
from storeframes.cache import CacheWarning
from storeframes.cli import main
from storeframes.sandbox import SandboxServer, World
from tests.conftest import SANDBOX_TODAY, loopback_client, sandbox_clock

pytest.importorskip("obstore")
from storeframes.cache.stores.bucket import ObjectStore

pytestmark = pytest.mark.s3

WORLD = World(0)
APPS = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US][:3]
ODD = [
    "index/endpoint=metadata/../planted.parquet",
    "index/endpoint=metadata//planted.parquet",
    "answers/endpoint=metadata/./planted.json.zst",
    "ledger//planted.parquet",
    "frames/table=metadata/../planted.parquet",
]


def _client(server: SandboxServer | None, bucket: Any) -> sf.Client:
    options: dict[str, Any] = {"rate_limit": (600, 1.0), "progress": False, "clock": sandbox_clock}
    options["storage_options"] = bucket.storage_options
    if server is None:
        return sf.Client(None, cache_dir=bucket.url, offline=True, **options)
    return loopback_client(server.base_url, bucket.url, **options)


def _plant(bucket: Any, keys: list[str]) -> None:
    for key in keys:
        bucket.client.put_object(Bucket=bucket.name, Key=f"{bucket.prefix}/{key}", Body=b"not the cache's")


def test_objects_with_odd_keys_in_a_bucket_are_passed_over_and_nothing_is_paid_again(s3_bucket, monkeypatch, capsys):
    with SandboxServer(port=0, today=SANDBOX_TODAY) as server:
        with _client(server, s3_bucket) as first:
            fetched = first.metadata_frame(APPS)
            paid = len(server.service.arrivals)
        _plant(s3_bucket, ODD)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with _client(server, s3_bucket) as colleague:  # another member with the token: pays nothing
                assert colleague.metadata_frame(APPS).equals(fetched)
                assert len(server.service.arrivals) == paid and colleague.spent == 0
            with _client(None, s3_bucket) as offline:
                assert offline.metadata_frame(APPS).equals(fetched)
            scanned = sf.scan("metadata", cache_dir=s3_bucket.url, storage_options=s3_bucket.storage_options).collect()
            assert scanned.sort("app_id").equals(fetched.sort("app_id"))
            kept = sf.Cache(s3_bucket.url, storage_options=s3_bucket.storage_options)
            assert kept.ledger.read()["cost"].sum() == first.spent > 0
    said = [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]
    assert len(said) == len(caught) == len(ODD), said  # each named once in this process, not at every read
    for key in ODD:
        [named] = [m for m in said if repr(key) in m]
        assert "did not write" in named and "passed over" in named
    for name, value in s3_bucket.env.items():
        monkeypatch.setenv(name, value)
    capsys.readouterr()
    assert main(["cache", "info", "--cache-dir", s3_bucket.url]) == 0
    out, err = capsys.readouterr()
    assert "cached answers: 1" in out and "planted" not in err  # reported in this process already
    assert main(["cache", "compact", "--cache-dir", s3_bucket.url]) == 0
    assert all(f"{s3_bucket.prefix}/{key}" in s3_bucket.objects() for key in ODD)  # not the cache's: left alone
    with _client(None, s3_bucket) as offline:
        assert offline.metadata_frame(APPS).equals(fetched)
    _plant(s3_bucket, ["./planted"])  # beside the cache's folders: the whole bucket cannot be listed past it
    capsys.readouterr()
    assert main(["cache", "info", "--cache-dir", s3_bucket.url]) == 1
    assert "cannot list past the object" in capsys.readouterr().err


def test_a_bucket_lists_every_key_past_odd_ones_beyond_a_page(s3_bucket):
    store = ObjectStore(s3_bucket.url, storage_options=s3_bucket.storage_options)
    good = ["answers/a.json", "index/a.parquet", "index/endpoint=x/b.parquet", "y/z/c"]
    good += [f"m/{i:04d}.parquet" for i in range(1500)]  # more than one page of a listing
    for key in good:
        store.put(key, b"1")
    odd = ["index/endpoint=x/../d", "index/endpoint=x//e", "m/0700/../f", "y/z/./g", "answers/\x01h"]
    _plant(s3_bucket, odd)
    for prefix in ("", "index/", "index/endpoint=x/", "m/", "y/"):
        assert store.list(prefix) == sorted(k for k in good if k.startswith(prefix)), prefix
    assert store.odd_keys() == sorted(odd)
    assert store.usage() == (len(good), 0)


def test_a_bucket_that_cannot_be_listed_past_an_odd_key_says_so_rather_than_listing_less(s3_bucket):
    store = ObjectStore(s3_bucket.url, storage_options=s3_bucket.storage_options)
    for key in ["index/a.parquet", "index/endpoint=x/b", *(f"m/{i:04d}" for i in range(20))]:
        store.put(key, b"1")
    _plant(s3_bucket, ["./top", "m/0010/../deep", "index/x\x01y/z", "index/endpoint=x/../w"])  # in a folder and below
    assert store.list("m/") == [f"m/{i:04d}" for i in range(20)]
    with pytest.raises(OSError, match=r"cannot list past the object 'index/endpoint=x/\.\./w'"):
        store.list("")
    with pytest.raises(OSError, match=r"cannot list past the object 'index/endpoint=x/\.\./w'"):
        store.list("index/")
