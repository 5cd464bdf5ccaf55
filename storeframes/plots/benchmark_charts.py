"""The benchmark chart: categories ranked by a conversion rate, per channel or country, one highlighted."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, cast, overload

import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .._tracebacks import user_facing
from ..errors import InvalidParameterError
from ..ranks import polars_frame
from .common import _WIDTH, APP_COLORS, _figure, _need, _nothing, _short

RATE_LABELS: dict[str, str] = {
    "page_views_to_installs": "page views → installs (conversion rate, %)",
    "impressions_to_page_views": "impressions → page views (click-through rate, %)",
    "impressions_to_installs": "impressions → installs (%)",
}
"""Axis labels of the benchmark rates (the columns of :func:`~storeframes.benchmarks_frame`)."""

_HIGHLIGHT = "#ff7f0e"
_BAR = "#4c72b0"
_SERIES_COLUMNS = ("channel", "country", "device", "type")


@overload
def benchmark_chart(
    benchmarks: pl.DataFrame | Any,
    rate: str = "page_views_to_installs",
    highlight: str | None = None,
    *,
    by: str | None = None,
    order_by: str | None = None,
    top: int | None = None,
    ax: None = None,
    title: str | None = None,
) -> Figure: ...


@overload
def benchmark_chart(
    benchmarks: pl.DataFrame | Any,
    rate: str = "page_views_to_installs",
    highlight: str | None = None,
    *,
    by: str | None = None,
    order_by: str | None = None,
    top: int | None = None,
    ax: Axes,
    title: str | None = None,
) -> Axes: ...


@user_facing
def benchmark_chart(
    benchmarks: pl.DataFrame | Any,
    rate: str = "page_views_to_installs",
    highlight: str | None = None,
    *,
    by: str | None = None,
    order_by: str | None = None,
    top: int | None = None,
    ax: Axes | None = None,
    title: str | None = None,
) -> Figure | Axes:
    """Categories ranked by a conversion rate, per channel or country, one category highlighted.

    ``benchmarks`` is a :func:`~storeframes.benchmarks_frame`; ``rate`` one of its three
    rates (:data:`RATE_LABELS`). With one series the categories are bars, best first.
    With several (``by``: by default the column of channel, country, device or type that
    varies) each category is a row of dots, one colour per series, the rows ordered by
    one series, best first: ``order_by`` (a series such as ``"search"``), by default the
    first series of the frame with a value; categories without a value in it come last,
    and the chart says which series orders it.

    A category without a value is written "no data" where its bar or dot would be, never
    drawn as zero; a series missing from a row is named at its right end. When no category
    has a value at all the chart is one line saying so. ``highlight`` (a category code such
    as ``"6008"`` or its name) is drawn in orange with its place, "#N of M", in each series
    (the legend gives it with several). ``top`` keeps the best ``top`` categories (and the
    highlighted one). Names that two categories share (Music, Sports: an app category and a
    game category) carry their codes. A dashed line marks 100 % when a conversion rate
    passes it (installs can also come straight from search results, without a page view).

    Without ``ax`` the Figure is returned; with ``ax`` the chart is drawn there and the
    Axes is returned.

    >>> fig = benchmark_chart(sf.benchmarks_frame(countries="us", channels="all,search,browse"),
    ...                       highlight="Photo & Video")  # doctest: +SKIP
    """
    function = "benchmark_chart"
    what = "a benchmarks_frame"
    frame = polars_frame(benchmarks, "benchmarks", function, what)
    if rate not in RATE_LABELS:
        raise InvalidParameterError("rate", rate, f"one of {', '.join(RATE_LABELS)}", endpoint=function)
    _need(frame, ("category", "category_name", rate), "benchmarks", function, what)
    if frame.height == 0:
        why = "no category had data for the countries, devices and channels asked for"
        return _nothing(ax, f"No benchmarks: the frame has no rows ({why}).")
    varying = [c for c in _SERIES_COLUMNS if c in frame.columns and frame[c].n_unique() > 1]
    if by is not None and by not in frame.columns:
        raise InvalidParameterError(
            "by", by, f"a column of the frame such as {', '.join(_SERIES_COLUMNS)}", endpoint=function
        )
    if top is not None and (not isinstance(top, int) or isinstance(top, bool) or top < 1):
        raise InvalidParameterError("top", top, "a whole number of categories >= 1", endpoint=function)
    series_columns = [by] if by is not None else varying
    frame = frame.with_columns(
        pl.concat_str([pl.col(c).cast(pl.String) for c in series_columns], separator=" · ").alias("_series")
        if series_columns
        else pl.lit("").alias("_series"),
        pl.col(rate).cast(pl.Float64).fill_nan(None),
    )
    series = frame["_series"].unique(maintain_order=True).to_list()
    if order_by is not None and order_by not in series:
        allowed = (
            f"one of the chart's series: {', '.join(map(str, series))}" if len(series) > 1 else "None (one series)"
        )
        raise InvalidParameterError("order_by", order_by, allowed, endpoint=function)
    valued = set(frame.filter(pl.col(rate).is_not_null())["_series"].to_list())
    order = order_by if order_by is not None else next((s for s in series if s in valued), series[0])
    categories = (
        frame.group_by("category", maintain_order=True)
        .agg(
            pl.col("category_name").drop_nulls().first(),
            pl.col(rate).filter(pl.col("_series") == order).mean().alias("_value"),
            pl.col(rate).is_not_null().any().alias("_any"),
        )
        .with_columns(pl.col("category_name").fill_null(pl.col("category")))
        .sort("_value", "category_name", descending=[True, False], nulls_last=True)
        .with_row_index("_place", offset=1)
        .with_columns(pl.col("_value").count().alias("_ranked"))
    )
    chosen = _highlighted(categories, highlight, function)
    if frame[rate].null_count() == frame.height:
        return _nothing(ax, _no_rates_text(frame, rate, categories.height))
    places = _places(frame, categories, rate, series, chosen)  # before top= keeps the best
    shared = set(categories.filter(pl.col("category_name").is_duplicated())["category"].to_list())
    if top is not None:
        keep = pl.col("_place") <= top
        categories = categories.filter(keep | (pl.col("category") == chosen) if chosen is not None else keep)
        frame = frame.filter(pl.col("category").is_in(categories["category"].to_list()))
    count = categories.height
    figure, own = _figure(ax, _WIDTH, 1.8 + 0.27 * count)
    target_ax = own if own is not None else figure.subplots()
    position = {c: count - 1 - i for i, c in enumerate(categories["category"].to_list())}  # best at the top
    values = frame.select("category", "_series", rate)
    highest = cast("float | None", values[rate].max())  # a rate: a number, or None when all are null
    peak = float(highest) if highest is not None else 1.0
    if len(series) == 1:
        _bars(target_ax, categories, position, chosen, peak)
    else:
        _dots(target_ax, values, series, categories, rate, position, chosen, peak)
    names = [
        _short(str(name), 28) + (f" ({code})" if code in shared else "")
        for code, name in categories.select("category", "category_name").iter_rows()
    ]
    target_ax.set_yticks(list(range(count)), list(reversed(names)))
    for tick, category in zip(target_ax.get_yticklabels(), reversed(categories["category"].to_list()), strict=True):
        if category == chosen:
            tick.set_fontweight("bold")
            tick.set_color(_HIGHLIGHT)
    target_ax.set_ylim(-0.7, count - 0.3)
    target_ax.set_xlim(0, peak * (1.25 if chosen is not None or len(series) > 1 else 1.12) if peak > 0 else 1)
    target_ax.set_xlabel(RATE_LABELS[rate])
    target_ax.grid(True, axis="x", alpha=0.3)
    target_ax.set_axisbelow(True)
    if rate == "page_views_to_installs" and peak > 100:
        note = "100 %: installs can exceed page views"
        target_ax.axvline(100, color="#555555", linestyle="--", linewidth=1, label=note)  # with dots: in the legend
    if rate == "page_views_to_installs" and peak > 100 and len(series) == 1:
        target_ax.annotate(
            note,
            (100, 0.0),
            xycoords=("data", "axes fraction"),
            xytext=(4, 4),
            textcoords="offset points",
            fontsize=8,
            va="bottom",
            color="#555555",
        )
    context = [
        str(frame[c][0])
        for c in ("country", "device", "type", "channel")
        if c in frame.columns and c not in series_columns
    ]
    if "start_date" in frame.columns and frame["start_date"].n_unique() == 1:
        context.append(f"{_day_text(frame['start_date'][0])} to {_day_text(frame['end_date'][0])}")
    lines = [title or f"Conversion benchmarks: {RATE_LABELS[rate].split(' (')[0]}"]
    if context:
        lines.append(" · ".join(context))
    column = " · ".join(series_columns)
    placed = {name: f"#{p} of {n}" if p is not None else "no data" for name, (p, n) in places.items()}
    if len(series) > 1:
        lines.append(f"rows ordered by {column} {order}, best first; categories without a value for it last")
        if chosen is not None:  # the highlighted category's place in each series, also at the top
            chosen_name = categories.filter(pl.col("category") == chosen)["category_name"][0]
            lines.append(f"{chosen_name}: " + " · ".join(f"{name} {placed[name]}" for name in series))
    target_ax.set_title("\n".join(lines), loc="left", fontsize=11)
    if len(series) > 1:
        legend_title = column
        if chosen is not None:
            legend_title += f": place of {chosen_name}"
            for handle in target_ax.collections:
                handle.set_label(f"{handle.get_label()}: {placed[str(handle.get_label())]}")
        if own is not None:
            own.legend(title=legend_title, fontsize=8, title_fontsize=8, loc="best")
            return own
        handles, labels = target_ax.get_legend_handles_labels()
        figure.legend(
            handles, labels, title=legend_title, loc="outside lower center", ncols=min(len(handles), 4), frameon=False
        )
    return own if own is not None else figure


def _day_text(value: Any) -> str:
    """A day as YYYY-MM-DD, also from the datetime a pandas round trip makes of it."""
    return str(value.date() if isinstance(value, datetime) else value)


def _places(
    frame: pl.DataFrame, categories: pl.DataFrame, rate: str, series: Sequence[str], chosen: str | None
) -> dict[str, tuple[int | None, int]]:
    """The highlighted category's place in each series and the number of categories with a value there."""
    if chosen is None:
        return {}
    named = categories.select("category", "category_name")
    per = (
        frame.group_by("_series", "category")
        .agg(pl.col(rate).mean())
        .drop_nulls(rate)
        .join(named, on="category")
        .sort(rate, "category_name", descending=[True, False])
    )
    places: dict[str, tuple[int | None, int]] = {}
    for name in series:
        codes = per.filter(pl.col("_series") == name)["category"].to_list()
        places[name] = (codes.index(chosen) + 1 if chosen in codes else None, len(codes))
    return places


def _no_rates_text(frame: pl.DataFrame, rate: str, count: int) -> str:
    """What has no value and why: the rate, the place (device in country) and what else was asked."""

    def values(column: str) -> str:
        if column not in frame.columns:
            return ""
        return ", ".join(str(v) for v in frame[column].unique(maintain_order=True).to_list() if v is not None)

    where = " in ".join(v for v in (values("device"), values("country")) if v)
    extra = ", ".join(f"{c} {values(c)}" for c in ("type", "channel") if values(c))
    subject = f"{where} ({extra})" if where and extra else where or extra
    return f"No {rate} for {subject or 'this frame'}: the service gives no value for these {count} categories."


def _highlighted(categories: pl.DataFrame, highlight: str | None, function: str) -> str | None:
    if highlight is None:
        return None
    wanted = str(highlight).strip().casefold()
    pairs = categories.select("category", "category_name").iter_rows()
    found = [str(code) for code, name in pairs if wanted in (str(code).casefold(), str(name).casefold())]
    if len(found) > 1:  # a name two categories share (Music: the app and the game category)
        raise InvalidParameterError(
            "highlight",
            highlight,
            f"one category: the name is shared, give a code ({', '.join(found)})",
            endpoint=function,
        )
    if found:
        return found[0]
    known = ", ".join(f"{n} ({c})" for c, n in categories.select("category", "category_name").head(6).iter_rows())
    raise InvalidParameterError(
        "highlight", highlight, f"a category code or name of the frame, such as {known} ...", endpoint=function
    )


def _no_data(ax: Axes, y: float, peak: float) -> None:
    ax.text(peak * 0.005, y, "no data", va="center", ha="left", fontsize=8, style="italic", color="#777777")


def _bars(ax: Axes, categories: pl.DataFrame, position: Mapping[str, int], chosen: str | None, peak: float) -> None:
    ranked = int(categories["_ranked"][0])  # categories with a value, before top= kept the best
    for category, value, place in categories.select("category", "_value", "_place").iter_rows():
        y = position[category]
        if value is None:
            _no_data(ax, y, peak)
            continue
        highlighted = category == chosen
        ax.barh(y, value, height=0.7, color=_HIGHLIGHT if highlighted else _BAR)
        text = f"{value:.1f}" + (f"  (#{place} of {ranked})" if highlighted else "")
        ax.text(value + peak * 0.01, y, text, va="center", fontsize=8, fontweight="bold" if highlighted else "normal")


def _dots(
    ax: Axes,
    values: pl.DataFrame,
    series: Sequence[str],
    categories: pl.DataFrame,
    rate: str,
    position: Mapping[str, int],
    chosen: str | None,
    peak: float,
) -> None:
    if chosen is not None:
        ax.axhspan(position[chosen] - 0.45, position[chosen] + 0.45, color=_HIGHLIGHT, alpha=0.2, linewidth=0)
    for category, any_value in categories.select("category", "_any").iter_rows():
        y = position[category]
        if not any_value:
            _no_data(ax, y, peak)
            continue
        present = values.filter(pl.col("category") == category)[rate].drop_nulls()
        low, high = cast(float, present.min()), cast(float, present.max())  # numbers: the row has a value
        if present.len() > 1:
            ax.plot([low, high], [y, y], color="#bbbbbb", linewidth=1.5, zorder=1)
        lacking = values.filter(pl.col("category") == category, pl.col(rate).is_null())["_series"].to_list()
        if lacking:
            ax.text(
                float(high) + peak * 0.02,
                y,
                "no data: " + ", ".join(lacking),
                va="center",
                fontsize=8,
                style="italic",
                color="#777777",
            )
    for index, name in enumerate(series):
        rows = values.filter(pl.col("_series") == name, pl.col(rate).is_not_null())
        ax.scatter(
            rows[rate].to_list(),
            [position[c] for c in rows["category"].to_list()],
            color=APP_COLORS[index % len(APP_COLORS)],
            s=30,
            zorder=3,
            label=name,
        )
