"""A workspace's month budget holds for every caller of the workspace (notebooks, a tracker, the command line),
says whose it is and what is left, and stops no other workspace; the spend report reads each one's month."""

from __future__ import annotations

import polars as pl
import pytest

import storeframes as sf
from storeframes.cli import main
from tests.conftest import SANDBOX_TODAY, sandbox_clock
from tests.workspaces.conftest import APPS, BUDGET, MONTH, write_spec, write_workspaces


def test_a_month_budget_stops_every_caller_of_its_workspace_and_no_other(agency, tmp_path, capsys):
    with sf.Client(workspace="acme", clock=sandbox_clock, max_tries=1) as notebook:
        notebook.metadata_frame(APPS[:3])
        spent = notebook.spent
        assert 0 < spent < BUDGET
        sent = len(agency.service.arrivals)
        with pytest.raises(sf.BudgetExceededError) as refused:
            notebook.metadata_frame(APPS[3:9])
        error = refused.value
        assert error.whose == f"the month budget of workspace acme ({MONTH})"
        assert error.left == BUDGET - spent and error.budget == BUDGET and error.spent == spent
        assert f"{BUDGET - spent:,} are left of the month budget of workspace acme" in str(error)
        assert len(agency.service.arrivals) == sent  # refused before anything was sent
        assert notebook.metadata_frame(APPS[:3]).height == 3  # what the cache answers costs nothing: never refused
    with sf.Client(workspace="acme", clock=sandbox_clock) as colleague:  # another notebook of the workspace
        with pytest.raises(sf.BudgetExceededError, match="workspace acme"):
            colleague.metadata_frame(APPS[3:9])
    run = sf.Tracker.from_toml(write_spec(tmp_path, ["photo editor", "collage maker", "meditation"])).run(
        today=SANDBOX_TODAY
    )
    assert run.status == "over_budget" and run.requests == 0
    assert len(agency.service.arrivals) == sent
    with sf.Client(workspace="beta", clock=sandbox_clock) as beta:  # the other workspace goes on
        assert beta.metadata_frame(APPS[3:9]).height == 6
        beta_spent = beta.spent
    assert beta_spent > BUDGET - spent

    report = sf.spend_report(MONTH)
    assert report.schema == sf.workspaces.SPEND_REPORT_SCHEMA
    assert report.select("workspace", "spent", "budget", "left", "token_spent", "status").rows() == [
        ("acme", spent, BUDGET, BUDGET - spent, spent + beta_spent, "ok"),
        ("beta", beta_spent, None, None, spent + beta_spent, "ok"),
    ]
    assert report["token"].to_list() == ["$ACME_KEY = $BETA_KEY"] * 2
    for name, own in (("acme", spent), ("beta", beta_spent)):  # each cache's ledger holds its own spending only
        ledger = sf.Cache(tmp_path / f"{name}-cache").ledger.read()
        assert ledger["cost"].sum() == own

    assert main(["spend", "--workspaces", "--month", MONTH]) == 0
    out = capsys.readouterr().out
    assert f"token $ACME_KEY = $BETA_KEY (acme, beta): {spent + beta_spent:,} credits in {MONTH}" in out


def test_the_spend_report_says_a_missing_cache_and_exits_3_and_a_spent_budget_exits_4(agency, tmp_path, capsys):
    report = sf.spend_report(MONTH)
    assert report["spent"].to_list() == [None, None] and report["status"].to_list() == ["no_cache"] * 2
    assert report["token_spent"].null_count() == 2 and "the folder does not exist" in report["note"][0]
    assert main(["spend", "--month", MONTH]) == 3
    assert "not known" in capsys.readouterr().out
    write_workspaces(tmp_path, agency.base_url, acme_budget=11)  # one app's metadata
    with sf.Client(workspace="acme", clock=sandbox_clock) as notebook:
        notebook.metadata_frame(APPS[:1])
    assert main(["--workspace", "acme", "spend", "--month", MONTH]) == 4
    out = capsys.readouterr().out
    assert "over_budget" in out and "beta" not in out.split("token")[0]
    assert sf.spend_report(MONTH, workspaces=["acme"])["status"].to_list() == ["over_budget"]


def test_the_command_line_runs_under_a_workspace_and_refuses_one_it_cannot_use(agency, tmp_path, capsys):
    spec = write_spec(tmp_path, ["photo editor"])
    spec.write_text(spec.read_text().replace('workspace = "acme"\n', ""), encoding="utf-8")
    assert main(["--workspace", "beta", "track", "run", str(spec), "--today", SANDBOX_TODAY.isoformat()]) == 0
    assert (tmp_path / "beta-cache").is_dir() and not (tmp_path / "acme-cache").exists()
    assert main(["--workspace", "beta", "cache", "info"]) == 0
    assert "beta-cache" in capsys.readouterr().out
    assert main(["--workspace", "gamma", "cache", "info"]) == 2
    assert "no workspace 'gamma'" in capsys.readouterr().err
    assert main(["--workspace", "beta", "cache", "info", "--cache-dir", str(tmp_path / "x")]) == 2
    assert "leave out --cache-dir" in capsys.readouterr().err
    named = write_spec(tmp_path, ["photo editor"])  # a spec of acme, run as beta's: refused, nothing sent
    sent = len(agency.service.arrivals)
    assert main(["--workspace", "beta", "track", "run", str(named)]) == 2
    assert "the workspace the command names (beta)" in capsys.readouterr().err
    assert len(agency.service.arrivals) == sent
    ledger = pl.concat([sf.Cache(tmp_path / "beta-cache").ledger.read()])
    assert ledger.height > 0 and ledger["cost"].sum() == sum(a.cost for a in agency.service.arrivals)


def test_an_assistant_of_a_workspace_is_held_to_its_month_budget_and_says_whose(agency, tmp_path):
    from storeframes.agent import open_surface

    with sf.Client(workspace="acme", clock=sandbox_clock) as notebook:
        notebook.metadata_frame(APPS[:3])
        spent = notebook.spent
    surface = open_surface(workspace="acme", budget=1000, confirm_above=1000, clock=sandbox_clock)
    try:
        sent = len(agency.service.arrivals)
        refused = surface.fetch_frame("metadata_frame", {"apps": APPS[3:9]})
        assert refused.error and refused.data["refused"]
        assert f"{BUDGET - spent:,} are left of the month budget of workspace acme" in refused.data["reason"]
        assert len(agency.service.arrivals) == sent
        fetched = surface.fetch_frame("metadata_frame", {"apps": APPS[3:4]})  # 11 credits fit: sent
        assert not fetched.error and len(agency.service.arrivals) == sent + 1
    finally:
        surface.client.close()
    assert sf.spend_report(MONTH, workspaces=["acme"])["spent"].to_list() == [spent + 11]


def test_use_says_the_months_spend_and_never_a_0_from_a_cache_that_is_not_there(agency, tmp_path, capsys, monkeypatch):
    from storeframes import defaults

    monkeypatch.setattr(defaults, "_client", None)
    try:
        sf.use("acme", clock=sandbox_clock)
        said = capsys.readouterr().out
        assert f"month {MONTH}: no cache there yet (its first answer makes it), budget {BUDGET:,} credits" in said
        spent = sf.metadata_frame(APPS[:3]).height and sf.default_client().spent
        sf.use("acme", clock=sandbox_clock)
        said = capsys.readouterr().out
        assert said.startswith("storeframes: workspace acme (") and "acme-cache" in said
        assert f"month {MONTH}: {spent:,} of {BUDGET:,} credits spent" in said
    finally:
        sf.default_client().close()
        monkeypatch.setattr(defaults, "_client", None)
