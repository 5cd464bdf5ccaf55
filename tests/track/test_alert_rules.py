"""The ``[[alert]]`` and ``[notify]`` tables of a tracker spec: what they accept, and what they refuse
(with the file's line) before anything is sent."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from storeframes.sandbox import World
from storeframes.track import RULES, SpecError, parse_spec
from storeframes.track.rules import DEFAULT_TARGETS, TOP_MARGIN

WORLD = World(0)
APP, OTHER = WORLD.EXAMPLE_IOS_APPS[0], WORLD.EXAMPLE_IOS_APPS[1]

BASE = f"""
[tracker]
name = "watch"
budget_per_month = 50000

[[track]]
endpoint = "search"
keywords = ["photo editor", "collage maker"]

[[track]]
endpoint = "search_ads"
keywords = ["photo editor"]

[[track]]
endpoint = "metadata"
apps = ["{APP}"]
"""

ALL = (
    BASE
    + f"""
[[alert]]
rule = "rank_drop"
apps = ["{APP}"]
keywords = ["photo editor"]
places = 5
within = 20

[[alert]]
rule = "top"
apps = ["{APP}"]
n = 10

[[alert]]
rule = "anomaly"
apps = ["{APP}", "{OTHER}"]
keywords = ["collage maker"]
threshold = 2.5
weeks = 3
min_move = 4
within = 50

[[alert]]
rule = "listing_change"
apps = ["{APP}"]
targets = ["title", "subtitle", "screenshots", "icon", "price", "description"]

[[alert]]
rule = "new_advertiser"
keywords = ["photo editor"]

[[alert]]
rule = "budget"
at = 0.8

[[alert]]
rule = "unknown_field"

[notify]
urls = ["json://127.0.0.1:8080/hook", "mailto://user:${{SF_TEST_SMTP_PASSWORD}}@127.0.0.1:2525?to=team@example.test&from=t@example.test"]
digest = "reports/{{tracker}}-{{day}}.html"
"""
)


def test_every_rule_of_the_issue_is_read_with_its_values(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("SF_TEST_SMTP_PASSWORD", "s3cret-pw")
    spec = parse_spec(ALL, path=tmp_path / "watch.toml")
    assert [a.rule for a in spec.alerts] == list(RULES)
    assert [a.name for a in spec.alerts] == list(RULES)
    drop, top, anomaly, listing, ads, budget, _ = spec.alerts
    assert (drop.apps, drop.keywords, drop.places, drop.within) == ((APP,), ("photo editor",), 5, 20)
    assert (top.apps, top.keywords, top.n, top.margin) == ((APP,), (), 10, TOP_MARGIN)
    assert (anomaly.apps, anomaly.keywords) == ((APP, OTHER), ("collage maker",))
    assert (anomaly.threshold, anomaly.weeks, anomaly.min_move, anomaly.within) == (2.5, 3, 4, 50)
    assert listing.targets == ("title", "subtitle", "screenshots", "icon", "price", "description")
    assert ads.keywords == ("photo editor",)
    assert budget.at == 0.8
    assert spec.notify.urls[1].startswith("mailto://user:s3cret-pw@127.0.0.1:2525")
    assert spec.notify.digest == str(tmp_path.resolve() / "reports" / "{tracker}-{day}.html")
    # the addresses never show: not in the spec's repr, not in Notify's
    for shown in (repr(spec), repr(spec.notify), str(spec.notify.shown)):
        assert "s3cret-pw" not in shown and "127.0.0.1" not in shown
    # where no cache is at hand, an address is its kind and its place in the spec: nothing derived from it
    scheme = spec.notify.urls[0].split("://")[0]
    assert spec.notify.shown == (f"{scheme}://… (address 1)", "mailto://… (address 2)")
    assert re.search(r"#[0-9a-f]{6}", repr(spec) + repr(spec.notify)) is None


def test_defaults_listing_change_follows_every_tracked_app_and_second_rules_get_numbered_names():
    spec = parse_spec(BASE + '[[alert]]\nrule = "listing_change"\n\n[[alert]]\nrule = "listing_change"\n')
    first, second = spec.alerts
    assert (first.name, second.name) == ("listing_change", "listing_change_2")
    assert first.apps == (APP,) and first.targets == DEFAULT_TARGETS
    # a marketing lead's listing: size and version only when named
    assert {"title", "subtitle", "description", "screenshots", "icon", "price", "privacy"} <= set(first.targets)
    assert not {"size", "version"} & set(first.targets)
    opted = parse_spec(BASE + '[[alert]]\nrule = "listing_change"\ntargets = ["title", "size", "version"]\n')
    assert opted.alerts[0].targets == ("title", "size", "version")


def test_an_anomaly_rule_takes_rank_anomalies_defaults_and_says_them():
    spec = parse_spec(BASE + f'[[alert]]\nrule = "anomaly"\napps = ["{APP}"]\n')
    (alert,) = spec.alerts
    assert (alert.name, alert.apps, alert.keywords) == ("anomaly", (APP,), ())
    assert (alert.threshold, alert.weeks, alert.min_move, alert.within) == (3.0, 4, 5, 20)
    assert isinstance(alert.threshold, float)
    assert alert.describe() == (
        f"anomaly: {APP} moves 5+ places from its weekday's median of 4 week(s), a robust z of 3+, within the top 20"
    )
    whole = parse_spec(
        BASE + f'[[alert]]\nrule = "anomaly"\napps = ["{APP}"]\nthreshold = 4\nkeywords = ["photo editor"]\n'
    )
    assert whole.alerts[0].threshold == 4.0 and "for 'photo editor'" in whole.alerts[0].describe()
    no_search = f'[tracker]\nname = "w"\n[[track]]\nendpoint = "metadata"\napps = ["{APP}"]\n'
    with pytest.raises(SpecError, match="a search, search_ads or search_history item"):
        parse_spec(no_search + f'[[alert]]\nrule = "anomaly"\napps = ["{APP}"]\n')


def test_a_top_rule_takes_a_margin_below_n():
    spec = parse_spec(BASE + f'[[alert]]\nrule = "top"\napps = ["{APP}"]\nn = 10\nmargin = 0\n')
    assert spec.alerts[0].margin == 0
    assert parse_spec(BASE + f'[[alert]]\nrule = "top"\napps = ["{APP}"]\nn = 1\n').alerts[0].margin == 0
    assert (
        "by 1+ places, or for two days with data"
        in parse_spec(BASE + f'[[alert]]\nrule = "top"\napps = ["{APP}"]\n').alerts[0].describe()
    )


def _line(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), start=1) if needle in line)


@pytest.mark.parametrize(
    ("table", "needle", "allowed"),
    [
        ('rule = "rank_fall"\napps = ["1"]', 'rule = "rank_fall"', "one of rank_drop, top, anomaly, listing_change"),
        ('rule = "rank_drop"\napps = ["1"]\nplace = 5', "place = 5", "one of the keys of a rank_drop alert"),
        ('rule = "rank_drop"\nkeywords = ["photo editor"]', "[[alert]]", "a rank_drop alert's apps"),
        ('rule = "top"\napps = ["1"]\nn = 0', "n = 0", "a whole number, 1 or more"),
        ('rule = "top"\napps = ["1"]\nmargin = -1', "margin = -1", "a whole number, 0 or more"),
        ('rule = "top"\napps = ["1"]\nn = 3\nmargin = 3', "margin = 3", "a whole number below n (3), 0 or more"),
        ('rule = "top"\napps = ["1"]\nkeywords = ["maps"]', 'keywords = ["maps"]', "keywords the tracker's search"),
        ('rule = "new_advertiser"\nkeywords = ["collage maker"]', '= ["collage maker"]', "search_ads items follow"),
        ('rule = "listing_change"\napps = ["42"]', 'apps = ["42"]', "apps a metadata or changes item"),
        ('rule = "listing_change"\ntargets = ["logo"]', "targets", "a list of title, subtitle"),
        ('rule = "listing_change"\ntargets = ["sizes"]', "targets", "privacy, size, version"),
        ('rule = "budget"\nat = 80', "at = 80", "above 0 and at most 1"),
        ('rule = "rank_drop"\napps = ["1"]\nname = "a b"', 'name = "a b"', "a name of letters"),
        ('rule = "anomaly"\napps = ["1"]\nthreshold = 0', "threshold = 0", "a robust z above 0 (3.0 by default)"),
        ('rule = "anomaly"\napps = ["1"]\nthreshold = -1.5', "threshold = -1.5", "a robust z above 0"),
        ('rule = "anomaly"\napps = ["1"]\nthreshold = true', "threshold = true", "a robust z above 0"),
        ('rule = "anomaly"\napps = ["1"]\nweeks = 0', "weeks = 0", "a whole number, 2 or more"),
        ('rule = "anomaly"\napps = ["1"]\nweeks = 1', "weeks = 1", "a baseline holds two weeks at least"),
        ('rule = "anomaly"\napps = ["1"]\nweeks = 2.5', "weeks = 2.5", "a whole number, 2 or more"),
        ('rule = "anomaly"\napps = ["1"]\nmin_move = 0', "min_move = 0", "a whole number, 1 or more"),
        ('rule = "anomaly"\napps = ["1"]\nwithin = 0', "within = 0", "a whole number, 1 or more"),
        ('rule = "anomaly"\napps = ["1"]\ndays = 7', "days = 7", "one of the keys of an anomaly alert"),
        ('rule = "anomaly"\napps = ["1"]\nplaces = 5', "places = 5", "threshold, weeks, min_move"),
        ('rule = "anomaly"\nkeywords = ["photo editor"]', "[[alert]]", "an anomaly alert's apps"),
        ('rule = "anomaly"\napps = ["1"]\nkeywords = ["maps"]', 'keywords = ["maps"]', "keywords the tracker's search"),
    ],
)
def test_a_bad_alert_is_refused_with_its_line(table: str, needle: str, allowed: str):
    text = BASE + "\n[[alert]]\n" + table + "\n"
    with pytest.raises(SpecError) as caught:
        parse_spec(text)
    message = str(caught.value)
    assert allowed in message
    assert f"line {_line(text, needle)}" in message


def test_rules_that_need_an_item_or_a_budget_say_which():
    no_search = f'[tracker]\nname = "w"\n[[track]]\nendpoint = "metadata"\napps = ["{APP}"]\n'
    with pytest.raises(SpecError, match="a search, search_ads or search_history item"):
        parse_spec(no_search + f'[[alert]]\nrule = "top"\napps = ["{APP}"]\n')
    with pytest.raises(SpecError, match="with a search_ads item"):
        parse_spec(no_search + '[[alert]]\nrule = "new_advertiser"\n')
    with pytest.raises(SpecError, match="budget_per_month"):
        parse_spec(no_search + '[[alert]]\nrule = "budget"\n')
    only_search = '[tracker]\nname = "w"\n[[track]]\nendpoint = "search"\nkeywords = ["maps"]\n'
    with pytest.raises(SpecError, match="a metadata or changes item"):
        parse_spec(only_search + '[[alert]]\nrule = "listing_change"\n')


def test_a_bad_notify_table_is_refused_without_showing_the_address(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("SF_TEST_MISSING", raising=False)
    with pytest.raises(SpecError) as caught:
        parse_spec(BASE + '[notify]\nurls = ["nosuchservice://user:hunter22@example.test/x"]\n')
    assert "an address apprise knows" in str(caught.value) and "hunter22" not in str(caught.value)
    assert "example.test" not in str(caught.value)
    with pytest.raises(SpecError, match="environment variable SF_TEST_MISSING that is set"):
        parse_spec(BASE + '[notify]\nurls = ["json://me:${SF_TEST_MISSING}@127.0.0.1/hook"]\n')
    with pytest.raises(SpecError, match=r"only fields are \{tracker\} and \{day\}"):
        parse_spec(BASE + '[notify]\ndigest = "reports/{when}.html"\n')
    with pytest.raises(SpecError, match="one of the keys urls, digest"):
        parse_spec(BASE + '[notify]\nwebhook = "json://127.0.0.1/x"\n')


@pytest.mark.parametrize("value", ["0", "-1", "301", '"10"', "true"])
def test_a_notify_timeout_is_seconds_above_0_and_at_most_300(value: str):
    with pytest.raises(SpecError) as caught:
        parse_spec(BASE + f'[notify]\nurls = ["json://127.0.0.1/hook"]\ntimeout = {value}\n')
    assert "seconds one address's delivery may take, above 0 and at most 300 (default 10)" in str(caught.value)
    assert parse_spec(BASE + "[notify]\ntimeout = 2.5\n").notify.timeout == 2.5
    assert parse_spec(BASE + "[notify]\n").notify.timeout == 10


def test_a_refused_address_is_shown_by_its_kind_and_place_with_nothing_derived_from_it():
    with pytest.raises(SpecError) as caught:
        parse_spec(BASE + '[notify]\nurls = ["json://127.0.0.1/hook", "nosuchservice://user:weakpw@example.test"]\n')
    assert "address 2 (nosuchservice://…)" in str(caught.value)
    assert re.search(r"[0-9a-f]{8}", str(caught.value)) is None
