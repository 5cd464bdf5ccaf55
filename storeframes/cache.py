"""The cache: raw answers, the index of what they cover, Parquet frames and the ledger.

The cache keeps its files in a :class:`~storeframes.store.Store`: a folder
(:class:`~storeframes.store.LocalStore`, the usual case, described here), a dict in
memory (:class:`~storeframes.store.MemoryStore`) or anything else with the same few
operations. Every file goes through the store, so the layout and formats below are the
same wherever the cache lives.

Layout (every file is written to a temporary name and renamed, so a reader never
sees half a file, and every name is unique, so processes sharing the folder never
overwrite each other)::

    <cache_dir>/
      answers/endpoint=<name>/<entry>.json.gz   the raw answer, its canonical request,
                                                fetched_at, cost and max_credit_cost
      index/endpoint=<name>/<entry>.parquet     one row per cell the answer covers
      frames/<table>/<entry>.parquet            a flattened frame of one answer
      ledger/<session>-<n>.parquet              ledger rows of one client session: small files
                                                ``<session>-r<n>`` as requests end, merged into
                                                chunks ``<session>-<chunk>`` (storeframes.credits)

An *entry* is one answer of the service to one request. Its index file is written
last and is what makes the entry visible. ``index``, ``frames`` and ``ledger`` are
plain Parquet datasets: ``pl.scan_parquet(f"{cache_dir}/index/**/*.parquet",
hive_partitioning=True)``, DuckDB's ``read_parquet`` or pandas read them as they are,
and every file carries its provenance (endpoint, canonical params, fetched_at, cost,
storeframes version) in its Parquet key-value metadata.

Nothing in the folder holds the API token: requests are keyed by their canonical
parameters, and answers are scrubbed of the token before they are written.

A file that cannot be read (truncated, corrupt) is set aside as ``<name>.corrupt``,
reported once with a :class:`CacheWarning`, and treated as a miss.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import json
import os
import secrets
import threading
import warnings
import zlib
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from . import planning
from ._version import __version__
from .answers import Response
from .catalog import ENDPOINTS, Endpoint, Freshness
from .ledger import LEDGER_ARROW, LEDGER_SCHEMA, SERVICE, conform_ledger
from .planning import Cell
from .store import LocalStore, MemoryStore, Store

__all__ = ["ENV_CACHE_DIR", "Cache", "CacheWarning", "Entry", "default_cache_dir"]

ENV_CACHE_DIR = "STOREFRAMES_CACHE_DIR"
FORMAT = 1
Refresh = Literal["auto", "always", "never"]
REFRESH_MODES: tuple[str, ...] = ("auto", "always", "never")
# an app the service reported as not available is asked again the next UTC day
_UNAVAILABLE_FRESHNESS = Freshness(current="utc_day")

INDEX_SCHEMA = pa.schema(
    [
        ("entry", pa.string()),
        ("service", pa.string()),
        ("scope", pa.string()),
        ("entity", pa.string()),
        ("facet", pa.string()),
        ("day", pa.date32()),
        ("fetched_at", pa.timestamp("us", tz="UTC")),
        ("cost", pa.int64()),
        ("max_credit_cost", pa.int64()),
        ("available", pa.bool_()),
        ("params", pa.string()),
    ]
)


class CacheWarning(UserWarning):
    """A cache file could not be read or written; the call went on without it."""


def default_cache_dir() -> Path:
    """``$STOREFRAMES_CACHE_DIR``, else the user's cache directory for storeframes."""
    configured = os.environ.get(ENV_CACHE_DIR)
    if configured:
        return Path(configured).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("storeframes", appauthor=False))


@dataclass(frozen=True)
class Entry:
    """One cached answer: which request, from which service, when, for how much, covering which cells."""

    id: str
    endpoint: str
    service: str
    scope: str
    params: Mapping[str, str]
    fetched_at: datetime
    cost: int
    max_credit_cost: int
    cells: frozenset[Cell]
    available: bool = True

    def share(self, cells: int) -> int:
        """The part of the entry's cost that ``cells`` of its cells stand for."""
        return round(self.cost * cells / len(self.cells)) if self.cells else 0


def _new_id(fetched_at: datetime, endpoint: str, params: Mapping[str, str]) -> str:
    digest = hashlib.sha256(json.dumps([endpoint, dict(params)], sort_keys=True).encode()).hexdigest()[:12]
    return f"{fetched_at.astimezone(UTC):%Y%m%dT%H%M%S%fZ}-{digest}-{secrets.token_hex(3)}"


def _parquet_bytes(table: pa.Table) -> bytes:
    """``table`` as the bytes of a Parquet file."""
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


def _name(key: str) -> str:
    """The file name of a key: its last part."""
    return key.rpartition("/")[2]


def _provenance(entry: Entry, **extra: str) -> dict[str, str]:
    """The Parquet key-value metadata that says where a file's rows come from."""
    meta = {
        "storeframes.version": __version__,
        "storeframes.endpoint": entry.endpoint,
        "storeframes.params": json.dumps(dict(entry.params)),  # in the catalog's order
        "storeframes.fetched_at": entry.fetched_at.astimezone(UTC).isoformat(),
        "storeframes.cost": str(entry.cost),
        "storeframes.max_credit_cost": str(entry.max_credit_cost),
        "storeframes.service": entry.service,
        "storeframes.available": str(entry.available).lower(),
    }
    meta.update({f"storeframes.{k}": v for k, v in extra.items()})
    return meta


_UNREADABLE = (OSError, EOFError, zlib.error, ValueError, KeyError, TypeError, pa.ArrowException)
# a temporary file or an answer without an index younger than this may be a write in progress
_STALE_SECONDS = 3600.0


class Cache:
    """A cache (see the module documentation for its layout), in a folder or another store.

    ``path_or_store`` is a folder (a path, kept in a :class:`~storeframes.store.LocalStore`)
    or any :class:`~storeframes.store.Store`. One :class:`Cache` may serve several
    clients and threads; several processes may share one folder. The index of each
    endpoint is read lazily and kept in memory; files written by other processes are
    picked up at the next lookup.

    >>> cache = Cache("./storeframes-cache")  # doctest: +SKIP
    >>> client = Client(cache_dir=cache)      # doctest: +SKIP
    >>> scratch = Cache(MemoryStore())        # doctest: +SKIP
    """

    def __init__(self, path_or_store: str | os.PathLike[str] | Store):
        if isinstance(path_or_store, (str, os.PathLike)):
            path_or_store = LocalStore(path_or_store)
        elif not isinstance(path_or_store, Store):
            raise TypeError(f"a cache lives in a folder path or a Store, got {path_or_store!r}")
        self.storage: Store = path_or_store
        """Where the files are kept."""
        self.path: Path | None = path_or_store.root if isinstance(path_or_store, LocalStore) else None
        """The folder of a cache kept in a folder; None for another store."""
        self._lock = threading.RLock()
        self._entries: dict[str, Entry] = {}
        self._files: dict[str, dict[str, str | None]] = {}  # endpoint -> index key -> entry id
        self._cells: dict[tuple[str, str, str], dict[Cell, list[Entry]]] = {}

    @property
    def location(self) -> str:
        """Where the cache lives, for people: its folder, ``"memory"``, or the store's repr."""
        if self.path is not None:
            return str(self.path)
        if isinstance(self.storage, MemoryStore):
            return "memory"
        return repr(self.storage)

    def __repr__(self) -> str:
        return f"Cache({self.location!r})" if self.path is not None else f"Cache({self.location})"

    @staticmethod
    def _prefix(kind: str, endpoint: str) -> str:
        return f"{kind}/endpoint={endpoint}/"

    def _answer_key(self, entry: Entry) -> str:
        return f"{self._prefix('answers', entry.endpoint)}{entry.id}.json.gz"

    def _index_key(self, entry: Entry) -> str:
        return f"{self._prefix('index', entry.endpoint)}{entry.id}.parquet"

    # -- writing ------------------------------------------------------------------

    def store(
        self,
        response: Response,
        *,
        service: str,
        scope: str,
        cells: Iterable[Cell],
        available: bool = True,
        scrub: Callable[[str], str] = lambda text: text,
    ) -> Entry | None:
        """Keep one answer; returns its entry, or None (with a warning) when it cannot be written."""
        entry = Entry(
            id=_new_id(response.fetched_at, response.endpoint, response.params),
            endpoint=response.endpoint,
            service=service,
            scope=scope,
            params=dict(response.params),
            fetched_at=response.fetched_at,
            cost=response.cost,
            max_credit_cost=response.max_credit_cost,
            cells=frozenset(cells),
            available=available,
        )
        raw = {
            "format": FORMAT,
            "storeframes": __version__,
            "endpoint": entry.endpoint,
            "service": service,
            "params": entry.params,
            "echo": dict(response.echo),
            "fetched_at": entry.fetched_at.astimezone(UTC).isoformat(),
            "cost": entry.cost,
            "max_credit_cost": entry.max_credit_cost,
            "status": response.status,
            "attempts": response.attempts,
            "available": available,
            "result": response.result,
        }
        text = scrub(json.dumps(raw, separators=(",", ":"), ensure_ascii=False))
        try:
            self.storage.put(self._answer_key(entry), gzip.compress(text.encode(), compresslevel=6, mtime=0))
            self.storage.put(self._index_key(entry), _parquet_bytes(self._index_table(entry)))
        except OSError as exc:
            warnings.warn(f"could not write to the cache at {self.location}: {exc}", CacheWarning, stacklevel=2)
            return None
        with self._lock:
            self._files.setdefault(entry.endpoint, {})[self._index_key(entry)] = entry.id
            self._add(entry)
        return entry

    def _index_table(self, entry: Entry) -> pa.Table:
        cells = sorted(entry.cells, key=lambda c: (c[0] or "", c[1] or "", c[2] or date.min))
        n = len(cells)
        columns = {
            "entry": [entry.id] * n,
            "service": [entry.service] * n,
            "scope": [entry.scope] * n,
            "entity": [c[0] for c in cells],
            "facet": [c[1] for c in cells],
            "day": [c[2] for c in cells],
            "fetched_at": [entry.fetched_at] * n,
            "cost": [entry.cost] * n,
            "max_credit_cost": [entry.max_credit_cost] * n,
            "available": [entry.available] * n,
            "params": [json.dumps(dict(entry.params), sort_keys=True)] * n,
        }
        table = pa.table(columns, schema=INDEX_SCHEMA)
        return table.replace_schema_metadata(_provenance(entry))

    # -- the in-memory index -----------------------------------------------------

    def _add(self, entry: Entry) -> None:
        self._entries[entry.id] = entry
        table = self._cells.setdefault((entry.endpoint, entry.service, entry.scope), {})
        for cell in entry.cells:
            candidates = table.setdefault(cell, [])
            candidates.append(entry)
            if len(candidates) > 1 and candidates[-2].fetched_at > entry.fetched_at:
                candidates.sort(key=lambda e: (e.fetched_at, e.id))

    def _drop(self, entry_id: str | None) -> None:
        entry = self._entries.pop(entry_id, None) if entry_id else None
        if entry is None:
            return
        table = self._cells.get((entry.endpoint, entry.service, entry.scope), {})
        for cell in entry.cells:
            candidates = table.get(cell, [])
            if entry in candidates:
                candidates.remove(entry)

    def _forget(self, entry: Entry) -> None:
        with self._lock:
            self._files.get(entry.endpoint, {}).pop(self._index_key(entry), None)
            self._drop(entry.id)

    def sync(self, endpoint: str) -> None:
        """Pick up the index files of ``endpoint`` that other processes wrote, and forget removed ones."""
        with self._lock:
            self._sync(endpoint)

    def _sync(self, endpoint: str) -> None:
        prefix = self._prefix("index", endpoint)
        keys = {
            key
            for key in self.storage.list(prefix)
            if key.endswith(".parquet") and "/" not in key[len(prefix) :]  # the files of the folder itself
        }
        known = self._files.setdefault(endpoint, {})
        for gone in set(known) - keys:
            self._drop(known.pop(gone))
        for key in sorted(keys - set(known)):
            entry = self._read_index(key, endpoint)
            known[key] = entry.id if entry else None
            if entry is not None:
                self._add(entry)

    def _read_index(self, key: str, endpoint: str) -> Entry | None:
        """An entry from its index file's footer (its provenance); the cells follow from its request.

        Only the index file is read, never the answer, and of it only the footer is
        parsed, which is what makes a large cache quick to open; the rows repeat the
        same facts for readers of the dataset.
        """
        entry_id = _name(key).removesuffix(".parquet")
        try:
            footer = pq.read_metadata(pa.BufferReader(self.storage.get(key)))
            meta = {k.decode(): v.decode() for k, v in (footer.metadata or {}).items()}
            if meta["storeframes.endpoint"] != endpoint:
                raise ValueError(f"the file describes {meta['storeframes.endpoint']!r}")
            ep = ENDPOINTS[endpoint]
            params = json.loads(meta["storeframes.params"])
            cells = frozenset(planning.cells_of(ep, params))
            if footer.num_rows != len(cells):
                raise ValueError(f"{footer.num_rows} rows for {len(cells)} cells")
            return Entry(
                id=entry_id,
                endpoint=endpoint,
                service=meta["storeframes.service"],
                scope=planning.scope_of(ep, params),
                params=params,
                fetched_at=datetime.fromisoformat(meta["storeframes.fetched_at"]),
                cost=int(meta["storeframes.cost"]),
                max_credit_cost=int(meta["storeframes.max_credit_cost"]),
                cells=cells,
                available=meta["storeframes.available"] == "true",
            )
        except FileNotFoundError:
            return None
        except _UNREADABLE as exc:
            self._set_aside(key, exc, partner=f"{self._prefix('answers', endpoint)}{entry_id}.json.gz")
            return None

    def _set_aside(self, key: str, reason: BaseException | str | None, *, partner: str | None = None) -> None:
        """Set an unreadable file aside as ``<name>.corrupt``, and ``partner`` (the other file
        of the same entry) with it; warn once, unless ``reason`` is None or another process
        set the file aside first."""
        if partner is not None:
            with contextlib.suppress(OSError):
                self.storage.set_aside(partner)
        try:
            if not self.storage.set_aside(key):
                return
        except OSError:
            pass
        if reason is not None:
            name = _name(key)
            warnings.warn(
                f"cache file {name} is unreadable ({reason}); set aside as {name}.corrupt and treated as not cached",
                CacheWarning,
                stacklevel=3,
            )

    # -- reading ------------------------------------------------------------------

    def lookup(
        self,
        ep: Endpoint,
        *,
        service: str,
        scope: str,
        cells: Collection[Cell],
        now: datetime,
        refresh: Refresh = "auto",
        sync: bool = True,
    ) -> dict[Cell, Entry]:
        """For each cell the cache can serve, the newest entry holding it.

        ``refresh="auto"`` serves only fresh entries (by ``ep.freshness``), ``"never"``
        any entry, ``"always"`` none. ``sync=False`` skips looking for files other
        processes wrote since the last look (:meth:`sync`).
        """
        if refresh == "always":
            return {}
        with self._lock:
            if sync:
                self._sync(ep.name)
            table = self._cells.get((ep.name, service, scope), {})
            found: dict[Cell, Entry] = {}
            for cell in cells:
                candidates = table.get(cell)
                if not candidates:
                    continue
                newest = candidates[-1]
                if refresh == "never" or self._fresh(ep, newest, cell, now):
                    found[cell] = newest
            return found

    @staticmethod
    def _fresh(ep: Endpoint, entry: Entry, cell: Cell, now: datetime) -> bool:
        if not entry.available:
            return _UNAVAILABLE_FRESHNESS.is_fresh(entry.fetched_at, None, now=now)
        if ep.daily:
            day = cell[2]
        elif ep.date_ranged:
            day = date.fromisoformat(entry.params["end_date"])
        else:
            day = None
        return ep.freshness.is_fresh(entry.fetched_at, day, now=now)

    def load(self, entry: Entry) -> Response | None:
        """The cached answer of ``entry``; None when its file is gone or unreadable.

        An unreadable answer is set aside with its index file (a warning says so), so
        the cells it held count as not cached from then on, in every process.
        """
        key = self._answer_key(entry)
        try:
            raw = json.loads(gzip.decompress(self.storage.get(key)))
            if raw.get("format") != FORMAT or raw["params"] != dict(entry.params):
                raise ValueError("the answer does not match its index entry")
            response = Response(
                endpoint=entry.endpoint,
                params=dict(entry.params),
                result=raw["result"],
                cost=int(raw["cost"]),
                max_credit_cost=int(raw["max_credit_cost"]),
                status=int(raw["status"]),
                fetched_at=datetime.fromisoformat(raw["fetched_at"]),
                echo=raw.get("echo") or {},
                attempts=int(raw.get("attempts", 1)),
                from_cache=True,
                entry=entry.id,
            )
        except FileNotFoundError:  # an index whose answer is gone: set the index aside quietly
            self._set_aside(self._index_key(entry), None)
            response = None
        except _UNREADABLE as exc:
            self._set_aside(key, exc, partner=self._index_key(entry))
            response = None
        if response is None:
            self._forget(entry)
        return response

    # -- frames ---------------------------------------------------------------------

    @staticmethod
    def _frame_key(entry: Entry, table: str) -> str:
        return f"frames/{table}/{entry.id}.parquet"

    def read_frame(self, entry: Entry, table: str, version: str) -> pl.DataFrame | None:
        """The kept frame ``table`` of ``entry`` if the flattener ``version`` wrote it, else None.

        One read of the store. An unreadable file is set aside (with a warning) and
        counts as absent.
        """
        key = self._frame_key(entry, table)
        try:
            with pq.ParquetFile(pa.BufferReader(self.storage.get(key))) as handle:
                meta = handle.schema_arrow.metadata or {}
                if meta.get(b"storeframes.flattener") != version.encode():
                    return None
                stored = handle.read()
        except FileNotFoundError:
            return None
        except _UNREADABLE as exc:
            self._set_aside(key, exc)
            return None
        return pl.from_arrow(stored)  # type: ignore[return-value]

    def write_frame(self, entry: Entry, table: str, version: str, frame: pl.DataFrame) -> None:
        """Keep ``frame`` as the table ``table`` of ``entry``, written by the flattener ``version``."""
        arrow = frame.to_arrow()
        meta = _provenance(entry, table=table, flattener=version, entry_id=entry.id)
        arrow = arrow.replace_schema_metadata({**(arrow.schema.metadata or {}), **meta})
        try:
            self.storage.put(self._frame_key(entry, table), _parquet_bytes(arrow))
        except OSError as exc:
            warnings.warn(f"could not write a frame to the cache at {self.location}: {exc}", CacheWarning, stacklevel=2)

    # -- the ledger -----------------------------------------------------------------

    @staticmethod
    def _ledger_key(name: str) -> str:
        return f"ledger/{name}.parquet"

    def write_ledger(self, name: str, rows: pl.DataFrame | pa.Table) -> bool:
        """Keep ledger rows (schema :data:`~storeframes.ledger.LEDGER_SCHEMA`) as ``ledger/<name>.parquet``.

        Returns False, with a :class:`CacheWarning`, when the file cannot be written (the
        client keeps the rows and tries again at the end of the call). A session writes
        a small file per request, merged into files of up to 1000 rows now and then
        (see :mod:`storeframes.credits`).
        """
        if rows.num_rows == 0 if isinstance(rows, pa.Table) else rows.is_empty():
            return True
        arrow = rows if isinstance(rows, pa.Table) else rows.to_arrow()
        arrow = arrow.replace_schema_metadata({"storeframes.version": __version__})
        try:
            self.storage.put(self._ledger_key(name), _parquet_bytes(arrow))
        except OSError as exc:
            warnings.warn(
                f"could not write the ledger to the cache at {self.location}: {exc}", CacheWarning, stacklevel=2
            )
            return False
        return True

    def remove_ledger(self, name: str) -> None:
        """Remove the ledger file ``ledger/<name>.parquet`` (once its rows are merged into another)."""
        self.storage.delete(self._ledger_key(name))

    def read_ledger(self) -> pl.DataFrame:
        """Every ledger row kept in the cache, oldest first, each once.

        A row is known by its ``row`` id: one found in two files (a session's small file
        and the chunk it was merged into, when a process stopped between writing the one
        and removing the other) is counted once. Files of earlier versions are read with
        ``service`` ``"unknown"`` and ids made of the file's name and the row's position.
        """
        tables: list[pa.Table] = []
        legacy: list[pl.DataFrame] = []
        for key in self.storage.list("ledger/"):
            name = key.removeprefix("ledger/")
            if not key.endswith(".parquet") or "/" in name:
                continue
            try:
                with pq.ParquetFile(pa.BufferReader(self.storage.get(key))) as handle:  # quicker than read_table
                    table = handle.read()
                if table.schema.names == LEDGER_ARROW.names and not (
                    table.column("service").null_count or table.column("row").null_count
                ):
                    tables.append(table.cast(LEDGER_ARROW))
                else:
                    frame = pl.from_arrow(table)
                    assert isinstance(frame, pl.DataFrame)
                    legacy.append(conform_ledger(frame, name.removesuffix(".parquet")))
            except FileNotFoundError:  # merged and removed since the listing
                continue
            except (*_UNREADABLE, pl.exceptions.PolarsError) as exc:
                self._set_aside(key, exc)
        frames = legacy
        if tables:
            frame = pl.from_arrow(pa.concat_tables(tables))
            assert isinstance(frame, pl.DataFrame)
            frames = [frame.cast(LEDGER_SCHEMA), *legacy]
        if not frames:
            return pl.DataFrame(schema=LEDGER_SCHEMA)
        rows = pl.concat(frames) if len(frames) > 1 else frames[0]
        return rows.unique("row", keep="first", maintain_order=True).sort("time", "row")

    # -- looking around and clearing ----------------------------------------------

    def entry(self, entry_id: str) -> Entry | None:
        """The entry called ``entry_id`` (as in :attr:`Response.entry <storeframes.Response.entry>`), if known."""
        with self._lock:
            return self._entries.get(entry_id)

    def entries(self, endpoint: str | None = None) -> list[Entry]:
        """Every entry in the cache (of one endpoint), oldest first."""
        names = [endpoint] if endpoint else list(ENDPOINTS)
        with self._lock:
            for name in names:
                self._sync(name)
            chosen = [e for e in self._entries.values() if e.endpoint in names]
        return sorted(chosen, key=lambda e: (e.fetched_at, e.id))

    def info(self) -> dict[str, Any]:
        """Location, size in bytes, entries, credits paid, spent and saved, unreadable files.

        Credits are given per service and never summed across services: ``credits_paid``
        (what the cached answers cost), ``credits_spent`` (the ledger's ``cost``: every
        answer charged, failures and answers cleared since included) and ``credits_saved``
        (by cache hits) are the real service's; ``by_service`` maps each service found
        (``"service"``, ``"sandbox-<seed>"``, ``"unknown"`` for ledger rows of earlier
        versions) to its ``entries``, ``paid``, ``spent`` and ``saved``. ``entries`` and
        ``by_endpoint`` count the answers of every service. The size and the count of files
        set aside come from one :meth:`~storeframes.store.Store.usage` of the store.
        """
        usage = self.storage.usage()
        entries = self.entries()
        ledger = self.read_ledger()
        by_service: dict[str, dict[str, int]] = {}

        def figures(service: str) -> dict[str, int]:
            return by_service.setdefault(service, {"entries": 0, "paid": 0, "spent": 0, "saved": 0})

        figures(SERVICE)
        for e in entries:
            counts = figures(e.service)
            counts["entries"] += 1
            counts["paid"] += e.cost
        for service, spent, saved in ledger.group_by("service").agg(pl.col("cost").sum(), pl.col("saved").sum()).rows():
            counts = figures(service)
            counts["spent"] += int(spent or 0)
            counts["saved"] += int(saved or 0)
        real = by_service[SERVICE]
        return {
            "path": self.location,
            "bytes": usage.size,
            "entries": len(entries),
            "by_endpoint": {name: sum(e.endpoint == name for e in entries) for name in ENDPOINTS},
            "credits_paid": real["paid"],
            "credits_spent": real["spent"],
            "credits_saved": real["saved"],
            "by_service": {name: by_service[name] for name in sorted(by_service, key=lambda n: (n != SERVICE, n))},
            "corrupt_files": usage.set_aside,
        }

    def clear(self, *, endpoint: str | None = None, older_than: timedelta | None = None) -> int:
        """Remove cached answers (and their frames); returns how many entries went.

        ``endpoint`` keeps the others; ``older_than`` removes only answers fetched
        longer ago than that. The ledger of credits spent is kept. Files set aside as
        corrupt, and temporary files and answers without an index left by a stopped
        process (older than an hour), are removed too.
        """
        now = datetime.now(UTC)
        frames: dict[str, list[str]] = {}
        for key in self.storage.list("frames/"):
            parts = key.split("/")
            if len(parts) == 3 and parts[2].endswith(".parquet"):
                frames.setdefault(parts[2].removesuffix(".parquet"), []).append(key)
        removed = 0
        for entry in self.entries(endpoint):
            if older_than is not None and now - entry.fetched_at <= older_than:
                continue
            for key in (self._index_key(entry), self._answer_key(entry), *frames.get(entry.id, ())):
                self.storage.delete(key)
            self._forget(entry)
            removed += 1
        stale = now.timestamp() - _STALE_SECONDS
        known = {e.id for e in self.entries()}
        for key in self.storage.list(self._prefix("answers", endpoint) if endpoint else "answers/"):
            # an answer whose index was never written: its process stopped between the two
            parts = key.split("/")
            if len(parts) != 3 or not parts[2].endswith(".json.gz"):
                continue
            if parts[2].removesuffix(".json.gz") not in known:
                written = self.storage.mtime(key)
                if written is not None and written < stale:
                    self.storage.delete(key)
        prefixes = [self._prefix(kind, endpoint) for kind in ("answers", "index")] if endpoint else [""]
        for prefix in prefixes:
            self.storage.sweep(_STALE_SECONDS, prefix=prefix, set_aside_older_than_seconds=0)
        return removed
