"""A failure of any kind inside a tool call is that call's error result, and the server answers the next call:
a panic of a native library (a ``BaseException``, not an ``Exception``) included. The server runs as the
``mcp`` SDK's client starts it over stdio, its process given one way in: polars' collect, called by the scan
tool, raises polars' own ``PanicException`` (as it does when an allocation fails under a memory cap)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from .._agent_month import replay, server_command, server_env

pytestmark = [pytest.mark.slow, pytest.mark.processes, pytest.mark.mcp]


@pytest.fixture(scope="module")
def spec(tmp_path_factory) -> Path:
    """The replayed month's spec (its cache beside it)."""
    return replay(tmp_path_factory.mktemp("month"))


def ask(args: list[str], cwd: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """The results of ``calls``, over stdio with the SDK's client, the server started as ``python args``."""
    params = StdioServerParameters(command=sys.executable, args=args, env=server_env(), cwd=str(cwd))

    async def go() -> list[Any]:
        with open(cwd / "server.log", "a", encoding="utf-8") as log:
            async with Client(stdio_client(params, errlog=log)) as client:
                return [await client.call_tool(name, arguments) for name, arguments in calls]

    return anyio.run(go)


PANIC = """
import runpy, sys
import polars as pl
from polars.exceptions import PanicException

collect = pl.LazyFrame.collect

def panicking(self, *args, **kwargs):
    caller = sys._getframe(1).f_code
    if caller.co_name == "scan" and caller.co_filename.endswith("reading.py"):
        raise PanicException("polars: memory allocation of 8589934592 bytes failed")
    return collect(self, *args, **kwargs)

pl.LazyFrame.collect = panicking
sys.argv = ["storeframes", *sys.argv[1:]]
runpy.run_module("storeframes", run_name="__main__", alter_sys=True)
"""


def test_a_native_panic_inside_a_tool_is_its_error_result_and_the_server_answers_on(spec):
    """The scan tool's collect raises polars' own PanicException (a BaseException) in the server's process."""
    command, args = server_command(spec)
    assert command == sys.executable and args[:2] == ["-m", "storeframes"]
    calls = [("scan", {"table": "metadata"}), ("scan", {"table": "metrics"}), ("spend", {}), ("describe", {})]
    first, second, spent, described = ask(["-c", PANIC, *args[2:]], spec.parent, calls)
    for broken in (first, second):
        assert broken.is_error and broken.structured_content == {"error": "PanicException"}
        said = broken.content[0].text
        assert said.startswith("scan failed inside a native library (PanicException: polars: memory allocation")
        assert "the server goes on" in said and "Traceback" not in said and 'File "' not in said
    assert not spent.is_error and spent.structured_content["credits_spent"] > 0
    assert not described.is_error and described.structured_content["functions"]
