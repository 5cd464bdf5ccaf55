"""The store contract, run over a folder (LocalStore), a dict (MemoryStore), a bucket (ObjectStore) and a toy
backend added the way a user adds one (tests/_toy_store.py) alike.

The bucket is on moto's S3 server on loopback (tests/_s3.py); without moto or obstore
those cases are skipped.
"""

from __future__ import annotations

import errno
import multiprocessing
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from storeframes.cache.stores import LocalStore, MemoryStore, NotAFileError, Store, Usage
from tests._toy_store import ToyStore

META = "answers/endpoint=metadata"


class Clock:
    """POSIX seconds that the test moves by hand."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


class Kit:
    """A store under test, and the means to date what it holds."""

    def __init__(self, kind: str, tmp_path: Path, bucket: Any = None):
        self.kind = kind
        self.clock = Clock()
        self.bucket = bucket
        self.store: Store
        if kind == "local":
            self.store = LocalStore(tmp_path / "cache")
        elif kind == "memory":
            self.store = MemoryStore(clock=self.clock)
        elif kind == "toy":
            self.store = ToyStore(f"toy://{tmp_path.name}", clock=self.clock)
        else:
            from storeframes.cache.stores import store_for

            self.store = store_for(bucket.url, storage_options=bucket.storage_options)

    def file(self, name: str) -> Path:
        assert isinstance(self.store, LocalStore)
        return self.store.root.joinpath(*name.split("/"))

    def put_old(self, key: str, data: bytes, seconds: float) -> None:
        """``put`` as if it had happened ``seconds`` ago."""
        if isinstance(self.store, LocalStore):
            self.store.put(key, data)
            then = time.time() - seconds
            os.utime(self.file(key), (then, then))
        elif self.bucket is not None:
            self.store.put(key, data)
            self.bucket.backdate(key, seconds)
        else:
            self.clock.now -= seconds
            self.store.put(key, data)
            self.clock.now += seconds

    def set_aside_ago(self, key: str, seconds: float) -> None:
        """``set_aside`` as if it had happened ``seconds`` ago."""
        if isinstance(self.store, LocalStore):
            assert self.store.set_aside(key)
            then = time.time() - seconds
            os.utime(self.file(key + ".corrupt"), (then, then))
        elif self.bucket is not None:
            assert self.store.set_aside(key)
            self.bucket.backdate(key + ".corrupt", seconds)
        else:
            self.clock.now -= seconds
            assert self.store.set_aside(key)
            self.clock.now += seconds


@pytest.fixture(params=["local", "memory", "s3", "toy"])
def kit(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Kit]:
    bucket = request.getfixturevalue("s3_bucket") if request.param == "s3" else None
    yield Kit(request.param, tmp_path, bucket)


def test_both_stores_are_stores(tmp_path):
    assert isinstance(LocalStore(tmp_path), Store) and isinstance(MemoryStore(), Store)
    assert LocalStore(str(tmp_path)).root == tmp_path and isinstance(LocalStore(str(tmp_path)).root, Path)


# -- the contract -------------------------------------------------------------------------


@pytest.mark.s3
def test_put_then_get_returns_the_same_bytes(kit):
    data = bytes(range(256)) * 3
    kit.store.put(f"{META}/a.json.gz", data)
    kit.store.put("ledger/s-0001.parquet", b"")
    assert kit.store.get(f"{META}/a.json.gz") == data
    assert kit.store.get("ledger/s-0001.parquet") == b""


@pytest.mark.s3
def test_put_replaces_the_value(kit):
    kit.store.put("index/endpoint=search/e.parquet", b"first")
    kit.store.put("index/endpoint=search/e.parquet", b"second, longer")
    assert kit.store.get("index/endpoint=search/e.parquet") == b"second, longer"
    assert kit.store.list("index/") == ["index/endpoint=search/e.parquet"]


@pytest.mark.s3
def test_put_if_absent_writes_only_the_first_value(kit):
    assert kit.store.put_if_absent("leases/metadata.lock", b"mine") is True
    assert kit.store.put_if_absent("leases/metadata.lock", b"yours") is False
    assert kit.store.get("leases/metadata.lock") == b"mine"
    kit.store.put("leases/metadata.lock", b"replaced")  # put still replaces
    assert kit.store.get("leases/metadata.lock") == b"replaced"
    kit.store.delete("leases/metadata.lock")
    assert kit.store.put_if_absent("leases/metadata.lock", b"again") is True
    assert kit.store.list("leases/") == ["leases/metadata.lock"]


@pytest.mark.s3
def test_getting_a_missing_key_raises_file_not_found(kit):
    with pytest.raises(FileNotFoundError):
        kit.store.get("answers/endpoint=search/none.json.gz")
    kit.store.put(f"{META}/a.json.gz", b"x")
    with pytest.raises(FileNotFoundError):
        kit.store.get(META)  # a folder holds no value
    with pytest.raises(FileNotFoundError):
        kit.store.get(f"{META}/a.json.gz/deeper")


@pytest.mark.s3
def test_list_is_sorted_and_holds_only_the_keys_under_the_prefix(kit):
    keys = [
        f"{META}/b.json.gz",
        "answers/endpoint=search/c.json.gz",
        f"{META}/a.json.gz",
        "frames/screenshots/a.parquet",
        "ledger/s-0002.parquet",
        "ledger/s-0001.parquet",
    ]
    for key in keys:
        kit.store.put(key, key.encode())
    assert kit.store.list(f"{META}/") == [f"{META}/a.json.gz", f"{META}/b.json.gz"]
    assert kit.store.list("answers/") == sorted(k for k in keys if k.startswith("answers/"))
    assert kit.store.list("answers/endpoint=meta") == [f"{META}/a.json.gz", f"{META}/b.json.gz"]
    assert kit.store.list("ledger/") == ["ledger/s-0001.parquet", "ledger/s-0002.parquet"]
    assert kit.store.list() == kit.store.list("") == sorted(keys)
    assert kit.store.list("index/") == [] and kit.store.list("answers/endpoint=changes/") == []


@pytest.mark.s3
def test_list_leaves_out_set_aside_values_and_temporary_files(kit):
    kit.store.put(f"{META}/good.json.gz", b"good")
    kit.store.put(f"{META}/bad.json.gz", b"bad")
    assert kit.store.set_aside(f"{META}/bad.json.gz") is True
    if kit.kind == "local":  # a write in progress (a MemoryStore has none, nor a bucket: a put is one request)
        kit.file(f"{META}/.good.json.gz.0badc0de.tmp").write_bytes(b"half")
    assert kit.store.list(f"{META}/") == [f"{META}/good.json.gz"]
    assert kit.store.list() == [f"{META}/good.json.gz"]


@pytest.mark.s3
def test_delete_removes_the_value_and_an_absent_key_is_fine(kit):
    kit.store.put(f"{META}/a.json.gz", b"a")
    kit.store.put(f"{META}/b.json.gz", b"b")
    kit.store.delete(f"{META}/a.json.gz")
    kit.store.delete(f"{META}/a.json.gz")
    kit.store.delete("never/was.parquet")
    assert kit.store.list() == [f"{META}/b.json.gz"]
    with pytest.raises(FileNotFoundError):
        kit.store.get(f"{META}/a.json.gz")
    assert kit.store.mtime(f"{META}/a.json.gz") is None


@pytest.mark.s3
def test_mtime_is_when_the_value_was_written(kit):
    assert kit.store.mtime(f"{META}/a.json.gz") is None
    before = time.time()
    kit.store.put(f"{META}/a.json.gz", b"a")
    written = kit.store.mtime(f"{META}/a.json.gz")
    assert written is not None and before - 2 <= written <= time.time() + 2
    kit.put_old(f"{META}/old.json.gz", b"old", 7200)
    old = kit.store.mtime(f"{META}/old.json.gz")
    assert old is not None and abs(time.time() - 7200 - old) < 5


@pytest.mark.s3
def test_set_aside_hides_the_value_under_its_key(kit):
    key = "index/endpoint=search/e.parquet"
    kit.store.put(key, b"not parquet")
    kit.store.put("index/endpoint=search/f.parquet", b"fine")
    assert kit.store.set_aside(key) is True
    assert kit.store.set_aside(key) is False  # already gone: another process was first
    assert kit.store.set_aside("index/endpoint=search/never.parquet") is False
    with pytest.raises(FileNotFoundError):
        kit.store.get(key)
    assert kit.store.mtime(key) is None
    assert kit.store.list("index/") == ["index/endpoint=search/f.parquet"]
    assert kit.store.usage() == Usage(size=len(b"not parquet") + len(b"fine"), set_aside=1)
    if kit.kind == "local":
        assert kit.file(key + ".corrupt").read_bytes() == b"not parquet"
    if kit.kind == "s3":
        assert kit.bucket.objects()[f"cache/{key}.corrupt"] == b"not parquet"
    kit.store.put(key, b"fetched again")  # the key is free for a new value
    assert kit.store.get(key) == b"fetched again" and len(kit.store.list("index/")) == 2


@pytest.mark.s3
def test_sweep_removes_only_old_set_aside_values_and_temporary_files(kit):
    for name in ("old", "new", "other"):
        kit.store.put(f"{META}/{name}.json.gz", name.encode())
    kit.store.put(f"{META}/live.json.gz", b"live")
    kit.put_old(f"{META}/old-live.json.gz", b"an old value is not swept", 7200)
    kit.set_aside_ago(f"{META}/old.json.gz", 7200)
    kit.set_aside_ago(f"{META}/new.json.gz", 60)
    kit.set_aside_ago(f"{META}/other.json.gz", 7200)
    kit.store.put("index/endpoint=search/x.parquet", b"x")
    kit.set_aside_ago("index/endpoint=search/x.parquet", 7200)
    temporary = 0
    if kit.kind == "local":
        old_tmp, new_tmp = kit.file(f"{META}/.old.json.gz.00000000.tmp"), kit.file(f"{META}/.new.json.gz.11111111.tmp")
        old_tmp.write_bytes(b"stopped half-way")
        new_tmp.write_bytes(b"in progress")
        then = time.time() - 7200
        os.utime(old_tmp, (then, then))
        temporary = 1
    live = [f"{META}/live.json.gz", f"{META}/old-live.json.gz"]

    assert kit.store.sweep(3600, prefix="index/") == 1  # only under the prefix
    assert kit.store.usage().set_aside == 3
    assert kit.store.sweep(3600) == 2 + temporary
    assert kit.store.usage().set_aside == 1  # the one set aside a minute ago
    assert kit.store.list() == live
    if kit.kind == "local":
        assert not old_tmp.exists() and new_tmp.exists()
    assert kit.store.sweep(3600, set_aside_older_than_seconds=0) == 1
    assert kit.store.usage().set_aside == 0
    assert kit.store.sweep(0) == temporary  # an age of 0 takes every temporary file too
    assert kit.store.sweep(0) == 0
    assert kit.store.list() == live and kit.store.get(f"{META}/live.json.gz") == b"live"


@pytest.mark.s3
def test_usage_counts_every_byte_and_the_set_aside_values(kit):
    assert kit.store.usage() == Usage(0, 0)
    kit.store.put(f"{META}/a.json.gz", b"12345")
    kit.store.put("frames/t/a.parquet", b"123")
    kit.store.put("frames/t/b.parquet", b"1")
    kit.store.set_aside("frames/t/b.parquet")
    assert kit.store.usage() == Usage(size=9, set_aside=1)
    assert kit.store.usage("frames/") == Usage(size=4, set_aside=1)
    assert kit.store.usage("answers/") == Usage(size=5, set_aside=0)


@pytest.mark.parametrize(
    "key",
    ["", "/etc/passwd", "../outside", "a/../../b", "a/..", "a//b", "a/", ".hidden", "a/.b.tmp", "a\\b", "a.corrupt"],
)
@pytest.mark.s3
def test_malformed_keys_are_refused(kit, key):
    store = kit.store
    for operation in (
        lambda: store.put(key, b"x"),
        lambda: store.put_if_absent(key, b"x"),
        lambda: store.get(key),
        lambda: store.delete(key),
        lambda: store.mtime(key),
        lambda: store.set_aside(key),
    ):
        with pytest.raises(ValueError, match="not a store key"):
            operation()
    assert store.list() == [] and store.usage() == Usage(0, 0)


@pytest.mark.parametrize("prefix", ["/", "../", "a/../", "a//", ".tmp/"])
@pytest.mark.s3
def test_malformed_prefixes_are_refused(kit, prefix):
    store = kit.store
    for operation in (lambda: store.list(prefix), lambda: store.usage(prefix), lambda: store.sweep(0, prefix=prefix)):
        with pytest.raises(ValueError, match="not a store key"):
            operation()


@pytest.mark.s3
def test_put_if_absent_from_many_threads_lets_exactly_one_win(kit):
    rounds, barrier = 10, threading.Barrier(8)
    won: list[tuple[int, int]] = []

    def race(n: int) -> None:
        for r in range(rounds):
            barrier.wait()
            if kit.store.put_if_absent(f"leases/{r}.lock", f"writer {n} ".encode() * 50_000):
                won.append((r, n))

    threads = [threading.Thread(target=race, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(r for r, _ in won) == list(range(rounds))  # one winner a round
    for r, n in won:
        assert kit.store.get(f"leases/{r}.lock") == f"writer {n} ".encode() * 50_000
    assert kit.store.list() == sorted(f"leases/{r}.lock" for r in range(rounds))


ROUNDS = 10


def _store_of(where: tuple[Any, ...]) -> Any:
    """A store from a picklable description: ("folder", root) or ("bucket", url, options)."""
    if where[0] == "folder":
        return LocalStore(where[1])
    from storeframes.cache.stores.bucket import ObjectStore

    return ObjectStore(where[1], storage_options=where[2])


def _race(where: tuple[Any, ...], n: int, barrier: Any, results: Any) -> None:
    store = _store_of(where)
    for r in range(ROUNDS):
        barrier.wait()
        results.put((r, n, store.put_if_absent(f"leases/{r}.lock", f"process {n} ".encode() * 50_000)))


@pytest.mark.parametrize("kind", ["folder", "bucket"])
@pytest.mark.processes
@pytest.mark.s3
def test_put_if_absent_from_four_processes_lets_exactly_one_win(kind, tmp_path, request):
    if kind == "folder":
        where: tuple[Any, ...] = ("folder", str(tmp_path))
    else:
        bucket = request.getfixturevalue("s3_bucket")
        where = ("bucket", bucket.url, bucket.storage_options)
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(4), context.Queue()
    processes = [context.Process(target=_race, args=(where, n, barrier, results)) for n in range(4)]
    for process in processes:
        process.start()
    outcomes = [results.get(timeout=60) for _ in range(4 * ROUNDS)]
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    winners = {r: n for r, n, won in outcomes if won}
    assert sorted(r for r, _, won in outcomes if won) == list(range(ROUNDS))  # one winner a round
    store = _store_of(where)
    for r, n in winners.items():
        assert store.get(f"leases/{r}.lock") == f"process {n} ".encode() * 50_000
    assert store.list() == sorted(f"leases/{r}.lock" for r in range(ROUNDS))
    if kind == "folder":  # no temporary file left behind
        assert sorted(p.name for p in (tmp_path / "leases").iterdir()) == sorted(f"{r}.lock" for r in range(ROUNDS))
    else:  # nothing else in the bucket
        objects = request.getfixturevalue("s3_bucket").objects()
        assert sorted(objects) == sorted(f"cache/leases/{r}.lock" for r in range(ROUNDS))


# -- a folder -----------------------------------------------------------------------------


def test_values_are_files_in_the_cache_folder_layout(tmp_path):
    store = LocalStore(tmp_path)
    store.put(f"{META}/e.json.gz", b"answer")
    assert (tmp_path / "answers" / "endpoint=metadata" / "e.json.gz").read_bytes() == b"answer"
    (tmp_path / "index" / "endpoint=search").mkdir(parents=True)
    (tmp_path / "index" / "endpoint=search" / "f.parquet").write_bytes(b"written by hand")
    assert store.list("index/") == ["index/endpoint=search/f.parquet"]
    assert [p.name for p in (tmp_path / "answers" / "endpoint=metadata").iterdir()] == ["e.json.gz"]


def test_a_leftover_half_written_temporary_file_is_never_a_value(tmp_path):
    store = LocalStore(tmp_path)
    store.put(f"{META}/e.json.gz", b"whole")
    folder = tmp_path / "answers" / "endpoint=metadata"
    (folder / ".f.json.gz.5eed5eed.tmp").write_bytes(b"cut sh")
    (folder / ".e.json.gz.0badc0de.tmp").write_bytes(b"cut sh")
    assert store.list() == [f"{META}/e.json.gz"] and store.get(f"{META}/e.json.gz") == b"whole"
    with pytest.raises(FileNotFoundError):
        store.get(f"{META}/f.json.gz")
    assert store.sweep(3600) == 0  # young: may be a write in progress
    assert store.usage().size == len(b"whole") + 2 * len(b"cut sh")


def test_a_put_that_fails_leaves_the_old_value_and_no_temporary_file(tmp_path, monkeypatch):
    store = LocalStore(tmp_path)
    store.put(f"{META}/e.json.gz", b"old")

    def broken(src: str, dst: str) -> None:
        raise OSError(errno.EIO, "the disk went away")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError, match="went away"):
        store.put(f"{META}/e.json.gz", b"new")
    monkeypatch.undo()
    assert store.get(f"{META}/e.json.gz") == b"old"
    assert [p.name for p in (tmp_path / "answers" / "endpoint=metadata").iterdir()] == ["e.json.gz"]


def test_put_if_absent_without_hard_links_still_writes_once(tmp_path, monkeypatch):
    def no_links(src: str, dst: str) -> None:
        raise PermissionError(errno.EPERM, "hard links are not supported here")

    monkeypatch.setattr(os, "link", no_links)
    store = LocalStore(tmp_path)
    assert store.put_if_absent("leases/one.lock", b"first") is True
    assert store.put_if_absent("leases/one.lock", b"second") is False
    assert store.get("leases/one.lock") == b"first"
    assert [p.name for p in (tmp_path / "leases").iterdir()] == ["one.lock"]


def test_looking_at_a_missing_folder_creates_nothing(tmp_path):
    store = LocalStore(tmp_path / "not-yet")
    assert store.list() == [] and store.usage() == Usage(0, 0) and store.sweep(0) == 0
    assert store.mtime("a/b.parquet") is None and store.set_aside("a/b.parquet") is False
    store.delete("a/b.parquet")
    assert not (tmp_path / "not-yet").exists()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes and /dev/zero are POSIX")
def test_a_named_pipe_or_a_link_to_a_device_under_a_key_is_never_read_and_goes_when_set_aside(tmp_path):
    store = LocalStore(tmp_path)
    store.put(f"{META}/e.json.zst", b"whole")
    folder = tmp_path / "answers" / "endpoint=metadata"
    os.mkfifo(folder / "pipe.json.zst")  # opened for reading, it would wait for a writer for ever
    (folder / "zero.json.zst").symlink_to("/dev/zero")  # read whole, it never ends
    for name, what in (("pipe.json.zst", "a named pipe"), ("zero.json.zst", "a symbolic link")):
        for read in (store.get, store.open):
            with pytest.raises(NotAFileError, match=f"{what}, not a regular file: never read"):
                read(f"{META}/{name}")
    assert store.list() == [f"{META}/e.json.zst"]
    assert store.set_aside(f"{META}/pipe.json.zst") and store.set_aside(f"{META}/zero.json.zst")
    assert store.sweep(0) == 2 and os.path.exists("/dev/zero")  # the link went, never what it leads to
    assert sorted(p.name for p in folder.iterdir()) == ["e.json.zst"]
