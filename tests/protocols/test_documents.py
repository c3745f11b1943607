"""Reading evidence files (protocols/core/documents.py): real files of each kind, made here
(tests/helpers/evidence_files.py), read with page and paragraph numbers kept; every file that
cannot be read is refused with its name and the reason, before anything else happens."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from protocols.core.documents import MAX_PASSAGES, EvidenceError, gather, load, read
from tests.helpers.evidence_files import CHART, GUIDELINE, LAB_PAGES, evidence_folder, pdf_bytes, scanned_pdf_bytes, write_docx


def test_a_case_folder_of_text_pdf_and_word_is_read_in_name_order_with_its_places(tmp_path: Path) -> None:
    folder = evidence_folder(tmp_path)
    evidence, notes = load([folder])
    assert notes == []
    assert [(f.number, f.name, f.kind, f.first, f.passages, f.pages) for f in evidence.files] == [
        (1, "case/chart.txt", "text", 1, 3, None), (2, "case/guideline.docx", "docx", 4, 3, None),
        (3, "case/labs.pdf", "pdf", 7, 6, 2)]
    for f, name in zip(evidence.files, ("chart.txt", "guideline.docx", "labs.pdf"), strict=True):
        data = (folder / name).read_bytes()
        assert (f.size, f.sha256) == (len(data), hashlib.sha256(data).hexdigest())
    labels = {p.label: p.text for p in evidence.passages}
    assert labels["E2 ¶2"] == "Creatinine rose from 1.0 to 2.1 mg/dL within 48 hours of admission."
    assert labels["E5 ¶2"] == GUIDELINE[1]
    assert labels["E8 p.1 ¶2"] == "Potassium 5.9 mmol/L, flagged high."
    assert labels["E11 p.2 ¶2"] == "Bicarbonate 17 mmol/L: a metabolic acidosis."
    assert [p.number for p in evidence.passages] == list(range(1, 13))


def test_text_files_keep_their_words_whatever_their_line_ends_and_lose_a_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "note.md"
    path.write_bytes(b"\xef\xbb\xbf# Note\r\n\r\nLine one\r\nline two\r\n")
    document = read(path)
    assert document.kind == "markdown" and document.pages == [(None, "# Note\r\n\r\nLine one\r\nline two\r\n")]
    evidence, _ = load([path])
    assert [p.text for p in evidence.passages] == ["# Note", "Line one line two"]


def test_a_word_documents_tables_are_read_row_by_row_in_place(tmp_path: Path) -> None:
    path = write_docx(tmp_path / "labs.docx", ["Before the table."], table=[["Test", "Value"], ["Sodium", "134"]])
    evidence, _ = load([path])
    assert [p.text for p in evidence.passages] == ["Before the table.", "Test | Value", "Sodium | 134"]


def test_html_is_read_as_the_text_of_its_blocks_without_scripts_or_styles(tmp_path: Path) -> None:
    path = tmp_path / "page.html"
    path.write_text("<html><head><title>T</title><style>p{}</style><script>alert(1)</script></head><body>"
                    "<h1>Guideline</h1><p>Stage 2 &amp; <b>urgent</b> care.</p><ul><li>One</li><li>Two</li></ul>"
                    "<p>&lt;script&gt; stays text</p></body></html>", encoding="utf-8")
    evidence, _ = load([path])
    assert [p.text for p in evidence.passages] == ["Guideline", "Stage 2 & urgent care.", "One", "Two", "<script> stays text"]


def test_a_pdfs_pages_without_text_are_named(tmp_path: Path) -> None:
    path = tmp_path / "mixed.pdf"
    path.write_bytes(pdf_bytes([LAB_PAGES[0], [], LAB_PAGES[1]]))
    evidence, _ = load([path])
    assert evidence.files[0].pages == 3 and evidence.files[0].notes == ("no text on page 2 (scanned?)",)
    assert {p.page for p in evidence.passages} == {1, 3}


def test_a_scanned_pdf_is_refused_as_a_scan(tmp_path: Path) -> None:
    path = tmp_path / "scan.pdf"
    path.write_bytes(scanned_pdf_bytes())
    with pytest.raises(EvidenceError, match=r"scan\.pdf: the PDF has no text to read \(a scanned document\?\); run it through OCR"):
        load([path])


@pytest.mark.parametrize(("name", "data", "why"), [
    ("broken.pdf", b"%PDF-1.4\nnot really", "not a readable PDF"),
    ("broken.docx", b"PK\x03\x04 not a zip", "not a readable Word document"),
    ("latin.txt", "café".encode("latin-1"), "not UTF-8 text"),
    ("empty.txt", b"  \n\n ", "the file holds no text"),
])
def test_a_file_that_cannot_be_read_is_refused_with_its_name_and_why(tmp_path: Path, name: str, data: bytes, why: str) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(EvidenceError, match=why) as caught:
        load([path])
    assert str(path) in str(caught.value)


def test_missing_paths_and_kinds_not_read_are_refused_and_a_folder_skips_others_but_names_them(tmp_path: Path) -> None:
    with pytest.raises(EvidenceError, match="no such file or folder"):
        gather([tmp_path / "nowhere.pdf"])
    (tmp_path / "scan.png").write_bytes(b"\x89PNG")
    with pytest.raises(EvidenceError, match=r"scan\.png: Symposium reads .*not \.png"):
        gather([tmp_path / "scan.png"])
    folder = evidence_folder(tmp_path)
    (folder / "photo.jpg").write_bytes(b"jpeg")
    (folder / ".hidden.txt").write_text("secret", encoding="utf-8")
    (folder / "sub").mkdir()
    (folder / "sub" / "more.txt").write_text("More.", encoding="utf-8")
    files, notes = gather([folder])
    assert [name for _, name in files] == ["case/chart.txt", "case/guideline.docx", "case/labs.pdf", "case/sub/more.txt"]
    assert notes == ["not read (other kinds): case/photo.jpg"]
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "a.xlsx").write_bytes(b"x")
    with pytest.raises(EvidenceError, match="no file Symposium can read in this folder"):
        gather([empty])


def test_the_same_file_twice_is_said(tmp_path: Path) -> None:
    one = tmp_path / "a.txt"
    one.write_text(CHART, encoding="utf-8")
    two = tmp_path / "b.txt"
    two.write_text(CHART, encoding="utf-8")
    evidence, notes = load([one, two])
    assert notes == ["b.txt is the same file as a.txt: its passages appear twice"] and len(evidence.passages) == 6


def test_redacting_before_indexing_masks_text_and_names_and_counts(tmp_path: Path) -> None:
    path = tmp_path / "John_Smith.txt"
    path.write_text("Patient John Smith, born 03/04/1950.\n\nCall 555-123-4567.", encoding="utf-8")

    def mask(text: str) -> tuple[str, dict[str, int]]:
        out, counts = text, {}
        for word, kind in (("John Smith", "name"), ("John_Smith", "name"), ("03/04/1950", "date"), ("555-123-4567", "phone")):
            if word in out:
                out = out.replace(word, f"[{kind.upper()}]")
                counts[kind] = counts.get(kind, 0) + 1
        return out, counts

    evidence, _ = load([path], redact=mask)
    assert [p.text for p in evidence.passages] == ["Patient [NAME], born [DATE].", "Call [PHONE]."]
    assert evidence.files[0].name == "[NAME].txt"
    assert evidence.files[0].redactions == {"name": 2, "date": 1, "phone": 1}
    assert evidence.files[0].sha256 == hashlib.sha256(path.read_bytes()).hexdigest()  # the file as read


def test_nul_and_half_surrogates_are_replaced_not_kept(tmp_path: Path) -> None:
    path = tmp_path / "odd.txt"
    path.write_bytes(b"a\x00b")
    evidence, _ = load([path])
    assert evidence.passages[0].text == "a\ufffdb"


def test_an_evidence_too_large_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("protocols.core.documents.MAX_PASSAGES", 2)
    path = tmp_path / "long.txt"
    path.write_text("a\n\nb\n\nc", encoding="utf-8")
    with pytest.raises(EvidenceError, match="more than 2 passages"):
        load([path])
    assert MAX_PASSAGES == 50_000
