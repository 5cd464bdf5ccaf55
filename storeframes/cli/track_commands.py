"""``storeframes track run|plan|backfill|status|runs|alerts|events|digest|add SPEC``: a tracker from the command line.

The spec is read and checked whole first: a spec that cannot be used is named with its file and
line (exit status 2) before anything is sent. ``run`` and ``backfill`` exit with the run's code
(:data:`storeframes.track.EXIT_CODES`: 0 ok, 3 partial or failed, 4 over budget; a run that left a day
unfetched is not ok, and names the days), and with 3 too when the run could not be made (a cache that
cannot be read, another run's lease held too long). ``status`` exits 3 when an item misses a day of the
last 30 days (``--since`` sets the first; the days are named), 0 when none does. Every command prints a few lines, and a run on a terminal shows a
progress bar while it sends. ``events`` prints an event a line, a listing change with what changed under it. ``digest --day D`` prints the digest of the day kept in the cache,
and exits 5 when none is kept. ``add --from opportunities`` prints the best keywords of the opportunities the
cache keeps, their credits a day and a month against the budgets and the plan after the change, and appends
them to the spec only with ``--yes``: it exits 5 when the cache keeps no search history of the places, 4 when
the spec after the change would not fit its budgets (nothing written).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Any

from ..errors import ConfigurationError, InvalidParameterError, StoreframesError
from .printing import printable


def _say(text: str) -> None:
    for line in text.splitlines():
        print(printable(line))


__all__ = ["run_track"]


def _tracker(args: argparse.Namespace) -> Any:
    from ..track import Tracker

    options: dict[str, Any] = {}
    if not sys.stderr.isatty():  # a progress bar on a terminal only: not in cron's mail or a CI log
        options["progress"] = False
    chosen, config = args.chosen_workspace, args.config
    return Tracker.from_toml(args.spec, sandbox=args.sandbox, workspace=chosen, config=config, **options)


EXIT_NO_DIGEST = 5
"""The exit status of ``track digest --day D`` when no digest of that day is kept."""


EXIT_NO_HISTORY = 5
"""The exit status of ``track add`` when the cache keeps no search history of the places (nothing to score)."""


def _add(tracker: Any, args: argparse.Namespace) -> int:
    """``track add --from opportunities``: the keywords chosen, the credits and the plan after the change; the
    items appended with ``--yes`` only, and only when the plan fits the budgets."""
    from ..track import EXIT_CODES
    from ..track.adding import HistoryNotKeptError

    for option, value in (("--app", args.app), ("--competitors", args.competitors)):
        if not value:
            allowed = "the id of the app whose opportunities to add" if option == "--app" else "comma-separated app ids"
            raise InvalidParameterError(
                option, value, f"{allowed} (needed with --from opportunities)", endpoint="track add"
            )
    try:
        found = tracker.opportunities(
            args.app, args.competitors, places=args.places, countries=args.country, days=args.days, today=args.today
        )
    except HistoryNotKeptError as exc:
        print(printable(f"storeframes track add: {exc}"), file=sys.stderr)
        return EXIT_NO_HISTORY
    addition = tracker.add(found, top=args.top, min_score=args.min_score, endpoint=args.endpoint, today=args.today)
    _say(addition.summary())
    where = str(args.spec)
    items = f"{len(addition.items)} [[track]] item{'s' if len(addition.items) > 1 else ''}"
    if not addition.items:
        return 0
    if addition.over_budget:
        said = f"nothing written to {where}: the spec after the change does not fit its budgets ({addition.why_over_budget})"
        print(printable(f"storeframes track add: {said}"), file=sys.stderr)
        return EXIT_CODES["over_budget"]
    if not args.yes:
        print(printable(f"nothing written: run again with --yes to append {items} to {where}"))
        return 0
    addition.write()
    print(printable(f"written: {items} appended to {where}"))
    return 0


def _kept_digest(tracker: Any, args: argparse.Namespace) -> int:
    """``track digest --day D``: the kept digest printed (Markdown) or written (``--out``); 5 when none is kept."""
    from ..errors import DigestNotKeptError
    from ..track.day_digest import kept_digest

    if args.end is not None:
        raise InvalidParameterError(
            "--end", args.end, "--end with --start (a period), not with --day", endpoint="track"
        )
    try:
        digest = kept_digest(tracker.spec, args.day)
    except DigestNotKeptError as exc:
        print(printable(f"storeframes track digest: {exc}"), file=sys.stderr)
        return EXIT_NO_DIGEST
    if args.out is None:
        _say(digest.markdown)
    for path in digest.write(args.out) if args.out is not None else ():
        print(printable(str(path)))
    return 0


def run_track(args: argparse.Namespace) -> int:
    """The ``track`` commands; the exit status."""
    try:
        tracker = _tracker(args)
        command = args.track_command
        if command == "plan":
            _say(tracker.plan(args.today, items=args.item).summary())
            return 0
        if command == "status":
            status = tracker.status(args.today, since=args.since)
            _say(status.summary())
            return int(status.exit_code)
        if command == "runs":
            log = tracker.runs()
            if log.is_empty():
                print(f"{tracker.spec.name}: no run yet")
            for row in log.iter_rows(named=True):
                print(
                    printable(
                        f"{row['run_id']}  {row['kind']:<8} {row['day']}  {row['status']:<11} "
                        f"{row['requests']:>6,} requests {row['credits_spent']:>9,} credits"
                    )
                )
                if row["status"] != "ok":  # what made it so, where the row says (a day not fetched, an error)
                    for line in (row["errors"] or "").splitlines():
                        print(printable(f"    {line}"))
            return 0
        if command == "alerts":
            judged = tracker.alerts(args.today, notify=not args.no_notify)
            _say(judged.summary())
            return judged.exit_code
        if command == "events":
            found = tracker.events(since=args.since)
            if found.is_empty():
                print(f"{tracker.spec.name}: no event yet")
            for row in found.iter_rows(named=True):
                print(printable(f"{row['day']}  {row['rule']:<14} {row['detail']}"))
                if row["rule"] == "listing_change":  # what changed, in words (not the raw values)
                    from ..track.change_words import describe_change

                    said = describe_change(row["target"], row["before"], row["after"])
                    print(printable(f"{'':<27}{row['target']}: {said}"))
            return 0
        if command == "add":
            return _add(tracker, args)
        if command == "digest" and args.day is not None:
            return _kept_digest(tracker, args)
        if command == "digest":
            for path in tracker.digest(args.start, args.end, path=args.out):
                print(printable(str(path)))
            return 0
        if command == "run" and args.dry_run:
            _say(tracker.plan(args.today, items=args.item).summary())
            return 0
        if command == "run":
            if args.compact_at is not None:  # the command line's threshold over the spec's
                tracker.spec = dataclasses.replace(tracker.spec, compact_at=args.compact_at)
            result = tracker.run(args.today, items=args.item)
        else:
            result = tracker.backfill(args.start, args.end, items=args.item, today=args.today)
    except (InvalidParameterError, ConfigurationError) as exc:  # refused before anything was sent
        print(printable(f"storeframes track {args.track_command}: {exc}"), file=sys.stderr)
        return 2
    except StoreframesError as exc:  # the cache, a lease, the service: the run could not be made
        print(printable(f"storeframes track {args.track_command}: {exc}"), file=sys.stderr)
        return 3
    _say(result.summary())
    return int(result.exit_code)
