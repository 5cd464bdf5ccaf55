"""A store module whose package is not installed, as a registered backend without its extra."""

import storeframes_toy_backend_not_installed  # noqa: F401
