"""What a user's type checker and help() see: real signatures for every frame function."""

from __future__ import annotations

import inspect
import textwrap
from pathlib import Path

import polars as pl
import pytest

import storeframes as sf
from storeframes.fetch import pipeline

mypy_api = pytest.importorskip("mypy.api")

FRAME_FUNCTIONS = sorted(pipeline.FRAMES)


def _mypy(tmp_path: Path, code: str) -> str:
    """mypy's report on ``code`` as a user's file, with mypy's defaults (not this project's settings)."""
    (tmp_path / "mypy.ini").write_text("[mypy]\n")
    path = tmp_path / "analysis.py"
    path.write_text(textwrap.dedent(code))
    out, err, _ = mypy_api.run(["--no-incremental", "--config-file", str(tmp_path / "mypy.ini"), str(path)])
    return out + err


@pytest.mark.slow
def test_a_users_type_checker_sees_frames_and_catches_a_misspelt_argument(tmp_path):
    report = _mypy(
        tmp_path,
        """
        import storeframes as sf
        from storeframes import sandbox

        client = sandbox.client()
        reveal_type(sf.metadata_frame(["284882215"]))
        reveal_type(client.versions_frame(["284882215"]))
        reveal_type(sf.search_history_frame("photo editor", start="2026-10-01"))
        reveal_type(sf.plan("metadata", apps="284882215"))
        sf.metadata_frame(["284882215"], contry="us")
        client.changes_frame(["284882215"], start=2026)
        """,
    )
    revealed = [line.split("Revealed type is ")[1] for line in report.splitlines() if "Revealed type" in line]
    assert revealed == [
        '"polars.dataframe.frame.DataFrame"',
        '"polars.dataframe.frame.DataFrame"',
        '"polars.dataframe.frame.DataFrame"',
        '"storeframes.engine.Plan"',
    ]
    assert 'Unexpected keyword argument "contry"; did you mean "country"?' in report
    assert 'Argument "start" to "changes_frame" of "FrameFunctions" has incompatible type "int"' in report
    assert "Found 2 errors in 1 file" in report


@pytest.mark.parametrize("name", FRAME_FUNCTIONS)
def test_package_functions_and_methods_have_the_same_named_parameters(name):
    function, method = getattr(sf, name), getattr(sf.Client, name)
    params = inspect.signature(function).parameters
    assert list(params) == list(inspect.signature(method).parameters)[1:]
    assert not any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params.values())
    assert "refresh" in params and params["refresh"].default is None
    assert inspect.signature(function).return_annotation in (pl.DataFrame, "pl.DataFrame")
    assert function.__doc__ == method.__doc__ and "Output schema" in function.__doc__
    assert function.__module__ == "storeframes" and function.__name__ == name


def test_the_package_ships_its_type_information():
    assert (Path(sf.__file__).parent / "py.typed").is_file()
