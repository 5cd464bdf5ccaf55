"""``reference/exit-codes.md``: the exit status of every ``storeframes`` command.

The statuses live in the command modules (``storeframes/cli/``) as ``return`` values and a few named constants
(:data:`storeframes.track.EXIT_CODES`, ``UNREACHABLE`` and ``UNANSWERED`` of the conformance command,
``EXIT_NO_DIGEST`` of ``track digest``, ``EXIT_NO_HISTORY`` of ``track add``); their meanings are declared here (:data:`CODES`), and the docs tests
hold the two together: every status a command module returns is declared for its commands, and no other.

>>> sorted({code for _, code, _ in CODES["conformance_commands"]})
[0, 1, 2, 3, 4]
"""

from __future__ import annotations

from storeframes.cli import conformance_commands, spend_commands, track_commands
from storeframes.track import EXIT_CODES

from .markdown import code, table

_OVER_BUDGET = EXIT_CODES["over_budget"]
_PARTIAL = EXIT_CODES["partial"]

CODES: dict[str, list[tuple[str, int, str]]] = {
    "service_commands": [
        ("demo, endpoints, sandbox serve", 0, "done (`sandbox serve`: stopped with Ctrl-C)"),
        (
            "demo, sandbox serve",
            2,
            "refused before anything is made or sent: a bad argument, `--live` without a token, a host that is "
            "not loopback, a port that cannot be listened on",
        ),
    ],
    "cache_commands": [
        ("cache info, ls, compact, clear, coordination", 0, "done (`cache clear` answered no: nothing deleted)"),
        (
            "cache clear, coordination",
            1,
            "a file could not be removed (named, skipped, the rest removed), or the coordination record could not "
            "be read or written",
        ),
        (
            "cache info, ls, compact, clear, coordination",
            2,
            "refused: the folder or bucket does not exist or holds no storeframes cache, an empty `--cache-dir`, "
            "`cache clear` without `--yes` where stdin is not a terminal, a bad coordinator",
        ),
    ],
    "track_commands": [
        ("track run, plan, backfill, status, runs, alerts, events, digest", 0, "done; every item ok"),
        ("track ...", 2, "the spec or the command line refused, before anything is sent (file and line named)"),
        (
            "track run, backfill",
            _PARTIAL,
            "the run was partial or failed: an item failed, a day was left unfetched, a table was not published",
        ),
        (
            "track ...",
            3,
            "the command could not be made: a cache that cannot be read, another run's lease held too long",
        ),
        ("track status", 3, "an item misses a day since `--since` (by default the last 30 days): the days are named"),
        ("track alerts", 3, "an address could not be told (its events are kept and go at the next judgement)"),
        ("track run, backfill", _OVER_BUDGET, "over budget: the run stopped at `budget_per_run` or `budget_per_month`"),
        ("track digest --day", track_commands.EXIT_NO_DIGEST, "no digest of that day is kept"),
        (
            "track add",
            0,
            "the keywords and the plan after the change printed (written with `--yes`), or nothing to add",
        ),
        (
            "track add",
            _OVER_BUDGET,
            "the spec with the keywords added would not fit its budgets (the next run, or the month at the "
            "estimates): nothing written",
        ),
        (
            "track add",
            track_commands.EXIT_NO_HISTORY,
            "the cache keeps no search history of the places in the days asked for: nothing to score, nothing written",
        ),
    ],
    "lake_commands": [
        ("publish", 0, "published"),
        ("publish", 1, "the lake or the cache could not be reached"),
        (
            "publish",
            2,
            "refused before anything is written: an unknown table, a bad lake address, no LAKE given and no "
            "workspace's `lake`, snapshots of a history table, no cache at `--cache-dir`",
        ),
    ],
    "conformance_commands": [
        ("conformance", 0, "every probe sent got an answer, and every answer is as storeframes expects"),
        ("conformance", 1, "something differs (with `--baseline`: something that did not then)"),
        ("conformance", 2, "bad input, refused before anything is sent"),
        (
            "conformance",
            conformance_commands.UNREACHABLE,
            "the service could not be reached: no probe got an answer",
        ),
        (
            "conformance",
            conformance_commands.UNANSWERED,
            "some probes got no answer and nothing (new) differs in those that came: the check is not whole",
        ),
    ],
    "mcp_commands": [
        ("mcp", 0, "the server stopped"),
        ("mcp", 1, "the server could not be opened (the service, the cache or the tracker failed)"),
        (
            "mcp",
            2,
            "refused before the server starts: bad input (a short `$STOREFRAMES_MCP_TOKEN` too), the `mcp` extra "
            "missing, or served offline with no cache at `--cache-dir`",
        ),
    ],
    "spend_commands": [
        ("spend", 0, "every workspace's spend is known, and none has spent its month budget"),
        (
            "spend",
            2,
            "refused: no workspaces file, a file that cannot be used (file and line named), an unknown workspace, a "
            "`--month` not written `YYYY-MM`",
        ),
        (
            "spend",
            spend_commands.NOT_KNOWN,
            "a workspace's spend is not known: its cache is not there or cannot be read (said on its line, never "
            "shown as 0)",
        ),
        (
            "spend",
            spend_commands.OVER_BUDGET,
            "a workspace has spent its month budget (and every workspace's spend is known)",
        ),
    ],
}
"""The exit statuses by command module: (commands, status, meaning)."""


def _commands(text: str) -> str:
    """``"cache info, ls"`` as ```storeframes cache info`, `ls```."""
    first, *more = (word.strip() for word in text.split(","))
    return ", ".join([code(f"storeframes {first}"), *(code(word) for word in more)])


def page() -> str:
    """The page's Markdown."""
    rows = sorted(
        ((commands, status, meaning) for entries in CODES.values() for commands, status, meaning in entries),
        key=lambda row: (row[0].split()[0], row[1]),
    )
    return "\n".join(
        [
            "# Exit codes",
            "",
            "What each `storeframes` command's exit status means. Every command exits with status 2 when its "
            "command line cannot be parsed (an unknown option, a bad value: argparse says which), and a "
            "refusal always comes before anything is sent, written or deleted. A scheduler can tell a run "
            "that needs a look (3), a budget reached (4) and a mistake in the spec (2) apart. A command run under "
            "a workspace (`storeframes --workspace NAME`, or `$STOREFRAMES_WORKSPACE`: `cache`, `track`, `publish`, "
            "`conformance`, `mcp`, `spend`) exits with status 2 before anything else when the workspace cannot be "
            "used: no workspaces file, no such workspace, a file refused (its file and line named), or a "
            "`--cache-dir` other than the workspace's. "
            "The commands and their options: [The `storeframes` command](cli.md).",
            "",
            table(("command", "status", "meaning"), [(_commands(c), status, meaning) for c, status, meaning in rows]),
            "",
        ]
    )
