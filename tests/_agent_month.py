"""A month of the tracking notebook's tracker, replayed on the sandbox into a folder: what the tests of
``storeframes mcp`` and its evaluation (``tests/evaluation/agent_questions.py``) ask questions of.

The spec is the one ``notebooks/tracking.ipynb`` writes (its apps, keywords, items and alerts), so the
answers the tools give can be set beside the notebook's. 30 daily runs, 2026-10-22 to 2026-11-20, in
about 10 seconds.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import storeframes as sf
from storeframes.sandbox import World

APP = "3233849169"
COMPETITORS = ["394079159", "1395556972", "1286838609", "6441354028"]
APPS = [APP, *COMPETITORS]
DOWNLOADS_APPS = APPS[:3]
KEYWORDS = [World.EXAMPLE_KEYWORDS[0], "photo filters", "collage maker"]
UNTRACKED = World.UNTRACKED_KEYWORD
LAST_DAY = date(2026, 11, 20)
DAYS = [LAST_DAY - timedelta(days=n) for n in range(29, -1, -1)]
TRACKER = "photo-editors"
ROOT = Path(__file__).resolve().parent.parent
"""The checkout the tests are of: its storeframes is the one a server under test imports."""
MONTH_BUDGET = 12_000


def spec_text(cache: Path, extra: str = "") -> str:
    """The tracking notebook's spec, its cache in ``cache``; ``extra`` (TOML: more items or alerts) after it."""
    return f"""
[tracker]
name = "{TRACKER}"
cache_dir = {json.dumps(cache.as_posix())}
budget_per_month = {MONTH_BUDGET}
country = "us"
device = "iphone"

[[track]]
endpoint = "search"
keywords = {json.dumps([*KEYWORDS, UNTRACKED])}

[[track]]
endpoint = "search_history"
keywords = {json.dumps([*KEYWORDS, UNTRACKED])}
lookback = "7d"

[[track]]
endpoint = "metadata"
apps = {json.dumps(APPS)}

[[track]]
endpoint = "metrics"
name = "downloads"
apps = {json.dumps(DOWNLOADS_APPS)}
metrics = ["downloads"]

[[track]]
endpoint = "metrics"
name = "ratings"
apps = {json.dumps(APPS)}
metrics = ["ratings"]
every = "7d"

[[alert]]
rule = "rank_drop"
apps = {json.dumps(APPS)}
keywords = {json.dumps(KEYWORDS)}
places = 5
within = 20

[[alert]]
rule = "top"
apps = {json.dumps(APPS)}
keywords = {json.dumps(KEYWORDS[:1])}
n = 10

[[alert]]
rule = "listing_change"
apps = {json.dumps(COMPETITORS)}
targets = ["title", "subtitle", "screenshots", "icon", "price"]

[[alert]]
rule = "budget"
at = 0.8
{extra}"""


def replay(folder: Path, extra: str = "") -> Path:
    """A month of daily runs into ``folder/cache``; the spec's path (``folder/tracking.toml``); ``extra`` as for
    :func:`spec_text`."""
    folder.mkdir(parents=True, exist_ok=True)
    spec = folder / "tracking.toml"
    spec.write_text(spec_text((folder / "cache").resolve(), extra), encoding="utf-8")
    tracker = sf.Tracker.from_toml(spec, sandbox=True, rate_limit=(600, 1.0))
    for day in DAYS:
        result = tracker.run(today=day)
        assert result.status == "ok", result
    return spec


def server_env(**extra: str) -> dict[str, str]:
    """The environment of a server under test: this one's, without a token unless given, the storeframes of this
    checkout first on the path (not another one the interpreter has installed)."""
    env = {k: v for k, v in os.environ.items() if k not in ("STOREFRAMES_API_KEY", "STOREFRAMES_BASE_URL")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env.update(extra)
    return env


def server_command(spec: Path, *flags: str) -> tuple[str, list[str]]:
    """``storeframes mcp`` over the replayed month's tracker, on the sandbox pinned to its last day."""
    return sys.executable, ["-m", "storeframes", "mcp", "--tracker", str(spec), "--sandbox",
                            "--today", LAST_DAY.isoformat(), *flags]  # fmt: skip


def rows(result: Any) -> list[dict[str, Any]]:
    """The rows of a tool's structured result: inside ``untrusted_third_party_data`` for a tool whose rows come
    from the service or the cache, at the top for the others (the server's own words)."""
    data = result.structured_content
    return list(data.get("untrusted_third_party_data", data)["rows"])
