"""The notebook widgets, driven as a notebook would: set values, click, read what they show."""

from __future__ import annotations

from datetime import date
from types import SimpleNamespace

import ipywidgets
import matplotlib.dates as mdates
import polars as pl
import pytest
from ipywidgets.widgets import widget as widget_module

import storeframes as sf
from storeframes import catalog, widgets
from storeframes.widgets import BenchmarkExplorer, CreditMeter, RankExplorer

from .conftest import SANDBOX_TODAY

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


def _client(tmp_path, **options):
    return sf.sandbox.client(today=SANDBOX_TODAY, progress=False, cache_dir=tmp_path / "cache", **options)


@pytest.fixture
def client(tmp_path):
    with _client(tmp_path) as made:
        yield made


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
    tail = f"{client.requests_sent:,} request{'' if client.requests_sent == 1 else 's'} · {client.saved:,} saved by the cache"
    if client.budget is None:
        return f"{client.spent:,} credits spent (no budget set) · {tail}"
    return f"{client.spent:,} of {client.budget:,} credits spent ({100 * client.spent // client.budget}%) · {tail}"


def test_module_api():
    assert widgets.__all__ == ["AppCard", "BenchmarkExplorer", "CreditMeter", "RankExplorer", "app_card"]
    assert callable(widgets.app_card)
    for name in ("CreditMeter", "RankExplorer", "BenchmarkExplorer"):
        assert ">>>" in getattr(widgets, name).__doc__


# -- CreditMeter -------------------------------------------------------------------------------


def test_meter_follows_fetches_and_cache_hits(tmp_path, opened, world):
    with _client(tmp_path, budget=10_000) as client:
        meter = CreditMeter(client)
        opened(meter)
        assert isinstance(meter, ipywidgets.HBox)
        assert meter.label.value == "0 of 10,000 credits spent (0%) · 0 requests · 0 saved by the cache"
        assert (meter.bar.value, meter.bar.max, meter.bar.bar_style) == (0, 10_000, "")

        client.metadata_frame(list(world.EXAMPLE_IOS_APPS))  # 6 apps: 2 requests
        assert client.spent > 0 and client.requests_sent == 2
        assert meter.label.value == _meter_text(client)
        assert (meter.bar.value, meter.bar.max) == (client.spent, client.budget)

        client.versions_frame(list(world.EXAMPLE_IOS_APPS))  # the same answers, from the cache
        assert client.saved == client.spent and client.requests_sent == 2
        assert meter.label.value == _meter_text(client)
        assert f"{client.saved:,} saved by the cache" in meter.label.value


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
    assert meter.label.value == f"{spent:,} of 1,000 credits spent ({percent}%) · 7 requests · 3,003 saved by the cache"


def test_meter_danger_when_the_budget_is_spent(tmp_path, opened):
    with _client(tmp_path, budget=1_001) as client:
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
    assert meter.label.value == f"{client.spent:,} credits spent (no budget set) · 1 request · 0 saved by the cache"
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
    assert explorer.figure is None and bytes(explorer.chart.value) == b""
    assert explorer.summary.value == "No chart: select at least an app."
    explorer.keywords.value = ()
    assert explorer.summary.value == "No chart: select at least an app and a keyword."
    explorer.apps.value = (explorer.apps.options[0][1],)
    assert explorer.summary.value == "No chart: select at least a keyword."
    explorer.keywords.value = ("meditation",)
    assert explorer.figure is not None and bytes(explorer.chart.value).startswith(PNG)


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
    assert "from the cache, 0 credits" in explorer.status.value


def test_benchmarks_fetch_at_once_below_confirm_above(client, opened):
    explorer = BenchmarkExplorer(client, countries=["us", "gb"], confirm_above=5_000)
    opened(explorer)
    assert client.requests_sent == 1 and explorer.frame is not None
    assert explorer.fetch_button.disabled and bytes(explorer.chart.value).startswith(PNG)
    explorer.country.value = "gb"
    assert client.requests_sent == 2 and set(explorer.frame["country"]) == {"gb"}


def test_benchmarks_budget_too_small_is_shown_not_raised(tmp_path, opened):
    with _client(tmp_path, budget=500) as client:
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


def test_benchmarks_offline_and_refused_token_are_shown(tmp_path, opened):
    with _client(tmp_path, offline=True) as client:
        explorer = BenchmarkExplorer(client, confirm_above=10_000)
        opened(explorer)
        assert "offline" in explorer.status.value and "1,001 credits" in explorer.status.value
        assert explorer.frame is None

    with _client(tmp_path / "other") as client:
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


def test_benchmarks_with_a_fixed_range_draw_what_the_notebook_fetched(tmp_path):
    with sf.sandbox.client(today=SANDBOX_TODAY, cache_dir=tmp_path, progress=False) as client:
        fetched = client.benchmarks_frame(countries="us", channels="all", start="2026-10-01", end="2026-10-31")
        sent = client.requests_sent
        explorer = BenchmarkExplorer(client, countries="us", start="2026-10-01", end="2026-10-31")
        try:
            assert client.requests_sent == sent and explorer.frame is not None
            assert explorer.frame.equals(fetched) and "cached" in explorer.cost.value
            assert explorer.params["start"] == "2026-10-01" and explorer.figure is not None
        finally:
            explorer.close()
        with pytest.raises(sf.InvalidParameterError, match="end"):
            BenchmarkExplorer(client, countries="us", start="2026-10-31", end="2026-10-01")
