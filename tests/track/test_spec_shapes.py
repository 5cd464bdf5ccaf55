"""A tracker spec of any shape (nested 10,000 levels deep, huge keys and values, wrong types at every level, bytes
that are not UTF-8) is a SpecError naming the file and what is allowed: never a RecursionError, a bare ValueError or
a message as long as the spec."""

from __future__ import annotations

import pytest

from storeframes.track import SpecError, load_spec

HEAD = '[tracker]\nname = "t"\n'
ITEM = '[[track]]\nendpoint = "search"\nkeywords = ["photo editor"]\n'
BIG = "x" * 2_000_000

SHAPES = {
    "lists 10,000 deep": HEAD + ITEM.replace('["photo editor"]', "[" * 10_000 + "]" * 10_000),
    "lists 500 deep": HEAD + ITEM.replace('["photo editor"]', "[" * 500 + '"a"' + "]" * 500),
    "inline tables 10,000 deep": HEAD + ITEM.replace('["photo editor"]', "{a = " * 10_000 + "1" + "}" * 10_000),
    "a dotted key 10,000 deep": HEAD + ITEM + ".".join(["a"] * 10_000) + " = 1\n",
    "a table header 10,000 deep": HEAD + "[" + ".".join(["a"] * 10_000) + "]\n",
    "a huge key at the top": f'"{BIG}" = 1\n',
    "a huge key in [tracker]": HEAD + f'"{BIG}" = 1\n' + ITEM,
    "a huge key in [[track]]": HEAD + ITEM + f'"{BIG}" = 1\n',
    "a huge key in [notify]": HEAD + ITEM + f'[notify]\n"{BIG}" = 1\n',
    "a huge key in [publish]": HEAD + ITEM + f'[publish]\n"{BIG}" = 1\n',
    "a huge name": f'[tracker]\nname = "{BIG}"\n' + ITEM,
    "a huge keyword": HEAD + ITEM.replace("photo editor", BIG),
    "a budget past any ledger": HEAD + "budget_per_run = " + "9" * 4_000 + "\n" + ITEM,
    "a cache_dir with a NUL": HEAD + 'cache_dir = "a\\u0000b"\n' + ITEM,
    "a lake with a NUL": HEAD + ITEM + '[publish]\nlake = "a\\u0000b"\n',
    "[tracker] a number": "tracker = 1\n" + ITEM,
    "track a text": HEAD + 'track = "x"\n',
    "track a list of numbers": "track = [1, 2]\n" + HEAD,
    "[[track]] a list of lists": "track = [[1]]\n" + HEAD,
    "endpoint a table": HEAD + ITEM.replace('"search"', "{a = 1}"),
    "countries of lists": HEAD + ITEM + 'countries = [["us"]]\n',
    "keywords of dates": HEAD + ITEM.replace('"photo editor"', "1979-05-27T07:32:00Z"),
    "alert a list of numbers": "alert = [3]\n" + HEAD + ITEM,
    "notify a list": "notify = [1]\n" + HEAD + ITEM,
    "publish a text": 'publish = "x"\n' + HEAD + ITEM,
    "notify urls of tables": HEAD + ITEM + "[notify]\nurls = [{a = 1}]\n",
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_spec_of_any_shape_is_a_spec_error_naming_the_file(shape, tmp_path):
    path = tmp_path / "odd-tracker.toml"
    path.write_text(SHAPES[shape], encoding="utf-8")
    with pytest.raises(SpecError) as refused:
        load_spec(path)
    message = str(refused.value)
    assert "odd-tracker.toml" in message, message
    assert len(message) < 1_000, message[:300]
    assert refused.value.allowed  # what is allowed, in words


def test_nesting_past_the_limit_says_how_deep_a_spec_may_nest(tmp_path):
    path = tmp_path / "deep.toml"
    path.write_text(HEAD + ITEM.replace('["photo editor"]', "[" * 10_000 + "]" * 10_000), encoding="utf-8")
    with pytest.raises(SpecError, match=r"nest at most 16 levels deep") as refused:
        load_spec(path)
    assert refused.value.parameter == "spec" and refused.value.value == "deep.toml"


def test_a_spec_that_is_not_utf8_is_a_spec_error_naming_the_file(tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes(HEAD.encode() + b'[[track]]\nendpoint = "search"\nkeywords = ["caf\xe9"]\n')
    with pytest.raises(SpecError, match=r"a TOML file in UTF-8 \(byte \d+ is not\)") as refused:
        load_spec(path)
    assert "latin1.toml" in str(refused.value)
