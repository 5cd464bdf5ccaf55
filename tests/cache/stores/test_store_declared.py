"""What a store declares it can do, and the registry that opens a cache's address: run over every backend.

A new backend is one module and one ``register`` line: tests/_toy_store.py is such a
module, and the tests below register it as ``toy://`` and use it as a client would.
"""

from __future__ import annotations

import io
import threading
from pathlib import Path

import pytest

import storeframes as sf
from storeframes.cache import Cache, open_cache
from storeframes.cache.stores import (
    Capabilities,
    LocalStore,
    MemoryStore,
    StoreBase,
    Usage,
    register,
    registered,
    store_for,
)
from storeframes.errors import ConfigurationError
from storeframes.sandbox import World
from storeframes.sandbox import client as sandbox_client
from tests._toy_store import ToyStore

WORLD = World()
APP = next(a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US)


@pytest.fixture
def toy_scheme():
    """``toy://`` registered as a user would: one line."""
    register("toy", ToyStore)
    yield "toy"
    from storeframes.cache.stores import _REGISTRY

    _REGISTRY.pop("toy", None)


@pytest.fixture(params=["local", "memory", "s3", "toy"])
def store(request, tmp_path, toy_scheme) -> StoreBase:
    if request.param == "local":
        return store_for(tmp_path / "cache")
    if request.param == "memory":
        return MemoryStore()
    if request.param == "toy":
        return store_for(f"toy://{tmp_path.name}")
    bucket = request.getfixturevalue("s3_bucket")
    return store_for(bucket.url, storage_options=bucket.storage_options)


@pytest.mark.s3
def test_every_store_declares_what_it_can_do(store):
    declared = store.capabilities
    assert isinstance(declared, Capabilities)
    assert declared.shared in ("process", "machine", "everyone")
    assert declared.leases in ("process", "files", "objects", "coordinator")
    assert (declared.local_root is not None) == isinstance(store, LocalStore)
    if declared.leases == "files":
        assert declared.local_root is not None
    if declared.leases == "objects":
        assert declared.conditional_writes
    assert isinstance(store.location, str) and store.location


@pytest.mark.s3
def test_open_reads_the_value_and_seeks_in_it(store):
    store.put("frames/table=t/a.parquet", b"0123456789")
    with store.open("frames/table=t/a.parquet") as handle:
        assert handle.seekable()
        handle.seek(4)
        assert handle.read(3) == b"456"
        handle.seek(-2, io.SEEK_END)
        assert handle.read() == b"89"
    with pytest.raises(FileNotFoundError):
        store.open("frames/table=t/missing.parquet")


@pytest.mark.s3
def test_a_store_that_writes_conditionally_lets_exactly_one_of_many_writers_win(store):
    if not store.capabilities.conditional_writes or store.capabilities.leases == "files":
        with pytest.raises(OSError, match="does not write conditionally"):
            store.create("leases/x", b"a")
        return
    wins: list[object] = []
    barrier = threading.Barrier(8)

    def take(i: int) -> None:
        barrier.wait()
        wins.append(store.create("leases/x", f"{i}".encode()))

    threads = [threading.Thread(target=take, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    versions = [w for w in wins if w is not None]
    assert len(versions) == 1 and len(wins) == 8
    seen = store.head("leases/x")
    assert seen is not None and seen.size == 1
    renewed = store.replace("leases/x", b"renewed", seen)
    assert renewed is not None and store.get("leases/x") == b"renewed"
    assert store.replace("leases/x", b"late", seen) is None  # the version it expected is gone
    assert store.get("leases/x") == b"renewed"
    assert store.head("leases/missing") is None


@pytest.mark.s3
def test_a_folder_a_bucket_address_and_a_store_open_as_their_stores(tmp_path, s3_bucket):
    assert isinstance(store_for(tmp_path), LocalStore)
    assert store_for(f"file://{tmp_path}").capabilities.local_root == tmp_path
    memory = MemoryStore()
    assert store_for(memory) is memory
    bucket = store_for(s3_bucket.url, storage_options=s3_bucket.storage_options)
    assert bucket.location == s3_bucket.url and bucket.capabilities.ranged_reads
    assert {"s3", "s3a", "gs", "az", "file"} <= set(registered())


def test_an_unknown_scheme_says_which_are_known_before_anything_is_made():
    with pytest.raises(ValueError, match=r"unknown scheme 'ftp'; a folder path, or one of .*s3") as caught:
        store_for("ftp://user:secret@host/cache")
    assert "secret" not in str(caught.value)
    with pytest.raises(ConfigurationError, match="cache_dir 'ftp://host/cache'"):
        open_cache("ftp://host/cache")


def test_a_backend_whose_package_is_missing_names_the_extra_to_install():
    register("toymissing", "tests._toy_missing:Store", extra="toy")
    try:
        with pytest.raises(
            ImportError,
            match=r'needs storeframes_toy_backend_not_installed: pip install "\.\[toy\]" from a checkout of storeframes',
        ):
            store_for("toymissing://bucket/cache")
    finally:
        from storeframes.cache.stores import _REGISTRY

        _REGISTRY.pop("toymissing", None)


def test_open_cache_takes_a_store_and_refuses_what_is_no_cache_place(tmp_path):
    memory = MemoryStore()
    cache = open_cache(memory)
    assert isinstance(cache, Cache) and cache.storage is memory and cache.location == "memory"
    assert open_cache(False) is None
    assert open_cache(cache) is cache
    with pytest.raises(ConfigurationError, match=r"a folder path, a bucket address .* a Store, a Cache or False"):
        open_cache(42)
    with pytest.raises(ConfigurationError, match="storage_options= goes with a bucket address"):
        open_cache(tmp_path, {"region": "x"})


class _EarlierStore:
    """A store written against the operations alone (an earlier version's Store), declaring nothing."""

    def __init__(self) -> None:
        self.inner = MemoryStore()

    def put(self, key, data):
        self.inner.put(key, data)

    def put_if_absent(self, key, data):
        return self.inner.put_if_absent(key, data)

    def get(self, key):
        return self.inner.get(key)

    def list(self, prefix=""):
        return self.inner.list(prefix)

    def delete(self, key):
        self.inner.delete(key)

    def mtime(self, key):
        return self.inner.mtime(key)

    def set_aside(self, key):
        return self.inner.set_aside(key)

    def sweep(self, older_than_seconds, *, prefix="", set_aside_older_than_seconds=None):
        return self.inner.sweep(older_than_seconds, prefix=prefix)

    def usage(self, prefix=""):
        return self.inner.usage(prefix)


def test_a_store_of_an_earlier_version_is_taken_with_nothing_special_declared():
    earlier = _EarlierStore()
    adopted = store_for(earlier)
    assert adopted.capabilities == Capabilities()
    adopted.put("index/endpoint=metadata/a.parquet", b"abc")
    assert earlier.get("index/endpoint=metadata/a.parquet") == b"abc"
    with adopted.open("index/endpoint=metadata/a.parquet") as handle:
        assert handle.read() == b"abc"
    assert adopted.usage() == Usage(3, 0)
    assert repr(adopted) == repr(earlier)


def test_a_client_caches_in_a_new_backend_and_serves_its_answers_offline(toy_scheme, tmp_path):
    """The toy backend behind a frame call: paid once, then served from it by a second client, offline."""
    address = f"toy://{tmp_path.name}/team"
    with sandbox_client(cache_dir=address, progress=False) as client:
        first = client.metadata_frame([APP], country="us")
        paid = client.spent
    assert paid > 0 and first.height == 1
    assert any(k.startswith("answers/endpoint=metadata/") for k in ToyStore(address).list("answers/"))
    with sandbox_client(cache_dir=address, offline=True, progress=False) as again:
        second = again.metadata_frame([APP], country="us")
        assert again.spent == 0 and again.requests_sent == 0
    assert second.equals(first)
    assert sf.Cache(address).location == address


def test_a_cache_over_a_store_reads_its_folder_in_place_only_where_it_declares_one(tmp_path):
    assert Cache(tmp_path).path == tmp_path
    assert Cache(MemoryStore()).path is None
    assert Cache(Path(tmp_path)).storage.capabilities.leases == "files"
