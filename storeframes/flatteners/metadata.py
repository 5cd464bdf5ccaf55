"""Flatteners of the metadata answer (``result.<app_id>.metadata``): pure functions, no I/O.

Every ``flatten_*`` function takes one answer's ``result`` and the :class:`Keys` of its
request, and returns a frame of its table's declared schema (see :mod:`storeframes.schemas`), one
schema for iphone, ipad and android. Every form the service is known to send is
accepted (``docs/explanation/service.md``, "Beyond the reference"):
``genres`` for ``categories``; ``size`` as an integer or ``{"current": {"data": n}}``;
screenshots and videos as an object keyed by device or as a flat list (of URLs or of
items), on either store.

Each ``batch_*`` function flattens several answers in one walk, ``[(result, keys), ...]``,
and returns the frame with the number of rows each answer gave (in order), so the frame
functions pay the fixed cost of building typed columns once per call, not once per answer.

>>> result = {"1": {"metadata": {"title": "Notes", "versions": [{"version": "2.0"}, {"version": "1.0"}]}}}
>>> flatten_versions(result, Keys(country="us"))["version"].to_list()
['2.0', '1.0']
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from decimal import Decimal
from typing import Any

import polars as pl

from ..schemas import (
    IN_APP_PURCHASES,
    METADATA,
    PERMISSIONS,
    RELATED_APPS,
    SCREENSHOTS,
    VERSIONS,
    VIDEOS,
    TableSchema,
)
from ._columns import (
    KEY_COLUMNS,
    NO_KEYS,
    Answers,
    Flat,
    Keys,
    Walk,
    as_json,
    build,
    decimal,
    html_to_text,
    ident,
    note_unknown,
    obj,
    seq,
    shape_error,
)

__all__ = [
    "batch_in_app_purchases",
    "batch_metadata",
    "batch_permissions",
    "batch_related_apps",
    "batch_screenshots",
    "batch_versions",
    "batch_videos",
    "flatten_in_app_purchases",
    "flatten_metadata",
    "flatten_permissions",
    "flatten_related_apps",
    "flatten_screenshots",
    "flatten_versions",
    "flatten_videos",
]

_EP = "metadata"

_SHARED_FIELDS = {
    "title",
    "id",
    "categories",
    "icon",
    "screenshots",
    "videos",
    "size",
    "rating",
    "developer",
    "price",
    "versions",
    "release_date",
    "dna",
}
_IOS_FIELDS = _SHARED_FIELDS | {
    "subtitle",
    "promotional_text",
    "description",
    "customers_also_bought",
    "features",
    "in_app_purchases",
}
_ANDROID_FIELDS = _SHARED_FIELDS | {
    "short_description",
    "long_description",
    "released_at",
    "similar_apps",
    "permissions",
}
_METADATA_FIELDS = frozenset(_IOS_FIELDS | _ANDROID_FIELDS | {"genres"})
_DEVELOPER_FIELDS = frozenset({"id", "name", "email", "website"})
_DNA_FIELDS = frozenset({"class_id", "class_label", "subclass_id", "subclass_label"})
_FEATURE_FIELDS = frozenset({"game_center", "passbook", "in_apps"})
_VERSION_FIELDS = frozenset(
    {"version", "release_notes", "has_game_center", "game_controller_information", "release_date"}
)
_CONTROLLER_FIELDS = frozenset({"required", "supported", "requirement_label"})
_PURCHASE_FIELDS = frozenset(
    {
        "id",
        "recurring_subscription_period",
        "is_family_shareable",
        "is_merchandise_enabled",
        "is_subscription",
        "is_merchandise_visible",
        "subscription_family_name",
        "artwork",
        "rank",
        "name",
        "description",
        "price",
        "discounts",
    }
)
_RELATIONS = ("customers_also_bought", "similar_apps")


def _metadata_of(app_id: str, resource: dict[str, Any]) -> dict[str, Any]:
    return obj(resource.get("metadata"), f"result.{app_id}.metadata", _EP)


def _items(app_ids: list[str], positions: list[int], member: str) -> Any:
    """``where`` for item tables: ``result.<app>.metadata.<member>[i].<field>``."""
    return lambda i, field: f"result.{app_ids[i]}.metadata.{member}[{positions[i] - 1}].{field}"


# -- one row per app ----------------------------------------------------------------------

_METADATA_SOURCES = {
    "developer_id": "developer.id",
    "developer_name": "developer.name",
    "developer_email": "developer.email",
    "developer_website": "developer.website",
    "size_bytes": "size",
    "rating_average": "rating.average",
    "version": "versions[0].version",
    "version_release_date": "versions[0].release_date",
    "dna_class_id": "dna.class_id",
    "dna_class_label": "dna.class_label",
    "dna_subclass_id": "dna.subclass_id",
    "dna_subclass_label": "dna.subclass_label",
    "feature_game_center": "features.game_center",
    "feature_passbook": "features.passbook",
    "feature_in_apps": "features.in_apps",
    "icon_url": "icon",
    "categories": "categories",
}
_PLAIN = ("title", "subtitle", "promotional_text", "description", "short_description", "long_description", "price")


def _size(value: Any, path: str) -> Any:
    """``size`` as an integer or ``{"current": {"data": n}}``."""
    if type(value) is dict:
        data = obj(value.get("current"), f"{path}.current", _EP).get("data")
        if data is not None and type(data) is not int:
            raise shape_error("an integer", data, f"{path}.current.data", _EP)
        return data
    return value


def _icon(value: Any) -> Any:
    """``icon`` as a URL, or as an object with ``url`` (the form change records use)."""
    return value.get("url") if type(value) is dict else value


def _categories(meta: dict[str, Any], path: str) -> list[str] | None:
    name = "categories" if "categories" in meta else "genres"
    codes = meta.get(name)
    if codes is None:
        return None
    texts = [ident(c) for c in seq(codes, f"{path}.{name}", _EP)]
    for i, text in enumerate(texts):
        if type(text) is not str:
            raise shape_error("a category code (text or integer)", text, f"{path}.{name}[{i}]", _EP)
    return texts


def _price_value(price: Any) -> Decimal | None:
    """The app's price as a decimal amount: 0 for a free app, None when the price is not known.

    The store sends a free app's price as an empty text (the sandbox too); ``"Free"`` and
    ``"0"`` are read as free as well. An answer without a price (absent or null), or with a
    text that is not a plain number (``"$2.99"``), gives None: ``price`` keeps the text.

    >>> _price_value(""), _price_value("4.99"), _price_value(None), _price_value("$2.99")
    (Decimal('0.0000'), Decimal('4.9900'), None, None)
    """
    if type(price) is str and price.strip().lower() in ("", "free"):
        return decimal("0")
    return decimal(price)


def _count(value: Any, path: str) -> int:
    """Items of a list, or of the lists of an object keyed by device (screenshots, videos)."""
    groups = _by_device(value, path, None)
    return sum(len(items) for _, _, items in groups)


def batch_metadata(answers: Answers) -> Flat:
    """One row per app: every scalar of the metadata, both stores in one schema (:data:`~storeframes.schemas.METADATA`)."""
    cols: dict[str, list[Any]] = {name: [] for name in METADATA.names if name not in KEY_COLUMNS}
    unknown: set[str] = set()
    walk = Walk(answers, _EP)
    for app_id, resource in walk.apps(cols["app_id"]):
        path = f"result.{app_id}.metadata"
        meta = _metadata_of(app_id, resource)
        if not meta.keys() <= _METADATA_FIELDS:
            unknown |= meta.keys() - _METADATA_FIELDS
        developer = obj(meta.get("developer"), f"{path}.developer", _EP)
        dna = obj(meta.get("dna"), f"{path}.dna", _EP)
        features = obj(meta.get("features"), f"{path}.features", _EP)
        for part, known, name in (
            (developer, _DEVELOPER_FIELDS, "developer"),
            (dna, _DNA_FIELDS, "dna"),
            (features, _FEATURE_FIELDS, "features"),
        ):
            if not part.keys() <= known:
                unknown |= {f"{name}.{k}" for k in part.keys() - known}
        versions = seq(meta.get("versions"), f"{path}.versions", _EP)
        newest = versions[0] if versions and type(versions[0]) is dict else {}
        long_description = meta.get("long_description")
        cols["app_id"].append(app_id)
        for name in _PLAIN:
            cols[name].append(meta.get(name))
        cols["long_description_text"].append(html_to_text(long_description) if type(long_description) is str else None)
        cols["developer_id"].append(developer.get("id"))
        cols["developer_name"].append(developer.get("name"))
        cols["developer_email"].append(developer.get("email"))
        cols["developer_website"].append(developer.get("website"))
        cols["price_value"].append(_price_value(meta.get("price")))
        cols["size_bytes"].append(_size(meta.get("size"), f"{path}.size"))
        cols["rating_average"].append(obj(meta.get("rating"), f"{path}.rating", _EP).get("average"))
        cols["release_date"].append(meta.get("release_date"))
        cols["released_at"].append(as_json(meta.get("released_at")))
        cols["version"].append(newest.get("version"))
        cols["version_release_date"].append(newest.get("release_date"))
        cols["dna_class_id"].append(dna.get("class_id"))
        cols["dna_class_label"].append(dna.get("class_label"))
        cols["dna_subclass_id"].append(dna.get("subclass_id"))
        cols["dna_subclass_label"].append(dna.get("subclass_label"))
        cols["feature_game_center"].append(features.get("game_center"))
        cols["feature_passbook"].append(features.get("passbook"))
        cols["feature_in_apps"].append(features.get("in_apps"))
        cols["icon_url"].append(_icon(meta.get("icon")))
        cols["categories"].append(_categories(meta, path))
        cols["versions_count"].append(len(versions))
        cols["screenshots_count"].append(_count(meta.get("screenshots"), f"{path}.screenshots"))
        cols["videos_count"].append(_count(meta.get("videos"), f"{path}.videos"))
        cols["in_app_purchases_count"].append(len(seq(meta.get("in_app_purchases"), f"{path}.in_app_purchases", _EP)))
    if unknown:
        note_unknown("result.<app_id>.metadata", unknown)
    app_ids = cols["app_id"]
    frame = build(
        METADATA,
        cols,
        walk.keys,
        walk.counts,
        lambda i, column: f"result.{app_ids[i]}.metadata.{_METADATA_SOURCES.get(column, column)}",
        endpoint=_EP,
        ids=("developer_id",),
    )
    return frame, walk.counts


# -- one row per version -----------------------------------------------------------------

_EMPTY: dict[str, Any] = {}
_VERSION_FIELDS_TO_COLUMNS = {
    "version": "version",
    "release_date": "release_date",
    "release_notes": "release_notes",
    "has_game_center": "has_game_center",
}
_CONTROLLER_TO_COLUMNS = {
    "controller_required": "required",
    "controller_supported": "supported",
    "controller_requirement_label": "requirement_label",
}
_VERSION_SOURCES = {
    "controller_required": "game_controller_information.required",
    "controller_supported": "game_controller_information.supported",
    "controller_requirement_label": "game_controller_information.requirement_label",
}


_NOTHING: frozenset[str] = frozenset()


def _take(
    items: list[Any],
    fields: Mapping[str, str],
    cols: Mapping[str, list[Any]],
    known: frozenset[str],
    path: str,
    what: str,
    *,
    suffix: str = "",
    bare: str | None = None,
) -> Set[str]:
    """Append each item's ``fields`` (column -> member) to ``cols``; return the members not ``known``.

    Items are objects; with ``bare``, an item may also be text, which fills that column
    alone. Anything else raises with the item's path, ``{path}[n]{suffix}``.
    """
    unknown: set[str] | None = None
    for item in items:
        if type(item) is not dict:
            break
        if not item.keys() <= known:
            unknown = (unknown or set()) | (item.keys() - known)
    else:
        for column, member in fields.items():
            cols[column].extend([item.get(member) for item in items])
        return unknown or _NOTHING
    unknown = set()
    for n, item in enumerate(items):
        if type(item) is dict:
            unknown |= _take([item], fields, cols, known, path, what)
        elif bare is not None and type(item) is str:
            for column in fields:
                cols[column].append(item if column == bare else None)
        else:
            raise shape_error(what, item, f"{path}[{n}]{suffix}", _EP)
    return unknown


def batch_versions(answers: Answers) -> Flat:
    """One row per app and version, newest first (:data:`~storeframes.schemas.VERSIONS`)."""
    cols: dict[str, list[Any]] = {name: [] for name in VERSIONS.names if name not in KEY_COLUMNS}
    app_ids, positions = cols["app_id"], cols["position"]
    unknown: set[str] = set()
    walk = Walk(answers, _EP)
    for app_id, resource in walk.apps(app_ids):
        path = f"result.{app_id}.metadata.versions"
        items = seq(_metadata_of(app_id, resource).get("versions"), path, _EP)
        if not items:
            continue
        unknown |= _take(items, _VERSION_FIELDS_TO_COLUMNS, cols, _VERSION_FIELDS, path, "an object")
        controllers = [item.get("game_controller_information") for item in items]
        controllers = [_EMPTY if c is None else c for c in controllers]
        suffix = ".game_controller_information"
        extra = _take(controllers, _CONTROLLER_TO_COLUMNS, cols, _CONTROLLER_FIELDS, path, "an object", suffix=suffix)
        unknown |= {f"game_controller_information.{k}" for k in extra}
        app_ids.extend([app_id] * len(items))
        positions.extend(range(1, len(items) + 1))
    if unknown:
        note_unknown("result.<app_id>.metadata.versions[]", unknown)
    where = _items(app_ids, positions, "versions")
    where_field = lambda i, c: where(i, _VERSION_SOURCES.get(c, c))  # noqa: E731
    return build(VERSIONS, cols, walk.keys, walk.counts, where_field, endpoint=_EP), walk.counts


# -- screenshots and videos: lists per device key ------------------------------------------


def _by_device(value: Any, path: str, device: str | None) -> list[tuple[str, str, list[Any]]]:
    """``(device_key, path, items)`` from a device-keyed object or a flat list."""
    if value is None:
        return []
    if type(value) is list:
        return [(device or "", path, value)]
    if type(value) is dict:
        return [(str(key), f"{path}.{key}", seq(items, f"{path}.{key}", _EP)) for key, items in value.items()]
    raise shape_error("an object keyed by device or an array", value, path, _EP)


_SCREENSHOT_COLUMNS = {
    "url": "url",
    "screenshot_id": "id",
    "hash": "hash",
    "filename": "filename",
    "path_component": "path_component",
}
_VIDEO_COLUMNS = {"url": "uri", "audio": "audio", "width": "width", "height": "height", "codecs": "codecs"}


def _by_device_table(answers: Answers, member: str, table: TableSchema, fields: Mapping[str, str]) -> Flat:
    """One row per item of ``member`` (screenshots or videos), by device key."""
    cols: dict[str, list[Any]] = {name: [] for name in table.names if name not in KEY_COLUMNS}
    app_ids, device_key, positions = cols["app_id"], cols["device_key"], cols["position"]
    bases: list[str] = []
    known = frozenset(fields.values()) | ({"url"} if member == "videos" else set())
    unknown: set[str] = set()
    walk = Walk(answers, _EP)
    for app_id, resource in walk.apps(app_ids):
        base = f"result.{app_id}.metadata.{member}"
        groups = _by_device(_metadata_of(app_id, resource).get(member), base, walk.current.device)
        for key, path, items in groups:
            if member == "videos" and items and type(items[0]) is dict and "uri" not in items[0]:
                items = [{**item, "uri": item.get("url")} if type(item) is dict else item for item in items]
            count = len(items)
            if not count:
                continue
            unknown |= _take(items, fields, cols, known, path, "an object or a URL", bare="url")
            app_ids.extend([app_id] * count)
            device_key.extend([key] * count)
            positions.extend(range(1, count + 1))
            bases.extend([path] * count)
    if unknown:
        note_unknown(f"result.<app_id>.metadata.{member}[]", unknown)
    frame = build(
        table,
        cols,
        walk.keys,
        walk.counts,
        lambda i, c: f"{bases[i]}[{positions[i] - 1}].{fields.get(c, c)}",
        endpoint=_EP,
        ids=("screenshot_id",),
    )
    return frame, walk.counts


def batch_screenshots(answers: Answers) -> Flat:
    """One row per screenshot and device key (:data:`~storeframes.schemas.SCREENSHOTS`).

    Items may be objects (id, hash, filename, path_component, url) or bare URLs.
    """
    return _by_device_table(answers, "screenshots", SCREENSHOTS, _SCREENSHOT_COLUMNS)


def batch_videos(answers: Answers) -> Flat:
    """One row per preview video and device key (:data:`~storeframes.schemas.VIDEOS`).

    Items may be objects (uri or url, audio, width, height, codecs) or bare URLs (android).
    """
    return _by_device_table(answers, "videos", VIDEOS, _VIDEO_COLUMNS)


# -- in-app purchases ------------------------------------------------------------------------

_PURCHASE_FLAGS = ("is_subscription", "is_family_shareable", "is_merchandise_enabled", "is_merchandise_visible")
_PURCHASE_TEXT = ("name", "description", "recurring_subscription_period", "subscription_family_name")


def batch_in_app_purchases(answers: Answers) -> Flat:
    """One row per in-app purchase, in the answer's order (:data:`~storeframes.schemas.IN_APP_PURCHASES`).

    ``price`` is the decimal amount of ``price.value``; ``artwork`` and ``discounts``
    (whose shape the service does not document) are kept as JSON text.
    """
    cols: dict[str, list[Any]] = {
        name: [] for name in ("app_id", "rank", "purchase_id", "price", "currency", "artwork", "discounts")
    }
    cols |= {name: [] for name in _PURCHASE_FLAGS + _PURCHASE_TEXT}
    positions: list[int] = []
    unknown: set[str] = set()
    walk = Walk(answers, _EP)
    for app_id, resource in walk.apps(positions):
        path = f"result.{app_id}.metadata.in_app_purchases"
        for n, item in enumerate(seq(_metadata_of(app_id, resource).get("in_app_purchases"), path, _EP)):
            if type(item) is not dict:
                raise shape_error("an in-app purchase object", item, f"{path}[{n}]", _EP)
            if not item.keys() <= _PURCHASE_FIELDS:
                unknown |= item.keys() - _PURCHASE_FIELDS
            price = obj(item.get("price"), f"{path}[{n}].price", _EP)
            amount = price.get("value")
            value = decimal(amount)
            if value is None and amount is not None:
                raise shape_error("a decimal amount", amount, f"{path}[{n}].price.value", _EP)
            positions.append(n + 1)
            cols["app_id"].append(app_id)
            cols["rank"].append(item.get("rank"))
            cols["purchase_id"].append(item.get("id"))
            cols["price"].append(value)
            cols["currency"].append(price.get("currency"))
            cols["artwork"].append(as_json(item.get("artwork")))
            cols["discounts"].append(as_json(item.get("discounts")))
            for name in _PURCHASE_FLAGS + _PURCHASE_TEXT:
                cols[name].append(item.get(name))
    if unknown:
        note_unknown("result.<app_id>.metadata.in_app_purchases[]", unknown)
    where = _items(cols["app_id"], positions, "in_app_purchases")
    fields = {"purchase_id": "id", "currency": "price.currency"}
    where_field = lambda i, c: where(i, fields.get(c, c))  # noqa: E731
    return build(IN_APP_PURCHASES, cols, walk.keys, walk.counts, where_field, endpoint=_EP), walk.counts


# -- lists of ids and identifiers ------------------------------------------------------------


def batch_related_apps(answers: Answers) -> Flat:
    """One row per related app: customers_also_bought and similar_apps (:data:`~storeframes.schemas.RELATED_APPS`)."""
    app_ids: list[str] = []
    relation: list[str] = []
    positions: list[int] = []
    related: list[Any] = []
    walk = Walk(answers, _EP)
    for app_id, resource in walk.apps(app_ids):
        meta = _metadata_of(app_id, resource)
        for name in _RELATIONS:
            ids = seq(meta.get(name), f"result.{app_id}.metadata.{name}", _EP)
            app_ids.extend([app_id] * len(ids))
            relation.extend([name] * len(ids))
            positions.extend(range(1, len(ids) + 1))
            related.extend(ids)
    cols: dict[str, list[Any]] = {
        "app_id": app_ids,
        "relation": relation,
        "position": positions,
        "related_app_id": related,
    }
    frame = build(
        RELATED_APPS,
        cols,
        walk.keys,
        walk.counts,
        lambda i, c: f"result.{app_ids[i]}.metadata.{relation[i]}[{positions[i] - 1}]",
        endpoint=_EP,
        ids=("related_app_id",),
    )
    return frame, walk.counts


def batch_permissions(answers: Answers) -> Flat:
    """One row per permission of an android app (:data:`~storeframes.schemas.PERMISSIONS`)."""
    app_ids: list[str] = []
    positions: list[int] = []
    permission: list[Any] = []
    walk = Walk(answers, _EP)
    for app_id, resource in walk.apps(app_ids):
        names = seq(_metadata_of(app_id, resource).get("permissions"), f"result.{app_id}.metadata.permissions", _EP)
        app_ids.extend([app_id] * len(names))
        positions.extend(range(1, len(names) + 1))
        permission.extend(names)
    cols: dict[str, list[Any]] = {"app_id": app_ids, "position": positions, "permission": permission}
    frame = build(
        PERMISSIONS,
        cols,
        walk.keys,
        walk.counts,
        lambda i, c: f"result.{app_ids[i]}.metadata.permissions[{positions[i] - 1}]",
        endpoint=_EP,
    )
    return frame, walk.counts


# -- one answer at a time ------------------------------------------------------------------------


def flatten_metadata(result: Any, keys: Keys = NO_KEYS) -> pl.DataFrame:
    """One row per app: every scalar of the metadata (:data:`~storeframes.schemas.METADATA`)."""
    return batch_metadata([(result, keys)])[0]


def flatten_versions(result: Any, keys: Keys = NO_KEYS) -> pl.DataFrame:
    """One row per app and version, newest first (:data:`~storeframes.schemas.VERSIONS`)."""
    return batch_versions([(result, keys)])[0]


def flatten_screenshots(result: Any, keys: Keys = NO_KEYS) -> pl.DataFrame:
    """One row per screenshot and device key (:data:`~storeframes.schemas.SCREENSHOTS`)."""
    return batch_screenshots([(result, keys)])[0]


def flatten_videos(result: Any, keys: Keys = NO_KEYS) -> pl.DataFrame:
    """One row per preview video and device key (:data:`~storeframes.schemas.VIDEOS`)."""
    return batch_videos([(result, keys)])[0]


def flatten_in_app_purchases(result: Any, keys: Keys = NO_KEYS) -> pl.DataFrame:
    """One row per in-app purchase (:data:`~storeframes.schemas.IN_APP_PURCHASES`)."""
    return batch_in_app_purchases([(result, keys)])[0]


def flatten_related_apps(result: Any, keys: Keys = NO_KEYS) -> pl.DataFrame:
    """One row per related app (:data:`~storeframes.schemas.RELATED_APPS`)."""
    return batch_related_apps([(result, keys)])[0]


def flatten_permissions(result: Any, keys: Keys = NO_KEYS) -> pl.DataFrame:
    """One row per permission of an android app (:data:`~storeframes.schemas.PERMISSIONS`)."""
    return batch_permissions([(result, keys)])[0]
