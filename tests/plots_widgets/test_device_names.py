"""Readable names of the stores' screenshot and video device keys, as an app card shows them."""

from __future__ import annotations

import pytest

import storeframes as sf
from storeframes.sandbox.world import SCREENSHOT_KEYS
from storeframes.widgets.device_names import DEVICE_NAMES, device_name

CONTRACT = {  # the keys of the iphone/ipad screenshots and videos objects, and the android forms
    "iphone_6_5": "iPhone 6.5-inch",
    "iphone": "iPhone 3.5-inch",
    "iphone5": "iPhone 4-inch",
    "iphone_5_8": "iPhone 5.8-inch",
    "iphone6": "iPhone 4.7-inch",
    "iphone6plus": "iPhone 5.5-inch",
    "ipad": "iPad 9.7-inch",
    "ipadPro": "iPad Pro 12.9-inch",
    "ipadPro_2018": "iPad Pro 12.9-inch (2018)",
    "appleWatch": "Apple Watch",
    "appleWatch_2018": "Apple Watch (2018)",
    "android": "Android",
    "phone": "Phone",
    "tablet": "Tablet",
}


@pytest.mark.parametrize(("key", "name"), CONTRACT.items())
def test_every_key_of_the_contract_has_a_readable_name(key, name):
    assert device_name(key) == name
    assert DEVICE_NAMES[key] == name


def test_the_sandbox_sends_no_key_without_a_name():
    assert set(SCREENSHOT_KEYS) <= set(DEVICE_NAMES)


@pytest.mark.parametrize(
    ("key", "name"),
    [
        ("ipad_10_5", "iPad 10.5-inch"),  # a size pair reads as a dotted number
        ("ipad_11", "iPad 11-inch"),
        ("iphone_6_7", "iPhone 6.7-inch"),
        ("ipadPro_11_2024", "iPad Pro 11-inch (2024)"),
        ("appleTV", "Apple TV"),
        ("vendorWatch_2021", "Vendor Watch (2021)"),  # the contract's <vendor>Watch, any vendor
        ("smart_display", "Smart Display"),  # underscores to spaces
        ("Tablet", "Tablet"),
        ("", ""),
    ],
)
def test_an_unknown_key_reads_as_words(key, name):
    assert device_name(key) == name


@pytest.mark.parametrize("key", [None, 6, ["iphone"]])
def test_a_key_that_is_not_text_is_refused_naming_it(key):
    with pytest.raises(sf.InvalidParameterError, match="invalid key=") as raised:
        device_name(key)
    assert raised.value.parameter == "key" and raised.value.value == key
    assert "a device key as text" in str(raised.value)
