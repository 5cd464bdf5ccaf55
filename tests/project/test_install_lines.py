"""Install lines that work as written: storeframes is not on a package index.

``pip install "storeframes[lake]"`` fails today, and would install a stranger's package the day
someone registers the name. So no line of the README, CONTRIBUTING.md, the docs, the changelog,
the notebooks or the package installs storeframes by name from an index; an install line
installs from a checkout (``pip install ".[lake]"``), a built wheel
(``pip install "dist/storeframes-0.1.0-py3-none-any.whl[lake]"``) or a repository
(``pip install "storeframes[lake] @ git+https://..."``). And every hint the package
gives for a missing extra names the extra's packages, as ``pyproject.toml`` declares them.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

import storeframes
from storeframes._version import extra_requirements, install_hint
from tests._extras import declared, names_the_extra

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(storeframes.__file__).resolve().parent  # the source tree's, or the installed wheel's
EXTRAS = sorted(
    tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
)

_INSTALL = re.compile(
    r"\b(?:pip3?\s+install|uv\s+pip\s+install|uv\s+add|uv\s+tool\s+install|pipx\s+install|poetry\s+add"
    r"|conda\s+install|mamba\s+install|pdm\s+add|hatch\s+add)\b([^`\n]*)"
)
_END = re.compile(r"[()#;|&]|,\s|\s(?:or|and|then|from|to)\s")
_BY_NAME = re.compile(r"^storeframes(\[[^\]]*\])?\s*([<>=!~;].*)?$", re.IGNORECASE)
_DIRECT = re.compile(r"\s*@\s*\S")
_EXTRA_BY_NAME = re.compile(r"""(?<![\w./-])storeframes\[""", re.IGNORECASE)


def index_installs(line: str) -> list[str]:
    """What on ``line`` installs storeframes by name from an index: the install command's argument
    ``storeframes`` (with extras or a version), or ``storeframes[...]`` anywhere."""
    found = [
        f"storeframes[{extras}]"
        for m in _EXTRA_BY_NAME.finditer(line)
        for extras, _, after in [line[m.end() :].partition("]")]
        if not _DIRECT.match(after)  # "storeframes[s3] @ git+https://...": a direct reference, not an index
    ]
    for command in _INSTALL.finditer(line):
        arguments = _END.split(command.group(1), maxsplit=1)[0]  # the command ends where prose or another begins
        try:
            words = shlex.split(arguments, comments=False)
        except ValueError:  # an unclosed quote (a line of a message cut by the formatter)
            words = arguments.replace('"', " ").replace("'", " ").split()
        found += [word for word in words if _BY_NAME.match(word.strip("\"'`(),"))]
    return sorted(set(found))


def _lines(path: Path) -> Iterator[tuple[str, str]]:
    """``(where, line)`` of a text file (``where`` the line's number), or of each cell of a notebook
    (its source and its outputs' text: ``cell 3 line 2``)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".ipynb":
        yield from ((str(n), line) for n, line in enumerate(text.splitlines(), 1))
        return
    for c, cell in enumerate(json.loads(text)["cells"], 1):
        texts = [cell.get("source", "")]
        for output in cell.get("outputs", []):
            texts += [output.get("text", ""), *output.get("data", {}).get("text/plain", [])]
        for part in texts:
            joined = "".join(part) if isinstance(part, list) else part
            yield from ((f"cell {c} line {n}", line) for n, line in enumerate(joined.splitlines(), 1))


def _files() -> list[Path]:
    """README.md, CONTRIBUTING.md, CHANGELOG.md, the docs' pages, the notebooks and the package's modules."""
    named = [ROOT / name for name in ("README.md", "CONTRIBUTING.md", "CHANGELOG.md")]
    return [
        *(path for path in named if path.exists()),
        *sorted((ROOT / "docs").rglob("*.md")),
        *sorted((ROOT / "notebooks").glob("*.ipynb")),
        *sorted(PACKAGE.rglob("*.py")),
    ]


def _shown(path: Path) -> str:
    """A path as the repository names it (``storeframes/...`` for the package, wherever it is installed)."""
    if path.is_relative_to(PACKAGE):
        return f"storeframes/{path.relative_to(PACKAGE).as_posix()}"
    return path.relative_to(ROOT).as_posix()


def test_no_line_installs_storeframes_by_name_from_an_index():
    found = [
        f"{_shown(path)}:{where}: {line.strip()}"
        for path in _files()
        for where, line in _lines(path)
        if index_installs(line)
    ]
    assert found == [], (
        'storeframes is not on a package index: install from a checkout (pip install ".[lake]") or a built '
        'wheel (pip install "dist/storeframes-<version>-py3-none-any.whl[lake]") instead:\n' + "\n".join(found)
    )


@pytest.mark.parametrize(
    ("line", "found"),
    [
        ('pip install "storeframes[notebook,pandas]"', ["storeframes[notebook,pandas]"]),
        ("pip install storeframes", ["storeframes"]),
        ("python -m pip install -U storeframes==0.1.0", ["storeframes==0.1.0"]),
        ("uv add storeframes", ["storeframes"]),
        ("pipx install 'storeframes[mcp]'", ["storeframes[mcp]"]),
        ("needs ``storeframes[s3]``", ["storeframes[s3]"]),
        ('pip install "storeframes[s3] @ git+https://github.com/storeframes/storeframes"', []),
        ('pip install ".[notebook,pandas]"', []),
        ('pip install "dist/storeframes-0.1.0-py3-none-any.whl[mcp]"', []),
        ("pip install -e . && pip install storeframes-tools", []),
        ("cd storeframes && pip install .", []),
        ('pip install "pandas>=2.2" (or, from a checkout of storeframes, pip install ".[pandas]")', []),
    ],
)
def test_the_check_finds_an_index_install_and_passes_a_checkout_or_a_wheel(line, found):
    assert index_installs(line) == found


def test_a_notebook_line_is_found_in_its_cell(tmp_path):
    cell = {"cell_type": "code", "source": ["import storeframes\n", "%pip install storeframes\n"], "outputs": []}
    notebook = tmp_path / "n.ipynb"
    notebook.write_text(json.dumps({"cells": [{"cell_type": "markdown", "source": "# n"}, cell]}))
    assert [where for where, line in _lines(notebook) if index_installs(line)] == ["cell 2 line 2"]


@pytest.mark.parametrize("extra", EXTRAS)
def test_each_extras_hint_names_its_packages_as_pyproject_declares_them(extra):
    assert declared(extra)  # an extra that installs nothing would need no hint
    assert list(extra_requirements(extra)) == declared(extra)
    assert names_the_extra(install_hint(extra), extra)
    assert index_installs(install_hint(extra)) == []


def test_the_hint_reads_as_a_command_then_the_checkout():
    assert install_hint("notebook") == (
        'pip install "ipykernel>=6.29" "ipywidgets>=8.1" "matplotlib>=3.9" '
        '(or, from a checkout of storeframes, pip install ".[notebook]")'
    )
    assert install_hint("nothing") == 'pip install ".[nothing]" from a checkout of storeframes'


def test_names_the_extra_refuses_a_hint_that_leaves_a_package_out():
    assert not names_the_extra('pip install "matplotlib>=3.9" (or pip install ".[notebook]")', "notebook")
    assert not names_the_extra('pip install "storeframes[notebook]"', "notebook")


def _hidden(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """As if ``modules`` were not installed: importing them raises ImportError."""
    for module in modules:
        monkeypatch.setitem(sys.modules, module, None)


def test_sql_without_duckdb_names_the_sql_extra(monkeypatch, tmp_path):
    import storeframes as sf

    _hidden(monkeypatch, "duckdb")
    with pytest.raises(sf.ConfigurationError) as raised:
        sf.sql("select 1", cache_dir=tmp_path)
    assert names_the_extra(str(raised.value), "sql")


def test_notifications_without_apprise_name_the_alerts_extra(monkeypatch):
    from storeframes.errors import ConfigurationError
    from storeframes.track import delivery

    _hidden(monkeypatch, "apprise")
    with pytest.raises(ConfigurationError) as raised:
        delivery._apprise()
    assert names_the_extra(str(raised.value), "alerts")


def test_the_conformance_kit_without_vcrpy_names_its_extra(monkeypatch):
    from storeframes.conformance import kit
    from storeframes.errors import ConfigurationError

    _hidden(monkeypatch, "vcr")
    with pytest.raises(ConfigurationError) as raised:
        kit._need_vcr()
    assert names_the_extra(str(raised.value), "conformance")


def test_a_bucket_cache_without_obstore_names_the_s3_extra(monkeypatch):
    from storeframes.cache.stores import bucket

    _hidden(monkeypatch, "obstore", "obstore.exceptions", "obstore.store")
    with pytest.raises(ImportError) as raised:
        bucket._obstore()
    assert names_the_extra(str(raised.value), "s3")


def test_a_redis_coordinator_without_redis_py_names_the_redis_extra(monkeypatch):
    from storeframes.coord import redis as coord_redis
    from storeframes.errors import ConfigurationError

    monkeypatch.setattr(coord_redis, "redis_installed", lambda: False)
    with pytest.raises(ConfigurationError) as raised:
        coord_redis.RedisCoordinator("redis://127.0.0.1:6399/0").window("t")
    assert names_the_extra(str(raised.value), "redis")
