"""Kept frames: a file per answer and table, or compacted files of many answers (a row group per few
answers, listed in the footer); read a few row groups at a time, and large frames written behind the
call on a writer thread (:mod:`storeframes.cache.behind`, which says what the exit waits for)."""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from concurrent.futures import Future
from concurrent.futures import wait as wait_for
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from ..answers import Entry
from ..errors import warn
from .behind import BEHIND, Writer
from .files import CacheWarning, Files
from .frame_trust import Check, Trust
from .layout import (
    ENTRY,
    RELISTS,
    TABLE_FORMAT,
    frame_key,
    frames_prefix,
    in_folder,
    is_part,
    name,
    provenance,
    relist_pause,
)
from .parquet import (
    newer_format,
    newer_writer,
    parquet_bytes,
    parquet_columns,
    parquet_meta,
    read_parquet,
    rows_in,
    unreadable,
)

GONE = object()
"""What reading a frame's own file gives when there is none."""
_SCAN_FILES = 16
"""Beyond this many files of a folder, frames are read in one scan, not a file per thread (measured:
205 metadata files of 5 rows, 0.11 s against 0.14 s; 10 history files of 182,500 rows, 0.025 s
against 0.019 s)."""
_FILE = "\x00storeframes-file"  # the column naming the file of each row, in a scan of many files


@dataclass(frozen=True)
class Part:
    """A compacted frame file: the flattener that wrote it and the row group of each entry it holds."""

    version: str
    groups: dict[str, int]  # -1: the answer has no rows in this table
    columns: pl.Schema | None = None  # the frame's columns (without ``entry``)
    rows: tuple[int, ...] | None = None  # the rows of each row group, as the footer says


def _without_entry(columns: pl.Schema) -> pl.Schema:
    return pl.Schema({column: dtype for column, dtype in columns.items() if column != ENTRY})


class _NotInOrder(Exception):
    """Files read together did not give their rows file by file."""


def _slices(rows: pl.DataFrame, column: str, names: Mapping[str, str], *, together: bool) -> dict[str, pl.DataFrame]:
    """The rows of ``rows`` by the value of ``column`` (named by ``names``: value: id), each a slice (no copy)
    without ``column``; an id with no rows empty. ``together``: each value's rows must be one run
    (raises _NotInOrder if not)."""
    body = rows.drop(column)
    spans: dict[str, list[tuple[int, int]]] = {}
    if rows.height:
        runs = rows.get_column(column).rle()
        offset = 0
        for n, value in zip(runs.struct.field("len").to_list(), runs.struct.field("value").to_list(), strict=True):
            spans.setdefault(str(value), []).append((offset, n))
            offset += n
    if together and (any(len(p) > 1 for p in spans.values()) or not set(spans) <= set(names)):
        raise _NotInOrder
    found: dict[str, pl.DataFrame] = {}
    for value, entry_id in names.items():
        pieces = spans.get(value)
        if not pieces:
            found[entry_id] = body.clear()
        elif len(pieces) == 1:
            found[entry_id] = body.slice(*pieces[0])
        else:  # not together (a file not written by a compaction): gathered
            found[entry_id] = pl.concat([body.slice(at, n) for at, n in pieces])
    return found


def _by_entry(rows: pl.DataFrame, ids: Iterable[str]) -> dict[str, pl.DataFrame]:
    """The rows of each answer of ``ids`` (without the ``entry`` column), an answer with none empty.

    A compacted file holds an answer's rows together: each answer's frame is a slice of
    ``rows`` (no copy), found from the runs of the ``entry`` column.
    """
    return _slices(rows, ENTRY, {entry_id: entry_id for entry_id in ids}, together=False)


class FrameFiles:
    """The kept frames of a cache, as ``cache.frames``: reading them (from frames still being written,
    compacted files, or an answer's own file), locating them, and writing them, now or behind the call.

    >>> cache.frames.read(cache.entries("metadata"), "metadata", "1")  # doctest: +SKIP
    """

    WRITE_BEHIND_ROWS = 100_000
    """A frame of at least this many rows is written after the call that built it returns (see
    :meth:`write`); smaller ones are written before."""

    def __init__(
        self,
        files: Files,
        *,
        rows: Callable[[str, str, str], int | None] = lambda entry_id, table, version: None,
        record: Callable[[Entry, str, str, int], Callable[[], None] | None] | None = None,
    ):
        self._files = files
        self._rows = rows  # the rows of a kept frame, as the index recorded them when it was written
        self._record = record  # records them there once a frame is written (the file written behind the call)
        self._lock = files.lock
        self._parts: dict[str, dict[str, Part]] = {}  # table -> compacted frame file -> what it holds
        self._own: dict[str, set[str]] = {}  # table -> the answers with a file of their own, as last listed:
        # their own file is read, not a compacted file's rows (a file planted as compacted never overrides them)
        self._writer: Writer | None = None  # writes large frames behind the calls
        self._writing: dict[tuple[str, str], tuple[str, pl.DataFrame, Future[None]]] = {}  # (entry, table) ->
        # (flattener, frame, its write): frames not yet in their file, served from memory meanwhile
        self._jobs: set[Future[None]] = set()  # other writes behind the calls (the index recording rows)

    # -- reading --------------------------------------------------------------------------

    def read(
        self,
        entries: Collection[Entry],
        table: str,
        version: str,
        *,
        schema: pl.Schema | None = None,
        map: Callable[[Callable[[Entry], Any], list[Entry]], Iterable[Any]] = map,
        check: Check | None = None,
    ) -> dict[str, pl.DataFrame]:
        """The kept frames ``table`` of ``entries`` that the flattener ``version`` wrote, by entry id.

        Entries in a compacted file are read from it, a few row groups at a time; the others from their
        own files (through ``map``, which may read them on threads). An entry whose frame is not kept, or
        was kept by another flattener, is left out; so is one whose columns are not exactly ``schema``'s.
        Unreadable files are set aside (with a warning). A kept frame is held to its answer: its rows must
        be as many as the index recorded, and ``check`` (why a frame holds rows of cells its answer does
        not, or None) must pass it; one that fails is set aside, and the caller builds it again from the
        raw answer, at no cost."""
        found: dict[str, pl.DataFrame] = self._written_later(entries, table, version, schema)
        trust = Trust(functools.partial(self._misfit, table=table, version=version), check)
        for attempt in range(RELISTS):
            relist_pause(attempt)
            rest = [e for e in entries if e.id not in found]
            if not rest:
                break
            found.update(self._read_from_parts(rest, table, version, relist=attempt > 0, schema=schema, trust=trust))
            rest = [e for e in rest if e.id not in found]
            if not rest:
                break
            if self._files.path is not None and schema is not None and len(rest) > _SCAN_FILES:
                singles = self._read_singles(rest, table, version, schema, trust)
            else:
                singles = list(map(lambda e: self._read_single(e, table, version, schema, trust), rest))
            missing = False
            for entry, frame in zip(rest, singles, strict=True):
                if isinstance(frame, pl.DataFrame):
                    found[entry.id] = frame
                else:
                    missing = missing or frame is GONE
            if not missing:
                break  # else a compaction may have moved some: look at the compacted files again
        return found

    def _misfit(self, entry_id: str, rows: int, *, table: str, version: str) -> str | None:
        """Why a kept frame of ``rows`` rows (as read, or as its footer says) is not the answer's: not the rows the
        index recorded when it was written; None when they agree or none are recorded."""
        recorded = self._rows(entry_id, table, version)
        if recorded is not None and rows != recorded:
            return f"{rows:,} rows where the index recorded {recorded:,} for its answer"
        return None

    def _mistrust(self, key: str, why: str) -> None:
        """Set the frame file ``key`` aside: what it holds is not its answers' frames (``why``)."""
        self._files.set_aside(key, None)
        called = name(key)
        warn(
            f"cache file {called} does not hold the frames of its answers ({why}); set aside as {called}.corrupt, "
            "and the frames are built again from the answers the cache keeps, at no cost",
            CacheWarning,
        )

    def _read_single(
        self, entry: Entry, table: str, version: str, schema: pl.Schema | None = None, trust: Trust | None = None
    ) -> pl.DataFrame | object | None:
        """The frame of one entry from its own file; None if another flattener wrote it (or its columns
        are not ``schema``, or ``trust`` finds it is not its answer's: set aside), GONE if there is none.

        Its footer is read first, alone where the store reads in place or in ranges (a folder, a bucket): a file
        whose rows are not those the index recorded is set aside before any of them is read. Then polars reads
        the columns from the file's bytes.
        """
        files = self._files
        key = frame_key(entry, table)
        meta: dict[str, str] = {}
        try:
            checked = files.path is not None or files.storage.capabilities.ranged_reads
            if checked:
                meta, rows, _ = files.rows_of(key)
                if meta.get("storeframes.flattener") != version or newer_format(meta):
                    return None
                if (why := self._misfit(entry.id, rows, table=table, version=version)) is not None:
                    self._mistrust(key, why)
                    return None
            data = files.storage.get(key)
            meta = parquet_meta(data)
            if meta.get("storeframes.flattener") != version or newer_format(meta):
                return None
            misfit = None if checked else self._misfit(entry.id, rows_in(data), table=table, version=version)
            if misfit is not None:
                self._mistrust(key, misfit)
                return None
            if schema is not None and _without_entry(parquet_columns(data)) != schema:
                return None  # built again from the raw answer, and written over
            frame = read_parquet(data).drop(ENTRY, strict=False)
            why = trust.one(entry, frame) if trust is not None else None
            if why is not None:
                self._mistrust(key, why)
                return None
            return frame
        except (FileNotFoundError, IsADirectoryError):
            if files.is_folder(key):
                files.warn_once(f"read {key}", f"cache file {name(key)} is a folder; the frame is built again")
                return None
            return GONE
        except unreadable() as exc:
            if not newer_writer(meta):
                files.set_aside(key, exc)
            return None

    def _read_singles(
        self, entries: list[Entry], table: str, version: str, schema: pl.Schema, trust: Trust | None = None
    ) -> list[pl.DataFrame | object | None]:
        """:meth:`_read_single` of each of ``entries``, from a folder, in one scan (polars reads the files side by
        side), each answer's frame a slice of it, held to the rows the index recorded; a file's footer is read first
        only where the index has no rows recorded (a cache of an earlier version)."""
        out: dict[str, pl.DataFrame | object | None] = {}
        wanted: list[tuple[Entry, Path]] = []
        for entry in entries:
            key = frame_key(entry, table)
            meta: dict[str, str] = {}
            try:
                path = self._files.local(key)
                assert path is not None
                if self._rows(entry.id, table, version) is not None:  # rows recorded by this flattener: no footer
                    # opened (other columns fail the scan; ``trust`` holds each file's rows to the record once read)
                    wanted.append((entry, path))
                    continue
                meta = pl.read_parquet_metadata(path)
                if meta.get("storeframes.flattener") != version or newer_format(meta):
                    out[entry.id] = None
                elif _without_entry(pl.Schema(pl.read_parquet_schema(path))) != schema:
                    out[entry.id] = None  # built again from the raw answer, and written over
                else:
                    wanted.append((entry, path))
            except (FileNotFoundError, IsADirectoryError, AssertionError, AttributeError):
                out[entry.id] = self._read_single(entry, table, version, schema, trust)  # says why, as alone
            except unreadable() as exc:
                if not newer_writer(meta):
                    self._files.set_aside(key, exc)
                out[entry.id] = None
        if wanted:
            try:
                rows = pl.scan_parquet(
                    [path for _, path in wanted], hive_partitioning=False, glob=False, include_file_paths=_FILE
                ).collect()
                rows = rows.drop(ENTRY, strict=False)
                if _without_entry(rows.drop(_FILE).schema) != schema:  # the first file's columns are not the table's
                    raise _NotInOrder
                files = {str(path): entry.id for entry, path in wanted}
                slices = _slices(rows, _FILE, files, together=True)
            except unreadable(_NotInOrder):  # a file cut short, or not where it was: each alone
                found = {e.id: self._read_single(e, table, version, schema, trust) for e, _ in wanted}
            else:
                found = dict[str, pl.DataFrame | object | None](slices)
                named = {str(path): entry for entry, path in wanted}
                heights = {str(path): slices[entry.id].height for entry, path in wanted}
                untrusted = trust.many(rows, _FILE, named, heights) if trust is not None else {}
                for entry, path in wanted:
                    if (why := untrusted.get(str(path))) is not None:
                        self._mistrust(frame_key(entry, table), why)
                        found[entry.id] = None
            out.update(found)
        return [out[entry.id] for entry in entries]

    def parts(self, table: str, *, relist: bool) -> dict[str, Part]:
        """The compacted files of ``table`` and what each holds; listed once, then again when asked."""
        with self._lock:
            parts = self._parts.get(table)
            if parts is not None and not relist:
                return dict(parts)
        folder = frames_prefix(table)
        keys_all = [k for k in self._files.keys(folder) if k.endswith(".parquet") and in_folder(k, folder)]
        keys = [k for k in keys_all if is_part(k)]
        with self._lock:
            self._own[table] = {name(k).removesuffix(".parquet") for k in keys_all if not is_part(k)}
            known = self._parts.setdefault(table, {})
            for gone in set(known) - set(keys):
                del known[gone]
            new = [k for k in keys if k not in known]
        for key in new:
            part = self.part(key)
            if part is not None:
                with self._lock:
                    self._parts.setdefault(table, {})[key] = part
        with self._lock:
            return dict(self._parts.get(table, {}))

    def forget_parts(self, table: str | None = None) -> None:
        """Forget the compacted files of ``table`` (of every table): they are listed again at the next read."""
        with self._lock:
            if table is None:
                self._parts.clear()
                self._own.clear()
            else:
                self._parts.pop(table, None)
                self._own.pop(table, None)

    def part(self, key: str) -> Part | None:
        """What the compacted frame file ``key`` holds, from its footer; None when it is gone or unreadable."""
        files = self._files
        meta: dict[str, str] = {}
        try:
            meta, columns = files.footer_of(key)
            if newer_format(meta):
                files.skip_newer(key)
                return None
            groups = json.loads(meta["storeframes.row_groups"])
            held = {e: i for i, ids in enumerate(groups) for e in ids}
            held.update((e, -1) for e in json.loads(meta.get("storeframes.empty", "[]")))
            rows = tuple(files.rows_of(key)[2])
            return Part(meta["storeframes.flattener"], held, _without_entry(columns), rows)
        except FileNotFoundError:
            return None
        except unreadable() as exc:
            if newer_writer(meta):
                files.skip_newer(key)
            else:
                files.set_aside(key, exc)
            return None

    def _part_rows(self, key: str, ids: list[str], groups: Collection[int]) -> pl.DataFrame:
        """The rows of the answers ``ids`` in the compacted file ``key`` (row groups ``groups``), in the
        file's order: one scan, the answers a filter the reader pushes down to the row groups."""
        wanted = pl.col(ENTRY).is_in(ids)
        path = self._files.local(key)
        if path is not None:
            return pl.scan_parquet(path, hive_partitioning=False, glob=False).filter(wanted).collect()
        import pyarrow.parquet as pq

        with pq.ParquetFile(self._files.open(key)) as handle:  # only the row groups wanted are read
            stored = handle.read_row_groups(sorted(groups))
        return pl.DataFrame(stored).filter(wanted)

    def _read_from_parts(
        self,
        entries: list[Entry],
        table: str,
        version: str,
        *,
        relist: bool,
        schema: pl.Schema | None = None,
        trust: Trust | None = None,
    ) -> dict[str, pl.DataFrame]:
        """The frames of ``entries`` held by compacted files; a file holding one that ``trust`` finds is not
        its answer's is set aside whole (a file planted, or written over): its frames are built again."""
        parts = self.parts(table, relist=relist)
        if schema is not None:
            for key, part in list(parts.items()):
                if part.version == version and part.columns is not None and part.columns != schema:
                    self._files.set_aside(key, "its columns are not the table's; its frames are built again")
                    with self._lock:
                        self._parts.get(table, {}).pop(key, None)
                    del parts[key]
        with self._lock:
            own = set(self._own.get(table, ()))
        wanted: dict[str, dict[int, list[str]]] = {}
        for entry in entries:
            if entry.id in own:
                continue  # read from its own file
            for key, part in parts.items():
                group = part.groups.get(entry.id)
                if group is not None and part.version == version:
                    wanted.setdefault(key, {}).setdefault(group, []).append(entry.id)
                    break
        found: dict[str, pl.DataFrame] = {}
        for key, groups in wanted.items():
            ids = sorted({i for group in groups.values() for i in group})
            if (why := self._part_misfit(parts[key], table, version, groups)) is not None:
                self._mistrust(key, why)  # before any of its rows is read
                with self._lock:
                    self._parts.get(table, {}).pop(key, None)
                continue
            try:
                rows = self._part_rows(key, ids, [g for g in groups if g >= 0])
            except FileNotFoundError:  # replaced by a newer compaction: the caller looks again
                continue
            except unreadable() as exc:
                self._files.set_aside(key, exc)
                with self._lock:
                    self._parts.get(table, {}).pop(key, None)
                continue
            frames = _by_entry(rows, ids)
            by_id = {e.id: e for e in entries}
            held = {i: by_id[i] for i in ids}
            untrusted = trust.many(rows, ENTRY, held, {i: frames[i].height for i in ids}) if trust is not None else {}
            why = next((untrusted[i] for i in ids if i in untrusted), None)
            if why is not None:
                self._mistrust(key, why)
                with self._lock:
                    self._parts.get(table, {}).pop(key, None)
                continue
            found.update(frames)
        return found

    def _part_misfit(self, part: Part, table: str, version: str, groups: Collection[int]) -> str | None:
        """Why the row groups ``groups`` of a compacted file (as its footer counts their rows) cannot hold the
        frames of the answers it lists in them: not the rows the index recorded for those answers."""
        for group in (g for g in groups if g >= 0):
            members = [e for e, g in part.groups.items() if g == group]
            recorded = [self._rows(e, table, version) for e in members]
            if part.rows is None or any(r is None for r in recorded):
                continue  # answers of an earlier version: checked once read
            if group >= len(part.rows) or part.rows[group] != sum(r or 0 for r in recorded):
                held = part.rows[group] if group < len(part.rows) else 0
                return f"{held:,} rows in a row group where the index recorded {sum(r or 0 for r in recorded):,}"
        return None

    def locate(
        self,
        entries: Collection[Entry],
        table: str,
        version: str,
        *,
        schema: pl.Schema | None = None,
        relist: bool = False,
    ) -> dict[str, str]:
        """The key of the file holding each entry's kept frame ``table`` of the flattener ``version``; entries
        whose frame is not kept (or by another flattener, or with other columns than ``schema``) are left out.
        ``relist=True`` lists the compacted files again first, as after a file was found gone."""
        self.flush()  # the frames still being written first
        located: dict[str, str] = {}
        for again in (True,) if relist else (False, True):
            parts = self.parts(table, relist=again)
            with self._lock:
                own = set(self._own.get(table, ()))
            for entry in entries:
                if entry.id in own:
                    continue  # its own file
                for key, part in parts.items():
                    if entry.id in part.groups and part.version == version:
                        if schema is None or part.columns == schema:
                            located[entry.id] = key
                        break
            rest = [e for e in entries if e.id not in located]
            gone = False
            for entry in rest:
                key = frame_key(entry, table)
                try:
                    meta, found = self._files.footer_of(key)
                    columns = _without_entry(found) if schema is not None else None
                except FileNotFoundError:
                    gone = True
                    continue
                except unreadable() as exc:
                    self._files.set_aside(key, exc)
                    continue
                if meta.get("storeframes.flattener") == version and columns == schema:
                    located[entry.id] = key
            if not gone:
                break
        return located

    # -- writing --------------------------------------------------------------------------

    def write(self, entry: Entry, table: str, version: str, frame: pl.DataFrame, *, later: bool = False) -> None:
        """Keep ``frame`` as the table ``table`` of ``entry``, written by the flattener ``version`` (with an
        ``entry`` column naming the answer its rows come from). With ``later``, a frame of at least
        :attr:`WRITE_BEHIND_ROWS` rows is written on the writer thread and this returns at once, served
        from memory until its file is there; :meth:`flush` waits for it (a client does when closed)."""
        if later and frame.height >= self.WRITE_BEHIND_ROWS:
            key = (entry.id, table)
            with self._lock:
                if self._writer is None:
                    self._writer = Writer()
                    BEHIND.add(self)
                future = self._writer.submit(functools.partial(self._write, entry, table, version, frame))
                self._writing[key] = (version, frame, future)
            future.add_done_callback(lambda done: self._written(key, done))
            return
        self._write(entry, table, version, frame)

    def _written(self, key: tuple[str, str] | None, done: Future[None]) -> None:
        with self._lock:
            held = self._writing.get(key) if key is not None else None
            if held is not None and held[2] is done:
                del self._writing[key]  # type: ignore[arg-type]
            self._jobs.discard(done)
            if not self._writing and not self._jobs and self._writer is not None:  # idle: its thread ends
                self._writer.shutdown()  # (a later write starts one)
                self._writer = None

    def _behind(self, job: Callable[[], None]) -> None:
        """Run ``job`` on the writer thread, after the writes already submitted; :meth:`flush` waits for it."""
        with self._lock:
            if self._writer is None:
                self._writer = Writer()
                BEHIND.add(self)
            future = self._writer.submit(job)
            self._jobs.add(future)
        future.add_done_callback(functools.partial(self._written, None))

    def pending(self) -> list[Future[None]]:
        """The writes still being made behind the calls: frames, and the index's records of their rows."""
        with self._lock:
            return [*(future for _, _, future in self._writing.values()), *self._jobs]

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every frame written behind is in its file; False if ``timeout`` passed first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while futures := self.pending():  # a write may submit another (its index's record of the frame's rows)
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            _, not_done = wait_for(futures, timeout=left)
            if not_done:
                return False
        return True

    def _written_later(
        self, entries: Collection[Entry], table: str, version: str, schema: pl.Schema | None
    ) -> dict[str, pl.DataFrame]:
        """The frames of ``entries`` still on their way to their files, by entry id."""
        if not self._writing:
            return {}
        with self._lock:
            held = [(e.id, self._writing.get((e.id, table))) for e in entries]
        return {
            entry_id: item[1]
            for entry_id, item in held
            if item is not None and item[0] == version and (schema is None or item[1].schema == schema)
        }

    def _write(self, entry: Entry, table: str, version: str, frame: pl.DataFrame) -> None:
        meta = provenance(entry, TABLE_FORMAT, table=table, flattener=version, entry_id=entry.id)
        try:
            data = parquet_bytes(frame.with_columns(pl.lit(entry.id, pl.String).alias(ENTRY)), meta, statistics=False)
            self._files.mark()
            self._files.storage.put(frame_key(entry, table), data)
            with self._lock:
                if table in self._own:
                    self._own[table].add(entry.id)
            rewrite = self._record(entry, table, version, frame.height) if self._record is not None else None
            if rewrite is not None:  # the answer's index file records the rows: written behind the call
                self._behind(rewrite)
        except OSError as exc:
            warn(f"could not write a frame to the cache at {self._files.location}: {exc}", CacheWarning)
