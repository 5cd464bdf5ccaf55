"""The digest of the day, kept in the cache: one per tracker and day whichever machine ran, read back by
anyone; its runs line counts finished runs and its credits every run's; days not fetched are never days
without data (in rank_history's frame, the rank charts and the digest's words)."""

from __future__ import annotations

import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import storeframes as sf
from storeframes.cli import main
from storeframes.errors import DigestNotKeptError
from storeframes.sandbox import World
from storeframes.track import Tracker, load_spec
from storeframes.track.day_digest import fetched_days, kept_digest
from storeframes.track.judging import rank_frame
from tests._children import child_env
from tests._s3 import s3_bucket, s3_server  # noqa: F401 - the fixtures

pytest.importorskip("matplotlib")

KEYWORD = "photo editor"
DAY = date(2026, 11, 20)
WORLD = World(0)
APPS = list(dict.fromkeys(WORLD.search(KEYWORD, device="iphone", country="us", language="en", day=DAY)))[:12]


def _spec(path: Path, cache_dir: str, *, budget: int = 100_000, digest: str | None = None) -> Path:
    listed = ", ".join(f'"{a}"' for a in APPS)
    notify = f'\n[notify]\ndigest = "{digest}"\n' if digest else ""
    path.write_text(
        f"""
[tracker]
name = "watch"
cache_dir = "{cache_dir}"
budget_per_month = {budget}

[[track]]
endpoint = "search"
keywords = ["{KEYWORD}"]

[[alert]]
rule = "top"
apps = [{listed}]
n = 10
{notify}"""
    )
    return path


def _cli(*args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["track", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.processes
@pytest.mark.s3
def test_two_machines_running_the_same_day_on_one_bucket_keep_one_digest_with_the_day_s_credits(
    tmp_path: Path,
    s3_bucket,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
):
    spec = _spec(tmp_path / "watch.toml", s3_bucket.url)
    command = [sys.executable, "-m", "storeframes", "track", "run", str(spec), "--sandbox", "--today"]
    env = child_env(**s3_bucket.env)
    for day in (DAY - timedelta(days=1), DAY):  # two machines, started together each day
        both = [
            subprocess.Popen(
                [*command, day.isoformat()], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            for _ in range(2)
        ]
        outputs = [p.communicate(timeout=180) for p in both]
        assert [p.returncode for p in both] == [0, 0], outputs

    kept = sorted(k for k in s3_bucket.objects() if k.startswith(f"{s3_bucket.prefix}/digests/"))
    assert kept == [f"{s3_bucket.prefix}/digests/tracker=watch/day={d}.parquet" for d in (DAY - timedelta(days=1), DAY)]
    runs = Tracker.from_toml(spec, storage_options=s3_bucket.storage_options).runs().filter(pl.col("day") == DAY)
    assert runs["status"].to_list() == ["ok", "ok"]
    assert sorted(runs["credits_spent"].to_list()) == [0, 10]  # one machine fetched, the other waited and found it kept
    digest = kept_digest(load_spec(spec), DAY, storage_options=s3_bucket.storage_options)
    assert f"**Spent on {DAY}:** 10 credits (every run)" in digest.markdown  # the day's, not the last run's 0
    assert "**Runs:** 2 finished, 0 not ok" in digest.markdown and "still running" not in digest.markdown
    assert "This run" not in digest.markdown and "Not fetched" not in digest.markdown

    with pytest.MonkeyPatch.context() as env_patch:  # anyone reads it back: the command line, with the bucket's keys
        for name, value in s3_bucket.env.items():
            env_patch.setenv(name, value)
        code, out, err = _cli("digest", str(spec), "--day", DAY.isoformat(), capsys=capsys)
        assert (code, err) == (0, "")
        assert out.splitlines()[0] == f"# watch on {DAY}" and "**Runs:** 2 finished, 0 not ok" in out
        code, out, err = _cli("digest", str(spec), "--day", "2026-11-25", capsys=capsys)
    assert (code, out) == (5, "")
    assert f"no digest of 2026-11-25 is kept for tracker 'watch' in the cache at {s3_bucket.url}" in err
    assert f"{DAY - timedelta(days=1)}, {DAY}" in err


def test_a_day_with_no_digest_kept_is_an_error_with_its_own_exit_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    spec = _spec(tmp_path / "watch.toml", "cache")
    code, out, err = _cli("digest", str(spec), "--sandbox", "--day", DAY.isoformat(), capsys=capsys)
    assert (code, out) == (5, "")
    assert err.startswith(f"storeframes track digest: no digest of {DAY} is kept for tracker 'watch'")
    assert "(days with a digest, the last five: none; a run keeps one when the spec has [[alert]] rules" in err
    Tracker.from_toml(spec, sandbox=True).run(DAY)
    with pytest.raises(DigestNotKeptError, match=f"the last five: {DAY}") as caught:
        kept_digest(load_spec(spec), DAY + timedelta(days=1))
    assert caught.value.kept == [DAY] and caught.value.day == DAY + timedelta(days=1)
    code, out, err = _cli("digest", str(spec), "--day", DAY.isoformat(), "--out", str(tmp_path / "d"), capsys=capsys)
    assert code == 0 and out.splitlines() == [str(tmp_path / "d.html"), str(tmp_path / "d.md")]
    assert (tmp_path / "d.md").read_text().startswith(f"# watch on {DAY}")
    code, _, err = _cli("digest", str(spec), "--day", DAY.isoformat(), "--end", DAY.isoformat(), capsys=capsys)
    assert code == 2 and "--end with --start" in err


def test_a_month_with_days_over_budget_says_not_fetched_in_the_frame_the_chart_and_the_digest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    from PIL import Image

    spec = _spec(tmp_path / "watch.toml", "cache", budget=50, digest="reports/{tracker}-{day}.html")
    tracker = Tracker.from_toml(spec, sandbox=True)
    days = [DAY + timedelta(days=n) for n in range(13)]  # 11-20 to 12-02: 10 credits a day, 50 a month
    statuses = [tracker.run(d).status for d in days]
    skipped = [d for d, s in zip(days, statuses, strict=True) if s == "over_budget"]
    assert skipped == [date(2026, 11, n) for n in range(25, 31)]  # six days left out for the budget

    cache = tracker.client(days[-1]).cache
    fetched = fetched_days(tracker.spec, cache, "sandbox-0", days[0], days[-1])
    ranks = sf.rank_history(
        rank_frame(tracker.spec, cache, "sandbox-0", days[0], days[-1]),
        APPS[:1],
        start=days[0],
        end=days[-1],
        fetched=fetched,
    )
    assert ranks.filter(pl.col("status") == "not_fetched")["date"].to_list() == skipped
    assert ranks.filter(pl.col("date").is_in(skipped))["status"].unique().to_list() == ["not_fetched"]
    assert "no_data" not in ranks["status"].to_list()

    over = kept_digest(tracker.spec, skipped[1]).markdown  # the digest of a day over budget says so
    assert "**Runs:** 1 finished, 1 not ok" in over
    assert f"- 'photo editor' (us): {skipped[1]} (1 day)" in over and "they are not days without data" in over
    code, out, _ = _cli(
        "digest",
        str(spec),
        "--sandbox",
        "--start",
        str(days[0]),
        "--end",
        str(days[-1]),
        "--out",
        str(tmp_path / "month.html"),
        capsys=capsys,
    )
    assert code == 0
    month = (tmp_path / "month.md").read_text()
    assert "- 'photo editor' (us): 2026-11-25 to 2026-11-30 (6 days)" in month
    assert "**Runs:** 13 finished, 6 not ok" in month
    # the period spans two months: its line says what every run of it spent (50 in November, 20 in December), then
    # the month of its last day beside the month budget
    spent = month.splitlines()[2]
    assert spent.startswith(
        "**Spent from 2026-11-20 to 2026-12-02:** 70 credits (every run) · "
        "**Month budget, 2026-12 so far:** 20 of 50 credits (40%)"
    )
    assert sum(tracker.runs()["credits_spent"]) == 70
    last = kept_digest(tracker.spec, days[-1]).markdown.splitlines()[2]  # the day's digest: the day's runs
    assert last.startswith(
        "**Spent on 2026-12-02:** 10 credits (every run) · **Month budget, 2026-12 so far:** 20 of 50 credits (40%)"
    )
    charts = sorted((tmp_path / "month_files").glob("rank-*.png"))
    assert len(charts) == month.count("](month_files/rank-") > 0
    for chart in charts:  # each spans the gap: the skipped days a hatched band, no grey band of days without data
        pixels = np.asarray(Image.open(chart).convert("RGB")).reshape(-1, 3)
        hatched = int((pixels == (255, 244, 224)).all(axis=1).sum())  # the face of the band of days not fetched
        grey = int((pixels == (228, 228, 228)).all(axis=1).sum())  # the band of days the service recorded nothing
        assert hatched > 5_000 and grey < 100, (chart.name, hatched, grey)
    assert (tmp_path / "reports" / f"watch-{skipped[1]}.md").read_text() == over.replace(
        "](rank-", f"](watch-{skipped[1]}_files/rank-"
    )  # the spec's [notify] digest: an extra copy of the kept one


def test_a_digest_the_cache_will_not_take_makes_the_run_partial_and_says_why(tmp_path: Path):
    spec = _spec(tmp_path / "watch.toml", "cache")
    tracker = Tracker.from_toml(spec, sandbox=True)
    assert tracker.run(DAY).status == "ok"
    blocked = tmp_path / "cache" / "digests" / "tracker=watch"
    for kept in blocked.iterdir():
        kept.unlink()
    blocked.rmdir()
    blocked.write_bytes(b"")  # a file where the tracker's digests go: no digest can be written under it
    result = Tracker.from_toml(spec, sandbox=True).run(DAY + timedelta(days=1))
    assert (result.status, result.exit_code) == ("partial", 3)
    assert result.credits_spent == 10  # the day was fetched: only its digest is missing, and said so
    assert [e for e in result.errors if e.startswith("digest: ")] == [result.errors[-1]]
    assert f"could not keep the digest of {DAY + timedelta(days=1)} in the cache at" in result.errors[-1]
    row = tracker.runs().row(-1, named=True)
    assert row["status"] == "partial" and "could not keep the digest" in row["errors"]
