"""Every form of the metadata and metrics answers the sandbox can speak reads to the same frames.

A sandbox client in each form (``genres`` for ``categories``, ``size`` a number or an object on
both stores, the app-power metric keyed ``app-power``) answers in that form, and every frame
function of the endpoint reads it to the frame the default form gives: the same rows, values and
dtypes, with no warning.
"""

from __future__ import annotations

import warnings

import polars as pl
import pytest

from storeframes.fetch.pipeline import FRAMES
from storeframes.sandbox import Dialect, World
from tests.conftest import SANDBOX_TODAY

WORLD = World(0)
APPS = {
    "iphone": list(WORLD.EXAMPLE_IOS_APPS[:3]),
    "ipad": list(WORLD.EXAMPLE_IOS_APPS[3:5]),
    "android": list(WORLD.EXAMPLE_ANDROID_APPS[:3]),
}
NULL_POWER = next(  # an app with no power estimate: its null must read the same in every form
    a
    for a in WORLD.app_ids("ios")
    if WORLD.metrics(a, ["app-power"], device="iphone", country="us", today=SANDBOX_TODAY)["power"]["value"] is None
)
DIALECTS = [
    Dialect(power="app-power"),
    Dialect(categories="genres"),
    Dialect(size="number"),
    Dialect(size="object"),
    Dialect(search="apps", keyword_level=True, power="app-power", categories="genres", size="object"),
]
METADATA_FRAMES = tuple(name for name, spec in FRAMES.items() if spec.endpoint == "metadata")


def same(mine: pl.DataFrame, theirs: pl.DataFrame) -> None:
    """The same rows, values and dtypes, but for the time each was fetched."""
    assert mine.schema == theirs.schema
    assert mine.drop("fetched_at", strict=False).equals(theirs.drop("fetched_at", strict=False))


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.code())
@pytest.mark.parametrize("device", ["iphone", "ipad", "android"])
def test_every_metadata_frame_reads_each_form_as_the_default_one(make_client, dialect, device):
    apps = APPS[device]
    usual, other = make_client(), make_client(dialect=dialect)
    meta = other.get("metadata", apps=apps, device=device).result
    for app in apps:
        members = meta[app]["metadata"]
        assert (dialect.categories in members) and ({"categories", "genres"} - {dialect.categories}).isdisjoint(members)
        size = members["size"]
        if dialect.size == "object" or (dialect.size == "per_store" and device == "android"):
            assert set(size) == {"current"} and type(size["current"]["data"]) is int
        else:
            assert type(size) is int
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in METADATA_FRAMES:
            mine, theirs = getattr(other, name)(apps, device=device), getattr(usual, name)(apps, device=device)
            same(mine, theirs)
            if name in ("metadata_frame", "versions_frame", "screenshots_frame"):
                assert mine.height >= len(apps)
    frame = other.metadata_frame(apps, device=device)
    assert frame["size_bytes"].null_count() == 0 and frame["categories"].list.len().min() >= 1


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.code())
@pytest.mark.parametrize("device", ["iphone", "android"])
def test_the_metrics_frame_reads_each_form_as_the_default_one(make_client, dialect, device):
    apps = APPS[device] + ([NULL_POWER] if device == "iphone" else [])
    metrics = ["downloads", "app-power", "ratings"]
    usual, other = make_client(), make_client(dialect=dialect)
    answer = other.get("metrics", apps=apps, metrics=metrics, device=device).result
    plain = usual.get("metrics", apps=apps, metrics=metrics, device=device).result
    for app in apps:
        assert list(answer[app]) == ["downloads", dialect.power, "ratings"]
        assert answer[app][dialect.power] == plain[app]["power"] and answer[app]["ratings"] == plain[app]["ratings"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mine, theirs = (
            other.metrics_frame(apps, metrics, device=device),
            usual.metrics_frame(apps, metrics, device=device),
        )
    same(mine, theirs)
    assert mine.height == len(apps) * len(metrics)
    power = mine.filter(pl.col("metric") == "app-power")
    assert power.height == len(apps) and power["value"].dtype == pl.Float64
    if device == "iphone":
        assert power.filter(pl.col("app_id") == NULL_POWER)["value"].to_list() == [None]
    # the same credits spent: a null power is not charged in either form
    assert other.sandbox_service.spent == usual.sandbox_service.spent
