"""Notifications bounded and addresses' ids that give nothing away, against loopback servers that misbehave:
a webhook that trickles its answer, one that answers 500 with 400 MB, one that redirects, a mail server that
never greets; ids no guess of a password can be checked against, the same for every member of a cache."""

from __future__ import annotations

import hashlib
import json
import logging
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import polars as pl
import pytest

from storeframes.cache import Cache
from storeframes.track import Tracker

from .._children import child_env
from .._notify_servers import HUGE, rogue_webhook, silent_smtp, webhook
from ..conftest import ROOT
from .test_alerts import DAYS, _spec

pytest.importorskip("apprise")

DAY = DAYS[4]


def _kept(tmp_path: Path) -> tuple[Tracker, pl.DataFrame]:
    """A tracker that ran five days with no address: its events are kept, none told."""
    tracker = Tracker.from_toml(_spec(tmp_path, []), sandbox=True)
    for d in DAYS[:5]:
        tracker.run(d)
    kept = tracker.events()
    assert kept.height > 0 and kept["notified_at"].null_count() == kept.height
    return tracker, kept


def _loud(tmp_path: Path, urls: list[str], *, timeout: float | None = None, name: str = "loud.toml") -> Path:
    """The spec of the tracker of :func:`_kept` with these addresses (and ``[notify] timeout``)."""
    quiet = (tmp_path / "watch.toml").read_text()
    addresses = ", ".join(f'"{u}"' for u in urls)
    text = quiet.replace("urls = []", f"urls = [{addresses}]" + (f"\ntimeout = {timeout}" if timeout else ""))
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_trickling_webhook_holds_a_run_no_longer_than_its_timeout_and_is_told_at_the_next_run(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    tracker, kept = _kept(tmp_path)
    caplog.set_level(logging.DEBUG)
    with rogue_webhook("trickle") as hook:
        loud = Tracker.from_toml(_loud(tmp_path, [hook.url], timeout=3), sandbox=True)
        began = time.monotonic()
        held = loud.run(DAY)  # the answer would take 60 s: the delivery ends at 3
        took = time.monotonic() - began
        assert took < 20, f"the run waited {took:.1f} s for a trickling webhook"
        print(f"a run whose webhook trickles its answer for 60 s (timeout = 3) returned in {took:.1f} s")
        assert held.status == "partial" and held.exit_code == 3
        [error] = held.errors
        assert re.fullmatch(
            r"alerts: notification to json://…#[0-9a-f]{12} failed \(no answer within 3 s\); "
            rf"its {kept.height} event\(s\) go at the next run",
            error,
        ), error
        assert tracker.events()["notified_at"].null_count() == kept.height  # not told
        hook.mode = "ok"
        following = loud.run(DAYS[5])
        assert following.errors == [] and following.status == "ok"
        told = hook.texts()
        assert all(told.count(detail) == 1 for detail in kept["detail"])
    assert tracker.events()["notified_at"].null_count() == 0
    assert "rogue-secret-3390" not in caplog.text and str(hook.port) not in caplog.text  # httpx's lines kept out


_MEASURE = """
import json, resource, sys
import apprise, httpx
from storeframes.track import Tracker
args = json.loads(sys.argv[1])
tracker = Tracker.from_toml(args["spec"], sandbox=True)
tracker.alerts(args["day"], notify=False)  # the judgement's own reading, before the measure
def resident():  # KiB now resident
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() // 1024
before, held = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resident()
judged = tracker.alerts(args["day"])
after, kept = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resident()
print(json.dumps({"growth_kib": after - before, "resident_kib": kept - held, "errors": judged.errors}))
"""


@pytest.mark.processes
def test_a_webhook_answering_500_with_400_mb_costs_the_run_little_memory_and_is_not_read(tmp_path: Path):
    _, kept = _kept(tmp_path)
    with rogue_webhook("huge") as hook:
        spec = _loud(tmp_path, [hook.url], timeout=30)
        args = json.dumps({"spec": str(spec), "day": DAY.isoformat()})
        command = [sys.executable, "-c", _MEASURE, args]
        done = subprocess.run(command, cwd=ROOT, env=child_env(), capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        measured = json.loads(done.stdout.strip().splitlines()[-1])
        sent = hook.sent_bytes
    growth_mb, resident_mb = measured["growth_kib"] / 1024, measured["resident_kib"] / 1024
    said = f"peak memory +{growth_mb:.1f} MB, resident {resident_mb:+.1f} MB; the server could send {sent >> 20} MB"
    print(f"a delivery answered 500 with {HUGE >> 20} MB: {said}")
    assert growth_mb < 100 and resident_mb < 100, f"the delivery grew the process by {growth_mb:.0f} MB"
    assert sent < HUGE // 4, f"the server could send {sent >> 20} MB of its answer: it was read"
    [error] = measured["errors"]
    assert "failed (it answered HTTP 500)" in error and f"its {kept.height} event(s) go at the next run" in error


def test_a_webhook_that_redirects_is_not_followed_and_its_events_are_not_told(tmp_path: Path):
    tracker, kept = _kept(tmp_path)
    with webhook() as elsewhere:
        location = f"http://127.0.0.1:{elsewhere.port}/hook/{elsewhere.secret}"
        with rogue_webhook("redirect", location=location) as hook:
            judged = Tracker.from_toml(_loud(tmp_path, [hook.url]), sandbox=True).alerts(DAY)
            assert hook.requests == 1
        assert elsewhere.received == [] and elsewhere.refused == 0  # the second server got nothing
    [error] = judged.errors
    assert "failed (redirected to 127.0.0.1 — not followed)" in error, error
    assert elsewhere.secret not in error and str(elsewhere.port) not in error
    assert judged.notified == {} and judged.exit_code == 3
    assert tracker.events()["notified_at"].null_count() == kept.height


def test_a_mail_server_that_never_answers_holds_a_judgement_no_longer_than_its_timeout(tmp_path: Path):
    tracker, kept = _kept(tmp_path)
    with silent_smtp() as port:
        url = f"mailto://user:mail-pw-2210@127.0.0.1:{port}?to=team@example.test&from=tracker@example.test"
        loud = Tracker.from_toml(_loud(tmp_path, [url], timeout=2), sandbox=True)
        began = time.monotonic()
        judged = loud.alerts(DAY)  # apprise alone would wait 15 s for a greeting
        took = time.monotonic() - began
    assert took < 10, f"the judgement waited {took:.1f} s for a silent mail server"
    print(f"a judgement whose mail server never greets (timeout = 2) returned in {took:.1f} s")
    [error] = judged.errors
    assert "failed (no answer within 2 s)" in error and "mail-pw-2210" not in error
    assert tracker.events()["notified_at"].null_count() == kept.height


WEAK = ["123456", "password", "qwerty", "letmein", "dragon", "monkey", "weakpw", "welcome", "secret", "admin"]
"""A small dictionary of weak passwords, the address's own among them."""


def _unkeyed(url: str) -> str:
    """The id earlier versions showed: the first 12 hex digits of the address's unsalted SHA-256."""
    return hashlib.sha256(url.encode()).hexdigest()[:12]


def _shown_ids(texts: list[str]) -> set[str]:
    return set(re.findall(r"#([0-9a-f]{12})", "\n".join(texts)))


def test_an_addresss_id_is_no_oracle_of_its_password_and_differs_between_caches(tmp_path: Path):
    mail = "mailtos://user:{}@127.0.0.1:9?to=team@example.test&from=tracker@example.test"  # port 9: nothing listens, the delivery fails
    url = mail.format("weakpw")
    seen: dict[str, set[str]] = {}
    for cache in ("cache", "other-cache"):
        folder = tmp_path / cache
        folder.mkdir()
        _spec(folder, [])
        text = (folder / "watch.toml").read_text().replace('cache_dir = "cache"', f'cache_dir = "{folder / "c"}"')
        (folder / "watch.toml").write_text(text)
        tracker = Tracker.from_toml(folder / "watch.toml", sandbox=True)
        for d in DAYS[:5]:
            tracker.run(d)
        with webhook() as hook:
            loud = Tracker.from_toml(_loud(folder, [hook.url, url]), sandbox=True)
            result = loud.run(DAY)
            judged = loud.alerts(DAY)
        runs = loud.runs()
        events = loud.events()
        shown = [*result.errors, result.summary(), judged.summary(), *judged.notified, repr(judged)]
        shown += [repr(loud.spec), repr(loud.spec.notify), *[e or "" for e in runs["errors"]]]
        shown += [",".join(t) for t in events["notified_to"]]
        assert any("notification to mailtos://…#" in e for e in result.errors), result.errors
        ids = _shown_ids(shown) | {i for t in events["notified_to"] for i in t}
        assert len(ids) == 2, ids  # the webhook's and the mail's
        candidates = {_unkeyed(mail.format(word)) for word in WEAK} | {_unkeyed(hook.url)}
        assert not ids & candidates, "an id shown is the unsalted digest of an address: a password oracle"
        assert "weakpw" not in "\n".join(shown)
        seen[cache] = ids
    assert not seen["cache"] & seen["other-cache"], "the same address has the same id in two caches"


@pytest.mark.s3
def test_the_members_of_a_cache_in_a_bucket_share_one_key_made_once(s3_bucket):
    options = s3_bucket.storage_options
    keys: list[bytes] = []

    def member() -> None:
        keys.append(Cache(s3_bucket.url, storage_options=options).events.address_key())

    racing = [threading.Thread(target=member) for _ in range(4)]
    for thread in racing:
        thread.start()
    for thread in racing:
        thread.join(60)
    assert len(keys) == 4 and len(set(keys)) == 1 and len(keys[0]) == 32
    assert Cache(s3_bucket.url, storage_options=options).events.address_key() == keys[0]  # read back, never made again
    assert len([k for k in s3_bucket.objects() if k.endswith("/storeframes-address-key.json")]) == 1


def test_events_told_under_the_earlier_ids_are_not_told_again_and_lose_those_ids(tmp_path: Path):
    tracker, kept = _kept(tmp_path)
    with webhook() as first, webhook() as second:
        cache = Cache(tmp_path / "cache")
        # as an earlier version left them: the first address told, by its unkeyed id; the second not yet
        for day in set(kept["day"].to_list()):
            rows = kept.filter(pl.col("day") == day).with_columns(
                notified_to=pl.lit([_unkeyed(first.url)], pl.List(pl.String))
            )
            cache.events.write("watch", day, rows)
        judged = Tracker.from_toml(_loud(tmp_path, [first.url, second.url]), sandbox=True).alerts(DAY)
        assert judged.errors == []
        assert first.received == []  # it had them: not told twice
        told = second.texts()
        assert all(told.count(detail) == 1 for detail in kept["detail"])
    after = tracker.events()
    assert after["notified_at"].null_count() == 0
    ids = {i for t in after["notified_to"] for i in t}
    assert len(ids) == 2 and _unkeyed(first.url) not in ids and _unkeyed(second.url) not in ids
