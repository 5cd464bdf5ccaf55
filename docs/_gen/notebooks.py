"""The example notebooks of ``notebooks/``, executed against the sandbox and written as pages of the site.

``render(docs_dir)`` runs each notebook with nbclient in a fresh temporary folder of its own, in the
``python3`` kernel, with no ``STOREFRAMES_*`` variable in the kernel's environment (so it uses the sandbox,
as the notebook tests run them), two at a time. Then it writes ``docs/examples/<name>.md`` for each
(``rank_tracking.ipynb`` gives ``rank-tracking.md``) and ``docs/examples/index.md``, which lists them.

A page holds the notebook's markdown cells as they are, its code cells as ``python`` blocks and what each
cell showed: printed text (standard error too: warnings are part of the story) and plain results as
``text`` blocks, charts as PNG files beside the page, tables and other HTML results as HTML (without
``<style>`` or ``<script>``), and a widget as the text it leaves for a reader without its kernel (its chart
and credits are ordinary outputs of the same cell, shown after it). A cell that fails fails the render,
naming the notebook, the cell and the error: no page is written for a notebook that did not run.

``docs/examples/`` is wholly generated: ``render`` empties it first.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import nbclient
import nbformat
from nbclient.exceptions import CellExecutionError
from nbformat import NotebookNode

from storeframes.sandbox import SANDBOX_KEY

from .markdown import ANSI

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
ORDER = (
    "rank_tracking.ipynb",
    "conversion_analysis.ipynb",
    "competitor_watch.ipynb",
    "tracking.ipynb",
    "keyword_opportunities.ipynb",
)
"""The order of the index: the README's, from one app's ranks to a month of tracking, then what to do next."""
REPOSITORY = "https://github.com/storeframes/storeframes/blob/main/"
EXAMPLES = "examples"
CELL_TIMEOUT = 120
"""Seconds a cell may run, as in the notebook tests."""
AT_ONCE = 2
"""Notebooks executed at the same time (each in its own kernel)."""
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
OBJECT_REPR = re.compile(r"^<[^<>]*>$")
"""A result's plain text that only names its object (``<Figure size 1000x910 with 3 Axes>``): no alt text."""
LINK = re.compile(r"(?<!!)(\[[^\]]*\])\(([^()\s]+)\)")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
TABLE = re.compile(r"<table\b[^>]*>", re.IGNORECASE)
UNSHOWN = re.compile(r"<(script|style)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
KERNEL_LINES = 20
"""Lines of the kernel process's own output quoted when it dies."""
NEAR = 60
"""Characters of a failing cell's source quoted in the error."""


class NotebookFailed(Exception):
    """A notebook did not run to its end, or showed something a page cannot show; says which, where and why."""


@dataclass(frozen=True)
class Example:
    """One rendered notebook: its file, its page (relative to ``docs/examples``), title and first paragraph."""

    notebook: str
    page: str
    title: str
    summary: str

    @property
    def url(self) -> str:
        """The notebook on GitHub."""
        return f"{REPOSITORY}notebooks/{self.notebook}"


def render(docs_dir: Path, notebooks: Sequence[Path] | None = None) -> list[Path]:
    """Execute the example notebooks against the sandbox and write their pages into ``docs_dir/examples``.

    ``notebooks`` defaults to every notebook of ``notebooks/`` (in the index's order). Returns the pages
    written, the index last. Raises ``NotebookFailed`` naming the notebook, the cell and the error when a
    cell fails; nothing is written then.

    Example::

        render(Path("docs"))  # docs/examples/rank-tracking.md ... and docs/examples/index.md
    """
    paths = list(notebooks) if notebooks is not None else _discover(NOTEBOOKS)
    executed = asyncio.run(_execute_all(paths))
    out = Path(docs_dir) / EXAMPLES
    pages = [page(nb, path.name) for nb, path in zip(executed, paths, strict=True)]
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    written = []
    for example, text, images in pages:
        for name, png in images.items():
            (out / name).write_bytes(png)
        (out / example.page).write_text(text, encoding="utf-8")
        written.append(out / example.page)
    (out / "index.md").write_text(index([example for example, _, _ in pages]), encoding="utf-8")
    return [*written, out / "index.md"]


def page_name(notebook: str) -> str:
    """The page of a notebook: ``rank_tracking.ipynb`` is ``rank-tracking.md``."""
    return Path(notebook).stem.replace("_", "-") + ".md"


# -- executing ------------------------------------------------------------------------------------


def _discover(folder: Path) -> list[Path]:
    found = {path.name: path for path in folder.glob("*.ipynb")}
    return [found[name] for name in ORDER if name in found] + [found[n] for n in sorted(found) if n not in ORDER]


async def _execute_all(paths: Sequence[Path]) -> list[NotebookNode]:
    """Run the notebooks, ``AT_ONCE`` at a time; every one runs to its end before a failure is raised."""
    gate = asyncio.Semaphore(AT_ONCE)

    async def one(path: Path) -> NotebookNode:
        async with gate:
            return await _execute(path)

    results = await asyncio.gather(*(one(path) for path in paths), return_exceptions=True)
    failures = [result for result in results if isinstance(result, BaseException)]
    if failures:
        if len(failures) == 1 or not all(isinstance(f, NotebookFailed) for f in failures):
            raise failures[0]
        raise NotebookFailed("\n\n".join(str(failure) for failure in failures))
    return [result for result in results if isinstance(result, NotebookNode)]


def _environment() -> dict[str, str]:
    """The kernel's environment: this one without any ``STOREFRAMES_*`` variable (no token: the sandbox)."""
    return {name: value for name, value in os.environ.items() if not name.startswith("STOREFRAMES_")}


def _quiet_debugger() -> None:
    """ipykernel 6 (the lowest the notebook extra allows) imports debugpy into the process that looks up the
    python3 kernel, this one, and on Python 3.11+ debugpy then prints a warning about frozen modules on standard
    error unless ``PYDEVD_DISABLE_FILE_VALIDATION`` is set: set it (unless the user did), so that a good build
    prints only what it found."""
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")


async def _execute(path: Path) -> NotebookNode:
    """Run a copy of the notebook in a fresh temporary folder, which holds its cache and manifest.

    What the kernel process itself prints (not a cell's output: its start-up notices) goes to a log beside
    that folder, quoted when the kernel dies or never starts, so a good build prints nothing.
    """
    nb = nbformat.read(path, as_version=4)
    _quiet_debugger()
    with tempfile.TemporaryDirectory(prefix=f"{path.stem}-") as root:
        folder, log = Path(root) / "run", Path(root) / "kernel.log"
        folder.mkdir()
        shutil.copy(path, folder / path.name)
        running: list[NotebookNode] = []  # the cells sent to the kernel, in order
        client = nbclient.NotebookClient(
            nb,
            timeout=CELL_TIMEOUT,
            kernel_name="python3",
            resources={"metadata": {"path": str(folder)}},
            on_cell_execute=lambda cell, cell_index: running.append(cell),
        )
        with log.open("wb") as kernel_output:
            try:
                await client.async_execute(env=_environment(), stdout=kernel_output, stderr=kernel_output)
            except CellExecutionError as error:
                raise NotebookFailed(_failure(path.name, nb, running, f"{error.ename}: {error.evalue}")) from None
            except Exception as error:  # a timeout, a kernel that died or never started
                said = log.read_text(errors="replace").strip().splitlines()[-KERNEL_LINES:]
                last = "\n".join(["the kernel's last lines:", *said]) if said else "the kernel printed nothing"
                raise NotebookFailed(
                    _failure(path.name, nb, running, f"{type(error).__name__}: {error}\n{last}")
                ) from None
    return nb


def _failure(name: str, nb: NotebookNode, running: list[NotebookNode], error: str) -> str:
    """Which code cell failed (the one with an error output, else the last one sent to the kernel) and how."""
    cells = [cell for cell in nb.cells if cell.cell_type == "code"]
    failed = next((c for c in cells if any(o.output_type == "error" for o in c.outputs)), None)
    if failed is None and running:
        failed = running[-1]
    if failed is None:
        return f"notebooks/{name} did not run: {error}"
    source = " ".join(failed.source.split())
    quoted = source if len(source) <= NEAR else source[:NEAR] + " ..."
    return f"notebooks/{name}: code cell {cells.index(failed) + 1} of {len(cells)} ({quoted!r}) failed: {error}"


# -- writing a page -------------------------------------------------------------------------------


def page(nb: NotebookNode, notebook: str) -> tuple[Example, str, dict[str, bytes]]:
    """An executed notebook as a page: its example, its markdown text and its charts (file name: PNG bytes).

    Raises ``NotebookFailed`` for a notebook without a ``# heading`` in its first markdown cell, an output
    a page cannot show, or the sandbox's key anywhere in the page.

    Example::

        example, text, images = page(nbformat.read("rank_tracking.executed.ipynb", 4), "rank_tracking.ipynb")
    """
    example = _example(nb, notebook)
    parts: list[str] = []
    images: dict[str, bytes] = {}
    section = example.title
    for number, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            text = _links(cell.source)
            section = next((h for h in re.findall(r"^#+\s+(.+)$", text, re.MULTILINE)), section)
            if number == 0:
                text = _after_title(text, _origin(example))
            parts.append(text.strip())
        elif cell.cell_type == "code" and cell.source.strip():
            parts.append(_fenced(cell.source, "python"))
            parts.extend(_outputs(cell.outputs, example, section, images))
    text = "\n\n".join(part for part in parts if part) + "\n"
    if SANDBOX_KEY in text:
        raise NotebookFailed(f"notebooks/{notebook}: the sandbox's key appears in its outputs; a page never shows it")
    return example, text, images


def index(examples: Sequence[Example]) -> str:
    """The examples' index page: each notebook's title, what it shows, its page and the notebook on GitHub.

    Example::

        index([Example("tracking.ipynb", "tracking.md", "Tracking: ...", "For an ASO analyst: ...")])
    """
    lines = [
        "# Example notebooks",
        "",
        "Each notebook is a short analysis, run against the sandbox when this site was built: its code, then",
        "the tables, charts and text each cell showed. Each keeps its own cache folder beside it. Its *Connect*",
        "section says what changes with a token (`STOREFRAMES_API_KEY` and `STOREFRAMES_BASE_URL` set).",
        "[Notebooks, charts and widgets](../guides/notebooks.md) says how to run them.",
    ]
    for example in examples:
        lines += [
            "",
            f"## {example.title}",
            "",
            example.summary,
            "",
            f"[Read it here]({example.page}) · [{example.notebook} on GitHub]({example.url})",
        ]
    return "\n".join(lines) + "\n"


def _example(nb: NotebookNode, notebook: str) -> Example:
    first = nb.cells[0] if nb.cells else None
    heading = re.match(r"#\s+(.+)", first.source) if first is not None and first.cell_type == "markdown" else None
    if heading is None:
        raise NotebookFailed(f"notebooks/{notebook}: its first cell must be markdown opening with a '# ' title")
    assert first is not None
    paragraphs = [p for p in re.split(r"\n\s*\n", first.source[heading.end() :]) if p.strip()]
    summary = " ".join(paragraphs[0].split()) if paragraphs else ""
    return Example(notebook, page_name(notebook), heading[1].strip(), summary)


def _origin(example: Example) -> str:
    return (
        f"*This page is the notebook [{example.notebook}]({example.url}), run against the sandbox when the site "
        "was built: each code cell is followed by what it showed.*"
    )


def _after_title(text: str, line: str) -> str:
    title, _, rest = text.partition("\n")
    return f"{title}\n\n{line}\n\n{rest.strip()}"


def _links(text: str) -> str:
    """Relative links of a notebook's text, made to resolve in the site.

    Another notebook (``tracking.ipynb``) becomes its page (``tracking.md``); any other relative file
    (``../README.md#install``) its address on GitHub; addresses with a scheme and ``#anchors`` stay.
    """

    def rewrite(found: re.Match[str]) -> str:
        label, target = found[1], found[2]
        if SCHEME.match(target) or target.startswith("#"):
            return found[0]
        path, hash_, anchor = target.partition("#")
        if "/" not in path and path.endswith(".ipynb"):
            return f"{label}({page_name(path)}{hash_}{anchor})"
        resolved = os.path.normpath(f"notebooks/{path}")
        if resolved.startswith(".."):
            raise NotebookFailed(f"a link outside the repository in a notebook: {target!r}")
        return f"{label}({REPOSITORY}{resolved}{hash_}{anchor})"

    return LINK.sub(rewrite, text)


def _outputs(outputs: list[NotebookNode], example: Example, section: str, images: dict[str, bytes]) -> list[str]:
    """What a code cell showed, output by output; consecutive stream outputs of one stream make one block."""
    parts: list[str] = []
    for key, group in itertools.groupby(outputs, key=lambda o: o.get("name") if o.output_type == "stream" else None):
        if key is None:
            parts.extend(_output(output, example, section, images) for output in group)
        else:
            parts.append(_text_block("".join(output.text for output in group)))
    return parts


def _output(output: NotebookNode, example: Example, section: str, images: dict[str, bytes]) -> str:
    if output.output_type == "error":  # only where a cell allowed it (a raises-exception tag)
        return _text_block("\n".join(output.traceback))
    data = output.get("data", {})
    plain = str(data.get("text/plain", ""))
    if WIDGET_VIEW in data:
        return _text_block(plain)  # the widget's fallback text; its chart and credits are outputs of their own
    if "image/png" in data:
        name = f"{Path(example.page).stem}-{len(images) + 1}.png"
        images[name] = base64.b64decode(data["image/png"])
        alt = section if not plain or OBJECT_REPR.match(plain) else plain
        return f"![{_alt(alt)}]({name})"
    if "text/html" in data:
        return _html(str(data["text/html"]))
    if "text/markdown" in data:
        return str(data["text/markdown"])
    if "text/plain" in data:
        return _text_block(plain)
    raise NotebookFailed(
        f"notebooks/{example.notebook}: an output of {sorted(data)} in section {section!r}, which a page cannot "
        "show: it needs image/png, text/html, text/markdown or text/plain"
    )


def _html(html: str) -> str:
    """An HTML result as one raw HTML block of the page: without ``<style>`` or ``<script>``, and its tables
    without polars' ``class="dataframe"`` and ``border``, so the site styles them as its own (and lets a wide
    one scroll)."""
    kept = UNSHOWN.sub("", html)
    kept = TABLE.sub("<table>", kept)
    lines = [line for line in kept.splitlines() if line.strip()]  # a blank line would end the HTML block
    return '<div class="sf-output">\n' + "\n".join(lines) + "\n</div>"


def _text_block(text: str) -> str:
    return _fenced(_terminal(text), "text")


def _terminal(text: str) -> str:
    """Text as a terminal left it: colours removed, a line rewritten with a carriage return shown last."""
    lines = [line.rsplit("\r", 1)[-1] for line in ANSI.sub("", text).split("\n")]
    return "\n".join(lines)


def _fenced(text: str, language: str) -> str:
    """A fenced code block, its fence longer than any run of backticks in the text."""
    runs = re.findall(r"`+", text)
    fence = "`" * max(3, *(len(run) + 1 for run in runs)) if runs else "```"
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


def _alt(text: str) -> str:
    return " ".join(text.replace("[", "(").replace("]", ")").split())
