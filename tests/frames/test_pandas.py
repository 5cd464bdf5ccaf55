"""pandas users: sf.to_pandas keeps every column's type, and what pandas' own from_arrow takes."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
import warnings
from decimal import Decimal

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from polars.testing import assert_frame_equal

import storeframes as sf
from storeframes import schemas
from storeframes.analysis import category_standing, movers, with_names
from storeframes.fetch.pipeline import FRAMES
from storeframes.sandbox import World
from storeframes.widgets.cards import app_card
from tests.conftest import SANDBOX_TODAY

WORLD = World(0)
IOS = list(WORLD.EXAMPLE_IOS_APPS)
ANDROID = list(WORLD.EXAMPLE_ANDROID_APPS)
KEYWORDS = list(WORLD.EXAMPLE_KEYWORDS[:2])
RANGE = {"start": "2026-01-01", "end": "2026-10-31"}  # every change table has rows on both stores
PANDAS_3 = int(pd.__version__.split(".")[0]) >= 3


def _build(client: sf.Client, name: str) -> pl.DataFrame:
    """The frame function ``name`` on iphone and android apps (so both stores' rows are in it)."""
    endpoint = FRAMES[name].endpoint
    function = getattr(client, name)
    if endpoint == "search":
        return function(KEYWORDS, ads=True)  # is_ad and organic_rank filled, organic_rank null for ads
    if endpoint == "search_history":
        return function(KEYWORDS, start="2026-11-10", end="2026-11-20")  # today's live rows too
    if endpoint == "benchmarks":
        return function(countries="us,gb", channels="all,search")
    extra = RANGE if endpoint == "changes" else {}
    return pl.concat([function(IOS, **extra), function(ANDROID, **extra)])


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    with sf.sandbox.client(today=SANDBOX_TODAY, cache_dir=tmp_path_factory.mktemp("cache")) as c:
        yield c


@pytest.fixture(scope="module")
def frames(client) -> dict[str, pl.DataFrame]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unavailable apps and the like: not what these tests are about
        return {name: _build(client, name) for name in FRAMES}


# -- every frame, exactly -------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(FRAMES))
def test_every_frame_comes_back_from_pandas_unchanged(frames, name):
    frame = frames[name]
    assert frame.height > 0 and frame.schema == FRAMES[name].table.schema
    converted = sf.to_pandas(frame)
    assert list(converted.columns) == frame.columns and len(converted) == frame.height
    assert all(isinstance(dtype, pd.ArrowDtype) for dtype in converted.dtypes)
    for column in frame.columns:  # nulls stay nulls, column by column
        assert int(converted[column].isna().sum()) == frame[column].null_count(), column
    assert_frame_equal(pl.from_pandas(converted), frame)  # values and dtypes


def test_every_public_frame_function_is_covered():
    public = {name for name in sf.__all__ if name.endswith("_frame")}
    assert public == set(FRAMES)


@pytest.mark.parametrize("table", list(schemas.SCHEMAS.values()), ids=list(schemas.SCHEMAS))
def test_an_empty_frame_keeps_its_schema(table):
    empty = table.empty()
    converted = sf.to_pandas(empty)
    assert list(converted.columns) == table.names and len(converted) == 0
    assert_frame_equal(pl.from_pandas(converted), empty)


@pytest.fixture(scope="module")
def results(client, frames) -> dict[str, pl.DataFrame]:
    """What the analysis functions and the ledger return, on the frames above."""
    history, changes, metadata = frames["search_history_frame"], frames["changes_frame"], frames["metadata_frame"]
    apps = history["app_id"].unique(maintain_order=True).head(4).to_list()
    return {
        "rank_history": sf.rank_history(history, apps),
        "movers": movers(history, apps, top=5),
        "with_names": with_names(changes, metadata, categories=True),
        "category_standing": category_standing(frames["benchmarks_frame"], "Photo & Video"),
        "ledger": client.ledger,
    }


@pytest.mark.parametrize("name", ["rank_history", "movers", "with_names", "category_standing", "ledger"])
def test_what_the_analysis_functions_and_the_ledger_return_comes_back_unchanged(results, name):
    result = results[name]
    assert result.height > 0
    assert_frame_equal(pl.from_pandas(sf.to_pandas(result)), result)


def test_a_lazy_frame_is_collected_first(frames):
    frame = frames["metrics_frame"]
    pd.testing.assert_frame_equal(sf.to_pandas(frame.lazy().filter(pl.col("date").is_not_null())), sf.to_pandas(frame))


def test_a_scan_of_the_cache_is_collected_first(client, frames):
    scanned = sf.scan("versions", client.cache.path)
    assert isinstance(scanned, pl.LazyFrame)
    converted = sf.to_pandas(scanned)
    assert len(converted) == frames["versions_frame"].height
    assert_frame_equal(pl.from_pandas(converted), scanned.collect())


def test_a_frame_without_columns_keeps_its_rows():
    emptied = pl.DataFrame({"a": [1, 2, 3]}).drop("a")  # 3 rows on polars 2, 0 rows before
    assert sf.to_pandas(emptied).shape == (emptied.height, 0)
    assert sf.to_pandas(pl.DataFrame()).shape == (0, 0)


# -- the dtypes users rely on ---------------------------------------------------------------------


def test_days_stay_days_and_timestamps_stay_utc(frames):
    metrics = sf.to_pandas(frames["metrics_frame"])
    assert metrics["date"].dtype == pd.ArrowDtype(pa.date32())
    assert metrics["date"].iloc[0] == frames["metrics_frame"]["date"][0]
    assert isinstance(metrics["date"].iloc[0], dt.date) and not isinstance(metrics["date"].iloc[0], dt.datetime)
    assert metrics["fetched_at"].dtype == pd.ArrowDtype(pa.timestamp("us", tz="UTC"))
    assert str(metrics["fetched_at"].dt.tz) == "UTC"
    assert metrics["fetched_at"].iloc[0] == pd.Timestamp(frames["metrics_frame"]["fetched_at"][0])


def test_whole_numbers_with_nulls_stay_whole_numbers_with_pd_na(frames):
    frame = frames["metrics_frame"]
    stars = sf.to_pandas(frame)["stars_1"]
    nulls = frame["stars_1"].null_count()
    assert 0 < nulls < frame.height  # the frame has both, or this test shows nothing
    assert stars.dtype == pd.ArrowDtype(pa.int64())
    assert stars.isna().sum() == nulls and stars[stars.isna()].iloc[0] is pd.NA
    assert stars.dropna().tolist() == frame["stars_1"].drop_nulls().to_list()
    assert all(type(v) is int for v in stars.dropna())
    assert stars.sum() == frame["stars_1"].sum()  # nulls skipped, the sum a whole number


def test_prices_stay_decimals(frames):
    frame = frames["in_app_purchases_frame"]
    prices = sf.to_pandas(frame)["price"]
    assert prices.dtype == pd.ArrowDtype(pa.decimal128(38, 4))
    assert prices.dropna().tolist() == frame["price"].drop_nulls().to_list()
    assert all(isinstance(v, Decimal) for v in prices.dropna()) and len(prices.dropna()) > 0


def test_categories_are_lists_of_texts_pandas_works_with(frames):
    frame = frames["metadata_frame"]
    categories = sf.to_pandas(frame)["categories"]
    assert categories.dtype == pd.ArrowDtype(pa.list_(pa.large_string()))
    assert categories.iloc[0] == frame["categories"][0].to_list() and isinstance(categories.iloc[0], list)
    assert categories.list.len().tolist() == frame["categories"].list.len().to_list()
    exploded = categories.explode()  # one row per category, on pandas 2.2 as on pandas 3
    assert exploded.dropna().tolist() == frame["categories"].explode().drop_nulls().to_list()
    assert exploded.index.is_monotonic_increasing and exploded.index.max() == len(frame) - 1
    first = frame["categories"][0][0]
    assert categories.apply(lambda cell: first in cell).iloc[0]


def test_texts_and_flags_keep_their_nulls(frames):
    frame = frames["search_frame"]
    converted = sf.to_pandas(frame)
    assert converted["app_id"].dtype == pd.ArrowDtype(pa.large_string())
    assert converted["is_ad"].dtype == pd.ArrowDtype(pa.bool_())
    assert converted["organic_rank"].isna().sum() == frame["is_ad"].sum() > 0  # an ad has no organic rank


def test_pandas_frames_go_back_into_storeframes(client, frames):
    history = frames["search_history_frame"]
    apps = history["app_id"].unique(maintain_order=True).head(3).to_list()
    assert sf.rank_history(sf.to_pandas(history), apps).equals(sf.rank_history(history, apps))
    assert movers(sf.to_pandas(history), apps).equals(movers(history, apps))
    metadata = frames["metadata_frame"]
    card = app_card(metadata.row(0, named=True), client=client)
    assert app_card(sf.to_pandas(metadata).iloc[0], client=client).html == card.html
    assert app_card(sf.to_pandas(metadata.head(1)), client=client).html == card.html


# -- refused --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "named"),
    [
        (None, "got NoneType"),
        ([{"a": 1}], "got list"),
        ("metadata_frame", "got str"),
        (pl.Series("a", [1]), "got polars.Series (for a Series: series.to_frame())"),
        (pd.DataFrame({"a": [1]}), "got pandas.DataFrame (a pandas object needs no conversion)"),
    ],
)
def test_anything_but_a_polars_frame_is_refused_with_what_was_given(value, named):
    with pytest.raises(TypeError, match="to_pandas takes a polars DataFrame or LazyFrame") as caught:
        sf.to_pandas(value)
    assert str(caught.value).endswith(named)


@pytest.mark.processes
def test_without_pandas_the_error_names_the_extra_to_install():
    code = (
        "import sys; sys.modules['pandas'] = None\n"
        "import polars as pl, storeframes as sf\n"
        "try:\n"
        "    sf.to_pandas(pl.DataFrame({'a': [1]}))\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.strip() == (
        'storeframes.to_pandas needs pandas 2.2 or newer: pip install "pandas>=2.2" '
        '(or, from a checkout of storeframes, pip install ".[pandas]")'
    )


@pytest.mark.processes
def test_importing_storeframes_imports_neither_pandas_nor_pyarrow():
    code = "import sys, storeframes; print(sorted(m for m in ('pyarrow', 'pandas') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.strip() == "[]"


@pytest.mark.processes
def test_a_first_call_of_every_frame_function_and_its_cache_imports_no_pandas(tmp_path):
    """pyarrow's first ``pa.array`` of a Python list imports pandas when it is installed (0.2-0.3 s): a new
    process's first frames (metadata's category lists among them), cached, read back warm, compacted and
    read as snapshots, never pay for it."""
    code = (
        "import sys, warnings\n"
        "warnings.simplefilter('ignore')\n"
        "import storeframes as sf\n"
        "from storeframes.sandbox import World\n"
        "apps = list(World().EXAMPLE_IOS_APPS[:2])\n"
        "for cache in (None, 'cache', 'cache'):\n"
        "    with sf.sandbox.client(cache_dir=cache) as c:\n"
        "        assert c.metadata_frame(apps)['categories'].list.len().to_list() == [1, 1]\n"
        "        c.changes_frame(apps); c.search_frame('photo editor'); c.search_history_frame('photo editor')\n"
        "        c.metrics_frame(apps); c.benchmarks_frame()\n"
        "sf.compact('cache')\n"
        "sf.snapshots('metadata', 'cache').collect(); sf.observed_changes('cache')\n"
        "print('pandas' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300, cwd=tmp_path
    )
    assert done.stdout.strip() == "False"


# -- pandas' own DataFrame.from_arrow (pandas 3) ---------------------------------------------------

needs_from_arrow = pytest.mark.skipif(not PANDAS_3, reason="DataFrame.from_arrow is new in pandas 3")
LISTS = [name for name in FRAMES if any(isinstance(d, pl.List) for d in FRAMES[name].table.schema.dtypes())]


@needs_from_arrow
@pytest.mark.parametrize("name", list(FRAMES))
def test_from_arrow_takes_every_frame_through_to_arrow(frames, name):
    frame = frames[name]
    converted = pd.DataFrame.from_arrow(frame.to_arrow())
    assert list(converted.columns) == frame.columns and len(converted) == frame.height
    if "categories" in frame.columns:
        assert list(converted["categories"].iloc[0]) == frame["categories"][0].to_list()


@needs_from_arrow
@pytest.mark.parametrize("name", [name for name in FRAMES if name not in LISTS])
def test_from_arrow_takes_a_frame_without_a_list_column_as_it_is(frames, name):
    frame = frames[name]
    converted = pd.DataFrame.from_arrow(frame)
    assert list(converted.columns) == frame.columns and len(converted) == frame.height


@needs_from_arrow
@pytest.mark.xfail(
    raises=pa.ArrowNotImplementedError,
    strict=True,  # a pyarrow that can will pass it: then the mark goes
    reason="polars exports texts as string_view through __arrow_c_stream__; pyarrow cannot make pandas "
    "lists of string_view",
)
@pytest.mark.parametrize("name", LISTS)
def test_from_arrow_of_a_frame_with_a_list_column(frames, name):
    frame = frames[name]
    converted = pd.DataFrame.from_arrow(frame)
    assert list(converted["categories"].iloc[0]) == frame["categories"][0].to_list()
