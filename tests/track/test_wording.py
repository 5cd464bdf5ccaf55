"""A listing change in the words an alert says: a description's diff, sizes in MB, every value cut."""

from __future__ import annotations

from datetime import date

from storeframes.sandbox import World
from storeframes.track.wording import DIFF_CHARS, change_words, describe_diff, megabytes, shown_values

WORLD = World(0)


def _description_change(device: str, country: str = "us") -> dict:
    """A description change the sandbox's change history lists, on ``device`` (android: HTML)."""
    for app in WORLD.app_ids("android" if device == "android" else "ios")[:200]:
        for change in WORLD.changes(
            app, device=device, country=country, language="en", start=date(2026, 9, 1), end=date(2026, 11, 20)
        ):
            if change["target"] == "long_description":
                return change
    raise AssertionError("no description change")


def test_the_sandbox_description_change_is_said_as_the_feature_that_moved():
    change = _description_change("iphone")
    first = change["old_value"].split("KEY FEATURES\n• ")[1].split("\n")[0]
    assert describe_diff(change["old_value"], change["new_value"]) == f"moved '{first}'"


def test_an_android_html_description_is_read_as_its_text():
    change = _description_change("android")
    said = describe_diff(change["old_value"], change["new_value"])
    assert said.startswith("moved '") and "<" not in said and "&amp;" not in said, said


def test_added_and_removed_lines_are_quoted_cut_and_counted():
    old = "Edit photos fast.\n• Filters\n• Collages"
    new = "Edit photos and videos fast.\n• Filters\n• Collages\n• Stickers\n• Frames\n• Text\n• " + "Long " * 40
    said = describe_diff(old, new)
    assert said.startswith("added 'Edit photos and videos fast.', 'Stickers', 'Frames' and 2 more; ")
    assert said.endswith("removed 'Edit photos fast.'")
    assert describe_diff("Edit photos.\n\n• Filters", "Edit  photos.\n• Filters") == "only its spacing or markup"
    long = [f"Sentence number {n} " + "x" * 90 + "." for n in range(9)]
    many = describe_diff("\n".join(long[:4]), "\n".join(long[4:]))
    assert len(many) == DIFF_CHARS and many.endswith("…") and many.startswith("added 'Sentence number 4 xx")
    assert many.count("…") >= 2  # each quoted line is cut too


def test_a_size_is_in_mb_in_before_after_and_words():
    change = {
        "app_id": "42",
        "target": "size",
        "old_value": "98000000",
        "new_value": "105234944",
        "old_size": 98_000_000,
        "new_size": 105_234_944,
        "date": date(2026, 11, 2),
        "since": date(2026, 11, 1),
    }
    assert shown_values(change) == ("98.0 MB", "105.2 MB")
    assert change_words(change, "snapshot", "us, iphone") == (
        "42 changed its size: 98.0 MB -> 105.2 MB (us, iphone; seen in the snapshot of 2026-11-02, against 2026-11-01)"
    )
    assert megabytes(None) is None and megabytes(1_500_000) == "1.5 MB"
    other = {"app_id": "42", "target": "title", "old_value": "Snap", "new_value": "Snap Pro"}
    assert shown_values(other) == ("Snap", "Snap Pro")
