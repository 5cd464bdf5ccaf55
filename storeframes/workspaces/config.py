"""The workspaces file, ``storeframes.toml``: one table per client of an agency or a team, read and checked whole.

::

    [workspace.acme]
    api_key_env = "ACME_STOREFRAMES_KEY"          # the environment variable holding the token: never the token
    base_url = "https://<host>/api/public/store"  # or base_url_env = "ACME_BASE_URL"
    cache_dir = "acme-cache"                      # relative to this file, or s3://bucket/prefix
    budget_per_month = 50000                      # credits per calendar month (UTC), for every caller
    lake = "s3://agency-lake/acme"                # optional: the default lake of sf.publish(workspace=) and trackers
    notify = ["mailto://..."]                     # optional: the default addresses of its trackers

The file is found in this order (:func:`config_path`): ``storeframes.toml`` in the working directory,
the file ``$STOREFRAMES_CONFIG`` names, ``storeframes.toml`` in the user's config folder. Every value is
checked when the file is read, before anything is sent; a refusal is a :class:`WorkspaceFileError`
naming the file, the line and what is allowed. A token written in the file (an ``api_key`` key, a value
that is the token ``api_key_env`` names) is refused with a message saying to keep it in the environment:
the message never holds it.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._tracebacks import user_facing
from ..errors import ConfigurationError, shown_value

__all__ = [
    "CONFIG_NAME",
    "ENV_CONFIG",
    "ENV_WORKSPACE",
    "Workspace",
    "WorkspaceFileError",
    "config_path",
    "load_workspaces",
    "workspace",
]

CONFIG_NAME = "storeframes.toml"
"""The workspaces file's name, in the working directory or the user's config folder."""
ENV_CONFIG = "STOREFRAMES_CONFIG"
"""The environment variable naming the workspaces file (when the working directory holds none)."""
ENV_WORKSPACE = "STOREFRAMES_WORKSPACE"
"""The environment variable naming the workspace of every command (as ``--workspace`` does)."""

_KEYS = ("api_key_env", "base_url", "base_url_env", "cache_dir", "budget_per_month", "lake", "notify")
_TOKEN_KEYS = ("api_key", "token", "key", "api_token", "secret", "service_key", "x-service-key")
_VARIABLE = re.compile(r"^[A-Z_][A-Z0-9_]{0,127}$")
_NAME = re.compile(r"^(?!.*\.\.)[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")  # it names leases and folders: never ".."
_MOST_CREDITS = 2**63 - 1
_KEEP_IT_OUT = (
    "keep the token in an environment variable and name the variable: "
    'api_key_env = "ACME_STOREFRAMES_KEY" (the file is shared and committed; a token in it is not a secret)'
)


class WorkspaceFileError(ConfigurationError):
    """The workspaces file cannot be used: its ``path``, the ``line`` (None when the whole file is meant) and what
    is allowed. Raised when the file is read, before anything is sent."""

    def __init__(self, path: Path, line: int | None, message: str):
        self.path = path
        self.line = line
        where = f"{path}, line {line}" if line is not None else str(path)
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class Workspace:
    """One ``[workspace.NAME]`` table: whose token, which service, where its answers are kept, its month's budget."""

    name: str
    api_key_env: str | None = None
    """The environment variable holding the token (None: ``$STOREFRAMES_API_KEY``)."""
    base_url: str | None = field(default=None, repr=False)
    """The service's address (from ``base_url``, or the variable ``base_url_env`` names; None: ``$STOREFRAMES_BASE_URL``)."""
    base_url_env: str | None = None
    cache_dir: str = ""
    """The cache: a folder made absolute from the file's folder, or a bucket address; its own, never another's."""
    budget_per_month: int | None = None
    """Credits per calendar month (UTC) for every caller of the workspace (None: no month budget)."""
    lake: str | None = None
    """The default lake of ``sf.publish`` and of the workspace's trackers (a folder made absolute, or a bucket)."""
    notify: tuple[str, ...] = field(default=(), repr=False)
    """The default addresses its trackers tell (may hold credentials: never shown)."""
    path: Path | None = None
    """The file it was read from."""

    def token_variable(self) -> str:
        """The environment variable its token is read from."""
        return self.api_key_env or "STOREFRAMES_API_KEY"

    def token(self) -> str:
        """The token, read from its environment variable; a :class:`~storeframes.ConfigurationError` naming the
        variable when it is not set (never the token)."""
        variable = self.token_variable()
        value = os.environ.get(variable, "").strip()
        if not value:
            raise ConfigurationError(
                f"workspace {self.name!r} takes its token from ${variable}, which is not set: set it "
                f"(export {variable}=...) where the notebook, command or tracker runs"
            )
        return value

    def own_cache(self, given: Any = None, *, named: str = "cache_dir") -> Any:
        """Its cache: ``given`` when it is the same place (or a :class:`~storeframes.Cache` opened on it, as its
        tracker opens it), its ``cache_dir`` for None; another place, given as ``named``, is refused."""
        from ..cache import Cache

        if given is None:
            return self.cache_dir
        if not isinstance(given, Cache) and str(given) != self.cache_dir:
            raise ConfigurationError(
                f"workspace {self.name!r} keeps its answers in {self.cache_dir}: leave out {named} (each "
                "workspace keeps its own cache, ledger and month's spend)"
            )
        return given

    def address(self) -> str | None:
        """The service's base address: ``base_url``, else the variable ``base_url_env`` names, else None."""
        if self.base_url is not None:
            return self.base_url
        if self.base_url_env is not None:
            value = os.environ.get(self.base_url_env, "").strip()
            if not value:
                raise ConfigurationError(
                    f"workspace {self.name!r} takes the service's address from ${self.base_url_env}, which is not set"
                )
            return value
        return None


def config_path(path: str | os.PathLike[str] | None = None) -> Path:
    """The workspaces file: ``path`` when given, else the first of ``./storeframes.toml``, ``$STOREFRAMES_CONFIG``,
    the user's config folder's ``storeframes.toml``; a :class:`~storeframes.ConfigurationError` naming the places
    looked in when none is there."""
    if path is not None:
        given = Path(path).expanduser()
        if not given.is_file():
            raise ConfigurationError(f"no workspaces file at {given}")
        return given
    looked = []
    here = Path(CONFIG_NAME)
    if here.is_file():
        return here
    looked.append(f"{Path.cwd() / CONFIG_NAME}")
    named = os.environ.get(ENV_CONFIG, "").strip()
    if named:
        chosen = Path(named).expanduser()
        if chosen.is_file():
            return chosen
        looked.append(f"{chosen} (${ENV_CONFIG})")
    else:
        looked.append(f"${ENV_CONFIG} (not set)")
    user = _user_config() / CONFIG_NAME
    if user.is_file():
        return user
    looked.append(str(user))
    raise ConfigurationError(
        f"no workspaces file: looked in {', '.join(looked)}. Write a {CONFIG_NAME} with a [workspace.NAME] table "
        "(see the guide's page Markets and clients)"
    )


def _user_config() -> Path:
    import platformdirs

    return Path(platformdirs.user_config_dir("storeframes", appauthor=False))


@user_facing
def load_workspaces(path: str | os.PathLike[str] | None = None) -> dict[str, Workspace]:
    """The workspaces of the file (:func:`config_path` finds it), by name, in the file's order; checked whole."""
    where = config_path(path)
    try:
        text = where.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise WorkspaceFileError(where, None, f"cannot be read ({type(exc).__name__}: {exc})") from None
    return parse_workspaces(text, where)


def workspace(name: str | Workspace, path: str | os.PathLike[str] | None = None) -> Workspace:
    """The workspace ``name`` of the file (a :class:`Workspace` is returned as it is)."""
    if isinstance(name, Workspace):
        return name
    if not isinstance(name, str) or not name.strip():
        raise ConfigurationError(f"a workspace is named by text such as 'acme', got {shown_value(name)}")
    found = load_workspaces(path)
    chosen = found.get(name.strip())
    if chosen is None:
        where = next(iter(found.values())).path if found else config_path(path)
        names = ", ".join(found) or "none"
        raise ConfigurationError(f"no workspace {shown_value(name.strip())} in {where}; it has: {names}")
    return chosen


class _Lines:
    """Finds the line of a workspace's table, or of one of its keys, in the file's text."""

    def __init__(self, text: str):
        self.lines = text.splitlines()

    def of(self, name: str | None, key: str | None = None) -> int | None:
        if name is None:
            return None
        quoted = rf"""(?:{re.escape(name)}|"{re.escape(name)}"|'{re.escape(name)}')"""
        header = re.compile(rf"^\s*\[\s*workspace\s*\.\s*{quoted}\s*\]")
        dotted = re.compile(rf"^\s*workspace\s*\.\s*{quoted}\s*\.\s*[\"']?{re.escape(key or '')}")
        start = None
        for n, line in enumerate(self.lines):
            if header.match(line):
                start = n
                break
            if key is not None and dotted.match(line):
                return n + 1
        if start is None:
            return None
        if key is not None:
            for n in range(start + 1, len(self.lines)):
                if re.match(r"^\s*\[", self.lines[n]):
                    break
                if re.match(rf"""^\s*["']?{re.escape(key)}["']?\s*=""", self.lines[n]):
                    return n + 1
        return start + 1


def parse_workspaces(text: str, path: Path) -> dict[str, Workspace]:
    """The workspaces of a file's ``text`` (``path`` names it in messages and places relative folders)."""
    lines = _Lines(text)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        at = re.search(r"at line (\d+)", str(exc))
        raise WorkspaceFileError(path, int(at.group(1)) if at else None, f"not TOML ({exc})") from None
    except RecursionError:
        raise WorkspaceFileError(path, None, "TOML nested too deep for a workspaces file") from None
    for key in data:
        if key != "workspace":
            raise WorkspaceFileError(
                path, None, f"{shown_value(key, 40)} is not known: the file holds [workspace.NAME] tables only"
            )
    tables = data.get("workspace", {})
    if not isinstance(tables, dict) or not tables:
        raise WorkspaceFileError(path, None, "no workspace: write a [workspace.NAME] table")
    found: dict[str, Workspace] = {}
    for name, table in tables.items():
        found[name] = _workspace(name, table, path, lines)
    _token_not_in(text, found, path, lines)
    _caches_apart(found, path, lines)
    return found


def _workspace(name: str, table: Any, path: Path, lines: _Lines) -> Workspace:
    if not _NAME.match(name):
        raise WorkspaceFileError(
            path,
            lines.of(name),
            f"workspace {shown_value(name, 40)}: a name of letters, digits, '_', '.' and '-' (at most 64) is allowed",
        )
    if not isinstance(table, dict):
        raise WorkspaceFileError(path, lines.of(name), f"workspace.{name} must be a table of keys")

    def fail(key: str, allowed: str) -> WorkspaceFileError:
        shown = key if key.isidentifier() and len(key) <= 40 else shown_value(key, 40)
        return WorkspaceFileError(path, lines.of(name, key), f"[workspace.{name}] {shown}: {allowed}")

    for key in table:
        if key.lower() in _TOKEN_KEYS:
            raise fail(key, f"a token is never written in the file: {_KEEP_IT_OUT}")
        if key not in _KEYS:
            raise fail(key, f"not a workspace key; the keys are {', '.join(_KEYS)}")
    variables = {key: _variable(table.get(key), fail, key) for key in ("api_key_env", "base_url_env")}
    base_url = table.get("base_url")
    if base_url is not None and variables["base_url_env"] is not None:
        raise fail("base_url", "give base_url or base_url_env, not both")
    if base_url is not None and (not isinstance(base_url, str) or not re.match(r"^https?://\S+$", base_url.strip())):
        raise fail("base_url", "the service's address such as 'https://<host>/api/public/store'")
    budget = table.get("budget_per_month")
    if budget is not None and (
        isinstance(budget, bool) or not isinstance(budget, int) or not 0 <= budget <= _MOST_CREDITS
    ):
        raise fail("budget_per_month", f"a whole number of credits, 0 to {_MOST_CREDITS:,} (got {shown_value(budget)})")
    folder = path.resolve().parent
    cache_dir = _place(table.get("cache_dir"), fail, "cache_dir", folder)
    if cache_dir is None:
        raise WorkspaceFileError(
            path,
            lines.of(name),
            f"[workspace.{name}] has no cache_dir: each workspace keeps its own cache (its answers, its ledger, "
            'its month\'s spend), such as cache_dir = "acme-cache" or "s3://bucket/acme"',
        )
    return Workspace(
        name,
        api_key_env=variables["api_key_env"],
        base_url=base_url.strip() if isinstance(base_url, str) else None,
        base_url_env=variables["base_url_env"],
        cache_dir=cache_dir,
        budget_per_month=budget,
        lake=_place(table.get("lake"), fail, "lake", folder),
        notify=_addresses(table.get("notify"), fail),
        path=path,
    )


def _variable(value: Any, fail: Any, key: str) -> str | None:
    """The name of an environment variable, as ``api_key_env`` and ``base_url_env`` hold; never shown when refused."""
    if value is None:
        return None
    if not isinstance(value, str) or not _VARIABLE.match(value.strip()):
        said = (
            "holds the name of the environment variable holding the token (such as ACME_STOREFRAMES_KEY), "
            if (key == "api_key_env")
            else "names an environment variable (such as ACME_BASE_URL): "
        )
        raise fail(
            key,
            f"{said}upper-case letters, digits and '_'; the value written is not shown. If it is the token itself, "
            f"{_KEEP_IT_OUT}",
        )
    return value.strip()


def _place(value: Any, fail: Any, key: str, folder: Path) -> str | None:
    """A folder (made absolute from the file's ``folder``) or a bucket address."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or not value.isprintable():
        raise fail(key, "a folder (relative to the file) or a bucket address such as s3://bucket/prefix")
    value = value.strip()
    if "://" in value:
        return value
    place = Path(value).expanduser()
    return str(place if place.is_absolute() else (folder / place).resolve())


def _addresses(value: Any, fail: Any) -> tuple[str, ...]:
    """Apprise addresses: a list of text such as ``mailto://...`` or ``json://host/path``."""
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and "://" in v and v.isprintable() for v in value):
        raise fail("notify", "a list of apprise addresses such as 'mailto://...' or 'json://host/path'")
    return tuple(v.strip() for v in value)


def _token_not_in(text: str, found: Mapping[str, Workspace], path: Path, lines: _Lines) -> None:
    """Refuse a file that holds a token some workspace's ``api_key_env`` (or ``$STOREFRAMES_API_KEY``) names."""
    for chosen in found.values():
        token = os.environ.get(chosen.token_variable(), "").strip()
        if len(token) < 8 or token not in text:
            continue
        line = next((n + 1 for n, row in enumerate(lines.lines) if token in row), None)
        raise WorkspaceFileError(
            path, line, f"the file holds the token of ${chosen.token_variable()} (not shown here): {_KEEP_IT_OUT}"
        )


def _caches_apart(found: Mapping[str, Workspace], path: Path, lines: _Lines) -> None:
    """Refuse two workspaces sharing a cache: each keeps its own answers, ledger and month's spend."""
    seen: dict[str, str] = {}
    for chosen in found.values():
        other = seen.setdefault(chosen.cache_dir, chosen.name)
        if other != chosen.name:
            raise WorkspaceFileError(
                path,
                lines.of(chosen.name, "cache_dir"),
                f"[workspace.{chosen.name}] cache_dir: the cache of workspace {other} too; each workspace keeps its "
                "own cache (its answers, its ledger, its month's spend): give it a folder or prefix of its own",
            )


def client_parts(
    named: str | Workspace | None, api_key: str | None, base_url: str | None, cache_dir: Any
) -> tuple[Workspace | None, str | None, str | None, Any]:
    """The workspace ``named`` (None: none), and the token, the service's address and the cache of its client
    (``api_key``, ``base_url`` and ``cache_dir`` as they are, without a workspace).

    The workspace names all three: a client given another token, address or cache beside it is refused (a
    :class:`~storeframes.Cache` of the workspace's own folder, as its tracker opens it, is taken).
    """
    if named is None:
        return None, api_key, base_url, cache_dir
    chosen = workspace(named)

    for name, given in (("api_key", api_key), ("base_url", base_url)):
        if given is not None:
            raise ConfigurationError(
                f"workspace {chosen.name!r} names the token and the service's address ({chosen.path}): leave out "
                f"{name}, or leave out the workspace"
            )
    return chosen, chosen.token(), chosen.address(), chosen.own_cache(cache_dir)
