"""storeframes.plots: the figures' artists checked against sandbox frames and small hand-built ones.

Every chart is a headless ``matplotlib.figure.Figure``; the tests read its Axes, lines,
patches, texts and legends instead of looking at pixels.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings
from collections import Counter
from datetime import date, timedelta

import matplotlib.dates as mdates
import numpy as np
import polars as pl
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import same_color
from matplotlib.figure import Figure

import storeframes as sf
from storeframes import plots
from storeframes.plots import RATE_LABELS, TARGET_MARKERS
from tests.conftest import ROOT, SANDBOX_TODAY

KEYWORDS = ["photo editor", "photo filters", "collage maker"]
START = SANDBOX_TODAY - timedelta(days=91)
END = SANDBOX_TODAY - timedelta(days=2)
ORANGE = "#ff7f0e"


# -- data -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """One sandbox client, every frame fetched once."""
    client = sf.sandbox.client(today=SANDBOX_TODAY, progress=False, cache_dir=tmp_path_factory.mktemp("plots-cache"))
    try:
        world = client.sandbox_service.world
        history = client.search_history_frame(KEYWORDS, start=START, end=END)
        mine = world.EXAMPLE_IOS_APPS[0]
        first_day = history.filter(pl.col("keyword") == "photo editor", pl.col("date") == pl.col("date").min())
        rivals = [a for a in first_day.sort("rank")["app_id"].to_list() if a != mine][:3]
        apps = [mine, *rivals]
        outsider = world.EXAMPLE_IOS_APPS[1]  # its changes are in the frame, it is never charted
        assert outsider not in apps
        with warnings.catch_warnings():  # the sandbox sends targets (title, subtitle) the flattener names once
            warnings.simplefilter("ignore", sf.UnknownFieldWarning)
            changes = client.changes_frame([*apps, outsider], start=START, end=END)
        yield {
            "history": history,
            "apps": apps,
            "outsider": outsider,
            "metadata": client.metadata_frame(apps),
            "changes": changes,
            "benchmarks": client.benchmarks_frame(countries="us", channels="all,search,browse"),
            "two_countries": client.benchmarks_frame(countries="us,gb", channels="all"),
        }
    finally:
        client.close()


def day(n: int) -> date:
    return date(2026, 1, n)


def hand_history() -> pl.DataFrame:
    """Keyword "maps" over days 1-8, no results on days 3, 4 and 7; keyword "atlas" on days 1-8."""
    rows = [
        ("maps", 1, 1, "1"),
        ("maps", 1, 2, "2"),
        ("maps", 1, 3, "3"),
        ("maps", 2, 2, "1"),
        ("maps", 2, 1, "2"),
        ("maps", 5, 1, "1"),
        ("maps", 5, 2, "3"),
        ("maps", 6, 1, "2"),
        ("maps", 6, 5, "3"),
        ("maps", 8, 3, "1"),
        ("maps", 8, 1, "2"),
        *(("atlas", n, 1 + (n % 2), "1") for n in range(1, 9)),
        *(("atlas", n, 2 - (n % 2), "9") for n in range(1, 9)),
    ]
    return pl.DataFrame(
        {
            "keyword": [r[0] for r in rows],
            "date": [day(r[1]) for r in rows],
            "rank": [r[2] for r in rows],
            "app_id": [r[3] for r in rows],
            "country": ["us"] * len(rows),
            "language": ["en"] * len(rows),
            "device": ["iphone"] * len(rows),
        }
    )


def hand_changes(rows: list[tuple[str, int, str]]) -> pl.DataFrame:
    return pl.DataFrame(
        {"app_id": [r[0] for r in rows], "date": [day(r[1]) for r in rows], "target": [r[2] for r in rows]},
        schema={"app_id": pl.String, "date": pl.Date, "target": pl.String},
    )


def hand_benchmarks(rows: list[tuple[str, str, float | None]], channel: str = "all") -> pl.DataFrame:
    """A one-series benchmarks frame from (category, name, page_views_to_installs) rows."""
    return pl.DataFrame(
        {
            "country": ["us"] * len(rows),
            "device": ["iphone"] * len(rows),
            "type": ["free"] * len(rows),
            "channel": [channel] * len(rows),
            "category": [r[0] for r in rows],
            "category_name": [r[1] for r in rows],
            "page_views_to_installs": [r[2] for r in rows],
            "impressions_to_page_views": [r[2] for r in rows],
            "impressions_to_installs": [r[2] for r in rows],
        },
        schema_overrides={"page_views_to_installs": pl.Float64},
    )


# -- artist helpers ---------------------------------------------------------------------------


def title_of(ax) -> str:
    return ax.get_title(loc="left") or ax.get_title()


def change_markers(ax) -> list:
    """The change markers: one-point lines with a marker (rank lines have a point a day)."""
    return [line for line in ax.get_lines() if len(line.get_xdata()) == 1 and line.get_marker() not in ("None", "")]


def rank_lines(ax) -> list:
    return [line for line in ax.get_lines() if len(line.get_xdata()) > 1]


def legend_texts(fig: Figure, ax=None) -> list[str]:
    legend = ax.get_legend() if ax is not None else fig.legends[0]
    assert legend is not None
    return [t.get_text() for t in legend.get_texts()]


def ydata(line) -> np.ndarray:
    return np.asarray(line.get_ydata(), dtype=float)


def expected_moves(changes: pl.DataFrame, apps, first, last, targets=None) -> pl.DataFrame:
    moves = (
        changes.select("app_id", "date", "target")
        .filter(pl.col("app_id").is_in(apps), pl.col("date").is_between(first, last))
        .unique()
    )
    keep = pl.col("target") != "size" if targets is None else pl.col("target").is_in(targets)
    return moves.filter(keep)


def label_with_codes(frame: pl.DataFrame) -> list[str]:
    """The category labels a benchmark chart should show: a name two categories share gets its code."""
    shared = frame.filter(pl.col("category_name").is_duplicated())["category"].to_list()
    return [f"{n} ({c})" if c in shared else n for c, n in frame.select("category", "category_name").iter_rows()]


def orange_patches(ax) -> list:
    return [p for p in ax.patches if same_color(p.get_facecolor()[:3], ORANGE)]


# -- rank_chart: sandbox ----------------------------------------------------------------------


def test_rank_chart_one_panel_per_keyword(data):
    fig = plots.rank_chart(data["history"], data["apps"])
    assert isinstance(fig, Figure)
    assert len(fig.axes) == len(KEYWORDS)
    for ax, keyword in zip(fig.axes, KEYWORDS, strict=True):
        assert keyword in title_of(ax)
        bottom, top = ax.get_ylim()
        assert bottom > top  # rank 1 at the top
        assert 1 in ax.get_yticks()
        assert len(ax.get_lines()) == len(data["apps"])
    assert "to" in fig.get_suptitle() and str(data["history"]["date"].min()) in fig.get_suptitle()


def test_rank_chart_one_colour_per_app_across_panels(data):
    fig = plots.rank_chart(data["history"], data["apps"])
    colours = [[line.get_color() for line in ax.get_lines()] for ax in fig.axes]
    assert all(c == colours[0] for c in colours)
    assert len(set(colours[0])) == len(data["apps"])


def test_rank_chart_lines_are_the_rank_history(data):
    apps = data["apps"]
    fig = plots.rank_chart(data["history"], apps)
    ranks = sf.rank_history(data["history"], apps)
    for ax, keyword in zip(fig.axes, KEYWORDS, strict=True):
        for line, app in zip(ax.get_lines(), apps, strict=True):
            rows = ranks.filter(pl.col("keyword") == keyword, pl.col("app_id") == app).sort("date")
            expected = rows.select(pl.col("rank").cast(pl.Float64).fill_null(float("nan")))["rank"].to_numpy()
            np.testing.assert_array_equal(ydata(line), expected)
            assert list(line.get_xdata()) == rows["date"].to_list()


def test_rank_chart_shades_each_no_data_run(data):
    fig = plots.rank_chart(data["history"], data["apps"])
    ranks = sf.rank_history(data["history"], data["apps"][:1])
    for ax, keyword in zip(fig.axes, KEYWORDS, strict=True):
        days = sorted(ranks.filter(pl.col("keyword") == keyword, pl.col("status") == "no_data")["date"].to_list())
        runs = sum(1 for i, d in enumerate(days) if i == 0 or (d - days[i - 1]).days > 1)
        assert runs > 0
        assert len(ax.patches) == runs
    assert "no data recorded" in legend_texts(fig)


def test_rank_chart_names_from_metadata_frame_dict_or_ids(data):
    apps, metadata = data["apps"], data["metadata"]
    titles = dict(metadata.select("app_id", "title").iter_rows())
    labels = legend_texts(plots.rank_chart(data["history"], apps, names=metadata))
    for app in apps:
        [label] = [t for t in labels if t.endswith(f"({app})")]
        assert label.startswith(titles[app][:20])

    names = {apps[0]: "Mine", apps[1]: "Rival"}
    labels = legend_texts(plots.rank_chart(data["history"], apps, names=names))
    assert labels[: len(apps)] == ["Mine" + f" ({apps[0]})", f"Rival ({apps[1]})", *apps[2:]]

    labels = legend_texts(plots.rank_chart(data["history"], apps))
    assert labels[: len(apps)] == apps


def test_rank_chart_same_figure_from_rank_history_frame(data):
    apps = data["apps"][:2]
    kwargs = {"keywords": ["photo filters", "collage maker"], "start": START + timedelta(days=10), "end": END}
    from_history = plots.rank_chart(data["history"], apps, **kwargs)
    from_ranks = plots.rank_chart(sf.rank_history(data["history"], data["apps"]), apps, **kwargs)
    assert len(from_history.axes) == len(from_ranks.axes) == 2
    for a, b in zip(from_history.axes, from_ranks.axes, strict=True):
        assert title_of(a) == title_of(b)
        assert len(a.patches) == len(b.patches)
        for line_a, line_b in zip(a.get_lines(), b.get_lines(), strict=True):
            assert list(line_a.get_xdata()) == list(line_b.get_xdata())
            np.testing.assert_array_equal(ydata(line_a), ydata(line_b))
    assert legend_texts(from_history) == legend_texts(from_ranks)


def test_rank_chart_keywords_and_dates_restrict_panels_and_x(data):
    first, last = START + timedelta(days=20), START + timedelta(days=40)
    fig = plots.rank_chart(data["history"], data["apps"], keywords="photo filters", start=first, end=last)
    [ax] = fig.axes
    assert "photo filters" in title_of(ax)
    for line in ax.get_lines():
        days = list(line.get_xdata())
        assert days[0] == first and days[-1] == last and len(days) == 21
    fig = plots.rank_chart(data["history"], data["apps"], keywords=["collage maker", "photo editor"])
    assert [("collage maker" in title_of(a), "photo editor" in title_of(a)) for a in fig.axes] == [
        (True, False),
        (False, True),
    ]


def test_rank_chart_into_an_axes(data):
    fig = Figure()
    ax = fig.subplots()
    apps = data["apps"][:2]
    out = plots.rank_chart(data["history"], apps, ax=ax)
    assert out is ax  # as pandas: the Axes drawn into, so a notebook shows the chart once
    assert fig.axes == [ax]
    lines = rank_lines(ax)
    assert len(lines) == len(apps) * len(KEYWORDS)
    styles = [line.get_linestyle() for line in lines[:: len(apps)]]  # the first app's line of each keyword
    assert len(set(styles)) == len(KEYWORDS)
    bottom, top = ax.get_ylim()
    assert bottom > top and 1 in ax.get_yticks()
    labels = legend_texts(fig, ax)
    assert labels[: len(apps)] == apps
    assert all(any(k in t for t in labels) for k in KEYWORDS)  # one style entry per keyword
    assert not fig.legends


def test_rank_chart_change_markers(data):
    apps, history = data["apps"], data["history"]
    first, last = history["date"].min(), history["date"].max()
    fig = plots.rank_chart(history, apps, changes=data["changes"])
    expected = expected_moves(data["changes"], apps, first, last)
    assert expected.height > 0 and "size" not in expected["target"].to_list()
    want = Counter(TARGET_MARKERS.get(t, "o") for t in expected["target"].to_list())
    for ax in fig.axes:
        assert Counter(line.get_marker() for line in change_markers(ax)) == want
    labels = legend_texts(fig)
    assert "changes:" in labels
    for target, count in expected.group_by("target").len().iter_rows():
        assert f"{target} ({count})" in labels
    assert not any(t.startswith("size (") for t in labels)
    sizes = expected_moves(data["changes"], apps, first, last, targets=["size"]).height
    assert f"{sizes} size changes not marked (targets= to mark)" in labels  # said, as changes_timeline says it


def test_rank_chart_changes_with_targets_include_size(data):
    apps, history = data["apps"], data["history"]
    first, last = history["date"].min(), history["date"].max()
    fig = plots.rank_chart(history, apps, changes=data["changes"], targets=["size", "version"])
    expected = expected_moves(data["changes"], apps, first, last, targets=["size", "version"])
    sizes = expected.filter(pl.col("target") == "size").height
    assert sizes > 0
    for ax in fig.axes:
        markers = Counter(line.get_marker() for line in change_markers(ax))
        assert markers == {TARGET_MARKERS["size"]: sizes, TARGET_MARKERS["version"]: expected.height - sizes}
    assert f"size ({sizes})" in legend_texts(fig)
    assert not any("not marked" in t for t in legend_texts(fig))


def test_rank_chart_ignores_changes_of_apps_not_charted(data):
    changes = data["changes"]
    assert changes.filter(pl.col("app_id") == data["outsider"], pl.col("target") != "size").height > 0
    only_outsider = changes.filter(pl.col("app_id") == data["outsider"])
    fig = plots.rank_chart(data["history"], data["apps"], changes=only_outsider)
    assert all(not change_markers(ax) for ax in fig.axes)
    assert "changes:" not in legend_texts(fig)


def test_rank_chart_accepts_pandas(data):
    apps = data["apps"][:2]
    from_polars = plots.rank_chart(data["history"], apps, changes=data["changes"], names=data["metadata"])
    from_pandas = plots.rank_chart(
        data["history"].to_pandas(),
        apps,
        changes=data["changes"].to_pandas(),
        names=data["metadata"].to_pandas(),
    )
    for a, b in zip(from_polars.axes, from_pandas.axes, strict=True):
        assert [len(line.get_xdata()) for line in a.get_lines()] == [len(line.get_xdata()) for line in b.get_lines()]
        for line_a, line_b in zip(rank_lines(a), rank_lines(b), strict=True):
            np.testing.assert_array_equal(ydata(line_a), ydata(line_b))
    assert legend_texts(from_polars) == legend_texts(from_pandas)


# -- rank_chart: hand-built -------------------------------------------------------------------


def test_rank_chart_exact_ranks_gaps_and_no_data_runs():
    history = hand_history()
    fig = plots.rank_chart(history, ["1", "2", "3"], keywords="maps")
    [ax] = fig.axes
    nan = float("nan")
    expected = {
        "1": [1, 2, nan, nan, 1, nan, nan, 3],
        "2": [2, 1, nan, nan, nan, 1, nan, 1],
        "3": [3, nan, nan, nan, 2, 5, nan, nan],
    }
    ranks = sf.rank_history(history, ["1", "2", "3"], keywords="maps")
    for line, app in zip(ax.get_lines(), ["1", "2", "3"], strict=True):
        np.testing.assert_array_equal(ydata(line), np.array(expected[app], dtype=float))
        from_ranks = ranks.filter(pl.col("app_id") == app)["rank"].cast(pl.Float64).fill_null(nan).to_numpy()
        np.testing.assert_array_equal(ydata(line), from_ranks)
        assert list(line.get_xdata()) == [day(n) for n in range(1, 9)]
    assert len(ax.patches) == 2  # days 3-4 and day 7
    spans = sorted((p.get_x(), p.get_x() + p.get_width()) for p in ax.patches)
    assert spans[0] == pytest.approx((mdates.date2num(day(3)) - 0.5, mdates.date2num(day(4)) + 0.5))
    assert spans[1] == pytest.approx((mdates.date2num(day(7)) - 0.5, mdates.date2num(day(7)) + 0.5))
    bottom, top = ax.get_ylim()
    assert bottom > 5 and top < 1 and 1 in ax.get_yticks()


def test_rank_chart_hatches_days_not_fetched_apart_from_days_without_data():
    fetched = [day(n) for n in (1, 2, 3, 5, 6, 8)]  # days 4 and 7 never asked for; day 3 asked, nothing recorded
    fig = plots.rank_chart(hand_history(), ["1", "2"], keywords="maps", fetched=fetched)
    [ax] = fig.axes
    bands = sorted((p.get_x(), p.get_hatch()) for p in ax.patches)
    assert bands == [
        (pytest.approx(mdates.date2num(day(3)) - 0.5), None),
        (pytest.approx(mdates.date2num(day(4)) - 0.5), "///"),
        (pytest.approx(mdates.date2num(day(7)) - 0.5), "///"),
    ]
    texts = legend_texts(fig)
    assert "no data recorded" in texts and "not fetched" in texts
    ranks = sf.rank_history(hand_history(), ["1"], keywords="maps", fetched=fetched)
    same = plots.rank_chart(ranks, ["1"])  # a rank_history frame's not_fetched days are hatched the same
    assert sorted(p.get_hatch() or "" for p in same.axes[0].patches) == ["", "///", "///"]
    nothing = plots.rank_chart(hand_history(), ["1"], keywords="maps", start=day(3), end=day(4), fetched=[day(9)])
    assert "none of these days was fetched" in nothing.texts[0].get_text()


def test_rank_chart_no_shading_without_no_data_days():
    fig = plots.rank_chart(hand_history(), ["1", "9"], keywords="atlas")
    [ax] = fig.axes
    assert not ax.patches
    assert "no data recorded" not in legend_texts(fig)


def test_rank_chart_change_on_an_unranked_day_sits_on_the_bottom_edge():
    changes = hand_changes([("1", 2, "title"), ("1", 6, "version"), ("1", 3, "icon"), ("3", 6, "screenshots")])
    fig = plots.rank_chart(hand_history(), ["1", "3"], keywords="maps", changes=changes)
    [ax] = fig.axes
    markers = {line.get_marker(): line for line in change_markers(ax)}
    assert set(markers) == {TARGET_MARKERS[t] for t in ("title", "version", "icon", "screenshots")}
    assert ydata(markers[TARGET_MARKERS["title"]])[0] == 2  # on its line: rank 2 that day
    assert ydata(markers[TARGET_MARKERS["screenshots"]])[0] == 5
    bottom, top = ax.get_ylim()
    for target in ("version", "icon"):  # not ranked (day 6), no data (day 3)
        y = ydata(markers[TARGET_MARKERS[target]])[0]
        assert 5 < y < bottom
    assert ydata(markers[TARGET_MARKERS["version"]])[0] == ydata(markers[TARGET_MARKERS["icon"]])[0]
    labels = legend_texts(fig)
    assert {"title (1)", "version (1)", "icon (1)", "screenshots (1)"} <= set(labels)
    assert "on the bottom edge: not ranked that day" in labels


def test_rank_chart_legend_puts_the_changes_heading_right_above_the_change_entries():
    """Two apps: the apps and the grey band fill the first column, "changes:" heads the second (matplotlib fills a
    column before the next, so without padding the heading fell to the foot of the first column)."""
    changes = hand_changes([("1", 2, "title"), ("1", 6, "version"), ("2", 5, "screenshots")])
    fig = plots.rank_chart(hand_history(), ["1", "2"], keywords="maps", changes=changes, names={"1": "Maps Pro"})
    assert legend_texts(fig) == [
        "Maps Pro (1)",
        "2",
        "no data recorded",
        "",
        "",
        "changes:",
        "screenshots (1)",
        "title (1)",
        "version (1)",
        "on the bottom edge: not ranked that day",
    ]
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    legend, renderer = fig.legends[0], canvas.get_renderer()
    where = {t.get_text(): t.get_window_extent(renderer) for t in legend.get_texts() if t.get_text()}
    heading, entries = where["changes:"], ["screenshots (1)", "title (1)", "version (1)"]
    assert heading.y0 == pytest.approx(where["Maps Pro (1)"].y0)  # the top row
    assert all(heading.x0 == pytest.approx(where[e].x0) for e in entries)  # the column of its entries
    assert heading.y0 > where["screenshots (1)"].y0 > where["title (1)"].y0  # right above them, in order
    assert legend._ncols == 2


def test_rank_chart_legend_with_one_app_keeps_one_column():
    changes = hand_changes([("1", 2, "title")])
    fig = plots.rank_chart(hand_history(), ["1"], keywords="atlas", changes=changes)
    assert legend_texts(fig) == ["1", "changes:", "title (1)"]
    assert fig.legends[0]._ncols == 1


def test_rank_chart_changes_on_one_day_sit_side_by_side():
    changes = hand_changes([("1", 5, "version"), ("1", 5, "title"), ("1", 5, "version")])  # a duplicate row
    fig = plots.rank_chart(hand_history(), ["1"], keywords="maps", changes=changes)
    [ax] = fig.axes
    markers = change_markers(ax)
    assert len(markers) == 2
    xs = sorted(float(line.get_xdata()[0]) for line in markers)
    assert xs[0] < xs[1]
    assert (xs[0] + xs[1]) / 2 == pytest.approx(mdates.date2num(day(5)))
    assert "version (1)" in legend_texts(fig)


def test_rank_chart_changes_outside_the_range_are_left_out():
    changes = hand_changes([("1", 1, "version"), ("1", 5, "title"), ("1", 8, "icon")])
    fig = plots.rank_chart(hand_history(), ["1"], keywords="maps", changes=changes, start=day(2), end=day(6))
    [ax] = fig.axes
    assert [line.get_marker() for line in change_markers(ax)] == [TARGET_MARKERS["title"]]


def test_rank_chart_names_dict_and_title():
    fig = plots.rank_chart(hand_history(), ["1", "2"], keywords="maps", names={"1": "Maps Pro"}, title="Mine")
    assert legend_texts(fig)[:2] == ["Maps Pro (1)", "2"]
    assert fig.get_suptitle().startswith("Mine")


@pytest.mark.parametrize(
    ("call", "parameter"),
    [
        (lambda h: plots.rank_chart(h, [str(n) for n in range(1, 12)]), "apps"),
        (lambda h: plots.rank_chart(h, []), "apps"),
        (lambda h: plots.rank_chart(h, ""), "apps"),
        (lambda h: plots.rank_chart(42, "1"), "history"),
        (lambda h: plots.rank_chart([{"keyword": "maps"}], "1"), "history"),
        (lambda h: plots.rank_chart(h.drop("rank"), "1"), "history"),
        (lambda h: plots.rank_chart(sf.rank_history(h, "1").drop("status").drop("rank"), "1"), "history"),
        (lambda h: plots.rank_chart(sf.rank_history(h, "1").drop("rank"), "1"), "history"),
        (lambda h: plots.rank_chart(h, "1", changes=hand_changes([("1", 1, "icon")]).drop("target")), "changes"),
        (lambda h: plots.rank_chart(h, "1", changes="changes.csv"), "changes"),
        (lambda h: plots.rank_chart(h, "1", names=["Maps Pro"]), "names"),
        (lambda h: plots.rank_chart(h, "1", names=pl.DataFrame({"app_id": ["1"]})), "names"),
    ],
    ids=[
        "11-apps",
        "no-apps",
        "empty-app",
        "int-history",
        "list-history",
        "history-without-rank",
        "ranks-without-status-and-rank",
        "ranks-without-rank",
        "changes-without-target",
        "changes-text",
        "names-list",
        "names-without-title",
    ],
)
def test_rank_chart_refuses_bad_input(call, parameter):
    with pytest.raises(sf.InvalidParameterError, match=rf"\b{parameter}\b") as caught:
        call(hand_history())
    assert caught.value.parameter == parameter


def test_rank_chart_empty_rank_history_frame():
    ranks = sf.rank_history(hand_history(), "1")
    fig = plots.rank_chart(ranks.clear(), "1")  # one line saying so, as the README promises, not an error
    assert not fig.axes and [one_line(t) for t in fig.texts][0].startswith("No ranks for the app: the history has")


def test_rank_chart_hand_built_pandas():
    history = hand_history()
    changes = hand_changes([("1", 6, "version")])
    a = plots.rank_chart(history, ["1", "2"], keywords="maps", changes=changes)
    b = plots.rank_chart(history.to_pandas(), ["1", "2"], keywords="maps", changes=changes.to_pandas())
    for line_a, line_b in zip(a.axes[0].get_lines(), b.axes[0].get_lines(), strict=True):
        np.testing.assert_array_equal(ydata(line_a), ydata(line_b))
    assert len(a.axes[0].patches) == len(b.axes[0].patches) == 2


# -- benchmark_chart --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def one_channel(data) -> pl.DataFrame:
    return data["benchmarks"].filter(pl.col("channel") == "all")


def test_benchmark_chart_bars_best_at_top_no_data_written(one_channel):
    rate = "page_views_to_installs"
    fig = plots.benchmark_chart(one_channel)
    assert isinstance(fig, Figure)
    [ax] = fig.axes
    valued = one_channel.filter(pl.col(rate).is_not_null())
    nulls = one_channel.height - valued.height
    assert nulls > 0
    assert len(ax.patches) == valued.height
    assert sorted(p.get_width() for p in ax.patches) == pytest.approx(sorted(valued[rate].to_list()))
    assert sum(t.get_text() == "no data" for t in ax.texts) == nulls
    ordered = one_channel.sort(rate, "category_name", descending=[True, False], nulls_last=True)
    labels = [t.get_text() for t in ax.get_yticklabels()][::-1]  # top to bottom
    assert labels == label_with_codes(ordered)
    assert ax.get_xlabel() == RATE_LABELS[rate]
    assert not orange_patches(ax)
    assert not [line for line in ax.get_lines() if list(line.get_xdata()) == [100, 100]]


def test_benchmark_chart_bar_lengths_follow_their_rows(one_channel):
    fig = plots.benchmark_chart(one_channel, rate="impressions_to_page_views")
    [ax] = fig.axes
    labels = [t.get_text() for t in ax.get_yticklabels()]
    by_label = dict(zip(label_with_codes(one_channel), one_channel["impressions_to_page_views"].to_list(), strict=True))
    for patch in ax.patches:
        y = round(patch.get_y() + patch.get_height() / 2)
        assert patch.get_width() == pytest.approx(by_label[labels[y]])


@pytest.mark.parametrize("highlight", ["6003", "travel", "TRAVEL ", "Travel"])
def test_benchmark_chart_highlight_by_code_or_name(one_channel, highlight):
    fig = plots.benchmark_chart(one_channel, highlight=highlight)
    [ax] = fig.axes
    travel = one_channel.filter(pl.col("category") == "6003")["page_views_to_installs"][0]
    [bar] = orange_patches(ax)
    assert bar.get_width() == pytest.approx(travel)
    ranked = one_channel["page_views_to_installs"].drop_nulls()
    place = int((ranked > travel).sum()) + 1
    assert any(f"#{place} of {ranked.len()}" in t.get_text() for t in ax.texts)
    [bold] = [t for t in ax.get_yticklabels() if t.get_fontweight() == "bold"]
    assert bold.get_text() == "Travel"
    assert same_color(bold.get_color(), ORANGE)


def test_benchmark_chart_dots_per_channel(data):
    frame, rate = data["benchmarks"], "page_views_to_installs"
    fig = plots.benchmark_chart(frame)
    [ax] = fig.axes
    assert not ax.patches  # dots, no bars
    assert len(ax.collections) == 3
    assert sum(len(c.get_offsets()) for c in ax.collections) == frame[rate].drop_nulls().len()
    [legend] = fig.legends  # under the chart, out of the dots' way
    assert legend.get_title().get_text() == "channel"
    hundred = "100 %: installs can exceed page views"
    assert sorted(t.get_text() for t in legend.get_texts()) == [hundred, "all", "browse", "search"]
    expected = []
    for _, rows in frame.group_by("category", maintain_order=True):
        lacking = rows.filter(pl.col(rate).is_null())["channel"].to_list()
        if len(lacking) == rows.height:
            expected.append("no data")
        elif lacking:
            expected.append("no data: " + ", ".join(lacking))
    written = [t.get_text() for t in ax.texts if t.get_text().startswith("no data")]
    assert any(t.startswith("no data: ") for t in expected)
    assert sorted(written) == sorted(expected)
    # ordered by the first channel given ("all"), best first, categories without an "all" value last
    ordered = frame.filter(pl.col("channel") == "all").sort(
        rate, "category_name", descending=[True, False], nulls_last=True
    )
    assert [t.get_text() for t in ax.get_yticklabels()][::-1] == label_with_codes(ordered)
    assert "rows ordered by channel all, best first; categories without a value for it last" in title_of(ax)


def test_benchmark_chart_dots_highlight(data):
    fig = plots.benchmark_chart(data["benchmarks"], highlight="photo & video")
    [ax] = fig.axes
    assert len(orange_patches(ax)) == 1  # the highlighted row's band
    [bold] = [t for t in ax.get_yticklabels() if t.get_fontweight() == "bold"]
    assert bold.get_text() == "Photo & Video"


def test_benchmark_chart_hundred_percent_line_only_past_100(data, one_channel):
    frame = data["benchmarks"]
    assert frame["page_views_to_installs"].max() > 100

    def hundred(fig):
        ax = fig.axes[0]
        lines = [line for line in ax.get_lines() if list(line.get_xdata()) == [100, 100]]
        texts = [t for t in ax.texts if t.get_text().startswith("100 %")]
        texts += [t for legend in fig.legends for t in legend.get_texts() if t.get_text().startswith("100 %")]
        return len(lines), len(texts)

    assert hundred(plots.benchmark_chart(frame)) == (1, 1)  # with dots the legend explains the line
    assert hundred(plots.benchmark_chart(one_channel)) == (0, 0)  # its best is below 100
    assert hundred(plots.benchmark_chart(frame, rate="impressions_to_page_views")) == (0, 0)
    big = hand_benchmarks([("1", "A", 150.0), ("2", "B", 20.0)])
    assert hundred(plots.benchmark_chart(big, rate="impressions_to_installs")) == (0, 0)
    assert hundred(plots.benchmark_chart(big)) == (1, 1)


def test_benchmark_chart_nan_is_no_data():
    frame = hand_benchmarks([("1", "A", 30.0), ("2", "B", float("nan")), ("3", "C", None), ("4", "D", 50.0)])
    fig = plots.benchmark_chart(frame)
    [ax] = fig.axes
    assert len(ax.patches) == 2
    assert sum(t.get_text() == "no data" for t in ax.texts) == 2
    assert [t.get_text() for t in ax.get_yticklabels()][::-1] == ["D", "A", "B", "C"]
    assert not any("nan" in t.get_text().lower() for t in ax.texts)


def test_benchmark_chart_shared_names_carry_codes():
    frame = hand_benchmarks([("6011", "Music", 30.0), ("7011", "Music", 40.0), ("6003", "Travel", 10.0)])
    fig = plots.benchmark_chart(frame)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()][::-1]
    assert labels == ["Music (7011)", "Music (6011)", "Travel"]


def test_benchmark_chart_top_keeps_the_best_and_the_highlight(one_channel):
    rate = "page_views_to_installs"
    shared = pl.col("category_name").is_duplicated()  # over all categories, also those top= drops
    ordered = one_channel.with_columns(
        pl.when(shared).then(pl.format("{} ({})", "category_name", "category")).otherwise("category_name")
    ).sort(rate, "category_name", descending=[True, False], nulls_last=True)
    fig = plots.benchmark_chart(one_channel, top=5)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()][::-1]
    assert labels == ordered["category_name"].head(5).to_list()
    assert len(fig.axes[0].patches) == 5

    last = ordered.filter(pl.col(rate).is_not_null()).row(-1, named=True)
    fig = plots.benchmark_chart(one_channel, highlight=last["category"], top=5)
    [ax] = fig.axes
    labels = [t.get_text() for t in ax.get_yticklabels()][::-1]
    assert labels == [*ordered["category_name"].head(5).to_list(), last["category_name"]]
    ranked = one_channel[rate].drop_nulls().len()
    assert any(f"#{ranked} of {ranked}" in t.get_text() for t in ax.texts)


def test_benchmark_chart_by_country(data):
    frame = data["two_countries"]
    assert sorted(frame["country"].unique().to_list()) == ["gb", "us"]
    fig = plots.benchmark_chart(frame, by="country")
    [ax] = fig.axes
    assert len(ax.collections) == 2
    [legend] = fig.legends
    assert sorted(t.get_text() for t in legend.get_texts()) == ["gb", "us"]
    assert legend.get_title().get_text() == "country"
    assert sum(len(c.get_offsets()) for c in ax.collections) == frame["page_views_to_installs"].drop_nulls().len()
    assert len(plots.benchmark_chart(frame).axes[0].collections) == 2  # country is the one that varies


def test_benchmark_chart_pandas_and_ax(one_channel):
    fig = Figure()
    ax = fig.subplots()
    out = plots.benchmark_chart(one_channel.to_pandas(), ax=ax, title="Mine")
    assert out is ax and fig.axes == [ax]
    assert len(ax.patches) == one_channel["page_views_to_installs"].drop_nulls().len()
    assert title_of(ax).startswith("Mine")


def test_benchmark_chart_refuses_bad_input(data, one_channel):
    with pytest.raises(sf.InvalidParameterError, match="rate") as caught:
        plots.benchmark_chart(one_channel, rate="conversion")
    assert caught.value.parameter == "rate"
    assert all(name in str(caught.value) for name in RATE_LABELS)

    with pytest.raises(sf.InvalidParameterError, match="highlight") as caught:
        plots.benchmark_chart(one_channel, highlight="Photo Editing")
    assert caught.value.parameter == "highlight"
    assert sum(name in str(caught.value) for name in one_channel["category_name"].to_list()) >= 3

    assert not plots.benchmark_chart(one_channel.clear()).axes  # one line saying so (see the empty-frame test)

    with pytest.raises(sf.InvalidParameterError, match="by") as caught:
        plots.benchmark_chart(data["benchmarks"], by="store")
    assert caught.value.parameter == "by"

    with pytest.raises(sf.InvalidParameterError) as caught:
        plots.benchmark_chart(one_channel.drop("page_views_to_installs"))
    assert caught.value.parameter == "benchmarks"

    with pytest.raises(sf.InvalidParameterError) as caught:
        plots.benchmark_chart("benchmarks.csv")
    assert caught.value.parameter == "benchmarks"

    for top in (0, -1, 2.5, True):
        with pytest.raises(sf.InvalidParameterError) as caught:
            plots.benchmark_chart(one_channel, top=top)
        assert caught.value.parameter == "top"


# -- changes_timeline -------------------------------------------------------------------------


def test_changes_timeline_rows_markers_legend(data):
    changes = data["changes"]
    apps = changes["app_id"].unique(maintain_order=True).to_list()
    metadata = data["metadata"]
    titles = dict(metadata.select("app_id", "title").iter_rows())
    fig = plots.changes_timeline(changes, names=metadata, targets=changes["target"].unique().to_list())
    assert isinstance(fig, Figure)
    [ax] = fig.axes
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == len(apps)
    for app in apps:
        [label] = [t for t in labels if t.endswith(app) or t.endswith(f"({app})")]
        if app in titles:
            assert label.startswith(titles[app][:20])
        else:
            assert label == app  # the outsider is not in the metadata frame: its id
    points = sum(len(line.get_xdata()) for line in ax.get_lines())
    assert points == changes.select("app_id", "date", "target").unique().height
    want = Counter(TARGET_MARKERS.get(t, "o") for t in changes.unique(["app_id", "date", "target"])["target"])
    got = Counter()
    for line in ax.get_lines():
        got[line.get_marker()] += len(line.get_xdata())
    assert got == want
    texts = legend_texts(fig)
    expected = [f"{t} ({n})" for t, n in changes.group_by("target").len().iter_rows()]
    assert sorted(texts) == sorted(expected)


def test_changes_timeline_ids_without_names_and_ax():
    changes = hand_changes([("1", 1, "version"), ("1", 1, "size"), ("1", 4, "version"), ("2", 2, "icon")])
    fig = Figure()
    ax = fig.subplots()
    out = plots.changes_timeline(changes, ax=ax, title="Mine", targets="version, size, icon")
    assert out is ax and fig.axes == [ax]
    assert [t.get_text() for t in ax.get_yticklabels()][::-1] == ["1", "2"]  # the frame's order, top down
    assert sum(len(line.get_xdata()) for line in ax.get_lines()) == 4
    assert sorted(legend_texts(fig, ax)) == ["icon (1)", "size (1)", "version (2)"]
    assert title_of(ax).startswith("Mine")
    assert not fig.legends

    fig = plots.changes_timeline(changes.to_pandas(), names={"2": "Atlas"})
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()][::-1] == ["1", "Atlas (2)"]


def test_changes_timeline_refuses_bad_input():
    with pytest.raises(sf.InvalidParameterError, match="changes") as caught:
        plots.changes_timeline(hand_changes([]))
    assert caught.value.parameter == "changes"
    with pytest.raises(sf.InvalidParameterError) as caught:
        plots.changes_timeline(hand_changes([("1", 1, "icon")]).drop("target"))
    assert caught.value.parameter == "changes"
    with pytest.raises(sf.InvalidParameterError) as caught:
        plots.changes_timeline(None)
    assert caught.value.parameter == "changes"


# -- figure_png and headless use --------------------------------------------------------------


def test_figure_png_gives_png_bytes():
    fig = plots.changes_timeline(hand_changes([("1", 1, "version"), ("2", 3, "icon")]))
    png = plots.figure_png(fig)
    assert isinstance(png, bytes)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(plots.figure_png(fig, dpi=50)) < len(png)


@pytest.mark.processes
def test_drawing_never_imports_pyplot():
    code = textwrap.dedent(
        """
        import sys
        from datetime import date
        import polars as pl
        from storeframes import plots
        history = pl.DataFrame({"keyword": ["maps"] * 3, "date": [date(2026, 1, d) for d in (1, 2, 4)],
                                "rank": [1, 2, 1], "app_id": ["1", "1", "2"]})
        fig = plots.rank_chart(history, ["1", "2"])
        assert plots.figure_png(fig).startswith(b"\\x89PNG")
        print("pyplot" if "matplotlib.pyplot" in sys.modules else "no pyplot")
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "no pyplot"


# -- known bugs in the charts (reported; these failed until the charts were fixed) ----------------------


def test_benchmark_chart_top_without_highlight_warns_nothing(one_channel):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = plots.benchmark_chart(one_channel, top=3)
    assert len(fig.axes[0].patches) == 3


def test_rank_chart_targets_as_one_text():
    changes = hand_changes([("1", 5, "size"), ("1", 5, "version")])
    try:
        fig = plots.rank_chart(hand_history(), ["1"], keywords="maps", changes=changes, targets="size")
    except sf.InvalidParameterError as error:  # refusing a text is fine too
        assert error.parameter == "targets"
    else:
        assert [line.get_marker() for line in change_markers(fig.axes[0])] == [TARGET_MARKERS["size"]]


@pytest.mark.parametrize(
    ("call", "parameter"),
    [
        (lambda s: plots.rank_chart(s, "1"), "history"),
        (lambda s: plots.benchmark_chart(s), "benchmarks"),
        (lambda s: plots.changes_timeline(s), "changes"),
        (lambda s: plots.rank_chart(hand_history(), "1", changes=s), "changes"),
    ],
    ids=["rank_chart", "benchmark_chart", "changes_timeline", "rank_chart-changes"],
)
def test_a_pandas_series_is_refused_like_any_other_non_frame(call, parameter):
    import pandas as pd

    with pytest.raises(sf.InvalidParameterError) as caught:
        call(pd.Series(["1", "2"]))
    assert caught.value.parameter == parameter


@pytest.mark.parametrize("as_ranks", [False, True], ids=["history", "rank_history"])
def test_rank_chart_unknown_keyword_is_named_and_errors_speak_as_rank_chart(as_ranks):
    history = hand_history()
    given = sf.rank_history(history, ["1", "2"]) if as_ranks else history
    with pytest.raises(sf.InvalidParameterError, match=r"for rank_chart: keywords of the history: 'maps', 'atlas'"):
        plots.rank_chart(given, "1", keywords=["maps", "nope"])
    with pytest.raises(sf.InvalidParameterError, match=r"for rank_chart") as caught:
        plots.rank_chart(given, "1", start=day(5), end=day(2))
    assert caught.value.parameter == "end"
    fig = plots.rank_chart(given, "1", keywords="  maps ")  # spaces tidied as the frames tidy them
    assert len(fig.axes) == 1 and "maps" in title_of(fig.axes[0])


def test_rank_chart_x_axis_spans_exactly_the_days():
    fig = plots.rank_chart(hand_history(), "1", start=day(2), end=day(6))
    for ax in fig.axes:
        low, high = ax.get_xlim()
        assert mdates.num2date(low + 0.5).date() == day(2) and mdates.num2date(high - 0.5).date() == day(6)


def test_benchmark_chart_a_shared_name_must_be_a_code():
    frame = hand_benchmarks([("6011", "Music", 50.0), ("7011", "Music", 40.0), ("6003", "Travel", 30.0)])
    with pytest.raises(sf.InvalidParameterError, match=r"the name is shared, give a code \(6011, 7011\)"):
        plots.benchmark_chart(frame, highlight="music")
    fig = plots.benchmark_chart(frame, highlight="7011")
    bold = [t.get_text() for t in fig.axes[0].get_yticklabels() if t.get_fontweight() == "bold"]
    assert bold == ["Music (7011)"]


def test_changes_timeline_counts_each_change_once():
    changes = hand_changes([("1", 1, "version"), ("1", 1, "version"), ("1", 3, "version"), ("2", 3, "icon")])
    fig = plots.changes_timeline(changes)
    [ax] = fig.axes
    assert "3 changes" in title_of(ax)
    assert legend_texts(fig) == ["version (2)", "icon (1)"]
    assert sum(len(line.get_xdata()) for line in ax.get_lines()) == 3


# -- issue 22: colours, no-data changes, ordering, axes, ranges -------------------------------


def test_rank_chart_colors_keep_an_apps_colour_and_the_others_skip_it():
    history = hand_history()
    fig = plots.rank_chart(history, ["1", "2", "3"], keywords="maps", colors={"2": "#1f77b4", "9": "tab:red"})
    first, second, third = (line.get_color() for line in rank_lines(fig.axes[0]))
    assert second == "#1f77b4"  # the given colour
    # the others take the cycle in turn, skipping the colours given (to a charted app or not)
    assert not same_color(first, "#1f77b4") and not same_color(first, "tab:red")
    assert not same_color(third, "#1f77b4") and not same_color(third, "tab:red")
    assert not same_color(first, third)
    assert legend_texts(fig)[:3] == ["1", "2", "3"]
    handles = fig.legends[0].legend_handles
    assert same_color(handles[1].get_color(), "#1f77b4")

    # the same mapping gives app 2 the same colour whatever else is charted
    again = plots.rank_chart(history, ["3", "2"], keywords="maps", colors={"2": "#1f77b4"})
    assert [line.get_color() for line in rank_lines(again.axes[0])][1] == "#1f77b4"
    # ten apps, one of them given a colour outside the cycle: every app still gets a colour
    many = pl.concat([history, *(history.with_columns(pl.lit(str(n)).alias("app_id")) for n in range(4, 11))])
    ids = [str(n) for n in range(1, 11)]
    fig = plots.rank_chart(many, ids, keywords="maps", colors={"10": "black"})
    colours = [line.get_color() for line in rank_lines(fig.axes[0])]
    assert colours[-1] == "black" and len(set(colours)) == 10


@pytest.mark.parametrize("colors", [["#1f77b4"], {"1": "not-a-colour"}], ids=["list", "unknown-colour"])
def test_rank_chart_refuses_bad_colors(colors):
    with pytest.raises(sf.InvalidParameterError, match=r"colors=.*for rank_chart: .*colour") as caught:
        plots.rank_chart(hand_history(), ["1", "2"], colors=colors)
    assert caught.value.parameter == "colors"


def test_rank_chart_change_on_a_no_data_day_is_hollow_and_explained():
    # app 1 on "maps": day 3 has no data at all, day 6 has results without app 1
    changes = hand_changes([("1", 3, "icon"), ("1", 6, "version"), ("1", 5, "title")])
    fig = plots.rank_chart(hand_history(), ["1"], keywords="maps", changes=changes)
    [ax] = fig.axes
    [line] = rank_lines(ax)
    markers = {line.get_marker(): line for line in change_markers(ax)}
    icon, version, title = (markers[TARGET_MARKERS[t]] for t in ("icon", "version", "title"))
    assert same_color(icon.get_markerfacecolor(), "white")  # no data that day: hollow
    assert same_color(icon.get_markeredgecolor(), line.get_color())
    assert same_color(version.get_markerfacecolor(), line.get_color())  # not ranked that day: filled
    assert ydata(icon)[0] == ydata(version)[0] > 3  # both on the bottom edge ...
    assert ydata(title)[0] == 1  # ... while a change on a ranked day sits on the line
    labels = legend_texts(fig)
    assert "hollow on the bottom edge: no data that day" in labels
    assert "on the bottom edge: not ranked that day" in labels

    only_unranked = plots.rank_chart(
        hand_history(), ["1"], keywords="maps", changes=changes.filter(pl.col("date") != day(3))
    )
    labels = legend_texts(only_unranked)
    assert "on the bottom edge: not ranked that day" in labels
    assert not any("no data that day" in t for t in labels)


RATE = "page_views_to_installs"


def two_channels() -> pl.DataFrame:
    """Search converts better than all; "Card" has no "all" value, "Dice" no "search" value."""
    rows = [
        ("1", "Atlas", 30.0, 60.0),
        ("2", "Books", 40.0, 50.0),
        ("3", "Card", None, 70.0),
        ("4", "Dice", 20.0, None),
    ]
    all_, search = (
        hand_benchmarks([(c, n, v) for c, n, v, _ in rows], channel="all"),
        hand_benchmarks([(c, n, v) for c, n, _, v in rows], channel="search"),
    )
    return pl.concat([all_, search])


def one_line(text) -> str:
    """A text artist's words (a long message may wrap)."""
    return " ".join(text.get_text().split())


def ytick_texts(ax) -> list[str]:
    return [t.get_text() for t in ax.get_yticklabels()][::-1]  # top to bottom


def test_benchmark_chart_orders_rows_by_one_stated_series():
    frame = two_channels()
    fig = plots.benchmark_chart(frame)
    [ax] = fig.axes
    # by "all", the first channel: Card (no "all" value) comes last, not first as by its mean
    assert ytick_texts(ax) == ["Books", "Atlas", "Dice", "Card"]
    assert "rows ordered by channel all, best first; categories without a value for it last" in title_of(ax)
    fig = plots.benchmark_chart(frame, order_by="search")
    [ax] = fig.axes
    assert ytick_texts(ax) == ["Card", "Atlas", "Books", "Dice"]
    assert "rows ordered by channel search" in title_of(ax)
    fig = plots.benchmark_chart(frame, order_by="search", top=2)
    assert ytick_texts(fig.axes[0]) == ["Card", "Atlas"]
    # a first series without any value does not order the rows: the first one with values does
    no_all = frame.with_columns(pl.when(pl.col("channel") == "all").then(None).otherwise(pl.col(RATE)).alias(RATE))
    fig = plots.benchmark_chart(no_all)
    assert ytick_texts(fig.axes[0]) == ["Card", "Atlas", "Books", "Dice"]
    assert "rows ordered by channel search" in title_of(fig.axes[0])


def test_benchmark_chart_highlight_place_in_each_series():
    fig = plots.benchmark_chart(two_channels(), highlight="Atlas")
    [legend] = fig.legends
    assert legend.get_title().get_text() == "channel: place of Atlas"
    assert [t.get_text() for t in legend.get_texts()] == ["all: #2 of 3", "search: #2 of 3"]
    assert title_of(fig.axes[0]).endswith("\nAtlas: all #2 of 3 · search #2 of 3")  # at the top, too
    fig = plots.benchmark_chart(two_channels(), highlight="3")
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["all: no data", "search: #1 of 3"]
    assert title_of(fig.axes[0]).endswith("\nCard: all no data · search #1 of 3")
    assert "Atlas" not in title_of(plots.benchmark_chart(two_channels()).axes[0])


@pytest.mark.parametrize(("order_by", "allowed"), [("browse", "all, search"), ("All", "all, search")])
def test_benchmark_chart_refuses_an_unknown_order_by(order_by, allowed):
    with pytest.raises(sf.InvalidParameterError, match=rf"order_by=.*one of the chart's series: {allowed}") as caught:
        plots.benchmark_chart(two_channels(), order_by=order_by)
    assert caught.value.parameter == "order_by"
    with pytest.raises(sf.InvalidParameterError, match=r"None \(one series\)"):
        plots.benchmark_chart(hand_benchmarks([("1", "A", 1.0)]), order_by="all")


def test_benchmark_chart_with_no_value_at_all_says_so_in_one_line():
    frame = hand_benchmarks([("A1", "Art", None), ("B2", "Books", None), ("C3", "Cards", float("nan"))])
    frame = frame.with_columns(pl.lit("gb").alias("country"), pl.lit("android").alias("device"))
    fig = plots.benchmark_chart(frame)
    assert not fig.axes
    [text] = fig.texts
    assert one_line(text) == (
        "No page_views_to_installs for android in gb (type free, channel all): "
        "the service gives no value for these 3 categories."
    )
    width, height = fig.get_size_inches()
    assert width == 10 and height < 1
    ax = Figure().subplots()
    assert plots.benchmark_chart(frame, ax=ax) is ax
    assert [t.get_text() for t in ax.texts] == [text.get_text()] and not ax.axison
    with pytest.raises(sf.InvalidParameterError) as caught:  # bad input is still refused first
        plots.benchmark_chart(frame, highlight="Photo")
    assert caught.value.parameter == "highlight"


def ranked_history(ranks: dict[str, int], days: int = 3, first: date = date(2026, 1, 1)) -> pl.DataFrame:
    """Keyword "k": each app at its rank every day from ``first``."""
    rows = [(first + timedelta(days=n), app, rank) for n in range(days) for app, rank in ranks.items()]
    return pl.DataFrame(
        {
            "keyword": ["k"] * len(rows),
            "date": [r[0] for r in rows],
            "app_id": [r[1] for r in rows],
            "rank": [r[2] for r in rows],
        }
    )


@pytest.mark.parametrize(
    ("worst", "ticks"),
    [
        (3, [1, 2, 3]),  # the bottom edge (4: days not ranked) has no number
        (7, [1, 2, 4, 6]),  # nor 8
        (8, [1, 2, 4, 6, 8]),
        (47, [1, 10, 20, 30, 40]),  # nor 50
        (50, [1, 10, 20, 30, 40, 50]),
        (120, [1, 20, 40, 60, 80, 100, 120]),
        (200, [1, 50, 100, 150, 200]),
    ],
)
def test_rank_chart_rank_axis_has_round_ticks_from_1(worst, ticks):
    fig = plots.rank_chart(ranked_history({"1": 1, "2": worst}), ["1", "2"])
    [ax] = fig.axes
    assert [int(t) for t in ax.get_yticks()] == ticks
    edge = ax.get_ylim()[0] - 0.5  # where the markers of days not ranked sit
    assert edge not in ax.get_yticks()


@pytest.mark.parametrize("days", [1, 7, 30, 90, 365])
def test_date_axes_show_the_range_with_the_year(days):
    first = date(2026, 11, 18) - timedelta(days=days - 1)
    last = date(2026, 11, 18)
    history = ranked_history({"1": 3}, days=days, first=first)
    changes = hand_changes([]).vstack(
        pl.DataFrame({"app_id": ["1", "1"], "date": [first, last], "target": ["version", "title"]})
    )
    charts = [
        plots.rank_chart(history, "1").axes[0],
        plots.changes_timeline(changes, start=first, end=last).axes[0],
    ]
    for ax in charts:
        ax.figure.canvas.draw()  # as when shown or saved
        labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
        ticks = [mdates.num2date(t).date() for t in ax.get_xticks()]
        assert ax.xaxis.get_offset_text().get_text() == ""  # no lone "2026-Nov" in a corner
        assert min(days, 4) <= len(labels) <= 8 and len(set(labels)) == len(labels)
        assert labels[0].endswith(str(ticks[0].year))  # the year of the first tick, under it
        assert all(first <= t <= last for t in ticks)
        low, high = (mdates.num2date(x).date() for x in ax.get_xlim())
        assert low <= first and high >= last
    if days == 365:  # month starts, the year under each new year's first label
        assert [t.get_text() for t in charts[0].get_xticklabels()][:2] == ["Jan\n2026", "Mar"]
    if days == 7:
        assert [t.get_text() for t in charts[0].get_xticklabels()] == [
            "12 Nov\n2026", "13 Nov", "14 Nov", "15 Nov", "16 Nov", "17 Nov", "18 Nov",
        ]  # fmt: skip


def test_changes_timeline_covers_the_asked_range_and_leaves_size_out_like_rank_chart():
    changes = hand_changes(
        [("1", 3, "version"), ("1", 3, "size"), ("1", 5, "size"), ("2", 4, "icon"), ("2", 20, "title")]
    )
    fig = plots.changes_timeline(changes, start=day(1), end=day(10))
    [ax] = fig.axes
    assert title_of(ax) == (
        "Metadata changes\n2026-01-01 to 2026-01-10, 2 changes\n2 size changes not shown (targets= to show)"
    )
    low, high = ax.get_xlim()
    assert low < mdates.date2num(day(1)) and high > mdates.date2num(day(10))
    assert legend_texts(fig) == ["version (1)", "icon (1)"]  # the title change of day 20 is out of range
    assert sorted(line.get_marker() for line in ax.get_lines()) == sorted(
        [TARGET_MARKERS["version"], TARGET_MARKERS["icon"]]
    )

    fig = plots.changes_timeline(changes, start="2026-01-01", end="2026-01-10", targets="size")
    assert legend_texts(fig) == ["size (2)"]
    assert "not shown" not in title_of(fig.axes[0])

    fig = plots.changes_timeline(changes)  # no range given: the first to the last change, said so
    assert title_of(fig.axes[0]).startswith("Metadata changes\n2026-01-03 to 2026-01-20 (first and last change), 3")


def test_changes_timeline_with_nothing_to_draw_says_so_in_one_line():
    sizes = hand_changes([("1", 3, "size"), ("2", 4, "size")])
    fig = plots.changes_timeline(sizes, start=day(1), end=day(10))
    assert not fig.axes
    assert [one_line(t) for t in fig.texts] == [
        "No metadata changes of the 2 apps from 2026-01-01 to 2026-01-10; 2 size changes not shown (targets= to show)."
    ]
    fig = plots.changes_timeline(hand_changes([]), start=day(1), end=day(10))
    assert [one_line(t) for t in fig.texts] == ["No metadata changes of the apps from 2026-01-01 to 2026-01-10."]
    with pytest.raises(
        sf.InvalidParameterError, match=r"targets=\['sizes'\].*: change targets such as version"
    ) as caught:
        plots.changes_timeline(sizes, targets=["sizes"])
    assert caught.value.parameter == "targets"
    with pytest.raises(
        sf.InvalidParameterError, match=r"end=.* for changes_timeline: a date on or after start=2026-01-05"
    ):
        plots.changes_timeline(sizes, start=day(5), end=day(1))


def test_rank_chart_with_no_rank_at_all_says_so_in_one_line():
    history = hand_history()
    fig = plots.rank_chart(history, ["7", "8"], keywords="maps")  # never among the results
    assert not fig.axes
    assert [one_line(t) for t in fig.texts] == [
        "No ranks for “maps” in us · iphone from 2026-01-01 to 2026-01-08: "
        "none of the 2 apps was among the results on any day with results."
    ]
    one = plots.rank_chart(history, "7", keywords="maps")  # one app: "was not", never "was"
    assert [one_line(t) for t in one.texts] == [
        "No ranks for “maps” in us · iphone from 2026-01-01 to 2026-01-08: "
        "the app was not among the results on any day with results."
    ]
    ax = Figure().subplots()
    ranks = sf.rank_history(history, ["1"], keywords="maps").filter(pl.col("status") == "no_data")
    assert plots.rank_chart(ranks, "1", ax=ax) is ax
    assert [one_line(t) for t in ax.texts] == [
        "No ranks for “maps” in us · iphone from 2026-01-03 to 2026-01-07: "
        "the service recorded no search results on these days."
    ]


def test_rank_chart_splits_keywords_on_commas_a_list_keeps_a_comma():
    fig = plots.rank_chart(hand_history(), "1", keywords="maps,  atlas ")
    assert [title_of(ax) for ax in fig.axes] == ["“maps”", "“atlas”"]
    history = hand_history().with_columns(pl.col("keyword").replace("maps", "maps, offline"))
    fig = plots.rank_chart(history, "1", keywords=["maps, offline"])
    assert [title_of(ax) for ax in fig.axes] == ["“maps, offline”"]
    message = r"keywords=\['maps', 'offline'\].*'maps, offline', 'atlas' \(a text is split on commas: give a list"
    with pytest.raises(sf.InvalidParameterError, match=message) as caught:
        plots.rank_chart(history, "1", keywords="maps, offline")  # two keywords, neither in the history
    assert caught.value.parameter == "keywords"


def test_charts_are_ten_inches_wide_and_grow_with_their_rows(data):
    narrow = plots.rank_chart(hand_history(), "1", keywords="maps")
    tall = plots.rank_chart(hand_history(), "1")
    assert narrow.get_size_inches()[0] == tall.get_size_inches()[0] == 10
    assert tall.get_size_inches()[1] > narrow.get_size_inches()[1]
    few = plots.benchmark_chart(two_channels())
    many = plots.benchmark_chart(data["benchmarks"])
    assert few.get_size_inches()[0] == many.get_size_inches()[0] == 10
    assert many.get_size_inches()[1] > few.get_size_inches()[1]
    timeline = plots.changes_timeline(hand_changes([("1", 1, "version"), ("2", 2, "icon")]))
    assert timeline.get_size_inches()[0] == 10


def test_date_axis_across_new_year_names_both_years():
    history = ranked_history({"1": 2}, days=22, first=date(2025, 12, 20))
    [ax] = plots.rank_chart(history, "1").axes
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "20 Dec\n2025", "23 Dec", "26 Dec", "29 Dec", "1 Jan\n2026", "4 Jan", "7 Jan", "10 Jan",
    ]  # fmt: skip


def test_rank_and_benchmark_charts_of_an_empty_frame_are_one_line_saying_so():
    from storeframes.schemas import BENCHMARKS, SEARCH_HISTORY

    ranks = plots.rank_chart(SEARCH_HISTORY.empty(), ["1", "2"])
    assert not ranks.axes
    assert [one_line(t) for t in ranks.texts] == [
        "No ranks for the 2 apps: the history has no rows (no search was recorded or fetched); give start= and "
        "end= to show those days as days without data."
    ]
    benchmarks = plots.benchmark_chart(BENCHMARKS.empty())
    assert not benchmarks.axes and len(benchmarks.texts) == 1
    assert one_line(benchmarks.texts[0]).startswith("No benchmarks: the frame has no rows")
    ax = Figure().subplots()
    assert plots.rank_chart(SEARCH_HISTORY.empty(), "1", ax=ax) is ax and not ax.axison
