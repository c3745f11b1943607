"""How far a judge's noise alone moves SocraSynth's Γ, and so which fall should end a debate.

SocraSynth's loop (seed 004, Table 6.2) runs ``while (Δ > 10%) && (Γ ≥ Γ′)``: it stops when the
debate's CRIT score falls between two refutation rounds. Γ is a judge model's reading
(``protocols.measures.crit.weighted_score``: Γ = 1 + (Q⁺ − 1)·S⁺/(S⁺+S⁻) over integer 1–10 ratings), so it moves
from round to round even when the debate's quality does not. This script simulates that noise
and prints, for each tolerance τ (the loop ends only on a fall Γ′ − Γ > τ,
``SocraSynthConfig.crit_tolerance``):

* **plateau**: a debate whose quality stays the same; the chance that one comparison ends it
  (a false stop), and the chance that a debate is ended early within the default cap
  (``--cap`` refutation rounds: comparisons before rounds 3 … cap) and within Table 6.2's own
  12 rounds;
* **real fall**: the arguing side's reasons lose ``d`` points of validity between two rounds
  (a rebuttal that lands); the chance that the comparison catches it.

The noise model, for a judge of a real 7–70B model re-reading a transcript that grew by one
round: each round it lists 3–5 reasons and 3–5 rival reasons (``protocols.measures.crit.MAX_REASONS`` is
5), drawn afresh (it need not pick the same ones), each reason's true validity and credibility
spread around its side's mean (sd ``--spread``), and each rating the true value plus the
judge's own noise (sd ``--sigma``), rounded to an integer in 1–10. ``--sigma 1`` is a judge that
re-rates a reason within about a point either way. The model is an assumption, stated here so
the table can be re-run under another one; nothing is measured on a model and nothing times.

    python benchmarks/crit_noise.py                     # the table in docs/protocols.md
    python benchmarks/crit_noise.py --sigma 0.5 --trials 40000 --seed 3
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# Run as a plain script, this folder comes first on sys.path and its backends.py would shadow
# the backends package: put the checkout first.
sys.path[:] = [str(REPO)] + [p for p in sys.path if Path(p or ".").resolve() not in (REPO, REPO / "benchmarks")]

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from protocols.measures.crit import weighted_score  # noqa: E402

TOLERANCES = (0.0, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5)
PAPER_ROUNDS = 12  # Table 6.2 at Δ0 = 0.9, δ = 1.2


def _rating(true: float, sigma: float, rng: random.Random) -> int:
    return min(10, max(1, round(rng.gauss(true, sigma))))


def gamma(pro: float, con: float, *, sigma: float, spread: float, reasons: tuple[int, int], rng: random.Random) -> float:
    """One judge reading: Γ from ``reasons`` (low, high) rated reasons a side (validity and
    credibility each rated)."""
    def side(mean: float) -> list[dict[str, int]]:
        out = []
        for _ in range(rng.randint(*reasons)):
            validity, credibility = rng.gauss(mean, spread), rng.gauss(7.0, spread)
            out.append({"validity": _rating(validity, sigma, rng), "credibility": _rating(credibility, sigma, rng)})
        return out
    return weighted_score(side(pro), side(con))


def simulate(args: argparse.Namespace) -> list[tuple[float, ...]]:
    rng = random.Random(args.seed)
    reasons = (args.reasons[0], args.reasons[-1])
    read = lambda pro: gamma(pro, args.level, sigma=args.sigma, spread=args.spread, reasons=reasons, rng=rng)  # noqa: E731
    falls = [read(args.level) - read(args.level) for _ in range(args.trials)]  # Γ′ − Γ on a plateau
    real = {d: [read(args.level) - read(args.level - d) for _ in range(args.trials)] for d in args.drops}
    debates = [[read(args.level) for _ in range(PAPER_ROUNDS)] for _ in range(args.trials // 4)]
    rows = []
    for tol in TOLERANCES:
        false_stop = sum(f > tol for f in falls) / len(falls)

        def ended_by(cap: int) -> float:  # comparisons before refutation rounds 3 … cap (Γ_{t−2} vs Γ_{t−1})
            return sum(any(g[t - 3] - g[t - 2] > tol for t in range(3, cap + 1)) for g in debates) / len(debates)

        caught = [sum(f > tol for f in real[d]) / len(real[d]) for d in args.drops]
        rows.append((tol, false_stop, ended_by(args.cap), ended_by(PAPER_ROUNDS), *caught))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sigma", type=float, default=1.0, help="the judge's rating noise, sd in points (default 1)")
    parser.add_argument("--spread", type=float, default=1.0, help="sd of true ratings between a side's reasons")
    parser.add_argument("--reasons", type=int, nargs="+", default=[3, 5], metavar="N",
                        help="how many reasons the judge lists a side: one number, or the low and high end (default 3 5)")
    parser.add_argument("--level", type=float, default=7.0, help="both sides' mean validity on a plateau")
    parser.add_argument("--drops", type=float, nargs="+", default=[1.0, 2.0, 3.0], help="validity lost in a real fall")
    parser.add_argument("--cap", type=int, default=3, help="refutation rounds after the opening (the default cap)")
    parser.add_argument("--trials", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    reasons = "–".join(map(str, dict.fromkeys(args.reasons)))
    table = Table(title=f"Γ falls from judge noise alone (σ = {args.sigma:g}, spread {args.spread:g}, "
                        f"{reasons} reasons a side, {args.trials} trials, seed {args.seed})")
    for head in ("τ", "plateau: 1 comparison", f"plateau: ≤ {args.cap} rounds", f"plateau: ≤ {PAPER_ROUNDS} rounds",
                 *(f"fall of {d:g}: caught" for d in args.drops)):
        table.add_column(head, justify="right")
    for tol, *rates in simulate(args):
        table.add_row(f"{tol:g}", *(f"{r:.0%}" for r in rates))
    console = Console(width=140)
    console.print(table)
    console.print(f"plateau: share of equal-quality debates that a fall Γ′ − Γ > τ ends (at one comparison; within "
                  f"the cap of {args.cap} refutation rounds; within Table 6.2's {PAPER_ROUNDS}). fall of d: share of "
                  "comparisons that catch a real fall, the arguing side's reasons losing d points of validity.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
