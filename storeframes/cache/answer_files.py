"""The raw answers: written as format 2 (the body's bytes, scrubbed of the token, zstd), read as
format 2 or 1 (gzip JSON of the parsed result), named, listed, and asked their format.

A kept answer is read within a cap, as the request path reads a body: its file and its
content may hold at most :attr:`AnswerFiles.most` bytes (the largest body a client accepts,
``max_body_bytes``) plus :data:`HEAD_ROOM` for its header, decompressed a piece at a time
(:func:`~storeframes.json_bodies.inflate`), so a few kilobytes that would inflate to gigabytes
are stopped at the cap and set aside, never held in memory whole."""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

import orjson

from .._version import __version__
from ..answers import Entry, Response
from ..json_bodies import DEFAULT_MAX_BODY_BYTES, TooLarge, inflate, parse_answer
from .files import Files
from .layout import ANSWERS, FORMAT, GZ, ZST, answer_stem, in_folder, index_key, name, prefix
from .parquet import unreadable, unzstd, zstd

HEAD_ROOM = 1024 * 1024
"""The bytes a kept answer may hold beyond its body's cap: its header line (the parameters it answers)."""

_ESCAPED = re.compile(rb"\\(?:/|u00[2-7])")
"""Where a body may write a printable ASCII character (one of the token's) as an escape."""
_ESCAPE = re.compile(r"\\(\\|/|u00[2-7][0-9a-fA-F])")


def _plain(found: re.Match[str]) -> str:
    """An escape of a printable ASCII character as the character (``\\/`` as ``/``); others as they are."""
    code = found.group(1)
    if code == "/":
        return "/"
    if code.startswith("u"):
        char = chr(int(code[1:], 16))
        if 0x20 <= ord(char) < 0x7F and char not in '"\\':
            return char
    return found.group(0)


def _scrubbed(data: bytes, scrub: Callable[[str], str]) -> tuple[bytes, bool]:
    """``data`` (JSON in UTF-8) with the token masked by ``scrub``, and whether it held the token.

    The token is ASCII without control characters, so it is found in the bytes read as
    Latin-1 (each byte one character) and masked there, other bytes untouched. Where the
    body writes a printable ASCII character as an escape (``\\/``, ``\\u0041``), which
    could hide the token, those escapes are written as the characters first (the same JSON).
    """
    text = data.decode("latin-1")
    escaped = _ESCAPED.search(data)
    plain = _ESCAPE.sub(_plain, text) if escaped else text
    masked = scrub(plain)
    if masked is plain or masked == plain:
        return (data if plain is text else plain.encode("latin-1")), False
    return masked.encode("latin-1"), True


def _result_json(response: Response) -> bytes:
    """The JSON of an answer made or changed by the client: its result and echo, in the service's envelope.

    orjson writes it; what orjson refuses (a lone surrogate, a key that is not text, an
    integer beyond 64 bits) the standard library writes, losslessly: text UTF-8 cannot hold
    (a lone surrogate, half an emoji) as a ``\\u`` escape, which reads back as the same string.
    """
    envelope = {"result": response.result, "metadata": {"request": {"params": dict(response.echo)}}}
    try:
        return orjson.dumps(envelope)
    except (orjson.JSONEncodeError, TypeError):
        pass
    try:
        return json.dumps(envelope, separators=(",", ":"), ensure_ascii=False).encode()
    except UnicodeEncodeError:
        return json.dumps(envelope, separators=(",", ":"), ensure_ascii=True).encode()


def answer_file(entry: Entry, response: Response, scrub: Callable[[str], str]) -> bytes:
    """The bytes of the answer file of ``entry`` (format 2): a zstd frame of the header line, then the body.

    The body is the bytes that arrived, scrubbed of the token. An answer without them
    (made or changed by the client), one whose body held the token, or one not in UTF-8, is
    kept as the JSON of its result (:func:`_result_json`), scrubbed as text.
    """
    head = {
        "format": FORMAT,
        "storeframes": __version__,
        "endpoint": entry.endpoint,
        "service": entry.service,
        "params": entry.params,
        "fetched_at": entry.fetched_at.astimezone(UTC).isoformat(),
        "cost": entry.cost,
        "max_credit_cost": entry.max_credit_cost,
        "status": response.status,
        "attempts": response.attempts,
        "available": entry.available,
    }
    body = response.body
    kind = "answer"
    payload = b""
    if body is not None and json.detect_encoding(body[:4]).startswith("utf-8"):
        payload, held = _scrubbed(body, scrub)
        if held:  # masked inside the body: kept as the parsed result instead, as format 1 did
            body = None
    if body is None or not payload:
        kind = "result"
        payload, _ = _scrubbed(_result_json(response), scrub)
    head = {**head, "body": kind, "bytes": len(payload), "crc32": zlib.crc32(payload)}
    line, _ = _scrubbed(orjson.dumps(head), scrub)
    return zstd(line + b"\n" + payload)


def _answer_parts(data: bytes, limit: int) -> tuple[Any, bytes]:
    """The header (parsed) and the body of an answer file of format 2, of at most ``limit`` bytes in all;
    raises OSError or ValueError when damaged or larger."""
    content = unzstd(data, limit=limit)
    cut = content.find(b"\n")
    if cut < 0:
        raise ValueError("no header line")
    return orjson.loads(content[:cut]), content[cut + 1 :]


def _answer_of(head: Mapping[str, Any], body: bytes) -> tuple[Any, Mapping[str, Any]]:
    """The result and the echo (``metadata.request.params``) of a kept body; raises ValueError when damaged.

    A body that arrived is read as a fresh one is (:func:`~storeframes.json_bodies.parse_answer`);
    the JSON of a result the client made is read as written (the standard library where
    orjson refuses it: a lone surrogate comes back as it was kept).
    """
    if head.get("bytes") != len(body) or head.get("crc32") != zlib.crc32(body):
        raise ValueError("the body is damaged (its size or CRC-32 is not the header's)")
    kind = head.get("body")
    if kind == "answer":
        parsed = parse_answer(body)
    elif kind == "result":
        try:
            parsed = orjson.loads(body)
        except orjson.JSONDecodeError:
            parsed = json.loads(body)
    else:
        raise ValueError(f"a body of an unknown kind {kind!r}")
    if not isinstance(parsed, dict) or "result" not in parsed:
        raise ValueError("the body is not an answer")
    meta = parsed.get("metadata")
    request = meta.get("request") if isinstance(meta, dict) else None
    echo = request.get("params") if isinstance(request, dict) else None
    return parsed["result"], echo if isinstance(echo, dict) else {}


def format_of(head: bytes | None) -> int:
    """The format an answer file's first bytes say it has (:data:`FORMAT` when they say none)."""
    found = re.match(rb'\s*\{\s*"format"\s*:\s*(\d+)', head or b"")
    return int(found.group(1)) if found else FORMAT


class AnswerFiles:
    """The raw answers of a cache: their names (of format 2 or 1), writing, reading and their formats."""

    def __init__(self, files: Files):
        self._files = files
        self._gz: set[str] = set()  # entries whose answer is of format 1 (``.json.gz``)
        self.most = DEFAULT_MAX_BODY_BYTES
        """The largest body of a kept answer read (its file and its content may hold :data:`HEAD_ROOM` more):
        a larger one is set aside. The client raises it to its ``max_body_bytes``."""

    def of_format_1(self, entry_ids: Iterable[str]) -> None:
        """Note that the answers of ``entry_ids`` are of format 1 (as an index file says), so they are
        asked for by that name first."""
        with self._files.lock:
            self._gz.update(entry_ids)

    def keys(self, entry: Entry) -> tuple[str, str]:
        """The two names the answer of ``entry`` may have (format 2, format 1), the likelier first."""
        stem = answer_stem(entry)
        return (stem + GZ, stem + ZST) if entry.id in self._gz else (stem + ZST, stem + GZ)

    def key(self, entry: Entry) -> str:
        """The name of the answer of ``entry``, as this version writes it or as it was found."""
        return self.keys(entry)[0]

    def load(self, entry: Entry) -> Response | None:
        """The cached answer of ``entry`` (see :meth:`storeframes.cache.Cache.load`); None when its file
        is gone, unreadable (set aside with its index file) or of a newer format: the caller forgets it."""
        files = self._files
        keys = self.keys(entry)
        key = keys[0]
        limit = self.most + HEAD_ROOM
        try:
            data, key = self._get(entry, keys, limit)
            try:
                if key.endswith(ZST):
                    head, body = _answer_parts(data, limit)
                else:
                    head, body = json.loads(inflate(data, "gzip", limit)), None
            except TooLarge:
                raise ValueError(
                    f"it decompresses to more than {limit:,} bytes, past the largest answer kept "
                    f"(max_body_bytes={self.most:,} and its header)"
                ) from None
            if not isinstance(head, dict):
                raise ValueError("not an answer")
            written = head.get("format")
            if isinstance(written, int) and not isinstance(written, bool) and written > FORMAT:
                files.skip_newer(key, entry.id)  # its files stay: the newer version reads them
                return None
            if written != (FORMAT if body is not None else 1) or head["params"] != dict(entry.params):
                raise ValueError("the answer does not match its index entry")
            if body is None:
                result, echo = head["result"], head.get("echo") or {}
            else:
                result, echo = _answer_of(head, body)
            return Response(
                endpoint=entry.endpoint,
                params=dict(entry.params),
                result=result,
                cost=int(head["cost"]),
                max_credit_cost=int(head["max_credit_cost"]),
                status=int(head["status"]),
                fetched_at=datetime.fromisoformat(head["fetched_at"]),
                echo=echo,
                attempts=int(head.get("attempts", 1)),
                from_cache=True,
                entry=entry.id,
            )
        except FileNotFoundError:  # an index whose answer is gone: set the index aside quietly
            for called in keys:
                if files.is_folder(called):
                    files.warn_once(
                        f"read {called}",
                        f"cache file {name(called)} is a folder; treated as not cached, left where it is",
                    )
            files.set_aside(index_key(entry), None)
        except unreadable(RecursionError) as exc:
            files.set_aside(key, exc, partners=[index_key(entry)])
        return None

    def _get(self, entry: Entry, keys: tuple[str, str], most: int) -> tuple[bytes, str]:
        """The bytes of the answer of ``entry`` (at most ``most``) and its name: under the likelier name, else
        the other."""
        files = self._files
        try:
            return files.read(keys[0], most), keys[0]
        except FileNotFoundError:
            data = files.read(keys[1], most)
        with self._files.lock:
            if keys[1].endswith(GZ):
                self._gz.add(entry.id)
            else:
                self._gz.discard(entry.id)
        return data, keys[1]

    def answered(self, endpoint: str) -> dict[str, str]:
        """The entries of ``endpoint`` whose raw answer is in the store, each with the suffix of its
        answer's name (``.json.zst``, or ``.json.gz`` of format 1); one listing."""
        folder = prefix("answers", endpoint)
        found: dict[str, str] = {}
        for key in self._files.ours(self._files.storage.list(folder)):
            for suffix in ANSWERS:
                if key.endswith(suffix) and in_folder(key, folder):
                    found.setdefault(name(key).removesuffix(suffix), suffix)
        return found

    def format(self, entry: Entry) -> int:
        """The format the answer of ``entry`` says it has (:data:`FORMAT` when it cannot tell)."""
        for key in self.keys(entry):
            head = self.head(key)
            if head is not None:
                return format_of(head)
        return FORMAT

    def head(self, key: str) -> bytes | None:
        """The first bytes of an answer file, decompressed; None when it is gone, b"" when unreadable."""
        try:
            data = self._files.read(key, self.most + HEAD_ROOM)
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return b""
        try:
            if key.endswith(ZST):
                return unzstd(data, most=4096)
            return zlib.decompressobj(wbits=31).decompress(data, 256)
        except unreadable():
            return b""
