"""The tracker spec: what it accepts, and what it refuses before anything is sent (file, line, what is allowed)."""

from __future__ import annotations

from pathlib import Path

import pytest

import storeframes as sf
from storeframes.sandbox import World
from storeframes.track import RULES, SpecError, load_spec, parse_spec

WORLD = World(0)
APP = WORLD.EXAMPLE_IOS_APPS[0]

SPEC = f"""
[tracker]
name = "photo-editors"
cache_dir = "tracking-cache"
budget_per_run = 20000
budget_per_month = 300000
country = "us"
device = "iphone"

[[track]]
endpoint = "search"
keywords = ["photo editor", "collage maker"]
countries = ["us", "gb"]

[[track]]
endpoint = "search_ads"
keywords = ["photo editor"]

[[track]]
endpoint = "search_history"
keywords = ["photo editor"]
lookback = "14d"

[[track]]
endpoint = "metadata"
apps = ["{APP}"]

[[track]]
endpoint = "metrics"
name = "downloads"
apps = ["{APP}"]
metrics = ["downloads", "ratings"]
every = "7d"

[[track]]
endpoint = "benchmarks"
countries = ["us", "gb"]
channels = ["all", "search"]
every = "30d"
"""


def test_the_issues_spec_is_read_with_its_defaults(tmp_path: Path):
    path = tmp_path / "tracking.toml"
    path.write_text(SPEC)
    spec = load_spec(path)
    assert spec.name == "photo-editors"
    assert spec.cache_dir == str((tmp_path / "tracking-cache").resolve())  # relative to the spec file
    assert (spec.budget_per_run, spec.budget_per_month) == (20000, 300000)
    assert [i.name for i in spec.items] == [
        "search",
        "search_ads",
        "search_history",
        "metadata",
        "downloads",
        "benchmarks",
    ]
    assert [i.every_days for i in spec.items] == [1, 1, 1, 1, 7, 30]
    search = spec.items[0]
    assert [c["country"] for c in search.calls] == ["us", "gb"]  # one call per country
    assert search.calls[0]["device"] == "iphone"  # the tracker's default
    assert spec.items[1].calls[0]["ads"] is True
    assert spec.items[2].history and spec.items[2].lookback_days == 14
    assert spec.items[5].calls == ({"device": "iphone", "channels": ["all", "search"], "countries": ["us", "gb"]},)
    assert len(spec.spec_hash) == 16 and spec.spec_hash == load_spec(path).spec_hash


def test_a_bucket_cache_dir_is_kept_as_it_is():
    spec = parse_spec(SPEC.replace('"tracking-cache"', '"s3://team-bucket/tracking"'), path="/somewhere/t.toml")
    assert spec.cache_dir == "s3://team-bucket/tracking"


@pytest.mark.parametrize(
    ("change", "line", "words"),
    [
        (('endpoint = "metadata"', 'endpoint = "metadta"'), 25, "one of search, search_ads, search_history"),
        (
            (
                'apps = ["' + APP + '"]\n\n[[track]]\nendpoint = "metrics"',
                'app = ["x"]\n\n[[track]]\nendpoint = "metrics"',
            ),
            26,
            "keys of a metadata item",
        ),
        (
            (
                'countries = ["us", "gb"]\n\n[[track]]\nendpoint = "search_ads"',
                'countries = ["us", "uk"]\n\n[[track]]\nendpoint = "search_ads"',
            ),
            13,
            "gb",
        ),
        (('every = "7d"', 'every = "weekly"'), 33, '"1d", "7d" or "30d"'),
        (('channels = ["all", "search"]', 'channels = ["all", "tv"]'), 38, "channel"),
        (("budget_per_run = 20000", "budget_per_run = -5"), 5, "whole number of credits"),
        (('device = "iphone"', 'device = "iphone"\nmood = "happy"'), 9, "one of the keys name, cache_dir"),
        (('name = "photo-editors"', 'name = "photo..editors"'), 3, "never '..'"),
        (('name = "downloads"', 'name = "down..loads"'), 30, "never '..'"),
        (('metrics = ["downloads", "ratings"]', 'metrics = ["downloads", "fame"]'), 32, "downloads"),
        (('keywords = ["photo editor"]\nlookback', "keywords = []\nlookback"), 21, "one or more"),
    ],
)
def test_a_bad_spec_is_refused_naming_its_file_line_and_what_is_allowed(tmp_path, change, line, words):
    old, new = change
    assert old in SPEC
    path = tmp_path / "tracking.toml"
    path.write_text(SPEC.replace(old, new, 1))
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    message = str(caught.value)
    assert f"tracking.toml, line {line}" in message, message
    assert words in message, message
    assert isinstance(caught.value, sf.InvalidParameterError)  # one hierarchy: a ValueError too


def test_two_items_with_one_name_and_a_spec_without_items_are_refused():
    twice = SPEC.replace('name = "downloads"', 'name = "search"')
    with pytest.raises(SpecError, match="a name no other item of the spec has"):
        parse_spec(twice)
    with pytest.raises(SpecError, match=r"one \[\[track\]\] table or more"):
        parse_spec('[tracker]\nname = "x"\n')
    with pytest.raises(SpecError, match="TOML"):
        parse_spec("[tracker\nname = 1")
    with pytest.raises(SpecError, match="a readable TOML file"):
        load_spec("/nonexistent/tracking.toml")


def test_a_tracker_takes_neither_a_cache_nor_a_clock_of_its_own():
    spec = parse_spec(SPEC)
    with pytest.raises(sf.ConfigurationError, match="spec's cache_dir"):
        sf.Tracker(spec, cache_dir="elsewhere")
    assert repr(sf.Tracker(spec, sandbox=True)) == "Tracker('photo-editors', 6 items, sandbox)"


def test_the_guides_spec_is_a_spec(monkeypatch: pytest.MonkeyPatch):
    """The spec of docs/guides/tracking.md, and with the alerts of docs/guides/alerts-and-digests.md."""
    import re

    guides = Path(__file__).parents[2] / "docs" / "guides"
    tracking = (guides / "tracking.md").read_text().split("\n## ")[0]
    alerts = (guides / "alerts-and-digests.md").read_text()
    (spec_block,) = re.findall(r"```toml\n(.*?)\n```", tracking, flags=re.S)
    alerts_block = re.findall(r"```toml\n(.*?)\n```", alerts, flags=re.S)[0]
    spec = parse_spec(spec_block)
    assert spec.name == "photo-editors"
    assert [(i.name, i.every_days) for i in spec.items] == [
        ("search", 1), ("search_history", 1), ("search_ads", 1), ("metadata", 1), ("metrics", 7)
    ]  # fmt: skip
    assert spec.publish is not None
    assert (spec.publish.lake, spec.publish.tables) == ("s3://team-lake/storeframes", ("metadata", "metrics", "search"))
    assert spec.publish.snapshots is True
    monkeypatch.setenv("SLACK_TOKENS", "T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkcOXrIdevi7FQ")
    monkeypatch.setenv("SMTP_PASSWORD", "not-a-password")
    with_alerts = parse_spec(spec_block + "\n" + alerts_block)
    assert [a.rule for a in with_alerts.alerts] == list(RULES)
    assert [u.split("://")[0] for u in with_alerts.notify.urls] == ["slack", "mailto"]


def _with_publish(tmp_path: Path, publish: str) -> tuple[Path, list[str]]:
    text = SPEC + "\n[publish]\n" + publish + "\n"
    path = tmp_path / "tracking.toml"
    path.write_text(text)
    return path, text.splitlines()


def test_a_publish_table_is_read_its_lake_placed_and_its_tables_in_the_lakes_order(tmp_path, monkeypatch):
    path, _ = _with_publish(tmp_path, 'lake = "team-lake"\ntables = ["search", "metadata"]\nsnapshots = true')
    publish = load_spec(path).publish
    assert publish is not None
    assert publish.lake == str((tmp_path / "team-lake").resolve())  # relative to the spec file, as cache_dir
    assert publish.tables == ("metadata", "search")
    assert publish.snapshots is True
    assert publish.with_snapshots("metadata") and not publish.with_snapshots("search_history")
    monkeypatch.setenv("LAKE_BUCKET", "team-lake")
    path, _ = _with_publish(tmp_path, 'lake = "s3://${LAKE_BUCKET}/tables"')
    every = load_spec(path).publish
    assert every is not None
    assert every.lake == "s3://team-lake/tables"
    assert every.snapshots is False  # the default: snapshot tables are a cost a team chooses
    assert every.tables == (  # by default every table the items fill (no changes item: no change tables)
        "metadata", "versions", "screenshots", "videos", "in_app_purchases", "related_apps", "permissions",
        "metrics", "search", "search_history", "benchmarks",
    )  # fmt: skip
    assert parse_spec(SPEC).publish is None


@pytest.mark.parametrize(
    ("publish", "key", "words"),
    [
        ('lake = "team-lake"\ntables = ["search", "serch"]', "tables", "serch: no such table"),
        ('lake = "team-lake"\ntables = ["changes"]', "tables", "no item of the spec fetches"),
        ('lake = "team-lake"\ntables = []', "tables", "one table or more"),
        ('lake = "team-lake"\nsnapshots = "yes"', "snapshots", "true or false"),
        ('lake = "team-lake"\ntables = ["search_history"]\nsnapshots = true', "snapshots", "current-only tables"),
        ('lake = "s3://${LAKE_BUCKET_NOT_SET}/t"', "lake", "an environment variable LAKE_BUCKET_NOT_SET that is set"),
        ('lake = ""', "lake", "a folder or a bucket address"),
        ('lake = "team-lake"\nmerge = true', "merge", "one of the keys lake, tables, snapshots"),
    ],
)
def test_a_bad_publish_table_is_refused_naming_its_line_and_what_is_allowed(tmp_path, publish, key, words):
    path, lines = _with_publish(tmp_path, publish)
    line = next(n for n, text in enumerate(lines, 1) if text.startswith(f"{key} ="))
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    message = str(caught.value)
    assert f"[publish].{key}" in message and f"tracking.toml, line {line}" in message, message
    assert words in message, message
    if key == "tables" and "no such" not in words:
        assert "metadata, versions" in message and "changes" not in message.split("fill:")[1]
