"""The labelled redaction sets and their scoring, shared by ``benchmarks/redaction.py`` (the tables)
and the recall tests (the same figures held in ``make test``, and by the mutation benchmark: a
recognizer loosened or dropped moves them).

Eight sets, each in ``tests/fixtures/redaction/``: ``labelled.txt``, ``dev.txt``, ``dev2.txt``,
``dev3.txt`` and ``dev4.txt`` are the tuning sets (the recognizers were written and tuned against
them; ``dev2.txt`` to ``dev4.txt`` were written and committed before the tuning on them);
``frozen.txt``, ``heldout3.txt`` and ``heldout4.txt`` are held out, written before any tuning on them and never read to tune, so their
figures say what the recognizers do on text they were not written for.

Marks: ``{{kind:text}}`` is an identifier, ``{{kind/sub:text}}`` the same with a finer label for the
tables (``number/mrn``, ``address/town``); ``{{keep:text}}`` is a distractor (a dose, a code, a
version) that must come out exactly as written. A literal ``\\n`` in a line is a line break of its
snippet (a label with its value on the next line, a table's rows).

Scoring, per kind of the identifiers marked in the set:

* **recall**: the share of marked identifiers whose every letter and digit is masked (by a mask of
  any kind: a phone masked as ``[NUMBER]`` is still hidden); **as its kind**: masked by its own kind;
* **precision**: of the masks of that kind, the share that cover some part of a marked identifier
  (a mask on a dose, a blood pressure, a year alone or a disease is a false one);
* **survival**: the share of ``keep`` distractors of which no letter or digit is masked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from outputs.redact import KINDS, Span, find

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "redaction"
LABELLED = FIXTURES / "labelled.txt"
DEV = FIXTURES / "dev.txt"
DEV2 = FIXTURES / "dev2.txt"
DEV3 = FIXTURES / "dev3.txt"
HELDOUT3 = FIXTURES / "heldout3.txt"
DEV4 = FIXTURES / "dev4.txt"
HELDOUT4 = FIXTURES / "heldout4.txt"
DEV5 = FIXTURES / "dev5.txt"
DEV6 = FIXTURES / "dev6.txt"
DEV7 = FIXTURES / "dev7.txt"
HELDOUT5 = FIXTURES / "heldout5.txt"
FROZEN = FIXTURES / "frozen.txt"
_MARK = re.compile(r"\{\{(\w+)(?:/(\w+))?:(.+?)\}\}")


@dataclass(frozen=True)
class Snippet:
    section: str
    line: int
    text: str
    gold: tuple[Span, ...]
    subs: tuple[str, ...] = ()  # each gold span's finer label ("" where none), in gold's order
    keeps: tuple[Span, ...] = ()  # the distractors that must survive


def load(path: Path = LABELLED) -> list[Snippet]:
    """Every snippet of the set, its identifiers (and distractors) as spans of the unmarked text."""
    snippets, section = [], ""
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if raw.startswith("## "):
            section = raw[3:].strip()
        if not raw.strip() or raw.startswith("#"):
            continue
        raw = raw.replace("\\n", "\n")
        text: list[str] = []
        gold: list[Span] = []
        subs: list[str] = []
        keeps: list[Span] = []
        last = 0
        for match in _MARK.finditer(raw):
            kind, sub, inner = match.group(1), match.group(2) or "", match.group(3)
            if kind not in KINDS and kind != "keep":
                raise ValueError(f"{path}:{number}: unknown kind {kind!r} (one of {', '.join(KINDS)}, or keep)")
            text.append(raw[last:match.start()])
            start = sum(len(t) for t in text)
            text.append(inner)
            if kind == "keep":
                keeps.append(Span(start, start + len(inner), kind))
            else:
                gold.append(Span(start, start + len(inner), kind))
                subs.append(sub)
            last = match.end()
        text.append(raw[last:])
        snippets.append(Snippet(section, number, "".join(text), tuple(gold), tuple(subs), tuple(keeps)))
    return snippets


@dataclass
class Tally:
    gold: int = 0
    masked: int = 0
    as_kind: int = 0
    predicted: int = 0
    correct: int = 0
    misses: list[str] = field(default_factory=list)
    false: list[str] = field(default_factory=list)

    @property
    def recall(self) -> float | None:
        return self.masked / self.gold if self.gold else None

    @property
    def precision(self) -> float | None:
        return self.correct / self.predicted if self.predicted else None


def _covered(text: str, span: Span, spans: Iterable[Span]) -> bool:
    hidden = set()
    for s in spans:
        hidden.update(range(s.start, s.end))
    return all(i in hidden for i in range(span.start, span.end) if text[i].isalnum())


@dataclass
class Result:
    """One set scored: a tally per kind, the recall per finer label, and the distractors' fate."""

    kinds: dict[str, Tally]
    subs: dict[str, Tally]
    keeps: int = 0
    survived: int = 0
    clobbered: list[str] = field(default_factory=list)

    @property
    def survival(self) -> float | None:
        return self.survived / self.keeps if self.keeps else None


def evaluate(snippets: list[Snippet], finder: Callable[[str], list[Span]] = find) -> Result:
    """Every figure of ``snippets``: each kind's tally, each finer label's recall, and how many
    distractors came out whole; misses, false masks and clobbered distractors quoted."""
    result = Result({kind: Tally() for kind in KINDS}, {})
    for snip in snippets:
        found = finder(snip.text)
        subs = snip.subs or ("",) * len(snip.gold)
        for g, sub in zip(snip.gold, subs):
            t = result.kinds[g.kind]
            fine = result.subs.setdefault(f"{g.kind}/{sub}" if sub else g.kind, Tally())
            t.gold += 1
            fine.gold += 1
            if _covered(snip.text, g, found):
                t.masked += 1
                fine.masked += 1
                t.as_kind += _covered(snip.text, g, [s for s in found if s.kind == g.kind])
            else:
                t.misses.append(f"line {snip.line}: {snip.text[g.start:g.end]!r}")
                fine.misses.append(t.misses[-1])
        for s in found:
            t = result.kinds[s.kind]
            t.predicted += 1
            if any(s.start < g.end and g.start < s.end for g in snip.gold):
                t.correct += 1
            else:
                t.false.append(f"line {snip.line}: {snip.text[s.start:s.end]!r}")
        for k in snip.keeps:
            result.keeps += 1
            if any(s.start < k.end and k.start < s.end and any(c.isalnum() for c in snip.text[max(s.start, k.start):min(s.end, k.end)])
                   for s in found):
                result.clobbered.append(f"line {snip.line}: {snip.text[k.start:k.end]!r}")
            else:
                result.survived += 1
    return result


def score(snippets: list[Snippet], finder: Callable[[str], list[Span]] = find) -> dict[str, Tally]:
    """Each kind's tally over ``snippets``, with the misses and false masks quoted."""
    return evaluate(snippets, finder).kinds
