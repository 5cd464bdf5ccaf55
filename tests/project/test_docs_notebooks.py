"""The example notebooks as pages of the docs site (docs/_gen/notebooks.py).

A page shows the notebook's text as written, its code cells as they are, and what each cell showed:
printed text (standard error too), tables as HTML without their styles, charts as PNG files beside the
page, a widget as the text it leaves without its kernel. Links to another notebook or a file of the
repository resolve in the site. A notebook whose cell fails fails the render, naming the cell and the error.
"""

from __future__ import annotations

import base64
import re
import sys

import nbformat
import pytest
from markdown_it import MarkdownIt
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from storeframes.sandbox import SANDBOX_KEY
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "docs"))  # docs/_gen is a folder of modules, imported with docs/ on the path
from _gen import notebooks

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
GITHUB = "https://github.com/storeframes/storeframes/blob/main/notebooks/"
IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)]+)\)")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _fences(text: str, language: str) -> list[str]:
    """The contents of the page's fenced blocks of ``language``, as a Markdown reader parses them."""
    return [t.content for t in MarkdownIt().parse(text) if t.type == "fence" and t.info == language]


def _small_notebook(*outputs: nbformat.NotebookNode, markdown: str = "") -> nbformat.NotebookNode:
    first = "# A small analysis\n\nWhat it shows, in one\nparagraph.\n\nMore text." + markdown
    cells = [new_markdown_cell(first), new_code_cell("frame = make()\nframe", outputs=list(outputs))]
    return new_notebook(cells=cells)


# -- a page from an executed notebook (no kernel) -------------------------------------------------


def test_a_page_shows_the_text_the_code_and_every_kind_of_output():
    html = (
        "<div><style>\n.dataframe > thead > tr { text-align: right; }\n</style>\n<small>shape: (1, 1)</small>"
        '<table border="1" class="dataframe"><thead><tr><th>rank</th></tr></thead>'
        "<tbody><tr><td>3</td></tr></tbody></table><script>alert(1)</script></div>"
    )
    png = PNG_MAGIC + bytes(100)
    outputs = [
        new_output("stream", name="stdout", text="45,475 rows\n"),
        new_output("stream", name="stdout", text="3 keywords\n"),
        new_output("stream", name="stderr", text="\x1b[31mUnknownFieldWarning: the service sent a field\x1b[0m\n"),
        new_output("execute_result", {"text/html": html, "text/plain": "shape: (1, 1)"}, execution_count=1),
        new_output(
            "display_data",
            {
                WIDGET_VIEW: {"model_id": "1"},
                "text/html": "<button>Redraw</button>",
                "text/plain": "RankExplorer controls",
            },
        ),
        new_output("display_data", {"image/png": base64.b64encode(png).decode(), "text/plain": "<Figure size 10x5>"}),
        new_output("display_data", {"image/png": base64.b64encode(png).decode(), "text/plain": "<Image object>"}),
        new_output("display_data", {"image/png": base64.b64encode(png).decode(), "text/plain": "5 apps · 1 keyword"}),
        new_output("execute_result", {"text/plain": "Plan(3 requests)"}, execution_count=2),
    ]
    example, text, images = notebooks.page(_small_notebook(*outputs), "small_one.ipynb")

    assert example == notebooks.Example(
        "small_one.ipynb", "small-one.md", "A small analysis", "What it shows, in one paragraph."
    )
    assert text.startswith("# A small analysis\n\n*This page is the notebook [small_one.ipynb](" + GITHUB)
    assert "What it shows, in one\nparagraph.\n\nMore text." in text
    assert _fences(text, "python") == ["frame = make()\nframe\n"]
    assert _fences(text, "text") == [
        "45,475 rows\n3 keywords\n",  # one block for the stream
        "UnknownFieldWarning: the service sent a field\n",  # standard error kept, its colours removed
        "RankExplorer controls\n",  # controls that need a kernel: the text they leave
        "Plan(3 requests)\n",
    ]
    assert "<style" not in text and "<script" not in text and "alert(1)" not in text and "<button" not in text
    assert "<table><thead><tr><th>rank</th></tr></thead><tbody><tr><td>3</td></tr></tbody></table>" in text
    assert IMAGE.findall(text) == [  # the section's title where the output only names its object
        ("A small analysis", "small-one-1.png"),
        ("A small analysis", "small-one-2.png"),
        ("5 apps · 1 keyword", "small-one-3.png"),
    ]
    assert images == {"small-one-1.png": png, "small-one-2.png": png, "small-one-3.png": png}
    order = [text.index(s) for s in ("frame = make()", "45,475", "Unknown", "<table>", "RankExplorer", "small-one-1")]
    assert order == sorted(order)  # in the order the cell showed them


def test_links_to_another_notebook_or_a_file_of_the_repository_resolve_in_the_site():
    markdown = (
        "\n\nSee [the tracker](tracking.ipynb#a-month-of-runs), [install](../README.md#install),"
        " [the service](../docs/service.md), [polars](https://pola.rs) and [below](#connect)."
        " ![a picture](https://example.com/a.png)"
    )
    _, text, _ = notebooks.page(_small_notebook(markdown=markdown), "small.ipynb")
    assert (
        "See [the tracker](tracking.md#a-month-of-runs),"
        " [install](https://github.com/storeframes/storeframes/blob/main/README.md#install),"
        " [the service](https://github.com/storeframes/storeframes/blob/main/docs/service.md),"
        " [polars](https://pola.rs) and [below](#connect). ![a picture](https://example.com/a.png)"
    ) in text
    with pytest.raises(notebooks.NotebookFailed, match=r"a link outside the repository in a notebook: '\.\./\.\./x'"):
        notebooks.page(_small_notebook(markdown="[x](../../x)"), "small.ipynb")


def test_a_page_refuses_what_it_cannot_show_or_must_never_show():
    pdf = new_output("display_data", {"application/pdf": "JVBERi0="})
    with pytest.raises(notebooks.NotebookFailed, match=r"small.ipynb: an output of \['application/pdf'\]"):
        notebooks.page(_small_notebook(pdf), "small.ipynb")
    key = new_output("stream", name="stdout", text=f"token {SANDBOX_KEY}\n")
    with pytest.raises(notebooks.NotebookFailed, match="the sandbox's key appears in its outputs") as raised:
        notebooks.page(_small_notebook(key), "small.ipynb")
    assert SANDBOX_KEY not in str(raised.value)
    untitled = new_notebook(cells=[new_markdown_cell("Some text, no title."), new_code_cell("1")])
    with pytest.raises(notebooks.NotebookFailed, match="its first cell must be markdown opening with a '# ' title"):
        notebooks.page(untitled, "small.ipynb")


def test_a_block_of_output_holding_backticks_keeps_them_inside():
    fence = new_output("stream", name="stdout", text="```python\nx = 1\n```\n")
    _, text, _ = notebooks.page(_small_notebook(fence), "small.ipynb")
    assert _fences(text, "text") == ["```python\nx = 1\n```\n"]


def test_the_index_lists_the_notebooks_from_one_apps_ranks_to_a_month_of_tracking_then_what_to_do_next():
    pages = [notebooks.page_name(path.name) for path in notebooks._discover(ROOT / "notebooks")]
    assert pages == [
        "rank-tracking.md",
        "conversion-analysis.md",
        "competitor-watch.md",
        "tracking.md",
        "keyword-opportunities.md",
    ]


# -- rendering: executing a notebook --------------------------------------------------------------


@pytest.mark.notebooks
def test_rendering_a_notebook_writes_its_page_with_its_code_and_its_charts(tmp_path, monkeypatch, capfd):
    """Rendered with a token in the environment: the kernel gets none, so the notebook runs on the sandbox."""
    monkeypatch.setenv("STOREFRAMES_API_KEY", "not-a-token")
    monkeypatch.setenv("STOREFRAMES_BASE_URL", "http://127.0.0.1:9/nothing-listens-here")
    monkeypatch.setenv("STOREFRAMES_OFFLINE", "1")
    source = ROOT / "notebooks" / "rank_tracking.ipynb"
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "stale.md").write_text("# left from an earlier build\n")

    written = notebooks.render(tmp_path, [source])

    assert capfd.readouterr() == ("", "")  # a good build prints nothing: the kernel's notices go to its log
    folder = tmp_path / "examples"
    assert written == [folder / "rank-tracking.md", folder / "index.md"]
    assert not (folder / "stale.md").exists()
    nb = nbformat.read(source, as_version=4)
    text = written[0].read_text()
    assert text.splitlines()[0] == nb.cells[0].source.splitlines()[0]  # the title: the notebook's heading
    assert _fences(text, "python") == [c.source.rstrip() + "\n" for c in nb.cells if c.cell_type == "code"]
    texts = _fences(text, "text")
    assert texts[0].startswith("storeframes: the sandbox (no STOREFRAMES_API_KEY set)")
    assert any(t.startswith("RankExplorer controls") for t in texts)  # the widget, as text
    assert any("credits spent" in t for t in texts)  # the credit meter, as text
    charts = IMAGE.findall(text)
    assert [name for _, name in charts] == ["rank-tracking-1.png", "rank-tracking-2.png"]  # the chart, the explorer's
    for alt, name in charts:
        png = (folder / name).read_bytes()
        assert alt and png.startswith(PNG_MAGIC) and len(png) > 10_000, name
    assert "<table>" in text and "<style" not in text and "<script" not in text
    shown = MarkdownIt("commonmark").render(text)  # the HTML results come through as HTML, not as text
    assert shown.count("<table>") == text.count("<table>") > 5 and "&lt;table" not in shown
    assert sorted(p.name for p in folder.iterdir()) == [
        "index.md",
        "rank-tracking-1.png",
        "rank-tracking-2.png",
        "rank-tracking.md",
    ]

    index = written[1].read_text()
    assert "## Rank tracking: an app and its competitors on a few keywords" in index
    assert f"[Read it here](rank-tracking.md) · [rank_tracking.ipynb on GitHub]({GITHUB}rank_tracking.ipynb)" in index


@pytest.mark.notebooks
def test_a_failing_cell_fails_the_render_naming_the_cell_and_the_error(tmp_path):
    nb = new_notebook(
        cells=[new_markdown_cell("# Tiny"), new_code_cell("x = 1"), new_code_cell("x / (x - 1)"), new_code_cell("x")],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    nbformat.write(nb, tmp_path / "tiny.ipynb")
    docs = tmp_path / "docs"
    (docs / "examples").mkdir(parents=True)
    (docs / "examples" / "tracking.md").write_text("# The last good build\n")

    expected = r"notebooks/tiny.ipynb: code cell 2 of 3 \('x / \(x - 1\)'\) failed: ZeroDivisionError: division by zero"
    with pytest.raises(notebooks.NotebookFailed, match=f"^{expected}$"):
        notebooks.render(docs, [tmp_path / "tiny.ipynb"])
    assert [p.name for p in (docs / "examples").iterdir()] == ["tracking.md"]  # no page for it, nothing removed


@pytest.mark.notebooks
def test_a_kernel_that_dies_fails_the_render_with_its_last_words(tmp_path):
    last_words = "import os\nos.write(2, b'out of memory, say\\n')\nos._exit(1)"
    nb = new_notebook(
        cells=[new_markdown_cell("# Tiny"), new_code_cell("x = 1"), new_code_cell(last_words)],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    nbformat.write(nb, tmp_path / "dying.ipynb")
    with pytest.raises(notebooks.NotebookFailed) as raised:
        notebooks.render(tmp_path / "docs", [tmp_path / "dying.ipynb"])
    message = str(raised.value)
    assert message.startswith("notebooks/dying.ipynb: code cell 2 of 2 (") and "os._exit(1)" in message
    assert "failed: DeadKernelError: Kernel died" in message
    assert "\nthe kernel's last lines:\n" in message and message.endswith("\nout of memory, say"), message
    assert not (tmp_path / "docs").exists()


@pytest.mark.slow
@pytest.mark.notebooks
def test_rendering_every_notebook_writes_each_page_and_the_index(tmp_path):
    written = notebooks.render(tmp_path)

    folder = tmp_path / "examples"
    sources = notebooks._discover(ROOT / "notebooks")
    assert written == [folder / notebooks.page_name(p.name) for p in sources] + [folder / "index.md"]
    index = written[-1].read_text()
    for source, page in zip(sources, written, strict=False):
        nb = nbformat.read(source, as_version=4)
        text = page.read_text()
        title = nb.cells[0].source.splitlines()[0]
        assert text.startswith(title + "\n") and f"#{title}\n" in index, source.name  # the index: one level down
        assert _fences(text, "python") == [c.source.rstrip() + "\n" for c in nb.cells if c.cell_type == "code"]
        charts = [name for _, name in IMAGE.findall(text)]
        assert charts, source.name
        assert all((folder / name).read_bytes().startswith(PNG_MAGIC) for name in charts)
        assert f"[Read it here]({page.name}) · [{source.name} on GitHub]({GITHUB}{source.name})" in index
    assert [line for line in index.splitlines() if line.startswith("## ")] == [
        "## Rank tracking: an app and its competitors on a few keywords",
        "## Conversion benchmarks: where does a category stand?",
        "## Competitor watch: what the competitors show, and what they changed",
        "## Tracking: a month of daily snapshots, kept by a tracker",
        "## Keyword opportunities: share of voice, what to work on, and what moved the ranks",
    ]
