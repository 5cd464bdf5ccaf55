"""The workspaces' tests: an agency's workspaces file on a loopback service, and a tracker spec of one of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from storeframes.sandbox import SandboxServer, World
from tests.conftest import SANDBOX_TODAY

WORLD = World(0)
APPS = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US][:40]
MONTH = f"{SANDBOX_TODAY:%Y-%m}"
BUDGET = 60


def write_workspaces(folder: Path, base_url: str, *, acme_budget: int | None = BUDGET) -> Path:
    """Two workspaces of one agency on one token (two variables holding it), each with its own cache."""
    budget = f"budget_per_month = {acme_budget}\n" if acme_budget is not None else ""
    path = folder / "storeframes.toml"
    path.write_text(
        f'[workspace.acme]\napi_key_env = "ACME_KEY"\nbase_url = "{base_url}"\ncache_dir = "acme-cache"\n{budget}\n'
        f'[workspace.beta]\napi_key_env = "BETA_KEY"\nbase_url = "{base_url}"\ncache_dir = "beta-cache"\n',
        encoding="utf-8",
    )
    return path


def write_spec(folder: Path, keywords: list[str]) -> Path:
    path = folder / "acme-ranks.toml"
    path.write_text(
        '[tracker]\nname = "acme-ranks"\nworkspace = "acme"\n\n[[track]]\nendpoint = "search"\n'
        f"keywords = {keywords!r}\n".replace("'", '"'),
        encoding="utf-8",
    )
    return path


@pytest.fixture
def agency(tmp_path, monkeypatch):
    """A loopback service, and a working directory holding the agency's workspaces file."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STOREFRAMES_WORKSPACE", raising=False)
    with SandboxServer(port=0, today=SANDBOX_TODAY) as server:
        monkeypatch.setenv("ACME_KEY", server.key)
        monkeypatch.setenv("BETA_KEY", server.key)
        write_workspaces(tmp_path, server.base_url)
        yield server
