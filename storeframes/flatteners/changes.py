"""Flatteners of the change history (``result.<app_id>.changes``): pure functions, no I/O.

A change record's ``old_value`` and ``new_value`` take the shape of its ``target``: text
(version, long_description), an integer (size), an object (icon, privacy_info) or an array
of objects (screenshots). :func:`batch_changes` gives one row per record with both values
as text, plus typed columns where the target allows (sizes, icon URLs); the other tables
unfold the nested values: :func:`batch_privacy_changes` one row per section and data type,
:func:`batch_screenshot_changes` one row per screenshot on each side, and
:func:`batch_version_changes` one row per new version with its release notes.

The service does not list every target: the metadata's text fields (``title``,
``subtitle``, ``short_description``) are known too, their values text. A target
storeframes does not know is kept in the changes table, its values as text or compact
JSON, and named in an :class:`~storeframes.UnknownFieldWarning` (one per walk, as
often as the warning filters let it be shown). A value whose shape does not fit a known target
raises :class:`~storeframes.ResponseShapeError` naming its path.

>>> result = {"1": {"changes": [{"target": "size", "old_value": 10, "new_value": 12,
...                              "version": "No related version", "is_ab_test": False, "date": "2026-01-05"}]}}
>>> flatten_changes(result).select("target", "version", "old_value", "new_size").row(0)
('size', None, '10', 12)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import polars as pl

from ..schemas import CHANGES, PRIVACY_CHANGES, SCREENSHOT_CHANGES, VERSION_CHANGES, TableSchema
from ._columns import (
    KEY_COLUMNS,
    NO_KEYS,
    Answers,
    Flat,
    Keys,
    Walk,
    build,
    ident,
    note_unknown,
    obj,
    seq,
    shape_error,
)

__all__ = [
    "PRIVACY_SECTIONS",
    "TARGETS",
    "TEXT_TARGETS",
    "batch_changes",
    "batch_privacy_changes",
    "batch_screenshot_changes",
    "batch_version_changes",
    "flatten_changes",
    "flatten_privacy_changes",
    "flatten_screenshot_changes",
    "flatten_version_changes",
    "value_text",
]

_EP = "changes"

TARGETS = ("version", "size", "icon", "screenshots", "privacy_info", "long_description")
"""The change targets the service documents."""
TEXT_TARGETS = ("title", "subtitle", "short_description")
"""Text fields of the metadata a change may also name (the sandbox sends them): known, their values text."""
PRIVACY_SECTIONS = ("DATA_LINKED_TO_YOU", "DATA_NOT_LINKED_TO_YOU", "DATA_USED_TO_TRACK_YOU")
"""The sections of a privacy_info value, in the order the frames list them."""

_RECORD_FIELDS = frozenset(
    {"target", "old_value", "new_value", "old_release_notes", "new_release_notes", "version", "is_ab_test", "date"}
)
_ICON_FIELDS = frozenset({"id", "url"})
_SHOT_FIELDS = frozenset({"id", "filename", "path_component", "url"})
_NO_VERSION = frozenset({"", "no related version"})
_RECORD_SOURCES = {"version_raw": "version", "old_size": "old_value", "new_size": "new_value"}

Shot = tuple[str | None, str | None, str | None, str | None]
"""A screenshot of a change value: id, url, path_component, filename."""

_ENCODE = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def value_text(value: Any) -> str | None:
    """A change value as text: text as it is, integers as digits, objects and arrays as compact JSON.

    >>> value_text({"id": "a1", "url": "https://x.example/i.png"}), value_text(1024), value_text("2.0")
    ('{"id":"a1","url":"https://x.example/i.png"}', '1024', '2.0')
    """
    if value is None or type(value) is str:
        return value
    if type(value) is int:
        return str(value)
    return _ENCODE(value)


def related_version(raw: str | None) -> str | None:
    """The version tied to a change: null for the empty string and the "no related version" text."""
    if raw is None or raw.strip().lower() in _NO_VERSION:
        return None
    return raw


def _plain_shots(value: Any) -> bool:
    """Whether a screenshots value is null or a list of objects of known fields holding text (checked fast)."""
    if value is None:
        return True
    if type(value) is not list:
        return False
    for item in value:
        if type(item) is not dict or not item.keys() <= _SHOT_FIELDS:
            return False
        for field in item.values():
            if type(field) is not str and field is not None:
                return False
    return True


def _plain_privacy(value: Any) -> bool:
    """Whether a privacy_info value is null or the documented sections holding lists of text (checked fast)."""
    if value is None:
        return True
    if type(value) is not dict:
        return False
    for section, types in value.items():
        if section not in PRIVACY_SECTIONS or type(types) is not list:
            return False
        for name in types:
            if type(name) is not str:
                return False
    return True


def _at(app_id: str, i: int) -> str:
    """The path of a change record."""
    return f"result.{app_id}.changes[{i}]"


class _History:
    """The change records of several answers, in order, with the checks of each target's values.

    ``records(rows)`` yields ``(app_id, i, record)`` (the record's path is ``_at(app_id, i)``);
    ``rows`` is the caller's list with one item per row, so ``walk.counts`` ends with each
    answer's rows. Names nobody knows are gathered, and named in one warning per place by
    :meth:`warn`. The checks take the record's path and the member, and join them only to
    name a value of the wrong shape.
    """

    def __init__(self, answers: Answers):
        self.walk = Walk(answers, _EP)
        self.unknown: dict[str, set[str]] = {}
        self.kept: dict[str, set[str]] = {}
        self.checks: dict[str, Callable[[Any, str, str], Any]] = {
            "version": self.text,
            "long_description": self.text,
            **dict.fromkeys(TEXT_TARGETS, self.text),
            "size": self.size,
            "icon": self.icon,
            "screenshots": self.shots,
            "privacy_info": self.privacy,
        }

    def records(self, rows: list[Any]) -> Iterator[tuple[str, int, dict[str, Any]]]:
        for app_id, resource in self.walk.apps(rows):
            if not resource.keys() <= {"changes"}:
                self.unknown.setdefault("result.<app_id>", set()).update(resource.keys() - {"changes"})
            for i, record in enumerate(seq(resource.get("changes"), f"result.{app_id}.changes", _EP)):
                if type(record) is not dict:
                    raise shape_error("a change record (an object)", record, _at(app_id, i), _EP)
                if not record.keys() <= _RECORD_FIELDS:
                    self.unknown.setdefault("result.<app_id>.changes[]", set()).update(record.keys() - _RECORD_FIELDS)
                yield app_id, i, record

    def warn(self) -> None:
        for where, names in self.unknown.items():
            note_unknown(where, names)
        for where, names in self.kept.items():
            target = where.endswith("target")
            what = ("a change target", "change targets") if target else ("a privacy section", "privacy sections")
            fate = "kept in the frame, their values as text or JSON" if target else "kept in the frame"
            note_unknown(where, names, what=what, fate=fate)

    # -- the fields every record has -------------------------------------------------------------

    @staticmethod
    def target(record: dict[str, Any], app_id: str, i: int) -> str:
        target = record.get("target")
        if type(target) is not str:
            raise shape_error("the name of the changed field (text)", target, f"{_at(app_id, i)}.target", _EP)
        return target

    @staticmethod
    def common(record: dict[str, Any], here: str) -> tuple[str, str | None, bool | None]:
        """The record's date (checked as a date when the column is built), raw version and A/B flag."""
        day = record.get("date")
        if type(day) is not str:
            raise shape_error("a date as YYYY-MM-DD", day, f"{here}.date", _EP)
        raw = record.get("version")
        if raw is not None and type(raw) is not str:
            raise shape_error("text", raw, f"{here}.version", _EP)
        ab = record.get("is_ab_test")
        if ab is not None and type(ab) is not bool:
            raise shape_error("true, false or null", ab, f"{here}.is_ab_test", _EP)
        return day, raw, ab

    # -- the values of each known target: (value, the record's path, the member) -------------------

    @staticmethod
    def text(value: Any, here: str, member: str) -> str | None:
        if value is None or type(value) is str:
            return value
        raise shape_error("text", value, f"{here}.{member}", _EP)

    @staticmethod
    def size(value: Any, here: str, member: str) -> int | None:
        """Bytes, as an integer or (as in the metadata answer) ``{"current": {"data": n}}``."""
        if value is None or type(value) is int:
            return value
        path = f"{here}.{member}"
        if type(value) is dict and "current" in value:
            data = obj(value.get("current"), f"{path}.current", _EP).get("data")
            if data is None or type(data) is int:
                return data
            raise shape_error("an integer", data, f"{path}.current.data", _EP)
        raise shape_error("an integer", value, path, _EP)

    def icon(self, value: Any, here: str, member: str) -> str | None:
        """The icon's URL, from an object with id and url."""
        if value is None:
            return None
        path = f"{here}.{member}"
        if type(value) is not dict:
            raise shape_error("an object with id and url", value, path, _EP)
        if not value.keys() <= _ICON_FIELDS:
            self.unknown.setdefault("result.<app_id>.changes[].icon", set()).update(value.keys() - _ICON_FIELDS)
        icon_id = value.get("id")
        if icon_id is not None and type(icon_id) not in (str, int):
            raise shape_error("an id (text)", icon_id, f"{path}.id", _EP)
        return self.text(value.get("url"), path, "url")

    def shots(self, value: Any, here: str, member: str) -> list[Shot]:
        """The screenshots of one side: objects with id, url, path_component (and filename on iphone/ipad).

        A bare URL in place of an object is taken as a screenshot with that URL alone.
        """
        path = f"{here}.{member}"
        shots: list[Shot] = []
        for n, item in enumerate(seq(value, path, _EP)):
            if type(item) is str:
                shots.append((None, item, None, None))
                continue
            if type(item) is not dict:
                raise shape_error("a screenshot (an object with id and url)", item, f"{path}[{n}]", _EP)
            if not item.keys() <= _SHOT_FIELDS:
                self.unknown.setdefault("result.<app_id>.changes[].screenshots[]", set()).update(
                    item.keys() - _SHOT_FIELDS
                )
            shot = (ident(item.get("id")), item.get("url"), item.get("path_component"), item.get("filename"))
            for field, name in zip(shot, ("id", "url", "path_component", "filename"), strict=True):
                if field is not None and type(field) is not str:
                    raise shape_error("text", field, f"{path}[{n}].{name}", _EP)
            shots.append(shot)
        return shots

    def privacy(self, value: Any, here: str, member: str) -> dict[str, list[str]]:
        """The data types of each privacy section (a missing section has none)."""
        path = f"{here}.{member}"
        sections: dict[str, list[str]] = {}
        for section, types in obj(value, path, _EP).items():
            names = seq(types, f"{path}.{section}", _EP)
            for n, name in enumerate(names):
                if type(name) is not str:
                    raise shape_error("a data type (text)", name, f"{path}.{section}[{n}]", _EP)
            if section not in PRIVACY_SECTIONS:
                self.kept.setdefault("result.<app_id>.changes[].privacy_info", set()).add(section)
            sections[section] = names
        return sections

    def check(self, target: str, value: Any, here: str, member: str) -> Any:
        """A known target's value checked (and its typed form where the changes table has one)."""
        # the changes table keeps screenshots and labels as JSON: check fast, walk only a doubtful value
        if target == "screenshots":
            if not _plain_shots(value):
                self.shots(value, here, member)
            return None
        if target == "privacy_info":
            if not _plain_privacy(value):
                self.privacy(value, here, member)
            return None
        return self.checks[target](value, here, member)


def _where(rows: list[tuple[str, int]], sources: dict[str, str]) -> Callable[[int, str], str]:
    """``where`` for a table whose rows each come from one record, ``rows[i] = (app_id, i)``."""
    return lambda i, column: f"{_at(*rows[i])}.{sources.get(column, column)}"


def _finish(table: TableSchema, history: _History, cols: dict[str, list[Any]], rows: list[tuple[str, int]]) -> Flat:
    history.warn()
    frame = build(table, cols, history.walk.keys, history.walk.counts, _where(rows, _RECORD_SOURCES), endpoint=_EP)
    return frame, history.walk.counts


def _columns(table: TableSchema) -> dict[str, list[Any]]:
    return {name: [] for name in table.names if name not in KEY_COLUMNS}


# -- one row per change ----------------------------------------------------------------------------


def batch_changes(answers: Answers) -> Flat:
    """One row per change record, its values as text plus typed sizes and icon URLs (:data:`~storeframes.schemas.CHANGES`)."""
    history = _History(answers)
    cols = _columns(CHANGES)
    rows: list[tuple[str, int]] = []
    unknown_targets: set[str] = set()
    text = history.text
    for app_id, i, record in history.records(cols["app_id"]):
        here = _at(app_id, i)
        target = history.target(record, app_id, i)
        day, raw, ab = history.common(record, here)
        old, new = record.get("old_value"), record.get("new_value")
        old_typed = new_typed = None
        if target in history.checks:
            old_typed = history.check(target, old, here, "old_value")
            new_typed = history.check(target, new, here, "new_value")
        else:
            unknown_targets.add(target)
        cols["app_id"].append(app_id)
        rows.append((app_id, i))
        cols["date"].append(day)
        cols["target"].append(target)
        cols["version"].append(related_version(raw))
        cols["version_raw"].append(raw)
        cols["is_ab_test"].append(ab)
        cols["old_value"].append(value_text(old))
        cols["new_value"].append(value_text(new))
        cols["old_release_notes"].append(text(record.get("old_release_notes"), here, "old_release_notes"))
        cols["new_release_notes"].append(text(record.get("new_release_notes"), here, "new_release_notes"))
        sized, iconic = target == "size", target == "icon"
        cols["old_size"].append(old_typed if sized else None)
        cols["new_size"].append(new_typed if sized else None)
        cols["old_icon_url"].append(old_typed if iconic else None)
        cols["new_icon_url"].append(new_typed if iconic else None)
    if unknown_targets:
        history.kept["result.<app_id>.changes[].target"] = unknown_targets
    return _finish(CHANGES, history, cols, rows)


# -- one row per privacy section and data type -------------------------------------------------------


def _sections(old: dict[str, list[str]], new: dict[str, list[str]]) -> list[str]:
    """The sections of either side: the three documented ones in their order, then any other as it came."""
    known = [s for s in PRIVACY_SECTIONS if s in old or s in new]
    others = [s for s in dict.fromkeys([*old, *new]) if s not in PRIVACY_SECTIONS]
    return known + others


def batch_privacy_changes(answers: Answers) -> Flat:
    """One row per privacy_info change, section and data type: added, removed or kept (:data:`~storeframes.schemas.PRIVACY_CHANGES`)."""
    history = _History(answers)
    cols = _columns(PRIVACY_CHANGES)
    rows: list[tuple[str, int]] = []
    for app_id, i, record in history.records(cols["app_id"]):
        if history.target(record, app_id, i) != "privacy_info":
            continue
        here = _at(app_id, i)
        day, raw, ab = history.common(record, here)
        old = history.privacy(record.get("old_value"), here, "old_value")
        new = history.privacy(record.get("new_value"), here, "new_value")
        labels: list[tuple[str, str, str]] = []
        for section in _sections(old, new):
            before, after = old.get(section, []), new.get(section, [])
            had, has = set(before), set(after)
            labels += [(section, t, "kept" if t in has else "removed") for t in dict.fromkeys(before)]
            labels += [(section, t, "added") for t in dict.fromkeys(after) if t not in had]
        count = len(labels)
        cols["app_id"] += [app_id] * count
        rows += [(app_id, i)] * count
        cols["date"] += [day] * count
        cols["version"] += [related_version(raw)] * count
        cols["is_ab_test"] += [ab] * count
        cols["section"] += [label[0] for label in labels]
        cols["data_type"] += [label[1] for label in labels]
        cols["status"] += [label[2] for label in labels]
    return _finish(PRIVACY_CHANGES, history, cols, rows)


# -- one row per screenshot on each side -------------------------------------------------------------


def batch_screenshot_changes(answers: Answers) -> Flat:
    """One row per screenshot before and after each screenshots change (:data:`~storeframes.schemas.SCREENSHOT_CHANGES`).

    ``status`` compares the two sides by screenshot id (by URL where there is no id): an
    old screenshot absent after the change is removed, a new one absent before is added.
    """
    history = _History(answers)
    cols = _columns(SCREENSHOT_CHANGES)
    rows: list[tuple[str, int]] = []
    for app_id, i, record in history.records(cols["app_id"]):
        if history.target(record, app_id, i) != "screenshots":
            continue
        here = _at(app_id, i)
        day, raw, ab = history.common(record, here)
        old = history.shots(record.get("old_value"), here, "old_value")
        new = history.shots(record.get("new_value"), here, "new_value")
        had = {shot[0] or shot[1] for shot in old}
        has = {shot[0] or shot[1] for shot in new}
        for side, shots, other, missing in (("old", old, has, "removed"), ("new", new, had, "added")):
            count = len(shots)
            cols["app_id"] += [app_id] * count
            rows += [(app_id, i)] * count
            cols["date"] += [day] * count
            cols["version"] += [related_version(raw)] * count
            cols["is_ab_test"] += [ab] * count
            cols["side"] += [side] * count
            cols["position"] += range(1, count + 1)
            cols["screenshot_id"] += [shot[0] for shot in shots]
            cols["url"] += [shot[1] for shot in shots]
            cols["path_component"] += [shot[2] for shot in shots]
            cols["filename"] += [shot[3] for shot in shots]
            cols["status"] += ["kept" if (shot[0] or shot[1]) in other else missing for shot in shots]
    return _finish(SCREENSHOT_CHANGES, history, cols, rows)


# -- one row per version change ---------------------------------------------------------------------


def batch_version_changes(answers: Answers) -> Flat:
    """One row per version change with the release notes before and after (:data:`~storeframes.schemas.VERSION_CHANGES`)."""
    history = _History(answers)
    cols = _columns(VERSION_CHANGES)
    rows: list[tuple[str, int]] = []
    text = history.text
    for app_id, i, record in history.records(cols["app_id"]):
        if history.target(record, app_id, i) != "version":
            continue
        here = _at(app_id, i)
        day, _, ab = history.common(record, here)
        cols["app_id"].append(app_id)
        rows.append((app_id, i))
        cols["date"].append(day)
        cols["old_version"].append(text(record.get("old_value"), here, "old_value"))
        cols["new_version"].append(text(record.get("new_value"), here, "new_value"))
        cols["old_release_notes"].append(text(record.get("old_release_notes"), here, "old_release_notes"))
        cols["new_release_notes"].append(text(record.get("new_release_notes"), here, "new_release_notes"))
        cols["is_ab_test"].append(ab)
    return _finish(VERSION_CHANGES, history, cols, rows)


# -- one answer at a time ----------------------------------------------------------------------------


def flatten_changes(result: Any, keys: Keys = NO_KEYS) -> pl.DataFrame:
    """One row per change record (:data:`~storeframes.schemas.CHANGES`)."""
    return batch_changes([(result, keys)])[0]


def flatten_privacy_changes(result: Any, keys: Keys = NO_KEYS) -> pl.DataFrame:
    """One row per privacy_info change, section and data type (:data:`~storeframes.schemas.PRIVACY_CHANGES`)."""
    return batch_privacy_changes([(result, keys)])[0]


def flatten_screenshot_changes(result: Any, keys: Keys = NO_KEYS) -> pl.DataFrame:
    """One row per screenshot on each side of a screenshots change (:data:`~storeframes.schemas.SCREENSHOT_CHANGES`)."""
    return batch_screenshot_changes([(result, keys)])[0]


def flatten_version_changes(result: Any, keys: Keys = NO_KEYS) -> pl.DataFrame:
    """One row per version change (:data:`~storeframes.schemas.VERSION_CHANGES`)."""
    return batch_version_changes([(result, keys)])[0]
