"""The spend gate's rules and the capped tables an assistant reads, without the MCP SDK."""

from __future__ import annotations

from datetime import date

import polars as pl
import pytest

from storeframes.agent.gate import Gate
from storeframes.agent.tables import MOST_ROWS, show
from storeframes.errors import InvalidParameterError
from tests._extras import names_the_extra


@pytest.fixture
def client(sandbox):
    return sandbox


def test_a_cached_call_always_passes_and_a_dear_one_needs_confirm(client):
    gate = Gate(client, budget=1000, confirm_above=100)
    assert gate.judge(0, confirm=False).passed
    assert gate.judge(100, confirm=False).passed
    refused = gate.judge(101, confirm=False)
    assert not refused.passed and refused.confirmable
    assert "101 credits" in refused.reason and "confirm=true" in refused.reason
    assert gate.judge(101, confirm=True).passed


def test_the_session_and_the_month_budget_hold_whatever_confirm_says(client):
    gate = Gate(client, budget=50, confirm_above=0)
    verdict = gate.judge(51, confirm=True)
    assert not verdict.passed and not verdict.confirmable
    assert "50 are left of the session's budget of 50 credits" in verdict.reason
    month = Gate(client, budget=None, confirm_above=0, month=lambda: (9_900, 10_000))
    assert month.left() == (100, "the tracker's month budget (9,900 of 10,000 spent)")
    assert not month.judge(101, confirm=True).passed
    assert month.judge(100, confirm=True).passed
    assert Gate(client, budget=None, confirm_above=0).left() == (None, "no budget")


def test_the_client_budget_is_held_at_what_is_left_while_a_call_runs(client):
    client.budget = 5_000
    gate = Gate(client, budget=300, confirm_above=0, month=lambda: (0, 200))
    with gate.holding():
        assert client.budget == client.spent + 200
        client.metadata_frame(["3233849169"])
    assert client.budget == 5_000
    assert gate.spent == client.spent == 11


def test_a_table_is_capped_with_its_count_and_the_columns_left_out():
    frame = pl.DataFrame({f"c{i}": list(range(500)) for i in range(15)}).with_columns(
        day=pl.lit(date(2026, 11, 20)), text=pl.lit("x" * 200), country=pl.lit("us")
    )
    shown = show(frame, title="t", limit=3, hint="add a filter")
    assert shown.data["total_rows"] == 500 and shown.data["shown_rows"] == 3
    assert len(shown.data["columns"]) == 12 and "country" in shown.data["columns_left_out"]
    assert "497 more rows not shown; add a filter" in shown.text
    chosen = show(frame, title="t", columns=["day", "text"], limit=1)
    assert chosen.data["rows"] == [{"day": "2026-11-20", "text": "x" * 200}]  # whole in the JSON
    assert "x" * 79 + "…" in chosen.text and "x" * 81 not in chosen.text  # cut in the text
    assert show(frame, title="t", limit=10_000).data["shown_rows"] == MOST_ROWS
    with pytest.raises(InvalidParameterError, match="columns of this result"):
        show(frame, title="t", columns=["nope"])


def test_the_command_says_which_extra_is_missing(monkeypatch, capsys):
    import sys

    from storeframes.cli import main

    monkeypatch.setitem(sys.modules, "mcp", None)  # as if the mcp extra were not installed
    assert main(["mcp", "--sandbox"]) == 2
    assert names_the_extra(capsys.readouterr().err, "mcp")
