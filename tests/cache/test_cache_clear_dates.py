"""``cache clear --older-than`` and answers whose files are dated in the future (a clock that ran ahead, times
copied along with the files): they count as kept now, are dated now, and go once older than the age asked; never
kept for ever, and the command says what it did with them."""

from __future__ import annotations

import os
import time
from pathlib import Path

import storeframes as sf
from storeframes.cache import Cache
from storeframes.cli import main
from storeframes.sandbox import World
from tests import _summary

IOS = list(World(0).EXAMPLE_IOS_APPS)
DAY = 86400.0


def _dated(folder: Path, entry_id: str, seconds: float) -> None:
    """Date the answer and index files of ``entry_id`` ``seconds`` from now (in the past when negative)."""
    then = time.time() + seconds
    for path in [*folder.glob(f"answers/*/{entry_id}.json.*"), *folder.glob(f"index/*/{entry_id}.parquet")]:
        os.utime(path, (then, then))


def test_clear_older_than_dates_a_file_dated_in_the_future_now_and_removes_it_once_it_is_old(tmp_path, capsys):
    """A clock that ran ahead (or times copied along) never keeps an answer for ever: it counts as kept now."""
    _summary.hostile("cache: a file dated a year ahead")
    folder = tmp_path / "cache"
    with sf.sandbox.client(cache_dir=folder, backoff=(0.001, 0.01)) as client:
        client.metadata_frame(IOS[:2])
    (ahead,) = Cache(folder).entries()
    _dated(folder, ahead.id, 365 * DAY)
    answer = next(folder.glob(f"answers/*/{ahead.id}.json.*"))
    kept = answer.read_bytes()

    # asked first (nobody to ask in a script): the preview says what will become of it
    assert main(["cache", "clear", "--older-than", "30", "--cache-dir", str(folder)]) == 2
    assert (
        "this would remove 0 cached answers kept more than 30 days ago from "
        f"{folder} (and 1 answer whose files are dated in the future: counted as kept now, they are dated now "
        "and go once older than that)"
    ) in capsys.readouterr().err
    assert answer.stat().st_mtime > time.time() + 300 * DAY  # nothing done

    assert main(["cache", "clear", "--yes", "--older-than", "30", "--cache-dir", str(folder)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == [
        f"removed 0 cached answers kept more than 30 days ago from {folder}",
        "kept 1 cached answer whose files were dated in the future (a clock ahead, or times copied along with "
        "the files): counted as kept now and dated now, it goes with a clear --older-than 30 once 30 days old",
    ]
    assert answer.read_bytes() == kept and answer.stat().st_mtime <= time.time()  # the same answer, dated now
    assert [e.id for e in Cache(folder).entries()] == [ahead.id]
    assert main(["cache", "clear", "--yes", "--older-than", "30", "--cache-dir", str(folder)]) == 0
    assert capsys.readouterr().out == f"removed 0 cached answers kept more than 30 days ago from {folder}\n"

    _dated(folder, ahead.id, -31 * DAY)  # a month goes by
    assert main(["cache", "clear", "--yes", "--older-than", "30", "--cache-dir", str(folder)]) == 0
    assert capsys.readouterr().out == f"removed 1 cached answer kept more than 30 days ago from {folder}\n"
    assert Cache(folder).entries() == [] and not answer.exists()
