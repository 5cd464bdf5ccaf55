"""The sandbox's world with a :class:`~storeframes.sandbox.Script` played over it, and the service's script.

:class:`ScriptedWorld` answers the questions the service asks its world (search, search with
ads, history days, metadata, changes) with the script's moves of the day on top;
:func:`scripted` gives it, or the world itself for an empty script, so an empty script changes
no byte. :class:`ScriptedService` holds the service's script and checks its apps.
"""

from __future__ import annotations

import base64
import copy
from datetime import date
from typing import Any
from urllib.parse import urlsplit

from ..errors import InvalidParameterError
from .script import Script, _AppMove, _during, _SearchMove, _store_of_app
from .world import _HISTORY_CAP, _LIVE_CAP, World, _normalize_keyword, _token, _uuid, store_of

__all__ = ["ScriptedService", "ScriptedWorld", "scripted"]

_STORE_FIELD = {
    "ios": {"subtitle": "subtitle", "description": "description"},
    "android": {"subtitle": "short_description", "description": "long_description"},
}
"""The metadata field of each store that ``subtitle`` and ``description`` listings set."""


def scripted(world: World, script: Script) -> World | ScriptedWorld:
    """The world as the service answers from it with ``script`` (the world itself when the script is empty).

    >>> world = World(0)
    >>> scripted(world, Script()) is world
    True
    """
    return ScriptedWorld(world, script) if script else world


class ScriptedService:
    """The part of :class:`~storeframes.sandbox.SandboxService` that holds its :class:`Script`."""

    world: World
    _script: Script = Script()

    @property
    def script(self) -> Script:
        """The :class:`Script` the service plays over its world (empty: none). Settable between days
        (``None``: none); its apps must be apps of the world.

        >>> from storeframes.sandbox import SandboxService
        >>> service = SandboxService(today="2026-11-20")
        >>> service.script = Script().outage("2026-11-21")
        >>> len(service.script.moves)
        1
        """
        return self._script

    @script.setter
    def script(self, value: Script | None) -> None:
        script = Script() if value is None else value
        if not isinstance(script, Script):
            raise InvalidParameterError("script", value, "a storeframes.sandbox.Script, or None", endpoint="sandbox")
        for app in script.apps():
            store = _store_of_app(app)
            if not self.world.has_app(app, store):
                raise InvalidParameterError(
                    "app_id", app, f"an app of the sandbox's world (World.app_ids({store!r}))", endpoint="Script"
                )
        self._script = script


# -- the world as the script shows it --------------------------------------------------------------


def _place(ids: list[str], app: str, rank: int | None, cap: int) -> list[str]:
    """``ids`` with ``app`` at position ``rank`` (None: left out), the others in their order, at most ``cap``."""
    out = [a for a in ids if a != app]
    if rank is not None:
        out.insert(min(rank - 1, len(out)), app)
    return out[:cap]


class ScriptedWorld:
    """A :class:`~storeframes.sandbox.World`'s answers with a :class:`Script` played over them.

    It answers the search, history, metadata and change questions the service asks its world;
    a request is answered wholly on its own day, so the same request on the same day gets the
    same answer.

    >>> world = World(0)
    >>> app = world.app_ids("ios")[3]
    >>> shown = ScriptedWorld(world, Script().rank("recipes", app, 1, start="2026-11-10"))
    >>> shown.search("recipes", device="iphone", country="us", language="en", day=date(2026, 11, 10))[0] == app
    True
    """

    def __init__(self, world: World, script: Script):
        self.world = world
        self.script = script

    def _moves(self, kind: str, keyword: str, device: str, country: str, language: str, day: date) -> list[_SearchMove]:
        """The moves of a kind under way on ``day`` in the search of ``keyword`` on a device, country and language."""
        keyword = _normalize_keyword(keyword)
        return [
            m
            for m in self.script.moves
            if isinstance(m, _SearchMove)
            and m.kind == kind
            and m.keyword == keyword
            and _during(day, m.start, m.end)
            and m.scope.covers(device, country, language)
        ]

    def _ranked(
        self, ids: list[str], keyword: str, device: str, country: str, language: str, day: date, cap: int
    ) -> list[str]:
        for m in self._moves("rank", keyword, device, country, language, day):
            ids = _place(ids, str(m.app), m.rank, cap)
        return ids

    def search(self, keyword: str, *, device: str, country: str, language: str, day: date) -> list[str]:
        """:meth:`World.search <storeframes.sandbox.World.search>` with the scripted ranks."""
        ids = self.world.search(keyword, device=device, country=country, language=language, day=day)
        return self._ranked(ids, keyword, device, country, language, day, _LIVE_CAP)

    def search_ads(self, keyword: str, *, device: str, country: str, language: str, day: date) -> list[dict[str, Any]]:
        """:meth:`World.search_ads <storeframes.sandbox.World.search_ads>` with the scripted ranks and advertisers."""
        entries = self.world.search_ads(keyword, device=device, country=country, language=language, day=day)
        ads = [e["application_id"] for e in entries if e["is_ad"]]
        organic = [e["application_id"] for e in entries if not e["is_ad"]]
        organic = self._ranked(organic, keyword, device, country, language, day, _LIVE_CAP)
        for m in self._moves("advertiser", keyword, device, country, language, day):
            ads = [str(m.app), *(a for a in ads if a != m.app)][: max(len(ads), 1)]
        return [{"application_id": a, "is_ad": True} for a in ads] + [
            {"application_id": a, "is_ad": False} for a in organic
        ]

    def search_history_day(
        self, keyword: str, *, device: str, country: str, language: str, day: date
    ) -> list[str] | None:
        """:meth:`World.search_history_day <storeframes.sandbox.World.search_history_day>` with the scripted
        ranks; None on a scripted day with no data."""
        if self._moves("no_data", keyword, device, country, language, day):
            return None
        ids = self.world.search_history_day(keyword, device=device, country=country, language=language, day=day)
        if ids is None:
            return None
        return self._ranked(ids, keyword, device, country, language, day, _HISTORY_CAP[store_of(device)])

    def _app_moves(self, kind: str, app: str) -> list[_AppMove]:
        return [m for m in self.script.moves if isinstance(m, _AppMove) and m.kind == kind and m.app == app]

    def metadata(self, app_id: str, *, device: str, country: str, language: str, today: date) -> dict[str, Any]:
        """:meth:`World.metadata <storeframes.sandbox.World.metadata>` with the scripted listings and extra fields."""
        meta = self.world.metadata(app_id, device=device, country=country, language=language, today=today)
        latest: dict[str, _AppMove] = {}
        for m in self._app_moves("listing", app_id):
            if m.day <= today and (m.name not in latest or m.day >= latest[m.name].day):
                latest[m.name] = m
        for m in latest.values():
            self._set(meta, m, store_of(device), device)
        for m in self._app_moves("extra_field", app_id):
            if m.day == today:
                meta[m.name] = copy.deepcopy(m.value)
        return meta

    def _set(self, meta: dict[str, Any], m: _AppMove, store: str, device: str) -> None:
        """Set one listing field in a metadata object of ``store``, as that store's answer holds it."""
        if m.name in ("subtitle", "description"):
            meta[_STORE_FIELD[store][m.name]] = m.value
        elif m.name == "size":
            meta["size"] = m.value if store == "ios" else {"current": {"data": m.value}}
        elif m.name == "version":
            newest = dict(meta["versions"][0]) if meta["versions"] else {}
            release = {**newest, "version": m.value, "release_notes": "", "release_date": f"{m.day}T00:00:00Z"}
            meta["versions"] = [release, *meta["versions"]][:25]
        elif m.name == "screenshots":
            meta["screenshots"] = self._screenshots(meta["screenshots"], m, store, device)
        else:  # title, icon, price: text, as the answer holds it
            meta[m.name] = m.value

    def _screenshots(self, shots: Any, m: _AppMove, store: str, device: str) -> Any:
        """New screenshots for every device key: drawn from (seed, app, day), or the URLs given."""
        seed = self.world.seed
        if store == "android":
            if m.value is not True:
                return list(m.value)
            urls = []
            for slot in range(max(len(shots), 1)):
                raw = _token(seed, "script", m.app, m.day, "phone", slot)
                token = base64.urlsafe_b64encode(raw + _token(raw, size=14)).decode().rstrip("=")
                urls.append(f"https://play-lh.googleusercontent.example/{token}")
            return urls
        filled = [key for key, items in shots.items() if items] or [
            "ipadPro_2018" if device == "ipad" else "iphone_6_5"
        ]
        out = dict(shots)
        for key in filled:
            hashed = any("hash" in item for item in shots[key])
            count = len(m.value) if m.value is not True else max(len(shots[key]), 1)
            out[key] = [self._shot(m, key, slot, hashed) for slot in range(count)]
        return out

    def _shot(self, m: _AppMove, key: str, slot: int, hashed: bool) -> dict[str, str]:
        """One iphone/ipad screenshot item, of the shape the world's answers have."""
        url = None if m.value is True else m.value[slot]
        raw = _token(self.world.seed, "script", m.app, m.day, key, slot, url or "")
        h = raw.hex()
        filename = f"{key}_{slot + 1}.png"
        if url is None:
            path = f"Purple{110 + raw[0] % 20}/v4/{h[0:2]}/{h[2:4]}/{h[4:6]}/{_uuid(raw)}"
            url = f"https://is{1 + raw[1] % 5}-ssl.mzstatic.example/image/thumb/{path}/{filename}/392x696bb.png"
        else:
            path = urlsplit(url).path.strip("/")
        item = {"id": h}
        if hashed:
            item["hash"] = _token(raw, "hash").hex()
        return item | {"filename": filename, "path_component": path, "url": url}

    def changes(
        self, app_id: str, *, device: str, country: str, language: str, start: date, end: date
    ) -> list[dict[str, Any]]:
        """:meth:`World.changes <storeframes.sandbox.World.changes>` with the scripted records, last of their day."""
        records = self.world.changes(app_id, device=device, country=country, language=language, start=start, end=end)
        extra = [
            {
                "target": m.name,
                "old_value": copy.deepcopy(m.old),
                "new_value": copy.deepcopy(m.value),
                "version": "",
                "is_ab_test": False,
                "date": m.day.isoformat(),
            }
            for m in self._app_moves("unknown_target", app_id)
            if start <= m.day <= end
        ]
        if not extra:
            return records
        return sorted(records + extra, key=lambda r: r["date"])  # stable: a day's own records first
