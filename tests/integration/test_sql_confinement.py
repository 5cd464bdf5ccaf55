"""sf.sql and the MCP ``sql`` tool touch only the cache: every way a query could reach a file of the machine
(DuckDB's file-reading table functions, its temp folder ``.tmp`` under the working directory, a ``.tmp``
link to anywhere, the ``:memory:.wal`` paths it allows itself, statements that write, attach, install or
set) is refused or finds no file system, against DuckDB itself; and DuckDB runs within a memory limit."""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path

import pytest

import storeframes as sf
from storeframes.lake.sql import MEMORY_LIMIT, TABLE_FUNCTIONS
from tests.conftest import FAST_BACKOFF, SANDBOX_TODAY

duckdb = pytest.importorskip("duckdb")

sql_module = importlib.import_module("storeframes.lake.sql")  # the module: storeframes.lake.sql is its function
TOKEN = "sk-live-sql-0123456789abcdef0123456789abcdef"  # a made-up token, shaped like a real one
APP = "3233849169"


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """A cache with one app's metadata."""
    path = tmp_path_factory.mktemp("confined-cache")
    with sf.sandbox.client(today=SANDBOX_TODAY, cache_dir=path, progress=False, backoff=FAST_BACKOFF) as client:
        client.metadata_frame([APP])
    return path


@pytest.fixture(params=["folder", "link"])
def planted(request, tmp_path, monkeypatch) -> Path:
    """The working directory, holding the token where DuckDB would look: in ``.tmp`` (its temp folder by
    default; a folder, or a link to a folder elsewhere) and in ``:memory:.wal`` (a path it allows itself)."""
    work = tmp_path / "work"
    work.mkdir()
    if request.param == "folder":
        (work / ".tmp").mkdir()
    else:
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        (work / ".tmp").symlink_to(elsewhere, target_is_directory=True)
    (work / ".tmp" / "token.txt").write_text(TOKEN + "\n")
    (work / ".tmp" / "token.csv").write_text(f"token\n{TOKEN}\n")
    (work / ":memory:.wal").write_text(TOKEN + "\n")
    monkeypatch.chdir(work)
    monkeypatch.setenv("STOREFRAMES_API_KEY", TOKEN)
    return work


READERS = [
    "SELECT * FROM read_text('.tmp/token.txt')",
    "SELECT reverse(content) AS c FROM read_text('.tmp/*')",
    "SELECT upper(content) AS c FROM read_blob('.tmp/token.txt')",
    "SELECT * FROM glob('.tmp/*')",
    "SELECT * FROM read_csv('.tmp/token.csv')",
    "SELECT * FROM read_csv_auto('.tmp/token.csv')",
    "SELECT * FROM read_parquet('.tmp/token.txt')",
    "SELECT * FROM read_json('.tmp/token.txt')",
    "SELECT * FROM sniff_csv('.tmp/token.csv')",
    "SELECT substr(content, 1, 20) AS c FROM read_text(':memory:.wal')",
    "SELECT * FROM query('SELECT * FROM read_text(''.tmp/token.txt'')')",
    "SELECT (SELECT content FROM read_text('.tmp/token.txt')) AS c",
    "SELECT m.app_id, t.content FROM metadata m, read_text('.tmp/token.txt') t",
    "FROM system.main.read_text('.tmp/token.txt')",
]


@pytest.mark.parametrize("query", READERS)
def test_a_table_function_that_reads_files_is_refused_with_what_is_allowed(query, planted, folder):
    with pytest.raises(sf.InvalidParameterError) as refused:
        sf.sql(query, folder)
    said = str(refused.value)
    assert "is not allowed (sf.sql opens no file, folder, address or other query)" in said
    assert "Allowed: the tables metadata, versions" in said and "the table functions range, generate_series" in said
    assert refused.value.parameter == "query"
    assert TOKEN not in said.replace(query, "") and TOKEN[::-1] not in said


def test_duckdb_itself_can_open_no_file_of_the_machine(planted):
    """The second line: the connection a query runs on has no file system at all, ``.tmp`` (a folder or a
    link) and ``:memory:.wal`` included, and its settings cannot be changed back."""
    with sql_module._locked(duckdb, MEMORY_LIMIT) as connection:
        for reading in ("read_text('.tmp/token.txt')", "glob('.tmp/*')", "read_blob(':memory:.wal')"):
            with pytest.raises(duckdb.PermissionException, match="disabled by configuration"):
                connection.sql(f"SELECT * FROM {reading}").fetchall()
        for setting in (
            "SET disabled_filesystems = ''",
            "SET enable_external_access = true",
            "SET temp_directory = '.tmp'",
            "SET memory_limit = '100GB'",
            "RESET memory_limit",
            "SET lock_configuration = false",
        ):
            with pytest.raises(duckdb.Error, match="configuration has been locked"):
                connection.execute(setting)
    assert sorted(p.name for p in (planted / ".tmp").iterdir()) == ["token.csv", "token.txt"]  # nothing spilt


def test_duckdbs_settings_show_no_path_of_the_machine_and_no_token(planted, folder):
    settings = sf.sql("SELECT name, value FROM duckdb_settings()", folder)
    values = dict(zip(settings["name"], settings["value"], strict=True))
    assert values["temp_directory"] == "" and values["enable_external_access"] == "false"
    assert values["memory_limit"] in ("1.8 GiB", "1.9 GiB")  # 2GB, as DuckDB says it
    shown = json.dumps(values)
    for kept in (str(planted), str(planted.resolve()), os.path.expanduser("~"), ".tmp", TOKEN):
        assert kept not in shown, kept
    assert sf.sql("SELECT current_setting('temp_directory') AS t", folder)["t"].to_list() == [""]


@pytest.mark.parametrize(
    ("query", "kind"),
    [
        ("COPY (SELECT * FROM metadata) TO 'out.csv'", "COPY"),
        ("ATTACH '.tmp/token.txt' AS t", "ATTACH"),
        ("INSTALL httpfs", "LOAD"),  # DuckDB's type of an INSTALL
        ("LOAD httpfs", "LOAD"),
        ("SET temp_directory = '.tmp'", "SET"),
        ("RESET memory_limit", "SET"),
        ("PRAGMA disable_checkpoint_on_shutdown", "PRAGMA"),
        ("CALL read_text('.tmp/token.txt')", "CALL"),
    ],
)
def test_a_statement_that_writes_attaches_installs_or_sets_is_refused(query, kind, planted, folder):
    with pytest.raises(sf.InvalidParameterError, match=f"statement of type {kind}"):
        sf.sql(query, folder)
    assert sorted(p.name for p in planted.iterdir()) == [".tmp", ":memory:.wal"]  # nothing written


def test_the_table_functions_allowed_make_rows_of_their_arguments(folder):
    assert TABLE_FUNCTIONS[:3] == ("range", "generate_series", "unnest")
    got = sf.sql("SELECT count(*)::BIGINT AS n FROM range(10) r, metadata m", folder)
    assert got["n"].to_list() == [10]
    assert sf.sql("SELECT * FROM unnest([1, 2, 3]) AS t(x)", folder)["x"].to_list() == [1, 2, 3]


def test_a_query_past_the_memory_limit_is_refused_saying_how_to_allow_more(folder, monkeypatch):
    query = "SELECT list(range) AS l FROM range(100000000)"
    with pytest.raises(sf.InvalidParameterError) as refused:
        sf.sql(query, folder, memory_limit="64MB")
    said = str(refused.value)
    assert "within its memory limit of 64MB (Out of Memory Error" in said
    assert "memory_limit= or $STOREFRAMES_SQL_MEMORY_LIMIT allows more" in said
    monkeypatch.setenv("STOREFRAMES_SQL_MEMORY_LIMIT", "48MB")
    with pytest.raises(sf.InvalidParameterError, match="memory limit of 48MB"):
        sf.sql(query, folder)
    with pytest.raises(sf.InvalidParameterError, match="invalid memory_limit='lots' for sql: a size DuckDB reads"):
        sf.sql("SELECT 1 AS one", folder, memory_limit="lots")
