"""A call's markets: ``countries=`` (several countries, a call each) or ``country=`` (one), and the language of
each country.

Every frame function that takes ``country=`` takes ``countries=`` too: a list or a comma-separated text, which
does not go with ``country=``. The call becomes one call per country, in the order given (a country given twice
is asked once); the fetcher gathers them together under the one rate window, and the frame holds the rows of
each country in that order. With several countries, ``language=`` is one language for every country, or a
mapping of country to language for some of them (``{"ca": "fr"}``): a country it does not name is asked in its
own default language, as a one-country call without ``language=`` is. Each country is checked before anything
is sent.

>>> arguments, languages = markets({"apps": "1", "countries": "us, GB", "country": None, "language": {"gb": "en"}}, "metadata", "metadata_frame")
>>> arguments["country"], languages
(['us', 'gb'], {'gb': 'en'})
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import catalog
from ..errors import InvalidParameterError

__all__ = ["by_country", "markets"]

_SEVERAL = "countries= takes several, as a list or a comma-separated text"


def markets(arguments: Mapping[str, Any], endpoint: str, frame: str) -> tuple[dict[str, Any], dict[str, str] | None]:
    """``arguments`` of a function with ``country=`` and ``countries=``, the countries (checked, each once) as
    its ``country``, to be fanned out one call each; and the language of each country given by a mapping
    (None without one). Arguments of a function without both pass unchanged."""
    arguments = dict(arguments)
    if "countries" not in arguments or "country" not in arguments:
        return arguments, None
    several, one = arguments.pop("countries"), arguments.get("country")
    if several is not None and one is not None:
        raise InvalidParameterError(
            "countries", several, f"countries= or country=, not both (country={one!r} was given too)", endpoint=frame
        )
    if one is not None and (not isinstance(one, str) or "," in one):
        raise InvalidParameterError("country", one, f"one country code such as 'us'; {_SEVERAL}", endpoint=frame)
    ep = catalog.ENDPOINTS[endpoint]
    if several is not None:
        chosen = []
        for item in catalog.texts("countries", several, endpoint=frame):
            try:
                chosen.append(catalog.country_code(item, ep))
            except InvalidParameterError as exc:
                raise InvalidParameterError("countries", item, exc.allowed, endpoint=frame) from None
        if not chosen:
            raise InvalidParameterError("countries", several, f"at least one country: {_SEVERAL}", endpoint=frame)
        arguments["country"] = list(dict.fromkeys(chosen))
    language = arguments.get("language")
    if not isinstance(language, Mapping):
        return arguments, None
    if several is None:
        raise InvalidParameterError(
            "language",
            language,
            "one language code such as 'en'; a mapping of country to language goes with countries=",
            endpoint=frame,
        )
    del arguments["language"]
    return arguments, _languages(language, arguments["country"], ep, frame)


def _languages(given: Mapping[Any, Any], countries: list[str], ep: catalog.Endpoint, frame: str) -> dict[str, str]:
    """The language of each country ``given`` names (a code, checked when its call is), every key one of
    ``countries``."""
    out: dict[str, str] = {}
    for key, language in given.items():
        try:
            country = catalog.country_code(key, ep)
        except InvalidParameterError as exc:
            raise InvalidParameterError("language", dict(given), f"{key!r}: {exc.allowed}", endpoint=frame) from None
        if country not in countries:
            raise InvalidParameterError(
                "language",
                dict(given),
                f"languages of the countries asked for ({', '.join(countries)}); {key!r} is not one of them",
                endpoint=frame,
            )
        if not isinstance(language, str):
            raise InvalidParameterError(
                "language", dict(given), f"a language code such as 'en' for {country}, got {language!r}", endpoint=frame
            )
        out[country] = language
    return out


def by_country(calls: list[dict[str, Any]], languages: Mapping[str, str]) -> list[dict[str, Any]]:
    """``calls``, one per country, each with its country's language from ``languages`` (none where it names none:
    the country's own).

    >>> by_country([{"country": "us"}, {"country": "ca"}], {"ca": "fr"})
    [{'country': 'us'}, {'country': 'ca', 'language': 'fr'}]
    """
    return [
        {**call, "language": languages[call["country"]]} if call["country"] in languages else call for call in calls
    ]
