"""The optional extras: without them the package imports, and their modules say what to install."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from tests._extras import names_the_extra

pytestmark = pytest.mark.processes

# Run before the code under test: importing any of MISSING (or a module inside it) fails as
# it does where the package is not installed, whatever this environment holds.
HIDE = """
import importlib.abc, sys
MISSING = {missing!r}

class Missing(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in MISSING:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Missing())
"""


def _run(code: str, *missing: str) -> dict:
    """Run ``code`` in a fresh interpreter with ``missing`` unimportable; it prints one JSON line."""
    script = HIDE.format(missing=list(missing)) + textwrap.dedent(code)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


IMPORT_FAILS = """
import json
try:
    {statement}
except ImportError as exc:
    print(json.dumps({{"type": type(exc).__name__, "is_import_error": isinstance(exc, ImportError),
                      "message": str(exc), "name": exc.name}}))
else:
    print(json.dumps({{"type": None}}))
"""


# the explorers and the meter need the extra; the package itself imports without it (the app cards)
WIDGETS = ["from storeframes.widgets import RankExplorer", "from storeframes.widgets import CreditMeter"]
PLOTS = ["import storeframes.plots", "from storeframes.plots import rank_chart"]


@pytest.mark.parametrize("statement", WIDGETS)
@pytest.mark.parametrize("missing", ["ipywidgets", "matplotlib"])
def test_widgets_without_the_notebook_extra_say_what_to_install(missing, statement):
    got = _run(IMPORT_FAILS.format(statement=statement), missing)
    assert got["type"] == "ImportError" and got["is_import_error"]
    assert got["message"] == (
        f"storeframes.widgets needs ipywidgets and matplotlib ({missing} is not installed): "
        'pip install "ipykernel>=6.29" "ipywidgets>=8.1" "matplotlib>=3.9" '
        '(or, from a checkout of storeframes, pip install ".[notebook]")'
    )
    assert got["name"] == missing


@pytest.mark.parametrize(("widgets_module", "plots_module"), list(zip(WIDGETS, PLOTS, strict=True)))
def test_widgets_message_is_worded_as_the_plots_one(widgets_module, plots_module):
    widgets = _run(IMPORT_FAILS.format(statement=widgets_module), "ipywidgets", "matplotlib")
    plots = _run(IMPORT_FAILS.format(statement=plots_module), "matplotlib")
    assert widgets["type"] == plots["type"] == "ImportError"
    for got in (widgets, plots):
        assert " needs " in got["message"] and names_the_extra(got["message"], "notebook")
    assert widgets["message"].startswith("storeframes.widgets needs ipywidgets and matplotlib (ipywidgets")
    assert plots["message"].startswith("storeframes.plots needs matplotlib")


def test_the_package_imports_and_works_without_ipywidgets_and_matplotlib():
    got = _run(
        """
        import json, sys
        from datetime import date
        import storeframes as sf
        client = sf.sandbox.client(today=date(2026, 11, 20), cache_dir=False, progress=False)
        frame = client.metadata_frame(sf.sandbox.World(0).EXAMPLE_IOS_APPS[:2])
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("ipywidgets", "matplotlib"))
        print(json.dumps({"version": sf.__version__, "rows": frame.height, "loaded": loaded}))
        """,
        "ipywidgets",
        "matplotlib",
    )
    assert got["version"] and got["rows"] == 2 and got["loaded"] == []


def test_the_app_cards_and_device_names_need_neither_ipywidgets_nor_matplotlib():
    got = _run(
        """
        import json, sys
        import storeframes.widgets
        from storeframes.widgets import AppCard, app_card
        from storeframes.widgets.device_names import device_name
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("ipywidgets", "matplotlib", "IPython"))
        print(json.dumps({"card": app_card.__name__, "device": device_name("iphone_6_5"), "loaded": loaded}))
        """,
        "ipywidgets",
        "matplotlib",
    )
    assert got == {"card": "app_card", "device": "iPhone 6.5-inch", "loaded": []}


def test_the_charts_load_no_widgets_library():
    got = _run(
        """
        import json, sys
        from storeframes import plots
        print(json.dumps({"chart": plots.rank_chart.__name__, "loaded": "ipywidgets" in sys.modules}))
        """
    )
    assert got == {"chart": "rank_chart", "loaded": False}


def test_storeframes_dagster_without_dagster_says_what_to_install():
    got = _run(IMPORT_FAILS.format(statement="import storeframes.dagster"), "dagster")
    assert got["type"] == "ImportError" and got["is_import_error"] and got["name"] == "dagster"
    assert got["message"] == (
        'storeframes.dagster needs Dagster (dagster is not installed): pip install "dagster>=1.11.3" '
        '(or, from a checkout of storeframes, pip install ".[dagster]")'
    )


def test_the_package_and_its_tracker_work_without_dagster():
    got = _run(
        """
        import json, sys
        import storeframes as sf
        from storeframes.track import parse_spec
        spec = parse_spec('[tracker]\\nname = "t"\\n[[track]]\\nendpoint = "search"\\nkeywords = ["a"]\\n')
        print(json.dumps({"tracker": repr(sf.Tracker(spec, sandbox=True)), "dagster": "dagster" in sys.modules}))
        """,
        "dagster",
    )
    assert got == {"tracker": "Tracker('t', 1 item, sandbox)", "dagster": False}


def test_hiding_a_module_hides_it():  # the prelude itself: without it the tests above would prove nothing
    got = _run(
        """
        import json
        try:
            import ipywidgets
            print(json.dumps({"hidden": False}))
        except ModuleNotFoundError as exc:
            print(json.dumps({"hidden": True, "name": exc.name}))
        """,
        "ipywidgets",
    )
    assert got == {"hidden": True, "name": "ipywidgets"}
    assert _run("import json, ipywidgets, matplotlib; print(json.dumps({'ok': True}))") == {"ok": True}
