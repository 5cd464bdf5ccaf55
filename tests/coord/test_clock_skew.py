"""Clock skew between the members of a team: one cache (a bucket on moto's S3 server, or a folder), two
members whose clocks disagree by 30 s, the sandbox on loopback as the service.

Each member's clock is the client's ``clock=`` (what the engine judges freshness by and what dates
the answers it keeps), so the skew is real where it matters and no global time is touched.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import polars as pl
import pytest

import storeframes as sf
from storeframes import engine
from storeframes.answers import Entry
from storeframes.coord.bucket_leases import ObjectLeases
from storeframes.sandbox import SANDBOX_KEY, SandboxServer, World
from tests._summary import paid_twice, record
from tests.conftest import SANDBOX_TODAY

WORLD = World(0)
APPS = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US][:6]
KEYWORDS = list(WORLD.EXAMPLE_KEYWORDS[:2])
RECENT = {
    "start": (SANDBOX_TODAY - timedelta(days=3)).isoformat(),
    "end": (SANDBOX_TODAY - timedelta(days=1)).isoformat(),
}
NOON = datetime.combine(SANDBOX_TODAY, datetime.min.time(), UTC) + timedelta(hours=12)


def _clock(offset: float) -> Callable[[], datetime]:
    """A member's wall clock: the sandbox's today at noon, running, ``offset`` seconds off."""
    started = time.monotonic()
    return lambda: NOON + timedelta(seconds=time.monotonic() - started + offset)


def _member(server: SandboxServer, cache_dir: str, offset: float, **options: Any) -> sf.Client:
    options = {"rate_limit": (600, 1.0), "backoff": (0.01, 0.1), "progress": False, **options}
    return sf.Client(SANDBOX_KEY, base_url=server.base_url, cache_dir=cache_dir, clock=_clock(offset), **options)


def _frames(client: sf.Client) -> dict[str, pl.DataFrame]:
    return {
        "metadata": client.metadata_frame(APPS),  # fresh for its UTC day
        "search_history": client.search_history_frame(KEYWORDS, **RECENT),  # recent days: stale after an hour
    }


def _a_member_behind_reads_a_colleagues_answer(scenario: str, cache_dir: str, **options: Any) -> None:
    with SandboxServer(port=0, today=SANDBOX_TODAY) as server:
        with _member(server, cache_dir, 0.0, **options) as first:
            fetched = _frames(first)
        paid = len(server.service.arrivals)
        assert paid > 0
        with _member(server, cache_dir, -30.0, **options) as behind:  # its clock 30 s behind the first's
            for name, frame in _frames(behind).items():
                assert frame.equals(fetched[name]), name
            assert behind.spent == 0 and behind.ledger["from_cache"].all()
        arrivals = list(server.service.arrivals)
    assert len(arrivals) == paid
    twice = paid_twice(arrivals)
    assert twice == (0, 0, 0)
    record(scenario, requests=len(arrivals), rows=sum(f.height for f in fetched.values()), paid_twice=twice[0])


@pytest.mark.heavy
@pytest.mark.s3
def test_a_member_30_s_behind_reads_a_colleagues_fresh_answer_from_the_bucket_without_paying(s3_bucket):
    _a_member_behind_reads_a_colleagues_answer(
        "clock step: bucket member 30 s behind", s3_bucket.url, storage_options=s3_bucket.storage_options
    )


def test_a_member_30_s_behind_reads_a_colleagues_fresh_answer_from_the_folder_without_paying(tmp_path):
    _a_member_behind_reads_a_colleagues_answer("clock step: folder member 30 s behind", str(tmp_path / "team"))


def test_a_member_30_s_ahead_reads_it_too_and_one_beyond_the_skew_behind_fetches_again(tmp_path):
    """Ahead, a member judges the answer 30 s older than it is: served (it is fresh for the day and
    for the hour). A clock more than CLOCK_SKEW behind sees an answer beyond the tolerated skew: stale,
    as before (fetched again; refresh="never" still serves it)."""
    folder = str(tmp_path / "team")
    with SandboxServer(port=0, today=SANDBOX_TODAY) as server:
        with _member(server, folder, 0.0) as first:
            fetched = first.metadata_frame(APPS)
        paid = len(server.service.arrivals)
        with _member(server, folder, 30.0) as ahead:
            assert ahead.metadata_frame(APPS).equals(fetched) and ahead.spent == 0
        assert len(server.service.arrivals) == paid
        with _member(server, folder, -engine.CLOCK_SKEW.total_seconds() - 5) as far:
            far.metadata_frame(APPS)  # an answer from beyond the skew is stale: fetched again
            assert far.spent > 0
            offline = far.metadata_frame(APPS, refresh="never")
            assert offline.height == len(APPS)


def test_freshness_tolerates_the_skew_the_bucket_leases_assume():
    assert timedelta(seconds=ObjectLeases.CLOCK_MARGIN) == engine.CLOCK_SKEW


@pytest.mark.parametrize("ahead", [timedelta(seconds=1), timedelta(seconds=30), engine.CLOCK_SKEW])
def test_an_answer_dated_tomorrow_by_a_clock_ahead_is_fresh_before_the_readers_midnight(ahead):
    """Within the skew, an answer dated after ``now`` is judged as fetched ``now``: written just after
    the writer's midnight, it is fresh for the reader's day (by its own date it was stale: another
    day). Beyond the skew, stale as before."""
    from storeframes.catalog import ENDPOINTS
    from storeframes.planning import cells_of

    before_midnight = datetime.combine(SANDBOX_TODAY, datetime.max.time(), UTC) - timedelta(seconds=0.5)
    ep = ENDPOINTS["metadata"]
    params = {"apps": APPS[0], "country": "us"}
    cell = cells_of(ep, params)[0]

    def fetched(at: datetime) -> Entry:
        return Entry(
            id="x",
            endpoint="metadata",
            service="sandbox-0",
            scope="us",
            params=params,
            fetched_at=at,
            cost=1,
            max_credit_cost=1,
            cells=frozenset([cell]),
        )

    assert engine.is_fresh(ep, fetched(before_midnight + ahead), cell, before_midnight)
    beyond = fetched(before_midnight + engine.CLOCK_SKEW + timedelta(microseconds=1))
    assert not engine.is_fresh(ep, beyond, cell, before_midnight)
