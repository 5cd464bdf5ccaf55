"""``storeframes cache info|ls|compact|clear|coordination``: the cache named by ``--cache-dir``
(or the default), refused when it does not exist or holds no storeframes cache, then looked
into, compacted, cleared (after asking), or asked how its team coordinates."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import CacheUnavailableError, plural
from .printing import pairs, printable, size

if TYPE_CHECKING:
    from ..answers import Entry
    from ..cache import Cache

__all__ = ["run_cache"]


_EMPTY = "the folder is empty"


def _not_a_cache(cache: Cache) -> str | None:
    """Why the cache's folder (which exists) or bucket holds no storeframes cache, or None when it holds one."""
    from ..cache import MARKER

    if cache.is_cache():
        return None
    if cache.path is not None:
        with os.scandir(cache.path) as items:
            if next(items, None) is None:
                return _EMPTY
    return f"it holds no {MARKER} and no answers/, index/ or ledger/ files of a cache"


def _named_by(args: argparse.Namespace) -> str:
    """Where the cache folder's name came from, said when it does not exist."""
    from ..cache import ENV_CACHE_DIR

    chosen = getattr(args, "chosen_workspace", None)
    if chosen is not None:
        return f"the cache of workspace {chosen.name}"
    if args.cache_dir is not None:
        return "given by --cache-dir"
    if os.environ.get(ENV_CACHE_DIR):
        return f"given by ${ENV_CACHE_DIR}"
    return f"the user's cache folder for storeframes, used when neither --cache-dir nor ${ENV_CACHE_DIR} is given"


def run_cache(args: argparse.Namespace) -> int:
    from ..cache import default_cache_dir, is_url, open_cache
    from ..errors import ConfigurationError

    if args.cache_dir is not None and not args.cache_dir.strip():
        print(
            "storeframes cache: --cache-dir is empty (an unset variable?): give the cache's folder or bucket",
            file=sys.stderr,
        )
        return 2
    where = args.cache_dir if args.cache_dir is not None else default_cache_dir()
    if isinstance(where, str) and is_url(where):
        try:
            cache = open_cache(where)
        except (ConfigurationError, ImportError) as exc:
            print(f"storeframes cache: {exc}", file=sys.stderr)
            return 2
    else:
        path = Path(where).expanduser().absolute()
        if not path.exists():  # never "empty": a mistyped folder would look like a cache with nothing in it
            print(
                f"storeframes cache {args.cache_command}: the folder {printable(str(path))} does not exist "
                f"({_named_by(args)}): no cache there",
                file=sys.stderr,
            )
            return 2
        if not path.is_dir():
            print(f"storeframes cache: {printable(str(path))} is not a folder", file=sys.stderr)
            return 2
        cache = open_cache(path)
    assert cache is not None
    command = args.cache_command
    failed: list[str] = []  # the files cache clear could not remove
    with warnings.catch_warnings(record=True) as caught:  # unreadable files: one line each, after the output
        warnings.simplefilter("always")
        try:
            why = _not_a_cache(cache)
            if why is not None and (command in ("clear", "compact") or why != _EMPTY):
                # never remove (nor show) what may not be a cache: a home folder, a project, "." of an unset variable
                done = {"clear": "; nothing removed", "compact": "; nothing changed"}.get(command, "")
                print(
                    f"storeframes cache {command}: {printable(cache.location)} is not a storeframes cache ({why}){done}",
                    file=sys.stderr,
                )
                return 2
            code = _command(cache, args, failed)
        except (OSError, CacheUnavailableError) as exc:  # a store that cannot be listed or read: said, not raised
            print(f"storeframes cache {command}: {printable(str(exc))}", file=sys.stderr)
            code = 1
    for warning in caught:
        print(f"storeframes cache: {printable(str(warning.message))}", file=sys.stderr)
    if failed:
        print(
            f"storeframes cache clear: {plural(len(failed), 'file')} could not be removed (named above)",
            file=sys.stderr,
        )
    return code


def _cache_info(cache: Cache) -> int:
    from ..ledger import SERVICE, UNKNOWN_SERVICE

    cache.entries()  # sets unreadable index files aside first, so that they are counted
    info = cache.info()
    rows = [
        ("cache", printable(info["path"])),
        ("size on disk", size(info["bytes"])),
        ("cached answers", f"{info['entries']:,}"),
        *((f"  {name}", f"{count:,}") for name, count in info["by_endpoint"].items() if count),
        ("credits paid", f"{info['credits_paid']:,}"),
        ("credits spent", f"{info['credits_spent']:,}"),
        ("credits saved", f"{info['credits_saved']:,}"),
    ]
    for service, figures in info["by_service"].items():  # each sandbox apart: its credits are not the service's
        if service != SERVICE and any(figures.values()):
            what = "ledger rows of an earlier version" if service == UNKNOWN_SERVICE else "not the service's credits"
            rows.append(
                (
                    printable(service),
                    f"{plural(figures['entries'], 'cached answer')}, {figures['paid']:,} credits paid, "
                    f"{figures['spent']:,} spent, {figures['saved']:,} saved ({what})",
                )
            )
    files = info["files"]
    rows.append(
        (
            "files",
            f"{files['answers']} answers, {files['index']} index, {files['frames']} frames, {files['ledger']} ledger",
        )
    )
    merge = files["small"]
    if merge > 1:
        rows.append(
            (
                "compaction",
                f"would merge {merge} index and frame files (one per answer) into a few (storeframes cache compact)",
            )
        )
    if files["superseded"]:
        rows.append(
            (
                "replaced answers",
                f"{files['superseded']} (newer answers hold all their cells; compaction drops their frames)",
            )
        )
    if info["corrupt_files"]:
        rows.append(("unreadable files", f"{info['corrupt_files']} (set aside as *.corrupt; cache clear removes them)"))
    width = max(len(key) for key, _ in rows) + 1
    for key, value in rows:
        print(f"{key + ':':<{width}} {value}")
    return 0


def _cache_ls(cache: Cache, endpoint: str | None) -> int:
    entries = cache.entries(endpoint)
    if not entries:
        if endpoint:
            print(f"no cached {endpoint} answers in the cache at {printable(cache.location)}")
        else:
            print(f"the cache at {printable(cache.location)} is empty")
        return 0
    names = max(len(printable(e.endpoint)) for e in entries)
    costs = max(len(str(e.cost)) for e in entries)
    cells = max(len(str(len(e.cells))) for e in entries)
    for e in entries:
        cost = f"{e.cost:>{costs}} credit" + ("s" if e.cost != 1 else " ")
        count = f"{len(e.cells):>{cells}} cell" + ("s" if len(e.cells) != 1 else " ")
        endpoint = printable(e.endpoint)
        line = f"{e.fetched_at:%Y-%m-%dT%H:%M:%SZ}  {endpoint:<{names}}  {cost}  {count}  {pairs(e.params)}"
        print(line + ("" if e.available else "  (not available)"))
    return 0


def _ago(days: float) -> str:
    return f"{days:g} day{'' if days == 1 else 's'} ago"


def _answers(count: int, endpoint: str | None, older_than: float | None, each: str = "") -> str:
    """``3 cached answers``, ``1 cached search answer kept more than 30 days ago``; ``each``
    (`` (2 metadata, 1 search)``) follows the count."""
    what = plural(count, f"cached {endpoint} answer" if endpoint else "cached answer") + each
    return what if older_than is None else f"{what} kept more than {_ago(older_than)}"


def _to_clear(cache: Cache, endpoint: str | None, older_than: timedelta | None, days: float | None) -> tuple[str, int]:
    """What ``cache clear`` will remove, counted before it does: its answers (per endpoint; by age, those
    kept in the cache longer ago), their frames, the unreadable files set aside, and from where; and how
    many answers and files that is."""
    future: list[Entry] = []
    if older_than is None:
        entries = cache.entries(endpoint)
    else:
        entries, future = cache.aged(older_than, endpoint=endpoint)
    counts = Counter(e.endpoint for e in entries)
    each = ", ".join(f"{counts[name]} {printable(name)}" for name in sorted(counts))
    what = _answers(len(entries), endpoint, days, f" ({each})" if each and endpoint is None else "")
    if entries:
        what += " and its frames" if len(entries) == 1 else " and their frames"
    what += f" from {printable(cache.location)}"
    later = [e for e in future if e.id not in {x.id for x in entries}]
    if later:
        what += (
            f" (and {plural(len(later), 'answer')} whose files are dated in the future: counted as kept now, "
            "they are dated now and go once older than that)"
        )
    prefixes = [f"{kind}/endpoint={endpoint}/" for kind in ("answers", "index")] if endpoint else [""]
    aside = sum(cache.storage.usage(prefix).set_aside for prefix in prefixes)
    if aside and days is not None:
        what += f", and the unreadable files set aside more than {_ago(days)} ({aside} set aside in all)"
    elif aside:
        what += f", and {plural(aside, 'unreadable file')} set aside"
    return what, len(entries) + aside


def _cache_clear(cache: Cache, endpoint: str | None, older_than: float | None, yes: bool, failed: list[str]) -> int:
    """Clear the cache, once the user said yes (``--yes``, or an answer in the terminal); the files it
    could not remove go to ``failed`` (each named in a warning)."""
    age = None if older_than is None else timedelta(days=min(older_than, timedelta.max.days))
    if not yes:
        what, count = _to_clear(cache, endpoint, age, older_than)
        if sys.stdin is None or not sys.stdin.isatty():  # a script, CI, a pipe: nobody to ask
            print(
                f"storeframes cache clear: this would remove {what}, but stdin is not a terminal, so nobody can "
                "be asked: pass --yes to delete without asking; nothing removed",
                file=sys.stderr,
            )
            return 2
        print(f"This removes {what}; the ledger of credits is kept.", file=sys.stderr)
        print(f"Delete {'it' if count == 1 else 'them'}? [y/N] ", end="", file=sys.stderr, flush=True)
        try:
            answer = sys.stdin.readline()
        except KeyboardInterrupt:
            answer = ""
        if not answer.endswith("\n"):  # end of input (Ctrl-D) or Ctrl-C: the line the prompt is on ends
            print(file=sys.stderr)
        if answer.strip().lower() not in ("y", "yes"):
            print("Nothing deleted.")
            return 0
    redated: list[str] = []
    removed = cache.clear(endpoint=endpoint, older_than=age, failed=failed, redated=redated)
    print(f"removed {_answers(removed, endpoint, older_than)} from {printable(cache.location)}")
    if redated and older_than is not None:
        count = len(redated)
        print(
            f"kept {plural(count, 'cached answer')} whose files were dated in the future (a clock ahead, or times "
            f"copied along with the files): counted as kept now and dated now, {'it goes' if count == 1 else 'they go'}"
            f" with a clear --older-than {older_than:g} once {_ago(older_than).removesuffix(' ago')} old"
        )
    return 1 if failed else 0


def _cache_compact(cache: Cache) -> int:
    from ..kept.tables import flattener_versions

    before = cache.info()["files"]
    done = cache.compact(frames=flattener_versions())
    after = cache.info()["files"]
    print(
        f"compacted {printable(cache.location)}: index files {before['index']} -> {after['index']}, "
        f"frame files {before['frames']} -> {after['frames']}"
        + (f", frames of {done['frames_dropped']} replaced answers dropped" if done["frames_dropped"] else "")
    )
    return 0


def _command(cache: Cache, args: argparse.Namespace, failed: list[str]) -> int:
    command = args.cache_command
    if command == "info":
        return _cache_info(cache)
    if command == "ls":
        return _cache_ls(cache, args.endpoint)
    if command == "compact":
        return _cache_compact(cache)
    if command == "coordination":
        return _cache_coordination(cache, args.record, args.coordinator)
    return _cache_clear(cache, args.endpoint, args.older_than, args.yes, failed)


def _cache_coordination(cache: Cache, record: bool, spec: str | None) -> int:
    """Show how the team sharing ``cache`` coordinates; with ``record``, record ``spec``'s (or the
    environment's) instead."""
    from ..coord import coordinator_for, record_coordination
    from ..errors import ConfigurationError

    where = printable(cache.location)
    try:
        team = cache.coordination()
    except ValueError:
        team = None
        if not record:
            print(
                f"storeframes cache coordination: the coordination record in {where} is damaged: record the "
                "team's with --record where its setting is",
                file=sys.stderr,
            )
            return 1
    except OSError as exc:
        print(f"storeframes cache coordination: cannot read {where} ({printable(str(exc))})", file=sys.stderr)
        return 1
    if not record:
        if team is None:
            print(f"no coordination recorded in {where}: the first member that fetches into it records its own")
        else:
            print(f"the team sharing {where} coordinates through {printable(team.describe())}")
            if team.written_by or team.written_at:
                print(f"recorded {printable(team.written_at)} by {printable(team.written_by)}")
        return 0
    try:
        coordinator = coordinator_for(spec)
        now = record_coordination(coordinator, cache)
    except ConfigurationError as exc:
        print(f"storeframes cache coordination: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"storeframes cache coordination: cannot write {where} ({printable(str(exc))})", file=sys.stderr)
        return 1
    was = f" (was: {printable(team.describe())})" if team is not None and not team.same(now) else ""
    print(f"recorded in {where}: the team coordinates through {printable(now.describe())}{was}")
    return 0
