"""SQL over the cache: DuckDB runs a query over views of everything a cache holds, offline.

:func:`sql` answers a SQL query (DuckDB's dialect, extra ``sql``) with a polars frame. The
query names tables as it would in a warehouse: each table of :func:`storeframes.scan`
(``metadata``, ``versions``, ``changes``, ``search_history`` ...: the newest answer of each
cell), ``<table>_snapshots`` (:func:`storeframes.snapshots` of a current-only table: one
snapshot of each cell per UTC day), and the cache's logs ``ledger``, ``runs`` and ``events``.
Only the tables a query names are read; nothing is sent and no token is needed.

>>> import storeframes as sf
>>> sf.sql("SELECT endpoint, sum(cost)::BIGINT AS credits FROM ledger GROUP BY endpoint", "analysis-cache")  # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from typing import Any, NamedTuple

import polars as pl

from .._tracebacks import user_facing
from .._version import install_hint
from ..cache import Cache
from ..errors import ConfigurationError, InvalidParameterError
from ..kept.scan import scan
from ..kept.snapshots import SNAPSHOT_TABLES, snapshots
from ..kept.tables import TABLES, open_for

__all__ = ["COUNT_SECONDS", "HEAD_SECONDS", "MEMORY_LIMIT", "TABLE_FUNCTIONS", "VIEWS", "Head", "sql", "sql_head"]

_SUFFIX = "_snapshots"

Reader = Callable[[Cache, "str | None"], pl.DataFrame]
"""What a view holds: given the cache and the service asked for, its rows."""


def _table(name: str) -> Reader:
    return lambda cache, service: scan(name, cache, service=service).collect()


def _snapshots(name: str) -> Reader:
    return lambda cache, service: snapshots(name, cache, service=service).collect()


VIEWS: dict[str, Reader] = {
    **{name: _table(name) for name in TABLES},
    **{name + _SUFFIX: _snapshots(name) for name in SNAPSHOT_TABLES},
    "ledger": lambda cache, _: cache.ledger.read(),
    "runs": lambda cache, _: cache.runs.read(),
    "events": lambda cache, _: cache.events.read(),
}
"""The tables a query of :func:`sql` may name, with what reads each: every table of :func:`~storeframes.scan`,
``<table>_snapshots`` of every table of :func:`~storeframes.snapshots`, and ``ledger``, ``runs`` and ``events``."""

MEMORY_LIMIT = "2GB"
"""The memory a query's DuckDB may use, unless ``memory_limit=`` or ``$STOREFRAMES_SQL_MEMORY_LIMIT`` says
another (a size DuckDB reads: ``512MB``, ``4GB``). DuckDB has no folder to spill to: a query that needs
more is refused, it never fills a disk."""

ENV_MEMORY_LIMIT = "STOREFRAMES_SQL_MEMORY_LIMIT"

TABLE_FUNCTIONS = ("range", "generate_series", "unnest", "duckdb_settings", "duckdb_functions", "duckdb_types")
"""The table functions a query may call: those that make rows of their arguments or of DuckDB's own
catalog. Every other one (``read_text``, ``read_csv``, ``glob``, ``query`` ...) is refused before
anything runs: a query reads the cache's views and nothing else."""

COUNT_SECONDS = 10.0
"""How long :func:`sql_head` counts a query's rows before it says the count is unknown."""

HEAD_SECONDS = 60.0
"""How long :func:`sql_head` lets DuckDB make the rows it shows before the query is stopped and refused
(a filter no row passes over ``range(10**12)`` would otherwise hold an assistant's server for hours)."""

_CONFIG = {
    "temp_directory": "",  # no folder to spill to: DuckDB's default, .tmp under the working directory, stays readable
    "autoinstall_known_extensions": False,  # nothing downloaded
    "autoload_known_extensions": False,
}
_LOCKS = (
    # no file of this machine can be opened, whatever a path or a setting says (the temp folder and the
    # ``:memory:.wal`` paths DuckDB allows itself even with external access off included)
    "SET disabled_filesystems = 'LocalFileSystem'",
    "SET enable_external_access = false",  # no address either
    "SET lock_configuration = true",  # and a query cannot set any of it back
)
_QUIET = (
    "SET allowed_paths = []",
    "SET allowed_directories = []",
    "SET secret_directory = ''",
    "SET extension_directory = ''",
)
"""Paths of this machine that DuckDB's settings would show (set where the DuckDB release has them)."""


def _duckdb() -> Any:
    """The duckdb module (imported when a query is run, not with the package), or a
    :class:`~storeframes.ConfigurationError` saying how to install it."""
    try:
        import duckdb
    except ImportError as exc:
        raise ConfigurationError(f"sf.sql runs DuckDB, which is not installed: {install_hint('sql')}") from exc
    return duckdb


def _memory_limit(memory_limit: Any) -> str:
    """The memory limit asked for, else ``$STOREFRAMES_SQL_MEMORY_LIMIT``, else :data:`MEMORY_LIMIT`."""
    chosen = memory_limit if memory_limit is not None else os.environ.get(ENV_MEMORY_LIMIT, "").strip() or MEMORY_LIMIT
    if not isinstance(chosen, str) or not chosen.strip():
        raise InvalidParameterError(
            "memory_limit", chosen, "a size as a text, such as '512MB' or '4GB'", endpoint="sql"
        )
    return chosen.strip()


@contextmanager
def _locked(duckdb: Any, memory_limit: str) -> Iterator[Any]:
    """A DuckDB connection with no file system and no network: it reads the views registered on it and
    nothing else, within ``memory_limit``, and a query cannot change that."""
    try:
        connection = duckdb.connect(config={**_CONFIG, "memory_limit": memory_limit})
    except duckdb.Error as exc:
        said = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InvalidParameterError(
            "memory_limit", memory_limit, f"a size DuckDB reads, such as '512MB' or '4GB' ({said})", endpoint="sql"
        ) from None
    try:
        connection.execute(_LOCKS[0])
        for setting in _QUIET:
            with suppress(duckdb.Error):  # an older DuckDB has not all of them
                connection.execute(setting)
        for setting in _LOCKS[1:]:
            connection.execute(setting)
        yield connection
    finally:
        connection.close()


def _checked(duckdb: Any, query: Any) -> list[str]:
    """The views ``query`` names, in the order of :data:`VIEWS`; a query that is not one ``SELECT``
    of those views (a statement that writes, several statements, an unknown table, a syntax error)
    is refused with what is allowed, before anything is read or run."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidParameterError("query", query, "a SQL query (a SELECT) as a text", endpoint="sql")
    try:
        statements = duckdb.extract_statements(query)
    except duckdb.Error as exc:
        raise InvalidParameterError("query", query, f"a query DuckDB can read: {exc}", endpoint="sql") from None
    if len(statements) != 1:
        raise InvalidParameterError(
            "query", query, f"one SELECT statement, not {len(statements)} statements", endpoint="sql"
        )
    kind = str(statements[0].type).rsplit(".", 1)[-1]
    if kind != "SELECT":
        raise InvalidParameterError(
            "query",
            query,
            f"a SELECT: sf.sql reads the cache and never writes, and the query is a statement of type {kind}",
            endpoint="sql",
        )
    named, functions = _named(duckdb, query)
    unknown = sorted(named - set(VIEWS))
    if unknown:
        tables = ", ".join(VIEWS)
        raise InvalidParameterError(
            "query",
            query,
            f"a query of the cache's tables; {', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} "
            f"not one of them. The tables: {tables}",
            endpoint="sql",
        )
    refused = sorted(functions - set(TABLE_FUNCTIONS))
    if refused:
        raise InvalidParameterError(
            "query",
            query,
            f"a query of the cache's views alone; the table function {', '.join(refused)} is not allowed "
            f"(sf.sql opens no file, folder, address or other query). Allowed: the tables {', '.join(VIEWS)}, "
            f"and the table functions {', '.join(TABLE_FUNCTIONS)}",
            endpoint="sql",
        )
    return [name for name in VIEWS if name in named]


def _named(duckdb: Any, query: str) -> tuple[set[str], set[str]]:
    """The tables (in lower case) that ``query``, one SELECT, names in its ``FROM`` clauses, CTEs left out,
    and the table functions it calls anywhere, read from DuckDB's parse of it (nothing is bound or run:
    ``get_table_names`` binds, and cannot follow a join ``USING`` columns of tables it does not have).
    A table of another schema (``information_schema.tables``) is DuckDB's and left to it."""
    with _locked(duckdb, MEMORY_LIMIT) as parser:
        row = parser.execute("SELECT json_serialize_sql(?::VARCHAR)", [query]).fetchone()
    tree = json.loads(row[0]) if row else {}
    if tree.get("error", True):
        said = tree.get("error_message", "it could not be parsed")
        raise InvalidParameterError("query", query, f"a query DuckDB can read: {said}", endpoint="sql")
    tables: set[str] = set()
    ctes: set[str] = set()
    functions: set[str] = set()
    todo: list[Any] = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            if node.get("type") == "BASE_TABLE" and node.get("schema_name", "") in ("", "main"):
                tables.add(str(node.get("table_name", "")).lower())
            if node.get("type") == "TABLE_FUNCTION":
                called = node.get("function") or {}
                functions.add(str(called.get("function_name", "")).lower() if isinstance(called, dict) else "")
            for entry in (node.get("cte_map") or {}).get("map", ()):
                ctes.add(str(entry.get("key", "")).lower())
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    return tables - ctes, functions


def _utc(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with DuckDB's ``Etc/UTC`` timestamps named ``UTC``, as storeframes' frames have them."""
    utc = [
        pl.col(name).dt.convert_time_zone("UTC")
        for name, dtype in frame.schema.items()
        if isinstance(dtype, pl.Datetime) and dtype.time_zone == "Etc/UTC"
    ]
    return frame.with_columns(utc) if utc else frame


class Head(NamedTuple):
    """The first rows of a query's answer (:func:`sql_head`) and how many rows it has in all."""

    frame: pl.DataFrame
    total: int | None
    """All the rows of the answer, counted by DuckDB; None when they could not be counted in time."""


def _run(
    duckdb: Any, query: str, views: Mapping[str, pl.DataFrame], memory_limit: str, rows: int | None = None
) -> Head:
    """``query`` run by DuckDB over ``views`` (each registered under its name), as a polars frame: all
    of it, or its first ``rows`` only (the limit is DuckDB's: nothing past it is made) with their count."""
    with _locked(duckdb, memory_limit) as connection:
        for name, frame in views.items():
            connection.register(name, frame.to_arrow())
        timer = threading.Timer(HEAD_SECONDS, connection.interrupt) if rows is not None else None
        if timer is not None:
            timer.daemon = True
            timer.start()
        try:
            relation = connection.sql(query)
            frame = (relation if rows is None else relation.limit(rows)).pl()
        except duckdb.InterruptException:  # stopped at HEAD_SECONDS: a refusal saying how to ask for less
            raise InvalidParameterError(
                "query",
                query,
                f"a query whose first {rows} rows DuckDB makes within {HEAD_SECONDS:g} s; a LIMIT, a narrower range "
                "or a WHERE on a view's columns asks for less",
                endpoint="sql",
            ) from None
        except duckdb.OutOfMemoryException as exc:
            said = str(exc).splitlines()[0]
            raise InvalidParameterError(
                "query",
                query,
                f"a query DuckDB can answer within its memory limit of {memory_limit} ({said}); a LIMIT, a WHERE "
                f"or an aggregate needs less, and memory_limit= or ${ENV_MEMORY_LIMIT} allows more",
                endpoint="sql",
            ) from None
        except (
            duckdb.BinderException,
            duckdb.CatalogException,
            duckdb.ParserException,
            duckdb.PermissionException,
        ) as exc:
            # a column or a function that is not there: the query's fault, said as DuckDB says it
            raise InvalidParameterError("query", query, f"a query DuckDB can run: {exc}", endpoint="sql") from None
        finally:
            if timer is not None:
                timer.cancel()
        total = frame.height if rows is None else _count(duckdb, connection, relation)
    return Head(_utc(frame), total)


def _count(duckdb: Any, connection: Any, relation: Any) -> int | None:
    """How many rows ``relation`` has, counted by DuckDB as they stream by (within the memory limit),
    or None when it takes longer than :data:`COUNT_SECONDS` or fails."""
    timer = threading.Timer(COUNT_SECONDS, connection.interrupt)
    timer.daemon = True
    timer.start()
    try:
        counted = relation.aggregate("count(*)").fetchall()
    except duckdb.Error:  # interrupted at COUNT_SECONDS, or past the memory limit: unknown, never a hang
        return None
    finally:
        timer.cancel()
    return int(counted[0][0])


@user_facing
def sql(
    query: str,
    cache_dir: Any = None,
    *,
    storage_options: Mapping[str, str] | None = None,
    service: str | None = None,
    memory_limit: str | None = None,
) -> pl.DataFrame:
    """The answer of a SQL query over the tables the cache holds, run by DuckDB, as a polars frame.

    ``query`` is one ``SELECT`` in DuckDB's dialect (``WITH``, joins, window functions,
    ``QUALIFY`` ...). The tables it may name are views of the cache (:data:`VIEWS`):

    - each table of :func:`~storeframes.scan` (``metadata``, ``versions``, ``screenshots``,
      ``metrics``, ``changes``, ``search``, ``search_history``, ``benchmarks`` ...): the
      newest answer of each cell, the frame function's columns, no deduplication needed;
    - ``<table>_snapshots`` of each current-only table (``metadata_snapshots``,
      ``metrics_snapshots``, ``search_snapshots`` ...): :func:`~storeframes.snapshots`, one
      snapshot of each cell per UTC day, with ``snapshot_date`` first;
    - ``ledger`` (the credits spent and saved, :data:`~storeframes.LEDGER_SCHEMA`, of every
      service, with its ``service`` column), ``runs`` (the trackers' run log) and ``events``
      (what the trackers' alerts found, as :func:`~storeframes.events` gives them).

    ``cache_dir`` is a folder or a bucket address (``s3://bucket/prefix``, with
    ``storage_options``), by default ``$STOREFRAMES_CACHE_DIR`` or the user's cache;
    ``service`` chooses whose answers the tables and snapshots read, as for
    :func:`~storeframes.scan`. Nothing is sent and no token is needed; a place with no cache
    raises :class:`~storeframes.NoCacheError` (never an answer of 0 rows), as :func:`~storeframes.scan` says.

    Only the tables the query names are read, each whole (the newest answers, or every
    day kept, for a snapshots view) before DuckDB runs, so a filter in the query does not
    spare the reading of a table's files (:func:`~storeframes.scan` with a polars filter
    does). The query reads nothing else: a statement that writes (``CREATE``, ``INSERT``,
    ``COPY``, ``ATTACH``, ``SET``, ``INSTALL`` ...), several statements, a table that is not a
    view of the cache, or a table function but those of :data:`TABLE_FUNCTIONS` (``read_text``,
    ``read_csv``, ``glob``, ``query`` ...) is refused before anything is read, each with
    :class:`~storeframes.InvalidParameterError` saying what is allowed; a column or a
    function DuckDB cannot find is refused the same way, with DuckDB's words. DuckDB runs with
    no file system and no network (no file of the machine can be opened, its temp folder
    included: it has none), its settings locked, within ``memory_limit`` (default
    ``$STOREFRAMES_SQL_MEMORY_LIMIT``, else :data:`MEMORY_LIMIT`): a query that needs more
    is refused the same way, saying so.

    Output: the query's columns, with DuckDB's types as polars gives them (``BIGINT`` ->
    ``Int64``, ``VARCHAR`` -> ``String``, ``DATE`` -> ``Date``, the tables' timestamps ->
    ``Datetime("us", "UTC")``; a ``sum`` of integers is a 38-digit number in DuckDB, which
    polars gets as a ``Decimal``: cast it, ``sum(cost)::BIGINT``), in the order the query
    gives (none without ``ORDER BY``).

    >>> import storeframes as sf
    >>> sf.sql(
    ...     '''SELECT app_id, rating_average, fetched_at FROM metadata
    ...        WHERE rating_average >= 4.5 ORDER BY rating_average DESC, app_id''',
    ...     cache_dir="analysis-cache",
    ... )  # doctest: +SKIP
    shape: (2, 3)
    ┌────────────┬────────────────┬─────────────────────────┐
    │ app_id     ┆ rating_average ┆ fetched_at              │
    │ ---        ┆ ---            ┆ ---                     │
    │ str        ┆ f64            ┆ datetime[μs, UTC]       │
    ╞════════════╪════════════════╪═════════════════════════╡
    │ 2787512886 ┆ 4.8721         ┆ 2026-11-20 06:10:02 UTC │
    │ 3233849169 ┆ 4.67128        ┆ 2026-11-20 06:10:02 UTC │
    └────────────┴────────────────┴─────────────────────────┘
    """
    duckdb = _duckdb()
    limit = _memory_limit(memory_limit)
    names = _checked(duckdb, query)
    cache = open_for(cache_dir, storage_options, what="sql")
    views = {name: VIEWS[name](cache, service) for name in names}
    return _run(duckdb, query, views, limit).frame


@user_facing
def sql_head(
    query: str,
    cache_dir: Any = None,
    *,
    rows: int = 20,
    storage_options: Mapping[str, str] | None = None,
    service: str | None = None,
    memory_limit: str | None = None,
) -> Head:
    """The first ``rows`` rows of :func:`sql`'s answer to ``query``, and how many it has in all.

    The limit is part of the query DuckDB runs, so nothing past the rows shown is made, however large
    the answer (``SELECT * FROM range(200000000)`` included); the total is DuckDB's ``count(*)`` of
    the query, streamed within the memory limit, or None when it is not counted within
    :data:`COUNT_SECONDS`. What a query may read and name is :func:`sql`'s.

    >>> import storeframes as sf
    >>> from storeframes.lake.sql import sql_head
    >>> head = sql_head("SELECT * FROM range(200000000)", "analysis-cache", rows=3)  # doctest: +SKIP
    >>> head.frame.height, head.total  # doctest: +SKIP
    (3, 200000000)
    """
    duckdb = _duckdb()
    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 0:
        raise InvalidParameterError("rows", rows, "a whole number of rows >= 0", endpoint="sql")
    limit = _memory_limit(memory_limit)
    names = _checked(duckdb, query)
    cache = open_for(cache_dir, storage_options, what="sql")
    views = {name: VIEWS[name](cache, service) for name in names}
    return _run(duckdb, query, views, limit, rows)
