"""Workspaces: the named clients of an agency or a team, each with its own token, cache, ledger and month budget.

They are read from ``storeframes.toml`` (:mod:`.config`); the month's spend of each is shown beside its budget
(:mod:`.spend`). Workspaces on one token share its one rate window (the coordinator's); each keeps its own
cache, and its month budget holds for every caller (:mod:`storeframes.fetch.month_budget`).
"""

from .config import (
    CONFIG_NAME,
    ENV_CONFIG,
    ENV_WORKSPACE,
    Workspace,
    WorkspaceFileError,
    client_parts,
    config_path,
    load_workspaces,
    workspace,
)
from .spend import SPEND_REPORT_SCHEMA, month_of, spend_report

__all__ = [
    "CONFIG_NAME",
    "ENV_CONFIG",
    "ENV_WORKSPACE",
    "SPEND_REPORT_SCHEMA",
    "Workspace",
    "WorkspaceFileError",
    "client_parts",
    "config_path",
    "load_workspaces",
    "month_of",
    "spend_report",
    "workspace",
]
