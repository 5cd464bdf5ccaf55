"""A client's workers share the process's threads: a new client starts none, each keeps its own limit, and
no client's task waits for another client's."""

from __future__ import annotations

import threading
import time

from storeframes.fetch.workers import Workers


def storeframes_threads() -> set[int | None]:
    return {t.ident for t in threading.enumerate() if t.name.startswith("storeframes_")}


def test_a_new_client_starts_no_thread_once_the_process_has_them(make_client):
    keywords = ["photo editor", "maps", "recipes", "meditation"]
    with make_client() as first:
        first.search_history_frame(keywords, start="2026-11-01", end="2026-11-10")
    made = storeframes_threads()
    assert made
    for _ in range(3):
        with make_client() as client:
            frame = client.search_history_frame(keywords, start="2026-11-01", end="2026-11-10")
        assert frame.height and storeframes_threads() == made


def test_at_most_max_workers_of_a_clients_tasks_run_at_once():
    workers = Workers(2)
    lock = threading.Lock()
    running, most = [0], [0]

    def task(_: int) -> int:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.02)
        with lock:
            running[0] -= 1
        return _

    assert list(workers.map(task, range(8))) == list(range(8))
    assert most[0] == 2
    workers.shutdown()


def test_a_clients_task_never_waits_for_another_clients():
    """Each of two clients with one worker runs a task that waits for the other's: both finish."""
    a, b = Workers(1), Workers(1)
    met = threading.Barrier(2, timeout=10)
    futures = [a.submit(lambda _: met.wait(), 0), b.submit(lambda _: met.wait(), 0)]
    assert sorted(f.result(timeout=10) for f in futures) == [0, 1]


def test_a_task_mapping_over_its_own_workers_runs_inline():
    workers = Workers(1)
    assert workers.submit(lambda n: list(workers.map(lambda i: i * n, range(3))), 2).result(timeout=10) == [0, 2, 4]
    assert not workers.in_pool()


def test_closing_waits_for_every_task_queued():
    workers = Workers(1)
    done = []
    futures = workers.start(lambda i: (time.sleep(0.01), done.append(i)), list(range(5)))
    workers.shutdown()
    assert done == list(range(5)) and all(f.done() for f in futures)


def test_an_error_of_a_task_is_raised_in_order_and_the_rest_still_run():
    workers = Workers(2)

    def task(i: int) -> int:
        if i == 1:
            raise ValueError("one")
        return i

    results = workers.map(task, range(4))
    assert next(results) == 0
    try:
        next(results)
    except ValueError as exc:
        assert str(exc) == "one"
    else:
        raise AssertionError("the error was not raised")
    workers.shutdown()
