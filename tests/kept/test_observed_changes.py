"""sf.observed_changes: the changes found by comparing consecutive metadata snapshots, from caches replayed
day by day with sandbox clients, with hand-made answers of a day standing for a known change; and checked
against the sandbox's own change history over three weeks."""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

import polars as pl
import pytest

import storeframes as sf
from storeframes.answers import Response
from storeframes.cache import Cache, open_cache
from storeframes.cache.stores import MemoryStore
from storeframes.kept import tables
from storeframes.schemas import CHANGES
from tests.conftest import FAST_BACKOFF, SANDBOX_TODAY

QUIET = ["3233849169", "361252007", "4027357231"]  # no change in the sandbox's history from DAYS[0] to DAYS[-1]
A, B, C = QUIET
DAYS = [SANDBOX_TODAY - timedelta(days=n) for n in (3, 2, 1, 0)]
D0, D1, D2, D3 = DAYS
TITLE = "Photo Editor Plus: Edited for the test"
PROMOTION = "Now with collages"
SCHEMA = pl.Schema(
    [*CHANGES.schema.items(), ("source", pl.String()), ("since", pl.Date()), ("device_key", pl.String())]
)
Edit = Callable[[dict[str, Any]], None]


def _morning(day: date) -> datetime:
    return datetime.combine(day, time(9), UTC)


def _client(day: date, where: Any) -> sf.Client:
    return sf.sandbox.client(
        today=day, cache_dir=where, progress=False, backoff=FAST_BACKOFF, clock=lambda: _morning(day)
    )


def restate(where: Any, day: date, edits: dict[str, Edit]) -> None:
    """Keep, later on ``day``, a copy of that day's metadata answers with ``edits`` made to the apps'
    metadata (by app id): the day's snapshot then shows the edited values."""
    cache = open_cache(where)
    assert isinstance(cache, Cache)
    for entry in [e for e in cache.entries("metadata") if e.day == day]:
        response = cache.load(entry)
        assert response is not None
        result = copy.deepcopy(response.result)
        for app, edit in edits.items():
            if app in result:
                edit(result[app]["metadata"])
        at = datetime.combine(day, time(15), UTC)
        edited = Response("metadata", response.params, result, 0, 0, 200, at, echo=response.echo)
        assert cache.store(edited, service=entry.service, scope=entry.scope, cells=entry.cells) is not None


def _retitle(title: str) -> Edit:
    return lambda metadata: metadata.update(title=title)


def _promote(metadata: dict[str, Any]) -> None:
    metadata["title"] = TITLE  # the title of the days before stays
    metadata["promotional_text"] = PROMOTION


def _reshoot(metadata: dict[str, Any]) -> None:
    """iphone_6_5's screenshots in the reverse order, and one screenshot under iphone6 (empty before)."""
    shots = metadata["screenshots"]
    shots["iphone6"] = [dict(shots["iphone_6_5"][0], url="https://shots.example/iphone6_1.png")]
    shots["iphone_6_5"] = shots["iphone_6_5"][::-1]


def replay(where: Any) -> None:
    """DAYS fetched into ``where``: C left out on D1; from D2 on, A's title is another, B's screenshots
    others and C's title another; on D3, A has a promotional text (null before)."""
    for day in DAYS:
        with _client(day, where) as client:
            client.metadata_frame(QUIET if day != D1 else [A, B])
    restate(where, D2, {A: _retitle(TITLE), B: _reshoot, C: _retitle("Another title")})
    restate(where, D3, {A: _promote, B: _reshoot, C: _retitle("Another title")})


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("observed")
    replay(path)
    return path


def test_the_sandbox_history_lists_no_change_of_the_quiet_apps_in_the_days_replayed():
    with sf.sandbox.client(today=D3 + timedelta(days=1), cache_dir=False, progress=False) as client:
        assert client.changes_frame(QUIET, start=D0, end=D3).is_empty()


def test_each_change_is_one_row_dated_the_day_it_was_first_seen(folder, monkeypatch):
    monkeypatch.delenv("STOREFRAMES_API_KEY", raising=False)  # read with no token anywhere
    got = sf.observed_changes(folder)
    assert got.schema == SCHEMA
    keys = ["app_id", "date", "since", "target", "device_key"]
    assert got.select(keys).rows() == [
        (A, D2, D1, "title", None),
        (A, D3, D2, "promotional_text", None),
        (B, D2, D1, "screenshots", "iphone6"),
        (B, D2, D1, "screenshots", "iphone_6_5"),
        (C, D2, D0, "title", None),  # D1 had no snapshot of C: passed over
    ]
    assert (got["country"] == "us").all() and (got["language"] == "en").all() and (got["device"] == "iphone").all()
    assert (got["source"] == "snapshot").all() and got["is_ab_test"].is_null().all()
    assert got["fetched_at"].to_list() == [datetime.combine(day, time(15), UTC) for day in (D2, D3, D2, D2, D2)]

    title = got.row(0, named=True)
    original = sf.snapshots("metadata", folder, end=D0).filter(pl.col("app_id").is_in([A, C])).sort("app_id").collect()
    assert (title["old_value"], title["new_value"]) == (original["title"][0], TITLE)
    assert title["version"] == title["version_raw"] == original["version"][0]  # the app's version that day
    promotion = got.row(1, named=True)
    assert (promotion["old_value"], promotion["new_value"]) == (None, PROMOTION)  # null to a text is a change
    retitled = got.row(4, named=True)
    assert (retitled["old_value"], retitled["new_value"]) == (original["title"][1], "Another title")
    typed = ["old_size", "new_size", "old_icon_url", "new_icon_url", "old_release_notes", "new_release_notes"]
    assert got.select(pl.all_horizontal(pl.col(typed).is_null())).to_series().all()


def test_a_screenshots_change_is_a_row_per_device_key_each_side_a_json_array_of_urls(folder):
    got = sf.observed_changes(folder, apps=B)
    shots = sf.snapshots("screenshots", folder).filter((pl.col("snapshot_date") == D1) & (pl.col("app_id") == B))
    shots = shots.collect()
    urls = shots.filter(pl.col("device_key") == "iphone_6_5").sort("position")["url"].to_list()
    assert len(urls) > 1
    quoted = ",".join(f'"{u}"' for u in urls)
    backwards = ",".join(f'"{u}"' for u in reversed(urls))
    assert got.select("device_key", "old_value", "new_value").rows() == [
        ("iphone6", "[]", '["https://shots.example/iphone6_1.png"]'),  # a key that appears: empty before
        ("iphone_6_5", f"[{quoted}]", f"[{backwards}]"),  # the same URLs in another order
    ]


def test_the_apps_chosen(folder):
    assert sf.observed_changes(folder, apps=[A, C])["app_id"].to_list() == [A, A, C]
    assert sf.observed_changes(folder, apps=(C,))["app_id"].to_list() == [C]
    none = sf.observed_changes(folder, apps="1")  # an app the cache does not hold
    assert none.is_empty() and none.schema == SCHEMA


@pytest.mark.parametrize(
    ("start", "end", "rows"),
    [
        (D2, None, 5),  # D2's changes found against D1 (and C's against D0), read though before start
        (D3, D3.isoformat(), 1),
        (None, D2, 4),
        (f" {D2.isoformat()} ", D2, 4),
        (None, D1, 0),
        (D0, D1, 0),
        (D3 + timedelta(days=1), None, 0),
    ],
)
def test_start_and_end_bound_the_date_and_the_snapshot_before_start_is_read(folder, start, end, rows):
    every = sf.observed_changes(folder)
    got = sf.observed_changes(folder, start=start, end=end)
    first = date.fromisoformat(start.strip()) if isinstance(start, str) else start
    last = date.fromisoformat(end) if isinstance(end, str) else end
    expected = every.filter((pl.col("date") >= (first or D0)) & (pl.col("date") <= (last or D3)))
    assert got.height == rows and got.schema == SCHEMA
    assert got.equals(expected)


def test_only_the_days_from_the_last_snapshot_before_start_are_read(folder, monkeypatch):
    read: list[date | None] = []
    choose = tables.newest

    def newest(entries: list[Any], *, daily: bool = False) -> dict[str, Any]:
        read.append(min((e.day for e in entries), default=None))
        return choose(entries, daily=daily)

    monkeypatch.setattr(tables, "newest", newest)  # the choice of days
    assert sf.observed_changes(folder, apps=C, start=D2).height == 1
    assert set(read) == {D0}  # C's snapshot before D2 is D0's
    read.clear()
    assert sf.observed_changes(folder, apps=A, start=D3)["since"].to_list() == [D2]
    assert set(read) == {D2}


def test_a_cache_with_no_metadata_answers_gives_an_empty_frame(tmp_path):
    with _client(D0, tmp_path) as client:
        client.metrics_frame(QUIET[:1], ["downloads"])
    got = sf.observed_changes(tmp_path)
    assert got.is_empty() and got.schema == SCHEMA


def test_a_store_polars_cannot_read_gives_the_same_rows(folder):
    store = MemoryStore()
    replay(store)
    got = sf.observed_changes(store)
    assert got.height == 5 and got.equals(sf.observed_changes(folder))


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"apps": []}, "apps=[]"),
        ({"apps": 3233849169}, "apps=3233849169"),
        ({"apps": ["3233849169", 361252007]}, "apps="),
        ({"apps": " "}, "apps=' '"),
        ({"start": "2026-13-01"}, "start='2026-13-01'"),
        ({"end": "yesterday"}, "end='yesterday'"),
        ({"start": datetime(2026, 11, 1, tzinfo=UTC)}, "start="),
        ({"start": "2026-11-20", "end": date(2026, 11, 19)}, "start='2026-11-20'"),
    ],
)
def test_bad_input_is_refused_before_the_cache_is_opened(options, named, monkeypatch):
    monkeypatch.setattr(tables, "open_cache", lambda *_: pytest.fail("the cache was opened"))
    with pytest.raises(sf.InvalidParameterError) as refused:
        sf.observed_changes("anywhere", **options)
    message = str(refused.value)
    assert f"invalid {named}" in message and "for observed_changes" in message
    parameter = next(iter(options))
    assert refused.value.parameter == parameter
    allowed = {
        "apps": "an app id as text, or a non-empty list of them",
        "start": "on or before end=2026-11-19" if "end" in options else "a date: a datetime.date or an ISO date text",
        "end": "a date: a datetime.date or an ISO date text",
    }
    assert allowed[parameter] in message


# -- against the sandbox's own change history ------------------------------------------------

STRETCH = [date(2026, 10, 28) + timedelta(days=n) for n in range(20)]
GAP = date(2026, 11, 11)  # no snapshot that day: 4386027005's icon change of that day is seen the day after
IOS = ["6178526746", "5729265940", "4386027005", "1004337595"]
ANDROID = ["io.cloudleaf.jigsawmaster360"]
COMPARED = ["title", "version", "size", "icon"]


def _compared(frame: pl.DataFrame) -> pl.DataFrame:
    """The title, version, size and icon changes, each with its values as the two frames both give them."""
    values = {
        "size": (pl.col("old_size").cast(pl.String), pl.col("new_size").cast(pl.String)),
        "icon": (pl.col("old_icon_url"), pl.col("new_icon_url")),
    }
    old = pl.coalesce(*(pl.when(pl.col("target") == t).then(o) for t, (o, _) in values.items()), pl.col("old_value"))
    new = pl.coalesce(*(pl.when(pl.col("target") == t).then(n) for t, (_, n) in values.items()), pl.col("new_value"))
    return frame.filter(pl.col("target").is_in(COMPARED)).select(
        "app_id", "target", "date", old.alias("old"), new.alias("new"), *(["since"] if "since" in frame.columns else [])
    )


@pytest.mark.slow
def test_every_change_seen_is_in_the_services_history_and_back(tmp_path):
    for day in STRETCH:
        if day != GAP:
            with _client(day, tmp_path) as client:
                client.metadata_frame(IOS)
                client.metadata_frame(ANDROID, device="android")
    with sf.sandbox.client(today=STRETCH[-1] + timedelta(days=1), cache_dir=False, progress=False) as client:
        history = pl.concat(
            [
                client.changes_frame(IOS, start=STRETCH[0], end=STRETCH[-1]),
                client.changes_frame(ANDROID, start=STRETCH[0], end=STRETCH[-1], device="android"),
            ]
        )
    service = _compared(history)
    seen = _compared(sf.observed_changes(tmp_path))
    assert set(service["target"]) == set(COMPARED) and seen.height >= 15
    assert GAP in service["date"].to_list()

    matched = seen.join(service, on=["app_id", "target", "old", "new"], how="left", suffix="_service")
    assert matched.height == seen.height  # no change listed twice
    within = (pl.col("date_service") > pl.col("since")) & (pl.col("date_service") <= pl.col("date"))
    assert matched.filter(~within.fill_null(False)).is_empty()  # every change seen is listed, in (since, date]

    listed = service.filter(pl.col("date") > STRETCH[0])  # a snapshot before each of these days, and one after
    back = listed.join(seen, on=["app_id", "target", "old", "new"], how="left", suffix="_seen")
    found = (pl.col("date") > pl.col("since")) & (pl.col("date") <= pl.col("date_seen"))
    assert back.height == listed.height and back.filter(~found.fill_null(False)).is_empty()
    gap = back.filter(pl.col("date") == GAP)  # 4386027005's icon and others: seen the day after
    assert gap.height >= 1 and gap["date_seen"].to_list() == [GAP + timedelta(days=1)] * gap.height
    assert gap["since"].to_list() == [GAP - timedelta(days=1)] * gap.height
