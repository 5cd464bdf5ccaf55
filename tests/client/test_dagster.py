"""A tracker on Dagster: its definitions, and its assets materialized in-process against the sandbox.

Runs only where Dagster is installed (``pip install -e ".[dagster]"``; CI's last stage).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

dg = pytest.importorskip("dagster")

import storeframes as sf  # noqa: E402
from storeframes.catalog import today_utc  # noqa: E402
from storeframes.cli import main  # noqa: E402
from storeframes.dagster import (  # noqa: E402
    ClientOptions,
    TrackerResource,
    first_partition,
    run_metadata,
    run_partitions,
    tracker_definitions,
)
from storeframes.sandbox import Faults, SandboxServer  # noqa: E402
from storeframes.track import RunResult, Tracker  # noqa: E402

SPEC = """\
[tracker]
name = "photo-editors"
cache_dir = "cache"
country = "us"
device = "iphone"

[[track]]
endpoint = "search"
keywords = ["photo editor", "meditation"]

[[track]]
endpoint = "metadata"
apps = ["3233849169", "2787512886"]

[[track]]
name = "ranks"
endpoint = "search_history"
keywords = ["photo editor"]
lookback = "7d"
"""
RESOURCE = "tracker_photo_editors"
KEYS = ["photo_editors/search", "photo_editors/metadata", "photo_editors/ranks"]


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "tracking.toml"
    path.write_text(SPEC)
    return path


def _assets(defs) -> dict[str, object]:
    return {a.key.to_user_string(): a for a in defs.assets}


def _materialize(defs, key: str, day, **options):
    """``dagster.materialize`` of one asset of ``defs`` for the partition of ``day``, with its resource."""
    return dg.materialize(
        [_assets(defs)[key]], partition_key=str(day), resources={RESOURCE: defs.resources[RESOURCE]}, **options
    )


def _materialize_days(defs, key: str, first, last, **options):
    """One run of an asset for the partitions ``first`` to ``last``, as a Dagster backfill launches it."""
    days = {"dagster/asset_partition_range_start": str(first), "dagster/asset_partition_range_end": str(last)}
    return dg.materialize([_assets(defs)[key]], tags=days, resources={RESOURCE: defs.resources[RESOURCE]}, **options)


def _metadata(result) -> dict[str, object]:
    (event,) = result.get_asset_materialization_events()
    return {name: getattr(v, "value", getattr(v, "text", getattr(v, "data", v))) for name, v in event.materialization.metadata.items()}  # fmt: skip


def _cached(spec: Path, table: str):
    return sf.scan(table, spec.parent / "cache", service="sandbox-0").collect()


def test_the_definitions_hold_an_asset_per_item_daily_partitions_a_job_a_schedule_and_the_resource(spec):
    defs = tracker_definitions(spec, sandbox=True)
    today = today_utc()
    assert sorted(_assets(defs)) == sorted(KEYS)
    for asset in defs.assets:
        (group,) = asset.group_names_by_key.values()
        assert group == "photo_editors"
        assert isinstance(asset.partitions_def, dg.DailyPartitionsDefinition)
        assert asset.partitions_def.get_last_partition_key() == today.isoformat()  # the newest partition is today
        # a tracker that never ran: as far back as its history item's first run reaches (lookback 7d)
        assert asset.partitions_def.get_first_partition_key() == (today - timedelta(days=7)).isoformat()
    search = _assets(defs)["photo_editors/search"]
    assert search.metadata_by_key[search.key] == {
        "tracker": "photo-editors", "item": "search", "endpoint": "search", "every_days": 1
    }  # fmt: skip
    assert "photo editor, meditation (us)" in search.descriptions_by_key[search.key]
    job = defs.resolve_job_def("track_photo_editors")
    assert sorted(k.to_user_string() for k in job.asset_layer.executable_asset_keys) == sorted(KEYS)
    schedule = defs.resolve_schedule_def("track_photo_editors_daily")
    assert (schedule.cron_schedule, schedule.execution_timezone) == ("0 6 * * *", "UTC")
    resource = defs.resources[RESOURCE]
    assert isinstance(resource, TrackerResource)
    assert (resource.spec_path, resource.sandbox) == (str(spec.resolve()), True)


# Dagster's own schedule code calls a function of its own that it deprecated; nothing here to change
@pytest.mark.filterwarnings("ignore:Function `JobDefinition.run_request_for_partition` is deprecated")
def test_the_schedule_runs_the_job_on_the_day_s_own_partition(spec):
    defs = tracker_definitions(spec, sandbox=True, hour_of_day=5, minute_of_hour=30)
    schedule = defs.resolve_schedule_def("track_photo_editors_daily")
    assert schedule.cron_schedule == "30 5 * * *"
    yesterday = today_utc() - timedelta(days=1)
    tick = datetime.combine(yesterday, datetime.min.time(), UTC) + timedelta(hours=5, minutes=30)
    with dg.instance_for_test() as instance:
        data = schedule.evaluate_tick(dg.build_schedule_context(instance=instance, scheduled_execution_time=tick))
    assert [r.partition_key for r in data.run_requests] == [yesterday.isoformat()]


def test_a_partition_materialized_runs_its_item_keeps_the_answers_and_a_second_time_sends_nothing(spec):
    defs = tracker_definitions(spec, sandbox=True)
    today = today_utc()
    first = {key: _metadata(_materialize(defs, key, today)) for key in KEYS}
    search, metadata, ranks = (first[k] for k in KEYS)
    # two keywords: a live search each; two apps: one metadata request; one keyword's history: one request
    assert (search["requests"], metadata["requests"], ranks["requests"]) == (2, 1, 1)
    assert all(m["status"] == "ok" and m["kind"] == "run" and m["errors"] == [] for m in first.values())
    assert (search["credits_spent"], search["cells_new"], search["cells_cached"]) == (20, 2, 0)
    assert metadata["credits_spent"] > 0 and ranks["credits_spent"] > 0
    assert ranks["cells_new"] == 7  # its lookback: the 7 days before today
    # the answers are in the spec's cache, and the tracker's plan for the day has nothing due
    searched = _cached(spec, "search").group_by("keyword").agg(pl.col("date").unique()).sort("keyword")
    assert searched.rows() == [("meditation", [today]), ("photo editor", [today])]
    assert sorted(_cached(spec, "metadata")["app_id"]) == ["2787512886", "3233849169"]
    history_days = set(_cached(spec, "search_history")["date"])  # a day the keyword was not tracked is absent
    assert history_days and history_days <= {today - timedelta(days=d) for d in range(1, 8)}
    plan = Tracker.from_toml(spec, sandbox=True).plan(today)
    assert plan.items["due"].to_list() == [False, False, False] and plan.requests == 0
    again = {key: _metadata(_materialize(defs, key, today)) for key in KEYS}
    assert [m["requests"] for m in again.values()] == [0, 0, 0]
    assert [m["credits_spent"] for m in again.values()] == [0, 0, 0]
    runs = Tracker.from_toml(spec, sandbox=True).runs()
    assert runs.height == 6 and set(runs["status"]) == {"ok"}
    assert set(runs["run_id"]) == {i for m in [*first.values(), *again.values()] for i in m["run_ids"]}


def _command_line_rows(tmp_path: Path, days) -> pl.DataFrame:
    """The history rows ``storeframes track run --today D --item ranks`` keeps, run on each of ``days``, in a
    folder of its own: what a partition's run is to fetch."""
    other = tmp_path / "command-line"
    other.mkdir()
    (other / "tracking.toml").write_text(SPEC)
    for day in days:
        args = ["track", "run", str(other / "tracking.toml"), "--sandbox", "--today", str(day), "--item", "ranks"]
        assert main(args) == 0
    return _rows(other)


def _rows(folder: Path) -> pl.DataFrame:
    kept = sf.scan("search_history", folder / "cache", service="sandbox-0").collect()
    return kept.drop("fetched_at").sort(pl.all())


def test_a_past_partition_of_a_history_item_fetches_what_the_command_line_s_run_of_that_day_does(spec, tmp_path):
    defs = tracker_definitions(spec, sandbox=True)
    day = today_utc() - timedelta(days=5)
    meta = _metadata(_materialize(defs, "photo_editors/ranks", day))
    # a first run: the 7 days of its lookback, as the command line's run of that day fetches them
    assert (meta["status"], meta["kind"], meta["requests"], meta["cells_new"]) == ("ok", "run", 1, 7)
    kept = _rows(spec.parent)
    assert set(kept["date"]) <= {day - timedelta(days=n) for n in range(1, 8)} and kept.height > 0
    assert kept.equals(_command_line_rows(tmp_path, [day]))
    assert kept["rank"].dtype == pl.Int64
    runs = Tracker.from_toml(spec, sandbox=True).runs()
    assert runs["day"].to_list() == [day]  # logged as the partition's day, not the machine's
    assert _metadata(_materialize(defs, "photo_editors/ranks", day))["requests"] == 0  # that day is done


def test_a_backfill_of_a_history_item_fetches_what_the_command_line_s_runs_of_those_days_do(spec, tmp_path):
    defs = tracker_definitions(spec, sandbox=True)
    today = today_utc()
    first = today - timedelta(days=4)
    events = _materialize_days(defs, "photo_editors/ranks", first, today).get_asset_materialization_events()
    assert [e.materialization.partition for e in events] == [str(first + timedelta(days=n)) for n in range(5)]
    metadata = [
        {k: getattr(v, "value", getattr(v, "data", v)) for k, v in e.materialization.metadata.items()} for e in events
    ]
    assert all(m == metadata[0] for m in metadata)  # one run for the five partitions
    meta = metadata[0]
    # the first day's run (its lookback), then the last day's (every day since): two requests, not one a day
    assert (meta["status"], meta["kind"], len(meta["run_ids"]), meta["requests"]) == ("ok", "run", 2, 2)
    assert Tracker.from_toml(spec, sandbox=True).runs()["day"].to_list() == [first, today]
    days = [first + timedelta(days=n) for n in range(5)]
    assert _rows(spec.parent).equals(_command_line_rows(tmp_path, days))
    assert set(_rows(spec.parent)["date"]) <= {first - timedelta(days=n) for n in range(-4, 8)}


def test_a_range_of_a_current_only_item_is_a_replay_of_each_day_in_the_sandbox(spec):
    defs = tracker_definitions(spec, sandbox=True)
    today = today_utc()
    events = _materialize_days(
        defs, "photo_editors/search", today - timedelta(days=2), today
    ).get_asset_materialization_events()
    assert len(events) == 3
    meta = {k: getattr(v, "value", getattr(v, "data", v)) for k, v in events[0].materialization.metadata.items()}
    assert (meta["status"], meta["kind"], len(meta["run_ids"]), meta["requests"]) == ("ok", "run", 3, 6)
    assert meta["credits_spent"] == 60  # two live searches a day, 10 credits each
    kept = sf.snapshots("search", spec.parent / "cache", service="sandbox-0").collect()
    days = kept.group_by("snapshot_date").agg(pl.col("keyword").unique().sort()).sort("snapshot_date")
    assert days.rows() == [(today - timedelta(days=d), ["meditation", "photo editor"]) for d in (2, 1, 0)]


def test_a_past_partition_of_a_current_only_item_is_a_replay_in_the_sandbox(spec):
    defs = tracker_definitions(spec, sandbox=True)
    day = today_utc() - timedelta(days=3)
    meta = _metadata(_materialize(defs, "photo_editors/search", day))
    assert (meta["status"], meta["kind"], meta["requests"]) == ("ok", "run", 2)
    assert set(_cached(spec, "search")["date"]) == {day}  # the sandbox's today was that day
    # the run log's first day now places the first partition: 7 days (the lookback) before it
    tracker = Tracker.from_toml(spec, sandbox=True)
    assert first_partition(tracker) == day - timedelta(days=7)
    assert _assets(tracker_definitions(spec, sandbox=True))["photo_editors/search"].partitions_def.get_first_partition_key() == (
        day - timedelta(days=7)
    ).isoformat()  # fmt: skip


def test_a_past_partition_of_a_current_only_item_is_refused_with_the_real_service_before_anything_is_sent(spec):
    day = today_utc() - timedelta(days=2)
    with SandboxServer() as server:
        defs = tracker_definitions(spec, base_url=server.base_url, api_key=server.key, start=day)
        with pytest.raises(sf.InvalidParameterError, match=r"the service answers metadata for the present only"):
            _materialize(defs, "photo_editors/metadata", day)
        tracker = Tracker.from_toml(spec, base_url=server.base_url, api_key=server.key)
        with pytest.raises(sf.InvalidParameterError, match=r"invalid partition='\d{4}-\d\d-\d\d'.*days up to today"):
            run_partitions(tracker, "search", today_utc() + timedelta(days=1))
        with pytest.raises(sf.InvalidParameterError, match=r"one of search, metadata, ranks"):
            run_partitions(tracker, "searches", today_utc())
        assert server.service.arrivals == []
    assert not (spec.parent / "cache").exists() or Tracker.from_toml(spec).runs().height == 0


def test_a_run_that_fails_fails_the_materialization_with_its_errors(spec):
    defs = tracker_definitions(spec, sandbox=True, faults=Faults(server_error=1.0), max_tries=1)
    failed = r"photo-editors search on \d{4}-\d\d-\d\d: failed: search: ServerError"
    with pytest.raises(dg.Failure, match=failed) as caught:
        _materialize(defs, "photo_editors/search", today_utc())
    assert caught.value.metadata["status"].value == "failed"
    assert caught.value.metadata["requests"].value >= 1 and caught.value.metadata["credits_spent"].value == 0
    result = _materialize(defs, "photo_editors/search", today_utc(), raise_on_error=False)
    assert not result.success and result.get_asset_materialization_events() == []
    (failure,) = [e for e in result.all_events if e.is_step_failure]
    assert "failed: search: ServerError" in failure.step_failure_data.error.message
    (run,) = Tracker.from_toml(spec, sandbox=True).runs().filter(status="failed").head(1).iter_rows(named=True)
    assert run["errors"].startswith("search: ServerError")


def test_a_run_over_the_budget_succeeds_and_says_what_it_left_out(spec):
    spec.write_text(SPEC.replace('device = "iphone"', 'device = "iphone"\nbudget_per_run = 5'))
    result = _materialize(tracker_definitions(spec, sandbox=True), "photo_editors/search", today_utc())
    meta = _metadata(result)
    assert result.success
    assert (meta["status"], meta["requests"], meta["credits_spent"], meta["left_out"]) == (
        "over_budget",
        0,
        0,
        ["search"],
    )


def test_the_metadata_of_several_runs_sums_them_and_keeps_the_worst_status():
    day = today_utc()
    backfill = RunResult("b", "t", day, "backfill", "ok", requests=1, cells_new=4, credits_spent=41, credits_saved=2)
    run = RunResult("r", "t", day, "run", "partial", requests=2, cells_cached=3, errors=["ranks: ServerError: 503"])
    run.missing = {"ranks": [day - timedelta(days=2), day - timedelta(days=1)]}
    meta = run_metadata([backfill, run])
    assert meta == {
        "status": "partial", "kind": "backfill+run", "run_ids": ["b", "r"], "requests": 3, "credits_spent": 41,
        "credits_saved": 2, "cells_new": 4, "cells_cached": 3, "errors": ["ranks: ServerError: 503"], "left_out": [],
        "not_fetched": [f"{day}: ranks: 2 days ({day - timedelta(days=2)}..{day - timedelta(days=1)})"],
    }  # fmt: skip
    assert run_metadata([run, backfill])["status"] == "partial" and run_metadata([backfill])["status"] == "ok"


def test_against_the_loopback_sandbox_server_with_the_token_out_of_dagster_s_records(spec):
    with SandboxServer() as server:
        defs = tracker_definitions(spec, base_url=server.base_url, api_key=server.key)
        resource = defs.resources[RESOURCE]
        assert isinstance(resource.client_options, ClientOptions)
        assert server.key not in repr(resource) and "api_key" in repr(resource)
        result = _materialize(defs, "photo_editors/search", today_utc())
        meta = _metadata(result)
        assert (meta["status"], meta["requests"], meta["credits_spent"]) == ("ok", 2, 20)
        searches = [(a.path.rsplit("/", 2)[-2:], a.status) for a in server.service.arrivals]
        assert searches == [(["search-results", "current"], 200)] * 2  # the live search of each keyword
        shown = "\n".join([repr(result.dagster_run.run_config), *(str(e) for e in result.all_events)])
        assert server.key not in shown and "search" in shown
        again = _metadata(_materialize(defs, "photo_editors/search", today_utc()))
        assert again["requests"] == 0 and len(server.service.arrivals) == 2
    live = sf.scan("search", spec.parent / "cache").collect()  # the real service's namespace: the server's base URL
    assert sorted(set(live["keyword"])) == ["meditation", "photo editor"]


def test_the_token_and_base_url_come_from_the_environment_without_options(spec, monkeypatch):
    with SandboxServer() as server:
        monkeypatch.setenv("STOREFRAMES_API_KEY", server.key)
        monkeypatch.setenv("STOREFRAMES_BASE_URL", server.base_url)
        defs = tracker_definitions(spec)
        assert defs.resources[RESOURCE].client_options == ClientOptions({})
        meta = _metadata(_materialize(defs, "photo_editors/metadata", today_utc()))
        assert (meta["status"], meta["requests"]) == ("ok", 1)
        assert [(a.status, a.params["apps"]) for a in server.service.arrivals] == [(200, "2787512886,3233849169")]


def test_bad_input_is_refused_when_the_definitions_are_made(spec, tmp_path):
    with pytest.raises(sf.InvalidParameterError, match=r"invalid hour_of_day=24.*a whole number from 0 to 23"):
        tracker_definitions(spec, sandbox=True, hour_of_day=24)
    with pytest.raises(sf.InvalidParameterError, match=r"invalid minute_of_hour=.*a whole number from 0 to 59"):
        tracker_definitions(spec, sandbox=True, minute_of_hour=-1)
    with pytest.raises(sf.InvalidParameterError, match=r"invalid start='last week'.*a day as YYYY-MM-DD"):
        tracker_definitions(spec, sandbox=True, start="last week")
    with pytest.raises(sf.InvalidParameterError, match=r"invalid start='\d{4}-\d\d-\d\d'.*a day up to today"):
        tracker_definitions(spec, sandbox=True, start=today_utc() + timedelta(days=1))
    with pytest.raises(TypeError, match=r"budgt"):
        tracker_definitions(spec, sandbox=True, budgt=500)
    with pytest.raises(TypeError, match=r"budgt"):
        tracker_definitions(spec, base_url="http://127.0.0.1:9/api/public/store", budgt=500)
    with pytest.raises(sf.ConfigurationError, match=r"cache is its spec's cache_dir"):
        tracker_definitions(spec, sandbox=True, cache_dir=tmp_path / "other")
    clash = tmp_path / "clash.toml"
    clash.write_text(SPEC + '\n[[track]]\nname = "ranks.us"\nendpoint = "search"\nkeywords = ["a"]\n'
                     '\n[[track]]\nname = "ranks_us"\nendpoint = "search"\nkeywords = ["b"]\n')  # fmt: skip
    with pytest.raises(sf.InvalidParameterError, match=r"invalid name='ranks_us'.*not 'ranks.us'"):
        tracker_definitions(clash, sandbox=True)
    broken = tmp_path / "broken.toml"
    broken.write_text(SPEC.replace('endpoint = "metadata"', 'endpoint = "metadata"\nevery = "weekly"'))
    with pytest.raises(sf.InvalidParameterError, match=r"broken.toml, line"):
        tracker_definitions(broken, sandbox=True)
    assert not (tmp_path / "cache").exists() or Tracker.from_toml(spec, sandbox=True).runs().height == 0


def test_a_given_start_places_the_first_partition(spec):
    defs = tracker_definitions(spec, sandbox=True, start="2026-01-15")
    partitions = _assets(defs)["photo_editors/search"].partitions_def
    assert partitions.get_first_partition_key() == "2026-01-15"
    assert partitions.get_last_partition_key() == today_utc().isoformat()
