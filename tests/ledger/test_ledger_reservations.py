"""A request goes out only once the ledger holds it: its reservation (a row of its estimate) is
written first, and its attempts' rows replace it when it ends.

Against loopback servers: one that reads the cache's ledger as each request arrives (the
reservation must be there already), one that never answers (its client is SIGKILLed while it
waits), and a store whose ledger writes fail as a full disk does.
"""

from __future__ import annotations

import errno
import json
import threading
from typing import Any

import pytest

import storeframes as sf
from storeframes import catalog
from storeframes.cache import Cache
from storeframes.ledger import month_spent_of
from storeframes.sandbox import SANDBOX_KEY
from tests._children import sigkill_when
from tests.conftest import SANDBOX_TODAY, loopback_client
from tests.ledger.test_ledger import FAST, FlakyStore, Loopback, _quiet

SEARCH_ESTIMATE = catalog.ENDPOINTS["search"].estimate({"keyword": "maps", "country": "us", "device": "iphone"})
"""What a search request may cost: the reservation's ``cost``."""


def _client(server: Loopback, cache: Any, **options: Any) -> sf.Client:
    return loopback_client(server.base_url, cache, **FAST, **options)


def test_a_request_is_sent_only_once_its_reservation_is_in_the_ledger(tmp_path):
    seen: list[list[tuple[Any, ...]]] = []

    def look(number: int, path: str, query: dict[str, str], headers: dict[str, str]) -> None:
        seen.append(Cache(tmp_path).ledger.read().select("endpoint", "cost", "reserved", "status").rows())

    with Loopback(look) as server, _client(server, tmp_path) as client:
        client.get("search", keyword="maps")
        client.get("search", keyword="notes")
        assert seen[0] == [("search", SEARCH_ESTIMATE, True, None)]  # on the service's side: already counted
        assert seen[1] == [("search", 10, False, 200), ("search", SEARCH_ESTIMATE, True, None)]
        kept = Cache(tmp_path).ledger.read()
        assert not kept["reserved"].any()  # each replaced by the rows of its request
        assert kept["cost"].sum() == client.spent == 20 and kept.height == 2


def test_a_reservation_that_cannot_be_written_stops_the_request_before_it_is_sent():
    class FullDisk(FlakyStore):
        def put(self, key: str, data: bytes) -> None:
            if key.startswith("ledger/") and self.failures > 0:
                raise OSError(errno.ENOSPC, "No space left on device")
            super().put(key, data)

        def explain(self, error: OSError) -> str:
            return "the disk is full" if error.errno == errno.ENOSPC else super().explain(error)

    store = FullDisk()
    store.failures = 1
    with Loopback(lambda *_: None) as server, _client(server, Cache(store), budget=100) as client:
        with pytest.raises(sf.CacheUnavailableError) as caught:
            client.get("search", keyword="maps")
        message = str(caught.value)
        assert message.startswith("cannot write the ledger file ledger/") and ".parquet in the cache at " in message
        assert "No space left on device" in message and "likely cause: the disk is full" in message
        assert "Nothing was sent" in message and SANDBOX_KEY not in message
        assert server.arrivals == [] and client.requests_sent == 0
        assert client.spent == 0 and client.credits.reserved == 0 and client.ledger.is_empty()
        store.failures = 0  # space again: the same call goes out, counted once
        client.get("search", keyword="maps")
        assert len(server.arrivals) == 1 and Cache(store).ledger.read()["cost"].sum() == client.spent == 10


HANGING_CALL = """
import json, sys
from datetime import UTC, date, datetime
import storeframes as sf

args = json.loads(sys.argv[1])
today = date.fromisoformat(args["today"])
client = sf.Client(args["key"], base_url=args["base_url"], cache_dir=args["folder"], progress=False,
                   clock=lambda: datetime.combine(today, datetime.now(UTC).time(), UTC))
client.get("search", keyword="maps")
print("finished")
"""


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.processes
def test_a_request_killed_before_its_answer_counts_at_its_estimate_in_spend_and_budgets(tmp_path):
    folder = tmp_path / "cache"
    release = threading.Event()

    def hang(number: int, path: str, query: dict[str, str], headers: dict[str, str]) -> None:
        release.wait(30)  # the answer comes after its client is gone (the service charged it)

    try:
        with Loopback(hang) as server:
            args = {"key": SANDBOX_KEY, "base_url": server.base_url, "folder": str(folder),
                    "today": SANDBOX_TODAY.isoformat()}  # fmt: skip
            sigkill_when(HANGING_CALL, args, tmp_path, lambda: len(server.arrivals) == 1)
            release.set()
            with _quiet():
                ledger = Cache(folder).ledger.read()
            assert ledger.select("endpoint", "cost", "cost_estimated", "reserved", "status").rows() == [
                ("search", SEARCH_ESTIMATE, True, True, None)
            ]
            assert json.loads(ledger["params"][0])["keyword"] == "maps"
            with _client(server, folder) as client:
                spend = client.spend().row(0, named=True)
                assert spend["credits_spent"] == spend["credits_estimated"] == SEARCH_ESTIMATE
                assert spend["requests"] == 0  # no answer was received
            assert month_spent_of(ledger, "service", SANDBOX_TODAY) == SEARCH_ESTIMATE  # a month budget sees it
    finally:
        release.set()
