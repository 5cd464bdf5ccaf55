"""The charts of the analysis frames: share of voice, keyword opportunities, anomalies on the rank chart.

Small frames of the analysis' schemas are built by hand, so each value drawn is known; the
tests read the artists (areas, markers, bands, texts, legends), never pixels.
"""

from __future__ import annotations

import warnings
from datetime import date

import matplotlib.dates as mdates
import numpy as np
import polars as pl
import pytest
from matplotlib.colors import same_color
from matplotlib.figure import Figure

import storeframes as sf
from storeframes import plots
from storeframes.plots import DIRECTION_COLORS
from storeframes.plots.anomaly_marks import MOST_NOTES, SHORT_CAUSE
from storeframes.plots.opportunity_charts import NOT_RANKED
from tests.conftest import SANDBOX_TODAY, sandbox_client_on
from tests.plots_widgets.test_plots import hand_history

PLACE = {"country": "us", "language": "en", "device": "iphone"}


def day(n: int) -> date:
    return date(2026, 1, n)


def x_of(n: int) -> float:
    return float(mdates.date2num(day(n)))


# -- frames of the analysis' schemas ----------------------------------------------------------

SHARES = {  # app -> share on days 1-6; days 3 and 4 recorded no keyword
    "a": [0.40, 0.35, None, None, 0.30, 0.45],
    "b": [0.20, 0.25, None, None, 0.30, 0.15],
    "c": [0.05, 0.10, None, None, 0.05, 0.02],
    "d": [0.03, 0.00, None, None, 0.10, 0.04],
}
GAP_DAYS = (3, 4)


def sov_frame(shares=SHARES, places=(PLACE,), *, key="app_id") -> pl.DataFrame:
    rows = []
    for place in places:
        for app, values in shares.items():
            for n, share in enumerate(values, start=1):
                gap = n in GAP_DAYS
                rows.append(
                    {
                        "date": day(n),
                        key: app,
                        "share": share,
                        "positions": None if gap else 1,
                        "keywords": None if gap else 1,
                        "keywords_recorded": 0 if gap else 4,
                        "keywords_tracked": 4,
                        **place,
                    }
                )
    return pl.DataFrame(rows, schema_overrides={"share": pl.Float64, "positions": pl.Int64, "keywords": pl.Int64})


def opportunities_frame() -> pl.DataFrame:
    """Six keywords of app "me" with known ranks and scores; "gamma" unranked, "zeta" without a ranked competitor."""
    rows = [
        ("alpha", 12, 3, 61.5),
        ("beta", 4, 1, 88.0),
        ("gamma", None, 2, 92.25),
        ("delta", 30, 8, 40.0),
        ("epsilon", 2, 5, 12.0),
        ("zeta", 7, None, 75.0),
    ]
    return pl.DataFrame(
        {
            "keyword": [r[0] for r in rows],
            "app_id": ["me"] * len(rows),
            "latest_date": [day(8)] * len(rows),
            "app_rank": [r[1] for r in rows],
            "best_competitor": ["rival" if r[2] is not None else None for r in rows],
            "best_competitor_rank": [r[2] for r in rows],
            "score": [r[3] for r in rows],
            "why": ["room"] * len(rows),
            **{c: [v] * len(rows) for c, v in PLACE.items()},
        },
        schema_overrides={"app_rank": pl.Int64, "best_competitor_rank": pl.Int64},
    )


def anomalies_frame(rows) -> pl.DataFrame:
    """Anomalies on hand_history(): (keyword, app, day, rank, direction, cause)."""
    return pl.DataFrame(
        {
            "keyword": [r[0] for r in rows],
            "app_id": [r[1] for r in rows],
            "date": [day(r[2]) for r in rows],
            "rank": [r[3] for r in rows],
            "status": ["ranked" if r[3] is not None else "not_ranked" for r in rows],
            "direction": [r[4] for r in rows],
            "cause": [r[5] for r in rows],
            **{c: [v] * len(rows) for c, v in PLACE.items()},
        },
        schema={
            "keyword": pl.String,
            "app_id": pl.String,
            "date": pl.Date,
            "rank": pl.Int64,
            "status": pl.String,
            "direction": pl.String,
            "cause": pl.String,
            **dict.fromkeys(PLACE, pl.String),
        },
    )


# -- artist helpers ---------------------------------------------------------------------------


def tops(ax, label: str) -> dict[float, float]:
    """The top of a stacked band at each day drawn: the highest vertex of its areas at that day's x."""
    found: dict[float, float] = {}
    for collection in ax.collections:
        if collection.get_gid() != label:
            continue
        for path in collection.get_paths():
            for x, y in path.vertices:
                if float(x).is_integer():  # the days; the runs' edges sit half a day out
                    found[float(x)] = max(found.get(float(x), -1.0), float(y))
    return found


def spans(ax, gid: str) -> list[tuple[float, float]]:
    return sorted((p.get_x(), p.get_x() + p.get_width()) for p in ax.patches if p.get_gid() == gid)


def legend_texts(fig: Figure, ax=None) -> list[str]:
    legend = ax.get_legend() if ax is not None else fig.legends[0]
    return [t.get_text() for t in legend.get_texts()]


def rings(ax) -> list:
    return [line for line in ax.get_lines() if str(line.get_gid()).startswith("anomaly_")]


def one_line(text) -> str:
    return " ".join(text.get_text().split())


# -- share of voice ---------------------------------------------------------------------------


def test_share_of_voice_stacks_the_shares_largest_at_the_bottom_others_on_top():
    fig = plots.share_of_voice_chart(sov_frame(), top_apps=2)
    [ax] = fig.axes
    for n in (1, 2, 5, 6):
        a, b = SHARES["a"][n - 1], SHARES["b"][n - 1]
        others = SHARES["c"][n - 1] + SHARES["d"][n - 1]
        assert tops(ax, "a")[x_of(n)] == pytest.approx(a)
        assert tops(ax, "b")[x_of(n)] == pytest.approx(a + b)
        assert tops(ax, "others (2 apps)")[x_of(n)] == pytest.approx(a + b + others)
    assert legend_texts(fig) == ["others (2 apps)", "b", "a", "no keyword recorded"]  # the stack's order, top first
    colors = {c.get_gid(): c.get_facecolor()[0] for c in ax.collections}
    assert same_color(colors["a"], plots.common.APP_COLORS[0]) and same_color(colors["b"], plots.common.APP_COLORS[1])


def test_share_of_voice_days_without_a_keyword_are_a_hatched_band_never_zero():
    fig = plots.share_of_voice_chart(sov_frame(), top_apps=3)
    [ax] = fig.axes
    assert spans(ax, "no_data") == [pytest.approx((x_of(3) - 0.5, x_of(4) + 0.5))]
    [band] = [p for p in ax.patches if p.get_gid() == "no_data"]
    assert band.get_hatch() == "///"
    for collection in ax.collections:  # no area over the days without data: a gap, not a 0
        for path in collection.get_paths():
            xs = path.vertices[:, 0]
            assert not ((xs > x_of(3) - 0.5 + 1e-9) & (xs < x_of(4) + 0.5 - 1e-9)).any()
    assert x_of(3) not in tops(ax, "a") and x_of(5) in tops(ax, "a")
    assert "2 days without any keyword recorded (hatched): no share, not 0" in fig.get_suptitle()
    assert "no keyword recorded" in legend_texts(fig)


def test_share_of_voice_one_app_alone_is_no_others_and_without_gaps_no_band():
    frame = sov_frame().filter(pl.col("date") <= day(2))  # days 1-2, each recorded
    fig = plots.share_of_voice_chart(frame, top_apps=3)
    [ax] = fig.axes
    assert legend_texts(fig) == ["d", "c", "b", "a"]
    assert not spans(ax, "no_data")
    assert "without any keyword" not in fig.get_suptitle()
    assert "held by 4 apps" in fig.get_suptitle() and "by name" not in fig.get_suptitle()


def test_share_of_voice_names_percent_axis_and_title():
    metadata = pl.DataFrame({"app_id": ["a", "b"], "title": ["Atlas Maps", "Bolt"]})
    fig = plots.share_of_voice_chart(sov_frame(), top_apps=2, names=metadata, title="Mine")
    [ax] = fig.axes
    assert legend_texts(fig)[:3] == ["others (2 apps)", "Bolt (b)", "Atlas Maps (a)"]
    assert fig.get_suptitle().startswith("Mine\n2026-01-01 to 2026-01-06: the top places of 4 keywords held by 4 apps")
    assert ax.yaxis.get_major_formatter()(0.5, 0) == "50%"
    assert ax.get_ylim() == pytest.approx((0.0, 0.85))  # the highest stack, 75 %, with room, rounded up to 5 %


def test_share_of_voice_one_panel_per_place_on_one_scale():
    gb = {"country": "gb", "language": "en", "device": "iphone"}
    fig = plots.share_of_voice_chart(sov_frame(places=(PLACE, gb)), top_apps=2)
    assert len(fig.axes) == 2
    assert [ax.get_title(loc="left") for ax in fig.axes] == [
        "us · en · iphone: 2 days without data",
        "gb · en · iphone: 2 days without data",
    ]
    assert fig.axes[0].get_ylim() == fig.axes[1].get_ylim()
    for ax in fig.axes:
        assert spans(ax, "no_data") == [pytest.approx((x_of(3) - 0.5, x_of(4) + 0.5))]
    with pytest.raises(sf.InvalidParameterError, match="one place") as caught:
        plots.share_of_voice_chart(sov_frame(places=(PLACE, gb)), ax=Figure().subplots())
    assert caught.value.parameter == "ax"


def test_share_of_voice_days_missing_from_the_frame_are_days_without_data():
    frame = sov_frame().filter(~pl.col("date").dt.day().is_in(GAP_DAYS))  # days 3 and 4 have no row at all
    fig = plots.share_of_voice_chart(frame, top_apps=2)
    assert spans(fig.axes[0], "no_data") == [pytest.approx((x_of(3) - 0.5, x_of(4) + 0.5))]
    assert "2 days without any keyword recorded" in fig.get_suptitle()


def test_share_of_voice_into_an_axes_pandas_and_lazy_input():
    figure = Figure(figsize=(8, 4), layout="constrained")
    ax = figure.subplots()
    assert plots.share_of_voice_chart(sov_frame().to_pandas(), top_apps=2, ax=ax) is ax
    assert tops(ax, "b")[x_of(6)] == pytest.approx(0.60)
    assert ax.get_legend() is not None and ax.get_title(loc="left").startswith("Share of voice, us · en · iphone")
    lazy = plots.share_of_voice_chart(sov_frame().lazy(), top_apps=2)
    assert tops(lazy.axes[0], "b") == tops(ax, "b")


def test_share_of_voice_of_developers_named_from_the_frame():
    frame = sov_frame(key="developer_id").with_columns(
        pl.col("developer_id").replace({"a": "Atlas Inc", "b": "Bolt Ltd"}).alias("developer_name")
    )
    fig = plots.share_of_voice_chart(frame, top_apps=2, names={"b": "Bolt"})
    assert legend_texts(fig)[:3] == ["others (2 developers)", "Bolt (b)", "Atlas Inc (a)"]
    assert "held by 4 developers, 2 by name" in fig.get_suptitle()


def test_share_of_voice_with_nothing_to_draw_says_so_in_one_line():
    empty = plots.share_of_voice_chart(sov_frame().clear())
    assert not empty.axes and one_line(empty.texts[0]).startswith("No share of voice: the frame has no rows")
    silent = sov_frame().filter(pl.col("date").dt.day().is_in(GAP_DAYS))
    fig = plots.share_of_voice_chart(silent)
    assert one_line(fig.texts[0]) == (
        "No share of voice from 2026-01-03 to 2026-01-04: no keyword was recorded on any day."
    )


@pytest.mark.parametrize(
    ("call", "parameter", "words"),
    [
        (lambda f: plots.share_of_voice_chart(f.drop("share")), "sov", "without share"),
        (lambda f: plots.share_of_voice_chart(f.drop("app_id")), "sov", "app_id or developer_id"),
        (lambda f: plots.share_of_voice_chart(f.drop("keywords_recorded")), "sov", "keywords_recorded"),
        (lambda f: plots.share_of_voice_chart(f.with_columns(pl.col("share").cast(pl.String))), "sov", "String"),
        (lambda f: plots.share_of_voice_chart(f["share"]), "sov", "Series"),
        (lambda f: plots.share_of_voice_chart(f, top_apps=0), "top_apps", "from 1 to 9"),
        (lambda f: plots.share_of_voice_chart(f, top_apps=10), "top_apps", "from 1 to 9"),
        (lambda f: plots.share_of_voice_chart(f, top_apps=True), "top_apps", "whole number"),
        (lambda f: plots.share_of_voice_chart(f, names=["Atlas"]), "names", "metadata_frame"),
    ],
    ids=["no-share", "no-key", "no-recorded", "text-share", "series", "top-0", "top-10", "top-bool", "names-list"],
)
def test_share_of_voice_refuses_a_frame_of_the_wrong_shape(call, parameter, words):
    with pytest.raises(sf.InvalidParameterError, match=words) as caught:
        call(sov_frame())
    assert caught.value.parameter == parameter
    assert "share_of_voice_chart" in str(caught.value)


# -- keyword opportunities ----------------------------------------------------------------------


def app_dots(ax) -> list:
    return [line for line in ax.get_lines() if str(line.get_gid()).startswith("app")]


def rival_dots(ax) -> list:
    return [line for line in ax.get_lines() if str(line.get_gid()).startswith("competitor")]


def test_opportunities_chart_draws_n_keywords_best_score_first():
    frame = opportunities_frame()
    fig = plots.opportunities_chart(frame, n=4, names={"rival": "Rival Co"})
    [ax] = fig.axes
    assert [t.get_text() for t in ax.get_yticklabels()] == ["gamma", "beta", "zeta", "alpha"]
    assert len(app_dots(ax)) == len(rival_dots(ax)) == 4
    assert [float(line.get_ydata()[0]) for line in app_dots(ax)] == [0, 1, 2, 3]
    scores = [t.get_text() for t in ax.texts if t.get_gid() == "score"]
    assert scores == ["92", "88", "75", "62"]  # 61.5 rounds to even
    rivals = [t.get_text() for t in ax.texts if t.get_gid() == "rival"]
    assert rivals == ["Rival Co", "Rival Co", "none ranked", "Rival Co"]
    assert "the 4 best of 6 keywords by score" in fig.get_suptitle()
    everything = plots.opportunities_chart(frame, n=20)
    assert len(everything.axes[0].get_yticklabels()) == 6 and "\n6 keywords by score" in everything.get_suptitle()


def test_opportunities_chart_ranks_against_the_best_competitor_and_the_top_line():
    fig = plots.opportunities_chart(opportunities_frame(), n=6, top=10)
    [ax] = fig.axes
    order = ["gamma", "beta", "zeta", "alpha", "delta", "epsilon"]
    mine = {"beta": 4, "zeta": 7, "alpha": 12, "delta": 30, "epsilon": 2}
    theirs = {"gamma": 2, "beta": 1, "alpha": 3, "delta": 8, "epsilon": 5}
    slot = dict(zip([t.get_text() for t in ax.get_xticklabels()], ax.get_xticks(), strict=True))[
        NOT_RANKED.replace(" ", "\n")
    ]
    assert slot > 30  # past the worst rank drawn
    for line in app_dots(ax):
        keyword = order[int(line.get_ydata()[0])]
        assert float(line.get_xdata()[0]) == pytest.approx(mine.get(keyword, slot))
        assert (line.get_gid() == "app_unranked") == (keyword == "gamma")
        assert (line.get_markerfacecolor() == "white") == (keyword == "gamma")
    for line in rival_dots(ax):
        keyword = order[int(line.get_ydata()[0])]
        assert float(line.get_xdata()[0]) == pytest.approx(theirs.get(keyword, slot))
        assert (line.get_gid() == "competitor_unranked") == (keyword == "zeta")
    links = [line for line in ax.get_lines() if line.get_gid() is None and len(line.get_xdata()) == 2]
    assert sorted((float(min(line.get_xdata())), float(max(line.get_xdata()))) for line in links)[0] == (1.0, 4.0)
    [top_line] = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert float(top_line.get_xdata()[0]) == 10.5
    assert ax.get_xscale() == "log" and ax.get_xlim()[0] < 1
    texts = legend_texts(fig)
    assert texts[:3] == ["me", "best competitor", "top 10"]
    assert texts[3] == "hollow: app or competitor not among the results"


def test_opportunities_chart_names_places_and_an_axes():
    frame = opportunities_frame()
    gb = frame.with_columns(pl.lit("gb").alias("country"), pl.col("score") - 1)
    ax = Figure(figsize=(9, 4), layout="constrained").subplots()
    drawn = plots.opportunities_chart(pl.concat([frame, gb]).to_pandas(), n=3, names={"me": "Maps Pro"}, ax=ax)
    assert drawn is ax
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "gamma (us, iphone)",
        "gamma (gb, iphone)",
        "beta (us, iphone)",
    ]
    assert legend_texts(ax.figure, ax)[0] == "Maps Pro (me)"
    assert ax.get_title(loc="left").startswith(
        "Keyword opportunities of Maps Pro (me)\nthe 3 best of 12 keywords and places by score"
    )


def test_opportunities_chart_without_an_unranked_row_says_nothing_of_it_and_empty_is_one_line():
    frame = opportunities_frame().filter(pl.col("keyword").is_in(["alpha", "beta"]))
    fig = plots.opportunities_chart(frame.lazy())
    assert not any("not among" in t for t in legend_texts(fig))
    empty = plots.opportunities_chart(frame.clear())
    assert not empty.axes and one_line(empty.texts[0]) == "No keyword opportunities for the app: the frame has no rows."


@pytest.mark.parametrize(
    ("call", "parameter", "words"),
    [
        (lambda f: plots.opportunities_chart(f.drop("score")), "opportunities", "without score"),
        (lambda f: plots.opportunities_chart(f.drop("best_competitor_rank")), "opportunities", "best_competitor_rank"),
        (
            lambda f: plots.opportunities_chart(f.with_columns(pl.col("app_rank").cast(pl.String))),
            "opportunities",
            "String",
        ),
        (
            lambda f: plots.opportunities_chart(pl.concat([f, f.with_columns(pl.lit("you").alias("app_id"))])),
            "opportunities",
            "one app",
        ),
        (lambda f: plots.opportunities_chart({"keyword": ["a"]}), "opportunities", "keyword_opportunities"),
        (lambda f: plots.opportunities_chart(f, n=0), "n", "whole number of keywords"),
        (lambda f: plots.opportunities_chart(f, n=2.5), "n", "whole number of keywords"),
        (lambda f: plots.opportunities_chart(f, top=False), "top", "whole number of places"),
    ],
    ids=["no-score", "no-rival-rank", "text-rank", "two-apps", "dict", "n-0", "n-float", "top-bool"],
)
def test_opportunities_chart_refuses_a_frame_of_the_wrong_shape(call, parameter, words):
    with pytest.raises(sf.InvalidParameterError, match=words) as caught:
        call(opportunities_frame())
    assert caught.value.parameter == parameter
    assert "opportunities_chart" in str(caught.value)


# -- anomalies on the rank chart ----------------------------------------------------------------

LONG = "a title change of app 2 the day before, and 3 new advertisers that day"


def test_rank_chart_rings_each_anomaly_at_its_day_and_rank_coloured_by_direction():
    marks = anomalies_frame(
        [
            ("maps", "1", 2, 2, "down", None),
            ("maps", "2", 2, 1, "up", "new title"),
            ("maps", "3", 6, 5, "down", LONG),
            ("maps", "1", 6, None, "down", "dropped out"),  # not ranked: on the bottom edge
        ]
    )
    fig = plots.rank_chart(hand_history(), ["1", "2", "3"], keywords="maps", anomalies=marks)
    [ax] = fig.axes
    drawn = rings(ax)
    assert len(drawn) == marks.height
    bottom = ax.get_ylim()[0]
    got = sorted((float(r.get_xdata()[0]), float(r.get_ydata()[0]), r.get_gid()) for r in drawn)
    edge = bottom - 0.5  # the bottom edge, where the unranked sit (the axis ends half a rank below it)
    assert got == sorted(
        [
            (x_of(2), 2.0, "anomaly_down"),
            (x_of(2), 1.0, "anomaly_up"),
            (x_of(6), 5.0, "anomaly_down"),
            (x_of(6), edge, "anomaly_down"),
        ]
    )
    for ring in drawn:
        assert same_color(ring.get_markeredgecolor(), DIRECTION_COLORS[ring.get_gid().removeprefix("anomaly_")])
        assert ring.get_markerfacecolor() == "none"
    causes = sorted(t.get_text() for t in ax.texts if t.get_gid() == "anomaly_cause")
    assert causes == ["[1]", "dropped out", "new title"]
    assert len(LONG) > SHORT_CAUSE
    [notes] = [t for t in ax.texts if t.get_gid() == "anomaly_notes"]
    assert notes.get_text() == f"[1] {LONG}"
    texts = legend_texts(fig)
    assert [t for t in texts[texts.index("anomalies:") + 1 :] if t] == [  # blanks: a section's column padded
        "rank far above its baseline (1)",
        "rank far below its baseline (3)",
    ]


def test_rank_chart_counts_the_anomalies_it_does_not_chart():
    marks = anomalies_frame(
        [
            ("maps", "1", 5, 1, "up", None),
            ("maps", "9", 5, 1, "up", None),  # an app not charted
            ("atlas", "1", 5, 2, "down", None),  # a keyword not charted
            ("maps", "1", 8, 3, "down", None),  # a day not charted
        ]
    )
    fig = plots.rank_chart(hand_history(), ["1", "2"], keywords="maps", end=day(6), anomalies=marks.to_pandas())
    [ax] = fig.axes
    assert len(rings(ax)) == 1
    texts = legend_texts(fig)
    assert "rank far above its baseline (1)" in texts
    assert "3 more, of keywords, apps, places or days not charted" in texts
    assert not any(t.get_gid() == "anomaly_notes" for t in ax.texts)


def test_rank_chart_anomalies_on_each_keyword_panel_and_into_an_axes():
    marks = anomalies_frame([("maps", "1", 1, 1, "up", None), ("atlas", "1", 2, 1, "down", None)])
    fig = plots.rank_chart(hand_history(), ["1", "9"], anomalies=marks)
    assert [len(rings(ax)) for ax in fig.axes] == [1, 1]
    ax = Figure(figsize=(9, 4), layout="constrained").subplots()
    assert plots.rank_chart(hand_history(), ["1", "9"], anomalies=marks.lazy(), ax=ax) is ax
    assert len(rings(ax)) == 2
    empty = plots.rank_chart(hand_history(), "1", anomalies=marks.clear())
    assert not any(rings(a) for a in empty.axes) and "anomalies:" not in legend_texts(empty)


@pytest.mark.parametrize(
    ("marks", "words"),
    [
        (lambda m: m.drop("direction"), "without direction"),
        (lambda m: m.drop("rank"), "without rank"),
        (lambda m: m.with_columns(pl.lit("sideways").alias("direction")), "directions sideways"),
        (lambda m: m.with_columns(pl.lit(None, pl.String).alias("direction")), "directions null"),
        (lambda m: m.with_columns(pl.col("rank").cast(pl.String)), "rank column of String"),
        (lambda m: "anomalies.csv", "rank_anomalies frame"),
    ],
    ids=["no-direction", "no-rank", "sideways", "null-direction", "text-rank", "text"],
)
def test_rank_chart_refuses_anomalies_of_the_wrong_shape(marks, words):
    frame = anomalies_frame([("maps", "1", 1, 1, "up", None)])
    with pytest.raises(sf.InvalidParameterError, match=words) as caught:
        plots.rank_chart(hand_history(), "1", anomalies=marks(frame))
    assert caught.value.parameter == "anomalies"
    assert "rank_chart" in str(caught.value)


def test_the_new_charts_are_ten_inches_wide_and_grow_with_their_rows():
    sov = plots.share_of_voice_chart(sov_frame())
    assert sov.get_figwidth() == 10
    few, many = (plots.opportunities_chart(opportunities_frame(), n=n) for n in (2, 6))
    assert few.get_figwidth() == many.get_figwidth() == 10
    assert many.get_figheight() > few.get_figheight()
    np.testing.assert_allclose(many.get_figheight() - few.get_figheight(), 4 * 0.3)


def test_rank_chart_tells_a_cause_once_per_event_and_numbers_a_repeated_cause_once():
    repeated = LONG
    marks = anomalies_frame(
        [
            ("maps", "1", 1, 1, "up", repeated),
            ("maps", "1", 2, 2, "up", repeated),  # the same event: ringed, its cause not told again
            ("atlas", "1", 5, 2, "down", repeated),  # another event, the same cause: the same number
        ]
    ).with_columns(pl.Series("event_start", [day(1), day(1), day(5)]))
    fig = plots.rank_chart(hand_history(), ["1"], anomalies=marks)
    assert [len(rings(ax)) for ax in fig.axes] == [2, 1]  # "maps" first: the history's order of keywords
    causes = [t.get_text() for ax in fig.axes for t in ax.texts if t.get_gid() == "anomaly_cause"]
    assert causes == ["[1]", "[1]"]
    [notes] = [t for t in fig.axes[-1].texts if t.get_gid() == "anomaly_notes"]
    assert notes.get_text() == f"[1] {LONG}"


def test_rank_chart_writes_the_first_long_causes_names_their_apps_and_counts_the_rest():
    causes = [f"competitor 2 changed title on 2026-01-0{n} (the day before), a long cause" for n in range(1, 9)]
    marks = anomalies_frame([("atlas", "1", n, 1, "up", causes[n - 1]) for n in range(1, 9)])
    fig = plots.rank_chart(hand_history(), ["1", "2"], keywords="atlas", names={"2": "Bolt"}, anomalies=marks)
    [ax] = fig.axes
    [notes] = [t for t in ax.texts if t.get_gid() == "anomaly_notes"]
    lines = notes.get_text().split("\n")
    assert len(lines) == MOST_NOTES + 1
    assert lines[0] == "[1] competitor Bolt (2) changed title on 2026-01-01 (the day before), a long cause"
    assert lines[-1] == f"[{MOST_NOTES + 1}] to [8]: 2 more causes, in the frame's cause column"
    assert sorted(t.get_text() for t in ax.texts if t.get_gid() == "anomaly_cause") == sorted(
        f"[{n}]" for n in range(1, 9)
    )


# -- the analysis' own frames, on a sandbox history -------------------------------------------------

SANDBOX_KEYWORDS = ["photo editor", "collage maker"]
APP = "3233849169"


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    """Two sandbox months of two keywords, and the three analysis frames of them."""
    with sandbox_client_on(SANDBOX_TODAY, tmp_path_factory.mktemp("analysis-charts")) as client:
        history = client.search_history_frame(SANDBOX_KEYWORDS, start="2026-09-01", end="2026-10-31")
        rivals = (
            history.filter(pl.col("rank") <= 10, pl.col("app_id") != APP)["app_id"]
            .value_counts(sort=True)["app_id"]
            .head(2)
            .to_list()
        )
        with warnings.catch_warnings():  # the sandbox sends targets the flattener names once
            warnings.simplefilter("ignore", sf.UnknownFieldWarning)
            changes = client.changes_frame([APP, *rivals], start="2026-09-01", end="2026-10-31")
    ranks = sf.rank_history(history, [APP, *rivals])
    return {
        "history": history,
        "apps": [APP, *rivals],
        "sov": sf.share_of_voice(history, weights="equal"),
        "opportunities": sf.keyword_opportunities(history, APP, rivals, changes=changes),
        "anomalies": sf.rank_anomalies(ranks, changes=changes),
    }


def test_share_of_voice_chart_of_a_sandbox_history_stacks_its_shares(analysed):
    sov = analysed["sov"]
    fig = plots.share_of_voice_chart(sov, top_apps=3)
    [ax] = fig.axes
    recorded = sov.filter(pl.col("keywords_recorded") > 0)
    totals = recorded.group_by("date").agg(pl.col("share").sum()).sort("date")
    largest = sov.group_by("app_id").agg(pl.col("share").sum()).sort("share", "app_id", descending=[True, False])
    first = largest["app_id"][0]
    others = next(label for label in legend_texts(fig) if label.startswith("others ("))
    assert others == f"others ({largest.height - 3} apps)"
    stack_top = tops(ax, others)
    bottom = tops(ax, first)
    for day_, share in totals.iter_rows():
        x = float(mdates.date2num(day_))
        assert stack_top[x] == pytest.approx(share)  # every app's share, stacked: the whole top (equal weights)
        own = recorded.filter(pl.col("date") == day_, pl.col("app_id") == first)["share"][0]
        assert bottom[x] == pytest.approx(own)
    assert not spans(ax, "no_data")  # some keyword was recorded on every day


def test_share_of_voice_chart_of_one_sandbox_keyword_hatches_the_days_the_service_missed(analysed):
    one = sf.share_of_voice(analysed["history"].filter(pl.col("keyword") == "photo editor"), weights="equal")
    silent = one.filter(pl.col("keywords_recorded") == 0)["date"].unique().to_list()
    assert silent, "the sandbox misses some days of a keyword"
    fig = plots.share_of_voice_chart(one)
    [ax] = fig.axes
    covered = {round(x + 0.5 + n) for x, end in spans(ax, "no_data") for n in range(round(end - x))}
    assert covered == {round(mdates.date2num(d)) for d in silent}
    assert f"{len(silent)} day{'s' if len(silent) > 1 else ''} without any keyword recorded" in fig.get_suptitle()
    for collection in ax.collections:  # no area over a day missed
        xs = collection.get_paths()[0].vertices[:, 0]
        assert not any(abs(xs - mdates.date2num(d)).min() < 0.5 for d in silent)


def test_opportunities_chart_of_a_sandbox_history_draws_its_rows(analysed):
    found = analysed["opportunities"]
    fig = plots.opportunities_chart(found, n=2)
    [ax] = fig.axes
    best = found.sort("score", descending=True).head(2)
    assert [t.get_text() for t in ax.get_yticklabels()] == best["keyword"].to_list()
    slot = ax.get_xticks()[-1]
    drawn = [float(line.get_xdata()[0]) for line in app_dots(ax)]
    assert drawn == [float(r) if r is not None else slot for r in best["app_rank"].to_list()]
    rivals = [float(line.get_xdata()[0]) for line in rival_dots(ax)]
    assert rivals == [float(r) if r is not None else slot for r in best["best_competitor_rank"].to_list()]


def test_rank_chart_rings_every_anomaly_of_a_sandbox_history(analysed):
    found = analysed["anomalies"]
    assert found.height > 0
    fig = plots.rank_chart(analysed["history"], analysed["apps"], anomalies=found)
    drawn = [ring for ax in fig.axes for ring in rings(ax)]
    assert len(drawn) == found.height
    by_direction = found["direction"].value_counts()
    for direction, count in by_direction.iter_rows():
        assert sum(ring.get_gid() == f"anomaly_{direction}" for ring in drawn) == count
    texts = legend_texts(fig)
    assert "not charted" not in " ".join(texts)
