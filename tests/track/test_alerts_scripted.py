"""Every alert rule over a replayed fortnight of the sandbox with scripted moves: each fires on its
move and only then; a day with no recorded search, an answer that left an app out and a run that failed
fire nothing, and the event after them says the gap; the digest holds every event and opens offline."""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, timedelta
from pathlib import Path

import polars as pl
import pytest

import storeframes as sf
from storeframes import sandbox
from storeframes.sandbox import Script, World
from storeframes.track import Tracker

from .._notify_servers import webhook

pytest.importorskip("apprise")

WORLD = World(0)
D = [date(2026, 11, 1) + timedelta(days=n) for n in range(14)]
EARLY = D[0] - timedelta(days=10)
LIVE, HISTORY = "photo editor", "budget planner"


def _quiet_app() -> str:
    """An app with no title or screenshots change of its own in the period (its listing moves are the script's)."""
    for app in WORLD.app_ids("ios")[40:]:
        changes = WORLD.changes(app, device="iphone", country="us", language="en", start=EARLY, end=D[-1])
        if not any(c["target"] in ("title", "screenshots") for c in changes):
            return app
    raise AssertionError("no quiet app")


RANKED = WORLD.app_ids("ios")[7]  # pinned by the script wherever it is searched
LISTED = _quiet_app()
ADVERTISER = WORLD.app_ids("ios")[55]

SCRIPT = (
    Script()
    # the live search: 5 until D5, 15 from D6 (a drop of 10, out of the top 10), 4 from D9 (back in),
    # the service down on D10, then 25 from D11 (compared with D9 across the failed run)
    .rank(LIVE, RANKED, 5, start=EARLY, end=D[5])
    .rank(LIVE, RANKED, 15, start=D[6], end=D[8])
    .rank(LIVE, RANKED, 4, start=D[9], end=D[10])
    .rank(LIVE, RANKED, 25, start=D[11])
    .outage(D[10])
    # the search history only: 3, no record on D4, then out of the results from D5
    .rank(HISTORY, RANKED, 3, start=EARLY, end=D[3])
    .no_data(HISTORY, D[4])
    .rank(HISTORY, RANKED, None, start=D[5])
    # listings: left out of D3's answer, a new title on D4, new screenshots on D7 (the change history lists neither)
    .leave_out(LISTED, D[3])
    .listing(LISTED, D[4], title="Snap Studio Pro")
    .listing(LISTED, D[7], screenshots=True)
    .extra_field(LISTED, D[6], "aso_score", 7)
    .advertiser(LIVE, ADVERTISER, start=D[2])
)


def _spec(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "watch.toml"
    path.write_text(
        f"""
[tracker]
name = "scripted"
cache_dir = "cache"
budget_per_month = 1000

[[track]]
endpoint = "search"
keywords = ["{LIVE}"]

[[track]]
endpoint = "search_ads"
keywords = ["{LIVE}"]

[[track]]
endpoint = "search_history"
keywords = ["{HISTORY}"]
lookback = "3d"

[[track]]
endpoint = "metadata"
apps = ["{LISTED}"]

[[alert]]
rule = "rank_drop"
apps = ["{RANKED}"]
places = 5
within = 20

[[alert]]
rule = "top"
apps = ["{RANKED}"]
n = 10

[[alert]]
rule = "listing_change"
apps = ["{LISTED}"]
targets = ["title", "screenshots"]

[[alert]]
rule = "new_advertiser"

[[alert]]
rule = "budget"
at = 0.4

[[alert]]
rule = "unknown_field"

[notify]
urls = ["{url}"]
digest = "reports/{{tracker}}-{{day}}.html"
"""
    )
    return path


@contextmanager
def _the_scripts_warnings() -> Iterator[None]:
    """The warnings the script's days must give: D3's answer leaves the listing out, D6's has a field unknown."""
    with pytest.warns(sf.UnknownFieldWarning, match="aso_score"), pytest.warns(sf.AnswerWarning, match="left out"):
        yield


def _advertisers_expected() -> set[tuple[date, str]]:
    """New advertisers of the live keyword, by the sandbox's own answers (the script's included)."""
    seen: set[str] = set()
    found = set()
    for n, day in enumerate(d for d in D if d != D[10]):
        with sandbox.client(today=day, script=SCRIPT, cache_dir=False) as client:
            ads = client.search_frame(LIVE, ads=True).filter(pl.col("is_ad"))["app_id"].to_list()
        if n:
            found |= {(day, a) for a in ads if a not in seen}
        seen |= set(ads)
    return found


@pytest.mark.slow  # eleven days of a tracker replayed
def test_each_rule_fires_on_its_scripted_move_and_only_then(tmp_path: Path):
    with webhook() as hook:
        tracker = Tracker.from_toml(_spec(tmp_path, hook.url), sandbox=True, script=SCRIPT)
        with _the_scripts_warnings():
            results = {day: tracker.run(day) for day in D}
        events = tracker.events()
    assert results[D[10]].status == "failed"
    # the listing the service left out of D3's answer: that day's snapshot of it is a hole, named
    assert (results[D[3]].status, results[D[3]].missing) == ("partial", {"metadata": [D[3]]})
    assert all(r.status == "ok" for d, r in results.items() if d not in (D[3], D[10]))
    by_rule = {rule: frame for (rule,), frame in events.group_by("rule")}

    live = by_rule["rank_drop"].filter(pl.col("keyword") == LIVE).sort("day")
    assert live.select("day", "since", "before", "after").rows() == [
        (D[6], D[5], "5", "15"),
        (D[11], D[9], "4", "25"),
    ]
    assert f"no data on {D[10]}, compared with {D[9]}" in live["detail"][1]
    top = by_rule["top"].filter(pl.col("keyword") == LIVE).sort("day")
    assert top.select("day", "before", "after").rows() == [(D[6], "5", "15"), (D[9], "15", "4"), (D[11], "4", "25")]
    assert [("entered" if "entered" in d else "left") for d in top["detail"]] == ["left", "entered", "left"]

    # the history keyword: its day with no record is skipped, the exit after it compared with the day before
    history = by_rule["rank_drop"].filter(pl.col("keyword") == HISTORY)
    assert history.select("day", "since", "before", "after").rows() == [(D[5], D[3], "3", None)]
    assert f"no data on {D[4]}, compared with {D[3]}" in history["detail"][0]
    assert "not ranked" in history["detail"][0]
    assert by_rule["top"].filter(pl.col("keyword") == HISTORY).select("day", "after").rows() == [(D[5], None)]

    listing = by_rule["listing_change"].sort("day")
    assert listing.select("day", "since", "target").rows() == [(D[4], D[2], "title"), (D[7], D[6], "screenshots")]
    assert listing["after"][0] == "Snap Studio Pro"
    assert "http" not in " ".join(listing["detail"])

    ads = by_rule["new_advertiser"]
    assert set(zip(ads["day"], ads["app_id"], strict=True)) == _advertisers_expected()
    assert ads.filter(pl.col("app_id") == ADVERTISER)["day"].to_list() == [D[2]]

    unknown = by_rule["unknown_field"]
    assert unknown.select("day", "target").rows() == [(D[6], "aso_score")]

    assert "budget" in by_rule, [(d, r.month_spent) for d, r in results.items()]
    budget = by_rule["budget"]
    crossed = next(d for d in D if (results[d].month_spent or 0) >= 400)
    assert budget.select("day", "target").rows() == [(crossed, "budget_per_month")]

    assert set(by_rule) == {"rank_drop", "top", "listing_change", "new_advertiser", "unknown_field", "budget"}
    assert (
        not events.filter(pl.col("day") == D[10]).height
        - events.filter((pl.col("day") == D[10]) & (pl.col("rule") == "budget")).height
    )

    # the webhook heard each event once; every run day's digest holds that day's events, with no link out
    told = hook.texts()
    assert all(told.count(detail) == 1 for detail in events["detail"])
    for day in D:
        page = (tmp_path / "reports" / f"scripted-{day}.html").read_text()
        assert "http" not in page
        today = events.filter(pl.col("first_seen").dt.date() == day)
        for detail in today["detail"]:
            assert html.escape(detail) in page
    assert (tmp_path / "reports" / f"scripted-{D[6]}.md").exists()

    # the period's digest: every event, no link out, its Markdown twin and charts beside it
    written = tracker.digest(D[0], D[-1])
    page = written[0].read_text()
    assert written[0].name == f"scripted-{D[0]}_{D[-1]}.html" and "http" not in page
    assert all(html.escape(d) in page for d in events["detail"])
    markdown = written[1].read_text()
    assert all(path.exists() for path in written[2:]) and len(written) > 2
    assert all(d in markdown.replace("\\", "") for d in events["detail"])  # Markdown escapes < > | with \\


def test_observed_changes_find_the_scripted_listing_moves_the_change_history_does_not_list(tmp_path: Path):
    cache = tmp_path / "cache"
    with _the_scripts_warnings():
        for day in D[:9]:
            with sandbox.client(today=day, script=SCRIPT, cache_dir=cache) as client:
                client.metadata_frame(LISTED)
                client.screenshots_frame(LISTED)
    seen = sf.observed_changes(cache, apps=[LISTED])
    assert seen.filter(pl.col("target") == "title").select("date", "since", "old_value", "new_value").rows() == [
        (D[4], D[2], WORLD.metadata(LISTED, device="iphone", country="us", language="en", today=D[2])["title"],
         "Snap Studio Pro")
    ]  # fmt: skip
    screens = seen.filter(pl.col("target") == "screenshots")
    assert set(screens["date"]) == {D[7]} and screens.height >= 1
    assert (screens["since"] == D[6]).all() and (screens["source"] == "snapshot").all()
    with sandbox.client(today=D[9], script=SCRIPT, cache_dir=False) as client:
        history = client.changes_frame(LISTED, start=D[0], end=D[8])
    assert history.filter(pl.col("target").is_in(["title", "screenshots"])).is_empty()


def test_a_listing_change_both_the_history_and_the_snapshots_show_is_one_event(tmp_path: Path):
    first = date(2026, 11, 3)
    apps = []
    for app in WORLD.app_ids("ios")[:200]:
        listed = WORLD.changes(app, device="iphone", country="us", language="en", start=first, end=D[13])
        if sum(c["target"] in ("long_description", "screenshots") for c in listed) >= 2:
            apps.append(app)
    apps = apps[:3]
    spec = tmp_path / "both.toml"
    spec.write_text(
        f"""
[tracker]
name = "both"
cache_dir = "cache"

[[track]]
endpoint = "metadata"
apps = {json.dumps(apps)}

[[track]]
endpoint = "changes"
apps = {json.dumps(apps)}
lookback = "2d"

[[alert]]
rule = "listing_change"
targets = ["description", "screenshots"]
"""
    )
    tracker = Tracker.from_toml(spec, sandbox=True)
    for day in (D[0] + timedelta(days=n) for n in range(16)):
        assert tracker.run(day).status == "ok"
    events = tracker.events().with_columns(pl.col("target").replace("long_description", "description"))
    expected = {
        (app, date.fromisoformat(c["date"]), c["target"].replace("long_description", "description"))
        for app in apps
        for c in WORLD.changes(app, device="iphone", country="us", language="en", start=first, end=D[13])
        if c["target"] in ("long_description", "screenshots")
    }
    assert len(expected) >= 6
    # each change of the history is one event, found on its day or the day after (by a snapshot, when the
    # history had not listed it yet): never two
    for app, day, target in expected:
        same = events.filter(
            (pl.col("app_id") == app) & (pl.col("target") == target) & pl.col("day").is_between(day, day + timedelta(1))
        )
        assert same.height == 1, (app, day, target, same.select("day", "detail").rows())
    assert events.height == len(expected)
