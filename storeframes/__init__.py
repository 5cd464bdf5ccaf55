"""storeframes: tidy polars DataFrames from a paid mobile app-store data service.

>>> import storeframes as sf
>>> client = sf.configure(sandbox=True)         # or set $STOREFRAMES_API_KEY and $STOREFRAMES_BASE_URL
>>> sf.metadata_frame(["3233849169", "361252007"]).select("app_id", "title")  # doctest: +SKIP
>>> sf.versions_frame(["3233849169", "361252007"])  # same cached answers: no credits  # doctest: +SKIP
"""

from . import catalog, sandbox, schemas
from ._version import __version__
from .answers import Answer, Part, Response
from .cache import Cache, CacheWarning
from .catalog import CostModel, Endpoint, Freshness
from .client import AppsUnavailableWarning, Client, Plan
from .defaults import (
    benchmarks_frame,
    changes_frame,
    configure,
    connect,
    default_client,
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
    version_changes_frame,
    versions_frame,
    videos_frame,
)
from .errors import (
    ApiError,
    AppNotAvailableError,
    AuthenticationError,
    BudgetExceededError,
    ConfigurationError,
    EstimatesNotInPlanError,
    ForbiddenError,
    InvalidParameterError,
    NotCachedError,
    NotEnoughCreditsError,
    RateLimitError,
    ResponseShapeError,
    ServerError,
    ServiceValidationError,
    StoreframesError,
    TransportError,
)
from .flatteners import ResultCapWarning, UnknownFieldWarning
from .ledger import LEDGER_SCHEMA
from .limiter import SlidingWindowLimiter
from .ranks import RANK_STATUSES, rank_history

__all__ = [
    "LEDGER_SCHEMA",
    "RANK_STATUSES",
    "Answer",
    "ApiError",
    "AppNotAvailableError",
    "AppsUnavailableWarning",
    "AuthenticationError",
    "BudgetExceededError",
    "Cache",
    "CacheWarning",
    "Client",
    "ConfigurationError",
    "CostModel",
    "Endpoint",
    "EstimatesNotInPlanError",
    "ForbiddenError",
    "Freshness",
    "InvalidParameterError",
    "NotCachedError",
    "NotEnoughCreditsError",
    "Part",
    "Plan",
    "RateLimitError",
    "Response",
    "ResponseShapeError",
    "ResultCapWarning",
    "ServerError",
    "ServiceValidationError",
    "SlidingWindowLimiter",
    "StoreframesError",
    "TransportError",
    "UnknownFieldWarning",
    "__version__",
    "benchmarks_frame",
    "catalog",
    "changes_frame",
    "configure",
    "connect",
    "default_client",
    "in_app_purchases_frame",
    "metadata_frame",
    "metrics_frame",
    "permissions_frame",
    "plan",
    "privacy_changes_frame",
    "rank_history",
    "related_apps_frame",
    "sandbox",
    "schemas",
    "screenshot_changes_frame",
    "screenshots_frame",
    "search_frame",
    "search_history_frame",
    "version_changes_frame",
    "versions_frame",
    "videos_frame",
]
