"""The index: which answers the cache holds and the cells each covers, read from the index files (one
per answer, or compacted ones of many) and kept in memory. It answers which entries hold some cells,
newest first; whether one may serve them is the engine's judgement, not the index's."""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable, Collection, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from operator import itemgetter
from typing import Any

import polars as pl

from .. import planning
from ..answers import Entry
from ..catalog import ENDPOINTS, Endpoint
from ..planning import Cell
from .files import Files
from .index_files import FRAME_ROWS, FrameRows, _own_rows, _part_rows, index_file
from .layout import (
    ANSWERS,
    INDEX_COLUMNS,
    RELISTS,
    endpoint_of,
    in_folder,
    index_key,
    is_part,
    name,
    prefix,
    relist_pause,
)
from .parquet import newer_format, newer_writer, parquet_meta, read_parquet, rows_of, unreadable

_FETCH_TOGETHER = 32
"""From this many new index files on, they are read side by side (:meth:`Index._fetch`)."""
_FETCH_THREADS = 8


def _entries_of(frame: pl.DataFrame, endpoint: str) -> list[Entry]:
    """The entries of rows of a compacted index, grouped by answer."""
    if frame.is_empty():
        return []
    # the rows of an answer are together (as compaction writes them): one answer starts where the id changes
    starts = frame.with_row_index("_at").filter(pl.col("entry").ne_missing(pl.col("entry").shift(1)))
    heads = starts.select(
        "_at", "entry", "service", "scope", "params", "fetched_at", "answer_cost", "max_credit_cost", "available"
    ).rows()
    cells = list(zip(frame["entity"].to_list(), frame["facet"].to_list(), frame["day"].to_list(), strict=True))
    texts = list(dict.fromkeys(head[4] for head in heads))
    parsed = dict(zip(texts, json.loads("[" + ",".join(texts) + "]"), strict=True))  # one parse, not one per answer
    ends = [head[0] for head in heads[1:]] + [frame.height]
    found: dict[str, Entry] = {}
    for (at, entry_id, service, scope, params, fetched_at, cost, most, available), end in zip(heads, ends, strict=True):
        held = found.get(entry_id)
        mine = frozenset(cells[at:end])
        found[entry_id] = Entry(
            id=entry_id,
            endpoint=endpoint,
            service=service,
            scope=scope,
            params=parsed[params],
            fetched_at=fetched_at,
            cost=cost,
            max_credit_cost=most,
            cells=mine | held.cells if held else mine,
            available=available,
        )
    return list(found.values())


class Index:
    """The entries of a cache, by cell, as its index files say; files other processes write are picked
    up by :meth:`sync`.

    An entry is known while at least one known index file holds it: a compaction writes a
    file holding entries of others before it removes them, so an entry moving between files
    is never forgotten on the way. The answers of a compacted index file become entries only
    when a look needs them: opening a cache of a hundred thousand answers builds the few a
    call uses. ``of_format_1`` hears of answers kept as format 1, as their index files say.
    """

    def __init__(self, files: Files, *, of_format_1: Callable[[Iterable[str]], None]):
        self._files = files
        self._lock = files.lock
        self._of_format_1 = of_format_1
        self._entries: dict[str, Entry] = {}
        self._keys: dict[str, dict[str, tuple[str, ...]]] = {}  # endpoint -> index key -> ids of its entries
        self._held: dict[str, int] = {}  # entry id -> how many known index files hold it
        self._pending: dict[str, dict[str, pl.DataFrame]] = {}  # endpoint -> compacted index -> rows not made entries
        # compacted index -> the (service, scope, entity) whose answers it holds are made entries already: a later
        # look for them needs no filter of its rows
        self._looked: dict[str, set[tuple[str | None, str | None, Any]]] = {}
        self._dead: set[str] = set()  # entries whose answer is gone, still listed by a compacted file
        # the entry holding a cell, or those holding it, oldest first (a list only where several do: a cell of one
        # answer costs no list)
        self._cells: dict[tuple[str, str, str], dict[Cell, Entry | list[Entry]]] = {}
        self._rows: dict[str, FrameRows] = {}  # entry id -> the rows of its kept frames, as recorded
        self._format_1: set[str] = set()  # entries whose own index file is of format 1: never written over
        self._to_record: set[str] = set()  # answers whose index file is waiting to record their frames' rows
        self._rewriting = threading.Lock()  # one rewrite of an index file at a time: the last holds every table

    # -- what the index holds ------------------------------------------------------------

    def _add(self, entry: Entry) -> None:
        self._entries[entry.id] = entry
        table = self._cells.setdefault((entry.endpoint, entry.service, entry.scope), {})
        shared = entry.cells & table.keys()  # cells other entries hold already
        table.update(dict.fromkeys(entry.cells - shared if shared else entry.cells, entry))
        for cell in shared:
            held = table[cell]
            candidates = held if isinstance(held, list) else [held]
            candidates.append(entry)
            if candidates[-2].fetched_at > entry.fetched_at:
                candidates.sort(key=lambda e: (e.fetched_at, e.id))
            table[cell] = candidates

    def _add_all(self, entries: list[Entry]) -> None:
        """:meth:`_add` of each of ``entries``, in order. Where they share no cell with each other nor with the
        entries held (a new client opening its cache: the tables are empty), each table takes them at once,
        with the hashes its cells already have, not a look for every cell held already."""
        self._entries.update((entry.id, entry) for entry in entries)
        tables: dict[tuple[str, str, str], list[Entry]] = {}
        for entry in entries:
            tables.setdefault((entry.endpoint, entry.service, entry.scope), []).append(entry)
        for where, mine in tables.items():
            table = self._cells.setdefault(where, {})
            if not table:  # taken straight in (no second table of every cell), unless they share a cell
                for entry in mine:
                    table.update(dict.fromkeys(entry.cells, entry))
                if len(table) == sum(len(entry.cells) for entry in mine):
                    continue
                table.clear()
            fresh: dict[Cell, Entry | list[Entry]] = {}
            for entry in mine:
                fresh.update(dict.fromkeys(entry.cells, entry))
            if len(fresh) == sum(len(entry.cells) for entry in mine) and table.keys().isdisjoint(fresh.keys()):
                table.update(fresh)
            else:
                for entry in mine:
                    self._add(entry)

    def _drop(self, entry_id: str) -> None:
        entry = self._entries.pop(entry_id, None)
        if entry is None:
            return
        table = self._cells.get((entry.endpoint, entry.service, entry.scope), {})
        for cell in entry.cells:
            held = table.get(cell)
            if held is entry:
                del table[cell]
            elif isinstance(held, list) and entry in held:
                held.remove(entry)
                if len(held) == 1:
                    table[cell] = held[0]

    def hold(self, key: str, entries: Iterable[Entry]) -> None:
        """Note that the index file ``key`` holds ``entries`` (a file of one answer, or a compacted one of many)."""
        self.hold_all([(key, entries)])

    def hold_all(self, files: Iterable[tuple[str, Iterable[Entry]]]) -> None:
        """:meth:`hold` of each index file and its entries, in order; the entries new to the index added at once."""
        with self._lock:
            new: list[Entry] = []
            for key, entries in files:
                ids = []
                for entry in entries:
                    ids.append(entry.id)
                    count = self._held.get(entry.id, 0)
                    self._held[entry.id] = count + 1
                    if count == 0 and entry.id not in self._dead:
                        new.append(entry)
                self._keys.setdefault(endpoint_of(key), {})[key] = tuple(ids)
            self._add_all(new)

    def unhold(self, endpoint: str, key: str) -> None:
        """Note that the index file ``key`` is gone: the entries no other file holds go with it."""
        with self._lock:
            self._pending.get(endpoint, {}).pop(key, None)
            self._looked.pop(key, None)
            for entry_id in self._keys.get(endpoint, {}).pop(key, ()):
                count = self._held.get(entry_id, 0) - 1
                if count > 0:
                    self._held[entry_id] = count
                    continue
                self._held.pop(entry_id, None)
                self._dead.discard(entry_id)
                self._drop(entry_id)

    def forget(self, entry: Entry) -> None:
        """Stop serving ``entry`` (its answer is gone); a compacted file may still list it until rewritten."""
        with self._lock:
            self._dead.add(entry.id)
            self._drop(entry.id)

    def _hold_part(self, key: str, frame: pl.DataFrame) -> None:
        """Note that the compacted index file ``key`` holds the answers of ``frame``, made entries when needed."""
        endpoint = endpoint_of(key)
        ids = frame["entry"].unique(maintain_order=True).to_list()
        for entry_id in ids:
            self._held[entry_id] = self._held.get(entry_id, 0) + 1
        self._keys.setdefault(endpoint, {})[key] = tuple(ids)
        self._pending.setdefault(endpoint, {})[key] = frame
        self._looked[key] = set()

    # -- reading the index files ------------------------------------------------------------

    def sync(self, endpoint: str) -> bool:
        """Pick up the index files of ``endpoint`` that other processes wrote, and forget removed ones;
        False when they cannot be listed (nothing changes, and a warning says so)."""
        with self._lock:
            folder = prefix("index", endpoint)
            known = self._keys.setdefault(endpoint, {})
            missing: set[str] = set()  # listed, then gone when read: a compaction replaced them
            for attempt in range(RELISTS):
                relist_pause(attempt)
                listed = self._files.listing(folder, what="answers")
                if listed is None:
                    return False
                keys = {key for key in listed if key.endswith(".parquet") and in_folder(key, folder)}
                new = keys - set(known)
                if missing and new <= missing:
                    break  # listed again and nothing replaced them (a link to nowhere): not a compaction
                missing = set()
                fetched = self._fetch([key for key in new if not is_part(key)])
                # new files first, then the removed ones: an entry a compaction moved is held throughout
                read: list[tuple[str, list[Entry]]] = []  # answers' own files, held together (in order)
                for key in sorted(new):
                    try:
                        if is_part(key):
                            frame = self._read_part(key, endpoint)
                            self.hold_all(read)
                            read = []
                            self._hold_part(key, frame if frame is not None else pl.DataFrame(schema=INDEX_COLUMNS))
                        else:
                            read.append((key, self._read(key, endpoint, fetched.pop(key, None))))
                    except FileNotFoundError:  # removed since it was listed: its answers are in the next listing
                        missing.add(key)
                self.hold_all(read)
                if not missing:
                    break
            for gone in set(known) - keys:
                self.unhold(endpoint, gone)
            return True

    def _fetch(self, keys: list[str]) -> dict[str, bytes | BaseException]:
        """The bytes of many index files at once, each or what reading it raised (read again, alone, by
        :meth:`_read`): a store reads them side by side on a few threads (a folder's reads and a
        bucket's round trips overlap), where one by one a new client opening thousands of answers
        waited for each in turn. Few files are left to :meth:`_read`."""
        if len(keys) < _FETCH_TOGETHER:
            return {}
        get = self._files.storage.get

        def read(key: str) -> bytes | BaseException:
            try:
                return get(key)
            except Exception as exc:  # raised again where the file is read
                return exc

        with ThreadPoolExecutor(_FETCH_THREADS, thread_name_prefix="storeframes-index") as pool:
            return dict(zip(keys, pool.map(read, keys), strict=True))

    def _read(self, key: str, endpoint: str, fetched: bytes | BaseException | None = None) -> list[Entry]:
        """The entry of one answer's index file, from its footer; [] when it is unreadable, FileNotFoundError
        when it is gone.

        Only the footer is parsed (the cells follow from the request), which keeps
        opening a cache of small files quick. An unreadable file is set aside with its
        answer. (An unreadable compacted file is set aside alone: the answers it listed
        stay, and the next compaction finds them again from their answers.)
        """
        files = self._files
        entry_id = name(key).removesuffix(".parquet")
        meta: dict[str, str] = {}
        try:
            if isinstance(fetched, BaseException):
                raise fetched
            data = files.storage.get(key) if fetched is None else fetched
            meta = parquet_meta(data)
            if newer_format(meta):
                files.skip_newer(key, entry_id)
                return []
            if meta["storeframes.endpoint"] != endpoint:
                raise ValueError(f"the file describes {meta['storeframes.endpoint']!r}")
            ep = ENDPOINTS[endpoint]
            params = json.loads(meta["storeframes.params"])
            cells = frozenset(planning.cells_of(ep, params))
            rows = rows_of(data, meta)
            if rows != len(cells):
                raise ValueError(f"{rows} rows for {len(cells)} cells")
            if meta.get("storeframes.format", "1") == "1":
                self._of_format_1([entry_id])  # an index of format 1: its answer is a .json.gz
                self._format_1.add(entry_id)
            recorded = _own_rows(meta.get(FRAME_ROWS))
            if recorded:
                self._rows.setdefault(entry_id, {}).update(recorded)
            return [
                Entry(
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
            ]
        except FileNotFoundError:
            raise  # gone since it was listed: the caller lists again
        except unreadable() as exc:
            if newer_writer(meta):
                files.skip_newer(key, entry_id)
            else:
                stem = f"{prefix('answers', endpoint)}{entry_id}"
                files.set_aside(key, exc, partners=[stem + suffix for suffix in ANSWERS])
            return []

    def _read_part(self, key: str, endpoint: str) -> pl.DataFrame | None:
        """The rows of a compacted index file (one per cell, an answer's rows together); None if unreadable,
        FileNotFoundError when it is gone."""
        files = self._files
        meta: dict[str, str] = {}
        try:
            data = files.storage.get(key)
            meta = parquet_meta(data)
            if newer_format(meta):
                files.skip_newer(key)
                return None
            if meta.get("storeframes.endpoint") != endpoint or meta.get("storeframes.compacted") != "index":
                raise ValueError("not a compacted index of this endpoint")
            frame = read_parquet(data)
            if frame.schema != INDEX_COLUMNS:
                raise ValueError("its columns are not the index's")
            for entry_id, recorded in _part_rows(meta.get(FRAME_ROWS)).items():
                self._rows.setdefault(entry_id, {}).update(recorded)
            old = json.loads(meta.get("storeframes.gz", "[]"))  # the answers of format 1 it lists
            if old:
                self._of_format_1(old)
            return frame
        except FileNotFoundError:
            raise  # gone since it was listed: the caller lists again
        except unreadable() as exc:
            if newer_writer(meta):
                files.skip_newer(key)
            else:
                files.set_aside(key, exc)
            return None

    def _materialize(
        self, endpoint: str, *, service: str | None = None, scope: str | None = None, entities: Collection[Any] = ()
    ) -> None:
        """Make entries of the compacted index rows of ``endpoint``: all of them, or those of answers
        holding one of ``entities`` in ``service`` and ``scope``.

        Each compacted file remembers the entities it was searched for, so the calls of a batch
        (or a day's plan of thousands of cells) filter its rows once, for the entities not yet
        searched: one polars filter per file and batch, never one per call or cell.
        """
        pending = self._pending.get(endpoint)
        if not pending:
            return
        whole = service is None
        for key, frame in list(pending.items()):
            rows: pl.DataFrame | None = frame
            if not whole:
                looked = self._looked.setdefault(key, set())
                new = {e for e in entities if (service, scope, e) not in looked}
                if not new:
                    continue
                looked.update((service, scope, e) for e in new)
                named = [e for e in new if e is not None]
                where = pl.col("entity").is_in(named) if named else pl.lit(False)
                if None in new:
                    where = where | pl.col("entity").is_null()
                ids = frame.filter((pl.col("service") == service) & (pl.col("scope") == scope) & where)["entry"]
                wanted = [i for i in ids.unique().to_list() if i not in self._entries]
                rows = frame.filter(pl.col("entry").is_in(wanted)) if wanted else None
            made = _entries_of(rows, endpoint) if rows is not None else []
            self._add_all(
                [e for e in made if e.id in self._held and e.id not in self._dead and e.id not in self._entries]
            )
            if whole:
                del pending[key]
                self._looked.pop(key, None)

    def prepare(self, endpoint: str, *, service: str, wanted: Mapping[str, Collection[Any]]) -> None:
        """Make entries of the compacted index rows a batch of calls may use, at once: those of answers
        holding one of the entities of ``wanted`` (scope -> entities) in ``service``."""
        with self._lock:
            for scope, entities in wanted.items():
                self._materialize(endpoint, service=service, scope=scope, entities=entities)

    # -- the rows of kept frames --------------------------------------------------------------

    def frame_rows(self, entry_id: str, table: str, version: str) -> int | None:
        """The rows of the kept frame ``table`` of ``entry_id`` by the flattener ``version``, as recorded in
        the index when it was written; None when not recorded (a cache of an earlier version)."""
        with self._lock:
            recorded = self._rows.get(entry_id, {}).get(table)
        return recorded[1] if recorded is not None and recorded[0] == version else None

    def rows_of(self, entry_ids: Iterable[str]) -> dict[str, FrameRows]:
        """The recorded rows of the kept frames of ``entry_ids`` (those with any), by answer."""
        with self._lock:
            return {i: dict(self._rows[i]) for i in entry_ids if self._rows.get(i)}

    def record_rows(self, entry: Entry, table: str, version: str, rows: int) -> Callable[[], None] | None:
        """Record that the kept frame ``table`` of ``entry`` (by the flattener ``version``) has ``rows`` rows,
        in memory; and return the write that records it in the answer's own index file while it has one
        (a compacted index file records the rows its answers had when it was written), for the caller
        to make behind the call. None when nothing is to be written (recorded already, or a write
        for the answer is waiting and will record this too)."""
        with self._lock:
            recorded = self._rows.setdefault(entry.id, {})
            if recorded.get(table) == (version, rows):
                return None
            recorded[table] = (version, rows)
            if entry.id in self._to_record:
                return None
            self._to_record.add(entry.id)
        return functools.partial(self._record_in_file, entry)

    def _record_in_file(self, entry: Entry) -> None:
        key = index_key(entry)
        with self._rewriting:
            with self._lock:  # what is recorded by now (the rows of frames of other tables written meanwhile)
                self._to_record.discard(entry.id)
                frames = dict(self._rows.get(entry.id, {}))
                own = key in self._keys.get(entry.endpoint, {}) and entry.id not in self._format_1
            try:
                if own and self._files.storage.mtime(key) is not None:  # never made again once compacted or cleared
                    self._files.storage.put(key, index_file(entry, frames))
            except OSError as exc:
                self._files.warn_once(
                    f"record {key}", f"could not record a frame's rows in the cache at {self._files.location} ({exc})"
                )

    # -- what it answers --------------------------------------------------------------------

    def _table(
        self, ep: Endpoint, service: str, scope: str, cells: Collection[Cell], sync: bool
    ) -> dict[Cell, Entry | list[Entry]]:
        """The cells of ``service`` and ``scope`` known, after looking for new files (``sync``) and making
        entries of the compacted rows that hold ``cells``; the caller holds the lock."""
        if sync and not self.sync(ep.name):  # "cannot list" is not "nothing cached": a call would pay again
            raise self._files.cannot_list(prefix("index", ep.name))
        if self._pending.get(ep.name):
            self._materialize(ep.name, service=service, scope=scope, entities=set(map(itemgetter(0), cells)))
        return self._cells.get((ep.name, service, scope), {})

    def candidates(
        self, ep: Endpoint, *, service: str, scope: str, cells: Collection[Cell], sync: bool = True
    ) -> dict[Cell, list[Entry]]:
        """The entries holding each of ``cells`` (of ``service`` and ``scope``), newest first; a cell no
        entry holds is left out. ``sync=False`` skips looking for files other processes wrote."""
        with self._lock:
            table = self._table(ep, service, scope, cells, sync)
            found: dict[Cell, list[Entry]] = {}
            for cell in cells:
                held = table.get(cell)
                if held is not None:
                    found[cell] = held[::-1] if isinstance(held, list) else [held]
            return found

    def newest(
        self, ep: Endpoint, *, service: str, scope: str, cells: Collection[Cell], sync: bool = True
    ) -> dict[Cell, Entry]:
        """The newest entry holding each of ``cells`` (of ``service`` and ``scope``); a cell no entry holds
        is left out. What a plan needs of :meth:`candidates`, without a list per cell."""
        with self._lock:
            table = self._table(ep, service, scope, cells, sync)
            found: dict[Cell, Entry] = {}
            for cell in cells:
                held = table.get(cell)
                if held is not None:
                    found[cell] = held[-1] if isinstance(held, list) else held
            return found

    def entry(self, entry_id: str) -> Entry | None:
        """The entry called ``entry_id``, if known."""
        with self._lock:
            found = self._entries.get(entry_id)
            if found is None and entry_id in self._held:  # held by a compacted index, not made an entry yet
                for endpoint in list(self._pending):
                    self._materialize(endpoint)
                found = self._entries.get(entry_id)
            return found

    def entries(self, endpoint: str | None = None) -> list[Entry]:
        """Every entry (of one endpoint), oldest first, after looking for new files."""
        names = [endpoint] if endpoint else list(ENDPOINTS)
        with self._lock:
            for each in names:
                self.sync(each)
                self._materialize(each)
            chosen = [e for e in self._entries.values() if e.endpoint in names]
        return sorted(chosen, key=lambda e: (e.fetched_at, e.id))

    def current(self, *, snapshots: bool = False) -> set[str]:
        """The ids of the entries that are the newest of at least one of their cells; with ``snapshots``,
        also those of current-only endpoints (metadata, metrics, live search: see
        :attr:`~storeframes.catalog.Endpoint.current_only`) that are the newest of a cell on the UTC day
        they were fetched, the answers :func:`storeframes.snapshots` reads."""
        with self._lock:
            for each in ENDPOINTS:
                self.sync(each)
                self._materialize(each)
            current: set[str] = set()
            for (endpoint, _, _), table in self._cells.items():
                daily = snapshots and endpoint in ENDPOINTS and ENDPOINTS[endpoint].current_only
                for held in table.values():
                    candidates = held if isinstance(held, list) else [held]
                    if daily:  # oldest first: the last of each day stays, the newest of all among them
                        current.update({entry.day: entry.id for entry in candidates}.values())
                    elif candidates:
                        current.add(candidates[-1].id)
            return current

    def files(self, endpoint: str) -> dict[str, tuple[str, ...]]:
        """The index files of ``endpoint`` known (as last synced), each with the ids of the answers it holds."""
        with self._lock:
            return dict(self._keys.get(endpoint, {}))

    def known(self) -> set[str]:
        """The ids of every answer a known index file holds."""
        with self._lock:
            return set(self._held)

    def compactable(self, endpoint: str) -> dict[str, tuple[str, ...]]:
        """The index files of ``endpoint`` a compaction may merge, each with the ids of the answers it
        holds, every answer made an entry; none when the index cannot be listed."""
        with self._lock:
            if not self.sync(endpoint):
                return {}
            self._materialize(endpoint)
            # an index file of a newer format is the newer version's: never merged, never removed
            newer = self._files.newer_files
            return {k: v for k, v in self._keys.get(endpoint, {}).items() if k not in newer}

    def known_entries(self, entry_ids: Iterable[str]) -> list[Entry]:
        """The entries of ``entry_ids`` that are known, in that order."""
        with self._lock:
            return [self._entries[i] for i in entry_ids if i in self._entries]
