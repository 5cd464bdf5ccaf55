"""Answers that are not what was asked: strangers, apps left out, refusals where no app can be left out.

Each case is served by a loopback server that misbehaves on purpose (tests/_hostile.py),
with real payloads of the sandbox world around the hostile part, and checks what a user
relies on: the rows of the frames, what the cache keeps, what the next call asks for,
and the warning or error that says what happened.
"""

from __future__ import annotations

import warnings
from datetime import UTC, datetime
from typing import Any

import polars as pl
import pytest

import storeframes as sf
from storeframes.sandbox import World
from storeframes.sandbox import client as sandbox_client
from tests._hostile import PREFIX, Hostile, Reply, envelope
from tests.conftest import SANDBOX_TODAY

TOKEN = "sk-live-hostile-answers-0123456789"
WORLD = World(0)
APPS = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US][:3]
NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)


def _real(endpoint: str, **params: Any) -> Any:
    """The sandbox's ``result`` for a request: a real payload to put hostile parts into."""
    with sandbox_client(today=SANDBOX_TODAY, cache_dir=False, progress=False) as client:
        return client.get(endpoint, **params).result


def _client(server: Hostile, tmp_path: Any, **options: Any) -> sf.Client:
    options = {"backoff": (0.0, 0.01), "max_tries": 2, "progress": False, "clock": lambda: NOW, **options}
    return sf.Client(TOKEN, base_url=server.base_url, cache_dir=tmp_path / "cache", **options)


def test_apps_nobody_asked_for_are_dropped_with_a_warning_and_never_cached(tmp_path):
    mine, stranger = APPS[0], APPS[1]
    result = _real("metadata", apps=[mine, stranger])
    with Hostile(Reply.json(envelope(result, cost=11), kind="stranger app in answer")) as server:
        client = _client(server, tmp_path)
        with pytest.warns(sf.AnswerWarning, match=rf"nobody asked for.*'{stranger}'"):
            frame = client.metadata_frame(apps=mine)
        assert frame["app_id"].to_list() == [mine]
        versions = client.versions_frame(apps=mine)  # from the same cached answer
        assert versions.height > 0 and set(versions["app_id"]) == {mine}
        assert len(server.seen) == 1
        entries = client.cache.entries("metadata")
        assert [e.params["apps"] for e in entries] == [mine]
        assert list(client.cache.load(entries[0]).result) == [mine]
        assert client.spent == 11 == client.ledger["cost"].sum()
        client.close()


def test_a_requested_app_left_out_of_an_answer_is_named_not_cached_and_asked_for_again(tmp_path):
    first, second = APPS[0], APPS[1]
    full = _real("metadata", apps=[first, second])
    partial = {first: full[first]}
    replies = [
        Reply.json(envelope(partial, cost=22), kind="requested app left out"),
        Reply.json(envelope({second: full[second]}, cost=11)),
    ]
    with Hostile(replies) as server:
        client = _client(server, tmp_path)
        with pytest.warns(sf.AnswerWarning, match=rf"without 1 app.*'{second}'"):
            frame = client.metadata_frame(apps=[first, second])
        assert frame["app_id"].to_list() == [first]
        assert len(server.seen) == 1  # the call does not ask again and again
        assert [e.params["apps"] for e in client.cache.entries("metadata")] == [first]
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            again = client.metadata_frame(apps=[first, second])
        assert again["app_id"].to_list() == [first, second]
        assert [s.params["apps"] for s in server.seen] == [",".join(sorted([first, second])), second]
        assert client.spent == 33 == client.ledger["cost"].sum()
        client.close()


def test_change_history_left_out_is_not_final_and_is_asked_for_again(tmp_path):
    first, second = APPS[0], APPS[1]
    dates = {"start_date": "2026-10-01", "end_date": "2026-10-31"}
    full = _real("changes", apps=[first, second], **dates)
    replies = [
        Reply.json(envelope({first: full[first]}, cost=82), kind="requested app left out"),
        Reply.json(envelope({second: full[second]}, cost=41)),
    ]
    with Hostile(replies) as server:
        client = _client(server, tmp_path)
        with pytest.warns(sf.AnswerWarning, match=second):
            frame = client.changes_frame(apps=[first, second], start="2026-10-01", end="2026-10-31")
        assert set(frame["app_id"]) <= {first}
        again = client.changes_frame(apps=[first, second], start="2026-10-01", end="2026-10-31")
        assert len(server.seen) == 2 and server.seen[1].params["apps"] == second
        expected = sum(len(full[app]["changes"]) for app in (first, second))
        assert again.height == expected and set(again["app_id"]) == {first, second}
        client.close()


def test_an_answer_of_nothing_that_was_asked_keeps_nothing_and_says_so(tmp_path):
    stranger = APPS[2]
    result = _real("metadata", apps=[stranger])
    with Hostile(Reply.json(envelope(result, cost=11), kind="only strangers in answer")) as server:
        client = _client(server, tmp_path)
        with pytest.warns(sf.AnswerWarning) as caught:
            frame = client.metadata_frame(apps=APPS[0])
        messages = " ".join(str(w.message) for w in caught)
        assert stranger in messages and APPS[0] in messages
        assert frame.height == 0 and frame.schema == sf.schemas.METADATA.schema
        assert client.cache.entries() == [] and client.spent == 11
        client.close()


@pytest.mark.parametrize(
    ("frame", "arguments", "path"),
    [
        ("search_frame", {"keywords": "photo editor"}, "/keywords/search-results/current"),
        (
            "search_history_frame",
            {"keywords": "photo editor", "start": "2026-11-01", "end": "2026-11-05"},
            "/keywords/search-results/history.json",
        ),
        ("benchmarks_frame", {}, "/categories/benchmarks"),
    ],
)
def test_app_not_available_on_an_endpoint_without_apps_is_raised_not_an_empty_frame(tmp_path, frame, arguments, path):
    body = {"error": {"code": "AppNotAvailableError", "message": "not available"}}
    with Hostile(Reply.json(body, status=422, kind="422 where no app can be left out")) as server:
        client = _client(server, tmp_path)
        with pytest.raises(sf.AppNotAvailableError) as caught:
            getattr(client, frame)(**arguments)
        assert caught.value.status == 422 and caught.value.path == path
        assert [s.path for s in server.seen] == [PREFIX + path]
        assert client.cache.entries() == []
        client.close()


def test_a_lone_surrogate_in_an_answer_is_kept_and_reaches_the_frame_as_a_replacement_character(tmp_path):
    app = APPS[0]
    result = _real("metadata", apps=[app])
    body = Reply.json(envelope(result, cost=11)).body
    title = result[app]["metadata"]["title"]
    hostile = body.replace(f'"title": "{title}"'.encode(), b'"title": "Photo \\ud83d"')
    assert hostile != body
    with Hostile(Reply(kind="lone surrogate", body=hostile, headers={"Content-Type": "application/json"})) as server:
        client = _client(server, tmp_path)
        frame = client.metadata_frame(apps=app)
        assert frame["title"].to_list() == ["Photo \ufffd"]
        assert client.metadata_frame(apps=app)["title"].to_list() == ["Photo \ufffd"]
        assert len(server.seen) == 1 and client.spent == 11
        assert len(client.cache.entries("metadata")) == 1
        client.close()
    offline = sf.Client(cache_dir=tmp_path / "cache", offline=True, clock=lambda: NOW)
    assert offline.metadata_frame(apps=app)["title"].to_list() == ["Photo \ufffd"]
    offline.close()


def test_strangers_never_reach_a_frame_from_several_requests(tmp_path):
    apps = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US][:7]
    stranger = "999999999"
    full = _real("metadata", apps=apps)
    first = {a: full[a] for a in apps[:5]} | {stranger: full[apps[0]]}
    second = {a: full[a] for a in apps[5:]} | {stranger: full[apps[0]]}
    replies = [Reply.json(envelope(first, cost=55), kind="stranger app in answer")]
    replies.append(Reply.json(envelope(second, cost=22), kind="stranger app in answer"))
    with Hostile(replies) as server:
        client = _client(server, tmp_path, max_workers=1)
        with pytest.warns(sf.AnswerWarning, match=stranger):
            frame = client.metadata_frame(apps=apps)
        assert frame["app_id"].to_list() == apps and frame["app_id"].n_unique() == 7
        assert frame.filter(pl.col("app_id") == stranger).height == 0
        client.close()
