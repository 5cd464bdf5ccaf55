"""storeframes: tidy polars DataFrames from a paid mobile app-store data service.

>>> import storeframes as sf
>>> client = sf.Client.sandbox()                      # or sf.Client() with a real token
>>> client.get("metadata", apps=["284882215"]).cost  # doctest: +SKIP
11
"""

from . import catalog, sandbox
from ._version import __version__
from .answers import Answer, Part, Response
from .cache import Cache, CacheWarning
from .catalog import CostModel, Endpoint, Freshness
from .client import AppsUnavailableWarning, Client, Plan
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
from .ledger import LEDGER_SCHEMA
from .limiter import SlidingWindowLimiter

__all__ = [
    "LEDGER_SCHEMA",
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
    "ServerError",
    "ServiceValidationError",
    "SlidingWindowLimiter",
    "StoreframesError",
    "TransportError",
    "__version__",
    "catalog",
    "sandbox",
]
