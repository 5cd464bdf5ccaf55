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
(:func:`run_partition`): ``tracker.run(today=D)`` on today's partition, and
``tracker.backfill(D, D)`` on a past one of a history item (``search_history``, ``changes``), so
Dagster's partition backfills backfill history. The service answers the present only for the
other endpoints, so a past partition of theirs is refused before anything is sent (with
``sandbox=True`` it is a replay: the sandbox's today is D). A run that was not ``ok`` or
``over_budget`` fails the materialization, the run's errors in its message.

Needs Dagster 1.11.3 or newer: ``pip install "storeframes[dagster]"``. ``import storeframes``
does not load this module; importing it without Dagster raises an ``ImportError`` that says so.
"""

# no `from __future__ import annotations`: Dagster and pydantic read this module's hints as objects
import re
from collections.abc import Iterator, Mapping
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from .catalog import today_utc
from .errors import InvalidParameterError
from .track.spec import DEFAULT_LOOKBACK, Item, TrackerSpec, load_spec
from .track.tracker import RunResult, Tracker

DAGSTER_EXTRA = 'pip install "storeframes[dagster]"'
"""How to install what this module needs: Dagster 1.11.3 or newer."""

try:
    import dagster as dg
except ImportError as exc:  # the message says what to install, and what failed
    raise ImportError(f"storeframes.dagster needs Dagster: {DAGSTER_EXTRA} ({exc})") from exc

__all__ = [
    "DAGSTER_EXTRA",
    "FINE",
    "ClientOptions",
    "TrackerResource",
    "dagster_name",
    "first_partition",
    "run_metadata",
    "run_partition",
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


def run_partition(tracker: Tracker, item: str, day: date | str, *, today: date | None = None) -> RunResult:
    """Run ``tracker`` for its item called ``item`` as of ``day``, as the asset of partition ``day`` does.

    ``day`` is today (UTC; ``today`` for tests): ``tracker.run(today=day, items=[item])``, what is
    due. A past day: ``tracker.backfill(day, day, items=[item])`` for a history item (that day
    only); for the others, a replay with a sandbox tracker, and refused with the real service,
    whose answers are the present only. A day after today is refused. The refusals are
    :class:`~storeframes.InvalidParameterError`, before anything is sent.

    >>> tracker = Tracker.from_toml("tracking.toml", sandbox=True)  # doctest: +SKIP
    >>> run_partition(tracker, "search", "2026-11-20").requests  # doctest: +SKIP
    2

    Returns the run's :class:`~storeframes.track.tracker.RunResult` (``status``, ``requests``,
    ``credits_spent``, ``credits_saved``, ``cells_new``, ``cells_cached``, ``errors`` ...).
    """
    chosen = tracker.spec.item(item)
    if isinstance(day, str):
        try:
            day = date.fromisoformat(day)
        except ValueError:
            raise InvalidParameterError("partition", day, "a day as YYYY-MM-DD", endpoint="track") from None
    now = today or today_utc()
    if day > now:
        raise InvalidParameterError("partition", day.isoformat(), f"a day up to today ({now})", endpoint="track")
    if day < now:
        if chosen.history:
            return tracker.backfill(day, day, items=[chosen.name])
        if not tracker.sandbox:
            raise InvalidParameterError(
                "partition",
                day.isoformat(),
                f"today ({now}) for {chosen.name}: the service answers {chosen.endpoint} for the present only, so a "
                "past day of it cannot be fetched (backfill the history items: search_history, changes)",
                endpoint="track",
            )
    return tracker.run(today=day, items=[chosen.name])


def run_metadata(result: RunResult) -> dict[str, Any]:
    """The metadata a materialization records of a tracker's run.

    >>> from datetime import date
    >>> run = RunResult("20261120-060000-a1b2c3", "photo-editors", date(2026, 11, 20), "run", "ok", requests=2,
    ...                 cells_new=2, credits_spent=20)
    >>> run_metadata(run)["credits_spent"], run_metadata(run)["errors"]
    (20, [])

    Keys: ``status`` (str), ``kind`` (``"run"`` or ``"backfill"``), ``run_id`` (str, the run
    log's), ``requests``, ``credits_spent``, ``credits_saved``, ``cells_new``, ``cells_cached``
    (int), ``errors`` and ``left_out`` (lists of str).
    """
    return {
        "status": result.status,
        "kind": result.kind,
        "run_id": result.run_id,
        "requests": result.requests,
        "credits_spent": result.credits_spent,
        "credits_saved": result.credits_saved,
        "cells_new": result.cells_new,
        "cells_cached": result.cells_cached,
        "errors": list(result.errors),
        "left_out": list(result.left_out),
    }


def _item_asset(spec: TrackerSpec, item: Item, partitions: Any, resource_key: str) -> Any:
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
        metadata={"tracker": spec.name, "item": item.name, "endpoint": item.endpoint, "every_days": item.every_days},
    )
    def _materialize(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
        return _materialize_partition(context, spec, item, resource_key)

    return _materialize


def _materialize_partition(context: Any, spec: TrackerSpec, item: Item, resource_key: str) -> Any:
    """The run of ``item`` for the partition of ``context``: its metadata, or a ``Failure`` with its errors."""
    resource: TrackerResource = getattr(context.resources, resource_key)
    result = run_partition(resource.tracker(), item.name, context.partition_key)
    metadata = run_metadata(result)
    for line in result.summary().splitlines():
        context.log.info(line)
    if result.status not in FINE:
        errors = "; ".join(result.errors) or "no error was recorded"
        raise dg.Failure(
            description=f"{spec.name} {item.name} on {context.partition_key}: {result.status}: {errors}",
            metadata=metadata,
        )
    return dg.MaterializeResult(metadata=metadata)


def _day(value: date | str, name: str) -> date:
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
) -> Any:
    """Dagster ``Definitions`` of the tracker in the TOML spec ``spec_path``: an asset per item.

    ``sandbox=True`` runs against the built-in sandbox; ``client_options`` go to each run's
    :class:`~storeframes.Client` (``api_key``, ``base_url``, ``budget``, ``coordinator`` ...) and are
    kept out of Dagster's config (:class:`ClientOptions`). Without them the client reads
    ``$STOREFRAMES_API_KEY`` and ``$STOREFRAMES_BASE_URL``. The partitions are UTC days from ``start``
    (by default :func:`first_partition`: 30 days, or the longest history ``lookback``, before the
    tracker's first run) to today; the schedule runs the job at ``hour_of_day:minute_of_hour`` UTC.

    The spec is read and checked whole now (a bad spec is an ``InvalidParameterError`` naming the
    file and line), and so are the options (the run log is read with them); nothing is sent.

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
    names: dict[str, str] = {}
    for item in spec.items:
        taken = names.setdefault(dagster_name(item.name), item.name)
        if taken != item.name:
            raise InvalidParameterError(
                "name", item.name, f"a name that is not {taken!r} once '-' and '.' are '_' (Dagster's asset keys)",
                endpoint="track",
            )  # fmt: skip
    first = _day(start, "start") if start is not None else first_partition(tracker)
    partitions = dg.DailyPartitionsDefinition(start_date=first.isoformat(), end_offset=1)
    group = dagster_name(spec.name)
    resource_key = f"tracker_{group}"
    assets = [_item_asset(spec, item, partitions, resource_key) for item in spec.items]
    job = dg.define_asset_job(
        f"track_{group}",
        selection=dg.AssetSelection.assets(*assets),
        description=f"Every item of the tracker {spec.name!r}, for one day.",
        executor_def=dg.in_process_executor,
    )
    schedule = dg.build_schedule_from_partitioned_job(
        job, name=f"track_{group}_daily", hour_of_day=hour_of_day, minute_of_hour=minute_of_hour
    )
    resource = TrackerResource(
        spec_path=str(path.resolve()), sandbox=sandbox, client_options=ClientOptions(client_options)
    )
    return dg.Definitions(assets=assets, jobs=[job], schedules=[schedule], resources={resource_key: resource})
