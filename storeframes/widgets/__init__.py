"""Notebook widgets: a credit meter, a keyword rank explorer and a benchmarks explorer; app cards and tables.

They are ``ipywidgets`` 8 boxes (the ``notebook`` extra: ``pip install ".[notebook]"`` from a
checkout) that draw with :mod:`storeframes.plots` into an image, so they need no matplotlib
backend. Each has a ``close()`` that also stops what it watches.

Shown in a notebook (the cell's value, or ``display(explorer)``), each also writes an
ordinary output that holds what it shows, kept up to date in place (a ``display_id``): the
explorer's current chart as a PNG (above it, BenchmarkExplorer's cost, credits and status
lines), the meter's line as HTML. A notebook saved and opened again after its kernel stopped
shows those outputs, with or without the widget state saved.
In plain Python they are made and redrawn the same way; nothing is displayed.

In a notebook cell::

    import storeframes as sf
    from storeframes.widgets import BenchmarkExplorer, CreditMeter, RankExplorer

    client = sf.configure(sandbox=True, budget=10_000)
    CreditMeter(client)                      # credits spent and saved, live
    history = client.search_history_frame(["photo editor", "photo filters"], start="2026-08-21")
    RankExplorer(history, names=client.metadata_frame(["3233849169", "1395556972"]))
    BenchmarkExplorer(client)                # asks before spending: "Fetch: up to 1,001 credits"

The app cards (:mod:`storeframes.widgets.cards`: :func:`app_card`, plain HTML), the tables whose
dates never wrap (:mod:`storeframes.widgets.tables`: :func:`table`) and the device names
(:mod:`storeframes.widgets.device_names`) need neither ipywidgets nor matplotlib: importing
this package loads them alone, and the explorers and the meter load their libraries when first
asked for (``from storeframes.widgets import RankExplorer``), saying what to install if missing.

>>> from storeframes.widgets import app_card
>>> app_card.__name__
'app_card'
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .._version import install_hint
from .cards import AppCard, app_card
from .tables import Table, table

if TYPE_CHECKING:
    from .benchmark_explorer import BenchmarkExplorer
    from .credit_meter import CreditMeter
    from .rank_explorer import RankExplorer

__all__ = ["AppCard", "BenchmarkExplorer", "CreditMeter", "RankExplorer", "Table", "app_card", "table"]

_WIDGETS = {"BenchmarkExplorer": "benchmark_explorer", "CreditMeter": "credit_meter", "RankExplorer": "rank_explorer"}


def __getattr__(name: str) -> Any:
    """The explorers and the meter, imported when first asked for: they need the ``notebook`` extra."""
    if name not in _WIDGETS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        import ipywidgets  # noqa: F401
        import matplotlib.figure  # noqa: F401
    except ImportError as exc:
        missing = f"{exc.name} is not installed" if exc.name else str(exc)
        raise ImportError(
            f"storeframes.widgets needs ipywidgets and matplotlib ({missing}): {install_hint('notebook')}",
            name=exc.name,
        ) from exc
    value = getattr(importlib.import_module(f"{__name__}.{_WIDGETS[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names, the explorers among them before they are imported (tab completion)."""
    return sorted({*globals(), *__all__})
