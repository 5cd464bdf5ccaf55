"""Where we stand on a replayed month: the standings' 1/7/30-day changes equal those counted by hand from
rank_history of what the cache keeps, days no run fetched are "not fetched" and never a drop, and the digest
of the day opens with the same numbers."""

from __future__ import annotations

import re
from datetime import date, timedelta
from pathlib import Path

import pytest

import storeframes as sf
from storeframes.track import Tracker
from storeframes.track.day_digest import fetched_days, kept_digest
from storeframes.track.digest_standings import digest_standings
from storeframes.track.judging import followed_keywords, rank_frame, tracked_apps

pytestmark = pytest.mark.slow  # forty days of tracking replayed, day by day

APPS = ["3233849169", "394079159", "6441354028"]
KEYWORDS = ["photo editor", "photo filters", "collage maker"]
FIRST, LAST = date(2026, 10, 20), date(2026, 11, 28)
SKIPPED = {date(2026, 11, 10), date(2026, 11, 11), date(2026, 11, 21), date(2026, 11, 27)}  # no run: not fetched
SPEC = f"""
[tracker]
name = "standing"
cache_dir = "cache"
device = "iphone"
country = "us"

[[track]]
endpoint = "search"
keywords = {KEYWORDS!r}

[[track]]
endpoint = "metadata"
apps = {APPS!r}

[[alert]]
rule = "top"
apps = {APPS!r}
n = 10
""".replace("'", '"')


@pytest.fixture(scope="module")
def tracker(tmp_path_factory: pytest.TempPathFactory) -> Tracker:
    folder: Path = tmp_path_factory.mktemp("standing")
    (folder / "standing.toml").write_text(SPEC)
    tracker = Tracker.from_toml(folder / "standing.toml", sandbox=True)
    day = FIRST
    while day <= LAST:
        if day not in SKIPPED:
            assert tracker.run(day).status == "ok"
        day += timedelta(days=1)
    return tracker


def _by_hand(tracker: Tracker, end: date) -> dict[tuple[str, str], dict[str, object]]:
    """Each app's and keyword's rank on ``end`` and its changes, from rank_history's rows in plain Python."""
    with tracker.client(end) as client:
        start = end - timedelta(days=30)
        kept = rank_frame(tracker.spec, client.cache, client.namespace, start, end)
        asked = fetched_days(tracker.spec, client.cache, client.namespace, start, end)
    ranks = sf.rank_history(kept, APPS, keywords=KEYWORDS, start=start, end=end, fetched=asked)
    seen = {(r["app_id"], r["keyword"], r["date"]): (r["rank"], r["status"]) for r in ranks.iter_rows(named=True)}
    out: dict[tuple[str, str], dict[str, object]] = {}
    for app in APPS:
        for keyword in KEYWORDS:
            rank, status = seen[app, keyword, end]
            row: dict[str, object] = {"rank": rank, "status": status}
            for n in (1, 7, 30):
                before, was = seen[app, keyword, end - timedelta(days=n)]
                row[f"change_{n}d"] = before - rank if status == was == "ranked" else None
                row[f"was_{n}d"] = was
            out[app, keyword] = row
    return out


@pytest.mark.parametrize("end", [date(2026, 11, 18), date(2026, 11, 22), date(2026, 11, 28)])
def test_the_changes_equal_those_counted_by_hand_and_holes_are_never_drops(tracker, end):
    with tracker.client(end) as client:
        asked = fetched_days(tracker.spec, client.cache, client.namespace, end - timedelta(days=30), end)
        found = digest_standings(tracker.spec, client.cache, client.namespace, end, fetched=asked)
    expected = _by_hand(tracker, end)
    assert found.height == len(APPS) * len(KEYWORDS) == len(expected)
    for row in found.iter_rows(named=True):
        want = expected[row["app_id"], row["keyword"]]
        assert {k: row[k] for k in want} == want, (row["app_id"], row["keyword"])
        assert row["country"] == "us" and row["date"] == end
        for n in (1, 7, 30):
            if end - timedelta(days=n) in SKIPPED:
                assert row[f"was_{n}d"] == "not_fetched" and row[f"change_{n}d"] is None
    holes = {n for n in (1, 7, 30) if end - timedelta(days=n) in SKIPPED}
    assert holes, "each end day chosen has a day not fetched among its 1, 7 or 30 days before"
    sizes = found["biggest_move"].to_list()
    assert sizes == sorted(sizes, key=lambda s: -1 if s is None else s, reverse=True)


def test_a_day_not_fetched_is_its_own_gap_in_the_trend(tracker):
    with tracker.client(LAST) as client:
        asked = fetched_days(tracker.spec, client.cache, client.namespace, LAST - timedelta(days=30), LAST)
        found = digest_standings(tracker.spec, client.cache, client.namespace, LAST, fetched=asked)
    for row in found.iter_rows(named=True):
        days = [row["trend_start"] + timedelta(days=i) for i in range(len(row["trend_status"]))]
        gaps = {d for d, s in zip(days, row["trend_status"], strict=True) if s == "not_fetched"}
        assert gaps == SKIPPED
        assert all(r is None for r, s in zip(row["trend"], row["trend_status"], strict=True) if s != "ranked")


def test_the_tracked_apps_and_keywords_are_the_specs(tracker):
    assert tracked_apps(tracker.spec) == APPS
    assert followed_keywords(tracker.spec) == {"us": KEYWORDS}


def test_the_digest_of_the_day_opens_with_where_we_stand(tracker):
    digest = kept_digest(tracker.spec, LAST)
    with tracker.client(LAST) as client:
        asked = fetched_days(tracker.spec, client.cache, client.namespace, LAST - timedelta(days=30), LAST)
        found = digest_standings(tracker.spec, client.cache, client.namespace, LAST, fetched=asked)
    html, md = digest.html, digest.markdown
    opening = html.index(f"<h2>Where we stand on {LAST}</h2>")
    assert [m.start() for m in re.finditer("<h2", html)][0] == opening  # before the events and the charts
    assert html.index("<table", opening) > opening and html.find("<table") > opening
    assert [m.start() for m in re.finditer("^## ", md, re.MULTILINE)][0] == md.index(f"## Where we stand on {LAST}")
    assert html.count('<table class="standings">') == len(APPS)
    assert html.count('<span class="spark"') == found.height
    tables = _tables(md)
    for row in found.iter_rows(named=True):
        cells = [str(row["rank"]) if row["status"] == "ranked" else row["status"].replace("_", " ")]
        for n in (1, 7, 30):
            change, was = row[f"change_{n}d"], row[f"was_{n}d"]
            if change is not None:
                cells.append("=" if change == 0 else f"+{change}" if change > 0 else f"-{-change}")
            elif (row["status"], was) == ("ranked", "not_ranked"):
                cells.append("entered")
            elif (row["status"], was) == ("not_ranked", "ranked"):
                cells.append("left")
            elif row["status"] == was == "not_ranked":
                cells.append("—")
            else:  # one of the days is a hole: no data, not fetched, or before the history
                cells.append("?")
        assert tables[row["app_id"]][row["keyword"]] == dict(zip((0, 1, 7, 30), cells, strict=True))


def _tables(md: str) -> dict[str, dict[str, dict[int, str]]]:
    """The Markdown's standings: by app id (named in its table's heading) and keyword, the rank and change cells."""
    out: dict[str, dict[str, dict[int, str]]] = {}
    for block in md.split("\n### ")[1:]:
        heading, table = block.split("\n\n")[:2]
        lines = table.splitlines()
        app = re.search(r"\b(\d{6,})\b", heading)
        assert app is not None, heading
        rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines if line.startswith("| ")]
        out[app.group(1)] = {r[0]: dict(zip((0, 1, 7, 30), r[1:5], strict=True)) for r in rows[1:]}
    return out


def test_the_tracker_tells_its_standings_offline(tracker):
    with tracker.client(LAST) as client:
        asked = fetched_days(tracker.spec, client.cache, client.namespace, LAST - timedelta(days=30), LAST)
        found = digest_standings(tracker.spec, client.cache, client.namespace, LAST, fetched=asked)
    told = tracker.standings(LAST)
    assert told.equals(found) and told.height == 9
    assert tracker.standings("2026-11-27")["status"].unique().to_list() == ["not_fetched"]  # no run that day
    with pytest.raises(sf.errors.InvalidParameterError, match="today"):
        tracker.standings("last monday")
