"""A call's markets: ``countries=`` (several countries, a call each) or ``country=`` (one), and the language of
each country.

Every frame function that takes ``country=`` takes ``countries=`` too: a list or a comma-separated text, which
does not go with ``country=``. The call becomes one call per country, in the order given (a country given twice
is asked once); the fetcher gathers them together under the one rate window, and the frame holds the rows of
each country in that order. With several countries, ``language=`` is one language for every country, or a
mapping of country to language for some of them (``{"ca": "fr"}``): a country it does not name is asked in its
own default language, as a one-country call without ``language=`` is. Each country is checked before anything
is sent.

>>> arguments, several = markets({"apps": "1", "countries": "us, GB", "country": None, "language": {"gb": "en"}}, "metadata", "metadata_frame")
>>> several.calls([arguments])
[{'apps': '1', 'country': 'us'}, {'apps': '1', 'country': 'gb', 'language': 'en'}]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import catalog
from ..errors import InvalidParameterError

__all__ = ["Markets", "markets"]

_SEVERAL = "countries= takes several, as a list or a comma-separated text"


@dataclass(frozen=True)
class Markets:
    """The countries of a call's ``countries=``, checked and each once, and the language of those a mapping of
    ``language=`` names."""

    countries: list[str]
    languages: dict[str, str] = field(default_factory=dict)

    def calls(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``calls`` (of no country) for each country in turn, each with its country's language where the mapping
        names one (else its own)."""
        return [
            {**call, "country": country} | ({"language": self.languages[country]} if country in self.languages else {})
            for country in self.countries
            for call in calls
        ]


def markets(arguments: Mapping[str, Any], endpoint: str, frame: str) -> tuple[dict[str, Any], Markets | None]:
    """``arguments`` of a function with ``country=`` and ``countries=`` without those of several countries, and
    the countries (:class:`Markets`) when ``countries=`` is given, else None. Arguments of a function without
    both pass unchanged."""
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
    language = arguments.get("language")
    if several is None:
        if isinstance(language, Mapping):
            raise InvalidParameterError(
                "language",
                language,
                "one language code such as 'en'; a mapping of country to language goes with countries=",
                endpoint=frame,
            )
        return arguments, None
    ep = catalog.ENDPOINTS[endpoint]
    chosen = []
    for item in catalog.texts("countries", several, endpoint=frame):
        try:
            chosen.append(catalog.country_code(item, ep))
        except InvalidParameterError as exc:
            raise InvalidParameterError("countries", item, exc.allowed, endpoint=frame) from None
    if not chosen:
        raise InvalidParameterError("countries", several, f"at least one country: {_SEVERAL}", endpoint=frame)
    countries = list(dict.fromkeys(chosen))
    del arguments["country"]
    if not isinstance(language, Mapping):
        return arguments, Markets(countries)
    del arguments["language"]
    return arguments, Markets(countries, _languages(language, countries, ep, frame))


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
