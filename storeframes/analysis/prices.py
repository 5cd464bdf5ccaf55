"""An app's price as a person reads it: ``Free``, ``$2.99``, ``2,99 €``, or ``price unknown``.

The service sends an app's price as a bare amount (``"2.99"``; an empty text for a free app) in the
currency of the country's store; the in-app purchases and the revenues of the same store name theirs
(``usd``, ``eur`` ...). :data:`STORE_CURRENCIES` holds the currency of each store whose currency is
known; elsewhere the amount is shown as it is, saying that its currency is not known.

* :func:`store_currency`: the currency of a country's store (``"de"`` -> ``"eur"``);
* :func:`price_text`: an amount in a currency as words (``Free`` for 0, ``price unknown`` for none);
* :func:`with_prices`: a metadata frame (or any frame with ``price`` or ``price_value``) with its
  ``currency`` and ``price_text`` beside the price.

>>> price_text(0, "usd"), price_text("2.99", "usd"), price_text("2.99", "eur"), price_text(None, "usd")
('Free', '$2.99', '2,99\\xa0€', 'price unknown')
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from types import MappingProxyType
from typing import Any

import polars as pl

from .._tracebacks import user_facing
from ..errors import InvalidParameterError
from .inputs import checked_frame

__all__ = ["FREE", "STORE_CURRENCIES", "UNKNOWN_PRICE", "price_text", "store_currency", "with_prices"]

FREE = "Free"
"""What a free app's price reads."""
UNKNOWN_PRICE = "price unknown"
"""What a price reads when the answer had none: not known, which is not free."""

_EURO = "at be cy de ee es fi fr gr hr ie it lt lu lv mt nl pt si sk"
STORE_CURRENCIES: Mapping[str, str] = MappingProxyType(
    {
        **dict.fromkeys(_EURO.split(), "eur"),
        "us": "usd",
        "gb": "gbp",
        "jp": "jpy",
        "kr": "krw",
        "ca": "cad",
        "au": "aud",
        "nz": "nzd",
        "br": "brl",
        "mx": "mxn",
        "in": "inr",
        "cn": "cny",
        "tw": "twd",
        "hk": "hkd",
        "ru": "rub",
        "ch": "chf",
        "se": "sek",
        "no": "nok",
        "dk": "dkk",
        "pl": "pln",
        "tr": "try",
    }
)
"""The currency (ISO 4217, lower case) of the stores whose currency is known, by two-letter country code."""

_NBSP = "\u00a0"  # between an amount and its symbol: the two never part at the end of a line
_FORMATS: Mapping[str, tuple[str, str, bool, int]] = MappingProxyType(
    {
        # currency: (before the amount, after it, decimal comma, decimals)
        "usd": ("$", "", False, 2),
        "eur": ("", f"{_NBSP}€", True, 2),
        "gbp": ("£", "", False, 2),
        "jpy": ("¥", "", False, 0),
        "krw": ("₩", "", False, 0),
        "cad": ("CA$", "", False, 2),
        "aud": ("A$", "", False, 2),
        "nzd": ("NZ$", "", False, 2),
        "brl": (f"R${_NBSP}", "", True, 2),
        "mxn": ("MX$", "", False, 2),
        "inr": ("₹", "", False, 2),
        "cny": ("CN¥", "", False, 2),
        "twd": ("NT$", "", False, 2),
        "hkd": ("HK$", "", False, 2),
        "rub": ("", f"{_NBSP}₽", True, 2),
        "chf": (f"CHF{_NBSP}", "", False, 2),
        "sek": ("", f"{_NBSP}kr", True, 2),
        "nok": ("", f"{_NBSP}kr", True, 2),
        "dkk": ("", f"{_NBSP}kr.", True, 2),
        "pln": ("", f"{_NBSP}zł", True, 2),
        "try": ("₺", "", True, 2),
    }
)
"""How an amount reads in each currency of :data:`STORE_CURRENCIES`; another currency reads ``2.99 ARS``."""


@user_facing
def store_currency(country: Any) -> str | None:
    """The currency (ISO 4217, lower case) of a country's store; None when it is not known.

    >>> store_currency("DE"), store_currency("us"), store_currency("ar"), store_currency(None)
    ('eur', 'usd', None, None)
    """
    if not isinstance(country, str):
        return None
    return STORE_CURRENCIES.get(country.strip().lower())


def _amount(value: Any) -> Decimal | None:
    """``value`` as a finite decimal amount; None when it is missing or not a number (NaN, a text such as "$2.99")."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        return None
    return number if number.is_finite() else None


@user_facing
def price_text(value: Any, currency: str | None = None) -> str:
    """An amount as a person reads it: :data:`FREE` for 0, :data:`UNKNOWN_PRICE` for none, else with its currency.

    ``value`` is a number or a text holding one (``price_value`` of a metadata frame, or its ``price``);
    ``currency`` an ISO 4217 code (``usd``, ``EUR`` ...; :func:`store_currency` gives a store's). An amount
    reads as that store's customers read it (``$2.99``, ``2,99 €``, ``¥300``, the symbol held to the amount
    by a no-break space); a currency without a known form reads ``2.99 ARS``, and no currency at all
    ``2.99 (currency unknown)``. An empty text (the store's word for free) or ``Free`` is free; any
    other text that is not a number is shown as it is.

    >>> price_text("", "usd"), price_text(4.99, "gbp"), price_text(300, "jpy"), price_text("1299.5", "eur")
    ('Free', '£4.99', '¥300', '1.299,50\\xa0€')
    >>> price_text("2.99", "ars"), price_text("2.99"), price_text("$2.99", "usd")
    ('2.99 ARS', '2.99 (currency unknown)', '$2.99')
    """
    if value is None:
        return UNKNOWN_PRICE
    if isinstance(value, str) and value.strip().lower() in ("", "free"):
        return FREE
    number = _amount(value)
    if number is None:  # a text of the store's own (with its currency sign), or not a number at all
        return value.strip() if isinstance(value, str) else UNKNOWN_PRICE
    if number == 0:
        return FREE
    code = currency.strip().lower() if isinstance(currency, str) and currency.strip() else None
    if code is None:
        return f"{_grouped(number, 2, comma=False)} (currency unknown)"
    form = _FORMATS.get(code)
    if form is None:
        return f"{_grouped(number, 2, comma=False)} {code.upper()}"
    before, after, comma, decimals = form
    return f"{before}{_grouped(number, decimals, comma=comma)}{after}"


def _grouped(number: Decimal, decimals: int, *, comma: bool) -> str:
    """``1299.5`` as ``1,299.50`` (or ``1.299,50`` with a decimal comma); no decimals (yen, won) only where the
    amount has none."""
    places = decimals if number == number.quantize(Decimal(1).scaleb(-decimals)) else max(decimals, 2)
    text = f"{number:,.{places}f}"
    return text.translate(str.maketrans(",.", ".,")) if comma else text


@user_facing
def with_prices(frame: pl.DataFrame | Any, *, country: str | None = None) -> pl.DataFrame:
    """``frame`` with ``currency`` and ``price_text`` right after its price: what a person reads.

    ``frame`` is a :func:`~storeframes.metadata_frame` (or :meth:`~storeframes.Client.find_apps`, or any
    frame with ``price_value`` or ``price``). ``currency`` (String) is the currency of each row's store
    (:func:`store_currency` of its ``country``, or of ``country=`` for a frame without one; null where
    it is not known), kept when the frame has a ``currency`` column already. ``price_text`` (String)
    is :func:`price_text` of ``price_value`` (else of ``price``): ``Free`` for a free app, ``$2.99`` or
    ``2,99 €`` for a paid one, ``price unknown`` where the answer had no price, so a free app and an
    unknown price never look alike. Rows and their order stay as they are.

    >>> metadata = pl.DataFrame({"app_id": ["1", "2", "3"], "country": ["us", "de", "us"],
    ...                          "price": ["", "2.99", None]})
    >>> with_prices(metadata)["price_text"].to_list()
    ['Free', '2,99\\xa0€', 'price unknown']
    """
    function = "with_prices"
    rows = checked_frame(frame, "frame", function, "a metadata_frame (a frame with price or price_value)", ())
    source = "price_value" if "price_value" in rows.columns else "price" if "price" in rows.columns else None
    if source is None:
        raise InvalidParameterError(
            "frame", "a frame without price or price_value", "a metadata_frame or find_apps frame", endpoint=function
        )
    if "price_text" in rows.columns:
        raise InvalidParameterError(
            "frame", "a frame with price_text", "a frame without the column with_prices adds", endpoint=function
        )
    if country is not None and not isinstance(country, str):
        raise InvalidParameterError("country", country, "a two-letter country code, or None", endpoint=function)
    if "currency" in rows.columns:
        currency = pl.col("currency").cast(pl.String)
    elif "country" in rows.columns:
        currency = (
            pl.col("country")
            .cast(pl.String)
            .str.to_lowercase()
            .replace_strict(dict(STORE_CURRENCIES), default=None, return_dtype=pl.String)
        )
    else:
        currency = pl.lit(store_currency(country), pl.String)
    with_currency = rows.with_columns(currency.alias("currency"))
    texts = [
        price_text(value, code)
        for value, code in zip(with_currency[source].to_list(), with_currency["currency"].to_list(), strict=True)
    ]
    order = [c for c in rows.columns if c != "currency"]
    at = max(order.index(c) for c in ("price", "price_value") if c in order) + 1
    return with_currency.with_columns(pl.Series("price_text", texts, pl.String)).select(
        *order[:at], "currency", "price_text", *order[at:]
    )
