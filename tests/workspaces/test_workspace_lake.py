"""A workspace's lake: sf.publish and storeframes publish take it (and the workspace's cache) when none is given."""

from __future__ import annotations

import polars as pl
import pytest
from deltalake import DeltaTable

import storeframes as sf
from storeframes.cli import main
from storeframes.errors import InvalidParameterError
from tests.conftest import sandbox_clock
from tests.workspaces.conftest import APPS, write_workspaces


def test_a_workspace_publishes_its_cache_to_its_lake(agency, tmp_path, capsys):
    path = write_workspaces(tmp_path, agency.base_url, acme_budget=None)
    path.write_text(
        path.read_text().replace('cache_dir = "acme-cache"\n', 'cache_dir = "acme-cache"\nlake = "acme-lake"\n')
    )
    with sf.Client(workspace="acme", clock=sandbox_clock) as client:
        fetched = client.metadata_frame(APPS[:3])
    done = sf.publish("metadata", workspace="acme")
    assert done.written and done.inserted == 3
    table = pl.from_arrow(DeltaTable(str(tmp_path / "acme-lake" / "metadata")).to_pyarrow_table())
    assert sorted(table["app_id"].to_list()) == sorted(fetched["app_id"].to_list())
    assert main(["--workspace", "acme", "publish", "metadata"]) == 0  # nothing new: no new version
    assert "metadata" in capsys.readouterr().out
    with pytest.raises(InvalidParameterError, match="workspace beta names no lake"):
        sf.publish("metadata", workspace="beta")
    with pytest.raises(InvalidParameterError, match="publishes its own cache"):
        sf.publish("metadata", workspace="acme", cache_dir=tmp_path / "elsewhere")
    assert main(["--workspace", "beta", "publish", "metadata"]) == 2
    assert "workspace beta names no lake" in capsys.readouterr().err
