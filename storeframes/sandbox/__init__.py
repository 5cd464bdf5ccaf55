"""The sandbox: a faithful, deterministic fake of the whole service.

It runs the demo, the notebooks, the tests and the benchmarks with no token and no
network. Get a client of it in-process with :func:`storeframes.sandbox.client`, or serve
it on loopback with ``storeframes sandbox serve --port 8765`` (key: :data:`SANDBOX_KEY`).
It is reached only through the transport: nothing else in the package imports it, and
``import storeframes`` does not load it until it is used.

The world (apps, histories, rankings, benchmarks) lives in
:mod:`storeframes.sandbox.world`; the service's behaviour (envelope, errors, limits,
costs, faults) in :mod:`storeframes.sandbox.service`; the forms of its answers where the service
documents none in :mod:`storeframes.sandbox.dialect`; scripted moves on given days (a rank, a
new title, an outage) in :mod:`storeframes.sandbox.script`.
"""

from ._client import SANDBOX_BASE_URL, SandboxClient, client
from .dialect import Dialect
from .script import Script
from .server import SandboxServer
from .service import API_PREFIX, SANDBOX_KEY, Arrival, Faults, Latency, Reply, SandboxService
from .transport import SandboxTransport
from .world import World

__all__ = [
    "API_PREFIX",
    "SANDBOX_BASE_URL",
    "SANDBOX_KEY",
    "Arrival",
    "Dialect",
    "Faults",
    "Latency",
    "Reply",
    "SandboxClient",
    "SandboxServer",
    "SandboxService",
    "SandboxTransport",
    "Script",
    "World",
    "client",
]
