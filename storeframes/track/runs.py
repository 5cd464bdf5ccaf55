"""Runs that did not end: a run's row finished from the ledger by the run that finds it left ``running``.

A run's row is written when it starts and after each item, with what its client spent so
far; a run killed in the middle of an item (SIGKILL, a lost machine) leaves it ``running``,
counting none of that item's requests. The row names the client's ledger ``session``, and
every request the service may have charged is in the ledger before it is sent (its
reservation, then its attempts' rows: :mod:`storeframes.credits`), so the next run of the
tracker marks the row ``interrupted`` and counts its requests and credits from the ledger:
what the service answered, and, at their estimates, the requests whose answers were never
written.

>>> from storeframes.track.runs import ledger_counts
>>> ledger_counts(sf.Cache("cache").ledger.read(), "20261120T061500000000Z-4242-a1b2c3")  # doctest: +SKIP
{'requests': 34, 'credits_spent': 340, 'credits_saved': 0, 'reserved': 2, 'credits_reserved': 20}
"""

from __future__ import annotations

import polars as pl

from ..cache import Cache
from ..errors import CacheUnavailableError, StoreframesError, plural

__all__ = ["end_interrupted", "ledger_counts", "stops_the_run"]


def ledger_counts(ledger: pl.DataFrame, session: str | None) -> dict[str, int] | None:
    """What the ledger holds of one client ``session``: ``requests`` sent (every attempt, and every
    reservation never settled: it may have been sent), ``credits_spent`` (reservations at their
    estimates), ``credits_saved``, and of them the ``reserved`` requests and their ``credits_reserved``.
    None without a session (a row written by an earlier version).

    >>> ledger_counts(sf.Cache("cache").ledger.read(), None) is None  # doctest: +SKIP
    True
    """
    if not session:
        return None
    rows = ledger.filter(pl.col("row").str.starts_with(f"{session}-"))
    reserved = rows.filter(pl.col("reserved"))
    return {
        "requests": int((~rows["from_cache"]).sum()),
        "credits_spent": int(rows["cost"].sum()),
        "credits_saved": int(rows["saved"].sum()),
        "reserved": reserved.height,
        "credits_reserved": int(reserved["cost"].sum()),
    }


def end_interrupted(cache: Cache, tracker: str, run_id: str) -> tuple[str, ...]:
    """Mark the runs of ``tracker`` left ``running`` as ``interrupted`` (by the run ``run_id``, which holds
    the tracker's lease), each row's requests and credits counted from the ledger; their run ids.

    A row keeps its own counts where they are larger (rows a full disk kept out of the ledger).

    >>> end_interrupted(sf.Cache("cache"), "keywords", "20261121-061500-a1b2c3")  # doctest: +SKIP
    ('20261120-061500-d4e5f6',)
    """
    running = cache.runs.running(tracker)
    if running.is_empty():
        return ()
    ledger = cache.ledger.read()
    ended = []
    for row in running.iter_rows(named=True):
        notes = [row["errors"], f"stopped before it ended; run {run_id} fetched what it had not kept"]
        counted = ledger_counts(ledger, row.get("session"))
        if counted is not None:
            for column in ("requests", "credits_spent", "credits_saved"):
                row[column] = max(row[column] or 0, counted[column])
            notes.append(
                f"counted from the ledger: {plural(row['requests'], 'request')}, {row['credits_spent']:,} credits"
            )
            if counted["reserved"]:
                notes.append(
                    f"{plural(counted['reserved'], 'request')} sent or about to be sent when it stopped, whose "
                    f"answers were never written, counted at their estimates ({counted['credits_reserved']:,} credits)"
                )
        row["status"] = "interrupted"
        row["errors"] = "\n".join(filter(None, notes))
        cache.runs.write(row)
        ended.append(row["run_id"])
    return tuple(ended)


def stops_the_run(error: StoreframesError) -> bool:
    """Whether ``error`` stops the whole run, not only its item: the cache cannot keep the ledger or the
    answers (a full disk, a read-only folder), so every further request would go uncounted or unkept.

    >>> stops_the_run(sf.CacheUnavailableError("the disk is full"))  # doctest: +SKIP
    True
    """
    return isinstance(error, CacheUnavailableError)
