"""One step from the keywords worth working on to tracking them: ``[[track]]`` items appended to a spec, priced first.

:func:`kept_opportunities` scores the keywords of the search history a tracker's cache keeps for its places
(:func:`storeframes.analysis.keyword_opportunities`, no request, no credit); :func:`plan_addition` chooses the best
of them not tracked yet, writes their ``[[track]]`` items as TOML appended to the spec's text (every byte of
the file before them kept as it is: comments, order, spacing), reads the new text with the spec's own checks
and plans it (:class:`Addition`: the plan ``storeframes track plan`` would print after the change, and the
credits a day and a month against the budgets); :meth:`Addition.write` writes it, only when the plan fits.
:meth:`storeframes.Tracker.add` and ``storeframes track add`` are the ways in.

>>> toml_string('say "cheese"\\t')
'"say \\\\"cheese\\\\"\\\\u0009"'
"""

from __future__ import annotations

import calendar
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date, timedelta
from pathlib import Path

import polars as pl

from ..analysis import keyword_opportunities
from ..cache import Cache, require_cache
from ..catalog import texts
from ..client import Client, plan_requests
from ..errors import InvalidParameterError, NoCacheError, StoreframesError, plural, shown_when_half_built
from ..kept import scan, snapshots
from .due import canonical_calls
from .plan import TrackPlan, make_plan
from .spec import Item, SpecError, TrackerSpec, followed, parse_spec

__all__ = [
    "ADDABLE",
    "HISTORY_DAYS",
    "MONTH_DAYS",
    "Addition",
    "AdditionOverBudgetError",
    "HistoryNotKeptError",
    "kept_opportunities",
    "plan_addition",
    "toml_string",
]

ADDABLE = ("search", "search_history", "search_ads")
"""The endpoints keywords are added as: the live organic search (a snapshot a day, the default), the recorded
history, the search with ads."""
HISTORY_DAYS = 30
"""The days of kept search history the opportunities are scored on by default: the 30 days up to yesterday."""
MONTH_DAYS = 30
"""The days of "a month" in the figures of an addition (credits a day times 30)."""
_DEVICE = "iphone"  # the catalog's default device of the keyword endpoints
_PLAIN = re.compile(r"^[A-Za-z0-9._-]{1,200}$")  # an app id fit to be named in a comment of the spec


class HistoryNotKeptError(StoreframesError):
    """The tracker's cache keeps no search history of the places asked for, in the days asked for: there is
    nothing to score opportunities on (fetch the history first; scoring what is kept costs nothing)."""


class AdditionOverBudgetError(StoreframesError):
    """The spec with the keywords added would not fit its budgets: nothing was written."""


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string: quotes, backslashes and control characters escaped (a keyword is
    third-party text, written as text and never as TOML).

    >>> toml_string("photo editor"), toml_string("a\\x1bb")
    ('"photo editor"', '"a\\\\u001bb"')
    """
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _default_device(spec: TrackerSpec) -> str:
    return str(spec.defaults.get("device", _DEVICE))


def spec_places(spec: TrackerSpec, countries: Sequence[str] | None = None) -> list[tuple[str, str]]:
    """The (country, device) places whose history the opportunities are read from: ``countries`` on the spec's
    device, else those of the spec's keyword items (``search``, ``search_ads``, ``search_history``), else the
    spec's default country."""
    device = _default_device(spec)
    if countries is not None:
        return list(dict.fromkeys((c.strip().lower(), device) for c in countries))
    places = [
        (str(call["country"]).lower(), str(call.get("device") or _DEVICE))
        for item in spec.items
        if item.endpoint in ADDABLE
        for call in item.calls
    ]
    return list(dict.fromkeys(places)) or [(str(spec.defaults.get("country", "us")).lower(), device)]


def _said(places: Sequence[tuple[str, str]]) -> str:
    return ", ".join(f"{country} ({device})" for country, device in places)


def kept_history(
    cache: Cache, service: str, places: Sequence[tuple[str, str]], first: date, last: date
) -> pl.DataFrame:
    """The recorded search history the cache keeps of ``places`` from ``first`` to ``last`` (``search_history``'s
    rows, the newest answer of each day); :class:`HistoryNotKeptError` when it keeps none."""
    try:
        require_cache(cache, what="storeframes track add")
    except NoCacheError as exc:  # nothing kept is a missing history, said as one
        raise HistoryNotKeptError(f"no search history is kept: {exc}") from None
    kept = scan("search_history", cache, service=service).filter(pl.col("source") == "history")
    rows = kept.filter(pl.col("date").is_between(first, last), _of_places(places)).collect()
    if rows.height:
        return rows
    elsewhere = kept.select("country", "device", "date").unique().collect()
    where = f"in the cache at {cache.location}"
    if elsewhere.is_empty():
        said = f"no search history is kept {where} (service {service})"
    else:
        held = elsewhere.select(pl.concat_str("country", pl.lit(" ("), "device", pl.lit(")")).unique().sort())
        days = elsewhere["date"].sort()
        span = f"{days.first()!s}..{days.last()!s}"
        said = (
            f"no search history of {_said(places)} from {first} to {last} is kept {where}: it keeps "
            f"{', '.join(held.to_series())} of {span}"
        )
    raise HistoryNotKeptError(
        f"{said}. Keyword opportunities are scored on the search history the cache keeps, at no credit: fetch "
        "it first (sf.search_history_frame(keywords, country=..., start=..., end=...) with this cache, or a "
        '[[track]] endpoint = "search_history" item\'s runs)'
    )


def kept_opportunities(
    spec: TrackerSpec,
    cache: Cache,
    service: str,
    day: date,
    app: str,
    competitors: Sequence[str],
    *,
    places: int = 10,
    countries: Sequence[str] | None = None,
    days: int = HISTORY_DAYS,
) -> pl.DataFrame:
    """:func:`~storeframes.analysis.keyword_opportunities` of ``app`` against ``competitors`` on what ``cache``
    keeps of the spec's places (or ``countries``): the recorded search history of the ``days`` up to the day
    before ``day``, the with-ads snapshots of those days as ``ads`` and the competitors' changes as ``changes``
    (each when the cache keeps some); its ``top`` is ``places``; best score first. Bad input is refused before
    the cache is read, and an app or competitor the history never lists as a result is refused with the apps it
    does list; no history is :class:`HistoryNotKeptError`.

    >>> kept_opportunities(spec, cache, "appstore", date(2026, 11, 20), "6441354028", ["1234567890"])  # doctest: +SKIP
    """
    app = str(app).strip()
    wanted = list(dict.fromkeys(str(c).strip() for c in competitors if str(c).strip()))
    if not app:
        raise InvalidParameterError("app", app, "the id of the app whose opportunities to score", endpoint="track")
    if not wanted:
        raise InvalidParameterError(
            "competitors", list(competitors), "one competitor's app id or more", endpoint="track"
        )
    if app in wanted:
        raise InvalidParameterError("competitors", wanted, f"apps other than the app itself ({app})", endpoint="track")
    if isinstance(places, bool) or not isinstance(places, int) or places < 1:
        raise InvalidParameterError("places", places, "a whole number of top places >= 1, such as 10", endpoint="track")
    if isinstance(days, bool) or not isinstance(days, int) or days < 1:
        raise InvalidParameterError(
            "days", days, "a whole number of days of history >= 1, such as 30", endpoint="track"
        )
    where = spec_places(spec, countries)
    first, last = day - timedelta(days=days), day - timedelta(days=1)
    history = kept_history(cache, service, where, first, last)
    listed = set(history["app_id"].drop_nulls().unique())
    for name, ids in (("app", [app]), ("competitors", wanted)):
        unknown = [i for i in ids if i not in listed]
        if unknown:
            seen = history.filter(pl.col("rank") <= places)["app_id"].drop_nulls().unique().sort().head(5)
            raise InvalidParameterError(
                name,
                unknown if name == "competitors" else app,
                f"apps among the results of the search history kept of {_said(where)} from {first} to {last} "
                f"({len(listed):,} apps, {history['keyword'].n_unique():,} keywords; such as {', '.join(seen)})",
                endpoint="track",
            )
    ads = snapshots("search_ads", cache, start=first, end=day, service=service).filter(_of_places(where)).collect()
    changes = scan("changes", cache, service=service).filter(pl.col("app_id").is_in(wanted)).collect()
    return keyword_opportunities(
        history, app, wanted, top=places, ads=ads if ads.height else None, changes=changes if changes.height else None
    )


def _of_places(places: Sequence[tuple[str, str]]) -> pl.Expr:
    """Rows of ``places`` (country in any case, device)."""
    wanted = [f"{country}|{device}" for country, device in places]
    return pl.concat_str(pl.col("country").str.to_lowercase(), pl.lit("|"), pl.col("device")).is_in(wanted)


def _key(keyword: str) -> str:
    return " ".join(keyword.split()).lower()


def _tracked(spec: TrackerSpec, endpoint: str) -> set[tuple[str, str, str]]:
    """The (keyword, country, device) the spec's items of ``endpoint`` follow, keywords in lower case."""
    return {
        (_key(keyword), str(call["country"]).lower(), str(call.get("device") or _DEVICE))
        for item in spec.items
        if item.endpoint == endpoint
        for call in item.calls
        for keyword in followed([call], "keywords")
    }


def _candidates(keywords: pl.DataFrame | Sequence[str], spec: TrackerSpec, country: str | None) -> pl.DataFrame:
    """The keywords given as rows of keyword, country and device (and score, why when given), best first."""
    device = _default_device(spec)
    if isinstance(keywords, pl.DataFrame):
        missing = [c for c in ("keyword", "country") if c not in keywords.columns]
        if missing:
            raise InvalidParameterError(
                "keywords",
                f"a frame of columns {', '.join(keywords.columns)}",
                "keywords as texts, or a frame with keyword and country columns (keyword_opportunities' own)",
                endpoint="track",
            )
        if country is not None:
            raise InvalidParameterError(
                "country",
                country,
                "no country with a frame: its rows name their own (country= is for texts)",
                endpoint="track",
            )
        frame = keywords
        if "device" not in frame.columns:
            frame = frame.with_columns(device=pl.lit(device))
        if "score" in frame.columns:
            frame = frame.sort("score", descending=True, nulls_last=True, maintain_order=True)
    else:
        given = texts("keywords", keywords, endpoint="track")  # a text, comma-separated, or a list of texts
        where = (country or str(spec.defaults.get("country", "us"))).lower()
        frame = pl.DataFrame({"keyword": given}, schema={"keyword": pl.String}).with_columns(
            country=pl.lit(where), device=pl.lit(device)
        )
    frame = frame.with_columns(
        pl.col("keyword").cast(pl.String).str.strip_chars(),
        pl.col("country").cast(pl.String).str.to_lowercase().fill_null(str(spec.defaults.get("country", "us"))),
        pl.col("device").cast(pl.String).fill_null(device),
    ).filter(pl.col("keyword").is_not_null() & (pl.col("keyword") != ""))
    if frame.is_empty():
        raise InvalidParameterError("keywords", [], "one keyword or more", endpoint="track")
    return frame


def _name(taken: set[str], country: str, device: str, default_device: str) -> str:
    base = f"opportunities-{country}" + ("" if device == default_device else f"-{device}")
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    taken.add(name)
    return name


def _items_text(
    chosen: pl.DataFrame, spec: TrackerSpec, endpoint: str, day: date, note: str, newline: str
) -> tuple[str, list[str]]:
    """The ``[[track]]`` tables of the chosen keywords, one per place, as TOML; and their names."""
    taken = {item.name for item in spec.items}
    default_device = _default_device(spec)
    lines = ["", f"# {note} (storeframes track add, {day})"]
    names = []
    for (country, device), rows in chosen.group_by(["country", "device"], maintain_order=True):
        name = _name(taken, str(country), str(device), default_device)
        names.append(name)
        lines += ["[[track]]", f"name = {toml_string(name)}", f"endpoint = {toml_string(endpoint)}", "keywords = ["]
        lines += [f"    {toml_string(k)}," for k in rows["keyword"]]
        lines += ["]", f"country = {toml_string(str(country))}"]
        if device != default_device:
            lines.append(f"device = {toml_string(str(device))}")
        lines.append("")
    return newline.join(lines), names


def _one_day(client: Client, item: Item, day: date) -> int:
    """The estimated most credits of one day of ``item`` with nothing cached: today's snapshot of the
    present, yesterday of a history."""
    endpoint, calls = canonical_calls(item, day, day - timedelta(days=1))
    return plan_requests(client, endpoint, calls, refresh="always").estimate


@dataclass(frozen=True)
class Addition:
    """Keywords added to a tracker's spec as ``[[track]]`` items: what is added, the spec after the change,
    its plan and what it costs a day and a month against the budgets; written only by :meth:`write`."""

    spec: TrackerSpec
    """The spec after the change (read from :attr:`text` with the spec's own checks)."""
    chosen: pl.DataFrame
    """The keywords added, best first: keyword, country, device, and the opportunities' columns when given."""
    tracked: pl.DataFrame
    """The keywords left out as tracked already by an item of the same endpoint and place."""
    items: tuple[str, ...]
    """The names of the new items."""
    appended: str
    """The TOML appended to the spec's file."""
    original: bytes
    """The file's bytes before the change (the write checks they are still the file's)."""
    plan: TrackPlan
    """What ``storeframes track plan`` prints after the change, for the same day."""
    added_a_day: int
    """The estimated most credits of one day of the new items."""
    spec_a_day: int
    """The same of the whole spec after the change, an item every ``n`` days counted for 1/n."""
    days_left: int
    """The days left of the calendar month, the plan's day included."""
    written: bool = False
    reason: str = ""
    """Why nothing is added, when nothing is (the keywords tracked already, none scoring ``min_score``)."""

    @property
    def month_projected(self) -> int:
        """Credits spent this month, the next run's most, then a day of the spec for each other day left."""
        return self.plan.month_spent + self.plan.credits + self.spec_a_day * (self.days_left - 1)

    @property
    def over_budget(self) -> bool:
        """Whether the next run leaves an item out, or the month would go past the month budget at these estimates."""
        month = self.plan.budget_per_month
        return bool(self.plan.left_out) or (month is not None and self.month_projected > month)

    def summary(self) -> str:
        """A few lines for people: the keywords and why, the new items, the credits, then the plan."""
        path = self.spec.path.name if self.spec.path is not None else "the spec"
        if not self.items:
            lines = [f"{self.spec.name}: nothing to add to {path}: {self.reason}"]
            lines += self._tracked_lines()
            return "\n".join([*lines, "the plan (storeframes track plan):", self.plan.summary()])
        lines = [f"{self.spec.name}: {plural(self.chosen.height, 'keyword')} to add to {path}"]
        for row in self.chosen.iter_rows(named=True):
            score = f"{row['score']:6.2f}  " if row.get("score") is not None else ""
            why = f": {row['why']}" if row.get("why") else ""
            lines.append(f"  {score}{row['keyword']} ({row['country']}, {row['device']}){why}")
        lines += self._tracked_lines()
        month = self.plan.budget_per_month
        lines.append(
            f"new {'item' if len(self.items) == 1 else 'items'} {', '.join(self.items)}: at most "
            f"{plural(self.added_a_day, 'credit')} a day, about {MONTH_DAYS * self.added_a_day:,} a month "
            f"({MONTH_DAYS} days); the spec after it: about {self.spec_a_day:,} a day, "
            f"{MONTH_DAYS * self.spec_a_day:,} a month"
        )
        if month is None:
            lines.append("  no month budget (budget_per_month, or its workspace's)")
        else:
            verdict = "fits" if self.month_projected <= month else f"over by {self.month_projected - month:,}"
            lines.append(
                f"  this month: {self.plan.month_spent:,} spent, the next run at most {self.plan.credits:,}, then "
                f"about {self.spec_a_day:,} a day for the {plural(self.days_left - 1, 'day')} after: "
                f"{self.month_projected:,} of the month budget {month:,} ({verdict})"
            )
        lines.append("the plan after the change (storeframes track plan):")
        lines.append(self.plan.summary())
        return "\n".join(lines)

    def _tracked_lines(self) -> list[str]:
        if self.tracked.is_empty():
            return []
        shown = ", ".join(f"{k} ({c})" for k, c in self.tracked.select("keyword", "country").rows())
        return [f"  tracked already, not added again: {shown}"]

    def write(self) -> Addition:
        """Append the items to the spec's file (the rest of it kept byte for byte); the addition, written.

        Refused when the plan does not fit the budgets (:class:`AdditionOverBudgetError`), or when the file
        changed since it was read (:class:`~storeframes.track.spec.SpecError`); nothing is written then.
        """
        if self.written or not self.items:
            return self
        if self.over_budget:
            raise AdditionOverBudgetError(
                f"nothing written to {self.spec.path}: with the keywords added the spec does not fit its budgets "
                f"({self.why_over_budget}); add fewer keywords (a lower top) or raise the budget"
            )
        assert self.spec.path is not None
        target = self.spec.path.resolve()
        if target.read_bytes() != self.original:
            raise SpecError(
                "spec",
                str(self.spec.path),
                "a file unchanged since the keywords were chosen: read it again",
                endpoint="track",
            )
        data = self.original + self.appended.encode("utf-8")
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.chmod(temporary, target.stat().st_mode & 0o7777)
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return replace(self, written=True)

    @property
    def why_over_budget(self) -> str:
        """What goes past the budgets, in words (empty when the plan fits)."""
        said = []
        if self.plan.left_out:
            said.append(f"the next run leaves out {', '.join(self.plan.left_out)}")
        month = self.plan.budget_per_month
        if month is not None and self.month_projected > month:
            said.append(f"this month would reach {self.month_projected:,} of {month:,} credits")
        return "; ".join(said)

    @shown_when_half_built
    def __repr__(self) -> str:
        state = "written" if self.written else "not written"
        return f"Addition({self.spec.name!r}, {plural(self.chosen.height, 'keyword')}, {state})"


def plan_addition(
    spec: TrackerSpec,
    client: Client,
    day: date,
    keywords: pl.DataFrame | Sequence[str],
    *,
    top: int | None = None,
    min_score: float | None = None,
    endpoint: str = "search",
    country: str | None = None,
) -> Addition:
    """The :class:`Addition` of ``keywords`` to ``spec`` (a frame best first, such as keyword_opportunities', or
    texts in ``country``): the ``top`` best not tracked yet by an item of ``endpoint``, of a ``score`` of at
    least ``min_score``; planned on ``day`` with ``client``, nothing written.

    >>> plan_addition(spec, client, date(2026, 11, 20), ["photo editor"], country="gb").items  # doctest: +SKIP
    ('opportunities-gb',)
    """
    if spec.path is None:
        raise InvalidParameterError(
            "spec",
            spec.name,
            "a spec read from a file (Tracker.from_toml): keywords are added to its file",
            endpoint="track",
        )
    if endpoint not in ADDABLE:
        raise InvalidParameterError("endpoint", endpoint, f"one of {', '.join(ADDABLE)}", endpoint="track")
    if top is not None and (isinstance(top, bool) or not isinstance(top, int) or top < 1):
        raise InvalidParameterError("top", top, "a whole number of keywords to add >= 1, such as 20", endpoint="track")
    frame = _candidates(keywords, spec, country)
    if min_score is not None:
        if "score" not in frame.columns:
            raise InvalidParameterError(
                "min_score", min_score, "no min_score without scores (a frame with a score column)", endpoint="track"
            )
        if isinstance(min_score, bool) or not isinstance(min_score, int | float) or not 0 <= min_score <= 100:
            raise InvalidParameterError("min_score", min_score, "a score from 0 to 100", endpoint="track")
        frame = frame.filter(pl.col("score") >= min_score)
    frame = frame.with_columns(_key=pl.Series([_key(k) for k in frame["keyword"]], dtype=pl.String))
    frame = frame.unique(["_key", "country", "device"], keep="first", maintain_order=True)
    tracked = _tracked(spec, endpoint)
    is_tracked = pl.Series(
        [(k, c, d) in tracked for k, c, d in frame.select("_key", "country", "device").rows()], dtype=pl.Boolean
    )
    fresh = is_tracked.not_().cum_sum()  # the keywords not tracked yet up to each row, best first
    within = pl.repeat(True, frame.height, eager=True) if top is None else fresh.shift(1, fill_value=0) < top
    frame = frame.drop("_key")
    chosen = frame.filter(~is_tracked & within)
    already = frame.filter(is_tracked & within)  # the tracked keywords passed over on the way to the top
    if chosen.is_empty():
        scoring = "" if min_score is None else f" scoring {min_score} or more"
        if already.height:
            why = f"every keyword{scoring} is tracked already as {endpoint} in its place"
        else:
            why = f"no keyword{scoring}"
        return _nothing(spec, client, day, already, why)
    path = spec.path
    original = path.read_bytes()
    try:
        text = original.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(
            "spec", str(path), f"a TOML file in UTF-8 (byte {exc.start} is not)", endpoint="track"
        ) from None
    newline = "\r\n" if "\r\n" in text else "\n"
    note = _note(chosen, endpoint)
    appended, names = _items_text(chosen, spec, endpoint, day, note, newline)
    if text and not text.endswith("\n"):
        appended = newline + appended
    try:
        after = parse_spec(text + appended, path=path, workspace=spec.workspace)
    except SpecError as exc:
        raise SpecError(
            "keywords",
            chosen["keyword"].to_list(),
            f"keywords the spec's checks take as [[track]] items ({exc})",
            endpoint="track",
        ) from None
    return _priced(after, client, day, chosen, already, tuple(names), appended, original)


def _note(chosen: pl.DataFrame, endpoint: str) -> str:
    """The comment above the new items: where the keywords came from, in plain characters only."""
    if "app_id" in chosen.columns and "score" in chosen.columns:
        apps = [a for a in chosen["app_id"].unique(maintain_order=True) if isinstance(a, str) and _PLAIN.match(a)]
        whose = f" of app {', '.join(apps)}" if apps else ""
        return (
            f"{plural(chosen.height, 'keyword')} from the keyword opportunities{whose}, best score first, as {endpoint}"
        )
    return f"{plural(chosen.height, 'keyword')} added as {endpoint}"


def _priced(
    after: TrackerSpec,
    client: Client,
    day: date,
    chosen: pl.DataFrame,
    already: pl.DataFrame,
    names: tuple[str, ...],
    appended: str,
    original: bytes,
) -> Addition:
    plan = make_plan(after, client, day, after.items)
    a_day = {item.name: _one_day(client, item, day) for item in after.items}
    added = sum(a_day[name] for name in names)
    spec_day = round(sum(a_day[item.name] / item.every_days for item in after.items))
    left = calendar.monthrange(day.year, day.month)[1] - day.day + 1
    return Addition(after, chosen, already, names, appended, original, plan, added, spec_day, left)


def _nothing(spec: TrackerSpec, client: Client, day: date, already: pl.DataFrame, why: str) -> Addition:
    """An addition of nothing: the spec as it is, its plan, and why nothing is added."""
    assert spec.path is not None
    empty = already.clear()
    addition = _priced(spec, client, day, empty, already, (), "", spec.path.read_bytes())
    return replace(addition, reason=why)
