"""The sandbox's dialect: which of the known forms its answers take where the service documents none.

The defaults are the forms public clients observed; the others are the forms storeframes also
reads (``docs/explanation/service.md``, "Beyond the reference"), so a client can be tested against each of
them, and a report on the real service can name the form it found as a :class:`Dialect`
(:meth:`Dialect.code`).

>>> Dialect(power="app-power").metrics({"power": {"value": 51.5, "date": "2026-11-19"}})
{'app-power': {'value': 51.5, 'date': '2026-11-19'}}
>>> Dialect(size="object").code()
'sf.sandbox.Dialect(size="object")'
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import date
from types import MappingProxyType
from typing import Any, ClassVar

__all__ = ["FORMS", "Dialect"]

FORMS: Mapping[str, tuple[Any, ...]] = MappingProxyType(
    {
        "search": ("value", "apps", "pairs"),
        "history": ("by_date", "list"),
        "keyword_level": (False, True),
        "power": ("power", "app-power"),
        "categories": ("categories", "genres"),
        "size": ("per_store", "number", "object"),
    }
)
"""Each field of :class:`Dialect` and the values it allows, in order, the default first."""


def _either(values: tuple[Any, ...]) -> str:
    words = [str(v) for v in values]
    return f"{', '.join(words[:-1])} or {words[-1]}"


def _literal(value: Any) -> str:
    return repr(value) if isinstance(value, bool) else json.dumps(value)


@dataclass(frozen=True)
class Dialect:
    """Which form the answers take where the service documents none.

    ``search``: the live organic search as ``"value"`` (``{"date", "value": [ids]}``),
    ``"apps"`` (``{"date", "apps": [{"id", "position"}]}``) or ``"pairs"`` (a list of
    ``{"application_id", "is_ad"}``). ``history``: ``"by_date"`` (``{"2026-01-05": [ids]}``)
    or ``"list"`` (``[{"date", "value": [ids]}]``). ``keyword_level``: every search answer
    (live, with ads, history) under a key named after the keyword.

    ``power``: the metrics answer's key of the app-power metric, ``"power"`` (as documented)
    or ``"app-power"`` (the name asked for). ``categories``: the metadata's member holding the
    category list, ``"categories"`` or ``"genres"``. ``size``: the metadata's ``size`` as
    ``"per_store"`` (an integer on iphone/ipad, ``{"current": {"data": n}}`` on android),
    ``"number"`` (an integer on both stores) or ``"object"`` (``{"current": {"data": n}}`` on
    both). Each field allows the values of :data:`FORMS` (also ``Dialect.FORMS``), the default
    first; any other is a ``ValueError``.

    >>> Dialect(categories="genres").metadata({"id": 1, "categories": [6008], "size": 5})
    {'id': 1, 'genres': [6008], 'size': 5}
    """

    search: str = "value"
    history: str = "by_date"
    keyword_level: bool = False
    power: str = "power"
    categories: str = "categories"
    size: str = "per_store"

    FORMS: ClassVar[Mapping[str, tuple[Any, ...]]] = FORMS

    def __post_init__(self) -> None:
        for name, allowed in FORMS.items():
            value = getattr(self, name)
            if not any(type(value) is type(a) and value == a for a in allowed):
                raise ValueError(f"Dialect.{name} must be {_either(allowed)}, got {value!r}")

    def code(self) -> str:
        """The Python text that builds this dialect, naming only the fields that differ from the defaults.

        >>> Dialect(search="apps", power="app-power").code()
        'sf.sandbox.Dialect(search="apps", power="app-power")'
        >>> Dialect().code()
        'sf.sandbox.Dialect()'
        """
        changed = [
            f"{f.name}={_literal(getattr(self, f.name))}" for f in fields(self) if getattr(self, f.name) != f.default
        ]
        return f"sf.sandbox.Dialect({', '.join(changed)})"

    # -- the search answers -----------------------------------------------------

    def live(self, day: date, ids: list[str]) -> Any:
        """The live organic search's ``result`` of ``ids`` (best first) on ``day``, in this dialect's form."""
        if self.search == "apps":
            return {"date": day.isoformat(), "apps": [{"id": a, "position": i + 1} for i, a in enumerate(ids)]}
        if self.search == "pairs":
            return [{"application_id": a, "is_ad": False} for a in ids]
        return {"date": day.isoformat(), "value": ids}

    def days(self, days: dict[str, list[str]]) -> Any:
        """The history's ``result`` of ``{day: ids}``: the object itself, or a list of ``{date, value}``."""
        return [{"date": d, "value": ids} for d, ids in days.items()] if self.history == "list" else days

    def under(self, keyword: str, result: Any) -> Any:
        """A search answer's ``result``, under a key named after the keyword with ``keyword_level``."""
        return {keyword: result} if self.keyword_level else result

    # -- the metadata and metrics answers ---------------------------------------

    def metadata(self, meta: dict[str, Any]) -> dict[str, Any]:
        """One app's metadata object (as the sandbox's world writes it) in this dialect's form.

        The category member is renamed in place, so the members keep their order; ``size``
        becomes an integer or ``{"current": {"data": n}}`` as :attr:`size` says. The default
        dialect gives ``meta`` back untouched.
        """
        if self.categories == "categories" and self.size == "per_store":
            return meta
        return {
            (self.categories if key == "categories" else key): (self._size(value) if key == "size" else value)
            for key, value in meta.items()
        }

    def _size(self, value: Any) -> Any:
        if self.size == "number" and type(value) is dict and type(value.get("current")) is dict:
            return value["current"].get("data")
        if self.size == "object" and type(value) is int:
            return {"current": {"data": value}}
        return value

    def metric_key(self, name: str) -> str:
        """The metrics answer's key of the metric requested as ``name`` (``app-power`` answers as :attr:`power`).

        >>> Dialect().metric_key("app-power"), Dialect(power="app-power").metric_key("app-power")
        ('power', 'app-power')
        """
        return self.power if name == "app-power" else name

    def metrics(self, values: dict[str, Any]) -> dict[str, Any]:
        """One app's metrics object (keyed ``power`` by the sandbox's world) in this dialect's form.

        The app-power member is renamed in place, so the members keep their order; the default
        dialect gives ``values`` back untouched.
        """
        if self.power == "power":
            return values
        return {(self.power if key == "power" else key): value for key, value in values.items()}
