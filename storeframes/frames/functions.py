"""The frame functions together: :class:`FrameFunctions` inherits the families and declares the
metadata change history itself; :func:`resolve` turns a frame function's name and arguments
into an endpoint and its calls."""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

import polars as pl

from .._tracebacks import user_facing
from ..answers import RefreshOption
from ..catalog import today_utc
from ..errors import InvalidParameterError
from ..fetch.pipeline import FRAMES
from .base import documented, with_days
from .find import AppFinder

__all__ = ["FrameFunctions", "resolve"]


def resolve(
    name: str, calls: Sequence[Mapping[str, Any]], *, today: date | None = None
) -> tuple[str, list[Mapping[str, Any]]]:
    """An endpoint and its calls from a frame function's name and arguments, its defaults applied.

    An endpoint's name passes through unchanged. ``days`` (of the date-ranged functions)
    counts back from ``today`` (by default the UTC day).
    """
    spec = FRAMES.get(name)
    if spec is None:
        return name, list(calls)
    signature = inspect.signature(getattr(FrameFunctions, name))
    resolved: list[Mapping[str, Any]] = []
    endpoints = set()
    for call in calls:
        try:
            bound = signature.bind(None, **call)
        except TypeError as exc:
            raise InvalidParameterError("arguments", dict(call), f"those of {name}{signature}: {exc}") from None
        bound.apply_defaults()
        arguments = {k: v for k, v in bound.arguments.items() if k not in ("self", "refresh")}
        if "days" in arguments:
            arguments = with_days(name, arguments, today or today_utc())
        endpoint, expanded = spec.calls(arguments)
        endpoints.add(endpoint)
        resolved += expanded
    if len(endpoints) > 1:
        raise InvalidParameterError(
            "calls",
            list(calls),
            f"calls of one endpoint per plan ({name} calls here go to {', '.join(sorted(endpoints))})",
        )
    return (endpoints.pop() if endpoints else spec.endpoint), resolved


class FrameFunctions(AppFinder):
    """The frame functions, declared once; :class:`~storeframes.Client` has them as methods.

    Each binds its arguments and hands them to ``maker``, a
    :class:`~storeframes.fetch.pipeline.FrameMaker`, which makes the frame.
    The families are declared apart and inherited (:class:`~storeframes.frames.apps.AppFrames`,
    :class:`~storeframes.frames.market.MarketFrames`, :class:`~storeframes.frames.find.AppFinder`);
    the metadata change history is declared here.
    """

    def _history(self, name: str, given: Mapping[str, Any]) -> pl.DataFrame:
        """The frame of the change-history function ``name`` called with ``given``, its parameters as bound
        (``locals()`` at its start: ``self`` left out, ``refresh`` the call's)."""
        arguments = {k: v for k, v in given.items() if k not in ("self", "refresh")}
        return self._frame(name, self._dated(name, arguments), given["refresh"])

    # -- metadata change history ------------------------------------------------------------------

    @user_facing
    @documented
    def changes_frame(
        self,
        apps: str | int | Sequence[str | int],
        *,
        start: str | date | None = None,
        end: str | date | None = None,
        days: int | None = None,
        country: str | None = None,
        countries: str | Sequence[str] | None = None,
        language: str | Mapping[str, str] | None = None,
        device: str | None = None,
        refresh: RefreshOption | None = None,
    ) -> pl.DataFrame:
        """What each app changed in its store listing, and when: one row per change, oldest first.

        ``start`` and ``end`` are days (``"2026-01-31"`` or a ``datetime.date``), both
        included; by default the 30 days up to yesterday (UTC), as the service has it.
        ``days=90`` is the 90 days up to yesterday (or up to ``end``), by the client's today
        (the sandbox's, when pinned); it does not go with ``start``. The
        history is cached day by day: a longer range later fetches only the days not held.
        A day is final once it is two days old; more recent days are fetched again after
        six hours. Other arguments as for :meth:`metadata_frame`.

        ``old_value`` and ``new_value`` are text whatever the target: text as it is,
        integers as digits, objects and arrays as compact JSON. Sizes and icon URLs also
        have typed columns, and :meth:`version_changes_frame`,
        :meth:`screenshot_changes_frame` and :meth:`privacy_changes_frame` unfold the
        nested values (from the same cached answers, at no cost). A target storeframes
        does not know (the service does not publish them all) is kept, and named in an
        :class:`~storeframes.UnknownFieldWarning`. ``version`` is null where the service
        ties no version to the change (``version_raw`` keeps what it sent).

        >>> sf.changes_frame(["3233849169"], start="2026-08-01", end="2026-10-31").group_by("target").len()  # doctest: +SKIP
        """
        return self._history("changes_frame", locals())

    @user_facing
    @documented
    def privacy_changes_frame(
        self,
        apps: str | int | Sequence[str | int],
        *,
        start: str | date | None = None,
        end: str | date | None = None,
        days: int | None = None,
        country: str | None = None,
        countries: str | Sequence[str] | None = None,
        language: str | Mapping[str, str] | None = None,
        device: str | None = None,
        refresh: RefreshOption | None = None,
    ) -> pl.DataFrame:
        """The data types of each privacy_info change (iphone/ipad privacy labels), section by section.

        One row per change, section (DATA_LINKED_TO_YOU, DATA_NOT_LINKED_TO_YOU,
        DATA_USED_TO_TRACK_YOU) and data type, with ``status`` added, removed or kept
        between the labels before and after. Arguments as for :meth:`changes_frame`; from
        the same cached answers.

        >>> sf.privacy_changes_frame("3233849169", start="2026-01-01").filter(pl.col("status") != "kept")  # doctest: +SKIP
        """
        return self._history("privacy_changes_frame", locals())

    @user_facing
    @documented
    def screenshot_changes_frame(
        self,
        apps: str | int | Sequence[str | int],
        *,
        start: str | date | None = None,
        end: str | date | None = None,
        days: int | None = None,
        country: str | None = None,
        countries: str | Sequence[str] | None = None,
        language: str | Mapping[str, str] | None = None,
        device: str | None = None,
        refresh: RefreshOption | None = None,
    ) -> pl.DataFrame:
        """The screenshots before and after each screenshots change, with what was added or removed.

        One row per screenshot on each ``side`` (old, new) of a change, at its
        ``position``; ``status`` is added, removed or kept by screenshot id. Android gives
        no ``filename``. Arguments as for :meth:`changes_frame`; from the same cached
        answers.

        >>> sf.screenshot_changes_frame("3233849169").filter(pl.col("status") == "added")  # doctest: +SKIP
        """
        return self._history("screenshot_changes_frame", locals())

    @user_facing
    @documented
    def version_changes_frame(
        self,
        apps: str | int | Sequence[str | int],
        *,
        start: str | date | None = None,
        end: str | date | None = None,
        days: int | None = None,
        country: str | None = None,
        countries: str | Sequence[str] | None = None,
        language: str | Mapping[str, str] | None = None,
        device: str | None = None,
        refresh: RefreshOption | None = None,
    ) -> pl.DataFrame:
        """Each new version of each app, with its release notes and those of the version before.

        Arguments as for :meth:`changes_frame`; from the same cached answers.

        >>> sf.version_changes_frame(["3233849169", "361252007"]).select("app_id", "date", "new_version")  # doctest: +SKIP
        """
        return self._history("version_changes_frame", locals())
