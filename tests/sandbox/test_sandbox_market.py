"""The sandbox's market has what share of voice, opportunities and anomalies need, deterministically per day.

Five weeks are replayed through the service (Monday 2026-10-19 .. Sunday 2026-11-22, seed 0, us,
iphone): competitors gain and lose places, advertisers come and go by the week, some apps rise or
fall at the weekend, and a few apps jump ten places or more a few days after a listing change
that the changes endpoint reports.
"""

from __future__ import annotations

import dataclasses
import json
import statistics
import subprocess
import sys
from datetime import date, timedelta

import pytest

from storeframes.sandbox import API_PREFIX, SANDBOX_KEY, SandboxService, World
from storeframes.sandbox.moves import JUMP_DELAY, advertisers, listing_jumps, weekly_rhythm
from tests._children import child_env
from tests.conftest import ROOT

WORLD = World(0)
WEEKS = 5
DAYS = [date(2026, 10, 19) + timedelta(days=n) for n in range(7 * WEEKS)]  # Monday .. Sunday
KEYWORDS = WORLD.EXAMPLE_KEYWORDS
LISTING = frozenset({"title", "subtitle", "screenshots", "long_description"})
"""The iphone change targets that may move an app on a keyword."""


@pytest.fixture(scope="module")
def service() -> SandboxService:
    return SandboxService(today=DAYS[0], world=WORLD, rate_limit=(10**9, 1.0))


def get(service: SandboxService, day: date, path: str, **params: str) -> dict:
    service.today = day
    reply = service.handle("GET", API_PREFIX + path, list(params.items()), {"X-Service-Key": SANDBOX_KEY})
    assert reply.status == 200, reply.body
    return json.loads(reply.body)


@pytest.fixture(scope="module")
def ranks(service) -> dict[str, list[dict[str, int]]]:
    """Each example keyword's live search on each day: ``[{app: rank}, ...]``."""
    return {
        keyword: [
            {
                app: n
                for n, app in enumerate(
                    get(service, day, "/keywords/search-results/current", keyword=keyword)["result"]["value"], 1
                )
            }
            for day in DAYS
        ]
        for keyword in KEYWORDS
    }


@pytest.fixture(scope="module")
def listing_changes(service, ranks) -> dict[str, dict[int, set[str]]]:
    """For every app in a keyword's top 60 on some day: day index -> listing targets it changed that day."""
    apps = sorted({app for days in ranks.values() for day in days for app, rank in day.items() if rank <= 60})
    found: dict[str, dict[int, set[str]]] = {}
    for n in range(0, len(apps), 5):
        batch = apps[n : n + 5]
        result = get(
            service, DAYS[-1], "/apps/metadata/changes.json",
            apps=",".join(batch), start_date=DAYS[0].isoformat(), end_date=DAYS[-1].isoformat(),
        )["result"]  # fmt: skip
        for app in batch:
            for record in result[app]["changes"]:
                if record["target"] in LISTING:
                    day = DAYS.index(date.fromisoformat(record["date"]))
                    found.setdefault(app, {}).setdefault(day, set()).add(record["target"])
    return found


# ---------------------------------------------------------------------------------------------- jumps


def test_apps_jump_ten_places_within_three_days_after_a_listing_change_the_changes_endpoint_reports(
    ranks, listing_changes
):
    """A jump lasts (the app stays ten places or more from where it stood for four days), and the change caused it.

    Ranks move ten places in a few days without a change too (drift, episodes, weekends), so each
    jump is set beside the same world without listing jumps: there the app stays where it stood.
    """
    still = World(0)
    still._jumps = lambda *block: ()  # type: ignore[method-assign]
    jumps, caused = [], []
    for keyword, days in ranks.items():
        for app, changed in sorted(listing_changes.items()):
            for n in sorted(changed):
                before = days[n].get(app)
                if before is None or before > 60 or n + JUMP_DELAY[1] + 3 >= len(DAYS):
                    continue
                for lag in range(JUMP_DELAY[0], JUMP_DELAY[1] + 1):
                    after = [days[n + lag + k].get(app, 251) for k in range(4)]
                    if all(abs(rank - before) >= 10 and (rank > before) == (after[0] > before) for rank in after):
                        jumps.append((keyword, app, DAYS[n].isoformat(), lag, before, after[0]))
                        plain = still.search(keyword, device="iphone", country="us", language="en", day=DAYS[n + lag])
                        if app in plain and abs(plain.index(app) + 1 - before) < 10:
                            caused.append(
                                (keyword, app, DAYS[n].isoformat(), sorted(changed[n]), lag, before, after[0])
                            )
                        break
    assert len(jumps) == 63
    assert len(caused) >= 3 and {c[4] for c in caused} == {1, 2, 3}
    assert any(after < before for *_, before, after in caused) and any(after > before for *_, before, after in caused)
    assert len(caused) == 19
    assert caused[:5] == [
        ("photo editor", "1148349338", "2026-11-12", ["subtitle"], 2, 6, 18),
        ("photo editor", "1761618000", "2026-11-05", ["long_description"], 3, 42, 251),
        ("photo editor", "1761618000", "2026-11-07", ["screenshots"], 1, 42, 251),
        ("photo editor", "5476859392", "2026-11-14", ["screenshots"], 3, 37, 47),
        ("photo editor", "5784757755", "2026-11-09", ["screenshots"], 1, 47, 12),
    ]
    assert ("puzzle games", "566405822", "2026-11-16", ["title"], 1, 31, 14) in caused


def test_every_jump_of_the_world_follows_a_change_of_that_app_the_changes_endpoint_reports(ranks, listing_changes):
    """The world's own jumps, read back: each starts 1-3 days after a listing change of the jumping app."""
    checked = 0
    for keyword in KEYWORDS:
        model = WORLD._ranking_model("ios", keyword, "us", "en")
        blocks = {day.toordinal() // 28 for day in DAYS}
        for block in sorted(blocks):
            for index, start, _end, _shift in WORLD._jumps("ios", keyword, "us", "en", block):
                app = model.app_ids[index]
                first = start - DAYS[0].toordinal() - JUMP_DELAY[1]
                if first < 0 or start > DAYS[-1].toordinal():
                    continue
                days_changed = set(listing_changes.get(app, {}))
                assert days_changed & {start - DAYS[0].toordinal() - lag for lag in (1, 2, 3)}, (keyword, app, start)
                checked += 1
    assert checked == 54  # about nine a keyword in five weeks


def test_listing_jumps_need_a_change_and_end_when_the_field_changes_again():
    class Every30:
        def day_of(self, k: int) -> int:
            return 739_000 + 30 * k

        def events_between(self, first: int, last: int) -> list[int]:
            return [k for k in range(100) if first <= self.day_of(k) <= last]

    listings = [(n, f"app{n}", n, "screenshots", Every30()) for n in range(200)]
    jumps = listing_jumps("k", 739_030, 739_029 + 30 * 60, listings)
    assert 0.07 <= len(jumps) / (200 * 60) <= 0.13  # about one change in ten moves its app
    for _index, start, end, shift in jumps:
        lag = (start - 739_000) % 30
        assert 1 <= lag <= 3 and 0 <= end - start < 21 and (end - 739_000) // 30 == (start - 739_000) // 30
        assert 0.8 <= abs(shift) <= 1.6
    assert listing_jumps("k", 739_030, 739_100, []) == []


# ---------------------------------------------------------------------------------------------- advertisers


@pytest.fixture(scope="module")
def weekly_advertisers(service) -> dict[str, list[set[str]]]:
    found: dict[str, list[set[str]]] = {}
    for keyword in KEYWORDS:
        weeks: list[set[str]] = [set() for _ in range(WEEKS)]
        for n, day in enumerate(DAYS):
            entries = get(service, day, "/keywords/search-results/ads/current", keyword=keyword)["result"]
            ads = [e["application_id"] for e in entries if e["is_ad"]]
            assert len(ads) == 2 and [e["is_ad"] for e in entries[:2]] == [True, True]
            weeks[n // 7] |= set(ads)
        found[keyword] = weeks
    return found


def test_advertisers_enter_for_a_few_weeks_and_leave(weekly_advertisers):
    entered = {k: sorted(set().union(*weeks[1:]) - weeks[0]) for k, weeks in weekly_advertisers.items()}
    left = {k: sorted(weeks[0] - weeks[-1]) for k, weeks in weekly_advertisers.items()}
    assert sum(map(len, entered.values())) >= 3 and sum(map(len, left.values())) >= 2
    assert {k: [len(w) for w in weeks] for k, weeks in weekly_advertisers.items()} == {
        "photo editor": [2, 2, 2, 2, 2],
        "budget planner": [4, 2, 4, 4, 4],
        "puzzle games": [3, 4, 3, 3, 3],
        "meditation": [3, 2, 2, 2, 2],
        "running tracker": [3, 3, 3, 4, 2],
        "recipes": [3, 4, 4, 3, 2],
    }
    assert entered["photo editor"] == ["1702423025", "5354395118", "5907029236"]  # one campaign a week
    assert left["photo editor"] == ["1911889798"]
    assert entered["recipes"] == ["1648016150", "4442254101", "4934324329"]
    assert left["recipes"] == ["2136678033", "965179155"]


def test_the_advertisers_of_a_week_are_steady_ones_and_campaigns_of_one_to_three_weeks():
    bidders = [f"app{n}" for n in range(10)]
    weeks = [advertisers("0:k:us", week, bidders) for week in range(105_000, 105_052)]
    assert all(len(w) >= 2 and len(set(w)) == len(w) and set(w) <= set(bidders) for w in weeks)
    steady = set.intersection(*map(set, weeks))
    assert steady and steady <= set(bidders[:2])
    runs: dict[str, list[int]] = {}
    for n, week in enumerate(weeks):
        for app in set(week) - steady:
            runs.setdefault(app, []).append(n)
    assert len(runs) >= 4  # campaigns come and go
    assert advertisers("0:k:us", 105_010, bidders) == weeks[10]
    sizes = {
        key: statistics.mean(len(advertisers(key, w, bidders)) for w in range(105_000, 105_052))
        for key in ("0:a:us", "0:b:us", "0:c:us", "0:d:us")
    }
    assert max(sizes.values()) - min(sizes.values()) >= 1.0  # some keywords have more advertisers than others


# ---------------------------------------------------------------------------------------------- rhythm


def test_apps_with_a_weekly_rhythm_move_at_the_weekend_by_their_planted_amount(ranks):
    """On Monday to Friday the ranking is the one without rhythms; at the weekend the apps with one move."""
    keyword = "recipes"
    model = WORLD._ranking_model("ios", keyword, "us", "en")
    flat = World(0)
    flat._ranking_model = lambda *key: dataclasses.replace(WORLD._ranking_model(*key), rhythm=())  # type: ignore[method-assign]
    plain = [flat.search(keyword, device="iphone", country="us", language="en", day=day) for day in DAYS]
    days = ranks[keyword]
    for n, day in enumerate(DAYS):
        same = list(days[n]) == plain[n]
        assert same == (day.weekday() < 5), day
    moved = {}
    for index, shifts in model.rhythm:
        app = model.app_ids[index]
        weekend = [n for n, day in enumerate(DAYS) if day.weekday() >= 5 and app in days[n]]
        if statistics.median(days[n][app] for n in weekend) > 40:
            continue
        planted = statistics.median(plain[n].index(app) + 1 - days[n][app] for n in weekend)
        by_weekday = [statistics.median(days[n].get(app, 251) for n in range(w, len(DAYS), 7)) for w in range(7)]
        without = [
            statistics.median(plain[n].index(app) + 1 if app in plain[n] else 251 for n in range(w, len(DAYS), 7))
            for w in range(7)
        ]
        moved[app] = (round(shifts[5], 2), planted, by_weekday)
        assert (planted > 0) == (shifts[5] > 0) and abs(planted) >= 5
        assert by_weekday[:5] == without[:5]  # the same-weekday baseline of a weekday is untouched
        assert all(abs(without[w] - by_weekday[w] - planted) <= max(4, abs(planted) / 5) for w in (5, 6)), (
            app,
            without,
            by_weekday,
        )
        weekend_median = statistics.median(by_weekday[5:])
        weekday_median = statistics.median(by_weekday[:5])
        assert abs(weekday_median - weekend_median - planted) <= max(4, abs(planted) / 3), (app, moved[app])
    assert moved == {
        "4036668689": (0.27, 9.5, [29, 26, 27, 25, 33, 18, 17]),
        "2816378810": (-0.43, -15.5, [25, 19, 17, 13, 14, 29, 31]),
        "4934324329": (-0.36, -17.0, [24, 24, 22, 22, 29, 39, 39]),
        "5178306644": (0.43, 16.5, [31, 31, 30, 27, 41, 19, 12]),
        "663325083": (0.36, 18.0, [37, 34, 38, 38, 38, 31, 18]),
        "1780633229": (0.35, 26.5, [67, 55, 58, 59, 55, 33, 36]),
    }


def test_a_rhythm_is_a_weekend_shift_for_about_a_quarter_of_the_apps():
    rhythms = [weekly_rhythm(f"0:ios:rhythm:recipes:us:en:{n}", weekend=n % 2 == 0) for n in range(2000)]
    planted = [r for r in rhythms if r]
    assert 0.2 <= len(planted) / len(rhythms) <= 0.3
    assert all(r[:5] == (0.0,) * 5 and r[5] == r[6] and 0.25 <= abs(r[5]) <= 0.5 for r in planted)
    assert all((r[5] > 0) == (n % 2 == 0) for n, r in enumerate(rhythms) if r)


# ---------------------------------------------------------------------------------------------- competitors


def median_rank(days: list[dict[str, int]], app: str, week: int) -> float:
    """The app's median rank over a week of days (251 on a day it is not among the results)."""
    return statistics.median(day.get(app, 251) for day in days[7 * week : 7 * week + 7])


def test_competitors_gain_and_lose_places_over_the_weeks(ranks):
    """Weekly medians of the apps that were once in a top 20: some gain five places or more, some lose as many."""
    counts = {}
    for keyword, days in ranks.items():
        apps = {app for day in days for app, rank in day.items() if rank <= 20}
        gained = sum(median_rank(days, a, 0) - median_rank(days, a, WEEKS - 1) >= 5 for a in apps)
        lost = sum(median_rank(days, a, WEEKS - 1) - median_rank(days, a, 0) >= 5 for a in apps)
        assert gained >= 3 and lost >= 3, (keyword, gained, lost)
        counts[keyword] = (gained, lost, len(apps))
    assert counts == {
        "photo editor": (11, 11, 34),
        "budget planner": (8, 9, 34),
        "puzzle games": (8, 10, 35),
        "meditation": (5, 13, 37),
        "running tracker": (5, 9, 34),
        "recipes": (16, 13, 43),
    }


# ---------------------------------------------------------------------------------------------- replay


@pytest.mark.processes
def test_a_month_of_ranks_ads_and_jumps_is_the_same_in_a_fresh_process():
    script = (
        "import json; from datetime import date, timedelta; from storeframes.sandbox.world import World; w = World(0);"
        "days = [date(2026, 10, 19) + timedelta(days=n) for n in range(35)];"
        "print(json.dumps([[w.search_history_day(k, device='iphone', country='us', language='en', day=d),"
        " w.search_ads(k, device='iphone', country='us', language='en', day=d)[:2]] for k in ('recipes', 'meditation')"
        " for d in days] + [w._jumps('ios', 'recipes', 'us', 'en', b) for b in (26_425, 26_426)]))"
    )
    expected = [
        [
            WORLD.search_history_day(k, device="iphone", country="us", language="en", day=d),
            WORLD.search_ads(k, device="iphone", country="us", language="en", day=d)[:2],
        ]
        for k in ("recipes", "meditation")
        for d in DAYS
    ] + [WORLD._jumps("ios", "recipes", "us", "en", b) for b in (26_425, 26_426)]
    env = child_env(PYTHONHASHSEED="12345")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env, cwd=ROOT)
    assert json.loads(out.stdout) == json.loads(json.dumps(expected))
    assert [len(b) for b in expected[-2:]] == [8, 8]
