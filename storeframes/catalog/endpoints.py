"""The declared endpoints: one entry per endpoint of the service, with its defaults, prices and freshness.

:data:`ENDPOINTS` holds an :class:`~storeframes.catalog.Endpoint` per endpoint, built from
the values the service accepts (:data:`DEVICES`, :data:`CHANNELS`, :data:`METRICS`, the
limits) and the default policies; :func:`endpoint` finds one by name or path. A new
endpoint is one entry here.

Costs
-----
:data:`DEFAULT_COSTS` is plain data: a :class:`~storeframes.catalog.CostModel` per
endpoint, fitted to the service's documented examples (11 credits for one app's metadata,
41 for a month of change history and 18 for a week, 1001 for one benchmarks request, 210
with a maximum of 220 for a metrics request) and to the published price notes. The search
prices are not published and are estimates (``docs/explanation/service.md``, "Credits"). Prices move:
pass ``cost_model=`` to :class:`~storeframes.Client` to override any entry; the ``cost``
the service reports always wins over an estimate in the ledger. :data:`DEFAULT_FRESHNESS`
likewise: pass ``freshness=`` to override any entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, timedelta
from types import MappingProxyType

from ..errors import InvalidParameterError
from .policy import CostModel, Endpoint, Freshness, Param

__all__ = [
    "API_PREFIX",
    "BENCHMARK_TYPES",
    "CHANNELS",
    "DEFAULT_COSTS",
    "DEFAULT_FRESHNESS",
    "DEVICES",
    "EARLIEST_DAY",
    "ENDPOINTS",
    "IOS_DEVICES",
    "MAX_APPS_PER_REQUEST",
    "MAX_APP_ID_LENGTH",
    "MAX_KEYWORD_LENGTH",
    "METRICS",
    "METRIC_ALIASES",
    "endpoint",
]

API_PREFIX = "/api/public/store"
"""The path every endpoint's path follows: a base URL ends with it (``https://<host>/api/public/store``),
and the service echoes it in ``metadata.request.path``."""

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
