"""``reference/workspaces-file.md``: the keys of a ``[workspace.NAME]`` table of ``storeframes.toml``, as the file's
reader accepts them (:mod:`storeframes.workspaces.config`), and where the file is found.

The keys come from the reader's own list; their meanings are declared here (:data:`MEANINGS`), and :func:`keys`
refuses a key without one, so a key the reader learns cannot be left out of the page.

>>> "budget_per_month" in keys()
True
"""

from __future__ import annotations

from storeframes.workspaces import config

from .markdown import code, table

MEANINGS: dict[str, str] = {
    "api_key_env": "the environment variable holding the workspace's token (upper-case letters, digits and `_`); "
    "by default `STOREFRAMES_API_KEY`. The token itself is never written in the file",
    "base_url": "the service's address, `https://<host>/api/public/store`; not with `base_url_env`",
    "base_url_env": "the environment variable holding the service's address; by default (neither key) "
    "`STOREFRAMES_BASE_URL`",
    "cache_dir": "the workspace's cache: a folder (relative to the file) or a bucket address "
    "(`s3://bucket/prefix`). Required, and no other workspace of the file may name the same one: it holds the "
    "workspace's answers, its ledger and its month's spend",
    "budget_per_month": "the most credits the workspace may spend in a calendar month (UTC), whoever spends them: "
    "every client, tracker run and assistant's server of the workspace, on every machine of its cache; a whole "
    "number, `0` refuses every paid call; optional",
    "lake": "the default Delta Lake (a folder relative to the file, or a bucket address) of "
    "`sf.publish(TABLE, workspace=NAME)`, `storeframes --workspace NAME publish TABLE` and the `[publish]` table of "
    "the workspace's trackers; optional",
    "notify": "the apprise addresses (`json://host/path`, `mailto://...`) the workspace's trackers tell when their "
    "`[notify]` table names no `urls`; optional, never shown",
}
"""What each key of a ``[workspace.NAME]`` table means."""


def keys() -> list[str]:
    """The keys a workspace table may hold, in the reader's order."""
    accepted = list(config._KEYS)
    missing = [key for key in accepted if key not in MEANINGS]
    if missing:
        raise KeyError(
            f"the workspaces file's reader accepts keys the docs do not explain: {missing} (docs/_gen/workspaces_file.py)"
        )
    return accepted


EXAMPLE = """\
[workspace.acme]
api_key_env = "ACME_STOREFRAMES_KEY"          # the variable holding acme's token: never the token itself
base_url = "https://<host>/api/public/store"  # or base_url_env = "ACME_BASE_URL"; by default $STOREFRAMES_BASE_URL
cache_dir = "acme-cache"                      # relative to this file, or s3://bucket/prefix: acme's own
budget_per_month = 50000                      # credits per calendar month (UTC), for every caller of acme
lake = "s3://agency-lake/acme"                # optional: the default lake of its trackers and publish
notify = ["json://hooks.agency.example/acme"] # optional: where its trackers tell events by default

[workspace.globex]
cache_dir = "s3://agency-cache/globex"        # the token of $STOREFRAMES_API_KEY, the service of $STOREFRAMES_BASE_URL
budget_per_month = 20000"""
"""The page's example file."""


def page() -> str:
    """The page's Markdown."""
    return "\n".join(
        [
            "# The workspaces file",
            "",
            f"`{config.CONFIG_NAME}` names the clients of an agency or a team, one `[workspace.NAME]` table each: "
            "whose token, which service, where its answers are kept, and its month's budget. "
            '`sf.use("NAME")`, `sf.Client(workspace="NAME")`, `storeframes --workspace NAME ...`, '
            f"`${config.ENV_WORKSPACE}` and a tracker's `[tracker] workspace` choose one; "
            "[Markets and clients](../guides/markets.md#clients-workspaces) shows them at work.",
            "",
            "```toml",
            EXAMPLE,
            "```",
            "",
            "## Where it is found",
            "",
            "The first of these that exists is read:",
            "",
            f"1. `{config.CONFIG_NAME}` in the working directory;",
            f"2. the file `${config.ENV_CONFIG}` names;",
            f"3. `{config.CONFIG_NAME}` in the user's config folder (`~/.config/storeframes/` on Linux, "
            "`~/Library/Application Support/storeframes/` on macOS, `%LOCALAPPDATA%\\storeframes\\` on Windows).",
            "",
            "`sf.use(..., config=FILE)`, `sf.load_workspaces(FILE)`, `sf.spend_report(config=FILE)` and "
            "`storeframes --config FILE` read the file named instead. A tracker spec that names a workspace reads "
            f"the `{config.CONFIG_NAME}` beside the spec first. When no file is found, the `ConfigurationError` "
            "names each place looked in.",
            "",
            "## `[workspace.NAME]`",
            "",
            "A name is letters, digits, `_`, `.` and `-` (at most 64). The file holds `[workspace.NAME]` tables "
            "only, at least one.",
            "",
            table(("key", "meaning"), [(code(key), MEANINGS[key]) for key in keys()]),
            "",
            "## What is refused",
            "",
            "The whole file is checked when it is read, before anything is sent. A refusal is a "
            "`WorkspaceFileError` (a `ConfigurationError`) naming the file, the line and what is allowed; from the "
            "command line, exit status 2.",
            "",
            table(
                ("what", "why"),
                [
                    ("a table or key not listed here", "the message lists the keys"),
                    ("a workspace without `cache_dir`", "each workspace keeps its own cache"),
                    ("two workspaces naming the same `cache_dir`", "their ledgers and month budgets would mix"),
                    ("`base_url` with `base_url_env`", "one or the other"),
                    ("a budget that is not a whole number from 0", "the ledger counts whole credits"),
                    (
                        "an `api_key`, `token`, `key` or `secret` key; an `api_key_env` that is not a variable's name; "
                        "a file that holds the token any of its workspaces' variables hold",
                        "the file is shared and committed: a token in it is not a secret. The message never shows it",
                    ),
                ],
            ),
            "",
        ]
    )
