"""Frames for pandas users: :func:`to_pandas` keeps every column's type.

polars' own ``frame.to_pandas()`` gives numpy dtypes, and they cannot hold everything a
frame holds: a day becomes a midnight (``datetime64``), a whole-number column with nulls
becomes floats, a flag column with nulls and a decimal price ``object`` columns.
:func:`to_pandas` gives pyarrow-backed columns (``pd.ArrowDtype``) instead: days stay days,
UTC timestamps stay UTC, decimals stay decimals, whole numbers stay whole with their nulls as
``pd.NA``, and a list column (``categories``) stays a list per row. ``pl.from_pandas`` turns
the result back into the very same frame.

Needs the ``pandas`` extra (pandas 2.2 or newer: ``pip install ".[pandas]"`` from a checkout).
pandas and pyarrow are imported when :func:`to_pandas` is first called, not with the package.

>>> import storeframes as sf
>>> sf.configure(sandbox=True)  # doctest: +SKIP
>>> metadata = sf.to_pandas(sf.metadata_frame(["3233849169"]))  # doctest: +SKIP
>>> metadata.dtypes["release_date"]  # doctest: +SKIP
timestamp[us, tz=UTC][pyarrow]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from ._version import install_hint

if TYPE_CHECKING:
    import pandas as pd  # type: ignore[import-untyped, import-not-found, unused-ignore]
    import pyarrow as pa

__all__ = ["to_pandas"]


def to_pandas(frame: pl.DataFrame | pl.LazyFrame) -> pd.DataFrame:
    """A pandas DataFrame of ``frame`` in which every column keeps its type.

    ``frame`` is a polars DataFrame, as the frame functions, ``rank_history``, the
    ``storeframes.analysis`` functions and ``Client.ledger`` return, or a LazyFrame (such as
    ``sf.scan``'s), collected first. Each column becomes a pyarrow-backed pandas column (``pd.ArrowDtype``) of the
    same type:

    ======================  ==================================  =====================
    polars                  pandas dtype                        a value
    ======================  ==================================  =====================
    String                  large_string[pyarrow]               str
    Int64                   int64[pyarrow]                      int
    Float64                 double[pyarrow]                     float
    Boolean                 bool[pyarrow]                       bool
    Date                    date32[day][pyarrow]                datetime.date
    Datetime("us", "UTC")   timestamp[us, tz=UTC][pyarrow]      a UTC pd.Timestamp
    Decimal(38, 4)          decimal128(38, 4)[pyarrow]          decimal.Decimal
    List(String)            list<item: large_string>[pyarrow]   a list of str
    ======================  ==================================  =====================

    A null is ``pd.NA`` in every column. Lists have 32-bit offsets (``list``, not
    ``large_list``): the type whose ``Series.explode`` gives one row per element on pandas 2.2
    as on pandas 3; ``.list.len()`` and ``.list.flatten()`` work too.
    ``pl.from_pandas(to_pandas(frame))`` equals ``frame``, dtypes included.

    Some older code and libraries expect numpy dtypes: for them, ``frame.to_pandas()`` gives
    numpy columns, at a cost: days become midnights (``datetime64``), whole numbers with nulls
    become floats (nulls ``NaN``), flags with nulls and decimals ``object`` columns, and
    ``pl.from_pandas`` no longer gives the frame back.

    Raises:
        TypeError: ``frame`` is not a polars DataFrame or LazyFrame.
        ImportError: pandas is not installed; the message says how to install it.
    """
    data = _polars_frame(frame)
    try:
        import pandas as pd
    except ImportError as exc:
        raise ImportError(f"storeframes.to_pandas needs pandas 2.2 or newer: {install_hint('pandas')}") from exc
    if not data.width:
        return pd.DataFrame(index=pd.RangeIndex(data.height))
    # texts as large_string: polars' newest level gives string_view, and pyarrow cannot make
    # pandas lists of string_view
    table = data.to_arrow(compat_level=pl.CompatLevel.oldest())
    schema = _small_lists_schema(table.schema)
    if not schema.equals(table.schema):
        table = table.cast(schema)
    return table.to_pandas(types_mapper=pd.ArrowDtype)


def _polars_frame(frame: Any) -> pl.DataFrame:
    """``frame`` as a polars DataFrame, or a TypeError naming what was given and what is taken."""
    if isinstance(frame, pl.LazyFrame):
        return frame.collect()
    if isinstance(frame, pl.DataFrame):
        return frame
    kind = type(frame)
    given = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__.partition('.')[0]}.{kind.__name__}"
    hint = ""
    if isinstance(frame, pl.Series):
        hint = " (for a Series: series.to_frame())"
    elif kind.__module__.partition(".")[0] == "pandas":
        hint = " (a pandas object needs no conversion)"
    raise TypeError(
        f"to_pandas takes a polars DataFrame or LazyFrame, as the frame functions return; got {given}{hint}"
    )


def _small_lists_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` with every large list made a list (32-bit offsets), nested ones included."""
    import pyarrow as pa

    return pa.schema([field.with_type(_small_lists(field.type)) for field in schema], metadata=schema.metadata)


def _small_lists(dtype: pa.DataType) -> pa.DataType:
    import pyarrow as pa

    if pa.types.is_large_list(dtype) or pa.types.is_list(dtype):
        return pa.list_(dtype.value_field.with_type(_small_lists(dtype.value_type)))
    if pa.types.is_struct(dtype):
        return pa.struct([field.with_type(_small_lists(field.type)) for field in dtype])
    return dtype
