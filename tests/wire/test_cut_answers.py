"""Accounting at the seams: answers that arrive cut short, costs past counting, a bucket that stalls at exit.

Each case is served by a loopback server that misbehaves on purpose (tests/_hostile.py), or,
for the bucket, by moto's S3 behind a loopback proxy that stops answering, in a child process
whose exit is timed. What is asserted is what a user relies on: the ledger's rows and their
``cost_estimated`` mark, what was spent against the budget, the warning's text, how long the
interpreter takes to exit.
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import storeframes as sf
from storeframes.catalog import CostModel
from storeframes.ledger import LEDGER_SCHEMA, MOST_CREDITS, conform_ledger, spend_summary
from tests._children import child_env
from tests._hostile import PREFIX, Hostile, Reply, envelope
from tests._s3 import s3_bucket, s3_server  # noqa: F401  (fixtures)
from tests._summary import record
from tests.conftest import ROOT

pytestmark = pytest.mark.timeout(60)

TOKEN = "sk-live-seams-accounting-0123456789"
NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
SEARCH_RESULT = {"date": "2026-11-20", "value": ["284882215", "310633997"]}
SEARCH_PATH = f"{PREFIX}/keywords/search-results/current"
ESTIMATE = 33
"""The search's estimate in these tests (its price list set to 33 credits), what the service charges too."""


def _answer(*, cost: Any = ESTIMATE, **options: Any) -> Reply:
    options.setdefault("kind", "ok")
    return Reply.json(envelope(SEARCH_RESULT, cost=cost, path=SEARCH_PATH), **options)


def _client(server: Hostile, tmp_path: Any, **options: Any) -> sf.Client:
    options = {
        "backoff": (0.0, 0.01),
        "max_tries": 5,
        "progress": False,
        "clock": lambda: NOW,
        "cost_model": {"search": CostModel(base=ESTIMATE)},
        **options,
    }
    return sf.Client(TOKEN, base_url=server.base_url, cache_dir=tmp_path / "cache", **options)


BODY_LENGTH = len(_answer().body)
CUT_SHORT = {
    # the connection drops after 30 bytes of a body announced longer
    "cut by a dropped connection": _answer(kind="200 cut short", cut=30),
    # the whole body arrives, but it is not JSON
    "not JSON": Reply(kind="200 not json", body=b"<html><body>Gateway</body></html>"),
    # the body is as long as announced, and the JSON in it stops half-way
    "JSON cut short": _answer(
        kind="200 json cut short", length=BODY_LENGTH // 2, cut=BODY_LENGTH // 2, headers={"Connection": "close"}
    ),
    # the body trickles in past the deadline
    "cut by the deadline": _answer(kind="200 past the deadline", trickle=0.05, chunk=4, max_seconds=3),
}


@pytest.mark.parametrize("case", list(CUT_SHORT))
def test_answers_cut_short_count_their_estimate_and_the_budget_stops_the_retries(case, tmp_path):
    budget = 100
    with Hostile([CUT_SHORT[case]]) as server:
        client = _client(server, tmp_path, budget=budget, deadline=0.25, timeout=0.25)
        assert client.estimate("search", keyword="maps") == ESTIMATE
        with pytest.raises(sf.BudgetExceededError) as caught:
            client.search_frame("maps")
        # each 200 may have been charged 33: three are 99, a fourth could pass 100, so none is sent
        assert len(server.seen) == 3
        assert client.spent == 3 * ESTIMATE <= budget
        assert (caught.value.spent, caught.value.estimate, caught.value.budget) == (99, ESTIMATE, budget)
        assert str(caught.value) == (
            "budget exceeded: another attempt at search could cost up to 33 credits, 99 already spent, "
            "budget is 100; it is not tried again after 3 attempts (counted in what was spent)"
        )
        ledger = client.ledger
        assert ledger["cost"].to_list() == [ESTIMATE] * 3
        assert ledger["cost_estimated"].to_list() == [True] * 3
        assert ledger["status"].to_list() == [200] * 3  # answers began: they are requests the service received
        assert ledger["max_credit_cost"].to_list() == [None] * 3
        assert ledger["attempt"].to_list() == [1, 2, 3]
        # the next call is refused before anything is sent: 99 + 33 would pass 100
        with pytest.raises(sf.BudgetExceededError):
            client.search_frame("podcasts")
        assert len(server.seen) == 3
        session = client.spend(session=True)
        kept = client.spend()  # read back from the ledger files in the cache folder
        client.close()
    for spend in (session, kept):
        assert spend.select("requests", "credits_spent", "credits_estimated").rows() == [(3, 99, 99)]
    record(
        f"backend failure: cut bodies counted as estimates ({case})",
        faults={CUT_SHORT[case].kind: 3},
        retries=2,
        requests=3,
        rows=3,
        paid_twice=0,  # no answer arrived whole; the 99 credits the service may have charged are all counted
    )


def test_without_a_budget_an_answer_cut_short_then_whole_counts_the_estimate_and_the_cost(tmp_path):
    with Hostile([_answer(kind="200 cut short", cut=30), _answer(cost=21)]) as server:
        client = _client(server, tmp_path)
        answer = client.get("search", keyword="maps")
        assert answer.cost == 21 and len(server.seen) == 2
        ledger = client.ledger
        assert ledger.select("cost", "cost_estimated", "status").rows() == [(ESTIMATE, True, 200), (21, False, 200)]
        assert client.spent == ESTIMATE + 21 == ledger["cost"].sum()
        client.close()


def test_an_error_status_cut_short_counts_nothing(tmp_path):
    """A 503 is free when whole; cut short, it is no answer at all (status null, cost 0), as before."""
    reply = Reply.json({"error": "down"}, kind="503 cut short", status=503, cut=5)
    with Hostile([reply, _answer(cost=21)]) as server:
        client = _client(server, tmp_path)
        client.get("search", keyword="maps")
        assert client.ledger.select("cost", "cost_estimated", "status").rows() == [(0, False, None), (21, False, 200)]
        client.close()


@pytest.mark.parametrize(
    "cost", [2**63, 2**64 + 7, 10.0**30, MOST_CREDITS + 1], ids=["2**63", "2**64+7", "1e30", "past 2**53"]
)
def test_a_cost_past_counting_keeps_the_answer_counts_the_estimate_and_the_ledger_reads(cost, tmp_path):
    with Hostile([_answer(cost=cost, kind="absurd cost")]) as server:
        client = _client(server, tmp_path)
        with pytest.warns(sf.CostWarning) as warned:
            first = client.search_frame("maps")
        message = str(warned[0].message)
        as_read = float(cost) if cost > 2**64 else cost  # a JSON reader gives a number past 64 bits as a float
        assert f"search reported a cost of {as_read!r} credits, more than any answer costs" in message
        assert "the answer is kept" in message and f"estimate, {ESTIMATE} credits" in message
        assert "cost_estimated" in message
        again = client.search_frame("maps")  # from the cache: not paid again
        assert len(server.seen) == 1 and again.equals(first)
        ledger = client.ledger  # never raises
        assert ledger.select("cost", "cost_estimated", "from_cache").rows() == [
            (ESTIMATE, True, False),
            (0, False, True),
        ]
        assert ledger["max_credit_cost"].to_list()[0] is None
        assert client.spent == ESTIMATE and client.saved == ESTIMATE
        kept = client.spend()
        assert kept.select("credits_spent", "credits_estimated", "cache_hits").rows() == [(ESTIMATE, ESTIMATE, 1)]
        client.close()
    record(
        "backend failure: a cost past counting kept as an estimate",
        faults={"absurd cost": 1},
        requests=len(server.seen),
        rows=2,
        paid_twice=(len(server.seen) - 1) * ESTIMATE,
    )


def test_a_ledger_file_written_before_cost_estimated_still_reads():
    """Files of earlier versions lack the column: an estimated row is the one with max_credit_cost null."""
    old = pl.DataFrame(
        {
            "time": [NOW, NOW],
            "endpoint": ["search", "search"],
            "params": ["{}", "{}"],
            "cost": [33, 11],
            "max_credit_cost": [None, 11],
            "status": [200, 200],
            "attempt": [1, 1],
            "elapsed_ms": [1.0, 1.0],
            "from_cache": [False, False],
            "saved": [0, 0],
        },
        schema={
            name: LEDGER_SCHEMA[name]
            for name in LEDGER_SCHEMA
            if name not in ("service", "row", "cost_estimated", "reserved")
        },
    )
    read = conform_ledger(old, "old")
    assert read.schema == LEDGER_SCHEMA
    assert read["cost_estimated"].to_list() == [True, False]
    assert spend_summary(read).select("credits_spent", "credits_estimated").rows() == [(44, 33)]


# -- a bucket that stalls at exit ----------------------------------------------------------


class StallingProxy:
    """A loopback TCP proxy to moto's S3 that, once ``flag`` exists, passes nothing more and never
    answers, on the connections it holds and on new ones: a bucket that stalled (a network that
    dropped its packets, an endpoint that hangs)."""

    def __init__(self, upstream: str, flag: Path):
        host, _, port = upstream.removeprefix("http://").partition(":")
        self.upstream = (host, int(port))
        self.flag = flag
        self.stopping = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.1)
        self.endpoint = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                client, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:  # closed
                return
            self.held.append(client)
            if self.flag.exists():
                continue  # accepted, never answered
            upstream = socket.create_connection(self.upstream)
            self.held.append(upstream)
            for source, target in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, target), daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket) -> None:
        source.settimeout(0.1)
        while not self.stopping.is_set():
            try:
                data = source.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            if not data:
                return
            while self.flag.exists() and not self.stopping.is_set():  # stalled: hold what came
                time.sleep(0.05)
            with contextlib.suppress(OSError):
                target.sendall(data)

    def close(self) -> None:
        self.stopping.set()
        for held in [self.listener, *self.held]:
            with contextlib.suppress(OSError):
                held.close()


@pytest.fixture
def stalling_bucket(s3_bucket, tmp_path) -> Iterator[tuple[Any, StallingProxy]]:  # noqa: F811
    proxy = StallingProxy(s3_bucket.endpoint, tmp_path / "stalled")
    try:
        yield s3_bucket, proxy
    finally:
        proxy.close()


STALLED_EXIT = """
import json, sys, time
import polars as pl
import storeframes as sf

args = json.loads(sys.argv[1])
client = sf.sandbox.client(cache_dir=args["url"], storage_options=args["options"], progress=False)
client.get("search", keyword="maps")  # an answer, and its ledger rows, kept in the bucket
entry = client.cache.entries("search")[0]
open(args["flag"], "w").close()  # the bucket stalls from now on
client.cache.frames.WRITE_BEHIND_ROWS = 1
client.cache.frames.write(entry, "seams", "v1", pl.DataFrame({"n": [1, 2, 3]}), later=True)
print("submitted", flush=True)
# the script ends here, without closing the client: the interpreter exits
"""


@pytest.mark.heavy
@pytest.mark.timeout(120)
@pytest.mark.processes
@pytest.mark.s3
def test_the_exit_waits_a_few_seconds_for_a_stalled_bucket_and_says_what_was_not_written(stalling_bucket, tmp_path):
    bucket, proxy = stalling_bucket
    wait = 2.0
    options = {**bucket.storage_options, "aws_endpoint_url": proxy.endpoint, "aws_allow_http": "true"}
    args = {"url": bucket.url, "options": options, "flag": str(proxy.flag)}
    env = child_env(STOREFRAMES_EXIT_WAIT=f"{wait:g}")
    child = subprocess.Popen(
        [sys.executable, "-c", STALLED_EXIT, json.dumps(args)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        submitted = time.monotonic()
        assert line.strip() == "submitted", child.communicate(timeout=60)[1][-3000:]
        _, err = child.communicate(timeout=60)
        exited = time.monotonic() - submitted
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate(timeout=30)  # its pipes read to the end and closed
    assert child.returncode == 0, err[-3000:]
    # it waited for the write, the shared deadline of the exit, and no longer
    assert wait - 0.2 <= exited <= wait + 3.0, (exited, err[-3000:])
    assert (
        f"storeframes: 1 frame file was not written to the cache at {bucket.url}: it did not answer within "
        f"{wait:g} s of the exit ($STOREFRAMES_EXIT_WAIT sets how long to wait). The answers they are made from "
        "were kept in the cache before them: the frames are made again from those when next read, and no credit "
        "is spent again."
    ) in err
    assert "the ledger's files were not merged" in err
    assert bucket.storage_options["aws_secret_access_key"] not in err
    # what was kept before the stall reads, once the bucket answers again
    proxy.flag.unlink()
    with sf.sandbox.client(cache_dir=bucket.url, storage_options=options, progress=False) as again:
        assert again.cache is not None and len(again.cache.entries("search")) == 1
        frame = again.search_frame("maps")
        assert frame.height > 0 and again.spent == 0  # served from the answer kept: not paid again
    record(
        "backend failure: stalled bucket at exit",
        faults={"stalled bucket": 1},
        requests=1,
        rows=1,
        paid_twice=again.spent,
    )
