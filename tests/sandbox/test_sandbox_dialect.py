"""The sandbox's dialect: its forms, its refusals, the Python text naming it, and the metadata and
metrics answers it sends in each form (member names, their order, the size's type, the cost)."""

from __future__ import annotations

import json
from dataclasses import fields
from datetime import date

import pytest

import storeframes
from storeframes import sandbox
from storeframes.catalog import ENDPOINTS
from storeframes.sandbox import API_PREFIX, SANDBOX_KEY, Dialect, SandboxService, World
from storeframes.sandbox import service as service_module

WORLD = World(0)
TODAY = date(2026, 11, 20)
IOS = WORLD.EXAMPLE_IOS_APPS[0]
ANDROID = WORLD.EXAMPLE_ANDROID_APPS[0]
NULL_POWER = next(
    a
    for a in WORLD.app_ids("ios")
    if WORLD.metrics(a, ["app-power"], device="iphone", country="us", today=TODAY)["power"]["value"] is None
)


def result(dialect: Dialect, endpoint: str, **params: str) -> tuple[dict, int]:
    """The ``result`` of one answer of a sandbox speaking ``dialect``, and the credits it charged."""
    service = SandboxService(today=TODAY, world=WORLD, dialect=dialect)
    path = API_PREFIX + ENDPOINTS[endpoint].path
    reply = service.handle("GET", path, list(params.items()), {"X-Service-Key": SANDBOX_KEY})
    assert reply.status == 200, reply.body
    return json.loads(reply.body)["result"], reply.cost


def metadata(dialect: Dialect, app: str, device: str) -> dict:
    answer, _ = result(dialect, "metadata", apps=app, device=device, country="us")
    return answer[app]["metadata"]


def test_the_dialect_is_one_class_under_every_import_path():
    assert sandbox.Dialect is service_module.Dialect is storeframes.sandbox.dialect.Dialect


def test_forms_list_each_field_in_order_with_its_default_first():
    assert list(Dialect.FORMS) == [f.name for f in fields(Dialect)]
    assert Dialect.FORMS == {
        "search": ("value", "apps", "pairs"),
        "history": ("by_date", "list"),
        "keyword_level": (False, True),
        "power": ("power", "app-power"),
        "categories": ("categories", "genres"),
        "size": ("per_store", "number", "object"),
    }
    default = Dialect()
    assert all(getattr(default, name) == allowed[0] for name, allowed in Dialect.FORMS.items())
    for name, allowed in Dialect.FORMS.items():  # every value of every field builds
        assert [getattr(Dialect(**{name: value}), name) for value in allowed] == list(allowed)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("search", "ids", "Dialect.search must be value, apps or pairs, got 'ids'"),
        ("history", "dict", "Dialect.history must be by_date or list, got 'dict'"),
        ("keyword_level", "yes", "Dialect.keyword_level must be False or True, got 'yes'"),
        ("power", "Power", "Dialect.power must be power or app-power, got 'Power'"),
        ("power", "app_power", "Dialect.power must be power or app-power, got 'app_power'"),
        ("categories", "genre", "Dialect.categories must be categories or genres, got 'genre'"),
        ("size", "integer", "Dialect.size must be per_store, number or object, got 'integer'"),
        ("size", None, "Dialect.size must be per_store, number or object, got None"),
    ],
)
def test_a_value_outside_the_forms_is_refused_naming_the_field_the_value_and_the_forms(field, value, message):
    with pytest.raises(ValueError) as error:
        Dialect(**{field: value})
    assert str(error.value) == message


@pytest.mark.parametrize(
    ("dialect", "code"),
    [
        (Dialect(), "sf.sandbox.Dialect()"),
        (Dialect(search="apps", power="app-power"), 'sf.sandbox.Dialect(search="apps", power="app-power")'),
        (Dialect(keyword_level=True, size="object"), 'sf.sandbox.Dialect(keyword_level=True, size="object")'),
        (Dialect(categories="genres", size="number"), 'sf.sandbox.Dialect(categories="genres", size="number")'),
        (
            Dialect("pairs", "list", True, "app-power", "genres", "object"),
            'sf.sandbox.Dialect(search="pairs", history="list", keyword_level=True, power="app-power", '
            'categories="genres", size="object")',
        ),
    ],
)
def test_code_names_the_fields_that_differ_and_builds_the_same_dialect(dialect, code):
    assert dialect.code() == code
    assert eval(dialect.code(), {"sf": storeframes}) == dialect


# -- metadata -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("app", "device"), [(IOS, "iphone"), (IOS, "ipad"), (ANDROID, "android")])
def test_genres_takes_the_place_of_categories_and_nothing_else_moves(app, device):
    usual, genres = metadata(Dialect(), app, device), metadata(Dialect(categories="genres"), app, device)
    assert list(genres) == [("genres" if key == "categories" else key) for key in usual]
    assert genres["genres"] == usual["categories"] and len(usual["categories"]) >= 1
    assert {k: v for k, v in genres.items() if k != "genres"} == {k: v for k, v in usual.items() if k != "categories"}


@pytest.mark.parametrize(("app", "device"), [(IOS, "iphone"), (IOS, "ipad"), (ANDROID, "android")])
def test_size_is_per_store_by_default_and_a_number_or_an_object_on_both_stores(app, device):
    usual = metadata(Dialect(), app, device)
    if device == "android":
        assert set(usual["size"]) == {"current"} and set(usual["size"]["current"]) == {"data"}
        size = usual["size"]["current"]["data"]
    else:
        size = usual["size"]
    assert type(size) is int and size > 0
    number, obj = metadata(Dialect(size="number"), app, device), metadata(Dialect(size="object"), app, device)
    assert type(number["size"]) is int and number["size"] == size
    assert obj["size"] == {"current": {"data": size}}
    assert list(number) == list(obj) == list(usual)  # the members keep their order
    assert {k: v for k, v in number.items() if k != "size"} == {k: v for k, v in usual.items() if k != "size"}


def test_the_default_dialect_sends_the_metadata_the_world_writes():
    for app, device in ((IOS, "iphone"), (ANDROID, "android")):
        world = WORLD.metadata(app, device=device, country="us", language="en", today=TODAY)
        assert json.dumps(metadata(Dialect(), app, device)) == json.dumps(world)


# -- metrics ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("power", ["power", "app-power"])
def test_the_app_power_metric_answers_under_the_dialects_key_and_a_null_value_is_not_charged(power):
    params = {"device": "iphone", "country": "us", "metrics": "downloads,app-power,ratings"}
    answer, cost = result(Dialect(power=power), "metrics", apps=f"{IOS},{NULL_POWER}", **params)
    other = "app-power" if power == "power" else "power"
    for app in (IOS, NULL_POWER):
        assert list(answer[app]) == ["downloads", power, "ratings"] and other not in answer[app]
        assert set(answer[app][power]) == {"value", "date"} and answer[app][power]["date"] == "2026-11-19"
    assert type(answer[IOS][power]["value"]) is float and answer[NULL_POWER][power]["value"] is None
    prices = {"downloads": 100, power: 10, "ratings": 10}
    charged = sum(price for app in (IOS, NULL_POWER) for key, price in prices.items() if answer[app][key]["value"])
    assert cost == charged < 2 * sum(prices.values())  # the null power (and any null metric) not charged
    usual, usual_cost = result(Dialect(), "metrics", apps=f"{IOS},{NULL_POWER}", **params)
    assert cost == usual_cost
    assert {a: {k: v for k, v in m.items() if k != power} for a, m in answer.items()} == {
        a: {k: v for k, v in m.items() if k != "power"} for a, m in usual.items()
    }


def test_only_the_app_power_key_changes_with_the_dialect():
    assert Dialect().metric_key("app-power") == "power"
    assert Dialect(power="app-power").metric_key("app-power") == "app-power"
    assert [Dialect(power="app-power").metric_key(m) for m in ("downloads", "revenues", "ratings")] == [
        "downloads",
        "revenues",
        "ratings",
    ]
