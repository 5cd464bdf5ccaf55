"""The API pages: ``reference/api/index.md`` (every name of ``storeframes.__all__``, grouped) and one page per
public submodule (``reference/api/<module>.md``), each a ``:::`` block that mkdocstrings fills from the docstrings.

>>> [page for page, _ in module_pages()][:2]
['api/analysis.md', 'api/catalog.md']
"""

from __future__ import annotations

import importlib
import inspect
import re
import types
from collections.abc import Callable
from pathlib import Path

import storeframes

from .docstrings import markdown_of
from .markdown import first_paragraph, plain_roles

MODULES = (
    "analysis",
    "catalog",
    "schemas",
    "codes",
    "plots",
    "widgets",
    "interop",
    "track",
    "lake",
    "sandbox",
    "conformance",
    "dagster",
    "workspaces",
    "errors",
)
"""The public submodules with a page of their own, in the order of the site's navigation (``mkdocs.yml``)."""

# The groups of the package's names, in the order of the page. A name of ``storeframes.__all__`` that no group
# claims lands in "More" (listed, documented), so a new name is never left out of the reference.
_CLIENT = ("configure", "connect", "default_client", "Client", "plan", "Plan", "today", "Coordinator")
_CATALOG = ("Endpoint", "CostModel", "Freshness")
_CACHE = ("Cache", "Store", "LocalStore", "MemoryStore", "Answer", "Part", "Response", "LEDGER_SCHEMA")
_KEPT = ("scan", "compact", "snapshots", "observed_changes")
_TRACKER = ("Tracker", "TrackerSpec", "events", "rank_history", "RANK_STATUSES")
_LAKE = ("publish", "read_table", "sql", "manifest", "check_manifest")
_INTEROP = ("to_pandas",)
_WORKSPACES = ("use", "Workspace", "load_workspaces", "spend_report")


def _is_error(obj: object) -> bool:
    return inspect.isclass(obj) and issubclass(obj, BaseException) and not issubclass(obj, Warning)


def _is_warning(obj: object) -> bool:
    return inspect.isclass(obj) and issubclass(obj, Warning)


def _is_frame_function(name: str, obj: object) -> bool:
    return inspect.isfunction(obj) and (name.endswith("_frame") or name == "find_apps")


GROUPS: tuple[tuple[str, str, Callable[[str, object], bool]], ...] = (
    (
        "Frame functions",
        "Each returns a tidy polars DataFrame with a declared schema ([Frames](../frames.md)); the same functions "
        "are methods of a `Client`.",
        _is_frame_function,
    ),
    ("Client and configuration", "The client, its defaults, and what a call would cost.", lambda n, _: n in _CLIENT),
    (
        "Workspaces",
        "The clients of an agency or a team, each a `[workspace.NAME]` table of `storeframes.toml` with its own token, "
        "cache and month budget ([Markets and clients](../../guides/markets.md#clients-workspaces), "
        "[The workspaces file](../workspaces-file.md)).",
        lambda n, _: n in _WORKSPACES,
    ),
    ("The catalog's types", "What an endpoint is, its price and its freshness.", lambda n, _: n in _CATALOG),
    ("Cache", "Where answers are kept, and what a cached answer holds.", lambda n, _: n in _CACHE),
    ("Reading what the cache keeps", "Tables over every kept answer, at no cost.", lambda n, _: n in _KEPT),
    ("Tracking over time", "A daily tracker, its events and rank history.", lambda n, _: n in _TRACKER),
    ("Team tables and SQL", "Delta Lake tables and DuckDB SQL over the cache.", lambda n, _: n in _LAKE),
    ("pandas", "Frames for pandas users.", lambda n, _: n in _INTEROP),
    (
        "Errors",
        "Every error derives from `StoreframesError` ([Errors and warnings](../errors.md)).",
        lambda _, o: _is_error(o),
    ),
    ("Warnings", "What storeframes warns about ([Errors and warnings](../errors.md)).", lambda _, o: _is_warning(o)),
)


def _place(name: str) -> tuple[int, str]:
    """Where a name goes in its group: the frame functions in the pipeline's order (metadata first), the declared
    groups in their order, `StoreframesError` first of the errors, the rest by name."""
    from storeframes.fetch.pipeline import FRAMES

    order = [
        *FRAMES,
        "find_apps",
        *_CLIENT,
        *_WORKSPACES,
        *_CATALOG,
        *_CACHE,
        *_KEPT,
        *_TRACKER,
        *_LAKE,
        *_INTEROP,
        "StoreframesError",
    ]
    return (order.index(name), "") if name in order else (len(order), name)


def grouped() -> list[tuple[str, str, list[str]]]:
    """The names of ``storeframes.__all__`` (but the modules and ``__version__``) by group, in the page's order;
    the names no group claims last, as "More".

    >>> [title for title, _, names in grouped()][0], grouped()[0][2][:2]
    ('Frame functions', ['metadata_frame', 'versions_frame'])
    """
    left = [
        n
        for n in storeframes.__all__
        if n != "__version__" and not isinstance(getattr(storeframes, n), types.ModuleType)
    ]
    out = []
    for title, intro, claims in GROUPS:
        names = sorted((n for n in left if claims(n, getattr(storeframes, n))), key=_place)
        left = [n for n in left if n not in names]
        out.append((title, intro, names))
    if left:
        out.append(("More", "", left))
    return out


def shadowed(module: str) -> list[str]:
    """The public names of a package that are also the names of its submodules (``storeframes.lake.sql``, the
    function, beside ``storeframes/lake/sql.py``): read from the files, the module hides the name, so these are
    documented where they are defined.

    >>> shadowed("lake")
    ['manifest', 'publish', 'sql']
    """
    home = Path(storeframes.__file__).parent / module
    if not home.is_dir():
        return []
    package = importlib.import_module(f"storeframes.{module}")
    return sorted(
        name
        for name in getattr(package, "__all__", ())
        if ((home / f"{name}.py").is_file() or (home / name).is_dir())
        and not isinstance(getattr(package, name), types.ModuleType)
    )


def made_at_runtime(name: str) -> bool:
    """Whether ``storeframes.<name>`` is a function made when the package is imported (the frame functions, twins
    of the client's methods: ``metadata_frame = _on_default(Client.metadata_frame)``), whose signature and
    docstring (with its output schema) only exist then: read from the source, mkdocstrings would show an
    assignment. :func:`runtime_entry` writes their entries from the imported function.

    >>> made_at_runtime("metadata_frame"), made_at_runtime("configure")
    (True, False)
    """
    obj = getattr(storeframes, name)
    return inspect.isfunction(obj) and obj.__module__ == "storeframes"


def runtime_entry(name: str) -> str:
    """The entry of a function made at import (:func:`made_at_runtime`): its heading (with the anchor
    mkdocstrings would give it), its signature and its docstring, as the imported function has them.

    >>> print(runtime_entry("find_apps").splitlines()[0])
    ### `find_apps` { #storeframes.find_apps }
    """
    obj = getattr(storeframes, name)
    signature = _signature(name, inspect.signature(obj))
    return "\n".join(
        [
            f"### `{name}` {{ #storeframes.{name} }}",
            "",
            "```python",
            signature,
            "```",
            "",
            markdown_of(inspect.getdoc(obj) or ""),
        ]
    )


def _bare(text: str) -> str:
    """A part of a signature with its annotations bare (they are texts: postponed evaluation) and its
    defaults' quotes made double."""
    return re.sub(r"(: |-> )'([^']*)'", r"\1\2", text).replace("'", '"')


def _signature(name: str, signature: inspect.Signature) -> str:
    """``sf.name(...)``, one parameter a line when it is long, as a formatter would write it."""
    line = f"sf.{name}{_bare(str(signature))}"
    if len(line) <= 100:
        return line
    returns = _bare(str(signature.replace(parameters=[])))[2:]  # "() -> X" without the brackets
    params, star = [], False
    for parameter in signature.parameters.values():
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY and not star:
            params.append("*")
            star = True
        star = star or parameter.kind is inspect.Parameter.VAR_POSITIONAL
        params.append(_bare(str(parameter)))
    return f"sf.{name}(\n" + "".join(f"    {p},\n" for p in params) + f"){returns}"


def target(name: str) -> str:
    """What a ``:::`` block names for ``storeframes.<name>``: the name, or where it is defined when a module hides it.

    >>> target("metadata_frame"), target("sql")
    ('storeframes.metadata_frame', 'storeframes.lake.sql.sql')
    """
    obj = getattr(storeframes, name)
    defined = getattr(obj, "__module__", "") or ""
    if defined.startswith("storeframes.") and defined.rsplit(".", 1)[-1] == name:
        return f"{defined}.{obj.__qualname__}"
    return f"storeframes.{name}"


def index_page() -> str:
    """``reference/api/index.md``: the package's names, one mkdocstrings block each, grouped."""
    lines = [
        "# The package: `storeframes`",
        "",
        "Every name of `storeframes.__all__`, from its docstring, grouped by what it is for. "
        f"This is storeframes {storeframes.__version__} (`storeframes.__version__`).",
        "",
        "The public submodules have pages of their own: "
        + ", ".join(f"[`storeframes.{m}`]({m}.md)" for m in MODULES)
        + ".",
        "",
    ]
    for title, intro, names in grouped():
        lines += [f"## {title}", ""]
        if intro:
            lines += [intro, ""]
        for name in names:
            if made_at_runtime(name):
                lines += [runtime_entry(name), ""]
            else:
                lines += [f"::: {target(name)}", "    options:", "      heading_level: 3", ""]
    return "\n".join(lines)


def module_page(module: str) -> str:
    """``reference/api/<module>.md``: the submodule's docstring and its public members."""
    imported = _summary(module)
    hidden = [
        line
        for name in shadowed(module)
        for line in (f"::: storeframes.{module}.{name}.{name}", "    options:", "      heading_level: 2", "")
    ]
    return "\n".join(
        [
            f"# `storeframes.{module}`",
            "",
            imported,
            "",
            f"::: storeframes.{module}",
            "    options:",
            "      show_root_heading: false",
            "      show_root_toc_entry: false",
            "      heading_level: 2",
            "",
            *hidden,
        ]
    )


def _summary(module: str) -> str:
    """A line over the module's page: where its extra comes from, when it needs one."""
    needs = {
        "plots": "matplotlib (the `notebook` or `alerts` extra)",
        "widgets": "ipywidgets (the `notebook` extra)",
        "interop": "pandas (the `pandas` extra)",
        "lake": "deltalake (the `lake` extra) for its tables, duckdb (the `sql` extra) for `sql`",
        "conformance": "vcrpy (the `conformance` extra) to record cassettes",
        "dagster": "Dagster (the `dagster` extra)",
    }
    return f"Needs {needs[module]}." if module in needs else ""


def module_pages() -> list[tuple[str, str]]:
    """Every submodule page: (path under reference/, text)."""
    return [(f"api/{m}.md", module_page(m)) for m in MODULES]


def summary_of(module: str) -> str:
    """The first sentence of a submodule's docstring, read without importing it (its extra may be missing).

    >>> summary_of("sandbox")
    'The sandbox: a faithful, deterministic fake of the whole service.'
    """
    import ast

    home = Path(storeframes.__file__).parent
    path = home / module / "__init__.py" if (home / module).is_dir() else home / f"{module}.py"
    paragraph = first_paragraph(ast.get_docstring(ast.parse(path.read_text())))
    return plain_roles(re.split(r"(?<=\.)\s+(?=[A-Z`])", paragraph, maxsplit=1)[0])
