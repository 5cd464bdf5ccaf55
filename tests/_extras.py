"""The modules of the package that need an extra to be imported at all, whether it is installed here, and
what pyproject.toml says each extra installs (which the package's install hints must name).

``storeframes.dagster`` is Dagster's side of a tracker: importing it without Dagster raises an
``ImportError`` naming the extra, so the tests that import every module leave it out where Dagster is missing.
"""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path

NEEDS = {"storeframes.dagster": "dagster"}
"""A module and the library it cannot be imported without."""


def importable(module: str) -> bool:
    """Whether ``module`` can be imported here: it needs no extra, or its extra is installed."""
    needed = NEEDS.get(module)
    return needed is None or importlib.util.find_spec(needed) is not None


def declared(extra: str) -> list[str]:
    """The requirements ``pyproject.toml`` declares for ``extra`` (``[project.optional-dependencies]``), sorted."""
    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    return sorted(project["project"]["optional-dependencies"][extra])


def names_the_extra(message: str, extra: str) -> bool:
    """Whether ``message`` says how to install ``extra``: each of its packages by name, quoted with its
    lower bound (``pip install "pandas>=2.2"``), and the extra from a checkout (``pip install ".[pandas]"``)."""
    packages = " ".join(f'"{requirement}"' for requirement in declared(extra))
    return f"pip install {packages} " in message and f'pip install ".[{extra}]"' in message
