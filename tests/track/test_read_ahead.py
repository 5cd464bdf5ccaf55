"""A run reads the kept ranks of the days before its own while its requests wait on the rate limit; the judgement
uses them only while they are still what the cache keeps: its ranks are always those a fresh read after the run
gives, and a snapshot of an earlier day kept during the run (another machine's) is read."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from storeframes import planning
from storeframes.cache import Cache
from storeframes.catalog import ENDPOINTS
from storeframes.track import Tracker, ahead, running
from storeframes.track.ahead import EarlyRanks, ReadAhead
from storeframes.track.judging import RanksRead, rank_frame
from tests.track.test_judge_reads import RANK_RULES, live_spec

FIRST = date(2026, 10, 22)


def _tracker(folder: Path, *, rules: bool = True) -> Tracker:
    folder.mkdir(parents=True, exist_ok=True)
    spec = folder / "ahead.toml"
    spec.write_text(live_spec("ahead", RANK_RULES if rules else '[[alert]]\nrule = "unknown_field"\n'))
    return Tracker.from_toml(spec, sandbox=True, progress=False)


class Seen:
    """What each run read ahead and what its judgement read."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.reads: list[RanksRead] = []
        self.early: list[EarlyRanks | None] = []
        seen = self

        class Recorded(RanksRead):
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                seen.reads.append(self)

        original = ReadAhead.ranks

        def ranks(ahead_: ReadAhead, start: date) -> EarlyRanks | None:
            found = original(ahead_, start)
            seen.early.append(found)
            return found

        monkeypatch.setattr(running, "RanksRead", Recorded)
        monkeypatch.setattr(ReadAhead, "ranks", ranks)


def _fresh(tracker: Tracker, read: RanksRead, day: date) -> pl.DataFrame:
    with tracker.client(day) as client:
        assert client.cache is not None and read.start is not None
        return rank_frame(tracker.spec, client.cache, client.namespace, read.start, day)


def _same_rows(a: pl.DataFrame, b: pl.DataFrame) -> bool:
    return a.sort(a.columns).equals(b.sort(b.columns))  # the rows, in no set order


def test_the_ranks_read_ahead_are_those_a_fresh_read_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = Seen(monkeypatch)
    tracker = _tracker(tmp_path)
    for n in range(5):
        day = FIRST + timedelta(days=n)
        assert tracker.run(day).status == "ok"
        read = seen.reads[-1]
        assert read.frame is not None and read.end == day
        assert _same_rows(read.frame, _fresh(tracker, read, day))
        assert read.frame.filter(pl.col("date") == day).height > 0  # the run's own day is in it
    assert len(seen.early) == 5 and seen.early[0] is not None  # read ahead every day, the first one's empty
    assert seen.early[0].frame.is_empty() and all(e is not None and e.frame.height > 0 for e in seen.early[1:])
    assert [e.end for e in seen.early if e is not None] == [FIRST + timedelta(days=n - 1) for n in range(5)]


def _yesterday_changed(cache: Cache, service: str, yesterday: date) -> tuple[str, list[str]]:
    """Keep, as another machine would, a later snapshot of yesterday of one keyword with its list reversed;
    the keyword and its list now."""
    chosen = max(
        (e for e in cache.entries("search") if e.service == service and e.day == yesterday),
        key=lambda e: e.fetched_at,
    )
    kept = cache.load(chosen)
    assert kept is not None
    result = {**kept.result, "value": list(reversed(kept.result["value"]))}
    later = replace(kept, result=result, fetched_at=chosen.fetched_at + timedelta(minutes=1), from_cache=False)
    ep = ENDPOINTS["search"]
    cells = planning.cells_of(ep, dict(kept.params))
    assert cache.store(later, service=service, scope=chosen.scope, cells=cells) is not None
    return chosen.params["keyword"], result["value"]


def test_a_snapshot_of_an_earlier_day_kept_during_the_run_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tracker = _tracker(tmp_path)
    for n in range(3):
        assert tracker.run(FIRST + timedelta(days=n)).status == "ok"
    day, yesterday = FIRST + timedelta(days=3), FIRST + timedelta(days=2)
    seen = Seen(monkeypatch)
    changed: list[tuple[str, list[str]]] = []
    original = ahead.ReadAhead._read

    def read_then_another_machine_keeps(self: ReadAhead) -> None:
        original(self)  # the days before read ahead; then, before the judgement, yesterday changes
        changed.append(_yesterday_changed(self.cache, self.service, yesterday))

    monkeypatch.setattr(ahead.ReadAhead, "_read", read_then_another_machine_keeps)
    assert tracker.run(day).status == "ok"
    read, (keyword, now) = seen.reads[-1], changed[0]
    assert read.frame is not None
    judged = read.frame.filter((pl.col("date") == yesterday) & (pl.col("keyword") == keyword)).sort("rank")
    assert judged["app_id"].to_list() == now  # the snapshot kept during the run, not the one read ahead
    assert _same_rows(read.frame, _fresh(tracker, read, day))
    assert seen.early == [None]  # the read ahead was set aside


def test_no_rank_rule_reads_nothing_ahead(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[date] = []
    original = ReadAhead.start

    def start(self: ReadAhead) -> ReadAhead:
        started.append(self.day)
        return original(self)

    monkeypatch.setattr(ReadAhead, "start", start)
    assert _tracker(tmp_path / "budget", rules=False).run(FIRST).status == "ok"
    assert started == []
    assert _tracker(tmp_path / "ranks", rules=True).run(FIRST).status == "ok"
    assert started == [FIRST]
