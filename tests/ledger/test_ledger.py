"""One true ledger: every attempt is a row, every reported cost counts, and the rows are kept
as soon as a request ends, in any store, once each, per service.

The service's behaviour matters here, so the requests go to loopback servers: the sandbox
(:class:`~storeframes.sandbox.SandboxServer`) and a tiny server that misbehaves on purpose,
answering a 500, a 422 or a malformed answer whose envelope says it was charged.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import storeframes as sf
from storeframes import catalog
from storeframes.answers import Attempt
from storeframes.cache import Cache
from storeframes.cache.stores import MemoryStore
from storeframes.cli import main
from storeframes.credits import LEDGER_CHUNK, MERGE_AFTER, Credits
from storeframes.ledger import LEDGER_SCHEMA, SPEND_SCHEMA
from storeframes.sandbox import API_PREFIX, SANDBOX_KEY, Faults, SandboxServer, SandboxService, World
from tests._children import child_env, sigkill_when
from tests.conftest import SANDBOX_TODAY, sandbox_clock

WORLD = World(0)
APPS = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US][:200]
SEARCH_PATH = API_PREFIX + catalog.ENDPOINTS["search"].path
METADATA_PATH = API_PREFIX + catalog.ENDPOINTS["metadata"].path
FAST = {"backoff": (0.0, 0.0), "progress": False}


def _params(params: Any) -> str:
    """Canonical parameters as the ledger writes them."""
    return json.dumps(dict(params), sort_keys=True)


# -- a server that misbehaves on purpose -------------------------------------------------------

Behaviour = Callable[[int, str, dict[str, str], dict[str, str]], "tuple[int, Any] | None"]
"""(arrival number, path, query, headers) -> (status, JSON body), or None for the sandbox's own answer."""


def _charged(path: str, params: dict[str, str], status: int, *, cost: int = 7, **members: Any) -> dict[str, Any]:
    """An envelope that says the request was charged ``cost`` credits."""
    request = {"path": path, "params": params, "cost": cost, "max_credit_cost": 10, "status": status}
    return {**members, "metadata": {"request": request, "response": None}}


FAILURES: dict[str, Callable[[str, dict[str, str]], tuple[int, Any]]] = {
    "500": lambda path, params: (
        500,
        _charged(path, params, 500, error={"code": "InternalServerError", "message": "boom"}),
    ),
    "422": lambda path, params: (
        422,
        _charged(path, params, 422, error={"code": "ValidationError", "message": "no such keyword"}),
    ),
    "no result": lambda path, params: (200, _charged(path, params, 200)),  # a shape error
}


class Loopback:
    """A threading HTTP server on 127.0.0.1 that answers as ``behaviour`` says (else as the sandbox)."""

    def __init__(self, behaviour: Behaviour):
        self.arrivals: list[tuple[str, dict[str, str]]] = []
        self.service = SandboxService(today=SANDBOX_TODAY)
        lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                url = urlsplit(self.path)
                query = dict(parse_qsl(url.query, keep_blank_values=True))
                with lock:
                    number = len(outer.arrivals)
                    outer.arrivals.append((url.path, query))
                answer = behaviour(number, url.path, query, dict(self.headers))
                if answer is None:
                    headers = {k.lower(): v for k, v in self.headers.items()}
                    headers["x-service-key"] = SANDBOX_KEY
                    reply = outer.service.handle("GET", url.path, list(query.items()), headers)
                    status, body = reply.status, reply.body
                else:
                    status, body = answer[0], json.dumps(answer[1]).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self._httpd.server_address[1]}{API_PREFIX}"

    def __enter__(self) -> Loopback:
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _failing(kind: str) -> Behaviour:
    return lambda number, path, query, headers: FAILURES[kind](path, query)


@contextmanager
def _quiet() -> Iterator[list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught


# -- a billed answer that fails ------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(FAILURES))
def test_a_charged_answer_that_fails_counts_in_spent_the_ledger_and_the_budget(tmp_path, kind):
    error = {"500": sf.ServerError, "422": sf.ServiceValidationError, "no result": sf.ResponseShapeError}[kind]
    estimate = 10  # a search: what the budget holds for each request
    with Loopback(_failing(kind)) as server:
        client = sf.Client("k", base_url=server.base_url, cache_dir=tmp_path, max_tries=1, budget=30, **FAST)
        for _ in range(3):  # 0 + 10, 7 + 10, 14 + 10 are within the budget of 30
            with pytest.raises(error):
                client.get("search", keyword="maps")
            # the failure was charged: it counts at once, in memory and in the folder
            assert client.spent == client.ledger["cost"].sum() > 0
            assert Cache(tmp_path).ledger.read()["cost"].sum() == client.spent
        assert client.spent == 3 * 7 and len(server.arrivals) == 3
        with pytest.raises(sf.BudgetExceededError):  # 21 + 10 would pass the budget: nothing is sent
            client.get("search", keyword="maps")
        assert len(server.arrivals) == 3 and client.spent == 21 <= client.budget < client.spent + estimate
        ledger = client.ledger
        assert ledger["cost"].to_list() == [7, 7, 7] and ledger["max_credit_cost"].to_list() == [10, 10, 10]
        assert ledger["status"].to_list() == [{"500": 500, "422": 422, "no result": 200}[kind]] * 3
        assert client.spend()["credits_spent"].to_list() == [21]
        client.close()


def test_spent_is_the_sum_of_the_ledger_at_every_moment(tmp_path):
    """While a request is retried after a charged 500, the ledger and ``spent`` agree."""
    answered, release = threading.Event(), threading.Event()

    def behaviour(number: int, path: str, query: dict[str, str], headers: dict[str, str]) -> Any:
        if number == 0:
            answered.set()
            return FAILURES["500"](path, query)
        release.wait(10)
        return None  # the sandbox's answer

    with Loopback(behaviour) as server:
        client = sf.Client("k", base_url=server.base_url, cache_dir=tmp_path, max_tries=2, **FAST)
        worker = threading.Thread(target=client.get, args=("search",), kwargs={"keyword": "maps"})
        worker.start()
        try:
            assert answered.wait(10)
            deadline = time.monotonic() + 5
            while len(server.arrivals) < 2 and time.monotonic() < deadline:  # the retry is held by the server
                time.sleep(0.005)
            assert len(server.arrivals) == 2
            assert client.ledger["cost"].sum() == client.spent  # no row counted before its cost is
        finally:
            release.set()
            worker.join(10)
        assert client.spent == client.ledger["cost"].sum() == 7 + 10
        assert client.ledger["status"].to_list() == [500, 200]
        client.close()


# -- attempts without an answer -----------------------------------------------------------------


def test_an_attempt_without_an_answer_is_a_row_with_no_status_and_no_cost(tmp_path):
    faults = Faults(timeout=1.0, stall_seconds=0.3, seed=1)
    with SandboxServer(port=0, today=SANDBOX_TODAY, faults=faults) as server:
        client = sf.Client(server.key, base_url=server.base_url, cache_dir=tmp_path, max_tries=2, timeout=0.15, **FAST)
        with pytest.raises(sf.TransportError):
            client.get("search", keyword="maps")
        ledger = client.ledger
        assert ledger.height == 2 and ledger["status"].null_count() == 2 and ledger["cost"].sum() == 0
        assert ledger["attempt"].to_list() == [1, 2]
        kept = Cache(tmp_path).ledger.read()
        assert kept["row"].to_list() == ledger["row"].to_list()  # kept as soon as the request ended
        spend = client.spend().row(0, named=True)
        assert spend["requests"] == 0 and spend["credits_spent"] == 0  # requests counts answers received
        client.close()


# -- killed half-way ---------------------------------------------------------------------------

KILLED_FETCH = """
import json, sys
from datetime import UTC, date, datetime
import storeframes as sf

args = json.loads(sys.argv[1])
today = date.fromisoformat(args["today"])
client = sf.Client(
    args["key"],
    base_url=args["base_url"],
    cache_dir=args["folder"],
    max_workers=2,
    rate_limit=(60, 1.0),
    clock=lambda: datetime.combine(today, datetime.now(UTC).time(), UTC),
    progress=False,
)
client.metadata_frame(args["apps"])
print("finished the whole plan")
"""


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.processes
def test_a_process_killed_half_way_leaves_a_paid_row_for_every_answer_it_kept(tmp_path):
    folder = tmp_path / "cache"
    with SandboxServer(port=0, today=SANDBOX_TODAY, rate_limit=(60, 1.0), latency=0.08) as server:
        args = {
            "key": server.key,
            "base_url": server.base_url,
            "folder": str(folder),
            "apps": APPS,
            "today": SANDBOX_TODAY.isoformat(),
        }
        arrivals = server.service.arrivals
        sigkill_when(KILLED_FETCH, args, tmp_path, lambda: sum(a.status == 200 for a in list(arrivals)) >= 20)
        time.sleep(0.5)  # what was in flight ends at the server
        answered = {_params(a.params) for a in list(arrivals) if a.status == 200}

        with _quiet():
            cached = Cache(folder).entries("metadata")
            ledger = Cache(folder).ledger.read()
        assert 0 < len(cached) < 40
        paid = ledger.filter(~pl.col("from_cache") & (pl.col("status") == 200))
        cost_of = dict(zip(paid["params"], paid["cost"], strict=True))
        # a row for every answer the cache kept, with what it cost
        assert {_params(e.params): e.cost for e in cached}.items() <= cost_of.items()
        assert (paid["cost"] > 0).all() and paid["row"].n_unique() == paid.height == len(cost_of)
        # and rows only for answers the server gave; at most the two in flight were paid and not kept
        assert set(cost_of) <= answered and len(set(cost_of)) - len(cached) <= 2
        assert (ledger["service"] == "service").all()
        # and every request the server answered (and charged) is in the ledger: settled, or at its estimate
        sent = ledger.filter(~pl.col("from_cache"))
        assert answered <= set(sent["params"]) and sent.filter("reserved").height <= 2
        charged = sum(a.cost for a in list(arrivals))
        assert sent.filter(~pl.col("reserved"))["cost"].sum() <= charged <= sent["cost"].sum()

        # a rerun saves only what was really cached, and pays for the rest
        with sf.Client(
            server.key, base_url=server.base_url, cache_dir=folder, rate_limit=(60, 1.0), clock=sandbox_clock, **FAST
        ) as rerun:
            rerun.metadata_frame(APPS)
            hits = rerun.ledger.filter(pl.col("from_cache"))
            assert hits.height == len(cached) and rerun.saved == sum(e.cost for e in cached) > 0
            assert set(hits["params"]) == {_params(e.params) for e in cached}
            fetched = rerun.ledger.filter(~pl.col("from_cache") & (pl.col("status") == 200))
            assert set(fetched["params"]).isdisjoint(hits["params"]) and fetched.height == 40 - len(cached)
            spend = rerun.spend(session=True).row(0, named=True)
            assert spend["credits_saved"] == rerun.saved and spend["cache_hits"] == len(cached)


# -- a write that fails is tried again -----------------------------------------------------------


class FlakyStore(MemoryStore):
    """A store in memory whose next ``failures`` writes under ``ledger/`` fail, and whose
    removals under ``ledger/`` may be ignored (a process stopped between two steps)."""

    def __init__(self) -> None:
        super().__init__()
        self.failures = 0
        self.passing = 0  # writes under ``ledger/`` that pass before the failures begin
        self.keep_removed = False

    def put(self, key: str, data: bytes) -> None:
        if key.startswith("ledger/") and self.passing > 0:
            self.passing -= 1
        elif key.startswith("ledger/") and self.failures > 0:
            self.failures -= 1
            raise OSError("no space left on device (on purpose)")
        super().put(key, data)

    def delete(self, key: str) -> None:
        if not (key.startswith("ledger/") and self.keep_removed):
            super().delete(key)


def _ids(frame: pl.DataFrame) -> list[str]:
    return sorted(frame["row"].to_list())


def test_a_ledger_write_that_fails_is_tried_again_and_no_row_is_lost_or_doubled():
    store = FlakyStore()
    cache = Cache(store)
    with sf.sandbox.client(today=SANDBOX_TODAY, cache_dir=cache, progress=False) as client, _quiet() as caught:
        store.passing, store.failures = 1, 2  # the reservation passes; the request's rows, then the call's end fail
        client.get("search", keyword="maps")
        held = cache.ledger.read()  # the reservation stays, counted at the request's estimate
        assert held.select("reserved", "cost_estimated", "status").rows() == [(True, True, None)]
        assert held["cost"].sum() >= client.spent > 0 and client.ledger.height == 1
        client.get("search", keyword="notes")  # its row, and the first one's over its reservation, now
        assert cache.ledger.read().height == client.ledger.height == 2
        assert not cache.ledger.read()["reserved"].any()
        store.failures = 1  # the last write of the session: a cache hit's row
        client.get("search", keyword="maps")
        assert cache.ledger.read().height == 2 and client.ledger.height == 3
    assert [issubclass(w.category, sf.CacheWarning) for w in caught] == [True] * 3  # one per failure
    kept = cache.ledger.read()
    assert kept.height == 3  # close() wrote the hit
    assert _ids(kept) == _ids(client.ledger) and kept["row"].n_unique() == 3
    assert kept["saved"].sum() == client.saved > 0 and kept["cost"].sum() == client.spent > 0


def test_a_merge_that_fails_keeps_the_small_files_and_is_tried_again():
    store = FlakyStore()
    cache = Cache(store)
    credits = Credits(clock=sandbox_clock, sink=cache.ledger)
    for i in range(3):
        _settle(credits, i)
    store.failures = 1
    with _quiet() as caught:
        credits.close()  # the chunk cannot be written: nothing is removed
    assert len(caught) == 1 and len(store.list("ledger/")) == 3 and cache.ledger.read().height == 3
    credits.close()
    assert store.list("ledger/") == [f"ledger/{credits.session}-0000.parquet"]
    assert _ids(cache.ledger.read()) == _ids(credits.ledger)


# -- small files and their merge ---------------------------------------------------------------


def _settle(credits: Credits, i: int, *, cost: int = 10) -> None:
    reservation = credits.reserve("search", 10)
    reservation.attempt(Attempt("search", {"keyword": f"k{i}"}, 200, cost, 10, 1, 0.01))
    reservation.settle()


def test_the_small_files_of_a_session_are_merged_into_chunks_each_row_counted_once():
    store = FlakyStore()
    cache = Cache(store)
    credits = Credits(clock=sandbox_clock, sink=cache.ledger)
    most = 0
    for i in range(3000):
        _settle(credits, i)
        if i % 2 == 0:
            credits.record_hit("search", {"keyword": f"k{i}"}, saved=10)
        if i % 10 == 0:
            credits.flush()  # the end of a call: the hits in one small file
        most = max(most, sum("-r" in key for key in store.list("ledger/")))
    assert most <= MERGE_AFTER + 1  # never many small files: they are merged as they come
    kept = cache.ledger.read()
    assert credits.ledger.height == 3000 + 1500
    assert kept.height == 4500 - 4  # the hits since the last flush (2992 ... 2998) wait for the next one
    credits.close()
    names = store.list("ledger/")
    assert names == [f"ledger/{credits.session}-{chunk:04d}.parquet" for chunk in range(5)]
    heights = [pq.read_metadata(pa.BufferReader(store.get(name))).num_rows for name in names]
    assert heights == [LEDGER_CHUNK] * 4 + [4500 - 4 * LEDGER_CHUNK]
    kept = cache.ledger.read()
    assert kept.height == 4500 and kept["row"].n_unique() == 4500 and _ids(kept) == _ids(credits.ledger)
    assert kept["cost"].sum() == credits.spent == 30000 and kept["saved"].sum() == credits.saved == 15000
    assert kept.schema == LEDGER_SCHEMA
    assert kept.sort("row").equals(credits.ledger.sort("row"))


def test_a_row_in_a_small_file_and_in_its_chunk_is_counted_once():
    store = FlakyStore()
    store.keep_removed = True  # as if the process stopped after writing the chunk, before removing
    cache = Cache(store)
    credits = Credits(clock=sandbox_clock, sink=cache.ledger)
    for i in range(5):
        _settle(credits, i)
    credits.close()
    files = store.list("ledger/")
    assert len(files) == 6  # five small files and the chunk holding their rows
    raw = sum(pq.read_metadata(pa.BufferReader(store.get(name))).num_rows for name in files)
    assert raw == 10
    kept = cache.ledger.read()
    assert kept.height == 5 and _ids(kept) == _ids(credits.ledger) and kept["cost"].sum() == 50


def test_ledger_files_of_an_earlier_version_are_read_as_an_unknown_service(tmp_path):
    old = pl.DataFrame(
        {
            "time": [datetime(2026, 11, 1, 12, tzinfo=UTC), datetime(2026, 11, 1, 13, tzinfo=UTC)],
            "endpoint": ["search", "search"],
            "params": [_params({"keyword": "maps"})] * 2,
            "cost": [10, 0],
            "max_credit_cost": [10, 0],
            "status": [200, 200],
            "attempt": [1, 0],
            "elapsed_ms": [1.0, 0.0],
            "from_cache": [False, True],
            "saved": [0, 10],
        },
        schema={
            name: LEDGER_SCHEMA[name]
            for name in LEDGER_SCHEMA
            if name not in ("service", "row", "cost_estimated", "reserved")
        },
    )
    (tmp_path / "ledger").mkdir()
    old.write_parquet(tmp_path / "ledger" / "20261101T120000000000Z-1-abcdef-0000.parquet")
    with sf.sandbox.client(today=SANDBOX_TODAY, cache_dir=tmp_path, progress=False) as client:
        client.get("search", keyword="maps")
        kept = Cache(tmp_path).ledger.read()
        assert kept.schema == LEDGER_SCHEMA and kept.height == 3
        assert kept["service"].to_list() == ["unknown", "unknown", "sandbox-0"]
        assert kept["row"].to_list()[:2] == [
            "20261101T120000000000Z-1-abcdef-0000#0",
            "20261101T120000000000Z-1-abcdef-0000#1",
        ]
        assert client.spend()["service"].to_list() == ["sandbox-0"]  # never mixed with its own
        every = client.spend(service="all")
        assert every["service"].to_list() == ["sandbox-0", "unknown"] and every["credits_saved"].to_list()[1] == 10
    assert Cache(tmp_path).info()["by_service"]["unknown"] == {"entries": 0, "paid": 0, "spent": 10, "saved": 10}


# -- each row says which service it belongs to ---------------------------------------------------


def test_a_sandbox_and_the_service_in_one_folder_are_counted_apart(tmp_path, capsys):
    with sf.sandbox.client(today=SANDBOX_TODAY, cache_dir=tmp_path, progress=False) as sandbox:
        sandbox.get("metadata", apps=APPS[:3])
        sandbox.get("metadata", apps=APPS[:3])  # saved by the cache
        with (
            SandboxServer(port=0, today=SANDBOX_TODAY) as server,
            sf.Client(server.key, base_url=server.base_url, cache_dir=tmp_path, clock=sandbox_clock, **FAST) as real,
        ):
            real.get("metadata", apps=APPS[:3])  # the sandbox's answers are not the service's: fetched
            real.get("search", keyword="maps")
            assert len(server.service.arrivals) == 2 and real.namespace == "service"
            mine = real.spend()
            assert mine["service"].unique().to_list() == ["service"]
            assert mine["credits_spent"].sum() == real.spent and mine["credits_saved"].sum() == 0
            theirs = sandbox.spend()
            assert theirs["service"].to_list() == ["sandbox-0"]
            assert theirs.row(0, named=True)["credits_spent"] == sandbox.spent == theirs["credits_saved"].sum()
            every = real.spend(service="all")
            assert every.schema == SPEND_SCHEMA and every.columns[0] == "service"
            assert every["service"].to_list() == ["service", "service", "sandbox-0"]  # the real service first
            assert every.filter(pl.col("service") == "sandbox-0")["credits_spent"].sum() == sandbox.spent
            assert real.spend(service="sandbox-0").equals(theirs)
            assert real.spend(service="nobody").is_empty()
            assert real.spend(session=True)["credits_spent"].sum() == real.spent
    info = Cache(tmp_path).info()
    assert info["credits_paid"] == info["credits_spent"] == real.spent and info["credits_saved"] == 0
    assert info["by_service"]["sandbox-0"] == {
        "entries": 1,
        "paid": sandbox.spent,
        "spent": sandbox.spent,
        "saved": sandbox.spent,
    }
    assert main(["cache", "info", "--cache-dir", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    shown = {key.strip(): value.strip() for key, value in (line.split(":", 1) for line in lines)}
    assert shown["cached answers"] == "3"
    assert shown["credits paid"] == shown["credits spent"] == f"{real.spent:,}" and shown["credits saved"] == "0"
    assert shown["sandbox-0"] == (
        f"1 cached answer, {sandbox.spent:,} credits paid, {sandbox.spent:,} spent, {sandbox.spent:,} saved "
        "(not the service's credits)"
    )
    keys = [line.split(":", 1)[0].strip() for line in lines]
    assert keys.index("credits paid") < keys.index("sandbox-0")  # the real service's figures first


# -- the token -------------------------------------------------------------------------------


def test_the_token_never_appears_in_a_ledger_file(tmp_path):
    token = "sk-ledger-5f3a9c1d2e7b4a60"

    def behaviour(number: int, path: str, query: dict[str, str], headers: dict[str, str]) -> Any:
        echo = {**query, "key": headers.get("x-service-key", "")}  # a service that echoes the token back
        if number == 0 or query.get("keyword") == "notes":
            return 500, _charged(path, echo, 500, error={"code": "Boom", "message": f"bad token {token}"})
        return 200, _charged(path, echo, 200, cost=10, result={"value": ["1"]})

    with Loopback(behaviour) as server:
        client = sf.Client(token, base_url=server.base_url, cache_dir=tmp_path, max_tries=2, **FAST)
        client.get("search", keyword="maps")
        with pytest.raises(sf.ServerError):
            client.get("search", keyword="notes")
        client.close()
    assert len(server.arrivals) == 4
    files = list((tmp_path / "ledger").glob("*.parquet"))
    assert files and Cache(tmp_path).ledger.read()["cost"].sum() == client.spent > 0
    for path in files:
        assert token.encode() not in path.read_bytes()
        table = pq.read_table(path)
        text = io.StringIO()
        pl.from_arrow(table).write_csv(text)
        assert token not in text.getvalue() and token not in str(table.schema.metadata)
    assert token not in client.ledger.write_csv()
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and token.encode() in p.read_bytes()]


def test_spend_summary_keeps_services_apart_and_counts_answers_received():
    rows = [
        {"service": "service", "status": 200, "cost": 10, "from_cache": False, "saved": 0},
        {"service": "service", "status": None, "cost": 0, "from_cache": False, "saved": 0},
        {"service": "service", "status": 500, "cost": 7, "from_cache": False, "saved": 0},
        {"service": "sandbox-0", "status": 200, "cost": 11, "from_cache": False, "saved": 0},
        {"service": "sandbox-0", "status": 200, "cost": 0, "from_cache": True, "saved": 11},
    ]
    now = datetime(2026, 11, 20, 12, tzinfo=UTC)
    ledger = pl.DataFrame(
        [
            {
                "time": now + timedelta(seconds=i),
                "endpoint": "search",
                "params": "{}",
                "max_credit_cost": 10,
                "attempt": 1,
                "elapsed_ms": 1.0,
                "row": f"s-{i}",
                **row,
            }
            for i, row in enumerate(rows)
        ],
        schema=LEDGER_SCHEMA,
    )
    summary = sf.ledger.spend_summary(ledger)
    assert summary.select("service", "requests", "credits_spent", "cache_hits", "credits_saved").rows() == [
        ("service", 2, 17, 0, 0),
        ("sandbox-0", 1, 11, 1, 11),
    ]


def test_retries_of_a_charged_failure_stop_before_they_could_pass_the_budget(tmp_path):
    with Loopback(_failing("500")) as server:
        client = sf.Client("k", base_url=server.base_url, cache_dir=tmp_path, max_tries=10, budget=20, **FAST)
        with pytest.raises(sf.BudgetExceededError):
            client.get("search", keyword="maps")  # 7 charged, then 14: a third attempt could reach 24
        assert len(server.arrivals) == 2
        assert client.spent == 14 == client.ledger["cost"].sum() <= client.budget
        assert Cache(tmp_path).ledger.read()["cost"].sum() == 14
        client.close()


@pytest.mark.processes
def test_a_session_nobody_closed_is_merged_when_the_interpreter_exits(tmp_path):
    script = f"""
import storeframes as sf
client = sf.sandbox.client(cache_dir={str(tmp_path)!r}, progress=False)
for keyword in ("maps", "notes", "weather"):
    client.search_frame([keyword])
print(len(client.ledger))
"""
    env = child_env()
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    names = sorted(p.name for p in (tmp_path / "ledger").glob("*.parquet"))
    assert len(names) == 1 and "-r" not in names[0]  # three small files merged into one chunk
    assert Cache(tmp_path).ledger.read().height == int(done.stdout) == 3


def test_cache_info_separates_thousands(tmp_path, capsys):
    with sf.sandbox.client(today=SANDBOX_TODAY, cache_dir=tmp_path, progress=False) as sandbox:
        sandbox.get("metrics", apps=APPS[:12], metrics="downloads")  # 100 credits an app
        spent = sandbox.spent
    assert spent >= 1000
    assert main(["cache", "info", "--cache-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"{spent:,} credits paid, {spent:,} spent" in out and str(spent) not in out
