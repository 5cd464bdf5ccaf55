"""A tracker keeps its cache compact by itself: past ``compact_at`` small files left by earlier runs, a run
compacts while its requests go, under the tracker's lease, losing nothing kept (its own answers neither); never
with ``compact_at = 0``; said in the run's result."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from datetime import date, timedelta
from pathlib import Path

import polars as pl
import pytest

import storeframes as sf
from storeframes.cache import Cache
from storeframes.track import Tracker
from storeframes.track.day_digest import kept_digest
from storeframes.track.spec import COMPACT_AT, SpecError, load_spec, parse_spec

from .._children import child_env
from ..conftest import ROOT

DAY = date(2026, 11, 2)
KEYWORDS = ["photo editor", "photo filters", "collage maker"]
APPS = ["3233849169", "394079159", "1395556972"]


def _spec(folder: Path, compact_at: int | None, *, name: str = "keep", cache: str = "cache") -> Path:
    line = "" if compact_at is None else f"compact_at = {compact_at}\n"
    path = folder / f"{name}.toml"
    path.write_text(
        f"""[tracker]
name = "{name}"
cache_dir = "{cache}"
device = "iphone"
{line}
[[track]]
endpoint = "search"
keywords = {json.dumps(KEYWORDS)}
countries = ["us", "gb"]

[[track]]
endpoint = "search_ads"
keywords = {json.dumps(KEYWORDS[:1])}

[[track]]
endpoint = "metadata"
apps = {json.dumps(APPS)}

[[alert]]
rule = "top"
apps = {json.dumps(APPS)}
n = 10

[[alert]]
rule = "new_advertiser"

[[alert]]
rule = "listing_change"
"""
    )
    return path


def _parts(cache: Path) -> list[Path]:
    return sorted(p for p in cache.rglob("part-*.parquet"))


def _kept(cache: Path, end: date) -> dict[str, pl.DataFrame]:
    """Every snapshot kept up to ``end``, of each table the spec fills, sorted: what no compaction may lose."""
    found = {}
    for table in ("search", "search_ads", "metadata", "screenshots"):
        frame = sf.snapshots(table, cache, end=end).collect()
        found[table] = frame.sort(frame.columns, nulls_last=True)
    return found


def test_the_spec_reads_compact_at(tmp_path: Path) -> None:
    assert load_spec(_spec(tmp_path, None)).compact_at == COMPACT_AT == 500
    assert load_spec(_spec(tmp_path, 0)).compact_at == 0
    assert load_spec(_spec(tmp_path, 40)).compact_at == 40
    text = _spec(tmp_path, None).read_text().replace('device = "iphone"', 'device = "iphone"\ncompact_at = false')
    assert parse_spec(text).compact_at == 0
    for bad in ("-1", '"500"', "1.5", "true"):
        with pytest.raises(SpecError, match=r"compact_at.*a whole number of files, 0 \(never\)"):
            parse_spec(text.replace("compact_at = false", f"compact_at = {bad}"))


def _small(cache: Path) -> int:
    return Cache(cache).small_files(["search", "search_ads", "metadata"])


def test_a_run_compacts_past_the_threshold_not_before_and_loses_nothing(tmp_path: Path) -> None:
    tracker = Tracker.from_toml(_spec(tmp_path, 12), sandbox=True, progress=False)
    first = tracker.run(DAY)  # nothing kept before it
    assert first.status == "ok", first.summary()
    assert first.compaction == {"compact_at": 12, "compacted": False, "small_files": 0}
    second = tracker.run(DAY + timedelta(days=1))  # the first run's 7 search answers and a metadata answer
    assert second.compaction == {"compact_at": 12, "compacted": False, "small_files": 8}
    assert _parts(tmp_path / "cache") == []
    before = _kept(tmp_path / "cache", DAY + timedelta(days=1))
    third = tracker.run(DAY + timedelta(days=2))  # 16 small files: past 12, compacted as its 8 requests go
    assert third.status == "ok" and third.requests == 8, third.summary()
    said = third.compaction
    assert said["compacted"] is True and said["small_files"] == 16 and "error" not in said
    # the earlier runs' files merged, and those of the run's own answers that were kept before the listing
    assert 16 <= said["index_files_merged"] <= 24 and said["files_written"] >= 4
    assert "16 small files (compacted past 12): compacted in" in third.summary()
    assert _parts(tmp_path / "cache")
    assert _small(tmp_path / "cache") + said["index_files_merged"] == 24  # each merged or still there
    after = _kept(tmp_path / "cache", DAY + timedelta(days=1))
    for table, frame in before.items():
        assert after[table].equals(frame), table
    its_day = _kept(tmp_path / "cache", DAY + timedelta(days=2))["search"]
    assert its_day.filter(pl.col("snapshot_date") == DAY + timedelta(days=2)).height > 0
    fourth = tracker.run(DAY + timedelta(days=3))
    assert fourth.compaction["compacted"] is False and fourth.compaction["small_files"] <= 8  # not past 12


def test_compact_at_0_never_compacts(tmp_path: Path) -> None:
    tracker = Tracker.from_toml(_spec(tmp_path, 0), sandbox=True, progress=False)
    for n in range(3):
        result = tracker.run(DAY + timedelta(days=n))
        assert result.status == "ok" and result.compaction == {}
    assert _parts(tmp_path / "cache") == []
    assert Cache(tmp_path / "cache").small_files(["search", "search_ads", "metadata"]) == 24
    assert "cache:" not in result.summary()


def test_a_failed_compaction_is_said_and_loses_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tracker = Tracker.from_toml(_spec(tmp_path, 4), sandbox=True, progress=False)

    def refused(self: Cache, **_: object) -> dict[str, int]:
        raise OSError("No space left on device")

    assert tracker.run(DAY).compaction == {"compact_at": 4, "compacted": False, "small_files": 0}
    monkeypatch.setattr(Cache, "compact", refused)
    result = tracker.run(DAY + timedelta(days=1))
    assert result.status == "ok" and result.requests == 8  # what was fetched is kept: the run did its work
    assert result.compaction == {
        "compact_at": 4,
        "compacted": False,
        "small_files": 8,
        "error": "OSError: No space left on device",
    }
    assert "error: compaction: OSError: No space left on device" in result.summary()
    assert tracker.runs()["errors"].to_list()[-1] == "compaction: OSError: No space left on device"  # in its row
    assert _parts(tmp_path / "cache") == []
    monkeypatch.undo()
    assert _kept(tmp_path / "cache", DAY + timedelta(days=1))["search"]["snapshot_date"].unique().len() == 2


def test_a_compaction_s_warnings_are_said_in_the_result_and_the_run_s_own_still_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compaction's warnings are held on its thread and said in the run's result; a warning the run's own
    thread gives meanwhile reaches the user as ever (a compaction never swallows another thread's)."""
    from storeframes.cache import CacheWarning
    from storeframes.cache.compaction import Compaction
    from storeframes.errors import warn

    tracker = Tracker.from_toml(_spec(tmp_path, 4), sandbox=True, progress=False)
    assert tracker.run(DAY).status == "ok"
    compacting, warned = threading.Event(), threading.Event()
    original_index, original_fetch = Compaction.compact_index, sf.Client.get_many

    def index_warning(self: Compaction, endpoint: str) -> tuple[int, int]:
        compacting.set()
        self._files.warn_once(f"compact {endpoint}", f"could not compact the {endpoint} index: disk full")
        assert warned.wait(30)  # the run's thread warned while this compaction went on
        return original_index(self, endpoint)

    def fetch_warning(self: sf.Client, *args: object, **kwargs: object) -> object:
        if not warned.is_set():
            assert compacting.wait(30)
            warn("the run's own warning", UserWarning)
            warned.set()
        return original_fetch(self, *args, **kwargs)

    monkeypatch.setattr(Compaction, "compact_index", index_warning)
    monkeypatch.setattr(sf.Client, "get_many", fetch_warning)
    with pytest.warns(UserWarning, match="the run's own warning") as given:
        result = tracker.run(DAY + timedelta(days=1))
    assert not [w for w in given if issubclass(w.category, CacheWarning)]
    assert result.status == "ok" and result.compaction["compacted"] is True
    assert "could not compact the search index: disk full" in result.compaction["error"]
    assert "error: compaction: could not compact the search index: disk full" in result.summary()


def test_two_trackers_at_once_one_compacts_under_the_lease(tmp_path: Path) -> None:
    """Two trackers of one spec on one cache, run together: the tracker's lease makes them one after the other,
    so one compacts, the other finds the day kept and nothing to compact; no snapshot is lost."""
    spec = _spec(tmp_path, 12)
    warm = Tracker.from_toml(spec, sandbox=True, progress=False)
    assert warm.run(DAY).status == "ok"
    before = _kept(tmp_path / "cache", DAY)
    trackers = [Tracker.from_toml(spec, sandbox=True, progress=False) for _ in range(2)]
    results: list[sf.track.RunResult] = []
    errors: list[BaseException] = []

    def run(tracker: Tracker) -> None:
        try:
            results.append(tracker.run(DAY + timedelta(days=1)))
        except BaseException as exc:  # shown by the test, not lost in the thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(t,)) for t in trackers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors and len(results) == 2
    assert all(r.status == "ok" for r in results), [r.summary() for r in results]
    # the first found 8 small files, not past 12, and fetched the day; the second found it kept, and 16
    assert sorted((r.requests, r.compaction["small_files"], r.compaction["compacted"]) for r in results) == [
        (0, 16, True),
        (8, 8, False),
    ]
    after = _kept(tmp_path / "cache", DAY)
    for table, frame in before.items():
        assert after[table].equals(frame), table
    assert _kept(tmp_path / "cache", DAY + timedelta(days=1))["search"].height > before["search"].height


_KILLED = """
import os, signal, sys
from storeframes.cache import compaction
from storeframes.track import Tracker

spec, day, where = sys.argv[1], sys.argv[2], sys.argv[3]
original = getattr(compaction.Compaction, where)

def dying(self, *args, **kwargs):
    done = original(self, *args, **kwargs)  # the merged files written, the files they replace not yet all removed
    os.kill(os.getpid(), signal.SIGKILL)
    return done

setattr(compaction.Compaction, where, dying)
Tracker.from_toml(spec, sandbox=True, progress=False).run(day)
print("finished")
"""


@pytest.mark.processes
@pytest.mark.parametrize("where", ["compact_index", "_write_frame_parts"])
def test_a_run_killed_while_it_compacts_loses_nothing(tmp_path: Path, where: str) -> None:
    spec = _spec(tmp_path, 4)
    assert Tracker.from_toml(spec, sandbox=True, progress=False).run(DAY).status == "ok"  # 8 small files left
    before = _kept(tmp_path / "cache", DAY)
    following = DAY + timedelta(days=1)
    child = subprocess.run(
        [sys.executable, "-c", _KILLED, str(spec), following.isoformat(), where],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert child.returncode == -9 and "finished" not in child.stdout, child.stderr
    after = _kept(tmp_path / "cache", DAY)
    for table, frame in before.items():
        assert after[table].equals(frame), table
    kept_by_killed = sum(
        e.day == following for ep in ("search", "search_ads", "metadata") for e in Cache(tmp_path / "cache").entries(ep)
    )
    tracker = Tracker.from_toml(spec, sandbox=True, progress=False)
    killed_id = tracker.runs()["run_id"].to_list()[-1]
    again = tracker.run(following)  # the killed run's answers kept: only the rest is paid for
    assert again.status == "ok" and list(again.interrupted) == [killed_id], again.summary()
    assert again.requests == 8 - kept_by_killed
    assert tracker.runs()["status"].to_list() == ["ok", "interrupted", "ok"]
    assert "error" not in again.compaction
    Cache(tmp_path / "cache").compact()  # what the kill left unmerged, merged now
    assert _small(tmp_path / "cache") == 0
    for table, frame in _kept(tmp_path / "cache", DAY).items():
        assert frame.equals(before[table]), table
    kept = _kept(tmp_path / "cache", following)
    its_day = kept["search"].filter(pl.col("snapshot_date") == following)
    assert its_day.select("keyword", "country").unique().height == 6  # every search of the day kept
    assert kept["search_ads"].filter(pl.col("snapshot_date") == following).height > 0
    assert os.listdir(tmp_path / "cache")


def test_the_digest_and_events_of_a_compacting_tracker_are_those_of_one_that_never_compacts(tmp_path: Path) -> None:
    """Ten days replayed by two trackers of one spec on two caches, one compacting every other day, one never:
    the same events and the same digests of the days."""
    days = [DAY + timedelta(days=n) for n in range(10)]
    compacting = Tracker.from_toml(_spec(tmp_path, 12, name="same", cache="compacting"), sandbox=True, progress=False)
    plain = Tracker.from_toml(_spec(tmp_path, 0, name="same", cache="plain"), sandbox=True, progress=False)
    compactions = 0
    for day in days:
        assert plain.run(day).status == "ok"
        result = compacting.run(day)
        assert result.status == "ok", result.summary()
        compactions += result.compaction["compacted"]
    assert 4 <= compactions <= 8  # from the third day, every day or every other (a run's own files may be merged)
    volatile = ["first_seen", "notified_at"]
    events = [t.events().drop(volatile).sort("event_id") for t in (compacting, plain)]
    assert events[0].height > 0 and events[0].equals(events[1])
    for day in days:
        digests = [kept_digest(t.spec, day) for t in (compacting, plain)]
        assert digests[0].markdown == digests[1].markdown, day
        assert digests[0].images.keys() == digests[1].images.keys(), day


def test_the_command_line_sets_the_threshold_over_the_spec(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from storeframes.cli import main

    spec = str(_spec(tmp_path, 0))
    assert main(["track", "run", spec, "--sandbox", "--today", str(DAY), "--compact-at", "4"]) == 0
    assert "compacted" not in capsys.readouterr().out  # nothing kept before it
    following = str(DAY + timedelta(days=1))
    assert main(["track", "run", spec, "--sandbox", "--today", following, "--compact-at", "4"]) == 0
    assert "8 small files (compacted past 4): compacted in" in capsys.readouterr().out
    assert _parts(tmp_path / "cache")
    with pytest.raises(SystemExit):
        main(["track", "run", spec, "--sandbox", "--compact-at", "many"])
    assert "expected a whole number of files such as 500, or 0 (never), got 'many'" in capsys.readouterr().err
