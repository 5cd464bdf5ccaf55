"""Tracking over time: a spec of keywords, apps and countries fetched every day, within a budget.

:class:`~storeframes.track.spec.TrackerSpec` (read from TOML by
:func:`~storeframes.track.spec.load_spec`) says what to follow and how often;
:class:`~storeframes.track.tracker.Tracker` plans, runs and backfills it through the ordinary
client (the cache, single flight, the shared window, the ledger), leaving a row in the cache's
run log per run; :mod:`~storeframes.track.due` decides what is due on a day,
:mod:`~storeframes.track.plan` says what a run would send, :mod:`~storeframes.track.running` runs it
(what it did: :mod:`~storeframes.track.result`; the month's spending and its lease: :mod:`~storeframes.track.budget`)
and :mod:`~storeframes.track.status` says where the tracker stands and the days missing. ``storeframes track``
is its command line, and :mod:`storeframes.dagster` schedules it on Dagster. Its ``[[alert]]`` rules
(:mod:`~storeframes.track.rules`) are judged on what it keeps (:mod:`~storeframes.track.judge`) at the
end of every run, each event kept once and told through apprise (:mod:`~storeframes.track.alerts`,
:mod:`~storeframes.track.notify`), with a digest (:mod:`~storeframes.track.digest`): one of the day per
tracker, kept in the cache by the run that finishes the day's work and read back by
:func:`~storeframes.track.day_digest.kept_digest` (:mod:`~storeframes.track.day_digest`); its event tables
(:mod:`~storeframes.track.digest_events`) say what a listing change changed with
:func:`~storeframes.track.change_words.describe_change`. Its ``[publish]``
table (:mod:`~storeframes.track.publishing`) names a Delta Lake each run publishes its tables to.
:mod:`~storeframes.track.adding` adds the best keywords of the opportunities the cache keeps to a spec, priced
first (:meth:`Tracker.add <storeframes.track.tracker.Tracker.add>`, ``storeframes track add``).
"""

from .adding import Addition, AdditionOverBudgetError, HistoryNotKeptError
from .alerts import AlertResult, events
from .change_words import describe_change
from .day_digest import kept_digest
from .plan import TrackPlan
from .result import EXIT_CODES, RunResult
from .rules import RULES, Alert, Notify
from .spec import CURRENT_ONLY, HISTORY, Item, SpecError, TrackerSpec, load_spec, parse_spec
from .status import TrackStatus
from .tracker import Tracker

__all__ = [
    "CURRENT_ONLY",
    "EXIT_CODES",
    "HISTORY",
    "RULES",
    "Addition",
    "AdditionOverBudgetError",
    "Alert",
    "AlertResult",
    "HistoryNotKeptError",
    "Item",
    "Notify",
    "RunResult",
    "SpecError",
    "TrackPlan",
    "TrackStatus",
    "Tracker",
    "TrackerSpec",
    "describe_change",
    "events",
    "kept_digest",
    "load_spec",
    "parse_spec",
]
