"""The country and language codes a request may carry, as plain data.

:data:`COUNTRIES` holds the 249 officially assigned ISO 3166-1 alpha-2 codes and
:data:`LANGUAGES` the 184 ISO 639-1 codes, plus the service's own exceptions
(:data:`SERVICE_LANGUAGES`: US Spanish is ``sp``), all lower case. A code outside them is
refused before anything is sent: the service would bill the request all the same. Two
ISO 639-1 codes are refused too (:data:`REFUSED_LANGUAGES`): ``se`` (Northern Sami) and
``kr`` (Kanuri), no store's languages, given for Swedish and Korean far more often.

:data:`COUNTRY_HINTS` and :data:`LANGUAGE_HINTS` map common mistakes (a language code given
as a country, a country code given as a language, ``uk`` for the United Kingdom) to the
codes meant.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["COUNTRIES", "COUNTRY_HINTS", "LANGUAGES", "LANGUAGE_HINTS", "REFUSED_LANGUAGES", "SERVICE_LANGUAGES"]


def _codes(table: str) -> frozenset[str]:
    """The codes of a table of codes separated by spaces and line breaks."""
    return frozenset(table.split())


COUNTRIES = _codes(
    """
    ad ae af ag ai al am ao aq ar as at au aw ax az ba bb bd be bf bg bh bi bj bl bm bn bo bq br bs
    bt bv bw by bz ca cc cd cf cg ch ci ck cl cm cn co cr cu cv cw cx cy cz de dj dk dm do dz ec ee
    eg eh er es et fi fj fk fm fo fr ga gb gd ge gf gg gh gi gl gm gn gp gq gr gs gt gu gw gy hk hm
    hn hr ht hu id ie il im in io iq ir is it je jm jo jp ke kg kh ki km kn kp kr kw ky kz la lb lc
    li lk lr ls lt lu lv ly ma mc md me mf mg mh mk ml mm mn mo mp mq mr ms mt mu mv mw mx my mz na
    nc ne nf ng ni nl no np nr nu nz om pa pe pf pg ph pk pl pm pn pr ps pt pw py qa re ro rs ru rw
    sa sb sc sd se sg sh si sj sk sl sm sn so sr ss st sv sx sy sz tc td tf tg th tj tk tl tm tn to
    tr tt tv tw tz ua ug um us uy uz va vc ve vg vi vn vu wf ws ye yt za zm zw
    """
)
"""ISO 3166-1 alpha-2: the 249 officially assigned country codes, lower case."""

SERVICE_LANGUAGES: Mapping[str, str] = MappingProxyType({"sp": "US Spanish"})
"""The service's language codes that are not ISO 639-1, and what they mean."""

LANGUAGES = _codes(
    """
    aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da
    de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz
    ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln
    lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi
    pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti
    tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu
    """
)
"""ISO 639-1: the 184 two-letter language codes, lower case (the service's own are in :data:`SERVICE_LANGUAGES`)."""

REFUSED_LANGUAGES: Mapping[str, tuple[str, str]] = MappingProxyType(
    {"se": ("Northern Sami", "sv"), "kr": ("Kanuri", "ko")}
)
"""ISO 639-1 codes refused all the same: ``code -> (its language, the code usually meant)``.

Neither store lists apps in these languages, and each is the country code of a country
whose language has another code (Sweden speaks ``sv``, South Korea ``ko``): given as a
language, they are that mistake, and a request with them would still be billed."""

COUNTRY_HINTS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "uk": ("gb",),
        "en": ("gb", "us"),
        "el": ("gr",),
        "ja": ("jp",),
        "zh": ("cn", "tw"),
        "ko": ("kr",),
        "da": ("dk",),
        "cs": ("cz",),
        "he": ("il",),
        "hy": ("am",),
        "ka": ("ge",),
        "nb": ("no",),
        "sp": ("es",),
    }
)
"""Codes that are not countries -> the country codes usually meant."""

LANGUAGE_HINTS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "jp": ("ja",),
        "cn": ("zh",),
        "dk": ("da",),
        "cz": ("cs",),
        "gr": ("el",),
        "us": ("en",),
        "gb": ("en",),
        "ua": ("uk",),
        "il": ("he",),
        "iw": ("he",),
        "at": ("de",),
        "mx": ("es",),
        "vn": ("vi",),
        **{code: (meant,) for code, (_, meant) in REFUSED_LANGUAGES.items()},
    }
)
"""Codes that are not languages (or are refused) -> the language codes usually meant."""
