"""App cards: one app's store listing at a glance, as plain HTML for Jupyter.

:func:`app_card` draws an app's icon, title, developer, rating, price, category, version
and a strip of screenshots as a self-contained HTML card (inline CSS only, no script).
A notebook shows the returned :class:`AppCard` by itself; ``card.html`` is the text.

>>> import storeframes as sf
>>> from datetime import date
>>> client = sf.sandbox.client(today=date(2026, 11, 20), progress=False)
>>> app_card("3233849169", client=client)          # one metadata fetch
AppCard(3233849169: 'Photo Editor Plus: Edit photos like a pro', iphone/us)
>>> row = client.metadata_frame("3233849169")      # a cached answer: no credits
>>> app_card(row, client=client).title             # from a row: never a credit
'Photo Editor Plus: Edit photos like a pro'
>>> client.close()
"""

from __future__ import annotations

import hashlib
import html
import math
import numbers
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import urlsplit

import polars as pl

from .. import catalog
from .. import defaults as _defaults
from .._tracebacks import user_facing
from ..analysis import UNKNOWN_PRICE, price_text, store_currency
from ..client import Client
from ..errors import AppNotAvailableError, AppsUnavailableWarning, InvalidParameterError, NotCachedError
from .device_names import device_name

__all__ = ["AppCard", "app_card"]

_WHERE = "app_card"
_ICON = 64
_SHOT_HEIGHT = 180
_PHONE_WIDTH = 90
_TABLET_WIDTH = 135
_FONT = "system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif"


@dataclass(frozen=True, repr=False)
class AppCard:
    """An app's card: ``html`` is the card, and Jupyter shows it through :meth:`_repr_html_`.

    Attributes:
        app_id: the app's id.
        title: the app's name (its id when the metadata has none).
        device: iphone, ipad or android (None when unknown).
        country: the two-letter country of the metadata (None when unknown).
        html: the card as self-contained HTML (inline CSS, no script).
    """

    app_id: str
    title: str
    device: str | None
    country: str | None
    html: str

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        title = self.title if len(self.title) <= 60 else self.title[:59] + "…"
        where = "/".join(v for v in (self.device, self.country) if v) or "?"
        return f"AppCard({self.app_id}: {title!r}, {where})"


@user_facing
def app_card(
    app: str | int | pl.DataFrame | Mapping[str, Any] | Any,
    *,
    client: Client | None = None,
    country: str = "us",
    language: str | None = None,
    device: str | None = None,
    screenshots: pl.DataFrame | None = None,
    max_screenshots: int = 6,
) -> AppCard:
    """An HTML card of one app: icon, title, developer, rating, price, category, version, screenshots.

    ``app`` is an app id (a text, or a whole number such as ``284882215``), or a metadata
    row: a one-row :func:`~storeframes.metadata_frame`, a dict of its columns
    (``frame.row(0, named=True)``) or a pandas row (``frame.to_pandas().iloc[0]``; its
    missing values, NaN and NaT, count as missing).

    * **An id** is looked up with ``client`` (by default :func:`~storeframes.default_client`):
      :meth:`~storeframes.Client.metadata_frame` with ``country``, ``language`` and
      ``device``, then :meth:`~storeframes.Client.screenshots_frame` from the same cached
      answer, so a card costs the credits of one metadata fetch (none when cached). An app
      the service does not have in that country raises
      :class:`~storeframes.AppNotAvailableError`.
    * **A row** never costs a credit. The screenshots come from ``screenshots`` (a
      :func:`~storeframes.screenshots_frame`; only that app's rows are used), else from the
      cache of ``client`` (or of the default client, if one is configured) with
      ``refresh="never"``, which sends nothing (``country`` and ``device`` are used only
      where the row has none). When neither has them, the card says how
      many screenshots the app has (``screenshots_count``) and shows no strip.

    The price reads ``Free`` only for a free app (``price_value`` 0, or an empty price),
    ``price unknown`` when the row has none (not known, which is not free), and a paid app's
    price in its store's currency: ``$2.99`` in the US, ``2,99 €`` in Germany (the row's
    ``currency`` if it has one, else the currency of its country's store, else of ``country``;
    see :func:`storeframes.analysis.price_text`).

    The strip holds up to ``max_screenshots`` screenshots of one device key (the first in
    the frame, e.g. ``iphone_6_5``) by position, names the device in words ("iPhone
    6.5-inch", see :func:`~storeframes.widgets.device_names.device_name`) and says ``+N more``
    when there are more.
    Every text is HTML-escaped and only ``http(s)`` image URLs are used (anything else is
    dropped); images have alt text and fixed sizes, so a broken image keeps the layout.

    Images on the reserved ``.example`` top-level domain (RFC 2606, as in the sandbox:
    ``https://is1-ssl.mzstatic.example/...``) can never load, so they are drawn as
    placeholders instead: a rounded box of the image's size, in a neutral colour derived
    from the URL, holding the title's first letter (icon) or the screenshot's position,
    with the URL as its ``title`` (tooltip).

    Invalid input (a frame of more or fewer than one row, an empty or negative id, anything
    else) raises :class:`~storeframes.InvalidParameterError` naming the value and what is
    allowed, before any request.

    >>> import storeframes as sf
    >>> from datetime import date
    >>> client = sf.sandbox.client(today=date(2026, 11, 20), progress=False)
    >>> card = app_card("app.moonforge.photoeditorhd", client=client, max_screenshots=4)
    >>> card
    AppCard(app.moonforge.photoeditorhd: 'Photo Editor HD: Filters, collages & retouch', android/us)
    >>> card.html.count('class="sf-shot"'), "+2 more" in card.html, client.spent
    (4, True, 11)
    >>> client.close()
    """
    if isinstance(max_screenshots, bool) or not isinstance(max_screenshots, int) or max_screenshots < 0:
        raise InvalidParameterError("max_screenshots", max_screenshots, "a whole number >= 0", endpoint=_WHERE)
    if client is not None and not isinstance(client, Client):
        raise InvalidParameterError("client", _described(client), "a storeframes.Client or None", endpoint=_WHERE)
    if screenshots is not None and not isinstance(screenshots, pl.DataFrame):
        raise InvalidParameterError(
            "screenshots",
            _described(screenshots),
            "a screenshots_frame (a polars DataFrame) or None",
            endpoint=_WHERE,
        )
    given = _given(app)
    shots: pl.DataFrame | None
    if isinstance(given, str):  # an id: fetch it
        app_id = given
        client = client if client is not None else _defaults.default_client()
        row, shots = _fetch(client, app_id, country=country, language=language, device=device)
        if screenshots is not None:
            shots = screenshots
    else:
        row, app_id = given, given["app_id"]
        shots = screenshots
        if shots is None:
            client = client if client is not None else _defaults._client
            if client is not None:
                shots = _cached_screenshots(client, row, country=country, device=device)
    if shots is not None:
        shots = _of_app(shots, row)
    title = _clean(row.get("title")) or app_id
    return AppCard(
        app_id=app_id,
        title=title,
        device=_clean(row.get("device")),
        country=_clean(row.get("country")),
        html=_card_html(row, app_id, title, shots, max_screenshots, country),
    )


# -- input ------------------------------------------------------------------------------------------


_ALLOWED = (
    "an app id (a text or a whole number), a one-row metadata_frame, or a metadata row: "
    "a dict of its columns (frame.row(0, named=True)) or a pandas row (frame.to_pandas().iloc[0])"
)


def _given(app: Any) -> str | dict[str, Any]:
    """The app id, or the metadata row, that ``app`` gives; every refusal is raised here, before any request."""
    if isinstance(app, numbers.Integral) and not isinstance(app, bool):
        if app < 0:
            raise InvalidParameterError("app", app, "an app id >= 0: " + _ALLOWED, endpoint=_WHERE)
        return str(int(app))
    if isinstance(app, str):
        if not app.strip() or "," in app or len(app.split()) > 1:
            raise InvalidParameterError("app", app, "one app id: " + _ALLOWED, endpoint=_WHERE)
        return app.strip()
    if isinstance(app, pl.DataFrame) or _of_pandas(app, "DataFrame"):
        if len(app) != 1:
            raise InvalidParameterError(
                "app", _described(app), _ALLOWED + " (filter the frame to one app first)", endpoint=_WHERE
            )
        row = app.row(0, named=True) if isinstance(app, pl.DataFrame) else _pandas_row(app.iloc[0])
    elif isinstance(app, Mapping):
        row = dict(app)
    elif _of_pandas(app, "Series"):
        row = _pandas_row(app)
    else:
        raise InvalidParameterError("app", _described(app), _ALLOWED, endpoint=_WHERE)
    app_id = row.get("app_id")
    if isinstance(app_id, numbers.Integral) and not isinstance(app_id, bool) and int(app_id) >= 0:
        app_id = str(int(app_id))  # a frame of the user's own, with numeric ids
    if not isinstance(app_id, str) or not app_id.strip():
        raise InvalidParameterError(
            "app", f"a row with app_id={app_id!r}", _ALLOWED + ", with an app_id", endpoint=_WHERE
        )
    row["app_id"] = app_id.strip()
    return row


def _of_pandas(value: Any, kind: str) -> bool:
    """Whether ``value`` is a pandas ``kind`` (``Series``, ``DataFrame``), without importing pandas."""
    cls = type(value)
    return cls.__name__ == kind and cls.__module__.partition(".")[0] == "pandas"


def _pandas_row(series: Any) -> dict[str, Any]:
    """A pandas row as a polars row holds it: numpy values as Python values, missing values (NaN, NaT, NA) as None."""
    row = {}
    for key, value in series.items():
        if type(value).__module__ == "numpy" and hasattr(value, "tolist"):
            value = value.tolist()  # numpy scalars and arrays (a list column's cells)
        if (isinstance(value, float) and math.isnan(value)) or type(value).__name__ in ("NaTType", "NAType"):
            value = None
        row[str(key)] = value
    return row


def _described(value: Any) -> Any:
    """A refused value as a message shows it: a frame by its library and rows, anything else as itself (cut)."""
    if isinstance(value, pl.DataFrame) or _of_pandas(value, "DataFrame"):
        library = "polars" if isinstance(value, pl.DataFrame) else "pandas"
        return f"a {library} DataFrame of {len(value)} row{'s' if len(value) != 1 else ''}"
    return value


def _fetch(
    client: Client, app_id: str, *, country: str, language: str | None, device: str | None
) -> tuple[dict[str, Any], pl.DataFrame]:
    """The app's metadata row and screenshots: one metadata answer, the second frame from the cache."""
    args = {"country": country, "language": language, "device": device}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AppsUnavailableWarning)  # said by the error below
        meta = client.metadata_frame(app_id, country=country, language=language, device=device)
    if meta.height == 0:
        shown = device or catalog.device_for([app_id])
        raise AppNotAvailableError(
            422,
            f"app {app_id!r} is not available in country {country!r} for {shown} "
            "(or the service does not know it): no card to show",
            code="AppNotAvailableError",
            path=client.endpoints["metadata"].path,
            params={"apps": app_id, **{k: v for k, v in args.items() if v is not None}},
            apps=(app_id,),
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AppsUnavailableWarning)
        shots = client.screenshots_frame(app_id, country=country, language=language, device=device)
    return meta.row(0, named=True), shots


def _cached_screenshots(
    client: Client, row: Mapping[str, Any], *, country: str, device: str | None
) -> pl.DataFrame | None:
    """The row's screenshots if ``client``'s cache holds them (``refresh="never"``: nothing is sent), else None.

    The cache keys an answer by the request's language: a row fetched without one (the
    country's language) is found under ``language=None``, so both are tried, and only
    rows in the row's language are kept.
    """
    language = _clean(row.get("language"))
    row_country = _clean(row.get("country")) or country
    row_device = _clean(row.get("device")) or device
    for asked in dict.fromkeys((language, None)):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", AppsUnavailableWarning)
                frame = client.screenshots_frame(
                    row["app_id"], country=row_country, language=asked, device=row_device, refresh="never"
                )
        except (NotCachedError, InvalidParameterError):
            continue
        if language is not None and "language" in frame.columns:
            frame = frame.filter(pl.col("language") == language)
        if frame.height:
            return frame
    return None


def _of_app(shots: pl.DataFrame, row: Mapping[str, Any]) -> pl.DataFrame:
    """The screenshots of the row's app (and, where the frame has several, of its country, language, device)."""
    if "app_id" in shots.columns:
        shots = shots.filter(pl.col("app_id").cast(pl.String) == row["app_id"])
    for column in ("country", "language", "device"):
        value = _clean(row.get(column))
        if value is not None and column in shots.columns and shots[column].n_unique() > 1:
            narrowed = shots.filter(pl.col(column) == value)
            if narrowed.height:
                shots = narrowed
    return shots


# -- values -------------------------------------------------------------------------------------------


def _clean(value: Any) -> str | None:
    """A text value stripped, or None when missing or blank."""
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _rating(value: Any) -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return "no rating"
    return f"{number:.1f} ★" if math.isfinite(number) and number > 0 else "no rating"


def _price(row: Mapping[str, Any], country: str) -> str:
    """The price in words: ``Free``, ``$2.99`` (in the row's currency, else its store's), or ``price unknown``."""
    currency = _clean(row.get("currency")) or store_currency(_clean(row.get("country")) or country)
    value = row.get("price_value")
    if value is not None:
        try:
            number: Decimal | None = Decimal(str(value))
        except InvalidOperation:
            number = None
        if number is not None and number.is_finite():
            return price_text(number, currency)
    text = row.get("price")
    if text is None:  # the answer had no price: not known, which is not free
        return UNKNOWN_PRICE
    return price_text(text if isinstance(text, str) else str(text), currency)


def _category(codes: Any) -> str | None:
    """The first category's name (its code when the name is not known)."""
    if codes is None or isinstance(codes, str):
        codes = [codes] if codes else []
    for code in codes:
        code = _clean(code)
        if code is not None:
            return catalog.IOS_CATEGORIES.get(code) or catalog.ANDROID_CATEGORIES.get(code) or code
    return None


def _url(value: Any) -> str | None:
    """An http(s) URL, or None (anything else is dropped)."""
    text = _clean(value)
    if text is None or any(c in text for c in "\x00\r\n\t"):
        return None
    try:
        parts = urlsplit(text)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    return text


def _never_loads(url: str) -> bool:
    """Whether the URL's host is on the reserved ``.example`` top-level domain (RFC 2606)."""
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    return host == "example" or host.endswith(".example")


def _shade(url: str | None, label: str) -> str:
    """A neutral, light colour derived from the URL and the label, the same every time."""
    digest = hashlib.sha256(f"{url or ''}\x00{label}".encode()).digest()
    hue = int.from_bytes(digest[:2], "big") % 360
    return f"hsl({hue},18%,84%)"


# -- HTML ---------------------------------------------------------------------------------------------


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _image(cls: str, url: str | None, label: str, alt: str, width: int, height: int, radius: int, size: int) -> str:
    """An ``<img>``, or a placeholder box of the same size when the URL is missing, dropped or never loads."""
    box = f"width:{width}px;height:{height}px;flex:none;border-radius:{radius}px;"
    if url is not None and not _never_loads(url):
        return (
            f'<img class="{cls}" src="{_e(url)}" alt="{_e(alt)}" width="{width}" height="{height}" '
            f'loading="lazy" referrerpolicy="no-referrer" '
            f'style="{box}object-fit:cover;background:#eaeef2;border:1px solid #d0d7de;display:block">'
        )
    tip = f' title="{_e(url)}"' if url is not None else ""
    return (
        f'<div class="{cls}" role="img" aria-label="{_e(alt)}"{tip} '
        f'style="{box}background:{_shade(url, label)};border:1px solid #d0d7de;display:flex;'
        f"align-items:center;justify-content:center;color:#4b5563;font-size:{size}px;font-weight:600;"
        f'box-sizing:border-box;overflow:hidden">{_e(label)}</div>'
    )


def _strip(shots: pl.DataFrame | None, row: Mapping[str, Any], title: str, limit: int) -> str:
    """The screenshots strip and its note."""
    note = 'style="color:#57606a;font-size:12px;margin-top:6px"'
    if shots is None:
        count = row.get("screenshots_count")
        if count == 0:
            return f'<div class="sf-note" {note}>no screenshots</div>'
        if isinstance(count, int) and not isinstance(count, bool):
            message = f"{count} screenshot{'s' if count != 1 else ''} (not loaded: pass screenshots= to show them)"
            return f'<div class="sf-note" {note}>{_e(message)}</div>'
        return ""
    if "url" not in shots.columns or shots.height == 0:
        return f'<div class="sf-note" {note}>no screenshots</div>'
    key = None
    if "device_key" in shots.columns:
        keys = shots["device_key"].drop_nulls()
        key = keys[0] if len(keys) else None
        shots = shots.filter(pl.col("device_key") == key) if key is not None else shots
    if "position" in shots.columns:
        shots = shots.sort("position", nulls_last=True, maintain_order=True)
    total = shots.height
    width = _TABLET_WIDTH if key is not None and "ipad" in str(key).lower() else _PHONE_WIDTH
    items = []
    positions = shots["position"].to_list() if "position" in shots.columns else [None] * total
    for i, (url, position) in enumerate(zip(shots["url"].to_list()[:limit], positions[:limit], strict=False), 1):
        number = str(position if isinstance(position, int) else i)
        alt = f"Screenshot {number} of {title}"
        items.append(_image("sf-shot", _url(url), number, alt, width, _SHOT_HEIGHT, 8, 18))
    parts = []
    if items:
        parts.append(
            '<div class="sf-shots" style="display:flex;gap:8px;overflow-x:auto;margin-top:12px;padding-bottom:4px">'
            + "".join(items)
            + "</div>"
        )
    more = total - len(items)
    said = [device_name(str(key))] if key is not None else []
    if more > 0:
        said.append(f"+{more} more")
    if said:
        parts.append(f'<div class="sf-note" {note}>{_e(" · ".join(said))}</div>')
    return "".join(parts)


def _card_html(
    row: Mapping[str, Any], app_id: str, title: str, shots: pl.DataFrame | None, max_screenshots: int, country: str
) -> str:
    letter = title[0].upper()
    icon = _image("sf-icon", _url(row.get("icon_url")), letter, f"Icon of {title}", _ICON, _ICON, 14, 28)
    developer = _clean(row.get("developer_name"))
    facts = [
        f'<span class="sf-rating">{_e(_rating(row.get("rating_average")))}</span>',
        f'<span class="sf-price">{_e(_price(row, country))}</span>',
    ]
    category = _category(row.get("categories"))
    if category is not None:
        facts.append(f'<span class="sf-category">{_e(category)}</span>')
    version = _clean(row.get("version"))
    if version is not None:
        facts.append(f'<span class="sf-version">version {_e(version)}</span>')
    where = "/".join(v for v in (_clean(row.get("device")), _clean(row.get("country"))) if v)
    if where:
        facts.append(f'<span class="sf-where">{_e(where)}</span>')
    dot = '<span style="color:#8c959f"> · </span>'
    return (
        f'<div class="sf-card" style="font-family:{_FONT};border:1px solid #d0d7de;border-radius:12px;'
        'padding:12px;max-width:640px;background:#ffffff;color:#1f2328;box-sizing:border-box;line-height:1.35">'
        '<div style="display:flex;gap:12px;align-items:center">'
        f"{icon}"
        '<div style="min-width:0">'
        f'<div class="sf-title" style="font-size:16px;font-weight:600;overflow-wrap:anywhere">{_e(title)}</div>'
        + (
            f'<div class="sf-developer" style="font-size:13px;color:#57606a">{_e(developer)}</div>'
            if developer is not None
            else ""
        )
        + f'<div class="sf-facts" style="font-size:13px;margin-top:4px">{dot.join(facts)}</div>'
        f'<div class="sf-id" style="font-size:11px;color:#8c959f;margin-top:2px">{_e(app_id)}</div>'
        "</div></div>" + _strip(shots, row, title, max_screenshots) + "</div>"
    )
