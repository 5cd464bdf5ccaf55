"""The conformance kit's whole run, its reading of a saved report, and its reading of one answer.

Not collected by the test run. Run::

    .venv/bin/python tests/benchmarks/bench_conformance.py           # best of 3
    .venv/bin/python tests/benchmarks/bench_conformance.py --quick   # best of 1

* ``storeframes conformance`` as a user runs it (``sf.conformance.run``: arguments checked, the
  probe sent through a new client and recorded, every exchange read, the report written and every
  file scanned), against a loopback sandbox server answering at once and after 100 ms, beside the
  time the answers themselves took on the wire (each probe's requests, one after another);
* ``sf.conformance.check`` of the report it wrote (the cassettes read with vcrpy, every exchange
  read again by this version);
* ``sf.conformance.read`` of one answer of 5 apps' metadata, beside ``orjson.loads`` of its bytes.

Prints a table, then one JSON line per figure (``{"name", "value", "unit", "context"}``);
``figures(quick)`` returns them for ``run.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from storeframes import catalog, conformance
from storeframes.sandbox import SANDBOX_KEY, SandboxServer, SandboxService


def _best(repeat: int, run: Any) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        out = run()
        best = min(best, time.perf_counter() - started)
    return best, out


def _kit(latency: float, repeat: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as state:
        os.environ["STOREFRAMES_STATE_DIR"] = state  # the machine's rate window, apart from the user's
        folders = iter(range(repeat))
        with SandboxServer(port=0, service=SandboxService(latency=latency)) as server:
            seconds, report = _best(
                repeat,
                lambda: conformance.run(
                    out=Path(state) / f"kit{next(folders)}", api_key=SANDBOX_KEY, base_url=server.base_url
                ),
            )
            requests = sum(len(p.readings) for p in report.probes)
            checked, result = _best(repeat, lambda: conformance.check(Path(state) / "kit0"))
    assert result.passed and not report.differences
    return {
        "latency": latency,
        "seconds": seconds,
        "requests": requests,
        "wire": requests * latency,
        "credits": report.spent,
        "check": checked,
    }


def _read(repeat: int) -> dict[str, Any]:
    service = SandboxService(today="2026-11-20")
    apps = ",".join(service.world.app_ids("ios")[:5])
    path = catalog.API_PREFIX + catalog.ENDPOINTS["metadata"].path
    reply = service.handle("GET", path, [("apps", apps), ("device", "iphone")], {"x-service-key": SANDBOX_KEY})
    exchange = conformance.Exchange("metadata", {"apps": apps, "device": "iphone"}, 200, {}, reply.body)
    read, reading = _best(repeat * 5, lambda: conformance.read(exchange))
    parse, _ = _best(repeat * 5, lambda: orjson.loads(reply.body))
    assert not reading.differences
    return {"bytes": len(reply.body), "read": read, "parse": parse}


def figures(quick: bool = False) -> list[dict[str, Any]]:
    repeat = 1 if quick else 3
    found = []
    for latency in (0.0, 0.1):
        kit = _kit(latency, repeat)
        context = {"latency_s": latency, "requests": kit["requests"], "credits": kit["credits"], "repeat": repeat}
        found.append(
            {
                "name": f"conformance_run_{int(latency * 1000)}ms",
                "value": kit["seconds"],
                "unit": "s",
                "context": {**context, "wire_s": kit["wire"]},
            }
        )
        found.append(
            {
                "name": f"conformance_check_{int(latency * 1000)}ms",
                "value": kit["check"],
                "unit": "s",
                "context": context,
            }
        )
    read = _read(repeat)
    found.append(
        {
            "name": "conformance_read_metadata_5_apps",
            "value": read["read"],
            "unit": "s",
            "context": {"bytes": read["bytes"], "parse_s": read["parse"]},
        }
    )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one run of each, not the best of 3")
    found = figures(parser.parse_args().quick)
    print(f"{'figure':<36} {'value':>10}  context")
    for figure in found:
        value = figure["value"]
        shown = f"{value * 1000:,.1f} ms" if value < 1 else f"{value:,.2f} s"
        print(f"{figure['name']:<36} {shown:>10}  {figure['context']}")
    for figure in found:
        print(json.dumps(figure))


if __name__ == "__main__":
    sys.exit(main())
