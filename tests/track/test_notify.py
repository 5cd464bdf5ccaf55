"""The message an address gets: events grouped by rule, at most MOST_LINES listed, and what a failed
address is told of without its credentials."""

from __future__ import annotations

import logging
from datetime import UTC, date, datetime

import polars as pl
import pytest

from storeframes.cache import EVENT_SCHEMA
from storeframes.track.notify import MOST_LINES, message, send
from storeframes.track.rules import address_id

pytest.importorskip("apprise")

DAY = date(2026, 11, 20)
KEY = b"k" * 32


def _events(rules: list[str]) -> pl.DataFrame:
    rows = [
        {"event_id": f"e{n:03}", "tracker": "watch", "alert": rule, "rule": rule, "day": DAY, "detail": f"{rule} {n}",
         "first_seen": datetime(2026, 11, 20, 6, tzinfo=UTC), "notified_to": []}
        for n, rule in enumerate(rules)
    ]  # fmt: skip
    return pl.DataFrame(rows, schema=EVENT_SCHEMA, orient="row") if rows else pl.DataFrame(schema=EVENT_SCHEMA)


def test_a_message_groups_events_by_rule_in_the_digests_order():
    title, body = message(_events(["top", "budget", "rank_drop", "top"]), tracker="watch", day=DAY)
    assert title == "storeframes watch: 4 new events (2026-11-20)"
    lines = body.splitlines()
    assert lines == [
        "Rank drops (1):",
        "- 2026-11-20: rank_drop 2",
        "",
        "Top N entries and exits (2):",
        "- 2026-11-20: top 0",
        "- 2026-11-20: top 3",
        "",
        "Budget (1):",
        "- 2026-11-20: budget 1",
    ]


def test_a_storm_is_one_message_listing_at_most_most_lines_events():
    title, body = message(_events(["rank_drop"] * (MOST_LINES + 25)), tracker="watch", day=DAY)
    assert title.startswith(f"storeframes watch: {MOST_LINES + 25} new events")
    assert sum(line.startswith("- ") for line in body.splitlines()) == MOST_LINES
    assert body.splitlines()[-1] == "... and 25 more: sf.events(...) or the digest lists them all"


def test_an_address_that_cannot_be_reached_is_reported_without_its_credentials(caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.DEBUG)
    url = "json://robot:pw-4471@127.0.0.1:9/hook/tok-8812"  # port 9 (discard): nothing listens
    got, error = send(url, _events(["top"]), tracker="watch", day=DAY, key=KEY)
    assert got == [] and error is not None
    assert error.startswith(f"notification to json://…#{address_id(url, KEY)} failed (")
    for text in (error, caplog.text):
        assert "pw-4471" not in text and "tok-8812" not in text and "robot" not in text
    # an address that had every event is sent nothing
    told = _events(["top"]).with_columns(notified_to=pl.lit([address_id(url, KEY)], pl.List(pl.String)))
    assert send(url, told, tracker="watch", day=DAY, key=KEY) == ([], None)
