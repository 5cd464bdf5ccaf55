"""Listing changes in words (describe_change): which screenshots, which words, which prices; never raw JSON, never a
word cut in two."""

from __future__ import annotations

import json

import pytest

from storeframes.track.change_words import CHANGE_CHARS, describe_change, image_name

CDN = "https://is1-ssl.mzstatic.example/image/thumb/Purple116/v4"


def _shots(*names: str, folder: str = "6a") -> str:
    """A screenshots value as an event holds it: a JSON list of the store's addresses (the size rendition last)."""
    return json.dumps([f"{CDN}/{folder}/{name}/392x696bb.png" for name in names])


def test_screenshots_added_and_removed_are_counted_and_named_when_few():
    before = _shots("shot_1.png", "shot_2.png", "shot_3.png")
    after = _shots("shot_1.png", "shot_3.png", "shot_4.png", "shot_5.png")
    assert describe_change("screenshots", before, after) == (
        "2 added, 1 removed (3 → 4 images): +shot_4.png, +shot_5.png, -shot_2.png"
    )
    assert describe_change("screenshots", after, before) == (
        "1 added, 2 removed (4 → 3 images): +shot_2.png, -shot_4.png, -shot_5.png"
    )


def test_a_screenshot_of_the_same_name_at_a_new_address_is_replaced():
    before = _shots("shot_1.png", "shot_2.png")
    after = json.dumps([json.loads(before)[0], f"{CDN}/d4/shot_2.png/392x696bb.png"])
    assert describe_change("screenshots", before, after) == "1 replaced (2 → 2 images): shot_2.png"


def test_screenshots_reordered_or_many_are_said_without_a_list():
    names = [f"shot_{n}.png" for n in range(1, 8)]
    assert describe_change("screenshots", _shots(*names), _shots(*names[::-1])) == "reordered (7 images)"
    assert describe_change("screenshots", _shots(*names), _shots(*names, folder="7b")) == "7 replaced (7 → 7 images)"
    assert (
        describe_change("screenshots", None, _shots(*names[:2])) == "2 added (0 → 2 images): +shot_1.png, +shot_2.png"
    )


def test_an_image_is_named_by_its_file_not_by_its_size_rendition():
    assert image_name(f"{CDN}/6a/iphone6plus_2.png/392x696bb.png") == "iphone6plus_2.png"
    assert image_name("https://cdn.example/icons/new-icon.png?v=3") == "new-icon.png"
    assert image_name("https://cdn.example/512x512bb.jpg") == "512x512bb.jpg"  # no file before it: the rendition


def test_a_text_s_change_is_its_words_removed_and_added_with_a_few_around_them():
    assert describe_change("title", "Photo Pro: Edit photos", "Photo Pro: AI photo editor") == (
        "Photo Pro: -'Edit photos' +'AI photo editor'"
    )
    assert describe_change("title", "Selfie Editor 360: Edit photos like a pro", "Selfie Editor 360") == (
        "Selfie Editor -'360: Edit photos like a pro' +'360'"
    )
    assert describe_change("subtitle", "Edit photos fast", "Edit photos and videos fast") == (
        "Edit photos +'and videos' fast"
    )
    assert describe_change("subtitle", None, "AI photo editor") == "set to 'AI photo editor'"
    assert describe_change("subtitle", "AI photo editor", "") == "emptied (was 'AI photo editor')"


def test_a_long_description_s_change_is_bounded_and_a_moved_line_is_said_moved():
    before = "Edit photos like a pro.\n• Filters and presets\n• Collages\n• Curves and HSL tools"
    after = "Edit photos like a pro.\n• Collages\n• Curves and HSL tools\n• Filters and presets"
    assert describe_change("description", before, after) == "moved 'Filters and presets'"
    words = [f"word{n}" for n in range(300)]
    changed = [w.upper() if n % 20 == 10 else w for n, w in enumerate(words)]
    said = describe_change("description", " ".join(words), " ".join(changed))
    assert said == (
        "…word7 word8 word9 -'word10' +'WORD10' word11 word12 word13…; …word27 word28 word29 -'word30' +'WORD30' "
        "word31 word32 word33…; and 13 more changes"  # as many places as the length holds, the others counted
    )
    assert len(said) <= CHANGE_CHARS
    rewritten = describe_change("description", " ".join(words), "Something else entirely. " * 20)
    assert rewritten == (  # a long run of words quoted by its first and last words
        "-'word0 word1 word2 word3 word4 … word295 word296 word297 word298 word299' "
        "+'Something else entirely. Something else … else entirely. Something else entirely.'"
    )


def test_an_html_description_is_read_as_its_text():
    before = "Edit photos.<br><b>Filters</b> &amp; presets"
    after = "Edit photos.<br><b>Filters</b> &amp; collages"
    assert describe_change("long_description", before, after) == "…photos. Filters & -'presets' +'collages'"


@pytest.mark.parametrize(
    ("before", "after", "currency", "said"),
    [
        ("2.99", "", "usd", "$2.99 → Free"),
        ("", "4.99", "eur", "Free → 4,99\xa0€"),  # as the euro's stores write it
        ("0.99", "1.99", "gbp", "£0.99 → £1.99"),
        ("600", "800", "jpy", "¥600 → ¥800"),
        ("3.99", "4.99", "CAD", "CA$3.99 → CA$4.99"),
        ("2.99", "0", None, "2.99 (currency unknown) → Free"),
        ("2.99", None, None, "2.99 (currency unknown) → price unknown"),
        ("$2.99", "Free", "usd", "$2.99 → Free"),  # a price the store wrote with its sign: as it is
    ],
)
def test_a_price_change_says_both_prices_with_the_currency_when_known(before, after, currency, said):
    assert describe_change("price", before, after, currency=currency) == said


def test_an_icon_a_size_a_version_and_privacy_details():
    assert describe_change("icon", f"{CDN}/a/AppIcon.png/512x512bb.jpg", f"{CDN}/b/AppIcon.png/512x512bb.jpg") == (
        "new icon"
    )
    assert describe_change("size", "98.0 MB", "105.2 MB") == "98.0 MB → 105.2 MB"
    assert describe_change("version", "2.3.1", "2.4.0") == "2.3.1 → 2.4.0"
    assert describe_change("privacy_info", '{"DATA_LINKED_TO_YOU":["PURCHASES"]}', "{}") == (
        "data linked to you no longer lists purchases"
    )
    assert describe_change("title", "Same", "Same") == "no change"


def test_no_described_change_cuts_a_word_in_two():
    words = " ".join(f"w{n:03d}" for n in range(100))
    for said in (describe_change("title", None, words), describe_change("promotional_text", words, "")):
        shown = said.split("'")[1].removesuffix(" …").split()
        assert all(w in words.split() for w in shown), said


def test_track_events_prints_what_a_listing_change_changed_under_its_line(tmp_path, capsys):
    from datetime import date

    from storeframes.cli import main
    from storeframes.track import Tracker

    spec = tmp_path / "watch.toml"
    spec.write_text(
        '[tracker]\nname = "watch"\ncache_dir = "cache"\ncountry = "us"\ndevice = "iphone"\n\n'
        '[[track]]\nendpoint = "metadata"\napps = ["1395556972"]\n\n'
        '[[alert]]\nrule = "listing_change"\napps = ["1395556972"]\ntargets = ["screenshots"]\n'
    )
    tracker = Tracker.from_toml(spec, sandbox=True)
    for day in (date(2026, 10, 29), date(2026, 10, 30)):  # the sandbox's app changes its screenshots on 10-30
        assert tracker.run(day).status == "ok"
    capsys.readouterr()
    assert main(["track", "events", str(spec)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("2026-10-30  listing_change ") and "changed its screenshots" in lines[0]
    assert lines[1] == (
        " " * 27 + "screenshots: 3 replaced (7 → 7 images): iphone6plus_2.png, iphone6plus_4.png, iphone6plus_7.png"
    )
    assert "[" not in lines[1] and len(lines) == 2


def test_a_digest_s_prices_take_the_currency_of_the_in_app_purchases_kept_in_their_country(tmp_path):
    from datetime import date

    import polars as pl

    from storeframes.cache import EVENT_SCHEMA
    from storeframes.track import Tracker
    from storeframes.track.day_digest import price_currencies

    spec = tmp_path / "watch.toml"
    spec.write_text(  # the sandbox's 394079159 sells in-app purchases, in dollars in the us
        '[tracker]\nname = "watch"\ncache_dir = "cache"\ncountry = "us"\ndevice = "iphone"\n\n'
        '[[track]]\nendpoint = "metadata"\napps = ["394079159"]\n'
    )
    tracker = Tracker.from_toml(spec, sandbox=True)
    day = date(2026, 10, 29)
    assert tracker.run(day).status == "ok"
    base = dict.fromkeys(EVENT_SCHEMA.names()) | {"rule": "listing_change", "target": "price", "day": day}
    events = pl.DataFrame([base | {"country": "us"}, base | {"country": "jp"}], schema=EVENT_SCHEMA)
    cache = tracker.client(day).cache
    assert price_currencies(cache, "sandbox-0", events) == {"us": "usd", "jp": "jpy"}  # jp: its store's currency
    assert price_currencies(cache, "sandbox-0", events.filter(pl.col("country") == "jp")) == {"jp": "jpy"}
    nowhere = events.with_columns(country=pl.lit("zz"))  # no purchase kept, no store known: no currency guessed
    assert price_currencies(cache, "sandbox-0", nowhere) == {}
    assert price_currencies(cache, "sandbox-0", events.with_columns(target=pl.lit("title"))) == {}
