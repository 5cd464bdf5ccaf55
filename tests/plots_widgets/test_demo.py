"""``storeframes demo``: the analysis a user runs first, its files, its summary and its credits."""

from __future__ import annotations

import re
import sys
from datetime import timedelta

import polars as pl
import pytest

import storeframes as sf
from storeframes import schemas
from storeframes.analysis import MOVERS, category_standing, changes_before, movers
from storeframes.cli import main
from storeframes.cli.demo import DEMO_KEYWORDS, DEMO_TODAY, run_demo
from storeframes.sandbox import SANDBOX_KEY

TABLES = {
    "search_history": schemas.SEARCH_HISTORY,
    "ranks": schemas.RANK_HISTORY,
    "metadata": schemas.METADATA,
    "changes": schemas.CHANGES,
    "benchmarks": schemas.BENCHMARKS,
}
CHARTS = ("ranks.png", "changes.png", "benchmarks.png")


@pytest.fixture(scope="module")
def expected():
    """The frames of the demo's analysis, fetched directly from a fresh sandbox."""
    end = DEMO_TODAY - timedelta(days=2)
    start = end - timedelta(days=89)
    with sf.sandbox.client(today=DEMO_TODAY, cache_dir=False, progress=False) as client:
        app = client.sandbox_service.world.EXAMPLE_IOS_APPS[0]
        history = client.search_history_frame(list(DEMO_KEYWORDS), start=start, end=end)
        yield {"app": app, "start": start, "end": end, "history": history}


def _summary(out: str) -> tuple[int, int, int]:
    match = re.search(r"Summary: (\d+) requests sent, ([\d,]+) credits spent, ([\d,]+) saved by the cache", out)
    assert match, out
    return tuple(int(g.replace(",", "")) for g in match.groups())  # type: ignore[return-value]


def test_demo_writes_tables_and_charts_and_a_second_run_is_free(tmp_path, capsys, expected, fresh_default):
    out_dir = tmp_path / "demo"
    assert main(["demo", "--out", str(out_dir)]) == 0
    first = capsys.readouterr().out
    assert first.startswith("storeframes: the sandbox")
    for heading in ("1. Rank tracking: 3 keywords on us/iphone", "2. Changes:", "3. Conversion:", "Biggest movers"):
        assert heading in first
    sent, spent, saved = _summary(first)
    assert sent == 8 and spent > 3 * 1001 and saved == 0  # 3 histories, 1 metadata, 1 changes, 3 benchmarks
    assert SANDBOX_KEY not in first

    tables = {name: pl.read_parquet(out_dir / f"{name}.parquet") for name in TABLES}
    for name, table in tables.items():
        assert table.schema == TABLES[name].schema, name
        assert f"│ {name} " in first and re.search(rf"│ {name}\s+┆ {table.height}\s+│", first), name
    history = tables["search_history"]
    assert history.drop("fetched_at").equals(expected["history"].drop("fetched_at"))
    apps = tables["ranks"]["app_id"].unique(maintain_order=True).to_list()
    assert apps[0] == expected["app"] and len(apps) == 5
    assert tables["ranks"].equals(sf.rank_history(history, apps))
    assert tables["ranks"]["date"].min() == expected["start"] and tables["ranks"]["date"].max() == expected["end"]
    assert tables["metadata"]["app_id"].to_list() == apps
    assert set(tables["changes"]["app_id"]) <= set(apps) and tables["changes"].height > 0
    assert sorted(tables["benchmarks"]["channel"].unique()) == ["all", "browse", "search"]
    for chart in CHARTS:
        data = (out_dir / chart).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000, chart
    assert "Photo & Video" in first  # the app's category, placed among the benchmarks
    _check_tables_as_printed(first, tables)

    assert main(["demo", "--out", str(out_dir)]) == 0
    second = capsys.readouterr().out
    assert _summary(second) == (0, 0, spent)
    assert "Everything came from the cache" in second
    for name in TABLES:
        assert pl.read_parquet(out_dir / f"{name}.parquet").equals(tables[name]), name


def _rows(out: str, header: str) -> list[list[str]]:
    """The cells of the rows of the printed table whose header line holds ``header``."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if header in line)
    rows = []
    for line in lines[start + 2 :]:
        if not line.strip().startswith("│"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("│").split("┆")])
    return rows


def _check_tables_as_printed(out: str, tables: dict[str, pl.DataFrame]) -> None:
    """The biggest movers and the category's standing are those of storeframes.analysis, printed whole."""
    assert "…" not in out  # no text cut short, no row hidden
    assert "places_gained" not in out
    moved = movers(tables["ranks"], top=5, within=10)
    titles = dict(tables["metadata"].select("app_id", "title").iter_rows())
    first, last = moved.row(0, named=True)["start_date"], moved.row(0, named=True)["end_date"]
    assert f"Biggest movers in the first 10 places (at the start or at the end): rank on {first} and on {last};" in out
    assert "change = places moved up (negative: down); move = up, down, entered or left the results;" in out
    before = changes_before(moved, tables["changes"].filter(pl.col("target") != "size"), days=30)
    assert "places_moved = the size of the move, biggest first" in out
    printed = _rows(out, "┆ start_rank ┆ end_rank ┆ change ┆ move ┆ places_moved ┆ changes ┆ what_changed")
    assert printed == [
        [r["keyword"], titles[r["app_id"]], str(r["start_rank"]), str(r["end_rank"]), str(r["change"]), r["move"],
         str(r["places_moved"]), str(r["changes"]), r["what_changed"] or "-"]
        for r in before.iter_rows(named=True)
    ]  # fmt: skip
    sizes = [int(row[6]) for row in printed]
    assert sizes == sorted(sizes, reverse=True) and all(size > 0 for size in sizes)  # what the rows are sorted by
    assert len(printed) == 5 and all(row[5] in ("up", "down", "entered", "left") for row in printed)
    # near the top: the moves deep in the list (collage maker, 44th to 92nd) give way to those in the first places
    assert all(min(int(row[2]), int(row[3])) <= 10 for row in printed if row[5] in ("up", "down"))
    category = tables["metadata"]["categories"][0][0]
    standing = category_standing(tables["benchmarks"], category)
    printed = _rows(out, "┆ page_views_to_installs ┆ place ┆ out_of ┆ median")
    assert [row[0] for row in printed] == ["all", "search", "browse"]
    assert [(int(row[3]), int(row[4])) for row in printed] == standing.select("place", "out_of").rows()
    standing_rows = _rows(out, "┆ days_ranked ┆ days_recorded ┆ median_rank ┆ best_rank")
    assert len(standing_rows) == 15 and {row[0] for row in standing_rows} == set(DEMO_KEYWORDS)


def test_demo_says_when_a_keyword_has_no_recorded_day(tmp_path, capsys, fresh_default):
    untracked = sf.sandbox.World(0).UNTRACKED_KEYWORD
    result = run_demo(tmp_path, keywords=[untracked, "photo editor"], days=20)
    out = capsys.readouterr().out
    end = DEMO_TODAY - timedelta(days=2)
    start = end - timedelta(days=19)
    assert f"Note: {untracked!r}: no day recorded from {start} to {end} (the service does not track it)" in out
    assert "and the 4 apps ranking best for 'photo editor'" in out  # competitors from a keyword with data
    ranks = result.tables["ranks"]
    assert ranks.filter(pl.col("keyword") == untracked)["status"].unique().to_list() == ["no_data"]
    assert ranks["app_id"].n_unique() == 5
    assert f"from {start} to {end - timedelta(days=1)} (size changes left out)" in out  # within the range fetched


def test_demo_says_when_no_app_moved_in_the_first_places(tmp_path, capsys, monkeypatch, fresh_default):
    from storeframes.cli import demo

    asked = []
    monkeypatch.setattr(demo, "movers", lambda ranks, **kwargs: asked.append(kwargs) or MOVERS.empty())
    run_demo(tmp_path, keywords=["photo editor"], days=20)
    out = capsys.readouterr().out
    assert asked == [{"top": 5, "within": 10}]
    assert "   Biggest movers: none of these apps moved in the first 10 places\n" in out
    assert "changes and what_changed" not in out


def test_demo_follows_another_app_and_keyword(tmp_path, capsys, fresh_default):
    world = sf.sandbox.World(0)
    result = run_demo(tmp_path, app=world.EXAMPLE_IOS_APPS[3], keywords=["meditation"], days=30)
    out = capsys.readouterr().out
    assert "1. Rank tracking: 1 keyword on us/iphone" in out
    ranks = result.tables["ranks"]
    assert ranks["keyword"].unique().to_list() == ["meditation"] and ranks["date"].n_unique() == 30
    assert ranks["app_id"][0] == world.EXAMPLE_IOS_APPS[3]
    assert result.spent > 0 and result.requests == 1 + 1 + 1 + 3  # one keyword: 1 history request
    assert {p.name for p in result.files} >= {"ranks.png", "ranks.parquet"}


def test_demo_live_without_a_token_stops_before_any_request(tmp_path, capsys, monkeypatch, fresh_default):
    monkeypatch.delenv("STOREFRAMES_API_KEY", raising=False)
    monkeypatch.delenv("STOREFRAMES_BASE_URL", raising=False)
    assert main(["demo", "--live", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "ConfigurationError" in err and "STOREFRAMES_API_KEY" in err
    assert not (tmp_path / "cache").exists()


def test_demo_on_the_sandbox_ignores_a_token_in_the_environment(tmp_path, capsys, monkeypatch, fresh_default):
    secret = "sk-live-0123456789abcdef"
    monkeypatch.setenv("STOREFRAMES_API_KEY", secret)
    monkeypatch.setenv("STOREFRAMES_BASE_URL", "https://api.example.com/api/public/store")
    result = run_demo(tmp_path, keywords=["photo editor"], days=20)
    out = capsys.readouterr().out
    assert out.startswith("storeframes: the sandbox") and secret not in out
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    assert result.spent > 0


def test_demo_without_matplotlib_writes_the_tables_and_says_why(tmp_path, capsys, monkeypatch, fresh_default):
    monkeypatch.setitem(sys.modules, "storeframes.plots", None)  # as if matplotlib were not installed
    monkeypatch.delattr(sf, "plots", raising=False)
    result = run_demo(tmp_path, keywords=["photo editor"], days=20)
    out = capsys.readouterr().out
    assert "charts skipped: matplotlib is missing" in out
    assert not list(tmp_path.glob("*.png")) and (tmp_path / "ranks.parquet").is_file()
    assert len(result.tables) == 5
