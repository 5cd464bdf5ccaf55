"""A client's threads: a call's items start on threads already running, so a window's requests leave together."""

from __future__ import annotations

import threading

from storeframes.fetch.workers import Workers


def _pool_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("storeframes")}


def test_a_calls_threads_are_running_before_its_first_item_starts():
    others = _pool_threads()  # other clients' threads, left by earlier tests

    def _running() -> int:
        return len(_pool_threads() - others)

    workers = Workers(8)
    seen: list[int] = []
    lock = threading.Lock()

    def item(n: int) -> int:
        with lock:
            seen.append(_running())
        return n

    try:
        futures = workers.start(item, list(range(6)))
        assert [f.result() for f in futures] == list(range(6))
        # the first item started when the call's six threads were already running (not one, then another)
        assert seen[0] >= 6, seen
        assert [f.result() for f in workers.start(item, list(range(20)))] == list(range(20))
        assert seen[6] >= 8 and _running() == 8  # the pool's eight, never more
        assert list(workers.map(item, [1, 2, 3])) == [1, 2, 3]
        assert _running() == 8
    finally:
        workers.shutdown()
    assert _running() == 0
