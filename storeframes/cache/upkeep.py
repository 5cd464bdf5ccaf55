"""Looking after a cache: what it holds (:meth:`Upkeep.info`, :meth:`Upkeep.holds`) and removing what
it no longer needs (:meth:`Upkeep.clear`), touching only what this version recognises."""

from __future__ import annotations

import functools
import io
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

import polars as pl

from ..answers import CLOCK_SKEW, Entry
from ..catalog import ENDPOINTS
from ..errors import plural, warn
from ..ledger import SERVICE
from .answer_files import AnswerFiles, format_of
from .compaction import Compaction
from .files import CacheWarning, Files
from .frame_files import FrameFiles
from .index import Index
from .layout import ANSWERS, FORMAT, PART, index_key, is_part, prefix
from .ledger_files import LedgerFiles
from .stores import StoreBase, SweepError

_STALE_SECONDS = 3600.0
"""A temporary file or an answer without an index younger than this may be a write in progress."""


class Aged(NamedTuple):
    """The entries of a cache by when their answers were kept (see :meth:`Upkeep.aged`): ``old``, kept longer
    ago than the age asked for; ``future``, whose files are dated in the future (a clock ahead when they were
    written, or times copied along with the files): they count as kept now, so they are old only for an age
    of 0, and a clear by age dates their files now, from when they age."""

    old: list[Entry]
    future: list[Entry]


def _services_in(storage: StoreBase, key: str) -> set[str]:
    """The services named by one index file: its ``service`` column (compacted) or its footer (one answer)."""
    try:
        source = io.BytesIO(storage.get(key))
        service = pl.read_parquet_metadata(source).get("storeframes.service")
        if service is not None:
            return {service}
        source.seek(0)
        return set(pl.read_parquet(source, columns=["service"])["service"].unique().drop_nulls().to_list())
    except Exception:  # a file being written, damaged or of another kind: the cache passes it over too
        return set()


class Upkeep:
    """What a cache holds and its clearing (see :meth:`storeframes.cache.Cache.info`,
    :meth:`~storeframes.cache.Cache.holds` and :meth:`~storeframes.cache.Cache.clear`)."""

    def __init__(
        self,
        files: Files,
        index: Index,
        answers: AnswerFiles,
        frames: FrameFiles,
        ledger: LedgerFiles,
        compaction: Compaction,
    ):
        self._files = files
        self._index = index
        self._answers = answers
        self._frames = frames
        self._ledger = ledger
        self._compaction = compaction

    def holds(self, service: str) -> bool:
        """Whether the cache holds answers of ``service``, from its index files, the compacted ones first."""
        files = self._files
        if not files.is_cache():
            return False
        keys = [key for each in ENDPOINTS for key in files.keys(prefix("index", each)) if key.endswith(".parquet")]
        keys.sort(key=lambda k: not is_part(k))  # each compacted file names many
        read = functools.partial(_services_in, files.storage)
        done, batch = 0, 1
        with ThreadPoolExecutor(max_workers=8) as pool:
            while done < len(keys):
                if any(service in services for services in pool.map(read, keys[done : done + batch])):
                    return True
                done, batch = done + batch, min(batch * 4, 1024)
        return False

    def kept_at(self, entries: list[Entry]) -> dict[str, float | None]:
        """When each entry's answer was kept in this cache, by entry id (POSIX seconds, by the store's clock:
        a folder's file times, a bucket's times of upload): the time its answer file was written, else the
        earliest of the index files naming it; None when no file of it is found. Never the ``fetched_at``
        the service (or the sandbox, with its pinned day) dated the answer with."""
        files, answers = self._files, self._answers
        naming: dict[str, list[str]] = {}
        for each in {e.endpoint for e in entries}:
            for key, held in self._index.files(each).items():
                for entry_id in held:
                    naming.setdefault(entry_id, []).append(key)

        def written(key: str) -> float | None:
            try:
                return files.storage.mtime(key)
            except (OSError, ValueError):  # cannot be looked at: no time from it
                return None

        def kept(entry: Entry) -> float | None:
            for key in answers.keys(entry):
                if (at := written(key)) is not None:
                    return at
            times = [at for key in naming.get(entry.id, ()) if (at := written(key)) is not None]
            return min(times, default=None)

        with ThreadPoolExecutor(max_workers=8) as pool:  # a bucket answers each look in a request of its own
            return dict(zip([e.id for e in entries], pool.map(kept, entries), strict=True))

    def aged(self, older_than: timedelta, endpoint: str | None = None) -> Aged:
        """The entries (of ``endpoint``) whose answers were kept at least ``older_than`` ago, and those
        whose files are dated more than :data:`~storeframes.answers.CLOCK_SKEW` in the future (see
        :meth:`kept_at`), which count as kept now; an entry with no file found is neither."""
        entries = self._index.entries(endpoint)
        now = datetime.now(UTC).timestamp()
        age, skew = older_than.total_seconds(), CLOCK_SKEW.total_seconds()
        kept = self.kept_at(entries)
        old = [e for e in entries if (at := kept[e.id]) is not None and now - min(at, now) >= age]
        future = [e for e in entries if (at := kept[e.id]) is not None and at > now + skew]
        return Aged(old, future)

    def redate(self, entries: list[Entry], problem: Callable[[str, str], None]) -> list[str]:
        """Write the answer files of ``entries`` again as they are, so that they are dated now (by the store's
        clock): an answer dated in the future ages from now on. The ids of those written again."""
        storage, done = self._files.storage, []
        for entry in entries:
            for key in self._answers.keys(entry):
                try:
                    storage.put(key, storage.get(key))
                except FileNotFoundError:
                    continue  # under its other name
                except OSError as exc:
                    problem(key, f"could not date {key} now ({exc})")
                    break
                done.append(entry.id)
                break
        return done

    def info(self) -> dict[str, Any]:
        """Location, size in bytes, entries, credits paid, spent and saved, unreadable files, files by kind."""
        files = self._files
        usage = files.storage.usage()
        entries = self._index.entries()
        counted = {"answers": 0, "index": 0, "frames": 0, "ledger": 0, "compacted": 0, "small": 0}
        for key in files.keys(""):
            kind = key.partition("/")[0]
            if kind in counted and key.endswith((".parquet", *ANSWERS)):
                counted[kind] += 1
                if kind in ("index", "frames"):
                    counted["compacted" if is_part(key) else "small"] += 1
        current = self._index.current(snapshots=True)  # the answers whose frames compaction keeps
        counted["superseded"] = sum(e.id not in current for e in entries)
        ledger = self._ledger.read()
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
            "path": files.location,
            "bytes": usage.size,
            "entries": len(entries),
            "by_endpoint": {each: sum(e.endpoint == each for e in entries) for each in ENDPOINTS},
            "credits_paid": real["paid"],
            "credits_spent": real["spent"],
            "credits_saved": real["saved"],
            "by_service": {each: by_service[each] for each in sorted(by_service, key=lambda n: (n != SERVICE, n))},
            "corrupt_files": usage.set_aside,
            "files": counted,
        }

    def clear(
        self,
        *,
        endpoint: str | None = None,
        older_than: timedelta | None = None,
        failed: list[str] | None = None,
        redated: list[str] | None = None,
    ) -> int:
        """Remove cached answers (and their frames); returns how many entries went (see
        :meth:`storeframes.cache.Cache.clear`)."""
        files, index, answers = self._files, self._index, self._answers
        if (endpoint is not None and endpoint not in ENDPOINTS) or not files.is_cache(mark=True):
            return 0
        now = datetime.now(UTC)
        age = older_than.total_seconds() if older_than is not None else 0.0
        problems: list[str] = failed if failed is not None else []

        def problem(name: str, message: str) -> None:
            problems.append(name)
            warn(f"{message} at {files.location}", CacheWarning)

        def remove(key: str) -> bool:
            try:
                files.storage.delete(key)
                return True
            except OSError as exc:
                problem(key, f"could not remove {key} ({exc}) from the cache")
                return False

        frames: dict[str, list[str]] = {}
        parts: list[str] = []
        for key in files.keys("frames/"):
            pieces = key.split("/")
            if len(pieces) == 3 and pieces[2].endswith(".parquet"):
                if pieces[2].startswith(PART):
                    parts.append(key)
                else:  # frames/table=<name>/<entry>.parquet, or frames/<name>/<entry>.parquet of earlier versions
                    frames.setdefault(pieces[2].removesuffix(".parquet"), []).append(key)
        names = [endpoint] if endpoint else list(ENDPOINTS)
        # an index that cannot be listed: its answers are not taken for answers without one
        listed = [each for each in names if index.sync(each)]
        removed: set[str] = set()
        rewrite: set[str] = set()
        aged = self.aged(older_than, endpoint) if older_than is not None else None
        chosen = {e.id for e in aged.old} if aged is not None else None
        if aged is not None and chosen is not None and aged.future:  # counted as kept now: they age from now on
            dated = self.redate([e for e in aged.future if e.id not in chosen], problem)
            if redated is not None:
                redated.extend(dated)
            elif dated:
                count = len(dated)
                warn(
                    f"{plural(count, 'cached answer')} at {files.location} {'had its' if count == 1 else 'had their'} "
                    "files dated in the future (a clock ahead when they were written, or times copied along with "
                    "the files): counted as kept now and dated now, so they go once older than the age asked",
                    CacheWarning,
                )
        for entry in index.entries(endpoint):
            if chosen is not None and entry.id not in chosen:
                continue
            if entry.id in files.newer or answers.format(entry) > FORMAT:
                continue  # a newer version's answer: left to it
            if not remove(index_key(entry)):
                continue  # still listed: its answer stays with it
            answer_gone = all([remove(key) for key in answers.keys(entry)])  # under either name
            for key in frames.get(entry.id, ()):
                remove(key)
            if any(entry.id in held and is_part(key) for key, held in index.files(entry.endpoint).items()):
                rewrite.add(entry.endpoint)
            index.forget(entry)
            if answer_gone:
                removed.add(entry.id)
        for each in sorted(rewrite):  # a compacted index listing removed answers: write it again without them
            try:
                self._compaction.compact_index(each)
            except OSError as exc:
                problem(prefix("index", each), f"could not rewrite the {each} index ({exc})")
        for key in parts if removed else ():  # compacted frames of removed answers only; others wait for compaction
            part = self._frames.part(key)
            if part is not None and part.groups and set(part.groups) <= removed:
                remove(key)
        self._frames.forget_parts()
        with files.lock:
            known = index.known() | files.newer | removed
        stale_age = max(_STALE_SECONDS, age)
        for each in listed:  # answers whose index was never written: their process stopped between the two
            for key in files.keys(prefix("answers", each)):
                pieces = key.split("/")
                suffix = next((s for s in ANSWERS if pieces[-1].endswith(s)), None)
                if len(pieces) != 3 or suffix is None or key in problems:
                    continue
                if pieces[2].removesuffix(suffix) in known:
                    continue
                try:
                    written = files.storage.mtime(key)
                except OSError:
                    continue
                if (
                    written is not None
                    and now.timestamp() - written > stale_age
                    and format_of(answers.head(key)) <= FORMAT
                ):
                    remove(key)
        folders = [prefix(kind, each) for each in names for kind in ("answers", "index")]
        if endpoint is None:
            folders += ["frames/", "ledger/"]
        for folder in folders:  # temporary files of stopped writers, and files set aside
            try:
                files.storage.sweep(stale_age, prefix=folder, set_aside_older_than_seconds=age)
            except SweepError as exc:
                for name, error in exc.failures:
                    problem(name, f"could not remove {name} ({error}) from the cache")
            except OSError as exc:
                problem(folder, f"could not sweep {folder} ({exc})")
        return len(removed)
