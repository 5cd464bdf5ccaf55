"""The ``storeframes`` command: ``demo``, ``endpoints``, ``sandbox serve``, ``cache info|ls|compact|clear|coordination``
``track run|plan|backfill|status|runs``, ``publish TABLE LAKE``, ``conformance``, ``mcp`` and ``spend``.

``storeframes --workspace NAME <command>`` (or ``$STOREFRAMES_WORKSPACE``) runs ``cache``, ``track``,
``publish``, ``conformance``, ``mcp`` and ``spend`` under a workspace of ``storeframes.toml`` (``--config``
names the file): its token, service, cache (``--cache-dir`` naming another is refused), month budget and lake.
A workspace that cannot be used (no file, no such workspace, a bad file) exits with status 2 before anything.

``demo`` checks its arguments (the token with ``--live``, the days, country, keywords and
app) before it makes its folder or sends anything: a refusal leaves nothing behind.

The ``cache`` commands name a cache folder that does not exist rather than call it empty
(exit status 2, nothing created). ``cache clear`` asks before it deletes, saying what goes
and from where; ``--yes`` skips the question, and without ``--yes`` it deletes nothing when
stdin is not a terminal (a script, CI, a pipe: exit status 2).

``cache clear`` and ``cache compact`` act only on a folder (or bucket) that holds a
storeframes cache, known by its marker file ``storeframes-cache.json`` or, for caches of
earlier versions, by its ``answers/``, ``index/`` or ``ledger/`` files; anything else is
refused (exit status 2) and left untouched, and so is an empty ``--cache-dir ""``.
``cache info`` and ``cache ls`` say so too rather than show a folder that is not a
cache. A file ``cache clear`` cannot remove is named on a line of its own on stderr and
skipped; the command goes on and exits with status 1. Whatever comes from the cache's
files (request parameters, service names, file names, the location) is printed with
control characters escaped (``\\x1b``), so a cache cannot drive the terminal.

``cache coordination`` shows how the team sharing the cache coordinates (as its first member
that fetched recorded it); ``--record`` records this machine's ``$STOREFRAMES_COORDINATOR`` (or
``--coordinator``) instead, for a team that changes its coordination on purpose.

The parser is in :mod:`.arguments`, the ``cache`` commands in :mod:`.cache_commands` and
``demo``, ``endpoints`` and ``sandbox serve`` in :mod:`.service_commands`, the ``track`` commands in
:mod:`.track_commands`, ``publish`` in :mod:`.lake_commands`, ``conformance`` in :mod:`.conformance_commands`, ``spend`` in
:mod:`.spend_commands`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from ..errors import ConfigurationError
from .arguments import parser
from .cache_commands import run_cache
from .conformance_commands import run_conformance
from .lake_commands import run_publish
from .mcp_commands import run_mcp
from .printing import printable
from .service_commands import demo_command, endpoints, serve
from .spend_commands import run_spend
from .track_commands import run_track

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _run(parser().parse_args(argv))
    except BrokenPipeError:  # output piped into head or less that closed early
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


_OF_A_WORKSPACE = ("cache", "track", "publish", "conformance", "mcp", "spend")
"""The commands a workspace applies to (``--workspace``, ``$STOREFRAMES_WORKSPACE``)."""


def _workspace(args: argparse.Namespace) -> tuple[Any, int]:
    """The workspace the command runs under (None: none), and 0; or None and 2 when it cannot be used (said)."""
    from ..workspaces import ENV_WORKSPACE, workspace

    name = args.workspace if args.workspace is not None else os.environ.get(ENV_WORKSPACE, "").strip() or None
    if args.command not in _OF_A_WORKSPACE or (name is None and args.command != "spend"):
        return None, 0
    try:
        chosen = workspace(name, args.config) if name is not None else None
    except ConfigurationError as exc:
        print(printable(f"storeframes {args.command}: {exc}"), file=sys.stderr)
        return None, 2
    if chosen is not None and hasattr(args, "cache_dir"):
        try:
            args.cache_dir = chosen.own_cache(args.cache_dir, named="--cache-dir")
        except ConfigurationError as exc:
            print(printable(f"storeframes {args.command}: {exc}"), file=sys.stderr)
            return None, 2
    return chosen, 0


def _run(args: argparse.Namespace) -> int:
    chosen, refused = _workspace(args)
    if refused:
        return refused
    args.chosen_workspace = chosen
    if args.command == "demo":
        return demo_command(args)
    if args.command == "endpoints":
        return endpoints()
    if args.command == "cache":
        return run_cache(args)
    if args.command == "track":
        return run_track(args)
    if args.command == "publish":
        return run_publish(args)
    if args.command == "conformance":
        return run_conformance(args)
    if args.command == "mcp":
        return run_mcp(args)
    if args.command == "spend":
        return run_spend(args, chosen)
    return serve(args)
