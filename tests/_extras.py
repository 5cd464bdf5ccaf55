"""The modules of the package that need an extra to be imported at all, and whether it is installed here.

``storeframes.dagster`` is Dagster's side of a tracker: importing it without Dagster raises an
``ImportError`` naming the extra, so the tests that import every module leave it out where Dagster is missing.
"""

from __future__ import annotations

import importlib.util

NEEDS = {"storeframes.dagster": "dagster"}
"""A module and the library it cannot be imported without."""


def importable(module: str) -> bool:
    """Whether ``module`` can be imported here: it needs no extra, or its extra is installed."""
    needed = NEEDS.get(module)
    return needed is None or importlib.util.find_spec(needed) is not None
