"""The docs site: its generated reference holds every public name, submodule member, command and option; its
build fails on a broken link; and the facts the generators declare (environment variables, exit codes, the
tracker spec's keys) are held to the code."""

from __future__ import annotations

import ast
import doctest
import functools
import importlib
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import storeframes

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PACKAGE = Path(storeframes.__file__).resolve().parent

if not (DOCS / "_gen").is_dir():  # an installed wheel without the source tree's docs/
    pytest.skip("docs/_gen/ is not in this tree", allow_module_level=True)
sys.path.insert(0, str(DOCS))

from _gen import api, cli, environment, exit_codes, reference, tracker_spec  # noqa: E402


def _build_module():
    yaml = pytest.importorskip("yaml", reason="PyYAML (the docs group) reads mkdocs.yml")
    assert yaml
    spec = importlib.util.spec_from_file_location("docs_build", DOCS / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _zensical_or_skip() -> None:
    build = _build_module()
    try:
        build.zensical()
    except build.ToolMissing:
        pytest.skip("zensical (the docs group) is not installed here")


# ---- the generators, without a build


@pytest.mark.parametrize("name", ["markdown", "docstrings", "api", "cli", "endpoints", "frames", "errors"])
def test_generator_examples(name):
    module = importlib.import_module(f"_gen.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0, f"{result.failed} of {result.attempted} failed in {name}"


def test_build_command_examples():
    result = doctest.testmod(_build_module(), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted >= 3


def test_a_doctest_run_becomes_a_code_block_and_a_role_a_code_span():
    from _gen.docstrings import markdown_of

    prompt = ">" * 3
    text = f"Counts, see :class:`~storeframes.Cache`.\n\n{prompt} sf.today()  # doctest: +SKIP\ndatetime.date(2026, 11, 20)"
    assert markdown_of(text).splitlines() == [
        "Counts, see `Cache`.",
        "",
        "```pycon",
        f"{prompt} sf.today()",
        "datetime.date(2026, 11, 20)",
        "```",
    ]


_VARIABLE = re.compile(r"(STOREFRAMES|AWS|GOOGLE|AZURE|AZURITE)_[A-Z0-9_]+")


def _read_variables(source: str) -> set[str]:
    """The environment variables a module's source names: a whole string that is such a name, or the name given to
    ``os.environ`` / ``os.getenv`` as a string."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        given: ast.AST | None = node
        if isinstance(node, ast.Call) and ast.unparse(node.func) in ("os.environ.get", "os.getenv", "environ.get"):
            given = node.args[0] if node.args else None
        elif isinstance(node, ast.Subscript) and ast.unparse(node.value) == "os.environ":
            given = node.slice
        elif not (isinstance(node, ast.Constant) and isinstance(node.value, str) and _VARIABLE.fullmatch(node.value)):
            continue
        if isinstance(given, ast.Constant) and isinstance(given.value, str):
            found.add(given.value)
    return found


@functools.cache
def _package_variables() -> set[str]:
    return {name for path in PACKAGE.rglob("*.py") for name in _read_variables(path.read_text(encoding="utf-8"))}


def test_the_variable_reader_finds_each_form():
    source = 'import os\nA = "STOREFRAMES_X"\nos.environ.get("HTTPS_PROXY")\nos.environ["NO_PROXY"]\nos.getenv("Y_Z")\n'
    assert _read_variables(source) == {"STOREFRAMES_X", "HTTPS_PROXY", "NO_PROXY", "Y_Z"}


def test_every_environment_variable_the_package_reads_is_on_the_page():
    read = _package_variables()
    assert "STOREFRAMES_API_KEY" in read and "AWS_ENDPOINT_URL_S3" in read  # the reader sees the package
    assert sorted(read - environment.declared()) == []


def test_every_storeframes_variable_on_the_page_is_read():
    declared = {name for name, _ in environment.OWN} | {name for name, _ in environment.CLOUD}
    assert sorted(declared - _package_variables()) == []


def _returned_codes(path: Path) -> set[int]:
    """The exit statuses a command module returns as numbers: ``return 2``, ``return 1 if failed else 0``,
    ``return UNREACHABLE`` (a module constant)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    constants = {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, int)
        for target in node.targets
        if isinstance(target, ast.Name)
    }

    def codes(value: ast.AST | None) -> set[int]:
        if isinstance(value, ast.Constant) and isinstance(value.value, int) and not isinstance(value.value, bool):
            return {value.value}
        if isinstance(value, ast.Name) and value.id in constants:
            return {constants[value.id]}
        if isinstance(value, ast.IfExp):
            return codes(value.body) | codes(value.orelse)
        return set()

    return {code for node in ast.walk(tree) if isinstance(node, ast.Return) for code in codes(node.value)}


def _result_codes() -> set[int]:
    """The codes the tracker's results give ``track`` (``return result.exit_code``): their ``exit_code`` properties."""
    from storeframes.track import EXIT_CODES

    found = set(EXIT_CODES.values())
    for path in (PACKAGE / "track").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.name == "exit_code":
                found |= {c for r in ast.walk(node) if isinstance(r, ast.Return) for c in _codes_of(r.value)}
    return found


def _codes_of(value: ast.AST | None) -> set[int]:
    if isinstance(value, ast.Constant) and isinstance(value.value, int):
        return {value.value}
    if isinstance(value, ast.IfExp):
        return _codes_of(value.body) | _codes_of(value.orelse)
    return set()


def test_the_code_reader_finds_each_form(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("GONE = 7\ndef f(x):\n    if x:\n        return 2\n    return GONE if x else 0\n")
    assert _returned_codes(module) == {0, 2, 7}


@pytest.mark.parametrize("module", sorted(exit_codes.CODES))
def test_every_exit_status_a_command_returns_is_explained(module):
    returned = _returned_codes(PACKAGE / "cli" / f"{module}.py")
    if module == "track_commands":
        returned |= _result_codes()
    declared = {code for _, code, _ in exit_codes.CODES[module]}
    assert returned == declared, (
        f"storeframes/cli/{module}.py returns {sorted(returned)}, the page says {sorted(declared)}"
    )


def test_every_command_module_has_its_exit_codes():
    modules = {p.stem for p in (PACKAGE / "cli").glob("*_commands.py")}
    assert modules == set(exit_codes.CODES)


def test_a_tracker_key_without_a_meaning_stops_the_build(monkeypatch):
    assert dict(tracker_spec.keys())["[notify]"] == ["urls", "digest", "timeout"]
    monkeypatch.setitem(tracker_spec.MEANINGS, "[notify]", {"urls": "x", "digest": "y"})
    with pytest.raises(KeyError, match=r"\[notify\] timeout"):
        tracker_spec.keys()


def test_the_nav_names_every_reference_page():
    build = _build_module()
    nav = build.yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    named = {page.removeprefix("reference/") for page in build.nav_pages(nav) if page.startswith("reference/")}
    assert named == set(reference.pages())


def test_the_nav_holds_the_layout_in_order():
    build = _build_module()
    nav = build.yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    sections = [next(iter(item)) for item in nav]
    assert sections == ["Home", "Start", "Guides", "How-to", "Reference", "Explanation", "Examples", "Changelog"]
    pages = build.nav_pages(nav)
    assert pages[:2] == ["index.md", "start/install.md"] and pages[-1] == "changelog.md"
    assert len(pages) == len(set(pages))


def test_a_page_left_out_of_the_nav_is_named(tmp_path):
    build = _build_module()
    (tmp_path / "a.md").write_text("# A\n")
    (tmp_path / "b.md").write_text("# B\n")
    with pytest.raises(build.BuildError, match=r"in no section of mkdocs.yml's nav: b\.md"):
        build.check_nav(["a.md"], tmp_path)
    with pytest.raises(build.BuildError, match=r"pages that do not exist: c\.md"):
        build.check_nav(["a.md", "b.md", "c.md"], tmp_path)


# ---- the site, built (zensical in a child process: the "processes" tier, one build for the module)


def _docs_copy(where: Path) -> Path:
    """A copy of docs/ to build. The hand-written pages of the navigation that this tree lacks get a heading
    only, here: this test is about the reference (the docs stage of CI builds the tree itself, and fails on a
    missing page)."""
    build = _build_module()
    docs = where / "docs"
    shutil.copytree(DOCS, docs, ignore=shutil.ignore_patterns("reference", "examples", "changelog.md", "__pycache__"))
    nav = build.yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    for page in build.nav_pages(nav):
        path = docs / page
        generated = page.startswith(("reference/", "examples/")) or page == "changelog.md"
        if not generated and not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"# {page}\n")
    for path in docs.rglob("*.md"):  # a page this tree keeps where the layout has moved it
        relative = path.relative_to(docs).as_posix()
        if relative not in build.nav_pages(nav) and not relative.startswith(("_gen/", "reference/", "examples/")):
            path.unlink()
    return docs


def _run_build(docs: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(DOCS / "build.py"), "--docs", str(docs), "--site", str(site), "--skip-examples"],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site built once. Removed after: its pages show the sandbox's key (``storeframes.sandbox.SANDBOX_KEY``),
    which the session's check for tokens written to disk would count as one."""
    _zensical_or_skip()
    where = tmp_path_factory.mktemp("docs-site")
    try:
        done = _run_build(_docs_copy(where), where / "site")
        assert done.returncode == 0, done.stderr
        assert re.search(r"site: \d+ pages in [\d.]+ s", done.stdout), done.stdout
        yield where / "site"
    finally:
        shutil.rmtree(where, ignore_errors=True)


def _ids(html: Path) -> set[str]:
    return set(re.findall(r'id="([^"]+)"', html.read_text(encoding="utf-8")))


@pytest.mark.processes
def test_every_public_name_is_in_the_reference(site):
    ids = _ids(site / "reference" / "api" / "index.html")
    text = (site / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    modules = [n for n in storeframes.__all__ if isinstance(getattr(storeframes, n), type(storeframes))]
    names = [n for n in storeframes.__all__ if n not in modules and n != "__version__"]
    assert len(names) > 45  # the errors and warnings have their page: storeframes.errors
    missing = [n for n in names if api.target(n) not in ids]
    assert missing == []
    assert all(f'href="./{m}/"' in text for m in modules), "each submodule of __all__ is linked to its page"
    assert storeframes.__version__ in text


@pytest.mark.processes
@pytest.mark.parametrize("module", api.MODULES)
def test_every_member_of_a_public_submodule_is_in_its_page(site, module):
    try:
        package = importlib.import_module(f"storeframes.{module}")
    except ImportError as exc:
        pytest.skip(f"storeframes.{module} needs an extra not installed here: {exc}")
    ids = _ids(site / "reference" / "api" / module / "index.html")
    hidden = set(api.shadowed(module))
    expected = {
        name: f"storeframes.{module}.{name}.{name}" if name in hidden else f"storeframes.{module}.{name}"
        for name in package.__all__
    }
    assert [name for name, anchor in expected.items() if anchor not in ids] == []


def _sections(html: str) -> dict[str, str]:
    """The CLI page's text by command heading id."""
    parts = re.split(r'<h2 id="(storeframes[a-z-]*)"', html)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


@pytest.mark.processes
def test_every_command_and_option_is_in_the_reference(site):
    sections = _sections((site / "reference" / "cli" / "index.html").read_text(encoding="utf-8"))
    commands = cli.commands()
    assert len(commands) > 20
    for words, parser in commands:
        section = sections.get(cli.anchor(words))
        assert section is not None, f"no section for {' '.join(words)}"
        for action in cli.options(parser):
            for flag in action.option_strings:
                assert f"<code>{flag}" in section, f"{' '.join(words)}: {flag} is not in its section"


@pytest.mark.processes
def test_the_reference_pages_hold_the_facts(site):
    def text(page: str) -> str:
        return (site / "reference" / page / "index.html").read_text(encoding="utf-8")

    assert "STOREFRAMES_API_KEY" in text("environment") and "SSL_CERT_FILE" in text("environment")
    assert "NotEnoughCreditsError" in text("errors") and "UnknownFieldWarning" in text("errors")
    assert "/apps/metadata.json" in text("endpoints") and "1 + 10 per app" in text("endpoints")
    assert "budget_per_month" in text("tracker-spec") and "new_advertiser" in text("tracker-spec")
    assert "release_date" in text("frames") and "datetime[us, UTC]" in text("frames")
    assert "no digest of that day is kept" in text("exit-codes")
    assert "&gt;&gt;&gt;" in text("api/interop") and "<blockquote>" not in text("api/interop")
    # the frame functions, made at import, with the signature and docstring they have then (not an assignment)
    assert "_on_default" not in text("api") and "Output schema (metadata: one row per app)" in text("api")


@pytest.mark.processes
def test_a_broken_link_fails_the_build_naming_the_page(site, tmp_path):
    docs = _docs_copy(tmp_path)
    index = docs / "index.md"
    index.write_text(index.read_text() + "\nSee [the guide](guides/no-such-page.md).\n")
    try:
        done = _run_build(docs, tmp_path / "site")
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)  # as the site fixture: no sandbox key left on disk
    assert done.returncode == 1, done.stdout
    assert "index.md" in done.stderr and "page does not exist" in done.stderr
    assert "\x1b[" not in done.stderr and "Traceback" not in done.stderr
