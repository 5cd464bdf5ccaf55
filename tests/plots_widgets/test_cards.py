"""App cards: the HTML card of one app, from an id (one metadata fetch) or a row (never a credit)."""

from __future__ import annotations

import re
import subprocess
import sys
from decimal import Decimal

import polars as pl
import pytest

import storeframes as sf
from storeframes.sandbox import SANDBOX_KEY
from storeframes.widgets.cards import AppCard, app_card

SHOT = 'class="sf-shot"'


@pytest.fixture
def client(make_client, tmp_path):
    return make_client(cache_dir=tmp_path / "cache")


@pytest.fixture
def other(make_client, tmp_path):
    """A second client with a cache of its own (empty)."""
    return make_client(cache_dir=tmp_path / "other")


def _world(client):
    return client.sandbox_service.world


def _first_key_count(shots: pl.DataFrame) -> int:
    key = shots["device_key"][0]
    return shots.filter(pl.col("device_key") == key).height


def _note(html: str) -> str:
    """The text under the screenshots strip."""
    found = re.findall(r'<div class="sf-note"[^>]*>(.*?)</div>', html)
    assert len(found) == 1, f"one note under the strip, found {found}"
    return found[0]


def _span(html: str, name: str) -> str:
    found = re.search(rf'<span class="sf-{name}">(.*?)</span>', html)
    assert found, f"no sf-{name} in the card"
    return found.group(1)


@pytest.mark.parametrize("store", ["ios", "android"])
def test_card_from_an_id_shows_the_listing_for_one_metadata_fetch(client, other, store):
    world = _world(client)
    app = (world.EXAMPLE_IOS_APPS if store == "ios" else world.EXAMPLE_ANDROID_APPS)[0]
    card = app_card(app, client=client)
    spent, sent = client.spent, client.requests_sent

    row = other.metadata_frame(app).row(0, named=True)  # what one metadata fetch costs, on a fresh cache
    shots = other.screenshots_frame(app)
    assert spent == other.spent > 0
    assert sent == 1

    assert isinstance(card, AppCard)
    assert card.app_id == app and card.title == row["title"]
    assert card.device == ("iphone" if store == "ios" else "android") and card.country == "us"
    html = card.html
    assert f">{row['title'].replace('&', '&amp;')}<" in html
    assert row["developer_name"].replace("&", "&amp;") in html
    assert _span(html, "rating") == f"{row['rating_average']:.1f} ★"
    price = "Free" if not row["price"] or row["price_value"] == 0 else f"${row['price']}"  # a US store: dollars
    assert _span(html, "price") == price
    assert _span(html, "version") == f"version {row['version']}"
    assert _span(html, "where") == f"{card.device}/us"
    assert html.count(SHOT) == min(6, _first_key_count(shots))
    more = _first_key_count(shots) - 6
    assert (f"+{more} more" in html) is (more > 0)


@pytest.mark.parametrize(
    ("store", "device", "note"),
    [("ios", "iphone", "iPhone 6.5-inch"), ("ios", "ipad", "iPad 9.7-inch"), ("android", None, "Android")],
)
def test_the_strip_names_its_device_in_words(client, store, device, note):
    world = _world(client)
    app = (world.EXAMPLE_IOS_APPS if store == "ios" else world.EXAMPLE_ANDROID_APPS)[0]
    html = app_card(app, client=client, device=device, max_screenshots=100).html
    assert _note(html) == note  # every screenshot shown: the name alone, no "+N more"


def test_category_name_and_strip_order(client):
    app = _world(client).EXAMPLE_IOS_APPS[0]
    html = app_card(app, client=client, max_screenshots=3).html
    assert _span(html, "category") == "Photo &amp; Video"  # App Store genre 6008
    positions = re.findall(r'class="sf-shot"[^>]*>(\d+)</div>', html)
    assert positions == ["1", "2", "3"]
    assert "+7 more" in html
    assert _note(html) == "iPhone 6.5-inch · +7 more"  # the device's name, not its key (iphone_6_5)


def test_card_from_a_row_spends_nothing_and_uses_the_cached_screenshots(client):
    app = _world(client).EXAMPLE_IOS_APPS[1]
    frame = client.metadata_frame(app)
    spent, sent = client.spent, client.requests_sent
    shots = client.screenshots_frame(app)

    for given in (frame, frame.row(0, named=True)):
        card = app_card(given, client=client)
        assert card.html.count(SHOT) == min(6, _first_key_count(shots))
        assert card.title == frame["title"][0]
    assert (client.spent, client.requests_sent) == (spent, sent)


def test_card_from_a_row_without_cached_screenshots_sends_nothing(client, other):
    app = _world(client).EXAMPLE_ANDROID_APPS[1]
    row = client.metadata_frame(app).row(0, named=True)
    card = app_card(row, client=other)  # other's cache is empty: refresh="never" must not fetch
    assert (other.spent, other.requests_sent) == (0, 0)
    assert SHOT not in card.html
    assert f"{row['screenshots_count']} screenshots (not loaded" in card.html


def test_a_row_in_another_language_finds_its_own_cached_screenshots(client):
    app = _world(client).EXAMPLE_IOS_APPS[0]
    row = client.metadata_frame(app, country="ca", language="fr").row(0, named=True)
    sent = client.requests_sent
    assert app_card(row, client=client).html.count(SHOT) == 6
    assert client.requests_sent == sent


def test_default_client_serves_ids_and_cached_rows(client, fresh_default):
    sf.configure(client)
    app = _world(client).EXAMPLE_IOS_APPS[2]
    card = app_card(app)
    sent = client.requests_sent
    again = app_card(client.metadata_frame(app))
    assert again.html == card.html
    assert client.requests_sent == sent == 1


def test_no_client_and_no_default_gives_a_card_without_strip(client, fresh_default):
    row = client.metadata_frame(_world(client).EXAMPLE_IOS_APPS[0]).row(0, named=True)
    card = app_card(row)
    assert SHOT not in card.html and "10 screenshots" in card.html


def test_given_screenshots_are_used_and_other_apps_ignored(client, fresh_default):
    first, second = _world(client).EXAMPLE_IOS_APPS[:2]
    shots = client.screenshots_frame([second, first])
    row = client.metadata_frame(first).row(0, named=True)
    spent, sent = client.spent, client.requests_sent
    card = app_card(row, screenshots=shots, max_screenshots=4)
    assert (client.spent, client.requests_sent) == (spent, sent)
    mine = shots.filter(pl.col("app_id") == first)
    theirs = shots.filter(pl.col("app_id") == second)["url"].to_list()
    assert card.html.count(SHOT) == 4
    assert f"+{_first_key_count(mine) - 4} more" in card.html
    assert not any(url in card.html for url in theirs)
    assert mine["url"][0] in card.html


def _row(**values):
    base = {
        "app_id": "123",
        "country": "us",
        "device": "iphone",
        "title": "Maps",
        "developer_name": "Dev",
        "rating_average": 4.25,
        "price": "",
        "price_value": None,
        "icon_url": None,
        "categories": ["6010"],
        "version": "1.0",
        "screenshots_count": 0,
    }
    return {**base, **values}


def _shots(*urls):
    return pl.DataFrame(
        {
            "app_id": ["123"] * len(urls),
            "device_key": ["iphone_6_5"] * len(urls),
            "position": list(range(1, len(urls) + 1)),
            "url": list(urls),
        }
    )


def test_every_text_is_escaped_and_unsafe_urls_are_dropped(fresh_default):
    row = _row(
        title="<script>alert(1)</script>",
        developer_name="A & B",
        icon_url="javascript:alert(1)",
        version='2"><b>',
    )
    shots = _shots("data:image/png;base64,AAAA", 'https://cdn.test/a.png?x="><script>')
    html = app_card(row, screenshots=shots).html
    assert "<script" not in html.lower() and "javascript:" not in html and "data:image" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "A &amp; B" in html and "version 2&quot;&gt;&lt;b&gt;" in html
    assert '<img class="sf-shot" src="https://cdn.test/a.png?x=&quot;&gt;&lt;script&gt;"' in html
    assert html.count(SHOT) == 2  # the dropped URL keeps its place as a blank box
    assert 'class="sf-icon" role="img"' in html  # no icon URL left: a placeholder with the letter
    assert ">&lt;</div>" in html  # the title's first letter, escaped


def test_example_urls_are_placeholders_and_real_urls_are_images(fresh_default):
    icon = "https://is1-ssl.mzstatic.example/icon.png"
    shots = _shots("https://is2-ssl.mzstatic.example/1.png", "https://is2-ssl.mzstatic.com/2.png")
    html = app_card(_row(icon_url=icon), screenshots=shots).html
    assert f'class="sf-icon" role="img" aria-label="Icon of Maps" title="{icon}"' in html
    assert 'title="https://is2-ssl.mzstatic.example/1.png"' in html
    assert '<img class="sf-shot" src="https://is2-ssl.mzstatic.com/2.png" alt="Screenshot 2 of Maps"' in html
    assert 'width="90" height="180"' in html
    assert "<img" not in html.split('class="sf-shots"')[0]  # the icon is a placeholder
    assert ".example" not in re.sub(r'title="[^"]*"', "", html)  # .example URLs only as tooltips
    # deterministic, and the colour follows the URL
    assert app_card(_row(icon_url=icon), screenshots=shots).html == html
    other = app_card(_row(icon_url=icon.replace("icon", "other")), screenshots=shots).html
    colour = re.compile(r'class="sf-icon".*?background:(hsl\([^)]*\))')
    assert colour.search(html).group(1) != colour.search(other).group(1)

    real = app_card(_row(icon_url="https://is1-ssl.mzstatic.com/icon.png"), screenshots=shots).html
    assert '<img class="sf-icon" src="https://is1-ssl.mzstatic.com/icon.png" alt="Icon of Maps" width="64"' in real


@pytest.mark.parametrize(
    ("price", "value", "shown"),
    [
        (None, None, "price unknown"),  # no price in the answer: not known, not free
        ("", Decimal("0"), "Free"),  # a free app, as metadata_frame gives it
        ("", None, "Free"),
        ("0", None, "Free"),
        ("Free", None, "Free"),
        ("$0.00", Decimal("0"), "Free"),
        ("$2.99", None, "$2.99"),  # a text of the store's own, with its sign: as it is
        ("2.99", Decimal("2.99"), "$2.99"),  # the row's store is the US's: dollars
        ("2.99", None, "$2.99"),
        (None, Decimal("1.5"), "$1.50"),
        ("1299", Decimal("1299"), "$1,299.00"),
    ],
)
def test_price_text(price, value, shown, fresh_default):
    assert _span(app_card(_row(price=price, price_value=value)).html, "price") == shown


@pytest.mark.parametrize(
    ("row", "shown"),
    [
        ({"country": "de"}, "2,99\xa0€"),  # the German store's euros, the sign held to the amount
        ({"country": "gb"}, "£2.99"),
        ({"country": "jp", "price": "300", "price_value": Decimal("300")}, "¥300"),
        ({"country": "us", "currency": "eur"}, "2,99\xa0€"),  # a currency the row names wins
        ({"country": "ar"}, "2.99 (currency unknown)"),  # a store whose currency is not known: said so
        ({"country": None}, "2,99\xa0€"),  # no country in the row: the card's country= (de, below)
    ],
)
def test_a_paid_apps_price_has_its_stores_currency(row, shown, fresh_default):
    card = app_card(_row(**{"price": "2.99", "price_value": Decimal("2.99"), **row}), country="de")
    assert _span(card.html, "price") == shown


def test_a_free_app_reads_free_and_a_paid_one_its_price_from_the_sandbox(client, fresh_default):
    world = _world(client)
    frame = client.metadata_frame(list(world.EXAMPLE_IOS_APPS))
    assert frame["price_value"].null_count() == 0
    shown = {row["app_id"]: _span(app_card(row).html, "price") for row in frame.iter_rows(named=True)}
    free = frame.filter(pl.col("price_value") == 0)["app_id"].to_list()
    assert free and all(shown[app] == "Free" for app in free)
    paid = frame.filter(pl.col("price_value") > 0)
    assert {shown[app] for app in paid["app_id"]} == {"$0.99"} and len(free) == frame.height - 1
    (app,) = paid["app_id"]
    german = app_card(app, client=client, country="de")  # the German store's answer: euros
    assert _span(german.html, "price") == "0,99\xa0€"


@pytest.mark.parametrize(("rating", "shown"), [(None, "no rating"), (float("nan"), "no rating"), (4.25, "4.2 ★")])
def test_rating_text(rating, shown, fresh_default):
    assert _span(app_card(_row(rating_average=rating)).html, "rating") == shown


def test_a_row_with_few_fields_still_makes_a_card(fresh_default):
    card = app_card({"app_id": "com.example.app"})
    assert card.title == "com.example.app"
    assert repr(card) == "AppCard(com.example.app: 'com.example.app', ?)"
    assert "no rating" in card.html and "price unknown" in card.html and "Free" not in card.html


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "   ",
        "123,456",
        -3233849169,
        3233849169.0,
        True,
        None,
        ["3233849169"],
        {"title": "no id"},
        {"app_id": ""},
    ],
)
def test_invalid_apps_are_refused_before_any_request(client, bad):
    with pytest.raises(sf.InvalidParameterError, match="app_card"):
        app_card(bad, client=client)
    assert client.requests_sent == 0


def test_frames_of_other_than_one_row_are_refused(client):
    app = _world(client).EXAMPLE_IOS_APPS[0]
    two = client.metadata_frame(_world(client).EXAMPLE_IOS_APPS[:2])
    sent = client.requests_sent
    for frame in (two, two.clear()):
        with pytest.raises(sf.InvalidParameterError, match=f"a polars DataFrame of {frame.height} rows"):
            app_card(frame, client=client)
    with pytest.raises(sf.InvalidParameterError, match="max_screenshots"):
        app_card(app, client=client, max_screenshots=-1)
    with pytest.raises(sf.InvalidParameterError, match="client"):
        app_card(app, client="not a client")
    with pytest.raises(sf.InvalidParameterError, match="country"):
        app_card(app, client=client, country="usa")
    assert client.requests_sent == sent


def test_unavailable_app_raises_a_clear_error(client):
    app = _world(client).UNAVAILABLE_IN_US[0]
    with pytest.raises(sf.AppNotAvailableError, match=f"'{app}' is not available in country 'us'") as caught:
        app_card(app, client=client)
    assert caught.value.apps == (app,)
    assert client.spent == 0 and client.requests_sent == 1  # the metadata request only
    with pytest.raises(sf.AppNotAvailableError):  # the cache remembers: nothing sent again
        app_card(app, client=client)
    assert client.requests_sent == 1


def test_repr_and_html_hooks(client):
    card = app_card(_world(client).EXAMPLE_IOS_APPS[0], client=client, max_screenshots=0)
    assert card._repr_html_() == card.html
    assert repr(card) == "AppCard(3233849169: 'Photo Editor Plus: Edit photos like a pro', iphone/us)"
    assert "<" not in repr(card)
    assert SHOT not in card.html and "+10 more" in card.html
    for text in (card.html, repr(card)):
        assert SANDBOX_KEY not in text and "sandbox-demo-key" not in text
    assert "<script" not in card.html and "<link" not in card.html and "<style" not in card.html
    with pytest.raises(AttributeError):
        card.title = "changed"  # type: ignore[misc]


@pytest.mark.processes
def test_module_needs_no_notebook_packages():
    code = "import sys, storeframes.widgets.cards; print(sorted(m for m in sys.modules if m.split('.')[0] in ('IPython', 'ipywidgets')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
