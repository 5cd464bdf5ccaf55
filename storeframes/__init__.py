"""storeframes: tidy polars DataFrames from a paid mobile app-store data service.

>>> import storeframes as sf
>>> client = sf.Client.sandbox()                      # or sf.Client() with a real token
>>> client.get("metadata", apps=["284882215"]).cost  # doctest: +SKIP
11
"""

from . import catalog, sandbox
from ._version import __version__
from .catalog import CostModel, Endpoint
from .client import LEDGER_SCHEMA, Answer, AppsUnavailableWarning, Client, Response
from .errors import (
    ApiError,
    AppNotAvailableError,
    AuthenticationError,
    BudgetExceededError,
    ConfigurationError,
    EstimatesNotInPlanError,
    ForbiddenError,
    InvalidParameterError,
    NotEnoughCreditsError,
    RateLimitError,
    ResponseShapeError,
    ServerError,
    ServiceValidationError,
    StoreframesError,
    TransportError,
)
from .limiter import SlidingWindowLimiter

__all__ = [
    "LEDGER_SCHEMA",
    "Answer",
    "ApiError",
    "AppNotAvailableError",
    "AppsUnavailableWarning",
    "AuthenticationError",
    "BudgetExceededError",
    "Client",
    "ConfigurationError",
    "CostModel",
    "Endpoint",
    "EstimatesNotInPlanError",
    "ForbiddenError",
    "InvalidParameterError",
    "NotEnoughCreditsError",
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
