"""The ledger's files: the rows of credits spent and saved, kept as ``ledger/<name>.parquet``."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import polars as pl

from .._version import __version__
from ..errors import CacheUnavailableError, warn
from ..ledger import conform_ledger
from .files import CacheWarning, Files
from .layout import TABLE_FORMAT, ledger_key
from .parquet import footer, newer_format, newer_writer, parquet_bytes, unreadable

if TYPE_CHECKING:  # pyarrow is imported when first needed, not with the package
    import pyarrow as pa


class LedgerFiles:
    """The ledger of a cache, as ``cache.ledger``: rows of :data:`~storeframes.ledger.LEDGER_SCHEMA` kept as
    ``ledger/<name>.parquet``. A session writes a small file per request, its reservation first, then its rows
    over it, merged into files of up to 1000 rows now and then (see :mod:`storeframes.credits`).

    >>> sf.Cache("cache").ledger.read()["cost"].sum()  # doctest: +SKIP
    """

    def __init__(self, files: Files):
        self._files = files

    def write(self, name: str, rows: pl.DataFrame | pa.Table, *, must: bool = False) -> bool:
        """Keep ledger rows as ``ledger/<name>.parquet``; False, with a warning, when they cannot be written.

        With ``must`` (a request's reservation, written before it is sent), a failed write is a
        :class:`~storeframes.CacheUnavailableError` naming the file and the cause instead: the
        request is not sent.
        """
        if rows.is_empty() if isinstance(rows, pl.DataFrame) else rows.num_rows == 0:
            return True
        meta = {"storeframes.version": __version__, "storeframes.format": str(TABLE_FORMAT)}
        try:
            # by polars: no pyarrow to import for a call's few rows (the ledger's readers take the file's metadata)
            if isinstance(rows, pl.DataFrame):
                data = parquet_bytes(rows, meta, arrow=False)
            else:
                import pyarrow.parquet as pq

                buffer = io.BytesIO()
                pq.write_table(rows.replace_schema_metadata(meta), buffer)
                data = buffer.getvalue()
            self._files.mark()
            self._files.storage.put(ledger_key(name), data)
        except OSError as exc:
            if must:
                raise self._unwritten(name, exc) from None
            warn(
                f"could not write the ledger to the cache at {self._files.location}: {exc}",
                CacheWarning,
            )
            return False
        return True

    def _unwritten(self, name: str, error: OSError) -> CacheUnavailableError:
        """The error of a reservation that could not be written: nothing was sent."""
        files = self._files
        return CacheUnavailableError(
            f"cannot write the ledger file {ledger_key(name)} in the cache at {files.location} ({error}); likely "
            f"cause: {files.storage.explain(error)}. Nothing was sent: a request goes out only once its ledger row "
            "is kept, so that every credit the service may charge is counted. Free space (or fix the access) and "
            "run again",
            location=files.location,
            operation="write",
        )

    def remove(self, name: str) -> None:
        """Remove the ledger file ``ledger/<name>.parquet`` (once its rows are merged into another)."""
        self._files.storage.delete(ledger_key(name))

    def read(self) -> pl.DataFrame:
        """Every ledger row kept in the cache, oldest first, each once.

        A row is known by its ``row`` id: one found in two files (a session's small file
        and the chunk it was merged into, when a process stopped between writing the one
        and removing the other) is counted once. Files of earlier versions are read with
        ``service`` ``"unknown"`` and ids made of the file's name and the row's position.
        A ``reserved`` row is a request in flight, or one whose end was never written (its
        process killed): its estimate, counted as spent.
        """
        import pyarrow as pa
        import pyarrow.parquet as pq

        from ..ledger import LEDGER_SCHEMA, ledger_arrow

        files = self._files
        arrow_schema = ledger_arrow()
        tables: list[pa.Table] = []
        legacy: list[pl.DataFrame] = []
        for key in files.keys("ledger/"):
            name = key.removeprefix("ledger/")
            if not key.endswith(".parquet") or "/" in name:
                continue
            meta: dict[str, str] = {}
            try:
                with pq.ParquetFile(pa.BufferReader(files.storage.get(key))) as handle:  # quicker than read_table
                    meta = footer(handle.metadata.metadata)  # the file's, whichever writer wrote it
                    if newer_format(meta):
                        files.skip_newer(key)
                        continue
                    table = handle.read()
                if table.schema.names == arrow_schema.names and not (
                    table.column("service").null_count or table.column("row").null_count
                ):
                    tables.append(table.cast(arrow_schema))
                else:
                    legacy.append(conform_ledger(pl.DataFrame(table), name.removesuffix(".parquet")))
            except FileNotFoundError:  # merged and removed since the listing
                continue
            except unreadable() as exc:
                if newer_writer(meta):
                    files.skip_newer(key)
                else:
                    files.set_aside(key, exc)
        frames = legacy
        if tables:
            frames = [pl.DataFrame(pa.concat_tables(tables)).cast(LEDGER_SCHEMA), *legacy]
        if not frames:
            return pl.DataFrame(schema=LEDGER_SCHEMA)
        rows = pl.concat(frames) if len(frames) > 1 else frames[0]
        return rows.unique("row", keep="first", maintain_order=True).sort("time", "row")
