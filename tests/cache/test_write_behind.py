"""Large frames are written to the cache after the call that built them returns.

The call a user waits for ends when the frame is built; encoding its Parquet file follows
on the cache's writer thread. Until the file is there the frame is served from memory; a
closed client, a flush and the interpreter's exit wait for it; a process killed before it
loses no credit (the raw answer is kept first, and the frame is built from it again).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import storeframes as sf
from storeframes.cache.frame_files import FrameFiles
from storeframes.sandbox import World
from tests._children import child_env
from tests.conftest import ROOT, SANDBOX_TODAY

APPS = list(World(0).EXAMPLE_IOS_APPS)[:3]


def frame_files(folder: Path) -> list[Path]:
    return [p for p in (folder / "frames").rglob("*.parquet") if not p.name.startswith(".")]


def sandbox(folder: Path, **options) -> sf.Client:
    return sf.sandbox.client(today=SANDBOX_TODAY, cache_dir=folder, backoff=(0.001, 0.01), **options)


def run_child(script: str, folder: Path) -> subprocess.CompletedProcess[str]:
    """``script`` in a child process, given the sandbox's today, the cache folder and the apps."""
    args = {"today": SANDBOX_TODAY.isoformat(), "folder": str(folder), "apps": APPS}
    return subprocess.run(
        [sys.executable, "-c", script, json.dumps(args)],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def every_frame_behind(monkeypatch):
    """Every frame is large enough to be written behind the call."""
    monkeypatch.setattr(FrameFiles, "WRITE_BEHIND_ROWS", 1)


def test_the_call_returns_before_its_frame_is_written_and_reads_it_from_memory(tmp_path, every_frame_behind):
    folder = tmp_path / "cache"
    gate = threading.Event()
    with sandbox(folder) as client:
        store_put = client.cache.storage.put

        def put(key: str, data: bytes) -> None:
            if key.startswith("frames/"):
                assert gate.wait(30), "the frame's write was never let through"
            store_put(key, data)

        client.cache.storage.put = put  # type: ignore[method-assign]
        first = client.versions_frame(APPS)  # returns while its frame's write waits at the gate
        assert first.height > 3 and set(first["app_id"]) == set(APPS)
        assert frame_files(folder) == []
        again = client.versions_frame(APPS)  # from memory: no file, no request
        assert again.equals(first)
        assert len(client.sandbox_service.arrivals) == 1
        gate.set()
        assert client.cache.frames.flush(timeout=30)
        assert len(frame_files(folder)) == 1
    with sandbox(folder, offline=True) as client:  # a new client reads the file
        assert client.versions_frame(APPS).equals(first)
        assert client.sandbox_service.arrivals == []


def test_small_frames_are_written_before_the_call_returns(tmp_path):
    folder = tmp_path / "cache"
    with sandbox(folder) as client:
        client.versions_frame(APPS)
        assert len(frame_files(folder)) == 1  # no flush, no close: already there


def test_closing_the_client_waits_for_the_frames_written_behind(tmp_path, every_frame_behind):
    folder = tmp_path / "cache"
    with sandbox(folder) as client:
        store_put = client.cache.storage.put
        slow = threading.Event()

        def put(key: str, data: bytes) -> None:
            if key.startswith("frames/"):
                slow.wait(0.3)  # a write still under way when the client closes
            store_put(key, data)

        client.cache.storage.put = put  # type: ignore[method-assign]
        client.screenshots_frame(APPS)
        client.versions_frame(APPS)
    assert len(frame_files(folder)) == 2


def test_clear_and_compact_wait_for_the_frames_written_behind(tmp_path, every_frame_behind):
    folder = tmp_path / "cache"
    with sandbox(folder) as client:
        store_put = client.cache.storage.put

        def put(key: str, data: bytes) -> None:
            if key.startswith("frames/"):
                threading.Event().wait(0.2)  # still under way when compact and clear begin
            store_put(key, data)

        client.cache.storage.put = put  # type: ignore[method-assign]
        client.versions_frame(APPS)
        client.cache.compact()
        assert len(frame_files(folder)) == 1  # compact waited for the write
        client.metadata_frame(APPS)
        client.cache.clear()
        assert frame_files(folder) == []  # clear waited too: no write landed after it


_EXITS = """
import json, sys
import storeframes as sf
from storeframes.cache.frame_files import FrameFiles
args = json.loads(sys.argv[1])
FrameFiles.WRITE_BEHIND_ROWS = 1
client = sf.sandbox.client(today=args["today"], cache_dir=args["folder"])
put = client.cache.storage.put
def slow(key, data):
    if key.startswith("frames/"):
        import time
        time.sleep(0.5)
    put(key, data)
client.cache.storage.put = slow
client.versions_frame(args["apps"])
print("returned", flush=True)
# no close(): the interpreter's exit waits for the frame's write
"""


@pytest.mark.processes
def test_the_frame_is_written_when_the_process_exits_without_closing(tmp_path):
    folder = tmp_path / "cache"
    done = run_child(_EXITS, folder)
    assert done.returncode == 0, done.stderr
    assert "returned" in done.stdout
    assert len(frame_files(folder)) == 1


_KILLED = """
import json, os, signal, sys, threading
import storeframes as sf
from storeframes.cache.frame_files import FrameFiles
args = json.loads(sys.argv[1])
FrameFiles.WRITE_BEHIND_ROWS = 1
client = sf.sandbox.client(today=args["today"], cache_dir=args["folder"])
put = client.cache.storage.put
def stuck(key, data):
    if key.startswith("frames/"):
        os.kill(os.getpid(), signal.SIGKILL)  # dies with the frame unwritten, its answer kept
    put(key, data)
client.cache.storage.put = stuck
client.versions_frame(args["apps"])
threading.Event().wait(60)
print("finished", flush=True)
"""


@pytest.mark.processes
def test_a_process_killed_before_its_frame_is_written_loses_no_credit(tmp_path):
    folder = tmp_path / "cache"
    done = run_child(_KILLED, folder)
    assert done.returncode == -signal.SIGKILL and "finished" not in done.stdout, done.stderr
    assert frame_files(folder) == []
    with sandbox(folder, offline=True) as client:  # the kept answer builds the frame again, offline
        frame = client.versions_frame(APPS)
        assert set(frame["app_id"]) == set(APPS)
        assert client.sandbox_service.arrivals == []
    assert len(frame_files(folder)) == 1
    assert not [p for p in (folder / "frames").rglob("*") if p.is_file() and os.path.getsize(p) == 0]


def test_no_writer_thread_is_left_once_the_frames_are_written(tmp_path, every_frame_behind):
    """A process opening many clients does not collect an idle thread per cache."""
    before = {t.ident for t in threading.enumerate()}
    for n in range(3):
        with sandbox(tmp_path / f"cache{n}") as client:
            client.versions_frame(APPS)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        writers = [t for t in threading.enumerate() if t.ident not in before and "cache-writer" in t.name]
        if not writers:
            break
        time.sleep(0.05)
    assert writers == []
    assert all(len(frame_files(tmp_path / f"cache{n}")) == 1 for n in range(3))
