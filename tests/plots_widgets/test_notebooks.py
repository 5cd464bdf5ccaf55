"""The example notebooks: committed clean, run on the sandbox, draw their charts, run again offline for free.

Each notebook is executed in a kernel (nbclient) in a folder of its own, with no token in the
environment, so it uses the sandbox and fills its own cache folder (``tracking-cache`` for
``tracking.ipynb``) there; then it is executed again in the same folder with ``STOREFRAMES_OFFLINE=1``,
where every answer must come from that cache and the notebook's last cell must say that nothing was
spent. All five are also run one after another in one folder, in two orders: each keeps its own cache,
ledger and manifest, so each shows the same tables whatever ran before it. After each run the saved
notebook is read without its widget state: every explorer must have left its chart as an image, and
the credit meter its credits as text, and every progress bar its end state, so a notebook reopened
after its kernel stopped shows them.
"""

from __future__ import annotations

import base64
import re
import shutil
import sys
from pathlib import Path

import nbclient
import nbformat
import pytest

import storeframes as sf
from storeframes.lake.manifest import Manifest
from storeframes.sandbox import SANDBOX_KEY
from tests.conftest import ROOT

NOTEBOOKS = ROOT / "notebooks"
NAMES = [
    "rank_tracking.ipynb",
    "conversion_analysis.ipynb",
    "competitor_watch.ipynb",
    "tracking.ipynb",
    "keyword_opportunities.ipynb",
]
SPENT = re.compile(r"^credits spent in this session: ([\d,]+)$", re.MULTILINE)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
SHOWS = {
    "RankExplorer": ("image/png",),
    "BenchmarkExplorer": ("image/png", "credits spent"),
    "CreditMeter": ("credits spent",),
}
"""What a widget leaves as ordinary outputs, shown without widget state: its chart, its credits as text."""
WIDGETS = {
    "rank_tracking.ipynb": {"RankExplorer": 1, "CreditMeter": 1},
    "conversion_analysis.ipynb": {"BenchmarkExplorer": 1},
    "competitor_watch.ipynb": {},
    "tracking.ipynb": {},
    "keyword_opportunities.ipynb": {},
}
STANDINGS_TABLES = {"tracking.ipynb": 1, "keyword_opportunities.ipynb": 1}
"""The standings tables each notebook shows (where we stand, with a sparkline a row)."""
HOVERS = {
    "rank_tracking.ipynb": 2,
    "conversion_analysis.ipynb": 0,
    "competitor_watch.ipynb": 0,
    "tracking.ipynb": 0,
    "keyword_opportunities.ipynb": 0,
}
"""The charts a notebook shows with hover details: rank_tracking's hover_rank_chart and its explorer's chart."""
BAR = re.compile(r'class="storeframes-progress"><progress value="(?P<value>\d+)" max="(?P<max>\d+)"')
TQDM = re.compile(r"\b\d+%\|")
BARS = {
    "rank_tracking.ipynb": [],
    "conversion_analysis.ipynb": [(9, 9)],
    "competitor_watch.ipynb": [],
    "tracking.ipynb": [],
    "keyword_opportunities.ipynb": [(22, 22)],
}
"""The progress bars of a first run: the benchmarks call sends 9 requests (a bar shows above 5), the search history
of 22 keywords 22; the tracker's runs show none: each item of a run is one call of at most 4 requests, and the
with-ads replay's tracker (22 keywords a run) is made with progress=False."""
MANIFESTS = {
    "rank_tracking.ipynb": (["changes", "metadata", "search_history"], ["ranks"]),
    "conversion_analysis.ipynb": (["benchmarks"], ["standing"]),
}
"""The tables and frames each notebook's manifest (``rank_tracking-manifest.json`` ..., beside it) records."""
ENVIRONMENT = (
    "STOREFRAMES_API_KEY",
    "STOREFRAMES_BASE_URL",
    "STOREFRAMES_OFFLINE",
    "STOREFRAMES_CACHE_DIR",
    "STOREFRAMES_PROGRESS",
)


def _cache(name: str) -> str:
    """The notebook's own cache folder, beside it: ``tracking-cache`` for ``tracking.ipynb``."""
    return f"{Path(name).stem}-cache"


def _connect(name: str) -> str:
    return f'client = sf.connect("{_cache(name)}", budget=20_000, sandbox_today="2026-11-20")'


def _code_cells(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [cell for cell in nb.cells if cell.cell_type == "code"]


def _text(output: nbformat.NotebookNode) -> str:
    if output.output_type == "stream":
        return output.text
    if output.output_type == "error":
        return "\n".join(output.traceback)
    return str(output.get("data", {}).get("text/plain", ""))


def _pngs(nb: nbformat.NotebookNode) -> list[tuple[int, bytes]]:
    """(index of the code cell, PNG bytes) of every image the notebook's outputs show."""
    return [
        (index, base64.b64decode(output.data["image/png"]))
        for index, cell in enumerate(_code_cells(nb))
        for output in cell.outputs
        if "image/png" in output.get("data", {})
    ]


def _spent(nb: nbformat.NotebookNode) -> int:
    """The credits the last cell says this session spent."""
    last = _code_cells(nb)[-1]
    found = SPENT.findall("".join(_text(output) for output in last.outputs))
    assert len(found) == 1, f"the last cell should print the credits spent once, printed: {last.outputs}"
    return int(found[0].replace(",", ""))


def _static_views(nb: nbformat.NotebookNode) -> dict[str, int]:
    """Check what a reader sees in the saved notebook without its widget state; return the widgets found.

    The widget state is removed from the notebook's metadata, as when it is saved without "Save
    Widget State Automatically" (a widget view then shows nothing once the kernel has stopped).
    Every cell with a widget view, or that makes an explorer or a credit meter, must also hold an
    ordinary output showing its content: the chart as a PNG for an explorer, the credits text for a
    meter and for BenchmarkExplorer (its cost, credits and status lines). Returns how many cells made
    each kind of widget.
    """
    saved = nbformat.reads(nbformat.writes(nb), as_version=4)
    saved.metadata.pop("widgets", None)
    nbformat.validate(saved)
    found: dict[str, int] = {}
    for cell in _code_cells(saved):
        views = [o for o in cell.outputs if WIDGET_VIEW in o.get("data", {})]
        made = [name for name in SHOWS if f"{name}(" in cell.source]
        assert not views or made, f"a widget view from a cell that makes no known widget: {cell.source[:80]!r}"
        static = [
            o
            for o in cell.outputs
            if o.output_type in ("display_data", "execute_result") and WIDGET_VIEW not in o.get("data", {})
        ]
        for name in made:
            found[name] = found.get(name, 0) + 1
            for shows in SHOWS[name]:
                if shows == "image/png":
                    pngs = [base64.b64decode(o.data["image/png"]) for o in static if "image/png" in o.data]
                    assert pngs, f"{name}: no chart left as an image beside its controls: {cell.outputs}"
                    assert all(png.startswith(PNG_MAGIC) and len(png) > 10_000 for png in pngs), name
                else:
                    assert any(shows in _text(o) for o in static), f"{name}: no {shows!r} text: {cell.outputs}"
    return found


def _hover_charts(nb: nbformat.NotebookNode) -> int:
    """How many outputs show a chart with hover details; each holds its PNG as well, the same picture in both."""
    found = 0
    for cell in _code_cells(nb):
        for output in cell.outputs:
            shown = str(output.get("data", {}).get("text/html", ""))
            if "<span title=" not in shown or 'class="standings"' in shown:  # a standings table: _standings_tables
                continue
            found += 1
            png = output.data["image/png"]  # for a reader that shows no HTML
            assert f'<img src="data:image/png;base64,{png}"' in shown
            assert "<script" not in shown and "http" not in shown and "<svg" not in shown
    return found


def _standings_tables(nb: nbformat.NotebookNode) -> int:
    """How many outputs show a standings table; each sparkline an SVG image with a hover target a day, its words
    in the table's Markdown as well (for a reader that shows no HTML)."""
    found = 0
    for cell in _code_cells(nb):
        for output in cell.outputs:
            shown = str(output.get("data", {}).get("text/html", ""))
            if 'class="standings"' not in shown:
                continue
            found += 1
            sparks = shown.count('<span class="spark"')
            assert sparks and shown.count('<img src="data:image/svg+xml;base64,') == sparks
            assert shown.count("<span title=") >= 30 * sparks  # a hover target a day of the month
            assert "<script" not in shown and "http" not in shown and "<svg" not in shown
            assert "| Keyword | Rank | 1d | 7d | 30d |" in output.data["text/markdown"]
    return found


def _progress(nb: nbformat.NotebookNode) -> list[tuple[int, int]]:
    """(requests done, requests in all) of every progress bar the saved notebook shows; none left at 0 %.

    A bar is the client's display output (``<progress value= max=>`` in HTML, the label as text);
    a ``tqdm`` bar (its text ``  0%|``, or a widget's ``FloatProgress``) fails the check: it shows its
    first state, not its last, once the kernel has stopped.
    """
    bars = []
    for cell in _code_cells(nb):
        for output in cell.outputs:
            text = _text(output)
            assert not TQDM.search(text) and "Progress(" not in text, f"a tqdm bar left in: {text[:200]!r}"
            found = BAR.search(str(output.get("data", {}).get("text/html", "")))
            if found:
                done, total = int(found["value"]), int(found["max"])
                assert 0 < done == total, f"a progress bar left at {done}/{total}: {text!r}"
                assert f"{done}/{total} requests" in text, text
                bars.append((done, total))
    return bars


def _execute(path: Path) -> nbformat.NotebookNode:
    """Run the notebook in its folder; any cell's error raises ``CellExecutionError``."""
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()
    return nb


def _manifest(folder: Path, name: str) -> Manifest | None:
    """The manifest the notebook wrote beside it, checked to record its tables and frames; None for a notebook
    that writes none (and must not have written one)."""
    path = folder / f"{Path(name).stem}-manifest.json"
    assert not (folder / "analysis-manifest.json").exists()  # the name two notebooks once shared
    if name not in MANIFESTS:
        assert not path.exists()
        return None
    recorded = Manifest.load(path)
    tables, frames = MANIFESTS[name]
    assert [t.name for t in recorded.tables] == tables and [f.name for f in recorded.frames] == frames
    assert all(t.rows > 0 and t.answers > 0 for t in recorded.tables)
    assert recorded.cache is not None and recorded.cache.endswith(_cache(name))
    return recorded


def _check_run(nb: nbformat.NotebookNode) -> list[tuple[int, bytes]]:
    """What every run must show: the sandbox named first, charts drawn, no error, no token."""
    first = _code_cells(nb)[0].outputs
    assert first, "the connect cell printed nothing"
    assert first[0].output_type == "stream" and first[0].name == "stdout"
    assert "the sandbox" in first[0].text
    assert not [o for cell in _code_cells(nb) for o in cell.outputs if o.output_type == "error"]
    assert SANDBOX_KEY not in nbformat.writes(nb)  # outputs and widget state alike
    pngs = _pngs(nb)
    assert pngs, "no chart was displayed"
    assert all(png.startswith(PNG_MAGIC) and len(png) > 10_000 for _, png in pngs)
    return pngs


# -- the committed files --------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.notebooks
def test_committed_notebook_is_valid_and_has_no_outputs(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=nbformat.NO_CONVERT)
    nbformat.validate(nb)
    assert nb.nbformat == 4
    assert nb.metadata.kernelspec.name == "python3"
    cells = _code_cells(nb)
    assert cells
    for cell in cells:
        assert cell.outputs == [], f"outputs left in: {cell.source[:60]!r}"
        assert cell.execution_count is None, f"an execution count left in: {cell.source[:60]!r}"


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.notebooks
def test_the_first_code_cell_connects_and_the_cell_before_says_how(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    first = _code_cells(nb)[0]
    assert [line for line in first.source.splitlines() if line.strip()] == ["import storeframes as sf", _connect(name)]
    before = nb.cells[nb.cells.index(first) - 1]
    assert before.cell_type == "markdown"
    for needed in ("STOREFRAMES_API_KEY", "STOREFRAMES_BASE_URL", "STOREFRAMES_OFFLINE=1", _cache(name), "own"):
        assert needed in before.source


WIDGET_STATE = ("Save Widget State Automatically", "Save Notebook Widget State")
"""The menu items that keep the widgets themselves in a saved notebook: JupyterLab's, the classic Notebook's."""


@pytest.mark.parametrize("name", [name for name in NAMES if any("Explorer" in w for w in WIDGETS[name])])
@pytest.mark.notebooks
def test_the_cell_before_the_first_explorer_says_what_a_reopened_notebook_keeps(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    first = next(i for i, cell in enumerate(nb.cells) if cell.cell_type == "code" and "Explorer(" in cell.source)
    before = nb.cells[first - 1]
    assert before.cell_type == "markdown"
    for needed in ("ordinary output", "kernel", "model not found", *WIDGET_STATE):
        assert needed in before.source, needed


def test_the_readme_says_what_a_reopened_notebook_keeps():
    section = (ROOT / "docs" / "guides" / "notebooks.md").read_text()
    for needed in ("model not found", "cost line", *WIDGET_STATE):
        assert needed in section, needed


@pytest.mark.notebooks
def test_rank_trackings_biggest_movers_are_moves_near_the_top_each_named():
    """Its movers keep within= beside top= (without it the biggest moves are those deep in the list) and show move
    and places_moved, the size the rows are sorted by."""
    nb = nbformat.read(NOTEBOOKS / "rank_tracking.ipynb", as_version=4)
    source = "\n".join(cell.source for cell in _code_cells(nb))
    calls = re.findall(r"\bmovers\(([^)]*)\)", source)
    assert calls and all("within=" in call for call in calls if "top=" in call), calls
    assert '"change", "move", "places_moved"' in source  # entered and left rows have no change: move says what
    # happened, places_moved how far


@pytest.mark.notebooks
def test_the_check_of_saved_widgets_finds_a_widget_that_left_nothing_to_see():
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    view = new_output("display_data", {WIDGET_VIEW: {"model_id": "1", "version_major": 2, "version_minor": 0}})
    chart = new_output("display_data", {"image/png": base64.b64encode(PNG_MAGIC + bytes(20_000)).decode()})
    meter = new_output("display_data", {"text/plain": "3,105 of 20,000 credits spent (15%)"})
    cells = [new_code_cell("RankExplorer(history, APPS)", outputs=[view, chart]), new_code_cell("CreditMeter(client)")]
    nb = new_notebook(cells=cells, metadata={"widgets": {"application/vnd.jupyter.widget-state+json": {}}})
    with pytest.raises(AssertionError, match="CreditMeter: no 'credits spent' text"):
        _static_views(nb)
    cells[1].outputs = [meter]
    assert _static_views(nb) == {"RankExplorer": 1, "CreditMeter": 1}
    cells[0].outputs = [view]  # the chart only in the widget state
    with pytest.raises(AssertionError, match="RankExplorer: no chart left as an image"):
        _static_views(nb)
    cells[0].source, cells[0].outputs = "BenchmarkExplorer(client)", [view, chart]  # no cost, credits, status
    with pytest.raises(AssertionError, match="BenchmarkExplorer: no 'credits spent' text"):
        _static_views(nb)
    lines = new_output("display_data", {"text/plain": "us · iphone · free · all: cached\n1,001 credits spent"})
    cells[0].outputs = [view, lines, chart]
    assert _static_views(nb) == {"BenchmarkExplorer": 1, "CreditMeter": 1}
    cells[0].source, cells[0].outputs = "RankExplorer(history, APPS)", [view]
    cells[0].source = "something_else()"
    with pytest.raises(AssertionError, match="a widget view from a cell that makes no known widget"):
        _static_views(nb)


@pytest.mark.notebooks
def test_the_check_of_progress_bars_finds_one_left_at_its_start():
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    def bar(done: int, total: int) -> nbformat.NotebookNode:
        label = f"benchmarks: {done}/{total} requests, {1001 * done:,} credits spent"
        html = f'<div class="storeframes-progress"><progress value="{done}" max="{total}"></progress> {label}</div>'
        return new_output("display_data", {"text/html": html, "text/plain": label})

    cell = new_code_cell("sf.benchmarks_frame()", outputs=[bar(9, 9)])
    nb = new_notebook(cells=[cell])
    assert _progress(nb) == [(9, 9)]
    cell.outputs = [bar(0, 9)]
    with pytest.raises(AssertionError, match="a progress bar left at 0/9"):
        _progress(nb)
    cell.outputs = [new_output("stream", name="stderr", text="benchmarks:   0%|          | 0/9 [00:00<?, ?request/s]")]
    with pytest.raises(AssertionError, match="a tqdm bar left in"):
        _progress(nb)


@pytest.mark.processes
def test_the_kernel_runs_this_python():
    """The python3 kernelspec says ``python``: jupyter_client runs it as this interpreter."""
    from jupyter_client.manager import KernelManager

    command = KernelManager(kernel_name="python3").format_kernel_cmd()
    assert Path(command[0]).resolve() == Path(sys.executable).resolve()


# -- running them ---------------------------------------------------------------------------------


WARNING = re.compile(r"\b([A-Z][A-Za-z]+Warning)\b")


def _promised_warnings(nb: nbformat.NotebookNode) -> set[str]:
    """The warnings the notebook's text says a cell gives."""
    return {w for cell in nb.cells if cell.cell_type == "markdown" for w in WARNING.findall(cell.source)}


def _given_warnings(nb: nbformat.NotebookNode) -> set[str]:
    """The warnings its run showed."""
    return {w for cell in _code_cells(nb) for output in cell.outputs for w in WARNING.findall(_text(output))}


@pytest.mark.notebooks
def test_the_check_of_promised_warnings_finds_one_never_given():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("Named once in an `UnknownFieldWarning`."),
        nbformat.v4.new_code_cell("1"),
    ]
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n")]
    assert _promised_warnings(nb) - _given_warnings(nb) == {"UnknownFieldWarning"}
    nb.cells[1].outputs.append(
        nbformat.v4.new_output("stream", name="stderr", text="UnknownFieldWarning: the service sent a field ...")
    )
    assert _promised_warnings(nb) <= _given_warnings(nb)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.notebooks
def test_notebook_runs_on_the_sandbox_then_offline_for_0_credits(name, tmp_path, monkeypatch):
    for variable in ENVIRONMENT:
        monkeypatch.delenv(variable, raising=False)
    path = tmp_path / name
    shutil.copy(NOTEBOOKS / name, path)

    first = _execute(path)
    first_pngs = _check_run(first)
    assert _static_views(first) == WIDGETS[name]
    assert _hover_charts(first) == HOVERS[name]
    assert _standings_tables(first) == STANDINGS_TABLES.get(name, 0)
    assert _progress(first) == BARS[name]
    spent = _spent(first)
    assert 0 < spent <= 20_000  # it fetched, within the notebook's budget
    assert _promised_warnings(first) <= _given_warnings(first), "the text names a warning the run never gives"
    assert (tmp_path / _cache(name)).is_dir()  # beside the notebook, not where pytest runs
    recorded = _manifest(tmp_path, name)

    monkeypatch.setenv("STOREFRAMES_OFFLINE", "1")
    second = _execute(path)  # the committed copy again (the executed one was not written back)
    second_pngs = _check_run(second)
    assert _static_views(second) == WIDGETS[name]
    assert _hover_charts(second) == HOVERS[name]
    assert _progress(second) == []  # nothing sent
    assert "offline" in _code_cells(second)[0].outputs[0].text
    assert _spent(second) == 0
    assert [index for index, _ in second_pngs] == [index for index, _ in first_pngs]
    again = _manifest(tmp_path, name)  # written again, offline: the same tables, rows and hashes
    if recorded is not None and again is not None:
        assert again.tables == recorded.tables and again.frames == recorded.frames
        checked = sf.check_manifest(recorded, tmp_path / _cache(name))  # the first run's, as a colleague would
        assert checked.ok and checked.changed == checked.missing == [], checked


# -- all five in one folder, in any order ---------------------------------------------------------


SHAPE = re.compile(r"^shape: \((\d+), (\d+)\)$", re.MULTILINE)
OTHER_ORDER = [
    "keyword_opportunities.ipynb",
    "conversion_analysis.ipynb",
    "tracking.ipynb",
    "competitor_watch.ipynb",
    "rank_tracking.ipynb",
]
"""Not the README's: the keyword opportunities first (their with-ads replay before the tracker's month), the
tracker's month after the 9,009 credits of the benchmarks (which once spent its November budget), the
competitors' listings after the tracker's, the two manifests in the other order."""
HELD = re.compile(r" on (\d+) of 30 days(?: \(none on ([\d, -]+)\))?$", re.MULTILINE)


def _cell_text(nb: nbformat.NotebookNode, starts: str) -> str:
    """All the text the code cell whose source starts with ``starts`` showed."""
    cell = next(cell for cell in _code_cells(nb) if cell.source.startswith(starts))
    return "".join(_text(output) for output in cell.outputs)


def _shapes(nb: nbformat.NotebookNode) -> list[tuple[int, int, int]]:
    """(code cell, rows, columns) of every table the notebook shows."""
    return [
        (index, int(rows), int(columns))
        for index, cell in enumerate(_code_cells(nb))
        for output in cell.outputs
        for rows, columns in SHAPE.findall(_text(output))
    ]


def _run_together(folder: Path, order: list[str]) -> dict[str, nbformat.NotebookNode]:
    """Run the notebooks one after another in one folder, as a reader working through them would."""
    folder.mkdir()
    runs = {}
    for name in order:
        shutil.copy(NOTEBOOKS / name, folder / name)
        runs[name] = _execute(folder / name)
    return runs


def _whole_month(tracking: nbformat.NotebookNode) -> None:
    """The tracking notebook's key results when its month fits its budget: 30 days of everything."""
    runs = _cell_text(tracking, "results = [tracker.run(")
    assert "30 of 30 runs ok" in runs and "shape: (30, 7)" in runs, runs
    snapshots = _cell_text(tracking, "search = sf.snapshots(")
    assert re.search(r"^search: [\d,]+ rows on 30 of 30 days$", snapshots, re.MULTILINE), snapshots
    assert re.search(r"^metadata: 150 rows \(5 apps\) on 30 of 30 days$", snapshots, re.MULTILINE), snapshots
    assert "shape: (30, 5)" in snapshots  # our app's rank, a row a day
    downloads = _cell_text(tracking, "downloads = (")
    assert "90 snapshots: 3 apps on 30 of 30 days" in downloads, downloads
    changes = _cell_text(tracking, "shots = (")
    found = re.search(r"^(\d+) changes, from listings kept on 30 of 30 days$", changes, re.MULTILINE)
    assert found and int(found[1]) > 0, changes
    assert f"shape: ({found[1]}, 5)" in changes


@pytest.mark.slow
@pytest.mark.notebooks
def test_in_one_folder_in_either_order_each_notebook_tells_its_whole_story(tmp_path, monkeypatch):
    """The five run one after another in one folder, in the README's order and in another: each keeps its
    own cache and manifest, and shows the same tables, row for row, and spends the same, either way."""
    for variable in ENVIRONMENT:
        monkeypatch.delenv(variable, raising=False)
    orders = {
        "readme": _run_together(tmp_path / "readme", NAMES),
        "other": _run_together(tmp_path / "other", OTHER_ORDER),
    }
    for order, runs in orders.items():
        folder = tmp_path / order
        assert sorted(p.name for p in folder.iterdir() if p.is_dir()) == sorted(_cache(n) for n in NAMES)
        for name, nb in runs.items():
            _check_run(nb)
            assert _code_cells(nb)[0].outputs[0].text.rstrip().endswith(f"cache: {_cache(name)}"), order
        _whole_month(runs["tracking.ipynb"])
        recorded = {name: _manifest(folder, name) for name in NAMES}  # each its own file, its own tables
        for name in MANIFESTS:
            checked = sf.check_manifest(folder / f"{Path(name).stem}-manifest.json", cache_dir=folder / _cache(name))
            assert checked.ok and checked.changed == checked.missing == [], (order, name, checked)
        assert recorded["rank_tracking.ipynb"] != recorded["conversion_analysis.ipynb"]
    for name in NAMES:
        readme, other = orders["readme"][name], orders["other"][name]
        assert _shapes(readme) == _shapes(other), name
        assert _shapes(readme), name
        assert _spent(readme) == _spent(other), name


@pytest.mark.slow
@pytest.mark.notebooks
def test_a_month_budget_that_binds_is_said_with_the_runs_and_the_days_it_left_out(tmp_path, monkeypatch):
    """The tracking notebook's cache shared with the benchmarks' 9,009 credits (a reader pointing both at one
    folder): its November budget binds, and the notebook says so, run by run and day by day, above tables
    that are short."""
    for variable in ENVIRONMENT:
        monkeypatch.delenv(variable, raising=False)
    benchmarks = nbformat.read(NOTEBOOKS / "conversion_analysis.ipynb", as_version=4)
    for cell in benchmarks.cells:
        cell.source = cell.source.replace(_cache("conversion_analysis.ipynb"), _cache("tracking.ipynb"))
    assert _connect("tracking.ipynb") in _code_cells(benchmarks)[0].source
    nbformat.write(benchmarks, tmp_path / "conversion_analysis.ipynb")
    _execute(tmp_path / "conversion_analysis.ipynb")
    shutil.copy(NOTEBOOKS / "tracking.ipynb", tmp_path / "tracking.ipynb")
    tracking = _execute(tmp_path / "tracking.ipynb")

    runs = _cell_text(tracking, "results = [tracker.run(")
    ok = int(re.search(r"^(\d+) of 30 runs ok$", runs, re.MULTILINE)[1])  # type: ignore[index]
    said = dict(re.findall(r"^photo-editors run on (\S+): (\w+) in ", runs, re.MULTILINE))
    assert 0 < ok < 30 and len(said) == 30 - ok, runs
    assert "ok" not in said.values() and "over_budget" in said.values(), said
    assert "left out for the budget: " in runs
    for starts in ("search = sf.snapshots(", "downloads = (", "shots = ("):
        text = _cell_text(tracking, starts)
        held = HELD.search(text)
        assert held and held[2], f"a short month shown without saying so: {text[:300]!r}"
        missing = held[2].split(", ")
        assert int(held[1]) + len(missing) == 30 and set(missing) <= set(said), (missing, said)
