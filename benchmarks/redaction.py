"""Recall and precision of ``--redact`` per kind of identifier, on the tuning sets and the frozen held-out set.

    python benchmarks/redaction.py             # the tables in docs/redaction.md
    python benchmarks/redaction.py --misses    # and every identifier left in clear, every false mask,
                                               # every distractor masked (tuning sets only: see below)
    python benchmarks/redaction.py --misses --frozen   # the same for the held-out sets (not for tuning)

The sets are in ``tests/fixtures/redaction/`` and scored by ``tests/helpers/redaction_set.py``.
``labelled.txt``, ``dev.txt``, ``dev2.txt``, ``dev3.txt`` and ``dev4.txt`` are the tuning sets: the
recognizers were written and tuned against them (``dev2.txt`` to ``dev4.txt`` were committed before
the tuning on them), so their figures are figures on text like the text they were built for.
``frozen.txt`` was written before any tuning, ``heldout3.txt`` (numbers and ages over 89) with
``dev3.txt`` and ``heldout4.txt`` (ages over 89 and number plates) with ``dev4.txt``, each before
the tuning on its pair; none is read to tune: their figures are the ones to quote. The goal: recall ≥ 0.95 on the frozen set for names and every structured kind (phones,
dates, emails, numbers, SSNs, URLs, IPs, ages, postcodes), precision stated, and the clinical
distractors it marks (doses, vitals, scores, codes, versions, statutes) left whole.
Nothing here times anything or needs a quiet machine.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # the checkout's packages first, when run as a plain script

from outputs.redact import KINDS, STRUCTURED  # noqa: E402
from tests.helpers.redaction_set import (  # noqa: E402
    DEV,
    DEV2,
    DEV3,
    DEV4,
    DEV5,
    DEV6,
    DEV7,
    FROZEN,
    HELDOUT3,
    HELDOUT4,
    HELDOUT5,
    LABELLED,
    Result,
    evaluate,
    load,
)

GOAL = 0.95
#: The sets never read to tune: their misses are listed only with --frozen.
HELD_OUT = (FROZEN, HELDOUT3, HELDOUT4, HELDOUT5)
SETS = (LABELLED, DEV, DEV2, DEV3, DEV4, DEV5, DEV6, DEV7, FROZEN, HELDOUT3, HELDOUT4, HELDOUT5)
#: The kinds the goal covers: names and every kind with a fixed shape.
GOALED = ("name", *STRUCTURED)


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def _table(path: Path, result: Result, snippets: int) -> list[str]:
    """One set's table by kind, its totals, and its recall by finer label."""
    k = result.kinds
    total, masked = sum(t.gold for t in k.values()), sum(t.masked for t in k.values())
    predicted, correct = sum(t.predicted for t in k.values()), sum(t.correct for t in k.values())
    lines = [f"### {path.name}: {snippets} snippets, {total} identifiers, {result.keeps} distractors", "",
             "| kind | marked | recall | as its kind | masks | precision |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for kind in KINDS:
        t = k[kind]
        lines.append(f"| {kind} | {t.gold} | {_pct(t.recall)} | {_pct(t.as_kind / t.gold if t.gold else None)} | "
                     f"{t.predicted} | {_pct(t.precision)} |")
    lines.append(f"| all | {total} | {_pct(masked / total if total else None)} | | {predicted} | "
                 f"{_pct(correct / predicted if predicted else None)} |")
    lines.append("")
    if result.keeps:
        lines.append(f"distractors left whole: {result.survived}/{result.keeps} (survival {_pct(result.survival)})")
    finer = {label: t for label, t in sorted(result.subs.items()) if "/" in label}
    if finer:
        lines.append("by finer label (recall): " + ", ".join(f"{label} {t.masked}/{t.gold}" for label, t in finer.items()))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--misses", action="store_true",
                        help="list each identifier left in clear, each false mask and each distractor masked (tuning sets)")
    parser.add_argument("--frozen", action="store_true",
                        help="with --misses, list the held-out sets' too: for reporting only, never for tuning")
    parser.add_argument("--set", action="append", choices=[p.name for p in SETS], dest="sets",
                        help="only this set (repeatable); the goal line needs frozen.txt")
    args = parser.parse_args(argv)
    short: list[str] = []
    for path in SETS:
        if args.sets and path.name not in args.sets:
            continue
        snippets = load(path)
        result = evaluate(snippets)
        print("\n".join(_table(path, result, len(snippets))))
        sections = sorted({s.section for s in snippets})
        for section in sections:
            part = evaluate([s for s in snippets if s.section == section]).kinds.values()
            g, m = sum(t.gold for t in part), sum(t.masked for t in part)
            p, c = sum(t.predicted for t in part), sum(t.correct for t in part)
            print(f"  {section}: {m}/{g} identifiers masked (recall {_pct(m / g if g else None)}), "
                  f"{c}/{p} masks right (precision {_pct(c / p if p else None)})")
        if path == FROZEN:
            short = [kind for kind in GOALED if (result.kinds[kind].recall or 0.0) < GOAL]
        if args.misses and (path not in HELD_OUT or args.frozen):
            for kind in KINDS:
                t = result.kinds[kind]
                print("\n".join([f"{path.name}: missed {kind}: {m}" for m in t.misses]
                                 + [f"{path.name}: false {kind}: {f}" for f in t.false]))
            print("\n".join(f"{path.name}: distractor masked: {c}" for c in result.clobbered))
        print()
    if args.sets and FROZEN.name not in args.sets:
        return 0
    print(f"goal on {FROZEN.name}: recall ≥ {GOAL} for {', '.join(GOALED)}; "
          + (f"below it: {', '.join(short)}" if short else "all reach it"))
    return 1 if short else 0


if __name__ == "__main__":
    sys.exit(main())
