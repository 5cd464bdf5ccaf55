"""A corpus of bad inputs, end to end: each is refused with a clear error and sends nothing.

Every case goes through a public function (a package function with the default client set,
a :class:`~storeframes.Client` method, ``Client(...)`` or ``configure(...)``) against one
loopback sandbox server. Each case checks the exception's type, that its message names the
argument and what is allowed, and that not one request arrived at the server. The module's
teardown checks that the whole corpus sent nothing and adds it to the reliability summary.

The service's documentation limits apps to 5 per request, and the frame functions cut longer lists into
requests of 5: many apps are not an error, so the corpus has many apps under a budget too
small for them (and a test that checks the cutting). The service's documentation lists no country or
language codes and no longest range, so a well-formed code such as ``"zz"`` and a long range
are not refused here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import Any

import pytest

import storeframes as sf
from storeframes.sandbox import SandboxServer, World
from tests._summary import record
from tests.conftest import SANDBOX_TODAY

WORLD = World(0)
IOS = WORLD.EXAMPLE_IOS_APPS[0]
IOS_2 = WORLD.EXAMPLE_IOS_APPS[1]
ANDROID = WORLD.EXAMPLE_ANDROID_APPS[0]
MANY_IOS = [str(1_000_000_000 + n) for n in range(30)]  # 30 ids: 6 requests of 5
KEYWORD = "photo editor"


def _noon() -> datetime:
    """The clients' clock: the server's today, so date checks agree with the server."""
    return datetime.combine(SANDBOX_TODAY, time(12), tzinfo=UTC)


@dataclass
class Ctx:
    """What a case may use: the module's client and server, a folder and monkeypatch."""

    client: sf.Client
    server: SandboxServer
    tmp: Path
    monkeypatch: pytest.MonkeyPatch

    def other(self, call: Callable[[sf.Client], Any], **options: Any) -> Any:
        """``call`` on a second client of the loopback server, closed whatever happens."""
        options.setdefault("api_key", self.server.key)
        options.setdefault("base_url", self.server.base_url)
        options.setdefault("cache_dir", self.tmp / "other-cache")
        with sf.Client(clock=_noon, **options) as client:
            return call(client)

    def build(self, **options: Any) -> None:
        """Construct a client (it is closed if it was, wrongly, accepted)."""
        options.setdefault("cache_dir", self.tmp / "built-cache")
        with sf.Client(**options):
            pass


@dataclass(frozen=True)
class Case:
    id: str
    category: str
    call: Callable[[Ctx], Any]
    error: type[Exception]
    message: str
    """A regex searched in the message: the argument, the value and what is allowed."""


IPE = sf.InvalidParameterError
CFG = sf.ConfigurationError

CASES = [
    # -- ids of the wrong store ------------------------------------------------------------
    Case(
        "numeric-id-with-android",
        "wrong store id",
        lambda c: sf.metadata_frame(IOS, device="android"),
        IPE,
        rf"apps='{IOS}'.*numeric id belongs to the iphone/ipad store.*package name",
    ),
    Case(
        "package-name-with-iphone",
        "wrong store id",
        lambda c: c.client.changes_frame(ANDROID, device="iphone"),
        IPE,
        rf"apps='{re.escape(ANDROID)}'.*android package name cannot be sent with device='iphone'.*numeric",
    ),
    Case(
        "both-stores-in-one-call",
        "wrong store id",
        lambda c: sf.versions_frame([IOS, ANDROID]),
        IPE,
        r"apps=.*android package name cannot be sent with device='iphone'",
    ),
    Case(
        "package-name-with-ipad-get",
        "wrong store id",
        lambda c: c.client.get("metrics", apps=ANDROID, metrics="ratings", device="ipad"),
        IPE,
        r"apps=.*for metrics: an android package name cannot be sent with device='ipad'",
    ),
    Case(
        "not-an-id",
        "wrong store id",
        lambda c: sf.metadata_frame("12-34"),
        IPE,
        r"apps='12-34'.*iphone/ipad app id is numeric text",
    ),
    # -- no apps, too many apps ------------------------------------------------------------
    Case("no-apps-list", "no apps", lambda c: sf.metadata_frame([]), IPE, r"apps=\[\].*at least one app id"),
    Case("no-apps-text", "no apps", lambda c: c.client.changes_frame(" , "), IPE, r"apps=' , '.*at least one app id"),
    Case(
        "no-apps-get",
        "no apps",
        lambda c: c.client.get("metadata"),
        IPE,
        r"apps=None for metadata: apps is required by metadata",
    ),
    Case(
        "too-many-apps-for-the-budget",
        "too many apps",
        lambda c: c.other(lambda client: client.metadata_frame(MANY_IOS), budget=300),
        sf.BudgetExceededError,
        r"metadata could cost up to 306 credits, 0 already spent, budget is 300; nothing was sent",
    ),
    Case(
        "too-many-apps-for-the-budget-get",
        "too many apps",
        lambda c: c.other(lambda client: client.get("changes", apps=MANY_IOS), budget=1_000),
        sf.BudgetExceededError,
        r"changes could cost up to 1,206 credits, 0 already spent, budget is 1,000; nothing was sent",
    ),
    # -- dates and ranges ------------------------------------------------------------------
    Case(
        "end-before-start",
        "bad dates",
        lambda c: sf.changes_frame(IOS, start="2026-10-10", end="2026-10-01"),
        IPE,
        r"end='2026-10-01' for changes_frame: a date on or after start=2026-10-10",
    ),
    Case(
        "end-before-start-get",
        "bad dates",
        lambda c: c.client.get("benchmarks", start_date="2026-10-10", end_date="2026-10-01"),
        IPE,
        r"end_date='2026-10-01' for benchmarks: a date on or after start_date=2026-10-10",
    ),
    Case(
        "not-a-date-word",
        "bad dates",
        lambda c: sf.search_history_frame(KEYWORD, start="yesterday"),
        IPE,
        r"start='yesterday' for search_history_frame: a date as 'YYYY-MM-DD' or a datetime\.date",
    ),
    Case(
        "not-a-calendar-day",
        "bad dates",
        lambda c: c.client.privacy_changes_frame(IOS, start="2026-02-30"),
        IPE,
        r"start='2026-02-30'.*a date as 'YYYY-MM-DD'",
    ),
    Case(
        "date-as-an-int",
        "bad dates",
        lambda c: c.client.version_changes_frame(IOS, end=20261101),
        IPE,
        r"end=20261101.*a date as 'YYYY-MM-DD' or a datetime\.date",
    ),
    Case(
        "slashed-date",
        "bad dates",
        lambda c: sf.benchmarks_frame(start="2026/10/01"),
        IPE,
        r"start='2026/10/01' for benchmarks_frame: a date as 'YYYY-MM-DD'",
    ),
    Case(
        "future-end",
        "bad dates",
        lambda c: sf.changes_frame(IOS, end="2026-12-25"),
        IPE,
        r"end='2026-12-25' for changes_frame: a date no later than today \(2026-11-20 UTC\)",
    ),
    Case(
        "future-start-date-object",
        "bad dates",
        lambda c: c.client.search_history_frame(KEYWORD, start=date(2027, 1, 1), end=date(2027, 1, 5)),
        IPE,
        r"(start|end)='2027-01-0[15]'.*no later than today \(2026-11-20 UTC\)",
    ),
    Case(
        "before-the-stores-opened",
        "bad dates",
        lambda c: sf.changes_frame(IOS, start="1999-12-31"),
        IPE,
        r"start='1999-12-31'.*a date on or after 2008-07-10 \(the stores opened in 2008",
    ),
    Case(
        "typo-in-the-year",
        "bad dates",
        lambda c: c.client.search_history_frame(KEYWORD, start="0206-11-01"),
        IPE,
        r"start='0206-11-01' for search_history_frame: a date on or after 2008-07-10",
    ),
    # -- channels and devices --------------------------------------------------------------
    Case(
        "android-channel-for-iphone",
        "unknown channel",
        lambda c: sf.benchmarks_frame(channels="explore"),
        IPE,
        r"channels='explore'.*for device='iphone' one of all, search, browse, appref, webref"
        r".*'explore' is a channel of device='android'",
    ),
    Case(
        "iphone-channel-for-android",
        "unknown channel",
        lambda c: c.client.benchmarks_frame(device="android", channels=["all", "webref"]),
        IPE,
        r"channels='webref'.*for device='android' one of all, search, explore, referrals"
        r".*'webref' is a channel of device='iphone'",
    ),
    Case(
        "unknown-channel-get",
        "unknown channel",
        lambda c: c.client.get("benchmarks", channel="social"),
        IPE,
        r"channel='social' for benchmarks: for device='iphone' one of all, search, browse, appref, webref",
    ),
    Case(
        "benchmarks-on-ipad",
        "unknown device",
        lambda c: sf.benchmarks_frame(device="ipad"),
        IPE,
        r"device='ipad' for benchmarks: one of iphone, android",
    ),
    Case(
        "unknown-device",
        "unknown device",
        lambda c: c.client.metadata_frame(IOS, device="windows"),
        IPE,
        r"device='windows' for metadata: one of iphone, ipad, android",
    ),
    Case(
        "unknown-benchmark-type",
        "unknown choice",
        lambda c: sf.benchmarks_frame(type="premium"),
        IPE,
        r"type='premium' for benchmarks: one of free, paid",
    ),
    # -- ads on android --------------------------------------------------------------------
    Case(
        "ads-on-android",
        "ads on android",
        lambda c: sf.search_frame(KEYWORD, device="android", ads=True),
        IPE,
        r"device='android' for search_frame: one of iphone, ipad with ads=True",
    ),
    Case(
        "ads-on-android-get",
        "ads on android",
        lambda c: c.client.get("search_ads", keyword=KEYWORD, device="android"),
        IPE,
        r"device='android' for search_ads: one of iphone, ipad \(the search with ads covers only the iphone/ipad",
    ),
    Case(
        "ads-on-android-plan",
        "ads on android",
        lambda c: c.client.plan("search_frame", keywords=KEYWORD, device="android", ads=True),
        IPE,
        r"device='android' for search_frame: one of iphone, ipad with ads=True",
    ),
    Case(
        "ads-not-a-bool",
        "wrong type",
        lambda c: sf.search_frame(KEYWORD, ads="yes"),
        IPE,
        r"ads='yes' for search_frame: True or False",
    ),
    # -- metrics ---------------------------------------------------------------------------
    Case(
        "unknown-metric",
        "unknown metric",
        lambda c: sf.metrics_frame(IOS, ["downloads", "installs"]),
        IPE,
        r"metrics='installs' for metrics: one of downloads, revenues, app-power, ratings, daily-ratings",
    ),
    Case(
        "unknown-metric-get",
        "unknown metric",
        lambda c: c.client.get("metrics", apps=IOS, metrics="power,mau"),
        IPE,
        r"metrics='mau'.*one of downloads, revenues, app-power.*'power' means 'app-power'",
    ),
    Case(
        "no-metrics",
        "unknown metric",
        lambda c: c.client.metrics_frame(IOS, []),
        IPE,
        r"metrics=\[\] for metrics: at least one of downloads, revenues",
    ),
    # -- countries and languages -----------------------------------------------------------
    Case(
        "three-letter-country",
        "bad country",
        lambda c: sf.metadata_frame(IOS, country="usa"),
        IPE,
        r"country='usa' for metadata: a two-letter country code \(ISO 3166-1 alpha-2\) such as 'us'",
    ),
    Case(
        "empty-country",
        "bad country",
        lambda c: c.client.search_frame(KEYWORD, country=""),
        IPE,
        r"country='' for search: a two-letter country code",
    ),
    Case(
        "country-list-for-one-country",
        "bad country",
        lambda c: c.client.metrics_frame(IOS, country=["us", "gb"]),
        IPE,
        r"country=\['us', 'gb'\] for metrics_frame: one country code such as 'us'; countries= takes several",
    ),
    Case(
        "empty-countries",
        "bad country",
        lambda c: sf.benchmarks_frame(countries=[]),
        IPE,
        r"countries=\[\] for benchmarks_frame: at least one value",
    ),
    Case(
        "country-and-countries",
        "bad country",
        lambda c: c.client.search_frame(KEYWORD, country="us", countries=["gb", "de"]),
        IPE,
        r"countries=\['gb', 'de'\] for search_frame: countries= or country=, not both \(country='us' was given too\)",
    ),
    Case(
        "countries-empty-of-a-frame",
        "bad country",
        lambda c: sf.changes_frame(IOS, countries=" , "),
        IPE,
        r"countries=' , ' for changes_frame: at least one country: countries= takes several",
    ),
    Case(
        "countries-one-unknown",
        "bad country",
        lambda c: c.client.metadata_frame(IOS, countries=["us", "uk"]),
        IPE,
        r"countries='uk' for metadata_frame: not an ISO 3166-1 alpha-2 code; did you mean 'gb'\?",
    ),
    Case(
        "language-of-a-country-not-asked",
        "bad language",
        lambda c: c.client.search_history_frame(KEYWORD, countries="us,gb", language={"fr": "fr"}),
        IPE,
        r"language=\{'fr': 'fr'\} for search_history_frame: languages of the countries asked for \(us, gb\); 'fr'",
    ),
    Case(
        "languages-without-countries",
        "bad language",
        lambda c: c.client.metadata_frame(IOS, language={"us": "en"}),
        IPE,
        r"language=\{'us': 'en'\} for metadata_frame: one language code such as 'en'; a mapping of country to language",
    ),
    Case(
        "three-letter-language",
        "bad language",
        lambda c: sf.metadata_frame(IOS, language="eng"),
        IPE,
        r"language='eng' for metadata: a two-letter language code \(ISO 639-1\) such as 'en'",
    ),
    Case(
        "language-as-an-int",
        "bad language",
        lambda c: c.client.search_history_frame(KEYWORD, language=1),
        IPE,
        r"language=1 for search_history: a two-letter language code",
    ),
    # -- keywords --------------------------------------------------------------------------
    Case("empty-keyword", "empty keyword", lambda c: sf.search_frame(""), IPE, r"keywords=''.*at least one value"),
    Case(
        "blank-keyword",
        "empty keyword",
        lambda c: c.client.search_history_frame("   "),
        IPE,
        r"keywords='   ' for search_history_frame: at least one value",
    ),
    Case("no-keywords", "empty keyword", lambda c: sf.search_frame([]), IPE, r"keywords=\[\].*at least one value"),
    Case(
        "empty-keyword-get",
        "empty keyword",
        lambda c: c.client.get("search", keyword=""),
        IPE,
        r"keyword='' for search: a non-empty keyword",
    ),
    Case(
        "too-many-keywords-for-the-budget",
        "too many keywords",
        lambda c: c.other(lambda client: client.search_frame([f"word {n}" for n in range(40)]), budget=300),
        sf.BudgetExceededError,
        r"search could cost up to 400 credits, 0 already spent, budget is 300; nothing was sent",
    ),
    # -- wrong types -----------------------------------------------------------------------
    Case(
        "int-keyword",
        "wrong type",
        lambda c: sf.search_frame(42),
        IPE,
        r"keywords=42 for search_frame: a text \(comma-separated for several\) or a list of texts",
    ),
    Case(
        "none-in-keywords",
        "wrong type",
        lambda c: c.client.search_frame([KEYWORD, None]),
        IPE,
        r"keywords=\['photo editor', None\] for search_frame: each item of keywords is a text, not None",
    ),
    Case(
        "dict-as-apps",
        "wrong type",
        lambda c: sf.metadata_frame({"id": IOS}),
        IPE,
        r"apps=\{'id': .*a text \(comma-separated for several\), a whole number or a list of them",
    ),
    Case(
        "float-as-apps",
        "wrong type",
        lambda c: c.client.metadata_frame(float(IOS)),
        IPE,
        rf"apps={IOS}\.0 for metadata: a text \(comma-separated for several\), a whole number or a list of them",
    ),
    Case(
        "float-in-apps",
        "wrong type",
        lambda c: c.client.get("metadata", apps=[IOS, 1.5]),
        IPE,
        r"apps=\['3233849169', 1\.5\] for metadata: each item of apps is a text or a whole number >= 0, not 1\.5",
    ),
    Case(
        "dict-as-metrics",
        "wrong type",
        lambda c: sf.metrics_frame(IOS, {"downloads": 1}),
        IPE,
        r"metrics=\{'downloads': 1\} for metrics: a text \(comma-separated for several\) or a list of texts",
    ),
    Case(
        "unknown-parameter-get",
        "wrong type",
        lambda c: c.client.get("metadata", apps=IOS, limit=3),
        IPE,
        r"limit=3 for metadata: metadata takes apps, country, language, device",
    ),
    Case(
        "unknown-argument-plan",
        "wrong type",
        lambda c: sf.plan("metadata_frame", app=IOS),
        IPE,
        r"arguments=\{'app': .*those of metadata_frame.*missing a required argument: 'apps'",
    ),
    Case(
        "unknown-endpoint-get",
        "wrong type",
        lambda c: c.client.get("apps", apps=IOS),
        IPE,
        r"endpoint='apps': one of metadata, changes, metrics, benchmarks, search, search_ads, search_history",
    ),
    # -- refresh modes ---------------------------------------------------------------------
    Case(
        "bad-refresh-call",
        "bad refresh",
        lambda c: sf.versions_frame(IOS, refresh="sometimes"),
        IPE,
        r"refresh='sometimes': one of auto, always, never",
    ),
    Case(
        "bad-refresh-get",
        "bad refresh",
        lambda c: c.client.get("metadata", apps=IOS, refresh=1),
        IPE,
        r"refresh=1: one of auto, always, never \(or True for always, False for auto\)",
    ),
    Case(
        "bad-refresh-client",
        "bad refresh",
        lambda c: c.build(api_key="k", base_url=c.server.base_url, refresh="daily"),
        IPE,
        r"refresh='daily': one of auto, always, never",
    ),
    # -- the service's address and the token -----------------------------------------------
    Case(
        "plain-http-remote-host",
        "plain http",
        lambda c: c.build(api_key="k", base_url="http://api.example.com/api/public/store"),
        CFG,
        r"base_url 'http://api\.example\.com/api/public/store' uses plain http; the service requires https"
        r".*only for loopback hosts",
    ),
    Case(
        "plain-http-configure",
        "plain http",
        lambda c: sf.configure(api_key="k", base_url="http://10.0.0.5/api/public/store"),
        CFG,
        r"base_url 'http://10\.0\.0\.5/api/public/store' uses plain http; the service requires https",
    ),
    Case(
        "not-a-url",
        "plain http",
        lambda c: c.build(api_key="k", base_url="ftp://example.com/store"),
        CFG,
        r"base_url 'ftp://example\.com/store' must be an https:// URL",
    ),
    Case(
        "missing-token",
        "missing token",
        lambda c: c.other(lambda client: client.metadata_frame(IOS), api_key=None),
        CFG,
        r"no API token: set \$STOREFRAMES_API_KEY or pass api_key=",
    ),
    Case(
        "missing-token-default-client",
        "missing token",
        lambda c: (sf.configure(base_url=c.server.base_url, cache_dir=c.tmp / "default"), sf.metadata_frame(IOS)),
        CFG,
        r"no API token: set \$STOREFRAMES_API_KEY or pass api_key=.*configure\(sandbox=True\)",
    ),
    Case(
        "empty-token",
        "missing token",
        lambda c: c.other(lambda client: client.search_frame(KEYWORD), api_key=""),
        CFG,
        r"no API token: set \$STOREFRAMES_API_KEY",
    ),
    Case(
        "token-not-a-text",
        "wrong type",
        lambda c: c.build(api_key=12345, base_url=c.server.base_url),
        CFG,
        r"api_key must be the token as a text, got a int",
    ),
    Case(
        "missing-base-url",
        "missing token",
        lambda c: c.other(lambda client: client.metadata_frame(IOS), base_url=None),
        CFG,
        r"no base URL: set \$STOREFRAMES_BASE_URL or pass base_url=",
    ),
    # -- budget ----------------------------------------------------------------------------
    Case(
        "negative-budget",
        "negative budget",
        lambda c: c.build(api_key="k", base_url=c.server.base_url, budget=-1),
        CFG,
        r"budget must be a whole number of credits >= 0, got -1",
    ),
    Case(
        "negative-budget-configure",
        "negative budget",
        lambda c: sf.configure(api_key="k", base_url=c.server.base_url, budget=-5),
        CFG,
        r"budget must be a whole number of credits >= 0, got -5",
    ),
    Case(
        "budget-as-text",
        "wrong type",
        lambda c: c.build(api_key="k", base_url=c.server.base_url, budget="1000"),
        CFG,
        r"budget must be a whole number of credits >= 0, got '1000'",
    ),
    Case(
        "budget-too-small-for-one-request",
        "budget too small",
        lambda c: c.other(lambda client: client.benchmarks_frame(), budget=1_000),
        sf.BudgetExceededError,
        r"benchmarks could cost up to 1,001 credits, 0 already spent, budget is 1,000; nothing was sent",
    ),
    Case(
        "budget-zero",
        "budget too small",
        lambda c: c.other(lambda client: client.get("search", keyword=KEYWORD), budget=0),
        sf.BudgetExceededError,
        r"search could cost up to 10 credits, 0 already spent, budget is 0; nothing was sent",
    ),
    Case(
        "budget-too-small-default-client",
        "budget too small",
        lambda c: (
            sf.configure(api_key=c.server.key, base_url=c.server.base_url, budget=50, cache_dir=c.tmp / "d"),
            sf.metrics_frame(IOS),
        ),
        sf.BudgetExceededError,
        r"metrics could cost up to 220 credits, 0 already spent, budget is 50; nothing was sent",
    ),
    # -- offline and the cache -------------------------------------------------------------
    Case(
        "offline-nothing-cached",
        "offline",
        lambda c: c.other(lambda client: client.metadata_frame(IOS), offline=True),
        sf.NotCachedError,
        r"offline: the cache lacks 1 request of metadata, estimated at most 11 credits",
    ),
    Case(
        "offline-from-the-environment",
        "offline",
        lambda c: (
            c.monkeypatch.setenv("STOREFRAMES_OFFLINE", "1"),
            sf.configure(api_key=c.server.key, base_url=c.server.base_url, cache_dir=c.tmp / "d"),
            sf.search_frame(KEYWORD),
        ),
        sf.NotCachedError,
        r"offline: the cache lacks 1 request of search",
    ),
    Case(
        "refresh-never-nothing-cached",
        "offline",
        lambda c: c.client.changes_frame(IOS_2, refresh="never"),
        sf.NotCachedError,
        r'refresh="never": the cache lacks 1 request of changes',
    ),
    Case(
        "offline-not-a-bool",
        "wrong type",
        lambda c: c.build(api_key="k", base_url=c.server.base_url, offline="no"),
        CFG,
        r"offline must be True, False or None \(\$STOREFRAMES_OFFLINE\), got 'no'",
    ),
    # -- other client options --------------------------------------------------------------
    Case(
        "zero-workers",
        "client option",
        lambda c: c.build(api_key="k", base_url=c.server.base_url, max_workers=0),
        CFG,
        r"max_workers must be a whole number >= 1 \(or None for the rate limit's requests, 60\), got 0",
    ),
    Case(
        "tries-as-text",
        "client option",
        lambda c: c.build(api_key="k", base_url=c.server.base_url, max_tries="3"),
        CFG,
        r"max_tries must be a whole number >= 1, got '3'",
    ),
    Case(
        "negative-timeout",
        "client option",
        lambda c: c.build(api_key="k", base_url=c.server.base_url, timeout=-1),
        CFG,
        r"timeout must be seconds > 0 \(or None for no limit\), got -1",
    ),
    Case(
        "bad-backoff",
        "client option",
        lambda c: c.build(api_key="k", base_url=c.server.base_url, backoff=5),
        CFG,
        r"backoff must be \(first, most\), two numbers of seconds >= 0, got 5",
    ),
    Case(
        "zero-rate-limit",
        "client option",
        lambda c: c.build(api_key="k", base_url=c.server.base_url, rate_limit=(0, 10.0)),
        CFG,
        r"rate_limit must be \(requests, seconds\), got \(0, 10\.0\): rate limit must be a whole number",
    ),
    Case(
        "configure-a-client-and-options",
        "client option",
        lambda c: sf.configure(c.client, budget=5),
        CFG,
        r"configure\(\) takes a client, or sandbox=True and options, not both",
    ),
    Case(
        "configure-not-a-client",
        "client option",
        lambda c: sf.configure("https://api.example.com"),
        CFG,
        r"configure\(\) takes a storeframes\.Client, got str",
    ),
    Case(
        "configure-misspelt-option",
        "client option",
        lambda c: sf.configure(api_key="k", base_url=c.server.base_url, budjet=5),
        TypeError,
        r"unexpected keyword argument 'budjet'",
    ),
]

CATEGORIES = {
    "wrong store id",
    "no apps",
    "too many apps",
    "bad dates",
    "unknown channel",
    "ads on android",
    "unknown metric",
    "bad country",
    "bad language",
    "plain http",
    "missing token",
    "wrong type",
    "empty keyword",
    "bad refresh",
    "negative budget",
    "budget too small",
    "offline",
}

RAN: set[str] = set()


@pytest.fixture(scope="module")
def loopback() -> Iterator[SandboxServer]:
    """One loopback server for the corpus; at the end, nothing may have reached it."""
    with SandboxServer(port=0, today=SANDBOX_TODAY) as server:
        yield server
        arrivals = list(server.service.arrivals)
    if RAN:
        record(f"bad inputs: {len(RAN)} cases", faults={}, retries=0, requests=len(arrivals), rows=0)
    assert arrivals == [], f"requests reached the server: {[(a.path, a.params) for a in arrivals]}"


@pytest.fixture(scope="module")
def loopback_client(loopback: SandboxServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[sf.Client]:
    with sf.Client(
        loopback.key, base_url=loopback.base_url, cache_dir=tmp_path_factory.mktemp("corpus-cache"), clock=_noon
    ) as client:
        yield client


@pytest.fixture
def ctx(loopback, loopback_client, fresh_default, monkeypatch, tmp_path) -> Ctx:
    """The package functions use the loopback client; no real service is configured."""
    monkeypatch.delenv("STOREFRAMES_API_KEY", raising=False)
    monkeypatch.delenv("STOREFRAMES_BASE_URL", raising=False)
    sf.configure(loopback_client)
    return Ctx(loopback_client, loopback, tmp_path, monkeypatch)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_a_bad_input_is_refused_before_any_request(case: Case, ctx: Ctx):
    arrivals = len(ctx.server.service.arrivals)
    sent = ctx.client.requests_sent
    with pytest.raises(case.error, match=case.message) as caught:
        case.call(ctx)
    assert len(ctx.server.service.arrivals) == arrivals, f"{case.id} reached the server"
    assert (ctx.client.requests_sent, ctx.client.spent) == (sent, 0)
    assert ctx.server.key not in str(caught.value)
    if isinstance(caught.value, sf.InvalidParameterError):
        assert str(caught.value).startswith(f"invalid {caught.value.parameter}=")
    RAN.add(case.id)


def test_many_apps_are_cut_into_requests_of_five_not_refused(ctx: Ctx):
    """The service's documented 5 apps per request is the library's to keep: 30 apps plan 6 requests."""
    plan = ctx.client.plan("metadata_frame", apps=MANY_IOS)
    sent = [json.loads(params) for params in plan.requests.filter(source="send")["params"]]
    assert [len(request["apps"].split(",")) for request in sent] == [5] * 6
    assert sorted(app for request in sent for app in request["apps"].split(",")) == sorted(MANY_IOS)
    assert plan.estimate == 6 * (1 + 5 * 10)
    assert ctx.server.service.arrivals == []


def test_the_corpus_covers_every_kind_of_bad_input():
    assert len(CASES) >= 30
    assert len({case.id for case in CASES}) == len(CASES)
    assert {case.category for case in CASES} >= CATEGORIES


def test_the_check_sees_a_request_that_does_arrive(server, tmp_path):
    """The arrivals check can fail: a good call arrives, the same call made bad does not."""
    with sf.Client(server.key, base_url=server.base_url, cache_dir=tmp_path, clock=_noon) as client:
        with pytest.raises(sf.InvalidParameterError):
            client.metadata_frame(IOS, country="usa")
        assert server.service.arrivals == []
        assert client.metadata_frame(IOS).height == 1
    assert [(a.path, a.status) for a in server.service.arrivals] == [("/api/public/store/apps/metadata.json", 200)]
