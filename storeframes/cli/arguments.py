"""The command line's grammar: the parser of ``storeframes`` and its commands; the types of their arguments
(a rate, days, whole numbers, keywords), refused by argparse with an example, are in :mod:`.argument_types`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .._version import __version__
from .argument_types import (
    app_list,
    country_list,
    days,
    field,
    files,
    iso_day,
    keyword_list,
    rate,
    score,
    seconds,
    whole,
)

__all__ = ["parser"]


def _track_add(track_commands: Any, parents: list[argparse.ArgumentParser]) -> None:
    """``track add``: the best keywords of the kept opportunities added to the spec, priced first."""
    add = track_commands.add_parser(
        "add",
        parents=parents,
        help="add the best keywords of the opportunities the cache keeps as [[track]] items: the plan after it "
        "(free), written with --yes",
        description="Score the keyword opportunities of --app against --competitors on the search history the "
        "spec's cache keeps of its places (storeframes.keyword_opportunities: no request, no credit), choose the "
        "--top best not tracked yet, and print them with their score and why, the credits the spec would cost a day "
        "and a month against its budgets, and the plan `storeframes track plan` would print after the change. "
        "Nothing is written without --yes; with it, one [[track]] item per place is appended to SPEC, every "
        "byte before it kept (comments, order), and the new file is read with the spec's checks first. A keyword "
        "tracked already (by an item of the same endpoint and place) is said and never added twice. Exit status: "
        "0 done (or nothing to add), 2 an argument or the spec refused (nothing written), 3 the cache could not be "
        "read, 4 the spec after the change would not fit its budgets (nothing written), 5 the cache keeps no search "
        "history of the places.",
    )
    add.add_argument(
        "--from",
        dest="source",
        required=True,
        choices=["opportunities"],
        help="where the keywords come from: opportunities (keyword_opportunities on the kept search history)",
    )
    add.add_argument("--app", metavar="APP", help="the app whose opportunities are scored (required)")
    add.add_argument(
        "--competitors", type=app_list, metavar="APP,APP", help="its competitors, comma-separated app ids (required)"
    )
    add.add_argument(
        "--top",
        type=whole("keywords", 1, "20"),
        default=20,
        metavar="N",
        help="how many keywords to add: the N best-scored not tracked yet (default 20); not --places, the top "
        "places of the results a keyword's ranks are judged in",
    )
    add.add_argument(
        "--places",
        type=whole("places", 1, "10"),
        default=10,
        metavar="N",
        help="the top places of a keyword's results the analysis judges ranks in (keyword_opportunities' top=; "
        "default 10): an app below them has room to gain",
    )
    add.add_argument("--min-score", type=score, metavar="S", help="only keywords scoring S or more (0 to 100)")
    add.add_argument(
        "--country",
        type=country_list,
        metavar="CC,CC",
        help="the countries whose kept history is read and whose items are added (default: the spec's keyword "
        "items' countries, else its default country)",
    )
    add.add_argument(
        "--days",
        type=whole("days", 1, "30"),
        default=30,
        metavar="N",
        help="days of history up to yesterday (default 30)",
    )
    add.add_argument(
        "--endpoint",
        choices=["search", "search_history", "search_ads"],
        default="search",
        help="what the new items fetch: search (live organic, a snapshot a day; the default), search_history, "
        "search_ads",
    )
    add.add_argument("--yes", "-y", action="store_true", help="write the items into SPEC (default: write nothing)")


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="storeframes", description="Tidy polars DataFrames from a mobile app-store data service."
    )
    parser.add_argument("--version", action="version", version=f"storeframes {__version__}")
    parser.add_argument(
        "--workspace",
        metavar="NAME",
        help="a workspace of storeframes.toml for the command: its token, service, cache, month budget and lake "
        "(default $STOREFRAMES_WORKSPACE)",
    )
    parser.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="the workspaces file (default ./storeframes.toml, else $STOREFRAMES_CONFIG, else the user's config folder's)",
    )
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
        type=keyword_list,
        help="comma-separated keywords (default: photo editor,photo filters,collage maker)",
    )
    demo.add_argument("--country", default="us", help="two-letter country code (default us)")
    demo.add_argument("--days", type=whole("days", 1, "90"), default=90, help="days of history (default 90)")
    demo.add_argument(
        "--budget",
        type=whole("credits", 0, "25000"),
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
    serve.add_argument(
        "--today",
        type=iso_day,
        metavar="YYYY-MM-DD",
        help="the service's today (default: today, UTC); search, metrics and metadata answer as on that day "
        "and move from day to day as the stores' do, so each --today of a month replays that day",
    )
    serve.add_argument("--rate-limit", type=rate, default=(60, 10.0), metavar="N/SECONDS", help="default 60/10")
    serve.add_argument("--latency", type=float, default=0.0, metavar="MS", help="milliseconds per answer")
    serve.add_argument("--fault-rate", type=float, default=0.0, help="share of requests meeting a seeded fault")
    serve.add_argument("--retry-after", action="store_true", help="send Retry-After with 429")
    serve.add_argument("--verbose", action="store_true", help="log every request")
    serve.add_argument(
        "--key", metavar="KEY", help="the key it accepts instead of the documented sandbox key (not printed back)"
    )
    serve.add_argument(
        "--dialect",
        type=field,
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="a form of its answers where the service documents none (sf.sandbox.Dialect), repeatable: "
        "search=value|apps|pairs, history=by_date|list, keyword_level=false|true, power=power|app-power, "
        "categories=categories|genres, size=per_store|number|object (the first of each is the default)",
    )

    track = commands.add_parser(
        "track",
        help="a tracker spec's daily runs: run, plan, backfill, status, runs, alerts, events, digest, add",
        description="Fetch what a tracker spec (TOML) follows: what is due each day, within its budgets, "
        "leaving a row in the cache's run log. A day left unfetched (over the budget, failed, not run) is named "
        "and is never ok. Exit status of run and backfill: 0 ok, 3 partial (a day left unfetched) or failed, "
        "4 over budget, 2 a spec or argument refused (nothing sent), 3 too when the run could not be made; of "
        "status: 3 when a day is missing, else 0. track add adds the best keywords of the opportunities the cache "
        "keeps to the spec, priced first (--yes writes).",
    )
    track_commands = track.add_subparsers(dest="track_command", required=True)
    spec = argparse.ArgumentParser(add_help=False)
    spec.add_argument("spec", type=Path, metavar="SPEC", help="the tracker spec, a TOML file")
    spec.add_argument(
        "--sandbox", action="store_true", help="run against the built-in sandbox, its today the run's day"
    )
    day = argparse.ArgumentParser(add_help=False)
    day.add_argument("--today", type=iso_day, metavar="YYYY-MM-DD", help="run as of this day (default: today, UTC)")
    chosen = argparse.ArgumentParser(add_help=False)
    chosen.add_argument("--item", action="append", metavar="NAME", help="only this item (repeat for more)")
    run = track_commands.add_parser(
        "run",
        parents=[spec, day, chosen],
        help="fetch what is due today, within the budgets",
        description="Fetch what is due today, within the budgets. Every request is in the cache's ledger "
        "before it is sent: when the ledger cannot be written (a full disk) the run stops before it sends "
        "and exits 3, saying why. A run left running (killed) is marked interrupted by the next "
        "run, its requests and credits counted from the ledger. Exit status: 0 ok, 3 partial, failed or "
        "not made, 4 over budget, 2 a spec or argument refused (nothing sent).",
    )
    run.add_argument("--dry-run", action="store_true", help="print the plan; send nothing")
    run.add_argument(
        "--compact-at",
        type=files,
        metavar="N",
        help="compact the cache as the run goes past N small files (default: the spec's compact_at, 500; 0 never)",
    )
    track_commands.add_parser("plan", parents=[spec, day, chosen], help="what the next run would send and cost (free)")
    backfill = track_commands.add_parser(
        "backfill",
        parents=[spec, day, chosen],
        help="fetch past days of the history items (search_history, changes)",
        description="Fetch the days from --start to --end (yesterday by default) of the spec's history items; "
        "the days the cache holds final are not fetched again. The other endpoints answer the present only: "
        "no past day of theirs can be fetched. A day it leaves unfetched is named and the run is not ok. "
        "Exit status: 0 ok, 3 partial or failed, 4 over budget, 2 a spec or argument refused (nothing sent).",
    )
    backfill.add_argument("--start", type=iso_day, required=True, metavar="YYYY-MM-DD", help="the first day")
    backfill.add_argument("--end", type=iso_day, metavar="YYYY-MM-DD", help="the last day (default: yesterday)")
    status = track_commands.add_parser(
        "status",
        parents=[spec, day],
        help="each item's last snapshot, the days missing, the month's spend",
        description="Each item's last snapshot (on or before --today), whether it is due, and the days from "
        "--since on it should hold and the cache has nothing of, named ('2 days missing: ...'; never 'up to "
        "date' beside one). Exit status: 0 when no day since --since is missing, 3 when one is, 2 a spec or "
        "argument refused.",
    )
    status.add_argument(
        "--since",
        type=iso_day,
        metavar="YYYY-MM-DD",
        help="the first day whose holes count (default: 29 days before --today, a window of 30 days; a day of the "
        "present missed long ago can never be fetched again, and should not keep a check red for good)",
    )
    track_commands.add_parser("runs", parents=[spec], help="the run log of the spec's tracker")
    alerts = track_commands.add_parser(
        "alerts",
        parents=[spec, day],
        help="judge the spec's alert rules on what is kept, keep and tell the new events (free)",
        description="Judge the [[alert]] rules on the days up to --today with what the cache keeps (nothing is "
        "sent to the service), keep the events not found before, send them to the [notify] addresses, and "
        "keep the day's digest in the cache (and write it at the [notify] digest path). A run does the same at its "
        "end. No event is dated before the tracker's first "
        "run; listing_change watches title, subtitle, description, screenshots, icon, price and privacy unless "
        "its targets name size or version; a top event needs its app past the line by `margin` places (1) or "
        "still past it the next day with data; an anomaly event is told once, on the first day of its run of "
        "anomalous days. Exit status: 0 when every address owed events got them, 3 when "
        "one could not be told (the events are kept and go at the next judgement) or the cache could not be "
        "read, 2 for a spec or an option refused.",
    )
    alerts.add_argument("--no-notify", action="store_true", help="keep the events, send no notification")
    _track_add(track_commands, [spec, day])
    events = track_commands.add_parser("events", parents=[spec], help="the events the spec's alerts found")
    events.add_argument("--since", type=iso_day, metavar="YYYY-MM-DD", help="from this day (default: all)")
    digest = track_commands.add_parser(
        "digest",
        parents=[spec],
        help="print the digest of a day kept in the cache (--day), or write one of a period (--start) (free)",
        description="--day D: the digest of the day that the day's last run kept in the cache (a folder or the "
        "team's bucket): printed as Markdown, or with --out written as HTML, Markdown and charts. Its runs "
        "line counts the finished runs of the day and its credits every run's; days a run did not fetch (over "
        "budget, failed, not run) are said as not fetched, never as days without data. --start D [--end D]: a "
        "digest of a period rendered from what the cache keeps, written at --out (default: the spec's [notify] "
        "digest). Exit status: 0 done, 5 no digest of that day is kept (nothing is printed but the error), "
        "2 an argument or spec refused, 3 the cache could not be read.",
    )
    when = digest.add_mutually_exclusive_group(required=True)
    when.add_argument("--day", type=iso_day, metavar="YYYY-MM-DD", help="the day whose kept digest to print or write")
    when.add_argument("--start", type=iso_day, metavar="YYYY-MM-DD", help="the first day of a period to render")
    digest.add_argument("--end", type=iso_day, metavar="YYYY-MM-DD", help="the period's last day (default: --start)")
    digest.add_argument(
        "--out",
        type=Path,
        metavar="PATH",
        help="the HTML file to write, the Markdown and charts beside it (--day: default, print the Markdown; "
        "--start: default, the spec's [notify] digest)",
    )

    from ..catalog import ENDPOINTS

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
    coordination = cache_commands.add_parser(
        "coordination",
        parents=[folder],
        help="how the team sharing the cache coordinates; --record changes it on purpose",
        description="Show how the team sharing the cache coordinates its rate window and leases, as the first "
        "member that fetched into it recorded (Redis at an address, or no coordinator). A member configured "
        "otherwise is refused before it sends anything. --record records this machine's setting instead "
        "($STOREFRAMES_COORDINATOR, or --coordinator), for a team that changes its coordination on purpose: "
        "members still configured the old way are refused from then on.",
    )
    coordination.add_argument(
        "--record",
        action="store_true",
        help="record this setting as the team's, replacing what is recorded",
    )
    coordination.add_argument(
        "--coordinator",
        metavar="URL",
        help="with --record: 'machine' or a Redis URL (default: $STOREFRAMES_COORDINATOR, else machine)",
    )
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
        type=days,
        metavar="DAYS",
        help="only what is older than DAYS days: answers kept in the cache (by their files' times, not the day "
        "the service dated them; files dated in the future count as kept now: they are dated now, said on a line of "
        "their own, and go once older than DAYS), unreadable files set aside, files left by "
        "stopped writers (a number, 0.5 is twelve hours)",
    )
    clear.add_argument("--endpoint", choices=ENDPOINTS, metavar="ENDPOINT", help=f"only answers of one of {names}")
    publish = commands.add_parser(
        "publish",
        parents=[folder],
        help="publish a cached table to a Delta Lake table, merged on its cells (extra lake)",
        description="Write the table (the newest answer of each cell, as sf.scan gives it) to the Delta Lake "
        "table LAKE/TABLE: only the cells whose newest answer changed, in one commit; nothing when nothing is "
        "new. --snapshots appends the days of its snapshots not yet published to LAKE/TABLE_snapshots. A bucket "
        "lake takes its credentials from the cloud's environment variables. Exit status 2: a refusal before "
        "anything is written (an unknown table, a bad lake, no cache at --cache-dir: nothing is created from a "
        "missing cache); 1: the lake or the cache could not be reached.",
    )
    publish.add_argument("table", metavar="TABLE", help="a table of sf.scan: metadata, versions, metrics ...")
    publish.add_argument(
        "lake",
        nargs="?",
        metavar="LAKE",
        help="a folder, or a bucket address (s3://bucket/prefix); default the workspace's",
    )
    publish.add_argument(
        "--snapshots", action="store_true", help="append the table's snapshots too (current-only tables)"
    )
    spend = commands.add_parser(
        "spend",
        help="each workspace's credits in a month beside its month budget, and each token's total (free)",
        description="Read each workspace's month from its own cache's ledger (every process's and machine's "
        "requests, those in flight at their estimate), for free: spent, its month budget and what is left, and the "
        "total of the workspaces sharing a token. --workspace shows one. Exit status 0; 3 when a workspace's "
        "spend is not known (its cache is missing or cannot be read: said on its line, never a 0); 4 when a "
        "workspace's month budget is spent.",
    )
    spend.add_argument(
        "--workspaces", action="store_true", help="every workspace of the file (the default unless --workspace)"
    )
    spend.add_argument("--month", metavar="YYYY-MM", help="the calendar month, UTC (default: this month)")
    _conformance(commands)
    _mcp(commands)
    return parser


def _app(text: str) -> tuple[str, str]:
    device, _, app = text.partition("=")
    if not app.strip() or not device.strip():
        raise argparse.ArgumentTypeError(f"expected DEVICE=APP_ID such as iphone=284882215, got {text!r}")
    return device.strip().lower(), app.strip()


def _conformance(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    kit = commands.add_parser(
        "conformance",
        help="check storeframes against the real service: a budget-capped probe of every endpoint, a report",
        description="Send a fixed probe of every endpoint on both stores (a wrong token, an app no store has, one "
        "keyword, its top app, two days of changes, a day of history) through the ordinary client within BUDGET "
        "credits; compare each answer with the forms storeframes knows; write report.md, conformance.json and the "
        "scrubbed answers as vcrpy cassettes into DIR. An outage is never 'no difference': exit status 0 when "
        "every probe sent got an answer and every answer is as storeframes expects, 1 when something differs "
        "(with --baseline: when something differs that did not then), 2 on bad input, 3 when the service could "
        "not be reached ('could not reach the service at <base URL>': no probe sent got an answer, for a refused "
        "connection, DNS, TLS or timeouts; the report lists each probe and why), with or without --baseline, "
        "4 when some probes got no answer and nothing (new) differs in those that came. "
        "--against reads a saved report again with this version instead, and sends nothing. Needs vcrpy "
        "(extra conformance); the token and base URL come from STOREFRAMES_API_KEY and STOREFRAMES_BASE_URL.",
    )
    kit.add_argument(
        "--budget", type=whole("credits", 0, "150"), default=150, help="the most credits to spend (default 150)"
    )
    kit.add_argument("--out", type=Path, default=Path("conformance"), metavar="DIR", help="where the report goes")
    kit.add_argument(
        "--device",
        action="append",
        choices=("iphone", "ipad", "android"),
        dest="devices",
        metavar="DEVICE",
        help="a device to probe, repeatable (default: iphone and android)",
    )
    kit.add_argument("--country", default="us", help="the country probed (default us)")
    kit.add_argument("--keyword", default="photo editor", help="the keyword probed (default 'photo editor')")
    kit.add_argument(
        "--app",
        action="append",
        type=_app,
        dest="apps",
        metavar="DEVICE=ID",
        help="the app probed on a device, repeatable (default: the top result of its search)",
    )
    kit.add_argument(
        "--timeout",
        type=seconds,
        default=30.0,
        metavar="SECONDS",
        help="seconds for each network operation of a request (default 30)",
    )
    kit.add_argument(
        "--tries",
        type=whole("attempts", 1, "5"),
        default=5,
        metavar="N",
        help="attempts per request before a probe counts as not answered (default 5)",
    )
    kit.add_argument(
        "--against", type=Path, metavar="REPORT", help="read a saved report (its folder or conformance.json) again"
    )
    kit.add_argument(
        "--baseline",
        type=Path,
        metavar="REPORT",
        help="an earlier report: fail only on what differs from it (a weekly canary)",
    )


def _mcp(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    server = commands.add_parser(
        "mcp",
        help="serve the cache and the service to an AI assistant (Model Context Protocol), behind a spend gate",
        description="A Model Context Protocol server over stdio (or streamable HTTP on a loopback address): tools "
        "that plan a call and show its price, fetch a frame past a spend gate, and read what the cache holds for "
        "free (scan, sql, movers, changes_before, category_standing, share_of_voice, keyword_opportunities, "
        "rank_anomalies, events, track_status, spend, describe). A call "
        "estimated above --confirm-above credits needs the assistant's confirm=true; none passes the session's "
        "--budget or the tracker's month budget. The token comes from STOREFRAMES_API_KEY and never appears in a "
        "tool's output. Needs the mcp extra. Exit status 2: bad input, or, served offline, no cache at --cache-dir "
        "(a missing folder or bucket prefix is never served as an empty cache).",
    )
    server.add_argument("--cache-dir", metavar="PATH", help="the cache folder or bucket (default: the tracker's)")
    budget = whole("credits", 0, "2000")
    spends = "the most credits the server may spend from its start to its stop, whoever connects (default 2000)"
    server.add_argument("--budget", type=budget, default=2000, metavar="CREDITS", help=spends)
    confirm_above = whole("credits", 0, "100")
    asks = "credits a call may cost without the assistant's confirm=true (default 100; 0: every paid call asks)"
    server.add_argument("--confirm-above", type=confirm_above, default=100, metavar="CREDITS", help=asks)
    server.add_argument("--offline", action="store_true", help="serve only what the cache holds; send nothing")
    server.add_argument("--tracker", type=Path, metavar="SPEC", help="a tracker's spec: its month budget, runs, events")
    server.add_argument("--sandbox", action="store_true", help="the built-in sandbox instead of the real service")
    server.add_argument("--today", type=iso_day, metavar="YYYY-MM-DD", help="the sandbox's today (with --sandbox)")
    server.add_argument(
        "--transport", choices=("stdio", "http"), default="stdio", help="stdio (default) or streamable HTTP"
    )
    server.add_argument(
        "--host", default="127.0.0.1", help="with --transport http: a loopback address (default 127.0.0.1)"
    )
    server.add_argument(
        "--port", type=whole("port", 0, "8765"), default=8765, help="with --transport http (default 8765)"
    )
