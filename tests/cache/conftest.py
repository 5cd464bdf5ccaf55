"""Fixtures of the cache's unit tests: a fresh MemoryStore and a cache over it, per test."""

from __future__ import annotations

import pytest

from storeframes.cache import Cache
from storeframes.cache.stores import MemoryStore


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore()


@pytest.fixture
def cache(store: MemoryStore) -> Cache:
    return Cache(store)
