"""A griffe extension (``mkdocs.yml``: the python handler's ``extensions``) that makes every docstring
mkdocstrings reads Markdown, with :func:`_gen.docstrings.markdown_of`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import griffe

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # docs/: loaded by path, not as a package

from _gen.docstrings import markdown_of


class MarkdownDocstrings(griffe.Extension):
    """Rewrites each object's docstring once, as it is loaded."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown_of(obj.docstring.value)
