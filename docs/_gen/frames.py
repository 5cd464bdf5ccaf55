"""``reference/frames.md``: every frame's columns, dtypes and meanings, from :mod:`storeframes.schemas`, with the
frame functions that return it and the endpoint they call (``storeframes.fetch.pipeline.FRAMES``).

>>> "| `app_id` | str |" in page()
True
"""

from __future__ import annotations

import storeframes
from storeframes.fetch.pipeline import FRAMES
from storeframes.schemas import SCHEMAS, dtype_name, read_schema

from .markdown import code, table


def _functions(schema_name: str) -> list[str]:
    """The public functions that return frames of this schema, with the endpoint each calls."""
    found = [
        f"{code('sf.' + spec.name + '()')} (endpoint {code(spec.endpoint)})"
        for spec in FRAMES.values()
        if spec.table.name == schema_name
    ]
    if not found and schema_name in storeframes.__all__:  # a frame read from the cache: sf.rank_history
        found.append(f"{code('sf.' + schema_name + '()')} (read from the cache, no call)")
    return found


def page() -> str:
    """The page's Markdown."""
    lines = [
        "# Frames",
        "",
        "Every frame storeframes returns has exactly these columns, in this order and with these dtypes, whatever "
        "the store, and the same when the answer is empty. `app_id` is always a string, dates are `date` and "
        "timestamps `datetime[us, UTC]`. In Python, `storeframes.schemas.SCHEMAS[name].describe()` gives the same "
        "table as a frame.",
        "",
        table(
            ("frame", "what a row is", "returned by"),
            [(code(s.name), s.doc, ", ".join(_functions(s.name))) for s in SCHEMAS.values()],
        ),
        "",
    ]
    for schema in SCHEMAS.values():
        lines += [f"## {schema.name}", "", f"{schema.doc[:1].upper()}{schema.doc[1:]}.", ""]
        functions = _functions(schema.name)
        if functions:
            lines += ["Returned by " + ", ".join(functions) + ".", ""]
        lines += [
            table(("column", "dtype", "meaning"), [(code(c.name), dtype_name(c.dtype), c.doc) for c in schema.columns]),
            "",
        ]
        extra = read_schema(schema).columns[len(schema.columns) :]
        if extra:
            lines += [
                "Read from a cache (`sf.scan`, `sf.snapshots`, `sf.sql`, the team tables), it also has:",
                "",
                table(("column", "dtype", "meaning"), [(code(c.name), dtype_name(c.dtype), c.doc) for c in extra]),
                "",
            ]
    return "\n".join(lines)
