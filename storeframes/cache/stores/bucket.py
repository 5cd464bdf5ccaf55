"""A cache in object storage: an S3 bucket (or an S3-compatible server), Google Cloud Storage or Azure Blob Storage.

:class:`ObjectStore` is a :class:`~storeframes.cache.stores.base.Store` whose values are objects
under a prefix of a bucket, so every machine that names the same URL shares one cache::

    ObjectStore("s3://team-bucket/storeframes")
    ObjectStore("s3://cache/sf", storage_options={"aws_endpoint_url": "https://minio.internal:9000"})
    ObjectStore("gs://team-bucket/storeframes")
    ObjectStore("az://container/storeframes", storage_options={"azure_storage_account_name": "team"})

Credentials come from each cloud's usual environment variables (``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, ``AWS_REGION``, ``AWS_ENDPOINT_URL``;
``GOOGLE_APPLICATION_CREDENTIALS``, ``GOOGLE_SERVICE_ACCOUNT``...; ``AZURE_STORAGE_ACCOUNT_NAME``,
``AZURE_STORAGE_ACCOUNT_KEY``...), or from ``storage_options``: the configuration keys of
obstore and polars alike, with or without the cloud's prefix (``aws_access_key_id`` or
``access_key_id``, ``aws_endpoint_url``, ``aws_region``). Two more keys set the retries
of a request: ``max_retries`` and ``retry_timeout`` (seconds). A plain ``http://``
endpoint is allowed on a loopback host only (a MinIO or a test server on this machine);
anywhere else credentials and data would cross the network unencrypted, and the store
refuses it.

Needs obstore (the ``s3`` extra: ``pip install ".[s3]"`` from a checkout), imported only when a
store is made. No error message of this module holds a credential: obstore's own messages (which carry
the request and the server's answer) are cut down to the operation, the key and a short
reason.
"""

from __future__ import annotations

import builtins
import errno
import io
import ipaddress
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar
from urllib.parse import urlsplit

from ..._version import install_hint
from ...errors import shown_when_half_built
from .base import Capabilities, StoreBase, SweepError, Usage, Version, check_key

__all__ = ["ObjectStore"]

log = logging.getLogger("storeframes")

_SET_ASIDE = ".corrupt"
_MOST_ODD = 1000
"""How many keys obstore refuses a listing passes over before it gives up (an OSError)."""
_ODD = re.compile(r'Error parsing Path "(.*?)": Encountered|Path "(.*?)" contained empty path segment', re.DOTALL)
_requests_from: int | None = None
"""The process that sent obstore's first request: obstore's runtime does not work in a child it forks later."""
_LOOPBACK = "a loopback host (127.0.0.0/8, ::1, localhost)"
T = TypeVar("T")


class _RangeFile(io.RawIOBase):
    """obstore's reader as a Python file (which pyarrow's ``PythonFile`` takes), its errors the store's."""

    def __init__(self, store: ObjectStore, key: str, reader: Any):
        self._store, self._key, self._reader = store, key, reader

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return int(self._store._call("read", self._key, lambda _: self._reader.seek(offset, whence)))

    def tell(self) -> int:
        return int(self._reader.tell())

    def read(self, size: int | None = -1) -> bytes:
        if size is None or size < 0:
            return bytes(self._store._call("read", self._key, lambda _: self._reader.readall()))
        return bytes(self._store._call("read", self._key, lambda _: self._reader.read(size)))

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            self._reader.close()
        super().close()


@dataclass(frozen=True)
class _Cloud:
    """What differs between the clouds: URL schemes, option and variable prefixes, endpoint keys."""

    name: str
    schemes: tuple[str, ...]
    prefixes: tuple[str, ...]  # of option keys, longest first: "azure_storage_endpoint" -> "endpoint"
    env: str
    endpoint_keys: tuple[str, ...]  # option keys without prefix, the one that wins first
    endpoint_env: tuple[str, ...]
    polars_prefix: str
    credentials: str  # the variables and storage options that give the credentials, for messages
    endpoint: str  # the variables and storage options that set the endpoint, for messages


_S3 = _Cloud(
    "S3",
    ("s3", "s3a"),
    ("aws_",),
    "AWS_",
    ("endpoint_url_s3", "endpoint_url", "endpoint"),
    ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_ENDPOINT"),
    "aws_",
    "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), or AWS_PROFILE; or storage_options "
    "aws_access_key_id and aws_secret_access_key",
    "AWS_ENDPOINT_URL and AWS_REGION, or storage_options aws_endpoint_url and aws_region",
)
_GCS = _Cloud(
    "GCS",
    ("gs",),
    ("google_",),
    "GOOGLE_",
    ("base_url",),
    ("GOOGLE_BASE_URL",),
    "google_",
    "GOOGLE_APPLICATION_CREDENTIALS or GOOGLE_SERVICE_ACCOUNT; or storage_options google_service_account "
    "or google_service_account_key",
    "GOOGLE_BASE_URL, or storage_options google_base_url",
)
_AZURE = _Cloud(
    "Azure",
    ("az", "abfs", "abfss", "azure", "adl"),
    ("azure_storage_", "azure_"),
    "AZURE_",
    ("endpoint",),
    ("AZURE_STORAGE_ENDPOINT", "AZURE_ENDPOINT"),
    "azure_",
    "AZURE_STORAGE_ACCOUNT_NAME with AZURE_STORAGE_ACCOUNT_KEY or AZURE_STORAGE_SAS_TOKEN, or AZURE_CLIENT_ID, "
    "AZURE_CLIENT_SECRET and AZURE_TENANT_ID; or the same storage_options in lower case",
    "AZURE_STORAGE_ENDPOINT (or AZURITE_BLOB_STORAGE_URL with the emulator), or storage_options azure_storage_endpoint",
)
_EMULATOR = ("AZURE_STORAGE_USE_EMULATOR", "AZURE_USE_EMULATOR")
"""The variables that switch Azure to its emulator, whose address is ``$AZURITE_BLOB_STORAGE_URL`` (plain http)."""
_AZURITE = "http://127.0.0.1:10000"
_CLOUDS = {scheme: cloud for cloud in (_S3, _GCS, _AZURE) for scheme in cloud.schemes}
_SCHEMES = "s3://bucket[/prefix], gs://bucket[/prefix] or az://container[/prefix] (also s3a, abfs, abfss, azure, adl)"

_CLIENT_KEYS = frozenset(
    {
        "allow_http",
        "allow_invalid_certificates",
        "connect_timeout",
        "default_content_type",
        "http1_only",
        "http2_only",
        "http2_keep_alive_interval",
        "http2_keep_alive_timeout",
        "http2_keep_alive_while_idle",
        "pool_idle_timeout",
        "pool_max_idle_per_host",
        "proxy_url",
        "proxy_ca_certificate",
        "proxy_excludes",
        "randomize_addresses",
        "read_timeout",
        "timeout",
        "user_agent",
    }
)
_BOOLEAN_CLIENT_KEYS = frozenset(
    {"allow_invalid_certificates", "http1_only", "http2_only", "randomize_addresses", "allow_http"}
)
_RETRY_KEYS = frozenset({"max_retries", "retry_timeout"})
_CREDENTIAL = re.compile(r"key|secret|token|password|credential|sas", re.IGNORECASE)
"""Option and variable names whose values are credentials (access keys count: they name the account)."""


def _obstore() -> Any:
    """The obstore package, or an ImportError that says what to install."""
    try:
        import obstore
        import obstore.exceptions
        import obstore.store
    except ImportError:
        raise ImportError(f"an object store cache needs obstore: {install_hint('s3')}") from None
    return obstore


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _short_key(cloud: _Cloud, key: str) -> str:
    """``key`` lowered and without the cloud's prefix: ``AWS_Endpoint_URL`` -> ``endpoint_url``."""
    key = key.strip().lower()
    for prefix in cloud.prefixes:
        if key.startswith(prefix):
            return key[len(prefix) :]
    return key


def _as_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def _bad_part(part: str) -> bool:
    """Whether obstore refuses a key with this part: empty, ``.``, ``..`` or holding a control character."""
    return part in ("", ".", "..") or any(ord(c) < 32 for c in part)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _info(meta: Mapping[str, Any]) -> Version:
    return Version(
        str(meta["path"]), int(meta["size"]), meta["last_modified"].timestamp(), meta.get("e_tag"), meta.get("version")
    )


# -- what went wrong, in few words ----------------------------------------------------------------------

_STATUS = re.compile(r"status code: (\d{3})(?: ([A-Za-z][A-Za-z \-]{0,40}[A-Za-z]))?")
_CODE = re.compile(r"<Code>([A-Za-z0-9.]{1,64})</Code>")
_NETWORK = (
    ("connection refused", "connection refused"),
    ("dns error", "host not found"),
    ("failed to lookup address", "host not found"),
    ("connection reset", "connection reset"),
    ("timed out", "timed out"),
    ("timeout", "timed out"),
    ("certificate", "TLS certificate refused"),
    ("tls", "TLS error"),
    ("error sending request", "could not send the request"),
)


def _status(text: str) -> int | None:
    found = _STATUS.search(text)
    return int(found.group(1)) if found else None


def _code(text: str) -> str | None:
    found = _CODE.search(text)
    return found.group(1) if found else None


_NO_CREDENTIALS = ("169.254.169.254", "token request", "imds")
"""Words of obstore's message when it found no credentials and asked the cloud's metadata service for some."""
_REFUSED = frozenset(
    {
        "InvalidAccessKeyId",
        "SignatureDoesNotMatch",
        "ExpiredToken",
        "InvalidToken",
        "TokenRefreshRequired",
        "AuthenticationFailed",
        "InvalidAuthenticationInfo",
        "NoAuthenticationInformation",
    }
)


class _Failure(OSError):
    """A failure of the store's operation: its message (see :func:`_reason`) and what most likely caused it:
    ``"bucket"`` (there is no such bucket), ``"missing"`` (no credentials), ``"refused"`` (credentials
    refused), ``"denied"`` (permission denied), ``"endpoint"`` (cannot be reached) or None."""

    def __init__(self, message: str, cause: str | None):
        super().__init__(message)
        self.cause = cause


def _cause(text: str) -> str | None:
    """What most likely made a request fail, from obstore's message (see :class:`_Failure`)."""
    status, code, lowered = _status(text), _code(text), text.lower()
    if code == "NoSuchBucket" or code == "ContainerNotFound":
        return "bucket"
    if code in _REFUSED or status == 401:
        return "refused"
    if any(word in lowered for word in _NO_CREDENTIALS):
        return "missing"
    if status == 403:
        return "denied"
    if status is None and any(needle in lowered for needle, _ in _NETWORK):
        return "endpoint"
    return None


def _reason(exc: BaseException) -> str:
    """A short reason for ``exc`` that holds nothing of the request or of the server's words but a status
    and an error code: ``412 Precondition Failed``, ``403 Forbidden (SignatureDoesNotMatch)``, ``connection refused``."""
    text = str(exc)
    if _cause(text) == "missing":
        return "no credentials found (the cloud's metadata service gave none)"
    found = _STATUS.search(text)
    if found:
        reason = found.group(1) + (f" {found.group(2)}" if found.group(2) else "")
        code = _code(text)
        return f"{reason} ({code})" if code else reason
    lowered = text.lower()
    for needle, reason in _NETWORK:
        if needle in lowered:
            return reason
    if isinstance(exc, FileNotFoundError):
        return "not found"
    return type(exc).__name__


class ObjectStore(StoreBase):
    """A :class:`~storeframes.cache.stores.base.Store` in a bucket: the value of ``a/b.parquet`` is the object ``<prefix>/a/b.parquet``.

    ``url`` is ``s3://bucket[/prefix]`` (or ``gs://``, ``az://``; see the module); the
    credentials and other settings come from the environment or ``storage_options``.
    A put is one atomic request (a multipart upload above 5 MB, completed at once), so
    there are never temporary values; ``put_if_absent`` is a conditional request
    (``If-None-Match: *``), exactly one of several writers wins. A server that does not
    support conditional writes refuses it and :attr:`conditional_writes` turns False
    (the cache then needs a coordinator for its leases). ``set_aside`` is a copy and a
    delete: a value replaced between the two is lost (and fetched again), and two
    callers setting one value aside at once may both be told True.

    Times (:meth:`mtime`, the ages :meth:`sweep` compares) are the server's
    ``Last-Modified``, to the second. Every failure is an :class:`OSError` naming the
    operation, the key and a short reason, never a credential. The store works across
    threads and processes, and is pickled as its URL and options. obstore does not
    survive a fork: in a child forked from a process that had sent requests, every
    operation raises an OSError saying so (where obstore would hang); start processes
    with ``spawn`` or ``forkserver``.
    """

    conditional_writes: bool
    """False once the server refused a conditional write: :meth:`put_if_absent` then raises at once."""

    def __init__(self, url: str, *, storage_options: Mapping[str, Any] | None = None):
        try:
            self._setup(url, dict(storage_options or {}))
            failure = None
        except ValueError as exc:  # raised afresh: none of the frames that read the credentials in its traceback
            failure = exc.with_traceback(None)
        finally:
            del storage_options
        if failure is not None:
            raise failure

    def _setup(self, url: str, options: dict[str, Any]) -> None:
        self._obstore = _obstore()
        cloud, scheme, container, prefix = self._parse(url)
        self._cloud = cloud
        self._location = f"{scheme}://{container}" + (f"/{prefix}" if prefix else "")
        self._container = container
        self._prefix = f"{prefix}/" if prefix else ""
        self._odd: set[str] = set()
        self._options = options
        self._secrets = self._credentials(self._options)
        self._config, self._client_options, self._retry, self._polars = self._settings(self._options)
        self.conditional_writes = True
        self._lock = threading.Lock()
        self._handle: Any = self._build()  # a bad option fails here, before any request
        self._pid = os.getpid()

    @shown_when_half_built
    def __repr__(self) -> str:
        return f"ObjectStore({self.location!r})"

    @property
    def location(self) -> str:
        """The store's URL, without credentials: ``s3://bucket/prefix``."""
        return self._location

    @property
    def capabilities(self) -> Capabilities:  # type: ignore[override]
        """Ranged reads; conditional writes (and so leases as objects) until the server refuses one."""
        conditional = self.conditional_writes
        return Capabilities(
            ranged_reads=True,
            conditional_writes=conditional,
            shared="everyone",
            leases="objects" if conditional else "coordinator",
        )

    def __str__(self) -> str:
        return self.location

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self.location, self._options))

    # -- configuration ------------------------------------------------------------------------------------

    @staticmethod
    def _parse(url: str) -> tuple[_Cloud, str, str, str]:
        """(cloud, scheme, bucket, prefix) of ``url``, or a ValueError that says what is wrong."""
        if not isinstance(url, str):
            raise ValueError(f"an object store URL must be a string such as {_SCHEMES}, got {type(url).__name__}")
        try:
            parts = urlsplit(url.strip())
            netloc = parts.netloc
        except ValueError:
            raise ValueError(f"not an object store URL (expected {_SCHEMES})") from None
        scheme = parts.scheme.lower()
        shown = url if "@" not in netloc else f"{scheme}://***@{netloc.rpartition('@')[2]}{parts.path}"
        if not scheme:
            raise ValueError(f"not an object store URL: {shown!r} has no scheme (expected {_SCHEMES})")
        cloud = _CLOUDS.get(scheme)
        if cloud is None:
            raise ValueError(f"not an object store URL: {shown!r} (unknown scheme {scheme!r}; expected {_SCHEMES})")
        if "@" in netloc and (cloud is not _AZURE or ":" in netloc.rpartition("@")[0]):
            raise ValueError(
                f"not an object store URL: {shown!r} holds credentials; pass them in storage_options "
                "or the environment instead"
            )
        if not netloc or netloc.startswith("@") or netloc.endswith("@"):
            raise ValueError(f"not an object store URL: {shown!r} names no bucket (expected {_SCHEMES})")
        if parts.query or parts.fragment:
            raise ValueError(f"not an object store URL: {shown!r} has a query or fragment")
        prefix = parts.path.strip("/")
        try:
            check_key(prefix, prefix=True)
        except ValueError as exc:
            raise ValueError(f"not an object store URL: {shown!r} has a malformed prefix ({exc})") from None
        return cloud, scheme, netloc, prefix

    def _credentials(self, options: Mapping[str, Any]) -> list[str]:
        """Every credential this store may use: to be kept out of any message."""
        found = [str(v) for k, v in options.items() if _CREDENTIAL.search(str(k))]
        found += [v for k, v in os.environ.items() if k.startswith(self._cloud.env) and _CREDENTIAL.search(k)]
        return sorted({s for s in found if len(s) >= 4}, key=len, reverse=True)

    def _endpoints(self, options: Mapping[str, Any]) -> builtins.list[str]:
        """Every endpoint set, in the options then in the environment, the one that wins first.

        All are checked, not only the winner: obstore has rules of its own on which wins
        (``AWS_ENDPOINT_URL_S3`` in the environment beats ``endpoint`` in the options).
        """
        given = {_short_key(self._cloud, str(k)): v for k, v in options.items()}
        found = [str(given[key]) for key in self._cloud.endpoint_keys if given.get(key)]
        found += [os.environ[name] for name in self._cloud.endpoint_env if os.environ.get(name)]
        emulator = given.get("use_emulator", next((os.environ[n] for n in _EMULATOR if n in os.environ), False))
        if self._cloud is _AZURE and _as_bool(emulator):  # obstore then sends plain http to Azurite's address
            found.append(os.environ.get("AZURITE_BLOB_STORAGE_URL") or _AZURITE)
        return found

    def _settings(
        self, options: Mapping[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any] | None, dict[str, str]]:
        """obstore's config, client options and retry config, and the storage options polars needs."""
        cloud = self._cloud
        config: dict[str, Any] = {}
        client: dict[str, Any] = {}
        retry: dict[str, Any] = {}
        polars: dict[str, str] = {}
        for raw, value in options.items():
            key = _short_key(cloud, str(raw))
            if key in _RETRY_KEYS:
                try:
                    if key == "max_retries":
                        retry["max_retries"] = int(value)
                    else:
                        retry["retry_timeout"] = timedelta(seconds=float(value))
                except (TypeError, ValueError):
                    raise ValueError(f"{self!r}: storage option {raw!r} must be a number") from None
            elif key == "allow_http":
                continue  # decided from the endpoint below
            elif key in _CLIENT_KEYS:
                client[key] = _as_bool(value) if key in _BOOLEAN_CLIENT_KEYS else str(value)
                polars[key] = str(value).lower() if isinstance(value, bool) else str(value)
            else:
                config[str(raw)] = value
                if cloud is _S3 and key in cloud.endpoint_keys:
                    name = "aws_endpoint_url"  # the spelling polars knows
                elif cloud is _AZURE:
                    name = str(raw)  # Azure's keys have several prefixes: as given
                else:
                    name = cloud.polars_prefix + key
                polars[name] = str(value).lower() if isinstance(value, bool) else str(value)
        endpoints = self._endpoints(options)
        for candidate in endpoints:
            self._check_endpoint(candidate)
        endpoint = endpoints[0] if endpoints else None
        if any(urlsplit(candidate).scheme.lower() == "http" for candidate in endpoints):  # on loopback, as checked
            client["allow_http"] = True
            polars["allow_http" if cloud is not _S3 else "aws_allow_http"] = "true"
        if cloud is _S3:
            config.setdefault("conditional_put", "etag")
            given = {_short_key(cloud, str(k)) for k in options}
            if endpoint is not None and not given & set(cloud.endpoint_keys):
                polars["aws_endpoint_url"] = endpoint  # from the environment: polars needs it too
            region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
            if region and not given & {"region", "default_region"}:
                polars["aws_region"] = region
        return config, client, retry or None, polars

    def _check_endpoint(self, endpoint: str) -> None:
        try:
            parts = urlsplit(endpoint)
            host = parts.hostname or ""
        except ValueError:
            raise ValueError(f"{self!r}: the endpoint is not a URL") from None
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https") or not host:
            raise ValueError(f"{self!r}: the endpoint must be an https:// URL (or http:// on {_LOOPBACK})")
        if scheme == "http" and not _is_loopback(host):
            raise ValueError(
                f"{self!r}: refusing the plain http endpoint on {host!r}: credentials and data would cross "
                f"the network unencrypted. Use an https:// endpoint, or http:// only on {_LOOPBACK}"
            )

    def _client(self) -> Any:
        """The obstore store to send a request with, made again in a forked child (a connection pool does not
        survive a fork); an OSError in a child forked after its parent sent requests, where obstore would hang."""
        global _requests_from
        pid = os.getpid()
        if _requests_from is None:
            _requests_from = pid
        elif _requests_from != pid:
            raise OSError(
                f"{self!r}: this process was forked from one that had used obstore, whose runtime does not "
                "survive a fork (its requests would hang); start processes with the 'spawn' or 'forkserver' "
                "method, or make them before the first request"
            )
        if self._pid == pid:
            return self._handle
        with self._lock:
            if self._pid != pid:
                self._handle = self._build()
                self._pid = pid
            return self._handle

    def _build(self) -> Any:
        try:
            return self._obstore.store.from_url(
                self.location,
                config=self._config or None,
                client_options=self._client_options or None,
                retry_config=self._retry,
            )
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # obstore's errors, and a Rust panic (not an Exception) on a bad option
            failure = ValueError(self._scrub(f"{self!r}: cannot use these settings: {_first_line(exc)[:200]}"))
        raise failure

    # -- errors ---------------------------------------------------------------------------------------------

    def _scrub(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def _failure(self, operation: str, key: str, exc: BaseException) -> OSError:
        """An OSError for ``exc``: the operation, the key, a short reason; a FileNotFoundError for a missing object."""
        cause = _cause(str(exc))
        if cause == "bucket":
            return _Failure(
                self._scrub(f"{self!r}: cannot {operation} {key!r}: the bucket {self._container!r} does not exist"),
                cause,
            )
        message = self._scrub(f"{self!r}: cannot {operation} {key!r}: {_reason(exc)}")
        if isinstance(exc, FileNotFoundError):
            return FileNotFoundError(errno.ENOENT, message, key)
        return _Failure(message, cause)

    def explain(self, error: OSError) -> str:
        """What most likely caused ``error`` of one of this store's operations, and the settings that decide it."""
        cloud, cause = self._cloud, error.cause if isinstance(error, _Failure) else None
        if cause == "bucket":
            return (
                f"no such bucket: {self._container!r} does not exist at this endpoint (a typo in the address, "
                f"or a bucket of another account or endpoint: {cloud.endpoint})"
            )
        if cause == "missing":
            return f"no {cloud.name} credentials were found: set {cloud.credentials}"
        if cause == "refused":
            return (
                f"the {cloud.name} credentials were refused (wrong, expired or of another account): {cloud.credentials}"
            )
        if cause == "denied":
            return (
                f"permission denied: these credentials may not write under {self.location} (a read-only "
                f"policy or role?): {cloud.credentials}"
            )
        if cause == "endpoint":
            return f"the endpoint cannot be reached: {cloud.endpoint}"
        return f"look at the address, the credentials ({cloud.credentials}) and the endpoint ({cloud.endpoint})"

    def _errors(self) -> tuple[type[BaseException], ...]:
        return (self._obstore.exceptions.BaseError, OSError)

    def _call(self, operation: str, key: str, call: Callable[[Any], T]) -> T:
        """``call(store)``, its failures raised as short OSErrors with no obstore exception chained to them."""
        store = self._client()
        try:
            return call(store)
        except _Failure:  # the store's own, already short
            raise
        except self._errors() as exc:
            failure = self._failure(operation, key, exc)
        raise failure  # outside the except: the original (with the request in it) is not kept as context

    # -- the Store operations -------------------------------------------------------------------------------

    def put(self, key: str, data: bytes) -> None:
        check_key(key)
        self._call("put", key, lambda store: self._obstore.put(store, key, data))

    def put_if_absent(self, key: str, data: bytes) -> bool:
        """As :meth:`Store.put_if_absent`: one conditional request (``If-None-Match: *``).

        Raises an :class:`OSError` when the server does not support conditional writes
        (and from then on without asking it again: :attr:`conditional_writes` is False).
        """
        return self.create(key, data) is not None

    def get(self, key: str) -> bytes:
        check_key(key)
        return bytes(self._call("get", key, lambda store: self._obstore.get(store, key).bytes()))

    def list(self, prefix: str = "") -> builtins.list[str]:
        return sorted(
            item.key
            for item in self._listing(prefix)
            if not item.key.endswith(_SET_ASIDE) and not any(part.startswith(".") for part in item.key.split("/"))
        )

    def delete(self, key: str) -> None:
        self._remove("delete", check_key(key))

    def _remove(self, operation: str, key: str) -> bool:
        """Delete the object ``key`` (any key: set-aside ones too); False when a server said it was not there."""
        try:
            self._call(operation, key, lambda store: self._obstore.delete(store, key))
        except FileNotFoundError:  # some servers answer 404 to deleting nothing (S3 does not)
            return False
        return True

    def mtime(self, key: str) -> float | None:
        info = self.head(key)
        return None if info is None else info.modified

    def set_aside(self, key: str) -> bool:
        """As :meth:`Store.set_aside`: a server-side copy to ``key + ".corrupt"`` (dated now), then a delete."""
        check_key(key)
        try:
            self._call("set aside", key, lambda store: self._obstore.copy(store, key, key + _SET_ASIDE))
        except FileNotFoundError:
            return False
        self.delete(key)
        return True

    def sweep(
        self, older_than_seconds: float, *, prefix: str = "", set_aside_older_than_seconds: float | None = None
    ) -> int:
        """As :meth:`Store.sweep`, over one listing. An object store has no temporary files (an aborted
        multipart upload is invisible to a listing: a lifecycle rule of the bucket removes those), so only
        set-aside values are removed."""
        age = older_than_seconds if set_aside_older_than_seconds is None else set_aside_older_than_seconds
        now = time.time()
        removed = 0
        failures: builtins.list[tuple[str, OSError]] = []
        for item in self._listing(prefix):
            if item.key.endswith(_SET_ASIDE) and (age <= 0 or now - item.modified >= age):
                try:
                    removed += self._remove("sweep", item.key)
                except OSError as exc:  # one object that cannot go does not stop the others
                    failures.append((item.key, exc))
        if failures:
            raise SweepError(failures, removed)
        return removed

    def usage(self, prefix: str = "") -> Usage:
        items = self._listing(prefix)
        return Usage(sum(i.size for i in items), sum(i.key.endswith(_SET_ASIDE) for i in items))

    # -- beyond the Store -----------------------------------------------------------------------------------

    def open(self, key: str) -> io.RawIOBase:
        """A read-only, seekable file of the value under ``key`` that fetches only the ranges read.

        A Parquet reader given it reads the footer and the row groups it needs, not the
        whole object. Raises :class:`FileNotFoundError` when there is no value; a failure
        while reading is an :class:`OSError` like any other of the store.
        """
        check_key(key)
        return _RangeFile(self, key, self._call("open", key, lambda store: self._obstore.open_reader(store, key)))

    def url(self, key: str) -> str:
        """The full URL of ``key``: ``s3://bucket/prefix/key``."""
        return f"{self.location}/{check_key(key)}"

    def locate(self, keys: Iterable[str]) -> tuple[builtins.list[str], dict[str, str] | None]:
        """What :func:`polars.scan_parquet` reads for ``keys``: their URLs and the ``storage_options`` it needs.

        The options hold the endpoint, the region, ``allow_http`` for a loopback
        endpoint, and the credentials given to this store (those of the environment
        polars reads itself). Keys holding glob characters (``*?[``) need ``glob=False``.
        """
        return [self.url(key) for key in keys], dict(self._polars) or None

    def _listing(self, prefix: str) -> builtins.list[Version]:
        """Every object whose key starts with ``prefix``, set-aside ones too, from one paged listing.

        obstore lists whole path segments, so the folder of the prefix is listed and the rest filtered here.
        Objects whose keys obstore refuses (an empty, ``.`` or ``..`` part, a control character: keys
        the cache never writes, which make obstore fail the whole page) are passed over and noted in
        :meth:`odd_keys`; the listing goes on after them.
        """
        check_key(prefix, prefix=True)
        folder = prefix.rpartition("/")[0] or None
        found = self._call("list", prefix, lambda store: self._past_odd(store, folder, None))
        return [_info(meta) for meta in found if str(meta["path"]).startswith(prefix)]

    def odd_keys(self) -> builtins.list[str]:
        """The keys (under the store's prefix) that listings passed over since the store was made, sorted."""
        with self._lock:
            return sorted(self._odd)

    def _past_odd(self, store: Any, folder: str | None, after: str | None) -> builtins.list[Any]:
        """The objects under ``folder`` (after the key ``after``), listed past the keys obstore refuses:
        after such a key, from the first key that cannot be below its bad part; the objects its page held
        before it, folder by folder (:meth:`_below`). An OSError when one is met twice (a server that
        does not start a listing where asked) or past :data:`_MOST_ODD` of them."""
        found: builtins.list[Any] = []
        met: set[str] = set()
        while True:
            try:
                for batch in self._obstore.list(store, folder, offset=after, chunk_size=1000):
                    found += batch
                return found
            except self._obstore.exceptions.InvalidPathError as exc:
                odd, resume = self._odd_key(exc)
            except ValueError:  # obstore refused the offset itself (a name it would encode)
                raise self._stuck(sorted(met)[-1] if met else str(after)) from None
            if odd in met or len(met) >= _MOST_ODD:
                raise self._stuck(odd)
            met.add(odd)
            with self._lock:
                self._odd.add(odd)
            low = max(([str(found[-1]["path"])] if found else []) + ([after] if after else []), default=None)
            found += self._below(store, folder, low, odd)
            after = resume

    def _stuck(self, odd: str) -> _Failure:
        return _Failure(f"{self!r}: cannot list past the object {odd!r}, whose key is not a valid name", None)

    def _odd_key(self, exc: BaseException) -> tuple[str, str]:
        """The key obstore refused (under the store's prefix) and the first key past every key below its
        first bad part: ``a/../b`` gives ``a/..0``. The error again when the message names no key."""
        text = str(exc)
        found = _ODD.search(text)
        key = found.group(1) or found.group(2) if found else None
        if key is None or not key.startswith(self._prefix):
            raise exc
        key = key[len(self._prefix) :]
        parts = key.split("/")
        for i, part in enumerate(parts):
            if part in ("", ".", ".."):
                return key, "/".join([*parts[:i], part]) + "0"
            control = next((j for j, c in enumerate(part) if ord(c) < 32), None)
            if control is not None:  # past every name with this start and a control character next
                return key, "/".join([*parts[:i], part[:control]]) + " "
        raise exc

    def _below(self, store: Any, folder: str | None, after: str | None, odd: str) -> builtins.list[Any]:
        """The objects between ``after`` and the refused key ``odd``: obstore lost them with its page.
        Folder by folder down to the one holding the bad part; in that folder only names sorting before
        the bad part (``""``, ``.``, ``..``: names the cache never writes) are left out. An OSError when a
        folder on the way holds a bad name as well (it cannot be listed by folder)."""
        found: builtins.list[Any] = []
        parts = odd.split("/")
        depth = len(folder.split("/")) if folder else 0
        while depth < len(parts) - 1 and not _bad_part(parts[depth]):
            level = "/".join(parts[:depth]) or None
            ancestor = "/".join(parts[: depth + 1])
            try:
                listed = self._obstore.list_with_delimiter(store, level)
            except self._obstore.exceptions.InvalidPathError:  # a bad name here too: what the page held is lost
                raise self._stuck(odd) from None
            for meta in listed["objects"]:
                if (after is None or str(meta["path"]) > after) and str(meta["path"]) < odd:
                    found.append(meta)
            for sub in listed["common_prefixes"]:
                sub = str(sub).rstrip("/")
                if sub == ancestor or sub + "/" > odd:
                    continue
                if after is None or sub + "/" > after:
                    found += self._past_odd(store, sub, None)
                elif after.startswith(sub + "/"):
                    found += self._past_odd(store, sub, after)
            depth += 1
        return sorted(found, key=lambda meta: str(meta["path"]))

    def head(self, key: str) -> Version | None:
        check_key(key)
        try:
            return _info(self._call("look at", key, lambda store: self._obstore.head(store, key)))
        except FileNotFoundError:
            return None

    def _unsupported(self, key: str) -> OSError:
        return OSError(
            f"{self!r}: cannot put {key!r} if absent: the server does not support conditional writes "
            "(If-None-Match / If-Match); use a coordinator for the leases of this cache"
        )

    def create(self, key: str, data: bytes) -> Version | None:
        """Write ``key`` unless it exists: its version (e_tag), or None when a value was there."""
        check_key(key)
        if not self.conditional_writes:
            raise self._unsupported(key)
        errors, store = self._obstore.exceptions, self._client()
        for attempt in range(5):
            try:
                result = self._obstore.put(store, key, data, mode="create", use_multipart=False)
                return Version(key, len(data), time.time(), result.get("e_tag"), result.get("version"))
            except (errors.AlreadyExistsError, errors.PreconditionError):
                return None
            except (errors.BaseError, OSError) as exc:  # what the server said is not kept: it may repeat a credential
                status, code, unsupported = (
                    _status(str(exc)),
                    _code(str(exc)),
                    isinstance(exc, errors.NotSupportedError),
                )
                failure = self._failure("put if absent", key, exc)
            if unsupported or status == 501 or code == "NotImplemented":
                self.conditional_writes = False
                raise self._unsupported(key)
            if status != 409 or attempt == 4:  # 409: a conflicting write was under way; S3 says try again
                raise failure
            time.sleep(0.05 * (attempt + 1))
        raise AssertionError("unreachable")

    def replace(self, key: str, data: bytes, expected: Version) -> Version | None:
        """Write ``key`` if it still is ``version`` (If-Match): the new version, or None when it changed or went."""
        check_key(key)
        errors, store = self._obstore.exceptions, self._client()
        mode: dict[str, str] = {"e_tag": expected.e_tag} if expected.e_tag else {}
        if expected.version:
            mode["version"] = expected.version
        try:
            result = self._obstore.put(store, key, data, mode=mode, use_multipart=False)
            return Version(key, len(data), time.time(), result.get("e_tag"), result.get("version"))
        except (errors.PreconditionError, errors.AlreadyExistsError, FileNotFoundError):
            return None
        except (errors.BaseError, OSError) as exc:
            failure = self._failure("replace", key, exc)
        raise failure


def _rebuild(url: str, options: dict[str, Any]) -> ObjectStore:
    return ObjectStore(url, storage_options=options)
