"""The tracker's digest: the HTML page and its Markdown twin, their sections, charts, escaping and files."""

from __future__ import annotations

import html
import re
from datetime import UTC, date, datetime, timedelta
from urllib.parse import unquote

import polars as pl
import pytest

from storeframes.cache import EVENT_SCHEMA
from storeframes.errors import InvalidParameterError
from storeframes.schemas import RANK_HISTORY
from storeframes.track.digest import MAX_CHARTS, Digest, Spend, render_digest

RULES = ("rank_drop", "top", "listing_change", "new_advertiser", "budget", "unknown_field")
HEADINGS = (
    "Rank drops",
    "Top N entries and exits",
    "Listing changes",
    "New advertisers",
    "Budget",
    "Unknown fields from the service",
)

START, END = date(2026, 11, 1), date(2026, 11, 8)
FIRST_DAY = date(2026, 10, 20)  # ranks start 12 days before the period: 20 days in all
A, B, C = "6441354028", "389801252", "1500000001"
PLACE = {"country": "us", "language": "en", "device": "iphone"}
SPEND = Spend(
    month="2026-11", month_credits=120_000, budget_per_month=300_000, run_credits=4_200, runs=6, runs_not_ok=1
)


def _event(rule: str, day: date, detail: str, **values: object) -> dict[str, object]:
    row: dict[str, object] = dict.fromkeys(EVENT_SCHEMA.names())
    seen = datetime(day.year, day.month, day.day, 6, tzinfo=UTC)
    row.update(event_id=f"{rule}-{day}-{detail[:12]}", tracker="photo-editors", alert=rule, rule=rule, day=day)
    row.update(detail=detail, first_seen=seen, notified_at=seen, notified_to=["ops"], **values)
    return row


def events_frame(rows: list[dict[str, object]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=EVENT_SCHEMA)


def _all_rules() -> list[dict[str, object]]:
    return [
        _event("rank_drop", date(2026, 11, 5), f"{A} fell from 3 to 12 for 'photo editor' (us, iphone)",
               app_id=A, keyword="photo editor", before="3", after="12", since=date(2026, 11, 3), **PLACE),
        _event("rank_drop", date(2026, 11, 6), f"{A} fell from 5 to not ranked for 'collage maker' (us, iphone)",
               app_id=A, keyword="collage maker", before="5", after=None, **PLACE),
        _event("top", date(2026, 11, 7), f"{B} entered the top 10 for 'photo editor' at 8 (us, iphone)",
               app_id=B, keyword="photo editor", before=None, after="8", **PLACE),
        _event("listing_change", date(2026, 11, 4), f"{A} changed its icon from https://x/a.png to https://x/b.png",
               app_id=A, target="icon", before="https://x/a.png", after="https://x/b.png", **PLACE),
        _event("listing_change", date(2026, 11, 2), f"{A} changed its title", app_id=A, target="title",
               before="Photo Pro", after="Photo Pro: AI editor", **PLACE),
        _event("new_advertiser", date(2026, 11, 3), f"{C} bids on 'photo editor' (us, iphone)", app_id=C,
               keyword="photo editor", after="0.12", **PLACE),
        _event("budget", date(2026, 11, 8), "79% of the month's budget spent (the alert is at 75%)",
               before="0.61", after="0.79"),
        _event("unknown_field", date(2026, 11, 8), "the service sent an unknown field 'promo|video' in metadata",
               target="promo|video", after="{'a': 1}"),
        _event("rank_drop", date(2026, 10, 30), "before the period: not shown", app_id=B, keyword="collage maker",
               before="1", after="9", **PLACE),
    ]  # fmt: skip


def ranks_frame() -> pl.DataFrame:
    """Two keywords and two apps over 20 days: a keyword's no-data days hit both apps, B misses some days."""
    rows = []
    for keyword in ("photo editor", "collage maker"):
        for app, base in ((A, 3), (B, 14)):
            for offset in range(20):
                day = FIRST_DAY + timedelta(days=offset)
                if offset in (4, 5, 13):
                    rank, status, results = None, "no_data", None
                elif app == B and offset in (8, 9, 16):
                    rank, status, results = None, "not_ranked", 50
                else:
                    rank, status, results = base + (offset % 4) + (9 if offset >= 16 else 0), "ranked", 50
                rows.append({"keyword": keyword, "app_id": app, "date": day, "rank": rank, "status": status,
                             "results": results, **PLACE})  # fmt: skip
    return pl.DataFrame(rows, schema=RANK_HISTORY.schema)


@pytest.fixture(scope="module")
def digest() -> Digest:
    names = {A: "Photo Pro", B: "Snap <script>alert(1)</script>"}
    return render_digest(
        events_frame(_all_rules()), ranks_frame(), tracker="photo-editors", start=START, end=END, spend=SPEND,
        app_names=names,
    )  # fmt: skip


def _md_text(text: str) -> str:
    return re.sub(r"([\\`*\[\]<>|])", r"\\\1", text)


def test_no_http_anywhere_even_when_events_hold_urls(digest):
    assert "http" not in digest.html.lower() and "http" not in digest.markdown.lower()
    for text in (digest.html, digest.markdown):
        assert "x/a.png" in text and "x/b.png" in text


def test_a_word_holding_http_is_shown_but_not_spelled_in_the_html():
    rows = [_event("new_advertiser", START, "HttpKit bids on 'http client'", app_id=C, keyword="http client")]
    out = render_digest(events_frame(rows), pl.DataFrame(), tracker="t", start=START, end=END, spend=SPEND)
    assert "http" not in out.html.lower()
    assert html.unescape(out.html).count("HttpKit bids on 'http client'") == 1
    assert "HttpKit bids on 'http client'" in out.markdown  # no scheme: the Markdown keeps it as it is


def test_every_event_of_the_period_is_in_both_and_the_earlier_one_in_neither(digest):
    for row in _all_rules()[:-1]:
        detail = str(row["detail"]).replace("https://", "")
        assert html.escape(detail) in digest.html
        assert _md_text(detail) in digest.markdown
    assert "promo\\|video" in digest.markdown  # a pipe would end the Markdown table's cell
    assert "before the period" not in digest.html and "before the period" not in digest.markdown
    assert digest.html.count("<tr>") == 8 + 6  # 8 events, a header row per group


def test_groups_come_in_the_rules_order_with_their_counts(digest):
    places = [digest.html.index(f"<h2>{html.escape(h)} ") for h in HEADINGS]
    assert places == sorted(places)
    md_places = [digest.markdown.index(f"## {h} (") for h in HEADINGS]
    assert md_places == sorted(md_places)
    assert '<h2>Rank drops <span class="count">(2 events)</span></h2>' in digest.html
    assert "## Listing changes (2 events)" in digest.markdown
    assert digest.html.index("<h2>Rank charts</h2>") > places[-1]


def test_a_rule_with_no_event_has_no_group():
    rows = [r for r in _all_rules() if r["rule"] not in ("budget", "top")]
    out = render_digest(events_frame(rows), ranks_frame(), tracker="t", start=START, end=END, spend=SPEND)
    assert "<h2>Budget" not in out.html and "## Budget" not in out.markdown
    assert "<h2>Top N" not in out.html and "## Top N" not in out.markdown
    assert "<h2>Rank drops" in out.html and "## Unknown fields from the service" in out.markdown


def test_a_chart_per_app_keyword_and_place_with_rank_events(digest):
    # (A, photo editor), (A, collage maker), (B, photo editor); B's collage maker drop is before the period
    assert list(digest.images) == ["rank-1.png", "rank-2.png", "rank-3.png"]
    assert digest.html.count("<img ") == 3 == digest.html.count('src="data:image/png;base64,')
    assert all(png.startswith(b"\x89PNG\r\n\x1a\n") for png in digest.images.values())
    links = re.findall(r"^!\[(.*)\]\((.*)\)$", digest.markdown, flags=re.MULTILINE)
    assert [link for _, link in links] == ["rank-1.png", "rank-2.png", "rank-3.png"]
    assert links[0][0] == (  # the earliest event first; its alt text says what the chart shows
        f"Rank of Photo Pro ({A}) for 'photo editor' (us, en, iphone) from 2026-10-20 to 2026-11-08: 3 → 15, "
        "best 3, worst 15; rank drop on 2026-11-05; listing changes: title on 2026-11-02, icon on 2026-11-04"
    )


def test_the_chart_draws_gaps_not_ranked_days_events_and_listing_changes():
    from matplotlib.figure import Figure

    from storeframes.track.digest_charts import _draw

    ranks = ranks_frame().filter((pl.col("app_id") == B) & (pl.col("keyword") == "photo editor"))
    events = events_frame(_all_rules())
    marks = events.filter(pl.col("rule") == "top")
    changes = events.filter((pl.col("rule") == "listing_change") & (pl.col("app_id") == B))
    ax = Figure().add_subplot()
    _draw(ax, ranks, marks, changes, (FIRST_DAY, END))
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["rank", "no data recorded", "not ranked", "top N"]
    assert len(ax.patches) == 2  # the no-data days 4-5 and 13: two bands
    bottom, top = ax.get_ylim()
    assert top < 1 < bottom  # inverted: rank 1 at the top
    ranked = ranks.filter(pl.col("status") == "ranked")["rank"]
    assert bottom > ranked.max()  # the not-ranked line sits under the worst rank

    changes = events.filter((pl.col("rule") == "listing_change") & (pl.col("app_id") == A))
    ax = Figure().add_subplot()
    _draw(ax, ranks.with_columns(app_id=pl.lit(A)), marks.head(0), changes, (FIRST_DAY, END))
    assert [t.get_text() for t in ax.texts] == ["title", "icon"]
    assert "listing change" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_at_most_twelve_charts_and_a_line_says_how_many_were_left_out():
    rows = [
        _event("rank_drop", START, f"drop {i}", app_id=str(1000 + i), keyword="photo editor", before="1", after="5",
               **PLACE)
        for i in range(MAX_CHARTS + 2)
    ]  # fmt: skip
    out = render_digest(events_frame(rows), ranks_frame(), tracker="t", start=START, end=END, spend=SPEND)
    assert len(out.images) == MAX_CHARTS == out.html.count("<img ")
    assert "2 more charts left out (at most 12)." in out.html and "2 more charts left out" in out.markdown


def test_app_names_are_escaped(digest):
    assert "<script>" not in digest.html
    assert "Snap &lt;script&gt;alert(1)&lt;/script&gt;" in digest.html
    assert "Snap \\<script\\>alert(1)\\</script\\>" in digest.markdown
    assert f'Photo Pro <span class="id">{A}</span>' in digest.html and f"Photo Pro ({A})" in digest.markdown


def test_write_makes_the_page_the_markdown_and_its_images(digest, tmp_path):
    written = digest.write(tmp_path / "out" / "nov digest")
    page, markdown = tmp_path / "out" / "nov digest.html", tmp_path / "out" / "nov digest.md"
    folder = tmp_path / "out" / "nov digest_files"
    assert written == [page, markdown, folder / "rank-1.png", folder / "rank-2.png", folder / "rank-3.png"]
    assert page.read_text() == digest.html
    assert (folder / "rank-2.png").read_bytes() == digest.images["rank-2.png"]
    links = re.findall(r"^!\[.*\]\((.*)\)$", markdown.read_text(), flags=re.MULTILINE)
    assert links == [f"nov%20digest_files/rank-{i}.png" for i in (1, 2, 3)]
    assert all((markdown.parent / unquote(link)).is_file() for link in links)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "nov digest.html",
        "nov digest.md",
        "nov digest_files",
    ]
    assert sorted(p.name for p in folder.iterdir()) == ["rank-1.png", "rank-2.png", "rank-3.png"]  # no temporary left
    (tmp_path / "usual").write_text("")
    assert page.stat().st_mode == (tmp_path / "usual").stat().st_mode  # the permissions of any new file
    assert digest.write(tmp_path / "again.html")[0] == tmp_path / "again.html"  # .html not added twice


def test_no_events_says_so():
    late = [r for r in _all_rules() if r["day"] < START]
    for events in (pl.DataFrame(), events_frame([]), events_frame(late)):
        out = render_digest(events, ranks_frame(), tracker="t", start=START, end=END, spend=SPEND)
        assert "No events in this period." in out.html and "No events in this period." in out.markdown
        assert out.images == {} and "<img" not in out.html and "<h2>" not in out.html


def test_the_spend_line_shows_the_run_the_month_beside_its_budget_and_the_runs(digest):
    assert "120,000 of 300,000 credits (40%)" in digest.html and "120,000 of 300,000 credits (40%)" in digest.markdown
    assert '<span class="bar"><span style="width:40.0%"></span></span>' in digest.html
    assert "`████░░░░░░`" in digest.markdown
    assert "<b>This run:</b> 4,200 credits" in digest.html and "**Runs:** 6 finished, 1 not ok" in digest.markdown
    over = Spend(month="2026-11", month_credits=330_000, budget_per_month=300_000)
    out = render_digest(pl.DataFrame(), pl.DataFrame(), tracker="t", start=START, end=START, spend=over)
    assert '<span class="bar over"><span style="width:100.0%"></span></span>' in out.html
    assert "330,000 of 300,000 credits (110%)" in out.markdown
    assert "This run" not in out.markdown and "Runs" not in out.markdown


def test_a_day_digest_says_every_run_s_credits_and_counts_finished_runs_apart_from_running_ones():
    day = Spend(
        month="2026-11", month_credits=9_000, budget_per_month=None, runs=2, period_credits=1_628, runs_running=1
    )
    out = render_digest(pl.DataFrame(), pl.DataFrame(), tracker="t", start=START, end=START, spend=day)
    assert "**Spent on 2026-11-01:** 1,628 credits (every run)" in out.markdown
    assert "**Runs:** 2 finished, 0 not ok, 1 still running or killed" in out.markdown
    assert "<b>Spent on 2026-11-01:</b> 1,628 credits (every run)" in out.html and "This run" not in out.html
    period = render_digest(pl.DataFrame(), pl.DataFrame(), tracker="t", start=START, end=END, spend=day)
    assert "**Spent from 2026-11-01 to 2026-11-08:** 1,628 credits" in period.markdown


def test_days_not_fetched_are_said_apart_from_days_without_data():
    holes = {
        "'photo editor' (us)": [
            date(2026, 11, 2),
            date(2026, 11, 3),
            date(2026, 11, 4),
            date(2026, 11, 7),
            date(2026, 12, 1),
        ]
    }
    out = render_digest(
        pl.DataFrame(), pl.DataFrame(), tracker="t", start=START, end=END, spend=SPEND, not_fetched=holes
    )
    line = "'photo editor' (us): 2026-11-02 to 2026-11-04, 2026-11-07 (4 days)"  # the day out of the period left out
    assert f"- {line}" in out.markdown and f"<li>{html.escape(line)}</li>" in out.html
    assert "**Not fetched:** nothing is known of these days" in out.markdown
    assert "they are not days without data" in out.html
    quiet = render_digest(
        pl.DataFrame(),
        pl.DataFrame(),
        tracker="t",
        start=START,
        end=END,
        spend=SPEND,
        not_fetched={"'maps' (us)": [date(2026, 12, 1)]},
    )
    assert "Not fetched" not in quiet.markdown and "Not fetched" not in quiet.html


def test_the_chart_hatches_days_not_fetched_apart_from_days_without_data():
    from matplotlib.figure import Figure

    from storeframes.track.digest_charts import _draw

    ranks = ranks_frame().filter((pl.col("app_id") == A) & (pl.col("keyword") == "photo editor"))
    skipped = [FIRST_DAY + timedelta(days=n) for n in (9, 10, 11)]
    ranks = ranks.with_columns(
        status=pl.when(pl.col("date").is_in(skipped)).then(pl.lit("not_fetched")).otherwise("status"),
        rank=pl.when(pl.col("date").is_in(skipped)).then(None).otherwise("rank"),
    )
    ax = Figure().add_subplot()
    _draw(
        ax,
        ranks,
        ranks.head(0).select(day="date", rule="status", after="status"),
        ranks.head(0).select(day="date", target="status"),
        (FIRST_DAY, END),
    )
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["rank", "no data recorded", "not fetched"]
    bands = [(p.get_hatch(), round(p.get_x() + p.get_width() / 2 - p.get_x(), 1)) for p in ax.patches]
    assert [hatch for hatch, _ in bands] == [None, None, "///"]  # two grey bands of no data, one hatched of 3 days
    assert bands[-1][1] == 1.5


def test_the_title_names_the_tracker_and_the_days():
    out = render_digest(pl.DataFrame(), pl.DataFrame(), tracker="p&q", start=START, end=START, spend=SPEND)
    assert "<h1>p&amp;q on 2026-11-01</h1>" in out.html and out.markdown.startswith("# p&q on 2026-11-01\n")
    assert (
        "<h1>photo-editors: 2026-11-01 to 2026-11-08</h1>"
        in render_digest(
            pl.DataFrame(), pl.DataFrame(), tracker="photo-editors", start=START, end=END, spend=SPEND
        ).html
    )


def test_the_same_input_gives_the_same_output(digest):
    again = render_digest(
        events_frame(_all_rules()[::-1]), ranks_frame().reverse(), tracker="photo-editors", start=START, end=END,
        spend=SPEND, app_names={A: "Photo Pro", B: "Snap <script>alert(1)</script>"},
    )  # fmt: skip
    assert again.html == digest.html and again.markdown == digest.markdown and again.images == digest.images


@pytest.mark.parametrize(
    ("change", "parameter"),
    [
        ({"end": date(2026, 10, 1)}, "end"),
        ({"start": "2026-11-01"}, "start"),
        ({"tracker": ""}, "tracker"),
        ({"spend": 12}, "spend"),
        ({"events": pl.DataFrame({"rule": ["top"]})}, "events"),
        ({"events": [1, 2]}, "events"),
        ({"ranks": pl.DataFrame({"app_id": ["1"]})}, "ranks"),
        ({"app_names": ["Photo Pro"]}, "app_names"),
        ({"currencies": ["usd"]}, "currencies"),
    ],
)
def test_bad_input_is_refused_naming_the_parameter(change, parameter):
    arguments = {"events": pl.DataFrame(), "ranks": pl.DataFrame(), "tracker": "t", "start": START, "end": END}
    arguments |= {"spend": SPEND, **change}
    with pytest.raises(InvalidParameterError) as caught:
        render_digest(**arguments)
    assert caught.value.parameter == parameter and "render_digest" in str(caught.value)


def test_an_event_on_a_day_without_a_rank_sits_at_the_rank_it_says_or_on_the_not_ranked_line():
    from matplotlib.figure import Figure

    from storeframes.track.digest_charts import _draw

    ranks = ranks_frame().filter((pl.col("app_id") == A) & (pl.col("keyword") == "photo editor"))
    no_data = [FIRST_DAY + timedelta(days=4), FIRST_DAY + timedelta(days=5)]  # no data on both days
    marks = events_frame([
        _event("rank_drop", no_data[0], "to 40", app_id=A, keyword="photo editor", before="3", after="40", **PLACE),
        _event("rank_drop", no_data[1], "gone", app_id=A, keyword="photo editor", before="3", after=None, **PLACE),
    ])  # fmt: skip
    ax = Figure().add_subplot()
    _draw(ax, ranks, marks, marks.head(0), (FIRST_DAY, END))
    (drops,) = [line for line in ax.lines if line.get_marker() == "v"]
    said, bottom = drops.get_ydata()
    assert said == 40 and bottom > 40  # the worst rank drawn is the one the event says
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[-1] == "not\nranked" and ax.get_yticks()[-1] == bottom


def test_listing_changes_say_what_changed_and_other_values_are_shown_short():
    shots = '["https://cdn.example/a/1.png", "https://cdn.example/a/2.png", "https://cdn.example/a/3.png"]'
    later = '["https://cdn.example/a/1.png", "https://cdn.example/a/3.png", "https://cdn.example/a/4.png"]'
    long = " ".join(f"word{n}" for n in range(40))
    rows = [
        _event("listing_change", START, "screens", app_id=A, target="screenshots", before=shots, after=later, **PLACE),
        _event("listing_change", START, "price", app_id=A, target="price", before="2.99", after="", **PLACE),
        _event("unknown_field", START, "odd", target="x", after=long),
    ]
    out = render_digest(
        events_frame(rows), pl.DataFrame(), tracker="t", start=START, end=END, spend=SPEND, currencies={"US": "USD"}
    )
    said = "1 added, 1 removed (3 → 3 images): +4.png, -2.png"
    assert f'<span class="target">screenshots</span>: {said}</td>' in out.html
    assert f"**screenshots**: {said} |" in out.markdown
    assert '<span class="target">price</span>: $2.99 → Free</td>' in out.html
    assert "**price**: $2.99 → Free |" in out.markdown
    cut = " ".join(f"word{n}" for n in range(10)) + "…"  # 60 characters at most, cut between words
    assert f"— → {cut} |" in out.markdown and len(cut) <= 60
    assert "[" not in html.unescape(out.html.split("<body>")[1])  # no raw JSON list of screenshots shown


def _chart_case() -> tuple[list[tuple[object, ...]], pl.DataFrame, pl.DataFrame]:
    """Rank series of every kind: gaps, days not fetched, not ranked, listing changes, and one with no rank."""
    from storeframes.track.digest_charts import series_keys

    skipped = [FIRST_DAY + timedelta(days=n) for n in (9, 10, 11)]
    ranks = ranks_frame().with_columns(
        status=pl.when(pl.col("date").is_in(skipped) & (pl.col("keyword") == "collage maker"))
        .then(pl.lit("not_fetched"))
        .otherwise("status")
    )
    unranked = _event("top", END, f"{C} entered the top 10", app_id=C, keyword="photo editor", after="9", **PLACE)
    events = events_frame([*_all_rules(), unranked])
    return series_keys(events.filter(pl.col("day").is_between(START, END))), ranks, events


def test_a_chart_drawn_after_others_on_the_digest_s_figure_is_the_chart_drawn_alone():
    from storeframes.track.digest_charts import _Parts, _Sheet, charts

    keys, ranks, events = _chart_case()
    names = {A: "Photo Pro"}
    assert len(keys) == 4
    together = charts(keys, ranks, events, names)
    alone = [charts([key], ranks, events, names)[0] for key in keys]
    assert together == alone  # nothing of one chart is left on the next: its pixels are the chart's own
    assert charts(keys[::-1], ranks, events, names) == together[::-1]
    assert len(set(together)) == len(keys)

    def drawn(sheet: _Sheet) -> list[tuple[str, str]]:
        ax = sheet.axes
        texts = [*ax.texts, *(ax.get_legend().get_texts() if ax.get_legend() else [])]
        return [(type(a).__name__, a.get_text()) for a in texts] + [(type(a).__name__, "") for a in ax.get_children()]

    for before, after in ((keys[0], keys[3]), (keys[3], keys[0]), (keys[1], keys[2])):
        reused, fresh = _Sheet(), _Sheet()
        parts = _Parts(ranks, events)
        reused.chart(before, *parts.of(before), "before")
        reused.chart(after, *parts.of(after), "after")
        fresh.chart(after, *parts.of(after), "after")
        assert drawn(reused) == drawn(fresh)


def test_a_chart_is_640_by_260_pixels_names_no_software_and_spells_no_link():
    import base64
    import io

    from PIL import Image

    from storeframes.track.digest_charts import HTTP, charts

    keys, ranks, events = _chart_case()
    for png in charts(keys, ranks, events, {}):
        image = Image.open(io.BytesIO(png))
        assert image.size == (640, 260) and image.format == "PNG"
        assert "Software" not in image.info and not HTTP.search(base64.b64encode(png).decode())
        pixels = image.convert("RGB")
        assert pixels.getpixel((5, 5)) == (255, 255, 255) and len(pixels.getcolors(640 * 260) or []) > 20


def test_charts_drawn_on_several_threads_at_once_are_the_charts_drawn_on_one():
    from concurrent.futures import ThreadPoolExecutor

    from storeframes.track.digest_charts import charts

    keys, ranks, events = _chart_case()
    one = charts(keys, ranks, events, {A: "Photo Pro"})
    with ThreadPoolExecutor(4) as pool:
        turns = [keys[n % 4 :] + keys[: n % 4] for n in range(8)]
        found = list(pool.map(lambda turned: charts(turned, ranks, events, {A: "Photo Pro"}), turns))
    for n, drawn in enumerate(found):
        assert drawn == one[n % 4 :] + one[: n % 4]


def test_the_page_reads_on_a_phone_and_in_an_e_mail_client_and_loads_nothing(digest):
    page = digest.html
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in page
    images = re.findall(r"<img\b[^>]*>", page)
    assert len(images) == 3
    assert all('style="max-width:100%;height:auto"' in image for image in images)  # a mail client without the style
    for image in images:  # every chart says in words what it shows
        (alt,) = re.findall(r'\balt="([^"]*)"', image)
        assert html.unescape(alt).startswith("Rank of ") and " from 2026-10-20 to 2026-11-08: " in html.unescape(alt)
    assert "<script" not in page.lower() and not re.search(r"\son[a-z]+\s*=", page)  # no script, no handler
    references = re.findall(r"\b(?:src|href|srcset|action|poster)\s*=\s*[\"']?([^\"'\s>]*)", page, flags=re.I)
    assert references and all(r.startswith(("data:", "#")) for r in references)
    assert "url(" not in page and "@import" not in page and "http" not in page.lower()
    tables = page.count("<table")
    assert tables == 6 and page.count('<div class="scroll"><table') == tables  # each scrolls within itself
    assert page.count("</table></div>") == tables
    style = page.split("<style>")[1].split("</style>")[0]
    assert "anywhere" not in style and "break-all" not in style  # no word broken inside, only an overlong token
    assert "overflow-wrap:break-word;word-break:normal" in style and ".scroll{overflow-x:auto" in style
    assert "@media (max-width:600px)" in style and "figure img{max-width:100%;height:auto" in style


def test_the_anomalies_come_first_after_the_spend_and_the_days_not_fetched():
    anomaly = _event("anomaly", date(2026, 11, 6), f"{A} fell to 30; likely cause: it changed its title on 2026-11-02",
                     app_id=A, keyword="photo editor", target="down", before="4", after="30", **PLACE)  # fmt: skip
    out = render_digest(
        events_frame([*_all_rules(), anomaly]), ranks_frame(), tracker="t", start=START, end=END, spend=SPEND,
        not_fetched={"'photo editor' (us)": [date(2026, 11, 3)]},
    )  # fmt: skip
    for text, marks in (
        (out.html, ['class="spend"', "<b>Not fetched:</b>", "<h2>Rank anomalies ", "<h2>Rank drops ", "<h2>Top N"]),
        (
            out.markdown,
            ["**Month budget", "**Not fetched:**", "## Rank anomalies (1 event)", "## Rank drops", "## Top N"],
        ),
    ):
        places = [text.index(mark) for mark in marks]
        assert places == sorted(places)
    assert "likely cause: it changed its title on 2026-11-02" in out.markdown
    assert "| **down**: 4 → 30 |" in out.markdown


def test_the_spend_line_leads_with_the_period_and_says_the_month_beside_its_budget():
    spend = Spend(month="2026-11", month_credits=3_240, budget_per_month=300_000, period_credits=5_000, runs=20)
    out = render_digest(pl.DataFrame(), pl.DataFrame(), tracker="t", start=date(2026, 10, 20), end=END, spend=spend)
    line = out.markdown.splitlines()[2]
    assert line == (
        "**Spent from 2026-10-20 to 2026-11-08:** 5,000 credits (every run) · "
        "**Month budget, 2026-11 so far:** 3,240 of 300,000 credits (1%) `░░░░░░░░░░` · **Runs:** 20 finished, 0 not ok"
    )
    assert (
        "<b>Spent from 2026-10-20 to 2026-11-08:</b> 5,000 credits (every run) · "
        '<b>Month budget, 2026-11 so far:</b> 3,240 of 300,000 credits (1%)<span class="bar">'
    ) in out.html
    # a digest of the day that shows events of earlier days: its credits are the day's runs', and said so
    day = Spend(month="2026-11", month_credits=3_240, budget_per_month=None, period_credits=120, days=(END, END))
    out = render_digest(pl.DataFrame(), pl.DataFrame(), tracker="t", start=START, end=END, spend=day)
    assert out.markdown.splitlines()[2] == (
        "**Spent on 2026-11-08:** 120 credits (every run) · **2026-11 so far:** 3,240 credits (no month budget)"
    )


def _one_series(ranks: list[int | None]) -> pl.DataFrame:
    """One app's ranks on 'photo editor' from FIRST_DAY, a day each (None: not ranked)."""
    rows = [
        {"keyword": "photo editor", "app_id": A, "date": FIRST_DAY + timedelta(days=n), "rank": rank,
         "status": "ranked" if rank is not None else "not_ranked", "results": 50, **PLACE}
        for n, rank in enumerate(ranks)
    ]  # fmt: skip
    return pl.DataFrame(rows, schema=RANK_HISTORY.schema)


def test_a_chart_title_wider_than_the_figure_wraps_within_it_and_a_longer_one_is_cut_with_its_whole_in_the_alt():
    from storeframes.track.digest_charts import _Parts, _Sheet, chart_alts, chart_title

    key = (A, "photo editor", "us", "en", "iphone")
    ranks = _one_series([5, 6, 5, 7, 12, 13, 12])
    drop = _event("rank_drop", FIRST_DAY + timedelta(days=4), "fell", app_id=A, keyword="photo editor",
                  before="7", after="12", **PLACE)  # fmt: skip
    events = events_frame([drop])
    for name, lines in (
        ("Photo Pro", [f"Photo Pro ({A}): 'photo editor' (us, en, iphone)"]),
        ("Collage Editor Deluxe: Filters, collages & retouch", None),
        ("Photo " * 60, None),
    ):
        sheet = _Sheet()
        title = chart_title(key, {A: name.strip()})
        sheet.chart(key, *_Parts(ranks, events).of(key), title)
        renderer = sheet.canvas.get_renderer()
        (shown,) = [
            t
            for t in sheet.axes.get_children()
            if getattr(t, "get_text", None) and t.get_text().startswith(("Photo", "Collage"))
        ]
        box = shown.get_window_extent(renderer)
        assert box.x0 >= 0 and box.x1 <= 640 and box.y0 >= 0 and box.y1 <= 260, (name, box)  # nothing cut
        if lines is not None:
            assert shown.get_text().split("\n") == lines
        elif len(name) < 100:  # two lines: the app and its id, then the keyword and place
            assert shown.get_text().split("\n") == [f"{name} ({A}):", "'photo editor' (us, en, iphone)"]
        else:  # too long even so: cut with an ellipsis, and the alt text says it whole
            assert shown.get_text().endswith("…") and shown.get_text().count("\n") == 1
            (alt,) = chart_alts([key], ranks, events, {A: name.strip()})
            assert alt.startswith(f"Rank of {name.strip()} ({A}) for 'photo editor' (us, en, iphone) from 2026-10-20")


def test_a_listing_change_label_sits_where_no_marker_is():
    from storeframes.track.digest_charts import _Parts, _Sheet

    key = (A, "photo editor", "us", "en", "iphone")
    change_day = FIRST_DAY + timedelta(days=10)
    cases = [  # the change on the day the app fell off the results (a marker at the bottom), and on days around it
        [12, 11, 12, 13, 12, 11, 12, 12, 11, 12, None, 14, 12, 11, 12],
        [2, 1, 2, 3, 2, 1, 2, 2, 1, 2, None, None, 30, 25, 20],  # near the top as well
    ]
    for ranks in cases:
        series = _one_series(ranks)
        drop = _event("rank_drop", change_day, "fell", app_id=A, keyword="photo editor", before="2", after=None,
                      **PLACE)  # fmt: skip
        title = _event("listing_change", change_day, "title", app_id=A, target="description", **PLACE)
        shots = _event(
            "listing_change", change_day + timedelta(days=2), "shots", app_id=A, target="screenshots", **PLACE
        )
        events = events_frame([drop, title, shots])
        sheet = _Sheet()
        sheet.chart(key, *_Parts(series, events).of(key), "t")
        renderer = sheet.canvas.get_renderer()
        ax = sheet.axes
        labels = [t for t in ax.texts if t.get_text() in ("description", "screenshots")]
        assert sorted(t.get_text() for t in labels) == ["description", "screenshots"]
        markers = [
            point
            for line in ax.lines
            if line.get_marker() not in (None, "None", "")
            for point in ax.transData.transform(line.get_xydata())
            if point[1] == point[1]
        ]
        assert len(markers) > len(ranks)
        for label in labels:
            box = label.get_window_extent(renderer).expanded(1.0, 1.0)
            covered = [p for p in markers if box.x0 - 4 <= p[0] <= box.x1 + 4 and box.y0 - 4 <= p[1] <= box.y1 + 4]
            assert covered == [], (label.get_text(), ranks)
