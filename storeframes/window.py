"""The token's shared rate window: now :mod:`storeframes.coord.window` and the backends' modules
(:mod:`storeframes.coord.machine`, :mod:`storeframes.coord.redis`); this module keeps the old import path."""

from __future__ import annotations

from .coord.base import shared_limiter
from .coord.machine import BUSY_TIMEOUT, STATE_FILE, _SqliteSlots
from .coord.redis import _RedisSlots
from .coord.window import KEEP, Limiter, SharedLimiter
from .coord.window import OwnWindow as _OwnWindow
from .coord.window import ProcessWindow as _ProcessWindow

__all__ = [
    "BUSY_TIMEOUT",
    "KEEP",
    "STATE_FILE",
    "Limiter",
    "SharedLimiter",
    "_OwnWindow",
    "_ProcessWindow",
    "_RedisSlots",
    "_SqliteSlots",
    "shared_limiter",
]
