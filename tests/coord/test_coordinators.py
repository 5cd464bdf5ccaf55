"""Which coordinator a client gets, and which leases its cache gets, by what the store declares.

A Redis URL (the ``coordinator=`` option or ``$STOREFRAMES_COORDINATOR``) gives the Redis
server's coordinator, whose leases are Redis keys; otherwise this machine's, whose leases
follow the cache's ``Capabilities.leases``: the process's own for a store nobody else
sees, lock files for a folder, objects for a bucket, and a warning that recommends a
Redis coordinator for a store that has none of its own. The old import paths of
coordination keep working.
"""

from __future__ import annotations

import os
import uuid
import warnings

import pytest

import storeframes as sf
from storeframes.cache import CacheWarning
from storeframes.cache.stores import Capabilities, MemoryStore
from storeframes.coord import ENV_COORDINATOR, Coordinator, coordinator_for
from storeframes.coord.bucket_leases import ObjectLeases
from storeframes.coord.file_leases import FileLeases
from storeframes.coord.leases import digest, machine
from storeframes.coord.redis import RedisLeases
from tests._redis import redis_url  # noqa: F401 - the fixture
from tests._s3 import s3_bucket, s3_server  # noqa: F401 - the fixtures


class SharedToy(MemoryStore):
    """A store that says everyone sees it but has no leases of its own (a bucket that refuses conditional writes)."""

    capabilities = Capabilities(shared="everyone", leases="coordinator")

    def __init__(self) -> None:
        super().__init__()
        self.name = f"toy://{uuid.uuid4().hex}"

    @property
    def location(self) -> str:
        return self.name


def _client(cache_dir, **options) -> sf.Client:
    return sf.Client(None, cache_dir=cache_dir, offline=True, progress=False, **options)


@pytest.fixture
def no_coordinator_set(monkeypatch):
    monkeypatch.delenv(ENV_COORDINATOR, raising=False)


def test_on_this_machine_the_leases_follow_what_the_store_declares(tmp_path, no_coordinator_set):
    with _client(False) as alone:
        assert alone.coordinator == Coordinator() == coordinator_for()
        assert alone.fetcher.leases().remote is None  # no cache: the threads of this client only
    with _client(tmp_path / "cache") as folder, _client(tmp_path / "cache") as again:
        leases = folder.fetcher.leases()
        assert isinstance(leases.remote, FileLeases)
        assert leases.remote.folder == tmp_path.resolve() / "cache" / "leases"
        assert again.fetcher.leases() is leases  # one table for every client of the process that uses the folder
    with _client(MemoryStore()) as memory:
        assert memory.fetcher.leases().remote is None  # nobody outside the process sees the store
    toy = SharedToy()
    with _client(toy) as shared:
        with pytest.warns(CacheWarning, match="cannot write conditionally.*give the clients a Redis coordinator"):
            leases = shared.fetcher.leases()
        assert leases.remote is None


@pytest.mark.s3
def test_a_bucket_keeps_its_leases_as_its_own_objects(s3_bucket, no_coordinator_set):  # noqa: F811
    with _client(s3_bucket.url, storage_options=s3_bucket.storage_options) as client:
        assert client.coordinator == Coordinator()
        leases = client.fetcher.leases()
        assert isinstance(leases.remote, ObjectLeases)
        assert leases.remote.store is client.cache.storage
        assert repr(leases.remote) == f"ObjectLeases('s3://{s3_bucket.name}/cache')"


@pytest.mark.redis
def test_with_a_redis_url_the_window_and_the_leases_are_the_servers(redis_url, tmp_path, monkeypatch):  # noqa: F811
    url = redis_url.replace("redis://", "redis://:hunter2@")
    with _client(tmp_path / "cache", coordinator=url) as folder:
        assert folder.coordinator == Coordinator(url) and folder.coordinator.url == url
        assert folder.limiter.where == url.replace("hunter2", "***")
        leases = folder.fetcher.leases()
        assert isinstance(leases.remote, RedisLeases)
        space = f"folder:{machine()}:{os.path.realpath(tmp_path / 'cache')}"  # as every version names it
        assert leases.remote._prefix == f"storeframes:lease:{digest(space)}:"
    toy = SharedToy()
    with _client(toy, coordinator=url) as shared, warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)  # a Redis coordinator is what the warning recommends
        leases = shared.fetcher.leases()
        assert isinstance(leases.remote, RedisLeases)
        assert leases.remote._prefix == f"storeframes:lease:{digest(f'store:{toy.location}')}:"
    with _client(MemoryStore(), coordinator=url) as memory:
        assert memory.fetcher.leases().remote is None  # nobody outside the process sees the store, Redis or not
    monkeypatch.setenv(ENV_COORDINATOR, redis_url)
    with _client(tmp_path / "other") as from_env:
        assert from_env.coordinator.url == redis_url
        assert isinstance(from_env.fetcher.leases().remote, RedisLeases)
    with _client(tmp_path / "other", coordinator="machine") as chosen:
        assert chosen.coordinator == Coordinator()  # an explicit choice wins over the environment
        with pytest.raises(sf.CoordinationMismatchError):  # but that folder's team coordinates through Redis
            chosen.fetcher.leases()
    with _client(tmp_path / "own", coordinator="machine") as chosen:
        assert isinstance(chosen.fetcher.leases().remote, FileLeases)
