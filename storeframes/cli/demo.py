"""``storeframes demo``: a rank-tracking, change and conversion analysis, written to a folder.

On the sandbox by default (no token, nothing billed, the same result every run); on the
real service with ``--live`` when ``$STOREFRAMES_API_KEY`` and ``$STOREFRAMES_BASE_URL``
are set. The tidy tables go to ``DIR/*.parquet``, the charts to ``DIR/*.png`` and the
answers to the cache folder ``DIR/cache``, so a second run spends no credit.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import polars as pl

from .._version import install_hint
from ..analysis import category_standing, changes_before, movers, with_names
from ..client import Client
from ..defaults import connect
from ..ranks import rank_history

__all__ = ["DEMO_KEYWORDS", "DEMO_TODAY", "DemoResult", "run_demo"]

DEMO_TODAY = date(2026, 11, 20)
"""The sandbox's today in the demo and the example notebooks, so they show the same days on any date."""

DEMO_KEYWORDS = ("photo editor", "photo filters", "collage maker")
"""The keywords the demo tracks unless told others."""

_LIVE_APP = "389801252"  # an app that ranks for the demo keywords on the real store
_COMPETITORS = 4
_LIVE_BUDGET = 25_000
_TOP = 5  # the biggest movers shown
_WITHIN = 10  # ... among the moves that start or end in the first places
_BEFORE = 30  # days before a move's last day whose changes are shown
_RATE = "page_views_to_installs"


@dataclass
class DemoResult:
    """What a demo run produced: its tables, the files written and the credits."""

    out: Path
    tables: dict[str, pl.DataFrame] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)
    spent: int = 0
    saved: int = 0
    requests: int = 0
    notes: list[str] = field(default_factory=list)


def run_demo(
    out: str | Path = "storeframes-demo",
    *,
    live: bool = False,
    app: str | None = None,
    keywords: tuple[str, ...] | list[str] | None = None,
    country: str = "us",
    days: int = 90,
    seed: int = 0,
    budget: int | None = None,
    client: Client | None = None,
) -> DemoResult:
    """Run the analysis, write its tables and charts into ``out``, print a summary.

    ``app`` is the app to follow (by default the sandbox's photo editor, or a well-known
    app with ``live=True``), its competitors are the apps ranking best for the first
    keyword. The range is the ``days`` days ending two days before today, days the cache
    keeps for good. ``client`` replaces the one built here (its cache is used as is).

    >>> result = run_demo("demo-output")  # doctest: +SKIP
    >>> sorted(result.tables)  # doctest: +SKIP
    ['benchmarks', 'changes', 'metadata', 'ranks', 'search_history']
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    result = DemoResult(out=out)
    own_client = client is None
    if client is None:
        client = connect(
            out / "cache",
            live=live,
            budget=budget if budget is not None else (_LIVE_BUDGET if live else None),
            sandbox_today=DEMO_TODAY,
            seed=seed,
            progress=False,
        )
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _analyse(client, result, live=live, app=app, keywords=keywords, country=country, days=days)
        result.notes = [*dict.fromkeys(str(w.message) for w in caught), *result.notes]
        _summary(client, result)
    finally:
        if own_client:
            client.close()
    return result


def _analyse(
    client: Client,
    result: DemoResult,
    *,
    live: bool,
    app: str | None,
    keywords: Any,
    country: str,
    days: int,
) -> None:
    service = getattr(client, "sandbox_service", None)
    world = service.world if service is not None else None
    app = app or (world.EXAMPLE_IOS_APPS[0] if world is not None else _LIVE_APP)
    keywords = list(keywords or DEMO_KEYWORDS)
    end = client.today() - timedelta(days=2)  # final days: never fetched again
    start = end - timedelta(days=days - 1)
    device = "iphone"
    plural = "s" if len(keywords) > 1 else ""
    print(f"\n1. Rank tracking: {len(keywords)} keyword{plural} on {country}/{device}, {start} to {end}")
    history = client.search_history_frame(keywords, start=start, end=end, country=country, device=device)
    recorded = set(history["keyword"].to_list())
    for keyword in keywords:
        if " ".join(keyword.split()) not in recorded:
            note = f"{keyword!r}: no day recorded from {start} to {end} (the service does not track it): no ranks"
            print(f"   Note: {note}")
    lead = next((k for k in keywords if " ".join(k.split()) in recorded), keywords[0])
    rivals = _competitors(history, app, lead)
    apps = [app, *rivals]
    ranks = rank_history(history, apps, keywords=keywords)
    metadata = client.metadata_frame(apps, country=country, device=device)
    changes = client.changes_frame(apps, start=start, end=end, country=country, device=device)
    result.tables.update(search_history=history, ranks=ranks, metadata=metadata, changes=changes)
    title = with_names(pl.DataFrame({"app_id": [app]}), metadata)["app_title"][0] or app
    print(f"   following {title!r} ({app}) and the {len(rivals)} apps ranking best for {lead!r}")
    with _table_config():
        print(_indent(with_names(_standing(ranks), metadata).drop("app_id")))
        moved = movers(ranks, top=_TOP, within=_WITHIN)
        if moved.height:
            window = min(_BEFORE, days - 1)  # the changes fetched cover the range only
            made = changes.filter(pl.col("target") != "size")
            _print_movers(changes_before(moved, made, days=window), metadata, window)
        else:
            print(f"   Biggest movers: none of these apps moved in the first {_WITHIN} places")
        print(
            f"\n2. Changes: {changes.height} metadata changes of these {len(apps)} apps"
            " (what: each target and how often, size changes left out)"
        )
        print(_indent(with_names(_change_counts(changes), metadata).drop("app_id")))

        category = _category(metadata, app)
        kind = "paid" if (metadata.filter(pl.col("app_id") == app)["price_value"].fill_null(0) > 0).any() else "free"
        bench_start = end - timedelta(days=29)
        print(f"\n3. Conversion: {kind} {device} apps in {country}, {bench_start} to {end}, per channel")
        benchmarks = client.benchmarks_frame(
            countries=country, device=device, type=kind, channels="all,search,browse", start=bench_start, end=end
        )
        result.tables["benchmarks"] = benchmarks
        if category is not None and category in benchmarks["category"]:
            standing = category_standing(benchmarks, category, rate=_RATE)
            print(
                f"   {standing['category_name'][0]}: its {_RATE} (percent), its place among the categories with"
                " a rate (1 = highest) and their median"
            )
            shown = standing.select("channel", "category_name", _RATE, "place", "out_of", "median")
            print(_indent(shown.with_columns(pl.col(_RATE, "median").round(1))))
    _write(result, title, metadata, category, start, end)


def _print_movers(before: pl.DataFrame, metadata: pl.DataFrame, window: int) -> None:
    """The biggest movers near the top, the days compared and what each changed before its last day."""
    columns = ["keyword", "app_title", "start_rank", "end_rank", "change", "move", "places_moved", "changes"]
    columns.append("what_changed")
    ends = before.select("start_date", "end_date", "window_start", "window_end").unique()
    if ends.height == 1:  # the same days for every keyword: said once, above the table
        first, last, since, until = ends.row(0)
        days, span = f" on {first} and on {last}", f"from {since} to {until}"
    else:
        columns[2:2] = ["start_date", "end_date"]
        days, span = " on the first and the last day with data", f"in the {window} days before end_date"
    print(f"   Biggest movers in the first {_WITHIN} places (at the start or at the end): rank{days};")
    print("   change = places moved up (negative: down); move = up, down, entered or left the results;")
    print(
        "   places_moved = the size of the move, biggest first (an entry or exit from one place below the last result);"
    )
    print(f"   changes and what_changed: what the app changed {span} (size changes left out)")
    shown = with_names(before, metadata).select(columns).with_columns(pl.col("what_changed").fill_null("-"))
    print(_indent(shown))


def _competitors(history: pl.DataFrame, app: str, keyword: str) -> list[str]:
    """The apps ranking best (by median rank) for ``keyword`` on most of its days."""
    rows = history.filter(pl.col("keyword") == keyword)
    days = rows["date"].n_unique()
    best = (
        rows.filter(pl.col("app_id") != app)
        .group_by("app_id")
        .agg(pl.col("rank").median().alias("median"), pl.col("date").n_unique().alias("days"))
        .filter(pl.col("days") >= days / 2)
        .sort("median", "app_id")
    )
    return best["app_id"].head(_COMPETITORS).to_list()


def _table_config() -> pl.Config:
    """Every row and column, texts whole: the demo's tables are read, not skimmed."""
    return pl.Config(
        tbl_rows=-1,
        tbl_cols=-1,
        fmt_str_lengths=1_000,
        tbl_width_chars=-1,
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
    )


def _indent(frame: pl.DataFrame) -> str:
    return "\n".join("   " + line for line in str(frame).splitlines())


def _standing(ranks: pl.DataFrame) -> pl.DataFrame:
    """Per keyword and app: days ranked of the days recorded, median and best rank."""
    return ranks.group_by("keyword", "app_id", maintain_order=True).agg(
        (pl.col("status") == "ranked").sum().cast(pl.Int64).alias("days_ranked"),
        (pl.col("status") != "no_data").sum().cast(pl.Int64).alias("days_recorded"),
        pl.col("rank").median().alias("median_rank"),
        pl.col("rank").min().alias("best_rank"),
    )


def _change_counts(changes: pl.DataFrame) -> pl.DataFrame:
    """Per app: how many changes, the newest version and what changed (most frequent first)."""
    counts = (
        changes.group_by("app_id", "target")
        .agg(pl.len().alias("n"))
        .sort("n", "target", descending=[True, False])
        .group_by("app_id", maintain_order=True)
        .agg(
            pl.col("n").sum().cast(pl.Int64).alias("changes"),
            pl.format("{} x{}", "target", "n").filter(pl.col("target") != "size").str.join(", ").alias("what"),
        )
    )
    versions = (
        changes.filter(pl.col("target") == "version")
        .group_by("app_id")
        .agg(pl.col("new_value").sort_by("date").last().alias("newest_version"))
    )
    return (
        counts.join(versions, on="app_id", how="left")
        .sort("changes", "app_id", descending=[True, False])
        .select("app_id", "changes", "newest_version", "what")
    )


def _category(metadata: pl.DataFrame, app: str) -> str | None:
    rows = metadata.filter(pl.col("app_id") == app)
    codes = rows["categories"].to_list()[0] if rows.height else None
    return str(codes[0]) if codes else None


def _write(result: DemoResult, title: str, names: pl.DataFrame, category: str | None, start: date, end: date) -> None:
    for name, table in result.tables.items():
        path = result.out / f"{name}.parquet"
        table.write_parquet(path)
        result.files.append(path)
    try:
        from .. import plots
    except ImportError:
        result.notes.append(f"charts skipped: matplotlib is missing ({install_hint('notebook')})")
        return
    ranks, changes, benchmarks = (result.tables[k] for k in ("ranks", "changes", "benchmarks"))
    apps = ranks["app_id"].unique(maintain_order=True).to_list()
    charts = {
        "ranks.png": plots.rank_chart(
            ranks, apps, changes=changes, names=names, title=f"Keyword ranks of {title} and its rivals"
        ),
        "changes.png": plots.changes_timeline(changes, names=names, start=start, end=end),
        "benchmarks.png": plots.benchmark_chart(benchmarks, highlight=category)
        if benchmarks.height and category is not None and category in benchmarks["category"]
        else None,
    }
    for name, figure in charts.items():
        if figure is not None:
            path = result.out / name
            figure.savefig(path, dpi=100, bbox_inches="tight")  # titles and legends whole
            result.files.append(path)


def _summary(client: Client, result: DemoResult) -> None:
    ledger = client.ledger
    fetched = (
        ledger.group_by("endpoint", maintain_order=True)
        .agg(
            (~pl.col("from_cache")).sum().alias("requests_sent"),
            pl.col("from_cache").sum().alias("from_cache"),
            pl.col("cost").sum().alias("credits_spent"),
            pl.col("saved").sum().alias("credits_saved"),
        )
        .sort("endpoint")
    )
    result.spent, result.saved, result.requests = client.spent, client.saved, client.requests_sent
    rows = pl.DataFrame(
        {"table": list(result.tables), "rows": [t.height for t in result.tables.values()]},
        schema={"table": pl.String, "rows": pl.Int64},
    )
    print(
        f"\nSummary: {result.requests} requests sent, {result.spent:,} credits spent, {result.saved:,} saved by the cache"
    )
    with _table_config():
        print(_indent(fetched))
        print(_indent(rows))
    if result.spent == 0:
        print("   Everything came from the cache: run it again, it stays free.")
    print(f"   Written to {result.out}/: " + ", ".join(p.name for p in result.files))
    for note in result.notes:
        print(f"   Note: {note}")
