"""The sandbox moves from day to day the way the real stores do, deterministically per day.

A month is replayed the way a daily tracker would: one sandbox service whose ``today`` is set day
after day (2026-10-21 .. 2026-11-19, seed 0), its answers read as a client reads them.
"""

from __future__ import annotations

import json
from datetime import date, timedelta
from itertools import pairwise

import pytest

from storeframes import InvalidParameterError, catalog
from storeframes.sandbox import API_PREFIX, SANDBOX_KEY, SandboxServer, SandboxService, World
from storeframes.sandbox.moves import WEEKEND_THEMES, demand, episodes
from storeframes.wire.http import lib as httpx

WORLD = World(0)
MONTH = [date(2026, 10, 21) + timedelta(days=n) for n in range(30)]
PATHS = {
    "metadata": "/apps/metadata.json",
    "changes": "/apps/metadata/changes.json",
    "metrics": "/apps/metrics/current.json",
    "search": "/keywords/search-results/current",
    "search_ads": "/keywords/search-results/ads/current",
}
FIELD = {"title": "title", "screenshots": "screenshots", "subtitle": "subtitle", "icon": "icon"}
"""Change targets -> the metadata key that holds them (iphone)."""


@pytest.fixture(scope="module")
def service() -> SandboxService:
    return SandboxService(today=MONTH[0], world=WORLD, rate_limit=(10**9, 1.0))


def raw(service: SandboxService, day: date, endpoint: str, **params: str) -> bytes:
    service.today = day
    reply = service.handle("GET", API_PREFIX + PATHS[endpoint], list(params.items()), {"X-Service-Key": SANDBOX_KEY})
    assert reply.status == 200, reply.body
    return reply.body


def get(service: SandboxService, day: date, endpoint: str, **params: str) -> dict:
    return json.loads(raw(service, day, endpoint, **params))


def ranked(service: SandboxService, keyword: str, day: date, device: str = "iphone", country: str = "us") -> list:
    body = get(service, day, "search", keyword=keyword, device=device, country=country)
    assert body["result"]["date"] == day.isoformat()
    return body["result"]["value"]


@pytest.fixture(scope="module")
def month_of_ranks(service) -> dict[tuple[str, str, str], list[list[str]]]:
    """Every example keyword's live search on each day of the month, us/gb, iphone/android."""
    return {
        (keyword, country, device): [ranked(service, keyword, day, device, country) for day in MONTH]
        for keyword in WORLD.EXAMPLE_KEYWORDS
        for country in ("us", "gb")
        for device in ("iphone", "android")
    }


# ---------------------------------------------------------------------------------------------- ranks


def test_the_top_10_of_an_example_keyword_differs_on_most_days(month_of_ranks):
    for (keyword, country, device), days in month_of_ranks.items():
        changed = sum(a[:10] != b[:10] for a, b in pairwise(days))
        assert changed >= 20, (keyword, country, device, changed)
    photo = month_of_ranks[("photo editor", "us", "iphone")]
    assert sum(a[:10] != b[:10] for a, b in pairwise(photo)) == 28
    assert sum(set(a[:10]) != set(b[:10]) for a, b in pairwise(photo)) == 12


def test_apps_leave_the_top_10_and_come_back(month_of_ranks):
    returning = {}
    for combo, days in month_of_ranks.items():
        for app in set().union(*(d[:10] for d in days)):
            inside = "".join("1" if app in d[:10] else "0" for d in days).strip("0")
            if "0" in inside:
                returning.setdefault(combo, []).append(app)
    assert len(returning) == len(month_of_ranks)  # every keyword, country and device has one
    assert len(returning[("photo editor", "us", "iphone")]) == 4


def test_ranks_jump_ten_places_or_more_in_a_day(month_of_ranks):
    jumps = []
    for combo, days in month_of_ranks.items():
        for n, (before, after) in enumerate(pairwise(days), start=1):
            was = {app: i for i, app in enumerate(before)}
            for i, app in enumerate(after[:20]):
                if app in was and abs(was[app] - i) >= 10:
                    jumps.append((combo, MONTH[n], app, was[app] + 1, i + 1))
    assert len(jumps) >= 50
    into_top_10 = [j for j in jumps if j[4] <= 10 and j[3] > 10]
    out_of_top_10 = [j for j in jumps if j[3] <= 10]
    assert into_top_10 and out_of_top_10  # launches and features lift, penalties drop
    assert all(len(set(ids)) == len(ids) for days in month_of_ranks.values() for ids in days)  # no app twice


def test_episodes_are_drawn_per_week_and_last_two_to_eight_days():
    key = "0:ios:episodes:recipes:us:en"
    first = date(2026, 1, 5).toordinal()
    lives: dict[int, list[int]] = {}
    for day in range(first, first + 364):
        for app in episodes(key, day, range(10, 60), range(12)):
            lives.setdefault(app, []).append(day)
    assert 20 <= len(lives) <= 60
    runs = []
    for days in lives.values():
        run = 1
        for a, b in pairwise(days):
            if b == a + 1:
                run += 1
            else:
                runs.append(run)
                run = 1
        runs.append(run)
    assert min(runs) >= 2 and max(runs) <= 16  # two episodes of one app may touch
    assert episodes(key, first + 40, range(10, 60), range(12)) == episodes(key, first + 40, range(10, 60), range(12))


# ---------------------------------------------------------------------------------------------- metrics


def test_downloads_vary_ratings_grow_and_daily_ratings_are_the_growth(service):
    apps = WORLD.EXAMPLE_IOS_APPS[:3]
    metrics = "downloads,revenues,app-power,ratings,daily-ratings"
    month = [get(service, day, "metrics", apps=",".join(apps), metrics=metrics)["result"] for day in MONTH]
    for app in apps:
        downloads = [m[app]["downloads"]["value"] for m in month]
        power = [m[app]["power"]["value"] for m in month]
        totals = [m[app]["ratings"]["value"] for m in month]
        assert len(set(downloads)) >= 20 and len(set(power)) >= 20
        assert max(downloads) / min(downloads) < 1.8
        assert all(b >= a for a, b in pairwise(totals)) and totals[-1] > totals[0]
        for before, now in pairwise(month):
            b, n = before[app]["ratings"]["breakdown"], now[app]["ratings"]["breakdown"]
            daily = now[app]["daily-ratings"]
            assert all(n[s] >= b[s] for s in "12345")
            assert daily["breakdown"] == {s: n[s] - b[s] for s in "12345"}
            assert daily["value"] == n["total"] - b["total"] == sum(daily["breakdown"].values())
            assert n["total"] == sum(n[s] for s in "12345")
            assert n["avg"] == round(sum(int(s) * n[s] for s in "12345") / n["total"], 2)
    budget = WORLD.EXAMPLE_IOS_APPS[1]
    assert [m[budget]["ratings"]["value"] for m in (month[0], month[-1])] == [9040, 9239]
    assert [m[budget]["downloads"]["value"] for m in (month[0], month[-1])] == [182000, 131000]


def test_the_average_rating_drifts_a_little():
    app = WORLD.EXAMPLE_ANDROID_APPS[1]
    year = [
        WORLD.metrics(app, ["ratings"], device="android", country="us", today=date(2026, 1, 1) + timedelta(days=n))
        for n in range(0, 365, 7)
    ]
    averages = [m["ratings"]["breakdown"]["avg"] for m in year]
    assert averages[0] != averages[-1] and max(averages) - min(averages) <= 0.2
    assert all(round(abs(b - a), 2) <= 0.01 for a, b in pairwise(averages))  # a week moves it 0.01 at most


def test_downloads_follow_the_week():
    """Over a year, an app's demand is higher on its peak days than three days off them."""
    for app_id in WORLD.EXAMPLE_IOS_APPS:
        theme = WORLD._profile("ios", app_id).app.theme.key
        key = f"0:ios:{app_id}:us"
        year = range(date(2026, 1, 5).toordinal(), date(2027, 1, 4).toordinal())  # Monday .. Sunday
        by_weekday = [0.0] * 7
        for day in year:
            by_weekday[date.fromordinal(day).weekday()] += demand(key, day, weekend=theme in WEEKEND_THEMES) / 52
        weekend, midweek = (by_weekday[5] + by_weekday[6]) / 2, (by_weekday[1] + by_weekday[2]) / 2
        assert (weekend > midweek * 1.03) == (theme in WEEKEND_THEMES), (app_id, theme, by_weekday)


def test_a_requests_cost_does_not_move_with_the_day(service):
    apps = ",".join(WORLD.app_ids("ios")[6:11])
    costs = {
        json.loads(raw(service, day, "metrics", apps=apps, metrics="downloads,ratings"))["metadata"]["request"]["cost"]
        for day in MONTH
    }
    assert len(costs) == 1


# ---------------------------------------------------------------------------------------------- metadata


def test_top_apps_change_their_metadata_and_the_changes_endpoint_says_so_that_day(service, month_of_ranks):
    top = {app for k in WORLD.EXAMPLE_KEYWORDS for app in month_of_ranks[(k, "us", "iphone")][0][:10]}
    seen: dict[str, int] = {}
    checked = []
    for app in sorted(top):
        records = get(
            service, MONTH[-1], "changes", apps=app, start_date=MONTH[1].isoformat(), end_date=MONTH[-1].isoformat()
        )["result"][app]["changes"]
        for r in records:
            seen[r["target"]] = seen.get(r["target"], 0) + 1
        by_day: dict[str, set[str]] = {}
        for r in records:
            by_day.setdefault(r["date"], set()).add(r["target"])
        for r in records:
            if r["target"] not in ("title", "screenshots") or by_day[r["date"]] != {r["target"]}:
                continue
            day = date.fromisoformat(r["date"])
            before = get(service, day - timedelta(days=1), "metadata", apps=app)["result"][app]["metadata"]
            after = get(service, day, "metadata", apps=app)["result"][app]["metadata"]
            assert {k for k in after if after[k] != before[k]} == {FIELD[r["target"]]}
            that_day = get(service, day, "changes", apps=app, start_date=r["date"], end_date=r["date"])
            assert that_day["result"][app]["changes"] == [r]
            if r["target"] == "title":
                assert (before["title"], after["title"]) == (r["old_value"], r["new_value"])
            else:
                ids = [s["id"] for s in after["screenshots"]["iphone_6_5"]]
                assert ids == [s["id"] for s in r["new_value"]]
                assert [s["id"] for s in before["screenshots"]["iphone_6_5"]] == [s["id"] for s in r["old_value"]]
            checked.append((app, r["date"], r["target"]))
    assert len(checked) >= 3
    assert seen["screenshots"] >= 10 and seen["title"] + seen["subtitle"] + seen["icon"] >= 5


# ---------------------------------------------------------------------------------------------- replay


def test_the_same_request_on_the_same_day_gives_the_same_bytes(service):
    requests = [
        ("search", {"keyword": "recipes", "device": "android", "country": "gb"}),
        ("search_ads", {"keyword": "meditation", "device": "iphone", "country": "us"}),
        (
            "metrics",
            {"apps": ",".join(WORLD.EXAMPLE_IOS_APPS[:5]), "metrics": "downloads,revenues,ratings,daily-ratings"},
        ),
        ("metadata", {"apps": WORLD.EXAMPLE_IOS_APPS[0]}),
    ]
    other = SandboxService(today=MONTH[3], seed=0)
    for endpoint, params in requests:
        first = raw(service, MONTH[3], endpoint, **params)
        raw(service, MONTH[4], endpoint, **params)
        assert raw(service, MONTH[3], endpoint, **params) == first == raw(other, MONTH[3], endpoint, **params)
        if endpoint != "metadata":  # metadata moves only on the days of its changes
            assert raw(service, MONTH[4], endpoint, **params) != first


def test_today_is_settable_from_a_date_or_text_and_refuses_anything_else():
    service = SandboxService(today="2026-11-20")
    service.today = date(2026, 11, 21)
    assert service.today == date(2026, 11, 21)
    assert service.set_today("2026-11-22") == date(2026, 11, 22) == service.today
    with pytest.raises(InvalidParameterError, match=r"today.*YYYY-MM-DD"):
        service.today = "22/11/2026"
    with pytest.raises(InvalidParameterError, match="today"):
        service.set_today(20261122)  # type: ignore[arg-type]
    assert service.today == date(2026, 11, 22)  # a refused day changes nothing
    service.today = None
    assert service.today == catalog.today_utc()


def test_setting_today_on_a_running_server_changes_its_current_answers():
    app = WORLD.EXAMPLE_ANDROID_APPS[0]
    with SandboxServer(port=0, today="2026-11-01") as server, httpx.Client(base_url=server.base_url) as http:
        headers = {"x-service-key": server.key}

        def current() -> tuple[dict, dict]:
            search = http.get("/keywords/search-results/current", params={"keyword": "photo editor"}, headers=headers)
            metrics = http.get(
                "/apps/metrics/current.json",
                params={"apps": app, "device": "android", "metrics": "downloads,ratings"},
                headers=headers,
            )
            assert search.status_code == metrics.status_code == 200
            return search.json()["result"], metrics.json()["result"][app]

        search_1, metrics_1 = current()
        server.service.today = "2026-11-02"
        search_2, metrics_2 = current()
        server.service.today = date(2026, 11, 1)
        assert current() == (search_1, metrics_1)
    assert (search_1["date"], search_2["date"]) == ("2026-11-01", "2026-11-02")
    assert search_1["value"][:10] != search_2["value"][:10]
    assert (metrics_1["downloads"]["date"], metrics_2["downloads"]["date"]) == ("2026-10-31", "2026-11-01")
    assert metrics_2["ratings"]["value"] > metrics_1["ratings"]["value"]
    assert metrics_1["downloads"]["value"] != metrics_2["downloads"]["value"]
