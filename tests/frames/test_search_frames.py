"""The keyword search and benchmark frame functions end to end, against the in-process sandbox.

Each frame is checked against the sandbox world it comes from (the live search, the ads
placements, each recorded day of the history, each benchmark record), through the cache
(an hour for a live search, day by day for a history, whole ranges for benchmarks), in
every answer form the sandbox can speak, and with what a call costs before it is sent.
"""

from __future__ import annotations

import io
import sys
import warnings
from datetime import UTC, date, datetime, timedelta

import polars as pl
import pytest

import storeframes as sf
from storeframes import schemas
from storeframes.flatteners import Keys, flatten_search_history
from storeframes.sandbox import SANDBOX_KEY, Dialect, World
from tests.conftest import SANDBOX_TODAY

WORLD = World(0)
KEYWORDS = list(WORLD.EXAMPLE_KEYWORDS[:3])
UNTRACKED = WORLD.UNTRACKED_KEYWORD
OCTOBER = {"start": "2026-10-01", "end": "2026-10-31"}
DIALECTS = [
    Dialect("apps", "list", keyword_level=False),
    Dialect("pairs", "by_date", keyword_level=True),
    Dialect("value", "list", keyword_level=True),
]


def arrivals(client: sf.Client) -> list[dict[str, str]]:
    return [dict(a.params) for a in client.sandbox_service.arrivals]


def days(start: str | date, end: str | date) -> list[date]:
    first = date.fromisoformat(start) if isinstance(start, str) else start
    last = date.fromisoformat(end) if isinstance(end, str) else end
    return [first + timedelta(days=n) for n in range((last - first).days + 1)]


def recorded(keyword: str, device: str, start: str | date, end: str | date) -> dict[date, list[str]]:
    """The world's recorded days of a keyword's history (untracked days absent)."""
    out = {}
    for day in days(start, end):
        ids = WORLD.search_history_day(keyword, device=device, country="us", language="en", day=day)
        if ids is not None:
            out[day] = ids
    return out


@pytest.fixture
def client(make_client, tmp_path):
    return make_client(cache_dir=tmp_path / "cache")


# -- the live search ---------------------------------------------------------------------------------


@pytest.mark.parametrize("device", ["iphone", "ipad", "android"])
def test_search_frame_is_the_live_search_of_each_keyword(client, device):
    frame = client.search_frame(KEYWORDS, device=device)
    assert frame.schema == schemas.SEARCH.schema
    assert list(dict.fromkeys(frame["keyword"])) == KEYWORDS  # in the order asked for
    for keyword in KEYWORDS:
        ids = WORLD.search(keyword, device=device, country="us", language="en", day=SANDBOX_TODAY)
        rows = frame.filter(pl.col("keyword") == keyword)
        assert rows["app_id"].to_list() == ids and len(ids) <= 250
        assert rows["rank"].to_list() == list(range(1, len(ids) + 1))
        assert rows["organic_rank"].to_list() == rows["rank"].to_list()
    assert not frame["is_ad"].any()
    assert set(frame["date"]) == {SANDBOX_TODAY}
    assert set(frame["country"]) == {"us"} and set(frame["language"]) == {"en"} and set(frame["device"]) == {device}
    assert len(arrivals(client)) == len(KEYWORDS)


def test_search_with_ads_keeps_both_placements_of_an_advertiser(client):
    keyword = KEYWORDS[0]
    frame = client.search_frame(keyword, ads=True)
    entries = WORLD.search_ads(keyword, device="iphone", country="us", language="en", day=SANDBOX_TODAY)
    assert frame["app_id"].to_list() == [e["application_id"] for e in entries]
    assert frame["is_ad"].to_list() == [e["is_ad"] for e in entries]
    assert frame["is_ad"].head(2).to_list() == [True, True] and frame["is_ad"].sum() == 2
    assert frame["rank"].to_list() == list(range(1, frame.height + 1))
    organic = frame.filter(~pl.col("is_ad"))
    assert organic["organic_rank"].to_list() == list(range(1, organic.height + 1))
    assert frame.filter(pl.col("is_ad"))["organic_rank"].null_count() == 2
    twice = frame.group_by("app_id").agg(pl.col("is_ad").n_unique()).filter(pl.col("is_ad") == 2)
    assert twice.height >= 1, "the sandbox's example keyword has an advertiser that also ranks organically"
    assert arrivals(client)[0].get("keyword") == keyword
    assert client.sandbox_service.arrivals[0].path.endswith("/ads/current")


def test_search_with_ads_is_refused_for_android_before_any_request(client):
    with pytest.raises(sf.InvalidParameterError, match=r"device='android' for search_frame: one of iphone, ipad"):
        client.search_frame(KEYWORDS, device="android", ads=True)
    with pytest.raises(sf.InvalidParameterError, match=r"ads=.yes.*True or False"):
        client.search_frame(KEYWORDS, ads="yes")
    assert arrivals(client) == [] and client.spent == 0
    assert client.search_frame(KEYWORDS[0], device="ipad", ads=True)["is_ad"].sum() == 2


def test_a_keyword_asked_twice_is_fetched_and_listed_once(client):
    frame = client.search_frame([KEYWORDS[0], f"  {KEYWORDS[0].replace(' ', '   ')} ", KEYWORDS[1], KEYWORDS[0]])
    assert list(dict.fromkeys(frame["keyword"])) == KEYWORDS[:2]
    assert frame.group_by("keyword").agg(pl.col("rank").n_unique() == pl.len()).to_series(1).all()
    assert len(arrivals(client)) == 2


def test_a_live_search_is_kept_for_an_hour(make_client, tmp_path):
    now = [datetime.combine(SANDBOX_TODAY, datetime.min.time(), UTC) + timedelta(hours=9)]
    with make_client(cache_dir=tmp_path, clock=lambda: now[0]) as c:
        first = c.search_frame(KEYWORDS)
        now[0] += timedelta(minutes=50)
        assert c.search_frame(KEYWORDS).equals(first)
        assert len(arrivals(c)) == 3
        now[0] += timedelta(minutes=20)
        c.search_frame(KEYWORDS[:1])
        assert len(arrivals(c)) == 4
        assert c.search_frame(KEYWORDS[:1], refresh="never")["fetched_at"].max() == now[0]


# -- the history --------------------------------------------------------------------------------------


@pytest.mark.parametrize("device", ["iphone", "android"])
def test_search_history_frame_holds_every_recorded_day(client, device):
    frame = client.search_history_frame(KEYWORDS, device=device, **OCTOBER)
    assert frame.schema == schemas.SEARCH_HISTORY.schema
    assert list(dict.fromkeys(frame["keyword"])) == KEYWORDS
    for keyword in KEYWORDS:
        expected = recorded(keyword, device, OCTOBER["start"], OCTOBER["end"])
        rows = frame.filter(pl.col("keyword") == keyword)
        assert sorted(set(rows["date"])) == sorted(expected)  # untracked days are absent
        assert rows["date"].to_list() == sorted(rows["date"].to_list())  # day by day
        assert len(expected) < 31, "some day of the month was missed by the sandbox"
        for day, ids in expected.items():
            day_rows = rows.filter(pl.col("date") == day)
            assert day_rows["app_id"].to_list() == ids
            assert day_rows["rank"].to_list() == list(range(1, len(ids) + 1))
    assert set(frame["source"]) == {"history"}
    assert len(arrivals(client)) == len(KEYWORDS)


@pytest.mark.parametrize(("device", "cap"), [("iphone", 500), ("ipad", 500), ("android", 250)])
def test_the_documented_daily_caps_hold(client, device, cap, monkeypatch):
    world = client.sandbox_service.world
    real = world.search_history_day
    extra = [f"{n}" for n in range(9_000_000_000, 9_000_000_600)]
    if device == "android":
        extra = [f"com.example.extra{n}" for n in range(600)]

    def too_many(keyword, **kwargs):
        ids = real(keyword, **kwargs)
        return None if ids is None else (ids + extra)[: cap + 40]

    monkeypatch.setattr(world, "search_history_day", too_many)
    with pytest.warns(sf.ResultCapWarning, match=f"more than the {cap} the service documents"):
        frame = client.search_history_frame(KEYWORDS[0], device=device, start="2026-11-01", end="2026-11-07")
    per_day = frame.group_by("date").len()["len"]
    assert per_day.len() > 0 and set(per_day) == {cap}
    expected = recorded(KEYWORDS[0], device, "2026-11-01", "2026-11-07")
    for day, ids in expected.items():
        assert frame.filter(pl.col("date") == day)["app_id"].to_list() == (ids + extra)[:cap]


def test_an_untracked_keyword_has_no_rows_and_costs_nothing_again(client):
    frame = client.search_history_frame(UNTRACKED, **OCTOBER)
    assert frame.height == 0 and frame.schema == schemas.SEARCH_HISTORY.schema
    assert client.search_history_frame(UNTRACKED, start="2026-10-05", end="2026-10-25").height == 0
    assert len(arrivals(client)) == 1  # the empty days are remembered


def test_a_range_ending_today_has_the_live_fallback_marked(client):
    frame = client.search_history_frame([KEYWORDS[0], UNTRACKED], start="2026-11-10", end=SANDBOX_TODAY)
    today = frame.filter(pl.col("date") == SANDBOX_TODAY)
    for keyword in (KEYWORDS[0], UNTRACKED):
        live = WORLD.search(keyword, device="iphone", country="us", language="en", day=SANDBOX_TODAY)[:250]
        assert today.filter(pl.col("keyword") == keyword)["app_id"].to_list() == live
    assert set(today["source"]) == {"live"}
    assert set(frame.filter(pl.col("date") < SANDBOX_TODAY)["source"]) == {"history"}
    assert frame.filter(pl.col("keyword") == UNTRACKED)["date"].unique().to_list() == [SANDBOX_TODAY]


def test_today_is_fetched_again_after_an_hour_and_final_days_never(make_client, tmp_path):
    now = [datetime.combine(SANDBOX_TODAY, datetime.min.time(), UTC) + timedelta(hours=9)]
    with make_client(cache_dir=tmp_path, clock=lambda: now[0]) as c:
        c.search_history_frame(KEYWORDS[0], start="2026-11-01", end=SANDBOX_TODAY)
        now[0] += timedelta(minutes=61)
        frame = c.search_history_frame(KEYWORDS[0], start="2026-11-01", end=SANDBOX_TODAY)
        again = arrivals(c)[1:]
        # days at least two days old when fetched are final; the last two days are asked again
        assert [(a["start_date"], a["end_date"]) for a in again] == [("2026-11-19", "2026-11-20")]
        assert frame.filter(pl.col("date") == SANDBOX_TODAY)["source"].unique().to_list() == ["live"]


def test_a_longer_range_fetches_only_the_new_days(make_client, client, tmp_path):
    client.search_history_frame(KEYWORDS, **OCTOBER)
    wider = {"start": "2026-09-15", "end": "2026-11-10"}
    frame = client.search_history_frame(KEYWORDS, **wider)
    sent = arrivals(client)[len(KEYWORDS) :]
    assert sorted((a["keyword"], a["start_date"], a["end_date"]) for a in sent) == sorted(
        (k, s, e) for k in KEYWORDS for s, e in (("2026-09-15", "2026-09-30"), ("2026-11-01", "2026-11-10"))
    )
    with make_client(cache_dir=tmp_path / "fresh") as fresh:
        whole = fresh.search_history_frame(KEYWORDS, **wider)
    assert frame.drop("fetched_at").equals(whole.drop("fetched_at"))
    before = len(arrivals(client))
    inner = client.search_history_frame(KEYWORDS[1], start="2026-10-20", end="2026-11-05")
    assert len(arrivals(client)) == before and inner["date"].min() >= date(2026, 10, 20)
    assert inner.drop("fetched_at").equals(
        whole.filter(
            (pl.col("keyword") == KEYWORDS[1]) & pl.col("date").is_between(date(2026, 10, 20), date(2026, 11, 5))
        ).drop("fetched_at")
    )


def test_the_default_range_is_the_31_days_up_to_yesterday(client):
    frame = client.search_history_frame(KEYWORDS[0])
    (request,) = arrivals(client)
    assert (request["start_date"], request["end_date"]) == ("2026-10-20", "2026-11-19")
    assert frame["date"].min() >= date(2026, 10, 20) and frame["date"].max() == date(2026, 11, 19)


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: f"{d.search}-{d.history}-{d.keyword_level}")
def test_every_answer_form_gives_the_same_frames(make_client, tmp_path, dialect):
    with (
        make_client(cache_dir=tmp_path / "observed") as observed,
        make_client(cache_dir=tmp_path / "other", dialect=dialect) as other,
    ):
        for call in (
            lambda c: c.search_frame(KEYWORDS),
            lambda c: c.search_frame(KEYWORDS[0], ads=True),
            lambda c: c.search_history_frame(KEYWORDS, start="2026-10-25", end=SANDBOX_TODAY),
            lambda c: c.search_history_frame(KEYWORDS, start="2026-10-15", end="2026-11-05"),  # merges two answers
        ):
            mine, theirs = call(other), call(observed)
            if dialect.search == "pairs" and "is_ad" in mine.columns:  # that form carries no date: the fetch day
                assert set(mine["date"]) == {SANDBOX_TODAY}
            assert mine.drop("fetched_at").equals(theirs.drop("fetched_at"))
        # the raw answer of get() merges the cached parts in the dialect's own form
        raw = other.get("search_history", keyword=KEYWORDS[0], start_date="2026-10-10", end_date="2026-10-30")
        assert len(raw.parts) >= 2
        merged = flatten_search_history(raw.result, Keys(request={"keyword": KEYWORDS[0]}))
        frame = observed.search_history_frame(KEYWORDS[0], start="2026-10-10", end="2026-10-30")
        assert merged.select("date", "rank", "app_id").equals(frame.select("date", "rank", "app_id"))


# -- cost, budget, progress ---------------------------------------------------------------------------


def test_plan_shows_a_multi_keyword_multi_month_estimate(client):
    plan = client.plan("search_history_frame", keywords=KEYWORDS, start="2026-08-01", end="2026-10-31")
    assert plan.to_send == len(KEYWORDS) and plan.estimate == len(KEYWORDS) * (1 + 10 * 92)
    client.search_history_frame(KEYWORDS[:2], **OCTOBER)
    plan = client.plan("search_history_frame", keywords=KEYWORDS, start="2026-08-01", end="2026-10-31")
    assert plan.to_send == 2 * 1 + 1 and plan.estimate == 2 * (1 + 10 * 61) + (1 + 10 * 92) and plan.saved > 0
    assert client.plan("search_frame", keywords=KEYWORDS, ads=True).estimate == 3 * 20
    assert client.plan("search_frame", keywords=KEYWORDS).endpoint == "search"


def test_the_budget_refuses_a_call_before_any_request(make_client, tmp_path):
    with make_client(cache_dir=tmp_path, budget=2_000) as c:
        with pytest.raises(sf.BudgetExceededError, match="budget"):
            c.search_history_frame(KEYWORDS, start="2026-08-01", end="2026-10-31")
        assert arrivals(c) == [] and c.spent == 0
        c.search_history_frame(KEYWORDS[0], **OCTOBER)
        assert 0 < c.spent <= 1 + 10 * 31


class _Terminal(io.StringIO):
    """A stderr that says it is a terminal (a bar is drawn only on one)."""

    def isatty(self) -> bool:
        return True


def _read(stream: io.StringIO) -> str:
    text = stream.getvalue()
    stream.seek(0)
    stream.truncate()
    return text


def test_a_progress_bar_shows_when_more_than_five_requests_are_sent(make_client, tmp_path, monkeypatch):
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    keywords = [f"keyword {n}" for n in range(6)]
    with make_client(cache_dir=tmp_path, progress=None) as c:
        c.search_frame(keywords[:5])
        assert _read(terminal) == ""
        c.search_frame(keywords, country="gb")
        err = _read(terminal)
        assert "search" in err and "6/6" in err and "credits spent" in err
    with make_client(cache_dir=tmp_path / "quiet", progress=False) as c:
        c.search_frame(keywords)
        assert _read(terminal) == ""
    with make_client(cache_dir=tmp_path / "always", progress=True) as c:
        c.search_frame(keywords[:2])
        assert "2/2" in _read(terminal)


def test_no_progress_bar_when_stderr_is_not_a_terminal(make_client, tmp_path, capfd):
    with make_client(cache_dir=tmp_path, progress=True) as c:
        c.search_frame([f"keyword {n}" for n in range(6)])
    assert capfd.readouterr().err == ""


def test_progress_can_be_turned_off_from_the_environment(make_client, tmp_path, monkeypatch):
    monkeypatch.setenv("STOREFRAMES_PROGRESS", "0")
    with make_client(cache_dir=tmp_path, progress=None) as c:
        assert c.progress is False
    with pytest.raises(sf.ConfigurationError, match="progress"):
        sf.Client(progress="yes", cache_dir=False)


# -- benchmarks ----------------------------------------------------------------------------------------


def test_benchmarks_fan_out_per_country_and_channel(client):
    frame = client.benchmarks_frame(countries="us,gb", channels=["all", "search", "appref"], **OCTOBER)
    assert frame.schema == schemas.BENCHMARKS.schema
    assert len(arrivals(client)) == 6 and client.spent == 6 * 1001
    pairs = frame.select("country", "channel").unique(maintain_order=True).rows()
    assert pairs == [(c, ch) for c in ("us", "gb") for ch in ("all", "search", "appref")]
    for country, channel in pairs:
        records = WORLD.benchmarks(
            country=country,
            device="iphone",
            type="free",
            channel=channel,
            start=date(2026, 10, 1),
            end=date(2026, 10, 31),
        )
        rows = frame.filter((pl.col("country") == country) & (pl.col("channel") == channel))
        assert rows["category"].to_list() == [str(r["category"]) for r in records]
        for column in (
            "impressions_to_page_views",
            "page_views_to_installs",
            "impressions_to_installs",
            "number_of_apps",
        ):
            assert rows[column].to_list() == [r[column] for r in records], column
    assert frame["page_views_to_installs"].null_count() > 0  # too few apps: null, never zero
    assert frame.filter(pl.col("channel") == "appref")["impressions_to_page_views"].null_count() == frame.height // 3
    assert set(frame["start_date"]) == {date(2026, 10, 1)} and set(frame["end_date"]) == {date(2026, 10, 31)}
    assert set(frame["type"]) == {"free"} and set(frame["device"]) == {"iphone"}


def test_android_benchmarks_give_only_page_views_to_installs(client):
    frame = client.benchmarks_frame(device="android", channels=["explore", "referrals"], type="paid")
    assert frame.height > 0 and frame["category"].str.contains(r"^[A-Z_]+$").all()
    assert frame["impressions_to_page_views"].null_count() == frame.height
    assert frame["page_views_to_installs"].null_count() < frame.height


def test_a_benchmarks_range_is_cached_whole(client):
    client.benchmarks_frame(countries=["us", "de"], **OCTOBER)
    assert client.plan("benchmarks_frame", countries=["us", "de"], **OCTOBER).estimate == 0
    client.benchmarks_frame(countries=["de", "us"], **OCTOBER)
    assert len(arrivals(client)) == 2
    assert (
        client.plan("benchmarks_frame", countries=["us", "de"], start="2026-10-02", end="2026-10-31").estimate == 2002
    )
    assert client.plan("benchmarks_frame", countries="us,de,fr", channels="all,search").estimate == 6 * 1001


@pytest.mark.parametrize(
    ("arguments", "parameter", "words"),
    [
        ({"device": "android", "channels": "browse"}, "channels", "for device='android' one of all, search, explore"),
        (
            {"device": "iphone", "channels": ["all", "explore"]},
            "channels",
            "'explore' is a channel of device='android'",
        ),
        ({"device": "ipad"}, "device", "one of iphone, android"),
        ({"countries": ["us", "usa"]}, "countries", "two-letter"),
        ({"countries": []}, "countries", "at least one"),
        ({"channels": ""}, "channels", "at least one"),
        ({"type": "premium"}, "type", "free, paid"),
        ({"start": "2026-10-10", "end": "2026-10-01"}, "end", "on or after start=2026-10-10"),
    ],
)
def test_bad_benchmark_input_is_refused_before_any_request(client, arguments, parameter, words):
    with pytest.raises(sf.InvalidParameterError, match=words) as caught:
        client.benchmarks_frame(**arguments)
    assert caught.value.parameter == parameter
    assert arrivals(client) == [] and client.spent == 0


@pytest.mark.parametrize(
    ("name", "arguments", "parameter", "words"),
    [
        ("search_frame", {"keywords": []}, "keywords", "at least one"),
        ("search_frame", {"keywords": ["maps", "  "]}, "keywords", "each item of keywords is a non-empty text"),
        ("search_frame", {"keywords": ["maps", 3]}, "keywords", "each item of keywords is a text, not 3"),
        ("search_frame", {"keywords": "maps", "country": "usa"}, "country", "two-letter"),
        ("search_frame", {"keywords": "maps", "device": "watch"}, "device", "one of iphone, ipad, android"),
        ("search_history_frame", {"keywords": None}, "keywords", "required"),
        (
            "search_history_frame",
            {"keywords": "maps", "start": "2026-11-01", "end": "2026-10-01"},
            "end",
            "on or after",
        ),
        ("search_history_frame", {"keywords": "maps", "end": "2026-12-25"}, "end", "no later than today"),
        ("search_history_frame", {"keywords": "maps", "start": "1st of May"}, "start", "YYYY-MM-DD"),
        ("search_history_frame", {"keywords": "maps", "language": "english"}, "language", "two-letter"),
    ],
)
def test_bad_search_input_is_refused_before_any_request(client, name, arguments, parameter, words):
    with pytest.raises(sf.InvalidParameterError, match=words) as caught:
        getattr(client, name)(**arguments)
    assert caught.value.parameter == parameter
    assert arrivals(client) == [] and client.spent == 0


# -- reproduction, the token, the package ---------------------------------------------------------------


def test_the_offline_notebook_reproduces_search_and_benchmark_frames(make_client, tmp_path):
    calls = {
        "search_frame": {"keywords": KEYWORDS, "ads": True},
        "search_history_frame": {"keywords": KEYWORDS, **OCTOBER},
        "benchmarks_frame": {"countries": ["us", "jp"], "channels": "search", **OCTOBER},
    }
    with make_client(cache_dir=tmp_path) as online:
        frames = {name: getattr(online, name)(**arguments) for name, arguments in calls.items()}
    with make_client(cache_dir=tmp_path, offline=True) as offline:
        for name, arguments in calls.items():
            assert getattr(offline, name)(**arguments).equals(frames[name]), name
        assert offline.sandbox_service.arrivals == []
        with pytest.raises(sf.NotCachedError):
            offline.search_history_frame(KEYWORDS, start="2026-09-01", end="2026-10-31")
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {"table=search", "table=search_history", "table=benchmarks"} <= {p.parent.name for p in files}
    for path in files:
        assert SANDBOX_KEY.encode() not in path.read_bytes(), path


def test_frames_round_trip_through_pandas(client):
    for frame in (
        client.search_frame(KEYWORDS[0], ads=True),
        client.search_history_frame(KEYWORDS[0], start="2026-11-10", end=SANDBOX_TODAY),
        client.benchmarks_frame(channels="search"),
    ):
        back = pl.from_pandas(frame.to_pandas())
        assert back.drop("fetched_at").cast(frame.drop("fetched_at").schema).equals(frame.drop("fetched_at"))  # type: ignore[arg-type]


def test_package_functions(fresh_default, tmp_path):
    sf.configure(sandbox=True, today=SANDBOX_TODAY, cache_dir=tmp_path, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sf.search_frame(KEYWORDS[0]).equals(sf.default_client().search_frame(KEYWORDS[0]))
        history = sf.search_history_frame(KEYWORDS[:2], **OCTOBER)
        assert sf.rank_history(history, WORLD.EXAMPLE_IOS_APPS[:2]).height == 2 * 2 * 31
        assert sf.benchmarks_frame(countries="us").height > 0
    assert list(sf.benchmarks_frame.__signature__.parameters)[:2] == ["countries", "device"]
