"""Text from elsewhere (the service, an app's publisher) written into Markdown so that none of it is read as Markdown.

Two ways, shared by every report and digest that writes what it did not write itself:
:func:`markdown_text` for words among our own (each character Markdown reads escaped with a
backslash, the text on one line, no URL left to be linked) and :func:`markdown_code` for a name
or a value shown as it came (a code span: no HTML, no link, no image, no emphasis is read in
one, whatever it holds). Both keep a table's cells whole: a pipe is escaped and a line break
becomes a space. :func:`html_text` writes the same words into an HTML page. No I/O and no import beyond the standard library: the lowest layer, for
``track/`` and ``conformance/`` alike.
"""

from __future__ import annotations

import html
import re
from typing import Any

__all__ = ["html_text", "markdown_code", "markdown_text", "plain"]

_SCHEME = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://")
_MD_SPECIAL = re.compile(r"([\\`*\[\]<>|])")
_WWW = re.compile(r"\b(www)\.", re.IGNORECASE)
_TICKS = re.compile(r"`+")
_HTTP = re.compile("http", re.IGNORECASE)


def plain(value: Any) -> str:
    """A value as one line of text, any URL shown without its scheme (``https://x/a.png`` -> ``x/a.png``).

    >>> plain("see\\nhttps://x.example/a.png")
    'see x.example/a.png'
    """
    text = "" if value is None else str(value)
    return _SCHEME.sub("", " ".join(text.split()))


def markdown_text(value: Any) -> str:
    """A value as Markdown text among other words: on one line (:func:`plain`), the characters Markdown reads
    (pipes, brackets, backticks, ``<`` ...) escaped, and ``www.`` written so that no renderer links it.

    >>> markdown_text("<img src=x onerror=alert(1)> [a](javascript:alert(1)) | www.x.example")
    '\\\\<img src=x onerror=alert(1)\\\\> \\\\[a\\\\](javascript:alert(1)) \\\\| www\\\\.x.example'
    """
    return _WWW.sub(r"\1\\.", _MD_SPECIAL.sub(r"\\\1", plain(value)))


def markdown_code(value: Any, *, table: bool = True) -> str:
    """A value shown as it came, in a Markdown code span: fenced by one backtick more than the longest run inside,
    on one line, its pipes escaped when it goes into a table's cell (``table``, the default); an empty value is
    an empty text.

    >>> markdown_code("a`b|c")
    '``a`b\\\\|c``'
    >>> markdown_code("`start")
    '`` `start ``'
    """
    text = " ".join(("" if value is None else str(value)).split())
    if not text:
        return ""
    if table:
        text = text.replace("|", "\\|")
    fence = "`" * (max((len(run) for run in _TICKS.findall(text)), default=0) + 1)
    if text.startswith("`") or text.endswith("`"):
        text = f" {text} "
    return f"{fence}{text}{fence}"


def html_text(value: Any) -> str:
    """A value as HTML text among other words: on one line (:func:`plain`), escaped, and any "http" inside a
    word written with an entity, so that no mail client or viewer reads a link in it.

    >>> html_text("<b>Photo</b> http://x.example")
    '&lt;b&gt;Photo&lt;/b&gt; x.example'
    >>> html_text("HTTPie")
    'HT&#84;Pie'
    """
    return _HTTP.sub(lambda m: f"{m.group(0)[:2]}&#{ord(m.group(0)[2])};{m.group(0)[3]}", html.escape(plain(value)))
