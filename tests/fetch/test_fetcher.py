"""The fetcher gathers: a frame call goes from the client's facade down to HTTP without climbing back into the
client. The fetcher is built from the client's parts and its settings, the FrameMaker asks the fetcher, and a
setting changed on the client is what the fetcher's next call reads."""

from __future__ import annotations

import dataclasses
import gc
import types

import pytest

import storeframes as sf
from storeframes import Client, sandbox
from storeframes.fetch.pipeline import FrameMaker
from storeframes.fetch.settings import Settings

IOS = "3233849169"


def _reaches(start: object, target: object, most: int = 200_000) -> bool:
    """Whether ``target`` is reachable from ``start`` through the objects storeframes made (and their
    dicts, lists, closures and bound methods): the references a call follows."""
    seen = {id(start)}
    todo = [start]
    while todo and len(seen) < most:
        obj = todo.pop()
        for ref in gc.get_referents(obj):
            if ref is target:
                return True
            if id(ref) in seen or isinstance(ref, (type, types.ModuleType)):
                continue
            module = getattr(type(ref), "__module__", "") or ""
            plain = isinstance(ref, (dict, list, tuple, set, types.FunctionType, types.MethodType, types.CellType))
            if module.startswith("storeframes") or plain:
                seen.add(id(ref))
                todo.append(ref)
    assert not todo, f"the walk stopped at {most:,} objects before it ended"  # not found means not there
    return False


def test_the_fetcher_holds_no_reference_back_to_its_client():
    with sandbox.client() as client:
        client.metadata_frame(IOS)  # the parts a call uses are made: threads, leases, the ledger's sink
        assert not _reaches(client.fetcher, client)
        assert _reaches(client, client.fetcher)  # the walk does find what is there


def test_a_frame_is_made_from_the_fetcher_alone_as_the_client_makes_it():
    with sandbox.client() as client:
        made = FrameMaker(client.fetcher).make("versions_frame", {"apps": IOS, "country": "us"}, None)
        assert made.equals(client.versions_frame(IOS))
        assert made.height > 0 and client.spent == 11  # one request served both


def test_a_setting_changed_on_the_client_is_what_the_fetchers_next_call_reads():
    with sandbox.client() as client:
        assert client.settings.offline is False and client.settings.namespace == "sandbox-0"
        client.offline = True
        assert client.fetcher.settings.offline is True and client.offline is True
        with pytest.raises(sf.NotCachedError, match="offline"):
            client.metadata_frame(IOS)
        client.offline_reason = "offline: this notebook reads what is kept"
        with pytest.raises(sf.NotCachedError, match="this notebook reads what is kept"):
            client.get("metadata", apps=IOS)
        with pytest.raises(dataclasses.FrozenInstanceError):
            client.settings.offline = False  # type: ignore[misc]
        assert client.requests_sent == 0 and Client.namespace == "service"


def test_the_sliding_window_limiter_is_not_public_api():
    assert "SlidingWindowLimiter" not in sf.__all__ and not hasattr(sf, "SlidingWindowLimiter")


def test_settings_are_a_frozen_dataclass_of_what_the_fetcher_reads():
    names = {field.name for field in dataclasses.fields(Settings)}
    assert {"endpoints", "refresh", "offline", "progress", "namespace", "offline_reason", "clock"} <= names
    assert dataclasses.is_dataclass(Settings) and Settings.__dataclass_params__.frozen  # type: ignore[attr-defined]


def test_the_settings_the_fetcher_reads_never_hold_the_token(tmp_path):
    token = "sf-live-token-7f3c9a1e5b2d4c6e"
    with Client(token, base_url="https://store.example.invalid/api/public/store", cache_dir=tmp_path) as client:
        shown = repr(client.settings) + "".join(
            repr(getattr(client.settings, f.name)) for f in dataclasses.fields(Settings)
        )
        assert token not in shown and "7f3c9a1e" not in shown
        assert client.settings.endpoints["metadata"].name == "metadata"  # what the fetcher needs is there
