"""The sandbox: a faithful, deterministic fake of the whole service.

It runs the demo, the notebooks, the tests and the benchmarks with no token and no
network. Start it in-process with :meth:`storeframes.Client.sandbox`, or on loopback
with ``storeframes sandbox serve --port 8765`` (key: :data:`SANDBOX_KEY`).

The world (apps, histories, rankings, benchmarks) lives in
:mod:`storeframes.sandbox.world`; the service's behaviour (envelope, errors, limits,
costs, faults) in :mod:`storeframes.sandbox.service`.
"""

from .server import SandboxServer
from .service import API_PREFIX, SANDBOX_KEY, Arrival, Dialect, Faults, Reply, SandboxService
from .transport import SandboxTransport
from .world import World

SANDBOX_BASE_URL = "https://sandbox.storeframes.invalid" + API_PREFIX
"""The base URL of the in-process sandbox (the transport answers it; nothing resolves it)."""

__all__ = [
    "API_PREFIX",
    "SANDBOX_BASE_URL",
    "SANDBOX_KEY",
    "Arrival",
    "Dialect",
    "Faults",
    "Reply",
    "SandboxServer",
    "SandboxService",
    "SandboxTransport",
    "World",
]
