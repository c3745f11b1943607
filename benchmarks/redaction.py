"""Recall and precision of ``--redact`` per kind of identifier, on the labelled synthetic set.

    python benchmarks/redaction.py             # the table in RELIABILITY.md
    python benchmarks/redaction.py --misses    # and every identifier left in clear, every false mask

The set (``tests/fixtures/redaction/labelled.txt``) is clinical and legal snippets written for the
project, several formats and countries per kind, every identifier marked; the scoring is
``tests/helpers/redaction_set.py``'s. The goal (issue 29): recall ≥ 0.98 for every structured kind
(phones, dates, emails, numbers, SSNs, URLs, IPs, ages, postcodes); names, addresses and facilities
are found by their company and a word list, and their figures are what they are. The set was
written together with the recognizers, so these are figures on text like the text they were built
for: a fresh set would score lower, names most. Nothing here times or needs a quiet machine.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# Run as a plain script, this folder comes first on sys.path and its backends.py would shadow
# the backends package: put the checkout first.
sys.path[:] = [str(REPO)] + [p for p in sys.path if Path(p or ".").resolve() not in (REPO, REPO / "benchmarks")]

from outputs.redact import KINDS, STRUCTURED  # noqa: E402
from tests.helpers.redaction_set import LABELLED, load, score  # noqa: E402

GOAL = 0.98


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--misses", action="store_true", help="list each identifier left in clear and each false mask")
    args = parser.parse_args(argv)
    snippets = load()
    tallies = score(snippets)
    sections = sorted({s.section for s in snippets})
    print(f"{len(snippets)} snippets ({', '.join(f'{sum(s.section == x for s in snippets)} {x}' for x in sections)}), "
          f"{sum(len(s.gold) for s in snippets)} identifiers marked, in {LABELLED.relative_to(REPO)}\n")
    print("| kind | marked | recall | as its kind | masks | precision | goal |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    short = []
    for kind in KINDS:
        t = tallies[kind]
        goal = f"recall ≥ {GOAL}" if kind in STRUCTURED else "stated"
        if kind in STRUCTURED and (t.recall is None or t.recall < GOAL):
            short.append(kind)
        print(f"| {kind} | {t.gold} | {_pct(t.recall)} | {_pct(t.as_kind / t.gold if t.gold else None)} | "
              f"{t.predicted} | {_pct(t.precision)} | {goal} |")
    total = sum(t.gold for t in tallies.values())
    masked = sum(t.masked for t in tallies.values())
    predicted = sum(t.predicted for t in tallies.values())
    correct = sum(t.correct for t in tallies.values())
    print(f"| all | {total} | {_pct(masked / total)} | | {predicted} | {_pct(correct / predicted if predicted else None)} | |")
    print()
    for section in sections:
        part = score([s for s in snippets if s.section == section]).values()
        g, m = sum(t.gold for t in part), sum(t.masked for t in part)
        p, c = sum(t.predicted for t in part), sum(t.correct for t in part)
        print(f"{section}: {sum(s.section == section for s in snippets)} snippets, {m}/{g} identifiers masked "
              f"(recall {_pct(m / g if g else None)}), {c}/{p} masks right (precision {_pct(c / p if p else None)})")
    if args.misses:
        for kind in KINDS:
            t = tallies[kind]
            for m in t.misses:
                print(f"missed {kind}: {m}")
            for f in t.false:
                print(f"false {kind}: {f}")
    if short:
        print(f"\nbelow the goal: {', '.join(short)}")
    return 1 if short else 0


if __name__ == "__main__":
    sys.exit(main())
