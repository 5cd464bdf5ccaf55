"""A refusal of the caller's input is raised at the caller's line, with one frame of storeframes.

Each case calls a public function with bad input and counts the frames of storeframes in the
traceback a user is shown (``traceback.format_exception``: the error and every error chained to
it); before, a frame function's refusal came after eight to eleven of them. What the error says
and carries is unchanged. An error of the service, and a bug, keep every frame.
"""

from __future__ import annotations

import inspect
import subprocess
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import storeframes as sf
from storeframes import analysis
from storeframes._tracebacks import ENV_FULL_TRACEBACK, user_facing
from storeframes.fetch.pipeline import FRAMES
from storeframes.plots import benchmark_chart, changes_timeline, rank_chart
from storeframes.sandbox import World
from storeframes.widgets.cards import app_card
from tests._children import child_env
from tests._ipython import ipython_shell
from tests.conftest import ROOT, SANDBOX_TODAY

PACKAGE = str(Path(sf.__file__).resolve().parent) + "/"
IOS = World(0).EXAMPLE_IOS_APPS[0]
MANY_IOS = [str(1_000_000_000 + n) for n in range(30)]  # 6 requests: past a budget of 1 credit


def package_frames(error: BaseException) -> list[str]:
    """The lines naming a frame of storeframes in the traceback a user is shown of ``error``."""
    shown = "".join(traceback.format_exception(error)).splitlines()
    return [line for line in shown if line.strip().startswith(f'File "{PACKAGE}')]


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    with sf.sandbox.client(today=SANDBOX_TODAY, progress=False, cache_dir=tmp_path_factory.mktemp("h")) as made:
        return made.search_history_frame(["photo editor"], start="2026-11-01", end="2026-11-10")


Case = Callable[[Any, pl.DataFrame, Path], Any]

REFUSALS: dict[str, tuple[Case, type[Exception], str]] = {
    "sf.metadata_frame": (lambda c, h, tmp: sf.metadata_frame(IOS, country="zz"), sf.InvalidParameterError, "country"),
    "Client.changes_frame": (lambda c, h, tmp: c.changes_frame(IOS, days=0), sf.InvalidParameterError, "days"),
    "Client.get": (
        lambda c, h, tmp: c.get("benchmarks", device="android", channel="browse"),
        sf.InvalidParameterError,
        "channel",
    ),
    "sf.plan": (
        lambda c, h, tmp: sf.plan("search_history_frame", keywords=["maps"], days=0),
        sf.InvalidParameterError,
        "days",
    ),
    "sf.find_apps": (lambda c, h, tmp: sf.find_apps("maps", country="zz"), sf.InvalidParameterError, "country"),
    "sf.Client": (
        lambda c, h, tmp: sf.Client("key", base_url="https://example.com/api", rate_limit="fast", cache_dir=False),
        sf.ConfigurationError,
        "rate_limit",
    ),
    "a closed client": (lambda c, h, tmp: (c.close(), c.metadata_frame(IOS)), sf.ConfigurationError, "closed"),
    "over the budget": (
        lambda c, h, tmp: (setattr(c, "budget", 1), c.metadata_frame(MANY_IOS)),
        sf.BudgetExceededError,
        "budget is 1",
    ),
    "offline": (
        lambda c, h, tmp: sf.sandbox.client(today=SANDBOX_TODAY, cache_dir=tmp, offline=True).metadata_frame(IOS),
        sf.NotCachedError,
        "offline",
    ),
    "analysis.movers": (lambda c, h, tmp: analysis.movers(h, top=0), sf.InvalidParameterError, "top"),
    "sf.scan": (lambda c, h, tmp: sf.scan("nope", tmp), sf.InvalidParameterError, "table"),
    "rank_chart": (lambda c, h, tmp: rank_chart(h, IOS, keywords="not searched"), sf.InvalidParameterError, "keywords"),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_a_refusal_is_raised_with_one_frame_of_storeframes(case, make_client, fresh_default, history, tmp_path):
    call, kind, words = REFUSALS[case]
    client = make_client()
    sf.configure(client)
    with pytest.raises(kind) as refused:
        call(client, history, tmp_path)
    assert words in str(refused.value)
    frames = package_frames(refused.value)
    assert len(frames) == 1, "\n".join(frames)
    assert frames[0].endswith(", in call"), frames  # the public function's own frame, where it raised


def test_a_refusal_keeps_its_type_message_and_attributes(make_client):
    client = make_client()
    with pytest.raises(sf.InvalidParameterError) as refused:
        client.metadata_frame(IOS, country="zz")
    error = refused.value
    assert (error.parameter, error.value, error.endpoint) == ("country", "zz", "metadata")
    assert "ISO 3166-1 alpha-2" in error.allowed
    assert str(error) == f"invalid country='zz' for metadata: {error.allowed}"
    assert isinstance(error, ValueError)


def test_an_error_raised_from_another_keeps_the_one_it_came_from():
    cause = OSError("the disk is full")

    @user_facing
    def refuses() -> None:
        try:
            raise cause
        except OSError as exc:
            raise sf.ConfigurationError("cannot keep the state") from exc

    with pytest.raises(sf.ConfigurationError) as refused:
        refuses()
    assert refused.value.__cause__ is cause
    shown = "".join(traceback.format_exception(refused.value))
    assert "OSError: the disk is full" in shown and "direct cause" in shown


@pytest.mark.processes
def test_a_refusal_in_plain_python_shows_the_users_line_and_one_frame(tmp_path):
    script = (
        "import storeframes as sf\n"
        f"sf.configure(sandbox=True, today={SANDBOX_TODAY.isoformat()!r}, cache_dir=False, progress=False)\n"
        f"sf.metadata_frame({IOS!r}, country='zz')  # the user's line\n"
    )
    (tmp_path / "analysis.py").write_text(script)
    done = subprocess.run(
        [sys.executable, str(tmp_path / "analysis.py")], cwd=ROOT, env=child_env(), capture_output=True, text=True
    )
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert [line for line in lines if line.strip().startswith(f'File "{PACKAGE}')] == [
        f'  File "{PACKAGE}_tracebacks.py", line {_raise_line()}, in call'
    ]
    assert "# the user's line" in done.stderr
    assert lines[-1] == (
        "storeframes.errors.InvalidParameterError: invalid country='zz' for metadata: "
        "not an ISO 3166-1 alpha-2 code such as 'us', 'gb' or 'de'"
    )


def _raise_line() -> int:
    """The line of the wrapper's raise: the one frame of storeframes a refusal shows."""
    source, first = inspect.getsourcelines(user_facing)
    return first + [n for n, line in enumerate(source) if line.strip().startswith("raise refused")][-1]


def test_in_ipython_a_refusal_shows_the_cell_and_one_frame(tmp_path, monkeypatch, make_client):
    from IPython.core.interactiveshell import InteractiveShell

    with ipython_shell(tmp_path, monkeypatch) as captured:
        shell = InteractiveShell.instance()
        shell.run_line_magic("colors", "nocolor")
        shell.user_ns["client"] = make_client()
        result = shell.run_cell(f"client.metadata_frame({IOS!r}, country='zz')")
    assert isinstance(result.error_in_exec, sf.InvalidParameterError)
    shown = captured.stdout
    assert f"client.metadata_frame({IOS!r}, country='zz')" in shown
    assert shown.count(f"File {PACKAGE}") == 1, shown
    assert "InvalidParameterError: invalid country='zz' for metadata" in shown


def test_in_ipython_a_bug_keeps_its_frames_but_the_wrappers(tmp_path, monkeypatch, make_client):
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.setattr("storeframes.catalog.validation._check_code", _a_bug)
    with ipython_shell(tmp_path, monkeypatch) as captured:
        shell = InteractiveShell.instance()
        shell.run_line_magic("colors", "nocolor")
        shell.user_ns["client"] = make_client()
        shell.run_cell(f"client.metadata_frame({IOS!r}, country='zz')")
    shown = captured.stdout
    assert "[... skipping hidden 1 frame]" in shown
    assert f"File {PACKAGE}_tracebacks.py" not in shown
    assert f"File {PACKAGE}catalog/validation.py" in shown and f"File {PACKAGE}fetch/fetcher.py" in shown
    assert "RuntimeError: a bug in storeframes" in shown


def _a_bug(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("a bug in storeframes")


def test_a_bug_keeps_its_whole_traceback(make_client, monkeypatch):
    monkeypatch.setattr("storeframes.catalog.validation._check_code", _a_bug)
    with pytest.raises(RuntimeError) as bug:
        make_client().metadata_frame(IOS, country="zz")
    shown = "".join(traceback.format_exception(bug.value))
    for where in ("frames/apps.py", "fetch/pipeline.py", "fetch/fetcher.py", "catalog/validation.py"):
        assert f'File "{PACKAGE}{where}"' in shown, where
    assert traceback.extract_tb(bug.value.__traceback__)[-1].name == "_a_bug"


def test_an_error_of_the_service_keeps_its_whole_traceback(server):
    with sf.Client("not-the-key", base_url=server.base_url, max_tries=1, cache_dir=False, progress=False) as client:
        with pytest.raises(sf.AuthenticationError) as refused:
            client.metadata_frame(IOS)
    frames = package_frames(refused.value)
    assert len(frames) > 5
    assert any(f'File "{PACKAGE}wire/' in line for line in frames)


def test_the_environment_keeps_every_frame_of_a_refusal(make_client, monkeypatch):
    monkeypatch.setenv(ENV_FULL_TRACEBACK, "1")
    with pytest.raises(sf.InvalidParameterError) as refused:
        make_client().metadata_frame(IOS, country="zz")
    frames = package_frames(refused.value)
    assert len(frames) > 5
    assert any(f'File "{PACKAGE}catalog/validation.py"' in line for line in frames)


def _is_user_facing(function: Any) -> bool:
    return getattr(function, "__code__", None) is user_facing(lambda: None).__code__


def test_every_public_function_raises_its_refusals_at_the_callers_line():
    package = [name for name in sf.__all__ if inspect.isfunction(getattr(sf, name)) and name != "to_pandas"]
    client = [*FRAMES, "find_apps", "__init__", "get", "get_many", "plan", "plan_many", "estimate", "spend"]
    functions = {
        **{f"sf.{name}": getattr(sf, name) for name in package},
        **{f"Client.{name}": getattr(sf.Client, name) for name in client},
        **{f"analysis.{name}": getattr(analysis, name) for name in analysis.__all__ if name.islower()},
        "rank_chart": rank_chart,
        "benchmark_chart": benchmark_chart,
        "changes_timeline": changes_timeline,
        "app_card": app_card,
        "sf.sandbox.client": sf.sandbox.client,
    }
    assert [name for name, function in functions.items() if not _is_user_facing(function)] == []
    assert "sf.metadata_frame" in functions and "Client.versions_frame" in functions
