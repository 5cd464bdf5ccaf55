"""``reference/cli.md``: every ``storeframes`` command, subcommand and option, walked from the argument parser
(:func:`storeframes.cli.arguments.parser`): usage, description, and each option's default and help.

>>> [" ".join(words) for words, _ in commands()][:3]
['storeframes', 'storeframes demo', 'storeframes endpoints']
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from storeframes.cli.arguments import parser

from .markdown import code, table


def _subcommands(p: argparse.ArgumentParser) -> Iterator[tuple[str, str, argparse.ArgumentParser]]:
    """The subcommands of a parser: name, help, parser."""
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield name, helps.get(name, ""), sub


def commands() -> list[tuple[list[str], argparse.ArgumentParser]]:
    """Every command as its words (``["storeframes", "cache", "clear"]``) with its parser, depth first."""
    found: list[tuple[list[str], argparse.ArgumentParser]] = []

    def walk(words: list[str], p: argparse.ArgumentParser) -> None:
        found.append((words, p))
        for name, _, sub in _subcommands(p):
            walk([*words, name], sub)

    walk(["storeframes"], parser())
    return found


def options(p: argparse.ArgumentParser) -> list[argparse.Action]:
    """A parser's options and arguments, without ``--help`` and the subcommands."""
    return [a for a in p._actions if not isinstance(a, argparse._HelpAction | argparse._SubParsersAction)]


def _names(action: argparse.Action) -> str:
    if not action.option_strings:
        return code(action.metavar or action.dest.upper())
    takes = action.nargs != 0
    metavar = action.metavar or action.dest.upper()
    if isinstance(metavar, tuple):
        metavar = " ".join(metavar)
    return ", ".join(code(f"{flag} {metavar}" if takes else flag) for flag in action.option_strings)


def _default(action: argparse.Action) -> str:
    if action.nargs == 0 or action.default in (None, argparse.SUPPRESS) or isinstance(action, argparse._VersionAction):
        return ""
    value = action.default
    if isinstance(value, list | tuple):
        value = ",".join(str(v) for v in value)
    return code(value)


def _help(action: argparse.Action) -> str:
    text = (action.help or "").replace("%%", "%")
    if action.choices and not isinstance(action, argparse._SubParsersAction):
        text += ("; " if text else "") + "one of " + ", ".join(code(c) for c in action.choices)
    if action.required and action.option_strings:
        text += " Required."
    return text


def anchor(words: list[str]) -> str:
    """The heading anchor of a command: ``storeframes-cache-clear``."""
    return "-".join(words)


def page() -> str:
    """The page's Markdown."""
    everything = commands()
    lines = [
        "# The `storeframes` command",
        "",
        "Every command, subcommand and option, as `storeframes --help` and `storeframes COMMAND --help` print "
        "them. Exit statuses: [Exit codes](exit-codes.md).",
        "",
        table(
            ("command", "what it does"),
            [(f"[{code(' '.join(words))}](#{anchor(words)})", _what(words, p)) for words, p in everything[1:]],
        ),
        "",
    ]
    for words, p in everything:
        lines += [f"## {' '.join(words)} {{#{anchor(words)}}}", ""]
        about = p.description or _what(words, p)
        if about:
            lines += [about.replace("%%", "%"), ""]
        usage = " ".join(p.format_usage().split())
        lines += ["```text", usage.removeprefix("usage: "), "```", ""]
        subs = list(_subcommands(p))
        if subs:
            lines += [
                table(
                    ("subcommand", "what it does"),
                    [(f"[{code(name)}](#{anchor([*words, name])})", text) for name, text, _ in subs],
                ),
                "",
            ]
        rows = [(_names(a), _default(a), _help(a)) for a in options(p)]
        if rows:
            lines += [table(("option", "default", "meaning"), rows), ""]
    return "\n".join(lines)


def _what(words: list[str], p: argparse.ArgumentParser) -> str:
    """A command's one-line help, as its parent lists it."""
    if len(words) < 2:
        return p.description or ""
    parent = dict((tuple(w), q) for w, q in commands())[tuple(words[:-1])]
    return next((text for name, text, _ in _subcommands(parent) if name == words[-1]), "")
