"""A lease whose release cannot be written (a full disk) never hides what the work under it returned or raised."""

from __future__ import annotations

import errno
import warnings
from pathlib import Path

import pytest

import storeframes as sf
from storeframes.coord.file_leases import FileLeases
from storeframes.coord.leases import Leases, holding

NAME = "track:watch|tracker"


def _full_disk_at_release(monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on every record a file lease writes fails as a full disk does."""

    def full(*args: object, **kwargs: object) -> bool:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(FileLeases, "_write", full)


def test_a_release_that_cannot_be_written_warns_and_the_block_returns_what_it_said(tmp_path: Path, monkeypatch):
    leases = Leases(FileLeases(tmp_path / "leases"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with holding(leases, NAME, timeout=5):
            _full_disk_at_release(monkeypatch)
            result = "failed: the ledger could not be written"
    assert result == "failed: the ledger could not be written"
    said = [str(w.message) for w in caught if issubclass(w.category, sf.CacheWarning)]
    assert said == [
        "could not release the lease on track:watch ([Errno 28] No space left on device); it lapses by itself "
        "within its TTL"
    ]
    monkeypatch.undo()  # room again: the lease is free to take once more, as the next run does
    with holding(Leases(FileLeases(tmp_path / "leases")), NAME, timeout=FileLeases.TTL * 2):
        pass


def test_an_error_of_the_block_is_raised_as_it_was_not_the_releases(tmp_path: Path, monkeypatch):
    leases = Leases(FileLeases(tmp_path / "leases"))
    with warnings.catch_warnings(record=True), pytest.raises(sf.CacheUnavailableError, match="the ledger"):
        warnings.simplefilter("always")
        with holding(leases, NAME, timeout=5):
            _full_disk_at_release(monkeypatch)
            raise sf.CacheUnavailableError("cannot write the ledger file (No space left on device)")
