"""The frame functions: one call, one tidy polars DataFrame of a declared schema.

Each is declared once, with its real signature and its documentation, as a
method of :class:`FrameFunctions`: :class:`~storeframes.Client` has them as methods,
and :mod:`storeframes.defaults` makes them functions of the package on the default
client. A method binds its arguments and hands them to the :class:`FrameMaker`
(:mod:`storeframes.fetch.pipeline`), which asks the client's fetcher for the parts, flattens and
orders (the spec of each function is in :data:`~storeframes.fetch.pipeline.FRAMES`).

The functions are declared by family, each family a class that :class:`FrameFunctions`
inherits: the frames of given apps (:mod:`.apps`), of keywords and store categories
(:mod:`.market`), :meth:`~FrameFunctions.find_apps` and its plan (:mod:`.find`), and the
change history with :func:`resolve` (:mod:`.functions`); ``days`` and the plumbing they
share are in :mod:`.base`.
"""

from __future__ import annotations

from ..fetch.pipeline import FRAMES as FRAMES
from .base import with_days
from .find import FIND_APPS_COLUMNS, MOST_FOUND_APPS, find_apps_search, plan_find_apps
from .functions import FrameFunctions, resolve

__all__ = [
    "FIND_APPS_COLUMNS",
    "MOST_FOUND_APPS",
    "FrameFunctions",
    "find_apps_search",
    "plan_find_apps",
    "resolve",
    "with_days",
]
