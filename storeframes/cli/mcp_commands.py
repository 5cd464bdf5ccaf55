"""``storeframes mcp``: the Model Context Protocol server for AI assistants (see :mod:`storeframes.agent`).

stdout belongs to the protocol over stdio, so everything said to people goes to stderr: one line
saying which service, cache, budget and gate the server uses. Over HTTP, every request must carry the
owner's bearer token: ``$STOREFRAMES_MCP_TOKEN``, else a new one said once on stderr with the header to
send. Exit status 2 for bad input (a short ``$STOREFRAMES_MCP_TOKEN`` too), a missing ``mcp`` extra, or
(served offline) no cache at ``--cache-dir``, refused before the server starts.
"""

from __future__ import annotations

import argparse
import sys

from .._version import install_hint
from ..errors import ConfigurationError, InvalidParameterError, NoCacheError, StoreframesError
from .printing import printable

__all__ = ["run_mcp"]


def _err(text: str) -> None:
    print(printable(f"storeframes mcp: {text}"), file=sys.stderr)


def run_mcp(args: argparse.Namespace) -> int:
    """The ``mcp`` command; the exit status."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        _err(f"the MCP server needs the mcp extra: {install_hint('mcp')}")
        return 2
    from ..agent import open_surface, secrets
    from ..agent.bearer import ENV_MCP_TOKEN, bearer_token
    from ..agent.server import build_server, is_loopback, run_server

    if args.transport == "http" and not is_loopback(args.host):
        _err(f"--host must be a loopback address (127.0.0.1, ::1, localhost), not {args.host!r}")
        return 2
    if args.today is not None and not args.sandbox:
        _err("--today pins the sandbox's clock: use it with --sandbox")
        return 2
    bearer, chosen = None, False
    if args.transport == "http":
        try:
            bearer, chosen = bearer_token()
        except ConfigurationError as exc:
            _err(str(exc))
            return 2
    try:
        surface = open_surface(
            args.cache_dir,
            budget=args.budget,
            confirm_above=args.confirm_above,
            offline=args.offline,
            tracker=args.tracker,
            sandbox=args.sandbox,
            today=args.today,
            workspace=args.chosen_workspace,
        )
    except (InvalidParameterError, ConfigurationError, NoCacheError) as exc:  # no cache there: 2, as cache says
        _err(str(exc))
        return 2
    except StoreframesError as exc:
        _err(str(exc))
        return 1
    said = surface.settings()
    url = f"http://{args.host}:{args.port}/mcp"
    where = f" on {url}" if args.transport == "http" else " on stdio"
    _err("serving" + where + ": " + "; ".join(f"{k} {v}" for k, v in said.items()))
    if bearer is not None:
        sent = f"${ENV_MCP_TOKEN}" if chosen else bearer
        _err(f"every request to {url} must send the header: Authorization: Bearer {sent}")
        if not chosen:
            _err(f"(a new token each start, said only here; set {ENV_MCP_TOKEN} to keep one)")
    server = build_server(surface, secrets=secrets(surface.client.workspace), bearer=bearer, url=url)
    run_server(server, transport=args.transport, host=args.host, port=args.port)
    return 0
