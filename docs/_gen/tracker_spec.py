"""``reference/tracker-spec.md``: the keys of a tracker's TOML spec, table by table, as the spec's reader
accepts them (:mod:`storeframes.track.spec`, :mod:`storeframes.track.rules`, :mod:`storeframes.track.publishing`).

The keys come from the reader's own lists; their meanings are declared here (:data:`MEANINGS`), and
:func:`keys` refuses a key without one, so a key the reader learns cannot be left out of the page.

>>> "budget_per_month" in dict(keys())["[tracker]"]
True
"""

from __future__ import annotations

import textwrap

from storeframes.track import publishing, rules, spec

from .markdown import code, table

MEANINGS: dict[str, dict[str, str]] = {
    "[tracker]": {
        "name": "the tracker's name (letters, digits, `_`, `.`, `-`; at most 64): it names the tracker's files in the cache",
        "cache_dir": "a folder (relative to the spec file) or `s3://bucket/prefix`; not with `workspace`",
        "workspace": "a workspace of `storeframes.toml` (the one beside the spec, else the one found as "
        "[The workspaces file](workspaces-file.md) says) the tracker spends under: its token, service and cache, "
        "its month budget (the tighter of it and `budget_per_month`), its `notify` addresses when `[notify]` names "
        "no `urls`, its `lake` when `[publish]` names none; optional",
        "budget_per_run": "the most credits one run may spend; optional",
        "budget_per_month": "the most credits per calendar month (UTC); optional",
        "compact_at": "the small files (answers not yet compacted) earlier runs left, past which a run compacts the "
        "cache while its requests wait; 500 by default, `0` or `false` never",
        "country": "the default country of every item",
        "device": "the default device of every item",
        "language": "the default language of every item",
    },
    "[[track]]": {
        "endpoint": "what the item fetches: one of the endpoints below; required",
        "name": "the item's name; by default the endpoint's (`<endpoint>_2` for its second item ...)",
        "every": 'its cadence: `"1d"` (the default), `"7d"`, `"30d"`: any `"<n>d"`',
        "keywords": "the keywords searched",
        "apps": "the app ids",
        "metrics": "the metrics fetched",
        "country": "one country (or the tracker's default)",
        "countries": "several countries: the item is fetched for each",
        "language": "the language of the answers",
        "device": "iphone, ipad or android",
        "type": "the benchmarks' type: free or paid",
        "channels": "the benchmarks' channels",
        "lookback": f'the days a first run fetches, for a history item (`"{spec.DEFAULT_LOOKBACK}d"` by default)',
    },
    "[[alert]]": {
        "rule": "the rule: one of the rules below; required",
        "name": "the rule's name in events and digests",
        "apps": "the apps the rule watches (ones the tracker follows)",
        "keywords": "the keywords the rule watches; by default every keyword the tracker follows",
        "places": "`rank_drop`: how many places an app must fall",
        "within": "`rank_drop`: the top places watched; `anomaly`: the top the rank or its baseline must be in (20)",
        "n": "`top`: the line (an app entered or left the top `n`)",
        "margin": "`top`: passed the line by this many places, or stayed past it a day with data",
        "targets": "`listing_change`: what a change must touch (title, subtitle, description, screenshots, icon, "
        "price, privacy: every one by default)",
        "at": "`budget`: the share of `budget_per_month` whose crossing fires (0.8: 80 %)",
        "threshold": "`anomaly`: the robust z past which a day's rank is anomalous (above 0; 3.0 by default)",
        "weeks": "`anomaly`: the weeks of the same weekday whose median is the baseline (2 or more; 4 by default)",
        "min_move": "`anomaly`: the fewest places a day must move from its baseline (1 or more; 5 by default)",
    },
    "[notify]": {
        "urls": "where events are told: apprise addresses (Slack, Teams, Discord, e-mail, JSON webhooks ...); "
        "`$NAME` or `${NAME}` is the environment variable `NAME`; by default the `notify` of the tracker's workspace",
        "digest": "where a run writes its HTML digest: a path with `{tracker}` and `{day}`",
        "timeout": "seconds one address's delivery may take in all",
    },
    "[publish]": {
        "lake": "the Delta Lake the run publishes to: a folder (relative to the spec file) or `s3://bucket/prefix`; "
        "`$NAME` is filled from the environment; by default the `lake` of the tracker's workspace",
        "tables": "the tables published; by default every table the tracker's items fill",
        "snapshots": "also append the day's snapshots of the current-only tables (false by default)",
    },
}
"""What each key of each table means."""


def keys() -> list[tuple[str, list[str]]]:
    """Every table of a spec with the keys its reader accepts, in the reader's order."""
    item_keys = list(dict.fromkeys([*spec._COMMON, *(k for ks in spec._KEYS.values() for k in ks)]))
    alert_keys = list(dict.fromkeys(["rule", "name", *(k for ks in rules._KEYS.values() for k in ks)]))
    found = [
        ("[tracker]", list(spec._TRACKER_KEYS)),
        ("[[track]]", item_keys),
        ("[[alert]]", alert_keys),
        ("[notify]", list(rules._NOTIFY_KEYS)),
        ("[publish]", list(publishing.PUBLISH_KEYS)),
    ]
    missing = [f"{t} {k}" for t, ks in found for k in ks if k not in MEANINGS.get(t, {})]
    if missing:
        raise KeyError(
            f"the tracker spec's reader accepts keys the docs do not explain: {missing} (docs/_gen/tracker_spec.py)"
        )
    return found


def _example(doc: str) -> str:
    """The indented TOML example of a module's docstring (the block after its ``::``)."""
    block = []
    for line in doc.split("::", 1)[1].splitlines()[1:]:
        if line.strip() and not line.startswith("    "):
            break
        block.append(line)
    return textwrap.dedent("\n".join(block)).strip()


def page() -> str:
    """The page's Markdown."""
    lines = [
        "# The tracker spec",
        "",
        "A tracker is a TOML file read by `sf.Tracker.from_toml(path)` and `storeframes track ... SPEC`. "
        "Every key is checked when the spec is read: an unknown key, table or endpoint, or a bad value, is "
        "refused with the file, the line and what is allowed, before anything is sent "
        "(exit status 2 from the command line).",
        "",
        "```toml",
        _example(spec.__doc__ or ""),
        "```",
        "",
    ]
    for name, accepted in keys():
        lines += [f"## `{name}`", "", table(("key", "meaning"), [(code(k), MEANINGS[name][k]) for k in accepted]), ""]
        if name == "[[track]]":
            lines += [
                table(
                    ("endpoint", "keys besides endpoint, name and every", "required"),
                    [
                        (
                            code(ep),
                            ", ".join(code(k) for k in ks),
                            code(spec._REQUIRED[ep]) if ep in spec._REQUIRED else "",
                        )
                        for ep, ks in spec._KEYS.items()
                    ],
                ),
                "",
            ]
        if name == "[[alert]]":
            lines += [
                table(
                    ("rule", "keys besides rule and name"),
                    [(code(rule), ", ".join(code(k) for k in ks) or "none") for rule, ks in rules._KEYS.items()],
                ),
                "",
            ]
    return "\n".join(lines)
