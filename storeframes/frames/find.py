"""``find_apps``: a live store search, then the metadata of its first apps; and its plan
(:func:`plan_find_apps`), an upper bound as the apps are not known before the search runs."""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from .. import catalog
from .._tracebacks import user_facing
from ..analysis import STORE_CURRENCIES
from ..answers import RefreshOption
from ..catalog import MAX_APPS_PER_REQUEST, Endpoint
from ..engine import PLAN_SCHEMA, Plan, key
from ..errors import InvalidParameterError
from ..fetch.markets import markets
from ..fetch.pipeline import FRAMES
from .apps import AppFrames
from .market import MarketFrames

__all__ = ["FIND_APPS_COLUMNS", "MOST_FOUND_APPS", "AppFinder", "find_apps_search", "plan_find_apps"]

MOST_FOUND_APPS = 100
"""The most apps :meth:`FrameFunctions.find_apps` looks up (``top``): their metadata is paid per app."""

FIND_APPS_COLUMNS = (
    "rank",
    "app_id",
    "title",
    "subtitle",
    "developer_name",
    "rating_average",
    "price",
    "price_value",
    "currency",
    "categories",
    "icon_url",
)
"""The columns of :meth:`FrameFunctions.find_apps`: the search's rank, then the app's metadata (and its store's
currency)."""


class AppFinder(AppFrames, MarketFrames):
    """:meth:`find_apps`, a search frame and a metadata frame joined;
    :class:`~storeframes.frames.FrameFunctions` inherits it."""

    @user_facing
    def find_apps(
        self,
        term: str,
        *,
        country: str | None = None,
        countries: str | Sequence[str] | None = None,
        device: str = "iphone",
        top: int = 10,
        refresh: RefreshOption | None = None,
    ) -> pl.DataFrame:
        """The apps a live store search shows for ``term``, with their ids, titles and developers.

        One row per app among the ``top`` first results (at most 100), best rank first:
        ``rank``, ``app_id``, ``title``, ``subtitle``, ``developer_name``,
        ``rating_average``, ``price``, ``price_value``, ``currency``, ``categories`` and
        ``icon_url``, the ids ready for :meth:`metadata_frame`, :meth:`changes_frame` or
        :func:`storeframes.rank_history`. ``price`` is the store's text (empty for a free
        app); ``price_value`` the amount, 0 for a free app and null where the price is not
        known, so the two never look alike; ``currency`` the currency of the country's store
        (``usd``; null where it is not known: :data:`storeframes.analysis.STORE_CURRENCIES`).
        :func:`storeframes.analysis.with_prices` adds the price as words (``Free``, ``$2.99``).
        It costs one live search (:meth:`search_frame`, cached for an hour) and the
        metadata of those apps (:meth:`metadata_frame`, cached for the UTC day):
        ``sf.plan("find_apps", term=..., top=...)`` shows it first, its metadata part an
        upper bound (``top`` apps, none cached), as the apps are not known before the
        search runs. ``term`` is one search
        term (commas and all); ``top``, ``country`` and ``device`` are checked before
        anything is sent. An app the store lists but whose metadata is not available in the
        country keeps its rank with a null title. ``countries=`` (a list or a comma-separated
        text, not with ``country=``) searches each country, its searches sent together, and
        looks up each country's first apps there: a ``country`` column comes first, and the
        countries' rows follow in the order given.

        >>> sf.find_apps("meditation", top=5).select("rank", "app_id", "title")  # doctest: +SKIP
        >>> sf.find_apps("meditation", countries=["us", "de"], top=3).select("country", "rank", "title")  # doctest: +SKIP
        """
        _check_find(term, top)
        results = self.search_frame([term], country=country, countries=countries, device=device, refresh=refresh)
        found = [
            self._found(results.filter(pl.col("country") == market), market, device, top, refresh)
            for market in results["country"].unique(maintain_order=True).to_list()
        ]
        if countries is None:
            return (found[0] if found else _found_empty()).drop("country")
        return pl.concat(found) if found else _found_empty()

    def _found(
        self, results: pl.DataFrame, country: str, device: str, top: int, refresh: RefreshOption | None
    ) -> pl.DataFrame:
        """The ``top`` first apps of one country's ``results``, with their metadata there, a ``country`` column first."""
        ranked = results.sort("rank").unique("app_id", keep="first", maintain_order=True).head(top)
        ids = ranked["app_id"].to_list()
        metadata = (
            self.metadata_frame(ids, country=country, device=device, refresh=refresh)
            if ids
            else FRAMES["metadata_frame"].table.empty()
        )
        about = [c for c in FIND_APPS_COLUMNS if c not in ("rank", "app_id", "currency")]
        found = ranked.select("rank", "app_id").join(metadata.select("app_id", *about), on="app_id", how="left")
        currency = pl.lit(STORE_CURRENCIES.get(country), pl.String).alias("currency")
        return found.sort("rank").with_columns(currency).select(pl.lit(country).alias("country"), *FIND_APPS_COLUMNS)


def _found_empty() -> pl.DataFrame:
    """What :meth:`AppFinder.find_apps` gives where the search found nothing."""
    search, metadata = (FRAMES[name].table.empty().schema for name in ("search_frame", "metadata_frame"))
    columns = {"country": pl.String} | {
        c: search[c] if c in ("rank", "app_id") else pl.String if c == "currency" else metadata[c]
        for c in FIND_APPS_COLUMNS
    }
    return pl.DataFrame(schema=columns)


def _check_find(term: Any, top: Any) -> None:
    """Refuse a ``term`` or ``top`` of :meth:`FrameFunctions.find_apps` before anything is sent."""
    if not isinstance(term, str) or not term.strip():
        raise InvalidParameterError("term", term, "one search term as a non-empty text", endpoint="find_apps")
    if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= MOST_FOUND_APPS:
        raise InvalidParameterError(
            "top",
            top,
            f"a whole number from 1 to {MOST_FOUND_APPS}: how many of the first results to look up",
            endpoint="find_apps",
        )


def find_apps_search(params: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The arguments of the ``search_frame`` call :meth:`FrameFunctions.find_apps` with ``params`` makes
    first, and its own arguments, checked and with their defaults (what :func:`plan_find_apps` reads).

    >>> search, found = find_apps_search({"term": "notes", "top": 3})
    >>> search, found["top"], found["markets"]
    ({'keywords': ['notes'], 'country': None, 'countries': None, 'device': 'iphone'}, 3, ['us'])
    """
    signature = inspect.signature(AppFinder.find_apps)
    try:
        bound = signature.bind(None, **params)
    except TypeError as exc:
        raise InvalidParameterError("arguments", dict(params), f"those of find_apps{signature}: {exc}") from None
    bound.apply_defaults()
    found = {k: v for k, v in bound.arguments.items() if k not in ("self", "refresh")}
    _check_find(found["term"], found["top"])
    market = {"country": found["country"], "countries": found["countries"]}
    several = markets(market, "search", "find_apps")[1]
    default = next(str(p.default) for p in catalog.ENDPOINTS["search"].params if p.name == "country")
    found["markets"] = several.countries if several else [str(found["country"] or default).strip().lower()]
    return {"keywords": [found["term"]], **market, "device": found["device"]}, found


def plan_find_apps(search: Plan, metadata: Endpoint, found: Mapping[str, Any]) -> Plan:
    """What :meth:`FrameFunctions.find_apps` would send and cost, nothing sent: the ``search`` plan of its
    live search (sent or cached, as for ``search_frame``) and the ``metadata`` of ``top`` apps, 5 to a
    request, counted as sent: an upper bound, as the apps are not known before the search runs (those
    already cached cost nothing). ``found`` are its arguments as :func:`find_apps_search` returns them.

    >>> plan = sf.plan("find_apps", term="notes", top=3)  # doctest: +SKIP
    """
    device, top = found["device"], found["top"]
    rows = []
    for country in found["markets"]:
        where = {"country": country, "device": device.strip().lower()}
        for first in range(0, top, MAX_APPS_PER_REQUEST):
            last = min(first + MAX_APPS_PER_REQUEST, top)
            shown = {"apps": f"results {first + 1}-{last} of the search", **where}
            request = {"apps": ",".join(["0"] * (last - first)), **where}
            rows.append(
                {
                    "endpoint": metadata.name,
                    "params": key(shown),
                    "source": "send",
                    "cells": last - first,
                    "credits": metadata.estimate(request),
                }
            )
    requests = pl.DataFrame(rows, schema=PLAN_SCHEMA, orient="row")
    return Plan(
        endpoint="find_apps",
        requests=pl.concat([search.requests, requests]),
        cells=search.cells + top * len(found["markets"]),
        cached_cells=search.cached_cells,
    )
