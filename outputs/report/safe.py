"""Untrusted text into HTML: escaped, never markup, its control and bidi characters made visible.

Everything in a report that the code did not write itself (model output, the case text, a
judge's reasons, a participant's model id, a key in a provenance record) reaches the page only
through :func:`text` (or, as an attribute's value, :func:`attribute`; in a chart's SVG,
:func:`svg_text`). The page's own markup is built as :class:`Markup` (a ``str`` the renderer
does not escape again), so "is this escaped?" has one answer per value: a ``Markup`` was made
here from escaped parts; anything else is escaped on the way out.

Control and bidi characters are the same set the app strips from the terminal
(:data:`protocols.core.text.UNSAFE_CHARACTERS`). Here they are not dropped but shown as a visible
mark (``⟨U+202E⟩``), because a report is a record: a reader should see that the model's text
held a right-to-left override, without the page being reordered by it.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from typing import Any

from protocols.core.text import UNSAFE_CHARACTERS, mark

_MARK = re.compile(r"⟨U\+[0-9A-F]{4,6}⟩")
#: What XML forbids in a document beside the controls :func:`neutral` marks: the noncharacters
#: U+FFFE and U+FFFF (a lone surrogate cannot be written as UTF-8 at all).
_NOT_XML = re.compile("[\ufffe\uffff]")


class Markup(str):
    """HTML this package built from escaped parts; the renderer passes it through as is.

    Adding anything to it escapes that thing first, so ``Markup + str`` stays safe."""

    __slots__ = ()

    def __add__(self, other: object) -> Markup:
        return Markup(str.__add__(self, text(other)))

    def __radd__(self, other: object) -> Markup:
        return Markup(str.__add__(text(other), self))


def neutral(value: str) -> str:
    """``value`` with every control and bidi character replaced by a visible ``⟨U+XXXX⟩``
    (``\\r\\n`` and ``\\r`` become newlines first, as in the app); not yet escaped."""
    value = value.replace("\r\n", "\n").replace("\r", "\n")
    return UNSAFE_CHARACTERS.sub(lambda m: mark(m.group()), value)


def text(value: Any) -> Markup:
    """Any value as HTML text: ``str()`` of it, control/bidi characters made visible, escaped
    (``& < > " '``); a :class:`Markup` passes through."""
    if isinstance(value, Markup):
        return value
    shown = neutral(value if isinstance(value, str) else str(value))
    marked = html.escape(shown, quote=True)
    # the visible marks get a style of their own, so a reader sees they are not the model's text
    return Markup(_MARK.sub(lambda m: f'<span class="ctl">{m.group()}</span>', marked))


def join(parts: Iterable[Any], sep: str = "") -> Markup:
    """``parts`` joined, each escaped unless it is already :class:`Markup`."""
    return Markup(text(sep).join(text(p) for p in parts))


def attribute(value: Any) -> str:
    """Any value as a quoted attribute's text: as :func:`text`, but the visible marks are left
    bare, since an attribute holds no markup (the mark's ``<span class="ctl">`` would close the
    quotes it sits in), and a :class:`Markup` is escaped like any other value."""
    return html.escape(neutral(str(value)), quote=True)


def svg_text(value: Any, *, drawn: bool = True) -> Markup:
    """Any value as the text of an SVG element: as :func:`text`, but each visible mark of a drawn
    text (``<text>``) in a ``<tspan>`` of the marks' colour, since an HTML ``<span>`` inside an
    SVG ends the SVG in a browser's HTML parser (the rest of the chart spills onto the page as
    text) and in an SVG file is an element nothing draws; not ``drawn`` (a ``<title>``, a
    ``<desc>``: text only), the marks bare. The two characters XML forbids that are no control
    (U+FFFE, U+FFFF) are marked too, so that a chart written as a file stays well-formed. A
    :class:`Markup` is escaped like any other value."""
    shown = html.escape(_NOT_XML.sub(lambda m: mark(m.group()), neutral(str(value))), quote=True)
    return Markup(_MARK.sub(lambda m: f'<tspan fill="#b00020">{m.group()}</tspan>', shown) if drawn else shown)


def tag(name: str, body: Any = "", **attrs: Any) -> Markup:
    """``<name attrs>body</name>``: attribute values (:func:`attribute`) and a plain-``str`` body
    escaped; an attribute that is ``None`` is left out. Attribute names come from this package's
    code, never from data: a trailing underscore is dropped (``class_`` is written ``class``) and
    an inner one is a hyphen (``aria_label``: ``aria-label``)."""
    rendered = "".join(f' {k.rstrip("_").replace("_", "-")}="{attribute(v)}"' for k, v in attrs.items() if v is not None)
    return Markup(f"<{name}{rendered}>{text(body)}</{name}>")

