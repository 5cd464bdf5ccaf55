"""The security section of docs/explanation/guarantees.md names, for each promise, a test that holds it, and that test exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEADING = "## Security: what is never shown, what is refused, what is bounded"


def _section() -> str:
    text = (ROOT / "docs" / "explanation" / "guarantees.md").read_text(encoding="utf-8")
    start = text.index(HEADING)
    end = text.find("\n## ", start + len(HEADING))
    return text[start : end if end != -1 else len(text)]


def _tests_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}


def test_every_promise_names_a_test_that_exists():
    rows = [line for line in _section().splitlines() if line.startswith("| ") and not line.startswith("| promise")]
    promises = [row for row in rows if not set(row) <= set("|- ")]
    assert len(promises) >= 25, "the security section lists each promise in its table"
    missing = []
    for row in promises:
        named = re.findall(r"`(tests/[\w/]+\.py)::(test_\w+)`", row)
        assert named, f"a promise without the test that holds it: {row}"
        for file, name in named:
            path = ROOT / file
            if not path.is_file() or name not in _tests_of(path):
                missing.append(f"{file}::{name}")
    assert missing == [], f"tests named by the security section that do not exist: {missing}"
