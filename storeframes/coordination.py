"""Where the callers of one token meet: this machine (the default) or a Redis server.

The service counts requests per token, whoever sends them. Every
:class:`~storeframes.Client` of one token therefore shares one rate window
(:mod:`storeframes.window`) and one set of leases (:mod:`storeframes.leases`), and a
:class:`Coordinator` says how far that sharing reaches:

- ``Coordinator()`` (``"machine"``, the default): the threads and processes of this
  machine, through a small SQLite file in :func:`state_dir`;
- ``Coordinator("redis://host:6379/0")`` (or ``rediss://``, ``unix://``): every machine
  that names the same Redis server (``pip install "storeframes[redis]"``).

``$STOREFRAMES_COORDINATOR`` sets the default. The token itself is never written down:
what is shared is named by :func:`token_id`, a keyed hash of the token and base URL.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from .errors import ConfigurationError

if TYPE_CHECKING:
    from redis import Redis

__all__ = ["ENV_COORDINATOR", "ENV_STATE_DIR", "Coordinator", "coordinator", "state_dir", "token_id"]

ENV_COORDINATOR = "STOREFRAMES_COORDINATOR"
ENV_STATE_DIR = "STOREFRAMES_STATE_DIR"

REDIS_SCHEMES = ("redis", "rediss", "unix")
MACHINE = "machine"
_ALLOWED = "'machine' or a Redis URL (redis://, rediss://, unix://)"
_INSTALL = 'pip install "storeframes[redis]"'


def state_path() -> Path:
    """The state folder's path, without creating it: ``$STOREFRAMES_STATE_DIR`` or the user's state directory."""
    configured = os.environ.get(ENV_STATE_DIR)
    if configured:
        return Path(configured).expanduser()
    import platformdirs

    return Path(platformdirs.user_state_dir("storeframes", appauthor=False))


def state_dir() -> Path:
    """The folder of the state this machine's callers share (created, private to the user, on first use)."""
    return private_folder(state_path())


def private_folder(path: Path) -> Path:
    """``path``, created with mode 0o700 if it is missing (its parents as usual)."""
    if not path.is_dir():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.mkdir(mode=0o700, exist_ok=True)
    return path


def masked(url: str) -> str:
    """``url`` with any password (in the address or a ``password=`` parameter) shown as ``***``."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if parts.password is not None:
            user, _, host = netloc.rpartition("@")
            name = user.split(":", 1)[0]
            netloc = f"{name}:***@{host}"
        query = parts.query
        if query:
            pairs = parse_qsl(query, keep_blank_values=True)
            if any(k.lower() == "password" for k, _ in pairs):
                query = urlencode([(k, "***" if k.lower() == "password" else v) for k, v in pairs], safe="*")
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    except ValueError:
        return "<unreadable URL>"


_CLIENTS: dict[tuple[int, str], Redis] = {}


class ForkSafeLock:
    """A lock for a process-wide registry that a forked child gets afresh.

    A lock another thread held at the moment of a fork would stay held in the child forever.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._renew)

    def _renew(self) -> None:
        self._lock = threading.Lock()

    def __enter__(self) -> None:
        self._lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


_CLIENTS_LOCK = ForkSafeLock()


@dataclass(frozen=True, repr=False)
class Coordinator:
    """Where the callers of one token meet: ``url=None`` for this machine, else a Redis URL.

    >>> Coordinator()
    Coordinator(machine)
    >>> Coordinator("redis://:secret@cache.internal:6379/0")
    Coordinator('redis://:***@cache.internal:6379/0')
    """

    url: str | None = None

    def __repr__(self) -> str:
        return f"Coordinator({self.describe()})" if self.url is None else f"Coordinator({self.describe()!r})"

    def describe(self) -> str:
        """``machine``, or the Redis URL with its password masked."""
        return MACHINE if self.url is None else masked(self.url)

    def redis(self) -> Redis:
        """The process's one Redis client for :attr:`url` (made on first use; thread-safe)."""
        if self.url is None:
            raise ConfigurationError("the machine coordinator has no Redis server; pass a redis:// URL")
        key = (os.getpid(), self.url)  # a forked child makes its own connections
        with _CLIENTS_LOCK:
            client = _CLIENTS.get(key)
            if client is None:
                try:
                    import redis
                except ImportError:
                    raise ConfigurationError(
                        f"the Redis coordinator {self.describe()} needs redis-py: {_INSTALL}"
                    ) from None
                # the URL's own parameters (?socket_timeout=...) win over these defaults
                client = redis.Redis.from_url(self.url, socket_connect_timeout=10.0, socket_timeout=30.0)
                _CLIENTS[key] = client
            return client


def coordinator(spec: str | Coordinator | None = None) -> Coordinator:
    """A :class:`Coordinator` from a text (``"machine"`` or a Redis URL), or ``$STOREFRAMES_COORDINATOR`` when None.

    >>> coordinator("machine")
    Coordinator(machine)
    """
    if isinstance(spec, Coordinator):
        return spec
    origin = "coordinator"
    if spec is None:
        spec = os.environ.get(ENV_COORDINATOR, "").strip()
        if not spec:
            return Coordinator()
        origin = f"${ENV_COORDINATOR}"
    if not isinstance(spec, str):
        raise ConfigurationError(f"coordinator must be {_ALLOWED} or a Coordinator, got a {type(spec).__name__}")
    text = spec.strip()
    if text.lower() == MACHINE:
        return Coordinator()
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError:
        raise ConfigurationError(f"{origin} must be {_ALLOWED}, got {_shown(text)}") from None
    if parts.scheme.lower() not in REDIS_SCHEMES:
        raise ConfigurationError(f"{origin} must be {_ALLOWED}, got {_shown(text)}")
    if parts.scheme.lower() == "unix" and not parts.path:
        raise ConfigurationError(f"{origin} {masked(text)!r} names no socket path (unix:///path/to/redis.sock)")
    return Coordinator(text)


def _shown(text: str) -> str:
    """A refused coordinator as a message may show it: a URL with its password masked, else not at all."""
    return repr(masked(text)) if "://" in text else "a text that is not a URL (not shown: it may be a secret)"


def redis_installed() -> bool:
    """Whether redis-py can be imported (without importing it)."""
    return importlib.util.find_spec("redis") is not None


def token_id(api_key: str, base_url: str | None) -> str:
    """A keyed hash naming a token at a base URL: what shared state is filed under (the token never is)."""
    url = (base_url or "").rstrip("/")
    digest = hashlib.blake2b(digest_size=16, person=b"storeframes-win")
    digest.update(len(api_key.encode()).to_bytes(8, "big"))
    digest.update(api_key.encode())
    digest.update(url.encode())
    return digest.hexdigest()
