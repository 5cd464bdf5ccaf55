"""The cache's parts are namespaces: `Cache` stays small, and each kept table is one attribute of it."""

from __future__ import annotations

import ast
from pathlib import Path

import storeframes
from storeframes import Cache, MemoryStore

CORE = Path(storeframes.__file__).parent / "cache" / "_core.py"
MOST_CACHE_METHODS = 24
"""The methods `Cache` may define (properties and their setters counted): what serves the engine's index,
the answers and the upkeep of the whole cache. A kept table is a part, not a method."""
PARTS = ("frames", "ledger", "runs", "events", "digests")


def _methods(source: str, name: str) -> list[str]:
    tree = ast.parse(source)
    found = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)
    return [n.name for n in found.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


def test_the_cache_keeps_to_a_few_methods_a_new_table_is_a_part():
    methods = _methods(CORE.read_text(encoding="utf-8"), "Cache")
    assert len(methods) <= MOST_CACHE_METHODS, (
        f"storeframes/cache/_core.py: Cache defines {len(methods)} methods, at most {MOST_CACHE_METHODS} are "
        "allowed: add a part, not a method (a part module in cache/ given the shared Files and the index, "
        "exposed as one attribute of Cache, as cache.ledger and cache.runs are)"
    )


def test_the_method_count_names_the_class_it_counts():
    source = (
        "class Cache:\n"
        + "".join(f"    def m{i}(self): ...\n" for i in range(30))
        + "class Other:\n    def x(self): ...\n"
    )
    assert len(_methods(source, "Cache")) == 30 and _methods(source, "Other") == ["x"]


def test_each_kept_table_is_a_part_whose_methods_are_its_own():
    cache = Cache(MemoryStore())
    for name in PARTS:
        part = getattr(cache, name)
        assert type(part).__module__.startswith("storeframes.cache."), name
        assert part is getattr(cache, name)  # one part, not one made per look
    forwarded = ("write_ledger", "read_ledger", "remove_ledger", "write_run", "read_runs", "running_runs", "read_run")
    forwarded += ("write_events", "read_events", "address_key", "write_digest", "read_digest", "digest_days")
    forwarded += ("read_frame", "read_frames", "frame_files", "write_frame", "flush")
    assert [name for name in forwarded if hasattr(cache, name)] == []
