"""A warm call from a new client reads what it needs: only the kept frames of the answers it uses, and sends
only the requests for the cells the cache lacks."""

from __future__ import annotations

import warnings
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

import storeframes as sf
from storeframes.cache import Cache, CacheWarning
from storeframes.cache.files import Files
from storeframes.cache.layout import frame_key
from storeframes.cache.stores import MemoryStore
from storeframes.sandbox import World
from tests.conftest import SANDBOX_TODAY

WORLD = World(0)
NOON = datetime.combine(SANDBOX_TODAY, datetime.min.time(), UTC) + timedelta(hours=12)
APPS = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US][:24]
ASKED = APPS[2:22]  # more than the frames read one file at a time (cache/frame_files.py: _SCAN_FILES)


def sandbox(cache_dir: Path | Cache | None, **options) -> sf.Client:
    """A sandbox client on ``cache_dir`` whose clock stands at noon of the sandbox's day (answers fetched then)."""
    return sf.sandbox.client(today=SANDBOX_TODAY, cache_dir=cache_dir, progress=False, clock=lambda: NOON, **options)


def kept_frames(cache_dir: Path | Cache, apps: list[str]) -> set[str]:
    """The keys of the versions frames kept for the metadata answers of ``apps`` (one answer each)."""
    cache = cache_dir if isinstance(cache_dir, Cache) else Cache(cache_dir)
    return {frame_key(e, "versions") for e in cache.entries("metadata") if e.params["apps"] in apps}


def fill(cache_dir: Path | Cache) -> None:
    with sandbox(cache_dir) as filler:  # one answer per app, each with its frame kept
        for app in APPS:
            filler.versions_frame(app)


def test_a_warm_call_scans_only_the_kept_frames_of_its_answers_and_opens_no_footer(tmp_path, monkeypatch):
    fill(tmp_path)
    with sandbox(tmp_path, offline=True) as reader:
        expected = reader.versions_frame(ASKED)
    scanned: list[list[str]] = []
    real_scan = pl.scan_parquet

    def scan(source, *args, **kwargs):
        if isinstance(source, list):
            scanned.append([Path(p).relative_to(tmp_path).as_posix() for p in source])
        return real_scan(source, *args, **kwargs)

    monkeypatch.setattr(pl, "scan_parquet", scan)
    monkeypatch.setattr(Files, "rows_of", lambda self, key: pytest.fail(f"the footer of {key} was opened"))
    with sandbox(tmp_path, offline=True) as reader, warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        frame = reader.versions_frame(ASKED)
        assert reader.sandbox_service.arrivals == []
    assert frame.equals(expected) and set(frame["app_id"]) == set(ASKED)
    assert len(scanned) == 1  # one scan of the files wanted, and of no other
    assert sorted(scanned[0]) == sorted(kept_frames(tmp_path, ASKED))


def test_a_warm_call_gets_only_the_kept_frames_of_its_answers_from_a_store(monkeypatch):
    store = MemoryStore()
    fill(Cache(store))
    got: list[str] = []
    real_get = MemoryStore.get
    monkeypatch.setattr(MemoryStore, "get", lambda self, key: got.append(key) or real_get(self, key))
    with sandbox(Cache(store), offline=True) as reader:
        frame = reader.versions_frame(ASKED)
        assert reader.sandbox_service.arrivals == []
    assert set(frame["app_id"]) == set(ASKED)
    frames_got = [key for key in got if key.startswith("frames/")]
    assert sorted(frames_got) == sorted(kept_frames(Cache(store), ASKED))  # each once, no other
    assert not [key for key in got if key.startswith("answers/")]  # no raw answer read


def test_a_new_client_on_a_partly_filled_cache_sends_only_the_missing_cells(tmp_path):
    apps = APPS[:12]
    with sandbox(tmp_path) as filler:
        filler.changes_frame(apps[:7], start="2026-10-01", end="2026-10-30")
    with sandbox(tmp_path) as warm:
        frame = warm.changes_frame(apps, start="2026-09-24", end="2026-10-30")
        asked = [dict(a.params) for a in warm.sandbox_service.arrivals]
    got = sorted((len(p["apps"].split(",")), p["start_date"], p["end_date"]) for p in asked)
    assert got == [(2, "2026-09-24", "2026-09-30"), (5, "2026-09-24", "2026-09-30"), (5, "2026-09-24", "2026-10-30")]
    assert {a for p in asked if p["end_date"] == "2026-09-30" for a in p["apps"].split(",")} == set(apps[:7])
    assert {a for p in asked if p["end_date"] == "2026-10-30" for a in p["apps"].split(",")} == set(apps[7:])
    with sandbox(None) as nothing_kept:
        assert frame.equals(nothing_kept.changes_frame(apps, start="2026-09-24", end="2026-10-30"))
    assert frame.height > 0
