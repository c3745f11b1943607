"""Crash safety, measured: many headless debates killed at random moments, checked, resumed.

    python benchmarks/crash.py --kills 20 [--seed 0] [--max-delay 20]

Prints one row per kill (signal, moment, turns kept, integrity, resumed to the end, earlier
turns unchanged) and a total. The figures go into RELIABILITY.md.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from tests.helpers.crash_harness import Trial, run_trials  # noqa: E402


def needs_resume(t: Trial) -> bool:
    """A debate that was recorded and had not reached its end when it was killed."""
    return t.debate_id is not None and t.status_before not in ("finished", "stopped")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-delay", type=float, default=20.0)
    args = parser.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        trials = run_trials(Path(tmp) / "journal.db", args.kills, seed=args.seed, max_delay=args.max_delay)
    table = Table(title=f"{args.kills} random kills (seed {args.seed})")
    for col in ("#", "signal", "after s", "state at kill", "turns kept", "shown", "integrity", "rows whole", "resumed", "turns at end", "unchanged"):
        table.add_column(col, justify="right")
    for t in trials:
        table.add_row(str(t.number), t.sig, f"{t.delay_s:.1f}", t.status_before or "not yet recorded", str(t.turns_before),
                      str(t.printed_before), t.integrity, "yes" if t.rows_valid else "NO",
                      "yes" if t.resumed else ("—" if not needs_resume(t) else "NO"),
                      str(t.turns_after), "yes" if t.kept else "NO")
    survived = sum(t.integrity == "ok" and t.rows_valid and t.kept and t.turns_before >= t.printed_before
                   and (t.resumed or not needs_resume(t)) for t in trials)
    console = Console()
    console.print(table)
    console.print(f"survived {survived}/{len(trials)} kills; {time.perf_counter() - started:.0f} s; "
                  f"command: python benchmarks/crash.py {' '.join(sys.argv[1:])}")


if __name__ == "__main__":
    main()
