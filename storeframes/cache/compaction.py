"""Compaction: the small files of a cache (one per answer) merged into a few, written first and the
files they replace removed after, so readers in other processes accept either state."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import polars as pl

from .._version import __version__
from ..catalog import ENDPOINTS
from ..errors import carry
from .answer_files import AnswerFiles
from .files import Files
from .frame_files import FrameFiles
from .index import Index
from .index_files import FRAME_ROWS, index_rows, part_frame_rows
from .layout import ENTRY, FORMAT, GZ, TABLE_FORMAT, frames_prefix, in_folder, is_part, name, part_key, prefix
from .parquet import parquet_bytes, unreadable

if TYPE_CHECKING:  # pyarrow is imported when first needed, not with the package
    import pyarrow as pa

K = TypeVar("K")

_PART_ROWS = 1_000_000  # the most rows of one compacted frame file
_GROUP_ROWS = 8_192  # about the rows of one of its row groups (an answer's rows are never split)


def read_many(read: Callable[[K], Any], keys: list[K], *, chunk: int = 256) -> Iterable[tuple[K, Any]]:
    """``(key, read(key))`` in order, a chunk at a time on a few threads (Parquet reads and a store's
    requests release the GIL)."""
    from concurrent.futures import ThreadPoolExecutor

    if len(keys) <= 4:
        yield from ((key, read(key)) for key in keys)
        return
    with ThreadPoolExecutor(max_workers=min(8, (os.cpu_count() or 2) * 2)) as pool:
        for start in range(0, len(keys), chunk):
            batch = keys[start : start + chunk]
            yield from zip(batch, pool.map(carry(read), batch), strict=True)  # its warnings go with the call


class Compaction:
    """Merges a cache's index files and kept frames (see :meth:`storeframes.cache.Cache.compact`)."""

    def __init__(self, files: Files, index: Index, answers: AnswerFiles, frames: FrameFiles):
        self._files = files
        self._index = index
        self._answers = answers
        self._frames = frames

    def compact(self, *, frames: Mapping[str, str] | None = None, endpoint: str | None = None) -> dict[str, int]:
        """Merge the small files into a few; returns what it did. A store that is not a cache is left untouched."""
        files = self._files
        done = {"index_files_merged": 0, "frame_files_merged": 0, "frames_dropped": 0, "files_written": 0}
        if not files.is_cache(mark=True):
            return done  # nothing of a cache to merge: a store that is not one is never touched
        names = [endpoint] if endpoint else list(ENDPOINTS)
        for each in names:
            try:
                merged, written = self.compact_index(each)
            except OSError as exc:  # what was merged stays merged; the rest waits for the next compaction
                files.warn_once(f"compact {each}", f"could not compact the {each} index at {files.location}: {exc}")
                continue
            done["index_files_merged"] += merged
            done["files_written"] += written
        if frames:
            # the answers whose frames stay, once for every table: the newest of each cell, and the
            # snapshots of current-only endpoints (the newest of a cell on its day), which nothing else keeps
            current = self._index.current(snapshots=True)
            for table, version in frames.items():
                try:
                    merged, dropped, written = self._compact_frames(table, version, current)
                except OSError as exc:
                    files.warn_once(
                        f"compact {table}", f"could not compact the {table} frames at {files.location}: {exc}"
                    )
                    continue
                done["frame_files_merged"] += merged
                done["frames_dropped"] += dropped
                done["files_written"] += written
        return done

    def compact_index(self, endpoint: str) -> tuple[int, int]:
        """One compacted index file for ``endpoint``; (files replaced, files written)."""
        held_by = self._index.compactable(endpoint)
        if not held_by:
            return 0, 0
        answered = self._answers.answered(endpoint)
        ids = sorted({i for held in held_by.values() for i in held if i in answered})
        entries = self._index.known_entries(ids)
        (first, held), *others = held_by.items()
        if not others and is_part(first) and len(held) == len(entries):
            return 0, 0  # compacted already, every answer it lists still there
        written = 0
        if entries:
            key = part_key(prefix("index", endpoint))
            meta = {
                "storeframes.version": __version__,
                "storeframes.format": str(FORMAT),
                "storeframes.endpoint": endpoint,
                "storeframes.compacted": "index",
                "storeframes.entries": str(len(entries)),
                # the answers of format 1 (.json.gz), so a reader asks for them by that name
                "storeframes.gz": json.dumps([e.id for e in entries if answered[e.id] == GZ], separators=(",", ":")),
            }
            recorded = self._index.rows_of(e.id for e in entries)
            if recorded:  # the rows of the answers' kept frames, which readers hold the frames to
                meta[FRAME_ROWS] = part_frame_rows(recorded)
            self._answers.of_format_1(e.id for e in entries if answered[e.id] == GZ)
            self._files.storage.put(key, parquet_bytes(index_rows(entries), meta))
            written = 1
            self._index.hold(key, entries)
        for old, _ in read_many(self._files.storage.delete, list(held_by)):
            self._index.unhold(endpoint, old)
        return len(held_by), written

    def _compact_frames(self, table: str, version: str, current: set[str]) -> tuple[int, int, int]:
        """A few compacted files of ``table`` holding the frames of the ``current`` answers (snapshots included);
        (files replaced, answers' frames left out, files written)."""
        folder = frames_prefix(table)
        keys = [
            k
            for k in self._files.ours(self._files.storage.list(folder))
            if k.endswith(".parquet") and in_folder(k, folder)
        ]
        parts = [k for k in keys if is_part(k)]
        if not keys or (len(parts) == len(keys) and len(parts) <= 1 and not self._superseded_in(parts, current)):
            return 0, 0, 0
        import pyarrow as pa
        import pyarrow.compute as pc

        kept: list[pa.Table] = []
        kept_ids: set[str] = set()
        dropped: set[str] = set()
        seen: set[str] = set()
        read: list[str] = []
        written = rows = 0
        for key, stored in read_many(self._read_whole, keys):
            if stored is None:
                continue
            read.append(key)
            meta = stored.schema.metadata or {}
            if is_part(key):
                groups = json.loads(meta.get(b"storeframes.row_groups", b"[]"))
                ids = [i for group in groups for i in group] + json.loads(meta.get(b"storeframes.empty", b"[]"))
            else:
                ids = [name(key).removesuffix(".parquet")]
            if meta.get(b"storeframes.flattener") != version.encode() or ENTRY not in stored.schema.names:
                dropped.update(ids)
                continue
            keep = [i for i in ids if i in current and i not in seen]
            dropped.update(i for i in ids if i not in current)
            agreeing = self._agreeing(stored, keep, table, version)  # a frame not of its answer's rows: left out
            dropped.update(set(keep) - set(agreeing))
            keep = agreeing
            seen.update(keep)
            if len(keep) < len(ids):
                # through polars, not ``pa.array``: pyarrow's first array of a Python list imports pandas
                wanted = pl.Series(keep, dtype=pl.String).to_arrow().cast(stored.schema.field(ENTRY).type)
                stored = stored.filter(pc.is_in(stored.column(ENTRY), wanted))
            kept.append(stored.replace_schema_metadata(None))
            kept_ids.update(keep)
            rows += stored.num_rows
            if len(kept) >= 512:  # copied into one table: each file's table holds on to its read buffers
                kept = [pa.concat_tables(kept, promote_options="permissive").combine_chunks()]
            if rows >= _PART_ROWS:  # a file's worth: written now, so memory stays bounded
                written += self._write_frame_parts(folder, table, version, kept, kept_ids)
                kept, kept_ids, rows = [], set(), 0
        written += self._write_frame_parts(folder, table, version, kept, kept_ids)
        for _ in read_many(self._files.storage.delete, read):  # on a few threads: a bucket deletes one request each
            pass
        self._frames.forget_parts(table)  # listed again at the next read
        return len(read), len(dropped - seen), written

    def _agreeing(self, stored: pa.Table, ids: list[str], table: str, version: str) -> list[str]:
        """The answers of ``ids`` whose rows in ``stored`` are as many as the index recorded for their frame
        (or of which it recorded none); the others' frames are built again from their answers when read."""
        recorded = {i: n for i in ids if (n := self._index.frame_rows(i, table, version)) is not None}
        if not recorded:
            return ids
        import pyarrow.compute as pc

        counted = pc.value_counts(stored.column(ENTRY))
        counts = dict(zip(counted.field("values").to_pylist(), counted.field("counts").to_pylist(), strict=True))
        return [i for i in ids if recorded.get(i, counts.get(i, 0)) == counts.get(i, 0)]

    def _read_whole(self, key: str) -> pa.Table | None:
        """A whole Parquet file of the store; None when it is gone (removed by another compaction) or unreadable."""
        import pyarrow.parquet as pq

        try:
            with pq.ParquetFile(self._files.open(key)) as handle:  # quicker than read_table, and no pyarrow.dataset
                table = handle.read()
                kept = {k: v for k, v in (handle.metadata.metadata or {}).items() if k != b"ARROW:schema"}
            # the file's key-value metadata, where a writer may have put it beside the Arrow schema's
            return table.replace_schema_metadata({**kept, **(table.schema.metadata or {})})
        except FileNotFoundError:
            return None
        except unreadable() as exc:
            self._files.set_aside(key, exc)
            return None

    def _superseded_in(self, parts: list[str], current: set[str]) -> bool:
        """Whether compacted frame files hold frames of answers not ``current``."""
        for key in parts:
            part = self._frames.part(key)
            if part is not None and any(i not in current for i in part.groups):
                return True
        return False

    def _write_frame_parts(self, folder: str, table: str, version: str, tables: list[pa.Table], ids: set[str]) -> int:
        """Write the rows of ``tables`` (of the answers ``ids``) as compacted files; how many files.

        A file holds at most about :data:`_PART_ROWS` rows, in row groups of about
        :data:`_GROUP_ROWS` that never split an answer's rows; its footer lists the
        answers of each row group (and those with no rows), so a reader takes only the
        row groups it needs.
        """
        if not ids:
            return 0
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        merged = pa.concat_tables(tables, promote_options="permissive") if len(tables) > 1 else tables[0]
        merged = merged.sort_by(ENTRY)
        counted = pc.value_counts(merged.column(ENTRY))
        counts = dict(zip(counted.field("values").to_pylist(), counted.field("counts").to_pylist(), strict=True))
        files: list[tuple[list[list[str]], list[str]]] = [([], [])]  # per file: row groups, answers with no rows
        rows_in_file = rows_in_group = 0
        for entry_id in sorted(ids):
            n = counts.get(entry_id, 0)
            groups, empty = files[-1]
            if n == 0:
                empty.append(entry_id)
                continue
            if rows_in_file and rows_in_file + n > _PART_ROWS:
                files.append(([], []))
                groups, empty = files[-1]
                rows_in_file = 0
            if not groups or rows_in_group + n > _GROUP_ROWS:
                groups.append([])
                rows_in_group = 0
            groups[-1].append(entry_id)
            rows_in_group += n
            rows_in_file += n
        offset = 0
        for groups, empty in files:
            meta = {
                "storeframes.version": __version__,
                "storeframes.format": str(TABLE_FORMAT),
                "storeframes.table": table,
                "storeframes.flattener": version,
                "storeframes.compacted": "frames",
                "storeframes.row_groups": json.dumps(groups, separators=(",", ":")),
                "storeframes.empty": json.dumps(empty, separators=(",", ":")),
            }
            buffer = io.BytesIO()
            with pq.ParquetWriter(buffer, merged.schema.with_metadata(meta)) as writer:
                for group in groups:
                    n = sum(counts[i] for i in group)
                    writer.write_table(merged.slice(offset, n).replace_schema_metadata(meta), row_group_size=n)
                    offset += n
            self._files.storage.put(part_key(folder), buffer.getvalue())
        return len(files)
