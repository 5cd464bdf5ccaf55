"""Flatteners: pure functions from a parsed answer's ``result`` to a frame of a declared schema.

They do no I/O, so they are easy to test and to time. The frame functions
(:mod:`storeframes.frames`) call them on each cached or fetched answer.
"""

from ._columns import Keys, UnknownFieldWarning, html_to_text
from .metadata import (
    flatten_in_app_purchases,
    flatten_metadata,
    flatten_permissions,
    flatten_related_apps,
    flatten_screenshots,
    flatten_versions,
    flatten_videos,
)
from .metrics import flatten_metrics

__all__ = [
    "Keys",
    "UnknownFieldWarning",
    "flatten_in_app_purchases",
    "flatten_metadata",
    "flatten_metrics",
    "flatten_permissions",
    "flatten_related_apps",
    "flatten_screenshots",
    "flatten_versions",
    "flatten_videos",
    "html_to_text",
]
