"""Does a rank explorer's whole chart show in JupyterLab at 1280 px with the file browser open?

A check in a real browser, not collected by pytest (run it by hand when the explorers' layout
changes). It writes a small notebook over the built-in sandbox: a RankExplorer of two keywords
over 60 days shown as a notebook shows it (the chart is the next output), and one placed in
another box (the chart is in the widget's own chart area). It executes the notebook, starts
JupyterLab on 127.0.0.1 (no token; its own settings and workspace, so the file browser is open,
every cell is drawn and no dialog is in the way) and opens the notebook in headless Chromium in a
window of 1280 x 900. It measures every chart image twice: as the notebook was saved (the output
only; the widgets need a kernel), then after running all its cells in JupyterLab's kernel (the
widgets live). A chart fits when its right edge is within the notebook panel's and the area
around it needs no horizontal scrollbar: neither its area (the output, or the widget's chart
area) nor any box up to the notebook is wider inside than out (``scrollWidth`` <= ``clientWidth``).

It prints one JSON line of these figures (``saved`` and ``live``, each with the window, the file
browser's width, the panel's edges and, per image, where it is, its box, its pixel size and its
area's widths, ``overflow_px`` the most a box around it is wider inside than out), saves a screenshot of the explorer's output to the path given and one of the
boxed explorer beside it (``-widget`` before the suffix), and exits 0 when every chart fits, 1
when one does not.

It needs, in the Python that runs it, storeframes with the notebook extra, JupyterLab and
Playwright for Python; the browser is an installed Chromium (``--chromium``, by default the
``chromium`` on the PATH), not one Playwright downloads::

    python3 -m venv .lab-venv
    .lab-venv/bin/python -m pip install -e ".[notebook]" jupyterlab playwright
    .lab-venv/bin/python tests/browser/explorer_width.py explorer-width.png

``--keep DIR`` writes the notebook (and JupyterLab's log) into DIR and leaves them there; a
temporary folder otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

WIDTH, HEIGHT = 1280, 900
NOTEBOOK = "explorer_width.ipynb"
CELLS = [
    'import storeframes as sf\n\nclient = sf.connect("cache", live=False, sandbox_today="2026-11-20")',
    "from storeframes.widgets import RankExplorer\n\n"
    'history = sf.search_history_frame(["photo editor", "meditation"], start="2026-09-20", end="2026-11-18")\n'
    "history.height",
    "RankExplorer(history)  # 60 days: the chart is the next output",
    "import ipywidgets\n\nipywidgets.VBox([RankExplorer(history)])  # in another box: the chart is in the widget",
]
SETTINGS = {  # no news or update dialogs over the notebook; every cell drawn, not only those in view
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}

# Runs in the page: every chart image of the notebook that shows, and what holds it.
MEASURE = """() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const browser = document.querySelector('#filebrowser');
  const box = (el) => el.getBoundingClientRect();
  const images = [];
  for (const img of panel.querySelectorAll('.jp-OutputArea-output img')) {
    if (img.offsetWidth === 0) continue;  // the chart area a shown explorer hides
    const widget = img.closest('.jupyter-widgets');
    const area = widget ? img.parentElement : img.closest('.jp-OutputArea-output');
    let overflow = 0;  // the most any box from the image up to the notebook is wider inside than out
    for (let el = img.parentElement; el && el !== panel; el = el.parentElement) {
      overflow = Math.max(overflow, el.scrollWidth - el.clientWidth);
    }
    images.push({
      where: widget ? 'widget' : 'output',
      left: box(img).left, right: box(img).right, width: box(img).width, height: box(img).height,
      natural_width: img.naturalWidth, natural_height: img.naturalHeight,
      area_scroll_width: area.scrollWidth, area_client_width: area.clientWidth, overflow_px: overflow,
    });
  }
  const notebook = panel.querySelector('.jp-Notebook');
  return {
    window: [window.innerWidth, window.innerHeight],
    file_browser_open: !!browser && browser.offsetWidth > 0,
    file_browser_width: browser ? browser.offsetWidth : 0,
    panel_left: box(panel).left, panel_right: box(panel).right,
    notebook_scroll_width: notebook.scrollWidth, notebook_client_width: notebook.clientWidth,
    images,
  };
}"""
LOADED = """(count) => {
  const shown = [...document.querySelectorAll('.jp-OutputArea-output img')].filter((img) => img.offsetWidth > 0);
  return shown.length >= count && shown.every((img) => img.complete && img.naturalWidth > 0);
}"""
RAN = """() => {
  const busy = [...document.querySelectorAll('.jp-InputArea-prompt')].some((p) => p.textContent.includes('*'));
  const widgetCharts = [...document.querySelectorAll('.jupyter-widgets img')].filter((img) => img.offsetWidth > 0);
  return !busy && widgetCharts.length > 0;
}"""


def _notebook(folder: Path) -> Path:
    """The notebook, executed in this Python's kernel, its outputs and widget state kept."""
    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    book.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    NotebookClient(book, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()
    path = folder / NOTEBOOK
    nbformat.write(book, path)
    return path


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _start_lab(folder: Path, port: int) -> subprocess.Popen[bytes]:
    """JupyterLab on 127.0.0.1, no token, its settings and workspaces in ``folder``."""
    settings = folder / ".lab-settings"
    for name, values in SETTINGS.items():
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / name).write_text(json.dumps(values))
    env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(settings), JUPYTERLAB_WORKSPACES_DIR=str(folder / ".lab-ws"))
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        "--IdentityProvider.token=",
        "--ServerApp.password=",
        "--ServerApp.allow_root=True",  # in a container run as root
        f"--ServerApp.root_dir={folder}",
        "--LabApp.expose_app_in_browser=True",
    ]
    log = folder / "lab.log"
    with log.open("wb") as out:
        lab = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=2):
                return lab
        except OSError:
            if lab.poll() is not None:
                tail = log.read_text(errors="replace")[-2_000:]
                raise SystemExit(f"JupyterLab exited with {lab.returncode} before it answered:\n{tail}") from None
            time.sleep(0.5)
    lab.terminate()
    raise SystemExit("JupyterLab did not answer within 120 s")


def _measure(port: int, chromium: str, screenshot: Path) -> dict[str, Any]:
    """The figures of the notebook as saved, then after running it in JupyterLab's kernel (widgets live)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True)
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            page.goto(f"http://127.0.0.1:{port}/lab/tree/{NOTEBOOK}", wait_until="load")
            page.wait_for_selector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output img", timeout=120_000)
            page.evaluate("() => window.jupyterapp.shell.activateById('filebrowser')")
            page.wait_for_selector("#filebrowser", state="visible")
            page.wait_for_function(LOADED, arg=1)
            page.wait_for_timeout(1_000)  # the layout settles
            saved = dict(page.evaluate(MEASURE))
            page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
            page.wait_for_function(RAN, timeout=180_000, polling=500)
            page.wait_for_function(LOADED, arg=2)
            page.wait_for_timeout(2_000)
            live = dict(page.evaluate(MEASURE))
            charts = page.locator(".jp-OutputArea-output img:visible")
            charts.first.scroll_into_view_if_needed()
            page.screenshot(path=str(screenshot))
            charts.last.scroll_into_view_if_needed()
            page.screenshot(path=str(screenshot.with_name(f"{screenshot.stem}-widget{screenshot.suffix}")))
        finally:
            browser.close()
    return {"saved": saved, "live": live}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("screenshot", type=Path, help="where the PNG screenshot goes")
    parser.add_argument("--chromium", default=shutil.which("chromium"), help="the Chromium to drive")
    parser.add_argument("--keep", type=Path, help="write the notebook here and leave it (default: a temporary folder)")
    args = parser.parse_args(argv)
    if not args.chromium:
        parser.error("no chromium on the PATH: give --chromium")
    folder = args.keep or Path(tempfile.mkdtemp(prefix="explorer-width-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        _notebook(folder)
        port = _free_port()
        lab = _start_lab(folder, port)
        try:
            figures = _measure(port, args.chromium, args.screenshot.resolve())
        finally:
            lab.terminate()
            lab.wait(timeout=30)
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    for seen in figures.values():
        for image in seen["images"]:
            image["fits"] = image["right"] <= seen["panel_right"] and image["overflow_px"] <= 0
    wheres = sorted(image["where"] for image in figures["live"]["images"])
    figures["fits"] = wheres == ["output", "widget"] and all(
        image["fits"] for seen in figures.values() for image in seen["images"]
    )
    figures["screenshot"] = str(args.screenshot)
    print(json.dumps(figures))
    return 0 if figures["fits"] else 1


if __name__ == "__main__":
    sys.exit(main())
