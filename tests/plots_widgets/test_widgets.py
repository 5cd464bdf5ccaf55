"""The notebook widgets, driven as a notebook would: set values, click, read what they show."""

from __future__ import annotations

import base64
import html
from datetime import date
from types import SimpleNamespace

import ipywidgets
import matplotlib.dates as mdates
import polars as pl
import pytest
from IPython import get_ipython
from IPython.display import display
from ipywidgets.widgets import widget as widget_module

import storeframes as sf
from storeframes import catalog, widgets
from storeframes.widgets import BenchmarkExplorer, CreditMeter, RankExplorer
from tests._ipython import ipython_shell
from tests.conftest import SANDBOX_TODAY

PNG = b"\x89PNG"
START, END = date(2026, 8, 21), date(2026, 11, 18)  # 90 days
KEYWORDS = ["photo editor", "meditation", "running tracker"]
BENCH = {"countries": "us", "device": "iphone", "type": "free", "channels": "all"}


@pytest.fixture
def opened():
    """Widgets a test opens: closed at its end, and none of theirs (layouts, styles) left open."""
    before = set(widget_module._instances)
    made: list[ipywidgets.Widget] = []
    yield made.append
    for item in made:
        item.close()
    leaked = [type(w).__name__ for k, w in widget_module._instances.items() if k not in before]
    assert leaked == []


@pytest.fixture
def shown(tmp_path, monkeypatch):
    """A real IPython shell recording what is displayed (``shown.outputs``: data, metadata, transient, update)."""
    with ipython_shell(tmp_path, monkeypatch) as captured:
        yield captured


@pytest.fixture
def client(make_client, tmp_path):
    return make_client(cache_dir=tmp_path / "cache")


@pytest.fixture(scope="module")
def world():
    with sf.sandbox.client(today=SANDBOX_TODAY, progress=False, cache_dir=False) as made:
        yield made.sandbox_service.world


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    with sf.sandbox.client(today=SANDBOX_TODAY, progress=False, cache_dir=tmp_path_factory.mktemp("h")) as made:
        return made.search_history_frame(KEYWORDS, start=START, end=END)


@pytest.fixture(scope="module")
def names(tmp_path_factory, world):
    with sf.sandbox.client(today=SANDBOX_TODAY, progress=False, cache_dir=tmp_path_factory.mktemp("m")) as made:
        return made.metadata_frame(list(world.EXAMPLE_IOS_APPS)).select("app_id", "title")


def _line_labels(ax) -> list[str]:
    return [line.get_label() for line in ax.get_lines() if not line.get_label().startswith("_")]


def _names_app(label: str, app: str, title: str) -> bool:
    """A line's label names the app: its title (perhaps shortened) and its id."""
    shown = label.removesuffix(f" ({app})").rstrip("…")
    return label.endswith(f"({app})") and len(shown) >= 10 and title.startswith(shown)


def _meter_text(client) -> str:
    tail = f"{client.requests_sent:,} request{'' if client.requests_sent == 1 else 's'} · {client.saved:,} credits saved by cached answers"
    if client.budget is None:
        return f"{client.spent:,} credits spent (no budget set) · {tail}"
    return f"{client.spent:,} of {client.budget:,} credits spent ({100 * client.spent // client.budget}%) · {tail}"


def test_module_api():
    assert widgets.__all__ == [
        "AppCard",
        "BenchmarkExplorer",
        "CreditMeter",
        "RankExplorer",
        "Table",
        "app_card",
        "table",
    ]
    assert callable(widgets.app_card) and callable(widgets.table)
    for name in ("CreditMeter", "RankExplorer", "BenchmarkExplorer"):
        assert ">>>" in getattr(widgets, name).__doc__


# -- CreditMeter -------------------------------------------------------------------------------


def test_meter_follows_fetches_and_cache_hits(make_client, tmp_path, opened, world):
    with make_client(cache_dir=tmp_path / "cache", budget=10_000) as client:
        meter = CreditMeter(client)
        opened(meter)
        assert isinstance(meter, ipywidgets.HBox)
        assert meter.label.value == "0 of 10,000 credits spent (0%) · 0 requests · 0 credits saved by cached answers"
        assert (meter.bar.value, meter.bar.max, meter.bar.bar_style) == (0, 10_000, "")

        client.metadata_frame(list(world.EXAMPLE_IOS_APPS))  # 6 apps: 2 requests
        assert client.spent > 0 and client.requests_sent == 2
        assert meter.label.value == _meter_text(client)
        assert (meter.bar.value, meter.bar.max) == (client.spent, client.budget)

        client.versions_frame(list(world.EXAMPLE_IOS_APPS))  # the same answers, from the cache
        assert client.saved == client.spent and client.requests_sent == 2
        assert meter.label.value == _meter_text(client)
        assert f"{client.saved:,} credits saved by cached answers" in meter.label.value


@pytest.mark.parametrize(
    ("spent", "style", "value", "percent"),
    [
        (0, "", 0, 0),
        (800, "", 800, 80),
        (801, "warning", 801, 80),
        (999, "warning", 999, 99),
        (1000, "danger", 1000, 100),
        (1500, "danger", 1000, 150),
    ],
)
def test_meter_bar_style_at_thresholds(opened, spent, style, value, percent):
    fake = SimpleNamespace(spent=spent, saved=3_003, budget=1_000, requests_sent=7, watch=lambda callback: lambda: None)
    meter = CreditMeter(fake)
    opened(meter)
    assert (meter.bar.bar_style, meter.bar.value, meter.bar.max) == (style, value, 1_000)
    assert (
        meter.label.value
        == f"{spent:,} of 1,000 credits spent ({percent}%) · 7 requests · 3,003 credits saved by cached answers"
    )


def test_meter_danger_when_the_budget_is_spent(make_client, tmp_path, opened):
    with make_client(cache_dir=tmp_path / "cache", budget=1_001) as client:
        meter = CreditMeter(client)
        opened(meter)
        client.benchmarks_frame(**BENCH)
        assert client.spent == 1_001
        assert meter.bar.bar_style == "danger" and meter.bar.value == meter.bar.max == 1_001
        assert meter.label.value.startswith("1,001 of 1,001 credits spent (100%)")


def test_meter_without_budget(client, opened):
    meter = CreditMeter(client)
    opened(meter)
    assert meter.bar.layout.display == "none"
    client.metadata_frame("3233849169")
    assert (
        meter.label.value
        == f"{client.spent:,} credits spent (no budget set) · 1 request · 0 credits saved by cached answers"
    )
    client.budget = 100  # set later: refresh() shows the bar
    meter.refresh()
    assert meter.bar.layout.display is None and meter.bar.value == client.spent and meter.bar.max == 100


def test_meter_uses_the_default_client(fresh_default, opened):
    client = sf.configure(sandbox=True, today=SANDBOX_TODAY, progress=False)
    meter = CreditMeter()
    opened(meter)
    assert meter.client is client


def test_meter_close_stops_updates(client, opened):
    meter = CreditMeter(client)
    bar, label = meter.bar, meter.label
    client.metadata_frame("3233849169")
    shown = label.value
    meter.close()
    meter.close()  # twice is fine
    client.metadata_frame("361252007")
    assert label.value == shown and client.requests_sent == 2
    assert meter.comm is None and bar.comm is None and label.comm is None


# -- RankExplorer --------------------------------------------------------------------------------


def test_rank_explorer_defaults(history, opened):
    explorer = RankExplorer(history)
    opened(explorer)
    assert isinstance(explorer, ipywidgets.VBox)
    assert explorer.keywords.options == tuple(KEYWORDS) and explorer.keywords.value == ("photo editor",)
    offered = [app for _, app in explorer.apps.options]
    assert 5 < len(offered) <= 25
    assert explorer.apps.value == tuple(offered[:5])
    medians = history.filter(pl.col("app_id").is_in(offered)).group_by("app_id").agg(pl.col("rank").median())
    best = dict(medians.iter_rows())
    assert [best[a] for a in offered] == sorted(best[a] for a in offered)
    assert explorer.dates.value == (START, END)
    assert explorer.dates.options[0] == ("2026-08-21", START)
    assert explorer.summary.value == "5 apps · 1 keyword · 2026-08-21 to 2026-11-18 (90 days)"
    assert bytes(explorer.chart.value).startswith(PNG) and explorer.chart.format == "png"
    assert len(explorer.figure.axes) == 1


def test_rank_explorer_controls_redraw(history, names, world, opened):
    apps = list(world.EXAMPLE_IOS_APPS[:3])
    titles = dict(names.iter_rows())
    explorer = RankExplorer(history, apps, names=names)
    opened(explorer)
    assert explorer.apps.options == tuple((titles[a], a) for a in apps)
    assert explorer.apps.value == tuple(apps)
    labels = _line_labels(explorer.figure.axes[0])
    assert len(labels) == 3 and all(_names_app(label, a, titles[a]) for label, a in zip(labels, apps, strict=True))

    first = explorer.figure
    explorer.keywords.value = ("photo editor", "meditation")
    assert explorer.figure is not first and len(explorer.figure.axes) == 2
    assert explorer.summary.value.startswith("3 apps · 2 keywords · ")

    explorer.apps.value = (apps[1],)
    (label,) = _line_labels(explorer.figure.axes[0])
    assert _names_app(label, apps[1], titles[apps[1]])

    explorer.dates.value = (date(2026, 10, 1), date(2026, 10, 31))
    assert explorer.summary.value == "1 app · 2 keywords · 2026-10-01 to 2026-10-31 (31 days)"
    for ax in explorer.figure.axes:  # the 31 days, with at most a small margin
        low, high = ax.get_xlim()
        assert mdates.date2num(date(2026, 10, 1)) - 3 <= low <= mdates.date2num(date(2026, 10, 1))
        assert mdates.date2num(date(2026, 10, 31)) <= high <= mdates.date2num(date(2026, 10, 31)) + 3
    assert bytes(explorer.chart.value).startswith(PNG)


def test_rank_explorer_empty_selection(history, opened):
    explorer = RankExplorer(history)
    opened(explorer)
    explorer.apps.value = ()
    assert explorer.figure is None and bytes(explorer.chart.value) == b"" and explorer.png == b""
    assert explorer.summary.value == "No chart: select at least an app."
    # a message where the chart was, never an empty image (a broken-image icon)
    assert explorer.chart.layout.display == "none" and explorer.summary.layout.display == "none"
    assert explorer.note.layout.display is None
    assert explorer.note.value == "<p><em>No chart: select at least an app.</em></p>"
    explorer.keywords.value = ()
    assert explorer.summary.value == "No chart: select at least an app and a keyword."
    explorer.apps.value = (explorer.apps.options[0][1],)
    assert explorer.summary.value == "No chart: select at least a keyword."
    explorer.keywords.value = ("meditation",)
    assert explorer.figure is not None and bytes(explorer.chart.value).startswith(PNG)
    assert explorer.chart.layout.display is None and explorer.note.layout.display == "none"
    assert explorer.summary.layout.display is None


def test_rank_explorer_max_apps(history, world, opened):
    apps = list(world.EXAMPLE_IOS_APPS)
    explorer = RankExplorer(history, apps, max_apps=3)
    opened(explorer)
    assert explorer.apps.value == tuple(apps[:3])
    explorer.apps.value = tuple(apps)
    assert "showing the first 3 of 6 selected apps" in explorer.summary.value
    assert len(_line_labels(explorer.figure.axes[0])) == 3


def test_rank_explorer_notes_apps_not_in_the_history(history, opened):
    explorer = RankExplorer(history, ["999999999", "3233849169"])
    opened(explorer)
    assert explorer.absent_apps == ("999999999",)
    assert "not in this history: 999999999" in explorer.summary.value
    assert bytes(explorer.chart.value).startswith(PNG)


def test_rank_explorer_takes_pandas_and_rank_history(history, opened):
    small = history.filter(pl.col("date") >= date(2026, 11, 1))
    explorer = RankExplorer(small.to_pandas(), ["3233849169"], names={"3233849169": "Photo Editor"})
    opened(explorer)
    assert explorer.apps.options == (("Photo Editor", "3233849169"),)
    assert explorer.dates.value == (date(2026, 11, 1), END)

    ranks = sf.rank_history(small, ["3233849169", "1395556972"], keywords=["photo editor", "meditation"])
    explorer = RankExplorer(ranks)
    opened(explorer)
    assert {app for _, app in explorer.apps.options} <= {"3233849169", "1395556972"}
    assert explorer.keywords.options == ("photo editor", "meditation")
    assert bytes(explorer.chart.value).startswith(PNG)


@pytest.mark.parametrize(
    ("make", "kwargs", "words"),
    [
        (lambda h: h.clear(), {}, "empty"),
        (lambda h: h.drop("rank"), {}, "without rank"),
        (lambda h: h.rows(), {}, "list"),
        (lambda h: h, {"max_apps": 0}, "max_apps"),
        (lambda h: h, {"max_apps": 11}, "from 1 to 10"),
        (lambda h: h, {"names": pl.DataFrame({"id": ["1"]})}, "names"),
        (lambda h: h, {"apps": []}, "apps"),
    ],
)
def test_rank_explorer_refuses_bad_input(history, make, kwargs, words):
    before = len(widget_module._instances)
    with pytest.raises(sf.InvalidParameterError, match=words):
        RankExplorer(make(history), **kwargs)
    assert len(widget_module._instances) == before  # refused before any widget was made


def test_rank_explorer_redraw_is_public_and_close_closes(history, opened):
    explorer = RankExplorer(history)
    controls = (explorer.keywords, explorer.apps, explorer.dates, explorer.chart, explorer.summary)
    explorer.redraw()
    assert bytes(explorer.chart.value).startswith(PNG)
    explorer.close()
    assert all(c.comm is None for c in controls) and explorer.comm is None


# -- BenchmarkExplorer ------------------------------------------------------------------------


def test_benchmarks_ask_before_spending_then_fetch_on_click(client, opened):
    explorer = BenchmarkExplorer(client)
    opened(explorer)
    plan = client.plan("benchmarks_frame", **BENCH)
    assert isinstance(explorer, ipywidgets.VBox)
    assert explorer.country.options == ("us", "gb", "de", "fr", "jp")
    assert explorer.device.options == catalog.ENDPOINTS["benchmarks"].devices
    assert explorer.channel.options == catalog.CHANNELS["iphone"]
    assert explorer.cost.value == f"us · iphone · free · all: not cached: 1 request, at most {plan.estimate:,} credits"
    assert not explorer.fetch_button.disabled
    assert explorer.fetch_button.description == f"Fetch: up to {plan.estimate:,} credits"
    assert client.requests_sent == 0 and explorer.frame is None and bytes(explorer.chart.value) == b""
    assert explorer.highlight.options == (("(none)", None),)

    explorer.fetch_button.click()
    assert client.requests_sent == 1 and client.spent == plan.estimate
    assert explorer.cost.value == "us · iphone · free · all: cached: draws at once, 0 credits"
    assert explorer.fetch_button.disabled
    assert explorer.frame is not None and explorer.frame.height > 0
    assert bytes(explorer.chart.value).startswith(PNG) and explorer.figure is not None
    assert f"fetched for {client.spent:,} credits" in explorer.status.value
    assert explorer.meter.label.value.startswith(f"{client.spent:,} credits spent")

    categories = explorer.frame.select("category", "category_name").unique()
    assert len(explorer.highlight.options) == 1 + categories.height
    code, name = categories.row(0)
    assert (f"{name} ({code})", code) in explorer.highlight.options

    explorer.fetch_button.click()  # nothing left to fetch
    assert client.requests_sent == 1


def test_benchmarks_channels_follow_the_device(client, opened):
    explorer = BenchmarkExplorer(client)
    opened(explorer)
    explorer.channel.value = "search"
    explorer.device.value = "android"
    assert explorer.channel.options == catalog.CHANNELS["android"]
    assert explorer.channel.value == "search"  # kept: android has it too
    assert explorer.cost.value.startswith("us · android · free · search: not cached")
    explorer.device.value = "iphone"
    explorer.channel.value = "browse"
    explorer.device.value = "android"
    assert explorer.channel.value == "all"  # browse is iphone's only
    assert client.requests_sent == 0
    explorer.type.value = "paid"
    assert explorer.cost.value.startswith("us · android · paid · all: not cached")


def test_benchmarks_cached_selection_draws_without_a_request(client, opened):
    explorer = BenchmarkExplorer(client, countries="us,gb")
    opened(explorer)
    explorer.fetch_button.click()
    assert client.requests_sent == 1
    explorer.country.value = "gb"
    assert explorer.frame is None and bytes(explorer.chart.value) == b"" and not explorer.fetch_button.disabled
    assert "not cached" in explorer.cost.value
    explorer.country.value = "us"
    assert client.requests_sent == 1
    assert explorer.frame is not None and bytes(explorer.chart.value).startswith(PNG)
    assert "cached: draws at once" in explorer.cost.value
    assert "drawn before in this explorer: no call, 0 credits" in explorer.status.value


def test_benchmarks_fetch_at_once_below_confirm_above(client, opened):
    explorer = BenchmarkExplorer(client, countries=["us", "gb"], confirm_above=5_000)
    opened(explorer)
    assert client.requests_sent == 1 and explorer.frame is not None
    assert explorer.fetch_button.disabled and bytes(explorer.chart.value).startswith(PNG)
    explorer.country.value = "gb"
    assert client.requests_sent == 2 and set(explorer.frame["country"]) == {"gb"}


def test_benchmarks_budget_too_small_is_shown_not_raised(make_client, tmp_path, opened):
    with make_client(cache_dir=tmp_path / "cache", budget=500) as client:
        explorer = BenchmarkExplorer(client)
        opened(explorer)
        assert "more than the 500 left in the budget" in explorer.cost.value
        explorer.fetch_button.click()
        assert client.requests_sent == 0 and explorer.frame is None
        assert explorer.status.value.startswith("Not fetched: this could cost up to 1,001 credits")
        assert "budget has 500 left" in explorer.status.value

        eager = BenchmarkExplorer(client, confirm_above=10_000)  # fetches at once: refused, not raised
        opened(eager)
        assert eager.status.value.startswith("Not fetched") and client.requests_sent == 0


def test_benchmarks_offline_and_refused_token_are_shown(make_client, tmp_path, opened):
    with make_client(cache_dir=tmp_path / "cache", offline=True) as client:
        explorer = BenchmarkExplorer(client, confirm_above=10_000)
        opened(explorer)
        assert "offline" in explorer.status.value and "1,001 credits" in explorer.status.value
        assert explorer.frame is None

    with make_client(cache_dir=tmp_path / "other" / "cache") as client:
        client.sandbox_service.api_keys = frozenset({"another-key"})  # the client's key is now unknown
        explorer = BenchmarkExplorer(client)
        opened(explorer)
        explorer.fetch_button.click()
        assert "refused the token" in explorer.status.value
        shown = explorer.status.value + explorer.cost.value + explorer.meter.label.value
        assert "not-the-key" not in shown and "sandbox-demo-key" not in shown


def test_benchmarks_rate_and_highlight_only_redraw(client, opened):
    explorer = BenchmarkExplorer(client, rate="impressions_to_installs")
    opened(explorer)
    assert explorer.rate.value == "impressions_to_installs"
    assert [value for _, value in explorer.rate.options] == [
        "page_views_to_installs",
        "impressions_to_page_views",
        "impressions_to_installs",
    ]
    explorer.fetch_button.click()
    plan, cost, frame, figure = explorer.plan, explorer.cost.value, explorer.frame, explorer.figure
    explorer.rate.value = "page_views_to_installs"
    assert explorer.figure is not figure
    figure = explorer.figure
    explorer.highlight.value = explorer.highlight.options[1][1]
    assert explorer.figure is not figure
    assert explorer.plan is plan and explorer.cost.value == cost and explorer.frame is frame
    assert client.requests_sent == 1


def test_benchmarks_highlight_argument_by_name(client, opened):
    frame = client.benchmarks_frame(**BENCH)  # cached: the explorer draws at once
    code, name = frame.drop_nulls("category_name").select("category", "category_name").row(0)
    explorer = BenchmarkExplorer(client, highlight=name.upper())
    opened(explorer)
    assert client.requests_sent == 1 and explorer.highlight.value == code


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"rate": "installs"}, "rate"),
        ({"countries": []}, "countries"),
        ({"countries": ["usa"]}, "country"),
        ({"confirm_above": -1}, "confirm_above"),
        ({"highlight": 3}, "highlight"),
    ],
)
def test_benchmarks_refuse_bad_arguments(client, kwargs, words):
    with pytest.raises(sf.InvalidParameterError, match=words):
        BenchmarkExplorer(client, **kwargs)


def test_benchmarks_close_closes_the_meter(client, opened):
    explorer = BenchmarkExplorer(client)
    meter = explorer.meter
    explorer.close()
    assert explorer.comm is None and meter.comm is None and explorer.fetch_button.comm is None
    client.metadata_frame("3233849169")
    assert meter.label.value.startswith("0 credits spent")


def test_benchmarks_with_a_fixed_range_draw_what_the_notebook_fetched(make_client, tmp_path):
    with make_client(cache_dir=tmp_path) as client:
        fetched = client.benchmarks_frame(countries="us", channels="all", start="2026-10-01", end="2026-10-31")
        sent = client.requests_sent
        explorer = BenchmarkExplorer(client, countries="us", start="2026-10-01", end="2026-10-31")
        try:
            assert client.requests_sent == sent and explorer.frame is not None
            assert explorer.frame.equals(fetched) and "cached" in explorer.cost.value
            assert explorer.params["start"] == "2026-10-01" and explorer.figure is not None
            # the days read as a range, never as two more items of the selection
            assert (
                explorer.cost.value
                == "us · iphone · free · all · 2026-10-01 to 2026-10-31: cached: draws at once, 0 credits"
            )
        finally:
            explorer.close()
        explorer = BenchmarkExplorer(client, countries="us", start=date(2026, 10, 1))
        try:
            assert explorer.cost.value.startswith("us · iphone · free · all · from 2026-10-01: ")
        finally:
            explorer.close()
        with pytest.raises(sf.InvalidParameterError, match="end"):
            BenchmarkExplorer(client, countries="us", start="2026-10-31", end="2026-10-01")


def test_benchmarks_say_categories(client, opened):
    explorer = BenchmarkExplorer(client, confirm_above=10_000)
    opened(explorer)
    categories = explorer.frame["category"].n_unique()
    assert categories > 1
    assert explorer.status.value == f"{categories} categories (fetched for {client.spent:,} credits)."


# -- what a notebook keeps: the display outputs ---------------------------------------------------


def _png(output) -> bytes:
    return base64.b64decode(output.data["image/png"])


def test_rank_explorer_output_holds_the_last_chart(shown, history, opened):
    explorer = RankExplorer(history)
    opened(explorer)
    display(explorer)
    view, chart = shown.outputs
    assert view.data["application/vnd.jupyter.widget-view+json"]["model_id"] == explorer.model_id
    assert view.data["text/plain"].startswith("RankExplorer controls")  # what a reader without the kernel sees
    display_id = chart.transient["display_id"]
    assert display_id.startswith("storeframes-RankExplorer-") and not chart.update
    assert _png(chart) == explorer.png and explorer.png.startswith(PNG)
    assert explorer.hover is not None and explorer.png == explorer.hover.png
    assert chart.data["text/html"] == explorer.hover.html  # where HTML shows: the chart, each point hovers
    assert chart.data["text/html"].count("<span title=") > 90  # 90 days of 5 apps: points on a spot share one
    assert chart.data["text/plain"] == "5 apps · 1 keyword · 2026-08-21 to 2026-11-18 (90 days)"
    assert chart.metadata == {}  # confined: a narrow cell shrinks it, as a static chart
    assert explorer.children[-1].layout.display == "none"  # the chart shows once, in the output
    # what JupyterLab and an HTML export show: the same PNG, saying in words what it shows (and that it hovers)
    alt = explorer.figure.alt
    assert f'<img src="data:image/png;base64,{chart.data["image/png"]}" ' in chart.data["text/html"]
    assert f'alt="{html.escape(explorer.hover.description, quote=True)}"' in chart.data["text/html"]
    assert alt.startswith("Chart. Keyword ranks, us · iphone, 2026-08-21 to 2026-11-18.") and "Key: " in alt

    first = explorer.png
    explorer.apps.value = explorer.apps.value[:2]
    update = shown.outputs[-1]
    assert update.update and update.transient == {"display_id": display_id}
    assert _png(update) == explorer.png != first
    assert update.data["text/html"] == explorer.hover.html and explorer.hover.points["app_id"].n_unique() == 2
    assert update.data["text/plain"].startswith("2 apps · 1 keyword")

    explorer.keywords.value = ()
    update = shown.outputs[-1]
    assert update.update and update.transient == {"display_id": display_id} and "image/png" not in update.data
    assert explorer.hover is None and explorer.figure is None
    assert update.data == {
        "text/html": "<p><em>No chart: select at least a keyword.</em></p>",
        "text/plain": "No chart: select at least a keyword.",
    }
    assert len(shown.outputs) == 4


def _last(shown, first):
    """The last data the output ``first`` began shows (itself, or its last update)."""
    return [o for o in shown.outputs if o.transient == first.transient][-1]


def test_benchmark_explorer_output_before_and_after_fetch(shown, client, opened):
    explorer = BenchmarkExplorer(client)
    opened(explorer)
    display(explorer)
    view, lines, chart = shown.outputs
    assert "application/vnd.jupyter.widget-view+json" in view.data
    assert chart.data["text/plain"] == "No chart yet: us · iphone · free · all is not fetched."
    explorer.fetch_button.click()
    update = shown.outputs[-1]
    assert update.update and update.transient == chart.transient
    assert _png(update) == explorer.png and explorer.png.startswith(PNG)
    categories = explorer.frame["category"].n_unique()
    assert update.data["text/plain"] == f"Conversion benchmarks, us · iphone · free · all: {categories} categories"


def test_benchmark_explorer_output_keeps_the_cost_credits_and_status(make_client, shown, tmp_path, opened):
    with make_client(cache_dir=tmp_path / "cache", budget=5_000) as client:
        explorer = BenchmarkExplorer(client)
        opened(explorer)
        display(explorer)
        view, lines, chart = shown.outputs  # the lines above the chart, each an output of its own
        assert view.data["text/plain"] == (
            "BenchmarkExplorer controls (they work while the notebook's kernel runs; "
            "the cost, credits and status are the next output, then the chart)"
        )
        assert lines.transient["display_id"] != chart.transient["display_id"] and "image/png" not in lines.data
        assert lines.data["text/plain"].splitlines() == [
            "us · iphone · free · all: not cached: 1 request, at most 1,001 credits",
            "0 of 5,000 credits spent (0%) · 0 requests · 0 credits saved by cached answers",
            "Not fetched yet: click the button to spend up to 1,001 credits.",
        ]
        page = lines.data["text/html"]
        assert '<progress value="0" max="5000"' in page
        assert "<div>Not fetched yet: click the button to spend up to 1,001 credits.</div>" in page
        # shown once: in the outputs, not in the widget's view too
        assert [w.layout.display for w in (explorer.cost, explorer.status, explorer.meter)] == ["none"] * 3

        explorer.fetch_button.click()
        categories = explorer.frame["category"].n_unique()
        after = _last(shown, lines)
        assert after.update and after.data["text/plain"].splitlines() == [
            "us · iphone · free · all: cached: draws at once, 0 credits",
            "1,001 of 5,000 credits spent (20%) · 1 request · 0 credits saved by cached answers",
            f"{categories} categories (fetched for 1,001 credits).",
        ]
        assert '<progress value="1001" max="5000"' in after.data["text/html"]
        assert _png(_last(shown, chart)) == explorer.png

        charts = sum(o.transient == chart.transient for o in shown.outputs)
        client.metadata_frame(
            "3233849169"
        )  # another cell spends: the meter's line follows, the chart is not sent again
        assert shown.outputs[-1].transient == lines.transient
        assert shown.outputs[-1].data["text/plain"].splitlines()[1] == _meter_text(client)
        assert sum(o.transient == chart.transient for o in shown.outputs) == charts


def test_meter_is_an_output_updated_in_place(make_client, shown, tmp_path, opened):
    with make_client(cache_dir=tmp_path / "cache", budget=10_000) as client:
        meter = CreditMeter(client)
        opened(meter)
        display(meter)
        (first,) = shown.outputs  # the whole meter: no widget view that would need the kernel
        assert (
            first.data["text/plain"]
            == "0 of 10,000 credits spent (0%) · 0 requests · 0 credits saved by cached answers"
        )
        assert '<progress value="0" max="10000"' in first.data["text/html"]
        client.metadata_frame("3233849169")
        last = shown.outputs[-1]
        assert last.update and last.transient == first.transient
        assert last.data["text/plain"] == meter.text == _meter_text(client) and client.spent > 0
        assert f'<progress value="{client.spent}" max="10000"' in last.data["text/html"]


def test_widgets_outside_ipython_display_nothing(history, client, opened, capsys):
    assert get_ipython() is None
    explorer = RankExplorer(history)
    meter = CreditMeter(client)
    opened(explorer)
    opened(meter)
    explorer.apps.value = explorer.apps.value[:1]
    explorer.redraw()
    client.metadata_frame("3233849169")
    assert explorer.png.startswith(PNG) and explorer.chart.layout.display is None
    assert meter.text == _meter_text(client)
    assert capsys.readouterr() == ("", "")


# -- the items ------------------------------------------------------------------------------


def _line_colors(explorer) -> dict[str, str]:
    return {
        line.get_label(): line.get_color()
        for line in explorer.figure.axes[0].get_lines()
        if not line.get_label().startswith("_")
    }


def test_rank_explorer_apps_keep_their_colours(history, opened):
    explorer = RankExplorer(history)
    opened(explorer)
    a, b, c, _, _ = explorer.apps.value
    before = _line_colors(explorer)
    extra = explorer.apps.options[7][1]
    explorer.apps.value = (c, extra, a)
    after = _line_colors(explorer)
    assert after[c] == before[c] and after[a] == before[a]
    assert after[extra] not in before.values()  # a colour no other app had
    explorer.apps.value = (b, a)
    assert _line_colors(explorer) == {b: before[b], a: before[a]}
    assert explorer.colors[extra] == after[extra]


def test_rank_explorer_days_readout_says_both_dates(history, opened):
    explorer = RankExplorer(history)
    opened(explorer)
    assert explorer.dates.readout is False  # its own readout clipped them, joined by a hyphen
    assert explorer.days_shown.value == "2026-08-21 to 2026-11-18 (90 days)"
    explorer.dates.value = (date(2026, 10, 1), date(2026, 10, 31))
    assert explorer.days_shown.value == "2026-10-01 to 2026-10-31 (31 days)"
    for control in (explorer.keywords, explorer.apps, explorer.dates):
        assert control.style.description_width == "initial"


def test_benchmarks_layout_shows_whole_texts_and_the_meter_by_the_button(client, opened):
    explorer = BenchmarkExplorer(client)
    opened(explorer)
    assert explorer.fetch_button.layout.width == "auto"  # "Fetch: up to 1,001 credits", whole
    assert explorer.highlight.style.description_width == "initial"
    (row,) = [r for r in explorer.children if explorer.fetch_button in getattr(r, "children", ())]
    assert row.children == (explorer.fetch_button, explorer.meter)
    assert explorer.chart.layout.display == "none" and explorer.png == b""  # no broken image before a fetch
    assert explorer.note.value == "<p><em>No chart yet: us · iphone · free · all is not fetched.</em></p>"
    explorer.fetch_button.click()
    assert explorer.chart.layout.display is None and explorer.note.layout.display == "none"


def test_benchmarks_keep_the_highlight_the_user_picked(client, opened):
    explorer = BenchmarkExplorer(client, countries="us,gb", confirm_above=10_000)
    opened(explorer)
    assert ("Photo & Video (6008)", "6008") in explorer.highlight.options
    explorer.highlight.value = "6008"  # picked by hand
    explorer.channel.value = "search"
    assert explorer.highlight.value == "6008" and "not among" not in explorer.status.value
    explorer.country.value = "gb"
    assert explorer.highlight.value == "6008"
    ticks = [t.get_text() for t in explorer.figure.axes[0].get_yticklabels() if t.get_fontweight() == "bold"]
    assert ticks == ["Photo & Video"]

    explorer.device.value = "android"  # no category 6008 there: said, and remembered
    assert explorer.highlight.value is None
    assert "Photo &amp; Video (6008) is not among these categories: nothing is highlighted." in explorer.status.value
    explorer.device.value = "iphone"
    assert explorer.highlight.value == "6008" and "not among" not in explorer.status.value

    explorer.highlight.value = None  # "(none)" by hand is kept too
    explorer.country.value = "us"
    assert explorer.highlight.value is None


def test_benchmarks_highlight_box_says_none_when_the_selection_lacks_it(client, opened):
    explorer = BenchmarkExplorer(client, confirm_above=10_000, highlight="6008")
    opened(explorer)
    assert explorer.highlight.label == "Photo & Video (6008)"
    explorer.device.value = "android"  # no category 6008 there
    assert (explorer.highlight.index, explorer.highlight.label, explorer.highlight.value) == (0, "(none)", None)
    assert explorer.status.value.endswith(
        " Photo &amp; Video (6008) is not among these categories: nothing is highlighted."
    )
    explorer.device.value = "iphone"
    assert explorer.highlight.label == "Photo & Video (6008)"
    explorer.highlight.value = None  # set from Python: the box shows "(none)" too, never a blank
    assert (explorer.highlight.index, explorer.highlight.label) == (0, "(none)")


def test_benchmarks_status_names_a_highlight_picked_by_hand(client, opened):
    explorer = BenchmarkExplorer(client, confirm_above=10_000, highlight="6008")
    opened(explorer)
    explorer.device.value = "android"
    categories = explorer.frame["category"].n_unique()
    told = f"{categories} categories (fetched for {client.spent - 1_001:,} credits)."
    assert explorer.status.value.startswith(told) and "nothing is highlighted" in explorer.status.value
    label, code = explorer.highlight.options[1]
    explorer.highlight.value = code  # picked by hand
    assert explorer.status.value == html.escape(f"{told} {label} is highlighted.")
    explorer.highlight.index = 0  # "(none)" by hand: nothing to say about it
    assert explorer.status.value == told


def test_benchmarks_highlight_stays_in_the_box_before_a_fetch(client, opened):
    explorer = BenchmarkExplorer(client, countries="us,gb")
    opened(explorer)
    explorer.fetch_button.click()
    explorer.highlight.value = "6008"
    explorer.country.value = "gb"  # not fetched yet: the box keeps the choice
    assert explorer.frame is None and explorer.highlight.value == "6008"
    assert explorer.highlight.options == (("(none)", None), ("Photo & Video (6008)", "6008"))
    explorer.fetch_button.click()
    assert explorer.highlight.value == "6008" and len(explorer.highlight.options) > 2


def test_benchmarks_rate_without_any_value_is_one_line(client, opened):
    explorer = BenchmarkExplorer(client, confirm_above=10_000, rate="impressions_to_installs")
    opened(explorer)
    explorer.device.value = "android"  # the service gives no impressions rates for android
    assert (
        explorer.frame is not None and explorer.frame["impressions_to_installs"].null_count() == explorer.frame.height
    )
    assert explorer.figure is None and explorer.png == b"" and explorer.chart.layout.display == "none"
    assert explorer.note.value == (
        "<p><em>No data: the service gives no impressions → installs rate "
        "for any category of us · android · free · all.</em></p>"
    )
    explorer.rate.value = "page_views_to_installs"
    assert explorer.figure is not None and explorer.png.startswith(PNG)


def test_flipping_back_to_a_drawn_selection_makes_no_call(client, opened):
    explorer = BenchmarkExplorer(client, countries="us,gb", confirm_above=10_000)
    opened(explorer)
    explorer.country.value = "gb"
    sent, spent, label = client.requests_sent, client.spent, explorer.meter.label.value
    assert (sent, client.saved) == (2, 0)
    for country in ("us", "gb", "us", "gb"):
        explorer.country.value = country
        assert explorer.frame is not None and set(explorer.frame["country"]) == {country}
        assert (client.requests_sent, client.saved) == (sent, 0)  # no call: nothing paid, nothing "saved" again
        assert "drawn before in this explorer: no call, 0 credits" in explorer.status.value
    assert (client.requests_sent, client.spent, client.saved) == (sent, spent, 0)
    assert explorer.meter.label.value == label

    other = BenchmarkExplorer(client, countries="us,gb", confirm_above=10_000)  # the cache answers it: counted once
    opened(other)
    assert client.saved == 1_001 and "from the cache, 0 credits" in other.status.value
    for country in ("gb", "us", "gb", "us"):
        other.country.value = country
    assert client.saved == 2_002 and client.requests_sent == sent
    assert other.meter.label.value.endswith("· 2,002 credits saved by cached answers")


def _png_size(png: bytes) -> tuple[int, int]:
    """A PNG's width and height in pixels (its IHDR chunk)."""
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def test_explorer_charts_shrink_to_the_cell_width_at_their_own_size(shown, history, client, opened):
    explorer = RankExplorer(history)
    opened(explorer)
    display(explorer)
    _, chart = shown.outputs
    assert chart.metadata == {}  # "unconfined" made JupyterLab scroll it sideways instead
    assert _png_size(_png(chart)) == (1000, 390)  # its pixels unchanged: sharp where the cell is wide
    explorer.apps.value = explorer.apps.value[:2]
    update = shown.outputs[-1]
    assert update.update and update.metadata == {} and _png_size(_png(update)) == (1000, 390)

    boxed = BenchmarkExplorer(client)
    opened(boxed)
    boxed.fetch_button.click()  # not shown in IPython: the chart is in the widget's own chart area
    assert boxed.png.startswith(PNG) and boxed.chart.layout.display is None
    for image in (explorer.chart, boxed.chart):
        layout = image.layout
        assert (layout.max_width, layout.height, layout.margin) == ("100%", "auto", "0")  # was max_width "none"
    assert boxed.chart in boxed.children[-1].children and boxed.children[-1].layout.width == "100%"
