"""A hostile cache folder: what the cache and ``storeframes cache`` must never do to it, and never do with it.

Each case plants something a real folder can hold (a folder that is not a cache, links,
files of an unknown endpoint or a newer version, folders where files should be, files
that cannot be removed or listed, clocks ahead, text no terminal should print) and checks
what users rely on: the files that remain, the values served, the requests sent, the
messages and warnings. Everything happens under ``tmp_path``.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import shutil
import time
import warnings
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import storeframes as sf
from storeframes import engine, planning
from storeframes.answers import Response
from storeframes.cache import MARKER, Cache, CacheWarning
from storeframes.cache.stores import LocalStore, MemoryStore
from storeframes.catalog import ENDPOINTS
from storeframes.cli import main
from storeframes.errors import ResponseShapeError
from storeframes.fetch.pipeline import FRAMES
from storeframes.kept.tables import flattener_versions
from storeframes.sandbox import World
from tests import _summary
from tests.cache.test_cache_format import read_answer
from tests.conftest import SANDBOX_TODAY

WORLD = World(0)
IOS = list(WORLD.EXAMPLE_IOS_APPS)
KEYWORD = WORLD.EXAMPLE_KEYWORDS[0]
NOON = datetime.combine(SANDBOX_TODAY, datetime.min.time(), UTC) + timedelta(hours=12)
SEARCH = {"keyword": "photo editor", "country": "us", "language": "en", "device": "iphone"}
METADATA = {"apps": "284882215,310633997", "country": "us", "language": "en", "device": "iphone"}
DAY = 86400.0


class Clock:
    def __init__(self, now: datetime = NOON):
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def sandbox(folder: Path, **options: Any) -> sf.Client:
    options.setdefault("backoff", (0.001, 0.01))
    return sf.sandbox.client(today=SANDBOX_TODAY, cache_dir=folder, clock=Clock(), **options)


def arrivals(client: sf.Client) -> int:
    return len(client.sandbox_service.arrivals)


def keep(
    cache: Cache, endpoint: str, params: dict[str, str], *, at: datetime = NOON, result: Any = None, service="unit"
):
    """Store an answer of ``endpoint`` to ``params`` fetched ``at``; the entry (or None when it was not kept)."""
    body = {"params": params} if result is None else result
    response = Response(endpoint, params, body, cost=21, max_credit_cost=26, status=200, fetched_at=at)
    ep = ENDPOINTS[endpoint]
    scope, cells = planning.scope_of(ep, params), planning.cells_of(ep, params)
    return cache.store(response, service=service, scope=scope, cells=cells)


def look(cache: Cache, endpoint: str, params: dict[str, str], now: datetime) -> dict:
    """What the engine serves of ``params`` from ``cache`` at ``now``."""
    ep = ENDPOINTS[endpoint]
    held = cache.newest(ep, service="unit", scope=planning.scope_of(ep, params), cells=planning.cells_of(ep, params))
    return engine.serving(ep, held, now=now, refresh="auto")


def aged(path: Path, seconds: float) -> Path:
    """Date ``path`` (not following a link) ``seconds`` ago."""
    then = time.time() - seconds
    os.utime(path, (then, then), follow_symlinks=False)
    return path


def tree(folder: Path) -> dict[str, bytes | None]:
    """Every file and folder under ``folder`` (links not followed): its bytes, None for a folder or a link."""
    found: dict[str, bytes | None] = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(root) / name
            relative = str(path.relative_to(folder))
            found[relative] = path.read_bytes() if path.is_file() and not path.is_symlink() else None
    return found


@pytest.fixture
def filled(tmp_path: Path) -> Path:
    """A cache folder holding metadata of two apps and a search, fetched by the sandbox at noon."""
    folder = tmp_path / "cache"
    with sandbox(folder) as client:
        client.metadata_frame(IOS[:2])
        client.search_frame(KEYWORD)
    assert len(Cache(folder).entries()) == 2
    return folder


def _not_a_cache(tmp_path: Path) -> Path:
    """A project folder that is not a cache: notes, a build folder with temporary and corrupt files, old ones."""
    folder = tmp_path / "project"
    (folder / "build" / "answers").mkdir(parents=True)
    (folder / "notes.txt").write_text("keep me")
    for name in ("build/.linker.o.1234.tmp", "build/output.json.corrupt", "draft.corrupt", "build/answers/old.json.gz"):
        (folder / name).write_bytes(b"precious")
        aged(folder / name, 400 * DAY)
    return folder


# -- cache clear and compact: only a cache, only its own files ---------------------------------------


@pytest.mark.parametrize("command", ["clear", "compact"])
def test_a_folder_that_is_not_a_cache_is_refused_and_left_untouched(tmp_path, capsys, command):
    _summary.hostile("cache: folder that is not a cache")
    folder = _not_a_cache(tmp_path)
    before = tree(folder)
    assert main(["cache", command, "--cache-dir", str(folder)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"{folder} is not a storeframes cache" in captured.err and MARKER in captured.err
    assert tree(folder) == before  # nothing removed, nothing created


def test_an_empty_cache_dir_is_an_error_not_the_current_folder(tmp_path, monkeypatch, capsys):
    _summary.hostile("cache: empty --cache-dir")
    folder = _not_a_cache(tmp_path)
    monkeypatch.chdir(folder)
    before = tree(folder)
    for command in ("clear", "compact", "info", "ls"):
        assert main(["cache", command, "--cache-dir", ""]) == 2, command
        captured = capsys.readouterr()
        assert captured.out == "" and "--cache-dir is empty" in captured.err
    assert tree(folder) == before


@pytest.mark.parametrize("blank", ["", "  "])
def test_an_empty_cache_dir_in_python_is_an_error_not_the_current_folder(tmp_path, monkeypatch, blank):
    _summary.hostile("cache: empty cache_dir in Python")
    folder = _not_a_cache(tmp_path)
    monkeypatch.chdir(folder)
    monkeypatch.delenv("STOREFRAMES_CACHE_DIR", raising=False)
    before = tree(folder)
    uses = {
        "Client": lambda: sf.Client("k", base_url="https://api.example.com/api/public/store", cache_dir=blank),
        "sandbox client": lambda: sf.sandbox.client(today=SANDBOX_TODAY, cache_dir=blank),
        "scan": lambda: sf.scan("versions", cache_dir=blank),
        "compact": lambda: sf.compact(cache_dir=blank),
        "Cache": lambda: sf.Cache(blank),
    }
    for name, use in uses.items():
        with pytest.raises(sf.ConfigurationError, match=r"cache_dir is empty|is no cache folder") as caught:
            use()
        assert "give a folder path" in str(caught.value), name
    assert tree(folder) == before  # no marker, no answers/, index/ or leases/ in the current folder


@pytest.mark.parametrize("command", ["info", "ls"])
def test_looking_at_a_folder_that_is_not_a_cache_says_so_and_creates_nothing(tmp_path, capsys, command):
    _summary.hostile("cache: folder that is not a cache")
    folder = _not_a_cache(tmp_path)
    before = tree(folder)
    assert main(["cache", command, "--cache-dir", str(folder)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and f"{folder} is not a storeframes cache" in captured.err
    assert tree(folder) == before


def test_the_cache_writes_its_marker_and_a_cache_of_an_earlier_version_is_known_by_its_layout(filled, capsys):
    marker = json.loads((filled / MARKER).read_text())
    assert marker["format"] == 2 and marker["written_by"] == f"storeframes {sf.__version__}"
    (filled / MARKER).unlink()  # as an earlier version left it
    assert Cache(filled).is_cache() and not (filled / MARKER).exists()  # looking writes nothing
    assert main(["cache", "clear", "--yes", "--older-than", "100000", "--cache-dir", str(filled)]) == 0
    assert capsys.readouterr().out == f"removed 0 cached answers kept more than 100000 days ago from {filled}\n"
    assert (filled / MARKER).exists() and len(Cache(filled).entries()) == 2


def test_clear_never_follows_a_link_out_of_the_cache(filled, tmp_path, capsys):
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    for name in ("a.json.gz", "b.parquet", ".c.json.gz.0000.tmp", "d.json.gz.corrupt", "deep/e.json.gz"):
        (outside / name).write_bytes(b"not the cache's")
        aged(outside / name, 400 * DAY)
    before = tree(outside)
    plants = {
        "answers/endpoint=changes": outside,  # a known endpoint's folder, linked out
        "index/endpoint=metrics": outside,
        "frames/table=linked": outside,
        "ledger/linked": outside,
        "answers/endpoint=search/linked.json.gz": outside / "a.json.gz",  # a linked file among the answers
        "answers/endpoint=metadata/linked": outside / "deep",
    }
    for name, target in plants.items():
        _summary.hostile("cache: link planted in the cache")
        link = filled / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target, target_is_directory=target.is_dir())
        aged(link, 400 * DAY)
    store = LocalStore(filled)
    assert not [k for k in store.list() if "linked" in k or "endpoint=changes" in k or "endpoint=metrics" in k]
    assert store.list("answers/endpoint=changes/") == [] and store.usage("ledger/linked/").size == 0
    store.delete("answers/endpoint=changes/a.json.gz")  # a key under a linked folder has no value here
    assert store.set_aside("answers/endpoint=changes/a.json.gz") is False
    assert store.mtime("answers/endpoint=changes/a.json.gz") is None
    assert store.sweep(0) == 0

    assert main(["cache", "clear", "--yes", "--cache-dir", str(filled)]) == 0
    assert capsys.readouterr().out == f"removed 2 cached answers from {filled}\n"
    assert tree(outside) == before
    assert all((filled / name).is_symlink() for name in plants)


def test_clear_leaves_the_files_of_endpoints_it_does_not_know(filled, capsys):
    _summary.hostile("cache: endpoint of a newer version")
    newer = {
        "answers/endpoint=app_reviews/20260101T000000000000Z-abc-123456.json.gz": b"a newer version's answer",
        "index/endpoint=app_reviews/20260101T000000000000Z-abc-123456.parquet": b"its index",
        "answers/endpoint=app_reviews/.20260102.json.gz.1234.tmp": b"its write in progress",
        "answers/endpoint=app_reviews/20251231.json.gz.corrupt": b"what it set aside",
        "index/endpoint=app_reviews/part-20260101.parquet": b"its compacted index",
    }
    for name, data in newer.items():
        (filled / name).parent.mkdir(parents=True, exist_ok=True)
        (filled / name).write_bytes(data)
        aged(filled / name, 400 * DAY)
    assert main(["cache", "clear", "--yes", "--older-than", "0", "--cache-dir", str(filled)]) == 0
    assert capsys.readouterr().out == f"removed 2 cached answers kept more than 0 days ago from {filled}\n"
    assert main(["cache", "clear", "--yes", "--cache-dir", str(filled)]) == 0
    for name, data in newer.items():
        assert (filled / name).read_bytes() == data, name


def test_older_than_applies_to_set_aside_and_temporary_files_too(filled, capsys):
    _summary.hostile("cache: old and new leftovers")
    folder = filled / "index" / "endpoint=search"
    files = {
        "young.parquet.corrupt": 60.0,  # set aside a minute ago
        "old.parquet.corrupt": 40 * DAY,
        ".young.parquet.1111.tmp": 2 * 3600.0,  # a stopped writer two hours ago: younger than 30 days
        ".old.parquet.2222.tmp": 40 * DAY,
    }
    for name, age in files.items():
        (folder / name).write_bytes(b"x")
        aged(folder / name, age)
    orphan = filled / "answers" / "endpoint=search" / "20261001T000000000000Z-0123456789ab-abcdef.json.gz"
    orphan.write_bytes(gzip.compress(b'{"format":1}'))
    aged(orphan, 2 * 3600.0)
    assert main(["cache", "clear", "--yes", "--older-than", "30", "--cache-dir", str(filled)]) == 0
    assert capsys.readouterr().out == f"removed 0 cached answers kept more than 30 days ago from {filled}\n"
    left = {path.name for path in folder.iterdir()}
    assert {"young.parquet.corrupt", ".young.parquet.1111.tmp"} <= left
    assert not {"old.parquet.corrupt", ".old.parquet.2222.tmp"} & left
    assert orphan.exists()  # an answer without an index, two hours old: younger than 30 days
    assert main(["cache", "clear", "--yes", "--cache-dir", str(filled)]) == 0  # without --older-than: every leftover
    left = {path.name for path in folder.iterdir()}
    assert not {"young.parquet.corrupt", "old.parquet.corrupt", ".old.parquet.2222.tmp"} & left
    assert ".young.parquet.1111.tmp" not in left and not orphan.exists()  # older than an hour: a stopped writer


def _dated(folder: Path, entry_id: str, seconds: float) -> None:
    """Date the answer and index files of ``entry_id`` ``seconds`` from now (in the past when negative)."""
    then = time.time() + seconds
    for path in [*folder.glob(f"answers/*/{entry_id}.json.*"), *folder.glob(f"index/*/{entry_id}.parquet")]:
        os.utime(path, (then, then))


def test_clear_older_than_judges_an_answer_by_when_it_was_kept_not_by_the_day_it_is_dated(tmp_path, capsys):
    _summary.hostile("cache: answers dated by a pinned day, files dated in the future")
    folder = tmp_path / "cache"
    past, future = date(2025, 1, 15), datetime.now(UTC).date() + timedelta(days=400)
    at = {day: datetime.combine(day, datetime.min.time(), UTC) + timedelta(hours=12) for day in (past, future)}
    with sf.sandbox.client(today=past, cache_dir=folder, clock=Clock(at[past]), backoff=(0.001, 0.01)) as client:
        client.metadata_frame(IOS[:2])  # dated 2025-01-15 by the sandbox, kept now
        client.search_frame(KEYWORD)
    with sf.sandbox.client(today=future, cache_dir=folder, clock=Clock(at[future]), backoff=(0.001, 0.01)) as client:
        client.metadata_frame(IOS[2:4])  # dated 400 days ahead, kept now
        client.search_frame(WORLD.EXAMPLE_KEYWORDS[1])
    entries = Cache(folder).entries()
    assert len(entries) == 4
    by_day = {(e.endpoint, e.fetched_at.date()): e for e in entries}
    stale = by_day["metadata", past]  # its files written three days ago
    ahead = by_day["search", future]  # its files dated a month ahead: a clock ahead, or times copied along
    _dated(folder, stale.id, -3 * DAY)
    _dated(folder, ahead.id, 30 * DAY)

    assert main(["cache", "clear", "--yes", "--older-than", "1", "--cache-dir", str(folder)]) == 0
    captured = capsys.readouterr()
    assert captured.out == (
        f"removed 1 cached answer kept more than 1 day ago from {folder}\n"
        "kept 1 cached answer whose files were dated in the future (a clock ahead, or times copied along with the "
        "files): counted as kept now and dated now, it goes with a clear --older-than 1 once 1 day old\n"
    )
    assert captured.err == ""
    left = {e.id for e in Cache(folder).entries()}
    assert left == {e.id for e in entries} - {stale.id}  # the answers kept minutes ago stay, whatever their day
    assert not list(folder.glob(f"answers/*/{stale.id}.*")) and not list(folder.glob(f"frames/*/{stale.id}.*"))

    assert main(["cache", "clear", "--yes", "--older-than", "0", "--cache-dir", str(folder)]) == 0
    assert capsys.readouterr().out == f"removed 3 cached answers kept more than 0 days ago from {folder}\n"
    assert Cache(folder).entries() == []  # an age of 0: everything, the answer dated ahead too


@pytest.mark.s3
def test_a_bucket_answer_dated_long_ago_by_the_service_but_uploaded_now_survives_clearing_by_age(s3_bucket):
    from storeframes.cache.stores.bucket import ObjectStore

    store = ObjectStore(s3_bucket.url, storage_options=s3_bucket.storage_options)
    cache = Cache(store)
    old = keep(cache, "search", SEARCH, at=datetime.now(UTC) - timedelta(days=700))
    assert old is not None
    assert cache.clear(older_than=timedelta(days=1)) == 0
    assert Cache(store).entries() == [old] and len(store.list("answers/")) == 1
    assert cache.aged(timedelta(days=1)) == ([], [])
    time.sleep(1.1)  # a bucket dates its objects to the second
    assert cache.clear(older_than=timedelta(seconds=0.5)) == 1
    assert Cache(store).entries() == [] and store.list("answers/") == []


def test_clear_reports_files_it_cannot_remove_and_goes_on(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "cache"
    with sandbox(folder) as client:
        client.metadata_frame(IOS[:1])
        client.metadata_frame(IOS[1:2])
        client.search_frame(KEYWORD)
    blocked, locked, cleared = Cache(folder).entries()
    _summary.hostile("cache: folder where a file should be")
    answer = folder / "answers" / "endpoint=metadata" / f"{blocked.id}.json.zst"
    answer.unlink()
    (answer / "inside").mkdir(parents=True)
    (answer / "inside" / "keep.txt").write_text("not the cache's to remove")
    _summary.hostile("cache: file without permission")
    index = folder / "index" / "endpoint=metadata" / f"{locked.id}.parquet"
    unlink = os.unlink

    def refusing(path, *args, **kwargs):
        if os.fspath(path) == str(index):
            raise PermissionError(13, "Permission denied", str(path))
        return unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", refusing)
    assert main(["cache", "clear", "--yes", "--cache-dir", str(folder)]) == 1
    captured = capsys.readouterr()
    assert captured.out == f"removed 1 cached answer from {folder}\n"
    problems = [line for line in captured.err.splitlines() if "could not" in line]
    assert len(problems) == 3, captured.err  # one line per file, then how many
    assert any(f"{blocked.id}.json.zst" in line for line in problems)
    assert any(f"{locked.id}.parquet" in line and "Permission denied" in line for line in problems)
    assert problems[-1] == "storeframes cache clear: 2 files could not be removed (named above)"
    assert (answer / "inside" / "keep.txt").read_text() == "not the cache's to remove"
    assert [e.id for e in Cache(folder).entries()] == [locked.id]  # its index stayed, so did its answer
    assert Cache(folder).load(locked) is not None

    failed: list[str] = []
    with pytest.warns(CacheWarning, match="could not remove"):
        assert Cache(folder).clear(failed=failed) == 0
    assert failed == [f"index/endpoint=metadata/{locked.id}.parquet"]


# -- reading a damaged cache: a miss with a warning, never an exception out of a frame call ------------


def test_an_index_folder_that_cannot_be_listed_stops_the_call_before_paying_again(filled, monkeypatch):
    _summary.hostile("cache: folder without permission")
    unreadable = str(filled / "index" / "endpoint=metadata")
    scandir = os.scandir

    def refusing(path=".", *args):
        if os.fspath(path) == unreadable:
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return scandir(path, *args)

    monkeypatch.setattr(os, "scandir", refusing)
    with sandbox(filled) as client, pytest.warns(CacheWarning, match="cannot list index/endpoint=metadata/"):
        with pytest.raises(sf.CacheUnavailableError, match=r"cannot list index/endpoint=metadata/.*nothing was sent"):
            client.metadata_frame(IOS[:2])
        assert arrivals(client) == 0  # "cannot list" is not "nothing cached": nothing paid again
        assert client.search_frame(KEYWORD).height and arrivals(client) == 0  # the other endpoint is served
    with sandbox(filled, offline=True) as reader, pytest.warns(CacheWarning, match="cannot list"):
        with pytest.raises(sf.CacheUnavailableError, match=r"cannot list index/endpoint=metadata/"):
            reader.metadata_frame(IOS[:2])  # offline too: not "not cached"


@pytest.mark.parametrize(
    "damage",
    [
        lambda f: f.drop("title"),
        lambda f: f.rename({"title": "name"}),
        lambda f: f.with_columns(pl.col("title").cast(pl.Categorical)),
    ],
    ids=["dropped", "renamed", "retyped"],
)
def test_a_kept_frame_with_other_columns_is_built_again_for_free(filled, damage):
    _summary.hostile("cache: frame with other columns")
    with sandbox(filled) as client:
        expected = client.metadata_frame(IOS[:2])
    (path,) = (filled / "frames" / "table=metadata").glob("*.parquet")
    stored = pq.read_table(path)
    damaged = damage(pl.from_arrow(stored)).to_arrow().replace_schema_metadata(stored.schema.metadata)
    pq.write_table(damaged, path)
    with sandbox(filled) as client:
        frame = client.metadata_frame(IOS[:2])
        assert frame.schema == expected.schema and frame.equals(expected)
        assert arrivals(client) == 0  # no request, no credit
    assert pq.read_schema(path).remove_metadata() == stored.schema.remove_metadata()  # written again, right
    assert sf.scan("metadata", cache_dir=filled).collect().sort("app_id").equals(expected.sort("app_id"))


def test_a_compacted_frame_file_with_other_columns_is_built_again_for_free(filled):
    _summary.hostile("cache: frame with other columns")
    with sandbox(filled) as client:
        expected = client.metadata_frame(IOS[:2])
    Cache(filled).compact(frames=flattener_versions())
    (part,) = (filled / "frames" / "table=metadata").glob("part-*.parquet")
    with pq.ParquetFile(part) as handle:
        meta = handle.schema_arrow.metadata
        groups = [handle.read_row_group(i) for i in range(handle.num_row_groups)]
    names = ["name" if name == "title" else name for name in groups[0].schema.names]
    with pq.ParquetWriter(part, groups[0].rename_columns(names).schema.with_metadata(meta)) as writer:
        for group in groups:  # the same row groups, as the footer lists them
            renamed = group.rename_columns(names).replace_schema_metadata(meta)
            writer.write_table(renamed, row_group_size=max(1, group.num_rows))
    with sandbox(filled) as client, pytest.warns(CacheWarning, match="columns"):
        assert client.metadata_frame(IOS[:2]).equals(expected)
        assert arrivals(client) == 0
    with sandbox(filled) as client, warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)  # built and kept once: read quietly since
        assert client.metadata_frame(IOS[:2]).equals(expected) and arrivals(client) == 0


def pq_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, row_group_size=max(1, table.num_rows))
    return sink.getvalue().to_pybytes()


@pytest.mark.parametrize("kind", ["answers", "index", "frames", "ledger"])
def test_a_cache_file_replaced_by_a_folder_is_a_miss_not_a_crash(filled, kind, capsys):
    _summary.hostile("cache: folder where a file should be")
    with sandbox(filled) as client:
        expected = client.metadata_frame(IOS[:2])
    pattern = {
        "answers": "answers/endpoint=metadata/*.json.zst",
        "index": "index/endpoint=metadata/*.parquet",
        "frames": "frames/table=metadata/*.parquet",
        "ledger": "ledger/*.parquet",
    }[kind]
    path = sorted(filled.glob(pattern))[0]
    if kind == "answers":
        shutil.rmtree(filled / "frames")  # the frame is built from the answer again
    path.unlink()
    (path / "inside").mkdir(parents=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with sandbox(filled) as client:
            assert client.metadata_frame(IOS[:2]).equals(expected)
            assert arrivals(client) == (1 if kind in ("answers", "index") else 0)  # a miss only when its answer is lost
            client.spend()
    cache_warnings = [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]
    if kind in ("answers", "frames"):
        assert any(path.name in text and "folder" in text for text in cache_warnings), cache_warnings
    assert (path / "inside").is_dir() and not path.with_name(path.name + ".corrupt").exists()  # left where it is
    assert main(["cache", "info", "--cache-dir", str(filled)]) == 0
    assert main(["cache", "ls", "--cache-dir", str(filled)]) == 0
    capsys.readouterr()


def test_an_answer_fetched_in_the_future_is_stale_not_fresh_for_ever():
    _summary.hostile("cache: clock ahead")
    cache = Cache(MemoryStore())
    keep(cache, "metadata", METADATA, at=NOON + timedelta(days=1))  # a colleague's clock a day ahead
    assert look(cache, "metadata", METADATA, NOON) == {}
    near = keep(cache, "search", SEARCH, at=NOON + timedelta(seconds=3))  # a few seconds: tolerated
    assert [e.id for e in look(cache, "search", SEARCH, NOON).values()] == [near.id]
    yesterday = (SANDBOX_TODAY - timedelta(days=1)).isoformat()
    history = {**SEARCH, "start_date": yesterday, "end_date": yesterday}
    keep(cache, "search_history", history, at=NOON + timedelta(days=5))  # would make yesterday look final
    assert look(cache, "search_history", history, NOON) == {}
    assert look(cache, "search_history", history, NOON + timedelta(days=5)) != {}


def test_files_of_a_newer_format_are_left_in_place_and_reported_once(tmp_path):
    _summary.hostile("cache: files of a newer format")
    store = LocalStore(tmp_path / "cache")
    cache = Cache(store)
    entry = keep(cache, "metadata", METADATA)
    other = keep(cache, "search", SEARCH)
    answer = f"answers/endpoint=metadata/{entry.id}.json.zst"
    raw, _ = read_answer(store.get(answer))
    store.put(
        answer, pa.compress(json.dumps({**raw, "format": 3}).encode() + b'\n{"new": "shape"}', "zstd", asbytes=True)
    )
    before = tree(store.root)
    with pytest.warns(CacheWarning, match="newer storeframes") as caught:
        assert cache.load(entry) is None
    assert len(caught) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)  # once
        assert look(cache, "metadata", METADATA, NOON) == {}
    assert tree(store.root) == before  # nothing set aside
    assert cache.clear() == 1  # the search answer; the newer one is left to its version
    assert store.get(answer) == before[answer] and cache.load(other) is None

    # an index footer and a ledger file that say they have a newer format
    index = pq.read_table(pa.BufferReader(store.get(f"index/endpoint=metadata/{entry.id}.parquet")))
    footer = pq.read_metadata(pa.BufferReader(store.get(f"index/endpoint=metadata/{entry.id}.parquet"))).metadata
    meta = {**{k: v for k, v in footer.items() if k != b"ARROW:schema"}, b"storeframes.format": b"3"}
    newer_index = "index/endpoint=search/20990101T000000000000Z-aaaaaaaaaaaa-bbbbbb.parquet"
    store.put(newer_index, pq_bytes(index.replace_schema_metadata(meta)))
    newer_ledger = pa.table({"x": [1]}).replace_schema_metadata({"storeframes.format": "3"})
    store.put("ledger/newer-0001.parquet", pq_bytes(newer_ledger))
    before = tree(store.root)
    fresh = Cache(store)
    with pytest.warns(CacheWarning, match="newer storeframes"):
        assert look(fresh, "search", SEARCH, NOON) == {}
        assert fresh.ledger.read().is_empty()
    assert tree(store.root) == before


def test_a_lone_surrogate_in_an_answer_is_kept_as_it_came():
    _summary.hostile("cache: lone surrogate in an answer")
    cache = Cache(MemoryStore())
    result = {"name": "half an emoji \ud83d", "café": "写真 🙂", "nested": ["\udc00"]}
    entry = keep(cache, "metadata", METADATA, result=result)
    assert entry is not None
    loaded = cache.load(entry)
    assert loaded is not None and loaded.result == result


def test_an_answer_json_cannot_write_is_a_warning_not_a_crash():
    _summary.hostile("cache: answer json cannot write")
    cache = Cache(MemoryStore())
    with pytest.warns(CacheWarning, match="could not keep a metadata answer.*TypeError"):
        assert keep(cache, "metadata", METADATA, result={"when": object()}) is None
    assert cache.entries() == []


# some polars releases panic (PanicException derives from BaseException) where others raise ComputeError
@pytest.mark.parametrize("failure", [pl.exceptions.ComputeError, pl.exceptions.PanicException])
def test_a_flattener_failure_is_a_shape_error_and_calling_again_costs_nothing(tmp_path, monkeypatch, failure):
    _summary.hostile("cache: flattener failure")
    spec = FRAMES["versions_frame"]

    def broken(answers):
        raise failure("a column of an unexpected type")

    monkeypatch.setitem(FRAMES, "versions_frame", dataclasses.replace(spec, flatten=broken))
    with sandbox(tmp_path / "cache") as client:
        with pytest.raises(ResponseShapeError) as raised:
            client.versions_frame(IOS[:2])
        message = str(raised.value)
        assert (
            "versions_frame" in message and failure.__name__ in message and "calling again costs no credits" in message
        )
        (entry,) = client.cache.entries("metadata")
        assert entry.id in message and arrivals(client) == 1
        monkeypatch.setitem(FRAMES, "versions_frame", spec)  # fixed
        frame = client.versions_frame(IOS[:2])
        assert arrivals(client) == 1 and frame.height > 0  # from the kept answer
    assert frame.equals(sf.sandbox.client(today=SANDBOX_TODAY, cache_dir=False, clock=Clock()).versions_frame(IOS[:2]))


# -- what cache ls and info print ------------------------------------------------------------------------


def test_cache_ls_and_info_escape_control_characters(tmp_path, capsys):
    _summary.hostile("cache: terminal escapes in cached text")
    folder = tmp_path / "cache\x1b[31m"
    cache = Cache(folder)
    keyword = "\x1b]0;owned\x07café 写真\u202e\x9b"
    assert keep(cache, "search", {**SEARCH, "keyword": keyword}, at=datetime.now(UTC)) is not None
    assert keep(cache, "metadata", METADATA, at=datetime.now(UTC), service="evil\x1b[2J") is not None
    assert main(["cache", "ls", "--cache-dir", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out and "\x9b" not in out
    assert 'keyword="\\u001b]0;owned\\u0007café 写真\\u202e\\x9b"' in out  # visible escapes, letters as they are
    assert main(["cache", "info", "--cache-dir", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "cache\\x1b[31m" in out and "evil\\x1b[2J" in out
    assert main(["cache", "ls", "--cache-dir", str(tmp_path / "missing\x1b[0m")]) == 2
    assert capsys.readouterr().err == (
        f"storeframes cache ls: the folder {tmp_path}/missing\\x1b[0m does not exist (given by --cache-dir): no cache there\n"
    )


@pytest.mark.s3
def test_a_bucket_is_marked_and_refused_when_not_a_cache(s3_bucket, capsys):
    from storeframes.cache.stores.bucket import ObjectStore

    _summary.hostile("cache: bucket that is not a cache")
    store = ObjectStore(s3_bucket.url, storage_options=s3_bucket.storage_options)
    store.put("reports/q1.csv", b"someone else's")
    store.set_aside("reports/q1.csv")
    store.put("reports/q2.csv", b"someone else's")
    cache = Cache(store)
    assert not cache.is_cache() and cache.clear() == 0 and cache.compact()["files_written"] == 0
    assert store.list() == ["reports/q2.csv"] and store.usage().set_aside == 1
    assert keep(cache, "search", SEARCH) is not None
    assert MARKER in store.list() and Cache(store).is_cache()
    assert json.loads(store.get(MARKER))["format"] == 2
