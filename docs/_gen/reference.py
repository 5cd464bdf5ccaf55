"""Writes the generated reference (``docs/reference/``): the API pages, frames, endpoints, CLI, tracker spec,
workspaces file, exit codes, environment variables, errors and warnings, and the index of them all.

>>> sorted(pages())[:3]
['api/analysis.md', 'api/catalog.md', 'api/codes.md']
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from . import api, cli, endpoints, environment, errors, exit_codes, frames, tracker_spec, workspaces_file
from .markdown import table

# (page, title, what it holds, generator), in the order of the index
_TOPICS: tuple[tuple[str, str, str, Callable[[], str]], ...] = (
    ("api/index.md", "The package", "every name of `storeframes.__all__`, from its docstring", api.index_page),
    ("frames.md", "Frames", "every frame's columns, dtypes and meanings (`storeframes.schemas`)", frames.page),
    (
        "endpoints.md",
        "Endpoints and prices",
        "the service's endpoints, parameters and prices (`storeframes.catalog`)",
        endpoints.page,
    ),
    ("cli.md", "The `storeframes` command", "every command and option, from its argument parser", cli.page),
    ("tracker-spec.md", "The tracker spec", "the keys of a tracker's TOML spec", tracker_spec.page),
    (
        "workspaces-file.md",
        "The workspaces file",
        "the keys of `storeframes.toml`'s `[workspace.NAME]` tables, and where the file is found",
        workspaces_file.page,
    ),
    ("exit-codes.md", "Exit codes", "what each command's exit status means", exit_codes.page),
    ("environment.md", "Environment variables", "what storeframes reads from the environment", environment.page),
    ("errors.md", "Errors and warnings", "every error and warning class: its base and when it is raised", errors.page),
)


def index_page() -> str:
    """``reference/index.md``: what is where."""
    return "\n".join(
        [
            "# Reference",
            "",
            "Generated from the code at every build of this site: the docstrings, the declared schemas, the "
            "endpoint catalog, the command's argument parser.",
            "",
            table(("page", "what it holds"), [(f"[{title}]({page})", what) for page, title, what, _ in _TOPICS]),
            "",
            "## The public submodules",
            "",
            table(
                ("module", "what it is"),
                [(f"[`storeframes.{m}`](api/{m}.md)", api.summary_of(m)) for m in api.MODULES],
            ),
            "",
        ]
    )


def pages() -> dict[str, Callable[[], str]]:
    """Every page of the reference, by its path under ``reference/``, with its generator."""
    found: dict[str, Callable[[], str]] = {"index.md": index_page}
    found.update({page: generate for page, _, _, generate in _TOPICS})
    for page, text in api.module_pages():
        found[page] = lambda text=text: text
    return found


def write(docs_dir: Path) -> list[Path]:
    """Wipe ``docs_dir/reference`` and write every page into it; the paths written."""
    home = docs_dir / "reference"
    shutil.rmtree(home, ignore_errors=True)
    written = []
    for page, generate in pages().items():
        path = home / page
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(generate().rstrip("\n") + "\n", encoding="utf-8")
        written.append(path)
    return written
