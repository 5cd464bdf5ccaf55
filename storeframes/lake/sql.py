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
from collections.abc import Callable, Mapping
from typing import Any

import polars as pl

from .._tracebacks import user_facing
from ..cache import Cache
from ..datasets import TABLES, open_for, scan
from ..errors import ConfigurationError, InvalidParameterError
from ..snapshots import SNAPSHOT_TABLES, snapshots

__all__ = ["VIEWS", "sql"]

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
    "ledger": lambda cache, _: cache.read_ledger(),
    "runs": lambda cache, _: cache.read_runs(),
    "events": lambda cache, _: cache.read_events(),
}
"""The tables a query of :func:`sql` may name, with what reads each: every table of :func:`~storeframes.scan`,
``<table>_snapshots`` of every table of :func:`~storeframes.snapshots`, and ``ledger``, ``runs`` and ``events``."""

_CONFIG = {
    "enable_external_access": False,  # no file, folder or address but the views: read_csv('/etc/...') is refused
    "autoinstall_known_extensions": False,  # nothing downloaded
    "autoload_known_extensions": False,
    "lock_configuration": True,  # and the query cannot set them back
}
"""The DuckDB connection of a query: it reads the views it is given, and nothing else."""


def _duckdb() -> Any:
    """The duckdb module (imported when a query is run, not with the package), or a
    :class:`~storeframes.ConfigurationError` saying how to install it."""
    try:
        import duckdb
    except ImportError as exc:
        raise ConfigurationError('sf.sql runs DuckDB, which is not installed: pip install "storeframes[sql]"') from exc
    return duckdb


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
    named = _tables_named(duckdb, query)
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
    return [name for name in VIEWS if name in named]


def _tables_named(duckdb: Any, query: str) -> set[str]:
    """The tables (in lower case) that ``query``, one SELECT, names in its ``FROM`` clauses, CTEs left out,
    read from DuckDB's parse of it (nothing is bound or run: ``get_table_names`` binds, and cannot
    follow a join ``USING`` columns of tables it does not have). A table of another schema
    (``information_schema.tables``) is DuckDB's and left to it."""
    with duckdb.connect(config=dict(_CONFIG)) as parser:
        row = parser.execute("SELECT json_serialize_sql(?::VARCHAR)", [query]).fetchone()
    tree = json.loads(row[0]) if row else {}
    if tree.get("error", True):
        said = tree.get("error_message", "it could not be parsed")
        raise InvalidParameterError("query", query, f"a query DuckDB can read: {said}", endpoint="sql")
    tables: set[str] = set()
    ctes: set[str] = set()
    todo: list[Any] = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            if node.get("type") == "BASE_TABLE" and node.get("schema_name", "") in ("", "main"):
                tables.add(str(node.get("table_name", "")).lower())
            for entry in (node.get("cte_map") or {}).get("map", ()):
                ctes.add(str(entry.get("key", "")).lower())
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    return tables - ctes


def _utc(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with DuckDB's ``Etc/UTC`` timestamps named ``UTC``, as storeframes' frames have them."""
    utc = [
        pl.col(name).dt.convert_time_zone("UTC")
        for name, dtype in frame.schema.items()
        if isinstance(dtype, pl.Datetime) and dtype.time_zone == "Etc/UTC"
    ]
    return frame.with_columns(utc) if utc else frame


def _run(duckdb: Any, query: str, views: Mapping[str, pl.DataFrame]) -> pl.DataFrame:
    """``query`` run by DuckDB over ``views`` (each registered under its name), as a polars frame."""
    with duckdb.connect(config=dict(_CONFIG)) as connection:
        for name, frame in views.items():
            connection.register(name, frame.to_arrow())
        try:
            frame = connection.sql(query).pl()
        except (
            duckdb.BinderException,
            duckdb.CatalogException,
            duckdb.ParserException,
            duckdb.PermissionException,
        ) as exc:
            # a column or a function that is not there: the query's fault, said as DuckDB says it
            raise InvalidParameterError("query", query, f"a query DuckDB can run: {exc}", endpoint="sql") from None
    return _utc(frame)


@user_facing
def sql(
    query: str,
    cache_dir: Any = None,
    *,
    storage_options: Mapping[str, str] | None = None,
    service: str | None = None,
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
    ``COPY``, ``ATTACH``, ``SET`` ...), several statements, or a table that is not a view of
    the cache is refused before anything is read, and a file or an address
    (``read_parquet('...')``) when DuckDB would open it, each with
    :class:`~storeframes.InvalidParameterError` saying what is allowed; a column or a
    function DuckDB cannot find is refused the same way, with DuckDB's words.

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
    names = _checked(duckdb, query)
    cache = open_for(cache_dir, storage_options, what="sql")
    views = {name: VIEWS[name](cache, service) for name in names}
    return _run(duckdb, query, views)
