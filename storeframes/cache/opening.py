"""Where a cache is: the one place that turns a user's ``cache_dir`` into a :class:`~storeframes.cache.Cache`.

The client, :func:`storeframes.scan`, :func:`storeframes.connect` and the command line all
open their cache with :func:`open_cache`: a folder path, a bucket address, a store, a
:class:`~storeframes.cache.Cache`, ``True``/``None`` (the default folder) or ``False`` (no cache).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import CacheUnavailableError, ConfigurationError, NoCacheError
from ._core import Cache
from .layout import MARKER
from .stores import Store, is_url

__all__ = ["ENV_CACHE_DIR", "default_cache_dir", "open_cache", "require_cache"]

ENV_CACHE_DIR = "STOREFRAMES_CACHE_DIR"
"""The variable naming the default cache: a folder or a bucket address."""


def default_cache_dir() -> Path | str:
    """``$STOREFRAMES_CACHE_DIR`` (a folder or a bucket address), else the user's cache directory for storeframes
    (also when the variable is empty or blank: never the current folder)."""
    configured = os.environ.get(ENV_CACHE_DIR)
    if configured and configured.strip():
        return configured if is_url(configured) else Path(configured).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("storeframes", appauthor=False))


def open_cache(cache_dir: Any = None, storage_options: Any = None) -> Cache | None:
    """The cache at ``cache_dir``: a folder path, a bucket address (``s3://bucket/prefix``, with
    ``storage_options``), a store, a :class:`~storeframes.cache.Cache` (as it is), ``None`` or ``True``
    (:func:`default_cache_dir`), or ``False`` (no cache: None). Anything else, an empty text
    included (never the current folder), is a :class:`~storeframes.ConfigurationError` saying what is allowed.

    >>> open_cache(False) is None
    True
    """
    if cache_dir is False:
        return None
    if isinstance(cache_dir, Cache):
        if storage_options is not None:
            raise ConfigurationError("storage_options= goes with a bucket address as cache_dir, not with a Cache")
        return cache_dir
    if cache_dir is None or cache_dir is True:
        cache_dir = default_cache_dir()
    if isinstance(cache_dir, str) and not cache_dir.strip():  # never the current folder, as Path("") would be
        raise ConfigurationError(
            f"cache_dir is empty ({cache_dir!r}, an unset variable?): give a folder path, a bucket address "
            "(s3://bucket/prefix), a Store or a Cache, None for the default folder, or False for no cache"
        )
    if storage_options is not None and not isinstance(storage_options, Mapping):
        raise ConfigurationError(f"storage_options must be a mapping of texts, got {type(storage_options).__name__}")
    if isinstance(cache_dir, str) and is_url(cache_dir):
        try:
            return Cache(cache_dir, storage_options=storage_options)
        except (ValueError, TypeError) as exc:
            failure = ConfigurationError(f"cache_dir {cache_dir!r}: {exc}")
        finally:
            del storage_options  # no credential among this frame's locals, in a traceback or a debugger
        raise failure  # outside the except: not chained to the store's error
    if storage_options is not None:
        raise ConfigurationError("storage_options= goes with a bucket address as cache_dir (s3://bucket/prefix)")
    if isinstance(cache_dir, (str, os.PathLike)):
        return Cache(Path(cache_dir))
    if isinstance(cache_dir, Store):
        return Cache(cache_dir)
    raise ConfigurationError(
        f"cache_dir must be a folder path, a bucket address (s3://bucket/prefix), a Store, a Cache or False, "
        f"got {cache_dir!r}"
    )


_MADE = (
    "a cache is made where a call with this cache_dir (sf.Client, a frame function) or storeframes track run "
    "keeps its first answer"
)
"""How a cache is made, said where a read finds none."""


def require_cache(cache: Cache, *, what: str) -> None:
    """Before ``what`` (``"scan"``) reads ``cache``: raise :class:`~storeframes.NoCacheError` where there is no
    cache to read, since its 0 rows would not be true: a folder that does not exist, is not a folder or holds
    other things, a bucket prefix that holds no cache; the message names the place (a bucket's address masked)
    and how a cache is made. A bucket that cannot be listed (no such bucket, access refused) raises
    :class:`~storeframes.CacheUnavailableError` with its cause. An empty folder, and a cache with nothing in it,
    are empty caches: nothing is raised, and reads give 0 rows. Looking creates nothing.

    >>> require_cache(Cache("no-such-folder"), what="storeframes mcp")  # doctest: +SKIP
    Traceback (most recent call last):
    storeframes.errors.NoCacheError: storeframes mcp: no cache at /home/ana/no-such-folder: the folder does not exist; ...
    """
    why = _no_cache(cache, what)
    if why is not None:
        raise NoCacheError(
            f"{what}: no cache at {cache.location}: {why}; {_MADE}", location=cache.location, operation=what
        )


def _no_cache(cache: Cache, what: str) -> str | None:
    """Why ``cache`` is not there to read, or None when it is (an empty folder counts as an empty cache)."""
    if cache.path is not None:
        path = Path(cache.path)
        if not path.exists():
            return "the folder does not exist"
        if not path.is_dir():
            return "it is not a folder"
        with os.scandir(path) as items:
            if next(items, None) is None:
                return None
        return None if cache.is_cache() else f"the folder holds no {MARKER} and no answers/, index/ or ledger/ files"
    try:  # first: a bucket that cannot be listed is not a bucket without a cache
        listed = cache.storage.list(MARKER)
    except OSError as exc:
        raise CacheUnavailableError(
            f"{what}: the cache at {cache.location} cannot be listed ({exc}); likely cause: "
            f"{cache.storage.explain(exc)}; nothing was read",
            location=cache.location,
            operation="list",
        ) from None
    if MARKER in listed or cache.is_cache():
        return None
    return f"it holds no {MARKER} and no answers/, index/ or ledger/ files"
