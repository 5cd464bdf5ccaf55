"""``storeframes --workspace acme mcp`` met by the MCP SDK's own client over stdio: the workspace's cache and
token, its month budget held and said by whose, and its token in no output."""

from __future__ import annotations

import sys
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

import storeframes as sf
from storeframes.sandbox import SandboxServer
from tests._agent_month import server_env
from tests.conftest import SANDBOX_TODAY
from tests.workspaces.conftest import APPS, BUDGET, write_workspaces

TOKEN = "sk-live-workspacemcp0123456789"


@pytest.mark.mcp
def test_an_assistant_served_under_a_workspace_spends_within_its_month_and_never_shows_its_token(tmp_path):
    calls = [
        ("fetch_frame", {"function": "metadata_frame", "arguments": {"apps": APPS[:3]}, "confirm": True}),
        ("fetch_frame", {"function": "metadata_frame", "arguments": {"apps": APPS[3:9]}, "confirm": True}),
        ("describe", {}),
    ]
    log = tmp_path / "server.log"
    with SandboxServer(port=0, today=SANDBOX_TODAY, api_keys=[TOKEN]) as served:
        write_workspaces(tmp_path, served.base_url)
        env = server_env(ACME_KEY=TOKEN, BETA_KEY=TOKEN)
        env.pop("STOREFRAMES_WORKSPACE", None)
        args = ["-m", "storeframes", "--workspace", "acme", "mcp", "--confirm-above", "1000"]
        params = StdioServerParameters(command=sys.executable, cwd=str(tmp_path), env=env, args=args)

        async def go() -> list[Any]:
            with open(log, "w") as errlog:
                async with Client(stdio_client(params, errlog=errlog)) as client:
                    return [await client.call_tool(name, arguments) for name, arguments in calls]

        fetched, refused, described = anyio.run(go)
        arrivals = len(served.service.arrivals)
    assert not fetched.is_error and fetched.structured_content["provenance"]["credits spent"] == 31
    assert refused.is_error and "month budget of workspace acme" in refused.content[0].text
    assert arrivals == 1  # the three apps in one request; the refused call sent nothing
    kept = sf.Cache(tmp_path / "acme-cache").ledger.read()
    assert int(kept["cost"].sum()) == 31 < BUDGET
    texts = [r.model_dump_json() for r in (fetched, refused, described)] + [log.read_text()]
    assert not [t for t in texts if TOKEN in t]
