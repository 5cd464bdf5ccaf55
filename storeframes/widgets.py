"""Notebook widgets: the code lives in :mod:`storeframes.notebook.widgets`.

``from storeframes.widgets import ...`` keeps working and gives the same classes.
"""

from .notebook.widgets import RATES as RATES  # public as before, though never in __all__
from .notebook.widgets import AppCard, BenchmarkExplorer, CreditMeter, RankExplorer, app_card

__all__ = ["AppCard", "BenchmarkExplorer", "CreditMeter", "RankExplorer", "app_card"]
