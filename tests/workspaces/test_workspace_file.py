"""The workspaces file: where it is found, what it holds, and what it refuses (with its file and line) before
anything is sent: a token written in it above all."""

from __future__ import annotations

import pytest

import storeframes as sf
from storeframes.errors import ConfigurationError
from storeframes.workspaces import Workspace, WorkspaceFileError, config_path, load_workspaces, workspace

TOKEN = "sk-live-workspacefile0123456789"  # the suite's leak check finds it if it is ever written by the library

GOOD = """\
# an agency's clients
[workspace.acme]
api_key_env = "ACME_STOREFRAMES_KEY"
base_url = "https://api.example.test/api/public/store"
cache_dir = "acme-cache"
budget_per_month = 50000
lake = "s3://agency-lake/acme"
notify = ["json://hooks.example.test/acme"]

[workspace.beta]
api_key_env = "BETA_STOREFRAMES_KEY"
base_url_env = "BETA_BASE_URL"
cache_dir = "s3://agency-cache/beta"
"""


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """An empty working directory, no $STOREFRAMES_CONFIG, and a user config folder of its own."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("STOREFRAMES_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    yield work
    for written in tmp_path.rglob("*.toml"):  # the refused files hold the token on purpose: none stays on disk
        written.unlink()


def _write(folder, text, name="storeframes.toml"):
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_file_reads_as_its_workspaces_in_order_with_folders_placed_beside_it(folder):
    _write(folder, GOOD)
    found = load_workspaces()
    assert list(found) == ["acme", "beta"]
    acme, beta = found["acme"], found["beta"]
    assert acme == Workspace(
        "acme",
        api_key_env="ACME_STOREFRAMES_KEY",
        base_url="https://api.example.test/api/public/store",
        cache_dir=str((folder / "acme-cache").resolve()),
        budget_per_month=50000,
        lake="s3://agency-lake/acme",
        notify=("json://hooks.example.test/acme",),
        path=acme.path,
    )
    assert beta.cache_dir == "s3://agency-cache/beta" and beta.budget_per_month is None
    assert beta.base_url is None and beta.base_url_env == "BETA_BASE_URL"
    assert "json://" not in repr(acme)  # the addresses may hold credentials


def test_the_file_is_found_here_then_where_the_variable_says_then_in_the_user_config_folder(
    folder, tmp_path, monkeypatch
):
    user = tmp_path / "config" / "storeframes"
    user.mkdir(parents=True)
    _write(user, GOOD.replace("acme", "user-acme"))
    assert list(load_workspaces()) == ["user-acme", "beta"]
    named = _write(tmp_path, GOOD.replace("acme", "named-acme"), "agency.toml")
    monkeypatch.setenv("STOREFRAMES_CONFIG", str(named))
    assert config_path() == named and "named-acme" in load_workspaces()
    _write(folder, GOOD)
    assert config_path().resolve() == (folder / "storeframes.toml").resolve()
    assert "acme" in load_workspaces()


def test_no_file_names_every_place_looked_in(folder, monkeypatch):
    monkeypatch.setenv("STOREFRAMES_CONFIG", str(folder / "missing.toml"))
    with pytest.raises(ConfigurationError) as refused:
        load_workspaces()
    said = str(refused.value)
    assert "storeframes.toml" in said and "missing.toml ($STOREFRAMES_CONFIG)" in said and "[workspace.NAME]" in said


def test_an_unknown_workspace_names_the_file_and_those_it_has(folder):
    _write(folder, GOOD)
    with pytest.raises(ConfigurationError, match=r"no workspace 'gamma' in .*storeframes.toml; it has: acme, beta"):
        workspace("gamma")


@pytest.mark.parametrize(
    ("text", "line", "said"),
    [
        (GOOD.replace('api_key_env = "ACME_STOREFRAMES_KEY"', f'api_key = "{TOKEN}"'), 3, "a token is never written"),
        (GOOD.replace('"ACME_STOREFRAMES_KEY"', f'"{TOKEN}"'), 3, "the value written is not shown"),
        (GOOD.replace("budget_per_month = 50000", "budget_per_month = -5"), 6, "a whole number of credits"),
        (GOOD.replace("budget_per_month = 50000", 'budget_per_month = "lots"'), 6, "a whole number of credits"),
        (GOOD.replace('lake = "s3://agency-lake/acme"', "lakes = 1"), 7, "not a workspace key; the keys are"),
        (GOOD.replace('base_url = "https://api.example.test/api/public/store"', 'base_url = "ftp:x"'), 4, "address"),
        (GOOD.replace('cache_dir = "s3://agency-cache/beta"', 'cache_dir = "acme-cache"'), 13, "each workspace keeps"),
        (GOOD.replace('cache_dir = "acme-cache"\n', ""), 2, "has no cache_dir"),
        (GOOD.replace("[workspace.beta]", "[workspace.beta]\nbase_url = 'https://x.test/a'"), 11, "not both"),
        (GOOD.replace("budget_per_month = 50000", "budget_per_month = = 1"), 6, "not TOML"),
        (GOOD.replace('notify = ["json://hooks.example.test/acme"]', "notify = [1]"), 8, "apprise addresses"),
        ("[workspaces.acme]\ncache_dir = 'x'\n", None, "[workspace.NAME] tables only"),
        ("[workspace.'a b']\ncache_dir = 'x'\n", 1, "a name of letters, digits"),
    ],
)
def test_a_bad_file_is_refused_with_its_file_line_and_what_is_allowed(folder, text, line, said):
    path = _write(folder, text)
    with pytest.raises(WorkspaceFileError) as refused:
        load_workspaces()
    error = refused.value
    assert error.line == line and error.path.resolve() == path.resolve()
    assert said in str(error)
    where = f"storeframes.toml, line {line}:" if line is not None else "storeframes.toml:"
    assert where in str(error)
    assert TOKEN not in str(error) and TOKEN not in repr(error.args)


def test_a_file_holding_the_token_its_variable_names_is_refused_without_showing_it(folder, monkeypatch):
    monkeypatch.setenv("ACME_STOREFRAMES_KEY", TOKEN)
    _write(folder, GOOD.replace('lake = "s3://agency-lake/acme"', f'lake = "s3://{TOKEN}/acme"'))
    with pytest.raises(WorkspaceFileError) as refused:
        load_workspaces()
    assert refused.value.line == 7
    assert "holds the token of $ACME_STOREFRAMES_KEY" in str(refused.value) and TOKEN not in str(refused.value)


def test_a_client_of_a_workspace_takes_its_token_address_and_cache_and_refuses_others(folder, monkeypatch):
    _write(folder, GOOD)
    with pytest.raises(ConfigurationError, match=r"takes its token from \$ACME_STOREFRAMES_KEY, which is not set"):
        sf.Client(workspace="acme")
    monkeypatch.setenv("ACME_STOREFRAMES_KEY", TOKEN)
    with sf.Client(workspace="acme") as client:
        assert client.workspace is not None and client.workspace.name == "acme"
        assert client.base_url == "https://api.example.test/api/public/store"
        assert client.cache is not None and client.cache.location == str((folder / "acme-cache").resolve())
        assert client.fetcher.month is not None and client.fetcher.month.budget == 50000
        assert repr(client).startswith("Client(workspace='acme', ") and TOKEN not in repr(client)
    for given in ({"api_key": TOKEN}, {"base_url": "https://other.test/api"}, {"cache_dir": "elsewhere"}):
        with pytest.raises(ConfigurationError, match="leave out") as refused:
            sf.Client(workspace="acme", **given)
        assert TOKEN not in str(refused.value)
    monkeypatch.setenv("BETA_STOREFRAMES_KEY", TOKEN)
    with pytest.raises(ConfigurationError, match=r"\$BETA_BASE_URL, which is not set"):
        sf.Client(workspace="beta")


def test_the_default_client_is_the_workspace_the_variable_names(folder, monkeypatch):
    _write(folder, GOOD)
    monkeypatch.setenv("ACME_STOREFRAMES_KEY", TOKEN)
    monkeypatch.setenv("STOREFRAMES_WORKSPACE", "acme")
    from storeframes import defaults

    monkeypatch.setattr(defaults, "_client", None)
    try:
        assert sf.default_client().workspace.name == "acme"
    finally:
        sf.default_client().close()
        monkeypatch.setattr(defaults, "_client", None)
