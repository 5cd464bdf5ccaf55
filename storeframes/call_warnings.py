"""How the package's warnings reach the user: at the user's line, held by a call until it ends.

Every warning of the package goes through :func:`warn`, which points it at the user's
line (the first frame outside storeframes), so the standard warning filters decide
what is shown and how often. A call's work on the client's threads has no user's line
in its stack: inside :class:`CallWarnings` (every call of a client holds one), the
warnings of the call and of the threads working for it (:func:`carry`) are held and
given in the caller's thread when the call ends, in the order they were raised.

Work on a thread of its own that says its problems in a result (a tracker's compaction while
its requests go) holds its warnings with :func:`held_warnings`, never given and never another
thread's.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Any, ParamSpec, TypeVar

__all__ = ["CallWarnings", "carry", "held_warnings", "user_stacklevel", "warn"]


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_stacklevel() -> int:
    """The ``stacklevel`` of a warning that points at the first frame outside storeframes (the user's line)."""
    frame: Any = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
        level += 1
    return level


def _emit(message: str, category: type[Warning]) -> None:
    """Warn now, at the first line outside storeframes."""
    if sys.version_info >= (3, 12):
        warnings.warn(message, category, skip_file_prefixes=(_PACKAGE,))
    else:
        warnings.warn(message, category, stacklevel=user_stacklevel())


class _Held:
    """The warnings a call holds, from any of the threads working for it, in the order they came."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.warnings: list[tuple[str, type[Warning]]] = []
        self.open = True

    def add(self, message: str, category: type[Warning]) -> bool:
        """Hold a warning; False once the call has ended (the warning is then given where it is)."""
        with self.lock:
            if self.open:
                self.warnings.append((message, category))
            return self.open

    def close(self) -> list[tuple[str, type[Warning]]]:
        with self.lock:
            self.open = False
            held, self.warnings = self.warnings, []
        return held


_CALL = threading.local()
"""``held``: the :class:`_Held` of the call this thread works for, if any."""


def warn(message: str, category: type[Warning]) -> None:
    """Warn with ``category`` at the user's line.

    Inside a call (:class:`CallWarnings`, on the caller's thread or one working for it)
    the warning is held, and given at the caller's line when the call ends.
    """
    held: _Held | None = getattr(_CALL, "held", None)
    if held is None or not held.add(message, category):
        _emit(message, category)


class CallWarnings:
    """Hold the warnings of a call until it ends, then give them at the caller's line, in order.

    The outermost one on a thread holds them (a call made inside another call gives its
    warnings with the outer one's). When the call raises, its warnings are given too,
    before the error propagates; a warning the filters turn into an error is then dropped,
    so that the call's own error is the one raised.

    >>> with CallWarnings():  # doctest: +SKIP
    ...     frame = maker.make(...)  # warnings of its threads too, through carry()
    """

    def __init__(self) -> None:
        self._held: _Held | None = None

    def __enter__(self) -> CallWarnings:
        if getattr(_CALL, "held", None) is None:
            self._held = _CALL.held = _Held()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self._held is None:
            return
        _CALL.held = None
        for message, category in self._held.close():
            if error is None:
                _emit(message, category)
            else:
                with contextlib.suppress(Warning):  # the call's own error is the one raised
                    _emit(message, category)


P = ParamSpec("P")
R = TypeVar("R")


def carry(function: Callable[P, R]) -> Callable[P, R]:
    """``function``, to run on another thread for the call this thread is in: its warnings held by that call."""
    held: _Held | None = getattr(_CALL, "held", None)
    if held is None:
        return function

    def working(*args: P.args, **kwargs: P.kwargs) -> R:
        before = getattr(_CALL, "held", None)
        _CALL.held = held
        try:
            return function(*args, **kwargs)
        finally:
            _CALL.held = before

    return working


@contextlib.contextmanager
def held_warnings() -> Iterator[list[tuple[str, type[Warning]]]]:
    """The warnings storeframes gives on this thread (and on threads working for it, through :func:`carry`)
    while inside, put in the list it yields and never given: for work on a thread of its own that says its
    problems in a result. Unlike :class:`warnings.catch_warnings`, other threads' warnings are left alone.

    >>> with held_warnings() as held:
    ...     warn("a file could not be merged", UserWarning)
    >>> held
    [('a file could not be merged', <class 'UserWarning'>)]
    """
    before = getattr(_CALL, "held", None)
    held = _CALL.held = _Held()
    found: list[tuple[str, type[Warning]]] = []
    try:
        yield found
    finally:
        _CALL.held = before
        found += held.close()
