"""What every coordination backend shares: the state folder of this machine, the token's hashed id,
URLs shown without their password, and a lock a forked child gets afresh."""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = [
    "ENV_COORDINATOR",
    "ENV_STATE_DIR",
    "ForkSafeLock",
    "alive",
    "masked",
    "private_folder",
    "state_dir",
    "state_path",
    "token_id",
]

ENV_COORDINATOR = "STOREFRAMES_COORDINATOR"
ENV_STATE_DIR = "STOREFRAMES_STATE_DIR"


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


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists (on Windows, where signal 0 would end it, assume it does)."""
    if os.name == "nt":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: another user's process
        return True
    return True


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


def token_id(api_key: str, base_url: str | None) -> str:
    """A keyed hash naming a token at a base URL: what shared state is filed under (the token never is)."""
    url = (base_url or "").rstrip("/")
    digest = hashlib.blake2b(digest_size=16, person=b"storeframes-win")
    digest.update(len(api_key.encode()).to_bytes(8, "big"))
    digest.update(api_key.encode())
    digest.update(url.encode())
    return digest.hexdigest()
