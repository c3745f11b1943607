"""How far a judge's noise alone moves SocraSynth's stop test, and so which fall should end a debate.

SocraSynth's loop (Edward Y. Chang, "SocraSynth: Adversarial Multi-LLM Reasoning", Table 6.2) runs
``while (Δ > 10%) && (Γ ≥ Γ′)`` and ends when the debate's CRIT reading falls between two refutation
rounds. Symposium tests the debate's quality Q (``protocols.socrasynth.debate_quality``: the mean of
both sides' strongest √(γθ)), the plateau section 6.2.1.4 describes; Γ itself
(``protocols.measures.crit.weighted_score``: 1 + (Q⁺ − 1)·S⁺/(S⁺+S⁻)), which weighs LLM+'s case
against LLM−'s, is the round's reported score. Both are one judge model's reading of integer 1–10
ratings, so they move from round to round even when the debate does not. This script simulates that
noise and prints, for each statistic (Q, and Γ as the literal reading) and each tolerance τ (the
loop ends only on a fall X′ − X > τ, ``SocraSynthConfig.crit_tolerance``):

* **plateau**: a debate whose quality stays the same; the chance that one comparison ends it
  (a false stop), and the chance that a debate is ended early within the default cap
  (``--cap`` refutation rounds: comparisons before rounds 3 … cap) and within Table 6.2's own
  12 rounds;
* **both fall d**: both sides' reasons lose ``d`` points of validity between two rounds (the
  debate's quality falls); the chance that the comparison catches it;
* **pro falls 3**: only the arguing side's reasons lose 3 points (a rebuttal that lands);
* **con gains 2**: the countering side's reasons *gain* 2 points (the debate improved); the
  chance that the comparison ends the debate anyway (Γ falls then: a wrong stop).

The noise model, for a judge of a real 7–70B model re-reading a transcript that grew by one
round: each round it lists 3–5 reasons and 3–5 rival reasons (``protocols.measures.crit.MAX_REASONS`` is
5), drawn afresh (it need not pick the same ones), each reason's true validity and credibility
spread around its side's mean (sd ``--spread``), and each rating the true value plus the
judge's own noise (sd ``--sigma``), rounded to an integer in 1–10. ``--sigma 1`` is a judge that
re-rates a reason within about a point either way. The model is an assumption, stated here so
the table can be re-run under another one; nothing is measured on a model and nothing times.

    python benchmarks/crit_noise.py                     # the tables in docs/protocols.md
    python benchmarks/crit_noise.py --sigma 0.5 --trials 40000 --seed 3
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # the checkout's packages first, when run as a plain script

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from protocols.measures.crit import CritResult, weighted_score  # noqa: E402
from protocols.socrasynth import debate_quality  # noqa: E402

TOLERANCES = (0.0, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5)
PAPER_ROUNDS = 12  # Table 6.2 at Δ0 = 0.9, δ = 1.2
PRO_FALL, CON_GAIN = 3.0, 2.0
#: The statistics a stop can test: the debate's quality (the loop's) and Γ (the literal reading).
STATISTICS = ("quality", "gamma")


def _rating(true: float, sigma: float, rng: random.Random) -> int:
    return min(10, max(1, round(rng.gauss(true, sigma))))


def judgement(pro: float, con: float, *, sigma: float, spread: float, reasons: tuple[int, int],
              rng: random.Random) -> dict[str, float]:
    """One judge reading of a debate whose sides' reasons have mean validity ``pro`` and ``con``:
    ``reasons`` (low, high) rated reasons a side (validity and credibility each rated), read as
    the debate's quality and as Γ."""
    def side(mean: float) -> list[dict[str, int]]:
        out = []
        for _ in range(rng.randint(*reasons)):
            validity, credibility = rng.gauss(mean, spread), rng.gauss(7.0, spread)
            out.append({"validity": _rating(validity, sigma, rng), "credibility": _rating(credibility, sigma, rng)})
        return out
    argued, countered = side(pro), side(con)
    gamma = weighted_score(argued, countered)
    assert gamma is not None  # every side lists at least one reason
    quality = debate_quality(CritResult(score=gamma, holistic=None, weighted=gamma, reasons=argued, rivals=countered))
    assert quality is not None
    return {"quality": quality, "gamma": gamma}


def simulate(args: argparse.Namespace) -> dict[str, list[tuple[float, ...]]]:
    """Per statistic, one row per tolerance: the plateau's false stops (one comparison, within
    the cap, within 12 rounds), then the share of comparisons that end the loop when both sides
    fall by each of ``args.drops``, when the arguing side falls by 3, when the countering side gains 2."""
    rng = random.Random(args.seed)
    reasons = (args.reasons[0], args.reasons[-1])
    level = args.level

    def read(pro: float, con: float) -> dict[str, float]:
        return judgement(pro, con, sigma=args.sigma, spread=args.spread, reasons=reasons, rng=rng)

    def pairs(after: Callable[[], dict[str, float]]) -> list[tuple[dict[str, float], dict[str, float]]]:
        return [(read(level, level), after()) for _ in range(args.trials)]

    plateau = pairs(lambda: read(level, level))
    both = {d: pairs(lambda d=d: read(level - d, level - d)) for d in args.drops}
    pro_falls = pairs(lambda: read(level - PRO_FALL, level))
    con_gains = pairs(lambda: read(level, min(10.0, level + CON_GAIN)))
    debates = [[read(level, level) for _ in range(PAPER_ROUNDS)] for _ in range(args.trials // 4)]
    out: dict[str, list[tuple[float, ...]]] = {}
    for stat in STATISTICS:
        rows = []
        for tol in TOLERANCES:
            def ends(cases: list[tuple[dict[str, float], dict[str, float]]], tol: float = tol) -> float:
                return sum(before[stat] - after[stat] > tol for before, after in cases) / len(cases)

            def ended_by(cap: int, tol: float = tol) -> float:  # comparisons before refutation rounds 3 … cap
                return sum(any(g[t - 3][stat] - g[t - 2][stat] > tol for t in range(3, cap + 1)) for g in debates) / len(debates)

            rows.append((tol, ends(plateau), ended_by(args.cap), ended_by(PAPER_ROUNDS),
                         *(ends(both[d]) for d in args.drops), ends(pro_falls), ends(con_gains)))
        out[stat] = rows
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sigma", type=float, default=1.0, help="the judge's rating noise, sd in points (default 1)")
    parser.add_argument("--spread", type=float, default=1.0, help="sd of true ratings between a side's reasons")
    parser.add_argument("--reasons", type=int, nargs="+", default=[3, 5], metavar="N",
                        help="how many reasons the judge lists a side: one number, or the low and high end (default 3 5)")
    parser.add_argument("--level", type=float, default=7.0, help="both sides' mean validity on a plateau")
    parser.add_argument("--drops", type=float, nargs="+", default=[1.0, 2.0, 3.0],
                        help="validity both sides lose in a real fall of the debate's quality")
    parser.add_argument("--cap", type=int, default=3, help="refutation rounds after the opening (the default cap)")
    parser.add_argument("--trials", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    reasons = "–".join(map(str, dict.fromkeys(args.reasons)))
    console = Console(width=150)
    names = {"quality": "the debate's quality Q (what the loop tests)", "gamma": "Γ, LLM+ against LLM− (the literal reading)"}
    for stat, rows in simulate(args).items():
        table = Table(title=f"{names[stat]}: falls from judge noise alone (σ = {args.sigma:g}, spread {args.spread:g}, "
                            f"{reasons} reasons a side, {args.trials} trials, seed {args.seed})")
        for head in ("τ", "plateau: 1 comparison", f"plateau: ≤ {args.cap} rounds", f"plateau: ≤ {PAPER_ROUNDS} rounds",
                     *(f"both −{d:g}: caught" for d in args.drops), f"pro −{PRO_FALL:g}: caught", f"con +{CON_GAIN:g}: ended"):
            table.add_column(head, justify="right")
        for tol, *rates in rows:
            table.add_row(f"{tol:g}", *(f"{r:.0%}" for r in rates))
        console.print(table)
    console.print(f"plateau: share of equal-quality debates that a fall X′ − X > τ ends (at one comparison; within the cap "
                  f"of {args.cap} refutation rounds; within Table 6.2's {PAPER_ROUNDS}). both −d: share of comparisons "
                  f"that catch a real fall, both sides' reasons losing d points of validity; pro −{PRO_FALL:g}: the "
                  f"arguing side's alone. con +{CON_GAIN:g}: share of comparisons that end a debate whose countering "
                  f"side argued {CON_GAIN:g} points better.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
