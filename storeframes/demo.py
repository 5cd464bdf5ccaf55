"""``storeframes demo``: fetch a small set of frames from the sandbox and print them."""

from __future__ import annotations

import polars as pl

from .client import Client

__all__ = ["run_demo"]


def run_demo(*, seed: int = 0, client: Client | None = None) -> int:
    """Fetch metadata, a live search and benchmarks from the sandbox, print them and the ledger."""
    from .sandbox import World

    client = client or Client.sandbox(seed=seed)
    world: World = client.sandbox_service.world if client.sandbox_service else World(seed)
    print("storeframes demo: the sandbox, a deterministic fake of the service (no token, nothing billed)\n")
    with pl.Config(tbl_rows=12, fmt_str_lengths=40, tbl_width_chars=140, tbl_hide_dataframe_shape=True):
        apps = list(world.EXAMPLE_IOS_APPS)
        metadata = client.metadata_frame(apps, country="us", device="iphone")
        print(
            f"1. Metadata of {len(apps)} iphone apps: {client.requests_sent} requests "
            f"(at most 5 apps each), {client.spent} credits"
        )
        columns = ("app_id", "title", "developer_name", "price", "rating_average", "version", "screenshots_count")
        print(metadata.select(columns), end="\n\n")
        spent = client.spent
        versions = client.versions_frame(apps)
        cadence = (
            versions.group_by("app_id", maintain_order=True)
            .agg(
                pl.len().alias("versions_listed"),
                pl.col("release_date").max().dt.date().alias("latest_release"),
                pl.col("release_date").diff(null_behavior="ignore").abs().median().dt.total_days().alias("median_days"),
            )
            .join(metadata.select("app_id", "title"), on="app_id")
            .select("app_id", "title", "versions_listed", "latest_release", "median_days")
        )
        print(
            f"   Version cadence from the same answers ({client.spent - spent} more credits): "
            "median days between releases"
        )
        print(cadence, end="\n\n")

        keyword = world.EXAMPLE_KEYWORDS[0]
        spent = client.spent
        search = client.search_frame(keyword, country="us", device="iphone")
        print(f'2. Live search for "{keyword}": top 10 of {search.height} results, {client.spent - spent} credits')
        print(search.select("keyword", "date", "rank", "app_id").head(10), end="\n\n")

        spent = client.spent
        table = client.benchmarks_frame(countries="us", device="iphone", type="free", channels="search")
        print(
            f"3. Conversion benchmarks, us / iphone / free / search channel: {table.height} categories, "
            f"{client.spent - spent} credits. Rates are percent; null means too few apps; installs can exceed page views."
        )
        keys = ("country", "device", "type", "channel", "start_date", "end_date", "fetched_at")
        print(table.drop(keys).sort("page_views_to_installs", descending=True, nulls_last=True), end="\n\n")

        ledger = client.ledger
        hits = ledger.filter(pl.col("from_cache"))
        print(
            f"4. The ledger: {client.spent} credits in {client.requests_sent} requests; "
            f"{hits.height} answers reused from the cache saved {hits['saved'].sum()} credits"
        )
        print(ledger.select("time", "endpoint", "cost", "from_cache", "saved", "status", "params"))
    client.close()
    return 0
