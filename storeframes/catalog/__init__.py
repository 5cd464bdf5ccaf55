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
published and are estimates (``docs/explanation/service.md``, "Credits"). Prices move: pass
``cost_model=`` to :class:`~storeframes.Client` to override any entry; the ``cost`` the
service reports always wins over an estimate in the ledger.

Where it lives: :mod:`~storeframes.catalog.policy` holds the types (:class:`Endpoint`,
:class:`Param`, :class:`CostModel`, :class:`Freshness`); :mod:`~storeframes.catalog.endpoints`
the declared entries (:data:`ENDPOINTS`, :data:`DEFAULT_COSTS`, :data:`DEFAULT_FRESHNESS`
and the values the service accepts); :mod:`~storeframes.catalog.validation` :func:`validate`
and the parsers of what users pass; :mod:`~storeframes.catalog.categories` the stores'
category names.
"""

from __future__ import annotations

from .categories import ANDROID_CATEGORIES, IOS_CATEGORIES
from .endpoints import (
    API_PREFIX,
    CHANNELS,
    DEFAULT_COSTS,
    DEFAULT_FRESHNESS,
    DEVICES,
    EARLIEST_DAY,
    ENDPOINTS,
    MAX_APP_ID_LENGTH,
    MAX_APPS_PER_REQUEST,
    MAX_KEYWORD_LENGTH,
    METRICS,
    endpoint,
)
from .endpoints import BENCHMARK_TYPES as BENCHMARK_TYPES
from .endpoints import IOS_DEVICES as IOS_DEVICES
from .endpoints import METRIC_ALIASES as METRIC_ALIASES
from .policy import CostModel, Endpoint, Freshness, Param
from .validation import (
    app_list,
    country_code,
    device_for,
    metric_list,
    parse_day,
    split_apps,
    texts,
    today_utc,
    validate,
)

__all__ = [
    "ANDROID_CATEGORIES",
    "API_PREFIX",
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
    "country_code",
    "device_for",
    "endpoint",
    "endpoint_rows",
    "metric_list",
    "parse_day",
    "split_apps",
    "texts",
    "today_utc",
    "validate",
]


def endpoint_rows() -> list[dict[str, object]]:
    """One row per endpoint, as ``storeframes endpoints`` lists them: name, path, parameters (``*``
    required), devices, most apps a request, price in credits."""
    return [
        {
            "endpoint": ep.name,
            "path": ep.path,
            "parameters": ", ".join(p.name + ("*" if p.required else "") for p in ep.params),
            "devices": ", ".join(ep.devices),
            "max_apps": ep.max_apps,
            "price": ", ".join(f"{k}={v}" for k, v in vars(ep.cost).items() if v)
            if not ep.cost.per_app_metric
            else ", ".join(f"{k}={v}/app" for k, v in ep.cost.per_app_metric.items()),
        }
        for ep in ENDPOINTS.values()
    ]
