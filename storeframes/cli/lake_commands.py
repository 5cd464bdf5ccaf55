"""``storeframes publish TABLE LAKE [--snapshots] [--cache-dir DIR]``: a cached table published to Delta Lake.

It prints what was written in one line (two with ``--snapshots``); a refusal (an unknown table, a bad
lake address, snapshots of a history table, no cache at ``--cache-dir``) exits with status 2 before anything
is written, and a lake or cache that cannot be reached with status 1.
"""

from __future__ import annotations

import argparse
import sys

from .._version import install_hint
from ..errors import ConfigurationError, InvalidParameterError, NoCacheError, StoreframesError
from .printing import printable

__all__ = ["run_publish"]


def run_publish(args: argparse.Namespace) -> int:
    """The ``publish`` command; the exit status."""
    from ..lake import publish

    try:
        from deltalake.exceptions import DeltaError
    except ImportError:
        print(f"storeframes publish: needs deltalake 1.1 or newer: {install_hint('lake')}", file=sys.stderr)
        return 2

    try:  # a workspace's lake and cache when none is given
        chosen = args.chosen_workspace
        done = publish(args.table, args.lake, cache_dir=args.cache_dir, snapshots=args.snapshots, workspace=chosen)
    except (InvalidParameterError, ConfigurationError, NoCacheError) as exc:  # no cache there: 2, as cache says
        print(printable(f"storeframes publish: {exc}"), file=sys.stderr)
        return 2
    except (StoreframesError, OSError, DeltaError) as exc:  # the lake or the cache could not be reached
        print(printable(f"storeframes publish: {exc}"), file=sys.stderr)
        return 1
    for line in done.summary().splitlines():
        print(printable(line))
    return 0
