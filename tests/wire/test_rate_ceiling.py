"""The rate limit holds at the service whatever the latency, on either way.

The service counts a request when it *arrives*, anywhere between our send and our
receipt of the answer. These scenarios make that moment as hostile as it can be: random
latency on the way in and on the way out, bursts of slow answers, requests slow on the way
in overtaken by fast ones. They run against the loopback sandbox server, which answers
429 past its own strict sliding window and records each arrival, through every kind of
window (the process's, the machine's SQLite record, Redis), with several threads and with
several processes sharing one window. What is asserted is what users rely on: every
answer, the right values, no 429, never more than the limit in any window of arrivals.
Nothing here asserts how fast anything is (``tests/benchmarks/bench_client.py`` does).
"""

from __future__ import annotations

import json
import multiprocessing
import threading
import time
import traceback
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

import storeframes as sf
from storeframes import sandbox
from storeframes.catalog import ENDPOINTS
from storeframes.coord import Coordinator
from storeframes.coord.base import shared_limiter
from storeframes.coord.window import ProcessWindow, SharedLimiter
from storeframes.fetch.limiter import SlidingWindowLimiter
from storeframes.sandbox import SANDBOX_KEY, SandboxServer
from storeframes.sandbox.service import Latency
from storeframes.wire import Wire
from tests._redis import redis_url  # noqa: F401 - the fixture
from tests._summary import max_in_window, record
from tests.conftest import SANDBOX_TODAY

LIMIT, WINDOW = 10, 0.5  # the service's 60 in 10 s, scaled down
TOKEN = "sk-live-ceilingtoken0123456789"  # found by the suite's leak check if it is ever written

HOSTILE = {
    # each way up to 60 ms, drawn per request
    "random": Latency(inbound=(0.0, 0.06), outbound=(0.0, 0.06), seed=1),
    # a third of the answers, four in a row, 300 ms late
    "slow bursts": Latency(outbound=(0.0, 0.01), slow=0.35, slow_seconds=0.3, burst=4, seed=2),
    # requests 300 ms slow on the way in, overtaken by fast ones sent after them
    "slow in, fast out": Latency(inbound=(0.0, 0.01), slow=0.3, slow_seconds=0.3, slow_way="in", seed=3),
    # slow on a way drawn per request, in bursts, on top of random latency
    "mixed": Latency(inbound=(0.0, 0.04), outbound=(0.0, 0.04), slow=0.25, slow_seconds=0.25, burst=3, seed=4),
}


def _limiter(kind: str, url: str | None, limit: int = LIMIT, window: float = WINDOW) -> Any:
    if kind == "sliding":
        return SlidingWindowLimiter(limit, window)
    if kind == "process":
        return SharedLimiter(ProcessWindow(), limit, window, hold=30.0)
    base = f"https://api.example.test/{kind}/{time.monotonic_ns()}"  # a record of its own
    return shared_limiter(TOKEN, base, (limit, window), coordinator=Coordinator(url), hold=30.0)


# -- the sandbox's latency ---------------------------------------------------------------------------


def test_latency_is_drawn_per_request_from_its_seed_in_bursts_on_the_way_asked():
    latency = Latency(inbound=(0.0, 0.05), outbound=0.1, slow=0.5, slow_seconds=1.0, burst=3, seed=7)
    draws = [latency.draw(n) for n in range(60)]
    assert draws == [latency.draw(n) for n in range(60)]  # the n-th request always draws the same
    assert draws != [
        Latency(inbound=(0.0, 0.05), outbound=0.1, slow=0.5, slow_seconds=1.0, burst=3).draw(n) for n in range(60)
    ]
    slow = [inbound > 0.05 or outbound > 0.1 for inbound, outbound in draws]
    assert 0 < sum(slow) < 60
    assert all(slow[n] == slow[n - n % 3] for n in range(60))  # in bursts of three
    for inbound, outbound in draws:
        assert 0.0 <= inbound - (1.0 if inbound > 0.05 else 0.0) <= 0.05
        assert outbound in (0.1, 1.1)
    ways = {(i > 0.05, o > 0.1) for i, o in draws}
    assert ways == {(False, False), (True, False), (False, True)}  # slow one way, drawn: never both
    inbound_only = Latency(slow=1.0, slow_seconds=0.5, slow_way="in")
    assert {inbound_only.draw(n) for n in range(10)} == {(0.5, 0.0)}
    assert sandbox.SandboxService(latency=0.25)._delays.draw(5) == (0.0, 0.25)  # a number: the way out
    for bad in ({"inbound": -1.0}, {"outbound": (0.2, 0.1)}, {"slow": 1.5}, {"burst": 0}, {"slow_way": "sideways"}):
        with pytest.raises(ValueError):
            Latency(**bad)


def test_a_request_is_counted_when_it_arrives_and_answered_its_latency_later():
    service = sandbox.SandboxService(today=SANDBOX_TODAY, latency=Latency(inbound=0.15, outbound=0.1))
    sent = time.monotonic()
    reply = service.handle(
        "GET",
        "/api/public/store/keywords/search-results/current",
        [("keyword", "maps")],
        {"x-service-key": SANDBOX_KEY},
    )
    answered = time.monotonic()
    (arrival,) = service.arrivals
    assert reply.status == 200
    assert arrival.time - sent >= 0.15  # dated on arrival, after the way in
    assert answered - arrival.time >= 0.1  # the answer leaves its latency after the arrival


# -- every kind of window, requests arriving anywhere between send and completion ---------------------


@pytest.mark.parametrize("kind", ["sliding", "process", "machine", "redis"])
@pytest.mark.parametrize("name", ["random", "slow in, fast out"])
@pytest.mark.redis
def test_arrivals_anywhere_between_send_and_completion_never_exceed_the_limit(kind, name, request):
    """Twelve threads, each request arriving at a moment the latency draws between its send and its
    completion: the arrivals, counted the service's way, never exceed the limit in any window."""
    url = request.getfixturevalue("redis_url") if kind == "redis" else None
    limiter = _limiter(kind, url)
    latency = HOSTILE[name]
    arrivals: list[float] = []
    lock = threading.Lock()
    counter = iter(range(10**6))

    def worker() -> None:
        for _ in range(5):
            with lock:
                n = next(counter)
            inbound, outbound = latency.draw(n)
            with limiter.slot():
                time.sleep(inbound)
                with lock:
                    arrivals.append(time.monotonic())
                time.sleep(outbound)

    threads = [threading.Thread(target=worker) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(arrivals) == 60
    assert max_in_window(arrivals, WINDOW) <= LIMIT


# -- through the client, against the loopback sandbox server ------------------------------------------


def _reference(keywords: list[str]) -> list[Any]:
    with sandbox.client(today=SANDBOX_TODAY, rate_limit=(10**6, 1.0), cache_dir=False) as reference:
        return [a.result for a in reference.get_many("search", [{"keyword": k} for k in keywords])]


def _client(base_url: str, kind: str, url: str | None, **options: Any) -> sf.Client:
    client = sf.Client(
        SANDBOX_KEY,
        base_url=base_url,
        rate_limit=(LIMIT, WINDOW),
        coordinator=url if kind == "redis" else "machine",
        max_workers=LIMIT + 2,  # more threads than slots: some always wait for one
        max_tries=1,  # a 429 is an error, not a retry: it cannot hide
        cache_dir=False,
        progress=False,
        **options,
    )
    if kind == "process":
        client.limiter = client.wire.limiter = _limiter("process", None)
    return client


def _check(arrivals: list[Any], sent: int, name: str) -> None:
    statuses = [a.status for a in arrivals]
    assert len(arrivals) == sent and statuses.count(429) == 0, statuses
    most = max_in_window([a.time for a in arrivals], WINDOW)
    record(name, requests=sent, rows=sent, window=(most, LIMIT))
    assert most <= LIMIT


@pytest.mark.parametrize("kind", ["process", "machine", "redis"])
@pytest.mark.parametrize("name", list(HOSTILE))
@pytest.mark.redis
def test_threads_of_a_client_get_every_answer_and_no_429_whatever_the_latency(kind, name, request):
    url = request.getfixturevalue("redis_url") if kind == "redis" else None
    keywords = [f"ceiling {name} {i}" for i in range(30)]
    with SandboxServer(port=0, today=SANDBOX_TODAY, rate_limit=(LIMIT, WINDOW), latency=HOSTILE[name]) as server:
        with _client(server.base_url, kind, url) as client:
            answers = client.get_many("search", [{"keyword": k} for k in keywords])
        arrivals = list(server.service.arrivals)
    assert [a.result for a in answers] == _reference(keywords)
    _check(arrivals, len(keywords), f"hostile latency, {name}, {kind} window, 12 threads")


def _fetch(base_url: str, kind: str, url: str | None, keywords: list[str], start: Any, results: Any) -> None:
    """One process: its own client of the token, its threads; reports the values it got or its error."""
    try:
        with _client(base_url, kind, url) as client:
            start.wait(timeout=120)
            answers = client.get_many("search", [{"keyword": k} for k in keywords])
            results.put({"keywords": keywords, "results": [a.result for a in answers]})
    except BaseException:
        results.put({"keywords": keywords, "error": traceback.format_exc()})


@pytest.mark.timeout(180)
@pytest.mark.parametrize("kind", ["machine", "redis"])
@pytest.mark.processes
@pytest.mark.redis
def test_processes_sharing_the_window_get_every_answer_and_no_429_whatever_the_latency(kind, request):
    """Three processes of one token, twelve threads each, random latency with bursts slow on either way."""
    url = request.getfixturevalue("redis_url") if kind == "redis" else None
    context = multiprocessing.get_context("spawn")
    start, results = context.Barrier(3), context.Queue()
    shares = [[f"ceiling process {p} {i}" for i in range(12)] for p in range(3)]
    with SandboxServer(port=0, today=SANDBOX_TODAY, rate_limit=(LIMIT, WINDOW), latency=HOSTILE["mixed"]) as server:
        processes = [
            context.Process(target=_fetch, args=(server.base_url, kind, url, share, start, results)) for share in shares
        ]
        for process in processes:
            process.start()
        got = [results.get(timeout=150) for _ in processes]
        for process in processes:
            process.join(timeout=30)
        arrivals = list(server.service.arrivals)
    for one in got:
        assert "error" not in one, one["error"]
        assert one["results"] == _reference(one["keywords"])
    _check(arrivals, sum(map(len, shares)), f"hostile latency, 3 processes, {kind} window")


# -- an answer's body that comes long after its headers ---------------------------------------------


class _HeadersFirst(ThreadingHTTPServer):
    """Counts each request on arrival and sends its answer's headers at once; the first answer's body
    follows only when a later request has arrived (or after ``held`` seconds)."""

    daemon_threads = True
    held = 20.0

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _HeadersFirstHandler)
        self.lock = threading.Lock()
        self.arrivals: list[float] = []
        self.later = threading.Event()
        self.body_waited_for_a_later_arrival: bool | None = None


class _HeadersFirstHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HeadersFirst

    def do_GET(self) -> None:
        with self.server.lock:
            self.server.arrivals.append(time.monotonic())
            n = len(self.server.arrivals)
        if n > 1:
            self.server.later.set()
        request = {"path": "/x", "params": {}, "cost": 1, "max_credit_cost": 1, "status": 200}
        body = json.dumps({"result": {"n": n}, "metadata": {"request": request, "response": None}}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.flush()
        if n == 1:
            self.server.body_waited_for_a_later_arrival = self.server.later.wait(self.server.held)
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.mark.parametrize("kind", ["sliding", "process", "machine", "redis"])
@pytest.mark.redis
def test_a_slot_is_free_a_window_after_the_headers_while_its_body_is_still_coming(kind, request):
    """One request a window: the second is sent a window after the first answer's headers, while the
    first body is still held back by the server (it waits for the second's arrival), and the two arrive
    a window apart."""
    url = request.getfixturevalue("redis_url") if kind == "redis" else None
    limit, window = 1, 0.2
    server = _HeadersFirst()
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/api/public/store"
        wire = Wire(TOKEN, base, limiter=_limiter(kind, url, limit, window), clock=lambda: datetime.now(UTC))
        answers: dict[str, Any] = {}

        def send(name: str) -> None:
            answers[name] = wire.send(ENDPOINTS["metadata"], {"apps": name}, report=lambda attempt: None).result

        first = threading.Thread(target=send, args=("1",))
        first.start()
        while not server.arrivals:  # the first has reached the server: the second is sent after it
            time.sleep(0.005)
        send("2")
        first.join(timeout=60)
        wire.close()
    finally:
        server.shutdown()
        server.server_close()
    assert answers == {"1": {"n": 1}, "2": {"n": 2}}
    assert server.body_waited_for_a_later_arrival is True  # the second came before the first body ended
    assert len(server.arrivals) == 2 and max_in_window(server.arrivals, window) == limit


class _Ports(ThreadingHTTPServer):
    """Answers every request at once and writes down the client's port: a new port, a new connection."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _PortsHandler)
        self.ports: list[int] = []


class _PortsHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Ports

    def do_GET(self) -> None:
        self.server.ports.append(self.client_address[1])
        request = {"path": "/x", "params": {}, "cost": 1, "max_credit_cost": 1, "status": 200}
        body = json.dumps({"result": {}, "metadata": {"request": request, "response": None}}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_a_connection_left_idle_for_a_whole_window_is_used_again_by_the_next_window(monkeypatch):
    """The next window's request goes on the connection of the last one (no new handshake while it holds
    its slot); one idle for longer than the window and 5 s is closed and opened anew."""
    import importlib

    from storeframes.wire.http import NAME

    # the clock the connection layer's idle connections expire by (httpcore2 under httpx2, httpcore under httpx)
    http11 = importlib.import_module(f"{NAME.replace('httpx', 'httpcore')}._sync.http11")

    ahead = [0.0]

    class Clock:
        @staticmethod
        def monotonic() -> float:
            return time.monotonic() + ahead[0]

    monkeypatch.setattr(http11, "time", Clock)
    server = _Ports()
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/api/public/store"
    wire = Wire(TOKEN, base, limiter=SlidingWindowLimiter(60, 10.0), clock=lambda: datetime.now(UTC))
    try:
        for idle in (0.0, 10.5, 10.5 + 14.0, 10.5 + 14.0 + 15.5):  # idle 10.5 s, then 14 s, then 15.5 s
            ahead[0] = idle
            wire.send(ENDPOINTS["metadata"], {"apps": "1"}, report=lambda attempt: None)
    finally:
        wire.close()
        server.shutdown()
        server.server_close()
    first, after_a_window, again, after_too_long = server.ports
    assert first == after_a_window == again != after_too_long
