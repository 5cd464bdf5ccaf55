"""``reference/environment.md``: every environment variable storeframes reads, and those its HTTP library and
object stores read for it.

The names of storeframes' own variables come from the constants the package reads them by; the meanings are
declared here (:data:`OWN`, :data:`CLOUD`), and the docs tests hold the lists to the code: every variable the
package names in its source is here, and every one here is read.

>>> "STOREFRAMES_API_KEY" in [name for name, _ in own()]
True
"""

from __future__ import annotations

from storeframes import client
from storeframes._tracebacks import ENV_FULL_TRACEBACK
from storeframes.agent.bearer import ENV_MCP_TOKEN
from storeframes.cache.behind import ENV_EXIT_WAIT, EXIT_WAIT
from storeframes.cache.opening import ENV_CACHE_DIR
from storeframes.coord.state import ENV_COORDINATOR, ENV_STATE_DIR
from storeframes.fetch.settings import ENV_OFFLINE, ENV_PROGRESS
from storeframes.lake.sql import ENV_MEMORY_LIMIT, MEMORY_LIMIT
from storeframes.wire import http
from storeframes.workspaces import ENV_CONFIG, ENV_WORKSPACE

from .markdown import code, table

OWN: list[tuple[str, str]] = [
    (client.ENV_API_KEY, "the token; sent only in the service's key header, never shown"),
    (client.ENV_BASE_URL, "the service's base address, ending with `/api/public/store` (https)"),
    (
        ENV_WORKSPACE,
        "a workspace of `storeframes.toml` (`acme`): the token, service, cache and month budget of the default "
        "client and of `storeframes cache`, `track`, `publish`, `conformance`, `mcp` and `spend` "
        "(`--workspace` wins)",
    ),
    (
        ENV_CONFIG,
        "the workspaces file, when the working directory holds no `storeframes.toml` (before the user's config "
        "folder's); `--config` and `config=` name one directly",
    ),
    (ENV_CACHE_DIR, "the cache: a folder or a bucket (`s3://bucket/prefix`); by default the user's cache folder"),
    (ENV_OFFLINE, "`1`, `true`, `yes` or `on`: send nothing, answer from the cache only (a client's `offline=` wins)"),
    (ENV_PROGRESS, "`0`, `false`, `no` or `off`: no progress bar for calls of many requests (a log, a CI job)"),
    (
        ENV_COORDINATOR,
        "who shares the token's rate window and leases: `machine` (the default) or a Redis address "
        "(`redis://`, `rediss://`, `unix://`) for a team",
    ),
    (ENV_STATE_DIR, "the folder of the machine's shared rate window and leases (by default the user's state folder)"),
    (
        ENV_EXIT_WAIT,
        f"seconds the exit waits for writes to a cache still under way (a number >= 0; default {EXIT_WAIT:g})",
    ),
    (ENV_MEMORY_LIMIT, f"the memory DuckDB may use for `sf.sql` (default `{MEMORY_LIMIT}`)"),
    (ENV_MCP_TOKEN, "the bearer token `storeframes mcp --transport http` requires (else a new one at each start)"),
    (
        ENV_FULL_TRACEBACK,
        "`1`: a refused call's traceback keeps every frame (by default it is cut to the caller's line)",
    ),
    (http.ENV, "`httpx2` or `httpx`: force the HTTP library (by default httpx2 where installed, else httpx)"),
]
"""storeframes' own variables: (name, meaning)."""

CLOUD: list[tuple[str, str]] = [
    ("AWS_ENDPOINT_URL_S3", "an S3 endpoint (a MinIO or other S3-compatible server); wins over the next two"),
    ("AWS_ENDPOINT_URL", "an S3 endpoint"),
    ("AWS_ENDPOINT", "an S3 endpoint"),
    ("AWS_REGION", "the S3 region (polars' reads are given it too)"),
    ("AWS_DEFAULT_REGION", "the S3 region, when `AWS_REGION` is not set"),
    ("GOOGLE_BASE_URL", "a Google Cloud Storage endpoint"),
    ("AZURE_STORAGE_ENDPOINT", "an Azure Blob Storage endpoint"),
    ("AZURE_ENDPOINT", "an Azure Blob Storage endpoint"),
    ("AZURE_STORAGE_USE_EMULATOR", "`true`: use the Azurite emulator"),
    ("AZURE_USE_EMULATOR", "`true`: use the Azurite emulator"),
    ("AZURITE_BLOB_STORAGE_URL", "the emulator's address (default `http://127.0.0.1:10000`)"),
]
"""Variables of the clouds that a bucket cache reads, besides their credentials: (name, meaning)."""

CREDENTIALS = (
    "`AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` (and `AWS_SESSION_TOKEN`), or `AWS_PROFILE`; "
    "`GOOGLE_APPLICATION_CREDENTIALS` or `GOOGLE_SERVICE_ACCOUNT`; `AZURE_STORAGE_ACCOUNT_NAME` with "
    "`AZURE_STORAGE_ACCOUNT_KEY` or `AZURE_STORAGE_SAS_TOKEN`, or `AZURE_CLIENT_ID`, `AZURE_CLIENT_SECRET` and "
    "`AZURE_TENANT_ID`"
)

HTTP: list[tuple[str, str]] = [
    ("HTTPS_PROXY", "the proxy for https requests (`http://proxy.example:3128`)"),
    ("HTTP_PROXY", "the proxy for plain http requests (the sandbox served on loopback)"),
    ("ALL_PROXY", "a proxy for every request"),
    ("NO_PROXY", "hosts reached without the proxy (comma-separated)"),
    ("SSL_CERT_FILE", "a CA bundle (PEM) to trust instead of the default one: a corporate CA"),
    ("SSL_CERT_DIR", "a folder of CA certificates to trust"),
]
"""What the HTTP library (httpx or httpx2) reads for the client storeframes makes (``trust_env``, its default)."""


def own() -> list[tuple[str, str]]:
    """storeframes' own variables, by name."""
    return sorted(OWN)


def declared() -> set[str]:
    """Every variable named on the page."""
    return {name for name, _ in [*OWN, *CLOUD, *HTTP]}


def page() -> str:
    """The page's Markdown."""
    return "\n".join(
        [
            "# Environment variables",
            "",
            "## storeframes",
            "",
            "Where a setting can also be given in Python (`sf.configure(...)`, `sf.Client(...)`) or on the "
            "command line, that wins over the environment.",
            "",
            table(("variable", "meaning"), [(code(n), m) for n, m in own()]),
            "",
            "## The HTTP library",
            "",
            "The client storeframes makes lets its HTTP library (httpx, or httpx2 where installed) read the "
            "usual variables, so a proxy or a corporate CA needs no code. A client passed as `http_client=` "
            "keeps its own settings.",
            "",
            table(("variable", "meaning"), [(code(n), m) for n, m in HTTP]),
            "",
            "## A cache or a lake in a bucket",
            "",
            "A bucket cache (`s3://`, `gs://`, `az://`) and a Delta Lake in a bucket take their credentials "
            f"from each cloud's usual variables ({CREDENTIALS}), or from `storage_options`. storeframes also "
            "reads these, to check an endpoint before it is used and to keep every credential out of its "
            "messages:",
            "",
            table(("variable", "meaning"), [(code(n), m) for n, m in CLOUD]),
            "",
            "## A workspace",
            "",
            "A workspace of `storeframes.toml` names the variables its token (`api_key_env`) and the service's "
            "address (`base_url_env`) are read from; by default they are `STOREFRAMES_API_KEY` and "
            "`STOREFRAMES_BASE_URL` ([The workspaces file](workspaces-file.md)).",
            "",
            "## A tracker spec",
            "",
            "`$NAME` or `${NAME}` in a `[notify]` address or a `[publish]` lake is the environment variable "
            "`NAME`, so a spec kept in git holds no password ([The tracker spec](tracker-spec.md)).",
            "",
        ]
    )
