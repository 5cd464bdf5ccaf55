"""Notebook widgets: a credit meter, a keyword rank explorer and a benchmarks explorer.

They are ``ipywidgets`` 8 boxes (``pip install "storeframes[notebook]"``) that draw with
:mod:`storeframes.plots` into an image, so they need no matplotlib backend. Each has a
``close()`` that also stops what it watches.

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

:func:`app_card` (from :mod:`storeframes.cards`) is re-exported here.
"""

from __future__ import annotations

try:  # before any module of the package imports them
    import ipywidgets  # noqa: F401
    import matplotlib.figure  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the installed extras (tests/test_conventions.py)
    _missing = f"{exc.name} is not installed" if exc.name else str(exc)
    raise ImportError(
        f"storeframes.widgets needs ipywidgets and matplotlib ({_missing}): "
        'pip install "storeframes[notebook]" (or ipywidgets>=8.1 and matplotlib>=3.9)',
        name=exc.name,
    ) from exc

from .benchmark_explorer import RATES as RATES  # public, though never in __all__
from .benchmark_explorer import BenchmarkExplorer
from .cards import AppCard, app_card
from .credit_meter import CreditMeter
from .rank_explorer import RankExplorer

__all__ = ["AppCard", "BenchmarkExplorer", "CreditMeter", "RankExplorer", "app_card"]
