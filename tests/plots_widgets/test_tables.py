"""storeframes.widgets.table: polars' own table, every date on one line, nothing else changed."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

import polars as pl
import pytest

import storeframes as sf
from storeframes.widgets import Table, table
from storeframes.widgets.tables import NOWRAP

FRAME = pl.DataFrame(
    {
        "title": ["Photo Editor Plus", "<b>Maps</b>"],
        "date": [date(2026, 11, 18), None],
        "seen": [datetime(2026, 11, 18, 6, 30, tzinfo=UTC), datetime(2026, 11, 19, tzinfo=UTC)],
        "as_text": ["2026-10-22", "version 2026-10"],
        "rank": [3, 12],
    }
)
CELL = re.compile(r"<td([^>]*)>(.*?)</td>", re.DOTALL)


def _cells(html: str) -> list[tuple[bool, str]]:
    """(kept on one line, text) of every body cell, row by row."""
    body = html.split("<tbody>", 1)[1]
    return [("nowrap" in attrs, text) for attrs, text in CELL.findall(body)]


def test_the_dates_cells_keep_to_one_line_and_the_others_wrap_as_polars_draws_them():
    html = table(FRAME)._repr_html_()
    assert _cells(html) == [
        (False, "&quot;Photo Editor Plus&quot;"),
        (True, "2026-11-18"),
        (True, "2026-11-18 06:30:00 UTC"),
        (True, "&quot;2026-10-22&quot;"),  # a date as text: kept whole too
        (False, "3"),
        (False, "&quot;&lt;b&gt;Maps&lt;/b&gt;&quot;"),  # escaped, as polars escapes it
        (True, "null"),  # a date column's empty day: one word
        (True, "2026-11-19 00:00:00 UTC"),
        (False, "&quot;version 2026-10&quot;"),  # not a date
        (False, "12"),
    ]
    # nothing else changed: without the attribute, it is polars' own table
    assert html.replace(NOWRAP, "") == FRAME._repr_html_()


def test_polars_settings_hold_when_the_table_is_shown():
    eleven = pl.DataFrame({"day": [date(2026, 11, n) for n in range(1, 12)]})
    shown = table(eleven)
    assert shown._repr_html_().count("&hellip;") == 1  # 10 of 11 rows, as polars shows them
    with pl.Config(tbl_rows=11):
        html = shown._repr_html_()
    assert "&hellip;" not in html and html.count(f"<td{NOWRAP}>2026-11-") == 11


def test_a_table_reads_as_its_frame_and_takes_a_pandas_frame():
    shown = table(FRAME.to_pandas())
    assert isinstance(shown, Table) and shown.frame.columns == FRAME.columns
    assert repr(table(FRAME)) == repr(FRAME)
    with pytest.raises(sf.InvalidParameterError, match="frame"):
        table([1, 2, 3])
