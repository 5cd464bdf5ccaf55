"""The ``storeframes`` command: ``demo``, ``endpoints`` and ``sandbox serve``."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence

from ._version import __version__

__all__ = ["main"]


def _rate(text: str) -> tuple[int, float]:
    try:
        count, seconds = text.split("/")
        return int(count), float(seconds)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected REQUESTS/SECONDS such as 60/10, got {text!r}") from None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="storeframes", description="Tidy polars DataFrames from a mobile app-store data service."
    )
    parser.add_argument("--version", action="version", version=f"storeframes {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser("demo", help="fetch a small set of frames from the sandbox and print them")
    demo.add_argument("--seed", type=int, default=0, help="the sandbox world's seed (default 0)")

    commands.add_parser("endpoints", help="list the endpoints, their parameters and prices")

    sandbox = commands.add_parser("sandbox", help="the local fake of the service")
    sandbox_commands = sandbox.add_subparsers(dest="sandbox_command", required=True)
    serve = sandbox_commands.add_parser("serve", help="serve the sandbox over HTTP on a loopback address")
    serve.add_argument("--port", type=int, default=8765, help="port (0 picks a free one; default 8765)")
    serve.add_argument("--host", default="127.0.0.1", help="loopback address (default 127.0.0.1)")
    serve.add_argument("--seed", type=int, default=0, help="the world's seed (default 0)")
    serve.add_argument("--today", help="the service's today as YYYY-MM-DD (default: today, UTC)")
    serve.add_argument("--rate-limit", type=_rate, default=(60, 10.0), metavar="N/SECONDS", help="default 60/10")
    serve.add_argument("--latency", type=float, default=0.0, metavar="MS", help="milliseconds per answer")
    serve.add_argument("--fault-rate", type=float, default=0.0, help="share of requests meeting a seeded fault")
    serve.add_argument("--retry-after", action="store_true", help="send Retry-After with 429")
    serve.add_argument("--verbose", action="store_true", help="log every request")
    return parser


def _serve(args: argparse.Namespace) -> int:
    from .sandbox import Faults, SandboxServer

    share = args.fault_rate / 5
    faults = Faults(server_error=share, rate_limited=share, timeout=share, truncated=share, dropped=share)
    server = SandboxServer(
        host=args.host,
        port=args.port,
        verbose=args.verbose,
        seed=args.seed,
        today=args.today,
        rate_limit=args.rate_limit,
        latency=args.latency / 1000.0,
        faults=faults,
        retry_after_header=args.retry_after,
    )
    print(f"storeframes sandbox serving at {server.base_url}", flush=True)
    print(f"  STOREFRAMES_BASE_URL={server.base_url}", flush=True)
    print(f"  STOREFRAMES_API_KEY={server.key}", flush=True)
    print("  press Ctrl-C to stop", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0


def _endpoints() -> int:
    import polars as pl

    from .catalog import ENDPOINTS

    rows = [
        {
            "endpoint": ep.name,
            "path": ep.path,
            "parameters": ", ".join(p.name + ("*" if p.required else "") for p in ep.params),
            "devices": ", ".join(ep.devices),
            "max_apps": ep.max_apps,
            "price": ", ".join(f"{k}={v}" for k, v in vars(ep.cost).items() if v)
            if not ep.cost.per_app_metric
            else ", ".join(f"{k}={v}/app" for k, v in ep.cost.per_app_metric.items()),
        }
        for ep in ENDPOINTS.values()
    ]
    with pl.Config(tbl_rows=-1, fmt_str_lengths=120, tbl_width_chars=200, tbl_hide_dataframe_shape=True):
        print(pl.DataFrame(rows))
    print("* required. Prices are estimates in credits; the service's reported cost wins.")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _run(_parser().parse_args(argv))
    except BrokenPipeError:  # output piped into head or less that closed early
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _run(args: argparse.Namespace) -> int:
    if args.command == "demo":
        from .demo import run_demo

        return run_demo(seed=args.seed)
    if args.command == "endpoints":
        return _endpoints()
    return _serve(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
