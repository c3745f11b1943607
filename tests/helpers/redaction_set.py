"""The labelled redaction set (``tests/fixtures/redaction/labelled.txt``) and its scoring, shared by
``benchmarks/redaction.py`` (the table) and ``tests/store/test_redact_recall.py`` (the same figures
held in ``make test``, and by the mutation benchmark: a recognizer loosened or dropped moves them).

Scoring, per kind of the identifiers marked in the set:

* **recall**: the share of marked identifiers whose every letter and digit is masked (by a mask of
  any kind: a phone masked as ``[NUMBER]`` is still hidden); **as its kind**: masked by its own kind;
* **precision**: of the masks of that kind, the share that cover some part of a marked identifier
  (a mask on a dose, a blood pressure, a year alone or a disease is a false one).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from outputs.redact import KINDS, Span, find

LABELLED = Path(__file__).resolve().parents[1] / "fixtures" / "redaction" / "labelled.txt"
_MARK = re.compile(r"\{\{(\w+):(.+?)\}\}")


@dataclass(frozen=True)
class Snippet:
    section: str
    line: int
    text: str
    gold: tuple[Span, ...]


def load(path: Path = LABELLED) -> list[Snippet]:
    """Every snippet of the set, its identifiers as spans of the unmarked text."""
    snippets, section = [], ""
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if raw.startswith("## "):
            section = raw[3:].strip()
        if not raw.strip() or raw.startswith("#"):
            continue
        text, gold, last = [], [], 0
        for match in _MARK.finditer(raw):
            kind, inner = match.group(1), match.group(2)
            if kind not in KINDS:
                raise ValueError(f"{path}:{number}: unknown kind {kind!r} (one of {', '.join(KINDS)})")
            text.append(raw[last:match.start()])
            start = sum(len(t) for t in text)
            text.append(inner)
            gold.append(Span(start, start + len(inner), kind))
            last = match.end()
        text.append(raw[last:])
        snippets.append(Snippet(section, number, "".join(text), tuple(gold)))
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


def score(snippets: list[Snippet], finder: Callable[[str], list[Span]] = find) -> dict[str, Tally]:
    """Each kind's tally over ``snippets``, with the misses and false masks quoted."""
    tallies = {kind: Tally() for kind in KINDS}
    for snip in snippets:
        found = finder(snip.text)
        for g in snip.gold:
            t = tallies[g.kind]
            t.gold += 1
            if _covered(snip.text, g, found):
                t.masked += 1
                t.as_kind += _covered(snip.text, g, [s for s in found if s.kind == g.kind])
            else:
                t.misses.append(f"line {snip.line}: {snip.text[g.start:g.end]!r}")
        for s in found:
            t = tallies[s.kind]
            t.predicted += 1
            if any(s.start < g.end and g.start < s.end for g in snip.gold):
                t.correct += 1
            else:
                t.false.append(f"line {snip.line}: {snip.text[s.start:s.end]!r}")
    return tallies
