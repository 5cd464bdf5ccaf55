"""The shape of the package: imports form no circle and run down the README's map, the wings keep their
seams (stores, coordination backends, the notebook), sizes stay small, the sandbox loads only when used,
flatteners do no I/O, and only the request path speaks HTTP."""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
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
    assert {"storeframes.client", "storeframes.engine", "storeframes.wire", "storeframes.store"} <= set(graph)
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
        "storeframes.notebook.demo",
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
    deferred = ("pyarrow", "pandas", "numpy", "httpx", "tenacity", "tqdm", "filelock", "matplotlib", "ipywidgets")
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


HTTP_CLIENTS = ("httpx", "urllib.request", "urllib3", "http.client", "requests", "aiohttp")


def _runtime_imports(path: Path) -> set[str]:
    """Every module ``path`` imports when it runs, at any depth of its code; imports for type checkers aside."""
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
    return found


def test_only_the_request_path_and_the_sandbox_send_http():
    senders = {
        _module(path)
        for path in _sources().values()
        if any(name == lib or name.startswith(f"{lib}.") for name in _runtime_imports(path) for lib in HTTP_CLIENTS)
    }
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


EARLIER_PATHS = (
    "storeframes.store",
    "storeframes.objectstore",
    "storeframes.coordination",
    "storeframes.window",
    "storeframes.leases",
    "storeframes.plots",
    "storeframes.widgets",
    "storeframes.cards",
    "storeframes.demo",
)
"""Modules kept for earlier imports: re-exports of the names' new homes, and nothing else."""


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


def test_nothing_below_the_command_line_and_the_package_imports_the_notebook_wing():
    importers = _importers(("storeframes.notebook",))
    allowed = {"storeframes", *EARLIER_PATHS}
    assert {
        n for n in importers if n not in allowed and not _within(n, "storeframes.notebook", "storeframes.cli")
    } == set()


def test_nothing_outside_the_cache_imports_a_concrete_store():
    concrete = ("storeframes.cache.stores.local", "storeframes.cache.stores.memory", "storeframes.cache.stores.bucket")
    outside = {n for n in _importers(concrete) if not _within(n, "storeframes.cache")}
    assert outside <= set(EARLIER_PATHS), outside


def test_nothing_outside_coord_imports_a_coordination_backend():
    backends = ("storeframes.coord.machine", "storeframes.coord.redis", "storeframes.coord.bucket")
    assert set(_sources()) >= set(backends)
    outside = {n for n in _importers(backends) if not _within(n, "storeframes.coord")}
    assert outside <= set(EARLIER_PATHS), outside


def test_no_module_of_the_package_imports_an_earlier_path():
    importers = _importers(EARLIER_PATHS) - {"storeframes"} - set(EARLIER_PATHS)
    assert importers == set()


def test_an_earlier_path_holds_imports_alone_and_gives_every_name_it_lists():
    import importlib

    for name in EARLIER_PATHS:
        tree = _tree(_sources()[name])
        for node in tree.body:
            docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            listing = isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "__all__"
            assert docstring or listing or isinstance(node, (ast.Import, ast.ImportFrom)), (name, ast.unparse(node))
        module = importlib.import_module(name)
        assert module.__all__ and all(hasattr(module, listed) for listed in module.__all__), name


MOST_LINES = 600
LARGER_ALLOWED = {
    "storeframes.sandbox.world": "the sandbox world's data",
    "storeframes.cache.stores.bucket": "the settings of three clouds",
}


def test_no_module_is_over_600_lines_but_the_sandbox_world_and_the_bucket_store():
    large = {n: len(p.read_text().splitlines()) for n, p in _sources().items()}
    assert {n: lines for n, lines in large.items() if lines > MOST_LINES and n not in LARGER_ALLOWED} == {}


def test_no_class_is_over_500_lines_and_the_client_is_at_most_400():
    sizes: dict[str, int] = {}
    for name, path in _sources().items():
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                sizes[f"{name}.{node.name}"] = node.end_lineno - node.lineno + 1
    larger = {n: s for n, s in sizes.items() if s > 500 and n.rpartition(".")[0] not in LARGER_ALLOWED}
    assert larger == {}
    assert sizes["storeframes.client.Client"] <= 400


# -- the README's map ---------------------------------------------------------------------------------------


def _map() -> list[list[str]]:
    """The README's "How it is built" map: a layer a line, top to bottom, each the paths it names."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()  # the sdist carries it too
    section = readme.split("## How it is built", 1)[1]
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
    assert missing == [], f"modules the README's map does not name: {missing}"


def test_every_import_runs_down_the_readme_map():
    layers = _map()
    upward = []
    for name, targets in _imports().items():
        here = _layer_of(name, layers) if name != "storeframes" else -1
        for target in targets:
            there = _layer_of(target, layers)
            if here is not None and there is not None and there < here:
                upward.append(f"{name} (line {here + 1}) -> {target} (line {there + 1})")
    assert upward == [], "imports that run up the README's map:\n" + "\n".join(upward)


def test_the_map_check_finds_an_import_that_runs_up():
    layers = [["cli.py"], ["client.py"], ["cache/"]]
    assert _layer_of("storeframes.cache.stores.local", layers) == 2
    assert _layer_of("storeframes.client", layers) == 1 and _layer_of("storeframes.wire", layers) is None
