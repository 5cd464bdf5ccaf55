"""Flatteners of the metadata answer (``result.<app_id>.metadata``): pure functions, no I/O.

Every function takes the answer's ``result`` and the :class:`Keys` of its request, and
returns a frame of its table's declared schema (see :mod:`storeframes.schemas`), one
schema for iphone, ipad and android. The forms of ``wire-notes.md`` are accepted:
``genres`` for ``categories``; ``size`` as an integer or ``{"current": {"data": n}}``;
screenshots and videos as an object keyed by device or as a flat list (of URLs or of
items), on either store.

>>> result = {"1": {"metadata": {"title": "Notes", "versions": [{"version": "2.0"}, {"version": "1.0"}]}}}
>>> flatten_versions(result, Keys(country="us"))["version"].to_list()
['2.0', '1.0']
"""

from __future__ import annotations

from typing import Any

import polars as pl

from ..schemas import IN_APP_PURCHASES, METADATA, PERMISSIONS, RELATED_APPS, SCREENSHOTS, VERSIONS, VIDEOS
from ._columns import (
    KEY_COLUMNS,
    Keys,
    apps_of,
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
    "flatten_in_app_purchases",
    "flatten_metadata",
    "flatten_permissions",
    "flatten_related_apps",
    "flatten_screenshots",
    "flatten_versions",
    "flatten_videos",
]

_EP = "metadata"

_IOS_FIELDS = {
    "title", "subtitle", "promotional_text", "description", "id", "categories", "icon", "screenshots", "videos",
    "size", "rating", "developer", "price", "versions", "release_date", "customers_also_bought", "dna",
    "features", "in_app_purchases",
}  # fmt: skip
_ANDROID_FIELDS = {
    "title", "short_description", "long_description", "id", "categories", "icon", "screenshots", "videos", "size",
    "rating", "developer", "price", "released_at", "versions", "similar_apps", "release_date", "dna", "permissions",
}  # fmt: skip
_METADATA_FIELDS = frozenset(_IOS_FIELDS | _ANDROID_FIELDS | {"genres"})
_DEVELOPER_FIELDS = frozenset({"id", "name", "email", "website"})
_DNA_FIELDS = frozenset({"class_id", "class_label", "subclass_id", "subclass_label"})
_FEATURE_FIELDS = frozenset({"game_center", "passbook", "in_apps"})
_VERSION_FIELDS = frozenset(
    {"version", "release_notes", "has_game_center", "game_controller_information", "release_date"}
)
_CONTROLLER_FIELDS = frozenset({"required", "supported", "requirement_label"})
_SCREENSHOT_FIELDS = frozenset({"id", "hash", "filename", "path_component", "url"})
_VIDEO_FIELDS = frozenset({"uri", "url", "audio", "width", "height", "codecs"})
_PURCHASE_FIELDS = frozenset(
    {
        "id", "recurring_subscription_period", "is_family_shareable", "is_merchandise_enabled", "is_subscription",
        "is_merchandise_visible", "subscription_family_name", "artwork", "rank", "name", "description", "price",
        "discounts",
    }
)  # fmt: skip
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
        return obj(value.get("current"), f"{path}.current", _EP).get("data")
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


def _count(value: Any) -> int:
    if type(value) is list:
        return len(value)
    if type(value) is dict:
        return sum(len(v) for v in value.values() if type(v) is list)
    return 0


def flatten_metadata(result: Any, keys: Keys) -> pl.DataFrame:
    """One row per app: every scalar of the metadata, both stores in one schema (:data:`~storeframes.schemas.METADATA`)."""
    cols: dict[str, list[Any]] = {name: [] for name in METADATA.names if name not in KEY_COLUMNS}
    unknown: set[str] = set()
    for app_id, resource in apps_of(result, _EP):
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
        cols["developer_id"].append(ident(developer.get("id")))
        cols["developer_name"].append(developer.get("name"))
        cols["developer_email"].append(developer.get("email"))
        cols["developer_website"].append(developer.get("website"))
        cols["price_value"].append(decimal(meta.get("price")) if meta.get("price") else None)
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
        cols["screenshots_count"].append(_count(meta.get("screenshots")))
        cols["videos_count"].append(_count(meta.get("videos")))
        cols["in_app_purchases_count"].append(len(seq(meta.get("in_app_purchases"), f"{path}.in_app_purchases", _EP)))
    if unknown:
        note_unknown("result.<app_id>.metadata", unknown)
    app_ids = cols["app_id"]
    return build(
        METADATA,
        cols,
        keys,
        lambda i, column: f"result.{app_ids[i]}.metadata.{_METADATA_SOURCES.get(column, column)}",
        endpoint=_EP,
    )


# -- one row per version -----------------------------------------------------------------

_VERSION_SOURCES = {
    "controller_required": "game_controller_information.required",
    "controller_supported": "game_controller_information.supported",
    "controller_requirement_label": "game_controller_information.requirement_label",
}


def flatten_versions(result: Any, keys: Keys) -> pl.DataFrame:
    """One row per app and version, newest first (:data:`~storeframes.schemas.VERSIONS`)."""
    app_ids: list[str] = []
    positions: list[int] = []
    version: list[Any] = []
    release_date: list[Any] = []
    notes: list[Any] = []
    game_center: list[Any] = []
    required: list[Any] = []
    supported: list[Any] = []
    label: list[Any] = []
    unknown: set[str] = set()
    for app_id, resource in apps_of(result, _EP):
        path = f"result.{app_id}.metadata.versions"
        items = seq(_metadata_of(app_id, resource).get("versions"), path, _EP)
        for n, item in enumerate(items):
            if type(item) is not dict:
                raise shape_error("a version object", item, f"{path}[{n}]", _EP)
            if not item.keys() <= _VERSION_FIELDS:
                unknown |= item.keys() - _VERSION_FIELDS
            controller = item.get("game_controller_information")
            if controller is None:
                controller = {}
            elif type(controller) is not dict:
                raise shape_error("an object", controller, f"{path}[{n}].game_controller_information", _EP)
            elif not controller.keys() <= _CONTROLLER_FIELDS:
                unknown |= {f"game_controller_information.{k}" for k in controller.keys() - _CONTROLLER_FIELDS}
            app_ids.append(app_id)
            positions.append(n + 1)
            version.append(item.get("version"))
            release_date.append(item.get("release_date"))
            notes.append(item.get("release_notes"))
            game_center.append(item.get("has_game_center"))
            required.append(controller.get("required"))
            supported.append(controller.get("supported"))
            label.append(controller.get("requirement_label"))
    if unknown:
        note_unknown("result.<app_id>.metadata.versions[]", unknown)
    cols = {
        "app_id": app_ids,
        "position": positions,
        "version": version,
        "release_date": release_date,
        "release_notes": notes,
        "has_game_center": game_center,
        "controller_required": required,
        "controller_supported": supported,
        "controller_requirement_label": label,
    }
    where = _items(app_ids, positions, "versions")
    return build(VERSIONS, cols, keys, lambda i, c: where(i, _VERSION_SOURCES.get(c, c)), endpoint=_EP)


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


def flatten_screenshots(result: Any, keys: Keys) -> pl.DataFrame:
    """One row per screenshot and device key (:data:`~storeframes.schemas.SCREENSHOTS`).

    Items may be objects (id, hash, filename, path_component, url) or bare URLs.
    """
    app_ids: list[str] = []
    paths: list[str] = []
    device_key: list[str] = []
    positions: list[int] = []
    url: list[Any] = []
    shot_id: list[Any] = []
    hashes: list[Any] = []
    filename: list[Any] = []
    path_component: list[Any] = []
    unknown: set[str] = set()
    for app_id, resource in apps_of(result, _EP):
        base = f"result.{app_id}.metadata.screenshots"
        for key, path, items in _by_device(_metadata_of(app_id, resource).get("screenshots"), base, keys.device):
            for n, item in enumerate(items):
                app_ids.append(app_id)
                paths.append(f"{path}[{n}]")
                device_key.append(key)
                positions.append(n + 1)
                if type(item) is dict:
                    if not item.keys() <= _SCREENSHOT_FIELDS:
                        unknown |= item.keys() - _SCREENSHOT_FIELDS
                    url.append(item.get("url"))
                    shot_id.append(ident(item.get("id")))
                    hashes.append(item.get("hash"))
                    filename.append(item.get("filename"))
                    path_component.append(item.get("path_component"))
                elif type(item) is str:
                    url.append(item)
                    shot_id.append(None)
                    hashes.append(None)
                    filename.append(None)
                    path_component.append(None)
                else:
                    raise shape_error("a screenshot object or URL", item, f"{path}[{n}]", _EP)
    if unknown:
        note_unknown("result.<app_id>.metadata.screenshots[]", unknown)
    cols = {
        "app_id": app_ids,
        "device_key": device_key,
        "position": positions,
        "url": url,
        "screenshot_id": shot_id,
        "hash": hashes,
        "filename": filename,
        "path_component": path_component,
    }
    fields = {"screenshot_id": "id"}
    return build(SCREENSHOTS, cols, keys, lambda i, c: f"{paths[i]}.{fields.get(c, c)}", endpoint=_EP)


def flatten_videos(result: Any, keys: Keys) -> pl.DataFrame:
    """One row per preview video and device key (:data:`~storeframes.schemas.VIDEOS`).

    Items may be objects (uri, audio, width, height, codecs) or bare URLs (android).
    """
    app_ids: list[str] = []
    paths: list[str] = []
    device_key: list[str] = []
    positions: list[int] = []
    url: list[Any] = []
    audio: list[Any] = []
    width: list[Any] = []
    height: list[Any] = []
    codecs: list[Any] = []
    unknown: set[str] = set()
    for app_id, resource in apps_of(result, _EP):
        base = f"result.{app_id}.metadata.videos"
        for key, path, items in _by_device(_metadata_of(app_id, resource).get("videos"), base, keys.device):
            for n, item in enumerate(items):
                app_ids.append(app_id)
                paths.append(f"{path}[{n}]")
                device_key.append(key)
                positions.append(n + 1)
                if type(item) is dict:
                    if not item.keys() <= _VIDEO_FIELDS:
                        unknown |= item.keys() - _VIDEO_FIELDS
                    url.append(item.get("uri", item.get("url")))
                    audio.append(item.get("audio"))
                    width.append(item.get("width"))
                    height.append(item.get("height"))
                    codecs.append(item.get("codecs"))
                elif type(item) is str:
                    url.append(item)
                    audio.append(None)
                    width.append(None)
                    height.append(None)
                    codecs.append(None)
                else:
                    raise shape_error("a video object or URL", item, f"{path}[{n}]", _EP)
    if unknown:
        note_unknown("result.<app_id>.metadata.videos[]", unknown)
    cols = {
        "app_id": app_ids,
        "device_key": device_key,
        "position": positions,
        "url": url,
        "audio": audio,
        "width": width,
        "height": height,
        "codecs": codecs,
    }
    return build(VIDEOS, cols, keys, lambda i, c: f"{paths[i]}.{'uri' if c == 'url' else c}", endpoint=_EP)


# -- in-app purchases ------------------------------------------------------------------------

_PURCHASE_FLAGS = ("is_subscription", "is_family_shareable", "is_merchandise_enabled", "is_merchandise_visible")
_PURCHASE_TEXT = ("name", "description", "recurring_subscription_period", "subscription_family_name")


def flatten_in_app_purchases(result: Any, keys: Keys) -> pl.DataFrame:
    """One row per in-app purchase, in the answer's order (:data:`~storeframes.schemas.IN_APP_PURCHASES`).

    ``price`` is the decimal amount of ``price.value``; ``artwork`` and ``discounts``
    (whose shape the contract does not show) are kept as JSON text.
    """
    cols: dict[str, list[Any]] = {
        name: [] for name in ("app_id", "rank", "purchase_id", "price", "currency", "artwork", "discounts")
    }
    cols |= {name: [] for name in _PURCHASE_FLAGS + _PURCHASE_TEXT}
    positions: list[int] = []
    unknown: set[str] = set()
    for app_id, resource in apps_of(result, _EP):
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
    return build(IN_APP_PURCHASES, cols, keys, lambda i, c: where(i, fields.get(c, c)), endpoint=_EP)


# -- lists of ids and identifiers ------------------------------------------------------------


def flatten_related_apps(result: Any, keys: Keys) -> pl.DataFrame:
    """One row per related app: customers_also_bought and similar_apps (:data:`~storeframes.schemas.RELATED_APPS`)."""
    app_ids: list[str] = []
    relation: list[str] = []
    positions: list[int] = []
    related: list[Any] = []
    for app_id, resource in apps_of(result, _EP):
        meta = _metadata_of(app_id, resource)
        for name in _RELATIONS:
            ids = seq(meta.get(name), f"result.{app_id}.metadata.{name}", _EP)
            app_ids.extend([app_id] * len(ids))
            relation.extend([name] * len(ids))
            positions.extend(range(1, len(ids) + 1))
            related.extend([ident(i) for i in ids])
    cols = {"app_id": app_ids, "relation": relation, "position": positions, "related_app_id": related}
    return build(
        RELATED_APPS,
        cols,
        keys,
        lambda i, c: f"result.{app_ids[i]}.metadata.{relation[i]}[{positions[i] - 1}]",
        endpoint=_EP,
    )


def flatten_permissions(result: Any, keys: Keys) -> pl.DataFrame:
    """One row per permission of an android app (:data:`~storeframes.schemas.PERMISSIONS`)."""
    app_ids: list[str] = []
    positions: list[int] = []
    permission: list[Any] = []
    for app_id, resource in apps_of(result, _EP):
        names = seq(_metadata_of(app_id, resource).get("permissions"), f"result.{app_id}.metadata.permissions", _EP)
        app_ids.extend([app_id] * len(names))
        positions.extend(range(1, len(names) + 1))
        permission.extend(names)
    cols = {"app_id": app_ids, "position": positions, "permission": permission}
    return build(
        PERMISSIONS,
        cols,
        keys,
        lambda i, c: f"result.{app_ids[i]}.metadata.permissions[{positions[i] - 1}]",
        endpoint=_EP,
    )
