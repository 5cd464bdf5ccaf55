"""The forms storeframes knows the service to answer in, endpoint by endpoint, as data.

Each endpoint's ``result`` is described once (:data:`RESULTS`), with every form
``docs/explanation/service.md`` lists under "Beyond the reference" as a named alternative: the points of
the dialect (``categories`` or ``genres``, ``size`` as a number or an object, ``power`` or
``app-power``, the live search's ``value``, ``apps`` or ``pairs``, the history by date or as a
list, the search answers under the keyword or not). The envelope (:data:`ENVELOPE`) and the
error bodies (:func:`error_form`) are described here too. A member is *expected* on the stores
that document it (or when its metric was asked for); any other is optional.

What the frame functions read is decided by the flatteners; this description is what the
conformance kit compares a real answer with, and the tests hold the two together: every
answer of the sandbox, in each of its dialects, matches it with no difference.

>>> from storeframes.conformance.shapes import Context, compare
>>> found = compare({"1": {"power": {"value": 61.5, "date": "2026-11-19"}}}, RESULTS["metrics"], Context("ios", frozenset({"app-power"})))
>>> found.forms, found.differences
({'power': {'power'}}, [])
"""

from __future__ import annotations

from typing import Any

from .shapes import (
    ANY,
    BOOL,
    EVERYWHERE,
    ID,
    INT,
    NOWHERE,
    NUM,
    TEXT,
    Arr,
    Field,
    Keyed,
    Node,
    Obj,
    OneOf,
    UnderKeyword,
)

__all__ = ["DIALECT_POINTS", "ENVELOPE", "ERROR_FORMS", "RESULTS", "envelope_for", "error_form", "store_of"]

IOS = frozenset({"ios"})
ANDROID = frozenset({"android"})
_DATE = r"\d{4}-\d{2}-\d{2}"


def store_of(device: str) -> str:
    """The store of a device: ``android``, else ``ios`` (iphone and ipad)."""
    return "android" if device == "android" else "ios"


def _f(
    node: Node, on: frozenset[str] = EVERYWHERE, *, aliases: tuple[str, ...] = (), point: str | None = None
) -> Field:
    return Field(node, on, aliases, point)


def _optional(node: Node) -> Field:
    return Field(node, NOWHERE)


def _by_device(item: Node, point: str) -> Node:
    """Screenshots and videos: an object keyed by device, or a flat list."""
    return OneOf(point, (("by_device", Keyed("<device>", Arr(item))), ("list", Arr(item))))


_SHOT = OneOf(
    None,
    (
        ("url", TEXT),
        (
            "object",
            Obj(
                {
                    "id": _optional(ID),
                    "hash": _optional(TEXT),
                    "filename": _optional(TEXT),
                    "path_component": _optional(TEXT),
                    "url": _f(TEXT),
                }
            ),
        ),
    ),
)
_VIDEO = OneOf(
    None,
    (
        ("url", TEXT),
        (
            "object",
            Obj(
                {
                    "uri": Field(TEXT, EVERYWHERE, ("url",)),
                    "audio": _optional(TEXT),
                    "width": _optional(INT),
                    "height": _optional(INT),
                    "codecs": _optional(TEXT),
                }
            ),
        ),
    ),
)
_CONTROLLER = Obj({"required": _f(BOOL), "supported": _f(BOOL), "requirement_label": _f(TEXT)})
_VERSION = Obj(
    {
        "version": _f(TEXT),
        "release_notes": _f(TEXT),
        "has_game_center": _f(BOOL, IOS),
        "game_controller_information": _f(_CONTROLLER, IOS),
        "release_date": _f(TEXT),
    }
)
_PURCHASE = Obj(
    {
        "id": _f(ID),
        "recurring_subscription_period": _f(TEXT),
        "is_family_shareable": _f(BOOL),
        "is_merchandise_enabled": _f(BOOL),
        "is_subscription": _f(BOOL),
        "is_merchandise_visible": _f(BOOL),
        "subscription_family_name": _f(TEXT),
        "artwork": _optional(ANY),
        "rank": _f(INT),
        "name": _f(TEXT),
        "description": _f(TEXT),
        "price": _f(Obj({"value": _f(OneOf(None, (("text", TEXT), ("number", NUM)))), "currency": _f(TEXT)})),
        "discounts": _optional(ANY),
    }
)
_ICON = OneOf(None, (("url", TEXT), ("object", Obj({"id": _optional(TEXT), "url": _f(TEXT)}))))
_SIZE = OneOf("size", (("number", INT), ("object", Obj({"current": _f(Obj({"data": _f(INT)}))}))))
_METADATA = Obj(
    {
        "title": _f(TEXT),
        "subtitle": _f(TEXT, IOS),
        "promotional_text": _f(TEXT, IOS),
        "description": _f(TEXT, IOS),
        "short_description": _f(TEXT, ANDROID),
        "long_description": _f(TEXT, ANDROID),
        "id": _optional(ID),
        "categories": _f(Arr(ID), aliases=("genres",), point="categories"),
        "icon": _f(_ICON),
        "screenshots": _f(_by_device(_SHOT, "screenshots")),
        "videos": _f(_by_device(_VIDEO, "videos")),
        "size": _f(_SIZE),
        "rating": _f(Obj({"average": _f(NUM)})),
        "developer": _f(
            Obj({"id": _f(ID), "name": _f(TEXT), "email": _f(TEXT, ANDROID), "website": _f(TEXT, ANDROID)})
        ),
        "price": _f(TEXT),
        "versions": _f(Arr(_VERSION)),
        "release_date": _f(TEXT),
        "released_at": _optional(ANY),
        "customers_also_bought": _f(Arr(ID), IOS),
        "similar_apps": _f(Arr(ID), ANDROID),
        "dna": _f(
            Obj({"class_id": _f(INT), "class_label": _f(TEXT), "subclass_id": _f(INT), "subclass_label": _f(TEXT)})
        ),
        "features": _f(Obj({"game_center": _f(BOOL), "passbook": _f(BOOL), "in_apps": _f(BOOL)}), IOS),
        "in_app_purchases": _f(Arr(_PURCHASE), IOS),
        "permissions": _f(Arr(TEXT), ANDROID),
    }
)
_CHANGE = Obj(
    {
        "target": _f(TEXT),
        "old_value": _f(ANY),
        "new_value": _f(ANY),
        "old_release_notes": _optional(TEXT),
        "new_release_notes": _optional(TEXT),
        "version": _f(TEXT),
        "is_ab_test": _f(BOOL),
        "date": _f(TEXT),
    }
)
_STARS = {star: _f(INT) for star in ("1", "2", "3", "4", "5")}


def _asked(metric: str) -> frozenset[str]:
    return frozenset({f"asked:{metric}"})


_METRICS = Obj(
    {
        "downloads": _f(Obj({"value": _f(INT), "precision": _f(INT), "date": _f(TEXT)}), _asked("downloads")),
        "revenues": _f(
            Obj({"value": _f(NUM), "precision": _f(INT), "date": _f(TEXT), "currency": _f(TEXT)}), _asked("revenues")
        ),
        "power": _f(
            Obj({"value": _f(NUM), "date": _f(TEXT)}), _asked("app-power"), aliases=("app-power",), point="power"
        ),
        "ratings": _f(
            Obj(
                {"value": _f(INT), "breakdown": _f(Obj({**_STARS, "total": _f(INT), "avg": _f(NUM)})), "date": _f(TEXT)}
            ),
            _asked("ratings"),
        ),
        "daily-ratings": _f(
            Obj({"value": _f(INT), "breakdown": _f(Obj(_STARS)), "date": _f(TEXT)}), _asked("daily-ratings")
        ),
    }
)
_BENCHMARK = Obj(
    {
        "category": _f(ID),
        "category_name": _f(TEXT),
        "impressions_to_page_views": _f(NUM),
        "page_views_to_installs": _f(NUM),
        "impressions_to_installs": _f(NUM),
        "number_of_apps": _f(NUM),
    }
)
_PAIR = Obj({"application_id": _f(ID), "is_ad": _f(BOOL)})
_APP = Obj({"id": _f(ID), "position": _optional(INT)})
_LIVE = OneOf(
    "search",
    (
        ("value", Obj({"date": _f(TEXT), "value": _f(Arr(ID))})),
        ("apps", Obj({"date": _f(TEXT), "apps": _f(Arr(_APP))})),
        ("pairs", Arr(_PAIR)),
    ),
)
_DAY = OneOf(None, (("ids", Arr(ID)), ("apps", Arr(_APP)), ("pairs", Arr(_PAIR))))
_HISTORY = OneOf(
    "history",
    (
        ("by_date", Keyed("<date>", _DAY, _DATE)),
        ("list", Arr(Obj({"date": _f(TEXT), "value": _f(_DAY)}))),
    ),
)

RESULTS: dict[str, Node] = {
    "metadata": Keyed("<app_id>", Obj({"metadata": _f(_METADATA)})),
    "changes": Keyed("<app_id>", Obj({"changes": _f(Arr(_CHANGE))})),
    "metrics": Keyed("<app_id>", _METRICS),
    "benchmarks": Obj({"category_benchmarks": _f(Arr(_BENCHMARK))}),
    "search": UnderKeyword(_LIVE),
    "search_ads": UnderKeyword(OneOf("search_ads", (("pairs", Arr(_PAIR)),))),
    "search_history": UnderKeyword(_HISTORY),
}
"""The known forms of each endpoint's ``result``."""


def envelope_for(endpoint: str) -> Node:
    """The form of a whole successful answer of ``endpoint``: ``result`` and ``metadata``."""
    request = Obj(
        {
            "path": _f(TEXT),
            "params": _f(Obj({}, open=True)),
            "cost": _f(INT),
            "max_credit_cost": _f(INT),
            "status": _f(INT),
        }
    )
    return Obj({"result": _f(RESULTS[endpoint]), "metadata": _f(Obj({"request": _f(request), "response": _f(ANY)}))})


ENVELOPE = {name: envelope_for(name) for name in RESULTS}
"""The known form of each endpoint's whole answer."""

ERROR_FORMS = ("error", "metadata.response", "top_level")
"""Where storeframes finds an error body's ``code`` and ``message``, in the order it looks."""

_ERROR_BODY = Obj(
    {
        "error": _f(Obj({"code": _f(TEXT), "message": _f(TEXT)})),
        "metadata": _optional(
            Obj(
                {
                    "request": _optional(Obj({}, open=True)),
                    "response": _optional(ANY),
                }
            )
        ),
    }
)


def error_form(body: Any) -> tuple[str | None, Node]:
    """Where an error body holds its code (one of :data:`ERROR_FORMS`, or None), and its form to compare with."""
    if type(body) is not dict:
        return None, _ERROR_BODY
    if type(body.get("error")) is dict:
        return "error", _ERROR_BODY
    meta = body.get("metadata")
    response = meta.get("response") if type(meta) is dict else None
    if type(response) is dict and (
        response.get("code") or response.get("message") or type(response.get("error")) is dict
    ):
        return "metadata.response", Obj({}, open=True)
    if body.get("code") or body.get("message"):
        return "top_level", Obj({}, open=True)
    return None, _ERROR_BODY


DIALECT_POINTS = ("search", "history", "keyword_level", "power", "categories", "size")
"""The points of the dialect the sandbox can speak (``sf.sandbox.Dialect``'s fields)."""
