"""Telling people of new events, through apprise: one address syntax for Slack, Microsoft Teams,
Discord, e-mail, JSON webhooks and many more.

Each address gets one message a judgement with every event it has not had yet (a webhook that
failed, or did not answer within the ``[notify] timeout``, gets them at the next run, once); each
delivery is bounded (:mod:`storeframes.track.delivery`). An address may hold credentials: it is never
shown, in a message, an error or a log line, only its kind and its keyed id
(:func:`~storeframes.track.rules.shown_address`); apprise's own log lines, which show parts of
addresses, are kept from the log while it sends, and its errors are reported without addresses.
"""

from __future__ import annotations

from datetime import date

import polars as pl

from .delivery import deliver
from .rules import DEFAULT_TIMEOUT, RULE_HEADINGS, RULES, address_id, shown_address

__all__ = ["MOST_LINES", "message", "send"]

MOST_LINES = 40
"""Events listed in one message at most; the others are counted in its last line."""


def message(events: pl.DataFrame, *, tracker: str, day: date) -> tuple[str, str]:
    """The title and the text of one message telling ``events``, grouped by rule, at most
    :data:`MOST_LINES` of them listed."""
    count = events.height
    title = f"storeframes {tracker}: {count} new event{'s' if count != 1 else ''} ({day})"
    lines: list[str] = []
    listed = 0
    for rule in RULES:
        group = events.filter(pl.col("rule") == rule).sort("day", "event_id")
        if group.is_empty():
            continue
        lines.append(f"{RULE_HEADINGS[rule]} ({group.height}):")
        for row in group.iter_rows(named=True):
            if listed == MOST_LINES:
                break
            lines.append(f"- {row['day']}: {row['detail']}")
            listed += 1
        lines.append("")
    if listed < count:
        lines.append(f"... and {count - listed} more: sf.events(...) or the digest lists them all")
    return title, "\n".join(lines).strip()


def send(
    url: str,
    events: pl.DataFrame,
    *,
    tracker: str,
    day: date,
    key: bytes,
    timeout: float = DEFAULT_TIMEOUT,
) -> tuple[list[str], str | None]:
    """Send the address ``url`` the ``events`` it has not had (by their ``notified_to``, the ids of
    :func:`~storeframes.track.rules.address_id` under the cache's ``key``), in one message, within
    ``timeout`` seconds in all.

    Returns the ids of the events it got (none when it had them all, or the sending failed) and
    the failure in words (the address shown by its kind and id only), or None.
    """
    owed = events.filter(~pl.col("notified_to").list.contains(address_id(url, key)))
    if owed.is_empty():
        return [], None
    title, body = message(owed, tracker=tracker, day=day)
    why = deliver(url, title, body, timeout=timeout)
    if why is None:
        return owed["event_id"].to_list(), None
    shown = shown_address(url, key)
    return [], f"notification to {shown} failed ({why}); its {owed.height} event(s) go at the next run"
