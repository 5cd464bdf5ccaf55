"""The :class:`Cache`: the parts of a cache put together over its store.

The layout of a cache and its formats are described in :mod:`storeframes.cache.layout`. Each
concern is a part of its own, given what it shares (the files of the store, with the one lock
and the reporter of troubles, and the index): :class:`~storeframes.cache.index.Index`,
:class:`~storeframes.cache.answer_files.AnswerFiles`,
:class:`~storeframes.cache.frame_files.FrameFiles` (with the write-behind thread),
:class:`~storeframes.cache.ledger_files.LedgerFiles`, :class:`~storeframes.cache.run_files.RunFiles`,
:class:`~storeframes.cache.event_files.EventFiles`, :class:`~storeframes.cache.digest_files.DigestFiles`,
:class:`~storeframes.cache.compaction.Compaction` and :class:`~storeframes.cache.upkeep.Upkeep`.

The parts a user reads and writes are attributes of the cache: ``cache.frames``, ``cache.ledger``,
``cache.runs``, ``cache.events`` and ``cache.digests``, each with its own methods (``cache.ledger.read()``,
``cache.runs.write(row)``). A new kept table is a new part, not new methods of :class:`Cache`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable, Mapping
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..answers import Entry, Response
from ..catalog import Endpoint
from ..errors import CacheUnavailableError, shown_when_half_built, warn
from ..planning import Cell
from .answer_files import AnswerFiles, answer_file
from .compaction import Compaction
from .coordination_record import Coordination, read_record, write_record
from .digest_files import DigestFiles
from .event_files import EventFiles
from .files import CacheWarning, Files
from .frame_files import FrameFiles
from .index import Index
from .index_files import index_file
from .layout import index_key, is_part, new_id, prefix
from .ledger_files import LedgerFiles
from .run_files import RunFiles
from .stores import Store, StoreBase, store_for
from .upkeep import Aged, Upkeep

if TYPE_CHECKING:
    from .. import engine

    def _is_the_engines_index(cache: Cache) -> engine.Index:
        """Checked by the type checker: a cache is the index the engine plans against (the engine's port,
        which the cache serves; the engine knows no cache)."""
        return cache


__all__ = ["Cache", "CacheWarning"]


class Cache:
    """A cache (see :mod:`storeframes.cache.layout` for its layout), in a folder or another store.

    ``path_or_store`` is a folder (a path, kept in a :class:`~storeframes.cache.stores.LocalStore`),
    a bucket address (``s3://bucket/prefix``, with ``storage_options``) or any
    :class:`~storeframes.cache.stores.Store`, turned into a store by
    :func:`~storeframes.cache.stores.store_for`. One :class:`Cache` may serve several
    clients and threads; several processes may share one folder. The index of each
    endpoint is read lazily and kept in memory; files written by other processes are
    picked up at the next lookup.

    >>> cache = Cache("./storeframes-cache")  # doctest: +SKIP
    >>> client = Client(cache_dir=cache)      # doctest: +SKIP
    >>> scratch = Cache(MemoryStore())        # doctest: +SKIP
    >>> cache.ledger.read()                   # doctest: +SKIP
    """

    def __init__(
        self, path_or_store: str | os.PathLike[str] | Store, *, storage_options: Mapping[str, str] | None = None
    ):
        try:
            store = store_for(path_or_store, storage_options)
            failure = None
        except (ValueError, TypeError, ImportError) as exc:  # raised afresh, without the frames that saw the options
            failure = exc.with_traceback(None)
        finally:
            del storage_options  # no credential among this frame's locals, in a traceback or a debugger
        if failure is not None:
            raise failure
        files = Files(store)
        self.storage: StoreBase = files.storage
        """Where the files are kept."""
        self.path: Path | None = files.path
        """The folder of a cache kept in a folder; None for another store."""
        self._files = files
        self._answers = AnswerFiles(files)
        self._index = Index(files, of_format_1=self._answers.of_format_1)
        self.frames = FrameFiles(files, rows=self._index.frame_rows, record=self._index.record_rows)
        """The kept frames: :meth:`~storeframes.cache.frame_files.FrameFiles.read`, ``locate``, ``write`` and
        ``flush`` (the frames written behind the calls)."""
        self.ledger = LedgerFiles(files)
        """The ledger of credits: :meth:`~storeframes.cache.ledger_files.LedgerFiles.read`, ``write`` and
        ``remove``."""
        self.runs = RunFiles(files)
        """The trackers' run log: :meth:`~storeframes.cache.run_files.RunFiles.read`, ``one``, ``running``
        and ``write``."""
        self.events = EventFiles(files)
        """The alerts' events: :meth:`~storeframes.cache.event_files.EventFiles.read`, ``write`` and
        ``address_key``."""
        self.digests = DigestFiles(files)
        """The digests of the day: :meth:`~storeframes.cache.digest_files.DigestFiles.read`, ``days`` and
        ``write``."""
        self._compaction = Compaction(files, self._index, self._answers, self.frames)
        self._upkeep = Upkeep(files, self._index, self._answers, self.frames, self.ledger, self._compaction)

    @property
    def location(self) -> str:
        """Where the cache lives, for people: its folder, ``"memory"``, or the store's repr."""
        return self._files.location

    @shown_when_half_built
    def __repr__(self) -> str:
        return f"Cache({self.location!r})" if self.path is not None else f"Cache({self.location})"

    @property
    def max_answer_bytes(self) -> int:
        """The largest body of a kept answer that is read (decompressed a piece at a time, never further): a
        larger one, or a file that would inflate past it, is set aside with a
        :class:`~storeframes.cache.CacheWarning` and treated as not cached. The ``max_body_bytes`` of the
        client that opened the cache (256 MB by default); its header may add 1 MB."""
        return self._answers.most

    @max_answer_bytes.setter
    def max_answer_bytes(self, value: int) -> None:
        self._answers.most = value

    def is_cache(self, *, mark: bool = False) -> bool:
        """Whether the store holds a storeframes cache: its marker (:data:`~storeframes.cache.MARKER`), or,
        for a cache of an earlier version, cached files where the layout puts them (an ``answers/endpoint=*``,
        ``index/endpoint=*`` or ``ledger/`` folder holding answers or Parquet files). ``mark=True``
        writes the marker into a cache recognised by its layout. Looking creates nothing. A
        :class:`~storeframes.cache.stores.MemoryStore` (a store only this process sees) holds nothing but the
        cache's files: always a cache.

        >>> Cache("/home/me").is_cache()  # doctest: +SKIP
        False
        """
        return self._files.is_cache(mark=mark)

    def check_writable(self) -> None:
        """Check that the cache can keep answers, before a call pays for any: once per store and process, a
        small object written and removed. Raises :class:`~storeframes.CacheUnavailableError` naming the
        address, what failed, the likely cause and the settings to look at."""
        self._files.probe()

    def coordination(self) -> Coordination | None:
        """How the team sharing this cache coordinates, as recorded by the first member that fetched into it
        (:mod:`storeframes.cache.coordination_record`); None when nothing is recorded. An OSError when the store cannot be
        read, a ValueError when the record is damaged."""
        return read_record(self._files)

    def record_coordination(self, coordination: Coordination, *, replace: bool = False) -> Coordination:
        """Record how the team coordinates unless it is recorded (``replace=True``: whatever is); the
        coordination that stands (another member's, when it recorded first). An OSError when the store
        cannot be written."""
        return write_record(self._files, coordination, replace=replace)

    # -- answers and the index ------------------------------------------------------------

    def store(
        self,
        response: Response,
        *,
        service: str,
        scope: str,
        cells: Iterable[Cell],
        available: bool = True,
        scrub: Callable[[str], str] = lambda text: text,
        must_keep: bool = False,
    ) -> Entry | None:
        """Keep one answer; returns its entry, or None (with a :class:`CacheWarning`) when it cannot be kept.

        Never raises: the answer is paid for, and a failure to keep it (the storage, or a
        value JSON cannot hold) must not fail the call. With ``must_keep``, a store that
        fails to write raises :class:`~storeframes.CacheUnavailableError` instead (a call then
        stops rather than pay for answers it cannot keep). Text is kept as it came, a lone
        surrogate (half an emoji) included: :meth:`load` gives back the same strings.
        """
        entry = Entry(
            id=new_id(response.fetched_at, response.endpoint, response.params),
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
        failure: CacheUnavailableError | None = None
        try:
            data = answer_file(entry, response, scrub)
            index = index_file(entry)
            self._files.mark()
            self.storage.put(self._answers.key(entry), data)
            self.storage.put(index_key(entry), index)
        except Exception as exc:  # the answer is paid for: a failure to keep it never fails the call
            failure = self._files.unavailable("keep an answer", exc) if must_keep and isinstance(exc, OSError) else None
            if failure is None:
                reason = str(exc) if isinstance(exc, OSError) else f"{type(exc).__name__}: {exc}"
                warn(
                    f"could not keep a {entry.endpoint} answer in the cache at {self.location}: {reason}", CacheWarning
                )
                return None
        if failure is not None:
            raise failure  # outside the except: the store's error is in the message
        self._index.hold(index_key(entry), [entry])
        return entry

    def sync(self, endpoint: str) -> None:
        """Pick up the index files of ``endpoint`` that other processes wrote, and forget removed ones."""
        self._index.sync(endpoint)

    def check_listed(self, endpoint: str) -> None:
        """Raise :class:`~storeframes.CacheUnavailableError` when the last look at the index files of
        ``endpoint`` could not list them: what the cache holds cannot be told, and a call that went on
        would pay again for what it may hold ("cannot list" is not "nothing cached")."""
        if not self._files.listed(prefix("index", endpoint)):
            raise self._files.cannot_list(prefix("index", endpoint))

    def candidates(
        self, ep: Endpoint, *, service: str, scope: str, cells: Collection[Cell], sync: bool = True
    ) -> dict[Cell, list[Entry]]:
        """The entries holding each of ``cells`` of ``service`` and ``scope``, newest first (a cell none
        holds is left out): the cache as the engine's :class:`~storeframes.engine.Index`, which judges
        which of them may serve. ``sync=False`` skips looking for files other processes wrote since
        the last look (:meth:`sync`).
        """
        return self._index.candidates(ep, service=service, scope=scope, cells=cells, sync=sync)

    def newest(
        self, ep: Endpoint, *, service: str, scope: str, cells: Collection[Cell], sync: bool = True
    ) -> dict[Cell, Entry]:
        """The newest entry holding each of ``cells`` of ``service`` and ``scope`` (a cell none holds is
        left out): what the engine's plan judges (see :meth:`candidates`)."""
        return self._index.newest(ep, service=service, scope=scope, cells=cells, sync=sync)

    def prepare(self, ep: Endpoint, *, service: str, wanted: Mapping[str, Collection[Any]]) -> None:
        """Ready the index for a batch of calls (``wanted``: scope -> the entities they name) at once:
        a compacted index is searched once for all of them, not once per call."""
        self._index.prepare(ep.name, service=service, wanted=wanted)

    def load(self, entry: Entry) -> Response | None:
        """The cached answer of ``entry``; None when its file is gone or unreadable.

        An answer of format 2 is the body as it arrived, read by
        :func:`~storeframes.json_bodies.parse_answer` as a fresh one is (its result, and its echo:
        the body's ``metadata.request.params``); one of format 1 is the result as it was kept.
        An unreadable answer is set aside with its index file (a warning says so), so
        the cells it held count as not cached from then on, in every process.
        """
        response = self._answers.load(entry)
        if response is None:
            self._index.forget(entry)
        return response

    def entry(self, entry_id: str) -> Entry | None:
        """The entry called ``entry_id`` (as in :attr:`Response.entry <storeframes.Response.entry>`), if known."""
        return self._index.entry(entry_id)

    def entries(self, endpoint: str | None = None) -> list[Entry]:
        """Every entry in the cache (of one endpoint), oldest first."""
        return self._index.entries(endpoint)

    def holds(self, service: str) -> bool:
        """Whether the cache holds answers of ``service`` (``"service"``, ``"sandbox-<seed>"``), without reading them.

        Looks at the index: the ``service`` column of each compacted index file and the
        footer of each answer's index file, the compacted ones first, stopping at the first
        answer of ``service``: a folder of its answers is known by a read or two. A folder
        without them is read to its end, in growing batches on a few threads (10,000 answers
        not compacted: under a second). Unreadable files are passed over.
        """
        return self._upkeep.holds(service)

    def small_files(self, endpoints: Iterable[str]) -> int:
        """The index files of ``endpoints`` that hold one answer each (not compacted), the index synced first:
        what a compaction would merge, each with its answer's kept frames beside it.

        >>> cache.small_files(["search", "metadata"])  # doctest: +SKIP
        412
        """
        count = 0
        for endpoint in endpoints:
            self._index.sync(endpoint)
            count += sum(1 for key in self._index.files(endpoint) if not is_part(key))
        return count

    # -- the whole cache ------------------------------------------------------------------

    def compact(self, *, frames: Mapping[str, str] | None = None, endpoint: str | None = None) -> dict[str, int]:
        """Merge the small files into a few, so that the cache opens and reads quickly; returns what it did.

        Each endpoint's index files (one per answer) become one compacted index file
        (``index/endpoint=<name>/part-*.parquet``: the same rows, every answer kept).
        With ``frames`` (``{table: flattener version}``, as the frame functions write
        them), each table's kept frames of that version become a few compacted files
        (``frames/table=<name>/part-*.parquet``, rows grouped by answer), leaving out the
        frames of answers that newer answers replaced in every cell, of answers no longer
        in the cache, and of other flatteners (they are rebuilt from the raw answer when
        needed, at no cost). An answer of a current-only endpoint (metadata, metrics, live
        search) that is the newest of a cell on its UTC day keeps its frames, though newer
        days replaced it: it is that day's snapshot (:func:`storeframes.snapshots`). Raw
        answers are never touched.

        A store that is not a cache (:meth:`is_cache`) is left untouched.

        Safe while other processes read and write the same cache: the merged files are
        written first and the files they replace removed after, and a reader accepts
        either state (an answer held by two files counts once); files written meanwhile
        are left for the next compaction. Two compactions at once waste work, never data.
        """
        self.frames.flush()  # the frames still being written first
        return self._compaction.compact(frames=frames, endpoint=endpoint)

    # -- looking around and clearing ----------------------------------------------------------

    def info(self) -> dict[str, Any]:
        """Location, size in bytes, entries, credits paid, spent and saved, unreadable files.

        Credits are given per service and never summed across services: ``credits_paid``
        (what the cached answers cost), ``credits_spent`` (the ledger's ``cost``: every
        answer charged, failures and answers cleared since included) and ``credits_saved``
        (by cache hits) are the real service's; ``by_service`` maps each service found
        (``"service"``, ``"sandbox-<seed>"``, ``"unknown"`` for ledger rows of earlier
        versions) to its ``entries``, ``paid``, ``spent`` and ``saved``. ``entries`` and
        ``by_endpoint`` count the answers of every service. The size and the count of files
        set aside come from one :meth:`~storeframes.cache.stores.Store.usage` of the store. ``files``
        counts the files of each kind (``answers``, ``index``, ``frames``, ``ledger``), the
        ``compacted`` index and frame files and the ``small`` ones (one per answer) that
        :meth:`compact` would merge, and the answers replaced in every cell by newer ones
        (``superseded``) whose frames it would drop (not counting a current-only endpoint's
        newest answer of a cell on its day, a snapshot, whose frames it keeps).
        """
        self.frames.flush()  # the frames still being written first
        return self._upkeep.info()

    def aged(self, older_than: timedelta, *, endpoint: str | None = None) -> Aged:
        """The entries (of ``endpoint``) that ``clear(older_than=...)`` removes, and those whose files are dated
        in the future, as ``(old, future)``: these count as kept now (old only for an age of 0), and a clear by
        age dates their files now, so that they age from then.

        An answer's age is how long ago it was kept in this cache: the time its answer file
        was written (a folder's file time, a bucket's time of upload), else that of the
        earliest index file naming it. Not its ``fetched_at``, which the service dates (and the
        sandbox dates on its pinned day): a sandbox answer kept a minute ago is a minute old.
        """
        return self._upkeep.aged(older_than, endpoint)

    def clear(
        self,
        *,
        endpoint: str | None = None,
        older_than: timedelta | None = None,
        failed: list[str] | None = None,
        redated: list[str] | None = None,
    ) -> int:
        """Remove cached answers (and their frames); returns how many entries went.

        ``endpoint`` keeps the others; ``older_than`` removes only what is older than
        that: answers kept in this cache longer ago (by their files' times, see
        :meth:`aged`; never by the day the service dated them), files set aside as
        unreadable longer ago, and temporary files and answers without an index left by a
        stopped process (never younger than an hour, which may be a write in progress).
        Answers whose files are dated in the future (a clock ahead, times copied along with the
        files) count as kept now: ``older_than`` writes their answer files again as they are, so
        they are dated now and go once older than the age asked (``older_than=timedelta(0)`` and a
        clear without an age remove them at once); their ids go to ``redated`` when a list is
        given, else a :class:`CacheWarning` says how many. The ledger of credits spent is kept.

        Only what this version knows is touched: a store that is not a cache
        (:meth:`is_cache`) is left as it is (0 is returned), and so are the files of
        endpoints it does not know, answers of a newer format and anything outside
        ``answers/``, ``index/``, ``frames/`` and ``ledger/``; a folder is never followed
        through a link. A file that cannot be removed (no permission, a folder where it
        should be) is reported with a :class:`CacheWarning` and skipped, and its key is
        added to ``failed`` when a list is given.

        >>> cache.clear(older_than=timedelta(days=30))  # doctest: +SKIP
        12
        """
        self.frames.flush()  # the frames still being written first
        return self._upkeep.clear(endpoint=endpoint, older_than=older_than, failed=failed, redated=redated)
