"""The bytes of cache files: Parquet written and read by polars, footers, zstd frames, and what a file's
format says (of this version, or of a newer one); what reading a damaged file raises."""

from __future__ import annotations

import contextlib
import functools
import inspect
import io
import re
import sys
import zlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import polars as pl

from .._version import __version__
from ..json_bodies import TooLarge, inflate
from .layout import FORMAT

if TYPE_CHECKING:  # pyarrow is imported when first needed, not with the package
    import pyarrow as pa

ZSTD_LEVEL = 3  # zstd's default: 23.6 MB of history JSON in 25 ms to 1.6 MB (level 1: 22 ms, the same size)
# a zstd frame saying it holds more than this many times its size (or 1 MB) is read as a stream, as its content
# comes, never allocated at once on its word
_MOST_RATIO = 64


# -- Parquet through polars ----------------------------------------------------------------


@functools.cache
def polars_writes_arrow_schema() -> bool:
    """Whether this polars's ``write_parquet`` takes ``arrow_schema`` (1.39 and later)."""
    return "arrow_schema" in inspect.signature(pl.DataFrame.write_parquet).parameters


@functools.lru_cache(maxsize=256)
def _arrow_schema(columns: tuple[tuple[str, pl.DataType], ...]) -> pa.Schema:
    """The Arrow schema polars writes for ``columns``, worked out once per set of columns."""
    return pl.DataFrame(schema=dict(columns)).to_arrow().schema


def parquet_bytes(
    frame: pl.DataFrame, meta: Mapping[str, str], *, statistics: bool = True, arrow: bool = True
) -> bytes:
    """``frame`` as the bytes of a Parquet file (zstd) with the key-value metadata ``meta``.

    Written by polars straight from the frame: on the 1.8 M-row history frame, 0.14 s and
    1.9 MB, where ``to_arrow()`` + ``pq.write_table`` took 0.31 s and 2.6 MB (snappy), and
    polars reads it back in 0.02 s. ``statistics=False`` leaves out column statistics (min
    and max of every text column cost a fifth of the write). The metadata is the file's, and
    also the Arrow schema's (where pyarrow's ``read_table`` looks for it), unless ``arrow`` is
    False (which spares importing pyarrow).
    """
    buffer = io.BytesIO()
    options: dict[str, Any] = {"compression": "zstd", "statistics": statistics, "metadata": dict(meta)}
    if arrow and polars_writes_arrow_schema():  # the metadata in the Arrow schema too, where pyarrow looks
        with contextlib.suppress(TypeError, ValueError, pl.exceptions.PolarsError):  # a column Arrow cannot name
            options["arrow_schema"] = _arrow_schema(tuple(frame.schema.items())).with_metadata(dict(meta))
    frame.write_parquet(buffer, **options)
    return buffer.getvalue()


def parquet_meta(source: bytes) -> dict[str, str]:
    """A Parquet file's key-value metadata, from its footer."""
    return pl.read_parquet_metadata(io.BytesIO(source))


def parquet_columns(source: bytes) -> pl.Schema:
    """A Parquet file's columns as polars reads them, from its footer."""
    return pl.Schema(pl.read_parquet_schema(io.BytesIO(source)))


def read_parquet(source: bytes) -> pl.DataFrame:
    """A whole Parquet file, from its bytes."""
    return pl.read_parquet(io.BytesIO(source), hive_partitioning=False, use_pyarrow=False)


def footer(metadata: Mapping[bytes, bytes] | None) -> dict[str, str]:
    """A Parquet file's key-value metadata as text."""
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, v in (metadata or {}).items()}


def rows_of(data: bytes, meta: Mapping[str, str]) -> int:
    """The rows of an index file: as its footer's ``storeframes.rows`` says (format 2), else counted
    from the Parquet footer (files of format 1)."""
    given = meta.get("storeframes.rows")
    if given is not None:
        return int(given)
    import pyarrow as pa
    import pyarrow.parquet as pq

    return int(pq.read_metadata(pa.BufferReader(data)).num_rows)


def rows_in(data: bytes) -> int:
    """The rows of a Parquet file, from the footer of its bytes (none of its rows decoded)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    return int(pq.read_metadata(pa.BufferReader(data)).num_rows)


# -- zstd ------------------------------------------------------------------------------------


def zstd(data: bytes) -> bytes:
    """``data`` as one zstd frame (level :data:`ZSTD_LEVEL`), as ``zstd`` writes it."""
    import pyarrow as pa

    return pa.Codec("zstd", compression_level=ZSTD_LEVEL).compress(data, asbytes=True)


def _zstd_size(data: bytes) -> int | None:
    """The decompressed size a zstd frame's header states; None when it states none (or not a frame)."""
    if len(data) < 6 or data[:4] != b"\x28\xb5\x2f\xfd":
        return None
    descriptor = data[4]
    single = (descriptor >> 5) & 1
    at = 5 + (0 if single else 1) + (0, 1, 2, 4)[descriptor & 3]
    width = (1 if single else 0, 2, 4, 8)[descriptor >> 6]
    if width == 0 or len(data) < at + width:
        return None
    size = int.from_bytes(data[at : at + width], "little")
    return size + 256 if width == 2 else size


def unzstd(data: bytes, *, most: int | None = None, limit: int | None = None) -> bytes:
    """The content of a zstd file (``most``: at least its first ``most`` bytes); raises OSError when damaged,
    and :class:`~storeframes.json_bodies.TooLarge` when it holds more than ``limit`` bytes (decompressed a
    piece at a time, never past the limit; refused at once when the frame states a larger size)."""
    import pyarrow as pa

    size = _zstd_size(data)
    if most is None and size is not None and limit is not None and size > limit:
        raise TooLarge(limit)
    if most is None and size is not None and size <= max(_MOST_RATIO * len(data), 1 << 20):
        return pa.Codec("zstd").decompress(data, decompressed_size=size, asbytes=True)
    if most is None:
        return inflate(data, "zstd", sys.maxsize if limit is None else limit)
    with pa.CompressedInputStream(pa.BufferReader(data), "zstd") as stream:
        return bytes(stream.read(most))


# -- formats and damage ------------------------------------------------------------------------


def _version_key(text: str) -> tuple[int, ...]:
    """``"0.12.1rc1"`` as ``(0, 12, 1)``: the numbers a version starts with, for comparing."""
    numbers = []
    for part in text.split("."):
        digits = re.match(r"\d+", part)
        if digits is None:
            break
        numbers.append(int(digits.group()))
    return tuple(numbers)


def newer_format(meta: Mapping[str, str]) -> bool:
    """Whether a file's footer says it has a format this version does not know."""
    number = meta.get("storeframes.format", "")
    return number.isdigit() and int(number) > FORMAT


def newer_writer(meta: Mapping[str, str]) -> bool:
    """Whether a newer storeframes wrote a file (its format, or its version, is above this one's)."""
    version = meta.get("storeframes.version", "")
    return newer_format(meta) or (bool(version) and _version_key(version) > _version_key(__version__))


def cannot_reach(exc: BaseException) -> bool:
    """Whether reading failed because the store could not be read, not because the bytes are bad
    (no permission, a folder where a file should be, a connection): the file is left where it is."""
    return isinstance(exc, (PermissionError, IsADirectoryError, ConnectionError, TimeoutError))


_READ_ERRORS: tuple[type[BaseException], ...] = (
    OSError,
    EOFError,
    zlib.error,
    ValueError,
    KeyError,
    TypeError,
    pl.exceptions.PolarsError,
)


def unreadable(*also: type[BaseException]) -> tuple[type[BaseException], ...]:
    """What reading a damaged file raises: :data:`_READ_ERRORS`, pyarrow's errors once it is imported, and ``also``."""
    pa = sys.modules.get("pyarrow")
    return (*_READ_ERRORS, *also, *((pa.ArrowException,) if pa is not None else ()))
