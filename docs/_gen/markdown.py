"""Small helpers that write Markdown: a table whose cells cannot break it, a code span, a heading's anchor.

>>> print(table(("name", "meaning"), [("a|b", "one\\ntwo")]))
| name | meaning |
| --- | --- |
| a\\|b | one two |
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence


def cell(value: object) -> str:
    """A value as one table cell: pipes escaped, line breaks made spaces, empty shown as an em dash.

    >>> cell(None), cell("x|y"), cell("")
    ('—', 'x\\\\|y', '—')
    """
    if value is None or value == "":
        return "—"
    text = " ".join(str(value).split())
    return text.replace("|", "\\|")


def code(value: object) -> str:
    """A value as an inline code span (backticks inside handled).

    >>> code("a"), code("a`b")
    ('`a`', '`` a`b ``')
    """
    text = str(value)
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A Markdown table; every cell goes through :func:`cell`."""
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(cell(value) for value in row) + " |" for row in rows]
    return "\n".join(lines)


def first_line(text: str | None) -> str:
    """The first sentence-line of a docstring (its summary), or an empty string.

    >>> first_line("  One line.\\n\\n  More.")
    'One line.'
    """
    for line in (text or "").strip().splitlines():
        return line.strip()
    return ""


def first_paragraph(text: str | None) -> str:
    """The first paragraph of a docstring, on one line.

    >>> first_paragraph("One line\\n  goes on.\\n\\nMore.")
    'One line goes on.'
    """
    return " ".join((text or "").strip().split("\n\n", 1)[0].split())


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
"""A terminal's colour and cursor codes, taken out of what a tool or a kernel printed before a page or the build
shows it."""

_ROLE = re.compile(r":(?:class|func|meth|attr|data|mod|exc|obj):`~?([^`]+)`")


def plain_roles(text: str) -> str:
    """Sphinx roles (``:class:`~storeframes.Cache```) as code spans, as a page shows them.

    >>> plain_roles("see :class:`~storeframes.Cache` and :func:`storeframes.sql`")
    'see `Cache` and `storeframes.sql`'
    """
    return _ROLE.sub(lambda m: code(m.group(1).rsplit(".", 1)[-1] if m.group(0).count("~") else m.group(1)), text)
