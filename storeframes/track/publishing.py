"""A tracker's ``[publish]`` table: the team tables it writes to a Delta Lake at the end of every run.

::

    [publish]
    lake = "s3://team-lake/storeframes"   # a folder (relative to the spec file) or s3://bucket/prefix
    tables = ["search", "metadata"]      # by default every table the tracker's items fill
    snapshots = true                     # also append the day's snapshots of the current-only tables

After the run has fetched (and its alerts are judged), each table is published with
:func:`storeframes.publish`: merged on its cell keys into ``<lake>/<table>``, so the lake's table is
what ``sf.scan(table)`` gives, and with ``snapshots = true`` the days it has not yet appended to
``<lake>/<table>_snapshots`` (the current-only tables: ``metadata`` and its child tables,
``metrics``, ``search``; a history table holds every day already). ``snapshots`` is false by
default: the snapshot tables grow by a day of every cell each run, a cost a team chooses. A table
with nothing new gets no new version. ``$NAME`` or ``${NAME}`` in ``lake`` is the environment
variable ``NAME``, as in ``[notify]`` addresses; a bucket lake is reached with the tracker's
``storage_options`` (those of its cache) or, without them, the environment's credentials.

A table that fails to publish (the lake unreachable, ``deltalake`` not installed) is named in the run's
errors and makes the run ``partial``; what the run fetched stays kept, and the next run publishes it.
A day's snapshots are appended once, so a run that left something due unfetched (an item failed or
over the budget) holds the snapshot tables back: the next run that fetches everything due appends
every day not yet there, whole.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..cache import Cache
from ..kept.snapshots import SNAPSHOT_TABLES
from ..kept.tables import TABLES, endpoints_of
from .rules import Fail, env_filled

__all__ = ["PUBLISH_KEYS", "Publish", "Published", "filled_tables", "parse_publish", "publish_tables"]

PUBLISH_KEYS = ("lake", "tables", "snapshots")
"""The keys a ``[publish]`` table takes."""


@dataclass(frozen=True)
class Publish:
    """The ``[publish]`` table: where the tracker's tables go, which, and whether with their snapshots."""

    lake: str
    """A folder (made absolute from the spec's folder) or a bucket address, environment variables filled in."""
    tables: tuple[str, ...]
    """The tables published at the end of every run, in :data:`storeframes.kept.tables.TABLES`' order."""
    snapshots: bool = False
    """Whether the current-only tables' snapshots are appended to ``<lake>/<table>_snapshots`` too."""

    def with_snapshots(self, table: str) -> bool:
        """Whether ``table`` is published with its snapshots (``snapshots = true`` and a current-only table)."""
        return self.snapshots and table in SNAPSHOT_TABLES


@dataclass(frozen=True)
class Published:
    """What publishing at the end of a run did: each Delta table's version after it, and the failures."""

    versions: dict[str, int]
    """The version of each Delta table after the run, by its name in the lake (``metadata``,
    ``metadata_snapshots`` ...), written or not."""
    written: tuple[str, ...]
    """The Delta tables given a new version by this run."""
    errors: tuple[str, ...]
    """A line per table that failed: its name, the error's kind and message."""
    seconds: float


def filled_tables(endpoints: Iterable[str]) -> list[str]:
    """The tables the answers of ``endpoints`` (the tracker's items' endpoints) fill, in :data:`TABLES`' order.

    >>> filled_tables(["metrics", "search_ads"])
    ['metrics', 'search']
    """
    wanted = set(endpoints)
    return [name for name, spec in TABLES.items() if wanted & {e.name for e in endpoints_of(spec)}]


def parse_publish(table: Any, fail: Fail, *, endpoints: Iterable[str], folder: Path | None) -> Publish | None:
    """The ``[publish]`` table of a spec whose items ask ``endpoints``; a relative ``lake`` is placed in
    ``folder`` (the spec's). None without a table. A bad key or value is ``fail``'s error.

    >>> from storeframes.errors import InvalidParameterError
    >>> fail = lambda table, key, value, allowed: InvalidParameterError(f"[{table}].{key}", value, allowed)
    >>> parse_publish({"lake": "s3://team-lake/t", "tables": ["metrics"]}, fail, endpoints=["metrics"], folder=None)
    Publish(lake='s3://team-lake/t', tables=('metrics',), snapshots=False)
    """
    if table is None:
        return None
    if not isinstance(table, dict):
        raise fail("publish", None, table, "a [publish] table")
    for key in table:
        if key not in PUBLISH_KEYS:
            raise fail("publish", key, table[key], f"one of the keys {', '.join(PUBLISH_KEYS)}")
    lake = table.get("lake")
    if not isinstance(lake, str) or not lake.strip() or not lake.isprintable():
        raise fail("publish", "lake", lake, "a folder or a bucket address such as s3://bucket/prefix")
    lake = env_filled(
        lake.strip(), lambda name: fail("publish", "lake", "…", f"an environment variable {name} that is set")
    )
    if "://" not in lake:
        path = Path(lake).expanduser()
        lake = str((folder / path).resolve() if folder is not None and not path.is_absolute() else path)
    filled = filled_tables(endpoints)
    allowed = f"tables the tracker's items fill: {', '.join(filled)}"
    raw = table.get("tables", filled)
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not raw or not all(isinstance(t, str) for t in raw):
        raise fail("publish", "tables", raw, f"a list of one table or more, {allowed}")
    strangers = [t for t in raw if t not in filled]
    if strangers:
        unknown = [t for t in strangers if t not in TABLES]
        why = f" ({', '.join(unknown)}: no such table)" if unknown else " (no item of the spec fetches the others)"
        raise fail("publish", "tables", strangers, allowed + why)
    snapshots = table.get("snapshots", False)
    if not isinstance(snapshots, bool):
        raise fail("publish", "snapshots", snapshots, "true or false")
    chosen = tuple(t for t in filled if t in raw)
    if snapshots and not any(t in SNAPSHOT_TABLES for t in chosen):
        raise fail(
            "publish",
            "snapshots",
            snapshots,
            f"false for these tables: snapshots are kept of the current-only tables ({', '.join(SNAPSHOT_TABLES)})",
        )
    return Publish(lake, chosen, snapshots)


def publish_tables(
    publish: Publish,
    cache: Cache,
    service: str,
    *,
    storage_options: Mapping[str, str] | None = None,
    snapshots: bool = True,
) -> Published:
    """Publish each of ``publish``'s tables from ``cache`` (the answers of ``service``) to its lake.

    ``storage_options`` (the tracker's, as for its cache) go with a bucket lake; a folder takes none.
    ``snapshots=False`` holds the snapshot tables back (after a run that left something due
    unfetched: a day is appended once, so it waits to be whole); the current tables are published.
    A table that fails is named in :attr:`Published.errors` and the others are published still.

    >>> publish_tables(spec.publish, cache, "service").versions  # doctest: +SKIP
    {'metadata': 4, 'metadata_snapshots': 4, 'metrics': 2}
    """
    from ..lake.publish import publish as publish_table
    from ..lake.read import is_address

    options = storage_options if is_address(publish.lake) else None
    began = time.monotonic()
    versions: dict[str, int] = {}
    written: list[str] = []
    errors: list[str] = []
    for table in publish.tables:
        try:
            result = publish_table(
                table,
                publish.lake,
                cache_dir=cache,
                storage_options=options,
                snapshots=snapshots and publish.with_snapshots(table),
                service=service,
            )
        except Exception as exc:  # deltalake's errors too: the run's fetched answers stay kept whatever happens
            errors.append(f"publish {table}: {type(exc).__name__}: {exc}".splitlines()[0])
            continue
        versions[table] = result.version
        if result.written:
            written.append(table)
        if result.snapshots_version is not None:
            versions[f"{table}_snapshots"] = result.snapshots_version
            if result.snapshot_rows:
                written.append(f"{table}_snapshots")
    return Published(versions, tuple(written), tuple(errors), time.monotonic() - began)
