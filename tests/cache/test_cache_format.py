"""The cache's file formats: answers kept as the bytes that arrived (format 2, ``.json.zst``),
caches of format 1 (``.json.gz``) still served, and frames that read back the same."""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
import warnings
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import storeframes as sf
from storeframes import planning
from storeframes.answers import Response
from storeframes.cache import Cache, CacheWarning, _polars_writes_arrow_schema
from storeframes.cache.stores import MemoryStore
from storeframes.catalog import ENDPOINTS
from storeframes.errors import AppsUnavailableWarning
from storeframes.fetch.pipeline import FRAMES
from storeframes.kept.tables import flattener_versions
from storeframes.sandbox import SandboxService, World
from storeframes.wire.http import lib as httpx
from tests._secrets import leaks_in
from tests.conftest import SANDBOX_TODAY

WORLD = World(0)
IOS = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US][:6]
ANDROID = list(WORLD.EXAMPLE_ANDROID_APPS)
KEYWORD = WORLD.EXAMPLE_KEYWORDS[0]
KEYWORDS = list(WORLD.EXAMPLE_KEYWORDS[:2])
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
NOON = datetime(2026, 11, 20, 12, tzinfo=UTC)


def read_answer(data: bytes) -> tuple[dict[str, Any], bytes]:
    """The header and the body of an answer file of format 2, read as any zstd reader would."""
    assert data[:4] == ZSTD_MAGIC  # a standard zstd frame
    with pa.CompressedInputStream(pa.BufferReader(data), "zstd") as stream:
        content = bytes(stream.read())
    head, _, body = content.partition(b"\n")
    return json.loads(head), body


def sandbox(folder: Any, **options: Any) -> sf.Client:
    options.setdefault("progress", False)
    return sf.sandbox.client(today=SANDBOX_TODAY, cache_dir=folder, **options)


def arrivals(client: sf.Client) -> int:
    return len(client.sandbox_service.arrivals)


def answers(folder: Path, suffix: str = ".json.zst") -> list[Path]:
    return sorted((folder / "answers").rglob(f"*{suffix}"))


# -- format 2 -------------------------------------------------------------------------------


def test_an_answer_is_kept_as_the_body_that_arrived_in_a_zstd_frame(tmp_path):
    with sandbox(tmp_path) as client:
        fresh = client.get("metadata", apps=IOS[:2])
    (path,) = answers(tmp_path)
    head, body = read_answer(path.read_bytes())
    assert head["format"] == 2 and head["body"] == "answer" and head["bytes"] == len(body)
    assert head["params"] == dict(fresh.responses[0].params) and head["cost"] == fresh.cost
    parsed = orjson.loads(body)  # the service's envelope, as it came
    assert parsed["result"] == fresh.result and set(parsed["metadata"]["request"]) >= {"params", "cost"}
    cache = Cache(tmp_path)
    (entry,) = cache.entries()
    loaded = cache.load(entry)
    assert loaded is not None and loaded.from_cache and loaded.body is None
    assert loaded.result == fresh.result and loaded.echo == fresh.responses[0].echo
    meta = pq.read_metadata(next((tmp_path / "index").rglob("*.parquet"))).metadata
    assert meta[b"storeframes.format"] == b"2"  # an older storeframes skips it: a newer format


def every_frame_call(name: str) -> dict[str, Any]:
    """The arguments of a call of the frame function ``name`` with rows: apps of both stores where it takes apps."""
    start, end = (SANDBOX_TODAY - timedelta(days=8)).isoformat(), (SANDBOX_TODAY - timedelta(days=1)).isoformat()
    endpoint = FRAMES[name].endpoint
    if endpoint == "search":
        return {"keywords": KEYWORDS, "ads": True}
    if endpoint == "search_history":
        return {"keywords": KEYWORDS, "start": start, "end": end}
    if endpoint == "benchmarks":
        return {"countries": "us,gb", "channels": "all,search"}
    apps = IOS if name != "permissions_frame" else ANDROID
    return {"apps": apps, "start": "2026-01-01", "end": "2026-10-31"} if endpoint == "changes" else {"apps": apps}


@pytest.mark.parametrize("state", ["small files", "compacted"])
def test_a_cold_then_warm_call_gives_the_same_frames(tmp_path, state):
    with sandbox(tmp_path) as cold, warnings.catch_warnings():
        warnings.simplefilter("ignore", AppsUnavailableWarning)
        first = {name: getattr(cold, name)(**every_frame_call(name)) for name in FRAMES}
    if state == "compacted":
        Cache(tmp_path).compact(frames=flattener_versions())
        assert {p.name[:5] for p in (tmp_path / "frames").rglob("*.parquet")} == {"part-"}
    with sandbox(tmp_path, offline=True) as warm, warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        warnings.simplefilter("ignore", AppsUnavailableWarning)
        again = {name: getattr(warm, name)(**every_frame_call(name)) for name in FRAMES}
        assert arrivals(warm) == 0
    for name, frame in first.items():  # values, dtypes, row order and column order
        assert frame.height > 0, name
        assert again[name].schema == frame.schema and again[name].height == frame.height, name
        assert again[name].equals(frame), name
    if state == "compacted":
        return
    frames = sorted((tmp_path / "frames").rglob("*.parquet"))
    meta = pq.read_metadata(frames[0]).metadata  # the provenance, in the file's key-value metadata
    assert meta[b"storeframes.format"] == b"1" and b"storeframes.flattener" in meta
    if _polars_writes_arrow_schema():  # and where pyarrow's read_schema looks, where polars can write it
        schema_meta = pq.read_schema(frames[0]).metadata
        assert schema_meta[b"storeframes.format"] == b"1" and b"storeframes.flattener" in schema_meta


def test_frames_built_from_the_raw_answers_alone_are_the_same(tmp_path):
    with sandbox(tmp_path) as client:
        expected = client.versions_frame(IOS[:3])
    for path in (tmp_path / "frames").rglob("*.parquet"):
        path.unlink()
    with sandbox(tmp_path, offline=True) as client:
        assert client.versions_frame(IOS[:3]).equals(expected) and arrivals(client) == 0


def test_a_large_generated_history_answer_round_trips(tmp_path):
    days = [date(2026, 1, 1) + timedelta(days=d) for d in range(120)]
    ids = [str(1_000_000_000 + i) for i in range(500)]
    params = {"keyword": "photo editor", "country": "us", "language": "en", "device": "iphone"}
    params |= {"start_date": days[0].isoformat(), "end_date": days[-1].isoformat()}
    echo = {**params, "note": "café 写真 \\/ slashes"}
    body = orjson.dumps({"result": {d.isoformat(): ids for d in days}, "metadata": {"request": {"params": echo}}})
    response = Response("search_history", params, orjson.loads(body)["result"], 1201, 1201, 200, NOON, body=body)
    ep = ENDPOINTS["search_history"]
    cache = Cache(tmp_path)
    entry = cache.store(
        response, service="unit", scope=planning.scope_of(ep, params), cells=planning.cells_of(ep, params)
    )
    assert entry is not None
    (path,) = answers(tmp_path)
    assert read_answer(path.read_bytes())[1] == body  # the bytes that arrived
    assert path.stat().st_size < len(body) / 10
    loaded = Cache(tmp_path).load(entry)
    assert loaded is not None and loaded.result == response.result and loaded.echo == echo


def test_an_answer_made_by_the_client_is_kept_as_its_result_losslessly():
    cache = Cache(MemoryStore())
    params = {"apps": IOS[0], "country": "us", "language": "en", "device": "iphone"}
    ep = ENDPOINTS["metadata"]
    for result in ({IOS[0]: {"name": "half an emoji \ud83d", "n": 2**70}}, {IOS[0]: {"name": "plain"}}, None):
        response = Response("metadata", params, result, 5, 5, 200, NOON, echo={"apps": IOS[0]})
        entry = cache.store(
            response, service="unit", scope=planning.scope_of(ep, params), cells=planning.cells_of(ep, params)
        )
        assert entry is not None
        loaded = cache.load(entry)
        assert loaded is not None and loaded.result == result and loaded.echo == {"apps": IOS[0]}
        head, _ = read_answer(cache.storage.get(f"answers/endpoint=metadata/{entry.id}.json.zst"))
        assert head["body"] == "result"


@pytest.mark.parametrize("damage", ["truncated", "bytes changed", "size overstated", "not zstd", "empty"])
def test_a_damaged_answer_is_set_aside_and_fetched_again(tmp_path, damage):
    with sandbox(tmp_path) as client:
        first = client.get("metadata", apps=IOS[:2])
    (path,) = answers(tmp_path)
    data = path.read_bytes()
    if damage == "truncated":
        data = data[: len(data) // 2]
    elif damage == "bytes changed":  # a frame that may still decompress: the CRC-32 tells
        middle = len(data) // 2
        data = data[:middle] + bytes(b ^ 0x55 for b in data[middle : middle + 8]) + data[middle + 8 :]
    elif damage == "size overstated":  # the frame's header claims far more than it holds: never allocated
        descriptor = data[4]
        single = (descriptor >> 5) & 1
        at = 5 + (0 if single else 1) + (0, 1, 2, 4)[descriptor & 3]
        width = (1 if single else 0, 2, 4, 8)[descriptor >> 6]
        assert width >= 2
        data = data[:at] + b"\xff" * width + data[at + width :]
    elif damage == "not zstd":
        data = b"{}\n{}"
    else:
        data = b""
    path.write_bytes(data)
    with sandbox(tmp_path) as client:
        with pytest.warns(CacheWarning, match="unreadable") as caught:
            again = client.get("metadata", apps=IOS[:2])
        assert len([w for w in caught if issubclass(w.category, CacheWarning)]) == 1
        assert again.result == first.result and not again.from_cache and arrivals(client) == 1
    assert len(list(tmp_path.rglob("*.corrupt"))) == 2  # the answer and its index file
    with sandbox(tmp_path, offline=True) as client, warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        assert client.get("metadata", apps=IOS[:2]).from_cache


# -- the token --------------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["plain", "escaped slash", "unicode escape"])
def test_the_token_never_reaches_a_cache_file_whatever_its_form_in_the_body(tmp_path, form):
    token = "sk-live-7Qm2/Xr4Lp9z" if form == "escaped slash" else "sk-live-7Qm2Xr4Lp9zA"
    written = {
        "plain": token,
        "escaped slash": token.replace("/", "\\/"),
        "unicode escape": "\\u0073" + token[1:],
    }[form]

    def leaky(request: httpx.Request) -> httpx.Response:
        reply = service.handle(request.method, request.url.path, request.url.params.multi_items(), request.headers)
        body = json.loads(reply.body)
        body["metadata"]["request"]["params"]["key"] = "KEY"
        text = json.dumps(body).replace('"KEY"', f'"{written}"')  # the service's own escapes
        return httpx.Response(reply.status, content=text.encode(), headers={"content-type": "application/json"})

    service = SandboxService(today=SANDBOX_TODAY, api_keys=[token])
    http = httpx.Client(transport=httpx.MockTransport(leaky))
    base = "https://store.example/api/public/store"
    with sf.Client(token, base_url=base, http_client=http, cache_dir=tmp_path, progress=False) as client:
        fresh = client.get("metadata", apps=IOS[:2])
    (path,) = answers(tmp_path)
    head, body = read_answer(path.read_bytes())
    assert token.encode() not in body and token.split("/")[0].encode() not in body
    assert token not in json.dumps(json.loads(body), ensure_ascii=False)  # nor in what it means
    with sf.Client(token, base_url=base, http_client=http, cache_dir=tmp_path, offline=True) as client:
        cached = client.get("metadata", apps=IOS[:2])
    assert cached.from_cache and cached.result == fresh.result
    assert cached.responses[0].echo["key"] == "***"
    for file in tmp_path.rglob("*"):
        if file.is_file():
            data = file.read_bytes()
            if file.name.endswith(".json.zst"):
                kept_head, kept_body = read_answer(data)
                data = json.dumps(kept_head).encode() + b"\n" + kept_body
            assert token.encode() not in data, file.name
    assert not leaks_in(tmp_path)


# -- format 1: caches of earlier versions -------------------------------------------------


def write_format_1(folder: Path, response: Response, *, service: str) -> str:
    """An answer and its index file as storeframes wrote them before format 2 (gzip JSON, pyarrow
    Parquet with the provenance of format 1); the entry's id."""
    ep = ENDPOINTS[response.endpoint]
    params = dict(response.params)
    fetched = response.fetched_at.astimezone(UTC)
    entry_id = f"{fetched:%Y%m%dT%H%M%S%fZ}-0123456789ab-{abs(hash(json.dumps(params))) % 0xFFFFFF:06x}"
    raw = {
        "format": 1,
        "storeframes": "0.9.0",
        "endpoint": response.endpoint,
        "service": service,
        "params": params,
        "echo": dict(response.echo),
        "fetched_at": fetched.isoformat(),
        "cost": response.cost,
        "max_credit_cost": response.max_credit_cost,
        "status": 200,
        "attempts": 1,
        "available": True,
        "result": response.result,
    }
    answer = folder / "answers" / f"endpoint={response.endpoint}" / f"{entry_id}.json.gz"
    answer.parent.mkdir(parents=True, exist_ok=True)
    answer.write_bytes(gzip.compress(json.dumps(raw, separators=(",", ":"), ensure_ascii=False).encode(), mtime=0))
    cells = sorted(planning.cells_of(ep, params), key=lambda c: (c[0] or "", c[1] or "", c[2] or date.min))
    n = len(cells)
    shares = [response.cost // n + (1 if i < response.cost % n else 0) for i in range(n)]
    table = pa.table(
        {
            "entry": [entry_id] * n,
            "service": [service] * n,
            "scope": [planning.scope_of(ep, params)] * n,
            "entity": [c[0] for c in cells],
            "facet": [c[1] for c in cells],
            "day": pa.array([c[2] for c in cells], pa.date32()),
            "fetched_at": pa.array([fetched] * n, pa.timestamp("us", tz="UTC")),
            "answer_cost": pa.array([response.cost] * n, pa.int64()),
            "cell_cost": pa.array(shares, pa.int64()),
            "max_credit_cost": pa.array([response.max_credit_cost] * n, pa.int64()),
            "available": [True] * n,
            "params": [json.dumps(params, sort_keys=True)] * n,
        }
    )
    meta = {
        "storeframes.version": "0.9.0",
        "storeframes.format": "1",
        "storeframes.endpoint": response.endpoint,
        "storeframes.params": json.dumps(params),
        "storeframes.fetched_at": fetched.isoformat(),
        "storeframes.cost": str(response.cost),
        "storeframes.max_credit_cost": str(response.max_credit_cost),
        "storeframes.service": service,
        "storeframes.available": "true",
    }
    index = folder / "index" / f"endpoint={response.endpoint}" / f"{entry_id}.parquet"
    index.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table.replace_schema_metadata(meta), index)
    return entry_id


@pytest.fixture
def old_cache(tmp_path) -> tuple[Path, dict[str, Any]]:
    """A folder holding two answers of format 1 (metadata and search), with no marker, as an
    earlier version left it; and the answers' results."""
    folder = tmp_path / "old"
    with sandbox(False) as client:
        namespace = client.namespace
        metadata = client.get("metadata", apps=IOS[:2])
        search = client.get("search", keyword=KEYWORD)
    for answer in (metadata, search):
        write_format_1(folder, answer.responses[0], service=namespace)
    return folder, {"metadata": metadata, "search": search}


def test_a_cache_of_format_1_still_serves_offline_without_a_request(old_cache):
    folder, fresh = old_cache
    with sandbox(folder, offline=True) as client, warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        metadata = client.get("metadata", apps=IOS[:2])
        search = client.get("search", keyword=KEYWORD)
        frame = client.metadata_frame(IOS[:2])
        assert arrivals(client) == 0
    assert metadata.from_cache and metadata.result == fresh["metadata"].result
    assert search.from_cache and search.result == fresh["search"].result
    assert metadata.responses[0].echo == fresh["metadata"].responses[0].echo
    assert sorted(frame["app_id"].to_list()) == sorted(IOS[:2])
    assert answers(folder) == [] and len(answers(folder, ".json.gz")) == 2  # nothing rewritten


def test_info_compact_and_clear_handle_both_formats(old_cache):
    folder, _ = old_cache
    with sandbox(folder) as client:  # new answers beside the old ones, frames of both
        client.metadata_frame(IOS[2:4])
        client.metadata_frame(IOS[:2])
    assert len(answers(folder)) == 1 and len(answers(folder, ".json.gz")) == 2
    info = Cache(folder).info()
    assert info["entries"] == 3 and info["files"]["answers"] == 3

    done = Cache(folder).compact(frames=flattener_versions())
    assert done["index_files_merged"] == 3 and done["files_written"] >= 2
    (part,) = (folder / "index" / "endpoint=metadata").glob("part-*.parquet")
    assert len(json.loads(pq.read_metadata(part).metadata[b"storeframes.gz"])) == 1  # the old metadata answer
    for frame in (folder / "frames").rglob("*.parquet"):
        frame.unlink()  # rebuilt from the raw answers of both formats
    with sandbox(folder, offline=True) as client, warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        assert sorted(client.metadata_frame(IOS[:4])["app_id"].to_list()) == sorted(IOS[:4])
        assert client.get("search", keyword=KEYWORD).from_cache and arrivals(client) == 0

    assert Cache(folder).clear() == 3
    assert answers(folder) == [] and answers(folder, ".json.gz") == []
    assert not list((folder / "index").rglob("*.parquet"))


def test_answers_without_an_index_are_cleared_in_both_formats(tmp_path):
    cache = Cache(MemoryStore(clock=lambda: 0.0))
    for name in ("a.json.gz", "b.json.zst"):
        cache.storage.put(f"answers/endpoint=metadata/{name}", b"a stopped writer's answer")
    cache.storage.put("answers/endpoint=metadata/c.json.zst", pa.compress(b'{"format":3}\n', "zstd", asbytes=True))
    assert cache.clear() == 0
    assert cache.storage.list() == ["answers/endpoint=metadata/c.json.zst"]  # a newer version's answer stays


def test_an_answer_of_a_newer_format_is_left_in_place(tmp_path):
    with sandbox(tmp_path) as client:
        client.get("metadata", apps=IOS[:2])
    (path,) = answers(tmp_path)
    head, body = read_answer(path.read_bytes())
    line = json.dumps({**head, "format": 3}).encode()
    path.write_bytes(pa.compress(line + b"\n" + body, "zstd", asbytes=True))
    before = path.read_bytes()
    with sandbox(tmp_path) as client:
        with pytest.warns(CacheWarning, match="newer storeframes"):
            assert not client.get("metadata", apps=IOS[:2]).from_cache
    assert path.read_bytes() == before and not list(tmp_path.rglob("*.corrupt"))
    assert Cache(tmp_path).clear() == 1  # the answer fetched again; the newer one is left to its version
    assert path.read_bytes() == before


@pytest.mark.processes
def test_importing_the_cache_imports_neither_pyarrow_nor_pandas():
    code = "import sys, storeframes.cache; print(sorted(m for m in ('pyarrow', 'pandas') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_index_schema_is_still_offered_as_arrow():
    import storeframes.cache as cache_module

    schema = cache_module.INDEX_SCHEMA
    assert schema.names[0] == "entry" and schema.field("day").type == pa.date32()
    frame = pl.read_parquet(io.BytesIO(_index_bytes()))
    assert frame.columns == schema.names


def _index_bytes() -> bytes:
    cache = Cache(MemoryStore())
    params = {"keyword": KEYWORD, "country": "us", "language": "en", "device": "iphone"}
    ep = ENDPOINTS["search"]
    response = Response("search", params, [], 1, 1, 200, NOON)
    entry = cache.store(
        response, service="unit", scope=planning.scope_of(ep, params), cells=planning.cells_of(ep, params)
    )
    assert entry is not None
    return cache.storage.get(f"index/endpoint=search/{entry.id}.parquet")


def test_many_kept_frames_of_a_folder_read_together_as_each_alone(tmp_path):
    cache = Cache(tmp_path)
    ep = ENDPOINTS["search"]
    schema = pl.Schema({"rank": pl.Int32(), "app_id": pl.String()})
    entries, expected = [], {}
    for i in range(24):  # more than are read a file per thread
        params = {"keyword": f"keyword {i}", "country": "us", "language": "en", "device": "iphone"}
        response = Response("search", params, [], 1, 1, 200, NOON)
        entry = cache.store(
            response, service="unit", scope=planning.scope_of(ep, params), cells=planning.cells_of(ep, params)
        )
        assert entry is not None
        frame = pl.DataFrame({"rank": list(range(i)), "app_id": [f"{i}-{r}" for r in range(i)]}, schema=schema)
        cache.frames.write(entry, "t", "2" if i == 3 else "1", frame)  # another flattener's
        entries.append(entry)
        expected[entry.id] = frame
    cache.frames.write(entries[4], "t", "1", pl.DataFrame({"other": [1]}))  # other columns: built again
    (tmp_path / "frames" / "table=t" / f"{entries[5].id}.parquet").unlink()  # not kept
    (tmp_path / "frames" / "table=t" / f"{entries[6].id}.parquet").write_bytes(b"PAR1 cut short")
    folder = tmp_path / "frames" / "table=t"  # a file copied over another's: read alone, as before
    (folder / f"{entries[8].id}.parquet").write_bytes((folder / f"{entries[7].id}.parquet").read_bytes())
    expected[entries[8].id] = expected[entries[7].id]
    with pytest.warns(CacheWarning, match="unreadable"):
        found = Cache(tmp_path).frames.read(entries, "t", "1", schema=schema)
    assert sorted(found) == sorted(e.id for i, e in enumerate(entries) if i not in (3, 4, 5, 6))
    for entry_id, frame in found.items():
        assert frame.equals(expected[entry_id]) and frame.schema == schema
    assert len(list(tmp_path.rglob("*.corrupt"))) == 1
