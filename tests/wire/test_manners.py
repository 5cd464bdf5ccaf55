"""Jupyter manners: warnings at the caller's line, short reprs, ``refresh=True``/``False``.

Warnings raised while a call works, on the client's threads too, reach the user at the
line of the call, in order, once per occurrence; the standard filters decide repeats.
"""

from __future__ import annotations

import json
import threading
import warnings
from typing import Any

import pytest

import storeframes as sf
from storeframes.errors import CallWarnings, carry, plural, warn
from storeframes.sandbox import SANDBOX_KEY, World
from storeframes.sandbox._client import SANDBOX_BASE_URL
from storeframes.sandbox.service import SandboxService
from storeframes.sandbox.transport import SandboxTransport
from storeframes.wire.http import lib as httpx
from tests.conftest import SANDBOX_TODAY

WORLD = World(0)
IOS = [a for a in WORLD.app_ids("ios") if a not in WORLD.UNAVAILABLE_IN_US]
ANDROID = [a for a in WORLD.app_ids("android") if a not in WORLD.UNAVAILABLE_IN_US]
GONE = next(a for a in WORLD.UNAVAILABLE_IN_US if a.isdigit())
TWELVE = IOS[:12]  # three requests of five apps at most, sent on the client's threads


class _Altered(SandboxTransport):
    """The sandbox, each metadata answer changed by ``alter(result, apps asked)`` on its way back."""

    def __init__(self, service: SandboxService, alter: Any):
        super().__init__(service)
        self.alter = alter
        self.sent = 0
        self.threads: set[str] = set()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent += 1
        self.threads.add(threading.current_thread().name)
        reply = super().handle_request(request)
        body = json.loads(reply.content)
        if reply.status_code == 200 and request.url.path.endswith("/metadata.json"):
            self.alter(body["result"], request.url.params["apps"].split(","))
        headers = {k: v for k, v in reply.headers.items() if k.lower() != "content-length"}
        return httpx.Response(reply.status_code, headers=headers, content=json.dumps(body).encode(), request=request)


def _client(alter: Any, **options: Any) -> tuple[sf.Client, _Altered]:
    service = SandboxService(today=SANDBOX_TODAY)
    transport = _Altered(service, alter)
    options = {"cache_dir": False, "progress": False, "clock": service.now, **options}
    client = sf.Client(SANDBOX_KEY, base_url=SANDBOX_BASE_URL, http_client=httpx.Client(transport=transport), **options)
    return client, transport


def _new_field(result: dict[str, Any], asked: list[str]) -> None:
    for app in result.values():
        app["metadata"]["shiny_new_field"] = 1


def _stranger(result: dict[str, Any], asked: list[str]) -> None:
    result[f"99{asked[0]}"] = result[asked[0]]  # an app nobody asked for, one per answer


# -- warnings at the caller's line ----------------------------------------------------------------


def test_an_unknown_field_points_at_the_line_of_the_frame_call():
    client, transport = _client(_new_field)
    with client, pytest.warns(sf.UnknownFieldWarning, match="shiny_new_field") as record:
        line = _line() + 1
        frame = client.metadata_frame(TWELVE)
    assert frame.height == 12 and transport.sent == 3
    assert len(record) == 1
    assert record[0].filename == __file__ and record[0].lineno == line


def test_warnings_raised_on_the_pool_threads_reach_the_caller_in_order():
    client, transport = _client(_stranger)
    with client, pytest.warns(sf.AnswerWarning) as record:
        line = _line() + 1
        frame = client.metadata_frame(TWELVE)
    assert transport.sent == 3 and threading.main_thread().name not in transport.threads  # on the pool threads
    assert frame["app_id"].to_list() == TWELVE
    assert len(record) == 3  # one per answer holding a stranger
    assert {(w.filename, w.lineno) for w in record} == {(__file__, line)}
    assert all("answered 1 app nobody asked for" in str(w.message) for w in record)
    strangers = {str(w.message).rsplit("'", 2)[1] for w in record}
    assert len(strangers) == 3 and {s[2:] for s in strangers} <= set(TWELVE)


def test_warnings_of_flattening_on_the_pool_threads_point_at_the_call(monkeypatch):
    from storeframes.fetch.pipeline import FrameSpec

    build, threads = FrameSpec.build, set()

    def recording(self, responses):
        threads.add(threading.current_thread().name)
        return build(self, responses)

    monkeypatch.setattr(FrameSpec, "build", recording)
    client, transport = _client(_new_field)
    with client, pytest.warns(sf.UnknownFieldWarning) as record:
        line = _line() + 1
        frame = client.metadata_frame(IOS[:150])  # over 2 MB of answers: flattened in two shares
    assert frame.height == 150 and transport.sent == 30
    # the process's threads are shared by every client: an idle one may take both shares, one after the other
    assert threads and threading.main_thread().name not in threads
    assert [(w.filename, w.lineno) for w in record] == [(__file__, line)] * 2  # one per share


def test_held_warnings_are_given_in_the_order_they_were_raised():
    def middle() -> None:
        warn("second", sf.AnswerWarning)

    with pytest.warns(UserWarning) as record:
        with CallWarnings():
            warn("first", sf.CostWarning)
            worker = threading.Thread(target=carry(middle))
            worker.start()
            worker.join()
            with CallWarnings():  # a call inside the call: its warnings go with the outer one
                warn("third", sf.AppsUnavailableWarning)
    assert [str(w.message) for w in record] == ["first", "second", "third"]
    assert [w.category for w in record] == [sf.CostWarning, sf.AnswerWarning, sf.AppsUnavailableWarning]


def test_an_unavailable_app_points_at_the_line_of_get():
    with sf.sandbox.client(today=SANDBOX_TODAY, progress=False) as client:
        with pytest.warns(sf.AppsUnavailableWarning, match=rf"1 app not available in country 'us'.*{GONE}") as record:
            line = _line() + 1
            answer = client.get("metadata", apps=[*TWELVE, GONE])
    assert answer.unavailable == (GONE,)
    assert len(record) == 1 and (record[0].filename, record[0].lineno) == (__file__, line)


def test_a_package_function_points_at_the_line_of_its_call(fresh_default):
    sf.configure(sandbox=True, today=SANDBOX_TODAY, progress=False)
    with pytest.warns(sf.AppsUnavailableWarning, match=GONE) as record:
        line = _line() + 1
        frame = sf.changes_frame([*TWELVE, GONE], start="2026-10-01", end="2026-10-31")
    assert set(frame["app_id"]) <= set(TWELVE) and frame.height > 0
    # a socket another test left to the garbage collector may warn here too: every other warning counts
    ours = [w for w in record if not issubclass(w.category, ResourceWarning)]
    assert [(w.filename, w.lineno) for w in ours] == [(__file__, line)]


def test_with_always_two_identical_calls_warn_twice():
    client, _ = _client(_new_field)
    with client, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        client.metadata_frame(TWELVE)
        client.metadata_frame(TWELVE)
    assert [w.category for w in caught] == [sf.UnknownFieldWarning, sf.UnknownFieldWarning]


def test_with_the_default_filter_the_same_line_warns_once():
    client, transport = _client(_stranger)
    with client, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        for _ in range(2):
            client.metadata_frame(TWELVE[:1])
    assert transport.sent == 2  # asked twice (no cache), named once: same line, same message
    assert len(caught) == 1 and caught[0].filename == __file__


def test_a_warning_turned_into_an_error_is_raised_by_the_call():
    client, _ = _client(_new_field)
    with client, warnings.catch_warnings():
        warnings.simplefilter("error", sf.UnknownFieldWarning)
        with pytest.raises(sf.UnknownFieldWarning, match="shiny_new_field"):
            client.metadata_frame(TWELVE)


def test_a_failing_call_gives_its_warnings_then_raises_its_own_error():
    def work() -> None:
        warn("held on a worker", sf.AnswerWarning)

    with pytest.warns(sf.AnswerWarning, match="held on a worker") as record, pytest.raises(KeyError):
        with CallWarnings():
            worker = threading.Thread(target=carry(work))
            worker.start()
            worker.join()
            assert len(record) == 0  # held until the call ends
            raise KeyError("the call's error")
    with warnings.catch_warnings(), pytest.raises(KeyError):
        warnings.simplefilter("error")  # the warning would be an error: the call's own error wins
        with CallWarnings():
            warn("held", sf.AnswerWarning)
            raise KeyError("the call's error")


def test_a_warning_outside_any_call_points_at_the_caller():
    with pytest.warns(sf.CostWarning) as record:
        line = _line() + 1
        warn("charged more", sf.CostWarning)
    assert (record[0].filename, record[0].lineno) == (__file__, line)


def test_a_plain_sandbox_session_raises_no_warning():
    with sf.sandbox.client(today=SANDBOX_TODAY, progress=False) as client, warnings.catch_warnings():
        warnings.simplefilter("error")
        for apps in (IOS[:8], ANDROID[:6]):
            assert client.metadata_frame(apps).height == len(apps)
            assert client.versions_frame(apps).height > 0
            changes = client.changes_frame(apps, start="2026-01-01")
            assert {"title", "short_description"} & set(changes["target"])
            client.screenshot_changes_frame(apps, start="2026-01-01")
            client.metrics_frame(apps)
        client.search_history_frame(["photo editor", "meditation"], start="2026-10-01")
        client.search_frame(["photo editor"], ads=True)
        client.benchmarks_frame(countries="us,gb", channels="all,search")


def _line() -> int:
    """The line number of the caller."""
    import sys

    return sys._getframe(1).f_lineno


# -- refresh=True / False ----------------------------------------------------------------------------


def test_refresh_true_means_always_and_false_means_auto():
    with sf.sandbox.client(today=SANDBOX_TODAY, progress=False) as client:
        client.metadata_frame(IOS[:2])
        sent = client.requests_sent
        client.metadata_frame(IOS[:2], refresh=False)  # "auto": the cache answers
        assert client.requests_sent == sent
        client.metadata_frame(IOS[:2], refresh=True)  # "always": asked again
        assert client.requests_sent == sent + 1
        assert client.get("metadata", apps=IOS[:2], refresh=True).cost > 0
        assert client.get("metadata", apps=IOS[:2], refresh=False).from_cache
        assert client.plan("metadata_frame", apps=IOS[:2], refresh=True).to_send == 1
    with sf.sandbox.client(today=SANDBOX_TODAY, progress=False, refresh=True) as always:
        assert always.refresh == "always"


@pytest.mark.parametrize("value", [1, 0, "yes", "Always", ["auto"]])
def test_other_refresh_values_are_refused_naming_what_is_allowed(value):
    with sf.sandbox.client(today=SANDBOX_TODAY, progress=False) as client:
        with pytest.raises(sf.InvalidParameterError, match=r"one of auto, always, never \(or True for always"):
            client.metadata_frame(IOS[:1], refresh=value)
        assert client.requests_sent == 0


# -- plural ---------------------------------------------------------------------------------------------


def test_plural_says_one_or_many():
    assert plural(1, "request") == "1 request"
    assert plural(0, "app") == "0 apps"
    assert plural(12_000, "credit") == "12,000 credits"
    assert plural(2, "entry", "entries") == "2 entries"


# -- short reprs --------------------------------------------------------------------------------------

TOKEN = "sk-live-manners-0123456789abcdef"


@pytest.fixture(scope="module")
def sandboxed():
    with sf.sandbox.client(today=SANDBOX_TODAY, progress=False, budget=25_000) as client:
        yield client


def test_an_answer_is_one_short_line_saying_what_it_holds(sandboxed):
    fetched = sandboxed.get("metadata", apps=TWELVE)
    assert len(repr(fetched.result)) > 100_000  # what the repr used to show
    shown = repr(fetched)
    assert shown == (
        f"Answer(metadata: 12 apps, country=us, device=iphone; 12 apps answered; 3 responses, "
        f"{fetched.cost} credits spent, 0 saved)"
    )
    cached = repr(sandboxed.get("metadata", apps=TWELVE))
    assert cached.endswith(f"3 responses from the cache, 0 credits spent, {fetched.cost} saved)")
    one = repr(sandboxed.get("changes", apps=TWELVE[:1], start_date="2026-10-01", end_date="2026-10-31"))
    assert one.startswith(f"Answer(changes: apps={TWELVE[0]}, country=us, device=iphone, 2026-10-01..2026-10-31;")
    assert "1 app answered; 1 response, " in one
    history = sandboxed.get("search_history", keyword="photo editor", start_date="2026-10-01", end_date="2026-10-31")
    days = repr(history)
    assert days.startswith(
        "Answer(search_history: keyword=photo editor, country=us, device=iphone, 2026-10-01..2026-10-31;"
    )
    assert f"; {len(history.result)} days answered; 1 response, " in days and len(history.result) > 1
    for text in (shown, cached, one, days, repr(fetched.responses[0]), repr(fetched.parts[0])):
        assert len(text) < 200 and "\n" not in text


def test_an_answer_with_unavailable_apps_counts_them(sandboxed):
    with pytest.warns(sf.AppsUnavailableWarning):
        answer = sandboxed.get("metadata", apps=[*TWELVE[:2], GONE])
    assert "2 apps answered, 1 not available;" in repr(answer)


def test_a_plan_says_requests_and_credits_in_words_and_as_a_table(sandboxed):
    plan = sandboxed.plan("metadata_frame", apps=IOS[-30:])  # none of them fetched yet
    assert repr(plan) == (
        f"Plan(metadata: 6 requests to send, at most {plan.estimate:,} credits; 0 cached answers used, "
        "saving 0 credits; 0 of 30 cells cached)"
    )
    one = sandboxed.plan("metadata_frame", apps=IOS[-1])
    assert repr(one).startswith("Plan(metadata: 1 request to send, at most 11 credits; ")
    html = plan._repr_html_()
    assert html.count("<tr>") == 1 + 6  # the header and one row per request
    assert "5 apps, country=us, device=iphone" in html and "(s)" not in html
    big = sandboxed.plan(
        "benchmarks_frame", countries=["us", "gb", "de", "fr", "jp"], channels="all,search,browse,appref,webref"
    )
    html = big._repr_html_()
    assert f"at most {big.estimate:,} credits" in html and big.estimate > 1_000  # thousands separators
    assert html.count("<tr>") == 1 + 20 + 1 and "… and 5 more rows" in html


def test_html_escapes_every_text():
    from storeframes.answers import Answer

    answer = Answer("search", {"keyword": "<script>alert('x')</script> & co", "country": "us"}, {}, ())
    html = answer._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html and "&amp; co" in html
    assert repr(answer).startswith("Answer(search: keyword=<script>alert('x')</script> &…, country=us; ")


def test_a_client_is_shown_without_its_token(tmp_path):
    client = sf.Client(
        TOKEN, base_url="https://user:pa55@api.example.com/api/public/store", cache_dir=tmp_path, budget=25_000
    )
    with client:
        shown, html = repr(client), client._repr_html_()
        assert shown.startswith("Client(base_url='https://***@api.example.com/api/public/store', api_key=set, ")
        assert "0 credits spent of a budget of 25,000" in shown and len(shown) < 200
        assert "25,000" in html and "api_key" in html
        for text in (shown, html):
            assert TOKEN not in text and "pa55" not in text
    assert repr(client).endswith(", closed)")


def test_a_schema_is_one_line_and_a_table_in_a_notebook():
    for table in sf.schemas.SCHEMAS.values():
        assert len(repr(table)) < 200 and repr(table).startswith(f"TableSchema({table.name}: ")
        assert f"{len(table.columns)} columns: {table.columns[0].name}, " in repr(table)
        html = table._repr_html_()
        assert html.count("<tr>") == 1 + len(table.columns)
    assert "<td>app_id</td><td>str</td>" in sf.schemas.METADATA._repr_html_()


def test_a_cache_entry_is_one_short_line(sandboxed):
    sandboxed.get("search_history", keyword="photo editor", start_date="2026-01-01", end_date="2026-10-31")
    entries = sandboxed.cache.entries("search_history")
    long = next(e for e in entries if e.params["start_date"] == "2026-01-01")
    shown = repr(long)
    assert shown.startswith("Entry(search_history: keyword=photo editor, country=us, device=iphone, ")
    assert f"2026-01-01..{long.params['end_date']}; {long.cost:,} credits, fetched 2026-11-20; id " in shown
    assert shown.endswith(f"; id {long.id})") and len(shown) < 200
