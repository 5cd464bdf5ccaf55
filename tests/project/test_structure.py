"""The shape of the package: imports form no circle and run down the house's map (docs/explanation/architecture.md),
the wings keep their seams (stores, coordination backends, the charts and widgets), sizes stay small, the sandbox
loads only when used, flatteners do no I/O, and only the request path speaks HTTP."""

from __future__ import annotations

import ast
import functools
import io
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import storeframes

PACKAGE = Path(storeframes.__file__).parent


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def _tree(path: Path) -> ast.Module:
    """The module at ``path``, parsed once for every rule of the run."""
    return ast.parse(path.read_text())


@functools.cache
def _imports() -> dict[str, set[str]]:
    """Each module of the package and the package modules it imports, at any depth of its code (found once)."""
    modules = _sources()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(_tree(path)):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = package
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                base = f"{base}.{node.module}" if node.level and node.module else node.module or base
                targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name and target != "storeframes":
                    found.add(target)
        graph[name] = found
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_imports_form_no_circle_counting_imports_inside_functions():
    graph = _imports()
    assert {"storeframes.client", "storeframes.engine", "storeframes.wire", "storeframes.cache.stores"} <= set(graph)
    assert _cycle(graph) is None


def test_the_cycle_check_finds_a_circle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_nothing_but_the_sandbox_and_the_package_facade_imports_the_sandbox():
    importers = {
        name for name, targets in _imports().items() if any(t.startswith("storeframes.sandbox") for t in targets)
    }
    assert {i for i in importers if not i.startswith("storeframes.sandbox")} <= {
        "storeframes",
        "storeframes.defaults",  # configure(sandbox=True) and connect(), inside the functions
        "storeframes.cli.service_commands",  # sandbox serve, inside the function
        "storeframes.cli.demo",
        "storeframes.track.tracker",  # Tracker(sandbox=True): replays against the sandbox, inside the function
        "storeframes.conformance.report",  # the report names the matching sf.sandbox.Dialect, inside the function
    }
    assert "storeframes.client" not in importers and "storeframes.engine" not in importers


def test_import_storeframes_does_not_load_the_sandbox_until_it_is_used():
    code = (
        "import sys, storeframes as sf\n"
        "assert not [m for m in sys.modules if m.startswith('storeframes.sandbox')], 'loaded early'\n"
        "assert sf.sandbox.client is not None and 'storeframes.sandbox' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_import_storeframes_leaves_the_heavy_libraries_until_a_call_needs_them():
    """``import storeframes`` (every CLI command pays it) loads polars and the package, nothing it can defer."""
    deferred = (
        "pyarrow",
        "pandas",
        "numpy",
        "httpx",
        "httpx2",
        "tenacity",
        "tqdm",
        "filelock",
        "matplotlib",
        "ipywidgets",
    )
    deferred += ("dagster",)  # storeframes.dagster is imported on demand only
    deferred += ("apprise",)  # a tracker's notifications: imported when a spec names addresses
    deferred += ("mcp", "pydantic", "starlette", "uvicorn")  # storeframes mcp: imported when the server starts
    code = f"import sys, storeframes\nprint(','.join(m for m in {deferred!r} if m in sys.modules))\n"
    loaded = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.strip()
    assert loaded == ""


def test_only_the_alerts_notifications_reach_apprise():
    """Notifications have one sender (``track/delivery.py``: apprise, and httpx for JSON webhooks under a deadline;
    ``track/rules.py`` asks apprise to check an address and to keep its log quiet): no other module sends a
    message or reads apprise's log."""
    users = {
        _module(path) for path in _sources().values() if "apprise" in {n.split(".")[0] for n in _runtime_imports(path)}
    }
    assert users == {"storeframes.track.delivery", "storeframes.track.rules"}


def test_only_the_agent_server_speaks_the_model_context_protocol():
    """The MCP SDK is one module's (``agent/server.py``, which declares the tools; the command line only checks
    that the extra is installed): the tools themselves are plain methods, and send through the client alone."""
    users = {
        _module(path)
        for path in _sources().values()
        if {"mcp", "pydantic"} & {n.split(".")[0] for n in _runtime_imports(path)}
    }
    assert users == {"storeframes.agent.server", "storeframes.cli.mcp_commands"}
    graph = _imports()
    agent = {n for module, names in graph.items() if module.startswith("storeframes.agent") for n in names}
    assert "storeframes.client" in agent  # the tools send through the client ...
    assert not {n for n in agent if n.startswith(("storeframes.wire", "storeframes.coord", "storeframes.cache.stores"))}


def test_flatteners_import_nothing_that_does_io():
    allowed = {"storeframes.catalog", "storeframes.errors", "storeframes.schemas"}
    for name, targets in _imports().items():
        if name.startswith("storeframes.flatteners"):
            outside = {t for t in targets if not t.startswith("storeframes.flatteners")}
            assert outside <= allowed, name
    for path in (PACKAGE / "flatteners").glob("*.py"):
        text = path.read_text()
        assert not any(word in text for word in ("import httpx", "import os", "pathlib", "open(")), path.name


HTTP_LIBRARIES = ("httpx", "httpx2", "httpcore", "httpcore2")
HTTP_CLIENTS = (*HTTP_LIBRARIES, "urllib.request", "urllib3", "http.client", "requests", "aiohttp")


def _runtime_imports(path: Path) -> set[str]:
    """Every module ``path`` imports when it runs, at any depth of its code (a relative import by its whole
    name, ``storeframes.wire.http``); imports for type checkers aside."""
    tree = _tree(path)
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for stmt in node.body
        for inner in ast.walk(stmt)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
        elif isinstance(node, ast.ImportFrom) and node.level and path.is_relative_to(PACKAGE):
            base = _module(path) if path.name == "__init__.py" else _module(path).rpartition(".")[0]
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            base = f"{base}.{node.module}" if node.module else base
            found.update([base, *(f"{base}.{alias.name}" for alias in node.names)])
    return found


def test_only_the_seam_speaks_to_the_http_library():
    """One module (``wire/http.py``) imports httpx2 or httpx, type checkers' imports included; every other
    module takes the library's names from it, and no module sends with another HTTP client."""
    speakers = set()
    for path in _sources().values():
        tree = _tree(path)
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and not n.level and n.module}
        if any(name == lib or name.startswith(f"{lib}.") for name in names for lib in HTTP_CLIENTS):
            speakers.add(_module(path))
    assert speakers == {"storeframes.wire.http"}


def test_only_the_request_path_and_the_sandbox_send_http():
    senders = {_module(path) for path in _sources().values() if "storeframes.wire.http" in _runtime_imports(path)}
    assert senders == {
        "storeframes.wire.request",  # the one request path
        "storeframes.wire.safety",  # the token's auth flow on that path, and base URLs checked
        "storeframes.sandbox._client",  # the in-process sandbox's client
        "storeframes.sandbox.transport",  # and its transport
        "storeframes.track.delivery",  # a tracker's JSON webhooks, under a total deadline (never the service)
    }


def test_imports_for_type_checkers_are_not_counted_as_run_time_imports(tmp_path):
    module = tmp_path / "typed.py"
    module.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import httpx\ndef f():\n    import urllib.request\n"
    )
    assert _runtime_imports(module) == {"typing", "urllib.request"}


# -- the house's rules ---------------------------------------------------------------------------------------


@functools.cache
def _sources() -> dict[str, Path]:
    return {_module(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _importers(prefixes: tuple[str, ...]) -> set[str]:
    """The modules that import one of the modules named by ``prefixes`` (a module or a package)."""
    hits = set()
    for name, targets in _imports().items():
        if any(t == p or t.startswith(p + ".") for t in targets for p in prefixes):
            hits.add(name)
    return hits


def _within(name: str, *packages: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


BELOW_THE_CLIENT = (
    "storeframes.fetch",
    "storeframes.frames",
    "storeframes.wire",
    "storeframes.cache",
    "storeframes.coord",
)
"""The wings a call goes down through from the client: none climbs back into it."""


def test_nothing_below_the_client_imports_it():
    climbing = {name for name in _importers(("storeframes.client",)) if _within(name, *BELOW_THE_CLIENT)}
    assert climbing == set(), f"modules below the client that import it: {sorted(climbing)}"
    protocols = [  # nor reaches it through a protocol the client implements (the Caller, Source, Planner of before)
        f"{name}.{node.name}"
        for name, path in _sources().items()
        if _within(name, *BELOW_THE_CLIENT)
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.ClassDef) and node.name in ("Caller", "Source", "Planner")
    ]
    assert protocols == []


def test_the_clients_public_methods_carry_their_decorator_where_they_are_defined():
    tree = _tree(PACKAGE / "client.py")
    client = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Client")
    decorated = {
        node.name
        for node in client.body
        if isinstance(node, ast.FunctionDef) and any(ast.unparse(d) == "user_facing" for d in node.decorator_list)
    }
    assert {"__init__", "estimate", "spend", "plan", "plan_many", "get", "get_many"} <= decorated
    loops = [ast.unparse(n)[:60] for n in tree.body if isinstance(n, ast.For)]  # no decorating after the class
    assert loops == []


def test_the_engine_planning_catalog_and_answers_never_reach_the_cache():
    graph = _imports()
    for start in ("storeframes.engine", "storeframes.planning", "storeframes.catalog", "storeframes.answers"):
        seen, todo = set(), [m for m in graph if _within(m, start)]
        assert todo, start
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            todo.extend(graph.get(name, ()))
        assert not [m for m in seen if _within(m, "storeframes.cache")], start


def test_nothing_below_the_command_line_imports_the_charts_or_the_widgets():
    """What a person looks at (``plots/``, ``widgets/``) stands above the rest: the command line's demo uses it."""
    importers = _importers(("storeframes.plots", "storeframes.widgets"))
    assert importers, "the rule names packages that exist"
    wings = ("storeframes.plots", "storeframes.widgets", "storeframes.cli")
    assert {n for n in importers if not _within(n, *wings)} == set()


def test_nothing_outside_the_cache_imports_a_concrete_store():
    concrete = ("storeframes.cache.stores.local", "storeframes.cache.stores.memory", "storeframes.cache.stores.bucket")
    outside = {n for n in _importers(concrete) if not _within(n, "storeframes.cache")}
    assert outside == set(), outside


def test_nothing_outside_coord_imports_a_coordination_backend():
    backends = ("storeframes.coord.machine", "storeframes.coord.redis", "storeframes.coord.bucket_leases")
    assert set(_sources()) >= set(backends)
    outside = {n for n in _importers(backends) if not _within(n, "storeframes.coord")}
    assert outside == set(), outside


def _only_reexports(path: Path) -> bool:
    """Whether a module's body is imports alone (with a docstring, ``__all__``, imports for type checkers)."""
    for node in _tree(path).body:
        docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        listing = isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "__all__"
        typing_only = isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        if not (docstring or listing or typing_only or isinstance(node, (ast.Import, ast.ImportFrom))):
            return False
    return True


def test_no_module_only_re_exports_but_a_wings_front():
    """A module holds code; only a wing's ``__init__.py`` gathers its parts' names (no shim for another path)."""
    shims = {n for n, p in _sources().items() if p.name != "__init__.py" and _only_reexports(p)}
    assert shims == set()


def test_the_re_export_check_finds_a_shim(tmp_path):
    shim = tmp_path / "shim.py"
    shim.write_text('"""Kept for earlier imports."""\nfrom .home import thing\n\n__all__ = ["thing"]\n')
    code = tmp_path / "code.py"
    code.write_text('"""A module."""\nfrom .home import thing\n\n\ndef use():\n    return thing\n')
    assert _only_reexports(shim) and not _only_reexports(code)


def _wing(module: str) -> str:
    """A wing (``storeframes.cache``) for a module inside one; a module of the top level is its own."""
    return ".".join(module.split(".")[:2])


def from_imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module imported from, names) of each ``from ... import`` of the package module at ``path``, a relative
    one made absolute (parsed once, as every rule here)."""
    name = _module(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            source = (f"{base}.{node.module}" if node.module else base) if node.level else node.module or ""
            found.append((source, [alias.name for alias in node.names]))
    return found


def _private_imports() -> set[str]:
    """``importer -> module.name`` for each private name imported from another wing or top-level module."""
    crossings = set()
    for name, path in _sources().items():
        for source, names in from_imports(path):
            if not source.startswith("storeframes"):
                continue
            for imported in names:
                private = imported.startswith("_") and not imported.startswith("__")
                if private and _wing(source) != _wing(name):
                    crossings.add(f"{name} -> {source}.{imported}")
    return crossings


PRIVATE_CROSSINGS = {
    # the conformance kit reads an answer as the request path does (its envelope's parts)
    "storeframes.conformance.reading -> storeframes.wire.envelope._credits",
    "storeframes.conformance.reading -> storeframes.wire.envelope._error_class",
    "storeframes.conformance.reading -> storeframes.wire.envelope._error_details",
    "storeframes.conformance.reading -> storeframes.wire.envelope._request_meta",
}
"""Private names one wing still takes from another, each to be given a public name where it lives."""


def test_no_private_name_is_imported_across_wings_but_the_ones_listed():
    assert _private_imports() - PRIVATE_CROSSINGS == set()


MOST_LINES = 600
MOST_CLASS_LINES = 500
MOST_CLIENT_LINES = 400
LARGER_ALLOWED = {
    "storeframes.sandbox.world": "the sandbox world's data",
    "storeframes.cache.stores.bucket": "the settings of three clouds",
}
FMT_SKIP_ALLOWED = {"storeframes.sandbox.world": "the sandbox world's declared data tables, a row a line"}
SPLIT = "split it by concern into its wing; do not pack lines"


def _file(module: str) -> str:
    """The file of ``module``, as the package names it: ``storeframes/track/tracker.py``."""
    return _sources()[module].relative_to(PACKAGE.parent).as_posix() if module in _sources() else module


def _texts() -> dict[str, str]:
    return {name: path.read_text() for name, path in _sources().items()}


def long_modules(texts: dict[str, str], files: dict[str, str] | None = None) -> list[str]:
    """An alarm a module over :data:`MOST_LINES` (but the larger ones allowed), naming it, its size and the limit."""
    files = files or {}
    return [
        f"{files.get(name, name)} is {lines} lines, over the limit of {MOST_LINES}: {SPLIT}"
        for name, text in sorted(texts.items())
        if (lines := len(text.splitlines())) > MOST_LINES and name not in LARGER_ALLOWED
    ]


def long_classes(texts: dict[str, str], files: dict[str, str] | None = None) -> list[str]:
    """An alarm a class over :data:`MOST_CLASS_LINES` (the ``Client`` over :data:`MOST_CLIENT_LINES`)."""
    files = files or {}
    said = []
    for name, text in sorted(texts.items()):
        if name in LARGER_ALLOWED:
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                lines = node.end_lineno - node.lineno + 1
                limit = MOST_CLIENT_LINES if f"{name}.{node.name}" == "storeframes.client.Client" else MOST_CLASS_LINES
                if lines > limit:
                    where = f"{files.get(name, name)}:{node.lineno}"
                    said.append(f"class {node.name} ({where}) is {lines} lines, over the limit of {limit}: {SPLIT}")
    return said


def format_skips(texts: dict[str, str], files: dict[str, str] | None = None) -> list[str]:
    """Each ``# fmt: skip`` (or ``fmt: off``) comment outside the declared data tables, as ``file:line``: a line
    the formatter may not touch is a line packed to meet the size rules."""
    files = files or {}
    said = []
    for name, text in sorted(texts.items()):
        if name in FMT_SKIP_ALLOWED:
            continue
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT and re.search(r"fmt:\s*(skip|off)", token.string):
                said.append(f"{files.get(name, name)}:{token.start[0]}: {token.string.strip()}")
    return said


CUT_ENDINGS = frozenset({"a", "an", "the", "its", "their", "of", "and", "or"})
"""Words no sentence ends on: a comment after code that ends on one was cut short to keep the line short."""


def cut_comments(texts: dict[str, str], files: dict[str, str] | None = None) -> list[str]:
    """Each comment after code cut short (ending on an article, ``of``, ``and``, ``or``, or with a parenthesis left
    open) and carried on the next line, as ``file:line``: a comment too long for its line goes whole above it."""
    files = files or {}
    said = []
    for name, text in sorted(texts.items()):
        lines = text.splitlines()
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            row, column = token.start
            if token.type != tokenize.COMMENT or not lines[row - 1][:column].strip():
                continue
            comment = token.string.lstrip("#").strip()
            last = re.findall(r"[A-Za-z']+$", comment)
            if (last and last[0].lower() in CUT_ENDINGS) or comment.count("(") > comment.count(")"):
                said.append(f"{files.get(name, name)}:{row}: {token.string.strip()}")
    return said


def test_no_module_is_over_600_lines_but_the_sandbox_world_and_the_bucket_store():
    texts = _texts()
    alarms = long_modules(texts, {name: _file(name) for name in texts})
    assert alarms == [], "\n".join(alarms)


def test_no_class_is_over_500_lines_and_the_client_is_at_most_400():
    texts = _texts()
    alarms = long_classes(texts, {name: _file(name) for name in texts})
    assert alarms == [], "\n".join(alarms)


def test_the_formatter_formats_every_line_but_the_sandbox_worlds_data_tables():
    texts = _texts()
    skips = format_skips(texts, {name: _file(name) for name in texts})
    assert skips == [], "\n".join(skips) + (
        "\nwrite each line so the formatter's output reads well (name the parts of a long expression), and split "
        "a module that grows too long by concern"
    )


def test_no_comment_after_code_is_cut_short_and_carried_on_the_next_line():
    texts = _texts()
    cut = cut_comments(texts, {name: _file(name) for name in texts})
    assert cut == [], "\n".join(cut) + "\nwrite a comment too long for its line whole, on the lines above the code"


def test_the_cut_comment_check_finds_a_comment_cut_short():
    text = (
        "x = 1  # the days of the\n"
        "y = 2  # month, counted (by the\n"
        "z = 3  # ledger)\n"
        "# a comment of its own line may wrap at the\n"
        "w = 4  # whole: it ends on a word that ends a sentence\n"
        's = "# the"\n'
    )
    assert cut_comments({"storeframes.cut": text}, {"storeframes.cut": "storeframes/cut.py"}) == [
        "storeframes/cut.py:1: # the days of the",
        "storeframes/cut.py:2: # month, counted (by the",
    ]


def test_the_size_alarms_name_what_to_split_its_size_and_the_limit():
    long = "x = 1\n" * 601
    assert long_modules({"storeframes.big": long}, {"storeframes.big": "storeframes/big.py"}) == [
        "storeframes/big.py is 601 lines, over the limit of 600: split it by concern into its wing; do not pack lines"
    ]
    assert long_modules({"storeframes.sandbox.world": long, "storeframes.small": "x = 1\n" * 600}) == []
    wide = "\n\nclass Wide:\n" + "    x = 1\n" * 500
    assert long_classes({"storeframes.w": wide}, {"storeframes.w": "storeframes/w.py"}) == [
        "class Wide (storeframes/w.py:3) is 501 lines, over the limit of 500: split it by concern into its wing; "
        "do not pack lines"
    ]
    client = "class Client:\n" + "    x = 1\n" * 400
    assert long_classes({"storeframes.client": client}) == [
        "class Client (storeframes.client:1) is 401 lines, over the limit of 400: split it by concern into its wing; "
        "do not pack lines"
    ]


def test_the_format_skip_check_names_the_file_and_the_line():
    text = 'x = 1\ny = [1,2]  # fmt: skip\ns = "# fmt: skip in a text is no comment"\n# fmt: off\n'
    files = {"storeframes.packed": "storeframes/packed.py"}
    assert format_skips({"storeframes.packed": text}, files) == [
        "storeframes/packed.py:2: # fmt: skip",
        "storeframes/packed.py:4: # fmt: off",
    ]
    assert format_skips({"storeframes.sandbox.world": text}) == []


# -- the house's map (docs/explanation/architecture.md) -----------------------------------------------------


def _map() -> list[list[str]]:
    """The map of docs/explanation/architecture.md ("How it is built"): a layer a line, top to bottom, each the
    paths it names."""
    page = Path(__file__).resolve().parents[2] / "docs" / "explanation" / "architecture.md"  # the sdist carries it
    section = page.read_text().split("# How it is built", 1)[1]
    block = section.split("```", 2)[1]
    layers = []
    for line in block.strip("\n").splitlines():
        names = line.split("  ")[0]
        paths = [p.strip() for p in names.replace("|", ",").split(",") if p.strip()]
        layers.append(paths)
    return layers


def _layer_of(module: str, layers: list[list[str]]) -> int | None:
    """The line of the map naming ``module``'s file or the closest folder holding it."""
    rel = module.removeprefix("storeframes").lstrip(".").replace(".", "/")
    best: tuple[int, int] | None = None
    for index, paths in enumerate(layers):
        for path in paths:
            if path.endswith("/"):
                folder = path.rstrip("/")
                inside = rel == folder or rel.startswith(folder + "/")
                if inside and (best is None or len(folder) > best[1]):
                    best = (index, len(folder))
            elif path.endswith(".py") and (rel + ".py" == path or rel + "/__init__.py" == path):
                return index
    return best[0] if best else None


def test_the_readme_map_names_every_module():
    layers = _map()
    missing = [m for m in _sources() if m != "storeframes" and _layer_of(m, layers) is None]
    assert missing == [], f"modules the house's map (docs/explanation/architecture.md) does not name: {missing}"


def test_every_import_runs_down_the_readme_map():
    layers = _map()
    upward = []
    for name, targets in _imports().items():
        here = _layer_of(name, layers) if name != "storeframes" else -1
        for target in targets:
            there = _layer_of(target, layers)
            if here is not None and there is not None and there < here:
                upward.append(f"{name} (line {here + 1}) -> {target} (line {there + 1})")
    assert upward == [], "imports that run up the house's map (docs/explanation/architecture.md):\n" + "\n".join(upward)


def test_the_map_check_finds_an_import_that_runs_up():
    layers = [["cli.py"], ["client.py"], ["cache/"]]
    assert _layer_of("storeframes.cache.stores.local", layers) == 2
    assert _layer_of("storeframes.client", layers) == 1 and _layer_of("storeframes.wire", layers) is None
