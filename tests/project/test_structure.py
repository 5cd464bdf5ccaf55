"""The shape of the package: imports form no circle, the sandbox loads only when used,
flatteners do no I/O, and only the request path speaks HTTP."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import storeframes

PACKAGE = Path(storeframes.__file__).parent


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[str]]:
    """Each module of the package and the package modules it imports, at any depth of its code."""
    modules = {_module(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
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
    code = f"import sys, storeframes\nprint(','.join(m for m in {deferred!r} if m in sys.modules))\n"
    loaded = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.strip()
    assert loaded == ""


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
    tree = ast.parse(path.read_text())
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
        for path in PACKAGE.rglob("*.py")
        if any(name == lib or name.startswith(f"{lib}.") for name in _runtime_imports(path) for lib in HTTP_CLIENTS)
    }
    assert senders == {
        "storeframes.wire.request",  # the one request path
        "storeframes.wire.safety",  # the token's auth flow on that path, and base URLs checked
        "storeframes.sandbox._client",  # the in-process sandbox's client
        "storeframes.sandbox.transport",  # and its transport
    }


def test_imports_for_type_checkers_are_not_counted_as_run_time_imports(tmp_path):
    module = tmp_path / "typed.py"
    module.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import httpx\ndef f():\n    import urllib.request\n"
    )
    assert _runtime_imports(module) == {"typing", "urllib.request"}
