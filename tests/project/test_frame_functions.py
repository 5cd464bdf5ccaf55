"""Every frame function is a function of the package, listed in ``sf.__all__`` and in the README's reference."""

from __future__ import annotations

import inspect
import re

import storeframes as sf
from storeframes.frames import FrameFunctions
from tests.conftest import ROOT


def _frame_functions() -> list[str]:
    """The frame functions as declared in ``storeframes/frames/``: the public methods that return a frame."""
    return sorted(
        name
        for name, method in inspect.getmembers(FrameFunctions, inspect.isfunction)
        if not name.startswith("_")
        and method.__module__.startswith("storeframes.frames.")
        and method.__annotations__.get("return") == "pl.DataFrame"
    )


def _reference() -> str:
    """The guide's reference of the frame functions: the page "Tidy frames" (docs/guides/tidy-frames.md)."""
    return (ROOT / "docs" / "guides" / "tidy-frames.md").read_text(encoding="utf-8")


def _missing(names: list[str], exported: list[str], reference: str) -> list[str]:
    said = []
    for name in names:
        if name not in exported:
            said.append(f"{name} is not in storeframes.__all__ (add the package function in defaults.py)")
        if not re.search(rf"^\| `{name}` \||\bsf\.{name}\(", reference, re.MULTILINE):
            said.append(f"{name} is not in the table of frame functions of docs/guides/tidy-frames.md")
    return said


def test_the_frame_functions_are_found_where_they_are_declared():
    names = _frame_functions()
    assert {"metadata_frame", "search_history_frame", "changes_frame", "find_apps"} <= set(names)
    assert "today" not in names and len(names) >= 16


def test_every_frame_function_is_a_package_function_in_all_and_in_the_readme_reference():
    assert _missing(_frame_functions(), list(sf.__all__), _reference()) == []
    for name in _frame_functions():  # the package's twin of the client's method: its signature, its text
        function, method = getattr(sf, name), getattr(FrameFunctions, name)
        assert function.__module__ == "storeframes" and function.__doc__ == method.__doc__
        assert list(inspect.signature(function).parameters) == list(inspect.signature(method).parameters)[1:]


def test_every_package_function_named_as_a_frame_function_is_one():
    assert [n for n in sf.__all__ if n.endswith("_frame") and n not in _frame_functions()] == []


def test_the_check_names_a_function_left_out_of_all_or_of_the_reference():
    said = _missing(["metadata_frame", "new_frame"], ["metadata_frame"], "| `metadata_frame` | app |\n")
    assert said == [
        "new_frame is not in storeframes.__all__ (add the package function in defaults.py)",
        "new_frame is not in the table of frame functions of docs/guides/tidy-frames.md",
    ]
