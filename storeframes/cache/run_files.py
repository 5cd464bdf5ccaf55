"""The run log's files: one row per tracker run, kept as ``runs/tracker=<name>/<run id>.parquet``.

A run writes its row when it starts (status ``running``) and again when it ends, over the
same file (a put replaces a file whole, so a reader sees one or the other). A row still
``running`` when the next run of the tracker takes its lease is of a run that was killed
or stopped: that run rewrites it as ``interrupted``, its requests and credits counted from
the ledger rows of its ``session``. The files are plain Parquet, so a
warehouse (or DuckDB, ``pl.scan_parquet("cache/runs/**/*.parquet")``) reads the log as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from .._version import __version__
from ..errors import warn
from .files import CacheWarning, Files
from .layout import TABLE_FORMAT
from .parquet import parquet_bytes

__all__ = ["RUN_SCHEMA", "RUN_STATUSES", "RunFiles", "run_key"]

_RUNNING = ".running"

RUN_STATUSES = ("running", "ok", "partial", "failed", "over_budget", "interrupted")
"""What a run's ``status`` may say; ``running`` until it ends."""

RUN_SCHEMA = pl.Schema(
    {
        "run_id": pl.String(),
        "tracker": pl.String(),
        "spec_hash": pl.String(),
        "kind": pl.String(),
        "day": pl.Date(),
        "started_at": pl.Datetime("us", "UTC"),
        "ended_at": pl.Datetime("us", "UTC"),
        "status": pl.String(),
        "requests": pl.Int64(),
        "cells_new": pl.Int64(),
        "cells_cached": pl.Int64(),
        "credits_spent": pl.Int64(),
        "credits_saved": pl.Int64(),
        "items_due": pl.Int64(),
        "items_left_out": pl.String(),
        "errors": pl.String(),
        "host": pl.String(),
        "session": pl.String(),
    }
)
"""One row per run: ``run_id``, ``tracker`` (its name), ``spec_hash`` (of the spec file's text),
``kind`` (``run`` or ``backfill``), ``day`` (the day it ran as), ``started_at``/``ended_at`` (UTC,
``ended_at`` null while running or when interrupted), ``status`` (:data:`RUN_STATUSES`),
``requests`` sent, cells fetched new and served from the cache, credits spent and saved,
``items_due``, ``items_left_out`` (names, comma-separated, left out for the budget),
``errors`` (in words, one a line), ``host`` (the machine that ran it) and ``session`` (its client's
ledger session: the ledger rows whose ``row`` begins with ``<session>-`` are its requests; a row left
``running`` by a killed run is finished from them by the next run, see :mod:`storeframes.track.runs`;
null in rows of earlier versions)."""


def run_key(tracker: str, run_id: str) -> str:
    """The name of a run's file."""
    return f"runs/tracker={tracker}/{run_id}.parquet"


class RunFiles:
    """The run log of a cache, as ``cache.runs``: rows of :data:`RUN_SCHEMA`.

    >>> sf.Cache("cache").runs.read("keywords").select("run_id", "status")  # doctest: +SKIP
    """

    def __init__(self, files: Files):
        self._files = files

    def write(self, row: Mapping[str, Any]) -> bool:
        """Keep one run's row (a new one, or the same run's again); False, with a warning, when it cannot.

        While a run's row reads ``running``, an empty ``<run id>.running`` file beside it says so, so
        that the next run finds the runs left running without reading the whole log.
        """
        frame = pl.DataFrame([dict(row)], schema=RUN_SCHEMA, orient="row")
        meta = {"storeframes.version": __version__, "storeframes.format": str(TABLE_FORMAT)}
        key = run_key(row["tracker"], row["run_id"])
        marker = key.removesuffix(".parquet") + _RUNNING
        try:
            self._files.mark()
            if row["status"] == "running":
                self._files.storage.put(marker, b"")
            self._files.storage.put(key, parquet_bytes(frame, meta, arrow=False))
            if row["status"] != "running":
                self._files.storage.delete(marker)
        except OSError as exc:
            warn(f"could not write the run log to the cache at {self._files.location}: {exc}", CacheWarning)
            return False
        return True

    def running(self, tracker: str) -> pl.DataFrame:
        """The rows of ``tracker``'s runs that read ``running`` (left so by a run killed or stopped)."""
        prefix = f"runs/tracker={tracker}/"
        keys = [k.removesuffix(_RUNNING) + ".parquet" for k in self._files.keys(prefix) if k.endswith(_RUNNING)]
        return self._rows(keys).filter(pl.col("status") == "running")

    def one(self, tracker: str, run_id: str) -> dict[str, Any] | None:
        """The row of one run; None when it has none."""
        rows = self._rows([run_key(tracker, run_id)])
        return rows.row(0, named=True) if rows.height else None

    def read(self, tracker: str | None = None) -> pl.DataFrame:
        """The rows of the run log (of one tracker), oldest first."""
        prefix = f"runs/tracker={tracker}/" if tracker is not None else "runs/"
        return self._rows([k for k in self._files.keys(prefix) if k.endswith(".parquet") and k.count("/") == 2])

    def _rows(self, keys: list[str]) -> pl.DataFrame:
        frames = self._files.read_tables(keys, RUN_SCHEMA)
        if not frames:
            return pl.DataFrame(schema=RUN_SCHEMA)
        return pl.concat(frames).sort("started_at", "run_id")
