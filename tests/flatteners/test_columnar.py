"""Histories read from their bodies straight into columns (storeframes/flatteners/columnar.py) give the frames the
walk of the parsed answers gives: on the sandbox's answers in every dialect and store, on the cassettes, and on
bodies bent out of the hot shape (where the reader must decline, and the walk gives its errors and warnings)."""

from __future__ import annotations

import json
import pickle
import random
import warnings
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml
from polars.testing import assert_frame_equal

from storeframes import ResponseShapeError, sandbox
from storeframes.answers import UNPARSED, Response
from storeframes.flatteners import Keys
from storeframes.flatteners.columnar import history_from_columns, read_history_body
from storeframes.flatteners.search import batch_search_history
from storeframes.json_bodies import parse_answer
from storeframes.sandbox import Dialect
from storeframes.wire import envelope as wire_envelope

ROOT = Path(__file__).resolve().parents[2]
TODAY = date(2026, 11, 20)
FETCHED = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)


def keys(device: str = "iphone", keyword: str = "maps") -> Keys:
    params = {"keyword": keyword, "device": device, "country": "us", "start_date": "2026-11-01"}
    return Keys.of(params, {"language": "en"}, FETCHED)


def body_of(days: Any, **metadata: Any) -> bytes:
    return json.dumps(
        {"result": days, "metadata": {"request": {"status": 200, **metadata}}}, separators=(",", ":")
    ).encode()


def outcome(run: Any) -> tuple[Any, list[str]]:
    """What ``run()`` gives (its frame and counts, or its error's text) and the warnings it gives."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            got: Any = run()
        except ResponseShapeError as exc:
            got = ("error", str(exc), exc.path)
    return got, [f"{w.category.__name__}: {w.message}" for w in caught]


def assert_same(bodies: list[bytes], every: list[Keys]) -> bool:
    """The columns' frames (where the reader reads every body) equal the walk's; True when they were read."""
    walked, said = outcome(
        lambda: batch_search_history([(parse_answer(b)["result"], k) for b, k in zip(bodies, every, strict=True)])
    )
    read = [read_history_body(b) for b in bodies]
    if any(r is None for r in read):
        return False
    for body, columns in zip(bodies, read, strict=True):
        assert columns is not None
        assert columns.rest == {k: v for k, v in parse_answer(body).items() if k != "result"}
    got, told = outcome(lambda: history_from_columns([(r, k) for r, k in zip(read, every, strict=True)]))
    if got is None:  # declined (a day past the cap): the walk is taken, and warns
        return False
    if isinstance(walked[0], str):  # an error: the same one
        assert got == walked
    else:
        assert_frame_equal(got[0], walked[0], check_exact=True)
        assert got[1] == walked[1]
    assert told == said
    return True


def sandbox_days(device: str, days: int = 20, keyword: str = "photo editor") -> dict[str, list[str]]:
    with sandbox.client(today=TODAY, cache_dir=False) as client:
        start = (TODAY - timedelta(days=days)).isoformat()
        result = client.get(
            "search_history", keyword=keyword, device=device, start_date=start, end_date=TODAY.isoformat()
        ).result
    assert isinstance(result, dict)
    return result


@pytest.mark.parametrize("device", ["iphone", "ipad", "android"])
def test_sandbox_histories_read_into_columns_equal_the_walk(device):
    days = sandbox_days(device)
    assert len(days) == 21 and all(days.values())
    assert assert_same(
        [body_of(days, cost=5), body_of(dict(list(days.items())[:3]))], [keys(device), keys(device, "x")]
    )


@pytest.mark.parametrize(
    "dialect",
    [Dialect(), Dialect(history="list"), Dialect(keyword_level=True), Dialect(history="list", keyword_level=True)],
)
@pytest.mark.parametrize("device", ["iphone", "android"])
def test_a_history_call_gives_the_same_frame_read_into_columns_or_walked(monkeypatch, dialect, device):
    """The whole call through the client: the request path reads the usual form into columns, any other is parsed."""
    read = []

    def reading(body: bytes) -> Any:
        read.append(found := read_history_body(body))
        return found

    def frame() -> pl.DataFrame:
        with sandbox.client(today=TODAY, cache_dir=False, dialect=dialect, clock=lambda: FETCHED) as client:
            return client.search_history_frame(
                ["photo editor", "maps"], start="2026-10-01", end=TODAY.isoformat(), device=device
            )

    monkeypatch.setattr(wire_envelope, "read_history_body", reading)
    columns = frame()
    monkeypatch.setattr(wire_envelope, "read_history_body", lambda body: None)
    walked = frame()
    assert_frame_equal(columns, walked, check_exact=True)
    assert columns.height > 1000 and columns.get_column("source").to_list()[-1] == "live"
    assert len(read) == 2
    usual = dialect == Dialect()
    assert all((r is not None) == usual for r in read)


def cassette_bodies() -> list[bytes]:
    found = []
    for path in sorted((ROOT / "cassettes").rglob("*.yaml")):
        for interaction in yaml.safe_load(path.read_text()).get("interactions", []):
            if "/history.json" in interaction["request"]["uri"] and interaction["response"]["status"]["code"] == 200:
                found.append(interaction["response"]["body"]["string"].encode())
    return found


def test_the_cassettes_histories_read_into_columns_equal_the_walk():
    bodies = cassette_bodies()
    assert bodies
    read = [assert_same([body], [keys()]) for body in bodies]
    assert any(read)


GOOD = {"2026-11-18": ["284882215", "389801252", "com.whatsapp"], "2026-11-19": [], "2026-11-20": ["1", "2"]}


def bent(text: str) -> bytes:
    return text.encode()


BENT = {
    "integer ids": body_of({"2026-11-18": [284882215, 389801252]}),
    "white space": body_of(GOOD).replace(b",", b", ", 3),
    "an escape": body_of(GOOD).replace(b'"1"', b'"\\u0031"'),
    "an escaped quote": body_of(GOOD).replace(b'"1"', b'"1\\"x"'),
    "not ASCII": body_of(GOOD).replace(b'"1"', '"é"'.encode()),
    "a control byte": body_of(GOOD).replace(b'"1"', b'"1\x7f"'),
    "an empty id": body_of({"2026-11-18": ["1", ""]}),
    "a null id": body_of({"2026-11-18": ["1", None]}),
    "a day twice": bent('{"result":{"2026-11-18":["1","2"],"2026-11-18":["3"]},"metadata":{}}'),
    "a result twice": bent('{"result":{"2026-11-18":["1"]},"metadata":{},"result":{"2026-11-19":["2"]}}'),
    "a bad date": body_of({"2026-13-45": ["1"]}),
    "a longer date": body_of({"2026-11-18T00:00": ["1"]}),
    "not a date": body_of({"yesterday": ["1"]}),
    "a day not a list": body_of({"2026-11-18": {"value": ["1", "2"]}}),
    "app objects": body_of({"2026-11-18": [{"id": "1"}, {"id": "2", "is_ad": True}]}),
    "a brace in an id": body_of({"2026-11-18": ["1}", "2"]}),
    "marks in ids": body_of({"2026-11-18": ["a,b", "c:[d", "e]", "[", "]"]}),
    "a day past the cap": body_of({"2026-11-18": [str(i) for i in range(501)]}),
    "the live form": body_of({"date": "2026-11-20", "value": ["1", "2"]}),
    "under the keyword": body_of({"maps": GOOD}),
    "metadata first": bent('{"metadata":{},"result":{"2026-11-18":["1"]}}'),
    "NaN in the metadata": bent('{"result":{"2026-11-18":["1"]},"metadata":{"x":NaN}}'),
    "nothing after": bent('{"result":{"2026-11-18":["1"],"2026-11-19":[]}}'),
    "an empty last day": body_of({"2026-11-18": ["1"], "2026-11-19": []}),
    "only an empty day": body_of({"2026-11-19": []}),
    "the good one": body_of(GOOD),
}


@pytest.mark.parametrize("name", list(BENT))
def test_a_body_bent_from_the_hot_shape_is_declined_or_read_as_the_walk_reads_it(name):
    body = BENT[name]
    read = assert_same([body], [keys(keyword="maps")])
    declined = {"integer ids", "white space", "an escape", "an escaped quote", "not ASCII", "a control byte"}
    declined |= {"an empty id", "a null id", "a day twice", "a result twice", "not a date", "a day not a list"}
    declined |= {"app objects", "a brace in an id", "a day past the cap", "the live form", "under the keyword"}
    declined |= {"metadata first", "NaN in the metadata"}
    assert read == (name not in declined)


def test_a_bad_date_read_into_columns_names_its_path_as_the_walk_does():
    got, _ = outcome(lambda: history_from_columns([(read_history_body(BENT["a bad date"]), keys())]))
    assert got[0] == "error" and got[2] == "result.2026-13-45"


def test_a_response_read_into_columns_parses_its_result_only_when_asked_and_once():
    body = body_of(GOOD)
    response = Response("search_history", {}, UNPARSED, 0, 0, 200, FETCHED, body=body, columns=read_history_body(body))
    assert response.__dict__["_result"] is UNPARSED
    kept = response.kept_as("entry-1")
    assert kept.entry == "entry-1" and kept.__dict__["_result"] is UNPARSED
    assert response.result == GOOD and response.result is response.result
    assert pickle.loads(pickle.dumps(kept)).result == GOOD
    with pytest.raises(TypeError):
        Response("search_history", {})  # type: ignore[call-arg]  # the result stays required


NOT_JSON = {
    "a date without its list": b'{"result":{"2026-11-18","1"]},"metadata":{}}',
    "a date after a day's end without its list": b'{"result":{"2026-11-18":["1"],"2026-11-19","2"]},"metadata":{}}',
    "a list opened after an id": b'{"result":{"2026-11-18":["1":["2"]},"metadata":{}}',
    "an empty day after an id": b'{"result":{"2026-11-18":["1":[],"2"]},"metadata":{}}',
    "no mark between two texts": b'{"result":{"2026-11-18":["1""2"]},"metadata":{}}',
    "an id after the last day's end": b'{"result":{"2026-11-18":["1"],"2"]},"metadata":{}}',
}


@pytest.mark.parametrize("name", list(NOT_JSON))
def test_marks_out_of_place_are_declined(name):
    """Marks that are each known but out of their place (not JSON, or not a list per day) are not read."""
    assert read_history_body(NOT_JSON[name]) is None
    with pytest.raises(ValueError):
        json.loads(NOT_JSON[name])


def bent_at_random(seed: int, count: int) -> list[bytes]:
    """Bodies near the hot shape: one to three bytes of JSON's marks (and an escape, a space, a letter) put in,
    taken out or put in place of another, anywhere after the body's head."""
    rng = random.Random(seed)
    near = [body_of(GOOD), BENT["only an empty day"], BENT["nothing after"]]
    found = []
    for _ in range(count):
        body = bytearray(rng.choice(near))
        for _ in range(rng.randint(1, 3)):
            i, mark = rng.randrange(len(b'{"result":{'), len(body)), rng.choice(b'",:[]{}1a\\ -')
            if (pick := rng.random()) < 0.4:
                body[i:i] = bytes([mark])
            elif pick < 0.7:
                del body[i]
            else:
                body[i] = mark
        found.append(bytes(body))
    return found


@pytest.mark.parametrize("seed", range(3))
def test_bodies_bent_at_random_are_declined_or_read_as_the_walk_reads_them(seed):
    """Whatever the reader takes is strict JSON of the hot shape, and gives the walk's frame and warnings."""
    read = 0
    for body in bent_at_random(seed, 400):
        if read_history_body(body) is not None:
            assert assert_same([body], [keys(keyword="maps")]), body
            read += 1
    assert read > 20  # (the rest declined: not JSON, or not the hot shape)
