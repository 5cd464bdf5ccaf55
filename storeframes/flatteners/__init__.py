"""Flatteners: pure functions from a parsed answer's ``result`` to a frame of a declared schema.

They do no I/O, so they are easy to test and to time. ``flatten_*`` takes one answer;
``batch_*`` takes several, ``[(result, keys), ...]``, and also returns each answer's number
of rows. The frame functions
(:mod:`storeframes.frames`) call them on each cached or fetched answer.
"""

from ._columns import Answers, Flat, Keys, UnknownFieldWarning, html_to_text
from .benchmarks import batch_benchmarks, flatten_benchmarks
from .changes import (
    batch_changes,
    batch_privacy_changes,
    batch_screenshot_changes,
    batch_version_changes,
    flatten_changes,
    flatten_privacy_changes,
    flatten_screenshot_changes,
    flatten_version_changes,
)
from .metadata import (
    batch_in_app_purchases,
    batch_metadata,
    batch_permissions,
    batch_related_apps,
    batch_screenshots,
    batch_versions,
    batch_videos,
    flatten_in_app_purchases,
    flatten_metadata,
    flatten_permissions,
    flatten_related_apps,
    flatten_screenshots,
    flatten_versions,
    flatten_videos,
)
from .metrics import batch_metrics, flatten_metrics
from .search import ResultCapWarning, batch_search, batch_search_history, flatten_search, flatten_search_history

__all__ = [
    "Answers",
    "Flat",
    "Keys",
    "ResultCapWarning",
    "UnknownFieldWarning",
    "batch_benchmarks",
    "batch_changes",
    "batch_in_app_purchases",
    "batch_metadata",
    "batch_metrics",
    "batch_permissions",
    "batch_privacy_changes",
    "batch_related_apps",
    "batch_screenshot_changes",
    "batch_screenshots",
    "batch_search",
    "batch_search_history",
    "batch_version_changes",
    "batch_versions",
    "batch_videos",
    "flatten_benchmarks",
    "flatten_changes",
    "flatten_in_app_purchases",
    "flatten_metadata",
    "flatten_metrics",
    "flatten_permissions",
    "flatten_privacy_changes",
    "flatten_related_apps",
    "flatten_screenshot_changes",
    "flatten_screenshots",
    "flatten_search",
    "flatten_search_history",
    "flatten_version_changes",
    "flatten_versions",
    "flatten_videos",
    "html_to_text",
]
