"""storeframes.analysis.prices: an app's price as a person reads it, in its store's currency; free is never unknown."""

from __future__ import annotations

from decimal import Decimal

import polars as pl
import pytest

import storeframes as sf
from storeframes.analysis import FREE, UNKNOWN_PRICE, price_text, store_currency, with_prices

NBSP = "\u00a0"


@pytest.mark.parametrize(
    ("value", "currency", "shown"),
    [
        ("", "usd", FREE),  # the store's word for free: an empty price
        ("Free", "eur", FREE),
        (Decimal("0"), None, FREE),  # free needs no currency
        (None, "usd", UNKNOWN_PRICE),  # no price: not known, which is not free
        (float("nan"), "usd", UNKNOWN_PRICE),
        ("0.99", "usd", "$0.99"),
        (Decimal("2.9900"), "USD", "$2.99"),
        ("2.99", "eur", f"2,99{NBSP}€"),
        ("1299.5", "eur", f"1.299,50{NBSP}€"),
        ("4.99", "gbp", "£4.99"),
        ("150", "jpy", "¥150"),
        ("3900", "krw", "₩3,900"),
        ("29", "sek", f"29,00{NBSP}kr"),
        ("2.99", "ars", "2.99 ARS"),  # a currency without a known form: its code
        ("2.99", None, "2.99 (currency unknown)"),  # never a bare amount that reads as dollars
        ("$2.99", "usd", "$2.99"),  # a text of the store's own: as it is
    ],
)
def test_price_text_reads_as_the_stores_customers_read_it(value, currency, shown):
    assert price_text(value, currency) == shown


def test_store_currency_knows_the_euro_stores_and_says_none_where_it_does_not_know():
    stores = {"us": "usd", "DE": "eur", " fr ": "eur", "ie": "eur", "gb": "gbp", "jp": "jpy", "ch": "chf"}
    assert {country: store_currency(country) for country in stores} == stores
    assert store_currency("ar") is None and store_currency("") is None and store_currency(None) is None


@pytest.fixture
def markets(make_client):
    """The sandbox's example apps' metadata in four stores: one paid app among them."""
    client = make_client()
    apps = list(client.sandbox_service.world.EXAMPLE_IOS_APPS)
    return client.metadata_frame(apps, countries=["us", "de", "gb", "jp"])


def test_with_prices_puts_currency_and_price_text_beside_the_price_of_each_store(markets):
    shown = with_prices(markets)
    at = markets.columns.index("price_value") + 1
    assert shown.columns == [*markets.columns[:at], "currency", "price_text", *markets.columns[at:]]
    assert shown.drop("currency", "price_text").equals(markets)  # rows, order and values as they were
    paid = shown.filter(pl.col("price_value") > 0)
    assert dict(paid.select("country", "price_text").iter_rows()) == {
        "us": "$0.99",
        "de": f"0,99{NBSP}€",
        "gb": "£0.99",
        "jp": "¥150",
    }
    assert dict(paid.select("country", "currency").iter_rows()) == {"us": "usd", "de": "eur", "gb": "gbp", "jp": "jpy"}
    free = shown.filter(pl.col("price_value") == 0)
    assert free.height > 0 and set(free["price_text"]) == {FREE}


def test_with_prices_tells_an_unknown_price_from_a_free_one():
    frame = pl.DataFrame(
        {"app_id": ["free", "unknown", "paid"], "price": ["", None, "2.99"]},
        schema={"app_id": pl.String, "price": pl.String},
    )
    shown = with_prices(frame, country="us")
    assert shown["price_text"].to_list() == [FREE, UNKNOWN_PRICE, "$2.99"]
    assert shown.columns == ["app_id", "price", "currency", "price_text"]
    assert with_prices(frame)["price_text"].to_list() == [FREE, UNKNOWN_PRICE, "2.99 (currency unknown)"]
    with pytest.raises(sf.InvalidParameterError, match="price_value"):
        with_prices(frame.drop("price"))
    with pytest.raises(sf.InvalidParameterError, match="without the column with_prices adds"):
        with_prices(with_prices(frame))
