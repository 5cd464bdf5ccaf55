"""storeframes: tidy polars DataFrames from a paid mobile app-store data service.

Start with the built-in sandbox (a fake of the whole service: no token, nothing billed), or a token:

>>> import storeframes as sf
>>> client = sf.configure(sandbox=True)         # or set $STOREFRAMES_API_KEY and $STOREFRAMES_BASE_URL
>>> client.metadata_frame(["3233849169"])       # the same functions as methods of a client  # doctest: +SKIP
>>> sf.metadata_frame(["3233849169", "361252007"]).select("app_id", "title")  # doctest: +SKIP
>>> sf.versions_frame(["3233849169", "361252007"])  # same cached answers: no credits  # doctest: +SKIP
>>> sf.plan("metrics_frame", apps=["3233849169"])  # what a call sends and costs, nothing sent  # doctest: +SKIP

The main entry points (help(sf.NAME) documents one):

- Set up: configure (the default client: sandbox, token, budget, cache_dir), connect, Client, today;
  use (a workspace of storeframes.toml: its token, cache and month budget), load_workspaces, spend_report.
- The frame functions, one polars DataFrame each, also methods of a Client: metadata_frame,
  versions_frame, metrics_frame, changes_frame, version_changes_frame, screenshot_changes_frame,
  privacy_changes_frame, screenshots_frame, videos_frame, in_app_purchases_frame,
  permissions_frame, related_apps_frame, search_frame, search_history_frame, benchmarks_frame;
  then find_apps, rank_history, storeframes.analysis (share_of_voice, keyword_opportunities,
  rank_anomalies and the everyday questions), and to_pandas.
- Before spending: plan (a call's requests and credits, nothing sent), a client's budget, ledger
  and spend().
- What the cache keeps: Cache; scan, compact, snapshots, observed_changes; sql (DuckDB over it);
  publish and read_table (Delta Lake team tables); manifest and check_manifest.
- Tracking over time: Tracker, TrackerSpec and events; alerts and digests in storeframes.track.
- Charts and widgets: storeframes.plots and storeframes.widgets (the notebook extra).
- More: storeframes.sandbox, storeframes.schemas (every frame's columns), storeframes.catalog
  (the endpoints and their prices), storeframes.conformance, and the storeframes command
  (storeframes --help).
- Errors and warnings: storeframes.errors. Every error derives from StoreframesError, and each is
  importable from storeframes too (sf.BudgetExceededError); CacheWarning is in storeframes.cache,
  ResultCapWarning and UnknownFieldWarning in storeframes.flatteners.

The docs site (built from the repository's docs/ folder) has the guides, the how-tos and the full
reference: Start, Guides, How-to, Reference, Explanation, Examples and the Changelog.
"""

from typing import TYPE_CHECKING, Any

from . import analysis, catalog, errors, schemas
from ._version import __version__
from .analysis import keyword_opportunities, rank_anomalies, share_of_voice, standings, standings_table
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
    use,
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
from .workspaces import Workspace, load_workspaces, spend_report

__all__ = [
    "LEDGER_SCHEMA",
    "RANK_STATUSES",
    "Answer",
    "Cache",
    "Client",
    "Coordinator",
    "CostModel",
    "Endpoint",
    "Freshness",
    "LocalStore",
    "MemoryStore",
    "Part",
    "Plan",
    "Response",
    "Store",
    "Tracker",
    "TrackerSpec",
    "Workspace",
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
    "errors",
    "events",
    "find_apps",
    "in_app_purchases_frame",
    "keyword_opportunities",
    "load_workspaces",
    "manifest",
    "metadata_frame",
    "metrics_frame",
    "observed_changes",
    "permissions_frame",
    "plan",
    "privacy_changes_frame",
    "publish",
    "rank_anomalies",
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
    "share_of_voice",
    "snapshots",
    "spend_report",
    "sql",
    "standings",
    "standings_table",
    "to_pandas",
    "today",
    "use",
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
    package's internal modules and imports, and without the errors and warnings (``sf.errors.`` lists them)."""
    return sorted({*__all__, "__version__"})
