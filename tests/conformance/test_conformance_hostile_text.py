"""The conformance report when the service sends Markdown and HTML as names and values: the sandbox over loopback,
bent so that every answer carries members named and valued like ``<img src=x onerror=alert(1)>``, remote images,
``javascript:`` links, backticks, pipes and line breaks, its refusals carry them as code and message, and a header
about rate limits carries one. The report is read by a Markdown parser (markdown-it-py, CommonMark with tables, as a
CI summary or a wiki renders it): nothing of the service's is live in it, every table keeps its columns, and each
value is shown as it came, in a code span."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import markdown_it
import pytest

from storeframes import conformance
from storeframes.sandbox import SANDBOX_KEY, SandboxServer, SandboxService
from storeframes.sandbox.service import Reply
from storeframes.texts import markdown_code, markdown_text

HOSTILE = [
    "<img src=x onerror=alert(1)>",
    "![x](http://evil.example/x.png)",
    "[a](javascript:alert(1))",
    "<https://evil.example/auto>",
    "www.evil.example/page",
    "tick`s``and```more",
    "`starts and ends`",
    "pipe|in|cell",
    "line\nbreak<script>alert(2)</script>",
    "&lt;b&gt;entity&#60;i&#62;",
]


class Hostile(SandboxService):
    """The sandbox, each object in a successful answer's result given a member per hostile text (named and valued
    by it), each refusal's code and message replaced by hostile texts, and a rate-limit header holding one."""

    def handle(self, method: str, path: str, query: Iterable[tuple[str, str]], headers: Mapping[str, str]) -> Reply:
        reply = super().handle(method, path, query, headers)
        body = json.loads(reply.body)
        if reply.status == 200 and isinstance(body.get("result"), dict):
            result = body["result"]
            targets = [v for v in result.values() if isinstance(v, dict)] or [result]
            for target in targets:
                target.update({text: text for text in HOSTILE})
        elif "error" in body and isinstance(body["error"], dict):
            body["error"]["code"] = HOSTILE[0]
            body["error"]["message"] = " ".join(HOSTILE)
        out = {**reply.headers, "X-RateLimit-Note": HOSTILE[1] + " " + HOSTILE[0]}
        return Reply(reply.status, json.dumps(body).encode(), out, reply.fault, reply.cost)


@pytest.fixture(scope="module")
def report_md(tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("kit")
    with SandboxServer(port=0, service=Hostile()) as server:
        conformance.run(out=out, api_key=SANDBOX_KEY, base_url=server.base_url, devices=["iphone"])
    return (Path(out) / "report.md").read_text()


def _tokens(text: str) -> list[Any]:
    parser = markdown_it.MarkdownIt("commonmark").enable("table")
    flat = []
    for token in parser.parse(text):
        flat.append(token)
        flat.extend(token.children or [])
    return flat


def _outside_code(text: str) -> str:
    """The report with its code spans taken out: what a renderer reads as Markdown."""
    return re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", text)


def test_no_html_link_or_image_of_the_services_is_live_in_the_report(report_md):
    tokens = _tokens(report_md)
    live = [t.type for t in tokens if t.type in ("html_inline", "html_block", "link_open", "image", "autolink")]
    assert live == []
    html = markdown_it.MarkdownIt("commonmark").enable("table").render(report_md)
    assert re.search(r"<(img|script|a|b|i)\b", html) is None and "href=" not in html  # tags only as text
    outside = _outside_code(report_md)
    assert re.search(r"(?<!\\)[<\[\]]", outside) is None  # no HTML tag, no link or image opens
    assert "](" not in outside.replace("\\](", "")
    assert re.search(r"(?<!\\)www\.", outside) is None and "://" not in outside  # nothing a renderer links alone


def test_every_table_keeps_its_columns_and_each_value_is_shown_as_it_came(report_md):
    assert "## Differences" in report_md and "## Refusals" in report_md
    lines = report_md.splitlines()
    tables = 0
    for i, line in enumerate(lines):
        if re.fullmatch(r"\|(---\|)+", line):
            tables += 1
            columns = line.count("|")
            assert len(re.split(r"(?<!\\)\|", lines[i - 1])) - 1 == columns, lines[i - 1]
            for row in lines[i + 1 :]:
                if not row:
                    break
                assert row.startswith("| ") and row.endswith(" |"), row  # no line break cut the row
                assert len(re.split(r"(?<!\\)\|", row)) - 1 == columns, row  # no pipe made another cell
    assert tables >= 4
    tokens = _tokens(report_md)
    shown = {t.content for t in tokens if t.type == "code_inline"}
    for text in HOSTILE:
        one_line = " ".join(text.split())
        # the member's name, in the difference's path, as it came
        assert any(c.endswith("." + one_line) for c in shown), text
        assert f'"{json.dumps(one_line)[1:-1]}"' in shown or json.dumps(text) in shown  # its value, as JSON
    assert HOSTILE[0] in shown  # the refusal's code
    assert " ".join(" ".join(HOSTILE).split()) in shown  # the refusal's message, whole
    assert f"{HOSTILE[1]} {HOSTILE[0]}" in shown  # the header's value
    assert "x-ratelimit-note" in shown


@pytest.mark.parametrize("text", HOSTILE)
def test_the_shared_escapers_leave_nothing_live(text):
    for written in (markdown_code(text), markdown_text(text), f"| a | {markdown_code(text)} | {markdown_text(text)} |"):
        tokens = _tokens(f"| x | y | z |\n|---|---|---|\n{written}\n" if written.startswith("|") else written)
        assert not [t for t in tokens if t.type in ("html_inline", "html_block", "link_open", "image")]
    code = [t for t in _tokens(markdown_code(text, table=False)) if t.type == "code_inline"]
    assert [t.content for t in code] == [" ".join(text.split())]
