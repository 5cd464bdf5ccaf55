"""Scripted moves: what the sandbox shows on given days, on top of the world's own answers.

A :class:`Script` is a small, immutable description of moves: an app at a given search rank,
a new title, an advertiser, a day with no recorded search, an answer that leaves an app out,
a field or a change target storeframes does not know, a day the service is down. Each method
returns a new script, so scripts chain and can be shared::

    from storeframes import sandbox

    app = sandbox.World(0).app_ids("ios")[3]
    script = (
        sandbox.Script()
        .rank("photo editor", app, 1, start="2026-11-10", end="2026-11-12")
        .listing(app, "2026-11-11", title="Snap Studio", screenshots=True)
        .outage("2026-11-14")
    )
    client = sandbox.client(today="2026-11-11", script=script)

The service plays the script over its world (:mod:`storeframes.sandbox._scripted`) day by day, so the same
request on the same day still gets the same bytes; an empty script changes nothing. Apps are
those of the sandbox's world (numeric ids for iphone/ipad, package names for android);
keywords match as the service matches them (case and runs of spaces do not count).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from datetime import date
from typing import Any

from ..catalog import parse_day
from ..errors import InvalidParameterError
from .world import _TARGET_ORDER, _normalize_keyword, store_of

__all__ = ["Script"]

_DEVICES = ("iphone", "ipad", "android")
_LISTING_FIELDS = {
    "title": "title",
    "subtitle": "subtitle",
    "short_description": "subtitle",
    "description": "description",
    "long_description": "description",
    "icon": "icon",
    "price": "price",
    "screenshots": "screenshots",
    "size": "size",
    "version": "version",
}
"""The fields :meth:`Script.listing` takes, and the field each one sets (the stores name two of them apart)."""
_DOCUMENTED_FIELDS = frozenset(
    {
        "title",
        "subtitle",
        "promotional_text",
        "description",
        "id",
        "categories",
        "icon",
        "screenshots",
        "videos",
        "size",
        "rating",
        "developer",
        "price",
        "versions",
        "release_date",
        "customers_also_bought",
        "dna",
        "features",
        "in_app_purchases",
        "short_description",
        "long_description",
        "released_at",
        "similar_apps",
        "permissions",
    }
)
"""The metadata fields the service documents (iphone/ipad and android): no extra field may take their names."""


# -- the moves --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Scope:
    """Where a search move applies: None is every country, device or language of the app's store."""

    store: str
    country: str | None
    device: str | None
    language: str | None

    def covers(self, device: str, country: str, language: str) -> bool:
        return (
            self.store in ("any", store_of(device))
            and self.device in (None, device)
            and self.country in (None, country)
            and self.language in (None, language)
        )


@dataclass(frozen=True)
class _SearchMove:
    """A move of a keyword's search answers: ``kind`` is rank, advertiser or no_data."""

    kind: str
    keyword: str
    app: str | None
    rank: int | None
    start: date
    end: date | None
    scope: _Scope


@dataclass(frozen=True)
class _AppMove:
    """A move of an app's answers: ``kind`` is listing (``name``: the field), leave_out, extra_field
    or unknown_target (``name``: the target, ``old``: its old value)."""

    kind: str
    app: str
    day: date
    name: str = ""
    value: Any = None
    old: Any = None


@dataclass(frozen=True)
class _Outage:
    day: date


_Move = _SearchMove | _AppMove | _Outage


def _during(day: date, start: date, end: date | None) -> bool:
    return start <= day and (end is None or day <= end)


# -- checking arguments -------------------------------------------------------------------------------


def _day(name: str, value: Any) -> date:
    return parse_day(name, value, endpoint="Script")


def _keyword(value: Any) -> str:
    keyword = _normalize_keyword(value) if isinstance(value, str) else ""
    if not keyword:
        raise InvalidParameterError("keyword", value, "a non-empty keyword", endpoint="Script")
    return keyword


def _app(value: Any) -> str:
    app = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if not isinstance(app, str) or not app or app != "".join(app.split()) or "," in app:
        raise InvalidParameterError(
            "app_id", value, "one app id: numeric for iphone/ipad, a package name for android", endpoint="Script"
        )
    return app


def _store_of_app(app: str) -> str:
    return "ios" if app.isdigit() else "android"


def _code(name: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value.strip()) != 2 or not value.strip().isalpha():
        raise InvalidParameterError(
            name, value, f"a two-letter {name} code, or None for every {name}", endpoint="Script"
        )
    return value.strip().lower()


def _scope(app: str, country: Any, device: Any, language: Any, *, ads: bool = False) -> _Scope:
    store = _store_of_app(app)
    devices = ("iphone", "ipad") if ads else _DEVICES
    if device is not None and (device not in devices or store_of(device) != store):
        allowed = [d for d in devices if store_of(d) == store]
        raise InvalidParameterError(
            "device",
            device,
            f"one of {', '.join(allowed)} (the store of app {app!r}), or None for each",
            endpoint="Script",
        )
    if ads and store != "ios":
        raise InvalidParameterError(
            "app_id", app, "an iphone/ipad app (numeric id): only that store sells search ads", endpoint="Script"
        )
    return _Scope(store, _code("country", country), device, _code("language", language))


def _span(start: Any, end: Any) -> tuple[date, date | None]:
    first = _day("start", start)
    last = None if end is None else _day("end", end)
    if last is not None and last < first:
        raise InvalidParameterError(
            "end", end, f"a day on or after start ({first.isoformat()}), or None", endpoint="Script"
        )
    return first, last


def _json(name: str, value: Any) -> Any:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        raise InvalidParameterError(name, value, "a value JSON can carry", endpoint="Script") from None
    return copy.deepcopy(value)


def _listing_value(name: str, value: Any) -> Any:
    if name == "size":
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise InvalidParameterError("size", value, "the app's size in bytes, an int >= 0", endpoint="Script")
        return value
    if name == "screenshots":
        if value is True:
            return True
        urls = tuple(value) if isinstance(value, list | tuple) else ()
        if not urls or not all(isinstance(u, str) and u for u in urls):
            raise InvalidParameterError(
                "screenshots", value, "True (a new set) or a non-empty list of URL texts", endpoint="Script"
            )
        return urls
    if not isinstance(value, str) or (not value and name in ("title", "icon", "version")):
        what = "text (may be empty)" if name in ("price", "subtitle", "short_description") else "non-empty text"
        raise InvalidParameterError(name, value, what, endpoint="Script")
    return value


# -- the script -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Script:
    """Scripted moves the sandbox plays on top of its world's answers, on given days.

    Immutable and chainable: each method checks its arguments (a bad one raises
    :class:`~storeframes.InvalidParameterError` naming it and what is allowed) and returns a new
    script with one more move; ``moves`` holds them in the order given. Days are a
    ``datetime.date`` or ``"YYYY-MM-DD"``; ``country``, ``device`` and ``language`` None apply a
    move to every country, device or language of the app's store. Give a script to
    ``sandbox.client(today=..., script=...)`` (or ``SandboxService(script=...)``, or a sandbox
    ``Tracker(..., script=...)``); ``service.script = ...`` changes it between days. An empty
    script is false and changes nothing.

    >>> import polars as pl
    >>> from storeframes import sandbox
    >>> app = sandbox.World(0).app_ids("ios")[3]
    >>> script = sandbox.Script().rank("recipes", app, 1, start="2026-11-10").outage("2026-11-14")
    >>> with sandbox.client(today="2026-11-10", script=script, cache_dir=False) as c:
    ...     c.search_frame("recipes").filter(pl.col("rank") == 1)["app_id"].to_list() == [app]
    True
    >>> bool(sandbox.Script()), len(script.moves)
    (False, 2)
    """

    moves: tuple[_Move, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.moves)

    def _with(self, *moves: _Move) -> Script:
        return Script((*self.moves, *moves))

    # -- search ------------------------------------------------------------------------------

    def rank(
        self,
        keyword: str,
        app_id: str | int,
        rank: int | None,
        *,
        start: date | str,
        end: date | str | None = None,
        country: str | None = None,
        device: str | None = None,
        language: str | None = None,
    ) -> Script:
        """From ``start`` to ``end`` (both included; None: for ever after) the app sits at organic
        position ``rank`` (1 first) of the keyword's search: the live search, the organic part of
        the search with ads, and the search history's days (today's live fill too). The other apps
        keep their order; past the end of a shorter list the app comes last, and past the answer's
        cap (250 live, 500 in the iphone/ipad history) it is not shown. ``rank=None`` leaves the
        app out of those answers. A later move of the same app and keyword wins.

        >>> Script().rank("recipes", "361252007", 3, start="2026-11-10", end="2026-11-12").moves[0].rank
        3
        """
        app = _app(app_id)
        if rank is not None and (not isinstance(rank, int) or isinstance(rank, bool) or rank < 1):
            raise InvalidParameterError(
                "rank", rank, "a position >= 1 (1 is first), or None to leave the app out", endpoint="Script"
            )
        first, last = _span(start, end)
        return self._with(
            _SearchMove("rank", _keyword(keyword), app, rank, first, last, _scope(app, country, device, language))
        )

    def advertiser(
        self,
        keyword: str,
        app_id: str | int,
        *,
        start: date | str,
        end: date | str | None = None,
        country: str | None = None,
        device: str | None = None,
        language: str | None = None,
    ) -> Script:
        """From ``start`` to ``end`` (None: for ever after) the app holds the first ad placement of
        the keyword's search with ads (iphone/ipad); the ad that held it moves to the second.

        >>> Script().advertiser("recipes", "361252007", start="2026-11-10").moves[0].app
        '361252007'
        """
        app = _app(app_id)
        first, last = _span(start, end)
        scope = _scope(app, country, device, language, ads=True)
        return self._with(_SearchMove("advertiser", _keyword(keyword), app, None, first, last, scope))

    def no_data(
        self,
        keyword: str,
        day: date | str,
        *,
        country: str | None = None,
        device: str | None = None,
        language: str | None = None,
    ) -> Script:
        """The search history recorded nothing for the keyword on ``day``: the day is absent from the
        history answer (and not charged), as a day the keyword was not tracked. When ``day`` is the
        service's today, the history's live fill of today stays, as it does for an untracked keyword.

        >>> Script().no_data("recipes", "2026-11-09").moves[0].start
        datetime.date(2026, 11, 9)
        """
        keyword = _keyword(keyword)
        first = _day("day", day)
        if device is not None and device not in _DEVICES:
            raise InvalidParameterError(
                "device", device, "iphone, ipad or android, or None for each", endpoint="Script"
            )
        store = "any" if device is None else store_of(device)
        scope = _Scope(store, _code("country", country), device, _code("language", language))
        return self._with(_SearchMove("no_data", keyword, None, None, first, first, scope))

    # -- metadata and changes ------------------------------------------------------------------

    def listing(self, app_id: str | int, day: date | str, **fields: Any) -> Script:
        """From ``day`` on, the app's metadata answer shows these values, for ever after or until a
        listing of a later day sets the same field (on the same day, the later call wins); the change
        history does not list them: only snapshots of the metadata find them.

        Fields: ``title``; ``subtitle`` (iphone/ipad; ``short_description`` on android, either
        name); ``description`` (iphone/ipad; ``long_description`` on android, either name);
        ``icon`` (a URL text); ``price`` (text, ``""`` for free); ``screenshots`` (True: every
        screenshot of every device key replaced by a new one, new id, URL and hash, the same for
        the same app and day; or a list of URL texts, the screenshots of each device key);
        ``size`` (bytes); ``version`` (a new release of that label on ``day`` heads ``versions``).

        >>> [m.name for m in Script().listing("361252007", "2026-11-10", title="Snap", size=10**8).moves]
        ['title', 'size']
        """
        app = _app(app_id)
        first = _day("day", day)
        if not fields:
            raise InvalidParameterError(
                "fields", fields, f"one or more of {', '.join(_LISTING_FIELDS)}", endpoint="Script"
            )
        moves = []
        for name, value in fields.items():
            if name not in _LISTING_FIELDS:
                raise InvalidParameterError(
                    name, value, f"a listing field: one of {', '.join(_LISTING_FIELDS)}", endpoint="Script"
                )
            moves.append(_AppMove("listing", app, first, _LISTING_FIELDS[name], _listing_value(name, value)))
        return self._with(*moves)

    def leave_out(self, app_id: str | int, day: date | str) -> Script:
        """On ``day`` a metadata or metrics answer asked for the app answers without it (its key is
        missing from ``result``), as the service sometimes does.

        >>> Script().leave_out("361252007", "2026-11-10").moves[0].app
        '361252007'
        """
        return self._with(_AppMove("leave_out", _app(app_id), _day("day", day)))

    def extra_field(self, app_id: str | int, day: date | str, name: str, value: Any) -> Script:
        """On ``day`` (only) the app's metadata object carries a field ``name`` the service does not
        document, holding ``value`` (anything JSON carries).

        >>> Script().extra_field("361252007", "2026-11-10", "age_rating", "12+").moves[0].name
        'age_rating'
        """
        if not isinstance(name, str) or not name or name in _DOCUMENTED_FIELDS:
            raise InvalidParameterError(
                "name", name, "a field name the metadata answer does not document", endpoint="Script"
            )
        return self._with(_AppMove("extra_field", _app(app_id), _day("day", day), name, _json("value", value)))

    def unknown_target(self, app_id: str | int, day: date | str, target: str, old_value: Any, new_value: Any) -> Script:
        """The app's change history lists one more record on ``day``, of a target the service does
        not list otherwise (not ``version``, ``size``, ``icon`` ...), when the range asked covers it.

        >>> Script().unknown_target("361252007", "2026-11-10", "age_rating", "4+", "12+").moves[0].name
        'age_rating'
        """
        if not isinstance(target, str) or not target or target in _TARGET_ORDER:
            raise InvalidParameterError(
                "target",
                target,
                f"a change target the history does not list already (not {', '.join(_TARGET_ORDER)})",
                endpoint="Script",
            )
        old, new = _json("old_value", old_value), _json("new_value", new_value)
        return self._with(_AppMove("unknown_target", _app(app_id), _day("day", day), target, new, old))

    def outage(self, day: date | str) -> Script:
        """Every request on ``day`` is answered 503 (nothing charged), whatever it asks.

        >>> Script().outage("2026-11-14").is_outage(date(2026, 11, 14))
        True
        """
        return self._with(_Outage(_day("day", day)))

    # -- what the service asks ------------------------------------------------------------------

    def is_outage(self, day: date) -> bool:
        """Whether the service is down on ``day``.

        >>> Script().outage("2026-11-14").is_outage(date(2026, 11, 15))
        False
        """
        return any(isinstance(m, _Outage) and m.day == day for m in self.moves)

    def apps(self) -> list[str]:
        """The apps the moves name, in order, once each.

        >>> Script().leave_out("361252007", "2026-11-10").rank("maps", "42", 1, start="2026-11-10").apps()
        ['361252007', '42']
        """
        return list(dict.fromkeys(m.app for m in self.moves if not isinstance(m, _Outage) and m.app is not None))

    def trim(self, endpoint: str, day: date, result: Any) -> Any:
        """``result`` of a metadata or metrics answer on ``day`` without the apps left out that day.

        >>> Script().leave_out("1", "2026-11-10").trim("metadata", date(2026, 11, 10), {"1": {}, "2": {}})
        {'2': {}}
        """
        if endpoint in ("metadata", "metrics") and isinstance(result, dict):
            for m in self.moves:
                if isinstance(m, _AppMove) and m.kind == "leave_out" and m.day == day:
                    result.pop(m.app, None)
        return result
