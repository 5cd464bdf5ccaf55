"""Child processes of the tests: their environment, and a script SIGKILLed half-way when the test says so."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .conftest import ROOT


def child_env(**changes: str | None) -> dict[str, str]:
    """The environment of a child process: this test's, storeframes importable, with ``changes`` (None removes)."""
    env = {k: v for k, v in os.environ.items() if k not in changes}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env.update({k: v for k, v in changes.items() if v is not None})
    return env


def sigkill_when(script: str, args: dict[str, Any], tmp_path: Path, ready: Callable[[], bool]) -> None:
    """Run ``python -c script json(args)``, SIGKILL it as soon as ``ready()``, and check it died unfinished.

    The child must not exit on its own first (its stderr is shown if it does), must get
    ready within 90 s, and must not have printed ``finished``.
    """
    env = child_env()
    errors = tmp_path / "child.err"
    with open(errors, "wb") as stderr:
        child = subprocess.Popen(
            [sys.executable, "-c", script, json.dumps(args)], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=stderr
        )
        try:
            deadline = time.monotonic() + 90
            while not ready():
                assert child.poll() is None, errors.read_text()
                assert time.monotonic() < deadline, "the child sent too little in 90 s"
                time.sleep(0.005)
            os.kill(child.pid, signal.SIGKILL)
            out, _ = child.communicate(timeout=60)
        finally:
            if child.poll() is None:
                child.kill()
                child.communicate(timeout=60)  # its pipes read to the end and closed
    assert child.returncode == -signal.SIGKILL and b"finished" not in out
