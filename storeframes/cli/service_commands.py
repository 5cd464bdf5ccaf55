"""``storeframes demo``, ``storeframes endpoints`` and ``storeframes sandbox serve``: the demo
(its arguments checked before it makes its folder or sends anything), the service's endpoints
and prices, and the sandbox served over HTTP."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from datetime import timedelta
from typing import Any

from .printing import printable

__all__ = ["demo_command", "endpoints", "serve"]


def _dialect(fields: list[tuple[str, str]]) -> Any:
    """The sandbox's :class:`~storeframes.sandbox.Dialect` of ``--dialect FIELD=VALUE`` options, each
    field at most once and its value one of those the dialect allows (``keyword_level``: false or true)."""
    from ..errors import InvalidParameterError
    from ..sandbox import Dialect

    chosen: dict[str, Any] = {}
    for field, text in fields:
        allowed = Dialect.FORMS.get(field)
        if allowed is None:
            raise InvalidParameterError(
                "--dialect", f"{field}={text}", f"FIELD=VALUE with FIELD one of {', '.join(Dialect.FORMS)}"
            )
        if field in chosen:
            raise InvalidParameterError("--dialect", f"{field}={text}", f"each field once; {field} is given twice")
        values = {str(v).lower(): v for v in allowed}
        if text not in values:
            raise InvalidParameterError(
                "--dialect", f"{field}={text}", f"the values of {field}: {', '.join(values)} (the first is the default)"
            )
        chosen[field] = values[text]
    return Dialect(**chosen)


def serve(args: argparse.Namespace) -> int:
    """Serve the sandbox until Ctrl-C; a host that is not loopback, a port that cannot be listened on or a dialect
    it cannot speak is one line on stderr and exit status 2."""
    from ..errors import ConfigurationError, InvalidParameterError
    from ..sandbox import SANDBOX_KEY, Faults, SandboxServer
    from ..sandbox.server import LOOPBACK_HOSTS

    def refuse(text: str) -> int:
        print(printable(f"storeframes sandbox serve: {text}"), file=sys.stderr)
        return 2

    if args.host not in LOOPBACK_HOSTS:
        return refuse(f"--host must be a loopback address ({', '.join(LOOPBACK_HOSTS)}), not {args.host!r}")
    try:
        dialect = _dialect(args.dialect)
    except InvalidParameterError as exc:
        return refuse(f"{type(exc).__name__}: {exc}")
    share = args.fault_rate / 5
    faults = Faults(server_error=share, rate_limited=share, timeout=share, truncated=share, dropped=share)
    try:
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
            api_keys=(args.key,) if args.key else (SANDBOX_KEY,),
            dialect=dialect,
        )
    except ConfigurationError as exc:  # the port: in use, or not this user's to take
        return refuse(str(exc))
    print(f"storeframes sandbox serving at {server.base_url}", flush=True)
    print(f"  STOREFRAMES_BASE_URL={server.base_url}", flush=True)
    print(f"  STOREFRAMES_API_KEY={'(the key given with --key)' if args.key else server.key}", flush=True)
    print(f"  today {server.service.today.isoformat()} (--today YYYY-MM-DD answers as on another day)", flush=True)
    if args.dialect:
        print(f"  answering in {dialect.code()}", flush=True)
    print("  press Ctrl-C to stop", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0


def endpoints() -> int:
    import polars as pl

    from ..catalog import endpoint_rows

    rows = endpoint_rows()
    with pl.Config(tbl_rows=-1, fmt_str_lengths=120, tbl_width_chars=200, tbl_hide_dataframe_shape=True):
        print(pl.DataFrame(rows))
    print("* required. Prices are estimates in credits; the service's reported cost wins.")
    return 0


def _check_demo(args: argparse.Namespace) -> None:
    """Refuse, before the demo makes its folder or sends anything, what it would refuse on the way:
    an ``--out`` that is a file, ``--live`` without the token and the service's address (or with a
    plain-http address), more days than there is history, a bad country, keyword or app id."""
    from ..catalog import EARLIEST_DAY, today_utc, validate
    from ..client import ENV_API_KEY, ENV_BASE_URL
    from ..errors import ConfigurationError, InvalidParameterError
    from ..wire import check_base_url
    from .demo import DEMO_KEYWORDS, DEMO_TODAY

    if args.out.exists() and not args.out.is_dir():
        raise ConfigurationError(
            f"--out {printable(str(args.out))} is a file, not a folder: give a folder for the tables and charts"
        )
    if args.live:
        missing = [name for name in (ENV_API_KEY, ENV_BASE_URL) if not os.environ.get(name)]
        if missing:
            raise ConfigurationError(
                f"--live needs a token and the service's address: {' and '.join(missing)} "
                f"{'is' if len(missing) == 1 else 'are'} not set (set {ENV_API_KEY} to the token and "
                f"{ENV_BASE_URL} to the service's https:// address)"
            )
        check_base_url(os.environ[ENV_BASE_URL])
    today = today_utc() if args.live else DEMO_TODAY
    end = today - timedelta(days=2)  # as the demo counts: final days only
    most = (end - EARLIEST_DAY).days + 1
    if args.days > most:
        raise InvalidParameterError(
            "days",
            args.days,
            f"at most {most:,} days (history starts on {EARLIEST_DAY} and the demo's days end on {end})",
            endpoint="demo",
        )
    start = end - timedelta(days=args.days - 1)
    for keyword in args.keywords or DEMO_KEYWORDS:
        validate(
            "search_history",
            keyword=keyword,
            country=args.country,
            device="iphone",
            start_date=start,
            end_date=end,
            today=today,
        )
    if args.app is not None:
        validate("metadata", apps=args.app, country=args.country, device="iphone")


def demo_command(args: argparse.Namespace) -> int:
    """Run the demo, once its arguments are checked (:func:`_check_demo`); a refusal is one line on stderr."""
    from ..errors import StoreframesError
    from .demo import run_demo

    try:
        _check_demo(args)
        run_demo(
            args.out,
            live=args.live,
            app=args.app,
            keywords=args.keywords,
            country=args.country,
            days=args.days,
            seed=args.seed,
            budget=args.budget,
        )
    except StoreframesError as exc:
        print(f"storeframes demo: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    return 0
