"""A small language for the forms storeframes knows, and the walk that compares an answer with them.

A form is a tree of nodes: a :class:`Leaf` admits JSON types (null always: every reader of
storeframes reads null as absent), an :class:`Obj` names its members (each a :class:`Field`,
expected on some stores or when a metric is asked, maybe under another name), a :class:`Keyed`
object holds one form under keys of its own (app ids, dates, device keys), an :class:`Arr`
holds one form per item, :class:`OneOf` admits several forms and records which one the answer
took (a *point* of the dialect), and :class:`UnderKeyword` admits the answer under a key named
after the request's keyword.

:func:`compare` walks a value against a node once and gives a :class:`Comparison`: each
difference (a member storeframes does not know, one it expected and did not find, a type
it does not read, a value in none of the known forms), at a path in which app ids, dates and
device keys are named by their kind (``result.<app_id>.metadata.size``), counted where it
repeats, and the form met at each point.

>>> spec = Obj({"title": Field(TEXT), "size": Field(OneOf("size", (("number", INT), ("text", TEXT))))})
>>> found = compare({"title": "Notes", "size": 12, "badge": "new"}, spec, Context("ios"), "metadata")
>>> found.forms, [d.line() for d in found.differences]
({'size': {'number'}}, ['unknown at metadata.badge: a member storeframes does not know (text), e.g. "new"'])
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..flatteners.search import same_keyword

__all__ = [
    "ANY",
    "BOOL",
    "EVERYWHERE",
    "ID",
    "INT",
    "NOWHERE",
    "NUM",
    "TEXT",
    "Arr",
    "Comparison",
    "Context",
    "Difference",
    "Field",
    "Keyed",
    "Leaf",
    "Node",
    "Obj",
    "OneOf",
    "UnderKeyword",
    "compare",
    "json_type",
]

_NAMES = {
    "null": "null",
    "boolean": "true or false",
    "integer": "a whole number",
    "number": "a number",
    "string": "text",
    "array": "an array",
    "object": "an object",
}


def json_type(value: Any) -> str:
    """The JSON type of a parsed value: null, boolean, integer, number, string, array or object."""
    if value is None:
        return "null"
    if type(value) is bool:
        return "boolean"
    if type(value) is int:
        return "integer"
    if type(value) is float:
        return "number"
    if type(value) is str:
        return "string"
    if type(value) is list:
        return "array"
    return "object" if type(value) is dict else type(value).__name__


def _found(value: Any) -> str:
    """A value's type in words (an array with its length)."""
    kind = json_type(value)
    return f"an array of {len(value)}" if kind == "array" else _NAMES.get(kind, kind)


def _example(value: Any) -> str:
    """A short value shown beside a difference: texts and numbers, never a whole object or array."""
    if json_type(value) in ("string", "integer", "number", "boolean"):
        import orjson

        shown = orjson.dumps(value).decode()
        return shown[:57] + "..." if len(shown) > 60 else shown
    return ""


@dataclass(frozen=True, order=True)
class Difference:
    """One way an answer differs from what storeframes knows.

    ``kind``: ``unknown`` (a member storeframes does not know), ``missing`` (one it expected
    and did not find), ``type`` (a value of a type it does not read), ``form`` (a value in none
    of its known forms), ``frame`` (a frame function could not read the answer, or warned),
    ``status`` (an answer other than the one expected), ``cost`` (charged above the estimate)
    or ``envelope`` (the service's envelope itself). ``where`` is a JSON path with app ids,
    dates and device keys named by their kind; ``count`` how many times it was met.
    """

    kind: str
    where: str
    detail: str
    count: int = 1
    example: str = ""

    def line(self) -> str:
        example = f", e.g. {self.example}" if self.example else ""
        times = f" ({self.count} times)" if self.count > 1 else ""
        return f"{self.kind} at {self.where}: {self.detail}{example}{times}"

    def key(self) -> tuple[str, str, str]:
        return (self.kind, self.where, self.detail)

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "where": self.where,
            "detail": self.detail,
            "count": self.count,
            "example": self.example,
        }


@dataclass(frozen=True)
class Context:
    """What decides which members an answer should hold: its store (``ios`` or ``android``), the metrics
    asked for and the keyword searched."""

    store: str
    metrics: frozenset[str] = frozenset()
    keyword: str | None = None

    @property
    def tags(self) -> frozenset[str]:
        return frozenset({self.store, *(f"asked:{m}" for m in self.metrics)})


@dataclass
class Comparison:
    """The differences met in one walk (counted by kind, path and detail) and the forms met at each point."""

    found: dict[tuple[str, str, str], int] = field(default_factory=dict)
    forms: dict[str, set[Any]] = field(default_factory=dict)
    examples: dict[tuple[str, str, str], str] = field(default_factory=dict)

    def add(self, kind: str, where: str, detail: str, value: Any = None, *, example: str | None = None) -> None:
        """Count a difference; ``value`` (or the text ``example``) is shown beside its first occurrence."""
        key = (kind, where, detail)
        self.found[key] = self.found.get(key, 0) + 1
        if key not in self.examples:
            self.examples[key] = _example(value) if example is None else example

    def form(self, point: str, name: Any) -> None:
        self.forms.setdefault(point, set()).add(name)

    def merge(self, other: Comparison) -> None:
        for key, count in other.found.items():
            self.found[key] = self.found.get(key, 0) + count
            self.examples.setdefault(key, other.examples.get(key, ""))
        for point, names in other.forms.items():
            self.forms.setdefault(point, set()).update(names)

    @property
    def differences(self) -> list[Difference]:
        return sorted(Difference(k, w, d, n, self.examples.get((k, w, d), "")) for (k, w, d), n in self.found.items())

    def weight(self) -> int:
        """How far the value is from the form: type and form differences count most."""
        return sum(n * (10 if k in ("type", "form") else 1) for (k, _, _), n in self.found.items())


class Node:
    """A form of a JSON value."""

    root: frozenset[str] = frozenset()
    """The JSON types the value itself may have (null aside)."""

    def walk(self, value: Any, where: str, ctx: Context, out: Comparison) -> None:
        raise NotImplementedError


@dataclass(frozen=True)
class Leaf(Node):
    """A value of one of ``types`` (``number`` admits whole numbers too)."""

    types: frozenset[str]
    what: str

    @property
    def root(self) -> frozenset[str]:  # type: ignore[override]
        return self.types | ({"integer"} if "number" in self.types else frozenset())

    def walk(self, value: Any, where: str, ctx: Context, out: Comparison) -> None:
        kind = json_type(value)
        if kind != "null" and kind not in self.root:
            out.add("type", where, f"expected {self.what}, found {_found(value)}", value)


TEXT = Leaf(frozenset({"string"}), "text")
INT = Leaf(frozenset({"integer"}), "a whole number")
NUM = Leaf(frozenset({"number"}), "a number")
BOOL = Leaf(frozenset({"boolean"}), "true or false")
ID = Leaf(frozenset({"string", "integer"}), "an id (text or a whole number)")
ANY = Leaf(frozenset(_NAMES) - {"null"}, "any value")

EVERYWHERE = frozenset({"ios", "android"})
NOWHERE: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Field:
    """A member of an object: its form, where it is expected (store names, or ``asked:<metric>``),
    and the other names it may come under (the first is the documented one); ``point`` records
    which name the answer used."""

    node: Node
    on: frozenset[str] = EVERYWHERE
    aliases: tuple[str, ...] = ()
    point: str | None = None


@dataclass(frozen=True)
class Obj(Node):
    """An object with known members; with ``open``, any other member is admitted too."""

    fields: Mapping[str, Field]
    open: bool = False
    root: frozenset[str] = frozenset({"object"})

    def walk(self, value: Any, where: str, ctx: Context, out: Comparison) -> None:
        if type(value) is not dict:
            if value is not None:
                out.add("type", where, f"expected an object, found {_found(value)}", value)
            return
        seen: set[str] = set()
        tags = ctx.tags
        for name, spec in self.fields.items():
            names = (name, *spec.aliases)
            present = next((n for n in names if n in value), None)
            seen.update(n for n in names if n in value)
            if present is None:
                if spec.on & tags:
                    out.add("missing", f"{where}.{name}", "expected, not found")
                continue
            if spec.point is not None:
                out.form(spec.point, present)
            spec.node.walk(value[present], f"{where}.{present}", ctx, out)
        if not self.open:
            for name in value.keys() - seen:
                out.add(
                    "unknown",
                    f"{where}.{name}",
                    f"a member storeframes does not know ({_found(value[name])})",
                    value[name],
                )


@dataclass(frozen=True)
class Keyed(Node):
    """An object whose keys are data (app ids, dates, device keys), each holding ``node``."""

    label: str
    node: Node
    keys: str | None = None
    """A pattern every key matches (``YYYY-MM-DD`` for dates), if any."""
    root: frozenset[str] = frozenset({"object"})

    def walk(self, value: Any, where: str, ctx: Context, out: Comparison) -> None:
        if type(value) is not dict:
            if value is not None:
                out.add("type", where, f"expected an object keyed by {self.label[1:-1]}, found {_found(value)}", value)
            return
        for key, item in value.items():
            if self.keys is not None and not re.fullmatch(self.keys, key):
                out.add("form", f"{where}.{self.label}", f"a key that is not {self.label[1:-1]}", key)
                continue
            self.node.walk(item, f"{where}.{self.label}", ctx, out)


@dataclass(frozen=True)
class Arr(Node):
    """An array, each item of form ``node``."""

    node: Node
    root: frozenset[str] = frozenset({"array"})

    def walk(self, value: Any, where: str, ctx: Context, out: Comparison) -> None:
        if type(value) is not list:
            if value is not None:
                out.add("type", where, f"expected an array, found {_found(value)}", value)
            return
        for item in value:
            self.node.walk(item, f"{where}[]", ctx, out)


@dataclass(frozen=True)
class OneOf(Node):
    """Any of several named forms; the one nearest the value is taken and, with a ``point``, recorded."""

    point: str | None
    forms: tuple[tuple[Any, Node], ...]

    @property
    def root(self) -> frozenset[str]:  # type: ignore[override]
        return frozenset().union(*(node.root for _, node in self.forms))

    def walk(self, value: Any, where: str, ctx: Context, out: Comparison) -> None:
        if value is None:
            return
        kind = json_type(value)
        fitting = [(name, node) for name, node in self.forms if kind in node.root]
        if not fitting:
            known = "; ".join(
                f"{name} ({' or '.join(_NAMES[t] for t in sorted(node.root))})" for name, node in self.forms
            )
            label = f" of {self.point}" if self.point else ""
            out.add("form", where, f"in none of the known forms{label}: found {_found(value)}; known: {known}", value)
            return
        best: tuple[Any, Comparison] | None = None
        for name, node in fitting:
            trial = Comparison()
            node.walk(value, where, ctx, trial)
            if best is None or trial.weight() < best[1].weight():
                best = (name, trial)
            if not trial.found:
                break
        assert best is not None
        if self.point is not None:
            out.form(self.point, best[0])
        out.merge(best[1])


@dataclass(frozen=True)
class UnderKeyword(Node):
    """``node``, or ``node`` under a key named after the request's keyword (recorded at ``keyword_level``)."""

    node: Node

    @property
    def root(self) -> frozenset[str]:  # type: ignore[override]
        return self.node.root | {"object"}

    def walk(self, value: Any, where: str, ctx: Context, out: Comparison) -> None:
        if type(value) is dict and ctx.keyword is not None:
            for key, inner in value.items():
                if same_keyword(key, ctx.keyword) and type(inner) in (dict, list):
                    out.form("keyword_level", True)
                    for other in value.keys() - {key}:
                        out.add("unknown", f"{where}.{other}", "a member beside the keyword storeframes ignores")
                    self.node.walk(inner, f"{where}.<keyword>", ctx, out)
                    return
        if value is not None:
            out.form("keyword_level", False)
        self.node.walk(value, where, ctx, out)


def compare(value: Any, node: Node, ctx: Context, where: str = "result") -> Comparison:
    """The differences between ``value`` and the form ``node``, and the forms met (see the module's example)."""
    out = Comparison()
    node.walk(value, where, ctx, out)
    return out
