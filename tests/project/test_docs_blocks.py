"""Every fenced code block of the README and of the hand-written docs pages runs, or parses, as written.

One test per page (a new page under ``docs/`` is picked up with no edit; the generated ``docs/reference/``,
``docs/examples/`` and ``docs/changelog.md`` are not read). A page's Python blocks run in order in one
namespace, like a notebook, in a fresh empty working directory, with every ``STOREFRAMES_*`` variable
cleared and the package's default client reset: what a reader has who opens the page and types its blocks
in. A block of ``>>>`` lines is a transcript: each line runs and what it shows (a value, what it prints, or
an error's class and message) is compared with what the page says, ``...`` standing for any text. TOML,
JSON, YAML and INI blocks are parsed (a tracker's spec, a TOML block with ``[tracker]``, by the spec's own
reader), SQL blocks by DuckDB's parser; shell blocks are read by ``bash -n`` and each ``storeframes``
command in them by the command line's own parser (its subcommand and options exist, its values are
accepted), as are the commands of a GitHub Actions step (``run``), a systemd unit (``ExecStart``) and an
assistant's server entry (``command`` and ``args``). ``text`` and ``http`` blocks and blocks with no
language are shown output, not code (but the commands after a ``$`` prompt in them are read as in a shell
block). Fences indented in an admonition or a content tab are read too.

A block is marked on the line just above its fence. One that cannot run here (it needs a bucket, a Slack)
says why::

    <!-- block: not run (needs a real bucket) -->

A Python block written for a reader with a token (``sf.Client()``, the token and base URL from the
environment) runs with ``STOREFRAMES_API_KEY`` and ``STOREFRAMES_BASE_URL`` set to the sandbox on loopback
(its today 2026-11-20)::

    <!-- block: with a token (the sandbox on loopback answers) -->

An unknown mark, a mark with no reason, or one anywhere but just above a fence fails the page. A failure
names the page, the line of the block's fence and its first line (of a Python block, the line that failed
too). Each test records how many blocks ran, were marked not run and were shown output; the run's summary
("docs code blocks") gives the totals and each page that holds blocks not run.
"""

from __future__ import annotations

import configparser
import contextlib
import doctest
import importlib.util
import io
import json
import os
import re
import shlex
import subprocess
import tomllib
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs
import pytest
import yaml
from markdown_it import MarkdownIt

from storeframes import Client, defaults
from storeframes.cli.arguments import parser as cli_parser
from storeframes.track import parse_spec
from tests._extras import NEEDS, importable

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
GENERATED = ("reference", "examples")
"""Folders of ``docs/`` the build writes (gitignored): not hand-written, not read here."""
GENERATED_PAGES = ("changelog.md",)


def pages() -> list[Path]:
    """The README and every hand-written page of ``docs/``."""
    found = [
        path
        for path in sorted(DOCS.rglob("*.md"))
        if path.relative_to(DOCS).parts[0] not in GENERATED and path.relative_to(DOCS).as_posix() not in GENERATED_PAGES
    ]
    return [ROOT / "README.md", *found]


MARK = re.compile(r"<!--\s*block:(?P<body>.*?)-->", re.S)
KINDS = re.compile(r"(?P<kind>not run|with a token) \((?P<why>[^()]*\S[^()]*)\)")
SHOWN = {"", "text", "http", "mermaid"}
"""Languages of blocks that show output, a listing, an HTTP exchange or a diagram: not code, never run."""
ALIASES = {"py": "python", "python3": "python", "pycon": "python", "yml": "yaml", "shell-session": "console"}
"""Other names of the languages read here."""
SHELLS = {"bash", "sh", "shell", "console"}
"""Shell blocks: ``bash -n`` reads them (of a ``console`` block, the lines after a ``$`` prompt), and each
``storeframes`` command in them is read by the command line's own parser (see :func:`storeframes_commands`)."""
BETWEEN = {"&&", "||", ";", "|", "&", "(", ")"}
"""What separates two commands on a shell line."""


def shown_path(page: Path) -> str:
    """The page as a failure names it: its path in the repository."""
    return page.relative_to(ROOT).as_posix() if page.is_relative_to(ROOT) else page.name


@dataclass
class Block:
    """A fenced block of a page: its language, text and the line of its opening fence (1-based)."""

    lang: str
    text: str
    line: int
    mark: str | None = None
    """``not run`` or ``with a token``, from the mark above the block."""

    def where(self, page: Path) -> str:
        first = next((line for line in self.text.splitlines() if line.strip()), "")
        return f"{shown_path(page)}, line {self.line}: the {self.lang or 'plain'} block `{first.strip()}`"


def mark_kind(text: str, where: str, line: int) -> str:
    """The kind of the mark ``text`` (``not run`` or ``with a token``); anything else fails, naming the line."""
    mark = MARK.fullmatch(text.strip())
    kind = KINDS.fullmatch(mark.group("body").strip()) if mark else None
    if kind is None:
        raise AssertionError(
            f"{where}, line {line + 1}: unknown block mark {text.strip()!r}; the marks are "
            "'<!-- block: not run (why it cannot run here) -->' and '<!-- block: with a token (why) -->', "
            "each alone on its line, with a reason"
        )
    return kind.group("kind")


def blocks(page: Path) -> list[Block]:
    """The page's fenced blocks in order, each with the mark on the line just above it (if any). A mark that
    is not one of the two, has no reason, or stands anywhere but just above a fence fails here."""
    where = shown_path(page)
    source = page.read_text(encoding="utf-8")
    pending: tuple[int, str] | None = None  # a mark's line (0-based) and kind, waiting for its fence
    found: list[Block] = []
    fenced: set[int] = set()
    for token in MarkdownIt("commonmark").parse(source):
        if token.map is None or token.nesting == -1:
            continue
        line = token.map[0]
        if pending is not None and not (token.type == "fence" and line == pending[0] + 1):
            raise AssertionError(
                f"{where}, line {pending[0] + 1}: a block mark must stand on the line just above a fence"
            )
        above, pending = pending, None
        if token.type == "html_block" and MARK.search(token.content):
            pending = (line, mark_kind(token.content, where, line))
        elif token.type == "fence":
            lang = token.info.split()[0].lower().lstrip(".") if token.info.strip() else ""
            lang = ALIASES.get(lang, lang)
            found.append(Block(lang, token.content, line + 1, above[1] if above else None))
            fenced.update(range(*token.map))
    if pending is not None:
        raise AssertionError(f"{where}, line {pending[0] + 1}: a block mark must stand on the line just above a fence")
    return sorted(found + indented(source.splitlines(), fenced, where), key=lambda block: block.line)


INDENTED = re.compile(r"(?P<indent>(?: {4})+)(?P<fence>`{3,}|~{3,})\s*(?P<lang>[\w+-]*).*")


def indented(lines: list[str], fenced: set[int], where: str) -> list[Block]:
    """The fences indented in an admonition (``!!! note``) or a content tab (``=== "Python"``), which
    CommonMark reads as text: each read whole, dedented, with the mark on the line above it (if any)."""
    found = []
    start = 0
    while start < len(lines):
        opening = INDENTED.fullmatch(lines[start]) if start not in fenced else None
        if opening is None:
            start += 1
            continue
        indent, fence = opening.group("indent"), opening.group("fence")
        end = next(
            (
                n
                for n in range(start + 1, len(lines))
                if lines[n].strip().startswith(fence) and not lines[n].strip(fence[0]).strip()
            ),
            None,
        )
        if end is None:
            raise AssertionError(f"{where}, line {start + 1}: an indented fence that is never closed")
        above = lines[start - 1] if start > 0 else ""
        kind = mark_kind(above, where, start - 1) if MARK.search(above) else None
        text = "".join(line.removeprefix(indent) + "\n" for line in lines[start + 1 : end])
        lang = opening.group("lang").lower()
        found.append(Block(ALIASES.get(lang, lang), text, start + 1, kind))
        start = end + 1
    return found


def transcript(block: Block, page: Path, namespace: dict[str, Any]) -> None:
    """Run a block of ``>>>`` lines and compare what each shows with the page."""
    checker = doctest.OutputChecker()
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    for example in doctest.DocTestParser().get_examples(block.text):
        line = block.line + 1 + example.lineno
        try:
            code, expression = compile(example.source, str(page), "eval"), True
        except SyntaxError:  # a statement: it shows what it prints
            code, expression = compile(example.source, str(page), "exec"), False
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                value = eval(code, namespace) if expression else None
                if not expression:
                    exec(code, namespace)
            got = printed.getvalue() + ("" if value is None else repr(value) + "\n")
        except Exception as error:  # the page shows an error: its class and message are compared
            got = printed.getvalue() + f"{type(error).__name__}: {error}\n"
        if not checker.check_output(example.want, got, flags):
            raise AssertionError(
                f"{shown_path(page)}, line {line}: `>>> {example.source.strip()}` shows\n{got}\nthe page says\n{example.want}"
            )


def run_python(block: Block, page: Path, namespace: dict[str, Any]) -> None:
    if block.text.lstrip().startswith(">>>"):
        transcript(block, page, namespace)
        return
    # blank lines before the block keep the traceback's line numbers those of the page
    code = compile("\n" * block.line + block.text, str(page), "exec")
    exec(code, namespace)


def storeframes_commands(script: str) -> list[list[str]]:
    """The arguments of each ``storeframes`` command of a shell script (``storeframes`` or ``.venv/bin/storeframes``,
    after ``VAR=value`` words, before a redirection or the next command). A ``[ ]`` group, the usage notation
    of what may be left out, is left out."""
    found = []
    for line in script.replace("\\\n", " ").splitlines():
        words = shlex.shlex(line, posix=True, punctuation_chars=True)
        words.whitespace_split = True
        command: list[str] = []
        for word in [*words, ";"]:
            if word not in BETWEEN:
                command.append(word)
                continue
            while command and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", command[0]):
                command = command[1:]
            if command and command[0].rsplit("/", 1)[-1] == "storeframes":
                found.append(arguments(command[1:]))
            command = []
    return found


def arguments(words: list[str]) -> list[str]:
    """The words up to a redirection, with ``[ ]`` groups left out."""
    kept, depth = [], 0
    for word in words:
        if word[0] in "<>" or re.fullmatch(r"\d>.*", word):
            break
        depth += word.startswith("[")
        if depth == 0:
            kept.append(word)
        depth -= word.endswith("]")
    return kept


def check_shell(script: str) -> None:
    """``bash -n`` reads the script, and the command line's parser each ``storeframes`` command in it."""
    done = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise AssertionError(done.stderr)
    for args in storeframes_commands(script):
        said = io.StringIO()
        try:
            with contextlib.redirect_stderr(said), contextlib.redirect_stdout(io.StringIO()):
                cli_parser().parse_args(args)
        except SystemExit as stopped:
            if stopped.code != 0:
                raise AssertionError(
                    f"`storeframes {shlex.join(args)}`: {said.getvalue().strip().splitlines()[-1]}"
                ) from None


def check_commands_in(value: Any) -> None:
    """The commands of a parsed configuration: a GitHub Actions step's ``run`` (a shell script), and an
    assistant's server entry (``"command": ".../storeframes", "args": [...]``), read by the command line's parser."""
    if isinstance(value, dict):
        if isinstance(value.get("run"), str):
            check_shell(value["run"])
        command = value.get("command")
        if isinstance(command, str) and command.rsplit("/", 1)[-1] == "storeframes":
            check_shell(shlex.join(["storeframes", *map(str, value.get("args", []))]))
        for inner in value.values():
            check_commands_in(inner)
    elif isinstance(value, list):
        for inner in value:
            check_commands_in(inner)


def prompted(text: str) -> str:
    """The commands typed in a session shown: its lines after a ``$`` prompt."""
    return "".join(line[2:] + "\n" for line in text.splitlines() if line.startswith("$ "))


def check(block: Block, page: Path, namespace: dict[str, Any]) -> bool:
    """Run or parse one block; False for a block that is shown output, not code."""
    if block.lang == "python":
        run_python(block, page, namespace)
    elif block.lang == "toml":
        if "tracker" in tomllib.loads(block.text):  # a tracker's spec: its keys and values are read too
            parse_spec(block.text)
    elif block.lang == "json":
        check_commands_in(json.loads(block.text))
    elif block.lang == "yaml":
        check_commands_in(yaml.safe_load(block.text))
    elif block.lang == "ini":
        unit = configparser.ConfigParser(interpolation=None)
        unit.read_string(block.text)
        for section in unit.sections():
            for key in ("ExecStart", "ExecStartPre", "ExecStartPost"):
                if unit.has_option(section, key):
                    check_shell(unit.get(section, key))
    elif block.lang == "sql":
        import duckdb

        with duckdb.connect() as sql:
            sql.extract_statements(block.text)
    elif block.lang in SHELLS:
        check_shell(block.text if block.lang != "console" else prompted(block.text))
    elif block.lang in SHOWN:
        check_shell(prompted(block.text))  # a session shown: the commands typed after its $ prompts
        return False
    else:
        raise AssertionError(
            f"a block in {block.lang!r}: this test knows python, toml, json, yaml, ini, sql, "
            f"{', '.join(sorted(SHELLS))} and shown output ({', '.join(sorted(SHOWN - {''}))} or none)"
        )
    return True


@pytest.fixture
def reader_setup(tmp_path, monkeypatch, fresh_default):
    """What a reader has: an empty folder, no STOREFRAMES_* variable, the package's default client unset. The
    user's folders (the cache ``sf.Client()`` keeps answers in, the state of this machine's rate window) are
    folders of the test's own, on every system, so no block writes into the home of whoever runs the tests."""
    for name in [name for name in os.environ if name.startswith("STOREFRAMES_")]:
        monkeypatch.delenv(name)
    for kind in ("cache", "state", "data", "config", "log"):
        folder = tmp_path / "user" / kind
        monkeypatch.setattr(
            platformdirs, f"user_{kind}_dir", lambda appname=None, *_, _in=folder, **__: str(_in / (appname or ""))
        )
    monkeypatch.chdir(tmp_path)


def run_block(block: Block, page: Path, namespace: dict[str, Any], request: pytest.FixtureRequest) -> bool:
    """Run one block, with a token of the sandbox on loopback if it is marked so."""
    if block.mark != "with a token":
        return check(block, page, namespace)
    if block.lang != "python":
        raise AssertionError(f"{block.where(page)}: only a python block can be marked 'with a token'")
    server = request.getfixturevalue("server")  # tests/conftest.py: the sandbox on loopback, today 2026-11-20
    with pytest.MonkeyPatch.context() as env:
        env.setenv("STOREFRAMES_API_KEY", server.key)
        env.setenv("STOREFRAMES_BASE_URL", server.base_url)
        return check(block, page, namespace)


def close_dropped(namespace: dict[str, Any], made: list[Client]) -> None:
    """Close the clients a block made that no name holds any more (``client = ...`` again), as a reader's kernel
    would collect them, and remember the ones still held; the package's default client is fresh_default's."""
    held = [value for value in namespace.values() if isinstance(value, Client)]
    for client in made:
        if not any(client is value for value in held) and client is not defaults._client:
            client.close()
    made[:] = held


def at(error: BaseException, page: Path) -> str:
    """Where in the page a Python block failed: ``, at line 332 `sf.today()```, or nothing."""
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename == str(page)]
    return f", at line {frames[-1].lineno} `{(frames[-1].line or '').strip()}`" if frames else ""


def run_page(page: Path, request: pytest.FixtureRequest) -> dict[str, int]:
    """Run every block of ``page`` in order in one namespace; how many ran, were marked not run, were shown output."""
    namespace: dict[str, Any] = {"__name__": "__main__"}
    made: list[Client] = []
    counts = {"ran": 0, "marked not run": 0, "shown output": 0}
    try:
        for block in blocks(page):
            if block.mark == "not run":
                counts["marked not run"] += 1
                continue
            try:
                counts["ran" if run_block(block, page, namespace, request) else "shown output"] += 1
            except Exception as error:
                raise AssertionError(
                    f"{block.where(page)} did not run as written{at(error, page)}: {type(error).__name__}: {error}"
                ) from error
            finally:
                close_dropped(namespace, made)
    finally:
        namespace.clear()
        close_dropped(namespace, made)
    return counts


def needs_missing_extra(page: Path) -> str | None:
    """Why ``page`` cannot run here: a module it imports that needs an extra not installed (``tests/_extras.py``;
    CI's dagster stage runs docs/how-to/dagster.md)."""
    text = page.read_text(encoding="utf-8")
    for module, package in NEEDS.items():
        if re.search(rf"\b(from|import) {re.escape(module)}\b", text) and not importable(module):
            return f"{shown_path(page)} imports {module}, which needs {package} (not installed here)"
    return None


def test_a_page_that_imports_an_extras_module_says_what_it_needs(tmp_path, monkeypatch):
    page = page_of(tmp_path, "```python\nfrom storeframes.dagster import tracker_definitions\n```\n")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: None if name == "dagster" else object())
    assert (
        needs_missing_extra(page)
        == f"{shown_path(page)} imports storeframes.dagster, which needs dagster (not installed here)"
    )
    assert needs_missing_extra(page_of(tmp_path, "```python\nimport storeframes as sf\n```\n")) is None


@pytest.mark.parametrize("page", pages(), ids=lambda page: page.relative_to(ROOT).as_posix())
def test_every_block_runs(page, reader_setup, request, record_property):
    missing = needs_missing_extra(page)
    if missing:
        pytest.skip(missing)
    counts = run_page(page, request)
    record_property("docs blocks", (shown_path(page), counts))  # the run's summary lists them (tests/conftest.py)


def page_of(tmp_path: Path, text: str) -> Path:
    page = tmp_path / "page.md"
    page.write_text(text, encoding="utf-8")
    return page


def test_a_page_runs_like_a_notebook_and_counts_its_blocks(tmp_path, reader_setup, request):
    page = page_of(
        tmp_path,
        "# A page\n\n```python\nimport storeframes as sf\n\nsf.configure(sandbox=True)\ntotal = 1 + 1\n```\n\n"
        "<!-- block: not run (needs a real bucket) -->\n```python\nsf.scan('versions', cache_dir='s3://no-bucket')\n```\n\n"
        "```python\n>>> total + 1\n3\n>>> sf.today()\ndatetime.date(...)\n```\n\n```toml\n[tracker]\nname = 't'\ncache_dir = 'c'\n\n"
        "[[track]]\nendpoint = 'search'\nkeywords = ['x']\n```\n\n"
        "```text\nshown, never run\n```\n\n```bash\nSTOREFRAMES_OFFLINE=1 .venv/bin/storeframes cache clear [--older-than DAYS] \\\n"
        "  --endpoint metadata > cleared.txt && storeframes track digest t.toml --day 2026-11-20  # a comment\n```\n\n"
        '!!! note\n\n    In a note:\n\n    ```python\n    total += 1\n    ```\n\n=== "Sandbox"\n\n'
        "    <!-- block: not run (needs a real bucket) -->\n    ```python\n    1/0\n    ```\n\n"
        "```pycon\n>>> total\n3\n```\n\n```mermaid\ngraph LR\n```\n",
    )
    assert run_page(page, request) == {"ran": 6, "marked not run": 2, "shown output": 2}


BROKEN = [
    (
        "```python\nimport storeframes as sf\n\nsf.no_such_function()\n```\n",
        "page.md, line 3: the python block `import storeframes as sf` did not run as written, at line 6 `sf.no_such_function()`",
        "AttributeError",
    ),
    ("```python\n>>> 1 + 1\n3\n```\n", "page.md, line 4: `>>> 1 + 1` shows\n2", "the page says\n3"),
    (
        "```python\n>>> int('x')\nTypeError: ...\n```\n",
        "`>>> int('x')` shows\nValueError: invalid literal",
        "TypeError",
    ),
    ("```toml\n[tracker\n```\n", "page.md, line 3: the toml block `[tracker`", "TOMLDecodeError"),
    (
        '```toml\n[tracker]\nname = "t"\ncache_dir = "c"\n\n[[track]]\nendpoint = "search"\nkeyword = ["x"]\n```\n',
        "page.md, line 3: the toml block `[tracker]`",
        "keyword",
    ),
    ("```json\n{'a': 1}\n```\n", "page.md, line 3: the json block", "JSONDecodeError"),
    ("```bash\nstoreframes track run 'tracking.toml\n```\n", "page.md, line 3: the bash block", "unexpected EOF"),
    ("```bash\nstoreframes cache lss\n```\n", "page.md, line 3: the bash block", "invalid choice: 'lss'"),
    (
        "```bash\ncd /srv && storeframes track run t.toml --no-such 1\n```\n",
        "`storeframes track run t.toml --no-such 1`",
        "unrecognized arguments: --no-such 1",
    ),
    ("```console\n$ storeframes track digest t.toml --day 20-11-2026\n```\n", "the console block", "--day"),
    ("```console\n$ storeframes cache ls | \noutput\n```\n", "page.md, line 3: the console block", "syntax error"),
    (
        '```json\n{"mcpServers": {"sf": {"command": "/srv/.venv/bin/storeframes", "args": ["mcp", "--budjet", "5"]}}}\n```\n',
        "page.md, line 3: the json block",
        "unrecognized arguments: --budjet 5",
    ),
    (
        "```yaml\njobs:\n  track:\n    steps:\n      - run: storeframes track runn tracking.toml\n```\n",
        "page.md, line 3: the yaml block",
        "invalid choice: 'runn'",
    ),
    (
        "```ini\n[Service]\nExecStart=/srv/.venv/bin/storeframes track run\n```\n",
        "page.md, line 3: the ini block",
        "the following arguments are required",
    ),
    (
        "```text\n$ storeframes track digest t.toml --dya 2026-11-09; echo $?\n5\n```\n",
        "page.md, line 3: the text block",
        "track digest: error: one of the arguments --day --start is required",
    ),
    ("```sql\nSELEC 1;\n```\n", "page.md, line 3: the sql block `SELEC 1;`", "syntax error"),
    (
        "!!! note\n\n    A note.\n\n    ```python\n    sf.nothing\n    ```\n",
        "page.md, line 7: the python block `sf.nothing`",
        "NameError",
    ),
    (
        '=== "Python"\n    <!-- block: not run -->\n    ```python\n    1/0\n    ```\n',
        "page.md, line 4: unknown block mark",
        "a reason",
    ),
    ("```rust\nfn main() {}\n```\n", "page.md, line 3: the rust block", "this test knows python"),
    ("<!-- block: skip -->\n```python\n1/0\n```\n", "page.md, line 3: unknown block mark", "the marks are"),
    ("<!-- block: not run -->\n```python\n1/0\n```\n", "page.md, line 3: unknown block mark", "with a reason"),
    ("<!-- block: not run ( ) -->\n```python\n1/0\n```\n", "page.md, line 3: unknown block mark", "with a reason"),
    (
        "<!-- block: not run (needs a bucket) -->\n\n```python\n1/0\n```\n",
        "page.md, line 3: a block mark must",
        "just above a fence",
    ),
    (
        "<!-- block: not run (needs a bucket) -->\nSome text.\n",
        "page.md, line 3: a block mark must",
        "just above a fence",
    ),
]


@pytest.mark.parametrize(("text", "names", "says"), BROKEN, ids=[f"broken-{n}" for n in range(len(BROKEN))])
def test_a_block_that_does_not_run_fails_its_page_naming_it(tmp_path, reader_setup, request, text, names, says):
    page = page_of(tmp_path, "# A page\n\n" + text)
    with pytest.raises(AssertionError) as failed:
        run_page(page, request)
    assert names in str(failed.value)
    assert says in str(failed.value)


def test_a_block_with_a_token_reaches_the_sandbox_on_loopback_and_no_other_block_has_one(
    tmp_path, reader_setup, request
):
    page = page_of(
        tmp_path,
        "# A page\n\n<!-- block: with a token (the sandbox on loopback answers) -->\n```python\nimport storeframes as sf\n\n"
        "client = sf.Client()\nfound = client.metadata_frame(['3233849169'])\n```\n\n"
        "```python\nassert found.height == 1 and client.ledger['cost'].sum() > 0\nsf.Client().metadata_frame(['394079159'])\n```\n",
    )
    with pytest.raises(
        AssertionError, match=r"page.md, line 11: the python block `assert found.height == 1 .*no base URL"
    ):
        run_page(page, request)
    # the reader's cache and this machine's rate window were kept in the test's own folders, not a home's
    assert any((tmp_path / "user" / "cache" / "storeframes" / "answers").rglob("*.json.zst"))
    assert (tmp_path / "user" / "state" / "storeframes" / "window.sqlite3").is_file()
