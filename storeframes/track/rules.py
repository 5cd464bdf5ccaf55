"""A tracker's alert rules (``[[alert]]`` tables) and where it tells of them (``[notify]``), read from its spec.

::

    [[alert]]
    rule = "rank_drop"            # an app fell by at least `places` within the top `within`
    apps = ["6441354028"]
    keywords = ["photo editor"]   # default: every keyword the tracker follows
    places = 5
    within = 20

    [[alert]]
    rule = "top"                  # an app entered or left the top `n`
    apps = ["6441354028"]
    n = 10
    margin = 1                    # passed the line by this many places, or stayed past it a day with data

    [[alert]]
    rule = "anomaly"              # an app's rank far from its weekday's usual (a robust z), once per event
    apps = ["6441354028"]
    threshold = 3.0               # the robust z past which a day is anomalous
    weeks = 4                     # the baseline: the same weekday of the weeks before
    min_move = 5                  # and the places it moved from the baseline, at least
    within = 20                   # judged where the rank or its baseline is in the top 20

    [[alert]]
    rule = "listing_change"       # a tracked app changed one of these
    apps = ["1234567890"]
    targets = ["title", "subtitle", "description", "screenshots", "icon", "price", "privacy"]  # the default

    [[alert]]
    rule = "new_advertiser"       # an app appears in the ads of a tracked keyword for the first time
    keywords = ["photo editor"]

    [[alert]]
    rule = "budget"               # the month's spend crossed this share of budget_per_month
    at = 0.8

    [[alert]]
    rule = "unknown_field"        # the service answered with a field storeframes does not know

    [notify]
    urls = ["json://127.0.0.1:8080/hook", "mailto://user:${SMTP_PASSWORD}@mail.example.test?to=team@example.test"]
    digest = "reports/{tracker}-{day}.html"
    timeout = 10                  # seconds one address's delivery may take in all (the default)

Every rule is checked when the spec is read: its keys, that its apps and keywords are ones the
tracker follows (the rank rules need a ``search``, ``search_ads`` or ``search_history`` item,
``new_advertiser`` a ``search_ads`` item, ``listing_change`` a ``metadata`` or ``changes`` item,
``budget`` a ``budget_per_month``), and the notification addresses (apprise's URLs: Slack,
Teams, Discord, e-mail, JSON webhooks ...). ``$NAME`` or ``${NAME}`` in an address is the
environment variable ``NAME``, so a spec kept in git holds no password.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._version import install_hint
from ..catalog import app_list, texts
from ..errors import ConfigurationError, InvalidParameterError

__all__ = [
    "DEFAULT_TARGETS",
    "DEFAULT_TIMEOUT",
    "LISTING_TARGETS",
    "RULES",
    "RULE_HEADINGS",
    "TOP_MARGIN",
    "Alert",
    "Notify",
    "address_id",
    "parse_alerts",
    "parse_notify",
    "quietly",
    "shown_address",
]

RULES = ("rank_drop", "top", "anomaly", "listing_change", "new_advertiser", "budget", "unknown_field")
"""The rules an ``[[alert]]`` may name, in the order a digest shows their events."""

RULE_HEADINGS = {
    "rank_drop": "Rank drops",
    "top": "Top N entries and exits",
    "anomaly": "Rank anomalies",
    "listing_change": "Listing changes",
    "new_advertiser": "New advertisers",
    "budget": "Budget",
    "unknown_field": "Unknown fields from the service",
}
"""Each rule's heading in a digest or a message, in :data:`RULES`' order."""

LISTING_TARGETS = (
    "title",
    "subtitle",
    "description",
    "short_description",
    "long_description",
    "promotional_text",
    "icon",
    "screenshots",
    "price",
    "privacy",
    "size",
    "version",
)
"""What ``listing_change`` may watch (``targets``). ``description`` also matches the change history's
``long_description``, ``privacy`` its ``privacy_info``."""

DEFAULT_TARGETS = ("title", "subtitle", "short_description", "description", "screenshots", "icon", "price", "privacy")
"""What ``listing_change`` watches when its ``targets`` are not given: what a store visitor sees and
what a marketing lead acts on (``short_description`` is android's subtitle). ``size`` and ``version`` change with nearly every release, so they
are watched only when named (``targets = [..., "size", "version"]``).

>>> "size" in DEFAULT_TARGETS, "size" in LISTING_TARGETS
(False, True)
"""

TOP_MARGIN = 1
"""The places by which an app must pass a ``top`` rule's line for its event to fire on that day
(``margin``); an app that passes it by less fires when it is still past the line on the next day
with data. Chosen on a replayed month of the sandbox (tests/benchmarks/bench_alerts.py ``--flaps``):
the tracking example's 11 top-10 events become 5, none of them an app moving between places 10 and 11
and back. ``margin = 0`` fires on every crossing, on its day."""

_KEYS: Mapping[str, tuple[str, ...]] = {
    "rank_drop": ("apps", "keywords", "places", "within"),
    "top": ("apps", "keywords", "n", "margin"),
    "anomaly": ("apps", "keywords", "threshold", "weeks", "min_move", "within"),
    "listing_change": ("apps", "targets"),
    "new_advertiser": ("keywords",),
    "budget": ("at",),
    "unknown_field": (),
}
_RANKED = ("search", "search_ads", "search_history")
_LISTED = ("metadata", "changes")
_ENV = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_NOTIFY_KEYS = ("urls", "digest", "timeout")
_ADDRESS = re.compile(r"\S+://\S+|\S+:\S+@\S+")


@dataclass(frozen=True)
class Alert:
    """One ``[[alert]]`` table: a rule and what it watches."""

    index: int
    name: str
    """Its name (``name =``; by default its rule's, ``<rule>_2`` for the rule's second table ...)."""
    rule: str
    apps: tuple[str, ...] = ()
    """The apps it watches (``listing_change``: every app the tracker follows when empty)."""
    keywords: tuple[str, ...] = ()
    """The keywords it watches, as the frames write them; every keyword the tracker follows when empty."""
    places: int = 5
    within: int = 20
    """``rank_drop``: the top the fall must start in; ``anomaly``: the top the rank or its baseline must be in."""
    n: int = 10
    margin: int = TOP_MARGIN
    """``top``: the places by which an app must pass the line (or stay past it a day) for an event."""
    targets: tuple[str, ...] = DEFAULT_TARGETS
    at: float = 0.8
    threshold: float = 3.0
    """``anomaly``: the robust z (:func:`~storeframes.rank_anomalies`) past which a day is anomalous."""
    weeks: int = 4
    """``anomaly``: the weeks of the same weekday its baseline is the median of (2 or more: a day is judged with
    half of them, two at least, in its baseline)."""
    min_move: int = 5
    """``anomaly``: the fewest places a day must move from its baseline to be anomalous."""

    def describe(self) -> str:
        """The rule in words."""
        apps = ", ".join(self.apps) or "every tracked app"
        words = {
            "rank_drop": f"{apps} falls by {self.places}+ places within the top {self.within}",
            "top": f"{apps} enters or leaves the top {self.n}"
            + (f" (by {self.margin}+ places, or for two days with data)" if self.margin else ""),
            "anomaly": f"{apps} moves {self.min_move}+ places from its weekday's median of {self.weeks} week(s), "
            f"a robust z of {self.threshold:g}+, within the top {self.within}",
            "listing_change": f"{apps} changes {', '.join(self.targets)}",
            "new_advertiser": "a new app in the ads",
            "budget": f"the month's spend passes {self.at:.0%} of the budget",
            "unknown_field": "the service sends a field storeframes does not know",
        }[self.rule]
        keywords = f" for {', '.join(repr(k) for k in self.keywords)}" if self.keywords else ""
        return (
            f"{self.name}: {words}{keywords if self.rule in ('rank_drop', 'top', 'anomaly', 'new_advertiser') else ''}"
        )


DEFAULT_TIMEOUT = 10.0
"""Seconds one address's delivery may take in all (``[notify] timeout``): connecting, sending, the
answer; past it, the delivery is a failure and its events go at the next run."""

MOST_TIMEOUT = 300.0
"""The longest ``[notify] timeout`` allowed: a run holds its tracker's lease while it tells."""


@dataclass(frozen=True)
class Notify:
    """The ``[notify]`` table: apprise addresses told of new events, and the digest's path."""

    urls: tuple[str, ...] = field(default=(), repr=False)
    """The addresses, environment variables filled in: they may hold credentials, and are never shown."""
    digest: str | None = None
    """Where a run writes its digest: a path (relative ones from the spec's folder), with ``{tracker}``
    and ``{day}`` filled in; None for no digest."""
    timeout: float = DEFAULT_TIMEOUT
    """Seconds one address's delivery may take in all (:data:`DEFAULT_TIMEOUT`)."""

    def __repr__(self) -> str:
        return (
            f"Notify({len(self.urls)} address(es): {', '.join(self.shown)}; digest={self.digest!r}; "
            f"timeout={self.timeout:g} s)"
        )

    @property
    def shown(self) -> tuple[str, ...]:
        """The addresses as they may be shown where no cache is at hand: their kind and place in the spec.

        >>> Notify(("json://127.0.0.1/hook/tok", "mailto://u:pw@mail.example.test")).shown
        ('json://… (address 1)', 'mailto://… (address 2)')
        """
        return tuple(f"{_scheme(u)}://… (address {n + 1})" for n, u in enumerate(self.urls))


def _scheme(url: str) -> str:
    scheme = url.split("://", 1)[0] if "://" in url else ""
    return scheme if re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]{0,31}", scheme) else "?"


def address_id(url: str, key: bytes) -> str:
    """An address's id in the events' ``notified_to``, its failures and summaries: the first 12 hex digits
    of the HMAC-SHA256 of the address under ``key`` (the cache's :meth:`cache.events.address_key() <storeframes.cache.event_files.EventFiles.address_key>`).
    Without the key, an id says nothing of the address: no guess of a password can be checked against it.

    >>> address_id("json://127.0.0.1/hook", b"k" * 32) == address_id("json://127.0.0.1/hook", b"j" * 32)
    False
    """
    return hmac.new(key, url.encode(), hashlib.sha256).hexdigest()[:12]


def shown_address(url: str, key: bytes) -> str:
    """An address as it may be shown: its scheme and its id (:func:`address_id`), never its host, user or password.

    >>> shown_address("mailtos://user:pw@mail.example.test", b"k" * 32).startswith("mailtos://…#")
    True
    """
    return f"{_scheme(url)}://…#{address_id(url, key)}"


def unkeyed_id(url: str) -> str:
    """The id earlier versions wrote in the events' ``notified_to`` (an unkeyed digest of the address): read
    only to recognise those events' addresses, and replaced by :func:`address_id` when they are rewritten.

    >>> len(unkeyed_id("json://127.0.0.1/hook"))
    12
    """
    return hashlib.sha256(url.encode()).hexdigest()[:12]


Fail = Callable[[str | None, str | None, Any, str], InvalidParameterError]
"""Makes the error of a key of a table (``alert`` or ``notify``): (table, key, value, allowed)."""


def _a(rule: str) -> str:
    """``rule`` after its article: ``a rank_drop``, ``an anomaly``."""
    return f"{'an' if rule[0] in 'aeiou' else 'a'} {rule}"


def _whole(fail: Fail, table: str, key: str, value: Any, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise fail(table, key, value, f"a whole number, {least} or more")
    return value


def parse_alerts(
    tables: Any,
    fail: Fail,
    *,
    keywords_of: Mapping[str, set[str]],
    apps_of: Mapping[str, set[str]],
    budget_per_month: int | None,
) -> tuple[Alert, ...]:
    """The ``[[alert]]`` tables, checked against the tracker's items.

    ``keywords_of`` and ``apps_of`` say what the tracker follows: the keywords and apps of
    each endpoint's items.
    """
    if tables is None:
        return ()
    if not isinstance(tables, list):
        raise fail(None, "alert", tables, "[[alert]] tables")
    alerts: list[Alert] = []
    seen: dict[str, int] = {}
    for n, table in enumerate(tables):
        where = f"alert:{n}"
        if not isinstance(table, dict):
            raise fail(where, None, table, "a table of keys")
        rule = table.get("rule")
        if rule not in RULES:
            raise fail(where, "rule", rule, f"one of {', '.join(RULES)}")
        allowed = ("rule", "name", *_KEYS[rule])
        for key in table:
            if key not in allowed:
                raise fail(where, key, table[key], f"one of the keys of {_a(rule)} alert: {', '.join(allowed)}")
        seen[rule] = seen.get(rule, 0) + 1
        name = table.get("name", rule if seen[rule] == 1 else f"{rule}_{seen[rule]}")
        if not isinstance(name, str) or not re.match(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$", name):
            raise fail(where, "name", name, "a name of letters, digits, '_', '.' and '-' (at most 64)")
        if name in {a.name for a in alerts}:
            raise fail(where, "name", name, "a name no other alert of the spec has")
        values: dict[str, Any] = {}
        if "apps" in _KEYS[rule]:
            values["apps"] = _apps(fail, where, table, rule, apps_of)
        if "keywords" in _KEYS[rule]:
            values["keywords"] = _keywords(fail, where, table, rule, keywords_of)
        if rule == "rank_drop":
            values["places"] = _whole(fail, where, "places", table.get("places", 5), 1)
            values["within"] = _whole(fail, where, "within", table.get("within", 20), 1)
        if rule == "top":
            values["n"] = _whole(fail, where, "n", table.get("n", 10), 1)
            least = min(TOP_MARGIN, values["n"] - 1)  # a top 1 has no place inside to spare
            values["margin"] = _whole(fail, where, "margin", table.get("margin", least), 0)
            if values["margin"] >= values["n"]:
                raise fail(where, "margin", values["margin"], f"a whole number below n ({values['n']}), 0 or more")
        if rule == "anomaly":
            threshold = table.get("threshold", 3.0)
            if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not threshold > 0:
                raise fail(where, "threshold", threshold, "a robust z above 0 (3.0 by default)")
            values["threshold"] = float(threshold)
            weeks = table.get("weeks", 4)
            if isinstance(weeks, bool) or not isinstance(weeks, int) or weeks < 2:
                # rank_anomalies judges a day with two weeks of its weekday in the baseline at least
                raise fail(where, "weeks", weeks, "a whole number, 2 or more (a baseline holds two weeks at least)")
            values["weeks"] = weeks
            values["min_move"] = _whole(fail, where, "min_move", table.get("min_move", 5), 1)
            values["within"] = _whole(fail, where, "within", table.get("within", 20), 1)
        if rule == "listing_change":
            targets = table.get("targets", list(DEFAULT_TARGETS))
            found = texts("targets", targets, split=False) if isinstance(targets, list) else None
            if not found or any(t not in LISTING_TARGETS for t in found):
                raise fail(where, "targets", targets, f"a list of {', '.join(LISTING_TARGETS)}")
            values["targets"] = tuple(dict.fromkeys(found))
        if rule == "budget":
            at = table.get("at", 0.8)
            if isinstance(at, bool) or not isinstance(at, int | float) or not 0 < at <= 1:
                raise fail(where, "at", at, "a share of the month's budget, above 0 and at most 1 (0.8 for 80 %)")
            if budget_per_month is None:
                raise fail(where, "rule", rule, "a rule of a tracker with a budget_per_month in its [tracker] table")
            values["at"] = float(at)
        alerts.append(Alert(n, name, rule, **values))
    return tuple(alerts)


def _app_ids(value: Any) -> list[str]:
    """The app ids of an alert's ``apps`` (none for a value that holds none: the caller says what is allowed)."""
    try:
        return app_list(value)
    except InvalidParameterError:
        return []


def _apps(
    fail: Fail, where: str, table: Mapping[str, Any], rule: str, apps_of: Mapping[str, set[str]]
) -> tuple[str, ...]:
    if rule == "listing_change":
        followed = apps_of.get("metadata", set()) | apps_of.get("changes", set())
        if not followed:
            raise fail(where, "rule", rule, "a rule of a tracker with a metadata or changes item")
        if "apps" not in table:
            return tuple(sorted(followed))
        apps = _app_ids(table["apps"])
        if not apps:
            raise fail(where, "apps", table["apps"], "one app id or more")
        strangers = [a for a in apps if a not in followed]
        if strangers:
            raise fail(where, "apps", strangers, "apps a metadata or changes item of the tracker follows")
        return tuple(apps)
    apps = _app_ids(table.get("apps"))
    if not apps:
        raise fail(where, "apps", table.get("apps"), f"{_a(rule)} alert's apps: one app id or more")
    return tuple(apps)


def _keywords(
    fail: Fail,
    where: str,
    table: Mapping[str, Any],
    rule: str,
    keywords_of: Mapping[str, set[str]],
) -> tuple[str, ...]:
    sources = ("search_ads",) if rule == "new_advertiser" else _RANKED
    followed = set().union(*(keywords_of.get(e, set()) for e in sources))
    if not followed:
        needed = "a search_ads item" if rule == "new_advertiser" else "a search, search_ads or search_history item"
        raise fail(where, "rule", rule, f"a rule of a tracker with {needed}")
    if "keywords" not in table:
        return ()
    try:
        wanted = [" ".join(k.split()) for k in texts("keywords", table["keywords"], split=False)]
    except InvalidParameterError:
        wanted = []
    if not wanted:
        raise fail(where, "keywords", table["keywords"], "one keyword or more")
    lowered = {k.lower() for k in followed}
    strangers = [k for k in wanted if k.lower() not in lowered]
    if strangers:
        items = "search_ads items" if rule == "new_advertiser" else "search, search_ads or search_history items"
        raise fail(where, "keywords", strangers, f"keywords the tracker's {items} follow")
    return tuple(dict.fromkeys(wanted))


def parse_notify(table: Any, fail: Fail, *, folder: Path | None) -> Notify:
    """The ``[notify]`` table: its addresses (environment variables filled in, each checked by apprise)
    and its digest path (relative to ``folder``)."""
    if table is None:
        return Notify()
    if not isinstance(table, dict):
        raise fail("notify", None, table, "a [notify] table")
    for key in table:
        if key not in _NOTIFY_KEYS:
            raise fail("notify", key, "…", f"one of the keys {', '.join(_NOTIFY_KEYS)}")
    raw = table.get("urls", [])
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not all(isinstance(u, str) and u.strip() for u in raw):
        raise fail("notify", "urls", "…", "a list of apprise addresses such as 'json://host/path' or 'mailto://…'")
    urls = [_filled(fail, n, u.strip()) for n, u in enumerate(raw)]
    if urls:
        _check_urls(fail, urls)
    digest = table.get("digest")
    if digest is not None:
        if not isinstance(digest, str) or not digest.strip():
            raise fail("notify", "digest", digest, "a path such as 'reports/{tracker}-{day}.html'")
        try:
            digest.format(tracker="t", day="d")
        except (KeyError, IndexError, ValueError):
            raise fail("notify", "digest", digest, "a path whose only fields are {tracker} and {day}") from None
        path = Path(digest).expanduser()
        if not path.is_absolute() and folder is not None:
            path = folder / path
        digest = str(path)
    timeout = table.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= MOST_TIMEOUT:
        allowed = f"seconds one address's delivery may take, above 0 and at most {MOST_TIMEOUT:g}"
        raise fail("notify", "timeout", timeout, f"{allowed} (default {DEFAULT_TIMEOUT:g})")
    return Notify(tuple(dict.fromkeys(urls)), digest, float(timeout))


def _filled(fail: Fail, n: int, url: str) -> str:
    """``url`` with ``$NAME`` and ``${NAME}`` taken from the environment; a missing one refused by name."""
    return env_filled(
        url, lambda name: fail("notify", "urls", f"address {n + 1}", f"an environment variable {name} that is set")
    )


def env_filled(text: str, missing: Callable[[str], Exception]) -> str:
    """``text`` with ``$NAME`` and ``${NAME}`` taken from the environment; ``missing(NAME)`` raised for one unset.

    >>> env_filled("s3://${HOME_BUCKET_UNSET_X}/lake", lambda name: KeyError(name))
    Traceback (most recent call last):
    KeyError: 'HOME_BUCKET_UNSET_X'
    """

    def value(found: re.Match[str]) -> str:
        name = found.group(1) or found.group(2)
        if name not in os.environ:
            raise missing(name)
        return os.environ[name]

    return _ENV.sub(value, text)


class _Held(logging.Filter):
    """Keeps apprise's log lines (which show parts of addresses) out of the log, and its complaints."""

    def __init__(self) -> None:
        super().__init__()
        self.complaints: list[str] = []

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.WARNING:
            self.complaints.append(_ADDRESS.sub("(address)", record.getMessage()))
        return False


_LOGGERS = ("apprise", "urllib3.connectionpool")
"""The loggers that name an address's parts while apprise sends: apprise's own, and the HTTP pool's
(a webhook's path may hold its secret)."""


@contextmanager
def quietly() -> Iterator[_Held]:
    """Keep apprise's log lines, which show parts of addresses, out of the log while it works; its
    complaints, addresses taken out, are gathered on the object given."""
    held = _Held()
    for name in _LOGGERS:
        logging.getLogger(name).addFilter(held)
    try:
        yield held
    finally:
        for name in _LOGGERS:
            logging.getLogger(name).removeFilter(held)


def _check_urls(fail: Fail, urls: Sequence[str]) -> None:
    try:
        import apprise
    except ImportError:
        raise ConfigurationError(f"a [notify] table with urls needs apprise: {install_hint('alerts')}") from None
    for n, url in enumerate(urls):
        with quietly():
            known = apprise.Apprise.instantiate(url) is not None
        if not known:
            raise fail(
                "notify",
                "urls",
                f"address {n + 1} ({_scheme(url)}://…)",
                "an address apprise knows (json://host/path, mailto://…, slack://…, msteams://…, discord://…: "
                "see apprise's list of services)",
            )
