"""App cards: the code lives in :mod:`storeframes.notebook.cards`.

``from storeframes.cards import app_card`` keeps working and gives the same function.
"""

from .notebook.cards import AppCard, app_card

__all__ = ["AppCard", "app_card"]
