"""The read side of the cache is one wing, storeframes/kept/: scan, snapshots, observed changes, the kept ranks
and changes alerts and the assistant judge by; lake/, track/ and agent/ use it, it uses none of them, and what
its modules share they share under public names."""

from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path

import storeframes as sf

PACKAGE = Path(sf.__file__).parent
KEPT = PACKAGE / "kept"


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _from_imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module imported from, names) of each ``from ... import`` of ``path``, relative ones made absolute."""
    name = _module(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            source = (f"{base}.{node.module}" if node.module else base) if node.level else node.module or ""
            found.append((source, [alias.name for alias in node.names]))
    return found


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
        for source, _ in _from_imports(path)
        if source.split(".")[:2] in (["storeframes", w] for w in ("track", "lake", "agent", "cli"))
    ]
    assert upward == []


def test_lake_track_and_agent_read_the_cache_through_the_kept_wing_and_its_public_names():
    readers = [p for wing in ("lake", "track", "agent", "kept") for p in sorted((PACKAGE / wing).rglob("*.py"))]
    assert readers
    crossing = []
    for path in readers:
        here = _module(path)
        for source, names in _from_imports(path):
            if source == here or not source.startswith("storeframes."):
                continue
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            if private:
                crossing.append(f"{here} takes {private} from {source}")
            if here.startswith("storeframes.agent") and source == "storeframes.track.judge":
                crossing.append(f"{here} reads kept data through the tracker's judging ({names})")
    assert crossing == []


def test_the_alert_judging_is_written_without_formatter_exemptions():
    judge = importlib.util.find_spec("storeframes.track.judge")
    assert judge is not None and judge.origin is not None
    skipped = [n for n, line in enumerate(Path(judge.origin).read_text().splitlines(), 1) if "fmt: skip" in line]
    assert skipped == []


def test_the_wing_gives_its_functions_from_its_own_modules():
    kept = importlib.import_module("storeframes.kept")
    functions = [getattr(kept, name) for name in kept.__all__ if callable(getattr(kept, name))]
    assert {f.__name__ for f in functions} >= {"scan", "snapshots", "observed_changes", "kept_ranks", "kept_changes"}
    assert [f.__module__ for f in functions if not f.__module__.startswith("storeframes.kept.")] == []
