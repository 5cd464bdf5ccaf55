"""Inputs that behave like the rest: keywords split on commas, ISO country and language codes with the
code meant, an app id as a whole number, and app_card from an int or a pandas row.

Every refusal is checked to come before any request: nothing sent, nothing spent.
"""

from __future__ import annotations

import json
import re
from datetime import date

import polars as pl
import pytest

import storeframes as sf
from storeframes import codes
from storeframes.catalog import validate
from storeframes.sandbox import world as sandbox_world
from storeframes.widgets.cards import app_card

IPE = sf.InvalidParameterError
START, END = "2026-11-10", "2026-11-12"


@pytest.fixture
def client(make_client, tmp_path):
    return make_client(cache_dir=tmp_path / "cache")


def _refused(client, call, message: str) -> None:
    """``call`` raises InvalidParameterError saying ``message`` (exactly, after 'invalid '), and nothing was sent."""
    with pytest.raises(IPE) as caught:
        call()
    assert str(caught.value) == "invalid " + message
    assert client.requests_sent == 0
    assert client.spent == 0
    assert client.sandbox_service.arrivals == []


def _ios(client) -> str:
    return client.sandbox_service.world.EXAMPLE_IOS_APPS[0]


# -- keywords ---------------------------------------------------------------------------------------


def test_a_text_of_keywords_splits_on_commas_like_a_list(client):
    text = client.search_history_frame("photo editor, meditation,", start=START, end=END)
    assert client.requests_sent == 2
    assert sorted(a.params["keyword"] for a in client.sandbox_service.arrivals) == ["meditation", "photo editor"]
    listed = client.search_history_frame(["photo editor", "meditation"], start=START, end=END)
    assert client.requests_sent == 2  # the same two requests: answered from the cache
    assert text.equals(listed)
    assert text["keyword"].unique(maintain_order=True).to_list() == ["photo editor", "meditation"]
    assert text.height > 0


def test_a_keyword_holding_a_comma_is_one_keyword_in_a_list(client):
    frame = client.search_frame(["photo, editor"])
    assert [a.params["keyword"] for a in client.sandbox_service.arrivals] == ["photo, editor"]
    assert frame["keyword"].unique().to_list() == ["photo, editor"]


def test_the_plan_of_a_text_of_keywords_counts_one_request_per_keyword(client):
    plan = client.plan("search_frame", keywords="maps,  photo editor ,maps")
    assert plan.to_send == 2
    assert [json.loads(p)["keyword"] for p in plan.requests["params"]] == ["maps", "photo editor"]
    assert client.requests_sent == 0


def test_only_commas_is_no_keyword(client):
    _refused(
        client,
        lambda: client.search_frame(" , ,"),
        "keywords=' , ,' for search_frame: at least one value (keywords takes a text or a list)",
    )


def test_the_raw_search_sends_one_keyword_commas_included(client):
    answer = client.get("search", keyword="photo, editor")
    assert answer.params["keyword"] == "photo, editor"
    assert [a.params["keyword"] for a in client.sandbox_service.arrivals] == ["photo, editor"]


def test_the_raw_search_refuses_a_list_and_says_which_functions_take_several(client):
    _refused(
        client,
        lambda: client.get("search", keyword=["maps", "photo editor"]),
        "keyword=['maps', 'photo editor'] for search: one keyword as a string, sent as it is, commas included "
        "(one keyword per request; search_frame and search_history_frame take several)",
    )


def test_rank_history_splits_a_text_of_keywords_and_keeps_a_comma_in_a_list():
    history = pl.DataFrame(
        {
            "keyword": ["maps", "photo editor", "a, b"],
            "date": [date(2026, 1, 1)] * 3,
            "rank": [1, 2, 3],
            "app_id": ["1", "1", "1"],
        }
    )
    split = sf.rank_history(history, "1", keywords="maps, photo editor")
    assert split.select("keyword", "rank").rows() == [("maps", 1), ("photo editor", 2)]
    kept = sf.rank_history(history, "1", keywords=["a, b"])
    assert kept.select("keyword", "rank", "status").rows() == [("a, b", 3, "ranked")]


# -- country and language codes ------------------------------------------------------------------------


def test_the_code_lists_are_the_iso_lists():
    assert len(codes.COUNTRIES) == 249
    assert len(codes.LANGUAGES) == 184
    assert {"gb", "us", "de", "jp", "kr", "se", "ss", "ax", "bq"} <= codes.COUNTRIES
    assert not {"uk", "el", "en", "xx", "eu", "xk", "an"} & codes.COUNTRIES  # xk: user-assigned; an: withdrawn
    assert {"en", "ja", "zh", "sv", "da", "ko", "cs", "el", "uk", "he"} <= codes.LANGUAGES
    assert not {"jp", "cn", "dk", "cz", "gr", "sp", "iw"} & codes.LANGUAGES
    assert all(re.fullmatch("[a-z]{2}", c) for c in codes.COUNTRIES | codes.LANGUAGES)


def test_a_hint_is_given_only_for_a_refused_code_and_names_valid_codes():
    assert not set(codes.COUNTRY_HINTS) & codes.COUNTRIES
    assert not (set(codes.LANGUAGE_HINTS) & codes.LANGUAGES) - set(codes.REFUSED_LANGUAGES)
    assert {meant for hints in codes.COUNTRY_HINTS.values() for meant in hints} <= codes.COUNTRIES
    assert {meant for hints in codes.LANGUAGE_HINTS.values() for meant in hints} <= codes.LANGUAGES


def test_the_benchmarks_of_uk_are_refused_with_gb_before_any_credit(client):
    _refused(
        client,
        lambda: client.get("benchmarks", country="uk"),
        "country='uk' for benchmarks: not an ISO 3166-1 alpha-2 code; did you mean 'gb'?",
    )
    _refused(
        client,
        lambda: client.benchmarks_frame(countries="us,uk", channels="search"),
        "countries='uk' for benchmarks_frame: not an ISO 3166-1 alpha-2 code; did you mean 'gb'?",
    )
    _refused(
        client,
        lambda: client.plan("benchmarks_frame", countries=["gb", "xx"]),
        "countries='xx' for benchmarks_frame: not an ISO 3166-1 alpha-2 code such as 'us', 'gb' or 'de'",
    )


@pytest.mark.parametrize(
    ("given", "meant"),
    [("uk", "'gb'"), ("UK", "'gb'"), ("el", "'gr'"), ("en", "'gb' or 'us'"), ("ja", "'jp'"), ("da", "'dk'")],
)
def test_a_country_that_is_no_country_names_the_code_meant(client, given, meant):
    _refused(
        client,
        lambda: client.metadata_frame(_ios(client), country=given),
        f"country={given!r} for metadata: not an ISO 3166-1 alpha-2 code; did you mean {meant}?",
    )


@pytest.mark.parametrize(
    ("given", "meant"),
    [("jp", "ja"), ("cn", "zh"), ("dk", "da"), ("cz", "cs"), ("gr", "el"), ("us", "en"), ("JP", "ja")],
)
def test_a_country_code_given_as_a_language_names_the_language(client, given, meant):
    _refused(
        client,
        lambda: client.search_frame("maps", language=given),
        f"language={given!r} for search: not an ISO 639-1 code nor the service's 'sp' (US Spanish); "
        f"did you mean {meant!r}?",
    )


@pytest.mark.parametrize(("given", "language", "meant"), [("se", "Northern Sami", "sv"), ("kr", "Kanuri", "ko")])
def test_the_iso_languages_mistaken_for_countries_are_refused_with_the_language_meant(client, given, language, meant):
    _refused(
        client,
        lambda: client.changes_frame(_ios(client), language=given),
        f"language={given!r} for changes: {given!r} is the ISO 639-1 code of {language}, a language "
        f"neither store offers; did you mean {meant!r}?",
    )


def test_an_unknown_language_without_a_likely_meaning_says_what_is_allowed(client):
    _refused(
        client,
        lambda: client.get("search", keyword="maps", language="qq"),
        "language='qq' for search: not an ISO 639-1 code such as 'en', 'de' or 'ja', nor the service's 'sp' "
        "(US Spanish)",
    )


@pytest.mark.parametrize(
    ("name", "given", "message"),
    [
        ("country", "usa", "a two-letter country code (ISO 3166-1 alpha-2) such as 'us', 'gb' or 'de'"),
        ("country", 44, "a two-letter country code (ISO 3166-1 alpha-2) such as 'us', 'gb' or 'de'"),
        ("language", "english", "a two-letter language code (ISO 639-1) such as 'en', 'de' or 'ja'"),
    ],
)
def test_a_code_that_is_not_two_letters_is_refused(client, name, given, message):
    _refused(
        client,
        lambda: client.get("metadata", apps=_ios(client), **{name: given}),
        f"{name}={given!r} for metadata: {message}",
    )


def test_codes_in_upper_case_and_the_service_s_us_spanish_are_sent_in_lower_case(client):
    answer = client.get("metadata", apps=_ios(client), country="GB", language=" EN ")
    assert (answer.params["country"], answer.params["language"]) == ("gb", "en")
    spanish = client.get("search", keyword="mapas", country="us", language="SP")
    assert spanish.params["language"] == "sp"
    assert [(a.params["country"], a.params.get("language")) for a in client.sandbox_service.arrivals] == [
        ("gb", "en"),
        ("us", "sp"),
    ]


def test_every_iso_code_is_accepted():
    for country in sorted(codes.COUNTRIES):
        assert validate("benchmarks", country=country.upper(), end_date="2026-01-31")["country"] == country
    for language in sorted(codes.LANGUAGES - set(codes.REFUSED_LANGUAGES)):
        assert validate("search", keyword="maps", language=language)["language"] == language


def test_the_sandbox_world_s_countries_and_languages_all_pass():
    tables = (sandbox_world._COUNTRY_LANGUAGE, sandbox_world._COUNTRY_CURRENCY, sandbox_world._MARKET_SIZE)
    countries = {c for table in tables for c in table}
    languages = set(sandbox_world._COUNTRY_LANGUAGE.values())
    assert len(countries) >= 40 and "gb" in countries and "sv" in languages
    for country in sorted(countries):
        params = validate("metadata", apps="284882215", country=country)
        assert params["country"] == country
    for language in sorted(languages):
        assert validate("search", keyword="maps", language=language)["language"] == language


# -- an app id as a whole number ---------------------------------------------------------------------------


def test_an_app_id_as_a_whole_number_is_the_same_request_as_its_text(client):
    app = _ios(client)
    plan = client.plan("metadata_frame", apps=[int(app), 389801252])
    assert plan.to_send == 1
    assert json.loads(plan.requests.filter(pl.col("source") == "send")["params"][0])["apps"] == ",".join(
        sorted([app, "389801252"])
    )
    by_number = client.metadata_frame(int(app))
    assert client.requests_sent == 1
    assert by_number.equals(client.metadata_frame(app))
    assert client.requests_sent == 1  # the text asks for the same answer: from the cache
    assert by_number["app_id"].to_list() == [app]
    metrics = client.metrics_frame(int(app), "ratings")
    assert metrics["app_id"].unique().to_list() == [app]
    assert client.get("changes", apps=int(app), end_date=END).params["apps"] == app


def test_a_numpy_whole_number_is_an_app_id(client):
    numpy = pytest.importorskip("numpy")
    app = _ios(client)
    assert client.metadata_frame(numpy.int64(app))["app_id"].to_list() == [app]


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (True, "apps=True for metadata: a text (comma-separated for several), a whole number or a list of them"),
        (-5, "apps=-5 for metadata: each item of apps is a text or a whole number >= 0, not -5"),
        (
            284882215.0,
            "apps=284882215.0 for metadata: a text (comma-separated for several), a whole number or a list of them",
        ),
        (
            [284882215, 2.5],
            "apps=[284882215, 2.5] for metadata: each item of apps is a text or a whole number >= 0, not 2.5",
        ),
        (
            [284882215, False],
            "apps=[284882215, False] for metadata: each item of apps is a text or a whole number >= 0, not False",
        ),
    ],
)
def test_an_app_id_that_is_no_whole_number_is_refused(client, given, message):
    _refused(client, lambda: client.metadata_frame(given), message)


def test_rank_history_takes_an_app_id_as_a_whole_number():
    history = pl.DataFrame(
        {"keyword": ["maps"] * 2, "date": [date(2026, 1, 1)] * 2, "rank": [1, 2], "app_id": ["7", "284882215"]}
    )
    out = sf.rank_history(history, 284882215)
    assert out.select("app_id", "rank", "status").rows() == [("284882215", 2, "ranked")]
    with pytest.raises(IPE, match=r"invalid apps=-1 for rank_history: at least one app id, or a list of them"):
        sf.rank_history(history, -1)


# -- app_card ------------------------------------------------------------------------------------------------


def test_app_card_of_a_whole_number_is_the_card_of_its_text(client):
    app = _ios(client)
    card = app_card(int(app), client=client)
    assert card.app_id == app
    assert client.requests_sent == 1
    assert app_card(app, client=client).html == card.html
    assert client.requests_sent == 1


def test_app_card_of_a_pandas_row_is_the_card_of_the_polars_row(client):
    pytest.importorskip("pandas")
    meta = client.metadata_frame(_ios(client))
    sent, spent = client.requests_sent, client.spent
    polars_card = app_card(meta.row(0, named=True), client=client)
    pandas_card = app_card(meta.to_pandas().iloc[0], client=client)
    frame_card = app_card(meta.to_pandas(), client=client)  # a one-row pandas frame too
    assert pandas_card.html == polars_card.html == frame_card.html
    assert pandas_card.app_id == polars_card.app_id == _ios(client)
    assert 'class="sf-shot"' in pandas_card.html  # its screenshots, from the cache
    assert (client.requests_sent, client.spent) == (sent, spent)


def test_app_card_of_a_pandas_row_with_missing_cells_shows_no_nan(client):
    pandas = pytest.importorskip("pandas")
    row = pandas.Series(
        {
            "app_id": "284882215",
            "title": "Maps",
            "developer_name": float("nan"),
            "rating_average": float("nan"),
            "version": None,
            "screenshots_count": pandas.NA,
        }
    )
    card = app_card(row, client=client)
    assert card.title == "Maps"
    assert "no rating" in card.html
    assert "sf-developer" not in card.html and "sf-version" not in card.html
    assert ">nan<" not in card.html.lower()
    assert client.requests_sent == 0


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        (3.5, "3.5"),
        (True, "True"),
        (-284882215, "-284882215"),
        (("284882215",), "('284882215',)"),
        (object(), "<object object at"),
    ],
)
def test_app_card_names_the_refused_value_and_what_is_allowed(client, given, shown):
    with pytest.raises(IPE) as caught:
        app_card(given, client=client)
    message = str(caught.value)
    assert message.startswith(f"invalid app={shown}")
    assert "for app_card: " in message
    assert "an app id (a text or a whole number), a one-row metadata_frame, or a metadata row" in message
    assert "pandas row" in message
    assert client.requests_sent == 0 and client.spent == 0


def test_app_card_cuts_a_long_value_and_names_a_frame_by_its_rows(client):
    with pytest.raises(IPE) as caught:
        app_card(["284882215"] * 50, client=client)
    shown = str(caught.value).split(" for app_card")[0]
    assert shown.startswith("invalid app=['284882215', ") and "..." in shown and len(shown) < 100
    pandas = pytest.importorskip("pandas")
    two = pandas.DataFrame({"app_id": ["1", "2"]})
    with pytest.raises(IPE, match=r"invalid app='a pandas DataFrame of 2 rows' for app_card: .*filter the frame"):
        app_card(two, client=client)
    with pytest.raises(IPE, match=r"invalid client='not a client' for app_card: a storeframes.Client or None"):
        app_card("284882215", client="not a client")
    assert client.requests_sent == 0


def test_app_card_of_a_row_with_a_numeric_app_id_takes_its_digits(client):
    card = app_card({"app_id": 284882215, "title": "Maps"}, client=client)
    assert (card.app_id, card.title) == ("284882215", "Maps")
    with pytest.raises(IPE, match=r"invalid app='a row with app_id=-1' for app_card: .*with an app_id"):
        app_card({"app_id": -1}, client=client)
    assert client.requests_sent == 0
