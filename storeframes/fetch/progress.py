"""Progress bars of the client's calls: an output a saved notebook keeps, or tqdm in a terminal.

A call sending many requests shows how many have finished and the credits they have spent so
far (the call's own: ``spent`` counts its requests' charges, not the client's total). In a
Jupyter kernel the bar is an ordinary display output (HTML with a ``<progress>`` bar, and plain
text) that is updated in place, at most every :data:`INTERVAL` seconds and once more when the
call ends, so a notebook saved afterwards shows the call's end state ("metadata: 12/12
requests, 1,234 credits spent") whether or not widget state is saved with it. Elsewhere it is a
``tqdm`` line on stderr, shown only when stderr is a terminal.

Requests end on worker threads: each finished request advances the bar from its thread, under
one lock, and :meth:`close` (on the calling thread) shows the final state.

>>> from concurrent.futures import Future
>>> futures = [Future() for _ in range(3)]
>>> bar = progress_bar("metadata", futures, lambda: 33)   # not a kernel, not a terminal: no line
>>> for future in futures:
...     future.set_result(None)
>>> bar.label()
'metadata: 3/3 requests, 33 credits spent'
>>> bar.close()
"""

from __future__ import annotations

import html
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any

__all__ = ["INTERVAL", "NotebookProgress", "TerminalProgress", "in_kernel", "progress_bar"]

INTERVAL = 0.2
"""The shortest time in seconds between two updates of a notebook's bar (the last one always shows)."""


def in_kernel() -> bool:
    """True in a Jupyter kernel: IPython is already imported and its shell has a ``kernel``.

    Nothing is imported to find out, so a script never loads IPython for a progress bar.
    """
    ipython = sys.modules.get("IPython")
    get_ipython = getattr(ipython, "get_ipython", None)
    if not callable(get_ipython):
        return False
    try:
        shell = get_ipython()
    except Exception:  # an IPython half torn down at exit
        return False
    return getattr(shell, "kernel", None) is not None


class _Progress:
    """What both bars share: the counts of finished, failed and cancelled requests, and their label."""

    def __init__(self, name: str, futures: Sequence[Future[Any]], spent: Callable[[], int]):
        self.name = name
        self.total = len(futures)
        self._futures = list(futures)
        self._spent = spent
        self._lock = threading.Lock()
        self._finished = 0  # counted as requests end; close() counts again from the futures
        self._failed = 0
        self._cancelled = 0
        self.closed = False

    def _count(self, future: Future[Any]) -> None:
        if future.cancelled():
            self._cancelled += 1
            return
        self._finished += 1
        if future.exception() is not None:
            self._failed += 1

    def _recount(self) -> None:
        """Count from the futures (a waiter can wake before the last done-callbacks have run)."""
        self._finished = self._failed = self._cancelled = 0
        for future in self._futures:
            if future.done():
                self._count(future)

    def label(self) -> str:
        """The bar's text: ``"metadata: 12/12 requests, 1,234 credits spent"``."""
        text = f"{self.name}: {self._finished:,}/{self.total:,} requests, {int(self._spent()):,} credits spent"
        if self._failed:
            text += f", {self._failed:,} failed"
        if self._cancelled:
            text += f", {self._cancelled:,} not sent"
        if self.closed and self._finished + self._cancelled < self.total:
            text += " (stopped)"
        return text

    def advance(self, future: Future[Any]) -> None:
        """A request ended (a done-callback, on the thread that finished it)."""
        with self._lock:
            if self.closed:
                return
            self._count(future)
            self._show(final=False)

    def close(self) -> None:
        """Show the final state once; later calls and late requests change nothing."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            self._recount()
            self._show(final=True)

    def _show(self, *, final: bool) -> None:
        raise NotImplementedError


class NotebookProgress(_Progress):
    """A display output in the notebook: ``<progress>`` and the label as HTML, the label as text.

    ``publish(data, display_id, update)`` shows it (by default IPython's ``display``);
    ``clock`` is the time source of the throttle.
    """

    def __init__(
        self,
        name: str,
        futures: Sequence[Future[Any]],
        spent: Callable[[], int],
        *,
        publish: Callable[[dict[str, str], str, bool], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        super().__init__(name, futures, spent)
        self.display_id = f"storeframes-progress-{uuid.uuid4().hex}"
        self._publish = publish or _ipython_publish
        self._clock = clock
        self._shown_at = clock()
        with self._lock:
            self._publish(self.bundle(), self.display_id, False)

    def bundle(self) -> dict[str, str]:
        """The output's data: ``text/html`` (a bar and the label) and ``text/plain`` (the label)."""
        label = self.label()
        done = self._finished + self._cancelled
        colour = "#d62728" if self._failed or (self.closed and done < self.total) else "#2ca02c"
        bar = (
            f'<progress value="{done}" max="{max(self.total, 1)}" '
            f'style="width:16em;vertical-align:middle;accent-color:{colour}"></progress>'
        )
        return {
            "text/html": f'<div class="storeframes-progress">{bar} <span>{html.escape(label)}</span></div>',
            "text/plain": label,
        }

    def _show(self, *, final: bool) -> None:
        now = self._clock()
        if not final and now - self._shown_at < INTERVAL:
            return
        self._shown_at = now
        self._publish(self.bundle(), self.display_id, True)


def _ipython_publish(data: dict[str, str], display_id: str, update: bool) -> None:
    from IPython import display  # in a kernel, IPython is already imported

    if update:
        display.update_display(data, display_id=display_id, raw=True)
    else:
        display.display(data, display_id=display_id, raw=True)


class TerminalProgress(_Progress):
    """A ``tqdm`` bar on stderr, shown only when stderr is a terminal (``disable=None``)."""

    def __init__(self, name: str, futures: Sequence[Future[Any]], spent: Callable[[], int], **tqdm_options: Any):
        super().__init__(name, futures, spent)
        from tqdm import tqdm  # when a bar is first made: importing storeframes stays quick

        options: dict[str, Any] = {"desc": name, "unit": "request", "dynamic_ncols": True, "disable": None}
        self.bar = tqdm(total=self.total, **{**options, **tqdm_options})

    def _show(self, *, final: bool) -> None:
        bar = self.bar
        bar.n = self._finished + self._cancelled
        bar.set_postfix_str(f"{int(self._spent()):,} credits spent", refresh=False)
        if final:
            bar.refresh()
            bar.close()
        else:
            bar.update(0)  # redraws when tqdm's own interval has passed


def progress_bar(name: str, futures: Sequence[Future[Any]], spent: Callable[[], int]) -> _Progress:
    """A bar counting ``futures`` as they finish, with ``spent()`` credits; call ``close()`` once at the end.

    In a Jupyter kernel a :class:`NotebookProgress`, elsewhere a :class:`TerminalProgress`.
    Each future advances the bar through ``add_done_callback``.
    """
    bar: _Progress = NotebookProgress(name, futures, spent) if in_kernel() else TerminalProgress(name, futures, spent)
    for future in futures:
        future.add_done_callback(bar.advance)
    return bar
