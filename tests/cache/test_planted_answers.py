"""Files planted in a cache folder, and kept answers that are compression bombs: what a reader of a cache it
did not write (a colleague's folder, a bucket, a repository that carried a cache along) must survive.

A few kilobytes of zstd or gzip that inflate to gigabytes are stopped at the cap of a kept
answer (the client's ``max_body_bytes``), set aside with a warning naming them and fetched
again; a named pipe or a link to ``/dev/zero`` where the cache reads a file is never opened
for reading, so nothing hangs and nothing reads without end. Each case checks what a user
relies on: the value served, the requests sent, the files left, the warning, the memory.
"""

from __future__ import annotations

import contextlib
import os
import threading
import tracemalloc
import warnings
import zlib
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import storeframes as sf
from storeframes.cache import MARKER, Cache, CacheWarning
from storeframes.cli import main
from storeframes.sandbox import World
from tests import _summary
from tests.conftest import SANDBOX_TODAY

WORLD = World(0)
APPS = list(WORLD.EXAMPLE_IOS_APPS)[:2]
NOON = datetime.combine(SANDBOX_TODAY, datetime.min.time(), UTC) + timedelta(hours=12)
CAP = 1_000_000
"""The clients' ``max_body_bytes``: the answers of two apps are far below it."""
INFLATED = 96 * 1024 * 1024
"""What a bomb decompresses to: far above the cap."""
SAID = {"named pipe": "a named pipe", "link to /dev/zero": "a symbolic link"}
WAIT = 20.0
"""Seconds a call may take before it counts as hung."""

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes and /dev/zero are POSIX")


def sandbox(folder: Path, **options: Any) -> sf.Client:
    options.setdefault("backoff", (0.001, 0.01))
    return sf.sandbox.client(today=SANDBOX_TODAY, cache_dir=folder, clock=lambda: NOON, **options)


def arrivals(client: sf.Client) -> int:
    return len(client.sandbox_service.arrivals)


def filled(folder: Path) -> Any:
    """Fill ``folder`` with the metadata of two apps; the raw answer as the service gave it."""
    with sandbox(folder, max_body_bytes=CAP) as client:
        return client.get("metadata", apps=APPS).result


def kept(folder: Path, kind: str, suffix: str) -> Path:
    [found] = [p for p in folder.glob(f"{kind}/**/*{suffix}") if "metadata" in str(p)]
    return found


def bomb(suffix: str, inflated: int = INFLATED) -> bytes:
    """Compressed bytes that inflate to ``inflated`` bytes, made a piece at a time (a few tens of kB)."""
    zeros = bytes(1024 * 1024)
    if suffix == ".json.gz":
        packer = zlib.compressobj(9, zlib.DEFLATED, 31)
        out = [packer.compress(b'{"format": 1, "result": "')]
        out += [packer.compress(zeros) for _ in range(inflated // len(zeros))]
        return b"".join([*out, packer.flush()])
    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, "zstd") as stream:  # frames that state no size: read as a stream
        stream.write(b'{"format": 2}\n')
        for _ in range(inflated // len(zeros)):
            stream.write(zeros)
    return sink.getvalue().to_pybytes()


def peak_while(call: Callable[[], Any]) -> tuple[Any, int]:
    """What ``call`` returns and the most memory Python allocated meanwhile (bytes above the start)."""
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        value = call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return value, peak - start


def said(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]


@pytest.mark.parametrize("suffix", [".json.zst", ".json.gz"])
def test_a_kept_answer_that_inflates_to_gigabytes_is_set_aside_and_fetched_again_in_bounded_memory(tmp_path, suffix):
    _summary.hostile(f"cache: {suffix} bomb as a kept answer")
    folder = tmp_path / "cache"
    fresh = filled(folder)
    answer = kept(folder, "answers", ".json.zst")
    planted = answer.with_name(answer.name.removesuffix(".json.zst") + suffix)
    answer.unlink()
    planted.write_bytes(bomb(suffix))
    assert planted.stat().st_size < INFLATED // 500

    with sandbox(folder, max_body_bytes=CAP) as client, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        answer, peak = peak_while(lambda: client.get("metadata", apps=APPS))
        assert arrivals(client) == 1  # fetched again
    assert answer.result == fresh
    assert peak < INFLATED // 8, f"reading the bomb took {peak:,} bytes"
    assert (planted.parent / f"{planted.name}.corrupt").is_file() and not planted.exists()
    assert said(caught) == [
        f"cache file {planted.name} is unreadable (it decompresses to more than {CAP + 1024 * 1024:,} bytes, past "
        f"the largest answer kept (max_body_bytes={CAP:,} and its header)); set aside as {planted.name}.corrupt "
        "and treated as not cached"
    ]


def test_a_bomb_read_offline_is_not_cached_and_set_aside(tmp_path):
    _summary.hostile("cache: .json.zst bomb as a kept answer")
    folder = tmp_path / "cache"
    filled(folder)
    answer = kept(folder, "answers", ".json.zst")
    answer.write_bytes(bomb(".json.zst"))
    with sandbox(folder, max_body_bytes=CAP, offline=True) as client, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(sf.NotCachedError):
            _, peak = peak_while(lambda: client.get("metadata", apps=APPS))
        assert arrivals(client) == 0
    assert (answer.parent / f"{answer.name}.corrupt").is_file()
    assert [text for text in said(caught) if "decompresses to more than" in text and answer.name in text]


def test_a_kept_answer_file_larger_than_the_cap_is_set_aside_unread(tmp_path):
    _summary.hostile("cache: oversized kept answer")
    folder = tmp_path / "cache"
    fresh = filled(folder)
    answer = kept(folder, "answers", ".json.zst")
    size = 8 * CAP
    answer.write_bytes(os.urandom(size))  # far larger than the cap and its header's room
    with sandbox(folder, max_body_bytes=CAP) as client, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found, peak = peak_while(lambda: client.get("metadata", apps=APPS))
        assert arrivals(client) == 1
    assert found.result == fresh
    assert peak < size // 2, f"{peak:,} bytes taken: the file was read"
    assert said(caught) == [
        f"cache file {answer.name} is unreadable (it holds {size:,} bytes, more than the {CAP + 1024 * 1024:,} it "
        f"may hold); set aside as {answer.name}.corrupt and treated as not cached"
    ]


# -- planted files: named pipes and links to devices ------------------------------------------------


@contextlib.contextmanager
def pipe(path: Path) -> Iterator[Path]:
    """A named pipe at ``path``; whatever waits on it (a reader that opened it) is let go at the end."""
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    try:
        yield path
    finally:
        with contextlib.suppress(OSError):  # a reader blocked in open() is let go, and reads nothing
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


def plant(path: Path, what: str) -> contextlib.AbstractContextManager[Path]:
    """``what`` (a named pipe, or a link to /dev/zero) at ``path``, in place of what was there."""
    if what == "named pipe":
        return pipe(path)
    path.unlink(missing_ok=True)
    path.symlink_to("/dev/zero")
    return contextlib.nullcontext(path)


def within(seconds: float, call: Callable[[], Any]) -> Any:
    """What ``call`` returns or raises, run on a thread; fails when it has not returned within ``seconds``."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds:g} s: it hangs"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


@pytest.mark.parametrize("what", ["named pipe", "link to /dev/zero"])
def test_a_planted_marker_neither_hangs_connect_nor_cache_info(tmp_path, what, capsys):
    _summary.hostile(f"cache: {what} as the marker")
    folder = tmp_path / "cache"
    raw = filled(folder)
    with plant(folder / MARKER, what):
        assert within(WAIT, lambda: main(["cache", "info", "--cache-dir", str(folder)])) == 0
        shown = capsys.readouterr().out
        assert "cached answers" in shown and str(folder) in shown
        client = within(WAIT, lambda: sf.connect(folder, live=False, sandbox_today=SANDBOX_TODAY, quiet=True))
        with client:
            assert within(WAIT, lambda: client.get("metadata", apps=APPS).result) == raw
        assert Cache(folder).is_cache()  # the marker's name is the cache's, whatever stands there


@pytest.mark.parametrize("what", ["named pipe", "link to /dev/zero"])
@pytest.mark.parametrize("kind", ["answers", "frames"])
def test_a_planted_file_in_place_of_a_kept_one_is_set_aside_and_built_again(tmp_path, what, kind):
    _summary.hostile(f"cache: {what} as a kept file")
    folder = tmp_path / "cache"
    with sandbox(folder, max_body_bytes=CAP) as client:
        frame = client.metadata_frame(APPS)
        raw = client.get("metadata", apps=APPS).result
    suffix = ".json.zst" if kind == "answers" else ".parquet"
    target = kept(folder, kind, suffix)
    with plant(target, what):
        with sandbox(folder, max_body_bytes=CAP) as client:
            with pytest.warns(CacheWarning, match=rf"{target.name} is unreadable \({SAID[what]}, not a regular file"):
                if kind == "answers":  # the raw answer: fetched again
                    assert within(WAIT, lambda: client.get("metadata", apps=APPS).result) == raw
                else:  # the frame kept beside it: built again from the raw answer, for free
                    assert within(WAIT, lambda: client.metadata_frame(APPS)).equals(frame)
            assert arrivals(client) == (1 if kind == "answers" else 0)
        aside = target.parent / f"{target.name}.corrupt"
        assert os.path.lexists(aside)
        again = kept(folder, kind, suffix)  # kept anew (an answer fetched again is a new entry)
        assert again.is_file() and not again.is_symlink() and again.stat().st_size > 0
    assert main(["cache", "clear", "--yes", "--cache-dir", str(folder)]) == 0
    assert not os.path.lexists(aside)  # clear removes what was set aside, never reading through it


@pytest.mark.s3
def test_a_bomb_kept_in_a_bucket_is_set_aside_and_fetched_again_in_bounded_memory(s3_bucket):
    _summary.hostile("cache: .json.zst bomb in a bucket")
    bucket = {"cache_dir": s3_bucket.url, "storage_options": s3_bucket.storage_options, "max_body_bytes": CAP}
    with sf.sandbox.client(today=SANDBOX_TODAY, clock=lambda: NOON, **bucket) as client:
        fresh = client.get("metadata", apps=APPS).result
    [key] = [k for k in s3_bucket.objects() if "answers/endpoint=metadata/" in k and k.endswith(".json.zst")]
    inflated = 4 * INFLATED  # the loopback S3 server runs in this process: its own allocations count too
    s3_bucket.client.put_object(Bucket=s3_bucket.name, Key=key, Body=bomb(".json.zst", inflated))
    with (
        sf.sandbox.client(today=SANDBOX_TODAY, clock=lambda: NOON, **bucket) as client,
        warnings.catch_warnings(record=True) as caught,
    ):
        warnings.simplefilter("always")
        found, peak = peak_while(lambda: client.get("metadata", apps=APPS))
        assert arrivals(client) == 1
    assert found.result == fresh
    assert peak < inflated // 16, f"reading the bomb took {peak:,} bytes"
    assert f"{key}.corrupt" in s3_bucket.objects()
    assert [text for text in said(caught) if "decompresses to more than" in text and key.rpartition("/")[2] in text]
