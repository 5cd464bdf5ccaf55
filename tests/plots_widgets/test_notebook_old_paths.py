"""The notebook's modules under their names from before the ``storeframes/notebook/`` package:
``storeframes.plots``, ``storeframes.widgets``, ``storeframes.cards`` and ``storeframes.demo`` give
the same objects, under the same public names."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

PUBLIC = {
    "plots": [
        "MAX_APPS",
        "RATE_LABELS",
        "TARGET_MARKERS",
        "benchmark_chart",
        "changes_timeline",
        "figure_png",
        "rank_chart",
    ],
    "widgets": ["AppCard", "BenchmarkExplorer", "CreditMeter", "RankExplorer", "app_card"],
    "cards": ["AppCard", "app_card"],
    "demo": ["DEMO_KEYWORDS", "DEMO_TODAY", "DemoResult", "run_demo"],
}


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_the_old_path_gives_the_same_objects_as_the_new_home(name):
    old = importlib.import_module(f"storeframes.{name}")
    home = importlib.import_module(f"storeframes.notebook.{name}")
    assert old.__all__ == home.__all__ == PUBLIC[name]
    for public in PUBLIC[name]:
        assert getattr(old, public) is getattr(home, public), public
    assert "storeframes.notebook" in (old.__doc__ or "")  # it says where the code lives


def test_the_widgets_rates_keep_their_old_path():
    from storeframes import widgets
    from storeframes.notebook import widgets as home

    assert widgets.RATES is home.RATES


@pytest.mark.processes
def test_old_paths_are_attributes_of_the_package_once_imported():
    code = (
        "import storeframes as sf, storeframes.plots, storeframes.widgets, storeframes.cards, storeframes.demo\n"
        "from storeframes import plots, widgets, cards, demo\n"
        "assert sf.plots is plots and sf.widgets is widgets and sf.cards is cards and sf.demo is demo\n"
        "assert sf.plots.rank_chart is sf.notebook.plots.rank_chart\n"
        "assert sf.widgets.CreditMeter is sf.notebook.widgets.CreditMeter\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
