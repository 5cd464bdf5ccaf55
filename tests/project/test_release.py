"""A release that could happen tomorrow: the changelog's shape, and the workflows that build, check, publish
and deploy (CONTRIBUTING.md, "Releases").

The changelog opens with ``## [Unreleased]``; the version under it is ``storeframes.__version__``,
dated ``YYYY-MM-DD`` once tagged and ``Unreleased`` until then (the release workflow refuses a tag
whose section has no date). The workflows cannot run here: they are parsed, and every command
and path they name is looked for in the repository.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

import pytest

import storeframes

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
GROUPS = ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")
_VERSION = re.compile(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2}|Unreleased)$")


def changelog_problems(text: str, version: str) -> list[str]:
    """What is wrong with a changelog ``text`` for the package at ``version`` (nothing: an empty list)."""
    headings = re.findall(r"^## .*$", text, flags=re.M)
    if not headings or headings[0] != "## [Unreleased]":
        return ["the first section is not '## [Unreleased]'"]
    problems, versions = [], []
    for heading in headings[1:]:
        found = _VERSION.match(heading)
        if found is None:
            problems.append(f"{heading!r} is not '## [X.Y.Z] - YYYY-MM-DD' (or '- Unreleased' before its tag)")
        else:
            versions.append(found.group(1))
    if versions and versions[0] != version:
        problems.append(f"the newest version is {versions[0]}, but storeframes.__version__ is {version}")
    numbers = [tuple(int(n) for n in v.split(".")) for v in versions]
    if numbers != sorted(numbers, reverse=True) or len(set(numbers)) != len(numbers):
        problems.append(f"the versions are not newest first, each once: {versions}")
    dated = [v for v, h in zip(versions, headings[1:], strict=False) if not h.endswith("Unreleased")]
    if versions and versions[1:] != [v for v in dated if v != versions[0]]:
        problems.append("only the newest version may be Unreleased")
    for group in re.findall(r"^### (.*)$", text, flags=re.M):
        if group not in GROUPS:
            problems.append(f"'### {group}' is none of Keep a Changelog's groups {GROUPS}")
    for name in ["Unreleased", *versions]:
        if not re.search(rf"^\[{re.escape(name)}\]: https://", text, flags=re.M):
            problems.append(f"no link '[{name}]: https://...' at the bottom")
    return problems


def test_the_changelog_opens_with_unreleased_then_this_version():
    assert changelog_problems((ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), storeframes.__version__) == []


def test_the_changelog_says_what_this_version_holds():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    section = text.split(f"## [{storeframes.__version__}]", 1)[1].split("\n## ", 1)[0]
    assert "### Added" in section and "### Security" in section
    for name in ("metadata_frame", "sf.plan", "storeframes mcp", "storeframes conformance", "sf.sql", "Tracker"):
        assert name in section


GOOD = """# Changelog

## [Unreleased]

## [0.2.0] - Unreleased

### Added

- a

## [0.1.0] - 2026-12-01

### Fixed

- b

[Unreleased]: https://example.org/compare/v0.2.0...HEAD
[0.2.0]: https://example.org/v0.2.0
[0.1.0]: https://example.org/v0.1.0
"""


@pytest.mark.parametrize(
    ("text", "version", "problem"),
    [
        (GOOD, "0.2.0", None),
        (GOOD, "0.3.0", "the newest version is 0.2.0, but storeframes.__version__ is 0.3.0"),
        (GOOD.replace("## [Unreleased]\n", ""), "0.2.0", "the first section is not '## [Unreleased]'"),
        (GOOD.replace("2026-12-01", "1 December"), "0.2.0", "'## [0.1.0] - 1 December' is not"),
        (GOOD.replace("[0.1.0] - 2026-12-01", "[0.3.0] - 2026-12-01"), "0.2.0", "not newest first"),
        (GOOD.replace("[0.1.0] - 2026-12-01", "[0.1.0] - Unreleased"), "0.2.0", "only the newest"),
        (GOOD.replace("### Fixed", "### Improvements"), "0.2.0", "'### Improvements' is none of"),
        (GOOD.replace("[0.1.0]: https://example.org/v0.1.0\n", ""), "0.2.0", "no link '[0.1.0]: https://...'"),
    ],
)
def test_the_changelog_check_names_what_is_wrong(text, version, problem):
    found = changelog_problems(text, version)
    assert found == [] if problem is None else any(p.startswith(problem) or problem in p for p in found), found


# -- the workflows --------------------------------------------------------------------------------------------


def _workflow(name: str) -> dict[str, Any]:
    yaml = pytest.importorskip("yaml", reason="PyYAML is not installed: the workflows cannot be parsed here")
    data = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))  # the sdist carries .github/ too
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as true
    return data


def _steps(workflow: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for job in workflow["jobs"].values() for step in job["steps"]]


def _commands(workflow: dict[str, Any]) -> list[list[str]]:
    """Every simple command of the workflow's ``run`` steps, split as the shell splits it."""
    commands: list[list[str]] = []
    for step in _steps(workflow):
        for line in step.get("run", "").splitlines():
            lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
            lexer.whitespace_split = True
            words: list[str] = []
            for token in [*lexer, ";"]:
                if set(token) <= set(";&|"):  # a command ends (;, &&, ||, |)
                    commands += [words] if words else []
                    words = []
                elif words or token not in ("if", "then", "else", "fi", "!"):
                    words.append(token)
    return commands


def _repository_problems(workflow: dict[str, Any]) -> list[str]:
    """The files, stages and dependency groups a workflow names that the repository lacks."""
    groups = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["dependency-groups"]
    stages = set(re.findall(r"^(\w+)\(\) \{", (ROOT / ".ci" / "run").read_text(encoding="utf-8"), flags=re.M))
    problems = []
    for words in _commands(workflow):
        program = Path(words[0]).name
        if program in ("bash", "python") or program.startswith("python3"):
            script = next((w for w in words[1:] if not w.startswith("-")), None)
            if script and "/" in script and not (ROOT / script).exists():
                problems.append(f"{' '.join(words)}: no file {script}")
            if script == ".ci/run":
                problems += [f"{' '.join(words)}: no stage {s} in .ci/run" for s in words[2:] if s not in stages]
        for n, word in enumerate(words[:-1]):
            if word == "--group" and words[n + 1] not in groups:
                problems.append(f"{' '.join(words)}: no dependency group {words[n + 1]} in pyproject.toml")
    return problems


def test_the_release_workflow_builds_checks_and_publishes_a_tag_with_trusted_publishing():
    release = _workflow("release.yml")
    assert release["on"] == {"push": {"tags": ["v*"]}}
    commands = [" ".join(words) for words in _commands(release)]
    assert "bash .ci/run artifacts wheel" in commands  # CI's own build, twine check --strict and wheel tests
    publish = release["jobs"]["publish"]
    assert publish["permissions"] == {"id-token": "write"} and publish["environment"]["name"] == "pypi"
    assert [s.get("uses") for s in publish["steps"]][-1] == "pypa/gh-action-pypi-publish@release/v1"
    assert "password" not in str(publish) and "secrets." not in str(release)  # trusted publishing: no token
    assert release["permissions"] == {"contents": "read"}
    assert any(c.startswith("gh release create") and "dist/*" in c for c in commands)


def test_the_docs_workflow_builds_with_the_one_command_and_deploys_to_pages():
    docs = _workflow("docs.yml")
    assert docs["on"]["push"] == {"branches": ["main"]}
    commands = [" ".join(words) for words in _commands(docs)]
    assert ".venv/bin/python docs/build.py" in commands
    uses = {s.get("uses", "").split("@")[0]: s for s in _steps(docs)}
    assert uses["actions/upload-pages-artifact"]["with"]["path"] == "site/"
    assert "actions/deploy-pages" in uses
    assert docs["jobs"]["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}


@pytest.mark.parametrize("name", ["release.yml", "docs.yml"])
def test_every_file_stage_and_group_a_workflow_names_is_in_the_repository(name):
    assert _repository_problems(_workflow(name)) == []


def test_the_workflow_check_finds_a_missing_file_stage_or_group():
    workflow = {
        "jobs": {
            "j": {
                "steps": [
                    {"run": "bash .ci/run artifacts nowhere && .venv/bin/python tools/nothing.py"},
                    {"run": "python -m pip install --group nogroup"},
                ]
            }
        }
    }
    assert _repository_problems(workflow) == [
        "bash .ci/run artifacts nowhere: no stage nowhere in .ci/run",
        ".venv/bin/python tools/nothing.py: no file tools/nothing.py",
        "python -m pip install --group nogroup: no dependency group nogroup in pyproject.toml",
    ]
