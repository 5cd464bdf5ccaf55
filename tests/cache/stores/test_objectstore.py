"""The object-storage store and leases, against moto's S3 server on loopback (tests/_s3.py).

The store contract itself runs in tests/cache/stores/test_store.py over a bucket too; here: how a
store is configured (URLs, credentials, endpoints), what its errors may say (never a
credential), what polars reads of it, and the leases kept in it.
"""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import pickle
import signal
import subprocess
import sys
import threading
import time
import traceback
from typing import Any

import polars as pl
import pytest

from storeframes.cache.stores import LocalStore, MemoryStore, Store, Usage
from storeframes.coord.leases import digest as _digest
from tests._children import child_env
from tests._extras import names_the_extra
from tests._s3 import ACCESS_KEY, REGION, SECRET_KEY, SESSION_TOKEN, clean_cloud_env, free_port, refusing_server
from tests.conftest import ROOT

pytest.importorskip("obstore", reason='obstore not installed (pip install ".[s3]")')

from storeframes.cache.stores.bucket import ObjectStore
from storeframes.coord.bucket_leases import ObjectLeases

CREDENTIALS = (ACCESS_KEY, SECRET_KEY, SESSION_TOKEN)


def _store(bucket: Any, **extra: str) -> ObjectStore:
    return ObjectStore(bucket.url, storage_options={**bucket.storage_options, **extra})


def _parquet(frame: pl.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.write_parquet(buffer)
    return buffer.getvalue()


def _shows_no_credential(exc: BaseException) -> None:
    """Nothing of ``exc`` a user or a log could see holds a credential, and no obstore error is chained to it."""
    shown = str(exc) + repr(exc) + "".join(traceback.format_exception(exc))
    for credential in CREDENTIALS:
        assert credential not in shown
    assert exc.__cause__ is None and (exc.__context__ is None or exc.__suppress_context__)


# -- what a store is ------------------------------------------------------------------------------------


@pytest.mark.s3
def test_an_object_store_is_a_store_and_shows_only_its_url(s3_bucket):
    store = _store(s3_bucket, aws_session_token=SESSION_TOKEN)
    assert isinstance(store, Store)
    assert repr(store) == f"ObjectStore('s3://{s3_bucket.name}/cache')"
    assert str(store) == store.location == f"s3://{s3_bucket.name}/cache"
    assert store.url("frames/t/a.parquet") == f"s3://{s3_bucket.name}/cache/frames/t/a.parquet"
    assert repr(ObjectStore(f"S3://{s3_bucket.name}/", storage_options=s3_bucket.storage_options)) == (
        f"ObjectStore('s3://{s3_bucket.name}')"
    )
    for credential in CREDENTIALS:
        assert credential not in repr(store) + str(store) + repr(ObjectLeases(store))
    with pytest.raises(ValueError, match="not a store key"):
        store.url("../x")


@pytest.mark.s3
def test_credentials_from_storage_options_with_or_without_the_aws_prefix(s3_bucket):
    prefixed = _store(s3_bucket)
    prefixed.put("answers/a.json.gz", b"a")
    bare = ObjectStore(
        s3_bucket.url,
        storage_options={
            "access_key_id": ACCESS_KEY,
            "secret_access_key": SECRET_KEY,
            "endpoint": s3_bucket.endpoint,
            "region": REGION,
        },
    )
    assert bare.get("answers/a.json.gz") == b"a"
    assert s3_bucket.objects() == {"cache/answers/a.json.gz": b"a"}


@pytest.mark.s3
def test_credentials_and_endpoint_from_the_environment(s3_bucket, monkeypatch):
    for name, value in s3_bucket.env.items():  # AWS_ENDPOINT_URL: an S3-compatible server, as for MinIO
        monkeypatch.setenv(name, value)
    store = ObjectStore(s3_bucket.url)
    store.put("answers/a.json.gz", b"from the environment")
    assert store.get("answers/a.json.gz") == b"from the environment"
    assert s3_bucket.objects() == {"cache/answers/a.json.gz": b"from the environment"}


@pytest.mark.s3
def test_requests_are_signed_with_the_given_key_and_options_win_over_the_environment(monkeypatch):
    clean_cloud_env(monkeypatch)
    with refusing_server() as (endpoint, seen):
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAFROMTHEENVIRONMENT")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "environment-secret-0000")
        monkeypatch.setenv("AWS_SESSION_TOKEN", "environment-session-token-0000")
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
        with pytest.raises(OSError):
            ObjectStore("s3://bucket/cache", storage_options={"max_retries": "0"}).get("a")
        assert "Credential=AKIAFROMTHEENVIRONMENT/" in seen[-1]["authorization"]
        assert seen[-1]["x-amz-security-token"] == "environment-session-token-0000"
        given = {"aws_access_key_id": ACCESS_KEY, "aws_secret_access_key": SECRET_KEY, "max_retries": "0"}
        with pytest.raises(OSError) as caught:
            ObjectStore("s3://bucket/cache", storage_options=given).get("a")
        assert f"Credential={ACCESS_KEY}/" in seen[-1]["authorization"]
    for credential in ("AKIAFROMTHEENVIRONMENT", "environment-secret-0000", "environment-session-token-0000"):
        assert credential not in str(caught.value)


# -- endpoints and URLs -----------------------------------------------------------------------------------


@pytest.mark.parametrize("endpoint", ["http://example.com:9000", "http://10.0.0.5", "http://minio.internal:9000/"])
@pytest.mark.parametrize("where", ["options", "environment"])
def test_a_plain_http_endpoint_off_loopback_is_refused_before_any_request(monkeypatch, endpoint, where):
    import obstore.store

    clean_cloud_env(monkeypatch)

    def no_store(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a store was made")

    monkeypatch.setattr(obstore.store, "from_url", no_store)
    options = {"aws_access_key_id": ACCESS_KEY, "aws_secret_access_key": SECRET_KEY, "allow_http": "true"}
    if where == "options":
        options["aws_endpoint_url"] = endpoint
    else:
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    with pytest.raises(ValueError) as caught:
        ObjectStore("s3://bucket/cache", storage_options=options)
    message = str(caught.value)
    host = endpoint.split("//")[1].split(":")[0].split("/")[0]
    assert f"'{host}'" in message and "https://" in message and "loopback" in message
    _shows_no_credential(caught.value)


@pytest.mark.parametrize(
    "endpoint", ["http://127.0.0.1:1", "http://127.8.9.10:1", "http://localhost:1", "http://[::1]:1"]
)
def test_a_plain_http_endpoint_on_loopback_is_allowed(monkeypatch, endpoint):
    clean_cloud_env(monkeypatch)
    store = ObjectStore("s3://bucket", storage_options={"aws_endpoint_url": endpoint, "aws_skip_signature": "true"})
    assert store.locate(["a"])[1] == {
        "aws_endpoint_url": endpoint,
        "aws_skip_signature": "true",
        "aws_allow_http": "true",
    }


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("", "no scheme"),
        ("bucket/prefix", "no scheme"),
        ("s3://", "names no bucket"),
        ("s3:///prefix", "names no bucket"),
        ("ftp://bucket/prefix", "unknown scheme 'ftp'"),
        ("file:///tmp/cache", "unknown scheme 'file'"),
        ("s3://bucket/a/../b", "malformed prefix"),
        ("s3://bucket/.hidden", "malformed prefix"),
        ("s3://bucket/cache?versionId=1", "query"),
        ("s3://AKIAINURL:hunter2-secret@bucket/cache", "holds credentials"),
    ],
)
def test_a_malformed_url_is_refused_with_what_is_wrong(url, says):
    with pytest.raises(ValueError, match="not an object store URL") as caught:
        ObjectStore(url)
    assert says in str(caught.value)
    assert "hunter2-secret" not in str(caught.value) and "AKIAINURL" not in str(caught.value)


def test_a_bad_option_is_refused_without_its_value(monkeypatch):
    clean_cloud_env(monkeypatch)
    with pytest.raises(ValueError, match="not_an_option") as caught:
        ObjectStore("s3://bucket", storage_options={"aws_not_an_option": "value-of-a-bad-option"})
    assert "value-of-a-bad-option" not in str(caught.value)
    with pytest.raises(ValueError, match="Missing SecretAccessKey") as caught:
        ObjectStore("s3://bucket", storage_options={"aws_access_key_id": ACCESS_KEY})
    _shows_no_credential(caught.value)
    with pytest.raises(ValueError, match="max_retries"):
        ObjectStore("s3://bucket", storage_options={"max_retries": "many"})


@pytest.mark.processes
def test_without_obstore_the_store_says_what_to_install_and_storeframes_still_imports(monkeypatch):
    monkeypatch.setitem(sys.modules, "obstore", None)  # import obstore now raises ImportError
    with pytest.raises(ImportError) as raised:
        ObjectStore("s3://bucket/cache")
    assert names_the_extra(str(raised.value), "s3")
    script = (
        "import sys; sys.modules['obstore'] = None; import storeframes, storeframes.cache.stores.bucket; print('ok')"
    )
    child = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=child_env(), capture_output=True, text=True)
    assert child.returncode == 0 and child.stdout.strip() == "ok", child.stderr


# -- errors -----------------------------------------------------------------------------------------------


def _every_operation(store: ObjectStore) -> list[Any]:
    return [
        lambda: store.get("answers/a.json.gz"),
        lambda: store.put("answers/a.json.gz", b"x"),
        lambda: store.put_if_absent("leases/a", b"x"),
        lambda: store.list("answers/"),
        lambda: store.usage(),
        lambda: store.sweep(0),
        lambda: store.set_aside("answers/a.json.gz"),
        lambda: store.delete("answers/a.json.gz"),
    ]


@pytest.mark.s3
def test_a_bucket_that_does_not_exist_is_an_os_error_that_says_so(s3_bucket):
    store = ObjectStore("s3://no-such-bucket-here/cache", storage_options=s3_bucket.storage_options)
    for operation in _every_operation(store):
        with pytest.raises(OSError, match="the bucket 'no-such-bucket-here' does not exist") as caught:
            operation()
        assert not isinstance(caught.value, FileNotFoundError)  # not a missing value: the cache would fetch again
        _shows_no_credential(caught.value)


@pytest.mark.s3
def test_refused_credentials_are_an_os_error_without_any_credential(monkeypatch):
    import obstore

    clean_cloud_env(monkeypatch)
    with refusing_server() as (endpoint, _):
        options = {
            "aws_access_key_id": ACCESS_KEY,
            "aws_secret_access_key": SECRET_KEY,
            "aws_session_token": SESSION_TOKEN,
            "aws_endpoint_url": endpoint,
            "max_retries": "0",
        }
        store = ObjectStore("s3://bucket/cache", storage_options=options)
        with pytest.raises(Exception) as raw:  # what obstore itself says: the server repeats what was signed
            obstore.get(store._client(), "answers/a.json.gz")
        assert ACCESS_KEY in str(raw.value) and SESSION_TOKEN in str(raw.value)
        for operation in [*_every_operation(store), lambda: store.mtime("answers/a.json.gz")]:
            with pytest.raises(OSError, match=r"403 Forbidden") as caught:
                operation()
            _shows_no_credential(caught.value)
        with pytest.raises(OSError, match=r"cannot get 'answers/a.json.gz': 403 Forbidden \(SignatureDoesNotMatch\)"):
            store.get("answers/a.json.gz")


@pytest.mark.s3
def test_a_stopped_server_is_an_os_error_that_says_connection_refused(s3_bucket):
    store = _store(s3_bucket, aws_endpoint_url=f"http://127.0.0.1:{free_port()}", max_retries="0")
    for operation in _every_operation(store):
        with pytest.raises(OSError, match="connection refused") as caught:
            operation()
        _shows_no_credential(caught.value)


@pytest.mark.s3
def test_a_missing_key_is_file_not_found_naming_the_key(s3_bucket):
    store = _store(s3_bucket)
    with pytest.raises(FileNotFoundError, match=r"answers/none\.json\.gz") as caught:
        store.get("answers/none.json.gz")
    _shows_no_credential(caught.value)
    assert store.mtime("answers/none.json.gz") is None
    store.delete("answers/none.json.gz")


@pytest.mark.s3
def test_a_server_without_conditional_writes_is_told_once(monkeypatch):
    clean_cloud_env(monkeypatch)
    with refusing_server(501, "NotImplemented") as (endpoint, seen):
        options = {"aws_skip_signature": "true", "aws_endpoint_url": endpoint, "max_retries": "0"}
        store = ObjectStore("s3://bucket/cache", storage_options=options)
        assert store.conditional_writes is True
        with pytest.raises(OSError, match="does not support conditional writes"):
            store.put_if_absent("leases/a", b"x")
        assert store.conditional_writes is False
        asked = len(seen)
        with pytest.raises(OSError, match="does not support conditional writes"):
            store.put_if_absent("leases/b", b"x")
        assert len(seen) == asked  # not asked again


# -- what the store holds ----------------------------------------------------------------------------------


@pytest.mark.s3
def test_set_aside_sweep_and_usage_on_a_bucket(s3_bucket):
    store = _store(s3_bucket)
    store.put("frames/t/a.parquet", b"123")
    store.put("frames/t/b.parquet", b"4567")
    assert store.set_aside("frames/t/b.parquet") is True
    assert store.set_aside("frames/t/b.parquet") is False
    assert store.set_aside("frames/t/never.parquet") is False
    assert s3_bucket.objects() == {"cache/frames/t/a.parquet": b"123", "cache/frames/t/b.parquet.corrupt": b"4567"}
    assert store.list() == ["frames/t/a.parquet"]
    assert store.usage() == Usage(7, 1) and store.usage("frames/t/a") == Usage(3, 0)
    assert store.sweep(3600) == 0  # set aside just now
    s3_bucket.backdate("frames/t/b.parquet.corrupt", 7200)
    assert store.sweep(3600, prefix="answers/") == 0
    assert store.sweep(3600) == 1
    assert s3_bucket.objects() == {"cache/frames/t/a.parquet": b"123"} and store.usage() == Usage(3, 0)


@pytest.mark.s3
def test_list_matches_the_prefix_by_characters_not_by_folder(s3_bucket):
    store = _store(s3_bucket)
    for key in ("ledger/abc-1.parquet", "ledger/abc-2.parquet", "ledger/abd-1.parquet", "ledger-x/abc.parquet"):
        store.put(key, b"x")
    assert store.list("ledger/abc-") == ["ledger/abc-1.parquet", "ledger/abc-2.parquet"]
    assert store.list("ledger") == sorted(
        ["ledger/abc-1.parquet", "ledger/abc-2.parquet", "ledger/abd-1.parquet", "ledger-x/abc.parquet"]
    )
    assert store.usage("ledger/ab") == Usage(3, 0)


@pytest.mark.s3
def test_keys_with_spaces_percents_and_accents_are_kept_as_written(s3_bucket):
    store = _store(s3_bucket)
    keys = ["frames/table=x/a b.parquet", "frames/table=x/p%20q.parquet", "frames/table=x/é+ü.parquet", "ledger/s:1"]
    for key in keys:
        store.put(key, key.encode())
    assert store.list() == sorted(keys)
    assert all(store.get(key) == key.encode() for key in keys)
    assert sorted(s3_bucket.objects()) == sorted(f"cache/{key}" for key in keys)  # as other tools see them


@pytest.mark.s3
def test_polars_reads_what_locate_names(s3_bucket, tmp_path, monkeypatch):
    one, two = pl.DataFrame({"app": ["a", "b"], "n": [1, 2]}), pl.DataFrame({"app": ["c"], "n": [3]})
    keys = ["frames/t/endpoint=metadata/one.parquet", "frames/t/endpoint=metadata/two.parquet"]
    expected = pl.concat([one, two])

    store = _store(s3_bucket)
    store.put(keys[0], _parquet(one))
    store.put(keys[1], _parquet(two))
    addresses, options = store.locate(keys)
    assert addresses == [store.url(k) for k in keys]
    assert options is not None and options["aws_allow_http"] == "true"
    assert pl.scan_parquet(addresses, storage_options=options).collect().equals(expected)

    for name, value in s3_bucket.env.items():  # credentials from the environment: polars reads them too
        monkeypatch.setenv(name, value)
    from_env = ObjectStore(s3_bucket.url)
    addresses, options = from_env.locate(keys)
    assert options is not None and not set(options.values()) & set(CREDENTIALS)
    assert pl.scan_parquet(addresses, storage_options=options).collect().equals(expected)

    local = LocalStore(tmp_path)
    local.put(keys[0], _parquet(one))
    local.put(keys[1], _parquet(two))
    paths, nothing = local.locate(keys)
    assert nothing is None and pl.scan_parquet(paths).collect().equals(expected)
    with pytest.raises(NotImplementedError):
        MemoryStore().locate(keys)


@pytest.mark.s3
def test_a_store_pickles_as_its_url_and_options(s3_bucket):
    store = _store(s3_bucket)
    store.put("a/b", b"x")
    again = pickle.loads(pickle.dumps(store))
    assert again.location == store.location and again.get("a/b") == b"x"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.processes
@pytest.mark.s3
def test_a_child_forked_after_requests_is_told_instead_of_hanging(s3_bucket):
    store = _store(s3_bucket)
    store.put("a/b", b"x")
    pid = os.fork()
    if pid == 0:  # the child: must end with os._exit whatever happens
        signal.alarm(30)
        try:
            store.get("a/b")
            code = 3
        except OSError as exc:
            code = 0 if "forked" in str(exc) and "spawn" in str(exc) else 2
        except BaseException:
            code = 4
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


# -- leases -----------------------------------------------------------------------------------------------


@pytest.mark.s3
def test_of_many_threads_taking_one_lease_exactly_one_wins(s3_bucket):
    store = _store(s3_bucket)
    rounds, barrier = 6, threading.Barrier(8)
    won: list[tuple[int, Any, ObjectLeases]] = []

    def race() -> None:
        leases = ObjectLeases(store)  # one per thread, as in separate processes
        for r in range(rounds):
            barrier.wait()
            handle = leases.try_take(f"metadata|service|{r}")
            if handle is not None:
                won.append((r, handle, leases))

    threads = [threading.Thread(target=race) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(r for r, _, _ in won) == list(range(rounds))
    for _, handle, leases in won:
        leases.release(handle)
    assert s3_bucket.objects() == {}


def _take_in_a_process(url: str, options: dict[str, str], n: int, barrier: Any, results: Any) -> None:
    leases = ObjectLeases(ObjectStore(url, storage_options=options))
    for r in range(4):
        barrier.wait()
        results.put((r, n, leases.try_take(f"contested|{r}") is not None))


@pytest.mark.processes
@pytest.mark.s3
def test_of_four_processes_taking_one_lease_exactly_one_wins(s3_bucket):
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(4), context.Queue()
    args = (s3_bucket.url, s3_bucket.storage_options)
    processes = [context.Process(target=_take_in_a_process, args=(*args, n, barrier, results)) for n in range(4)]
    for process in processes:
        process.start()
    outcomes = [results.get(timeout=60) for _ in range(4 * 4)]
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    assert sorted(r for r, _, won in outcomes if won) == [0, 1, 2, 3]


@pytest.mark.s3
def test_a_released_lease_can_be_taken_and_waiting_ends_with_the_release(s3_bucket):
    store = _store(s3_bucket)
    one, two = ObjectLeases(store), ObjectLeases(store)
    handle = one.try_take("keyword|search|US")
    assert handle is not None and two.try_take("keyword|search|US") is None
    started = time.monotonic()
    assert two.wait("keyword|search|US", 0.2) is False
    assert 0.2 <= time.monotonic() - started < 1.5
    threading.Timer(0.3, one.release, [handle]).start()
    started = time.monotonic()
    assert two.wait("keyword|search|US", 10.0) is True
    assert time.monotonic() - started < 2.0
    again = two.try_take("keyword|search|US")
    assert again is not None
    two.release(again)
    one.release(handle)  # a second release changes nothing
    assert s3_bucket.objects() == {}


@pytest.mark.s3
def test_a_lease_holds_no_name_and_no_credential(s3_bucket):
    store = _store(s3_bucket)
    leases = ObjectLeases(store)
    handle = leases.try_take("metadata|service-key-of-someone|{}|1")
    assert handle is not None
    [(key, body)] = s3_bucket.objects().items()
    assert key == f"cache/leases/{_digest('metadata|service-key-of-someone|{}|1')}"
    held = json.loads(body)
    assert set(held) == {"holder", "expires_at", "renewal"} and held["expires_at"] > time.time()
    for credential in CREDENTIALS:
        assert credential.encode() not in body
    assert b"service-key" not in body
    leases.release(handle)


_HOLDER = """
import os, signal, sys
from storeframes.coord.bucket_leases import ObjectLeases
from storeframes.cache.stores.bucket import ObjectStore
ObjectLeases.TTL = 0.5
leases = ObjectLeases(ObjectStore(sys.argv[1]))  # credentials and endpoint from the environment
assert leases.try_take("k") is not None
print("held", flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.processes
@pytest.mark.s3
def test_the_lease_of_a_killed_holder_is_taken_over_after_the_ttl(s3_bucket, monkeypatch):
    monkeypatch.setattr(ObjectLeases, "TTL", 0.5)
    child = subprocess.run(
        [sys.executable, "-c", _HOLDER, s3_bucket.url],
        cwd=ROOT,
        env=child_env(**s3_bucket.env),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == -signal.SIGKILL and "held" in child.stdout, child.stderr
    store = _store(s3_bucket)
    leases = ObjectLeases(store)
    assert leases.try_take("k") is None  # seen for the first time: its holder may be alive
    started = time.monotonic()
    assert leases.wait("k", 10.0) is True
    assert 0.4 <= time.monotonic() - started < 3.0
    handle = leases.try_take("k")
    assert handle is not None
    leases.release(handle)
    assert s3_bucket.objects() == {}


@pytest.mark.s3
def test_a_renewed_lease_outlives_its_ttl_while_held(s3_bucket, monkeypatch):
    monkeypatch.setattr(ObjectLeases, "TTL", 0.6)
    store = _store(s3_bucket)
    holder, other = ObjectLeases(store), ObjectLeases(store)
    handle = holder.try_take("x")
    assert handle is not None and other.try_take("x") is None
    time.sleep(2.0)  # more than three TTLs: only the renewals keep it
    assert other.try_take("x") is None
    assert other.wait("x", 0.8) is False
    assert json.loads(s3_bucket.objects()[f"cache/leases/{_digest('x')}"])["renewal"] >= 3
    holder.release(handle)
    again = other.try_take("x")
    assert again is not None
    other.release(again)


@pytest.mark.s3
def test_of_many_callers_taking_over_one_dead_lease_exactly_one_wins(s3_bucket):
    store = _store(s3_bucket)
    dead = ObjectLeases(store).try_take("z")
    assert dead is not None
    s3_bucket.backdate(f"leases/{_digest('z')}", ObjectLeases.TTL + ObjectLeases.CLOCK_MARGIN + 60)
    barrier, won = threading.Barrier(8), []

    def take_over() -> None:
        leases = ObjectLeases(store)
        barrier.wait()
        handle = leases.try_take("z")
        if handle is not None:
            won.append((leases, handle))

    threads = [threading.Thread(target=take_over) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(won) == 1  # one conditional overwrite (If-Match) succeeded, the others found it changed
    [(leases, handle)] = won
    assert json.loads(s3_bucket.objects()[f"cache/leases/{_digest('z')}"])["holder"] == handle[1]
    leases.release(handle)


@pytest.mark.s3
def test_a_lease_long_dead_is_taken_at_once_and_its_old_holder_leaves_the_new_one_alone(s3_bucket):
    store = _store(s3_bucket)
    old, new, third = ObjectLeases(store), ObjectLeases(store), ObjectLeases(store)
    stale = old.try_take("y")
    assert stale is not None
    s3_bucket.backdate(f"leases/{_digest('y')}", ObjectLeases.TTL + ObjectLeases.CLOCK_MARGIN + 60)
    taken = new.try_take("y")  # its Last-Modified is long past: no TTL to wait
    assert taken is not None
    old.release(stale)  # the old holder's release must not delete the new holder's lease
    assert third.try_take("y") is None
    new.release(taken)
    final = third.try_take("y")
    assert final is not None
    third.release(final)
    assert s3_bucket.objects() == {}


@pytest.mark.s3
def test_open_reads_ranges_of_an_object_and_a_parquet_reader_takes_one_row_group(s3_bucket):
    import pyarrow as pa
    import pyarrow.parquet as pq

    store = _store(s3_bucket)
    data = bytes(range(256)) * 64
    store.put("frames/blob", data)
    with store.open("frames/blob") as handle:
        handle.seek(1000)
        assert handle.read(24) == data[1000:1024] and handle.tell() == 1024
        assert handle.read() == data[1024:]
    with pytest.raises(FileNotFoundError):
        store.open("frames/missing")
    frame = pl.DataFrame({"n": list(range(40_000))})
    buffer = io.BytesIO()
    pq.write_table(frame.to_arrow(), buffer, row_group_size=10_000)
    store.put("frames/t.parquet", buffer.getvalue())
    with pq.ParquetFile(pa.PythonFile(store.open("frames/t.parquet"), mode="r")) as parquet:
        assert parquet.metadata.num_row_groups == 4
        assert parquet.read_row_groups([2]).column("n").to_pylist() == list(range(20_000, 30_000))
