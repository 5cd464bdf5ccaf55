"""The tools that may spend: ``plan`` says what a call would send and cost, and whether the gate would let it
through; ``fetch_frame`` sends it through the ordinary client, past the gate, under the month's lease.

>>> print(surface.plan("metadata_frame", {"apps": ["3233849169"]}).text)  # doctest: +SKIP
plan of metadata_frame: 1 row, 4 columns
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from ..answers import short_params
from ..engine import Plan
from ..errors import plural
from ..fetch.pipeline import FRAMES
from .describe import FUNCTIONS
from .gate import Verdict
from .tables import Shown, show
from .tools import Tools, fetched_when, refused

__all__ = ["PaidTools"]


class PaidTools(Tools):
    """``plan`` and ``fetch_frame``: the only tool that may send a request."""

    def _function(self, function: Any, tool: str) -> str:
        if not isinstance(function, str) or function not in FUNCTIONS:
            raise refused("function", function, f"one of {', '.join(FUNCTIONS)}", tool)
        return function

    @staticmethod
    def _arguments(arguments: Any, tool: str) -> dict[str, Any]:
        if arguments is None:
            return {}
        if not isinstance(arguments, Mapping) or not all(isinstance(k, str) for k in arguments):
            raise refused(
                "arguments", arguments, 'an object of the function\'s arguments, such as {"apps": ["284882215"]}', tool
            )
        if "refresh" in arguments:
            raise refused(
                "arguments", "refresh", "the function's arguments but refresh (the server's cache policy holds)", tool
            )
        return dict(arguments)

    def plan(self, function: str, arguments: Mapping[str, Any] | None = None) -> Shown:
        """What ``function(**arguments)`` would send and cost, what the cache already holds; nothing sent."""
        name, args = self._function(function, "plan"), self._arguments(arguments, "plan")
        planned = self.client.plan(name, **args)
        return self._planned(name, args, planned, self.gate.judge(planned.estimate, confirm=False))

    def _planned(self, name: str, args: dict[str, Any], planned: Plan, verdict: Verdict) -> Shown:
        """A plan as a result: its requests, what they cost, what the cache holds, and the gate's verdict."""
        if planned.cached:
            gate = "free: the cache answers it"
        elif verdict.passed:
            gate = "fetch_frame would go through"
        elif verdict.confirmable:
            gate = f"fetch_frame needs confirm=true: {verdict.reason}"
        else:
            gate = f"fetch_frame would be refused: {verdict.reason}"
        requests = (
            planned.requests.select("source", "params", "cells", "credits")
            .with_columns(request=pl.Series([_request(p) for p in planned.requests["params"]], dtype=pl.String))
            .select("source", "request", "cells", "credits")
        )
        notes = [
            f"{planned.to_send:,} requests to send, at most {plural(planned.estimate, 'credit')}; "
            f"{planned.cached_cells:,} of {planned.cells:,} cells cached (saving {planned.saved:,} credits)",
            f"gate: {gate}",
        ]
        shown = show(requests, title=f"plan of {name}", limit=20, notes=notes)
        shown.data.update(
            function=name,
            arguments=args,
            to_send=planned.to_send,
            estimate=planned.estimate,
            cells=planned.cells,
            cached_cells=planned.cached_cells,
            saved=planned.saved,
            gate={"passes": verdict.passed, "confirmable": verdict.confirmable, "reason": verdict.reason},
        )
        return shown

    def fetch_frame(
        self,
        function: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        confirm: bool = False,
        columns: Sequence[str] | None = None,
        limit: int = 20,
    ) -> Shown:
        """The frame of ``function(**arguments)``: from the cache for free, or fetched past the gate."""
        name, args = self._function(function, "fetch_frame"), self._arguments(arguments, "fetch_frame")
        planned = self.client.plan(name, **args)
        if planned.estimate > 0:  # judged and sent under the month's lease: the month's spend read as it is
            with self.gate.lease():
                verdict = self.gate.judge(planned.estimate, confirm=bool(confirm))
                if verdict.passed:
                    return self._fetched(name, args, columns, limit, verdict.left)
            refused = self._planned(name, args, planned, verdict)
            refused.text = "not fetched, nothing sent\n\n" + refused.text
            refused.data.update(refused=True, reason=verdict.reason)
            refused.error = True
            return refused
        return self._fetched(name, args, columns, limit, self.gate.left()[0])

    def _fetched(
        self, name: str, args: dict[str, Any], columns: Sequence[str] | None, limit: int, left: int | None
    ) -> Shown:
        before = self.client.ledger.height
        with self.gate.holding(left):
            frame = getattr(self.client, name)(**args)
        new = self.client.ledger.slice(before)
        sent = new.filter(~pl.col("from_cache"))
        provenance: dict[str, Any] = {
            "requests sent": sent.height,
            "credits spent": int(new["cost"].sum() or 0),
            "answers from the cache": int(new["from_cache"].sum() or 0),
            "credits saved": int(new["saved"].sum() or 0),
        }
        if "fetched_at" in frame.columns and frame.height:
            provenance["fetched"] = fetched_when(frame)
        provenance["session spent"] = self.gate.spent
        table = FRAMES[name].table.name if name in FRAMES else "metadata"
        hint = f"the frame is in the cache now: scan(table={table!r}, filters={{...}}, columns=[...]) reads a part of it for free"
        return show(frame, title=f"{name}", limit=limit, columns=columns, provenance=provenance, hint=hint)


def _request(params: str) -> str:
    """A request's parameters in a few words, what it asks for first: ``keyword=maps, country=us, ...``."""
    said = json.loads(params)
    return short_params({k: said[k] for k in sorted(said, key=lambda k: k not in ("apps", "keyword"))}, 78)
