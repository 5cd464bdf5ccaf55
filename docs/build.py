"""Build the docs site: ``python docs/build.py [--site DIR]`` (CONTRIBUTING.md, "Docs").

1. writes the generated reference into ``docs/reference/`` (wiped first; ``docs/_gen/``);
2. executes the example notebooks against the sandbox into ``docs/examples/`` (``docs/_gen/notebooks.py``);
3. copies ``CHANGELOG.md`` to ``docs/changelog.md``;
4. checks that every page of the navigation exists and every page is in it, then runs
   ``zensical build --strict --clean`` with ``mkdocs.yml`` into ``site/`` (or ``--site DIR``).

Offline: nothing is fetched. Any warning (a missing page or anchor, a reference that does not resolve) fails
the build with the warning shown and exit status 1; a missing tool is exit status 2.
``--skip-examples`` leaves the notebooks out (and their section of the navigation): a quicker build while
writing a page. ``--docs DIR`` builds another copy of the pages (the tests build a copy with a broken link).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))  # the generators: docs/_gen/

from _gen import reference  # noqa: E402
from _gen.markdown import ANSI  # noqa: E402

_EXCLUDED = ("_gen/",)


class BuildError(Exception):
    """The build cannot go on: the message says why."""


class ToolMissing(BuildError):
    """zensical is not installed where this Python can run it."""


def zensical() -> list[str]:
    """The command that runs zensical: this Python's module, the script beside it, or the one on the PATH."""
    if importlib.util.find_spec("zensical") is not None:
        return [sys.executable, "-m", "zensical"]
    beside = Path(sys.executable).parent / "zensical"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("zensical")
    if found:
        return [found]
    raise ToolMissing(
        "zensical is not installed: install the docs group (`.venv/bin/python -m pip install --group docs`, "
        "or the README's command, whose dev group holds it)"
    )


def nav_pages(nav: Any) -> list[str]:
    """Every page the navigation names, in order.

    >>> nav_pages([{"Home": "index.md"}, {"Start": ["start/install.md", {"Quick": "start/quickstart.md"}]}])
    ['index.md', 'start/install.md', 'start/quickstart.md']
    """
    if isinstance(nav, str):
        return [nav] if nav.endswith(".md") else []
    if isinstance(nav, list):
        return [page for item in nav for page in nav_pages(item)]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in nav_pages(value)]
    return []


def without(nav: Any, section: str) -> Any:
    """The navigation without the top-level section (or page) titled ``section``."""
    return [item for item in nav if not (isinstance(item, dict) and section in item)]


def check_nav(nav: Any, docs: Path) -> None:
    """Every page the navigation names exists, and every page is in the navigation (zensical says neither)."""
    named = nav_pages(nav)
    missing = [page for page in named if not (docs / page).is_file()]
    pages = sorted(
        path.relative_to(docs).as_posix()
        for path in docs.rglob("*.md")
        if not any(path.relative_to(docs).as_posix().startswith(x) for x in _EXCLUDED)
    )
    left_out = [page for page in pages if page not in named]
    problems = []
    if missing:
        problems.append(f"mkdocs.yml's nav names pages that do not exist: {', '.join(missing)}")
    if left_out:
        problems.append(f"pages that are in no section of mkdocs.yml's nav: {', '.join(left_out)}")
    if problems:
        raise BuildError("; ".join(problems))


def built_page(site: Path, page: str) -> Path:
    """Where a page is built: ``guides/cache.md`` at ``guides/cache/index.html``, ``index.md`` at ``index.html``.

    >>> built_page(Path("site"), "reference/index.md").as_posix(), built_page(Path("site"), "cli.md").as_posix()
    ('site/reference/index.html', 'site/cli/index.html')
    """
    stem = page.removesuffix(".md")
    if stem == "index" or stem.endswith("/index"):
        return site / f"{stem}.html"
    return site / stem / "index.html"


def config(docs: Path, site: Path, *, examples: bool, changelog: bool) -> dict[str, Any]:
    """``mkdocs.yml`` with the folders made absolute (it is written elsewhere) and the sections not built left out."""
    settings = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    settings["docs_dir"] = str(docs)
    settings["site_dir"] = str(site)
    for plugin in settings.get("plugins", []):
        if isinstance(plugin, dict) and "mkdocstrings" in plugin:
            python = plugin["mkdocstrings"]["handlers"]["python"]
            python["paths"] = [str((ROOT / p).resolve()) for p in python.get("paths", ["."])]
            options = python.setdefault("options", {})
            options["extensions"] = [_absolute(e) for e in options.get("extensions", [])]
    if not examples:
        settings["nav"] = without(settings["nav"], "Examples")
    if not changelog:
        settings["nav"] = without(settings["nav"], "Changelog")
    return settings


def _absolute(extension: Any) -> Any:
    """A griffe extension given by a path (``docs/_gen/x.py:Class``) made absolute; another left as it is."""
    if isinstance(extension, str) and ".py" in extension:
        path, _, name = extension.partition(":")
        return f"{(ROOT / path).resolve()}{':' + name if name else ''}"
    return extension


def render_examples(docs: Path) -> list[Path]:
    """The example notebooks executed against the sandbox and written as pages (``docs/_gen/notebooks.py``)."""
    from _gen import notebooks

    try:
        return list(notebooks.render(docs))
    except Exception as exc:  # a notebook that fails: its cell and error, as the renderer names them
        raise BuildError(f"the example notebooks could not be rendered: {type(exc).__name__}: {exc}") from exc


def run_zensical(settings: dict[str, Any]) -> tuple[int, str]:
    """``zensical build --strict --clean`` with these settings: its exit status and its output, without colour
    codes and without the traceback it ends a failed strict build with."""
    # zensical takes the config file's folder as the project's root, which must hold the pages and the site
    home = Path(os.path.commonpath([settings["docs_dir"], settings["site_dir"]]))
    settings = {
        **settings,
        "docs_dir": os.path.relpath(settings["docs_dir"], home),
        "site_dir": os.path.relpath(settings["site_dir"], home),
    }
    with tempfile.NamedTemporaryFile("w", dir=home, prefix=".docs-build-", suffix=".yml", encoding="utf-8") as file:
        file.write(yaml.safe_dump(settings, sort_keys=False, allow_unicode=True))
        file.flush()
        env = {**os.environ, "NO_COLOR": "1", "CLICOLOR": "0", "TERM": "dumb"}
        done = subprocess.run(
            [*zensical(), "build", "--strict", "--clean", "-f", file.name],
            cwd=home,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    output = ANSI.sub("", done.stdout + done.stderr)
    return done.returncode, output.split("Traceback (most recent call last):", 1)[0].rstrip()


def warned(output: str) -> bool:
    """Whether zensical's output holds a warning or an error (a strict build fails on it).

    >>> warned("Build started\\nNo issues found"), warned("Warning: page does not exist\\n1 issue found")
    (False, True)
    """
    return bool(re.search(r"^\s*(WARNING|ERROR|Warning|Error)\b|^\d+ issues? found", output, flags=re.M))


def build(docs: Path, site: Path, *, examples: bool = True) -> str:
    """Generate the pages and build the site; the summary line. Raises :class:`BuildError` on any warning."""
    started = time.perf_counter()
    reference.write(docs)
    generated = time.perf_counter()
    rendered = render_examples(docs) if examples else []
    if not examples:
        shutil.rmtree(docs / "examples", ignore_errors=True)
    executed = time.perf_counter()
    changelog = (ROOT / "CHANGELOG.md").is_file()
    if changelog:
        shutil.copyfile(ROOT / "CHANGELOG.md", docs / "changelog.md")
    settings = config(docs, site, examples=bool(rendered), changelog=changelog)
    check_nav(settings["nav"], docs)
    status, output = run_zensical(settings)
    if status != 0 or warned(output):
        raise BuildError(f"zensical build --strict failed (exit status {status}):\n{output}")
    # a page whose rendering raised is left out without a word: each page of the navigation must be there
    unbuilt = [page for page in nav_pages(settings["nav"]) if not built_page(site, page).is_file()]
    if unbuilt:
        raise BuildError(f"zensical built no page for {', '.join(unbuilt)}:\n{output}")
    finished = time.perf_counter()
    built = sum(1 for page in site.rglob("*.html") if page.name != "404.html")
    notes = f"{len(rendered)} example pages in {executed - generated:.1f} s" if rendered else "no example pages"
    return (
        f"{site}: {built} pages in {finished - started:.1f} s (reference {generated - started:.1f} s, "
        f"{notes}, zensical {finished - executed:.1f} s)"
    )


def main(argv: list[str] | None = None) -> int:
    """The command line; the exit status (0 built, 1 a warning or a failed step, 2 a missing tool)."""
    parser = argparse.ArgumentParser(prog="python docs/build.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=ROOT / "site", help="where the site is written (default site/)")
    parser.add_argument("--docs", type=Path, default=HERE, help="the pages' folder (default docs/)")
    parser.add_argument("--skip-examples", action="store_true", help="leave the example notebooks out")
    args = parser.parse_args(argv)
    try:
        zensical()
        print(build(args.docs.resolve(), args.site.resolve(), examples=not args.skip_examples))
    except ToolMissing as exc:
        print(f"docs/build.py: {exc}", file=sys.stderr)
        return 2
    except BuildError as exc:
        print(f"docs/build.py: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
