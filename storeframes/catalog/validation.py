"""Validation: a user's arguments checked against the catalog and made canonical, before anything is sent.

:func:`validate` turns a user's arguments into the canonical query parameters of a
request, or raises :class:`~storeframes.InvalidParameterError` naming the parameter, the
value and what is allowed. Canonical parameters are strings in the catalog's order: app
ids (texts, or whole numbers) de-duplicated and sorted, codes lower-cased, metric aliases
resolved, relative date defaults resolved to real dates (UTC) at request time. A country
must be an ISO 3166-1 alpha-2 code and a language an ISO 639-1 code or one of the
service's own (US Spanish is ``sp``): :mod:`storeframes.codes` holds the lists, and a
refusal names the code usually meant (``uk`` -> ``gb``, ``jp`` as a language -> ``ja``).

The parsers of what users pass live here too, one each: :func:`texts` ("a text or a list of
texts"), :func:`app_list`, :func:`metric_list`, :func:`parse_day`, and :func:`device_for`
and :func:`split_apps`.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Any

from .. import codes
from ..errors import InvalidParameterError, shown_value
from .endpoints import (
    CHANNELS,
    EARLIEST_DAY,
    MAX_APP_ID_LENGTH,
    MAX_APPS_PER_REQUEST,
    MAX_KEYWORD_LENGTH,
    METRIC_ALIASES,
    METRICS,
    endpoint,
)
from .policy import Endpoint

__all__ = [
    "app_list",
    "country_code",
    "device_for",
    "metric_list",
    "parse_day",
    "split_apps",
    "texts",
    "today_utc",
    "validate",
]

_IOS_ID = re.compile(r"^[0-9]{1,15}$")
_ANDROID_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+$")
_CODE = re.compile(r"^[A-Za-z]{2}$")
_LANGUAGES = (codes.LANGUAGES - set(codes.REFUSED_LANGUAGES)) | set(codes.SERVICE_LANGUAGES)
"""The language codes a request may carry (:mod:`storeframes.codes`)."""
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_RELATIVE = re.compile(r"^(today|end)([+-]\d+)d$")


def today_utc() -> date:
    """Today's date in UTC, the calendar the service's dates follow."""
    return datetime.now(UTC).date()


def _join(values: Iterable[str]) -> str:
    return ", ".join(values)


def texts(name: str, value: Any, *, split: bool = True, digits: bool = False, endpoint: str | None = None) -> list[str]:
    """The items of "a text or a list of texts", in the order given, trimmed: the one parser of it.

    A text is one item, or with ``split`` its comma-separated parts (empty parts, as
    after a trailing comma, are dropped); any other iterable but bytes and mappings
    gives its items, which must be non-empty texts. With ``digits`` (app ids), a whole
    number >= 0 counts as its digits, alone or as an item. Anything else is an
    :class:`~storeframes.InvalidParameterError` naming ``name``.

    >>> texts("apps", "284882215, 389801252,"), texts("apps", 284882215, digits=True)
    (['284882215', '389801252'], ['284882215'])
    >>> texts("targets", "title, subtitle", split=False)
    ['title, subtitle']
    """
    kind = "a text or a whole number >= 0" if digits else "a text"
    if isinstance(value, str):
        items: list[Any] = value.split(",") if split else [value]
    elif digits and _whole(value):
        items = [value]
    elif isinstance(value, Iterable) and not isinstance(value, (bytes, Mapping)):
        items = list(value)
    else:
        several = " (comma-separated for several)" if split else ""
        others = ", a whole number or a list of them" if digits else " or a list of texts"
        raise InvalidParameterError(name, value, f"a text{several}{others}", endpoint=endpoint)
    out = []
    for item in items:
        if digits and _whole(item) and item >= 0:
            item = str(int(item))
        if not isinstance(item, str):
            raise InvalidParameterError(
                name, value, f"each item of {name} is {kind}, not {shown_value(item)}", endpoint=endpoint
            )
        if item.strip():
            out.append(item.strip())
        elif not isinstance(value, str):
            raise InvalidParameterError(name, value, f"each item of {name} is a non-empty text", endpoint=endpoint)
    return out


def _whole(value: Any) -> bool:
    """Whether ``value`` is a whole number (numpy's too), and not True or False."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def app_list(value: Any) -> list[str]:
    """App ids from a list or a comma-separated string, in the order given, each once."""
    return list(dict.fromkeys(texts("apps", value, digits=True)))


def metric_list(value: Any) -> list[str]:
    """Metric names from a list or a comma-separated string, lower-cased, aliases resolved (``power``)."""
    return [METRIC_ALIASES.get(m.lower(), m.lower()) for m in texts("metrics", value)]


def device_for(apps: Any) -> str:
    """The device a list of app ids implies: ``"android"`` for package names, else ``"iphone"``.

    >>> device_for("com.example.notes,com.example.mail"), device_for(["284882215"])
    ('android', 'iphone')
    """
    try:
        ids = texts("apps", apps, digits=True)
    except InvalidParameterError:
        return "iphone"  # the validation of the request says what is wrong
    return "android" if ids and all(_ANDROID_ID.match(a) and not _IOS_ID.match(a) for a in ids) else "iphone"


def _check_apps(value: Any, device: str, ep: Endpoint) -> str:
    apps = texts("apps", value, digits=True, endpoint=ep.name)
    if not apps:
        raise InvalidParameterError("apps", value, "at least one app id", endpoint=ep.name)
    for app in apps:
        if len(app) > MAX_APP_ID_LENGTH:
            raise InvalidParameterError(
                "apps", app, f"an app id of at most {MAX_APP_ID_LENGTH:,} characters", endpoint=ep.name
            )
        if device == "android":
            if _IOS_ID.match(app):
                raise InvalidParameterError(
                    "apps",
                    app,
                    "a numeric id belongs to the iphone/ipad store; with device='android' give a "
                    "package name such as 'com.example.app' (or use device='iphone')",
                    endpoint=ep.name,
                )
            if not _ANDROID_ID.match(app):
                raise InvalidParameterError(
                    "apps", app, "an android package name such as 'com.example.app'", endpoint=ep.name
                )
        else:
            if _ANDROID_ID.match(app):
                raise InvalidParameterError(
                    "apps",
                    app,
                    f"an android package name cannot be sent with device={device!r}; iphone/ipad ids "
                    "are numeric text such as '284882215' (or use device='android')",
                    endpoint=ep.name,
                )
            if not _IOS_ID.match(app):
                raise InvalidParameterError(
                    "apps", app, "an iphone/ipad app id is numeric text such as '284882215'", endpoint=ep.name
                )
    return ",".join(sorted(set(apps)))


def _check_metrics(value: Any, ep: Endpoint) -> str:
    names = texts("metrics", value, endpoint=ep.name)
    if not names:
        raise InvalidParameterError("metrics", value, f"at least one of {_join(METRICS)}", endpoint=ep.name)
    chosen = set()
    for name in names:
        canonical = METRIC_ALIASES.get(name.lower(), name.lower())
        if canonical not in METRICS:
            raise InvalidParameterError(
                "metrics", name, f"one of {_join(METRICS)} ('power' means 'app-power')", endpoint=ep.name
            )
        chosen.add(canonical)
    return ",".join(m for m in METRICS if m in chosen)


def _check_code(name: str, value: Any, ep: Endpoint) -> str:
    """A country (ISO 3166-1 alpha-2) or language code (ISO 639-1, or the service's own), lower-cased.

    A code outside the lists is refused with the code usually meant, where there is one
    (``uk`` -> ``gb``, a country code given as a language: ``jp`` -> ``ja``).
    """
    country = name == "country"
    standard = "ISO 3166-1 alpha-2" if country else "ISO 639-1"
    example = "'us', 'gb' or 'de'" if country else "'en', 'de' or 'ja'"
    if not isinstance(value, str) or not _CODE.match(value.strip()):
        raise InvalidParameterError(
            name, value, f"a two-letter {name} code ({standard}) such as {example}", endpoint=ep.name
        )
    code = value.strip().lower()
    if code in (codes.COUNTRIES if country else _LANGUAGES):
        return code
    hints = (codes.COUNTRY_HINTS if country else codes.LANGUAGE_HINTS).get(code)
    own = "" if country else " nor the service's " + _join(f"{c!r} ({m})" for c, m in codes.SERVICE_LANGUAGES.items())
    if code in codes.REFUSED_LANGUAGES:
        reason = (
            f"{code!r} is the {standard} code of {codes.REFUSED_LANGUAGES[code][0]}, a language neither store offers"
        )
    elif hints:
        reason = f"not an {standard} code{own}"
    else:
        reason = f"not an {standard} code such as {example}{',' if own else ''}{own}"
    if hints:
        reason += f"; did you mean {' or '.join(repr(h) for h in hints)}?"
    raise InvalidParameterError(name, value, reason, endpoint=ep.name)


def country_code(value: Any, endpoint: Endpoint) -> str:
    """A country code (ISO 3166-1 alpha-2) lower-cased, else :class:`~storeframes.InvalidParameterError`
    naming the code usually meant.

    >>> from storeframes.catalog import ENDPOINTS
    >>> country_code(" GB", ENDPOINTS["metadata"])
    'gb'
    """
    return _check_code("country", value, endpoint)


def parse_day(name: str, value: Any, *, endpoint: str | None = None) -> date:
    """A day from ``"YYYY-MM-DD"``, a ``datetime.date`` or a ``datetime``, else :class:`~storeframes.InvalidParameterError`."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str) and _DATE.match(value.strip()):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise InvalidParameterError(name, value, "a date as 'YYYY-MM-DD' or a datetime.date", endpoint=endpoint)


def _relative_date(rule: str, today: date, end: date | None) -> date:
    match = _RELATIVE.match(rule)
    if match is None:  # pragma: no cover - catalog data error
        raise ValueError(f"bad relative date rule {rule!r}")
    anchor = today if match.group(1) == "today" else end
    assert anchor is not None
    return anchor + timedelta(days=int(match.group(2)))


def _check_keyword(value: Any, ep: Endpoint) -> str:
    """One keyword, runs of spaces made one; a comma is part of it.

    An endpoint takes one keyword per request, sent as given: ``get("search",
    keyword="a, b")`` searches "a, b". (The frame functions split a text of keywords on
    commas before asking, one request each; a keyword with a comma goes to them in a list.)
    """
    if not isinstance(value, str):
        raise InvalidParameterError(
            "keyword",
            value,
            "one keyword as a string, sent as it is, commas included (one keyword per request; "
            "search_frame and search_history_frame take several)",
            endpoint=ep.name,
        )
    keyword = " ".join(value.split())
    if not keyword:
        raise InvalidParameterError("keyword", value, "a non-empty keyword", endpoint=ep.name)
    if len(keyword) > MAX_KEYWORD_LENGTH:
        raise InvalidParameterError(
            "keyword",
            value,
            f"a keyword of at most {MAX_KEYWORD_LENGTH:,} characters (this one has {len(keyword):,})",
            endpoint=ep.name,
        )
    return keyword


def validate(
    name: str | Endpoint,
    params: Mapping[str, Any] | None = None,
    *,
    today: date | None = None,
    **kwargs: Any,
) -> dict[str, str]:
    """Check a request's parameters and return its canonical query parameters.

    Raises :class:`~storeframes.InvalidParameterError` for any bad input, naming the
    parameter, the value and what is allowed. ``apps`` may hold more than
    :data:`MAX_APPS_PER_REQUEST` ids: the client cuts them into requests
    (:func:`storeframes.planning.requests_for`; :func:`split_apps` does it alone).

    >>> validate("changes", apps="284882215", end_date="2026-01-31")
    {'apps': '284882215', 'country': 'us', 'device': 'iphone', 'start_date': '2026-01-02', 'end_date': '2026-01-31'}
    """
    ep = name if isinstance(name, Endpoint) else endpoint(name)
    given = {**(params or {}), **kwargs}
    given = {k: v for k, v in given.items() if v is not None}
    unknown = sorted(set(given) - set(ep.param_names))
    if unknown:
        raise InvalidParameterError(
            unknown[0], given[unknown[0]], f"{ep.name} takes {_join(ep.param_names)}", endpoint=ep.name
        )
    today = today or today_utc()

    device = given.get("device", "iphone")
    if not isinstance(device, str) or device.strip().lower() not in ep.devices:
        extra = ""
        if ep.name == "search_ads" and device == "android":
            extra = " (the search with ads covers only the iphone/ipad store)"
        raise InvalidParameterError("device", device, f"one of {_join(ep.devices)}{extra}", endpoint=ep.name)
    device = device.strip().lower()

    out: dict[str, str] = {}
    for p in ep.params:
        value = given.get(p.name)
        if value is None and p.kind != "date":
            if p.required:
                raise InvalidParameterError(p.name, None, f"{p.name} is required by {ep.name}", endpoint=ep.name)
            if p.default is None:
                continue
            value = p.default
        if p.kind == "apps":
            out[p.name] = _check_apps(value, device, ep)
        elif p.kind == "metrics":
            out[p.name] = _check_metrics(value, ep)
        elif p.kind in ("country", "language"):
            out[p.name] = _check_code(p.name, value, ep)
        elif p.kind == "device":
            out[p.name] = device
        elif p.kind == "choice":
            choice = value.strip().lower() if isinstance(value, str) else value
            if choice not in p.choices:
                raise InvalidParameterError(p.name, value, f"one of {_join(p.choices)}", endpoint=ep.name)
            out[p.name] = choice
        elif p.kind == "channel":
            channel = value.strip().lower() if isinstance(value, str) else value
            allowed = CHANNELS[device]
            if channel not in allowed:
                others = [d for d, chans in CHANNELS.items() if channel in chans and d != device]
                hint = f" ('{channel}' is a channel of device={others[0]!r})" if others else ""
                raise InvalidParameterError(
                    "channel", value, f"for device={device!r} one of {_join(allowed)}{hint}", endpoint=ep.name
                )
            out[p.name] = channel
        elif p.kind == "keyword":
            out[p.name] = _check_keyword(value, ep)
        elif p.kind == "date":
            continue  # resolved below, end first
        else:  # pragma: no cover - catalog data error
            raise ValueError(f"unknown parameter kind {p.kind!r}")

    if ep.date_ranged:
        _resolve_dates(ep, given, today, out)
    return {name: out[name] for name in ep.param_names if name in out}


def _resolve_dates(ep: Endpoint, given: Mapping[str, Any], today: date, out: dict[str, str]) -> None:
    spec = {p.name: p for p in ep.params}
    end = (
        parse_day("end_date", given["end_date"], endpoint=ep.name)
        if "end_date" in given
        else _relative_date(spec["end_date"].default or "today-1d", today, None)
    )
    start = (
        parse_day("start_date", given["start_date"], endpoint=ep.name)
        if "start_date" in given
        else _relative_date(spec["start_date"].default or "end-30d", today, end)
    )
    latest = today + timedelta(days=1)  # one day of slack for users ahead of UTC
    for pname, day in (("end_date", end), ("start_date", start)):
        if day > latest:
            raise InvalidParameterError(
                pname, day.isoformat(), f"a date no later than today ({today.isoformat()} UTC)", endpoint=ep.name
            )
        if day < EARLIEST_DAY:
            raise InvalidParameterError(
                pname,
                day.isoformat(),
                f"a date on or after {EARLIEST_DAY.isoformat()} (the stores opened in 2008: no history is older)",
                endpoint=ep.name,
            )
    if end < start:
        raise InvalidParameterError(
            "end_date",
            end.isoformat(),
            f"a date on or after start_date={start.isoformat()}",
            endpoint=ep.name,
        )
    out["start_date"] = start.isoformat()
    out["end_date"] = end.isoformat()


def split_apps(params: Mapping[str, str], size: int = MAX_APPS_PER_REQUEST) -> list[dict[str, str]]:
    """Cut canonical parameters with many apps into requests of at most ``size`` apps."""
    if not params.get("apps"):
        return [dict(params)]
    apps = params["apps"].split(",")
    return [{**params, "apps": ",".join(apps[i : i + size])} for i in range(0, len(apps), size)]
