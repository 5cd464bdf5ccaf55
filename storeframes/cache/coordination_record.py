"""What a team's members must share, as the cache remembers it: how they coordinate, and the one name
of a bucket whatever its spelling.

A team shares a cache (a folder, or a bucket) and, through its coordination, one rate window of
the token and one set of leases. A member that coordinates differently (a cron job without
``$STOREFRAMES_COORDINATOR`` beside notebooks that set it) counts its requests in a window of its own and
takes leases nobody else sees: the limit is tripped and cells are paid for twice. So the first member
that fetches into a shared cache writes down how it coordinates, in a small record beside the marker
(:data:`RECORD`, written only if absent: of members racing, one record wins), and every member that
fetches afterwards compares its own with it (:mod:`storeframes.coord.team` decides what differs).

The record holds no secret: the kind of coordination and, for Redis, the server's address without
user or password (``redis://team-redis:6379/0``)::

    {"format": 1, "kind": "redis", "identity": "redis://team-redis:6379/0",
     "written_by": "storeframes 1.4.0", "written_at": "2026-11-02T09:14:03+00:00"}

:func:`canonical_location` is the one name of a cache's store whatever its spelling: ``s3a://b/p``,
``S3://b//p/`` and ``s3://b/p`` are one bucket prefix, so they are one lease space.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from .._version import __version__

if TYPE_CHECKING:
    from .files import Files

__all__ = ["KINDS", "RECORD", "Coordination", "canonical_location", "read_record", "write_record"]

RECORD = "storeframes-coordination.json"
"""The object beside the marker that says how the team sharing the cache coordinates."""
KINDS = ("machine", "bucket-objects", "redis")
"""The kinds of coordination: this machine's window and lock files in the folder; each machine's own
window and the bucket's lease objects; a Redis server's window and leases."""

_SPELLINGS = {"s3a": "s3", "azure": "az", "adl": "az", "abfs": "az", "abfss": "az"}
"""Schemes that name the same store as another (Azure's only when no account follows an ``@``)."""


def canonical_location(location: str) -> str:
    """The one name of a cache's store: the scheme in lower case and in its usual spelling, no empty
    part of the path, no trailing slash. A folder (no scheme) is returned as it is.

    >>> canonical_location("S3A://team-bucket//storeframes/")
    's3://team-bucket/storeframes'
    >>> canonical_location("s3://team-bucket/storeframes")
    's3://team-bucket/storeframes'
    """
    if "://" not in location:
        return location
    try:
        parts = urlsplit(location.strip())
    except ValueError:
        return location
    scheme = parts.scheme.lower()
    if scheme in _SPELLINGS and (scheme == "s3a" or "@" not in parts.netloc):
        scheme = _SPELLINGS[scheme]
    path = "/".join(part for part in parts.path.split("/") if part)
    return f"{scheme}://{parts.netloc}" + (f"/{path}" if path else "")


@dataclass(frozen=True)
class Coordination:
    """How a member coordinates: its ``kind`` (one of :data:`KINDS`) and, for Redis, the server's
    ``identity`` (its address without user or password). ``written_by`` and ``written_at`` say who
    recorded it, when it was read from a cache."""

    kind: str
    identity: str = ""
    written_by: str = ""
    written_at: str = ""

    def same(self, other: Coordination) -> bool:
        """Whether the two coordinate alike: one window and one set of leases."""
        return (self.kind, self.identity) == (other.kind, other.identity)

    def describe(self) -> str:
        """For people: ``Redis at redis://team-redis:6379/0``, ``this machine only``."""
        if self.kind == "redis":
            return f"Redis at {self.identity}"
        if self.kind == "machine":
            return "this machine only (no coordinator: the machine's window, lock files in the folder)"
        if self.kind == "bucket-objects":
            return "no coordinator (each machine's own window, the bucket's lease objects)"
        return f"{self.kind!r}" + (f" at {self.identity}" if self.identity else "") + " (unknown to this version)"

    def body(self) -> bytes:
        return json.dumps(
            {
                "format": 1,
                "kind": self.kind,
                "identity": self.identity,
                "written_by": f"storeframes {__version__}",
                "written_at": datetime.now(UTC).isoformat(timespec="seconds"),
            }
        ).encode()


def _parse(data: bytes) -> Coordination:
    """The record's coordination; a ValueError when it is not one."""
    found = json.loads(data)
    if not isinstance(found, dict) or not isinstance(found.get("kind"), str):
        raise ValueError("not a coordination record")
    identity = found.get("identity") or ""
    return Coordination(
        found["kind"], str(identity), str(found.get("written_by") or ""), str(found.get("written_at") or "")
    )


def read_record(files: Files) -> Coordination | None:
    """The coordination recorded in the cache, or None when none is. An OSError when the store cannot be
    read, a ValueError when the record is not one (damaged, or not JSON)."""
    try:
        data = files.storage.get(RECORD)
    except FileNotFoundError:
        return None
    return _parse(data)


def write_record(files: Files, coordination: Coordination, *, replace: bool = False) -> Coordination:
    """Record ``coordination`` in the cache unless one is recorded (``replace=True``: whatever is), and
    return the one that stands: of members racing to record theirs, one wins (a conditional write where
    the store has one) and the others get the winner's. Marks the store a cache first. An OSError when
    the store cannot be written."""
    files.mark()
    body = coordination.body()
    if replace:
        files.storage.put(RECORD, body)
        return _parse(body)
    try:
        written = files.storage.put_if_absent(RECORD, body)
    except OSError:  # a bucket without conditional writes: the race is lost to whoever writes last
        if (found := read_record(files)) is not None:
            return found
        files.storage.put(RECORD, body)
        written = True
    if written:
        return _parse(body)
    found = read_record(files)
    return found if found is not None else _parse(body)
