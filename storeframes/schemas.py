"""The declared schema of every frame storeframes returns.

Each frame function returns exactly the columns of its :class:`TableSchema`, in that order
and with those dtypes, whatever the store, and the same when the answer is empty. ``app_id``
is always a string, dates are ``pl.Date`` and timestamps ``pl.Datetime("us", "UTC")``.

>>> from storeframes.schemas import VERSIONS
>>> VERSIONS.schema["release_date"]
Datetime(time_unit='us', time_zone='UTC')
>>> VERSIONS.describe().columns
['column', 'dtype', 'description']
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl
from polars.datatypes import DataTypeClass

from .errors import cut, html_table, plural

__all__ = [
    "BENCHMARKS",
    "BENCHMARK_RATES",
    "CHANGES",
    "IN_APP_PURCHASES",
    "LISTS",
    "METADATA",
    "METRICS",
    "PERMISSIONS",
    "PRIVACY_CHANGES",
    "RANK_HISTORY",
    "RELATED_APPS",
    "SCHEMAS",
    "SCREENSHOTS",
    "SCREENSHOT_CHANGES",
    "SEARCH",
    "SEARCH_HISTORY",
    "SEARCH_LIST",
    "VERSIONS",
    "VERSION_CHANGES",
    "VIDEOS",
    "Column",
    "TableSchema",
    "read_schema",
]

UTC_TIMESTAMP = pl.Datetime("us", "UTC")
PRICE = pl.Decimal(38, 4)


@dataclass(frozen=True)
class Column:
    """One column of a frame: its name, dtype and meaning."""

    name: str
    dtype: pl.DataType
    doc: str


@dataclass(frozen=True)
class TableSchema:
    """A frame's declared columns; ``schema`` is the ``pl.Schema`` every such frame has."""

    name: str
    doc: str
    columns: tuple[Column, ...]

    @property
    def schema(self) -> pl.Schema:
        return pl.Schema({c.name: c.dtype for c in self.columns})

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def empty(self) -> pl.DataFrame:
        """A frame with no rows and this schema."""
        return pl.DataFrame(schema=self.schema)

    def describe(self) -> pl.DataFrame:
        """The columns as a frame: column, dtype, description."""
        return pl.DataFrame(
            {
                "column": [c.name for c in self.columns],
                "dtype": [dtype_name(c.dtype) for c in self.columns],
                "description": [c.doc for c in self.columns],
            }
        )

    def __repr__(self) -> str:
        names = ", ".join(self.names)
        return f"TableSchema({self.name}: {cut(self.doc, 70)}; {plural(len(self.columns), 'column')}: {cut(names, 80)})"

    def _repr_html_(self) -> str:
        rows = [(c.name, dtype_name(c.dtype), c.doc) for c in self.columns]
        return html_table(f"{self.name}: {self.doc}", ("column", "dtype", "description"), rows)

    def docstring(self) -> str:
        """The schema as the text block the frame functions' docstrings end with."""
        width = max(len(c.name) for c in self.columns)
        kinds = max(len(dtype_name(c.dtype)) for c in self.columns)
        lines = [f"Output schema ({self.name}: {self.doc}):", ""]
        lines += [f"    {c.name:<{width}}  {dtype_name(c.dtype):<{kinds}}  {c.doc}" for c in self.columns]
        return "\n".join(lines)


def dtype_name(dtype: pl.DataType | DataTypeClass) -> str:
    """A dtype as polars prints it in a frame's header: ``str``, ``i64``, ``datetime[μs, UTC]`` ...

    Takes a dtype class as well as an instance: a list's ``inner`` is the class ``pl.String``
    when the list was declared as ``pl.List(pl.String)``.
    """
    if isinstance(dtype, pl.List):
        return f"list[{dtype_name(dtype.inner)}]"
    if isinstance(dtype, pl.Datetime):
        zone = f", {dtype.time_zone}" if dtype.time_zone else ""
        return f"datetime[{dtype.time_unit}{zone}]"
    if isinstance(dtype, pl.Decimal):
        return f"decimal[{dtype.precision},{dtype.scale}]"
    names = {pl.String: "str", pl.Int64: "i64", pl.Float64: "f64", pl.Boolean: "bool", pl.Date: "date"}
    return next((name for kind, name in names.items() if dtype == kind), str(dtype))


def _table(name: str, doc: str, *columns: Column) -> TableSchema:
    return TableSchema(name, doc, columns)


_APP_KEYS = (
    Column("app_id", pl.String(), "the app's id: numeric text (iphone/ipad) or a package name (android)"),
    Column("country", pl.String(), "two-letter country code of the request"),
    Column("language", pl.String(), "two-letter language code the service answered in"),
    Column("device", pl.String(), "iphone, ipad or android"),
    Column("fetched_at", UTC_TIMESTAMP, "when the answer was fetched from the service"),
)
_POSITION = "1 for the first item of the list, as the store orders it"

METADATA = _table(
    "metadata",
    "one row per app",
    *_APP_KEYS,
    Column("title", pl.String(), "the app's name"),
    Column("subtitle", pl.String(), "iphone/ipad subtitle"),
    Column("promotional_text", pl.String(), "iphone/ipad promotional text"),
    Column("description", pl.String(), "iphone/ipad description, plain text with line breaks"),
    Column("short_description", pl.String(), "android short description"),
    Column("long_description", pl.String(), "android long description as sent: HTML line breaks, tags and entities"),
    Column("long_description_text", pl.String(), "long_description as plain text: line breaks kept, tags removed"),
    Column("developer_id", pl.String(), "the developer's id (numeric text on iphone/ipad)"),
    Column("developer_name", pl.String(), "the developer's name"),
    Column("developer_email", pl.String(), "android developer e-mail"),
    Column("developer_website", pl.String(), "android developer website"),
    Column("price", pl.String(), "the price as the store sent it: empty for a free app; null when the answer has none"),
    Column(
        "price_value",
        PRICE,
        "price as a decimal number: 0 for a free app (an empty price, or Free); "
        "null when not known (no price in the answer, or a text that is not a number)",
    ),
    Column("size_bytes", pl.Int64(), "download size in bytes"),
    Column("rating_average", pl.Float64(), "average star rating"),
    Column("release_date", UTC_TIMESTAMP, "first release"),
    Column("released_at", pl.String(), "android released_at as sent (JSON text when not a string)"),
    Column("version", pl.String(), "the newest version"),
    Column("version_release_date", UTC_TIMESTAMP, "release of the newest version"),
    Column("dna_class_id", pl.Int64(), "app DNA class id"),
    Column("dna_class_label", pl.String(), "app DNA class label"),
    Column("dna_subclass_id", pl.Int64(), "app DNA subclass id"),
    Column("dna_subclass_label", pl.String(), "app DNA subclass label"),
    Column("feature_game_center", pl.Boolean(), "iphone/ipad: supports Game Center"),
    Column("feature_passbook", pl.Boolean(), "iphone/ipad: supports Wallet passes"),
    Column("feature_in_apps", pl.Boolean(), "iphone/ipad: has in-app purchases"),
    Column("icon_url", pl.String(), "URL of the icon"),
    Column("categories", pl.List(pl.String()), "category codes as text (from categories or genres)"),
    Column("versions_count", pl.Int64(), "versions listed (see versions_frame)"),
    Column("screenshots_count", pl.Int64(), "screenshots over all device keys (see screenshots_frame)"),
    Column("videos_count", pl.Int64(), "videos over all device keys (see videos_frame)"),
    Column("in_app_purchases_count", pl.Int64(), "in-app purchases listed (see in_app_purchases_frame)"),
)

VERSIONS = _table(
    "versions",
    "one row per app and version, newest first",
    *_APP_KEYS,
    Column("position", pl.Int64(), "1 for the newest version"),
    Column("version", pl.String(), "version label"),
    Column("release_date", UTC_TIMESTAMP, "when the version was released"),
    Column("release_notes", pl.String(), "release notes as sent (android notes may hold HTML)"),
    Column("has_game_center", pl.Boolean(), "iphone/ipad"),
    Column("controller_required", pl.Boolean(), "iphone/ipad: a game controller is required"),
    Column("controller_supported", pl.Boolean(), "iphone/ipad: game controllers are supported"),
    Column("controller_requirement_label", pl.String(), "iphone/ipad: the store's controller label"),
)

SCREENSHOTS = _table(
    "screenshots",
    "one row per screenshot",
    *_APP_KEYS,
    Column(
        "device_key",
        pl.String(),
        "the answer's device key (iphone_6_5, ipadPro ...); for a flat list, the request's device",
    ),
    Column("position", pl.Int64(), _POSITION + ", within the device key"),
    Column("url", pl.String(), "image URL"),
    Column("screenshot_id", pl.String(), "screenshot id, where given"),
    Column("hash", pl.String(), "image hash, where given"),
    Column("filename", pl.String(), "file name, where given"),
    Column("path_component", pl.String(), "path component, where given"),
)

VIDEOS = _table(
    "videos",
    "one row per preview video",
    *_APP_KEYS,
    Column("device_key", pl.String(), "the answer's device key; for a flat list, the request's device"),
    Column("position", pl.Int64(), _POSITION + ", within the device key"),
    Column("url", pl.String(), "video URL (uri on iphone/ipad)"),
    Column("audio", pl.String(), "audio codec, where given"),
    Column("width", pl.Int64(), "pixels, where given"),
    Column("height", pl.Int64(), "pixels, where given"),
    Column("codecs", pl.String(), "codecs, where given"),
)

IN_APP_PURCHASES = _table(
    "in_app_purchases",
    "one row per in-app purchase (iphone/ipad)",
    *_APP_KEYS,
    Column("rank", pl.Int64(), "the store's rank of the purchase"),
    Column("purchase_id", pl.Int64(), "the purchase's id"),
    Column("name", pl.String(), "name"),
    Column("description", pl.String(), "description"),
    Column("price", PRICE, "price as a decimal number"),
    Column("currency", pl.String(), "lower-case currency code of the price"),
    Column("is_subscription", pl.Boolean(), "a subscription"),
    Column("recurring_subscription_period", pl.String(), "ISO 8601 duration such as P1M"),
    Column("subscription_family_name", pl.String(), "subscription group"),
    Column("is_family_shareable", pl.Boolean(), "family sharing"),
    Column("is_merchandise_enabled", pl.Boolean(), "promoted in the store"),
    Column("is_merchandise_visible", pl.Boolean(), "promotion visible"),
    Column("artwork", pl.String(), "artwork as JSON text, null when absent"),
    Column("discounts", pl.String(), "discounts as JSON text, null when absent"),
)

RELATED_APPS = _table(
    "related_apps",
    "one row per related app",
    *_APP_KEYS,
    Column("relation", pl.String(), "customers_also_bought (iphone/ipad) or similar_apps (android)"),
    Column("position", pl.Int64(), _POSITION),
    Column("related_app_id", pl.String(), "the related app's id"),
)

PERMISSIONS = _table(
    "permissions",
    "one row per permission an android app asks for",
    *_APP_KEYS,
    Column("position", pl.Int64(), _POSITION),
    Column("permission", pl.String(), "permission identifier"),
)

METRICS = _table(
    "metrics",
    "one row per app and metric",
    _APP_KEYS[0],
    _APP_KEYS[1],
    _APP_KEYS[3],
    _APP_KEYS[4],
    Column("metric", pl.String(), "downloads, revenues, app-power, ratings or daily-ratings"),
    Column("value", pl.Float64(), "the estimate; null when the service has none"),
    Column("precision", pl.Float64(), "precision of the estimate, where given"),
    Column("currency", pl.String(), "currency of revenues"),
    Column("date", pl.Date(), "the day the value describes"),
    Column("stars_1", pl.Int64(), "ratings breakdown: one-star ratings"),
    Column("stars_2", pl.Int64(), "ratings breakdown: two-star ratings"),
    Column("stars_3", pl.Int64(), "ratings breakdown: three-star ratings"),
    Column("stars_4", pl.Int64(), "ratings breakdown: four-star ratings"),
    Column("stars_5", pl.Int64(), "ratings breakdown: five-star ratings"),
    Column("ratings_total", pl.Int64(), "ratings breakdown: total"),
    Column("ratings_average", pl.Float64(), "ratings breakdown: average"),
)

_CHANGE_DATE = Column("date", pl.Date(), "the day of the change")
_CHANGE_VERSION = Column("version", pl.String(), "the app version tied to the change; null when the service names none")
_AB_TEST = Column("is_ab_test", pl.Boolean(), "the change is an A/B test; null when the service does not say")

CHANGES = _table(
    "changes",
    "one row per metadata change, oldest first",
    *_APP_KEYS,
    _CHANGE_DATE,
    Column("target", pl.String(), "what changed: version, size, icon, screenshots, privacy_info, long_description ..."),
    _CHANGE_VERSION,
    Column("version_raw", pl.String(), "version as sent, including '' and the service's 'no related version' text"),
    _AB_TEST,
    Column("old_value", pl.String(), "value before: text as is, integers as digits, objects and arrays as JSON"),
    Column("new_value", pl.String(), "value after, as old_value"),
    Column("old_release_notes", pl.String(), "version changes: release notes before"),
    Column("new_release_notes", pl.String(), "version changes: release notes after"),
    Column("old_size", pl.Int64(), "size changes: bytes before"),
    Column("new_size", pl.Int64(), "size changes: bytes after"),
    Column("old_icon_url", pl.String(), "icon changes: URL of the icon before"),
    Column("new_icon_url", pl.String(), "icon changes: URL of the icon after"),
)

PRIVACY_CHANGES = _table(
    "privacy_changes",
    "one row per privacy_info change, section and data type",
    *_APP_KEYS,
    _CHANGE_DATE,
    _CHANGE_VERSION,
    _AB_TEST,
    Column("section", pl.String(), "DATA_LINKED_TO_YOU, DATA_NOT_LINKED_TO_YOU or DATA_USED_TO_TRACK_YOU"),
    Column("data_type", pl.String(), "the data type: PURCHASES, LOCATION, CONTACT_INFO, USAGE_DATA ..."),
    Column("status", pl.String(), "added, removed or kept between the old and the new labels"),
)

SCREENSHOT_CHANGES = _table(
    "screenshot_changes",
    "one row per screenshot on each side of a screenshots change",
    *_APP_KEYS,
    _CHANGE_DATE,
    _CHANGE_VERSION,
    _AB_TEST,
    Column("side", pl.String(), "old (before the change) or new (after it)"),
    Column("position", pl.Int64(), _POSITION + ", on its side"),
    Column("screenshot_id", pl.String(), "the screenshot's id, where given"),
    Column("url", pl.String(), "image URL"),
    Column("path_component", pl.String(), "path component of the URL"),
    Column("filename", pl.String(), "file name (iphone/ipad; android gives none)"),
    Column("status", pl.String(), "added, removed or kept, by screenshot id (by URL where there is no id)"),
)

VERSION_CHANGES = _table(
    "version_changes",
    "one row per version change, with the release notes before and after",
    *_APP_KEYS,
    _CHANGE_DATE,
    Column("old_version", pl.String(), "the version before"),
    Column("new_version", pl.String(), "the version after"),
    Column("old_release_notes", pl.String(), "release notes of the version before, as sent"),
    Column("new_release_notes", pl.String(), "release notes of the new version, as sent"),
    _AB_TEST,
)

_KEYWORD = Column("keyword", pl.String(), "the keyword searched, as sent (runs of spaces made one)")
_SEARCH_KEYS = (
    _APP_KEYS[1],
    _APP_KEYS[2],
    _APP_KEYS[3],
)
_RANK = Column("rank", pl.Int64(), "1 for the top result; the place in the list as the store showed it")

SEARCH = _table(
    "search",
    "one row per keyword and result of a live search",
    _KEYWORD,
    Column("date", pl.Date(), "the day the search ran (as the service dates it, else the UTC day of the fetch)"),
    _RANK,
    _APP_KEYS[0],
    Column("is_ad", pl.Boolean(), "a paid ad placement (with ads=True); False for an organic result"),
    Column("organic_rank", pl.Int64(), "the rank among organic results only; null for an ad"),
    *_SEARCH_KEYS,
    _APP_KEYS[4],
)

SEARCH_HISTORY = _table(
    "search_history",
    "one row per keyword, day and result",
    _KEYWORD,
    Column("date", pl.Date(), "the day the search was recorded"),
    _RANK,
    _APP_KEYS[0],
    Column(
        "source",
        pl.String(),
        "history (a recorded day) or live (today, which the service may fill with a live search, at most 250)",
    ),
    *_SEARCH_KEYS,
    _APP_KEYS[4],
)

_RATE = "percent; null when too few apps have data"

BENCHMARKS = _table(
    "benchmarks",
    "one row per country, device, type, channel and category",
    _APP_KEYS[1],
    Column("device", pl.String(), "iphone or android"),
    Column("type", pl.String(), "free or paid"),
    Column(
        "channel",
        pl.String(),
        "all, search, browse, appref, webref (iphone); all, search, explore, referrals (android)",
    ),
    Column("start_date", pl.Date(), "first day of the range the rates average over"),
    Column("end_date", pl.Date(), "last day of the range"),
    Column("category", pl.String(), "category code: numeric text (iphone) or an upper-case name (android)"),
    Column("category_name", pl.String(), "the category's name"),
    Column("impressions_to_page_views", pl.Float64(), "click-through rate, " + _RATE + " (iphone all/search/browse)"),
    Column("page_views_to_installs", pl.Float64(), "conversion rate, " + _RATE + "; can exceed 100"),
    Column("impressions_to_installs", pl.Float64(), "impressions rate, " + _RATE + " (iphone all/search/browse)"),
    Column("number_of_apps", pl.Float64(), "average number of apps with data in the range; null when unknown"),
    _APP_KEYS[4],
)

BENCHMARK_RATES: tuple[str, ...] = tuple(name for name in BENCHMARKS.names if "_to_" in name)
"""The three conversion rates of :data:`BENCHMARKS`, in percent, in its order."""

RANK_HISTORY = _table(
    "rank_history",
    "one row per keyword, app and day",
    _KEYWORD,
    _APP_KEYS[0],
    Column("date", pl.Date(), "the day"),
    Column("rank", pl.Int64(), "the app's best organic rank that day; null unless status is ranked"),
    Column(
        "status",
        pl.String(),
        "ranked; not_ranked (the day has results, the app is not among them); no_data (no results that day); "
        "not_fetched (the day was never asked for, with rank_history's fetched=)",
    ),
    Column("results", pl.Int64(), "how many organic results the day has; null when status is no_data"),
    *_SEARCH_KEYS,
)

SEARCH_LIST = Column(
    "list",
    pl.String(),
    "which list of the live search the row is of: organic (the search, ads left out) or with_ads (the search "
    "with ads, where rank counts the ads); a keyword followed both ways has both lists a day",
)
"""The column a table of the live search read from a cache has last (:func:`storeframes.scan`,
:func:`storeframes.snapshots`, :func:`storeframes.sql`, the lake's ``search`` and ``search_snapshots``):
a cache holds the answers of both searches side by side, and ``rank`` means one thing within one list."""

LISTS: dict[str, str] = {"search": "organic", "search_ads": "with_ads"}
"""The :data:`SEARCH_LIST` value of the rows of each live search endpoint's answers."""

_READ_COLUMNS: dict[str, tuple[Column, ...]] = {"search": (SEARCH_LIST,)}


def read_schema(table: TableSchema) -> TableSchema:
    """The columns of ``table`` read from a cache: the frame function's, then those that tell apart the
    endpoints a cache holds side by side (``list`` for the search table).

    >>> read_schema(SEARCH).names[-1]
    'list'
    >>> read_schema(METRICS) == METRICS
    True
    """
    extra = _READ_COLUMNS.get(table.name, ())
    return TableSchema(table.name, table.doc, table.columns + extra) if extra else table


SCHEMAS: dict[str, TableSchema] = {
    t.name: t
    for t in (
        METADATA,
        VERSIONS,
        SCREENSHOTS,
        VIDEOS,
        IN_APP_PURCHASES,
        RELATED_APPS,
        PERMISSIONS,
        METRICS,
        CHANGES,
        PRIVACY_CHANGES,
        SCREENSHOT_CHANGES,
        VERSION_CHANGES,
        SEARCH,
        SEARCH_HISTORY,
        BENCHMARKS,
        RANK_HISTORY,
    )
}
