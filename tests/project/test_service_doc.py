"""docs/explanation/service.md says what the package does: its endpoint tables agree with the catalog.

The summary table of the endpoints (names, paths, parameters, devices, apps per request,
prices, frame functions), each endpoint's parameter table (required, defaults, allowed
values) and the limits table are read from the page and compared with
:mod:`storeframes.catalog` and :data:`storeframes.fetch.pipeline.FRAMES`, so a change to either
that the page does not follow fails here.
"""

from __future__ import annotations

import re

import pytest

import storeframes as sf
from storeframes import catalog
from storeframes.catalog import CHANNELS, ENDPOINTS, METRICS
from storeframes.fetch.pipeline import FRAMES
from tests.conftest import ROOT

DOC = ROOT / "docs" / "explanation" / "service.md"
TEXT = DOC.read_text(encoding="utf-8")


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _table(after: str, header: str) -> list[dict[str, str]]:
    """The rows of the first Markdown table whose header starts with ``header``, after the text ``after``."""
    start = TEXT.index(after)
    lines = TEXT[start:].splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith(header))
    names = _cells(lines[first])
    rows = []
    for line in lines[first + 2 :]:
        if not line.startswith("|"):
            break
        cells = _cells(line)
        assert len(cells) == len(names), f"a row of the table after {after!r} has {len(cells)} cells: {line}"
        rows.append(dict(zip(names, cells, strict=True)))
    return rows


def _codes(cell: str) -> list[str]:
    """The texts in backticks of a cell, in order."""
    return re.findall(r"`([^`]*)`", cell)


SUMMARY = _table("## Endpoints", "| endpoint |")


def test_the_summary_lists_every_endpoint_in_the_catalogs_order():
    assert [_codes(row["endpoint"]) for row in SUMMARY] == [[name] for name in ENDPOINTS]


@pytest.mark.parametrize("row", SUMMARY, ids=lambda row: row["endpoint"].strip("`"))
def test_a_summary_row_matches_its_catalog_entry(row):
    ep = ENDPOINTS[row["endpoint"].strip("`")]
    assert row["path"] == f"`{ep.path}`"
    assert row["parameters"] == ", ".join(p.name + ("*" if p.required else "") for p in ep.params)
    assert row["devices"] == ", ".join(ep.devices)
    assert row["apps per request"] == (str(ep.max_apps) if ep.max_apps else "")


@pytest.mark.parametrize("row", SUMMARY, ids=lambda row: row["endpoint"].strip("`"))
def test_a_summary_price_is_the_default_cost_model(row):
    cost = ENDPOINTS[row["endpoint"].strip("`")].cost
    pairs = dict(part.split("=") for part in row["price"].split(", "))
    if cost.per_app_metric:
        assert pairs == {metric: f"{price}/app" for metric, price in cost.per_app_metric.items()}
    else:
        expected = {name: value for name, value in vars(cost).items() if name != "per_app_metric" and value}
        assert {name: int(value) for name, value in pairs.items()} == expected


@pytest.mark.parametrize("row", SUMMARY, ids=lambda row: row["endpoint"].strip("`"))
def test_a_summary_names_the_frame_functions_that_fetch_the_endpoint(row):
    name = row["endpoint"].strip("`")
    named = _codes(row["frame functions"])
    fetching = {
        spec.name for spec in FRAMES.values() if spec.endpoint == name or (spec.switch and spec.switch[1] == name)
    }
    assert set(named) == fetching
    assert len(named) == len(set(named))
    assert all(callable(getattr(sf, function)) for function in named)


def _default(param: catalog.Param) -> str:
    """How a parameter's default is written in an endpoint's table."""
    if param.default is None:
        return ""
    match = re.fullmatch(r"(today|end)-(\d+)d", param.default)
    if match is None:
        return f"`{param.default}`"
    anchor, days = match.groups()
    if anchor == "today":
        assert days == "1", f"no wording for the default {param.default!r}"
        return "yesterday (UTC)"
    return f"`end_date` - {days} days"


def _allowed(ep: catalog.Endpoint, param: catalog.Param) -> list[str] | dict[str, list[str]] | None:
    """The values a parameter's table row must list, or None where it describes them in words."""
    if param.kind == "device":
        return list(ep.devices)
    if param.kind == "choice":
        return list(param.choices)
    if param.kind == "metrics":
        return list(METRICS)
    if param.kind == "channel":
        return {device: list(CHANNELS[device]) for device in ep.devices}
    return None


@pytest.mark.parametrize("name", list(ENDPOINTS))
def test_an_endpoints_parameter_table_matches_the_catalog(name):
    ep = ENDPOINTS[name]
    rows = _table(f"### `{name}`:", "| parameter |")
    assert [row["parameter"] for row in rows] == [f"`{p}`" for p in ep.param_names]
    for param, row in zip(ep.params, rows, strict=True):
        assert row["required"] == ("yes" if param.required else "no"), param.name
        written = _default(param)
        if written:
            assert row["default"] == written, param.name
        else:  # required, or chosen by the service: said in words, never a value storeframes would send
            assert "`" not in row["default"] and bool(row["default"]) == (not param.required), param.name
        allowed = _allowed(ep, param)
        if isinstance(allowed, dict):
            per_device = dict(re.findall(r"(\w+): ([^;]*)", row["allowed values"]))
            assert {device: _codes(values) for device, values in per_device.items()} == allowed, param.name
        elif allowed is not None:
            assert _codes(row["allowed values"]) == allowed, param.name


def test_the_limits_table_states_the_catalogs_caps():
    limits = {row["limit"]: row["value"] for row in _table("## Limits", "| limit |")}
    history = ENDPOINTS["search_history"].result_cap
    assert limits["apps per request"].startswith(f"{catalog.MAX_APPS_PER_REQUEST} ")
    assert limits["live search results"] == f"at most {ENDPOINTS['search'].result_cap['ios']} per store"
    assert limits["history results per day"] == (
        f"at most {history['ios']} on iphone/ipad, {history['android']} on android"
    )
    assert limits["history's live fallback for today"] == f"at most {history['live_fallback']}"
    assert limits["requests"] == "60 in any 10 seconds"


def test_the_page_speaks_of_the_service_alone():
    lowered = TEXT.lower()
    for words in ("contract", "wire note", "wire-note", "service-api", "/work/", "/tmp/"):
        assert words not in lowered, f"docs/explanation/service.md mentions {words!r}"
