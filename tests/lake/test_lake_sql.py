"""sf.sql: DuckDB over the views of a cache (tables, snapshots, ledger, runs, events), offline. The three
queries the README shows answer what the same questions asked of sf.scan in polars answer; only the
tables a query names are read; a query that writes, or names a table the cache has not, is refused
before anything is read; a team's bucket (moto's S3 on loopback) is read the same way, keys unshown."""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import storeframes as sf
from storeframes.cache import EVENT_SCHEMA, RUN_SCHEMA
from storeframes.kept.snapshots import SNAPSHOT_TABLES
from storeframes.kept.tables import TABLES
from storeframes.lake.sql import VIEWS
from storeframes.sandbox import World
from tests._extras import names_the_extra
from tests._secrets import exposures
from tests.conftest import SANDBOX_TODAY, sandbox_client_on

pytest.importorskip("duckdb")

WORLD = World(0)
APPS = list(WORLD.EXAMPLE_IOS_APPS[:4])
KEYWORD = WORLD.EXAMPLE_KEYWORDS[0]
EARLIER = SANDBOX_TODAY - timedelta(days=7)

MOVERS = """
WITH span AS (
    SELECT keyword, country, device, min(date) AS first_day, max(date) AS last_day
    FROM search_history
    GROUP BY keyword, country, device
),
moves AS (
    SELECT a.keyword, a.app_id, s.first_day, s.last_day,
           a.rank AS rank_before, b.rank AS rank_after, a.rank - b.rank AS gained
    FROM span s
    JOIN search_history a USING (keyword, country, device)
    JOIN search_history b USING (keyword, country, device, app_id)
    WHERE a.date = s.first_day AND b.date = s.last_day
)
SELECT m.keyword, m.app_id, m.rank_before, m.rank_after, m.gained,
       c.date AS title_changed, c.old_value AS old_title, c.new_value AS new_title
FROM moves m
LEFT JOIN changes c
    ON c.app_id = m.app_id AND c.target = 'title' AND c.date BETWEEN m.first_day AND m.last_day
WHERE m.gained > 0
ORDER BY m.gained DESC, m.app_id, title_changed
"""

CREDITS = """
SELECT endpoint,
       count(*) FILTER (WHERE NOT from_cache) AS requests,
       sum(cost)::BIGINT AS credits,
       sum(saved)::BIGINT AS saved
FROM ledger
GROUP BY endpoint
ORDER BY credits DESC, endpoint
"""

RATED = """
SELECT app_id, title, rating_average, fetched_at
FROM metadata
WHERE rating_average >= 4.5
ORDER BY rating_average DESC, app_id
"""


def _fill(folder, **options) -> None:
    """Metadata a week apart (asked twice the second day: once from the cache), a keyword's month of ranks,
    and the change history of every app ranked."""
    with sandbox_client_on(EARLIER, folder, **options) as client:
        client.metadata_frame(APPS)
    with sandbox_client_on(SANDBOX_TODAY, folder, **options) as client:
        client.metadata_frame(APPS)
        client.metadata_frame(APPS)
        ranked = client.search_history_frame(KEYWORD, days=30)["app_id"].unique().sort().to_list()
        client.changes_frame(ranked, days=30)


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("sql-cache")
    _fill(path)
    return path


@pytest.fixture(autouse=True)
def _no_token(monkeypatch):
    monkeypatch.delenv("STOREFRAMES_API_KEY", raising=False)  # read with no token anywhere


def _movers(folder, **options) -> pl.DataFrame:
    """The question of MOVERS, asked of sf.scan in polars."""
    history = sf.scan("search_history", folder, **options).collect()
    place = ["keyword", "country", "device"]
    span = history.group_by(place).agg(first_day=pl.col("date").min(), last_day=pl.col("date").max())
    on_day = history.join(span, on=place)
    before = on_day.filter(pl.col("date") == pl.col("first_day")).select(
        *place, "app_id", "first_day", "last_day", rank_before="rank"
    )
    after = on_day.filter(pl.col("date") == pl.col("last_day")).select(*place, "app_id", rank_after="rank")
    moves = before.join(after, on=[*place, "app_id"]).with_columns(gained=pl.col("rank_before") - pl.col("rank_after"))
    titles = (
        sf.scan("changes", folder, **options)
        .filter(pl.col("target") == "title")
        .select("app_id", title_changed="date", old_title="old_value", new_title="new_value")
        .collect()
    )
    move = [*place, "app_id"]
    changed = moves.join(titles, on="app_id").filter(
        pl.col("title_changed").is_between(pl.col("first_day"), pl.col("last_day"))
    )
    within = pl.concat([changed, moves.join(changed.select(move), on=move, how="anti")], how="diagonal")
    return (
        within.filter(pl.col("gained") > 0)
        .select("keyword", "app_id", "rank_before", "rank_after", "gained", "title_changed", "old_title", "new_title")
        .sort(["gained", "app_id", "title_changed"], descending=[True, False, False], nulls_last=True)
    )


def test_the_apps_that_gained_most_places_with_their_title_changes_in_one_query(folder):
    got = sf.sql(MOVERS, folder)

    expected = _movers(folder)
    assert_frame_equal(got, expected)
    assert got.schema == pl.Schema(
        {
            "keyword": pl.String,
            "app_id": pl.String,
            "rank_before": pl.Int64,
            "rank_after": pl.Int64,
            "gained": pl.Int64,
            "title_changed": pl.Date,
            "old_title": pl.String,
            "new_title": pl.String,
        }
    )
    assert got.height > 10 and (got["gained"] > 0).all() and got["keyword"].unique().to_list() == [KEYWORD]
    renamed = got.filter(pl.col("new_title").is_not_null())
    assert renamed.height >= 1  # a mover whose title changed meanwhile: its change beside its move
    assert (renamed["old_title"] != renamed["new_title"]).all()


def test_the_credits_spent_per_endpoint_are_the_ledgers(folder):
    got = sf.sql(CREDITS, folder)

    ledger = sf.Cache(folder).ledger.read()
    expected = (
        ledger.group_by("endpoint")
        .agg(
            requests=(~pl.col("from_cache")).sum().cast(pl.Int64),
            credits=pl.col("cost").sum(),
            saved=pl.col("saved").sum(),
        )
        .sort(["credits", "endpoint"], descending=[True, False])
    )
    assert_frame_equal(got, expected)
    assert got.schema == pl.Schema(
        {"endpoint": pl.String, "requests": pl.Int64, "credits": pl.Int64, "saved": pl.Int64}
    )
    assert got["endpoint"].to_list() == ["changes", "search_history", "metadata"]
    assert got["credits"].sum() == ledger["cost"].sum() > 0
    metadata = got.row(2, named=True)
    assert metadata["requests"] == 2 and metadata["saved"] > 0  # asked twice on the second day: once saved


def test_the_newest_rating_of_each_app_with_a_filter(folder):
    got = sf.sql(RATED, folder)

    expected = (
        sf.scan("metadata", folder)
        .filter(pl.col("rating_average") >= 4.5)
        .select("app_id", "title", "rating_average", "fetched_at")
        .sort(["rating_average", "app_id"], descending=[True, False])
        .collect()
    )
    assert_frame_equal(got, expected)
    assert got.schema["fetched_at"] == pl.Datetime("us", "UTC") and got.schema["rating_average"] == pl.Float64
    assert 0 < got.height < len(APPS)
    assert (got["fetched_at"].dt.date() == SANDBOX_TODAY).all()  # each app once: the newest answer
    days = sf.sql(
        "SELECT snapshot_date, count(*) AS apps FROM metadata_snapshots GROUP BY snapshot_date ORDER BY snapshot_date",
        folder,
    )
    assert days.to_dict(as_series=False) == {"snapshot_date": [EARLIER, SANDBOX_TODAY], "apps": [len(APPS)] * 2}


def test_the_guide_shows_the_three_queries():
    guide = Path(__file__).resolve().parents[2] / "docs" / "guides" / "tables-and-sql.md"
    readme = " ".join(guide.read_text().split())
    for query in (MOVERS, CREDITS, RATED):
        assert " ".join(query.split()) in readme


def test_the_logs_are_views_with_their_schemas(folder):
    ledger = sf.sql('SELECT * FROM ledger ORDER BY time, "row"', folder)
    assert_frame_equal(ledger, sf.Cache(folder).ledger.read())
    assert ledger.height == 25  # metadata: 2 sent, 1 from the cache; 1 search history; 21 change histories
    runs, events = sf.sql("SELECT * FROM runs", folder), sf.sql("SELECT * FROM events", folder)
    assert runs.is_empty() and runs.schema == RUN_SCHEMA
    assert events.is_empty() and events.schema == EVENT_SCHEMA
    empty = sf.sql("SELECT * FROM benchmarks", folder)  # a table nothing was fetched of: no rows, its columns
    assert empty.is_empty() and empty.columns == list(sf.scan("benchmarks", folder).collect_schema())


def test_only_the_tables_a_query_names_are_read(tmp_path):
    with sandbox_client_on(SANDBOX_TODAY, tmp_path) as client:
        client.metadata_frame(APPS)  # its answers make the versions table too, never built yet

    def built(table: str) -> list[Path]:
        return list((tmp_path / "frames" / f"table={table}").glob("*.parquet"))

    assert sf.sql("SELECT count(*) AS apps FROM metadata", tmp_path)["apps"].to_list() == [len(APPS)]
    assert built("metadata") and not built("versions")
    versions = sf.sql("SELECT app_id, version FROM versions ORDER BY app_id, version", tmp_path)
    assert built("versions")
    expected = sf.scan("versions", tmp_path).select("app_id", "version").sort("app_id", "version").collect()
    assert_frame_equal(versions, expected)
    assert versions.height > len(APPS)


@pytest.mark.parametrize(
    "query",
    ["SELECT * FROM nope", "SELECT * FROM metadata m JOIN nope n USING (app_id)", "SELECT * FROM main.nope"],
)
def test_a_table_the_cache_has_not_is_refused_with_the_tables_there_are(query):
    with pytest.raises(sf.InvalidParameterError) as refused:
        sf.sql(query, cache_dir=False)  # refused before the cache is opened
    assert refused.value.parameter == "query" and refused.value.value == query
    said = str(refused.value)
    assert "nope is not one of them" in said
    for name in ("metadata", "search_history", "metadata_snapshots", "metrics_snapshots", "ledger", "runs", "events"):
        assert name in said
    assert list(VIEWS) == [
        *TABLES,
        *(f"{name}_snapshots" for name in SNAPSHOT_TABLES),
        "ledger",
        "runs",
        "events",
    ]


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ("CREATE TABLE kept AS SELECT * FROM metadata", "never writes, and the query is a statement of type CREATE"),
        ("INSERT INTO metadata SELECT * FROM metadata", "statement of type INSERT"),
        ("COPY metadata TO 'out.csv'", "statement of type COPY"),
        ("ATTACH 'other.db'", "statement of type ATTACH"),
        ("SET threads = 1", "statement of type SET"),
        ("SELECT 1; DROP TABLE metadata", "one SELECT statement, not 2 statements"),
        ("SELEC app_id FROM metadata", "syntax error"),
        ("", "a SQL query (a SELECT) as a text"),
    ],
)
def test_a_query_that_is_not_one_select_is_refused_before_anything_runs(query, said, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(sf.InvalidParameterError, match="invalid query=") as refused:
        sf.sql(query, cache_dir=False)
    assert said in str(refused.value)
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_a_select_reads_no_file_and_no_address_but_the_views(folder, tmp_path):
    outside = tmp_path / "outside.csv"
    outside.write_text("a\n1\n")
    for query in (
        f"SELECT * FROM read_csv('{outside}')",
        "SELECT * FROM read_parquet('https://example.com/a.parquet')",
    ):
        with pytest.raises(sf.InvalidParameterError) as refused:
            sf.sql(query, folder)
        assert "is not allowed (sf.sql opens no file, folder, address or other query)" in str(refused.value)
    with pytest.raises(sf.InvalidParameterError, match="is not one of them"):
        sf.sql(f"SELECT * FROM '{outside}'", folder)  # a file named as a table: not a view of the cache
    with pytest.raises(sf.InvalidParameterError, match="nocolumn"):  # DuckDB's words, as a refusal
        sf.sql("SELECT nocolumn FROM metadata", folder)
    with pytest.raises(sf.InvalidParameterError, match="invalid query=42"):
        sf.sql(42, folder)  # type: ignore[arg-type]


def test_without_duckdb_the_extra_to_install_is_named(monkeypatch):
    monkeypatch.setitem(sys.modules, "duckdb", None)
    with pytest.raises(sf.ConfigurationError) as raised:
        sf.sql("SELECT * FROM metadata", cache_dir=False)
    assert names_the_extra(str(raised.value), "sql")


@pytest.mark.s3
def test_a_buckets_tables_are_queried_offline_and_its_keys_never_shown(s3_bucket):
    pytest.importorskip("obstore")
    options = {"storage_options": s3_bucket.storage_options}
    secret = s3_bucket.storage_options["aws_secret_access_key"]
    _fill(s3_bucket.url, **options)

    assert_frame_equal(sf.sql(MOVERS, s3_bucket.url, **options), _movers(s3_bucket.url, **options))
    rated = sf.sql(RATED, s3_bucket.url, **options)
    assert_frame_equal(
        rated,
        sf.scan("metadata", s3_bucket.url, **options)
        .filter(pl.col("rating_average") >= 4.5)
        .select("app_id", "title", "rating_average", "fetched_at")
        .sort(["rating_average", "app_id"], descending=[True, False])
        .collect(),
    )
    assert rated.height > 0
    credits = sf.sql(CREDITS, s3_bucket.url, **options)
    assert credits["credits"].sum() == sf.Cache(s3_bucket.url, **options).ledger.read()["cost"].sum() > 0
    for query in ("SELECT * FROM nope", "SELECT nocolumn FROM metadata"):
        with pytest.raises(sf.InvalidParameterError) as refused:
            sf.sql(query, s3_bucket.url, **options)
        assert exposures(refused.value, secret) == []
