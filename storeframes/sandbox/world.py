"""The synthetic world behind the sandbox: apps, their histories, metrics, benchmarks and rankings.

Everything here is a pure function of ``(seed, arguments)``: two :class:`World` objects built with
the same seed give identical answers in any process, and nothing is generated until it is asked
for. The module uses the standard library only. Its answers are the *content* of the service's
responses (what goes under ``result``); the envelope, validation, errors, limits and costs belong to
:mod:`storeframes.sandbox.service`.

How the world is made
---------------------
* **Randomness.** Stable hashes (``hashlib.blake2b``) and ``random.Random`` objects seeded with
  text (``random`` hashes text seeds with SHA-512, so they are stable across processes). Python's
  salted ``hash()`` is never used.
* **Catalogue.** ``World()`` builds a light catalogue per store (``"ios"`` and ``"android"``): ids,
  titles, developers, categories and a popularity score, 20-30 ms for the default 800 + 600
  apps. Apps are drawn from about thirty *themes* (photo editors, budget planners, puzzle games...)
  that give titles, categories, descriptions, search words and a ``dna`` classification.
  Everything else about an app (descriptions, screenshots, versions, purchases...) is built on
  demand from a per-app ``random.Random(f"{seed}:{store}:{app_id}")`` and cached.
* **Ids.** iphone/ipad ids are numeric text of 9-10 digits; android ids are package names built from
  the developer and the title (``com.brightleaf.budgetplannerpro``). The first six apps of each store
  are the example apps (:attr:`World.EXAMPLE_IOS_APPS`, :attr:`World.EXAMPLE_ANDROID_APPS`): one
  popular app for each theme of :attr:`World.EXAMPLE_KEYWORDS`, available everywhere.
* **Availability.** Every app is available in ``"us"`` except :attr:`World.UNAVAILABLE_IN_US` (two apps
  per store). In any other country about 3 % of the apps are unavailable (a hash of app and
  country); the example apps never are. Unavailable apps never show up in that country's searches.
* **Event calendars.** Releases and metadata edits follow closed-form calendars: event ``k`` of a
  calendar falls on ``anchor + k * interval + jitter(k)`` with ``|jitter| < interval / 3``, so events
  stay ordered and the event of any day (or the last event before it) is found in O(1). Event 0 is
  the app's first release (the initial state); events 1, 2, ... are changes. The state of a field
  on a day is a function of the number of the last event on or before that day, so ``metadata()``
  and ``changes()`` always agree and any two overlapping ``changes()`` ranges agree day by day.
  Calendars: version releases (every 7-45 days; each release also changes ``size``), icon,
  privacy labels (iphone/ipad only, from 2020-12-14 when labels began), title, and per country:
  screenshots, description (``long_description``) and subtitle (iphone/ipad) or
  ``short_description`` (android). ``title``, ``subtitle`` and ``short_description`` are the extra
  change targets the service's reference leaves room for. An app changes something every 5-10
  days on average.
* **Versions** climb like 3.4.0 -> 3.4.1 -> 3.5.0 -> 4.0.0 as a closed form of the release number:
  ``patches_per_minor`` releases make a minor, ``releases_per_major`` make a major (1-3 years).
* **Language.** Text for a language other than ``"en"`` carries a ``[xx] `` prefix (titles are brand
  names and stay as they are). Prices use the country's currency.
* **Metrics** are estimates for the day before ``today``. About 10 % of them are null: half of the
  apps are "small" (popularity below the median) and each small app lacks a given estimate in a
  country with probability 0.2. They move from day to day (:mod:`storeframes.sandbox.moves`):
  downloads, revenues and power with a weekly pattern, a slow momentum and noise; the number of
  ratings grows every day, star by star, and ``daily-ratings`` is that day's growth.
* **Benchmarks** come from per-category base rates scaled per channel, type, country and (mildly)
  date range. 10-15 % of the categories are thin (null rates); 40 % of those are null everywhere,
  ``number_of_apps`` included.
* **Search.** A keyword ranks every available app of the store by relevance (keyword words in the
  title, the theme's search words and the category names, plus popularity and a stable per-app
  term) plus a smooth drift (a per-app sinusoid with a period of 10-60 days) plus a small daily
  noise: ranks move a few places a day and stay recognisable, and over a few weeks competitors
  gain and lose places. Now and then an *episode* (2-8 days, about one a week per keyword, store
  and country) boosts an app from outside the top 10 or drops a top app: ranks jump 10 places or
  more and apps leave the top 10 and come back (:func:`storeframes.sandbox.moves.episodes`).
  About a quarter of the keyword's top 60 by relevance have a *weekly rhythm*: they rise (themes
  that peak at the weekend) or fall (the others) on Saturday and Sunday by a few places, the same
  every week (:func:`~storeframes.sandbox.moves.weekly_rhythm`). A *listing change* of one of those
  60 apps in the country (title, subtitle or short description, screenshots, long description:
  the calendars ``metadata()`` and ``changes()`` read) moves it on the keyword with probability
  0.1: from 1-3 days after the change, up or down by 10 places or more, for 5-21 days or until
  that field changes again (:func:`~storeframes.sandbox.moves.listing_jumps`; worked out per
  block of 28 days and cached, so a day's ranking looks up nothing but a short list). iphone and
  ipad share one ranking.
* **Search ads** (iphone/ipad only): each keyword has 4-11 apps that ever advertise on it; one or
  two of them advertise every week, the others in campaigns of 1-3 weeks that start on a Monday,
  more of them on some keywords than others (:func:`~storeframes.sandbox.moves.advertisers`). Each
  day two of that week's advertisers take the two ad places.
  The number of results depends on the keyword (niche, many-word keywords get fewer): 40-500 on
  iphone/ipad, 40-250 on android. The live search returns the first 250; the history of a day is
  the same ranking, so its first 250 equal the live search of that day.
* **Keyword tracking.** About 10 % of keywords, and :attr:`World.UNTRACKED_KEYWORD`, are never
  tracked (the example keywords always are); a tracked keyword misses about 5 % of the days; nothing
  is tracked before :data:`HISTORY_START`.

Interpretations of the service's reference
------------------------------------------
* ``downloads``/``revenues`` ``precision`` is the rounding step of the value (3 significant digits);
  it is 0 when the value is null. ``revenues`` are in the country's currency (lower-case code) and
  are 0 for free apps without in-app purchases. Both cover the 30 days ending on ``date``.
* ``ratings.value`` is the number of ratings to date; ``daily-ratings.value`` the number received
  that day. Breakdowns are null exactly when the value is null.
* ``power`` is a score from 0 to 100 with one decimal.
* Video items: ``audio`` is the audio codec (``"mp4a.40.2"``), ``codecs`` the HLS codec string.
* iphone/ipad screenshot and icon ids are 32-hex tokens; android screenshot change objects carry a
  16-hex ``id`` and, as ``path_component``, the last segment of their URL.
* ``metadata()`` and ``changes()`` answer for any app of the store; refusing apps unavailable in
  the country (``AppNotAvailableError``) is the service layer's job, helped by ``is_available()``.
* Genre ``7003`` is named "Casual" (older genre lists call it "Arcade").
* All URLs, e-mails and web sites point to reserved ``.example`` domains.
* ``version`` of a change record is the version live on that day, or ``""`` (12 %) or
  ``"No related version"`` (8 %); for ``version`` changes it is the new version.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import math
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from ..catalog import ANDROID_CATEGORIES, IOS_CATEGORIES
from .moves import WEEKEND_THEMES, advertisers, demand, episodes, listing_jumps, ratings_to_date, weekly_rhythm

__all__ = [
    "ANDROID_CATEGORIES",
    "HISTORY_START",
    "IOS_CATEGORIES",
    "PRIVACY_SECTIONS",
    "PRIVACY_TYPES",
    "SCREENSHOT_KEYS",
    "World",
    "store_of",
]

# --------------------------------------------------------------------------------------------
# Public tables (the category names are the stores' lists in storeframes.catalog)
# --------------------------------------------------------------------------------------------

SCREENSHOT_KEYS: tuple[str, ...] = (
    "iphone_6_5",
    "iphone",
    "iphone5",
    "iphone_5_8",
    "iphone6",
    "iphone6plus",
    "ipad",
    "ipadPro",
    "ipadPro_2018",
    "appleWatch",
    "appleWatch_2018",
)
"""Keys of the iphone/ipad ``screenshots`` object (the documented ``<vendor>Watch`` is ``appleWatch``)."""

PRIVACY_SECTIONS: tuple[str, ...] = ("DATA_LINKED_TO_YOU", "DATA_NOT_LINKED_TO_YOU", "DATA_USED_TO_TRACK_YOU")
PRIVACY_TYPES: tuple[str, ...] = (
    "PURCHASES",
    "LOCATION",
    "CONTACT_INFO",
    "SEARCH_HISTORY",
    "IDENTIFIERS",
    "USAGE_DATA",
    "DIAGNOSTICS",
)

HISTORY_START = date(2024, 1, 1)
"""The first day for which any keyword history exists."""

_METRIC_KEYS: dict[str, str] = {
    "downloads": "downloads",
    "revenues": "revenues",
    "app-power": "power",
    "ratings": "ratings",
    "daily-ratings": "daily-ratings",
}
"""Metric names a request may ask for -> the key of the answer (``app-power`` answers as ``power``)."""


def store_of(device: str) -> str:
    """The store of a device: ``"ios"`` for ``"iphone"`` and ``"ipad"``, ``"android"`` for ``"android"``."""
    if device in ("iphone", "ipad"):
        return "ios"
    if device == "android":
        return "android"
    raise ValueError(f"device must be one of iphone, ipad, android; got {device!r}")


# --------------------------------------------------------------------------------------------
# Countries
# --------------------------------------------------------------------------------------------

_COUNTRY_LANGUAGE = {
    "us": "en", "gb": "en", "ca": "en", "au": "en", "nz": "en", "ie": "en", "in": "en", "sg": "en",
    "za": "en", "de": "de", "at": "de", "ch": "de", "fr": "fr", "be": "fr", "es": "es", "mx": "es",
    "ar": "es", "co": "es", "cl": "es", "it": "it", "br": "pt", "pt": "pt", "jp": "ja", "kr": "ko",
    "cn": "zh", "tw": "zh", "hk": "zh", "ru": "ru", "nl": "nl", "se": "sv", "no": "no", "dk": "da",
    "fi": "fi", "pl": "pl", "tr": "tr", "id": "id", "th": "th", "vn": "vi", "sa": "ar", "ae": "ar",
    "il": "he",
}  # fmt: skip

_COUNTRY_CURRENCY = {
    "de": "eur", "fr": "eur", "es": "eur", "it": "eur", "nl": "eur", "at": "eur", "be": "eur",
    "pt": "eur", "fi": "eur", "ie": "eur", "gb": "gbp", "jp": "jpy", "kr": "krw", "ca": "cad",
    "au": "aud", "nz": "nzd", "br": "brl", "mx": "mxn", "in": "inr", "cn": "cny", "tw": "twd",
    "hk": "hkd", "ru": "rub", "ch": "chf", "se": "sek", "no": "nok", "dk": "dkk", "pl": "pln",
    "tr": "try",
}  # fmt: skip
"""Country -> lower-case currency code; any other country pays in ``usd``."""

_USD_RATE = {
    "usd": 1.0, "eur": 0.93, "gbp": 0.8, "jpy": 150.0, "krw": 1350.0, "cad": 1.36, "aud": 1.52,
    "nzd": 1.65, "brl": 5.0, "mxn": 17.0, "inr": 83.0, "cny": 7.2, "twd": 32.0, "hkd": 7.8,
    "rub": 92.0, "chf": 0.9, "sek": 10.5, "nok": 10.6, "dkk": 6.9, "pln": 4.0, "try": 32.0,
}  # fmt: skip
"""Units of a currency per US dollar."""

_WHOLE_UNIT_STEP = {"jpy": 10, "krw": 100}
"""Currencies priced in whole units, with their price step."""

_MARKET_SIZE = {
    "us": 1.0, "cn": 0.9, "jp": 0.45, "in": 0.35, "gb": 0.3, "de": 0.28, "br": 0.25, "fr": 0.22,
    "kr": 0.2, "ca": 0.15, "ru": 0.15, "mx": 0.14, "it": 0.13, "es": 0.13, "au": 0.12,
}  # fmt: skip
"""Relative market size; other countries get 0.03-0.1 from a hash."""

_DNA_FIELDS = ("class_id", "class_label", "subclass_id", "subclass_label")
_PRIVACY_LABELS_START = date(2020, 12, 14).toordinal()

# --------------------------------------------------------------------------------------------
# Themes: where titles, categories, descriptions and search words come from
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Theme:
    key: str
    ios_categories: tuple[str, ...]  # the primary genre first (6014 then a subgenre for games)
    ios_extra: tuple[str, ...]  # candidates for one optional extra genre
    android_category: str
    android_extra: tuple[str, ...]
    dna: tuple[int, str, int, str]  # class_id, class_label, subclass_id, subclass_label
    heads: tuple[str, ...]  # first title word; heads[0] + tails[0] is the theme's example title
    tails: tuple[str, ...]
    tags: tuple[str, ...]  # extra search words
    taglines: tuple[str, ...]  # subtitles / short descriptions / title suffixes
    purpose: str  # "... helps you <purpose>."
    features: tuple[str, ...]
    permissions: tuple[str, ...]  # android permissions beyond the common ones

    @property
    def is_game(self) -> bool:
        return self.ios_categories[0] == "6014"


def _theme(
    key: str,
    ios: str,
    ios_extra: str,
    android: str,
    android_extra: str,
    dna: tuple[int, str, int, str],
    heads: str,
    tails: str,
    tags: str,
    taglines: tuple[str, ...],
    purpose: str,
    features: tuple[str, ...],
    permissions: str = "",
) -> _Theme:
    return _Theme(
        key, tuple(ios.split()), tuple(ios_extra.split()), android, tuple(android_extra.split()), dna,
        tuple(heads.split()), tuple(tails.split()), tuple(tags.split()), taglines, purpose, features,
        tuple(f"android.permission.{p}" for p in permissions.split()),
    )  # fmt: skip


# Arguments: key, iphone/ipad genres, extra genre candidates, android category, extra category candidates, dna,
# title heads, title tails, search tags, taglines, purpose, features, android permissions.
# fmt: off
_THEMES: tuple[_Theme, ...] = (
    _theme(
        "photo", "6008", "6027 6016", "PHOTOGRAPHY", "ART_AND_DESIGN", (3, "Photo & Video", 301, "Photo Editing"),
        "Photo Picture Camera Selfie Collage Snap", "Editor Studio Lab Filters Maker Fx",
        "photo editor edit filter picture camera",
        ("Edit photos like a pro", "Filters, collages & retouch", "Beautiful edits in one tap"),
        "edit your photos like a pro",
        ("Dozens of hand-crafted filters & presets", "One-tap background removal",
         "Collage layouts for every occasion", "Curves, HSL & selective color tools"),
        "CAMERA READ_MEDIA_IMAGES",
    ),
    _theme(
        "budget", "6015", "6007", "FINANCE", "PRODUCTIVITY", (5, "Finance", 501, "Budgeting"),
        "Budget Money Expense Wallet Savings Penny", "Planner Tracker Manager Book Keeper Buddy",
        "budget money finance expense planner saving",
        ("Budget, save & track spending", "Your money, finally organised", "Expense tracker & bill planner"),
        "plan your budget and take control of your money",
        ("Track income & expenses in seconds", "Monthly budgets with smart alerts",
         "Bill reminders so you're never late", "Charts that show where your money goes"),
    ),
    _theme(
        "puzzle", "6014 7012", "7003 7009", "GAME_PUZZLE", "GAME_CASUAL", (1, "Games", 112, "Puzzle"),
        "Puzzle Block Jigsaw Tile Gem Brain", "Quest Match Mania Blast Master Saga",
        "puzzle game logic brain match",
        ("Relaxing brain puzzles", "Match, solve & unwind", "Thousands of levels to beat"),
        "relax and train your brain",
        ("Thousands of hand-made levels", "Daily challenges & weekly events", "Play offline, anytime",
         "Boosters to get past the trickiest puzzles"),
    ),
    _theme(
        "meditation", "6013", "6012", "HEALTH_AND_FITNESS", "LIFESTYLE", (6, "Health & Fitness", 603, "Mindfulness"),
        "Meditation Calm Mindful Sleep Breathe Zen", "Timer Sounds Guide Space Journal Moments",
        "meditation meditate mindfulness sleep relax calm",
        ("Meditate, sleep & relax", "Guided meditation for busy days", "Breathe, focus & rest better"),
        "meditate, sleep better and feel calmer",
        ("Hundreds of guided meditations", "Sleep stories & soothing soundscapes",
         "Breathing exercises for stress relief", "Mindful reminders & streaks"),
    ),
    _theme(
        "running", "6013", "6004 6010", "HEALTH_AND_FITNESS", "SPORTS", (6, "Health & Fitness", 601, "Running"),
        "Running Run Pace Marathon Jogging Stride", "Tracker Coach Log Club Counter Buddy",
        "running run tracker gps jogging marathon",
        ("GPS run tracker & coach", "Run faster, run further", "Training plans for every runner"),
        "track every run and reach your goals",
        ("Accurate GPS tracking of distance & pace", "Audio coaching during your run",
         "Training plans from 5K to marathon", "Heart-rate zones & splits"),
        "ACCESS_FINE_LOCATION ACTIVITY_RECOGNITION",
    ),
    _theme(
        "recipes", "6023", "6012", "FOOD_AND_DRINK", "LIFESTYLE", (7, "Food & Drink", 701, "Recipes"),
        "Recipe Cooking Kitchen Meal Chef Baking", "Box Book Planner Ideas Helper Journal",
        "recipes recipe cooking food meal dinner",
        ("Easy recipes for every day", "Cook, plan & shop smarter", "Meal plans & grocery lists"),
        "cook delicious meals without the stress",
        ("Thousands of easy, tested recipes", "Weekly meal planner", "Smart grocery list sorted by aisle",
         "Step-by-step cooking mode"),
    ),
    _theme(
        "weather", "6001", "6002", "WEATHER", "TOOLS", (8, "Weather", 801, "Forecasts"),
        "Weather Storm Rain Forecast Sky Radar", "Live Now Alerts Watch Today Pro",
        "weather forecast radar rain storm",
        ("Live radar & forecasts", "Hyperlocal weather alerts", "Rain, storms & more"),
        "know the weather before it happens",
        ("Minute-by-minute rain forecast", "Live radar maps", "Severe weather alerts", "Home-screen widgets"),
        "ACCESS_COARSE_LOCATION",
    ),
    _theme(
        "notes", "6007", "6000", "PRODUCTIVITY", "BUSINESS", (9, "Productivity", 901, "Notes & Tasks"),
        "Notes Task Todo Focus Habit Daily", "Pad List Planner Flow Board Journal",
        "notes todo task list planner productivity habit",
        ("Notes, lists & reminders", "Plan your day, get it done", "Your second brain"),
        "capture ideas and get things done",
        ("Quick notes with rich formatting", "To-do lists with due dates", "Habit tracker & streaks",
         "Sync across all your devices"),
    ),
    _theme(
        "scanner", "6002", "6007 6000", "TOOLS", "PRODUCTIVITY", (10, "Utilities", 1001, "Documents"),
        "PDF Document QR Scan File Smart", "Scanner Reader Manager Converter Kit Tools",
        "scanner scan pdf document qr reader",
        ("Scan documents to PDF", "PDF & QR scanner", "Scan, sign & share"),
        "scan, sign and share documents in seconds",
        ("Scan documents to sharp PDFs", "Text recognition (OCR)", "Sign & fill forms", "QR & barcode reader"),
        "CAMERA",
    ),
    _theme(
        "vpn", "6002", "6026", "TOOLS", "COMMUNICATION", (10, "Utilities", 1002, "Privacy & Security"),
        "VPN Secure Proxy Shield Private Guard", "Master Tunnel Connect Net Fast Unlimited",
        "vpn proxy secure private privacy",
        ("Fast, private VPN", "Secure Wi-Fi in one tap", "Private browsing anywhere"),
        "browse privately on any network",
        ("One-tap secure connection", "Servers in 50+ countries", "No-logs policy", "Protection on public Wi-Fi"),
        "FOREGROUND_SERVICE",
    ),
    _theme(
        "music", "6011", "6016", "MUSIC_AND_AUDIO", "ENTERTAINMENT", (11, "Music", 1101, "Streaming & Radio"),
        "Music Radio Beat Tune Song Audio", "Player Box Stream Mixer Maker FM",
        "music radio songs player audio",
        ("Music & radio, your way", "Millions of songs offline", "Stream, mix & play"),
        "listen to the music you love",
        ("Millions of songs & stations", "Offline listening", "Smart playlists made for you",
         "Equalizer & sleep timer"),
        "FOREGROUND_SERVICE",
    ),
    _theme(
        "language", "6017", "6006", "EDUCATION", "BOOKS_AND_REFERENCE", (12, "Education", 1201, "Language Learning"),
        "Language Word Spanish French Vocab Lingo", "Tutor Coach Academy Trainer Flashcards Lessons",
        "language learn learning spanish french vocabulary",
        ("Learn a language for free", "Speak a new language fast", "Bite-sized language lessons"),
        "learn a new language in minutes a day",
        ("Bite-sized lessons for 20+ languages", "Speech practice with instant feedback",
         "Spaced-repetition flashcards", "Offline lessons"),
        "RECORD_AUDIO",
    ),
    _theme(
        "racing", "6014 7013", "7016 7015", "GAME_RACING", "GAME_ARCADE", (1, "Games", 113, "Racing"),
        "Drift Turbo Street Moto Rally Nitro", "Racing Racer Rush Legends Kings Speed",
        "racing race car drift game",
        ("Drift, race & win", "Real racing on the go", "Tune cars & beat rivals"),
        "race the fastest cars in the world",
        ("Over 100 licensed cars", "Online multiplayer races", "Deep car tuning & upgrades",
         "Stunning tracks & weather"),
    ),
    _theme(
        "action", "6014 7001", "7002", "GAME_ACTION", "GAME_ADVENTURE", (1, "Games", 101, "Action"),
        "Shadow Sniper Battle Zombie Space Ninja", "Strike Warfare Heroes Shooter Survival Arena",
        "action shooter battle game fps",
        ("Epic battles await", "Shoot, survive & win", "Action-packed missions"),
        "fight epic battles with friends",
        ("Fast-paced 5v5 battles", "Dozens of weapons & skins", "Story missions & boss fights", "Clans & tournaments"),
    ),
    _theme(
        "strategy", "6014 7017", "7015", "GAME_STRATEGY", "GAME_SIMULATION", (1, "Games", 117, "Strategy"),
        "Kingdom Empire Castle Clash Tower War", "Defense Builder Legends Conquest Tactics Realms",
        "strategy war kingdom build defense game",
        ("Build, defend & conquer", "Rule your empire", "Tactical battles online"),
        "build an empire and outsmart your rivals",
        ("Build & upgrade your kingdom", "Real-time alliance wars", "Hundreds of heroes to collect", "Seasonal events"),
    ),
    _theme(
        "casual", "6014 7003", "7015 7009", "GAME_CASUAL", "GAME_SIMULATION", (1, "Games", 103, "Casual"),
        "Merge Idle Cat Candy Bubble Farm", "Town Tycoon Story Pop Garden Cafe",
        "casual merge idle farm game",
        ("Merge, build & relax", "Your cozy town awaits", "Idle fun for everyone"),
        "relax and build your dream town",
        ("Merge items to discover new ones", "Decorate your own town", "Play with friends", "New events every week"),
    ),
    _theme(
        "word", "6014 7019", "7012 7018", "GAME_WORD", "GAME_PUZZLE GAME_TRIVIA", (1, "Games", 119, "Word"),
        "Word Crossword Letter Spelling Anagram Alpha", "Search Connect Stack Cross Hunt Puzzles",
        "word crossword puzzle game vocabulary",
        ("Word puzzles for smart minds", "Find words, grow your vocabulary", "Daily crosswords"),
        "find words and sharpen your mind",
        ("Thousands of word puzzles", "A new crossword every day", "Hints when you're stuck", "Play in 10 languages"),
    ),
    _theme(
        "cards", "6014 7005", "7006 7004", "GAME_CARD", "GAME_CASINO GAME_BOARD", (1, "Games", 105, "Card"),
        "Solitaire Poker Spades Rummy Hearts Blackjack", "Classic Club Royale Deluxe Masters Tour",
        "card cards solitaire poker game",
        ("Classic card games", "Play cards with friends", "The card game you love"),
        "enjoy classic card games anywhere",
        ("Classic rules & custom variants", "Online tables with friends", "Daily challenges & trophies",
         "Beautiful card decks"),
    ),
    _theme(
        "rpg", "6014 7014", "7002", "GAME_ROLE_PLAYING", "GAME_ADVENTURE", (1, "Games", 114, "Role Playing"),
        "Dragon Dungeon Legend Hero Quest Rune", "Saga Chronicles Raiders Odyssey Tales Realm",
        "rpg role playing adventure dungeon game",
        ("An epic fantasy RPG", "Collect heroes, raid dungeons", "Your legend begins"),
        "collect heroes and explore a fantasy world",
        ("Hundreds of heroes to collect", "Raids, dungeons & guild wars", "Deep gear & skill system",
         "A story-driven campaign"),
    ),
    _theme(
        "navigation", "6010", "6003", "MAPS_AND_NAVIGATION", "TRAVEL_AND_LOCAL", (13, "Navigation", 1301, "Maps"),
        "Map GPS Route Trail Transit Offline", "Navigator Finder Planner Maps Guide Compass",
        "map maps gps navigation route offline",
        ("Offline maps & GPS", "Turn-by-turn navigation", "Find your way anywhere"),
        "find your way, even offline",
        ("Offline maps for 200 countries", "Turn-by-turn voice navigation", "Live traffic & speed cameras",
         "Hiking & cycling trails"),
        "ACCESS_FINE_LOCATION",
    ),
    _theme(
        "shopping", "6024", "6012", "SHOPPING", "LIFESTYLE", (14, "Shopping", 1401, "Deals"),
        "Deal Coupon Shop Cart Price Bargain", "Finder Hunter Club Saver Market List",
        "shopping deals coupons discount shop",
        ("Deals, coupons & cashback", "Shop smarter, save more", "Price alerts for everything"),
        "save money every time you shop",
        ("Coupons for thousands of stores", "Price-drop alerts", "Cashback on every purchase", "Shared shopping lists"),
    ),
    _theme(
        "news", "6009", "6021", "NEWS_AND_MAGAZINES", "", (15, "News", 1501, "Headlines"),
        "News Daily Headline World Local Brief", "Now Digest Today Wire Feed Reader",
        "news headlines breaking local",
        ("Breaking news & headlines", "The news that matters to you", "Your daily briefing"),
        "stay on top of the news that matters",
        ("Breaking news alerts", "Local & world coverage", "A personalised daily briefing", "Listen to the news"),
    ),
    _theme(
        "chat", "6005", "6007", "COMMUNICATION", "SOCIAL", (16, "Social", 1601, "Messaging"),
        "Chat Message Friend Group Voice Hello", "Messenger Talk Circle Connect Hub Chat",
        "chat messenger message video call",
        ("Free messages & calls", "Chat with friends & groups", "Private messaging"),
        "stay close to the people who matter",
        ("Free messages, voice & video calls", "Group chats up to 500 people", "End-to-end encryption",
         "Stickers & GIFs"),
        "CAMERA RECORD_AUDIO READ_CONTACTS",
    ),
    _theme(
        "video", "6016", "6008", "VIDEO_PLAYERS", "ENTERTAINMENT", (17, "Entertainment", 1701, "Video"),
        "Video Movie TV Cinema Stream Clip", "Player Box Hub Guide Now Plus",
        "video movies tv streaming player",
        ("Movies & TV, anywhere", "Stream & watch offline", "Your video library"),
        "watch movies and shows anywhere",
        ("Thousands of movies & series", "Download to watch offline", "Chromecast & AirPlay support",
         "Personal watchlist"),
    ),
    _theme(
        "workout", "6013", "6004", "HEALTH_AND_FITNESS", "SPORTS", (6, "Health & Fitness", 602, "Workouts"),
        "Workout Fitness Yoga Home Gym HIIT", "Trainer Coach Planner Club Studio Routine",
        "workout fitness gym yoga exercise training",
        ("Home workouts, no equipment", "Get fit in 20 minutes", "Your personal trainer"),
        "get fit with short, effective workouts",
        ("Workouts for every level", "Follow-along video guidance", "Plans that adapt to your progress",
         "Track calories & activity"),
        "ACTIVITY_RECOGNITION",
    ),
    _theme(
        "travel", "6003", "6010", "TRAVEL_AND_LOCAL", "MAPS_AND_NAVIGATION", (18, "Travel", 1801, "Trip Planning"),
        "Travel Trip Hotel Flight Journey Roam", "Planner Booking Guide Tracker Buddy Deals",
        "travel trip hotel flight booking",
        ("Plan trips, book stays", "Cheap flights & hotels", "Your trip, organised"),
        "plan and book your next trip",
        ("Compare flights & hotels", "Itineraries in one place", "Offline city guides", "Price alerts for your routes"),
    ),
    _theme(
        "books", "6018", "6006", "BOOKS_AND_REFERENCE", "COMICS", (19, "Books", 1901, "Reading"),
        "Book Story Audiobook Novel Read Page", "Reader Library Shelf Club Stories Box",
        "books reading ebooks audiobooks stories",
        ("Ebooks & audiobooks", "Read more every day", "Stories you can't put down"),
        "read and listen to great books",
        ("Thousands of ebooks & audiobooks", "Read offline", "Adjustable fonts & night mode", "Reading goals & stats"),
    ),
    _theme(
        "business", "6000", "6007", "BUSINESS", "PRODUCTIVITY", (20, "Business", 2001, "Small Business"),
        "Invoice Meeting Team Time CRM Office", "Maker Manager Tracker Suite Hub Scheduler",
        "invoice business crm team meeting",
        ("Invoices & estimates fast", "Run your business anywhere", "Teamwork made simple"),
        "run your business from your phone",
        ("Professional invoices in seconds", "Track time & expenses", "Client management", "Online payments"),
    ),
    _theme(
        "medical", "6020", "6013", "MEDICAL", "HEALTH_AND_FITNESS", (21, "Medical", 2101, "Health Tracking"),
        "Pill Health Symptom Period Medication Pressure", "Reminder Tracker Checker Log Diary Monitor",
        "medication pill reminder health tracker",
        ("Medication reminders", "Track symptoms & health", "Your health diary"),
        "stay on top of your health",
        ("Medication & refill reminders", "Symptom & mood diary", "Reports to share with your doctor",
         "Private & secure"),
    ),
    _theme(
        "sports", "6004", "6009", "SPORTS", "NEWS_AND_MAGAZINES", (22, "Sports", 2201, "Scores"),
        "Score Football Soccer Basketball Golf Tennis", "Live Scores Stats Fan Manager Center",
        "sports scores live football soccer",
        ("Live scores & news", "Every match, every league", "Stats, scores & highlights"),
        "follow every match as it happens",
        ("Live scores from 1,000+ leagues", "Instant goal alerts", "Stats & line-ups", "Video highlights"),
    ),
    _theme(
        "design", "6027", "6008", "ART_AND_DESIGN", "PHOTOGRAPHY", (23, "Graphics & Design", 2301, "Design Tools"),
        "Logo Sketch Draw Paint Poster Font", "Maker Pad Studio Designer Pro Book",
        "design logo drawing sketch poster",
        ("Design anything, fast", "Logos, posters & more", "Sketch, paint & create"),
        "design logos, posters and drawings",
        ("Thousands of templates", "Brushes & layers", "Fonts & stickers", "Export in high resolution"),
    ),
    _theme(
        "dating", "6005", "6012", "DATING", "SOCIAL", (16, "Social", 1602, "Dating"),
        "Date Match Love Crush Meet Spark", "Finder Chat Singles Connect Now Club",
        "dating date singles meet love",
        ("Meet singles near you", "Dating, made meaningful", "Find your match"),
        "meet people who share your interests",
        ("Smart daily matches", "Video dates", "Verified profiles", "Icebreakers that work"),
        "ACCESS_COARSE_LOCATION CAMERA",
    ),
    _theme(
        "kids", "6014 7008", "7009", "GAME_EDUCATIONAL", "EDUCATION", (1, "Games", 108, "Educational"),
        "ABC Math Kids Alphabet Number Toddler", "Games Learning Academy Fun World Adventure",
        "kids learning games abc math toddler",
        ("Learning games for kids", "Play, learn & grow", "ABCs, numbers & more"),
        "help children learn through play",
        ("Games designed by teachers", "ABCs, phonics & numbers", "Safe & ad-free for kids", "Progress for parents"),
    ),
)
# fmt: on

_EXAMPLE_THEMES: tuple[str, ...] = ("photo", "budget", "puzzle", "meditation", "running", "recipes")
"""Themes of the example apps, in the order of :attr:`World.EXAMPLE_KEYWORDS`."""

_TITLE_PREFIXES = (
    "Pixel",
    "Smart",
    "Easy",
    "Simple",
    "My",
    "Super",
    "Tiny",
    "Happy",
    "Daily",
    "Pocket",
    "Magic",
    "Neo",
)
_TITLE_SUFFIXES = ("Pro", "Plus", "Lite", "HD", "Go", "2", "X", "Deluxe", "Premium", "360")
_DEV_FIRST = ("Bright", "North", "Blue", "Silver", "Red", "Happy", "Tiny", "Cloud", "Iron", "Green", "Sun", "Moon",
              "Star", "Swift", "Clever", "Lucky", "Golden", "Quiet", "Wild", "Polar")  # fmt: skip
_DEV_SECOND = ("leaf", "wind", "crane", "fox", "otter", "forge", "pine", "stone", "wave", "bit", "spark", "path",
               "field", "harbor", "peak")  # fmt: skip
_DEV_SUFFIXES = ("Labs", "Studios", "Apps", "Software", "Games", "Inc.", "LLC", "Ltd", "Media", "Technologies")
_PACKAGE_TLDS = ("com", "com", "com", "com", "io", "net", "app")

_GENERIC_FEATURES = ("Dark mode & home-screen widgets", "Works offline", "No account needed to start")
_PRESS = ("App Reviewers Weekly", "The Daily Tech", "Mobile Picks", "Gadget Journal")
_QUOTES = ("A must-have app", "Beautifully designed & easy to use", "Simply the best in its class", "It's a joy to use")
_NOTE_LINES = (
    "Bug fixes and performance improvements.",
    "Fixed a crash that could occur on launch for some users.",
    "Improved stability & faster start-up.",
    "Updated translations.",
    "Small design tweaks throughout the app.",
    "Support for the latest OS version.",
)
_PROMOTIONS = ("Limited time: 50% off Premium!", "New this month: {feature}.", "Join millions of happy users today.")
_COMMON_PERMISSIONS = ("android.permission.INTERNET", "android.permission.ACCESS_NETWORK_STATE")
_EXTRA_PERMISSIONS = (
    "android.permission.WAKE_LOCK",
    "android.permission.POST_NOTIFICATIONS",
    "android.permission.VIBRATE",
    "android.permission.RECEIVE_BOOT_COMPLETED",
    "com.android.vending.BILLING",
    "com.google.android.c2dm.permission.RECEIVE",
)
_IPHONE_KEY_SHARES = (
    ("iphone_6_5", 1.0), ("iphone", 0.05), ("iphone5", 0.1), ("iphone_5_8", 0.3), ("iphone6", 0.2), ("iphone6plus", 0.8)
)  # fmt: skip
"""Screenshot keys an app fills on iphone, with the share of apps that fill them."""
_IPAD_KEY_SHARES = (("ipad", 0.3), ("ipadPro", 0.7), ("ipadPro_2018", 1.0))
_VIDEO_SIZES = {
    "iphone_6_5": (886, 1920),
    "iphone6plus": (1080, 1920),
    "ipadPro": (1200, 1600),
    "ipadPro_2018": (1600, 1200),
}
_USD_TIERS = (0.99, 1.99, 2.99, 3.99, 4.99, 6.99, 9.99, 14.99, 19.99, 29.99, 49.99)
_SUBSCRIPTION_PERIODS = ("P1W", "P1M", "P1M", "P3M", "P6M", "P1Y", "P1Y")
_GAME_PURCHASES = ("Pile of Coins", "Bag of Gems", "Starter Pack", "Remove Ads", "Chest of Gold", "VIP Pass")
_APP_PURCHASES = ("Remove Ads", "Lifetime Unlock", "Pro Upgrade", "Theme Pack")

# Change targets in the order records of one day are listed.
_TARGET_ORDER = {
    name: i
    for i, name in enumerate(("version", "size", "icon", "screenshots", "long_description", "privacy_info", "title",
                              "subtitle", "short_description"))
}  # fmt: skip
# Targets an A/B test can touch (is_ab_test may be true for them).
_AB_TESTABLE = frozenset({"icon", "screenshots", "long_description", "title", "subtitle", "short_description"})

# --------------------------------------------------------------------------------------------
# Hashing and small helpers
# --------------------------------------------------------------------------------------------


def _hash_int(*parts: object) -> int:
    """A stable 64-bit integer from the parts (blake2b; never the salted built-in ``hash``)."""
    text = "\x1f".join(map(str, parts))
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


def _unit(*parts: object) -> float:
    """A stable float in [0, 1) from the parts."""
    return _hash_int(*parts) / 18446744073709551616.0


def _token(*parts: object, size: int = 16) -> bytes:
    text = "\x1f".join(map(str, parts))
    return hashlib.blake2b(text.encode(), digest_size=size).digest()


def _uuid(raw: bytes) -> str:
    h = raw.hex().upper()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def _day_text(ordinal: int) -> str:
    return date.fromordinal(ordinal).isoformat()


def _timestamp(ordinal: int, seconds: int) -> str:
    moment = datetime.combine(date.fromordinal(ordinal), datetime.min.time(), UTC) + timedelta(seconds=seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _localize(text: str, language: str) -> str:
    return text if language == "en" or not text else f"[{language}] {text}"


def _html(text: str) -> str:
    """Escape text the way the android store does (``&amp;``, ``&quot;``, ``&#39;``)."""
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&#39;")
    )


_WORD = re.compile(r"[^\W_]+")


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


@functools.lru_cache(maxsize=4096)
def _words(text: str) -> frozenset[str]:
    """The stemmed words of a text, for matching keywords against apps."""
    return frozenset(_stem(w) for w in _WORD.findall(text.lower()))


def _normalize_keyword(keyword: str) -> str:
    return " ".join(keyword.lower().split())


def _local_price(usd: float, currency: str) -> str:
    """A store price tier in a currency: charm prices (``x.99``) or whole units for jpy/krw."""
    amount = usd * _USD_RATE.get(currency, 1.0)
    step = _WHOLE_UNIT_STEP.get(currency)
    if step:
        return str(max(step, round(amount / step) * step))
    return f"{math.ceil(amount) - 0.01:.2f}"


def _round_to_precision(value: float) -> tuple[int, int]:
    """Round to three significant digits; return ``(value, precision)``, the precision being the step."""
    step = 10 ** max(0, math.floor(math.log10(value)) - 2) if value >= 1 else 1
    return round(value / step) * step, step


# --------------------------------------------------------------------------------------------
# Closed-form event calendars
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Calendar:
    """Events ``k = 0, 1, 2, ...`` on day ``anchor + k * interval + jitter(k)`` (ordinals).

    ``jitter(0) = 0`` and ``|jitter(k)| < interval / 3``, so events are strictly ordered and the
    event nearest to any day is ``round((day - anchor) / interval)``.
    """

    key: str
    anchor: int
    interval: int

    def day_of(self, k: int) -> int:
        if k == 0:
            return self.anchor
        span = (self.interval - 1) // 3
        return self.anchor + k * self.interval + _hash_int(self.key, k) % (2 * span + 1) - span

    def last_event(self, day: int) -> int:
        """The number of the last event on or before ``day``; -1 before the anchor."""
        if day < self.anchor:
            return -1
        k = round((day - self.anchor) / self.interval)
        return k if self.day_of(k) <= day else k - 1

    def events_between(self, first: int, last: int) -> list[int]:
        """Numbers of the events from day ``first`` to day ``last``, both included."""
        k = self.last_event(first - 1) + 1
        events = []
        while self.day_of(k) <= last:
            events.append(k)
            k += 1
        return events


# --------------------------------------------------------------------------------------------
# The catalogue (built eagerly, light) and the app profiles (built lazily)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Developer:
    id: int | str  # int on iphone/ipad, numeric text on android
    name: str
    slug: str
    tld: str

    @property
    def email(self) -> str:
        return f"support@{self.slug}.example.com"

    @property
    def website(self) -> str:
        return f"https://www.{self.slug}.example.com"


@dataclass(frozen=True, slots=True)
class _App:
    app_id: str
    store: str
    theme: _Theme
    title: str
    words: frozenset[str]  # stemmed words of title and theme tags, for search relevance
    title_words: frozenset[str]
    categories: tuple[str, ...]
    popularity: float  # about N(0, 1); the example apps are above 1.5
    developer: _Developer


@dataclass(frozen=True, slots=True)
class _Purchase:
    id: int
    name: str
    description: str
    usd: float
    period: str  # "" unless a subscription
    family_shareable: bool
    merchandised: bool


@dataclass(frozen=True, slots=True)
class _Profile:
    """Everything static about an app beyond the catalogue, drawn from its own RNG."""

    app: _App
    first_release: int  # ordinal
    versions: _Calendar
    start_major: int
    patches_per_minor: int
    releases_per_major: int
    icons: _Calendar
    titles: _Calendar
    privacy: _Calendar
    privacy_base: tuple[frozenset[str], ...]  # one set of PRIVACY_TYPES per PRIVACY_SECTIONS
    local_intervals: dict[str, int]  # per-country calendars: screenshots, long_description, tagline
    size_base: int
    size_step: int
    price_usd: float  # 0.0 for free apps
    purchases: tuple[_Purchase, ...]
    rating: float
    promotion: str | None
    quote: str
    extra_features: tuple[str, ...]
    shot_count: int
    shot_periods: tuple[int, ...]  # per slot: 0 = never replaced, p = replaced every p screenshot changes
    iphone_keys: tuple[str, ...]
    ipad_keys: tuple[str, ...]
    watch_keys: tuple[str, ...]
    screenshot_hash: bool
    video_keys: tuple[str, ...]  # iphone/ipad video keys with videos; android: non-empty means one video
    game_center: bool
    passbook: bool
    controller_supported: bool
    controller_required: bool
    related: tuple[str, ...]
    permissions: tuple[str, ...]
    tagline_offset: int
    arpu: float  # revenue per download in USD


@dataclass(frozen=True, slots=True)
class _RankingModel:
    """The day-independent part of one keyword's ranking in one store and country."""

    app_ids: tuple[str, ...]
    relevance: tuple[float, ...]
    amplitude: tuple[float, ...]
    angular_speed: tuple[float, ...]
    phase: tuple[float, ...]
    depth: int  # results the store shows (history length); live shows min(depth, 250)
    bidders: tuple[str, ...]  # apps that ever buy the keyword's ads, the steady ones first (moves.advertisers)
    risers: tuple[int, ...]  # indexes an episode may boost: ranked 11-60 by relevance
    leaders: tuple[int, ...]  # indexes an episode may drop: the top 12 by relevance
    episodes_key: str  # names the ranking's episode calendar (moves.episodes)
    rhythm: tuple[tuple[int, tuple[float, ...]], ...]  # (index, shift per weekday) of apps with a weekly rhythm
    listed: tuple[int, ...]  # the top 60 by relevance: their listing changes may move them (moves.listing_jumps)


_LIVE_CAP = 250
_HISTORY_CAP = {"ios": 500, "android": 250}
_MIN_RESULTS = 40
_DRIFT_NOISE = 0.12
_RELEVANT = 60
"""Apps among the top 60 by relevance of a keyword have weekly rhythms and jump after listing changes."""
_JUMP_BLOCK = 28
"""Listing jumps are worked out (and cached) per block of 28 days of a ranking."""


class World:
    """A deterministic synthetic app-store world (see the module docstring for how it is made).

    >>> world = World(seed=0)
    >>> len(world.app_ids("ios")), len(world.app_ids("android"))
    (800, 600)
    """

    EXAMPLE_KEYWORDS: tuple[str, ...] = ("photo editor", "budget planner", "puzzle games", "meditation",
                                         "running tracker", "recipes")  # fmt: skip
    """Keywords that are always tracked; each has one example app of each store ranking high."""

    UNTRACKED_KEYWORD: str = "untracked keyword"
    """A keyword whose history is never tracked (its history falls back to live search only)."""

    EXAMPLE_IOS_APPS: tuple[str, ...]
    """Six popular iphone/ipad apps available everywhere, one per example keyword."""

    EXAMPLE_ANDROID_APPS: tuple[str, ...]
    """Six popular android apps available everywhere, one per example keyword."""

    UNAVAILABLE_IN_US: tuple[str, ...]
    """Two apps of each store (iphone/ipad first) that exist but are not available in ``"us"``."""

    def __init__(self, seed: int = 0, *, ios_apps: int = 800, android_apps: int = 600) -> None:
        """Build the catalogue of a world.

        Args:
            seed: every answer is a pure function of the seed and the call's arguments.
            ios_apps: apps in the iphone/ipad store (at least 12; 500-result histories need 500+).
            android_apps: apps in the android store (at least 12).
        """
        if min(ios_apps, android_apps) < 12:
            raise ValueError("a world needs at least 12 apps per store")
        self.seed = seed
        self._apps: dict[str, tuple[_App, ...]] = {
            "ios": self._build_catalogue("ios", ios_apps),
            "android": self._build_catalogue("android", android_apps),
        }
        self._index: dict[str, dict[str, _App]] = {s: {a.app_id: a for a in apps} for s, apps in self._apps.items()}
        self._theme_members: dict[str, dict[str, tuple[str, ...]]] = {}
        for store, apps in self._apps.items():
            members: dict[str, list[str]] = {}
            for app in apps:
                members.setdefault(app.theme.key, []).append(app.app_id)
            self._theme_members[store] = {k: tuple(v) for k, v in members.items()}
        self.EXAMPLE_IOS_APPS = tuple(a.app_id for a in self._apps["ios"][: len(_EXAMPLE_THEMES)])
        self.EXAMPLE_ANDROID_APPS = tuple(a.app_id for a in self._apps["android"][: len(_EXAMPLE_THEMES)])
        self._examples = frozenset(self.EXAMPLE_IOS_APPS + self.EXAMPLE_ANDROID_APPS)
        picker = random.Random(f"{seed}:unavailable-in-us")
        self.UNAVAILABLE_IN_US = tuple(
            app_id
            for store in ("ios", "android")
            for app_id in picker.sample([a.app_id for a in self._apps[store][len(_EXAMPLE_THEMES) :]], 2)
        )
        self._unavailable_in_us = frozenset(self.UNAVAILABLE_IN_US)
        self._profile: Callable[[str, str], _Profile] = functools.lru_cache(maxsize=None)(self._build_profile)
        self._ranking_model: Callable[[str, str, str, str], _RankingModel] = functools.lru_cache(maxsize=512)(
            self._build_ranking_model
        )
        self._jumps: Callable[[str, str, str, str, int], tuple[tuple[int, int, int, float], ...]] = functools.lru_cache(
            maxsize=1024
        )(self._build_jumps)

    # ---------------------------------------------------------------- catalogue

    def _build_catalogue(self, store: str, count: int) -> tuple[_App, ...]:
        rng = random.Random(f"{self.seed}:{store}:catalogue")
        developers = self._build_developers(rng, store, max(8, count // 3))
        themes_by_key = {t.key: t for t in _THEMES}
        apps: list[_App] = []
        used_ids: set[str] = set()
        for index in range(count):
            is_example = index < len(_EXAMPLE_THEMES)
            theme = themes_by_key[_EXAMPLE_THEMES[index]] if is_example else rng.choice(_THEMES)
            developer = rng.choice(developers)
            title = self._make_title(rng, theme, developer, is_example)
            if store == "ios":
                app_id = str(rng.randrange(284_000_000, 6_800_000_000))
                while app_id in used_ids:
                    app_id = str(rng.randrange(284_000_000, 6_800_000_000))
                extra = theme.ios_extra
                categories = theme.ios_categories
            else:
                slug = "".join(c for c in title.lower() if c.isalnum())
                app_id, n = f"{developer.tld}.{developer.slug}.{slug}", 2
                while app_id in used_ids:
                    app_id, n = f"{developer.tld}.{developer.slug}.{slug}{n}", n + 1
                extra = theme.android_extra
                categories = (theme.android_category,)
            if extra and rng.random() < 0.35:
                categories = (*categories, rng.choice(extra))
            used_ids.add(app_id)
            popularity = 1.5 + abs(rng.gauss(0.0, 0.5)) if is_example else rng.gauss(0.0, 1.0)
            names = IOS_CATEGORIES if store == "ios" else ANDROID_CATEGORIES
            title_words = _words(title)
            words = title_words | _words(" ".join(theme.tags + tuple(names[c] for c in categories)))
            apps.append(_App(app_id, store, theme, title, words, title_words, categories, popularity, developer))
        return tuple(apps)

    @staticmethod
    def _build_developers(rng: random.Random, store: str, count: int) -> list[_Developer]:
        combos = [(f, s) for f in _DEV_FIRST for s in _DEV_SECOND]
        developers = []
        for first, second in rng.sample(combos, min(count, len(combos))):
            name = f"{first}{second} {rng.choice(_DEV_SUFFIXES)}"
            dev_id: int | str = (
                rng.randrange(280_000_000, 1_800_000_000) if store == "ios" else str(rng.randrange(10**18, 10**19))
            )
            developers.append(_Developer(dev_id, name, (first + second).lower(), rng.choice(_PACKAGE_TLDS)))
        return developers

    @staticmethod
    def _make_title(rng: random.Random, theme: _Theme, developer: _Developer, is_example: bool) -> str:
        head, tail = (
            (theme.heads[0], theme.tails[0]) if is_example else (rng.choice(theme.heads), rng.choice(theme.tails))
        )
        if head == tail:
            tail = theme.tails[(theme.tails.index(tail) + 1) % len(theme.tails)]
        pattern = rng.random() * (0.85 if is_example else 1.0)
        if pattern < 0.35:
            return f"{head} {tail}"
        if pattern < 0.6:
            return f"{head} {tail} {rng.choice(_TITLE_SUFFIXES)}"
        if pattern < 0.85:
            return f"{rng.choice(_TITLE_PREFIXES)} {head} {tail}"
        return f"{developer.name.split()[0]}: {head} {tail}"

    def _app(self, store: str, app_id: str) -> _App:
        try:
            return self._index[store][app_id]
        except KeyError:
            raise KeyError(f"no app {app_id!r} in the {store} store of this world") from None

    # ---------------------------------------------------------------- profiles

    def _build_profile(self, store: str, app_id: str) -> _Profile:
        app = self._app(store, app_id)
        theme = app.theme
        rng = random.Random(f"{self.seed}:{store}:{app_id}")
        key = f"{self.seed}:{store}:{app_id}"
        first_release = rng.randrange(date(2010, 7, 1).toordinal(), date(2024, 12, 31).toordinal())
        if app.app_id in self._examples:
            first_release = min(first_release, date(2021, 6, 30).toordinal())
        interval = rng.randint(7, 45)
        is_paid = rng.random() < 0.12
        purchases = self._make_purchases(rng, app, has_purchases=rng.random() < (0.2 if is_paid else 0.6))
        ios = store == "ios"
        shot_count = rng.randint(4, 10)
        related_pool = [a for a in self._theme_members[store][theme.key] if a != app_id]
        related = rng.sample(related_pool, min(len(related_pool), rng.randint(4, 9)))
        related += rng.sample([a.app_id for a in self._apps[store]], 3)
        permissions = list(_COMMON_PERMISSIONS) + list(theme.permissions)
        permissions += rng.sample(_EXTRA_PERMISSIONS, rng.randint(1, 4))
        if purchases and "com.android.vending.BILLING" not in permissions:
            permissions.append("com.android.vending.BILLING")
        game = theme.is_game
        return _Profile(
            app=app,
            first_release=first_release,
            versions=_Calendar(f"{key}:version", first_release, interval),
            start_major=rng.choice((1, 1, 1, 2, 3)),
            patches_per_minor=rng.randint(1, 4),
            releases_per_major=max(4, round(365 * rng.uniform(1.0, 3.0) / interval)),
            icons=_Calendar(f"{key}:icon", first_release, rng.randint(90, 360)),
            titles=_Calendar(f"{key}:title", first_release, rng.randint(300, 900)),
            privacy=_Calendar(f"{key}:privacy", max(first_release, _PRIVACY_LABELS_START), rng.randint(60, 240)),
            privacy_base=tuple(
                frozenset(t for t in PRIVACY_TYPES if rng.random() < share) for share in (0.4, 0.35, 0.15)
            ),
            local_intervals={
                "screenshots": rng.randint(40, 150),
                "long_description": rng.randint(30, 120),
                "tagline": rng.randint(150, 500),
            },
            size_base=int(rng.uniform(150, 900) * 2**20) if (game and ios) else int(rng.uniform(12, 240) * 2**20),
            size_step=rng.randint(20_000, 2_000_000),
            price_usd=rng.choice(_USD_TIERS[:7]) if is_paid else 0.0,
            purchases=purchases,
            rating=round(min(4.95, max(2.2, rng.gauss(4.35, 0.45))), 5),
            promotion=(
                rng.choice(_PROMOTIONS).format(feature=rng.choice(theme.features))
                if ios and rng.random() < 0.55
                else None
            ),
            quote=f'"{rng.choice(_QUOTES)}" - {rng.choice(_PRESS)}',
            extra_features=tuple(rng.sample(_GENERIC_FEATURES, rng.randint(1, 2))),
            shot_count=shot_count,
            shot_periods=(0, 1, *(rng.choice((1, 2, 3)) for _ in range(shot_count - 2))),
            iphone_keys=tuple(k for k, share in _IPHONE_KEY_SHARES if rng.random() < share),
            ipad_keys=tuple(k for k, share in _IPAD_KEY_SHARES if rng.random() < share),
            watch_keys=("appleWatch", "appleWatch_2018") if rng.random() < 0.08 else (),
            screenshot_hash=rng.random() < 0.4,
            video_keys=tuple(k for k in _VIDEO_SIZES if rng.random() < 0.35),
            game_center=game and rng.random() < 0.6,
            passbook=rng.random() < 0.04,
            controller_supported=game and rng.random() < 0.3,
            controller_required=game and rng.random() < 0.03,
            related=tuple(dict.fromkeys(a for a in related if a != app_id)),
            permissions=tuple(dict.fromkeys(permissions)),
            tagline_offset=rng.randrange(len(theme.taglines)),
            arpu=rng.uniform(0.05, 1.5) if (purchases or is_paid) else 0.0,
        )

    @staticmethod
    def _make_purchases(rng: random.Random, app: _App, *, has_purchases: bool) -> tuple[_Purchase, ...]:
        if not has_purchases:
            return ()
        purchases = []
        if not app.theme.is_game or rng.random() < 0.3:
            for period in sorted(set(rng.sample(_SUBSCRIPTION_PERIODS, rng.randint(1, 3)))):
                usd = {"P1W": 2.99, "P1M": 9.99, "P3M": 19.99, "P6M": 29.99, "P1Y": 49.99}[period]
                purchases.append(
                    _Purchase(
                        rng.randrange(1_000_000_000, 6_800_000_000), f"{app.title} Premium ({period[1:]})",
                        f"All premium features of {app.title}, renewed every {period[1:]}.", usd, period,
                        rng.random() < 0.6, rng.random() < 0.2,
                    )
                )  # fmt: skip
        names = _GAME_PURCHASES if app.theme.is_game else _APP_PURCHASES
        for name in rng.sample(names, rng.randint(0 if purchases else 1, 3)):
            purchases.append(
                _Purchase(
                    rng.randrange(1_000_000_000, 6_800_000_000), name, f"{name} for {app.title}.",
                    rng.choice(_USD_TIERS), "", False, rng.random() < 0.2,
                )
            )  # fmt: skip
        return tuple(purchases)

    # ---------------------------------------------------------------- membership and availability

    def app_ids(self, store: str) -> list[str]:
        """All app ids of a store (``"ios"`` or ``"android"``), in a stable order (examples first)."""
        return [a.app_id for a in self._apps[store]]

    def has_app(self, app_id: str, store: str) -> bool:
        """Whether the store of this world holds the app."""
        return app_id in self._index.get(store, {})

    def is_available(self, app_id: str, store: str, country: str) -> bool:
        """Whether the app exists and can be fetched in the country (see the module docstring)."""
        if not self.has_app(app_id, store):
            return False
        if country == "us":
            return app_id not in self._unavailable_in_us
        return app_id in self._examples or _unit(self.seed, store, app_id, country, "available") >= 0.03

    def default_language(self, country: str) -> str:
        """The service's default language of a country (``"en"`` when the country is unknown)."""
        return _COUNTRY_LANGUAGE.get(country.lower(), "en")

    # ---------------------------------------------------------------- field states

    def _local_calendar(self, profile: _Profile, target: str, country: str) -> _Calendar:
        app = profile.app
        key = f"{self.seed}:{app.store}:{app.app_id}:{target}:{country}"
        return _Calendar(key, profile.first_release, profile.local_intervals[target])

    def _version_label(self, profile: _Profile, k: int) -> str:
        major = profile.start_major + k // profile.releases_per_major
        step = k % profile.releases_per_major
        return f"{major}.{step // profile.patches_per_minor}.{step % profile.patches_per_minor}"

    def _release_notes(self, profile: _Profile, k: int, language: str) -> str:
        app = profile.app
        rng = random.Random(f"{self.seed}:{app.store}:{app.app_id}:notes:{k}")
        lines = rng.sample(_NOTE_LINES, rng.randint(1, 2))
        if rng.random() < 0.4:
            lines.insert(0, f"New: {rng.choice(app.theme.features)}.")
        lines = [_localize(line, language) for line in lines]
        if app.store == "ios":
            return "\n".join(f"• {line}" for line in lines) if len(lines) > 1 else lines[0]
        style = rng.random()
        if style < 0.15:
            return ""
        if style < 0.45:
            return "<b>What&#39;s new</b><br>" + "<br>".join(f"• {_html(line)}" for line in lines)
        return "\n".join(lines)

    def _size(self, profile: _Profile, k: int) -> int:
        """App size at release k; consecutive releases always differ (their parities do)."""
        app = profile.app
        wobble = (_unit(self.seed, app.store, app.app_id, "size", k) - 0.5) * 6 * profile.size_step
        half = int((profile.size_base + k * profile.size_step + wobble) / 2)
        return 2 * half + k % 2

    def _icon(self, profile: _Profile, e: int) -> dict[str, str]:
        app = profile.app
        raw = _token(self.seed, app.store, app.app_id, "icon", e)
        if app.store == "android":
            token = base64.urlsafe_b64encode(raw + _token(raw, size=14)).decode().rstrip("=")
            return {"id": raw.hex(), "url": f"https://play-lh.googleusercontent.example/{token}"}
        h = raw.hex()
        path = f"Purple{110 + raw[0] % 20}/v4/{h[0:2]}/{h[2:4]}/{h[4:6]}/{_uuid(raw)}"
        return {
            "id": h,
            "url": f"https://is{1 + raw[1] % 5}-ssl.mzstatic.example/image/thumb/{path}/"
            "AppIcon-0-0-1x_U007emarketing-0-10-0-85-220.png/512x512bb.jpg",
        }

    def _screenshots(
        self, profile: _Profile, country: str, key: str, e: int, *, with_hash: bool
    ) -> list[dict[str, str]]:
        """The screenshots of one device key after ``e`` screenshot changes in a country.

        Slot 0 is never replaced and slot 1 always is, so consecutive sets share and differ.
        """
        app = profile.app
        count = min(profile.shot_count, 5) if key.startswith("appleWatch") else profile.shot_count
        items = []
        for slot in range(count):
            period = profile.shot_periods[slot]
            raw = _token(self.seed, app.store, app.app_id, country, key, slot, e // period if period else 0)
            h = raw.hex()
            if app.store == "android":
                token = base64.urlsafe_b64encode(raw + _token(raw, size=14)).decode().rstrip("=")
                items.append(
                    {"id": h[:16], "path_component": token, "url": f"https://play-lh.googleusercontent.example/{token}"}
                )
                continue
            path = f"Purple{110 + raw[0] % 20}/v4/{h[0:2]}/{h[2:4]}/{h[4:6]}/{_uuid(raw)}"
            filename = f"{key}_{slot + 1}.png"
            item = {"id": h}
            if with_hash:
                item["hash"] = _token(raw, "hash").hex()
            item |= {
                "filename": filename,
                "path_component": path,
                "url": f"https://is{1 + raw[1] % 5}-ssl.mzstatic.example/image/thumb/{path}/{filename}/392x696bb.png",
            }
            items.append(item)
        return items

    def _description(self, profile: _Profile, e: int, language: str, *, html: bool) -> str:
        """The description after ``e`` description changes: the feature list turns by one each time."""
        app = profile.app
        features = app.theme.features + profile.extra_features
        turn = e % len(features)
        features = features[turn:] + features[:turn]
        intro = _localize(f"{app.title} helps you {app.theme.purpose}. It's simple, fast & private.", language)
        paragraphs = [[intro], ["KEY FEATURES"] + [f"• {f}" for f in features], [profile.quote]]
        if any(p.period for p in profile.purchases):
            paragraphs.append(
                ["Subscriptions renew automatically unless cancelled at least 24 hours before the end of the period."]
            )
        paragraphs.append([f"Questions or ideas? Write to us at {app.developer.email}."])
        if not html:
            return "\n\n".join("\n".join(lines) for lines in paragraphs)
        rendered = []
        for lines in paragraphs:
            escaped = [_html(line) for line in lines]
            if lines[0] == "KEY FEATURES":
                escaped[0] = "<b>KEY FEATURES</b>"
            rendered.append("<br>".join(escaped))
        rendered[0] = rendered[0].replace(_html(app.title), f"<b>{_html(app.title)}</b>", 1)
        return "<br><br>".join(rendered)

    def _title(self, profile: _Profile, e: int) -> str:
        app = profile.app
        if e % 2 == 0:
            return app.title
        return f"{app.title}: {app.theme.taglines[(e // 2) % len(app.theme.taglines)]}"

    def _tagline(self, profile: _Profile, e: int, language: str) -> str:
        taglines = profile.app.theme.taglines
        return _localize(taglines[(profile.tagline_offset + e) % len(taglines)], language)

    def _privacy(self, profile: _Profile, e: int) -> dict[str, list[str]]:
        """Privacy labels after ``e`` changes; each change adds or removes one type in one section."""
        app = profile.app
        sections = [set(s) for s in profile.privacy_base]
        for k in range(1, e + 1):
            pick = _hash_int(self.seed, app.store, app.app_id, "privacy-toggle", k)
            section = sections[pick % len(PRIVACY_SECTIONS)]
            section ^= {PRIVACY_TYPES[(pick // 3) % len(PRIVACY_TYPES)]}
        return {name: [t for t in PRIVACY_TYPES if t in s] for name, s in zip(PRIVACY_SECTIONS, sections, strict=True)}

    def _field_states(
        self, profile: _Profile, device: str, country: str, language: str
    ) -> list[tuple[str, _Calendar, Callable[[int], Any]]]:
        """``(target, calendar, value of state e)`` for every target but version and size."""
        ios = profile.app.store == "ios"
        shot_key = ("ipadPro_2018" if device == "ipad" else "iphone_6_5") if ios else "phone"
        states: list[tuple[str, _Calendar, Callable[[int], Any]]] = [
            ("icon", profile.icons, lambda e: self._icon(profile, e)),
            (
                "screenshots",
                self._local_calendar(profile, "screenshots", country),
                lambda e: self._screenshots(profile, country, shot_key, e, with_hash=False),
            ),
            (
                "long_description",
                self._local_calendar(profile, "long_description", country),
                lambda e: self._description(profile, e, language, html=not ios),
            ),
            ("title", profile.titles, lambda e: self._title(profile, e)),
            (
                "subtitle" if ios else "short_description",
                self._local_calendar(profile, "tagline", country),
                lambda e: self._tagline(profile, e, language),
            ),
        ]
        if ios:
            states.append(("privacy_info", profile.privacy, lambda e: self._privacy(profile, e)))
        return states

    # ---------------------------------------------------------------- metadata

    def metadata(self, app_id: str, *, device: str, country: str, language: str, today: date) -> dict[str, Any]:
        """The object under ``result.<app_id>.metadata`` as the store shows it on ``today``.

        The fields are exactly those the service documents for the device's store. ``versions``
        lists the releases on or before ``today``, newest first, at most 25.
        """
        profile = self._profile(store_of(device), app_id)
        day = today.toordinal()
        state = {
            target: value(max(0, calendar.last_event(day)))
            for target, calendar, value in self._field_states(profile, device, country, language)
        }
        if profile.app.store == "android":
            return self._android_metadata(profile, state, day, country, language)
        return self._ios_metadata(profile, state, day, device, country, language)

    def _android_metadata(
        self, profile: _Profile, state: dict[str, Any], day: int, country: str, language: str
    ) -> dict[str, Any]:
        app = profile.app
        latest = profile.versions.last_event(day)
        video_id = _token(self.seed, app.store, app.app_id, "video", size=8).hex()[:11]
        return {
            "title": state["title"],
            "short_description": state["short_description"],
            "long_description": state["long_description"],
            "id": app.app_id,
            "categories": list(app.categories),
            "icon": state["icon"]["url"],
            "screenshots": [s["url"] for s in state["screenshots"]],
            "videos": [f"https://www.youtube.example/embed/{video_id}"] if profile.video_keys else [],
            "size": {"current": {"data": self._size(profile, max(0, latest))}},
            "rating": {"average": self._rating(profile, country)},
            "developer": {
                "id": app.developer.id,
                "name": app.developer.name,
                "email": app.developer.email,
                "website": app.developer.website,
            },
            "price": self._price(profile, country),
            "released_at": None,
            "versions": [
                {
                    "version": self._version_label(profile, k),
                    "release_notes": self._release_notes(profile, k, language),
                    "release_date": self._release_date(profile, k),
                }
                for k in range(latest, max(-1, latest - 25), -1)
            ],
            "similar_apps": list(profile.related),
            "release_date": self._release_date(profile, 0),
            "dna": dict(zip(_DNA_FIELDS, app.theme.dna, strict=True)),
            "permissions": list(profile.permissions),
        }

    def _ios_metadata(
        self, profile: _Profile, state: dict[str, Any], day: int, device: str, country: str, language: str
    ) -> dict[str, Any]:
        app = profile.app
        latest = profile.versions.last_event(day)
        screenshot_epoch = max(0, self._local_calendar(profile, "screenshots", country).last_event(day))
        filled = profile.ipad_keys if device == "ipad" else profile.iphone_keys + profile.watch_keys
        controller: dict[str, bool | str | None] = {
            "required": profile.controller_required,
            "supported": profile.controller_supported or profile.controller_required,
            "requirement_label": None,
        }
        if profile.controller_required:
            controller["requirement_label"] = "Requires a Game Controller"
        elif profile.controller_supported:
            controller["requirement_label"] = "Supports Game Controllers"
        currency = _COUNTRY_CURRENCY.get(country, "usd")
        return {
            "title": state["title"],
            "subtitle": state["subtitle"],
            "promotional_text": _localize(profile.promotion, language) if profile.promotion else None,
            "description": state["long_description"],
            "id": int(app.app_id),
            "categories": [int(c) for c in app.categories],
            "icon": state["icon"]["url"],
            "screenshots": {
                key: (
                    self._screenshots(profile, country, key, screenshot_epoch, with_hash=profile.screenshot_hash)
                    if key in filled
                    else []
                )
                for key in SCREENSHOT_KEYS
            },
            "videos": {
                key: self._videos(profile, key)
                for key in profile.video_keys
                if key.startswith("ipad") == (device == "ipad")
            },
            "size": self._size(profile, max(0, latest)),
            "rating": {"average": self._rating(profile, country)},
            "developer": {"id": app.developer.id, "name": app.developer.name},
            "price": self._price(profile, country),
            "versions": [
                {
                    "version": self._version_label(profile, k),
                    "release_notes": self._release_notes(profile, k, language),
                    "has_game_center": profile.game_center,
                    "game_controller_information": dict(controller),
                    "release_date": self._release_date(profile, k),
                }
                for k in range(latest, max(-1, latest - 25), -1)
            ],
            "release_date": self._release_date(profile, 0),
            "customers_also_bought": list(profile.related),
            "dna": dict(zip(_DNA_FIELDS, app.theme.dna, strict=True)),
            "features": {
                "game_center": profile.game_center,
                "passbook": profile.passbook,
                "in_apps": bool(profile.purchases),
            },
            "in_app_purchases": [
                {
                    "id": p.id,
                    "recurring_subscription_period": p.period,
                    "is_family_shareable": p.family_shareable,
                    "is_merchandise_enabled": p.merchandised,
                    "is_subscription": bool(p.period),
                    "is_merchandise_visible": p.merchandised,
                    "subscription_family_name": f"{app.title} Premium" if p.period else "",
                    "artwork": None,
                    "rank": rank,
                    "name": p.name,
                    "description": _localize(p.description, language),
                    "price": {"value": _local_price(p.usd, currency), "currency": currency},
                    "discounts": None,
                }
                for rank, p in enumerate(profile.purchases, start=1)
            ],
        }

    def _price(self, profile: _Profile, country: str) -> str:
        """The app's price in the country's currency; ``""`` for free apps."""
        return _local_price(profile.price_usd, _COUNTRY_CURRENCY.get(country, "usd")) if profile.price_usd else ""

    def _rating(self, profile: _Profile, country: str) -> float:
        """The average rating in a country: the app's rating give or take 0.15."""
        app = profile.app
        shift = (_unit(self.seed, app.store, app.app_id, country, "rating") - 0.5) * 0.3
        return round(min(5.0, max(1.0, profile.rating + shift)), 5)

    def _release_date(self, profile: _Profile, k: int) -> str:
        app = profile.app
        seconds = _hash_int(self.seed, app.store, app.app_id, "release-time", k) % 86400
        return _timestamp(profile.versions.day_of(k), seconds)

    def _videos(self, profile: _Profile, key: str) -> list[dict[str, Any]]:
        app = profile.app
        width, height = _VIDEO_SIZES[key]
        count = 1 + _hash_int(self.seed, app.store, app.app_id, "videos", key) % 3
        videos = []
        for n in range(count):
            raw = _token(self.seed, app.store, app.app_id, "video", key, n)
            h = raw.hex()
            videos.append(
                {
                    "uri": f"https://video-ssl.mzstatic.example/itunes-assets/Video{110 + raw[0] % 20}/v4/"
                    f"{h[0:2]}/{h[2:4]}/{h[4:6]}/{_uuid(raw)}/P{height}_{width}.m3u8",
                    "audio": "mp4a.40.2",
                    "width": width,
                    "height": height,
                    "codecs": "avc1.640028,mp4a.40.2",
                }
            )
        return videos

    # ---------------------------------------------------------------- changes

    def changes(
        self, app_id: str, *, device: str, country: str, language: str, start: date, end: date
    ) -> list[dict[str, Any]]:
        """The change records of the days ``start``..``end`` (both included), by date.

        Each day's records depend only on (seed, app, day, store, country) and the language of
        text values, so overlapping ranges agree day by day.
        """
        store = store_of(device)
        profile = self._profile(store, app_id)
        first, last = start.toordinal(), end.toordinal()
        records: list[dict[str, Any]] = []
        for k in profile.versions.events_between(first, last):
            if k == 0:
                continue
            day = profile.versions.day_of(k)
            new_version = self._version_label(profile, k)
            records.append(
                {
                    "target": "version",
                    "old_value": self._version_label(profile, k - 1),
                    "new_value": new_version,
                    "old_release_notes": self._release_notes(profile, k - 1, language),
                    "new_release_notes": self._release_notes(profile, k, language),
                    "version": new_version,
                    "is_ab_test": False,
                    "date": _day_text(day),
                }
            )
            records.append(
                self._change_record(profile, country, "size", day, self._size(profile, k - 1), self._size(profile, k))
            )
        for target, calendar, value in self._field_states(profile, device, country, language):
            for e in calendar.events_between(first, last):
                if e > 0:
                    records.append(
                        self._change_record(profile, country, target, calendar.day_of(e), value(e - 1), value(e))
                    )
        records.sort(key=lambda r: (r["date"], _TARGET_ORDER[r["target"]]))
        return records

    def _change_record(
        self, profile: _Profile, country: str, target: str, day: int, old: Any, new: Any
    ) -> dict[str, Any]:
        app = profile.app
        pick = _unit(self.seed, app.store, app.app_id, country, target, day, "version-field")
        if pick < 0.12:
            version = ""
        elif pick < 0.2:
            version = "No related version"
        else:
            version = self._version_label(profile, max(0, profile.versions.last_event(day)))
        ab = _unit(self.seed, app.store, app.app_id, country, target, day, "ab-test")
        if target in _AB_TESTABLE:
            is_ab_test = True if ab < 0.12 else None if ab < 0.2 else False
        else:
            is_ab_test = None if ab < 0.1 else False
        return {
            "target": target,
            "old_value": old,
            "new_value": new,
            "version": version,
            "is_ab_test": is_ab_test,
            "date": _day_text(day),
        }

    # ---------------------------------------------------------------- metrics

    def metrics(self, app_id: str, metrics: list[str], *, device: str, country: str, today: date) -> dict[str, Any]:
        """Current metrics of an app: ``{key: {...}}`` for each requested name (``app-power`` -> ``power``).

        Values are estimates for the day before ``today``; about 10 % are null (small apps). They
        move from day to day (:mod:`storeframes.sandbox.moves`): downloads, revenues and power
        with a weekly pattern, a momentum and noise; the number of ratings grows every day (per
        star, never falling) and ``daily-ratings`` is the growth of that day.
        """
        store = store_of(device)
        profile = self._profile(store, app_id)
        app = profile.app
        day = today - timedelta(days=1)
        day_text = day.isoformat()
        market = self._market_size(country)
        device_share = 0.22 if device == "ipad" else 1.0
        lift = demand(
            f"{self.seed}:{store}:{app_id}:{country}", day.toordinal(), weekend=app.theme.key in WEEKEND_THEMES
        )
        monthly_downloads = 10 ** (3.4 + 0.95 * app.popularity) * market * device_share * lift
        answer: dict[str, Any] = {}
        for name in metrics:
            if name not in _METRIC_KEYS:
                raise ValueError(f"unknown metric {name!r}; expected one of {', '.join(_METRIC_KEYS)}")
            known = app.popularity >= 0.0 or _unit(self.seed, store, app_id, country, name, "estimate") >= 0.2
            if name == "downloads":
                value, precision = _round_to_precision(monthly_downloads) if known else (None, 0)
                answer["downloads"] = {"value": value, "precision": precision, "date": day_text}
            elif name == "revenues":
                currency = _COUNTRY_CURRENCY.get(country, "usd")
                spend = 1.0 + (_unit(self.seed, store, app_id, country, day_text, "spend") - 0.5) * 0.1
                usd = monthly_downloads * (profile.arpu + 0.7 * profile.price_usd) * spend
                value, precision = _round_to_precision(usd * _USD_RATE.get(currency, 1.0)) if known else (None, 0)
                answer["revenues"] = {"value": value, "precision": precision, "date": day_text, "currency": currency}
            elif name == "app-power":
                jitter = (_unit(self.seed, store, app_id, country, day_text, "power") - 0.5) * 4
                power = round(min(100.0, max(0.0, 50 + 16 * app.popularity + 25 * math.log(lift) + jitter)), 1)
                answer["power"] = {"value": power if known else None, "date": day_text}
            elif name == "ratings":
                breakdown: dict[str, Any] | None = None
                if known:
                    counts = self._ratings_to_date(profile, device, country, day.toordinal())
                    total = sum(counts.values())
                    average = sum(int(star) * n for star, n in counts.items()) / total if total else 0.0
                    breakdown = counts | {"total": total, "avg": round(average, 2)}
                answer["ratings"] = {
                    "value": breakdown["total"] if breakdown else None,
                    "breakdown": breakdown,
                    "date": day_text,
                }
            else:  # daily-ratings: the ratings of the day, star by star
                daily = None
                if known:
                    now = self._ratings_to_date(profile, device, country, day.toordinal())
                    before = self._ratings_to_date(profile, device, country, day.toordinal() - 1)
                    daily = {star: now[star] - before[star] for star in now}
                answer["daily-ratings"] = {
                    "value": sum(daily.values()) if daily else None,
                    "breakdown": daily,
                    "date": day_text,
                }
        return answer

    def _ratings_to_date(self, profile: _Profile, device: str, country: str, day: int) -> dict[str, int]:
        """Ratings per star an app has received up to ``day`` in a country (see :func:`~storeframes.sandbox.moves.ratings_to_date`)."""
        app = profile.app
        device_share = 0.22 if device == "ipad" else 1.0
        base = 10 ** (1.8 + 1.1 * app.popularity) * self._market_size(country) ** 0.8 * device_share
        pace = 400 + 800 * _unit(self.seed, app.store, app.app_id, "ratings-pace")
        mood = min(5.0, max(1.0, profile.rating + (_unit(self.seed, app.store, app.app_id, country, "mood") - 0.5)))
        return ratings_to_date(
            f"{self.seed}:{app.store}:{app.app_id}:{country}:{device}",
            day,
            base=base,
            per_day=base / pace,
            average=profile.rating,
            mood=mood,
        )

    def _market_size(self, country: str) -> float:
        return _MARKET_SIZE.get(country) or 0.03 + 0.07 * _unit(self.seed, country, "market")

    # ---------------------------------------------------------------- benchmarks

    def benchmarks(
        self, *, country: str, device: str, type: str, channel: str, start: date, end: date
    ) -> list[dict[str, Any]]:
        """One conversion benchmark record per category of the device's store (percent values)."""
        store = store_of(device)
        table = IOS_CATEGORIES if store == "ios" else ANDROID_CATEGORIES
        thin_share = (0.10 if country in _MARKET_SIZE else 0.13) + (0.02 if type == "paid" else 0.0)
        market = self._market_size(country)
        records = []
        for code, name in table.items():
            record: dict[str, Any] = {
                "category": code,
                "category_name": name,
                "impressions_to_page_views": None,
                "page_views_to_installs": None,
                "impressions_to_installs": None,
                "number_of_apps": None,
            }
            records.append(record)
            thin = _unit(self.seed, store, country, type, channel, code, "thin")
            if thin < thin_share * 0.4:
                continue  # not even the number of apps is known
            if thin < thin_share:
                record["number_of_apps"] = round(
                    1 + 3.9 * _unit(self.seed, store, country, type, channel, code, start, end), 2
                )
                continue
            game = code.startswith(("7", "GAME_")) or code == "6014"
            base_ctr = (2.5 + 6.5 * _unit(self.seed, store, code, "ctr")) * (1.2 if game else 1.0)
            base_cvr = 18 + 47 * _unit(self.seed, store, code, "cvr")
            ctr_factor, cvr_factor, apps_factor = self._channel_factors(store, code, channel)
            if type == "paid":
                ctr_factor, cvr_factor, apps_factor = ctr_factor * 0.8, cvr_factor * 0.35, apps_factor * 0.15
            local = 0.85 + 0.3 * _unit(self.seed, store, country, code, "local")
            period = 0.97 + 0.06 * _unit(self.seed, store, country, type, channel, code, start, end)
            cvr = base_cvr * cvr_factor * local * period
            record["page_views_to_installs"] = round(cvr, 4)
            if store == "ios" and channel in ("all", "search", "browse"):
                ctr = base_ctr * ctr_factor * (2 - local) * period
                record["impressions_to_page_views"] = round(ctr, 4)
                record["impressions_to_installs"] = round(ctr * cvr / 100, 4)
            base_apps = 10 ** (1.6 + 1.9 * _unit(self.seed, store, code, "apps"))
            record["number_of_apps"] = round(max(5.0, base_apps * apps_factor * market**0.5 * period), 2)
        return records

    def _channel_factors(self, store: str, code: str, channel: str) -> tuple[float, float, float]:
        """Multipliers of a channel for (click-through rate, conversion rate, number of apps).

        Search converts best: installs straight from the result list push some categories' page
        views to installs above 100 %. Referrers bring page views without impressions.
        """
        if channel == "search":
            return 1.25, 1.2 + 1.0 * _unit(self.seed, store, code, "search-direct"), 0.9
        if channel in ("browse", "explore"):
            return 0.55, 0.8, 0.7
        if channel in ("appref", "webref", "referrals"):
            return 1.0, 0.5 + 0.4 * _unit(self.seed, store, code, channel), 0.3
        if channel == "all":
            return 1.0, 1.0, 1.0
        raise ValueError(f"unknown channel {channel!r}")

    # ---------------------------------------------------------------- search

    def _build_ranking_model(self, store: str, keyword: str, country: str, language: str) -> _RankingModel:
        words = _words(keyword)
        stable = random.Random(f"{self.seed}:{store}:search:{keyword}")
        local = random.Random(f"{self.seed}:{store}:search:{keyword}:{country}:{language}")
        ids, relevance, amplitude, speed, phase, themes = [], [], [], [], [], []
        for app in self._apps[store]:
            # Draw for every app, available or not, so one country's gaps do not shift the others.
            base = stable.gauss(0.0, 0.9) + local.gauss(0.0, 0.25)
            drift = (stable.uniform(0.2, 0.5), 2 * math.pi / stable.uniform(10.0, 60.0), stable.uniform(0, 2 * math.pi))
            if not self.is_available(app.app_id, store, country):
                continue
            hits = len(words & app.title_words) * 2.0 + len(words & app.words) * 1.5
            ids.append(app.app_id)
            themes.append(app.theme.key)
            relevance.append(hits + 0.45 * app.popularity + base)
            amplitude.append(drift[0])
            speed.append(drift[1])
            phase.append(drift[2])
        breadth = stable.random() ** max(1, len(keyword.split()))
        depth = _MIN_RESULTS + round((_HISTORY_CAP[store] - _MIN_RESULTS) * breadth)
        by_relevance = sorted(range(len(ids)), key=relevance.__getitem__, reverse=True)
        top = by_relevance[:30]
        bidders = []
        for _ in range(4 + int(8 * stable.random())):
            pool = top if stable.random() < 0.5 else range(len(ids))
            bidders.append(ids[stable.choice(pool)])
        listed = by_relevance[:_RELEVANT]
        place = f"{self.seed}:{store}:rhythm:{keyword}:{country}:{language}"
        rhythms = ((i, weekly_rhythm(f"{place}:{ids[i]}", weekend=themes[i] in WEEKEND_THEMES)) for i in listed)
        return _RankingModel(
            tuple(ids), tuple(relevance), tuple(amplitude), tuple(speed), tuple(phase),
            min(depth, len(ids)), tuple(dict.fromkeys(bidders)),
            tuple(by_relevance[10:60]), tuple(by_relevance[:12]),
            f"{self.seed}:{store}:episodes:{keyword}:{country}:{language}",
            tuple((i, shifts) for i, shifts in rhythms if shifts), tuple(listed),
        )  # fmt: skip

    def _build_jumps(
        self, store: str, keyword: str, country: str, language: str, block: int
    ) -> tuple[tuple[int, int, int, float], ...]:
        """The jumps after listing changes (:func:`~storeframes.sandbox.moves.listing_jumps`) of a block of days."""
        model = self._ranking_model(store, keyword, country, language)
        tagline = "subtitle" if store == "ios" else "short_description"
        local = (("tagline", tagline), ("screenshots", "screenshots"), ("long_description", "long_description"))
        listings: list[tuple[int, str, int, str, _Calendar]] = []
        for place, i in enumerate(model.listed):
            profile = self._profile(store, model.app_ids[i])
            calendars = [("title", profile.titles)]
            calendars += [(target, self._local_calendar(profile, name, country)) for name, target in local]
            listings += [(i, model.app_ids[i], place, target, calendar) for target, calendar in calendars]
        first = block * _JUMP_BLOCK
        key = f"{self.seed}:{store}:jumps:{keyword}:{country}:{language}"
        return tuple(listing_jumps(key, first, first + _JUMP_BLOCK - 1, listings))

    def _ranking(
        self, keyword: str, device: str, country: str, language: str, day: date
    ) -> tuple[_RankingModel, list[str]]:
        store = store_of(device)
        keyword = _normalize_keyword(keyword)
        model = self._ranking_model(store, keyword, country, language)
        noise = random.Random(f"{self.seed}:{store}:search:{keyword}:{country}:{language}:{day.isoformat()}")
        t = day.toordinal()
        sin, draw = math.sin, noise.random
        scores = [
            r + a * sin(w * t + p) + (draw() - 0.5) * 2 * _DRIFT_NOISE
            for r, a, w, p in zip(model.relevance, model.amplitude, model.angular_speed, model.phase, strict=True)
        ]
        for i, shift in episodes(model.episodes_key, t, model.risers, model.leaders).items():
            scores[i] += shift
        weekday = (t + 6) % 7
        for i, shifts in model.rhythm:
            scores[i] += shifts[weekday]
        for i, start, end, shift in self._jumps(store, keyword, country, language, t // _JUMP_BLOCK):
            if start <= t <= end:
                scores[i] += shift
        order = sorted(range(len(scores)), key=scores.__getitem__, reverse=True)[: model.depth]
        return model, [model.app_ids[i] for i in order]

    def search(self, keyword: str, *, device: str, country: str, language: str, day: date) -> list[str]:
        """Live organic search on ``day``: app ids in rank order, at most 250."""
        return self._ranking(keyword, device, country, language, day)[1][:_LIVE_CAP]

    def search_ads(self, keyword: str, *, device: str, country: str, language: str, day: date) -> list[dict[str, Any]]:
        """Live search with the two ad placements first: ``[{"application_id", "is_ad"}, ...]``.

        Only the iphone/ipad store sells search ads. The two ads are drawn each day from the
        keyword's advertisers of the week (:func:`~storeframes.sandbox.moves.advertisers`), which
        come and go by the week. An advertiser may also rank organically.
        """
        if store_of(device) != "ios":
            raise ValueError("search ads exist only for iphone and ipad")
        model, ranked = self._ranking(keyword, device, country, language, day)
        week = (day.toordinal() - 1) // 7
        pool = advertisers(f"{self.seed}:{_normalize_keyword(keyword)}:{country}", week, model.bidders)
        if len(pool) < 2:
            pool += [a for a in ranked[:3] if a not in pool]
        ads = random.Random(f"{self.seed}:ads:{_normalize_keyword(keyword)}:{country}:{day.isoformat()}").sample(
            pool, 2
        )
        return [{"application_id": a, "is_ad": True} for a in ads] + [
            {"application_id": a, "is_ad": False} for a in ranked[:_LIVE_CAP]
        ]

    def _is_tracked(self, keyword: str) -> bool:
        """Whether the keyword's history is tracked at all (the example keywords always are)."""
        keyword = _normalize_keyword(keyword)
        if keyword in self.EXAMPLE_KEYWORDS:
            return True
        return keyword != self.UNTRACKED_KEYWORD and _unit(self.seed, keyword, "tracked") >= 0.10

    def search_history_day(
        self, keyword: str, *, device: str, country: str, language: str, day: date
    ) -> list[str] | None:
        """The ranking recorded on ``day`` (up to 500 ids on iphone/ipad, 250 on android), or None.

        None when the keyword is untracked, the day is before :data:`HISTORY_START`, or the day
        was missed (about 5 % of the days). Its first 250 ids equal :meth:`search` of that day.
        """
        if day < HISTORY_START or not self._is_tracked(keyword):
            return None
        store = store_of(device)
        if _unit(self.seed, store, country, language, _normalize_keyword(keyword), day.isoformat(), "missed") < 0.05:
            return None
        return self._ranking(keyword, device, country, language, day)[1]
