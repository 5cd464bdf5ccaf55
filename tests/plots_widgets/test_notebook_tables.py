"""The tables an example notebook shows: every row of the frame, every string whole, no wider than its cell.

Polars shows at most 10 rows of a frame in a notebook (an 11-row frame reads as 5 rows, a row
of "…" and 5 more) and cuts strings over 30 characters. A table meant to be read whole says so
(``pl.Config(tbl_rows=...)`` around its ``display``). Here a notebook's code cells run in an
IPython shell on the sandbox (nothing is written back to the notebook), and every table a reader
would see (a cell's last value, or a ``display``) is read from the HTML the notebook shows: its
rows against its shape, and its width as polars draws it in text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from html.parser import HTMLParser

import matplotlib.pyplot as plt
import nbformat
import polars as pl
import pytest

from storeframes.widgets import Table as FrameTable
from tests._ipython import ipython_shell
from tests.conftest import ROOT

WIDTH = 100
"""The most characters a table may take, drawn as polars draws it in text (``│ a ┆ b │``): a notebook cell's width."""

SHAPE = re.compile(r"shape: \((\d+), (\d+)\)")


@dataclass
class Table:
    """One polars table as the notebook shows it: its shape, and the text of its header and body cells."""

    rows: int
    columns: int
    head: list[list[str]] = field(default_factory=list)
    body: list[list[str]] = field(default_factory=list)

    def width(self) -> int:
        """Characters of the table drawn in text: the widest text of each column, and 3 around each."""
        lines = [*self.head, *self.body]
        widest = [max(len(line[n]) for line in lines) for n in range(self.columns)]
        return sum(widest) + 3 * self.columns + 1

    def problems(self) -> list[str]:
        """What a reader would miss: rows not shown, strings cut, a table wider than its cell."""
        found = []
        shown = [line for line in self.body if set(line) != {"…"}]
        if len(shown) < self.rows:
            found.append(f"shows {len(shown)} of {self.rows} rows")
        cut = sorted({text for line in self.body for text in line if text.endswith("…") and text != "…"})
        if cut:
            found.append(f"cuts strings: {cut[:3]}")
        if self.width() > WIDTH:
            found.append(f"{self.width()} characters wide, over {WIDTH}: columns {self.head[0]}")
        return found


class _Reader(HTMLParser):
    """The tables of polars' HTML (``<small>shape: (r, c)</small><table>...``)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[Table] = []
        self._part: list[list[str]] | None = None
        self._cell: list[str] | None = None
        self._text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        table = self.tables[-1] if self.tables else None
        if tag in ("thead", "tbody") and table is not None:
            self._part = table.head if tag == "thead" else table.body
        elif tag == "tr" and self._part is not None:
            self._part.append([])
        elif tag in ("td", "th") and self._part is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._part is not None:
            self._part[-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag in ("thead", "tbody"):
            self._part = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
            return
        shape = SHAPE.search(data)
        if shape:
            self.tables.append(Table(int(shape[1]), int(shape[2])))


def tables(html: str) -> list[Table]:
    """The polars tables in a notebook output's HTML."""
    reader = _Reader()
    reader.feed(html)
    return reader.tables


def _html(frame: pl.DataFrame) -> str:
    return frame._repr_html_()


def test_the_check_finds_a_table_cut_short_a_string_cut_and_a_table_too_wide():
    eleven = pl.DataFrame({"day": list(range(11)), "title": [f"app {n}" for n in range(11)]})
    (table,) = tables(_html(eleven))
    assert (table.rows, table.columns, len(table.body)) == (11, 2, 11)  # 10 rows and a row of "…"
    assert table.problems() == ["shows 10 of 11 rows"]
    with pl.Config(tbl_rows=11):
        (table,) = tables(_html(eleven))
    assert table.problems() == [] and table.body[10] == ["10", '"app 10"']
    (table,) = tables(_html(pl.DataFrame({"title": ["a title of forty characters, or so it is"]})))
    assert table.problems() == ["cuts strings: ['\"a title of forty characters, o…']"]
    wide = pl.DataFrame({f"impressions_to_page_views_{n}": [1.5] for n in range(4)})
    (table,) = tables(_html(wide))
    assert table.width() == 4 * 27 + 4 * 3 + 1
    assert table.problems() == [f"121 characters wide, over {WIDTH}: columns {wide.columns}"]
    (table,) = tables(_html(wide.select(pl.all().name.map(lambda name: name[-3:]))))
    assert table.problems() == [] and table.width() == 4 * 3 + 4 * 3 + 1  # "f64" and "1.5" are 3 wide too


def _run(name: str, tmp_path, monkeypatch) -> list[tuple[str, Table]]:
    """Run a notebook's code cells in an IPython shell in ``tmp_path``; the tables it shows, by cell."""
    return [(line, table) for line, html in _shown(name, tmp_path, monkeypatch) for table in tables(html)]


def _shown(name: str, tmp_path, monkeypatch) -> list[tuple[str, str]]:
    """Run a notebook's code cells in an IPython shell in ``tmp_path``; the HTML each shows (with the cell's
    last line)."""
    from IPython import get_ipython

    for variable in ("STOREFRAMES_API_KEY", "STOREFRAMES_BASE_URL", "STOREFRAMES_OFFLINE", "STOREFRAMES_CACHE_DIR"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("STOREFRAMES_PROGRESS", "0")
    monkeypatch.chdir(tmp_path)
    nb = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    shown: list[tuple[str, str]] = []
    with ipython_shell(tmp_path, monkeypatch) as captured:
        shell = get_ipython()
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            before = len(captured.outputs)
            result = shell.run_cell(cell.source)
            result.raise_error()
            htmls = [out.data.get("text/html", "") for out in captured.outputs[before:]]
            if isinstance(result.result, pl.DataFrame):  # shown once the cell has ended: polars' settings then
                htmls.append(_html(result.result))
            elif isinstance(result.result, FrameTable):  # a table whose dates never wrap: its own HTML
                htmls.append(result.result._repr_html_())
            elif hasattr(result.result, "close") and not isinstance(result.result, plt.Figure):
                result.result.close()  # an explorer's widgets
            shown.extend((cell.source.splitlines()[-1], html) for html in htmls)
            plt.close("all")
    return shown


@pytest.mark.notebooks
def test_conversion_analysis_shows_every_table_whole_and_within_its_cell(tmp_path, monkeypatch, fresh_default):
    shown = _run("conversion_analysis.ipynb", tmp_path, monkeypatch)
    assert len(shown) >= 4
    over_100 = [table for line, table in shown if "over_100" in line or "> 100" in line]
    assert [table.rows for table in over_100] == [11]  # the sandbox's rates over 100 %: all 11 shown
    assert [f"{line}: {problem}" for line, table in shown for problem in table.problems()] == []


DATE = re.compile(r"^(&quot;|\")?\d{4}-\d{2}-\d{2}(&quot;|\")?$")
CELL = re.compile(r"<td([^>]*)>(.*?)</td>", re.DOTALL)


def _wrapping_dates(html: str) -> list[str]:
    """The dates of a table's cells that may break across two lines (no ``white-space:nowrap`` on their cell)."""
    return [text for attrs, text in CELL.findall(html) if DATE.match(text.strip()) and "nowrap" not in attrs]


def test_the_check_finds_a_date_that_may_wrap():
    frame = pl.DataFrame({"date": [date(2026, 11, 18)], "title": ["a title long enough to squeeze the date"]})
    assert _wrapping_dates(_html(frame)) == ["2026-11-18"]
    assert _wrapping_dates(FrameTable(frame)._repr_html_()) == []


@pytest.mark.notebooks
def test_competitor_watch_keeps_every_date_of_its_tables_on_one_line(tmp_path, monkeypatch, fresh_default):
    shown = _shown("competitor_watch.ipynb", tmp_path, monkeypatch)
    assert len([line for line, html in shown if tables(html)]) >= 6  # side by side, cadence, shots, labels ...
    assert [(line, text) for line, html in shown for text in _wrapping_dates(html)] == []
    dates = [text for _, html in shown for attrs, text in CELL.findall(html) if DATE.match(text.strip())]
    assert len(dates) >= 20  # the release dates, the changes' days: each one kept whole
    side_by_side = next(html for line, html in shown if "transpose" in line)
    assert ">&quot;Free&quot;<" in side_by_side and ">&quot;$0.99&quot;<" in side_by_side  # a price, as read
