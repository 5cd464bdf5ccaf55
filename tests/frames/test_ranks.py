"""rank_history: each app's rank per keyword and day, from hand-built histories and the sandbox."""

from __future__ import annotations

import itertools
from datetime import date, datetime, timedelta

import polars as pl
import pytest

import storeframes as sf
from storeframes.sandbox.world import World
from storeframes.schemas import RANK_HISTORY
from tests.conftest import SANDBOX_TODAY

WORLD = World(0)
APPS = [*WORLD.EXAMPLE_IOS_APPS, "1"]  # "1" is no app: it never ranks
US = {"country": "us", "language": "en", "device": "iphone"}


def day(n: int) -> date:
    return date(2026, 1, n)


def history(rows: list[tuple], **place: str | None) -> pl.DataFrame:
    """A search history frame from (keyword, day number, rank, app_id) rows, all in one place."""
    place = {**US, **place}
    return pl.DataFrame(
        {
            "keyword": [r[0] for r in rows],
            "date": [day(r[1]) for r in rows],
            "rank": [r[2] for r in rows],
            "app_id": [r[3] for r in rows],
            "source": ["history"] * len(rows),
            "country": [place["country"]] * len(rows),
            "language": [place["language"]] * len(rows),
            "device": [place["device"]] * len(rows),
            "fetched_at": [datetime(2026, 2, 1, 12)] * len(rows),
        },
        schema_overrides={"fetched_at": pl.Datetime("us", "UTC"), "language": pl.String, "country": pl.String},
    )


def table(frame: pl.DataFrame, *columns: str) -> list[tuple]:
    return frame.select(columns or ["app_id", "date", "rank", "status", "results"]).rows()


# keyword "maps": day 1 has 3 results, day 2 none, day 3 two, day 4 one
MAPS = history(
    [
        ("maps", 1, 1, "x"),
        ("maps", 1, 2, "y"),
        ("maps", 1, 3, "z"),
        ("maps", 3, 1, "y"),
        ("maps", 3, 2, "x"),
        ("maps", 4, 1, "z"),
    ]
)

# three keywords, first seen in the order b, a, c; rows not in date order
THREE = history(
    [
        ("b", 2, 1, "x"),
        ("a", 1, 1, "y"),
        ("b", 1, 1, "y"),
        ("c", 4, 1, "z"),
        ("a", 4, 1, "x"),
        ("a", 3, 1, "z"),
        ("c", 1, 2, "x"),
    ]
)


# -- statuses, ranks and results -----------------------------------------------------------------------


def test_each_status_with_its_rank_and_results():
    out = sf.rank_history(MAPS, ["x", "q"])
    assert table(out) == [
        ("x", day(1), 1, "ranked", 3),
        ("x", day(2), None, "no_data", None),
        ("x", day(3), 2, "ranked", 2),
        ("x", day(4), None, "not_ranked", 1),
        ("q", day(1), None, "not_ranked", 3),
        ("q", day(2), None, "no_data", None),
        ("q", day(3), None, "not_ranked", 2),
        ("q", day(4), None, "not_ranked", 1),
    ]
    assert table(out, "keyword", "country", "language", "device") == [("maps", "us", "en", "iphone")] * 8
    assert set(out["status"]) <= set(sf.RANK_STATUSES)
    assert sf.RANK_STATUSES == ("ranked", "not_ranked", "no_data", "not_fetched")
    assert "not_fetched" not in out["status"]  # only where fetched= says which days were asked


def test_fetched_tells_a_day_never_asked_for_from_a_day_the_service_recorded_nothing():
    days = [day(1), day(3), day(4), day(5)]  # day 2 was never asked for: over budget, a failed run, no run
    out = sf.rank_history(MAPS, ["x"], end=day(6), fetched=days)
    assert table(out) == [
        ("x", day(1), 1, "ranked", 3),
        ("x", day(2), None, "not_fetched", None),
        ("x", day(3), 2, "ranked", 2),
        ("x", day(4), None, "not_ranked", 1),
        ("x", day(5), None, "no_data", None),  # asked, and the service recorded nothing
        ("x", day(6), None, "not_fetched", None),
    ]
    assert out.schema == RANK_HISTORY.schema
    by_keyword = pl.DataFrame({"keyword": ["maps", "other"], "country": ["us", "us"], "date": [day(2), day(5)]})
    out = sf.rank_history(MAPS, ["x"], end=day(5), fetched=by_keyword)  # a day fetched for its keyword alone
    assert out["status"].to_list() == ["ranked", "no_data", "ranked", "not_ranked", "not_fetched"]
    for wrong in (pl.DataFrame({"day": [day(1)]}), ["2026-01-01"], 3):
        with pytest.raises(sf.InvalidParameterError, match=r"fetched.*the days fetched"):
            sf.rank_history(MAPS, ["x"], fetched=wrong)


def test_rank_is_null_unless_ranked_and_results_null_only_for_no_data():
    out = sf.rank_history(THREE, ["x", "y", "z", "w"])
    assert out.filter(pl.col("rank").is_not_null())["status"].unique().to_list() == ["ranked"]
    assert out.filter(pl.col("results").is_null())["status"].unique().to_list() == ["no_data"]
    assert out["status"].value_counts(sort=True).rows() == [("not_ranked", 21), ("no_data", 20), ("ranked", 7)]


def test_an_app_twice_in_a_day_gets_its_best_rank():
    frame = history([("maps", 1, 5, "x"), ("maps", 1, 1, "y"), ("maps", 1, 2, "x"), ("maps", 2, 7, "x")])
    assert table(sf.rank_history(frame, "x")) == [
        ("x", day(1), 2, "ranked", 3),
        ("x", day(2), 7, "ranked", 1),
    ]


def test_apps_in_a_comma_separated_text_are_several_apps_each_once():
    out = sf.rank_history(MAPS, "z,x,z")
    assert out["app_id"].unique(maintain_order=True).to_list() == ["z", "x"]
    assert out.height == 8


# -- the range of days -----------------------------------------------------------------------------------


def test_default_range_is_the_history_first_to_last_day():
    frame = history([("maps", 5, 1, "x"), ("maps", 2, 1, "y"), ("maps", 3, 1, "x")])
    out = sf.rank_history(frame, ["x"])
    assert table(out, "date", "status") == [
        (day(2), "not_ranked"),
        (day(3), "ranked"),
        (day(4), "no_data"),
        (day(5), "ranked"),
    ]


@pytest.mark.parametrize(
    ("start", "end", "days"),
    [
        ("2026-01-01", date(2026, 1, 6), [1, 2, 3, 4, 5, 6]),
        (date(2025, 12, 31), "2026-01-04", [0, 1, 2, 3, 4]),
        (" 2026-01-03 ", "2026-01-03", [3]),
        (datetime(2026, 1, 2, 23, 59), datetime(2026, 1, 3, 0, 1), [2, 3]),
    ],
)
def test_explicit_start_and_end_widen_or_narrow_the_range(start, end, days):
    full = {d: row for d, row in zip(range(1, 5), table(sf.rank_history(MAPS, ["x"])), strict=True)}
    out = sf.rank_history(MAPS, ["x"], start=start, end=end)
    expected = [full.get(n, ("x", day(1) + timedelta(days=n - 1), None, "no_data", None)) for n in days]
    assert table(out) == expected


def test_only_start_or_only_end_keeps_the_other_end_of_the_history():
    assert table(sf.rank_history(MAPS, ["x"], start="2026-01-03"), "date") == [(day(3),), (day(4),)]
    assert table(sf.rank_history(MAPS, ["x"], end="2026-01-02"), "date") == [(day(1),), (day(2),)]
    assert table(sf.rank_history(MAPS, ["x"], end="2026-01-06"), "date", "status")[-2:] == [
        (day(5), "no_data"),
        (day(6), "no_data"),
    ]


@pytest.mark.parametrize(("start", "end"), [("2026-01-03", "2026-01-02"), (day(4), day(1))])
def test_end_before_start_is_refused(start, end):
    with pytest.raises(sf.InvalidParameterError) as caught:
        sf.rank_history(MAPS, ["x"], start=start, end=end)
    assert caught.value.parameter == "end"
    assert caught.value.value == date.fromisoformat(str(end))
    message = str(caught.value)
    assert "end=" in message and f"start={date.fromisoformat(str(start))}" in message
    assert "rank_history" in message


@pytest.mark.parametrize(("name", "value"), [("start", "2026/01/01"), ("end", "yesterday"), ("start", 20260101)])
def test_a_day_that_is_not_a_date_is_refused(name, value):
    with pytest.raises(sf.InvalidParameterError) as caught:
        sf.rank_history(MAPS, ["x"], **{name: value})
    assert caught.value.parameter == name
    assert "YYYY-MM-DD" in str(caught.value)


# -- several keywords and apps ---------------------------------------------------------------------------


def test_one_row_per_keyword_app_and_day_in_keyword_app_day_order():
    apps = ["z", "x", "w"]
    out = sf.rank_history(THREE, apps)
    assert out.height == 3 * 3 * 4
    days = [day(n) for n in range(1, 5)]
    assert table(out, "keyword", "app_id", "date") == list(itertools.product(["b", "a", "c"], apps, days))
    ranked = out.filter(pl.col("status") == "ranked")
    assert table(ranked, "keyword", "app_id", "date", "rank") == [
        ("b", "x", day(2), 1),
        ("a", "z", day(3), 1),
        ("a", "x", day(4), 1),
        ("c", "z", day(4), 1),
        ("c", "x", day(1), 2),
    ]


def test_keywords_keeps_those_keywords_in_the_order_given():
    full = sf.rank_history(THREE, ["x", "y"])
    out = sf.rank_history(THREE, ["x", "y"], keywords=["c", "a"])
    assert out["keyword"].unique(maintain_order=True).to_list() == ["c", "a"]
    assert out.equals(pl.concat([full.filter(pl.col("keyword") == k) for k in ["c", "a"]]))


def test_a_text_keyword_is_one_keyword_with_its_spaces_made_one():
    frame = history([("photo editor", 1, 1, "x"), ("photo", 1, 1, "x"), ("photo editor", 2, 3, "x")])
    out = sf.rank_history(frame, ["x"], keywords="  photo   editor ")
    assert table(out, "keyword", "date", "rank") == [("photo editor", day(1), 1), ("photo editor", day(2), 3)]
    both = sf.rank_history(frame, ["x"], keywords=["photo", "photo editor"])
    assert table(both, "keyword", "date", "status") == [
        ("photo", day(1), "ranked"),
        ("photo", day(2), "no_data"),
        ("photo editor", day(1), "ranked"),
        ("photo editor", day(2), "ranked"),
    ]
    comma = sf.rank_history(frame, ["x"], keywords=["photo editor", "photo,photo editor"])  # commas do not split
    assert table(comma, "keyword", "status") == [
        ("photo editor", "ranked"),
        ("photo editor", "ranked"),
        ("photo,photo editor", "no_data"),
        ("photo,photo editor", "no_data"),
    ]


def test_a_keyword_absent_from_the_history_is_all_no_data_in_the_history_place():
    out = sf.rank_history(THREE, ["x", "y"], keywords=["a", "never searched"])
    absent = out.filter(pl.col("keyword") == "never searched")
    assert table(absent, "app_id", "date", "rank", "status", "results", "country", "language", "device") == [
        (app, day(n), None, "no_data", None, "us", "en", "iphone") for app in ["x", "y"] for n in range(1, 5)
    ]
    assert out.filter(pl.col("keyword") == "a").equals(sf.rank_history(THREE, ["x", "y"], keywords="a"))


def test_a_keyword_absent_from_the_history_asked_alone_is_all_no_data():
    out = sf.rank_history(THREE, ["x"], keywords="never searched")
    assert table(out, "keyword", "date", "status", "country", "language", "device") == [
        ("never searched", day(n), "no_data", "us", "en", "iphone") for n in range(1, 5)
    ]


def test_keywords_does_not_change_the_default_range():
    frame = history([("a", 1, 1, "x"), ("a", 4, 1, "x"), ("b", 2, 1, "x"), ("b", 3, 2, "x")])
    out = sf.rank_history(frame, ["x"], keywords="b")
    assert out.equals(sf.rank_history(frame, ["x"]).filter(pl.col("keyword") == "b"))


def test_narrowing_the_range_keeps_every_keyword_of_the_history():
    frame = history([("a", 1, 1, "x"), ("a", 3, 1, "x"), ("b", 1, 1, "x")])
    out = sf.rank_history(frame, ["x"], start="2026-01-02")
    assert out.equals(sf.rank_history(frame, ["x"]).filter(pl.col("date") >= day(2)))


# -- several places --------------------------------------------------------------------------------------


def test_countries_and_devices_of_one_history_are_kept_apart():
    frame = pl.concat(
        [
            history([("maps", 1, 1, "x"), ("maps", 2, 1, "y")]),
            history([("maps", 1, 4, "y"), ("maps", 1, 9, "x")], country="gb"),
            history([("maps", 2, 2, "x"), ("maps", 2, 3, "z")], device="ipad"),
        ]
    )
    out = sf.rank_history(frame, ["x", "y"])
    assert out.height == 3 * 2 * 2
    assert table(out, "country", "device", "app_id", "date", "rank", "status", "results") == [
        ("us", "iphone", "x", day(1), 1, "ranked", 1),
        ("us", "iphone", "x", day(2), None, "not_ranked", 1),
        ("us", "iphone", "y", day(1), None, "not_ranked", 1),
        ("us", "iphone", "y", day(2), 1, "ranked", 1),
        ("gb", "iphone", "x", day(1), 9, "ranked", 2),
        ("gb", "iphone", "x", day(2), None, "no_data", None),
        ("gb", "iphone", "y", day(1), 4, "ranked", 2),
        ("gb", "iphone", "y", day(2), None, "no_data", None),
        ("us", "ipad", "x", day(1), None, "no_data", None),
        ("us", "ipad", "x", day(2), 2, "ranked", 2),
        ("us", "ipad", "y", day(1), None, "no_data", None),
        ("us", "ipad", "y", day(2), None, "not_ranked", 2),
    ]


def test_a_null_language_is_its_own_series():
    frame = pl.concat(
        [history([("maps", 1, 1, "x")], language=None), history([("maps", 1, 2, "y"), ("maps", 1, 3, "x")])]
    )
    out = sf.rank_history(frame, ["x"])
    assert table(out, "language", "rank", "status", "results") == [(None, 1, "ranked", 1), ("en", 3, "ranked", 2)]


def test_a_history_without_place_columns_has_null_places():
    frame = MAPS.select("keyword", "date", "rank", "app_id")
    out = sf.rank_history(frame, ["x"])
    assert table(out) == table(sf.rank_history(MAPS, ["x"]))
    assert table(out, "country", "language", "device") == [(None, None, None)] * 4
    assert out.schema == RANK_HISTORY.schema


def test_absent_keyword_gets_every_place_of_the_history():
    frame = pl.concat([history([("maps", 1, 1, "x")]), history([("maps", 1, 1, "x")], country="de", language="de")])
    out = sf.rank_history(frame, ["x"], keywords=["maps", "atlas"])
    assert table(out, "keyword", "country", "language", "status") == [
        ("maps", "us", "en", "ranked"),
        ("maps", "de", "de", "ranked"),
        ("atlas", "us", "en", "no_data"),
        ("atlas", "de", "de", "no_data"),
    ]


def test_rows_are_grouped_by_keyword_with_several_places():
    frame = pl.concat(
        [history([("a", 1, 1, "x"), ("b", 1, 1, "x")]), history([("a", 1, 2, "x"), ("b", 1, 1, "x")], country="gb")]
    )
    out = sf.rank_history(frame, ["x"])
    assert out["keyword"].to_list() == ["a", "a", "b", "b"]
    assert out.equals(sf.rank_history(frame, ["x"], keywords=["a", "b"]))


# -- search frames with ads -------------------------------------------------------------------------------


def test_a_search_frame_ads_are_left_out_and_rank_is_the_organic_rank():
    frame = pl.DataFrame(
        {
            "keyword": ["maps"] * 5,
            "date": [day(1)] * 5,
            "rank": [1, 2, 3, 4, 5],
            "app_id": ["x", "ad", "y", "x", "z"],
            "is_ad": [True, True, False, False, False],
            "organic_rank": [None, None, 1, 2, 3],
            **{k: [v] * 5 for k, v in US.items()},
        }
    )
    out = sf.rank_history(frame, ["x", "ad", "y", "q"])
    assert table(out) == [
        ("x", day(1), 2, "ranked", 3),
        ("ad", day(1), None, "not_ranked", 3),
        ("y", day(1), 1, "ranked", 3),
        ("q", day(1), None, "not_ranked", 3),
    ]
    assert out.schema == RANK_HISTORY.schema


def test_sandbox_search_frame_with_ads_gives_organic_ranks():
    with sf.sandbox.client(today=SANDBOX_TODAY, progress=False, cache_dir=False) as client:
        frame = client.search_frame("photo editor", ads=True)
    placements = WORLD.search_ads("photo editor", device="iphone", country="us", language="en", day=SANDBOX_TODAY)
    organic = [p["application_id"] for p in placements if not p["is_ad"]]
    ads = [p["application_id"] for p in placements if p["is_ad"]]
    apps = [*ads, *WORLD.EXAMPLE_IOS_APPS, "1"]
    out = sf.rank_history(frame, apps)
    expected = [
        (a, SANDBOX_TODAY, organic.index(a) + 1 if a in organic else None, len(organic)) for a in dict.fromkeys(apps)
    ]
    assert table(out, "app_id", "date", "rank", "results") == expected
    assert out.filter(pl.col("status") == "ranked").height >= 2


# -- schema and empty histories ---------------------------------------------------------------------------


def test_schema_is_rank_history_whatever_the_input_dtypes():
    assert sf.rank_history(MAPS, ["x"]).schema == RANK_HISTORY.schema
    loose = MAPS.with_columns(
        pl.col("rank").cast(pl.Int32),
        pl.col("date").cast(pl.Datetime("ms")) + pl.duration(hours=13),
        pl.col("country").cast(pl.Categorical),
    )
    out = sf.rank_history(loose, ["x"])
    assert out.schema == RANK_HISTORY.schema
    assert out.equals(sf.rank_history(MAPS, ["x"]))


def test_an_empty_history_gives_an_empty_frame_with_the_schema():
    out = sf.rank_history(MAPS.clear(), ["x"])
    assert out.height == 0
    assert out.schema == RANK_HISTORY.schema
    assert sf.rank_history(MAPS.clear(), ["x"], keywords="maps").shape == (0, len(RANK_HISTORY.names))


def test_an_empty_history_with_start_and_end_is_all_no_data():
    out = sf.rank_history(MAPS.clear(), ["x", "y"], keywords=["maps"], start="2026-01-01", end="2026-01-03")
    assert out.schema == RANK_HISTORY.schema
    assert table(out, "keyword", "app_id", "date", "rank", "status", "results") == [
        ("maps", app, day(n), None, "no_data", None) for app in ["x", "y"] for n in (1, 2, 3)
    ]
    no_keyword = sf.rank_history(MAPS.clear(), ["x"], start="2026-01-01", end="2026-01-03")
    assert no_keyword.schema == RANK_HISTORY.schema
    assert no_keyword.height == 0  # no keyword known: nothing to report


# -- inputs ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dropped", [["rank"], ["app_id", "date"], ["keyword", "date", "rank", "app_id"]])
def test_a_frame_missing_columns_is_refused_naming_them(dropped):
    with pytest.raises(sf.InvalidParameterError) as caught:
        sf.rank_history(MAPS.drop(dropped), ["x"])
    assert caught.value.parameter == "history"
    named = [c for c in ("keyword", "date", "rank", "app_id") if c in dropped]
    assert f"without {', '.join(named)}'" in str(caught.value)
    assert "keyword, date, rank and app_id" in str(caught.value)


@pytest.mark.parametrize("apps", [[], "", ",", [""], ()])
def test_no_app_is_refused(apps):
    with pytest.raises(sf.InvalidParameterError) as caught:
        sf.rank_history(MAPS, apps)
    assert caught.value.parameter == "apps"
    assert "at least one app id" in str(caught.value)


@pytest.mark.parametrize("keywords", [[], "", ["  "], ["maps", 3], 7])
def test_keywords_must_be_texts(keywords):
    with pytest.raises(sf.InvalidParameterError) as caught:
        sf.rank_history(MAPS, ["x"], keywords=keywords)
    assert caught.value.parameter == "keywords"
    message = str(caught.value)
    assert "list of texts" in message or "each item of keywords is a" in message


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ({"keyword": ["maps"]}, "dict"),
        (MAPS.rows(), "list"),
        ("maps", "str"),
        (None, "NoneType"),
        (MAPS["rank"], "Series"),
    ],
)
def test_an_object_that_is_not_a_frame_is_refused(value, kind):
    with pytest.raises(sf.InvalidParameterError) as caught:
        sf.rank_history(value, ["x"])
    assert caught.value.parameter == "history"
    assert caught.value.value == kind
    assert "polars or pandas DataFrame" in str(caught.value)


def test_pandas_and_lazy_frames_give_the_same_rows():
    pytest.importorskip("pandas")
    expected = sf.rank_history(THREE, ["x", "y"])
    assert sf.rank_history(THREE.to_pandas(), ["x", "y"]).equals(expected)
    assert sf.rank_history(THREE.lazy(), ["x", "y"]).equals(expected)
    assert sf.rank_history(THREE.lazy().filter(pl.col("keyword") == "a"), ["x", "y"]).equals(
        expected.filter(pl.col("keyword") == "a")
    )


# -- end to end with the sandbox ---------------------------------------------------------------------------


START = date(2026, 10, 15)  # the range holds two days photo editor was not recorded (10-21, 10-28)
KEYWORDS = ["photo editor", WORLD.UNTRACKED_KEYWORD]


def expected_day(keyword: str, on: date) -> list[str] | None:
    ids = WORLD.search_history_day(keyword, device="iphone", country="us", language="en", day=on)
    if ids is None and on == SANDBOX_TODAY:  # today falls back to a live search
        ids = WORLD.search(keyword, device="iphone", country="us", language="en", day=on)[:250]
    return ids


@pytest.fixture(scope="module")
def sandbox_history() -> pl.DataFrame:
    with sf.sandbox.client(today=SANDBOX_TODAY, progress=False, cache_dir=False) as client:
        return client.search_history_frame(KEYWORDS, start=START, end=SANDBOX_TODAY)


def test_sandbox_ranks_match_the_world(sandbox_history):
    out = sf.rank_history(sandbox_history, APPS)
    days = [START + timedelta(days=n) for n in range((SANDBOX_TODAY - START).days + 1)]
    expected = []
    for keyword in KEYWORDS:
        for app in APPS:
            for on in days:
                ids = expected_day(keyword, on)
                if ids is None:
                    expected.append((keyword, app, on, None, "no_data", None))
                elif app in ids:
                    expected.append((keyword, app, on, ids.index(app) + 1, "ranked", len(ids)))
                else:
                    expected.append((keyword, app, on, None, "not_ranked", len(ids)))
    assert out.schema == RANK_HISTORY.schema
    assert table(out, "keyword", "app_id", "date", "rank", "status", "results") == expected
    assert table(out.unique(["country", "language", "device"]), "country", "language", "device") == [
        ("us", "en", "iphone")
    ]


def test_sandbox_statuses_cover_missed_days_untracked_keyword_and_today(sandbox_history):
    out = sf.rank_history(sandbox_history, APPS)
    photo = out.filter(pl.col("keyword") == "photo editor")
    missed = photo.filter(pl.col("status") == "no_data")["date"].unique().sort().to_list()
    assert missed == [date(2026, 10, 21), date(2026, 10, 28)]
    top = photo.filter(pl.col("app_id") == WORLD.EXAMPLE_IOS_APPS[0], pl.col("status") != "no_data")
    assert top["rank"].unique().to_list() == [1]
    assert photo.filter(pl.col("app_id") == "1")["status"].unique().sort().to_list() == ["no_data", "not_ranked"]
    untracked = out.filter(pl.col("keyword") == WORLD.UNTRACKED_KEYWORD)
    assert untracked.filter(pl.col("status") != "no_data")["date"].unique().to_list() == [SANDBOX_TODAY]
    live = sandbox_history.filter(pl.col("date") == SANDBOX_TODAY)["source"].unique().to_list()
    assert live == ["live"]


def test_a_start_after_the_history_is_a_day_of_no_data_not_an_error():
    out = sf.rank_history(MAPS, ["x"], start=day(9))
    assert table(out, "keyword", "date", "status") == [("maps", day(9), "no_data")]
    out = sf.rank_history(MAPS, ["x"], end=date(2025, 12, 30))
    assert table(out, "keyword", "date", "status") == [("maps", date(2025, 12, 30), "no_data")]
