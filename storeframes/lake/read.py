"""Reading a published team table back: :func:`read_table`, at its newest version, a version or a moment.

A table published by :func:`storeframes.publish` is a Delta Lake table at ``<lake>/<table>``
(a folder, or ``s3://bucket/prefix`` with ``storage_options`` as for
:class:`~storeframes.Client`). Every table read here is recorded for this process
(:func:`reads`: where, which table, which version), so that a notebook's manifest can say
which versions an analysis read.

>>> import storeframes as sf
>>> sf.read_table("team-lake", "versions", version=3).collect()  # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote

import polars as pl
from polars.io.plugins import register_io_source

from .._tracebacks import user_facing
from .._version import install_hint
from ..cache.stores import store_for
from ..errors import ConfigurationError, InvalidParameterError, LakeError, StoreframesError
from ..kept.tables import SCANS_NEST
from ..wire.safety import shown_url

__all__ = ["BOOKKEEPING", "SCANS_DELTA", "LakeRead", "read_table", "reads", "scan"]

BOOKKEEPING = ("_cell", "_answer", "_row")
"""The columns a published current table holds beside the table's own: the row's cell (an id of its
endpoint, scope, app or keyword, metric and day), the cache answer the row comes from, and the row's place
among its cell's rows. :func:`read_table` leaves them out."""

SCANS_DELTA = tuple(int(n) for n in pl.__version__.split(".")[:2] if n.isdigit()) >= (1, 31)
"""Whether :func:`polars.scan_delta` reads the tables of deltalake 1 (from polars 1.31; 1.30 asks deltalake for a
schema method it no longer has); before, a table is read through its pyarrow dataset."""

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_ALLOWED = "a folder path or a bucket address such as s3://bucket/prefix"
_SECRET = re.compile(r"secret|token|password|key|sas|credential", re.IGNORECASE)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_HTTP_STATUS = re.compile(r"[1-5][0-9]{2} [A-Za-z][A-Za-z \-]{0,40}")
_CHECKED = 100
"""How many versions, from the newest, a refusal of a version whose files are gone looks at to say which can be read."""


@dataclass(frozen=True)
class LakeRead:
    """One table :func:`read_table` read in this process: the lake's address (a folder, or ``s3://bucket/prefix``:
    credentials never), the table's name and the version read."""

    uri: str
    table: str
    version: int


_READS: list[LakeRead] = []
_LOCK = threading.Lock()


def reads() -> list[LakeRead]:
    """Every table :func:`read_table` read in this process, in the order read (repeats included).

    >>> from storeframes.lake import reads
    >>> reads()  # doctest: +SKIP
    [LakeRead(uri='s3://team-bucket/lake', table='versions', version=3)]
    """
    with _LOCK:
        return list(_READS)


@dataclass(frozen=True)
class Where:
    """Where a Delta table lives: the address delta-rs opens, the one shown (no credentials), its options."""

    uri: str
    lake: str
    table: str
    options: dict[str, str] | None
    store: Any = field(default=None, repr=False, compare=False)

    def read(self, key: str) -> bytes:
        """The bytes of the file ``key`` of the table (``_delta_log/00000000000000000003.json``)."""
        if self.store is None:
            with open(os.path.join(self.uri, *key.split("/")), "rb") as file:
                return file.read()
        return bytes(self.store.get(f"{self.table}/{key}"))

    @property
    def shown(self) -> str:
        """The table's address as it may be shown."""
        return f"{self.lake}/{self.table}"

    def __repr__(self) -> str:
        return f"Where({self.shown!r})"

    def scrubbed(self, text: str) -> str:
        """``text`` with every credential of the options replaced by ``***``."""
        for name, value in (self.options or {}).items():
            if _SECRET.search(name) and len(str(value)) >= 4:
                text = text.replace(str(value), "***")
        return text


def is_address(place: Any) -> bool:
    """Whether ``place`` is a bucket address (``s3://...``), not a folder."""
    found = _SCHEME.match(place) if isinstance(place, str) else None
    return found is not None and found.group(1).lower() != "file"


def failure(place: Where, exc: BaseException, *, what: str, doing: str = "read") -> LakeError:
    """A :class:`~storeframes.LakeError` for ``exc``, a failure of delta-rs or of the store while ``what``
    (``"publish"``, ``"read_table"``) used the table at ``place``: the lake, the table and the cause in words,
    never a credential nor the storage library's own text (its colour codes, the request it made).

    >>> failure(where("s3://no-such-bucket/lake", "metrics", None, what="publish"), exc, what="publish")  # doctest: +SKIP
    LakeError("sf.publish could not read the table 'metrics' of the lake s3://no-such-bucket/lake: no such bucket: ...")
    """
    text = _ANSI.sub("", str(exc))
    lines = [line.strip(" ↳") for line in text.splitlines() if line.strip(" ↳")]
    cause = lines[-1][:300] if lines else type(exc).__name__  # delta-rs's innermost cause (a folder's error)
    store = place.store
    if store is not None and hasattr(store, "_failure"):  # a bucket: what the store's own failures would say
        if hasattr(exc, "cause"):  # the store's own already
            said = exc
        else:  # delta-rs's, its colour codes taken out (the server's answer in it is never repeated)
            status = next((line for line in lines if _HTTP_STATUS.fullmatch(line)), None)
            text += f"\nstatus code: {status}" if status else ""  # as the store's own library says it
            plain = FileNotFoundError(text) if isinstance(exc, FileNotFoundError) else OSError(text)
            said = store._failure(doing, place.table, plain)
        reason = str(said).rsplit(": ", 1)[-1]  # a status and code, a network failure, or only the error's type
        if getattr(said, "cause", None) is not None:
            cause = store.explain(said).replace("may not write under", f"may not {doing} under")
        elif reason not in ("OSError", "FileNotFoundError", "not found"):
            cause = f"{reason} ({store.explain(said)})"
        elif isinstance(exc, OSError):  # of the store, with nothing more to say than what to look at
            cause = store.explain(said)
    return LakeError(
        f"sf.{what} could not {doing} the table {place.table!r} of the lake {place.lake}: {place.scrubbed(cause)}",
        lake=place.lake,
        table=place.table,
        operation=what,
    )


def where(lake: Any, table: str, storage_options: Mapping[str, Any] | None, *, what: str) -> Where:
    """The Delta table ``table`` of ``lake`` (a folder, or a bucket address with ``storage_options``); a bad
    address is refused (credentials never shown) before anything is read or written."""
    if isinstance(lake, os.PathLike):
        lake = os.fspath(lake)
    if not isinstance(lake, str) or not lake.strip():
        raise InvalidParameterError("lake", lake, _ALLOWED, endpoint=what)
    if storage_options is not None and not isinstance(storage_options, Mapping):
        raise InvalidParameterError(
            "storage_options", type(storage_options).__name__, "a mapping of texts (None for a folder)", endpoint=what
        )
    found = _SCHEME.match(lake)
    if found is None or found.group(1).lower() == "file":
        if storage_options:
            raise InvalidParameterError(
                "storage_options", "(given)", "None with a folder: they go with a bucket address", endpoint=what
            )
        folder = os.path.abspath(os.path.expanduser(lake[len(found.group(0)) :] if found else lake))
        for path in (folder, os.path.join(folder, table)):
            if os.path.exists(path) and not os.path.isdir(path):  # delta-rs would panic on it
                raise InvalidParameterError("lake", lake, f"{_ALLOWED}: {path} is a file, not a folder", endpoint=what)
        return Where(os.path.join(folder, table), folder, table, None)
    try:
        store = store_for(lake, storage_options)
        addresses, options = store.locate([table])
    except (ValueError, TypeError, ConfigurationError, NotImplementedError) as exc:
        raise InvalidParameterError("lake", shown_url(lake), f"{_ALLOWED} ({exc})", endpoint=what) from None
    finally:
        del storage_options
    return Where(addresses[0], store.location, table, dict(options or {}), store)


def needs_deltalake(what: str) -> None:
    """An ImportError naming the extra, where deltalake is missing.

    >>> needs_deltalake("read_table")  # with deltalake installed: nothing  # doctest: +SKIP
    """
    try:
        import deltalake  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"sf.{what} needs deltalake 1.1 or newer: {install_hint('lake')}") from exc


def scan(delta: Any) -> pl.LazyFrame:
    """A lazy frame of a loaded ``deltalake.DeltaTable`` at its loaded version, with every column of the table
    (those of the merge too).

    >>> scan(deltalake.DeltaTable("team-lake/metrics")).collect_schema().names()[-3:]  # doctest: +SKIP
    ['_cell', '_answer', '_row']
    """
    if SCANS_DELTA:
        return pl.scan_delta(delta)
    return pl.scan_pyarrow_dataset(delta.to_pyarrow_dataset())


class _TableSource:
    """What a :func:`read_table` LazyFrame calls when it is collected: the rows of the version it loaded."""

    def __init__(self, delta: Any, place: Where, schema: pl.Schema):
        self._delta = delta
        self._place = place
        self._schema = schema

    def __call__(
        self, with_columns: list[str] | None, predicate: pl.Expr | None, n_rows: int | None, _batch: int | None
    ) -> Iterator[pl.DataFrame]:
        columns = list(self._schema) if with_columns is None else list(with_columns)
        wanted = [
            *columns,
            *(n for n in (predicate.meta.root_names() if predicate is not None else []) if n not in columns),
        ]
        try:
            if SCANS_NEST:  # polars 1.35 or newer: the files scanned here, filters pushed into their reads
                lazy = scan(self._delta).select(wanted)
            else:  # a Parquet scan collected inside a source waits for ever before 1.35: read by pyarrow
                lazy = pl.DataFrame(self._delta.to_pyarrow_dataset().to_table(columns=wanted)).lazy()
            if predicate is not None:
                lazy = lazy.filter(predicate)
            lazy = lazy.select([pl.col(name).cast(self._schema[name]) for name in columns])
            frame = (lazy.head(n_rows) if n_rows is not None else lazy).collect()
        except FileNotFoundError:
            failed = LakeError(
                f"version {self._delta.version()} of {self._place.shown} lost data files since sf.read_table made "
                "this frame (a vacuum removed them): read the table again, at a version whose files are there",
                lake=self._place.lake,
                table=self._place.table,
                operation="read_table",
            )
        except OSError as exc:
            failed = failure(self._place, exc, what="read_table")
        else:
            yield frame
            return
        raise failed  # outside the handling: no error of the reader (the request in it) is its context

    def __reduce__(self) -> Any:
        # the Delta table it reads holds the bucket's access (its storage options): never written into a plan
        raise ConfigurationError(
            f"a LazyFrame of sf.read_table(..., {self._place.table!r}) reads the lake when it is collected and is "
            "not serialised, as it would carry the lake's access: serialise the collected frame, or call "
            "sf.read_table again where the plan is used"
        )


def _spans(versions: list[int]) -> str:
    """``[0, 3, 4, 5]`` as ``"0 and 3 to 5"``."""
    runs: list[list[int]] = []
    for v in sorted(versions):
        if runs and v == runs[-1][-1] + 1:
            runs[-1].append(v)
        else:
            runs.append([v])
    parts = [str(r[0]) if len(r) == 1 else f"{r[0]} to {r[-1]}" for r in runs]
    return " and ".join([", ".join(parts[:-1]), parts[-1]]) if len(parts) > 1 else parts[0]


def _stored(place: Where) -> set[str]:
    """The files the table at ``place`` holds now, by their path in the table (``part-....parquet``)."""
    if place.store is None:
        found = set()
        for folder, _, names in os.walk(place.uri):
            relative = os.path.relpath(folder, place.uri)
            found |= {name if relative == "." else f"{relative}/{name}".replace(os.sep, "/") for name in names}
        return found
    return {unquote(key.split("/", 1)[1]) for key in place.store.list(f"{place.table}/") if "/" in key}


def _missing(delta: Any, place: Where, there: set[str]) -> bool:
    """Whether a data file of ``delta``'s loaded version is not among ``there``."""
    return any(unquote(uri).rsplit(f"/{place.table}/", 1)[-1] not in there for uri in delta.file_uris())


def _files_there(delta: Any, place: Where, parameter: str, value: Any) -> None:
    """Refuse the loaded version of ``delta`` when data files of it are gone (removed by a vacuum), saying which
    versions (of the :data:`_CHECKED` newest) can still be read."""
    from deltalake import DeltaTable

    failed: OSError | None = None
    try:
        there = _stored(place)
    except OSError as exc:
        failed = exc
    if failed is not None:
        raise failure(place, failed, what="read_table")
    if not _missing(delta, place, there):
        return
    version = delta.version()
    other = DeltaTable(place.uri, storage_options=place.options)
    newest = other.version()
    readable = []
    for each in range(newest, max(-1, newest - _CHECKED), -1):
        other.load_as_version(each)
        if not _missing(other, place, there):
            readable.append(each)
    oldest = max(0, newest - _CHECKED + 1)
    which = f"versions {_spans(readable)}" if readable else "none of them"
    raise InvalidParameterError(
        parameter,
        value,
        f"a version of {place.shown} whose data files are still there: version {version}'s were removed (by a "
        f"vacuum); of versions {oldest} to {newest} (the newest), {which} can be read",
        endpoint="read_table",
    )


def _as_of(value: Any) -> datetime:
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            raise InvalidParameterError(
                "as_of", value, "a datetime or an ISO text such as '2026-11-20T08:00:00+00:00'", endpoint="read_table"
            ) from None
    if not isinstance(value, datetime):
        raise InvalidParameterError("as_of", value, "a datetime or an ISO text", endpoint="read_table")
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


@user_facing
def read_table(
    lake: str | os.PathLike[str],
    table: str,
    version: int | None = None,
    as_of: datetime | str | None = None,
    *,
    storage_options: Mapping[str, Any] | None = None,
) -> pl.LazyFrame:
    """A table published with :func:`storeframes.publish`, at its newest version, at ``version`` or as it was at
    the moment ``as_of``, as a lazy frame.

    ``lake`` is the folder or bucket address given to :func:`~storeframes.publish`
    (``s3://bucket/prefix`` with ``storage_options`` as for :class:`~storeframes.Client`),
    ``table`` a published table's name (``"versions"``, or ``"metrics_snapshots"`` for the
    snapshots published beside it). ``version`` (a whole number, as
    :attr:`~storeframes.lake.PublishResult.version` gives) and ``as_of`` (a
    :class:`~datetime.datetime` or an ISO text, UTC when it has no zone: the newest
    version committed at or before it) choose an earlier state; give one of them at most. An ``as_of``
    before the table's first version (the first that holds what was published) is refused with
    :class:`~storeframes.InvalidParameterError`, naming when that version was committed.

    Output columns: those of the table, with the dtypes :func:`storeframes.scan` gives (a
    snapshot table has ``snapshot_date`` too); the columns a current table keeps for the
    merge (``_cell``, ``_answer``, ``_row``) are left out, so the newest version equals
    ``sf.scan(table)`` of the cache published. The version read is recorded for this
    process (:func:`reads`).

    >>> import storeframes as sf
    >>> sf.read_table("team-lake", "versions").collect()  # doctest: +SKIP
    >>> sf.read_table("team-lake", "versions", as_of="2026-11-20T00:00:00Z").collect()  # doctest: +SKIP
    """
    given = {"options": storage_options}
    del storage_options  # a frame a failure's traceback shows holds no credential
    lazy, read = opened(lake, table, version, as_of, given.pop("options"))
    with _LOCK:
        _READS.append(read)
    return lazy


def _commit(place: Where, version: int) -> dict[str, Any] | None:
    """The commit information of ``version`` of the table at ``place``; None where its log file is gone."""
    try:
        lines = place.read(f"_delta_log/{version:020d}.json").decode().splitlines()
    except (FileNotFoundError, OSError):
        return None
    for line in lines:
        action = json.loads(line) if line.strip() else {}
        if "commitInfo" in action:
            return dict(action["commitInfo"])
    return {}


def _after_first(place: Where, moment: datetime, as_of: Any) -> None:
    """Refuse ``moment`` before the table's first version: the first that holds what was published (a table
    :func:`storeframes.publish` made starts with an empty version 0, its rows in version 1), which deltalake
    would otherwise read as the table it was not yet. Nothing when its log is gone (a checkpointed table)."""
    first = _commit(place, 0)
    if first is None or "timestamp" not in first:
        return
    version = 0
    if str(first.get("operation", "")).upper() == "CREATE TABLE":
        then = _commit(place, 1)
        if then is not None and "timestamp" in then:
            first, version = then, 1
    made = datetime.fromtimestamp(int(first["timestamp"]) / 1000, tz=UTC)
    if moment < made:
        raise InvalidParameterError(
            "as_of",
            as_of,
            f"a moment at or after {made.isoformat(timespec='milliseconds')}, when {place.shown} was first "
            f"published (version {version}): it did not exist at {moment.isoformat()}",
            endpoint="read_table",
        )


def _committed_by(delta: Any, place: Where, moment: datetime, newest: int) -> None:
    """Load the newest version committed at or before ``moment`` by its commit's own time: delta-rs goes by
    the time its log file was written, a few milliseconds later, so a version asked for at the moment of its
    commit would otherwise be the one before it."""
    at = moment.timestamp() * 1000
    while delta.version() < newest:
        after = _commit(place, delta.version() + 1)
        if not after or "timestamp" not in after or int(after["timestamp"]) > at:
            return
        delta.load_as_version(delta.version() + 1)


def _loaded(
    place: Where, table: str, version: int | None, moment: datetime | None, as_of: Any
) -> tuple[Any, StoreframesError | None]:
    """The Delta table at ``place`` loaded at ``version`` or ``moment`` (the newest without them), or the error
    that says why it cannot be, made outside the handling of delta-rs's own."""
    from deltalake import DeltaTable
    from deltalake.exceptions import DeltaError, TableNotFoundError

    try:
        delta = DeltaTable(place.uri, storage_options=place.options)
    except TableNotFoundError:
        return None, InvalidParameterError(
            "table", table, f"a table published to {place.lake} (none is at {place.shown})", endpoint="read_table"
        )
    except (DeltaError, OSError) as exc:
        return None, failure(place, exc, what="read_table")
    newest = delta.version()
    parameter, value = ("version", version) if version is not None else ("as_of", as_of)
    if version is not None and version > newest:
        return None, InvalidParameterError(
            "version", version, f"a version of {place.shown}: {newest} is its newest", endpoint="read_table"
        )
    try:
        if version is not None:
            delta.load_as_version(version)
            if delta.version() != version:  # deltalake 1.1 stays at the newest version below one it lacks
                raise ValueError(f"version {delta.version()} was loaded")
        elif moment is not None:
            delta.load_as_version(moment)
            _committed_by(delta, place, moment, newest)
    except (DeltaError, OSError, ValueError) as exc:
        if isinstance(exc, OSError) and not isinstance(exc, FileNotFoundError):
            return None, failure(place, exc, what="read_table")
        cause = (_ANSI.sub("", place.scrubbed(str(exc))).strip().splitlines() or [type(exc).__name__])[0]
        return None, InvalidParameterError(
            parameter,
            value,
            f"a version of {place.shown} that can still be loaded, up to {newest} (the newest): {cause[:200]}",
            endpoint="read_table",
        )
    return delta, None


def opened(
    lake: Any, table: Any, version: Any, as_of: Any, storage_options: Mapping[str, Any] | None
) -> tuple[pl.LazyFrame, LakeRead]:
    """What :func:`read_table` gives (bad input refused as it says), and what it read, not recorded: a
    manifest's check reads a recorded version again with it."""
    if not isinstance(table, str) or not re.fullmatch(r"[A-Za-z0-9_]+", table):
        raise InvalidParameterError(
            "table", table, "a published table's name, such as 'versions'", endpoint="read_table"
        )
    if version is not None and as_of is not None:
        raise InvalidParameterError(
            "as_of", as_of, "None when version is given: one of them at most", endpoint="read_table"
        )
    if version is not None and (isinstance(version, bool) or not isinstance(version, int) or version < 0):
        raise InvalidParameterError("version", version, "a whole number, 0 or more", endpoint="read_table")
    moment = _as_of(as_of) if as_of is not None else None
    place = where(lake, table, storage_options, what="read_table")
    del storage_options
    needs_deltalake("read_table")
    if moment is not None:
        _after_first(place, moment, as_of)
    delta, failed = _loaded(place, table, version, moment, as_of)
    if failed is not None:  # raised here: no error of delta-rs (its frames hold the options) is its context
        raise failed
    if version is not None or moment is not None:
        _files_there(delta, place, "as_of" if version is None else "version", as_of if version is None else version)
    found = scan(delta).collect_schema()  # the table's schema only: its files are read when collected
    schema = pl.Schema({name: dtype for name, dtype in found.items() if name not in BOOKKEEPING})
    source = register_io_source(_TableSource(delta, place, schema), schema=schema)
    return source, LakeRead(place.lake, table, delta.version())
