"""A run's row left ``running`` is finished by the next run from the ledger rows of its session; a ledger that
cannot be written stops a run before it sends."""

from __future__ import annotations

from datetime import UTC, date, datetime

from storeframes.answers import Attempt
from storeframes.cache import Cache
from storeframes.cli import main
from storeframes.credits import Credits
from storeframes.track import Tracker
from storeframes.track.runs import end_interrupted, ledger_counts

STARTED = datetime(2026, 11, 20, 6, 15, tzinfo=UTC)


def _row(run_id: str, session: str | None, **counts: int) -> dict[str, object]:
    return {"run_id": run_id, "tracker": "keywords", "spec_hash": "h", "kind": "run", "day": date(2026, 11, 20),
            "started_at": STARTED, "ended_at": None, "status": "running", "requests": 0, "cells_new": 0,
            "cells_cached": 0, "credits_spent": 0, "credits_saved": 0, "items_due": 1, "items_left_out": "",
            "errors": "", "host": "box", "session": session, **counts}  # fmt: skip


def _spend(credits: Credits, keyword: str, cost: int, *, settle: bool = True) -> None:
    reservation = credits.reserve("search", 10, params={"keyword": keyword})
    if settle:
        reservation.attempt(Attempt("search", {"keyword": keyword}, 200, cost, 10, 1, 0.01))
        reservation.settle()


def test_a_killed_runs_row_counts_its_sessions_ledger_rows_and_its_reservations_at_their_estimates(tmp_path):
    cache = Cache(tmp_path)
    killed = Credits(clock=lambda: STARTED, sink=cache.ledger)
    other = Credits(clock=lambda: STARTED, sink=cache.ledger)  # another process's, at the same time: not the run's
    for n, cost in enumerate([10, 10, 7]):
        _spend(killed, f"k{n}", cost)
    _spend(killed, "in flight", 0, settle=False)  # sent when it was killed: its reservation stays
    _spend(other, "elsewhere", 10)
    killed.record_hit("search", {"keyword": "k0"}, saved=10)
    killed.flush()
    assert ledger_counts(cache.ledger.read(), killed.session) == {
        "requests": 4, "credits_spent": 37, "credits_saved": 10, "reserved": 1, "credits_reserved": 10,
    }  # fmt: skip
    cache.runs.write(_row("r1", killed.session, requests=2, credits_spent=20))  # its last own count
    assert end_interrupted(cache, "keywords", "r2") == ("r1",)
    row = cache.runs.one("keywords", "r1")
    assert row is not None and row["status"] == "interrupted"
    assert (row["requests"], row["credits_spent"], row["credits_saved"]) == (4, 37, 10)
    assert row["errors"].splitlines() == [
        "stopped before it ended; run r2 fetched what it had not kept",
        "counted from the ledger: 4 requests, 37 credits",
        "1 request sent or about to be sent when it stopped, whose answers were never written, counted at their "
        "estimates (10 credits)",
    ]
    assert cache.runs.running("keywords").is_empty() and end_interrupted(cache, "keywords", "r3") == ()


def test_a_row_of_an_earlier_version_keeps_its_own_counts(tmp_path):
    cache = Cache(tmp_path)
    cache.runs.write(_row("r1", None, requests=3, credits_spent=30))
    assert end_interrupted(cache, "keywords", "r2") == ("r1",)
    row = cache.runs.one("keywords", "r1")
    assert row is not None and (row["status"], row["requests"], row["credits_spent"]) == ("interrupted", 3, 30)
    assert row["errors"] == "stopped before it ended; run r2 fetched what it had not kept"


def test_a_ledger_that_cannot_be_written_stops_the_run_before_it_sends(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("STOREFRAMES_STATE_DIR", str(tmp_path / "state"))
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "ledger").write_text("a file where the ledger's folder should be\n")
    spec = tmp_path / "tracking.toml"
    spec.write_text(
        f'[tracker]\nname = "keywords"\ncache_dir = "{cache}"\n\n[[track]]\nendpoint = "search"\n'
        'keywords = ["photo editor", "video maker"]\n\n[[track]]\nendpoint = "metadata"\napps = ["284882215"]\n',
        encoding="utf-8",
    )
    assert main(["track", "run", str(spec), "--sandbox", "--today", "2026-11-20"]) == 3
    out = capsys.readouterr().out
    assert "keywords run on 2026-11-20: failed" in out and "0 requests, 0 credits spent" in out
    errors = [line for line in out.splitlines() if line.startswith("  error: ")]
    assert len(errors) == 1  # the metadata item was not tried: nothing more is sent
    assert errors[0].startswith("  error: search: CacheUnavailableError: cannot write the ledger file ledger/")
    assert f"in the cache at {cache} " in errors[0] and "a file stands where it should be" in errors[0]
    assert "Nothing was sent" in errors[0]
    log = Tracker.from_toml(spec, sandbox=True).runs()
    assert log.select("status", "requests", "credits_spent").rows() == [("failed", 0, 0)]
    assert log["ended_at"].null_count() == 0 and "cannot write the ledger file" in log["errors"][0]
