"""Where the callers of one token meet: this machine (the default) or a Redis server.

The service counts requests per token, whoever sends them. Every
:class:`~storeframes.Client` of one token therefore shares one rate window
(:mod:`storeframes.coord.window`) and, per cache, one set of leases
(:mod:`storeframes.coord.leases`), and a :class:`Coordinator` says how far that sharing
reaches; :func:`coordinator_for` is the one place that picks it:

- ``Coordinator()`` (``"machine"``, the default; :mod:`storeframes.coord.machine`): the
  threads and processes of this machine, through a small SQLite file in :func:`state_dir`.
  The leases of a cache follow what its store declares: lock files in a folder, objects
  of a bucket (:mod:`storeframes.coord.bucket_leases`), or the process's own;
- ``Coordinator("redis://host:6379/0")`` (or ``rediss://``, ``unix://``;
  :mod:`storeframes.coord.redis`): every machine that names the same Redis server
  (the ``redis`` extra: ``pip install ".[redis]"`` from a checkout), which keeps the window and the leases.

Every member of a team must coordinate alike: the first that fetches into a shared cache records
its coordination in the cache, and a member whose coordination differs is refused before it sends
(:mod:`storeframes.coord.team`).

``$STOREFRAMES_COORDINATOR`` sets the default. The token itself is never written down:
what is shared is named by :func:`token_id`, a keyed hash of the token and base URL.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from ..errors import ConfigurationError
from .base import Coordinator
from .leases import WAIT_LIMIT, Held, LeaseLost, Leases, Remote, holding, leases_for
from .machine import MACHINE, MachineCoordinator
from .redis import SCHEMES, RedisCoordinator
from .state import ENV_COORDINATOR, ENV_STATE_DIR, masked, private_folder, state_dir, state_path, token_id
from .team import coordination_of
from .team import record as record_coordination
from .window import Limiter, SharedLimiter

__all__ = [
    "ENV_COORDINATOR",
    "ENV_STATE_DIR",
    "WAIT_LIMIT",
    "Coordinator",
    "Held",
    "LeaseLost",
    "Leases",
    "Limiter",
    "Remote",
    "SharedLimiter",
    "coordination_of",
    "coordinator_for",
    "holding",
    "leases_for",
    "masked",
    "private_folder",
    "record_coordination",
    "state_dir",
    "state_path",
    "token_id",
]

_ALLOWED = "'machine' or a Redis URL (redis://, rediss://, unix://)"


def coordinator_for(spec: str | Coordinator | None = None) -> Coordinator:
    """The :class:`Coordinator` ``spec`` names: ``"machine"``, a Redis URL, or ``$STOREFRAMES_COORDINATOR`` when None.

    A Redis URL gives the Redis server's coordinator (its window and leases are Redis
    keys); anything else allowed gives this machine's, whose leases follow what each
    cache's store declares (:meth:`Coordinator.leases`). A :class:`Coordinator` is taken
    as it is.

    >>> coordinator_for("machine")
    Coordinator(machine)
    """
    if isinstance(spec, Coordinator):
        return spec
    origin = "coordinator"
    if spec is None:
        spec = os.environ.get(ENV_COORDINATOR, "").strip()
        if not spec:
            return MachineCoordinator()
        origin = f"${ENV_COORDINATOR}"
    if not isinstance(spec, str):
        raise ConfigurationError(f"coordinator must be {_ALLOWED} or a Coordinator, got a {type(spec).__name__}")
    text = spec.strip()
    if text.lower() == MACHINE:
        return MachineCoordinator()
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError:
        raise ConfigurationError(f"{origin} must be {_ALLOWED}, got {_shown(text)}") from None
    if parts.scheme.lower() not in SCHEMES:
        raise ConfigurationError(f"{origin} must be {_ALLOWED}, got {_shown(text)}")
    if parts.scheme.lower() == "unix" and not parts.path:
        raise ConfigurationError(f"{origin} {masked(text)!r} names no socket path (unix:///path/to/redis.sock)")
    return RedisCoordinator(text)


def _shown(text: str) -> str:
    """A refused coordinator as a message may show it: a URL with its password masked, else not at all."""
    return repr(masked(text)) if "://" in text else "a text that is not a URL (not shown: it may be a secret)"
