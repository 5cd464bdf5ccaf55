"""The distribution: its version, and what each of its extras installs.

storeframes is not on a package index, so an extra cannot be installed from one by the
package's name (that would fail, or install someone else's package of that name). What is
missing is installed by its packages' own names, or with the extra from a checkout of storeframes
(``pip install ".[lake]"``) or from a built wheel. :func:`install_hint` says both, with the extra's
packages read from the project's own declaration, never copied by hand: the checkout's
``pyproject.toml`` when storeframes runs from one (an editable install's metadata keeps the
requirements of the day it was installed), else the installed distribution's metadata.
Read when a hint is needed, never at import.
"""

from __future__ import annotations

import functools
import importlib.metadata
import re
import tomllib
from pathlib import Path

__all__ = ["__version__", "extra_requirements", "install_hint"]

__version__ = "0.1.0"

_EXTRA = re.compile(r"""\bextra\s*==\s*['"]([^'"]+)['"]""")


@functools.cache
def _extras() -> dict[str, tuple[str, ...]]:
    """Every extra and its requirements, sorted: from the checkout's pyproject.toml, else from the installed
    metadata (which lists them sorted)."""
    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    except (OSError, ValueError):
        project = {}
    if project.get("name") == "storeframes":
        return {name: tuple(sorted(reqs)) for name, reqs in project.get("optional-dependencies", {}).items()}
    try:
        lines = importlib.metadata.requires("storeframes") or []
    except importlib.metadata.PackageNotFoundError:
        return {}
    extras: dict[str, list[str]] = {}
    for line in lines:
        requirement, _, marker = line.partition(";")
        found = _EXTRA.search(marker)
        if found:
            extras.setdefault(found.group(1), []).append(requirement.strip())
    return {name: tuple(sorted(reqs)) for name, reqs in extras.items()}


def extra_requirements(extra: str) -> tuple[str, ...]:
    """The requirements an extra of storeframes installs, sorted (empty for an extra it does not declare).

    >>> extra_requirements("pandas")
    ('pandas>=2.2',)
    """
    return _extras().get(extra, ())


def install_hint(extra: str) -> str:
    """How to install what an extra brings: its packages by name, or the extra from a checkout.

    >>> install_hint("sql")
    'pip install "duckdb>=1.1.1" (or, from a checkout of storeframes, pip install ".[sql]")'
    """
    packages = " ".join(f'"{requirement}"' for requirement in extra_requirements(extra))
    checkout = f'pip install ".[{extra}]"'
    if not packages:
        return f"{checkout} from a checkout of storeframes"
    return f"pip install {packages} (or, from a checkout of storeframes, {checkout})"
