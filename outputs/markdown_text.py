"""Untrusted text into Markdown, shown as written and never read as the document's structure.

A model's reply, a case, a judge's verdict, the moderator's words or a server's model name can
hold Markdown of their own: ``### human (moderator)`` at the start of a line would be drawn as
one of the transcript's own headings, ``[the record](http://…)`` as a link whose target the
reader does not see (a terminal hyperlink in ``symposium show``, a live link in any Markdown
viewer), a ``|`` would end a table cell, ``<b>`` become HTML. Everything the Markdown export
did not write itself goes through :func:`inline` (a table cell, a heading, a list item: one
line) or :func:`block` (a turn's text, its lines kept), which backslash-escape what CommonMark
with tables and strikethrough (as Rich and GitHub read it) would take as structure. A reader
sees exactly the characters written; the backslashes show only in the raw file.
"""

from __future__ import annotations

import re
from typing import Any

#: Characters that open or close structure anywhere in a line: escapes, code spans, emphasis,
#: links and images, HTML and autolinks, entities, table cells, strikethrough. An underscore
#: inside a word (``agent_a``) is no emphasis in CommonMark and stays as it is.
_ANYWHERE = re.compile(r"[\\`*\[\]<&|~]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
#: What opens a block at the start of a line (after up to three spaces): headings, block
#: quotes, list items and thematic breaks, setext underlines, ordered list items.
_LINE_START = re.compile(r"^( {0,3})([#>+=-])", re.MULTILINE)
_ORDERED = re.compile(r"^( {0,3}\d{1,9})([.)])", re.MULTILINE)


def _escaped(text: str) -> str:
    text = _ANYWHERE.sub(lambda m: "\\" + m.group(), text)
    text = _LINE_START.sub(lambda m: m.group(1) + "\\" + m.group(2), text)
    return _ORDERED.sub(lambda m: m.group(1) + "\\" + m.group(2), text)


def inline(value: Any) -> str:
    """``str(value)`` on one line (line breaks become spaces: a table row or a heading cannot
    hold one), shown as written wherever it stands, a list item's start included."""
    return _escaped(" ".join(str(value).splitlines()))


#: Four columns of indentation (or a tab) at a line's start: Markdown's preformatted block.
_INDENTED = re.compile(r"^(?: {4,}|[ ]{0,3}\t)[ \t]*", re.MULTILINE)


def block(value: Any) -> str:
    """``str(value)`` as paragraphs shown as written, each of its line breaks kept (a hard break:
    two spaces before it), so a model's list or verse keeps its lines without being a list. A
    line indented four columns keeps its indent as no-break spaces: as spaces it would open a
    preformatted block, which shows the escapes' backslashes."""
    text = _escaped(str(value).replace("\r\n", "\n").replace("\r", "\n"))
    text = _INDENTED.sub(lambda m: "\u00a0" * len(m.group().expandtabs(4)), text)
    lines = text.split("\n")
    return "\n".join(line + "  " if line.strip() and i + 1 < len(lines) and lines[i + 1].strip() else line
                     for i, line in enumerate(lines))


def code(value: Any) -> str:
    """``str(value)`` as a code span (a path, a hash, parameters): delimited by more backticks
    than it holds in a row, so none of its own can close the span; on one line."""
    text = " ".join(str(value).splitlines())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"
