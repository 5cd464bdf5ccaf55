"""Writes made behind the calls, on one daemon thread per cache, and the wait for them at exit.

The writer thread is a daemon: when the interpreter exits, the frames still being written are waited
for at most :func:`exit_wait` seconds (``$STOREFRAMES_EXIT_WAIT``, :data:`EXIT_WAIT` by default), then
left, with a line on stderr saying how many and where. Nothing is lost that cannot be made again: a
frame is made from an answer kept in the cache before it, so the frame is made again from it when
next read, and no credit is spent for it."""

from __future__ import annotations

import atexit
import functools
import os
import queue
import sys
import threading
import time
import weakref
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import wait as wait_for
from typing import Any

ENV_EXIT_WAIT = "STOREFRAMES_EXIT_WAIT"
EXIT_WAIT = 5.0
"""Seconds the interpreter's exit waits, at most, for what is still being written to a cache (frames
written behind the calls, the ledger's tidying), unless ``$STOREFRAMES_EXIT_WAIT`` says otherwise."""


def exit_wait() -> float:
    """Seconds the exit waits for writes to a cache: ``$STOREFRAMES_EXIT_WAIT`` (seconds >= 0), else :data:`EXIT_WAIT`."""
    try:
        seconds = float(os.environ.get(ENV_EXIT_WAIT, EXIT_WAIT))
    except ValueError:
        return EXIT_WAIT
    return seconds if 0 <= seconds < float("inf") else EXIT_WAIT


@functools.cache
def exit_deadline() -> float:
    """The monotonic time past which the exit waits no longer (fixed when first asked, at exit): every
    wait at exit shares it, so the exit waits :func:`exit_wait` seconds in all, not each."""
    return time.monotonic() + exit_wait()


def at_exit(line: str) -> None:
    """Say ``line`` on stderr at exit (warnings may be filtered, or shown nowhere, by then)."""
    try:
        sys.stderr.write(f"storeframes: {line}\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed
        pass


class Writer:
    """One daemon thread that runs the writes submitted to it, in order (a thread pool's non-daemon
    workers would hold the interpreter's exit for as long as a stalled store takes)."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Future[None], Callable[[], None]] | None] = queue.SimpleQueue()
        threading.Thread(target=self._run, name="storeframes-cache-writer", daemon=True).start()

    def submit(self, job: Callable[[], None]) -> Future[None]:
        future: Future[None] = Future()
        self._jobs.put((future, job))
        return future

    def shutdown(self) -> None:
        """End the thread once the writes submitted are done."""
        self._jobs.put(None)

    def _run(self) -> None:
        while (item := self._jobs.get()) is not None:
            future, job = item
            if future.set_running_or_notify_cancel():
                try:
                    job()
                except BaseException as exc:  # kept on the future, as a pool would
                    future.set_exception(exc)
                else:
                    future.set_result(None)


BEHIND: weakref.WeakSet[Any] = weakref.WeakSet()
"""The frame files of every cache that wrote behind the calls: waited for at exit."""


@atexit.register
def _wait_at_exit() -> None:
    """Wait for the frames still being written, until :func:`exit_deadline`; then say what was left."""
    while True:  # a write may submit another (a frame's, then its index's record of its rows): look again
        pending = [(frames._files.location, future) for frames in list(BEHIND) for future in frames.pending()]
        if not pending:
            return
        wait_for([future for _, future in pending], timeout=max(0.0, exit_deadline() - time.monotonic()))
        if time.monotonic() >= exit_deadline() or not all(future.done() for _, future in pending):
            break
    left = Counter(str(location) for location, future in pending if not future.done())
    for location, count in left.items():
        files = "file was" if count == 1 else "files were"
        at_exit(
            f"{count} frame {files} not written to the cache at {location}: it did not "
            f"answer within {exit_wait():g} s of the exit (${ENV_EXIT_WAIT} sets how long to wait). The answers "
            "they are made from were kept in the cache before them: the frames are made again from those when "
            "next read, and no credit is spent again."
        )
