"""Every frame function's whole call beside parsing its JSON, on bodies of many shapes.

Not collected by the test run. Run::

    .venv/bin/python tests/benchmarks/bench_shapes.py             # every endpoint, both stores, every form
    .venv/bin/python tests/benchmarks/bench_shapes.py --quick     # the same shapes, small
    .venv/bin/python tests/benchmarks/bench_shapes.py --only search_frame,metrics_frame

``bench_call.py`` times three calls on the bodies the flatteners were tuned on; this script
times the whole call of every frame function (as a user makes it: the client, planning, the
rate window, the request path, the flattener, the order of rows) against an
``httpx.MockTransport`` answering at once, on bodies of several shapes:

* both stores: iphone, whose ids are short numeric texts (``"284882215"``), and android,
  whose ids are package names (``"com.silvercrane.photoeditor"``);
* the forms the flatteners accept beside the one the sandbox sends: a live search as
  ``{"date", "value": [ids]}``, as ``{"apps": [{"id"}]}``, under a key named after the
  keyword, with integer ids, and the ads list (``ads=True``); a history keyed by date, as a
  list of ``{"date", "value"}``, under the keyword, with integer ids (the bodies of
  ``bench_search.history_bodies``: 500 results a day on iphone, 250 on android); metadata
  with ``genres`` for ``categories`` and ``size`` as an integer; metrics named ``app-power``
  with whole counts sent as floats; benchmarks with category codes as integers.

The metadata, metrics, changes and benchmarks bodies are recorded once from the in-process
sandbox (``World(0)``) and served again byte for byte; a variant form is the recorded body
rewritten (setup, not timed). The metadata tables (versions, screenshots ...) and the change
tables (privacy, screenshots, versions) are each their own frame function on the same bodies.

Timed, best of ``--repeat`` runs each, interleaved so each ratio is of figures measured together:

* parse: ``orjson.loads`` of every body (the floor);
* no cache: the call with ``cache_dir=False``;
* cold: the call with an empty cache folder (the raw answers and the Parquet frames written);
* bare httpx: the same requests sent one after another through a plain ``httpx.Client`` on the
  same mock transport, each body parsed with orjson: what any client pays before it builds a
  row (``no_cache_x_bare`` is the whole call over it; for many small answers it is most of
  the call).

Prints a table, then one JSON line per (frame, shape): ``no_cache_x_parse`` and ``cold_x_parse``.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import orjson
from _flatten_timing import Figure, json_lines, machine
from bench_call import Call, _key, best, recorded
from bench_search import END, history_bodies

from storeframes.errors import AppsUnavailableWarning
from storeframes.flatteners import UnknownFieldWarning
from storeframes.sandbox import World
from storeframes.wire.http import lib as httpx

FULL = {"apps": 500, "keywords": 200, "history_keywords": 5, "history_days": 180, "countries": 10, "repeat": 3}
QUICK = {"apps": 50, "keywords": 20, "history_keywords": 2, "history_days": 20, "countries": 2, "repeat": 1}
STORES = {"iphone": ("ios", "short numeric ids"), "android": ("android", "package names")}
KEYWORDS = ("photo editor", "budget planner", "puzzle games", "meditation", "running tracker", "recipes", "vpn")
METADATA_TABLES = (
    "metadata_frame",
    "versions_frame",
    "screenshots_frame",
    "videos_frame",
    "in_app_purchases_frame",
    "related_apps_frame",
    "permissions_frame",
)
CHANGE_TABLES = ("changes_frame", "privacy_changes_frame", "screenshot_changes_frame", "version_changes_frame")
COUNTRIES = ("us", "gb", "de", "fr", "jp", "br", "in", "ca", "au", "it", "es", "mx")


# -- shapes: a call, the store, the form ------------------------------------------------------


class Shape:
    """A frame function's call on bodies of one store and form."""

    def __init__(self, call: Call, device: str, form: str):
        self.call = call
        self.device = device
        self.form = form


def rewritten(call: Call, frame: str, form: str, change: Callable[[Any], Any]) -> Call:
    """The same requests answered by bodies whose ``result`` is ``change(result)`` (setup, not timed)."""
    bodies = {}
    for key, body in call.bodies.items():
        if call.statuses.get(key, 200) != 200:
            bodies[key] = body
            continue
        parsed = orjson.loads(body)
        parsed["result"] = change(parsed["result"])
        bodies[key] = orjson.dumps(parsed)
    return Call(frame, f"{call.setting}, {form}", call.kwargs, call.first, bodies, call.statuses)


def renamed(call: Call, frame: str) -> Call:
    """The same call and bodies, asked through another frame function of the same endpoint."""
    return Call(frame, call.setting, call.kwargs, call.first, call.bodies, call.statuses)


def _apps_members(result: Any, member: Callable[[Any], Any]) -> Any:
    return {app: member(resource) for app, resource in result.items()} if type(result) is dict else result


def _metadata_variant(resource: Any) -> Any:
    meta = dict(resource.get("metadata") or {})
    if "categories" in meta:
        meta["genres"] = meta.pop("categories")
    size = meta.get("size")
    if type(size) is dict:
        meta["size"] = (size.get("current") or {}).get("data")
    elif type(size) is int:
        meta["size"] = {"current": {"data": size}}
    return {**resource, "metadata": meta}


def _metrics_variant(resource: Any) -> Any:
    def floats(member: Any) -> Any:
        if type(member) is not dict:
            return member
        out = {k: float(v) if type(v) is int else v for k, v in member.items()}
        if type(member.get("breakdown")) is dict:
            breakdown = member["breakdown"]
            out["breakdown"] = {k: float(v) if type(v) is int else v for k, v in breakdown.items()}
        return out

    return {("app-power" if k == "power" else k): floats(v) for k, v in resource.items()}


def _integer_ids(ids: Any) -> Any:
    return [int(i) if type(i) is str and i.isdigit() else i for i in ids] if type(ids) is list else ids


def app_shapes(world: World, apps: int, countries: int) -> list[Shape]:
    """metadata (7 tables), metrics, changes (4 tables) and benchmarks, both stores, the sandbox's form and a variant."""
    out = []
    span = {"start": (END - timedelta(days=89)).isoformat(), "end": END.isoformat()}
    for device, (store, ids_are) in STORES.items():
        ids = world.app_ids(store)[:apps]
        setting = f"{len(ids):,} {device} apps ({ids_are})"
        meta = recorded("metadata_frame", setting, {"apps": ids}, {"apps": ids[:1]}, world)
        out += [Shape(renamed(meta, frame), device, "sandbox") for frame in METADATA_TABLES]
        variant = rewritten(meta, "metadata_frame", "genres, size", lambda r: _apps_members(r, _metadata_variant))
        out.append(Shape(variant, device, "genres, size"))
        metrics = recorded("metrics_frame", setting, {"apps": ids}, {"apps": ids[:1]}, world)
        out.append(Shape(metrics, device, "sandbox"))
        variant = rewritten(metrics, "metrics_frame", "app-power, floats", lambda r: _apps_members(r, _metrics_variant))
        out.append(Shape(variant, device, "app-power, floats"))
        changes = recorded(
            "changes_frame", f"{setting} x 90 days", {"apps": ids, **span}, {"apps": ids[:1], **span}, world
        )
        out += [Shape(renamed(changes, frame), device, "sandbox") for frame in CHANGE_TABLES]
        places = list(COUNTRIES[:countries])
        asked = {"countries": places, "device": device, "days": 30}
        bench = recorded(
            "benchmarks_frame", f"{len(places)} countries, {device}", asked, {**asked, "countries": places[:1]}, world
        )
        out.append(Shape(bench, device, "sandbox"))

        def codes(result: Any) -> Any:
            records = result.get("category_benchmarks") or []
            numbered = [
                {**r, "category": int(r["category"])} if str(r.get("category")).isdigit() else r for r in records
            ]
            return {**result, "category_benchmarks": numbered}

        out.append(Shape(rewritten(bench, "benchmarks_frame", "integer codes", codes), device, "integer codes"))
    return out


def search_shapes(world: World, keywords: int) -> list[Shape]:
    """Live search, both stores: the sandbox's ``{date, value}``, ``{apps: [{id}]}``, under the keyword, integer ids, ads."""
    words = [*KEYWORDS, *(f"keyword {k}" for k in range(max(0, keywords - len(KEYWORDS))))][:keywords]
    out = []
    for device, (_, ids_are) in STORES.items():
        setting = f"{len(words)} keywords, {device} ({ids_are})"
        asked = {"keywords": words, "device": device}
        live = recorded("search_frame", setting, asked, {**asked, "keywords": words[:1]}, world)
        out.append(Shape(live, device, "{date, value}"))
        objects = rewritten(
            live,
            "search_frame",
            "{apps: [{id}]}",
            lambda r: {"date": r["date"], "apps": [{"id": i} for i in r["value"]]},
        )
        out.append(Shape(objects, device, "{apps: [{id}]}"))

        def under_keyword(call: Call) -> Call:
            bodies = {}
            for key, body in call.bodies.items():
                parsed = orjson.loads(body)
                word = parsed["metadata"]["request"]["params"]["keyword"]
                parsed["result"] = {word: parsed["result"]}
                bodies[key] = orjson.dumps(parsed)
            return Call(
                call.frame, f"{call.setting}, under the keyword", call.kwargs, call.first, bodies, call.statuses
            )

        out.append(Shape(under_keyword(live), device, "under the keyword"))
        if device == "iphone":
            ints = rewritten(live, "search_frame", "integer ids", lambda r: {**r, "value": _integer_ids(r["value"])})
            out.append(Shape(ints, device, "integer ids"))
            asked = {**asked, "ads": True}
            ads = recorded("search_frame", f"{setting}, ads", asked, {**asked, "keywords": words[:1]}, world)
            out.append(Shape(ads, device, "ads list"))
    return out


def history_shapes(keywords: int, days: int) -> list[Shape]:
    """History, both stores: keyed by date, a list of ``{date, value}``, under the keyword, and integer ids (iphone)."""
    start = END - timedelta(days=days - 1)
    out = []
    for device, (_, ids_are) in STORES.items():
        forms = history_bodies(device, keywords, days, seed=0)
        forms["integer ids"] = forms["by date"] if device == "iphone" else []
        for form, given in forms.items():
            if not given:
                continue
            bodies, words = {}, []
            for body in given:
                parsed = orjson.loads(body)
                request = parsed["metadata"]["request"]
                if form == "integer ids":
                    parsed["result"] = {day: _integer_ids(ids) for day, ids in parsed["result"].items()}
                    body = orjson.dumps(parsed)
                sent = {k: v for k, v in request["params"].items() if k != "language"}
                bodies[_key(request["path"], sent.items())] = body
                words.append(request["params"]["keyword"])
            span = {"start": start.isoformat(), "end": END.isoformat(), "country": "us", "device": device}
            setting = f"{keywords} keywords x {days} days, {device} ({ids_are}), {form}"
            call = Call(
                "search_history_frame", setting, {"keywords": words, **span}, {"keywords": words[:1], **span}, bodies
            )
            out.append(Shape(call, device, form))
    return out


# -- timing -----------------------------------------------------------------------------------


def bare(call: Call) -> float:
    """Seconds to send every request of ``call`` through a plain httpx client on its mock transport and parse each body."""
    asked = []
    for key in call.bodies:
        path, _, query = key.partition("?")
        asked.append((f"https://service.invalid{path}", [tuple(kv.split("=", 1)) for kv in query.split("&")]))
    with httpx.Client(transport=call.transport()) as http:
        gc.collect()
        started = time.perf_counter()
        for url, params in asked:
            orjson.loads(http.get(url, params=params).content)
        return time.perf_counter() - started


def shape_call(shape: Shape, repeat: int) -> Figure:
    """Parse, no cache and cold, best of ``repeat`` each, interleaved so they share the machine's load."""
    call = shape.call
    bodies = list(call.bodies.values())
    parse, no_cache, cold, plain = [], [], [], []
    rows = 0
    for _ in range(repeat):
        parse.append(best(lambda: [orjson.loads(b) for b in bodies], 1))
        plain.append(bare(call))
        with call.client(False) as client:
            no_cache.append(best(lambda c=client: call.run(c), 1))
            rows = rows or call.run(client).height
        with tempfile.TemporaryDirectory(prefix="storeframes-bench-") as folder, call.client(folder) as client:
            cold.append(best(lambda c=client: call.run(c), 1))
    floor = min(parse)
    return {
        "bench": "shape_call",
        "frame": call.frame,
        "store": shape.device,
        "form": shape.form,
        "call": call.setting,
        "requests": len(bodies),
        "json_bytes": call.size(),
        "rows": rows,
        "parse_s": round(floor, 5),
        "no_cache_s": round(min(no_cache), 5),
        "cold_s": round(min(cold), 5),
        "bare_httpx_s": round(min(plain), 5),
        "no_cache_x_parse": round(min(no_cache) / floor, 2),
        "cold_x_parse": round(min(cold) / floor, 2),
        "no_cache_x_bare": round(min(no_cache) / min(plain), 2),
        "repeat": repeat,
    }


def shapes(sizes: dict[str, int]) -> list[Shape]:
    world = World(0, ios_apps=max(800, sizes["apps"]), android_apps=max(600, sizes["apps"]))
    return [
        *history_shapes(sizes["history_keywords"], sizes["history_days"]),
        *search_shapes(world, sizes["keywords"]),
        *app_shapes(world, sizes["apps"], sizes["countries"]),
    ]


def figures(sizes: dict[str, int], only: set[str] | None = None) -> list[Figure]:
    """A figure per (frame function, shape), at ``sizes`` (:data:`FULL` or :data:`QUICK` with overrides)."""
    warnings.filterwarnings("ignore", category=UnknownFieldWarning)
    warnings.filterwarnings("ignore", category=AppsUnavailableWarning)  # a few of the world's apps, as on the service
    out: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="storeframes-bench-state-") as state:
        os.environ["STOREFRAMES_STATE_DIR"] = state  # the machine's rate window, apart from the user's
        for shape in shapes(sizes):
            if only is None or shape.call.frame in only:
                print(f"  {shape.call.frame}, {shape.device}, {shape.form} ...", file=sys.stderr, flush=True)
                out.append(shape_call(shape, sizes["repeat"]))
    return out


def print_table(found: list[Figure], about: Figure) -> None:
    print(f"whole calls on bodies of many shapes, mock transport ({about['platform']}, {about['cpus']} CPUs)")
    print(
        f"{'frame':<26} {'store':<8} {'form':<20} {'req':>4} {'rows':>9} {'MB':>6} {'parse':>9} {'no cache':>9} "
        f"{'cold':>7} {'bare httpx':>11} {'x bare':>7}"
    )
    for f in found:
        print(
            f"{f['frame']:<26} {f['store']:<8} {f['form']:<20} {f['requests']:>4} {f['rows']:>9,} "
            f"{f['json_bytes'] / 1e6:>6.1f} {f['parse_s'] * 1000:>7.1f}ms {f['no_cache_x_parse']:>8.2f}x "
            f"{f['cold_x_parse']:>6.2f}x {f['bare_httpx_s'] * 1000:>9.1f}ms {f['no_cache_x_bare']:>6.2f}x"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", help="comma-separated frame functions (default: all)")
    for name in FULL:
        parser.add_argument(f"--{name.replace('_', '-')}", type=int)
    args = parser.parse_args()
    sizes = dict(QUICK if args.quick else FULL)
    sizes |= {k: v for k in FULL if (v := getattr(args, k)) is not None}
    only = {name.strip() for name in args.only.split(",")} if args.only else None
    about = machine()
    found = figures(sizes, only)
    print_table(found, about)
    json_lines(about, found)


if __name__ == "__main__":
    sys.exit(main())
