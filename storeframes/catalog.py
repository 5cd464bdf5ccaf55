"""The endpoint catalog: one declarative entry per endpoint of the service.

Each :class:`Endpoint` says where it lives, which parameters it takes (required,
defaults, allowed values), which devices it serves, its limits and its cost model.
:func:`validate` turns a user's arguments into the canonical query parameters of a
request, or raises :class:`~storeframes.InvalidParameterError` naming the parameter,
the value and what is allowed, before anything is sent.

Canonical parameters are strings in the catalog's order: app ids (texts, or whole
numbers) de-duplicated and sorted, codes lower-cased, metric aliases resolved, relative
date defaults resolved to real dates (UTC) at request time. A country must be an ISO
3166-1 alpha-2 code and a language an ISO 639-1 code or one of the service's own (US
Spanish is ``sp``): :mod:`storeframes.codes` holds the lists, and a refusal names the
code usually meant (``uk`` -> ``gb``, ``jp`` as a language -> ``ja``). The same canonical
parameters always mean the same request, which is what the ledger records and what the
cache keys on.

Freshness
---------
Each endpoint carries a :class:`Freshness` policy that the cache follows: answers of
the current endpoints (metadata, metrics) are fresh for the UTC day they were fetched,
live searches for an hour; a day of history (or a benchmarks range) that was at least
``settle_days`` old when fetched is final and never fetched again, and a more recent
day goes stale after ``recent``. Pass ``freshness=`` to :class:`~storeframes.Client`
to override any entry.

Cells
-----
The cache keeps track of what it holds as cells: ``(entity, facet, day)``, where the
entity is an app id or a keyword (:attr:`Endpoint.entity`), the facet a metric
(:attr:`Endpoint.facet`) and the day a day of a daily history (:attr:`Endpoint.daily`).
Benchmarks are averages over their whole range, so their one cell is the exact request.

Costs
-----
:data:`DEFAULT_COSTS` is plain data: a :class:`CostModel` per endpoint, fitted to the
service's documented examples (11 credits for one app's metadata, 41 for a month of
change history and 18 for a week, 1001 for one benchmarks request, 210 with a maximum of
220 for a metrics request) and to the published price notes. The search prices are not
published and are estimates (``docs/service.md``, "Credits"). Prices move: pass
``cost_model=`` to :class:`~storeframes.Client` to override any entry; the ``cost`` the
service reports always wins over an estimate in the ledger.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from types import MappingProxyType
from typing import Any, Literal

from . import codes
from .errors import InvalidParameterError, shown_value

__all__ = [
    "ANDROID_CATEGORIES",
    "CHANNELS",
    "DEFAULT_COSTS",
    "DEFAULT_FRESHNESS",
    "DEVICES",
    "EARLIEST_DAY",
    "ENDPOINTS",
    "IOS_CATEGORIES",
    "MAX_APPS_PER_REQUEST",
    "MAX_APP_ID_LENGTH",
    "MAX_KEYWORD_LENGTH",
    "METRICS",
    "CostModel",
    "Endpoint",
    "Freshness",
    "Param",
    "app_list",
    "device_for",
    "endpoint",
    "metric_list",
    "parse_day",
    "split_apps",
    "texts",
    "today_utc",
    "validate",
]

DEVICES = ("iphone", "ipad", "android")
IOS_DEVICES = ("iphone", "ipad")
CHANNELS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "iphone": ("all", "search", "browse", "appref", "webref"),
        "android": ("all", "search", "explore", "referrals"),
    }
)
BENCHMARK_TYPES = ("free", "paid")
METRICS = ("downloads", "revenues", "app-power", "ratings", "daily-ratings")
METRIC_ALIASES: Mapping[str, str] = MappingProxyType({"power": "app-power"})
MAX_APPS_PER_REQUEST = 5
MAX_KEYWORD_LENGTH = 1000
"""The longest keyword sent, in characters (after runs of spaces are made one): far above any
search a store takes, and far below what a URL can carry (a longer one is refused before sending)."""
MAX_APP_ID_LENGTH = 1000
"""The longest app id sent, in characters: far above any numeric id or package name, and far
below what a URL can carry (a longer one is refused before sending)."""
EARLIEST_DAY = date(2008, 7, 10)
"""The first day either store was open (the iphone store opened on 2008-07-10, the android
store later that year): no history is older, so an earlier date is a mistake (often a typo in
the year) that would still be billed per day."""

_IOS_ID = re.compile(r"^[0-9]{1,15}$")
_ANDROID_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+$")
_CODE = re.compile(r"^[A-Za-z]{2}$")
_LANGUAGES = (codes.LANGUAGES - set(codes.REFUSED_LANGUAGES)) | set(codes.SERVICE_LANGUAGES)
"""The language codes a request may carry (:mod:`storeframes.codes`)."""
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_RELATIVE = re.compile(r"^(today|end)([+-]\d+)d$")


def today_utc() -> date:
    """Today's date in UTC, the calendar the service's dates follow."""
    return datetime.now(UTC).date()


@dataclass(frozen=True)
class CostModel:
    """A linear price list: the maximum credits a request can cost.

    ``estimate = base + per_app * apps + per_day * days + per_app_day * apps * days
    + sum(per_app_metric[m] for each metric) * apps``
    """

    base: int = 0
    per_app: int = 0
    per_day: int = 0
    per_app_day: int = 0
    per_app_metric: Mapping[str, int] = field(default_factory=dict)

    def estimate(self, params: Mapping[str, str]) -> int:
        """The maximum cost of one request with these canonical parameters."""
        apps = len(params["apps"].split(",")) if params.get("apps") else 0
        days = 0
        if params.get("start_date") and params.get("end_date"):
            days = (date.fromisoformat(params["end_date"]) - date.fromisoformat(params["start_date"])).days + 1
        metric_price = sum(self.per_app_metric.get(m, 0) for m in params.get("metrics", "").split(",") if m)
        return (
            self.base + self.per_app * apps + self.per_day * days + self.per_app_day * apps * days + metric_price * apps
        )


DEFAULT_COSTS: Mapping[str, CostModel] = MappingProxyType(
    {
        "metadata": CostModel(base=1, per_app=10),
        "changes": CostModel(base=1, per_app=10, per_app_day=1),
        "metrics": CostModel(
            per_app_metric=MappingProxyType(
                {"downloads": 100, "revenues": 100, "app-power": 10, "ratings": 10, "daily-ratings": 10}
            )
        ),
        "benchmarks": CostModel(base=1001),
        "search": CostModel(base=10),
        "search_ads": CostModel(base=20),
        "search_history": CostModel(base=1, per_day=10),
    }
)


@dataclass(frozen=True)
class Freshness:
    """How long a cached answer of an endpoint stays usable.

    Args:
        current: for endpoints without dates, ``"utc_day"`` (fresh until the UTC day
            it was fetched ends, as the service gathers such data daily) or a
            :class:`~datetime.timedelta`.
        settle_days: a day of history that was at least this many days before the day
            of the fetch is final: it is never fetched again (for benchmarks, the
            range's end date decides).
        recent: how long a day that was not yet final when fetched stays fresh.

    >>> Freshness(current="utc_day").is_fresh(datetime(2026, 1, 5, 9, tzinfo=UTC), None,
    ...                                       now=datetime(2026, 1, 5, 23, tzinfo=UTC))
    True
    """

    current: timedelta | Literal["utc_day"] = "utc_day"
    settle_days: int = 2
    recent: timedelta = timedelta(hours=6)

    def __post_init__(self) -> None:
        if self.current != "utc_day" and not isinstance(self.current, timedelta):
            raise ValueError(f"Freshness.current must be 'utc_day' or a timedelta, got {self.current!r}")
        if not isinstance(self.settle_days, int) or self.settle_days < 0:
            raise ValueError(f"Freshness.settle_days must be a whole number >= 0, got {self.settle_days!r}")
        if not isinstance(self.recent, timedelta):
            raise ValueError(f"Freshness.recent must be a timedelta, got {self.recent!r}")

    def is_final(self, fetched_at: datetime, day: date | None) -> bool:
        """Whether ``day``, fetched at ``fetched_at``, can no longer change."""
        return day is not None and day <= fetched_at.astimezone(UTC).date() - timedelta(days=self.settle_days)

    def is_fresh(self, fetched_at: datetime, day: date | None, *, now: datetime) -> bool:
        """Whether an answer fetched at ``fetched_at`` may still be served at ``now``.

        ``day`` is the day of history the answer covers, or None for a current answer.
        """
        if day is None:
            if self.current == "utc_day":
                return fetched_at.astimezone(UTC).date() == now.astimezone(UTC).date()
            return now - fetched_at < self.current
        return self.is_final(fetched_at, day) or now - fetched_at < self.recent


DEFAULT_FRESHNESS: Mapping[str, Freshness] = MappingProxyType(
    {
        "metadata": Freshness(current="utc_day"),
        "changes": Freshness(settle_days=2, recent=timedelta(hours=6)),
        "metrics": Freshness(current="utc_day"),
        "benchmarks": Freshness(settle_days=2, recent=timedelta(hours=6)),
        "search": Freshness(current=timedelta(hours=1)),
        "search_ads": Freshness(current=timedelta(hours=1)),
        "search_history": Freshness(settle_days=2, recent=timedelta(hours=1)),
    }
)


@dataclass(frozen=True)
class Param:
    """One query parameter.

    ``kind`` selects the validator: apps, metrics, country, language, device, channel,
    choice, date or keyword. ``default`` is a literal, or for dates a relative rule:
    ``"today-1d"`` (yesterday) or ``"end-30d"`` (30 days before the end date).
    """

    name: str
    kind: str
    required: bool = False
    default: str | None = None
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Endpoint:
    """A declarative description of one endpoint of the service."""

    name: str
    path: str
    summary: str
    params: tuple[Param, ...]
    devices: tuple[str, ...]
    cost: CostModel
    max_apps: int | None = None
    result_cap: Mapping[str, int] = field(default_factory=dict)
    freshness: Freshness = field(default_factory=Freshness)
    entity: str | None = None
    """The parameter naming what a request is about: ``apps`` or ``keyword``."""
    facet: str | None = None
    """A list parameter whose items are cached apart: ``metrics``."""
    daily: bool = False
    """Whether the answer is a daily history, cached day by day."""
    records: str | None = None
    """For a daily history of apps, the member of each app's answer that lists its dated records."""

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    @property
    def takes_apps(self) -> bool:
        return "apps" in self.param_names

    @property
    def date_ranged(self) -> bool:
        return "start_date" in self.param_names

    def estimate(self, params: Mapping[str, str]) -> int:
        """Maximum credits of one request with these canonical parameters."""
        return self.cost.estimate(params)

    def with_cost(self, cost: CostModel) -> Endpoint:
        return replace(self, cost=cost)

    def with_freshness(self, freshness: Freshness) -> Endpoint:
        return replace(self, freshness=freshness)


_APPS = Param("apps", "apps", required=True)
_COUNTRY = Param("country", "country", default="us")
_LANGUAGE = Param("language", "language")
_DEVICE = Param("device", "device", default="iphone")
_KEYWORD = Param("keyword", "keyword", required=True)

ENDPOINTS: Mapping[str, Endpoint] = MappingProxyType(
    {
        e.name: e
        for e in (
            Endpoint(
                "metadata",
                "/apps/metadata.json",
                "current app metadata",
                (_APPS, _COUNTRY, _LANGUAGE, _DEVICE),
                DEVICES,
                DEFAULT_COSTS["metadata"],
                freshness=DEFAULT_FRESHNESS["metadata"],
                entity="apps",
                max_apps=MAX_APPS_PER_REQUEST,
            ),
            Endpoint(
                "changes",
                "/apps/metadata/changes.json",
                "metadata change history",
                (
                    _APPS,
                    _COUNTRY,
                    _LANGUAGE,
                    _DEVICE,
                    # 30 days ago .. yesterday when neither is given
                    Param("start_date", "date", default="end-29d"),
                    Param("end_date", "date", default="today-1d"),
                ),
                DEVICES,
                DEFAULT_COSTS["changes"],
                freshness=DEFAULT_FRESHNESS["changes"],
                entity="apps",
                daily=True,
                records="changes",
                max_apps=MAX_APPS_PER_REQUEST,
            ),
            Endpoint(
                "metrics",
                "/apps/metrics/current.json",
                "current app metrics",
                (_APPS, Param("metrics", "metrics", required=True), _COUNTRY, _DEVICE),
                DEVICES,
                DEFAULT_COSTS["metrics"],
                freshness=DEFAULT_FRESHNESS["metrics"],
                entity="apps",
                facet="metrics",
                max_apps=MAX_APPS_PER_REQUEST,
            ),
            Endpoint(
                "benchmarks",
                "/categories/benchmarks",
                "conversion rate benchmarks per category",
                (
                    _COUNTRY,
                    Param("device", "device", default="iphone"),
                    Param("type", "choice", default="free", choices=BENCHMARK_TYPES),
                    Param("channel", "channel", default="all"),
                    Param("start_date", "date", default="end-30d"),
                    Param("end_date", "date", default="today-1d"),
                ),
                ("iphone", "android"),
                DEFAULT_COSTS["benchmarks"],
                freshness=DEFAULT_FRESHNESS["benchmarks"],
            ),
            Endpoint(
                "search",
                "/keywords/search-results/current",
                "live keyword search, organic",
                (_KEYWORD, _COUNTRY, _LANGUAGE, _DEVICE),
                DEVICES,
                DEFAULT_COSTS["search"],
                freshness=DEFAULT_FRESHNESS["search"],
                entity="keyword",
                result_cap=MappingProxyType({"ios": 250, "android": 250}),
            ),
            Endpoint(
                "search_ads",
                "/keywords/search-results/ads/current",
                "live keyword search with ads",
                (_KEYWORD, _COUNTRY, _LANGUAGE, _DEVICE),
                IOS_DEVICES,
                DEFAULT_COSTS["search_ads"],
                freshness=DEFAULT_FRESHNESS["search_ads"],
                entity="keyword",
                result_cap=MappingProxyType({"ios": 250}),
            ),
            Endpoint(
                "search_history",
                "/keywords/search-results/history.json",
                "historical keyword search",
                (
                    _KEYWORD,
                    _COUNTRY,
                    _LANGUAGE,
                    _DEVICE,
                    Param("start_date", "date", default="end-30d"),
                    Param("end_date", "date", default="today-1d"),
                ),
                DEVICES,
                DEFAULT_COSTS["search_history"],
                freshness=DEFAULT_FRESHNESS["search_history"],
                entity="keyword",
                daily=True,
                result_cap=MappingProxyType({"ios": 500, "android": 250, "live_fallback": 250}),
            ),
        )
    }
)


def endpoint(name: str) -> Endpoint:
    """The catalog entry called ``name`` (also accepts the endpoint's path)."""
    if name in ENDPOINTS:
        return ENDPOINTS[name]
    for entry in ENDPOINTS.values():
        if name == entry.path:
            return entry
    raise InvalidParameterError("endpoint", name, f"one of {', '.join(ENDPOINTS)}")


# ---------------------------------------------------------------------------
# validation


def _join(values: Iterable[str]) -> str:
    return ", ".join(values)


def texts(name: str, value: Any, *, split: bool = True, digits: bool = False, endpoint: str | None = None) -> list[str]:
    """The items of "a text or a list of texts", in the order given, trimmed: the one parser of it.

    A text is one item, or with ``split`` its comma-separated parts (empty parts, as
    after a trailing comma, are dropped); any other iterable but bytes and mappings
    gives its items, which must be non-empty texts. With ``digits`` (app ids), a whole
    number >= 0 counts as its digits, alone or as an item. Anything else is an
    :class:`~storeframes.InvalidParameterError` naming ``name``.

    >>> texts("apps", "284882215, 389801252,"), texts("apps", 284882215, digits=True)
    (['284882215', '389801252'], ['284882215'])
    >>> texts("targets", "title, subtitle", split=False)
    ['title, subtitle']
    """
    kind = "a text or a whole number >= 0" if digits else "a text"
    if isinstance(value, str):
        items: list[Any] = value.split(",") if split else [value]
    elif digits and _whole(value):
        items = [value]
    elif isinstance(value, Iterable) and not isinstance(value, (bytes, Mapping)):
        items = list(value)
    else:
        several = " (comma-separated for several)" if split else ""
        others = ", a whole number or a list of them" if digits else " or a list of texts"
        raise InvalidParameterError(name, value, f"a text{several}{others}", endpoint=endpoint)
    out = []
    for item in items:
        if digits and _whole(item) and item >= 0:
            item = str(int(item))
        if not isinstance(item, str):
            raise InvalidParameterError(
                name, value, f"each item of {name} is {kind}, not {shown_value(item)}", endpoint=endpoint
            )
        if item.strip():
            out.append(item.strip())
        elif not isinstance(value, str):
            raise InvalidParameterError(name, value, f"each item of {name} is a non-empty text", endpoint=endpoint)
    return out


def _whole(value: Any) -> bool:
    """Whether ``value`` is a whole number (numpy's too), and not True or False."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def app_list(value: Any) -> list[str]:
    """App ids from a list or a comma-separated string, in the order given, each once."""
    return list(dict.fromkeys(texts("apps", value, digits=True)))


def metric_list(value: Any) -> list[str]:
    """Metric names from a list or a comma-separated string, lower-cased, aliases resolved (``power``)."""
    return [METRIC_ALIASES.get(m.lower(), m.lower()) for m in texts("metrics", value)]


def device_for(apps: Any) -> str:
    """The device a list of app ids implies: ``"android"`` for package names, else ``"iphone"``.

    >>> device_for("com.example.notes,com.example.mail"), device_for(["284882215"])
    ('android', 'iphone')
    """
    try:
        ids = texts("apps", apps, digits=True)
    except InvalidParameterError:
        return "iphone"  # the validation of the request says what is wrong
    return "android" if ids and all(_ANDROID_ID.match(a) and not _IOS_ID.match(a) for a in ids) else "iphone"


def _check_apps(value: Any, device: str, ep: Endpoint) -> str:
    apps = texts("apps", value, digits=True, endpoint=ep.name)
    if not apps:
        raise InvalidParameterError("apps", value, "at least one app id", endpoint=ep.name)
    for app in apps:
        if len(app) > MAX_APP_ID_LENGTH:
            raise InvalidParameterError(
                "apps", app, f"an app id of at most {MAX_APP_ID_LENGTH:,} characters", endpoint=ep.name
            )
        if device == "android":
            if _IOS_ID.match(app):
                raise InvalidParameterError(
                    "apps",
                    app,
                    "a numeric id belongs to the iphone/ipad store; with device='android' give a "
                    "package name such as 'com.example.app' (or use device='iphone')",
                    endpoint=ep.name,
                )
            if not _ANDROID_ID.match(app):
                raise InvalidParameterError(
                    "apps", app, "an android package name such as 'com.example.app'", endpoint=ep.name
                )
        else:
            if _ANDROID_ID.match(app):
                raise InvalidParameterError(
                    "apps",
                    app,
                    f"an android package name cannot be sent with device={device!r}; iphone/ipad ids "
                    "are numeric text such as '284882215' (or use device='android')",
                    endpoint=ep.name,
                )
            if not _IOS_ID.match(app):
                raise InvalidParameterError(
                    "apps", app, "an iphone/ipad app id is numeric text such as '284882215'", endpoint=ep.name
                )
    return ",".join(sorted(set(apps)))


def _check_metrics(value: Any, ep: Endpoint) -> str:
    names = texts("metrics", value, endpoint=ep.name)
    if not names:
        raise InvalidParameterError("metrics", value, f"at least one of {_join(METRICS)}", endpoint=ep.name)
    chosen = set()
    for name in names:
        canonical = METRIC_ALIASES.get(name.lower(), name.lower())
        if canonical not in METRICS:
            raise InvalidParameterError(
                "metrics", name, f"one of {_join(METRICS)} ('power' means 'app-power')", endpoint=ep.name
            )
        chosen.add(canonical)
    return ",".join(m for m in METRICS if m in chosen)


def _check_code(name: str, value: Any, ep: Endpoint) -> str:
    """A country (ISO 3166-1 alpha-2) or language code (ISO 639-1, or the service's own), lower-cased.

    A code outside the lists is refused with the code usually meant, where there is one
    (``uk`` -> ``gb``, a country code given as a language: ``jp`` -> ``ja``).
    """
    country = name == "country"
    standard = "ISO 3166-1 alpha-2" if country else "ISO 639-1"
    example = "'us', 'gb' or 'de'" if country else "'en', 'de' or 'ja'"
    if not isinstance(value, str) or not _CODE.match(value.strip()):
        raise InvalidParameterError(
            name, value, f"a two-letter {name} code ({standard}) such as {example}", endpoint=ep.name
        )
    code = value.strip().lower()
    if code in (codes.COUNTRIES if country else _LANGUAGES):
        return code
    hints = (codes.COUNTRY_HINTS if country else codes.LANGUAGE_HINTS).get(code)
    own = "" if country else " nor the service's " + _join(f"{c!r} ({m})" for c, m in codes.SERVICE_LANGUAGES.items())
    if code in codes.REFUSED_LANGUAGES:
        reason = (
            f"{code!r} is the {standard} code of {codes.REFUSED_LANGUAGES[code][0]}, a language neither store offers"
        )
    elif hints:
        reason = f"not an {standard} code{own}"
    else:
        reason = f"not an {standard} code such as {example}{',' if own else ''}{own}"
    if hints:
        reason += f"; did you mean {' or '.join(repr(h) for h in hints)}?"
    raise InvalidParameterError(name, value, reason, endpoint=ep.name)


def parse_day(name: str, value: Any, *, endpoint: str | None = None) -> date:
    """A day from ``"YYYY-MM-DD"``, a ``datetime.date`` or a ``datetime``, else :class:`~storeframes.InvalidParameterError`."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str) and _DATE.match(value.strip()):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise InvalidParameterError(name, value, "a date as 'YYYY-MM-DD' or a datetime.date", endpoint=endpoint)


def _relative_date(rule: str, today: date, end: date | None) -> date:
    match = _RELATIVE.match(rule)
    if match is None:  # pragma: no cover - catalog data error
        raise ValueError(f"bad relative date rule {rule!r}")
    anchor = today if match.group(1) == "today" else end
    assert anchor is not None
    return anchor + timedelta(days=int(match.group(2)))


def _check_keyword(value: Any, ep: Endpoint) -> str:
    """One keyword, runs of spaces made one; a comma is part of it.

    An endpoint takes one keyword per request, sent as given: ``get("search",
    keyword="a, b")`` searches "a, b". (The frame functions split a text of keywords on
    commas before asking, one request each; a keyword with a comma goes to them in a list.)
    """
    if not isinstance(value, str):
        raise InvalidParameterError(
            "keyword",
            value,
            "one keyword as a string, sent as it is, commas included (one keyword per request; "
            "search_frame and search_history_frame take several)",
            endpoint=ep.name,
        )
    keyword = " ".join(value.split())
    if not keyword:
        raise InvalidParameterError("keyword", value, "a non-empty keyword", endpoint=ep.name)
    if len(keyword) > MAX_KEYWORD_LENGTH:
        raise InvalidParameterError(
            "keyword",
            value,
            f"a keyword of at most {MAX_KEYWORD_LENGTH:,} characters (this one has {len(keyword):,})",
            endpoint=ep.name,
        )
    return keyword


def validate(
    name: str | Endpoint,
    params: Mapping[str, Any] | None = None,
    *,
    today: date | None = None,
    **kwargs: Any,
) -> dict[str, str]:
    """Check a request's parameters and return its canonical query parameters.

    Raises :class:`~storeframes.InvalidParameterError` for any bad input, naming the
    parameter, the value and what is allowed. ``apps`` may hold more than
    :data:`MAX_APPS_PER_REQUEST` ids: the client cuts them into requests
    (:func:`storeframes.planning.requests_for`; :func:`split_apps` does it alone).

    >>> validate("changes", apps="284882215", end_date="2026-01-31")
    {'apps': '284882215', 'country': 'us', 'device': 'iphone', 'start_date': '2026-01-02', 'end_date': '2026-01-31'}
    """
    ep = name if isinstance(name, Endpoint) else endpoint(name)
    given = {**(params or {}), **kwargs}
    given = {k: v for k, v in given.items() if v is not None}
    unknown = sorted(set(given) - set(ep.param_names))
    if unknown:
        raise InvalidParameterError(
            unknown[0], given[unknown[0]], f"{ep.name} takes {_join(ep.param_names)}", endpoint=ep.name
        )
    today = today or today_utc()

    device = given.get("device", "iphone")
    if not isinstance(device, str) or device.strip().lower() not in ep.devices:
        extra = ""
        if ep.name == "search_ads" and device == "android":
            extra = " (the search with ads covers only the iphone/ipad store)"
        raise InvalidParameterError("device", device, f"one of {_join(ep.devices)}{extra}", endpoint=ep.name)
    device = device.strip().lower()

    out: dict[str, str] = {}
    for p in ep.params:
        value = given.get(p.name)
        if value is None and p.kind != "date":
            if p.required:
                raise InvalidParameterError(p.name, None, f"{p.name} is required by {ep.name}", endpoint=ep.name)
            if p.default is None:
                continue
            value = p.default
        if p.kind == "apps":
            out[p.name] = _check_apps(value, device, ep)
        elif p.kind == "metrics":
            out[p.name] = _check_metrics(value, ep)
        elif p.kind in ("country", "language"):
            out[p.name] = _check_code(p.name, value, ep)
        elif p.kind == "device":
            out[p.name] = device
        elif p.kind == "choice":
            choice = value.strip().lower() if isinstance(value, str) else value
            if choice not in p.choices:
                raise InvalidParameterError(p.name, value, f"one of {_join(p.choices)}", endpoint=ep.name)
            out[p.name] = choice
        elif p.kind == "channel":
            channel = value.strip().lower() if isinstance(value, str) else value
            allowed = CHANNELS[device]
            if channel not in allowed:
                others = [d for d, chans in CHANNELS.items() if channel in chans and d != device]
                hint = f" ('{channel}' is a channel of device={others[0]!r})" if others else ""
                raise InvalidParameterError(
                    "channel", value, f"for device={device!r} one of {_join(allowed)}{hint}", endpoint=ep.name
                )
            out[p.name] = channel
        elif p.kind == "keyword":
            out[p.name] = _check_keyword(value, ep)
        elif p.kind == "date":
            continue  # resolved below, end first
        else:  # pragma: no cover - catalog data error
            raise ValueError(f"unknown parameter kind {p.kind!r}")

    if ep.date_ranged:
        _resolve_dates(ep, given, today, out)
    return {name: out[name] for name in ep.param_names if name in out}


def _resolve_dates(ep: Endpoint, given: Mapping[str, Any], today: date, out: dict[str, str]) -> None:
    spec = {p.name: p for p in ep.params}
    end = (
        parse_day("end_date", given["end_date"], endpoint=ep.name)
        if "end_date" in given
        else _relative_date(spec["end_date"].default or "today-1d", today, None)
    )
    start = (
        parse_day("start_date", given["start_date"], endpoint=ep.name)
        if "start_date" in given
        else _relative_date(spec["start_date"].default or "end-30d", today, end)
    )
    latest = today + timedelta(days=1)  # one day of slack for users ahead of UTC
    for pname, day in (("end_date", end), ("start_date", start)):
        if day > latest:
            raise InvalidParameterError(
                pname, day.isoformat(), f"a date no later than today ({today.isoformat()} UTC)", endpoint=ep.name
            )
        if day < EARLIEST_DAY:
            raise InvalidParameterError(
                pname,
                day.isoformat(),
                f"a date on or after {EARLIEST_DAY.isoformat()} (the stores opened in 2008: no history is older)",
                endpoint=ep.name,
            )
    if end < start:
        raise InvalidParameterError(
            "end_date",
            end.isoformat(),
            f"a date on or after start_date={start.isoformat()}",
            endpoint=ep.name,
        )
    out["start_date"] = start.isoformat()
    out["end_date"] = end.isoformat()


def split_apps(params: Mapping[str, str], size: int = MAX_APPS_PER_REQUEST) -> list[dict[str, str]]:
    """Cut canonical parameters with many apps into requests of at most ``size`` apps."""
    if not params.get("apps"):
        return [dict(params)]
    apps = params["apps"].split(",")
    return [{**params, "apps": ",".join(apps[i : i + size])} for i in range(0, len(apps), size)]


# -- category names: the stores' public lists, for labels (the sandbox draws from them too) --

IOS_CATEGORIES: dict[str, str] = {
    "6000": "Business",
    "6001": "Weather",
    "6002": "Utilities",
    "6003": "Travel",
    "6004": "Sports",
    "6005": "Social Networking",
    "6006": "Reference",
    "6007": "Productivity",
    "6008": "Photo & Video",
    "6009": "News",
    "6010": "Navigation",
    "6011": "Music",
    "6012": "Lifestyle",
    "6013": "Health & Fitness",
    "6014": "Games",
    "6015": "Finance",
    "6016": "Entertainment",
    "6017": "Education",
    "6018": "Books",
    "6020": "Medical",
    "6021": "Magazines & Newspapers",
    "6022": "Catalogs",
    "6023": "Food & Drink",
    "6024": "Shopping",
    "6025": "Stickers",
    "6026": "Developer Tools",
    "6027": "Graphics & Design",
    "7001": "Action",
    "7002": "Adventure",
    "7003": "Casual",
    "7004": "Board",
    "7005": "Card",
    "7006": "Casino",
    "7008": "Educational",
    "7009": "Family",
    "7011": "Music",
    "7012": "Puzzle",
    "7013": "Racing",
    "7014": "Role Playing",
    "7015": "Simulation",
    "7016": "Sports",
    "7017": "Strategy",
    "7018": "Trivia",
    "7019": "Word",
}
"""App Store genre ids (numeric text) -> names; ``7xxx`` are the game subgenres of ``6014``."""

ANDROID_CATEGORIES: dict[str, str] = {
    "ART_AND_DESIGN": "Art & Design",
    "AUTO_AND_VEHICLES": "Auto & Vehicles",
    "BEAUTY": "Beauty",
    "BOOKS_AND_REFERENCE": "Books & Reference",
    "BUSINESS": "Business",
    "COMICS": "Comics",
    "COMMUNICATION": "Communication",
    "DATING": "Dating",
    "EDUCATION": "Education",
    "ENTERTAINMENT": "Entertainment",
    "EVENTS": "Events",
    "FINANCE": "Finance",
    "FOOD_AND_DRINK": "Food & Drink",
    "HEALTH_AND_FITNESS": "Health & Fitness",
    "HOUSE_AND_HOME": "House & Home",
    "LIBRARIES_AND_DEMO": "Libraries & Demo",
    "LIFESTYLE": "Lifestyle",
    "MAPS_AND_NAVIGATION": "Maps & Navigation",
    "MEDICAL": "Medical",
    "MUSIC_AND_AUDIO": "Music & Audio",
    "NEWS_AND_MAGAZINES": "News & Magazines",
    "PARENTING": "Parenting",
    "PERSONALIZATION": "Personalization",
    "PHOTOGRAPHY": "Photography",
    "PRODUCTIVITY": "Productivity",
    "SHOPPING": "Shopping",
    "SOCIAL": "Social",
    "SPORTS": "Sports",
    "TOOLS": "Tools",
    "TRAVEL_AND_LOCAL": "Travel & Local",
    "VIDEO_PLAYERS": "Video Players & Editors",
    "WEATHER": "Weather",
    "GAME_ACTION": "Action",
    "GAME_ADVENTURE": "Adventure",
    "GAME_ARCADE": "Arcade",
    "GAME_BOARD": "Board",
    "GAME_CARD": "Card",
    "GAME_CASINO": "Casino",
    "GAME_CASUAL": "Casual",
    "GAME_EDUCATIONAL": "Educational",
    "GAME_MUSIC": "Music",
    "GAME_PUZZLE": "Puzzle",
    "GAME_RACING": "Racing",
    "GAME_ROLE_PLAYING": "Role Playing",
    "GAME_SIMULATION": "Simulation",
    "GAME_SPORTS": "Sports",
    "GAME_STRATEGY": "Strategy",
    "GAME_TRIVIA": "Trivia",
    "GAME_WORD": "Word",
}
"""Play Store category codes -> names; ``GAME_*`` are the game categories."""
