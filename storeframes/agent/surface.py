"""The tools an assistant is given, as plain methods: each takes JSON-shaped arguments and returns a
:class:`~storeframes.agent.tables.Shown` (a capped table as text, the same rows as JSON, where they came from).

Only :meth:`Surface.fetch_frame` may send a request, through the ordinary client (its cache, rate window,
ledger and budget) and past the :class:`~storeframes.agent.gate.Gate`. Every other tool reads what the
cache holds, or plans against its index: no request, no token needed. A tool's refusal of its arguments
names what is allowed, as the frame functions do, before anything is read or spent.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from typing import Any

from ..client import Client
from ..track import Tracker
from .describe import describe
from .gate import Gate
from .keywords import KeywordTools
from .paid import PaidTools
from .questions import QuestionTools
from .reading import ReadingTools
from .tables import Shown
from .tools import refused
from .tracking import TrackerTools

__all__ = ["Surface"]


class Surface(PaidTools, ReadingTools, KeywordTools, QuestionTools, TrackerTools):
    """The tools over one client: ``gate`` decides what ``fetch_frame`` may spend; ``tracker`` (optional)
    gives ``track_status`` and the month budget; ``offline`` serves only what the cache holds."""

    def __init__(self, client: Client, gate: Gate, *, tracker: Tracker | None = None, offline: bool = False):
        if client.cache is None:
            raise refused("cache_dir", None, "a cache folder or bucket: the tools read what it holds", "mcp")
        self.client = client
        self.cache = client.cache
        self.service = client.namespace
        self.gate = gate
        self.tracker = tracker
        self.offline = offline
        self._lock = threading.Lock()  # one tool at a time: the warnings of a call are caught per call

    # -- helpers --------------------------------------------------------------------------------

    def settings(self) -> dict[str, Any]:
        left, limit = self.gate.left()
        said: dict[str, Any] = {
            "service": self.service,
            "today": self.today().isoformat(),
            "cache": str(self.cache.location),
            "offline": self.offline,
            "confirm_above": self.gate.confirm_above,
            "budget_left": "no limit" if left is None else f"{left:,} ({limit})",
        }
        if self.tracker is not None:
            said["tracker"] = self.tracker.spec.name
        return said

    def run(self, tool: str, call: Callable[[], Shown]) -> Shown:
        """``call`` under the lock, its warnings kept as notes; a refusal or an error as an error result, a
        failure of a native library (a ``BaseException`` such as a panic) too: only an interrupt or an exit
        goes through, so the server answers the next call."""
        with self._lock, warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                shown = call()
            except Exception as exc:  # a server answers every call: the assistant reads what went wrong
                shown = Shown(f"{tool} failed: {type(exc).__name__}: {exc}", {"error": type(exc).__name__}, error=True)
            except BaseException as exc:  # a native library's panic: this call fails, the server goes on
                if isinstance(exc, KeyboardInterrupt | SystemExit | GeneratorExit):
                    raise
                shown = _broke(tool, exc)
        said = list(dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught))
        if said:
            shown.text += (
                "\nwarnings: " + " | ".join(said[:5]) + (f" (and {len(said) - 5} more)" if len(said) > 5 else "")
            )
            shown.data["warnings"] = said
        return shown

    def describe(self, name: str | None = None) -> Shown:
        return describe(name, self.settings())


def _broke(tool: str, exc: BaseException) -> Shown:
    """The error result of a call a native library broke off (its first line said, no traceback)."""
    said = (str(exc).strip().splitlines() or ["no message"])[0]
    said = said if len(said) <= 200 else said[:199] + "…"
    text = (
        f"{tool} failed inside a native library ({type(exc).__name__}: {said}); the call was stopped and the "
        "server goes on: ask a smaller question (a filter, fewer columns, a LIMIT), or another tool"
    )
    return Shown(text, {"error": type(exc).__name__}, error=True)
