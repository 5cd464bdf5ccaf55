"""The day's digest takes the ranks the run's judgement read (``RanksRead``) rather than reading them again: on
replayed days, the digest so made is the one a fresh read makes, byte for byte."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from storeframes.sandbox import Script, World
from storeframes.track import Tracker
from storeframes.track.day_digest import render_period
from storeframes.track.judge import find_events
from storeframes.track.judging import GAP_DAYS, STANDING_DAYS, Judged, RanksRead, rank_frame

WORLD = World(0)
FIRST = date(2026, 10, 22)
KEYWORDS = ["photo editor", "photo filters", "collage maker"]
APPS = ["3233849169", "394079159", "1395556972", "1286838609", "6441354028"]


def test_ranks_read_gives_the_days_it_holds_and_none_other() -> None:
    frame = pl.DataFrame({"date": [date(2026, 11, d) for d in (1, 5, 9)], "rank": [1, 2, 3]})
    read = RanksRead(date(2026, 11, 1), date(2026, 11, 9), frame)
    held = read.within(date(2026, 11, 5), date(2026, 11, 9))
    assert held is not None and held["rank"].to_list() == [2, 3]
    assert read.within(date(2026, 10, 31), date(2026, 11, 9)) is None  # began before the read
    assert read.within(date(2026, 11, 5), date(2026, 11, 8)) is None  # another last day
    assert RanksRead().within(date(2026, 11, 5), date(2026, 11, 9)) is None


RANK_RULES = f"""
[[alert]]
rule = "top"
apps = {json.dumps(APPS)}
n = 10
margin = 0

[[alert]]
rule = "rank_drop"
apps = {json.dumps(APPS)}
places = 1
"""
"""The rank rules of these tests: the top 10 and drops of a place, of five apps."""


def live_spec(name: str, rest: str = RANK_RULES, *, compact_at: int = 500) -> str:
    """A tracker following :data:`KEYWORDS` live in the sandbox, then ``rest`` (more items, its alert rules)."""
    return f"""[tracker]
name = "{name}"
cache_dir = "cache"
device = "iphone"
compact_at = {compact_at}

[[track]]
endpoint = "search"
keywords = {json.dumps(KEYWORDS)}
{rest}"""


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> Tracker:
    folder = tmp_path_factory.mktemp("reads")
    spec = folder / "reads.toml"
    spec.write_text(live_spec("reads", compact_at=0))
    tracker = Tracker.from_toml(spec, sandbox=True, progress=False)
    for n in range(24):
        assert tracker.run(FIRST + timedelta(days=n)).status == "ok"
    return tracker


@pytest.mark.slow
@pytest.mark.parametrize("n", [1, 6, 12, 23])
def test_the_digest_from_the_judgements_ranks_is_the_one_read_afresh(replayed: Tracker, n: int) -> None:
    day = FIRST + timedelta(days=n)
    with replayed.client(day) as client:
        cache, service = client.cache, client.namespace
        assert cache is not None
        events = replayed.events(since=day - timedelta(days=7), until=day)
        read = RanksRead()
        at = Judged(cache, service, day, datetime.now(UTC), 0, read)
        find_events(replayed.spec, at, events.clear())  # every event of the days judged, as if none were kept
        # the widest window of the rules, or the standings' 30 days the day's digest opens with: one read
        widest = min(day - timedelta(days=6 + GAP_DAYS), day - timedelta(days=STANDING_DAYS))
        assert read.frame is not None and read.start == widest and read.end == day
        fresh = rank_frame(replayed.spec, cache, service, read.start, day)
        assert read.frame.sort(read.frame.columns).equals(fresh.sort(fresh.columns))  # the rows, in no set order
        moved = events.filter(pl.col("rule").is_in(["top", "rank_drop"]))
        assert moved.height > 0  # the day's digest has charts to draw
        start = min(moved["day"].to_list())
        made = [
            render_period(replayed.spec, cache, service, start, day, events=events, month_spent=0, day=day, read=r)
            for r in (read, None)
        ]
    assert made[0].images and made[0].images == made[1].images
    assert made[0].markdown == made[1].markdown and made[0].html == made[1].html


def test_the_unknown_fields_read_from_a_bucket_side_by_side_are_those_read_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ``unknown_field`` rule loads a week of kept answers: from a bucket on a few threads (its GETs side by
    side), from a folder one by one; the events are the same."""
    from dataclasses import replace

    from storeframes.cache import Cache
    from storeframes.track import judge

    app = WORLD.app_ids("ios")[3]
    script = Script().extra_field(app, FIRST + timedelta(days=2), "aso_score", 7)
    spec = tmp_path / "fields.toml"
    metadata = f"""
[[track]]
endpoint = "metadata"
apps = {json.dumps([app, *APPS[:2]])}

[[alert]]
rule = "unknown_field"
"""
    spec.write_text(live_spec("fields", metadata))
    tracker = Tracker.from_toml(spec, sandbox=True, progress=False, script=script)
    day = FIRST + timedelta(days=3)
    for n in range(4):
        assert tracker.run(FIRST + timedelta(days=n)).status == "ok"
    cache = Cache(tmp_path / "cache")
    at = Judged(cache, "sandbox-0", day, datetime.now(UTC))
    alerts = [a for a in tracker.spec.alerts if a.rule == "unknown_field"]
    loaded: list[int] = []
    one_by_one = judge._unknown_events(tracker.spec, alerts, at)
    original = judge.read_many

    def counted(read, keys):  # type: ignore[no-untyped-def]
        loaded.append(len(keys))
        return original(read, keys)

    monkeypatch.setattr(judge, "read_many", counted)
    remote = replace(cache.storage.capabilities, local_root=None)
    monkeypatch.setattr(cache.storage, "capabilities", remote)
    side_by_side = judge._unknown_events(tracker.spec, alerts, at)
    assert sum(loaded) > 8  # every answer of the days, through read_many
    assert [(e["day"], e["target"]) for e in one_by_one] == [(FIRST + timedelta(days=2), "aso_score")]
    assert side_by_side == one_by_one


@pytest.mark.filterwarnings("ignore::storeframes.flatteners.UnknownFieldWarning")  # the scripted extra field's
def test_the_rules_judged_together_give_the_events_each_gives_alone(tmp_path: Path) -> None:
    """The rank rules read on a thread beside the listing and advertiser rules (the unknown-field rule after
    them): the events are those of each rule judged alone, in the same order."""
    from dataclasses import replace

    from storeframes.cache import Cache

    app = APPS[0]
    script = (
        Script()
        .rank(KEYWORDS[0], app, 2, start=FIRST, end=FIRST + timedelta(days=1))
        .rank(KEYWORDS[0], app, 30, start=FIRST + timedelta(days=2))
        .listing(app, FIRST + timedelta(days=2), title="Pixel Forge")
        .advertiser(KEYWORDS[1], APPS[1], start=FIRST + timedelta(days=3))
        .extra_field(APPS[2], FIRST + timedelta(days=3), "aso_score", 7)  # an app no other rule reads
    )
    spec = tmp_path / "together.toml"
    rules = f"""
[[track]]
endpoint = "search_ads"
keywords = {json.dumps(KEYWORDS[1:2])}

[[track]]
endpoint = "metadata"
apps = {json.dumps(APPS[:3])}

[[alert]]
rule = "rank_drop"
apps = {json.dumps(APPS[:2])}

[[alert]]
rule = "top"
apps = {json.dumps(APPS[:2])}
n = 5

[[alert]]
rule = "listing_change"
apps = {json.dumps(APPS[:2])}

[[alert]]
rule = "new_advertiser"

[[alert]]
rule = "unknown_field"
"""
    spec.write_text(live_spec("together", rules))
    tracker = Tracker.from_toml(spec, sandbox=True, progress=False, script=script)
    for n in range(5):
        ran = tracker.run(FIRST + timedelta(days=n))
        assert ran.status == "ok", ran.errors
    cache, day, none = Cache(tmp_path / "cache"), FIRST + timedelta(days=4), tracker.events().clear()
    now = datetime.now(UTC)
    together = find_events(tracker.spec, Judged(cache, "sandbox-0", day, now), none)
    alone = []
    for rules in (("rank_drop", "top"), ("listing_change",), ("new_advertiser",), ("unknown_field",)):
        one = replace(tracker.spec, alerts=tuple(a for a in tracker.spec.alerts if a.rule in rules))
        alone.append(find_events(one, Judged(cache, "sandbox-0", day, now), none))
    assert set(together["rule"]) == {"rank_drop", "top", "listing_change", "new_advertiser", "unknown_field"}
    assert together.equals(pl.concat(alone))
