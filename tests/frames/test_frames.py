"""The metadata and metrics frame functions end to end, against the in-process sandbox."""

from __future__ import annotations

import gc
import inspect
import threading
import warnings
from datetime import date

import polars as pl
import pytest

import storeframes as sf
from storeframes import schemas
from storeframes.fetch.pipeline import collector_paused
from storeframes.frames import FRAMES
from storeframes.sandbox import SANDBOX_KEY, World
from tests.conftest import SANDBOX_TODAY

WORLD = World(0)
IOS = list(WORLD.EXAMPLE_IOS_APPS)
ANDROID = list(WORLD.EXAMPLE_ANDROID_APPS)
GONE = next(a for a in WORLD.UNAVAILABLE_IN_US if a.isdigit())
METADATA_FRAMES = [name for name, spec in FRAMES.items() if spec.endpoint == "metadata"]


def arrivals(client: sf.Client) -> list[dict[str, str]]:
    return [dict(a.params) for a in client.sandbox_service.arrivals]


@pytest.fixture
def client(make_client, tmp_path):
    return make_client(cache_dir=tmp_path / "cache")


# -- one fetch, every table ---------------------------------------------------------------------


def test_every_metadata_table_costs_one_fetch(client):
    first = client.metadata_frame(IOS)
    spent, sent = client.spent, len(arrivals(client))
    assert sent == 2 and spent == 10 * len(IOS) + 2  # 6 apps: 5 + 1 per request
    heights = {name: getattr(client, name)(IOS).height for name in METADATA_FRAMES}
    assert client.spent == spent and len(arrivals(client)) == sent
    assert first.height == len(IOS)
    raw = client.get("metadata", apps=IOS).result
    assert heights["versions_frame"] == sum(len(raw[a]["metadata"]["versions"]) for a in IOS)
    assert heights["screenshots_frame"] == sum(
        len(shots) for a in IOS for shots in raw[a]["metadata"]["screenshots"].values()
    )
    assert heights["in_app_purchases_frame"] == sum(len(raw[a]["metadata"]["in_app_purchases"]) for a in IOS)
    assert heights["related_apps_frame"] == sum(len(raw[a]["metadata"]["customers_also_bought"]) for a in IOS)
    assert heights["permissions_frame"] == 0


def test_frames_are_kept_as_parquet_and_read_without_the_raw_answer(client, monkeypatch):
    cold = client.versions_frame(IOS)
    folder = client.cache.path / "frames" / "table=versions"
    assert len(list(folder.glob("*.parquet"))) == 2  # one per cached answer
    monkeypatch.setattr(sf.Cache, "load", lambda self, entry: pytest.fail("the raw answer was read"))
    warm = client.versions_frame(IOS)
    assert warm.equals(cold)
    assert len(arrivals(client)) == 2


def test_a_frame_of_another_flattener_version_is_rebuilt_from_the_raw_answer(client, monkeypatch):
    cold = client.metadata_frame(IOS[:2])
    spec = FRAMES["metadata_frame"]
    monkeypatch.setitem(FRAMES, "metadata_frame", type(spec)(**{**spec.__dict__, "revision": spec.revision + 1}))
    built = []
    monkeypatch.setattr(sf.Cache, "load", lambda self, entry, real=sf.Cache.load: built.append(1) or real(self, entry))
    assert client.metadata_frame(IOS[:2]).equals(cold)
    assert built == [1] and len(arrivals(client)) == 1


def test_a_broken_frame_file_is_set_aside_and_rebuilt(client):
    cold = client.screenshots_frame(IOS[:3])
    (path,) = (client.cache.path / "frames" / "table=screenshots").glob("*.parquet")
    path.write_bytes(b"PAR1 not really")
    with pytest.warns(sf.CacheWarning):
        again = client.screenshots_frame(IOS[:3])
    assert again.equals(cold)
    assert len(arrivals(client)) == 1
    assert path.exists() and list(path.parent.glob("*.corrupt"))


def test_a_lost_raw_answer_is_fetched_again(client):
    client.metadata_frame(IOS[:2])
    for answer in (client.cache.path / "answers").rglob("*.json.*"):
        answer.unlink()
    versions = client.versions_frame(IOS[:2])  # no versions frame kept, no raw answer: fetch again
    assert versions["app_id"].unique().sort().to_list() == sorted(IOS[:2])
    assert len(arrivals(client)) == 2


def test_rows_of_a_larger_cached_answer_are_picked_by_app(client):
    client.metadata_frame(IOS[:5])
    picked = client.versions_frame([IOS[3], IOS[1]])
    assert picked["app_id"].unique(maintain_order=True).to_list() == [IOS[3], IOS[1]]
    assert len(arrivals(client)) == 1


def test_rows_follow_the_order_the_apps_were_given(client):
    wanted = [IOS[4], IOS[0], IOS[2]]
    frame = client.metadata_frame(",".join(wanted + [IOS[0]]))
    assert frame["app_id"].to_list() == wanted
    versions = client.versions_frame(wanted)
    firsts = versions.filter(pl.col("position") == 1)["app_id"].to_list()
    assert firsts == wanted
    assert versions.group_by("app_id", maintain_order=True).agg(pl.col("position").diff().drop_nulls().min())[
        "position"
    ].to_list() == [1, 1, 1]


def test_the_offline_notebook_reproduces_the_frames(make_client, tmp_path):
    folder = tmp_path / "shared-cache"
    with make_client(cache_dir=folder) as online:
        expected = {name: getattr(online, name)(IOS[:3]) for name in METADATA_FRAMES}
    with make_client(cache_dir=folder, offline=True) as offline:
        for name, frame in expected.items():
            assert getattr(offline, name)(IOS[:3]).equals(frame), name
        assert offline.sandbox_service.arrivals == []
        with pytest.raises(sf.NotCachedError):
            offline.metadata_frame(IOS[3:5])


def test_the_token_is_in_no_frame_file(client):
    for name in METADATA_FRAMES:
        getattr(client, name)(IOS)
    client.metrics_frame(IOS)
    client.cache.frames.flush()  # what the cache writes behind the calls (an index's record of rows), written
    files = [p for p in client.cache.path.rglob("*") if p.is_file()]
    assert any("frames" in p.parts for p in files)
    for path in files:
        assert SANDBOX_KEY.encode() not in path.read_bytes(), path


# -- stores, schemas and pandas --------------------------------------------------------------------


@pytest.mark.parametrize(("device", "apps"), [("iphone", IOS), ("ipad", IOS[:3]), ("android", ANDROID)])
def test_every_frame_has_its_declared_schema_on_every_device(client, device, apps):
    for name in METADATA_FRAMES:
        frame = getattr(client, name)(apps, device=device)
        assert frame.schema == FRAMES[name].table.schema, name
        assert frame.to_pandas().shape == frame.shape
    metadata = client.metadata_frame(apps, device=device)
    assert metadata["device"].unique().to_list() == [device]
    assert metadata["language"].unique().to_list() == ["en"]
    assert metadata["fetched_at"].dt.date().unique().to_list() == [SANDBOX_TODAY]


def test_android_and_iphone_fill_their_own_columns(client):
    ios = client.metadata_frame(IOS[:2])
    android = client.metadata_frame(ANDROID[:2], device="android")
    assert ios["subtitle"].null_count() == 0 and ios["long_description"].null_count() == 2
    assert android["long_description"].null_count() == 0 and android["subtitle"].null_count() == 2
    text = android["long_description_text"].to_list()
    assert all("<br" not in t and "<b>" not in t for t in text)
    assert all(a.count("<br") <= t.count("\n") for a, t in zip(android["long_description"], text, strict=True))
    assert android["developer_email"].null_count() == 0 and ios["developer_email"].null_count() == 2
    assert android["size_bytes"].min() > 0 and ios["size_bytes"].min() > 0
    screenshots = client.screenshots_frame(ANDROID[:2], device="android")
    assert screenshots["device_key"].unique().to_list() == ["android"]
    assert screenshots["filename"].null_count() == screenshots.height


def test_the_ids_choose_the_device_unless_it_is_given(client):
    assert client.metadata_frame(ANDROID[:2])["device"].to_list() == ["android", "android"]
    assert client.permissions_frame(ANDROID[0])["permission"].len() > 0
    assert client.metadata_frame(IOS[0])["device"].to_list() == ["iphone"]
    assert client.metadata_frame(IOS[0], device="ipad")["device"].to_list() == ["ipad"]
    assert client.plan("versions_frame", apps=ANDROID[:1]).requests["params"][0].count('"device": "android"') == 1


def test_an_empty_answer_gives_the_declared_schema(client):
    with pytest.warns(sf.AppsUnavailableWarning, match=GONE):
        frame = client.metadata_frame([GONE])
    assert frame.height == 0 and frame.schema == schemas.METADATA.schema
    with pytest.warns(sf.AppsUnavailableWarning):
        versions = client.versions_frame(GONE)
    assert versions.height == 0 and versions.schema == schemas.VERSIONS.schema


def test_an_unavailable_app_is_left_out_and_named(client):
    with pytest.warns(sf.AppsUnavailableWarning, match=GONE):
        frame = client.metadata_frame([*IOS[:3], GONE])
    assert frame["app_id"].to_list() == IOS[:3]
    sent = len(arrivals(client))
    with pytest.warns(sf.AppsUnavailableWarning, match=GONE):
        assert client.versions_frame([*IOS[:3], GONE])["app_id"].unique().len() == 3
    assert len(arrivals(client)) == sent  # the unavailability was remembered


# -- metrics ------------------------------------------------------------------------------------------


def test_metrics_frame_has_one_row_per_app_and_metric_in_the_order_asked(client):
    frame = client.metrics_frame(IOS[:3], ["ratings", "power", "downloads"])
    assert frame.schema == schemas.METRICS.schema
    assert frame.select("app_id", "metric").rows() == [
        (a, m) for a in IOS[:3] for m in ("ratings", "app-power", "downloads")
    ]
    ratings = frame.filter(pl.col("metric") == "ratings")
    assert (ratings["ratings_total"] == ratings["value"].cast(pl.Int64)).all()
    stars = ratings.select(pl.sum_horizontal(f"stars_{s}" for s in range(1, 6)))
    assert (stars.to_series() == ratings["ratings_total"]).all()
    assert frame["date"].unique().to_list() == [SANDBOX_TODAY.replace(day=SANDBOX_TODAY.day - 1)]


def test_a_metric_asked_later_is_the_only_one_fetched(client):
    client.metrics_frame(IOS[:2], ["downloads", "ratings"])
    frame = client.metrics_frame(IOS[:2], ["downloads", "ratings", "app-power"])
    assert frame.height == 6
    assert [q["metrics"] for q in arrivals(client)] == ["downloads,ratings", "app-power"]


def test_metrics_frame_defaults_and_nulls(client):
    frame = client.metrics_frame(IOS[0])
    assert frame["metric"].to_list() == ["downloads", "revenues", "app-power", "ratings"]
    revenues = frame.filter(pl.col("metric") == "revenues")
    assert revenues["currency"].to_list() == ["usd"]
    assert frame.filter(pl.col("metric") == "app-power")["precision"].to_list() == [None]


# -- input errors spend nothing ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "arguments", "parameter"),
    [
        ("metadata_frame", {"apps": ["com.example.notes"], "device": "iphone"}, "apps"),
        ("metadata_frame", {"apps": [IOS[0], "com.example.notes"]}, "apps"),
        ("versions_frame", {"apps": []}, "apps"),
        ("metadata_frame", {"apps": IOS[:1], "country": "usa"}, "country"),
        ("screenshots_frame", {"apps": IOS[:1], "device": "watch"}, "device"),
        ("permissions_frame", {"apps": IOS[:1], "device": "android"}, "apps"),
        ("metrics_frame", {"apps": IOS[:1], "metrics": ["installs"]}, "metrics"),
        ("metrics_frame", {"apps": IOS[:1], "metrics": []}, "metrics"),
    ],
)
def test_bad_input_is_refused_before_any_request(client, name, arguments, parameter):
    with pytest.raises(sf.InvalidParameterError) as caught:
        getattr(client, name)(**arguments)
    assert caught.value.parameter == parameter
    assert client.sandbox_service.arrivals == [] and client.spent == 0


def test_a_budget_too_small_refuses_before_sending(make_client, tmp_path):
    with make_client(cache_dir=tmp_path, budget=20) as small:
        with pytest.raises(sf.BudgetExceededError):
            small.metadata_frame(IOS)
        assert small.sandbox_service.arrivals == []


# -- plan, the default client and documentation -------------------------------------------------------


def test_plan_takes_a_frame_function_and_its_defaults(client):
    assert client.plan("versions_frame", apps=IOS).estimate == client.plan("metadata", apps=IOS).estimate
    assert (
        client.plan("metrics_frame", apps=IOS[:2]).estimate
        == client.plan("metrics", apps=IOS[:2], metrics="downloads,revenues,app-power,ratings").estimate
    )
    client.metadata_frame(IOS)
    assert client.plan("screenshots_frame", apps=IOS).to_send == 0
    with pytest.raises(sf.InvalidParameterError, match="versions_frame"):
        client.plan("versions_frame", apps=IOS, start="2026-01-01")


def test_package_functions_use_the_configured_client(make_client, fresh_default, tmp_path):
    configured = sf.configure(sandbox=True, today=SANDBOX_TODAY, cache_dir=tmp_path)
    assert sf.default_client() is configured
    frame = sf.metadata_frame(IOS[:2])
    assert frame["app_id"].to_list() == IOS[:2]
    assert sf.versions_frame(IOS[:2]).height > 0 and configured.spent == 21
    assert sf.plan("related_apps_frame", apps=IOS[:2]).to_send == 0
    mine = make_client(cache_dir=tmp_path / "other")
    assert sf.configure(mine) is mine and sf.default_client() is mine
    mine.close()
    with pytest.raises(sf.ConfigurationError):
        sf.configure(mine, budget=3)


def test_the_default_client_without_a_token_says_how_to_get_one(fresh_default, monkeypatch):
    monkeypatch.delenv("STOREFRAMES_API_KEY", raising=False)
    monkeypatch.delenv("STOREFRAMES_BASE_URL", raising=False)
    with pytest.raises(sf.ConfigurationError, match=r"configure\(sandbox=True\)"):
        sf.metadata_frame(IOS[:1])


def test_frame_functions_document_their_schema():
    for name, spec in FRAMES.items():
        for function in (getattr(sf, name), getattr(sf.Client, name)):
            doc = function.__doc__
            assert "Output schema" in doc and ">>>" in doc, name
            assert all(column in doc for column in spec.table.names), name
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            method = list(inspect.signature(getattr(sf.Client, name)).parameters)
            assert list(getattr(sf, name).__signature__.parameters) == method[1:], name


def test_connect_takes_the_sandbox_without_a_token_and_says_so(fresh_default, monkeypatch, tmp_path, capsys):
    monkeypatch.delenv("STOREFRAMES_API_KEY", raising=False)
    client = sf.connect(tmp_path / "cache", sandbox_today="2026-11-20", budget=500)
    out = capsys.readouterr().out
    assert out.startswith("storeframes: the sandbox (no STOREFRAMES_API_KEY set)")
    assert "today is 2026-11-20" in out and "budget 500 credits" in out and str(tmp_path / "cache") in out
    assert sf.default_client() is client and client.sandbox_service is not None and client.budget == 500
    assert sf.metadata_frame("3233849169").height == 1 and client.spent > 0
    assert (tmp_path / "cache" / "answers").is_dir()
    # connecting again replaces (and closes) the client built the first time
    again = sf.connect(tmp_path / "cache", live=False, quiet=True, sandbox_today=date(2026, 11, 20))
    assert capsys.readouterr().out == "" and sf.default_client() is again and client.wire.http.is_closed
    assert sf.metadata_frame("3233849169").height == 1 and again.spent == 0  # the same cache folder


def test_connect_uses_the_token_when_set_and_live_insists_on_one(fresh_default, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("STOREFRAMES_API_KEY", "sk-live-secret-0123456789")
    monkeypatch.setenv("STOREFRAMES_BASE_URL", "https://api.example.com/api/public/store")
    client = sf.connect(tmp_path, budget=1_000)
    out = capsys.readouterr().out
    assert "the service at https://api.example.com/api/public/store" in out and "sk-live" not in out
    assert not isinstance(client, sf.sandbox.SandboxClient) and sf.default_client() is client
    monkeypatch.setenv("STOREFRAMES_OFFLINE", "1")
    assert "offline: answers come from the cache only" in (sf.connect(tmp_path) and capsys.readouterr().out)
    monkeypatch.delenv("STOREFRAMES_API_KEY")
    with pytest.raises(sf.ConfigurationError, match=r"live=True needs a token .* set STOREFRAMES_API_KEY"):
        sf.connect(tmp_path, live=True)
    with pytest.raises(sf.InvalidParameterError, match="sandbox_today"):
        sf.connect(tmp_path, sandbox_today="20-11-2026")


# -- the garbage collector ---------------------------------------------------------------------------


def test_the_collector_is_paused_while_a_frame_is_made_and_on_again_after(client, monkeypatch):
    spec = FRAMES["metadata_frame"]
    seen = []

    def flatten(answers, real=spec.flatten):
        seen.append(gc.isenabled())
        return real(answers)

    monkeypatch.setitem(FRAMES, "metadata_frame", type(spec)(**{**spec.__dict__, "flatten": flatten}))
    assert client.metadata_frame(IOS[:2]).height == 2
    assert seen == [False]
    assert gc.isenabled()


def test_the_collector_is_on_again_after_a_call_that_failed(client, monkeypatch):
    spec = FRAMES["metadata_frame"]

    def flatten(answers):
        raise RuntimeError("a flattener that fails")

    monkeypatch.setitem(FRAMES, "metadata_frame", type(spec)(**{**spec.__dict__, "flatten": flatten}))
    with pytest.raises(sf.ResponseShapeError, match="a flattener that fails"):
        client.metadata_frame(IOS[:2])
    assert gc.isenabled()


def test_the_collector_stays_off_for_a_caller_who_turned_it_off(client):
    gc.disable()
    try:
        assert client.metadata_frame(IOS[:1]).height == 1
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_calls_on_several_threads_turn_the_collector_on_once_the_last_ends():
    started, release = threading.Barrier(2), threading.Event()
    during = []

    def call():
        with collector_paused():
            started.wait(timeout=10)
            release.wait(timeout=10)
            during.append(gc.isenabled())

    other = threading.Thread(target=call, daemon=True)
    other.start()
    try:
        with collector_paused():
            started.wait(timeout=10)
        still_off = not gc.isenabled()  # the other call is still under way
    finally:
        release.set()
        other.join(timeout=10)
        gc.enable()  # whatever happened, the rest of the suite runs with the collector on
    assert still_off
    assert during == [False]
    assert gc.isenabled()


def test_a_frame_of_several_answers_comes_in_one_chunk(client):
    apps = sorted(IOS)  # 6 apps: two requests, whose rows are in the order asked (no sort makes one chunk)
    frame = client.metadata_frame(apps)
    assert len(arrivals(client)) == 2
    assert frame["app_id"].to_list() == apps
    assert frame.n_chunks("all") == [1] * frame.width
