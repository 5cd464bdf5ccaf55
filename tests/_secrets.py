"""Find API tokens in files the suite wrote: cassettes, cache folders, demo output.

A file is read the way a user would read it back: gzip and zstd are unpacked, Parquet is
decoded (every text column and the key-value metadata, since compressed pages hide plain bytes),
and everything else is scanned as bytes. Python files are skipped (tests write helper
scripts that name the sandbox key on purpose).
"""

from __future__ import annotations

import contextlib
import gzip
import os
import re
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from storeframes.sandbox import SANDBOX_KEY

__all__ = ["KEY_SHAPED", "TEST_TOKENS", "leaks_in", "secrets"]

TEST_TOKENS = (
    SANDBOX_KEY,
    "not-the-key",
    "not-a-real-token-000",
    "top-secret-token",
    "env-secret-123",
)
"""Every token the suite sends or sets (the ``sk-live-...`` ones are caught by shape)."""

KEY_SHAPED = re.compile(
    rb"sk-live-[A-Za-z0-9]{6,}"
    rb"|(?i:x-service-key|api[_-]?key|token)[\"']?\s*[:=]\s*[\"']?(?!REDACTED|\*\*\*)[A-Za-z0-9_\-]{8,}"
)
"""A token's shape: the ``sk-live-`` form the tests use, or a key-like field holding an unmasked value."""


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
