"""Leases for single flight: now :mod:`storeframes.coord.leases` and the backends' modules
(:mod:`storeframes.coord.machine`, :mod:`storeframes.coord.redis`); this module keeps the old import path."""

from __future__ import annotations

from .coord.file_leases import FileLeases
from .coord.leases import WAIT_LIMIT, Held, Leases, Remote, leases_for, machine
from .coord.leases import digest as _digest
from .coord.redis import RedisLeases

__all__ = ["WAIT_LIMIT", "FileLeases", "Held", "Leases", "RedisLeases", "Remote", "_digest", "leases_for", "machine"]
