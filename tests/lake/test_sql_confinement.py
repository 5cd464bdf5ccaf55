"""sf.sql and the MCP ``sql`` tool touch only the cache: every way a query could reach a file of the machine
(DuckDB's file-reading table functions, its temp folder ``.tmp`` under the working directory, a ``.tmp``
link to anywhere, the ``:memory:.wal`` paths it allows itself, statements that write, attach, install or
set) is refused or finds no file system, against DuckDB itself; DuckDB runs within a memory limit; the
tool makes only the rows it shows and counts the rest; and an answer holding the token, even transformed,
is refused."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import storeframes as sf
from storeframes.lake.sql import MEMORY_LIMIT, TABLE_FUNCTIONS, sql_head
from tests._children import child_env
from tests.conftest import FAST_BACKOFF, ROOT, SANDBOX_TODAY

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
            with pytest.raises(duckdb.PermissionException, match=r"disabled (by|through) configuration"):
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


SQL_TOOL_PEAK = """
import json, sys
from storeframes.agent import open_surface
surface = open_surface(sys.argv[1], sandbox=True, today="2026-11-20", offline=True)
shown = surface.sql("SELECT * FROM range(200000000)")
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
peak = int(status["VmHWM"].split()[0]) // 1024  # this process's own peak (ru_maxrss keeps the parent's over exec)
print(json.dumps({"peak_mb": peak, "title": shown.text.splitlines()[0], "shown": shown.data["shown_rows"],
                  "total": shown.data["total_rows"], "last": shown.text.splitlines()[-1]}))
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="the peak memory is read from /proc (Linux)")
@pytest.mark.processes
def test_the_sql_tool_makes_only_the_rows_it_shows_and_counts_the_rest(folder):
    child = subprocess.run(
        [sys.executable, "-c", SQL_TOOL_PEAK, str(folder)],
        cwd=ROOT,
        env=child_env(STOREFRAMES_API_KEY=None),
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert child.returncode == 0, child.stderr
    said = json.loads(child.stdout.strip().splitlines()[-1])
    print("peak RSS of the sql tool over range(200000000):", said["peak_mb"], "MB")
    assert said["title"] == "sql: 200,000,000 rows, 1 column"
    assert said["shown"] == 20 and said["total"] == 200_000_000
    assert said["last"] == "(199,999,980 more rows not shown; add a LIMIT, a WHERE or an aggregate to the query)"
    assert said["peak_mb"] < 400  # every row made was 1.7 GB


def test_a_count_that_takes_too_long_is_said_to_be_unknown(folder, monkeypatch):
    from storeframes.agent import open_surface

    monkeypatch.setattr(sql_module, "COUNT_SECONDS", 1.0)
    surface = open_surface(folder, sandbox=True, today=SANDBOX_TODAY, offline=True)
    started = time.monotonic()
    shown = surface.sql("SELECT * FROM range(1000000000000) WHERE hash(range) % 2 = 0", limit=5)  # hours to count
    assert time.monotonic() - started < 30
    assert shown.text.splitlines()[0] == "sql: count unknown, 1 column"
    assert "(more rows may follow: they were not counted in time;" in shown.text
    assert shown.data["total_rows"] is None and shown.data["shown_rows"] == 5
    head = sql_head("SELECT * FROM range(7)", folder, rows=3)
    assert head.frame["range"].to_list() == [0, 1, 2] and head.total == 7


def test_rows_that_take_too_long_to_make_are_refused_and_the_tool_answers_on(folder, monkeypatch):
    from storeframes.agent import open_surface

    monkeypatch.setattr(sql_module, "HEAD_SECONDS", 1.0)
    surface = open_surface(folder, sandbox=True, today=SANDBOX_TODAY, offline=True)
    started = time.monotonic()
    with pytest.raises(sf.InvalidParameterError) as refused:  # no row passes: hours to find the first 20
        surface.sql("SELECT * FROM range(1000000000000) WHERE range < 0", limit=20)
    assert time.monotonic() - started < 30
    assert "a query whose first 20 rows DuckDB makes within 1 s; a LIMIT, a narrower range" in str(refused.value)
    shown = surface.sql("SELECT * FROM range(7)", limit=3)  # the same server, the next call
    assert shown.data["total_rows"] == 7 and shown.data["shown_rows"] == 3


@pytest.mark.parametrize(
    "select",
    [
        f"reverse('{TOKEN}')",
        f"upper('{TOKEN}')",
        f"substr('{TOKEN}', 9, 14)",
        f"[reverse(upper('{TOKEN}'))]",
    ],
)
def test_an_answer_holding_the_token_transformed_is_refused(select, folder, monkeypatch):
    from storeframes.agent import open_surface

    monkeypatch.setenv("STOREFRAMES_API_KEY", TOKEN)
    surface = open_surface(folder, sandbox=True, today=SANDBOX_TODAY, offline=True)
    with pytest.raises(sf.InvalidParameterError) as refused:
        surface.sql(f"SELECT {select} AS t, app_id FROM metadata")
    assert "a query whose answer holds no part of the API token, forwards or reversed, in any case" in str(
        refused.value
    )
    assert "3233849169" in surface.sql("SELECT app_id FROM metadata").text  # the same query without it answers


def _peak_of_child(command: str) -> int | None:
    """The peak resident memory (MB) of this process's child running ``command``, while it runs."""
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
            cmdline = (status.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(fields["PPid"]) == os.getpid() and command in cmdline:
            return int(fields["VmHWM"].split()[0]) // 1024
    return None


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="the peak memory is read from /proc (Linux)")
@pytest.mark.processes
@pytest.mark.mcp
def test_the_sql_tool_over_the_sdks_client_reads_no_file_and_stays_small(planted, folder):
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    command = [sys.executable, "-m", "storeframes", "mcp", "--cache-dir", str(folder), "--offline"]
    env = child_env(STOREFRAMES_API_KEY=TOKEN, STOREFRAMES_BASE_URL=None)
    params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=str(planted))
    calls = [
        {"query": "SELECT * FROM range(200000000)"},
        {"query": "SELECT reverse(content) AS c FROM read_text('.tmp/*')"},
        {"query": "SELECT app_id FROM metadata"},
    ]

    async def go() -> tuple[list[Any], int | None]:
        with open(planted.parent / "server.log", "w", encoding="utf-8") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                results = [await client.call_tool("sql", arguments) for arguments in calls]
                return results, _peak_of_child("storeframes mcp")

    (counted, reading, answered), peak = anyio.run(go)
    print("peak RSS of storeframes mcp after sql over range(200000000):", peak, "MB")
    assert not counted.is_error and counted.structured_content["total_rows"] == 200_000_000
    assert counted.structured_content["shown_rows"] == 20
    assert counted.content[0].text.startswith("sql: 200,000,000 rows, 1 column")
    assert peak is not None and peak < 400
    said = reading.content[0].text
    assert reading.is_error and "the table function read_text is not allowed" in said
    assert TOKEN not in said and TOKEN[::-1] not in said
    assert not answered.is_error and answered.structured_content["untrusted_third_party_data"]["rows"] == [
        {"app_id": APP}
    ]
