"""Every chart says what it shows: an alternative text read from its drawing, an image with that alt in a notebook."""

from __future__ import annotations

import base64
import html
import re
from datetime import timedelta

import matplotlib.pyplot as plt
import polars as pl
import pytest

import storeframes as sf
from storeframes import plots
from storeframes.plots import Chart, chart_alt
from tests._ipython import ipython_shell
from tests.conftest import SANDBOX_TODAY

PNG = b"\x89PNG\r\n\x1a\n"
IMAGE = re.compile(r'^<img src="data:image/png;base64,([A-Za-z0-9+/=]+)" alt="([^"]*)" width="1000" ')
START, END = SANDBOX_TODAY - timedelta(days=30), SANDBOX_TODAY - timedelta(days=2)


@pytest.fixture(scope="module")
def frames():
    with sf.sandbox.client(today=SANDBOX_TODAY, progress=False) as client:
        apps = list(client.sandbox_service.world.EXAMPLE_IOS_APPS[:2])
        history = client.search_history_frame(["photo editor", "collage maker"], start=START, end=END)
        yield {
            "apps": apps,
            "history": history,
            "metadata": client.metadata_frame(apps),
            "benchmarks": client.benchmarks_frame(countries="us", channels="all"),
        }


def test_a_rank_chart_says_its_title_its_panels_its_axes_and_its_key(frames):
    chart = plots.rank_chart(frames["history"], frames["apps"], names=frames["metadata"])
    assert isinstance(chart, Chart)
    titles = dict(frames["metadata"].select("app_id", "title").iter_rows())
    alt = chart.alt
    assert alt.startswith(f"Chart. Keyword ranks, us · iphone, {START} to {END}. “photo editor”: rank (1 = top). ")
    assert "“collage maker”: rank (1 = top) by date, " in alt  # the date axis, under the last panel
    key = alt.split("Key: ", 1)[1]
    assert all(f"({app})" in key for app in frames["apps"]) and titles[frames["apps"][1]][:10] in key
    assert alt.count(f"{START} to {END}") == 1  # a heading said once


def test_each_chart_says_what_it_is(frames):
    benchmarks = plots.benchmark_chart(frames["benchmarks"], highlight="Photo & Video")
    assert benchmarks.alt.startswith("Chart. Conversion benchmarks: page views → installs, us · iphone · free")
    assert "page views → installs (conversion rate, %), 0 to " in benchmarks.alt  # its axis, in words
    changes = sf.schemas.CHANGES.empty()
    nothing = plots.changes_timeline(changes, start=START, end=END)
    assert isinstance(nothing, Chart) and nothing.alt.startswith("No chart: ")  # the line it shows, in words
    assert nothing.alt_text == nothing.alt


def test_alt_text_of_a_figure_of_your_own_and_a_chart_that_names_its_own():
    figure = plt.figure()
    try:
        ax = figure.add_subplot()
        ax.bar(["us", "gb"], [3, 4], label="installs")
        ax.set_title("Installs")
        ax.legend()
        assert chart_alt(figure) == "Chart. Installs: us to gb. Key: installs."
    finally:
        plt.close(figure)
    chart = Chart()
    chart.alt_text = "Two apps' ranks for photo editor, Photo Editor Plus first all month"
    assert chart.alt == chart.alt_text


def test_a_notebook_shows_a_chart_as_an_image_with_its_alt_and_keeps_the_png(frames, tmp_path, monkeypatch):
    from IPython.display import display

    chart = plots.rank_chart(frames["history"], frames["apps"][:1])
    with ipython_shell(tmp_path, monkeypatch) as captured:
        display(chart)
    (shown,) = captured.outputs
    image = IMAGE.match(shown.data["text/html"])  # what JupyterLab and an HTML export show first
    assert image, shown.data["text/html"][:200]
    assert base64.b64decode(image[1]).startswith(PNG) and html.unescape(image[2]) == chart.alt
    assert base64.b64decode(shown.data["image/png"]).startswith(PNG)  # for the renderers of images only
    assert shown.data["text/plain"] == chart.alt  # a reader of text, and a docs page's alt


def test_a_chart_drawn_into_your_axes_returns_them_as_before(frames):
    figure = Chart()
    ax = figure.subplots()
    assert plots.rank_chart(frames["history"], frames["apps"][:1], ax=ax) is ax
    assert chart_alt(figure).startswith("Chart. Keyword ranks, us · iphone, ")
    assert isinstance(plots.rank_chart(frames["history"].filter(pl.lit(False)), frames["apps"]), Chart)
