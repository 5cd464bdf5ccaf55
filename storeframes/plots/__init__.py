"""Charts of the tidy frames, with matplotlib: ranks, benchmarks, changes, share of voice, keyword opportunities.

Each function returns a :class:`matplotlib.figure.Figure` built without pyplot, so it works
headless (a script, a server, a test) and leaves no figure open behind it; in Jupyter the
returned figure shows as the cell's output. It is a :class:`Chart`, a Figure that says what it
shows: ``chart.alt`` is its alternative text (its title, panels, axes and key, in words), and a
notebook shows it as an image with that ``alt``, its PNG beside it for static renderers. Each takes ``ax=`` to draw into an Axes of your
own and then returns that Axes, as pandas does (so the chart shows once, with your figure).
Save one with ``fig.savefig("ranks.png")``. Dates read as day and month with the year, rank
axes start at 1; a chart with nothing to draw is one line saying what has no data and why.

>>> import storeframes as sf
>>> from storeframes import plots
>>> history = sf.search_history_frame(["photo editor", "collage maker"], start="2026-08-21")  # doctest: +SKIP
>>> changes = sf.changes_frame(["394079159", "1395556972"], start="2026-08-21")  # doctest: +SKIP
>>> chart = plots.rank_chart(history, ["3233849169", "394079159", "1395556972"], changes=changes)  # doctest: +SKIP
>>> chart.alt  # doctest: +SKIP
'Chart. Keyword ranks, us · iphone, 2026-08-21 to 2026-11-18. “photo editor”: rank (1 = top). ...'

Needs the ``notebook`` extra (``pip install ".[notebook]"`` from a checkout) or matplotlib alone.
"""

from __future__ import annotations

from .._version import install_hint

try:
    from matplotlib.figure import Figure
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(f"storeframes.plots needs matplotlib: {install_hint('notebook')}") from exc

from .anomaly_marks import DIRECTION_COLORS
from .benchmark_charts import RATE_LABELS, benchmark_chart
from .change_charts import changes_timeline
from .common import MAX_APPS, TARGET_MARKERS, Chart, chart_alt, figure_png
from .hover import HoverChart, hover_rank_chart
from .opportunity_charts import opportunities_chart
from .rank_charts import rank_chart
from .voice_charts import share_of_voice_chart

__all__ = [
    "DIRECTION_COLORS",
    "MAX_APPS",
    "RATE_LABELS",
    "TARGET_MARKERS",
    "Chart",
    "HoverChart",
    "benchmark_chart",
    "changes_timeline",
    "chart_alt",
    "figure_png",
    "hover_rank_chart",
    "opportunities_chart",
    "rank_chart",
    "share_of_voice_chart",
]


def _show_in_ipython() -> None:
    """Let IPython show a returned Figure as PNG, when no matplotlib backend has said how."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return
    formatter = shell.display_formatter.formatters["image/png"]
    try:
        formatter.lookup_by_type(Figure)
    except KeyError:
        formatter.for_type(Figure, lambda fig: figure_png(fig, dpi=100))


_show_in_ipython()
