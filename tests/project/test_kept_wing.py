"""The read side of the cache is one wing, storeframes/kept/: scan, snapshots, observed changes, the kept ranks
and changes alerts and the assistant judge by; lake/, track/ and agent/ use it, it uses none of them, and what
its modules share they share under public names."""

from __future__ import annotations

import importlib

import storeframes as sf

from .test_structure import PACKAGE, _module, from_imports

KEPT = PACKAGE / "kept"


def test_the_read_side_lives_in_the_kept_wing_and_keeps_its_public_names():
    gone = [m for m in ("datasets", "snapshots", "observed") if (PACKAGE / f"{m}.py").exists()]
    assert gone == [], f"read-side modules still at the top level: {gone}"
    from storeframes.kept import kept_changes, kept_ranks

    for function in (sf.scan, sf.compact, sf.snapshots, sf.observed_changes, kept_ranks, kept_changes):
        assert function.__module__.startswith("storeframes.kept."), function.__module__
    assert {"scan", "compact", "snapshots", "observed_changes"} <= set(sf.__all__)


def test_nothing_in_the_kept_wing_reaches_the_wings_that_use_it():
    assert KEPT.is_dir()
    upward = [
        f"{_module(path)} imports {source}"
        for path in sorted(KEPT.rglob("*.py"))
        for source, _ in from_imports(path)
        if source.split(".")[:2] in (["storeframes", w] for w in ("track", "lake", "agent", "cli"))
    ]
    assert upward == []


def test_lake_track_and_agent_read_the_cache_through_the_kept_wing_and_its_public_names():
    readers = [p for wing in ("lake", "track", "agent", "kept") for p in sorted((PACKAGE / wing).rglob("*.py"))]
    assert readers
    crossing = []
    for path in readers:
        here = _module(path)
        for source, names in from_imports(path):
            if source == here or not source.startswith("storeframes."):
                continue
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            if private:
                crossing.append(f"{here} takes {private} from {source}")
            if here.startswith("storeframes.agent") and source == "storeframes.track.judge":
                crossing.append(f"{here} reads kept data through the tracker's judging ({names})")
    assert crossing == []


def test_the_wing_gives_its_functions_from_its_own_modules():
    kept = importlib.import_module("storeframes.kept")
    functions = [getattr(kept, name) for name in kept.__all__ if callable(getattr(kept, name))]
    assert {f.__name__ for f in functions} >= {"scan", "snapshots", "observed_changes", "kept_ranks", "kept_changes"}
    assert [f.__module__ for f in functions if not f.__module__.startswith("storeframes.kept.")] == []
