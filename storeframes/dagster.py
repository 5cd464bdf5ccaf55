"""A tracker on Dagster: an asset per tracked item, a partition per day, a daily schedule.

::

    # definitions.py; then `dagster dev -f definitions.py`
    from storeframes.dagster import tracker_definitions

    defs = tracker_definitions("tracking.toml")

:func:`tracker_definitions` reads a tracker's spec (see :mod:`storeframes.track.spec`) and gives
Dagster ``Definitions`` of:

- an asset per ``[[track]]`` item, its key ``<tracker>/<item>`` and its group the tracker's name
  (a ``-`` or ``.``, which Dagster refuses in a name, becomes ``_``), partitioned by day (UTC days,
  the newest one today);
- a job of the tracker's assets, run step after step in one process (the items share the token's
  rate window anyway), and a schedule that runs it every day at ``hour_of_day:minute_of_hour``
  UTC for that day's partition (stopped until it is turned on, as Dagster's schedules are);
- the resource :class:`TrackerResource`, which holds the spec's path and the client options and
  builds the :class:`~storeframes.track.tracker.Tracker`.

Materializing partition D of an item runs the tracker for that item as of D
(:func:`run_partitions`): ``tracker.run(today=D)``, logged as day D, on today's partition and on
a past one of a history item (``search_history``, ``changes``): it fetches what the command
line's run of that day fetches (a first run its ``lookback``, a later one every day since the
last continuous fetch). A backfill hands its days to one run (Dagster's single-run backfill
policy): a keyword's days are asked for as one range, not a request a day.
The service answers the present only for the other endpoints, so a past partition of theirs is
refused before anything is sent (with ``sandbox=True`` it is a replay: the sandbox's today is
D). A run that was not ``ok`` or ``over_budget`` fails the materialization, the run's errors in
its message; its metadata is :func:`run_metadata`'s.

Needs Dagster 1.11.3 or newer (the ``dagster`` extra: ``pip install ".[dagster]"`` from a checkout).
``import storeframes`` does not load this module; importing it without Dagster raises an
``ImportError`` that says so.
"""

# no `from __future__ import annotations`: Dagster and pydantic read this module's hints as objects
import re
import warnings
from collections.abc import Iterator, Mapping, Sequence
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from ._version import install_hint
from .catalog import today_utc
from .errors import InvalidParameterError
from .track import RunResult, Tracker
from .track.spec import DEFAULT_LOOKBACK, Item, TrackerSpec, load_spec

try:
    import dagster as dg
except ImportError as exc:  # depends on the installed extras (tests/project/test_conventions.py)
    _missing = f"{exc.name} is not installed" if exc.name else str(exc)
    raise ImportError(
        f"storeframes.dagster needs Dagster ({_missing}): {install_hint('dagster')}", name=exc.name
    ) from exc

__all__ = [
    "FINE",
    "ClientOptions",
    "TrackerResource",
    "dagster_name",
    "first_partition",
    "run_metadata",
    "run_partitions",
    "tracker_definitions",
]

FINE = ("ok", "over_budget")
"""The statuses of a run whose materialization succeeds; any other fails it (``partial``, ``failed`` ...)."""


def dagster_name(name: str) -> str:
    """``name`` as Dagster takes a name: every character but letters, digits and ``_`` made ``_``.

    >>> dagster_name("photo-editors.us")
    'photo_editors_us'
    """
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


class ClientOptions(Mapping[str, Any]):
    """The client options of a tracker's runs (``api_key``, ``base_url``, ``budget``, a sandbox's
    ``faults`` ...), held as an object beside Dagster's config, never in it.

    Dagster shows a resource's config in its UI and its run records; these options are not config,
    so a token given here is never shown there, and options that are not text or numbers (a
    coordinator, an HTTP client) can be given too. Its repr names the options, never their values.

    >>> ClientOptions({"api_key": "sk-live-0123", "budget": 500})
    ClientOptions(api_key, budget)
    """

    def __init__(self, options: Mapping[str, Any] | None = None):
        self._options = dict(options or {})

    def __getitem__(self, key: str) -> Any:
        return self._options[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._options)

    def __len__(self) -> int:
        return len(self._options)

    def __repr__(self) -> str:
        return f"ClientOptions({', '.join(sorted(getattr(self, '_options', {})))})"


class TrackerResource(dg.ConfigurableResource):
    """The Dagster resource of a tracker: its spec's path and client options in, a Tracker out.

    ``spec_path`` and ``sandbox`` are config (Dagster shows them and a run may set them);
    ``client_options`` is a :class:`ClientOptions`, kept out of the config. Without a token among
    them, the client reads ``$STOREFRAMES_API_KEY`` (and ``$STOREFRAMES_BASE_URL``) in the process
    that runs the step.

    >>> resource = TrackerResource(spec_path="tracking.toml", sandbox=True)  # doctest: +SKIP
    >>> resource.tracker().run(today="2026-11-20").status  # doctest: +SKIP
    'ok'
    """

    spec_path: str
    sandbox: bool = False
    client_options: dg.ResourceDependency[ClientOptions | None] = None  # type: ignore[assignment, unused-ignore]

    def tracker(self) -> Tracker:
        """A :class:`~storeframes.track.tracker.Tracker` of the spec, read now (the file as it is)."""
        return Tracker.from_toml(self.spec_path, sandbox=self.sandbox, **dict(self.client_options or {}))


def run_partitions(
    tracker: Tracker, item: str, first: date | str, last: date | str | None = None, *, today: date | None = None
) -> list[RunResult]:
    """Run ``tracker`` for its item called ``item`` on the partitions ``first`` to ``last`` (``first``
    alone by default), as the item's asset does; the runs' results.

    A partition of a history item fetches what ``storeframes track run --today D`` fetches: a
    partition D is ``tracker.run(today=D, items=[item])``, logged as day D: every day since the
    last continuous fetch, its ``lookback`` for a first run. A range (a Dagster backfill hands its
    days over in one run) is the run of its last day, which asks every day since, preceded by the
    run of its first day when the item has nothing fetched by then (its lookback): two requests a
    keyword or app at most, not one a day. Today's partition (UTC; ``today`` for tests) of any item
    is the run of today, what is due. Past partitions of another item: with a sandbox tracker, a
    replay of each day (its sandbox's today that day); with the real service, whose answers are the
    present only, refused. A day after today is refused. The refusals are
    :class:`~storeframes.InvalidParameterError`, before anything is sent.

    >>> tracker = Tracker.from_toml("tracking.toml", sandbox=True)  # doctest: +SKIP
    >>> [run.requests for run in run_partitions(tracker, "search", "2026-11-20")]  # doctest: +SKIP
    [2]

    Each :class:`~storeframes.track.result.RunResult` has ``status``, ``kind``, ``requests``,
    ``credits_spent``, ``credits_saved``, ``cells_new``, ``cells_cached``, ``errors`` ...
    """
    chosen = tracker.spec.item(item)
    start = _day(first, "partition")
    end = _day(last, "partition") if last is not None else start
    now = today or today_utc()
    if not start <= end <= now:
        shown = start.isoformat() if start == end else f"{start}..{end}"
        raise InvalidParameterError(
            "partition", shown, f"days up to today ({now}), the earlier first", endpoint="track"
        )
    if chosen.history:  # what the command line's runs of those days fetch, each logged as its partition's day
        first_run = start < end and tracker.status(start).items.filter(item=chosen.name)["last_fetched"].item() is None
        days = [start, end] if first_run else [end]
        return [tracker.run(today=day, items=[chosen.name]) for day in days]
    if start < now and not tracker.sandbox:
        raise InvalidParameterError(
            "partition",
            start.isoformat() if start == end else f"{start}..{end}",
            f"today ({now}) for {chosen.name}: the service answers {chosen.endpoint} for the present only, so a "
            "past day of it cannot be fetched (backfill the history items: search_history, changes)",
            endpoint="track",
        )
    return [tracker.run(today=start + timedelta(days=n), items=[chosen.name]) for n in range((end - start).days + 1)]


_WORST_LAST = ("ok", "over_budget", "partial", "interrupted", "failed")


def run_metadata(results: Sequence[RunResult]) -> dict[str, Any]:
    """The metadata a materialization records of the tracker's runs for it (one, a backfill and a run, or a
    sandbox's replays of several days).

    >>> from datetime import date
    >>> run = RunResult("20261120-060000-a1b2c3", "photo-editors", date(2026, 11, 20), "run", "ok", requests=2,
    ...                 cells_new=2, credits_spent=20)
    >>> metadata = run_metadata([run])
    >>> metadata["status"], metadata["requests"], metadata["credits_spent"], metadata["errors"]
    ('ok', 2, 20, [])

    Keys: ``status`` (str: the worst of the runs', ``ok`` < ``over_budget`` < ``partial`` <
    ``interrupted`` < ``failed``), ``kind`` (``"run"``; ``"backfill"`` or ``"backfill+run"`` for
    runs of those kinds),
    ``run_ids`` (list of str, the run log's), ``requests``, ``credits_spent``, ``credits_saved``,
    ``cells_new``, ``cells_cached`` (int, summed), ``errors`` and ``left_out`` (lists of str), and
    ``not_fetched`` (list of str: the days each run left unfetched, item by item, ``"<run's day>:
    ranks: 3 days (2026-10-09..2026-10-11)"``).
    """
    statuses = [r.status for r in results]
    worst = max(statuses, key=lambda s: _WORST_LAST.index(s) if s in _WORST_LAST else len(_WORST_LAST), default="ok")
    return {
        "status": worst,
        "kind": "+".join(dict.fromkeys(r.kind for r in results)),
        "run_ids": [r.run_id for r in results],
        "requests": sum(r.requests for r in results),
        "credits_spent": sum(r.credits_spent for r in results),
        "credits_saved": sum(r.credits_saved for r in results),
        "cells_new": sum(r.cells_new for r in results),
        "cells_cached": sum(r.cells_cached for r in results),
        "errors": [e for r in results for e in r.errors],
        "left_out": sorted({name for r in results for name in r.left_out}),
        "not_fetched": [f"{r.day}: {line}" for r in results for line in r.missing_lines()],
    }


def _item_asset(
    spec: TrackerSpec, item: Item, partitions: dg.DailyPartitionsDefinition, resource_key: str
) -> dg.AssetsDefinition:
    """The asset of ``item``: a partition's materialization runs the tracker for it as of that day."""
    group = dagster_name(spec.name)
    cadence = "every day" if item.every_days == 1 else f"every {item.every_days} days"
    kept = "a day of history a partition" if item.history else "a snapshot when due"
    description = f"{item.label}. Fetched {cadence} by the tracker {spec.name!r} ({kept})."

    @dg.asset(
        key=dg.AssetKey([group, dagster_name(item.name)]),
        group_name=group,
        partitions_def=partitions,
        required_resource_keys={resource_key},
        description=description,
        # a Dagster backfill hands the days over in one run: for history, one request a keyword or app, not one a day
        backfill_policy=dg.BackfillPolicy.single_run(),
        metadata={"tracker": spec.name, "item": item.name, "endpoint": item.endpoint, "every_days": item.every_days},
    )
    def _materialize(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
        return _materialize_partition(context, spec, item, resource_key)

    return _materialize


def _materialize_partition(context: Any, spec: TrackerSpec, item: Item, resource_key: str) -> Any:
    """The runs of ``item`` for the partitions of ``context``: their metadata, or a ``Failure`` with their errors."""
    resource: TrackerResource = getattr(context.resources, resource_key)
    days = context.partition_key_range
    results = run_partitions(resource.tracker(), item.name, days.start, days.end)
    metadata = run_metadata(results)
    for result in results:
        for line in result.summary().splitlines():
            context.log.info(line)
    shown = days.start if days.start == days.end else f"{days.start}..{days.end}"
    if metadata["status"] not in FINE:
        errors = "; ".join(metadata["errors"]) or "no error was recorded"
        raise dg.Failure(
            description=f"{spec.name} {item.name} on {shown}: {metadata['status']}: {errors}", metadata=metadata
        )
    if metadata["left_out"]:
        unfetched = "; ".join(metadata["not_fetched"])
        context.log.warning(f"{spec.name} {item.name} on {shown}: left out for the budget; not fetched: {unfetched}")
    return dg.MaterializeResult(metadata=metadata)


def _day(value: date | str, name: str) -> date:
    """``value`` as a day, or an ``InvalidParameterError`` for ``name``."""
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(value)
    except (TypeError, ValueError):
        raise InvalidParameterError(name, value, "a day as YYYY-MM-DD", endpoint="track") from None


def first_partition(tracker: Tracker, *, today: date | None = None) -> date:
    """The day the partitions begin when none is given: as far back as a first run of the history items
    reaches (their longest ``lookback``, 30 days when there is none), counted from the day of the
    tracker's first run in its run log (today for a tracker that never ran).

    Once the tracker has run, this stays put: a backfill of those days keeps their partitions.
    """
    runs = tracker.runs()
    first = runs["day"].min() if runs.height else None
    since = first if isinstance(first, date) else (today or today_utc())
    reach = max((i.lookback_days for i in tracker.items if i.history), default=DEFAULT_LOOKBACK)
    return since - timedelta(days=reach)


def tracker_definitions(
    spec_path: str | Path,
    *,
    sandbox: bool = False,
    start: date | str | None = None,
    hour_of_day: int = 6,
    minute_of_hour: int = 0,
    **client_options: Any,
) -> dg.Definitions:
    """Dagster ``Definitions`` of the tracker in the TOML spec ``spec_path``: an asset per item.

    ``sandbox=True`` runs against the built-in sandbox; ``client_options`` go to each run's
    :class:`~storeframes.Client` (``api_key``, ``base_url``, ``budget``, ``coordinator`` ...) and are
    kept out of Dagster's config (:class:`ClientOptions`). Without them the client reads
    ``$STOREFRAMES_API_KEY`` and ``$STOREFRAMES_BASE_URL``. The partitions are UTC days from ``start``
    (by default :func:`first_partition`: 30 days, or the longest history ``lookback``, before the
    tracker's first run) to today; the schedule runs the job at ``hour_of_day:minute_of_hour`` UTC.

    The spec is read and checked whole now (a bad spec is an ``InvalidParameterError`` naming the
    file and line), and a client is made of the options, so a wrong option is refused now too
    (a ``TypeError`` naming it); nothing is sent.

    >>> defs = tracker_definitions("tracking.toml", sandbox=True)  # doctest: +SKIP
    >>> job = defs.resolve_job_def("track_photo_editors")  # doctest: +SKIP
    >>> job.execute_in_process(partition_key="2026-11-20").success  # doctest: +SKIP
    True

    What it holds, for a tracker ``photo-editors`` with items ``search`` and ``ranks``:

    ==========  =================================================================================
    assets      ``photo_editors/search``, ``photo_editors/ranks`` (group ``photo_editors``)
    partitions  ``DailyPartitionsDefinition`` from ``start``, its last key today
    job         ``track_photo_editors``: every asset of the tracker, in one process
    schedule    ``track_photo_editors_daily``: the job at ``hour_of_day:minute_of_hour`` UTC, that day's partition
    resource    ``tracker_photo_editors``: a :class:`TrackerResource`
    ==========  =================================================================================

    A materialization's metadata is :func:`run_metadata`'s (``status``, ``requests``,
    ``credits_spent``, ``credits_saved``, ``cells_new``, ``cells_cached``, ``errors`` ...).
    """
    for name, value, most in (("hour_of_day", hour_of_day, 23), ("minute_of_hour", minute_of_hour, 59)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= most:
            raise InvalidParameterError(name, value, f"a whole number from 0 to {most}", endpoint="track")
    path = Path(spec_path)
    spec = load_spec(path)
    tracker = Tracker(spec, sandbox=sandbox, **client_options)
    with tracker.client():  # a client made of the options now, so a wrong one is refused here; nothing is sent
        pass
    names: dict[str, str] = {}
    for item in spec.items:
        taken = names.setdefault(dagster_name(item.name), item.name)
        if taken != item.name:
            raise InvalidParameterError(
                "name",
                item.name,
                f"a name that is not {taken!r} once '-' and '.' are '_' (Dagster's asset keys)",
                endpoint="track",
            )
    first = _day(start, "start") if start is not None else first_partition(tracker)
    if first > today_utc():
        raise InvalidParameterError("start", first.isoformat(), f"a day up to today ({today_utc()})", endpoint="track")
    partitions = dg.DailyPartitionsDefinition(start_date=first.isoformat(), end_offset=1)
    group = dagster_name(spec.name)
    resource_key = f"tracker_{group}"
    with warnings.catch_warnings():  # chosen knowingly, and nothing a user of the definitions can act on
        warnings.filterwarnings("ignore", message=r"Parameter `backfill_policy` .* is currently in (beta|preview)")
        assets = [_item_asset(spec, item, partitions, resource_key) for item in spec.items]
    job = dg.define_asset_job(
        f"track_{group}",
        selection=dg.AssetSelection.assets(*assets),
        description=f"Every item of the tracker {spec.name!r}, for a day (or the days of a backfill).",
        executor_def=dg.in_process_executor,
    )
    schedule = dg.build_schedule_from_partitioned_job(
        job, name=f"track_{group}_daily", hour_of_day=hour_of_day, minute_of_hour=minute_of_hour
    )
    resource = TrackerResource(
        spec_path=str(path.resolve()), sandbox=sandbox, client_options=ClientOptions(client_options)
    )
    return dg.Definitions(assets=assets, jobs=[job], schedules=[schedule], resources={resource_key: resource})
