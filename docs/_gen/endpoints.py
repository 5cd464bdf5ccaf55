"""``reference/endpoints.md``: the service's endpoints from :mod:`storeframes.catalog`: path, parameters,
devices, limits, price model and freshness.

>>> "/apps/metadata.json" in page()
True
"""

from __future__ import annotations

from datetime import timedelta

from storeframes import catalog
from storeframes.catalog import CostModel, Endpoint, Freshness

from .markdown import code, table


def price(cost: CostModel) -> str:
    """A cost model in words: the terms that are not zero.

    >>> price(CostModel(base=1, per_app=10))
    '1 + 10 per app'
    """
    terms = []
    if cost.base:
        terms.append(str(cost.base))
    for value, unit in ((cost.per_app, "per app"), (cost.per_day, "per day"), (cost.per_app_day, "per app and day")):
        if value:
            terms.append(f"{value} {unit}")
    if cost.per_app_metric:
        terms.append("per app: " + ", ".join(f"{value} for {metric}" for metric, value in cost.per_app_metric.items()))
    return " + ".join(terms) or "0"


def _freshness(ep: Endpoint) -> str:
    policy: Freshness = ep.freshness
    if ep.current_only:
        current = policy.current
        return "until the end of the UTC day it was fetched" if current == "utc_day" else f"for {_span(current)}"
    return (
        f"a day at least {policy.settle_days} days old when fetched: final, never fetched again; "
        f"a more recent day: {_span(policy.recent)}"
    )


def _span(value: object) -> str:
    if isinstance(value, timedelta):
        hours = value.total_seconds() / 3600
        return f"{hours:g} hours" if hours != 1 else "1 hour"
    return str(value)


def _param(p: catalog.Param) -> tuple[str, str, str, str]:
    return (
        code(p.name),
        "yes" if p.required else "no",
        code(p.default) if p.default is not None else "",
        ", ".join(code(c) for c in p.choices) if p.choices else p.kind,
    )


def page() -> str:
    """The page's Markdown."""
    lines = [
        "# Endpoints and prices",
        "",
        f"The service's endpoints as storeframes' catalog declares them (paths under `{catalog.API_PREFIX}`). "
        "A price is the most credits one request can cost, fitted to the service's documented examples; the cost "
        "the service reports always wins over this estimate in the ledger. Prices move: pass `cost_model=` to "
        "`Client` to override one. `storeframes endpoints` prints the same list.",
        "",
        table(
            ("endpoint", "path", "devices", "most apps a request", "price (credits)"),
            [
                (code(ep.name), code(ep.path), ", ".join(ep.devices), ep.max_apps or "", price(ep.cost))
                for ep in catalog.ENDPOINTS.values()
            ],
        ),
        "",
        f"A request carries at most {catalog.MAX_APPS_PER_REQUEST} apps (more are split across requests); a "
        f"keyword longer than {catalog.MAX_KEYWORD_LENGTH} characters, an app id longer than "
        f"{catalog.MAX_APP_ID_LENGTH}, and a day before "
        f"{catalog.EARLIEST_DAY} (before either store opened), are refused before anything is sent.",
        "",
    ]
    for ep in catalog.ENDPOINTS.values():
        lines += [
            f"## {ep.name}",
            "",
            f"{ep.summary[:1].upper()}{ep.summary[1:]}: `GET {catalog.API_PREFIX}{ep.path}`.",
            "",
        ]
        lines += [table(("parameter", "required", "default", "values"), [_param(p) for p in ep.params]), ""]
        facts = [
            ("devices", ", ".join(ep.devices)),
            ("price (credits)", price(ep.cost)),
            ("most apps a request", ep.max_apps or "—"),
            ("cached answers stay fresh", _freshness(ep)),
        ]
        if ep.result_cap:
            facts.append(("most results", ", ".join(f"{v} ({k})" for k, v in ep.result_cap.items())))
        lines += [table(("", ""), facts), ""]
    lines += [
        "## Values the parameters take",
        "",
        table(
            ("kind", "values"),
            [
                ("device", ", ".join(code(d) for d in catalog.DEVICES)),
                ("metric", ", ".join(code(m) for m in catalog.METRICS)),
                ("metric aliases", ", ".join(f"{code(k)} → {code(v)}" for k, v in catalog.METRIC_ALIASES.items())),
                ("benchmark type", ", ".join(code(t) for t in catalog.BENCHMARK_TYPES)),
                *(
                    (f"channel ({device})", ", ".join(code(c) for c in channels))
                    for device, channels in catalog.CHANNELS.items()
                ),
                ("country", "an ISO 3166-1 alpha-2 code (`storeframes.codes.COUNTRIES`)"),
                ("language", "an ISO 639-1 code or one of the service's own (`storeframes.codes`)"),
            ],
        ),
        "",
    ]
    return "\n".join(lines)
