"""Find API tokens in files the suite wrote: cassettes, cache folders, demo output.

The shape of a token (:data:`KEY_SHAPED`) is the conformance kit's, which scans what it writes the same way.

A file is read the way a user would read it back: gzip and zstd are unpacked, Parquet is
decoded (every text column and the key-value metadata, since compressed pages hide plain bytes),
and everything else is scanned as bytes. Python files are skipped (tests write helper
scripts that name the sandbox key on purpose).
"""

from __future__ import annotations

import contextlib
import gzip
import os
import traceback
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from storeframes.conformance.scrub import KEY_SHAPED
from storeframes.sandbox import SANDBOX_KEY

__all__ = ["KEY_SHAPED", "TEST_TOKENS", "chain", "check_plan_keeps", "exposures", "leaks_in", "secrets"]

TEST_TOKENS = (
    SANDBOX_KEY,
    "not-the-key",
    "not-a-real-token-000",
    "top-secret-token",
    "env-secret-123",
)
"""Every token the suite sends or sets (the ``sk-live-...`` ones are caught by shape)."""


def secrets() -> list[str]:
    """The tokens to look for: the test tokens and the one in the environment, if any."""
    env = os.environ.get("STOREFRAMES_API_KEY", "")
    return [t for t in (*TEST_TOKENS, env) if t]


def _texts(path: Path) -> Iterable[bytes]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:  # gone since the folder was listed (a database's -shm file when it closed)
        return
    yield data
    if path.name.endswith(".gz"):
        with contextlib.suppress(OSError, EOFError):
            yield gzip.decompress(data)
    if path.name.endswith(".zst"):
        with (
            contextlib.suppress(OSError, pa.ArrowException),
            pa.CompressedInputStream(pa.BufferReader(data), "zstd") as stream,
        ):
            yield bytes(stream.read())
    if path.suffix == ".parquet":
        try:
            table = pq.read_table(path)
            footer = pq.read_metadata(path).metadata or {}
        except (OSError, pa.ArrowException):
            return
        meta = {**(table.schema.metadata or {}), **footer}
        yield b"\n".join(k + b"=" + v for k, v in meta.items())
        for column in table.columns:
            if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
                values = pc.unique(column).drop_null().to_pylist()
                yield "\n".join(values).encode()


def leaks_in(root: Path, *, skip: tuple[str, ...] = (".py",)) -> list[str]:
    """Every ``file: what`` under ``root`` that holds a token or a key-shaped string."""
    found: list[str] = []
    wanted = [s.encode() for s in secrets()]
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix not in skip):
        for text in _texts(path):
            hits = [s.decode() for s in wanted if s in text]
            shaped = KEY_SHAPED.search(text)
            if hits or shaped:
                what = ", ".join(hits) or shaped.group(0).decode(errors="replace")
                found.append(f"{path.relative_to(root)}: {what}")
                break
    return found


# -- what a raised error shows ---------------------------------------------------------------------------------


def chain(exc: BaseException | None) -> Iterator[BaseException]:
    """``exc`` and every error it chains to (``__cause__`` and ``__context__``), each once."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        todo += [current.__context__, current.__cause__]


def _shown(value: Any, depth: int = 0) -> Iterator[str]:
    """What a debugger, ``pytest -l`` or an error tracker shows of ``value``: its repr, and two levels down
    the items of containers and the ``request`` and ``headers`` of objects."""
    try:
        yield repr(value)
    except Exception:
        return
    if depth >= 2:
        return
    children: list[Any] = []
    if isinstance(value, dict):
        children = [*value.keys(), *value.values()]
    elif isinstance(value, (list, tuple, set, frozenset)):
        children = list(value)
    elif not isinstance(value, (str, bytes, int, float)):
        for name in ("request", "_request", "headers", "extensions"):
            with contextlib.suppress(Exception):
                children.append(getattr(value, name))
    for child in children:
        yield from _shown(child, depth + 1)


def _not_a_test(filename: str) -> bool:
    return "/tests/" not in filename


def exposures(exc: BaseException, *secrets: str, frames: Callable[[str], bool] = _not_a_test) -> list[str]:
    """Every place of a raised error that shows one of ``secrets``: the message, repr and attributes of it and
    of every error it chains to, and every local of the frames of their tracebacks whose file ``frames``
    accepts (by default all but the tests' own, which hold what they made on purpose), also as
    ``traceback``'s ``capture_locals`` formats them."""
    found: list[str] = []
    for error in chain(exc):
        texts = [f"message: {error}", f"repr: {error!r}"]
        with contextlib.suppress(TypeError):
            texts.append(f"attributes: {vars(error)!r}")
        tb = error.__traceback__
        while tb is not None:
            code = tb.tb_frame.f_code
            if frames(code.co_filename):
                for name, value in tb.tb_frame.f_locals.items():
                    texts += [f"{code.co_name}.{name}: {text}" for text in _shown(value)]
            tb = tb.tb_next
        found += [text[:200] for text in texts if any(secret in text for secret in secrets)]
        formatted = traceback.TracebackException.from_exception(error, capture_locals=True)
        for frame in formatted.stack:
            if frames(frame.filename) and any(secret in repr(frame.locals) for secret in secrets):
                found.append(f"capture_locals formatting of {frame.name}")
    return found


def check_plan_keeps(lazy: Any, secret: str, *, call: str = "sf.scan") -> None:
    """A LazyFrame that reads a bucket when collected, serialised and pickled: refused (polars wraps what the
    source raises) without ``secret`` in the error, or written without it; with cloudpickle, which polars
    writes Python sources with, refused by the source itself, naming ``call``."""
    import pickle

    for save in (lazy.serialize, lambda: pickle.dumps(lazy)):
        try:
            plan = save()
        except Exception as refused:  # whatever polars raises, the secret is not in it
            assert secret not in repr(refused) and secret not in str(refused)
            try:
                import cloudpickle  # noqa: F401 - polars writes Python sources with it
            except ImportError:
                continue
            assert "not serialised, as it would carry the cache's access" in str(refused)
            assert f"call {call} again" in str(refused)
        else:
            assert secret.encode() not in plan
