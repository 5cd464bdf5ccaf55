"""A real IPython shell for tests, recording what is displayed (``captured.outputs``)."""

from __future__ import annotations

import builtins
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def ipython_shell(tmp_path: Any, monkeypatch: Any, *, kernel: bool = False) -> Iterator[Any]:
    """An ``InteractiveShell`` (with a ``kernel``, as a Jupyter kernel's has, when ``kernel``); what it
    displays is captured; ``__main__`` and the builtins it adds are restored afterwards."""
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output
    from traitlets.config import Config

    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    main, names = sys.modules["__main__"], set(vars(builtins))
    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    try:
        with capture_output() as captured:
            if kernel:
                shell.kernel = object()
            yield captured
    finally:
        InteractiveShell.clear_instance()
        sys.modules["__main__"] = main
        for name in set(vars(builtins)) - names:
            delattr(builtins, name)
