"""What evidence costs: reading, splitting and indexing a 300-page PDF and a long Word file, and
retrieval per turn, against baselines measured in the same run.

    python benchmarks/evidence.py                   # a 300-page PDF, a Word file as long: ~1.5 min of CPU
    python benchmarks/evidence.py --pages 30 --queries 50   # a smoke run
    python benchmarks/evidence.py --json out.json

The files are made here, offline, from a seeded generator of clinical and legal prose (an
admission and its progress notes, laboratory reports, a medical-negligence judgment, contract
clauses): the PDF by fpdf2 (Helvetica, 11 pt, A4, text flowed and wrapped as a word processor's
print does; about 560 words a page), the Word file by python-docx, and the same paragraphs as
a ``.txt``, the baseline: the same words through the same code with nothing to decode.

Indexing is what ``symposium run --evidence FILE`` does before the debate starts
(``tui.evidence.read_evidence``): read the file (:func:`protocols.core.documents.read`; pypdf's
layout mode for a PDF), cut it into passages (:func:`protocols.core.passages.split`) and build
the FTS5 index (:func:`store.evidence.retriever`). Each phase is timed on its own, each file
``--repeats`` times (the median is shown), and the whole path once more end to end.

Retrieval is what each debate turn does before its prompt is built
(:meth:`protocols.core.evidence.Grounding.relevant`, the standard profile's 5 passages) over the
PDF's passages, for ``--queries`` turn queries made like the protocols' (EVINCE's: the case and
the request with the opponent's arguments, 150-300 words; SocraSynth's: one query per subtopic,
three here). Its baseline: the same queries answered without the index, by a Python scan that
counts each query word in every passage (what a turn would pay with no index at all).

The goals (issue's acceptance): indexing a 300-page PDF under 10 s on two cores, retrieval per
turn under 50 ms. Everything runs in one thread: the second core is left to the machine. A
busy machine slows every row alike: read the ratios; the lead re-runs the figures on a quiet
machine. Nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # the checkout's packages first, when run as a plain script

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from protocols.core.documents import read  # noqa: E402
from protocols.core.evidence import EvidenceSettings, Grounding  # noqa: E402
from protocols.core.passages import Passage, split  # noqa: E402
from store.evidence import retriever, terms  # noqa: E402
from tui.evidence import read_evidence  # noqa: E402

INDEX_GOAL_S = 10.0
RETRIEVAL_GOAL_MS = 50.0

T = TypeVar("T")

# -- the prose ----------------------------------------------------------------------------------

_SLOTS: dict[str, tuple[str, ...]] = {
    "patient": ("the patient", "Mr Hale", "Mrs Okafor", "the claimant", "the deceased", "the plaintiff"),
    "doctor": ("the registrar", "Dr Lindqvist", "the consultant nephrologist", "the night house officer",
               "the admitting physician", "Dr Moreau", "the on-call surgeon"),
    "drug": ("gentamicin", "vancomycin", "furosemide", "ramipril", "ibuprofen", "metformin", "piperacillin-tazobactam",
             "amlodipine", "enoxaparin", "ondansetron", "co-amoxiclav", "prednisolone", "spironolactone"),
    "dose": ("5 mg", "10 mg", "20 mg", "40 mg", "80 mg", "500 mg", "1 g", "1.5 g", "4.5 g", "120 mg/kg"),
    "route": ("orally", "intravenously", "subcutaneously", "by nasogastric tube"),
    "freq": ("once daily", "twice daily", "three times daily", "every eight hours", "every twelve hours", "at night"),
    "lab": ("creatinine", "potassium", "sodium", "urea", "bicarbonate", "lactate", "haemoglobin", "white cell count",
            "C-reactive protein", "troponin", "bilirubin", "alkaline phosphatase", "albumin", "INR", "glucose"),
    "unit": ("mg/dL", "mmol/L", "g/dL", "x10^9/L", "mg/L", "ng/L", "umol/L", "IU/L"),
    "trend": ("rose", "fell", "remained stable", "doubled", "peaked", "settled", "climbed steadily", "dropped sharply"),
    "finding": ("bibasal crackles", "pitting oedema to the knees", "a soft, non-tender abdomen", "dry mucous membranes",
                "a pericardial rub", "reduced air entry at the right base", "jaundiced sclerae", "a palpable bladder",
                "no focal neurology", "a capillary refill time of four seconds", "a widespread petechial rash"),
    "diagnosis": ("acute kidney injury", "sepsis of urinary origin", "community-acquired pneumonia", "decompensated cirrhosis",
                  "heart failure with reduced ejection fraction", "diabetic ketoacidosis", "rhabdomyolysis",
                  "an upper gastrointestinal bleed", "hyperkalaemia", "a urinary tract infection", "cellulitis of the leg"),
    "test": ("a renal ultrasound", "a chest radiograph", "an arterial blood gas", "blood cultures", "a urine dipstick",
             "an echocardiogram", "a CT scan of the abdomen", "serum drug levels", "an ECG", "a creatine kinase level"),
    "time": ("on admission", "within 48 hours", "on the second day", "overnight", "by the morning ward round",
             "over the following week", "at 02:40", "before discharge", "on day five", "after the first dose"),
    "ward": ("the acute medical unit", "ward 7B", "the high-dependency unit", "the emergency department", "the renal ward"),
    "party": ("the Trust", "the Defendant", "the Claimant", "the Supplier", "the Customer", "the Hospital", "the Licensee",
              "the Contractor", "the Employer", "the insurer"),
    "duty": ("to monitor renal function daily", "to review the drug chart", "to obtain informed consent",
             "to escalate a falling urine output", "to act on an abnormal result", "to keep adequate records",
             "to supply the goods free from defect", "to give reasonable notice", "to maintain the equipment",
             "to indemnify the other party", "to keep the information confidential"),
    "standard": ("a responsible body of medical opinion", "the standard of a reasonably competent registrar",
                 "the practice of the time", "the relevant NICE guidance", "the Trust's own protocol",
                 "the terms of the agreement", "the ordinary skill of an ordinary competent practitioner"),
    "authority": ("Bolam v Friern Hospital Management Committee [1957] 1 WLR 582",
                  "Bolitho v City and Hackney Health Authority [1998] AC 232",
                  "Montgomery v Lanarkshire Health Board [2015] UKSC 11", "Hadley v Baxendale (1854) 9 Exch 341",
                  "section 2(1) of the Unfair Contract Terms Act 1977", "section 14 of the Limitation Act 1980",
                  "Barnett v Chelsea and Kensington Hospital Management Committee [1969] 1 QB 428"),
    "expert": ("the Claimant's nephrology expert", "Professor Adeyemi", "the Defendant's expert in acute medicine",
               "Dr Castellano", "the joint expert", "the pharmacology expert"),
    "clause": ("clause 4.2", "clause 7.1(b)", "clause 9", "clause 12.3", "Schedule 2", "clause 15.4", "clause 18"),
    "money": ("GBP 12,500", "GBP 48,000", "GBP 250,000", "GBP 1.2 million", "EUR 75,000", "USD 310,000"),
    "date": ("3 March 2021", "14 June 2020", "the 28th of February 2022", "1 January 2019", "19 October 2021",
             "30 November 2020", "7 August 2023"),
}

_CLINICAL = (
    "{Patient} was admitted to {ward} {time} with a three-day history of vomiting and reduced oral intake.",
    "On examination there were {finding} and {finding}.",
    "Serum {lab} {trend} from {n1} to {n2} {unit} {time}.",
    "{Doctor} prescribed {drug} {dose} {route} {freq}, and {drug} was withheld.",
    "The working diagnosis was {diagnosis}; the differential included {diagnosis} and {diagnosis}.",
    "{Test} was requested {time} but is not documented as having been performed.",
    "The drug chart records {drug} {dose} {freq} continuing until {date}.",
    "Urine output fell below 0.5 mL/kg/h for {hours} hours and fluid balance was not recorded.",
    "The nursing notes record a National Early Warning Score of {score} at {clock}, with no escalation documented.",
    "Repeat bloods showed {lab} of {n1} {unit} and {lab} of {n2} {unit}.",
    "{Doctor} reviewed {patient} {time} and documented {finding}.",
    "{Test} showed no obstruction, and the kidneys measured {n3} cm bilaterally.",
    "Blood pressure was {bp} mmHg and the heart rate {hr} beats per minute.",
    "{Drug} levels were not checked before the third dose, contrary to the ward protocol.",
    "The plan was to give intravenous fluids, stop nephrotoxic drugs and recheck {lab} {time}.",
    "{Patient} was transferred to {ward} {time} after {lab} reached {n2} {unit}.",
    "A discharge summary dated {date} lists {diagnosis} as the principal diagnosis.",
    "{Doctor} discussed the findings with the family and recorded their concerns about {drug}.",
)

_LEGAL = (
    "It is common ground that {party} owed {patient} a duty {duty}.",
    "The question is whether the care given fell below {standard}.",
    "{Expert} gave evidence that {drug} should have been stopped once {lab} {trend}.",
    "I accept the evidence of {expert} on this point, which was not shaken in cross-examination.",
    "Applying {authority}, a practice must withstand logical analysis before it can be relied upon.",
    "Under {clause}, {party} undertook {duty}, and that obligation survived termination.",
    "The failure {duty} was, in my judgment, a breach of that duty.",
    "{Party} contends that the loss claimed is too remote; I do not accept that submission.",
    "Damages are assessed at {money}, with interest from {date}.",
    "The claim was issued on {date}, within the period allowed by {authority}.",
    "Causation is disputed: {expert} considered that {diagnosis} would have developed in any event.",
    "On the balance of probabilities, earlier treatment would have avoided the need for dialysis.",
    "Nothing in {clause} excludes liability for negligence in terms that satisfy {authority}.",
    "{Party} shall give not less than thirty days' written notice before suspending performance.",
    "The records kept by {party} were incomplete, and I draw the inference that {test} was not done.",
    "The parties agreed a schedule of loss totalling {money}, subject to liability.",
    "Counsel for {party} relied on {authority}, which in my view is distinguishable on its facts.",
    "Any notice under {clause} shall be in writing and delivered by hand or recorded post.",
)

_HEADINGS_CLINICAL = ("Admission note", "Progress note", "Ward round", "Laboratory report", "Drug chart review",
                      "Nursing record", "Discharge summary", "Referral letter")
_HEADINGS_LEGAL = ("Judgment", "The facts", "The expert evidence", "Breach of duty", "Causation", "Quantum",
                   "The contract", "Conclusion")


def _fill(template: str, rng: random.Random) -> str:
    def slot(m: re.Match[str]) -> str:
        key = m.group(1)
        low = key.lower()
        if low in _SLOTS:
            word = rng.choice(_SLOTS[low])
            return word[0].upper() + word[1:] if key[0].isupper() else word
        return {"n1": f"{rng.uniform(0.5, 9):.1f}", "n2": f"{rng.uniform(1, 12):.1f}", "n3": f"{rng.uniform(9, 12.5):.1f}",
                "hours": str(rng.randint(4, 24)), "score": str(rng.randint(3, 9)),
                "clock": f"{rng.randint(0, 23):02d}:{rng.choice((0, 15, 30, 45)):02d}",
                "bp": f"{rng.randint(78, 165)}/{rng.randint(40, 95)}", "hr": str(rng.randint(55, 135))}[low]

    return re.sub(r"\{(\w+)\}", slot, template)


def prose(seed: int) -> Iterator[tuple[str | None, str]]:
    """An endless case bundle: ``(heading or None, paragraph)``, clinical records then legal
    prose in alternating sections, each paragraph three to seven sentences."""
    rng = random.Random(seed)
    section = 0
    while True:
        legal = section % 3 == 2
        heading = rng.choice(_HEADINGS_LEGAL if legal else _HEADINGS_CLINICAL) + f" ({section + 1})"
        for i in range(rng.randint(3, 8)):
            templates = _LEGAL if legal else _CLINICAL
            sentences = [_fill(rng.choice(templates), rng) for _ in range(rng.randint(3, 7))]
            yield (heading if i == 0 else None, " ".join(sentences))
        section += 1


def write_pdf(path: Path, pages: int, seed: int) -> tuple[list[str], int]:
    """A ``pages``-page A4 PDF of :func:`prose` (fpdf2, Helvetica 11 pt, wrapped and flowed);
    the paragraphs written (headings included, in order) and their words."""
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.set_margins(20, 20, 20)
    pdf.set_auto_page_break(True, margin=20)
    pdf.add_page()
    written: list[str] = []
    for heading, paragraph in prose(seed):
        if pdf.page_no() == pages and pdf.get_y() > pdf.h - 20 - 60:  # the last page is full enough
            break
        if heading:
            pdf.set_font("Helvetica", "B", 12)
            pdf.multi_cell(0, 7, heading, new_x="LMARGIN", new_y="NEXT")
            written.append(heading)
        pdf.set_font("Helvetica", size=11)
        pdf.multi_cell(0, 5.5, paragraph, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(3)
        written.append(paragraph)
    pdf.output(str(path))
    return written, sum(len(p.split()) for p in written)


def write_docx(path: Path, paragraphs: list[str], headings: set[int]) -> None:
    import docx

    document = docx.Document()
    for i, text in enumerate(paragraphs):
        if i in headings:
            document.add_heading(text, level=2)
        else:
            document.add_paragraph(text)
    document.save(str(path))


# -- timing -------------------------------------------------------------------------------------

def _timed(fn: Callable[[], T]) -> tuple[float, float, T]:
    """Wall-clock and CPU seconds of ``fn()`` (one thread: on an idle core the two agree; on a
    busy machine the CPU time is what the work itself costs), and its result."""
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w0, time.process_time() - c0, out


def index_phases(path: Path, repeats: int) -> dict[str, Any]:
    """Median CPU seconds of reading, splitting and indexing ``path`` (``repeats`` runs each),
    the median wall-clock of the three together, the whole path (``read_evidence``) once more,
    and what it gave."""
    runs: dict[str, list[float]] = {"read": [], "split": [], "index": [], "wall": []}
    passages: list[Passage] = []
    pages = None
    for _ in range(repeats):
        w_read, t_read, document = _timed(lambda: read(path))
        w_split, t_split, passages = _timed(lambda: split(document.pages, file=1, first=1))
        w_index, t_index, _ = _timed(lambda: retriever(passages))
        runs["read"].append(t_read)
        runs["split"].append(t_split)
        runs["index"].append(t_index)
        runs["wall"].append(w_read + w_split + w_index)
        pages = len(document.pages) if document.paged else None
    w_whole, t_whole, _ = _timed(lambda: read_evidence([str(path)], EvidenceSettings()))
    medians = {k: statistics.median(v) for k, v in runs.items()}
    return {**medians, "cpu": medians["read"] + medians["split"] + medians["index"], "whole_cpu": t_whole,
            "whole_wall": w_whole, "passages": len(passages), "pages": pages, "bytes": path.stat().st_size}


def turn_queries(n: int, seed: int) -> list[tuple[str, list[str]]]:
    """``n`` turns' queries: EVINCE's (the case and a request carrying the opponent's arguments)
    and SocraSynth's (three subtopics, each with its side's points)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        case = " ".join(_fill(rng.choice(_CLINICAL), rng) for _ in range(2))
        arguments = " ".join(_fill(rng.choice(_CLINICAL + _LEGAL), rng) for _ in range(rng.randint(6, 12)))
        evince = f"{case}\nAgent B predicts: {rng.choice(_SLOTS['diagnosis'])} 60%. Its arguments: {arguments}\n" \
                 "Refute Agent B with counterarguments, then give your own top 3 with arguments."
        subtopics = [f"{_fill(rng.choice(_LEGAL), rng)} {_fill(rng.choice(_CLINICAL), rng)}" for _ in range(3)]
        out.append((evince, subtopics))
    return out


def scan_retriever(passages: list[Passage]) -> Callable[[str, int], list[str]]:
    """The baseline: no index; every passage scanned for the query's words, most hits first."""
    lowered = [(p.id, p.text.casefold()) for p in passages]

    def retrieve(query: str, k: int) -> list[str]:
        words = terms(query)
        scored = sorted(((-sum(text.count(w) for w in words), i, pid) for i, (pid, text) in enumerate(lowered)))
        return [pid for hits, _, pid in scored[:k] if hits < 0]

    return retrieve


def retrieval(passages: list[Passage], queries: list[tuple[str, list[str]]]) -> dict[str, dict[str, list[float]]]:
    """Seconds per turn (wall and CPU): FTS5 with one query and with three, and the scan with
    one; the three interleaved turn by turn, so a busy spell slows them alike."""
    from protocols.core.evidence import Evidence
    from protocols.core.passages import EvidenceFile

    evidence = Evidence((EvidenceFile(1, "bundle.pdf", "pdf", 0, "0" * 64, 1, len(passages)),), tuple(passages))
    indexed = Grounding(evidence, EvidenceSettings(), retriever(passages))
    scanned = Grounding(evidence, EvidenceSettings(), scan_retriever(passages))
    runs: dict[str, tuple[Grounding, Callable[[str, list[str]], list[str]]]] = {
        "FTS5 BM25, 1 query (EVINCE)": (indexed, lambda one, _: [one]),
        "FTS5 BM25, 3 queries (SocraSynth)": (indexed, lambda _, three: three),
        "baseline: scan, 1 query": (scanned, lambda one, _: [one]),
    }
    times: dict[str, dict[str, list[float]]] = {name: {"wall": [], "cpu": []} for name in runs}
    for one, three in queries:
        for name, (grounding, pick) in runs.items():
            wall, cpu, shown = _timed(lambda: grounding.relevant(pick(one, three)))
            assert len(shown) == grounding.settings.evidence_passages
            times[name]["wall"].append(wall)
            times[name]["cpu"].append(cpu)
    return times


def _pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def _goal(value: float, goal: float, unit: str) -> str:
    return f"< {goal:g} {unit}: {'met' if value < goal else 'MISSED'}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=300, help="pages of the PDF (default 300)")
    parser.add_argument("--queries", type=int, default=300, help="turns whose retrieval is timed (default 300)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each file's indexing; the median is shown (default 3)")
    parser.add_argument("--seed", type=int, default=7, help="the prose's and the queries' seed (default 7)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()
    console = Console(width=max(Console().width, 150))
    with tempfile.TemporaryDirectory(prefix="symposium-evidence-bench-") as tmp:
        folder = Path(tmp)
        _, c_pdf, (written, words) = _timed(lambda: write_pdf(folder / "bundle.pdf", args.pages, args.seed))
        headings = {i for i, p in enumerate(written) if re.fullmatch(r"[A-Z][a-z ]+ \(\d+\)", p)}
        _, c_docx, _ = _timed(lambda: write_docx(folder / "bundle.docx", written, headings))
        (folder / "bundle.txt").write_text("\n\n".join(written) + "\n", encoding="utf-8")
        console.print(f"made bundle.pdf (fpdf2, {c_pdf:.1f} s CPU), bundle.docx (python-docx, {c_docx:.1f} s) and bundle.txt: "
                      f"the same {len(written):,} paragraphs, {words:,} words; {os.cpu_count()} CPUs here, one thread used")
        results = {name: index_phases(folder / f"bundle.{name}", args.repeats) for name in ("txt", "pdf", "docx")}
        pdf_passages = split(read(folder / "bundle.pdf").pages, file=1, first=1)
        times = retrieval(pdf_passages, turn_queries(args.queries, args.seed + 1))

    base = results["txt"]["cpu"]
    table = Table(title=f"indexing: read + split + FTS5 index, CPU seconds (median of {args.repeats}); wall-clock beside")
    for col in ("file", "pages", "passages", "MB", "read", "split", "index", "total CPU", "× .txt", "total wall",
                "whole path CPU / wall", "goal (300-page PDF)"):
        table.add_column(col, justify="right")
    for name, r in results.items():
        goal = ""
        if name == "pdf" and (r["pages"] or 0) >= 300:
            goal = f"{_goal(r['cpu'], INDEX_GOAL_S, 's')} (CPU), {'met' if r['wall'] < INDEX_GOAL_S else 'MISSED'} (wall)"
        table.add_row(f"bundle.{name}", str(r["pages"] or "–"), f"{r['passages']:,}", f"{r['bytes'] / 1e6:.2f}",
                      f"{r['read']:.3f}", f"{r['split']:.3f}", f"{r['index']:.3f}", f"{r['cpu']:.3f}",
                      f"{r['cpu'] / base:.1f}×", f"{r['wall']:.3f}", f"{r['whole_cpu']:.3f} / {r['whole_wall']:.3f}", goal)
    console.print(table)

    scan = statistics.median(times["baseline: scan, 1 query"]["cpu"])
    table = Table(title=f"retrieval per turn (Grounding.relevant, 5 passages) over the PDF's {len(pdf_passages):,} passages, "
                        f"{args.queries} turns: CPU ms; wall-clock beside")
    for col in ("retriever", "p50", "p95", "max", "p50 × scan", "wall p50", "wall p95", "goal"):
        table.add_column(col, justify="right")
    for name, t in times.items():
        cpu, wall = t["cpu"], t["wall"]
        goal = (f"{_goal(_pct(cpu, 0.95) * 1e3, RETRIEVAL_GOAL_MS, 'ms')} at p95 (CPU), "
                f"{'met' if _pct(wall, 0.95) * 1e3 < RETRIEVAL_GOAL_MS else 'MISSED'} (wall)") if name.startswith("FTS5") else ""
        table.add_row(name, f"{statistics.median(cpu) * 1e3:.2f}", f"{_pct(cpu, 0.95) * 1e3:.2f}", f"{max(cpu) * 1e3:.2f}",
                      f"{statistics.median(cpu) / scan:.2f}×", f"{statistics.median(wall) * 1e3:.2f}",
                      f"{_pct(wall, 0.95) * 1e3:.2f}", goal)
    console.print(table)
    if args.json:
        summary = {name: {f"{clock}_{stat}_ms": fn(t[clock]) * 1e3 for clock in ("cpu", "wall")
                          for stat, fn in (("p50", statistics.median), ("p95", lambda xs: _pct(xs, 0.95)), ("max", max))}
                   for name, t in times.items()}
        Path(args.json).write_text(json.dumps({"indexing_s": results, "retrieval": summary, "paragraphs": len(written),
                                               "words": words, "cpus": os.cpu_count()}, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
