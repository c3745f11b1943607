"""Evidence files made by the tests: real files of each kind Symposium reads.

The PDF is written here byte by byte (a page of Helvetica text per page given, one line per
``Tj``, a blank line where a paragraph ends) because no PDF writer is a dependency: it is a
valid PDF 1.4 that pypdf, Chromium and poppler open. The Word file is written by python-docx,
which Symposium reads it with. A "scanned" PDF has pages with no text layer at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

#: What the contract tests' evidence says: the passages the scripted agents cite.
CHART = ("Chart of the patient, admission note.\n\n"
         "Creatinine rose from 1.0 to 2.1 mg/dL within 48 hours of admission.\n\n"
         "Urine output fell below 0.5 mL/kg/h for twelve hours.\n")
LAB_PAGES = (
    ["Laboratory report", "", "Potassium 5.9 mmol/L, flagged high.", "", "Sodium 134 mmol/L."],
    ["Page two of the report.", "", "Bicarbonate 17 mmol/L: a metabolic acidosis.", "", "Haemoglobin 12.1 g/dL."],
)
GUIDELINE = ("Acute kidney injury is staged by creatinine and urine output.",
             "Stage 2: creatinine 2.0 to 2.9 times baseline, or urine output below 0.5 mL/kg/h for 12 hours or more.",
             "Hyperkalaemia above 6.0 mmol/L needs urgent treatment.")


def pdf_bytes(pages: Sequence[Sequence[str]]) -> bytes:
    """A PDF with one page per entry of ``pages``, each a list of lines ("" leaves a blank line)."""
    objects: list[bytes] = [b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"]
    contents: list[int] = []
    for lines in pages:
        ops = ["BT", "/F1 11 Tf", "14 TL", "72 740 Td"]
        for line in lines:
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            ops.append(f"({escaped}) Tj T*" if line else "T*")
        ops.append("ET")
        data = "\n".join(ops).encode("cp1252", errors="replace")
        objects.append(b"<< /Length %d >>\nstream\n" % len(data) + data + b"\nendstream")
        contents.append(len(objects))
    pages_id = len(objects) + len(pages) + 1
    kids = []
    for content in contents:
        objects.append(b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 1 0 R >> >> "
                       b"/Contents %d 0 R >>" % (pages_id, content))
        kids.append(len(objects))
    objects.append(b"<< /Type /Pages /Kids [" + b" ".join(b"%d 0 R" % k for k in kids) + b"] /Count %d >>" % len(kids))
    assert len(objects) == pages_id
    objects.append(b"<< /Type /Catalog /Pages %d 0 R >>" % pages_id)
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, len(objects), xref)
    return bytes(out)


def scanned_pdf_bytes(pages: int = 2) -> bytes:
    """A PDF whose pages carry no text layer (what a scan without OCR gives)."""
    return pdf_bytes([[] for _ in range(pages)])


def write_docx(path: Path, paragraphs: Sequence[str], table: Sequence[Sequence[str]] = ()) -> Path:
    import docx

    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    if table:
        grid = document.add_table(rows=len(table), cols=len(table[0]))
        for r, row in enumerate(table):
            for c, value in enumerate(row):
                grid.cell(r, c).text = value
    document.save(str(path))
    return path


def evidence_folder(root: Path) -> Path:
    """A case folder: the chart (.txt), the lab report (.pdf, two pages) and a guideline (.docx)."""
    folder = root / "case"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "chart.txt").write_text(CHART, encoding="utf-8")
    (folder / "labs.pdf").write_bytes(pdf_bytes(LAB_PAGES))
    write_docx(folder / "guideline.docx", GUIDELINE)
    return folder
