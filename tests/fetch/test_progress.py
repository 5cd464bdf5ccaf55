"""Progress bars: an output a saved notebook keeps (its last update is the end state), tqdm on a terminal."""

from __future__ import annotations

import io
import itertools
import subprocess
import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor, wait
from types import SimpleNamespace

import pytest

from storeframes.fetch import progress
from storeframes.fetch.progress import NotebookProgress, TerminalProgress, in_kernel, progress_bar
from tests._ipython import ipython_shell


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Recorder:
    """A ``publish`` that keeps what a notebook would be shown, and the threads that showed it."""

    def __init__(self) -> None:
        self.shown: list[tuple[dict[str, str], str, bool]] = []
        self.threads: set[str] = set()

    def __call__(self, data: dict[str, str], display_id: str, update: bool) -> None:
        self.shown.append((data, display_id, update))
        self.threads.add(threading.current_thread().name)

    def texts(self) -> list[str]:
        return [data["text/plain"] for data, _, _ in self.shown]


def _futures(count: int) -> list[Future]:
    return [Future() for _ in range(count)]


def _bar(futures, spent=lambda: 1_234, clock=None):
    recorder = Recorder()
    bar = NotebookProgress("metadata", futures, spent, publish=recorder, clock=clock or Clock())
    for future in futures:
        future.add_done_callback(bar.advance)
    return bar, recorder


@pytest.fixture
def kernel_shell(tmp_path, monkeypatch):
    """A real IPython shell recording what is displayed, with a ``kernel`` as a Jupyter kernel's has."""
    with ipython_shell(tmp_path, monkeypatch, kernel=True) as captured:
        yield captured


def test_in_kernel_needs_an_ipython_shell_with_a_kernel(monkeypatch):
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    assert in_kernel() is False  # nothing imported to find out
    assert "IPython" not in sys.modules
    for shell, expected in [(None, False), (SimpleNamespace(kernel=None), False), (SimpleNamespace(), False)]:
        monkeypatch.setitem(sys.modules, "IPython", SimpleNamespace(get_ipython=lambda s=shell: s))
        assert in_kernel() is expected
    monkeypatch.setitem(sys.modules, "IPython", SimpleNamespace(get_ipython=lambda: SimpleNamespace(kernel=object())))
    assert in_kernel() is True


@pytest.mark.processes
def test_importing_storeframes_imports_neither_ipython_nor_tqdm():
    code = "import sys, storeframes, storeframes.fetch.progress; print(sorted({'IPython', 'tqdm'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_notebook_bar_ends_on_the_final_state():
    futures = _futures(12)
    bar, recorder = _bar(futures)
    (data, display_id, update), *_ = recorder.shown
    assert update is False and display_id.startswith("storeframes-progress-")
    assert data["text/plain"] == "metadata: 0/12 requests, 1,234 credits spent"
    for future in futures:
        future.set_result(None)  # all within the same instant: no update yet
    assert len(recorder.shown) == 1
    bar.close()
    data, last_id, update = recorder.shown[-1]
    assert update is True and last_id == display_id
    assert data["text/plain"] == "metadata: 12/12 requests, 1,234 credits spent"
    assert '<progress value="12" max="12"' in data["text/html"]
    assert "metadata: 12/12 requests, 1,234 credits spent</span>" in data["text/html"]


def test_notebook_bar_updates_at_most_every_interval():
    clock = Clock()
    futures = _futures(10)
    bar, recorder = _bar(futures, clock=clock)
    for future in futures:
        clock.now += 0.125  # 0.125 s a request: a new state shown every second request
        future.set_result(None)
    assert recorder.texts()[1:] == [f"metadata: {n}/10 requests, 1,234 credits spent" for n in (2, 4, 6, 8, 10)]
    clock.now += 0.01  # the end comes at once, whatever the interval
    bar.close()
    assert len(recorder.shown) == 7 and recorder.texts()[-1] == "metadata: 10/10 requests, 1,234 credits spent"


def test_notebook_bar_counts_the_futures_at_close():
    """A waiter can wake before the last done-callbacks have run: close() counts from the futures."""
    futures = _futures(3)
    recorder = Recorder()
    bar = NotebookProgress("search", futures, lambda: 0, publish=recorder, clock=Clock())  # no callbacks at all
    for future in futures:
        future.set_result(None)
    bar.close()
    assert recorder.texts()[-1] == "search: 3/3 requests, 0 credits spent"


def test_notebook_bar_from_worker_threads():
    spent = {"credits": 0}
    lock = threading.Lock()
    go = threading.Event()

    def request(i: int) -> int:
        go.wait(10)
        with lock:
            spent["credits"] += 11
        return i

    with ThreadPoolExecutor(8, thread_name_prefix="worker") as pool:
        futures = [pool.submit(request, i) for i in range(300)]
        recorder = Recorder()
        ticks = itertools.count(0.0, 1.0)  # a second between two readings: an update per request, from its thread
        bar = NotebookProgress(
            "metadata", futures, lambda: spent["credits"], publish=recorder, clock=lambda: next(ticks)
        )
        for future in futures:
            future.add_done_callback(bar.advance)
        go.set()  # the requests end once the bar follows them all
        wait(futures)
    bar.close()
    counts = [int(text.split(": ")[1].split("/")[0]) for text in recorder.texts()]
    assert counts == [*range(301), 300]  # under one lock: each count once, never an older after a newer
    assert recorder.texts()[-1] == "metadata: 300/300 requests, 3,300 credits spent"
    assert len({display_id for _, display_id, _ in recorder.shown}) == 1
    assert any(name.startswith("worker") for name in recorder.threads)


def test_notebook_bar_close_once_and_late_requests_change_nothing():
    futures = _futures(2)
    bar, recorder = _bar(futures)
    futures[0].set_result(None)
    bar.close()
    shown = len(recorder.shown)
    bar.close()
    futures[1].set_result(None)  # ends after the call stopped waiting
    assert len(recorder.shown) == shown
    assert recorder.texts()[-1] == "metadata: 1/2 requests, 1,234 credits spent (stopped)"


def test_notebook_bar_says_failures_and_requests_not_sent():
    futures = _futures(4)
    bar, recorder = _bar(futures, spent=lambda: 22)
    futures[0].set_result(None)
    futures[1].set_exception(RuntimeError("503"))
    futures[2].cancel()
    futures[3].cancel()
    bar.close()
    data, _, _ = recorder.shown[-1]
    assert data["text/plain"] == "metadata: 2/4 requests, 22 credits spent, 1 failed, 2 not sent"
    assert 'value="4" max="4"' in data["text/html"] and "#d62728" in data["text/html"]  # red: not all went well


def test_label_escapes_html():
    futures = _futures(1)
    recorder = Recorder()
    bar = NotebookProgress("<b>x</b>", futures, lambda: 0, publish=recorder, clock=Clock())
    bar.close()
    assert (
        "&lt;b&gt;x&lt;/b&gt;" in recorder.shown[-1][0]["text/html"] and "<b>" not in recorder.shown[-1][0]["text/html"]
    )


def test_progress_bar_in_a_kernel_is_a_display_output(kernel_shell):
    futures = _futures(12)
    bar = progress_bar("metadata", futures, lambda: 1_234)
    assert isinstance(bar, NotebookProgress)
    for future in futures:
        future.set_result(None)
    bar.close()
    first, *_, last = kernel_shell.outputs
    assert first.update is False and first.transient == {"display_id": bar.display_id}
    assert last.update is True and last.transient == {"display_id": bar.display_id}
    assert last.data["text/plain"] == "metadata: 12/12 requests, 1,234 credits spent"
    assert '<progress value="12" max="12"' in last.data["text/html"]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_terminal_bar_only_when_stderr_is_a_terminal(monkeypatch):
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    futures = _futures(3)
    bar = progress_bar("metadata", futures, lambda: 33)
    assert isinstance(bar, TerminalProgress) and bar.bar.disable
    for future in futures:
        future.set_result(None)
    bar.close()
    assert sys.stderr.getvalue() == ""

    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    futures = _futures(12)
    bar = progress_bar("metadata", futures, lambda: 1_234)
    assert not bar.bar.disable
    for future in futures:
        future.set_result(None)
    bar.close()
    last = terminal.getvalue().split("\r")[-1]
    assert "metadata" in last and "12/12" in last and "1,234 credits spent" in last


def test_progress_module_api():
    assert progress.__all__ == ["INTERVAL", "NotebookProgress", "TerminalProgress", "in_kernel", "progress_bar"]
    assert progress.INTERVAL == 0.2


def test_a_calls_bar_shows_the_credits_that_call_spent_not_the_sessions(kernel_shell, make_client):
    """Two calls in one session: the second bar counts only its own requests' credits; a cache hit sends nothing."""
    client = make_client(progress=True, cache_dir=False)
    client.search_frame(["keyword 0", "keyword 1"])
    first = client.spent
    client.search_frame(["keyword 2", "keyword 3", "keyword 4"], country="gb")
    second = client.spent - first
    assert first > 0 and second > 0 and client.spent == first + second
    labels = [out.data["text/plain"] for out in kernel_shell.outputs if out.update]
    assert labels[-1] == f"search: 3/3 requests, {second:,} credits spent"
    assert f"search: 2/2 requests, {first:,} credits spent" in labels
