"""Reading the user's evidence files: ``.txt``, ``.md``, ``.pdf``, ``.docx``, ``.html``.

Each reader gives a file's text as pages (``(page number, text)``; one page numbered ``None``
for a file without pages) in which paragraphs are separated by blank lines, for
:mod:`protocols.core.passages` to cut into passages:

* text and Markdown: UTF-8 (a byte-order mark is dropped), as written;
* PDF (``pypdf``): each page's text layer in pypdf's layout mode, which keeps a blank line where
  the page leaves vertical space between paragraphs (its plain mode runs them together); an
  encrypted file is opened with the empty password when it has one, else refused; a PDF with no
  text on any page is refused as a scan (no silent empty evidence), and pages without text are
  named in the file's notes;
* Word (``python-docx``): the body's paragraphs and tables (a row's cells joined by `` | ``), in
  document order; a Word file has no pages until it is laid out, so paragraphs are counted
  through the document;
* HTML (the standard library's parser): the text of block elements (paragraphs, headings, list
  items, table cells …) as paragraphs; scripts, styles and templates are left out; entities
  decoded. Markup in the text is kept as text: nothing is rendered.

A file that cannot be read is refused before the debate starts (:class:`EvidenceError`, naming
the file and what to do); a folder is read file by file in name order, its hidden files skipped
and its files of other kinds listed (not refused: a case folder holds scans and spreadsheets too).
The text is kept as the file holds it, with only NUL characters and half surrogate pairs (which
no journal or terminal takes) replaced: the passages are what a quote is checked against.
"""

from __future__ import annotations

import hashlib
import io
import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from protocols.core.evidence import Evidence
from protocols.core.passages import MAX_CHARS, EvidenceFile, Passage, split

#: What each file ending is read as.
KINDS: dict[str, str] = {".txt": "text", ".text": "text", ".md": "markdown", ".markdown": "markdown", ".pdf": "pdf",
                         ".docx": "docx", ".html": "html", ".htm": "html"}
#: The largest file read (bytes): evidence is documents, not archives.
MAX_BYTES = 100 * 1024 * 1024
#: The most passages a debate's evidence may hold (a few thousand pages).
MAX_PASSAGES = 50_000

#: Masks identifiers in a text (``outputs.redact.redact``): the masked text and a count per kind.
Redact = Callable[[str], tuple[str, Mapping[str, int]]]

_UNWRITABLE = re.compile("[\x00\ud800-\udfff]")


class EvidenceError(ValueError):
    """An evidence file or folder that cannot be used; the message names it and says why."""


@dataclass(frozen=True)
class Document:
    """One file as read: its name as the journal keeps it, kind, size, SHA-256 and pages."""

    name: str
    kind: str
    size: int
    sha256: str
    pages: list[tuple[int | None, str]]
    paged: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)


def gather(paths: Iterable[str | Path]) -> tuple[list[tuple[Path, str]], list[str]]:
    """The files to read, in order, each with the name the journal keeps for it (relative to the
    folder it was found in, the folder's own name first), and notes on what a folder held that
    is not read. A missing path, a file of another kind named directly, or nothing to read at
    all is an :class:`EvidenceError`."""
    files: list[tuple[Path, str]] = []
    skipped: list[str] = []
    for given in paths:
        path = Path(given).expanduser()
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and not _hidden(p.relative_to(path)))
            for p in found:
                name = f"{path.name}/{p.relative_to(path).as_posix()}"
                if p.suffix.lower() in KINDS:
                    files.append((p, name))
                else:
                    skipped.append(name)
            if not any(p.suffix.lower() in KINDS for p in found):
                raise EvidenceError(f"{path}: no file Symposium can read in this folder (it reads {_kinds()})")
        elif path.is_file():
            if path.suffix.lower() not in KINDS:
                raise EvidenceError(f"{path}: Symposium reads {_kinds()}, not {path.suffix or 'files without an ending'}; "
                                    "convert it (e.g. save as PDF or plain text) or leave it out")
            files.append((path, path.name))
        else:
            raise EvidenceError(f"{path}: no such file or folder")
    notes = ([f"not read (other kinds): {', '.join(skipped[:8])}" + (f" and {len(skipped) - 8} more" if len(skipped) > 8 else "")]
             if skipped else [])
    return files, notes


def _hidden(relative: Path) -> bool:
    return any(part.startswith(".") for part in relative.parts)


def _kinds() -> str:
    return ", ".join(sorted(set(KINDS)))


def read(path: Path, name: str | None = None) -> Document:
    """One file read (see the module docstring); :class:`EvidenceError` when it cannot be."""
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise EvidenceError(f"{path}: {size:,} bytes is more than the {MAX_BYTES:,} an evidence file may have")
        data = path.read_bytes()
    except OSError as exc:
        raise EvidenceError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    kind = KINDS.get(path.suffix.lower())
    if kind is None:
        raise EvidenceError(f"{path}: Symposium reads {_kinds()}")
    reader = {"text": _text, "markdown": _text, "pdf": _pdf, "docx": _docx, "html": _html}[kind]
    pages, notes = reader(path, data)
    pages = [(page, _UNWRITABLE.sub("\ufffd", text)) for page, text in pages]
    if not any(text.strip() for _, text in pages):
        if kind == "pdf":
            raise EvidenceError(f"{path}: the PDF has no text to read (a scanned document?); run it through OCR "
                                "(e.g. ocrmypdf) and attach the result")
        raise EvidenceError(f"{path}: the file holds no text")
    return Document(name or path.name, kind, size, hashlib.sha256(data).hexdigest(), pages, kind == "pdf", tuple(notes))


def _text(path: Path, data: bytes) -> tuple[list[tuple[int | None, str]], list[str]]:
    try:
        return [(None, data.decode("utf-8-sig"))], []
    except UnicodeDecodeError as exc:
        raise EvidenceError(f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8 and attach it again") from None


def _pdf(path: Path, data: bytes) -> tuple[list[tuple[int | None, str]], list[str]]:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError, PyPdfError

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its warnings on odd files go to our notes, not the terminal
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise EvidenceError(f"{path}: the PDF is protected by a password; save an unprotected copy and attach that")
        pages: list[tuple[int | None, str]] = [(i, page.extract_text(extraction_mode="layout") or "")
                                               for i, page in enumerate(reader.pages, start=1)]
    except EvidenceError:
        raise
    except (PdfReadError, PyPdfError, ValueError, KeyError, TypeError, IndexError, AttributeError, RecursionError) as exc:
        raise EvidenceError(f"{path}: not a readable PDF ({type(exc).__name__}: {str(exc)[:160]})") from None
    empty = [str(i) for i, text in pages if not text.strip()]
    notes = [f"no text on page{'s' if len(empty) > 1 else ''} {', '.join(empty[:20])}{' …' if len(empty) > 20 else ''} "
             "(scanned?)"] if empty and len(empty) < len(pages) else []
    return pages, notes


def _docx(path: Path, data: bytes) -> tuple[list[tuple[int | None, str]], list[str]]:
    import zipfile

    import docx
    from docx.opc.exceptions import PackageNotFoundError
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    try:
        document = docx.Document(io.BytesIO(data))
        blocks: list[str] = []
        for child in document.element.body.iterchildren():
            tag = child.tag.rsplit("}", 1)[-1]
            if tag == "p":
                blocks.append(Paragraph(child, document).text)
            elif tag == "tbl":
                for row in Table(child, document).rows:
                    cells = list(dict.fromkeys(" ".join(c.text.split()) for c in row.cells))  # merged cells repeat
                    blocks.append(" | ".join(c for c in cells if c))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise EvidenceError(f"{path}: not a readable Word document ({type(exc).__name__}); save it again as .docx") from None
    return [(None, "\n\n".join(b.replace("\n", " ") for b in blocks))], []


#: Elements whose start or end ends a paragraph.
_BLOCKS = frozenset({"p", "div", "li", "ul", "ol", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "td", "th",
                     "table", "blockquote", "pre", "section", "article", "header", "footer", "aside", "main", "nav",
                     "figure", "figcaption", "caption", "br", "hr", "address", "details", "summary", "body", "title"})
#: Elements whose content is no text of the page.
_SKIPPED = frozenset({"script", "style", "template", "noscript", "svg", "head"})


class _HtmlText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[str] = []
        self.current: list[str] = []
        self.skipping = 0

    def _end_block(self) -> None:
        text = " ".join("".join(self.current).split())
        if text:
            self.blocks.append(text)
        self.current = []

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag in _SKIPPED:
            self.skipping += 1
        elif tag in _BLOCKS:
            self._end_block()

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED:
            self.skipping = max(0, self.skipping - 1)
        elif tag in _BLOCKS:
            self._end_block()

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.current.append(data)


def _html(path: Path, data: bytes) -> tuple[list[tuple[int | None, str]], list[str]]:
    try:
        source = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        source = data.decode("cp1252", errors="replace")
    parser = _HtmlText()
    parser.feed(source)
    parser.close()
    parser._end_block()
    return [(None, "\n\n".join(parser.blocks))], []


def load(paths: Sequence[str | Path], *, redact: Redact | None = None, limit: int = MAX_CHARS) -> tuple[Evidence, list[str]]:
    """The evidence of ``paths`` (files and folders, in order) and notes on what was left out.
    With ``redact``, each page's text (and each file's name) is masked before it is cut into
    passages, and the counts are kept on the file. :class:`EvidenceError` for anything that
    cannot be read."""
    found, notes = gather(paths)
    files: list[EvidenceFile] = []
    passages: list[Passage] = []
    seen: dict[str, str] = {}
    for number, (path, name) in enumerate(found, start=1):
        document = read(path, name)
        if document.sha256 in seen:
            notes.append(f"{name} is the same file as {seen[document.sha256]}: its passages appear twice")
        seen.setdefault(document.sha256, name)
        pages = document.pages
        counts: dict[str, int] = {}
        if redact is not None:
            masked = []
            for page, text in pages:
                clean, found_here = redact(text)
                masked.append((page, clean))
                for kind, n in found_here.items():
                    counts[kind] = counts.get(kind, 0) + n
            pages = masked
            name, found_here = redact(name)
            for kind, n in found_here.items():
                counts[kind] = counts.get(kind, 0) + n
        cut = split(pages, file=number, first=len(passages) + 1, limit=limit)
        if not cut:
            raise EvidenceError(f"{path}: the file holds no text")
        passages += cut
        if len(passages) > MAX_PASSAGES:
            raise EvidenceError(f"{path}: the evidence has more than {MAX_PASSAGES:,} passages; attach the parts that matter")
        files.append(EvidenceFile(number, name, document.kind, document.size, document.sha256, cut[0].number, len(cut),
                                  len(pages) if document.paged else None, counts, document.notes))
    return Evidence(tuple(files), tuple(passages)), notes


__all__ = ["Document", "EvidenceError", "KINDS", "MAX_BYTES", "Redact", "gather", "load", "read"]
