"""The package's docstrings made Markdown for the reference: they are written for ``help()`` and doctest, with
``>>>`` examples, reST literal blocks (``::``), reST tables and Sphinx roles, which Markdown would read as
quotes, paragraphs and stray text.

:func:`markdown_of` turns ``>>>`` runs into ``pycon`` code blocks (without their ``# doctest:`` directives),
a ``::`` block into a code block, a table of ``====`` rules into a text block, and a role
(``:class:`~storeframes.Cache```) into a code span. ``griffe_docstrings.py`` applies it to every docstring
mkdocstrings reads.

>>> print(markdown_of("Use it::\\n\\n    x = 1\\n"))
Use it:
<BLANKLINE>
```text
x = 1
```
<BLANKLINE>
>>> markdown_of("... 1 + 1  # doctest: +SKIP\\n2".replace("...", ">" * 3)).splitlines()[0::3]
['```pycon', '```']
"""

from __future__ import annotations

import re

from .markdown import plain_roles

_DIRECTIVE = re.compile(r"\s*#\s*doctest:.*$")
_RULE = re.compile(r"^\s*=+(\s+=+)+\s*$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _fenced(lines: list[str], indent: int, language: str, dedent: int | None = None) -> list[str]:
    """``lines`` in a fenced block at ``indent``, each taken ``dedent`` (by default ``indent``) spaces left."""
    pad, cut = " " * indent, indent if dedent is None else dedent
    body = [line[cut:] if line[:cut].strip() == "" else line.lstrip() for line in lines]
    return [f"{pad}```{language}", *(pad + line if line else "" for line in body), f"{pad}```"]


def markdown_of(text: str) -> str:
    """A docstring as Markdown (see the module's docstring)."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith(">>>"):  # a doctest run: to the next blank line
            indent, run = _indent(line), []
            while i < len(lines) and lines[i].strip():
                run.append(_DIRECTIVE.sub("", lines[i]).rstrip())
                i += 1
            out += _fenced(run, indent, "pycon")
            continue
        if _RULE.match(line):  # a reST simple table: its three rules and the rows between
            indent, run, rules = _indent(line), [], 0
            while i < len(lines) and rules < 3 and (lines[i].strip() or rules < 2):
                rules += bool(_RULE.match(lines[i]))
                run.append(lines[i].rstrip())
                i += 1
            out += _fenced(run, indent, "text")
            continue
        if stripped.endswith("::") and not stripped.startswith(">>>"):  # a reST literal block follows
            indent = _indent(line)
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            if j < len(lines) and _indent(lines[j]) > indent:
                block_indent, block = _indent(lines[j]), []
                while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) >= block_indent):
                    block.append(lines[j].rstrip())
                    j += 1
                while block and not block[-1]:
                    block.pop()
                if stripped != "::":  # "Use it::" is "Use it:"; a bare "::" goes
                    out += [plain_roles(line.rstrip()[:-1]), ""]
                out += _fenced(block, indent, "text", dedent=block_indent)
                out.append("")
                i = j
                continue
        out.append(plain_roles(line))
        i += 1
    return "\n".join(out)
