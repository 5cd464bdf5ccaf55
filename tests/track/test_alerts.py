"""Alerts over replayed sandbox days, told to a loopback JSON webhook and a loopback SMTP server:
each rule fires on a move and only then, each event is kept and told once (a rerun, another process,
a webhook that failed), nothing fires on a day with no data, and no address's password shows."""

from __future__ import annotations

import itertools
import logging
import signal
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

import polars as pl
import pytest

import storeframes as sf
from storeframes.cache import EVENT_SCHEMA, Cache
from storeframes.sandbox import World
from storeframes.track import Tracker
from storeframes.track.rules import address_id

from .._notify_servers import mailbox, webhook
from .._secrets import leaks_in

pytest.importorskip("apprise")
pytest.importorskip("aiosmtpd")

WORLD = World(0)
KEYWORD = "photo editor"
FIRST = date(2026, 11, 1)
DAYS = [FIRST + timedelta(days=n) for n in range(12)]


def _organic(day: date) -> list[str]:
    return WORLD.search(KEYWORD, device="iphone", country="us", language="en", day=day)


APPS = [a for a in dict.fromkeys(_organic(FIRST))][:12]


def _spec(tmp_path: Path, urls: list[str], *, extra: str = "") -> Path:
    listed = ", ".join(f'"{a}"' for a in APPS)
    addresses = ", ".join(f'"{u}"' for u in urls)
    path = tmp_path / "watch.toml"
    path.write_text(
        f"""
[tracker]
name = "watch"
cache_dir = "cache"
budget_per_month = 100000

[[track]]
endpoint = "search"
keywords = ["{KEYWORD}"]

[[track]]
endpoint = "search_ads"
keywords = ["{KEYWORD}"]

[[alert]]
rule = "rank_drop"
apps = [{listed}]
places = 3
within = 20

[[alert]]
rule = "top"
apps = [{listed}]
n = 10
margin = 0

[[alert]]
rule = "new_advertiser"
{extra}
[notify]
urls = [{addresses}]
"""
    )
    return path


def _expected(days: list[date]) -> set[tuple[str, date, str]]:
    """The rank events the sandbox's own answers call for, comparing each day with the day before it
    that was fetched (the top rule's margin 0: every crossing, on its day): (rule, day, app)."""
    found = set()
    ranks = {d: {} for d in days}
    for d in days:
        for place, app in enumerate(_organic(d), start=1):
            ranks[d].setdefault(app, place)
    for before, now in itertools.pairwise(days):
        for app in APPS:
            was, rank = ranks[before].get(app), ranks[now].get(app)
            if was is not None and was <= 20 and (rank is None or rank - was >= 3):
                found.add(("rank_drop", now, app))
            if (was is not None and was <= 10) != (rank is not None and rank <= 10):
                found.add(("top", now, app))
    return found


def _rank_events(frame: pl.DataFrame) -> set[tuple[str, date, str]]:
    ranked = frame.filter(pl.col("rule").is_in(["rank_drop", "top"]))
    return set(zip(ranked["rule"], ranked["day"], ranked["app_id"], strict=True))


@pytest.mark.processes
def test_a_replayed_fortnight_fires_each_rank_move_once_and_tells_both_addresses_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    caplog.set_level(logging.DEBUG)
    with webhook() as hook, mailbox() as box:
        tracker = Tracker.from_toml(_spec(tmp_path, [hook.url, box.url]), sandbox=True)
        skipped = DAYS[7]  # no run that day: no snapshot, no_data
        results = {d: tracker.run(d) for d in DAYS if d != skipped}
        fetched = [d for d in DAYS if d != skipped]
        events = tracker.events()
        assert events.schema == EVENT_SCHEMA
        assert _rank_events(events) == _expected(fetched)
        assert events.height == sum(r.events for r in results.values())
        assert events["event_id"].n_unique() == events.height
        # the day after the gap is compared with the day before it, and says so
        after_gap = events.filter(pl.col("day") == DAYS[8])
        assert (after_gap["since"] == DAYS[6]).all()
        assert all(f"no data on {skipped}, compared with {DAYS[6]}" in d for d in after_gap["detail"])
        assert not events.filter(pl.col("day") == skipped).height
        # every event reached both addresses, once, and is marked so
        assert events["notified_at"].null_count() == 0
        key = Cache(tracker.spec.cache_dir).events.address_key()
        assert all(
            sorted(t) == sorted([address_id(hook.url, key), address_id(box.url, key)]) for t in events["notified_to"]
        )
        for text in (hook.texts(), box.texts()):
            for detail in events["detail"]:
                assert text.count(detail) == 1, detail
        told = len(hook.received), len(box.messages)
        assert told[0] == told[1] == sum(1 for r in results.values() if r.events)

        # a rerun of the last day, and a judgement in another process, find nothing new and send nothing
        again = tracker.run(DAYS[-1])
        assert (again.events, again.notified, again.requests) == (0, 0, 0)
        done = subprocess.run(
            [sys.executable, "-m", "storeframes", "track", "alerts", str(tracker.spec.path), "--sandbox",
             "--today", DAYS[-1].isoformat()],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "0 new events" in done.stdout
        assert (len(hook.received), len(box.messages)) == told
        assert tracker.events().equals(events)

    # the mail password never shows: not in a message, an event, a log line, a summary
    secret = box.password
    assert secret not in hook.texts() + box.texts()
    assert secret not in caplog.text and hook.secret not in caplog.text
    assert "apprise" not in {r.name for r in caplog.records}
    assert secret not in repr(tracker) + repr(tracker.spec) + "".join(r.summary() for r in results.values())
    kept = tracker.events().select(pl.col(pl.String), pl.col("notified_to").list.join(",")).to_pandas().to_csv()
    assert secret not in kept and "127.0.0.1" not in kept
    assert not leaks_in(Path(str(tracker.spec.cache_dir)))


def test_a_webhook_that_fails_gets_its_events_at_the_next_run_once(tmp_path: Path):
    with webhook() as hook, mailbox() as box:
        tracker = Tracker.from_toml(_spec(tmp_path, [hook.url, box.url]), sandbox=True)
        for d in DAYS[:4]:
            tracker.run(d)
        before = tracker.events()
        # a day with events, its webhook down: the mail has them, the hook not yet
        day = next(d for d in DAYS[4:] if any(e[1] == d for e in _expected(DAYS[3:]) if e[1] != DAYS[3]))
        for d in DAYS[4 : DAYS.index(day)]:
            tracker.run(d)
        hook.failing = 10
        failed = tracker.run(day)  # an address not told is a result not whole: partial, exit 3
        assert (failed.status, failed.exit_code) == ("partial", 3) and failed.events > 0
        assert any("notification to json://" in e and "go at the next run" in e for e in failed.errors)
        assert str(hook.port) not in " ".join(failed.errors)
        pending = tracker.events().filter(pl.col("day") == day)
        assert pending["notified_at"].null_count() == pending.height
        key = Cache(tracker.spec.cache_dir).events.address_key()
        assert all(t.to_list() == [address_id(box.url, key)] for t in pending["notified_to"]), pending.select(
            "rule", "notified_to"
        )
        mails = len(box.messages)
        hook.failing = 0
        following = tracker.run(day + timedelta(days=1))
        assert not [e for e in following.errors if "notification" in e] and following.status == "ok"
        told = hook.texts()
        for detail in pending["detail"]:
            assert told.count(detail) == 1
        # the mail had them already: it got the next day's events only
        assert len(box.messages) == mails + (1 if following.events else 0)
        mailed = box.texts()
        assert all(mailed.count(detail) == 1 for detail in pending["detail"])
        after = tracker.events()
        assert after.filter(pl.col("day") == day)["notified_at"].null_count() == 0
        assert before.height < after.height


def test_events_are_read_as_a_frame_offline(tmp_path: Path):
    with webhook() as hook:
        tracker = Tracker.from_toml(_spec(tmp_path, [hook.url]), sandbox=True)
        for d in DAYS[:5]:
            tracker.run(d)
    cache_dir = tracker.spec.cache_dir
    every = sf.events(cache_dir)
    assert every.schema == EVENT_SCHEMA and every.height > 0
    assert every["day"].is_sorted()
    later = sf.events(cache_dir, tracker="watch", since=DAYS[3].isoformat())
    assert later.height == every.filter(pl.col("day") >= DAYS[3]).height
    assert sf.events(cache_dir, tracker="someone-else").is_empty()
    with pytest.raises(sf.InvalidParameterError, match="since"):
        sf.events(cache_dir, since="2026-11-05", until="2026-11-01")
    with pytest.raises(sf.InvalidParameterError, match="a tracker's name"):
        sf.events(cache_dir, tracker="a/b")


@pytest.mark.processes
def test_two_processes_judging_at_once_tell_each_event_once(tmp_path: Path):
    quiet = _spec(tmp_path, [])
    tracker = Tracker.from_toml(quiet, sandbox=True)
    for d in DAYS[:6]:
        tracker.run(d)
    kept = tracker.events()
    assert kept.height > 0 and kept["notified_at"].null_count() == kept.height  # no address yet: none told
    with webhook() as hook:
        loud = tmp_path / "loud.toml"
        loud.write_text(quiet.read_text().replace("urls = []", f'urls = ["{hook.url}"]'))
        command = [sys.executable, "-m", "storeframes", "track", "alerts", str(loud), "--sandbox", "--today",
                   DAYS[5].isoformat()]  # fmt: skip
        both = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
        outputs = [p.communicate(timeout=120) for p in both]
        assert [p.returncode for p in both] == [0, 0], outputs
        told = hook.texts()
        assert len(hook.received) == 1  # one message, from whichever process held the lease first
        assert all(told.count(detail) == 1 for detail in kept["detail"])
    after = Tracker.from_toml(loud, sandbox=True).events()
    assert after.height == kept.height and after["notified_at"].null_count() == 0


@pytest.mark.processes
def test_a_judgement_killed_while_it_sends_loses_no_event(tmp_path: Path):
    quiet = _spec(tmp_path, [])
    tracker = Tracker.from_toml(quiet, sandbox=True)
    for d in DAYS[:6]:
        tracker.run(d)
    kept = tracker.events()
    with webhook() as hook:
        loud = tmp_path / "loud.toml"
        loud.write_text(quiet.read_text().replace("urls = []", f'urls = ["{hook.url}"]'))
        hook.stalling = 1  # the first message hangs: the process is killed while it waits for the answer
        command = [sys.executable, "-m", "storeframes", "track", "alerts", str(loud), "--sandbox", "--today",
                   DAYS[5].isoformat()]  # fmt: skip
        judging = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert hook.stalled.wait(60), judging.communicate(timeout=5)
        judging.send_signal(signal.SIGKILL)
        judging.communicate(timeout=30)  # its pipes read to the end and closed
        assert hook.received == []
        assert tracker.events()["notified_at"].null_count() == kept.height  # nothing recorded as told
        again = Tracker.from_toml(loud, sandbox=True).alerts(DAYS[5])
        assert again.events.is_empty() and again.errors == []
        told = hook.texts()
        assert len(hook.received) == 1 and all(told.count(detail) == 1 for detail in kept["detail"])
    assert tracker.events()["notified_at"].null_count() == 0


@pytest.mark.processes
def test_track_alerts_exits_3_when_an_address_could_not_be_told_and_0_once_it_is(tmp_path: Path):
    quiet = _spec(tmp_path, [])
    tracker = Tracker.from_toml(quiet, sandbox=True)
    for d in DAYS[:5]:
        tracker.run(d)
    kept = tracker.events()
    assert kept.height > 0
    with webhook() as hook:
        loud = tmp_path / "loud.toml"
        loud.write_text(quiet.read_text().replace("urls = []", f'urls = ["{hook.url}"]'))
        command = [
            sys.executable,
            "-m",
            "storeframes",
            "track",
            "alerts",
            str(loud),
            "--sandbox",
            "--today",
            DAYS[4].isoformat(),
        ]
        hook.failing = 10
        down = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert down.returncode == 3, down.stderr
        assert "error: notification to json://" in down.stdout and "go at the next run" in down.stdout
        assert str(hook.port) not in down.stdout + down.stderr and hook.secret not in down.stdout + down.stderr
        assert hook.received == []
        hook.failing = 0
        up = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert up.returncode == 0, up.stdout + up.stderr
        key = Cache(tracker.spec.cache_dir).events.address_key()
        assert f"told json://…#{address_id(hook.url, key)}: {kept.height} events" in up.stdout
        told = hook.texts()
        assert len(hook.received) == 1 and all(told.count(detail) == 1 for detail in kept["detail"])
