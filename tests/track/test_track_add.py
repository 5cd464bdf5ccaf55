"""``storeframes track add --from opportunities`` and ``Tracker.add``: the best keywords of the search history a
tracker's cache keeps, added to its spec as ``[[track]]`` items, priced first and written only when asked."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from datetime import timedelta
from pathlib import Path

import polars as pl
import pytest

import storeframes as sf
from storeframes.cli import main
from storeframes.sandbox import World
from storeframes.track import Tracker
from storeframes.track.adding import ADDABLE, AdditionOverBudgetError, HistoryNotKeptError, toml_string
from tests._children import child_env
from tests.conftest import SANDBOX_TODAY, sandbox_client_on

WORLD = World(0)
KEYWORDS = list(WORLD.EXAMPLE_KEYWORDS)
DAY = SANDBOX_TODAY
FIRST, LAST = DAY - timedelta(days=30), DAY - timedelta(days=1)
SERVICE = "sandbox-0"
APP = WORLD.EXAMPLE_IOS_APPS[0]

SPEC = """# the team's tracker: its comments and order are kept
[tracker]
name = "watch"
cache_dir = {cache}   # the shared cache
budget_per_month = {budget}

[[track]]
endpoint = "search"             # followed live already
keywords = [{tracked}]

[notify]
digest = "digest.html"
"""


def _history(cache: Path) -> pl.DataFrame:
    """The search history the cache keeps of the us iphone place, in the month the command reads."""
    kept = sf.scan("search_history", cache, service=SERVICE).filter(
        pl.col("source") == "history", pl.col("date").is_between(FIRST, LAST), pl.col("country") == "us"
    )
    return kept.collect()


@pytest.fixture(scope="module")
def kept(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """A cache keeping a sandbox month of search history of every example keyword in the us, the app's
    competitors (the leaders of two other keywords on their last day with results) and its opportunities, as
    keyword_opportunities scores them on that history."""
    cache = tmp_path_factory.mktemp("kept") / "cache"
    with sandbox_client_on(DAY, cache) as client:
        client.search_history_frame(KEYWORDS, start=FIRST, end=LAST)
    history = _history(cache)
    others = history.filter(pl.col("app_id") != APP, pl.col("keyword") != KEYWORDS[0])
    leaders = others.sort("date", "rank", descending=[True, False]).group_by("keyword", maintain_order=True).first()
    competitors = leaders.sort("keyword")["app_id"].unique(maintain_order=True).head(2).to_list()
    found = sf.keyword_opportunities(history, APP, competitors, top=10)
    return {"cache": cache, "competitors": competitors, "found": found, "tracked": found["keyword"][0]}


def _spec(folder: Path, kept: dict[str, object], *, budget: int = 300_000, cache: Path | None = None) -> Path:
    path = folder / "tracking.toml"
    where = toml_string(str(cache or kept["cache"]))
    path.write_text(SPEC.format(cache=where, budget=budget, tracked=toml_string(str(kept["tracked"]))))
    return path


def _args(spec: Path, kept: dict[str, object], *more: str) -> list[str]:
    competitors = ",".join(kept["competitors"])  # type: ignore[arg-type]
    head = ["track", "add", str(spec), "--sandbox", "--today", str(DAY), "--from", "opportunities"]
    return [*head, "--app", APP, "--competitors", competitors, *more]


def _best(kept: dict[str, object], n: int) -> list[str]:
    """The ``n`` best-scored keywords of keyword_opportunities on the kept history, the tracked one left out."""
    found: pl.DataFrame = kept["found"]  # type: ignore[assignment]
    return [k for k in found["keyword"] if k != kept["tracked"]][:n]


def _plan_block(out: str) -> str:
    """The plan an addition prints: the lines after its heading, up to the line saying what was written."""
    lines = out.splitlines()
    start = lines.index("the plan after the change (storeframes track plan):") + 1
    end = next(n for n in range(start, len(lines)) if lines[n].startswith(("nothing written", "written:")))
    return "\n".join(lines[start:end])


def test_without_yes_nothing_is_written_and_the_plan_printed_is_track_plans_after_yes(kept, tmp_path, capsys):
    spec = _spec(tmp_path, kept)
    before = spec.read_bytes()
    assert main(_args(spec, kept, "--top", "3")) == 0
    shown = capsys.readouterr().out
    assert spec.read_bytes() == before
    assert f"nothing written: run again with --yes to append 1 [[track]] item to {spec}" in shown
    assert main(_args(spec, kept, "--top", "3", "--yes")) == 0
    written = capsys.readouterr().out
    assert f"written: 1 [[track]] item appended to {spec}" in written
    assert main(["track", "plan", str(spec), "--sandbox", "--today", str(DAY)]) == 0
    plan = capsys.readouterr().out.rstrip("\n")
    assert _plan_block(shown) == plan == _plan_block(written)
    assert "opportunities-us: 3 requests" in plan and "month: " in plan
    # the file before the change is kept byte for byte: its comments, its order, its [notify] table
    after = spec.read_bytes()
    assert after.startswith(before) and len(after) > len(before)
    assert b"# the team's tracker: its comments and order are kept" in after
    assert tomllib.loads(after.decode())["notify"] == {"digest": "digest.html"}


def test_the_keywords_added_are_the_best_by_score_of_keyword_opportunities_on_the_kept_history(kept, tmp_path, capsys):
    spec = _spec(tmp_path, kept)
    assert main(_args(spec, kept, "--top", "3", "--yes")) == 0
    out = capsys.readouterr().out
    items = tomllib.loads(spec.read_text())["track"]
    assert len(items) == 2
    assert items[-1] == {"name": "opportunities-us", "endpoint": "search", "keywords": _best(kept, 3), "country": "us"}
    found: pl.DataFrame = kept["found"]
    for keyword in _best(kept, 3):  # each with its score and why, as keyword_opportunities gives them
        row = found.filter(pl.col("keyword") == keyword).row(0, named=True)
        assert f"{row['score']:6.2f}  {keyword} (us, iphone): {row['why']}" in out
    assert f"tracked already, not added again: {kept['tracked']} (us)" in out  # the best one, tracked live already
    assert Tracker.from_toml(spec).spec.item("opportunities-us").calls[0]["keywords"] == _best(kept, 3)


def test_a_keyword_is_never_added_twice_and_nothing_left_to_add_is_said(kept, tmp_path, capsys):
    spec = _spec(tmp_path, kept)
    assert main(_args(spec, kept, "--top", "2", "--yes")) == 0
    assert main(_args(spec, kept, "--top", "100", "--yes")) == 0
    out = capsys.readouterr().out
    items = tomllib.loads(spec.read_text())["track"]
    assert [i.get("name") for i in items] == [None, "opportunities-us", "opportunities-us-2"]
    followed = [k for item in items for k in item["keywords"]]
    assert len(followed) == len(set(followed))
    assert set(followed) == set(kept["found"]["keyword"])  # type: ignore[index]
    assert items[2]["keywords"] == _best(kept, 100)[2:]
    before = spec.read_bytes()
    assert main(_args(spec, kept, "--yes")) == 0
    out = capsys.readouterr().out
    assert out.startswith("watch: nothing to add to tracking.toml: every keyword is tracked already as search")
    assert spec.read_bytes() == before


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--app", "999999999"], "invalid app='999999999' for track: apps among the results of the search history"),
        (["--competitors", "111111111"], "invalid competitors=['111111111'] for track: apps among the results"),
        (["--competitors", APP], "apps other than the app itself"),
        (["--app", ""], "invalid --app='' for track add: the id of the app whose opportunities to add"),
        (["--endpoint", "metadata"], "argument --endpoint: invalid choice: 'metadata'"),
        (["--top", "0"], "argument --top: expected a whole number of keywords >= 1 such as 20, got '0'"),
        (["--places", "0"], "argument --places: expected a whole number of places >= 1 such as 10, got '0'"),
        (["--min-score", "101"], "argument --min-score: expected a score from 0 to 100 such as 60, got '101'"),
    ],
)
def test_bad_input_is_refused_with_what_is_allowed_before_anything_is_written(kept, tmp_path, capsys, options, message):
    spec = _spec(tmp_path, kept)
    before = spec.read_bytes()
    args = _args(spec, kept)
    for option, value in zip(options[::2], options[1::2], strict=True):
        at = args.index(option) if option in args else None
        args = [*args[:at], option, value, *args[at + 2 :]] if at is not None else [*args, option, value]
    try:
        status = main(args)
    except SystemExit as exc:  # argparse's refusal
        status = exc.code  # type: ignore[assignment]
    assert status == 2
    assert message in capsys.readouterr().err
    assert spec.read_bytes() == before


def test_without_app_or_competitors_the_command_says_which_is_needed(kept, tmp_path, capsys):
    spec = _spec(tmp_path, kept)
    head = ["track", "add", str(spec), "--sandbox", "--today", str(DAY), "--from", "opportunities"]
    assert main([*head, "--competitors", "1,2"]) == 2
    assert "invalid --app=None for track add: the id of the app whose opportunities to add" in capsys.readouterr().err
    assert main([*head, "--app", APP]) == 2
    assert "--competitors=None for track add: comma-separated app ids" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:
        main([*head[:-2], "--app", APP])  # no --from
    assert refused.value.code == 2
    assert "the following arguments are required: --from" in capsys.readouterr().err


def test_no_kept_history_is_said_plainly_and_exits_5_with_nothing_written(kept, tmp_path, capsys):
    spec = _spec(tmp_path, kept, cache=tmp_path / "no-cache")
    before = spec.read_bytes()
    assert main(_args(spec, kept, "--yes")) == 5
    err = capsys.readouterr().err
    assert "no search history is kept: storeframes track add: no cache at" in err
    assert "the folder does not exist" in err
    assert not (tmp_path / "no-cache").exists() and spec.read_bytes() == before
    spec = _spec(tmp_path, kept)  # the cache, but no history of the country asked for
    before = spec.read_bytes()
    assert main(_args(spec, kept, "--country", "gb", "--yes")) == 5
    err = capsys.readouterr().err
    assert f"no search history of gb (iphone) from {FIRST} to {LAST} is kept in the cache at" in err
    assert f"it keeps us (iphone) of {FIRST}..{LAST}" in err
    assert spec.read_bytes() == before


def test_a_spec_over_its_month_budget_after_the_change_is_not_written_and_exits_4(kept, tmp_path, capsys):
    roomy = Tracker.from_toml(_spec(tmp_path, kept), sandbox=True)
    priced = roomy.add(roomy.opportunities(APP, kept["competitors"], today=DAY), top=1, today=DAY)
    assert not priced.over_budget
    # what the month spent so far (the history's price) and the next run fit, the rest of the month does not
    budget = priced.plan.month_spent + priced.plan.credits + priced.spec_a_day
    spec = _spec(tmp_path, kept, budget=budget)
    before = spec.read_bytes()
    assert main(_args(spec, kept, "--top", "1", "--yes")) == 4
    captured = capsys.readouterr()
    assert spec.read_bytes() == before
    reach = priced.plan.month_spent + priced.plan.credits + 10 * priced.spec_a_day
    assert f"does not fit its budgets (this month would reach {reach:,} of {budget:,} credits)" in captured.err
    assert f"storeframes track add: nothing written to {spec}" in captured.err
    assert f"{reach:,} of the month budget {budget:,} (over by {reach - budget:,})" in captured.out
    assert "(left out: over the budget)" not in captured.out  # the next run itself fits
    tracker = Tracker.from_toml(spec, sandbox=True)
    addition = tracker.add(tracker.opportunities(APP, kept["competitors"], today=DAY), top=1, today=DAY)
    assert addition.over_budget and addition.month_projected == reach
    with pytest.raises(AdditionOverBudgetError, match="nothing written to"):
        addition.write()
    with pytest.raises(AdditionOverBudgetError):
        tracker.add(tracker.opportunities(APP, kept["competitors"], today=DAY), top=1, today=DAY, write=True)
    assert spec.read_bytes() == before and len(tracker.spec.items) == 1


def test_tracker_add_returns_the_plan_after_the_change_and_writes_only_when_asked(kept, tmp_path):
    spec = _spec(tmp_path, kept)
    before = spec.read_bytes()
    tracker = Tracker.from_toml(spec, sandbox=True)
    found = tracker.opportunities(APP, kept["competitors"], today=DAY)
    assert found.equals(kept["found"])  # keyword_opportunities on the kept history, nothing else
    addition = tracker.add(found, top=2, today=DAY)
    assert not addition.written and spec.read_bytes() == before
    assert addition.chosen["keyword"].to_list() == _best(kept, 2)
    assert addition.tracked["keyword"].to_list() == [kept["tracked"]]
    assert addition.items == ("opportunities-us",)
    # nothing of the place is cached: a day of each item is what today's plan asks of it
    credits = dict(zip(addition.plan.items["item"], addition.plan.items["credits"], strict=True))
    assert addition.added_a_day == credits["opportunities-us"] > 0
    assert addition.spec_a_day == addition.plan.credits == credits["opportunities-us"] + credits["search"]
    assert addition.days_left == 11  # the 20th to the 30th of November
    spent = addition.plan.month_spent
    assert addition.month_projected == spent + addition.plan.credits + 10 * addition.spec_a_day
    assert tracker.spec.path == spec and len(tracker.spec.items) == 1  # the tracker's spec is unchanged
    written = tracker.add(found, top=2, today=DAY, write=True)
    assert written.written and [i.name for i in tracker.spec.items] == ["search", "opportunities-us"]
    assert Tracker.from_toml(spec, sandbox=True).plan(DAY).summary() == addition.plan.summary()


def test_keywords_given_as_text_are_written_as_text_and_read_back_the_same(kept, tmp_path):
    spec = _spec(tmp_path, kept)
    tracker = Tracker.from_toml(spec, sandbox=True)
    odd = ['say "cheese"', "back\\slash", "photo editor # not a comment", "café 写真"]
    addition = tracker.add(odd, country="gb", today=DAY, write=True, endpoint="search_history")
    assert addition.items == ("opportunities-gb",)
    item = tomllib.loads(spec.read_text())["track"][-1]
    assert item == {"name": "opportunities-gb", "endpoint": "search_history", "keywords": odd, "country": "gb"}
    assert "# 4 keywords added as search_history (storeframes track add, 2026-11-20)" in spec.read_text()


def test_a_spec_with_windows_line_endings_keeps_them(kept, tmp_path):
    spec = _spec(tmp_path, kept)
    spec.write_bytes(spec.read_bytes().replace(b"\n", b"\r\n"))
    before = spec.read_bytes()
    Tracker.from_toml(spec, sandbox=True).add(["collage maker"], today=DAY, write=True)
    after = spec.read_bytes()
    assert after.startswith(before) and b"\n" not in after.replace(b"\r\n", b"")
    assert tomllib.loads(after.decode())["track"][-1]["keywords"] == ["collage maker"]


def test_the_with_ads_days_the_cache_keeps_count_the_advertisers(tmp_path):
    cache = tmp_path / "cache"
    with sandbox_client_on(DAY, cache) as client:
        client.search_history_frame(KEYWORDS[:2], start=LAST - timedelta(days=6), end=LAST)
    with sandbox_client_on(LAST - timedelta(days=2), cache) as client:
        client.search_frame(KEYWORDS[:1], ads=True)
    history = _history(cache)
    competitors = [a for a in history.filter(pl.col("date") == LAST).sort("rank")["app_id"] if a != APP][:2]
    path = tmp_path / "tracking.toml"
    path.write_text(
        f'[tracker]\nname = "w"\ncache_dir = "cache"\n\n[[track]]\nendpoint = "metadata"\napps = ["{APP}"]\n'
    )
    found = Tracker.from_toml(path, sandbox=True).opportunities(APP, competitors, today=DAY, days=7)
    ads = sf.snapshots("search_ads", cache, service=SERVICE)
    expected = sf.keyword_opportunities(
        history.filter(pl.col("date") >= LAST - timedelta(days=6)), APP, competitors, ads=ads
    )
    assert found.equals(expected)
    known = found.filter(pl.col("advertisers").is_not_null())["keyword"].to_list()
    assert known == [KEYWORDS[0]]


def test_the_help_tells_top_from_places_and_the_reference_lists_the_command(capsys):
    with pytest.raises(SystemExit):
        main(["track", "add", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert "how many keywords to add: the N best-scored not tracked yet (default 20); not --places" in said
    assert "(keyword_opportunities' top=; default 10)" in said
    assert "search_history, search_ads" in said and set(ADDABLE) == {"search", "search_history", "search_ads"}
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs"))
    from _gen import cli  # the generator of the command line's reference page

    assert "storeframes track add" in [" ".join(words) for words, _ in cli.commands()]


def test_an_empty_history_is_an_error_of_its_own(kept, tmp_path):
    spec = _spec(tmp_path, kept, cache=tmp_path / "empty")
    (tmp_path / "empty").mkdir()  # an empty folder is an empty cache: no history in it
    with pytest.raises(
        HistoryNotKeptError, match=r"no search history is kept in the cache at .*empty \(service sandbox-0\)"
    ):
        Tracker.from_toml(spec, sandbox=True).opportunities(APP, kept["competitors"], today=DAY)


@pytest.mark.processes
def test_the_command_as_a_process_writes_nothing_without_yes_and_prints_the_plan(kept, tmp_path):
    spec = _spec(tmp_path, kept)
    before = spec.read_bytes()
    done = subprocess.run(
        [sys.executable, "-m", "storeframes", *_args(spec, kept, "--top", "3")],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert spec.read_bytes() == before
    Tracker.from_toml(spec, sandbox=True).add(kept["found"], top=3, today=DAY, write=True)
    plan = Tracker.from_toml(spec, sandbox=True).plan(DAY).summary()
    assert _plan_block(done.stdout) == plan


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda t, f: t.add(f, top=0, today=DAY), "invalid top=0 for track: a whole number of keywords to add >= 1"),
        (lambda t, f: t.add(f, endpoint="metadata", today=DAY), "invalid endpoint='metadata' for track: one of search"),
        (lambda t, f: t.add(f, country="gb", today=DAY), "no country with a frame: its rows name their own"),
        (lambda t, f: t.add(["a", 7], today=DAY), "each item of keywords is a text"),
        (lambda t, f: t.add(["maps"], min_score=50, today=DAY), "no min_score without scores"),
        (lambda t, f: t.add(f, min_score=150, today=DAY), "a score from 0 to 100"),
        (lambda t, f: t.add(f.drop("country"), today=DAY), "a frame with keyword and country columns"),
        (lambda t, f: t.opportunities(APP, [], today=DAY), "one competitor's app id or more"),
        (lambda t, f: t.opportunities(APP, "1,2", places=0, today=DAY), "a whole number of top places >= 1"),
    ],
)
def test_tracker_add_refuses_bad_input_with_what_is_allowed(kept, tmp_path, call, message):
    spec = _spec(tmp_path, kept)
    before = spec.read_bytes()
    with pytest.raises(sf.InvalidParameterError, match=message):
        call(Tracker.from_toml(spec, sandbox=True), kept["found"])
    assert spec.read_bytes() == before


def test_a_spec_changed_since_the_keywords_were_chosen_is_not_overwritten(kept, tmp_path):
    spec = _spec(tmp_path, kept)
    addition = Tracker.from_toml(spec, sandbox=True).add(kept["found"], top=1, today=DAY)
    spec.write_text(spec.read_text() + "# a colleague's line\n")
    changed = spec.read_bytes()
    with pytest.raises(sf.InvalidParameterError, match="a file unchanged since the keywords were chosen"):
        addition.write()
    assert spec.read_bytes() == changed


def test_under_a_workspace_the_month_budget_is_the_workspaces_and_its_cache_is_read(kept, tmp_path, capsys):
    (tmp_path / "storeframes.toml").write_text(
        f"[workspace.acme]\ncache_dir = {toml_string(str(kept['cache']))}\nbudget_per_month = 100\n"
    )
    spec = tmp_path / "acme.toml"
    spec.write_text('[tracker]\nname = "acme"\n\n[[track]]\nendpoint = "metadata"\napps = ["1234567890"]\n')
    before = spec.read_bytes()
    args = _args(spec, kept, "--top", "2", "--yes")
    assert main(["--workspace", "acme", "--config", str(tmp_path / "storeframes.toml"), *args]) == 4
    captured = capsys.readouterr()
    assert "of the month budget 100 (over by" in captured.out  # the history's price is spent already this month
    best = kept["found"]["keyword"].head(2).to_list()  # nothing tracked as search: the two best
    assert captured.out.startswith("acme: 2 keywords to add to acme.toml")
    assert all(f"  {keyword} (us, iphone): " in captured.out for keyword in best)
    assert spec.read_bytes() == before
