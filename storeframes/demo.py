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

from .client import Client
from .defaults import connect
from .ranks import rank_history

__all__ = ["DEMO_KEYWORDS", "DEMO_TODAY", "DemoResult", "run_demo"]

DEMO_TODAY = date(2026, 11, 20)
"""The sandbox's today in the demo and the example notebooks, so they show the same days on any date."""

DEMO_KEYWORDS = ("photo editor", "photo filters", "collage maker")
"""The keywords the demo tracks unless told others."""

_LIVE_APP = "389801252"  # an app that ranks for the demo keywords on the real store
_COMPETITORS = 4
_LIVE_BUDGET = 25_000
_WINDOW = 14  # days at each end of the range compared by "biggest movers"


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
    rivals = _competitors(history, app, keywords[0])
    apps = [app, *rivals]
    ranks = rank_history(history, apps)
    metadata = client.metadata_frame(apps, country=country, device=device)
    names = dict(zip(metadata["app_id"].to_list(), metadata["title"].to_list(), strict=True))
    changes = client.changes_frame(apps, start=start, end=end, country=country, device=device)
    result.tables.update(search_history=history, ranks=ranks, metadata=metadata, changes=changes)
    title = names.get(app, app)
    print(f"   following {title!r} ({app}) and the {len(rivals)} apps ranking best for {keywords[0]!r}")
    with _table_config():
        print(_standing(ranks, names).pipe(_indent))
        movers = _movers(ranks, changes, names, start, end)
        if movers.height:
            print(f"   Biggest movers (median rank, first vs last {_WINDOW} days) and what they changed meanwhile:")
            print(_indent(movers))

        print(
            f"\n2. Changes: {changes.height} metadata changes of these {len(apps)} apps (what: size changes left out)"
        )
        print(_indent(_change_counts(changes, names)))

        category = _category(metadata, app)
        kind = "paid" if (metadata.filter(pl.col("app_id") == app)["price_value"].fill_null(0) > 0).any() else "free"
        bench_start = end - timedelta(days=29)
        print(f"\n3. Conversion: {kind} {device} apps in {country}, {bench_start} to {end}, per channel")
        benchmarks = client.benchmarks_frame(
            countries=country, device=device, type=kind, channels="all,search,browse", start=bench_start, end=end
        )
        result.tables["benchmarks"] = benchmarks
        if category is not None:
            print(_indent(_standing_in_category(benchmarks, category)))
    _write(result, app, names, category)


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
    return pl.Config(tbl_rows=20, tbl_cols=-1, fmt_str_lengths=80, tbl_width_chars=170, tbl_hide_dataframe_shape=True)


def _indent(frame: pl.DataFrame) -> str:
    return "\n".join("   " + line for line in str(frame).splitlines())


def _app_names(names: dict[str, str]) -> pl.Expr:
    """An ``app`` column: each app's name, its id where the name is not known."""
    return pl.col("app_id").replace({k: v for k, v in names.items() if v}).alias("app")


def _label(names: dict[str, str], app_id: str) -> str:
    return names.get(app_id) or app_id


def _standing(ranks: pl.DataFrame, names: dict[str, str]) -> pl.DataFrame:
    """Per keyword and app: days ranked, median and best rank."""
    return (
        ranks.group_by("keyword", "app_id", maintain_order=True)
        .agg(
            (pl.col("status") == "ranked").sum().alias("days_ranked"),
            (pl.col("status") != "no_data").sum().alias("days_recorded"),
            pl.col("rank").median().alias("median_rank"),
            pl.col("rank").min().alias("best_rank"),
        )
        .with_columns(_app_names(names))
        .select("keyword", "app", "days_ranked", "days_recorded", "median_rank", "best_rank")
    )


def _movers(ranks: pl.DataFrame, changes: pl.DataFrame, names: dict[str, str], start: date, end: date) -> pl.DataFrame:
    """The keyword/app pairs whose median rank moved most between the first and last days."""
    early = start + timedelta(days=_WINDOW - 1)
    late = end - timedelta(days=_WINDOW - 1)
    ranked = ranks.filter(pl.col("status") == "ranked")
    before = (
        ranked.filter(pl.col("date") <= early)
        .group_by("keyword", "app_id")
        .agg(pl.col("rank").median().alias("before"))
    )
    after = (
        ranked.filter(pl.col("date") >= late).group_by("keyword", "app_id").agg(pl.col("rank").median().alias("after"))
    )
    made = (
        changes.filter(pl.col("date").is_between(early, late), pl.col("target") != "size")
        .group_by("app_id")
        .agg(pl.col("target").unique().sort().str.join(", ").alias("changes_meanwhile"))
    )
    return (
        before.join(after, on=["keyword", "app_id"])
        .with_columns((pl.col("before") - pl.col("after")).alias("places_gained"))
        .filter(pl.col("places_gained") != 0)
        .join(made, on="app_id", how="left")
        .with_columns(_app_names(names))
        .sort(pl.col("places_gained").abs(), "keyword", "app", descending=[True, False, False])
        .head(5)
        .select("keyword", "app", "before", "after", "places_gained", pl.col("changes_meanwhile").fill_null("-"))
    )


def _change_counts(changes: pl.DataFrame, names: dict[str, str]) -> pl.DataFrame:
    """Per app: how many changes, the newest version and what changed (most frequent first)."""
    counts = (
        changes.group_by("app_id", "target")
        .agg(pl.len().alias("n"))
        .sort("n", "target", descending=[True, False])
        .group_by("app_id", maintain_order=True)
        .agg(
            pl.col("n").sum().alias("changes"),
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
        .with_columns(_app_names(names))
        .sort("changes", "app", descending=[True, False])
        .select("app", "changes", "newest_version", "what")
    )


def _category(metadata: pl.DataFrame, app: str) -> str | None:
    rows = metadata.filter(pl.col("app_id") == app)
    codes = rows["categories"].to_list()[0] if rows.height else None
    return str(codes[0]) if codes else None


def _standing_in_category(benchmarks: pl.DataFrame, category: str) -> pl.DataFrame:
    """The category's page_views_to_installs per channel, its place and the median of all categories."""
    rate = "page_views_to_installs"
    return (
        benchmarks.with_columns(
            pl.col(rate).rank("ordinal", descending=True).over("channel").alias("place"),
            pl.col(rate).count().over("channel").alias("of"),
            pl.col(rate).median().over("channel").alias("median_of_all"),
        )
        .filter(pl.col("category") == category)
        .select("channel", "category_name", rate, "place", "of", "median_of_all")
    )


def _write(result: DemoResult, app: str, names: dict[str, str], category: str | None) -> None:
    for name, table in result.tables.items():
        path = result.out / f"{name}.parquet"
        table.write_parquet(path)
        result.files.append(path)
    try:
        from . import plots
    except ImportError:
        result.notes.append('charts skipped: matplotlib is missing (pip install "storeframes[notebook]")')
        return
    ranks, changes, benchmarks = (result.tables[k] for k in ("ranks", "changes", "benchmarks"))
    apps = ranks["app_id"].unique(maintain_order=True).to_list()
    charts = {
        "ranks.png": plots.rank_chart(
            ranks, apps, changes=changes, names=names, title=f"Keyword ranks of {_label(names, app)} and its rivals"
        ),
        "changes.png": plots.changes_timeline(changes, names=names) if changes.height else None,
        "benchmarks.png": plots.benchmark_chart(benchmarks, highlight=category)
        if benchmarks.height and category is not None and category in benchmarks["category"]
        else None,
    }
    for name, figure in charts.items():
        if figure is not None:
            path = result.out / name
            figure.savefig(path, dpi=100)
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
