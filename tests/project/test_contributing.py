"""CONTRIBUTING.md held to the tree: every path it names exists, every test marker is described in it and left
out of the default tier, and every folder of tests is named."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import pytest

import storeframes

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_HOME = Path(storeframes.__file__).resolve().parent.parent  # the source tree, or site-packages for a wheel
GUIDE = (ROOT / "CONTRIBUTING.md").read_text()
PYTEST = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]


def _named_paths(text: str) -> set[str]:
    """The paths a text names in backticks: a word holding a slash, or a file with a known suffix."""
    words = re.findall(r"`([^`\s]+)`", text)
    return {w for w in words if "/" in w or re.search(r"\.(py|md|toml|ipynb)$", w)}


def _exists(path: str) -> bool:
    home = PACKAGE_HOME if path.startswith("storeframes/") else ROOT
    return any(home.glob(path)) if "*" in path else (home / path).exists()


def test_every_path_contributing_names_exists():
    missing = sorted(p for p in _named_paths(GUIDE) if not _exists(p))
    assert missing == [], f"CONTRIBUTING.md names paths that do not exist: {missing}"


def test_the_path_check_finds_a_path_that_is_not_there():
    assert not _exists("storeframes/no_such_wing/") and _exists("storeframes/cache/")
    assert _named_paths('see `tests/nowhere/` and `README.md`, run `pytest -m ""`') == {"tests/nowhere/", "README.md"}


def _markers() -> list[str]:
    return [line.split(":")[0] for line in PYTEST["markers"]]


def test_every_marker_is_described_in_contributing():
    rows = set(re.findall(r"^\| `(\w+)` \|", GUIDE, flags=re.M))
    assert set(_markers()) == rows


def test_every_marker_but_live_is_left_out_of_the_default_tier():
    words = shlex.split(PYTEST["addopts"])
    expression = words[words.index("-m") + 1]
    left_out = set(re.findall(r"not (\w+)", expression))
    assert left_out == set(_markers()) - {"live"}  # live tests skip themselves without a token


def test_every_folder_of_tests_is_named():
    folders = {
        f"{path.parent.relative_to(ROOT).as_posix()}/"
        for path in (ROOT / "tests").rglob("test_*.py")
        if "benchmarks" not in path.parts
    }
    assert folders - _named_paths(GUIDE) == set()


def test_a_test_asking_for_a_server_without_its_marker_is_refused_at_collection(pytester):
    pytester.makeconftest(
        """
        import pytest
        from tests.conftest import unmarked

        @pytest.fixture
        def s3_bucket():
            return "a bucket"

        def pytest_collection_modifyitems(config, items):
            wrong = unmarked(items)
            if wrong:
                raise pytest.UsageError("\\n".join(wrong))
        """
    )
    pytester.makeini("[pytest]\nmarkers =\n    s3: moto's S3\n")
    pytester.makepyfile(
        test_bucket="""
        import pytest

        def test_forgot(s3_bucket):
            assert s3_bucket

        @pytest.mark.s3
        def test_said(s3_bucket):
            assert s3_bucket
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*test_bucket.py::test_forgot asks for s3_bucket but is not marked s3*"])
    assert "test_said" not in result.stderr.str()
