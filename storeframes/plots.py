"""Charts of the tidy frames: the code lives in :mod:`storeframes.notebook.plots`.

``from storeframes import plots`` keeps working and gives the same functions.
"""

from .notebook.plots import (
    MAX_APPS,
    RATE_LABELS,
    TARGET_MARKERS,
    benchmark_chart,
    changes_timeline,
    figure_png,
    rank_chart,
)

__all__ = [
    "MAX_APPS",
    "RATE_LABELS",
    "TARGET_MARKERS",
    "benchmark_chart",
    "changes_timeline",
    "figure_png",
    "rank_chart",
]
