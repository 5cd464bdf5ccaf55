"""The digests of the day: one per tracker and day, kept as ``digests/tracker=<name>/day=<day>.parquet``.

The run that finishes a day's work (under the tracker's lease) renders the day's digest and keeps
it here, replacing the one an earlier run of the day kept: a file is put whole, so a reader sees the
one before or the one after, never half of one. Anyone reads it back, from the folder or the bucket
(``storeframes track digest SPEC --day D``). The file is plain Parquet, one row: ``tracker``,
``day``, ``written_at``, ``run_id`` (the run that wrote it; null for a judgement outside a run),
``host``, ``markdown``, ``html`` and ``images`` (the Markdown's charts: a list of ``name`` and ``png``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

import polars as pl

from .._version import __version__
from .files import Files
from .layout import TABLE_FORMAT
from .parquet import parquet_bytes

__all__ = ["DIGEST_SCHEMA", "DigestFiles", "digest_key"]

DIGEST_SCHEMA = pl.Schema(
    {
        "tracker": pl.String(),
        "day": pl.Date(),
        "written_at": pl.Datetime("us", "UTC"),
        "run_id": pl.String(),
        "host": pl.String(),
        "markdown": pl.String(),
        "html": pl.String(),
        "images": pl.List(pl.Struct({"name": pl.String(), "png": pl.Binary()})),
    }
)
"""The row of a kept digest of the day (see the module's text)."""


def digest_key(tracker: str, day: date) -> str:
    """The name of the file of ``tracker``'s digest of ``day``."""
    return f"digests/tracker={tracker}/day={day.isoformat()}.parquet"


class DigestFiles:
    """The kept digests of the day of a cache, as ``cache.digests``: a row of :data:`DIGEST_SCHEMA` per tracker and day.

    >>> sf.Cache("cache").digests.days("keywords")  # doctest: +SKIP
    """

    def __init__(self, files: Files):
        self._files = files

    def write(self, row: Mapping[str, Any]) -> None:
        """Keep ``row`` as ``row["tracker"]``'s digest of ``row["day"]``, replacing any; an OSError when it cannot."""
        frame = pl.DataFrame([dict(row)], schema=DIGEST_SCHEMA, orient="row")
        meta = {"storeframes.version": __version__, "storeframes.format": str(TABLE_FORMAT)}
        self._files.mark()
        self._files.storage.put(digest_key(row["tracker"], row["day"]), parquet_bytes(frame, meta, arrow=False))

    def read(self, tracker: str, day: date) -> dict[str, Any] | None:
        """The kept digest of ``tracker``'s ``day`` as a row; None when none is kept."""
        frames = self._files.read_tables([digest_key(tracker, day)], DIGEST_SCHEMA)
        return frames[0].row(0, named=True) if frames and frames[0].height else None

    def days(self, tracker: str) -> list[date]:
        """The days of ``tracker`` that have a kept digest, oldest first."""
        days = []
        for key in self._files.keys(f"digests/tracker={tracker}/"):
            name = key.rsplit("/", 1)[-1]
            if name.startswith("day=") and name.endswith(".parquet"):
                try:
                    days.append(date.fromisoformat(name[4:-8]))
                except ValueError:
                    continue
        return sorted(days)
