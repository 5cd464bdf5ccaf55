"""The ``storeframes`` command: ``demo``, ``endpoints``, ``sandbox serve``, ``cache info|ls|compact|clear|coordination``
``track run|plan|backfill|status|runs``, ``publish TABLE LAKE`` and ``conformance``.

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
:mod:`.track_commands`, ``publish`` in :mod:`.lake_commands`, ``conformance`` in :mod:`.conformance_commands`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from .arguments import parser
from .cache_commands import run_cache
from .conformance_commands import run_conformance
from .lake_commands import run_publish
from .mcp_commands import run_mcp
from .service_commands import demo_command, endpoints, serve
from .track_commands import run_track

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _run(parser().parse_args(argv))
    except BrokenPipeError:  # output piped into head or less that closed early
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _run(args: argparse.Namespace) -> int:
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
    return serve(args)
