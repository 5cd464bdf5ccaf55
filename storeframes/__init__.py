"""storeframes: tidy polars DataFrames from a paid mobile app-store data service.

>>> import storeframes as sf
>>> client = sf.configure(sandbox=True)         # or set $STOREFRAMES_API_KEY and $STOREFRAMES_BASE_URL
>>> client.metadata_frame(["3233849169"])       # the same functions as methods of a client  # doctest: +SKIP
>>> sf.metadata_frame(["3233849169", "361252007"]).select("app_id", "title")  # doctest: +SKIP
>>> sf.versions_frame(["3233849169", "361252007"])  # same cached answers: no credits  # doctest: +SKIP
"""

from typing import TYPE_CHECKING, Any

from . import analysis, catalog, schemas
from ._version import __version__
from .answers import Answer, Part, Response
from .cache import Cache, CacheWarning
from .cache.stores import LocalStore, MemoryStore, Store
from .catalog import CostModel, Endpoint, Freshness
from .client import Client
from .coord import Coordinator
from .defaults import (
    benchmarks_frame,
    changes_frame,
    configure,
    connect,
    default_client,
    find_apps,
    in_app_purchases_frame,
    metadata_frame,
    metrics_frame,
    permissions_frame,
    plan,
    privacy_changes_frame,
    related_apps_frame,
    screenshot_changes_frame,
    screenshots_frame,
    search_frame,
    search_history_frame,
    today,
    version_changes_frame,
    versions_frame,
    videos_frame,
)
from .engine import Plan
from .errors import (
    AnswerWarning,
    ApiError,
    AppNotAvailableError,
    AppsUnavailableWarning,
    AuthenticationError,
    BudgetExceededError,
    CacheUnavailableError,
    ConfigurationError,
    CoordinationError,
    CoordinationMismatchError,
    CostWarning,
    DigestNotKeptError,
    EstimatesNotInPlanError,
    ForbiddenError,
    ForkedProcessError,
    InvalidParameterError,
    LakeError,
    NoCacheError,
    NotCachedError,
    NotEnoughCreditsError,
    RateLimitError,
    RedirectError,
    ResponseShapeError,
    ResponseTooLargeError,
    ServerError,
    ServiceValidationError,
    StoreframesError,
    TransportError,
)
from .flatteners import ResultCapWarning, UnknownFieldWarning
from .interop import to_pandas
from .kept.observed import observed_changes
from .kept.scan import compact, scan
from .kept.snapshots import snapshots
from .lake import check_manifest, manifest, publish, read_table, sql
from .ledger import LEDGER_SCHEMA
from .ranks import RANK_STATUSES, rank_history
from .track import Tracker, TrackerSpec, events

__all__ = [
    "LEDGER_SCHEMA",
    "RANK_STATUSES",
    "Answer",
    "AnswerWarning",
    "ApiError",
    "AppNotAvailableError",
    "AppsUnavailableWarning",
    "AuthenticationError",
    "BudgetExceededError",
    "Cache",
    "CacheUnavailableError",
    "CacheWarning",
    "Client",
    "ConfigurationError",
    "CoordinationError",
    "CoordinationMismatchError",
    "Coordinator",
    "CostModel",
    "CostWarning",
    "DigestNotKeptError",
    "Endpoint",
    "EstimatesNotInPlanError",
    "ForbiddenError",
    "ForkedProcessError",
    "Freshness",
    "InvalidParameterError",
    "LakeError",
    "LocalStore",
    "MemoryStore",
    "NoCacheError",
    "NotCachedError",
    "NotEnoughCreditsError",
    "Part",
    "Plan",
    "RateLimitError",
    "RedirectError",
    "Response",
    "ResponseShapeError",
    "ResponseTooLargeError",
    "ResultCapWarning",
    "ServerError",
    "ServiceValidationError",
    "Store",
    "StoreframesError",
    "Tracker",
    "TrackerSpec",
    "TransportError",
    "UnknownFieldWarning",
    "__version__",
    "analysis",
    "benchmarks_frame",
    "catalog",
    "changes_frame",
    "check_manifest",
    "compact",
    "configure",
    "conformance",
    "connect",
    "default_client",
    "events",
    "find_apps",
    "in_app_purchases_frame",
    "manifest",
    "metadata_frame",
    "metrics_frame",
    "observed_changes",
    "permissions_frame",
    "plan",
    "privacy_changes_frame",
    "publish",
    "rank_history",
    "read_table",
    "related_apps_frame",
    "sandbox",
    "scan",
    "schemas",
    "screenshot_changes_frame",
    "screenshots_frame",
    "search_frame",
    "search_history_frame",
    "snapshots",
    "sql",
    "to_pandas",
    "today",
    "version_changes_frame",
    "versions_frame",
    "videos_frame",
]

if TYPE_CHECKING:
    from . import conformance, sandbox


def __getattr__(name: str) -> Any:
    """``storeframes.sandbox`` and ``storeframes.conformance`` are imported when first used, not with the package."""
    if name in ("sandbox", "conformance"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public API (:data:`__all__`) and ``__version__``: what tab completion in a notebook lists, without the
    package's internal modules and imports."""
    return sorted({*__all__, "__version__"})
