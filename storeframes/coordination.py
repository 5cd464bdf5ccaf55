"""Where the callers of one token meet: now :mod:`storeframes.coord` (this module keeps the old import path)."""

from __future__ import annotations

from .coord import ENV_COORDINATOR, ENV_STATE_DIR, Coordinator, masked, private_folder, state_dir, state_path, token_id
from .coord import coordinator_for as coordinator
from .coord.machine import MACHINE
from .coord.redis import SCHEMES as REDIS_SCHEMES
from .coord.redis import redis_installed
from .coord.state import ForkSafeLock

__all__ = [
    "ENV_COORDINATOR",
    "ENV_STATE_DIR",
    "MACHINE",
    "REDIS_SCHEMES",
    "Coordinator",
    "ForkSafeLock",
    "coordinator",
    "masked",
    "private_folder",
    "redis_installed",
    "state_dir",
    "state_path",
    "token_id",
]
