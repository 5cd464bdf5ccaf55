"""The ``storeframes`` command: ``demo``, ``endpoints``, ``sandbox serve`` and ``cache info|ls|compact|clear``.

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
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import warnings
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from ._version import __version__
from .errors import plural

if TYPE_CHECKING:
    from .cache import Cache

__all__ = ["main"]


def _rate(text: str) -> tuple[int, float]:
    try:
        count, seconds = text.split("/")
        return int(count), float(seconds)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected REQUESTS/SECONDS such as 60/10, got {text!r}") from None


def _days(text: str) -> float:
    try:
        days = float(text)
    except ValueError:
        days = math.nan
    if not math.isfinite(days) or days < 0:
        raise argparse.ArgumentTypeError(f"expected a number of days such as 30 or 0.5, got {text!r}")
    return days


def _whole(what: str, least: int, example: str) -> Callable[[str], int]:
    """An argument type: a whole number of ``what`` no smaller than ``least``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = least - 1
        if value < least:
            raise argparse.ArgumentTypeError(
                f"expected a whole number of {what} >= {least} such as {example}, got {text!r}"
            )
        return value

    return parse


def _keywords(text: str) -> list[str]:
    keywords = [k.strip() for k in text.split(",") if k.strip()]
    if not keywords:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated keywords such as 'photo editor,collage maker', got {text!r}"
        )
    return keywords


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="storeframes", description="Tidy polars DataFrames from a mobile app-store data service."
    )
    parser.add_argument("--version", action="version", version=f"storeframes {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser(
        "demo",
        help="a rank-tracking, change and conversion analysis: Parquet tables and PNG charts in a folder",
        description="Track an app and its competitors on keywords over 90 days, overlay their metadata changes, "
        "place its category in the conversion benchmarks; write the tidy tables (Parquet) and the charts (PNG) "
        "into DIR and print what was fetched and what it cost. Answers are cached in DIR/cache: run it again "
        "and it spends nothing. On the sandbox unless --live is given.",
    )
    demo.add_argument(
        "--out", type=Path, default=Path("storeframes-demo"), metavar="DIR", help="default storeframes-demo"
    )
    demo.add_argument(
        "--live",
        action="store_true",
        help="use the real service ($STOREFRAMES_API_KEY and $STOREFRAMES_BASE_URL); spends real credits",
    )
    demo.add_argument("--app", help="the app to follow (default: the sandbox's photo editor app)")
    demo.add_argument(
        "--keywords",
        type=_keywords,
        help="comma-separated keywords (default: photo editor,photo filters,collage maker)",
    )
    demo.add_argument("--country", default="us", help="two-letter country code (default us)")
    demo.add_argument("--days", type=_whole("days", 1, "90"), default=90, help="days of history (default 90)")
    demo.add_argument(
        "--budget",
        type=_whole("credits", 0, "25000"),
        help="the most credits to spend (default with --live: 25000)",
    )
    demo.add_argument("--seed", type=int, default=0, help="the sandbox world's seed (default 0)")

    commands.add_parser("endpoints", help="list the endpoints, their parameters and prices")

    sandbox = commands.add_parser("sandbox", help="the local fake of the service")
    sandbox_commands = sandbox.add_subparsers(dest="sandbox_command", required=True)
    serve = sandbox_commands.add_parser("serve", help="serve the sandbox over HTTP on a loopback address")
    serve.add_argument("--port", type=int, default=8765, help="port (0 picks a free one; default 8765)")
    serve.add_argument("--host", default="127.0.0.1", help="loopback address (default 127.0.0.1)")
    serve.add_argument("--seed", type=int, default=0, help="the world's seed (default 0)")
    serve.add_argument("--today", help="the service's today as YYYY-MM-DD (default: today, UTC)")
    serve.add_argument("--rate-limit", type=_rate, default=(60, 10.0), metavar="N/SECONDS", help="default 60/10")
    serve.add_argument("--latency", type=float, default=0.0, metavar="MS", help="milliseconds per answer")
    serve.add_argument("--fault-rate", type=float, default=0.0, help="share of requests meeting a seeded fault")
    serve.add_argument("--retry-after", action="store_true", help="send Retry-After with 429")
    serve.add_argument("--verbose", action="store_true", help="log every request")

    from .catalog import ENDPOINTS

    names = ", ".join(ENDPOINTS)
    folder = argparse.ArgumentParser(add_help=False)
    folder.add_argument(
        "--cache-dir",
        metavar="PATH",
        help="the cache folder, or a bucket (s3://bucket/prefix; credentials from the cloud's environment "
        "variables) (default: $STOREFRAMES_CACHE_DIR, else the user's cache folder for storeframes)",
    )
    cache = commands.add_parser("cache", help="look into the cache, compact it and clear it")
    cache_commands = cache.add_subparsers(dest="cache_command", required=True)
    cache_commands.add_parser(
        "info",
        parents=[folder],
        help="where the cache is, its size, its answers and the credits they cost and saved",
        description="Where the cache is, its size on disk, how many answers it holds (per endpoint), the "
        "real service's credits: paid for the cached answers, spent on every answer charged and saved by the "
        "cache (the last two from the ledger), then each sandbox's on a line of its own (never added to the "
        "service's), the files of each kind and how many a compaction would merge, and the unreadable files "
        "set aside.",
    )
    cache_commands.add_parser(
        "compact",
        parents=[folder],
        help="merge the small index and frame files into a few, so that the cache opens and reads quickly",
        description="Merge each endpoint's index files (one per answer) into one file and each table's kept "
        "frames into a few, leaving out the frames of answers that newer answers replaced. Raw answers and "
        "the ledger are kept. Safe while other processes use the cache.",
    )
    ls = cache_commands.add_parser(
        "ls",
        parents=[folder],
        help="list the cached answers, oldest first",
        description="One line per cached answer, oldest first: when it was fetched (UTC), its endpoint, "
        "its cost in credits, the cells it covers and its request parameters.",
    )
    ls.add_argument("endpoint", nargs="?", choices=ENDPOINTS, metavar="ENDPOINT", help=f"only this one of {names}")
    clear = cache_commands.add_parser(
        "clear",
        parents=[folder],
        help="remove cached answers (all of them unless filtered), after asking; the ledger is kept",
        description="Remove cached answers and their frames, all of them unless --older-than or --endpoint "
        "narrows it, and the unreadable files set aside. The ledger of credits spent and saved is kept. It says "
        "what it will remove and asks first (anything but y or yes keeps everything: 'Nothing deleted.', exit "
        "status 0); --yes deletes without asking, and is needed when stdin is not a terminal (a script, CI, a "
        "pipe), where nothing is deleted without it (exit status 2). Only a storeframes cache is touched (a "
        "folder without its storeframes-cache.json marker or its files is refused), only files of endpoints this "
        "version knows, never through a symbolic link; a file that cannot be removed is named and skipped (exit "
        "status 1).",
    )
    clear.add_argument(
        "-y",
        "--yes",
        action="store_true",
        help="delete without asking (needed when stdin is not a terminal)",
    )
    clear.add_argument(
        "--older-than",
        type=_days,
        metavar="DAYS",
        help="only what is older than DAYS days: answers fetched, unreadable files set aside, files left by "
        "stopped writers (a number, 0.5 is twelve hours)",
    )
    clear.add_argument("--endpoint", choices=ENDPOINTS, metavar="ENDPOINT", help=f"only answers of one of {names}")
    return parser


def _serve(args: argparse.Namespace) -> int:
    from .sandbox import Faults, SandboxServer

    share = args.fault_rate / 5
    faults = Faults(server_error=share, rate_limited=share, timeout=share, truncated=share, dropped=share)
    server = SandboxServer(
        host=args.host,
        port=args.port,
        verbose=args.verbose,
        seed=args.seed,
        today=args.today,
        rate_limit=args.rate_limit,
        latency=args.latency / 1000.0,
        faults=faults,
        retry_after_header=args.retry_after,
    )
    print(f"storeframes sandbox serving at {server.base_url}", flush=True)
    print(f"  STOREFRAMES_BASE_URL={server.base_url}", flush=True)
    print(f"  STOREFRAMES_API_KEY={server.key}", flush=True)
    print("  press Ctrl-C to stop", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0


def _endpoints() -> int:
    import polars as pl

    from .catalog import ENDPOINTS

    rows = [
        {
            "endpoint": ep.name,
            "path": ep.path,
            "parameters": ", ".join(p.name + ("*" if p.required else "") for p in ep.params),
            "devices": ", ".join(ep.devices),
            "max_apps": ep.max_apps,
            "price": ", ".join(f"{k}={v}" for k, v in vars(ep.cost).items() if v)
            if not ep.cost.per_app_metric
            else ", ".join(f"{k}={v}/app" for k, v in ep.cost.per_app_metric.items()),
        }
        for ep in ENDPOINTS.values()
    ]
    with pl.Config(tbl_rows=-1, fmt_str_lengths=120, tbl_width_chars=200, tbl_hide_dataframe_shape=True):
        print(pl.DataFrame(rows))
    print("* required. Prices are estimates in credits; the service's reported cost wins.")
    return 0


def _size(count: int) -> str:
    """A number of bytes in decimal units: ``512 B``, ``74.6 kB``, ``1.2 MB``."""
    if count < 1000:
        return f"{count} B"
    value = float(count)
    for unit in ("kB", "MB", "GB", "TB"):
        value /= 1000
        if round(value, 1) < 1000 or unit == "TB":
            break
    return f"{value:.1f} {unit}"


def _printable(text: str) -> str:
    """``text`` safe to print on a terminal: every character that is not printable (control
    characters such as ESC, format characters such as a right-to-left override, lone
    surrogates) is shown as its escape (``\\x1b``, ``\\u202e``); letters of every script stay
    as they are (``café``, ``写真``)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else c.encode("unicode_escape").decode("ascii") for c in text)


def _pairs(params: Mapping[str, str]) -> str:
    """Request parameters as ``key=value`` pairs; values with spaces or quotes are quoted; control
    characters are escaped (:func:`_printable`)."""

    def value(text: str) -> str:
        plain = text and not any(c.isspace() or c in "\"'" for c in text)
        return text if plain else json.dumps(text, ensure_ascii=False)

    return " ".join(_printable(f"{key}={value(str(text))}") for key, text in params.items())


_EMPTY = "the folder is empty"


def _not_a_cache(cache: Cache) -> str | None:
    """Why the cache's folder (which exists) or bucket holds no storeframes cache, or None when it holds one."""
    from .cache import MARKER

    if cache.is_cache():
        return None
    if cache.path is not None:
        with os.scandir(cache.path) as items:
            if next(items, None) is None:
                return _EMPTY
    return f"it holds no {MARKER} and no answers/, index/ or ledger/ files of a cache"


def _named_by(args: argparse.Namespace) -> str:
    """Where the cache folder's name came from, said when it does not exist."""
    from .cache import ENV_CACHE_DIR

    if args.cache_dir is not None:
        return "given by --cache-dir"
    if os.environ.get(ENV_CACHE_DIR):
        return f"given by ${ENV_CACHE_DIR}"
    return f"the user's cache folder for storeframes, used when neither --cache-dir nor ${ENV_CACHE_DIR} is given"


def _cache(args: argparse.Namespace) -> int:
    from .cache import default_cache_dir, is_url, open_cache
    from .errors import ConfigurationError

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
                f"storeframes cache {args.cache_command}: the folder {_printable(str(path))} does not exist "
                f"({_named_by(args)}): no cache there",
                file=sys.stderr,
            )
            return 2
        if not path.is_dir():
            print(f"storeframes cache: {_printable(str(path))} is not a folder", file=sys.stderr)
            return 2
        cache = open_cache(path)
    assert cache is not None
    command = args.cache_command
    failed: list[str] = []  # the files cache clear could not remove
    with warnings.catch_warnings(record=True) as caught:  # unreadable files: one line each, after the output
        warnings.simplefilter("always")
        why = _not_a_cache(cache)
        if why is not None and (command in ("clear", "compact") or why != _EMPTY):
            # never remove (nor show) what may not be a cache: a home folder, a project, "." of an unset variable
            done = {"clear": "; nothing removed", "compact": "; nothing changed"}.get(command, "")
            print(
                f"storeframes cache {command}: {_printable(cache.location)} is not a storeframes cache ({why}){done}",
                file=sys.stderr,
            )
            return 2
        if command == "info":
            code = _cache_info(cache)
        elif command == "ls":
            code = _cache_ls(cache, args.endpoint)
        elif command == "compact":
            code = _cache_compact(cache)
        else:
            code = _cache_clear(cache, args.endpoint, args.older_than, args.yes, failed)
    for warning in caught:
        print(f"storeframes cache: {_printable(str(warning.message))}", file=sys.stderr)
    if failed:
        print(
            f"storeframes cache clear: {plural(len(failed), 'file')} could not be removed (named above)",
            file=sys.stderr,
        )
    return code


def _cache_info(cache: Cache) -> int:
    from .ledger import SERVICE, UNKNOWN_SERVICE

    cache.entries()  # sets unreadable index files aside first, so that they are counted
    info = cache.info()
    rows = [
        ("cache", _printable(info["path"])),
        ("size on disk", _size(info["bytes"])),
        ("cached answers", str(info["entries"])),
        *((f"  {name}", str(count)) for name, count in info["by_endpoint"].items() if count),
        ("credits paid", str(info["credits_paid"])),
        ("credits spent", str(info["credits_spent"])),
        ("credits saved", str(info["credits_saved"])),
    ]
    for service, figures in info["by_service"].items():  # each sandbox apart: its credits are not the service's
        if service != SERVICE and any(figures.values()):
            what = "ledger rows of an earlier version" if service == UNKNOWN_SERVICE else "not the service's credits"
            rows.append(
                (
                    _printable(service),
                    f"{plural(figures['entries'], 'cached answer')}, {figures['paid']} credits paid, "
                    f"{figures['spent']} spent, {figures['saved']} saved ({what})",
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
            print(f"no cached {endpoint} answers in the cache at {_printable(cache.location)}")
        else:
            print(f"the cache at {_printable(cache.location)} is empty")
        return 0
    names = max(len(_printable(e.endpoint)) for e in entries)
    costs = max(len(str(e.cost)) for e in entries)
    cells = max(len(str(len(e.cells))) for e in entries)
    for e in entries:
        cost = f"{e.cost:>{costs}} credit" + ("s" if e.cost != 1 else " ")
        count = f"{len(e.cells):>{cells}} cell" + ("s" if len(e.cells) != 1 else " ")
        endpoint = _printable(e.endpoint)
        line = f"{e.fetched_at:%Y-%m-%dT%H:%M:%SZ}  {endpoint:<{names}}  {cost}  {count}  {_pairs(e.params)}"
        print(line + ("" if e.available else "  (not available)"))
    return 0


def _ago(days: float) -> str:
    return f"{days:g} day{'' if days == 1 else 's'} ago"


def _answers(count: int, endpoint: str | None, older_than: float | None, each: str = "") -> str:
    """``3 cached answers``, ``1 cached search answer fetched more than 30 days ago``; ``each``
    (`` (2 metadata, 1 search)``) follows the count."""
    what = plural(count, f"cached {endpoint} answer" if endpoint else "cached answer") + each
    return what if older_than is None else f"{what} fetched more than {_ago(older_than)}"


def _to_clear(cache: Cache, endpoint: str | None, older_than: timedelta | None, days: float | None) -> tuple[str, int]:
    """What ``cache clear`` will remove, counted before it does: its answers (per endpoint), their
    frames, the unreadable files set aside, and from where; and how many answers and files that is."""
    now = datetime.now(UTC)
    entries = [e for e in cache.entries(endpoint) if older_than is None or now - e.fetched_at > older_than]
    counts = Counter(e.endpoint for e in entries)
    each = ", ".join(f"{counts[name]} {_printable(name)}" for name in sorted(counts))
    what = _answers(len(entries), endpoint, days, f" ({each})" if each and endpoint is None else "")
    if entries:
        what += " and its frames" if len(entries) == 1 else " and their frames"
    what += f" from {_printable(cache.location)}"
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
    removed = cache.clear(endpoint=endpoint, older_than=age, failed=failed)
    print(f"removed {_answers(removed, endpoint, older_than)} from {_printable(cache.location)}")
    return 1 if failed else 0


def _cache_compact(cache: Cache) -> int:
    from .datasets import flattener_versions

    before = cache.info()["files"]
    done = cache.compact(frames=flattener_versions())
    after = cache.info()["files"]
    print(
        f"compacted {_printable(cache.location)}: index files {before['index']} -> {after['index']}, "
        f"frame files {before['frames']} -> {after['frames']}"
        + (f", frames of {done['frames_dropped']} replaced answers dropped" if done["frames_dropped"] else "")
    )
    return 0


def _check_demo(args: argparse.Namespace) -> None:
    """Refuse, before the demo makes its folder or sends anything, what it would refuse on the way:
    an ``--out`` that is a file, ``--live`` without the token and the service's address (or with a
    plain-http address), more days than there is history, a bad country, keyword or app id."""
    from .catalog import EARLIEST_DAY, today_utc, validate
    from .client import ENV_API_KEY, ENV_BASE_URL
    from .demo import DEMO_KEYWORDS, DEMO_TODAY
    from .errors import ConfigurationError, InvalidParameterError
    from .wire import check_base_url

    if args.out.exists() and not args.out.is_dir():
        raise ConfigurationError(
            f"--out {_printable(str(args.out))} is a file, not a folder: give a folder for the tables and charts"
        )
    if args.live:
        missing = [name for name in (ENV_API_KEY, ENV_BASE_URL) if not os.environ.get(name)]
        if missing:
            raise ConfigurationError(
                f"--live needs a token and the service's address: {' and '.join(missing)} "
                f"{'is' if len(missing) == 1 else 'are'} not set (set {ENV_API_KEY} to the token and "
                f"{ENV_BASE_URL} to the service's https:// address)"
            )
        check_base_url(os.environ[ENV_BASE_URL])
    today = today_utc() if args.live else DEMO_TODAY
    end = today - timedelta(days=2)  # as the demo counts: final days only
    most = (end - EARLIEST_DAY).days + 1
    if args.days > most:
        raise InvalidParameterError(
            "days",
            args.days,
            f"at most {most:,} days (history starts on {EARLIEST_DAY} and the demo's days end on {end})",
            endpoint="demo",
        )
    start = end - timedelta(days=args.days - 1)
    for keyword in args.keywords or DEMO_KEYWORDS:
        validate(
            "search_history",
            keyword=keyword,
            country=args.country,
            device="iphone",
            start_date=start,
            end_date=end,
            today=today,
        )
    if args.app is not None:
        validate("metadata", apps=args.app, country=args.country, device="iphone")


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _run(_parser().parse_args(argv))
    except BrokenPipeError:  # output piped into head or less that closed early
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _run(args: argparse.Namespace) -> int:
    if args.command == "demo":
        from .demo import run_demo
        from .errors import StoreframesError

        try:
            _check_demo(args)
            run_demo(
                args.out,
                live=args.live,
                app=args.app,
                keywords=args.keywords,
                country=args.country,
                days=args.days,
                seed=args.seed,
                budget=args.budget,
            )
        except StoreframesError as exc:
            print(f"storeframes demo: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 2
        return 0
    if args.command == "endpoints":
        return _endpoints()
    if args.command == "cache":
        return _cache(args)
    return _serve(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
