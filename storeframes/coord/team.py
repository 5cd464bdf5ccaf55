"""A team's members agree on how they coordinate before one of them fetches into their shared cache.

Every member of a team must share the token's one rate window and the cache's one set of leases. A
member that coordinates differently (without ``$STOREFRAMES_COORDINATOR`` beside members that set
it, or naming another Redis server) would count its requests in a window of its own and take leases
the others never see: the limit tripped, cells paid twice. So the coordination is recorded in the
cache (:mod:`storeframes.cache.coordination_record`) by the first member that fetches into it, and a member whose
coordination differs is refused with a :class:`~storeframes.CoordinationMismatchError` before it
sends anything (:func:`agree`, called when a client first needs the cache's leases).

Refused, never joined: a member without ``$STOREFRAMES_COORDINATOR`` cannot join a team that
coordinates through Redis (it does not have the server's password, which is never recorded), and a
member with Redis joining a team without it would split that team's window on its own machine. The
message names what the team uses, what this member uses and what to set. Reading what is cached
(offline, or nothing missing) needs no agreement. A team that changes its coordination on purpose
records the new one: ``storeframes cache coordination --record`` (run where the new setting is), or
:func:`record`.

What a member's coordination is (:func:`coordination_of`): ``redis`` and the server's address without
user or password, when its coordinator is a Redis server; else ``machine`` on a folder (the machine's
window, lock files in the folder) or ``bucket-objects`` on a bucket (each machine's own window, the
bucket's lease objects).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol
from urllib.parse import parse_qs, urlsplit

from ..cache.coordination_record import Coordination
from ..cache.files import CacheWarning
from ..errors import CoordinationMismatchError, warn
from .state import ENV_COORDINATOR

if TYPE_CHECKING:
    from ..cache import Cache

__all__ = ["agree", "coordination_of", "record", "redis_identity"]


class Coordinator(Protocol):
    """What this module reads of a :class:`~storeframes.coord.Coordinator`: its Redis URL (None for this
    machine). The coordinator is passed whole, never its URL, which may hold a password."""

    @property
    def url(self) -> str | None: ...


def redis_identity(url: str) -> str:
    """A Redis server's address as every member may name it, without user or password: the scheme, the
    host in lower case, the port (6379 unless given) and the database (0 unless given).

    >>> redis_identity("redis://:secret@Team-Redis/2")
    'redis://team-redis:6379/2'
    >>> redis_identity("unix:///run/redis.sock?db=1")
    'unix:///run/redis.sock?db=1'
    """
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    query = parse_qs(parts.query)
    if scheme == "unix":
        return f"unix://{parts.path}?db={query.get('db', ['0'])[0]}"
    host = (parts.hostname or "localhost").lower()
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port or 6379
    except ValueError:
        port = 6379
    db = parts.path.strip("/") or query.get("db", ["0"])[0]
    return f"{scheme}://{host}:{port}/{db}"


def coordination_of(coordinator: Coordinator, cache: Cache) -> Coordination:
    """How a member with ``coordinator`` coordinates on ``cache``."""
    if coordinator.url is not None:
        return Coordination("redis", redis_identity(coordinator.url))
    capabilities = cache.storage.capabilities
    local = capabilities.leases == "files" and capabilities.local_root is not None
    return Coordination("machine" if local else "bucket-objects")


def _setting(coordination: Coordination) -> str:
    """What to set to coordinate as ``coordination`` says."""
    if coordination.kind == "redis":
        return (
            f"set {ENV_COORDINATOR}={coordination.identity} (with the team's password, if its server has one: "
            f"redis://:PASSWORD@host...) or pass coordinator= to the Client"
        )
    if coordination.kind in ("machine", "bucket-objects"):
        return f"unset {ENV_COORDINATOR} (or pass coordinator='machine' to the Client)"
    return "upgrade storeframes to the team's version"


def agree(coordinator: Coordinator, cache: Cache) -> None:
    """Check, before a member fetches into ``cache``, that it coordinates as the team does; record its
    coordination when none is. Raises :class:`~storeframes.CoordinationMismatchError` when it differs.

    A record that cannot be read or written (the store fails) is reported with a
    :class:`~storeframes.cache.CacheWarning` and the member goes on unchecked: what keeps an
    unusable cache from costing money is the cache's own check, not this one.
    """
    if cache.storage.capabilities.shared == "process":
        return
    mine = coordination_of(coordinator, cache)
    try:
        team = cache.coordination()
        if team is None:
            team = cache.record_coordination(mine)
    except ValueError:  # a damaged record: nobody can tell how the team coordinates
        raise CoordinationMismatchError(
            f"the cache at {cache.location} holds a damaged coordination record, so this client cannot tell "
            "whether it shares the team's rate window and leases; record how the team coordinates where its "
            f"setting is: storeframes cache coordination --record --cache-dir {cache.location}",
            location=cache.location,
            member=mine.describe(),
        ) from None
    except OSError as exc:
        warn(
            f"cannot read or write how the team coordinates in the cache at {cache.location} ({exc}); "
            "going on without checking that this client shares the team's rate window and leases",
            CacheWarning,
        )
        return
    if team.same(mine):
        return
    recorded = " by ".join(p for p in (f"recorded {team.written_at}" if team.written_at else "", team.written_by) if p)
    raise CoordinationMismatchError(
        f"the team sharing the cache at {cache.location} coordinates through {team.describe()}"
        + (f" ({recorded})" if recorded else "")
        + f", but this client coordinates through {mine.describe()}: its requests would count in another rate "
        "window and its leases would be invisible to the team, so the limit would be tripped and cells paid "
        f"for twice. Nothing was sent. To join the team, {_setting(team)}. If the team changed its "
        "coordination on purpose, record the new one where it is set: storeframes cache coordination --record "
        f"--cache-dir {cache.location}",
        location=cache.location,
        team=team.describe(),
        member=mine.describe(),
    )


def record(coordinator: Coordinator, cache: Cache) -> Coordination:
    """Record ``coordinator``'s coordination in ``cache``, replacing the team's: for a team that changes
    how it coordinates on purpose. Members that coordinate as before are refused from then on."""
    return cache.record_coordination(coordination_of(coordinator, cache), replace=True)
