"""``storeframes demo``: the code lives in :mod:`storeframes.notebook.demo`.

``from storeframes.demo import run_demo`` keeps working and gives the same function.
"""

from .notebook.demo import DEMO_KEYWORDS, DEMO_TODAY, DemoResult, run_demo

__all__ = ["DEMO_KEYWORDS", "DEMO_TODAY", "DemoResult", "run_demo"]
