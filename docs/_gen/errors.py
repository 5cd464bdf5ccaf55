"""``reference/errors.md``: every error storeframes raises of its own (each derives from
:class:`storeframes.StoreframesError`) and every warning it defines: the class, its base, and when it is raised
(its docstring's first line), found by importing every module of the package.

>>> rows = error_rows()
>>> rows[0][0], "`NotEnoughCreditsError`" in str(rows)
('`StoreframesError`', True)
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import types

import storeframes
from storeframes import StoreframesError

from .markdown import code, first_paragraph, plain_roles, table


def _modules() -> list[types.ModuleType]:
    """Every module of the package that imports here (an extra's module is left out when it is missing)."""
    found = []
    for info in pkgutil.walk_packages(storeframes.__path__, "storeframes."):
        if info.name.endswith("__main__"):
            continue
        try:
            found.append(importlib.import_module(info.name))
        except ImportError:
            continue
    return found


def _tree(root: type) -> list[tuple[int, type]]:
    """``root`` and its subclasses defined in storeframes, depth first, each once, by name at each level."""
    out: list[tuple[int, type]] = []
    seen: set[type] = set()

    def walk(cls: type, depth: int) -> None:
        if cls in seen:
            return
        seen.add(cls)
        out.append((depth, cls))
        for sub in sorted(cls.__subclasses__(), key=lambda c: c.__name__):
            if sub.__module__.startswith("storeframes"):
                walk(sub, depth + 1)

    walk(root, 0)
    return out


def _name(cls: type) -> str:
    """``storeframes.X`` where the package exports it, else its module's path."""
    if getattr(storeframes, cls.__name__, None) is cls:
        return cls.__name__
    return f"{cls.__module__}.{cls.__name__}"


def _bases(cls: type) -> str:
    return ", ".join(code(_name(b) if b.__module__.startswith("storeframes") else b.__name__) for b in cls.__bases__)


def _row(cls: type) -> tuple[str, str, str]:
    return code(_name(cls)), _bases(cls), plain_roles(first_paragraph(inspect.getdoc(cls)))


def error_rows() -> list[tuple[str, str, str]]:
    """Every error class: (class, bases, when)."""
    _modules()
    return [_row(cls) for _, cls in _tree(StoreframesError)]


def warning_rows() -> list[tuple[str, str, str]]:
    """Every warning class storeframes defines: (class, bases, when)."""
    defined = {
        cls
        for module in _modules()
        for cls in vars(module).values()
        if inspect.isclass(cls) and issubclass(cls, Warning) and cls.__module__ == module.__name__
    }
    roots = sorted((c for c in defined if not any(b in defined for b in c.__mro__[1:])), key=lambda c: c.__name__)
    found = [cls for root in roots for _, cls in _tree(root)]
    return [_row(cls) for cls in dict.fromkeys(found)]


def page() -> str:
    """The page's Markdown."""
    return "\n".join(
        [
            "# Errors and warnings",
            "",
            "Every error storeframes raises of its own derives from `StoreframesError`, so "
            "`except sf.StoreframesError` catches them all; each message says what was wrong and what is "
            "allowed, and never holds the token or another secret. Names without a module are exported by "
            "`storeframes` (`sf.NotEnoughCreditsError`). Their docstrings: [The package](api/index.md#errors).",
            "",
            "## Errors",
            "",
            table(("error", "base", "when"), error_rows()),
            "",
            "## Warnings",
            "",
            '`warnings.simplefilter("error", sf.CostWarning)` turns a warning into an error, and '
            '`warnings.simplefilter("ignore", sf.CostWarning)` silences it.',
            "",
            table(("warning", "base", "when"), warning_rows()),
            "",
        ]
    )
