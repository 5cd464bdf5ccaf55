"""storeframes.analysis: movers, changes_before, category_standing and with_names on frames with known answers."""

from __future__ import annotations

from datetime import date

import polars as pl
import pytest

import storeframes as sf
from storeframes.analysis import (
    CHANGES_BEFORE,
    MOVERS,
    category_standing,
    changes_before,
    movers,
    with_names,
)


def _day(n: int) -> date:
    return date(2026, 3, n)


def _history(rows: list[tuple[str, int, int, str]]) -> pl.DataFrame:
    """A search history frame from (keyword, day of March, rank, app_id) rows."""
    return pl.DataFrame(
        [(k, _day(d), r, a) for k, d, r, a in rows],
        schema={"keyword": pl.String, "date": pl.Date, "rank": pl.Int64, "app_id": pl.String},
        orient="row",
    )


# "maps": days 1, 2 and 4 recorded (3 missing); "bus": day 1 missing, days 2 to 4 recorded.
HISTORY = _history(
    [
        ("maps", 1, 1, "a"),
        ("maps", 1, 2, "b"),
        ("maps", 1, 3, "x"),
        ("maps", 2, 1, "b"),
        ("maps", 2, 2, "a"),
        ("maps", 4, 1, "c"),
        ("maps", 4, 2, "x"),
        ("maps", 4, 3, "b"),
        ("maps", 4, 4, "a"),
        ("bus", 2, 1, "x"),
        ("bus", 2, 5, "a"),
        ("bus", 3, 1, "a"),
        ("bus", 4, 2, "a"),
        ("bus", 4, 3, "b"),
    ]
)


def _by(frame: pl.DataFrame, keyword: str, app: str) -> dict:
    rows = frame.filter(pl.col("keyword") == keyword, pl.col("app_id") == app)
    assert rows.height == 1, rows
    return rows.row(0, named=True)


# -- movers ---------------------------------------------------------------------------------------


def test_movers_ranks_at_each_end_change_and_days():
    out = movers(HISTORY, ["a", "b", "c"])
    assert out.schema == MOVERS.schema
    assert out.columns == [
        "keyword", "app_id", "start_date", "start_rank", "start_status", "end_date", "end_rank", "end_status",
        "change", "move", "places_moved", "days_ranked", "days_recorded", "country", "language", "device",
    ]  # fmt: skip
    assert out.schema["move"] == pl.String
    assert out.height == 6  # 2 keywords x 3 apps
    a = _by(out, "maps", "a")
    assert (a["start_date"], a["start_rank"], a["end_date"], a["end_rank"]) == (_day(1), 1, _day(4), 4)
    assert (a["change"], a["days_ranked"], a["days_recorded"]) == (-3, 3, 3)  # moved down 3 places
    b = _by(out, "maps", "b")
    assert (b["start_rank"], b["end_rank"], b["change"]) == (2, 3, -1)
    # "bus" has no day 1: its move starts on day 2, the first day with data for the keyword
    bus = _by(out, "bus", "a")
    assert (bus["start_date"], bus["start_rank"], bus["end_rank"], bus["change"]) == (_day(2), 5, 2, 3)
    assert (bus["days_ranked"], bus["days_recorded"]) == (3, 3)
    # c ranks only at the end: null start rank, status says why, no change: it entered
    c = _by(out, "maps", "c")
    assert (c["start_rank"], c["start_status"], c["end_rank"], c["end_status"]) == (None, "not_ranked", 1, "ranked")
    assert (c["change"], c["move"], c["days_ranked"]) == (None, "entered", 1)
    never = _by(out, "bus", "c")  # given, never ranked
    assert (never["start_status"], never["end_status"], never["days_ranked"]) == ("not_ranked", "not_ranked", 0)
    assert never["move"] is None


def test_movers_move_says_up_down_entered_left_or_same():
    out = movers(HISTORY)
    moves = {(k, a): (change, move) for k, a, change, move in out.select("keyword", "app_id", "change", "move").rows()}
    assert moves == {
        ("maps", "a"): (-3, "down"),
        ("maps", "b"): (-1, "down"),
        ("maps", "x"): (1, "up"),
        ("maps", "c"): (None, "entered"),  # not among day 1's results, 1st on day 4
        ("bus", "x"): (None, "left"),  # 1st on day 2, not among day 4's results
        ("bus", "a"): (3, "up"),
        ("bus", "b"): (None, "entered"),
    }
    same = movers(HISTORY, ["a"], start="2026-03-02", end="2026-03-03")
    assert same.select("keyword", "change", "move").rows() == [("bus", 4, "up"), ("maps", 0, "same")]
    no_data = movers(sf.rank_history(HISTORY, ["a"], keywords=["ferry"]))
    assert no_data["move"].to_list() == [None] and no_data["move"].dtype == pl.String


def test_movers_sorted_by_the_size_of_the_move_then_in_the_frames_order():
    out = movers(HISTORY, ["a", "b", "c"])
    # places_moved shows the size the rows are sorted by
    assert out.select("keyword", "app_id", "change", "move", "places_moved").rows() == [
        ("maps", "a", -3, "down", 3),  # a tie of size 3: in the frame's order, keywords, then apps as given
        ("maps", "c", None, "entered", 3),  # from below day 1's 3 results (4th) to 1st: 3 places
        ("bus", "a", 3, "up", 3),
        ("maps", "b", -1, "down", 1),
        ("bus", "b", None, "entered", 1),  # to 3rd below day 2's 2 results: counted as 1 place, the least
        ("bus", "c", None, None, None),  # never ranked: last, no size
    ]


def test_movers_top_keeps_the_biggest_moves_and_leaves_out_rows_that_did_not_move():
    assert movers(HISTORY, "a,b,c", top=2).select("keyword", "app_id", "change", "move").rows() == [
        ("maps", "a", -3, "down"),
        ("maps", "c", None, "entered"),
    ]
    assert movers(HISTORY, ["a", "b", "c"], top=10).height == 5  # all but the app that never ranked
    assert movers(HISTORY, ["a"], start="2026-03-02", end="2026-03-03")["change"].to_list() == [4, 0]
    assert movers(HISTORY, ["a"], start="2026-03-02", end="2026-03-03", top=5)["change"].to_list() == [4]


# Ten results on each of two days: a01 ... a10 at 1 to 10, then a10 first, "new" 3rd and a01 gone.
DAYS = _history(
    [("top", 1, rank, f"a{rank:02}") for rank in range(1, 11)]
    + [("top", 2, rank, app) for rank, app in enumerate(["a10", "a02", "new", *(f"a{n:02}" for n in range(3, 10))], 1)]
)


def test_movers_ranks_entries_and_exits_with_the_rest_by_their_distance_from_the_last_result():
    out = movers(DAYS)
    assert out.height == 11 and out.schema == MOVERS.schema
    assert out.select("app_id", "start_rank", "end_rank", "change", "move", "places_moved").head(4).rows() == [
        ("a01", 1, None, None, "left", 10),  # from 1st to below day 2's 10 results (11th): 10 places
        ("a10", 10, 1, 9, "up", 9),
        ("new", None, 3, None, "entered", 8),  # from below day 1's 10 results (11th) to 3rd: 8 places
        ("a03", 3, 4, -1, "down", 1),
    ]
    assert out["move"].to_list()[4:] == ["down"] * 6 + ["same"]  # a04 ... a09, then a02
    assert out["places_moved"].to_list()[4:] == [1] * 6 + [0]
    assert movers(DAYS, top=3)["app_id"].to_list() == ["a01", "a10", "new"]
    assert movers(DAYS, top=20).height == 10  # a02 did not move


def test_movers_within_keeps_the_moves_that_start_or_end_in_the_first_places():
    assert movers(DAYS, within=2).select("app_id", "move").rows() == [("a01", "left"), ("a10", "up"), ("a02", "same")]
    assert movers(DAYS, within=2, top=5)["app_id"].to_list() == ["a01", "a10"]
    assert movers(DAYS, within=3, top=3)["app_id"].to_list() == ["a01", "a10", "new"]  # new ends 3rd
    assert movers(DAYS, within=3)["app_id"].to_list() == ["a01", "a10", "new", "a03", "a02"]  # a03 starts 3rd
    # an app that never ranked is within no place; an entry deep in the list is not within the first places
    first = movers(HISTORY, ["a", "b", "c"], within=1)  # bus's a went from 5th to 2nd: not within 1
    assert first.select("keyword", "app_id", "move").rows() == [("maps", "a", "down"), ("maps", "c", "entered")]
    assert movers(HISTORY, ["b"], within=2)[["keyword", "move"]].rows() == [("maps", "down")]


def test_movers_of_rank_history_and_of_a_live_search_rank_entries_alike():
    apps = ["a01", "a10", "new", "a02", "a05"]
    ranks = sf.rank_history(DAYS, apps)
    for kwargs in ({}, {"top": 2}, {"within": 3}):
        assert movers(ranks, **kwargs).equals(movers(DAYS, apps, **kwargs)), kwargs
    # a live search: its ads are not results, so they do not push the last result down
    ads = pl.DataFrame(
        {"keyword": ["top", "top"], "date": [_day(1), _day(2)], "rank": [1, 1], "app_id": ["ad", "ad"]},
        schema={"keyword": pl.String, "date": pl.Date, "rank": pl.Int64, "app_id": pl.String},
    )
    search = pl.concat([ads, DAYS.with_columns(pl.col("rank") + 1)]).with_columns(
        is_ad=pl.col("app_id") == "ad", organic_rank=pl.when(pl.col("app_id") != "ad").then(pl.col("rank") - 1)
    )
    assert movers(search, apps).equals(movers(DAYS, apps))
    assert movers(search, apps).equals(movers(sf.rank_history(search, apps)))


def test_movers_without_apps_takes_every_app_that_ranked():
    out = movers(HISTORY)
    assert set(out.filter(pl.col("keyword") == "maps")["app_id"]) == {"a", "b", "c", "x"}
    assert set(out.filter(pl.col("keyword") == "bus")["app_id"]) == {"a", "b", "x"}
    x = _by(out, "maps", "x")
    assert (x["start_rank"], x["end_rank"], x["change"], x["days_ranked"]) == (3, 2, 1, 2)


def test_movers_of_rank_history_equals_movers_of_the_history():
    ranks = sf.rank_history(HISTORY, ["a", "b", "c"])
    assert movers(ranks).equals(movers(HISTORY, ["a", "b", "c"]))
    assert movers(ranks, "b").equals(movers(HISTORY, ["b"]))
    assert movers(ranks, start="2026-03-02", end=_day(3)).equals(
        movers(HISTORY, ["a", "b", "c"], start="2026-03-02", end=_day(3))
    )


def test_movers_start_and_end_limit_the_range():
    out = movers(HISTORY, ["a"], start="2026-03-02", end="2026-03-03")
    maps = _by(out, "maps", "a")  # maps has only day 2 in the range
    assert (maps["start_date"], maps["end_date"], maps["start_rank"], maps["end_rank"]) == (_day(2), _day(2), 2, 2)
    assert (maps["change"], maps["days_recorded"]) == (0, 1)
    bus = _by(out, "bus", "a")
    assert (bus["start_rank"], bus["end_rank"], bus["change"]) == (5, 1, 4)


def test_movers_a_keyword_without_data_in_the_range_says_no_data():
    ranks = sf.rank_history(HISTORY, ["a"], keywords=["maps", "ferry"])  # ferry: no row at all
    out = movers(ranks)
    ferry = _by(out, "ferry", "a")
    assert (ferry["start_date"], ferry["start_rank"], ferry["start_status"]) == (None, None, "no_data")
    assert (ferry["end_status"], ferry["days_recorded"], ferry["days_ranked"]) == ("no_data", 0, 0)
    assert out.row(-1, named=True)["keyword"] == "ferry"  # null change: last


def test_movers_of_a_live_search_leaves_ads_out_and_uses_the_organic_rank():
    search = pl.DataFrame(
        {
            "keyword": ["maps"] * 4,
            "date": [_day(1), _day(1), _day(2), _day(2)],
            "rank": [1, 2, 1, 2],
            "app_id": ["ad", "a", "a", "ad"],
            "is_ad": [True, False, False, True],
            "organic_rank": [None, 1, 1, None],
        }
    )
    out = movers(search)
    assert out["app_id"].to_list() == ["a"]
    assert out.select("start_rank", "end_rank", "change").row(0) == (1, 1, 0)


def test_movers_keeps_countries_apart():
    us = HISTORY.with_columns(country=pl.lit("us"))
    gb = HISTORY.with_columns(pl.col("rank") * 10, country=pl.lit("gb"))
    out = movers(pl.concat([us, gb]), ["a"])
    assert out.height == 4
    assert _by(out.filter(pl.col("country") == "gb"), "maps", "a")["change"] == -30
    assert _by(out.filter(pl.col("country") == "us"), "maps", "a")["change"] == -3


def test_movers_of_an_empty_history_is_an_empty_frame_of_its_schema():
    empty = sf.schemas.SEARCH_HISTORY.empty()
    for out in (movers(empty), movers(empty, ["a"], top=3), movers(empty.lazy(), start="2026-03-01")):
        assert out.height == 0 and out.schema == MOVERS.schema
    assert changes_before(movers(empty), sf.schemas.CHANGES.empty()).height == 0


def test_movers_takes_a_pandas_frame():
    assert movers(HISTORY.to_pandas(), ["a", "b", "c"]).equals(movers(HISTORY, ["a", "b", "c"]))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: movers(HISTORY.drop("rank", "date")), "history_or_ranks='a frame without date, rank'"),
        (lambda: movers(HISTORY.with_columns(status=pl.lit("ranked")).drop("rank")), "without rank"),
        (lambda: movers([1, 2]), "invalid history_or_ranks='list' for movers: a search_history_frame or rank_history"),
        (lambda: movers(HISTORY, top=0), "invalid top=0 for movers: a whole number of 1 or more"),
        (lambda: movers(HISTORY, top=True), "invalid top=True"),
        (lambda: movers(HISTORY, top=2.5), "invalid top=2.5"),
        (lambda: movers(HISTORY, within=0), "invalid within=0 for movers: a whole number of 1 or more, or None"),
        (lambda: movers(HISTORY, within=True), "invalid within=True"),
        (lambda: movers(HISTORY, within="10"), "invalid within='10'"),
        (lambda: movers(HISTORY.head(0), within=-1), "invalid within=-1"),  # even with no row to keep
        (lambda: movers(HISTORY, start="March 1"), "invalid start='March 1' for movers: a date as 'YYYY-MM-DD'"),
        (lambda: movers(HISTORY, start="2026-03-04", end="2026-03-01"), "a date on or after start=2026-03-04"),
        (
            lambda: movers(HISTORY, start="2026-03-09"),
            "start=datetime.date(2026, 3, 9) for movers: a date on or before the last day with data, 2026-03-04",
        ),
        (lambda: movers(HISTORY, end="2026-02-09"), "a date on or after the first day with data, 2026-03-01"),
        (lambda: movers(HISTORY, apps=[]), "invalid apps=[] for movers: an app id or a list of them"),
        (lambda: movers(sf.rank_history(HISTORY, ["a"]), ["a", "zz"]), "apps=['zz'] for movers: apps of the"),
    ],
)
def test_movers_refuses_bad_input_saying_what_is_allowed(call, message):
    with pytest.raises(sf.InvalidParameterError) as caught:
        call()
    assert message in str(caught.value)


# -- changes_before -------------------------------------------------------------------------------


def _changes(rows: list[tuple[str, date, str]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema={"app_id": pl.String, "date": pl.Date, "target": pl.String}, orient="row")


MOVED = pl.DataFrame(
    {
        "keyword": ["maps", "maps", "bus"],
        "app_id": ["a", "b", "a"],
        "start_date": [date(2026, 3, 1), date(2026, 3, 1), None],
        "end_date": [date(2026, 3, 20), date(2026, 3, 20), None],
        "change": [5, -2, None],
    }
)


def test_changes_before_counts_the_days_before_the_move_ended():
    changes = _changes(
        [
            ("a", date(2026, 3, 12), "icon"),  # end - 8: before the window
            ("a", date(2026, 3, 13), "version"),  # end - 7: the first day counted
            ("a", date(2026, 3, 15), "screenshots"),
            ("a", date(2026, 3, 16), "version"),
            ("a", date(2026, 3, 19), "subtitle"),  # end - 1: the last day counted
            ("a", date(2026, 3, 20), "title"),  # end_date itself: left out
            ("c", date(2026, 3, 15), "icon"),  # another app
        ]
    )
    out = changes_before(MOVED, changes, days=7)
    assert out.columns == [*MOVED.columns, "window_start", "window_end", "changes", "what_changed"]
    assert out.select(CHANGES_BEFORE.names).schema == CHANGES_BEFORE.schema
    assert out.select("keyword", "app_id").rows() == MOVED.select("keyword", "app_id").rows()  # the movers' order
    assert out.row(0, named=True) | {} == {
        **MOVED.row(0, named=True),
        "window_start": date(2026, 3, 13),
        "window_end": date(2026, 3, 19),
        "changes": 4,
        "what_changed": "version, screenshots, subtitle",  # each once, in the order first made
    }
    assert out.select("changes", "what_changed").row(1) == (0, None)  # b changed nothing
    assert out.select("window_start", "window_end", "changes", "what_changed").row(2) == (None, None, None, None)


def test_changes_before_days_none_is_the_whole_move():
    changes = _changes(
        [("a", date(2026, 2, 28), "icon"), ("a", date(2026, 3, 1), "icon"), ("b", date(2026, 3, 19), "x")]
    )
    out = changes_before(MOVED, changes, days=None)
    assert out.select("window_start", "window_end", "changes", "what_changed").rows()[:2] == [
        (date(2026, 3, 1), date(2026, 3, 19), 1, "icon"),
        (date(2026, 3, 1), date(2026, 3, 19), 1, "x"),
    ]


def test_changes_before_matches_the_country_when_both_frames_have_one():
    moved = MOVED.head(1).with_columns(country=pl.lit("us"))
    changes = _changes([("a", date(2026, 3, 15), "icon"), ("a", date(2026, 3, 16), "version")]).with_columns(
        country=pl.Series(["us", "gb"])
    )
    assert changes_before(moved, changes)["what_changed"].to_list() == ["icon"]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: changes_before(MOVED, _changes([]), days=0), "invalid days=0 for changes_before"),
        (lambda: changes_before(MOVED.drop("end_date"), _changes([])), "movers='a frame without end_date'"),
        (lambda: changes_before(MOVED, _changes([]).drop("target")), "changes='a frame without target'"),
        (
            lambda: changes_before(changes_before(MOVED, _changes([])), _changes([])),
            "a frame with window_start, window_end, changes, what_changed",
        ),
    ],
)
def test_changes_before_refuses_bad_input(call, message):
    with pytest.raises(sf.InvalidParameterError) as caught:
        call()
    assert message in str(caught.value)


# -- category_standing ----------------------------------------------------------------------------


def _benchmarks() -> pl.DataFrame:
    rows = []
    rates = {
        ("us", "search"): {"6008": 40.0, "6000": 50.0, "6001": 30.0, "6002": None, "6011": 40.0, "7011": 10.0},
        ("us", "browse"): {"6008": None, "6000": 20.0, "6001": 10.0, "6002": 30.0, "6011": 5.0, "7011": 1.0},
        ("gb", "search"): {"6000": 50.0, "6001": 30.0},  # Photo & Video has no row here
    }
    names = {"6008": "Photo & Video", "6000": "Business", "6001": "Weather", "6002": "Utilities"}
    for (country, channel), values in rates.items():
        for code, rate in values.items():
            rows.append((country, "iphone", "free", channel, code, names.get(code, "Music"), rate))
    return pl.DataFrame(
        rows,
        schema={
            "country": pl.String,
            "device": pl.String,
            "type": pl.String,
            "channel": pl.String,
            "category": pl.String,
            "category_name": pl.String,
            "page_views_to_installs": pl.Float64,
        },
        orient="row",
    )


def test_category_standing_place_out_of_and_median():
    out = category_standing(_benchmarks(), "Photo & Video")
    assert out.columns == [
        "country", "channel", "category", "category_name", "page_views_to_installs",
        "place", "out_of", "median", "vs_median", "device", "type",
    ]  # fmt: skip
    assert out.schema["place"] == pl.Int64 and out.schema["out_of"] == pl.Int64
    assert out.schema["median"] == pl.Float64 and out.schema["page_views_to_installs"] == pl.Float64
    assert out.select(
        "country", "channel", "page_views_to_installs", "place", "out_of", "median", "vs_median"
    ).rows() == [
        ("us", "search", 40.0, 2, 5, 40.0, 0.0),  # 50 > 40 = 40 > 30 > 10: shares 2nd place; null not ranked
        ("us", "browse", None, None, 5, 10.0, None),  # no rate here: no place, the others still counted
        ("gb", "search", None, None, 2, 40.0, None),  # no row here at all
    ]
    assert out["category"].to_list() == ["6008"] * 3 and out["category_name"].to_list() == ["Photo & Video"] * 3


def test_category_standing_by_code_any_case_and_another_rate():
    bench = _benchmarks().with_columns(impressions_to_installs=pl.col("page_views_to_installs") / 10)
    assert category_standing(bench, "photo & VIDEO").equals(category_standing(bench, 6008))
    out = category_standing(bench, "6000", rate="impressions_to_installs")
    assert "impressions_to_installs" in out.columns and "page_views_to_installs" not in out.columns
    assert out["place"].to_list() == [1, 2, 1]  # us browse: Utilities (30) above Business (20)


@pytest.mark.parametrize(
    ("category", "rate", "message"),
    [
        ("Photo and Video", "page_views_to_installs", "closest: 'Photo & Video' (6008)"),
        ("Wether", "page_views_to_installs", "closest: 'Weather' (6001)"),
        ("zzzz", "page_views_to_installs", "a category code or name of the frame; such as 'Photo & Video' (6008)"),
        ("music", "page_views_to_installs", "that name is shared, give a code: 6011 (Music), 7011 (Music)"),
        ("", "page_views_to_installs", "a category code or name, such as '6008'"),
        ("6008", "installs", "invalid rate='installs' for category_standing: one of impressions_to_page_views"),
    ],
)
def test_category_standing_refuses_what_the_frame_lacks(category, rate, message):
    with pytest.raises(sf.InvalidParameterError) as caught:
        category_standing(_benchmarks(), category, rate=rate)
    assert message in str(caught.value)


def test_category_standing_of_an_empty_frame_says_so():
    with pytest.raises(sf.InvalidParameterError, match="the frame has no category"):
        category_standing(sf.schemas.BENCHMARKS.empty(), "6008")


def test_category_standing_names_the_missing_columns():
    with pytest.raises(sf.InvalidParameterError, match="benchmarks='a frame without category_name"):
        category_standing(_benchmarks().drop("category_name"), "6008")


# -- with_names -----------------------------------------------------------------------------------

METADATA = pl.DataFrame(
    {
        "app_id": ["b", "a"],
        "country": ["us", "us"],
        "title": ["Bee", "Ant"],
        "categories": [["6008", "6017"], ["NO_SUCH"]],
    }
)


def test_with_names_puts_the_title_after_app_id_and_keeps_rows_and_order():
    frame = pl.DataFrame({"keyword": ["k", "k", "k"], "app_id": ["a", "zz", "b"], "change": [1, 2, 3]})
    pivot = pl.DataFrame({"app_id": ["b"], "title": [2], "version": [5]})  # change targets as columns
    assert with_names(pivot, METADATA).rows() == [("b", "Bee", 2, 5)]
    out = with_names(frame, METADATA)
    assert out.columns == ["keyword", "app_id", "app_title", "change"]
    assert out.rows() == [("k", "a", "Ant", 1), ("k", "zz", None, 2), ("k", "b", "Bee", 3)]
    assert out.schema["app_title"] == pl.String
    full = with_names(frame, METADATA, categories=True)
    assert full.columns == ["keyword", "app_id", "app_title", "category", "category_name", "change"]
    assert full.select("category", "category_name").rows() == [
        ("NO_SUCH", None),
        (None, None),
        ("6008", "Photo & Video"),
    ]


def test_with_names_takes_the_title_of_the_rows_country():
    metadata = pl.concat([METADATA, METADATA.with_columns(country=pl.lit("de"), title=pl.col("title") + " (de)")])
    frame = pl.DataFrame({"app_id": ["a", "a", "b"], "country": ["de", "us", "de"]})
    assert with_names(frame, metadata)["app_title"].to_list() == ["Ant (de)", "Ant", "Bee (de)"]


@pytest.mark.parametrize(
    ("frame", "metadata", "message"),
    [
        (pl.DataFrame({"x": [1]}), METADATA, "frame='a frame without app_id'"),
        (pl.DataFrame({"app_id": ["a"]}), METADATA.drop("title"), "metadata='a frame without title'"),
        (pl.DataFrame({"app_id": ["a"], "app_title": ["t"]}), METADATA, "without the columns with_names adds"),
    ],
)
def test_with_names_refuses_bad_frames(frame, metadata, message):
    with pytest.raises(sf.InvalidParameterError) as caught:
        with_names(frame, metadata)
    assert message in str(caught.value)


# -- on the sandbox -------------------------------------------------------------------------------


def test_the_everyday_questions_on_the_sandbox():
    apps = ["3233849169", "394079159", "1395556972"]
    with sf.sandbox.client(today="2026-11-20", progress=False) as client:
        history = client.search_history_frame(["photo editor", "collage maker"], start="2026-10-01", end="2026-10-31")
        changes = client.changes_frame(apps, start="2026-10-01", end="2026-10-31")
        metadata = client.metadata_frame(apps)
        benchmarks = client.benchmarks_frame(
            countries="us", channels="all,search", start="2026-10-01", end="2026-10-31"
        )
        spent = client.spent
    moved = movers(history, apps)
    assert moved.height == 6 and moved.schema == MOVERS.schema
    assert moved.equals(movers(sf.rank_history(history, apps)))
    ranked = moved.filter(pl.col("change").is_not_null())
    assert ranked.height > 0  # the loop below proves nothing on an empty frame
    for row in ranked.iter_rows(named=True):  # each end is that day's rank in the history
        for end in ("start", "end"):
            day = history.filter(
                pl.col("keyword") == row["keyword"],
                pl.col("date") == row[f"{end}_date"],
                pl.col("app_id") == row["app_id"],
            )
            assert day["rank"].min() == row[f"{end}_rank"]
        assert row["change"] == row["start_rank"] - row["end_rank"]
    assert ranked["change"].abs().to_list() == sorted(ranked["change"].abs().to_list(), reverse=True)

    before = with_names(changes_before(movers(history, apps, top=3), changes, days=14), metadata)
    moved_at_all = moved.filter(pl.col("move").is_in(["up", "down", "entered", "left"]))
    assert moved_at_all.height >= 2 and before.height == min(3, moved_at_all.height)
    assert before.select(moved.columns).equals(moved_at_all.head(3)) and before["app_title"].null_count() == 0
    for row in before.iter_rows(named=True):
        made = changes.filter(
            pl.col("app_id") == row["app_id"], pl.col("date").is_between(row["window_start"], row["window_end"])
        )
        assert row["changes"] == made.height

    standing = category_standing(benchmarks, "Photo & Video")
    assert standing["channel"].to_list() == ["all", "search"]
    for row in standing.iter_rows(named=True):
        rates = benchmarks.filter(pl.col("channel") == row["channel"])["page_views_to_installs"].drop_nulls()
        assert row["out_of"] == rates.len() and row["median"] == rates.median()
        if row["page_views_to_installs"] is not None:
            assert row["place"] == (rates > row["page_views_to_installs"]).sum() + 1
    assert spent > 0


def test_movers_on_the_sandbox_count_entries_and_exits_and_keep_the_first_places():
    with sf.sandbox.client(today="2026-11-20", cache_dir=False, progress=False) as client:
        history = client.search_history_frame("meditation", start="2026-09-20", end="2026-11-18")
    results = dict(history.group_by("date").agg(pl.len()).iter_rows())
    every = movers(history)
    entered, left = every.filter(pl.col("move") == "entered"), every.filter(pl.col("move") == "left")
    assert entered.height > 0 and left.height > 0
    assert entered["change"].null_count() == entered.height and left["change"].null_count() == left.height
    assert set(entered.select("start_status", "end_status").rows()) == {("not_ranked", "ranked")}
    assert set(left.select("start_status", "end_status").rows()) == {("ranked", "not_ranked")}

    top = movers(history, top=10)
    assert top.height == 10 and "entered" in top["move"].to_list()  # an entry is a move, ranked with the rest
    sizes = [
        abs(r["change"])
        if r["change"] is not None
        else results[r["start_date"]] + 1 - r["end_rank"]
        if r["move"] == "entered"
        else results[r["end_date"]] + 1 - r["start_rank"]
        for r in top.iter_rows(named=True)
    ]
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] > 0
    assert top.equals(every.filter(pl.col("move").is_in(["up", "down", "entered", "left"])).head(10))

    near = movers(history, top=10, within=10)
    assert near.height == 10
    assert all(min(r["start_rank"] or 999, r["end_rank"] or 999) <= 10 for r in near.iter_rows(named=True))
    first_places = (pl.col("start_rank") <= 10) | (pl.col("end_rank") <= 10)
    assert near.equals(every.filter(first_places, pl.col("move") != "same").head(10))
