"""Two lists under one name, told apart: a tracker following a keyword both live (``search``) and with ads
(``search_ads``) keeps two rank lists a day, and sf.scan, sf.snapshots, sf.sql and the lake's ``search`` and
``search_snapshots`` tables (read back by deltalake and by polars) say which list each row is of; the readers
of ranks pick the organic list."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import polars as pl
import pytest

import storeframes as sf
from storeframes.cache import Cache
from storeframes.kept.search_ranks import kept_ranks
from storeframes.lake import merge_keys
from storeframes.lake.read import SCANS_DELTA
from storeframes.sandbox import World
from storeframes.schemas import SEARCH_LIST, read_schema
from storeframes.track import Tracker

pytest.importorskip("deltalake")

WORLD = World(0)
KEYWORD = WORLD.EXAMPLE_KEYWORDS[0]
DAY = date(2026, 11, 2)
DAYS = [DAY, DAY + timedelta(days=1)]
PLACE = ["snapshot_date", "keyword", "country", "language", "device"]


def _tracked(tmp_path: Path) -> Path:
    """Two days of a tracker following one keyword live and with ads, published with snapshots; its folder."""
    spec = tmp_path / "tracking.toml"
    spec.write_text(f"""[tracker]
name = "both"
cache_dir = "cache"

[[track]]
endpoint = "search"
keywords = ["{KEYWORD}"]

[[track]]
endpoint = "search_ads"
keywords = ["{KEYWORD}"]

[publish]
lake = "lake"
tables = ["search"]
snapshots = true
""")
    tracker = Tracker.from_toml(spec, sandbox=True)
    for day in DAYS:
        result = tracker.run(day)
        assert (result.status, result.errors) == ("ok", [])
    return tmp_path


def _one_rank_a_place(frame: pl.DataFrame, by: list[str]) -> bool:
    return frame.group_by([*by, "rank"]).len()["len"].max() == 1


def test_a_keyword_followed_live_and_with_ads_has_two_lists_told_apart(tmp_path):
    folder = _tracked(tmp_path)
    snaps = sf.snapshots("search", folder / "cache").collect()
    assert snaps.schema[SEARCH_LIST.name] == pl.String and snaps.columns[-1] == "list"
    assert snaps.drop("snapshot_date").schema == read_schema(sf.schemas.SEARCH).schema
    counts = snaps.group_by("snapshot_date", "list").len().sort("snapshot_date", "list")
    assert counts["list"].to_list() == ["organic", "with_ads"] * len(DAYS)
    ads = snaps.filter(pl.col("list") == "with_ads")
    assert ads["is_ad"].any() and not snaps.filter(pl.col("list") == "organic")["is_ad"].any()
    assert not _one_rank_a_place(snaps, PLACE)  # without the list, a place has two apps a day
    assert _one_rank_a_place(snaps, [*PLACE, "list"])  # within a list, rank means one thing
    only_ads = sf.snapshots("search_ads", folder / "cache").collect()
    assert only_ads["list"].unique().to_list() == ["with_ads"] and only_ads.height == ads.height
    newest = sf.scan("search", folder / "cache").collect()
    assert sorted(newest["list"].unique().to_list()) == ["organic", "with_ads"]
    by_sql = sf.sql("SELECT list, count(*) AS n FROM search_snapshots GROUP BY list ORDER BY list", folder / "cache")
    assert by_sql.rows() == [("organic", snaps.height - ads.height), ("with_ads", ads.height)]


def _by_polars(uri: str) -> pl.DataFrame:
    """The Delta table at ``uri`` as polars reads it (polars 1.30 cannot read deltalake 1's tables itself: through
    their pyarrow dataset there)."""
    import deltalake

    if SCANS_DELTA:
        return pl.read_delta(uri)
    return pl.scan_pyarrow_dataset(deltalake.DeltaTable(uri).to_pyarrow_dataset()).collect()


def test_the_lakes_search_tables_keep_the_list_read_by_deltalake_and_polars(tmp_path):
    import deltalake

    folder = _tracked(tmp_path)
    expected = sf.snapshots("search", folder / "cache").collect()
    uri = str(folder / "lake" / "search_snapshots")
    by_deltalake = pl.from_arrow(deltalake.DeltaTable(uri).to_pyarrow_table())
    by_polars = _by_polars(uri)
    for read in (by_deltalake, by_polars):
        assert isinstance(read, pl.DataFrame) and read.schema["list"] == pl.String
        assert read.height == expected.height
        got = read.group_by("snapshot_date", "list").len().sort("snapshot_date", "list")
        assert got.equals(expected.group_by("snapshot_date", "list").len().sort("snapshot_date", "list"))
        assert _one_rank_a_place(read, [*PLACE, "list"]) and not _one_rank_a_place(read, PLACE)
    current = _by_polars(str(folder / "lake" / "search"))
    assert sorted(current["list"].unique().to_list()) == ["organic", "with_ads"]
    assert current.drop("_cell", "_answer", "_row").schema == read_schema(sf.schemas.SEARCH).schema
    assert merge_keys()["search"] == {"cell": ["keyword", "list"], "scope": ["country", "language", "device"]}


def test_the_readers_of_ranks_pick_the_organic_list(tmp_path):
    folder = _tracked(tmp_path)
    cache = Cache(folder / "cache")
    service = cache.entries("search")[0].service
    snaps = sf.snapshots("search", cache).collect()
    organic = snaps.filter(pl.col("list") == "organic")
    ranks, live = kept_ranks(cache, service, DAYS[0], DAYS[-1], live=None, history=None)
    assert live == {(KEYWORD.lower(), "us")}
    assert ranks.group_by("keyword", "country", "date", "app_id").len()["len"].max() == 1  # one rank a day
    mine = ranks.sort("date", "rank").select("date", "rank", "app_id")
    theirs = organic.sort("snapshot_date", "rank").select(date="snapshot_date", rank="rank", app_id="app_id")
    assert mine.equals(theirs)
    app = organic.filter(pl.col("rank") == 3)["app_id"][0]
    history = sf.rank_history(snaps, [app])  # the organic list's places and results, not both lists'
    per_day = organic.group_by("snapshot_date").len().sort("snapshot_date")["len"].to_list()
    assert history.sort("date").select("rank", "results").rows() == [(3, n) for n in per_day]
    # a keyword followed with ads alone: that list's organic places
    only_ads = snaps.filter(pl.col("list") == "with_ads")
    placed = only_ads.filter(pl.col("app_id") == app).sort("snapshot_date")["organic_rank"].to_list()
    assert sf.rank_history(only_ads, [app]).sort("date")["rank"].to_list() == placed
